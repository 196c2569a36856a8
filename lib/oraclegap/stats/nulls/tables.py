"""Count tables for the nulls of :mod:`oraclegap.stats.nulls`: the statistics they test
(:data:`STATISTICS`) and the reference laws (:data:`NULLS`), input preparation (a pool, verdicts or
counts to the count table with its movable prompts and the success counts each threshold needs),
the two random-stream keys a seed gives, the statistics of many tables at once
(:func:`table_statistics`) and the prompts no null can move (:func:`degenerate_prompts`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._result import Result
from ..._validate import check_int, check_taus
from ..coverage import as_counts, need
from ._kernels import many_table_stats

#: Statistics computed from count tables (``pass1`` has no threshold).
STATISTICS = ("L", "D", "oracle_minus_mixture", "pass1")
#: The two reference laws.
NULLS = ("redeal", "margin")


# ============================================================================ input preparation
@dataclasses.dataclass(frozen=True, eq=False)
class _Prepared:
    counts: np.ndarray  # int64 [n, M]
    k: int
    taus: np.ndarray
    needs: np.ndarray  # int64 [T]
    need_mix: np.ndarray  # int64 [T]
    active: np.ndarray  # indices of movable prompts
    totals: np.ndarray  # int64 [n_active]

    @property
    def n(self) -> int:
        return self.counts.shape[0]

    @property
    def M(self) -> int:
        return self.counts.shape[1]

    @property
    def c_active(self) -> np.ndarray:
        return np.ascontiguousarray(self.counts[self.active])


def _prepare(x, taus, k, *, min_policies: int = 2) -> _Prepared:
    c, k = as_counts(x, k)
    n, M = c.shape
    if M < min_policies:
        raise ValueError(
            f"x has {M} policy; the nulls compare members of a pool and need n_policies >= {min_policies}"
        )
    taus = check_taus(taus)
    needs = np.asarray(need(taus, k), dtype=np.int64).reshape(-1)
    need_mix = np.asarray(need(taus, M * k), dtype=np.int64).reshape(-1)
    s = c.sum(axis=1)
    active = np.flatnonzero((s > 0) & (s < M * k))
    # sorted by total: consecutive re-deals then read neighbouring alias rows (cache-friendly);
    # every statistic is invariant to the order of prompts
    active = active[np.argsort(s[active], kind="stable")]
    return _Prepared(np.ascontiguousarray(c), int(k), taus, needs, need_mix, active, np.ascontiguousarray(s[active]))


def _keys(rng: np.random.Generator) -> tuple[np.uint64, np.uint64]:
    """Two stream keys: one for re-deal draws, one for the chains (always drawn in this order)."""
    kk = rng.integers(0, np.iinfo(np.uint64).max, size=2, dtype=np.uint64, endpoint=True)
    return kk[0], kk[1]


@dataclasses.dataclass(frozen=True)
class _PresetKeys:
    """The two stream keys that :func:`null_tests` would draw from a Generator, drawn beforehand
    (``_PresetKeys.draw(rng)`` consumes ``rng`` exactly as ``null_tests(..., seed=rng)`` does).
    Passed as ``seed``, the test uses them as they are: a caller that runs many tests from one
    Generator (the simulation studies) can draw every key in order and run the tests in any
    order or on any number of threads with the draws of the sequential loop."""

    redeal: np.uint64
    chain: np.uint64

    @classmethod
    def draw(cls, rng: np.random.Generator) -> _PresetKeys:
        r, c = _keys(rng)
        return cls(r, c)


def _observed_stats(prep: _Prepared) -> np.ndarray:
    return many_table_stats(prep.counts[None], prep.needs, prep.need_mix, prep.n, prep.k)[0]


def _stat_columns(statistic: str, T: int):
    i = STATISTICS.index(statistic)
    return [3 * T] if statistic == "pass1" else [i * T + t for t in range(T)]


def _check_subset(values, name: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """``values`` (one name or several) as a tuple: a non-empty subset of ``allowed`` without
    repeats, or an error naming ``name``."""
    if isinstance(values, str):
        values = (values,)
    try:
        out = tuple(values)
    except TypeError:
        raise TypeError(f"{name} must be a subset of {allowed}, got {values!r}") from None
    if not out or any(v not in allowed for v in out):
        raise ValueError(f"{name} must be a non-empty subset of {allowed}, got {values!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"{name} repeats an entry: {values!r}")
    return out


def _check_statistics(statistics) -> tuple[str, ...]:
    return _check_subset(statistics, "statistics", STATISTICS)


def _check_choice(value, name: str, choices) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def _check_nulls(nulls) -> tuple[str, ...]:
    return _check_subset(nulls, "nulls", NULLS)


# ============================================================================ statistics of tables
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class TableStatistics(Result):
    """Statistics of B count tables: ``L``, ``D``, ``oracle_minus_mixture`` as [B, T], ``pass1`` as [B]."""

    taus: np.ndarray
    L: np.ndarray
    D: np.ndarray
    oracle_minus_mixture: np.ndarray
    pass1: np.ndarray

    def frame(self) -> pd.DataFrame:
        B, T = self.L.shape
        rows = []
        for s in ("L", "D", "oracle_minus_mixture"):
            a = getattr(self, s)
            rows.append(pd.DataFrame({"table": np.repeat(np.arange(B), T), "statistic": s,
                                      "tau": np.tile(self.taus, B), "value": a.ravel()}))
        rows.append(pd.DataFrame({"table": np.arange(B), "statistic": "pass1", "tau": np.nan, "value": self.pass1}))
        return pd.concat(rows, ignore_index=True)


def _split_stats(arr: np.ndarray, taus: np.ndarray) -> TableStatistics:
    T = taus.size
    return TableStatistics(taus, arr[:, :T], arr[:, T:2 * T], arr[:, 2 * T:3 * T], arr[:, 3 * T])


def table_statistics(tables, taus, k: int) -> TableStatistics:
    """L, D, oracle-minus-mixture and the Pass@1 gap of many count tables at once.

    ``tables`` is int [B, n, M] (or one table [n, M]) of success counts out of ``k``. Values
    equal :func:`oraclegap.stats.coverage.coverage` (``.L``, ``.D``, ``.gap``) and
    :func:`oraclegap.stats.coverage.pass1_oracle_gap` on each table.
    """
    k = check_int(k, "k", minimum=1)
    taus = check_taus(taus)
    arr = np.asarray(tables)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or 0 in arr.shape:
        raise ValueError(f"tables must be a non-empty int array [B, n, M] or [n, M], got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"tables must hold integer success counts, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() > k:
        raise ValueError(f"tables must hold counts in [0, k={k}]")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    M = arr.shape[2]
    needs = np.asarray(need(taus, k), dtype=np.int64).reshape(-1)
    need_mix = np.asarray(need(taus, M * k), dtype=np.int64).reshape(-1)
    return _split_stats(many_table_stats(arr, needs, need_mix, arr.shape[1], k), taus)


def degenerate_prompts(x, k: int | None = None) -> dict:
    """Prompts that no null can move: all responses wrong (``all_wrong``) or all right (``all_right``)."""
    c, k = as_counts(x, k)
    s = c.sum(axis=1)
    M = c.shape[1]
    return {"all_wrong": int((s == 0).sum()), "all_right": int((s == M * k).sum()),
            "degenerate": int(((s == 0) | (s == M * k)).sum()), "n_prompts": int(c.shape[0])}

