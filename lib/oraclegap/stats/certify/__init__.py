"""Exact and selection-valid inference for oracle gaps (paper 002, Shihab et al., arXiv; Sections
3-4, Appendices C, L and M).

Notation. An evaluation sample holds n i.i.d. items; on item i model m is right (R_im = 1) or
wrong, with outcomes of different models allowed to be arbitrarily dependent within an item.

* model accuracy       p_m = E R_m,          plug-in  p^_m = c_m / n   (c_m: model m's count)
* oracle accuracy      q   = E max_m R_m,    plug-in  q^   = o / n     (o: items some model solves)
* outcome-oracle gap   G   = q - max_m p_m,  plug-in  G^   = q^ - max_m p^_m

Because the oracle outcome Y = max_m R_m dominates every model's outcome, q - p_m is the mean
of the Bernoulli variable 1[Y = 1, R_m = 0] and its count is exactly o - c_m. So
G = min_m (q - p_m), and every statistic of the gap needs only (c_1..c_K, o, n).

Modules, each importing only those listed after it:

* :mod:`.rules` -- pre-declared signals to rules to certificates on a calibration/test split
  (:func:`signal_rule_audit`);
* :mod:`.gap` -- the selection-valid gap interval (Thm 4, the paired interval, App. M.1's
  Hoeffding intervals) beside the naive one (:func:`selection_valid_gap`);
  :mod:`.split` -- the split-selected interval (Cor 5); :mod:`.family` -- the family certificate
  for G_Pi and H_Pi (Thm 6); :mod:`.signal` -- the finite-signal certificate for q_Z and G_Z
  (Thm 7, App. M.2) and signals declared without test outcomes; :mod:`.paired` -- a policy
  against a frozen baseline (difference, paired bootstrap interval, exact McNemar, Holm within a
  family, G_b and the recovered fraction, rescue/loss); :mod:`.ladder` -- the opportunity
  ladder; :mod:`.costs` -- cost-aware utilities U = R - lambda*C (App. C);
* :mod:`.outcomes` -- outcome matrices from arrays and pools, and the shared input checks;
  :mod:`.binomial` -- exact (Clopper-Pearson) limits.

The coverage of these intervals on finite populations with known truth is simulated in
:mod:`oraclegap.stats.studies` (``gap_coverage``, ``exact_gap_coverage``, ``family_coverage``,
``signal_coverage``). Every public name below is importable from ``oraclegap.stats.certify``.
"""

from __future__ import annotations

# `_cp` (the vectorised Clopper-Pearson limits) and `_family_bounds` (Thm 6 from counts) serve
# paper002 and the deployment floor's certificates (F401: re-exported, outside __all__).
from .binomial import _cp, clopper_pearson, clopper_pearson_upper  # noqa: F401
from .costs import CostUtilities, cost_utilities
from .family import FamilyCertificate, _family_bounds, family_certificate  # noqa: F401
from .gap import (
    GAP_METHODS,
    NAIVE_METHODS,
    GapInterval,
    gap_intervals,
    selection_valid_gap,
    selection_valid_gap_from_outcomes,
)
from .ladder import OpportunityLadder, opportunity_ladder
from .outcomes import outcomes_from_pool
from .paired import PairedComparison, RescueLoss, paired_comparison, paired_family, rescue_loss
from .rules import SignalRuleAudit, signal_rule_audit
from .signal import (
    SignalCertificate,
    finite_signal_certificate,
    fit_cell_rule,
    frozen_text_clusters,
    length_bins,
)
from .split import (
    SplitSelectedGap,
    random_halves,
    split_reseeds,
    split_selected_gap,
    split_selected_gap_from_counts,
)

__all__ = [
    "clopper_pearson",
    "clopper_pearson_upper",
    "GAP_METHODS",
    "NAIVE_METHODS",
    "GapInterval",
    "selection_valid_gap",
    "selection_valid_gap_from_outcomes",
    "gap_intervals",
    "outcomes_from_pool",
    "SplitSelectedGap",
    "random_halves",
    "split_selected_gap",
    "split_selected_gap_from_counts",
    "split_reseeds",
    "FamilyCertificate",
    "family_certificate",
    "SignalCertificate",
    "finite_signal_certificate",
    "fit_cell_rule",
    "length_bins",
    "frozen_text_clusters",
    "PairedComparison",
    "paired_comparison",
    "paired_family",
    "RescueLoss",
    "rescue_loss",
    "SignalRuleAudit",
    "signal_rule_audit",
    "OpportunityLadder",
    "opportunity_ladder",
    "CostUtilities",
    "cost_utilities",
]
