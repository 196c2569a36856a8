"""Quarto: finding or installing it, and what it renders from the pipeline's executed chapters.

The rendering tests need a Quarto (on PATH, in .quarto-kit/ from `make quarto`, or PyPI
quarto-cli in the virtual environment) and skip with the reason when there is none; `make test`
installs one from the offline kit first when the kit exists.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import textwrap
from pathlib import Path

import nbformat
import pytest

from oraclegap import book, report
from oraclegap.book import quarto as bq

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def quarto() -> bq.Quarto:
    q = bq.find_quarto(ROOT, install=False)
    if not q:
        pytest.skip("no Quarto to render with (" + "; ".join(q.tried) + "); `make quarto` installs one from the kit")
    return q


# ----------------------------------------------------------------------------- finding Quarto
def _fake_quarto(path: Path, version: str = "9.9.9") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture()
def no_quarto(monkeypatch, tmp_path):
    """PATH without quarto, no PyPI step, the venv's quarto hidden, no kit: a bare machine."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "quarto").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir)] + keep))
    monkeypatch.setenv("OG_QUARTO_KIT", str(tmp_path / "no-kit"))
    monkeypatch.setattr(bq, "_venv_quarto", lambda: None)
    monkeypatch.setattr(bq, "_install_pypi", lambda prefix, log: (None, "PyPI quarto-cli: skipped in this test"))
    return bin_dir


def test_quarto_on_path_comes_first(no_quarto, tmp_path):
    _fake_quarto(no_quarto / "quarto", "1.2.3")
    _fake_quarto(tmp_path / "proj" / bq.KIT_DIR / "bin" / "quarto", "7.7.7")
    (tmp_path / "proj" / bq.KIT_DIR / ".installed").write_text("")
    q = bq.find_quarto(tmp_path / "proj")
    assert q and q.version == "1.2.3" and q.origin == "quarto on PATH"


def test_installed_kit_is_reused(no_quarto, tmp_path):
    _fake_quarto(tmp_path / bq.KIT_DIR / "bin" / "quarto", "7.7.7")
    assert not bq.find_quarto(tmp_path, install=False)  # no stamp: an unfinished install
    (tmp_path / bq.KIT_DIR / ".installed").write_text("")
    q = bq.find_quarto(tmp_path, install=False)
    assert q and q.version == "7.7.7" and bq.KIT_DIR in q.origin


def test_kit_is_installed_once_into_the_project(no_quarto, tmp_path, monkeypatch):
    if not shutil.which("npm"):
        pytest.skip("npm is not installed (the kit's installer needs it)")
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "install.sh").write_text(textwrap.dedent("""\
        #!/usr/bin/env bash
        set -e
        echo run >> "$(dirname "$0")/runs"
        mkdir -p "$1/bin"; printf '#!/bin/sh\\necho 1.7.34\\n' > "$1/bin/quarto"; chmod +x "$1/bin/quarto"
        test -z "$BIN_DIR"   # nothing is linked outside the prefix
    """))
    monkeypatch.setenv("OG_QUARTO_KIT", str(kit))
    proj = tmp_path / "proj"
    proj.mkdir()
    q = bq.find_quarto(proj)
    assert q and q.version == "1.7.34" and "installed from the kit" in q.origin
    assert q.path == str(proj / bq.KIT_DIR / "bin" / "quarto")
    assert bq.find_quarto(proj) and (kit / "runs").read_text().count("run") == 1


def test_no_quarto_gives_every_reason(no_quarto, tmp_path, monkeypatch):
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "install.sh").write_text("#!/usr/bin/env bash\necho 'npm: registry unreachable' >&2\nexit 3\n")
    monkeypatch.setenv("OG_QUARTO_KIT", str(kit))
    q = bq.find_quarto(tmp_path)
    assert not q and q.path is None
    text = q.describe()
    assert "no quarto on PATH" in text and "PyPI quarto-cli: skipped" in text
    assert ("installing from the kit" in text and "failed" in text) or "needs npm" in text


def test_missing_kit_is_named(no_quarto, tmp_path):
    q = bq.find_quarto(tmp_path)
    assert not q and f"no kit at {tmp_path / 'no-kit'}" in q.describe()


def test_kit_prefix_that_is_not_a_directory_is_named(no_quarto, tmp_path, monkeypatch):
    """A broken link (or a file) where the kit would go is a clear reason, not a traceback."""
    if not shutil.which("npm"):
        pytest.skip("npm is not installed (the kit's installer needs it)")
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "install.sh").write_text("#!/usr/bin/env bash\nexit 0\n")
    monkeypatch.setenv("OG_QUARTO_KIT", str(kit))
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / bq.KIT_DIR).symlink_to(proj / bq.KIT_DIR)  # a link to itself
    q = bq.find_quarto(proj)
    assert not q and "is not a directory" in q.describe() and str(proj / bq.KIT_DIR) in q.describe()


# ----------------------------------------------------------------------------- rendering
FIXTURE_CHAPTER_1 = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # First chapter {#sec-first}
#
# The figure is @fig-curve, the table @tbl-numbers; @sec-later explains more.
#
# ::: {.callout-note}
# A note inside a chapter.
# :::

# %% tags=["parameters"]
SMALL = False

# %%
#| label: fig-curve
#| fig-cap: "A rising curve."
import matplotlib.pyplot as plt
from IPython.display import Markdown, display
fig, ax = plt.subplots(figsize=(4, 3))
ax.plot([0, 1, 2], [0, 1, 4])
plt.show()
display(Markdown("Reading: the curve rises."))
print("and a printed line")

# %%
#| label: tbl-numbers
#| tbl-cap: >-
#|   Three
#|   numbers.
import pandas as pd
from oraclegap import report
display(report.table(pd.DataFrame({"x": [1, 2, 3]})))
display(Markdown("Reading: three rows."))

# %% [markdown]
# ## Later {#sec-later}
#
# Back to @fig-curve.

# %% [markdown]
# ## Takeaways

# %%
display(Markdown("- The curve rises."))

# %% [markdown]
# ## Exercises
#
# 1. Predict the curve at 3.

# %%
from oraclegap import report as R
R.solution("1. It is {v}.", v=9)

# %%
#| code-fold: false
import math
from oraclegap.book import selfcheck
answer_value = round(math.pi * 2.3, 6)  # the chapter's value, computed on the run
selfcheck.check("Exercise 1", {"x": "7225663/1000000"}, {"x": answer_value}, abs_tol=0.001)
selfcheck.check("Exercise 1b", {"x": 7.3}, {"x": answer_value}, abs_tol=0.001)
'''

FIXTURE_CHAPTER_2 = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Second chapter
#
# Across chapters: @fig-curve and @sec-later.

# %% tags=["parameters"]
SMALL = False
'''


FIXTURE_PLAN = """# For instructors

## A 90-minute plan

| minutes | what | where |
|---|---|---|
| 0-10 | Warm-up with the symbols | [notation](notation.qmd) |
| 10-60 | The curve of the first chapter | @sec-first |
| 60-90 | What comes later | @sec-later |
"""


def _fixture_book(dest: Path) -> Path:
    (dest / "notebooks").mkdir(parents=True)
    (dest / "notebooks" / "01_first.py").write_text(FIXTURE_CHAPTER_1)
    (dest / "notebooks" / "02_second.py").write_text(FIXTURE_CHAPTER_2)
    cfg = (ROOT / "_quarto.yml").read_text()
    chapters = textwrap.dedent("""\
      chapters:
        - index.qmd
        - part: "Before the chapters"
          chapters:
            - notation.qmd
        - chapters/01_first.ipynb
        - chapters/02_second.ipynb
        - references.qmd
    """)
    cfg = re.sub(r"  chapters:\n(    - .*\n)+", textwrap.indent(chapters, "  "), cfg)
    (dest / "_quarto.yml").write_text(cfg)
    shutil.copy(ROOT / "_quarto-small.yml", dest / "_quarto-small.yml")
    shutil.copy(ROOT / "references.bib", dest / "references.bib")
    shutil.copy(ROOT / "references.qmd", dest / "references.qmd")
    shutil.copytree(ROOT / "_filters", dest / "_filters")
    (dest / "index.qmd").write_text("# Preface {.unnumbered}\n\nWelcome.\n\n::: {.callout-note}\nA preface note.\n:::\n")
    (dest / "notation.qmd").write_text("# Notation {.unnumbered}\n\nThe curve of @fig-curve.\n")
    (dest / "instructors.qmd").write_text(FIXTURE_PLAN)  # read by the slides; not a page of this book
    return dest


@pytest.fixture(scope="module")
def rendered(quarto, tmp_path_factory):
    """The fixture book executed by the pipeline (SMALL) and rendered by Quarto."""
    root = _fixture_book(tmp_path_factory.mktemp("qbook"))
    assert book.structure_problems(root) == []
    summary = book.build(root, small=True, renderer="quarto", quarto=quarto)
    assert summary["renderer"] == "quarto" and summary["small"]
    return root


def _page(root: Path, rel: str) -> str:
    return (root / "_book" / rel).read_text(encoding="utf-8")


def _sidebar(page: str) -> str:
    i = page.index('id="quarto-sidebar"')
    return page[i : page.index("</nav>", i)]


def _block(page: str, ident: str) -> str:
    """The HTML of the float ``ident`` (from its id to the end of its figure)."""
    i = page.index(f'id="{ident}"')
    return page[i : page.index("</figure>", i)]


@pytest.mark.slow
def test_every_reference_resolves(rendered):
    for rel in ("index.html", "notation.html", "chapters/01_first.html", "chapters/02_second.html", "references.html"):
        page = _page(rendered, rel)
        assert "?@" not in page, rel
        assert book.page_problems(rendered / "_book" / rel) == [], rel
    first = _page(rendered, "chapters/01_first.html")
    assert re.search(r'href="#sec-later" class="quarto-xref"><span>Section 1\.1</span>', first)
    assert re.search(r'href="#fig-curve" class="quarto-xref">Figure&nbsp;<span>1\.1</span>', first)
    assert re.search(r'href="#tbl-numbers" class="quarto-xref">Table&nbsp;<span>1\.1</span>', first)
    second = _page(rendered, "chapters/02_second.html")
    assert re.search(r'href="(\./)?01_first\.html#fig-curve" class="quarto-xref">Figure&nbsp;<span>1\.1</span>', second)
    assert re.search(r'href="(\./)?01_first\.html#sec-later" class="quarto-xref"><span>Section 1\.1</span>', second)
    assert re.search(r'href="(\./)?chapters/01_first\.html#fig-curve" class="quarto-xref">Figure&nbsp;<span>1\.1', _page(rendered, "notation.html"))


@pytest.mark.slow
def test_each_figure_and_table_is_one_numbered_float(rendered):
    page = _page(rendered, "chapters/01_first.html")
    assert "quarto-subfloat" not in page and 'id="fig-curve-1"' not in page
    fig = _block(page, "fig-curve")
    assert fig.count("<img") == 1
    assert re.search(r"<figcaption[^>]*>\s*Figure&nbsp;1\.1: A rising curve\.", fig)
    assert "Reading: the curve rises." not in fig and "Reading: the curve rises." in page
    assert "and a printed line" in page
    tbl = _block(page, "tbl-numbers")
    assert re.search(r"<figcaption[^>]*>\s*Table&nbsp;1\.1: Three numbers\.", tbl)
    assert tbl.count("<table") == 1 and "Reading: three rows." not in tbl
    # report.table's finished HTML is not re-parsed by Quarto, yet carries Bootstrap's classes
    tag = re.search(r"<table[^>]*>", tbl).group(0)
    assert re.search(r'class="[^"]*"', report.TABLE_ATTRIBUTES).group(0) in tag, tag
    assert "callout-note" in page


@pytest.mark.slow
def test_sidebar_lists_every_page_and_numbers_only_chapters(rendered):
    index = _page(rendered, "index.html")
    sidebar = _sidebar(index)
    for page in book.quarto_pages(rendered):
        assert f'href="./{page.html}"' in sidebar, page.file
    assert "Before the chapters" in sidebar
    numbers = re.findall(r"<span class=\"chapter-number\">(\d+)</span>&nbsp; <span class=\"chapter-title\">([^<]*)", sidebar)
    assert numbers == [("1", "First chapter"), ("2", "Second chapter")]
    assert "callout-note" in index and "A preface note." in index and ":::" not in index


@pytest.mark.slow
def test_reduced_build_banner_on_every_page(rendered):
    for page in ["index.html"] + [p.html for p in book.quarto_pages(rendered) if p.file != "index.qmd"]:
        assert "Reduced build." in _page(rendered, page), page


@pytest.mark.slow
def test_references_page_lists_the_bibliography(rendered):
    refs = _page(rendered, "references.html")
    assert "Opportunity Is Not Realizability" in refs and "Clopper" in refs
    assert book.bibliography_problems(rendered) == []  # shown, not hidden


TINY_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


@pytest.mark.slow
def test_project_config_renders_with_quarto(quarto, tmp_path):
    """The real _quarto.yml and its pages, with stand-in chapters: Quarto accepts the config,
    warns about nothing, lists every page in the sidebar, and leaves the preface unnumbered."""
    dest = tmp_path / "proj"
    dest.mkdir()
    pages = book.quarto_pages(ROOT)
    for name in ["_quarto.yml", "_quarto-small.yml", "references.bib"] + [p.file for p in pages if not p.is_chapter]:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "_filters", dest / "_filters")
    (dest / "chapters").mkdir()
    (dest / "chapters" / "dot.png").write_bytes(base64.b64decode(TINY_PNG))
    front = "".join((ROOT / p.file).read_text(encoding="utf-8") for p in pages if not p.is_chapter)
    floats = set(re.findall(r"@((?:fig|tbl)-[\w-]*\w)", front))  # the front matter's figure and table references
    for p in pages:
        if p.is_chapter:  # a stand-in with the chapter's section labels and the floats the front matter cites
            labels = book.structure._labels_and_refs(ROOT, p)[0]
            secs = [lab for lab in labels if lab.startswith("sec-")]
            heads = "".join(f"\n\n## Section {i} {{#{lab}}}\n\nText." for i, lab in enumerate(secs))
            heads += "".join(f"\n\n![A figure.](dot.png){{#{lab}}}" if lab.startswith("fig-") else
                             f"\n\n| a |\n|---|\n| 1 |\n\n: A table. {{#{lab}}}" for lab in sorted(floats & set(labels)))
            nb = nbformat.v4.new_notebook()
            nb.cells = [nbformat.v4.new_markdown_cell(f"# Stand-in for {Path(p.file).stem}\n\nText.{heads}")]
            nbformat.write(nb, dest / p.file)
    ok, output = bq.render(dest, quarto, quiet=True)
    assert ok, output[-3000:]
    assert "WARN" not in output, output
    index = (dest / "_book" / "index.html").read_text()
    sidebar = _sidebar(index)
    for p in pages:
        assert f'href="./{p.html}"' in sidebar, p.file
    numbered = re.findall(r'<span class="chapter-number">\d+</span>&nbsp; <span class="chapter-title">Stand-in for (\w+)', sidebar)
    assert numbered == [Path(p.file).stem for p in pages if p.is_chapter]


@pytest.mark.slow
def test_every_page_carries_the_build_line(rendered):
    from oraclegap.book.buildline import page_build_line

    for page in ["index.html"] + [p.html for p in book.quarto_pages(rendered) if p.file != "index.qmd"]:
        line = page_build_line(_page(rendered, page))
        assert line and "lock" in line and "numpy" in line and "rendered with Quarto" in line, page
        assert line.endswith("reduced build (--small)"), page
    assert "build_line" in json.loads(_page(rendered, ".og-build.json"))


@pytest.mark.slow
def test_chapter_pages_link_their_notebooks(rendered):
    from oraclegap.book.buildline import download_links

    for p in book.quarto_pages(rendered):
        links = download_links(_page(rendered, p.html))
        if not p.is_chapter:
            assert links == [], p.file
            continue
        stem = Path(p.file).stem
        assert [Path(x).name for x in links] == [f"{stem}.py", f"{stem}.ipynb"], p.file
        for x in links:
            assert (rendered / "_book" / Path(p.html).parent / x).is_file(), x
    assert (rendered / "_book" / "downloads" / "01_first.py").read_text() == (rendered / "notebooks" / "01_first.py").read_text()


@pytest.mark.slow
def test_the_site_carries_the_classroom_kit(rendered):
    """make book's default build puts the student edition, the slides and the PDF (or the page
    that says how to make it) into _book/, and every page links them from the sidebar's menu,
    at the right depth; the student edition's menu leads back to the book with solutions."""
    from oraclegap.book.check import chromium

    b = rendered / "_book"
    assert "It is 9." not in (b / "student" / "chapters" / "01_first.html").read_text(encoding="utf-8")
    assert "reveal" in (b / "slides" / "index.html").read_text(encoding="utf-8")
    pdf = "oraclegap.pdf" if chromium() else "oraclegap-pdf.html"
    assert (b / pdf).is_file()
    for rel in ["index.html"] + [p.html for p in book.quarto_pages(rendered) if p.file != "index.qmd"]:
        menu = re.findall(r'class="dropdown-item sidebar-tools-main-item" href="([^"]+)"', _page(rendered, rel))
        up = "../" * rel.count("/") or "./"
        assert menu == [f"{up}student/index.html", f"{up}slides/index.html", f"{up}{pdf}"], rel
        for href in menu:
            assert (b / Path(rel).parent / href).resolve().is_file(), (rel, href)
        student = (b / "student" / rel).read_text(encoding="utf-8")
        back = re.findall(r'class="dropdown-item sidebar-tools-main-item" href="([^"]+)"', student)
        assert [(b / "student" / Path(rel).parent / h).resolve() for h in back] == [
            (b / "index.html").resolve(), (b / "slides" / "index.html").resolve(), (b / pdf).resolve()], rel
    assert book.unowned_book_files(b) == []


@pytest.mark.slow
def test_student_edition_drops_solutions_only(rendered, quarto):
    """The same book without the exercise solutions, a banner on every page; the default build and
    the execution cache keep them."""
    first = _page(rendered, "chapters/01_first.html")
    assert "og-solution" in first and "It is 9." in first
    res = book.build(rendered, small=True, renderer="quarto", quarto=quarto, student=True)
    assert res["executed"] == [] and res["student"]["solutions_removed"] == 1
    student = rendered / "_book-student"
    page = (student / "chapters" / "01_first.html").read_text(encoding="utf-8")
    assert "It is 9." not in page and "og-solution" not in page
    assert "Predict the curve at 3." in page and "A rising curve." in page  # the rest is the same book
    for rel in ["index.html"] + [p.html for p in book.quarto_pages(rendered) if p.file != "index.qmd"]:
        text = (student / rel).read_text(encoding="utf-8")
        assert "Student edition." in text and "Reduced build" in text, rel
        # read in the site, where build --student put it too: its links to the kit resolve there
        placed = rendered / "_book" / "student" / rel
        assert placed.read_text(encoding="utf-8") == text and book.page_problems(placed) == [], rel
    assert "It is 9." in _page(rendered, "chapters/01_first.html")  # the default build is untouched
    assert "It is 9." in (rendered / "chapters" / "01_first.ipynb").read_text()  # and so is the cache
    assert not (rendered / ".student-stage").exists()
    dl = (student / "downloads" / "01_first.ipynb").read_text(encoding="utf-8")
    assert "It is 9." not in dl and "A rising curve." in dl  # the student's executed notebook has no solutions
    # the self-checks stay, say right and wrong, and never show the chapter's value (7.225663)
    from oraclegap.book.check import _visible_text

    assert "og-selfcheck" in page and "1 of 1 within the tolerance" in page and "0 of 1 within the tolerance" in page
    for text in (_visible_text(page), page, dl):
        assert not any(v in text for v in ("7.2257", "7.226", "7.23", "7.225663")), "the self-check showed its value"


@pytest.mark.slow
def test_slides_follow_the_plan_with_the_chapters_figures_and_readings(rendered, quarto):
    res = book.render_slides(rendered, quarto)
    deck = (rendered / "_slides" / "index.html").read_text(encoding="utf-8")
    assert res["slides"] >= 4 and "reveal" in deck
    order = [deck.find(t) for t in ("Warm-up with the symbols", "The curve of the first chapter", "What comes later")]
    assert -1 not in order and order == sorted(order)
    assert "The curve rises." in deck and "It is 9." not in deck
    imgs = re.findall(r'<img[^>]*src="([^"]+\.png)"', deck)
    assert imgs and all((rendered / "_slides" / src).is_file() for src in imgs)
    from oraclegap.book.buildline import page_build_line

    assert "revealjs" in page_build_line(deck)
    assert not (rendered / ".slides-stage").exists()
    (rendered / "_slides" / "my-notes.txt").write_text("mine")  # a file no build wrote is never deleted
    with pytest.raises(ValueError, match="my-notes.txt"):
        book.render_slides(rendered, quarto)
    assert (rendered / "_slides" / "my-notes.txt").read_text() == "mine"
    (rendered / "_slides" / "my-notes.txt").unlink()
