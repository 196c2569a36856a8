"""The pinned environment: requirements.lock pins every dependency of pyproject.toml (core and the
extras `make setup` installs) at a version inside its declared range, with hashes, and the conda
environment and the Makefile install from it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

packaging = pytest.importorskip("packaging")
from packaging.requirements import Requirement  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402
from packaging.version import Version  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"


def _pins(text: str) -> dict[str, tuple[str, int]]:
    """``{name: (version, number of hashes)}`` of a pip-compile lock file."""
    pins, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s\\]+)", line)
        if m:
            current = canonicalize_name(m.group(1))
            pins[current] = (m.group(2), 0)
        elif current and "--hash=sha256:" in line:
            v, n = pins[current]
            pins[current] = (v, n + 1)
    return pins


def _extras() -> list[str]:
    m = re.search(r"^EXTRAS := (.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert m, "the Makefile names the extras it installs (EXTRAS := ...)"
    return m.group(1).strip().split(",")


def test_lock_pins_every_declared_dependency_inside_its_range():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in _extras():
        reqs += [Requirement(r) for r in project["optional-dependencies"][extra]]
    pins = _pins(LOCK.read_text())
    missing = sorted({r.name for r in reqs if canonicalize_name(r.name) not in pins})
    assert not missing, f"requirements.lock lacks {missing}: run `make lock`"
    outside = [f"{r} (locked {pins[canonicalize_name(r.name)][0]})" for r in reqs
               if not r.specifier.contains(Version(pins[canonicalize_name(r.name)][0]), prereleases=True)]
    assert not outside, f"locked versions outside pyproject's ranges: {outside}; run `make lock`"
    unhashed = sorted(n for n, (_, h) in pins.items() if h == 0)
    assert not unhashed, f"pins without a hash: {unhashed}"
    assert pins["torch"][0].startswith("2.13.0")  # the CPU wheel (DEVELOPERS: torch==2.13.0)


def test_pins_reader_can_fail():
    pins = _pins("a==1.0 \\\n    --hash=sha256:00\nb==2.0\n")
    assert pins == {"a": ("1.0", 1), "b": ("2.0", 0)}


def test_setup_and_conda_install_from_the_lock():
    make = (ROOT / "Makefile").read_text()
    assert "--require-hashes --no-deps -r $(LOCK)" in make and "LOCK := requirements.lock" in make
    env = (ROOT / "environment.yml").read_text()
    assert "-r requirements.lock" in env and "python=3.11" in env
    assert "--no-emit-index-url" in make  # the lock names no machine's package mirror
    assert not re.search(r"file://|/opt/", LOCK.read_text())


def test_gpu_lock_pins_vllm_with_its_own_torch():
    pins = _pins((ROOT / "requirements-gpu.lock").read_text())
    assert "vllm" in pins and "torch" in pins and not pins["torch"][0].endswith("+cpu")
    unhashed = sorted(n for n, (_, h) in pins.items() if h == 0)
    assert not unhashed, f"GPU pins without a hash: {unhashed}"
    req = [Requirement(r) for r in (ROOT / "requirements-gpu.txt").read_text().splitlines()
           if r.strip() and not r.startswith(("#", "-e"))]
    assert all(r.specifier.contains(Version(pins[canonicalize_name(r.name)][0])) for r in req)
