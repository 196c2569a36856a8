"""The report's formatting helpers, tables and claims, the plot style (idempotent, no side
effect on import) and the placeholder figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from oraclegap import report


def test_format_helpers():
    assert report.fmt(0.11349) == "0.113" and report.fmt(12000) == "12,000" and report.fmt(float("nan")) == "—"
    assert report.fmt(-0.0001) == "0.000"
    assert report.fmt_interval(0.113, 0.079, 0.1131) == "0.113 [0.079, 0.113]"
    assert report.fmt_signed(0.017) == "+0.017" and report.fmt_signed(-0.02) == "-0.020"
    assert report.fmt_p(0.0001, n_draws=2000) == "< 0.001" and report.fmt_p(0.074) == "0.074"
    assert report.md("gap {g} with p = {p:p} and share {s:%}, change {c:+}", g=0.11349, p=0.0742, s=0.361, c=0.017) == (
        "gap 0.113 with p = 0.074 and share 36.1%, change +0.017"
    )
    assert report.md("(p = {p:p})", p=1e-5) == "(p < 0.001)"
    with pytest.raises(KeyError, match="needs a value for 'x'"):
        report.md("{x}")


def test_table_and_claims():
    df = pd.DataFrame({"a": [0.12345, np.nan], "b": [True, False], "n": [1000, 2]})
    html = report.table(df).to_html()
    assert "0.123" in html and "yes" in html and "1,000" in html
    with pytest.raises(TypeError):
        report.table([1, 2])
    ct = report.claim_table([{"claim": "x", "source": "s", "computed": 1, "holds": True}])
    assert list(ct.columns[:4]) == ["claim", "source", "computed", "holds"]
    with pytest.raises(ValueError, match="missing"):
        report.claim_table([{"claim": "x"}])


def test_use_style_idempotent_and_import_has_no_side_effects():
    import matplotlib as mpl

    before = dict(mpl.rcParams)
    import importlib

    importlib.reload(report)
    assert dict(mpl.rcParams) == before
    report.use_style()
    once = dict(mpl.rcParams)
    report.use_style()
    assert dict(mpl.rcParams) == once


def test_placeholder_figure_shows_its_text(monkeypatch):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append([t.get_text() for t in plt.gca().texts]))
    report.placeholder_figure("data absent")
    assert shown == [["data absent"]]


def test_fmt_share_never_rounds_a_share_onto_zero_or_one():
    from oraclegap.report import fmt_share

    for x in (1e-6, 0.001, 0.0049):
        assert fmt_share(x) == "<1%"
    for x in (0.995, 0.999, 1 - 1e-9):
        assert fmt_share(x) == ">99%"
    assert (fmt_share(0), fmt_share(1), fmt_share(0.23), fmt_share(0.77)) == ("0%", "100%", "23%",
                                                                              "77%")
    for bad in (-0.1, 1.2, float("nan")):
        with pytest.raises(ValueError):
            fmt_share(bad)
