"""The classroom kit lives in the rendered site: the page check reads the student edition and the
slides from ``_book/student/`` and ``_book/slides/`` (where ``make book`` puts them), the
standalone ``slides`` and ``build --student`` runs put their render there too, and
``make check-book`` checks what ``make book`` built without rebuilding it. A fake built site in
a temporary folder stands in for a render."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from oraclegap.book import kit as K

B = importlib.import_module("oraclegap.book.build")  # the package's `build` is the function
C = importlib.import_module("oraclegap.book.check")

ROOT = Path(__file__).resolve().parents[2]


def _site(root: Path, kit: dict | None) -> Path:
    """A built site: ``_book/`` with two pages, the kit's folders, and its build record (``kit``:
    what the build record says of the classroom kit)."""
    (root / "_quarto.yml").write_text("book:\n  title: T\n  chapters:\n    - index.qmd\n    - chapters/01_c.ipynb\n")
    book = root / "_book"
    for folder in (book, book / "student"):
        (folder / "chapters").mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text("<html><body>preface</body></html>")
        (folder / "chapters" / "01_c.html").write_text("<html><body>c</body></html>")
    (book / "slides").mkdir()
    (book / "slides" / "index.html").write_text("<html><body><section>deck</section></body></html>")
    files = sorted(p.relative_to(book).as_posix() for p in book.rglob("*") if p.is_file())
    record = {"renderer": "quarto", "pages": ["index.html", "chapters/01_c.html"], "render_key": "k",
              "files": files, "files_digest": B.files_digest(book, files), "kit": kit}
    (book / ".og-build.json").write_text(json.dumps(record))
    return book


def test_the_check_reads_the_kit_where_make_book_puts_it(tmp_path, monkeypatch, capsys):
    book = _site(tmp_path, {"student": "rendered", "slides": "reused", "pdf": None})
    # renders in their own folders (the kit's cache) are not what the site shows: never checked
    for own in ("_book-student", "_slides"):
        (tmp_path / own).mkdir()
        (tmp_path / own / "index.html").write_text("<html><body>an older render</body></html>")
    found, missing = C.kit_editions(tmp_path)
    assert missing == []
    assert [(part, folder, pages) for part, folder, pages in found] == [
        ("student", book / "student", ["index.html", "chapters/01_c.html"]),
        ("slides", book / "slides", ["index.html"])]

    checked = []

    def fake_check(root, folder, pages, browser, out, slides=False):
        checked.append((Path(folder).relative_to(root).as_posix(), list(pages), slides))
        return [f"{pages[0]}: a problem"]

    monkeypatch.setattr(C, "chromium", lambda: "/fake/chromium")
    monkeypatch.setattr(C, "_check_edition", fake_check)
    (book / "student" / "chapters" / "01_c.html").write_text(f'<div class="{"og-solution"}">x</div>')
    problems = C.check_pages(tmp_path)
    assert checked == [("_book", ["index.html", "chapters/01_c.html"], False),
                       ("_book/student", ["index.html", "chapters/01_c.html"], False),
                       ("_book/slides", ["index.html"], True)]
    assert problems == ["index.html: a problem", "_book/student/index.html: a problem",
                        "_book/student/chapters/01_c.html: shows an exercise solution",
                        "_book/slides/index.html: a problem"]
    assert "_book-student" not in capsys.readouterr().out


@pytest.mark.parametrize("kit, why", [
    ({"student": None, "slides": None, "pdf": None, "no_pdf_reason": "--only renders some chapters"},
     "--only renders some chapters"),
    ({"student": "rendered", "slides": "skipped", "skipped": {"slides": "no plan table"}}, "no plan table"),
    (None, "names no classroom kit"),
])
def test_a_kit_part_the_build_left_out_is_named_and_skipped(tmp_path, kit, why):
    _site(tmp_path, kit)
    found, missing = C.kit_editions(tmp_path)
    built = {part for part, _, _ in found}
    assert built == ({"student"} if kit and kit.get("student") else set())
    assert len(missing) == 2 - len(built) and all(why in line and "make book" in line for line in missing)
    assert any(line.startswith("_book/slides/: not built") for line in missing)


def test_a_standalone_render_is_put_into_the_site(tmp_path):
    book = _site(tmp_path, {"student": None, "slides": None, "pdf": None, "no_pdf_reason": "--no-kit"})
    with pytest.raises(ValueError, match="holds no rendered slides"):
        K.place_part(tmp_path, "slides")
    (tmp_path / "_slides" / "slide-images").mkdir(parents=True)
    (tmp_path / "_slides" / "index.html").write_text('<html><body><img src="slide-images/a.png"></body></html>')
    (tmp_path / "_slides" / "slide-images" / "a.png").write_bytes(b"png")
    (tmp_path / "_slides" / ".og-build.json").write_text("{}")
    assert K.place_part(tmp_path, "slides") == book / "slides"
    assert (book / "slides" / "slide-images" / "a.png").read_bytes() == b"png"
    assert not (book / "slides" / ".og-build.json").exists()
    record = json.loads((book / ".og-build.json").read_text())
    assert record["kit"]["slides"] == "rendered" and record["kit"]["student"] is None
    assert "slides/slide-images/a.png" in record["files"]
    assert record["files_digest"] == B.files_digest(book, record["files"])
    assert B.unowned_book_files(book) == []  # the next build still owns every file of _book/
    assert [part for part, _, _ in C.kit_editions(tmp_path)[0]] == ["slides"]
    with pytest.raises(ValueError, match="parts are"):
        K.place_part(tmp_path, "handouts")
    (book / ".og-build.json").unlink()
    assert K.place_part(tmp_path, "slides") is None  # no site to put it in: it stays in _slides/


def test_the_kit_key_is_the_one_a_build_records(tmp_path):
    """A standalone render records the key the build's kit compares, so make book reuses it."""
    from oraclegap.book.quarto import Quarto

    (tmp_path / "_quarto.yml").write_text("book:\n  title: T\n  chapters:\n    - index.qmd\n")
    (tmp_path / "index.qmd").write_text("# P\n")
    q = Quarto("/fake/quarto", "a stub", "1.7.34")
    assert K.kit_key(tmp_path, q, "slides", small=True) == B.render_key(
        tmp_path, q.describe() + ", revealjs slides", small=True, profile="slides")
    assert K.kit_key(tmp_path, q, "student", small=False) != K.kit_key(tmp_path, q, "slides", small=False)
    with pytest.raises(ValueError, match="parts are"):
        K.kit_key(tmp_path, q, "pdf", small=False)


def test_make_check_book_checks_without_rebuilding():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = make.split("\ncheck-book:", 1)[1].split("\n\n", 1)[0]
    commands = [line.strip() for line in recipe.splitlines()[1:] if line.startswith("\t")]
    assert commands == ["$(PY) -m oraclegap.book check"]
    assert not re.search(r"^check-book:.*\bbook\b", make, re.M)


def test_the_student_editions_links_to_the_kit_resolve_in_the_site(tmp_path):
    """A page links the kit as it sits at the top of _book/ (slides/index.html, oraclegap.pdf);
    the student edition's copy of it sits in _book/student/, so those links are rewritten, and
    the page check finds any link that still leads nowhere."""
    site = tmp_path / "_book"
    (site / "slides").mkdir(parents=True)
    (site / "slides" / "index.html").write_text("deck")
    (site / K.PDF_NAME).write_bytes(b"%PDF")
    student = site / "student"
    (student / "chapters").mkdir(parents=True)
    (student / "index.html").write_text('<a href="slides/index.html">s</a> <a href="oraclegap.pdf">p</a>')
    (student / "chapters" / "a.html").write_text(
        '<a href="../oraclegap.pdf#page=2">p</a> <a class="x" href="../student/index.html">me</a> '
        '<a href="../index.html">home</a> <a href="https://example.org/slides/index.html">w</a> '
        '<a href="#sec-a">here</a> <a href="./../slides/index.html">up one</a> <a href="b.html">gone</a>')
    assert C.broken_links(student / "index.html") == ["slides/index.html", "oraclegap.pdf"]
    assert C.broken_links(student / "chapters" / "a.html") == [
        "../oraclegap.pdf#page=2", "../student/index.html", "./../slides/index.html", "b.html"]
    assert K.point_student_links(student) == 2
    assert C.broken_links(student / "index.html") == []
    assert C.broken_links(student / "chapters" / "a.html") == ["b.html"]  # not the kit's: reported
    text = (student / "chapters" / "a.html").read_text()
    assert 'href="../../oraclegap.pdf#page=2"' in text and 'href="../index.html">me' in text
    assert 'href="../../slides/index.html">up one' in text and 'href="../index.html">home' in text
    assert 'href="https://example.org/slides/index.html"' in text
    assert K.point_student_links(student) == 0  # once is enough
    assert any("link b.html leads to no file" in p for p in C.page_problems(student / "chapters" / "a.html"))
