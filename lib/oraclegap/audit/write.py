"""Writing an audit: ``audit.json`` (:func:`load_numbers` reads it back), the executed report
notebook ``audit.ipynb`` and ``report.html`` (:func:`render_report`), all in a temporary folder beside
the target moved into place at the end (:func:`write_audit`), and the directory rules: which files of
a folder an earlier audit wrote (:func:`owned_files`, the hidden manifest :data:`MANIFEST_NAME`), which
targets are refused before any work (:func:`check_out`) and which temporary folders of killed runs
are removed (:func:`clean_stale_temporaries`)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from .._io import TMP_MARK as _TMP_MARK
from .._io import atomic_write, clean_dead_temps, fsync_dir, make_temp_dir, place_new
from .._validate import link_problem
from ..pool import Pool
from . import compute
from .compute import AuditResult
from .settings import FORMAT_NAME, FORMAT_VERSION

__all__ = ["AUDIT_FILES", "MANIFEST_NAME", "MANIFEST_FORMAT", "TMP_MARK", "load_numbers", "owned_files", "is_audit_dir",
           "clean_stale_temporaries", "check_out", "notebook_source", "render_report", "write_audit"]


# ============================================================================ files
def load_numbers(path) -> dict:
    """Read an ``audit.json`` (checking that it is one)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"audit file {str(path)!r} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{str(path)!r} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{str(path)!r} nests JSON too deeply to read; it is damaged or not an audit") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ValueError(f"{str(path)!r} is not an oraclegap audit (format {data.get('format') if isinstance(data, dict) else None!r})")
    if data.get("version", 0) > FORMAT_VERSION:
        raise ValueError(f"{str(path)!r} has audit format version {data['version']}, newer than this library reads")
    return data


#: The files an audit writes into its folder (and the only ones it ever replaces or removes).
AUDIT_FILES = ("audit.json", "audit.ipynb", "report.html")
#: The hidden manifest in the folder: the files the audit wrote there, with their SHA-256.
MANIFEST_NAME = ".oraclegap-audit.json"
MANIFEST_FORMAT = "oraclegap.audit-files"
#: Marker inside the audit's temporary folder ``.DIR.tmp-<pid>-<token>`` beside DIR (:func:`oraclegap._io.make_temp_dir`).
TMP_MARK = _TMP_MARK


def _sha256(path: Path) -> str:
    """SHA-256 of a file (the book's cache uses the same function)."""
    from ..book.cache import file_sha256

    return file_sha256(path)


def owned_files(out) -> dict:
    """The files of folder ``out`` an earlier audit wrote, as {name: accepted SHA-256 list}: from its
    manifest (:data:`MANIFEST_NAME`), or, for a folder an older version wrote (no manifest, only
    audit files, a valid ``audit.json``), those files. ``{}`` for an empty or absent folder. A folder
    holding other files without a manifest, a manifest naming anything but :data:`AUDIT_FILES`, and
    an audit file changed since the audit wrote it raise ``ValueError``: the audit never replaces
    or deletes a file it did not write."""
    out = Path(out)
    if not out.is_dir():
        return {}
    entries = sorted(p.name for p in out.iterdir())
    man = out / MANIFEST_NAME
    if man.exists():
        try:
            data = json.loads(man.read_text(encoding="utf-8"))
            files = data["files"] if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT else None
            ok = isinstance(files, dict) and all(k in AUDIT_FILES and isinstance(v, list) for k, v in files.items())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, RecursionError):
            ok = False
        if not ok or not isinstance(files, dict):  # (ok implies a dict; said again for the type checker)
            raise ValueError(f"--out {str(out)!r} has a damaged audit manifest {MANIFEST_NAME}; refusing to replace "
                             "anything in it: choose a new or empty directory (or move the audit files out)")
        for name, hashes in files.items():
            f = out / name
            if f.exists() and (not f.is_file() or _sha256(f) not in hashes):
                raise ValueError(f"--out {str(out)!r}: {name} was changed since the audit wrote it; refusing to replace "
                                 "it: move it away (or delete it) and rerun")
        return {k: list(v) for k, v in files.items() if (out / k).exists()}
    if not entries:
        return {}
    if set(entries) <= set(AUDIT_FILES) and "audit.json" in entries:
        try:
            load_numbers(out / "audit.json")
        except ValueError:
            pass
        else:  # written by an older version (before the manifest): every entry is an audit file
            return {name: [_sha256(out / name)] for name in entries}
    theirs = [e for e in entries if e not in AUDIT_FILES]
    raise ValueError(f"--out {str(out)!r} exists and is not an audit directory (no audit manifest; it holds "
                     f"{', '.join(theirs[:4] or entries[:4])}{', ...' if len(theirs) > 4 else ''}); refusing to overwrite "
                     "anything in it: choose a new or empty directory")


def is_audit_dir(path) -> bool:
    """True for a directory an audit wrote (its manifest, or an older version's audit files) or an empty one."""
    path = Path(path)
    if not path.is_dir():
        return False
    try:
        owned_files(path)
    except ValueError:
        return False
    return True


def clean_stale_temporaries(out) -> list:
    """Remove the temporary folders that audits of ``out`` left beside it when they were killed:
    only those whose marker (:data:`TMP_MARK`) names this target and a process of this host that
    no longer runs (:func:`oraclegap._io.clean_dead_temps`, shared with ``export``). A folder
    without that marker is never touched, whatever its name or content. Returns the removed paths."""
    return clean_dead_temps(out)


def _pool_path(source) -> Path | None:
    if source is None or isinstance(source, Pool):
        return None
    spec = os.fspath(source)
    p = Path(spec)
    if not p.exists() and ":" in spec:
        p = Path(spec.rsplit(":", 1)[0])
    return p if p.exists() else None


def check_out(out, pool=None) -> Path:
    """Check an audit's target folder before any work: not a file, not a dangling or looping link, its
    nearest existing ancestor a directory we can write into, POOL (a path) neither inside it nor
    containing it, and, when it exists, an audit folder (:func:`owned_files`) or an empty one.
    Raises ``ValueError``."""
    out = Path(out)
    problem = link_problem(out)
    if problem:
        raise ValueError(f"--out {str(out)!r} {problem}; remove the link or choose another directory")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, expected a directory for the report")
    anc = out
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    problem = link_problem(anc)
    if problem:
        raise ValueError(f"--out {str(out)!r}: {str(anc)!r} {problem}")
    if not anc.is_dir():
        raise ValueError(f"--out {str(out)!r}: {str(anc)!r} is a file, expected a directory")
    src = _pool_path(pool)
    if src is not None:
        o, s_ = out.resolve(), src.resolve()
        if s_ == o or o in s_.parents:
            raise ValueError(f"POOL {str(pool)!r} lies inside --out {str(out)!r}; the report folder must not hold its "
                             "input: choose another --out")
        if s_.is_dir() and s_ in o.parents:
            raise ValueError(f"--out {str(out)!r} lies inside POOL {str(pool)!r}; choose a folder outside the pool")
    owned_files(out)
    for probe_dir in ([out.parent, out] if out.exists() else [anc]):  # where the temporary folder and the files go
        try:
            probe = Path(tempfile.mkdtemp(prefix=f".{out.name}.probe-", dir=probe_dir))
            probe.rmdir()
        except OSError as exc:
            raise ValueError(f"--out {str(out)!r}: cannot write into {str(probe_dir)!r} ({exc.strerror or exc})") from None
    return out


def notebook_source() -> Path:
    """The report notebook shipped inside the package (jupytext py:percent)."""
    return Path(__file__).resolve().parents[1] / "notebooks" / "audit.py"


def _find_quarto() -> str | None:
    """A Quarto to render the report with, installing nothing: ``quarto`` on PATH, else the one
    ``make quarto`` installed into the project's ``.quarto-kit/`` (of this source tree or of the
    current folder), else one in the virtual environment (:func:`oraclegap.book.quarto.find_quarto`)."""
    from ..book.quarto import find_quarto

    for root in dict.fromkeys((Path(__file__).resolve().parents[3], Path.cwd())):
        found = find_quarto(root, install=False, log=lambda *a, **k: None)
        if found:
            return found.path
    return None


def render_report(executed: Path, html_path: Path) -> str:
    """Render an executed report notebook to one HTML page; returns the renderer used.

    Quarto (``quarto render --no-execute``, code hidden, resources embedded, math as plain HTML) when one is found
    (:func:`_find_quarto`) and succeeds, else nbconvert's HTML exporter with the code cells hidden.
    """
    import subprocess

    executed, html_path = Path(executed), Path(html_path)
    quarto = _find_quarto()
    if quarto:
        # math as HTML (pandoc's plain method: τ, G<sub>exp</sub>), so the one self-contained page needs no
        # MathJax from a CDN and reads the same offline
        res = subprocess.run([quarto, "render", executed.name, "--to", "html", "--no-execute", "-M", "echo:false",
                              "-M", "embed-resources:true", "-M", "html-math-method:plain", "--output",
                              html_path.name], cwd=executed.parent, capture_output=True, text=True)
        produced = executed.parent / html_path.name
        if res.returncode == 0 and produced.is_file():
            if produced.resolve() != html_path.resolve():
                os.replace(produced, html_path)
            return "quarto"
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(executed, as_version=4)
    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input = True
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": "oraclegap audit"}})
    html_path.write_text(body, encoding="utf-8")
    return "nbconvert"


def write_audit(pool: Pool, out, *, source: str | None = None, report: bool = True, progress: bool = False,
                timeout: int = 900, **kwargs) -> tuple[AuditResult, dict]:
    """Run :func:`run_audit` and write ``out/audit.json``, ``out/audit.ipynb`` (the executed report
    notebook) and ``out/report.html``.

    The target is checked before any work (:func:`check_out`: a file, an unwritable parent, POOL
    inside ``out``, a folder holding files no audit wrote are refused) and temporary folders that
    killed audits left beside it are removed (:func:`clean_stale_temporaries`). Everything is
    written into a temporary folder ``.OUT.tmp-<pid>-<token>/OUT`` beside ``out``: a new ``out`` is that
    folder moved into place (refused if ``out`` appeared meanwhile); an existing audit folder has only the files the earlier audit
    wrote (its manifest :data:`MANIFEST_NAME`) replaced, each by an atomic rename, and those this
    run does not write (``report.html`` after ``report=False``) removed; any other file in it (a
    note of yours) is kept. The manifest is rewritten first listing both versions and last listing
    the new files, so a run killed in between leaves a folder the next run still recognises.
    ``report=False`` writes ``audit.json`` alone. Returns the result and a dict of the written paths
    and the renderer used. ``kwargs`` go to :func:`run_audit`.
    """
    out = check_out(Path(out), source)
    clean_stale_temporaries(out)
    if report:
        missing = [m for m in ("papermill", "jupytext", "nbconvert", "nbformat") if _missing(m)]
        if missing:
            raise ValueError(f"the HTML report needs {', '.join(missing)} (pip install 'oraclegap[book]'); "
                             "or ask for audit.json alone")
    res = compute.run_audit(pool, source=source, progress=progress, **kwargs)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = make_temp_dir(out, "audit")  # holds the marker; the files are written in work/NAME
    tmp = work / out.name
    tmp.mkdir()
    info: dict[str, str | None] = {"renderer": None}
    try:
        jpath = tmp / "audit.json"
        from .. import _buildinfo

        numbers = dict(res.numbers, build=_buildinfo.build_info(small=bool(res.numbers["settings"]["small"])))
        jpath.write_text(json.dumps(numbers, indent=2, allow_nan=False), encoding="utf-8")
        if report:
            info["renderer"] = _report(tmp, jpath, numbers, timeout)
            from ..book.buildline import stamp_html

            page = tmp / "report.html"
            line = _buildinfo.build_line(dict(numbers["build"], renderer=info["renderer"]))
            page.write_text(stamp_html(page.read_text(encoding="utf-8"), line), encoding="utf-8")
        written = {name: _sha256(tmp / name) for name in AUDIT_FILES if (tmp / name).is_file()}
        old = owned_files(check_out(out, source))  # still safe to replace?
        manifest = lambda files: json.dumps({"format": MANIFEST_FORMAT, "version": 1, "files": files},  # noqa: E731
                                            indent=2, sort_keys=True)
        if not out.exists():
            for extra in [p for p in tmp.iterdir() if p.name not in written]:  # leftovers of the renderer
                shutil.rmtree(extra) if extra.is_dir() and not extra.is_symlink() else extra.unlink()
            (tmp / MANIFEST_NAME).write_text(manifest({k: [v] for k, v in written.items()}), encoding="utf-8")
            try:
                place_new(tmp, out)  # never over a folder that appeared meanwhile
            except FileExistsError:
                raise ValueError(f"--out {str(out)!r} appeared while this audit ran (another run?); nothing was "
                                 "replaced: rerun to update it") from None
        else:
            both = {name: sorted(set(old.get(name, [])) | ({written[name]} if name in written else set()))
                    for name in set(old) | set(written)}
            atomic_write(out / MANIFEST_NAME, manifest(both))
            for name in written:
                os.replace(tmp / name, out / name)
            for name in set(old) - set(written):
                (out / name).unlink(missing_ok=True)
            fsync_dir(out)
            atomic_write(out / MANIFEST_NAME, manifest({k: [v] for k, v in written.items()}))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    info.update({"dir": str(out), "json": str(out / "audit.json")})
    if report:
        info.update({"html": str(out / "report.html"), "notebook": str(out / "audit.ipynb")})
    return res, info


def _missing(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is None


def _execute(src: Path, out: Path, parameters: dict, cwd: Path, timeout: int) -> Path:
    """Execute the report notebook with papermill (through :mod:`oraclegap.book`)."""
    from .. import book

    return book.execute_chapter(src, out, parameters, cwd=cwd, timeout=timeout)


def _report(tmp: Path, jpath: Path, numbers: dict, timeout: int) -> str:
    import nbformat

    src = tmp / "audit_report.py"
    shutil.copyfile(notebook_source(), src)
    out = tmp / "audit.ipynb"
    params = {"AUDIT_JSON": str(jpath.resolve()), "POOL": numbers.get("source", "pool"), "SMALL": numbers["settings"]["small"]}
    try:
        _execute(src, out, params, tmp, timeout)
    except Exception as exc:  # papermill raises its own types; report the notebook's first error line
        msg = str(exc).strip().splitlines()
        raise ValueError(f"the report notebook failed: {type(exc).__name__}: {msg[-1] if msg else ''}") from None
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for c in nbformat.read(out, as_version=4).cells
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    if errors:
        raise ValueError(f"the report notebook failed: {errors[0]}")
    renderer = render_report(out, tmp / "report.html")
    for leftover in (src, tmp / "audit_report.ipynb"):
        if leftover.exists():
            leftover.unlink()
    return renderer
