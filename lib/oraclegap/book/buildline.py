"""The build line at the foot of every rendered page (:mod:`oraclegap._buildinfo`).

:func:`stamp_pages` writes it into each HTML page of the rendered book (Quarto or the nbconvert
fallback), at the end of the page's ``<main>`` (before ``</body>`` where a page has none), as
``<p class="og-build">``; a page stamped before gets its line replaced, not doubled.
:func:`page_build_line` reads it back (``make check-book`` requires one on every page).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from .._io import atomic_write

__all__ = ["CLASS", "DOWNLOADS", "stamp_pages", "stamp_html", "page_build_line", "add_downloads", "download_links"]

CLASS = "og-build"
DOWNLOADS = "downloads"  # _book/downloads/: each chapter's notebook source and executed notebook
_OLD = re.compile(r'\n?<p class="og-build"[^>]*>.*?</p>\n?', re.S)
_STYLE = "font-size:.75rem;color:#6c757d;margin:2.5rem 0 1rem;border-top:1px solid #dee2e6;padding-top:.4rem"


def stamp_html(text: str, line: str) -> str:
    """``text`` with exactly one build line (``line``, HTML-escaped) at the end of ``<main>``."""
    tag = f'\n<p class="{CLASS}" style="{_STYLE}">{html.escape(line)}</p>\n'
    text = _OLD.sub("", text)
    for marker in ("</main>", "</body>"):
        at = text.rfind(marker)
        if at >= 0:
            return text[:at] + tag + text[at:]
    return text + tag


def stamp_pages(book_dir: Path, line: str) -> int:
    """Stamp every ``*.html`` page under ``book_dir`` (site libraries skipped); returns how many."""
    n = 0
    for page in sorted(Path(book_dir).rglob("*.html")):
        if "site_libs" in page.parts:
            continue
        atomic_write(page, stamp_html(page.read_text(encoding="utf-8"), line))
        n += 1
    return n


def page_build_line(text: str) -> str | None:
    """The build line of a rendered page, or None."""
    m = re.search(r'<p class="og-build"[^>]*>(.*?)</p>', text, re.S)
    return html.unescape(m.group(1)) if m else None


_LINKS = re.compile(r'\n?<p class="og-downloads"[^>]*>.*?</p>\n?', re.S)


def add_downloads(book_dir: Path, sources: dict[str, tuple[Path, Path]]) -> int:
    """Copy each chapter's jupytext source and executed notebook into ``book_dir/downloads/`` and
    link both at the foot of the chapter's page; the CSV files a chapter writes beside its executed
    notebook (``chapters/NN_name-*.csv``) are copied there too (the chapter's text links them). ``sources`` maps a page (relative to
    ``book_dir``, e.g. ``chapters/02_seed_pool.html``) to (source ``.py``, executed ``.ipynb``).
    Returns the number of pages linked."""
    import os
    import shutil

    book_dir = Path(book_dir)
    dl = book_dir / DOWNLOADS
    dl.mkdir(parents=True, exist_ok=True)
    n = 0
    for rel, files in sources.items():
        page = book_dir / rel
        if not page.is_file():
            continue
        links = []
        for f, what in zip(files, ("notebook source (jupytext, .py)", "executed notebook (.ipynb)"), strict=True):
            if Path(f).is_file():
                shutil.copyfile(f, dl / Path(f).name)
                href = os.path.relpath(dl / Path(f).name, page.parent).replace(os.sep, "/")
                links.append(f'<a href="{html.escape(href)}" download>{html.escape(Path(f).name)}</a> ({what})')
        # a chapter's data downloads (``chapters/NN_name-*.csv``, written by its notebook beside the
        # executed notebook), linked from the chapter's own text
        py, nb = Path(files[0]), Path(files[1])
        for folder in dict.fromkeys((nb.parent, py.parent.parent / "chapters")):
            for extra in sorted(folder.glob(f"{nb.stem}-*.csv")):
                shutil.copyfile(extra, dl / extra.name)
        if not links:
            continue
        tag = f'\n<p class="og-downloads" style="{_STYLE}">Download this chapter: ' + " &middot; ".join(links) + "</p>\n"
        text = _LINKS.sub("", page.read_text(encoding="utf-8"))
        at = max(text.rfind("</main>"), 0) or len(text)
        atomic_write(page, text[:at] + tag + text[at:])
        n += 1
    return n


def download_links(text: str) -> list[str]:
    """The download targets linked on a rendered page."""
    m = re.search(r'<p class="og-downloads"[^>]*>(.*?)</p>', text, re.S)
    return re.findall(r'href="([^"]+)"', m.group(1)) if m else []
