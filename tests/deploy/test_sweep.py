"""The held-out pool-construction sweep (paper 002 App. J): every cell against the single-instance
functions on the same split, router gain through the routers module and through stand-in estimators and
functions (identities and refits by hand), embeddings, costs, stability, errors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from oraclegap.deploy import compose as C
from oraclegap.deploy import routers


class NearestRouter:
    """A stand-in with the routers.py interface: fit(X, Y) / predict(X) -> member index
    (the member with the best mean outcome among the 5 nearest calibration items)."""

    def __init__(self, k: int = 5):
        self.k = k

    def get_params(self, deep=True):
        return {"k": self.k}

    def set_params(self, **p):
        self.k = p.get("k", self.k)
        return self

    def fit(self, X, Y):
        self.X_, self.Y_ = np.asarray(X, float), np.asarray(Y, float)
        return self

    def predict(self, X):
        d = ((np.asarray(X, float)[:, None, :] - self.X_[None]) ** 2).sum(-1)
        nn = np.argsort(d, axis=1, kind="stable")[:, : self.k]
        return self.Y_[nn].mean(axis=1).argmax(axis=1)


@pytest.fixture(scope="module")
def world():
    return C.latent_world(n_items=80, n_models=6, datasets=("A", "B"), seed=7)


@pytest.fixture(scope="module")
def sweep(world):
    return C.pool_sweep(world.pool, n_folds=5, n_random=50, seed=3, router=NearestRouter())


def test_grid_and_every_cell_against_single_instance_functions(world, sweep):
    pool = world.pool
    cells = sweep.cells
    assert len(cells) == 2 * 5 * 5 and set(cells["size"]) == {1, 2, 3, 4, 5}
    X_all = pool.verdicts[:, :, 0]
    names = pool.policy_names
    for r in cells.itertuples():
        pos = sweep.items[r.dataset]
        X = X_all[pos]
        test = sweep.splits[r.dataset][r.fold]
        cal = ~test
        b = names.index(r.anchor)
        assert b == int(np.argmax(X[cal].sum(axis=0)))
        g = C.greedy_pool(X, b, r.size, rows=cal)
        assert " + ".join(names[j] for j in g.members) == r.greedy
        assert r.greedy_cal == pytest.approx(g.value)
        assert r.greedy_test == pytest.approx(C.complementary_coverage(X, b, g.members, rows=test))
        opt = C.exhaustive_pool(X, b, r.size, rows=cal)
        assert r.optimum_exact and r.optimum_cal == pytest.approx(opt.value)
        assert r.optpool_test == pytest.approx(C.complementary_coverage(X, b, opt.members, rows=test))
        assert r.hindsight_test == pytest.approx(C.exhaustive_pool(X, b, r.size, rows=test).value)
        assert C.GREEDY_BOUND <= r.ratio <= 1 + 1e-12
        assert r.hindsight_test >= max(r.greedy_test, r.optpool_test, r.random_p95) - 1e-12
        assert r.random_p05 <= r.random_mean <= r.random_p95
        assert 0 <= r.beats_random + r.ties_random <= 1
        assert r.above_p95 == (r.greedy_test > r.random_p95)


def test_rule_rows_against_baseline_pool(world, sweep):
    X_all = world.pool.verdicts[:, :, 0]
    names = world.pool.policy_names
    rows = sweep.rules
    assert set(rows["rule"]) == {"greedy", "exhaustive", "accuracy", "diversity", "kmedoids", "dpp"}
    for r in rows[rows["rule"].isin(["accuracy", "diversity", "kmedoids", "dpp"])].itertuples():
        X = X_all[sweep.items[r.dataset]]
        test = sweep.splits[r.dataset][r.fold]
        b = names.index(r.anchor)
        m = C.baseline_pool(X, b, r.size, r.rule, rows=~test)
        assert r.members == " + ".join(names[j] for j in m)
        assert r.test == pytest.approx(C.complementary_coverage(X, b, m, rows=test))
        assert r.cal == pytest.approx(C.complementary_coverage(X, b, m, rows=~test))


def test_router_gain_identities(world):
    """Confidences that reveal the outcomes make max-confidence pick a right member whenever one
    exists, so its gain over the anchor is exactly the held-out complementary coverage of the pool;
    a confidence that always prefers the anchor gains exactly zero at exactly the anchor's cost."""
    pool = world.pool
    X = pool.verdicts[:, :, 0].astype(float)
    conf = X + 0.01 * np.random.default_rng(0).random(X.shape)
    sw = C.pool_sweep(pool, n_folds=4, n_random=20, seed=2, router="max_confidence", confidence=conf,
                      router_rules=("greedy", "accuracy", "exhaustive"))
    r = sw.rules[sw.rules["rule"].isin(["greedy", "accuracy", "exhaustive"])]
    assert r["router_gain"].notna().all() and len(r) == 3 * 2 * 4 * 5
    assert np.allclose(r["router_gain"], r["test"])
    b = int(np.argmax(X.sum(axis=0)))
    anchor_conf = np.zeros_like(X)
    anchor_conf[:, b] = 1.0
    sw3 = C.pool_sweep(pool, n_folds=3, n_random=20, seed=4, anchor=b, router="auto", confidence=anchor_conf, baselines=())
    g = sw3.rules[sw3.rules["rule"] == "greedy"]
    assert np.allclose(g["router_gain"], 0) and np.allclose(g["routed_cost_ratio"], 1.0)


def test_function_router(world):
    """A function router that always calls the pool's first member (pools are sorted indices)."""
    pool = world.pool
    X = pool.verdicts[:, :, 0]
    names = pool.policy_names
    calls = []

    def first(X_cal, Y_cal, X_test):
        calls.append((len(X_cal), Y_cal.shape, len(X_test)))
        return np.zeros(len(X_test), dtype=np.int64)

    sw = C.pool_sweep(pool, n_folds=3, n_random=10, seed=6, router=first, inputs=pool.embeddings, baselines=("accuracy",))
    r = sw.rules[sw.rules["rule"].isin(["greedy", "accuracy"])]
    for row in r.itertuples():
        pos = sw.items[row.dataset]
        test = sw.splits[row.dataset][row.fold]
        Xt = X[pos][test]
        expect = Xt[:, row.pool[0]].mean() - Xt[:, names.index(row.anchor)].mean()
        assert row.router_gain == pytest.approx(expect)
    assert all(nc + nt == 80 and y[0] == nc for nc, y, nt in calls)


def test_estimator_router_and_costs(world, sweep):
    r = sweep.rules
    routed = r[r["rule"].isin(["greedy", "accuracy"])]
    assert routed["router_gain"].notna().all() and r.loc[~r["rule"].isin(["greedy", "accuracy"]), "router_gain"].isna().all()
    assert (routed["router_gain"].abs() <= 1).all()
    # same fold and same pool -> the same fitted router and the same gain
    same = routed.groupby(["dataset", "fold", "pool"])["router_gain"].nunique()
    assert (same == 1).all()
    # relative cost of querying the whole pool: summed mean member cost over the anchor's, on the test half
    cost = world.pool.cost
    names = world.pool.policy_names
    for row in r.sample(20, random_state=0).itertuples():
        pos = sweep.items[row.dataset]
        test = sweep.splits[row.dataset][row.fold]
        Ct = cost[pos][test]
        b = names.index(row.anchor)
        assert row.pool_cost_ratio == pytest.approx(Ct[:, list(row.pool)].mean(axis=0).sum() / Ct[:, b].mean())
        assert row.pool_cost_ratio >= 1


def test_determinism_and_summary(world):
    a = C.pool_sweep(world.pool, n_folds=3, n_random=30, seed=11)
    b = C.pool_sweep(world.pool, n_folds=3, n_random=30, seed=11)
    pd.testing.assert_frame_equal(a.cells, b.cells)
    pd.testing.assert_frame_equal(a.rules, b.rules)
    s = a.summary()
    assert len(s) == 2 * 5 and {"ratio_mean", "random_p95", "above_p95", "accuracy_test", "kmedoids_test"} <= set(s.columns)
    st = a.stability()
    assert ((st["modal_pool_share"] > 0) & (st["modal_pool_share"] <= 1)).all()
    assert ((st["mean_jaccard"] >= 0) & (st["mean_jaccard"] <= 1)).all()
    # at size K - 1 every rule keeps the whole pool: identical pools in every fold
    full = st[st["size"] == 5]
    assert (full["mean_jaccard"] == 1).all() and (full["modal_pool_share"] == 1).all()


def test_bound_path_when_enumeration_is_infeasible():
    rng = np.random.default_rng(2)
    X = rng.random((120, 12)) < rng.uniform(0.1, 0.8, 12)
    sw = C.pool_sweep(X, sizes=[2, 5, 8], n_folds=3, n_random=20, seed=0, max_subsets=200, baselines=())
    c = sw.cells
    assert c.loc[c["size"] == 2, "optimum_exact"].all() and not c.loc[c["size"] > 2, "optimum_exact"].any()
    assert c.loc[c["size"] > 2, "hindsight_test"].isna().all()
    for r in c[c["size"] > 2].itertuples():
        cal = ~sw.splits["all"][r.fold]
        true = C.exhaustive_pool(X, r.anchor, r.size, rows=cal)
        assert true.exact
        assert r.greedy_cal <= true.value <= r.optimum_cal + 1e-12  # the reported optimum is an upper bound
        assert r.ratio <= r.greedy_cal / true.value + 1e-12  # so the ratio is a lower bound


def test_mapping_and_label_inputs():
    rng = np.random.default_rng(0)
    A, B = rng.random((40, 4)) < 0.5, rng.random((30, 5)) < 0.4
    sw = C.pool_sweep({"a": A, "b": B}, n_folds=2, n_random=10, seed=0)
    assert sw.settings["K"] == {"a": 4, "b": 5}
    assert set(sw.cells.groupby("dataset")["size"].max().items()) == {("a", 3), ("b", 4)}
    labels = np.repeat(["x", "y"], 20)
    sw2 = C.pool_sweep(A, by=labels, n_folds=2, n_random=10, seed=0)
    assert list(sw2.cells["dataset"].unique()) == ["x", "y"]


def test_sweep_bad_inputs(world):
    pool = world.pool
    with pytest.raises(ValueError, match="1..K-1=5"):
        C.pool_sweep(pool, sizes=[1, 6], n_folds=2)
    with pytest.raises(ValueError, match="n_folds must be >= 1"):
        C.pool_sweep(pool, n_folds=0)
    with pytest.raises(ValueError, match="baselines must be among"):
        C.pool_sweep(pool, n_folds=2, baselines=("random",))
    with pytest.raises(ValueError, match="anchor 'nobody' is not a model"):
        C.pool_sweep(pool, n_folds=2, anchor="nobody")
    with pytest.raises(TypeError, match="router must be"):
        C.pool_sweep(pool, n_folds=2, router=42)
    with pytest.raises(ValueError, match="needs inputs"):
        C.pool_sweep(pool.verdicts[:, :, 0], n_folds=2, router=NearestRouter())
    with pytest.raises(ValueError, match="needs confidence"):
        C.pool_sweep(pool, n_folds=2, router="max_confidence")
    bad_cost = pool.cost.copy()
    bad_cost[0, 0] = np.nan
    with pytest.raises(ValueError, match="missing values"):
        C.pool_sweep(pool, n_folds=2, cost=bad_cost)
    with pytest.raises(ValueError, match="non-negative"):
        C.pool_sweep(pool, n_folds=2, cost=-pool.cost)

    def bad_router(Xc, Yc, Xt):
        return np.full(len(Xt), 99)

    with pytest.raises(ValueError, match="one member index"):
        C.pool_sweep(pool, n_folds=2, router=bad_router, inputs=pool.embeddings)


def _refit_gain(pool, X_all, sw, row, inputs, family="embed_knn"):
    """The router gain of one sweep row recomputed by hand through the routers interface."""
    pos = sw.items[row.dataset]
    test = sw.splits[row.dataset][row.fold]
    cal_pos, test_pos = pos[~test], pos[test]
    members = list(row.pool)
    r = routers.make_router(family).fit(inputs.take(cal_pos), X_all[np.ix_(cal_pos, members)].astype(float))
    picked = np.asarray(members)[r.predict(inputs.take(test_pos))]
    b = pool.policy_names.index(row.anchor)
    return X_all[test_pos, picked].mean() - X_all[test_pos, b].mean()


def test_auto_router_is_the_embedding_knn_of_the_routers_module(world):
    """router='auto' without confidences: routers.make_router('embed_knn') on the pool's own embeddings,
    fitted per fold on the calibration items of the pool's columns; every gain recomputed by hand."""
    pool = world.pool
    sw = C.pool_sweep(pool, sizes=[1, 2], n_folds=3, n_random=10, seed=5, router="auto", baselines=("accuracy",))
    assert sw.settings["router_family"] == "embed_knn" and sw.settings["inputs"] == {"A": "pool", "B": "pool"}
    inputs = routers.router_inputs(pool, embed="pool")
    X_all = pool.verdicts[:, :, 0]
    r = sw.rules[sw.rules["rule"].isin(["greedy", "accuracy"])]
    assert r["router_gain"].notna().all() and len(r) == 2 * 3 * 2 * 2
    for row in r.itertuples():
        assert row.router_gain == pytest.approx(_refit_gain(pool, X_all, sw, row, inputs))
    named = C.pool_sweep(pool, sizes=[1, 2], n_folds=3, n_random=10, seed=5, router="embed_knn", baselines=("accuracy",))
    pd.testing.assert_frame_equal(named.rules, sw.rules)


def test_max_confidence_is_the_routers_selector(world):
    """Post-inference selection goes through routers.make_router('max_confidence'): confidences are
    restricted to the pool's columns, and ties go to the member best on calibration. With one constant
    confidence every member ties, so the router keeps the anchor (the calibration-best member, always
    in the pool): zero gain at exactly the anchor's cost."""
    pool = world.pool
    sw = C.pool_sweep(pool, n_folds=3, n_random=10, seed=1, router="auto", confidence=np.full(pool.shape[:2], 0.5), baselines=("accuracy",))
    assert sw.settings["router_family"] == "max_confidence"
    r = sw.rules[sw.rules["rule"].isin(["greedy", "accuracy"])]
    assert np.allclose(r["router_gain"], 0.0) and np.allclose(r["routed_cost_ratio"], 1.0)
    # confidence = the negated outcome: the selector picks a wrong member whenever the pool has one
    X = pool.verdicts[:, :, 0]
    bad = C.pool_sweep(pool, n_folds=2, n_random=10, seed=1, router="max_confidence", confidence=1.0 - X, baselines=())
    for row in bad.rules[bad.rules["rule"] == "greedy"].itertuples():
        pos = bad.items[row.dataset]
        Xt = X[pos][bad.splits[row.dataset][row.fold]][:, list(row.pool)]
        assert row.router_gain == pytest.approx(Xt.all(axis=1).mean() - Xt[:, list(row.pool).index(pool.policy_names.index(row.anchor))].mean())


def test_cost_aware_family_gets_the_members_costs(world):
    """A family that needs costs ('cheapest') is fitted with the costs of the pool's members."""
    pool = world.pool
    sw = C.pool_sweep(pool, sizes=[2], n_folds=2, n_random=10, seed=2, router="cheapest", baselines=())
    X_all = pool.verdicts[:, :, 0]
    routed = sw.rules[sw.rules["rule"] == "greedy"]
    assert len(routed) == 2 * 2
    for row in routed.itertuples():
        pos = sw.items[row.dataset]
        test = sw.splits[row.dataset][row.fold]
        members = list(row.pool)
        cheap = members[int(np.argmin(pool.cost[pos[~test]][:, members].mean(axis=0)))]
        b = pool.policy_names.index(row.anchor)
        assert row.router_gain == pytest.approx(X_all[pos[test], cheap].mean() - X_all[pos[test], b].mean())


def test_text_pool_embedding_choice(tmp_path, monkeypatch):
    """embed='cached' on a pool with text and no embeddings: TF-IDF + SVD unless the MiniLM cache
    already holds these texts, in which case those cached vectors are what the router sees."""
    from oraclegap.deploy import features

    sim = features.simulated_router_pool(n=120, M=3, seed=4)
    pool = dataclasses.replace(sim.pool, embeddings=None)
    monkeypatch.setenv("OG_CACHE_DIR", str(tmp_path))
    assert C.sweep_embedding(pool, "cached") == "tfidf-svd"
    assert C.sweep_embedding(pool, "minilm") == "minilm" and C.sweep_embedding(sim.pool, "cached") == "pool"
    sw = C.pool_sweep(pool, n_folds=2, n_random=10, seed=0, by=None, router="auto", embed="cached", baselines=())
    assert sw.settings["inputs"] == {"all": "tfidf-svd"}
    # a cache entry for exactly these texts switches the choice to MiniLM without computing anything
    path = C._minilm_cache_file(pool)
    fake = np.random.default_rng(0).standard_normal((pool.n_prompts, 5))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, embeddings=fake, n=np.array(pool.n_prompts))
    assert C.sweep_embedding(pool, "cached") == "minilm"
    sw2 = C.pool_sweep(pool, n_folds=2, n_random=10, seed=0, by=None, router="auto", embed="cached", baselines=())
    assert sw2.settings["inputs"] == {"all": "minilm"}
    X_all = pool.verdicts[:, :, 0]
    inputs = features.RouterInputs(embeddings=fake, source="minilm")
    for row in sw2.rules[sw2.rules["rule"] == "greedy"].itertuples():
        assert row.router_gain == pytest.approx(_refit_gain(pool, X_all, sw2, row, inputs))
    with pytest.raises(ValueError, match="embed must be one of"):
        C.sweep_embedding(pool, "bert")


def test_router_families_that_cannot_run_are_refused(world):
    pool = world.pool
    with pytest.raises(ValueError, match="not a router family"):
        C.pool_sweep(pool, n_folds=2, router="nearest")
    with pytest.raises(ValueError, match="'tfidf_knn' cannot run on dataset 'A': it needs prompt text"):
        C.pool_sweep(pool, n_folds=2, router="tfidf_knn")
    with pytest.raises(ValueError, match="router 'dataset' maps prompts"):
        C.pool_sweep(pool, n_folds=2, router="dataset")
    with pytest.raises(ValueError, match=r"confidence for dataset 'A' must have shape \[n=160, K=6\]"):
        C.pool_sweep(pool, n_folds=2, router="max_confidence", confidence=np.zeros((10, 6)))
    with pytest.raises(ValueError, match="embed must be one of"):
        C.pool_sweep(pool, n_folds=2, router="auto", embed="bert")
    with pytest.raises(TypeError, match="reads routers.RouterInputs"):
        C.pool_sweep(pool, n_folds=2, router="auto", inputs=pool.embeddings)


def test_latent_world_truth():
    w = C.latent_world(n_items=2000, n_models=4, datasets=("A",), topic_sd=0.0, dataset_sd=0.0, item_sd=0.0,
                       accuracy=[0.2, 0.4, 0.6, 0.8], seed=0)
    X = w.pool.verdicts[:, :, 0]
    assert np.allclose(w.p, [0.2, 0.4, 0.6, 0.8])
    assert np.all(np.abs(X.mean(axis=0) - [0.2, 0.4, 0.6, 0.8]) < 0.04)
    # independent members given p: population F_b({m}) = (1 - p_b) p_m
    assert abs(C.complementary_coverage(X, 3, [2]) - 0.2 * 0.6) < 0.03
    assert w.pool.embeddings.shape == (2000, 8) and w.pool.cost.shape == (2000, 4)


def test_branch_and_bound_cells_match_enumeration():
    rng = np.random.default_rng(8)
    X = rng.random((100, 10)) < rng.uniform(0.1, 0.8, 10)
    enum = C.pool_sweep(X, sizes=[3, 5], n_folds=3, n_random=10, seed=1, baselines=())
    bnb = C.pool_sweep(X, sizes=[3, 5], n_folds=3, n_random=10, seed=1, baselines=(), max_subsets=10, max_nodes=10**6)
    cols = ["optimum_cal", "optimum_exact", "ratio", "hindsight_test"]
    pd.testing.assert_frame_equal(enum.cells[cols], bnb.cells[cols])
    e = enum.rules[enum.rules["rule"] == "exhaustive"].reset_index(drop=True)
    b = bnb.rules[bnb.rules["rule"] == "exhaustive"].reset_index(drop=True)
    assert np.allclose(e["cal"], b["cal"]) and len(e) == len(b) == 6
    # a tiny node budget leaves some cells inexact; their optimum column is then a valid upper bound
    cut = C.pool_sweep(X, sizes=[5], n_folds=3, n_random=10, seed=1, baselines=(), max_subsets=10, max_nodes=2)
    full = enum.cells[enum.cells["size"] == 5].reset_index(drop=True)
    assert (cut.cells["optimum_cal"] >= full["optimum_cal"] - 1e-12).all()


def test_tables_and_overview(sweep):
    t10 = sweep.table10(2)
    assert list(t10.columns) == ["dataset", "greedy", "accuracy", "diversity", "kmedoids", "dpp", "random", "exhaustive", "hindsight"]
    assert (t10["hindsight"] >= t10[["greedy", "accuracy", "exhaustive", "random"]].max(axis=1) - 1e-12).all()
    r2 = sweep.rules[(sweep.rules["size"] == 2) & (sweep.rules["rule"] == "kmedoids")]
    assert t10.set_index("dataset")["kmedoids"].to_dict() == pytest.approx(r2.groupby("dataset")["test"].mean().to_dict())
    t9 = sweep.table9(2)
    assert set(t9["rule"]) == {"greedy", "accuracy"} and t9.loc[t9["rule"] == "accuracy", "greedy_over_optimum"].isna().all()
    assert t9["router_gain"].notna().all() and (t9["pool_cost_ratio"] >= 1).all()
    ov = sweep.overview(2)
    assert len(ov) == 2 and (ov["exact_share"] == 1).all() and (ov["ratio_min"] >= C.GREEDY_BOUND).all()
    assert ((ov["saturation_size"] >= 1) & (ov["saturation_size"] <= 5)).all()
    with pytest.raises(ValueError, match="size=9"):
        sweep.table10(9)


def test_mapping_of_pools_uses_their_costs(world):
    pos = np.flatnonzero(world.pool.prompts["dataset"].to_numpy() == "A")
    part = world.pool.select(prompts=[world.pool.prompt_ids[i] for i in pos])
    sw = C.pool_sweep({"A": part}, n_folds=2, n_random=10, seed=0, baselines=())
    assert sw.rules["pool_cost_ratio"].notna().all()
    same = C.pool_sweep(world.pool.verdicts[pos, :, 0], cost=world.pool.cost[pos], n_folds=2, n_random=10, seed=0, baselines=())
    assert np.allclose(sw.rules["pool_cost_ratio"], same.rules["pool_cost_ratio"])


def test_conversion_of_coverage_into_gain(world, sweep):
    """conversion(): confidences that reveal the outcomes realise all of the coverage; a constant
    confidence none of it; any router realises at most all of it; means match the rule rows."""
    pool = world.pool
    X = pool.verdicts[:, :, 0].astype(float)
    reveal = C.pool_sweep(pool, n_folds=3, n_random=10, seed=2, router="max_confidence",
                          confidence=X + 0.01 * np.random.default_rng(1).random(X.shape), baselines=("accuracy",))
    cv = reveal.conversion(2)
    assert list(cv["dataset"]) == ["A", "B"] and np.allclose(cv["realised"], 1.0) and np.allclose(cv["greedy_gain"], cv["greedy_test"])
    assert (cv["corr"] > 0.99).all()
    flat = C.pool_sweep(pool, n_folds=3, n_random=10, seed=2, router="max_confidence", confidence=np.ones_like(X), baselines=("accuracy",))
    cf = flat.conversion(2)
    assert np.allclose(cf[["greedy_gain", "accuracy_gain", "realised", "positive_folds"]], 0.0) and cf["corr"].isna().all()
    c = sweep.conversion(2)
    assert (c["realised"] <= 1 + 1e-12).all()
    g = sweep.rules[(sweep.rules["size"] == 2) & (sweep.rules["rule"] == "greedy")]
    assert c.set_index("dataset")["greedy_gain"].to_dict() == pytest.approx(g.groupby("dataset")["router_gain"].mean().to_dict())
    with pytest.raises(ValueError, match="no router gains"):
        C.pool_sweep(pool, n_folds=2, n_random=10, seed=0, baselines=()).conversion(2)
    with pytest.raises(ValueError, match="size=9"):
        sweep.conversion(9)
