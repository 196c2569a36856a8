"""``oraclegap rollouts``: a run, ``--status`` (table and JSON), a store as any command's POOL,
and bad input as one line on stderr with exit status 2."""

from __future__ import annotations

import json

import pytest

from oraclegap import cli
from oraclegap.rollouts import tiny


@pytest.fixture(scope="module")
def setup(tmp_path_factory, one_torch_thread):
    root = tmp_path_factory.mktemp("cli")
    model = tiny.build_tiny_model(root / "model", seed=41)
    lora = tiny.build_tiny_adapter(model, root / "lora", seed=42)
    pfile = root / "p.jsonl"
    pfile.write_text("".join(json.dumps({"id": f"c{i}", "prompt": f"{i}-1=", "answer": str(i - 1)}) + "\n" for i in range(4)))
    return root, model, lora, pfile


def _args(model, lora, pfile, out, *extra):
    """The CLI arguments of a small run; ``extra`` appends options or, for an option already
    set here, replaces its value (the CLI refuses an option given twice)."""
    opts = {"--task": "integer", "--k": "2", "--max-tokens": "6", "--batch-size": "4"}
    extra = list(extra)
    for i in range(len(extra) - 1):
        if extra[i] in opts:
            opts[extra[i]] = extra[i + 1]
            extra[i] = extra[i + 1] = None
    tail = [x for x in extra if x is not None]
    base = ["rollouts", "--model", str(model), "--adapter", f"s0={lora}", "--include-base", "--prompts", str(pfile)]
    return base + [x for kv in opts.items() for x in kv] + ["--out", str(out), "--no-progress", *tail]


def test_run_status_and_pool(setup, tmp_path, capsys):
    _, model, lora, pfile = setup
    out = tmp_path / "store"
    assert cli.main(_args(model, lora, pfile, out, "--worker", "0/2", "--json")) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["complete"] is False and first["cells_total"] == 8 and 0 < first["cells_done"] < 8
    assert cli.main(["rollouts", "--status", str(out)]) == 0
    text = capsys.readouterr().out
    assert "incomplete" in text and "cells missing" in text and "s0" in text
    assert cli.main(_args(model, lora, pfile, out, "--worker", "1/2", "--json")) == 0
    capsys.readouterr()
    assert cli.main(["rollouts", "--status", str(out), "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["complete"] and st["responses_done"] == 16 and [p["policy"] for p in st["per_policy"]] == ["base", "s0"]
    assert sum(p["responses"] for p in st["per_policy"]) == 16
    assert cli.main(["coverage", str(out), "--taus", "0.5", "--json"]) == 0  # a store is a POOL
    cov = json.loads(capsys.readouterr().out)
    assert cov["pool"]["policies"] == ["base", "s0"] and cov["pool"]["k"] == 2


def test_draw_seeds_option(setup, tmp_path, capsys):
    from oraclegap import Pool

    _, model, lora, pfile = setup
    pools = {}
    for mode in ("aligned", "per-policy"):
        assert cli.main(_args(model, lora, pfile, tmp_path / mode, "--draw-seeds", mode, "--json")) == 0
        capsys.readouterr()
        pools[mode] = Pool.from_store(tmp_path / mode)
    assert pools["aligned"].alignment == "seed-aligned" and pools["per-policy"].alignment == "independent"
    seeds = pools["per-policy"].per_response["seed"]
    assert (seeds[:, 0] != seeds[:, 1]).all()
    assert cli.main(_args(model, lora, pfile, tmp_path / "aligned", "--draw-seeds", "per-policy")) == 2  # the store's mode
    err = capsys.readouterr().err
    assert "sampling.draw_seeds: store has 'aligned', this run has 'per-policy'" in err and "\n" not in err.strip()


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--k", "0"], "k must be >= 1"),
        (["--temperature", "-1"], "temperature"),
        (["--task", "nope"], "unknown task"),
        (["--backend", "onnx"], "unknown backend"),
        (["--worker", "2/2"], "0 <= i < n"),
        (["--draw-seeds", "shared"], "draw_seeds must be one of"),
    ],
)
def test_bad_input_exits_2_with_one_line(setup, tmp_path, capsys, extra, match):
    _, model, lora, pfile = setup
    assert cli.main(_args(model, lora, pfile, tmp_path / "s", *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("oraclegap rollouts: error:") and match in err and "\n" not in err and "Traceback" not in err


def test_bad_cli_forms(setup, tmp_path, capsys):
    _, model, lora, pfile = setup
    assert cli.main(["rollouts", "--model", str(model)]) == 2
    assert "missing --prompts, --task, --out" in capsys.readouterr().err
    bad = _args(model, lora, pfile, tmp_path / "s")
    bad[bad.index(f"s0={lora}")] = str(lora)
    assert cli.main(bad) == 2
    assert "--adapter must be NAME=DIR" in capsys.readouterr().err
    assert cli.main(["rollouts", "--status", str(tmp_path)]) == 2
    assert "is not a rollout store" in capsys.readouterr().err


def test_ray_without_ray_and_with_a_worker_share(setup, tmp_path, capsys, monkeypatch):
    """--ray where Ray is not installed names the extra to install; --ray with --worker is refused
    (every Ray task is one worker); both as one line, exit 2, before anything is written."""
    import sys

    _, model, lora, pfile = setup
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError, installed or not
    out = tmp_path / "s"
    assert cli.main(_args(model, lora, pfile, out, "--ray", "--ray-workers", "2")) == 2
    err = capsys.readouterr().err.strip()
    assert err == "oraclegap rollouts: error: --ray needs Ray, an optional extra: pip install 'oraclegap[ray]'"
    assert cli.main(_args(model, lora, pfile, out, "--ray", "--worker", "0/2")) == 2
    err = capsys.readouterr().err.strip()
    assert "--worker and --ray are exclusive" in err and "\n" not in err
    assert not out.exists()
