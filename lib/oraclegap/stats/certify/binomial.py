"""Exact binomial limits for the certificates: the two-sided Clopper-Pearson interval
(:func:`clopper_pearson`), the one-sided upper bound (:func:`clopper_pearson_upper`), and their
vectorised form for simulations and count arrays, evaluated once per distinct count (the same floats
as the elementwise call).
"""

from __future__ import annotations

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from ..._validate import check_alpha, check_int


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

