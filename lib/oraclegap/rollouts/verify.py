"""Answer extraction and verification: from a response text to a parsed answer and a verdict.

Every extractor maps a response to the answer string it commits to, or ``None`` when it finds
none (a parse failure). Every checker maps (parsed answer, gold answer) to a verdict. A parse
failure is always a wrong answer: :func:`check_response` returns it as ``correct=False`` with
``parsed=False``, so it is counted and reported, never dropped.

* GSM8K-style final numbers (:func:`extract_gsm8k`): the number after the last ``####``, else
  the last number in the text; thousands separators, currency signs and trailing periods
  stripped. Gold answers that are whole GSM8K solutions are reduced the same way.
* MATH-style answers (:func:`extract_math`, :func:`check_math`): parsed and compared with
  ``math-verify`` (boxed answers preferred, LaTeX and symbolic equivalence, units and
  ``\\text{}`` wrappers normalised away).
* Multiple-choice letters (:func:`extract_choice`).
* Exact match after normalisation (:func:`extract_exact`, :func:`check_exact`).
* Numbers with a tolerance (:func:`numeric_checker`), and the last integer
  (:func:`extract_integer`, :func:`check_integer`) for procedurally generated tasks.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import threading
from collections.abc import Callable
from fractions import Fraction

__all__ = [
    "Verdict",
    "check_response",
    "parse_number",
    "extract_last_number",
    "extract_gsm8k",
    "gsm8k_gold",
    "check_numeric",
    "numeric_checker",
    "extract_integer",
    "check_integer",
    "extract_math",
    "check_math",
    "extract_choice",
    "check_choice",
    "normalize_text",
    "extract_exact",
    "check_exact",
]


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The outcome of checking one response: the answer it committed to (``None`` when none
    could be parsed), whether one was parsed, and whether it matches the gold answer."""

    answer: str | None
    parsed: bool
    correct: bool


def check_response(
    text: str,
    gold,
    extract: Callable[[str], str | None],
    check: Callable[[str, str], bool],
) -> Verdict:
    """Verdict of one response: ``extract(text)``; ``None`` is a parse failure (wrong); else
    ``check(answer, gold)``. A checker that raises on an unparseable gold answer propagates."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    answer = extract(text)
    if answer is None:
        return Verdict(None, False, False)
    return Verdict(answer, True, bool(check(answer, str(gold))))


# ---------------------------------------------------------------------- numbers
# a signed decimal number, with optional thousands separators ("1,234,567.5"); a bare comma
# between digits counts as a separator only in groups of three
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+)?|(?<![\w.])-?\.\d+")


def parse_number(s) -> Fraction | None:
    """An exact rational from a number string (``"1,234"``, ``"-3.50"``, ``"$12"``, ``"2/3"``,
    ``"7."``), or ``None`` when ``s`` is not a single number."""
    if s is None:
        return None
    t = str(s).strip().replace("$", "").replace("\\$", "").replace(",", "").replace(" ", "")
    t = t.rstrip(".")
    if t.endswith("%"):
        t = t[:-1]
    if not t:
        return None
    try:
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        return None


def _numbers(text: str) -> list[str]:
    return [m.group(0) for m in _NUMBER.finditer(text.replace("\\$", "$"))]


def extract_last_number(text: str) -> str | None:
    """The last number in ``text`` (separators stripped), or ``None`` when it has none."""
    nums = _numbers(text)
    if not nums:
        return None
    return nums[-1].replace(",", "")


def extract_gsm8k(text: str) -> str | None:
    """GSM8K's final answer: the first number after the last ``####``; without a ``####``
    marker, the last number in the text. Commas, ``$`` and a trailing period are stripped."""
    if "####" in text:
        tail = text.rsplit("####", 1)[1]
        nums = _numbers(tail)
        if nums:
            return nums[0].replace(",", "")
        return None
    return extract_last_number(text)


def gsm8k_gold(answer: str) -> str:
    """The gold number of a GSM8K answer field (a whole solution ending in ``#### N``, or a
    bare number)."""
    got = extract_gsm8k(str(answer))
    if got is None:
        raise ValueError(f"gold answer {str(answer)[:60]!r} holds no number")
    return got


def check_numeric(answer: str, gold: str, rel_tol: float = 0.0, abs_tol: float = 0.0) -> bool:
    """Whether two number strings agree: exactly as rationals (``"18.0" == "18"``; the default,
    used for GSM8K), or within ``|a - g| <= max(rel_tol * |g|, abs_tol)``."""
    a, g = parse_number(answer), parse_number(gold)
    if g is None:
        raise ValueError(f"gold answer {gold!r} is not a number")
    if a is None:
        return False
    if a == g:
        return True
    return math.isclose(float(a), float(g), rel_tol=rel_tol, abs_tol=abs_tol)


def numeric_checker(rel_tol: float = 1e-6, abs_tol: float = 0.0) -> Callable[[str, str], bool]:
    """A checker comparing numbers within a relative and an absolute tolerance."""
    for name, v in (("rel_tol", rel_tol), ("abs_tol", abs_tol)):
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    return functools.partial(check_numeric, rel_tol=float(rel_tol), abs_tol=float(abs_tol))


_INTEGER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


def extract_integer(text: str) -> str | None:
    """The last integer in ``text`` (an optional minus sign that does not follow a digit or a
    letter, digits, thousands separators allowed; decimals are not integers), without leading
    zeros; ``None`` when there is none."""
    ints = [m.group(0) for m in _INTEGER.finditer(text) if "." not in m.group(0)]
    if not ints:
        return None
    return str(int(ints[-1].replace(",", "")))


def check_integer(answer: str, gold: str) -> bool:
    """Exact integer equality (``"007" == "7"``); the gold answer must be an integer."""
    try:
        g = int(str(gold).strip().replace(",", ""))
    except ValueError:
        raise ValueError(f"gold answer {gold!r} is not an integer") from None
    try:
        return int(answer) == g
    except ValueError:
        return False


# ---------------------------------------------------------------------- math (math-verify)
def _timeout() -> int | None:
    # math-verify times out with SIGALRM, which only the main thread may set
    return 5 if threading.current_thread() is threading.main_thread() else None


def _mv():
    try:
        import math_verify
    except ImportError:  # pragma: no cover - math-verify is in the rollouts extra
        raise ImportError("the 'math' task needs math-verify: pip install -e '.[rollouts]'") from None
    return math_verify


def extract_math(text: str) -> str | None:
    """The final answer of a MATH-style response as ``math-verify`` extracts it (a boxed answer
    first, then LaTeX or plain expressions), as a string; ``None`` when nothing parses."""
    mv = _mv()
    got = mv.parse(text, parsing_timeout=_timeout())
    if not got:
        return None
    return str(got[-1]) if len(got) > 1 else str(got[0])


@functools.lru_cache(maxsize=4096)
def _parse_gold(gold: str):
    mv = _mv()
    parsed = None
    for form in (f"${gold}$", f"\\boxed{{{gold}}}", gold):
        parsed = mv.parse(form, parsing_timeout=_timeout())
        if parsed:
            break
    if not parsed:
        raise ValueError(f"gold answer {gold!r} cannot be parsed by math-verify")
    return parsed


def check_math(answer: str, gold: str) -> bool:
    """Mathematical equivalence of an extracted answer and a gold answer by ``math-verify``
    (the answer is re-read as LaTeX, so ``\\frac12``, ``0.5`` and ``1/2`` agree)."""
    mv = _mv()
    g = _parse_gold(str(gold))
    pred = mv.parse(f"${answer}$", parsing_timeout=_timeout()) or mv.parse(answer, parsing_timeout=_timeout())
    if not pred:
        return False
    return bool(mv.verify(g, pred, timeout_seconds=_timeout()))


# ---------------------------------------------------------------------- multiple choice
_CHOICE_PATTERNS = (
    re.compile(r"\\boxed\{\s*\(?([A-Z])\)?\s*\}"),
    re.compile(r"(?i:answer)\s*(?i:is)?\s*[:\-]?\s*\(?\*{0,2}([A-Z])\b\)?"),
    re.compile(r"\(([A-Z])\)"),
    re.compile(r"(?<![A-Za-z])([A-Z])(?:[.):]|\s*$)"),
)


def extract_choice(text: str, letters: str = "ABCDEFGHIJ") -> str | None:
    """The option letter a response commits to: the last ``\\boxed{X}``, else the last
    "answer is X" / "Answer: X", else the last "(X)", else the last standalone capital letter
    followed by ``.``, ``)``, ``:`` or the end; only letters in ``letters`` count."""
    for pat in _CHOICE_PATTERNS:
        hits = [m.group(1) for m in pat.finditer(text) if m.group(1) in letters]
        if hits:
            return hits[-1]
    return None


def check_choice(answer: str, gold: str) -> bool:
    """Letter equality, ignoring case, spaces and parentheses around the gold letter."""
    g = str(gold).strip().strip("()").strip().upper()
    if len(g) != 1 or not g.isalpha():
        raise ValueError(f"gold answer {gold!r} is not an option letter")
    return answer.strip().upper() == g


# ---------------------------------------------------------------------- exact match
def normalize_text(s: str) -> str:
    """Case-folded, whitespace-collapsed text without surrounding quotes and final punctuation."""
    t = " ".join(str(s).split()).casefold()
    t = t.strip().strip("\"'`").strip()
    return t.rstrip(".!;,").strip()


_ANSWER_TAG = re.compile(r"(?i)\banswer\s*:\s*")


def extract_exact(text: str) -> str | None:
    """The text after the last "Answer:" when present, else the last non-empty line;
    ``None`` for an empty response."""
    parts = _ANSWER_TAG.split(text)
    if len(parts) > 1:
        cand = parts[-1].strip().splitlines()
        cand = cand[0] if cand else ""
    else:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        cand = lines[-1] if lines else ""
    cand = cand.strip()
    return cand if cand else None


def check_exact(answer: str, gold: str) -> bool:
    """Equality after :func:`normalize_text`."""
    return normalize_text(answer) == normalize_text(gold)
