"""The first-screen answer: outputs of cells tagged og-answer move into the og-answer-slot cell
under a chapter's question (oraclegap.book.lift_answer)."""

from __future__ import annotations

import nbformat
import pytest

from oraclegap import book


def _md(text: str):
    return nbformat.v4.new_output("display_data", data={"text/markdown": text})


def _code(src: str, tags=(), outputs=()):
    return nbformat.v4.new_code_cell(src, outputs=list(outputs), metadata={"tags": list(tags)})


def test_answer_outputs_move_to_the_slot_in_order():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Chapter\n\n**The question.** Why?"),
                _code("#| echo: false", tags=["og-answer-slot"]),
                _code("x = 1", outputs=[_md("a table")]),
                _code("show(a)", tags=["og-answer"], outputs=[_md("first")]),
                _code("show(b)", tags=["og-answer"], outputs=[_md("second")])]
    assert book.lift_answer(nb) == 2
    assert [o["data"]["text/markdown"] for o in nb.cells[1].outputs] == ["first", "second"]
    assert nb.cells[3].outputs == [] and nb.cells[4].outputs == []
    assert nb.cells[2].outputs[0]["data"]["text/markdown"] == "a table"  # untagged cells untouched
    nbformat.validate(nb)


def test_no_tags_nothing_moves_and_misplaced_tags_are_refused():
    nb = nbformat.v4.new_notebook()
    nb.cells = [_code("x = 1", outputs=[_md("kept")])]
    assert book.lift_answer(nb) == 0 and nb.cells[0].outputs[0]["data"]["text/markdown"] == "kept"
    nb.cells = [_code("show()", tags=["og-answer"], outputs=[_md("a")])]
    with pytest.raises(ValueError, match="exactly one 'og-answer-slot'"):
        book.lift_answer(nb)
    nb.cells = [_code("show()", tags=["og-answer"], outputs=[_md("a")]), _code("", tags=["og-answer-slot"])]
    with pytest.raises(ValueError, match="must come before"):
        book.lift_answer(nb)


def test_an_error_is_not_lifted():
    err = nbformat.v4.new_output("error", ename="E", evalue="x", traceback=[])
    nb = nbformat.v4.new_notebook()
    nb.cells = [_code("", tags=["og-answer-slot"]), _code("boom()", tags=["og-answer"], outputs=[err])]
    assert book.lift_answer(nb) == 0
    assert nb.cells[0].outputs == [] and nb.cells[1].outputs[0]["output_type"] == "error"
