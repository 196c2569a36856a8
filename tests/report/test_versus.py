"""A tolerance decides whether a gap is distinguishable, never that two different numbers are
equal ("0.40 against the paper's 0.65" is not "as often")."""

from __future__ import annotations

import pytest

from oraclegap import report as R

WORDS = {"more": "more often", "less": "less often", "same": "as often"}


def test_within_tolerance_is_not_as_often():
    w = R.versus(0.40, 0.65, 0.41, digits=2, **WORDS)
    assert not w.startswith("as often")
    assert w.startswith("less often") and "within the tolerance of 0.41" in w


@pytest.mark.parametrize("a, b, tol, start", [
    (0.65, 0.65, 0.0, "as often"), (0.651, 0.65, 0.3, "as often"),
    (0.90, 0.65, 0.1, "more often"), (0.10, 0.65, 0.1, "less often")])
def test_versus_words(a, b, tol, start):
    w = R.versus(a, b, tol, digits=2, **WORDS)
    assert w.startswith(start)
    assert ("within the tolerance" in w) == (start != "as often" and abs(a - b) <= tol)


def test_versus_rejects_negative_tolerance():
    with pytest.raises(ValueError):
        R.versus(0.4, 0.6, -0.1)
