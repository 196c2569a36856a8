"""The book: _quarto.yml against notebooks/, cross-references, figure splitting, the fallback renderer."""

from __future__ import annotations

import nbformat
import pytest

from oraclegap import book
from oraclegap.book import fallback

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_quarto_lists_exactly_the_chapters(root):
    sources = book.chapter_sources(root)
    assert sources, "notebooks/ holds no NN_*.py chapter"
    pages = book.quarto_pages(root)
    assert pages[0].file == "index.qmd"
    assert [p.file for p in pages if p.is_chapter] == [f"{book.EXECUTED_DIR}/{s.stem}.ipynb" for s in sources]
    for p in pages:
        if not p.is_chapter:
            assert (root / p.file).is_file(), p.file


def test_the_book_has_no_structure_problems(root):
    assert book.structure_problems(root) == []


def test_pages_other_than_chapters_are_unnumbered(root):
    from oraclegap.book.structure import page_is_numbered

    for p in book.quarto_pages(root):
        assert page_is_numbered(root, p) == p.is_chapter, p.file


def test_references_page_lists_the_bibliography(root):
    pages = [p.file for p in book.quarto_pages(root)]
    assert "references.qmd" in pages
    text = (root / "references.qmd").read_text()
    assert "{#refs}" in text and "@*" in text  # every entry of references.bib, cited or not
    entries = fallback.bib_entries(root / "references.bib")
    assert len(entries) == (root / "references.bib").read_text().count("\n@") + 1
    assert all(e.get("title") and e.get("year") for e in entries)


def _project(tmp_path, quarto_yml: str, notebooks: dict[str, str], pages: dict[str, str] | None = None):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_quarto.yml").write_text(quarto_yml)
    for name, text in notebooks.items():
        (tmp_path / "notebooks" / name).write_text(text)
    for name, text in (pages or {}).items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_structure_problems_detects_faults(tmp_path):
    root = _project(
        tmp_path,
        "book:\n  chapters:\n    - index.qmd\n    - notation.qmd\n    - chapters/02_b.ipynb\n    - gone.qmd\n",
        {"01_a.py": "# %% [markdown]\n# # A\n# See @fig-missing and @tbl-ok.\n\n# %%\n#| label: tbl-ok\n#| tbl-cap: ok\nx = 1\n\n"
                    "# %%\n#| label: fig-nocap\nx = 2\n"},
        {"index.qmd": "# Preface {.unnumbered}\n", "notation.qmd": "---\ntitle: Notation\n---\nText @sec-nowhere.\n"},
    )
    problems = "\n".join(book.structure_problems(root))
    assert "lists chapters/02_b.ipynb but notebooks/ has no 02_b.py" in problems
    assert "does not list chapters/01_a.ipynb" in problems
    assert "lists gone.qmd, which does not exist" in problems
    assert "notation.qmd would get a chapter number" in problems
    assert "@fig-missing has no matching label" in problems and "@sec-nowhere has no matching label" in problems
    assert "@tbl-ok" not in problems
    assert "fig-nocap has no fig-cap" in problems
    assert "first cell must be Markdown" not in problems
    (root / "notebooks" / "01_a.py").write_text("# %% tags=['parameters']\nSMALL = False\n\n# %% [markdown]\n# # A\n")
    assert "01_a.py: the first cell must be Markdown opening with the chapter's '# Title'" in "\n".join(
        book.structure_problems(root))


def test_structure_accepts_parts_appendices_and_cross_page_references(tmp_path):
    root = _project(
        tmp_path,
        "book:\n  chapters:\n    - index.qmd\n    - part: Getting oriented\n      chapters:\n        - notation.qmd\n"
        "    - part: Chapters\n      chapters:\n        - chapters/01_a.ipynb\n        - chapters/04_d.ipynb\n"
        "  appendices:\n    - glossary.qmd\n",
        {"01_a.py": "# %% [markdown]\n# # A {#sec-a}\n\n# %%\n#| label: fig-a\n#| fig-cap: a\nx = 1\n",
         "04_d.py": "# %% [markdown]\n# # D\n# Back to @fig-a and @sec-a.\n"},
        {"index.qmd": "---\ntitle: \"Preface {.unnumbered}\"\n---\nHello.\n",
         "notation.qmd": "# Notation {.unnumbered}\nSee @sec-a and @fig-a.\n",
         "glossary.qmd": "# Glossary\nWords.\n"},
    )
    assert book.structure_problems(root) == []
    assert [p.part for p in book.quarto_pages(root)][:3] == [None, "Getting oriented", "Chapters"]
    assert book.quarto_pages(root)[-1].section == "appendices"
    notes = book.numbering_notes(root)
    assert notes == ["04_d is numbered 2 by Quarto until chapter(s) 02, 03 exist"]


def test_cell_options():
    opts, body = book.cell_options('#| label: fig-x\n#| fig-cap: "A caption: with colon"\nplot()\n#| not an option')
    assert opts == {"label": "fig-x", "fig-cap": "A caption: with colon"}
    assert body.startswith("plot()")


def _out(mime: str, value: str):
    return nbformat.v4.new_output("display_data", data={mime: value})


def test_split_float_outputs_gives_each_labelled_cell_one_float():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("#| label: fig-a\n#| fig-cap: A\nplot()",
                                  outputs=[_out("text/markdown", "before"), _out("image/png", PNG), _out("text/markdown", "Reading: after")]),
        nbformat.v4.new_code_cell("#| label: tbl-b\n#| tbl-cap: B\nshow()",
                                  outputs=[_out("text/html", "<table><tr><td>1</td></tr></table>"), _out("text/markdown", "Reading: b")]),
        nbformat.v4.new_code_cell("#| label: fig-c\n#| fig-cap: C\nplot()", outputs=[_out("image/png", PNG)]),
        nbformat.v4.new_code_cell("print(1)", outputs=[_out("image/png", PNG), _out("text/markdown", "kept together")]),
        nbformat.v4.new_code_cell("#| label: fig-e\n#| fig-cap: E\nboom()",
                                  outputs=[_out("image/png", PNG), nbformat.v4.new_output("error", ename="E", evalue="x", traceback=[])]),
    ]
    assert book.split_float_outputs(nb) == 2
    srcs = [c.source.splitlines()[0] for c in nb.cells]
    assert srcs == ["#| echo: false", "#| label: fig-a", "#| echo: false", "#| label: tbl-b", "#| echo: false",
                    "#| label: fig-c", "print(1)", "#| label: fig-e"]
    assert [list(o["data"]) for o in nb.cells[1].outputs] == [["image/png"]]
    assert nb.cells[0].outputs[0]["data"]["text/markdown"] == "before"
    assert nb.cells[2].outputs[0]["data"]["text/markdown"] == "Reading: after"
    assert [list(o["data"]) for o in nb.cells[3].outputs] == [["text/html"]]
    assert len(nb.cells[6].outputs) == 2 and len(nb.cells[7].outputs) == 2  # unlabelled and failed cells untouched
    assert len({c.get("id") for c in nb.cells}) == len(nb.cells)
    nbformat.validate(nb)


def test_callouts_become_block_quotes():
    text = '::: {.callout-note}\nA note.\n:::\n\n::: {.callout-tip collapse="true" title="Solution"}\nIt is 4.\n:::\nAfter.'
    out = fallback.callouts_to_quotes(text)
    assert ":::" not in out
    assert "> **Note**" in out and "> A note." in out
    assert "> **Solution**" in out and "> It is 4." in out
    assert out.splitlines()[-1] == "After."


def test_fallback_renderer_numbers_and_links(tmp_path):
    root = _project(
        tmp_path,
        "book:\n  title: T\n  chapters:\n    - index.qmd\n    - notation.qmd\n    - chapters/03_x.ipynb\n    - references.qmd\n",
        {},
        {"index.qmd": "# Preface {.unnumbered}\n\nWelcome text.\n\n::: {.callout-note}\nA note.\n:::\n",
         "notation.qmd": "# Notation {.unnumbered}\n\nThe figure is @fig-a.\n",
         "references.qmd": "# References {.unnumbered}\n\n::: {#refs}\n:::\n",
         "references.bib": "@article{k1,\n  author = {Doe, J.},\n  title = {A {Title}},\n  journal = {J},\n  year = {2020}\n}\n"},
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Chapter X\nSee @fig-a and @tbl-b, and @sec-later.\n\n## Later part {#sec-later}\nText."),
        nbformat.v4.new_code_cell("#| label: fig-a\n#| fig-cap: First figure\nplot()", outputs=[_out("image/png", PNG)]),
        nbformat.v4.new_code_cell("#| label: tbl-b\n#| tbl-cap: A table\n#| echo: false\nshow()",
                                  outputs=[_out("text/html", "<table><tr><td>1</td></tr></table>")]),
        nbformat.v4.new_markdown_cell("Symbols follow the [notation page](../notation.qmd)."),
        nbformat.v4.new_code_cell("show_md(solution)", outputs=[_out(
            "text/markdown", '::: {.callout-tip collapse="true"}\nThe solution is @fig-a.\n:::\n')]),
    ]
    (root / "chapters").mkdir()
    nbformat.write(nb, root / "chapters" / "03_x.ipynb")
    index = book.render_fallback(root, [root / "chapters" / "03_x.ipynb"], note="fallback note")
    page = (root / "_book" / "chapters" / "03_x.html").read_text()
    assert "Figure 3.1</b>: First figure" in page and 'href="#fig-a"' in page
    assert "Table 3.1</b>: A table" in page and 'id="tbl-b"' in page
    assert "#| label" not in page
    assert 'id="sec-later"' in page and 'href="#sec-later"' in page and "{#sec-later}" not in page
    assert "show()" not in page  # echo: false removes the input
    assert "fallback note" in page and 'href="../index.html"' in page
    assert 'href="../notation.html"' in page and ".qmd" not in page  # links to pages by their sources
    assert "The solution is" in page and "callout-tip" not in page and ":::" not in page  # Markdown outputs too
    notation = (root / "_book" / "notation.html").read_text()
    assert 'href="chapters/03_x.html#fig-a"' in notation and "Figure 3.1" in notation
    idx = index.read_text()
    assert "Preface" in idx and "{.unnumbered}" not in idx and ":::" not in idx
    assert "<blockquote>" in idx and "A note." in idx
    assert "Chapter X" in idx and "chapters/03_x.html" in idx and "Welcome text" in idx and "fallback note" in idx
    refs = (root / "_book" / "references.html").read_text()
    assert "Doe, J." in refs and "A Title" in refs and "{#refs}" not in refs
    for p in ("index.html", "notation.html", "chapters/03_x.html", "references.html"):
        assert book.page_problems(root / "_book" / p) == [], p


def test_page_problems_flags_missing_image_errors_references_and_subfigures(tmp_path):
    p = tmp_path / "p.html"
    p.write_text('<html><body><img src="nothere.png"><pre>Traceback (most recent call last): Error</pre>'
                 '<p>See <strong>?@fig-gone</strong> and @tbl-raw.</p><code>@fig-in-code</code>'
                 '<div class="quarto-subfloat-fig"><div id="fig-x-1"></div></div></body></html>')
    probs = "\n".join(book.page_problems(p))
    assert "nothere.png is missing" in probs and "error output" in probs
    assert "@fig-gone is unresolved" in probs and "@tbl-raw is unresolved" in probs
    assert "fig-in-code" not in probs
    assert "sub-figure panel" in probs and "fig-x" in probs
    ok = tmp_path / "ok.html"
    ok.write_text('<html><body><p>mail me@fig-host.org; <a href="#fig-a">Figure 1.1</a></p></body></html>')
    assert book.page_problems(ok) == []
    # slides load their images lazily (data-src): those files must exist too
    (tmp_path / "there.png").write_bytes(b"png")
    lazy = tmp_path / "slides.html"
    lazy.write_text('<html><body><img data-src="there.png"><img data-src="gone.png"></body></html>')
    assert book.page_problems(lazy) == ["slides.html: image gone.png is missing"]


def test_default_jobs_reads_the_environment(monkeypatch):
    monkeypatch.setenv("OG_BOOK_JOBS", "3")
    assert book.default_jobs() == 3
    monkeypatch.setenv("OG_BOOK_JOBS", "many")
    with pytest.raises(ValueError, match="OG_BOOK_JOBS"):
        book.default_jobs()
    monkeypatch.delenv("OG_BOOK_JOBS")
    assert 1 <= book.default_jobs() <= 4


def test_folded_cell_options_are_flattened_for_quarto():
    """Quarto 1.7 renders a notebook cell with a multi-line option as a broken div: the executed
    notebook gets one quoted line per option; other lines are kept."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('#| label: tbl-a\n#| tbl-cap: >-\n#|   A "quoted" caption\n#|   in two '
                                          'lines.\n#| echo: false\nx = 1\n#|   not an option line'),
                nbformat.v4.new_code_cell("#| label: fig-b\n#| fig-cap: |\n#|   first\n#|   second\ny = 2"),
                nbformat.v4.new_markdown_cell("#| tbl-cap: >-\n#|   markdown stays")]
    from oraclegap.book.execute import flatten_cell_options

    assert flatten_cell_options(nb) == 2
    assert nb.cells[0].source == ('#| label: tbl-a\n#| tbl-cap: "A \\"quoted\\" caption in two lines."\n'
                                  '#| echo: false\nx = 1\n#|   not an option line')
    assert nb.cells[1].source == '#| label: fig-b\n#| fig-cap: "first\\nsecond"\ny = 2'
    assert nb.cells[2].source.startswith("#| tbl-cap: >-")
    assert book.cell_options(nb.cells[0].source)[0]["tbl-cap"].strip("\"").startswith("A ")
    assert flatten_cell_options(nb) == 0  # idempotent


def test_cell_options_read_folded_captions():
    from oraclegap.book import cell_options

    src = ("#| label: tbl-x\n#| tbl-cap: >-\n#|   The first half of a long caption: with a colon,\n"
           "#|   and the rest of it.\n#| echo: false\nshow(1)")
    opts, body = cell_options(src)
    assert opts == {"label": "tbl-x", "tbl-cap": "The first half of a long caption: with a colon, and the rest of it.",
                    "echo": "false"}
    assert body == "show(1)"
    assert cell_options('#| fig-cap: "Short."\nx')[0] == {"fig-cap": "Short."}
