"""Router families ranked with bootstrap rank intervals and Holm-adjusted tests.

Known truths: families far apart rank in their true order with degenerate intervals; identical
families share ranks and are never distinguished; the rank draws are those of the shared paired
resamples (the loop reference of ``bootstrap_means``); the Holm p-values equal statsmodels'; a
simulated family whose true accuracy equals the best's is kept in the indistinguishable set at
about the nominal rate while one far below is excluded.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from oraclegap.deploy.evaluate import bootstrap_means_loop, evaluate_routers
from oraclegap.deploy.features import simulated_router_pool
from oraclegap.deploy.ranking import rank_families, rank_routers


def _paired(n, accs, seed):
    rng = np.random.default_rng(seed)
    u = rng.random((n, 1))  # shared difficulty: paired outcomes, as routers on one prompt set
    return (u < np.asarray(accs)[None, :]) ^ (rng.random((n, len(accs))) < 0.02)


def test_far_apart_families_rank_in_order_with_tight_intervals():
    S = _paired(2000, [0.3, 0.9, 0.6], seed=1)
    r = rank_families(S, ["low", "high", "mid"], n_boot=400, seed=0)
    f = r.frame().set_index("family")
    assert list(r.frame()["family"]) == ["high", "mid", "low"] and r.best == "high"
    assert (f["lo"] == f["value"]).all() and (f["hi"] == f["value"]).all() and (f["level"] == 0.95).all()
    assert f.loc["high", "p_first"] == 1.0 and r.tied_with_best == ("high",)
    assert f.loc["low", "p_holm"] < 1e-6


def test_identical_families_are_never_distinguished():
    S = _paired(300, [0.6, 0.4], seed=2)
    S = np.column_stack([S[:, 0], S[:, 0], S[:, 1]])
    r = rank_families(S, ["a", "b", "c"], n_boot=300, seed=1)
    f = r.frame().set_index("family")
    assert f.loc["a", "value"] == f.loc["b", "value"] == 1 and f.loc["b", "p_vs_best"] == 1.0
    assert set(r.tied_with_best) >= {"a", "b"} and (f.loc[["a", "b"], "p_first"] == f.loc["a", "p_first"]).all()


def test_rank_draws_are_the_shared_paired_resamples_and_holm_is_statsmodels():
    S = _paired(150, [0.5, 0.55, 0.45, 0.52], seed=3)
    r = rank_families(S, list("abcd"), n_boot=500, seed=7, alpha=0.1)
    draws = bootstrap_means_loop(S.astype(float), 500, np.random.default_rng(7))
    R = rankdata(-draws, method="min", axis=1)
    np.testing.assert_array_equal([i.lo for i in r.rank], np.quantile(R, 0.05, axis=0, method="inverted_cdf"))
    np.testing.assert_array_equal([i.hi for i in r.rank], np.quantile(R, 0.95, axis=0, method="inverted_cdf"))
    np.testing.assert_allclose(r.p_first, (R == 1).mean(axis=0))
    b = list("abcd").index(r.best)
    others = [j for j in range(4) if j != b]
    raw = []
    for j in others:
        n10, n01 = int((S[:, j] & ~S[:, b]).sum()), int((~S[:, j] & S[:, b]).sum())
        raw.append(mcnemar([[0, n10], [n01, 0]], exact=True).pvalue if n10 + n01 else 1.0)
    np.testing.assert_allclose(r.p_vs_best[others], raw)
    np.testing.assert_allclose(r.p_holm[others], multipletests(raw, method="holm")[1])
    assert all(i.lo <= i.value <= i.hi for i in r.rank)


def test_indistinguishable_set_keeps_an_equal_family_and_drops_a_worse_one():
    kept_equal, kept_worse = [], []
    for rep in range(60):
        S = _paired(400, [0.7, 0.7, 0.45], seed=100 + rep)
        S[:, 1] = np.random.default_rng(500 + rep).random(400) < 0.7  # same accuracy, independent errors
        r = rank_families(S, ["a", "b", "worse"], n_boot=100, seed=rep, alpha=0.05)
        kept_equal.append({"a", "b"} <= set(r.tied_with_best))
        kept_worse.append("worse" in r.tied_with_best)
    assert np.mean(kept_equal) >= 0.85  # the best-of-two selection costs some level; Holm keeps it near 1 - alpha
    assert np.mean(kept_worse) == 0.0


def test_rank_routers_matches_the_evaluation_and_refuses_bad_input():
    sim = simulated_router_pool(200, 3, 1, seed=5)
    res = evaluate_routers(sim.pool, ["embed_knn", "dataset"], split="half", seed=2, n_boot=200)
    r = rank_routers(res, sim.pool, seed=0)
    f = r.frame().set_index("family")
    assert set(f.index) == {fam for fam, ev in res.evaluations.items() if ev.regime == "pre-answer"}
    for fam, ev in res.evaluations.items():
        if fam in f.index:
            assert f.loc[fam, "score"] == pytest.approx(ev.accuracy)
    assert set(rank_routers(res, sim.pool, regime=None).families) == set(res.evaluations)
    with pytest.raises(ValueError, match="regime must be"):
        rank_routers(res, sim.pool, regime="offline")
    with pytest.raises(ValueError, match="0/1 outcomes"):
        rank_families(np.full((5, 2), 0.5), ["a", "b"])
    with pytest.raises(ValueError, match="distinct names"):
        rank_families(np.ones((5, 2), bool), ["a", "a"])
    with pytest.raises(TypeError, match="RouterComparison"):
        rank_routers(object(), sim.pool)
