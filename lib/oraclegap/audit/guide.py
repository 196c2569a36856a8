"""The decision page's verdict table (``decision.qmd``), generated from the audit's own records so
that it cannot drift from them: one row per verdict code of :data:`~oraclegap.audit.verdict.VERDICTS`
in the order :data:`~oraclegap.audit.verdict.RULES` first gives it, when it is given (the rules'
predicates), what it means and what to do next (:data:`~oraclegap.audit.verdict_text.CODE_GUIDE`),
and how often the verdict study found it right (each claim code's precision with its Wilson
interval; for a code that claims nothing, how many of its pools had real specialization).

``python -m oraclegap.audit.guide`` rewrites the table in the committed page (between
:data:`BEGIN` and :data:`END`); ``tests/audit/test_guide.py`` fails when it is stale or when a
code is missing. (The book's own generated pages are in :mod:`oraclegap.book.pages`; this one lives
here because the book sits below the audit in the library's floors.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from .._io import atomic_write
from ..report import fmt_interval
from . import study as _study
from .verdict import RULES, VERDICTS
from .verdict_text import CODE_GUIDE, latex

__all__ = ["DECISION_PAGE", "BEGIN", "END", "decision_table", "decision_page", "write_decision_page",
           "decision_page_stale", "committed_study"]

DECISION_PAGE = "decision.qmd"
BEGIN = "<!-- generated: verdict table (python -m oraclegap.audit.guide) -->"
END = "<!-- end of generated verdict table -->"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def committed_study():
    """The committed verdict study (``load_study()``), or None where its results or the loader are
    not there yet."""
    try:
        return _study.load_study()
    except ValueError:  # no data/study/verdict_study.csv (`make study` writes it)
        return None


def _study_cell(code: str, runs: pd.DataFrame | None, precision: pd.DataFrame | None, alpha: float) -> str:
    if runs is None:
        return "—"
    given = runs[runs["code"] == code]
    if given.empty:
        return "not given in the study"
    hit = precision[precision["code"] == code] if precision is not None else precision
    if hit is not None and len(hit):
        r = hit.iloc[0]
        return (f"right {int(r['right'])} of {int(r['given'])}: "
                f"{fmt_interval(float(r['rate']), float(r['lo']), float(r['hi']), 2)} ({1 - alpha:.0%} Wilson)")
    spec = int(given["truth"].isin(_study.SPECIALIZED).sum())
    return f"no claim; {len(given)} pools, {spec} of them with real specialization"


def decision_table(study=None) -> str:
    """The Markdown table: one row per verdict code (the first rule that gives it first), with
    the rules that give it, what it means, what to do next and, given a ``study``
    (:class:`~oraclegap.audit.study.VerdictStudy`), how often it was right there."""
    missing = [c for c in VERDICTS if c not in CODE_GUIDE]
    if missing:
        raise ValueError(f"CODE_GUIDE has no entry for the verdict code(s) {missing}: say what each means and "
                         "what to do next (oraclegap.audit.verdict_text.CODE_GUIDE)")
    unruled = [c for c in VERDICTS if not any(r.code == c for r in RULES)]
    if unruled:
        raise ValueError(f"no rule of RULES gives the verdict code(s) {unruled}")
    runs = precision = None
    alpha = 0.05
    if study is not None:
        runs, alpha, precision = study.runs, study.alpha, study.precision()
        if "small" in runs.columns and runs["small"].nunique() > 1:  # a stability rerun beside the study
            runs = runs[runs["small"].astype(bool)]
    order = list(dict.fromkeys(r.code for r in RULES))
    head = ["| verdict | given when (rule) | what it means | what to do next | in the verdict study |",
            "|---|---|---|---|---|"]
    rows = []
    for code in order:
        when = "; or ".join(f"{latex(r.doc.rstrip('.'))} ({j})" for j, r in enumerate(RULES, 1) if r.code == code)
        g = CODE_GUIDE[code]
        rows.append(f"| `{code}` | {_cell(when)} | {_cell(latex(g.means))} | {_cell(latex(g.next))} | "
                    f"{_cell(_study_cell(code, runs, precision, alpha))} |")
    return "\n".join(head + rows)


def decision_page(root, study=None) -> str:
    """The text of ``decision.qmd`` under ``root`` with its verdict table regenerated."""
    path = Path(root) / DECISION_PAGE
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise ValueError(f"{path} has no generated-table markers ({BEGIN} ... {END})")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{decision_table(study)}\n{END}{tail}"


def write_decision_page(root, study=None) -> bool:
    """Rewrite ``decision.qmd``'s verdict table (with the committed study when none is given);
    True when its text changed."""
    path = Path(root) / DECISION_PAGE
    text = decision_page(root, committed_study() if study is None else study)
    if path.read_text(encoding="utf-8") == text:
        return False
    atomic_write(path, text)
    return True


def decision_page_stale(root) -> bool:
    """Whether the committed ``decision.qmd`` differs from what the audit's records (and the
    committed study) generate now."""
    path = Path(root) / DECISION_PAGE
    return path.read_text(encoding="utf-8") != decision_page(root, committed_study())


if __name__ == "__main__":  # pragma: no cover - python -m oraclegap.audit.guide [ROOT]
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    print(("rewrote " if write_decision_page(root) else "unchanged: ") + str(root / DECISION_PAGE))
