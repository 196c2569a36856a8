"""How long a rendered chapter is to read: a pure measure of one page's HTML.

:func:`measure_html` reads the HTML of a rendered chapter page (Quarto's
``_book/chapters/NN_*.html``, or the nbconvert fallback's) and returns a :class:`PageMeasure`:

* **the main line**: the content of ``<main>`` (the whole ``<body>`` where a page has no
  ``<main>``) up to the first element whose ``id`` contains ``appendix`` (a chapter's
  ``## Appendix: ... {#sec-...-appendix}`` section; Quarto's own end-of-page ``quarto-appendix``
  block of footnotes and references ends it too);
* **words**: main-line prose only, the text of paragraphs (``<p>``) and list items (``<li>``),
  each text counted once however the two nest. Not counted: tables, figures and their captions
  (``<figure>``, ``<figcaption>``, ``<caption>``), code (``<pre>``, ``<code>``, scripts, styles,
  folded code), collapsed callouts (the exercises' folded solutions: ``callout-collapse``),
  navigation, the page's title block, and the build and download lines at the foot. A word is a
  run of letters or digits (with inner ``'``, ``.``, ``-``: ``0.113``, ``re-deal`` are one word);
  an inline or display math expression counts as one word;
* **sections**: the ``<h2>`` headings of the main line (outside callouts and block quotes),
  by their text;
* **tables**: every main-line table outside a collapsed callout (a table nested in another is
  part of it), with its column count (the widest row, ``colspan`` summed) and its label (the
  nearest ``tbl-`` id around it, else the table's own id, else ``table N``).

:func:`measure_problems` turns a measure into the book check's problems (a main line over
``max_words`` words or ``max_sections`` sections, a table over ``max_columns`` columns);
``python -m oraclegap.book.measure PAGE...`` prints the figures of rendered pages.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["MAX_WORDS", "MAX_COLUMNS", "MAX_SECTIONS", "PageMeasure", "measure_html", "measure_page", "measure_problems"]

MAX_WORDS = 6500  # words in a chapter's main line ("at most ~6k words")
MAX_COLUMNS = 8  # columns of a main-line table ("at most ~8 columns")
# ``##`` sections of a main line, counting Data and settings, Takeaways and Exercises ("at most ~6
# sections": six that carry the argument, or five and the exercises' own)
MAX_SECTIONS = 7

_WORD = re.compile(r"[^\W_](?:[\w'’.\-]*[^\W_])?")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
         "track", "wbr"}
_SKIP_TAGS = {"table", "figure", "figcaption", "caption", "pre", "code", "script", "style", "nav", "svg",
              "math", "template", "noscript", "header", "footer", "button", "summary", "details"}
_SKIP_CLASSES = {"callout-collapse", "og-build", "og-downloads", "quarto-title-block", "sourceCode",
                 "cell-code", "code-copy-button", "quarto-float-caption"}
_NO_HEADING = {"callout", "blockquote"}
_MATH_CLASSES = {"math"}


@dataclass(frozen=True)
class PageMeasure:
    """The main line of one page: prose words, ``##`` sections (titles), tables (label, columns);
    ``appendix`` is the id of the element that ended the main line (``None``: no appendix)."""

    words: int
    sections: tuple[str, ...]
    tables: tuple[tuple[str, int], ...]
    appendix: str | None = None
    appendix_words: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def n_sections(self) -> int:
        return len(self.sections)

    @property
    def n_tables(self) -> int:
        return len(self.tables)

    @property
    def widest(self) -> int:
        """Columns of the widest main-line table (0 without tables)."""
        return max((c for _, c in self.tables), default=0)

    def summary(self) -> str:
        app = f"; appendix {self.appendix} ({self.appendix_words:,} words)" if self.appendix else "; no appendix"
        return (f"{self.words:,} words, {self.n_sections} sections, {self.n_tables} tables "
                f"(widest {self.widest} columns) in the main line{app}")


class _Measure(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str], str]] = []  # (tag, classes, id)
        self.has_main = False
        self.in_main = 0  # depth of <main> elements open
        self.ended: str | None = None  # the id that ended the main line
        self.words = 0
        self.appendix_words = 0
        self.sections: list[str] = []
        self.heading: list[str] | None = None
        self.tables: list[tuple[str, int]] = []
        self.table: list | None = None  # [label, widest, current row width, nesting depth]
        self.math_depth: int | None = None

    # -- helpers
    def _scope(self) -> bool:
        return self.in_main > 0 if self.has_main else True

    def _skipped(self) -> bool:
        return any(t in _SKIP_TAGS or c & _SKIP_CLASSES for t, c, _ in self.stack)

    def _in_prose(self) -> bool:
        return any(t in ("p", "li") for t, _, _ in self.stack)

    def _collapsed(self) -> bool:
        return any("callout-collapse" in c for _, c, _ in self.stack)

    # -- events
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        ident = a.get("id") or ""
        if tag == "main":
            self.in_main += 1
        if self._scope() and self.ended is None and "appendix" in ident.lower():
            self.ended = ident
        if tag in _VOID:
            return
        self.stack.append((tag, classes, ident))
        if self.table is not None:
            if tag == "table":
                self.table[3] += 1
            elif self.table[3] == 1 and tag == "tr":
                self.table[2] = 0
            elif self.table[3] == 1 and tag in ("td", "th"):
                try:
                    span = max(int(a.get("colspan") or 1), 1)
                except ValueError:
                    span = 1
                self.table[2] += span
                self.table[1] = max(self.table[1], self.table[2])
            return
        if not (self._scope() and self.ended is None):
            return
        if tag == "table" and not self._collapsed():
            label = next((i for _, _, i in reversed(self.stack) if i.startswith("tbl-")), "") or ident \
                or f"table {len(self.tables) + 1}"
            self.table = [label, 0, 0, 1]
        elif tag == "h2" and not any(t == "blockquote" or c & _NO_HEADING for t, c, _ in self.stack[:-1]) \
                and not self._skipped():
            self.heading = []
        elif classes & _MATH_CLASSES and self.math_depth is None:
            if self._in_prose() and not self._skipped():
                self._count("x")
            self.math_depth = len(self.stack)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        if tag == "main" and self.in_main:
            self.in_main -= 1
        # close up to the matching open tag (tolerates unclosed <p>, <li>)
        for j in range(len(self.stack) - 1, -1, -1):
            if self.stack[j][0] == tag:
                break
        else:
            return
        while len(self.stack) > j:
            t, _, _ = self.stack.pop()
            if self.math_depth is not None and len(self.stack) < self.math_depth:
                self.math_depth = None
            if self.table is not None and t == "table":
                self.table[3] -= 1
                if self.table[3] == 0:
                    self.tables.append((self.table[0], self.table[1]))
                    self.table = None
            if t == "h2" and self.heading is not None:
                title = re.sub(r"\s+", " ", "".join(self.heading)).replace("¶", "").strip()
                self.sections.append(title)
                self.heading = None

    def _count(self, text: str) -> None:
        n = len(_WORD.findall(text))
        if self.ended is None:
            self.words += n
        else:
            self.appendix_words += n

    def handle_data(self, data):
        if not self._scope():
            return
        if self.heading is not None and self.ended is None:
            self.heading.append(data)
        if self.math_depth is not None or self.table is not None:
            return
        if self._in_prose() and not self._skipped():
            self._count(data)


def measure_html(html: str) -> PageMeasure:
    """The main line's prose words, ``##`` sections and tables of one rendered page (see the
    module docstring for what is counted)."""
    if not isinstance(html, str):
        raise TypeError(f"html must be the page's text (str), got {type(html).__name__}")
    p = _Measure()
    p.has_main = re.search(r"<main[\s>]", html, re.I) is not None
    p.feed(html)
    p.close()
    notes = () if p.has_main else ("no <main>: the whole body measured",)
    return PageMeasure(words=p.words, sections=tuple(p.sections), tables=tuple(p.tables), appendix=p.ended,
                       appendix_words=p.appendix_words, notes=notes)


def measure_page(path: Path | str) -> PageMeasure:
    """:func:`measure_html` of the page at ``path``."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path must be a rendered HTML page; {path} does not exist")
    return measure_html(path.read_text(encoding="utf-8", errors="replace"))


def measure_problems(name: str, m: PageMeasure, max_words: int = MAX_WORDS,
                     max_columns: int = MAX_COLUMNS, max_sections: int = MAX_SECTIONS) -> list[str]:
    """The book check's problems of one chapter's measure: a main line over ``max_words`` words or
    over ``max_sections`` ``##`` sections, and each main-line table over ``max_columns`` columns."""
    problems = []
    if m.words > max_words:
        problems.append(f"{name}: the main line has {m.words:,} words (over {max_words:,}); move sections to the "
                        "chapter's appendix (a section whose id contains 'appendix')")
    if m.n_sections > max_sections:
        problems.append(f"{name}: the main line has {m.n_sections} sections (over {max_sections}); group them "
                        "or move some to the chapter's appendix (a section whose id contains 'appendix')")
    for label, cols in m.tables:
        if cols > max_columns:
            problems.append(f"{name}: table {label} has {cols} columns in the main line (over {max_columns}); "
                            "split it, drop columns or move it to the appendix")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m oraclegap.book.measure PAGE.html [PAGE.html ...]", file=sys.stderr)
        return 2
    status = 0
    for a in args:
        try:
            m = measure_page(a)
        except ValueError as e:
            print(f"measure: {e}", file=sys.stderr)
            return 2
        print(f"{a}: {m.summary()}")
        for label, cols in m.tables:
            print(f"  {label}: {cols} columns")
        for title in m.sections:
            print(f"  ## {title}")
        status |= bool(measure_problems(a, m))
    return int(status)


if __name__ == "__main__":
    raise SystemExit(main())
