"""The decision page's verdict table (oraclegap.audit.guide) is generated from the audit's own
records: one row per verdict code in the order the rules first give it, none missing, the
committed page current, and the study column counted from the study it is given."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from oraclegap.audit import RULES, VERDICTS, guide, verdict_text
from oraclegap.audit.study import VerdictStudy

ROOT = Path(__file__).resolve().parents[2]


def _rows(table: str) -> list[str]:
    return [line for line in table.splitlines()[2:] if line.startswith("| `")]


def test_committed_decision_page_is_current():
    assert not guide.decision_page_stale(ROOT), "run `python -m oraclegap.audit.guide` and commit decision.qmd"


def test_one_row_per_code_in_rule_order():
    rows = _rows(guide.decision_table())
    codes = [r.split("`")[1] for r in rows]
    assert sorted(codes) == sorted(VERDICTS) and len(codes) == len(set(codes))
    assert codes == list(dict.fromkeys(r.code for r in RULES))
    page = (ROOT / guide.DECISION_PAGE).read_text(encoding="utf-8")
    for code in VERDICTS:  # every code on the committed page, in its own row
        assert sum(line.startswith(f"| `{code}` |") for line in page.splitlines()) == 1, code
    # each rule's number and condition stand in its code's row
    for j, rule in enumerate(RULES, 1):
        row = next(r for r in rows if r.startswith(f"| `{rule.code}` |"))
        assert f"({j})" in row and verdict_text.latex(rule.doc.rstrip(".")) in row


def test_a_code_without_its_record_stops_the_page(monkeypatch):
    monkeypatch.delitem(verdict_text.CODE_GUIDE, "luck-not-excluded")
    with pytest.raises(ValueError, match="luck-not-excluded"):
        guide.decision_table()


def test_study_column_counts_the_study():
    runs = pd.DataFrame({"truth": ["diffuse"] * 3 + ["exchangeable"] * 4 + ["specialist-text"] * 2,
                         "n": 200, "k": 4, "rep": range(9), "seed": range(9),
                         "code": ["certified"] * 3 + ["certified"] + ["noise"] * 3 + ["noise", "certified-recoverable"],
                         "seconds": 0.1})
    rows = {r.split("`")[1]: r for r in _rows(guide.decision_table(VerdictStudy(runs, 0.05)))}
    assert "right 3 of 4: 0.75 [" in rows["certified"]
    assert "right 1 of 1: 1.00 [" in rows["certified-recoverable"]
    assert "no claim; 4 pools, 1 of them with real specialization" in rows["noise"]
    assert "not given in the study" in rows["luck"]
    assert rows["no-gap"].rstrip(" |").endswith("not given in the study")
