"""The chapters' self-checks: every exercise declared numeric in
``oraclegap.book.selfcheck.NUMERIC_EXERCISES`` has a self-check cell under it, no other exercise
has one, each cell names its own exercise and ships with no answer filled in; and one chapter's
self-check cell, run on a small pool, passes the right answer and refuses a wrong one."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from oraclegap.book import selfcheck as SC
from oraclegap.book import structure
from oraclegap.pool import Pool
from oraclegap.stats import nulls

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = structure.chapter_sources(ROOT)
ITEM = re.compile(r"^(\d+)\. \*\*", re.M)
CHECK = re.compile(r"\bselfcheck\.check\(\s*\"Exercise (\d+)\"")


def code_under_exercises(cells) -> dict[int, list[str]]:
    """Exercise number -> the sources of the code cells under its Markdown cell, for the
    exercises between the ``## Exercises`` heading and the next section."""
    start = next((i for i, c in enumerate(cells)
                  if c.cell_type == "markdown" and re.search(r"^## Exercises", c.source, re.M)), None)
    if start is None:
        raise ValueError("no '## Exercises' heading")
    out: dict[int, list[str]] = {}
    current = None
    for c in cells[start:]:
        if c.cell_type == "markdown":
            if re.search(r"^## ", c.source.split("## Exercises", 1)[-1], re.M):
                break
            items = ITEM.findall(c.source)
            current = int(items[0]) if len(items) == 1 else None
            if current is not None:
                out[current] = []
        elif current is not None:
            out[current].append(c.source)
    return out


def mine_values(source: str) -> list[list[object]]:
    """The values of every ``MINE = {...}`` dict literal assigned in ``source`` (the student's
    answers as the chapter ships them)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MINE"
                                                 for t in node.targets)):
            if not isinstance(node.value, ast.Dict):
                raise ValueError("MINE must be a dict literal of quantity name -> None")
            found.append([ast.literal_eval(v) if isinstance(v, ast.Constant) else v
                          for v in node.value.values])
    return found


def chapter_key(src: Path) -> str:
    return src.name[:2]


def test_every_declared_chapter_exists():
    assert set(SC.NUMERIC_EXERCISES) <= {chapter_key(s) for s in CHAPTERS}
    for chapter, numbers in SC.NUMERIC_EXERCISES.items():
        assert numbers and list(numbers) == sorted(set(numbers)), (chapter, numbers)


@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_each_numeric_exercise_has_its_self_check(src):
    under = code_under_exercises(structure._read_cells(src))
    declared = set(SC.NUMERIC_EXERCISES.get(chapter_key(src), ()))
    assert declared <= set(under), f"{src.name}: declared exercises {sorted(declared - set(under))} do not exist"
    checked = {n: [int(m) for code in codes for m in CHECK.findall(code)] for n, codes in under.items()}
    wrong_name = {n: named for n, named in checked.items() if any(m != n for m in named)}
    assert not wrong_name, f"{src.name}: a self-check under exercise n names another exercise: {wrong_name}"
    have = {n for n, named in checked.items() if named}
    assert have == declared, (
        f"{src.name}: exercises with a numeric answer but no self-check cell: {sorted(declared - have)}; "
        f"self-checks under exercises not declared in selfcheck.NUMERIC_EXERCISES: {sorted(have - declared)}")


@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_self_checks_ship_unanswered(src):
    cells = [c.source for c in structure._read_cells(src) if c.cell_type == "code" and CHECK.search(c.source)]
    filled = [vals for code in cells for vals in mine_values(code) if any(v is not None for v in vals)]
    assert all(mine_values(code) for code in cells), f"{src.name}: a self-check cell without a MINE dict"
    assert not filled, f"{src.name}: a self-check cell ships with answers filled in: {filled}"


def test_the_scans_see_a_missing_and_a_misplaced_check():
    C = SimpleNamespace
    cells = [C(cell_type="markdown", source="## Exercises\n\n1. **A.** Do."),
             C(cell_type="code", source='R.solution("1. x")'),
             C(cell_type="markdown", source="2. **B.** Do."),
             C(cell_type="code", source='MINE = {"x": 0.5}\nselfcheck.check("Exercise 1", MINE, {"x": 1})'),
             C(cell_type="markdown", source="## Appendix\n\n3. **Not an exercise.**"),
             C(cell_type="code", source='selfcheck.check("Exercise 3", {}, {"x": 1})')]
    under = code_under_exercises(cells)
    assert sorted(under) == [1, 2]
    assert [CHECK.findall(c) for c in under[1]] == [[]]
    assert [CHECK.findall(c) for c in under[2]] == [["1"]]
    assert mine_values(under[2][0]) == [[0.5]]


def _cell(src: Path, marker: str) -> str:
    hits = [c.source for c in structure._read_cells(src) if c.cell_type == "code" and marker in c.source]
    assert len(hits) == 1, f"{src.name}: {len(hits)} code cells hold {marker!r}"
    return hits[0]


def test_seed_pool_exercise_3_self_check_passes_the_right_answer_only():
    """Chapter 02, exercise 3: the solution cell and the self-check cell as the chapter has them,
    run on a small pool whose per-prompt rates vary. The matched agreement of two copies of one
    member is 1; the shuffled agreement is the prompt average of (c^2 + (k - c)^2) / k^2, above
    p^2 + (1 - p)^2 for the mean rate p (Jensen): that naive prediction must be refused."""
    src = next(s for s in CHAPTERS if chapter_key(s) == "02")
    rng = np.random.default_rng(11)
    n, k = 200, 16
    rates = rng.uniform(0, 1, size=(n, 1, 1))
    pool = Pool(rng.random((n, 3, k)) < rates)
    recorded = {}
    ns = {"np": np, "Pool": Pool, "nulls": nulls, "seed_pool": pool, "N_AGREE": 50, "rng": rng,
          "who": str, "R": SimpleNamespace(solution=lambda *a, **kw: None),
          "selfcheck": SimpleNamespace(check=lambda ex, mine, expected, **kw: recorded.update(
              exercise=ex, mine=mine, expected=expected, kw=kw))}
    exec(_cell(src, "draw_alignment(twin"), ns)  # noqa: S102 - the chapter's own cell
    exec(_cell(src, 'selfcheck.check("Exercise 3"'), ns)  # noqa: S102
    assert recorded["exercise"] == "Exercise 3"
    c = pool.verdicts[:, 0, :].sum(axis=1)
    shuffled = float(np.mean((c**2 + (k - c) ** 2) / k**2))
    p = c.sum() / (n * k)
    naive = p**2 + (1 - p) ** 2
    expected, kw = recorded["expected"], recorded["kw"]
    assert expected["matched agreement"] == pytest.approx(1.0)
    assert expected["shuffled agreement"] == pytest.approx(shuffled, abs=1e-12)
    assert shuffled - naive > 0.05  # the case the exercise's solution explains
    right = {"matched agreement": 1, "shuffled agreement": round(shuffled, 2)}
    assert all(v.passed for v in SC.verdicts(right, expected, **kw))
    for wrong in ({"matched agreement": 1, "shuffled agreement": naive},
                  {"matched agreement": round(shuffled, 2), "shuffled agreement": round(shuffled, 2)}):
        states = [v.state for v in SC.verdicts(wrong, expected, **kw)]
        assert "outside" in states and "unanswered" not in states, (wrong, states)
    assert [v.state for v in SC.verdicts(recorded["mine"], expected, **kw)] == ["unanswered"] * 2


def test_each_quantity_may_have_its_own_tolerance():
    """Chapter 06, exercise 4 checks a count exactly and a budget within half the grid step."""
    expected = {"count": 3, "B": 1.25}
    tol = {"count": 0.5, "B": 0.04}
    assert all(v.passed for v in SC.verdicts({"count": 3, "B": 1.28}, expected, abs_tol=tol))
    assert [v.state for v in SC.verdicts({"count": 3, "B": 1.3}, expected, abs_tol=tol)] == ["within", "outside"]
    assert [v.state for v in SC.verdicts({"count": 4, "B": 1.25}, expected, abs_tol=tol)] == ["outside", "within"]
    assert [v.tol for v in SC.verdicts({}, expected, abs_tol=tol)] == [0.5, 0.04]
    text = SC.render("Exercise 4", SC.verdicts({"count": 3, "B": 1.3}, expected, abs_tol=tol))
    assert "±0.5" in text and "±0.04" in text and "1.25" not in text
    for bad in ({"count": 0.5}, {"count": 0.5, "B": 0.04, "C": 1}):
        with pytest.raises(ValueError, match="each quantity"):
            SC.verdicts({}, expected, abs_tol=bad)
    with pytest.raises(ValueError, match="abs_tol"):
        SC.verdicts({}, expected, abs_tol={"count": -1, "B": 0.04})


def test_pool_construction_exercise_4_self_check_takes_the_nearest_budget_only(monkeypatch):
    """Chapter 06, exercise 4: the solution and self-check cells as the chapter has them, on a
    small outcome matrix with costs where plain cost-benefit greedy falls short of the knapsack
    optimum. The count of such budgets must be exact and the budget of the largest shortfall
    within half the grid's spacing: the neighbouring budget is refused."""
    from oraclegap.deploy import compose as C
    from oraclegap.report import md

    src = next(s for s in CHAPTERS if chapter_key(s) == "06")
    for seed in range(200):
        rng = np.random.default_rng(seed)
        X = rng.random((60, 7)) < rng.uniform(0.2, 0.8, size=7)
        cost = np.broadcast_to(rng.uniform(0.05, 1.0, size=7), X.shape)
        w = C.model_costs(cost, *X.shape)
        budgets = np.round(np.linspace(w.min(), w.sum() - w.min(), 12), 3)
        curve = C.budget_curve(X, "best", cost, budgets)
        fits = curve.pivot_table(index="budget", columns="method", values="fit")
        short = fits["exhaustive knapsack"] - fits["cost-benefit greedy (partial=0)"] > 1e-12
        if short.any():
            break
    else:
        pytest.fail("no instance where plain cost-benefit greedy falls short")
    recorded = {}
    ns = {"np": np, "md": md, "curve": curve, "budgets": budgets,
          "knap": curve[curve["method"] == "exhaustive knapsack"].set_index("budget")["fit"],
          "solution": lambda *a, **kw: None, "selfcheck": SC}
    # the chapter imports oraclegap.book.selfcheck once, before its exercises: record what the
    # cell passes to check
    monkeypatch.setattr(SC, "check", lambda ex, mine, expected, **kw: recorded.update(
        exercise=ex, mine=mine, expected=expected, kw=kw))
    exec(_cell(src, "cost-benefit greedy (partial=0)\"].set_index"), ns)  # noqa: S102
    exec(_cell(src, 'selfcheck.check("Exercise 4"'), ns)  # noqa: S102
    assert recorded["exercise"] == "Exercise 4"
    gaps = (fits["exhaustive knapsack"] - fits["cost-benefit greedy (partial=0)"])[short]
    b_max, step = float(gaps.idxmax()), float(np.diff(budgets).min())
    count, where = "budgets below the optimum", "B of the largest shortfall"
    expected, kw = recorded["expected"], recorded["kw"]
    assert expected[count] == int(short.sum()) and expected[where] == pytest.approx(b_max)
    assert all(v.passed for v in SC.verdicts({count: int(short.sum()), where: b_max + 0.4 * step},
                                             expected, **kw))
    states = [v.state for v in SC.verdicts({count: int(short.sum()) + 1, where: b_max + step},
                                           expected, **kw)]
    assert states == ["outside", "outside"]
