"""Numbers as the book prints them: decimals rounded half up, signs, p-values at their
resolution, intervals, Monte Carlo rates, small fractions and ranges.

``fmt``/``fmt_interval`` format numbers the same way everywhere (``0.113 [0.079, 0.113]``).
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from .._result import Interval


def fmt(x, digits: int = 3) -> str:
    """A number with ``digits`` decimals; integers as integers; NaN/None as an em dash."""
    if x is None:
        return "—"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    xf = float(x)
    if math.isnan(xf):
        return "—"
    if math.isinf(xf):
        return "∞" if xf > 0 else "−∞"
    out = _round_half_up(xf, digits)
    return "0." + "0" * digits if out == "-0." + "0" * digits else out


def _round_half_up(xf: float, digits: int) -> str:
    """``xf`` to ``digits`` decimals, a tie rounded away from zero after snapping to 12
    significant digits: a count share such as 21/240 = 0.0875 prints the same (0.088) whether it
    was computed as a ratio (binary 0.08749999...) or as a difference (0.08750000...2)."""
    if abs(xf) >= 1e15 or digits > 12:
        return f"{xf:.{digits}f}"
    q = Decimal(f"{xf:.12g}").quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{q:.{digits}f}"


def rounded(x, digits: int = 3):
    """``x`` rounded to ``digits`` decimals by the book's one rule, the rule of :func:`fmt`
    (half up after snapping to 12 significant digits), as a float; arrays and pandas objects
    element-wise (NaN stays NaN). Python's ``round``, ``np.round`` and pandas' ``.round`` round
    half to even, so a value compared or counted after them can disagree with the same value
    printed by :func:`fmt` (0.0625 -> 0.062 against 0.063)."""
    if hasattr(x, "map") and hasattr(x, "index"):  # a pandas Series or DataFrame
        return x.map(lambda v: rounded(v, digits))
    if isinstance(x, np.ndarray):
        return np.vectorize(lambda v: rounded(v, digits), otypes=[float])(x) if x.size else x.astype(float)
    xf = float(x)
    if not math.isfinite(xf):
        return xf
    return float(_round_half_up(xf, digits))


def fmt_signed(x, digits: int = 3) -> str:
    """Like :func:`fmt` with an explicit sign (``+0.017``); a value that rounds to zero at ``digits``
    (``-0.0004``, ``1e-17``) carries no sign: its sign is not readable at that rounding."""
    s = fmt(x, digits)
    if s.startswith(("-", "−")) or s == "—":
        return s
    if not math.isinf(float(x)) and not any(c in "123456789" for c in s):
        return s
    return "+" + s


def fmt_p(p, digits: int = 3, n_draws: int | None = None) -> str:
    """A p-value; below the resolution of ``n_draws`` randomisations it reads ``< 1/n_draws``."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "—"
    if n_draws and p < 1.0 / n_draws:
        return f"< {fmt(1.0 / n_draws, digits)}"
    if p < 10 ** (-digits):
        return f"< {10 ** (-digits):.{digits}f}"
    return fmt(p, digits)


def _parts(estimate, lo, hi) -> tuple:
    if isinstance(estimate, Interval):
        if lo is not None or hi is not None:
            raise ValueError("pass an Interval alone, or estimate, lo and hi; not both")
        return estimate.value, estimate.lo, estimate.hi
    if lo is None or hi is None:
        raise ValueError(f"lo and hi are required unless the first argument is an Interval, got {type(estimate).__name__}")
    return estimate, lo, hi


def fmt_interval(estimate, lo=None, hi=None, digits: int = 3) -> str:
    """``estimate [lo, hi]`` from an :class:`~oraclegap._result.Interval` or three numbers; pass
    ``estimate=None`` (with ``lo`` and ``hi``) for the interval alone."""
    estimate, lo, hi = _parts(estimate, lo, hi)
    inner = f"[{fmt(lo, digits)}, {fmt(hi, digits)}]"
    return inner if estimate is None else f"{fmt(estimate, digits)} {inner}"


def fmt_signed_interval(estimate, lo=None, hi=None, digits: int = 3) -> str:
    """A difference with its interval, every sign shown: ``+0.012 [-0.004, +0.030]`` (from an
    :class:`~oraclegap._result.Interval` or three numbers)."""
    estimate, lo, hi = _parts(estimate, lo, hi)
    return f"{fmt_signed(estimate, digits)} [{fmt_signed(lo, digits)}, {fmt_signed(hi, digits)}]"


def fmt_rate(rate, lo=None, hi=None, *, percent: bool = True, digits: int = 0) -> str:
    """A Monte Carlo rate with its interval: ``50% [30%, 70%]`` (``percent=False``: ``0.50 [0.30, 0.70]``)."""
    def one(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "—"
        return f"{100 * float(v):.{digits}f}%" if percent else fmt(v, max(digits, 2))

    core = one(rate)
    return core if lo is None or hi is None else f"{core} [{one(lo)}, {one(hi)}]"


def fmt_share(x) -> str:
    """A share in whole percent that keeps its side of 0 and 1: a positive share below 0.5% prints
    ``<1%`` and one above 99.5% but below 1 prints ``>99%``, so no option chosen sometimes reads
    as chosen 0% (or always) of the time; exact 0 and 1 print ``0%`` and ``100%``."""
    v = float(x)
    if math.isnan(v) or not 0 <= v <= 1:
        raise ValueError(f"a share must lie in [0, 1], got {x!r}")
    if 0 < v < 0.005:
        return "<1%"
    if 0.995 <= v < 1:
        return ">99%"
    return f"{100 * v:.0f}%"


def fmt_frac(x, max_denominator: int = 12) -> str:
    """A rate as a small fraction when it is one (2/3, 1/2, 0, 1), else three decimals."""
    from fractions import Fraction

    v = float(x)
    f = Fraction(v).limit_denominator(max_denominator)
    if abs(float(f) - v) > 1e-9:
        return fmt(v)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def fmt_range(values, *, digits: int = 3, percent: bool = False, sep: str = " to ") -> str:
    """``min to max`` of some numbers (one number when they are all equal)."""
    v = np.asarray(list(values), dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return "—"
    f = (lambda x: f"{100 * x:.1f}%") if percent else (lambda x: fmt(x, digits))
    lo, hi = f(v.min()), f(v.max())
    return lo if lo == hi else f"{lo}{sep}{hi}"
