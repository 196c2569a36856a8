"""The parameters table (``oraclegap.book.params``) against the book, and check-params on a tiny
fake chapter: a clean change passes, a printed zero p-value, an error and an overwritten parameter
fail, and a second run comes from the cache."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from oraclegap.book import params as P
from oraclegap.book import structure

ROOT = Path(__file__).resolve().parents[2]


def test_every_row_names_a_parameter_of_its_chapter():
    changes = P.planned_changes(ROOT)  # raises on a chapter or parameter the book lacks
    assert {src.name[:2] for src, _, _ in changes} == {s.name[:2] for s in structure.chapter_sources(ROOT)}
    bad = P.PARAMETERS[:1] + (P.Param("01", ("NOT_A_PARAMETER",), "-", ({"NOT_A_PARAMETER": 1},), "-"),)
    with pytest.raises(ValueError, match="NOT_A_PARAMETER"):
        P.planned_changes(ROOT, table=bad)


def test_every_row_tests_a_change_away_from_the_default():
    """Each row keeps at least one change that is not the chapter's default (a range tested only at
    its default would be tested by nothing but the ordinary build)."""
    planned = {(src.name[:2], row.names) for src, row, _ in P.planned_changes(ROOT)}
    assert planned == {(row.chapter, row.names) for row in P.PARAMETERS}


def _exercise_text(src: Path) -> str:
    cells = structure._read_cells(src)
    start = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and "## Exercises" in c.source)
    text = []
    for c in cells[start:]:
        if c.cell_type == "markdown" and re.search(r"^## Appendix", c.source, re.M):
            break
        if c.cell_type == "markdown":
            text.append(c.source)
    return "\n".join(text)


def test_every_change_an_exercise_asks_for_is_tested():
    """An exercise that says ``rerun with -p NAME VALUE`` is executed with exactly that change."""
    tested = {(row.chapter, json.dumps(ch, sort_keys=True)) for row in P.PARAMETERS for ch in row.changes}
    asked, untested = [], []
    for src in structure.chapter_sources(ROOT):
        for ch in P.exercise_changes(_exercise_text(src)):
            asked.append((src.name[:2], ch))
            if (src.name[:2], json.dumps(ch, sort_keys=True)) not in tested:
                untested.append(f"{src.name}: {P.change_label(ch)}")
    assert len(asked) >= 10, asked  # the exercises do ask for reruns (the scan reads them)
    assert not untested, f"exercises ask for changes the parameters table does not test: {untested}"


def test_the_instructors_page_shows_the_table_and_asks_only_for_tested_changes():
    page = (ROOT / "instructors.qmd").read_text(encoding="utf-8")
    shown = page.split(P.BEGIN, 1)[1].split(P.END, 1)[0].strip()
    assert shown == P.instructors_table(ROOT), "run `python -m oraclegap.book pages` and commit instructors.qmd"
    outside = page.replace(shown, "")
    tested = [ch for row in P.PARAMETERS for ch in row.changes]
    asked = [{k: v for k, v in a.items() if k not in FREE} for a in P.exercise_changes(outside)]
    assert asked, "the page's class plan and rerun example ask for -p changes"
    assert all(any(a.items() <= ch.items() for ch in tested) for a in asked), asked


def test_labels_and_the_scan_of_p_options():
    ch = {"ADAPTERS": ["a", "b"], "K": 64, "MODE": "strongest", "GRID": [1, 2]}
    label = P.change_label(ch)
    assert label == "-p ADAPTERS '[\"a\", \"b\"]' -p K 64 -p MODE strongest -p GRID '[1, 2]'"
    assert P.exercise_changes(f"then rerun with `{label}` and compare") == [ch]
    assert P.exercise_changes("rerun with `-p K 64`, or `make book BOOK_ARGS='--only 02 -p POOL x'`") == [
        {"K": 64}, {"POOL": "x"}]
    assert P.exercise_changes("no options here, `K = 64`") == []
    with pytest.raises(ValueError, match="chapter"):
        P.Param("1", ("K",), "-", ({"K": 1},), "-")
    with pytest.raises(ValueError, match="must set only"):
        P.Param("01", ("K",), "-", ({"M": 1},), "-")


def _parsed(argv: list[str]) -> dict:
    """The parameters of ``-p NAME VALUE`` words, read as the book's command line reads them."""
    assert len(argv) % 3 == 0 and argv[::3] == ["-p"] * (len(argv) // 3), argv
    return {argv[i + 1]: P.parse_value(argv[i + 2]) for i in range(0, len(argv), 3)}


def test_every_tested_change_reaches_the_chapter_typed_from_a_shell_and_from_make():
    for row in P.PARAMETERS:
        for ch in row.changes:
            label = P.change_label(ch)
            assert _parsed(shlex.split(label)) == ch, label
            # make book BOOK_ARGS="...": the outer shell keeps the single quotes and drops the
            # double quotes inside them; the recipe's shell then splits BOOK_ARGS again
            words = shlex.split(f'make book BOOK_ARGS="--only {row.chapter} {label}"')
            book_args = shlex.split(words[2].removeprefix("BOOK_ARGS="))
            assert book_args[:2] == ["--only", row.chapter]
            assert _parsed(book_args[2:]) == ch, label


def test_parse_value_reads_json_then_yaml_then_text():
    assert P.parse_value("64") == 64 and P.parse_value("0.1") == 0.1 and P.parse_value("1e-3") == 0.001
    assert P.parse_value('["a", "b"]') == ["a", "b"]
    # what papermill's -y gives for the same text: YAML lists without (or with Python's) quotes
    assert P.parse_value("[primary-light-s1, secondary-light-s1]") == ["primary-light-s1", "secondary-light-s1"]
    assert P.parse_value("['a', 'b']") == ["a", "b"]
    assert P.parse_value("True") is True and P.parse_value("~") is None and P.parse_value(".5") == 0.5
    for text in ("strongest", "lab-seed-secondary", "data/pool.npz:verdicts", "", "[1, 2", "2026-12-07"):
        assert P.parse_value(text) == text  # no JSON value (a date) or no YAML at all: the text


def test_the_book_cli_passes_list_parameters_as_lists(monkeypatch):
    from oraclegap.book import cli

    seen = {}
    monkeypatch.setattr(cli, "build", lambda **kw: seen.update(kw) or {})
    monkeypatch.chdir(ROOT)
    argv = ["build", "--only", "07", "-p", "ADAPTERS", "[primary-light-s1, secondary-light-s1]",
            "-p", "K_GRID", "[2, 64]", "-p", "LAB_POOL", "lab-seed-secondary", "-p", "N_LIVE", "8"]
    assert cli.main(argv) == 0
    assert seen["parameters"] == {"ADAPTERS": ["primary-light-s1", "secondary-light-s1"], "K_GRID": [2, 64],
                                  "LAB_POOL": "lab-seed-secondary", "N_LIVE": 8}


def test_overwritten_parameters_are_named():
    assert P.overwritten({"K": 64, "G": [1, 2]}, {"K": 64, "G": [1, 2], "SMALL": True}) == []
    found = P.overwritten({"N": 48}, {"N": 16})
    assert len(found) == 1 and "N was given 48 but ended as 16" in found[0]
    assert "stopped before its last cell" in P.overwritten({"N": 48}, None)[0]


FAKE = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A fake chapter {#sec-fake}

# %% tags=["parameters"]
SMALL = False
N = None  # items (None: 4, or 2 with SMALL)
MODE = "clean"  # clean, zero-p or boom
STEPS = 10  # SMALL overwrites it: a change to it does nothing

# %%
N = N or (2 if SMALL else 4)
if SMALL:
    STEPS = 1

# %%
from oraclegap import report as R

R.show_md("The {n} items gave p = {p}.", n=N, p=0.0 if MODE == "zero-p" else 0.25)
if MODE == "boom":
    raise RuntimeError("boom")
'''


@pytest.mark.slow
@pytest.mark.notebooks
def test_check_params_on_a_fake_chapter(tmp_path, capsys, monkeypatch):
    from oraclegap.book import cache

    # the library's own hash is held still (a change to it re-executes: tests/book/test_cache.py)
    monkeypatch.setattr(cache, "library_hashes", lambda lib_dir: {"oraclegap": "held"})
    (tmp_path / "_quarto.yml").write_text("book:\n  title: T\n  chapters:\n    - chapters/01_fake.ipynb\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_fake.py").write_text(FAKE)
    table = (P.Param("01", ("N",), "1 to 8", ({"N": 8}, {"N": None}), "more items"),
             P.Param("01", ("MODE",), "three modes", ({"MODE": "zero-p"}, {"MODE": "boom"}), "failures"),
             P.Param("01", ("STEPS",), "1 to 20", ({"STEPS": 20},), "nothing, as written"))
    runs = P.check_params(tmp_path, table=table, jobs=1)
    by = {r.label: r for r in runs}
    assert list(by) == ["-p N 8", "-p MODE zero-p", "-p MODE boom", "-p STEPS 20"]  # N None is the default
    assert by["-p N 8"].problems == [] and not by["-p N 8"].cached and by["-p N 8"].seconds > 0
    assert any("p-value of 0" in p for p in by["-p MODE zero-p"].problems)
    assert any("RuntimeError: boom" in p for p in by["-p MODE boom"].problems)
    assert by["-p STEPS 20"].problems == [P.overwritten({"STEPS": 20}, {"STEPS": 1})[0]]
    assert not (tmp_path / "chapters").exists()  # the book's executed chapters are never touched
    assert len(list((tmp_path / P.SCRATCH).glob("01_fake/*/executed.ipynb"))) == 4
    text = P.report_table(runs)
    assert re.search(r"01_fake\s+-p N 8\s+\d+\.\d\s+none", text) and "RuntimeError: boom" in text
    again = P.check_params(tmp_path, table=table, jobs=2)  # unchanged: every run from the cache
    assert [r.cached for r in again] == [True, True, False, True]  # the failed run is not cached
    assert [r.problems for r in again] == [r.problems for r in runs]
    assert again[0].seconds == runs[0].seconds
    assert "cached (source, library, parameters and data unchanged)" in capsys.readouterr().out
    (tmp_path / "notebooks" / "01_fake.py").write_text(FAKE.replace("items gave", "items yield"))
    assert not any(r.cached for r in P.check_params(tmp_path, table=table[:1], jobs=1))


def test_ci_runs_check_params_after_the_tests():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [line.strip() for line in ci if line.strip().startswith("make ")]
    assert steps[-2:] == ["make test", "make check-params"]
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = make.split("\ncheck-params:", 1)[1].split("\n\n", 1)[0]
    assert "-m oraclegap.book check-params" in target


def test_the_book_cli_runs_check_params(monkeypatch, capsys):
    from oraclegap.book.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["check-params", "--only", "99"]) == 2
    assert "--only ['99'] matches no chapter" in capsys.readouterr().err


#: a reader's own pool (any registry name, folder or file) and the reduced-size switch
FREE = {"POOL", "SMALL"}


def test_every_page_asks_only_for_tested_changes():
    """The front pages and the README tell readers to rerun with ``-p NAME VALUE`` too: each such
    change is one the parameters table tests (a value outside a documented range fails here)."""
    tested = [ch for row in P.PARAMETERS for ch in row.changes]
    untested = []
    for page in sorted(ROOT.glob("*.qmd")) + [ROOT / "README.md"]:
        for a in P.exercise_changes(page.read_text(encoding="utf-8")):
            a = {k: v for k, v in a.items() if k not in FREE}
            if a and not any(a.items() <= ch.items() for ch in tested):
                untested.append(f"{page.name}: {P.change_label(a)}")
    assert not untested, f"pages ask for changes the parameters table does not test: {untested}"
    bad = P.exercise_changes('`make book BOOK_ARGS="--only 05 --small -p TAU_K10 0.3"`')
    assert not any(bad[0].items() <= ch.items() for ch in tested)  # the scan sees a bad value
