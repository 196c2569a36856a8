"""A pool on disk: ``Pool.load`` checks the stored arrays against the manifest's shape and
checksums and names a damaged file; ``save`` refuses to replace a folder that is not a
pool, validates again, keeps the umask and variable-length answers, and a save
interrupted between its renames is recovered at the next load."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oraclegap.pool import FORMAT_VERSION, Pool
from oraclegap.sources import open_pool

DATA = Path(__file__).parents[1] / "data"


def _edit_manifest(d: Path, **changes) -> None:
    m = json.loads((d / "manifest.json").read_text())
    m.update(changes)
    (d / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("claim", [[4, 2, 8], [4, 2, 4], [5, 2, 6], [4, 3, 6]])
def test_load_refuses_a_manifest_shape_that_does_not_match_the_arrays(tmp_path, claim):
    v = np.ones((4, 2, 6), bool)
    d = Pool(v).save(tmp_path / "p")
    _edit_manifest(d, shape=claim)
    with pytest.raises(ValueError, match="arrays.npz"):
        Pool.load(d)


def test_load_refuses_fewer_draws_than_stored_even_in_format_1(tmp_path):
    # a format-1 pool (no checksums): claiming k=4 of 6 stored draws would drop successes
    d = tmp_path / "old"
    d.mkdir()
    v = np.ones((3, 2, 6), bool)
    np.savez_compressed(d / "arrays.npz", verdicts=np.packbits(v, axis=2))
    pd.DataFrame({"id": ["a", "b", "c"]}).to_parquet(d / "prompts.parquet")
    pd.DataFrame({"name": ["x", "y"]}).to_parquet(d / "policies.parquet")
    (d / "manifest.json").write_text(json.dumps({"format": "oraclegap.pool", "version": 1, "shape": [3, 2, 4]}))
    with pytest.raises(ValueError, match="successes beyond the manifest's k=4"):
        Pool.load(d)


@pytest.mark.parametrize("name", ["arrays.npz", "prompts.parquet", "policies.parquet", "answers.parquet"])
def test_checksum_recorded_at_save_names_the_changed_file(tmp_path, name):
    v = np.random.default_rng(0).random((5, 2, 3)) < 0.5
    d = Pool(v, answers=np.full(v.shape, "text", dtype=object)).save(tmp_path / "p")
    assert set(json.loads((d / "manifest.json").read_text())["checksums"]["sha256"]) >= {name}
    raw = bytearray((d / name).read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (d / name).write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=rf"{name} in .* does not match the checksum recorded at save"):
        Pool.load(d)


def test_overwrite_refuses_a_directory_that_is_not_a_pool(tmp_path):
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "chapter1.tex").write_text("years of work")
    with pytest.raises(ValueError, match="not an oraclegap pool directory"):
        Pool(np.ones((2, 2, 2), bool)).save(thesis, overwrite=True)
    assert (thesis / "chapter1.tex").read_text() == "years of work"
    f = tmp_path / "notes.txt"
    f.write_text("x")
    with pytest.raises(ValueError, match="not an oraclegap pool directory"):
        Pool(np.ones((2, 2, 2), bool)).save(f, overwrite=True)
    assert f.read_text() == "x"


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_interrupted_swap_is_recovered_on_load_and_stale_dirs_are_cleaned(tmp_path):
    a = Pool(np.zeros((3, 2, 2), bool))
    b = Pool(np.ones((3, 2, 2), bool))
    path = tmp_path / "pool"
    pid = _dead_pid()
    # state after a kill between the renames: old pool moved aside, finished new pool beside it
    a.save(tmp_path / f".pool.old-{pid}-beef")
    b.save(tmp_path / f".pool.new-{pid}-beef")
    np.testing.assert_array_equal(Pool.load(path).verdicts, b.verdicts)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["pool"]
    # new one unfinished (no manifest): the old one comes back
    os.rename(path, tmp_path / f".pool.old-{pid}-cafe")
    (tmp_path / f".pool.new-{pid}-cafe").mkdir()
    np.testing.assert_array_equal(Pool.load(path).verdicts, b.verdicts)
    # stale temp dirs of a killed save are removed at the next save; a live process's are kept
    (tmp_path / f".pool.new-{pid}-0001").mkdir()
    (tmp_path / f".pool.new-{os.getppid()}-0002").mkdir()
    a.save(path, overwrite=True)
    assert sorted(x.name for x in tmp_path.iterdir()) == [f".pool.new-{os.getppid()}-0002", "pool"]


def test_saved_pool_respects_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        d = Pool(np.ones((2, 2, 2), bool), answers=np.full((2, 2, 2), "a")).save(tmp_path / "p")
    finally:
        os.umask(old)
    assert stat.S_IMODE(d.stat().st_mode) == 0o755
    assert {stat.S_IMODE(f.stat().st_mode) for f in d.iterdir()} == {0o644}


def test_save_validates_again(tmp_path):
    p = Pool(np.ones((3, 2, 2), bool), prompts=["a", "b", "c"])
    p.prompts.loc[2, "id"] = "a"  # tables are mutable DataFrames
    with pytest.raises(ValueError, match="no longer passes validation.*must be unique"):
        p.save(tmp_path / "p")
    assert not (tmp_path / "p").exists() and not list(tmp_path.iterdir())


def test_answers_are_variable_length_text(tmp_path):
    n, M, k = 100, 10, 10
    ans = np.full((n, M, k), "ok", dtype=object)
    ans[3, 4, 5] = "x" * 5000
    tracemalloc.start()
    try:
        p = Pool(np.zeros((n, M, k), bool), answers=ans)
        d = p.save(tmp_path / "p")
        q = Pool.load(d)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 30_000_000, f"peak {peak / 1e6:.0f} MB: answers are being padded to a fixed width"
    assert q.answers.dtype == object and q.answers[3, 4, 5] == "x" * 5000 and (q.answers == ans).all()
    with zipfile.ZipFile(d / "arrays.npz") as z:
        assert "answers.npy" not in z.namelist()
    assert (d / "answers.parquet").stat().st_size < 100_000


def test_pools_of_format_1_still_load():
    q = Pool.load(DATA / "pool_format1")
    assert FORMAT_VERSION == 2 and json.loads((DATA / "pool_format1" / "manifest.json").read_text())["version"] == 1
    np.testing.assert_array_equal(q.verdicts, np.load(DATA / "pool_format1_verdicts.npy"))
    assert q.answers[2, 1, 4] == "answer 2.1.4!!!!" and q.answers.dtype == object
    assert q.alignment == "seed-aligned" and q.policy_names == ["x", "y", "z"] and q.meta["made_by"] == "oraclegap format 1"
    np.testing.assert_array_equal(q.cost, np.full((5, 3), 0.25))


def _npz(tmp_path, name="v.npz"):
    v = (np.random.default_rng(0).random((200, 3, 4)) < 0.5).astype(np.uint8)
    np.savez_compressed(tmp_path / name, V=v)
    return tmp_path / name


def test_damaged_array_files_are_named(tmp_path):
    f = _npz(tmp_path)
    raw = f.read_bytes()
    (tmp_path / "trunc.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"trunc.npz is damaged"):
        open_pool(f"{tmp_path / 'trunc.npz'}:V")
    flipped = bytearray(raw)
    flipped[len(raw) // 3] ^= 0x55
    (tmp_path / "flip.npz").write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match=r"flip.npz is damaged"):
        open_pool(f"{tmp_path / 'flip.npz'}:V")
    np.save(tmp_path / "ok.npy", np.ones((3, 2, 2), np.uint8))
    raw = (tmp_path / "ok.npy").read_bytes()
    (tmp_path / "bad.npy").write_bytes(raw[:60])
    with pytest.raises(ValueError, match=r"bad.npy is damaged") as e:
        open_pool(str(tmp_path / "bad.npy"))
    assert "object" not in str(e.value)
    (tmp_path / "junk.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(ValueError, match=r"junk.npy is damaged"):
        open_pool(str(tmp_path / "junk.npy"))


def test_flipped_byte_in_a_format_1_pool_is_reported_as_damage(tmp_path):
    import shutil

    d = tmp_path / "old"
    shutil.copytree(DATA / "pool_format1", d)
    raw = bytearray((d / "arrays.npz").read_bytes())
    raw[200] ^= 0xFF
    (d / "arrays.npz").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"arrays.npz is damaged"):
        Pool.load(d)
