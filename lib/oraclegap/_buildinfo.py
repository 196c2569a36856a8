"""What built a page or a report: one line a reader can quote when their number differs.

:func:`build_info` gathers the project's git commit (with ``modified`` when tracked files differ
from it), the SHA-256 of the dependency lock file (``requirements.lock``), the versions of Python
and of the numerical libraries behind the numbers (numpy, scipy, scikit-learn, torch: read from
the installed distributions, so torch is never imported), the renderer, the build date (UTC) and
whether the run was reduced (``--small``). :func:`build_line` puts it into one line. Nothing here
fails: a missing git, lock or library reads as ``unknown`` / ``absent`` / ``not installed``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path

__all__ = ["LOCK_FILE", "LIBRARIES", "lock_hash", "git_state", "library_versions", "build_info", "build_line"]

#: The lock file of the CPU environment, at the project root (``make lock`` writes it).
LOCK_FILE = "requirements.lock"
#: Distributions whose versions the build line names (import name -> distribution name).
LIBRARIES = {"numpy": "numpy", "scipy": "scipy", "scikit-learn": "scikit-learn", "torch": "torch"}

_REPO = Path(__file__).resolve().parents[2]


def lock_hash(root: Path | None = None) -> str | None:
    """SHA-256 (hex) of ``root/requirements.lock``, or None when there is none."""
    path = Path(root or _REPO) / LOCK_FILE
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def git_state(root: Path | None = None) -> dict:
    """``{"commit": full hash or None, "modified": bool}``: ``modified`` when a tracked file differs
    from the commit (untracked and ignored files do not count: build outputs are not sources)."""
    root = Path(root or _REPO)

    def git(*args: str) -> str | None:
        try:
            res = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return res.stdout.strip() if res.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return {"commit": None, "modified": False}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "modified": bool(status)}


def library_versions() -> dict[str, str]:
    """``{"python": ..., "numpy": ..., ...}`` from the installed distributions (``not installed``
    where one is absent)."""
    out = {"python": platform.python_version()}
    for name, dist in LIBRARIES.items():
        try:
            out[name] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def build_info(root: Path | None = None, *, renderer: str | None = None, small: bool = False,
               now: _dt.datetime | None = None) -> dict:
    """Everything the build line says, as a dict (also written into ``audit.json`` and the book's
    ``_book/.og-build.json``)."""
    root = Path(root or _REPO)
    when = (now or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc)
    info = {**git_state(root), "lock_sha256": lock_hash(root), "versions": library_versions(),
            "renderer": renderer, "date": when.strftime("%Y-%m-%d %H:%M UTC"), "small": bool(small)}
    return info


def build_line(info: dict) -> str:
    """One line: ``built from commit 1a2b3c4d (modified), lock 5e6f7a8b, Python 3.11.7, numpy ...,
    rendered with Quarto 1.7.34, 2026-12-01 21:00 UTC, reduced build (--small)``."""
    commit = info.get("commit")
    parts = [f"built from commit {commit[:10]}" + (" (modified)" if info.get("modified") else "")
             if commit else "built outside a git checkout"]
    lock = info.get("lock_sha256")
    parts.append(f"lock {lock[:10]}" if lock else "no lock file")
    v = info.get("versions") or {}
    parts.append(", ".join(f"{'Python' if k == 'python' else k} {val}" for k, val in v.items()))
    if info.get("renderer"):
        parts.append(f"rendered with {info['renderer']}")
    parts.append(str(info.get("date")))
    if info.get("small"):
        parts.append("reduced build (--small)")
    return "; ".join(parts)
