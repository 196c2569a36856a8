"""Rollouts as Ray tasks on a local Ray cluster (CPU, the tiny model): two Ray workers fill the
store one process fills (same verdicts and texts), and a worker killed mid-run is retried by Ray
without losing or doubling any (prompt, policy, sample). Skipped when Ray is not installed."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'oraclegap[ray]')")
torch = pytest.importorskip("torch", reason="the rollouts extra (torch) is not installed")

from oraclegap import Pool, _store  # noqa: E402
from oraclegap.rollouts import Store, generate, generate_ray, ray_run, tiny  # noqa: E402

RUN = dict(task="integer", k=2, max_tokens=8, batch_size=2, seed=3, draw_seeds="per-policy")  # one prompt per chunk


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("ray")
    model = tiny.build_tiny_model(root / "model", seed=0)
    lora = tiny.build_tiny_adapter(model, root / "lora0", seed=1)
    recs = [{"id": f"q{i}", "prompt": f"{i} + 1 =", "answer": str(i + 1)} for i in range(6)]
    prompts = root / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(r) + "\n" for r in recs))
    single = generate(model, prompts, out=root / "single", adapters={"a0": lora}, include_base=True, progress=False,
                      **RUN)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}})
    yield root, model, lora, prompts, single
    ray.shutdown()


def _same_store(a: Store, b: Store) -> None:
    fa = a.to_frame().sort_values(list(_store.KEY)).reset_index(drop=True)
    fb = b.to_frame().sort_values(list(_store.KEY)).reset_index(drop=True)
    assert not fb.duplicated(list(_store.KEY)).any() and len(fa) == len(fb)
    for col in ("prompt_id", "policy", "sample", "seed", "text", "correct"):
        assert fa[col].tolist() == fb[col].tolist(), col
    np.testing.assert_array_equal(Pool.from_store(a.path).verdicts, Pool.from_store(b.path).verdicts)


def test_two_ray_workers_fill_the_store_one_process_fills(setup):
    root, model, lora, prompts, single = setup
    store = generate_ray(model, prompts, out=root / "ray2", n_workers=2, adapters={"a0": lora}, include_base=True,
                         **RUN)
    assert store.status().complete
    _same_store(single, store)


def test_a_killed_ray_worker_is_retried_without_loss_or_duplicates(setup, monkeypatch):
    root, model, lora, prompts, single = setup
    marker = root / "killed-once"
    ray.shutdown()  # restart the local cluster so its workers see the fault variable
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1",
                                       ray_run.FAULT_ENV: str(marker)}})
    store = generate_ray(model, prompts, out=root / "ray_kill", n_workers=2, adapters={"a0": lora},
                         include_base=True, max_retries=2, **RUN)
    assert marker.exists()  # one task attempt did die after committing a chunk
    st = store.status()
    assert st.complete and not st.duplicates
    _same_store(single, store)


def test_ray_refuses_a_worker_share(setup):
    root, model, lora, prompts, _ = setup
    with pytest.raises(ValueError, match="worker and ray are exclusive"):
        generate_ray(model, prompts, out=root / "x", worker="0/2", **RUN)


def test_the_cli_on_ray_fills_the_store_one_process_fills(setup, capsys):
    """``oraclegap rollouts ... --ray --ray-workers 2`` on the running local cluster."""
    from oraclegap import cli

    root, model, lora, prompts, single = setup
    out = root / "ray_cli"
    argv = ["rollouts", "--model", str(model), "--adapter", f"a0={lora}", "--include-base", "--prompts", str(prompts),
            "--task", RUN["task"], "--k", str(RUN["k"]), "--max-tokens", str(RUN["max_tokens"]),
            "--batch-size", str(RUN["batch_size"]), "--seed", str(RUN["seed"]), "--draw-seeds", RUN["draw_seeds"],
            "--out", str(out), "--ray", "--ray-workers", "2", "--no-progress", "--json"]
    assert cli.main(argv) == 0
    assert json.loads(capsys.readouterr().out)["complete"] is True
    _same_store(single, Store(out))
