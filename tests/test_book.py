"""The book: _quarto.yml against notebooks/, cross-references, and the fallback renderer."""

from __future__ import annotations

import nbformat

from oraclegap import book


def test_quarto_lists_exactly_the_chapters(root):
    sources = book.chapter_sources(root)
    assert sources, "notebooks/ holds no NN_*.py chapter"
    listed = [c for c in book.quarto_chapters(root) if not c.endswith(".qmd")]
    assert listed == [f"{book.EXECUTED_DIR}/{s.stem}.ipynb" for s in sources]
    assert book.quarto_chapters(root)[0] == "index.qmd"
    pages = [c for c in book.quarto_chapters(root) if c.endswith(".qmd")]
    assert all((root / c).is_file() for c in pages)
    # front-matter pages come before the chapters and are unnumbered, so chapter numbers follow the files
    assert book.quarto_chapters(root)[: len(pages)] == pages
    for c in pages[1:]:
        first = next(line for line in (root / c).read_text().splitlines() if line.startswith("# "))
        assert ".unnumbered" in first, f"{c}: the page heading must be {{.unnumbered}}"


def test_every_reference_has_a_label(root):
    assert book.structure_problems(root) == []


def test_structure_problems_detects_faults(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_quarto.yml").write_text("book:\n  chapters:\n    - index.qmd\n    - chapters/02_b.ipynb\n")
    (tmp_path / "notebooks" / "01_a.py").write_text(
        "# %% [markdown]\n# # A\n# See @fig-missing and @tbl-ok.\n\n# %%\n#| label: tbl-ok\n#| tbl-cap: ok\nx = 1\n\n"
        "# %%\n#| label: fig-nocap\nx = 2\n"
    )
    problems = "\n".join(book.structure_problems(tmp_path))
    assert "lists chapters/02_b.ipynb but notebooks/ has no matching" in problems
    assert "does not list chapters/01_a.ipynb" in problems
    assert "@fig-missing has no matching label" in problems
    assert "@tbl-ok" not in problems
    assert "fig-nocap has no fig-cap" in problems


def test_cell_options():
    opts, body = book.cell_options('#| label: fig-x\n#| fig-cap: "A caption: with colon"\nplot()\n#| not an option')
    assert opts == {"label": "fig-x", "fig-cap": "A caption: with colon"}
    assert body.startswith("plot()")


def test_fallback_renderer_numbers_and_links(tmp_path):
    (tmp_path / "_quarto.yml").write_text("book:\n  title: T\n  chapters:\n    - index.qmd\n    - chapters/03_x.ipynb\n")
    (tmp_path / "index.qmd").write_text("---\ntitle: x\n---\n# Preface {.unnumbered}\n\nWelcome text.\n\n::: {.callout-note}\nA note.\n:::\n")
    nb = nbformat.v4.new_notebook()
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Chapter X\nSee @fig-a and @tbl-b, and @sec-later.\n\n## Later part {#sec-later}\nText."),
        nbformat.v4.new_code_cell("#| label: fig-a\n#| fig-cap: First figure\nplot()",
                                  outputs=[nbformat.v4.new_output("display_data", data={"image/png": png})]),
        nbformat.v4.new_code_cell("#| label: tbl-b\n#| tbl-cap: A table\n#| echo: false\nshow()",
                                  outputs=[nbformat.v4.new_output("display_data", data={"text/html": "<table><tr><td>1</td></tr></table>"})]),
    ]
    (tmp_path / "chapters").mkdir()
    nbformat.write(nb, tmp_path / "chapters" / "03_x.ipynb")
    index = book.render_fallback(tmp_path, [tmp_path / "chapters" / "03_x.ipynb"], note="fallback note")
    page = (tmp_path / "_book" / "03_x.html").read_text()
    assert "Figure 3.1</b>: First figure" in page and 'href="#fig-a"' in page
    assert "Table 3.1</b>: A table" in page and 'id="tbl-b"' in page
    assert "#| label" not in page
    assert 'id="sec-later"' in page and 'href="#sec-later"' in page and "{#sec-later}" not in page
    assert "show()" not in page  # echo: false removes the input
    idx = index.read_text()
    assert "Preface" in idx and "{.unnumbered}" not in idx
    assert "Chapter X" in idx and "03_x.html" in idx and "Welcome text" in idx and "fallback note" in idx
    assert book.page_problems(tmp_path / "_book" / "03_x.html") == []


def test_page_problems_flags_missing_image_and_errors(tmp_path):
    p = tmp_path / "p.html"
    p.write_text('<html><body><img src="nothere.png"><pre>Traceback (most recent call last): Error</pre></body></html>')
    probs = "\n".join(book.page_problems(p))
    assert "nothere.png is missing" in probs and "error output" in probs


def test_front_matter_pages_and_cross_page_sections(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_quarto.yml").write_text(
        "book:\n  title: T\n  chapters:\n    - index.qmd\n    - notes.qmd\n    - missing.qmd\n    - chapters/01_a.ipynb\n"
    )
    (tmp_path / "index.qmd").write_text("# Preface {.unnumbered}\n")
    (tmp_path / "notes.qmd").write_text(
        "# Notes {#sec-notes .unnumbered}\n\nSee @sec-part-a, [the glossary](notes.qmd) and @sec-nowhere.\n\n"
        "::: {.callout-tip collapse=\"true\"}\nFolded.\n:::\n"
    )
    (tmp_path / "notebooks" / "01_a.py").write_text(
        "# %% [markdown]\n# # A {#sec-a}\n# Back to @sec-notes and [notes](../notes.qmd).\n#\n# ## Part {#sec-part-a}\n# Text.\n"
    )
    problems = "\n".join(book.structure_problems(tmp_path))
    assert "missing.qmd but the file does not exist" in problems
    assert "notes.qmd: @sec-nowhere has no matching label" in problems
    assert "sec-part-a" not in problems and "01_a.py" not in problems  # sections resolve across pages
    assert book.section_labels(tmp_path)["sec-part-a"] == ("01_a", "Part")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A {#sec-a}\nBack to @sec-notes and [notes](../notes.qmd)."),
                nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
                    "display_data", data={"text/markdown": "::: {.callout-tip collapse=\"true\"}\nA solution.\n:::\n"})])]
    (tmp_path / "chapters").mkdir()
    nbformat.write(nb, tmp_path / "chapters" / "01_a.ipynb")
    book.render_fallback(tmp_path, [tmp_path / "chapters" / "01_a.ipynb"])
    notes = (tmp_path / "_book" / "notes.html").read_text()
    assert 'href="01_a.html#sec-part-a"' in notes and "Folded." in notes and ":::" not in notes
    assert 'href="notes.html"' in notes  # links to .qmd pages point at their rendered pages
    chap = (tmp_path / "_book" / "01_a.html").read_text()
    assert 'href="notes.html#sec-notes"' in chap and "A solution." in chap and "callout-tip" not in chap
    assert 'href="notes.html"' in chap
    assert "notes.html" in (tmp_path / "_book" / "index.html").read_text()
