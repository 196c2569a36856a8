"""``oraclegap nulls POOL --taus 0.05,0.1 --n-draws 2000 --seed 0 [--json]``: the re-deal and
margin-preserving null tests of L, D, oracle-minus-mixture and the Pass@1 gap.

Degenerate tests (a statistic fixed by what the null holds fixed, e.g. every statistic under
the margin-preserving null at k = 1) are not run: the table marks them ``skipped`` and the
JSON gives ``{"skipped": true, "reason": ..., "instead": ...}``; at k = 1 the selection-valid
certificates of ``oraclegap certify`` apply. The cost (chain proposals, re-dealt cells,
memory) is estimated first and a request above ``--max-proposals`` / ``--max-memory`` is
refused before any work. A request estimated to run longer than a few seconds
(:data:`PROGRESS_AFTER_S`) prints its estimate on stderr at the start and shows progress bars
(``tqdm.auto``) there while it runs; ``--quiet`` silences both.
"""

from __future__ import annotations

import sys

from ..stats.coverage import DEFAULT_TAUS
from ..stats.nulls import NULLS, STATISTICS, null_cost, null_tests
from ._common import (
    add_pool_argument,
    add_resource_arguments,
    emit,
    int_arg,
    parse_list,
    parse_taus,
    pool_from_args,
    seed_arg,
)

#: Throughput of the compiled kernels on one core of a shared machine (measured on a 2000 x 40 x 8
#: pool): margin-chain proposals and re-dealt cells per second. The estimate is a rough guide.
PROPOSALS_PER_S = 2.5e6
REDEAL_CELLS_PER_S = 3.5e7
#: Requests estimated to run longer than this (seconds) print the estimate and show progress.
PROGRESS_AFTER_S = 5.0


def estimate_seconds(cost) -> float:
    """Rough wall-clock seconds of a :class:`~oraclegap.stats.nulls.NullCost` on one core."""
    return cost.proposals / PROPOSALS_PER_S + cost.redeal_cells / REDEAL_CELLS_PER_S


def _duration(sec: float) -> str:
    if sec < 90:
        return f"{sec:.0f} s"
    if sec < 5400:
        return f"{sec / 60:.0f} min"
    return f"{sec / 3600:.1f} h"


def register(sub) -> None:
    p = sub.add_parser("nulls", help="is the oracle gap sampling noise? re-deal and margin-preserving null tests")
    add_pool_argument(p)
    p.add_argument("--taus", default=",".join(f"{t:g}" for t in DEFAULT_TAUS), help="comma-separated distinct thresholds in (0, 1]")
    p.add_argument("--n-draws", type=int_arg("--n-draws", minimum=1), default=2000, help="null draws per null (default 2000)")
    p.add_argument("--seed", type=seed_arg(), default=0, help="random seed, a whole number >= 0 (same seed, same draws)")
    p.add_argument("--nulls", default=",".join(NULLS), help="comma-separated subset of redeal,margin")
    p.add_argument("--statistics", default=",".join(STATISTICS), help="comma-separated subset of " + ",".join(STATISTICS))
    p.add_argument("--burn-in", type=int_arg("--burn-in", minimum=0), default=None,
                   help="chain proposals discarded first (default 60 n M)")
    p.add_argument("--thin", type=int_arg("--thin", minimum=1), default=None,
                   help="chain proposals between kept tables (default 2 n M)")
    p.add_argument("--chains", type=int_arg("--chains", minimum=1), default=4, help="independent margin chains (default 4)")
    p.add_argument("--p-convention", choices=("paper", "plus-one"), default="plus-one",
                   help="upper-tail p as (1 + #(draw >= observed))/(1 + B) (plus-one, the default: an exact Monte Carlo p) or #/B (paper)")
    add_resource_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--quiet", action="store_true", help="no estimate and no progress bars on stderr")
    p.set_defaults(func=run)


def run(args) -> int:
    taus, _ = parse_taus(args.taus)
    nl = parse_list(args.nulls, "--nulls", NULLS)
    stats = parse_list(args.statistics, "--statistics", STATISTICS)
    pool = pool_from_args(args)
    cost = null_cost(pool, taus, nulls=nl, statistics=stats, n_draws=args.n_draws, burn_in=args.burn_in, thin=args.thin,
                     n_chains=args.chains)
    cost.check(args.max_proposals, args.max_memory)  # refused before the estimate is printed
    seconds = estimate_seconds(cost)
    progress = not args.quiet and seconds > PROGRESS_AFTER_S
    if progress:
        parts = [f"{n:.2g} {what}" for n, what in ((cost.proposals, "margin-chain proposals"),
                                                  (cost.redeal_cells, "re-dealt cells")) if n]
        print(f"oraclegap nulls: {pool.n_prompts} x {pool.n_policies} x {pool.k} pool, {args.n_draws} draws: about "
              f"{' and '.join(parts)}, roughly {_duration(seconds)} on one core (estimate; --quiet hides this); "
              "lower --n-draws or --thin for a quicker look", file=sys.stderr, flush=True)
    res = null_tests(
        pool,
        taus,
        nulls=nl,
        statistics=stats,
        n_draws=args.n_draws,
        seed=args.seed,
        burn_in=args.burn_in,
        thin=args.thin,
        n_chains=args.chains,
        p_convention=args.p_convention,
        progress=progress,
        max_proposals=args.max_proposals,
        max_bytes=args.max_memory,
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
    if not args.json:
        if res.chain is not None:
            ch = res.chain
            ess = [e / args.n_draws for e in ch.ess.values()]
            print(f"margin chain: {ch.move} moves, {ch.n_chains} chains, burn-in {ch.burn_in:,}, thinning {ch.thin:,}; "
                  f"acceptance {ch.acceptance:.3f}; ESS/draws {min(ess):.2f}-{max(ess):.2f} over statistics")
        reasons: dict[tuple, list[str]] = {}
        for t in res.skipped:
            reasons.setdefault((t.short, t.reason, t.instead), []).append(t.label)
        for (short, reason, instead), labels in reasons.items():
            print(f"skipped ({short}): {', '.join(labels)} -- {reason}. Instead: {instead}.")
        for note in res.notes:
            print(f"note: {note}")
    return 0
