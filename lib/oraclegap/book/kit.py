"""The classroom kit inside the rendered site: the student edition, the slides and a PDF of the book.

``make book`` (:func:`.build.build`) renders the book into ``_book/`` and then places the kit
beside it, so that one folder holds everything a class needs:

- ``_book/student/``: the student edition (no exercise solutions; :func:`.build.render_student`),
- ``_book/slides/``: the class deck that follows the instructors' 90-minute plan
  (:func:`.build.render_slides`, :func:`.slides.slide_deck`),
- ``_book/oraclegap.pdf``: every page of the book printed by headless Chromium and joined
  (:func:`.check.print_pdf`). Without Chromium the build says so in one line and the PDF links
  lead to ``_book/oraclegap-pdf.html``, which says how to make it (``make pdf``).

Every page of the book links the kit through the sidebar's tools menu (``_quarto.yml``), and the
instructors' page lists it. Each part is cached like the chapters: the editions keep their own
render in ``_book-student/`` and ``_slides/`` with the key of the inputs they were rendered from
(:func:`kit_key`), the PDF in ``.cache/book/`` with the key of the book it printed; a part whose
key is unchanged is copied into place instead of being made again. The standalone runs
(``python -m oraclegap.book slides``, ``build --student``, ``pdf``) put what they make into the
built site as well (:func:`place_part`, :func:`make_pdf`), so ``_book/`` is the one place that
holds the kit and that ``python -m oraclegap.book check`` reads.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .._io import atomic_write
from .editions import SLIDES_DIR, STUDENT_DIR, STUDENT_PROFILE
from .structure import BOOK_DIR

__all__ = [
    "STUDENT_SUBDIR",
    "SLIDES_SUBDIR",
    "PARTS",
    "PDF_NAME",
    "PDF_HELP",
    "PDF_CACHE",
    "KIT_OUTPUTS",
    "kit_key",
    "edition_is_current",
    "place_edition",
    "place_part",
    "point_student_links",
    "placeholder_page",
    "cached_pdf",
    "place_pdf",
    "point_pdf_links",
    "KitJob",
    "start_kit",
    "finish_kit",
    "without_kit",
    "make_pdf",
]

STUDENT_SUBDIR = "student"
SLIDES_SUBDIR = "slides"
#: The kit's editions: part -> (its folder inside ``_book/``, the folder of its own render).
PARTS = {"student": (STUDENT_SUBDIR, STUDENT_DIR), "slides": (SLIDES_SUBDIR, SLIDES_DIR)}
_PART_RENDERER = {"student": (", student edition", STUDENT_PROFILE), "slides": (", revealjs slides", "slides")}
PDF_NAME = "oraclegap.pdf"
PDF_HELP = "oraclegap-pdf.html"
PDF_CACHE = Path(".cache") / "book"
#: What the kit may leave under ``_book/`` besides the pages a build lists (the PDF that
#: ``python -m oraclegap.book pdf`` adds after the build, and its temporary file).
KIT_OUTPUTS = (PDF_NAME, f".tmp-{PDF_NAME}")

_PDF_HOWTO = (
    "The PDF is printed from the rendered pages by headless Chromium. Install it (Debian and "
    "Ubuntu: <code>apt-get install chromium</code>; <code>make pdf</code> installs it and prints), "
    "or put any Chromium or Chrome on <code>PATH</code>, then run <code>make pdf</code> (or "
    "<code>python -m oraclegap.book pdf</code>) in the project: it writes <code>_book/{pdf}</code> "
    "and points the book's PDF links at it. The next <code>make book</code> prints it as well."
)


def kit_key(root: Path, quarto, part: str, *, small: bool) -> str:
    """The :func:`.build.render_key` of the kit's ``part`` ("student" or "slides") rendered by
    ``quarto`` from the executed chapters under ``root`` (``small``: they ran with SMALL): what
    its render in its own folder records, so that a build reuses it while its inputs stand."""
    from .build import render_key

    if part not in _PART_RENDERER:
        raise ValueError(f"the classroom kit's parts are {sorted(_PART_RENDERER)}, got {part!r}")
    suffix, profile = _PART_RENDERER[part]
    return render_key(root, quarto.describe() + suffix, small=small, profile=profile)


def edition_is_current(folder: Path, key: str) -> bool:
    """``folder`` holds a render of an edition made from inputs with this ``key``, with every file
    its record lists unchanged (``.og-build.json``: ``render_key``, ``files``, ``files_digest``)."""
    from .build import files_digest

    try:
        rec = json.loads((Path(folder) / ".og-build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(rec, dict) or rec.get("render_key") != key or not isinstance(rec.get("files"), list):
        return False
    return rec.get("files_digest") is not None and files_digest(folder, rec["files"]) == rec["files_digest"]


def _link_or_copy(src: Path, dest: Path) -> None:
    try:
        os.link(src, dest)
    except OSError:
        shutil.copy2(src, dest)


def place_edition(src: Path, dest: Path) -> int:
    """Put the rendered edition ``src`` at ``dest`` (inside ``_book/``), each file hard-linked when
    the file system allows it (copied otherwise); ``dest`` is replaced. Returns the files placed."""
    src, dest = Path(src), Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    n = 0
    for f in sorted(src.rglob("*")):
        if f.is_dir() or f.name == ".og-build.json":
            continue
        target = dest / f.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        _link_or_copy(f, target)
        n += 1
    return n


def _book_record(book: Path) -> dict:
    """The build record of the rendered book in ``book`` (``.og-build.json``); ``ValueError`` when
    there is none."""
    from .build import BUILD_RECORD

    try:
        record = json.loads((Path(book) / BUILD_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ValueError(f"{book} holds no rendered book; run `make book` first") from None
    if not isinstance(record, dict) or not isinstance(record.get("pages"), list):
        raise ValueError(f"{Path(book) / BUILD_RECORD} is not a build record; run `make book` again")
    return record


def _write_book_record(book: Path, record: dict) -> None:
    """Write ``record`` back with the files now under ``book`` and their digest, so that the next
    build still knows every file of ``_book/`` (:func:`.build.unowned_book_files`) and whether
    it is current."""
    from .build import BUILD_RECORD, files_digest

    book = Path(book)
    files = sorted(p.relative_to(book).as_posix() for p in book.rglob("*") if p.is_file() and p.name != BUILD_RECORD)
    record.update(files=files, files_digest=files_digest(book, files))
    atomic_write(book / BUILD_RECORD, json.dumps(record, indent=1))


def place_part(root: Path, part: str) -> Path | None:
    """Put the kit's ``part`` ("student" or "slides"), as last rendered into its own folder
    (``_book-student/``, ``_slides/``), into the rendered site (``_book/student/``,
    ``_book/slides/``) and note it in the site's build record, so that the site is the one place
    that holds (and :func:`.check.check_pages` checks) every edition. Returns the folder in
    ``_book/``, or None when ``_book/`` holds no rendered book to put it in."""
    root = Path(root)
    if part not in PARTS:
        raise ValueError(f"the classroom kit's parts are {sorted(PARTS)}, got {part!r}")
    sub, own = PARTS[part]
    book = root / BOOK_DIR
    try:
        record = _book_record(book)
    except ValueError:
        return None
    if not (root / own / "index.html").is_file():
        raise ValueError(f"{root / own} holds no rendered {part}")
    place_edition(root / own, book / sub)
    record["kit"] = dict(record.get("kit") or {}, **{part: "rendered"})
    _write_book_record(book, record)
    return book / sub


def _is_kit_target(rel: str) -> bool:
    parts = rel.split("/")
    return parts[0] in (STUDENT_SUBDIR, SLIDES_SUBDIR) or rel in (PDF_NAME, PDF_HELP)


def point_student_links(edition: Path) -> int:
    """Make the links of the student edition rendered in ``edition`` to the kit's other parts
    resolve from its place in the site, ``_book/student/``: a link that, read inside the edition,
    leads to ``student/...``, ``slides/...`` or the PDF (a page of the book links them as it sits
    at the top of ``_book/``) is rewritten to reach that file in ``_book/``. Returns the pages
    changed."""
    import posixpath

    edition = Path(edition)
    href = re.compile(r'(<a\b[^>]*?\shref=")([^"#?:]+)([#?][^"]*)?"')
    n = 0
    for page in sorted(edition.rglob("*.html")):
        rel_dir = page.parent.relative_to(edition).as_posix()
        if "site_libs" in rel_dir.split("/"):
            continue

        def fix(m, rel_dir=rel_dir):
            target = posixpath.normpath(posixpath.join(rel_dir, m.group(2)))
            if target.startswith("..") or not _is_kit_target(target):
                return m.group(0)
            new = posixpath.relpath(target, posixpath.normpath(posixpath.join(STUDENT_SUBDIR, rel_dir)))
            return f'{m.group(1)}{new}{m.group(3) or ""}"'

        text = page.read_text(encoding="utf-8")
        new_text = href.sub(fix, text)
        if new_text != text:
            atomic_write(page, new_text)
            n += 1
    return n


def placeholder_page(path: Path, title: str, body_html: str) -> Path:
    """A small standalone page at ``path`` (a kit part that this build did not make, and how to)."""
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:44rem;margin:3rem auto;"
            "padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .2em}</style></head>"
            f"<body><h1>{html.escape(title)}</h1>\n{body_html}\n</body></html>\n")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, page)
    return Path(path)


def cached_pdf(root: Path, key: str) -> Path | None:
    """The PDF printed earlier from a book rendered with this ``key``, or None."""
    pdf = Path(root) / PDF_CACHE / PDF_NAME
    try:
        rec = json.loads(pdf.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return pdf if isinstance(rec, dict) and rec.get("render_key") == key and pdf.is_file() else None


def place_pdf(root: Path, key: str | None, pages: list[str],
              printer: Callable[..., Path]) -> tuple[Path, bool]:
    """``_book/oraclegap.pdf``: the cached print of the book with this ``key`` when there is one,
    else ``printer(root, out=..., pages=pages, parts=...)`` prints it (into the cache, then copied
    into place). Returns (the PDF in ``_book/``, whether it came from the cache)."""
    root = Path(root)
    cache_dir = root / PDF_CACHE
    target = root / BOOK_DIR / PDF_NAME
    hit = cached_pdf(root, key) if key else None
    if hit is None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        parts = cache_dir / "pages"
        shutil.rmtree(parts, ignore_errors=True)
        out = printer(root, out=cache_dir / PDF_NAME, pages=pages, parts=parts)
        shutil.rmtree(parts, ignore_errors=True)
        if Path(out).suffix != ".pdf":
            raise RuntimeError(f"the pages were printed but not joined into one PDF ({out})")
        (cache_dir / PDF_NAME).with_suffix(".json").write_text(
            json.dumps({"render_key": key, "pages": pages}, indent=1), encoding="utf-8")
        hit = cache_dir / PDF_NAME
        cached = False
    else:
        cached = True
    target.unlink(missing_ok=True)
    _link_or_copy(hit, target)
    return target, cached


_PDF_HREF = re.compile(r'href="((?:\.\./|\./)*)(' + re.escape(PDF_NAME) + "|" + re.escape(PDF_HELP) + ')"')


def point_pdf_links(book: Path, *, present: bool, why: str = "") -> int:
    """Point every link to the PDF on the site's pages (``book/**/*.html`` but the site libraries)
    at ``oraclegap.pdf`` when it is ``present``, else at the page that says how to make it
    (``oraclegap-pdf.html``, written here with ``why`` there is none). Both files sit at the top of
    ``book``, so a link keeps its ``../`` prefix. Returns the pages changed."""
    book = Path(book)
    name = PDF_NAME if present else PDF_HELP
    if present:
        (book / PDF_HELP).unlink(missing_ok=True)
    else:
        placeholder_page(book / PDF_HELP, "No PDF in this build",
                         f"<p>This build of the book printed no PDF: {html.escape(why or 'no Chromium was found')}.</p>\n<p>"
                         + _PDF_HOWTO.format(pdf=PDF_NAME) + "</p>\n<p><a href=\"index.html\">Back to the book</a></p>")
    n = 0
    for page in sorted(book.rglob("*.html")):
        rel = page.relative_to(book).parts
        if "site_libs" in rel or page.name == PDF_HELP:
            continue
        text = page.read_text(encoding="utf-8")
        new = _PDF_HREF.sub(lambda m: f'href="{m.group(1)}{name}"', text)
        if new != text:
            atomic_write(page, new)
            n += 1
    return n


@dataclass
class KitJob:
    """The classroom kit of one build under way: the editions rendering on threads beside the
    book's own render (``futures``: part -> its render), and what is known already."""

    root: Path
    small: bool
    futures: dict[str, Future] = field(default_factory=dict)
    cached: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    pool: ThreadPoolExecutor | None = None


def _say(msg: str) -> None:
    print(msg, flush=True)
    sys.stdout.flush()


def start_kit(root: Path, quarto, *, small: bool) -> KitJob:
    """Start the kit's editions: each of the student edition and the slides is reused when its
    last render (``_book-student/``, ``_slides/``) was made from the same inputs
    (:func:`edition_is_current`), else rendered on a thread of its own, side by side with the
    book's render (the stages are written here, before the book's render starts writing into the
    project). :func:`finish_kit` waits for them and puts everything in place."""
    from . import editions
    from .build import render_slides, render_student
    from .slides import plan_blocks

    root = Path(root)
    job = KitJob(root=root, small=small)
    try:
        plan_blocks(root)
    except ValueError as exc:
        job.skipped["slides"] = str(exc)
    keys = {part: kit_key(root, quarto, part, small=small) for part in PARTS}
    dirs = {part: root / folder for part, (_, folder) in PARTS.items()}
    todo = {part: keys[part] for part in keys
            if part not in job.skipped and not edition_is_current(dirs[part], keys[part])}
    job.cached = [part for part in keys if part not in todo and part not in job.skipped]
    if not todo:
        return job
    job.pool = ThreadPoolExecutor(max_workers=len(todo))
    if "student" in todo:
        stage = editions.stage_student_site(root, root / ".student-stage")
        job.futures["student"] = job.pool.submit(render_student, root, quarto, small=small, key=todo["student"],
                                                 staged=stage, quiet=True)
    if "slides" in todo:
        job.futures["slides"] = job.pool.submit(render_slides, root, quarto, key=todo["slides"])
    return job


def wait_kit(job: KitJob) -> dict[str, dict]:
    """Wait for the editions of ``job`` to finish rendering; their results (raises the first
    failure, after every render has ended)."""
    results, failure = {}, None
    for part, fut in job.futures.items():
        try:
            results[part] = fut.result()
        except Exception as exc:  # noqa: BLE001 - re-raised below, once every render has ended
            failure = failure or exc
    if job.pool is not None:
        job.pool.shutdown(wait=True)
    if failure is not None:
        raise failure
    return results


def finish_kit(job: KitJob, *, key: str | None, pages: list[str],
               printer: Callable[..., Path] | None = None) -> dict:
    """Finish the kit of ``job`` once ``_book/`` is rendered and stamped: wait for the editions,
    place them in ``_book/student/`` and ``_book/slides/``, and put the PDF of ``pages`` (the book
    rendered with ``key``) at ``_book/oraclegap.pdf`` -- from the cache when it was printed from
    the same book, else printed by ``printer`` (default :func:`.check.print_pdf`). Without
    Chromium, or when printing fails, the build goes on: one line says why, and the PDF links lead
    to the page that says how to make it. Returns what was done, with the seconds of each step."""
    import time

    from .check import chromium, print_pdf

    root = job.root
    book = root / BOOK_DIR
    t0 = time.perf_counter()
    rendered = wait_kit(job)
    waited = time.perf_counter() - t0
    placed = {}
    for part, (sub, src) in PARTS.items():
        if part in job.skipped:
            placeholder_page(book / sub / "index.html", f"No {part} in this build",
                             f"<p>{html.escape(job.skipped[part])}</p>")
            placed[sub] = 0
        else:
            placed[sub] = place_edition(root / src, book / sub)
    t1 = time.perf_counter()
    pdf, why, from_cache = None, "", False
    if printer is None and not chromium():
        why = "no Chromium was found on the machine that built the site"
    else:
        try:
            pdf, from_cache = place_pdf(root, key, pages, printer or print_pdf)
        except (ValueError, RuntimeError, OSError) as exc:
            why = f"printing failed ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        except Exception as exc:  # noqa: BLE001 - a timeout or a Chromium crash must not fail the build
            why = f"printing failed ({type(exc).__name__})"
    point_pdf_links(book, present=pdf is not None, why=why)
    pdf_s = time.perf_counter() - t1
    parts = ", ".join(f"{p} {'reused' if p in job.cached else 'skipped (' + job.skipped[p] + ')' if p in job.skipped else 'rendered'}"
                      for p in ("student", "slides"))
    _say(f"book: classroom kit in {book.name}/: {parts} (waited {waited:.1f} s for them after the book); "
         + (f"PDF {'from the cache' if from_cache else 'printed'} in {pdf_s:.1f} s" if pdf else
            f"no PDF: {why}; {book.name}/{PDF_HELP} says how to make one (make pdf)"))
    state = {p: "reused" if p in job.cached else "skipped" if p in job.skipped else "rendered" for p in ("student", "slides")}
    return {**state, "skipped": dict(job.skipped),
            "files_placed": placed, "pdf": str(pdf) if pdf else None, "pdf_cached": from_cache,
            "no_pdf_reason": why or None, "wait_seconds": waited, "pdf_seconds": pdf_s,
            "rendered": {k: {kk: vv for kk, vv in v.items() if kk != "per_chapter"} for k, v in rendered.items()}}


def without_kit(root: Path, why: str) -> dict:
    """The kit's places in ``_book/`` for a build that does not make it (``why``): small pages that
    say so and how to make it, so that no link of the book leads nowhere."""
    book = Path(root) / BOOK_DIR
    how = f"<p>This build did not make it ({html.escape(why)}). <code>make book</code> builds the whole site with it.</p>"
    placeholder_page(book / STUDENT_SUBDIR / "index.html", "Student edition not built", how)
    placeholder_page(book / SLIDES_SUBDIR / "index.html", "Slides not built", how)
    point_pdf_links(book, present=False, why=f"this build did not make the classroom kit ({why})")
    return {"student": None, "slides": None, "pdf": None, "no_pdf_reason": why}


def make_pdf(root: Path, printer: Callable[..., Path] | None = None) -> Path:
    """``python -m oraclegap.book pdf``: print the rendered book to ``_book/oraclegap.pdf`` (or take
    the print of the same book from the cache), point the book's PDF links at it and record the
    change in the build's record, so the next build still knows every file of ``_book/``."""
    from .check import print_pdf

    root = Path(root)
    book = root / BOOK_DIR
    manifest = _book_record(book)
    pdf, _ = place_pdf(root, manifest.get("render_key"), list(manifest["pages"]), printer or print_pdf)
    point_pdf_links(book, present=True)
    _write_book_record(book, manifest)
    return pdf
