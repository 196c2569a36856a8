"""Cross-dataset specialist helpers (oraclegap.deploy.specialists): every table agrees with the
library's definitions, the separation threshold is what its definition says on constructed
pools, the routing identity holds for routers and fixed rules, and the planting rule is fitted
on validation prompts only."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from oraclegap import Pool
from oraclegap.deploy import specialists as SP
from oraclegap.deploy.features import simulated_router_pool
from oraclegap.stats import coverage as cov
from oraclegap.stats.coverage import need
from oraclegap.stats.simulate import pc1_bins

TAUS = [0.10, 0.30, 0.50, 0.70]


def _pool_from_counts(counts, k, groups, owners, splits=None, emb=None, seed=0):
    counts = np.asarray(counts)
    n, M = counts.shape
    prompts = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "dataset": groups})
    if splits is not None:
        prompts["split"] = splits
    pool = Pool.from_counts(counts, k, seed=seed, prompts=prompts,
                            policies=pd.DataFrame({"name": [f"m{j}" for j in range(M)], "dataset": owners}))
    return pool if emb is None else dataclasses.replace(pool, embeddings=emb)


@pytest.fixture(scope="module")
def split_pool():
    """Planted topic specialists (k = 16) with a validation/test split column."""
    sim = simulated_router_pool(200, 3, 16, strength=0.3, seed=5)
    p = sim.pool
    prompts = p.prompts.assign(split=np.where(np.arange(p.n_prompts) % 2 == 0, "validation", "test"))
    return dataclasses.replace(p, prompts=prompts)


def test_cross_table_matches_coverage_and_null_tests(split_pool):
    test = split_pool.split("test")
    ct = SP.cross_table(test, TAUS, n_draws=200, seed=1)
    f = ct.frame()
    c = cov.coverage(test, TAUS)
    assert list(f["tau"]) == TAUS
    np.testing.assert_allclose(f["L"], c.L, atol=1e-12)
    np.testing.assert_allclose(f["D"], c.D, atol=1e-12)
    np.testing.assert_allclose(f["best"], c.best)
    np.testing.assert_allclose(f["mixture"], c.mixture)
    np.testing.assert_allclose(f["oracle"], c.oracle)
    np.testing.assert_allclose(f["break_even"], c.L / c.D)
    np.testing.assert_allclose(f["excess"], f["L"] - f["L_null"])
    t = ct.tests.get("L", 0.30, "margin")
    row = f.set_index("tau").loc[0.30]
    assert (row["p_m"], row["p_m_lower"], row["L_margin"]) == (t.p, t.p_lower, t.mean)
    # the same seed gives the same draws
    assert SP.cross_table(test, TAUS, n_draws=200, seed=1).frame().equals(f)


def test_cross_table_refuses_degenerate_nulls():
    pool = _pool_from_counts(np.array([[1, 0], [0, 1], [1, 1]]), 1, ["a", "b", "a"], ["a", "b"])
    with pytest.raises(ValueError, match="degenerate"):
        SP.cross_table(pool, [0.5], n_draws=50)


def test_coverage_by_group_is_member_coverage_of_each_half():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 9, (40, 3))
    groups = np.where(np.arange(40) < 25, "a", "b")
    pool = _pool_from_counts(counts, 8, groups, ["a", "b", None])
    cg = SP.coverage_by_group(pool, TAUS)
    assert len(cg) == 2 * len(TAUS) * 3
    for g in ("a", "b"):
        sub = pool.select(prompts=groups == g)
        ref = cov.coverage(sub, TAUS).member
        got = cg[cg["group"] == g].pivot(index="tau", columns="policy", values="coverage").to_numpy()
        np.testing.assert_allclose(got, ref)
        assert (cg.loc[cg["group"] == g, "n_prompts"] == sub.n_prompts).all()
        np.testing.assert_allclose(cg[(cg["group"] == g) & (cg["tau"] == TAUS[0])]["mean_rate"], sub.rates().mean(axis=0))
    own = cg.drop_duplicates(["group", "policy"]).set_index(["group", "policy"])["own"]
    assert own[("a", "m0")] and own[("b", "m1")] and not own[("a", "m2")] and not own[("b", "m0")]
    with pytest.raises(ValueError, match="by='nope'"):
        SP.coverage_by_group(pool, TAUS, by="nope")


def test_separation_threshold_on_a_constructed_pool():
    # k = 10. Half a: member A (m0, trained on a) has 6 successes on every prompt, B (m1) has 9
    # on half the prompts and 0 on the rest. Half b: A has 10 everywhere, B none.
    n = 20
    a = np.column_stack([np.full(n, 6), np.where(np.arange(n) % 2 == 0, 9, 0)])
    b = np.column_stack([np.full(n, 10), np.zeros(n, int)])
    pool = _pool_from_counts(np.vstack([a, b]), 10, ["a"] * n + ["b"] * n, ["a", "b"])
    taus = [0.1, 0.3, 0.5, 0.7, 0.9]
    sep = SP.separation(pool, taus)
    f = sep.frame().set_index(["group", "tau"])
    # half a: A covers all prompts up to tau 0.6, B half of them up to 0.9: A leads to 0.5, B from 0.7
    assert sep.own_leads["a"] == (0.1, 0.3, 0.5)
    assert np.isnan(sep.from_tau["a"])  # A stops leading at 0.7, so it never leads "from here on"
    assert f.loc[("a", 0.7), "leader"] == "m1" and f.loc[("a", 0.7), "margin"] == pytest.approx(-0.5)
    # half b: B (trained on b) never leads
    assert sep.own_leads["b"] == () and np.isnan(sep.from_tau["b"])
    # swap the owners: B becomes a's specialist and leads from 0.7 to the top of the grid
    pool2 = dataclasses.replace(pool, policies=pool.policies.assign(dataset=["b", "a"]))
    sep2 = SP.separation(pool2, taus)
    assert sep2.from_tau["a"] == 0.7 and sep2.own_leads["a"] == (0.7, 0.9)
    assert sep2.from_tau["b"] == 0.1  # A (now b's own) leads on b at every threshold
    # ties are named, not resolved
    tie = _pool_from_counts(np.full((4, 2), 5), 10, ["a", "a", "b", "b"], ["a", "b"])
    ft = SP.separation(tie, [0.3]).frame()
    assert (ft["leader"] == "2 members tied").all() and (ft["margin"] == 0).all()
    with pytest.raises(ValueError, match="trained on it"):
        SP.separation(_pool_from_counts(np.full((4, 2), 5), 10, ["a", "a", "c", "c"], ["a", "b"]), [0.3])


def test_router_sweep_identity_and_comparator(split_pool):
    sw = SP.router_sweep(split_pool, ["dataset", "embed_knn"], TAUS, n_boot=200, seed=0)
    f = sw.frame()
    assert len(f) == len(TAUS) * 3  # best_single is always evaluated
    assert set(f["family"]) == {"best_single", "dataset", "embed_knn"}
    test = split_pool.split("test")
    for tau in TAUS:
        c = cov.coverage(test, [tau])
        e = sw.get(tau, "embed_knn")
        assert e.n_eval == test.n_prompts
        assert e.best == pytest.approx(c.best[0]) and e.L == pytest.approx(c.L[0])
        # routing identity: gain over the threshold-specific best = L - D e_D
        assert e.gain_best == pytest.approx(e.L - e.D * e.e_D, abs=1e-12)
        assert e.gain_best_lo <= e.gain_best <= e.gain_best_hi
    assert (f["identity_residual"].abs() < 1e-12).all()
    with pytest.raises(KeyError):
        sw.get(0.2, "embed_knn")
    with pytest.raises(ValueError, match="families"):
        SP.router_sweep(split_pool, [], TAUS)


def test_rule_account_matches_routing_account(split_pool):
    test_rows = (split_pool.prompts["split"] == "test").to_numpy()
    c_test = split_pool.counts()[test_rows]
    best = cov.coverage(c_test, TAUS, k=16).best_index
    # the best member itself as a constant rule gains exactly zero
    ra = SP.rule_account(split_pool, lambda t: np.full(split_pool.n_prompts, best[TAUS.index(t)]), TAUS)
    np.testing.assert_allclose(ra["gain"], 0.0, atol=1e-12)
    # a fixed per-prompt rule: its coverage counts the chosen member's covered prompts
    rule = np.arange(split_pool.n_prompts) % 3
    ra = SP.rule_account(split_pool, rule, TAUS).set_index("tau")
    for tau in TAUS:
        hit = c_test[np.arange(c_test.shape[0]), rule[test_rows]] >= need(tau, 16)
        assert ra.loc[tau, "coverage"] == pytest.approx(hit.mean())
        assert ra.loc[tau, "gain"] == pytest.approx(ra.loc[tau, "L"] - ra.loc[tau, "D"] * ra.loc[tau, "e_D"], abs=1e-12)
    with pytest.raises(ValueError, match="one member position per prompt"):
        SP.rule_account(split_pool, rule[:5], TAUS)
    with pytest.raises(ValueError, match="outside"):
        SP.rule_account(split_pool, rule + 3, TAUS)


def test_pc1_rule_reproduces_pc1_bins_and_applies_fixed_boundaries():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((100, 6)) @ rng.standard_normal((6, 6))
    rule = SP.fit_pc1_rule(X, 5)
    np.testing.assert_array_equal(rule.assign(X), pc1_bins(X, 5))
    assert rule.n_bins == 5 and (np.bincount(rule.assign(X), minlength=5) == 20).all()
    Y = rng.standard_normal((30, 6))
    s = rule.score(Y)
    np.testing.assert_array_equal(rule.assign(Y), (s[:, None] >= rule.edges[None, :]).sum(axis=1))
    # a constant column is standardised with sd 1 and does not break the rule
    Xc = np.column_stack([X, np.ones(100)])
    np.testing.assert_array_equal(SP.fit_pc1_rule(Xc, 5).assign(Xc), pc1_bins(Xc, 5))
    with pytest.raises(ValueError, match="shape"):
        rule.score(Y[:, :3])
    with pytest.raises(ValueError, match="bins need"):
        SP.fit_pc1_rule(X[:3], 5)


def test_plant_predictable_keeps_totals_and_fits_on_validation_only(split_pool):
    pc = SP.plant_predictable(split_pool, 2 / 16, seed=0)
    c0, c1 = split_pool.counts(), pc.pool.counts()
    np.testing.assert_array_equal(c0.sum(axis=1), c1.sum(axis=1))  # prompt totals kept
    rows = np.arange(split_pool.n_prompts)
    np.testing.assert_array_equal(c1[rows, pc.specialist] - c0[rows, pc.specialist], pc.transfers)
    assert pc.target == 2 and pc.transfers.max() <= 2 and pc.transfers.sum() > 0
    val = (split_pool.prompts["split"] == "validation").to_numpy()
    np.testing.assert_array_equal(pc.specialist[val], pc1_bins(split_pool.embeddings[val], split_pool.n_policies))
    np.testing.assert_array_equal(pc.specialist, pc.rule.assign(split_pool.embeddings))
    np.testing.assert_array_equal(pc.pool.embeddings, split_pool.embeddings)
    assert pc.pool.policy_names == split_pool.policy_names and pc.pool.prompt_ids == split_pool.prompt_ids
    # moving test embeddings leaves the rule (fitted on validation) unchanged
    emb = split_pool.embeddings.copy()
    emb[~val] += 5.0
    pc2 = SP.plant_predictable(dataclasses.replace(split_pool, embeddings=emb), 2 / 16, seed=0)
    np.testing.assert_array_equal(pc2.rule.edges, pc.rule.edges)
    np.testing.assert_array_equal(pc2.specialist[val], pc.specialist[val])
    with pytest.raises(ValueError, match="embeddings"):
        SP.plant_predictable(dataclasses.replace(split_pool, embeddings=None), 0.1)


def test_positive_control_rows_read_the_parts(split_pool):
    pc = SP.plant_predictable(split_pool, 2 / 16, seed=1)
    res = SP.positive_control(pc.pool, [0.1, 0.3], pc.specialist, families=("embed_knn",), n_draws=100, n_boot=200)
    f = res.frame().set_index("tau")
    g = res.gaps.frame().set_index("tau")
    for tau in (0.1, 0.3):
        e = res.sweep.get(tau, "embed_knn")
        assert f.loc[tau, "embed_knn_gain"] == e.gain_best and f.loc[tau, "embed_knn_e_D"] == e.e_D
        assert f.loc[tau, "L"] == g.loc[tau, "L"] and f.loc[tau, "p_m"] == g.loc[tau, "p_m"]
        assert f.loc[tau, "break_even"] == pytest.approx(e.break_even)
    # the known specialist assignment on planted data beats the best member where transfers landed
    assert (f["rule_gain"] > 0).all()


def test_join_members_on_shared_prompts():
    a = _pool_from_counts(np.arange(12).reshape(6, 2) % 5, 4, ["x"] * 6, ["x", "y"], emb=np.eye(6))
    b0 = _pool_from_counts(np.ones((5, 1), int), 4, ["x"] * 5, ["x"], seed=2)
    b = dataclasses.replace(b0, prompts=b0.prompts.assign(id=["q4", "q0", "q2", "q9", "q1"]),
                            policies=b0.policies.assign(name=["z"]))
    j = SP.join_members(a, b)
    assert j.prompt_ids == ["q0", "q1", "q2", "q4"] and j.policy_names == ["m0", "m1", "z"]
    np.testing.assert_array_equal(j.verdicts[:, :2], a.select(prompts=["q0", "q1", "q2", "q4"]).verdicts)
    np.testing.assert_array_equal(j.verdicts[:, 2:], b.select(prompts=["q0", "q1", "q2", "q4"]).verdicts)
    np.testing.assert_array_equal(j.embeddings, np.eye(6)[[0, 1, 2, 4]])
    with pytest.raises(ValueError, match="distinct"):
        SP.join_members(a, a)
    with pytest.raises(ValueError, match="different k"):
        SP.join_members(a, _pool_from_counts(np.ones((6, 1), int), 3, ["x"] * 6, ["x"]))
    with pytest.raises(TypeError, match="Pool"):
        SP.join_members(a, "b")
