"""Presentation helpers: one plot style, number and interval formatting, tables, computed prose.

Nothing here computes statistics. ``use_style()`` sets one seaborn theme and palette (call it
in a notebook; importing this module changes nothing). ``fmt``/``fmt_interval`` format numbers
the same way everywhere (``0.113 [0.079, 0.113]``). ``md`` turns a template with computed
values into Markdown, so numbers in the book's prose always come from code.

Interpretive words come from code too: :func:`compare` and :func:`position` return the word
("above", "below", "inside", ...) that relates computed values, and raise :class:`ProseError`
when a direction the text relies on (``expect=``) has flipped; :func:`check` does the same for a
statement typed in a Markdown cell; ``compare(..., interval=(lo, hi))`` takes the word from an
interval, never from its point. :func:`direction_problems` and :func:`share_problems` scan
rendered Markdown for a direction word its interval contradicts and for a share outside [0, 1],
and :class:`PValues` keeps one p-value per (test, pool) in a chapter. :class:`Claims` keeps a chapter's claims table and stops the
chapter when one fails. :func:`published` looks up a figure the papers print
(``data/paper/published_figures.csv``) so a chapter can set it beside its own.
:func:`callout` and :func:`solution` emit Quarto callouts (a collapsed one for exercise
solutions) whose numbers are filled in at build time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html as _html
import itertools
import math
import re
import string
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd

from ._result import Interval

__all__ = [
    "path_words",
    "versus",
    "PALETTE",
    "use_style",
    "fmt",
    "fmt_p",
    "fmt_interval",
    "fmt_signed",
    "table",
    "DISPLAY_NAMES",
    "display_name",
    "md",
    "show_md",
    "claim_table",
    "placeholder_figure",
    "ProseError",
    "compare",
    "position",
    "check",
    "direction_problems",
    "share_problems",
    "PValues",
    "fmt_rate",
    "fmt_range",
    "fmt_frac",
    "Claims",
    "Published",
    "published",
    "published_table",
    "callout",
    "show_callout",
    "solution",
    "skipped_callout",
    "draw_outcomes",
    "draw_counts",
    "draw_saturation",
    "test_name",
]

#: The book's palette (colour-blind safe, seaborn "colorblind").
PALETTE = ["#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#ece133", "#56b4e9"]

_STYLE_APPLIED = False


def use_style(context: str = "notebook") -> None:
    """Apply the book's plot style (seaborn whitegrid + PALETTE). Idempotent. Also silences
    tqdm's warning that no progress widget can be shown (a rendered page has none, and the
    warning would print the environment's path on it)."""
    global _STYLE_APPLIED
    import warnings

    import matplotlib as mpl
    import seaborn as sns
    from tqdm import TqdmWarning

    warnings.simplefilter("ignore", TqdmWarning)

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


#: Code keys that tables show as labels, with the names a reader reads: benchmark and task keys of
#: the released pools and the papers' tables, pool-construction rules, and the keys of
#: 2607.03436's released summaries. Registry names ("routerdc-mmlu") and router family keys
#: ("embed_knn") have their own names (:func:`display_name`).
DISPLAY_NAMES = {
    "arc_challenge": "ARC-Challenge", "arc-challenge": "ARC-Challenge", "hellaswag": "HellaSwag",
    "gsm8k": "GSM8K", "mmlu": "MMLU", "mmlu_pro": "MMLU-Pro", "mbpp": "MBPP", "winogrande": "Winogrande",
    "humaneval": "HumanEval", "humaneval_plus": "HumanEval+", "math500": "MATH-500", "math_500": "MATH-500",
    "gpqa": "GPQA", "commonsense_qa": "CommonsenseQA", "human_eval": "HumanEval", "natural_qa": "Natural Questions",
    "openbook_qa": "OpenBookQA", "trivia_qa": "TriviaQA",
    "dpp": "DPP", "kmedoids": "k-medoids", "k_medoids": "k-medoids",
    "one_per_lineage": "one member per lineage", "qwen_size_sweep": "Qwen size sweep",
    "known_p_tv": "known-rate check (TV distance)",
    "per_response": "per response", "per_policy": "per policy",
    "cost-benefit greedy (partial=3)": "cost-benefit greedy, partial enumeration",
    "cost-benefit greedy (partial=0)": "cost-benefit greedy",
}


def display_name(key):
    """The name a table shows for a code key: :data:`DISPLAY_NAMES`, else a registry name's title
    (``datasets.title``), else a router family's label; anything else is returned as it is."""
    if not isinstance(key, str):
        return key
    if key in DISPLAY_NAMES:
        return DISPLAY_NAMES[key]
    if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", key):
        from . import datasets

        if key in set(datasets.registry()["name"]):
            return datasets.title(key)
    elif re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", key):
        from .deploy import routers

        return routers.LABELS.get(key, key)
    return key


_SHARE_NAME = re.compile(r"\b(shares?|proportions?)\b", re.I)


def _share_columns_in_unit_interval(df: pd.DataFrame) -> None:
    """A shown column named a share or proportion holds values in [0, 1] (NaN aside); else
    :class:`ProseError` names it (a quantity that can be negative or exceed 1 -- a net
    recovered fraction, a ratio to a gap -- must not be called a share)."""
    for col in dict.fromkeys(df.columns):
        if not _SHARE_NAME.search(str(col)):
            continue
        s = _first(df, col)
        if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            continue
        v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
        bad = v[np.isfinite(v) & ((v < -1e-9) | (v > 1 + 1e-9))]
        if bad.size:
            raise ProseError(f"table column {col!r} is named a share but holds {bad.size} value(s) "
                             f"outside [0, 1] (e.g. {bad[0]:.4g}): call it a ratio or a fraction")


def table(df: pd.DataFrame, digits: int = 3, index: bool = False, percent: Sequence[str] = (),
          columns: Mapping[str, str] | None = None):
    """A DataFrame formatted for display: floats to ``digits`` decimals, booleans as yes/no.

    ``columns`` maps code names to the human names shown (only the mapped columns are kept, in
    the mapping's order); ``percent`` names columns (after renaming) shown as percentages. Text
    cells are HTML-escaped, so a claim such as "0 <= L <= D" shows as written; column names and
    text cells may break after ``_`` and ``/`` (a zero-width space), so identifiers such as
    ``p_holm_across_pools`` do not force a table wider than the book's text column. A text cell
    that is a bare code key (``arc_challenge``, ``routerdc-mmlu``, ``embed_knn``) shows its
    :func:`display_name`. Returns a
    pandas ``Styler`` (renders as an HTML table in notebooks and in Quarto).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if columns is not None:
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise KeyError(f"columns maps names the frame does not have: {missing}; it has {list(df.columns)}")
        df = df[list(columns)].rename(columns=dict(columns))
    _share_columns_in_unit_interval(df)
    fmts, texts = {}, {}
    for col in dict.fromkeys(df.columns):
        s = _first(df, col)
        if col in percent:
            fmts[col] = lambda v: "—" if pd.isna(v) else f"{100 * v:.1f}%"
        elif pd.api.types.is_bool_dtype(s):
            fmts[col] = lambda v: "yes" if v else "no"
        elif pd.api.types.is_float_dtype(s) and _is_p_column(str(col)):
            fmts[col] = lambda v, d=digits: fmt_p(v, d)
        elif pd.api.types.is_float_dtype(s):
            fmts[col] = lambda v, d=digits: fmt(v, d)
        elif pd.api.types.is_integer_dtype(s):
            fmts[col] = lambda v: fmt(int(v))
        elif pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s):
            texts[col] = lambda v: v if not isinstance(v, str) else _code_spans(_breakable(_html.escape(display_name(v))))
    sty = df.style.format(fmts, na_rep="—", escape="html").format_index(lambda c: _breakable(str(c)), axis="columns")
    if texts:  # escaped by hand, so that a code span can become <code> after escaping; only
        # these columns: a dict formatter without a subset resets every other column to pandas'
        # six-decimal default
        sty = sty.format(texts, subset=list(texts), na_rep="—", escape=None)
    sty = sty.set_uuid(_table_uuid(df))
    # the book's cells may break anywhere (long identifiers); a number, or a column of short
    # words ("secondary"), breaks only at its spaces
    numeric = [c for c in dict.fromkeys(df.columns) if _numeric_column(_first(df, c)) or _short_words(_first(df, c))]
    if numeric:
        sty = sty.set_table_styles({c: [{"selector": "td", "props": "overflow-wrap: normal;"}] for c in numeric},
                                   overwrite=False)
    if not index:
        sty = sty.hide(axis="index")
    return sty.set_table_attributes(TABLE_ATTRIBUTES)


#: The HTML attributes of every :func:`table`: Bootstrap's classes that Quarto would otherwise add
#: when it re-parses a raw HTML table into its document tree, and the attribute that tells it not
#: to. A chapter's tables are finished HTML (formatted, escaped, styled); re-parsing them cost a
#: quarter of a table-heavy chapter's render (chapter 05 alone: 17.2 to 12.5 CPU-s) and changed
#: nothing a reader sees.
TABLE_ATTRIBUTES = 'class="table table-sm table-striped small" data-quarto-disable-processing="true"'

_TABLE_NUMBER = itertools.count(1)

#: shown names of p-value columns: a p-value reads "< 0.001", never "0.000"
_P_COLUMN = re.compile(r"^(p|pᵣₑ|pₘₚ|p_m|p_re|p_mp|p_holm\w*|p-value|(adjusted|raw|lower-tail|upper-tail) p)$")


def _is_p_column(name: str) -> bool:
    """A shown p-value column: ``p``, ``pᵣₑ``, ``adjusted p`` ..., also after a qualifier
    (``Pass@1 pᵣₑ``) or before a correction's name (``McNemar p, Holm``)."""
    parts = [part.strip() for part in name.split(",")]
    return any(_P_COLUMN.match(part) or _P_COLUMN.match(part.rsplit(" ", 1)[-1]) for part in parts if part)


#: a text cell that is only a number, an interval or a count ("0.087 (0.079)", "[0.1, 0.2]", "3 of 4")
_NUMERIC_TEXT = re.compile(r"^[\s\d.,+\-−<>=≤≥\[\]()%—]*(?:of[\s\d]+)?$")


#: the longest word a cell keeps whole: longer ones (identifiers, paths) may break anywhere
SHORT_WORD = 16


def _short_words(s: pd.Series) -> bool:
    vals = [v for v in s if isinstance(v, str)]
    return bool(vals) and max(len(w) for v in vals for w in (v.split() or [""])) <= SHORT_WORD


def _numeric_column(s: pd.Series) -> bool:
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        return True
    vals = [v for v in s if isinstance(v, str)]
    return bool(vals) and all(_NUMERIC_TEXT.match(v) for v in vals)


def _table_uuid(df: pd.DataFrame) -> str:
    """A reproducible HTML id for a table: its number in this process (so two equal tables on a
    page stay distinct) and a hash of its content, instead of pandas' random one, so that a rerun
    of an unchanged chapter writes byte-identical tables."""
    h = hashlib.sha1(df.to_csv().encode()).hexdigest()[:8]
    return f"og{next(_TABLE_NUMBER)}_{h}"


def _first(df: pd.DataFrame, col) -> pd.Series:
    """The column shown as ``col``; where two are shown under one name, the first (both are
    then formatted alike, so neither falls back to pandas' six decimals)."""
    s = df[col]
    return s.iloc[:, 0] if isinstance(s, pd.DataFrame) else s


_CODE_SPAN = re.compile(r"`([^`]+)`")


def _code_spans(text: str) -> str:
    """Markdown code spans (`x`) of an (already escaped) text cell as HTML <code>, since a
    table cell is HTML and its backticks would otherwise show as written."""
    return _CODE_SPAN.sub(r"<code>\1</code>", text)


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


def show_lines(lines: Sequence[str], sep: str = "\n") -> None:
    """Display Markdown that is already filled (e.g. bullets built with :func:`md`) exactly as
    it is, joined by ``sep``: unlike :func:`show_md` nothing is filled again, so braces (LaTeX
    such as ``$O_{\\mathrm{repro}}$``) are kept."""
    if isinstance(lines, str) or not all(isinstance(x, str) for x in lines):
        raise TypeError("lines must be a sequence of strings (Markdown already filled)")
    _display_markdown(sep.join(lines))


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
            expect=None, what: str = "", interval=None) -> str:
    """The word for how ``a`` compares with ``b``: ``more`` when a > b + tol, ``less`` when
    a < b - tol, otherwise ``same`` (the default ``tol`` absorbs rounding, so 1/2 computed two
    ways compares as equal).

    ``interval=(lo, hi)``: ``a`` is an estimate with that interval, and the word comes from the
    interval, not the point: ``more`` only when lo > b + tol, ``less`` only when hi < b - tol,
    ``same`` when the interval covers ``b`` (so a sentence never says "beats" of a difference
    whose interval includes zero).

    ``expect`` (a word or a set of words) is the direction the surrounding text relies on; when
    the computed word differs, :class:`ProseError` stops the chapter, so a sentence can never
    state a direction its numbers have stopped supporting. ``what`` names the comparison in the
    error message.
    """
    av, bv = _as_float(a, "a"), _as_float(b, "b")
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
    A verb of gaining ("gains", "gained") must not read a negative number or an interval wholly
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


def fmt_rate(rate, lo=None, hi=None, *, percent: bool = True, digits: int = 0) -> str:
    """A Monte Carlo rate with its interval: ``50% [30%, 70%]`` (``percent=False``: ``0.50 [0.30, 0.70]``)."""
    def one(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "—"
        return f"{100 * float(v):.{digits}f}%" if percent else fmt(v, max(digits, 2))

    core = one(rate)
    return core if lo is None or hi is None else f"{core} [{one(lo)}, {one(hi)}]"


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


# ---------------------------------------------------------------------------- claims
class Claims:
    """A chapter's claims table: each row a claim, its source, the computed value and whether it holds.

    ``kind`` says what kind of evidence a row is: ``"identity"`` (a theorem that holds for any
    rates, checked numerically: it can fail only through a bug, so it checks the code),
    ``"enumeration"`` (a probability computed exactly over every possible sample),
    ``"simulation"`` (a Monte Carlo statement that could fail by chance or by being wrong),
    ``"published"`` (a number the papers print, recomputed) and ``"sanity"`` (two routes in the
    code to one definition agree). :meth:`stop_if_failed` raises with the failing claims, so a
    rendered chapter certifies that every row held on its run.
    """

    KINDS = ("identity", "enumeration", "simulation", "published", "sanity")

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, claim: str, source: str, computed, holds, *, kind: str = "identity") -> None:
        """Record one row (returns nothing, so a notebook cell ending with it prints nothing)."""
        if kind not in self.KINDS:
            raise ValueError(f"kind must be one of {self.KINDS}, got {kind!r}")
        self.rows.append({"claim": claim, "source": source, "computed": str(computed), "holds": bool(holds), "kind": kind})

    def __len__(self) -> int:
        return len(self.rows)

    def frame(self) -> pd.DataFrame:
        return claim_table(self.rows) if self.rows else pd.DataFrame(columns=["claim", "source", "computed", "holds", "kind"])

    def table(self):
        """The claims as a display table with human column names."""
        return table(self.frame(), columns={"claim": "claim", "kind": "kind", "source": "source", "computed": "computed", "holds": "holds"})

    def stop_if_failed(self) -> None:
        failed = [r["claim"] for r in self.rows if not r["holds"]]
        if failed:
            raise ProseError(f"{len(failed)} claim(s) failed: {failed}")


# ---------------------------------------------------------------------------- published figures
PUBLISHED_FILE = "published_figures.csv"


@dataclasses.dataclass(frozen=True)
class Published:
    """A figure one of the papers prints, as transcribed in ``data/paper/published_figures.csv``."""

    key: str
    paper: str
    where: str
    quantity: str
    text: str  # as printed, e.g. "0.113" or "14%"

    @property
    def value(self) -> float:
        """The number (percentages as fractions: "14%" -> 0.14)."""
        t = self.text.strip()
        return float(t[:-1]) / 100 if t.endswith("%") else float(t)

    @property
    def cite(self) -> str:
        """Where the figure is printed: ``2609.32996 §3.2``."""
        return f"{PAPER_IDS.get(self.paper, self.paper)} {self.where}"


#: How the book names the three papers.
PAPER_IDS = {"000": "2609.32996", "001": "2607.03436", "002": "Shihab et al."}


def published_table() -> pd.DataFrame:
    """Every transcribed published figure: key, paper, where, quantity, value (as printed)."""
    from . import datasets

    df = datasets.paper_table(PUBLISHED_FILE)
    df["value"] = df["value"].astype(str)
    df["paper"] = df["paper"].astype(str).str.zfill(3)
    return df


def published(key: str) -> Published:
    """The published figure registered under ``key`` (``KeyError`` naming close keys otherwise)."""
    if not isinstance(key, str):
        raise TypeError(f"key must be a string, got {type(key).__name__}")
    df = published_table().set_index("key")
    if key not in df.index:
        close = [k for k in df.index if key.split(".")[0] in k][:8]
        raise KeyError(f"no published figure {key!r} in data/paper/{PUBLISHED_FILE}; keys like it: {close}")
    r = df.loc[key]
    return Published(key, r["paper"], r["where"], r["quantity"], r["value"])


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


# ---------------------------------------------------------------------------- names
STATISTIC_NAMES = {
    "L": "oracle gap L",
    "D": "disagreement D",
    "oracle_minus_mixture": "oracle − mixture",
    "pass1": "Pass@1 oracle gap",
    "member_spread": "member spread",
    "mean_pairwise_corr": "mean pairwise correlation",
    "frac_rates_differ": "share of prompts whose rates differ by > 0.25",
}
NULL_NAMES = {"redeal": "re-deal", "margin": "margin-preserving", "label-permutation": "label permutation"}


def test_name(statistic: str, tau=None, null: str | None = None) -> str:
    """A human name for one null test: ``oracle gap L at τ = 0.10, margin-preserving``.

    Statistic names from the nulls module (``L``, ``rise_L_2_to_5``, ...) map to words; the null
    names ``redeal``/``margin`` to "re-deal"/"margin-preserving".
    """
    if statistic.startswith("rise_"):
        parts = statistic.split("_")  # rise_L_2_to_5
        name = f"rise of {parts[1]} from {parts[2]} to {parts[4]} members" if len(parts) == 5 else statistic
    else:
        name = STATISTIC_NAMES.get(statistic, statistic)
    if tau is not None and not (isinstance(tau, float) and math.isnan(tau)):
        name += f" at τ = {float(tau):.2f}"
    if null:
        name += f", {NULL_NAMES.get(null, null)}"
    return name


# ---------------------------------------------------------------------------- pictures
def draw_outcomes(ax, grid, *, row_labels: Sequence[str] | None = None, group: int | None = None,
                  title: str | None = None, colors: tuple[str, str] = (PALETTE[0], "#ffffff"),
                  row_notes: Sequence[str] | None = None) -> None:
    """Draw 0/1 outcomes as squares: one row per cell of a pool (or member), one square per response.

    ``grid`` is bool [rows, responses] (filled square: a correct response). ``group`` draws a
    separator every ``group`` rows (e.g. between prompts when rows are prompt x member cells);
    ``row_notes`` are printed at the right of each row (e.g. "3/4 covered").
    """
    from matplotlib.patches import Rectangle

    g = np.asarray(grid, dtype=bool)
    if g.ndim != 2 or 0 in g.shape:
        raise ValueError(f"grid must be a non-empty 2-d array of 0/1 outcomes, got shape {g.shape}")
    R, C = g.shape
    for r in range(R):
        for c in range(C):
            ax.add_patch(Rectangle((c + 0.08, R - 1 - r + 0.08), 0.84, 0.84, facecolor=colors[0] if g[r, c] else colors[1],
                                   edgecolor="0.35", lw=0.8))
        if row_notes is not None:
            ax.text(C + 0.3, R - 1 - r + 0.5, row_notes[r], va="center", fontsize=8)
    if group:
        for r in range(group, R, group):
            ax.axhline(R - r, color="0.2", lw=1.2, xmax=1.0)
    ax.set_xlim(0, C + (4 if row_notes is not None else 0.1))
    ax.set_ylim(-0.1, R + 0.1)
    ax.set_yticks([R - 1 - r + 0.5 for r in range(R)], list(row_labels) if row_labels is not None else [""] * R, fontsize=8)
    ax.set_xticks([])
    ax.tick_params(length=0)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.grid(False)
    if title:
        ax.set_title(title, fontsize=9)


def draw_counts(ax, counts, *, row_labels: Sequence[str], col_labels: Sequence[str], title: str | None = None,
                changes=None, margins: bool = True) -> None:
    """Draw a small count table as a grid of numbers with its row and column totals.

    ``changes`` (same shape, optional) is printed as ``+1``/``-1`` beside the changed cells, e.g.
    to show one 2 x 2 move of the margin-preserving chain.
    """
    from matplotlib.patches import Rectangle

    c = np.asarray(counts)
    if c.ndim != 2 or 0 in c.shape:
        raise ValueError(f"counts must be a non-empty 2-d array, got shape {c.shape}")
    R, C = c.shape
    if len(row_labels) != R or len(col_labels) != C:
        raise ValueError(f"need {R} row labels and {C} column labels")
    ch = None if changes is None else np.asarray(changes)
    for r in range(R):
        for j in range(C):
            y = R - 1 - r
            ax.add_patch(Rectangle((j, y), 1, 1, facecolor="#eef4fa" if ch is None or ch[r, j] == 0 else "#fde7c8",
                                   edgecolor="0.4"))
            ax.text(j + 0.5, y + 0.5, str(int(c[r, j])), ha="center", va="center", fontsize=11)
            if ch is not None and ch[r, j] != 0:
                ax.text(j + 0.92, y + 0.12, f"{int(ch[r, j]):+d}", ha="right", va="bottom", fontsize=7, color=PALETTE[3])
        if margins:
            ax.text(C + 0.35, R - 1 - r + 0.5, str(int(c[r].sum())), ha="center", va="center", fontsize=9, color="0.35")
    if margins:
        for j in range(C):
            ax.text(j + 0.5, -0.35, str(int(c[:, j].sum())), ha="center", va="center", fontsize=9, color="0.35")
    ax.set_xlim(-0.05, C + (0.8 if margins else 0.05))
    ax.set_ylim(-0.7 if margins else -0.05, R + 0.05)
    ax.set_xticks([j + 0.5 for j in range(C)], list(col_labels), fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks([R - 1 - r + 0.5 for r in range(R)], list(row_labels), fontsize=8)
    ax.tick_params(length=0)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.grid(False)
    if title:
        ax.set_title(title, fontsize=9, pad=18)


def draw_saturation(curves: pd.DataFrame, *, panel: str = "pool", frac: float | None = 0.9, ncols: int = 4,
                    colors: tuple[str, str] = (PALETTE[0], PALETTE[1])):
    """Small multiples of held-out saturation curves: one panel per value of ``curves[panel]``.

    ``curves`` holds rows of ``PoolSweep.saturation()`` (dataset, K, share, greedy, random) with a
    ``panel`` column naming the group (e.g. the pool family). In each panel every dataset is a thin
    line (greedy solid, random-pool mean dashed), and when all its datasets have the same M the
    median over them at each share is a thick line with markers; ``frac`` draws the reference line
    at that share of the whole pool's coverage (None: none). Colours and line styles are both in the
    legend, which takes the panel after the last group. Returns the figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    need = {panel, "dataset", "K", "share", "greedy", "random"}
    if not isinstance(curves, pd.DataFrame) or not need <= set(curves.columns):
        raise ValueError(f"curves must be a DataFrame with columns {sorted(need)} (PoolSweep.saturation() "
                         f"plus {panel!r}), got {type(curves).__name__}"
                         + (f" without {sorted(need - set(curves.columns))}" if isinstance(curves, pd.DataFrame) else ""))
    if curves.empty:
        raise ValueError("curves must have at least one row")
    if not isinstance(ncols, (int, np.integer)) or isinstance(ncols, bool) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    if frac is not None and not (isinstance(frac, (int, float)) and 0 < frac <= 1):
        raise ValueError(f"frac must lie in (0, 1] or be None, got {frac!r}")
    groups = list(dict.fromkeys(curves[panel]))
    slots = len(groups) + 1  # one panel per group and one for the legend
    ncols = min(ncols, slots)
    nrows = -(-slots // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.9 * ncols, 2.5 * nrows + 0.3), sharex=True, sharey=True,
                             squeeze=False)
    flat = axes.ravel()
    styles = {"greedy": "-", "random": "--"}
    for ax, name in zip(flat, groups, strict=False):
        d = curves[curves[panel] == name]
        for _, c in d.groupby("dataset", sort=False):
            for col, ls in styles.items():
                ax.plot(c["share"], c[col], color=colors[col == "random"], ls=ls, lw=0.8, alpha=0.45)
        Ks = sorted(set(d["K"].astype(int)))
        if len(Ks) == 1:
            med = d.groupby("share")[["greedy", "random"]].median()
            for col, ls in styles.items():
                ax.plot(med.index, med[col], color=colors[col == "random"], ls=ls, lw=2.2, marker="o", ms=3)
        if frac is not None:
            ax.axhline(frac, color="0.35", ls=":", lw=1)
        n = d["dataset"].nunique()
        m = f"{Ks[0]}" if len(Ks) == 1 else f"{Ks[0]}-{Ks[-1]}"
        ax.set_title(f"{name}\n{n} dataset{'s' if n != 1 else ''}, M = {m}", fontsize=9)
    for ax in flat[len(groups):]:
        ax.axis("off")
    for ax in flat[max(0, len(groups) - ncols):len(groups)]:  # no panel below: label the axis
        ax.set_xlabel("share of alternatives kept")
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("coverage / whole pool")
    handles = [Line2D([], [], color=colors[0], lw=0.8, alpha=0.6, label="greedy, one dataset"),
               Line2D([], [], color=colors[1], ls="--", lw=0.8, alpha=0.6, label="random pools (mean), one dataset"),
               Line2D([], [], color=colors[0], lw=2.2, marker="o", ms=3, label="greedy, median over datasets"),
               Line2D([], [], color=colors[1], ls="--", lw=2.2, marker="o", ms=3,
                      label="random pools, median over datasets")]
    if frac is not None:
        handles.append(Line2D([], [], color="0.35", ls=":", lw=1, label=f"{frac:.0%} of the whole pool"))
    flat[len(groups)].legend(handles=handles, loc="center", fontsize=8)
    fig.tight_layout()
    return fig
