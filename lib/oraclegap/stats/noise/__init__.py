"""Single-draw oracle noise (arXiv 2607.03436, T.-R. Chen): O_exp = O_repro + Delta.

A pool answers prompt i with independent-in-time draws R_imj ~ Bernoulli(p_im). Three per-prompt
ceilings, averaged over prompts:

* reproducible ceiling  O_repro = mean_i max_m p_im -- the best any *single-commit* router can
  score (it commits to one member and is scored on that member's fresh draw), whatever the joint
  law of the draws;
* expected single-draw oracle  O_exp = mean_i P(max_m R_im = 1) -- what an oracle built from one
  draw per member scores in expectation. Without assuming independence across members it is
  estimated from seed-aligned draws, mean_{i,j} max_m R_imj; under independence it equals
  mean_i [1 - prod_m (1 - p_im)];
* the floor  Delta = O_exp - O_repro >= 0, since P(union) >= max P: single-draw luck that no
  single-commit router can capture.

Against any router r with score S_r: G = O_exp - S_r = G_rec + G_noise with G_rec = O_repro - S_r
and G_noise = Delta; the noise share is Delta / G. Best-of-K on the per-prompt maximizer at the
oracle's budget (K = M draws) reaches mean_i [1 - (1 - max_m p_im)^M] >= O_exp under independence.

Worked example: M = 10 members each with p = 0.1 give O_exp = 1 - 0.9^10 = 0.651 but
O_repro = 0.1, so Delta = 0.551.

Beyond the point estimates this module gives, for pools with k > 1 draws per cell:

* :func:`decomposition` -- every term with a 95% prompt-bootstrap interval. O_exp gets a
  percentile interval. O_repro = mean_i max_m p_im has no unbiased
  estimator: the plug-in mean_i max_m c_im/k is biased *upward* (the winner's curse inside a
  prompt: E max >= max E) and a split-draw estimate, which selects the maximiser on some draws
  and scores it on the others, is biased *downward* (its expected score is that of a member the
  selection picked, never above max_m p_im). The interval for O_repro therefore runs from the
  lower bootstrap limit of the split-draw estimate to the upper limit of the plug-in (a
  *bracket*), and Delta, G_rec and the noise share inherit it (the best single member is
  bracketed the same way against draw noise); a plain percentile interval around each plug-in
  is reported beside it (prompt-sampling uncertainty only). On simulated pools the plain
  interval misses the population Delta and noise share far more often than its level says.
* Frechet bounds on the single-draw oracle without any assumption on the joint law,
  max_m p_im <= P(union) <= min(1, sum_m p_im), and the independence form 1 - prod_m (1 - p_im),
  which is an upper envelope under positive association (FKG: P(all fail) >= prod P(fail)).
* :func:`support_strata` -- the decomposition within strata of prompt support.
* :func:`k_sweep` and :func:`pool_size_sweep` -- the terms on subsampled draws and members.
* :func:`best_of_k_check` -- 001's falsifier: best-of-K on the committed maximiser at the
  oracle's budget (K = M) against the single-draw oracle.
* :func:`aggregation_ceiling` -- the verifier-free ceiling O_agg (plurality vote) and the split of
  Delta into Delta_know and Delta_guess, where per-response answers exist.
* :func:`baseline_table` -- the same floor against several routers: the noise share depends on the
  baseline, Delta does not.

The package, one job a module: :mod:`.truth` (population values and the plug-in point
decomposition), :mod:`.inputs` (verdicts, the O_exp form, the router baseline),
:mod:`.split_draw` (the compiled split-draw selection), :mod:`.intervals` (the decomposition with
intervals, and against several baselines), :mod:`.sweeps` (support strata, k and pool-size
sweeps, reliable fractions), :mod:`.best_of_k`, :mod:`.aggregation`, :mod:`.checks` (001's
assumption checks) and :mod:`._permutations` (their compiled within-cell permutation null). The
prompt bootstrap behind every interval is :func:`oraclegap.stats.bootstrap.bootstrap_means`.
"""

from __future__ import annotations

from .aggregation import AggregationSplit, aggregation_ceiling, answer_codes, plurality_vote
from .best_of_k import BestOfK, best_of_k_check
from .checks import (
    NEEDS,
    AssumptionChecks,
    Check,
    WinnersCurse,
    assumption_checks,
    permutation_checks,
    runs_check,
    winners_curse,
    winners_curse_radius,
)
from .inputs import baseline_scores
from .intervals import Decomposition, Estimate, baseline_table, decomposition, decomposition_cost
from .split_draw import split_draw_repro
from .sweeps import k_sweep, pool_size_sweep, reliable_fractions, support_strata
from .truth import (
    Ladder,
    OracleDecomposition,
    best_of_k_truth,
    decompose,
    decompose_truth,
    frechet_truth,
    ladder_truth,
    rescue_probability,
)

__all__ = [
    "OracleDecomposition",
    "decompose_truth",
    "decompose",
    "best_of_k_truth",
    "Ladder",
    "ladder_truth",
    "rescue_probability",
    "frechet_truth",
    "Estimate",
    "Decomposition",
    "decomposition",
    "decomposition_cost",
    "split_draw_repro",
    "baseline_scores",
    "support_strata",
    "k_sweep",
    "pool_size_sweep",
    "BestOfK",
    "best_of_k_check",
    "plurality_vote",
    "answer_codes",
    "AggregationSplit",
    "aggregation_ceiling",
    "baseline_table",
    "NEEDS",
    "Check",
    "runs_check",
    "permutation_checks",
    "WinnersCurse",
    "winners_curse_radius",
    "winners_curse",
    "AssumptionChecks",
    "assumption_checks",
    "reliable_fractions",
]
