"""The book's execution cache: which changes invalidate a chapter's key, and which do not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from oraclegap import _datalog, book
from oraclegap.book import cache

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def project(tmp_path):
    """A project with one chapter source, a library copy, a data file read and a declared-absent file."""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "chapters").mkdir()
    (tmp_path / "data").mkdir()
    lib = tmp_path / "lib" / "pkg"
    (lib / "sub").mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    (lib / "sub" / "mod.py").write_text("X = 1\n")
    (tmp_path / "notebooks" / "01_a.py").write_text("# %%\nprint(1)\n")
    (tmp_path / "notebooks" / "02_b.py").write_text("# %%\nprint(2)\n")
    (tmp_path / "data" / "x.csv").write_text("a,b\n1,2\n")
    (tmp_path / "README.md").write_text("readme\n")
    executed = tmp_path / "chapters" / "01_a.ipynb"
    executed.write_text("{}")
    return tmp_path, lib, executed


def _key(root, lib, params=None, env=None):
    return cache.static_key(root / "notebooks" / "01_a.py", lib, params if params is not None else {"SMALL": True},
                            env if env is not None else {"OG_EXTERNAL_DIR": "/ext"})


def _store(root, lib, executed):
    data = cache.data_fingerprints([root / "data" / "x.csv", root / "data" / "later.csv"], root)
    cache.write_key(executed, _key(root, lib), data)
    assert cache.stale_reasons(executed, _key(root, lib), root) == []


def _bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_key_stored_beside_the_executed_notebook(project):
    root, lib, executed = project
    _store(root, lib, executed)
    key = json.loads((root / "chapters" / "01_a.key.json").read_text())
    assert key["parameters"] == {"SMALL": True} and key["data_recorded"] is True
    assert set(key["library"]) == {"__init__.py", "sub/mod.py"}
    assert key["data"]["data/x.csv"]["exists"] and not key["data"]["data/later.csv"]["exists"]


def test_nothing_else_invalidates(project):
    root, lib, executed = project
    _store(root, lib, executed)
    (root / "README.md").write_text("changed\n")
    (root / "notebooks" / "02_b.py").write_text("# %%\nprint('other chapter')\n")
    (root / "_quarto.yml").write_text("book: {}\n")
    (root / "data" / "unread.csv").write_text("not read by the chapter\n")
    _bump_mtime(root / "data" / "x.csv")  # touched, same bytes
    _bump_mtime(lib / "sub" / "mod.py")
    (lib / "sub" / "__pycache__").mkdir()
    (lib / "sub" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    assert cache.stale_reasons(executed, _key(root, lib), root) == []


def test_a_changed_library_file_invalidates(project):
    root, lib, executed = project
    _store(root, lib, executed)
    (lib / "sub" / "mod.py").write_text("X = 2\n")
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["library changed: sub/mod.py"]


def test_a_new_or_removed_library_file_invalidates(project):
    root, lib, executed = project
    _store(root, lib, executed)
    (lib / "sub" / "new.py").write_text("")
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["library changed: sub/new.py"]
    (lib / "sub" / "new.py").unlink()
    (lib / "sub" / "mod.py").unlink()
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["library changed: sub/mod.py"]


def test_a_changed_parameter_invalidates(project):
    root, lib, executed = project
    _store(root, lib, executed)
    assert cache.stale_reasons(executed, _key(root, lib, params={}), root) == ["parameters changed: SMALL"]
    assert cache.stale_reasons(executed, _key(root, lib, params={"SMALL": True, "SEED": 1}), root) == [
        "parameters changed: SEED"
    ]
    assert cache.stale_reasons(executed, _key(root, lib, env={"OG_EXTERNAL_DIR": "/other"}), root) == [
        "environment changed: OG_EXTERNAL_DIR"
    ]


def test_a_changed_data_file_invalidates(project):
    root, lib, executed = project
    _store(root, lib, executed)
    (root / "data" / "x.csv").write_text("a,b\n1,3\n")  # same size, new bytes
    _bump_mtime(root / "data" / "x.csv")
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["data changed: data/x.csv"]


def test_data_appearing_or_vanishing_invalidates(project):
    root, lib, executed = project
    _store(root, lib, executed)
    (root / "data" / "later.csv").write_text("now present\n")
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["data changed: data/later.csv"]
    (root / "data" / "later.csv").unlink()
    (root / "data" / "x.csv").unlink()
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["data changed: data/x.csv"]


def test_a_changed_notebook_invalidates(project):
    root, lib, executed = project
    _store(root, lib, executed)
    (root / "notebooks" / "01_a.py").write_text("# %%\nprint(10)\n")
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["notebook source changed"]


def test_missing_or_unrecorded_keys_never_match(project):
    root, lib, executed = project
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["no cache key beside the executed notebook"]
    cache.write_key(executed, _key(root, lib), None)
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["the last run's data reads were not recorded"]
    cache.drop_key(executed)
    executed.unlink()
    assert cache.stale_reasons(executed, _key(root, lib), root) == ["not executed yet"]


def test_folder_fingerprints(tmp_path):
    d = tmp_path / "pool"
    d.mkdir()
    (d / "a.npz").write_bytes(b"1")
    fp = cache.fingerprint(d)
    assert cache.same_fingerprint(fp, d)
    (d / "b.json").write_text("{}")
    assert not cache.same_fingerprint(fp, d)
    (d / "b.json").unlink()
    (d / "a.npz").write_bytes(b"2")
    assert not cache.same_fingerprint(fp, d)


def test_datalog_records_reads_under_roots_and_declarations(tmp_path):
    """In a fresh process (audit hooks cannot be removed): reads under the roots are recorded,
    writes, ignored folders and files elsewhere are not; declarations are, present or not."""
    root, other, ignored = tmp_path / "proj", tmp_path / "elsewhere", tmp_path / "proj" / "lib"
    for d in (root / "data", other, ignored):
        d.mkdir(parents=True)
    for f in (root / "data" / "read.csv", other / "o.csv", ignored / "m.py"):
        f.write_text("x")
    log = tmp_path / "log.jsonl"
    code = textwrap.dedent(f"""
        import numpy as np, pathlib
        from oraclegap import _datalog
        assert _datalog.start()
        open({str(root / 'data' / 'read.csv')!r}).read()
        np.save({str(root / 'data' / 'arr.npy')!r}, np.zeros(2))   # a write
        np.load({str(root / 'data' / 'arr.npy')!r})                 # then a read
        open({str(other / 'o.csv')!r}).read()
        open({str(ignored / 'm.py')!r}).read()
        open({str(root / 'data' / 'new.txt')!r}, 'w').write('w')
        _datalog.declare(pathlib.Path({str(root / 'data' / 'absent.npz')!r}))
    """)
    env = dict(os.environ, **{_datalog.ENV_LOG: str(log), _datalog.ENV_ROOTS: str(root), _datalog.ENV_IGNORE: str(ignored)})
    env["PYTHONPATH"] = str(ROOT / "lib") + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    started, declared, read = _datalog.read_log(log)
    assert started
    assert declared == [str(root / "data" / "absent.npz")]
    assert read == [str(root / "data" / "arr.npy"), str(root / "data" / "read.csv")]


def test_datalog_is_off_without_its_variable(monkeypatch, tmp_path):
    monkeypatch.delenv(_datalog.ENV_LOG, raising=False)
    _datalog.declare(tmp_path / "x")
    assert not list(tmp_path.iterdir())


CHAPTER = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Cached

# %% tags=["parameters"]
SMALL = False
SEED = 0

# %%
from pathlib import Path
rows = Path("data/rows.csv").read_text().splitlines()
print(len(rows), SMALL)
'''


def _tiny_book(root: Path) -> None:
    """A book of a preface and one chapter (:data:`CHAPTER`) that reads data/rows.csv."""
    (root / "_quarto.yml").write_text("book:\n  title: T\n  chapters:\n    - index.qmd\n    - chapters/01_c.ipynb\n")
    (root / "index.qmd").write_text("# Preface {.unnumbered}\n")
    (root / "notebooks").mkdir()
    (root / "notebooks" / "01_c.py").write_text(CHAPTER)
    (root / "data").mkdir()
    (root / "data" / "rows.csv").write_text("a\nb\n")


@pytest.mark.slow
@pytest.mark.notebooks
def test_build_executes_only_what_changed(tmp_path, capsys, monkeypatch):
    """End to end with a kernel: build, rebuild (cached), change the data file (re-executed),
    --force; with no Quarto the fallback renders and says why."""
    _tiny_book(tmp_path)
    from oraclegap.book import quarto as bq

    monkeypatch.setattr(bq, "find_quarto", lambda root, install=True: bq.Quarto(None, tried=("no quarto here (test)",)))
    r1 = book.build(tmp_path, small=True)
    assert r1["executed"] == ["01_c"] and r1["renderer"] == "fallback" and r1["small"]
    out = capsys.readouterr().out
    assert "no quarto here (test)" in out and "nbconvert fallback" in out
    key = json.loads((tmp_path / "chapters" / "01_c.key.json").read_text())
    assert "data/rows.csv" in key["data"]
    assert "Reduced build" in (tmp_path / "_book" / "chapters" / "01_c.html").read_text()
    r2 = book.build(tmp_path, small=True)
    assert r2["executed"] == [] and r2["cached"] == ["01_c"]
    assert "01_c: cached" in capsys.readouterr().out
    (tmp_path / "data" / "rows.csv").write_text("a\nb\nc\n")
    r3 = book.build(tmp_path, small=True)
    assert r3["executed"] == ["01_c"]
    assert "data changed: data/rows.csv" in capsys.readouterr().out
    r4 = book.build(tmp_path, small=False)
    assert r4["executed"] == ["01_c"] and not r4["small"]
    assert book.build(tmp_path, force=True)["executed"] == ["01_c"]


def test_a_changed_lock_or_library_version_re_executes(project):
    root, lib, executed = project
    lock = {"sha256": "a" * 64, "versions": {"python": "3.11.7", "numpy": "2.4.6"}}

    def key(lk):
        return cache.static_key(root / "notebooks" / "01_a.py", lib, {"SMALL": True}, {"OG_EXTERNAL_DIR": "/ext"}, lock=lk)

    cache.write_key(executed, key(lock), cache.data_fingerprints([root / "data" / "x.csv"], root))
    assert cache.stale_reasons(executed, key(lock), root) == []
    assert cache.stale_reasons(executed, key(dict(lock, sha256="b" * 64)), root) == [
        "dependency lock changed (requirements.lock)"]
    drift = dict(lock, versions={"python": "3.11.7", "numpy": "2.5.0"})
    assert cache.stale_reasons(executed, key(drift), root) == ["installed library versions changed: numpy"]


def test_lock_key_reads_the_project_lock(tmp_path):
    assert cache.lock_key(tmp_path)["sha256"] is None
    (tmp_path / "requirements.lock").write_text("x==1\n")
    k = cache.lock_key(tmp_path)
    assert len(k["sha256"]) == 64 and "numpy" in k["versions"] and "python" in k["versions"]


@pytest.mark.notebooks
def test_an_unchanged_rebuild_skips_the_render(tmp_path, capsys, monkeypatch):
    """Quarto (stubbed here: it writes the pages and counts its calls) renders again only when a
    chapter executed, a page or setting changed, a file of the last render is gone or was
    rewritten, or --force; otherwise _book/ is already what a render would give and the rebuild
    says so."""
    _tiny_book(tmp_path)
    from oraclegap.book import quarto as bq

    calls = []

    def fake_render(root, quarto, profile=None, quiet=False):
        calls.append(profile)
        out = Path(root) / "_book"
        (out / "chapters").mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text("<html><body><main>preface</main></body></html>")
        (out / "chapters" / "01_c.html").write_text("<html><body><main>c</main></body></html>")
        return True, "Output created: _book/index.html\n"

    monkeypatch.setattr(bq, "find_quarto", lambda root, install=True: bq.Quarto("/fake/quarto", "a stub", "1.7.34"))
    monkeypatch.setattr(bq, "render", fake_render)
    assert book.build(tmp_path, small=True, kit=False)["executed"] == ["01_c"] and len(calls) == 1
    r = book.build(tmp_path, small=True, kit=False)
    assert r["render_skipped"] and r["executed"] == [] and len(calls) == 1
    assert "render skipped" in capsys.readouterr().out
    (tmp_path / "index.qmd").write_text("# Preface, edited {.unnumbered}\n")
    assert not book.build(tmp_path, small=True, kit=False).get("render_skipped") and len(calls) == 2
    (tmp_path / "_book" / "index.html").unlink()  # a page of the last render gone: render again
    assert not book.build(tmp_path, small=True, kit=False).get("render_skipped") and len(calls) == 3
    assert book.build(tmp_path, small=True, kit=False)["render_skipped"] and len(calls) == 3
    (tmp_path / "_book" / "chapters" / "01_c.html").write_text("re-rendered by hand")  # not ours now
    assert not book.build(tmp_path, small=True, kit=False).get("render_skipped") and len(calls) == 4
    assert book.build(tmp_path, small=True, kit=False)["render_skipped"] and len(calls) == 4
    assert book.build(tmp_path, small=True, kit=False, force=True)["executed"] == ["01_c"] and len(calls) == 5


def _stub_quarto(monkeypatch) -> dict[str, list]:
    """Quarto stubbed for a build with the classroom kit: every render writes the pages of the
    book it is asked for and is counted (``calls``: "book" or "student" renders, "slides")."""
    import importlib

    from oraclegap.book import quarto as bq

    build_module = importlib.import_module("oraclegap.book.build")
    calls: dict[str, list] = {"book": [], "student": [], "slides": []}

    def fake_render(root, quarto, profile=None, quiet=False):
        calls["student" if profile == "student" else "book"].append(profile)
        out = Path(root) / "_book"
        (out / "chapters").mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text('<html><body><main><a href="./oraclegap.pdf">PDF</a></main></body></html>')
        (out / "chapters" / "01_c.html").write_text('<html><body><main><a href="../oraclegap.pdf">c</a></main></body></html>')
        return True, "Output created: _book/index.html\n"

    def fake_deck(stage, quarto, deck):
        calls["slides"].append(deck.name)
        (Path(stage) / "slides.html").write_text("<html><body><section>deck</section></body></html>")
        return True, ""

    monkeypatch.setattr(bq, "find_quarto", lambda root, install=True: bq.Quarto("/fake/quarto", "a stub", "1.7.34"))
    monkeypatch.setattr(bq, "render", fake_render)
    monkeypatch.setattr(build_module, "_render_deck", fake_deck)
    return calls


def _kit_book(root: Path, monkeypatch) -> dict[str, list]:
    """The tiny book with a 90-minute plan, Quarto stubbed (:func:`_stub_quarto`, whose counts it
    returns) and no Chromium: a build makes the whole classroom kit but the PDF."""
    _tiny_book(root)
    (root / "instructors.qmd").write_text("## A 90-minute plan\n\n| minutes | what | where |\n|---|---|---|\n"
                                         "| 0-90 | All of it | @sec-c |\n")
    monkeypatch.setattr("oraclegap.book.check.chromium", lambda: None)
    return _stub_quarto(monkeypatch)


@pytest.mark.notebooks
def test_the_classroom_kit_is_cached_like_the_book(tmp_path, capsys, monkeypatch):
    """make book puts the student edition, the slides and the PDF (or, with no Chromium, the page
    that says how to make it) into _book/; an unchanged rebuild touches none of it, a render of the
    book alone reuses the editions, and a changed page renders them again."""
    calls = _kit_book(tmp_path, monkeypatch)
    b = tmp_path / "_book"
    r = book.build(tmp_path, small=True)
    assert [len(v) for v in calls.values()] == [1, 1, 1]
    assert r["kit"]["student"] == "rendered" and r["kit"]["slides"] == "rendered" and r["kit"]["pdf"] is None
    assert (b / "student" / "index.html").is_file() and (b / "slides" / "index.html").is_file()
    assert "make pdf" in (b / "oraclegap-pdf.html").read_text()
    assert 'href="../oraclegap-pdf.html"' in (b / "chapters" / "01_c.html").read_text()
    assert "no Chromium" in capsys.readouterr().out
    assert book.unowned_book_files(b) == []
    assert book.build(tmp_path, small=True)["render_skipped"] and [len(v) for v in calls.values()] == [1, 1, 1]
    (b / "index.html").unlink()  # the book renders again; its editions are reused
    r = book.build(tmp_path, small=True)
    assert [len(v) for v in calls.values()] == [2, 1, 1] and r["kit"]["student"] == r["kit"]["slides"] == "reused"
    assert (b / "student" / "index.html").is_file() and (b / "slides" / "index.html").is_file()
    (tmp_path / "index.qmd").write_text("# Preface, edited {.unnumbered}\n")
    r = book.build(tmp_path, small=True)
    assert [len(v) for v in calls.values()] == [3, 2, 2] and r["kit"]["student"] == "rendered"
    r = book.build(tmp_path, small=True, only=["01"])  # a rerun of one chapter leaves the kit out
    assert [len(v) for v in calls.values()] == [4, 2, 2] and r["kit"]["student"] is None
    assert "make book" in (b / "student" / "index.html").read_text()


@pytest.mark.notebooks
def test_a_standalone_slides_run_lands_in_the_site_and_is_reused(tmp_path, monkeypatch):
    """make slides renders the deck into _slides/ with the key the kit compares and puts it into
    the built site (_book/slides/), recording it, so the site is still current and the next
    render of the book reuses the deck instead of rendering it again."""
    from oraclegap.book.cli import main

    calls = _kit_book(tmp_path, monkeypatch)
    b = tmp_path / "_book"
    book.build(tmp_path, small=True)
    assert [len(v) for v in calls.values()] == [1, 1, 1]
    (b / "slides" / "index.html").unlink()
    monkeypatch.chdir(tmp_path)
    assert main(["slides"]) == 0 and len(calls["slides"]) == 2
    assert (b / "slides" / "index.html").is_file() and book.unowned_book_files(b) == []
    assert book.build(tmp_path, small=True)["render_skipped"]
    (b / "index.html").unlink()  # the book renders again; the deck of make slides is reused
    r = book.build(tmp_path, small=True)
    assert [len(v) for v in calls.values()] == [2, 1, 2] and r["kit"]["slides"] == "reused"


@pytest.mark.notebooks
def test_no_render_executes_the_chapters_only(tmp_path, monkeypatch):
    """make notebooks (build --no-render): the chapters are executed and cached, nothing is
    rendered and no Quarto is looked for."""
    _tiny_book(tmp_path)
    from oraclegap.book import quarto as bq

    def no_quarto(*a, **k):
        raise AssertionError("--no-render looked for Quarto")

    monkeypatch.setattr(bq, "find_quarto", no_quarto)
    r = book.build(tmp_path, small=True, render=False)
    assert r["executed"] == ["01_c"] and r["renderer"] is None
    assert (tmp_path / "chapters" / "01_c.ipynb").is_file() and not (tmp_path / "_book").exists()
    assert book.build(tmp_path, small=True, render=False)["cached"] == ["01_c"]


def test_the_pdf_is_printed_once_per_book_and_linked(tmp_path):
    """kit.place_pdf prints through the printer it is given and keeps the print for the same
    book; kit.point_pdf_links points every page's PDF link at the PDF or at the page that says
    how to make one; kit.make_pdf records what it changed, so the build still owns every file."""
    from oraclegap.book import kit

    printed = []

    def printer(root, out, pages, parts):
        printed.append(list(pages))
        Path(parts).mkdir(parents=True, exist_ok=True)
        Path(out).write_bytes(b"%PDF-1.4 " + ",".join(pages).encode())
        return Path(out)

    b = tmp_path / "_book"
    (b / "chapters").mkdir(parents=True)
    (b / "index.html").write_text('<a href="./oraclegap.pdf">x</a>')
    (b / "chapters" / "a.html").write_text('<a href="../oraclegap.pdf">x</a> <a href="../other.pdf">y</a>')
    pdf, cached = kit.place_pdf(tmp_path, "k1", ["index.html", "chapters/a.html"], printer)
    assert not cached and pdf.read_bytes().startswith(b"%PDF") and len(printed) == 1
    assert kit.place_pdf(tmp_path, "k1", ["index.html"], printer)[1] and len(printed) == 1
    assert not kit.place_pdf(tmp_path, "k2", ["index.html"], printer)[1] and len(printed) == 2
    assert not (tmp_path / kit.PDF_CACHE / "pages").exists()
    assert kit.point_pdf_links(b, present=False, why="a test") == 2
    assert '<a href="../oraclegap-pdf.html">x</a> <a href="../other.pdf">y</a>' == (b / "chapters" / "a.html").read_text()
    assert "a test" in (b / kit.PDF_HELP).read_text()
    assert kit.point_pdf_links(b, present=True) == 2 and not (b / kit.PDF_HELP).exists()
    assert (b / "index.html").read_text() == '<a href="./oraclegap.pdf">x</a>'
    with pytest.raises(ValueError, match="make book"):
        kit.make_pdf(tmp_path, printer)
    files = sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    (b / ".og-build.json").write_text(json.dumps({"pages": ["index.html"], "render_key": "k2", "files": files}))
    kit.point_pdf_links(b, present=False)
    kit.make_pdf(tmp_path, printer)
    assert book.unowned_book_files(b) == [] and len(printed) == 2  # the print of book k2, from the cache
    assert 'href="./oraclegap.pdf"' in (b / "index.html").read_text()


def test_render_key_follows_the_configured_filters(tmp_path):
    """A Lua filter _quarto.yml names is part of what the render reads: editing it renders again."""
    _tiny_book(tmp_path)
    cfg = (tmp_path / "_quarto.yml").read_text() + "filters:\n  - _filters/f.lua\n"
    (tmp_path / "_quarto.yml").write_text(cfg)
    (tmp_path / "_filters").mkdir()
    (tmp_path / "_filters" / "f.lua").write_text("return {}\n")
    k1 = book.render_key(tmp_path, "Quarto 1.7.34", small=False, profile=None)
    assert book.render_key(tmp_path, "Quarto 1.7.34", small=False, profile=None) == k1
    (tmp_path / "_filters" / "f.lua").write_text("return {} -- edited\n")
    assert book.render_key(tmp_path, "Quarto 1.7.34", small=False, profile=None) != k1


def test_chapters_start_longest_first_by_their_recorded_times(tmp_path):
    rt = tmp_path / "data" / "book"
    rt.mkdir(parents=True)
    (rt / "runtimes.json").write_text(json.dumps({
        "full": {"chapters": {"01_a": 10.0, "02_b": 200.0, "03_c": 50.0, "04_d": 50.0}},
        "small": {"chapters": {"01_a": 30.0, "02_b": 5.0}}}))
    todo = [(Path(f"notebooks/{s}.py"), None) for s in ("01_a", "02_b", "03_c", "04_d", "05_new")]
    full = book.longest_first(todo, book.expected_seconds(tmp_path, small=False))
    # the longest first; equal times keep book order; a chapter without a record goes last
    assert [t[0].stem for t in full] == ["02_b", "03_c", "04_d", "01_a", "05_new"]
    small = book.longest_first(todo, book.expected_seconds(tmp_path, small=True))
    assert [t[0].stem for t in small] == ["01_a", "02_b", "03_c", "04_d", "05_new"]
    (rt / "runtimes.json").write_text("{not json")
    assert book.expected_seconds(tmp_path, small=False) == {}
    assert book.longest_first(todo, {}) == todo


def test_kernels_get_sleeping_openmp_threads_unless_told_otherwise(monkeypatch):
    from oraclegap.book import execute

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    execute._notebook_env()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    execute._notebook_env()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


@pytest.mark.notebooks
def test_the_kernel_stopped_at_once_keeps_what_the_last_cell_wrote(tmp_path):
    """Chapters end with the kernel killed, not shut down gracefully: every output and every file
    the cells wrote must already be there (the last cell writes 8 MB just before the end)."""
    src = tmp_path / "01_w.py"
    src.write_text(CHAPTER.split("# %% tags=")[0] + textwrap.dedent('''\
        # %%
        from pathlib import Path
        data = b"x" * (8 << 20)
        Path("written.bin").write_bytes(data)
        print("wrote", len(data))
        '''))
    out = book.execute_chapter(src, tmp_path / "out.ipynb", cwd=tmp_path)
    import nbformat

    cells = [c for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"]
    assert cells[-1].outputs[0]["text"] == f"wrote {8 << 20}\n"
    assert (tmp_path / "written.bin").stat().st_size == 8 << 20


@pytest.mark.notebooks
def test_a_chapters_csv_downloads_land_beside_its_executed_notebook(tmp_path):
    """A chapter run into a folder of its own (a parameter check, a test) writes its CSV downloads
    there, never into the project's chapters/ that the book's build copies into the site."""
    src = tmp_path / "01_w.py"
    src.write_text(CHAPTER.split("# %% tags=")[0] + textwrap.dedent('''\
        # %%
        import pandas as pd
        from oraclegap import report as R
        print(R.csv_download(pd.DataFrame({"a": [1, 2]}), "01_w-rows"))
        '''))
    (tmp_path / "_quarto.yml").write_text("project: {type: book}\n")  # a project: chapters/ exists
    for run in ("check", "build"):
        out = book.execute_chapter(src, tmp_path / run / "out.ipynb", cwd=tmp_path)
        assert out.exists() and (tmp_path / run / "01_w-rows.csv").read_text() == "a\n1\n2\n"
    assert not (tmp_path / "chapters").exists()


def test_csv_download_follows_the_downloads_variable(tmp_path, monkeypatch):
    import pandas as pd

    from oraclegap import report as R

    monkeypatch.setenv(R.tables.DOWNLOADS_DIR_ENV, str(tmp_path / "here"))
    (tmp_path / "here").mkdir()
    R.csv_download(pd.DataFrame({"a": [1]}), "01_w-one")
    assert (tmp_path / "here" / "01_w-one.csv").is_file()
    R.csv_download(pd.DataFrame({"a": [1]}), "01_w-two", folder=tmp_path)  # an explicit folder wins
    assert (tmp_path / "01_w-two.csv").is_file()
