"""The inventory of the three papers' numbered results: ``papers.qmd`` from ``data/paper/inventory.csv``.

Every numbered table, figure, theorem (and proposition, corollary, lemma, algorithm) of the three
source papers has one row in the CSV: where the book shows it (chapter, section label, cell label),
on what data, and whether the number matches -- ``matches`` / ``partly`` / ``differs`` (with how it
was checked, and the test that checks it where one does), ``not reproducible`` (why), or
``illustration`` / ``not in the book``. :func:`inventory_page` renders the page;
``python -m oraclegap.book pages`` rewrites it with the other generated pages, and
``tests/test_inventory.py`` checks that every item the paper texts mention has a row
(:func:`paper_items`), that every label the CSV cites exists, and that the page is current.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

__all__ = ["INVENTORY_CSV", "INVENTORY_PAGE", "COLUMNS", "STATUSES", "PAPERS", "paper_items", "load_inventory",
           "inventory_page"]

INVENTORY_CSV = Path("data") / "paper" / "inventory.csv"
INVENTORY_PAGE = "papers.qmd"
COLUMNS = ("paper", "item", "what", "chapter", "section", "cell", "data", "status", "check", "test")
#: What a row may say about the number.
STATUSES = ("matches", "partly", "differs", "not reproducible", "illustration", "not in the book")
#: How the book cites each paper, and its title.
PAPERS = {
    "000": ("arXiv 2609.32996", "Oracle Gaps in Reliability Coverage: Sampling Noise or Policy Specialization?"),
    "001": ("arXiv 2607.03436", "How Much of the Routing Gap Is Real? (T.-R. Chen; through a structured review)"),
    "002": ("Shihab et al.", "Opportunity Is Not Realizability: Selection-Valid Diagnostics for Multi-LLM Routing"),
}

_KINDS = {"table": "Table", "tables": "Table", "figure": "Figure", "figures": "Figure", "fig.": "Figure",
          "theorem": "Theorem", "theorems": "Theorem", "thm.": "Theorem", "proposition": "Proposition",
          "propositions": "Proposition", "prop.": "Proposition", "corollary": "Corollary", "cor.": "Corollary",
          "lemma": "Lemma", "algorithm": "Algorithm", "alg.": "Algorithm"}
_ITEM = re.compile(r"\b(Tables?|Figures?|Fig\.|Theorems?|Thm\.|Propositions?|Prop\.|Corollary|Cor\.|Lemma|Algorithm|Alg\.)"
                   r"[\s\u00a0~]*(A?\d+)\b")
_ORDER = {k: i for i, k in enumerate(("Table", "Figure", "Theorem", "Proposition", "Corollary", "Lemma", "Algorithm"))}


def paper_items(text: str) -> list[str]:
    """The numbered items a paper's text mentions, normalised ("Fig. 2" -> "Figure 2", "Thm. 1" ->
    "Theorem 1", appendix tables kept as "Table A4"), sorted by kind and number."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    found = {f"{_KINDS[m.group(1).lower()]} {m.group(2)}" for m in _ITEM.finditer(text)}
    return sorted(found, key=_sort_key)


def _sort_key(item: str):
    kind, num = item.split(" ", 1)
    return (_ORDER[kind], num.startswith("A"), int(num.lstrip("A")))


def load_inventory(root: Path) -> pd.DataFrame:
    """The inventory CSV under ``root`` (``ValueError`` on wrong columns, unknown papers or
    statuses, or a duplicate row)."""
    path = Path(root) / INVENTORY_CSV
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    if tuple(df.columns) != COLUMNS:
        raise ValueError(f"{path} must have the columns {COLUMNS}, got {tuple(df.columns)}")
    df["paper"] = df["paper"].str.zfill(3)
    bad = sorted(set(df["paper"]) - set(PAPERS))
    if bad:
        raise ValueError(f"{path}: unknown papers {bad}; expected {sorted(PAPERS)}")
    bad = sorted(set(df["status"]) - set(STATUSES))
    if bad:
        raise ValueError(f"{path}: unknown statuses {bad}; expected one of {STATUSES}")
    dup = df[df.duplicated(["paper", "item"])]
    if not dup.empty:
        raise ValueError(f"{path}: duplicate rows {list(zip(dup['paper'], dup['item'], strict=True))}")
    return df


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip()


def _where(r) -> str:
    out = f"ch. {r.chapter}, @{r.section}" if r.section else f"ch. {r.chapter}"
    return out + (f", `{r.cell}`" if r.cell else "")


def inventory_page(root: Path) -> str:
    """The text of ``papers.qmd`` (deterministic: the CSV's facts in paper and item order)."""
    df = load_inventory(root)
    counts = df["status"].value_counts()
    lines = [
        "# The papers, item by item {#sec-papers .unnumbered}",
        "",
        "Every numbered table, figure and theorem (with the propositions, corollaries, lemmas and",
        "algorithms) of the three source papers: where the book shows it, on what data, and whether the",
        "number matches. *matches*: recomputed and equal within the stated tolerance; *partly*: some",
        "cells match, the rest are said; *differs*: recomputed and different; *not reproducible*: the",
        "paper's item-level data were not released, and the book runs the same analysis on data it has.",
        "A test names the check where one exists. Generated from `data/paper/inventory.csv`",
        "(`python -m oraclegap.book pages`); a test fails when an item a paper mentions has no row.",
        "",
        "Over the three papers: " + ", ".join(f"{int(counts.get(s, 0))} {s}" for s in STATUSES) + ".",
        "",
    ]
    for paper, (cite, title) in PAPERS.items():
        rows = df[df["paper"] == paper].copy()
        rows = rows.iloc[sorted(range(len(rows)), key=lambda i: _sort_key(rows["item"].iloc[i]))]
        lines += [f"## {cite}: *{title}*", "", "| item | what | where | data | number | how checked |",
                  "|----|----------|----------|--------|-----|----------------|"]  # widths 4:10:10:8:5:16
        for r in rows.itertuples():
            how = _cell(r.check) + (f" (`{r.test}`)" if r.test else "")
            lines.append(f"| {r.item} | {_cell(r.what)} | {_where(r)} | {_cell(r.data)} | {r.status} | {how} |")
        lines.append("")
    return "\n".join(lines)
