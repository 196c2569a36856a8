"""Atomic writes: the old file or the new one, never a torn mix; the umask is respected."""

from __future__ import annotations

import os
import stat

import pytest

from oraclegap import _io


def test_atomic_write_replaces_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "sub" / "f.json"
    _io.atomic_write(p, "old")
    _io.atomic_write(p, b"new bytes")
    assert p.read_bytes() == b"new bytes"
    assert sorted(x.name for x in p.parent.iterdir()) == ["f.json"]
    assert _io.temp_path(p) != _io.temp_path(p) and _io.temp_path(p).name.startswith(".f.json.tmp-")


def test_atomic_write_respects_umask_and_keeps_old_on_failure(tmp_path, monkeypatch):
    old = os.umask(0o027)
    try:
        p = _io.atomic_write(tmp_path / "a.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    with pytest.raises(TypeError, match="bytes or str"):
        _io.atomic_write(p, 3)

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(_io.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        _io.atomic_write(p, "y")
    assert p.read_text() == "x" and sorted(x.name for x in tmp_path.iterdir()) == ["a.txt"]


def test_pid_alive_is_false_only_for_a_process_known_to_be_gone(monkeypatch):
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert _io.pid_alive(os.getpid())
    assert not _io.pid_alive(child.pid)
    monkeypatch.setattr(_io.os, "name", "nt")  # Windows: os.kill(pid, 0) would signal, so never asked
    assert _io.pid_alive(child.pid)
