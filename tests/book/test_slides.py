"""The class deck (oraclegap.book.slides): it follows the instructors' 90-minute plan block by
block, in order, with at most MAX_WORDS words of prose per slide and tables no larger than the
table limits, all text taken from the executed chapters. The Quarto render of the deck is in
tests/book/test_quarto.py."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from oraclegap.book import slides as S

ROOT = Path(__file__).resolve().parents[2]
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


def _md(text):
    return {"output_type": "display_data", "data": {"text/markdown": text}, "metadata": {}}


def _fig(label, caption, reading):
    return {"cell_type": "code", "source": f'#| label: {label}\n#| fig-cap: "{caption}"\nplot()',
            "outputs": [{"output_type": "display_data", "data": {"image/png": PNG}}, _md(reading)]}


def _chapter(value: float) -> dict:
    """A chapter whose readings carry a computed number (``value``) in every section."""
    return {"cells": [
        {"cell_type": "markdown", "source": "# A chapter {#sec-a}\n\nDoes the gap survive?\n"},
        {"cell_type": "markdown", "source": "## Noise {#sec-noise}\n\nWhat noise alone makes.\n"},
        {"cell_type": "code", "source": "grid()", "outputs": [_md("The grid: 8 members and 20,000 draws per cell.")]},
        _fig("fig-noise", "The null draws. Grey band: 90%.", f"Reading: the gap reads {value:.3f} under the null."),
        {"cell_type": "code", "source": "show()", "outputs": [_md(f"The excess is {value / 2:.3f}. " + "Long words " * 40 + ".")]},
        {"cell_type": "markdown", "source": "### A subsection\n\nMore."},
        _fig("fig-sub", "A subsection figure.", "Reading: inside the noise section."),
        {"cell_type": "markdown", "source": "## Signal {#sec-signal}\n\nWhat a real gap adds."},
        {"cell_type": "code", "source": "#| label: tbl-signal\n#| tbl-cap: \"Signal table.\"\nshow()",
         "outputs": [_md("| a |\n|---|\n| 1 |")]},
        {"cell_type": "code", "source": "x()", "outputs": [_md(f"Reading: the signal is {value * 3:.3f}; it is certified.")]},
        {"cell_type": "markdown", "source": "## Takeaways"},
        {"cell_type": "code", "source": "t()", "outputs": [_md(
            f"- Noise alone makes a gap of {value:.3f} under the null.\n"
            f"- The signal of {value * 3:.3f} is certified,\n  well above the noise.\n"
            "- a takeaway wall " + "word " * 300)]},
        {"cell_type": "markdown", "source": "## Exercises\n\n1. Try."},
        {"cell_type": "code", "source": "sol()", "outputs": [
            _md('::: {.callout-tip .og-solution collapse="true"}\n## Solution\n\n1. The answer is 77.7.\n:::\n')]},
    ]}


PLAN = """# For instructors

## A 90-minute plan

| minutes | what | where |
|---|---|---|
| 0-30 | Signal first; a long title that goes on | @sec-signal |
| 30-60 | Then noise, with its figures | @sec-noise, [intro page](intro.qmd) |
| 60-90 | The table on its own | @tbl-signal |

## Something else

| a | b | c |
|---|---|---|
| 1 | 2 | 3 |
"""


def _project(tmp_path: Path, value: float = 0.123) -> Path:
    (tmp_path / "_quarto.yml").write_text("project:\n  type: book\nbook:\n  title: T\n  chapters:\n"
                                          "    - index.qmd\n    - intro.qmd\n    - chapters/01_a.ipynb\n")
    (tmp_path / "index.qmd").write_text("# Preface {.unnumbered}\n")
    (tmp_path / "intro.qmd").write_text("# Intro {.unnumbered}\n\nThe intro page says one thing. And one more.\n")
    (tmp_path / "instructors.qmd").write_text(PLAN)
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "01_a.ipynb").write_text(json.dumps(_chapter(value)))
    return tmp_path


def test_plan_blocks_read_the_plan_table_in_order(tmp_path):
    blocks = S.plan_blocks(_project(tmp_path))
    assert [b.minutes for b in blocks] == ["0-30", "30-60", "60-90"]
    assert blocks[0].refs == ("sec-signal",) and blocks[1].refs == ("sec-noise",)
    assert blocks[1].pages == (("intro page", "intro.qmd"),) and blocks[2].refs == ("tbl-signal",)


def test_plan_blocks_refuse_a_page_without_a_plan(tmp_path):
    with pytest.raises(ValueError, match="instructors.qmd is missing"):
        S.plan_blocks(tmp_path)
    (tmp_path / "instructors.qmd").write_text("# For instructors\n\nNo plan.\n")
    with pytest.raises(ValueError, match="A 90-minute plan"):
        S.plan_blocks(tmp_path)
    (tmp_path / "instructors.qmd").write_text("## A 90-minute plan\n\nProse only.\n")
    with pytest.raises(ValueError, match="no table"):
        S.plan_blocks(tmp_path)


def test_sections_reach_to_the_next_heading_of_their_level():
    items = S.chapter_items(_chapter(0.5))
    noise = S.section_items(items, "sec-noise")
    assert [i.ident for i in noise if i.kind == "fig"] == ["fig-noise", "fig-sub"]  # the subsection belongs to it
    assert not any(i.kind == "tbl" for i in noise)
    assert S.readings_after(items, "fig-noise")[0].startswith("Reading: the gap reads 0.500")
    assert S.readings_after(items, "tbl-signal") == ["Reading: the signal is 1.500; it is certified."]
    assert S.section_items(items, "sec-none") == []
    assert not any("77.7" in i.text for i in items)  # solutions never count


def test_findings_are_the_takeaway_bullets():
    found = S.chapter_findings(S.chapter_items(_chapter(0.5)))
    assert found[:2] == ["Noise alone makes a gap of 0.500 under the null.",
                         "The signal of 1.500 is certified, well above the noise."]
    assert len(found) == 3 and found[2].startswith("a takeaway wall")
    assert S.chapter_findings(S.chapter_items({"cells": []})) == []
    # shared computed values count, round settings do not; words count by their weight
    assert S.finding_score("a gap of 0.123 at tau 0.10", "reads 0.123 at 0.10 and 10%")[0] == 1
    assert S.finding_score("82.5% coverage", "down to 82.5% coverage", {"coverage": 2.0}) == (1, 2.0)
    assert S.finding_score("nothing shared", "at all") == (0, 0)


def test_each_takeaway_states_a_finding_of_its_chapter(tmp_path):
    root = _project(tmp_path, value=0.123)
    deck = {b.minutes: sl for b, sl in S.deck_slides(root, tmp_path / "img")}
    take = {m: next((s for s in sl if s.startswith("## Takeaway")), "") for m, sl in deck.items()}
    assert "The signal of 0.369 is certified, well above the noise." in take["0-30"]
    assert "Noise alone makes a gap of 0.123 under the null." in take["30-60"]
    assert "The grid" not in take["30-60"]  # a settings sentence is no finding
    # each finding serves one block: the table's block keeps its own reading, on the table's
    # slide, and no takeaway repeats it
    table = next(s for s in deck["60-90"] if s.startswith("## Signal table"))
    assert "The signal is 0.369; it is certified." in table and "well above" not in take["60-90"]
    assert "The signal is 0.369" not in take["60-90"]
    blocks = S.plan_blocks(root)
    chapters = {"01_a": S.chapter_items(_chapter(0.123))}
    places = [S._places(chapters, b.refs) for b in blocks]
    assert S.block_findings(blocks, places, chapters)[2] is None
    assert S.block_findings(blocks, [[] for _ in blocks], chapters) == [None, None, None]


def _heads(deck_blocks):
    return [slides[0].splitlines()[0] for _, slides in deck_blocks]


def test_deck_follows_the_plan_with_short_computed_slides(tmp_path):
    root = _project(tmp_path, value=0.123)
    deck = S.deck_slides(root, tmp_path / "stage" / "img")
    assert [b.minutes for b, _ in deck] == [b.minutes for b in S.plan_blocks(root)]
    assert [h.split(" min:")[0] for h in _heads(deck)] == ["# 0-30", "# 30-60", "# 60-90"]
    for _, slides in deck:
        for slide in slides:
            assert S.slide_words(slide) <= S.MAX_WORDS and S.table_fits(slide), slide
    text = "\n".join(s for _, sl in deck for s in sl)
    assert "0.369" in text and "0.123" in text  # the readings' computed numbers, from the chapter
    assert "77.7" not in text and "takeaway wall" not in text  # no solution, no takeaway wall
    assert "Long words" not in text  # a reading too long for a slide is passed over, not cut mid-sentence
    noise = next(sl for b, sl in deck if b.minutes == "30-60")
    assert noise[1].startswith("## The null draws") and "The gap reads 0.123 under the null." in noise[1]
    # a front page's opening introduces a block only when the block draws on no chapter section
    assert "The intro page says one thing." not in noise[0]
    (root / "instructors.qmd").write_text(PLAN.replace("@sec-noise, [intro page]", "[intro page]"))
    alone = next(sl for b, sl in S.deck_slides(root, tmp_path / "stage" / "img") if b.minutes == "30-60")
    assert "The intro page says one thing." in alone[0]
    assert (tmp_path / "stage" / "img" / "01_a-fig-noise.png").read_bytes().startswith(b"\x89PNG")
    (tmp_path / "b").mkdir()
    other = S.deck_slides(_project(tmp_path / "b", value=0.2), tmp_path / "img2")
    assert "0.600" in "\n".join(s for _, sl in other for s in sl)  # computed per run, not typed


def _shows(slide: str) -> bool:
    """A slide projects a figure or a table."""
    return "![](" in slide or bool(re.search(r"^\|.*\|$", slide, re.M))


def test_tables_are_projected_as_printed_with_their_reading(tmp_path):
    root = _project(tmp_path, value=0.123)
    (root / "intro.qmd").write_text("# Intro {.unnumbered}\n\nThe intro page says one thing.\n\n"
                                    "## The gaps\n\n| gap | where |\n|---|---|\n"
                                    "| $L$ | [the signal](x.qmd), @sec-signal and @sec-gone |\n\nAfter.\n")
    deck = {b.minutes: sl for b, sl in S.deck_slides(root, tmp_path / "img")}
    assert all(any(_shows(s) for s in slides) for slides in deck.values()), deck
    named = [s for s in deck["60-90"] if s.startswith("## Signal table")]
    assert len(named) == 1 and "| a |\n|---|\n| 1 |" in named[0]
    assert "The signal is 0.369; it is certified." in named[0]
    # a section with no figure projects its tables
    assert any(s.startswith("## Signal table") for s in deck["0-30"])
    page = next(s for s in deck["30-60"] if s.startswith("## The gaps (Intro)"))
    assert "| $L$ | the signal, “Signal” and in the book |" in page
    assert S.slide_words(page) == 3  # the table is projected, not counted as prose
    html = ('<style>#T td {x: 1}</style><table><thead><tr><th>τ</th><th>\\(\\hat L\\)</th></tr></thead>'
            '<tbody><tr><td>0.050</td><td>a|b <code>x_y</code>\u200b</td></tr></tbody></table>')
    assert S.table_markdown(html) == "| τ | $\\hat L$ |\n|---|---|\n| 0.050 | a\\|b `x_y` |"
    assert S.table_markdown("<p>no table</p>") == ""
    assert S.page_table(root, "index.qmd") == ("", "")


def _wide_table(rows: int) -> str:
    """A page table like the decision page's verdict table: a short key, two columns of long
    prose, a short last column."""
    long = "a sentence of prose far too long to read off a slide from the back of the room"
    body = [f"| `code-{i}` | {long} | {long}, again | right {i} of 9 |" for i in range(rows)]
    head = "| verdict | what it means | what to do next | in the study |\n|---|---|---|---|"
    return "\n".join([head, *body])


def test_a_large_table_is_projected_by_the_columns_that_fit_with_a_link(tmp_path):
    small = "| a | b |\n|---|---|\n| 1 | 2 |"
    assert S.table_fits(small) and S.compact_table(small) == (small, [], 0)
    shown, cols, rows = S.compact_table(_wide_table(4))
    assert cols == ["what it means", "what to do next"] and rows == 0 and S.table_fits(shown)
    assert S.table_cells(shown)[0] == ["verdict", "in the study"] and len(S.table_cells(shown)) == 5
    assert not S.table_fits(_wide_table(4))
    # too many rows: the first MAX_TABLE_ROWS are shown, and the slide says how many are not
    shown, _, rows = S.compact_table(_wide_table(S.MAX_TABLE_ROWS + 3))
    assert rows == 3 and len(S.table_cells(shown)) == S.MAX_TABLE_ROWS + 1
    # a key column too long for a slide, or no second column that fits: no table slide
    assert S.compact_table("| " + "w " * 20 + "| b |\n|---|---|\n| 1 | 2 |")[0] == ""
    assert S.compact_table("| a | " + "w " * 20 + "|\n|---|---|\n| 1 | 2 |")[0] == ""
    root = _project(tmp_path)
    (root / "intro.qmd").write_text("# Intro {.unnumbered}\n\nThe intro page.\n\n## Verdicts\n\n"
                                    + _wide_table(9) + "\n")
    deck = {b.minutes: sl for b, sl in S.deck_slides(root, tmp_path / "img")}
    page = next(s for s in deck["30-60"] if s.startswith("## Verdicts (Intro)"))
    assert S.table_fits(page) and S.slide_words(page) <= S.MAX_WORDS
    assert "“what it means” and “what to do next”" in page
    assert "[in the book](../intro.html)" in page


def test_the_instructors_page_states_the_limits_the_deck_keeps():
    text = " ".join((ROOT / S.PLAN_PAGE).read_text(encoding="utf-8").split())
    assert f"at most {S.MAX_WORDS} words of prose a slide" in text
    assert (f"a table at most {S.MAX_TABLE_ROWS} rows by {S.MAX_TABLE_COLUMNS} columns, "
            f"{S.MAX_CELL_WORDS} words a cell and {S.MAX_TABLE_WORDS} words in all") in text


def test_slide_deck_front_matter_and_order(tmp_path):
    deck = S.slide_deck(_project(tmp_path), tmp_path / "stage" / "img")
    assert deck.startswith('---\ntitle: "T"') and "revealjs" in deck
    heads = re.findall(r"^# (\S+) min:", deck, re.M)
    assert heads == ["0-30", "30-60", "60-90"]


def test_short_text_keeps_whole_sentences_within_the_limit():
    text = "First sentence has five words. Second one with $x = 1.5$ here. Third."
    assert S.short_text(text, 5) == "First sentence has five words."
    assert S.short_text(text, 12) == "First sentence has five words. Second one with $x = 1.5$ here."
    assert S.short_text("One $a. B$ two. Next.", 4) == "One $a. B$ two."  # no split inside math
    assert S.short_text("A long first part; then more words here.", 6) == "A long first part …"
    assert S.short_text("Too long for it.", 2, whole=True) == ""
    rng = np.random.default_rng(7)
    vocab = ["alpha", "$x$", "(b)", "gap.", "Noise", "0.5;", "curse:", "[1, 2]"]
    for _ in range(300):
        words = rng.choice(vocab, size=int(rng.integers(1, 80)))
        limit = int(rng.integers(2, 40))
        out = S.short_text(" ".join(words), limit)
        assert len(out.split()) <= limit and out.count("$") % 2 == 0


@pytest.mark.skipif(not (ROOT / "chapters" / "01_theory_checks.ipynb").is_file(),
                    reason="the book's chapters are not executed here (make book)")
def test_the_books_deck_follows_its_plan(tmp_path):
    deck = S.deck_slides(ROOT, tmp_path / "img")
    assert [b.minutes for b, _ in deck] == [b.minutes for b in S.plan_blocks(ROOT)]
    for block, slides in deck:
        assert slides[0].startswith(f"# {block.minutes} min:")
        assert all(S.slide_words(s) <= S.MAX_WORDS for s in slides), block.minutes
        assert all(S.table_fits(s) for s in slides), block.minutes  # every table is readable
    assert sum(s.count("![](") for _, slides in deck for s in slides) >= 3  # the chapters' figures are shown
    bare = [block.minutes for block, slides in deck if not any(_shows(s) for s in slides)]
    assert not bare, f"blocks that project no figure or table: {bare}"
    chapters = {p.file.split("/")[-1].removesuffix(".ipynb"): S.chapter_items(json.loads((ROOT / p.file).read_text()))
                for p in S.quarto_pages(ROOT) if p.is_chapter and (ROOT / p.file).is_file()}
    for block, slides in deck:
        places = S._places(chapters, block.refs)
        if not places:
            continue
        # the takeaway is a finding the block's chapters state in their takeaways, whole, with
        # its cross-references written out
        names = S.ref_names(chapters)
        findings = {S._plain(S.resolve_refs(f, names)) for p in places for f in S.chapter_findings(chapters[p.chapter])}
        take = [s.removeprefix("## Takeaway\n\n") for s in slides if s.startswith("## Takeaway")]
        assert len(take) == 1 and S._plain(take[0]) in findings, block.minutes
        assert "(in the book)" not in take[0], block.minutes


def test_a_shortened_title_ends_on_a_word_that_carries_meaning():
    title = S._title("Null distributions of the plug-in oracle gap at the threshold on the lab seed pool "
                     "and more words here", chars=50)
    assert title.endswith(" …") and title.split()[-2].lower() not in S._DANGLING
    assert len(title) <= 50


def test_a_takeaway_names_the_places_it_cites_and_is_never_cut(tmp_path):
    chapter = _chapter(0.123)
    take = chapter["cells"][-3]["outputs"][0]["data"]["text/markdown"]
    chapter["cells"][-3]["outputs"][0]["data"]["text/markdown"] = take.replace(
        "under the null.", "under the null; @sec-signal and @sec-a say more.").replace(
        "- The signal of", "- The signal is large. " + "But it holds only on this run, word " * 12 + ". The signal of")
    items = S.chapter_items(chapter)
    names = S.ref_names({"01_a": items})
    assert names["sec-a"] == "chapter 1" and names["sec-signal"] == "“Signal”"
    found = [S.resolve_refs(f, names) for f in S.chapter_findings(items)]
    assert found[0].endswith("“Signal” and chapter 1 say more.")
    blocks = [S.PlanBlock("0-30", "the signal", "@sec-signal", ("sec-signal",), ())]
    places = [S._places({"01_a": items}, b.refs) for b in blocks]
    # the signal finding is too long to show whole: its first sentence alone would drop the "But"
    chosen = S.block_findings(blocks, places, {"01_a": items})[0]
    assert chosen is None or not chosen.startswith("The signal is large")


def test_a_front_pages_words_about_itself_stay_off_the_slides():
    assert S._SELF_REFERENCE.search("This page lists them.") and S._SELF_REFERENCE.search("One page for you.")
    assert not S._SELF_REFERENCE.search("The page of the chapter's table shows 0.12.")
