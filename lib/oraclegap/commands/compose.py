"""``oraclegap compose POOL [--anchor NAME|best] [--sizes 1,2,3] [--budget C] [--tau T] [--json]``.

Pool construction by complementary coverage (paper 002, Sec. 5, Thm 8, App. M.3): relative to an
anchor (``best``: the most accurate model, or a model name), per size the greedy pool with
F_b(S) = P(anchor wrong, some member right) and its marginal gains, the exhaustive optimum and
the greedy/optimum ratio (enumerated where feasible, else branch and bound or an upper bound),
and the accuracy-ranked pool for comparison. ``--budget C`` adds the cost-benefit greedy pool
whose summed model costs (mean per-item cost / largest cost, the units of ``cost_utilities``)
stay within C; it needs a pool with costs. k > 1 pools need ``--tau`` (coverage at tau).
"""

from __future__ import annotations

from ..deploy.compose import compose_pools, enumeration_cost
from ._common import (
    add_pool_argument,
    add_resource_arguments,
    check_resources,
    emit,
    float_arg,
    int_arg,
    parse_list,
    pool_from_args,
)


def register(sub) -> None:
    p = sub.add_parser("compose", help="pool construction: greedy complementary coverage vs exhaustive and accuracy (Shihab et al.'s Theorem 8)")
    add_pool_argument(p)
    p.add_argument("--anchor", default="best", help="deployment anchor: 'best' (most accurate, default) or a model name")
    p.add_argument("--sizes", default=None, help="comma-separated pool sizes (alternatives beside the anchor), each in 1..K-1; default all")
    p.add_argument("--budget", type=float_arg("--budget"), default=None,
                   help="knapsack budget on summed normalised model costs (needs costs)")
    p.add_argument("--tau", type=float_arg("--tau", 0, 1, open_low=True), default=None,
                   help="for k > 1: coverage at threshold tau in (0, 1] defines success")
    p.add_argument("--max-subsets", type=int_arg("--max-subsets", minimum=1), default=200_000,
                   help="enumerate the optimum only up to this many subsets (else branch and bound)")
    add_resource_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def parse_sizes(value) -> list[int] | None:
    """``--sizes "1,2,3"`` as distinct whole numbers (a repeat is refused, like ``--taus``)."""
    if value is None:
        return None
    out = []
    for item in parse_list(value, "--sizes"):
        try:
            out.append(int(item))
        except ValueError:
            raise ValueError(f"--sizes must be comma-separated whole numbers, got {value!r}") from None
    if len(set(out)) != len(out):
        raise ValueError(f"--sizes repeats {sorted({s for s in out if out.count(s) > 1})}; name each size once")
    return out


def run(args) -> int:
    sizes = parse_sizes(args.sizes)
    pool = pool_from_args(args)
    if pool.k == 1 and args.tau is not None:
        raise ValueError("the pool has k=1: --tau applies only to pools with several draws per cell")
    if pool.k > 1 and args.tau is None:
        raise ValueError(f"the pool has k={pool.k} draws per cell; pass --tau T to define success as coverage at T")
    steps, bytes_ = enumeration_cost(pool.n_prompts, pool.n_policies, sizes, args.max_subsets)
    check_resources(args, f"compose --max-subsets {args.max_subsets}", steps=steps, bytes_=bytes_,
                    hint="lower --max-subsets (larger sizes then use the bounded branch and bound) or ask for smaller --sizes")
    res = compose_pools(pool, args.anchor, sizes, tau=args.tau, budget=args.budget, max_subsets=args.max_subsets)
    names = res.names
    sizes = []
    for row, opt, accm in zip(res.frame().to_dict("records"), res.optima, res.accuracy_pools, strict=True):
        s = row["size"]
        sizes.append(
            {
                "size": s,
                "greedy": [names[m] for m in res.greedy.members[:s]],
                "F_b": row["F_b greedy"],
                "gains": (res.greedy.gains[:s] / res.greedy.n).tolist(),
                "optimum": {
                    "members": [names[m] for m in opt.members],
                    "F_b": opt.value,
                    "exact": opt.exact,
                    "upper": opt.upper_value,
                    "method": opt.method,
                },
                "greedy_over_optimum": row["greedy/optimum"] if opt.exact else None,
                "greedy_over_upper": row["F_b greedy"] / opt.upper_value if opt.upper_value > 0 else 1.0,
                "accuracy_pool": {"members": [names[m] for m in accm], "F_b": row["F_b accuracy"]},
            }
        )
    payload = {
        "pool": {"source": args.pool, "n_prompts": pool.n_prompts, "n_policies": pool.n_policies, "k": pool.k,
                 "reduction": "k=1" if pool.k == 1 else f"coverage at tau={args.tau}"},
        "anchor": res.anchor,
        "anchor_accuracy": res.anchor_accuracy,
        "sizes": sizes,
    }
    table = res.frame()
    if res.budget is not None:
        bp = res.budget
        payload["budget"] = {"budget": bp.budget, "members": [names[m] for m in bp.members], "cost": bp.cost,
                             "F_b": bp.value, "method": bp.method, "guarantee": bp.guarantee}
    if not args.json:
        print(f"anchor: {res.anchor} (accuracy {res.anchor_accuracy:.4f}); n = {res.n} items, K = {res.K} models")
        if res.budget is not None:
            bp = res.budget
            print(f"budget {bp.budget:g}: {' + '.join(names[m] for m in bp.members) or '(none)'}  cost {bp.cost:.4f}  F_b {bp.value:.4f}")
    emit(payload, table, args.json)
    return 0
