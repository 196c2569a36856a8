"""Smoke test: every chapter executes with SMALL=True, without error outputs, with figures and prose."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from oraclegap import book, report

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = book.chapter_sources(ROOT)


@pytest.mark.slow
@pytest.mark.notebooks
@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_runs_small(src, tmp_path):
    out = tmp_path / f"{src.stem}.ipynb"
    book.execute_chapter(src, out, {"SMALL": True}, cwd=ROOT)
    nb = nbformat.read(out, as_version=4)
    assert book.error_outputs(nb) == []
    kinds = [set(o.get("data", {})) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert any("image/png" in k for k in kinds), "a chapter should show at least one figure"
    assert any("text/markdown" in k for k in kinds), "prose with computed numbers should appear"
    # every sentence holds against the intervals beside it (tests/report/test_sentences.py shows that
    # each scanner fails on a sentence that does not)
    prose = [o["data"]["text/markdown"] for c in nb.cells if c.cell_type == "code"
             for o in c.get("outputs", []) if "text/markdown" in o.get("data", {})]
    wrong = [p for text in prose
             for p in report.direction_problems(text) + report.share_problems(text)
             + report.wording_problems(text)]
    assert wrong == [], "sentences their intervals contradict:\n  " + "\n  ".join(wrong)
    # each labelled figure cell holds its figure alone (Quarto would make sub-figures otherwise)
    for c in nb.cells:
        if c.cell_type == "code" and book.cell_options(c.source)[0].get("label", "").startswith("fig-"):
            assert all(any(m.startswith("image/") for m in o.get("data", {})) for o in c.outputs), c.source[:80]
    # the rendered fallback page for this chapter has its images and no errors
    (tmp_path / "_quarto.yml").write_text(f"book:\n  chapters:\n    - index.qmd\n    - chapters/{src.stem}.ipynb\n")
    book.render_fallback(tmp_path, [out])
    # rendered alone, the page cannot resolve references into the other chapters: those alone are allowed
    elsewhere = {lab for page in book.quarto_pages(ROOT) if page.is_chapter and Path(page.file).stem != src.stem
                 for lab in book.structure._labels_and_refs(ROOT, page)[0]}
    problems = [p for p in book.page_problems(tmp_path / "_book" / "chapters" / f"{src.stem}.html")
                if not (p.endswith("is unresolved") and p.split("reference @")[1].split()[0] in elsewhere)
                and not _in_the_whole_site(p)]
    assert problems == []


def _in_the_whole_site(problem: str) -> bool:
    """A link from a chapter rendered alone that the whole site resolves: another page of the book
    (its source beside the book's sources), a download the full build writes, or a project file."""
    m = re.search(r"link (\S+) leads to no file", problem)
    if not m:
        return False
    target = Path(m.group(1).split("#")[0])
    rel = (Path("chapters") / target).as_posix().replace("chapters/../", "")
    page = ROOT / rel
    return (rel.startswith("downloads/") or page.exists()
            or (page.suffix == ".html" and (page.with_suffix(".qmd").exists()
                                            or (ROOT / "notebooks" / f"{page.stem}.py").exists())))
