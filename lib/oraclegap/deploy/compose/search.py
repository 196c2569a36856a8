"""Searching for the pool of size s with the largest F_b: the greedy pool (plain, or lazy with a heap
of stale gains) with its online upper bound, and the exhaustive optimum (enumeration of every
subset as bit masks where feasible, else best-first branch and bound over marginal gains within a
node budget, else an upper bound from the greedy trace)."""

from __future__ import annotations

import dataclasses
import heapq
import math

import numpy as np
import pandas as pd

from ..._result import Result
from ..._validate import check_int
from .coverage import _row_mask, _targets, pack_bits, popcount
from .inputs import check_size, outcome_matrix, resolve_anchor

__all__ = ["GREEDY_BOUND", "GreedyPool", "greedy_pool", "Optimum", "exhaustive_pool",
           "enumeration_cost"]

#: The greedy guarantee of Thm 8: F_b(S_greedy) >= (1 - 1/e) max_{|S| <= s} F_b(S).
GREEDY_BOUND = 1.0 - 1.0 / math.e

_DEFAULT_MAX_SUBSETS = 200_000
_CHUNK_WORDS = 1 << 22  # temporaries of at most ~32 MB


# ====================================================================== greedy
@dataclasses.dataclass(frozen=True, repr=False)
class GreedyPool(Result):
    """The greedy pool: members in the order added, each one's marginal gain (item count), F_b after
    each step, and ``evaluations``, the number of marginal-gain evaluations F_b(S + j) - F_b(S)
    the algorithm needs. Plain greedy evaluates every candidate not yet chosen once per step:
    sum_{t=0}^{s-1} (K - 1 - t) for s members from K - 1 candidates (members already chosen are
    not re-evaluated; the vectorised implementation computes a whole step's gains at once, but
    the count is the algorithm's). Lazy greedy: the K - 1 initial gains plus every
    re-evaluation of the heap's top (at least one per step)."""

    anchor: int
    members: tuple
    gains: np.ndarray
    n: int
    names: tuple
    evaluations: int
    lazy: bool
    upper: np.ndarray  # online upper bound on max_{|S|<=s} F_b for s = 1..len(members) (counts)

    @property
    def values(self) -> np.ndarray:
        return np.cumsum(self.gains) / self.n

    @property
    def value(self) -> float:
        return float(self.gains.sum() / self.n)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "size": np.arange(1, len(self.members) + 1),
                "added": [self.names[m] for m in self.members],
                "gain": self.gains / self.n,
                "F_b": self.values,
                "upper_bound": np.minimum(self.upper / self.n, self.values / GREEDY_BOUND),
            }
        )


def _greedy_core(cols: np.ndarray, Z: np.ndarray, anchors: np.ndarray, smax: int):
    """Greedy for F instances at once. cols uint64[K, W]; Z uint64[F, W] items to rescue; anchors int[F].

    Returns order int[F, smax], gains int[F, smax] and ub int[F, smax]: the online bound
    OPT_s <= min_t [F(S_t) + sum of the s largest marginal gains wrt S_t] (submodularity).
    Ties go to the lowest index.
    """
    F, W = Z.shape
    K = cols.shape[0]
    rows = np.arange(F)
    cov = np.zeros_like(Z)
    avail = np.ones((F, K), dtype=bool)
    avail[rows, anchors] = False
    order = np.empty((F, smax), dtype=np.int64)
    gains = np.empty((F, smax), dtype=np.int64)
    ub = np.full((F, smax), np.iinfo(np.int64).max, dtype=np.int64)
    value = np.zeros(F, dtype=np.int64)
    for t in range(smax + 1):
        g = popcount(cols[None, :, :] & (Z & ~cov)[:, None, :])
        g = np.where(avail, g, -1)
        top = -np.sort(-np.maximum(g, 0), axis=1)
        cum = np.cumsum(top, axis=1)
        if cum.shape[1] < smax:
            cum = np.concatenate([cum, np.repeat(cum[:, -1:], smax - cum.shape[1], axis=1)], axis=1)
        ub = np.minimum(ub, value[:, None] + cum[:, :smax])
        if t == smax:
            break
        j = np.argmax(g, axis=1)
        order[:, t] = j
        gains[:, t] = g[rows, j]
        value += gains[:, t]
        avail[rows, j] = False
        cov |= cols[j] & Z
    return order, gains, ub


def greedy_pool(X, anchor="best", size=None, *, rows=None, lazy: bool = False) -> GreedyPool:
    """Greedy complementary coverage: starting from the empty set, repeatedly add the candidate with
    the largest marginal gain F_b(S + j) - F_b(S) (ties: lowest index) until ``size`` members
    (default K - 1). ``lazy=True`` keeps stale gains in a heap and re-evaluates only the top
    (Minoux's accelerated greedy; identical result, fewer evaluations on large pools).
    Thm 8: F_b(result) >= (1 - 1/e) max_{|S| <= size} F_b(S)."""
    X, names = outcome_matrix(X)
    n, K = X.shape
    rmask = None if rows is None else _row_mask(rows, n)
    b = resolve_anchor(anchor, X, names, rmask)
    s = K - 1 if size is None else check_size(size, K)
    n_eval = n if rmask is None else int(rmask.sum())
    if n_eval == 0:
        raise ValueError("rows selects no items")
    cols = pack_bits(X.T)
    Z = _targets(X, b, rmask)
    if not lazy:
        order, gains, ub = _greedy_core(cols, Z[None], np.array([b]), s)
        evals = s * (K - 1) - s * (s - 1) // 2  # sum_{t<s} (K - 1 - t): the candidates left at step t
        return GreedyPool(b, tuple(int(j) for j in order[0]), gains[0], n_eval, tuple(names), evals, False, ub[0])
    cand = [j for j in range(K) if j != b]
    g0 = popcount(cols[cand] & Z)
    heap = [(-int(g), j) for g, j in zip(g0, cand, strict=True)]
    heapq.heapify(heap)
    evals = len(cand)
    cov = np.zeros_like(Z)
    members: list[int] = []
    gains = []
    while len(members) < s:
        _, j = heapq.heappop(heap)
        g = int(popcount(cols[j] & Z & ~cov))
        evals += 1
        if not heap or (-g, j) <= heap[0]:
            members.append(j)
            gains.append(g)
            cov |= cols[j] & Z
        else:
            heapq.heappush(heap, (-g, j))
    gains = np.array(gains, dtype=np.int64)
    # the online bound needs all marginal gains at each prefix; the (1 - 1/e) certificate does not
    ub = np.ceil(np.cumsum(gains) / GREEDY_BOUND - 1e-9).astype(np.int64)
    return GreedyPool(b, tuple(members), gains, n_eval, tuple(names), evals, True, ub)


# ====================================================================== exhaustive
@dataclasses.dataclass(frozen=True, repr=False)
class Optimum(Result):
    """max_{|S| = size} F_b(S): exact (``method`` "enumeration" or "branch-and-bound") or, when neither
    finished, the best set found with an upper bound on the optimum (``exact`` False)."""

    _repr_fields = ("value", "members", "exact", "upper_value", "size", "method", "count", "n",
                    "evaluated")

    size: int
    members: tuple
    count: int
    upper: int
    n: int
    exact: bool
    method: str
    evaluated: int

    @property
    def value(self) -> float:
        return self.count / self.n

    @property
    def upper_value(self) -> float:
        return self.upper / self.n

    def frame(self) -> pd.DataFrame:
        """One row: the size, the members, F_b (``value``, ``count`` of ``n``), its upper bound,
        whether it is exact, the method and the sets evaluated."""
        return pd.DataFrame([{"size": self.size, "members": list(self.members), "value": self.value,
                              "count": self.count, "n": self.n, "upper_value": self.upper_value,
                              "exact": self.exact, "method": self.method, "evaluated": self.evaluated}])


def _n_subsets(K: int, smax: int) -> int:
    return sum(math.comb(K, t) for t in range(1, smax + 1))


def _extend(combos: np.ndarray, ors: np.ndarray, cols: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray]:
    """All (s+1)-subsets (lexicographic) from all s-subsets, with their OR words, vectorised."""
    last = combos[:, -1]
    reps = K - 1 - last
    parent = np.repeat(np.arange(combos.shape[0]), reps)
    start = np.repeat(np.cumsum(reps) - reps, reps)
    nxt = np.repeat(last + 1, reps) + (np.arange(parent.size) - start)
    return np.column_stack([combos[parent], nxt]), ors[parent] | cols[nxt]


def _subsets_by_size(cols: np.ndarray, smax: int):
    """Yield (s, combos int[C, s], ors uint64[C, W]) for s = 1..smax over all K rows of ``cols``."""
    K = cols.shape[0]
    combos = np.arange(K, dtype=np.int64)[:, None]
    ors = cols.copy()
    for s in range(1, smax + 1):
        if s > 1:
            combos, ors = _extend(combos, ors, cols, K)
        yield s, combos, ors


def _counts_chunked(ors: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """popcount(ors[c] & Z[f]) for all f, c: ors [C, W], Z [F, W] -> int64 [F, C], in bounded chunks."""
    F, W = Z.shape
    C = ors.shape[0]
    out = np.empty((F, C), dtype=np.int64)
    step = max(1, _CHUNK_WORDS // max(1, F * W))
    for a in range(0, C, step):
        out[:, a : a + step] = popcount(ors[None, a : a + step] & Z[:, None, :])
    return out


def _branch_and_bound(cols, Z, b, s, incumbent_set, incumbent, max_nodes):
    """Best-first branch and bound for max_{|S| <= s} F_b(S); bound = F(S) + top-(s - |S|) marginal gains
    among the undecided candidates (valid by submodularity). Returns (count, members, upper, exact, nodes)."""
    K = cols.shape[0]
    cand = np.array([j for j in range(K) if j != b], dtype=np.int64)
    g0 = popcount(cols[cand] & Z)
    order = cand[np.lexsort((cand, -g0))]
    best_set, best = tuple(incumbent_set), int(incumbent)
    heap: list[tuple[int, int, tuple[int, ...], int]] = [(-int(np.sort(g0)[::-1][:s].sum()), 0, (), 0)]
    tick = 1
    nodes = 0
    while heap and nodes < max_nodes:
        negb, _, S, pos = heapq.heappop(heap)
        if -negb <= best:
            return best, best_set, best, True, nodes
        nodes += 1
        cov = np.zeros_like(Z)
        for j in S:
            cov |= cols[j]
        cov &= Z
        val = int(popcount(cov))
        if val > best:
            best, best_set = val, tuple(S)
        room = s - len(S)
        if room == 0 or pos >= order.size:
            continue
        rest = order[pos:]
        g = popcount(cols[rest] & Z & ~cov)
        # exclude rest[0]: bound from the others
        others = np.sort(g[1:])[::-1]
        ex_b = val + int(others[:room].sum())
        in_b = val + int(g[0]) + int(others[: room - 1].sum())
        if in_b > best:
            heapq.heappush(heap, (-in_b, tick, S + (int(rest[0]),), pos + 1))
            tick += 1
        if ex_b > best and others.size:
            heapq.heappush(heap, (-ex_b, tick, S, pos + 1))
            tick += 1
    if not heap:
        return best, best_set, best, True, nodes
    return best, best_set, max(best, -heap[0][0]), False, nodes


def _pad_set(members, s: int, cand) -> tuple:
    """A set found by branch and bound may be smaller than s when F_b saturates; F_b is monotone, so
    padding with the lowest-index other candidates keeps its value."""
    m = tuple(sorted(int(j) for j in members))
    extra = [int(j) for j in cand if int(j) not in m][: s - len(m)]
    return tuple(sorted(m + tuple(extra)))


def enumeration_cost(n: int, K: int, sizes=None,
                     max_subsets: int = _DEFAULT_MAX_SUBSETS) -> tuple[int, int]:
    """(steps, bytes) of the exhaustive optima that :func:`compose_pools` asks of
    :func:`exhaustive_pool` on n items and K models (the anchor and K - 1 candidates), estimated
    before any work. A size s of ``sizes`` (default 1..K-1) whose subsets of 1..s candidates
    number at most ``max_subsets`` is enumerated: one step per subset and 64-item word, all
    subsets of each size held as index rows and OR words, about three copies while the next
    size is built. Larger sizes go to the bounded branch and bound and add nothing here; sizes
    outside 1..K-1 are left to :func:`compose_pools` to refuse."""
    n, K = check_int(n, "n", minimum=1), check_int(K, "K", minimum=1)
    max_subsets = check_int(max_subsets, "max_subsets", minimum=1)
    W = max(1, math.ceil(n / 64))
    steps, peak = 0, 0
    for s in range(1, K) if sizes is None else sizes:
        if not 1 <= s <= K - 1:
            continue
        total = _n_subsets(K - 1, s)
        if total > max_subsets:
            continue
        steps += total * W
        peak = max(peak, max(math.comb(K - 1, t) * (t + W) * 8 * 3 for t in range(1, s + 1)))
    return steps, peak


def exhaustive_pool(X, anchor="best", size: int = 1, *, rows=None, max_subsets: int = _DEFAULT_MAX_SUBSETS,
                    max_nodes: int = 50_000) -> Optimum:
    """The optimum max_{|S| = size} F_b(S) over sets of candidates (monotone F_b: also the optimum over
    |S| <= size). Enumerates every subset of size 1..size as bit masks when there are at most
    ``max_subsets`` of them; otherwise runs best-first branch and bound over marginal gains from the
    greedy incumbent for at most ``max_nodes`` nodes; when that does not finish it returns the best
    set found with the smallest proven upper bound (branch and bound frontier, the greedy trace's
    online bound, and greedy / (1 - 1/e)). Ties: the lexicographically first subset."""
    X, names = outcome_matrix(X)
    n, K = X.shape
    rmask = None if rows is None else _row_mask(rows, n)
    b = resolve_anchor(anchor, X, names, rmask)
    s = check_size(size, K)
    n_eval = n if rmask is None else int(rmask.sum())
    if n_eval == 0:
        raise ValueError("rows selects no items")
    max_subsets = check_int(max_subsets, "max_subsets", minimum=1)
    cand = np.array([j for j in range(K) if j != b], dtype=np.int64)
    Z = _targets(X, b, rmask)
    total = _n_subsets(K - 1, s)
    if total <= max_subsets:
        ccols = pack_bits(X[:, cand].T)
        for t, combos, ors in _subsets_by_size(ccols, s):
            if t == s:
                c = _counts_chunked(ors, Z[None])[0]
                i = int(np.argmax(c))
                m = tuple(int(cand[j]) for j in combos[i])
                return Optimum(s, m, int(c[i]), int(c[i]), n_eval, True, "enumeration", total)
    g = greedy_pool(X, b, s, rows=rmask)
    cols = pack_bits(X.T)
    best, best_set, upper, exact, nodes = _branch_and_bound(cols, Z, b, s, g.members, int(g.gains.sum()), max_nodes)
    upper = min(upper, int(g.upper[-1]), int(math.floor(g.gains.sum() / GREEDY_BOUND + 1e-9)))
    upper = max(upper, best)
    best_set = _pad_set(best_set, s, cand)
    exact = bool(exact or upper == best)
    return Optimum(s, best_set, best, upper, n_eval, exact, "branch-and-bound" if exact else "bound", nodes)
