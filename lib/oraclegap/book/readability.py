"""Readability limits of an executed chapter: an appendix no longer than its main line, long
tables shown as a summary with a CSV download, and figure text large enough at the width a page
shows it.

Each check reads an executed notebook (``chapters/NN_*.ipynb``, written by the book build):

* **words** (:func:`chapter_words`): the prose of Markdown cells and of Markdown outputs (sentences
  built from computed values), split at the ``##`` headings into the *main line*, the
  *exercises* (a ``## Exercises`` section) and the *appendix* (from the first ``##`` heading
  that names an appendix, ``## Appendix: ... {#sec-...-appendix}``, to the end). Words are
  counted as :mod:`oraclegap.book.measure` counts them on a rendered page: runs of letters or
  digits, a math expression one word; headings, code, tables, figures and collapsed callouts
  (folded solutions) do not count;
* **tables** (:func:`long_tables`): the body rows of every HTML table an output shows; a table
  with more than :data:`MAX_TABLE_ROWS` rows must link a CSV file (``[...](...csv)``) in its own
  cell (caption or output) or in the cell right after it;
* **figure text** (:func:`figure_text`): the smallest text each figure drew, as recorded with
  its PNG by :func:`oraclegap.report.use_style` (:data:`oraclegap.report.style.FIGURE_TEXT_KEY`),
  in pixels once the page shows the image: ``pt * dpi / 72`` pixels in the image, scaled by
  ``min(1, column / width)`` where ``width`` is the image's width in pixels and ``column`` the
  page's text column (:data:`COLUMN_PX`; a page never enlarges an image).
* **symbols in table headers** (:func:`symbol_headers`): a header cell of an HTML table that
  writes a symbol as plain text -- a letter with an underscore and a short subscript (``G_b``,
  ``O_repro``), a letter with a hat (``L̂``) or with Unicode subscripts (``pᵣₑ``) -- outside a
  math span, where the prose beside it typesets the symbol (``$G_b$``; :func:`oraclegap.report.table`
  passes math to the page's MathJax).

:func:`readability_problems` turns the four into one line per problem.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from ..report.markdown import math_spans
from ..report.style import FIGURE_TEXT_KEY
from .measure import _WORD
from .prose import html_tables

__all__ = ["MAX_TABLE_ROWS", "COLUMN_PX", "MIN_TEXT_PX", "ChapterWords", "LongTable",
           "FigureText", "SYMBOL", "prose_words", "chapter_words", "long_tables", "figure_text",
           "readability_problems"]

MAX_TABLE_ROWS = 25  # body rows a table may show without a CSV download of the whole
COLUMN_PX = 800  # width of the book's text column in CSS pixels (Quarto's default page)
MIN_TEXT_PX = 9.0  # smallest figure text, in pixels at the width the page shows the figure

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_APPENDIX = re.compile(r"appendix", re.I)
_EXERCISES = re.compile(r"^exercises\b", re.I)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_COLLAPSED = re.compile(r"^:::+\s*\{[^}\n]*collapse=\"?true\"?[^}\n]*\}.*?^:::+\s*$", re.M | re.S)
_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?!\s)[^$\n]+?(?<![\s\\])\$", re.S)
_CODE = re.compile(r"`[^`\n]*`")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_ATTRS = re.compile(r"\{[#.][^}\n]*\}")
_TAG = re.compile(r"<[^>\n]+>")
_CSV_LINK = re.compile(r"\]\([^)\s]*\.csv\)|href=\"[^\"]*\.csv\"", re.I)


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def prose_words(markdown: str) -> int:
    """The words of a Markdown text that a reader reads as prose: headings, code (fenced and
    inline), collapsed callouts, images, HTML tags and Pandoc attributes (``{#sec-x}``) do not
    count; a link counts its text, a math expression (``$...$``, ``$$...$$``) one word."""
    if not isinstance(markdown, str):
        raise TypeError(f"markdown must be a string, got {type(markdown).__name__}")
    text = _COLLAPSED.sub(" ", _FENCE.sub(" ", markdown))
    text = "\n".join(ln for ln in text.splitlines()
                     if not _HEADING.match(ln) and not ln.startswith(":::"))
    text = _MATH.sub(" x ", text)
    text = _LINK.sub(r" \1 ", _IMAGE.sub(" ", _CODE.sub(" ", text)))
    text = _TAG.sub(" ", _ATTRS.sub(" ", text))
    return len(_WORD.findall(text))


def _read(notebook) -> list[dict]:
    path = Path(notebook)
    if not path.is_file():
        raise ValueError(f"notebook must be an executed notebook file, got {str(notebook)!r} "
                         "(no such file)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a Jupyter notebook ({exc})") from None


def _outputs(cell: dict, mime: str) -> list[str]:
    return [_text(o["data"][mime]) for o in cell.get("outputs", []) if mime in o.get("data", {})]


def _options(cell: dict) -> dict[str, str]:
    """A code cell's ``#| key: value`` options (the first line of each value)."""
    opts = {}
    for ln in _text(cell.get("source", "")).splitlines():
        m = re.match(r"#\|\s*([\w-]+):\s*(.*)$", ln)
        if m:
            opts[m.group(1)] = m.group(2)
    return opts


@dataclass(frozen=True)
class ChapterWords:
    """Prose words of one executed chapter by part: main line, exercises and appendix."""

    main: int
    exercises: int
    appendix: int


def chapter_words(notebook) -> ChapterWords:
    """The prose words (:func:`prose_words`) of an executed chapter's main line, exercises and
    appendix: Markdown cells and Markdown outputs in order, each part running from the ``##``
    heading that opens it (an appendix runs to the end, exercises aside)."""
    counts = {"main": 0, "exercises": 0, "appendix": 0}
    part, seen_appendix = "main", False
    for cell in _read(notebook):
        texts = [_text(cell.get("source", ""))] if cell.get("cell_type") == "markdown" \
            else _outputs(cell, "text/markdown")
        for text in texts:
            chunk: list[str] = []
            for ln in text.splitlines():
                m = _HEADING.match(ln)
                if m and len(m.group(1)) == 2:
                    counts[part] += prose_words("\n".join(chunk))
                    chunk = []
                    title = m.group(2)
                    if _APPENDIX.search(title):
                        part, seen_appendix = "appendix", True
                    elif _EXERCISES.match(title):
                        part = "exercises"
                    else:
                        part = "appendix" if seen_appendix else "main"
                chunk.append(ln)
            counts[part] += prose_words("\n".join(chunk))
    return ChapterWords(**counts)


class _BodyRows(HTMLParser):
    """Body rows of each outermost table of an HTML text (rows outside a ``<thead>``)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[int] = []
        self._depth = 0
        self._head = 0

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._depth += 1
            if self._depth == 1:
                self.rows.append(0)
        elif tag == "thead" and self._depth == 1:
            self._head += 1
        elif tag == "tr" and self._depth == 1 and not self._head:
            self.rows[-1] += 1

    def handle_endtag(self, tag):
        if tag == "table":
            self._depth = max(0, self._depth - 1)
        elif tag == "thead" and self._depth == 1:
            self._head = max(0, self._head - 1)


@dataclass(frozen=True)
class LongTable:
    """A shown table with more body rows than the limit, and whether a CSV download is linked."""

    label: str
    rows: int
    csv_linked: bool


def _links_csv(cell: dict) -> bool:
    texts = [_text(cell.get("source", ""))] if cell.get("cell_type") == "markdown" \
        else [_text(cell.get("source", "")), *_outputs(cell, "text/markdown"),
              *_outputs(cell, "text/html")]
    return any(_CSV_LINK.search(t) for t in texts)


def long_tables(notebook, max_rows: int = MAX_TABLE_ROWS) -> list[LongTable]:
    """The HTML tables of an executed chapter with more than ``max_rows`` body rows, each with its
    cell's label (``#| label:``, else its cell number) and whether that cell or the next one
    links a CSV file."""
    if not isinstance(max_rows, int) or max_rows < 1:
        raise ValueError(f"max_rows must be a positive integer, got {max_rows!r}")
    cells, out = _read(notebook), []
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        for html in _outputs(cell, "text/html"):
            parser = _BodyRows()
            parser.feed(html)
            for n in parser.rows:
                if n > max_rows:
                    linked = _links_csv(cell) or (i + 1 < len(cells) and _links_csv(cells[i + 1]))
                    out.append(LongTable(_options(cell).get("label") or f"cell {i}", n, linked))
    return out


#: a symbol written as plain text: a letter with ``_`` and a subscript of at most six letters or
#: digits (``G_b``, ``Δ_lower``, ``O_{repro}``), a letter with a combining hat (``L̂``), a letter
#: with Unicode subscripts (``pᵣₑ``); identifiers (``p_holm_across``) do not match
SYMBOL = re.compile(r"(?<![\w\\])[^\W\d_]\u0302?_(?:\{[^\W_]{1,6}\}|[^\W_]{1,6})(?![\w\u0302])"
                    r"|(?<![\w\\])[^\W\d_]\u0302"
                    r"|(?<![\w\\])[^\W\d_][\u2090-\u209c\u1d62-\u1d6a\u2080-\u2089\u2c7c]+(?!\w)")


def symbol_headers(notebook) -> list[tuple[str, str]]:
    """(cell label, header text) of each table header cell of an executed chapter that writes a
    symbol (:data:`SYMBOL`) outside its math spans (``\\(...\\)``, ``$...$``) and outside
    ``<code>``."""
    out = []
    for i, cell in enumerate(_read(notebook)):
        label = _options(cell).get("label") or f"cell {i}"
        for html in _outputs(cell, "text/html"):
            for rows in html_tables(html):
                for row in rows:
                    for text, is_head in row:
                        text = text.replace("\u200b", "").strip()
                        plain = text
                        for a, b in reversed(math_spans(text)):
                            plain = plain[:a] + " " + plain[b:]
                        if is_head and SYMBOL.search(plain):
                            out.append((label, text))
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class FigureText:
    """One figure of an executed chapter: its image width, its smallest text in points at its
    resolution (``None`` when the figure carries no record), and that text."""

    label: str
    width_px: int
    pt: float | None
    dpi: float | None
    text: str

    def shown_px(self, column_px: float = COLUMN_PX) -> float | None:
        """The smallest text's height in pixels at the width the page shows the image."""
        if self.pt is None or self.dpi is None:
            return None
        if not column_px > 0:
            raise ValueError(f"column_px must be positive, got {column_px!r}")
        return self.pt * self.dpi / 72 * min(1.0, column_px / self.width_px)


def _png_width(data: str) -> int:
    head = base64.b64decode(data[:44] + "=" * (-len(data[:44]) % 4))
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("an image/png output is not a PNG")
    return struct.unpack(">I", head[16:20])[0]


def figure_text(notebook) -> list[FigureText]:
    """Every PNG figure an executed chapter shows, with the smallest-text record that
    :func:`oraclegap.report.use_style` stored beside it (``pt`` is ``None`` where none is)."""
    out = []
    for i, cell in enumerate(_read(notebook)):
        label = _options(cell).get("label") or f"cell {i}"
        for o in cell.get("outputs", []):
            if "image/png" not in o.get("data", {}):
                continue
            rec = (o.get("metadata") or {}).get("image/png", {}).get(FIGURE_TEXT_KEY)
            width = _png_width(_text(o["data"]["image/png"]).replace("\n", ""))
            out.append(FigureText(label, width, None if rec is None else float(rec["pt"]),
                                  None if rec is None else float(rec["dpi"]),
                                  "" if rec is None else str(rec.get("text", ""))))
    return out


def readability_problems(notebook, *, max_rows: int = MAX_TABLE_ROWS, column_px: float = COLUMN_PX,
                         min_text_px: float = MIN_TEXT_PX) -> list[str]:
    """One line per problem of an executed chapter: an appendix with more words than the main
    line, a table over ``max_rows`` body rows without a CSV link, a table header that writes a
    symbol outside math, a figure without a text
    record, and a figure whose smallest text shows below ``min_text_px`` pixels."""
    name = Path(notebook).name
    problems = []
    w = chapter_words(notebook)
    if w.appendix > w.main:
        problems.append(f"{name}: the appendix has {w.appendix} words, more than the main "
                        f"line's {w.main}")
    for t in long_tables(notebook, max_rows):
        if not t.csv_linked:
            problems.append(f"{name}: {t.label} shows {t.rows} rows (limit {max_rows}) and links "
                            "no CSV file")
    for label, text in symbol_headers(notebook):
        problems.append(f"{name}: {label} heads a column {text!r}, a symbol outside math "
                        f"(write it as the prose does, e.g. $G_b$)")
    for f in figure_text(notebook):
        px = f.shown_px(column_px)
        if px is None:
            problems.append(f"{name}: {f.label} carries no record of its text (executed without "
                            "report.use_style)")
        elif px < min_text_px:
            problems.append(f"{name}: {f.label}'s text {f.text!r} shows at {px:.1f} px (at "
                            f"least {min_text_px:g}): {f.pt:g} pt at {f.dpi:g} dpi in a "
                            f"{f.width_px}-px image shown {min(column_px, f.width_px):g} px wide")
    return problems
