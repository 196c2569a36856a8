"""The student edition and the slides (oraclegap.book.editions) on synthetic notebooks; the Quarto
renders of both are in tests/test_quarto.py."""

from __future__ import annotations

import base64
import json

from oraclegap.book import editions
from oraclegap.report import markdown as R

PNG = base64.b64encode(b"\\x89PNG\\r\\n\\x1a\\nfake").decode()


def _md(text):
    return {"output_type": "display_data", "data": {"text/markdown": text}, "metadata": {}}


def _nb():
    return {"cells": [
        {"cell_type": "markdown", "source": "# A chapter {#sec-a}\n\nDoes the gap survive?\n\nMore."},
        {"cell_type": "code", "source": "#| label: fig-one\n#| fig-cap: \"The first figure. Longer.\"\nplot()",
         "outputs": [{"output_type": "display_data", "data": {"image/png": PNG}}]},
        {"cell_type": "code", "source": "#| label: tbl-x\nshow()", "outputs": [_md("a table")]},
        {"cell_type": "markdown", "source": "## Takeaways"},
        {"cell_type": "code", "source": "show()", "outputs": [_md("- first takeaway"), _md("- second")]},
        {"cell_type": "markdown", "source": "## Exercises\n\n1. Try."},
        {"cell_type": "code", "source": "sol()", "outputs": [
            _md('::: {.callout-tip .og-solution collapse="true"}\n## Solution\n\n1. Yes.\n:::\n'),
            _md('::: {.callout-tip collapse="true"}\n## Solution\n\nolder form\n:::\n'),
            _md('::: {.callout-tip}\n## Hint\n\nnot a solution\n:::\n')]},
    ]}


def test_report_solution_is_marked(monkeypatch):
    shown = []
    monkeypatch.setattr(R, "_display_markdown", shown.append)
    R.solution("1. It is {v}.", v=3)
    out = shown[0]
    assert out.startswith("::: {.callout-tip .og-solution") and "It is 3." in out


def test_strip_solutions_removes_both_forms_and_keeps_the_rest():
    nb = _nb()
    stripped, n = editions.strip_solutions(nb)
    assert n == 2
    kept = [o["data"]["text/markdown"] for o in stripped["cells"][-1]["outputs"]]
    assert kept == ['::: {.callout-tip}\n## Hint\n\nnot a solution\n:::\n']
    assert len(nb["cells"][-1]["outputs"]) == 3  # the input is not modified
    assert stripped["cells"][:-1] == nb["cells"][:-1]


def test_chapter_digest_reads_title_question_figures_takeaways():
    d = editions.chapter_digest(_nb())
    assert d["title"] == "A chapter" and d["question"] == "Does the gap survive?"
    assert [f["label"] for f in d["figures"]] == ["fig-one"] and d["figures"][0]["png"].startswith(b"\\x89PNG")
    assert d["takeaways"] == ["- first takeaway", "- second"]
    assert editions.chapter_digest(_nb(), max_figures=0)["figures"] == []


def test_slide_deck_from_a_project(tmp_path):
    (tmp_path / "_quarto.yml").write_text("project:\n  type: book\nbook:\n  title: T\n  chapters:\n"
                                          "    - index.qmd\n    - chapters/01_a.ipynb\n")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "01_a.ipynb").write_text(json.dumps(_nb()))
    deck = editions.slide_deck(tmp_path, tmp_path / "stage" / "img")
    assert deck.startswith("---\ntitle: \"T\"") and "revealjs" in deck
    assert "# A chapter" in deck and "## Takeaways" in deck and "- first takeaway" in deck
    assert "![The first figure. Longer.](img/01_a-fig-one.png)" in deck
    assert (tmp_path / "stage" / "img" / "01_a-fig-one.png").read_bytes().startswith(b"\\x89PNG")
    assert "Yes." not in deck  # solutions never reach the slides


def test_slides_drop_the_books_cross_references():
    assert editions._clean_markdown("- as @sec-nulls shows (@fig-one).") == "- as (in the book) shows (in the book)."
