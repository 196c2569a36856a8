"""The prompt bootstrap of the library: means of prompt-resampled columns, computed exactly.

Estimand. For per-prompt columns Z[n, q] one resample draws n prompt positions uniformly with
replacement; with W_bi the number of times prompt i is drawn in resample b (a Multinomial(n; 1/n,
..., 1/n) vector) the replicate means are M_bj = sum_i W_bi Z_ij / n. Over resamples
E[M_bj] = mean_i Z_ij and Var[M_bj] = s_j^2 / n, with s_j^2 = mean_i (Z_ij - mean_i Z_ij)^2.
:func:`bootstrap_means` returns M[n_boot, q]; every column is resampled with the same W, so
differences and maxima of columns are paired.

Draws. The positions of resample b are the next n values of ``rng.integers(0, n)``: numpy's
bounded rule (Lemire's multiply-shift with rejection on the generator's 32-bit words), so a call
draws the resamples of ``rng.integers(0, n, size=(n_boot, n))``, row by row, and leaves ``rng``
where that call leaves it. They are counted straight into a block of counts by one compiled pass
over the bit generator's raw words (:func:`_count_words`) where its 32-bit words are the halves of
its 64-bit outputs (numpy's PCG64, PCG64DXSM, Philox and SFC64; checked once per type), otherwise
drawn by ``rng.integers`` and counted. ``chunk`` (resamples per block) changes neither the draws
nor, by the rule below, a single bit of the means.

Exactness rule. Every replicate sum sum_i W_bi Z_ij is computed exactly, so the means are a
function of the resample alone -- the same for any ``chunk``, BLAS library, thread count or
machine:

* a column of integers with n max_i |Z_ij| < 2^24 is multiplied in float32: every product and
  partial sum is an integer below 2^24, exact in any order;
* any other column is written in fixed point as two integer parts, Z_ij = (H_ij + L_ij 2^-P)
  2^-e_j + r_ij with |H_ij|, |L_ij| < 2^P, P = 53 - ceil(log2 n) and e_j set by max_i |Z_ij|; each
  part is multiplied in float64, where every partial sum is an integer below 2^53, and the two
  exact sums are joined once. The remainder is |r_ij| < 2^(1 - 2P) max_i |Z_ij| (2^-87 of the
  column's largest value at n = 500, 2^-65 at n = 10^6).

The mean is the exact sum divided by n. :func:`bootstrap_means_loop` is the definition, one
resample at a time (the tests' and benchmarks' reference). :func:`bootstrap_counts` returns the
counts W themselves, for statistics of a resample that are not column means.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._threads import limited_threads
from .._validate import as_rng, check_int

__all__ = ["bootstrap_means", "bootstrap_counts", "bootstrap_means_loop"]

_U32 = 1 << 32
#: Resamples x prompts of one block of counts (32 MiB of float64 at most): memory O(Z + block).
_BLOCK_CELLS = 1 << 22
#: Integers up to this bound, and sums of them, are exact in float32.
_F32_EXACT = 1 << 24
#: BLAS threads of the products (the means do not depend on it; one thread is fastest for these
#: thin products on a shared machine).
_BLAS_THREADS = 1


# ---------------------------------------------------------------------------- draws
@njit(cache=True, nogil=True, boundscheck=False)
def _count_words(u, n, W, t):  # pragma: no cover - compiled
    """Draws t, t + 1, ... of the block W (draw t is position t % n of resample t // n) from the
    32-bit words u by numpy's bounded rule for [0, n): word x gives position floor(x n / 2^32)
    unless (x n) mod 2^32 < 2^32 mod n, in which case x is skipped. Each resample's row of W is
    zeroed at its first draw and counts its positions. Returns (the next draw, words used): the
    next draw is b n when the block is full, else the words ran out."""
    b = W.shape[0]
    nn = np.uint64(n)
    thresh = np.uint64((4294967296 - n) % n)
    low = np.uint64(0xFFFFFFFF)
    shift = np.uint64(32)
    nw = u.shape[0]
    w = 0
    r = t // n
    j = t - r * n
    while r < b:
        if j == 0:
            for i in range(n):
                W[r, i] = 0
        while j < n:
            while True:
                if w >= nw:
                    return r * n + j, w
                m = np.uint64(u[w]) * nn
                w += 1
                if (m & low) >= thresh:
                    break
            W[r, m >> shift] += 1
            j += 1
        j = 0
        r += 1
    return b * n, w


@njit(cache=True, nogil=True, boundscheck=False)
def _count_positions(idx, W):  # pragma: no cover - compiled
    """W[r, i] = the number of times position i appears in row r of idx (one row at a time, so
    the row of counts being written stays in cache at any n)."""
    b, n = idx.shape
    for r in range(b):
        for i in range(W.shape[1]):
            W[r, i] = 0
        for j in range(n):
            W[r, idx[r, j]] += 1


_HALVES: dict = {}


def _words_are_halves(bg) -> bool:
    """Whether the bit generator's 32-bit draws are the low then the high half of its 64-bit raw
    outputs, with the pending half kept in its state as ``has_uint32`` / ``uinteger`` (numpy's
    64-bit generators). Checked once per type on a fresh instance."""
    kind = type(bg)
    if kind not in _HALVES:
        ok = False
        try:
            a, b = kind(20240611), kind(20240611)
            words = np.random.Generator(a).integers(0, _U32, size=5, dtype=np.uint64)
            raw = b.random_raw(3).view(np.uint32).astype(np.uint64)
            st = a.state
            ok = (isinstance(st, dict) and st.get("has_uint32") == 1
                  and np.array_equal(words, raw[:5]) and int(st.get("uinteger", -1)) == int(raw[5]))
        except Exception:  # a bit generator without a seed constructor or raw words
            ok = False
        _HALVES[kind] = ok
    return _HALVES[kind]


class _Draws:
    """The resamples of one call, block after block, from one generator: the words of its
    stream in order, the pending half-word carried between blocks and left in the generator's
    state at the end (:meth:`close`), as ``rng.integers(0, n, ...)`` leaves it."""

    def __init__(self, rng: np.random.Generator, n: int):
        self.rng, self.n = rng, n
        self.bg = rng.bit_generator
        self.fast = n < _U32 and _words_are_halves(self.bg)
        self.carry: list[int] = []
        self.high: int | None = None  # the high half of the last raw word drawn
        if self.fast:
            st = dict(self.bg.state)
            if st["has_uint32"]:
                self.carry = [int(st["uinteger"])]
                st["has_uint32"] = 0
                self.bg.state = st

    def fill(self, W: np.ndarray) -> None:
        """Count the next W.shape[0] resamples into W."""
        n = self.n
        if n == 1:  # numpy draws nothing for a single position
            W[:] = 1
            return
        if not self.fast:
            _count_positions(self.rng.integers(0, n, size=(W.shape[0], n)), W)
            return
        total, t = W.shape[0] * n, 0
        while t < total:
            pairs = max(0, (total - t - len(self.carry) + 1) // 2)
            raw = self.bg.random_raw(pairs).view(np.uint32)
            if raw.size:
                self.high = int(raw[-1])
            u = raw
            if self.carry:
                u = np.concatenate([np.asarray(self.carry, dtype=np.uint32), raw])
            t, used = _count_words(u, n, W, t)
            self.carry = [int(x) for x in u[used:]]  # at most one word once the block is full

    def close(self) -> None:
        """Leave the generator's state as numpy's 32-bit draws leave it: an unused half-word
        pending (``has_uint32``), else the last high half drawn in ``uinteger``."""
        if self.fast and (self.carry or self.high is not None):
            st = dict(self.bg.state)
            st["has_uint32"] = int(bool(self.carry))
            st["uinteger"] = self.carry[0] if self.carry else self.high
            self.bg.state = st
            self.carry, self.high = [], None


# ---------------------------------------------------------------------------- exact columns
def _check_columns(Z) -> np.ndarray:
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.ndim != 2 or Z.shape[0] == 0:
        raise ValueError(f"Z must be a non-empty [n_prompts, columns] array, got shape {Z.shape}")
    if not np.isfinite(Z).all():
        raise ValueError("Z must be finite (per-prompt outcome, score or cost columns)")
    return Z


def _check_counts(counts, n: int) -> np.ndarray | None:
    if counts is None:
        return None
    C = np.asarray(counts)
    if C.ndim != 2 or C.shape[0] != n:
        raise ValueError(
            f"counts must be a 2-D array with one row per prompt ({n}), got shape {C.shape}"
        )
    per = max(1, _BLOCK_CELLS // max(1, C.shape[1]))
    for i in range(0, n, per):  # in blocks of rows: no full-size temporary
        blk = C[i : i + per]
        if not np.isfinite(blk).all() or (blk < 0).any() or not np.array_equal(blk, np.floor(blk)):
            raise ValueError("counts must be nonnegative integers")
    return C


def _integer_columns(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(integer-valued, max |value|) of every column of A, in blocks of rows."""
    n, q = A.shape
    whole = np.ones(q, dtype=bool)
    top = np.zeros(q)
    per = max(1, _BLOCK_CELLS // max(1, q))
    for i in range(0, n, per):
        blk = A[i : i + per]
        whole &= (blk == np.trunc(blk)).all(axis=0)
        top = np.maximum(top, np.abs(blk).max(axis=0))
    return whole, top


class _Columns:
    """The columns of one call split by the exactness rule: the float32 integer columns, then the
    fixed-point parts of the others (H of every column, then L of those whose L is not zero),
    with what puts the means back in the callers' column order."""

    def __init__(self, sources: list[np.ndarray], n: int):
        self.n = n
        self.P = 53 - int(np.ceil(np.log2(n))) if n > 1 else 53
        pos32, parts32, fixed = [], [], []
        start = 0
        for A in sources:
            whole, top = _integer_columns(A)
            f32 = whole & (n * top < _F32_EXACT)
            idx32 = np.flatnonzero(f32)
            if idx32.size:
                parts32.append(
                    np.asarray(A if idx32.size == A.shape[1] else A[:, idx32], dtype=np.float32)
                )
                pos32.append(start + idx32)
            for j in np.flatnonzero(~f32):
                e = self.P - int(np.frexp(top[j])[1])  # |Z_ij| 2^e < 2^P
                z = np.ldexp(np.asarray(A[:, j], dtype=np.float64), e)
                H = np.trunc(z)
                fixed.append((start + j, e, H, np.trunc(np.ldexp(z - H, self.P))))
            start += A.shape[1]
        fixed.sort(key=lambda f: not f[3].any())  # the columns with a nonzero L first
        self.n_low = sum(bool(f[3].any()) for f in fixed)
        self.A32 = np.ascontiguousarray(
            np.column_stack(parts32)
            if len(parts32) > 1
            else parts32[0]
            if parts32
            else np.zeros((n, 0), np.float32)
        )
        self.A64 = np.ascontiguousarray(
            np.column_stack([f[2] for f in fixed] + [f[3] for f in fixed[: self.n_low]])
            if fixed
            else np.zeros((n, 0))
        )
        self.e = np.asarray([f[1] for f in fixed], dtype=np.int64)
        order = np.concatenate(pos32 + [np.asarray([f[0] for f in fixed], dtype=np.int64)])
        self.q = start
        self.back = None if np.array_equal(order, np.arange(start)) else np.argsort(order)

    def join(self, S32: np.ndarray, S64: np.ndarray) -> np.ndarray:
        """The means [B, q] from the exact sums of the float32 and the fixed-point parts."""
        m, q32 = self.e.size, S32.shape[1]
        out = np.empty((S32.shape[0], q32 + m))
        np.divide(S32, self.n, out=out[:, :q32], dtype=np.float64)
        if m:
            S = S64[:, :m]
            S[:, : self.n_low] += np.ldexp(S64[:, m:], -self.P)  # exact: a power-of-two scale
            out[:, q32:] = np.ldexp(S, -self.e) / self.n
        return out if self.back is None else np.take(out, self.back, axis=1)


# ---------------------------------------------------------------------------- the engine
def bootstrap_means(
    Z,
    n_boot: int = 2000,
    seed=0,
    *,
    counts=None,
    chunk: int = 256,
    progress: bool = False,
    looks=None,
    decided=None,
) -> np.ndarray:
    """Prompt-bootstrap means [n_boot, q] of the per-prompt columns Z[n, q] (a 1-d Z is one
    column): resample b's mean of column j is sum_i W_bi Z_ij / n, W_b the counts of n prompt
    positions drawn uniformly with replacement (module docstring: the draws and the exactness
    rule). ``seed``: an int, a sequence of ints or a ``numpy.random.Generator`` (advanced as
    ``rng.integers(0, n, size=(n_boot, n))`` advances it).

    ``counts`` (optional nonnegative integers [n, p]) are more columns, returned after Z's
    ([n_boot, q + p]), from the same resamples; they are read in their own dtype (a float32
    table of half-draw counts is used without a float64 copy). ``chunk`` resamples are counted
    and multiplied per block (fewer at large n, to hold a block of counts within 2^22 cells);
    it changes no number. ``progress`` shows a bar over the resamples.

    ``decided`` (optional, with ``looks``: increasing resample counts ending at ``n_boot``) stops
    the resampling early: after each look below ``n_boot`` it is called with the means so far
    [B, q + p] and the call returns those B rows when it answers true. They are the first B rows
    of the full-size call's means, bit for bit (the resamples are drawn in order), and the
    generator is left where they end.
    """
    Z = _check_columns(Z)
    n = Z.shape[0]
    C = _check_counts(counts, n)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    chunk = check_int(chunk, "chunk", minimum=1)
    rng = as_rng(seed)
    cols = _Columns([Z] if C is None else [Z, C], n)
    block = max(1, min(chunk, n_boot, _BLOCK_CELLS // n))
    f32 = n < _F32_EXACT  # counts of a resample are exact in float32 (below 2^24)
    W = np.empty((block, n), dtype=np.float32 if f32 else np.float64)
    W64 = np.empty((block, n)) if f32 and cols.A64.shape[1] else W
    S32 = np.empty((n_boot, cols.A32.shape[1]), dtype=np.float32 if f32 else np.float64)
    S64 = np.empty((n_boot, cols.A64.shape[1]))
    A32 = cols.A32 if f32 else cols.A32.astype(np.float64)
    marks = [n_boot] if decided is None else _check_looks(looks, n_boot)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=n_boot, desc="prompt bootstrap", leave=False)
    draws = _Draws(rng, n)
    s = 0
    try:
        with limited_threads(_BLAS_THREADS, "blas"):
            for mark in marks:
                while s < mark:
                    b = min(block, mark - s)
                    draws.fill(W[:b])
                    if A32.shape[1]:
                        np.matmul(W[:b], A32, out=S32[s : s + b])
                    if cols.A64.shape[1]:
                        if W64 is not W:
                            W64[:b] = W[:b]
                        np.matmul(W64[:b], cols.A64, out=S64[s : s + b])
                    s += b
                    if bar is not None:
                        bar.update(b)
                if mark < n_boot and decided is not None:  # join adds into S64: a copy
                    if decided(cols.join(S32[:s], S64[:s].copy())):
                        break
    finally:
        draws.close()
        if bar is not None:
            bar.close()
    return cols.join(S32[:s], S64[:s])


def _check_looks(looks, n_boot: int) -> list[int]:
    """The looks of a stopped bootstrap: positive, increasing, the last ``n_boot``."""
    marks = [int(x) for x in (looks if looks is not None else [n_boot])]
    steps = np.diff(marks)
    if not marks or marks[0] < 1 or marks[-1] != n_boot or (steps <= 0).any():
        raise ValueError(
            f"looks must be increasing resample counts ending at n_boot={n_boot}, got {marks}"
        )
    return marks


def bootstrap_counts(n: int, n_boot: int = 2000, seed=0) -> np.ndarray:
    """The resamples of :func:`bootstrap_means` as counts W[n_boot, n] (float64 integers): W_bi is
    the number of times prompt i is drawn in resample b, so that ``bootstrap_means(Z, n_boot,
    seed)`` is W Z / n from the same seed (exactly, for integer columns). For statistics of a
    resample that are not column means (a weighted AUROC or calibration error): resample b weights
    prompt i by W_bi. ``seed`` as in :func:`bootstrap_means`, which advances a generator the same
    way. Memory: the n_boot x n counts."""
    n = check_int(n, "n", minimum=1)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    out = np.empty((n_boot, n))
    block = max(1, min(n_boot, _BLOCK_CELLS // n))
    W = np.empty((block, n), dtype=np.float32 if n < _F32_EXACT else np.float64)
    draws = _Draws(as_rng(seed), n)
    try:
        for s in range(0, n_boot, block):
            b = min(block, n_boot - s)
            draws.fill(W[:b])
            out[s : s + b] = W[:b]
    finally:
        draws.close()
    return out


def bootstrap_means_loop(Z, n_boot: int = 2000, seed=0) -> np.ndarray:
    """The definition of :func:`bootstrap_means`, one resample at a time: positions
    ``rng.integers(0, n, size=n)``, then ``Z[positions].sum(axis=0) / n``. The same resamples;
    the same numbers bit for bit in integer columns (exact sums), to rounding in the others
    (this loop adds in draw order)."""
    Z = _check_columns(Z)
    n = Z.shape[0]
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    rng = as_rng(seed)
    out = np.empty((n_boot, Z.shape[1]))
    for b in range(n_boot):
        out[b] = Z[rng.integers(0, n, size=n)].sum(axis=0)
    return out / n
