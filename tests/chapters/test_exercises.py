"""The chapters' exercises: one placement everywhere (each exercise in its own Markdown cell, its
folded solution computed in the code cells right under it), and no duration that nothing timed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oraclegap.book import structure

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = structure.chapter_sources(ROOT)
ITEM = re.compile(r"^(\d+)\. \*\*", re.M)
SOLUTION = re.compile(r"\bsolution\(\s*\"(\d+)\. ")


def exercise_layout(cells) -> list[tuple[int, list[int]]]:
    """(exercise number, numbers of the solutions in the code cells under it) for each exercise
    Markdown cell between the ``## Exercises`` heading and the appendix; raises ``ValueError``
    for a Markdown cell there that holds more or fewer than one exercise."""
    start = next((i for i, c in enumerate(cells)
                  if c.cell_type == "markdown" and re.search(r"^## Exercises", c.source, re.M)), None)
    if start is None:
        raise ValueError("no '## Exercises' heading")
    layout: list[tuple[int, list[int]]] = []
    for c in cells[start:]:
        if c.cell_type == "markdown":
            if re.search(r"^## ", c.source.split("## Exercises", 1)[-1], re.M):
                break  # the appendix (or any next section) ends the exercises
            items = ITEM.findall(c.source)
            if len(items) != 1:
                raise ValueError(f"an exercise cell holds {len(items)} exercises: {c.source[:80]!r}")
            layout.append((int(items[0]), []))
        elif layout:
            layout[-1][1].extend(int(n) for n in SOLUTION.findall(c.source))
    return layout


@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_each_solution_sits_under_its_exercise(src):
    layout = exercise_layout(structure._read_cells(src))
    assert [n for n, _ in layout] == list(range(1, len(layout) + 1)), layout
    misplaced = [(n, sols) for n, sols in layout if not sols or set(sols) != {n}]
    assert not misplaced, f"{src.name}: exercises without their own solution right under them: {misplaced}"


def test_the_layout_scan_fails_on_solutions_after_the_list():
    from types import SimpleNamespace as C

    listed = [C(cell_type="markdown", source="## Exercises\n\n1. **A.** Do.\n2. **B.** Do."),
              C(cell_type="code", source='R.solution("1. x")\nR.solution("2. y")')]
    with pytest.raises(ValueError, match="holds 2 exercises"):
        exercise_layout(listed)
    under = [C(cell_type="markdown", source="## Exercises\n\n1. **A.** Do."),
             C(cell_type="code", source='R.solution("1. x")'),
             C(cell_type="markdown", source="2. **B.** Do."),
             C(cell_type="code", source='solution("2. y", v=1)'),
             C(cell_type="markdown", source="## Appendix {#sec-x}\n\n1. **Not an exercise.**")]
    assert exercise_layout(under) == [(1, [1]), (2, [2])]


def test_no_exercise_states_a_duration_nothing_timed():
    """Class-time guesses ("about 10 min in class") are not measured anywhere, so the chapters do
    not state them; times the book does state come from runs (the instructors' run-time table)."""
    hits = [f"{src.name}: {m.group(0)}" for src in CHAPTERS
            for m in re.finditer(r"\babout \d+ ?min\w*|\(\d+ ?min(?:utes)?\b[^)]*\)", src.read_text(encoding="utf-8"))]
    assert not hits, hits
