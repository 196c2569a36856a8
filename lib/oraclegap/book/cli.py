"""The book's command line, ``python -m oraclegap.book``: build, pages, slides, checks, Quarto and PDF.

Each subcommand calls one function of the package (:func:`.build.build`, :func:`.build.render_slides`,
:func:`.check.check_pages`, :func:`.kit.make_pdf`, ...) and turns its errors into one line on
standard error and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import sys
import time

from . import mathjax
from .build import build, render_slides
from .check import check_pages
from .kit import make_pdf, place_part
from .quarto import find_quarto
from .structure import numbering_notes, project_root, structure_problems

__all__ = ["main"]

_DESCRIPTION = "Build and check the book: jupytext -> papermill (cached) -> Quarto (or an nbconvert fallback)."


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m oraclegap.book", description=_DESCRIPTION)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="execute the chapters whose inputs changed and render the book")
    b.add_argument("--small", action="store_true", help="run every chapter with SMALL=True")
    b.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"), default=[],
                   help="a papermill parameter for every chapter (VALUE read as JSON, else as YAML "
                        "like papermill's -y, else as text: -p ADAPTERS '[a, b]' passes a list)")
    b.add_argument("--only", action="append", help="chapter number prefix to run, e.g. 01 (repeatable)")
    b.add_argument("--renderer", choices=("auto", "quarto", "fallback"), default="auto")
    b.add_argument("--force", action="store_true", help="execute every chapter, cached or not")
    b.add_argument("--record-times", action="store_true",
                   help="when every chapter executed in this run, record the times in data/book/runtimes.json "
                        "(the instructors' page reads them: run `book pages` after)")
    b.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="chapters executed side by side (default: CPU count, at most 4; $OG_BOOK_JOBS)")
    b.add_argument("--student", action="store_true",
                   help="render the student edition (no exercise solutions) into _book-student/ and "
                        "put it into the site (_book/student/) when _book/ is built")
    b.add_argument("--no-kit", dest="kit", action="store_false", default=None,
                   help="leave the classroom kit (student edition, slides, PDF) out of _book/ "
                        "(it is left out anyway with --only)")
    b.add_argument("--no-render", dest="render", action="store_false",
                   help="execute the chapters into chapters/ and stop (no Quarto needed: make notebooks)")
    pg = sub.add_parser("pages", help="rewrite the pages generated from the library (data.qmd from the dataset registry)")
    pg.add_argument("--time-audit", action="store_true",
                    help="first time the instructors' class audit (needs its released data) and record it")
    sub.add_parser("slides", help="render the class slides (revealjs) from the executed chapters into _slides/ "
                                 "and put them into the site (_book/slides/) when _book/ is built")
    sub.add_parser("check", help="check the rendered site (_book/: the book, its student edition and slides) "
                                "statically and in headless Chromium")
    sub.add_parser("structure", help="check _quarto.yml against notebooks/ and cross-references")
    sub.add_parser("quarto", help="find or install Quarto (PATH, .quarto-kit/, $OG_QUARTO_KIT, PyPI) and say which")
    sub.add_parser("pdf", help="print the rendered pages to _book/oraclegap.pdf with headless Chromium "
                              "and link it from the book")
    from . import params as book_params

    book_params.add_arguments(sub.add_parser(
        "check-params", help="execute every parameter change the book lists (book.params) at --small "
                             "into .cache/check-params/ and run the prose checks on each"))
    args = ap.parse_args(argv)
    if args.cmd == "check-params":
        return book_params.run_command(args)
    if args.cmd == "build":
        params = {name: book_params.parse_value(value) for name, value in args.parameter}
        try:
            res = build(small=args.small, parameters=params, only=args.only, renderer=args.renderer,
                        force=args.force, student=args.student, jobs=args.jobs, kit=args.kit,
                        render=args.render)
            if args.record_times:
                from .pages import record_times

                print(f"book: {record_times(project_root(), res)}")
        except (ValueError, RuntimeError) as exc:
            print(f"book build failed: {exc}", file=sys.stderr)
            return 1
        return 0
    try:
        root = project_root()
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if args.cmd == "quarto":
        t0 = time.perf_counter()
        q = find_quarto(root, install=True)
        _, math_note = mathjax.install_mathjax(root)
        print(f"mathjax: {math_note}")
        print(f"quarto: {q.describe()} [{time.perf_counter() - t0:.1f} s]"
              + ("" if q else "; `make book` will use the nbconvert fallback and the Quarto tests will skip"))
        return 0
    if args.cmd == "pages":
        from .pages import record_audit_time, write_pages

        if args.time_audit:
            try:
                print(f"pages: {record_audit_time(root)}")
            except ValueError as exc:
                print(f"pages: {exc}", file=sys.stderr)
                return 2
        changed = write_pages(root)
        print("pages: " + (", ".join(p.name for p in changed) + " rewritten" if changed else "up to date"))
        return 0
    if args.cmd == "slides":
        try:
            res = render_slides(root)
            placed = place_part(root, "slides")
        except (ValueError, RuntimeError) as exc:
            print(f"slides failed: {exc}", file=sys.stderr)
            return 1
        print(f"slides: {res['slides']} slide sections in {res['dir']}/index.html"
              + (f", put into the site at {placed.relative_to(root)}/index.html" if placed else ""))
        return 0
    if args.cmd == "pdf":
        try:
            print(f"pdf: {make_pdf(root)}")
        except (ValueError, RuntimeError) as exc:
            print(f"pdf failed: {exc}", file=sys.stderr)
            return 1
        return 0
    if args.cmd == "structure":
        problems = structure_problems(root)
        for note in numbering_notes(root):
            print(f"note: {note}")
    else:
        problems = check_pages(root)
    for p in problems:
        print(f"PROBLEM: {p}")
    print("ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0
