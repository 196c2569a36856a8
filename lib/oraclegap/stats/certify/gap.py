"""Intervals for the outcome-oracle gap that stay valid after picking the best model (paper 002,
Theorem 4, Appendix M.1, and a paired interval beyond the paper).

An evaluation sample holds n i.i.d. items; on item i model m is right (R_im = 1) or wrong, with the
models' outcomes allowed to be arbitrarily dependent within an item. With p_m = E R_m, the oracle
accuracy q = E max_m R_m and its plug-ins c_m / n and o / n (o: items some model solves), the gap is
G = q - max_m p_m = min_m (q - p_m), and q - p_m is the mean of 1[Y = 1, R_m = 0] whose count is
exactly o - c_m. Intervals (all at level 1 - alpha; delta = alpha in the paper's notation):

* ``method="exact"`` (Thm 4): Clopper-Pearson (CP) for q at alpha/2 and for every p_m at
  alpha/(2K); [max(0, L_q - max_m U_m), min(1, U_q - max_m L_m)].
* ``method="paired"`` (beyond the paper): CP for each paired gap g_m = q - p_m at alpha/K;
  [min_m L(g_m), min_m U(g_m)]. See :func:`selection_valid_gap` for the proof.
* ``method="hoeffding"`` (App. M.1): G^ +- (eps_q + eps_p), eps_q = sqrt(log(4/alpha)/(2n)),
  eps_p = sqrt(log(4K/alpha)/(2n)), truncated to [0, 1].
* ``method="hoeffding-paired"``: G^ +- sqrt(log(2K/alpha)/(2n)) (min is 1-Lipschitz in the sup
  norm, Hoeffding for each of the K paired gaps at alpha/K).
* the *naive* interval conditions on the empirically best model b^ as if it had been fixed in
  advance: CP for the count o - c_b^ at alpha (``naive="cp"``, 002 Table 1), or the limit of a
  paired percentile bootstrap holding b^ fixed, i.e. quantiles of Binomial(n, G^)/n
  (``naive="percentile"``, 002 Table 11). It is shown only to be compared; it is not valid.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import binom

from ..._result import Interval, Result
from ..._validate import check_alpha, check_margin_counts
from ...pool import Pool
from .binomial import _cp, _on_unique
from .outcomes import _as_outcomes, _names

GAP_METHODS = ("exact", "paired", "hoeffding", "hoeffding-paired")
NAIVE_METHODS = ("cp", "percentile")


def _check_method(method: str) -> str:
    if method not in GAP_METHODS:
        raise ValueError(f"method must be one of {GAP_METHODS}, got {method!r}")
    return method


def _check_naive(naive: str) -> str:
    if naive not in NAIVE_METHODS:
        raise ValueError(f"naive must be one of {NAIVE_METHODS}, got {naive!r}")
    return naive


@dataclasses.dataclass(frozen=True, repr=False, kw_only=True)
class GapInterval(Result, Interval):
    """An interval for the outcome-oracle gap G = q - max_m p_m, with the naive interval beside it.

    ``value`` is the plug-in G^ = q^ - max_m p^_m (biased low in expectation, Prop 3);
    ``[lo, hi]`` is the selection-valid interval of ``method`` at level ``level`` = 1 - alpha;
    ``naive`` is the interval that conditions on the selected best member (not valid; its
    ``method`` is the naive construction, ``"cp"`` or ``"percentile"``). ``best_index`` and
    ``best_member`` (its name, when names were given) give the empirically best member,
    ``best_count`` its correct count,
    ``oracle_count`` the items some member solves, out of ``n``; ``K`` members.
    """

    _repr_fields = ("value", "lo", "hi", "certified", "level", "method", "naive", "best_member", "n",
                    "K")

    n: int
    K: int
    oracle_count: int
    best_count: int
    best_index: int
    naive: Interval
    best_member: str | None = None

    @property
    def certified(self) -> bool:
        """True when the lower limit is positive: a population gap is certified."""
        return self.lo > 0

    @property
    def oracle_rate(self) -> float:
        return self.oracle_count / self.n

    @property
    def best_rate(self) -> float:
        return self.best_count / self.n

    def frame(self) -> pd.DataFrame:
        """One row: n, K, the best member's and the oracle's accuracy, the gap's value with its
        selection-valid interval (lo, hi, level, method), its width and the naive limits."""
        return pd.DataFrame(
            [
                {
                    "n": self.n,
                    "K": self.K,
                    "best": self.best_rate,
                    "best_member": self.best_index if self.best_member is None else self.best_member,
                    "oracle": self.oracle_rate,
                    "value": self.value,
                    "lo": self.lo,
                    "hi": self.hi,
                    "level": self.level,
                    "method": self.method,
                    "width": self.width,
                    "naive_lo": self.naive.lo,
                    "naive_hi": self.naive.hi,
                    "naive_method": self.naive.method,
                }
            ]
        )


def _gap_bounds(model_counts, oracle_count, n, alpha: float, method: str):
    """Vectorised interval for G from counts: model_counts [..., K], oracle_count [...]. No validation."""
    c = np.asarray(model_counts, dtype=float)
    o = np.asarray(oracle_count, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    K = c.shape[-1]
    best = c.max(axis=-1)
    est = (o - best) / n_arr
    if method == "exact":
        Lq, Uq = _cp(o, n_arr, alpha / 2)
        Lm, Um = _cp(c, n_arr[..., None] if n_arr.ndim else n_arr, alpha / (2 * K))
        lo = np.maximum(0.0, Lq - Um.max(axis=-1))
        hi = np.minimum(1.0, Uq - Lm.max(axis=-1))
    elif method == "paired":
        d = o[..., None] - c  # paired discordant counts #(Y=1, R_m=0) = o - c_m
        Lg, Ug = _cp(d, n_arr[..., None] if n_arr.ndim else n_arr, alpha / K)
        lo = np.maximum(0.0, Lg.min(axis=-1))
        hi = np.minimum(1.0, Ug.min(axis=-1))
    elif method == "hoeffding":
        eps = np.sqrt(math.log(4 / alpha) / (2 * n_arr)) + np.sqrt(math.log(4 * K / alpha) / (2 * n_arr))
        lo = np.maximum(0.0, est - eps)
        hi = np.minimum(1.0, est + eps)
    elif method == "hoeffding-paired":
        eps = np.sqrt(math.log(2 * K / alpha) / (2 * n_arr))
        lo = np.maximum(0.0, est - eps)
        hi = np.minimum(1.0, est + eps)
    else:  # pragma: no cover - checked by callers
        raise ValueError(f"unknown method {method!r}")
    return est, lo, hi


def _naive_bounds(model_counts, oracle_count, n, alpha: float, naive: str):
    c = np.asarray(model_counts, dtype=float)
    o = np.asarray(oracle_count, dtype=float)
    d = o - c.max(axis=-1)
    if naive == "cp":
        return _cp(d, n, alpha)
    g = d / np.asarray(n, dtype=float)
    return _on_unique(lambda nn, gg: (binom.ppf(alpha / 2, nn, gg) / nn, binom.ppf(1 - alpha / 2, nn, gg) / nn), n, g)


def selection_valid_gap(
    model_counts,
    oracle_count: int,
    n: int,
    alpha: float = 0.05,
    method: str = "exact",
    *,
    naive: str = "cp",
    model_names: Sequence[str] | None = None,
) -> GapInterval:
    """Interval for the outcome-oracle gap G = q - max_m p_m that stays valid after picking the best model.

    ``model_counts``: the K models' correct counts out of ``n`` items; ``oracle_count``: items at
    least one model solves. ``method``:

    * ``"exact"`` -- 002 Thm 4: CP for q at alpha/2, CP for each p_m at alpha/(2K),
      G in [max(0, L_q - max_m U_m), min(1, U_q - max_m L_m)] with probability >= 1 - alpha.
    * ``"paired"`` -- the paired interval. Claim: with [L_m, U_m] the two-sided CP interval at
      level 1 - alpha/K for g_m = q - p_m, P(min_m L_m <= G <= min_m U_m) >= 1 - alpha.
      Proof: Y = max_m R_m >= R_m pointwise, so Y - R_m = 1[Y = 1, R_m = 0] is Bernoulli with
      mean g_m, and its count over the sample is o - c_m (the paired counts need no data beyond
      the margins). Each CP interval misses g_m with probability <= alpha/K, so by the union
      bound all K cover simultaneously with probability >= 1 - alpha. On that event
      L_m <= g_m <= U_m for every m, and because min is non-decreasing in each argument,
      min_m L_m <= min_m g_m = G <= min_m U_m. Truncating to [0, 1] keeps coverage, since
      0 <= G <= 1. No assumption on the dependence between models is used. (CP limits grow
      with the count, so both minima are attained at the empirically best model: the interval
      is the naive CP interval with the Bonferroni level alpha/K.)
    * ``"hoeffding"`` -- App. M.1; ``"hoeffding-paired"`` -- its paired analogue.

    ``naive``: the conditional interval shown beside it (``"cp"`` or ``"percentile"``, see the
    module docstring). Ties for the best model go to the lowest index.
    """
    alpha = check_alpha(alpha)
    method = _check_method(method)
    naive = _check_naive(naive)
    c, o, n = check_margin_counts(model_counts, oracle_count, n)
    names = _names(model_names, c.size, "model_names", "m")
    est, lo, hi = _gap_bounds(c, o, n, alpha, method)
    nlo, nhi = _naive_bounds(c, o, n, alpha, naive)
    b = int(np.argmax(c))
    return GapInterval(
        value=float(est),
        lo=float(lo),
        hi=float(hi),
        level=1.0 - alpha,
        method=method,
        n=n,
        K=int(c.size),
        oracle_count=o,
        best_count=int(c[b]),
        best_index=b,
        naive=Interval.of(est, nlo, nhi, 1.0 - alpha, naive),
        best_member=None if model_names is None else names[b],
    )


def selection_valid_gap_from_outcomes(
    R, alpha: float = 0.05, method: str = "exact", *, naive: str = "cp", model_names: Sequence[str] | None = None
) -> GapInterval:
    """:func:`selection_valid_gap` from an outcome matrix ``R`` bool[n, K] (or a k = 1 :class:`Pool`).

    All methods use only the counts c_m = sum_i R_im and o = sum_i max_m R_im: the paired
    counts #(Y = 1, R_m = 0) equal o - c_m exactly because the oracle dominates every model.
    """
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    return selection_valid_gap(
        X.sum(axis=0), int(X.any(axis=1).sum()), X.shape[0], alpha, method, naive=naive, model_names=model_names
    )


def gap_intervals(R, alpha: float = 0.05, methods: Sequence[str] = GAP_METHODS, *, naive: str = "cp") -> pd.DataFrame:
    """One row per method for the same outcomes (or a k = 1 Pool): the gap's value, its valid
    interval and the naive one. (:func:`oraclegap.stats.nulls.gap_table` is another table: the
    nulls' Table 1.)"""
    if isinstance(methods, str):
        methods = [methods]
    frames = [selection_valid_gap_from_outcomes(R, alpha, m, naive=naive).frame() for m in methods]
    return pd.concat(frames, ignore_index=True)
