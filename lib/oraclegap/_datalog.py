"""Which data files a process reads: the record the book's execution cache is keyed on.

Off unless the environment names a log file (``OG_DATA_LOG``), which ``oraclegap.book`` does
for the kernels that execute chapters. Two kinds of entries are appended to the log, one JSON
object per line:

* ``{"declared": PATH}`` -- a file or folder a loader was asked for, present or not
  (:mod:`oraclegap.datasets` declares every registry entry it resolves or checks, and
  :func:`oraclegap.sources.open_pool` the path it opens), so a chapter that skipped a section
  because data were absent is re-run once they appear;
* ``{"read": PATH}`` -- a regular file opened for reading under one of the watched roots
  (``OG_DATA_ROOTS``, paths separated by ``os.pathsep``), seen by a :func:`sys.addaudithook`
  hook that :func:`start` installs, so data read directly (``pd.read_csv("data/...")``) count
  too. Paths under ``OG_DATA_IGNORE`` (sources hashed separately, build output, the temporary
  folder) are skipped by both.

The ground floor of the library: imports nothing from the package.
"""

from __future__ import annotations

import json
import os
import sys
import threading

__all__ = ["ENV_LOG", "ENV_ROOTS", "ENV_IGNORE", "declare", "start", "read_log"]

ENV_LOG = "OG_DATA_LOG"
ENV_ROOTS = "OG_DATA_ROOTS"
ENV_IGNORE = "OG_DATA_IGNORE"

_lock = threading.Lock()
_seen: set[tuple[str, str]] = set()
_state = {"started": False, "busy": False}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _log_path() -> str | None:
    return os.environ.get(ENV_LOG) or None


def _write(kind: str, path: str) -> None:
    log = _log_path()
    if log is None:
        return
    key = (kind, path)
    with _lock:
        if key in _seen or _state["busy"]:
            return
        _seen.add(key)
        _state["busy"] = True  # our own open() below must not be recorded
        try:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({kind: path}) + "\n")
        finally:
            _state["busy"] = False


def declare(*paths) -> None:
    """Record that data at ``paths`` (files or folders, present or not) are an input of this run.

    A no-op unless ``OG_DATA_LOG`` is set."""
    if _log_path() is None:
        return
    ignore = _split_env(ENV_IGNORE)
    for p in paths:
        full = os.path.abspath(os.fspath(p))
        if not _under(full, ignore):
            _write("declared", full)


def _split_env(name: str) -> list[str]:
    return [os.path.abspath(p) for p in os.environ.get(name, "").split(os.pathsep) if p]


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def start() -> bool:
    """Install the audit hook that records files opened for reading under ``OG_DATA_ROOTS``.

    Writes a ``{"started": pid}`` line first, so the reader can tell a run that recorded from
    one that could not. Returns False (and does nothing) when ``OG_DATA_LOG`` is not set.
    Audit hooks cannot be removed; the hook costs one string test per ``open``."""
    log = _log_path()
    if log is None or _state["started"]:
        return _state["started"]
    roots = _split_env(ENV_ROOTS)
    ignore = _split_env(ENV_IGNORE) + [os.path.abspath(log)]

    def hook(event: str, args: tuple) -> None:
        if event != "open" or _state["busy"] or not args:
            return
        path = args[0]
        if not isinstance(path, str):  # file descriptors, bytes paths
            return
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 else 0
        if isinstance(mode, str):
            if any(c in mode for c in "wax+"):
                return
        elif isinstance(flags, int) and flags & _WRITE_FLAGS:
            return
        full = os.path.abspath(path)
        if not _under(full, roots) or _under(full, ignore) or f"{os.sep}__pycache__{os.sep}" in full:
            return
        if os.path.isfile(full):
            _write("read", full)

    _write("started", str(os.getpid()))
    sys.addaudithook(hook)
    _state["started"] = True
    return True


def read_log(path) -> tuple[bool, list[str], list[str]]:
    """``(started, declared, read)`` from a log file written by this module (missing file: nothing)."""
    started, declared, read = False, [], []
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return False, [], []
    for line in lines:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "started" in rec:
            started = True
        elif "declared" in rec:
            declared.append(rec["declared"])
        elif "read" in rec:
            read.append(rec["read"])
    return started, sorted(set(declared)), sorted(set(read))
