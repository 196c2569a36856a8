"""Monte Carlo sizes set by the decisions they feed: sequential stopping of the null and quality
tests (:mod:`oraclegap.stats.nulls.sequential`), the excess bootstrap's draw-free resample means
(``excess_bootstrap(method="delta")``) and the power estimate's early look
(:func:`oraclegap.audit.settings.power_first_look`)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from oraclegap.stats import nulls, simulate
from oraclegap.stats.multiplicity import holm
from oraclegap.stats.nulls import margin_null
from oraclegap.stats.nulls.diagnostics import expected_normal_max, redeal_mean_parts
from oraclegap.stats.nulls.quality import member_quality
from oraclegap.stats.nulls.sequential import SequentialStop, holm_rejects

TAUS = (0.05, 0.10, 0.20, 0.30)


# ---------------------------------------------------------------------------- the rule
def test_rule_validates_and_lists_its_looks():
    s = SequentialStop(0.05, step=100)
    assert (
        s.looks(2000) == list(range(100, 2001, 100))
        and s.looks(50) == [50]
        and s.looks(250)[-1] == 250
    )
    assert s.eps(2000) == pytest.approx(0.01 / 19)
    for bad in (
        {"alpha": 0.0},
        {"alpha": 0.05, "risk": 1.5},
        {"alpha": 0.05, "step": 0},
        {"alpha": 0.05, "statistics": ()},
    ):
        with pytest.raises(ValueError):
            SequentialStop(**bad)
    with pytest.raises(ValueError, match="draws must be"):
        s.decided(np.zeros((10, 2)), [0.0], 100)
    with pytest.raises(TypeError, match="sequential"):
        nulls.null_tests(
            simulate.exchangeable(30, 3, 4, seed=0).pool, (0.1,), n_draws=10, sequential="yes"
        )


def test_holm_rejects_is_the_library_holm():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.random(rng.integers(1, 6)) ** 3
        np.testing.assert_array_equal(holm_rejects(p, 0.05), holm(p) <= 0.05)


def _uniform_draws(pi: np.ndarray, B: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Null draws U(0, 1) and observed values 1 - pi: each draw reaches its observed value with
    probability pi (the conditional p-value)."""
    return rng.random((B, pi.size)), 1.0 - pi


def _run(rule: SequentialStop, pi: np.ndarray, n_max: int, rng) -> tuple[np.ndarray, int]:
    d, obs = _uniform_draws(pi, n_max, rng)
    for B in rule.looks(n_max):
        if B == n_max or rule.decided(d[:B], obs, n_max):
            break
    p = (1 + (d[:B] >= obs).sum(axis=0)) / (1 + B)
    return holm_rejects(p, rule.alpha), B


def test_far_from_the_levels_stops_at_the_first_look_near_them_runs_on():
    rng = np.random.default_rng(1)
    rule = SequentialStop(0.05)
    assert _run(rule, np.array([0.6, 0.3, 0.9]), 2000, rng)[1] == 100  # nothing rejected, clearly
    rej, B = _run(
        rule, np.array([0.048, 0.5]), 2000, rng
    )  # Holm's first level 0.025 is far: settled
    assert B < 2000 and not rej.any()
    assert _run(rule, np.array([0.048]), 2000, rng)[1] == 2000  # at its level: the fixed-size test
    d, obs = (
        rng.normal(size=(100, 2)),
        np.array([30.0, 25.0]),
    )  # far above every draw: Cantelli settles it
    lo, hi, p = rule.limits(d, obs, 2000)
    assert (hi < 0.05 / 2).all() and rule.decided(d, obs, 2000)


def test_stopped_decisions_agree_with_the_conditional_p_values():
    """The rejections at the stop are Holm's at the true pi's except with probability <= risk (the
    fixed-size test misses them for pi within its own Monte Carlo error of a level, which the rule
    runs on for): 400 families of three tests with pi spread around the levels."""
    rng = np.random.default_rng(2)
    rule = SequentialStop(0.05, risk=0.01)
    wrong, stopped_early = 0, 0
    for _ in range(400):
        pi = rng.uniform(0.0, 0.12, 3)
        rej, B = _run(rule, pi, 2000, rng)
        stopped_early += B < 2000
        if B < 2000:
            wrong += not np.array_equal(rej, holm_rejects(pi, 0.05))
    assert stopped_early > 100
    assert wrong <= 0.01 * stopped_early + 3 * math.sqrt(0.01 * stopped_early) + 1


def test_level_on_the_null_stays_at_alpha():
    """Under the null pi is uniform: the sequential test of one statistic rejects at rate <= alpha
    (within Monte Carlo error over 3000 tests)."""
    rng = np.random.default_rng(3)
    rule = SequentialStop(0.05)
    rej = [_run(rule, rng.random(1), 400, rng)[0][0] for _ in range(3000)]
    assert np.mean(rej) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 3000)


# ---------------------------------------------------------------------------- the tests that use it
@pytest.mark.parametrize("null", ["redeal", "margin"])
def test_sequential_null_draws_are_the_first_draws_of_the_full_run(null, monkeypatch):
    pool = simulate.diffuse(300, 4, 8, 0.8, seed=5).pool  # rejects clearly: stops before 2000
    kw = dict(nulls=(null,), n_draws=1200, seed=7, burn_in=10 * 1200, thin=600, n_chains=2)
    if null == "margin":  # pieces shorter than one retained table: the chains' other walking loop
        monkeypatch.setattr(margin_null, "_CHUNK", 256)
    full = nulls.null_tests(pool, TAUS, **kw)
    seq = nulls.null_tests(pool, TAUS, sequential=SequentialStop(0.05), **kw)
    B = {t.n_draws for t in seq.tests}
    assert len(B) == 1 and (b := B.pop()) < 1200 and b % 100 == 0
    for tf, ts in zip(full.tests, seq.tests, strict=True):
        if null == "redeal":
            np.testing.assert_array_equal(ts.draws, tf.draws[:b])
        else:  # chain c's first b / 2 draws, chain by chain
            np.testing.assert_array_equal(
                ts.draws, np.concatenate([tf.draws[: b // 2], tf.draws[600 : 600 + b // 2]])
            )
    L = [t for t in seq.tests if t.statistic_name == "L"]
    assert holm_rejects([t.p for t in L], 0.05).all()
    if null == "margin":
        assert seq.chain.proposals == 2 * 10 * 1200 + 600 * b


def test_sequential_quality_test_stops_and_keeps_its_permutations():
    for pool, rejects in (
        (simulate.quality_shift(400, 8, seed=1).pool, True),
        (simulate.exchangeable(400, 6, 8, seed=2).pool, False),
    ):
        full = member_quality(pool, n_draws=999, seed=4)
        seq = member_quality(pool, n_draws=999, seed=4, sequential=SequentialStop(0.05))
        assert seq.n_draws < 999 and (seq.p <= 0.05) == rejects == (full.p <= 0.05)
        np.testing.assert_array_equal(seq.draws, full.draws[: seq.n_draws])
    with pytest.raises(TypeError, match="sequential"):
        member_quality(pool, n_draws=9, sequential=0.05)


# ---------------------------------------------------------------------------- the excess bootstrap
def test_redeal_mean_parts_match_enumeration():
    for M, k, r in ((3, 3, 2), (2, 4, 1), (4, 2, 2), (3, 2, 3)):
        g, h, v = redeal_mean_parts(M, k, r)
        for s in range(M * k + 1):
            G = H = B = 0
            ways = list(itertools.combinations(range(M * k), s))
            for slots in ways:
                c = np.bincount(np.array(slots, dtype=int) // k, minlength=M)
                G += (c >= r).any()
                H += c[0] >= r
                B += (c[0] >= r) and (c[1] >= r)
            assert g[s] == pytest.approx(G / len(ways), abs=1e-12)
            assert h[s] == pytest.approx(H / len(ways), abs=1e-12)
            assert v[s] == pytest.approx((H - B) / len(ways), abs=1e-12)
    assert expected_normal_max(2) == pytest.approx(1 / math.sqrt(math.pi), rel=1e-9)
    assert expected_normal_max(1) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("n,M,k,tau", [(300, 5, 4, 0.3), (600, 4, 16, 0.1)])
def test_delta_resample_means_match_many_redeals(n, M, k, tau):
    """A resample's re-deal mean of L from the exact parts and the normal winner's-curse term agrees
    with 20,000 re-deals of that resample (4 Monte Carlo standard errors)."""
    c = simulate.diffuse(n, M, k, 0.7, seed=n).pool.counts()
    r = int(math.ceil(tau * k - 1e-9))
    g, h, v = redeal_mean_parts(M, k, r)
    e_M = expected_normal_max(M)
    rng = np.random.default_rng(0)
    for _ in range(2):
        idx = rng.integers(0, n, n)
        w = np.bincount(idx, minlength=n).astype(float)
        s = c.sum(axis=1)
        mean = (w @ (g - h)[s]) / n - e_M * math.sqrt(w @ v[s]) / n
        t = nulls.null_tests(
            c[idx],
            [tau],
            k=k,
            nulls=("redeal",),
            statistics=("L",),
            n_draws=20_000,
            seed=int(rng.integers(1 << 30)),
        ).tests[0]
        assert abs(mean - t.mean) <= 4 * t.draws.std() / math.sqrt(t.n_draws)


def test_delta_excess_bootstrap_keeps_the_point_and_the_interval():
    pool = simulate.diffuse(500, 5, 8, 0.8, seed=9).pool
    a = nulls.excess_bootstrap(pool, 0.25, n_boot=300, n_draws=200, seed=1)
    b = nulls.excess_bootstrap(pool, 0.25, n_boot=300, n_draws=200, seed=1, method="delta")
    assert b.value == a.value  # the same full-data draws
    sd = a.draws.std()
    # each limit within the Monte Carlo error of a 300-resample percentile (about 0.27 sd each)
    assert abs(b.lo - a.lo) <= 1.2 * sd and abs(b.hi - a.hi) <= 1.2 * sd
    assert b.draws.std() == pytest.approx(sd, rel=0.25)
    for bad in ({"statistic": "D"}, {"null": "margin"}):
        with pytest.raises(ValueError, match="delta"):
            nulls.excess_bootstrap(pool, 0.25, n_boot=10, n_draws=10, method="delta", **bad)
    with pytest.raises(ValueError, match="method"):
        nulls.excess_bootstrap(pool, 0.25, n_boot=10, n_draws=10, method="exact")
