"""2609.32996's rules in deploy.mixtures: the selected member held fixed across the paired bootstrap
(re-selection as the named option), and the pooled plurality vote with replacement for k = 1 pools."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from oraclegap.deploy import mixtures as mx
from oraclegap.pool import Pool
from oraclegap.stats import simulate
from oraclegap.stats.noise import answer_codes, plurality_vote


@pytest.fixture(scope="module")
def pool():
    return simulate.exchangeable(240, 5, 16, seed=4).pool


def test_fixed_member_is_the_default_and_equals_a_fixed_comparator(pool):
    """Held fixed, the test-selected member is one fixed column: its interval equals the one against
    the same member passed as the validation member (the same resamples)."""
    t = mx.deployment_rules(pool, n_boot=500, seed=2)
    assert t.reselect is False
    j = pool.policy_names.index(t.test_member)
    tv = mx.deployment_rules(pool, validation=j, n_boot=500, seed=2)
    f = tv.frame().set_index("kind")
    for kind in ("mixture_matched", "mixture_all", "oracle"):
        r = f.loc[kind]
        assert (r["diff_test"], r["lo_test"], r["hi_test"]) == pytest.approx(
            (r["diff_val"], r["lo_val"], r["hi_val"]), abs=1e-12
        )
    assert f.loc["best_test", "lo_test"] == f.loc["best_test", "hi_test"] == 0.0


def test_reselection_shifts_every_interval_against_the_system(pool):
    fixed = mx.deployment_rules(pool, n_boot=500, seed=3).frame().set_index("system")
    resel = mx.deployment_rules(pool, n_boot=500, seed=3, reselect=True)
    assert resel.reselect is True
    rs = resel.frame().set_index("system")
    np.testing.assert_allclose(rs["diff_test"], fixed["diff_test"])  # the point estimate does not change
    # per resample the re-selected best is >= the fixed member, so every quantile of the difference is <=
    assert (rs["lo_test"] <= fixed["lo_test"] + 1e-12).all() and (
        rs["hi_test"] <= fixed["hi_test"] + 1e-12
    ).all()
    assert (rs["lo_test"] < fixed["lo_test"] - 1e-6).any()  # and strictly somewhere: the option matters
    bs = mx.band_sensitivity(pool, bands=[(0.05, 0.30)], n_boot=500, seed=3, reselect=True)
    assert bs.iloc[0]["lo_test"] == pytest.approx(rs.loc[rs["kind"] == "mixture_matched", "lo_test"].iloc[0])
    with pytest.raises(TypeError, match="reselect"):
        mx.deployment_rules(pool, n_boot=200, reselect="yes")


def _k1_pool():
    # two prompts, three members, one response each: prompt 0 answers (A*, B, B), prompt 1 (A*, B, C)
    ans = np.array([[["A"], ["B"], ["B"]], [["A"], ["B"], ["C"]]], dtype=object)
    return Pool.from_array(ans == "A", answers=ans)


def _exact_with_replacement(codes, correct, valid, r):
    """Exact expected vote correctness: every one of the N^r ordered draws, equally likely."""
    N = codes.shape[-1]
    seqs = np.array(list(itertools.product(range(N), repeat=r)))  # [N^r, r]
    return plurality_vote(codes[..., seqs], correct[..., seqs], valid[..., seqs]).mean(axis=-1)


@pytest.mark.parametrize("r", [1, 2, 3, 4])
def test_pooled_vote_with_replacement_by_exact_enumeration(r):
    pool = _k1_pool()
    n, M, k = pool.shape
    codes, valid = answer_codes(pool.answers)
    exact = _exact_with_replacement(
        codes.reshape(n, M * k), pool.verdicts.reshape(n, M * k).astype(float), valid.reshape(n, M * k), r
    )
    vc = mx.vote_comparison(pool, r=r, n_subsamples=20000, n_boot=200, seed=5, replace=True)
    se = np.sqrt(exact * (1 - exact) / 20000) + 1e-12
    assert np.all(np.abs(vc.pooled_rate - exact) <= 5 * se + 1e-9), (vc.pooled_rate, exact)
    # k = 1: a member's self-consistency with replacement repeats its one answer
    np.testing.assert_allclose(vc.member_rate, pool.verdicts[:, :, 0].astype(float))
    if r == 1:
        np.testing.assert_allclose(exact, pool.verdicts.mean(axis=(1, 2)))


def test_pooled_vote_with_replacement_hand_values():
    """r = 3 from (A*, B, B): right iff A appears >= 2 times: 1 + 3 * 2 = 7 of 27 draws. From (A*, B, C):
    A at least twice (7 draws) wins; A once with B and C (6 draws) is a three-way tie (1/3 each); A absent loses."""
    pool = _k1_pool()
    codes, valid = answer_codes(pool.answers)
    exact = _exact_with_replacement(codes[:, :, 0], pool.verdicts[:, :, 0].astype(float), valid[:, :, 0], 3)
    assert exact == pytest.approx([7 / 27, (7 + 6 / 3) / 27])


def test_without_replacement_still_refuses_r_above_k():
    pool = _k1_pool()
    with pytest.raises(ValueError, match="r must be <= 1"):
        mx.vote_comparison(pool, r=3)
    with pytest.raises(TypeError, match="replace"):
        mx.vote_comparison(pool, r=1, replace=1)


def test_self_consistency_with_replacement_k2_by_exact_enumeration():
    """k = 2, r = 3 > k: each member votes over 3 draws with replacement from its own 2 answers."""
    ans = np.array([[["A", "B"], ["B", "B"]], [["A", "C"], ["A", "A"]]], dtype=object)
    pool = Pool.from_array(ans == "A", answers=ans)
    codes, valid = answer_codes(pool.answers)
    exact = _exact_with_replacement(codes, pool.verdicts.astype(float), valid, 3)  # [n, M]
    assert (
        exact[0, 0] == pytest.approx(0.5) and exact[1, 1] == 1.0
    )  # a two-answer member: A wins half the draws
    vc = mx.vote_comparison(pool, r=3, n_subsamples=20000, n_boot=200, seed=6, replace=True)
    se = np.sqrt(exact * (1 - exact) / 20000) + 1e-12
    assert np.all(np.abs(vc.member_rate - exact) <= 5 * se + 1e-9)
    pooled = _exact_with_replacement(
        codes.reshape(2, 4), pool.verdicts.reshape(2, 4).astype(float), valid.reshape(2, 4), 3
    )
    assert np.all(np.abs(vc.pooled_rate - pooled) <= 5 * np.sqrt(pooled * (1 - pooled) / 20000) + 1e-9)
