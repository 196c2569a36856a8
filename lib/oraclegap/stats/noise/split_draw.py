"""Split-draw selection: the member chosen on some of a prompt's draws and scored on the others,
compiled on one 64-bit word per cell (the split-draw O_repro, best-of-K's commitment, and the
half-draw counts of the decomposition's best-member partner).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._validate import as_rng, check_int
from .inputs import _inputs, _tie_mean

# Cells of one block of work (prompts x members x splits or draws): about 32 MB of float64, so
# memory stays O(pool + block) at any n; every value is computed per prompt, so blocks change none.
_CELLS = 1 << 22

# With k <= 64 the draws of a cell are one 64-bit word and a half's successes one popcount; the
# kernels give, per prompt and split (or left-out draw), exactly the value the array code's
# _tie_mean gives (the tied members' scores added in member order, divided by their number).
_BITS = 64  # draws per cell the compiled path takes (one word)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@njit(cache=True, inline="always")
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit(cache=True, nogil=True)
def _pack_draws(v):  # pragma: no cover - compiled
    """The draws of each cell of verdicts v [n, M, k] (k <= 64) as one word: bit j = draw j."""
    n, M, k = v.shape
    out = np.zeros((n, M), np.uint64)
    for i in range(n):
        for m in range(M):
            w = np.uint64(0)
            for j in range(k):
                if v[i, m, j]:
                    w |= np.uint64(1) << np.uint64(j)
            out[i, m] = w
    return out


@njit(cache=True, nogil=True)
def _split_select(bits, c, masks, score_a, score_b, out):  # pragma: no cover - compiled
    """out[i, s] = 0.5 * (T_A + T_B) for prompt i and split s (half A = the draws set in
    masks[s]): T_A is the mean of score_b[successes on half B] over the members with the most
    successes on half A (ties split evenly), T_B the same with the halves swapped."""
    n, M = bits.shape
    S = masks.shape[0]
    ca = np.empty(M, np.int64)
    for i in range(n):
        for s in range(S):
            top_a = -1
            top_b = -1
            for m in range(M):
                a = _popcount(bits[i, m] & masks[s])
                ca[m] = a
                if a > top_a:
                    top_a = a
                if c[i, m] - a > top_b:
                    top_b = c[i, m] - a
            ta = 0.0
            tb = 0.0
            na = 0
            nb = 0
            for m in range(M):
                a = ca[m]
                b = c[i, m] - a
                if a == top_a:
                    ta += score_b[b]
                    na += 1
                if b == top_b:
                    tb += score_a[a]
                    nb += 1
            out[i, s] = 0.5 * (ta / na + tb / nb)


@njit(cache=True, nogil=True)
def _loo_select(v, c, out):  # pragma: no cover - compiled
    """out[i, j] = the share of right answers at draw j among the members with the most successes
    on the other k - 1 draws of prompt i (ties split evenly)."""
    n, M, k = v.shape
    for i in range(n):
        for j in range(k):
            top = -1
            for m in range(M):
                rest = c[i, m] - v[i, m, j]
                if rest > top:
                    top = rest
            t = 0.0
            nt = 0
            for m in range(M):
                if c[i, m] - v[i, m, j] == top:
                    t += 1.0 if v[i, m, j] else 0.0
                    nt += 1
            out[i, j] = t / nt


def _mask_words(mask: np.ndarray) -> np.ndarray:
    """Boolean split masks [S, k] as words (bit j = draw j in half A)."""
    return (mask.astype(np.uint64) << np.arange(mask.shape[1], dtype=np.uint64)).sum(
        axis=1, dtype=np.uint64
    )


def split_draw_repro(x, *, method: str = "loo", n_splits: int = 200, seed=0) -> np.ndarray:
    """Per-prompt split-draw estimates [n] of max_m p_im: select on some draws, score on the others.

    ``method="half"``: the draws of each prompt are split at random into halves A and B (the same
    positions for every member, so seed alignment is kept); the member with the highest rate on
    A is scored by its rate on B and vice versa; averaged over ``n_splits`` random splits.
    ``"loo"``: select on k - 1 draws, score the left-out draw, averaged over the k draws. Ties are
    split evenly. Because the scored draws are independent of the ones that chose the member,
    E[estimate_i] = E[p_{i, chosen}] <= max_m p_im: the estimate is biased *downward* (by the
    regret of choosing on fewer draws), whatever the dependence across members, while the
    plug-in max_m c_im/k is biased upward.
    """
    v, _, _, _ = _inputs(x, min_k=2)
    n, M, k = v.shape
    c = v.sum(axis=2, dtype=np.float64)
    if method == "loo":  # per prompt, in blocks of prompts (memory O(block))
        out = np.empty(n)
        per = max(1, _CELLS // (M * k))
        ci = c.astype(np.int64)
        for i0 in range(0, n, per):
            i1 = min(n, i0 + per)
            sel = np.empty((i1 - i0, k))
            _loo_select(np.ascontiguousarray(v[i0:i1]), ci[i0:i1], sel)
            out[i0:i1] = sel.mean(axis=1)
        return out
    if method != "half":
        raise ValueError(f"method must be 'loo' or 'half', got {method!r}")
    n_splits = check_int(n_splits, "n_splits", minimum=1)
    hA, hB = k // 2, k - k // 2
    rates_a, rates_b = np.arange(hA + 1) / hA, np.arange(hB + 1) / hB
    return _split_sums(v, c.astype(np.int64), n_splits, as_rng(seed), rates_a, rates_b) / n_splits


def _split_sums(
    v: np.ndarray, c: np.ndarray, n_splits: int, rng, score_a: np.ndarray, score_b: np.ndarray
) -> np.ndarray:
    """Per prompt, the sum over ``n_splits`` random half splits of 0.5 (T_A + T_B): the draws of
    every prompt are split into halves A (k // 2 positions, the same for every member) and B;
    T_A is the mean of score_b[successes on B] over the members with the most successes on A
    (ties split evenly), T_B the same with the halves swapped. ``c``: int64 successes [n, M];
    the splits are drawn from ``rng`` in blocks of 64, each as the first k // 2 positions of an
    argsort of uniforms."""
    n, M, k = v.shape
    hA = k // 2
    out = np.zeros(n)
    per = max(1, _CELLS // (M * 64))  # prompts per block
    words = _pack_draws(v) if k <= _BITS else None
    for start in range(0, n_splits, 64):  # blocks of splits bound the memory; vectorised within
        b = min(64, n_splits - start)
        maskA = rng.random((b, k)).argsort(axis=1) < hA  # [b, k]
        for i0 in range(0, n, per):
            i1 = min(n, i0 + per)
            if words is not None:  # compiled: the same values, one word per cell
                val = np.empty((i1 - i0, b))
                _split_select(words[i0:i1], c[i0:i1], _mask_words(maskA), score_a, score_b, val)
            else:  # successes on half A: one matrix product (sums of 0/1 terms, exact in any order)
                vf = v[i0:i1].reshape(-1, k).astype(np.float64)
                cA = (
                    np.rint(vf @ maskA.T.astype(np.float64)).astype(np.int64).reshape(i1 - i0, M, b)
                )
                cB = c[i0:i1, :, None] - cA
                val = 0.5 * (
                    _tie_mean(cA, score_b[cB], axis=1) + _tie_mean(cB, score_a[cA], axis=1)
                )
            out[i0:i1] += val.sum(axis=1)
    return out


def _half_counts(v: np.ndarray, maskA: np.ndarray) -> np.ndarray:
    """Successes of every member on each half of its draws: [n, 2*S*M], first the halves in
    ``maskA`` (bool [S, k]), then their complements, split by split. Whole numbers up to k, so
    float32 holds them exactly, and blocks of prompts change nothing."""
    n, M, k = v.shape
    S = maskA.shape[0]
    H = np.empty((n, 2 * S * M), dtype=np.float32)
    mA, mB = maskA.astype(np.float32), (~maskA).astype(np.float32)
    per = max(1, _CELLS // (M * k + 2 * S * M))
    for i0 in range(0, n, per):
        i1 = min(n, i0 + per)
        vf = v[i0:i1].astype(np.float32)
        H[i0:i1, : S * M] = np.einsum("imj,sj->ism", vf, mA).reshape(i1 - i0, S * M)
        H[i0:i1, S * M :] = np.einsum("imj,sj->ism", vf, mB).reshape(i1 - i0, S * M)
    return H
