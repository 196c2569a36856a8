"""Small input checks shared by every module: each raises with the argument's name and what was expected."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

__all__ = [
    "check_tau",
    "check_taus",
    "check_int",
    "check_prob",
    "check_alpha",
    "as_rng",
    "as_bool_array",
    "as_counts_array",
]


def check_tau(tau, name: str = "tau") -> float:
    """Return ``tau`` as a float in (0, 1] or raise ``ValueError``."""
    try:
        t = float(tau)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number in (0, 1], got {tau!r}") from None
    if not (0.0 < t <= 1.0) or math.isnan(t):
        raise ValueError(f"{name} must lie in (0, 1], got {tau!r}")
    return t


def check_taus(taus, name: str = "taus") -> np.ndarray:
    """Return a 1-d float array of thresholds, each in (0, 1]."""
    if isinstance(taus, str):
        try:
            taus = [float(t) for t in taus.split(",") if t.strip()]
        except ValueError:
            raise ValueError(f"{name} must be comma-separated numbers in (0, 1], got {taus!r}") from None
    arr = np.atleast_1d(np.asarray(taus, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d list of thresholds in (0, 1], got shape {arr.shape}")
    bad = ~((arr > 0) & (arr <= 1))
    if bad.any():
        raise ValueError(f"{name} must lie in (0, 1]; got {arr[bad].tolist()}")
    return arr


def check_int(value, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int within [minimum, maximum] or raise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_prob(value, name: str, open_low: bool = False, open_high: bool = False) -> float:
    """Return ``value`` as a float probability in [0, 1] (ends optionally open)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number in [0, 1], got {value!r}") from None
    lo_ok = v > 0 if open_low else v >= 0
    hi_ok = v < 1 if open_high else v <= 1
    if not (lo_ok and hi_ok) or math.isnan(v):
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}, got {value!r}")
    return v


def check_alpha(alpha, name: str = "alpha") -> float:
    """Return a significance level in (0, 1)."""
    return check_prob(alpha, name, open_low=True, open_high=True)


def as_rng(seed) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a seed, a Generator (returned as is) or None."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.default_rng(seed)
    if isinstance(seed, Iterable):
        return np.random.default_rng(list(seed))
    raise TypeError(f"seed must be an int, a numpy Generator or None, got {type(seed).__name__}")


def as_bool_array(x, name: str, ndim: int | None = None) -> np.ndarray:
    """Convert 0/1 or boolean data to a bool array; reject NaN and values other than 0 and 1."""
    arr = np.asarray(x)
    if arr.dtype == object:
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold only 0/1 or True/False values") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got {arr.ndim} (shape {arr.shape})")
    if arr.dtype == bool:
        return arr
    if not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must be numeric or boolean, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating) and np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN; every verdict must be 0 or 1")
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        vals = np.unique(arr[bad])[:5].tolist()
        raise ValueError(f"{name} must be binary (0/1 or bool); found other values such as {vals}")
    return arr.astype(bool)


def as_counts_array(counts, k: int, name: str = "counts", ndim: int = 2) -> np.ndarray:
    """Validate integer success counts in [0, k]; return an int64 array."""
    arr = np.asarray(counts)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got {arr.ndim} (shape {arr.shape})")
    if np.issubdtype(arr.dtype, np.floating):
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN; counts must be integers in [0, k]")
        if not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must hold whole numbers")
    elif not np.issubdtype(arr.dtype, np.integer) and arr.dtype != bool:
        raise ValueError(f"{name} must be an integer array, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() > k):
        raise ValueError(f"{name} must lie in [0, k={k}]; found min {arr.min()} and max {arr.max()}")
    return arr


def check_margin_counts(model_counts, oracle_count, n) -> tuple[np.ndarray, int, int]:
    """Validate published margins: K per-model correct counts, the oracle's count and n items
    (integers with max(c) <= oracle <= min(n, sum(c))); return (counts int64, oracle, n)."""
    n = check_int(n, "n", minimum=1)
    c = np.asarray(model_counts)
    if c.ndim != 1:
        raise ValueError(f"model_counts must be a 1-d sequence of K per-model correct counts, got shape {c.shape}")
    if c.size == 0:
        raise ValueError("model_counts is empty (K=0); at least one model is needed")
    if c.dtype == bool or not (np.issubdtype(c.dtype, np.integer) or np.issubdtype(c.dtype, np.floating)):
        raise TypeError(f"model_counts must hold integers, got dtype {c.dtype}")
    if np.issubdtype(c.dtype, np.floating):
        if np.isnan(c).any() or not np.all(c == np.round(c)):
            raise ValueError(f"model_counts must hold whole numbers, got {c.tolist()}")
    c = c.astype(np.int64)
    if (c < 0).any():
        raise ValueError(f"model_counts must be >= 0, got {c.tolist()}")
    if (c > n).any():
        raise ValueError(f"model_counts must be <= n={n}, got {c.tolist()}")
    o = check_int(oracle_count, "oracle_count", minimum=0, maximum=n)
    if o < c.max():
        raise ValueError(
            f"oracle_count={o} is below the best model's count {int(c.max())}; the oracle solves every item any model solves"
        )
    if o > c.sum():
        raise ValueError(f"oracle_count={o} exceeds the sum of the model counts {int(c.sum())}; no arrangement is possible")
    return c, o, n
