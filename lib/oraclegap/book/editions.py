"""Other editions of the same executed chapters: the student edition and the class slides.

**Student edition** (``python -m oraclegap.book build --student``, ``make book BOOK_ARGS=--student``):
the book as the default build renders it, minus every exercise solution, with a banner saying so.
A solution is the folded callout :func:`oraclegap.report.solution` displays (class ``og-solution``;
older executions: a tip callout titled "Solution"). The executed chapters in ``chapters/`` (the
execution cache) are never modified: :func:`stage_student` copies the book's sources and
solution-free copies of the chapters into a staging folder, Quarto renders that folder, and the
result lands in ``_book-student/``.

**Slides** (``python -m oraclegap.book slides``, ``make slides``): the class deck of
:mod:`.slides`, rendered into ``_slides/``. ``_book-student/`` and ``_slides/`` hold each
edition's last render (the classroom kit's cache); the editions are read in the site, where
``make book`` and the standalone runs put them (:mod:`.kit`: ``_book/student/``,
``_book/slides/``); the student edition shows the sidebar's classroom-kit menu from there
(:func:`student_tools`).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from pathlib import Path

from .structure import BOOK_DIR, EXECUTED_DIR, quarto_config, quarto_pages

__all__ = [
    "SOLUTION_CLASS",
    "STUDENT_DIR",
    "STUDENT_PROFILE",
    "SLIDES_DIR",
    "is_solution",
    "strip_solutions",
    "book_inputs",
    "stage_book",
    "stage_student",
    "student_tools",
    "stage_student_site",
]

SOLUTION_CLASS = "og-solution"
STUDENT_DIR = "_book-student"
STUDENT_PROFILE = "student"  # _quarto-student.yml: the banner on every page
SLIDES_DIR = "_slides"
_OLD_SOLUTION = re.compile(r"^:::\s*\{\.callout-tip[^}]*\}\s*\n##\s*Solution\b")


def _markdown_of(output: dict) -> str:
    data = output.get("data") or {}
    text = data.get("text/markdown", "")
    return "".join(text) if isinstance(text, list) else str(text)


def is_solution(output: dict) -> bool:
    """Whether a notebook output is an exercise solution (the folded callout of ``report.solution``)."""
    text = _markdown_of(output).lstrip()
    return f".{SOLUTION_CLASS}" in text.split("\n", 1)[0] or bool(_OLD_SOLUTION.match(text))


def strip_solutions(nb: dict) -> tuple[dict, int]:
    """A copy of notebook ``nb`` (nbformat JSON as a dict) without solution outputs; returns it and
    how many outputs were removed. Cells are kept (their code stays foldable, as in the book)."""
    nb = copy.deepcopy(nb)
    removed = 0
    for cell in nb.get("cells", []):
        outs = cell.get("outputs")
        if not outs:
            continue
        keep = [o for o in outs if not is_solution(o)]
        removed += len(outs) - len(keep)
        cell["outputs"] = keep
    return nb, removed


def book_inputs(root: Path) -> list[Path]:
    """Every file Quarto reads to render the book: the configuration and its profiles, the pages,
    the bibliography and the Lua filters ``_quarto.yml`` names by a path inside the project."""
    root = Path(root)
    files = [root / "_quarto.yml", *sorted(root.glob("_quarto-*.yml"))]
    files += [root / p.file for p in quarto_pages(root)]
    files += [root / b for b in ("references.bib",) if (root / b).is_file()]
    for entry in quarto_config(root).get("filters") or []:
        path = entry.get("path") if isinstance(entry, dict) else entry
        if isinstance(path, str) and path.endswith(".lua") and not Path(path).is_absolute():
            files.append(root / path)
    return [f for f in files if f.is_file()]


def stage_book(root: Path, stage: Path, *, chapter=None) -> dict:
    """Make ``stage`` a folder from which Quarto renders the book as it does from ``root``; returns
    ``{chapter file: what chapter(...) returned}``.

    Every top-level entry of ``root`` appears in ``stage`` as a symbolic link (Quarto only reads
    them: the settings, the pages, the bibliography, the files a page links to, which it copies into
    the output), except hidden entries, the rendered folders (``_book``, ``_book-student``,
    ``_slides``) and ``chapters/``: that is a real folder, since Quarto writes each notebook's
    figures beside it, holding each executed chapter the book lists as a hard link or copy, or as
    ``chapter(source, dest)`` writes it. Where symbolic links are unavailable, the files
    :func:`book_inputs` names are copied instead."""
    root, stage = Path(root), Path(stage)
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    skip = {BOOK_DIR, STUDENT_DIR, SLIDES_DIR, EXECUTED_DIR}
    try:
        for entry in sorted(root.iterdir()):
            if not (entry.name.startswith(".") or entry.name in skip):
                os.symlink(entry.resolve(), stage / entry.name, target_is_directory=entry.is_dir())
    except OSError:  # no symbolic links here: copy what the book reads
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        for f in book_inputs(root):
            rel = f.relative_to(root)
            if rel.parts[0] != EXECUTED_DIR:
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, stage / rel)
    done = {}
    for page in quarto_pages(root):
        src = root / page.file
        if Path(page.file).parts[0] != EXECUTED_DIR or not src.is_file():
            continue
        dest = stage / page.file
        dest.parent.mkdir(parents=True, exist_ok=True)
        if chapter is not None:
            done[page.file] = chapter(src, dest)
            continue
        try:
            os.link(src, dest)
        except OSError:
            shutil.copy2(src, dest)
        done[page.file] = None
    return done


def stage_student(root: Path, stage: Path) -> dict[str, int]:
    """Stage the book (:func:`stage_book`) in ``stage`` with every executed chapter stripped of its
    solutions (:func:`strip_solutions`); returns ``{chapter file: solutions removed}``."""

    def strip(src: Path, dest: Path) -> int:
        nb, n = strip_solutions(json.loads(src.read_text(encoding="utf-8")))
        dest.write_text(json.dumps(nb, indent=1), encoding="utf-8")
        return n

    return stage_book(root, stage, chapter=strip)


def student_tools(tools: list) -> list:
    """The sidebar tools of ``_quarto.yml`` (``book.sidebar.tools``) as the student edition shows
    them from its place in the site, ``_book/student/``: the link to the student edition becomes a
    link to the edition with solutions (``../index.html``), and every other link to a file beside
    the book (not a page of it: those end in ``.qmd`` or ``.ipynb``, and Quarto resolves them in
    either edition) gains ``../``."""

    def item(entry):
        if not isinstance(entry, dict):
            return entry
        entry = dict(entry)
        if isinstance(entry.get("menu"), list):
            entry["menu"] = [item(e) for e in entry["menu"]]
        href = entry.get("href")
        if isinstance(href, str) and not re.match(r"^[a-z]+:|/|#", href) and not href.endswith((".qmd", ".ipynb")):
            if href.split("#")[0] in ("student/index.html", "student/"):
                entry.update(text="The book with solutions", href="../index.html")
            else:
                entry["href"] = "../" + href
        return entry

    return [item(t) for t in tools]


def stage_student_site(root: Path, stage: Path) -> dict[str, int]:
    """Stage the student edition (:func:`stage_student`) with its own ``_quarto.yml``: the book's,
    with the sidebar tools of :func:`student_tools`. Returns ``{chapter file: solutions removed}``."""
    import yaml

    removed = stage_student(root, stage)
    config = quarto_config(root)
    tools = ((config.get("book") or {}).get("sidebar") or {}).get("tools")
    if isinstance(tools, list) and tools:
        config["book"]["sidebar"]["tools"] = student_tools(tools)
        target = Path(stage) / "_quarto.yml"
        target.unlink(missing_ok=True)  # the staged entry is a link to the book's own file
        target.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return removed
