"""Pre-declared signals to rules to certificates (paper 002): on a calibration/test split, a
per-level best-model rule fitted for every signal and certified on the test items together (the
family certificate, a finite-signal certificate per signal, paired comparisons with the frozen
baseline, rescue/loss and the opportunity ladder).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..._result import Result
from ..._validate import check_alpha
from .family import FamilyCertificate, family_certificate
from .ladder import OpportunityLadder, opportunity_ladder
from .outcomes import _outcomes_named
from .paired import paired_family, rescue_loss
from .signal import finite_signal_certificate, fit_cell_rule


@dataclasses.dataclass(frozen=True, repr=False)
class SignalRuleAudit(Result):
    """Everything 002 asks of a pool with pre-declared finite signals, on a calibration/test split.

    The baseline b is the best model on the calibration (``fit``) items, frozen. For every
    signal a per-level best-model rule is fitted on the calibration items (:func:`fit_cell_rule`).
    On the test items: the family certificate (Thm 6) for the constants plus all rules
    (``family``), a finite-signal certificate (Thm 7, M.2) per signal (``signals``), and per rule
    a paired comparison with b -- difference, bootstrap interval, n10/n01, exact McNemar with
    Holm across this pool's rules, rescue/loss, G_b and the recovered fraction (``paired``).
    """

    baseline: int
    baseline_name: str
    n_fit: int
    n_test: int
    family: FamilyCertificate
    ladder: OpportunityLadder
    signals: pd.DataFrame = dataclasses.field(repr=False)
    paired: pd.DataFrame = dataclasses.field(repr=False)

    def frame(self) -> pd.DataFrame:
        """One row per rule: its test accuracy, gain over b with interval, Holm p, and its signal's G_Z interval."""
        cols = ["rule", "accuracy", "difference", "diff_lo", "diff_hi", "n10", "n01", "p_holm", "recovered"]
        df = self.paired[cols].merge(
            self.signals[["signal", "J", "G_Z", "G_Z_lo", "G_Z_hi"]], left_on="rule", right_on="signal", how="left"
        )
        return df.drop(columns="signal").assign(baseline=self.baseline_name, n_test=self.n_test)


def signal_rule_audit(
    R,
    signals: Mapping[str, np.ndarray],
    fit,
    alpha: float = 0.05,
    *,
    model_names: Sequence[str] | None = None,
    n_boot: int = 2000,
    seed=0,
) -> SignalRuleAudit:
    """Fit per-signal rules on ``fit`` items; certify the family, the signals and each rule on the rest.

    ``signals``: name -> level per item (declared without test outcomes, e.g. task tags,
    :func:`length_bins`, :func:`frozen_text_clusters`); ``fit``: bool[n], True = calibration.
    """
    alpha = check_alpha(alpha)
    X, mnames = _outcomes_named(R, model_names)
    n, K = X.shape
    f = np.asarray(fit)
    if f.dtype != bool or f.shape != (n,):
        raise ValueError(f"fit must be a bool mask of length n={n}")
    if not f.any() or f.all():
        raise ValueError("fit must leave both calibration and test items")
    if not isinstance(signals, Mapping) or not signals:
        raise ValueError("signals must be a non-empty dict name -> level per item")
    t = ~f
    b = int(np.argmax(X[f].sum(axis=0)))
    rules = {name: fit_cell_rule(X, np.asarray(z), f) for name, z in signals.items()}
    Xt = X[t]
    fam = family_certificate(Xt, {k: v[t] for k, v in rules.items()}, alpha, model_names=mnames)
    lad = opportunity_ladder(Xt, {k: v[t] for k, v in rules.items()}, model_names=mnames)
    srows = []
    for name, z in signals.items():
        cert = finite_signal_certificate(Xt, np.asarray(z)[t], alpha, model_names=mnames)
        srows.append(
            {
                "signal": name,
                "J": cert.J,
                "q_Z": cert.q.value,
                "q_Z_lo": cert.q.lo,
                "q_Z_hi": cert.q.hi,
                "G_Z": cert.G.value,
                "G_Z_lo": cert.G.lo,
                "G_Z_hi": cert.G.hi,
            }
        )
    Y = Xt.any(axis=1)
    B = Xt[:, b]
    outs = {name: Xt[np.arange(Xt.shape[0]), rule[t]] for name, rule in rules.items()}
    paired = paired_family(outs, B, alpha, oracle=Y, n_boot=n_boot, seed=seed).rename(columns={"policy": "rule"})
    rl = pd.concat([rescue_loss(outs[nm], B, Xt).frame() for nm in outs], ignore_index=True)
    paired = pd.concat([paired, rl[["rescue", "loss", "rescue_hit", "loss_share"]]], axis=1)
    return SignalRuleAudit(b, mnames[b], int(f.sum()), int(t.sum()), fam, lad, pd.DataFrame(srows), paired)
