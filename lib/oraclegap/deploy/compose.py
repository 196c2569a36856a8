"""Pool construction by complementary coverage (paper 002, Shihab et al.: Sec. 5, Thm 8, App. D.7, J, M.3).

Notation. n items, K models, per-item binary outcomes R_im (k = 1 correctness, or coverage at a
threshold tau for pools with k > 1 draws per cell). A deployment anchor b is fixed first (on
independent data, or by name). For a set S of retained alternatives (b not in S),

    F_b(S) = P(R_b = 0 and R_m = 1 for some m in S),       F_b(empty) = 0,

the *complementary coverage* of S relative to b: the share of items the anchor fails that some
member of S rescues. Every statistic here is its empirical version on a set of items (a count
divided by the number of items), computed exactly in integers.

Thm 8 (002): F_b is normalised, monotone and submodular, because the marginal gain
F_b(S + j) - F_b(S) = P(R_b = 0, R_j = 1, R_m = 0 for all m in S) can only shrink as S grows; so
the greedy pool of size s reaches at least (1 - 1/e) of max_{|S| <= s} F_b(S) (Nemhauser, Wolsey
and Fisher 1978), on the population and on any calibration sample.

What is here:

* :func:`complementary_coverage` and :func:`coverage_lattice` (F_b on every subset of a small
  pool). The checks of Thm 8 on a lattice (:func:`~oraclegap.deploy.theory.theorem8_checks`,
  :func:`~oraclegap.deploy.theory.theorem8_study` and the constructed instances
  :func:`~oraclegap.deploy.theory.disjoint_rescue_instance` and
  :func:`~oraclegap.deploy.theory.greedy_worst_case`) live in :mod:`oraclegap.deploy.theory`.
* :func:`greedy_pool` (with the marginal-gain trace; ``lazy=True`` for large pools, with the same
  result), :func:`exhaustive_pool` (enumeration where feasible, else best-first branch and bound
  over marginal gains within a node budget, else an upper bound from the greedy trace).
* baselines (:data:`BASELINES`): individual-accuracy ranking, lowest pairwise error correlation,
  k-medoids on error vectors (the ``kmedoids`` package), greedy DPP MAP on error vectors, and
  random subsets (:func:`random_pools`, with p05/p95).
* cost-weighted budgets (002 App. M.3): :func:`budgeted_pool` (cost-benefit greedy with partial
  enumeration) and :func:`knapsack_optimum`; the acquisition cost of a model is
  :func:`model_costs`, in the units of :func:`oraclegap.stats.certify.cost_utilities`.
* :func:`compose_pools` (what ``oraclegap compose`` prints). The held-out sweep of 002 App. J
  (:func:`~oraclegap.deploy.sweep.pool_sweep`: anchor and pools chosen on a calibration half,
  coverage and router gain measured on the disjoint half, over sizes x datasets x folds, against
  >= 200 random subsets per cell, with pool stability across folds) and the router it resolves
  live in :mod:`oraclegap.deploy.sweep`.
* :func:`latent_world`, a generator of multi-dataset pools with known success probabilities for
  sweeps and benchmarks.

Speed: outcome columns are packed into uint64 words (bit i of a word is item i), a set's
coverage is a bitwise OR of its members' words and a count is a popcount, so subsets are
enumerated as arrays, with no Python loop per subset (loops run over set sizes or members).

Moved names. ``compose.pool_sweep``, ``compose.PoolSweep``, ``compose.sweep_embedding``,
``compose.SWEEP_EMBEDS`` and the Thm 8 checks still resolve here, lazily (:data:`_MOVED`): those
modules import this one, so an eager re-export would make the import order matter. Library code
imports them from their own modules.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._result import Result
from .._validate import as_bool_array, as_rng, check_int
from ..pool import Pool
from ..stats.simulate import World, latent_world  # re-exported: the generator of the sweeps

__all__ = [
    "GREEDY_BOUND",
    "BASELINES",
    "RULES",
    "outcome_matrix",
    "resolve_anchor",
    "check_size",
    "check_sizes",
    "model_costs",
    "pack_bits",
    "popcount",
    "complementary_coverage",
    "CoverageLattice",
    "coverage_lattice",
    "GreedyPool",
    "greedy_pool",
    "Optimum",
    "exhaustive_pool",
    "baseline_pool",
    "RandomPools",
    "random_pools",
    "BudgetPool",
    "budgeted_pool",
    "knapsack_optimum",
    "budget_curve",
    "budget_ratios",
    "Composition",
    "compose_pools",
    "World",
    "latent_world",
]

#: The greedy guarantee of Thm 8: F_b(S_greedy) >= (1 - 1/e) max_{|S| <= s} F_b(S).
GREEDY_BOUND = 1.0 - 1.0 / math.e
#: Baseline pool rules beside greedy and exhaustive (random is drawn many times per cell).
BASELINES = ("accuracy", "diversity", "kmedoids", "dpp", "random")
#: Every deterministic rule a sweep evaluates per cell.
RULES = ("greedy", "exhaustive", "accuracy", "diversity", "kmedoids", "dpp")

_DEFAULT_MAX_SUBSETS = 200_000
_CHUNK_WORDS = 1 << 22  # temporaries of at most ~32 MB


# ====================================================================== inputs
def outcome_matrix(data, *, tau=None, draw=None, name: str = "X") -> tuple[np.ndarray, list[str]]:
    """Per-item binary outcomes bool[n, K] and the model names, from a Pool or a 0/1 matrix.

    k = 1 pools give correctness; pools with k > 1 draws per cell need ``tau`` (coverage at
    threshold tau: c_im >= ceil(tau*k - 1e-9)) or ``draw=j`` (draw j alone), as
    :meth:`~oraclegap.pool.Pool.outcomes` computes them. A 2-d array or a DataFrame (columns =
    models) is used as it is. At least one item and two models are needed.
    """
    if isinstance(data, Pool):
        names = list(data.policy_names)
        if data.k == 1:
            if draw not in (None, 0):
                raise ValueError(f"draw={draw!r} given but the pool has k=1 draw per cell")
            X = data.outcomes(tau=tau)
        elif tau is None and draw is None:
            raise ValueError(
                f"{name} is a pool with k={data.k} draws per cell; pass tau=T (coverage at threshold T) or draw=J"
            )
        else:
            X = data.outcomes(tau=tau, draw=draw)
    else:
        if tau is not None or draw is not None:
            raise ValueError("tau and draw apply to Pool inputs only; an outcome matrix is already one outcome per cell")
        if isinstance(data, pd.DataFrame):
            names = [str(c) for c in data.columns]
            arr = data.to_numpy()
        else:
            arr = np.asarray(data)
            names = None
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-d outcome matrix [n_items, K_models], got shape {arr.shape}")
        if arr.shape[0] == 0:
            raise ValueError(f"{name} is empty: it has no items (shape {arr.shape}); at least one item is needed")
        X = as_bool_array(arr, name, ndim=2)
        if names is None:
            names = [f"m{j}" for j in range(X.shape[1])]
    X = np.ascontiguousarray(X, dtype=bool)
    if X.shape[1] < 2:
        raise ValueError(f"{name} has K={X.shape[1]} model(s); pool construction needs an anchor and at least one alternative")
    assert names is not None  # every branch above names the models
    return X, names


def resolve_anchor(anchor, X: np.ndarray, names: Sequence[str], rows=None, *, name: str = "anchor") -> int:
    """Index of the anchor: ``"best"`` (most accurate on ``rows``, all items by default; ties go to
    the lowest index), a model name, or an integer index."""
    K = X.shape[1]
    if isinstance(anchor, str):
        if anchor == "best":
            sub = X if rows is None else X[rows]
            if sub.shape[0] == 0:
                raise ValueError("the anchor cannot be chosen on zero items")
            return int(np.argmax(sub.sum(axis=0)))
        if anchor in names:
            return list(names).index(anchor)
        shown = ", ".join(map(repr, list(names)[:12])) + (", ..." if K > 12 else "")
        raise ValueError(f"{name} {anchor!r} is not a model of the pool; choose 'best' or one of {shown}")
    if isinstance(anchor, (bool, np.bool_)):
        raise TypeError(f"{name} must be 'best', a model name or an index, got {anchor!r}")
    if isinstance(anchor, (int, np.integer)):
        return check_int(anchor, name, minimum=0, maximum=K - 1)
    raise TypeError(f"{name} must be 'best', a model name or an index, got {type(anchor).__name__}")


def check_size(size, K: int, name: str = "size") -> int:
    """A cardinality budget s: an integer in [1, K - 1] (the anchor is always in the pool)."""
    s = check_int(size, name)
    if s < 1:
        raise ValueError(f"{name} must be at least 1 (one alternative beside the anchor), got {s}")
    if s > K - 1:
        raise ValueError(f"{name}={s} is larger than the pool allows: at most K - 1 = {K - 1} alternatives beside the anchor")
    return s


def check_sizes(sizes, K: int, name: str = "sizes") -> np.ndarray:
    """A grid of sizes (sequence or "1,2,3"), each in [1, K - 1]; returned sorted and unique. None: 1..K-1."""
    if sizes is None:
        return np.arange(1, K, dtype=np.int64)
    if isinstance(sizes, str):
        try:
            sizes = [int(t) for t in sizes.split(",") if t.strip()]
        except ValueError:
            raise ValueError(f"{name} must be comma-separated integers, got {sizes!r}") from None
    arr = np.atleast_1d(np.asarray(sizes))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty list of sizes in 1..K-1={K - 1}")
    if not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"{name} must hold integers, got {arr.tolist()}")
    bad = arr[(arr < 1) | (arr > K - 1)]
    if bad.size:
        raise ValueError(f"{name} must lie in 1..K-1={K - 1} (alternatives beside the anchor); got {sorted(set(bad.tolist()))}")
    return np.unique(arr.astype(np.int64))


def model_costs(cost, n: int, K: int, *, normalize: str = "max", rows=None) -> np.ndarray:
    """Acquisition cost w_m of each model, in the units of ``certify.cost_utilities``.

    ``cost`` is per item and model [n, K] or per model [K]. With ``normalize="max"`` costs are
    divided by the largest one, C = cost / max(cost) in [0, 1]; ``"none"`` requires costs already
    in [0, 1]. Then w_m = mean_i C_im (over ``rows`` when given), the mean normalised cost of
    querying model m, which is exactly the ``fixed_cost`` that ``cost_utilities`` reports for a
    fixed model. Missing (NaN) or negative costs are refused.
    """
    if cost is None:
        raise ValueError("cost is required: per-item [n, K] or per-model [K] costs")
    C = np.asarray(cost, dtype=float)
    if C.shape == (K,):
        C = np.broadcast_to(C, (n, K))
    if C.shape != (n, K):
        raise ValueError(f"cost must have shape [n={n}, K={K}] or [K={K}], got {C.shape}")
    if np.isnan(C).any():
        raise ValueError("cost has missing values (NaN); every model needs a finite, non-negative cost on every item")
    if not np.isfinite(C).all():
        raise ValueError("cost must be finite; found infinite values")
    if (C < 0).any():
        raise ValueError(f"cost must be non-negative; found values such as {np.unique(C[C < 0])[:3].tolist()}")
    if normalize == "max":
        top = float(C.max())
        C = C / top if top > 0 else C
    elif normalize == "none":
        if C.max() > 1:
            raise ValueError("with normalize='none' costs must already lie in [0, 1]")
    else:
        raise ValueError(f"normalize must be 'max' or 'none', got {normalize!r}")
    sub = C if rows is None else C[rows]
    return sub.mean(axis=0)


def _check_budget(budget) -> float:
    try:
        B = float(budget)
    except (TypeError, ValueError):
        raise TypeError(f"budget must be a number (total normalised cost), got {budget!r}") from None
    if not math.isfinite(B) or B <= 0:
        raise ValueError(f"budget must be a finite number > 0 in the units of model_costs, got {budget!r}")
    return B


# ====================================================================== bits
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
@dataclasses.dataclass(frozen=True)
class Optimum:
    """max_{|S| = size} F_b(S): exact (``method`` "enumeration" or "branch-and-bound") or, when neither
    finished, the best set found with an upper bound on the optimum (``exact`` False)."""

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


# ====================================================================== baselines
def _corr(E: np.ndarray) -> np.ndarray:
    """Pearson correlation of columns; a constant column has covariance 0 with everything, so its
    correlation is taken as 0 (and 1 with itself)."""
    Ec = E - E.mean(axis=0)
    sd = np.sqrt((Ec**2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        R = (Ec.T @ Ec) / np.outer(sd, sd)
    R = np.where(np.isfinite(R), R, 0.0)
    np.fill_diagonal(R, 1.0)
    return R


def _order_accuracy(X: np.ndarray, b: int) -> np.ndarray:
    acc = X.sum(axis=0)
    cand = np.array([j for j in range(X.shape[1]) if j != b])
    return cand[np.lexsort((cand, -acc[cand]))]


def _order_diversity(X: np.ndarray, b: int) -> np.ndarray:
    """Greedy lowest mean pairwise error correlation with the pool so far (anchor included)."""
    R = _corr((~X).astype(float))
    K = X.shape[1]
    pool = [b]
    left = [j for j in range(K) if j != b]
    out = []
    while left:
        score = R[np.ix_(left, pool)].mean(axis=1)
        j = left[int(np.argmin(score))]
        out.append(j)
        pool.append(j)
        left.remove(j)
    return np.array(out, dtype=np.int64)


def _order_dpp(X: np.ndarray, b: int) -> np.ndarray:
    """Greedy MAP of a DPP with kernel L = diag(q) S diag(q) on error vectors: S the cosine similarity
    of the 0/1 error vectors (an error-free model is orthogonal to all), q the accuracy. Starting from
    the anchor, add the candidate maximising log det L[P + j] (ties: lowest index; when every
    determinant vanishes, the most accurate)."""
    E = (~X).astype(float)
    q = X.mean(axis=0)
    norm = np.sqrt((E**2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        S = (E.T @ E) / np.outer(norm, norm)
    S = np.where(np.isfinite(S), S, 0.0)
    np.fill_diagonal(S, 1.0)
    L = q[:, None] * S * q[None, :] + 1e-9 * np.eye(X.shape[1])
    K = X.shape[1]
    pool = [b]
    left = [j for j in range(K) if j != b]
    out = []
    while left:
        idx = np.array([pool + [j] for j in left])
        sub = L[idx[:, :, None], idx[:, None, :]]
        sign, logdet = np.linalg.slogdet(sub)
        score = np.where(sign > 0, logdet, -np.inf)
        if np.isfinite(score).any():
            j = left[int(np.argmax(score))]
        else:
            j = left[int(np.argmax(q[left]))]
        out.append(j)
        pool.append(j)
        left.remove(j)
    return np.array(out, dtype=np.int64)


def _kmedoids_set(X: np.ndarray, b: int, s: int) -> np.ndarray:
    """Medoids of s clusters of the candidates' error vectors (PAM with BUILD start, Hamming distance);
    when identical error vectors leave fewer than s distinct medoids, the most accurate others fill in."""
    cand = np.array([j for j in range(X.shape[1]) if j != b])
    if s >= cand.size:
        return cand
    import kmedoids

    E = (~X[:, cand]).astype(float)
    D = (E[:, :, None] != E[:, None, :]).mean(axis=0) if E.shape[0] * cand.size**2 <= 4_000_000 else _hamming(E)
    res = kmedoids.pam(D, s, init="build", random_state=0)
    chosen = list(dict.fromkeys(int(cand[j]) for j in np.asarray(res.medoids, dtype=np.int64)))
    if len(chosen) < s:  # identical error vectors can leave fewer distinct medoids: fill by accuracy
        chosen += [int(j) for j in _order_accuracy(X, b) if int(j) not in chosen][: s - len(chosen)]
    return np.sort(np.array(chosen, dtype=np.int64))


def _hamming(E: np.ndarray) -> np.ndarray:
    A = E.T @ E
    d = np.diag(A)
    return (d[:, None] + d[None, :] - 2 * A) / E.shape[0]


def baseline_pool(X, anchor="best", size: int = 1, rule: str = "accuracy", *, rows=None, seed=0) -> tuple:
    """Members (sorted indices) of a baseline pool of ``size`` alternatives, chosen on ``rows``:

    * ``accuracy``: the most accurate candidates (ties: lowest index);
    * ``diversity``: greedily the candidate with the lowest mean pairwise correlation of error
      vectors with the pool so far (anchor included);
    * ``kmedoids``: the medoids of ``size`` k-medoids clusters (PAM, Hamming distance) of the
      candidates' error vectors;
    * ``dpp``: greedy MAP of a quality x diversity DPP on error vectors, started at the anchor;
    * ``random``: a uniformly random subset (``seed``).
    """
    X, names = outcome_matrix(X)
    n, K = X.shape
    rmask = None if rows is None else _row_mask(rows, n)
    b = resolve_anchor(anchor, X, names, rmask)
    s = check_size(size, K)
    sub = X if rmask is None else X[rmask]
    if rule == "accuracy":
        m = _order_accuracy(sub, b)[:s]
    elif rule == "diversity":
        m = _order_diversity(sub, b)[:s]
    elif rule == "dpp":
        m = _order_dpp(sub, b)[:s]
    elif rule == "kmedoids":
        m = _kmedoids_set(sub, b, s)
    elif rule == "random":
        cand = np.array([j for j in range(K) if j != b])
        m = as_rng(seed).choice(cand, size=s, replace=False)
    else:
        raise ValueError(f"rule must be one of {BASELINES}, got {rule!r}")
    return tuple(sorted(int(j) for j in m))


@dataclasses.dataclass(frozen=True, repr=False)
class RandomPools(Result):
    """F_b of ``n_random`` uniformly random pools of ``size`` alternatives (counts over ``n`` items)."""

    size: int
    counts: np.ndarray
    n: int

    @property
    def values(self) -> np.ndarray:
        return self.counts / self.n

    def quantile(self, q) -> float:
        return float(np.quantile(self.values, q))

    def frame(self) -> pd.DataFrame:
        v = self.values
        return pd.DataFrame(
            [{"size": self.size, "draws": v.size, "mean": v.mean(), "p05": np.quantile(v, 0.05), "p95": np.quantile(v, 0.95)}]
        )


def random_pools(X, anchor="best", size: int = 1, n_random: int = 200, *, rows=None, seed=0) -> RandomPools:
    """The distribution of F_b over ``n_random`` uniformly random subsets of ``size`` candidates."""
    X, names = outcome_matrix(X)
    n, K = X.shape
    rmask = None if rows is None else _row_mask(rows, n)
    b = resolve_anchor(anchor, X, names, rmask)
    s = check_size(size, K)
    R = check_int(n_random, "n_random", minimum=1)
    rng = as_rng(seed)
    keys = rng.random((R, K))
    keys[:, b] = np.inf
    sets = np.argsort(keys, axis=1)[:, :s]
    cols = pack_bits(X.T)
    ors = np.bitwise_or.reduce(cols[sets], axis=1)
    n_eval = n if rmask is None else int(rmask.sum())
    return RandomPools(s, popcount(ors & _targets(X, b, rmask)), n_eval)


# ====================================================================== budgets (App. M.3)
@dataclasses.dataclass(frozen=True, repr=False)
class BudgetPool(Result):
    """A pool under a knapsack budget sum_{m in S} w_m <= B (w: :func:`model_costs`)."""

    members: tuple
    count: int
    n: int
    cost: float
    budget: float
    method: str
    guarantee: float
    names: tuple

    @property
    def value(self) -> float:
        return self.count / self.n

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "budget": self.budget,
                    "members": " + ".join(self.names[m] for m in self.members),
                    "size": len(self.members),
                    "cost": self.cost,
                    "F_b": self.value,
                    "guarantee": self.guarantee,
                }
            ]
        )


def _cost_benefit_complete(cols, Z, w, B, seeds: np.ndarray, avail0: np.ndarray):
    """Cost-benefit greedy completions of many seed sets at once.

    seeds bool[P, K] (members already in), avail0 bool[K] (candidates that fit alone). At each step
    every completion takes the remaining candidate with the largest gain / cost (zero cost: infinite
    ratio; ties: larger gain, then lowest index); it joins if it fits in the budget and is dropped
    from consideration either way (Sviridenko 2004). Returns members bool[P, K], counts int[P], cost[P].
    """
    P, K = seeds.shape
    inset = seeds.copy()
    cov = np.zeros((P, Z.shape[0]), dtype=np.uint64)
    for j in range(K):
        sel = inset[:, j]
        if sel.any():
            cov[sel] |= cols[j] & Z
    spent = inset.astype(float) @ w
    left = avail0[None, :] & ~inset
    rows = np.arange(P)
    idx = np.arange(K)
    while left.any():
        g = popcount(cols[None, :, :] & (Z[None, :] & ~cov)[:, None, :]).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(w[None, :] > 0, g / w[None, :], np.where(g > 0, np.inf, 0.0))
        ratio = np.where(left, ratio, -1.0)
        # lexicographic argmax: ratio, then gain, then lowest index
        pick = np.lexsort((idx[None, :].repeat(P, 0), -g, -ratio), axis=1)[:, 0]
        active = left[rows, pick] & (g[rows, pick] > 0)
        if not active.any():
            break
        fits = active & (spent + w[pick] <= B + 1e-12)
        inset[rows[fits], pick[fits]] = True
        spent[fits] += w[pick[fits]]
        cov[fits] |= cols[pick[fits]] & Z
        left[rows[active], pick[active]] = False
        left[~active] = False
    return inset, popcount(cov), spent


def budgeted_pool(X, anchor="best", cost=None, budget=None, *, partial: int = 3, rows=None, normalize: str = "max") -> BudgetPool:
    """Cost-benefit greedy with partial enumeration for max F_b(S) s.t. sum_{m in S} w_m <= budget.

    w_m = :func:`model_costs` (mean normalised per-item cost, the units of ``cost_utilities``;
    costs from the pool when ``cost`` is None). ``partial=d``: every feasible set of fewer than d
    candidates is a solution candidate, and every feasible d-set is completed by cost-benefit greedy
    (Sviridenko 2004; guarantee 1 - 1/e for d = 3). ``partial=0``: the better of the cost-benefit
    greedy and the best single candidate (guarantee (1 - 1/e)/2, Khuller, Moss and Naor 1999).
    """
    if isinstance(X, Pool) and cost is None:
        cost = X.cost
    X, names = outcome_matrix(X)
    n, K = X.shape
    rmask = None if rows is None else _row_mask(rows, n)
    b = resolve_anchor(anchor, X, names, rmask)
    w = model_costs(cost, n, K, normalize=normalize, rows=rmask)
    B = _check_budget(budget)
    d = check_int(partial, "partial", minimum=0, maximum=3)
    n_eval = n if rmask is None else int(rmask.sum())
    cols = pack_bits(X.T)
    Z = _targets(X, b, rmask)
    fits = (w <= B + 1e-12) & (np.arange(K) != b)
    cand = np.flatnonzero(fits)
    best: tuple[int, tuple[int, ...], float] = (0, (), 0.0)
    if cand.size == 0:
        return BudgetPool((), 0, n_eval, 0.0, B, f"cost-benefit greedy (partial={d})", _budget_guarantee(d), tuple(names))
    ccols = pack_bits(X[:, cand].T)
    # small sets, enumerated
    for t, combos, ors in _subsets_by_size(ccols, min(max(d - 1, 1), cand.size)):
        if d == 0 and t > 1:
            break
        c = popcount(ors & Z)
        cs = w[cand][combos].sum(axis=1)
        ok = cs <= B + 1e-12
        if ok.any():
            i = np.flatnonzero(ok)[np.argmax(c[ok])]
            if c[i] > best[0]:
                best = (int(c[i]), tuple(int(cand[j]) for j in combos[i]), float(cs[i]))
    # seeds of size d (d = 0: the empty seed)
    if d == 0:
        seeds = np.zeros((1, K), dtype=bool)
    elif d <= cand.size:
        combos = next(cmb for t, cmb, _ in _subsets_by_size(ccols, d) if t == d)
        ok = w[cand][combos].sum(axis=1) <= B + 1e-12
        combos = combos[ok]
        seeds = np.zeros((combos.shape[0], K), dtype=bool)
        seeds[np.arange(combos.shape[0])[:, None], cand[combos]] = True
    else:
        seeds = np.zeros((0, K), dtype=bool)
    if seeds.shape[0]:
        inset, counts, spent = _cost_benefit_complete(cols, Z, w, B, seeds, fits)
        i = int(np.argmax(counts))
        if counts[i] > best[0]:
            best = (int(counts[i]), tuple(int(j) for j in np.flatnonzero(inset[i])), float(spent[i]))
    return BudgetPool(tuple(sorted(best[1])), best[0], n_eval, best[2], B, f"cost-benefit greedy (partial={d})",
                      _budget_guarantee(d), tuple(names))


def _budget_guarantee(d: int) -> float:
    return GREEDY_BOUND if d >= 3 else GREEDY_BOUND / 2


def knapsack_optimum(X, anchor="best", cost=None, budget=None, *, rows=None, normalize: str = "max",
                     max_candidates: int = 20) -> BudgetPool:
    """The exact optimum of F_b under sum_{m in S} w_m <= budget, by enumerating all 2^(K-1) subsets
    (K - 1 <= max_candidates). Ties: the cheapest, then the smallest bit mask."""
    if isinstance(X, Pool) and cost is None:
        cost = X.cost
    X, names = outcome_matrix(X)
    n, K = X.shape
    rmask = None if rows is None else _row_mask(rows, n)
    lat = coverage_lattice(X, anchor, rows=rmask, max_candidates=max_candidates)
    w = model_costs(cost, n, K, normalize=normalize, rows=rmask)
    B = _check_budget(budget)
    k = lat.candidates.size
    wc = w[lat.candidates]
    mcost = np.zeros(1 << k)
    for j in range(k):
        mcost[1 << j : 1 << (j + 1)] = mcost[: 1 << j] + wc[j]
    ok = mcost <= B + 1e-12
    idx = np.flatnonzero(ok)
    i = idx[np.lexsort((idx, mcost[idx], -lat.counts[idx]))[0]]
    return BudgetPool(tuple(lat.members(int(i))), int(lat.counts[i]), lat.n, float(mcost[i]), B, "exhaustive knapsack", 1.0, tuple(names))


def budget_curve(X, anchor="best", cost=None, budgets=None, *, fit=None, test=None, normalize: str = "max",
                 max_candidates: int = 16) -> pd.DataFrame:
    """F_b against the budget: per budget B, the cost-benefit greedy pools (partial 0 and 3), the
    exhaustive knapsack optimum (when K - 1 <= max_candidates) and the cost-blind greedy prefix that
    fits, all chosen on ``fit`` rows (all by default) and, with ``test`` rows, measured there too.
    Costs are normalised on the fit rows (:func:`model_costs`)."""
    if isinstance(X, Pool) and cost is None:
        cost = X.cost
    X, names = outcome_matrix(X)
    n, K = X.shape
    fmask = np.ones(n, bool) if fit is None else _row_mask(fit, n)
    tmask = None if test is None else _row_mask(test, n)
    b = resolve_anchor(anchor, X, names, fmask)
    w = model_costs(cost, n, K, normalize=normalize, rows=fmask)
    if budgets is None:
        raise ValueError("budgets is required: a list of total normalised costs > 0")
    rows = []
    order = greedy_pool(X, b, rows=fmask).members
    for B in np.atleast_1d(np.asarray(budgets, dtype=float)):
        B = _check_budget(B)
        pools = {
            "cost-benefit greedy (partial=0)": budgeted_pool(X, b, w, B, partial=0, rows=fmask, normalize="none").members,
            "cost-benefit greedy (partial=3)": budgeted_pool(X, b, w, B, partial=3, rows=fmask, normalize="none").members,
        }
        if K - 1 <= max_candidates:
            pools["exhaustive knapsack"] = knapsack_optimum(X, b, w, B, rows=fmask, normalize="none").members
        prefix, spent = [], 0.0
        for j in order:
            if spent + w[j] <= B + 1e-12:
                prefix.append(j)
                spent += w[j]
            else:
                break
        pools["cost-blind greedy prefix"] = tuple(prefix)
        for method, m in pools.items():
            row = {
                "budget": B,
                "method": method,
                "members": " + ".join(names[j] for j in m),
                "size": len(m),
                "cost": float(w[list(m)].sum()) if m else 0.0,
                "fit": complementary_coverage(X, b, m, rows=fmask),
            }
            if tmask is not None:
                row["test"] = complementary_coverage(X, b, m, rows=tmask)
            rows.append(row)
    return pd.DataFrame(rows)


def budget_ratios(curve: pd.DataFrame, column: str = "fit") -> dict[str, float]:
    """The worst budget of each method of a :func:`budget_curve`: per method other than the
    exhaustive knapsack, min over budgets B of F_b(S_method(B)) / F_b(S_knapsack(B)), read from
    ``column`` ("fit", or "test" when the curve was measured on test rows). Budgets at which the
    knapsack optimum is 0 are left out (the ratio is undefined there); a method with no budget left
    gets NaN. On the fit rows every ratio is at most 1, and the partial-enumeration method's is at
    least :data:`GREEDY_BOUND` (App. M.3)."""
    if not isinstance(curve, pd.DataFrame):
        raise TypeError(f"curve must be a DataFrame from budget_curve, got {type(curve).__name__}")
    missing = {"budget", "method", column} - set(curve.columns)
    if missing:
        raise ValueError(f"curve lacks the column(s) {sorted(missing)}; expected a budget_curve frame")
    knap = curve[curve["method"] == "exhaustive knapsack"].set_index("budget")[column]
    if knap.empty:
        raise ValueError("curve has no 'exhaustive knapsack' rows (budget_curve skips it above max_candidates)")
    knap = knap.replace(0, np.nan)
    return {m: float((d.set_index("budget")[column] / knap).min())
            for m, d in curve.groupby("method") if m != "exhaustive knapsack"}


# ====================================================================== composition (the CLI)
@dataclasses.dataclass(frozen=True, repr=False)
class Composition(Result):
    """Per size: the greedy pool with F_b and its marginal gains, the exhaustive optimum (or a bound)
    with the greedy/optimum ratio, and the accuracy-ranked pool; optionally a budgeted pool."""

    anchor: str
    anchor_accuracy: float
    n: int
    K: int
    sizes: np.ndarray
    greedy: GreedyPool
    optima: tuple
    accuracy_pools: tuple
    accuracy_values: np.ndarray
    budget: BudgetPool | None
    names: tuple

    def frame(self) -> pd.DataFrame:
        rows = []
        for s, opt, acc_m, acc_v in zip(self.sizes, self.optima, self.accuracy_pools, self.accuracy_values, strict=True):
            g = self.greedy
            rows.append(
                {
                    "size": int(s),
                    "greedy": " + ".join(self.names[m] for m in g.members[:s]),
                    "F_b greedy": float(g.values[s - 1]),
                    "gains": ", ".join(f"{x:.4f}" for x in g.gains[:s] / g.n),
                    "F_b optimum": opt.value,
                    "optimum": " + ".join(self.names[m] for m in opt.members),
                    "optimum exact": opt.exact,
                    "optimum upper": opt.upper_value,
                    "greedy/optimum": float(g.values[s - 1]) / opt.value if opt.value > 0 else 1.0,
                    "accuracy pool": " + ".join(self.names[m] for m in acc_m),
                    "F_b accuracy": float(acc_v),
                }
            )
        return pd.DataFrame(rows)


def compose_pools(data, anchor="best", sizes=None, *, tau=None, budget=None, cost=None, partial: int = 3,
                  max_subsets: int = _DEFAULT_MAX_SUBSETS, max_nodes: int = 50_000) -> Composition:
    """Pool construction on all items of ``data`` (a Pool or bool[n, K]; k > 1 pools need ``tau``):
    the anchor (``"best"``: most accurate), the greedy trace up to max(sizes) (default 1..K-1), per
    size the optimum (:func:`exhaustive_pool`) and the accuracy-ranked pool, and with ``budget`` the
    cost-benefit greedy pool under sum of model costs <= budget (:func:`budgeted_pool`)."""
    if isinstance(data, Pool) and cost is None:
        cost = data.cost
    X, names = outcome_matrix(data, tau=tau)
    n, K = X.shape
    b = resolve_anchor(anchor, X, names)
    grid = check_sizes(sizes, K)
    g = greedy_pool(X, b, int(grid.max()), lazy=K > 24)
    if g.lazy:  # the lazy trace has only the certificate bound; the online bound is cheap to add
        g = greedy_pool(X, b, int(grid.max()))
    optima = tuple(exhaustive_pool(X, b, int(s), max_subsets=max_subsets, max_nodes=max_nodes) for s in grid)
    acc_order = _order_accuracy(X, b)
    acc_pools = tuple(tuple(sorted(int(j) for j in acc_order[:s])) for s in grid)
    acc_vals = np.array([complementary_coverage(X, b, m) for m in acc_pools])
    bp = None
    if budget is not None:
        if cost is None:
            raise ValueError("budget needs costs: the pool has none; pass cost= (per-model [K] or per-item [n, K])")
        bp = budgeted_pool(X, b, cost, budget, partial=partial)
    return Composition(names[b], float(X[:, b].mean()), n, K, grid, g, optima, acc_pools, acc_vals, bp, tuple(names))


# ====================================================================== names that moved out
#: Names that lived here before the sweep and the Thm 8 checks got their own modules, and the
#: module that holds each now (resolved on first use by the module ``__getattr__`` below).
_MOVED = {
    **dict.fromkeys(("SWEEP_EMBEDS", "sweep_embedding", "PoolSweep", "pool_sweep", "_minilm_cache_file",
                     "_fold_masks"), "sweep"),
    **dict.fromkeys(("Theorem8Check", "theorem8_checks", "theorem8_study", "disjoint_rescue_instance",
                     "greedy_worst_case"), "theory"),
}


def __getattr__(name: str):
    """``compose.pool_sweep`` and the other moved names (:data:`_MOVED`), from their modules."""
    where = _MOVED.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__package__}.{where}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MOVED))
