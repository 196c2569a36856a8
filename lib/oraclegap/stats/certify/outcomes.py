"""Outcome matrices for the certificates: one 0/1 outcome per (item, model) from an array or a k = 1
:class:`~oraclegap.pool.Pool` (:func:`outcomes_from_pool` reduces a k > 1 pool), and the input
checks they share: names, 0/1 vectors, a finite signal's levels and the outcomes of router choices.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..._validate import as_bool_array
from ...pool import Pool, check_pool


def _as_outcomes(R, name: str = "R") -> np.ndarray:
    """bool[n, K] from a 0/1 array or a k = 1 Pool; clear errors for empty or wrong-rank input."""
    if isinstance(R, Pool):
        if R.k != 1:
            raise ValueError(
                f"{name} is a Pool with k={R.k} draws per cell; reduce it to one outcome per cell first "
                "with outcomes_from_pool(pool, draw=j) or outcomes_from_pool(pool, tau=t)"
            )
        return R.verdicts[:, :, 0]
    arr = np.asarray(R)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d outcome matrix [n_items, K_models], got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} has no items (shape {arr.shape}); at least one item is needed")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has K=0 models (shape {arr.shape}); at least one model is needed")
    return as_bool_array(arr, name, ndim=2)


def outcomes_from_pool(pool: Pool, *, draw: int | None = None, tau: float | None = None) -> np.ndarray:
    """One 0/1 outcome per (item, policy) from a Pool: bool[n, M].

    k = 1: the only draw. k > 1: ``draw=j`` takes draw j (a single-commit outcome; with a
    seed-aligned pool every policy's draw j shares a seed), or ``tau=t`` takes coverage at
    threshold t (c_im >= need(t, k) = max(1, ceil(t*k - 1e-9))). Exactly one of them for k > 1.
    This is :meth:`oraclegap.pool.Pool.outcomes`, with a type check on ``pool``.
    """
    check_pool(pool)
    return pool.outcomes(tau=tau, draw=draw)


def _names(names, size: int, arg: str, prefix: str) -> list[str]:
    if names is None:
        return [f"{prefix}{j}" for j in range(size)]
    names = [str(x) for x in names]
    if len(names) != size:
        raise ValueError(f"{arg} has {len(names)} entries but there are {size}")
    return names


def _outcomes_named(R, model_names) -> tuple[np.ndarray, list[str]]:
    """The outcomes bool[n, K] of ``R`` (a 0/1 matrix or a k = 1 Pool) and the K model names:
    ``model_names``, else a Pool's policy names, else m0, m1, ..."""
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    return X, _names(model_names, X.shape[1], "model_names", "m")


def _check_binary_vector(x, name: str, n: int | None = None) -> np.ndarray:
    a = as_bool_array(np.asarray(x), name, ndim=1)
    if a.size == 0:
        raise ValueError(f"{name} is empty; at least one item is needed")
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{name} has length {a.shape[0]} but the other outcomes have length {n}")
    return a


def _signal_codes(signal, n: int, levels) -> tuple[np.ndarray, list]:
    z = np.asarray(signal)
    if z.ndim != 1 or z.shape[0] != n:
        raise ValueError(f"signal must be a 1-d array of length n={n}, got shape {z.shape}")
    zs = pd.Series(z)
    if zs.isna().any():
        raise ValueError("signal has missing values; every item needs a level (add an explicit 'missing' level)")
    if levels is None:
        levels = sorted(zs.unique().tolist(), key=lambda v: (str(type(v)), v))
    else:
        levels = list(levels)
        if len(set(levels)) != len(levels):
            raise ValueError("levels must be distinct")
    codes = pd.Index(levels).get_indexer(zs)
    if (codes < 0).any():
        bad = zs[codes < 0].unique()[:5].tolist()
        raise ValueError(f"signal takes values outside levels: {bad}")
    if not levels:
        raise ValueError("signal has no levels")
    return codes, levels


def _policy_outcomes(X: np.ndarray, choices, policy_names) -> tuple[np.ndarray, list[str]]:
    """S[n, L'] = R[i, choice_l(i)] for router choice arrays; names for them."""
    n, K = X.shape
    if choices is None:
        return np.zeros((n, 0), dtype=bool), []
    if isinstance(choices, Mapping):
        names = [str(k) for k in choices]
        arrs = [np.asarray(v) for v in choices.values()]
        if not arrs:
            return np.zeros((n, 0), dtype=bool), []
        for nm, a in zip(names, arrs, strict=True):
            if a.shape != (n,):
                raise ValueError(f"choices[{nm!r}] must have length n={n}, got shape {a.shape}")
        ch = np.stack(arrs, axis=1)
    else:
        ch = np.asarray(choices)
        if ch.ndim == 1:
            ch = ch[:, None]
        if ch.ndim != 2 or ch.shape[0] != n:
            raise ValueError(f"choices must be int[n={n}] or int[n={n}, L], got shape {ch.shape}")
        names = _names(policy_names, ch.shape[1], "policy_names", "policy")
    if ch.size and (not np.issubdtype(ch.dtype, np.integer) or ch.min() < 0 or ch.max() >= K):
        raise ValueError(f"choices must be integer model indices in [0, K={K})")
    return np.take_along_axis(X, ch.astype(int), axis=1), names
