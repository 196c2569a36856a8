"""Build and check the book: jupytext -> papermill (cached) -> Quarto (or an nbconvert fallback).

``python -m oraclegap.book build [--small] [-p NAME VALUE ...] [--only NN] [--force]``
    1. converts each ``notebooks/NN_*.py`` (jupytext py:percent) to ``notebooks/NN_*.ipynb``;
    2. executes it with papermill (kernel ``python3``, parameters injected after the cell
       tagged ``parameters``) into ``chapters/NN_*.ipynb``, from the project root -- only when
       its inputs changed since the executed notebook was made (:mod:`.cache`: the notebook
       source, the library source, the parameters, the dependency lock, the data files the run
       read); ``--force``
       executes every chapter;
    3. renders: ``quarto render --no-execute`` with the Quarto :func:`.quarto.find_quarto`
       finds or installs (PATH, ``.quarto-kit/``, the offline kit, PyPI ``quarto-cli``), with the
       ``small`` profile (a banner on every page) when a chapter ran with ``SMALL``; the
       nbconvert fallback (:mod:`.fallback`) only when no Quarto can be had, with the reason.
       It prints which renderer ran and how long each step took. Every page gets a build line at
       its foot (:mod:`.buildline`: commit, lock hash, library versions, renderer, date, ``--small``);
    4. puts the classroom kit into ``_book/`` (:mod:`.kit`): the student edition (``student/``),
       the slides of the 90-minute plan (``slides/``, :mod:`.slides`) and a PDF of the book
       (``oraclegap.pdf``, when Chromium is there), each made again only when its inputs changed;
       ``--no-kit`` leaves it out, and so does ``--only``. ``--no-render`` stops after step 2
       (``make notebooks``).

``python -m oraclegap.book check``
    checks every page the last build wrote into ``_book/`` (with the student edition and the
    slides there), statically and in headless Chromium (:mod:`.check`): broken images,
    unresolved references, sub-figure panels, error outputs, tables that need horizontal
    scrolling at 1280 px; a screenshot per page goes to ``screenshots/``.

``python -m oraclegap.book quarto`` finds or installs Quarto and says which (``make quarto``);
``python -m oraclegap.book pdf`` prints the rendered pages to ``_book/oraclegap.pdf`` and links it;
``python -m oraclegap.book build --student`` renders the student edition (no solutions) into
``_book-student/``; ``python -m oraclegap.book slides`` renders the class deck into ``_slides/``
(:mod:`.editions`, :mod:`.slides`); both put their render into ``_book/`` too when it is built;
exercises with a numeric answer carry self-checks
(:mod:`.selfcheck`);
``python -m oraclegap.book structure`` checks ``_quarto.yml`` against ``notebooks/``.

The build lives in :mod:`.build`, the command line in :mod:`.cli`. Executed chapters go to
``chapters/`` rather than an underscore folder because Quarto skips ``_``-prefixed paths when it
collects a project.
"""

from __future__ import annotations

from .build import (
    SMALL_PROFILE,
    build,
    default_jobs,
    expected_seconds,
    longest_first,
    render_key,
    render_slides,
    render_student,
    unowned_book_files,
)
from .check import bibliography_problems, book_pages, check_pages, page_problems, print_pdf
from .cli import main
from .execute import error_outputs, execute_chapter, lift_answer, split_float_outputs
from .fallback import render_fallback
from .quarto import KIT_DIR, Quarto, find_quarto, render
from .structure import (
    BOOK_DIR,
    CHAPTER_GLOB,
    EXECUTED_DIR,
    Page,
    cell_options,
    chapter_sources,
    numbering_notes,
    project_root,
    quarto_book,
    quarto_chapters,
    quarto_pages,
    structure_problems,
)

__all__ = [
    "BOOK_DIR",
    "CHAPTER_GLOB",
    "EXECUTED_DIR",
    "KIT_DIR",
    "SMALL_PROFILE",
    "Page",
    "Quarto",
    "project_root",
    "chapter_sources",
    "quarto_book",
    "quarto_pages",
    "quarto_chapters",
    "structure_problems",
    "numbering_notes",
    "cell_options",
    "execute_chapter",
    "split_float_outputs",
    "lift_answer",
    "error_outputs",
    "find_quarto",
    "render",
    "build",
    "default_jobs",
    "expected_seconds",
    "longest_first",
    "render_key",
    "render_student",
    "render_slides",
    "render_fallback",
    "unowned_book_files",
    "book_pages",
    "page_problems",
    "bibliography_problems",
    "check_pages",
    "print_pdf",
    "main",
]
