"""Checks of the rendered book, statically and in headless Chromium; a PDF for printing.

The build writes ``_book/.og-build.json`` (which renderer ran, which pages it wrote); the
checks follow it. Both renderers write a page where Quarto does (``_book/chapters/NN_*.html``).

Static checks of each page's HTML (:func:`page_problems`): error outputs, images whose file is
missing or whose embedded data are empty, links to local files that do not exist, unresolved cross-references (Quarto writes
``?@fig-x``; the fallback leaves ``@fig-x``), and sub-figure panels (Quarto's
``quarto-subfloat`` blocks, captions "(a)", "(b)": a labelled figure cell that produced several
outputs).

In Chromium (:func:`check_pages`), each page is loaded at a 1280 px wide window inside a small
probe page (``--dump-dom`` with file access between local pages), which reports images that
failed to load, tables wider than the column that holds them (they would need horizontal
scrolling), code names (``p_upper``) as column headers of captioned tables, unresolved
references in the rendered text and math that MathJax did not typeset; a screenshot per page goes to
``screenshots/``. The classroom kit's student edition and slides are checked where the build puts
them, ``_book/student/`` and ``_book/slides/`` (:func:`kit_editions`).

Each chapter page is also measured (:func:`chapter_measures`, :mod:`.measure`): its main line's prose
words, ``##`` sections and table columns are printed, and a main line over 6,500 words or a
main-line table over 8 columns is a problem.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .structure import BOOK_DIR, quarto_pages

__all__ = ["MANIFEST", "CHROMIUM_FLAGS", "chromium", "book_pages", "broken_links", "page_problems",
           "bibliography_problems",
           "probe_page", "chapter_measures", "kit_editions", "check_pages", "print_pdf"]

MANIFEST = ".og-build.json"
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)
WIDTH = 1280

_PROBE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="f" style="width:%(w)dpx;height:2000px;border:0"></iframe>
<pre id="og-result">PENDING</pre>
<script>
var f = document.getElementById('f');
f.onload = function () { var go = function () {
  var out = document.getElementById('og-result'), d = f.contentDocument;
  if (!d || !d.body) { out.textContent = 'OGRESULT ' + JSON.stringify({access: false}); return; }
  var res = {access: true, broken: [], wide: [], unresolved: 0, subfloats: 0};
  Array.prototype.forEach.call(d.images, function (i) {
    var src = i.getAttribute('src');
    if (src === null) return;  // a lazily loaded slide image (data-src): checked on disk instead
    if (!i.complete || i.naturalWidth === 0) res.broken.push(src.slice(0, 120));
  });
  Array.prototype.forEach.call(d.querySelectorAll('table'), function (t) {
    if (t.closest('.sidebar, nav, .quarto-search')) return;
    var box = t.parentElement, w = t.getBoundingClientRect().width;
    if (t.scrollWidth > box.clientWidth + 1 || w > box.clientWidth + 1) {
      var cap = t.closest('[id^="tbl-"]');
      res.wide.push([cap ? cap.id : (t.id || 'table'), Math.round(Math.max(w, t.scrollWidth)), box.clientWidth]);
    }
  });
  var text = d.body.innerText || '';
  res.unresolved = (text.match(/\\?@(fig|tbl|sec|eq)-/g) || []).length;
  res.subfloats = d.querySelectorAll('.quarto-subfloat-fig, .quarto-subfloat-tbl').length;
  res.docwidth = [d.documentElement.scrollWidth, f.contentWindow.innerWidth];
  res.math = d.querySelectorAll('span.math').length;
  res.rawtex = Array.prototype.filter.call(d.querySelectorAll('span.math'), function (m) {
    return /\\\\[(\\[a-zA-Z]/.test(m.innerText || ''); }).length;
  res.codeheads = [];
  Array.prototype.forEach.call(d.querySelectorAll('[id^="tbl-"] th'), function (th) {
    var t = (th.innerText || '').replace(/\u200b/g, '').trim();
    if (/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(t)) res.codeheads.push(t);
  });
  res.typeset = d.querySelectorAll('mjx-container').length;
  out.textContent = 'OGRESULT ' + JSON.stringify(res);
};
  var mj = f.contentWindow && f.contentWindow.MathJax;
  var later = function () { setTimeout(go, 300); };
  if (mj && mj.startup && mj.startup.promise) { mj.startup.promise.then(later, later); } else { later(); }
};
f.src = decodeURIComponent(location.hash.slice(1));
</script></body></html>
"""


def chromium() -> str | None:
    """The Chromium (or Chrome) executable on PATH, if any."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def book_pages(root: Path) -> tuple[str, list[str]]:
    """(renderer, pages relative to ``_book/``) of the last build; from ``_quarto.yml`` when the
    build left no manifest."""
    book = Path(root) / BOOK_DIR
    try:
        man = json.loads((book / MANIFEST).read_text(encoding="utf-8"))
        return str(man.get("renderer", "unknown")), list(man["pages"])
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown", ["index.html"] + [p.html for p in quarto_pages(root) if p.file != "index.qmd"]


def _visible_text(page: str) -> str:
    page = re.sub(r"<(script|style|pre|code)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return html_unescape(re.sub(r"<[^>]+>", " ", page))


def html_unescape(s: str) -> str:
    import html

    return html.unescape(s)


_HREF = re.compile(r'<a\b[^>]*?\shref="([^"]*)"', re.I)


def broken_links(path: Path, text: str | None = None) -> list[str]:
    """The links (``<a href>``) of the page at ``path`` to a local file that does not exist (a
    folder counts when it holds ``index.html``); links with a scheme (``https:``, ``mailto:``)
    and links within the page (``#...``) are not followed."""
    from urllib.parse import unquote

    path = Path(path)
    text = path.read_text(encoding="utf-8", errors="replace") if text is None else text
    out = []
    for href in dict.fromkeys(html_unescape(h) for h in _HREF.findall(text)):
        target = unquote(href.split("#")[0].split("?")[0])
        if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href):
            continue
        dest = path.parent / target
        if not (dest.is_file() or (dest.is_dir() and (dest / "index.html").is_file())):
            out.append(href)
    return out


def page_problems(path: Path) -> list[str]:
    """Static checks of a rendered page: error outputs, missing or empty images, links to local
    files that do not exist (:func:`broken_links`), unresolved cross-references, sub-figure
    panels."""
    path = Path(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    name = path.name
    problems = []
    if "Traceback (most recent call last)" in text or re.search(
        r'class="[^"]*(output_error|cell-output-error|jp-RenderedText[^"]*stderr)', text
    ):
        if "Traceback" in text or "Error" in text:
            problems.append(f"{name}: contains an error output")
    # src, and data-src (slides load their images lazily from it)
    for src in re.findall(r'<img[^>]*\s(?:data-)?src="([^"]*)"', text):
        if src.startswith("data:"):
            if len(src) < 64:
                problems.append(f"{name}: an embedded image is empty")
        elif src.startswith(("http://", "https://")):
            continue
        elif not (path.parent / src.split("#")[0].split("?")[0]).is_file():
            problems.append(f"{name}: image {src} is missing")
    for href in broken_links(path, text):
        problems.append(f"{name}: link {href} leads to no file")
    visible = _visible_text(text)
    unresolved = sorted(set(re.findall(r"\?@((?:fig|tbl|sec|eq)-[\w-]+)", visible)))
    unresolved += sorted(set(re.findall(r"(?<![\w@?/.])@((?:fig|tbl|sec|eq)-[\w-]*\w)", visible)) - set(unresolved))
    for ref in unresolved:
        problems.append(f"{name}: reference @{ref} is unresolved")
    subs = len(re.findall(r'class="[^"]*quarto-subfloat-(?:fig|tbl)', text))
    if subs:
        ids = sorted(set(re.findall(r'id="((?:fig|tbl)-[\w-]+?)-\d+"', text)))
        problems.append(f"{name}: {subs} sub-figure panel(s) (a labelled cell with several outputs): {', '.join(ids) or '?'}")
    elif re.search(r"<figcaption[^>]*>\s*\(a\)", text):
        problems.append(f"{name}: a figure caption starts with (a): sub-figure panels")
    return problems


_REFS_SOURCE = re.compile(r"\{#refs\b|id=[\"']refs[\"']")
_REFS_DIV = re.compile(r"<div\b[^>]*\bid=\"refs\"[^>]*>")


def bibliography_problems(root: Path, book: Path | None = None) -> list[str]:
    """The bibliography page (the page whose source places the ``{#refs}`` div) of the book
    rendered into ``book`` (default ``_book/``) must show its entries: its ``#refs`` block not
    hidden and holding at least one entry. In a book, Quarto 1.7 hides each page's own ``#refs``
    and rebuilds this page's list from the citations of all pages and the ``nocite`` of the first
    page it renders, so a bibliography page that set ``nocite`` only for itself came out empty."""
    root = Path(root)
    book = root / BOOK_DIR if book is None else Path(book)
    problems = []
    for page in quarto_pages(root):
        src = root / page.file
        if src.suffix != ".qmd" or not src.is_file() or not _REFS_SOURCE.search(src.read_text(encoding="utf-8")):
            continue
        out = book / page.html
        if not out.is_file():
            continue  # a missing page is reported by the page checks
        html = out.read_text(encoding="utf-8", errors="replace")
        div = _REFS_DIV.search(html)
        if div is None:
            problems.append(f"{page.html}: the bibliography page has no #refs block")
        elif re.search(r"display:\s*none", div.group(0)):
            problems.append(f"{page.html}: the bibliography is hidden (style display: none on #refs)")
        elif 'class="csl-entry"' not in html[div.start():]:
            problems.append(f"{page.html}: the bibliography lists no entry")
    return problems


def _run_chromium(browser: str, args: list[str], timeout: int = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def probe_page(browser: str, path: Path, width: int = WIDTH) -> dict:
    """Load ``path`` in Chromium at ``width`` px and report broken images, tables wider than
    their column, unresolved references and sub-figure panels (a dict; ``access: False`` when the
    page could not be inspected)."""
    from urllib.parse import quote

    with tempfile.TemporaryDirectory() as d:
        probe = Path(d) / "probe.html"
        probe.write_text(_PROBE % {"w": width}, encoding="utf-8")
        url = probe.as_uri() + "#" + quote(Path(path).resolve().as_uri(), safe="")
        res = _run_chromium(browser, ["--allow-file-access-from-files", f"--window-size={width + 20},2100",
                                      "--virtual-time-budget=20000", "--dump-dom", url])
    m = re.search(r"OGRESULT (\{.*?\})\s*</pre>", res.stdout, re.S)
    if not m:
        return {"access": False, "error": (res.stderr.strip().splitlines() or ["no result"])[-1][:200]}
    return json.loads(html_unescape(m.group(1)))


def kit_editions(root: Path) -> tuple[list[tuple[str, Path, list[str]]], list[str]]:
    """The classroom kit's editions in the rendered site: ([(part, its folder in ``_book/``, its
    pages)] for each part the last build (or a later ``slides`` or ``build --student`` run) put
    there, [a line for each part it did not]). The build record (``_book/.og-build.json``, key
    ``kit``) says which parts were made; the student edition has the book's pages, the slides
    one page."""
    from .kit import PARTS

    book = Path(root) / BOOK_DIR
    try:
        kit = json.loads((book / MANIFEST).read_text(encoding="utf-8")).get("kit")
    except (OSError, ValueError, AttributeError):
        kit = None
    kit = kit if isinstance(kit, dict) else {}
    found, missing = [], []
    for part, (sub, _) in PARTS.items():
        state = kit.get(part)
        if state in ("rendered", "reused"):
            found.append((part, book / sub, book_pages(root)[1] if part == "student" else ["index.html"]))
        else:
            why = ((kit.get("skipped") or {}).get(part) if state == "skipped" else
                   kit.get("no_pdf_reason") if part in kit else None) or "its build record names no classroom kit"
            missing.append(f"{BOOK_DIR}/{sub}/: not built ({why}); make book builds it")
    return found, missing


def chapter_measures(book: Path, pages: list[str], max_words: int | None = None,
                     max_columns: int | None = None,
                     max_sections: int | None = None) -> tuple[list[str], list[str]]:
    """(lines to print, problems) of the chapter pages (``chapters/...``) among ``pages`` of the
    rendered book in ``book``: each page's main-line words, sections and tables
    (:func:`.measure.measure_html`), and the pages over the limits (:func:`.measure.measure_problems`)."""
    from . import measure as ME

    lines, problems = [], []
    for page in pages:
        path = Path(book) / page
        if not page.startswith("chapters/") or not path.is_file():
            continue
        m = ME.measure_html(path.read_text(encoding="utf-8", errors="replace"))
        lines.append(f"  {page}: {m.summary()}")
        problems += ME.measure_problems(page, m, max_words=max_words or ME.MAX_WORDS,
                                        max_columns=max_columns or ME.MAX_COLUMNS,
                                        max_sections=max_sections or ME.MAX_SECTIONS)
    return lines, problems


def check_pages(root: Path | None = None, shots: str = "screenshots") -> list[str]:
    """Check every rendered page of the site that ``make book`` last built (``_book/``), statically
    and in headless Chromium, saving a screenshot per page under ``screenshots/``; returns the
    problems found. The classroom kit's editions in it (:func:`kit_editions`: the student edition
    in ``_book/student/``, where also no solution may show, and the slides in ``_book/slides/``)
    are checked the same way; a part the build left out is named and skipped."""
    from .editions import SOLUTION_CLASS
    from .structure import project_root

    root = project_root(root)
    book = root / BOOK_DIR
    if not (book / "index.html").is_file():
        return [f"{book}/index.html does not exist; run `make book` first"]
    lines, problems = chapter_measures(book, book_pages(root)[1])
    problems += bibliography_problems(root, book)
    print("check: the chapters' main lines (prose words, ## sections, tables)")
    print("\n".join(lines) or "  no chapter page rendered")
    browser = chromium()
    if not browser:
        return problems + ["no Chromium found: install Debian's `chromium` (apt-get install chromium) and rerun"]
    out = root / shots
    out.mkdir(exist_ok=True)
    renderer, pages = book_pages(root)
    print(f"check: {BOOK_DIR}/: {len(pages)} page(s) rendered by {renderer}")
    problems += _check_edition(root, book, pages, browser, out)
    editions, missing = kit_editions(root)
    for line in missing:
        print(f"check: {line}; skipped")
    for part, folder, pages in editions:
        label = folder.relative_to(root).as_posix()
        print(f"check: {label}/: {len(pages)} page(s)")
        found = _check_edition(root, folder, pages, browser, out, slides=part == "slides")
        if part == "student":
            found += bibliography_problems(root, folder)
            found += [f"{pg}: shows an exercise solution" for pg in pages
                      if (folder / pg).is_file() and SOLUTION_CLASS in (folder / pg).read_text(encoding="utf-8")]
        problems += [p if p.startswith(label + "/") else f"{label}/{p}" for p in found]
    return problems


def _check_edition(root: Path, book: Path, pages: list[str], browser: str, out: Path, slides: bool = False) -> list[str]:
    from .buildline import page_build_line

    problems = []
    prefix = "" if book == root / BOOK_DIR else book.name + "__"
    for page in pages:
        path = book / page
        if not path.is_file():
            problems.append(f"{page}: not rendered")
            continue
        found = page_problems(path)
        if page_build_line(path.read_text(encoding="utf-8", errors="replace")) is None:
            found.append(f"{page}: no build line at the foot of the page (commit, lock, versions, renderer, date)")
        probe = probe_page(browser, path)
        if not probe.get("access"):
            found.append(f"{page}: Chromium could not inspect the page ({probe.get('error', 'no access')})")
        else:
            for src in probe["broken"]:
                found.append(f"{page}: image {src} does not load")
            for label, w, box in ([] if slides else probe["wide"]):
                found.append(f"{page}: table {label} is {w} px wide in a {box} px column at {WIDTH} px (horizontal scrolling)")
            if probe["unresolved"] and not any("unresolved" in p for p in found):
                found.append(f"{page}: {probe['unresolved']} unresolved reference(s) in the rendered text")
            if probe["subfloats"] and not any("sub-figure" in p for p in found):
                found.append(f"{page}: {probe['subfloats']} sub-figure panel(s)")
            if probe.get("codeheads"):
                found.append(f"{page}: captioned tables use code names as column headers ({', '.join(sorted(set(probe['codeheads']))[:6])}); "
                             "give them human names (report.table(..., columns={...}))")
            if probe.get("rawtex") and not probe.get("typeset"):
                found.append(f"{page}: {probe['rawtex']} math expression(s) not typeset (MathJax did not load: "
                             "run `make quarto` with npm for a local copy, or check the network)")
        shot = out / (prefix + page.replace("/", "__").removesuffix(".html") + ".png")
        res = _run_chromium(browser, ["--hide-scrollbars", f"--window-size={WIDTH},2400", f"--screenshot={shot}",
                                      path.resolve().as_uri()])
        if res.returncode != 0 or not shot.is_file() or shot.stat().st_size < 1000:
            found.append(f"{page}: Chromium could not take a screenshot ({res.stderr.strip()[-200:]})")
        status = "ok" if not found else f"{len(found)} problem(s)"
        print(f"  {page}: {status}; screenshot {shot.relative_to(root)}")
        problems.extend(found)
    return problems


def print_pdf(root: Path | None = None, out: Path | None = None, *, pages: list[str] | None = None,
              parts: Path | None = None) -> Path:
    """Print the rendered ``pages`` (default: every page of the last build, in book order) to PDF
    with headless Chromium, one file per page in ``parts`` (default ``_book/pdf/``), and join them
    into ``out`` (default ``_book/oraclegap.pdf``; needs ``pypdf`` to join: without it the per-page
    PDFs stay in ``parts``). Returns the joined file, or the folder of parts."""
    from .kit import PDF_NAME
    from .structure import project_root

    root = project_root(root)
    book = root / BOOK_DIR
    browser = chromium()
    if not browser:
        raise ValueError("no Chromium found: install Debian's `chromium` (apt-get install chromium)")
    if pages is None:
        _, pages = book_pages(root)
    parts_dir = Path(parts) if parts is not None else book / "pdf"
    parts_dir.mkdir(parents=True, exist_ok=True)
    printed = []
    for i, page in enumerate(pages):
        path = book / page
        if not path.is_file():
            raise ValueError(f"{page} is not rendered; run `make book` first")
        part = parts_dir / f"{i:02d}-{Path(page).stem}.pdf"
        res = _run_chromium(browser, ["--no-pdf-header-footer", "--virtual-time-budget=20000",
                                      f"--print-to-pdf={part}", path.resolve().as_uri()], timeout=300)
        if res.returncode != 0 or not part.is_file():
            raise RuntimeError(f"Chromium could not print {page}: {res.stderr.strip()[-200:]}")
        printed.append(part)
        print(f"  {page}: {part.relative_to(root) if part.is_relative_to(root) else part}")
    try:
        from pypdf import PdfWriter
    except ImportError:
        print(f"pypdf is not installed: the pages stay separate in {parts_dir}")
        return parts_dir
    target = Path(out or book / PDF_NAME)
    writer = PdfWriter()
    for part in printed:
        writer.append(str(part))
    tmp = target.with_name(f".tmp-{target.name}")
    with open(tmp, "wb") as fh:
        writer.write(fh)
    tmp.replace(target)
    return target
