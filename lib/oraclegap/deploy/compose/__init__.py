"""Pool construction by complementary coverage (paper 002, Shihab et al.: Section 5, Theorem 8,
Appendices D.7, J and M.3).

Notation. n items, K models, per-item binary outcomes R_im (k = 1 correctness, or coverage at a
threshold tau for pools with k > 1 draws per cell). A deployment anchor b is fixed first (on
independent data, or by name). For a set S of retained alternatives (b not in S),

    F_b(S) = P(R_b = 0 and R_m = 1 for some m in S),       F_b(empty) = 0,

the *complementary coverage* of S relative to b: the share of items the anchor fails that some
member of S rescues. Every statistic here is its empirical version on a set of items (a count
divided by the number of items), computed exactly in integers.

Thm 8 (002): F_b is normalised, monotone and submodular, because the marginal gain
F_b(S + j) - F_b(S) = P(R_b = 0, R_j = 1, R_m = 0 for all m in S) can only shrink as S grows; so
the greedy pool of size s reaches at least (1 - 1/e) of max_{|S| <= s} F_b(S) (Nemhauser, Wolsey
and Fisher 1978), on the population and on any calibration sample.

What is here:

* :func:`complementary_coverage` and :func:`coverage_lattice` (F_b on every subset of a small
  pool). The checks of Thm 8 on a lattice (:func:`~oraclegap.deploy.theory.theorem8_checks`,
  :func:`~oraclegap.deploy.theory.theorem8_study` and the constructed instances
  :func:`~oraclegap.deploy.theory.disjoint_rescue_instance` and
  :func:`~oraclegap.deploy.theory.greedy_worst_case`) live in :mod:`oraclegap.deploy.theory`.
* :func:`greedy_pool` (with the marginal-gain trace; ``lazy=True`` for large pools, with the same
  result), :func:`exhaustive_pool` (enumeration where feasible, else best-first branch and bound
  over marginal gains within a node budget, else an upper bound from the greedy trace).
* baselines (:data:`BASELINES`): individual-accuracy ranking, lowest pairwise error correlation,
  k-medoids on error vectors (the ``kmedoids`` package), greedy DPP MAP on error vectors, and
  random subsets (:func:`random_pools`, with p05/p95).
* cost-weighted budgets (002 App. M.3): :func:`budgeted_pool` (cost-benefit greedy with partial
  enumeration) and :func:`knapsack_optimum`; the acquisition cost of a model is
  :func:`model_costs`, in the units of :func:`oraclegap.stats.certify.cost_utilities`.
* :func:`compose_pools` (what ``oraclegap compose`` prints). The held-out sweep of 002 App. J
  (:func:`~oraclegap.deploy.sweep.pool_sweep`: anchor and pools chosen on a calibration half,
  coverage and router gain measured on the disjoint half, over sizes x datasets x folds, against
  >= 200 random subsets per cell, with pool stability across folds) and the router it resolves
  live in :mod:`oraclegap.deploy.sweep`.
* :func:`latent_world`, a generator of multi-dataset pools with known success probabilities for
  sweeps and benchmarks.

Speed: outcome columns are packed into uint64 words (bit i of a word is item i), a set's
coverage is a bitwise OR of its members' words and a count is a popcount, so subsets are
enumerated as arrays, with no Python loop per subset (loops run over set sizes or members).

Where things are: :mod:`~oraclegap.deploy.compose.inputs` (outcomes, anchor, sizes),
:mod:`~oraclegap.deploy.compose.coverage` (packed bits and F_b),
:mod:`~oraclegap.deploy.compose.search` (greedy and exhaustive),
:mod:`~oraclegap.deploy.compose.baselines`, :mod:`~oraclegap.deploy.compose.budget` (App. M.3)
and :mod:`~oraclegap.deploy.compose.composition` (what the CLI prints); their public names are
re-exported here.

Names defined in :mod:`oraclegap.deploy.sweep` and :mod:`oraclegap.deploy.theory`
(``compose.pool_sweep``, ``compose.PoolSweep``, ``compose.sweep_embedding``,
``compose.SWEEP_EMBEDS`` and the Thm 8 checks) resolve here too, lazily (:data:`_ELSEWHERE`):
those modules import this package, so an eager re-export would make the import order matter.
Library code imports them from their own modules.
"""

from __future__ import annotations

from ...stats.simulate import World, latent_world  # re-exported: the generator of the sweeps
from .baselines import BASELINES, RULES, RandomPools, baseline_pool, random_pools
from .budget import BudgetPool, budget_curve, budget_ratios, budgeted_pool, knapsack_optimum, model_costs
from .composition import Composition, compose_pools
from .coverage import CoverageLattice, complementary_coverage, coverage_lattice, pack_bits, popcount
from .inputs import check_size, check_sizes, outcome_matrix, resolve_anchor
from .search import GREEDY_BOUND, GreedyPool, Optimum, enumeration_cost, exhaustive_pool, greedy_pool

__all__ = [
    "GREEDY_BOUND",
    "BASELINES",
    "RULES",
    "outcome_matrix",
    "resolve_anchor",
    "check_size",
    "check_sizes",
    "model_costs",
    "pack_bits",
    "popcount",
    "complementary_coverage",
    "CoverageLattice",
    "coverage_lattice",
    "GreedyPool",
    "greedy_pool",
    "Optimum",
    "exhaustive_pool",
    "enumeration_cost",
    "baseline_pool",
    "RandomPools",
    "random_pools",
    "BudgetPool",
    "budgeted_pool",
    "knapsack_optimum",
    "budget_curve",
    "budget_ratios",
    "Composition",
    "compose_pools",
    "World",
    "latent_world",
]


#: Names of the sweep and the Thm 8 checks reachable here, and the module that defines each
#: (resolved on first use by the module ``__getattr__`` below).
_ELSEWHERE = {
    **dict.fromkeys(("SWEEP_EMBEDS", "sweep_embedding", "PoolSweep", "pool_sweep", "_minilm_cache_file",
                     "_fold_masks"), "sweep"),
    **dict.fromkeys(("Theorem8Check", "theorem8_checks", "theorem8_study", "disjoint_rescue_instance",
                     "greedy_worst_case"), "theory"),
}


def __getattr__(name: str):
    """``compose.pool_sweep`` and the other names of :data:`_ELSEWHERE`, from their modules."""
    where = _ELSEWHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"..{where}", __name__), name)  # a module of oraclegap.deploy


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ELSEWHERE))
