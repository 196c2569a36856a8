"""The book build never deletes a file of yours in ``_book/``."""

from __future__ import annotations

import json

import pytest

_CHAPTER = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Owned

# %% tags=["parameters"]
SMALL = False

# %%
print(1 + 1, SMALL)
'''


@pytest.mark.notebooks
def test_book_build_never_deletes_a_file_of_yours_in_book(tmp_path, capsys, monkeypatch):
    """_book/ is rendered from scratch; a file no build (and no pdf run) wrote makes the build
    stop before any work, naming it, and leaves it in place."""
    from oraclegap import book
    from oraclegap.book import quarto as bq

    (tmp_path / "_quarto.yml").write_text("book:\n  title: T\n  chapters:\n    - index.qmd\n    - chapters/01_c.ipynb\n")
    (tmp_path / "index.qmd").write_text("# Preface {.unnumbered}\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_c.py").write_text(_CHAPTER)
    monkeypatch.setattr(bq, "find_quarto", lambda root, install=True: bq.Quarto(None, tried=("no quarto here (test)",)))
    book.build(tmp_path, small=True)
    b = tmp_path / "_book"
    assert "chapters/01_c.html" in json.loads((b / ".og-build.json").read_text())["files"]
    (b / "oraclegap.pdf").write_bytes(b"%PDF")  # what `python -m oraclegap.book pdf` writes: the build's own
    book.build(tmp_path, small=True)
    (b / "notes.md").write_text("mine")
    with pytest.raises(ValueError, match=r"holds files no build wrote \(notes.md\)"):
        book.build(tmp_path, small=True)
    assert (b / "notes.md").read_text() == "mine" and (b / "chapters" / "01_c.html").is_file()
    assert book.unowned_book_files(b) == ["notes.md"]
