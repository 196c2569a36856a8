"""``oraclegap nulls POOL --taus 0.05,0.1 --n-draws 2000 --seed 0 [--json]``: the re-deal and
margin-preserving null tests of L, D, oracle-minus-mixture and the Pass@1 gap."""

from __future__ import annotations

from ..stats.nulls import NULLS, STATISTICS, null_tests
from ._common import add_pool_argument, emit, load_pool_arg


def _csv(value: str, allowed, name: str) -> tuple:
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    bad = [v for v in items if v not in allowed]
    if bad or not items:
        raise ValueError(f"--{name} must be a comma-separated subset of {', '.join(allowed)}; got {value!r}")
    return items


def register(sub) -> None:
    p = sub.add_parser("nulls", help="is the oracle gap sampling noise? re-deal and margin-preserving null tests")
    add_pool_argument(p)
    p.add_argument("--taus", default="0.05,0.1,0.2,0.3", help="comma-separated thresholds in (0, 1]")
    p.add_argument("--n-draws", type=int, default=2000, help="null draws per null (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same draws)")
    p.add_argument("--nulls", default=",".join(NULLS), help="comma-separated subset of redeal,margin")
    p.add_argument("--statistics", default=",".join(STATISTICS), help="comma-separated subset of " + ",".join(STATISTICS))
    p.add_argument("--burn-in", type=int, default=None, help="chain proposals discarded first (default 60 n M)")
    p.add_argument("--thin", type=int, default=None, help="chain proposals between kept tables (default 2 n M)")
    p.add_argument("--chains", type=int, default=4, help="independent margin chains (default 4)")
    p.add_argument("--p-convention", choices=("paper", "plus-one"), default="paper",
                   help="upper-tail p as #(draw >= observed)/B (paper) or (1 + #)/(1 + B)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args) -> int:
    pool = load_pool_arg(args.pool)
    res = null_tests(
        pool,
        args.taus,
        nulls=_csv(args.nulls, NULLS, "nulls"),
        statistics=_csv(args.statistics, STATISTICS, "statistics"),
        n_draws=args.n_draws,
        seed=args.seed,
        burn_in=args.burn_in,
        thin=args.thin,
        n_chains=args.chains,
        p_convention=args.p_convention,
    )
    payload = {
        "pool": {"n_prompts": pool.n_prompts, "n_policies": pool.n_policies, "k": pool.k, "policies": pool.policy_names,
                 "n_degenerate": res.n_degenerate},
        "n_draws": args.n_draws,
        "seed": args.seed,
        "p_convention": args.p_convention,
        **{key: val for key, val in res.to_dict().items() if key != "pool"},
    }
    emit(payload, res.wide(), args.json)
    if not args.json and res.chain is not None:
        ch = res.chain
        ess = [e / args.n_draws for e in ch.ess.values()]
        print(f"margin chain: {ch.move} moves, {ch.n_chains} chains, burn-in {ch.burn_in:,}, thinning {ch.thin:,}; "
              f"acceptance {ch.acceptance:.3f}; ESS/draws {min(ess):.2f}-{max(ess):.2f} over statistics")
    return 0
