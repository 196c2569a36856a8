"""The verdict study's views for the book (oraclegap.book.study_views): the confusion table counts
the runs it is given, its precision row is the study's own precision with its Wilson interval, and
the figures draw one point (or bar) per cell of the study, against alpha."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

from oraclegap.audit import VERDICTS  # noqa: E402
from oraclegap.audit.study import CLAIM_CODES, VerdictStudy  # noqa: E402
from oraclegap.book import study_views as sv  # noqa: E402


def _runs(spec):
    """A study's runs from {(truth, n, k): {code: count}} (seeds and seconds are placeholders)."""
    rows = []
    for (truth, n, k), codes in spec.items():
        rep = 0
        for code, count in codes.items():
            for _ in range(count):
                rows.append({"truth": truth, "n": n, "k": k, "rep": rep, "seed": rep, "code": code, "seconds": 0.1})
                rep += 1
    return pd.DataFrame(rows)


SPEC = {("exchangeable", 200, 1): {"luck-not-excluded": 7, "noise": 2, "certified": 1},
        ("exchangeable", 200, 4): {"noise": 9, "quality-only": 1},
        ("exchangeable", 1000, 4): {"noise": 10},
        ("quality-only", 200, 4): {"quality-only": 6, "noise": 4},
        ("diffuse", 200, 4): {"certified": 8, "detected-not-certified": 2},
        ("specialist-text", 200, 4): {"certified-recoverable": 10}}


@pytest.fixture
def study():
    return VerdictStudy(_runs(SPEC), 0.05)


def test_confusion_table_counts_every_pool_once(study):
    tab = sv.confusion_table(study, VERDICTS, by=("truth", "n", "k"))
    body = tab[tab["truth"] != sv.PRECISION_ROW]
    codes = sv.code_order(study, VERDICTS)
    assert codes == [c for c in VERDICTS if any(c in v for v in SPEC.values())]  # the audit's order, given codes only
    for (truth, n, k), want in SPEC.items():
        row = body[(body["truth"] == truth) & (body["n"] == n) & (body["k"] == k)]
        assert len(row) == 1
        assert {c: int(row[c].iloc[0]) for c in codes if int(row[c].iloc[0])} == want
        assert int(row["pools"].iloc[0]) == sum(want.values())
    assert int(body["pools"].sum()) == len(study.runs)
    # pooled over n: exchangeable k = 4 holds both n cells
    pooled = sv.confusion_table(study, VERDICTS)
    ex4 = pooled[(pooled["truth"] == "exchangeable") & (pooled["k"] == 4)]
    assert int(ex4["noise"].iloc[0]) == 19 and int(ex4["pools"].iloc[0]) == 20
    assert list(pooled["truth"].iloc[:-1].drop_duplicates()) == list(dict.fromkeys(study.runs["truth"]))


def test_precision_row_is_the_wilson_interval_of_right_over_given(study):
    tab = sv.confusion_table(study, VERDICTS)
    prec = tab[tab["truth"] == sv.PRECISION_ROW].iloc[0]
    # certified: given 9 times (1 exchangeable, 8 diffuse), right 8 times
    lo, hi = proportion_confint(8, 9, alpha=0.05, method="wilson")
    assert prec["certified"] == f"{8 / 9:.2f} [{lo:.2f}, {hi:.2f}]"
    # quality-only: right only on quality-only truth (6 of 7)
    lo, hi = proportion_confint(6, 7, alpha=0.05, method="wilson")
    assert prec["quality-only"] == f"{6 / 7:.2f} [{lo:.2f}, {hi:.2f}]"
    assert prec["noise"] == "" and prec["luck-not-excluded"] == ""  # no claim, no precision
    p = sv.precision_table(study)
    assert set(p["code"]) <= set(CLAIM_CODES) | {"quality-only"}
    assert p.set_index("code").loc["certified-recoverable", "precision"].startswith("1.000 [")


def test_code_by_truth_is_the_transposed_count(study):
    tab = sv.code_by_truth(study, VERDICTS).set_index("verdict")
    truths = list(dict.fromkeys(study.runs["truth"]))
    assert list(tab.columns) == [*truths, sv.PRECISION_COLUMN]
    for code in sv.code_order(study, VERDICTS):
        for t in truths:
            want = sum(v.get(code, 0) for (tt, _n, _k), v in SPEC.items() if tt == t)
            assert int(tab.loc[code, t]) == want, (code, t)
    assert [int(tab.loc["pools", t]) for t in truths] == [int((study.runs["truth"] == t).sum()) for t in truths]
    lo, hi = proportion_confint(8, 9, alpha=0.05, method="wilson")
    assert tab.loc["certified", sv.PRECISION_COLUMN] == f"{8 / 9:.2f} [{lo:.2f}, {hi:.2f}]"
    assert tab.loc["noise", sv.PRECISION_COLUMN] == ""
    assert list(sv.code_by_truth(study, VERDICTS, precision=False).columns) == ["verdict", *truths]


def test_figures_draw_each_cell_against_alpha(study):
    fig = sv.plot_false_claims(study)
    ax = fig.axes[0]
    fc = study.false_claims()
    drawn = np.concatenate([c.lines[0].get_ydata() for c in ax.containers])  # one error bar per n
    assert len(drawn) == len(fc) and np.allclose(np.sort(drawn), np.sort(fc["rate"]))  # one per cell
    assert any(np.allclose(line.get_ydata(), 0.05) for line in ax.lines if line.get_linestyle() == "--")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("α = 0.05" in s for s in labels) and any("n = 1000" in s for s in labels)
    fig2 = sv.plot_code_shares(study, VERDICTS)
    bars = fig2.axes[0].patches
    widths = np.array([b.get_width() for b in bars]).reshape(len(sv.code_order(study, VERDICTS)), -1)
    assert np.allclose(widths.sum(axis=0), 1.0)  # each (truth, k) row of shares sums to one
    colours = {matplotlib.colors.to_hex(b.get_facecolor()) for b in bars}
    assert len(colours) == len(sv.code_order(study, VERDICTS))  # one colour per code
    matplotlib.pyplot.close("all")


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="VerdictStudy"):
        sv.confusion_table(pd.DataFrame())
    with pytest.raises(ValueError, match="empty"):
        sv.confusion_table(VerdictStudy(_runs({}).reindex(columns=["truth", "n", "k", "code"])))
    with pytest.raises(ValueError, match="by"):
        sv.confusion_table(VerdictStudy(_runs(SPEC)), by=("n",))
