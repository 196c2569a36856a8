"""Tests of the re-deal and margin-preserving nulls against known truths (exact laws, identities,
simulation with known population values)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_hypergeom
from statsmodels.stats.multitest import multipletests

from oraclegap.stats import coverage, multiplicity, nulls, simulate

TAUS = (0.05, 0.10, 0.20, 0.30)


@st.composite
def count_tables(draw, max_n=12, max_M=5, max_k=12):
    n = draw(st.integers(1, max_n))
    M = draw(st.integers(2, max_M))
    k = draw(st.integers(1, max_k))
    cells = draw(st.lists(st.integers(0, k), min_size=n * M, max_size=n * M))
    return np.array(cells, dtype=np.int64).reshape(n, M), k


def tv_distance(p: dict, q: dict) -> float:
    keys = set(p) | set(q)
    return 0.5 * sum(abs(p.get(x, 0.0) - q.get(x, 0.0)) for x in keys)


def empirical(tables) -> dict:
    keys, counts = np.unique(tables.reshape(len(tables), -1), axis=0, return_counts=True)
    return {tuple(k): c / len(tables) for k, c in zip(keys, counts, strict=True)}


# ---------------------------------------------------------------------------- statistics
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count_tables(), st.lists(st.sampled_from([0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 1.0]), min_size=1, max_size=4,
                                unique=True))
def test_observed_statistics_equal_coverage_module(table, taus):
    c, k = table
    tab = coverage.coverage(c, taus, k=k)
    st_ = nulls.table_statistics(c, taus, k)
    np.testing.assert_allclose(st_.L[0], tab.L, atol=1e-12)
    np.testing.assert_allclose(st_.D[0], tab.D, atol=1e-12)
    np.testing.assert_allclose(st_.oracle_minus_mixture[0], tab.oracle_minus_mixture, atol=1e-12)
    assert st_.pass1[0] == pytest.approx(coverage.pass1_oracle_gap(c, k=k).gap, abs=1e-12)
    res = nulls.null_tests(c, taus, k=k, n_draws=3, seed=1, skip_degenerate=False)
    for j, tau in enumerate(taus):
        assert res.get("L", tau).observed == pytest.approx(tab.L[j], abs=1e-12)
        assert res.get("D", tau, "margin").observed == pytest.approx(tab.D[j], abs=1e-12)
        assert res.get("oracle_minus_mixture", tau).observed == pytest.approx(tab.oracle_minus_mixture[j], abs=1e-12)


def test_statistics_of_many_tables_match_one_by_one():
    rng = np.random.default_rng(3)
    tables = rng.integers(0, 9, size=(25, 30, 4))
    many = nulls.table_statistics(tables, TAUS, 8)
    for b in range(len(tables)):
        tab = coverage.coverage(tables[b], TAUS, k=8)
        np.testing.assert_allclose(many.L[b], tab.L, atol=1e-12)
        np.testing.assert_allclose(many.D[b], tab.D, atol=1e-12)
    assert set(many.frame()["statistic"]) == {"L", "D", "oracle_minus_mixture", "pass1"}


def test_table_statistics_rejects_bad_tables():
    with pytest.raises(ValueError, match=r"\[0, k=4\]"):
        nulls.table_statistics(np.full((3, 2), 5), TAUS, 4)
    with pytest.raises(ValueError, match="integer"):
        nulls.table_statistics(np.full((3, 2), 0.5), TAUS, 4)


# ---------------------------------------------------------------------------- re-deal
def test_redeal_preserves_prompt_totals_and_mixture_rate():
    sim = simulate.exchangeable(60, 5, 16, seed=4)
    c = sim.pool.counts()
    tables = nulls.redeal(sim.pool, 300, seed=5)
    assert tables.shape == (300, 60, 5)
    assert (tables.sum(axis=2) == c.sum(axis=1)).all()
    assert tables.min() >= 0 and tables.max() <= 16
    mix = [coverage.coverage(t, TAUS, k=16).mixture for t in tables[:20]]
    np.testing.assert_array_equal(np.array(mix), np.tile(coverage.coverage(c, TAUS, k=16).mixture, (20, 1)))
    # member totals do move under the re-deal
    assert (tables.sum(axis=1) != c.sum(axis=0)).any()


def test_redeal_law_is_multivariate_hypergeometric():
    # three prompts with different totals; each row's law is MVHG(colors=[k]*M, nsample=total)
    M, k = 3, 4
    c = np.array([[4, 1, 0], [2, 2, 1], [0, 0, 1]])
    tables = nulls.redeal(c, 40_000, k=k, seed=11)
    for i in range(c.shape[0]):
        s = int(c[i].sum())
        emp = empirical(tables[:, i, :])
        exact = {}
        for v in itertools.product(range(k + 1), repeat=M):
            if sum(v) == s:
                exact[v] = float(multivariate_hypergeom.pmf(v, [k] * M, s))
        assert tv_distance(emp, exact) < 0.02


def test_redeal_draws_are_the_ones_null_tests_uses():
    sim = simulate.exchangeable(40, 4, 10, seed=2)
    tables = nulls.redeal(sim.pool, 50, seed=9)
    res = nulls.null_tests(sim.pool, TAUS, n_draws=50, seed=9, nulls=("redeal",))
    st_ = nulls.table_statistics(tables, TAUS, 10)
    for j, tau in enumerate(TAUS):
        np.testing.assert_allclose(res.get("L", tau).draws, st_.L[:, j], atol=1e-12)
    np.testing.assert_allclose(res.get("pass1").draws, st_.pass1, atol=1e-12)


def test_redeal_cost_does_not_depend_on_k_through_shuffling():
    # counts come straight from the hypergeometric law: the same totals at k=16 and k=160 give
    # tables of the right range without ever materialising responses
    c = np.array([[10, 3, 0, 7]])
    t = nulls.redeal(c * 10, 20, k=160, seed=1)
    assert t.shape == (20, 1, 4) and (t.sum(axis=2) == 200).all() and t.max() <= 160


# ---------------------------------------------------------------------------- margin chain
SMALL_TABLE = np.array([[3, 1, 0], [1, 2, 1], [0, 1, 3]])  # k = 3: 87 tables share its margins


def test_exact_margin_law_matches_brute_force():
    c = np.array([[2, 0, 1], [1, 2, 0]])
    k = 2
    law = nulls.exact_margin_law(c, k=k)
    rows, cols = c.sum(1), c.sum(0)
    brute = {}
    for cells in itertools.product(range(k + 1), repeat=c.size):
        t = np.array(cells).reshape(c.shape)
        if (t.sum(1) == rows).all() and (t.sum(0) == cols).all():
            brute[cells] = math.prod(math.comb(k, int(v)) for v in cells)
    z = sum(brute.values())
    exact = {key: w / z for key, w in brute.items()}
    got = {tuple(t.ravel()): p for t, p in zip(law.tables, law.prob, strict=True)}
    assert set(got) == set(exact)
    for key in exact:
        assert got[key] == pytest.approx(exact[key], rel=1e-12)


@pytest.mark.parametrize("move", ["heatbath", "metropolis"])
def test_margin_chain_matches_exact_law(move):
    k = 3
    law = nulls.exact_margin_law(SMALL_TABLE, k=k)
    assert len(law.prob) == 87
    sample = nulls.margin_chain(SMALL_TABLE, 60_000, k=k, seed=21, move=move, thin=4 * SMALL_TABLE.size)
    exact = {tuple(t.ravel()): p for t, p in zip(law.tables, law.prob, strict=True)}
    # iid sampling from the exact law itself gives a total variation of about 0.010 at this size
    assert tv_distance(empirical(sample.tables), exact) < 0.02
    # the statistic's null mean and tail probability agree with the exact law as well
    res = nulls.null_tests(SMALL_TABLE, (0.5,), k=k, nulls=("margin",), n_draws=20_000, seed=3, move=move)
    t = res.get("L", 0.5, "margin")
    assert t.mean == pytest.approx(law.mean("L", 0.5), abs=0.01)
    assert t.p == pytest.approx(law.p_upper("L", 0.5, t.observed), abs=0.02)


def test_margin_chain_preserves_both_margins():
    sim = simulate.exchangeable(50, 5, 8, seed=6)
    c = sim.pool.counts()
    sample = nulls.margin_chain(sim.pool, 200, seed=1, burn_in=500, thin=50)
    assert (sample.tables.sum(axis=2) == c.sum(axis=1)).all()
    assert (sample.tables.sum(axis=1) == c.sum(axis=0)).all()
    assert sample.tables.min() >= 0 and sample.tables.max() <= 8
    assert 0 < sample.acceptance < 1
    assert len(np.unique(sample.tables.reshape(200, -1), axis=0)) > 150


def test_margin_chain_draws_are_the_ones_null_tests_uses():
    sim = simulate.exchangeable(30, 4, 8, seed=12)
    sample = nulls.margin_chain(sim.pool, 40, seed=5)
    res = nulls.null_tests(sim.pool, TAUS, n_draws=40, seed=5, nulls=("margin",))
    st_ = nulls.table_statistics(sample.tables, TAUS, 8)
    np.testing.assert_allclose(res.get("D", 0.2, "margin").draws, st_.D[:, 2], atol=1e-12)


def test_serial_and_threaded_kernels_give_the_same_draws():
    sim = simulate.exchangeable(40, 4, 12, seed=8)
    prep = nulls._prepare(sim.pool, TAUS, None)
    off, prob, alias = nulls._alias(prep.M, prep.k)
    args = (prep.totals, prep.M, prep.k, np.uint64(77), 5, 70, off, prob, alias, prep.needs, prep.need_mix, prep.n)
    np.testing.assert_array_equal(nulls.redeal_stats(*args), nulls.redeal_stats_parallel(*args))
    outs = []
    for kern in (nulls.run_chains, nulls.run_chains_parallel):
        states = np.ascontiguousarray(np.broadcast_to(prep.c_active, (3,) + prep.c_active.shape).copy())
        streams = np.array([5, 6, 7], np.uint64)
        stats = np.empty((9, 3 * len(TAUS) + 1))
        kern(states, streams, prep.k, 100, 30, np.array([3, 3, 3]), np.array([0, 3, 6]), True, prep.needs,
             prep.need_mix, prep.n, stats, np.empty((0,) + prep.c_active.shape, np.int64), False, np.zeros(3, np.int64))
        outs.append((stats, states, streams))
    for a, b in zip(outs[0], outs[1], strict=True):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------- result type
def test_null_test_fields_follow_their_definitions():
    draws = np.array([0.1, 0.2, 0.2, 0.3, 0.4])
    t = nulls.NullTest("L", 0.1, "redeal", 0.2, draws, p_convention="paper")
    assert t.mean == pytest.approx(0.24)
    assert t.p == pytest.approx(4 / 5) and t.p_lower == pytest.approx(3 / 5)
    # the default is the exact Monte Carlo p (1 + #)/(1 + B), never 0
    assert nulls.NullTest("L", 0.1, "redeal", 9.0, draws).p == pytest.approx(1 / 6)
    assert t.excess == pytest.approx(0.2 - 0.24)
    assert (t.band.lo, t.band.hi) == pytest.approx(tuple(np.percentile(draws, [5, 95])))
    assert t.band.value == t.mean and t.band.level == 0.90
    t1 = nulls.NullTest("L", 0.1, "redeal", 0.2, draws, p_convention="plus-one")
    assert t1.p == pytest.approx(5 / 6) and t1.p_lower == pytest.approx(4 / 6)
    assert nulls.NullTest("L", 0.1, "redeal", 0.2, draws).p == t1.p
    f = nulls.tests_frame([t, t1])
    assert list(f["p"]) == pytest.approx([0.8, 5 / 6]) and len(f) == 2
    with pytest.raises(ValueError, match="p_convention"):
        nulls.NullTest("L", 0.1, "redeal", 0.2, draws, p_convention="other")
    with pytest.raises(ValueError, match="draws"):
        nulls.NullTest("L", 0.1, "redeal", 0.2, np.array([]))


def test_null_tests_result_and_json():
    sim = simulate.exchangeable(80, 5, 16, seed=1)
    res = nulls.null_tests(sim.pool, TAUS, n_draws=200, seed=2)
    df = res.frame()
    # at tau = 0.05 <= 1/k one success covers a prompt: oracle-minus-mixture is fixed by the
    # prompt totals under both nulls, so those two tests are skipped with a reason
    assert [(t.statistic_name, t.tau, t.null) for t in res.skipped] == [("oracle_minus_mixture", 0.05, n) for n in ("redeal", "margin")]
    assert len(df) == 2 * (3 * len(TAUS) + 1) - 2
    assert {"statistic", "tau", "null", "observed", "mean", "band_lo", "band_hi", "p", "p_lower", "excess"} <= set(df)
    assert ((df["band_lo"] <= df["mean"] + 1e-12) & (df["mean"] <= df["band_hi"] + 1e-12)).all()
    d = res.to_dict()
    assert set(d["taus"]["0.1"]["L"]) == {"observed", "redeal", "margin"}
    assert set(d["taus"]["0.1"]["L"]["margin"]) >= {"mean", "band", "p", "p_lower", "excess", "ess", "acceptance"}
    assert res.chain.acceptance > 0 and all(e > 0 for e in res.chain.ess.values())
    w = res.wide()
    assert len(w) == 3 * len(TAUS) + 1 and "margin_p" in w


# ---------------------------------------------------------------------------- determinism
def test_same_seed_same_draws_whatever_the_batch():
    sim = simulate.exchangeable(50, 4, 12, seed=3)
    a = nulls.null_tests(sim.pool, TAUS, n_draws=90, seed=42)
    b = nulls.null_tests(sim.pool, TAUS, n_draws=90, seed=42, batch=7)
    c = nulls.null_tests(sim.pool, TAUS, n_draws=90, seed=np.random.default_rng(42))
    d = nulls.null_tests(sim.pool, TAUS, n_draws=90, seed=43)
    for ta, tb, tc in zip(a.tests, b.tests, c.tests, strict=True):
        np.testing.assert_array_equal(ta.draws, tb.draws)
        np.testing.assert_array_equal(ta.draws, tc.draws)
    assert any(not np.array_equal(ta.draws, td.draws) for ta, td in zip(a.tests, d.tests, strict=True))
    np.testing.assert_array_equal(nulls.redeal(sim.pool, 5, seed=1), nulls.redeal(sim.pool, 5, seed=1))
    assert nulls.split_half(sim.pool, seed=4).gap_selection.tolist() == nulls.split_half(sim.pool, seed=4).gap_selection.tolist()


# ---------------------------------------------------------------------------- bad inputs
def test_bad_inputs_name_the_argument():
    sim = simulate.exchangeable(20, 3, 8, seed=0)
    with pytest.raises(ValueError, match="taus"):
        nulls.null_tests(sim.pool, (0.0, 0.1))
    with pytest.raises(ValueError, match="taus"):
        nulls.null_tests(sim.pool, (1.2,))
    with pytest.raises(ValueError, match="n_policies >= 2"):
        nulls.null_tests(sim.pool.select(policies=[0]), (0.1,))
    with pytest.raises(ValueError, match="k >= 2"):
        nulls.split_half(sim.pool.draws([0]), (0.1,))
    with pytest.raises(ValueError, match="nulls"):
        nulls.null_tests(sim.pool, (0.1,), nulls=("bootstrap",))
    with pytest.raises(ValueError, match="statistics"):
        nulls.null_tests(sim.pool, (0.1,), statistics=("gap",))
    with pytest.raises(ValueError, match="move"):
        nulls.null_tests(sim.pool, (0.1,), move="gibbs")
    with pytest.raises(ValueError, match="n_draws"):
        nulls.null_tests(sim.pool, (0.1,), n_draws=0)
    with pytest.raises(ValueError, match="max_tables"):
        nulls.exact_margin_law(sim.pool, max_tables=10)
    with pytest.raises(ValueError, match="max_policies"):
        nulls.pool_size_curve(np.zeros((3, 6), int) + 1, k=2, max_policies=5)


def test_all_degenerate_prompts_give_point_mass_nulls():
    c = np.array([[0, 0, 0], [5, 5, 5], [0, 0, 0]])
    skipped = nulls.null_tests(c, TAUS, k=5, n_draws=50, seed=0)
    assert not skipped.tests and len(skipped.skipped) == 2 * (3 * len(TAUS) + 1)
    assert all("all wrong or all right" in t.reason for t in skipped.skipped)
    res = nulls.null_tests(c, TAUS, k=5, n_draws=50, seed=0, skip_degenerate=False)
    for t in res.tests:
        assert np.all(t.draws == t.observed)
        assert t.p == 1.0 and t.p_lower == 1.0 and t.excess == 0.0
    assert res.chain.acceptance == 0.0 and res.n_degenerate == 3
    assert nulls.degenerate_prompts(c, k=5) == {"all_wrong": 2, "all_right": 1, "degenerate": 3, "n_prompts": 3}


# ---------------------------------------------------------------------------- calibration and power
def _null_pool_counts(rng, n=240, M=5, k=16):
    p = rng.beta(*simulate.GEOMETRY3K_AB, n)
    return rng.binomial(k, np.repeat(p[:, None], M, axis=1))


@pytest.mark.slow
def test_false_positive_rates_of_both_tests_near_nominal():
    # exchangeable pools shaped like the paper's seed pool: every prompt shares one rate, so
    # both nulls hold; 100 null draws per test, chain settings of the paper's calibration runs
    rng = np.random.default_rng(20260101)
    n, M, k = 240, 5, 16
    reps = 1000
    rejections = {}
    for _ in range(reps):
        c = _null_pool_counts(rng, n, M, k)
        res = nulls.null_tests(c, (0.05, 0.10), k=k, statistics=("L",), n_draws=100, seed=rng,
                               burn_in=30 * n * M, thin=n * M, n_chains=1)
        for t in res.tests:
            rejections[(t.null, t.tau)] = rejections.get((t.null, t.tau), 0) + (t.p <= 0.05)
    rates = {key: v / reps for key, v in rejections.items()}
    assert len(rates) == 4
    for key, rate in rates.items():
        assert 0.02 <= rate <= 0.08, (key, rate)


@pytest.mark.slow
def test_two_planted_transfers_per_prompt_are_always_detected():
    rng = np.random.default_rng(7)
    for _ in range(10):
        base = simulate.exchangeable(240, 5, 16, seed=rng)
        planted = simulate.plant(base.pool, 0.10, seed=rng)  # round(0.1 * 16) = 2 transfers
        assert planted.info["target"] == 2
        res = nulls.null_tests(planted.pool, (0.10,), statistics=("L",), n_draws=200, seed=rng,
                               burn_in=30 * 240 * 5, thin=240 * 5, n_chains=1)
        assert res.get("L", 0.1, "redeal").p <= 0.05
        assert res.get("L", 0.1, "margin").p <= 0.05


# ---------------------------------------------------------------------------- effective sample size
def test_effective_sample_size_on_known_processes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(20_000)
    assert nulls.effective_sample_size(x) == pytest.approx(20_000, rel=0.1)
    rho = 0.5
    y = np.empty(20_000)
    y[0] = rng.standard_normal()
    for i in range(1, y.size):
        y[i] = rho * y[i - 1] + math.sqrt(1 - rho ** 2) * rng.standard_normal()
    assert nulls.effective_sample_size(y) == pytest.approx(20_000 * (1 - rho) / (1 + rho), rel=0.15)
    chains = np.repeat(np.arange(4), 5000)
    assert nulls.effective_sample_size(x, chains) == pytest.approx(20_000, rel=0.1)
    assert nulls.effective_sample_size(np.ones(50)) == 50


def test_chain_ess_is_close_to_the_draw_count_with_default_thinning():
    sim = simulate.exchangeable(120, 5, 16, seed=10)
    res = nulls.null_tests(sim.pool, (0.1, 0.3), nulls=("margin",), statistics=("L",), n_draws=4000, seed=1)
    for t in res.tests:
        assert t.ess / t.n_draws > 0.8


# ---------------------------------------------------------------------------- around the nulls
def test_pool_size_curve_equals_brute_force_subset_averages():
    sim = simulate.exchangeable(70, 4, 8, seed=2)
    c = sim.pool.counts()
    curve = nulls.pool_size_curve(sim.pool, TAUS, n_draws=100, seed=1)
    for s in (2, 3, 4):
        subs = list(itertools.combinations(range(4), s))
        L = np.mean([coverage.coverage(c[:, list(S)], TAUS, k=8).L for S in subs], axis=0)
        D = np.mean([coverage.coverage(c[:, list(S)], TAUS, k=8).D for S in subs], axis=0)
        np.testing.assert_allclose(curve.observed_L[:, s - 2], L, atol=1e-12)
        np.testing.assert_allclose(curve.observed_D[:, s - 2], D, atol=1e-12)
    assert len(curve.rise) == len(TAUS)
    assert curve.rise[1].observed == pytest.approx(curve.observed_L[1, -1] - curve.observed_L[1, 0])
    # the null curve rises with pool size (more noisy estimates to choose from)
    assert (np.diff(curve.null_L, axis=1) > 0).all()


def test_member_spread_observed_and_reference():
    sim = simulate.exchangeable(60, 4, 10, seed=5)
    res = nulls.member_spread(sim.pool, TAUS, n_draws=300, seed=2)
    mem = coverage.coverage(sim.pool, TAUS).member
    np.testing.assert_allclose([t.observed for t in res.tests], mem.max(1) - mem.min(1), atol=1e-12)
    # identical members on every prompt: permuting labels changes nothing
    c = np.repeat(sim.pool.counts()[:, :1], 4, axis=1)
    same = nulls.member_spread(c, TAUS, k=10, n_draws=50, seed=1)
    assert all(np.all(t.draws == 0) for t in same.tests)


def test_similarity_diagnostics_definitions():
    sim = simulate.exchangeable(100, 4, 16, seed=9)
    c = sim.pool.counts()
    res = nulls.similarity(sim.pool, n_draws=200, seed=1)
    corr = np.corrcoef((c / 16).T)
    iu = np.triu_indices(4, 1)
    by = {t.statistic_name: t for t in res.tests}
    assert by["mean_pairwise_corr"].observed == pytest.approx(corr[iu].mean(), abs=1e-12)
    assert by["frac_rates_differ"].observed == pytest.approx(((c.max(1) - c.min(1)) / 16 > 0.25).mean())
    assert 0.5 < by["mean_pairwise_corr"].mean < 1


def test_split_half_properties():
    ex = simulate.exchangeable(240, 5, 16, seed=3)
    sh = nulls.split_half(ex.pool, TAUS, n_splits=100, seed=1)
    assert sh.k_select == 8 and sh.k_score == 8
    # choosing the comparator on the scoring half can only favour it
    assert (sh.gap_scoring <= sh.gap_selection + 1e-12).all()
    # in the null world the selected member is no better on fresh responses: mean near zero,
    # while the plug-in gap on the selection half is clearly positive
    gaps = []
    for seed in range(8):
        pool = simulate.exchangeable(240, 5, 16, seed=100 + seed).pool
        gaps.append(nulls.split_half(pool, (0.1,), n_splits=20, seed=seed).gap_selection_mean[0])
    assert abs(np.mean(gaps)) < 0.01
    assert sh.plugin_half_mean[1] > 0.05
    planted = simulate.plant(ex.pool, 0.25, seed=2).pool
    assert nulls.split_half(planted, (0.1,), n_splits=50, seed=1).gap_selection_mean[0] > 0.03
    odd = nulls.split_half(ex.pool.draws(np.arange(15)), (0.1,), n_splits=5)
    assert (odd.k_select, odd.k_score) == (7, 8)


def test_excess_bootstrap_interval():
    sim = simulate.exchangeable(120, 5, 16, seed=4)
    eb = nulls.excess_bootstrap(sim.pool, 0.1, n_boot=60, n_draws=60, seed=3)
    assert eb.lo <= eb.hi and eb.draws.size == 60
    assert eb.lo - 0.02 <= eb.value <= eb.hi + 0.02 and eb.level == 0.95
    eb2 = nulls.excess_bootstrap(sim.pool, 0.1, n_boot=60, n_draws=60, seed=3)
    np.testing.assert_array_equal(eb.draws, eb2.draws)
    ebm = nulls.excess_bootstrap(sim.pool, 0.1, n_boot=5, n_draws=20, seed=3, null="margin")
    assert ebm.null == "margin" and ebm.frame().shape[0] == 1


def test_benjamini_hochberg_matches_statsmodels():
    p = np.array([0.001, 0.02, 0.03, 0.2, 0.5, 0.04])
    bh = multiplicity.benjamini_hochberg(p, alpha=0.05)
    rej, adj, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
    np.testing.assert_allclose(bh.p_adjusted, adj)
    np.testing.assert_array_equal(bh.reject, rej)
    assert (bh.p_adjusted >= p - 1e-15).all()
    sim = simulate.exchangeable(40, 3, 8, seed=1)
    res = nulls.null_tests(sim.pool, (0.1,), n_draws=20, seed=1)
    fam = multiplicity.benjamini_hochberg(res)
    assert len(fam.labels) == len(res.tests) and "[redeal]" in fam.labels[0]
    with pytest.raises(ValueError, match="alpha"):
        multiplicity.benjamini_hochberg(p, alpha=1.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        multiplicity.benjamini_hochberg([0.5, 1.5])


def test_gap_table_collects_the_table_1_columns():
    sim = simulate.exchangeable(120, 5, 16, seed=7)
    gt = nulls.gap_table(sim.pool, TAUS, n_draws=200, n_splits=20, seed=1)
    df = gt.frame()
    assert list(df["tau"]) == list(TAUS)
    tab = coverage.coverage(sim.pool, TAUS)
    np.testing.assert_allclose(df["L"], tab.L)
    np.testing.assert_allclose(df["D"], tab.D)
    np.testing.assert_allclose(df["orac_minus_mix"], tab.oracle_minus_mixture)
    np.testing.assert_allclose(df["split_half"], gt.split.gap_selection_mean)
    np.testing.assert_allclose(df["rise_L"], gt.sizes.observed_L[:, -1] - gt.sizes.observed_L[:, 0])
    assert ((df["L_band_lo"] <= df["L_null"]) & (df["L_null"] <= df["L_band_hi"])).all()
    assert df["p_m"].between(0, 1).all()
    with pytest.raises(ValueError, match="redeal"):
        nulls.gap_table(sim.pool, TAUS, nulls=("margin",))


def test_chain_diagnostics_per_chain():
    sim = simulate.exchangeable(60, 4, 10, seed=3)
    res = nulls.null_tests(sim.pool, (0.2,), n_draws=101, seed=2, n_chains=3)
    ch = res.chain
    assert ch.n_chains == 3 and len(ch.chain_acceptance) == 3
    assert ch.proposals == 3 * ch.burn_in + ch.thin * 101
    assert min(ch.chain_acceptance) <= ch.acceptance <= max(ch.chain_acceptance)
    assert set(ch.frame()["statistic"]) == {"L", "D", "oracle_minus_mixture", "pass1"}


def test_redeal_without_alias_tables_uses_the_same_law(monkeypatch):
    # very large M k skip the alias tables; the fallback sampler must keep totals and the law
    monkeypatch.setattr(nulls._kernels, "_ALIAS_LIMIT", 0)  # the alias cache lives with the kernels
    monkeypatch.setattr(nulls._kernels, "_ALIAS_CACHE", {})
    c = np.array([[4, 1, 0], [2, 2, 1], [0, 0, 1]])
    tables = nulls.redeal(c, 20_000, k=4, seed=3)
    assert (tables.sum(axis=2) == c.sum(axis=1)).all()
    support = [v for v in itertools.product(range(5), repeat=3) if sum(v) == 5]
    exact = {v: float(multivariate_hypergeom.pmf(v, [4] * 3, 5)) for v in support}
    assert tv_distance(empirical(tables[:, 0, :]), exact) < 0.02
    res = nulls.null_tests(c, (0.25,), k=4, nulls=("redeal",), n_draws=50, seed=1)
    assert res.get("L", 0.25).n_draws == 50
    curve = nulls.pool_size_curve(np.array([[1, 2, 0], [3, 1, 1]]), (0.25,), k=4, n_draws=5, seed=1, statistic="D")
    assert curve.rise[0].statistic_name.startswith("rise_D")


def test_heat_bath_with_log_weights_for_large_k():
    # k > 128 switches the heat-bath move to log weights; a 2 x 2 table has a one-dimensional fibre
    c = np.array([[150, 30], [40, 120]])
    k = 200
    law = nulls.exact_margin_law(c, k=k)
    sample = nulls.margin_chain(c, 20_000, k=k, seed=4)
    exact = {tuple(t.ravel()): p for t, p in zip(law.tables, law.prob, strict=True)}
    ref = np.mean([0.5 * np.abs(np.random.default_rng(s).multinomial(20_000, law.prob) / 20_000 - law.prob).sum()
                   for s in range(10)])
    assert tv_distance(empirical(sample.tables), exact) < 2 * ref + 0.005
