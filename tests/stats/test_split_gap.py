"""The split-draw coverage gap (oraclegap.stats.split_gap) and the exact member-quality test
(oraclegap.stats.nulls.quality): known truths by exact enumeration and by simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from oraclegap.stats import split_gap as sg
from oraclegap.stats.coverage import need
from oraclegap.stats.nulls.quality import member_quality, quality_spread


def _exchangeable(n, M, k, rng):
    q = rng.beta(0.347, 0.601, n)
    return rng.random((n, M, k)) < q[:, None, None]


@pytest.mark.parametrize("k", [4, 16, 30])
def test_identical_members_are_not_certified_and_the_estimate_is_not_positive(k):
    """Pure noise: the lower limit stays <= 0 in at least 95% of pools (here all), and the mean
    estimate is <= 0 (within its Monte Carlo error) at every threshold."""
    rng = np.random.default_rng(k)
    los, ests = [], []
    for r in range(60):
        gaps = sg.split_draw_gap(_exchangeable(400, 6, k, rng), (0.1, 0.3), 0.05, seed=r)
        los.append([g.lo for g in gaps])
        ests.append([g.value for g in gaps])
    los, ests = np.array(los), np.array(ests)
    assert (los <= 0).mean(axis=0).min() >= 0.95
    se = ests.std(axis=0, ddof=1) / np.sqrt(len(ests))
    assert (ests.mean(axis=0) <= 3 * se).all()


def test_apparent_gap_is_positive_where_the_split_gap_is_not():
    """The contrast the certificate exists for: on identical members the k-draw plug-in gap's
    paired interval excludes 0 (the winner's curse) while the split-draw interval does not."""
    from oraclegap.stats import certify

    rng = np.random.default_rng(7)
    v = _exchangeable(4000, 11, 30, rng)
    R = v.sum(axis=2) >= need(0.1, 30)
    apparent = certify.selection_valid_gap_from_outcomes(R, 0.05, "paired")
    split = sg.split_draw_gap(v, (0.1,), 0.05, seed=1)[0]
    assert apparent.lo > 0 and split.lo <= 0


def _brute_choice(p, k):
    """P(argmax with uniform ties = m) by enumerating every count vector."""
    M = p.size
    out = np.zeros(M)
    for counts in itertools.product(range(k + 1), repeat=M):
        pr = np.prod([math.comb(k, c) * p[m] ** c * (1 - p[m]) ** (k - c) for m, c in enumerate(counts)])
        top = max(counts)
        winners = [m for m, c in enumerate(counts) if c == top]
        for m in winners:
            out[m] += pr / len(winners)
    return out


def test_choice_probabilities_equal_exact_enumeration():
    rng = np.random.default_rng(3)
    for M, k in ((2, 1), (3, 2), (4, 3), (5, 2)):
        p = rng.random((3, M))
        got = sg._choice_probabilities(p, k)
        want = np.array([_brute_choice(row, k) for row in p])
        np.testing.assert_allclose(got, want, atol=1e-12)
        np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)


def test_population_value_equals_the_estimators_exact_expectation():
    """One prompt, M = 2, k = 3 (k_A = 1, k_B = 2): the mean of each member's difference d_m over
    every outcome of the 6 draws (and both tie orders) equals the population formula; the
    population gap is the minimum over members."""
    p = np.array([0.7, 0.35])
    tau = 0.5
    ka, kb = sg.split_halves(3)
    mean_d = np.zeros(2)
    for bits in itertools.product((0, 1), repeat=6):
        v = np.array(bits, dtype=bool).reshape(1, 2, 3)
        pr = np.prod([p[m] ** v[0, m, j] * (1 - p[m]) ** (1 - v[0, m, j]) for m in range(2) for j in range(3)])
        ca, cb = v[:, :, :ka].sum(axis=2), v[:, :, ka:].sum(axis=2)
        for order in itertools.product((np.array([[0.0, 0.9]]), np.array([[0.9, 0.0]])), repeat=2):
            d, _, _ = sg._differences(ca, cb, ka, kb, tau, *order)
            mean_d += pr * d[0] / 4
    assert sg.split_draw_population(p[None, :], 3, [tau])[0] == pytest.approx(mean_d.min(), abs=1e-12)


def test_interval_covers_the_population_value_on_specialists():
    """Planted specialists (one member boosted per prompt): the 90% interval covers the population
    value in at least 85% of 120 pools (binomial tolerance around 0.9), and the gap is certified."""
    rng = np.random.default_rng(11)
    n, M, k, tau = 300, 4, 8, 0.3
    hits, cert = 0, 0
    for r in range(120):
        q = rng.beta(0.6, 0.8, n)
        p = np.repeat(q[:, None], M, axis=1)
        p[np.arange(n), rng.integers(0, M, n)] = 1 - (1 - q) * 0.4
        g = sg.split_draw_gap(rng.random((n, M, k)) < p[:, :, None], (tau,), 0.10, seed=r)[0]
        truth = sg.split_draw_population(p, k, [tau])[0]
        hits += g.lo <= truth <= g.hi
        cert += g.certified
    assert hits / 120 >= 0.85 and cert == 120


def test_split_gap_inputs_and_determinism():
    rng = np.random.default_rng(0)
    v = _exchangeable(50, 3, 4, rng)
    a = sg.split_draw_gap(v, (0.1, 0.5), seed=5)
    b = sg.split_draw_gap(v, (0.1, 0.5), seed=5)
    assert [x.to_dict() for x in a] == [x.to_dict() for x in b]
    assert sg.split_groups((0.05, 0.1, 0.2, 0.3), 4) == [(1, 1)] * 4  # one statistic at k = 4
    with pytest.raises(ValueError, match="k >= 2"):
        sg.split_draw_gap(v[:, :, :1])
    with pytest.raises(ValueError, match="3 dimensions"):
        sg.split_draw_gap(v[:, :, 0])
    with pytest.raises(ValueError, match="rates"):
        sg.split_draw_population(np.full((3, 2), 1.5), 4)


# ---------------------------------------------------------------------------- the quality test
def test_quality_null_mean_is_the_exact_permutation_mean():
    """Under labels permuted within prompts E[S] = sum_i sum_m (c_im - mean_m c_im)^2."""
    rng = np.random.default_rng(2)
    c = rng.integers(0, 9, (200, 5))
    t = member_quality(c, n_draws=4000, seed=1)
    want = float(((c - c.mean(axis=1, keepdims=True)) ** 2).sum())
    assert t.observed == pytest.approx(float(quality_spread(c.sum(axis=0))))
    assert t.mean == pytest.approx(want, rel=4 * t.draws.std() / np.sqrt(4000) / want)


def test_quality_test_is_exact_on_exchangeable_members_and_rejects_quality():
    rng = np.random.default_rng(4)
    ps = [member_quality(_exchangeable(150, 4, 4, rng), n_draws=99, seed=r).p for r in range(200)]
    assert min(ps) >= 1 / 100  # plus-one p-values are never 0
    # exact level: P(p <= 0.1) <= 0.1, here within a binomial tolerance over 200 pools
    assert np.mean(np.array(ps) <= 0.1) <= 0.1 + 3 * math.sqrt(0.09 / 200)
    q = rng.beta(0.5, 0.5, 600)
    logit = np.log(q / (1 - q))[:, None] + np.linspace(-0.6, 0.6, 4)[None, :]
    v = rng.random((600, 4, 8)) < (1 / (1 + np.exp(-logit)))[:, :, None]
    assert member_quality(v, n_draws=199, seed=0).p <= 0.01


def test_quality_test_ignores_specialists_without_persistent_identity():
    """Each prompt's specialist drawn uniformly: the totals do not differ in expectation and the
    test rejects at about its level (here: p above 0.01 on a large pool)."""
    rng = np.random.default_rng(5)
    n, M = 3000, 4
    q = rng.beta(0.5, 0.5, n)
    p = np.repeat(q[:, None], M, axis=1)
    p[np.arange(n), np.arange(n) % M] = 1 - (1 - q) * 0.4  # every member a specialist on a quarter
    v = rng.random((n, M, 8)) < p[:, :, None]
    assert member_quality(v, n_draws=199, seed=0).p > 0.01
    with pytest.raises(ValueError, match="M >= 2"):
        member_quality(np.zeros((5, 1), dtype=int))


def test_split_planner_names_the_first_size_that_certifies_and_never_promises_on_noise():
    from oraclegap.audit.planners import split_certificate_prompts

    rng = np.random.default_rng(8)
    noise = sg.split_draw_gap(_exchangeable(300, 5, 8, rng), (0.3,), 0.05, seed=0)[0]
    plan = split_certificate_prompts(noise, 0.05, target=0.01)
    assert noise.value <= 0.01 and plan.n_needed is None and not plan.certified_now
    n, M, k = 30, 4, 8  # a small pool of specialists: certified only with more prompts
    q = rng.beta(0.6, 0.8, n)
    p = np.repeat(q[:, None], M, axis=1)
    p[np.arange(n), rng.integers(0, M, n)] = 1 - (1 - q) * 0.5
    g = sg.split_draw_gap(rng.random((n, M, k)) < p[:, :, None], (0.3,), 0.05, seed=0)[0]
    plan = split_certificate_prompts(g, 0.05, target=0.05)
    assert g.value > 0.05 and not plan.certified_now and plan.n_needed is not None

    def lo(nf):  # the projected limit at nf prompts, from the certificate's own moments
        from scipy import stats as sps
        mean, sd = np.array([m.value for m in g.members]), np.array(g.member_sd)
        return (mean - sps.t.ppf(1 - 0.05 / (2 * M), nf + 1) * sd / np.sqrt(nf + 2)).min()

    assert lo(plan.n_needed) > 0.05 and (plan.factor == 2 or lo(plan.n_needed // 2) <= 0.05)
