"""``oraclegap audit``: the report folder end to end, --json, and one-line errors with exit 2."""

from __future__ import annotations

import json

import nbformat
import numpy as np
import pytest

from oraclegap import audit, book
from oraclegap.pool import Pool


@pytest.fixture(scope="module")
def pool_dir(make_pool):
    return make_pool(120, 4, 6, seed=2, f=0.5, s=0.3)


def _markdown_outputs(nb) -> str:
    return "\n".join(o["data"]["text/markdown"] for c in nb.cells if c.cell_type == "code"
                     for o in c.get("outputs", []) if "text/markdown" in o.get("data", {}))


@pytest.mark.slow
def test_report_folder(run_cli, tmp_path, pool_dir):
    out = tmp_path / "audit"
    rc, stdout, err = run_cli("audit", pool_dir[0], "--out", out, "--small", "--quiet", "--seed", "2")
    assert rc == 0, err
    assert sorted(p.name for p in out.iterdir()) == [audit.MANIFEST_NAME, "audit.ipynb", "audit.json", "report.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit"]  # no temporary folder left beside it
    numbers = audit.load_numbers(out / "audit.json")
    assert numbers["source"] == str(pool_dir[0]) and numbers["settings"]["seed"] == 2
    v = numbers["verdict"]
    assert stdout.splitlines()[0] == f"verdict: {v['code']}" and v["headline"] in stdout
    # the report states the numbers of audit.json: every computed paragraph appears in the executed notebook
    nb = nbformat.read(out / "audit.ipynb", as_version=4)
    assert book.error_outputs(nb) == []
    shown = _markdown_outputs(nb)
    for name, text in audit.texts(numbers).items():
        assert text in shown, name
    assert any("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Traceback" not in html and "Pre-routing audit" in html and "<img" in html
    assert book.page_problems(out / "report.html") == []
    if 'content="quarto' in html:  # Quarto writes the symbols as HTML, with no MathJax to fetch offline
        assert "cdn.jsdelivr.net/npm/mathjax" not in html and "<em>τ</em>" in html
    # the same numbers as a direct run with the same settings
    direct = audit.run_audit(Pool.load(pool_dir[0]), small=True, seed=2, source=str(pool_dir[0]))
    build = numbers.pop("build")  # what computed the numbers: commit, lock, versions, date
    assert build["small"] is True and "numpy" in build["versions"] and build["date"].endswith("UTC")
    from oraclegap.book.buildline import page_build_line

    assert "lock" in page_build_line(html) and "rendered with" in page_build_line(html)
    assert json.loads(json.dumps(direct.to_json())) == numbers
    # a second run replaces the audit folder
    rc, _, err = run_cli("audit", pool_dir[0], "--out", out, "--small", "--quiet", "--seed", "5", "--no-report")
    assert rc == 0, err
    assert audit.load_numbers(out / "audit.json")["settings"]["seed"] == 5 and not (out / "report.html").exists()


def test_json_output(run_cli, tmp_path, pool_dir):
    out = tmp_path / "a"
    rc, stdout, err = run_cli("audit", pool_dir[0], "--out", out, "--small", "--quiet", "--no-report", "--json",
                              "--taus", "0.2,0.5", "--alpha", "0.1")
    assert rc == 0, err
    payload = json.loads(stdout)
    assert payload == json.loads((out / "audit.json").read_text())
    # one thread gives the same numbers as the default
    rc, stdout1, err = run_cli("audit", pool_dir[0], "--out", tmp_path / "b", "--small", "--quiet", "--no-report",
                               "--json", "--taus", "0.2,0.5", "--alpha", "0.1", "--workers", "1")
    assert rc == 0, err
    drop = lambda d: {k: v for k, v in d.items() if k != "build"}  # noqa: E731 - the build line holds the date
    assert drop(json.loads(stdout1)) == drop(payload)
    assert payload["settings"]["taus"] == [0.2, 0.5] and payload["settings"]["alpha"] == 0.1
    assert payload["settings"]["primary_tau"] == 0.2


def _one_line_error(run_cli, *argv):
    rc, stdout, err = run_cli(*argv)
    assert rc == 2, (stdout, err)
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and lines[0].startswith("oraclegap audit: error:")
    return lines[0]


def test_bad_inputs(run_cli, tmp_path, pool_dir):
    out = tmp_path / "out"
    rng = np.random.default_rng(0)
    v = rng.random((30, 3, 4)) < 0.5
    Pool.from_array(v[:, :1]).save(tmp_path / "one_member")
    Pool.from_array(v[:1]).save(tmp_path / "one_prompt")
    Pool.from_array(np.ones((30, 3, 4), bool)).save(tmp_path / "all_right")
    Pool.from_array(np.zeros((30, 3, 4), bool)).save(tmp_path / "all_wrong")
    np.save(tmp_path / "halves.npy", np.full((10, 3), 0.5))
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "empty").mkdir()
    cases = {
        "neither an existing path": [tmp_path / "missing"],
        "unsupported type": [tmp_path / "notes.txt"],
        "binary": [tmp_path / "halves.npy"],
        "manifest": [tmp_path / "empty"],
        "1 policy": [tmp_path / "one_member"],
        "1 prompt": [tmp_path / "one_prompt"],
        "every verdict in the pool is correct": [tmp_path / "all_right"],
        "every verdict in the pool is incorrect": [tmp_path / "all_wrong"],
        "no-such-registry-pool": ["no-such-registry-pool"],
        "taus": [pool_dir[0], "--taus", "0.1,abc"],
        "(0, 1]": [pool_dir[0], "--taus", "1.5"],
        "power_tau": [pool_dir[0], "--power-tau", "0.15"],
        "alpha": [pool_dir[0], "--alpha", "0.9"],
        "--workers must be >= 1": [pool_dir[0], "--workers", "0"],
    }
    for what, args in cases.items():
        line = _one_line_error(run_cli, "audit", *args, "--out", out, "--small", "--quiet")
        assert what in line, (what, line)
        assert not out.exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("x")
    line = _one_line_error(run_cli, "audit", pool_dir[0], "--out", mine, "--small", "--quiet")
    assert "not an audit directory" in line and (mine / "keep.txt").read_text() == "x"
    assert sorted(p.name for p in mine.iterdir()) == ["keep.txt"]


@pytest.mark.slow
@pytest.mark.external
def test_math500_small_report(run_cli, tmp_path, external_dir):
    out = tmp_path / "math500"
    rc, stdout, err = run_cli("audit", "chen2026-math500", "--out", out, "--small", "--quiet")
    assert rc == 0, err
    numbers = audit.load_numbers(out / "audit.json")
    assert numbers["pool"]["n_prompts"] == 500 and numbers["pool"]["k"] == 30
    assert book.page_problems(out / "report.html") == []


@pytest.mark.slow
def test_lab_seed_pool_small_report(run_cli, tmp_path):
    """The lab's seed pool by its registry name: report.html and audit.json, the numbers of a direct
    run_audit on the same pool and seed."""
    from oraclegap import datasets

    out = tmp_path / "lab"
    rc, stdout, err = run_cli("audit", "lab-seed-primary", "--out", out, "--small", "--quiet", "--seed", "1")
    assert rc == 0, err
    assert sorted(p.name for p in out.iterdir()) == [audit.MANIFEST_NAME, "audit.ipynb", "audit.json", "report.html"]
    numbers = audit.load_numbers(out / "audit.json")
    assert (numbers["pool"]["n_prompts"], numbers["pool"]["n_policies"], numbers["pool"]["k"]) == (240, 5, 16)
    direct = audit.run_audit(datasets.load("lab-seed-primary"), small=True, seed=1, source="lab-seed-primary")
    assert numbers.pop("build")["commit"] == __import__("oraclegap._buildinfo", fromlist=["x"]).git_state()["commit"]
    assert json.loads(json.dumps(direct.to_json())) == numbers
    assert stdout.splitlines()[0] == f"verdict: {numbers['verdict']['code']}"
    shown = _markdown_outputs(nbformat.read(out / "audit.ipynb", as_version=4))
    assert numbers["verdict"]["headline"] in shown
    assert book.page_problems(out / "report.html") == []
