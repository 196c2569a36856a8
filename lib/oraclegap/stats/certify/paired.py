"""Paired inference for a router against a frozen baseline on the same test items (paper 002,
Section 4, Appendices D.9, I and O): the difference with a paired bootstrap interval, the discordant
counts and the exact McNemar test, Holm's adjustment within a family of policies, the baseline's gap
G_b and the recovered fraction, and the rescue/loss decomposition.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar

from ..._result import Interval, Result
from ..._validate import as_rng, check_alpha, check_int
from ..multiplicity import holm
from .binomial import _cp
from .outcomes import _as_outcomes, _check_binary_vector, _names

#: The construction of each interval of a paired comparison.
PAIRED_METHODS = {"accuracy": "clopper-pearson", "difference": "paired percentile bootstrap",
                  "G_b": "clopper-pearson", "recovered": "joint percentile bootstrap"}


@dataclasses.dataclass(frozen=True, repr=False)
class PairedComparison(Result):
    """A policy against a frozen baseline on the same test items (002 Sec. 4, App. D.9 and O).

    ``accuracy`` = mean(S) with its exact Clopper-Pearson interval; ``difference`` = mean(S - B)
    with a paired percentile bootstrap interval; ``n10`` items the policy gets right and the
    baseline wrong, ``n01`` the reverse; ``p_mcnemar`` the exact McNemar test of n10 = n01. With
    oracle outcomes, ``G_b`` = mean(Y - B) with its exact CP interval (Cor 5) and the recovered
    fraction rho = difference / G_b with a joint bootstrap interval, reported (not NaN) only when
    the CP lower limit of G_b is positive; without them both are NaN intervals. Every interval
    has level 1 - ``alpha``.
    """

    _repr_fields = ("difference", "p_mcnemar", "accuracy", "baseline_accuracy", "n10", "n01", "G_b",
                    "recovered", "recovered_reported", "n")

    n: int
    accuracy: Interval
    baseline_accuracy: float
    difference: Interval
    n10: int
    n01: int
    p_mcnemar: float
    alpha: float
    G_b: Interval
    recovered: Interval
    recovered_reported: bool = False

    def intervals(self) -> dict[str, Interval]:
        """The four intervals by name: accuracy, difference, G_b, recovered."""
        return {"accuracy": self.accuracy, "difference": self.difference, "G_b": self.G_b,
                "recovered": self.recovered}

    def frame(self) -> pd.DataFrame:
        """One row per interval (quantity, value, lo, hi, level, method) with the counts, the
        baseline's accuracy and McNemar's p beside it."""
        keys = {"n": self.n, "baseline_accuracy": self.baseline_accuracy, "n10": self.n10,
                "n01": self.n01, "p_mcnemar": self.p_mcnemar, "alpha": self.alpha,
                "recovered_reported": self.recovered_reported}
        rows = [{"quantity": q, **iv.to_dict(), **keys} for q, iv in self.intervals().items()]
        return pd.DataFrame(rows)

    def row(self) -> dict:
        """One flat row: each interval as ``name``, ``name_lo``, ``name_hi`` (``diff_lo`` and
        ``diff_hi`` for the difference), the counts, McNemar's p, alpha and whether rho is
        reported: the columns of :func:`paired_family`'s table."""
        a, d, g, r = self.accuracy, self.difference, self.G_b, self.recovered
        return {"n": self.n, "accuracy": a.value, "accuracy_lo": a.lo, "accuracy_hi": a.hi,
                "baseline_accuracy": self.baseline_accuracy, "difference": d.value, "diff_lo": d.lo,
                "diff_hi": d.hi, "n10": self.n10, "n01": self.n01, "p_mcnemar": self.p_mcnemar,
                "alpha": self.alpha, "G_b": g.value, "G_b_lo": g.lo, "G_b_hi": g.hi,
                "recovered": r.value, "recovered_lo": r.lo, "recovered_hi": r.hi,
                "recovered_reported": self.recovered_reported}


def _pattern_bootstrap(codes: np.ndarray, n_patterns: int, n_boot: int, rng) -> np.ndarray:
    """Bootstrap counts of each discrete pattern: resampling items = multinomial on pattern frequencies."""
    freq = np.bincount(codes, minlength=n_patterns)
    return rng.multinomial(codes.size, freq / codes.size, size=n_boot)


def paired_comparison(
    policy, baseline, alpha: float = 0.05, *, oracle=None, n_boot: int = 4000, seed=0
) -> PairedComparison:
    """Compare a policy's per-item correctness ``policy`` with a frozen baseline's (both bool[n]).

    ``oracle`` (optional, bool[n]): max_m R_im, for G_b and the recovered fraction. The
    bootstrap resamples items (exactly: a multinomial draw on the observed joint patterns) and
    recomputes numerator and denominator together.
    """
    alpha = check_alpha(alpha)
    n_boot = check_int(n_boot, "n_boot", minimum=100)
    S = _check_binary_vector(policy, "policy")
    n = S.size
    B = _check_binary_vector(baseline, "baseline", n)
    rng = as_rng(seed)
    n10 = int((S & ~B).sum())
    n01 = int((~S & B).sum())
    n11 = int((S & B).sum())
    n00 = n - n10 - n01 - n11
    p = 1.0 if n10 + n01 == 0 else float(mcnemar([[n11, n10], [n01, n00]], exact=True).pvalue)
    a_lo, a_hi = _cp(int(S.sum()), n, alpha)
    Y = None if oracle is None else _check_binary_vector(oracle, "oracle", n)
    if Y is not None and ((S & ~Y).any() or (B & ~Y).any()):
        raise ValueError("oracle must be >= policy and baseline on every item (it is max_m R_im)")
    codes = S.astype(int) * 4 + B.astype(int) * 2 + (Y.astype(int) if Y is not None else 0)
    boot = _pattern_bootstrap(codes, 8, n_boot, rng)  # [n_boot, 8]
    pat = np.arange(8)
    s_b, b_b, y_b = (pat >> 2) & 1, (pat >> 1) & 1, pat & 1
    d_boot = boot @ (s_b - b_b) / n
    d_lo, d_hi = np.quantile(d_boot, [alpha / 2, 1 - alpha / 2])
    diff = (int(S.sum()) - int(B.sum())) / n
    level = 1.0 - alpha
    nan = Interval(math.nan, math.nan, math.nan, level, PAIRED_METHODS["G_b"])
    G_b, reported = nan, False
    recovered = dataclasses.replace(nan, method=PAIRED_METHODS["recovered"])
    if Y is not None:
        rb = int((Y & ~B).sum())
        g_lo, g_hi = _cp(rb, n, alpha)
        G_b = Interval.of(rb / n, g_lo, g_hi, level, PAIRED_METHODS["G_b"])
        if g_lo > 0:
            den = boot @ (y_b - b_b)
            num = boot @ (s_b - b_b)
            ok = den > 0
            ratio = num[ok] / den[ok]
            r_lo, r_hi = np.quantile(ratio, [alpha / 2, 1 - alpha / 2])
            recovered = Interval.of(diff / (rb / n), r_lo, r_hi, level, PAIRED_METHODS["recovered"])
            reported = True
    return PairedComparison(
        n=n,
        accuracy=Interval.of(S.mean(), a_lo, a_hi, level, PAIRED_METHODS["accuracy"]),
        baseline_accuracy=float(B.mean()),
        difference=Interval.of(diff, d_lo, d_hi, level, PAIRED_METHODS["difference"]),
        n10=n10,
        n01=n01,
        p_mcnemar=p,
        alpha=alpha,
        G_b=G_b,
        recovered=recovered,
        recovered_reported=reported,
    )


def paired_family(
    policies, baseline, alpha: float = 0.05, *, oracle=None, names: Sequence[str] | None = None, n_boot: int = 4000, seed=0
) -> pd.DataFrame:
    """Paired comparisons of several policies with one frozen baseline, exact McNemar p Holm-corrected within the family.

    ``policies``: bool[n, L] or a dict name -> bool[n]. Returns one row per policy with
    ``p_holm`` (Holm's step-down, :func:`oraclegap.stats.multiplicity.holm`) beside the raw ``p_mcnemar``.
    """
    if isinstance(policies, Mapping):
        names = [str(k) for k in policies]
        cols = [np.asarray(v) for v in policies.values()]
    else:
        P = np.asarray(policies)
        if P.ndim == 1:
            P = P[:, None]
        if P.ndim != 2:
            raise ValueError(f"policies must be bool[n, L] or a dict of bool[n], got shape {P.shape}")
        cols = [P[:, j] for j in range(P.shape[1])]
        names = _names(names, len(cols), "names", "policy")
    if not cols:
        raise ValueError("policies is empty; at least one policy is needed")
    rng = as_rng(seed)
    rows = []
    for nm, col in zip(names, cols, strict=True):
        res = paired_comparison(col, baseline, alpha, oracle=oracle, n_boot=n_boot, seed=rng)
        rows.append({**res.row(), "policy": nm})
    df = pd.DataFrame(rows)
    df["p_holm"] = holm(df["p_mcnemar"].to_numpy())
    first = ["policy", "accuracy", "accuracy_lo", "accuracy_hi", "difference", "diff_lo", "diff_hi", "n10", "n01", "p_mcnemar", "p_holm"]
    return df[first + [c for c in df.columns if c not in first]]


@dataclasses.dataclass(frozen=True, repr=False)
class RescueLoss(Result):
    """Four transitions of a policy relative to a frozen baseline b (002 App. I).

    rescue = P(S=1, B=0), loss = P(S=0, B=1), net = rescue - loss = mean(S) - mean(B);
    preserve = P(S=1, B=1), shared_failure = P(S=0, B=0). With all models' outcomes:
    rescue_hit = P(S=1 | item in the rescue set E_b = {B=0, another model right}) and
    loss_share = P(S=0 | B=1).
    """

    n: int
    rescue: float
    loss: float
    preserve: float
    shared_failure: float
    rescue_set_size: int = 0
    rescue_hit: float = math.nan
    loss_share: float = math.nan

    @property
    def net(self) -> float:
        return self.rescue - self.loss

    def frame(self) -> pd.DataFrame:
        d = dataclasses.asdict(self)
        d["net"] = self.net
        return pd.DataFrame([d])


def rescue_loss(policy, baseline, R=None) -> RescueLoss:
    """Rescue/loss decomposition of ``policy`` (bool[n]) against ``baseline`` (bool[n]); ``R`` bool[n, K] optional."""
    S = _check_binary_vector(policy, "policy")
    n = S.size
    B = _check_binary_vector(baseline, "baseline", n)
    kw: dict[str, Any] = {}
    if R is not None:
        X = _as_outcomes(R)
        if X.shape[0] != n:
            raise ValueError(f"R has {X.shape[0]} items but policy has {n}")
        Y = X.any(axis=1)
        if (S & ~Y).any() or (B & ~Y).any():
            raise ValueError("policy and baseline must be right only where some model in R is right")
        E = Y & ~B
        kw = {
            "rescue_set_size": int(E.sum()),
            "rescue_hit": float(S[E].mean()) if E.any() else math.nan,
            "loss_share": float((~S[B]).mean()) if B.any() else math.nan,
        }
    return RescueLoss(
        n=n,
        rescue=float((S & ~B).mean()),
        loss=float((~S & B).mean()),
        preserve=float((S & B).mean()),
        shared_failure=float((~S & ~B).mean()),
        **kw,
    )
