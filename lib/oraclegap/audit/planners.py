"""The audit's planners: the useful effect the power planner simulates (:func:`useful_effect` on
the centres of :func:`effect_centres`) and the prompts a certificate would need at the observed
rates (:func:`certificate_prompts`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .._result import Interval, Result
from .._validate import as_rng, check_int, check_prob
from ..pool import Pool
from ..stats import certify
from ..stats.coverage import coverage_from_rates
from .settings import K1_PLAN


def _prompt_means(pool: Pool) -> np.ndarray:
    """Pooled success rate of every prompt, sum_m c_im / (M k)."""
    return pool.counts().sum(axis=1) / (pool.n_policies * pool.k)


def effect_centres(pool: Pool) -> np.ndarray:
    """The prompt rates the useful effect perturbs: each prompt's pooled success rate clipped to
    [1/(2 M k), 1 - 1/(2 M k)] with this pool's M and k (arXiv 2609.32996, Table 2).

    :func:`useful_effect` calibrates sigma on these centres and the power planner simulates every
    design from them, so a plan over k holds one population fixed: clipping with the *planned* k
    instead would move prompts with no observed success towards rate 0 as k grows, and the
    planned designs would face a smaller effect than the one calibrated (on a pool with k = 2,
    less than half of it at k = 64). At k = 1 the pooled rates are multiples of 1/M and the
    clip 1/(2 M) is as coarse as a threshold (with M = 5 it *is* tau = 0.10, so an infinitesimal
    perturbation would count as a gap); there the clip uses the smallest planned k,
    min(:data:`K1_PLAN`): every planned design's own clip (1/(2 M k'), k' >= that k) then leaves
    the centres unchanged, so the population is again the same at every planned k.
    """
    n, M, k = pool.shape
    k_clip = min(K1_PLAN) if k == 1 else k
    eps = 1.0 / (2 * M * k_clip)
    return np.clip(_prompt_means(pool), eps, 1 - eps)


@dataclasses.dataclass(frozen=True, repr=False)
class EffectSize(Result):
    """A diffuse alternative calibrated to a target population gap (for the power planner).

    ``sigma``: the log-odds standard deviation of arXiv 2609.32996's diffuse alternative
    (Table 2) centred on this pool's prompt means; ``calibrated_L``: its population oracle gap
    L(tau) on the calibration draws; ``reachable``: whether the target was reached on the grid.
    """

    tau: float
    target_L: float
    sigma: float
    calibrated_L: float
    reachable: bool

    def frame(self) -> pd.DataFrame:
        """One row: the fields."""
        return pd.DataFrame([self.to_dict()])


def useful_effect(pool: Pool, tau: float, target_L: float = 0.05, *, seed=0, n_rep: int = 8,
                  sigmas=None) -> EffectSize:
    """The smallest diffuse perturbation whose population gap reaches ``target_L`` at ``tau``.

    The diffuse alternative (2609.32996 Table 2, App. C.2): logit p_im = logit q_i + sigma z_im
    with q_i the pool's pooled prompt rates clipped to [1/(2 M k), 1 - 1/(2 M k)] and z_im
    standard normal. For each sigma on the grid (default 0 to 4 in steps of 0.05) the population
    gap L(tau) = P[max_m p_im >= tau] - max_m P[p_im >= tau] is averaged over ``n_rep`` draws of z
    (the same draws for every sigma); the first sigma whose mean reaches ``target_L`` is
    returned (``reachable=False`` and the largest sigma when none does).
    """
    target_L = check_prob(target_L, "target_L", open_low=True, open_high=True)
    n_rep = check_int(n_rep, "n_rep", minimum=1)
    rng = as_rng(seed)
    n, M, k = pool.shape
    q = effect_centres(pool)
    lq = np.log(q / (1 - q))
    grid = np.round(np.arange(0.0, 4.0001, 0.05), 4) if sigmas is None else np.asarray(sigmas, dtype=float)
    z = rng.standard_normal((n_rep, n, M))
    Ls = np.full(grid.size, -np.inf)
    for j, s in enumerate(grid):  # one draw of z at a time: the same rates as all at once, 1/n_rep the memory
        Ls[j] = np.mean([coverage_from_rates(1.0 / (1.0 + np.exp(-(lq[:, None] + s * z[r]))), [tau]).L[0]
                         for r in range(n_rep)])
        if Ls[j] >= target_L:  # the first sigma reaching the target is the answer: the rest of the grid is not needed
            break
    hit = np.flatnonzero(Ls >= target_L)
    j = int(hit[0]) if hit.size else int(Ls.argmax())
    return EffectSize(float(tau), float(target_L), float(grid[j]), float(Ls[j]), bool(hit.size))


# ============================================================================ certificate planner
@dataclasses.dataclass(frozen=True, repr=False)
class CertificatePlan(Result):
    """Prompts the paired certificate would need to clear ``target`` if the observed rates held
    (a projection, not a power calculation)."""

    _repr_fields = ("n_needed", "factor", "certified_now", "target", "now", "n_now", "max_factor")

    target: float
    now: Interval  # the certified quantity's estimate with its interval on the n_now prompts
    n_now: int
    certified_now: bool  # now.lo > target
    n_needed: int | None  # None: not reached within the largest factor, or the plug-in gap is <= target
    factor: int | None
    max_factor: int

    def to_dict(self) -> dict:
        """JSON-ready: the target, the estimate now (``gap``), its lower limit (``lo``), the plan."""
        return {"target": self.target, "gap": self.now.value, "lo": self.now.lo, "n_now": self.n_now,
                "certified_now": self.certified_now, "n_needed": self.n_needed,
                "factor": self.factor, "max_factor": self.max_factor}

    def frame(self) -> pd.DataFrame:
        """One row: the fields of :meth:`to_dict`."""
        return pd.DataFrame([self.to_dict()])


def certificate_prompts(R, alpha: float, *, target: float = 0.0, factors=(2, 4, 8, 16, 32)) -> CertificatePlan:
    """Smallest multiple f * n of the prompts at which the paired selection-valid interval of the
    outcome-oracle gap (paper 002) would have a lower limit above ``target``, if the oracle's and
    every member's observed success rates held: counts o and c_m become f o and f c_m out of f n
    and :func:`oraclegap.stats.certify.selection_valid_gap` is evaluated on them. When the plug-in
    gap itself is at most ``target`` no number of prompts at these rates suffices (``n_needed``
    None)."""
    X = np.asarray(R, dtype=bool)
    n = X.shape[0]
    c = X.sum(axis=0)
    o = int(X.any(axis=1).sum())
    now = certify.selection_valid_gap(c, o, n, alpha, "paired")
    return _first_factor(lambda f: certify.selection_valid_gap(c * f, o * f, n * f, alpha, "paired").lo,
                         now, n, target, factors)


def _first_factor(lo_at, now: Interval, n: int, target: float, factors) -> CertificatePlan:
    """The plan of the smallest factor f in ``factors`` whose projected lower limit ``lo_at(f)``
    exceeds ``target``: none when the estimate ``now.value`` is at most the target (more prompts
    at these rates move the limit towards the estimate, not past it)."""
    factors = [check_int(f, "factors", minimum=2) for f in factors]
    top = int(max(factors))
    now = Interval.of(now.value, now.lo, now.hi, now.level, now.method)
    if now.lo > target:
        return CertificatePlan(float(target), now, n, True, n, 1, top)
    if now.value > target:
        for f in factors:
            if lo_at(f) > target:
                return CertificatePlan(float(target), now, n, False, n * f, f, top)
    return CertificatePlan(float(target), now, n, False, None, None, top)




def split_certificate_prompts(split, alpha: float, *, target: float = 0.0,
                              factors=(2, 4, 8, 16, 32)) -> CertificatePlan:
    """Smallest multiple f * n of the prompts at which the split-draw certificate
    (:class:`oraclegap.stats.split_gap.SplitGap`) would have a lower limit above ``target`` if each
    member's mean and standard deviation of the per-prompt differences d_im held: the limit
    min_m [mean_m - t_{1 - alpha/(2M), f n + 1} sd_m / sqrt(f n + 2)] (the certificate's adjusted moments). When the estimate, min_m mean_m,
    is at most ``target`` no number of prompts suffices (``n_needed`` None): under exchangeable
    members that estimate has expectation <= 0, so the planner does not promise a positive gap."""
    from scipy import stats as sps

    mean, sd = np.array([m.value for m in split.members]), np.asarray(split.member_sd)
    n, M = int(split.n), mean.size

    def lo_at(f):
        return float((mean - sps.t.ppf(1 - alpha / (2 * M), n * f + 1) * sd / np.sqrt(n * f + 2)).min())

    return _first_factor(lo_at, split, n, target, factors)
