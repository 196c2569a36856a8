"""A chapter's data downloads: CSV files its notebook writes beside the executed notebook
(``chapters/NN_name-*.csv``) are copied into ``_book/downloads/`` with its notebooks, while the
foot of the page still links the two notebooks only (the chapter's text links its data)."""

from __future__ import annotations

from oraclegap.book import buildline


def test_add_downloads_copies_a_chapters_csv_files(tmp_path):
    root = tmp_path
    (root / "notebooks").mkdir()
    (root / "chapters").mkdir()
    book = root / "_book"
    (book / "chapters").mkdir(parents=True)
    py, nb = root / "notebooks" / "02_x.py", root / "chapters" / "02_x.ipynb"
    py.write_text("# %%\n", encoding="utf-8")
    nb.write_text("{}", encoding="utf-8")
    (root / "chapters" / "02_x-bh-tests.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (root / "chapters" / "03_y-other.csv").write_text("c\n", encoding="utf-8")  # another chapter's
    (book / "chapters" / "02_x.html").write_text("<html><main><p>text</p></main></html>", encoding="utf-8")
    assert buildline.add_downloads(book, {"chapters/02_x.html": (py, nb)}) == 1
    dl = book / buildline.DOWNLOADS
    assert sorted(p.name for p in dl.iterdir()) == ["02_x-bh-tests.csv", "02_x.ipynb", "02_x.py"]
    assert (dl / "02_x-bh-tests.csv").read_text(encoding="utf-8") == "a,b\n1,2\n"
    page = (book / "chapters" / "02_x.html").read_text(encoding="utf-8")
    assert [h.rsplit("/", 1)[-1] for h in buildline.download_links(page)] == ["02_x.py", "02_x.ipynb"]


def test_the_student_stage_finds_the_csv_beside_the_source_tree(tmp_path):
    """The student edition passes executed notebooks from its stage (no CSV there): the CSV is
    taken from the project's own chapters/ folder, found from the notebook source."""
    root, stage = tmp_path / "root", tmp_path / "stage"
    for d in (root / "notebooks", root / "chapters", stage / "chapters", stage / "_book" / "chapters"):
        d.mkdir(parents=True)
    py, nb = root / "notebooks" / "02_x.py", stage / "chapters" / "02_x.ipynb"
    py.write_text("# %%\n", encoding="utf-8")
    nb.write_text("{}", encoding="utf-8")
    (root / "chapters" / "02_x-bh-tests.csv").write_text("a\n", encoding="utf-8")
    (stage / "_book" / "chapters" / "02_x.html").write_text("<main></main>", encoding="utf-8")
    buildline.add_downloads(stage / "_book", {"chapters/02_x.html": (py, nb)})
    assert (stage / "_book" / buildline.DOWNLOADS / "02_x-bh-tests.csv").is_file()
