"""The inventory page of the three papers' numbered results (``papers.qmd`` from
``data/paper/inventory.csv``): nothing a paper mentions is left without a row, and every label,
test and page the rows cite exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oraclegap.book import inventory as inv
from oraclegap.book.structure import quarto_pages

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def df():
    return inv.load_inventory(ROOT)


def _sources() -> str:
    files = sorted((ROOT / "notebooks").glob("*.py")) + sorted(ROOT.glob("*.qmd"))
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def test_paper_items_normalises_the_ways_papers_name_things():
    text = "see Fig. 2 and Figures 3, Thm. 1, Theorem~4, Table A11 and Tables 2; Cor. 3, Lemma 4, Alg. 1."
    assert inv.paper_items(text) == ["Table 2", "Table A11", "Figure 2", "Figure 3", "Theorem 1", "Theorem 4",
                                     "Corollary 3", "Lemma 4", "Algorithm 1"]
    assert inv.paper_items("Table\u00a012 and Proposition 3.") == ["Table 12", "Proposition 3"]
    with pytest.raises(TypeError, match="string"):
        inv.paper_items(None)


def test_paper_items_read_roman_numerals_short_forms_lists_and_ranges():
    text = ("[Table V; Table VII] and Table III, Lem. 2 and Cor. 1 / Corollary 2; Props. 1\u20133 and "
            "Thms. 1-4; Figures 3, 4 and 6; see Thm. 2.2 of a cited book; Tables IV-VI.")
    assert inv.paper_items(text) == [
        "Table III", "Table IV", "Table V", "Table VI", "Table VII", "Figure 3", "Figure 4", "Figure 6",
        "Theorem 1", "Theorem 2", "Theorem 3", "Theorem 4", "Proposition 1", "Proposition 2", "Proposition 3",
        "Corollary 1", "Corollary 2", "Lemma 2"]
    assert "Theorem 2" not in inv.paper_items("see Thm. 2.2 of the book")  # a cited book's numbering


def test_tables_and_figures_complete_their_series_and_appendices_are_read_by_section():
    assert inv.complete_series(["Table A3", "Table 2", "Table II", "Figure 2", "Lemma 4"]) == [
        "Table 1", "Table 2", "Table I", "Table II", "Table A1", "Table A2", "Table A3", "Figure 1", "Figure 2",
        "Lemma 4"]  # lemmas may share a counter with theorems: no gaps filled
    text = ("## 7  Conclusion\n\n### B.1  Training\n\n### B.2  Routers\n\nAppendix C Cost-Aware Extension\n"
            "Appendix M Proof Details\nM.1 A Hoeffding alternative\nM.2 Finite discrete signals\n")
    assert inv.appendix_sections(text) == ["App. B.1", "App. B.2", "App. C", "App. M.1", "App. M.2"]
    assert inv.expected_items(text + "Table A2.") == ["Table A1", "Table A2", "App. B.1", "App. B.2", "App. C",
                                                      "App. M.1", "App. M.2"]


def _paper_texts(shared_dir):
    papers = shared_dir / "papers"
    if not papers.is_dir():
        pytest.skip(f"no papers folder at {papers}")
    out = {}
    for paper in inv.PAPERS:
        files = sorted(papers.glob(f"{paper}_*.txt"))
        assert files, f"no text of paper {paper} in {papers}"
        out[paper] = files[0].read_text(encoding="utf-8")
    return out


def _missing(df, texts):
    out = {}
    for paper, text in texts.items():
        items = set(inv.expected_items(text))
        rows = set(df.loc[df["paper"] == paper, "item"])
        out[paper] = (sorted(items - rows, key=inv._sort_key), sorted(rows - items, key=inv._sort_key))
    return out


def test_every_numbered_item_and_appendix_section_of_the_papers_has_a_row(df, shared_dir):
    for paper, (missing, extra) in _missing(df, _paper_texts(shared_dir)).items():
        assert not missing, f"paper {paper}: items without a row: {missing}"
        assert not extra, f"paper {paper}: rows for items the paper does not have: {extra}"


def test_the_completeness_check_sees_what_a_digits_only_reading_missed(df, shared_dir):
    """Rows the older reading (Arabic numerals; no "Lem.", no series, no appendix sections) could not
    ask for: dropping any of them makes the check fail."""
    texts = _paper_texts(shared_dir)
    for paper, item in (("001", "Table V"), ("001", "Table VII"), ("001", "Lemma 2"), ("000", "Table A10"),
                        ("002", "App. M.1"), ("002", "App. C"), ("002", "App. J"), ("000", "App. B.1")):
        thin = df[~((df["paper"] == paper) & (df["item"] == item))]
        assert item in _missing(thin, texts)[paper][0], (paper, item)


def test_every_cited_section_and_cell_label_exists(df):
    text = _sources()
    sections = set(re.findall(r"\{#(sec-[\w-]+)", text))
    cells = set(re.findall(r"^#\| label: (\S+)", text, flags=re.M))
    missing_sec = sorted({s for s in df["section"] if s and s not in sections})
    missing_cell = sorted({c for c in df["cell"] if c and c not in cells})
    assert not missing_sec, f"section labels cited in the inventory but absent from the book: {missing_sec}"
    assert not missing_cell, f"cell labels cited in the inventory but absent from the notebooks: {missing_cell}"
    chapters = {p.stem[:2] for p in (ROOT / "notebooks").glob("0*.py")}
    assert set(df["chapter"]) <= chapters


def test_every_cited_test_exists(df):
    for ref in df.loc[df["test"] != "", "test"]:
        path, name = ref.split("::")
        src = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {re.escape(name)}\(", src, flags=re.M), f"{ref} does not exist"


def test_rows_say_how_and_on_what(df):
    assert (df["what"] != "").all() and (df["data"] != "").all() and (df["check"] != "").all()
    checked = df[df["status"].isin(["matches", "partly", "differs"])]
    assert len(checked) >= 20


def test_page_is_current_and_listed_after_estimands():
    assert (ROOT / inv.INVENTORY_PAGE).read_text(encoding="utf-8") == inv.inventory_page(ROOT)
    files = [p.file for p in quarto_pages(ROOT)]
    assert files[files.index("estimands.qmd") + 1] == inv.INVENTORY_PAGE
    assert "{#sec-papers .unnumbered}" in (ROOT / inv.INVENTORY_PAGE).read_text(encoding="utf-8")


def test_bad_inventory_is_refused(tmp_path):
    (tmp_path / "data" / "paper").mkdir(parents=True)
    src = (ROOT / inv.INVENTORY_CSV).read_text(encoding="utf-8").splitlines()
    (tmp_path / inv.INVENTORY_CSV).write_text("\n".join(src[:2] + [src[1]]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="duplicate"):
        inv.load_inventory(tmp_path)
    (tmp_path / inv.INVENTORY_CSV).write_text(src[0] + "\n" + src[1].replace(",illustration,", ",fine,") + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="status"):
        inv.load_inventory(tmp_path)


_ANALOG = re.compile(r"\b(Table|Figure) (A?\d+|[IVX]+) analog\b")


def _analog_captions() -> dict[str, tuple[str, set[str]]]:
    """Every table or figure cell whose caption calls itself a paper item's analog ("Table 10
    analog"): label -> (chapter, the items it claims)."""
    import jupytext

    from oraclegap.book.structure import cell_options

    out = {}
    for src in sorted((ROOT / "notebooks").glob("0*.py")):
        for cell in jupytext.read(src).cells:
            if cell.cell_type != "code":
                continue
            opts, _ = cell_options(cell.source)
            cap = opts.get("tbl-cap") or opts.get("fig-cap") or ""
            claims = {f"{k} {n}" for k, n in _ANALOG.findall(cap)}
            if claims and "label" in opts:
                out[opts["label"]] = (src.stem[:2], claims)
    return out


def test_a_table_or_figure_row_cites_the_cell_that_is_its_analog(df):
    """A row for a paper's Table N in a chapter whose Table N analog is a captioned cell cites that
    cell, and a row never cites a cell that calls itself the analog of another item of its kind."""
    analogs = _analog_captions()
    assert analogs, "no caption calls itself a paper item's analog: the check reads nothing"
    wrong = []
    for r in df.itertuples():
        kind = r.item.split(" ")[0]
        if kind not in ("Table", "Figure"):
            continue
        own = {lab for lab, (ch, claims) in analogs.items() if ch == r.chapter and r.item in claims}
        if own and r.cell not in own:
            wrong.append(f"{r.paper} {r.item} cites {r.cell or 'no cell'}, its analog is {sorted(own)}")
        claims = {c for c in analogs.get(r.cell, ("", set()))[1] if c.startswith(kind)}
        if claims and r.item not in claims:
            wrong.append(f"{r.paper} {r.item} cites {r.cell}, the analog of {sorted(claims)}")
    assert not wrong, "; ".join(wrong)
