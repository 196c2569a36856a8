"""``oraclegap compose``: JSON and table output against the library, budgets, k > 1 pools, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from oraclegap.deploy import compose as C
from oraclegap.pool import Pool


@pytest.fixture()
def pool_dir(make_pool):
    return make_pool(90, 6, 1, seed=4, sim="latent", datasets=("A",))


def test_compose_json_matches_library(run_cli, pool_dir):
    path, pool = pool_dir
    rc, out, _ = run_cli("compose", str(path), "--sizes", "1,2,4", "--json")
    assert rc == 0
    payload = json.loads(out)
    X = pool.verdicts[:, :, 0]
    b = int(np.argmax(X.sum(axis=0)))
    assert payload["anchor"] == pool.policy_names[b]
    assert [s["size"] for s in payload["sizes"]] == [1, 2, 4]
    g = C.greedy_pool(X, b, 4)
    for s in payload["sizes"]:
        k = s["size"]
        assert s["greedy"] == [pool.policy_names[m] for m in g.members[:k]]
        assert s["F_b"] == pytest.approx(g.values[k - 1])
        assert sum(s["gains"]) == pytest.approx(s["F_b"])
        opt = C.exhaustive_pool(X, b, k)
        assert s["optimum"]["F_b"] == pytest.approx(opt.value) and s["optimum"]["exact"]
        assert s["greedy_over_optimum"] == pytest.approx(g.values[k - 1] / opt.value)
        acc = C.baseline_pool(X, b, k, "accuracy")
        assert s["accuracy_pool"]["F_b"] == pytest.approx(C.complementary_coverage(X, b, acc))


def test_compose_table_anchor_and_budget(run_cli, pool_dir):
    path, pool = pool_dir
    name = pool.policy_names[2]
    rc, out, _ = run_cli("compose", str(path), "--anchor", name, "--sizes", "2", "--budget", "0.4")
    assert rc == 0
    assert f"anchor: {name}" in out and "budget 0.4" in out and "greedy/optimum" in out
    rc, out, _ = run_cli("compose", str(path), "--anchor", name, "--budget", "0.4", "--json")
    bud = json.loads(out)["budget"]
    assert bud["cost"] <= 0.4 + 1e-9
    bp = C.budgeted_pool(pool, 2, None, 0.4)
    assert bud["F_b"] == pytest.approx(bp.value) and bud["members"] == [pool.policy_names[m] for m in bp.members]


def test_compose_k_gt_1_needs_tau(run_cli, tmp_path):
    rng = np.random.default_rng(0)
    V = rng.random((50, 4, 6)) < np.array([0.2, 0.5, 0.4, 0.3])[None, :, None]
    Pool.from_array(V).save(tmp_path / "p")
    rc, _, err = run_cli("compose", str(tmp_path / "p"))
    assert rc == 2 and "--tau" in err and err.count("\n") == 1
    rc, out, _ = run_cli("compose", str(tmp_path / "p"), "--tau", "0.5", "--json")
    payload = json.loads(out)
    X, _ = C.outcome_matrix(Pool.from_array(V), tau=0.5)
    assert payload["pool"]["reduction"] == "coverage at tau=0.5"
    assert payload["sizes"][-1]["F_b"] == pytest.approx(C.greedy_pool(X, "best").value)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--anchor", "nobody"], "is not a model"),
        (["--sizes", "1,9"], "1..K-1=5"),
        (["--sizes", "0"], "1..K-1=5"),
        (["--budget", "0.5"], "budget needs costs"),
        (["--budget", "-1"], "budget must be"),
    ],
)
def test_compose_errors_one_line(run_cli, tmp_path, args, needle):
    rng = np.random.default_rng(1)
    Pool.from_array(rng.random((30, 6, 1)) < 0.5).save(tmp_path / "nocost")
    if needle == "budget must be":
        C.latent_world(n_items=30, n_models=6, datasets=("A",)).pool.save(tmp_path / "cost")
        target = tmp_path / "cost"
    else:
        target = tmp_path / "nocost"
    rc, _, err = run_cli("compose", str(target), *args)
    assert rc == 2 and needle in err and err.startswith("oraclegap compose: error:") and err.count("\n") == 1
