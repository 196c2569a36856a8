"""Other editions of the same executed chapters: the student edition and the class slides.

**Student edition** (``python -m oraclegap.book build --student``, ``make book BOOK_ARGS=--student``):
the book as the default build renders it, minus every exercise solution, with a banner saying so.
A solution is the folded callout :func:`oraclegap.report.solution` displays (class ``og-solution``;
older executions: a tip callout titled "Solution"). The executed chapters in ``chapters/`` (the
execution cache) are never modified: :func:`stage_student` copies the book's sources and
solution-free copies of the chapters into a staging folder, Quarto renders that folder, and the
result lands in ``_book-student/``.

**Slides** (``python -m oraclegap.book slides``, ``make slides``): a Quarto revealjs deck for a
90-minute class, :func:`slide_deck` built from the executed chapters' own labelled figures and
takeaways (nothing recomputed): per chapter a title slide with its opening question, up to
:data:`FIGURES_PER_CHAPTER` figures (one per slide, with their captions), and the takeaways. The
deck renders into ``_slides/``, offline like the book (Quarto ships reveal.js; math as plain HTML,
since reveal.js's math plugin would load MathJax 2 from a CDN).
"""

from __future__ import annotations

import base64
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
    "FIGURES_PER_CHAPTER",
    "is_solution",
    "strip_solutions",
    "book_inputs",
    "stage_book",
    "stage_student",
    "chapter_digest",
    "slide_deck",
    "write_slides",
]

SOLUTION_CLASS = "og-solution"
STUDENT_DIR = "_book-student"
STUDENT_PROFILE = "student"  # _quarto-student.yml: the banner on every page
SLIDES_DIR = "_slides"
FIGURES_PER_CHAPTER = 3
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


# ---------------------------------------------------------------------------- slides
def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _options(src: str) -> dict[str, str]:
    out = {}
    for line in src.splitlines():
        m = re.match(r"^#\|\s*([\w-]+):\s*(.*)$", line)
        if not m:
            if line.strip() and not line.startswith("#|"):
                break
            continue
        out[m.group(1)] = m.group(2).strip().strip('"').strip("'")
    return out


def chapter_digest(nb: dict, max_figures: int = FIGURES_PER_CHAPTER) -> dict:
    """What the slides take from one executed chapter: ``title`` (its first ``#`` heading),
    ``question`` (the first paragraph after it), ``figures`` (label, caption, PNG bytes; the first
    ``max_figures`` labelled figures) and ``takeaways`` (the Markdown outputs under the
    ``## Takeaways`` heading, up to the next heading)."""
    title, question, figures, takeaways = None, None, [], []
    in_take = False
    for cell in nb.get("cells", []):
        src = _source(cell)
        if cell.get("cell_type") == "markdown":
            heads = re.findall(r"^(#{1,2})\s+(.+)$", src, re.M)
            if title is None:
                m = re.search(r"^#\s+(.+)$", src, re.M)
                if m:
                    title = re.sub(r"\s*\{[^}]*\}\s*$", "", m.group(1)).strip()
                    rest = src[m.end():].strip().split("\n\n")
                    question = rest[0].strip() if rest and rest[0].strip() else None
                    continue
            if title is not None and question is None and src.strip() and not heads:
                question = src.strip().split("\n\n")[0]
            if heads:
                in_take = any(h[0] == "##" and h[1].strip().lower().startswith("takeaways") for h in heads)
            continue
        if cell.get("cell_type") != "code":
            continue
        opts = _options(src)
        if in_take:
            takeaways += [t for t in (_markdown_of(o).strip() for o in cell.get("outputs", [])) if t]
        label = opts.get("label", "")
        if label.startswith("fig-") and len(figures) < max_figures:
            png = next((o["data"]["image/png"] for o in cell.get("outputs", [])
                        if "image/png" in (o.get("data") or {})), None)
            if png:
                data = "".join(png) if isinstance(png, list) else png
                figures.append({"label": label, "caption": opts.get("fig-cap", ""),
                                "png": base64.b64decode(data)})
    return {"title": title or "Chapter", "question": question, "figures": figures, "takeaways": takeaways}


_XREF = re.compile(r"\s*\(?@((?:sec|fig|tbl|eq)-[\w-]*\w)\)?")


def _clean_markdown(text: str) -> str:
    """Markdown from a notebook output, made safe inside a slide (callout fences dropped; the book's
    cross-references, which the deck cannot resolve, replaced by "(in the book)")."""
    lines = [ln for ln in text.splitlines() if not ln.startswith(":::")]
    text = "\n".join(ln for ln in lines if not ln.startswith("## ")).strip()
    return _XREF.sub(" (in the book)", text)


def slide_deck(root: Path, images_dir: Path, title: str | None = None) -> str:
    """The revealjs deck (Quarto Markdown) from the executed chapters of ``root``; figures are
    written as PNG files into ``images_dir`` (referenced relative to the deck's folder, its parent)."""
    root, images_dir = Path(root), Path(images_dir)
    images_dir.mkdir(parents=True, exist_ok=True)
    from .structure import quarto_book

    book_title = title or quarto_book(root).get("title", "oraclegap")
    parts = ["---", f"title: {json.dumps(str(book_title))}", 'subtitle: "A 90-minute class from the book\'s own figures"',
             "format:", "  revealjs:", "    slide-number: true", "    embed-resources: false",
             "    smaller: true", "    scrollable: true",
             # math as HTML: reveal.js would fetch MathJax 2 from a CDN, and the deck works offline
             "    html-math-method: plain", "---", ""]
    chapters = [p for p in quarto_pages(root) if p.is_chapter and (root / p.file).is_file()]
    if not chapters:
        raise ValueError(f"no executed chapters under {root / EXECUTED_DIR}; run `make book` first")
    for page in chapters:
        d = chapter_digest(json.loads((root / page.file).read_text(encoding="utf-8")))
        parts += [f"# {d['title']}", ""]
        if d["question"]:
            parts += [_clean_markdown(d["question"]), ""]
        for fig in d["figures"]:
            name = f"{Path(page.file).stem}-{fig['label']}.png"
            (images_dir / name).write_bytes(fig["png"])
            parts += [f"## {fig['caption'].split('. ')[0][:90] or fig['label']}", "",
                      f"![{fig['caption']}]({images_dir.name}/{name}){{fig-align=\"center\" height=\"480\"}}", ""]
        if d["takeaways"]:
            parts += ["## Takeaways", "", *(_clean_markdown(t) for t in d["takeaways"]), ""]
    return "\n".join(parts) + "\n"


def write_slides(root: Path, stage: Path) -> Path:
    """Write ``stage/slides.qmd`` and its images (``stage/slide-images/``); returns the deck's path."""
    stage = Path(stage)
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    deck = stage / "slides.qmd"
    deck.write_text(slide_deck(root, stage / "slide-images"), encoding="utf-8")
    return deck
