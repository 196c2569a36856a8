"""The inventory of the three papers' numbered results: ``papers.qmd`` from ``data/paper/inventory.csv``.

Every numbered table, figure, theorem (and proposition, corollary, lemma, algorithm) of the three
source papers, and every appendix section, has one row in the CSV: where the book shows it
(chapter, section label, cell label), on what data, and whether the number matches -- ``matches``
/ ``partly`` / ``differs`` (with how it was checked, and the test that checks it where one does),
``not reproducible`` (why), or ``illustration`` / ``not in the book``. :func:`inventory_page` renders the page;
``python -m oraclegap.book pages`` rewrites it with the other generated pages, and
``tests/book/test_inventory.py`` checks that every item the paper texts oblige has a row
(:func:`expected_items`: the items they mention, the unmentioned members of a numbered table or
figure series, the appendix sections), that every label the CSV cites exists, and that the page
is current.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

__all__ = ["INVENTORY_CSV", "INVENTORY_PAGE", "COLUMNS", "STATUSES", "PAPERS", "SERIAL_KINDS", "paper_items",
           "complete_series", "appendix_sections", "expected_items", "load_inventory", "inventory_page"]

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

_KINDS = {"table": "Table", "fig": "Figure", "figure": "Figure", "theorem": "Theorem", "thm": "Theorem",
          "proposition": "Proposition", "prop": "Proposition", "corollary": "Corollary", "corollarie": "Corollary",
          "cor": "Corollary", "lemma": "Lemma", "lem": "Lemma", "algorithm": "Algorithm", "alg": "Algorithm"}
_NUM = r"(?:A\d+|\d+|[IVX]+)(?![\w.]\w)"  # Arabic, appendix (A3) or Roman; "Thm. 2.2" names no item
_ITEM = re.compile(r"\b(Tables?|Figures?|Figs?\.|Theorems?|Thms?\.|Propositions?|Props?\.|Corollar(?:y|ies)|Cors?\."
                   r"|Lemmas?|Lems?\.|Algorithms?|Algs?\.)[\s\u00a0~]*"
                   rf"({_NUM}(?:\s*(?:,|and|&|[-\u2013]|to)\s*{_NUM})*)")
_ORDER = {k: i for i, k in enumerate(("Table", "Figure", "Theorem", "Proposition", "Corollary", "Lemma", "Algorithm",
                                      "App."))}
_ROMAN = {"I": 1, "V": 5, "X": 10}
#: Kinds with their own counter (every number up to the largest mentioned exists); theorems, propositions,
#: corollaries and lemmas may share one counter, so only the numbers mentioned are items.
SERIAL_KINDS = ("Table", "Figure")


def _roman(s: str) -> int:
    vals = [_ROMAN[c] for c in s]
    return sum(-v if i + 1 < len(vals) and v < vals[i + 1] else v for i, v in enumerate(vals))


def _to_roman(n: int) -> str:
    out = ""
    for v, c in ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= v:
            out, n = out + c, n - v
    return out


def _numbers(spec: str) -> list[str]:
    """"1–3" -> 1, 2, 3; "2 and 4" -> 2, 4; ranges keep the series (A2–A4, II–IV)."""
    out = []
    parts = re.split(r"\s*(,|and|&|[-\u2013]|to)\s*", spec)
    nums, seps = parts[0::2], parts[1::2]
    for i, n in enumerate(nums):
        if i and seps[i - 1] in ("-", "\u2013", "to") and out:
            a, b = _value(out[-1]), _value(n)
            out += [_label(n, v) for v in range(a[1] + 1, b[1])]
        out.append(n)
    return out


def _value(num: str) -> tuple[str, int]:
    if num.startswith("A"):
        return "A", int(num[1:])
    return ("", int(num)) if num.isdigit() else ("R", _roman(num))


def _label(like: str, v: int) -> str:
    series = _value(like)[0]
    return f"A{v}" if series == "A" else _to_roman(v) if series == "R" else str(v)


def paper_items(text: str) -> list[str]:
    """The numbered items a paper's text mentions, normalised ("Fig. 2" -> "Figure 2", "Thm. 1" ->
    "Theorem 1", "Lem. 2" -> "Lemma 2", "Props. 1–3" -> Propositions 1, 2 and 3, appendix tables kept
    as "Table A4", Roman-numbered tables as "Table IV"), sorted by kind and number."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    found = set()
    for m in _ITEM.finditer(text):
        kind = _KINDS[m.group(1).lower().rstrip(".").rstrip("s")]
        found |= {f"{kind} {n}" for n in _numbers(m.group(2))}
    return sorted(found, key=_sort_key)


def complete_series(items) -> list[str]:
    """``items`` with every table and figure number below the largest of its series added (Table A11
    mentioned -> Tables A1 to A11; Table VII -> Tables I to VII): a paper numbers those kinds on
    their own counter, so a number it never mentions still names an item."""
    out = set(items)
    top: dict[tuple[str, str], tuple[int, str]] = {}
    for it in out:
        kind, num = it.split(" ", 1)
        if kind in SERIAL_KINDS:
            series, v = _value(num)
            if v > top.get((kind, series), (0, ""))[0]:
                top[(kind, series)] = (v, num)
    for (kind, _series), (v, like) in top.items():
        out |= {f"{kind} {_label(like, i)}" for i in range(1, v + 1)}
    return sorted(out, key=_sort_key)


_APP_MD = re.compile(r"^#{2,4}\s+([A-Z](?:\.\d+)?)\s{1,3}[A-Z]", re.M)
_APP_TOP = re.compile(r"^Appendix ([A-Z]) [A-Z][^\n]{0,80}$", re.M)
_APP_SUB = re.compile(r"^([A-Z]\.\d+) [A-Z][^\n]{0,80}$", re.M)


def appendix_sections(text: str) -> list[str]:
    """The appendix sections a paper's text has headings for, at the finest level ("App. B.1" where
    Appendix B has subsections, "App. C" where it has none): unnumbered results are found by section."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    heads = set(_APP_MD.findall(text)) | set(_APP_TOP.findall(text)) | set(_APP_SUB.findall(text))
    subs = {h for h in heads if "." in h}
    letters = {h.split(".")[0] for h in subs}
    return sorted((f"App. {h}" for h in heads if h in subs or h not in letters), key=_sort_key)


def expected_items(text: str) -> list[str]:
    """Every item a paper's text obliges the inventory to list: its numbered items (mentioned, and
    the unmentioned tables and figures of a numbered series) and its appendix sections."""
    return sorted(set(complete_series(paper_items(text))) | set(appendix_sections(text)), key=_sort_key)


def _sort_key(item: str):
    kind, num = item.split(" ", 1)
    if kind == "App.":
        letter, _, sub = num.partition(".")
        return (_ORDER[kind], 0, ord(letter), int(sub or 0))
    series, v = _value(num)
    return (_ORDER[kind], {"": 0, "R": 1, "A": 2}[series], v, 0)


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
    if not r.cell:
        return out
    # a table or figure is a cross-reference (its number in the rendered book), anything else a name
    return out + (f", @{r.cell}" if r.cell.startswith(("tbl-", "fig-")) else f", `{r.cell}`")


def inventory_page(root: Path) -> str:
    """The text of ``papers.qmd`` (deterministic: the CSV's facts in paper and item order)."""
    df = load_inventory(root)
    counts = df["status"].value_counts()
    lines = [
        "# The papers, item by item {#sec-papers .unnumbered}",
        "",
        "Every numbered table, figure and theorem (with the propositions, corollaries, lemmas and",
        "algorithms) of the three source papers, Roman-numbered and appendix tables included, and every",
        "appendix section by its number (*App. B.1*), which is where the unnumbered results sit: where",
        "the book shows it, on what data, and whether the number matches. *matches*: recomputed and",
        "equal within the stated tolerance; *partly*: some cells match, the rest are said; *differs*:",
        "recomputed and different; *not reproducible*: the paper's item-level data were not released,",
        "and the book runs the same analysis on data it has; *illustration*: a picture or protocol",
        "with no number; *not in the book*: nothing to compute (a description, a template, an item",
        "the project's copy of the paper does not state). A test names the check where one exists.",
        "Generated from `data/paper/inventory.csv` (`python -m oraclegap.book pages`); a test fails",
        "when an item a paper mentions, a table or figure numbered between two it mentions, or an",
        "appendix section has no row.",
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
