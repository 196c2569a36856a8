"""Tests of the generators with known population truth, plantings and the power tools."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logit
from scipy.stats import norm

from oraclegap.pool import Pool
from oraclegap.stats import coverage, nulls, simulate, studies


def test_exchangeable_world_has_zero_population_gap():
    sim = simulate.exchangeable(200, 5, 16, seed=1)
    assert sim.pool.shape == (200, 5, 16)
    np.testing.assert_array_equal(simulate.population_L(sim.p, (0.05, 0.1, 0.3)), 0.0)
    assert (sim.p == sim.p[:, :1]).all()
    assert set(sim.population((0.1,)).columns) >= {"oracle", "best", "L", "D"}


def test_sample_pool_rates_and_validation():
    p = np.array([[0.0, 1.0], [0.5, 0.5]])
    pool = simulate.sample_pool(p, 4000, seed=2)
    rates = pool.rates()
    assert rates[0, 0] == 0 and rates[0, 1] == 1 and abs(rates[1].mean() - 0.5) < 0.03
    with pytest.raises(ValueError, match="p must"):
        simulate.sample_pool(np.array([[1.5]]), 3)
    with pytest.raises(ValueError, match="k must"):
        simulate.sample_pool(p, 0)


@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 3, 5), (300, 4, 16), (50, 2, 64)])
def test_compiled_bernoulli_draws_numpys_verdicts(shape):
    """The compiled sampler consumes the generator's stream as numpy does: the same verdicts as
    ``rng.random((n, M, k)) < p[:, :, None]`` and the generator left in the same state (rates 0
    and 1 included)."""
    n, M, k = shape
    p = np.random.default_rng(1).random((n, M))
    p[0, 0], p[-1, -1] = 0.0, 1.0
    for seed in (0, 12345):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        assert np.array_equal(simulate._bernoulli(p, k, a), b.random((n, M, k)) < p[:, :, None])
        assert a.random() == b.random()


def test_diffuse_keeps_the_old_signature_and_sigma_zero_is_exchangeable():
    a = simulate.diffuse(100, 4, 8, 0.0, seed=3)
    assert np.allclose(a.p, a.p[:, :1])
    b = simulate.diffuse(100, 4, 8, 1.0, seed=3)
    assert b.pool.shape == (100, 4, 8) and simulate.population_L(b.p, (0.1,))[0] > 0
    with pytest.raises(ValueError, match="sigma"):
        simulate.diffuse(10, 2, 4, -1.0)


def test_diffuse_from_centres_on_observed_prompt_means():
    base = simulate.exchangeable(150, 5, 16, seed=4).pool
    c = base.counts()
    out = simulate.diffuse_from(base, 0.0, k_sim=64, seed=1)
    eps = 1 / (2 * 5 * 16)
    np.testing.assert_allclose(out.p[:, 0], np.clip(c.sum(1) / 80, eps, 1 - eps))
    assert out.pool.k == 64 and out.info["k_observed"] == 16
    spread = simulate.diffuse_from(base, 0.5, seed=2)
    mid = (c.sum(1) > 20) & (c.sum(1) < 60)
    sd = (logit(spread.p[mid]) - logit(np.clip(c.sum(1) / 80, eps, 1 - eps))[mid, None]).std()
    assert sd == pytest.approx(0.5, rel=0.15)


@pytest.mark.parametrize("delta,target", [(0.0, 0), (0.05, 1), (0.10, 2), (0.15, 2), (0.20, 3), (0.25, 4)])
def test_transfer_targets_match_table_a2(delta, target):
    assert simulate.transfer_target(delta, 16) == target


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 20), st.integers(2, 5), st.integers(1, 12), st.sampled_from([0.0, 0.1, 0.3, 0.6, 1.0]), st.integers(0, 10**6))
def test_plant_moves_successes_to_the_specialist_only(n, M, k, delta, seed):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, k + 1, size=(n, M))
    out = simulate.plant(c, delta, k=k, seed=seed)
    new = out.pool.counts()
    spec = out.info["specialist"]
    target = simulate.transfer_target(delta, k)
    rows = np.arange(n)
    assert (new.sum(1) == c.sum(1)).all()  # prompt totals kept
    gained = new[rows, spec] - c[rows, spec]
    np.testing.assert_array_equal(gained, out.info["transfers"])
    assert (gained >= 0).all() and (gained <= target).all()
    others = new.copy()
    others[rows, spec] = -1
    base = c.copy()
    base[rows, spec] = -1
    assert (others <= base).all()  # donors only lose
    # transfers stop only at the target, a full specialist, or no donor success left
    donors_left = (c.sum(1) - c[rows, spec]) - gained
    stopped = gained < target
    assert np.all((new[rows, spec][stopped] == k) | (donors_left[stopped] == 0))


def test_plant_with_a_fixed_specialist_and_bad_arguments():
    c = np.array([[3, 3, 3], [0, 5, 2]])
    out = simulate.plant(c, 0.5, k=5, specialist=0, seed=1)
    assert out.p is None and (out.info["specialist"] == 0).all()
    assert out.pool.counts()[0, 0] == 5 and out.pool.counts()[1, 0] == 3
    with pytest.raises(ValueError, match="specialist"):
        simulate.plant(c, 0.5, k=5, specialist=[0, 7])
    with pytest.raises(ValueError, match="delta"):
        simulate.plant(c, 1.5, k=5)
    with pytest.raises(ValueError, match="n_policies"):
        simulate.plant(c[:, :1], 0.5, k=5)
    with pytest.raises(ValueError, match="no population truth"):
        out.population((0.1,))


def test_planted_pool_keeps_prompt_table_and_targets():
    sim = simulate.planted(120, 5, 16, 0.10, seed=3)
    assert sim.info["target"] == 2 and sim.pool.shape == (120, 5, 16)
    assert (sim.info["transfers"] <= 2).all()


def test_specialists_known_population_gap():
    none = simulate.specialists(300, 5, 16, f=0.0, s=0.2, seed=1)
    np.testing.assert_array_equal(simulate.population_L(none.p, (0.1,)), 0.0)
    sim = simulate.specialists(300, 5, 16, f=0.5, s=0.2, seed=2)
    sel = sim.info["selected"]
    q = sim.p.min(axis=1)
    # the population gap counts prompts lifted across tau by their specialist, minus what the
    # best single member collects (at most one fifth of them for a uniform specialist)
    lifted = sel & (q < 0.1) & (np.minimum(1, q + 0.2) >= 0.1)
    tab = coverage.coverage_from_rates(sim.p, (0.1,))
    assert tab.oracle[0] - (q >= 0.1).mean() == pytest.approx(lifted.mean())
    assert 0 < tab.L[0] <= lifted.mean()
    with pytest.raises(ValueError, match="f must"):
        simulate.specialists(f=1.5)


def test_excess_understates_the_population_gap():
    # App. C.3: with k = 16 the excess over the re-deal mean recovers well under the known gap
    rng = np.random.default_rng(5)
    pops, excess = [], []
    for _ in range(8):
        sim = simulate.specialists(240, 5, 16, f=0.5, s=0.2, seed=rng)
        pops.append(simulate.population_L(sim.p, (0.1,))[0])
        res = nulls.null_tests(sim.pool, (0.1,), nulls=("redeal",), statistics=("L",), n_draws=200, seed=rng)
        excess.append(res.tests[0].excess)
    assert np.mean(pops) > 0.08
    assert 0 < np.mean(excess) < 0.6 * np.mean(pops)


@pytest.mark.parametrize("link", simulate.LINKS)
def test_quality_shift_hits_group_means_with_constant_effects(link):
    sim = simulate.quality_shift(240, 16, link=link, strong_mean=0.37, weak_mean=0.24, seed=1)
    p = sim.p
    assert p.shape == (240, 10)
    assert p[:, :5].mean() == pytest.approx(0.37, abs=1e-9)
    assert p[:, 5:].mean() == pytest.approx(0.24, abs=1e-9)
    strong, weak = p[:, 0], p[:, 5]
    if link == "logit":
        diff = logit(strong) - logit(weak)
    elif link == "probit":
        diff = norm.ppf(strong) - norm.ppf(weak)
    else:
        inside = (weak > 0) & (strong < 1)
        diff = (strong - weak)[inside]
    assert np.ptp(diff) < 1e-9  # the member effect is constant on its own scale
    assert list(sim.pool.policies["group"]) == ["strong"] * 5 + ["weak"] * 5
    with pytest.raises(ValueError, match="link"):
        simulate.quality_shift(link="cloglog")


def test_pc1_bins_and_predictable_specialists():
    rng = np.random.default_rng(0)
    z = rng.standard_normal(250)  # one latent direction shared by every feature
    X = z[:, None] * np.array([1.0, 2.0, -1.0, 0.5, 1.5, 1.0]) + 0.1 * rng.standard_normal((250, 6))
    bins = simulate.pc1_bins(X, 5)
    assert np.bincount(bins).tolist() == [50] * 5
    order = np.argsort(z)
    first, last = bins[order[:40]], bins[order[-40:]]
    assert len(set(first)) == 1 and len(set(last)) == 1 and first[0] != last[0]
    sim = simulate.predictable(240, 5, 16, 0.10, d=4, seed=1)
    assert {"f0", "f1", "f2", "f3"} <= set(sim.pool.prompts.columns)
    feats = sim.pool.prompts[["f0", "f1", "f2", "f3"]].to_numpy()
    np.testing.assert_array_equal(sim.info["specialist"], simulate.pc1_bins(feats, 5))
    assert np.bincount(sim.info["specialist"]).tolist() == [48] * 5


def test_study_frame_and_summary():
    st_ = studies.study(lambda rng: simulate.exchangeable(60, 4, 8, seed=rng), 6, taus=(0.1, 0.2), n_draws=50,
                         seed=1, progress=False, label="null")
    df = st_.frame()
    assert len(df) == 6 * 2 * 2 and set(df["null"]) == {"redeal", "margin"}
    assert (df["population_L"] == 0).all()
    s = st_.summary()
    assert ((s["ci_lo"] <= s["reject_rate"]) & (s["reject_rate"] <= s["ci_hi"])).all()
    w = st_.wide()
    assert list(w["tau"]) == [0.1, 0.2] and {"power_redeal", "power_margin", "excess_redeal"} <= set(w)
    np.testing.assert_allclose(w["power_redeal"], s[s["null"] == "redeal"]["reject_rate"])
    again = studies.study(lambda rng: simulate.exchangeable(60, 4, 8, seed=rng), 6, taus=(0.1, 0.2), n_draws=50,
                           seed=1, progress=False, label="null")
    np.testing.assert_array_equal(df["p"], again.frame()["p"])
    with pytest.raises(TypeError, match="generator"):
        studies.study(lambda rng: 3, 1, progress=False)


def test_power_grows_with_the_response_budget():
    common = dict(sigma=1.0, n=120, n_reps=12, n_draws=100, seed=3)
    lo = studies.power("diffuse", k=4, **common)
    hi = studies.power("diffuse", k=64, **common)
    assert hi.power("redeal") >= lo.power("redeal")
    assert hi.power("redeal") > 0.5
    plan = studies.plan_power("diffuse", sigma=1.0, n=120, grid=(4, 64), n_reps=12, n_draws=100, seed=3,
                               target=0.5, progress=False)
    assert plan.required["redeal"] in (4, 64)
    assert set(plan.frame()["k"]) == {4, 64}
    with pytest.raises(ValueError, match="vary"):
        studies.plan_power(vary="M", sigma=1.0)
    with pytest.raises(ValueError, match="effect"):
        simulate.effect_generator("sparkly")
    with pytest.raises(ValueError, match="sigma"):
        simulate.effect_generator("diffuse", delta=0.1)


def test_generators_return_pools():
    for gen in (simulate.effect_generator("exchangeable", n=20), simulate.effect_generator("planted", n=20, delta=0.1),
                simulate.effect_generator("specialists", n=20, f=0.2, s=0.1)):
        sim = gen(np.random.default_rng(0))
        assert isinstance(sim.pool, Pool) and sim.pool.n_prompts == 20


@pytest.mark.parametrize("null", ["redeal", "margin"])
def test_null_world_pools_keep_the_null_margins(null):
    base = simulate.exchangeable(40, 4, 8, seed=2).pool
    c = base.counts()
    gen = studies.null_world(base, null, 3, seed=1)
    rng = np.random.default_rng(0)
    pools = [gen(rng).pool.counts() for _ in range(3)]
    for t in pools:
        assert (t.sum(1) == c.sum(1)).all()
        if null == "margin":
            assert (t.sum(0) == c.sum(0)).all()
    with pytest.raises(ValueError, match="all have been used"):
        gen(rng)
    with pytest.raises(ValueError, match="null"):
        studies.null_world(base, "bootstrap")
