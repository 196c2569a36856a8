"""Presentation helpers: one plot style, number and interval formatting, tables, computed prose.

Nothing here computes statistics. ``use_style()`` sets one seaborn theme and palette (call it
in a notebook; importing this module changes nothing). ``fmt``/``fmt_interval`` format numbers
the same way everywhere (``0.113 [0.079, 0.113]``). ``md`` turns a template with computed
values into Markdown, so numbers in the book's prose always come from code.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "PALETTE",
    "use_style",
    "fmt",
    "fmt_p",
    "fmt_interval",
    "fmt_signed",
    "table",
    "md",
    "show_md",
    "claim_table",
    "placeholder_figure",
]

#: The book's palette (colour-blind safe, seaborn "colorblind").
PALETTE = ["#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#ece133", "#56b4e9"]

_STYLE_APPLIED = False


def use_style(context: str = "notebook") -> None:
    """Apply the book's plot style (seaborn whitegrid + PALETTE). Idempotent."""
    global _STYLE_APPLIED
    import matplotlib as mpl
    import seaborn as sns

    sns.set_theme(context=context, style="whitegrid", palette=PALETTE)
    mpl.rcParams.update(
        {
            "figure.figsize": (7.0, 4.0),
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "axes.titleweight": "bold",
            "axes.titlesize": "medium",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
        }
    )
    _STYLE_APPLIED = True


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
    out = f"{xf:.{digits}f}"
    return "0." + "0" * digits if out == "-0." + "0" * digits else out


def fmt_signed(x, digits: int = 3) -> str:
    """Like :func:`fmt` with an explicit sign (``+0.017``)."""
    s = fmt(x, digits)
    return s if s.startswith("-") or s == "—" or float(x) == 0 else "+" + s


def fmt_p(p, digits: int = 3, n_draws: int | None = None) -> str:
    """A p-value; below the resolution of ``n_draws`` randomisations it reads ``< 1/n_draws``."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "—"
    if n_draws and p < 1.0 / n_draws:
        return f"< {fmt(1.0 / n_draws, digits)}"
    if p < 10 ** (-digits):
        return f"< {10 ** (-digits):.{digits}f}"
    return fmt(p, digits)


def fmt_interval(estimate, lo, hi, digits: int = 3) -> str:
    """``estimate [lo, hi]``; pass ``estimate=None`` for the interval alone."""
    inner = f"[{fmt(lo, digits)}, {fmt(hi, digits)}]"
    return inner if estimate is None else f"{fmt(estimate, digits)} {inner}"


def table(df: pd.DataFrame, digits: int = 3, index: bool = False, percent: Sequence[str] = ()):
    """A DataFrame formatted for display: floats to ``digits`` decimals, booleans as yes/no.

    Returns a pandas ``Styler`` (renders as an HTML table in notebooks and in Quarto). Column
    names and text cells may break after ``_`` and ``/`` (a zero-width space), so identifiers
    such as ``p_holm_across_pools`` do not force a table wider than the book's text column.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    fmts = {}
    for col in df.columns:
        s = df[col]
        if col in percent:
            fmts[col] = lambda v: "—" if pd.isna(v) else f"{100 * v:.1f}%"
        elif pd.api.types.is_bool_dtype(s):
            fmts[col] = lambda v: "yes" if v else "no"
        elif pd.api.types.is_float_dtype(s):
            fmts[col] = lambda v, d=digits: fmt(v, d)
        elif pd.api.types.is_integer_dtype(s):
            fmts[col] = lambda v: fmt(int(v))
        elif pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s):
            fmts[col] = lambda v: v if not isinstance(v, str) else _breakable(v)
    sty = df.style.format(fmts, na_rep="—").format_index(lambda c: _breakable(str(c)), axis="columns")
    if not index:
        sty = sty.hide(axis="index")
    return sty


def _breakable(text: str) -> str:
    """``text`` with a zero-width space after each ``_`` and ``/`` (line-break opportunities)."""
    return text.replace("_", "_\u200b").replace("/", "/\u200b")


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


def claim_table(rows: Sequence[Mapping]) -> pd.DataFrame:
    """Rows of ``{claim, source, computed, holds}`` as a DataFrame (the theory-check format)."""
    df = pd.DataFrame(list(rows))
    missing = {"claim", "source", "computed", "holds"} - set(df.columns)
    if missing:
        raise ValueError(f"claim rows need keys claim, source, computed, holds; missing {sorted(missing)}")
    df["holds"] = df["holds"].astype(bool)
    return df[["claim", "source", "computed", "holds"] + [c for c in df.columns if c not in ("claim", "source", "computed", "holds")]]


def placeholder_figure(text: str) -> None:
    """Show a small captioned blank figure saying why a figure was skipped (e.g. data absent),
    so a labelled figure cell still has an image and its caption stays meaningful."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 1.5))
    ax.text(0.5, 0.5, text, ha="center", va="center")
    ax.set_axis_off()
    plt.show()
