"""The staged project the student edition renders from (oraclegap.book.editions.stage_book), the
files Quarto reads for the book, the filter that parses the code-fold summary once, and the check
that the bibliography page shows its entries.

The rendering tests need a Quarto and skip with the reason when there is none.
"""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from oraclegap.book import editions
from oraclegap.book import quarto as bq
from oraclegap.book.check import bibliography_problems

ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# ----------------------------------------------------------------------------- staging
def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    _write(root / "_quarto.yml", "project:\n  type: book\nbook:\n  title: T\n  chapters:\n"
                                 "    - index.qmd\n    - chapters/01_a.ipynb\n")
    _write(root / "index.qmd", "# Preface\n")
    _write(root / "chapters/01_a.ipynb", "{}")
    _write(root / "chapters/01_a.key.json", "{}")  # the execution cache's key: not a page
    _write(root / "data/lab/README.md", "linked from a page")
    _write(root / ".cache/x", "hidden")
    _write(root / "_book/index.html", "an earlier build")
    return root


def test_stage_links_the_project_and_copies_the_chapters(tmp_path):
    root = _project(tmp_path)
    stage = root / ".stage"
    done = editions.stage_book(root, stage)
    assert done == {"chapters/01_a.ipynb": None}
    names = sorted(p.name for p in stage.iterdir())
    assert names == ["_quarto.yml", "chapters", "data", "index.qmd"]  # no hidden entry, no _book
    assert (stage / "data").is_symlink() and (stage / "data/lab/README.md").read_text() == "linked from a page"
    assert not (stage / "chapters").is_symlink() and os.listdir(stage / "chapters") == ["01_a.ipynb"]
    # a chapter transform (the student edition) writes its own copy; the source stays as it was
    editions.stage_book(root, stage, chapter=lambda src, dest: dest.write_text('{"x": 1}') and 7)
    assert (stage / "chapters/01_a.ipynb").read_text() == '{"x": 1}'
    assert (root / "chapters/01_a.ipynb").read_text() == "{}"


def test_stage_copies_the_inputs_without_symbolic_links(tmp_path, monkeypatch):
    root = _project(tmp_path)

    def no_links(*a, **k):
        raise OSError("symbolic links are not supported here")

    monkeypatch.setattr(os, "symlink", no_links)
    editions.stage_book(root, root / ".stage")
    files = sorted(p.relative_to(root / ".stage").as_posix() for p in (root / ".stage").rglob("*") if p.is_file())
    assert files == ["_quarto.yml", "chapters/01_a.ipynb", "index.qmd"]
    assert not any(p.is_symlink() for p in (root / ".stage").rglob("*"))


def test_book_inputs_include_the_configured_filters(tmp_path):
    root = _project(tmp_path)
    cfg = (root / "_quarto.yml").read_text() + "filters:\n  - _filters/f.lua\n  - path: /abs/g.lua\n    at: post-quarto\n"
    (root / "_quarto.yml").write_text(cfg)
    _write(root / "_filters/f.lua", "return {}")
    assert root / "_filters/f.lua" in editions.book_inputs(root)


def test_the_projects_filters_are_in_its_inputs():
    assert all(f.is_file() for f in editions.book_inputs(ROOT))
    assert ROOT / "_filters" / "code-fold-summary.lua" in editions.book_inputs(ROOT)


# ----------------------------------------------------------------------------- bibliography check
def test_bibliography_check_finds_a_hidden_or_empty_list(tmp_path):
    root = _project(tmp_path)
    cfg = (root / "_quarto.yml").read_text().replace("    - chapters/01_a.ipynb\n",
                                                     "    - chapters/01_a.ipynb\n    - references.qmd\n")
    (root / "_quarto.yml").write_text(cfg)
    _write(root / "references.qmd", "# References\n\n::: {#refs}\n:::\n")
    out = root / "_book/references.html"
    entry = '<div id="ref-a" class="csl-entry">A. 2026.</div>'
    _write(out, f'<main><div id="refs" class="references" role="list">{entry}</div></main>')
    assert bibliography_problems(root) == []
    _write(out, f'<main><div id="refs" class="references" role="list" style="display: none">{entry}</div></main>')
    assert bibliography_problems(root) == ["references.html: the bibliography is hidden (style display: none on #refs)"]
    _write(out, '<main><div id="refs" class="references" role="list"></div></main>')
    assert bibliography_problems(root) == ["references.html: the bibliography lists no entry"]
    _write(out, "<main></main>")
    assert bibliography_problems(root) == ["references.html: the bibliography page has no #refs block"]


# ----------------------------------------------------------------------------- rendering
@pytest.fixture(scope="module")
def quarto() -> bq.Quarto:
    q = bq.find_quarto(ROOT, install=False, log=lambda *a: None)
    if not q:
        pytest.skip("no Quarto to render with (" + "; ".join(q.tried) + "); `make quarto` installs one from the kit")
    return q


class _Tree(HTMLParser):
    """A page as a list of tags (attributes sorted: Quarto's attribute order is not part of the
    page's meaning) and text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.items: list = []

    def handle_starttag(self, tag, attrs):
        self.items.append((tag, tuple(sorted(attrs))))

    def handle_endtag(self, tag):
        self.items.append(("/" + tag,))

    def handle_data(self, data):
        self.items.append(data)


def _tree(path: Path) -> list:
    t = _Tree()
    t.feed(path.read_text(encoding="utf-8"))
    return t.items


CROSS_BOOK = {
    "_quarto.yml": (
        "project:\n  type: book\nbook:\n  title: Split\n  chapters:\n    - index.qmd\n    - a.qmd\n"
        "    - b.qmd\n    - c.qmd\n    - references.qmd\nbibliography: references.bib\n"
        "nocite: |\n  @*\nfilters:\n  - _filters/code-fold-summary.lua\nformat:\n  html:\n    code-fold: true\n"
        "    code-summary: \"Show the code\"\n"
    ),
    "index.qmd": "# Preface {.unnumbered}\n\nSee @sec-c and @fig-dot.\n",
    "a.qmd": "# Alpha {#sec-a}\n\nForward to @sec-c-part and @fig-dot.\n\n```{.python .cell-code}\nx = 1\n```\n",
    "b.qmd": "# Beta {#sec-b}\n\nBack to @sec-a.\n",
    "c.qmd": "# Gamma {#sec-c}\n\n## Part {#sec-c-part}\n\n![A dot.](dot.png){#fig-dot}\n\nSee @sec-b.\n",
    "references.qmd": "# References {.unnumbered}\n\n::: {#refs}\n:::\n",
    "references.bib": "@article{k1, title={One}, author={A, B}, year={2026}, journal={J}}\n",
}


def _cross_book(dest: Path) -> Path:
    import base64

    for rel, text in CROSS_BOOK.items():
        _write(dest / rel, text)
    _write(dest / "_filters" / "code-fold-summary.lua", (ROOT / "_filters" / "code-fold-summary.lua").read_text())
    (dest / "dot.png").write_bytes(base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="))
    return dest




def _render(root: Path, quarto) -> str:
    ok, output = bq.render(root, quarto, quiet=True)
    assert ok, output[-3000:]
    return output


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.mark.slow
def test_staged_book_with_the_filter_and_book_wide_nocite(quarto, tmp_path):
    """Three renders of a five-page book, each settling one question.

    1. From a stage (:func:`editions.stage_book`), with the code-fold filter and ``nocite`` for the
       whole book: a file a page links (as chapter 02 links data/lab/README.md) is in the book,
       nothing is written through the links, the folded cell carries its summary and the
       bibliography page lists its entries.
    2. In place without the filter: the same files and pages (attribute order aside).
    3. With ``nocite`` on references.qmd alone: Quarto hides that page's list, and the check says so.
    """
    root = _cross_book(tmp_path / "book")
    _write(root / "data" / "notes.md", "notes")
    (root / "b.qmd").write_text(CROSS_BOOK["b.qmd"] + "\nThe [notes](data/notes.md).\n")
    stage = root / ".stage"
    editions.stage_book(root, stage)
    output = _render(stage, quarto)
    assert "Unable to resolve link target" not in output
    on = stage / "_book"
    assert (on / "data" / "notes.md").read_text() == "notes" and not (root / "_book").exists()
    assert re.search(r"<summary>\s*Show the code\s*</summary>", (on / "a.html").read_text())
    assert bibliography_problems(stage) == [] and "One" in (on / "references.html").read_text()

    off = _cross_book(tmp_path / "no-filter")
    _write(off / "data" / "notes.md", "notes")
    (off / "b.qmd").write_text((root / "b.qmd").read_text())
    cfg = (off / "_quarto.yml").read_text()
    (off / "_quarto.yml").write_text(cfg.replace("filters:\n  - _filters/code-fold-summary.lua\n", ""))
    _render(off, quarto)
    assert _files(on) == _files(off / "_book")
    for rel in _files(on):
        if rel.endswith(".html"):
            assert _tree(on / rel) == _tree(off / "_book" / rel), rel

    page_only = _cross_book(tmp_path / "page-only")
    cfg = (page_only / "_quarto.yml").read_text()
    (page_only / "_quarto.yml").write_text(cfg.replace("nocite: |\n  @*\n", ""))
    (page_only / "references.qmd").write_text("---\nnocite: |\n  @*\n---\n\n" + CROSS_BOOK["references.qmd"])
    _render(page_only, quarto)
    assert bibliography_problems(page_only) == [
        "references.html: the bibliography is hidden (style display: none on #refs)"]
