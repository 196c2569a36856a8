"""Paired evaluation of routing regimes (deploy.regimes) and the end-to-end comparison on a pool with costs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from oraclegap.deploy import regimes as RG
from oraclegap.deploy.features import router_inputs, simulated_router_pool


def test_evaluate_policies_identities():
    rng = np.random.default_rng(0)
    n, M = 300, 3
    O = (rng.random((n, M)) < [0.7, 0.5, 0.4]).astype(int)
    C = np.array([4.0, 2.0, 1.0])
    pols = {
        "same": {"member": np.zeros(n, dtype=int)},
        "random": {"member": rng.integers(0, M, n)},
        "cheap": {"member": np.full(n, 2)},
        "cascade": {"member": np.full(n, 0), "paid": np.full(n, 5.0), "calls": np.full(n, 2.0)},
    }
    df = RG.evaluate_policies(O, pols, 0, member_cost=C, n_boot=400, seed=1).set_index("policy")
    base = df.loc["frozen best member"]
    assert base["gain"] == 0 and base["rel_cost"] == 1 and base["gain_lo"] == base["gain_hi"] == 0
    assert df.loc["same", "gain_lo"] == df.loc["same", "gain_hi"] == 0 and df.loc["same", "p_mcnemar"] == 1
    np.testing.assert_allclose(df["rescue"] - df["loss"], df["gain"], atol=1e-12)
    assert df.loc["cheap", "rel_cost"] == pytest.approx(0.25) and df.loc[
        "cascade", "rel_cost"
    ] == pytest.approx(1.25)
    assert df.loc["cascade", "calls"] == 2
    r = df.loc["random"]
    assert r["p_mcnemar"] == pytest.approx(
        binomtest(int(r["n10"]), int(r["n10"] + r["n01"]), 0.5).pvalue, rel=1e-9
    )
    assert (df["p_holm"] >= df["p_mcnemar"] - 1e-12).all()
    fam = ["same", "random", "cheap", "cascade"]
    np.testing.assert_allclose(
        df.loc[fam, "p_holm"], multipletests(df.loc[fam, "p_mcnemar"], method="holm")[1]
    )
    # a reference row is not a tested rule: it keeps its raw p and leaves Holm's family
    pols["cheap"]["regime"] = "fixed reference"
    df2 = RG.evaluate_policies(O, pols, 0, member_cost=C, n_boot=400, seed=1).set_index("policy")
    assert df2.loc["cheap", "p_holm"] == df2.loc["cheap", "p_mcnemar"]
    fam2 = ["same", "random", "cascade"]
    np.testing.assert_allclose(
        df2.loc[fam2, "p_holm"], multipletests(df2.loc[fam2, "p_mcnemar"], method="holm")[1]
    )
    assert (df["gain_lo"] <= df["gain"] + 1e-12).all() and (df["gain"] <= df["gain_hi"] + 1e-12).all()
    with pytest.raises(ValueError, match="member"):
        RG.evaluate_policies(O, {"bad": {"member": np.full(n, 7)}}, 0)
    with pytest.raises(ValueError, match="non-empty"):
        RG.evaluate_policies(O, {}, 0)


def test_cost_aware_oracle_by_hand():
    O = np.array([[1, 1, 0], [0, 0, 0], [0, 1, 1]])
    C = np.array([[3.0, 1.0, 2.0], [3.0, 1.0, 0.5], [1.0, 2.0, 3.0]])
    assert RG.cost_aware_oracle(O, C).tolist() == [1, 2, 1]


@pytest.fixture(scope="module")
def sim():
    s = simulated_router_pool(n=400, M=3, strength=0.4, seed=3)
    cost = np.broadcast_to([1.0, 2.0, 6.0], (400, 3)).copy()
    pool = dataclasses.replace(s.pool, cost=cost)
    return pool, cost, router_inputs(s.pool, embed="pool")


def test_compare_regimes_end_to_end(sim):
    pool, cost, X = sim
    res = RG.compare_regimes(pool, X, cost, n_boot=300, seed=0)
    t = res.table.set_index("policy")
    assert {
        "cascade",
        "linucb",
        "epsilon_greedy",
        "routellm",
        "hybridllm",
        "cheapest member",
        "cost-aware oracle",
    } <= set(t.index)
    assert (
        res.n_eval == 200 and res.certificate.L == 3 + 3
    )  # the constants, the cascade and two binary routers
    assert (
        t.loc["cost-aware oracle", "accuracy"] >= t["accuracy"].max() - 1e-12
    )  # it is right wherever any member is
    assert (
        t.loc["cascade", "calls"] >= 1 and t.loc["cascade", "mean_cost"] >= 1.0
    )  # pays at least the cheapest call
    assert set(res.curves["policy"]) == {"cascade", "linucb", "epsilon_greedy", "routellm", "hybridllm"}
    assert (res.binary["apgr_lo"] <= res.binary["apgr"]).all() and (
        res.binary["apgr"] <= res.binary["apgr_hi"]
    ).all()
    last = res.regret.groupby("policy")["step"].max()
    assert (last == res.n_eval).all()
    again = RG.compare_regimes(pool, X, cost, n_boot=300, seed=0)
    assert again.table.equals(res.table)  # seeded


def test_compare_regimes_needs_costs_and_embeddings(sim):
    pool, cost, X = sim
    with pytest.raises(ValueError, match="costs"):
        RG.compare_regimes(dataclasses.replace(pool, cost=None), X)
    with pytest.raises(ValueError, match="embeddings"):
        RG.compare_regimes(pool, dataclasses.replace(X, embeddings=None), cost)


def test_pair_columns_hand_example():
    """RouteLLM's PGR by hand (the example of evaluate.pgr_curve): strong (1, 1, 1, 0), weak (0, 1, 0, 0),
    score (4, 2, 3, 1): PGR at x = (0, .25, .5, .75, 1) is (0, .5, 1, 1, 1)."""
    S, W = np.array([1.0, 1, 1, 0]), np.array([0.0, 1, 0, 0])
    cols = RG._pair_columns(np.array([4.0, 2, 3, 1]), S, W, np.linspace(0, 1, 5), np.arange(4))
    pgr = (cols.mean(axis=0) - W.mean()) / (S.mean() - W.mean())
    np.testing.assert_allclose(pgr, [0, 0.5, 1, 1, 1])
