"""Readability limits of the executed chapters (oraclegap.book.readability): the appendix no longer
than the main line, long tables shown as a summary with a CSV download, figure text readable at
the width a page shows it; and the figure-text record that report.use_style stores with each PNG."""

from __future__ import annotations

import base64
import io
import json
import struct
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from oraclegap import book  # noqa: E402
from oraclegap.book import readability as RB  # noqa: E402
from oraclegap.report import style  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = book.chapter_sources(ROOT)


def _png(width: int, height: int = 10) -> str:
    """A base64 PNG header of the given size (enough for the width reader)."""
    ihdr = struct.pack(">II", width, height) + b"\x08\x02\x00\x00\x00"
    head = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr
    return base64.b64encode(head + b"\0" * 8).decode()


def _notebook(tmp_path, cells) -> Path:
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "99_test.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def _md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(source, *outputs):
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": list(outputs),
            "execution_count": 1}


def _display(mime, text, metadata=None):
    return {"output_type": "display_data", "data": {mime: text}, "metadata": metadata or {}}


def test_prose_words_count_prose_only():
    assert RB.prose_words("The gap is $\\hat L = 0.087$ at three thresholds.") == 7
    assert RB.prose_words("## A heading {#sec-x}\n\nTwo words.") == 2
    assert RB.prose_words("See `og.coverage(pool)` and [the table](../a.csv).") == 4
    assert RB.prose_words("```python\nx = 1 + 2\n```\nOne.") == 1
    folded = '::: {.callout-tip collapse="true"}\n## Solution\n\nmany words here\n:::\nKept.'
    assert RB.prose_words(folded) == 1
    with pytest.raises(TypeError):
        RB.prose_words(None)


def test_chapter_words_split_main_line_exercises_and_appendix(tmp_path):
    nb = _notebook(tmp_path, [
        _md("# Title\n\nOne two three.\n\n## Data and settings\n\nFour five."),
        _code("x = 1", _display("text/markdown", "Reading: six seven eight.")),
        _md("## Exercises\n\n1. An exercise here."),
        _md("## Appendix: more {#sec-x-appendix}\n\nA B C D.\n\n## Later section\n\nE F.")])
    w = RB.chapter_words(nb)
    assert (w.main, w.exercises, w.appendix) == (9, 4, 6)
    assert RB.readability_problems(nb) == []
    longer = _notebook(tmp_path, [_md("Main.\n\n## Appendix: x {#sec-y-appendix}\n\nOne two.")])
    assert RB.readability_problems(longer) == [
        "99_test.ipynb: the appendix has 2 words, more than the main line's 1"]


def _table(rows: int) -> str:
    body = "".join(f"<tr><td>{i}</td></tr>" for i in range(rows))
    return f"<table><thead><tr><th>a</th></tr></thead><tbody>{body}</tbody></table>"


def test_long_tables_need_a_csv_link_in_their_cell_or_the_next(tmp_path):
    nb = _notebook(tmp_path, [
        _code("#| label: tbl-short\nR.table(df)", _display("text/html", _table(25))),
        _code("#| label: tbl-long\nR.table(df)", _display("text/html", _table(26))),
        _code("#| label: tbl-linked\nR.table(df)", _display("text/html", _table(40))),
        _code("show_md(...)",
              _display("text/markdown", "All rows: [a CSV file](../downloads/x.csv).")),
        _code("#| label: tbl-nested\nR.table(df)",
              _display("text/html",
                       f"<table><tbody><tr><td>{_table(30)}</td></tr></tbody></table>"))])
    found = [(t.label, t.rows, t.csv_linked) for t in RB.long_tables(nb)]
    assert found == [("tbl-long", 26, False), ("tbl-linked", 40, True)]
    assert RB.readability_problems(nb) == [
        "99_test.ipynb: tbl-long shows 26 rows (limit 25) and links no CSV file"]
    with pytest.raises(ValueError, match="max_rows"):
        RB.long_tables(nb, 0)


def test_symbols_in_table_headers_must_be_math(tmp_path):
    """A header "G_b", "L̂ re-deal", "pᵣₑ" or "Δ_lower / G_S" prints a symbol as plain text; the
    same headers written as math (what report.table makes of $G_b$) pass, and so do words,
    identifiers in code and a row label that is not a symbol."""
    import pandas as pd

    from oraclegap import report

    plain = {"a": "G_b [95%]", "b": "L̂ re-deal", "c": "pᵣₑ", "d": "Δ_lower / G_S", "e": "pool"}
    math = {"a": "$G_b$ [95%]", "b": r"$\hat L$ re-deal", "c": r"$p_{\mathrm{re}}$",
            "d": r"$\Delta_{\mathrm{lower}} / G_S$", "e": "pool"}
    df = pd.DataFrame({k: [0.5] for k in plain})
    nb = _notebook(tmp_path, [
        _code("#| label: tbl-plain\nR.table(df)",
              _display("text/html", report.table(df, columns=plain).to_html())),
        _code("#| label: tbl-math\nR.table(df)",
              _display("text/html", report.table(df, columns=math).to_html())),
        _code("R.table(df)", _display("text/html", "<table><tr><th><code>p_re</code></th>"
                                                   "<th>p_holm_across_pools</th></tr></table>"))])
    assert RB.symbol_headers(nb) == [("tbl-plain", t) for t in list(plain.values())[:4]]
    assert RB.readability_problems(nb)[0] == ("99_test.ipynb: tbl-plain heads a column 'G_b [95%]', "
                                              "a symbol outside math (write it as the prose does, "
                                              "e.g. $G_b$)")


def test_figure_text_is_measured_at_the_width_the_page_shows():
    small = RB.FigureText("fig-a", 1600, 8.0, 110.0, "label")
    assert small.shown_px(800) == pytest.approx(8 * 110 / 72 / 2)  # halved into the column
    narrow = RB.FigureText("fig-b", 600, 8.0, 110.0, "label")
    assert narrow.shown_px(800) == pytest.approx(8 * 110 / 72)  # never enlarged
    assert RB.FigureText("fig-c", 600, None, None, "").shown_px() is None
    with pytest.raises(ValueError):
        small.shown_px(0)


def test_figures_without_a_record_or_with_small_text_are_problems(tmp_path):
    key = style.FIGURE_TEXT_KEY
    nb = _notebook(tmp_path, [
        _code("#| label: fig-ok", _display("image/png", _png(700), {"image/png": {key: {
            "pt": 9.0, "dpi": 110.0, "text": "ok"}}})),
        _code("#| label: fig-small", _display("image/png", _png(1415), {"image/png": {key: {
            "pt": 7.0, "dpi": 110.0, "text": "family"}}})),
        _code("#| label: fig-bare", _display("image/png", _png(500)))])
    figs = RB.figure_text(nb)
    assert [(f.label, f.width_px, f.pt) for f in figs] == [
        ("fig-ok", 700, 9.0), ("fig-small", 1415, 7.0), ("fig-bare", 500, None)]
    problems = RB.readability_problems(nb)
    assert len(problems) == 2 and "fig-small's text 'family' shows at 6.0 px" in problems[0]
    assert "fig-bare carries no record" in problems[1]


def test_bad_notebooks_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        RB.chapter_words(tmp_path / "missing.ipynb")
    (tmp_path / "x.ipynb").write_text("not json")
    with pytest.raises(ValueError, match="not a Jupyter notebook"):
        RB.figure_text(tmp_path / "x.ipynb")


def _print_png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight")
    return buf.getvalue()


def test_the_figure_record_lists_drawn_text_and_keeps_the_image():
    fig, (a, b) = plt.subplots(1, 2, figsize=(4, 2), dpi=100)
    a.set_title("title", fontsize=12)
    a.tick_params(labelsize=10)
    a.text(0.5, 0.5, "small", fontsize=6)
    b.text(0.5, 0.5, "hidden axis text is drawn", fontsize=8)
    b.set_axis_off()  # its tick labels (fontsize 5) are not drawn
    b.tick_params(labelsize=5)
    try:
        plain = _print_png(fig)
        data, meta = style.with_text_record(_print_png)(fig)
        assert data == plain  # the image is the formatter's, byte for byte
        assert meta == {style.FIGURE_TEXT_KEY: {"pt": 6.0, "dpi": 100.0, "text": "small"}}
        _, seen = style.drawn_text(lambda: _print_png(fig))
        assert min(pt for pt, _ in seen) == 6.0 and ("title" in {t for _, t in seen})
        empty = plt.figure()
        assert style.with_text_record(lambda f: None)(empty) is None
    finally:
        plt.close("all")
    with pytest.raises(TypeError):
        style.with_text_record(None)
    with pytest.raises(TypeError):
        style.drawn_text(3)


@pytest.mark.parametrize("src", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_executed_chapter_keeps_the_readability_limits(src):
    """In the executed chapter (chapters/NN_*.ipynb, written by the book build): the appendix has
    no more words than the main line, a table over 25 rows links its CSV download, and every
    figure's smallest text shows at 9 px or more in the 800-px text column."""
    nb = ROOT / "chapters" / f"{src.stem}.ipynb"
    if not nb.is_file():
        pytest.skip(f"{nb.relative_to(ROOT)} not executed yet "
                    f"(python -m oraclegap.book build --only {src.stem[:2]})")
    problems = RB.readability_problems(nb)
    assert not problems, "\n  ".join(problems)


def test_csv_download_writes_every_row_and_links_it(tmp_path):
    import pandas as pd

    from oraclegap import report as R

    df = pd.DataFrame({"test": [f"t{i}" for i in range(30)], "p": [i / 30 for i in range(30)]})
    link = R.csv_download(df, "02_seed_pool-some-tests", folder=tmp_path)
    assert link == "[a CSV file](../downloads/02_seed_pool-some-tests.csv)"
    back = pd.read_csv(tmp_path / "02_seed_pool-some-tests.csv")
    pd.testing.assert_frame_equal(back, df)
    assert R.csv_download(df, "05_routing_plateau-x", text="all rows", folder=tmp_path) \
        == "[all rows](../downloads/05_routing_plateau-x.csv)"
    for bad in ("seed_pool-tests", "02_seed_pool", "02_seed_pool-Tests", "../02_x-y"):
        with pytest.raises(ValueError, match="name must be"):
            R.csv_download(df, bad, folder=tmp_path)
    with pytest.raises(ValueError, match="text must be"):
        R.csv_download(df, "02_seed_pool-x", text="a]b", folder=tmp_path)
    with pytest.raises(TypeError):
        R.csv_download(df.to_dict(), "02_seed_pool-x", folder=tmp_path)


def test_sequential_colors_are_ordered_and_distinguishable():
    from matplotlib.colors import to_rgb

    from oraclegap import report as R

    for n in (2, 5, 9):
        cols = R.sequential_colors(n)
        assert len(cols) == n and len(set(cols)) == n
        # relative luminance rises step by step (dark to light), by a visible amount each step
        lum = [0.2126 * r + 0.7152 * g + 0.0722 * b for r, g, b in map(to_rgb, cols)]
        assert all(b - a > 0.04 for a, b in zip(lum, lum[1:], strict=False))
        assert max(lum) < 0.85  # the lightest step still shows on white
    assert R.sequential_colors(1) == R.sequential_colors(3)[:1]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            R.sequential_colors(bad)


def test_panel_grid_keeps_n_panels_in_rows_of_ncols():
    from oraclegap import report as R

    try:
        fig, axes = R.panel_grid(3, ncols=2, panel=(4, 3))
        assert len(axes) == 3 and len(fig.axes) == 3  # the fourth slot is removed
        assert tuple(fig.get_size_inches()) == (8.0, 6.0)
        fig, axes = R.panel_grid(1, ncols=2, panel=(4, 3), sharey=True)
        assert len(axes) == 1 and tuple(fig.get_size_inches()) == (4.0, 3.0)
    finally:
        plt.close("all")
    for kw in ({"n": 0}, {"n": 2, "ncols": 0}, {"n": 2, "panel": (0, 3)}):
        with pytest.raises(ValueError):
            R.panel_grid(**kw)


def test_csv_download_writes_into_the_projects_chapters_from_any_subfolder(tmp_path, monkeypatch):
    """A chapter executed from ``notebooks/`` (Jupyter runs a notebook in its own folder) writes
    its CSV into the project's ``chapters/``, where the build copies downloads from; outside a
    project the file goes to ``./chapters``."""
    import pandas as pd

    from oraclegap import report as R

    df = pd.DataFrame({"x": [1, 2]})
    proj = tmp_path / "proj"
    (proj / "notebooks").mkdir(parents=True)
    (proj / "_quarto.yml").write_text("project: {}\n", encoding="utf-8")
    monkeypatch.chdir(proj / "notebooks")
    R.csv_download(df, "06_pool_construction-real-datasets")
    assert (proj / "chapters" / "06_pool_construction-real-datasets.csv").is_file()
    assert not (proj / "notebooks" / "chapters").exists()
    bare = tmp_path / "elsewhere"
    bare.mkdir()
    monkeypatch.chdir(bare)
    if any((d / "_quarto.yml").is_file() for d in bare.resolve().parents):
        pytest.skip("tmp_path lies inside a Quarto project")
    R.csv_download(df, "06_pool_construction-real-datasets")
    assert (bare / "chapters" / "06_pool_construction-real-datasets.csv").is_file()
