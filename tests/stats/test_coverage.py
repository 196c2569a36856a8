"""Coverage: count rules, invariants (hypothesis), routing identity, mixture bound, rAUC, priors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from oraclegap.pool import Pool
from oraclegap.stats import coverage as cov

counts_k = st.integers(1, 12).flatmap(
    lambda k: st.tuples(arrays(np.int64, st.tuples(st.integers(1, 30), st.integers(1, 6)), elements=st.integers(0, k)), st.just(k))
)
taus = st.lists(st.floats(0.001, 1.0), min_size=1, max_size=6, unique=True)  # repeated thresholds are refused


def test_need_known_values():
    assert cov.need(0.05, 16) == 1 and cov.need(0.10, 16) == 2
    assert cov.need(0.10, 30) == 3  # 0.1 * 30 is 3.0000000000000004 in floating point
    assert cov.need(1.0, 7) == 7
    np.testing.assert_array_equal(cov.need([0.05, 0.1, 0.2, 0.3], 16), [1, 2, 4, 5])
    for bad in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="tau"):
            cov.need(bad, 16)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        cov.need(0.1, 0)


@given(st.integers(1, 200), st.floats(1e-4, 1.0))
def test_need_is_smallest_count_reaching_tau(k, tau):
    n = cov.need(tau, k)
    # exact rational check with a tolerance of 1e-9 on the count scale
    assert n / k >= tau - 1e-9 / k
    assert n == 0 or (n - 1) / k < tau - 1e-9 / k + 1e-15


@settings(max_examples=80, deadline=None)
@given(counts_k, taus)
def test_invariants_and_brute_force(ck, ts):
    c, k = ck
    t = cov.coverage(c, ts, k=k)
    # brute force definitions with the count rule
    for a, tau in enumerate(t.taus):
        need = math.ceil(tau * k - 1e-9)
        covd = c >= need
        assert np.isclose(t.oracle[a], covd.any(axis=1).mean())
        assert np.isclose(t.best[a], covd.mean(axis=0).max())
        assert np.isclose(t.D[a], (covd.any(axis=1) & ~covd.all(axis=1)).mean())
        assert np.isclose(t.mixture[a], (c.sum(axis=1) >= math.ceil(tau * k * c.shape[1] - 1e-9)).mean())
    assert (t.L >= -1e-12).all() and (t.L <= t.D + 1e-12).all()
    assert (t.oracle >= t.best - 1e-12).all()
    assert (t.oracle >= t.mixture - 1e-12).all()  # the mixture cannot beat the per-prompt max


@settings(max_examples=60, deadline=None)
@given(counts_k, st.floats(0.001, 1.0), st.integers(0, 2**31))
def test_routing_identity_any_choice(ck, tau, seed):
    c, k = ck
    choice = np.random.default_rng(seed).integers(0, c.shape[1], c.shape[0])
    acc = cov.routing_account(c, choice, tau, k=k)
    assert abs(acc.identity_residual) < 1e-12
    if acc.D > 0 and not np.isclose(acc.e_D, acc.break_even):
        assert (acc.gain > 0) == (acc.e_D < acc.break_even)


@settings(max_examples=60, deadline=None)
@given(counts_k, taus)
def test_mixture_bound_plug_in(ck, ts):
    c, k = ck
    mb = cov.mixture_bound(c, ts, k=k)
    assert mb["holds"].all()


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(1, 5)), elements=st.floats(0, 1)), taus)
def test_invariants_population(p, ts):
    t = cov.coverage_from_rates(p, ts)
    assert (t.L >= -1e-12).all() and (t.L <= t.D + 1e-12).all()
    M = p.shape[1]
    for a, tau in enumerate(t.taus):
        if M * tau <= 1:
            assert t.mixture[a] >= cov.coverage_from_rates(p, [M * tau]).oracle[0] - 1e-12


def test_smoothed_with_geometry3k_prior_matches_paper_count_rules():
    # arXiv 2609.32996 App. B.1: with the fitted prior, k = 16 decisions equal raw ones at
    # tau in {0.05, 0.10, 0.20, 0.30}; at k = 64 and tau = 0.05 the count needed falls from 4 to 3.
    prior = cov.GEOMETRY3K_PRIOR
    for k, tau_list in ((16, [0.05, 0.10, 0.20, 0.30]), (64, [0.10, 0.20, 0.30])):
        c = np.arange(k + 1)[:, None]
        for tau in tau_list:
            raw = cov.covered(c / k, tau, k)
            sm = cov.covered(prior.posterior_mean(c, k), tau, k)
            np.testing.assert_array_equal(raw, sm)
    c = np.arange(65)
    assert cov.need(0.05, 64) == 4
    assert int(np.argmax(cov.covered(prior.posterior_mean(c, 64), 0.05, 64))) == 3


def test_fit_beta_prior_recovers_truth():
    rng = np.random.default_rng(7)
    a, b, k = 0.347, 0.601, 16
    p = rng.beta(a, b, size=(20000, 1))
    c = rng.binomial(k, p)
    prior = cov.fit_beta_prior(c, k)
    assert abs(prior.a - a) < 0.03 and abs(prior.b - b) < 0.05
    with pytest.raises(ValueError, match="k >= 2"):
        cov.fit_beta_prior(c[:, :1] > 0, 1)
    with pytest.raises(ValueError, match="all-incorrect"):
        cov.fit_beta_prior(np.zeros((5, 2), int), 4)


def test_smoothed_coverage_uses_fitted_prior():
    rng = np.random.default_rng(0)
    v = rng.random((100, 3, 8)) < rng.beta(0.5, 0.5, (100, 1, 1))
    t = cov.coverage(v, [0.1, 0.5], estimator="smoothed")
    assert t.prior is not None and t.estimator == "smoothed"
    assert (t.L <= t.D + 1e-12).all()
    with pytest.raises(ValueError, match="estimator"):
        cov.coverage(v, [0.1], estimator="bayes")


def test_rauc_trapezoid_converges_to_exact():
    rng = np.random.default_rng(3)
    r = rng.random(500)
    exact = cov.rauc(r, (0.05, 0.30), method="exact")
    coarse = cov.rauc(r, (0.05, 0.30), grid=11)
    fine = cov.rauc(r, (0.05, 0.30), grid=4001)
    assert abs(fine - exact) < abs(coarse - exact) + 1e-12
    assert abs(fine - exact) < 1e-3
    assert 0 <= exact <= 1
    with pytest.raises(ValueError, match="band"):
        cov.rauc(r, (0.3, 0.05))


def test_rauc_table_orders():
    rng = np.random.default_rng(5)
    v = rng.random((200, 4, 16)) < rng.beta(0.4, 0.6, (200, 4, 1))
    tab = cov.rauc_table(v).set_index("kind")
    assert tab.loc["oracle", "rauc"] >= tab.loc["best", "rauc"]
    assert tab.loc["oracle", "rauc"] >= tab.loc["mixture", "rauc"]


def test_pass1_gap():
    c = np.array([[3, 0], [0, 3], [1, 1]])
    g = cov.pass1_oracle_gap(c, k=3)
    assert np.isclose(g.oracle, (1 + 1 + 1 / 3) / 3)
    assert np.isclose(g.best, (4 / 3) / 3)
    assert np.isclose(g.gap, g.oracle - g.best) and g.gap >= 0


def test_pool_and_array_inputs_agree():
    rng = np.random.default_rng(2)
    v = rng.random((40, 3, 6)) < 0.3
    p = Pool.from_array(v, policies=["a", "b", "c"])
    t1, t2, t3 = cov.coverage(p, [0.2]), cov.coverage(v, [0.2]), cov.coverage(v.sum(2), [0.2], k=6)
    for t in (t2, t3):
        np.testing.assert_allclose(t1.member, t.member)
    assert t1.frame()["best_member"].iloc[0] in {"a", "b", "c"}
    assert set(t1.members_frame().columns) == {"tau", "policy", "coverage"}


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: cov.coverage(np.zeros((3, 2)), [0.1]), "needs k="),
        (lambda: cov.coverage(np.zeros((3, 2), int), [0.1], k=2.5), "integer"),
        (lambda: cov.coverage(np.full((3, 2), 5), [0.1], k=4), r"lie in \[0, k=4\]"),
        (lambda: cov.coverage(np.zeros((3, 2, 2)), [0.0]), r"\(0, 1\]"),
        (lambda: cov.coverage(np.zeros((3, 2, 2)), []), "non-empty"),
        (lambda: cov.coverage(np.zeros((3, 2, 2)), "0.1,abc"), "comma-separated"),
        (lambda: cov.coverage(np.zeros((0, 2, 2)), [0.1]), "zero-size"),
        (lambda: cov.routing_account(np.zeros((3, 2, 2)), np.array([0, 1]), 0.1), "length n_prompts"),
        (lambda: cov.routing_account(np.zeros((3, 2, 2)), np.array([0, 1, 2]), 0.1), "outside"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
