"""Evaluation of routers: one function for every family (papers 000 Sec. 3.3, App. B.2-B.3;
002 Sec. 4, 7, App. C, D.9, G-I, O).

Outcomes. On prompt i choosing member m scores O_im = R_im (k = 1: the one verdict) or
O_im = 1[c_im >= need(tau, k)] (k > 1: coverage at tau with raw counts, 000's rule). A router's
score on the evaluated prompts is A_r = mean_i O_{i, r(i)} -- accuracy (k = 1) or coverage.

Protocols. ``split="half"``: a 50/50 calibration/test split drawn from ``seed`` (the seed is
released with the result); ``split=NAME``: the prompts whose ``split`` column is NAME are the
test part, the rest calibration; ``cv=K``: K-fold cross-fitting, every prompt predicted by a
router fitted on the other folds (002's secondary analysis). Routers and the calibration-selected
member see only calibration outcomes.

Comparisons, each on the evaluated prompts:

* against the *threshold-specific best member* C_best = max_m mean_i O_im, chosen on the
  evaluated prompts themselves: gain_best = A_r - C_best, with a 95% prompt-bootstrap
  percentile interval that *re-selects* the best member inside every resample (000's rule; it
  shifts the interval against the router);
* against the *calibration-selected member* b (the deployable comparison): gain_cal = A_r - A_b
  with a paired prompt-bootstrap interval; exact McNemar on the discordant counts n10/n01 and
  Holm within the family of routers (the rows of :func:`oraclegap.stats.certify.paired_family`),
  rescue/loss (:func:`~oraclegap.stats.certify.rescue_loss`), G_b and the recovered fraction
  (reported only when G_b's exact lower limit is positive);
* the routing identity C_orac - C_r = D e_D with the break-even error L/D
  (:func:`oraclegap.stats.coverage.routing_account`), which holds exactly for every router;
* with a 50/50 or named split, the family certificate (002 Thm 6) over the predeclared family of
  evaluated routers (:func:`~oraclegap.stats.certify.family_certificate`). Under cross-fitting the
  fitted policies depend on other folds' outcomes, so the certificate is not reported.

Field summaries, each with a prompt-bootstrap interval: LLMRouterBench's Gain@B and Gap@O, and,
where costs exist, the quality-cost frontier over lambda (U = R - lambda C, 002 App. C),
RouterBench's AIQ, and RouteLLM's PGR / APGR and CPT(50%) for a strong-weak pair.

Bootstrap: every interval resamples the evaluated prompts with
:func:`oraclegap.stats.bootstrap.bootstrap_means` (exact sums, one set of resamples for every
member and router, so all comparisons are paired).

The package: :mod:`.protocol` (outcomes, targets, protocols), :mod:`.metrics` (Gain@B, Gap@O,
AIQ, PGR, APGR, CPT), :mod:`.results` (the result types) and :mod:`.compare` (the evaluation).
"""

from __future__ import annotations

from ...stats.bootstrap import bootstrap_means, bootstrap_means_loop
from ...stats.multiplicity import holm
from .compare import DEFAULT_LAMBDAS, evaluate_router, evaluate_routers, evaluation_cost
from .metrics import PGR_FRACTIONS, aiq, apgr, cpt, gain_at_b, gap_at_o, pgr_curve
from .protocol import TARGETS, Protocol, make_protocol, outcome_matrix, router_targets
from .results import CostAnalysis, RouterComparison, RouterEvaluation

__all__ = [
    "TARGETS",
    "DEFAULT_LAMBDAS",
    "PGR_FRACTIONS",
    "outcome_matrix",
    "router_targets",
    "Protocol",
    "make_protocol",
    "bootstrap_means",
    "bootstrap_means_loop",
    "holm",
    "aiq",
    "pgr_curve",
    "apgr",
    "cpt",
    "gain_at_b",
    "gap_at_o",
    "RouterEvaluation",
    "CostAnalysis",
    "RouterComparison",
    "evaluate_routers",
    "evaluate_router",
    "evaluation_cost",
]
