"""``oraclegap integrity POOL [--split NAME | --cv K] [--near-threshold C] [--dedupe-out DIR] [--json]``.

Checks a pool before any inference (:func:`oraclegap.deploy.integrity.integrity_checks`):
exact and near-duplicate prompts and whether they cross the calibration/test split the routers
use (leakage), recorded verdicts against answers and gold answers, max-merged k = 1 data and
members with identical draws, and the constant baselines (the best constant selected on
calibration, the task-wise best). ``--dedupe-out DIR`` saves the pool with the first prompt of
each duplicate group kept (exact groups; ``--dedupe-near`` also near ones).
"""

from __future__ import annotations

from ..deploy.integrity import NEAR_THRESHOLD, deduplicate, integrity_checks
from ._common import add_pool_argument, emit, float_arg, int_arg, pool_from_args, seed_arg, to_jsonable


def register(sub) -> None:
    p = sub.add_parser("integrity", help="duplicates and leakage across the split, outcome alignment, aggregation warnings, "
                                         "constant baselines")
    add_pool_argument(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--cv", type=int_arg("--cv", minimum=2), default=None, metavar="K",
                   help="the routers' K-fold cross-fitting (default: the pool's 'test' split when it has one, else 5 folds)")
    g.add_argument("--split", default=None, metavar="NAME", help="'half' (50/50 by --seed) or the pool's split NAME as the test part")
    p.add_argument("--seed", type=seed_arg(), default=0, help="seed of the split / folds (default 0), as for `oraclegap routers`")
    p.add_argument("--tau", type=float_arg("--tau", 0, 1, open_low=True), default=None,
                   help="for k > 1: the coverage threshold of the baselines")
    p.add_argument("--near-threshold", type=float_arg("--near-threshold", 0, 1, open_low=True), default=NEAR_THRESHOLD,
                   metavar="C", help=f"TF-IDF cosine at or above which prompts are near duplicates (default {NEAR_THRESHOLD})")
    p.add_argument("--no-near", action="store_true", help="check exact duplicates only")
    p.add_argument("--gold-column", default=None, metavar="COL", help="prompt column with the gold answers (default: gold, "
                                                                      "ground_truth, ...)")
    p.add_argument("--dedupe-out", default=None, metavar="DIR", help="save the deduplicated pool here (must not exist)")
    p.add_argument("--dedupe-near", action="store_true", help="with --dedupe-out: drop near duplicates too")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(func=run)


def run(args) -> int:
    pool = pool_from_args(args)
    if args.dedupe_near and not args.dedupe_out:
        raise ValueError("--dedupe-near applies with --dedupe-out only")
    if args.dedupe_near and args.no_near:
        raise ValueError("--dedupe-near needs the near-duplicate check; drop --no-near")
    if pool.k == 1 and args.tau is not None:
        raise ValueError("the pool has k=1: --tau applies only to pools with several draws per cell")
    rep = integrity_checks(pool, tau=args.tau, split=args.split, cv=args.cv, seed=args.seed, near=not args.no_near,
                           near_threshold=args.near_threshold, gold_column=args.gold_column)
    saved = None
    if args.dedupe_out:
        from pathlib import Path

        if Path(args.dedupe_out).exists():
            raise ValueError(f"--dedupe-out {args.dedupe_out!r} exists; choose another path (nothing is replaced)")
        deduplicate(pool, rep.duplicates, include_near=args.dedupe_near).save(args.dedupe_out)
        saved = args.dedupe_out
    payload = {"pool": {"source": args.pool, "n_prompts": pool.n_prompts, "n_policies": pool.n_policies, "k": pool.k},
               "checks": rep.frame().to_dict(orient="records"), "findings": list(rep.findings),
               "duplicates": rep.duplicates.frame().to_dict(orient="records")[0],
               "duplicate_groups": rep.duplicates.groups.to_dict(orient="records"),
               "alignment": rep.alignment.frame().to_dict(orient="records")[0],
               "disagreements": rep.alignment.disagreements.head(1000).to_dict(orient="records"),
               "baselines": None if rep.baselines is None else rep.baselines.frame().to_dict(orient="records"),
               "baselines_note": rep.baselines_note, "deduplicated_pool": saved}
    if args.json:
        emit(to_jsonable(payload), None, True)
        return 0
    print(f"pool {args.pool}: {pool.n_prompts} prompts x {pool.n_policies} policies, k={pool.k}")
    emit({}, rep.frame(), False)
    for f in rep.findings:
        print(f"- {f}")
    if rep.baselines is not None:
        print(f"\nbaselines ({rep.baselines.metric} on {rep.baselines.n_eval} evaluated prompts; {rep.baselines.protocol}):")
        emit({}, rep.baselines.frame(), False)
    elif rep.baselines_note:
        print(f"\nbaselines: {rep.baselines_note}")
    if saved:
        print(f"\ndeduplicated pool saved to {saved}")
    return 0
