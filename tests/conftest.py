"""Shared fixtures: the project root, the shared folder, external data (skips name what is missing)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    d = Path(os.environ.get("OG_SHARED_DIR", ROOT.parent / "shared"))
    if not d.is_dir():
        pytest.skip(f"shared folder not found at {d} (set OG_SHARED_DIR)")
    return d


@pytest.fixture(scope="session")
def external_dir() -> Path:
    env = os.environ.get("OG_EXTERNAL_DIR")
    if not env:
        pytest.skip("OG_EXTERNAL_DIR is not set; external real-LLM data are not available")
    d = Path(env)
    if not d.is_dir():
        pytest.skip(f"OG_EXTERNAL_DIR={d} does not exist")
    return d
