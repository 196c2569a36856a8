"""The routing-plateau tables (oraclegap.deploy.plateau): every number is read from the
evaluations or recomputed from their choices, identities hold, and the simulation study counts
what it says."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.stats import binom

from oraclegap.deploy import plateau as P
from oraclegap.deploy.evaluate import evaluate_routers, outcome_matrix
from oraclegap.deploy.features import router_inputs, simulated_router_pool
from oraclegap.stats.certify import family_certificate

FAMS = ["dataset", "embed_knn", "tfidf_knn", "multi_logreg", "random", "plurality_vote", "max_confidence"]


@pytest.fixture(scope="module")
def two_pools():
    out, pools = {}, {}
    for name, kind, seed in (("planted", "specialists", 3), ("exchangeable", "exchangeable", 4)):
        sim = simulated_router_pool(300, 4, 1, kind=kind, strength=0.3, seed=seed)
        X = router_inputs(sim.pool, confidence=sim.info["confidence"])
        out[name] = evaluate_routers(sim.pool, FAMS, split="half", seed=0, inputs=X, n_boot=400)
        pools[name] = sim.pool
    return out, pools


def test_router_table_reads_the_evaluations(two_pools):
    comps, _ = two_pools
    t = P.router_table(comps).set_index("family")
    assert list(t.columns) == ["planted", "exchangeable", "mean"]
    assert "plurality_vote" not in t.index and t.index[0] == "best_single" and t.index[-1] == "oracle"
    for pool, res in comps.items():
        for f, e in res.evaluations.items():
            if e.regime == "pre-answer":
                assert t.loc[f, pool] == e.accuracy
        assert t.loc["oracle", pool] == res.evaluation("best_single").oracle
    assert t.loc["embed_knn", "mean"] == pytest.approx(t.loc["embed_knn", ["planted", "exchangeable"]].mean())
    # a family that did not run on one pool has no mean: every mean is over the same pools
    one = P.router_table({"planted": comps["planted"], "fewer": dataclasses.replace(
        comps["exchangeable"], evaluations={f: e for f, e in comps["exchangeable"].evaluations.items()
                                            if f != "embed_knn"})}).set_index("family")
    assert np.isnan(one.loc["embed_knn", "fewer"]) and np.isnan(one.loc["embed_knn", "mean"])
    assert one.loc["tfidf_knn", "mean"] == pytest.approx(one.loc["tfidf_knn", ["planted", "fewer"]].mean())
    post = P.router_table(comps, regime="post-inference").set_index("family")
    assert set(post.index) == {"best_single", "plurality_vote", "max_confidence", "oracle"}
    with pytest.raises(ValueError, match="regime"):
        P.router_table(comps, regime="both")
    with pytest.raises(ValueError, match="non-empty"):
        P.router_table({})
    with pytest.raises(TypeError, match="RouterComparison"):
        P.router_table({"x": 1})


def test_plateau_table_identities(two_pools):
    comps, _ = two_pools
    t = P.plateau_table(comps).set_index("pool")
    for pool, res in comps.items():
        r = t.loc[pool]
        base = res.evaluation("best_single")
        assert r["G_b"] == pytest.approx(r["oracle"] - r["baseline"], abs=1e-12)
        fitted = {f: e for f, e in res.evaluations.items() if e.regime == "pre-answer" and f not in P.FIXED_REFERENCES}
        assert r["best_router"] in fitted and r["gain"] == max(e.gain_cal for e in fitted.values())
        assert r["residual"] == pytest.approx(r["G_b"] - r["gain"], abs=1e-12)
        assert r["G_b_lo"] == base.G_b_lo and r["G_b_lo"] <= r["G_b"] <= r["G_b_hi"]
        assert np.isnan(r["recovered"]) == (not r["G_b_lo"] > 0)
        if not np.isnan(r["recovered"]):
            assert r["recovered"] == pytest.approx(r["gain"] / r["G_b"])
    assert t.loc["planted", "gain_lo"] > 0  # the planted specialists are found


def test_paired_table_counts_and_net_gain(two_pools):
    comps, pools = two_pools
    t = P.paired_table(comps)
    assert set(t["regime"]) == {"pre-answer", "post-inference"} and "best_single" not in set(t["family"])
    np.testing.assert_allclose(t["net"], t["difference"], atol=1e-12)  # rescue - loss = the paired difference
    for pool, res in comps.items():
        O, _ = outcome_matrix(pools[pool])
        ev = res.protocol.eval_idx
        rows = np.arange(ev.size)
        B = O[ev][rows, res.evaluation("best_single").choice]
        for r in t[t["pool"] == pool].itertuples():
            S = O[ev][rows, res.evaluation(r.family).choice]
            assert (r.n10, r.n01) == (int((S & ~B).sum()), int((~S & B).sum()))
            assert r.rescue == pytest.approx((S & ~B).mean()) and r.loss == pytest.approx((~S & B).mean())
    pre = P.paired_table(comps, regime="pre-answer")
    assert set(pre["regime"]) == {"pre-answer"}


def test_certificate_is_theorem_6_over_the_named_family(two_pools):
    comps, pools = two_pools
    res, pool = comps["planted"], pools["planted"]
    cert = P.certificate(res, pool, ["embed_knn", "dataset", "not_evaluated"])
    O, _ = outcome_matrix(pool)
    Oe = O[res.protocol.eval_idx]
    want = family_certificate(Oe, {f: res.evaluation(f).choice for f in ("embed_knn", "dataset")}, 0.05,
                              model_names=res.policy_names)
    assert cert.L == pool.n_policies + 2 and (cert.G, cert.H) == (want.G, want.H)
    every = P.certificate(res, pool, None)
    assert every.L == pool.n_policies + len([f for f in ("dataset", "embed_knn", "tfidf_knn", "multi_logreg")])
    cv = evaluate_routers(pool, ["embed_knn"], cv=3, seed=0, inputs=router_inputs(pool), n_boot=200)
    with pytest.raises(ValueError, match="split protocol"):
        P.certificate(cv, pool)
    with pytest.raises(ValueError, match="evaluated on"):
        P.certificate(res, pool.select(policies=[0, 1]))


def test_simulated_study_counts(monkeypatch):
    planted = P.simulated_study("specialists", 4, n=300, M=4, families=["dataset", "embed_knn", "random"], n_boot=300, seed=1)
    t = planted.set_index("family")
    assert (t["pools"] == 4).all() and t.loc["dataset", "above_cal"] >= 3 and t.loc["embed_knn", "above_cal"] >= 3
    assert t.loc["random", "above_cal"] == 0
    assert planted.attrs["nominal"] == pytest.approx(0.025)
    null = P.simulated_study("exchangeable", 6, n=100, families=["embed_knn", "tfidf_knn"], n_boot=300, seed=2).set_index("family")
    for f in ("embed_knn", "tfidf_knn"):
        c = int(null.loc[f, "above_cal"])
        assert null.loc[f, "p_upper_cal"] == pytest.approx(binom.sf(c - 1, 6, 0.025))
        assert null.loc[f, "above_best"] <= 6 and null.loc[f, "rate_cal"] == c / 6
    again = P.simulated_study("exchangeable", 6, n=100, families=["embed_knn", "tfidf_knn"], n_boot=300, seed=2).set_index("family")
    assert again.equals(null)
    with pytest.raises(ValueError, match="kind"):
        P.simulated_study("planted", 2)
