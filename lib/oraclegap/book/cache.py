"""The execution cache: a chapter is re-executed only when one of its inputs changed.

The executed notebook ``chapters/NN_name.ipynb`` is the cache (as Quarto's freeze would be);
its key is stored beside it in ``chapters/NN_name.key.json``:

* ``notebook`` -- SHA-256 of the jupytext source ``notebooks/NN_name.py``;
* ``library`` -- SHA-256 of every ``*.py`` file of the imported ``oraclegap`` package;
* ``parameters`` -- the papermill parameters (``--small`` is ``SMALL: true``);
* ``environment`` -- where external data are read from (``OG_EXTERNAL_DIR`` resolved);
* ``lock`` -- SHA-256 of the dependency lock file ``requirements.lock`` (a changed dependency
  re-executes every chapter) and the installed versions of the numerical libraries
  (:func:`lock_key`), so a venv that drifted from the lock re-executes too;
* ``data`` -- a fingerprint (size, mtime, SHA-256; or absence) of every data file the run read
  or declared, as recorded by :mod:`oraclegap._datalog` inside the kernel: registry entries
  the chapter resolved or checked (present or not), pool paths it opened, and files it opened
  under ``data/``, the external folder or elsewhere in the project.

A data file whose size and mtime are unchanged counts as unchanged; one whose mtime moved is
hashed again, so touching a file does not invalidate. Nothing else (other chapters, the
README, ``_quarto.yml``) enters a chapter's key.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .._io import atomic_write

__all__ = [
    "KEY_VERSION",
    "key_path",
    "file_sha256",
    "library_hashes",
    "fingerprint",
    "same_fingerprint",
    "static_key",
    "data_fingerprints",
    "stale_reasons",
    "write_key",
    "read_key",
    "drop_key",
    "lock_key",
]

KEY_VERSION = 1
_CHUNK = 1 << 20


def key_path(executed: Path) -> Path:
    """``chapters/NN_name.key.json`` beside the executed notebook ``chapters/NN_name.ipynb``."""
    executed = Path(executed)
    return executed.with_name(executed.stem + ".key.json")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def library_hashes(lib_dir: Path) -> dict[str, str]:
    """``{relative path: SHA-256}`` of every ``*.py`` file under ``lib_dir`` (``__pycache__`` skipped)."""
    lib_dir = Path(lib_dir)
    return {
        p.relative_to(lib_dir).as_posix(): file_sha256(p)
        for p in sorted(lib_dir.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def fingerprint(path: Path) -> dict:
    """What a data path holds now: ``{"exists": False}``, a file's size, mtime and SHA-256, or a
    folder's files (relative path -> file fingerprint)."""
    path = Path(path)
    if path.is_file():
        st = path.stat()
        return {"exists": True, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": file_sha256(path)}
    if path.is_dir():
        files = {
            p.relative_to(path).as_posix(): fingerprint(p)
            for p in sorted(path.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts
        }
        return {"exists": True, "dir": files}
    return {"exists": False}


def same_fingerprint(old: dict, path: Path) -> bool:
    """Whether ``path`` still holds what ``old`` recorded: absent stays absent; a file with the
    same size and mtime is taken as unchanged, otherwise its SHA-256 decides; a folder must have
    the same files, each unchanged."""
    path = Path(path)
    if not old.get("exists"):
        return not path.exists()
    if "dir" in old:
        if not path.is_dir():
            return False
        now = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        if now != sorted(old["dir"]):
            return False
        return all(same_fingerprint(fp, path / rel) for rel, fp in old["dir"].items())
    if not path.is_file():
        return False
    st = path.stat()
    if st.st_size != old.get("size"):
        return False
    if st.st_mtime_ns == old.get("mtime_ns"):
        return True
    return file_sha256(path) == old.get("sha256")


def _canonical(obj):
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def lock_key(root: Path) -> dict:
    """The dependency part of a chapter's key: the lock file's SHA-256 (None without one) and the
    installed versions of Python and the numerical libraries (:mod:`oraclegap._buildinfo`)."""
    from .._buildinfo import library_versions, lock_hash

    return {"sha256": lock_hash(root), "versions": library_versions()}


def static_key(src: Path, lib_dir: Path, parameters: dict | None, environment: dict | None = None,
               lock: dict | None = None) -> dict:
    """The part of a chapter's key known before it runs: source, library, parameters, environment,
    dependency lock."""
    return {
        "version": KEY_VERSION,
        "notebook": file_sha256(src),
        "library": library_hashes(lib_dir),
        "parameters": _canonical(dict(parameters or {})),
        "environment": _canonical(dict(environment or {})),
        "lock": _canonical(dict(lock or {})),
    }


def _rel(path: str, root: Path) -> str:
    p = Path(path)
    try:
        return p.resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(p)


def _abs(path: str, root: Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() else Path(root) / p


def data_fingerprints(paths, root: Path) -> dict[str, dict]:
    """``{path (relative to root when inside it): fingerprint}`` for the recorded data paths."""
    return {_rel(p, root): fingerprint(Path(p)) for p in sorted(set(map(str, paths)))}


def read_key(executed: Path) -> dict | None:
    """The stored key of an executed chapter, or None (missing or unreadable)."""
    try:
        key = json.loads(key_path(executed).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return key if isinstance(key, dict) else None


def write_key(executed: Path, static: dict, data: dict[str, dict] | None) -> Path:
    """Store the key beside the executed notebook (atomically). ``data=None`` means the run's data
    reads were not recorded: such a key never matches, so the chapter runs again next time."""
    path = key_path(executed)
    key = dict(static, data=data, data_recorded=data is not None)
    return atomic_write(path, json.dumps(key, indent=1, sort_keys=True))


def drop_key(executed: Path) -> None:
    """Forget the key (after a failed run), so the chapter runs again next time."""
    try:
        key_path(executed).unlink()
    except FileNotFoundError:
        pass


def _changed(old: dict, new: dict) -> list[str]:
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def stale_reasons(executed: Path, static: dict, root: Path) -> list[str]:
    """Why the chapter executed into ``executed`` must run again; an empty list means its cache
    is valid (same source, library, parameters and environment, and every recorded data path
    unchanged)."""
    executed = Path(executed)
    if not executed.is_file():
        return ["not executed yet"]
    old = read_key(executed)
    if old is None:
        return ["no cache key beside the executed notebook"]
    if old.get("version") != static["version"]:
        return ["cache key format changed"]
    reasons = []
    if old.get("notebook") != static["notebook"]:
        reasons.append("notebook source changed")
    lib = _changed(old.get("library") or {}, static["library"])
    if lib:
        more = f" (+{len(lib) - 3} more)" if len(lib) > 3 else ""
        reasons.append("library changed: " + ", ".join(lib[:3]) + more)
    params = _changed(old.get("parameters") or {}, static["parameters"])
    if params:
        reasons.append("parameters changed: " + ", ".join(params))
    env = _changed(old.get("environment") or {}, static["environment"])
    if env:
        reasons.append("environment changed: " + ", ".join(env))
    lock_old, lock_new = old.get("lock") or {}, static.get("lock") or {}
    if lock_old.get("sha256") != lock_new.get("sha256"):
        reasons.append("dependency lock changed (requirements.lock)")
    drift = _changed(lock_old.get("versions") or {}, lock_new.get("versions") or {})
    if drift:
        reasons.append("installed library versions changed: " + ", ".join(drift))
    if not old.get("data_recorded") or old.get("data") is None:
        reasons.append("the last run's data reads were not recorded")
    else:
        data = [p for p, fp in sorted(old["data"].items()) if not same_fingerprint(fp, _abs(p, root))]
        if data:
            more = f" (+{len(data) - 3} more)" if len(data) > 3 else ""
            reasons.append("data changed: " + ", ".join(data[:3]) + more)
    return reasons
