"""One rounding rule in the book: a chapter never rounds a shown or compared number half to even
(Python's ``round(x, d)``, ``np.round(x, d)``, pandas' ``.round(d)``) while ``report.fmt`` prints
it half up; it calls ``report.rounded``. Grids built with ``np.linspace``/``logspace``/``arange``
are exempt (their rounding only trims binary noise from the grid points)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import oraclegap.report as R

ROOT = Path(__file__).resolve().parents[2]
GRIDS = {"linspace", "logspace", "arange", "geomspace"}


def _is_grid(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in GRIDS


def half_even_roundings(source: str) -> list[int]:
    """Line numbers of ``round(x, d)``, ``np.round(x, d)`` / ``numpy.around`` and ``.round(d)``
    calls in ``source`` whose first argument is not a grid."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        builtin = isinstance(f, ast.Name) and f.id == "round" and len(node.args) + len(node.keywords) >= 2
        numpy = (isinstance(f, ast.Attribute) and f.attr in ("round", "around")
                 and isinstance(f.value, ast.Name) and f.value.id in ("np", "numpy"))
        method = (isinstance(f, ast.Attribute) and f.attr == "round" and not numpy
                  and (node.args or node.keywords))
        if (builtin or numpy) and node.args and _is_grid(node.args[0]):
            continue
        if builtin or numpy or method:
            lines.append(node.lineno)
    return lines


def test_the_scan_finds_each_half_even_rounding():
    src = ("a = round(x, 3)\nb = np.round(y, 2)\nc = df['v'].round(3)\n"
           "d = np.round(np.linspace(0, 1, 5), 2)\ne = round(n * 0.5)\nf = R.rounded(x, 3)\n")
    assert half_even_roundings(src) == [1, 2, 3]


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")), ids=lambda p: p.stem)
def test_chapters_round_by_the_books_rule(path):
    found = half_even_roundings(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name}: half-to-even rounding at lines {found}; use R.rounded(x, digits)"


@pytest.mark.parametrize("x", [0.0625, 0.0875, 21 / 240, -0.0005, 0.1235, 2.5e-4, 0.9995])
def test_rounded_agrees_with_what_fmt_prints(x):
    assert R.fmt(R.rounded(x, 3), 3) == R.fmt(x, 3)
    assert float(R.fmt(x, 3)) == R.rounded(x, 3)


def test_rounded_keeps_shapes_and_missing_values():
    arr = R.rounded(np.array([0.0625, np.nan]), 3)
    assert arr[0] == 0.063 and np.isnan(arr[1])
    assert R.rounded(pd.Series([0.0875]), 3).tolist() == [0.088]


def test_compare_at_digits_compares_the_printed_numbers():
    assert R.compare(0.0625, 0.0630, digits=3) == "equal to"  # both print 0.063
    assert R.compare(0.0625, 0.0630) == "below"
    assert R.compare(0.0635, 0.0625, digits=3) == "above"  # 0.064 against 0.063
