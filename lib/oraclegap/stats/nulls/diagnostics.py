"""Diagnostics around the two nulls of :mod:`oraclegap.stats.nulls`: the excess bootstrap,
split-half selection and scoring, the pool-size curve, member spread and member coverage, draw
alignment (and :func:`disjoint_draws`), the App. B.1 similarity diagnostics, the Table 1 layout
(:func:`gap_table`) and :func:`sampler_tv` for checking a sampler against an exact law.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from ..._result import Interval, Result
from ..._validate import as_bool_array, as_rng, check_int, check_prob, check_taus
from ..coverage import DEFAULT_TAUS, as_counts, need
from ._kernels import (
    _alias,
    chain_dtype,
    redeal_stats_parallel,
    run_block_chains_parallel,
    run_chains_parallel,
    size_curve_observed,
    size_curve_redeal,
    spread_draws,
)
from .limits import _progress
from .margin_null import effective_sample_size, margin_chain
from .redeal_null import _redeal_active_tables, redeal
from .results import (
    _P_CONVENTIONS,
    _TOL,
    BAND_LEVEL,
    BAND_METHOD,
    ChainDiagnostics,
    NullTest,
    NullTests,
    tests_frame,
)
from .run import null_tests
from .tables import NULLS, _check_choice, _check_statistics, _keys, _prepare


# ============================================================================ excess bootstrap
@dataclasses.dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class ExcessBootstrap(Result, Interval):
    """Prompt-bootstrap percentile interval for the excess (observed minus null mean) of
    ``statistic`` at ``tau`` under ``null``: ``value`` is the excess, ``draws`` its resampled
    values."""

    _repr_fields = ("value", "lo", "hi", "level", "method", "statistic", "tau", "null", "draws")

    statistic: str
    tau: float
    null: str
    draws: np.ndarray

    def frame(self) -> pd.DataFrame:
        """One row: statistic, tau, null, the excess's value with its interval, the resamples."""
        return pd.DataFrame([{"statistic": self.statistic, "tau": self.tau, "null": self.null,
                              "value": self.value, "lo": self.lo, "hi": self.hi, "level": self.level,
                              "method": self.method, "n_boot": self.draws.size}])


#: How :func:`excess_bootstrap` computes each resample's null mean.
EXCESS_METHODS = ("draws", "delta")


def excess_bootstrap(
    x,
    tau: float = 0.10,
    *,
    k: int | None = None,
    statistic: str = "L",
    null: str = "redeal",
    n_boot: int = 1000,
    n_draws: int = 200,
    level: float = 0.95,
    seed=0,
    progress: bool = False,
    method: str = "draws",
) -> ExcessBootstrap:
    """Percentile interval for the excess: resample prompts with replacement ``n_boot`` times and
    on each resample recompute the observed statistic and its null mean. The point estimate is the
    full data's statistic minus its null mean from ``n_draws`` null draws.

    ``method="draws"``: each resample's null mean from ``n_draws`` null draws of that resample (a
    resampled prompt that appears twice is re-dealt twice, independently).

    ``method="delta"`` (L under the re-deal only): each resample's null mean is the full data's
    null mean (the point's draws) plus the change that resampling makes to it, computed without
    draws (:func:`redeal_mean_parts`): with w_i the times prompt i is drawn and s_i its total, the
    re-deal mean of L is (1/n) sum_i w_i (g(s_i) - h(s_i)) - E max_m (C_m - C_bar), where g and h
    are the exact probabilities that the oracle and one member cover a prompt of total s, and the
    last term, the winner's curse of the best member, is e_M sqrt(sum_i w_i v(s_i)) / n for
    members whose coverages are jointly normal (e_M the mean of the largest of M standard normals,
    v the per-prompt variance of a member's coverage minus its covariance with another's). The
    normal approximation enters only through the change from the full data to a resample, an
    O(n^-3/2) correction to an O(n^-1/2) spread; the resamples cost no null draws."""
    _check_statistics(statistic)
    _check_choice(null, "null", NULLS)
    _check_choice(method, "method", EXCESS_METHODS)
    if method == "delta" and (statistic != "L" or null != "redeal"):
        raise ValueError(f"method='delta' computes the re-deal null mean of L; "
                         f"got statistic={statistic!r}, "
                         f"null={null!r} (use method='draws')")
    n_boot = check_int(n_boot, "n_boot", minimum=2)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    level = check_prob(level, "level", open_low=True, open_high=True)
    prep = _prepare(x, [tau], k)
    rng = as_rng(seed)

    def one(counts, gen):
        res = null_tests(counts, [tau], k=prep.k, nulls=(null,), statistics=(statistic,), n_draws=n_draws, seed=gen,
                         n_chains=1 if null == "margin" else 4, skip_degenerate=False)
        t = res.tests[0]
        return t.observed - t.mean

    point = one(prep.counts, rng)
    draws = np.empty(n_boot)
    if method == "delta":
        c, n, r = prep.counts, prep.n, int(prep.needs[0])
        X = (c >= r).astype(np.float64)
        O = X.max(axis=1)
        s = c.sum(axis=1)
        g, h, v = redeal_mean_parts(prep.M, prep.k, r)
        lin, var = (g - h)[s], v[s]
        e_M = expected_normal_max(prep.M)

        def moved(w):  # statistic minus the null mean's resampled parts (einsum: no BLAS threads)
            L_w = (float(np.einsum("i,i->", w, O)) - float(np.einsum("i,ij->j", w, X).max())) / n
            curse = e_M * math.sqrt(max(float(np.einsum("i,i->", w, var)), 0.0)) / n
            return L_w - (float(np.einsum("i,i->", w, lin)) / n - curse)

        full = moved(np.ones(n))
        for b in _progress(range(n_boot), progress, desc="excess bootstrap", unit="resample"):
            w = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
            draws[b] = point + moved(w) - full
    else:
        for b in _progress(range(n_boot), progress, desc="excess bootstrap", unit="resample"):
            idx = rng.integers(0, prep.n, prep.n)
            draws[b] = one(prep.counts[idx], rng)
    a = (1 - level) / 2
    lo, hi = np.percentile(draws, [100 * a, 100 * (1 - a)])
    at = float(prep.taus[0]) if statistic != "pass1" else float("nan")
    return ExcessBootstrap(value=float(point), lo=float(lo), hi=float(hi), level=level,
                           method="prompt-bootstrap percentile", statistic=statistic, tau=at, null=null,
                           draws=draws)


def redeal_mean_parts(M: int, k: int, need_: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact per-prompt moments of coverage under the re-deal, for prompt totals s = 0..M k:
    ``g[s]`` = P(some member has >= ``need_`` of its k successes), ``h[s]`` = P(one given member
    does) and ``v[s]`` = h(s) - P(two given members both do), the variance of one member's coverage
    indicator minus its covariance with another's. Under the re-deal a prompt's s successes are
    dealt into M groups of k uniformly (the multivariate hypergeometric law); g comes from the
    recursion over members Q_m(t) = sum_{a < need} P(a | t, m) Q_{m-1}(t - a) for the chance that
    none of m members reaches ``need_``, P(a | t, m) the hypergeometric chance that one member gets
    a of t successes dealt over m k slots."""
    from scipy.special import gammaln

    M, k = check_int(M, "M", minimum=2), check_int(k, "k", minimum=1)
    r = check_int(need_, "need_", minimum=0)
    a = np.arange(k + 1)

    def lnC(nn, kk):
        nn, kk = np.asarray(nn, float), np.asarray(kk, float)
        ok = (kk >= 0) & (kk <= nn)
        out = (gammaln(nn + 1) - gammaln(np.where(ok, kk, 0) + 1)
               - gammaln(np.where(ok, nn - kk, 0) + 1))
        return np.where(ok, out, -np.inf)

    def first(m):
        """P(a | t, m), [m k + 1, k + 1]: one member's share of t successes over m k slots."""
        t = np.arange(m * k + 1)[:, None]
        return np.exp(lnC(k, a[None, :]) + lnC((m - 1) * k, t - a[None, :]) - lnC(m * k, t))

    below = a < r
    Q = np.where(np.arange(k + 1) < r, 1.0, 0.0)  # Q_1(t), t = 0..k
    for m in range(2, M + 1):
        P = first(m)
        t = np.arange(m * k + 1)
        prev = np.zeros(m * k + 1)
        prev[: Q.size] = Q
        idx = t[:, None] - a[None, :]
        valid = (idx >= 0) & below[None, :]
        Q = (P * np.where(valid, prev[np.clip(idx, 0, m * k)], 0.0)).sum(axis=1)
    g = 1.0 - Q
    PM = first(M)
    h = PM[:, a >= r].sum(axis=1)
    P2 = first(M - 1)  # the second member's share of what the first left
    h2 = P2[:, a >= r].sum(axis=1)  # [(M - 1) k + 1]
    S = np.arange(M * k + 1)
    rest = S[:, None] - a[None, :]
    both = (PM * np.where((a[None, :] >= r) & (rest >= 0) & (rest <= (M - 1) * k),
                          h2[np.clip(rest, 0, (M - 1) * k)], 0.0)).sum(axis=1)
    return np.clip(g, 0.0, 1.0), np.clip(h, 0.0, 1.0), h - both


def expected_normal_max(M: int) -> float:
    """E max(Z_1, ..., Z_M) for independent standard normals: the integral of
    x M phi(x) Phi(x)^(M - 1) over the real line."""
    from scipy import integrate
    from scipy.stats import norm

    M = check_int(M, "M", minimum=1)
    val, _ = integrate.quad(lambda x: x * M * norm.pdf(x) * norm.cdf(x) ** (M - 1), -12, 12,
                            limit=200)
    return float(val)


# ============================================================================ split-half
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class SplitHalf(Result):
    """Select on one half of every cell's responses, score on the other (averaged over splits).

    ``gap_selection``: per-prompt member and fixed comparator both chosen on the selection half,
    both scored on the scoring half. ``gap_scoring``: comparator chosen on the scoring half
    (favours the comparator). ``plugin_half``: the plug-in L on the selection half alone.
    Arrays are [n_splits, T]; the attributes ending in ``_mean`` average over splits.
    """

    taus: np.ndarray
    k_select: int
    k_score: int
    gap_selection: np.ndarray
    gap_scoring: np.ndarray
    plugin_half: np.ndarray

    @property
    def gap_selection_mean(self) -> np.ndarray:
        return self.gap_selection.mean(axis=0)

    @property
    def gap_scoring_mean(self) -> np.ndarray:
        return self.gap_scoring.mean(axis=0)

    @property
    def plugin_half_mean(self) -> np.ndarray:
        return self.plugin_half.mean(axis=0)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({
            "tau": self.taus,
            "need_select": need(self.taus, self.k_select),
            "need_score": need(self.taus, self.k_score),
            "split_half": self.gap_selection_mean,
            "split_half_sd": self.gap_selection.std(axis=0, ddof=1) if self.gap_selection.shape[0] > 1 else np.nan,
            "scoring_comparator": self.gap_scoring_mean,
            "plugin_half": self.plugin_half_mean,
            "n_splits": self.gap_selection.shape[0],
        })


def split_half(x, taus=DEFAULT_TAUS, *, k: int | None = None, n_splits: int = 200, seed=0) -> SplitHalf:
    """Split-half selection and scoring (arXiv 2609.32996, App. C.1).

    For each of ``n_splits`` random splits, every cell's k responses are split into a selection
    half of floor(k/2) and a scoring half of the rest (drawn from the counts: the selection-half
    count is hypergeometric, the law of a uniformly random split). On each prompt the member
    with the most selection-half successes is chosen (ties at random); its coverage is scored on
    the scoring half against a fixed comparator chosen on the selection half (ties at random).
    Needs k >= 2.
    """
    taus = check_taus(taus)
    c, k = as_counts(x, k)
    if k < 2:
        raise ValueError(f"split_half needs k >= 2 responses per cell to split them, got k={k}")
    if c.shape[1] < 2:
        raise ValueError("x has a single policy; split_half compares members and needs n_policies >= 2")
    n_splits = check_int(n_splits, "n_splits", minimum=1)
    rng = as_rng(seed)
    n, M = c.shape
    k1 = k // 2
    k2 = k - k1
    T = taus.size
    g_sel = np.empty((n_splits, T))
    g_sco = np.empty((n_splits, T))
    plug = np.empty((n_splits, T))
    n1 = np.atleast_1d(need(taus, k1))
    n2 = np.atleast_1d(need(taus, k2))
    chunk = max(1, int(4_000_000 // max(1, n * M)))
    for s0 in range(0, n_splits, chunk):
        S = min(chunk, n_splits - s0)
        c1 = rng.hypergeometric(np.broadcast_to(c, (S, n, M)), np.broadcast_to(k - c, (S, n, M)), k1)
        c2 = c[None] - c1
        key = c1 + 0.5 * rng.random((S, n, M))
        sel = key.argmax(axis=2)  # [S, n]
        tie_m = 0.5 * rng.random((S, T, M))
        for t in range(T):
            cov1 = c1 >= n1[t]
            cov2 = c2 >= n2[t]
            orac_score = np.take_along_axis(cov2, sel[:, :, None], axis=2)[:, :, 0].mean(axis=1)
            m1 = cov1.sum(axis=1) + tie_m[:, t, :]
            comp = m1.argmax(axis=1)
            comp_score = np.take_along_axis(cov2, comp[:, None, None], axis=2)[:, :, 0].mean(axis=1)
            g_sel[s0:s0 + S, t] = orac_score - comp_score
            g_sco[s0:s0 + S, t] = orac_score - cov2.mean(axis=1).max(axis=1)
            plug[s0:s0 + S, t] = cov1.any(axis=2).mean(axis=1) - cov1.mean(axis=1).max(axis=1)
    return SplitHalf(taus, k1, k2, g_sel, g_sco, plug)


# ============================================================================ pool-size curve
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PoolSizeCurve(Result):
    """L and D averaged over all member subsets of each size, observed and under the re-deal null.

    ``observed_L``/``observed_D`` and ``null_L``/``null_D`` are [T, M - 1] for sizes 2..M (null:
    mean over draws); ``rise`` holds one :class:`NullTest` per threshold for the rise of the
    chosen statistic from 2 to M members.
    """

    taus: np.ndarray
    sizes: np.ndarray
    observed_L: np.ndarray
    observed_D: np.ndarray
    null_L: np.ndarray
    null_D: np.ndarray
    rise: tuple

    @property
    def tests(self) -> tuple:
        return self.rise

    def frame(self) -> pd.DataFrame:
        rows = []
        for t, tau in enumerate(self.taus):
            for j, s in enumerate(self.sizes):
                rows.append({"tau": tau, "size": int(s), "L": self.observed_L[t, j], "L_null": self.null_L[t, j],
                             "D": self.observed_D[t, j], "D_null": self.null_D[t, j]})
        return pd.DataFrame(rows)


def pool_size_curve(x, taus=DEFAULT_TAUS, *, k: int | None = None, n_draws: int = 2000, seed=0,
                    statistic: str = "L", max_policies: int = 14) -> PoolSizeCurve:
    """Average L and D over every subset of each size 2..M (Section 3.4), and test the rise of
    ``statistic`` (``"L"`` or ``"D"``) from 2 to M members against the re-deal null: each draw
    re-deals the full pool, then averages over the same subsets. Exact over all 2^M subsets via
    subset-sum transforms of per-prompt coverage bitmasks (M <= ``max_policies``)."""
    _check_choice(statistic, "statistic", ("L", "D"))
    prep = _prepare(x, taus, k)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    M = prep.M
    if M > check_int(max_policies, "max_policies", minimum=2):
        raise ValueError(f"pool_size_curve enumerates 2^M subsets; M={M} exceeds max_policies={max_policies}")
    sizes_count = np.array([math.comb(M, s) for s in range(M + 1)], dtype=np.float64)
    s_all = prep.counts.sum(axis=1)
    n_full = int((s_all == M * prep.k).sum())
    obs_L, obs_D = size_curve_observed(prep.c_active, prep.needs, prep.n, sizes_count, n_full)
    key, _ = _keys(as_rng(seed))
    tabs = _alias(M, prep.k)
    if prep.active.size == 0:
        draws = np.broadcast_to(np.stack([obs_L, obs_D]), (n_draws, 2) + obs_L.shape).copy()
    elif tabs is None:  # very large M k: tables from numpy's sampler, curves one table at a time
        draws = np.empty((n_draws, 2) + obs_L.shape)
        for s0 in range(0, n_draws, 256):
            tabs_b = _redeal_active_tables(prep, key, s0, min(256, n_draws - s0))
            for j, tb in enumerate(tabs_b):
                draws[s0 + j, 0], draws[s0 + j, 1] = size_curve_observed(tb, prep.needs, prep.n, sizes_count, n_full)
    else:
        offsets, prob, alias = tabs
        draws = size_curve_redeal(prep.totals, M, prep.k, key, 0, n_draws, offsets, prob, alias, prep.needs, prep.n,
                                  sizes_count, n_full)
    which = 0 if statistic == "L" else 1
    obs = obs_L if statistic == "L" else obs_D
    rise = tuple(
        NullTest(f"rise_{statistic}_2_to_{M}", float(tau), "redeal", float(obs[t, M] - obs[t, 2]),
                 draws[:, which, t, M] - draws[:, which, t, 2], ess=float(n_draws))
        for t, tau in enumerate(prep.taus)
    )
    return PoolSizeCurve(prep.taus, np.arange(2, M + 1), obs_L[:, 2:], obs_D[:, 2:], draws[:, 0, :, 2:].mean(axis=0),
                         draws[:, 1, :, 2:].mean(axis=0), rise)


# ============================================================================ member spread
def member_spread(x, taus=DEFAULT_TAUS, *, k: int | None = None, n_draws: int = 2000, seed=0,
                  p_convention: str = "plus-one") -> NullTests:
    """Spread of member coverage, max_m C_m(tau) - min_m C_m(tau), against a reference that
    permutes the policy labels independently within every prompt (App. C.5). The reference keeps
    each prompt's set of member rates and removes consistent member identity across prompts."""
    prep = _prepare(x, taus, k)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    _check_choice(p_convention, "p_convention", _P_CONVENTIONS)
    key, _ = _keys(as_rng(seed))
    cov = prep.counts[None, :, :] >= prep.needs[:, None, None]
    member = cov.mean(axis=1)
    obs = member.max(axis=1) - member.min(axis=1)
    c_act = prep.c_active
    if c_act.shape[0] == 0:
        d = np.zeros((n_draws, prep.taus.size))
    else:
        d = spread_draws(c_act, prep.needs, key, 0, n_draws) / prep.n
    tests = tuple(NullTest("member_spread", float(tau), "label-permutation", float(obs[t]), d[:, t], p_convention,
                           float(n_draws)) for t, tau in enumerate(prep.taus))
    return NullTests(tests, None, prep.n, prep.M, prep.k, int(prep.n - prep.active.size))


# ============================================================================ member coverage
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class MemberCoverage(Result):
    """Each member's coverage against the margin-preserving null (App. C.5): ``tests`` holds one
    :class:`NullTest` per (member, tau), statistic ``member_coverage``, in the order of
    ``members`` x ``taus``; :meth:`frame` adds a ``member`` column."""

    tests: tuple
    members: tuple  # member name of each test
    chain: ChainDiagnostics | None

    def frame(self) -> pd.DataFrame:
        return tests_frame(self.tests).assign(member=list(self.members))


def member_coverage(x, taus=DEFAULT_TAUS, *, k: int | None = None, n_draws: int = 2000, seed=0,
                    burn_in: int | None = None, thin: int | None = None, p_convention: str = "plus-one") -> MemberCoverage:
    """Coverage C_m(tau) = (1/n) sum_i 1[c_im >= need(tau, k)] of every member against its law
    under the margin-preserving null, which keeps the member's total successes t_m = sum_i c_im
    (and every prompt's total). A small upper-tail p (lower-tail fraction near 1) says the member
    covers more prompts than the additive logit model predicts for its total: its successes are
    spread thinly over many prompts (2609.32996 App. C.5: the leading seed on validation, lower-tail
    fraction 0.993); a small lower-tail fraction says they are concentrated on fewer prompts.
    Draws come from :func:`margin_chain` with the same settings; each test's ESS uses the chains."""
    prep = _prepare(x, taus, k)
    _check_choice(p_convention, "p_convention", _P_CONVENTIONS)
    names = x.policy_names if hasattr(x, "policy_names") else [f"m{j}" for j in range(prep.M)]
    sample = margin_chain(prep.counts, n_draws, k=prep.k, seed=seed, burn_in=burn_in, thin=thin)
    obs = (prep.counts[None] >= prep.needs[:, None, None]).mean(axis=1)  # [T, M]
    draws = (sample.tables[:, None] >= prep.needs[None, :, None, None]).mean(axis=2)  # [B, T, M]
    ess = {}
    tests, members = [], []
    for m, name in enumerate(names):
        for t, tau in enumerate(prep.taus):
            d = draws[:, t, m]
            e = effective_sample_size(d, sample.chain_id)
            ess[(f"member_coverage:{name}", float(tau))] = e
            tests.append(NullTest("member_coverage", float(tau), "margin", float(obs[t, m]), d, p_convention, e,
                                  sample.acceptance))
            members.append(str(name))
    chain = ChainDiagnostics("heatbath", int(np.unique(sample.chain_id).size), sample.burn_in, sample.thin,
                             int(prep.active.size), int(sample.burn_in * np.unique(sample.chain_id).size + sample.thin * n_draws),
                             sample.acceptance, (), ess)
    return MemberCoverage(tuple(tests), tuple(members), chain)


# ============================================================================ draw alignment
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class DrawAlignment(Result):
    """Agreement of responses with the same draw index across members (App. C.5).

    ``test``: the mean matched agreement against draw indices shuffled independently within
    every cell; ``expected``: the exact mean of that shuffle law; ``pairs``: observed and
    expected agreement per member pair."""

    test: NullTest
    expected: float
    pairs: pd.DataFrame

    @property
    def tests(self) -> tuple:
        return (self.test,)

    def frame(self) -> pd.DataFrame:
        return self.test.frame().assign(expected=self.expected)


def _pair_agreement(v: np.ndarray) -> np.ndarray:
    """Matched agreement per member pair, [..., P]: mean over prompts and draws of 1[R_imj = R_ilj]."""
    k = v.shape[-1]
    c = v.sum(axis=-1, dtype=np.int64)  # [..., n, M]
    both = np.einsum("...imj,...ilj->...iml", v.astype(np.int32), v.astype(np.int32))
    agree = (k - c[..., :, None] - c[..., None, :] + 2 * both) / k  # [..., n, M, M]
    iu = np.triu_indices(v.shape[-2], 1)
    return agree[..., iu[0], iu[1]].mean(axis=-2)


def draw_alignment(x, *, n_draws: int = 200, seed=0, p_convention: str = "plus-one") -> DrawAlignment:
    """Do responses with the same index j agree across members more than their counts imply?

    Statistic: A = mean over member pairs (m < l), prompts i and draws j of 1[R_imj = R_ilj].
    Reference: every cell's k responses put in an independent uniformly random order, which keeps
    every count c_im and breaks any link between draw j of one member and draw j of another.
    Its exact mean is the pair-and-prompt average of (c_im c_il + (k - c_im)(k - c_il)) / k^2.
    Both nulls of this module assume independent draws; seed-aligned sampling (the same random
    numbers for draw j under every policy) can make A exceed the reference, which moves the
    members' counts together and pulls oracle gaps below both nulls. ``x``: a Pool or verdicts
    bool[n, M, k] with M >= 2 and k >= 2.
    """
    v = np.asarray(x.verdicts if hasattr(x, "verdicts") else as_bool_array(x, "x"))
    if v.ndim != 3:
        raise ValueError(f"x must be a Pool or verdicts [n, M, k], got an array of rank {v.ndim}")
    n, M, k = v.shape
    if M < 2 or k < 2:
        raise ValueError(f"draw_alignment needs at least 2 members and 2 draws per cell, got M={M}, k={k}")
    v = v.astype(bool)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    _check_choice(p_convention, "p_convention", _P_CONVENTIONS)
    rng = as_rng(seed)
    obs_pairs = _pair_agreement(v)
    c = v.sum(axis=2, dtype=np.int64)
    iu = np.triu_indices(M, 1)
    exp_pairs = ((c[:, iu[0]] * c[:, iu[1]] + (k - c[:, iu[0]]) * (k - c[:, iu[1]])) / k**2).mean(axis=0)
    chunk = max(1, int(4_000_000 // (n * M * k)))
    draws = []
    for s0 in range(0, n_draws, chunk):
        b = min(chunk, n_draws - s0)
        order = np.argsort(rng.random((b, n, M, k)), axis=3)
        draws.append(_pair_agreement(np.take_along_axis(np.broadcast_to(v, order.shape), order, axis=3)).mean(axis=1))
    test = NullTest("matched_agreement", float("nan"), "draw-shuffle", float(obs_pairs.mean()), np.concatenate(draws),
                    p_convention, float(n_draws))
    names = x.policy_names if hasattr(x, "policy_names") else [f"m{j}" for j in range(M)]
    pairs = pd.DataFrame({"member_a": [names[a] for a in iu[0]], "member_b": [names[b] for b in iu[1]],
                          "observed": obs_pairs, "expected": exp_pairs})
    return DrawAlignment(test, float(exp_pairs.mean()), pairs)


def disjoint_draws(pool, k_each: int, *, offset: int = 0):
    """A pool in which member m keeps only its draws offset + m k_each, ..., offset + (m + 1) k_each - 1.

    When the pool is seed-aligned (draw j used the same sampling seed under every policy), no
    two members of the result share a draw index, hence no sampling seed, so their responses are
    independent given the policies, as both nulls assume. Needs offset + M k_each <= k. Answers
    and per-response arrays are cut the same way; the result's ``alignment`` is ``independent``
    and ``meta["disjoint_draws"]`` records the blocks.
    """
    from ...pool import check_pool

    check_pool(pool)
    n, M, k = pool.shape
    k_each = check_int(k_each, "k_each", minimum=1)
    offset = check_int(offset, "offset", minimum=0)
    if offset + M * k_each > k:
        raise ValueError(f"k_each={k_each} for {M} members from offset {offset} needs {offset + M * k_each} draws per cell; "
                         f"the pool has k={k}")
    idx = offset + np.arange(M)[:, None] * k_each + np.arange(k_each)[None, :]  # [M, k_each]

    def cut(a):
        return np.take_along_axis(a, np.broadcast_to(idx[None], (n, M, k_each)), axis=2)

    return dataclasses.replace(
        pool, verdicts=cut(pool.verdicts), answers=None if pool.answers is None else cut(pool.answers),
        per_response={name: cut(a) for name, a in pool.per_response.items()}, alignment="independent",
        meta={**pool.meta, "disjoint_draws": {"k_each": k_each, "offset": offset, "blocks": idx[:, [0, -1]].tolist()}},
    )


# ============================================================================ similarity
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Similarity(Result):
    """App. B.1 diagnostics: mean pairwise correlation of members' per-prompt rates and the
    fraction of prompts whose member rates differ by more than ``diff`` (max - min), each against
    the re-deal null. ``corr`` is the observed M x M correlation matrix."""

    tests: tuple
    corr: np.ndarray
    diff: float

    def frame(self) -> pd.DataFrame:
        return tests_frame(self.tests)


def _similarity_stats(tables: np.ndarray, k: int, diff: float) -> tuple[np.ndarray, np.ndarray]:
    r = tables.astype(float) / k  # [B, n, M]
    B, n, M = r.shape
    z = r - r.mean(axis=1, keepdims=True)
    sd = np.sqrt((z ** 2).mean(axis=1, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = z / sd
        corr = np.einsum("bim,bil->bml", z, z) / n
    iu = np.triu_indices(M, 1)
    pairs = corr[:, iu[0], iu[1]]
    ok = ~np.isnan(pairs)
    n_ok = ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_corr = np.where(ok, pairs, 0.0).sum(axis=1) / n_ok  # NaN when every pair is undefined
    rng_ = tables.max(axis=2) - tables.min(axis=2)
    frac = (rng_ > diff * k + _TOL).mean(axis=1)
    return mean_corr, frac


def similarity(x, *, k: int | None = None, diff: float = 0.25, n_draws: int = 2000, seed=0,
               p_convention: str = "plus-one") -> Similarity:
    """Pairwise-similarity diagnostics of App. B.1 against the re-deal null.

    ``mean_pairwise_corr``: Pearson correlation of two members' raw per-prompt rates, averaged
    over the M(M-1)/2 pairs (pairs with a constant member are skipped). ``frac_rates_differ``:
    fraction of prompts where max_m c_im/k - min_m c_im/k > ``diff``.
    """
    diff = check_prob(diff, "diff")
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    prep = _prepare(x, [1.0], k)
    key, _ = _keys(as_rng(seed))
    obs_corr, obs_frac = _similarity_stats(prep.counts[None], prep.k, diff)
    corr = np.asarray(np.corrcoef((prep.counts / prep.k).T)) if prep.n > 1 else np.full((prep.M, prep.M), np.nan)
    chunk = max(1, int(8_000_000 // max(1, prep.n * prep.M)))
    mc_parts, fr_parts = [], []
    for s0 in range(0, n_draws, chunk):
        b = min(chunk, n_draws - s0)
        tabs = np.broadcast_to(prep.counts, (b,) + prep.counts.shape).copy()
        if prep.active.size:
            tabs[:, prep.active, :] = _redeal_active_tables(prep, key, s0, b)
        m_, f_ = _similarity_stats(tabs, prep.k, diff)
        mc_parts.append(m_)
        fr_parts.append(f_)
    mc = np.concatenate(mc_parts)
    fr = np.concatenate(fr_parts)
    tests = []
    if np.isfinite(obs_corr[0]) and np.isfinite(mc).all():
        tests.append(NullTest("mean_pairwise_corr", float("nan"), "redeal", float(obs_corr[0]), mc, p_convention, float(n_draws)))
    tests.append(NullTest("frac_rates_differ", float("nan"), "redeal", float(obs_frac[0]), fr, p_convention, float(n_draws)))
    return Similarity(tuple(tests), corr, diff)


# ============================================================================ the Table 1 layout
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GapTable(Result):
    """The oracle-gap tests of one pool side by side (the layout of Table 1 of 2609.32996):
    the null tests, split-half scores and the pool-size rise, with :meth:`frame` giving one row
    per threshold."""

    tests: NullTests
    split: SplitHalf
    sizes: PoolSizeCurve

    def frame(self) -> pd.DataFrame:
        rows = []
        for j, tau in enumerate(self.tests_taus):
            r: dict[str, Any] = {"tau": tau}
            d = _test_or_point_mass(self.tests, "D", tau)
            r.update({"D": d.observed, "D_null": d.mean, "D_p": d.p})
            L = _test_or_point_mass(self.tests, "L", tau)
            r.update({"L": L.observed, "L_null": L.mean, "L_band_lo": L.band.lo, "L_band_hi": L.band.hi, "p": L.p,
                      "p_lower": L.p_lower, "excess": L.excess})
            try:
                m = self.tests.get("L", tau, "margin")
                r.update({"L_margin": m.mean, "p_m": m.p})
            except KeyError:
                r.update({"L_margin": np.nan, "p_m": np.nan})
            r["split_half"] = float(self.split.gap_selection_mean[j])
            o = _test_or_point_mass(self.tests, "oracle_minus_mixture", tau)
            r.update({"orac_minus_mix": o.observed, "orac_minus_mix_null": o.mean, "orac_minus_mix_p": o.p})
            notes = [f"{name}: {sk.short}" for name, sk in (("L", self.tests.is_skipped("L", tau)),
                     ("D", self.tests.is_skipped("D", tau)),
                     ("orac_minus_mix", self.tests.is_skipped("oracle_minus_mixture", tau))) if sk is not None]
            if notes:
                r["skipped"] = "; ".join(notes)
            rise = self.sizes.rise[j]
            r.update({"rise_L": rise.observed, "rise_L_null": rise.mean, "rise_p": rise.p})
            rows.append(r)
        out = pd.DataFrame(rows)
        if "skipped" in out.columns:
            out["skipped"] = out["skipped"].fillna("")
        return out

    @property
    def tests_taus(self) -> list[float]:
        return [float(t) for t in self.split.taus]


@dataclasses.dataclass(frozen=True)
class _PointMass:
    observed: float
    mean: float
    p: float
    band: Interval
    p_lower: float
    excess: float


def _test_or_point_mass(tests: NullTests, statistic: str, tau):
    """The re-deal test, or for a skipped (degenerate) one its exact point mass: the null mean
    equals the observed value and p is left empty (NaN), since no test was made."""
    sk = tests.is_skipped(statistic, tau, "redeal")
    if sk is not None:
        o = sk.observed
        band = Interval(o, o, o, BAND_LEVEL, BAND_METHOD)
        return _PointMass(o, o, float("nan"), band, float("nan"), 0.0)
    return tests.get(statistic, tau, "redeal")


def gap_table(x, taus=DEFAULT_TAUS, *, k: int | None = None, n_draws: int = 2000, n_splits: int = 200,
              seed=0, nulls=NULLS) -> GapTable:
    """Run everything Table 1 of 2609.32996 reports for one pool: L, D and oracle-minus-mixture
    against the re-deal null (and L against the margin-preserving null), split-half selection
    and scoring, and the re-deal null of the rise in L from 2 to M members."""
    nl = (nulls,) if isinstance(nulls, str) else tuple(nulls)
    if "redeal" not in nl:
        raise ValueError(f"nulls must include 'redeal' (D, oracle-minus-mixture and the rise use it), got {nulls!r}")
    rng = as_rng(seed)
    tests = null_tests(x, taus, k=k, nulls=nl, statistics=("L", "D", "oracle_minus_mixture"), n_draws=n_draws,
                       seed=rng)
    split = split_half(x, taus, k=k, n_splits=n_splits, seed=rng)
    sizes = pool_size_curve(x, taus, k=k, n_draws=n_draws, seed=rng)
    return GapTable(tests, split, sizes)




def sampler_tv(samples, support, prob, *, n_ref: int = 20, seed=0) -> tuple[float, float]:
    """How far a sampler's draws are from an exact law, against exact sampling at the same size.

    ``samples``: draws [S, ...] (each draw an array, e.g. a count table or one prompt's counts);
    ``support``: the law's outcomes [T, ...] in the same shape; ``prob``: their probabilities
    [T]. Returns ``(tv, ref)``: the total-variation distance between the empirical law of the S
    draws and the exact law, and the mean distance of ``n_ref`` samples of size S drawn from the
    exact law itself. ``tv`` near ``ref`` means the sampler is indistinguishable from exact
    sampling at this size; a wrong law gives ``tv`` far above ``ref``. Draws outside the support
    count fully towards the distance.
    """
    x = np.asarray(samples)
    sup = np.asarray(support)
    pr = np.asarray(prob, dtype=float)
    if x.ndim < 1 or x.shape[0] == 0:
        raise ValueError("samples must hold at least one draw")
    if sup.shape[0] != pr.shape[0] or pr.ndim != 1:
        raise ValueError(f"support has {sup.shape[0]} outcomes but prob has shape {pr.shape}")
    if sup.shape[1:] != x.shape[1:]:
        raise ValueError(f"draws have shape {x.shape[1:]} but the support's outcomes have shape {sup.shape[1:]}")
    if (pr < 0).any() or not np.isclose(pr.sum(), 1.0):
        raise ValueError("prob must be non-negative and sum to 1")
    n_ref = check_int(n_ref, "n_ref", minimum=1)
    S = x.shape[0]
    flat_x = x.reshape(S, -1)
    flat_s = sup.reshape(sup.shape[0], -1)
    keys, counts = np.unique(flat_x, axis=0, return_counts=True)
    index = {tuple(row): j for j, row in enumerate(flat_s.tolist())}
    emp = np.zeros(pr.size)
    outside = 0.0
    for row, c in zip(keys.tolist(), counts, strict=True):
        j = index.get(tuple(row))
        if j is None:
            outside += c / S
        else:
            emp[j] = c / S
    tv = 0.5 * (np.abs(emp - pr).sum() + outside)
    rng = as_rng(seed)
    ref = 0.5 * np.abs(rng.multinomial(S, pr, size=n_ref) / S - pr[None, :]).sum(axis=1)
    return float(tv), float(ref.mean())


# ============================================================================ kernel warm-up
def warm_up(parallel: bool = False) -> None:
    """Compile (or load from numba's cache) every kernel on a tiny table, so that later timings
    measure the work and not the compilation; ``parallel=True`` includes the threaded kernels
    used for large pools."""
    c = np.array([[1, 0, 2], [2, 1, 0], [0, 2, 1], [2, 2, 2]], dtype=np.int64)
    null_tests(c, (0.5,), k=2, n_draws=4, seed=0)
    redeal(c, 2, k=2)
    margin_chain(c, 2, k=2)
    member_spread(c, (0.5,), k=2, n_draws=2)
    pool_size_curve(c, (0.5,), k=2, n_draws=2)
    if parallel:
        prep = _prepare(c, (0.5,), 2)
        offsets, prob, alias = _alias(prep.M, prep.k)
        redeal_stats_parallel(prep.totals, prep.M, prep.k, np.uint64(1), 0, 2, offsets, prob, alias, prep.needs,
                              prep.need_mix, prep.n)
        states = np.ascontiguousarray(np.broadcast_to(prep.c_active, (2,) + prep.c_active.shape).copy())
        run_chains_parallel(states, np.array([1, 2], np.uint64), prep.k, 1, 1, np.array([1, 1], np.int64),
                            np.array([0, 1], np.int64), True, prep.needs, prep.need_mix, prep.n, np.empty((2, 4)),
                            np.empty((0,) + prep.c_active.shape, np.int64), False, np.zeros(2, np.int64))
        # the margin chain's own call on a large pool: tables in their narrow type, blocked rows
        na, M = prep.c_active.shape
        narrow = states.astype(chain_dtype(prep.k))
        perms = np.ascontiguousarray(np.broadcast_to(np.arange(na, dtype=np.int64), (2, na)).copy())
        run_block_chains_parallel(narrow, np.array([1, 2], np.uint64), prep.k, 1, 1, np.array([1, 1], np.int64),
                                  np.array([0, 1], np.int64), True, prep.needs, prep.need_mix, prep.n,
                                  np.empty((2, 4)), np.empty((0, na, M), np.int64), False, np.zeros(2, np.int64),
                                  perms, np.zeros(2, np.int64), max(1, na * M), na + 1)
