"""Sequential sizes of the noise bootstraps (stats.noise.stopping): a stopped bootstrap's resamples
are the first of the full-size one's, it never stops before its rule allows, and its decision
agrees with the full-size bootstrap and with the population truth far from and near the
threshold."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap.pool import Pool
from oraclegap.stats import bootstrap, noise
from oraclegap.stats.noise.stopping import LimitStop


def _pool(p: np.ndarray, k: int, seed: int) -> Pool:
    rng = np.random.default_rng(seed)
    return Pool.from_array(rng.random(p.shape + (k,)) < p[:, :, None])


def _exchangeable(n: int, M: int, seed: int) -> np.ndarray:
    """Identical members on every prompt: O_repro = best single member, so the noise share is 1."""
    rng = np.random.default_rng(seed)
    return np.repeat(rng.beta(0.4, 2.0, (n, 1)), M, axis=1)


def _specialists(n: int, M: int, seed: int) -> np.ndarray:
    """One strong member per prompt (0.95), the others 0.02: the reproducible ceiling carries
    almost all of the single-draw oracle, so the noise share is small."""
    rng = np.random.default_rng(seed)
    p = np.full((n, M), 0.02)
    p[np.arange(n), rng.integers(0, M, n)] = 0.95
    return p


# ---------------------------------------------------------------------------- the engine
@pytest.mark.parametrize("stop_at", [None, 1, 3])
def test_stopped_bootstrap_is_the_start_of_the_full_one(stop_at):
    rng0 = np.random.default_rng(0)
    Z = rng0.random((301, 3))
    counts = rng0.integers(0, 5, (301, 2)).astype(np.float32)
    full_rng = np.random.default_rng(11)
    full = bootstrap.bootstrap_means(Z, 250, full_rng, counts=counts)
    seen = []

    def decided(means):
        seen.append(means.shape[0])
        return stop_at is not None and len(seen) == stop_at

    rng = np.random.default_rng(11)
    got = bootstrap.bootstrap_means(Z, 250, rng, counts=counts, looks=[40, 100, 170, 250],
                                    decided=decided, chunk=7)
    B = got.shape[0]
    assert np.array_equal(got, full[:B])  # bit for bit, whatever the blocks
    assert seen == [40, 100, 170][: len(seen)] and B == ([40, 100, 170][stop_at - 1] if stop_at else 250)
    if stop_at is None:  # ran to the end: the generator is where the full call leaves it
        assert rng.integers(0, 2**32) == full_rng.integers(0, 2**32)


@pytest.mark.parametrize("looks", [[0, 20], [10, 10, 20], [10, 5, 20], [10, 30]])
def test_bad_looks_are_refused(looks):
    with pytest.raises(ValueError, match="looks"):
        bootstrap.bootstrap_means(np.ones((5, 1)), 20, 0, looks=looks, decided=lambda m: False)


@pytest.mark.parametrize("kw", [dict(side="mid"), dict(threshold=np.nan), dict(risk=0.0),
                                dict(step=0), dict(quantity="")])
def test_bad_rules_are_refused(kw):
    args = dict(quantity="noise_share", side="lo", threshold=0.5) | kw
    with pytest.raises(ValueError):
        LimitStop(**args)


def test_unknown_quantities_are_refused():
    pool = _pool(_exchangeable(50, 3, 0), 4, 0)
    with pytest.raises(ValueError, match="stop.quantity"):
        noise.decomposition(pool, n_boot=200, stop=LimitStop("nope", "lo", 0.5))
    with pytest.raises(ValueError, match="stop.quantity"):
        noise.best_of_k_check(pool, n_boot=200, stop=LimitStop("noise_share", "hi", 0.0))


# ---------------------------------------------------------------------------- the rule
def test_limits_hold_their_level():
    """Over many looks at B resamples with pi known, each one-sided limit misses with probability
    at most eps (Clopper-Pearson is conservative)."""
    rule = LimitStop("x", "lo", 0.0, risk=0.05, step=100)
    n_max = 600  # five looks before the last: eps = 0.01
    eps = rule.eps(n_max)
    assert eps == pytest.approx(0.01)
    rng = np.random.default_rng(3)
    pi, miss_lo, miss_hi, reps = 0.03, 0, 0, 4000
    for _ in range(reps):
        t = np.where(rng.random(200) < pi, -1.0, 1.0)  # below the threshold 0 with probability pi
        lo, hi, b, B = rule.limits(t, n_max)
        assert B == 200 and lo <= b / B <= hi
        miss_lo += lo > pi
        miss_hi += hi < pi
    # binomial slack of 4 standard deviations around eps * reps = 40
    assert miss_lo <= 40 + 4 * np.sqrt(40) and miss_hi <= 40 + 4 * np.sqrt(40)


def test_nan_replicates_are_left_out_and_an_undefined_limit_never_stops():
    rule = LimitStop("x", "lo", 0.5)
    t = np.array([np.nan] * 50 + [0.9] * 350)
    lo, hi, b, B = rule.limits(t, 2000)
    # no defined replicate below 0.5 among 350: hi = 1 - eps^(1/350) < 0.025 = p
    assert (b, B) == (0, 350) and lo == 0.0 and hi == pytest.approx(1 - rule.eps(2000) ** (1 / 350))
    assert hi < rule.prob(0.95)
    assert rule.decided(t, 0.9, 0.95, 2000)
    assert not rule.decided(t, np.nan, 0.95, 2000)
    assert not rule.decided(np.full(10, np.nan), 0.9, 0.95, 2000)


_CALLS: list = []


class _Recording(LimitStop):
    """The rule, with every look it answers recorded in _CALLS: (B, decided, lo, hi, limit)."""

    def decided(self, replicates, limit, level, n_max):
        out = super().decided(replicates, limit, level, n_max)
        lo, hi, _, B = self.limits(replicates, n_max)
        _CALLS.append((B, out, lo, hi, float(limit)))
        return out


@pytest.mark.parametrize("maker,seed,threshold", [(_exchangeable, 1, 0.5), (_specialists, 2, 0.5),
                                                  (_exchangeable, 1, None)])
def test_never_stops_before_its_rule_allows(maker, seed, threshold):
    """Every look before the stop was undecided; at the stop both Clopper-Pearson limits of pi lie
    on the side of the limit's quantile p that the reported limit is on; a run that never stops
    (threshold None: at the full-size limit itself) gives the fixed-size numbers."""
    pool = _pool(maker(400, 5, seed), 8, seed)
    n_boot = 600
    at_limit = threshold is None
    if at_limit:
        threshold = noise.decomposition(pool, n_boot=n_boot, seed=seed)["noise_share"].lo
    rule = _Recording("noise_share", "lo", threshold)
    _CALLS.clear()
    got = noise.decomposition(pool, n_boot=n_boot, seed=seed, stop=rule)
    calls = list(_CALLS)
    p = rule.prob(0.95)
    assert [c[0] for c in calls] == rule.looks(n_boot)[: len(calls)]  # one call a look, in order
    assert not any(c[1] for c in calls[:-1])
    if got.n_boot < n_boot:
        B, ok, lo, hi, limit = calls[-1]
        assert ok and B == got.n_boot and limit == got["noise_share"].lo
        assert (hi < p) == (lo < p) == (limit >= threshold)
        assert lo >= p or hi < p  # the interval of pi excludes the quantile
    else:
        assert got.to_dict() == noise.decomposition(pool, n_boot=n_boot, seed=seed).to_dict()
    assert (got.n_boot == n_boot) or not at_limit  # pi at p itself: no look can settle it


def _luck(dec) -> bool:
    return dec["noise_share"].lo >= 0.5


@pytest.mark.parametrize("maker,truth_luck", [(_exchangeable, True), (_specialists, False)])
def test_far_from_the_threshold_stops_early_with_the_true_decision(maker, truth_luck):
    p = maker(1500, 6, 4)
    share = noise.decompose_truth(p).noise_share
    assert (share >= 0.5) == truth_luck and abs(share - 0.5) > 0.3  # far from the threshold
    pool = _pool(p, 8, 4)
    rule = LimitStop("noise_share", "lo", 0.5)
    got = noise.decomposition(pool, n_boot=1000, seed=5, stop=rule)
    full = noise.decomposition(pool, n_boot=1000, seed=5)
    # far away every resample falls on the decision's side: the stop is the first look at which
    # the rule settles B such resamples (300 for "at or above" at p = 0.025, where the
    # Clopper-Pearson limit 1 - eps^(1/B) from none below must pass under p; 100 for "below")
    side = 1.0 if truth_luck else 0.0
    first = min(B for B in rule.looks(1000) if rule.decided(np.full(B, side), side, 0.95, 1000))
    assert got.n_boot == first < full.n_boot == 1000
    assert _luck(got) == _luck(full) == truth_luck
    # the resamples taken are the full run's first: the point values are the same
    for q, e in got.estimates.items():
        assert e.value == full[q].value or (np.isnan(e.value) and np.isnan(full[q].value))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_near_the_threshold_the_decision_is_the_full_sizes(seed):
    """A threshold at the full-size limit itself (within its Monte Carlo reach): the stopped
    bootstrap must either run to the full size (the same numbers) or take the same decision."""
    pool = _pool(_exchangeable(600, 4, 10 + seed), 6, seed) if seed != 1 else _pool(
        _specialists(600, 4, seed), 6, seed)
    full = noise.decomposition(pool, n_boot=800, seed=seed)
    for shift in (-1e-4, 1e-4):
        c = full["noise_share"].lo + shift
        if not 0 < c < 1:  # the share's limit is cut to [0, 1]: move inside
            c = min(max(c, 1e-3), 1 - 1e-3)
        rule = LimitStop("noise_share", "lo", c)
        got = noise.decomposition(pool, n_boot=800, seed=seed, stop=rule)
        assert (got["noise_share"].lo >= c) == (full["noise_share"].lo >= c)
        if got.n_boot == 800:
            assert got.to_dict() == full.to_dict()
    bok_full = noise.best_of_k_check(pool, n_boot=800, seed=seed)
    for shift in (-1e-4, 1e-4):
        c = bok_full.difference.hi + shift
        got = noise.best_of_k_check(pool, n_boot=800, seed=seed,
                                    stop=LimitStop("difference", "hi", c))
        assert (got.difference.hi >= c) == (bok_full.difference.hi >= c)
        if got.n_boot == 800:
            assert got.frame().equals(bok_full.frame())


@pytest.mark.parametrize("passes", [True, False])
def test_best_of_k_far_from_zero_stops_early_with_the_full_sizes_decision(passes):
    """One member at 0.5 per prompt, the others at 0.02, k = 16: committed best-of-6 reaches about
    1 - 0.5^6, far above the independence oracle (about 0.55), so the check passes. Identical
    members at k = 8: best-of-K is capped at K = 4 of the 6 draws the oracle spends and falls far
    below it."""
    rng = np.random.default_rng(8)
    if passes:
        pr = np.full((1500, 6), 0.02)
        pr[np.arange(1500), rng.integers(0, 6, 1500)] = 0.5
        pool = _pool(pr, 16, 8)
    else:
        pool = _pool(_exchangeable(1500, 6, 8), 8, 8)
    rule = LimitStop("difference", "hi", 0.0)
    got = noise.best_of_k_check(pool, n_boot=1000, seed=2, stop=rule)
    full = noise.best_of_k_check(pool, n_boot=1000, seed=2)
    assert full.passes == got.passes == passes and full.n_boot == 1000
    assert full.difference.lo > 0 if passes else full.difference.hi < 0  # far from zero
    side = 1.0 if passes else -1.0
    first = min(B for B in rule.looks(1000) if rule.decided(np.full(B, side), side, 0.95, 1000))
    assert got.n_boot == first
    assert got.difference.value == full.difference.value
