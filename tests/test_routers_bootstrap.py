"""The vectorised prompt bootstrap of the router evaluation: exact bounded draws from raw words,
counts straight into the block, float32 products exact for 0/1 columns, the loop's numbers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from oraclegap.deploy import evaluate as E


def _positions(u, n, b):
    idx = np.empty((b, n), dtype=np.uint32)
    used = E._bounded(np.asarray(u, dtype=np.uint32), n, b, np.empty((0, 0), dtype=np.float32), idx, False)
    return used, idx


def test_bounded_rule_by_hand():
    # n = 3: 2^32 mod 3 = 1, so a word x is rejected exactly when (3x) mod 2^32 = 0, i.e. x = 0
    u = [0, 1, 2**32 - 1, 1431655766]  # rejected, then floor(3x / 2^32) = 0, 2, 1
    used, idx = _positions(u, 3, 1)
    assert used == 4 and idx.tolist() == [[0, 2, 1]]
    W = np.empty((1, 3), dtype=np.float32)
    assert E._bounded(np.asarray(u, dtype=np.uint32), 3, 1, W, np.empty((0, 3), dtype=np.uint32), True) == 4
    assert W.tolist() == [[1.0, 1.0, 1.0]]
    # too few words: the kernel says so instead of inventing draws
    assert _positions(u[:3], 3, 1)[0] == -1


def test_bounded_rule_is_exactly_uniform():
    # the kernel implements: accept x iff (x n) mod 2^32 >= 2^32 mod n, position floor(x n / 2^32)
    for n in (3, 7, 10, 1000, 10326):
        x = np.r_[np.arange(0, 2**32, 2**32 // (3 * n + 5000), dtype=np.uint64), np.arange(2**32 - 50, 2**32, dtype=np.uint64)]
        m = x * np.uint64(n)
        acc = (m & np.uint64(0xFFFFFFFF)) >= np.uint64(2**32 % n)
        used, idx = _positions(x.astype(np.uint32), n, int(acc.sum()) // n)
        want = (m >> np.uint64(32))[acc][: idx.size]
        assert used > 0 and np.array_equal(idx.ravel(), want)
    # the rule is exactly uniform: the same algebra with 16-bit words, every word enumerated,
    # gives each position floor(2^16 / n) accepted words
    for n in (3, 5, 7, 12, 100, 1000):
        x = np.arange(2**16, dtype=np.uint64)
        m = x * np.uint64(n)
        acc = (m & np.uint64(0xFFFF)) >= np.uint64(2**16 % n)
        per = np.bincount((m >> np.uint64(16))[acc].astype(np.int64), minlength=n)
        assert (per == 2**16 // n).all()


def test_counts_are_multinomial_and_rows_sum_to_n():
    rng = np.random.default_rng(5)
    n, b = 7, 4000
    W = np.empty((b, n), dtype=np.float32)
    Wb = E._resample_block(rng, n, b, W)
    assert (Wb.sum(axis=1) == n).all()
    # positions uniform: chi-square over all b * n draws
    tot = Wb.sum(axis=0)
    assert stats.chisquare(tot).pvalue > 1e-4
    # one count is Binomial(n, 1/n): its mean and variance
    assert Wb[:, 0].mean() == pytest.approx(1.0, abs=0.05)
    assert Wb[:, 0].var() == pytest.approx(1 - 1 / n, abs=0.08)


def test_counting_and_positions_see_the_same_draws():
    n, b = 53, 9
    W = np.empty((b, n), dtype=np.float32)
    counted = E._resample_block(np.random.default_rng(3), n, b, W).copy()
    idx = E._resample_block(np.random.default_rng(3), n, b)
    assert np.array_equal(counted, np.stack([np.bincount(r, minlength=n) for r in idx.astype(np.int64)]))


def test_running_out_of_words_draws_more_with_the_same_stream(monkeypatch):
    n, b = 101, 5
    want = E._resample_block(np.random.default_rng(8), n, b)
    real = E._words
    calls = []

    def short(rng, n_, b_):
        calls.append(b_)
        if len(calls) == 1:  # the first block gets too few words
            return rng.bit_generator.random_raw(40).view(np.uint32)
        return real(rng, n_, b_)

    monkeypatch.setattr(E, "_words", short)
    got = E._resample_block(np.random.default_rng(8), n, b)
    assert len(calls) > 1 and np.array_equal(got, want)


def test_vectorised_equals_the_loop_exactly_for_outcomes_and_closely_for_costs():
    rng = np.random.default_rng(1)
    O = (rng.random((211, 6)) < 0.4).astype(float)
    cnt = rng.integers(0, 11, (211, 2)).astype(float)  # counts: integer, exact in float32 too
    cost = rng.gamma(2.0, 0.01, (211, 3))
    Z = np.column_stack([O, cnt, cost])
    a = E.bootstrap_means(Z, 700, seed=42, chunk=64)
    b = E.bootstrap_means_loop(Z, 700, seed=42, chunk=64)
    assert np.array_equal(a[:, :8], b[:, :8])
    np.testing.assert_allclose(a[:, 8:], b[:, 8:], rtol=1e-12, atol=1e-15)
    assert E._exact_in_float32(Z).tolist() == [True] * 8 + [False] * 3
    # same seed, same numbers; another chunk size draws other resamples with the same law
    assert np.array_equal(a, E.bootstrap_means(Z, 700, seed=42, chunk=64))
    c = E.bootstrap_means(Z, 4000, seed=1, chunk=128)
    assert c.mean(axis=0) == pytest.approx(Z.mean(axis=0), abs=4 * Z.std(axis=0).max() / np.sqrt(211 * 4000))
    assert c[:, 0].std() == pytest.approx(O[:, 0].std() / np.sqrt(211), rel=0.08)


def test_large_n_uses_smaller_blocks_with_the_same_numbers_as_the_loop():
    assert E._chunk_size(10, 128) == 128 and E._chunk_size(2**22, 128) == 2 and E._chunk_size(2**24, 128) == 1
    Z = (np.random.default_rng(2).random((300, 2)) < 0.5).astype(float)
    assert np.array_equal(E.bootstrap_means(Z, 50, seed=0, chunk=7), E.bootstrap_means_loop(Z, 50, seed=0, chunk=7))


def test_bad_columns_are_refused():
    with pytest.raises(ValueError, match="finite"):
        E.bootstrap_means(np.array([[0.0], [np.nan]]), 10)
    with pytest.raises(ValueError, match="non-empty"):
        E.bootstrap_means(np.zeros((0, 2)), 10)


def test_holm_equals_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from oraclegap.stats import multiplicity

    assert E.holm is multiplicity.holm  # the one Holm of the library (tests/test_multiplicity.py)
    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 17):
        p = rng.uniform(0, 0.2, m) ** rng.uniform(0.5, 2)
        p[: m // 3] = p[0]  # ties
        np.testing.assert_allclose(E.holm(p), multipletests(p, method="holm")[1], rtol=0, atol=1e-15)
    assert E.holm([]).size == 0
    with pytest.raises(ValueError, match="p-values"):
        E.holm([0.1, 1.5])
    assert np.isnan(E.holm([0.1, np.nan])[1])  # a missing p-value is not a test
