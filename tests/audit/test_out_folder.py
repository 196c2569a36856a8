"""``oraclegap audit --out DIR`` deletes nothing of yours.

The audit records the files it writes in a hidden manifest and on a rerun replaces only those;
a note added to the folder survives; POOL inside DIR, a folder of files no audit wrote (a
project with a copied audit.json), a parent that is a file and an unwritable target are refused
before anything is computed; temporary folders of killed audits are cleaned by the next run; an
audit killed during its report phase leaves the earlier folder bit for bit.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from oraclegap import audit
from oraclegap.pool import Pool


def _tree(d: Path) -> dict:
    """Every file under d with its SHA-256: what "bit for bit" compares."""
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def pool_dir(make_pool):
    return make_pool(80, 4, 6, seed=3, f=0.5, s=0.3)[0]


def _no_compute(monkeypatch):
    """Make any computation fail loudly: the refusals below must come before it."""
    def boom(*a, **k):
        raise AssertionError("the audit computed before checking its target")

    monkeypatch.setattr(audit.compute, "run_audit", boom)  # where write_audit looks it up


def test_rerun_replaces_only_what_the_audit_wrote(run_cli, tmp_path, pool_dir):
    out = tmp_path / "rep"
    rc, _, err = run_cli("audit", pool_dir, "--out", out, "--small", "--quiet", "--no-report")
    assert rc == 0, err
    man = json.loads((out / audit.MANIFEST_NAME).read_text())
    assert sorted(man["files"]) == ["audit.json"]
    assert man["files"]["audit.json"] == [hashlib.sha256((out / "audit.json").read_bytes()).hexdigest()]
    (out / "my_note.md").write_text("keep me")
    (out / "sub").mkdir()
    (out / "sub" / "data.csv").write_text("a,b\n1,2\n")
    rc, _, err = run_cli("audit", pool_dir, "--out", out, "--small", "--quiet", "--no-report", "--seed", "4")
    assert rc == 0, err
    assert (out / "my_note.md").read_text() == "keep me" and (out / "sub" / "data.csv").read_text() == "a,b\n1,2\n"
    assert audit.load_numbers(out / "audit.json")["settings"]["seed"] == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]  # no temporary folder left beside it
    # an audit file the user edited is not the audit's any more: refused, untouched
    (out / "audit.json").write_text((out / "audit.json").read_text().replace('"seed": 4', '"seed": 44'))
    before = _tree(out)
    rc, _, err = run_cli("audit", pool_dir, "--out", out, "--small", "--quiet", "--no-report")
    assert rc == 2 and "audit.json was changed since the audit wrote it" in err
    assert _tree(out) == before


def test_stale_report_is_removed_but_nothing_else(tmp_path, pool_dir):
    """A full report then --no-report: report.html and audit.ipynb were the audit's, so they go
    (they would contradict the new audit.json); the user's files stay."""
    out = tmp_path / "rep"
    pool = Pool.load(pool_dir)
    files = {"audit.json": "{}", "audit.ipynb": "{}", "report.html": "<html></html>"}
    out.mkdir()
    for k, v in files.items():
        (out / k).write_text(v)
    (out / audit.MANIFEST_NAME).write_text(json.dumps({"format": audit.MANIFEST_FORMAT, "version": 1, "files": {
        k: [hashlib.sha256(v.encode()).hexdigest()] for k, v in files.items()}}))
    (out / "paper.tex").write_text("\\section{mine}")
    audit.write_audit(pool, out, report=False, small=True)
    assert sorted(p.name for p in out.iterdir()) == [audit.MANIFEST_NAME, "audit.json", "paper.tex"]
    assert (out / "paper.tex").read_text() == "\\section{mine}"


@pytest.mark.parametrize("layout", ["copied_audit_json", "pool_inside", "pool_is_out", "out_inside_pool", "parent_is_file",
                                    "out_is_file", "damaged_manifest", "manifest_names_user_file"])
def test_refusals_come_before_any_work_and_touch_nothing(run_cli, tmp_path, pool_dir, monkeypatch, layout):
    _no_compute(monkeypatch)
    proj = tmp_path / "proj"
    proj.mkdir()
    pool_arg = pool_dir
    out = proj
    if layout == "copied_audit_json":  # a project folder with a copied audit.json: paper.tex and data.csv stay
        (proj / "audit.json").write_text(json.dumps({"format": audit.FORMAT_NAME, "version": 1}))
        (proj / "paper.tex").write_text("x")
        (proj / "data.csv").write_text("y")
        want = "not an audit directory"
    elif layout == "pool_inside":  # `audit prev/verdicts.npy --out prev`
        np.save(proj / "verdicts.npy", Pool.load(pool_dir).verdicts.astype(np.uint8))
        pool_arg = proj / "verdicts.npy"
        want = "lies inside --out"
    elif layout == "pool_is_out":
        shutil.copytree(pool_dir, proj / "p")
        pool_arg = out = proj / "p"
        want = "lies inside --out"
    elif layout == "out_inside_pool":
        shutil.copytree(pool_dir, proj / "p")
        pool_arg, out = proj / "p", proj / "p" / "report"
        want = "lies inside POOL"
    elif layout == "parent_is_file":
        (proj / "file").write_text("z")
        out = proj / "file" / "rep"
        want = "is a file, expected a directory"
    elif layout == "out_is_file":
        (proj / "file").write_text("z")
        out = proj / "file"
        want = "is a file, expected a directory"
    elif layout == "damaged_manifest":
        (proj / audit.MANIFEST_NAME).write_text("{nope")
        (proj / "audit.json").write_text("{}")
        want = "damaged audit manifest"
    else:  # a manifest that claims a file the audit never writes
        (proj / audit.MANIFEST_NAME).write_text(json.dumps({"format": audit.MANIFEST_FORMAT, "version": 1,
                                                             "files": {"paper.tex": ["0" * 64]}}))
        (proj / "paper.tex").write_text("x")
        want = "damaged audit manifest"
    before = _tree(tmp_path)
    rc, stdout, err = run_cli("audit", pool_arg, "--out", out, "--small", "--quiet")
    assert rc == 2 and len(err.splitlines()) == 1 and want in err, err
    assert _tree(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_unwritable_target_refused_before_work(run_cli, tmp_path, pool_dir, monkeypatch):
    _no_compute(monkeypatch)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        rc, _, err = run_cli("audit", pool_dir, "--out", ro / "rep", "--small", "--quiet")
        assert rc == 2 and "cannot write into" in err
    finally:
        ro.chmod(0o755)


def test_target_that_cannot_be_written_is_refused_before_work(run_cli, tmp_path, pool_dir, monkeypatch):
    """The write probe (any user, root included): a folder the audit cannot create entries in."""
    _no_compute(monkeypatch)

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(audit.write.tempfile, "mkdtemp", denied)
    rc, _, err = run_cli("audit", pool_dir, "--out", tmp_path / "rep", "--small", "--quiet")
    assert rc == 2 and "cannot write into" in err and "Permission denied" in err, err
    assert list(tmp_path.iterdir()) == []


def _dead_run_temp(target: Path, verb: str = "audit") -> Path:
    """A temporary folder of ``target`` made (with its marker) by a process that has ended."""
    code = ("import sys; from oraclegap._io import make_temp_dir; "
            f"t = make_temp_dir(sys.argv[1], {verb!r}); (t / 'audit.json').write_text('{{}}'); print(t)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(audit.__file__).parents[2]), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, check=True, env=env)
    return Path(res.stdout.strip())


def test_stale_temporaries_of_killed_runs_are_cleaned(tmp_path, pool_dir):
    out = tmp_path / "rep"
    stale = _dead_run_temp(out)
    live = audit.write.make_temp_dir(out, "audit")  # a running audit's (this process is alive)
    legacy = tmp_path / ".rep.tmp-ab12cd_9"  # no marker: kept, however old and whatever it holds
    legacy.mkdir()
    (legacy / "audit.json").write_text("{}")
    old = time.time() - 2 * 86400
    os.utime(legacy, (old, old))
    other = tmp_path / ".rep.tmp-12-notours"  # not ours: no marker, foreign content
    other.mkdir()
    (other / "thesis.tex").write_text("x")
    audit.write_audit(Pool.load(pool_dir), out, report=False, small=True)
    assert stale.parent == tmp_path and not stale.exists()
    assert live.exists() and other.exists() and (other / "thesis.tex").read_text() == "x"
    assert (legacy / "audit.json").read_text() == "{}"
    shutil.rmtree(live)


def _wait_for(pred, timeout: float, proc) -> bool:
    t0 = time.time()
    while time.time() - t0 < timeout:
        if pred():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


@pytest.mark.slow
def test_kill_during_report_phase_leaves_the_folder_and_the_next_run_cleans(tmp_path, pool_dir):
    """SIGKILL while the report notebook executes (audit.json is in the temporary folder, the
    notebook not yet): DIR is exactly the earlier audit plus the user's note; the rerun cleans the
    killed run's temporary folder and keeps the note."""
    out = tmp_path / "rep"
    pool = Pool.load(pool_dir)
    audit.write_audit(pool, out, report=False, small=True, seed=1)
    (out / "note.txt").write_text("mine")
    before = _tree(out)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(audit.__file__).parents[2]), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "oraclegap.cli", "audit", str(pool_dir), "--out", str(out), "--small",
                             "--quiet", "--seed", "2"], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def in_report_phase():
        return any((t / "rep" / "audit.json").exists() and not (t / "rep" / "audit.ipynb").exists()
                   for t in tmp_path.glob(".rep.tmp-*"))

    try:
        reached = _wait_for(in_report_phase, 600, proc)
        assert reached, proc.stderr.read().decode() if proc.poll() is not None else "timeout"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert _tree(out) == before  # bit for bit
    left = list(tmp_path.glob(".rep.tmp-*"))
    assert left  # the killed run's temporary folder ...
    audit.write_audit(pool, out, report=False, small=True, seed=3)
    assert not any(p.exists() for p in left)  # ... is removed by the next run
    assert (out / "note.txt").read_text() == "mine" and audit.load_numbers(out / "audit.json")["settings"]["seed"] == 3


def test_library_refuses_pool_inside_out(tmp_path, pool_dir):
    d = tmp_path / "prev"
    shutil.copytree(pool_dir, d / "pool")
    with pytest.raises(ValueError, match="lies inside --out"):
        audit.check_out(d, str(d / "pool"))
    (d / "v.npz").write_bytes(b"")
    with pytest.raises(ValueError, match="lies inside --out"):  # FILE.npz:KEY names its file
        audit.check_out(d, f"{d / 'v.npz'}:V")
    audit.check_out(tmp_path / "elsewhere", str(d / "pool"))  # outside: fine, and nothing is created
    assert not (tmp_path / "elsewhere").exists()
