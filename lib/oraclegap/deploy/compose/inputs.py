"""Inputs of pool construction: per-item binary outcomes from a Pool or a 0/1 matrix, the anchor
b (the most accurate model, a name or an index) and the cardinality budgets s in [1, K - 1]."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..._validate import as_bool_array, check_int
from ...pool import Pool

__all__ = ["outcome_matrix", "resolve_anchor", "check_size", "check_sizes"]


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
