"""Self-checks of exercises with a numeric answer (oraclegap.book.selfcheck): a right value passes,
a wrong one fails, and the chapter's value never shows. The rendered student page is checked in
tests/book/test_quarto.py."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from oraclegap.book import editions
from oraclegap.book import selfcheck as SC


def _shown(expected: float) -> list[str]:
    """Ways a value could leak into a page."""
    return [repr(expected), f"{expected:.4f}", f"{expected:.3f}", f"{expected:.2f}",
            str(Fraction(expected).limit_denominator(20)), f"{expected:.1%}"]


def test_a_right_value_passes_and_a_wrong_one_fails():
    rng = np.random.default_rng(3)
    for truth in rng.uniform(-5, 5, size=200):
        tol = 0.01
        assert SC.verdicts({"x": truth + rng.uniform(-tol, tol) * 0.99}, {"x": truth}, abs_tol=tol)[0].passed
        off = truth + rng.choice([-1, 1]) * rng.uniform(1.01, 50) * tol
        assert SC.verdicts({"x": off}, {"x": truth}, abs_tol=tol)[0].state == "outside"


def test_answers_as_fractions_and_percentages():
    truth = 2 / 3
    for mine in ("2/3", " 2 / 3 ", "0.667", "66.7%", Fraction(2, 3), 0.6667):
        assert SC.verdicts({"L": mine}, {"L": truth})[0].passed, mine
    assert not SC.verdicts({"L": "1/2"}, {"L": truth})[0].passed
    assert SC.verdicts({"big": 1010}, {"big": 1000.0}, abs_tol=0.001, rel_tol=0.02)[0].passed
    assert not SC.verdicts({"big": 1030}, {"big": 1000.0}, abs_tol=0.001, rel_tol=0.02)[0].passed


def test_unanswered_and_unavailable():
    res = SC.verdicts({"a": None}, {"a": 0.5, "b": 0.25, "c": math.nan})
    assert [v.state for v in res] == ["unanswered", "unanswered", "unavailable"]


@pytest.mark.parametrize("bad", ["abc", "1/0", True, [0.5], "nan", math.inf])
def test_bad_answers_are_refused(bad):
    with pytest.raises(ValueError, match="answer"):
        SC.verdicts({"x": bad}, {"x": 0.5})


def test_bad_calls_are_refused():
    with pytest.raises(ValueError, match="does not know"):
        SC.verdicts({"y": 1}, {"x": 0.5})
    with pytest.raises(ValueError, match="abs_tol"):
        SC.verdicts({"x": 1}, {"x": 0.5}, abs_tol=-1)
    with pytest.raises(ValueError, match="both 0"):
        SC.verdicts({"x": 1}, {"x": 0.5}, abs_tol=0)
    with pytest.raises(ValueError, match="exercise"):
        SC.check(" ", {"x": 1}, {"x": 0.5})


def test_the_callout_never_shows_the_chapters_value(capsys):
    truth = {"C_best": 0.7317, "L": 0.1463, "ratio": 12.375}
    for mine in ({}, {"C_best": 0.7317, "L": 0.9, "ratio": "99/8"}, {"L": 0.15}):
        text = SC.render("Exercise 1", SC.verdicts(mine, truth, abs_tol=0.005))
        assert text.startswith(f"::: {{.callout-note .{SC.SELFCHECK_CLASS}")
        for value in truth.values():
            leaks = [s for s in _shown(value) if s in text]
            assert not leaks, (mine, leaks)
    text = SC.render("Exercise 2", SC.verdicts({"C_best": 0.73, "L": 0.4}, truth))
    assert "1 of 3 within" in text and "`L`: not within" in text and "`ratio`: not answered" in text
    SC.check("Exercise 3", {"L": 0.1463}, truth)  # outside a notebook: printed
    assert "Self-check: Exercise 3" in capsys.readouterr().out


def test_the_student_edition_keeps_the_self_check():
    check = SC.render("Exercise 1", SC.verdicts({}, {"x": 0.5}))
    sol = '::: {.callout-tip .og-solution collapse="true"}\n## Solution\n\nIt is 0.5.\n:::\n'
    nb = {"cells": [{"cell_type": "code", "source": "check()", "outputs": [
        {"output_type": "display_data", "data": {"text/markdown": sol}, "metadata": {}},
        {"output_type": "display_data", "data": {"text/markdown": check}, "metadata": {}}]}]}
    stripped, n = editions.strip_solutions(nb)
    assert n == 1 and [o["data"]["text/markdown"] for o in stripped["cells"][0]["outputs"]] == [check]


def test_an_unanswered_check_says_how_to_answer_in_one_sentence():
    """A self-check nobody answered (the book as rendered) tells the reader where to put the values
    and what the box will say, once, instead of one 'not answered' line per quantity."""
    truth = {"C_best": 0.7317, "L": 0.1463}
    text = SC.render("Exercise 1", SC.verdicts({}, truth, abs_tol=0.005))
    assert "(waiting for your answers)" in text and "`C_best`, `L`" in text and "`MINE`" in text
    assert "not answered yet" not in text and "±0.005" in text
    partly = SC.render("Exercise 1", SC.verdicts({"L": 0.1463}, truth, abs_tol=0.005))
    assert "`C_best`: not answered yet" in partly and "1 of 2 within" in partly
    mixed = SC.render("Exercise 4", SC.verdicts({}, {"count": 2, "B": 1.16},
                                                abs_tol={"count": 0.5, "B": 0.165}))
    assert "`count` ±0.5; `B` ±0.165" in mixed  # each tolerance beside its own quantity

