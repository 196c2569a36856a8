"""Do the members differ in overall quality? An exact permutation test on the spread of member
totals (the audit's ``quality-only`` evidence).

Statistic. With c_im the successes of member m on prompt i and T_m = sum_i c_im its total,
S = sum_m (T_m - mean_m T_m)^2, the spread of the members' totals.

Reference law. Within every prompt, the members' labels are permuted uniformly at random and
independently across prompts: the count vector (c_i1, ..., c_iM) of each prompt is kept as a set,
only which member holds which count is redrawn. If the members are exchangeable within each prompt
(identical members, or members whose per-prompt advantages carry no identity that persists across
prompts) the observed table is one draw of this law, so the Monte Carlo p-value
(1 + #{draws >= observed}) / (1 + B) is exact: P(p <= u) <= u for every u. Member quality (a member
better on most prompts) moves the totals apart consistently and is what the test has power
against; a specialization whose specialists are spread evenly over the members leaves the totals
equal and this test silent, which is what a *quality* test should do. Prompts whose counts are
all equal add nothing to the spread's variation and are skipped.

This differs from the re-deal null of L, which has no power against quality differences (arXiv
2609.32996 App. C), and from :func:`oraclegap.stats.nulls.member_spread`, the spread of coverage at
a threshold under the same reference law.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..._validate import as_rng, check_int
from .._streams import _int_below_exact, _stream_start
from .results import NullTest
from .sequential import SequentialStop
from .tables import _keys

__all__ = ["member_quality", "quality_spread"]


def quality_spread(totals: np.ndarray) -> np.ndarray:
    """S = sum_m (T_m - mean_m T_m)^2 of member totals [..., M]."""
    t = np.asarray(totals, dtype=np.float64)
    return ((t - t.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)


@njit(cache=True, parallel=True)
def _permuted_totals(c, key, start, n_draws):
    """Member totals of tables ``start`` .. ``start + n_draws - 1`` whose rows are permuted
    independently and uniformly (Fisher-Yates on SplitMix64 stream ``start + b`` for draw b):
    [n_draws, M]."""
    n, M = c.shape
    out = np.zeros((n_draws, M), dtype=np.int64)
    for b in prange(n_draws):
        s = _stream_start(key, start + b)
        row = np.empty(M, dtype=np.int64)
        for i in range(n):
            for m in range(M):
                row[m] = c[i, m]
            for m in range(M - 1, 0, -1):
                s, j = _int_below_exact(s, m + 1)
                tmp = row[m]
                row[m] = row[j]
                row[j] = tmp
            for m in range(M):
                out[b, m] += row[m]
    return out


def member_quality(x, *, n_draws: int = 999, seed=0,
                   sequential: SequentialStop | None = None) -> NullTest:
    """The exact label-permutation test of member quality (see the module docstring).

    ``x``: a Pool, verdicts bool[n, M, k] or counts int[n, M]; ``n_draws``: B permutations;
    ``seed``: an int or Generator (the key of the permutation streams); ``sequential``: a
    :class:`~oraclegap.stats.nulls.sequential.SequentialStop` (its ``alpha``; the test is a
    family of one): permutations in looks until "p <= alpha" is settled, at most ``n_draws``;
    permutation b is the same either way.
    Returns a :class:`NullTest` (statistic ``quality_spread``, null ``label-permutation``) with the
    plus-one p-value of the permutations taken."""
    if hasattr(x, "counts"):
        c = np.asarray(x.counts(), dtype=np.int64)
    else:
        a = np.asarray(x)
        c = a.sum(axis=2, dtype=np.int64) if a.ndim == 3 else a.astype(np.int64)
    if c.ndim != 2 or c.shape[1] < 2:
        raise ValueError(f"x must give counts [n, M] with M >= 2 members, got shape {c.shape}")
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    if sequential is not None and not isinstance(sequential, SequentialStop):
        raise TypeError(f"sequential must be a SequentialStop or None, "
                        f"got {type(sequential).__name__}")
    key, _ = _keys(as_rng(seed))
    obs = float(quality_spread(c.sum(axis=0)))
    moving = np.ascontiguousarray(c[(c != c[:, :1]).any(axis=1)])
    fixed = c.sum(axis=0) - moving.sum(axis=0)
    looks = [n_draws] if sequential is None else sequential.looks(n_draws)
    parts: list[np.ndarray] = []
    for start, end in zip([0] + looks[:-1], looks, strict=True):
        parts.append(quality_spread(_permuted_totals(moving, key, start, end - start) + fixed))
        if sequential is not None and end < n_draws:
            if sequential.decided(np.concatenate(parts), [obs], n_draws):
                break
    draws = np.concatenate(parts)
    return NullTest("quality_spread", float("nan"), "label-permutation", obs, draws, "plus-one",
                    float(draws.size))
