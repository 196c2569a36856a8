"""``oraclegap certify``: registry names, pool directories, k > 1 reductions, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from oraclegap import datasets as D
from oraclegap.pool import Pool
from oraclegap.stats.certify import outcomes_from_pool, selection_valid_gap, selection_valid_gap_from_outcomes


def test_certify_registry_name_json(run_cli):
    rc, out, _ = run_cli("certify", "paper002-pilot-hellaswag", "--method", "exact", "--naive", "percentile", "--json")
    assert rc == 0
    payload = json.loads(out)
    res = payload["results"][0]
    t11 = D.paper_table("002_table11_pilot_gap").set_index("dataset").loc["hellaswag"]
    assert (round(res["lo"], 3), round(res["hi"], 3)) == (t11["sv_lo"], t11["sv_hi"])
    assert (round(res["naive_lo"], 3), round(res["naive_hi"], 3)) == (t11["naive_lo"], t11["naive_hi"])
    assert res["certified"] is True and payload["pool"]["reduction"] == "k=1"


@pytest.mark.parametrize("method", ["paired", "hoeffding", "hoeffding-paired"])
def test_certify_methods_table(run_cli, method):
    rc, out, _ = run_cli("certify", "paper002-pilot-gsm8k", "--method", method)
    assert rc == 0 and method in out and "naive_lo" in out


def test_certify_k_gt_1_pool_dir(tmp_path, run_cli):
    rng = np.random.default_rng(0)
    v = rng.random((60, 3, 5)) < np.array([0.3, 0.5, 0.4])[None, :, None]
    pool = Pool.from_array(v)
    pool.save(tmp_path / "pool")
    rc, _, err = run_cli("certify", str(tmp_path / "pool"), "--json")
    assert rc == 2 and "pass --tau T" in err and "--draw J" in err  # no silent reduction
    rc, out, _ = run_cli("certify", str(tmp_path / "pool"), "--draw", "0", "--json")
    res = json.loads(out)
    expect = selection_valid_gap_from_outcomes(v[:, :, 0])
    assert rc == 0 and res["pool"]["reduction"] == "draw 0 of k=5"
    assert res["results"][0]["lo"] == pytest.approx(expect.lo) and res["results"][0]["hi"] == pytest.approx(expect.hi)
    rc, out, _ = run_cli("certify", str(tmp_path / "pool"), "--tau", "0.4", "--method", "paired", "--json")
    R = outcomes_from_pool(pool, tau=0.4)
    expect = selection_valid_gap(R.sum(axis=0), int(R.any(axis=1).sum()), 60, method="paired")
    assert json.loads(out)["results"][0]["lo"] == pytest.approx(expect.lo)
    rc, out, _ = run_cli("certify", str(tmp_path / "pool"), "--draw", "3", "--json")
    assert json.loads(out)["pool"]["reduction"] == "draw 3 of k=5"


def test_certify_by_column(tmp_path, run_cli):
    pool = D.load("paper002-pilot-arc")
    prompts = pool.prompts.copy()
    prompts["half"] = np.where(np.arange(pool.n_prompts) % 2 == 0, "even", "odd")
    Pool.from_array(pool.verdicts, prompts, pool.policies).save(tmp_path / "p")
    rc, out, _ = run_cli("certify", str(tmp_path / "p"), "--by", "half", "--json")
    res = json.loads(out)["results"]
    assert rc == 0 and [r["half"] for r in res] == ["even", "odd"] and sum(r["n"] for r in res) == 150


def test_certify_errors(run_cli, tmp_path):
    rc, _, err = run_cli("certify", "no-such-pool")
    assert rc == 2 and "neither an existing path nor a known dataset name" in err
    rc, _, err = run_cli("certify", "paper002-pilot-arc", "--alpha", "1.5")
    assert rc == 2 and "alpha" in err
    rc, _, err = run_cli("certify", "paper002-pilot-arc", "--draw", "2")
    assert rc == 2 and "k=1" in err
    rc, _, err = run_cli("certify", "paper002-pilot-arc", "--by", "nope")
    assert rc == 2 and "prompt-table column" in err
