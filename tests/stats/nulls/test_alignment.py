"""Draw alignment, disjoint draws and member coverage against the margin-preserving null
(2609.32996 App. C.5): known truths on pools built to have them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from oraclegap.pool import Pool
from oraclegap.stats import coverage as cov
from oraclegap.stats import nulls


def _independent(n=120, M=4, k=12, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.8, 0.8, size=(n, 1)) * np.ones((1, M))
    return Pool((rng.random((n, M, k)) < p[:, :, None]))


def _seed_aligned(n=120, M=4, k=12, seed=0):
    """Members with equal rates whose j-th responses share one uniform number (common random numbers)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(0.8, 0.8, size=n)
    u = rng.random((n, 1, k))
    return Pool(np.broadcast_to(u < p[:, None, None], (n, M, k)).copy())


# ---------------------------------------------------------------------------- draw alignment
def test_exact_expectation_matches_enumeration_on_one_cell_pair():
    # two members, one prompt, k = 3: average agreement over all orderings of both cells
    v = np.array([[[1, 1, 0], [1, 0, 0]]], dtype=bool)
    perms = list(itertools.permutations(range(3)))
    agree = np.mean([(v[0, 0, list(a)] == v[0, 1, list(b)]).mean() for a in perms for b in perms])
    assert nulls.draw_alignment(v, n_draws=5, seed=0).expected == pytest.approx(agree, abs=1e-12)


def test_shuffle_draws_average_to_the_exact_expectation():
    res = nulls.draw_alignment(_independent(), n_draws=400, seed=1)
    se = res.test.draws.std(ddof=1) / np.sqrt(res.test.n_draws)
    assert abs(res.test.mean - res.expected) < 4 * se + 1e-12
    # shuffling keeps the counts, so the exact expectation is the same for the observed pool and any shuffle of it
    assert res.pairs["expected"].mean() == pytest.approx(res.expected)


def test_independent_draws_are_not_flagged_and_common_random_numbers_are():
    # independent draws are exchangeable within each cell given the counts: the reference is their exact law, so the
    # p-values are (conservatively) uniform; 80 pools give a rejection rate near the level
    ps = np.array([nulls.draw_alignment(_independent(n=40, seed=100 + s), n_draws=100, seed=s).test.p for s in range(80)])
    assert np.mean(ps <= 0.05) <= 0.15 and 0.35 <= ps.mean() <= 0.7
    aligned = nulls.draw_alignment(_seed_aligned(), n_draws=200, seed=0)
    assert aligned.test.observed == pytest.approx(1.0)  # identical responses at every index
    assert aligned.test.p == pytest.approx(1 / 201) and aligned.test.observed > aligned.test.band.hi  # no draw reaches it


def test_draw_alignment_is_seeded_and_validates():
    a = nulls.draw_alignment(_independent(), n_draws=50, seed=3)
    b = nulls.draw_alignment(_independent(), n_draws=50, seed=3)
    assert np.array_equal(a.test.draws, b.test.draws)
    assert list(a.pairs.columns) == ["member_a", "member_b", "observed", "expected"] and len(a.pairs) == 6
    with pytest.raises(ValueError, match="at least 2 members and 2 draws"):
        nulls.draw_alignment(np.zeros((5, 1, 4), dtype=bool))
    with pytest.raises(ValueError, match="at least 2 members and 2 draws"):
        nulls.draw_alignment(np.zeros((5, 3, 1), dtype=bool))
    with pytest.raises(ValueError, match="rank"):
        nulls.draw_alignment(np.zeros((5, 3), dtype=bool))


# ---------------------------------------------------------------------------- disjoint draws
def test_disjoint_draws_takes_one_block_per_member():
    rng = np.random.default_rng(0)
    v = rng.random((7, 3, 10)) < 0.5
    answers = np.where(v, "y", "n").astype(object)
    pool = Pool(v, answers=answers, alignment="seed-aligned", per_response={"confidence": rng.random(v.shape)})
    d = nulls.disjoint_draws(pool, 3, offset=1)
    assert d.shape == (7, 3, 3) and d.alignment == "independent"
    for m in range(3):
        cols = range(1 + 3 * m, 4 + 3 * m)
        assert np.array_equal(d.verdicts[:, m], v[:, m, cols])
        assert np.array_equal(d.answers[:, m], answers[:, m, cols])
        assert np.array_equal(d.per_response["confidence"][:, m], pool.per_response["confidence"][:, m, cols])
    assert d.meta["disjoint_draws"]["blocks"] == [[1, 3], [4, 6], [7, 9]]


def test_disjoint_draws_remove_common_random_numbers():
    aligned = _seed_aligned(M=3, k=24)
    d = nulls.disjoint_draws(aligned, 8)
    res = nulls.draw_alignment(d, n_draws=300, seed=0)
    # no shared draw index is left: matched agreement is a plain draw from the shuffle reference
    assert res.test.band.lo - 0.01 <= res.test.observed <= res.test.band.hi + 0.01
    assert nulls.draw_alignment(aligned, n_draws=50, seed=0).test.observed == pytest.approx(1.0)


def test_disjoint_draws_refuses_too_few_draws_and_non_pools():
    pool = _independent(M=3, k=10)
    with pytest.raises(ValueError, match="needs 12 draws per cell"):
        nulls.disjoint_draws(pool, 4)
    with pytest.raises(TypeError, match="Pool"):
        nulls.disjoint_draws(pool.verdicts, 2)
    with pytest.raises(ValueError, match="k_each"):
        nulls.disjoint_draws(pool, 0)


# ---------------------------------------------------------------------------- member coverage
def test_member_coverage_observed_values_are_the_coverage_modules():
    pool = _independent(n=60, M=3, k=8, seed=2)
    mc = nulls.member_coverage(pool, [0.1, 0.5], n_draws=200, seed=0)
    table = cov.coverage(pool, [0.1, 0.5])
    obs = np.array([[t.observed for t in mc.tests if t.tau == tau] for tau in (0.1, 0.5)])  # [T, M] in member order
    assert np.allclose(obs, table.member)
    f = mc.frame()
    assert list(f["member"]) == [m for m in pool.policy_names for _ in (0.1, 0.5)] and (f["null"] == "margin").all()


def test_member_coverage_chain_matches_the_exact_margin_law():
    c = np.array([[2, 1, 0], [1, 2, 1], [0, 1, 2], [2, 0, 1]])
    k, tau = 2, 0.6  # need(0.6, 2) = 2 successes
    law = nulls.exact_margin_law(c, k=k)
    exact = np.einsum("b,bm->m", law.prob, (law.tables >= cov.need(tau, k)).mean(axis=1))
    mc = nulls.member_coverage(c, [tau], k=k, n_draws=6000, seed=4, thin=4 * c.size)
    means = np.array([t.mean for t in mc.tests])
    se = np.array([t.draws.std(ddof=1) / np.sqrt(t.ess) for t in mc.tests])
    assert np.all(np.abs(means - exact) <= 4 * se + 1e-9)


def test_member_coverage_flags_a_broad_lead():
    # member 0 spreads its successes thinly (one per prompt); the others concentrate theirs
    n, k = 40, 4
    c = np.zeros((n, 3), dtype=int)
    c[:, 0] = 1
    c[: n // 4, 1] = 4
    c[: n // 4, 2] = 4
    mc = nulls.member_coverage(c, [0.25], k=k, n_draws=500, seed=0)
    broad = mc.tests[0]
    assert broad.observed == 1.0 and broad.p <= 0.05 and broad.p_lower >= 0.95


# ---------------------------------------------------------------------------- the independence note
def test_null_tests_note_the_independence_assumption_on_seed_aligned_pools():
    """A pool marked seed-aligned gets the note (first), an independent or unmarked one does not,
    and the note leaves every number unchanged; common random numbers pull L below its re-deal mean."""
    import dataclasses

    v = _seed_aligned(n=60, M=3, k=8, seed=4)
    marked = dataclasses.replace(v, alignment="seed-aligned")
    a = nulls.null_tests(marked, (0.1, 0.3), nulls=("redeal",), statistics=("L",), n_draws=200, seed=0)
    b = nulls.null_tests(dataclasses.replace(v, alignment="independent"), (0.1, 0.3), nulls=("redeal",), statistics=("L",),
                         n_draws=200, seed=0)
    c = nulls.null_tests(v.verdicts, (0.1, 0.3), nulls=("redeal",), statistics=("L",), n_draws=200, seed=0)
    assert a.notes[0] == nulls.ALIGNMENT_NOTE == nulls.alignment_note(marked)
    assert "independent" in a.notes[0] and "conservative" in a.notes[0] and "per-policy" in a.notes[0]
    assert nulls.ALIGNMENT_NOTE not in b.notes and nulls.ALIGNMENT_NOTE not in c.notes
    assert nulls.alignment_note(v.verdicts) is None
    assert a.frame().equals(b.frame()) and a.to_dict()["notes"][0] == nulls.ALIGNMENT_NOTE
    # identical members under common random numbers: no gap at all, far below the re-deal mean
    t = a.get("L", 0.1)
    assert t.observed == 0.0 and t.mean > 0 and t.p == 1.0
