"""Cells of chapters 05 and 07 run outside the chapter: 05's exercise-4 self-check on a small pool
of known truth (the in-sample maximiser scores O_repro, so its noise share is one), 07's list
parameters given typed or as the text papermill's ``-p`` passes; and every self-check cell of the
book whose expected values are a dict literal asks for exactly the quantities it checks."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from oraclegap.book import selfcheck as SC
from oraclegap.book import structure
from oraclegap.pool import Pool
from oraclegap.stats import noise

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = structure.chapter_sources(ROOT)
PLATEAU = next(s for s in CHAPTERS if s.name.startswith("05"))
BYOP = next(s for s in CHAPTERS if s.name.startswith("07"))


def _cell(src: Path, marker: str) -> str:
    hits = [c.source for c in structure._read_cells(src)
            if c.cell_type == "code" and marker in c.source]
    assert len(hits) == 1, f"{src.name}: {len(hits)} code cells hold {marker!r}"
    return hits[0]


def _recorder(recorded: dict) -> SimpleNamespace:
    return SimpleNamespace(check=lambda ex, mine, expected, **kw: recorded.update(
        exercise=ex, mine=mine, expected=expected, kw=kw))


def test_plateau_exercise_4_self_check_passes_the_right_answer_only():
    """The chapter's exercise-4 solution and self-check cells on a pool with prompt-varying rates:
    the in-sample maximiser's score is O_repro = mean_i max_m c_im / k and the noise share against
    it is Delta / (O_exp - O_repro) = 1. The share against the best single member (the chapter's
    main-line share) is below one here and must be refused."""
    rng = np.random.default_rng(5)
    n, m, k = 300, 3, 10
    pool = Pool(rng.random((n, m, k)) < rng.uniform(0.1, 0.9, size=(n, m, 1)))
    recorded: dict = {}
    ns = {"tensors": {"math500": pool}, "noise": noise, "SEED": 0,
          "R": SimpleNamespace(solution=lambda *a, **kw: None), "selfcheck": _recorder(recorded)}
    exec(_cell(PLATEAU, 'R.solution("4.'), ns)  # noqa: S102 - the chapter's own cells
    exec(_cell(PLATEAU, 'selfcheck.check("Exercise 4"'), ns)  # noqa: S102
    assert recorded["exercise"] == "Exercise 4"
    expected, kw = recorded["expected"], recorded["kw"]
    assert set(recorded["mine"]) == set(expected)
    o_repro = float(np.mean(pool.verdicts.sum(axis=2).max(axis=1) / k))
    assert expected["score"] == pytest.approx(o_repro, abs=1e-12)
    assert expected["noise share"] == pytest.approx(1.0, abs=1e-12)
    right = {"score": round(o_repro, 3), "noise share": 1}
    assert all(v.passed for v in SC.verdicts(right, expected, **kw))
    main_line = noise.decomposition(pool, n_boot=50, seed=0).value("noise_share")
    assert main_line < 0.9  # the tempting answer differs from the right one on this pool
    states = [v.state for v in SC.verdicts({"score": round(o_repro, 3), "noise share": main_line},
                                           expected, **kw)]
    assert states == ["within", "outside"]
    assert [v.state for v in SC.verdicts(recorded["mine"], expected, **kw)] == ["unanswered"] * 2
    # without the tensor the self-check says it cannot check, instead of failing
    recorded.clear()
    ns = {"tensors": {}, "selfcheck": _recorder(recorded)}
    exec(_cell(PLATEAU, 'selfcheck.check("Exercise 4"'), ns)  # noqa: S102
    assert {v.state for v in SC.verdicts({}, recorded["expected"], **recorded["kw"])} == {"unavailable"}


def _list_cell(**params) -> dict:
    ns = {"yaml": yaml, **params}
    exec(_cell(BYOP, "def as_list("), ns)  # noqa: S102 - the chapter's own cell
    return ns


@pytest.mark.parametrize("as_text", [json.dumps, str,
                                     lambda v: yaml.safe_dump(v, default_flow_style=True)],
                         ids=["json", "python", "yaml"])
def test_byop_list_parameters_arrive_typed_or_as_text(as_text):
    typed = {"ADAPTERS": ["primary-light-s1", "primary-light-s3"], "TAUS": [0.05, 0.2],
             "K_GRID": [2, 16]}
    assert {n: _list_cell(**typed)[n] for n in typed} == typed
    as_texts = {p: as_text(v) for p, v in typed.items()}
    assert all(isinstance(v, str) for v in as_texts.values())
    assert {n: _list_cell(**as_texts)[n] for n in typed} == typed
    assert _list_cell(**typed | {"K_GRID": None})["K_GRID"] is None


@pytest.mark.parametrize("bad", ["0.1", "[0.1,", "[]", "primary-light-s1", 0.1])
def test_byop_list_parameters_refuse_what_is_not_a_list(bad):
    with pytest.raises(ValueError, match="TAUS must be a non-empty list"):
        _list_cell(ADAPTERS=["a"], TAUS=bad, K_GRID=None)


def _check_calls(source: str):
    """(MINE keys, expected keys) of each ``selfcheck.check(name, MINE, {...})`` call whose
    expected values are a dict literal, with the ``MINE = {...}`` literal assigned in ``source``."""
    tree = ast.parse(source)
    mine = [tuple(ast.literal_eval(k) for k in node.value.keys) for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
            and any(isinstance(t, ast.Name) and t.id == "MINE" for t in node.targets)]
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "check"
             and isinstance(node.func.value, ast.Name) and node.func.value.id == "selfcheck"]
    return [(mine[0] if len(mine) == 1 else None,
             tuple(ast.literal_eval(k) for k in c.args[2].keys))
            for c in calls if len(c.args) >= 3 and isinstance(c.args[2], ast.Dict)]


@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_self_checks_ask_for_the_quantities_they_check(src):
    """A MINE key the expected values lack makes the cell raise for the student; an expected key
    MINE lacks can never be answered."""
    cells = [c.source for c in structure._read_cells(src)
             if c.cell_type == "code" and "selfcheck.check(" in c.source]
    pairs = [p for code in cells for p in _check_calls(code)]
    assert all(m is not None and set(m) == set(e) for m, e in pairs), (src.name, pairs)


def test_the_key_scan_sees_a_mismatch():
    good = 'MINE = {"a": None, "b": None}\nselfcheck.check("Exercise 1", MINE, {"a": x, "b": y})'
    bad = 'MINE = {"a": None}\nselfcheck.check("Exercise 1", MINE, {"a": x, "c": y})'
    assert _check_calls(good) == [(("a", "b"), ("a", "b"))]
    assert _check_calls(bad) == [(("a",), ("a", "c"))]


@pytest.mark.parametrize("src", [PLATEAU, BYOP], ids=["05", "07"])
def test_executed_self_checks_can_be_checked(src):
    """In the executed chapter (the book build's chapters/NN_*.ipynb, run with the released data),
    each self-check shows its callout waiting for answers, and none says the chapter's value is
    missing on the run."""
    import nbformat

    nb_path = ROOT / "chapters" / f"{src.stem}.ipynb"
    if not nb_path.is_file():
        pytest.skip(f"{nb_path.relative_to(ROOT)} not executed yet")
    nb = nbformat.read(nb_path, as_version=4)
    ran = sum("selfcheck.check(" in c.source for c in nb.cells if c.cell_type == "code")
    if ran != sum("selfcheck.check(" in c.source for c in structure._read_cells(src)
                  if c.cell_type == "code"):
        pytest.skip(f"{nb_path.relative_to(ROOT)} was executed from another version of the chapter")
    shown = [o.get("data", {}).get("text/markdown", "") for c in nb.cells if c.cell_type == "code"
             and "selfcheck.check(" in c.source for o in c.get("outputs", [])]
    callouts = [t if isinstance(t, str) else "".join(t) for t in shown]
    callouts = [t for t in callouts if SC.SELFCHECK_CLASS in t]
    numbers = SC.NUMERIC_EXERCISES[src.name[:2]]
    assert len(callouts) == len(numbers), callouts
    for n, text in zip(numbers, callouts, strict=True):
        assert f"Self-check: Exercise {n} (waiting for your answers)" in text
        assert "cannot be checked" not in text, text
