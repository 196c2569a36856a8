"""The lab's directory writes keep the files they did not write."""

from __future__ import annotations

import pytest


def test_lab_directory_writes_keep_files_they_did_not_write(tmp_path):
    from oraclegap.lab.model import atomic_dir

    target = tmp_path / "model"
    with atomic_dir(target) as d:
        (d / "weights.bin").write_bytes(b"v1")
    (target / "my_notes.md").write_text("keep")
    with atomic_dir(target) as d:
        (d / "weights.bin").write_bytes(b"v2")
    assert (target / "weights.bin").read_bytes() == b"v2" and (target / "my_notes.md").read_text() == "keep"
    with pytest.raises(RuntimeError):  # a failed write leaves the folder as it was
        with atomic_dir(target) as d:
            (d / "weights.bin").write_bytes(b"v3")
            raise RuntimeError("killed")
    assert (target / "weights.bin").read_bytes() == b"v2" and sorted(p.name for p in tmp_path.iterdir()) == ["model"]
