"""The student edition (oraclegap.book.editions) on synthetic notebooks; the Quarto renders of it
are in tests/book/test_quarto.py, the slides' tests in tests/book/test_slides.py."""

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


def test_student_tools_link_back_and_up_a_folder():
    tools = [{"icon": "mortarboard", "text": "Kit", "menu": [
        {"text": "Student edition", "href": "student/index.html"},
        {"text": "Slides", "href": "slides/index.html"},
        {"text": "PDF", "href": "oraclegap.pdf"},
        {"text": "Setup", "href": "preclass.qmd"},
        {"text": "Elsewhere", "href": "https://example.org/x.html"}]}]
    menu = editions.student_tools(tools)[0]["menu"]
    assert [m["href"] for m in menu] == ["../index.html", "../slides/index.html", "../oraclegap.pdf",
                                         "preclass.qmd", "https://example.org/x.html"]
    assert menu[0]["text"] != "Student edition"
    assert tools[0]["menu"][0]["href"] == "student/index.html"  # the input is not modified


def test_stage_student_site_rewrites_only_the_staged_config(tmp_path):
    root = tmp_path / "p"
    (root / "chapters").mkdir(parents=True)
    (root / "_quarto.yml").write_text(
        "project:\n  type: book\nbook:\n  title: T\n  sidebar:\n    tools:\n      - icon: x\n        menu:\n"
        "          - text: S\n            href: student/index.html\n  chapters:\n    - index.qmd\n"
        "    - chapters/01_a.ipynb\n")
    (root / "index.qmd").write_text("# I\n")
    (root / "chapters" / "01_a.ipynb").write_text(json.dumps(_nb()))
    original = (root / "_quarto.yml").read_text()
    removed = editions.stage_student_site(root, tmp_path / "stage")
    assert removed == {"chapters/01_a.ipynb": 2}
    staged = (tmp_path / "stage" / "_quarto.yml")
    assert not staged.is_symlink() and "../index.html" in staged.read_text()
    assert (root / "_quarto.yml").read_text() == original
