"""Complementary coverage F_b(S) on packed outcome bits: item i is bit i of a uint64 word, a set's
coverage is a bitwise OR of its members' words and a count is a popcount; F_b of one set and of
every subset of a small pool (the lattice)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._result import Result
from .inputs import outcome_matrix, resolve_anchor

__all__ = ["pack_bits", "popcount", "complementary_coverage", "CoverageLattice", "coverage_lattice"]


_POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def pack_bits(B) -> np.ndarray:
    """Pack a bool array [..., n] along its last axis into uint64 words [..., W], W = ceil(n / 64).

    Item i is bit i % 64 of word i // 64; padding bits are 0, so a popcount counts items.
    """
    B = np.asarray(B, dtype=bool)
    n = B.shape[-1]
    W = max(1, -(-n // 64))
    pad = W * 64 - n
    if pad:
        B = np.concatenate([B, np.zeros(B.shape[:-1] + (pad,), dtype=bool)], axis=-1)
    return np.ascontiguousarray(np.packbits(B, axis=-1, bitorder="little")).view("<u8")


def popcount(words) -> np.ndarray:
    """Number of set bits of uint64 words [..., W], summed over the last axis (int64 [...])."""
    w = np.asarray(words, dtype=np.uint64)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(w).sum(axis=-1, dtype=np.int64)
    b = _POP8[np.ascontiguousarray(w).view(np.uint8)]  # numpy < 2: byte lookup table
    return b.reshape(w.shape[:-1] + (-1,)).sum(axis=-1, dtype=np.int64)


def _targets(X: np.ndarray, anchor: int, rows=None) -> np.ndarray:
    """Packed indicator of the items to rescue: the anchor is wrong (within ``rows``)."""
    t = ~X[:, anchor]
    if rows is not None:
        t = t & _row_mask(rows, X.shape[0])
    return pack_bits(t)


def _row_mask(rows, n: int) -> np.ndarray:
    r = np.asarray(rows)
    if r.dtype == bool:
        if r.shape != (n,):
            raise ValueError(f"rows as a mask must have length n={n}, got shape {r.shape}")
        return r
    if r.size and (not np.issubdtype(r.dtype, np.integer) or r.min() < 0 or r.max() >= n):
        raise ValueError(f"rows must be a bool mask of length {n} or integer positions in [0, {n})")
    m = np.zeros(n, dtype=bool)
    m[r] = True
    return m


def _members(members, K: int, anchor: int) -> np.ndarray:
    m = np.unique(np.asarray(list(members), dtype=np.int64)) if len(members) else np.zeros(0, np.int64)
    if m.size and (m.min() < 0 or m.max() >= K):
        raise ValueError(f"members must be model indices in [0, {K})")
    if anchor in m:
        raise ValueError(f"members must not contain the anchor (index {anchor})")
    return m


# ====================================================================== F_b
def complementary_coverage(X, anchor, members, *, rows=None) -> float:
    """F_b(S): the share of items (of ``rows``, all by default) where the anchor b is wrong and at
    least one member of S is right. F_b(empty) = 0. ``X`` is bool[n, K] (or a k = 1 Pool)."""
    X, names = outcome_matrix(X)
    b = resolve_anchor(anchor, X, names)
    S = _members(members, X.shape[1], b)
    sub = X if rows is None else X[_row_mask(rows, X.shape[0])]
    if sub.shape[0] == 0:
        raise ValueError("rows selects no items")
    if S.size == 0:
        return 0.0
    return float((~sub[:, b] & sub[:, S].any(axis=1)).mean())


def _or_table(cols: np.ndarray) -> np.ndarray:
    """OR of member words for every subset of the rows of ``cols`` [k, W], indexed by bit mask [2^k, W]
    (built by doubling: one step per member, not per subset)."""
    k, W = cols.shape
    T = np.zeros((1 << k, W), dtype=np.uint64)
    for j in range(k):
        T[1 << j : 1 << (j + 1)] = T[: 1 << j] | cols[j]
    return T


def _mask_sizes(k: int) -> np.ndarray:
    m = np.arange(1 << k, dtype=np.uint64)
    return (np.bitwise_count(m) if hasattr(np, "bitwise_count") else _POP8[m.view(np.uint8)].reshape(-1, 8).sum(1)).astype(np.int64)


@dataclasses.dataclass(frozen=True, repr=False)
class CoverageLattice(Result):
    """F_b on every subset of the candidates (all models but the anchor), as integer counts.

    ``counts[mask]`` is the number of items where the anchor fails and some member of the
    subset encoded by ``mask`` (bit t = ``candidates[t]``) succeeds; F_b = counts / n.
    """

    anchor: int
    candidates: np.ndarray
    counts: np.ndarray
    n: int
    names: tuple

    @property
    def values(self) -> np.ndarray:
        return self.counts / self.n

    def members(self, mask: int) -> list[int]:
        return [int(self.candidates[t]) for t in range(len(self.candidates)) if mask >> t & 1]

    def optimum(self, size: int) -> tuple[int, int]:
        """(count, mask) of the best subset of exactly ``size`` candidates (ties: smallest mask)."""
        sizes = _mask_sizes(len(self.candidates))
        idx = np.flatnonzero(sizes == size)
        j = idx[np.argmax(self.counts[idx])]
        return int(self.counts[j]), int(j)

    def frame(self) -> pd.DataFrame:
        sizes = _mask_sizes(len(self.candidates))
        return pd.DataFrame(
            {
                "mask": np.arange(self.counts.size),
                "size": sizes,
                "members": [" + ".join(self.names[m] for m in self.members(i)) for i in range(self.counts.size)],
                "count": self.counts,
                "F_b": self.values,
            }
        )


def coverage_lattice(X, anchor="best", *, rows=None, max_candidates: int = 20) -> CoverageLattice:
    """F_b(S) for all 2^(K-1) subsets S of the candidates, by bit-mask enumeration (K - 1 <= max_candidates)."""
    X, names = outcome_matrix(X)
    n, K = X.shape
    if K - 1 > max_candidates:
        raise ValueError(f"the lattice has 2^{K - 1} subsets; at most max_candidates={max_candidates} candidates are enumerated")
    rmask = None if rows is None else _row_mask(rows, n)
    b = resolve_anchor(anchor, X, names, rmask)
    cand = np.array([j for j in range(K) if j != b], dtype=np.int64)
    cols = pack_bits(X[:, cand].T)
    T = _or_table(cols) & _targets(X, b, rmask)
    n_eval = n if rmask is None else int(rmask.sum())
    if n_eval == 0:
        raise ValueError("rows selects no items")
    return CoverageLattice(b, cand, popcount(T), n_eval, tuple(names))
