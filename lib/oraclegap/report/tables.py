"""Tables as the book shows them: one function that formats a DataFrame for display (numbers,
p-values, yes/no, display names, escaped text that may break inside long identifiers) with
reproducible HTML ids, and the CSV download that carries a long table's every row.
"""

from __future__ import annotations

import hashlib
import html as _html
import itertools
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .markdown import MATH_SPAN
from .names import display_name
from .numbers import fmt, fmt_p
from .prose import ProseError

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
    cells and column names are HTML-escaped, so a claim such as "0 <= L <= D" shows as written;
    outside math they may break after ``_`` and ``/`` (a zero-width space), so identifiers such
    as ``p_holm_across_pools`` do not force a table wider than the book's text column. Math in
    a column name or text cell (``$G_b$`` or ``\\(G_b\\)``) is kept whole as an inline
    ``\\(...\\)`` span, which the page's MathJax typesets as the prose's symbols. A text cell
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
            texts[col] = lambda v: v if not isinstance(v, str) else _code_spans(_shown_text(display_name(v)))
    sty = df.style.format(fmts, na_rep="—", escape="html").format_index(lambda c: _shown_text(str(c)),
                                                                        axis="columns")
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
    parts = [part.strip() for part in plain_symbols(name).split(",")]
    return any(_P_COLUMN.match(part) or _P_COLUMN.match(part.rsplit(" ", 1)[-1]) for part in parts if part)


_TEX_MARKUP = re.compile(r"\\\(|\\\)|\$|\\(?:mathrm|text|operatorname)\b|[{}]")


def plain_symbols(text: str) -> str:
    """``text`` with the markup of its math removed (delimiters, ``\\mathrm``, braces):
    ``\\(p_{\\mathrm{re}}\\)`` reads ``p_re``, so name patterns match a symbol however it is
    written."""
    return _TEX_MARKUP.sub("", text)


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


def _shown_text(text: str) -> str:
    """A column name or text cell as the table shows it: HTML-escaped; each math span written
    ``\\(tex\\)`` and otherwise untouched (MathJax reads the escaped text back as TeX); the
    text between them breakable (:func:`_breakable`)."""
    out, at = [], 0
    for m in MATH_SPAN.finditer(text):
        out += [_breakable(_html.escape(text[at:m.start()])),
                "\\(" + _html.escape(m.group("tex") or m.group("dollar")) + "\\)"]
        at = m.end()
    return "".join(out) + _breakable(_html.escape(text[at:]))


#: A chapter's data download: ``NN_name-what.csv``, written beside the executed notebook
#: (``chapters/``); the book copies it to ``downloads/`` and the chapter's text links it there.
_DOWNLOAD_NAME = re.compile(r"\d\d_[a-z0-9_]+-[a-z0-9][a-z0-9-]*")


#: Environment variable naming the folder :func:`csv_download` writes to, set by the book's
#: executor in each chapter's kernel to the executed notebook's folder.
DOWNLOADS_DIR_ENV = "OG_DOWNLOADS_DIR"


def _chapters_folder() -> Path:
    """``chapters/`` of the book project at or above the working directory (the nearest folder
    holding ``_quarto.yml``), or ``./chapters`` outside a project: a chapter run from
    ``notebooks/`` (a notebook's own folder in Jupyter) writes where the build reads."""
    here = Path.cwd().resolve()
    return next((d for d in (here, *here.parents) if (d / "_quarto.yml").is_file()), here) \
        / "chapters"


def csv_download(df: pd.DataFrame, name: str, *, text: str = "a CSV file",
                 folder=None) -> str:
    """Write every row of ``df`` to ``folder/name.csv`` (``name`` is the chapter's stem and what
    the file holds: ``02_seed_pool-p000-reruns``) and return the Markdown link a chapter's text
    gives it, ``[text](../downloads/name.csv)``: a long table shows a summary on the page and
    keeps its rows in this file. The book's build copies ``chapters/NN_name-*.csv`` into the
    rendered book's ``downloads/`` folder, which the link reaches from a chapter's page.
    ``folder`` defaults to the folder named by the environment variable ``OG_DOWNLOADS_DIR``
    (:data:`DOWNLOADS_DIR_ENV`; the book's executor sets it to the executed notebook's folder, so
    a parameter check or a test run into another folder never overwrites the files the build
    copies), else the project's ``chapters/`` whatever the working directory
    (:func:`_chapters_folder`)."""
    from .._io import atomic_write

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if not isinstance(name, str) or not _DOWNLOAD_NAME.fullmatch(name):
        raise ValueError("name must be a chapter's stem and what the file holds, like "
                         f"'02_seed_pool-bh-tests', got {name!r}")
    if not isinstance(text, str) or not text.strip() or "]" in text:
        raise ValueError(f"text must be the link's words (no ']'), got {text!r}")
    if folder is None:
        folder = os.environ.get(DOWNLOADS_DIR_ENV) or _chapters_folder()
    path = Path(folder) / f"{name}.csv"
    atomic_write(path, df.to_csv(index=False))
    return f"[{text}](../downloads/{path.name})"
