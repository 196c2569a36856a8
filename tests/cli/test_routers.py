"""``oraclegap routers``: the router table from a pool directory, JSON and text, protocols,
which inputs it used, and one-line errors (exit 2) for pools it cannot route."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from oraclegap.deploy.evaluate import evaluate_routers
from oraclegap.deploy.routers import simulated_router_pool
from oraclegap.pool import Pool


@pytest.fixture(scope="module")
def pool_dir(make_pool):
    return make_pool(160, 3, 1, seed=4, sim="router")


def test_json_matches_the_library(run_cli, pool_dir):
    d, pool = pool_dir
    rc, out, _ = run_cli("routers", d, "--families", "embed_knn,dataset", "--split", "half", "--seed", "3", "--n-boot", "300", "--json")
    assert rc == 0
    payload = json.loads(out)
    # the task-wise best baseline is added when the pool has a dataset column
    lib = evaluate_routers(Pool.load(d), ["embed_knn", "dataset", "taskwise_best"], split="half", seed=3, n_boot=300)
    rows = {r["family"]: r for r in payload["routers"]}
    assert set(rows) == {"best_single", "embed_knn", "dataset", "taskwise_best"}
    assert set(payload["ranking"]["tied_with_best"]) <= set(rows) and payload["ranking"]["best"] in rows
    for f in rows:
        e = lib.evaluation(f)
        for key in ("accuracy", "gain_best", "gain_best_lo", "gain_cal_hi", "e_D", "break_even", "p_mcnemar", "p_holm"):
            assert rows[f][key] == pytest.approx(getattr(e, key), nan_ok=True)
        assert (rows[f]["n10"], rows[f]["n01"]) == (e.n10, e.n01)
    assert payload["inputs"]["embeddings"]["source"] == "pool" and "seed 3" in payload["protocol"]
    assert payload["certificate"] is not None


def test_table_says_which_inputs_it_used(run_cli, pool_dir):
    d, _ = pool_dir
    rc, out, _ = run_cli("routers", d, "--families", "tfidf_knn,gbr_features", "--cv", "3", "--n-boot", "200")
    assert rc == 0
    assert "inputs: prompt text, embeddings (pool, d=16)" in out and "3-fold cross-fitting" in out
    for col in ("family", "accuracy", "gain_best_lo", "gain_cal_hi", "e_D", "break_even", "n10", "n01", "p_mcnemar", "p_holm"):
        assert col in out
    assert "tfidf_knn" in out and "gbr_features" in out


def test_k_gt_1_coverage_and_default_families(run_cli, tmp_path):
    sim = simulated_router_pool(90, 3, 6, seed=2)
    pool = dataclasses.replace(sim.pool, answers=None)
    pool.save(tmp_path / "p")
    rc, out, err = run_cli("routers", tmp_path / "p", "--tau", "0.5", "--split", "half", "--n-boot", "200", "--json")
    assert rc == 0, err
    payload = json.loads(out)
    assert payload["tau"] == 0.5 and "cheapest" in payload["skipped"]
    assert {"embed_knn", "tfidf_logreg", "dataset", "mlp"} <= {r["family"] for r in payload["routers"]}
    assert all(abs(r["identity_residual"]) <= 1e-12 for r in payload["routers"])


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--families", "embed_knn"], "pass tau"),  # k > 1 without --tau
        (["--tau", "0.5", "--families", "oracle"], "unknown router family"),
        (["--tau", "0.5", "--split", "dev"], "unknown split"),
    ],
)
def test_errors_are_one_line(run_cli, tmp_path, argv, message):
    sim = simulated_router_pool(40, 3, 4, seed=0)
    sim.pool.save(tmp_path / "p")
    rc, out, err = run_cli("routers", tmp_path / "p", *argv)
    assert rc == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_pool_without_inputs_is_refused(run_cli, tmp_path):
    v = np.random.default_rng(0).random((30, 3)) < 0.5
    np.save(tmp_path / "v.npy", v)
    rc, _, err = run_cli("routers", tmp_path / "v.npy")
    assert rc == 2 and "no prompt text, embeddings, features" in err
    rc, _, err = run_cli("routers", tmp_path / "v.npy", "--families", "tfidf_knn")
    assert rc == 2 and "needs prompt text" in err
