"""Baseline pools beside greedy and exhaustive: individual-accuracy ranking, lowest pairwise error
correlation, k-medoids on error vectors (the ``kmedoids`` package), greedy DPP MAP on error
vectors, and uniformly random subsets (with the distribution of their F_b)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._result import Result
from ..._validate import as_rng, check_int
from .coverage import _row_mask, _targets, pack_bits, popcount
from .inputs import check_size, outcome_matrix, resolve_anchor

__all__ = ["BASELINES", "RULES", "baseline_pool", "RandomPools", "random_pools"]

#: Baseline pool rules beside greedy and exhaustive (random is drawn many times per cell).
BASELINES = ("accuracy", "diversity", "kmedoids", "dpp", "random")
#: Every deterministic rule a sweep evaluates per cell.
RULES = ("greedy", "exhaustive", "accuracy", "diversity", "kmedoids", "dpp")


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
