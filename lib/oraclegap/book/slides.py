"""The class deck: one section per block of the instructors' 90-minute plan, from the executed chapters.

``python -m oraclegap.book slides`` (and ``make book``, which puts it at ``_book/slides/``) renders
a Quarto revealjs deck that follows the plan table on the instructors' page (``instructors.qmd``,
section "A 90-minute plan"), block by block and in its order. A block names where it teaches
from in its last column: cross-references to sections of the executed chapters (``@sec-...``)
and links to pages of the book (``[text](page.qmd)``). For each block the deck has

- a title slide: the block's minutes and what it does, where in the book, and the opening
  sentence of each place it names;
- up to :data:`FIGURES_PER_BLOCK` figure slides: the labelled figures of the named sections, each
  with the first sentence of its caption as the slide title and the chapter's own reading of it
  (the first Markdown output after the figure) below;
- a table slide for each table the block names itself (``@tbl-...``): the table as the executed
  chapter printed it (:func:`table_markdown`), under the first sentence of its caption, with the
  chapter's reading of it below; and one for each page the block links that holds a table: the
  page's first table, under the heading above it. A slide projects a table only as far as it can
  be read (:func:`compact_table`): at most :data:`MAX_TABLE_ROWS` rows and
  :data:`MAX_TABLE_COLUMNS` columns, :data:`MAX_CELL_WORDS` words a cell and
  :data:`MAX_TABLE_WORDS` words in all; a larger table keeps its first column and the columns
  that fit, and the slide links the whole table in the book;
- a takeaway slide: what the block teaches, as the chapter it draws from states it -- the
  bullet of the chapter's takeaways that best matches the block (:func:`block_findings`: the
  computed values and words it shares with the block's description and sections; each bullet
  serves one block); a block with no such finding gets the first sentences of its sections'
  other readings.

Every text is the chapters' own, computed on the run (nothing is typed or recomputed here), cut
to whole sentences of at most :data:`MAX_WORDS` words of prose per slide (:func:`short_text`; a
table, like a figure, is projected, not counted as prose, and held to the table limits above
instead: :func:`table_fits`). A section
named by ``@sec-x`` reaches from its heading to the next heading that carries an identifier, or
to the chapter's takeaways, exercises or appendix. The deck renders offline like the book
(Quarto ships reveal.js; math as plain HTML, since reveal.js's math plugin would load MathJax 2
from a CDN).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from .structure import EXECUTED_DIR, cell_options, quarto_book, quarto_pages

__all__ = [
    "PLAN_PAGE",
    "PLAN_HEADING",
    "MAX_WORDS",
    "FIGURES_PER_BLOCK",
    "PlanBlock",
    "Item",
    "plan_blocks",
    "chapter_items",
    "section_items",
    "readings_after",
    "chapter_findings",
    "finding_score",
    "block_findings",
    "short_text",
    "slide_words",
    "MAX_TABLE_ROWS",
    "MAX_TABLE_COLUMNS",
    "MAX_CELL_WORDS",
    "MAX_TABLE_WORDS",
    "table_cells",
    "table_fits",
    "compact_table",
    "table_markdown",
    "page_table",
    "deck_slides",
    "slide_deck",
    "write_slides",
]

PLAN_PAGE = "instructors.qmd"
PLAN_HEADING = "A 90-minute plan"
MAX_WORDS = 60
#: the largest table a slide projects: body rows, columns, words in one cell, words in all cells
MAX_TABLE_ROWS = 10
MAX_TABLE_COLUMNS = 8
MAX_CELL_WORDS = 12
MAX_TABLE_WORDS = 150
FIGURES_PER_BLOCK = 3
_TITLE_CHARS = 90
_STOP_HEADINGS = ("takeaways", "exercises", "appendix")


@dataclass(frozen=True)
class PlanBlock:
    """One row of the plan table: ``minutes`` ("10-25"), ``what`` the block does, ``where`` (the
    cell as written), the section identifiers it cross-references (``refs``, in order) and the
    pages it links (``pages``: (link text, file))."""

    minutes: str
    what: str
    where: str
    refs: tuple[str, ...]
    pages: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Item:
    """One thing of an executed chapter, in reading order: a heading (``kind`` "heading": its
    ``level``, ``text`` and identifier ``ident``), a labelled figure ("fig": ``ident`` its label,
    ``text`` its caption, ``png`` the image), a labelled table ("tbl": ``table`` the printed table
    as a Markdown pipe table, empty when the cell printed none) or a Markdown output of a code
    cell ("md": ``text``; exercise solutions never count)."""

    kind: str
    text: str = ""
    ident: str | None = None
    level: int = 0
    png: bytes | None = None
    table: str = ""


# ---------------------------------------------------------------------------- text
_XREF = re.compile(r"\s*\(?@((?:sec|fig|tbl|eq)-[\w-]*\w)\)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z$*`(\[])")


def _plain(markdown: str) -> str:
    """One paragraph of Markdown from a notebook output or a page: callout fences, headings,
    tables, HTML comments and code blocks dropped, a leading "Reading:" label dropped, the book's
    cross-references (which the deck cannot resolve) replaced by "(in the book)"."""
    text = re.sub(r"<!--.*?-->", " ", markdown, flags=re.S)
    text = re.sub(r"^```.*?^```", " ", text, flags=re.S | re.M)
    lines = [ln.strip() for ln in text.splitlines()]
    keep = [ln for ln in lines if ln and not ln.startswith((":::", "#", "|", "<"))]
    text = " ".join(keep)
    text = re.sub(r"^\**Reading\**:\s*", "", text)
    text = re.sub(r"(?<!!)\[([^\]]+)\]\([^)]*\)", r"\1", text)  # a link's text: the deck has no pages to link
    text = _XREF.sub(" (in the book)", text)
    return re.sub(r"\s+", " ", text).strip()


#: a sentence in which a page speaks of itself ("This page lists them", "One page for ...")
_SELF_REFERENCE = re.compile(r"\b(?:this|one) page\b", re.I)


def _balanced(text: str) -> bool:
    """No inline math, parenthesis or bracket left open in ``text``."""
    return text.count("$") % 2 == 0 and text.count("(") == text.count(")") and text.count("[") == text.count("]")


def _sentences(text: str) -> list[str]:
    """Sentences of ``text``, never split inside inline math, parentheses or brackets."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        if _balanced(text[start:m.start()]):
            out.append(text[start:m.start()].strip())
            start = m.end()
    tail = text[start:].strip()
    return out + ([tail] if tail else [])


def _words(text: str) -> int:
    return len(text.split())


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def short_text(text: str, limit: int = MAX_WORDS, *, whole: bool = False) -> str:
    """The leading whole sentences of ``text`` (Markdown, cleaned to one paragraph) that fit in
    ``limit`` words, ending in a full stop. When even the first does not fit: empty with
    ``whole``; else its leading clauses (cut at "; " or ": ") that fit with an ellipsis, and
    failing that its first words (never inside inline math, parentheses or brackets)."""
    sentences = [x for x in _sentences(_plain(text)) if x[-1:] in ".!?"]
    kept: list[str] = []
    for x in sentences:
        if _words(" ".join(kept + [x])) > limit:
            break
        kept.append(x)
    if kept or whole or not sentences or limit < 2:
        return _capital(" ".join(kept))
    first, budget = sentences[0], limit - 1  # the ellipsis is a word too
    clause = word = ""
    for m in re.finditer(r"[;:]?\s", first):
        cand = first[:m.start()].strip()
        if _words(cand) > budget:
            break
        if _balanced(cand):
            word = cand
            if m.group(0)[0] in ";:":
                clause = cand
    part = clause or word
    return _capital(part.rstrip(";:,") + " …") if part else ""


def slide_words(slide: str) -> int:
    """Words of prose a reader sees on one slide of the deck's Markdown: its heading and text,
    without images, tables (pipe-table rows), attribute blocks or speaker notes."""
    text = re.sub(r"^\|.*$", " ", slide, flags=re.M)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)(\{[^}]*\})?", " ", text)
    text = re.sub(r"^#+\s*", "", text, flags=re.M)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"^:::.*$", " ", text, flags=re.M)
    return _words(text)


_ALIGN_ROW = re.compile(r"^\|[\s:|-]+\|$")


def table_cells(table: str) -> list[list[str]]:
    """The cells of a Markdown pipe table, row by row, header first (the alignment row and any
    line that is not a table row left out; ``\\|`` inside a cell stays in it)."""
    rows = []
    for line in table.splitlines():
        line = line.strip()
        if not line.startswith("|") or _ALIGN_ROW.match(line):
            continue
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def _table_text(rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0]),
                      *("| " + " | ".join(r) + " |" for r in rows[1:])])


def table_fits(table: str) -> bool:
    """Whether a slide can project the pipe table ``table`` as it is: at most
    :data:`MAX_TABLE_ROWS` body rows and :data:`MAX_TABLE_COLUMNS` columns, no cell (header
    included) over :data:`MAX_CELL_WORDS` words and at most :data:`MAX_TABLE_WORDS` words in all."""
    rows = table_cells(table)
    cells = [c for r in rows for c in r]
    width = max((len(r) for r in rows), default=0)
    return (len(rows) - 1 <= MAX_TABLE_ROWS and width <= MAX_TABLE_COLUMNS
            and all(_words(c) <= MAX_CELL_WORDS for c in cells)
            and sum(_words(c) for c in cells) <= MAX_TABLE_WORDS)


def compact_table(table: str) -> tuple[str, list[str], int]:
    """The part of the pipe table ``table`` a slide can project (:func:`table_fits`), the headers
    of the columns it leaves out and how many body rows it leaves out: its first
    :data:`MAX_TABLE_ROWS` body rows, its first column and then, left to right, each other column
    whose cells all have at most :data:`MAX_CELL_WORDS` words, as long as the table stays within
    :data:`MAX_TABLE_COLUMNS` columns and :data:`MAX_TABLE_WORDS` words. The part is "" when not
    even the first column and one other fit."""
    rows = table_cells(table)
    if not rows:
        return "", [], 0
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    shown, cut_rows = rows[:MAX_TABLE_ROWS + 1], max(len(rows) - 1 - MAX_TABLE_ROWS, 0)
    column = [[r[j] for r in shown] for j in range(width)]
    if any(_words(c) > MAX_CELL_WORDS for c in column[0]):
        return "", rows[0], cut_rows
    keep, words = [0], sum(_words(c) for c in column[0])
    for j in range(1, width):
        w = sum(_words(c) for c in column[j])
        if (len(keep) < MAX_TABLE_COLUMNS and words + w <= MAX_TABLE_WORDS
                and all(_words(c) <= MAX_CELL_WORDS for c in column[j])):
            keep.append(j)
            words += w
    left = [rows[0][j] for j in range(width) if j not in keep]
    if len(keep) < 2 <= width:
        return "", left, cut_rows
    return _table_text([[r[j] for j in keep] for r in shown]), left, cut_rows


class _TableCells(HTMLParser):
    """The rows of the first table of an HTML text, each a list of cell texts (code spans kept in
    backticks, math spans as written)."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._tables = 0

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._tables += 1
        elif self._tables == 1 and tag == "tr":
            self.rows.append([])
        elif self._tables == 1 and tag in ("td", "th") and self.rows:
            self._cell = []
        elif self._cell is not None and tag == "code":
            self._cell.append("`")

    def handle_endtag(self, tag):
        if self._cell is not None and tag == "code":
            self._cell.append("`")
        elif self._cell is not None and tag in ("td", "th"):
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _cell_text(text: str) -> str:
    """One table cell as pipe-table Markdown: one line, math ``\\(...\\)`` as ``$...$``, no
    zero-width spaces, ``|`` escaped."""
    text = text.replace("\u200b", "").replace("\\(", "$").replace("\\)", "$")
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip()


def table_markdown(html: str) -> str:
    """The first table of an HTML output (a chapter's printed table) as a Markdown pipe table:
    its first row the header, every cell's text as printed; empty when the output holds no
    table."""
    parser = _TableCells()
    parser.feed(html)
    rows = [[_cell_text(c) for c in r] for r in parser.rows if r]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join([lines[0], "|" + "---|" * width, *lines[1:]])


def page_table(root: Path, file: str) -> tuple[str, str]:
    """(the heading above it, the table) for the first pipe table of a Quarto page of the book;
    ("", "") when the page holds none. Links keep their text (the deck has no pages to link)."""
    text = (Path(root) / file).read_text(encoding="utf-8")
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines[:-1])
                  if ln.startswith("|") and re.match(r"^\|[\s:|-]+\|$", lines[i + 1].strip())), None)
    if start is None:
        return "", ""
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    heading = next((_heading_parts(m.group(2))[0] for ln in reversed(lines[:start])
                    for m in [_HEADING.match(ln)] if m), "")
    table = "\n".join(re.sub(r"(?<!!)\[([^\]]+)\]\([^)]*\)", r"\1", ln) for ln in lines[start:end])
    return heading, table


# ---------------------------------------------------------------------------- the plan
def plan_blocks(root: Path) -> list[PlanBlock]:
    """The rows of the plan table of ``instructors.qmd`` (the first table under the heading
    "A 90-minute plan"), in order; raises ``ValueError`` when the page, the heading or the table
    is missing."""
    page = Path(root) / PLAN_PAGE
    try:
        text = page.read_text(encoding="utf-8")
    except OSError:
        raise ValueError(f"{page} is missing: the slides follow its 90-minute plan") from None
    m = re.search(r"^##\s+" + re.escape(PLAN_HEADING) + r".*$", text, re.M)
    if not m:
        raise ValueError(f"{page} has no '## {PLAN_HEADING}' section: the slides follow its plan table")
    rows = []
    for line in text[m.end():].splitlines():
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    body = [r for r in rows[2:] if len(r) >= 3]  # header and alignment rows first
    if not body:
        raise ValueError(f"{page}: the '{PLAN_HEADING}' section holds no table with minutes, what and where")
    blocks = []
    for minutes, what, where, *_ in body:
        refs = tuple(re.findall(r"@((?:sec|fig|tbl)-[\w-]*\w)", where))
        pages = tuple(re.findall(r"\[([^\]]+)\]\(([^)#]+\.qmd)[^)]*\)", where))
        blocks.append(PlanBlock(minutes=minutes, what=what, where=where, refs=refs, pages=pages))
    return blocks


# ---------------------------------------------------------------------------- chapters
def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _markdown_of(output: dict) -> str:
    text = (output.get("data") or {}).get("text/markdown", "")
    return "".join(text) if isinstance(text, list) else str(text)


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$", re.M)


def _heading_parts(raw: str) -> tuple[str, str | None]:
    m = re.search(r"\{([^}]*)\}\s*$", raw)
    ident = None
    if m:
        ids = re.findall(r"#([\w-]+)", m.group(1))
        ident = ids[0] if ids else None
        raw = raw[:m.start()]
    return raw.strip(), ident


def chapter_items(nb: dict) -> list[Item]:
    """The headings, labelled figures and tables and Markdown outputs of one executed chapter
    (nbformat JSON as a dict), in reading order (:class:`Item`). A heading's paragraphs come as
    "prose" items (its typed text, for openings)."""
    from .editions import is_solution

    items: list[Item] = []
    for cell in nb.get("cells", []):
        src = _source(cell)
        if cell.get("cell_type") == "markdown":
            pos = 0
            for m in _HEADING.finditer(src):
                items.append(Item("prose", _first_paragraph(src[pos:m.start()])))
                title, ident = _heading_parts(m.group(2))
                items.append(Item("heading", title, ident, len(m.group(1))))
                pos = m.end()
            items.append(Item("prose", _first_paragraph(src[pos:])))
            continue
        if cell.get("cell_type") != "code":
            continue
        opts = cell_options(src)[0]
        label = opts.get("label", "")
        outs = cell.get("outputs", [])
        if label.startswith("fig-"):
            png = next((o["data"]["image/png"] for o in outs if "image/png" in (o.get("data") or {})), None)
            if png:
                data = "".join(png) if isinstance(png, list) else png
                items.append(Item("fig", opts.get("fig-cap", ""), label, png=base64.b64decode(data)))
        elif label.startswith("tbl-"):
            items.append(Item("tbl", opts.get("tbl-cap", ""), label, table=_printed_table(outs)))
        for o in outs:
            md = _markdown_of(o).strip()
            if md and not is_solution(o) and not md.startswith("|"):
                items.append(Item("md", md))
    return [it for it in items if it.kind != "prose" or it.text]


def _printed_table(outputs: list[dict]) -> str:
    """The first table a code cell printed, as a Markdown pipe table: an HTML table (a styled
    frame) or a Markdown one; empty when it printed none."""
    for o in outputs:
        data = o.get("data") or {}
        html = data.get("text/html")
        if html:
            table = table_markdown("".join(html) if isinstance(html, list) else str(html))
            if table:
                return table
        md = _markdown_of(o).strip()
        if md.startswith("|"):
            return md
    return ""


def section_items(items: list[Item], ident: str) -> list[Item]:
    """The items of the section headed ``{#ident}``: from its heading to the next heading of the
    same or a higher level (empty when no heading carries ``ident``)."""
    for i, it in enumerate(items):
        if it.kind == "heading" and it.ident == ident:
            out = []
            for later in items[i + 1:]:
                if later.kind == "heading" and later.level <= it.level:
                    break
                out.append(later)
            return out
    return []


def readings_after(items: list[Item], ident: str) -> list[str]:
    """The Markdown outputs that follow the figure or table labelled ``ident``, up to the next
    heading, figure or table: the chapter's reading of it."""
    out: list[str] = []
    for i, it in enumerate(items):
        if it.kind in ("fig", "tbl") and it.ident == ident:
            for later in items[i + 1:]:
                if later.kind in ("heading", "fig", "tbl"):
                    break
                if later.kind == "md":
                    out.append(later.text)
            return out
    return []


def _first_paragraph(markdown: str) -> str:
    """The first paragraph of prose in ``markdown`` (headings, tables, callouts, lists skipped)."""
    paras = [p for p in re.split(r"\n\s*\n", markdown)
             if p.strip() and not p.lstrip().startswith(("#", "|", ":::", "<!--", "```", "- ", "* ", "$$"))]
    return _plain(paras[0]) if paras else ""


def _page_opening(root: Path, file: str) -> tuple[str, str]:
    """(title, first paragraph) of a Quarto page of the book."""
    text = (Path(root) / file).read_text(encoding="utf-8")
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    m = re.search(r"^#\s+(.+)$", text, re.M)
    title = _heading_parts(m.group(1))[0] if m else Path(file).stem
    return title, _first_paragraph(text[m.end():] if m else text)


# ---------------------------------------------------------------------------- the deck
@dataclass(frozen=True)
class _Place:
    """One thing a plan block names: a section, figure or table of a chapter, with its items."""

    ref: str
    chapter: str
    title: str
    items: tuple[Item, ...]


def _places(chapters: dict[str, list[Item]], refs: tuple[str, ...]) -> list[_Place]:
    out = []
    for ref in refs:
        for stem, items in chapters.items():
            if ref.startswith("sec-"):
                head = next((it for it in items if it.kind == "heading" and it.ident == ref), None)
                if head is not None:
                    out.append(_Place(ref, stem, head.text, tuple(section_items(items, ref))))
                    break
            else:
                hit = next((i for i, it in enumerate(items) if it.kind in ("fig", "tbl") and it.ident == ref), None)
                if hit is not None:
                    out.append(_Place(ref, stem, _title(items[hit].text, 50) or ref, (items[hit],)))
                    break
    return out


def ref_names(chapters: dict[str, list[Item]]) -> dict[str, str]:
    """What the deck writes for each cross-reference target of the executed chapters: "chapter N"
    for a chapter (its level-1 heading; N from the notebook's number), the title in quotes for a
    section, the shortened caption in quotes for a figure or table."""
    out: dict[str, str] = {}
    for stem, items in chapters.items():
        number = re.match(r"\d+", stem)
        for it in items:
            if not it.ident:
                continue
            if it.kind == "heading" and it.level == 1 and number:
                out[it.ident] = f"chapter {int(number.group(0))}"
            elif it.kind == "heading":
                out[it.ident] = f"“{_plain(it.text)}”"
            elif it.kind in ("fig", "tbl"):
                out[it.ident] = f"“{_title(it.text, 50)}”"
    return out


def resolve_refs(text: str, names: dict[str, str]) -> str:
    """``text`` with each cross-reference the deck can name (``names``, :func:`ref_names`) written
    out; the others are left for :func:`_plain` to mark "(in the book)"."""
    return re.sub(r"@((?:sec|fig|tbl|eq)-[\w-]*\w)", lambda m: names.get(m.group(1), m.group(0)), text)


def _where_text(block: PlanBlock, places: list[_Place]) -> str:
    names = {p.ref: p.title for p in places}
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", block.where)
    return re.sub(r"@((?:sec|fig|tbl)-[\w-]*\w)", lambda m: names.get(m.group(1), "(in the book)"), text)


#: words a shortened title must not end on
_DANGLING = {"a", "an", "and", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with"}


def _title(text: str, chars: int = _TITLE_CHARS) -> str:
    """A slide title from a caption or a plan cell: its first sentence, or what comes before its
    first colon, cut at a comma or parenthesis to fit ``chars`` characters."""
    first = (_sentences(_plain(text)) or [""])[0].rstrip(".")
    if len(first) > chars and ":" in first and _balanced(first.split(":")[0]):
        first = first.split(":")[0]
    if len(first) > chars:
        cut = max(first.rfind(", ", 0, chars), first.rfind(" (", 0, chars))
        if cut > 20 and _balanced(first[:cut]):
            first = first[:cut]
        else:
            words = first[:chars - 2].split(" ")
            words = words[:-1] if len(words) > 1 else words
            while len(words) > 1 and words[-1].lower() in _DANGLING:  # never end on "... gap at …"
                words = words[:-1]
            first = " ".join(words) + " …"
    while not _balanced(first) and " " in first:
        first = first.rsplit(" ", 1)[0]
    return first


def _table_refs(table: str, names: dict[str, str]) -> str:
    """A table for a slide: each cross-reference the deck can name written out
    (:func:`resolve_refs`), the others as "in the book"."""
    return re.sub(r"@((?:sec|fig|tbl|eq)-[\w-]*\w)", "in the book", resolve_refs(table, names))


def _alt(caption: str) -> str:
    return _plain(caption).replace('"', "'")


def _pack(texts: list[str], budget: int, *, fallback: bool = True) -> list[str]:
    """Whole sentences of ``texts``, in order, that fit in ``budget`` words together; a text whose
    first sentence does not fit is passed over (with ``fallback``, the first text's leading
    clauses stand in when nothing fits)."""
    out: list[str] = []
    for t in texts:
        if _plain(t).endswith(":"):  # an introduction to what follows it (a listing, a table)
            continue
        piece = short_text(t, budget - _words(" ".join(out)), whole=True)
        if piece:
            out.append(piece)
    if not out and texts and fallback:
        first = short_text(texts[0], budget)
        out = [first] if first else []
    return out


def chapter_findings(items: list[Item]) -> list[str]:
    """The findings a chapter states in its takeaways: each top-level bullet (``- ...``, with its
    continuation lines) of the Markdown outputs under its "Takeaways" heading, in order. They are
    computed on the run like every reading (the chapter formats its own values into them)."""
    out: list[str] = []
    for i, it in enumerate(items):
        if it.kind != "heading" or it.text.strip().lower() != "takeaways":
            continue
        for later in items[i + 1:]:
            if later.kind == "heading":
                break
            if later.kind != "md":
                continue
            for line in later.text.splitlines():
                if line.startswith(("- ", "* ")):
                    out.append(line[2:].strip())
                elif out and line.strip() and line[:1].isspace() and not line.lstrip().startswith(("- ", "* ")):
                    out[-1] += " " + line.strip()
        break
    return out


_VALUE = re.compile(r"(?<![\w.])\d[\d,]*\.\d+%?|(?<![\w.])\d+%")
_TERM = re.compile(r"[a-z][a-z0-9-]{3,}")
_COMMON = frozenset(
    "about above after again against also among and because been before being below between both but "
    "does each every from have here into itself less many more most much only other over same some "
    "such than that their them then there these they this those through under until upon what when "
    "where which while whose will with within without would".split())


def _values(text: str) -> set[str]:
    """The computed values ``text`` states: numbers with a decimal point and percentages, with at
    least two significant digits (0.088, 82.5%; not the round settings 0.1, 0.05, 10%)."""
    out = set()
    for v in _VALUE.findall(text):
        digits = v.replace(",", "").replace(".", "").rstrip("%").lstrip("0").rstrip("0")
        if len(digits) >= 2:
            out.add(v.rstrip("%"))
    return out


def _terms(text: str) -> set[str]:
    return set(_TERM.findall(_plain(text).lower())) - _COMMON


def finding_score(finding: str, context: str, weights: dict[str, float] | None = None) -> tuple[int, float]:
    """How well ``finding`` (a takeaway bullet) states what ``context`` (a block's description and
    the text of the sections it teaches from) shows: (computed values the two share, by
    :func:`_values`; the words of four or more letters they share, each counted with its weight in
    ``weights``, default 1)."""
    shared = _terms(finding) & _terms(context)
    return (len(_values(finding) & _values(context)),
            sum((weights or {}).get(t, 1.0) for t in shared))


def _place_text(place: _Place, items: list[Item]) -> str:
    """A place's title and text, with the readings of a figure or table named on its own."""
    extra = readings_after(items, place.ref) if not place.ref.startswith("sec-") else []
    return " ".join([place.title, *(it.text for it in place.items), *extra])


def block_findings(blocks: list[PlanBlock], places: list[list[_Place]],
                   chapters: dict[str, list[Item]]) -> list[str | None]:
    """For each block, the finding (:func:`chapter_findings`, cross-references written out by
    :func:`resolve_refs`) of the chapters it teaches from that best states what it teaches
    (:func:`finding_score` against the block's description and its sections; a word counts by how
    few of the chapter's findings use it), each finding given to one block at most: the
    best-scoring pairs of the whole deck are matched first. Only a finding that fits on the
    takeaway slide whole (``MAX_WORDS - 1`` words) is eligible: a finding cut to its first
    sentences can lose the sentence that qualifies them. None for a block that draws on no
    chapter with takeaways, or whose eligible findings share nothing with it."""
    import math

    names = ref_names(chapters)

    pairs = []
    for b, (block, block_places) in enumerate(zip(blocks, places, strict=True)):
        context = " ".join([block.what, *(_place_text(p, chapters[p.chapter]) for p in block_places)])
        for stem in dict.fromkeys(p.chapter for p in block_places):
            found = [resolve_refs(f, names) for f in chapter_findings(chapters[stem])]
            # a word that few of the chapter's findings use tells them apart: log((N + 1) / findings using it)
            uses: dict[str, int] = {}
            for finding in found:
                for t in _terms(finding):
                    uses[t] = uses.get(t, 0) + 1
            weights = {t: math.log((len(found) + 1) / n) for t, n in uses.items()}
            for f, finding in enumerate(found):
                if _words(_plain(finding)) > MAX_WORDS - 1:
                    continue
                pairs.append((finding_score(finding, context, weights), b, (stem, f), finding))
    pairs.sort(key=lambda t: (-t[0][0], -t[0][1], t[1], t[2][0], t[2][1]))
    chosen: list[str | None] = [None] * len(blocks)
    used: set[tuple[str, int]] = set()
    for score, b, key, finding in pairs:
        if chosen[b] is None and key not in used and any(score):
            chosen[b] = finding
            used.add(key)
    return chosen


def _projected(table: str, href: str) -> list[str]:
    """A table as a slide projects it (:func:`compact_table`), and when part of it is left out, a
    line that says how much and links the whole table in the book (``href``, relative to the
    deck's place in the site, ``_book/slides/``); [] when the table cannot be projected."""
    shown, cols, rows = compact_table(table)
    if not shown:
        return []
    left = ([("the column " if len(cols) == 1 else "the columns ")
             + _listed([f"“{c}”" for c in cols])] if cols else [])
    left += [f"{rows} row{'s' if rows > 1 else ''}"] if rows else []
    if not left:
        return [shown]
    return [shown, f"Left out here: {' and '.join(left)}; the whole table is [in the book]({href})."]


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _site_href(file: str, ident: str | None = None) -> str:
    """The address of a book page (``file`` as ``_quarto.yml`` names it), and of a place on it,
    from the deck's folder in the site."""
    return "../" + str(Path(file).with_suffix(".html")) + (f"#{ident}" if ident else "")


def _table_slide(it: Item, items: list[Item], names: dict[str, str], file: str) -> str:
    """A table's slide: the first sentence of its caption, the table as printed (as far as a
    slide can project it, :func:`_projected`; ``file`` is the chapter's page), and the chapter's
    reading of it (its first Markdown output after the table) below; "" when the table cannot be
    projected."""
    title = f"## {_title(it.text) or it.ident}"
    table = _projected(_table_refs(it.table, names), _site_href(file, it.ident))
    if not table:
        return ""
    room = MAX_WORDS - slide_words("\n\n".join([title, *table[1:]]))
    body = _pack(readings_after(items, it.ident or "")[:1], room)
    return "\n\n".join([title, *table, *body])


def deck_slides(root: Path, images_dir: Path) -> list[tuple[PlanBlock, list[str]]]:
    """The deck's slides block by block: for each block of :func:`plan_blocks`, in order, its
    slides as Markdown (the block's title slide ``# ...``, then ``## ...`` slides); figures are
    written as PNG files into ``images_dir`` and referenced relative to its parent."""
    root, images_dir = Path(root), Path(images_dir)
    pages = [p for p in quarto_pages(root) if p.is_chapter and (root / p.file).is_file()]
    if not pages:
        raise ValueError(f"no executed chapters under {root / EXECUTED_DIR}; run `make book` first")
    chapters = {Path(p.file).stem: chapter_items(json.loads((root / p.file).read_text(encoding="utf-8")))
                for p in pages}
    files = {Path(p.file).stem: p.file for p in pages}
    images_dir.mkdir(parents=True, exist_ok=True)
    blocks = plan_blocks(root)
    names = ref_names(chapters)
    all_places = [_places(chapters, block.refs) for block in blocks]
    findings = block_findings(blocks, all_places, chapters)
    out = []
    for block, places, finding in zip(blocks, all_places, findings, strict=True):
        head = f"# {block.minutes} min: {_title(block.what)}"
        where = _where_text(block, places)
        where = f"In the book: {where}" + ("" if where.endswith("…") else ".")
        # a front page's opening says what the page is for: the intro of a block that draws on
        # no chapter only (a block that draws on chapters opens with their sections), without
        # the sentences in which the page speaks of itself
        openings = [] if places else [
            " ".join(t for t in _sentences(_page_opening(root, f)[1]) if not _SELF_REFERENCE.search(t))
            for _, f in block.pages if (root / f).is_file()]
        openings += [next((it.text for it in p.items if it.kind == "prose"), "") for p in places
                     if p.ref.startswith("sec-")]
        intro = _pack([o for o in openings if o], MAX_WORDS - slide_words(head + "\n" + where), fallback=False)
        slides = ["\n\n".join([head, where, *intro])]
        shown: set[str] = set()
        for place in places:
            if place.ref.startswith("tbl-") and place.items and place.items[0].table:
                slide = _table_slide(place.items[0], chapters[place.chapter], names,
                                     files[place.chapter])
                if slide:
                    slides.append(slide)
                    shown.add(place.ref)
                continue
            for it in place.items:
                if (it.kind != "fig" or not it.ident or it.ident in shown
                        or sum(f.startswith("fig-") for f in shown) >= FIGURES_PER_BLOCK):
                    continue
                shown.add(it.ident)
                name = f"{place.chapter}-{it.ident}.png"
                (images_dir / name).write_bytes(it.png or b"")
                title = f"## {_title(it.text) or it.ident}"
                body = _pack(readings_after(chapters[place.chapter], it.ident)[:1], MAX_WORDS - slide_words(title))
                image = f'![]({images_dir.name}/{name}){{fig-align="center" height="420" fig-alt="{_alt(it.text)}"}}'
                slides.append("\n\n".join([title, image, *body]))
        # sections without a figure project their tables instead
        spare = [(it, p.chapter) for p in places if p.ref.startswith("sec-")
                 for it in p.items if it.kind == "tbl" and it.table and it.ident not in shown]
        for it, chapter in spare[:FIGURES_PER_BLOCK] if not shown else []:
            slide = _table_slide(it, chapters[chapter], names, files[chapter])
            if slide:
                slides.append(slide)
                shown.add(it.ident)
        for _, file in block.pages:
            heading, table = page_table(root, file) if (root / file).is_file() else ("", "")
            projected = _projected(_table_refs(table, names), _site_href(file)) if table else []
            if projected:
                page = _page_opening(root, file)[0]
                title = "## " + _title(f"{heading} ({page})" if heading and heading != page else page)
                slides.append("\n\n".join([title, *projected]))
        if finding is not None:
            take = _pack([finding], MAX_WORDS - 1)
        else:
            used = {r for f in shown for p in places for r in readings_after(chapters[p.chapter], f)[:1]}
            texts = []
            for place in places:
                if place.ref.startswith("tbl-"):
                    texts += readings_after(chapters[place.chapter], place.ref)
                elif place.ref.startswith("sec-"):
                    texts += [it.text for it in place.items if it.kind == "md"]
                elif place.ref not in shown:
                    texts += readings_after(chapters[place.chapter], place.ref)[:1]
            take = _pack([t for t in texts if t not in used], MAX_WORDS - 1)
        if take:
            slides.append("\n\n".join(["## Takeaway", *take]))
        out.append((block, slides))
    return out


def slide_deck(root: Path, images_dir: Path, title: str | None = None) -> str:
    """The revealjs deck (Quarto Markdown) of :func:`deck_slides`, with its front matter."""
    root = Path(root)
    book_title = title or quarto_book(root).get("title", "oraclegap")
    parts = ["---", f"title: {json.dumps(str(book_title))}",
             'subtitle: "A 90-minute class, block by block as the instructors\' page plans it"',
             "format:", "  revealjs:", "    slide-number: true", "    embed-resources: false",
             "    smaller: true", "    scrollable: true",
             # math as HTML: reveal.js would fetch MathJax 2 from a CDN, and the deck works offline
             "    html-math-method: plain", "---", ""]
    for _, slides in deck_slides(root, images_dir):
        parts += [s + "\n" for s in slides]
    return "\n".join(parts) + "\n"


def write_slides(root: Path, stage: Path) -> Path:
    """Write ``stage/slides.qmd`` and its images (``stage/slide-images/``); returns the deck's path."""
    stage = Path(stage)
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    deck = stage / "slides.qmd"
    deck.write_text(slide_deck(root, stage / "slide-images"), encoding="utf-8")
    return deck
