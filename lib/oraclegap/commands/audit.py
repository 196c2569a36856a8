"""``oraclegap audit POOL --out DIR [--taus ...] [--alpha A] [--seed S] [--small] [--json] [--workers N]``.

The one-command pre-routing audit (:mod:`oraclegap.audit`): writes ``DIR/report.html`` (the
executed report notebook rendered by Quarto when available, else nbconvert), ``DIR/audit.ipynb``
and ``DIR/audit.json`` with every number the report states. Everything is written to a temporary
folder beside DIR and renamed at the end; an existing DIR is replaced only when an earlier audit
wrote it (or it is empty), and then only the files that audit wrote (listed in its hidden
manifest ``.oraclegap-audit.json``) are replaced: a note of yours in DIR is kept. The target is
checked before the pool is read (a file, an unwritable parent, POOL inside DIR are refused), and
temporary folders that killed audits left beside DIR are removed. Prints the verdict and the paths, or with ``--json`` the whole
``audit.json``. Errors: one line on stderr, exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import audit
from ._common import add_pool_argument, float_arg, int_arg, pool_from_args, seed_arg


def register(sub) -> None:
    p = sub.add_parser("audit", help="the one-command pre-routing audit: HTML report + audit.json with the verdict")
    add_pool_argument(p)
    p.add_argument("--out", required=True, metavar="DIR", help="folder for report.html, audit.ipynb and audit.json")
    p.add_argument("--taus", default=",".join(f"{t:g}" for t in audit.DEFAULT_TAUS),
                   help="comma-separated thresholds in (0, 1] (default %(default)s)")
    p.add_argument("--alpha", type=float_arg("--alpha"), default=0.05, help="level of every test and interval (default 0.05)")
    p.add_argument("--seed", type=seed_arg(), default=0, help="seed every section's seed derives from (default 0)")
    p.add_argument("--effect", type=float_arg("--effect"), default=0.05,
                   help="population oracle gap L that counts as useful, for the power planner (default 0.05)")
    p.add_argument("--power-tau", type=float_arg("--power-tau"), default=None,
                   help="threshold of the power planner and the headline (default: the one closest to 0.10)")
    p.add_argument("--small", action="store_true", help="reduced Monte Carlo sizes (a quick look)")
    p.add_argument("--no-report", action="store_true", help="write audit.json only (no notebook, no HTML)")
    p.add_argument("--json", action="store_true", help="print audit.json instead of the verdict")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--workers", type=int_arg("--workers", minimum=1), default=None, metavar="N",
                   help="threads running the audit's sections side by side (default: numba's thread count, "
                        "NUMBA_NUM_THREADS); the numbers are the same for any N")
    p.set_defaults(func=run)


def run(args) -> int:
    out = Path(args.out)
    settings = audit.audit_settings(args.taus, args.alpha, args.seed, small=args.small, effect=args.effect,
                                    power_tau=args.power_tau)  # bad options fail before the pool is read
    audit.check_out(out, args.pool)  # the target before the pool is read or anything computed
    pool = pool_from_args(args)
    try:
        res, info = audit.write_audit(
            pool, out, source=args.pool, report=not args.no_report, progress=not args.quiet, taus=settings.taus,
            alpha=settings.alpha, seed=settings.seed, small=settings.small, effect=settings.effect,
            power_tau=settings.primary_tau, workers=args.workers)
    except OSError as exc:
        raise ValueError(f"could not write the audit to {str(out)!r}: {exc.strerror or exc}") from None
    if args.json:
        print(json.dumps(audit.load_numbers(info["json"]), indent=2))  # audit.json as written (build line included)
        return 0
    v = res.verdict
    print(f"verdict: {v.code}")
    print(v.headline)
    for step in v.next_steps:
        print(f"  next: {step}")
    written = [info["json"]] + ([info["html"]] if "html" in info else [])
    print("wrote " + ", ".join(written) + (f" (rendered with {info['renderer']})" if info.get("renderer") else ""))
    return 0
