"""The parts of a pool and their checks: the success threshold ``need``, the prompt and policy
tables, the per-response arrays and the answers, as :class:`oraclegap.pool.Pool` validates them.

Every function here normalises one constructor argument of a pool or raises ``ValueError``
naming it; the default tables are memoised by size (simulations build thousands of pools of a
few shapes).
"""

from __future__ import annotations

import collections
import re
import threading
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

ALIGNMENTS = ("seed-aligned", "independent", "unknown")
PROMPT_COLUMNS = ("id", "text", "dataset", "split")
POLICY_COLUMNS = ("name", "base", "dataset", "recipe", "seed", "size", "cost")
#: Tolerance of the success threshold: c successes out of k reach tau when c >= tau k - 1e-9.
_NEED_EPS = 1e-9


def need(tau, k):
    """Successes out of ``k`` that a raw frequency needs to reach ``tau``: max(1, ceil(tau*k - 1e-9)).

    Vectorised over ``tau`` (and ``k``). At k = 16: tau = 0.05 needs 1, tau = 0.10 needs 2.
    Every tau in (0, 1] needs at least one success: a covered prompt has c/k >= tau > 0.
    (Defined on the pool's floor for :meth:`Pool.outcomes`; :func:`oraclegap.stats.coverage.need`
    is this function.)
    """
    t = np.asarray(tau, dtype=float)
    if np.any(~((t > 0) & (t <= 1))):
        raise ValueError(f"tau must lie in (0, 1], got {tau!r}")
    kk = np.asarray(k)
    if not np.issubdtype(kk.dtype, np.integer) or np.any(kk < 1):
        raise ValueError(f"k must be a positive integer, got {k!r}")
    out = np.maximum(np.ceil(t * kk - _NEED_EPS), 1).astype(np.int64)
    return int(out) if out.ndim == 0 else out


#: The default tables already normalised (simulations build thousands of pools of a few shapes):
#: (key, standard columns, n) -> DataFrame, handed out as copies; the most recent few.
_DEFAULT_TABLES: collections.OrderedDict = collections.OrderedDict()
_DEFAULT_TABLES_SIZE = 16
_DEFAULT_TABLES_LOCK = threading.Lock()  # the audit's sections and the studies build pools on threads


def _table(table, n: int, key: str, standard: Sequence[str], what: str, arg: str, default_ids) -> pd.DataFrame:
    """Normalise a prompt or policy table: ``key`` column of unique strings, standard columns present.
    ``default_ids(n)`` gives the ids when the table has none (its tables are memoised by size)."""
    if table is None:
        memo = (key, tuple(standard), n)
        with _DEFAULT_TABLES_LOCK:
            hit = _DEFAULT_TABLES.get(memo)
            if hit is not None:
                _DEFAULT_TABLES.move_to_end(memo)
        if hit is None:  # built outside the lock; a race builds the same table twice
            hit = _table(pd.DataFrame({key: default_ids(n)}), n, key, standard, what, arg, default_ids)
            with _DEFAULT_TABLES_LOCK:
                _DEFAULT_TABLES[memo] = hit
                while len(_DEFAULT_TABLES) > _DEFAULT_TABLES_SIZE:
                    _DEFAULT_TABLES.popitem(last=False)
        return hit.copy()
    if isinstance(table, pd.DataFrame):
        df = table.reset_index(drop=True).copy()
    elif isinstance(table, Mapping):
        df = pd.DataFrame(dict(table))
    else:
        # a plain list of ids / names
        vals = list(table)
        df = pd.DataFrame({key: vals})
    if len(df) != n:
        raise ValueError(f"{arg} has {len(df)} rows but the verdicts have {n} {what}")
    if key not in df.columns:
        df.insert(0, key, default_ids(n))
    ids = df[key]
    if ids.isna().any():
        raise ValueError(f"{arg}['{key}'] has missing values; every {what[:-1]} needs an id")
    ids = ids.astype(str)
    dup = ids[ids.duplicated()].unique()
    if len(dup):
        raise ValueError(f"{arg}['{key}'] must be unique; duplicated: {list(dup[:5])}")
    df[key] = ids.to_numpy(dtype=object)
    for col in standard:
        if col not in df.columns:
            df[col] = None
    ordered = list(standard) + [c for c in df.columns if c not in standard]
    return df[ordered].reset_index(drop=True)


def _prompt_ids(n: int) -> list[str]:
    """The default prompt ids p0, p1, ..."""
    return [f"p{i}" for i in range(n)]


def _policy_names(M: int) -> list[str]:
    """The default policy names m0, m1, ..."""
    return [f"m{j}" for j in range(M)]


_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _per_response(arrays, shape) -> dict[str, np.ndarray]:
    """Validated per-response arrays: a mapping of identifier -> numeric array of the verdicts'
    shape (read-only copies; integers stay integers, floats may hold NaN for "none")."""
    if arrays is None:
        return {}
    if not isinstance(arrays, Mapping):
        raise TypeError(f"per_response must be a mapping of name -> array [n, M, k], got {type(arrays).__name__}")
    out = {}
    for name, a in arrays.items():
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError(f"per_response names must be identifiers (letters, digits, _), got {name!r}")
        arr = np.asarray(a)
        if arr.shape != tuple(shape):
            raise ValueError(f"per_response[{name!r}] must have the verdicts' shape {tuple(shape)}, got {arr.shape}")
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"per_response[{name!r}] must be numeric, got dtype {arr.dtype}")
        if arr.dtype.kind == "f" and np.isinf(arr).any():
            raise ValueError(f"per_response[{name!r}] holds infinite values (use NaN for 'none')")
        arr = np.array(arr, copy=True)
        arr.setflags(write=False)
        out[name] = arr
    return out


def _text_array(a: np.ndarray) -> np.ndarray:
    """Answers as a read-only object array of Python strings (variable length; missing -> "")."""
    flat = np.asarray(a, dtype=object).ravel()
    out = np.empty(flat.shape, dtype=object)
    miss = pd.isna(flat)
    out[:] = np.where(miss, "", flat)
    if not all(type(x) is str for x in out):
        out[:] = [x if isinstance(x, str) else str(x) for x in out]
    shaped = out.reshape(a.shape)
    shaped.setflags(write=False)
    return shaped
