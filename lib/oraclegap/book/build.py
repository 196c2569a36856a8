"""Building the book: execute the chapters whose inputs changed, then render every edition.

:func:`build` runs jupytext -> papermill for each chapter (cached by :mod:`.cache`, several side
by side) and renders ``_book/`` with Quarto (:mod:`.quarto`) or the nbconvert fallback
(:mod:`.fallback`), skipping the render when its inputs are unchanged (:func:`render_key`);
:func:`render_student` and :func:`render_slides` render the other editions (:mod:`.editions`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .. import _buildinfo, _datalog
from . import buildline, cache, editions, mathjax, slides
from . import kit as classroom
from . import quarto as quarto_tools
from .execute import error_outputs, execute_chapter
from .fallback import render_fallback
from .quarto import Quarto
from .structure import (
    BOOK_DIR,
    EXECUTED_DIR,
    chapter_sources,
    numbering_notes,
    project_root,
    quarto_pages,
    structure_problems,
)

__all__ = [
    "SMALL_PROFILE",
    "SMALL_NOTE",
    "STUDENT_NOTE",
    "build",
    "default_jobs",
    "expected_seconds",
    "longest_first",
    "render_key",
    "render_student",
    "render_slides",
    "unowned_book_files",
    "files_digest",
    "execute_recorded",
    "BUILD_RECORD",
]

SMALL_PROFILE = "small"  # _quarto-small.yml: the reduced-build banner on every page
SMALL_NOTE = (
    "Reduced build: the chapters ran with SMALL = True (fewer prompts, draws and repetitions), so "
    "every number here is from a smaller run than the full book's; make book builds the full version."
)


def _library_dir() -> Path:
    import oraclegap

    return Path(oraclegap.__file__).resolve().parent


def _environment_key() -> dict:
    from .. import datasets

    return {"OG_EXTERNAL_DIR": str(datasets.external_dir().resolve())}


def _data_roots(root: Path) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """Where the kernel's reads count as data (the project, the external folder), and what is
    excluded (sources hashed on their own, build output, hidden folders, temporary files)."""
    from .. import datasets

    roots = (root, datasets.external_dir())
    ignore = [_library_dir(), root / "lib", root / "notebooks", root / EXECUTED_DIR, root / BOOK_DIR, root / "screenshots"]
    tmp = Path(tempfile.gettempdir()).resolve()
    if tmp not in root.resolve().parents:  # a project inside the temporary folder keeps its data
        ignore.append(tmp)
    ignore += [p for p in root.iterdir() if p.name.startswith(".")]
    if os.environ.get("MPLCONFIGDIR"):
        ignore.append(Path(os.environ["MPLCONFIGDIR"]))
    return tuple(p.resolve() for p in roots), tuple(p.resolve() for p in ignore)


def default_jobs() -> int:
    """Chapters executed at a time by default: ``$OG_BOOK_JOBS``, else the CPU count, at most 4."""
    env = os.environ.get("OG_BOOK_JOBS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"OG_BOOK_JOBS must be a whole number of chapters, got {env!r}") from None
    return max(1, min(4, os.cpu_count() or 1))


def expected_seconds(root: Path, *, small: bool) -> dict[str, float]:
    """Chapter stem -> its last recorded run time (:data:`.pages.RUNTIMES`, the mode's record:
    ``small`` or ``full``); empty when none is recorded or the record cannot be read."""
    from .pages import RUNTIMES

    try:
        rec = json.loads((Path(root) / RUNTIMES).read_text(encoding="utf-8"))
        chapters = rec["small" if small else "full"]["chapters"]
        return {str(k): float(v) for k, v in chapters.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def longest_first(todo: list, expected: dict[str, float]) -> list:
    """The chapters to execute, longest expected first (ties and chapters without a record keep
    book order, after the recorded ones): with chapters side by side, starting the longest first
    keeps the last one from running alone at the end (longest-processing-time scheduling)."""
    known = [t for t in todo if t[0].stem in expected]
    known.sort(key=lambda t: -expected[t[0].stem])  # stable: ties keep book order
    return known + [t for t in todo if t[0].stem not in expected]


def files_digest(base: Path, files) -> str | None:
    """sha256 over the relative names and SHA-256s (:func:`.cache.file_sha256`) of ``files``
    under ``base``, in the order given; None when one of them is gone."""
    import hashlib

    h = hashlib.sha256()
    for rel in files:
        try:
            h.update(f"{rel}\0{cache.file_sha256(Path(base) / rel)}\n".encode())
        except OSError:
            return None
    return h.hexdigest()


def render_key(root: Path, renderer: str, *, small: bool, profile: str | None, with_kit: bool = False) -> str:
    """What the rendered book depends on, hashed: every page source and setting Quarto reads
    (the project's ``*.qmd``, ``_quarto*.yml`` and ``*.bib``, the Lua filters ``_quarto.yml``
    names, the executed chapters), the
    renderer, the profile and the build line's facts other than its date (commit, dirty flag,
    lock, versions), and whether the classroom kit goes with it (``with_kit``). The library itself
    needs no place here: any change to it re-executes the chapters, and a build that executed a
    chapter always renders."""
    import hashlib

    root = Path(root)
    info = _buildinfo.build_info(root, renderer=renderer, small=small)
    info.pop("date", None)
    files = sorted({f.relative_to(root).as_posix() for f in (
        *root.glob("*.qmd"), *root.glob("_quarto*.yml"), *root.glob("*.bib"), *editions.book_inputs(root),
        *(root / EXECUTED_DIR).glob("*.ipynb"))})
    facts = json.dumps({"info": info, "profile": profile, "files": files_digest(root, files),
                        **({"kit": True} if with_kit else {})},
                       sort_keys=True, default=str)
    return hashlib.sha256(facts.encode()).hexdigest()


def execute_recorded(src: Path, out: Path, params: dict, static: dict, root: Path, *, log: Path,
                     name: str, say=None) -> tuple[str | None, float]:
    """Execute the chapter source ``src`` into ``out`` with papermill ``params`` (from ``root``,
    the kernel recording its data reads in ``log``) and, when it ran clean, write the execution
    cache's key of ``out``: ``static`` (:func:`.cache.static_key`) with the fingerprints of the
    data files it read. Returns (failure, seconds): failure is None for a clean run, else the
    exception's type and the last line of its message, or the notebook's first error output (a
    failed run gets no key, so it runs again next time). ``say`` (default: a progress-bar-safe
    print) gets the warning, labelled ``name``, that the kernel recorded no data reads."""
    import nbformat

    cache.drop_key(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data_roots, data_ignore = _data_roots(root)
    t0 = time.perf_counter()
    failure = None
    try:
        execute_chapter(src, out, params, cwd=root, datalog=log, data_roots=data_roots, data_ignore=data_ignore)
    except Exception as exc:  # papermill raises its own error types; the notebook holds the error
        failure = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[-1][:200]}"
    secs = time.perf_counter() - t0
    if failure is None and out.exists():
        errs = error_outputs(nbformat.read(out, as_version=4))
        failure = errs[0] if errs else None
    if failure is None:
        started, declared, read = _datalog.read_log(log)
        if not started:
            (say or _say)(f"  {name}: warning: the kernel did not record its data reads; it will run again next time")
        cache.write_key(out, static, cache.data_fingerprints(declared + read, root) if started else None)
    log.unlink(missing_ok=True)
    return failure, secs


def _rendered_is_current(root: Path, key: str) -> bool:
    """``_book/`` was rendered from inputs with this :func:`render_key` and still holds exactly
    the files that build wrote (same names, same bytes: a page re-rendered by hand, edited or
    deleted since means a new render)."""
    rec = root / BOOK_DIR / BUILD_RECORD
    try:
        manifest = json.loads(rec.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("render_key") != key:
        return False
    files, digest = manifest.get("files"), manifest.get("files_digest")
    return isinstance(files, list) and digest is not None and files_digest(root / BOOK_DIR, files) == digest


def _ran_small(executed: Path) -> bool:
    key = cache.read_key(executed)
    return bool(key and (key.get("parameters") or {}).get("SMALL"))


def _say(msg: str) -> None:
    from tqdm.auto import tqdm

    tqdm.write(msg)
    sys.stdout.flush()


#: What ``python -m oraclegap.book pdf`` adds to ``_book/`` after a build (:data:`.classroom.KIT_OUTPUTS`).
_PDF_OUTPUTS = classroom.KIT_OUTPUTS
BUILD_RECORD = ".og-build.json"


def unowned_book_files(book: Path) -> list[str]:
    """Files under ``_book/`` that no build (its record lists what it wrote) and no ``pdf`` run
    wrote: a note of yours. A folder without a record of its files (an older build) has none."""
    rec = book / BUILD_RECORD
    if not rec.is_file():
        return []
    try:
        files = set(json.loads(rec.read_text(encoding="utf-8"))["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return sorted(rel for rel in (p.relative_to(book).as_posix() for p in book.rglob("*") if p.is_file() or p.is_symlink())
                  if rel not in files and rel != BUILD_RECORD and not rel.startswith(_PDF_OUTPUTS))


def _refuse_unowned(book: Path) -> None:
    theirs = unowned_book_files(book)
    if theirs:
        raise ValueError(f"{book} holds files no build wrote ({', '.join(theirs[:4])}{', ...' if len(theirs) > 4 else ''}); "
                         f"the book is rendered into {book.name}/ from scratch: move them out first")


def build(
    root: Path | None = None,
    *,
    small: bool = False,
    parameters: dict | None = None,
    only: list[str] | None = None,
    renderer: str = "auto",
    force: bool = False,
    quarto: Quarto | None = None,
    student: bool = False,
    jobs: int | None = None,
    kit: bool | None = None,
    render: bool = True,
) -> dict:
    """Execute the chapters whose inputs changed (all with ``force``) and render the book with
    ``quarto`` (default: the one :func:`.quarto.find_quarto` finds or installs); returns a summary dict
    (raises ``ValueError``/``RuntimeError`` on failure). ``student``: render the student edition
    (no exercise solutions, a banner saying so) into ``_book-student/`` instead of ``_book/``
    (:mod:`.editions`). ``jobs``: chapters executed side by side (default :func:`default_jobs`:
    the machine's cores, at most 4; each chapter in its own kernel, outputs the same). ``kit``:
    put the classroom kit (:mod:`.kit`: student edition, slides, PDF) into ``_book/`` with the
    book (default: yes, unless ``only`` names chapters); ``render=False`` executes the chapters
    and stops (``make notebooks``: no Quarto needed)."""
    from tqdm.auto import tqdm

    if renderer not in ("auto", "quarto", "fallback"):
        raise ValueError(f"renderer must be 'auto', 'quarto' or 'fallback', got {renderer!r}")
    t_start = time.perf_counter()
    root = project_root(root)
    _refuse_unowned(root / BOOK_DIR)  # before any work: _book/ is replaced, and nothing of yours goes with it
    problems = structure_problems(root)
    if problems and only:
        print("warning: the book's structure has problems:\n  " + "\n  ".join(problems), file=sys.stderr)
    elif problems:
        raise ValueError("the book's structure has problems:\n  " + "\n  ".join(problems))
    for note in numbering_notes(root):
        print(f"note: {note}")
    params = dict(parameters or {})
    if small:
        params["SMALL"] = True
    sources = chapter_sources(root)
    if only:
        sources = [s for s in sources if any(s.name.startswith(o) for o in only)]
        if not sources:
            raise ValueError(f"--only {only} matches no chapter in notebooks/")
    lib_dir = _library_dir()
    env_key = _environment_key()
    executed, cached, failures, times = [], [], [], {}
    t_exec = time.perf_counter()
    lock = cache.lock_key(root)
    todo = []
    for src in sources:
        out = root / EXECUTED_DIR / f"{src.stem}.ipynb"
        static = cache.static_key(src, lib_dir, params, env_key, lock=lock)
        reasons = ["--force"] if force else cache.stale_reasons(out, static, root)
        if not reasons:
            cached.append(src.stem)
            _say(f"  {src.stem}: cached (source, library, parameters and data unchanged)")
        else:
            todo.append((src, out, static, reasons))

    def run_one(src: Path, out: Path, static: dict, reasons: list[str]) -> tuple[bool, str | None, float]:
        """Execute one chapter; (ran, failure or None, seconds). Chapters never read each other's
        outputs, so they may run side by side (each in its own kernel process)."""
        _say(f"  {src.stem}: executing ({'; '.join(reasons)})")
        failure, secs = execute_recorded(src, out, params, static, root, name=src.stem,
                                         log=out.with_name(f".{src.stem}.datalog"))
        _say(f"  {src.stem}: {secs:.1f} s")
        return out.exists(), None if failure is None else f"{src.name}: {failure}", secs

    n_jobs = max(1, min(int(jobs or default_jobs()), len(todo) or 1))
    todo = longest_first(todo, expected_seconds(root, small=bool(params.get("SMALL"))))
    results: dict[str, tuple[bool, str | None, float]] = {}
    with tqdm(total=len(todo), desc=f"chapters ({n_jobs} at a time)", unit="chapter") as bar:
        if n_jobs == 1:
            for item in todo:
                results[item[0].stem] = run_one(*item)
                bar.update(1)
        else:
            from concurrent.futures import ThreadPoolExecutor, as_completed

            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                futs = {pool.submit(run_one, *item): item[0].stem for item in todo}
                for fut in as_completed(futs):
                    results[futs[fut]] = fut.result()
                    bar.update(1)
    for src, *_ in todo:  # in book order, whatever finished first
        ran, failure, secs = results[src.stem]
        times[src.stem] = secs
        if ran:
            executed.append(src.stem)
        if failure:
            failures.append(failure)
    exec_s = time.perf_counter() - t_exec
    if failures:
        raise RuntimeError("chapters failed:\n  " + "\n  ".join(failures))
    if not render:
        total = time.perf_counter() - t_start
        print(f"book: {len(executed)} chapter(s) executed ({exec_s:.1f} s), {len(cached)} from the cache, into "
              f"{root / EXECUTED_DIR}/ (not rendered); total {total:.1f} s")
        return {"renderer": None, "executed": executed, "cached": cached, "seconds": times,
                "render_seconds": 0.0, "total_seconds": total, "small": bool(params.get("SMALL")), "jobs": n_jobs}

    # ------------------------------------------------------------------ render
    pages = quarto_pages(root)
    chapter_pages = [p for p in pages if p.is_chapter]
    have = [root / p.file for p in chapter_pages if (root / p.file).is_file()]
    missing = [Path(p.file).stem for p in chapter_pages if not (root / p.file).is_file()]
    small_book = any(_ran_small(p) for p in have)
    reason = None
    if renderer == "fallback":
        reason = "asked for (--renderer fallback)"
    elif missing:
        reason = f"chapters not executed yet: {', '.join(missing)} (Quarto renders every page of _quarto.yml)"
    else:
        quarto = quarto or quarto_tools.find_quarto(root, install=True)
        if not quarto:
            reason = quarto.describe()
    if renderer == "quarto" and reason:
        raise ValueError(f"renderer='quarto' but Quarto cannot render: {reason}")
    if student:
        if reason is not None:
            raise ValueError(f"the student edition needs Quarto: {reason}")
        t_render = time.perf_counter()
        info = render_student(root, quarto, small=small_book)
        render_s = time.perf_counter() - t_render
        placed = classroom.place_part(root, "student")
        total = time.perf_counter() - t_start
        print(f"book: student edition ({info['solutions_removed']} solutions removed) rendered in {render_s:.1f} s "
              f"into {root / editions.STUDENT_DIR}/"
              + (f" and put into the site, {placed.relative_to(root)}/" if placed else "")
              + f"; total {total:.1f} s")
        return {"renderer": "quarto", "detail": quarto.describe(), "executed": executed, "cached": cached,
                "seconds": times, "render_seconds": render_s, "total_seconds": total, "small": small_book,
                "student": info, "jobs": n_jobs}
    t_render = time.perf_counter()
    _refuse_unowned(root / BOOK_DIR)
    profile = SMALL_PROFILE if small_book and (root / f"_quarto-{SMALL_PROFILE}.yml").is_file() else None
    with_kit = (not only) if kit is None else bool(kit)
    key = render_key(root, quarto.describe(), small=small_book, profile=profile,
                     with_kit=with_kit) if reason is None else None
    if key is not None and not executed and not force and _rendered_is_current(root, key):
        total = time.perf_counter() - t_start
        print(f"book: {len(cached)} chapter(s) from the cache and _book/ rendered from these same pages, "
              f"notebooks and settings: render skipped; total {total:.1f} s")
        return {"renderer": "quarto", "detail": quarto.describe(), "executed": executed, "cached": cached,
                "seconds": times, "render_seconds": 0.0, "total_seconds": total, "small": small_book,
                "jobs": n_jobs, "render_skipped": True}
    shutil.rmtree(root / BOOK_DIR, ignore_errors=True)
    kit_job = classroom.start_kit(root, quarto, small=small_book) if with_kit and reason is None else None
    if reason is None:
        print(f"book: rendering with {quarto.describe()}{' (reduced-build banner)' if profile else ''}"
              + (f"; the classroom kit's {' and '.join(kit_job.futures)} beside it" if kit_job and kit_job.futures else ""),
              flush=True)
        ok, output = quarto_tools.render(root, quarto, profile=profile)
        if not ok:
            if kit_job is not None:
                classroom.wait_kit(kit_job)
            raise RuntimeError("quarto render failed:\n  " + "\n  ".join(output.strip().splitlines()[-15:]))
        used, kind = quarto.describe(), "quarto"
        es5 = mathjax.local_mathjax(root)
        n_math = mathjax.localize(root / BOOK_DIR, es5)
        print(f"book: math: {'MathJax ' + mathjax.MATHJAX_VERSION + ' copied into _book/site_libs/mathjax/ (' + str(n_math) + ' pages, works offline)' if n_math else 'MathJax from the CDN (run `make quarto` with npm to render math offline)'}")
    else:
        print(f"book: rendering with the nbconvert fallback: {reason}", flush=True)
        note = "Rendered with the nbconvert fallback: " + reason + "."
        if small_book:
            note = SMALL_NOTE + " " + note
        render_fallback(root, have, note=note)
        used, kind = "the nbconvert fallback", "fallback"
    render_s = time.perf_counter() - t_render
    rendered = ["index.html"] + [p.html for p in pages if p.file != "index.qmd" and (root / BOOK_DIR / p.html).is_file()]
    info = _buildinfo.build_info(root, renderer=used, small=small_book)
    line = _buildinfo.build_line(info)
    n_links = buildline.add_downloads(root / BOOK_DIR, _chapter_files(root, root))
    n_stamped = buildline.stamp_pages(root / BOOK_DIR, line)
    print(f"book: notebook source and executed notebook linked for download on {n_links} chapter page(s)")
    print(f"book: build line on {n_stamped} page(s): {line}")
    t_kit = time.perf_counter()
    kit_info: dict | None = None
    if kit_job is not None:
        kit_info = classroom.finish_kit(kit_job, key=key, pages=rendered)
    elif reason is None:  # the pages link the kit: say on its pages why this build has none
        why = "--only renders some chapters" if kit is None else "built with --no-kit"
        kit_info = classroom.without_kit(root, why)
        print(f"book: no classroom kit in this build ({why}); make book builds it")
    kit_s = time.perf_counter() - t_kit
    files = sorted(p.relative_to(root / BOOK_DIR).as_posix() for p in (root / BOOK_DIR).rglob("*") if p.is_file())
    manifest = {"renderer": kind, "detail": used, "pages": rendered, "small": small_book,
                "executed": executed, "cached": cached, "build": info, "build_line": line, "files": files,
                "render_key": key, "files_digest": files_digest(root / BOOK_DIR, files), "kit": kit_info}
    (root / BOOK_DIR / BUILD_RECORD).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    total = time.perf_counter() - t_start
    print(
        f"book: {len(executed)} chapter(s) executed ({exec_s:.1f} s), {len(cached)} from the cache; "
        f"rendered with {used} in {render_s:.1f} s into {root / BOOK_DIR}/ (the classroom kit "
        f"{kit_s:.1f} s more); total {total:.1f} s" + (" [reduced build: SMALL]" if small_book else "")
    )
    return {"renderer": kind, "detail": used, "executed": executed, "cached": cached, "seconds": times,
            "render_seconds": render_s, "kit_seconds": kit_s, "kit": kit_info, "total_seconds": total,
            "small": small_book, "jobs": n_jobs}


STUDENT_NOTE = ("**Student edition.** The exercises' solutions are left out of this edition; the "
                "default build (`make book`) shows them folded under each exercise.")


def _banner(*notes: str) -> str:
    body = "\n\n".join(notes)
    return "book:\n  body-header: |\n    ::: {.callout-warning appearance=\"simple\"}\n" + "".join(
        f"    {line}\n" for line in body.splitlines()) + "    :::\n"


def _publish(src: Path, dest: Path) -> None:
    """Move a rendered folder into place (the old one removed only once the new one is there).
    Like ``_book/``, a folder holding files no build wrote is refused (:func:`unowned_book_files`)."""
    _refuse_unowned(dest)
    files = sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file() and p.name != BUILD_RECORD)
    rec = src / BUILD_RECORD
    record = json.loads(rec.read_text(encoding="utf-8")) if rec.is_file() else {}
    rec.write_text(json.dumps(dict(record, files=files, files_digest=files_digest(src, files)), indent=1),
                   encoding="utf-8")
    old = dest.with_name(f".{dest.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        os.replace(dest, old)
    os.replace(src, dest)
    shutil.rmtree(old, ignore_errors=True)


def _chapter_files(root: Path, executed_root: Path) -> dict[str, tuple[Path, Path]]:
    """Page -> (jupytext source, executed notebook) for every chapter of the book."""
    return {p.html: (root / "notebooks" / f"{Path(p.file).stem}.py", executed_root / p.file)
            for p in quarto_pages(root) if p.is_chapter}


def _finish_pages(root: Path, out: Path, renderer: str, small: bool) -> str:
    es5 = mathjax.local_mathjax(root)
    mathjax.localize(out, es5)
    line = _buildinfo.build_line(_buildinfo.build_info(root, renderer=renderer, small=small))
    buildline.stamp_pages(out, line)
    return line


def render_student(root: Path, quarto: Quarto, *, small: bool = False, key: str | None = None,
                   staged: dict[str, int] | None = None, quiet: bool = False) -> dict:
    """Render the student edition of the executed chapters into ``_book-student/``
    (:func:`.editions.stage_student_site`; the banner says which edition it is), recording ``key``
    (default :func:`.kit.kit_key`: the :func:`render_key` of its inputs) for the classroom kit's
    cache. ``staged``: what
    :func:`.editions.stage_student_site` returned when ``.student-stage/`` is staged already;
    ``quiet``: Quarto's progress lines are not printed (a render beside the book's own)."""
    _refuse_unowned(root / editions.STUDENT_DIR)
    key = key if key is not None else classroom.kit_key(root, quarto, "student", small=small)
    stage = root / ".student-stage"
    removed = staged if staged is not None else editions.stage_student_site(root, stage)
    notes = ([SMALL_NOTE] if small else []) + [STUDENT_NOTE]
    banner = stage / f"_quarto-{editions.STUDENT_PROFILE}.yml"
    banner.unlink(missing_ok=True)  # the staged project's entries are links: never write through one
    banner.write_text(_banner(*notes), encoding="utf-8")
    try:
        ok, output = quarto_tools.render(stage, quarto, profile=editions.STUDENT_PROFILE, quiet=quiet)
        if not ok:
            raise RuntimeError("quarto render (student edition) failed:\n  " + "\n  ".join(output.strip().splitlines()[-15:]))
        out = stage / BOOK_DIR
        pages = ["index.html"] + [p.html for p in quarto_pages(root) if p.file != "index.qmd" and (out / p.html).is_file()]
        buildline.add_downloads(out, _chapter_files(root, stage))
        classroom.point_student_links(out)
        line = _finish_pages(root, out, quarto.describe() + ", student edition", small)
        (out / ".og-build.json").write_text(json.dumps({"renderer": "quarto", "edition": "student", "pages": pages,
                                                        "small": small, "solutions_removed": removed,
                                                        "build_line": line, "render_key": key}, indent=1),
                                            encoding="utf-8")
        _publish(out, root / editions.STUDENT_DIR)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return {"dir": str(root / editions.STUDENT_DIR), "solutions_removed": sum(removed.values()), "per_chapter": removed}


def _render_deck(stage: Path, quarto: Quarto, deck: Path) -> tuple[bool, str]:
    """``quarto render DECK --to revealjs --no-execute`` in ``stage``: (ok, output)."""
    import subprocess

    proc = subprocess.run([quarto.path, "render", deck.name, "--to", "revealjs", "--no-execute"],
                          cwd=stage, capture_output=True, text=True)
    return proc.returncode == 0, proc.stdout + proc.stderr


def render_slides(root: Path | None = None, quarto: Quarto | None = None, *, key: str | None = None) -> dict:
    """Render the class deck (:func:`.slides.slide_deck`) with Quarto revealjs into ``_slides/``
    (``_slides/index.html``), recording ``key`` (default :func:`.kit.kit_key`: the
    :func:`render_key` of its inputs) for the classroom kit's cache."""
    root = project_root(root)
    quarto = quarto or quarto_tools.find_quarto(root, install=True)
    if not quarto:
        raise ValueError(f"the slides need Quarto: {quarto.describe()}")
    _refuse_unowned(root / editions.SLIDES_DIR)
    small = any(_ran_small(root / p.file) for p in quarto_pages(root) if p.is_chapter and (root / p.file).is_file())
    key = key if key is not None else classroom.kit_key(root, quarto, "slides", small=small)
    stage = root / ".slides-stage"
    deck = slides.write_slides(root, stage)
    try:
        ok, output = _render_deck(stage, quarto, deck)
        if not ok:
            raise RuntimeError("quarto render (slides) failed:\n  " + "\n  ".join(output.strip().splitlines()[-15:]))
        (stage / "slides.html").rename(stage / "index.html")
        for leftover in (deck,):
            leftover.unlink()
        line = _finish_pages(root, stage, quarto.describe() + ", revealjs slides", small)
        n_slides = (stage / "index.html").read_text(encoding="utf-8").count("<section")
        (stage / ".og-build.json").write_text(json.dumps({"renderer": "quarto", "edition": "slides", "pages": ["index.html"],
                                                          "small": small, "build_line": line, "render_key": key},
                                                         indent=1), encoding="utf-8")
        dest = root / editions.SLIDES_DIR
        tmp = root / ".slides-done"
        shutil.rmtree(tmp, ignore_errors=True)
        os.replace(stage, tmp)
        _publish(tmp, dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return {"dir": str(dest), "slides": n_slides}
