"""The inventory page of the three papers' numbered results (``papers.qmd`` from
``data/paper/inventory.csv``): nothing a paper mentions is left without a row, and every label,
test and page the rows cite exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oraclegap.book import inventory as inv
from oraclegap.book.structure import quarto_pages

ROOT = Path(__file__).resolve().parents[1]


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


def test_every_numbered_item_of_the_papers_has_a_row(df, shared_dir):
    papers = shared_dir / "papers"
    if not papers.is_dir():
        pytest.skip(f"no papers folder at {papers}")
    for paper in inv.PAPERS:
        files = sorted(papers.glob(f"{paper}_*.txt"))
        assert files, f"no text of paper {paper} in {papers}"
        items = set(inv.paper_items(files[0].read_text(encoding="utf-8")))
        rows = set(df.loc[df["paper"] == paper, "item"])
        assert not items - rows, f"paper {paper}: items without a row: {sorted(items - rows)}"
        assert not rows - items, f"paper {paper}: rows for items the paper does not mention: {sorted(rows - items)}"


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
