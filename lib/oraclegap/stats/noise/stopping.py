"""Sequential sizes for the noise section's Monte Carlo: the prompt bootstraps of the intervals stop
once the decision one interval limit feeds is settled (:class:`LimitStop`), and the within-cell
permutations of paper 001's assumption checks once every check's pass or fail is settled
(:class:`PValueStop`).

**Interval limits** (:class:`LimitStop`). A percentile limit is the p-quantile of the bootstrap
replicates T* of a series (p = alpha / 2 for a lower limit, 1 - alpha / 2 for an upper one). With
unboundedly many resamples the limit is at or above the threshold c exactly when pi = P*(T* < c) <
p, pi the conditional probability, given the data, that a resample's replicate falls below c
(resamples where the series is undefined, NaN, are left out, as the limit's ``nanquantile`` leaves
them out). After B resamples with b of them below c, the one-sided Clopper-Pearson limits of pi at
level 1 - eps (eps = ``risk`` / the number of looks before the largest size) give an interval
[lo, hi] that holds at every such look with probability >= 1 - ``risk`` (Bonferroni over the looks;
resamples are independent draws given the data). The resamples stop at the first look where the
decision at hi (hi < p), the decision at lo (lo < p) and the decision of the limit computed from
the resamples taken all agree, else at the largest size, where the decision is the fixed-size
bootstrap's. So the decision reported at a stop is the one an unbounded bootstrap gives except with
probability at most ``risk``; a limit far from its threshold stops after ``step`` resamples, one
within Monte Carlo reach of it runs to the largest size. The other limits of the same bootstrap are
reported from the resamples taken (their Monte Carlo resolution, not any decision, changes).

The resamples of a stopped bootstrap are the first ones of the full-size bootstrap from the same
generator (:func:`oraclegap.stats.bootstrap.bootstrap_means` with ``looks`` and ``decided`` draws
its resamples in order), so a bootstrap that runs to the largest size gives the fixed-size numbers
bit for bit.

**Permutation p-values** (:class:`PValueStop`). Each permutation check of
:func:`oraclegap.stats.noise.checks.permutation_checks` passes when its p-value exceeds alpha. An
upper-tail p-value (1 + b) / (B + 1), b of the B permuted statistics at or above the observed t,
estimates pi = P(T* >= t | data), and with unboundedly many permutations the check passes exactly
when pi > alpha. The permutations are drawn in looks of ``step``; at each look before the largest
size, every check whose decision depends on its p-value must be settled: the one-sided
Clopper-Pearson limits of its pi at level 1 - eps each (eps = ``risk`` / the looks before the
largest size) lie on the side of alpha that its p-value from the permutations taken lies on. The
permutations stop at the first look where every such check is settled, else at the largest size,
where every check is the fixed-size one. So each check's decision at a stop is the one of
unboundedly many permutations except with probability at most ``risk`` (per check, as the nulls'
:class:`~oraclegap.stats.nulls.sequential.SequentialStop` counts it). A check whose decision does
not depend on its p-value (untested, or failed whatever the p-value) does not hold the permutations.

The coupling check's p-value is two-sided about the mean of the permutations taken: it estimates
pi_2 = P(|T* - mu| >= |t - mu|) with mu the permutation law's mean, which the permutations only
estimate. Whatever mu is, that event contains {T* <= t} when t <= mu and {T* >= t} when t >= mu,
so pi_2 >= min(pi_le, pi_ge), the one-sided probabilities P(T* <= t) and P(T* >= t), each a plain
binomial proportion of the permutations with no centre in it. A two-sided pass is settled when the
lower Clopper-Pearson limits of both pi_le and pi_ge exceed alpha (and the p-value of the
permutations taken does): pi_2 <= alpha forces one of the two (the one the data fix, not the draws)
to be at most alpha, so the stop errs only where that limit misses, with probability at most eps a
look. A two-sided p-value at or below alpha is never settled before the largest size: an upper
bound on pi_2 would need a bound on mu, and the only distribution-free one (the statistic's range,
the Frechet bracket of the union rate, with Hoeffding's inequality) is far wider than the
statistic's spread under the permutations.

The step: with the audit's 199 permutations, ``risk`` 0.01 and :data:`PERMUTATION_STEP` = 20
there are 9 looks before the last (eps = 0.0011), and the first look settles an upper-tail pass
once 3 of its 20 permuted statistics reach the observed one (the lower limit of pi at 3 of 20 is
0.0104 > 0.01; at 2 of 20 it is 0.0025): an upper-tail check with pi >= 0.25 is settled there with
probability >= 0.91, a two-sided one when 3 of the 20 lie on either side of t. A failed check is never settled within 199 permutations (with none of B reaching t the
upper limit 1 - eps^(1/B) falls below 0.01 only from B = 677), so a failure is always the fixed-size
check's. The permutations of a stopped run are the first of the full-size run's: the permutation
stream is counter-based (permutation b is the same in any block), so a run that goes to the largest
size gives the fixed-size checks bit for bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.stats import beta

from ..._validate import check_alpha, check_int, check_prob

__all__ = ["LimitStop", "PValueStop", "DEFAULT_STEP", "DEFAULT_RISK", "PERMUTATION_STEP"]

#: Resamples per look.
DEFAULT_STEP = 100
#: Probability, over all looks, that a stopped bootstrap's decision differs from the unbounded one
#: (a stopped check's, for :class:`PValueStop`).
DEFAULT_RISK = 0.01
#: Permutations per look of :class:`PValueStop` (module docstring: the first look settles a clear
#: pass at alpha = 0.01).
PERMUTATION_STEP = 20
_SIDES = ("lo", "hi")


class _Looks:
    """What the sequential rules share: their ``risk`` and ``step`` fields checked, the Monte
    Carlo sizes at which they look and the one-sided error of each look's limits."""

    risk: float
    step: int

    def _check_risk_and_step(self) -> None:
        object.__setattr__(
            self, "risk", float(check_prob(self.risk, "risk", open_low=True, open_high=True))
        )
        object.__setattr__(self, "step", check_int(self.step, "step", minimum=1))

    def looks(self, n_max: int) -> list[int]:
        """The Monte Carlo sizes (resamples or permutations) at which the rule is checked: step,
        2 step, ... and ``n_max`` last (no check there: the largest size is the fixed-size
        computation)."""
        n_max = check_int(n_max, "n_max", minimum=1)
        return list(range(self.step, n_max, self.step)) + [n_max]

    def eps(self, n_max: int) -> float:
        """The one-sided error of each look's limits: ``risk`` / (looks before the last)."""
        return self.risk / max(1, len(self.looks(n_max)) - 1)


def _clopper_pearson(b: int, B: int, eps: float) -> tuple[float, float]:
    """The one-sided Clopper-Pearson limits, at level 1 - eps each, of a probability seen b times in
    B independent draws (B >= 1): the eps-quantile of Beta(b, B - b + 1) (0 at b = 0) and the
    (1 - eps)-quantile of Beta(b + 1, B - b) (1 at b = B)."""
    lo = float(beta.ppf(eps, b, B - b + 1)) if b > 0 else 0.0
    hi = float(beta.ppf(1 - eps, b + 1, B - b)) if b < B else 1.0
    return lo, hi


@dataclasses.dataclass(frozen=True)
class LimitStop(_Looks):
    """When to stop a prompt bootstrap: the decision is "the ``side`` limit (``"lo"`` or ``"hi"``)
    of the interval of ``quantity`` is at or above ``threshold``"; ``risk`` is the chance over all
    looks that the decision at the stop differs from the one of unboundedly many resamples and
    ``step`` the resamples per look (module docstring)."""

    quantity: str
    side: str
    threshold: float
    risk: float = DEFAULT_RISK
    step: int = DEFAULT_STEP

    def __post_init__(self):
        if not isinstance(self.quantity, str) or not self.quantity:
            raise ValueError(f"quantity must name an estimate, got {self.quantity!r}")
        if self.side not in _SIDES:
            raise ValueError(f"side must be one of {_SIDES}, got {self.side!r}")
        t = float(self.threshold)
        if not np.isfinite(t):
            raise ValueError(f"threshold must be a finite number, got {self.threshold!r}")
        object.__setattr__(self, "threshold", t)
        self._check_risk_and_step()

    def prob(self, level: float) -> float:
        """The quantile p of the bootstrap replicates that forms the limit: alpha / 2 for the
        lower limit of a two-sided interval at ``level``, 1 - alpha / 2 for the upper one."""
        a = check_alpha(1 - float(level), "1 - level")
        return a / 2 if self.side == "lo" else 1 - a / 2

    def limits(self, replicates, n_max: int) -> tuple[float, float, int, int]:
        """(lo, hi, b, B): the Clopper-Pearson limits at level 1 - eps each of pi = P*(T* <
        threshold) from the defined (non-NaN) ``replicates`` so far, b of the B below the
        threshold."""
        t = np.asarray(replicates, dtype=float).ravel()
        t = t[~np.isnan(t)]
        B = int(t.size)
        b = int((t < self.threshold).sum())
        if B == 0:
            return 0.0, 1.0, 0, 0
        lo, hi = _clopper_pearson(b, B, self.eps(n_max))
        return lo, hi, b, B

    def decided(self, replicates, limit: float, level: float, n_max: int) -> bool:
        """Whether the decision "limit >= threshold" is settled at this look: ``replicates`` are
        the bootstrap replicates of the series whose quantile is the limit, ``limit`` the limit
        reported from them (NaN: undecided)."""
        limit = float(limit)
        if np.isnan(limit):
            return False
        lo, hi, _, B = self.limits(replicates, n_max)
        if B == 0:
            return False
        p = self.prob(level)
        empirical = limit >= self.threshold
        return (hi < p) == empirical and (lo < p) == empirical

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)



@dataclasses.dataclass(frozen=True)
class PValueStop(_Looks):
    """When to stop the within-cell permutations of paper 001's assumption checks: each check's
    decision is "p > alpha" (its own alpha); ``risk`` is the chance over all looks that a check's
    decision at the stop differs from the one of unboundedly many permutations and ``step`` the
    permutations per look (module docstring)."""

    risk: float = DEFAULT_RISK
    step: int = PERMUTATION_STEP

    def __post_init__(self):
        self._check_risk_and_step()

    def limits(self, b: int, B: int, n_max: int) -> tuple[float, float]:
        """(lo, hi): the Clopper-Pearson limits at level 1 - eps each of an exceedance probability
        that b of B permutations showed."""
        b, B = check_int(b, "b", minimum=0), check_int(B, "B", minimum=1)
        if b > B:
            raise ValueError(f"b={b} exceedances cannot come from B={B} permutations")
        return _clopper_pearson(b, B, self.eps(n_max))

    def settled(self, b: int, B: int, alpha: float, n_max: int) -> bool:
        """Whether an upper-tail check's decision is settled at this look: b of the B permuted
        statistics reach the observed one, the p-value is (1 + b) / (B + 1), and both limits of
        pi lie on its side of ``alpha``."""
        alpha = check_alpha(alpha, "alpha")
        lo, hi = self.limits(b, B, n_max)
        passes = (1 + b) / (B + 1) > alpha
        return (lo > alpha) == passes and (hi > alpha) == passes

    def settled_two_sided(self, b_le: int, b_ge: int, p: float, B: int, alpha: float,
                          n_max: int) -> bool:
        """Whether a two-sided check's pass is settled at this look: ``p`` (its two-sided p-value
        from the B permutations taken) exceeds ``alpha`` and the lower limits of both one-sided
        probabilities, P(T* <= t) seen b_le times and P(T* >= t) seen b_ge times, exceed it too
        (their smaller bounds the two-sided pi from below, module docstring). A failure is never
        settled before the largest size."""
        alpha = check_alpha(alpha, "alpha")
        if not float(p) > alpha:
            return False
        return all(self.limits(b, B, n_max)[0] > alpha for b in (b_le, b_ge))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)
