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

__all__ = ["CLASS", "stamp_pages", "stamp_html", "page_build_line"]

CLASS = "og-build"
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
