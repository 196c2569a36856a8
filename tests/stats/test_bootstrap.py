"""The library's one prompt bootstrap (:mod:`oraclegap.stats.bootstrap`): replicate means with the
bootstrap's expectation and variance, numpy's draws and generator state for every bit generator,
the exactness rule (the same bits for any chunk and BLAS thread count; exact sums checked
against rational arithmetic), and the compiled bounded draws by hand."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from oraclegap.stats import bootstrap as B
from oraclegap.stats.bootstrap import bootstrap_counts, bootstrap_means, bootstrap_means_loop


def _columns(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Z with 0/1, small-count, float, negative and wide-range columns; integer counts C."""
    rng = np.random.default_rng(seed)
    Z = np.column_stack([
        rng.random(n) < 0.4,
        rng.integers(0, 11, n),
        rng.gamma(2.0, 0.01, n),
        -rng.random(n) * 1e-9,
        rng.standard_normal(n) * np.exp(rng.uniform(-30, 30, n)),
        np.full(n, 2.0**40),  # integers too large for float32 sums
    ]).astype(float)
    C = rng.integers(0, 9, (n, 4)).astype(np.float32)
    return Z, C


def _sums_by_numpy_draws(Z: np.ndarray, rng: np.random.Generator, n_boot: int) -> np.ndarray:
    """Exact replicate sums [n_boot, q] (as Fractions) of the resamples rng.integers draws."""
    n = Z.shape[0]
    idx = rng.integers(0, n, size=(n_boot, n))
    W = np.stack([np.bincount(r, minlength=n) for r in idx])
    Zf = [[Fraction(float(x)) for x in col] for col in Z.T]
    return np.array([[sum((int(w) * z for w, z in zip(Wr, col, strict=True) if w), Fraction(0))
                      for col in Zf] for Wr in W], dtype=object)


# ---------------------------------------------------------------------------- the estimand
def test_replicate_means_have_the_bootstrap_expectation_and_covariance():
    # fixed columns z: E[M_b] = mean z, Cov[M_b] = Cov_0(z) / n (population covariance, ddof 0)
    rng = np.random.default_rng(0)
    n, n_boot = 40, 40_000
    Z = np.column_stack(
        [rng.random(n) < 0.3, rng.gamma(2.0, 1.0, n), rng.integers(0, 7, n)]
    ).astype(float)
    M = bootstrap_means(Z, n_boot, seed=1)
    mu, cov = Z.mean(axis=0), np.cov(Z, rowvar=False, ddof=0) / n
    assert (np.abs(M.mean(axis=0) - mu) < 4 * np.sqrt(np.diag(cov) / n_boot)).all()
    # the variance of a variance estimate from 40,000 near-normal replicates: about 0.7% relative
    np.testing.assert_allclose(M.var(axis=0, ddof=1), np.diag(cov), rtol=0.05)
    np.testing.assert_allclose(np.cov(M, rowvar=False)[0, 1:], cov[0, 1:], rtol=0.1, atol=2e-5)


def test_counts_are_multinomial_and_rows_sum_to_n():
    n, b = 7, 4000
    W = np.empty((b, n), dtype=np.float32)
    draws = B._Draws(np.random.default_rng(5), n)
    draws.fill(W)
    assert (W.sum(axis=1) == n).all()
    assert stats.chisquare(W.sum(axis=0)).pvalue > 1e-4  # positions uniform over all b n draws
    assert W[:, 0].mean() == pytest.approx(1.0, abs=0.05)  # one count is Binomial(n, 1/n)
    assert W[:, 0].var() == pytest.approx(1 - 1 / n, abs=0.08)


# ---------------------------------------------------------------------------- draws and seeds
@pytest.mark.parametrize("kind", ["PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937"])
@pytest.mark.parametrize("pending", [0, 1])
@pytest.mark.parametrize("n", [1, 2, 53])
def test_resamples_are_numpys_draws_and_leave_the_generator_as_numpy_does(kind, pending, n):
    Z, _ = _columns(n, 3)
    g, h = (np.random.Generator(getattr(np.random, kind)(9)) for _ in range(2))
    for gen in (g, h):
        for _ in range(pending):  # an odd number of 32-bit words: half a raw word pending
            gen.integers(0, 5)
    got = bootstrap_means(Z, 37, g, chunk=5)
    exact = _sums_by_numpy_draws(Z, h, 37)
    ints = [0, 1, 5]
    assert np.array_equal(got[:, ints], np.array(exact[:, ints] / n, dtype=float))
    assert repr(g.bit_generator.state) == repr(h.bit_generator.state)
    assert g.random() == h.random()
    assert B._words_are_halves(g.bit_generator) == (kind != "MT19937")


def test_same_seed_same_output_and_the_loop_reference():
    Z, C = _columns(211, 1)
    a = bootstrap_means(Z, 300, seed=5, counts=C)
    assert a.shape == (300, 10)
    assert np.array_equal(a, bootstrap_means(Z, 300, seed=5, counts=C))
    assert not np.array_equal(a, bootstrap_means(Z, 300, seed=6, counts=C))
    loop = bootstrap_means_loop(np.column_stack([Z, C]), 300, seed=5)
    ints = [0, 1, 5, 6, 7, 8, 9]
    assert np.array_equal(a[:, ints], loop[:, ints])
    # the loop adds in draw order, rounding at every step: within n eps of the largest value
    scale = np.abs(np.column_stack([Z, C])).max(axis=0)
    assert (np.abs(a - loop) <= 211 * np.finfo(float).eps * scale).all()
    # counts and the same columns passed as Z: the same numbers
    assert np.array_equal(a[:, 6:], bootstrap_means(C.astype(np.float64), 300, seed=5))


@pytest.mark.parametrize("kind", ["PCG64", "MT19937"])
def test_counts_are_the_resamples_of_the_means(kind, monkeypatch):
    # the counts of numpy's rows of positions, W Z / n = the means of integer columns, the
    # generator left where bootstrap_means leaves it; blocks of counts change nothing
    n, n_boot = 61, 45
    Z, C = _columns(n, 4)
    g, h, r = (np.random.Generator(getattr(np.random, kind)(2)) for _ in range(3))
    W = bootstrap_counts(n, n_boot, g)
    idx = r.integers(0, n, size=(n_boot, n))
    assert W.dtype == np.float64 and W.shape == (n_boot, n)
    assert np.array_equal(W, np.stack([np.bincount(row, minlength=n) for row in idx]))
    ints = np.column_stack([Z[:, [0, 1]], C])
    assert np.array_equal(bootstrap_means(ints, n_boot, h), W @ ints / n)
    assert repr(g.bit_generator.state) == repr(h.bit_generator.state)
    whole = bootstrap_counts(n, n_boot, seed=2)
    monkeypatch.setattr(B, "_BLOCK_CELLS", n * 4)  # blocks of 4 resamples
    assert np.array_equal(bootstrap_counts(n, n_boot, seed=2), whole)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_counts(n, 0)
    with pytest.raises(ValueError, match="n must"):
        bootstrap_counts(0, 10)


def test_one_prompt_draws_nothing():
    g = np.random.default_rng(4)
    before = repr(g.bit_generator.state)
    assert np.array_equal(bootstrap_means([[0.25, 3.0]], 6, g), np.tile([0.25, 3.0], (6, 1)))
    assert repr(g.bit_generator.state) == before


# ---------------------------------------------------------------------------- the exactness rule
def test_chunk_sizes_and_blocks_change_no_bit(monkeypatch):
    # a block of one resample is a matrix-vector product in BLAS, which rounds float64 sums in
    # another order than a block of many: only exact sums make these equal bit for bit
    Z, C = _columns(301, 2)
    ref = bootstrap_means(Z, 130, seed=7, counts=C)
    for chunk in (1, 2, 3, 7, 64, 129, 5000):
        assert np.array_equal(bootstrap_means(Z, 130, seed=7, counts=C, chunk=chunk), ref), chunk
    monkeypatch.setattr(B, "_BLOCK_CELLS", 301 * 3)  # the memory cap: blocks of 3 resamples
    assert np.array_equal(bootstrap_means(Z, 130, seed=7, counts=C), ref)


def test_blas_thread_count_changes_no_bit(monkeypatch):
    Z, C = _columns(2000, 4)
    one = bootstrap_means(Z, 256, seed=8, counts=C, chunk=256)
    monkeypatch.setattr(B, "_BLAS_THREADS", 2)
    assert np.array_equal(bootstrap_means(Z, 256, seed=8, counts=C, chunk=256), one)


def test_limited_threads_sets_the_limit_and_restores_it(monkeypatch):
    # the one thread limiter of the library (the bootstrap's BLAS products, the routers' fits)
    import sys
    import types

    from threadpoolctl import threadpool_info, threadpool_limits

    from oraclegap import _threads

    def blas():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    with threadpool_limits(2):
        outer = blas()
        assert outer and max(outer) == 2
        with _threads.limited_threads(1, "blas"):
            assert blas() == [1] * len(outer)
        assert blas() == outer
    # the scan of the loaded libraries is kept until a module is imported
    first = _threads._controller()
    assert _threads._controller() is first
    monkeypatch.setitem(sys.modules, "oraclegap_test_new_module", types.ModuleType("m"))
    assert _threads._controller() is not first


def test_sums_are_exact_and_means_correctly_rounded_from_them():
    n = 50
    Z, _ = _columns(n, 6)
    got = bootstrap_means(Z, 20, seed=11)
    exact = _sums_by_numpy_draws(Z, np.random.default_rng(11), 20)
    P = 53 - int(np.ceil(np.log2(n)))
    for j in range(Z.shape[1]):
        want = np.array([float(s / n) for s in exact[:, j]])  # the exact mean, rounded once
        if j in (0, 1, 5):  # integer columns: the correctly rounded mean
            assert np.array_equal(got[:, j], want), j
        else:  # fixed point: two roundings and a remainder below 2^(1 - 2P) max |Z_j|
            tol = 2 * np.spacing(np.abs(want)) + 2.0 ** (1 - 2 * P) * np.abs(Z[:, j]).max()
            assert (np.abs(got[:, j] - want) <= tol).all(), j


# ---------------------------------------------------------------------------- the compiled draws
def test_bounded_rule_by_hand():
    # n = 3: 2^32 mod 3 = 1, so a word x is rejected exactly when (3x) mod 2^32 = 0, i.e. x = 0
    u = np.array([0, 1, 2**32 - 1, 1431655766], dtype=np.uint32)  # rejected, then 0, 2, 1
    W = np.full((1, 3), 9.0, dtype=np.float32)
    assert B._count_words(u, 3, W, 0) == (3, 4)
    assert W.tolist() == [[1.0, 1.0, 1.0]]
    # too few words: the kernel says where it stopped instead of inventing draws, and goes on
    W = np.full((2, 3), 9.0, dtype=np.float32)
    assert B._count_words(u[:3], 3, W, 0) == (2, 3)
    assert B._count_words(np.array([1431655766, 1, 1, 2**32 - 1], dtype=np.uint32), 3, W, 2) == (
        6,
        4,
    )
    assert W.tolist() == [[1.0, 1.0, 1.0], [2.0, 0.0, 1.0]]


def test_bounded_rule_is_numpys_and_exactly_uniform():
    for n in (3, 7, 10, 1000, 10326):
        x = np.r_[
            np.arange(0, 2**32, 2**32 // (3 * n + 5000), dtype=np.uint64),
            np.arange(2**32 - 50, 2**32, dtype=np.uint64),
        ]
        m = x * np.uint64(n)
        acc = (m & np.uint64(0xFFFFFFFF)) >= np.uint64(2**32 % n)
        b = int(acc.sum()) // n
        W = np.empty((b, n))
        t, used = B._count_words(x.astype(np.uint32), n, W, 0)
        want = (m >> np.uint64(32))[acc][: b * n].astype(np.int64).reshape(b, n)
        assert t == b * n and used > 0
        assert np.array_equal(W, np.stack([np.bincount(r, minlength=n) for r in want]))
    # the same algebra with 16-bit words, every word enumerated: each position gets
    # floor(2^16 / n) accepted words
    for n in (3, 5, 7, 12, 100, 1000):
        x = np.arange(2**16, dtype=np.uint64)
        m = x * np.uint64(n)
        acc = (m & np.uint64(0xFFFF)) >= np.uint64(2**16 % n)
        per = np.bincount((m >> np.uint64(16))[acc].astype(np.int64), minlength=n)
        assert (per == 2**16 // n).all()


def test_running_out_of_words_draws_more_of_the_same_stream(monkeypatch):
    Z, _ = _columns(101, 5)
    want = bootstrap_means(Z, 9, seed=8, chunk=4)
    real = B._count_words
    calls = []

    def short(u, n, W, t):  # at most five words a call, as if rejections had used them up
        calls.append(t)
        return real(u[:5], n, W, t)

    monkeypatch.setattr(B, "_count_words", short)
    assert np.array_equal(bootstrap_means(Z, 9, seed=8, chunk=4), want)
    assert len(calls) > 9 * 101 // 5


# ---------------------------------------------------------------------------- inputs
def test_bad_inputs_are_refused():
    Z = np.zeros((4, 2))
    with pytest.raises(ValueError, match="finite"):
        bootstrap_means(np.array([[0.0], [np.nan]]), 10)
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_means(np.zeros((0, 2)), 10)
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_means(np.zeros((2, 2, 2)), 10)
    C = np.ones((4, 2))
    for bad, match in (
        (-C, "nonnegative integers"),
        (C + 0.5, "nonnegative integers"),
        (C[:-1], "one row per prompt"),
        (C[:, 0], "2-D"),
    ):
        with pytest.raises(ValueError, match=match):
            bootstrap_means(Z, 10, counts=bad)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_means(Z, 0)
    with pytest.raises(ValueError, match="chunk"):
        bootstrap_means(Z, 10, chunk=0)
    with pytest.raises(ValueError, match="seed"):
        bootstrap_means(Z, 10, seed=-1)
