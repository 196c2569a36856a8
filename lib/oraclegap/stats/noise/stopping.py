"""Sequential sizes for the noise intervals' prompt bootstraps: resamples are drawn in looks and
stop once the decision one interval limit feeds (the limit at or above a threshold) is settled
(:class:`LimitStop`).

A percentile limit is the p-quantile of the bootstrap replicates T* of a series (p = alpha / 2 for
a lower limit, 1 - alpha / 2 for an upper one). With unboundedly many resamples the limit is at
or above the threshold c exactly when pi = P*(T* < c) < p, pi the conditional probability, given
the data, that a resample's replicate falls below c (resamples where the series is undefined, NaN,
are left out, as the limit's ``nanquantile`` leaves them out). After B resamples with b of them
below c, the one-sided Clopper-Pearson limits of pi at level 1 - eps (eps = ``risk`` / the number
of looks before the largest size) give an interval [lo, hi] that holds at every such look with
probability >= 1 - ``risk`` (Bonferroni over the looks; resamples are independent draws given the
data). The resamples stop at the first look where the decision at hi (hi < p), the decision at
lo (lo < p) and the decision of the limit computed from the resamples taken all agree, else at
the largest size, where the decision is the fixed-size bootstrap's. So the decision reported at a
stop is the one an unbounded bootstrap gives except with probability at most ``risk``; a limit far
from its threshold stops after ``step`` resamples, one within Monte Carlo reach of it runs to the
largest size. The other limits of the same bootstrap are reported from the resamples taken (their
Monte Carlo resolution, not any decision, changes).

The resamples of a stopped bootstrap are the first ones of the full-size bootstrap from the same
generator (:func:`oraclegap.stats.bootstrap.bootstrap_means` with ``looks`` and ``decided`` draws
its resamples in order), so a bootstrap that runs to the largest size gives the fixed-size numbers
bit for bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.stats import beta

from ..._validate import check_alpha, check_int, check_prob

__all__ = ["LimitStop", "DEFAULT_STEP", "DEFAULT_RISK"]

#: Resamples per look.
DEFAULT_STEP = 100
#: Probability, over all looks, that a stopped bootstrap's decision differs from the unbounded one.
DEFAULT_RISK = 0.01
_SIDES = ("lo", "hi")


@dataclasses.dataclass(frozen=True)
class LimitStop:
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
        object.__setattr__(
            self, "risk", float(check_prob(self.risk, "risk", open_low=True, open_high=True))
        )
        object.__setattr__(self, "step", check_int(self.step, "step", minimum=1))

    def looks(self, n_max: int) -> list[int]:
        """The resample counts at which the rule is checked: step, 2 step, ... and ``n_max``
        last (no check there: the largest size is the fixed-size bootstrap)."""
        n_max = check_int(n_max, "n_max", minimum=1)
        return list(range(self.step, n_max, self.step)) + [n_max]

    def eps(self, n_max: int) -> float:
        """The one-sided error of each look's interval: ``risk`` / (looks before the last)."""
        return self.risk / max(1, len(self.looks(n_max)) - 1)

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
        eps = self.eps(n_max)
        lo = float(beta.ppf(eps, b, B - b + 1)) if b > 0 else 0.0
        hi = float(beta.ppf(1 - eps, b + 1, B - b)) if b < B else 1.0
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

