"""Interpretive words from computed values, and checks that the prose agrees with its numbers.

:func:`compare`, :func:`versus` and :func:`position` return the word ("above", "below",
"inside", ...) that relates computed values, and raise :class:`ProseError` when a direction the
text relies on (``expect=``) has flipped; :func:`check` does the same for a statement typed in a
Markdown cell; ``compare(..., interval=(lo, hi))`` takes the word from an interval, never from its
point. :func:`path_words` reads a curve's whole path. :func:`direction_problems` and
:func:`share_problems` scan rendered Markdown for a direction word its interval contradicts and
for a share outside [0, 1], and :class:`PValues` keeps one p-value per (test, pool) in a chapter.
"""

from __future__ import annotations

import math
import re

import numpy as np

from .markdown import MATH_SPAN, md
from .numbers import fmt, fmt_p, rounded


# ---------------------------------------------------------------------------- directions
class ProseError(AssertionError):
    """A direction or statement the chapter's text relies on does not hold for the computed values."""


def _as_float(x, name: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {type(x).__name__}") from None
    if math.isnan(v):
        raise ValueError(f"{name} is NaN; a direction between numbers needs two numbers")
    return v


def _expected(word: str, expect, what: str, detail: str) -> str:
    if expect is None:
        return word
    allowed = {expect} if isinstance(expect, str) else set(expect)
    if word not in allowed:
        label = f"{what}: " if what else ""
        raise ProseError(f"{label}the text says {' or '.join(sorted(allowed))!r} but the computed values give {word!r} ({detail})")
    return word


def compare(a, b, *, tol: float = 1e-12, more: str = "above", less: str = "below", same: str = "equal to",
            expect=None, what: str = "", interval=None, digits: int | None = None) -> str:
    """The word for how ``a`` compares with ``b``: ``more`` when a > b + tol, ``less`` when
    a < b - tol, otherwise ``same`` (the default ``tol`` absorbs rounding, so 1/2 computed two
    ways compares as equal).

    ``interval=(lo, hi)``: ``a`` is an estimate with that interval, and the word comes from the
    interval, not the point: ``more`` only when lo > b + tol, ``less`` only when hi < b - tol,
    ``same`` when the interval covers ``b`` (so a sentence never says "beats" of a difference
    whose interval includes zero).

    ``digits``: compare the two numbers as the book prints them (:func:`~.numbers.rounded`, the
    rule of ``fmt``), so a sentence showing both at ``digits`` decimals never calls printed
    equals different.

    ``expect`` (a word or a set of words) is the direction the surrounding text relies on; when
    the computed word differs, :class:`ProseError` stops the chapter, so a sentence can never
    state a direction its numbers have stopped supporting. ``what`` names the comparison in the
    error message.
    """
    av, bv = _as_float(a, "a"), _as_float(b, "b")
    if digits is not None:
        av, bv = rounded(av, digits), rounded(bv, digits)
    tv = _as_float(tol, "tol")
    if tv < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    if interval is not None:
        lo, hi = (_as_float(v, "interval") for v in interval)
        if lo > hi:
            raise ValueError(f"interval must be (lo, hi) with lo <= hi, got {interval}")
        word = more if lo > bv + tv else less if hi < bv - tv else same
        return _expected(word, expect, what, f"a = {av:.6g} [{lo:.6g}, {hi:.6g}], b = {bv:.6g}")
    word = more if av > bv + tv else less if av < bv - tv else same
    return _expected(word, expect, what, f"a = {av:.6g}, b = {bv:.6g}, tol = {tv:g}")


def versus(a, b, tol: float, *, digits: int = 3, more: str = "more", less: str = "less",
           same: str = "as", within: str = "; the gap of {d} lies within the tolerance of {t}") -> str:
    """The word for how ``a`` compares with a reference ``b`` that carries a tolerance ``tol``
    (e.g. two Monte Carlo standard errors): ``same`` only when the two print alike at ``digits``
    decimals, otherwise ``more`` or ``less`` from the sign of ``a - b`` -- a tolerance decides
    whether a gap is distinguishable, never that two different numbers are equal. When the gap
    is within ``tol``, ``within`` (formatted with the gap ``d`` and the tolerance ``t``) follows
    the word, so "0.40 against 0.65" reads "less often; the gap of 0.25 lies within the
    tolerance of 0.41", never "as often"."""
    av, bv, tv = _as_float(a, "a"), _as_float(b, "b"), _as_float(tol, "tol")
    if tv < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    if fmt(av, digits) == fmt(bv, digits):
        return same
    word = more if av > bv else less
    if abs(av - bv) <= tv + 1e-12 and within:
        word += within.format(d=fmt(abs(av - bv), digits), t=fmt(tv, digits))
    return word


def path_words(xs, ys, tol: float, *, var: str = "n", value: str = "%") -> str:
    """How a curve ``ys`` over increasing ``xs`` moves, read from the whole path rather than its
    two ends: an interior low (high) is named when both ends lie more than ``tol`` above (below)
    it; otherwise the curve "rises"/"falls" when its ends differ by more than ``tol`` and "stays
    level" when they do not. ``tol`` is the smallest step the reader should trust (e.g. two
    Monte Carlo standard errors of a difference). Values print with the ``md`` format ``value``
    (``%``: a percentage), positions as ``$var = x$``."""
    xv, yv = np.asarray(xs, float), np.asarray(ys, float)
    if xv.ndim != 1 or xv.shape != yv.shape or len(xv) < 2:
        raise ValueError(f"xs and ys must be 1-d of one length >= 2, got {xv.shape} and {yv.shape}")
    if not np.all(np.diff(xv) > 0):
        raise ValueError("xs must increase strictly")
    if not _as_float(tol, "tol") >= 0:
        raise ValueError(f"tol must be >= 0, got {tol}")

    def at(i: int) -> str:
        x = int(xv[i]) if float(xv[i]).is_integer() else float(xv[i])
        return md("{v:" + value + "} at ${var} = {x}$", v=float(yv[i]), var=var, x=x)

    lo, hi, last = int(np.argmin(yv)), int(np.argmax(yv)), len(yv) - 1
    if 0 < lo < last and min(yv[0], yv[-1]) - yv[lo] > tol:
        return f"falls from {at(0)} to a low of {at(lo)}, then rises to {at(last)}"
    if 0 < hi < last and yv[hi] - max(yv[0], yv[-1]) > tol:
        return f"rises from {at(0)} to a high of {at(hi)}, then falls to {at(last)}"
    if abs(yv[-1] - yv[0]) <= tol:
        return f"stays level within {fmt(tol)} ({at(0)}, {at(last)})"
    return f"{'rises' if yv[-1] > yv[0] else 'falls'} as ${var}$ grows, from {at(0)} to {at(last)}"


def position(x, lo, hi, *, inside: str = "inside", above: str = "above", below: str = "below",
             expect=None, what: str = "") -> str:
    """Where ``x`` lies relative to the closed interval [lo, hi]: ``below``, ``inside`` or
    ``above`` (with ``expect`` as in :func:`compare`)."""
    xv, lv, hv = _as_float(x, "x"), _as_float(lo, "lo"), _as_float(hi, "hi")
    if lv > hv:
        raise ValueError(f"lo must not exceed hi, got [{lo}, {hi}]")
    word = below if xv < lv else above if xv > hv else inside
    return _expected(word, expect, what, f"x = {xv:.6g}, interval [{lv:.6g}, {hv:.6g}]")


def check(holds, statement: str) -> None:
    """Stop the chapter with :class:`ProseError` when ``statement`` (typed in the text) is false.

    Use it right after a Markdown cell whose words state a direction, so the text cannot outlive
    the numbers that support it.
    """
    if not isinstance(statement, str) or not statement:
        raise TypeError("statement must be a non-empty string naming what the text says")
    if not bool(holds):
        raise ProseError(f"the text says: {statement!r}, but the computed values contradict it")


# ---------------------------------------------------------------------------- sentence checks
_NUM = r"[+\-\u2212]?\d+(?:\.\d+)?%?"
_INTERVAL = re.compile(r"\[\s*(" + _NUM + r")\s*,\s*(" + _NUM + r")\s*\]")
#: words that claim a difference lies above (+1) or below (-1) zero
_DIRECTION_WORDS = {"beats": 1, "outperforms": 1, "above zero": 1, "trails": -1, "below zero": -1,
                    "underperforms": -1}
_DIRECTION = re.compile(r"\b(" + "|".join(_DIRECTION_WORDS) + r")\b")
_SHARE = re.compile(r"\b(share|fraction|proportion)s?\b", re.IGNORECASE)
_COVERS_ZERO = re.compile(r"\b(includes|covers|contains) zero\b")
#: a verb of gaining (+1) or losing (-1) right before the number it reads (and that number's
#: interval, when one follows): "gains -0.033" says a gain of a loss
_GAIN_WORDS = {"gains": 1, "gained": 1, "loses": -1, "lost": -1}
_GAIN = re.compile(r"\b(" + "|".join(_GAIN_WORDS) + r")\s+(?:by\s+|of\s+)?(" + _NUM
                   + r")(?![\d.])(\s*\[\s*(" + _NUM + r")\s*,\s*(" + _NUM + r")\s*\])?")
#: how far after a word a clause may run to the interval (or the "includes zero") it reads
_REACH = 90


#: comparison words and the order they claim between "X against Y" read in their clause
_ORDER_WORDS = {"more often": 1, "less often": -1, "as often": 0, "the same as": 0, "equal to": 0,
                "higher": 1, "lower": -1, "larger": 1, "smaller": -1, "greater": 1, "fewer": -1}
_ORDER = re.compile(r"\b(" + "|".join(_ORDER_WORDS) + r")\b(?! (?:limit|bound|end|tail|half|triangle))")
_AGAINST = re.compile(r"(" + _NUM + r")\s+against\s+(?:the paper's\s+|a\s+|the\s+)?(" + _NUM + r")")


def _number(text: str) -> float:
    v = text.replace("\u2212", "-").rstrip("%")
    return float(v) / (100 if text.endswith("%") else 1)


def _clause(text: str, start: int) -> str:
    """``text`` from ``start`` to the end of the clause (a ``;``, a sentence end, or _REACH)."""
    end = re.search(r";|\.(?:\s|$)(?![\d])|\n", text[start:start + _REACH])
    return text[start:start + (end.start() if end else _REACH)]


def direction_problems(text: str) -> list[str]:
    """Sentences whose direction word disagrees with the interval it reads.

    A word that says a difference lies above zero ("beats", "above zero", ...) must be
    followed, in its clause, only by an interval wholly above zero, and a word for below zero by
    one wholly below; "an interval that includes zero" after either word is a contradiction too.
    A comparison word ("more often", "as often", "lower", ...) must agree with the pair "X
    against Y" that its clause reads ("detected as often (0.40 against 0.65)" contradicts
    itself). A verb of gaining ("gains", "gained") must not read a negative number or an interval wholly
    below zero right after it ("gains -0.033 [-0.071, -0.004]" is a loss), nor "loses" a number
    written with a plus sign.
    Returns one line per problem (empty when the text holds).
    """
    problems = []
    for m in _DIRECTION.finditer(text):
        sign, clause = _DIRECTION_WORDS[m.group(1)], _clause(text, m.end())
        iv = _INTERVAL.search(clause)
        if iv is not None:
            lo, hi = _number(iv.group(1)), _number(iv.group(2))
            if (sign > 0 and lo <= 0) or (sign < 0 and hi >= 0):
                problems.append(f"{m.group(1)!r} reads the interval {iv.group(0)}: "
                                f"...{text[max(0, m.start() - 60):m.end() + len(clause)]}...")
        elif _COVERS_ZERO.search(clause):
            problems.append(f"{m.group(1)!r} beside an interval that includes zero: "
                            f"...{text[max(0, m.start() - 60):m.end() + len(clause)]}...")
    for m in _ORDER.finditer(text):
        want, pair = _ORDER_WORDS[m.group(1)], _AGAINST.search(_clause(text, m.end()))
        if pair is None:
            continue
        a, b = _number(pair.group(1)), _number(pair.group(2))
        got = (a > b) - (a < b)
        if got != want:
            problems.append(f"{m.group(1)!r} reads {pair.group(0)!r}: "
                            f"...{text[max(0, m.start() - 60):m.end() + pair.end()]}...")
    for m in _GAIN.finditer(text):
        sign, num = _GAIN_WORDS[m.group(1)], m.group(2)
        value = _number(num)
        # "gains" of a negative number, or of an interval wholly below zero; "loses" of a number
        # written with a plus sign (a magnitude without a sign reads as the size of the loss)
        wrong = (value < 0 or (m.group(4) is not None and _number(m.group(5)) < 0)) if sign > 0 \
            else (num.startswith("+") and value > 0)
        if wrong:
            problems.append(f"{m.group(1)!r} reads {m.group(0)[len(m.group(1)):].strip()}: "
                            f"...{text[max(0, m.start() - 60):m.end() + 30]}...")
    return problems


#: wordings a reader cannot parse: a maximum share of zero ("at most 0.0%"), a paper named by
#: its authors after the word paper ("paper Shihab et al.'s"), a parenthesis repeated in a row
_WORDING = {
    "a share of zero read as a bound (say none or zero)": re.compile(r"\bat most [\u2212-]?0(?:\.0+)?%"),
    "'paper' before the authors' names": re.compile(r"\bpaper [A-Z][a-z]+(?: [A-Z][a-z]+)? et al\."),
    "the same parenthesis repeated": re.compile(r"(\([^()]{3,40}\))(?:,? (?:and )?\1)+"),
}


def wording_problems(text: str) -> list[str]:
    """Phrases a reader cannot parse (:data:`_WORDING`), and a thousands separator inside
    ``$...$`` math, which renders as a list ("$n = 50,000$" shows "50, 000"): one line per
    occurrence."""
    out = [f"{why}: ...{text[max(0, m.start() - 60):m.end() + 20]}..."
           for why, pattern in _WORDING.items() for m in pattern.finditer(text)]
    out += [f"a thousands comma inside math (it renders as '1, 000'; write the number outside "
            f"the dollars or with {{,}}): {m.group(0)}" for m in MATH_SPAN.finditer(text)
            if _MATH_THOUSANDS.search(m.group("tex") or m.group("dollar"))]
    return out


_MATH_THOUSANDS = re.compile(r"\d,\d{3}(?!\d)")


def at_most(x, *, zero: str = "zero", template: str = "at most {x:%}") -> str:
    """``template`` with the maximum share ``x``, or ``zero`` when it is 0 (so a sentence never
    reads "at most 0.0%")."""
    return zero if float(x) == 0 else md(template, x=x)


def share_problems(text: str) -> list[str]:
    """Intervals labelled share, fraction or proportion that leave [0, 1] (or [0%, 100%]): the
    first interval in the word's clause, when at most one number (the estimate) comes between."""
    problems = []
    for m in _SHARE.finditer(text):
        clause = _clause(text, m.end())
        iv = _INTERVAL.search(clause)
        # the share's own interval: at most one number (its estimate) between the word and it
        if iv is not None and len(re.findall(r"\d+(?:\.\d+)?", clause[:iv.start()])) <= 1:
            lo, hi = _number(iv.group(1)), _number(iv.group(2))
            if not (0 <= lo <= hi <= 1 + 1e-12):
                problems.append(f"a {m.group(1).lower()} with interval {iv.group(0)} outside [0, 1]: "
                                f"...{text[max(0, m.start() - 60):m.end() + 60]}...")
    return problems


class PValues:
    """One test, one p-value: the p-values a chapter prints, keyed by (test, pool).

    ``pv(key, p)`` returns ``p`` and remembers it; a second call with the same key and a
    p-value that prints differently raises :class:`ProseError` (the same test on the same pool,
    recomputed with other draws, would otherwise be quoted with two numbers).
    """

    def __init__(self) -> None:
        self.seen: dict[str, float] = {}

    def __call__(self, key: str, p) -> float:
        if not isinstance(key, str) or not key:
            raise TypeError("key must be a non-empty string naming the test and the pool")
        v = _as_float(p, "p")
        if key in self.seen and fmt_p(self.seen[key]) != fmt_p(v):
            raise ProseError(f"one test, one p-value: {key!r} was printed as {fmt_p(self.seen[key])} "
                             f"and now as {fmt_p(v)}")
        self.seen.setdefault(key, v)
        return v

    def conflicts(self, pairs) -> list[str]:
        """The keys among ``(key, p)`` pairs (e.g. scanned from text) printed with two values."""
        first, out = dict(self.seen), []
        for key, p in pairs:
            v = _as_float(p, "p")
            if key in first and fmt_p(first[key]) != fmt_p(v):
                out.append(f"{key}: {fmt_p(first[key])} and {fmt_p(v)}")
            first.setdefault(key, v)
        return out
