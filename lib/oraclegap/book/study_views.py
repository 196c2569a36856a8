"""The verdict study's table and figures for the book (chapter 07 and the decision page).

A study is any object with the interface of :class:`oraclegap.audit.study.VerdictStudy`: ``.runs``
(one row per audited pool: truth, n, k, code, ...), ``.alpha`` (the level of its Wilson intervals),
``.table()`` (counts, rows (truth, n, k), one column per code), ``.false_claims()`` (columns truth, n,
k, false, pools, rate, lo, hi) and ``.precision()`` (code, given, right, rate, lo, hi). The book sits
below the audit in the library's floors, so nothing here imports it: the chapter passes the study
and, for the column order, the audit's verdict codes.

* :func:`confusion_table` -- truth x verdict code counts, one row per truth class and k (pooled over
  n, or per n), the last row each claim code's precision with its Wilson interval;
* :func:`precision_table` -- per claim code: pools given it, how many bear it out, the precision;
* :func:`plot_false_claims` -- the false-claim rate of every cell without specialization with its
  interval, against alpha;
* :func:`plot_code_shares` -- per truth class and k, the share of each code;
* :func:`rate_summary` -- a per-cell rate table (the study's ``coverage()``, ``lower_limits()``,
  ``certification()``, ``scores()`` ...) pooled per truth class, with the worst cell beside it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..report import PALETTE, fmt_interval

__all__ = ["PRECISION_ROW", "PRECISION_COLUMN", "CODE_COLOURS", "confusion_table", "code_by_truth", "precision_table",
           "plot_false_claims", "plot_code_shares", "code_order", "rate_summary"]

#: The label of the confusion table's last row (each claim code's precision).
PRECISION_ROW = "precision [95%]"
#: One colour per verdict code, the same in every figure: greys for no finding, yellow for k = 1 luck,
#: blues and browns for quality and mixed evidence, warm colours for claims, green for recoverable.
CODE_COLOURS = {"no-gap": "#d9d9d9", "noise": "#949494", "luck-not-excluded": "#ece133", "quality-only": "#56b4e9",
                "inconclusive": "#ca9161", "detected-not-certified": "#de8f05", "luck": "#cc78bc",
                "certified": "#d55e00", "certified-recoverable": "#029e73"}
#: The label of :func:`code_by_truth`'s last column.
PRECISION_COLUMN = "precision [95%]"
_BY = ("truth", "k")


def _check_study(study) -> None:
    missing = [a for a in ("runs", "alpha", "table", "false_claims", "precision") if not hasattr(study, a)]
    if missing:
        raise TypeError(f"study must be a VerdictStudy (oraclegap.audit.study); it lacks {', '.join(missing)}")
    need = {"truth", "n", "k", "code"} - set(study.runs.columns)
    if need:
        raise ValueError(f"study.runs lacks the columns {sorted(need)} (one row per audited pool: truth, n, k, code)")
    if len(study.runs) == 0:
        raise ValueError("study.runs is empty: the study audited no pool")


def code_order(study, codes: Sequence[str] | None = None) -> list[str]:
    """The verdict codes the study gave, in the order of ``codes`` (the audit's ``VERDICTS``),
    codes not in it (``not-auditable``) last; every code of ``codes`` the study never gave is left out."""
    _check_study(study)
    given = list(dict.fromkeys(study.runs["code"]))
    if codes is None:
        return sorted(given)
    codes = list(codes)
    return [c for c in codes if c in given] + sorted(c for c in given if c not in codes)


def _truth_order(study) -> list[str]:
    return list(dict.fromkeys(study.runs["truth"]))


def confusion_table(study, codes: Sequence[str] | None = None, by: Sequence[str] = _BY) -> pd.DataFrame:
    """Counts of each verdict code (columns, in :func:`code_order`) per group of pools (rows:
    ``by``, by default truth class and k, pooled over n; ``("truth", "n", "k")`` for every cell),
    a ``pools`` column, and a last row :data:`PRECISION_ROW` with each claim code's precision and
    its Wilson interval (``study.precision()``; blank for codes that claim nothing)."""
    _check_study(study)
    by = list(by)
    if not by or "truth" not in by or not set(by) <= {"truth", "n", "k"}:
        raise ValueError(f"by must name 'truth' and any of 'n', 'k', got {by}")
    order = code_order(study, codes)
    runs = study.runs
    counts = (runs.groupby([*by, "code"]).size().unstack("code", fill_value=0)
              .reindex(columns=order, fill_value=0))
    truths = _truth_order(study)
    counts = counts.reset_index()
    counts["_t"] = counts["truth"].map({t: j for j, t in enumerate(truths)})
    counts = counts.sort_values(["_t", *[b for b in by if b != "truth"]]).drop(columns="_t")
    counts["pools"] = counts[order].sum(axis=1)
    out = counts.astype({c: object for c in [*by, *order, "pools"]})
    prec = study.precision()
    row = {b: "" for b in by}
    row[by[0]] = PRECISION_ROW
    for c in order:
        hit = prec[prec["code"] == c]
        row[c] = (fmt_interval(float(hit["rate"].iloc[0]), float(hit["lo"].iloc[0]), float(hit["hi"].iloc[0]), 2)
                  if len(hit) else "")
    row["pools"] = ""
    return pd.concat([out, pd.DataFrame([row])], ignore_index=True)


def code_by_truth(study, codes: Sequence[str] | None = None, precision: bool = True) -> pd.DataFrame:
    """The confusion table with one row per verdict code (in :func:`code_order`) and one column per
    truth class (in the study's order), counts pooled over n and k, and (``precision=True``) a last
    column :data:`PRECISION_COLUMN` with the code's precision and Wilson interval (blank for a code
    that claims nothing); a final row ``pools`` holds each truth class's number of pools."""
    _check_study(study)
    order, truths = code_order(study, codes), _truth_order(study)
    counts = (study.runs.groupby(["code", "truth"]).size().unstack("truth", fill_value=0)
              .reindex(index=order, columns=truths, fill_value=0))
    prec = study.precision().set_index("code")
    col = [fmt_interval(float(prec.loc[c, "rate"]), float(prec.loc[c, "lo"]), float(prec.loc[c, "hi"]), 2)
           if c in prec.index else "" for c in order]
    out = counts.astype(object).assign(**{PRECISION_COLUMN: col})
    total = pd.DataFrame([{**{t: int(counts[t].sum()) for t in truths}, PRECISION_COLUMN: ""}], index=["pools"])
    out = pd.concat([out, total])
    out.index.name = "verdict"
    out = out.reset_index()
    return out if precision else out.drop(columns=PRECISION_COLUMN)


def precision_table(study) -> pd.DataFrame:
    """Per code the study reads as a claim (``study.precision()``): pools given it, how many of
    them the truth bears out, and the precision with its Wilson interval as text."""
    _check_study(study)
    p = study.precision()
    return p.assign(precision=[fmt_interval(r, lo, hi) for r, lo, hi in zip(p["rate"], p["lo"], p["hi"], strict=True)])


def _cells(fc: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """One x position per cell, grouped by truth class, a gap between classes."""
    labels, xs, x = [], [], 0.0
    for _t, grp in fc.groupby("truth", sort=False):
        for r in grp.itertuples():
            labels.append(f"k={r.k}")
            xs.append(x)
            x += 1
        x += 0.8
    return labels, np.asarray(xs)


def plot_false_claims(study, ax=None):
    """The false-claim rate of every cell whose truth has no specialization (``study.false_claims()``)
    with its Wilson interval, one marker per n, cells grouped by truth class, and alpha as a line:
    the rule "at most alpha in every cell" holds where no interval lies wholly above it."""
    import matplotlib.pyplot as plt

    _check_study(study)
    fc = study.false_claims()
    if len(fc) == 0:
        raise ValueError("the study has no pool without specialization: no false-claim rate to draw")
    truths = [t for t in _truth_order(study) if t in set(fc["truth"])]
    fc = fc.assign(_t=fc["truth"].map({t: j for j, t in enumerate(truths)})).sort_values(["_t", "k", "n"])
    keyed = fc.drop_duplicates(["truth", "k"])[["truth", "k"]]
    labels, xs = _cells(keyed)
    pos = {(t, k): x for (t, k), x in zip(keyed.itertuples(index=False, name=None), xs, strict=True)}
    ns = sorted(set(fc["n"]))
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.5, 0.55 * len(xs) + 2), 3.4), layout="constrained")
    markers = "osD^v"
    width = 0.5 / max(len(ns), 1)
    for j, n in enumerate(ns):
        sub = fc[fc["n"] == n]
        x = np.array([pos[(t, k)] for t, k in zip(sub["truth"], sub["k"], strict=True)]) + (j - (len(ns) - 1) / 2) * width
        y = sub["rate"].to_numpy(float)
        err = np.clip([y - sub["lo"].to_numpy(float), sub["hi"].to_numpy(float) - y], 0, None)
        ax.errorbar(x, y, yerr=err, fmt=markers[j % len(markers)], color=PALETTE[j], capsize=3,
                    label=f"n = {n} prompts (Wilson {1 - study.alpha:.0%})")
    ax.axhline(study.alpha, color="0.3", ls="--", lw=1, label=f"α = {study.alpha:g}")
    ax.set_xticks(xs, labels)
    for t in truths:
        sel = [pos[(tt, k)] for tt, k in pos if tt == t]
        ax.text(np.mean(sel), 1.02, t, ha="center", va="bottom", transform=ax.get_xaxis_transform(), fontsize="small")
    ax.set(ylabel="false-claim rate", ylim=(-0.02, 1.02))
    ax.legend(fontsize="small", loc="upper right")
    return ax.figure


def plot_code_shares(study, codes: Sequence[str] | None = None, ax=None):
    """Per truth class and k (pooled over n), the share of pools given each verdict code, as stacked
    horizontal bars, one colour per code (in :func:`code_order`)."""
    import matplotlib.pyplot as plt

    tab = confusion_table(study, codes)
    tab = tab[tab["truth"] != PRECISION_ROW]
    order = code_order(study, codes)
    counts = tab[order].to_numpy(float)
    shares = counts / counts.sum(axis=1, keepdims=True)
    labels = [f"{t}, k={k}" for t, k in zip(tab["truth"], tab["k"], strict=True)]
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 0.28 * len(labels) + 1.6), layout="constrained")
    y = np.arange(len(labels))[::-1]
    left = np.zeros(len(labels))
    spare = iter(c for c in PALETTE if c not in CODE_COLOURS.values())
    colour = {c: CODE_COLOURS.get(c) or next(spare, "0.2") for c in order}  # one colour per code, always
    for j, c in enumerate(order):
        ax.barh(y, shares[:, j], left=left, color=colour[c], label=c, height=0.8)
        left += shares[:, j]
    ax.set_yticks(y, labels)
    ax.set(xlabel="share of the cell's pools", xlim=(0, 1))
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / max(len(labels), 1)),
              ncol=3, frameon=False)
    return ax.figure


def rate_summary(cells: pd.DataFrame, count: str, total: str = "pools", *, worst: str = "min") -> pd.DataFrame:
    """Per truth class of a per-cell table (columns truth, n, k, ``count``, ``total``, rate): the
    pooled count out of the pooled total, its rate as text with the Wilson 95% interval, and the
    cell with the lowest (``worst="min"``) or highest (``"max"``) rate, as "rate (n = .., k = ..)"."""
    from ..stats.studies import rate_interval

    need = {"truth", "n", "k", count, total, "rate"} - set(cells.columns)
    if need:
        raise ValueError(f"cells lacks the columns {sorted(need)}")
    if worst not in ("min", "max"):
        raise ValueError(f"worst must be 'min' or 'max', got {worst!r}")
    rows = []
    for truth, g in cells.groupby("truth", sort=False):
        c, t = int(g[count].sum()), int(g[total].sum())
        lo, hi = rate_interval(c, t)
        w = g.loc[g["rate"].idxmin() if worst == "min" else g["rate"].idxmax()]
        rows.append({"truth": truth, count: c, total: t, "rate": fmt_interval(c / t, float(lo), float(hi)),
                     "worst cell": f"{w['rate']:.2f} (n = {int(w['n'])}, k = {int(w['k'])})"})
    return pd.DataFrame(rows)
