"""The split-draw (reproducible) coverage gap: a gap over the best member that is zero under pure
noise, with a selection-valid interval (the audit's certified quantity at k > 1).

Why not the plug-in gap. The apparent gap at threshold tau compares the oracle of the *estimated*
per-prompt rates with the best member, both scored on the same k draws: a member whose k draws
happen to reach tau covers the prompt, and the oracle collects every member's luck. On exchangeable
members (every member with the same rate on each prompt) its population value is 0 while its
expectation is positive at every n, and more prompts narrow the interval around that positive
expectation instead of towards 0 (arXiv 2607.03436 calls this the within-prompt winner's curse).

The estimand. Split each cell's k draws into A (the first k_A = floor(k/2)) and B (the other
k_B = k - k_A). On A choose, for every prompt, the member with the most successes (ties broken
uniformly at random, independently of B); score whether the chosen member covers the prompt at tau
on B, Y_i^{AB} = 1[c^B_{i, m^A_i} >= need(tau, k_B)], and compare with every fixed member scored on
the same draws, Z^B_im = 1[c^B_im >= need(tau, k_B)]. Swap the roles of A and B and average
(cross-fitting), so every draw both chooses and scores:

    d_im = ((Y_i^{AB} - Z^B_im) + (Y_i^{BA} - Z^A_im)) / 2,
    G_split(tau) = min_m E[d_im] = E[(Y^{AB} + Y^{BA}) / 2] - max_m E[(Z^B_m + Z^A_m) / 2],

the coverage of a per-prompt choice made on held-out draws (in the spirit of 2607.03436's
reproducible ceiling O_repro) minus that of the best fixed member, each scored on draws the choice
did not see. Expectations are over prompts and draws.

Why its mean is <= 0 under exchangeability. If the members are exchangeable within a prompt and
the draws of A and B are independent given the prompt, the choice m^A_i depends on A only, so
c^B_{i, m^A_i} has the law of c^B_im for every m: E[Y^{AB}] = E[Z^B_m] for every m, likewise for
BA, hence every E[d_im] = 0 and G_split = 0. The plug-in estimate mean(Y) - max_m mean(Z_m) has
expectation <= 0 (the max of means has expectation >= the max of expectations), for every n and k.

The interval. For each member, a two-sided Student interval for E[d_im] from the n prompts (d is
bounded in [-1, 1]; prompts independent) at level 1 - alpha/M, with one pseudo-prompt at each bound
added (:func:`_adjusted_moments`, so that a member whose differences are all 0 on the sample does
not get a zero-width interval); by the union bound all M cover
with probability >= 1 - alpha and, min being non-decreasing in each argument, G_split lies in
[min_m l_m, min_m u_m]. No assumption on the dependence between members is used. The interval is
asymptotic in n (the central limit theorem over prompts); the verdict study measures its coverage
on pools of known truth (:mod:`oraclegap.audit.study`).

What it under-states. The choice sees only k_A draws and the score uses k_B: G_split is below the
reproducible gap O_repro(tau) - best member (a choice on all k draws, or on the true rates, would
pick the specialist more often), and need(tau, k_B) resolves tau more coarsely than need(tau, k).
It is a lower reading of the reproducible gap, never of the luck. Thresholds tau with the same
success counts on both halves are one statistic (:func:`split_groups`).

:func:`split_draw_gap` computes it from verdicts; :func:`split_draw_population` gives its value
from true per-prompt rates (independent draws), for checks on pools of known truth.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy import stats as sps

from .._result import Interval, Result
from .._validate import as_bool_array, as_rng, check_alpha, check_taus
from .coverage import DEFAULT_TAUS, need

__all__ = ["SplitGap", "split_halves", "split_groups", "split_draw_gap", "split_draw_population",
           "split_draw_counts"]


def split_halves(k: int) -> tuple[int, int]:
    """(k_A, k_B) = (floor(k / 2), k - floor(k / 2)) for k >= 2 draws per cell."""
    if int(k) < 2:
        raise ValueError(f"the split-draw gap needs k >= 2 draws per cell, got k = {k}")
    return int(k) // 2, int(k) - int(k) // 2


def split_groups(taus, k: int) -> list[tuple[int, int]]:
    """For each threshold, its success counts (need(tau, k_A), need(tau, k_B)) on the two halves;
    thresholds with equal pairs give one and the same statistic."""
    ka, kb = split_halves(k)
    return [(need(float(t), ka), need(float(t), kb)) for t in np.atleast_1d(taus)]


@dataclasses.dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class SplitGap(Result, Interval):
    """The split-draw coverage gap at one threshold (see the module docstring).

    ``value``: the estimate, with its simultaneous interval [``lo``, ``hi``] (``level`` =
    1 - alpha); ``chosen``: the cross-fitted coverage of the per-prompt choice; ``best``: the best
    fixed member's coverage on the same draws (``best_member`` its name); ``certified``: the lower
    limit is above 0; ``k_a``, ``k_b``, ``need_a``, ``need_b``: the halves and their success
    counts; ``members``: each member's mean difference d_m with its interval [l_m, u_m] at level
    1 - alpha/M (the certificate is [min_m l_m, min_m u_m]), ``member_sd`` the standard
    deviations behind them."""

    _repr_fields = ("tau", "value", "lo", "hi", "certified", "level", "chosen", "best",
                    "best_member")

    tau: float
    chosen: float
    best: float
    best_member: str
    certified: bool
    n: int
    k_a: int
    k_b: int
    need_a: int
    need_b: int
    members: tuple[Interval, ...]
    member_sd: tuple

    def to_dict(self) -> dict:
        """JSON-ready: tau, the gap's value with its interval, the choice's and the best member's
        coverage, whether it is certified, n and the halves (the members' intervals left out)."""
        return {"tau": self.tau, "value": self.value, "lo": self.lo, "hi": self.hi,
                "level": self.level, "method": self.method, "chosen": self.chosen,
                "best": self.best, "best_member": self.best_member, "certified": self.certified,
                "n": self.n, "k_a": self.k_a, "k_b": self.k_b, "need_a": self.need_a,
                "need_b": self.need_b}

    def frame(self) -> pd.DataFrame:
        """One row: tau, value, lo, hi, level, method, chosen, best, best_member, certified."""
        d = self.to_dict()
        cols = ("tau", "value", "lo", "hi", "level", "method", "chosen", "best", "best_member",
                "certified")
        return pd.DataFrame([{c: d[c] for c in cols}])


def _verdicts(x) -> np.ndarray:
    return x.verdicts if hasattr(x, "verdicts") else as_bool_array(x, "x (verdicts [n, M, k])", ndim=3)


def split_draw_counts(x) -> tuple[np.ndarray, np.ndarray]:
    """Successes on the first k_A and the last k_B draws of every cell, each int[n, M]."""
    v = _verdicts(x)
    ka, _ = split_halves(v.shape[2])
    return v[:, :, :ka].sum(axis=2, dtype=np.int64), v[:, :, ka:].sum(axis=2, dtype=np.int64)


def _choice(c: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Per prompt, the member with the most successes; ties broken by the uniforms ``u`` [n, M]."""
    return np.argmax(c + 0.5 * u, axis=1)


def _differences(ca, cb, ka, kb, tau, ua, ub):
    """(d [n, M], chosen [n], fixed [n, M]) of the cross-fitted split at ``tau``."""
    na, nb = need(tau, ka), need(tau, kb)
    za, zb = ca >= na, cb >= nb
    rows = np.arange(ca.shape[0])
    y_ab = zb[rows, _choice(ca, ua)]
    y_ba = za[rows, _choice(cb, ub)]
    chosen = (y_ab.astype(float) + y_ba) / 2
    fixed = (za.astype(float) + zb) / 2
    return chosen[:, None] - fixed, chosen, fixed


def _adjusted_moments(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of every column of d [n, M] with two pseudo-prompts added, one at
    each bound (d = +1 and d = -1): the sum is unchanged and the mean shrinks towards 0 by a factor
    n / (n + 2), while the standard deviation can no longer be 0 when every observed d is (a member
    that ties the choice on all n prompts would otherwise get the one-point interval [0, 0]); the
    Agresti-Caffo device for paired differences of proportions."""
    n = d.shape[0]
    s1 = d.sum(axis=0)
    s2 = (d * d).sum(axis=0) + 2.0
    mean = s1 / (n + 2)
    var = np.maximum(s2 - (n + 2) * mean * mean, 0.0) / (n + 1)
    return mean, np.sqrt(var)


def split_draw_gap(x, taus=DEFAULT_TAUS, alpha: float = 0.05, *, seed=0,
                   model_names=None) -> tuple[SplitGap, ...]:
    """The split-draw coverage gap at each threshold with its selection-valid interval.

    ``x``: a Pool or verdicts bool[n, M, k] with k >= 2; ``alpha``: the level of each threshold's
    interval (1 - alpha, simultaneous over the M members; the caller divides alpha over thresholds
    when it reads several at once); ``seed``: the stream of the tie-breaking uniforms (one draw of
    them, shared by every threshold). Returns one :class:`SplitGap` per threshold."""
    v = _verdicts(x)
    n, M, k = v.shape
    alpha = check_alpha(alpha)
    t = check_taus(taus, "taus")
    if n < 2:
        raise ValueError(f"the split-draw gap needs at least 2 prompts, got n = {n}")
    names = list(model_names) if model_names is not None else (
        list(x.policy_names) if hasattr(x, "policy_names") else [f"m{j}" for j in range(M)])
    ka, kb = split_halves(k)
    ca, cb = split_draw_counts(v)
    rng = as_rng(seed)
    ua, ub = rng.random((n, M)), rng.random((n, M))
    q = float(sps.t.ppf(1 - alpha / (2 * M), n + 1))
    out = []
    for tau in t.tolist():
        d, chosen, fixed = _differences(ca, cb, ka, kb, tau, ua, ub)
        mean, sd = _adjusted_moments(d)
        half = q * sd / np.sqrt(n + 2)
        lo_m, hi_m = mean - half, mean + half
        fm = fixed.mean(axis=0)
        b = int(np.argmax(fm))
        est = float(chosen.mean() - fm[b])
        lo = max(-1.0, float(lo_m.min()))
        limits = zip(mean.tolist(), lo_m.tolist(), hi_m.tolist(), strict=True)
        members = tuple(Interval.of(m_, l_, h_, 1 - alpha / M, "Student, adjusted moments")
                        for m_, l_, h_ in limits)
        out.append(SplitGap(value=est, lo=lo, hi=min(1.0, float(hi_m.min())), level=1 - alpha,
                            method="split-draw, Student, Bonferroni over members", tau=float(tau),
                            chosen=float(chosen.mean()), best=float(fm[b]), best_member=str(names[b]),
                            certified=bool(lo > 0), n=n, k_a=ka, k_b=kb, need_a=need(tau, ka),
                            need_b=need(tau, kb), members=members, member_sd=tuple(sd.tolist())))
    return tuple(out)


def _binom_pmf(p: np.ndarray, k: int) -> np.ndarray:
    """P(Bin(k, p) = a) for a = 0..k, shape p.shape + (k + 1,)."""
    a = np.arange(k + 1)
    return sps.binom.pmf(a, k, np.asarray(p, dtype=float)[..., None])


def _choice_probabilities(p: np.ndarray, k: int) -> np.ndarray:
    """P(member m has the most of k independent Bernoulli(p_im) successes, ties broken uniformly
    at random), [n, M]: sum_a P(c_m = a) E[1{c_j <= a for all j != m} / (1 + #{j != m: c_j = a})],
    the expectation an integral over t in [0, 1] of prod_{j != m} (P(c_j < a) + P(c_j = a) t),
    a polynomial of degree M - 1 that Gauss-Legendre quadrature with ceil(M / 2) + 1 nodes
    integrates exactly."""
    n, M = p.shape
    f = _binom_pmf(p, k)  # [n, M, k+1]
    below = np.cumsum(f, axis=2) - f  # P(c < a)
    nodes, weights = np.polynomial.legendre.leggauss(M // 2 + 2)
    tt, ww = (nodes + 1) / 2, weights / 2
    terms = below[..., None] + f[..., None] * tt  # [n, M, k+1, Q]
    out = np.empty((n, M))
    for m in range(M):
        others = np.prod(np.delete(terms, m, axis=1), axis=1)  # [n, k+1, Q]
        out[:, m] = (f[:, m, :] * (others @ ww)).sum(axis=1)
    return out


def split_draw_population(p, k: int, taus=DEFAULT_TAUS) -> np.ndarray:
    """G_split(tau) of a pool whose draws are independent Bernoulli(p_im), averaged over its
    prompts: the value :func:`split_draw_gap` estimates, computed exactly from the rates ``p``
    [n, M] (n prompts, M members) with k draws per cell. Returns one value per threshold."""
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(f"p must be rates [n, M] with M >= 2, got shape {p.shape}")
    if not ((p >= 0) & (p <= 1)).all():
        raise ValueError("p must hold rates in [0, 1]")
    ka, kb = split_halves(k)
    t = check_taus(taus, "taus")
    wa, wb = _choice_probabilities(p, ka), _choice_probabilities(p, kb)
    fa, fb = _binom_pmf(p, ka), _binom_pmf(p, kb)
    out = []
    for tau in t.tolist():
        na, nb = need(tau, ka), need(tau, kb)
        za, zb = fa[..., na:].sum(axis=2), fb[..., nb:].sum(axis=2)  # P(covered) per half, [n, M]
        chosen = ((wa * zb).sum(axis=1) + (wb * za).sum(axis=1)) / 2
        fixed = (za + zb) / 2
        out.append(float(chosen.mean() - fixed.mean(axis=0).max()))
    return np.array(out)
