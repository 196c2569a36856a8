"""The book's prose checks: numbers typed by hand in a chapter's Markdown, and what an executed chapter prints.

Two scans, used by the tests (``tests/chapters/test_prose.py``) and by ``python -m oraclegap.book
check-params`` (:mod:`.params`), which runs them on chapters executed with other parameters:

* :func:`typed_numbers` reads a chapter's *source* Markdown. A decimal number or a percentage
  is allowed only when it is inside the chapter's claims list (a ``**Claims checked**``
  paragraph and the list after it), a setting written as LaTeX math on a parameter symbol
  (``$\\tau = 0.10$``) or a threshold argument (``$L(0.10)$``), a confidence convention ("95%
  interval", "nominal 5%"), part of a reference (§3.2, Table A2, Quarto 1.7), or a figure the
  papers print (registered in ``data/paper/published_figures.csv``) in a paragraph that cites
  a paper. Numbers that interpret results are built from computed values instead.
* :func:`executed_problems` reads an *executed* notebook: error outputs, a p-value printed as
  exactly 0 (Monte Carlo p-values are (1 + b)/(B + 1), exact ones print "< 0.001") in a table
  or a sentence (:func:`printed_problems`), a code key shown where a reader expects a name
  (``arc_challenge``, ``dpp``, ``partial=3``), and the sentence checks of
  :mod:`oraclegap.report` (a direction word its interval contradicts, a share outside [0, 1]).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path

__all__ = [
    "NUMBER",
    "typed_numbers",
    "published_values",
    "markdown_problems",
    "html_tables",
    "code_keys",
    "notebook_outputs",
    "printed_problems",
    "executed_problems",
]

# ---------------------------------------------------------------------------- typed numbers
#: a decimal number or a percentage, with its sign
NUMBER = re.compile(r"(?<![\w.])(?:(?<![\d%])[+\-−])?(?:\d+(?:\.\d+)?\s?%|\d*\.\d+)(?![\w])")
_REFERENCE_BEFORE = re.compile(
    r"(§|\b(?:Sections?|Sec\.|Appendix|Appendices|App\.|Tables?|Figures?|Figs?\.|Thms?\.?|"
    r"Theorems?|Props?\.|Propositions?|Cor\.|Corollary|Lemma|Algorithm|Quarto|Python|version|v))"
    r"\s*$"
)
_CONVENTION_AFTER = re.compile(
    r"^\s*(?:two-sided\s+|one-sided\s+|simultaneous\s+|prompt-bootstrap\s+|bootstrap\s+|Wilson\s+|"
    r"Clopper[-–]Pearson\s+|exact\s+|confidence\s+|null\s+)*"
    r"(?:intervals?|confidence|bands?|ranges?|bootstrap|CIs?|level|percentile|coverage|"
    r"(?:upper|lower)\s+(?:bounds?|limits?))\b"
)
_CONVENTION_BEFORE = re.compile(r"\b(?:nominal|level|at)\s*$")
_PARAM_SETTING = re.compile(
    r"(\\tau|\\alpha|\\sigma|\\delta|\\lambda|\\epsilon|\\varepsilon|(?<![\w\\])[fs](?![\w]))"
    r"\s*_?\{?\w*\}?\s*(=|\\le|\\leq|\\ge|\\geq|<|>|\\in)\s*(\\\{[^$]*?\\\}|[\d.,\s]+)"
)
_CITATION = re.compile(r"paper|publish|report|print|arXiv|Shihab|Chen|\b00[012]\b|review|released",
                       re.I)
#: the papers' printed figures a chapter may cite
PUBLISHED_FIGURES = Path("data") / "paper" / "published_figures.csv"


def _strip(text: str) -> str:
    """Markdown without comments, code, links, anchors; arXiv ids become the word (they cite)."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"\{#[^}]*\}", " ", text)
    return re.sub(r"\b\d{4}\.\d{4,5}\b", "arXiv", text)


def _claims_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of claims lists: the '**Claims checked' line and the list that follows."""
    spans = []
    for m in re.finditer(r"^\*\*Claims[^\n]*$", text, flags=re.M | re.I):
        end = m.end()
        for line in re.finditer(r"\n([^\n]*)", text[m.end():]):
            content = line.group(1)
            if (content.strip() == "" or re.match(r"^\s*(\d+\.|[-*])\s", content)
                    or content.startswith((" ", "\t"))):
                end = m.end() + line.end()
                continue
            break
        spans.append((m.start(), end))
    return spans


def _math_setting_spans(text: str) -> list[tuple[int, int]]:
    """Settings inside LaTeX math: values of parameter symbols, and thresholds as arguments,
    $L(0.10)$."""
    spans = []
    for seg in re.finditer(r"\$\$.*?\$\$|\$[^$\n]+\$", text, flags=re.S):
        for m in _PARAM_SETTING.finditer(seg.group(0)):
            spans.append((seg.start() + m.start(3), seg.start() + m.end(3)))
        for m in re.finditer(r"(?<=[A-Za-z}]\()\s*\d*\.\d+\s*(?=\))", seg.group(0)):
            spans.append((seg.start() + m.start(), seg.start() + m.end()))
    return spans


def _norm(num: str) -> str:
    return num.replace("−", "-").replace(" ", "").lstrip("+")


def published_values(root: Path) -> set[str]:
    """The registered published figures (``data/paper/published_figures.csv`` under ``root``),
    normalised as :func:`typed_numbers` compares them, with and without their sign."""
    import pandas as pd

    df = pd.read_csv(Path(root) / PUBLISHED_FIGURES, dtype=str)
    return {_norm(v) for v in df["value"]} | {_norm(v).lstrip("-") for v in df["value"]}


def typed_numbers(markdown: str, published: set[str]) -> list[str]:
    """The decimal numbers and percentages in one Markdown text that none of the rules allows,
    each as ``'<number>' in: <its line>``."""
    text = _strip(markdown)
    allowed = _claims_spans(text) + _math_setting_spans(text)
    paragraphs = [(m.start(), m.end()) for m in re.finditer(r"(?:[^\n]+\n?)+", text)]
    bad = []
    for m in NUMBER.finditer(text):
        s, e, num = m.start(), m.end(), m.group(0)
        if any(a <= s and e <= b for a, b in allowed):
            continue
        before, after = text[max(0, s - 24):s], text[e:e + 40]
        if _REFERENCE_BEFORE.search(before):
            continue
        if num.endswith("%") and (_CONVENTION_AFTER.match(after) or _CONVENTION_BEFORE.search(before)):
            continue
        para = next((text[a:b] for a, b in paragraphs if a <= s < b), "")
        if _norm(num) in published and _CITATION.search(para):
            continue
        stop = text.find("\n", e)
        line = text[text.rfind("\n", 0, s) + 1:stop if stop >= 0 else len(text)]
        bad.append(f"{num!r} in: {line.strip()[:140]}")
    return bad


#: A line that Pandoc reads as an example-list item: ``@label.``, ``@label)`` or ``(@label)`` first
#: on the line (Pandoc's ``example_lists``), as a cross-reference wrapped onto a line's start is.
_EXAMPLE_MARKER = re.compile(r"^\s*(?:\(@[\w:-]*\)|@[\w:-]*[.)])(?=\s|$)")


def example_markers(markdown: str) -> list[str]:
    """The lines of ``markdown`` that start with a Pandoc example-list marker (``@tbl-x. Then``):
    Pandoc turns such a line into a numbered example, cuts the sentence it was part of and renders
    every reference to that label as the example's number."""
    return [f"line starts with an example-list marker: {line.strip()[:80]}"
            for line in markdown.splitlines() if _EXAMPLE_MARKER.match(line)]


def markdown_problems(src: Path, published: set[str]) -> list[str]:
    """:func:`typed_numbers` and :func:`example_markers` over every Markdown cell of one chapter
    source (jupytext), each problem prefixed with its cell's index."""
    from .structure import _read_cells

    problems = []
    for i, cell in enumerate(_read_cells(Path(src))):
        if cell.cell_type == "markdown":
            problems += [f"cell {i}: {p}" for p in typed_numbers(cell.source, published)
                         + example_markers(cell.source)]
    return problems


# ---------------------------------------------------------------------------- printed outputs
class _Tables(HTMLParser):
    """The tables of one HTML output: rows of (cell text outside <code>, is a header cell)."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell, self._code = [], None, 0

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self._cell = [tag == "th", ""]
        elif tag == "code":
            self._code += 1

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append((self._cell[1].replace("\u200b", "").strip(), self._cell[0]))
            self._cell = None
        elif tag == "code":
            self._code = max(0, self._code - 1)

    def handle_data(self, data):
        if self._cell is not None and not self._code:
            self._cell[1] += data


def html_tables(html: str) -> list[list[list[tuple[str, bool]]]]:
    """Every table of an HTML text: its rows, each a list of (cell text outside ``<code>``, is a
    header cell)."""
    parser = _Tables()
    parser.feed(html)
    return parser.tables


#: a p-value column's header: "p", "pᵣₑ", "pₘₚ", "p-value", "McNemar p, Holm", "Pass@1 pᵣₑ", or
#: in math with its markup removed ("\\(p_{\\mathrm{re}}\\)" reads "p_re")
_P_HEADER = re.compile(r"(?<![\w@])p(?:ᵣₑ|ₘₚ|_re|_mp|-values?)?(?![\w@])")
_ZERO = re.compile(r"^[+\-−]?0(?:\.0*)?$")
#: a p-value of exactly zero in a sentence: "p = 0.000", "$p_{\mathrm{re}} = 0$", "p-value of 0"
#: (a sentence's full stop after it included; "p = 0.05" and "p = 0.001" are not zero)
_P_ZERO_TEXT = re.compile(r"(?<![\w@])p(?:_\{?[\w\\{}]*\}?|ᵣₑ|ₘₚ)?\s*(?:=|:)\s*0(?:\.0*)?(?!\.?\d)"
                          r"|p-values?\s+(?:of|is|=)\s+0(?:\.0*)?(?!\.?\d)")
#: code keys shown as labels: snake_case identifiers and keyword settings ("partial=3")
_SNAKE = re.compile(r"(?<![\w.@/\\-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w(/.\\-])")
_KEY_SETTING = re.compile(r"\b[a-z][a-z_]+=\d")
#: a quoted literal in a table cell ('<model>|total_cost'): a name the reader types, not a label
_QUOTED = re.compile(r"'[^'\s][^']*'")


def code_keys() -> set[str]:
    """Keys with a display name elsewhere, which a table must not show as they are: hyphenated
    registry names, router family keys with an underscore, and the pool-construction
    baselines' keys."""
    from .. import datasets
    from ..deploy import routers

    names = {n.split("@")[0] for n in datasets.registry()["name"] if "-" in n}
    return names | {k for k in routers.LABELS if "_" in k} | {"dpp", "kmedoids"}


def printed_problems(outputs: Iterable[tuple[str, str]], keys: set[str]) -> list[str]:
    """p-values printed as exactly 0 and code keys shown as labels, in (mime type, text) outputs
    (``text/markdown`` sentences, ``text/html`` tables)."""
    from ..report.tables import plain_symbols

    out = []
    for mime, text in outputs:
        if mime == "text/markdown":
            flat = re.sub(r"[$`*]|\\mathrm|\\text", "", re.sub(r"`[^`]*`", " ", text)).replace("−", "-")
            out += [f"p-value of 0 in: …{flat[max(0, m.start() - 60):m.end() + 20]}…"
                    for m in _P_ZERO_TEXT.finditer(flat)]
            continue
        for rows in html_tables(text):
            heads = next((r for r in rows if r and all(h for _, h in r)), [])
            pcols = {j for j, (t, _) in enumerate(heads)
                     if _P_HEADER.search(plain_symbols(t.replace("\u200b", "")))}
            for r in rows:
                for j, (t, is_head) in enumerate(r):
                    if not is_head and j in pcols and _ZERO.match(t):
                        out.append(f"p-value of 0 in column {heads[j][0]!r}")
                    bare = _QUOTED.sub(" ", t)  # a name in quotes is shown as the literal it is
                    bad = _SNAKE.findall(bare) + _KEY_SETTING.findall(bare) + ([t] if t in keys else [])
                    out += [f"code key {b!r} in table cell {t[:60]!r}" for b in dict.fromkeys(bad)]
    return out


def _cells(nb) -> list:
    if isinstance(nb, (str, Path)):
        nb = json.loads(Path(nb).read_text(encoding="utf-8"))
    return list(nb["cells"])


def notebook_outputs(nb) -> list[tuple[str, str]]:
    """(mime type, text) of every Markdown and HTML output of a notebook (a path, or nbformat
    JSON as a dict or a ``NotebookNode``)."""
    return [(mime, "".join(o["data"][mime]) if isinstance(o["data"][mime], list) else o["data"][mime])
            for c in _cells(nb) for o in c.get("outputs", []) for mime in ("text/markdown", "text/html")
            if mime in o.get("data", {})]


def executed_problems(nb, keys: set[str] | None = None) -> list[str]:
    """Everything the prose checks find in one executed notebook (a path or nbformat JSON):
    error outputs, :func:`printed_problems` (``keys``: default :func:`code_keys`), and the
    sentences :func:`oraclegap.report.direction_problems`,
    :func:`oraclegap.report.share_problems` and :func:`oraclegap.report.wording_problems` find
    wrong, each once."""
    import nbformat

    from .. import report
    from .execute import error_outputs

    cells = _cells(nb)
    problems = [f"error output: {e[:200]}" for e in error_outputs(nbformat.from_dict({"cells": cells}))]
    outputs = notebook_outputs({"cells": cells})
    problems += printed_problems(outputs, code_keys() if keys is None else keys)
    for mime, text in outputs:
        if mime == "text/markdown":
            problems += (report.direction_problems(text) + report.share_problems(text)
                         + report.wording_problems(text))
    return list(dict.fromkeys(problems))
