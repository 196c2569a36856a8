"""Exact and selection-valid inference for oracle gaps (paper 002, Shihab et al., arXiv; Sections 3-4, App. C, L, M).

Notation. An evaluation sample holds n i.i.d. items; on item i model m is right (R_im = 1) or
wrong, with outcomes of different models allowed to be arbitrarily dependent within an item.

* model accuracy       p_m = E R_m,          plug-in  p^_m = c_m / n   (c_m: model m's count)
* oracle accuracy      q   = E max_m R_m,    plug-in  q^   = o / n     (o: items some model solves)
* outcome-oracle gap   G   = q - max_m p_m,  plug-in  G^   = q^ - max_m p^_m

Because the oracle outcome Y = max_m R_m dominates every model's outcome, q - p_m is the mean
of the Bernoulli variable 1[Y = 1, R_m = 0] and its count is exactly o - c_m. So
G = min_m (q - p_m), and every statistic of the gap below needs only (c_1..c_K, o, n).

Intervals (all at level 1 - alpha; delta = alpha in the paper's notation):

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

Also here: the split-selected interval (Cor 5), the family certificate for G_Pi and H_Pi
(Thm 6), the finite-signal certificate for q_Z and G_Z (Thm 7, App. M.2), paired comparison of a
policy with a frozen baseline (difference, paired bootstrap interval, discordant counts, exact
McNemar, Holm within a family), the rescue/loss decomposition, the recovered fraction with a
joint bootstrap, the opportunity ladder, cost-aware utilities U = R - lambda*C (App. C), and
finite populations with known truth for checking coverage by simulation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binom
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from .._result import Result
from .._validate import (
    as_bool_array,
    as_rng,
    check_alpha,
    check_int,
    check_margin_counts,
    check_prob,
)
from ..pool import Pool
from .multiplicity import holm

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
    "SplitGap",
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
    "OutcomePopulation",
    "mixture_population",
    "gap_coverage",
    "exact_gap_coverage",
    "family_coverage",
    "signal_coverage",
]

GAP_METHODS = ("exact", "paired", "hoeffding", "hoeffding-paired")
NAIVE_METHODS = ("cp", "percentile")


# ====================================================================== Clopper-Pearson
def clopper_pearson(successes, n, alpha: float = 0.05):
    """Two-sided exact (Clopper-Pearson) interval with coverage >= 1 - alpha for a binomial rate.

    Vectorised over ``successes``/``n``; returns ``(lo, hi)`` as floats or arrays.
    """
    alpha = check_alpha(alpha)
    s = _whole_numbers(successes, "successes")
    nn = _whole_numbers(n, "n")
    if np.any(nn < 1):
        raise ValueError(f"n must be >= 1, got {n!r}")
    if np.any(s < 0) or np.any(s > nn):
        raise ValueError(f"successes must lie in [0, n]; got successes={successes!r}, n={n!r}")
    lo, hi = _cp(s, nn, alpha)
    if lo.ndim == 0:
        return float(lo), float(hi)
    return lo, hi


def _whole_numbers(x, name: str) -> np.ndarray:
    """``x`` as an int64 array of whole numbers (finite, no fractional part) or a ValueError naming it."""
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a whole number or an array of them, got {x!r}") from None
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise TypeError(f"{name} must be a whole number or an array of them, got {x!r}")
    if np.issubdtype(a.dtype, np.floating):
        if not np.isfinite(a).all() or not np.all(a == np.round(a)):
            raise ValueError(f"{name} must be whole numbers (a count), got {x!r}")
    return a.astype(np.int64)


def clopper_pearson_upper(successes: int, n: int, alpha: float = 0.05) -> float:
    """One-sided exact upper confidence bound (level 1 - alpha) for a binomial rate.

    With 0 successes it is 1 - alpha**(1/n): 0.171 for n = 16 at alpha = 0.05.
    """
    n = check_int(n, "n", minimum=1)
    successes = check_int(successes, "successes", minimum=0, maximum=n)
    alpha = check_alpha(alpha)
    if alpha >= 0.5:
        raise ValueError(f"alpha must be below 0.5 for a one-sided bound, got {alpha}")
    if successes == n:
        return 1.0
    # the upper end of the two-sided interval at level 1 - 2*alpha is the one-sided bound
    return float(clopper_pearson(successes, n, alpha=2 * alpha)[1])


#: Below this many elements an elementwise function is evaluated directly (no de-duplication).
_UNIQUE_MIN = 256


def _on_unique(fn, *args):
    """``fn(*args)`` for an elementwise ``fn`` (returning one array or a tuple of them), evaluated
    once per distinct tuple of broadcast arguments and scattered back.

    Counts from a simulation take few distinct values (at most n + 1 per margin) while their arrays
    hold reps x K entries, and special functions such as ``beta.ppf`` cost about a microsecond per
    element: computing each distinct value once gives the same floats as the direct call, at a
    fraction of the cost. Scalar arguments pass through; several array arguments are combined
    into one integer key when they hold whole numbers. Small, non-finite or non-integer
    multi-array inputs go straight to ``fn``."""
    arrs = [np.asarray(a, dtype=float) for a in args]
    shape = np.broadcast_shapes(*[a.shape for a in arrs])
    size = int(np.prod(shape)) if shape else 1
    varying = [j for j, a in enumerate(arrs) if a.size > 1]
    if size < _UNIQUE_MIN or not varying or not all(np.isfinite(arrs[j]).all() for j in varying):
        return fn(*args)
    full = [np.broadcast_to(arrs[j], shape).ravel() for j in varying]
    if len(full) == 1:
        key = full[0]
    else:
        if not all(np.array_equal(f, np.round(f)) for f in full):
            return fn(*args)
        lo = [f.min() for f in full]
        span = [f.max() - m + 1 for f, m in zip(full, lo, strict=True)]
        if float(np.prod(span)) >= 2.0**53:
            return fn(*args)
        key = np.zeros(size)
        for f, m, w in zip(full, lo, span, strict=True):
            key = key * w + (f - m)
    u, first, inv = np.unique(key, return_index=True, return_inverse=True)
    if u.size * 2 > size:  # nearly all distinct: nothing to share
        return fn(*args)
    call = [a.reshape(()) if a.size == 1 else a for a in arrs]  # varying arguments replaced below
    for j, f in zip(varying, full, strict=True):
        call[j] = f[first]
    out = fn(*call)
    inv = inv.reshape(-1)
    if isinstance(out, tuple):
        return tuple(np.asarray(o)[inv].reshape(shape) for o in out)
    return np.asarray(out)[inv].reshape(shape)


def _cp(s, n, alpha: float):
    """Unvalidated, vectorised CP interval (statsmodels' beta method) with exact 0 and 1 at the ends
    (computed once per distinct (s, n) pair: the same floats as the elementwise call)."""
    s = np.asarray(s, dtype=float)
    n = np.asarray(n, dtype=float)
    lo, hi = _on_unique(lambda a, b: proportion_confint(a, b, alpha=alpha, method="beta"), s, n)
    lo = np.where(s <= 0, 0.0, np.asarray(lo, dtype=float))
    hi = np.where(s >= n, 1.0, np.asarray(hi, dtype=float))
    return lo, hi


# ====================================================================== input checks
def _check_method(method: str) -> str:
    if method not in GAP_METHODS:
        raise ValueError(f"method must be one of {GAP_METHODS}, got {method!r}")
    return method


def _check_naive(naive: str) -> str:
    if naive not in NAIVE_METHODS:
        raise ValueError(f"naive must be one of {NAIVE_METHODS}, got {naive!r}")
    return naive


def _as_outcomes(R, name: str = "R") -> np.ndarray:
    """bool[n, K] from a 0/1 array or a k = 1 Pool; clear errors for empty or wrong-rank input."""
    if isinstance(R, Pool):
        if R.k != 1:
            raise ValueError(
                f"{name} is a Pool with k={R.k} draws per cell; reduce it to one outcome per cell first "
                "with outcomes_from_pool(pool, draw=j) or outcomes_from_pool(pool, tau=t)"
            )
        return R.verdicts[:, :, 0]
    arr = np.asarray(R)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d outcome matrix [n_items, K_models], got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} has no items (shape {arr.shape}); at least one item is needed")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has K=0 models (shape {arr.shape}); at least one model is needed")
    return as_bool_array(arr, name, ndim=2)


# ====================================================================== Thm 4 and friends
@dataclasses.dataclass(frozen=True, repr=False)
class GapInterval(Result):
    """An interval for the outcome-oracle gap G = q - max_m p_m, with the naive interval beside it.

    ``estimate`` is the plug-in G^ = q^ - max_m p^_m (biased low in expectation, Prop 3);
    ``[lo, hi]`` is the selection-valid interval of ``method`` at level 1 - ``alpha``;
    ``[naive_lo, naive_hi]`` conditions on the selected best model (not valid).
    """

    estimate: float
    lo: float
    hi: float
    alpha: float
    method: str
    n: int
    K: int
    oracle_count: int
    best_count: int
    best_index: int
    naive_lo: float
    naive_hi: float
    naive_method: str
    best_name: str | None = None

    @property
    def width(self) -> float:
        return self.hi - self.lo

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
        return pd.DataFrame(
            [
                {
                    "n": self.n,
                    "K": self.K,
                    "best": self.best_rate,
                    "best_model": self.best_name if self.best_name is not None else self.best_index,
                    "oracle": self.oracle_rate,
                    "gap": self.estimate,
                    "naive_lo": self.naive_lo,
                    "naive_hi": self.naive_hi,
                    "lo": self.lo,
                    "hi": self.hi,
                    "width": self.width,
                    "method": self.method,
                    "alpha": self.alpha,
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
        estimate=float(est),
        lo=float(lo),
        hi=float(hi),
        alpha=alpha,
        method=method,
        n=n,
        K=int(c.size),
        oracle_count=o,
        best_count=int(c[b]),
        best_index=b,
        naive_lo=float(nlo),
        naive_hi=float(nhi),
        naive_method=naive,
        best_name=None if model_names is None else names[b],
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
    """One row per method for the same outcomes (or a k = 1 Pool): estimate, naive and valid interval.
    (Formerly ``gap_table``, a name now held only by :func:`oraclegap.stats.nulls.gap_table`.)"""
    if isinstance(methods, str):
        methods = [methods]
    frames = [selection_valid_gap_from_outcomes(R, alpha, m, naive=naive).frame() for m in methods]
    return pd.concat(frames, ignore_index=True)


def outcomes_from_pool(pool: Pool, *, draw: int | None = None, tau: float | None = None) -> np.ndarray:
    """One 0/1 outcome per (item, policy) from a Pool: bool[n, M].

    k = 1: the only draw. k > 1: ``draw=j`` takes draw j (a single-commit outcome; with a
    seed-aligned pool every policy's draw j shares a seed), or ``tau=t`` takes coverage at
    threshold t (c_im >= need(t, k) = max(1, ceil(t*k - 1e-9))). Exactly one of them for k > 1.
    This is :meth:`oraclegap.pool.Pool.outcomes`, with a type check on ``pool``.
    """
    if not isinstance(pool, Pool):
        raise TypeError(f"pool must be an oraclegap Pool, got {type(pool).__name__}")
    return pool.outcomes(tau=tau, draw=draw)


# ====================================================================== Cor 5: split-selected
@dataclasses.dataclass(frozen=True, repr=False)
class SplitGap(Result):
    """Cor 5: the gap G_b = P(R_b = 0, some other model right) of an anchor b chosen on independent data."""

    anchor: int | None
    anchor_name: str | None
    estimate: float
    lo: float
    hi: float
    alpha: float
    n_select: int
    n_test: int
    rescue_count: int

    @property
    def certified(self) -> bool:
        return self.lo > 0

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "anchor": self.anchor_name if self.anchor_name is not None else self.anchor,
                    "n_select": self.n_select,
                    "n_test": self.n_test,
                    "rescues": self.rescue_count,
                    "G_b": self.estimate,
                    "lo": self.lo,
                    "hi": self.hi,
                    "alpha": self.alpha,
                }
            ]
        )


def random_halves(n: int, seed=0, test_fraction: float = 0.5) -> np.ndarray:
    """A random split: bool[n], True marks the test part (round(test_fraction * n) items)."""
    n = check_int(n, "n", minimum=2)
    f = check_prob(test_fraction, "test_fraction", open_low=True, open_high=True)
    rng = as_rng(seed)
    m = min(max(int(round(f * n)), 1), n - 1)
    mask = np.zeros(n, dtype=bool)
    mask[rng.permutation(n)[:m]] = True
    return mask


def split_selected_gap_from_counts(rescue_count: int, n_test: int, alpha: float = 0.05) -> SplitGap:
    """Cor 5 from the test-half count of items where the frozen anchor fails and another model succeeds."""
    n_test = check_int(n_test, "n_test", minimum=1)
    r = check_int(rescue_count, "rescue_count", minimum=0, maximum=n_test)
    alpha = check_alpha(alpha)
    lo, hi = _cp(r, n_test, alpha)
    return SplitGap(None, None, r / n_test, float(lo), float(hi), alpha, 0, n_test, r)


def split_selected_gap(R, test, alpha: float = 0.05, *, anchor: int | None = None, model_names=None) -> SplitGap:
    """002 Cor 5: choose the anchor on the selection part, certify G_b with exact CP on the test part.

    ``test``: bool mask [n] (True = test item) or integer positions of the test items. The
    anchor is the most accurate model on the selection part (ties: lowest index) unless a
    pre-declared ``anchor`` is given. Conditional on the selection data b is fixed, so
    Delta_i = max_m R_im - R_ib are i.i.d. Bernoulli(G_b) on the test part.
    """
    alpha = check_alpha(alpha)
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    n, K = X.shape
    t = np.asarray(test)
    if t.dtype == bool:
        if t.shape != (n,):
            raise ValueError(f"test as a mask must have length n={n}, got shape {t.shape}")
        mask = t
    else:
        if t.size == 0 or not np.issubdtype(t.dtype, np.integer) or t.min() < 0 or t.max() >= n:
            raise ValueError(f"test must be a bool mask of length {n} or integer positions in [0, {n})")
        mask = np.zeros(n, dtype=bool)
        mask[t] = True
    if not mask.any():
        raise ValueError("test selects no items")
    names = _names(model_names, K, "model_names", "m")
    if anchor is None:
        if mask.all():
            raise ValueError("the selection part is empty: pass a test mask that leaves items to select the anchor on")
        b = int(np.argmax(X[~mask].sum(axis=0)))
    else:
        b = check_int(anchor, "anchor", minimum=0, maximum=K - 1)
    Xt = X[mask]
    r = int((Xt.any(axis=1) & ~Xt[:, b]).sum())
    lo, hi = _cp(r, Xt.shape[0], alpha)
    return SplitGap(b, names[b], r / Xt.shape[0], float(lo), float(hi), alpha, int((~mask).sum()), int(mask.sum()), r)


def split_reseeds(R, n_seeds: int = 20, seed=0, alpha: float = 0.05, test_fraction: float = 0.5, model_names=None) -> pd.DataFrame:
    """Cor 5 over ``n_seeds`` random splits: one row per split (seed, anchor, G_b, lo, hi)."""
    n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    rng = as_rng(seed)
    rows = []
    for s in range(n_seeds):
        mask = random_halves(X.shape[0], rng, test_fraction)
        res = split_selected_gap(X, mask, alpha, model_names=model_names)
        rows.append(res.frame().assign(split=s))
    return pd.concat(rows, ignore_index=True)[["split", "anchor", "n_select", "n_test", "rescues", "G_b", "lo", "hi", "alpha"]]


# ====================================================================== Thm 6: family certificate
@dataclasses.dataclass(frozen=True, repr=False)
class FamilyCertificate(Result):
    """002 Thm 6: simultaneous intervals for G_Pi = q_Pi - p* and H_Pi = q - q_Pi.

    q_Pi is the population accuracy of the best member of a finite policy family Pi that holds
    every constant policy (L members in all). Budget: alpha/3 to the oracle, alpha/(3K) to each
    fixed model, alpha/(3L) to each policy.
    """

    alpha: float
    n: int
    K: int
    L: int
    oracle: float
    best_fixed: float
    best_policy: float
    best_policy_name: str
    G_estimate: float
    G_lo: float
    G_hi: float
    H_estimate: float
    H_lo: float
    H_hi: float
    policies: pd.DataFrame = dataclasses.field(repr=False, compare=False)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"quantity": "G_Pi", "estimate": self.G_estimate, "lo": self.G_lo, "hi": self.G_hi},
                {"quantity": "H_Pi", "estimate": self.H_estimate, "lo": self.H_lo, "hi": self.H_hi},
            ]
        ).assign(L=self.L, K=self.K, n=self.n, alpha=self.alpha)


def _family_bounds(o, c, s, n, alpha: float):
    """Vectorised Thm 6 from counts: o [...], c [..., K] (fixed), s [..., L] (all policies incl. constants)."""
    c = np.asarray(c, dtype=float)
    s = np.asarray(s, dtype=float)
    K, L = c.shape[-1], s.shape[-1]
    Lq, Uq = _cp(o, n, alpha / 3)
    Lm, Um = _cp(c, n, alpha / (3 * K))
    Lp, Up = _cp(s, n, alpha / (3 * L))
    g_lo = np.maximum(0.0, Lp.max(axis=-1) - Um.max(axis=-1))
    g_hi = np.minimum(1.0, Up.max(axis=-1) - Lm.max(axis=-1))
    h_lo = np.maximum(0.0, Lq - Up.max(axis=-1))
    h_hi = np.minimum(1.0, Uq - Lp.max(axis=-1))
    return g_lo, g_hi, h_lo, h_hi, (Lp, Up)


def _policy_outcomes(X: np.ndarray, choices, policy_names) -> tuple[np.ndarray, list[str]]:
    """S[n, L'] = R[i, choice_l(i)] for router choice arrays; names for them."""
    n, K = X.shape
    if choices is None:
        return np.zeros((n, 0), dtype=bool), []
    if isinstance(choices, Mapping):
        names = [str(k) for k in choices]
        arrs = [np.asarray(v) for v in choices.values()]
        if not arrs:
            return np.zeros((n, 0), dtype=bool), []
        for nm, a in zip(names, arrs, strict=True):
            if a.shape != (n,):
                raise ValueError(f"choices[{nm!r}] must have length n={n}, got shape {a.shape}")
        ch = np.stack(arrs, axis=1)
    else:
        ch = np.asarray(choices)
        if ch.ndim == 1:
            ch = ch[:, None]
        if ch.ndim != 2 or ch.shape[0] != n:
            raise ValueError(f"choices must be int[n={n}] or int[n={n}, L], got shape {ch.shape}")
        names = _names(policy_names, ch.shape[1], "policy_names", "policy")
    if ch.size and (not np.issubdtype(ch.dtype, np.integer) or ch.min() < 0 or ch.max() >= K):
        raise ValueError(f"choices must be integer model indices in [0, K={K})")
    return np.take_along_axis(X, ch.astype(int), axis=1), names


def family_certificate(
    R,
    choices=None,
    alpha: float = 0.05,
    *,
    policy_outcomes=None,
    model_names: Sequence[str] | None = None,
    policy_names: Sequence[str] | None = None,
) -> FamilyCertificate:
    """002 Thm 6 on test outcomes ``R`` bool[n, K] for a family of frozen policies.

    ``choices``: the model each router picks per test item (int[n] or int[n, L'] or a dict
    name -> int[n]); ``policy_outcomes``: bool[n, L''] correctness of further policies whose
    outcomes are known directly (each must satisfy S <= max_m R_m pointwise). The K constant
    policies are always members, so L = K + L' + L''. The policies must have been fitted
    without the test outcomes. With probability >= 1 - alpha, simultaneously,
    G_Pi in [max(0, max_pi L_pi - max_m U_m), min(1, max_pi U_pi - max_m L_m)] and
    H_Pi in [max(0, L_q - max_pi U_pi), min(1, U_q - max_pi L_pi)].
    """
    alpha = check_alpha(alpha)
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    n, K = X.shape
    mnames = _names(model_names, K, "model_names", "m")
    S1, n1 = _policy_outcomes(X, choices, policy_names if not isinstance(choices, Mapping) else None)
    Y = np.asarray(X.any(axis=1))
    if policy_outcomes is not None:
        if isinstance(policy_outcomes, Mapping):
            n2 = [str(k) for k in policy_outcomes]
            S2 = np.stack([np.asarray(v) for v in policy_outcomes.values()], axis=1) if n2 else np.zeros((n, 0), dtype=bool)
        else:
            S2 = np.asarray(policy_outcomes)
            if S2.ndim == 1:
                S2 = S2[:, None]
            n2 = [f"policy{len(n1) + j}" for j in range(S2.shape[1] if S2.ndim == 2 else 0)]
        S2 = as_bool_array(S2, "policy_outcomes", ndim=2)
        if S2.shape[0] != n:
            raise ValueError(f"policy_outcomes must have n={n} rows, got {S2.shape[0]}")
        if (S2 & ~Y[:, None]).any():
            raise ValueError("policy_outcomes is right on an item where no model is right; a policy picks one of the K models")
    else:
        S2, n2 = np.zeros((n, 0), dtype=bool), []
    S = np.concatenate([X, S1, S2], axis=1)
    names = mnames + list(n1) + list(n2)
    kinds = ["constant"] * K + ["router"] * (S.shape[1] - K)
    c = X.sum(axis=0)
    s = S.sum(axis=0)
    o = int(Y.sum())
    g_lo, g_hi, h_lo, h_hi, (Lp, Up) = _family_bounds(o, c, s, n, alpha)
    L = S.shape[1]
    bp = int(np.argmax(s))
    pol = pd.DataFrame({"policy": names, "kind": kinds, "accuracy": s / n, "lo": Lp, "hi": Up})
    return FamilyCertificate(
        alpha=alpha,
        n=n,
        K=K,
        L=L,
        oracle=o / n,
        best_fixed=c.max() / n,
        best_policy=s[bp] / n,
        best_policy_name=names[bp],
        G_estimate=(s.max() - c.max()) / n,
        G_lo=float(g_lo),
        G_hi=float(g_hi),
        H_estimate=(o - s.max()) / n,
        H_lo=float(h_lo),
        H_hi=float(h_hi),
        policies=pol,
    )


# ====================================================================== Thm 7: finite signal
@dataclasses.dataclass(frozen=True, repr=False)
class SignalCertificate(Result):
    """002 Thm 7 and App. M.2 for a pre-declared finite signal Z with J levels.

    q_Z = sum_z max_m theta_zm, theta_zm = P(Z = z, R_m = 1), is the accuracy of the best rule
    that sees only Z. ``[q_lo, q_hi]``: Thm 7 at level 1 - alpha (CP at alpha/(JK) per cell).
    ``[G_lo, G_hi]`` for G_Z = q_Z - p*: cells at cell_share*alpha/(JK), each fixed model at
    (1 - cell_share)*alpha/K, level 1 - alpha.
    """

    alpha: float
    n: int
    K: int
    J: int
    levels: tuple
    oracle: float
    best_fixed: float
    q_estimate: float
    q_lo: float
    q_hi: float
    G_estimate: float
    G_lo: float
    G_hi: float
    cell_share: float
    cells: pd.DataFrame = dataclasses.field(repr=False, compare=False)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"quantity": "q_Z", "estimate": self.q_estimate, "lo": self.q_lo, "hi": self.q_hi},
                {"quantity": "G_Z", "estimate": self.G_estimate, "lo": self.G_lo, "hi": self.G_hi},
            ]
        ).assign(J=self.J, K=self.K, n=self.n, alpha=self.alpha)


def _signal_bounds(cell_counts, c, n, alpha: float, cell_share: float):
    """Vectorised Thm 7 / M.2 from counts: cell_counts [..., J, K], c [..., K]."""
    cc = np.asarray(cell_counts, dtype=float)
    J, K = cc.shape[-2], cc.shape[-1]
    Lz, Uz = _cp(cc, n, alpha / (J * K))
    q_lo = np.clip(Lz.max(axis=-1).sum(axis=-1), 0, 1)
    q_hi = np.clip(Uz.max(axis=-1).sum(axis=-1), 0, 1)
    Lz2, Uz2 = _cp(cc, n, cell_share * alpha / (J * K))
    Lm, Um = _cp(c, n, (1 - cell_share) * alpha / K)
    g_lo = np.maximum(0.0, np.clip(Lz2.max(axis=-1).sum(axis=-1), 0, 1) - Um.max(axis=-1))
    g_hi = np.minimum(1.0, np.clip(Uz2.max(axis=-1).sum(axis=-1), 0, 1) - Lm.max(axis=-1))
    return q_lo, q_hi, g_lo, g_hi, (Lz, Uz)


def _signal_codes(signal, n: int, levels) -> tuple[np.ndarray, list]:
    z = np.asarray(signal)
    if z.ndim != 1 or z.shape[0] != n:
        raise ValueError(f"signal must be a 1-d array of length n={n}, got shape {z.shape}")
    zs = pd.Series(z)
    if zs.isna().any():
        raise ValueError("signal has missing values; every item needs a level (add an explicit 'missing' level)")
    if levels is None:
        levels = sorted(zs.unique().tolist(), key=lambda v: (str(type(v)), v))
    else:
        levels = list(levels)
        if len(set(levels)) != len(levels):
            raise ValueError("levels must be distinct")
    codes = pd.Index(levels).get_indexer(zs)
    if (codes < 0).any():
        bad = zs[codes < 0].unique()[:5].tolist()
        raise ValueError(f"signal takes values outside levels: {bad}")
    if not levels:
        raise ValueError("signal has no levels")
    return codes, levels


def finite_signal_certificate(
    R,
    signal,
    alpha: float = 0.05,
    *,
    levels: Sequence | None = None,
    cell_share: float = 0.5,
    model_names: Sequence[str] | None = None,
) -> SignalCertificate:
    """Certificate for the best accuracy any rule seeing only a finite signal Z can reach (002 Thm 7, M.2).

    ``signal``: the level of Z for every test item (task tag, length bin, frozen cluster id),
    declared without the test outcomes; ``levels`` the declared support (default: the levels
    seen; a declared level never seen still widens the upper limits). An upper limit of G_Z
    below eps certifies that *this* signal cannot buy more than eps over the best fixed model;
    it says nothing about richer signals.
    """
    alpha = check_alpha(alpha)
    cell_share = check_prob(cell_share, "cell_share", open_low=True, open_high=True)
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    n, K = X.shape
    mnames = _names(model_names, K, "model_names", "m")
    codes, levels = _signal_codes(signal, n, levels)
    J = len(levels)
    onehot = np.zeros((n, J), dtype=np.int64)
    onehot[np.arange(n), codes] = 1
    cell = onehot.T @ X.astype(np.int64)  # [J, K]
    c = X.sum(axis=0)
    q_lo, q_hi, g_lo, g_hi, (Lz, Uz) = _signal_bounds(cell, c, n, alpha, cell_share)
    q_hat = cell.max(axis=1).sum() / n
    nz = onehot.sum(axis=0)
    bm = cell.argmax(axis=1)
    cells = pd.DataFrame(
        {
            "level": levels,
            "n": nz,
            "best_model": [mnames[j] for j in bm],
            "best_accuracy": np.where(nz > 0, cell.max(axis=1) / np.maximum(nz, 1), np.nan),
            "theta_max": cell.max(axis=1) / n,
            "theta_lo": Lz.max(axis=1),
            "theta_hi": Uz.max(axis=1),
        }
    )
    return SignalCertificate(
        alpha=alpha,
        n=n,
        K=K,
        J=J,
        levels=tuple(levels),
        oracle=float(X.any(axis=1).mean()),
        best_fixed=c.max() / n,
        q_estimate=float(q_hat),
        q_lo=float(q_lo),
        q_hi=float(q_hi),
        G_estimate=float(q_hat - c.max() / n),
        G_lo=float(g_lo),
        G_hi=float(g_hi),
        cell_share=cell_share,
        cells=cells,
    )


def fit_cell_rule(R, signal, fit) -> np.ndarray:
    """A per-level best-model rule: fitted on the ``fit`` items, applied to every item.

    For each level z of ``signal`` the rule picks the model with the most correct answers among
    fit items with Z = z (ties: lowest index); levels absent from the fit items get the best
    model overall on the fit items. Returns int[n] model choices (the rule is Z-measurable, so
    it belongs to any family certified for this signal).
    """
    X = _as_outcomes(R)
    n, K = X.shape
    f = np.asarray(fit)
    if f.dtype != bool or f.shape != (n,):
        raise ValueError(f"fit must be a bool mask of length n={n}")
    if not f.any():
        raise ValueError("fit selects no items")
    codes, levels = _signal_codes(signal, n, None)
    J = len(levels)
    onehot = np.zeros((n, J), dtype=np.int64)
    onehot[np.arange(n), codes] = 1
    cell = onehot[f].T @ X[f].astype(np.int64)
    seen = onehot[f].sum(axis=0) > 0
    overall = int(np.argmax(X[f].sum(axis=0)))
    rule = np.where(seen, cell.argmax(axis=1), overall)
    return rule[codes]


def length_bins(lengths, fit, n_bins: int = 4) -> np.ndarray:
    """A finite signal from a numeric prompt feature: quantile bins with edges frozen on the ``fit`` items.

    Edges are the 1/n_bins, ..., (n_bins-1)/n_bins quantiles of ``lengths`` over the fit items
    (duplicates merged), so the signal is declared without looking at any test item. Returns
    int[n] bin codes in [0, n_bins).
    """
    x = np.asarray(lengths, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.isfinite(x).all():
        raise ValueError("lengths must be a non-empty 1-d array of finite numbers")
    f = np.asarray(fit)
    if f.dtype != bool or f.shape != x.shape:
        raise ValueError(f"fit must be a bool mask of the same length as lengths ({x.size})")
    if not f.any():
        raise ValueError("fit selects no items")
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    edges = np.unique(np.quantile(x[f], np.arange(1, n_bins) / n_bins))
    return np.searchsorted(edges, x, side="right")


def frozen_text_clusters(texts, fit, n_clusters: int = 8, seed=0, max_features: int = 20000) -> np.ndarray:
    """A finite signal from prompt text: TF-IDF + k-means fitted on the ``fit`` items' text only.

    Every item (fit or not) is then assigned to its nearest centre. No outcome is used, so the
    cluster id is a valid pre-declared signal for Thm 7 on items outside ``fit``. Returns
    int[n] cluster ids in [0, n_clusters).
    """
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    t = pd.Series(list(texts), dtype=object).fillna("").astype(str).to_numpy()
    f = np.asarray(fit)
    if f.dtype != bool or f.shape != (t.size,):
        raise ValueError(f"fit must be a bool mask of the same length as texts ({t.size})")
    n_clusters = check_int(n_clusters, "n_clusters", minimum=1)
    if f.sum() < n_clusters:
        raise ValueError(f"fit selects {int(f.sum())} items, fewer than n_clusters={n_clusters}")
    rs = int(as_rng(seed).integers(2**31 - 1))
    vec = TfidfVectorizer(max_features=max_features, sublinear_tf=True, stop_words="english")
    Xf = vec.fit_transform(t[f])
    km = KMeans(n_clusters=n_clusters, n_init=3, random_state=rs).fit(Xf)
    return km.predict(vec.transform(t)).astype(int)


# ====================================================================== paired router inference
def _check_binary_vector(x, name: str, n: int | None = None) -> np.ndarray:
    a = as_bool_array(np.asarray(x), name, ndim=1)
    if a.size == 0:
        raise ValueError(f"{name} is empty; at least one item is needed")
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{name} has length {a.shape[0]} but the other outcomes have length {n}")
    return a


@dataclasses.dataclass(frozen=True, repr=False)
class PairedComparison(Result):
    """A policy against a frozen baseline on the same test items (002 Sec. 4, App. D.9 and O).

    ``difference`` = mean(S - B) with a paired percentile bootstrap interval; ``n10`` items the
    policy gets right and the baseline wrong, ``n01`` the reverse; ``p_mcnemar`` the exact
    McNemar test of n10 = n01. With oracle outcomes, ``G_b`` = mean(Y - B) with its exact CP
    interval (Cor 5) and the recovered fraction rho = difference / G_b with a joint bootstrap
    interval, reported (not NaN) only when the CP lower limit of G_b is positive.
    """

    n: int
    accuracy: float
    accuracy_lo: float
    accuracy_hi: float
    baseline_accuracy: float
    difference: float
    diff_lo: float
    diff_hi: float
    n10: int
    n01: int
    p_mcnemar: float
    alpha: float
    G_b: float = math.nan
    G_b_lo: float = math.nan
    G_b_hi: float = math.nan
    recovered: float = math.nan
    recovered_lo: float = math.nan
    recovered_hi: float = math.nan
    recovered_reported: bool = False

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([dataclasses.asdict(self)])


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
    kw: dict[str, Any] = {}
    if Y is not None:
        rb = int((Y & ~B).sum())
        g_lo, g_hi = _cp(rb, n, alpha)
        kw.update(G_b=rb / n, G_b_lo=float(g_lo), G_b_hi=float(g_hi))
        if g_lo > 0:
            den = boot @ (y_b - b_b)
            num = boot @ (s_b - b_b)
            ok = den > 0
            ratio = num[ok] / den[ok]
            r_lo, r_hi = np.quantile(ratio, [alpha / 2, 1 - alpha / 2])
            kw.update(recovered=diff / (rb / n), recovered_lo=float(r_lo), recovered_hi=float(r_hi), recovered_reported=True)
    return PairedComparison(
        n=n,
        accuracy=float(S.mean()),
        accuracy_lo=float(a_lo),
        accuracy_hi=float(a_hi),
        baseline_accuracy=float(B.mean()),
        difference=diff,
        diff_lo=float(d_lo),
        diff_hi=float(d_hi),
        n10=n10,
        n01=n01,
        p_mcnemar=p,
        alpha=alpha,
        **kw,
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
        rows.append(res.frame().assign(policy=nm))
    df = pd.concat(rows, ignore_index=True)
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


# ====================================================================== signals -> rules -> certificates
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
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    n, K = X.shape
    mnames = _names(model_names, K, "model_names", "m")
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
                "q_Z": cert.q_estimate,
                "q_Z_lo": cert.q_lo,
                "q_Z_hi": cert.q_hi,
                "G_Z": cert.G_estimate,
                "G_Z_lo": cert.G_lo,
                "G_Z_hi": cert.G_hi,
            }
        )
    Y = Xt.any(axis=1)
    B = Xt[:, b]
    outs = {name: Xt[np.arange(Xt.shape[0]), rule[t]] for name, rule in rules.items()}
    paired = paired_family(outs, B, alpha, oracle=Y, n_boot=n_boot, seed=seed).rename(columns={"policy": "rule"})
    rl = pd.concat([rescue_loss(outs[nm], B, Xt).frame() for nm in outs], ignore_index=True)
    paired = pd.concat([paired, rl[["rescue", "loss", "rescue_hit", "loss_share"]]], axis=1)
    return SignalRuleAudit(b, mnames[b], int(f.sum()), int(t.sum()), fam, lad, pd.DataFrame(srows), paired)


# ====================================================================== opportunity ladder
@dataclasses.dataclass(frozen=True, repr=False)
class OpportunityLadder(Result):
    """Plug-in rungs p* <= q_Pi <= q (002 Sec. 3.4), with q_Z for a finite signal when given.

    G_out = G_Pi + H_Pi holds exactly for the plug-ins. The plug-in q_Z = sum_z max_m theta^_zm is
    biased upward (a max of noisy means); certify it with :func:`finite_signal_certificate`.
    """

    n: int
    best_fixed: float
    best_fixed_name: str
    best_family: float
    best_family_name: str
    signal: float
    oracle: float

    @property
    def G_out(self) -> float:
        return self.oracle - self.best_fixed

    @property
    def G_Pi(self) -> float:
        return self.best_family - self.best_fixed

    @property
    def H_Pi(self) -> float:
        return self.oracle - self.best_family

    @property
    def G_Z(self) -> float:
        return self.signal - self.best_fixed

    def frame(self) -> pd.DataFrame:
        rows = [
            ("best fixed model p*", self.best_fixed, self.best_fixed_name),
            ("best family member q_Pi", self.best_family, self.best_family_name),
        ]
        if not math.isnan(self.signal):
            rows.append(("best rule on the signal q_Z", self.signal, "per-level best model"))
        rows.append(("outcome oracle q", self.oracle, "oracle"))
        df = pd.DataFrame(rows, columns=["rung", "accuracy", "policy"])
        df["gain_over_best_fixed"] = df["accuracy"] - self.best_fixed
        df["share_of_G_out"] = df["gain_over_best_fixed"] / self.G_out if self.G_out > 0 else np.nan
        return df


def opportunity_ladder(R, choices=None, signal=None, *, model_names=None, policy_names=None) -> OpportunityLadder:
    """The opportunity ladder from test outcomes ``R`` bool[n, K], router ``choices`` and a finite ``signal``."""
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    n, K = X.shape
    mnames = _names(model_names, K, "model_names", "m")
    S1, n1 = _policy_outcomes(X, choices, policy_names if not isinstance(choices, Mapping) else None)
    S = np.concatenate([X, S1], axis=1)
    names = mnames + list(n1)
    s = S.mean(axis=0)
    c = X.mean(axis=0)
    qz = math.nan
    if signal is not None:
        codes, levels = _signal_codes(signal, n, None)
        onehot = np.zeros((n, len(levels)), dtype=np.int64)
        onehot[np.arange(n), codes] = 1
        qz = float((onehot.T @ X.astype(np.int64)).max(axis=1).sum() / n)
    return OpportunityLadder(
        n=n,
        best_fixed=float(c.max()),
        best_fixed_name=mnames[int(np.argmax(c))],
        best_family=float(s.max()),
        best_family_name=names[int(np.argmax(s))],
        signal=qz,
        oracle=float(X.any(axis=1).mean()),
    )


# ====================================================================== App. C: cost-aware utilities
@dataclasses.dataclass(frozen=True, repr=False)
class CostUtilities(Result):
    """U_m = R_m - lambda*C_m with normalised costs C in [0, 1] (002 App. C), over a grid of lambda.

    fixed = max_m E U_m (best fixed model at that lambda), signal = E max_m E[U_m | Z] (plug-in,
    when a finite signal is given), oracle = E max_m U_m. fixed <= signal <= oracle in the
    population; the plug-ins keep fixed <= signal <= oracle exactly.
    """

    lambdas: np.ndarray
    fixed: np.ndarray
    fixed_model: tuple
    signal: np.ndarray | None
    oracle: np.ndarray
    oracle_accuracy: np.ndarray
    oracle_cost: np.ndarray
    fixed_accuracy: np.ndarray
    fixed_cost: np.ndarray
    cost_scale: float

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(
            {
                "lambda": self.lambdas,
                "fixed": self.fixed,
                "fixed_model": list(self.fixed_model),
                "fixed_accuracy": self.fixed_accuracy,
                "fixed_cost": self.fixed_cost,
                "oracle": self.oracle,
                "oracle_accuracy": self.oracle_accuracy,
                "oracle_cost": self.oracle_cost,
            }
        )
        if self.signal is not None:
            df.insert(5, "signal", self.signal)
        return df


def cost_utilities(R, cost, lambdas, *, signal=None, normalize: str = "max", model_names=None,
                   ties: str = "index") -> CostUtilities:
    """Cost-aware fixed, signal and oracle utilities for each lambda >= 0.

    ``cost``: per-item-per-model cost [n, K] (or per-model [K]); ``normalize="max"`` divides by
    the largest cost so C lies in [0, 1] (``cost_scale`` records the divisor), ``"none"``
    requires costs already in [0, 1]. Accuracy and normalised cost of the chosen models are
    reported beside each utility. Utilities do not depend on how the oracle breaks ties, but
    its accuracy and cost do (at lambda = 0 every correct model ties): ``ties="index"`` picks
    the lowest index, ``"cheapest"`` the cheapest tied model (the limit lambda -> 0+),
    ``"dearest"`` the most expensive one, so the two bracket what any tie rule pays.
    """
    if isinstance(R, Pool):
        if model_names is None:
            model_names = R.policy_names
        if cost is None:
            cost = R.cost
    X = _as_outcomes(R)
    n, K = X.shape
    mnames = _names(model_names, K, "model_names", "m")
    if cost is None:
        raise ValueError("cost is required: per-item [n, K] or per-model [K] costs")
    C = np.asarray(cost, dtype=float)
    if C.shape == (K,):
        C = np.broadcast_to(C, (n, K))
    if C.shape != (n, K):
        raise ValueError(f"cost must have shape [n={n}, K={K}] or [K={K}], got {C.shape}")
    if not np.isfinite(C).all() or (C < 0).any():
        raise ValueError("cost must be finite and non-negative")
    if normalize == "max":
        scale = float(C.max()) if C.max() > 0 else 1.0
        C = C / scale
    elif normalize == "none":
        if C.max() > 1:
            raise ValueError("with normalize='none' costs must already lie in [0, 1]")
        scale = 1.0
    else:
        raise ValueError(f"normalize must be 'max' or 'none', got {normalize!r}")
    lam = np.atleast_1d(np.asarray(lambdas, dtype=float))
    if lam.ndim != 1 or lam.size == 0 or not np.isfinite(lam).all() or (lam < 0).any():
        raise ValueError("lambdas must be a non-empty 1-d sequence of finite values >= 0")
    if ties not in ("index", "cheapest", "dearest"):
        raise ValueError(f"ties must be 'index', 'cheapest' or 'dearest', got {ties!r}")
    Xf = X.astype(float)
    U = Xf[None] - lam[:, None, None] * C[None]  # [Λ, n, K]
    mean_u = U.mean(axis=1)  # [Λ, K]
    fm = mean_u.argmax(axis=1)
    if ties == "index":
        pick = U.argmax(axis=2)  # [Λ, n]
    else:  # among the maximisers of U, the cheapest (or dearest) model; index breaks remaining ties
        best = U >= U.max(axis=2, keepdims=True) - 1e-12
        key = np.where(best, -C[None] if ties == "cheapest" else C[None], -np.inf)
        pick = key.argmax(axis=2)
    rows = np.arange(n)
    sig = None
    if signal is not None:
        codes, levels = _signal_codes(signal, n, None)
        onehot = np.zeros((n, len(levels)))
        onehot[rows, codes] = 1
        cell_u = np.einsum("nj,lnk->ljk", onehot, U)  # sums per level
        sig = cell_u.max(axis=2).sum(axis=1) / n
    return CostUtilities(
        lambdas=lam,
        fixed=mean_u.max(axis=1),
        fixed_model=tuple(mnames[j] for j in fm),
        signal=sig,
        oracle=U.max(axis=2).mean(axis=1),
        oracle_accuracy=Xf[rows[None, :], pick].mean(axis=1),
        oracle_cost=C[rows[None, :], pick].mean(axis=1),
        fixed_accuracy=Xf.mean(axis=0)[fm],
        fixed_cost=C.mean(axis=0)[fm],
        cost_scale=scale,
    )


# ====================================================================== populations with known truth
@dataclasses.dataclass(frozen=True)
class OutcomePopulation:
    """A finite law for (Z, R_1..R_K): ``probs[z, pattern]`` = P(Z = z, R = pattern).

    Patterns index the 2^K outcome vectors (bit m of the index is R_m). Every population value
    of this module is exact: p_m, q, G, theta_zm, q_Z, G_Z and the accuracy of any Z-measurable
    rule. Sampling n i.i.d. items is a multinomial draw over the J * 2^K cells, so coverage
    checks need only counts and run fast.
    """

    probs: np.ndarray
    K: int

    def __post_init__(self):
        P = np.asarray(self.probs, dtype=float)
        if P.ndim == 1:
            P = P[None]
        K = check_int(self.K, "K", minimum=1, maximum=16)
        if P.ndim != 2 or P.shape[1] != 2**K:
            raise ValueError(f"probs must have shape [J, 2^K={2**K}], got {P.shape}")
        if (P < -1e-12).any() or not np.isclose(P.sum(), 1.0):
            raise ValueError("probs must be non-negative and sum to 1")
        P = np.clip(P, 0, None)
        P = P / P.sum()
        P.setflags(write=False)
        object.__setattr__(self, "probs", P)

    @property
    def J(self) -> int:
        return self.probs.shape[0]

    @property
    def patterns(self) -> np.ndarray:
        idx = np.arange(2**self.K)
        return ((idx[:, None] >> np.arange(self.K)[None, :]) & 1).astype(bool)

    @property
    def theta(self) -> np.ndarray:
        """theta[z, m] = P(Z = z, R_m = 1)."""
        return self.probs @ self.patterns.astype(float)

    @property
    def p(self) -> np.ndarray:
        return self.theta.sum(axis=0)

    @property
    def q(self) -> float:
        return float(self.probs[:, 1:].sum())

    @property
    def gap(self) -> float:
        return self.q - float(self.p.max())

    @property
    def q_signal(self) -> float:
        return float(self.theta.max(axis=1).sum())

    @property
    def signal_gap(self) -> float:
        return self.q_signal - float(self.p.max())

    def rule_accuracy(self, rule) -> float:
        """Population accuracy of the Z-measurable rule z -> rule[z]."""
        r = np.asarray(rule)
        if r.shape != (self.J,):
            raise ValueError(f"rule must map each of the J={self.J} levels to a model")
        return float(self.theta[np.arange(self.J), r].sum())

    def sample_counts(self, n: int, reps: int, seed=0) -> dict:
        """``reps`` samples of n items as counts: cell [reps, J, K], models [reps, K], oracle [reps]."""
        n = check_int(n, "n", minimum=1)
        reps = check_int(reps, "reps", minimum=1)
        rng = as_rng(seed)
        draws = rng.multinomial(n, self.probs.ravel(), size=reps).reshape(reps, self.J, -1)
        cell = np.einsum("rjp,pk->rjk", draws, self.patterns.astype(np.int64))
        return {"cell": cell, "models": cell.sum(axis=1), "oracle": draws[:, :, 1:].sum(axis=(1, 2))}

    def sample_outcomes(self, n: int, seed=0) -> tuple[np.ndarray, np.ndarray]:
        """n i.i.d. items: outcomes bool[n, K] and signal levels int[n]."""
        n = check_int(n, "n", minimum=1)
        rng = as_rng(seed)
        flat = rng.choice(self.probs.size, size=n, p=self.probs.ravel())
        z, pat = np.divmod(flat, 2**self.K)
        return self.patterns[pat], z


def mixture_population(p, weights=None, signal=None) -> OutcomePopulation:
    """Latent classes c with weights w_c; in class c the K models are independent Bernoulli(p[c, m]).

    One class gives independent models; several classes with a shared difficulty give
    positively correlated models; ``signal`` (int[C]) maps each class to an observable level z,
    so the rule that sees Z can exploit class-specific strengths (J = max(signal) + 1).
    """
    P = np.atleast_2d(np.asarray(p, dtype=float))
    if P.ndim != 2 or P.shape[1] == 0:
        raise ValueError(f"p must be [K] or [C, K] with K >= 1, got shape {np.shape(p)}")
    if (P < 0).any() or (P > 1).any() or np.isnan(P).any():
        raise ValueError("p must hold probabilities in [0, 1]")
    C, K = P.shape
    w = np.full(C, 1.0 / C) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (C,) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be {C} non-negative numbers summing to 1")
    z = np.zeros(C, dtype=int) if signal is None else np.asarray(signal)
    if z.shape != (C,) or not np.issubdtype(z.dtype, np.integer) or z.min() < 0:
        raise ValueError(f"signal must map each of the {C} classes to a level 0, 1, ...")
    J = int(z.max()) + 1
    pats = ((np.arange(2**K)[:, None] >> np.arange(K)[None, :]) & 1).astype(float)
    like = np.prod(np.where(pats[None] == 1, P[:, None, :], 1 - P[:, None, :]), axis=2)  # [C, 2^K]
    probs = np.zeros((J, 2**K))
    np.add.at(probs, z, w[:, None] * like)
    return OutcomePopulation(probs, K)


def _coverage_row(name, lo, hi, truth, est) -> dict:
    cov = (lo <= truth + 1e-12) & (truth - 1e-12 <= hi)
    reps = lo.size
    return {
        "method": name,
        "coverage": float(cov.mean()),
        "mc_se": float(np.sqrt(max(cov.mean() * (1 - cov.mean()), 1e-12) / reps)),
        "mean_width": float((hi - lo).mean()),
        "mean_lo": float(lo.mean()),
        "lo_positive": float((lo > 0).mean()),
        "truth": truth,
        "mean_estimate": float(est.mean()),
        "reps": reps,
    }


def gap_coverage(
    population: OutcomePopulation,
    n: int,
    *,
    reps: int = 2000,
    alpha: float = 0.05,
    methods: Sequence[str] = ("naive", "naive-percentile", "exact", "paired", "hoeffding", "hoeffding-paired"),
    seed=0,
) -> pd.DataFrame:
    """Simulated coverage of G = q - p* by each interval, ``reps`` samples of ``n`` items.

    Columns: method, coverage, mc_se (binomial Monte Carlo s.e.), mean_width, mean_lo,
    lo_positive (share of samples with a positive lower limit), truth, mean_estimate (the
    plug-in G^'s mean; mean_estimate <= truth is Prop 3), reps, n.
    """
    if not isinstance(population, OutcomePopulation):
        raise TypeError("population must be an OutcomePopulation (see mixture_population)")
    alpha = check_alpha(alpha)
    s = population.sample_counts(n, reps, seed)
    truth = population.gap
    rows = []
    for m in methods:
        if m == "naive":
            lo, hi = _naive_bounds(s["models"], s["oracle"], n, alpha, "cp")
            est = (s["oracle"] - s["models"].max(axis=1)) / n
        elif m == "naive-percentile":
            lo, hi = _naive_bounds(s["models"], s["oracle"], n, alpha, "percentile")
            est = (s["oracle"] - s["models"].max(axis=1)) / n
        else:
            est, lo, hi = _gap_bounds(s["models"], s["oracle"], n, alpha, _check_method(m))
        rows.append(_coverage_row(m, np.asarray(lo), np.asarray(hi), truth, np.asarray(est)))
    return pd.DataFrame(rows).assign(n=n, K=population.K, alpha=alpha)


def _compositions(n: int, parts: int) -> np.ndarray:
    """All vectors of ``parts`` non-negative integers summing to n (stars and bars), as int[M, parts]."""
    import itertools

    bars = np.array(list(itertools.combinations(range(n + parts - 1), parts - 1)), dtype=np.int64).reshape(-1, parts - 1)
    edges = np.concatenate([np.full((bars.shape[0], 1), -1), bars, np.full((bars.shape[0], 1), n + parts - 1)], axis=1)
    return np.diff(edges, axis=1) - 1


def exact_gap_coverage(
    population: OutcomePopulation, n: int, *, alpha: float = 0.05, methods: Sequence[str] = GAP_METHODS, max_samples: int = 2_000_000
) -> pd.DataFrame:
    """Exact coverage of G by each interval: every possible sample of n items, weighted by its multinomial probability.

    Feasible for small populations (J * 2^K cells) and n; raises when the number of distinct
    samples exceeds ``max_samples``. Also returns E[G^] exactly (Prop 3: E[G^] <= G).
    """
    from scipy.special import comb, gammaln

    if not isinstance(population, OutcomePopulation):
        raise TypeError("population must be an OutcomePopulation (see mixture_population)")
    alpha = check_alpha(alpha)
    n = check_int(n, "n", minimum=1)
    P = population.probs.ravel()
    size = comb(n + P.size - 1, P.size - 1, exact=True)
    if size > max_samples:
        raise ValueError(f"{size:,} distinct samples exceed max_samples={max_samples:,}; use gap_coverage (simulation)")
    comp = _compositions(n, P.size)
    with np.errstate(divide="ignore"):
        logP = np.log(P)
    terms = np.where(comp > 0, comp * logP[None, :], 0.0)
    w = np.exp(gammaln(n + 1) - gammaln(comp + 1).sum(axis=1) + terms.sum(axis=1))
    pats = np.tile(population.patterns.astype(np.int64), (population.J, 1))
    models = comp @ pats
    oracle = comp.reshape(-1, population.J, 2**population.K)[:, :, 1:].sum(axis=(1, 2))
    truth = population.gap
    rows = []
    for m in methods:
        if m in ("naive", "naive-percentile"):
            lo, hi = _naive_bounds(models, oracle, n, alpha, "cp" if m == "naive" else "percentile")
            est = (oracle - models.max(axis=1)) / n
        else:
            est, lo, hi = _gap_bounds(models, oracle, n, alpha, _check_method(m))
        cov = (np.asarray(lo) <= truth + 1e-12) & (truth - 1e-12 <= np.asarray(hi))
        rows.append(
            {
                "method": m,
                "coverage": float(w[cov].sum()),
                "mean_width": float((w * (np.asarray(hi) - np.asarray(lo))).sum()),
                "truth": truth,
                "mean_estimate": float((w * est).sum()),
                "samples": int(comp.shape[0]),
                "total_probability": float(w.sum()),
            }
        )
    return pd.DataFrame(rows).assign(n=n, K=population.K, alpha=alpha)


def family_coverage(population: OutcomePopulation, rules, n: int, *, reps: int = 2000, alpha: float = 0.05, seed=0) -> pd.DataFrame:
    """Simulated simultaneous coverage of Thm 6 for a family of Z-measurable rules plus the constants.

    ``rules``: int[L', J] (row l maps each level to a model). Rows: G_Pi, H_Pi and both
    (the theorem's simultaneous claim).
    """
    alpha = check_alpha(alpha)
    R = np.atleast_2d(np.asarray(rules))
    J, K = population.J, population.K
    if R.shape[1] != J or not np.issubdtype(R.dtype, np.integer) or R.min() < 0 or R.max() >= K:
        raise ValueError(f"rules must be int[L, J={J}] with entries in [0, K={K})")
    s = population.sample_counts(n, reps, seed)
    pol = s["cell"][:, np.arange(J)[None, :], R].sum(axis=2)  # [reps, L']
    S = np.concatenate([s["models"], pol], axis=1)
    g_lo, g_hi, h_lo, h_hi, _ = _family_bounds(s["oracle"], s["models"], S, n, alpha)
    acc = np.concatenate([population.p, [population.rule_accuracy(r) for r in R]])
    qpi = acc.max()
    G, H = qpi - population.p.max(), population.q - qpi
    g_est = (S.max(axis=1) - s["models"].max(axis=1)) / n
    h_est = (s["oracle"] - S.max(axis=1)) / n
    rows = [_coverage_row("G_Pi", g_lo, g_hi, G, g_est), _coverage_row("H_Pi", h_lo, h_hi, H, h_est)]
    both = ((g_lo <= G + 1e-12) & (G - 1e-12 <= g_hi) & (h_lo <= H + 1e-12) & (H - 1e-12 <= h_hi)).mean()
    rows.append({"method": "G_Pi and H_Pi", "coverage": float(both), "mc_se": float(np.sqrt(both * (1 - both) / reps)), "reps": reps})
    return pd.DataFrame(rows).assign(n=n, K=K, L=S.shape[1], alpha=alpha)


def signal_coverage(population: OutcomePopulation, n: int, *, reps: int = 2000, alpha: float = 0.05, cell_share: float = 0.5, seed=0) -> pd.DataFrame:
    """Simulated coverage of the Thm 7 interval for q_Z and the M.2 interval for G_Z."""
    alpha = check_alpha(alpha)
    s = population.sample_counts(n, reps, seed)
    q_lo, q_hi, g_lo, g_hi, _ = _signal_bounds(s["cell"], s["models"], n, alpha, cell_share)
    q_est = s["cell"].max(axis=2).sum(axis=1) / n
    g_est = q_est - s["models"].max(axis=1) / n
    rows = [
        _coverage_row("q_Z", q_lo, q_hi, population.q_signal, q_est),
        _coverage_row("G_Z", g_lo, g_hi, population.signal_gap, g_est),
    ]
    return pd.DataFrame(rows).assign(n=n, K=population.K, J=population.J, alpha=alpha)


# ====================================================================== helpers
def _names(names, size: int, arg: str, prefix: str) -> list[str]:
    if names is None:
        return [f"{prefix}{j}" for j in range(size)]
    names = [str(x) for x in names]
    if len(names) != size:
        raise ValueError(f"{arg} has {len(names)} entries but there are {size}")
    return names
