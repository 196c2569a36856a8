"""``python -m oraclegap.lab``: build the lab, retrain one small pool with new seeds, or check a built lab.

::

    python -m oraclegap.lab build [--reduced] [--out DIR] [--workers N] [--fresh] [--stages a,b,...]
    python -m oraclegap.lab retrain --pool primary-light --seeds 101,102 [--steps N] [--splits test] [--k 16] [--out DIR]
    python -m oraclegap.lab check [--out DIR]

Bad arguments print one line on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m oraclegap.lab", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build the lab (resumable)")
    b.add_argument("--reduced", action="store_true", help="the miniature configuration the tests rebuild")
    b.add_argument("--out", default=None, help="output directory (default data/lab, or data/lab/reference with --reduced)")
    b.add_argument("--workers", type=int, default=None)
    b.add_argument("--fresh", action="store_true", help="rebuild every stage even where its inputs are unchanged")
    b.add_argument("--stages", default=None, help="comma-separated subset of tasks,bases,grpo,soups,sample,pools")
    b.add_argument("--no-progress", action="store_true")
    r = sub.add_parser("retrain", help="retrain one training pool with new seeds and sample it")
    r.add_argument("--pool", default="primary-light")
    r.add_argument("--seeds", default="101,102")
    r.add_argument("--steps", type=int, default=None)
    r.add_argument("--splits", default="test")
    r.add_argument("--k", type=int, default=16)
    r.add_argument("--out", default=None)
    r.add_argument("--workers", type=int, default=None)
    c = sub.add_parser("check", help="validation sanity numbers, offline loading and size of a built lab")
    c.add_argument("--out", default=None)
    return ap


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.cmd == "build":
            from .checks import sanity, summary_lines
            from .pipeline import DEFAULT_OUT, STAGES, build
            from .recipes import full_config, reduced_config

            cfg = reduced_config() if args.reduced else full_config()
            out = args.out or (DEFAULT_OUT / "reference" if args.reduced else DEFAULT_OUT)
            stages = STAGES if args.stages is None else tuple(s.strip() for s in args.stages.split(",") if s.strip())
            build(cfg, out, workers=args.workers, fresh=args.fresh, progress=not args.no_progress, stages=stages)
            if not args.reduced and "pools" in stages:
                for line in summary_lines(sanity(out)):
                    print(f"[lab] {line}")
        elif args.cmd == "retrain":
            from .pipeline import retrain

            try:
                seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
            except ValueError:
                raise ValueError(f"--seeds must be comma-separated integers, got {args.seeds!r}") from None
            pool = retrain(args.pool, seeds, steps=args.steps, splits=tuple(args.splits.split(",")), k=args.k,
                           out=args.out, workers=args.workers)
            print(pool)
        elif args.cmd == "check":
            from .checks import check_loads, lab_size, sanity

            res = {"sanity": sanity(args.out), "loads": check_loads(args.out), "bytes": lab_size(args.out)}
            print(json.dumps(res, indent=2, default=float))
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
