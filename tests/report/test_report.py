"""report.py: interpretive words from computed values, claims, published figures, callouts."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from oraclegap import report


def test_compare_gives_the_direction_and_fails_when_it_flips():
    assert report.compare(0.12, 0.10) == "above"
    assert report.compare(0.08, 0.10) == "below"
    assert report.compare(0.10, 0.10) == "equal to"
    assert report.compare((1 - 2 / 3) / (2 / 3), 0.5) == "equal to"  # rounding is not a direction
    assert report.compare(0.101, 0.10, tol=0.005) == "equal to"
    assert report.compare(3, 2, more="overstates", less="understates", expect="overstates") == "overstates"
    with pytest.raises(report.ProseError, match="the text says 'overstates'.*'understates'"):
        report.compare(1, 2, more="overstates", less="understates", expect="overstates", what="re-deal mean vs observed")
    # a set of acceptable words
    assert report.compare(2, 2, expect={"above", "equal to"}) == "equal to"
    with pytest.raises(ValueError, match="NaN"):
        report.compare(float("nan"), 1)
    with pytest.raises(TypeError, match="a must be a number"):
        report.compare("x", 1)
    with pytest.raises(ValueError, match="tol"):
        report.compare(1, 2, tol=-1)


def test_position_in_an_interval():
    assert report.position(0.5, 0.4, 0.6) == "inside"
    assert report.position(0.4, 0.4, 0.6) == "inside"  # closed interval
    assert report.position(0.7, 0.4, 0.6) == "above"
    assert report.position(0.3, 0.4, 0.6, below="under") == "under"
    with pytest.raises(report.ProseError):
        report.position(0.7, 0.4, 0.6, expect="inside")
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        report.position(0.5, 0.6, 0.4)


def test_check_stops_on_a_false_statement():
    report.check(True, "the excess understates the gap")
    with pytest.raises(report.ProseError, match="the excess understates the gap"):
        report.check(np.bool_(False), "the excess understates the gap")
    with pytest.raises(TypeError):
        report.check(True, "")


def test_rate_and_range_formatting():
    assert report.fmt_rate(0.5, 0.3, 0.7) == "50% [30%, 70%]"
    assert report.fmt_rate(0.5, 0.3, 0.7, percent=False) == "0.50 [0.30, 0.70]"
    assert report.fmt_rate(0.126) == "13%"
    assert report.fmt_range([0.2, 0.1, np.nan, 0.3]) == "0.100 to 0.300"
    assert report.fmt_range([0.2, 0.2]) == "0.200"
    assert report.fmt_range([0.14, 0.35], percent=True, sep="–") == "14.0%–35.0%"
    assert report.fmt_range([]) == "—"


def test_claims_table_and_stop():
    c = report.Claims()
    assert c.add("L <= D", "000 §2.1", "ok", True, kind="sanity") is None
    c.add("a claim that fails", "here", 1.0, False, kind="simulation")
    df = c.frame()
    assert list(df.columns[:4]) == ["claim", "source", "computed", "holds"] and len(c) == 2
    html = c.table().to_html()
    assert "L &lt;= D" in html  # text cells are escaped, so "<=" shows as written
    with pytest.raises(report.ProseError, match="a claim that fails"):
        c.stop_if_failed()
    with pytest.raises(ValueError, match="kind"):
        c.add("x", "y", 1, True, kind="other")


def test_fmt_signed_carries_no_sign_where_the_rounding_shows_zero():
    for x in (-0.0004, 1e-17, -1e-17, 0.0, 0.00049):
        assert report.fmt_signed(x) == "0.000"
    assert report.fmt_signed(0.0005) == "+0.001" and report.fmt_signed(-0.0005) in ("-0.001", "0.000")
    assert report.fmt_signed(12) == "+12" and report.fmt_signed(-3) == "-3"
    assert report.fmt_signed_interval(0.02, -0.0004, 0.05) == "+0.020 [0.000, +0.050]"


def test_fmt_signed_interval():
    assert report.fmt_signed_interval(0.0123, -0.0041, 0.03) == "+0.012 [-0.004, +0.030]"
    assert report.fmt_signed_interval(0.0, 0.0, 0.5, digits=2) == "0.00 [0.00, +0.50]"  # zero carries no sign
    assert report.fmt_signed_interval(-0.2, -0.3, -0.1) == "-0.200 [-0.300, -0.100]"


def test_fmt_frac():
    assert report.fmt_frac(2 / 3) == "2/3" and report.fmt_frac(1.0) == "1" and report.fmt_frac(0.0) == "0"
    assert report.fmt_frac(0.123456) == "0.123"


def test_table_renames_and_escapes():
    df = pd.DataFrame({"band_lo": [0.1], "p_lower": [0.5], "text": ["a < b"]})
    html = report.table(df, columns={"p_lower": "lower-tail p", "text": "note"}).to_html()
    assert "lower-tail p" in html and "band_lo" not in html and "a &lt; b" in html
    with pytest.raises(KeyError, match="does not have"):
        report.table(df, columns={"nope": "x"})


def test_table_p_value_columns_never_read_zero():
    """A randomisation p-value below the table's resolution reads "< 0.001", not "0.000", in a
    p-value column; other float columns keep plain rounding."""
    df = pd.DataFrame({"p": [0.0, 0.2471], "p_m": [0.0004, 1.0], "gap": [0.0, 0.0874]})
    html = report.table(df, columns={"p": "pᵣₑ", "p_m": "pₘₚ", "gap": "L̂"}).to_html()
    assert html.count(">< 0.001<") == 2 and "0.247" in html and "1.000" in html
    assert ">0.000<" in html  # the gap column: a zero estimate is a zero
    # a qualified p column ("Pass@1 pᵣₑ") is a p column too; "pool" or "L̂ p50" are not
    html = report.table(pd.DataFrame({"pass1": [0.0], "share": [0.0]}),
                        columns={"pass1": "Pass@1 pᵣₑ", "share": "top share"}).to_html()
    assert html.count(">< 0.001<") == 1 and ">0.000<" in html


def test_table_numbers_never_break_inside():
    """The book lets a table cell break anywhere (long identifiers); a number column, or a text
    column of numbers and intervals, gets ``overflow-wrap: normal`` so "0.720" never splits."""
    df = pd.DataFrame({"pool": ["lab_seed_primary_aligned_k64", "b"], "p": [0.72, 0.01], "n": [3, 4],
                       "gap": ["0.087 (0.079)", "[0.1, 0.2]"], "task": ["secondary", "primary"],
                       "note": ["see oraclegap.stats.simulate_exchangeable", "x"]})
    html = report.table(df).to_html()
    wrapped = set(re.findall(r"td\.col(\d+) \{\s*overflow-wrap: normal;", html))
    assert wrapped == {"1", "2", "3", "4"}, wrapped  # not the long identifiers of 0 and 5


def test_table_carries_bootstrap_classes_and_skips_quarto_reparsing():
    html = report.table(pd.DataFrame({"a": [0.5], "b": ["x"]})).to_html()
    tag = re.search(r"<table[^>]*>", html).group(0)
    assert 'class="table table-sm table-striped small"' in tag
    assert 'data-quarto-disable-processing="true"' in tag


def test_table_ids_are_reproducible_not_random():
    """Table HTML ids come from the content and the table's number, not pandas' random uuid:
    rendering the same frames in a fresh process gives byte-identical HTML, and two equal
    tables in one process get distinct ids."""
    import subprocess
    import sys

    code = ("import pandas as pd; from oraclegap import report; "
            "df = pd.DataFrame({'a': [0.1234, 2.0], 'b': ['x', 'y']}); "
            "print(report.table(df).to_html() + report.table(df).to_html())")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1]
    first, second = runs[0].split("</table>")[:2]
    id1, id2 = (re.search(r'id="T_([^"]+)"', part).group(1) for part in (first, second))
    assert id1 != id2 and id1.split("_")[1] == id2.split("_")[1]  # distinct numbers, the same content hash


def test_show_lines_keeps_filled_markdown_verbatim(capsys, monkeypatch):
    """Filled bullets with LaTeX braces are shown exactly, where show_md would refill them."""
    import builtins

    real_import = builtins.__import__

    def no_ipython(name, *a, **k):  # print instead of display, so the text can be read back
        if name.startswith("IPython"):
            raise ImportError(name)
        return real_import(name, *a, **k)

    lines = [report.md("- $O_{{\\mathrm{{repro}}}}$ = {x}", x=0.8371), "- p = < 0.001 stays as written"]
    assert lines[0] == "- $O_{\\mathrm{repro}}$ = 0.837"
    monkeypatch.setattr(builtins, "__import__", no_ipython)
    report.show_lines(lines)
    assert capsys.readouterr().out == "\n".join(lines) + "\n"
    with pytest.raises((KeyError, ValueError)):
        report.show_md("\n".join(lines))  # refilling reads the LaTeX braces as fields
    with pytest.raises(TypeError, match="sequence of strings"):
        report.show_lines("- one string")


def test_published_figures_lookup():
    f = report.published("000.T1.L_010")
    assert f.paper == "000" and f.text == "0.113" and f.value == pytest.approx(0.113)
    assert "2609.32996" in f.cite
    pct = report.published("000.C3.share_k16_lo")
    assert pct.text.endswith("%") and pct.value == pytest.approx(0.14)
    with pytest.raises(KeyError, match="no published figure"):
        report.published("000.nothing")
    tab = report.published_table()
    assert tab["key"].is_unique and set(tab["paper"]) <= {"000", "001", "002"}


def test_callouts_and_solutions(capsys):
    text = report.callout("body with {braces}", kind="tip", title="Solution", collapse=True)
    assert text.startswith('::: {.callout-tip collapse="true"}\n## Solution\n') and text.rstrip().endswith(":::")
    assert report.callout("x").startswith("::: {.callout-note}\nx")
    with pytest.raises(ValueError, match="kind"):
        report.callout("x", kind="sidebar")
    with pytest.raises(KeyError, match="needs a value"):
        report.solution("value {v}")


def test_path_words_reads_the_whole_path():
    ns = [25, 50, 100, 200, 400, 800]
    # the published shape: a low inside the grid, and the ends differ
    dip = [0.927, 0.90, 0.87, 0.84, 0.825, 0.844]
    out = report.path_words(ns, dip, tol=0.01)
    assert out.startswith("falls from 92.7% at $n = 25$ to a low of 82.5% at $n = 400$")
    assert out.endswith("rises to 84.4% at $n = 800$")
    # the same dip within tolerance is read from the ends only
    assert report.path_words(ns, dip, tol=0.05).startswith("falls as $n$ grows, from 92.7%")
    bump = [0.5, 0.6, 0.7, 0.55, 0.52, 0.5]
    assert "to a high of 70.0% at $n = 100$" in report.path_words(ns, bump, tol=0.02)
    assert report.path_words(ns, [0.9, 0.905, 0.9, 0.902, 0.9, 0.903], tol=0.01).startswith("stays level")
    assert report.path_words([1, 2], [0.1, 0.5], tol=0.0, var="k").startswith("rises as $k$ grows")
    for bad in (dict(xs=[2, 1], ys=[0, 1], tol=0.1), dict(xs=[1], ys=[0], tol=0.1),
                dict(xs=[1, 2], ys=[0, 1], tol=-1)):
        with pytest.raises(ValueError):
            report.path_words(**bad)


def test_fmt_one_value_one_text_whatever_its_binary_path():
    """The same count share printed from two computations (a ratio, a difference of coverages)
    reads the same: ties are decided on the decimal value, away from zero, not on float noise."""
    ratio, diff = 21 / 240, 0.9625 - 0.875
    assert ratio != diff and abs(ratio - diff) < 1e-15
    assert report.fmt(ratio) == report.fmt(diff) == "0.088"
    assert report.fmt(-ratio) == "-0.088" and report.fmt_signed(diff) == "+0.088"
    # away from ties it is ordinary rounding, and a tiny negative is a zero
    assert report.fmt(0.2471) == "0.247" and report.fmt(0.12351, 2) == "0.12"
    assert report.fmt(-0.0004) == "0.000" and report.fmt(1234.5678, 1) == "1234.6"


def test_table_code_spans_render_as_code_and_stay_escaped():
    """A claims table's `oraclegap.audit.run_audit` shows as code, not with its backticks; the
    cell stays HTML-escaped (a `<b>` inside is text)."""
    df = pd.DataFrame({"source": ["`oraclegap.audit.run_audit`; README", "`a <b>`"]})
    html = report.table(df).to_html().replace("\u200b", "")  # the break opportunities after "_"
    assert "`" not in html
    assert "<code>oraclegap.audit.run_audit</code>; README" in html
    assert "<code>a &lt;b&gt;</code>" in html


def test_table_keeps_math_whole_in_names_and_cells():
    """A symbol in a column name or a text cell ($G_b$ or \\(O_{\\mathrm{repro}}\\)) reaches the
    page as one \\(...\\) span MathJax typesets: no zero-width space inside it, its TeX
    unescaped except for HTML's own characters; the text around it still breaks after "_"."""
    df = pd.DataFrame({"g": [0.1, 0.2], "o": [0.5, 0.6], "p": [0.0002, 0.5],
                       "c": ["$e_D < L/D$ for embed_knn", "cost $1 to $2"]})
    names = {"g": "$G_b$", "o": r"\(O_{\mathrm{repro}}\) / $G_S$", "p": r"$p_{\mathrm{re}}$",
             "c": "claim_text"}
    html = report.table(df, columns=names).to_html()
    heads = re.findall(r"<th [^>]*>(.*?)</th>", html)
    assert heads == [r"\(G_b\)", "\\(O_{\\mathrm{repro}}\\) /\u200b \\(G_S\\)",
                     r"\(p_{\mathrm{re}}\)", "claim_\u200btext"]
    cells = re.findall(r"<td [^>]*>(.*?)</td>", html)
    assert "\\(e_D &lt; L/D\\) for embed_\u200bknn" in cells
    assert "cost $1 to $2" in cells  # dollars that are not math stay dollars
    assert "< 0.001" in cells  # a p-value column named in math still prints no 0.000
    # every span the page gets is whole: no break opportunity inside
    for span in re.findall(r"\\\((.*?)\\\)", html):
        assert "\u200b" not in span


def test_table_two_columns_under_one_name_are_both_formatted():
    """Two source columns mapped to one shown name ("released" twice) are both rounded."""
    df = pd.DataFrame({"a": [0.848], "b": [0.7222222]})
    html = report.table(df, columns={"a": "released", "b": "released"}).to_html()
    assert ">0.848<" in html and ">0.722<" in html and "0.722222" not in html


def test_table_floats_keep_their_digits_beside_text_columns():
    """A text column (formatted by hand for code spans) must not reset the float columns beside
    it to pandas' six decimals: the book's tables showed "0.920833" where "0.921" was meant."""
    df = pd.DataFrame({"tau": [0.05, 0.1], "best": [0.9208333, 0.8416667], "p": [0.0, 0.25],
                       "certificate": ["[0.020, 0.113]", "`x`"], "n": [3, 4]})
    cells = re.findall(r"<td[^>]*>(.*?)</td>", report.table(df).to_html())
    assert cells == ["0.050", "0.921", "< 0.001", "[0.020, 0.113]", "3",
                     "0.100", "0.842", "0.250", "<code>x</code>", "4"], cells
