"""Markdown filled with computed values: ``md`` templates, their display in a notebook, and the
Quarto callouts (a collapsed one for exercise solutions) whose numbers are filled in at build time.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

import numpy as np

from .numbers import fmt, fmt_p, fmt_signed


class _Formatter(string.Formatter):
    def format_field(self, value, format_spec):
        if format_spec == "" and isinstance(value, (float, np.floating)):
            return fmt(value)
        if format_spec == "p":
            return fmt_p(value)
        if format_spec == "+":
            return fmt_signed(value)
        if format_spec == "%":
            return f"{100 * float(value):.1f}%"
        return super().format_field(value, format_spec)


def md(template: str, /, **values) -> str:
    """Fill a Markdown template with computed values.

    Floats default to three decimals; ``{x:p}`` formats a p-value, ``{x:+}`` a signed number,
    ``{x:%}`` a percentage; any other format spec is Python's. A placeholder without a value
    raises ``KeyError`` naming it, so prose can never silently keep a stale number. A bound
    filled in after an equals sign is tidied: ``p = < 0.001`` becomes ``p < 0.001``.
    """
    try:
        text = _Formatter().format(template, **values)
    except KeyError as exc:
        raise KeyError(f"md template needs a value for {exc.args[0]!r}") from None
    # "p = < 0.001" (a bound filled into "p = {p}") reads "p < 0.001"
    return text.replace("= < ", "< ").replace("= > ", "> ")


def show_md(template: str, /, **values) -> None:
    """Display :func:`md` output as Markdown in a notebook (prints it elsewhere)."""
    text = md(template, **values)
    try:
        from IPython.display import Markdown, display

        display(Markdown(text))
    except ImportError:  # pragma: no cover
        print(text)


def show_lines(lines: Sequence[str], sep: str = "\n") -> None:
    """Display Markdown that is already filled (e.g. bullets built with :func:`md`) exactly as
    it is, joined by ``sep``: unlike :func:`show_md` nothing is filled again, so braces (LaTeX
    such as ``$O_{\\mathrm{repro}}$``) are kept."""
    if isinstance(lines, str) or not all(isinstance(x, str) for x in lines):
        raise TypeError("lines must be a sequence of strings (Markdown already filled)")
    _display_markdown(sep.join(lines))


# ---------------------------------------------------------------------------- callouts
_CALLOUT_KINDS = ("note", "tip", "important", "warning", "caution")


def callout(body: str, *, kind: str = "note", title: str | None = None, collapse: bool | None = None) -> str:
    """A Quarto callout block around ``body`` (Markdown); ``collapse=True`` starts it folded."""
    if kind not in _CALLOUT_KINDS:
        raise ValueError(f"kind must be one of {_CALLOUT_KINDS}, got {kind!r}")
    attrs = f".callout-{kind}"
    if collapse is not None:
        attrs += f' collapse="{str(bool(collapse)).lower()}"'
    head = f"## {title}\n\n" if title else ""
    return f"::: {{{attrs}}}\n{head}{body.strip()}\n:::\n"


def _display_markdown(text: str) -> None:
    try:
        from IPython.display import Markdown, display

        display(Markdown(text))
    except ImportError:  # pragma: no cover
        print(text)


def show_callout(template: str, /, *, kind: str = "note", title: str | None = None, collapse: bool | None = None,
                 **values) -> None:
    """Display a callout whose body is :func:`md` of ``template`` with ``values``."""
    _display_markdown(callout(md(template, **values), kind=kind, title=title, collapse=collapse))


def solution(template: str, /, *, title: str = "Solution", **values) -> None:
    """Display an exercise's solution, computed at build time, as a collapsed tip callout (class
    ``og-solution``, which the student edition leaves out: :mod:`oraclegap.book.editions`)."""
    text = callout(md(template, **values), kind="tip", title=title, collapse=True)
    _display_markdown(text.replace("{.callout-tip", "{.callout-tip .og-solution", 1))


def skipped_callout(skipped: Sequence[str], *, need: str = "`OG_EXTERNAL_DIR` with the released data") -> None:
    """One folded note listing the sections skipped on this run (nothing when none were)."""
    if not skipped:
        return
    items = "\n".join(f"- {s}" for s in skipped)
    _display_markdown(callout(f"These sections need {need} and were skipped on this run:\n\n{items}",
                              kind="note", title="Skipped on this run", collapse=True))


#: inline math: ``\(...\)``, or ``$...$`` as Pandoc reads it (a non-space right after the
#: opening ``$``, a non-space right before the closing one, no digit right after it; ``\$`` is
#: a dollar sign), so "$1 to $2" stays text
MATH_SPAN = re.compile(r"\\\((?P<tex>.+?)\\\)|(?<![\\$])\$(?P<dollar>[^\s$](?:[^$]*?[^\s$\\])?)\$(?!\d)")


def math_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each inline math span of ``text`` (:data:`MATH_SPAN`)."""
    return [m.span() for m in MATH_SPAN.finditer(text)]
