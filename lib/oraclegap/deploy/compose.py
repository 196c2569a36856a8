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

* :func:`complementary_coverage`, :func:`coverage_lattice` (F_b on every subset of a small pool)
  and :func:`theorem8_checks` (normalisation, monotonicity, diminishing returns and the greedy
  guarantee, checked on the whole lattice), :func:`theorem8_study` over random instances, and
  constructed instances with known answers (:func:`disjoint_rescue_instance`, where greedy is
  optimal, and :func:`greedy_worst_case`, where greedy approaches the 1 - 1/e bound).
* :func:`greedy_pool` (with the marginal-gain trace; ``lazy=True`` for large pools, with the same
  result), :func:`exhaustive_pool` (enumeration where feasible, else best-first branch and bound
  over marginal gains within a node budget, else an upper bound from the greedy trace).
* baselines (:data:`BASELINES`): individual-accuracy ranking, lowest pairwise error correlation,
  k-medoids on error vectors (the ``kmedoids`` package), greedy DPP MAP on error vectors, and
  random subsets (:func:`random_pools`, with p05/p95).
* cost-weighted budgets (002 App. M.3): :func:`budgeted_pool` (cost-benefit greedy with partial
  enumeration) and :func:`knapsack_optimum`; the acquisition cost of a model is
  :func:`model_costs`, in the units of :func:`oraclegap.stats.certify.cost_utilities`.
* :func:`compose_pools` (what ``oraclegap compose`` prints) and :func:`pool_sweep`, the held-out
  sweep of 002 App. J: anchor and pools chosen on a calibration half, coverage and router gain
  measured on the disjoint half, over sizes x datasets x folds, against >= 200 random subsets
  per cell, with pool stability across folds.
* :func:`latent_world`, a generator of multi-dataset pools with known success probabilities for
  sweeps and benchmarks.

Speed: outcome columns are packed into uint64 words (bit i of a word is item i), a set's
coverage is a bitwise OR of its members' words and a count is a popcount, so subsets are
enumerated as arrays, with no Python loop per subset (loops run over set sizes or members).
"""

from __future__ import annotations

import copy
import dataclasses
import heapq
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._validate import as_bool_array, as_rng, check_int, check_prob
from ..pool import Pool
from ..stats.certify import outcomes_from_pool
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
    "Theorem8Check",
    "theorem8_checks",
    "theorem8_study",
    "disjoint_rescue_instance",
    "greedy_worst_case",
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
    "SWEEP_EMBEDS",
    "sweep_embedding",
    "PoolSweep",
    "pool_sweep",
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
    threshold tau: c_im >= ceil(tau*k - 1e-9)) or ``draw=j`` (draw j alone). A 2-d array or a
    DataFrame (columns = models) is used as it is. At least one item and two models are needed.
    """
    if isinstance(data, Pool):
        names = list(data.policy_names)
        if data.k == 1:
            if draw not in (None, 0):
                raise ValueError(f"draw={draw!r} given but the pool has k=1 draw per cell")
            X = outcomes_from_pool(data, tau=tau) if tau is not None else data.verdicts[:, :, 0]
        elif tau is None and draw is None:
            raise ValueError(
                f"{name} is a pool with k={data.k} draws per cell; pass tau=T (coverage at threshold T) or draw=J"
            )
        else:
            X = outcomes_from_pool(data, tau=tau, draw=draw)
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


@dataclasses.dataclass(frozen=True)
class CoverageLattice:
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


@dataclasses.dataclass(frozen=True)
class Theorem8Check:
    """Thm 8 checked on a whole lattice: normalisation, monotonicity (every single-element step),
    diminishing returns (every pair j, k and set S without them) and the greedy guarantee per size."""

    n: int
    K: int
    anchor: int
    normalised: bool
    monotone_checks: int
    monotone_violations: int
    submodular_checks: int
    submodular_violations: int
    sizes: np.ndarray
    greedy: np.ndarray
    optimum: np.ndarray

    @property
    def ratios(self) -> np.ndarray:
        return np.where(self.optimum > 0, self.greedy / np.maximum(self.optimum, 1), 1.0)

    @property
    def holds(self) -> bool:
        return (
            self.normalised
            and self.monotone_violations == 0
            and self.submodular_violations == 0
            and bool(np.all(self.ratios >= GREEDY_BOUND - 1e-12))
        )

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {"size": self.sizes, "greedy_count": self.greedy, "optimum_count": self.optimum, "ratio": self.ratios, "n": self.n}
        )


def theorem8_checks(X, anchor="best", *, rows=None) -> Theorem8Check:
    """Check Thm 8 on the empirical F_b of ``X``: F_b(empty) = 0; F_b(S + j) >= F_b(S) for every S
    and j; F_b(S + j) - F_b(S) >= F_b(S + k + j) - F_b(S + k) for every S and distinct j, k not in
    S; and greedy >= (1 - 1/e) x exhaustive optimum for every size (K - 1 <= 20)."""
    lat = coverage_lattice(X, anchor, rows=rows)
    c = lat.counts
    k = len(lat.candidates)
    masks = np.arange(1 << k)
    mono_n = mono_v = sub_n = sub_v = 0
    for j in range(k):
        bj = 1 << j
        without_j = masks[(masks & bj) == 0]
        gain_j = c[without_j | bj] - c[without_j]
        mono_n += without_j.size
        mono_v += int((gain_j < 0).sum())
        for t in range(k):
            if t == j:
                continue
            bt = 1 << t
            S = without_j[(without_j & bt) == 0]
            sub_n += S.size
            sub_v += int((c[S | bj] - c[S] < c[S | bt | bj] - c[S | bt]).sum())
    X2, _ = outcome_matrix(X)
    sizes = np.arange(1, k + 1)
    g = greedy_pool(X2, lat.anchor, k, rows=rows)
    greedy_counts = np.cumsum(g.gains)
    opt = np.array([lat.optimum(s)[0] for s in sizes])
    return Theorem8Check(lat.n, k + 1, lat.anchor, bool(c[0] == 0), mono_n, mono_v, sub_n, sub_v, sizes, greedy_counts, opt)


def theorem8_study(n_instances: int = 200, *, n_range=(5, 80), K_range=(3, 9), seed=0) -> pd.DataFrame:
    """Thm 8 on random outcome matrices: one row per instance (kind, n, K, checks, violations, the
    smallest greedy/optimum ratio over sizes). Kinds: independent members with random accuracies;
    members sharing an item difficulty (a latent-class mixture); sparse rescuers (most members
    rarely right)."""
    n_instances = check_int(n_instances, "n_instances", minimum=1)
    rng = as_rng(seed)
    rows = []
    kinds = ("independent", "shared difficulty", "sparse")
    for i in range(n_instances):
        kind = kinds[i % len(kinds)]
        n = int(rng.integers(n_range[0], n_range[1] + 1))
        K = int(rng.integers(K_range[0], K_range[1] + 1))
        if kind == "independent":
            P = np.broadcast_to(rng.uniform(0.05, 0.95, K), (n, K))
        elif kind == "shared difficulty":
            cls = rng.integers(0, 3, n)
            P = rng.uniform(0.02, 0.98, (3, K))[cls]
        else:
            P = np.broadcast_to(rng.uniform(0.01, 0.2, K), (n, K)).copy()
            P[:, 0] = 0.5
        X = rng.random((n, K)) < P
        chk = theorem8_checks(X, int(rng.integers(0, K)))
        rows.append(
            {
                "instance": i,
                "kind": kind,
                "n": n,
                "K": K,
                "normalised": chk.normalised,
                "monotone_checks": chk.monotone_checks,
                "monotone_violations": chk.monotone_violations,
                "submodular_checks": chk.submodular_checks,
                "submodular_violations": chk.submodular_violations,
                "min_ratio": float(chk.ratios.min()),
                "greedy_optimal_all_sizes": bool(np.all(chk.greedy == chk.optimum)),
            }
        )
    return pd.DataFrame(rows)


def disjoint_rescue_instance(sizes: Sequence[int], *, n_anchor_right: int = 0, seed=0) -> np.ndarray:
    """An outcome matrix where greedy is provably optimal: the anchor (column 0) is wrong on
    sum(sizes) items, candidate j (column j + 1) rescues its own ``sizes[j]`` of them and no other,
    so F_b is additive and the best s-set is the s largest rescue sets; ``n_anchor_right`` extra
    items are solved by everyone. Rows are shuffled with ``seed``."""
    sz = np.asarray(sizes, dtype=np.int64)
    if sz.ndim != 1 or sz.size < 1 or (sz < 0).any():
        raise ValueError("sizes must be a non-empty list of non-negative rescue-set sizes")
    n = int(sz.sum()) + check_int(n_anchor_right, "n_anchor_right", minimum=0)
    X = np.zeros((n, sz.size + 1), dtype=bool)
    start = 0
    for j, s in enumerate(sz):
        X[start : start + s, j + 1] = True
        start += s
    X[start:, :] = True
    return X[as_rng(seed).permutation(n)]


def greedy_worst_case(s: int, scale: int = 1) -> tuple[np.ndarray, float, float]:
    """The classical instance on which greedy max-coverage approaches 1 - (1 - 1/s)^s of the optimum.

    Items form an s x s grid of cells plus leftovers: optimal model O_j (column j) rescues column
    j; greedy model G_i rescues row i, whose cells have weight c_i = s^(s-i) (s-1)^(i-1) (times
    ``scale`` duplicated items), plus one private item so that greedy strictly prefers G_i; each
    column also has (s-1)^s * scale items only O_j rescues. The anchor (column 0) is wrong
    everywhere. Returns (X, greedy count, optimum count) computed from the construction:
    greedy = s * scale * (s^s - (s-1)^s) + s, optimum = s * scale * s^s.
    """
    s = check_int(s, "s", minimum=2, maximum=6)
    scale = check_int(scale, "scale", minimum=1)
    c = np.array([s ** (s - i) * (s - 1) ** (i - 1) for i in range(1, s + 1)], dtype=np.int64) * scale
    left = (s - 1) ** s * scale
    n = int(s * (c.sum() + left) + s)
    K = 1 + 2 * s  # anchor, G_1..G_s, O_1..O_s
    X = np.zeros((n, K), dtype=bool)
    r = 0
    for j in range(s):  # column j
        for i in range(s):
            X[r : r + c[i], 1 + i] = True
            X[r : r + c[i], 1 + s + j] = True
            r += c[i]
        X[r : r + left, 1 + s + j] = True
        r += left
    for i in range(s):
        X[r, 1 + i] = True
        r += 1
    greedy = s * scale * (s**s - (s - 1) ** s) + s
    optimum = s * scale * s**s
    return X, float(greedy), float(optimum)


# ====================================================================== greedy
@dataclasses.dataclass(frozen=True)
class GreedyPool:
    """The greedy pool: members in the order added, each one's marginal gain (item count), F_b after
    each step, and the number of marginal-gain evaluations it took."""

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
        return GreedyPool(b, tuple(int(j) for j in order[0]), gains[0], n_eval, tuple(names), (K - 1) * s, False, ub[0])
    cand = [j for j in range(K) if j != b]
    g0 = popcount(cols[cand] & Z)
    heap = [(-int(g), j) for g, j in zip(g0, cand, strict=True)]
    heapq.heapify(heap)
    evals = len(cand)
    cov = np.zeros_like(Z)
    members, gains = [], []
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
    heap = [(-int(np.sort(g0)[::-1][:s].sum()), 0, (), 0)]
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


@dataclasses.dataclass(frozen=True)
class RandomPools:
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
@dataclasses.dataclass(frozen=True)
class BudgetPool:
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
        key = np.lexsort((idx[None, :].repeat(P, 0), -g, -ratio), axis=1)[:, 0]
        j = key
        active = left[rows, j] & (g[rows, j] > 0)
        if not active.any():
            break
        fits = active & (spent + w[j] <= B + 1e-12)
        inset[rows[fits], j[fits]] = True
        spent[fits] += w[j[fits]]
        cov[fits] |= cols[j[fits]] & Z
        left[rows[active], j[active]] = False
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
    best = (0, (), 0.0)
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
@dataclasses.dataclass(frozen=True)
class Composition:
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


# ====================================================================== routers for the sweep
#: Embedding choices of :func:`pool_sweep`: ``routers.router_inputs``'s sources, plus "cached".
SWEEP_EMBEDS = ("cached", "auto", "pool", "minilm", "tfidf-svd", "features", "none")


def _minilm_cache_file(pool: Pool):
    """Where ``features.embed_texts`` keeps (or would keep) MiniLM vectors of this pool's prompt
    texts, or None without text or without a cache folder. Mirrors ``router_inputs``'s texts."""
    from . import features

    tcol = pool.prompts["text"]
    if not tcol.notna().any():
        return None
    texts = [str(t) if t is not None else "" for t in tcol.tolist()]
    if not any(t.strip() for t in texts):
        return None
    folder = features.cache_dir()
    if folder is None:
        return None
    return folder / f"minilm-{features._text_key(texts, features.MINILM_NAME)}.npz"


def sweep_embedding(pool: Pool, embed: str = "cached") -> str:
    """The embedding source that ``routers.router_inputs`` uses for ``pool`` in a sweep.

    One of ``router_inputs``'s sources is returned unchanged. ``"cached"`` never computes a
    sentence embedding: the pool's own embeddings (``"pool"``) when it has them; else, for prompts
    with text, MiniLM (``"minilm"``) only when the embedding cache already holds MiniLM vectors of
    exactly these texts, otherwise TF-IDF + SVD of the text (``"tfidf-svd"``, fitted on the prompt
    texts only, no outcome read); a pool without text gets ``"auto"`` (numeric prompt features, or
    nothing). The cache file looked for is declared to the book's data log, so an executed chapter
    is re-run once the cache appears.
    """
    if not isinstance(pool, Pool):
        raise TypeError(f"pool must be an oraclegap Pool, got {type(pool).__name__}")
    if embed not in SWEEP_EMBEDS:
        raise ValueError(f"embed must be one of {SWEEP_EMBEDS}, got {embed!r}")
    if embed != "cached":
        return embed
    if pool.embeddings is not None:
        return "pool"
    path = _minilm_cache_file(pool)
    if path is None:
        return "auto"
    from .. import _datalog

    _datalog.declare(path)
    return "minilm" if path.is_file() else "tfidf-svd"


def _take(inputs, idx: np.ndarray):
    if hasattr(inputs, "take") and not isinstance(inputs, np.ndarray | pd.DataFrame | pd.Series):
        return inputs.take(idx)
    if isinstance(inputs, pd.DataFrame | pd.Series):
        return inputs.iloc[idx]
    return np.asarray(inputs)[idx]


def _member_columns(inputs, members: np.ndarray, K: int):
    """RouterInputs restricted to a pool's members: per-member fields (answers, confidence [n, K])
    keep only the members' columns, in pool order, so that column j is member ``members[j]``."""
    if not dataclasses.is_dataclass(inputs):
        return inputs
    change = {}
    for field in ("answers", "confidence"):
        v = getattr(inputs, field, None)
        if v is not None and np.ndim(v) == 2 and np.shape(v)[1] == K:
            change[field] = np.asarray(v)[:, members]
    return dataclasses.replace(inputs, **change) if change else inputs


def _resolve_router(router, confidence, embed: str):
    """(kind, maker, inputs_from_pool, family): kind "registry" (a ``routers.FAMILIES`` name; maker()
    -> an unfitted router), "estimator" (maker() -> a clone of the given object with fit(X, Y) /
    predict(X)) or "function" (router(X_cal, Y_cal, X_test) -> member indices), or None when no
    router gain is wanted; inputs_from_pool(pool) gives what the router sees per item when inputs
    are not passed (``routers.router_inputs`` with :func:`sweep_embedding` for registry routers,
    else the pool's embeddings); family is the registry name or None."""
    if router is None:
        return None, None, None, None
    if embed not in SWEEP_EMBEDS:
        raise ValueError(f"embed must be one of {SWEEP_EMBEDS}, got {embed!r}")
    if isinstance(router, str):
        from . import routers as _routers

        name = router
        if router == "auto":
            name = "max_confidence" if confidence is not None else "embed_knn"
        if name not in _routers.FAMILIES:
            raise ValueError(
                f"router {router!r} is not a router family; choose 'auto', None, an estimator, a function, or one of "
                f"{', '.join(_routers.FAMILIES)}"
            )
        if name == "dataset":
            raise ValueError(
                "router 'dataset' maps prompts to members by their training datasets, which a sweep over sub-pools does not "
                "carry; choose another family (e.g. 'taskwise_best' or 'embed_knn')"
            )
        if _routers.FAMILIES[name]["regime"] == "post-inference":
            def from_pool(pool):
                return _routers.router_inputs(pool, embed="none")
        else:
            def from_pool(pool):
                return _routers.router_inputs(pool, embed=sweep_embedding(pool, embed))
        return "registry", (lambda: _routers.make_router(name)), from_pool, name

    def embeddings(pool):
        return pool.embeddings

    if hasattr(router, "fit") and hasattr(router, "predict"):
        def maker():
            try:
                from sklearn.base import clone

                return clone(router)
            except TypeError:
                return copy.deepcopy(router)

        return "estimator", maker, embeddings, None
    if callable(router):
        return "function", router, embeddings, None
    raise TypeError(
        "router must be None, 'auto', a routers.FAMILIES name (e.g. 'max_confidence', 'embed_knn'), an estimator with "
        f"fit/predict, or a function (X_cal, Y_cal, X_test) -> choices; got {type(router).__name__}"
    )


def _dataset_inputs(kind, family, inputs, from_pool, ds: str, dpool, cache: dict, confidence, n_source: int, K: int):
    """What the router sees for one dataset of a sweep (indexed by the item positions in the source)."""
    if kind is None:
        return None
    if isinstance(inputs, Mapping):
        if ds not in inputs:
            raise ValueError(f"inputs is a mapping without an entry for dataset {ds!r}")
        return inputs[ds]
    if inputs is not None:
        return inputs
    from . import routers as _routers

    post = family is not None and _routers.FAMILIES[family]["regime"] == "post-inference"
    if post and confidence is not None:
        conf = np.asarray(confidence, dtype=float)
        if conf.shape != (n_source, K):
            raise ValueError(f"confidence for dataset {ds!r} must have shape [n={n_source}, K={K}] (one per item and model), got {conf.shape}")
        if dpool is not None:
            return _routers.router_inputs(dpool, embed="none", confidence=conf)
        return _routers.RouterInputs(confidence=conf)
    if dpool is not None:
        if id(dpool) not in cache:
            cache[id(dpool)] = from_pool(dpool)
        return cache[id(dpool)]
    if post:
        raise ValueError(f"router {family!r} needs confidence= (an [n, K] array of per-model confidences) or a pool whose answers give them")
    raise ValueError("the router needs inputs= (features, embeddings or RouterInputs per item): the data carry none")


def _check_family_inputs(family, X, ds: str, C) -> None:
    """A registry router that cannot run on a dataset's inputs is refused before any fit."""
    if family is None:
        return
    from . import routers as _routers

    if not isinstance(X, _routers.RouterInputs):
        raise TypeError(
            f"router {family!r} reads routers.RouterInputs (see routers.router_inputs); inputs for dataset {ds!r} are a "
            f"{type(X).__name__}: pass RouterInputs, or an estimator / function for plain arrays"
        )
    why = _routers.missing_inputs(family, X, cost=C)
    if why is not None:
        if "confidence" in why:
            why = "needs confidence= (an [n, K] array of per-model confidences), or a pool whose answers give them"
        raise ValueError(f"router {family!r} cannot run on dataset {ds!r}: it {why}")


# ====================================================================== the held-out sweep (App. J)
@dataclasses.dataclass(frozen=True)
class PoolSweep:
    """The held-out pool-construction sweep: one row per cell (dataset, fold, size) in ``cells``, one
    row per (cell, rule) in ``rules``; ``frame()`` is ``cells``.

    cells: anchor (chosen on the calibration half), greedy F_b on calibration, the calibration
    optimum (exact, or the greedy trace's upper bound when enumeration is infeasible) and the ratio
    (a lower bound when inexact), held-out F_b of the greedy pool, of the calibration-optimal pool
    and the hindsight test optimum (not deployable), the random-subset distribution on the test
    half (mean, p05, p95, share of draws strictly below greedy, share tied), and router gain /
    relative cost per rule when a router is given.
    """

    cells: pd.DataFrame
    rules: pd.DataFrame
    settings: dict
    splits: dict  # dataset -> bool[n_folds, n] test masks; dataset -> item positions in ``items``
    items: dict

    def frame(self) -> pd.DataFrame:
        return self.cells

    def summary(self) -> pd.DataFrame:
        """Per (dataset, size): mean and min greedy/optimum ratio, mean held-out F_b per rule, the mean
        random p05/mean/p95, the share of folds where greedy beats the random p95, the mean share of
        random draws greedy beats, and router gains when present."""
        c = self.cells
        g = c.groupby(["dataset", "size"], sort=False)
        out = g.agg(
            folds=("fold", "size"),
            ratio_mean=("ratio", "mean"),
            ratio_min=("ratio", "min"),
            ratio_exact=("optimum_exact", "mean"),
            greedy_cal=("greedy_cal", "mean"),
            greedy_test=("greedy_test", "mean"),
            optpool_test=("optpool_test", "mean"),
            hindsight_test=("hindsight_test", "mean"),
            random_mean=("random_mean", "mean"),
            random_p05=("random_p05", "mean"),
            random_p95=("random_p95", "mean"),
            above_p95=("above_p95", "mean"),
            beats_random=("beats_random", "mean"),
        )
        wide = self.rules.pivot_table(index=["dataset", "size"], columns="rule", values="test", aggfunc="mean", sort=False)
        wide.columns = [f"{r}_test" for r in wide.columns]
        out = out.join(wide.drop(columns=[c for c in ("greedy_test", "exhaustive_test") if c in wide.columns]))
        if "router_gain" in self.rules and self.rules["router_gain"].notna().any():
            rg = self.rules.pivot_table(index=["dataset", "size"], columns="rule", values="router_gain", aggfunc="mean", sort=False)
            rg.columns = [f"{r}_router_gain" for r in rg.columns]
            out = out.join(rg)
        for col in ("pool_cost_ratio", "routed_cost_ratio"):
            if col in self.rules and self.rules[col].notna().any():
                rc = self.rules.pivot_table(index=["dataset", "size"], columns="rule", values=col, aggfunc="mean", sort=False)
                rc.columns = [f"{r}_{col}" for r in rc.columns]
                out = out.join(rc)
        return out.reset_index()

    def table10(self, size: int = 2) -> pd.DataFrame:
        """Held-out F_b at one size per dataset (002 Table 10 analog): mean over folds of every rule,
        the random-subset mean, the calibration-optimal pool ("exhaustive") and the hindsight optimum
        on the test half (not deployable)."""
        r = self.rules[self.rules["size"] == size]
        if r.empty:
            raise ValueError(f"size={size} is not in the sweep's size grid")
        wide = r.pivot_table(index="dataset", columns="rule", values="test", aggfunc="mean", sort=False)
        c = self.cells[self.cells["size"] == size].groupby("dataset", sort=False)
        wide["random"] = c["random_mean"].mean()
        wide["hindsight"] = c["hindsight_test"].mean()
        order = [x for x in ("greedy", "accuracy", "diversity", "kmedoids", "dpp", "random", "exhaustive", "hindsight") if x in wide]
        out = wide[order].reset_index()
        out.columns.name = None
        return out

    def table9(self, size: int = 2, rules: Sequence[str] = ("greedy", "accuracy")) -> pd.DataFrame:
        """002 Table 9 analog at one size: per dataset and rule the mean held-out F_b ("test
        opportunity"), the mean greedy/optimum ratio on calibration (greedy rows), the mean router gain
        over the anchor and the mean relative costs (whole pool queried; routed calls)."""
        r = self.rules[(self.rules["size"] == size) & self.rules["rule"].isin(rules)]
        if r.empty:
            raise ValueError(f"size={size} is not in the sweep's size grid")
        g = r.groupby(["dataset", "rule"], sort=False).agg(
            test_opportunity=("test", "mean"), router_gain=("router_gain", "mean"),
            pool_cost_ratio=("pool_cost_ratio", "mean"), routed_cost_ratio=("routed_cost_ratio", "mean"),
        ).reset_index()
        ratio = self.cells[self.cells["size"] == size].groupby("dataset", sort=False)["ratio"].mean()
        g.insert(3, "greedy_over_optimum", np.where(g["rule"] == "greedy", g["dataset"].map(ratio), np.nan))
        return g

    def conversion(self, size: int = 2) -> pd.DataFrame:
        """Does coverage convert into router gain? One row per dataset: at ``size``, the mean held-out
        F_b of the greedy and the accuracy-ranked pools, the mean router gain over the anchor of each
        (with the standard error of the greedy gain over folds), the share of the greedy pool's
        coverage the router realises (mean gain / mean F_b; at most 1, since a router restricted to
        the pool can gain over the anchor only on items it rescues), the share of folds with a
        positive greedy gain, and ``corr``, the correlation between held-out F_b and router gain over
        every routed pool of the dataset (all sizes, rules and folds; NaN when either is constant)."""
        r = self.rules
        if "router_gain" not in r or not r["router_gain"].notna().any():
            raise ValueError("the sweep has no router gains: run pool_sweep with router=...")
        if not (r["size"] == size).any():
            raise ValueError(f"size={size} is not in the sweep's size grid")
        routed = r[r["router_gain"].notna()]
        rows = []
        for ds, d in routed.groupby("dataset", sort=False):
            at = d[d["size"] == size]
            g, a = at[at["rule"] == "greedy"], at[at["rule"] == "accuracy"]
            ok = d["test"].std() > 0 and d["router_gain"].std() > 0
            rows.append({
                "dataset": ds, "folds": int(g["fold"].nunique()),
                "greedy_test": g["test"].mean(), "accuracy_test": a["test"].mean() if len(a) else np.nan,
                "greedy_gain": g["router_gain"].mean(),
                "greedy_gain_se": g["router_gain"].std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else np.nan,
                "accuracy_gain": a["router_gain"].mean() if len(a) else np.nan,
                "realised": g["router_gain"].mean() / g["test"].mean() if g["test"].mean() > 0 else np.nan,
                "positive_folds": float((g["router_gain"] > 0).mean()) if len(g) else np.nan,
                "corr": float(np.corrcoef(d["test"], d["router_gain"])[0, 1]) if ok else np.nan,
            })
        return pd.DataFrame(rows)

    def overview(self, size: int = 2, frac: float = 0.9) -> pd.DataFrame:
        """One row per dataset: items, K, folds, the share of cells with an exact optimum, the smallest
        and mean greedy/optimum ratio over exact cells (and the smallest proven lower bound over the
        others), at ``size`` the held-out F_b of greedy and of accuracy ranking, the share of folds
        where greedy beats the random p95, the mean share of random draws it beats and how often the
        modal greedy pool recurs, and the saturation size: the smallest size whose mean calibration
        coverage reaches ``frac`` of the whole pool's (NaN when K - 1 is not in the grid)."""
        c = self.cells
        st = self.stability()
        rows = []
        for ds, d in c.groupby("dataset", sort=False):
            K = int(self.settings["K"][ds])
            ex = d[d["optimum_exact"]]
            inex = d[~d["optimum_exact"]]
            at = d[d["size"] == size]
            acc = self.rules[(self.rules["dataset"] == ds) & (self.rules["size"] == size) & (self.rules["rule"] == "accuracy")]
            curve = d.groupby("size")["greedy_cal"].mean()
            sat = curve.index[curve >= frac * curve.loc[K - 1]].min() if (K - 1) in curve.index and curve.loc[K - 1] > 0 else np.nan
            sg = st[(st["dataset"] == ds) & (st["size"] == size) & (st["rule"] == "greedy")]
            rows.append({
                "dataset": ds, "items": int(d["n_cal"].iloc[0] + d["n_test"].iloc[0]), "K": K,
                "folds": int(d["fold"].nunique()), "exact_share": float(d["optimum_exact"].mean()),
                "ratio_min": float(ex["ratio"].min()) if len(ex) else np.nan,
                "ratio_mean": float(ex["ratio"].mean()) if len(ex) else np.nan,
                "ratio_lower_bound_min": float(inex["ratio"].min()) if len(inex) else np.nan,
                "greedy_test": float(at["greedy_test"].mean()) if len(at) else np.nan,
                "accuracy_test": float(acc["test"].mean()) if len(acc) else np.nan,
                "above_p95": float(at["above_p95"].mean()) if len(at) else np.nan,
                "beats_random": float(at["beats_random"].mean()) if len(at) else np.nan,
                "greedy_modal_share": float(sg["modal_pool_share"].iloc[0]) if len(sg) else np.nan,
                "full_pool_cal": float(curve.loc[K - 1]) if (K - 1) in curve.index else np.nan,
                "saturation_size": float(sat),
            })
        return pd.DataFrame(rows)

    def stability(self) -> pd.DataFrame:
        """How often the same pool is chosen across folds, per (dataset, size, rule): the share of folds
        choosing the most frequent pool (anchor included), the mean pairwise Jaccard similarity of the
        chosen pools, and the share of folds with the most frequent anchor."""
        rows = []
        for (ds, s, rule), d in self.rules.groupby(["dataset", "size", "rule"], sort=False):
            pools = d["pool"].tolist()
            K = int(self.settings["K"][ds])
            M = np.zeros((len(pools), K))
            for i, p in enumerate(pools):
                M[i, list(p)] = 1
            inter = M @ M.T
            sz = M.sum(axis=1)
            union = sz[:, None] + sz[None, :] - inter
            iu = np.triu_indices(len(pools), 1)
            jac = float((inter[iu] / union[iu]).mean()) if iu[0].size else 1.0
            vc = pd.Series([tuple(p) for p in pools]).value_counts()
            rows.append(
                {
                    "dataset": ds,
                    "size": s,
                    "rule": rule,
                    "folds": len(pools),
                    "modal_pool_share": float(vc.iloc[0] / len(pools)),
                    "distinct_pools": int(vc.size),
                    "mean_jaccard": jac,
                    "modal_anchor_share": float(d["anchor"].value_counts().iloc[0] / len(d)),
                }
            )
        return pd.DataFrame(rows)


def _split_datasets(data, by, tau):
    """[(name, X, names, item positions in the source, pool or None)]."""
    if isinstance(data, Mapping):
        out = []
        for name, d in data.items():
            X, names = outcome_matrix(d, tau=tau, name=f"data[{name!r}]")
            out.append((str(name), X, names, np.arange(X.shape[0]), d if isinstance(d, Pool) else None))
        if not out:
            raise ValueError("data is an empty mapping; give at least one dataset")
        return out
    X, names = outcome_matrix(data, tau=tau, name="data")
    pool = data if isinstance(data, Pool) else None
    if isinstance(by, str):
        if pool is not None and by in pool.prompts.columns:
            col = pool.prompts[by].astype(str).to_numpy()
            levels = list(dict.fromkeys(col))
            return [(lvl, X[col == lvl], names, np.flatnonzero(col == lvl), pool) for lvl in levels]
        if by != "dataset":  # the default splits only when the column exists
            where = f"columns {list(pool.prompts.columns)}" if pool is not None else "no prompt table (data is a matrix)"
            raise ValueError(f"by={by!r} is not a prompt-table column ({where}); pass a column name or an array of labels")
    elif by is not None:
        labels = np.asarray(by)
        if labels.shape != (X.shape[0],):
            raise ValueError(f"by must be a prompt-table column of the pool or an array of {X.shape[0]} dataset labels")
        labels = labels.astype(str)
        levels = list(dict.fromkeys(labels))
        return [(lvl, X[labels == lvl], names, np.flatnonzero(labels == lvl), None) for lvl in levels]
    return [("all", X, names, np.arange(X.shape[0]), pool)]


def _fold_masks(n: int, n_folds: int, test_fraction: float, rng) -> np.ndarray:
    m = min(max(int(round(test_fraction * n)), 1), n - 1)
    order = np.argsort(rng.random((n_folds, n)), axis=1)
    T = np.zeros((n_folds, n), dtype=bool)
    np.put_along_axis(T, order[:, :m], True, axis=1)
    return T


def _prefix_counts(cols: np.ndarray, orders: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """orders int[F, R, L]: member orders; Z uint64[F, H, W]. Returns int[F, H, R, L], the count of
    the OR of the first t + 1 members within Z (one step per position, vectorised over F and R)."""
    F, R, L = orders.shape
    H = Z.shape[1]
    acc = np.zeros((F, R, cols.shape[1]), dtype=np.uint64)
    out = np.empty((F, H, R, L), dtype=np.int64)
    for t in range(L):
        acc |= cols[orders[:, :, t]]
        out[:, :, :, t] = popcount(acc[:, None, :, :] & Z[:, :, None, :])
    return out


def pool_sweep(data, *, sizes=None, n_folds: int = 40, n_random: int = 200, test_fraction: float = 0.5,
               anchor="best", by="dataset", tau=None, router=None, inputs=None, confidence=None, embed: str = "auto", cost=None,
               baselines: Sequence[str] = ("accuracy", "diversity", "kmedoids", "dpp"),
               router_rules: Sequence[str] = ("greedy", "accuracy"), max_subsets: int = _DEFAULT_MAX_SUBSETS,
               max_nodes: int = 0, seed=0, progress: bool = False) -> PoolSweep:
    """The held-out sweep of 002 App. J: for each dataset, ``n_folds`` random splits into a calibration
    part and a test part (``test_fraction``); on calibration the anchor (``"best"``: most accurate, or
    fixed by name/index), the greedy pools for every size, the exhaustive optimum (enumerated when at
    most ``max_subsets`` subsets, else bounded by the greedy trace) and the baseline pools; on the
    test part F_b of each pool, the hindsight optimum and ``n_random`` random pools per cell. Where
    enumeration is infeasible, ``max_nodes > 0`` runs branch and bound per cell (calibration optimum
    and hindsight optimum) within that node budget; cells it does not finish keep an upper bound.

    ``data``: a Pool (split into datasets by the prompt column ``by``; k > 1 needs ``tau``), a
    mapping name -> Pool/bool matrix, or one bool[n, K] (``by`` may then be an array of labels).
    ``router``: None (no router gain), ``"auto"`` (``routers.make_router("max_confidence")`` when
    ``confidence`` [n, K] is given, else ``routers.make_router("embed_knn")``), any other
    ``routers.FAMILIES`` name, an estimator with fit(X, Y) / predict(X) -> member index (cloned per
    fit), or a function (X_cal, Y_cal, X_test) -> member index. It is fitted on the calibration part
    restricted to the pool (anchor + members, in index order; Y = their outcomes, and per-member
    inputs such as confidences restricted to the same columns) and predicts an index into those
    columns; its held-out accuracy minus the anchor's is the router gain. A registry router sees
    ``inputs`` if given, else ``routers.router_inputs(pool, embed=sweep_embedding(pool, embed))``
    (``embed="cached"``: the pool's embeddings, MiniLM only from the cache, else TF-IDF + SVD);
    post-inference families see the confidences (``confidence``, else the pool's answers).
    ``settings["inputs"]`` records per dataset which embedding was used. With costs (``cost`` [n, K]
    or [K], else the pool's) the relative cost of the pool (all members queried, as a confidence
    router must) and of the routed calls, both over the anchor's, are reported; registry routers
    are fitted with the members' costs (they choose by utility alone: lambda = 0).
    """
    n_folds = check_int(n_folds, "n_folds", minimum=1)
    n_random = check_int(n_random, "n_random", minimum=1)
    test_fraction = check_prob(test_fraction, "test_fraction", open_low=True, open_high=True)
    max_subsets = check_int(max_subsets, "max_subsets", minimum=1)
    max_nodes = check_int(max_nodes, "max_nodes", minimum=0)
    for r in baselines:
        if r not in BASELINES or r == "random":
            raise ValueError(f"baselines must be among {BASELINES[:-1]} (random subsets are always drawn), got {r!r}")
    for r in router_rules:
        if r not in RULES:
            raise ValueError(f"router_rules must be among {RULES}, got {r!r}")
    rng = as_rng(seed)
    parts = _split_datasets(data, by, tau)
    n_total = sum(p[3].size for p in parts)  # rows of the source that item positions index
    kind, maker, from_pool, family = _resolve_router(router, confidence, embed)
    sources: dict = {}
    input_cache: dict = {}
    cells, rules = [], []
    Ks, splits, items = {}, {}, {}
    from tqdm.auto import tqdm

    bar = tqdm(total=len(parts) * n_folds, desc="pool sweep", disable=not progress, leave=False)
    for ds, X, names, pos, dpool in parts:
        n, K = X.shape
        ds_conf = confidence[ds] if isinstance(confidence, Mapping) else confidence
        n_source = n if isinstance(data, Mapping) else n_total
        ds_inputs = _dataset_inputs(kind, family, inputs, from_pool, ds, dpool, input_cache, ds_conf, n_source, K)
        C = _dataset_costs(cost, ds, pos, n, K, dpool)
        if kind is not None:
            _check_family_inputs(family, ds_inputs, ds, C)
            sources[ds] = getattr(ds_inputs, "source", type(ds_inputs).__name__)
        Ks[ds] = K
        if n < 2:
            raise ValueError(f"dataset {ds!r} has {n} item(s); a calibration/test split needs at least 2")
        grid = check_sizes(sizes, K)
        smax = int(grid.max())
        T = _fold_masks(n, n_folds, test_fraction, rng)
        cal = ~T
        splits[ds], items[ds] = T, pos
        if isinstance(anchor, str) and anchor == "best":
            acc = (X[None, :, :] & cal[:, :, None]).sum(axis=1)
            anchors = np.argmax(acc, axis=1)
        else:
            anchors = np.full(n_folds, resolve_anchor(anchor, X, names), dtype=np.int64)
        fails = ~X[:, anchors].T  # [F, n]
        Z = pack_bits(np.stack([fails & cal, fails & T], axis=1))  # [F, 2, W]
        n_cal, n_test = cal.sum(axis=1), T.sum(axis=1)
        cols = pack_bits(X.T)
        # greedy (calibration), its held-out counts
        order, gains, ub = _greedy_core(cols, Z[:, 0], anchors, smax)
        gcounts = _prefix_counts(cols, order[:, None, :], Z)[:, :, 0, :]  # [F, 2, smax]
        # exhaustive optimum on calibration where feasible, hindsight optimum on test
        opt_cal = np.full((n_folds, smax), -1, dtype=np.int64)
        opt_test = np.full((n_folds, smax), -1, dtype=np.int64)
        hind = np.full((n_folds, smax), -1, dtype=np.int64)
        opt_sets: dict[int, np.ndarray] = {}
        feasible = [s for s in range(1, smax + 1) if _n_subsets(K, s) <= max_subsets]
        if feasible:
            smax_ex = max(feasible)
            for s, combos, ors in _subsets_by_size(cols, smax_ex):
                has = np.zeros((combos.shape[0], K), dtype=bool)
                has[np.arange(combos.shape[0])[:, None], combos] = True
                bad = has[:, anchors].T  # [F, C]
                cc = _counts_chunked(ors, Z[:, 0])
                ct = _counts_chunked(ors, Z[:, 1])
                cc[bad] = -1
                ct[bad] = -1
                arg = np.argmax(cc, axis=1)
                opt_cal[:, s - 1] = cc[np.arange(n_folds), arg]
                opt_test[:, s - 1] = ct[np.arange(n_folds), arg]
                hind[:, s - 1] = ct.max(axis=1)
                opt_sets[s] = combos[arg]
        upper_cal = ub.copy()
        if max_nodes > 0 and any(int(s) not in opt_sets for s in grid):
            t_order, t_gains, _ = _greedy_core(cols, Z[:, 1], anchors, smax)
            for s in (int(s) for s in grid if int(s) not in opt_sets):
                sets = np.full((n_folds, s), -1, dtype=np.int64)
                for f in range(n_folds):
                    b = int(anchors[f])
                    best, bset, up, ok, _ = _branch_and_bound(cols, Z[f, 0], b, s, order[f, :s], int(gcounts[f, 0, s - 1]), max_nodes)
                    upper_cal[f, s - 1] = min(upper_cal[f, s - 1], up)
                    hb, _, _, hok, _ = _branch_and_bound(cols, Z[f, 1], b, s, t_order[f, :s], int(t_gains[f, :s].sum()), max_nodes)
                    if ok and hok:
                        m = _pad_set(bset, s, [j for j in range(K) if j != b])
                        sets[f] = m
                        opt_cal[f, s - 1] = best
                        opt_test[f, s - 1] = int(popcount(np.bitwise_or.reduce(cols[list(m)], axis=0) & Z[f, 1]))
                        hind[f, s - 1] = hb
                opt_sets[s] = sets
        # baselines
        rule_orders, kmed = {}, {}
        for r in baselines:
            if r in ("accuracy", "diversity", "dpp"):
                fn = {"accuracy": _order_accuracy, "diversity": _order_diversity, "dpp": _order_dpp}[r]
                rule_orders[r] = np.stack([fn(X[cal[f]], int(anchors[f])) for f in range(n_folds)])[:, :smax]
        nested = list(rule_orders)
        bcounts = _prefix_counts(cols, np.stack([rule_orders[r] for r in nested], axis=1), Z) if nested else None
        if "kmedoids" in baselines:
            for s in grid:
                sets = np.stack([_kmedoids_set(X[cal[f]], int(anchors[f]), int(s)) for f in range(n_folds)])
                ors = np.bitwise_or.reduce(cols[sets], axis=1)  # [F, W]
                kmed[int(s)] = (sets, popcount(ors[:, None, :] & Z))  # [F, 2]
        # random subsets: nested prefixes of random permutations of the candidates
        keys = rng.random((n_folds, n_random, K))
        keys[np.arange(n_folds), :, anchors] = np.inf
        perm = np.argsort(keys, axis=2)[:, :, :smax]
        rcounts = _prefix_counts(cols, perm, Z[:, 1:2])[:, 0]  # [F, R, smax] test counts
        sets_by_rule = {}
        for s in grid:
            s = int(s)
            d = {"greedy": order[:, :s]}
            if s in opt_sets:
                d["exhaustive"] = opt_sets[s]
            for r in nested:
                d[r] = rule_orders[r][:, :s]
            if s in kmed:
                d["kmedoids"] = kmed[s][0]
            sets_by_rule[s] = d
        # cells, vectorised over folds x sizes
        gi = grid - 1
        fi = np.repeat(np.arange(n_folds), gi.size)
        si = np.tile(gi, n_folds)
        nc, nt = n_cal[fi].astype(float), n_test[fi].astype(float)
        g_cal, g_test = gcounts[fi, 0, si], gcounts[fi, 1, si]
        exact = opt_cal[fi, si] >= 0
        bound = np.minimum(upper_cal[fi, si], np.floor(g_cal / GREEDY_BOUND + 1e-9).astype(np.int64))
        optc = np.where(exact, opt_cal[fi, si], bound)
        rc = rcounts[fi, :, si]  # [cells, R] integer counts: exact comparisons, then shares
        p05, p95 = np.quantile(rc, [0.05, 0.95], axis=1) / nt
        cells.append(pd.DataFrame({
            "dataset": ds, "fold": fi, "size": si + 1, "anchor": np.asarray(names, dtype=object)[anchors[fi]],
            "n_cal": n_cal[fi], "n_test": n_test[fi],
            "greedy": [" + ".join(names[j] for j in order[f, : i + 1]) for f, i in zip(fi, si, strict=True)],
            "greedy_cal": g_cal / nc, "optimum_cal": optc / nc, "optimum_exact": exact,
            "ratio": np.where(optc > 0, g_cal / np.maximum(optc, 1), 1.0),
            "greedy_test": g_test / nt,
            "optpool_test": np.where(exact, opt_test[fi, si] / nt, np.nan),
            "hindsight_test": np.where(exact, hind[fi, si] / nt, np.nan),
            "random_mean": rc.mean(axis=1) / nt, "random_p05": p05, "random_p95": p95,
            "beats_random": (rc < g_test[:, None]).mean(axis=1), "ties_random": (rc == g_test[:, None]).mean(axis=1),
            "above_p95": g_test > np.quantile(rc, 0.95, axis=1),
        }))
        # one row per (cell, rule): members, calibration and held-out F_b, router gain, relative cost
        gain_cache: dict = {}
        for s in grid:
            s = int(s)
            i = s - 1
            counts = {"greedy": gcounts[:, :, i]}
            if s in opt_sets:
                counts["exhaustive"] = np.stack([opt_cal[:, i], opt_test[:, i]], axis=1)
            for k_, r in enumerate(nested):
                counts[r] = bcounts[:, :, k_, i]
            if s in kmed:
                counts["kmedoids"] = kmed[s][1]
            for rule, sets in sets_by_rule[s].items():
                cnt = counts[rule]
                for f in range(n_folds):
                    if sets[f][0] < 0:  # no exact optimum in this cell
                        continue
                    b = int(anchors[f])
                    m = sorted(int(j) for j in sets[f])
                    pool_members = tuple(sorted([b] + m))
                    row = {
                        "dataset": ds, "fold": f, "size": s, "rule": rule, "anchor": names[b],
                        "members": " + ".join(names[j] for j in m), "pool": pool_members,
                        "cal": cnt[f, 0] / n_cal[f], "test": cnt[f, 1] / n_test[f],
                        "router_gain": np.nan, "pool_cost_ratio": np.nan, "routed_cost_ratio": np.nan,
                    }
                    if C is not None:
                        base_c = C[T[f], b].mean()
                        row["pool_cost_ratio"] = float(C[T[f]][:, list(pool_members)].mean(axis=0).sum() / base_c) if base_c > 0 else np.nan
                    if kind is not None and rule in router_rules:
                        key = (f, pool_members)
                        if key not in gain_cache:
                            gain_cache[key] = _router_gain(kind, maker, X, pos, ds_inputs, cal[f], T[f], b, pool_members, C)
                        row["router_gain"], routed = gain_cache[key]
                        if C is not None:
                            row["routed_cost_ratio"] = routed
                    rules.append(row)
        bar.update(n_folds)
    bar.close()
    settings = {
        "n_folds": n_folds, "n_random": n_random, "test_fraction": test_fraction, "anchor": anchor, "tau": tau,
        "router": None if router is None else (router if isinstance(router, str) else type(router).__name__),
        "router_family": family, "embed": embed, "inputs": sources,
        "baselines": tuple(baselines), "max_subsets": max_subsets, "max_nodes": max_nodes, "K": Ks,
    }
    cells_df = pd.concat(cells, ignore_index=True).sort_values(["dataset", "fold", "size"], kind="stable", key=_dataset_order(parts))
    rules_df = pd.DataFrame(rules).sort_values(["dataset", "fold", "size"], kind="stable", key=_dataset_order(parts))
    return PoolSweep(cells_df.reset_index(drop=True), rules_df.reset_index(drop=True), settings, splits, items)


def _dataset_order(parts):
    rank = {p[0]: i for i, p in enumerate(parts)}

    def key(col: pd.Series) -> pd.Series:
        return col.map(rank) if col.name == "dataset" else col

    return key


def _dataset_costs(cost, ds: str, pos: np.ndarray, n: int, K: int, dpool: Pool | None = None):
    """Per-item costs [n, K] of one dataset of a sweep (None without costs); validated like model_costs.
    Without ``cost``, a dataset that is a Pool with costs uses its own."""
    if cost is None:
        if dpool is not None and dpool.cost is not None:
            cost = dpool.cost
        else:
            return None
    if isinstance(cost, Mapping):
        if ds not in cost:
            return None
        C = np.asarray(cost[ds], dtype=float)
        C = np.broadcast_to(C, (n, K)) if C.shape == (K,) else C
    else:
        C = np.asarray(cost, dtype=float)
        if C.shape == (K,):
            C = np.broadcast_to(C, (n, K))
        elif C.ndim == 2 and C.shape[1] == K and C.shape[0] > pos.max():
            C = C[pos]
    model_costs(C, n, K)  # shape, NaN and sign checks with clear messages
    return np.asarray(C, dtype=float)


def _router_gain(kind, maker, X, pos, inputs, cal, test, b, pool, C):
    """Held-out accuracy of the router restricted to ``pool`` minus the anchor's, and the routed cost
    ratio (mean cost of the called members over the anchor's) when costs exist.

    The router is fitted on the calibration items with Y = the outcomes of the pool's members
    (column j = member ``pool[j]``; per-member inputs restricted the same way) and predicts, for
    each test item, an index into those columns. Registry routers also get the members' costs."""
    members = np.asarray(pool, dtype=np.int64)
    ci, ti = np.flatnonzero(cal), np.flatnonzero(test)
    K = X.shape[1]
    Xc = _member_columns(_take(inputs, pos[ci]), members, K)
    Xt = _member_columns(_take(inputs, pos[ti]), members, K)
    Y = X[np.ix_(ci, members)].astype(float)
    if kind in ("registry", "estimator"):
        r = maker()
        if kind == "registry" and C is not None:
            r.fit(Xc, Y, cost=C[np.ix_(ci, members)])
        else:
            r.fit(Xc, Y)
        choice = np.asarray(r.predict(Xt))
    else:
        choice = np.asarray(maker(Xc, Y, Xt))
    if choice.shape != (ti.size,) or not np.issubdtype(choice.dtype, np.integer) or choice.min() < 0 or choice.max() >= members.size:
        raise ValueError(
            f"the router must return one member index in [0, {members.size}) per test item; got shape {choice.shape}"
        )
    picked = members[choice]
    gain = float(X[ti, picked].mean() - X[ti, b].mean())
    routed = np.nan
    if C is not None:
        base = C[ti, b].mean()
        routed = float(C[ti, picked].mean() / base) if base > 0 else np.nan
    return gain, routed
