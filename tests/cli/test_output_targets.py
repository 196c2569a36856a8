"""What ``export`` and ``audit`` write to: the clean-up of temporaries removes only folders
whose marker names a dead run of the same target, never a folder of yours, whatever its
name; both create their target exclusively (of two runs racing to one target one writes
it, the other is refused in one line); a dangling or looping ``--out`` link is refused
before the pool is read."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from oraclegap import audit, cli, exchange
from oraclegap._io import TMP_MARK, clean_dead_temps, make_temp_dir, place_new
from oraclegap.pool import Pool
from oraclegap.sources import open_pool
from oraclegap.stats import simulate

LIB = str(Path(audit.__file__).parents[2])


ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([LIB, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def _tree(d: Path) -> dict:
    """Every file under d with its SHA-256 (links as links): what "survives bit for bit" compares."""
    out = {}
    for p in sorted(d.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(d))] = "-> " + os.readlink(p)
        elif p.is_file():
            out[str(p.relative_to(d))] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[str(p.relative_to(d))] = "dir"
    return out


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    d = tmp_path_factory.mktemp("hardening")
    simulate.specialists(60, 3, 4, f=0.5, s=0.3, seed=39).pool.save(d / "pool")
    simulate.specialists(60, 3, 4, f=0.5, s=0.3, seed=40).pool.save(d / "other")
    return d


def _user_folders(parent: Path, target: str) -> None:
    """Folders of yours beside ``target`` named like any temporary an audit or export ever used."""
    dead = _dead_pid()
    old = time.time() - 3 * 86400
    for name, files in (
        (f".{target}.old-backup", {"audit.json": "{}", "report.html": "<p>mine</p>"}),
        (f".{target}.old-x1", {"audit.json": "{}"}),
        (f".{target}.tmp-999999-abcd", {"report.html": "<p>mine</p>"}),
        (f".{target}.tmp-ab12cd_9", {"audit.json": "{}"}),
        (f".{target}.tmp-{dead}-0123456789abcdef", {"audit.json": "{}", "audit.ipynb": "{}"}),
        (f".{target}.tmp-{dead}-fedcba9876543210", {TMP_MARK: str(dead), "audit.json": "{}"}),  # a marker of another form
        (f".{target}.tmp-{dead}-00000000000000ff", {TMP_MARK: json.dumps(  # a marker naming another folder
            {"format": "oraclegap.tmp", "version": 1, "verb": "audit", "pid": dead, "host": os.uname().nodename,
             "token": "0123456789abcdef", "target": target}), "thesis.tex": "x"}),
    ):
        f = parent / name
        f.mkdir()
        for fname, text in files.items():
            (f / fname).write_text(text)
        os.utime(f, (old, old))


def _dead_run_temp(target: Path, verb: str) -> Path:
    """A temporary folder of ``target`` made, with its marker, by a run that has ended."""
    code = ("import sys; from oraclegap._io import make_temp_dir; "
            f"t = make_temp_dir(sys.argv[1], {verb!r}); (t / 'audit.json').write_text('{{}}'); print(t)")
    res = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, check=True, env=ENV)
    return Path(res.stdout.strip())


def test_user_folders_named_like_temporaries_survive_any_number_of_audits_and_exports(tmp_path, pools, run_cli):
    _user_folders(tmp_path, "rep")
    _user_folders(tmp_path, "x.csv")
    _user_folders(tmp_path, "lrb")
    sibling = _dead_run_temp(tmp_path / "rep2", "audit")  # a killed run of a sibling target: that target's to clean
    before = _tree(tmp_path)
    for i in range(3):
        rc, _, err = run_cli("audit", pools / "pool", "--out", tmp_path / "rep", "--small", "--quiet", "--no-report",
                             "--seed", i)
        assert rc == 0, err
        for fmt, out in (("long", "x.csv"), ("llmrouterbench", "lrb")):
            shutil.rmtree(tmp_path / out) if (tmp_path / out).is_dir() else (tmp_path / out).unlink(missing_ok=True)
            rc, _, err = run_cli("export", pools / "pool", "--format", fmt, "--out", tmp_path / out)
            assert rc == 0, err
    after = _tree(tmp_path)
    assert {k: v for k, v in after.items() if k in before} == before  # every folder of yours, bit for bit
    assert sibling.exists()
    new = sorted({k.split("/")[0] for k in after} - {k.split("/")[0] for k in before})
    assert new == ["lrb", "rep", "x.csv"]  # and no temporary of these runs is left


def test_dead_marked_temporaries_of_the_same_target_are_removed_live_ones_kept(tmp_path):
    out = tmp_path / "rep"
    dead = _dead_run_temp(out, "audit")
    live = make_temp_dir(out, "audit")
    other_target = _dead_run_temp(tmp_path / "rep.tmp", "export")
    assert dead.exists() and json.loads((dead / TMP_MARK).read_text())["target"] == "rep"
    assert clean_dead_temps(out) == [dead]
    assert not dead.exists() and live.exists() and other_target.exists()
    shutil.rmtree(live)


def test_a_killed_export_leaves_a_temporary_that_the_next_export_removes(tmp_path, pools):
    """SIGKILL after the export wrote its file, before it moved it into place: the temporary folder
    stays (nothing else), and the next export of the same --out removes it and writes --out."""
    out = tmp_path / "x.csv"
    code = ("import os, signal, sys; from oraclegap import cli, exchange; "
            "exchange._formats.validate_long_table = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL); "
            "sys.exit(cli.main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, "export", str(pools / "pool"), "--format", "long", "--out", str(out)],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(".x.csv.tmp-"), left
    assert cli.main(["export", str(pools / "pool"), "--format", "long", "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]
    assert open_pool(str(out)).shape == Pool.load(pools / "pool").shape


@pytest.mark.parametrize("fmt, name, hook", [("long", "x.csv", "to_long"), ("llmrouterbench", "lrb", "atomic_write"),
                                             ("long", "x.parquet", "to_long")])
def test_two_exports_racing_to_one_target_give_one_output_and_one_refusal(tmp_path, pools, monkeypatch, run_cli, fmt,
                                                                           name, hook):
    """The second export starts and finishes while the first is writing (after both checked that
    --out is free): the second's output stays, the first is refused in one line."""
    out = tmp_path / name
    results, started = [], []

    def race():
        if not started:  # once, and not again from inside the second export
            started.append(True)
            results.append(run_cli("export", pools / "other", "--format", fmt, "--out", out))

    if hook == "to_long":
        original = Pool.to_long

        def hooked(self, path, *a, **k):
            res = original(self, path, *a, **k)
            race()
            return res

        monkeypatch.setattr(Pool, "to_long", hooked)
    else:
        original = exchange.atomic_write

        def hooked(path, data, **k):
            res = original(path, data, **k)
            race()
            return res

        monkeypatch.setattr(exchange, "atomic_write", hooked)
    first = run_cli("export", pools / "pool", "--format", fmt, "--out", out)
    second = results[0]
    assert second[0] == 0 and second[1].startswith("wrote "), second
    assert first[0] == 2 and first[1] == "", first
    assert len(first[2].splitlines()) == 1 and re.search(r"was created by another run while this export ran; nothing was "
                                                         r"replaced", first[2]), first[2]
    assert open_pool(str(out)).shape == Pool.load(pools / "other").shape
    np.testing.assert_array_equal(open_pool(str(out)).verdicts.sum(), Pool.load(pools / "other").verdicts.sum())
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary left by either


@pytest.mark.slow
def test_concurrent_export_processes_write_once(tmp_path, pools):
    out = tmp_path / "x.csv"
    procs = [subprocess.Popen([sys.executable, "-m", "oraclegap.cli", "export", str(pools / "pool"), "--format", "long",
                               "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
             for _ in range(4)]
    res = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
    wrote = [r for r in res if r[0] == 0]
    refused = [r for r in res if r[0] != 0]
    assert len(wrote) == 1 and wrote[0][1].startswith("wrote "), res
    for rc, stdout, err in refused:
        assert rc == 2 and stdout == "" and len(err.splitlines()) == 1 and "Traceback" not in err, (rc, err)
        assert re.search(r"--out '.*x.csv' (exists|was created by another run)", err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]


def test_two_audits_racing_to_one_new_folder_refuse_the_second(tmp_path, pools, monkeypatch):
    """A second audit writes the folder after the first found it absent and before it moved its
    own into place: the first is refused in words, the second's folder stays whole."""
    out = tmp_path / "rep"
    pool = Pool.load(pools / "pool")
    original = audit.write.place_new
    inner = []

    def hooked(src, dst):
        if not inner:  # once, and not again from inside the second audit
            inner.append("started")
            inner.append(audit.write_audit(pool, out, report=False, small=True, seed=7))
        return original(src, dst)

    monkeypatch.setattr(audit.write, "place_new", hooked, raising=False)
    with pytest.raises(ValueError, match=r"--out '.*rep' appeared while this audit ran \(another run\?\); nothing was "
                                         r"replaced"):
        audit.write_audit(pool, out, report=False, small=True, seed=8)
    assert audit.load_numbers(out / "audit.json")["settings"]["seed"] == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]
    assert sorted(p.name for p in out.iterdir()) == [audit.MANIFEST_NAME, "audit.json"]


def test_place_new_never_replaces_anything(tmp_path):
    for kind in ("file", "dir", "link", "dangling"):
        dst = tmp_path / f"dst_{kind}"
        if kind == "file":
            dst.write_text("mine")
        elif kind == "dir":
            dst.mkdir()  # empty: a plain rename would replace it
        elif kind == "link":
            dst.symlink_to(tmp_path)
        else:
            dst.symlink_to(tmp_path / "nowhere")
        before = _tree(tmp_path)
        for src_kind in ("file", "dir"):
            src = tmp_path.parent / f"src_{kind}_{src_kind}"
            src.mkdir() if src_kind == "dir" else src.write_text("new")
            with pytest.raises(FileExistsError):
                place_new(src, dst)
            assert src.exists()
            shutil.rmtree(src) if src_kind == "dir" else src.unlink()
        assert _tree(tmp_path) == before
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    place_new(src, tmp_path / "new")
    assert (tmp_path / "new" / "a").is_dir() and not src.exists()


@pytest.mark.parametrize("verb", ["audit", "export"])
@pytest.mark.parametrize("link", ["dangling", "loop"])
def test_a_bad_link_as_out_is_refused_before_the_pool_is_read(tmp_path, pools, monkeypatch, run_cli, verb, link):
    from oraclegap.commands import audit as audit_cmd
    from oraclegap.commands import export as export_cmd

    def never(args):
        raise AssertionError("the pool was read before --out was checked")

    monkeypatch.setattr(audit_cmd if verb == "audit" else export_cmd, "pool_from_args", never)
    out = tmp_path / "out"
    out.symlink_to(tmp_path / "gone" if link == "dangling" else out)
    extra = ["--format", "long"] if verb == "export" else ["--small"]
    target = out if verb == "audit" or link == "dangling" else out / "x.csv"
    rc, _, err = run_cli(verb, pools / "pool", "--out", target, *extra)
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert re.search(r"is a symbolic link to .*which does not exist" if link == "dangling" else
                     r"leads through a symbolic link that loops", err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
