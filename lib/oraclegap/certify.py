"""Exact and selection-valid inference for oracle gaps (arXiv 2609.32996 App. B.1; paper 002).

This first version holds the Clopper-Pearson interval every certificate builds on.
"""

from __future__ import annotations

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from ._validate import check_alpha, check_int

__all__ = ["clopper_pearson", "clopper_pearson_upper"]


def clopper_pearson(successes, n, alpha: float = 0.05):
    """Two-sided exact (Clopper-Pearson) interval with coverage >= 1 - alpha for a binomial rate.

    Vectorised over ``successes``/``n``; returns ``(lo, hi)`` as floats or arrays.
    """
    alpha = check_alpha(alpha)
    s = np.asarray(successes)
    nn = np.asarray(n)
    if not (np.issubdtype(s.dtype, np.integer) or np.all(s == np.round(s))):
        raise ValueError(f"successes must be whole numbers, got {successes!r}")
    if np.any(nn < 1):
        raise ValueError(f"n must be >= 1, got {n!r}")
    if np.any(s < 0) or np.any(s > nn):
        raise ValueError(f"successes must lie in [0, n]; got successes={successes!r}, n={n!r}")
    lo, hi = proportion_confint(s, nn, alpha=alpha, method="beta")
    lo = np.where(s == 0, 0.0, lo)
    hi = np.where(s == nn, 1.0, hi)
    if lo.ndim == 0:
        return float(lo), float(hi)
    return lo, hi


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
