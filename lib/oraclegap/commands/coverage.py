"""``oraclegap coverage POOL --taus 0.05,0.1 [--json]``: coverage functionals per threshold.

JSON keys of thresholds are exact (``repr(float(tau))``), and a threshold given twice is refused.
"""

from __future__ import annotations

from ..stats.coverage import DEFAULT_TAUS, coverage, pass1_oracle_gap
from ._common import add_pool_argument, emit, parse_taus, pool_from_args


def register(sub) -> None:
    p = sub.add_parser("coverage", help="oracle, best, mixture coverage, D, L and the oracle-minus-mixture gap")
    add_pool_argument(p)
    p.add_argument("--taus", default=",".join(f"{t:g}" for t in DEFAULT_TAUS), help="comma-separated distinct thresholds in (0, 1]")
    p.add_argument("--estimator", choices=("raw", "smoothed"), default="raw")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args) -> int:
    taus, _ = parse_taus(args.taus)
    pool = pool_from_args(args)
    tab = coverage(pool, taus, estimator=args.estimator)
    p1 = pass1_oracle_gap(pool)
    payload = {
        "pool": {"n_prompts": pool.n_prompts, "n_policies": pool.n_policies, "k": pool.k, "policies": pool.policy_names},
        "estimator": args.estimator,
        "taus": tab.to_dict(),
        "pass1": {"oracle": p1.oracle, "best": p1.best, "best_member": p1.best_member, "gap": p1.gap},
    }
    emit(payload, tab.frame(), args.json)
    return 0
