"""Sequential Monte Carlo stopping for the nulls' p-values: null draws are taken in looks of
``step`` draws and stop once the decisions the p-values feed are settled (:class:`SequentialStop`).

A Monte Carlo p-value estimates pi = P(T* >= t | data), the conditional upper-tail probability of
the observed statistic t under the null. After B draws with b of them >= t, the one-sided
Clopper-Pearson limits of pi at level 1 - eps (eps = ``risk`` / the number of looks before the
largest size) give an interval [lo, hi] that holds at every such look with probability
>= 1 - ``risk`` (Bonferroni over looks). The decision is Holm's step-down procedure at level
``alpha`` over a family of tests (one test: "reject when p <= alpha"). Holm's rejections only grow
as p-values shrink, so while every pi lies in its interval, the rejections at the true pi's lie
between Holm's at the upper limits and Holm's at the lower limits. The draws stop at the first
look where those two sets and Holm's at the plus-one p-values (1 + b) / (1 + B) are the same, else
at the largest size allowed. So:

* the rejections taken at the stop are the ones the pi's give (the ones an unbounded number of
  draws would give) except with probability at most ``risk``; a family whose p-values are far
  from the levels Holm compares them with stops after ``step`` draws, one with a p-value near its
  level runs to the largest size, where it is the fixed-size Monte Carlo test;
* the p-values reported are the plus-one p-values of the draws taken; on the null (pi uniform) a
  test rejects early only when its interval lies below its level, so its level exceeds the
  fixed-size test's by at most ``risk`` times the chance that pi falls within the interval's reach
  of that level (Besag and Clifford 1991 and Gandy 2009 give sequential Monte Carlo tests of this
  kind).

A statistic far above its null draws is settled sooner by its moments: Cantelli's one-sided
Chebyshev inequality P(T* - mu >= t - mu) <= sigma^2 / (sigma^2 + (t - mu)^2), with the mean and
standard deviation of the null draws replaced by their upper limits at level 1 - eps each (the
standard deviation's is the normal-theory chi-square limit), bounds pi without any assumption on
the shape of the null law; the smaller of the two upper limits is used, which adds at most twice
``risk`` to the chance above.

Draws of a Markov chain are dependent: with ``ess`` (the effective sample size of the draws) the
counts are scaled by ess / B before the interval is formed, so the interval is as wide as that of
``ess`` independent draws.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.stats import beta

from ..._validate import check_int, check_prob
from ..multiplicity import holm
from .results import _TOL  # a draw within _TOL of the observed value reaches it, as NullTest counts

__all__ = ["SequentialStop", "holm_rejects", "DEFAULT_STEP", "DEFAULT_RISK"]

#: Draws per look.
DEFAULT_STEP = 100
#: Probability, over all looks, that a stopped test is decided against pi (per test).
DEFAULT_RISK = 0.01


@dataclasses.dataclass(frozen=True)
class SequentialStop:
    """When to stop drawing from a null: the tests' decisions are Holm's step-down rejections at
    level ``alpha`` over the family of distinct tests (one test: p <= alpha); ``risk`` is the chance
    over all looks that the rejections at the stop differ from those of the conditional p-values,
    ``step`` the draws per look and ``statistics`` the statistics whose tests form the family (the
    others share the draws and get the p-values of the draws taken)."""

    alpha: float
    risk: float = DEFAULT_RISK
    step: int = DEFAULT_STEP
    statistics: tuple = ("L",)

    def __post_init__(self):
        object.__setattr__(
            self, "alpha", float(check_prob(self.alpha, "alpha", open_low=True, open_high=True))
        )
        object.__setattr__(
            self, "risk", float(check_prob(self.risk, "risk", open_low=True, open_high=True))
        )
        object.__setattr__(self, "step", check_int(self.step, "step", minimum=1))
        st = (self.statistics,) if isinstance(self.statistics, str) else tuple(self.statistics)
        if not st or not all(isinstance(x, str) for x in st):
            raise ValueError(
                f"statistics must name at least one statistic, got {self.statistics!r}"
            )
        object.__setattr__(self, "statistics", st)

    def looks(self, n_max: int) -> list[int]:
        """The draw counts at which the rule is checked: step, 2 step, ... and ``n_max`` last."""
        n_max = check_int(n_max, "n_max", minimum=1)
        return list(range(self.step, n_max, self.step)) + [n_max]

    def eps(self, n_max: int) -> float:
        """The one-sided error of each look's interval: ``risk`` / (looks before the last)."""
        return self.risk / max(1, len(self.looks(n_max)) - 1)

    def limits(
        self, draws, observed, n_max: int, ess=None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi, p): the limits of each test's pi at this look and its plus-one p-value, for
        ``draws`` [B, T] (the null draws so far of T tests), ``observed`` [T], ``n_max`` the most
        draws allowed and ``ess`` [T] the draws' effective sample sizes (None: B)."""
        d = np.asarray(draws, dtype=float)
        if d.ndim == 1:
            d = d[:, None]
        obs = np.atleast_1d(np.asarray(observed, dtype=float))
        if d.ndim != 2 or d.shape[0] < 1 or d.shape[1] != obs.size:
            raise ValueError(
                f"draws must be [B, T] with T = {obs.size} observed values, got shape {d.shape}"
            )
        n = d.shape[0]
        b = (d >= obs - _TOL).sum(axis=0).astype(float)
        r = (
            np.ones_like(b)
            if ess is None
            else np.clip(np.atleast_1d(np.asarray(ess, dtype=float)) / n, 1e-9, 1.0)
        )
        eps = self.eps(n_max)
        be, ne = b * r, n * r
        with np.errstate(invalid="ignore", divide="ignore"):
            lo = np.where(be > 0, beta.ppf(eps, np.maximum(be, 1e-12), ne - be + 1), 0.0)
            hi = np.where(be < ne, beta.ppf(1 - eps, be + 1, np.maximum(ne - be, 1e-12)), 1.0)
            hi = np.minimum(hi, _cantelli_upper(d, obs, ne, eps))
        return lo, hi, (1 + b) / (1 + n)

    def decided(self, draws, observed, n_max: int, ess=None) -> bool:
        """Whether Holm's rejections are settled at this look (see the module docstring)."""
        lo, hi, p = self.limits(draws, observed, n_max, ess)
        rej = holm_rejects(p, self.alpha)
        return bool(
            np.array_equal(holm_rejects(hi, self.alpha), rej)
            and np.array_equal(holm_rejects(lo, self.alpha), rej)
        )


def holm_rejects(p, alpha: float) -> np.ndarray:
    """Holm's step-down rejections at level ``alpha`` (:func:`oraclegap.stats.multiplicity.holm`:
    the adjusted p-value <= alpha), as the audit takes them."""
    return holm(np.clip(np.atleast_1d(np.asarray(p, dtype=float)), 0.0, 1.0)) <= alpha


def _cantelli_upper(d: np.ndarray, obs: np.ndarray, n_eff: np.ndarray, eps: float) -> np.ndarray:
    """An upper limit of pi = P(T* >= t) from the draws' moments: Cantelli's inequality
    P(T* - mu >= t - mu) <= sigma^2 / (sigma^2 + (t - mu)^2) for t > mu, with mu and sigma replaced
    by their upper limits at level 1 - eps from ``n_eff`` draws (mean + z sd / sqrt(n_eff); the
    chi-square limit of the sd). 1 where t is not above that limit of mu or fewer than 10
    effective draws were taken."""
    from scipy.stats import chi2, norm

    n = d.shape[0]
    out = np.ones(obs.size)
    if n < 2:
        return out
    mu, sd = d.mean(axis=0), d.std(axis=0, ddof=1)
    ok = n_eff >= 10
    ne = np.maximum(n_eff, 2.0)
    mu_up = mu + norm.isf(eps) * sd / np.sqrt(ne)
    sd_up = sd * np.sqrt((ne - 1) / chi2.ppf(eps, ne - 1))
    gap = obs - mu_up
    bound = sd_up**2 / (sd_up**2 + np.maximum(gap, 0.0) ** 2)
    return np.where(ok & (gap > 0), bound, out)
