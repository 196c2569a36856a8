"""The measure of a rendered chapter page (oraclegap.book.measure) on small HTML fixtures whose
counts are known by construction, and its use in the book check."""

from __future__ import annotations

from pathlib import Path

import pytest

from oraclegap.book import check
from oraclegap.book import measure as ME

ROOT = Path(__file__).resolve().parents[2]

# Quarto's shape: <main>, nested <section class="level2">, floats around tables, collapsed
# solutions, folded code, math spans, the foot lines; counted words are marked in the comments.
PAGE = """<!DOCTYPE html><html><body>
<nav id="TOC"><h2 id="toc-title">On this page</h2><ul><li>not counted nav words</li></ul></nav>
<main class="content" id="quarto-document-content">
<header id="title-block-header"><h1 class="title">A title</h1><p>subtitle not counted</p></header>
<p>One two three.</p>                                                     <!-- 3 -->
<section id="sec-one" class="level2"><h2 class="anchored">First part</h2>
<p>Four <em>five</em> six-seven 0.113 <span class="math inline">\\(\\hat L = 0.1\\)</span>.</p>  <!-- 5 -->
<ul><li>eight</li><li><p>nine ten</p></li></ul>                            <!-- 3 -->
<div id="tbl-a" class="cell quarto-float"><figure><figcaption>Table 1: caption words</figcaption>
<div><table><thead><tr><th>a</th><th colspan="2">b c</th></tr></thead>
<tbody><tr><td>1</td><td>2</td><td>3</td></tr></tbody></table></div></figure></div>
<details class="code-fold"><summary>Code</summary><pre><code><p>not prose</p></code></pre></details>
<div class="callout callout-tip"><div class="callout-header">Why</div>
<div class="callout-body"><h2>Callout heading</h2><p>eleven twelve</p></div></div>  <!-- 2 -->
</section>
<section id="sec-two" class="level2"><h2>Second part</h2>
<p>thirteen</p>                                                            <!-- 1 -->
<div class="og-solution callout"><div id="callout-1" class="callout-1-contents callout-collapse collapse">
<p>a folded solution is not counted</p>
<table><tr><td>1</td><td>2</td><td>3</td><td>4</td><td>5</td><td>6</td><td>7</td><td>8</td><td>9</td></tr></table>
</div></div>
<table id="plain"><tr><td>x</td><td><table><tr><td>1</td><td>2</td><td>3</td><td>4</td></tr></table></td></tr></table>
</section>
<section id="sec-seed-appendix" class="level2"><h2>Appendix: more</h2>
<p>appendix words here</p>
<section id="sec-deeper" class="level3"><h3>Deeper</h3><p>more appendix words</p>
<table><tr><td>1</td><td>2</td><td>3</td><td>4</td><td>5</td><td>6</td><td>7</td><td>8</td><td>9</td></tr></table>
</section></section>
<p class="og-downloads">Download this chapter: a b c</p>
<p class="og-build">built from commit x</p>
</main></body></html>"""


def test_measure_counts_the_main_line_prose_sections_and_tables():
    m = ME.measure_html(PAGE)
    assert m.words == 3 + 5 + 3 + 2 + 1
    assert m.sections == ("First part", "Second part")
    # the table in a collapsed solution is left out; a nested table belongs to its outer table
    assert m.tables == (("tbl-a", 3), ("plain", 2))
    assert m.appendix == "sec-seed-appendix"
    assert m.appendix_words == 6
    assert (m.n_sections, m.n_tables, m.widest) == (2, 2, 3)
    assert "14 words, 2 sections, 2 tables" in m.summary()


def test_without_an_appendix_everything_is_main_line():
    m = ME.measure_html(PAGE.replace('id="sec-seed-appendix"', 'id="sec-more"'))
    assert m.appendix is None and m.appendix_words == 0
    assert m.words == 14 + 6 and m.n_sections == 3
    assert ("table 3", 9) in m.tables
    assert ME.measure_problems("p.html", m) == ["p.html: table table 3 has 9 columns in the main line (over 8); "
                                                "split it, drop columns or move it to the appendix"]


def test_the_fallback_page_shape_heading_ids_and_no_main():
    # nbconvert's page: no <main>, no sections, ids on the headings
    html = ("<html><body><h2 id='a'>A</h2><p>one two</p><h2 id='b'>B</h2><ol><li>three</li></ol>"
            "<h2 id='seed-appendix'>Appendix</h2><p>four five six</p></body></html>")
    m = ME.measure_html(html)
    assert (m.words, m.sections, m.appendix, m.appendix_words) == (3, ("A", "B"), "seed-appendix", 3)
    assert m.notes  # says that the whole body was measured


def test_measure_problems_flag_long_main_lines_and_wide_tables():
    words = " ".join(["word"] * 120)
    cols = "".join(f"<th>c{i}</th>" for i in range(9))
    html = f"<main><p>{words}</p><div id='tbl-w'><table><tr>{cols}</tr></table></div></main>"
    m = ME.measure_html(html)
    assert m.words == 120 and m.tables == (("tbl-w", 9),)
    probs = ME.measure_problems("c.html", m, max_words=100, max_columns=8)
    assert len(probs) == 2 and "120 words (over 100)" in probs[0] and "tbl-w has 9 columns" in probs[1]
    assert ME.measure_problems("c.html", m, max_words=120, max_columns=9) == []


def test_measure_problems_flag_too_many_sections():
    body = "".join(f"<h2 id='s{i}'>S{i}</h2><p>w</p>" for i in range(9))
    m = ME.measure_html(f"<main>{body}<h2 id='x-appendix'>Appendix</h2><h2>T</h2></main>")
    assert m.n_sections == 9
    probs = ME.measure_problems("c.html", m, max_sections=8)
    assert len(probs) == 1 and "9 sections (over 8)" in probs[0]
    assert ME.measure_problems("c.html", m, max_sections=9) == []
    assert [p.split(";")[0] for p in ME.measure_problems("c.html", m)] == [
        "c.html: the main line has 9 sections (over 7)"]


def test_chapter_measures_reads_only_chapter_pages(tmp_path, capsys):
    (tmp_path / "chapters").mkdir()
    long = "<main><p>" + " ".join(["w"] * 7000) + "</p></main>"
    (tmp_path / "chapters" / "02_x.html").write_text(long, encoding="utf-8")
    (tmp_path / "index.html").write_text(long, encoding="utf-8")
    lines, problems = check.chapter_measures(tmp_path, ["index.html", "chapters/02_x.html", "chapters/03_gone.html"])
    assert len(lines) == 1 and "chapters/02_x.html: 7,000 words" in lines[0]
    assert len(problems) == 1 and problems[0].startswith("chapters/02_x.html: the main line has 7,000 words")


def test_bad_input():
    with pytest.raises(TypeError, match="html"):
        ME.measure_html(b"<p>x</p>")
    with pytest.raises(ValueError, match="path"):
        ME.measure_page("/nonexistent/page.html")
    assert ME.main([]) == 2


def test_measure_of_this_checkouts_chapter_02_page_when_rendered():
    page = ROOT / "_book" / "chapters" / "02_seed_pool.html"
    if not page.is_file():
        pytest.skip(f"{page} is not rendered (run `python -m oraclegap.book build --small --only 02`)")
    m = ME.measure_page(page)
    assert m.appendix is not None and "appendix" in m.appendix
    assert m.words <= ME.MAX_WORDS and m.widest <= ME.MAX_COLUMNS, m.summary()
