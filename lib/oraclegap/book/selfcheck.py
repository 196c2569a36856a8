"""Self-checks for exercises with a numeric answer: a student's value against the chapter's own, unseen.

A chapter author adds one code cell after an exercise (and its folded solution)::

    # %%
    #| code-fold: false
    # Self-check: replace each None with your value (a number or a fraction such as "2/3"), then
    # run this cell.
    MINE = {"L": None, "D": None}
    selfcheck.check("Exercise 1", MINE, {"L": e1.L[0], "D": e1.D[0]}, abs_tol=0.005)

The expected values are the chapter's own, computed on the run for whatever parameters it ran
with; :func:`check` compares, and displays only the verdict for each quantity ("within the
tolerance", "not within", "not answered yet") in a callout of class ``og-selfcheck``: never the
expected value, nor how far off the answer is. The student edition keeps the cell and its output
(:func:`.editions.strip_solutions` removes only solutions), so a student who downloads the
chapter's notebook, fills in ``MINE`` and runs the cell gets the verdict.

Quantities of one exercise may need different tolerances (a count and a share): ``abs_tol`` is
then a mapping of quantity name -> tolerance. :data:`NUMERIC_EXERCISES` declares, chapter by
chapter, the exercises whose answer is numeric (in whole or in part); each has a self-check cell
under it (``tests/chapters/test_selfchecks.py`` holds the chapters to that list).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from numbers import Real

__all__ = ["SELFCHECK_CLASS", "NUMERIC_EXERCISES", "Verdict", "parse_answer", "within", "verdicts",
           "render", "check"]

SELFCHECK_CLASS = "og-selfcheck"

#: Chapter number -> the numbers of its exercises with a numeric answer (or a numeric part): the
#: exercises that carry a self-check cell.
NUMERIC_EXERCISES: dict[str, tuple[int, ...]] = {
    "01": (1, 3),
    "02": (2, 3),
    "03": (2, 3),
    "04": (1, 2, 3),
    "05": (1, 4),
    "06": (1, 4),
    "07": (1, 3),
}


@dataclass(frozen=True)
class Verdict:
    """One quantity of a self-check: its ``name``, ``state`` ("within", "outside", "unanswered" or
    "unavailable": the chapter's value is not a finite number on this run) and the tolerance
    ``tol`` that was applied (absolute, after the relative part is resolved)."""

    name: str
    state: str
    tol: float

    @property
    def passed(self) -> bool:
        return self.state == "within"


def parse_answer(value: object) -> float | None:
    """A student's answer as a float: ``None`` (not answered yet) stays None; a number; or a
    string holding a decimal, a fraction ("2/3") or a percentage ("66.7%"). Raises ``ValueError``
    naming the value for anything else."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"an answer must be a number, a fraction or a percentage, got {value!r}")
    if isinstance(value, Real):
        out = float(value)
    elif isinstance(value, str):
        text = value.strip().replace(" ", "")
        scale = 1.0
        if text.endswith("%"):
            text, scale = text[:-1], 0.01
        try:
            out = float(Fraction(text)) * scale
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"an answer must be a number, a fraction such as '2/3' or a percentage, got {value!r}") from None
    else:
        raise ValueError(f"an answer must be a number, a fraction or a percentage, got {type(value).__name__} {value!r}")
    if not math.isfinite(out):
        raise ValueError(f"an answer must be a finite number, got {value!r}")
    return out


def within(answer: float, expected: float, *, abs_tol: float, rel_tol: float = 0.0) -> bool:
    """|answer - expected| <= max(abs_tol, rel_tol * |expected|)."""
    return abs(answer - expected) <= max(abs_tol, rel_tol * abs(expected))


def _tolerance(abs_tol: float, rel_tol: float) -> tuple[float, float]:
    for name, v in (("abs_tol", abs_tol), ("rel_tol", rel_tol)):
        if not isinstance(v, Real) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    if abs_tol == 0 and rel_tol == 0:
        raise ValueError("abs_tol and rel_tol are both 0: give a tolerance a rounded answer can meet")
    return float(abs_tol), float(rel_tol)


def _abs_tolerances(abs_tol: float | Mapping[str, float], rel_tol: float,
                    names: list[str]) -> dict[str, float]:
    """The absolute tolerance of each quantity in ``names``: ``abs_tol`` for all, or
    ``abs_tol[name]`` from a mapping that names every quantity and no other."""
    if not isinstance(abs_tol, Mapping):
        a = _tolerance(abs_tol, rel_tol)[0]
        return {n: a for n in names}
    missing, unknown = [n for n in names if n not in abs_tol], sorted(set(abs_tol) - set(names))
    if missing or unknown:
        raise ValueError(f"abs_tol as a mapping must give a tolerance for each quantity {names}; "
                         f"missing {missing}, unknown {unknown}")
    return {n: _tolerance(abs_tol[n], rel_tol)[0] for n in names}


def verdicts(answers: Mapping[str, object], expected: Mapping[str, object], *,
             abs_tol: float | Mapping[str, float] = 0.005, rel_tol: float = 0.0) -> list[Verdict]:
    """The verdict for each quantity of ``expected`` (in its order): the student's value
    ``answers[name]`` (see :func:`parse_answer`; missing or None: not answered yet) within
    ``max(abs_tol, rel_tol * |expected|)`` of the chapter's value or not; ``abs_tol`` is one
    tolerance for every quantity or a mapping quantity name -> tolerance. Raises ``ValueError``
    for an answer that is not a number, an answer to no quantity, or a negative tolerance."""
    if not isinstance(answers, Mapping) or not isinstance(expected, Mapping) or not expected:
        raise ValueError("answers and expected must be mappings of quantity name -> value, expected not empty")
    tols = _abs_tolerances(abs_tol, rel_tol, list(expected))
    rel_tol = float(rel_tol)  # checked with each quantity's abs_tol
    unknown = sorted(set(answers) - set(expected))
    if unknown:
        raise ValueError(f"answers name quantities this self-check does not know: {unknown}; "
                         f"it checks {list(expected)}")
    out = []
    for name, value in expected.items():
        try:
            truth = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            truth = math.nan
        a_tol = tols[name]
        tol = max(a_tol, rel_tol * abs(truth)) if math.isfinite(truth) else math.nan
        mine = parse_answer(answers.get(name))
        if not math.isfinite(truth):
            state = "unavailable"
        elif mine is None:
            state = "unanswered"
        else:
            state = "within" if within(mine, truth, abs_tol=a_tol, rel_tol=rel_tol) else "outside"
        out.append(Verdict(str(name), state, tol))
    return out


def _tol_text(v: Verdict, rel_tol: float) -> str:
    return f"{rel_tol:.0%} of the chapter's value" if rel_tol and v.tol > 0 else f"±{v.tol:g}"


def render(exercise: str, results: list[Verdict], *, rel_tol: float = 0.0) -> str:
    """The self-check's callout (Quarto Markdown, class ``og-selfcheck``): one line per quantity
    with its verdict; no expected value and no distance to it appear."""
    if results and all(v.state == "unanswered" for v in results):
        names = ", ".join(f"`{v.name}`" for v in results)
        tols = [_tol_text(v, rel_tol) for v in results]
        within = (f"within its tolerance ({tols[0]})" if len(set(tols)) == 1 else
                  "within its tolerance (" + "; ".join(f"`{v.name}` {t}" for v, t in
                                                        zip(results, tols, strict=True)) + ")")
        return (f'::: {{.callout-note .{SELFCHECK_CLASS} collapse="false"}}\n'
                f"## Self-check: {exercise} (waiting for your answers)\n\n"
                f"In the chapter's notebook (downloadable at the foot of the page), put your values "
                f"for {names} into `MINE` in the cell above and run it: this box then says whether "
                f"each lies {within}, without showing the chapter's value.\n:::\n")
    lines = []
    for v in results:
        if v.state == "within":
            lines.append(f"- `{v.name}`: within the tolerance ({_tol_text(v, rel_tol)}).")
        elif v.state == "outside":
            lines.append(f"- `{v.name}`: not within the tolerance ({_tol_text(v, rel_tol)}); think again and rerun.")
        elif v.state == "unanswered":
            lines.append(f"- `{v.name}`: not answered yet: put your value in this cell and run it.")
        else:
            lines.append(f"- `{v.name}`: cannot be checked on this run (the chapter's value is not a number).")
    answered = [v for v in results if v.state in ("within", "outside")]
    head = (f"{sum(v.passed for v in answered)} of {len(results)} within the tolerance" if answered
            else "waiting for your answers")
    return (f'::: {{.callout-note .{SELFCHECK_CLASS} collapse="false"}}\n## Self-check: {exercise} ({head})\n\n'
            + "\n".join(lines) + "\n:::\n")


def check(exercise: str, answers: Mapping[str, object], expected: Mapping[str, object], *,
          abs_tol: float | Mapping[str, float] = 0.005, rel_tol: float = 0.0) -> None:
    """Check a student's ``answers`` to ``exercise`` against the chapter's ``expected`` values
    (:func:`verdicts`) and display the verdicts (:func:`render`; as Markdown in a notebook, as
    text elsewhere). Returns nothing, so that the cell shows the verdicts alone."""
    if not isinstance(exercise, str) or not exercise.strip():
        raise ValueError(f"exercise must be a non-empty name such as 'Exercise 1', got {exercise!r}")
    text = render(exercise, verdicts(answers, expected, abs_tol=abs_tol, rel_tol=rel_tol), rel_tol=rel_tol)
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
    except ImportError:
        get_ipython = None  # noqa: N806 - no IPython: plain text
    if get_ipython is not None and get_ipython() is not None:
        display(Markdown(text))
    else:
        print(text)
