"""Sequential sizes of the noise bootstraps (stats.noise.stopping): a stopped bootstrap's resamples
are the first of the full-size one's, it never stops before its rule allows, and its decision
agrees with the full-size bootstrap and with the population truth far from and near the
threshold."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap.pool import Pool
from oraclegap.stats import bootstrap, noise
from oraclegap.stats.noise.stopping import LimitStop, PValueStop


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


# ---------------------------------------------------------------------------- the checks' permutations
def _iid_pool(n: int, M: int, k: int, seed: int, alignment: str = "seed-aligned") -> Pool:
    rng = np.random.default_rng(seed)
    p = rng.beta(0.8, 0.8, (n, M))
    return Pool.from_array(rng.random((n, M, k)) < p[:, :, None], alignment=alignment)


def _comonotone(n: int, M: int, k: int, seed: int) -> Pool:
    """R_imj = 1[U_ij < p_im], one uniform per prompt and draw for every member: coupled draws."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 0.9, (n, M))
    return Pool.from_array(rng.random((n, 1, k)) < p[:, :, None], alignment="seed-aligned")


def _positions(n: int, M: int, k: int, seed: int) -> Pool:
    """Half of the draw positions succeed more often on every prompt: dispersion fails."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.2, 0.8, (n, M))
    shift = np.where(np.arange(k) < k // 2, -0.15, 0.15)
    v = rng.random((n, M, k)) < np.clip(p[:, :, None] + shift, 0, 1)
    return Pool.from_array(v, alignment="seed-aligned")


def _balanced(n: int) -> Pool:
    """Every permutation gives the observed statistics or more: member 0 has 2 of 4 draws right on
    patterns that give every draw position the same total (dispersion 0, the least it can be),
    member 1 is never right (the union rate and the members-right law do not move under any
    within-cell permutation). Every p-value is 1."""
    patterns = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]], bool)
    v = np.zeros((n, 2, 4), bool)
    v[:, 0] = patterns[np.arange(n) % 4]
    return Pool.from_array(v, alignment="seed-aligned")


def _fields(check) -> tuple:
    return (check.name, check.value, check.reference, check.p_value, check.n, check.note)


def _same_fields(a, b) -> bool:
    """Two checks' fields equal (NaN equal to NaN), ``passed`` left out."""
    return all(x == y or (isinstance(x, float) and np.isnan(x) and np.isnan(y))
               for x, y in zip(_fields(a), _fields(b), strict=True))


@pytest.mark.parametrize("maker,args", [(_iid_pool, (300, 4, 12, 2)), (_positions, (300, 3, 10, 4)),
                                        (_iid_pool, (40, 3, 5, 9)), (_comonotone, (200, 4, 12, 5))])
@pytest.mark.parametrize("seed", [0, 7])
def test_stopped_checks_are_the_fixed_size_checks_at_the_permutations_drawn(maker, args, seed):
    """Prefix property: the stopped checks (values, references, p-values, notes) are those of a
    fixed-size run with n_perm = the permutations drawn, and a run that draws every permutation
    gives the fixed-size checks bit for bit."""
    pool = maker(*args)
    got = noise.assumption_checks(pool, n_perm=199, seed=seed, stop=PValueStop())
    B = got.n_perm
    assert B in PValueStop().looks(199)
    fixed = noise.permutation_checks(pool, n_perm=B, alpha=0.5, seed=seed)  # alpha: any B is valid
    for a, b in zip(got.checks[1:], fixed, strict=True):
        assert _same_fields(a, b), (a, b)
        assert f"{B} within-cell permutations" in a.note or a.passed is None
    full = noise.assumption_checks(pool, n_perm=199, seed=seed)
    assert [c.passed for c in got.checks] == [c.passed for c in full.checks]
    if B == 199:
        assert [c.to_dict() for c in got.checks] == [c.to_dict() for c in full.checks]
    d = got.to_dict()
    assert d["n_perm"] == B and d["stop"] == PValueStop().to_dict()
    assert "n_perm" not in full.to_dict() and full.n_perm == 199 and full.stop is None


def test_clear_passes_stop_at_the_first_look():
    """Every permutation reaches the observed statistics (p = 1 for all three checks): the rule
    settles all of them at the first look. On an independent, identically distributed pool whose
    full-size exceedances are all far from alpha, a first look of 100 permutations settles every
    check except with probability below 1e-6 (each needs 6 of 100 exceedances, each expected
    30 or more times)."""
    rule = PValueStop()
    got = noise.assumption_checks(_balanced(64), n_perm=199, stop=rule)
    assert got.n_perm == rule.step and got.all_pass
    assert all(c.p_value == 1.0 for c in got.checks[1:])
    pool = _iid_pool(300, 4, 12, 2)
    from oraclegap.stats.noise import _permutations

    # the full-size exceedances, from the same permutations, are far from alpha on both tails
    v = pool.verdicts
    c = v.sum(axis=-1).astype(np.int64)
    key = np.random.default_rng(0).integers(0, np.iinfo(np.uint64).max, dtype=np.uint64,
                                            endpoint=True)
    null = _permutations._draw_stats(_permutations._permuted_verdicts(c, v.shape[2], key, 0, 999))
    obs = _permutations._draw_stats(v)
    shares = [(null[:, 0] >= obs[0]).mean(), (null[:, 2] >= obs[2]).mean(),
              (null[:, 1] <= obs[1]).mean(), (null[:, 1] >= obs[1]).mean()]
    assert min(shares) >= 0.3, shares
    wide = PValueStop(step=100)
    got = noise.assumption_checks(pool, n_perm=999, seed=0, stop=wide)
    assert got.n_perm == wide.step and got.all_pass
    full = noise.assumption_checks(pool, n_perm=999, seed=0)
    assert [c.passed for c in got.checks] == [c.passed for c in full.checks]


@pytest.mark.parametrize("maker,failing", [(_comonotone, {"coupling", "known_p_tv"}),
                                           (_positions, {"dispersion"})])
def test_failing_checks_take_the_full_sizes_decision(maker, failing):
    """A failed check cannot be settled within 199 permutations (its upper limit needs 677 with
    none reaching the observed statistic): the run draws them all, the fixed-size checks."""
    pool = maker(300, 3, 10, 6)
    got = noise.assumption_checks(pool, n_perm=199, seed=1, stop=PValueStop())
    full = noise.assumption_checks(pool, n_perm=199, seed=1)
    assert {c.name for c in full.checks if c.passed is False} >= failing
    assert got.n_perm == 199
    assert [c.to_dict() for c in got.checks] == [c.to_dict() for c in full.checks]
    assert got.flags == full.flags


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_near_alpha_the_checks_draw_every_permutation(seed):
    """alpha at the fixed-size p-value itself (within Monte Carlo reach of pi): no look settles
    the check, so the run draws every permutation and gives the fixed-size check; an independent
    pool, where only dispersion holds the run."""
    pool = _iid_pool(200, 3, 8, 20 + seed, alignment="independent")
    full, = noise.permutation_checks(pool, n_perm=399, seed=seed)[:1]
    for alpha in (full.p_value, full.p_value + 1e-9):
        fixed = noise.permutation_checks(pool, n_perm=399, alpha=alpha, seed=seed)
        got = noise.permutation_checks(pool, n_perm=399, alpha=alpha, seed=seed, stop=PValueStop())
        assert got[0].to_dict() == fixed[0].to_dict()
        assert "from 399 within-cell" in got[0].note


class _Counting(PValueStop):
    """The rule, with the upper-tail checks it is asked about at each look recorded in _ASKED."""

    def settled(self, b, B, alpha, n_max):
        _ASKED.append(B)
        return super().settled(b, B, alpha, n_max)


_ASKED: list = []


def test_untested_checks_do_not_hold_the_permutations():
    """A pool arranged from counts (dispersion untested) with independent draws (coupling and TV
    untested): nothing depends on a p-value, the first look ends the run. A TV above max_tv fails
    whatever its p-value: the rule is not asked about it (one upper-tail question a look,
    dispersion's, where a TV within max_tv adds its own)."""
    rng = np.random.default_rng(17)
    arranged = Pool.from_counts(rng.integers(0, 9, (60, 3)), k=8, seed=0)
    got = noise.assumption_checks(arranged, n_perm=199, stop=PValueStop())
    assert got.n_perm == PValueStop().step and all(c.passed is None for c in got.checks)
    pool = _iid_pool(300, 4, 12, 2)
    rule = _Counting(step=100)
    _ASKED.clear()
    within = noise.assumption_checks(pool, n_perm=999, seed=0, stop=rule)
    asked_within = list(_ASKED)
    tv = within.check("known_p_tv")
    assert tv.passed and within.n_perm == 100
    _ASKED.clear()
    above = noise.assumption_checks(pool, n_perm=999, seed=0, stop=rule, max_tv=tv.value / 2)
    assert above.check("known_p_tv").passed is False and above.n_perm == 100
    assert asked_within == [100, 100] and _ASKED == [100]


def test_two_sided_p_is_bounded_below_by_the_smaller_tail():
    """Whatever the centre, the two-sided exceedance about it is at least the smaller one-sided
    exceedance: on the permuted union rates of a pool, for the permutations' own mean and for
    centres around it."""
    from oraclegap.stats.noise import _permutations

    pool = _iid_pool(120, 4, 8, 3)
    v = pool.verdicts
    c = v.sum(axis=-1).astype(np.int64)
    null = _permutations._draw_stats(_permutations._permuted_verdicts(c, 8, np.uint64(3), 0, 400))
    t = null[:, 1]
    for obs in np.quantile(t, [0.01, 0.2, 0.5, 0.8, 0.99]):
        lower = min((t <= obs + 1e-12).mean(), (t >= obs - 1e-12).mean())
        for centre in t.mean() + np.linspace(-3, 3, 13) * t.std():
            assert (np.abs(t - centre) >= abs(obs - centre) - 1e-12).mean() >= lower


def test_the_rule_is_honest_at_alpha():
    """Exceedance probability just below alpha (the check should fail): over many sequential runs
    the rule settles a pass at most ``risk`` of the time (Clopper-Pearson at eps a look), for the
    upper tail and for the two-sided rule with the centre estimated; and a share at alpha is never
    settled before the largest size."""
    rule = PValueStop(risk=0.05, step=20)
    alpha, n_max, reps = 0.05, 199, 600
    rng = np.random.default_rng(5)
    z = 2.0  # N(0, 1): P(|T| >= z) = 0.0455 < alpha
    wrong_upper = wrong_two = 0
    for _ in range(reps):
        u = rng.random(n_max) < 0.049
        t = rng.standard_normal(n_max)
        for B in rule.looks(n_max)[:-1]:
            if rule.settled(int(u[:B].sum()), B, alpha, n_max):
                wrong_upper += (1 + u[:B].sum()) / (B + 1) > alpha
                break
        for B in rule.looks(n_max)[:-1]:
            s = t[:B]
            mu = s.mean()
            two = (1 + np.sum(np.abs(s - mu) >= abs(z - mu))) / (B + 1)
            if rule.settled_two_sided(int(np.sum(s <= z)), int(np.sum(s >= z)), two, B, alpha,
                                      n_max):
                wrong_two += 1
                break
    slack = 4 * np.sqrt(rule.risk * reps)
    assert wrong_upper <= rule.risk * reps + slack and wrong_two <= rule.risk * reps + slack
    for B in rule.looks(n_max)[:-1]:
        assert not rule.settled(int(round(alpha * B)), B, alpha, n_max)


@pytest.mark.parametrize("kw", [dict(risk=0.0), dict(risk=1.0), dict(step=0), dict(step=2.5)])
def test_bad_permutation_rules_are_refused(kw):
    with pytest.raises((ValueError, TypeError)):  # a step that is no integer: TypeError
        PValueStop(**kw)


def test_bad_permutation_stops_are_refused():
    pool = _iid_pool(30, 2, 4, 0)
    with pytest.raises(ValueError, match="PValueStop"):
        noise.permutation_checks(pool, n_perm=99, stop=LimitStop("noise_share", "lo", 0.5))
    with pytest.raises(ValueError, match="PValueStop"):
        noise.assumption_checks(pool, n_perm=99, stop="fast")
    with pytest.raises(ValueError, match="checks=True"):
        noise.decomposition(pool, n_boot=50, check_stop=PValueStop())
    with pytest.raises(ValueError, match="PValueStop"):
        noise.decomposition(pool, n_boot=50, checks=True, check_stop=LimitStop("gap", "lo", 0.0))
    with pytest.raises(ValueError, match="cannot give a p-value"):
        noise.permutation_checks(pool, n_perm=50, stop=PValueStop())
    with pytest.raises(ValueError):
        PValueStop().limits(5, 4, 199)
    with pytest.raises(ValueError, match="alpha"):
        PValueStop().settled(1, 20, 0.0, 199)


def test_decomposition_passes_the_rule_to_its_checks():
    pool = _iid_pool(300, 4, 12, 2)
    rule = PValueStop()
    got = noise.decomposition(pool, n_boot=50, checks=True, n_perm=199, seed=4, check_stop=rule)
    want = noise.assumption_checks(pool, n_perm=199, seed=4, stop=rule)
    assert got.assumptions.to_dict() == want.to_dict()
    plain = noise.decomposition(pool, n_boot=50, checks=True, n_perm=199, seed=4)
    assert got.to_dict()["estimates"] == plain.to_dict()["estimates"]  # the bootstrap is untouched
