"""The within-cell permutation null of paper 001's checks, compiled: each cell's successes on a
uniformly random subset of its draw positions from counter-based streams, summarised without
storing the permuted verdicts, and the draw statistics the checks compare with it.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._streams import _int_below_exact, _stream_start


def _poisson_binomial(p: np.ndarray) -> np.ndarray:
    """Law of the number of successes of independent Bernoulli(p[i, m]) over m: [n, M + 1]."""
    n, M = p.shape
    out = np.zeros((n, M + 1))
    out[:, 0] = 1.0
    for m in range(M):  # M convolutions (members, not draws)
        q = p[:, m : m + 1]
        nxt = out * (1 - q)
        nxt[:, 1:] += out[:, :-1] * q
        out = nxt
    return out


def _draw_stats(v: np.ndarray) -> np.ndarray:
    """[..., 3] statistics of verdicts [..., n, M, k]: dispersion index, union rate, known-p TV.

    * dispersion: sum_m sum_j (T_mj - mean_j T_mj)^2 / (k sum_{i,m} q_im (1 - q_im)), with
      T_mj = sum_i R_imj the successes of member m at draw position j and q = c/k; its mean is 1
      when the draws of every cell are exchangeable (positions are interchangeable), above 1 when
      some draw positions succeed more than others across prompts;
    * union: mean_{i,j} max_m R_imj (the seed-aligned single-draw oracle);
    * TV: total variation between the pooled law of S_ij = sum_m R_imj (members right at draw j)
      and the mixture over prompts of the Poisson-binomial law that independent members with the
      cells' rates q_im give.
    """
    n, M, k = v.shape[-3:]
    q = v.sum(axis=-1, dtype=np.float64) / k  # sums in float64 without a float copy of v
    T = v.sum(axis=-3, dtype=np.float64)  # [..., M, k]
    ss = ((T - T.mean(axis=-1, keepdims=True)) ** 2).sum(axis=(-2, -1))
    den = k * (q * (1 - q)).sum(axis=(-2, -1))
    disp = np.where(den > 0, ss / np.where(den > 0, den, 1.0), np.nan)
    union = v.any(axis=-2).mean(axis=(-2, -1))
    S = v.sum(axis=-2)  # [..., n, k]
    lead = S.shape[:-2]
    Sf = S.reshape((-1, n * k))
    obs = np.stack([np.bincount(row, minlength=M + 1) for row in Sf]) / (
        n * k
    )  # loop over permutations only
    pb = np.stack([_poisson_binomial(qq).mean(axis=0) for qq in q.reshape((-1, n, M))])
    tv = 0.5 * np.abs(obs - pb).sum(axis=-1)
    return np.stack(
        [np.asarray(disp).reshape(-1), np.asarray(union).reshape(-1), tv], axis=-1
    ).reshape(lead + (3,))


# ------------------------------------------------------------------------- within-cell permutations
# The permutation null of 001's checks reorders the k draws of every cell at random. A uniformly
# random reordering of a cell with c successes puts them on a uniformly random c-subset of the k
# positions, whatever their order before, so the null needs only the counts c_im and one random
# subset per cell (none for c = 0 or c = k, whose every order is the same). The subsets come from
# a counter-based stream: prompt i of permutation b (of n prompts) draws from the SplitMix64
# stream b n + i under one key (:mod:`oraclegap.stats._streams`), so every permutation is the
# same on any number of threads and in any block of permutations, and no [B, n, M, k] array of
# uniforms is drawn or stored (at 1e6 x 10 x 16 such an array takes 1.3 GB per permutation).


@njit(cache=True, inline="always")
def _random_subset(state, s, k, mark, chosen):
    """Floyd's algorithm: a uniformly random s-subset of the positions 0..k-1 written to
    chosen[:s] and marked in mark (which must be all False before; the caller clears it), and
    the next state. For j = k - s .. k - 1 it adds a uniform t in [0, j], or j when t is taken."""
    for r in range(s):
        j = k - s + r
        state, t = _int_below_exact(state, j + 1)
        if mark[t]:
            t = j
        mark[t] = True
        chosen[r] = t
    return state


@njit(cache=True, nogil=True)
def _permuted_verdicts(c, k, key, start, n_perm):  # pragma: no cover - compiled
    """bool [n_perm, n, M, k]: permutations start .. start + n_perm - 1 of the cells with counts
    c [n, M], as :func:`_permuted_counts` summarises them: cell (i, m) of permutation b has its
    c_im successes on a uniformly random subset of the k positions (:func:`_random_subset` picks
    min(c, k - c) positions: the successes, or the failures). For tests and small pools."""
    n, M = c.shape
    out = np.zeros((n_perm, n, M, k), np.bool_)
    mark = np.zeros(k, np.bool_)
    chosen = np.empty(k, np.int64)
    for b in range(n_perm):
        for i in range(n):
            state = _stream_start(key, (start + b) * n + i)
            for m in range(M):
                cim = c[i, m]
                if cim == k:
                    out[b, i, m, :] = True
                elif cim > 0:
                    s = min(cim, k - cim)
                    state = _random_subset(state, s, k, mark, chosen)
                    for j in range(k):
                        out[b, i, m, j] = mark[j] == (s == cim)
                    for r in range(s):
                        mark[chosen[r]] = False
    return out


@njit(cache=True, nogil=True, parallel=True)
def _permuted_counts(c, k, key, start, n_perm, chunk):  # pragma: no cover - compiled
    """Integer summaries of permutations start .. start + n_perm - 1 of the cells with counts
    c [n, M] (the arrangements :func:`_permuted_verdicts` gives): per permutation the
    draw-position totals T [B, M, k], the number of (prompt, draw) pairs with some member right
    [B] and the counts of prompt-draws with s = 0..M members right [B, M + 1]. Prompts are split
    into chunks summed in integers, so the result is the same for any thread count."""
    n, M = c.shape
    n_chunks = (n + chunk - 1) // chunk
    T = np.zeros((n_perm, n_chunks, M, k), np.int64)
    U = np.zeros((n_perm, n_chunks), np.int64)
    H = np.zeros((n_perm, n_chunks, M + 1), np.int64)
    for q in prange(n_chunks * n_perm):
        b, ch = q // n_chunks, q % n_chunks
        S = np.empty(k, np.int64)
        mark = np.zeros(k, np.bool_)
        chosen = np.empty(k, np.int64)
        for i in range(ch * chunk, min(n, (ch + 1) * chunk)):
            S[:] = 0
            state = _stream_start(key, (start + b) * n + i)
            for m in range(M):
                cim = c[i, m]
                if cim == 0:
                    continue
                if cim == k:
                    for j in range(k):
                        T[b, ch, m, j] += 1
                        S[j] += 1
                    continue
                s = min(cim, k - cim)
                state = _random_subset(state, s, k, mark, chosen)
                if s == cim:  # the chosen positions are the successes
                    for r in range(s):
                        T[b, ch, m, chosen[r]] += 1
                        S[chosen[r]] += 1
                else:  # the chosen positions are the failures
                    for j in range(k):
                        if not mark[j]:
                            T[b, ch, m, j] += 1
                            S[j] += 1
                for r in range(s):
                    mark[chosen[r]] = False
            for j in range(k):
                H[b, ch, S[j]] += 1
                if S[j] > 0:
                    U[b, ch] += 1
    return T.sum(axis=1), U.sum(axis=1), H.sum(axis=1)


def _permuted_stats(
    c: np.ndarray, k: int, key, start: int, n_perm: int, pb: np.ndarray, den: np.ndarray
) -> np.ndarray:
    """:func:`_draw_stats` of permutations start .. start + n_perm - 1 of the cells with counts
    c [n, M] (``_draw_stats(_permuted_verdicts(c, k, key, start, n_perm))``), computed from
    integer counts: the cell rates q, the denominator ``den`` and the Poisson-binomial law
    ``pb`` do not change under a within-cell reordering and are computed once. The kernel runs
    on blocks of permutations that bound its per-chunk integer summaries (a permutation's values
    do not depend on its block)."""
    n, M = c.shape
    chunk = max(1, n // 64)
    n_chunks = (n + chunk - 1) // chunk
    block = max(1, int(4e6 // (n_chunks * M * k)))
    key = np.uint64(key)
    out = []
    for b0 in range(start, start + n_perm, block):
        Ti, Ui, Hi = _permuted_counts(c, k, key, b0, min(block, start + n_perm - b0), chunk)
        T = Ti.astype(np.float64)  # [B, M, k], as vf.sum(axis=-3) gives it
        ss = ((T - T.mean(axis=-1, keepdims=True)) ** 2).sum(axis=(-2, -1))
        disp = np.where(den > 0, ss / np.where(den > 0, den, 1.0), np.nan)
        union = Ui.astype(np.float64) / (n * k)
        tv = 0.5 * np.abs(Hi / (n * k) - pb).sum(axis=-1)
        out.append(np.stack([disp, union, tv], axis=-1))
    return np.concatenate(out)
