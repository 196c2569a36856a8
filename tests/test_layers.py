"""The library's floors import one way (../shared/DESIGN.md), checked with import-linter.

The contract lives in pyproject.toml ([tool.importlinter]); ``lint-imports`` reads it. A
negative control runs the same contract type on a throwaway package that breaks it, so the
check is shown to be able to fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path, config: Path | None = None, extra_path: Path | None = None) -> subprocess.CompletedProcess:
    if not LINT.exists():
        pytest.skip(f"lint-imports is not installed beside {sys.executable} (install the dev extra)")
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = str(extra_path) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [str(LINT), "--no-cache"] + (["--config", str(config)] if config else [])
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_library_floors_are_one_way():
    res = _lint(ROOT, extra_path=ROOT / "lib")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "broken" in res.stdout and " 0 broken" in res.stdout


def test_layer_check_can_fail(tmp_path):
    pkg = tmp_path / "src" / "floors"
    (pkg / "stats").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "pool.py").write_text("from . import datasets\n")  # the ground floor reaching up
    (pkg / "datasets.py").write_text("from .stats import coverage\n")
    (pkg / "stats" / "__init__.py").write_text("")
    (pkg / "stats" / "coverage.py").write_text("from .. import pool\n")
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(textwrap.dedent("""
        [tool.importlinter]
        root_package = "floors"
        [[tool.importlinter.contracts]]
        name = "floors"
        type = "layers"
        layers = ["floors.datasets", "floors.stats", "floors.pool"]
    """))
    res = _lint(tmp_path, config=cfg, extra_path=tmp_path / "src")
    assert res.returncode != 0
    assert "BROKEN" in res.stdout, res.stdout[-2000:]
    shutil.rmtree(tmp_path / "src")


def test_every_module_is_on_the_module_map():
    """lib/README.md names every module of the library (its map cannot lose a module), and names
    none that is gone."""
    import re
    from pathlib import Path

    lib = Path(__file__).resolve().parents[1] / "lib"
    pkg = lib / "oraclegap"
    mods = {p.relative_to(pkg).as_posix() for p in pkg.rglob("*.py") if "notebooks" not in p.parts}
    named = set(re.findall(r"^\| `([^`]+\.py)` \|", (lib / "README.md").read_text(encoding="utf-8"), re.M))
    assert not mods - named, f"modules missing from lib/README.md: {sorted(mods - named)}"
    assert not named - mods, f"lib/README.md names modules that do not exist: {sorted(named - mods)}"
