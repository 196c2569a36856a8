"""Nothing is lost and nothing is doubled: a transformers-backend run SIGKILLed several times at
random points and rerun holds every (prompt, policy, sample) exactly once, identical to an
uninterrupted run with the same seeds; three concurrent ``oraclegap rollouts --worker i/3``
processes on one store give the same pool as one process. Both with aligned and with per-policy
draw seeds."""

from __future__ import annotations

import json
import multiprocessing
import signal
import sys
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from oraclegap import Pool, _store
from oraclegap.rollouts import Store, generate, tiny

RUN = dict(task="integer", k=2, max_tokens=12, batch_size=2, seed=5)  # one prompt per chunk
MODES = ("aligned", "per-policy")
# Children are real processes forked from a forkserver that has imported torch, transformers
# and peft once (and run no torch op, so forking is safe); each child loads the model itself.
PRELOAD = [
    "torch",
    "transformers.models.auto.modeling_auto",
    "transformers.models.auto.tokenization_auto",
    "transformers.models.llama.modeling_llama",
    "transformers.generation",
    "peft",
    "oraclegap.rollouts.backends.hf",
    "oraclegap.cli",
]


@pytest.fixture(scope="module")
def procs():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def _generate(kw):
    """A killable run: ``generate`` in its own process, one torch thread."""
    torch.set_num_threads(1)
    generate(**kw)


def _cli(argv):
    """A worker process: the ``oraclegap`` command line; a non-zero status becomes the exit code."""
    from oraclegap.cli import main

    torch.set_num_threads(1)
    sys.exit(main(argv))


@pytest.fixture(scope="module")
def setup(tmp_path_factory, one_torch_thread):  # the subprocesses run with one thread too
    root = tmp_path_factory.mktemp("kill")
    model = tiny.build_tiny_model(root / "model", seed=21)
    adapters = {"a0": str(tiny.build_tiny_adapter(model, root / "l0", seed=22)), "a1": str(tiny.build_tiny_adapter(model, root / "l1", seed=23))}
    recs = [{"id": f"x{i}", "prompt": f"{i} + {2 * i} =", "answer": str(3 * i)} for i in range(10)]
    pfile = root / "prompts.jsonl"
    pfile.write_text("".join(json.dumps(r) + "\n" for r in recs))
    kw = dict(model=str(model), prompts=str(pfile), adapters=adapters, include_base=True, progress=False, **RUN)
    refs = {mode: generate(out=root / f"reference-{mode}", draw_seeds=mode, **kw) for mode in MODES}  # uninterrupted
    return types.SimpleNamespace(root=root, kw=kw, ref={m: r.to_frame() for m, r in refs.items()},
                                 ref_pool={m: Pool.from_store(r.path) for m, r in refs.items()})


def _n_shards(out: Path) -> int:
    d = out / _store.SHARDS
    return len(list(d.glob("*.parquet"))) if d.is_dir() else 0


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_sigkill_at_random_points_then_resume(setup, procs, tmp_path, mode):
    out = tmp_path / "killed"
    kw = dict(setup.kw, out=str(out), draw_seeds=mode)
    rng = np.random.default_rng(2024)
    kills, progress = 0, []
    for _ in range(3):
        before = _n_shards(out)
        proc = procs.Process(target=_generate, args=(kw,))
        proc.start()
        deadline = time.monotonic() + 120
        while _n_shards(out) <= before and proc.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.12))  # a random point after at least one new shard
        if proc.is_alive():
            proc.kill()  # SIGKILL
            proc.join()
            assert proc.exitcode == -signal.SIGKILL
            kills += 1
        else:
            proc.join()
            assert proc.exitcode == 0
        progress.append(_n_shards(out))
    assert kills >= 2, f"the run finished before it could be killed ({progress})"
    assert progress[-1] < 30, "every chunk was written before the last kill; nothing left to resume"
    assert all(b >= a for a, b in zip(progress, progress[1:], strict=False))
    st = generate(**kw)  # rerun: resumes, and cleans up what the killed writers left
    assert not list((out / _store.SHARDS).glob(".tmp-*"))
    assert _n_shards(out) == 30  # one shard per chunk: nothing written twice
    got = st.to_frame()
    assert not got.duplicated(list(_store.KEY)).any() and len(got) == 10 * 3 * 2
    pd.testing.assert_frame_equal(got, setup.ref[mode])
    pool, ref = Pool.from_store(out), setup.ref_pool[mode]
    assert np.array_equal(pool.verdicts, ref.verdicts) and np.array_equal(pool.answers, ref.answers)
    assert pool.alignment == ("seed-aligned" if mode == "aligned" else "independent")


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_three_concurrent_workers_fill_one_store(setup, procs, tmp_path, mode):
    out = tmp_path / "workers"
    kw = setup.kw
    argv = ["rollouts", "--model", kw["model"], "--prompts", kw["prompts"]]
    for name, path in kw["adapters"].items():
        argv += ["--adapter", f"{name}={path}"]
    argv += ["--include-base", "--task", RUN["task"], "--k", str(RUN["k"]), "--max-tokens", str(RUN["max_tokens"])]
    argv += ["--seed", str(RUN["seed"]), "--batch-size", str(RUN["batch_size"]), "--out", str(out), "--no-progress", "--json"]
    argv += ["--draw-seeds", mode]
    workers = [procs.Process(target=_cli, args=(argv + ["--worker", f"{i}/3"],)) for i in range(3)]
    for w in workers:  # all three start at once: they also race to create the store
        w.start()
    for w in workers:
        w.join(timeout=300)
        assert w.exitcode == 0
    assert {f.name[:5] for f in (out / _store.SHARDS).glob("*.parquet")} == {"w0of3", "w1of3", "w2of3"}
    pool, ref = Pool.from_store(out), setup.ref_pool[mode]
    assert np.array_equal(pool.verdicts, ref.verdicts) and np.array_equal(pool.answers, ref.answers)
    for name in ("confidence", "completion_tokens", "seed"):
        assert np.array_equal(pool.per_response[name], ref.per_response[name], equal_nan=True)
    pd.testing.assert_frame_equal(Store(out).to_frame(), setup.ref[mode])
    assert Store(out).identity["sampling"]["draw_seeds"] == mode
