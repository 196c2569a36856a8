"""The null tests of :mod:`oraclegap.stats.nulls`: input preparation, the result types
(:class:`NullTest`, :class:`NullTests`, :class:`ChainDiagnostics`, :class:`SkippedTest`), the
re-deal and the margin-preserving chain, the exact margin law for tiny tables, the effective sample
size, degenerate handling, the cost model and :func:`null_tests`, with :func:`benjamini_hochberg`
over a family of them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence

import numba
import numpy as np
import pandas as pd

from ..._result import Result
from ..._validate import as_rng, check_alpha, check_int, check_taus, tau_key
from ..coverage import as_counts, need
from ..multiplicity import benjamini_hochberg_adjust
from ._kernels import (
    _REDEAL_BATCH,
    _alias,
    _stream_start,
    chain_block,
    chain_dtype,
    many_table_stats,
    redeal_stats,
    redeal_stats_parallel,
    redeal_tables,
    run_block_chains,
    run_block_chains_parallel,
)

#: Statistics computed from count tables (``pass1`` has no threshold).
STATISTICS = ("L", "D", "oracle_minus_mixture", "pass1")
#: The two reference laws.
NULLS = ("redeal", "margin")
_P_CONVENTIONS = ("paper", "plus-one")
_MOVES = ("heatbath", "metropolis")
_TOL = 1e-9
# Work (proposals, or draws x prompts x members) above which the kernels spread over threads
# (a parallel region costs tens of microseconds; 2^21 cells take several milliseconds). Results do
# not depend on the choice (one random stream per draw and per chain).
_PARALLEL_WORK = 1 << 21
# Re-dealt cells (draws x movable prompts x members) above which the re-deal spreads its batches of
# draws over threads: a cell costs a few nanoseconds, so 2^18 cells are about a millisecond of work
# against tens of microseconds for the parallel region (the 240 x 5 x 16 benchmark pool's 2000
# draws, 2.05M cells, fell just under 2^21 and ran on one thread).
_REDEAL_PARALLEL_CELLS = 1 << 18
# Longest piece of work handed to a compiled kernel in one call: proposals per chain (a few
# tenths of a second), and re-dealt cells (draws x movable prompts x members). Between calls
# Python runs, so Ctrl-C stops a long run promptly.
_CHUNK = 1 << 22
_REDEAL_CHUNK_CELLS = 1 << 25
#: Default bounds on what one call may cost: chain proposals plus re-dealt cells, and bytes of
#: memory for the draws it keeps. A request above them is refused up front (pass larger
#: ``max_proposals`` / ``max_bytes``, or None, to allow it).
DEFAULT_MAX_PROPOSALS = 10_000_000_000
DEFAULT_MAX_BYTES = 4 << 30


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


def _redeal_active_tables(prep: _Prepared, key, start: int, n_draws: int) -> np.ndarray:
    """Re-dealt rows of the movable prompts, int64 [n_draws, n_active, M]."""
    tabs = _alias(prep.M, prep.k)
    if tabs is None:  # very large M k: numpy's hypergeometric sampler, seeded from the key
        rng = np.random.default_rng([int(key), int(start)])
        out = np.empty((n_draws, prep.totals.size, prep.M), np.int64)
        g = np.broadcast_to(prep.totals, (n_draws, prep.totals.size)).copy()
        for m in range(prep.M - 1):
            r = prep.M - m
            draw = rng.hypergeometric(g, r * prep.k - g, prep.k)
            out[:, :, m] = draw
            g -= draw
        out[:, :, -1] = g
        return out
    offsets, prob, alias = tabs
    return redeal_tables(prep.totals, prep.M, prep.k, key, start, n_draws, offsets, prob, alias).astype(np.int64)


def _redeal_stats(prep: _Prepared, key, start: int, n_draws: int) -> np.ndarray:
    tabs = _alias(prep.M, prep.k)
    if tabs is None:
        tables = _redeal_active_tables(prep, key, start, n_draws)
        return many_table_stats(tables, prep.needs, prep.need_mix, prep.n, prep.k)
    offsets, prob, alias = tabs
    cells = n_draws * prep.totals.size * prep.M
    kern = redeal_stats_parallel if cells >= _REDEAL_PARALLEL_CELLS else redeal_stats
    return kern(prep.totals, prep.M, prep.k, key, start, n_draws, offsets, prob, alias, prep.needs, prep.need_mix, prep.n)


def _observed_stats(prep: _Prepared) -> np.ndarray:
    return many_table_stats(prep.counts[None], prep.needs, prep.need_mix, prep.n, prep.k)[0]


def _stat_columns(statistic: str, T: int):
    i = STATISTICS.index(statistic)
    return [3 * T] if statistic == "pass1" else [i * T + t for t in range(T)]


def _check_statistics(statistics) -> tuple[str, ...]:
    if isinstance(statistics, str):
        statistics = (statistics,)
    try:
        out = tuple(statistics)
    except TypeError:
        raise TypeError(f"statistics must be a subset of {STATISTICS}, got {statistics!r}") from None
    bad = [s for s in out if s not in STATISTICS]
    if bad or not out:
        raise ValueError(f"statistics must be a non-empty subset of {STATISTICS}, got {statistics!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"statistics repeats an entry: {statistics!r}")
    return out


def _check_choice(value, name: str, choices) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def _progress_bar(enabled: bool, total: int, desc: str, unit: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True)


def _progress(iterable, enabled: bool, **kw):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, **kw)


# ============================================================================ the result type
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class NullTest(Result):
    """One randomisation test: an observed statistic against draws from a reference law.

    ``mean`` is the null mean, ``band`` the 5th-95th percentile range of the draws (where 90% of
    randomised statistics fall; not an interval for a population quantity), ``p`` the upper-tail
    fraction of draws >= observed (``p_convention="plus-one"``: (1 + #)/(1 + B)), ``p_lower`` the
    fraction <= observed, ``excess`` = observed - mean. ``tau`` is NaN for threshold-free
    statistics. ``ess`` is the effective sample size of the draws (the draw count for
    independent draws), ``acceptance`` the chain's fraction of proposals that changed the table.
    """

    statistic: str
    tau: float
    null: str
    observed: float
    draws: np.ndarray
    p_convention: str = "plus-one"
    ess: float | None = None
    acceptance: float | None = None
    mean: float = dataclasses.field(init=False)
    band_lo: float = dataclasses.field(init=False)
    band_hi: float = dataclasses.field(init=False)
    p: float = dataclasses.field(init=False)
    p_lower: float = dataclasses.field(init=False)
    excess: float = dataclasses.field(init=False)

    def __post_init__(self):
        d = np.asarray(self.draws, dtype=float).ravel()
        if d.size == 0:
            raise ValueError("draws is empty; a null test needs at least one null draw")
        if not np.isfinite(d).all():
            raise ValueError("draws contain NaN or infinite values")
        _check_choice(self.p_convention, "p_convention", _P_CONVENTIONS)
        d = d.copy()
        d.setflags(write=False)
        obs = float(self.observed)
        ge = int((d >= obs - _TOL).sum())
        le = int((d <= obs + _TOL).sum())
        B = d.size
        if self.p_convention == "paper":
            p, pl = ge / B, le / B
        else:
            p, pl = (1 + ge) / (1 + B), (1 + le) / (1 + B)
        lo, hi = np.percentile(d, [5, 95])
        mean = float(d.mean())
        for name, val in (
            ("draws", d),
            ("observed", obs),
            ("tau", float("nan") if self.tau is None else float(self.tau)),
            ("mean", mean),
            ("band_lo", float(lo)),
            ("band_hi", float(hi)),
            ("p", float(p)),
            ("p_lower", float(pl)),
            ("excess", obs - mean),
        ):
            object.__setattr__(self, name, val)

    @property
    def n_draws(self) -> int:
        return int(self.draws.size)

    @property
    def band(self) -> tuple[float, float]:
        return (self.band_lo, self.band_hi)

    @property
    def label(self) -> str:
        t = "" if math.isnan(self.tau) else f" tau={self.tau:g}"
        return f"{self.statistic}{t} [{self.null}]"

    def frame(self) -> pd.DataFrame:
        """One tidy row (the draws themselves are left out)."""
        return pd.DataFrame(
            [
                {
                    "statistic": self.statistic,
                    "tau": self.tau,
                    "null": self.null,
                    "observed": self.observed,
                    "mean": self.mean,
                    "band_lo": self.band_lo,
                    "band_hi": self.band_hi,
                    "p": self.p,
                    "p_lower": self.p_lower,
                    "excess": self.excess,
                    "n_draws": self.n_draws,
                    "ess": np.nan if self.ess is None else self.ess,
                    "acceptance": np.nan if self.acceptance is None else self.acceptance,
                }
            ]
        )

    def to_dict(self) -> dict:
        """JSON-ready summary: mean, band, p, p_lower, excess (and ess/acceptance when known)."""
        out = {"mean": self.mean, "band": [self.band_lo, self.band_hi], "p": self.p, "p_lower": self.p_lower,
               "excess": self.excess, "n_draws": self.n_draws}
        if self.ess is not None:
            out["ess"] = self.ess
        if self.acceptance is not None:
            out["acceptance"] = self.acceptance
        return out


def _walk_results(obj, allow_p: bool = False):
    """Yield the NullTest objects (and, with ``allow_p``, bare p-values) inside nested results:
    NullTest objects, containers with ``.tests``, and iterables of either."""
    if isinstance(obj, NullTest):
        yield obj
    elif hasattr(obj, "tests"):
        for t in obj.tests:
            yield from _walk_results(t, allow_p)
    elif allow_p and isinstance(obj, (int, float, np.integer, np.floating)) and not isinstance(obj, bool):
        yield float(obj)
    elif isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        for t in obj:
            yield from _walk_results(t, allow_p)
    else:
        what = "p-values or NullTest objects" if allow_p else "NullTest objects (or containers of them)"
        raise TypeError(f"results must hold {what}, got {type(obj).__name__}")


def tests_frame(results) -> pd.DataFrame:
    """A tidy frame from many results: NullTest objects, containers with ``.tests``, or lists of either."""
    rows = [t.frame() for t in _walk_results(results)]
    if not rows:
        raise ValueError("results holds no tests")
    return pd.concat(rows, ignore_index=True)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ChainDiagnostics(Result):
    """How the margin-preserving chain ran: proposals, acceptance (fraction of proposals that
    changed the table), and the effective sample size of each retained statistic."""

    move: str
    n_chains: int
    burn_in: int
    thin: int
    n_movable: int
    proposals: int
    acceptance: float
    chain_acceptance: tuple  # per chain, over its burn-in and sampling proposals
    ess: dict  # (statistic, tau) -> ESS over all chains

    def frame(self) -> pd.DataFrame:
        rows = [
            {"statistic": s, "tau": t, "ess": e, "acceptance": self.acceptance, "move": self.move,
             "n_chains": self.n_chains, "burn_in": self.burn_in, "thin": self.thin}
            for (s, t), e in self.ess.items()
        ]
        return pd.DataFrame(rows)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class NullTests(Result):
    """The tests of several statistics and thresholds under one or both nulls.

    ``tests`` holds the tests that ran; ``skipped`` the degenerate ones that did not (each a
    :class:`SkippedTest` with its reason and what applies instead); ``notes`` remarks such as
    thresholds that give the same count rule (the same test repeated).
    """

    tests: tuple
    chain: ChainDiagnostics | None
    n_prompts: int
    n_policies: int
    k: int
    n_degenerate: int
    skipped: tuple = ()
    notes: tuple = ()

    def frame(self) -> pd.DataFrame:
        """One row per test that ran (see :meth:`skipped_frame` for the skipped ones)."""
        if not self.tests:
            raise ValueError("no test ran: every requested test is degenerate; see .skipped for the reasons")
        return tests_frame(self.tests)

    def skipped_frame(self) -> pd.DataFrame:
        """One row per skipped test: statistic, tau, null, observed, short label, reason, instead."""
        cols = ["statistic", "tau", "null", "observed", "skipped", "reason", "instead"]
        if not self.skipped:
            return pd.DataFrame(columns=cols)
        return pd.concat([t.frame() for t in self.skipped], ignore_index=True)[cols]

    def get(self, statistic: str, tau=None, null: str = "redeal") -> NullTest:
        """The test of ``statistic`` at ``tau`` (ignored for ``pass1``) under ``null``.

        Raises ``KeyError`` when there is no such test; for a skipped test the message says why.
        """
        for t in self.tests:
            if t.statistic != statistic or t.null != null:
                continue
            if math.isnan(t.tau) or (tau is not None and abs(t.tau - float(tau)) < 1e-12):
                return t
        for t in self.skipped:
            if t.statistic == statistic and t.null == null and (
                    math.isnan(t.tau) or (tau is not None and abs(t.tau - float(tau)) < 1e-12)):
                raise KeyError(f"the test of {statistic!r} at tau={tau!r} under {null!r} was skipped: {t.reason}; "
                               f"instead: {t.instead}")
        raise KeyError(f"no test of {statistic!r} at tau={tau!r} under {null!r}")

    def is_skipped(self, statistic: str, tau=None, null: str = "redeal") -> SkippedTest | None:
        """The :class:`SkippedTest` for this test, or None when it ran (or was not requested)."""
        for t in self.skipped:
            if t.statistic == statistic and t.null == null and (
                    math.isnan(t.tau) or (tau is not None and abs(t.tau - float(tau)) < 1e-12)):
                return t
        return None

    def wide(self) -> pd.DataFrame:
        """One row per (statistic, tau): observed, then mean/band/p/p_lower/excess per null.

        Skipped tests leave their null's columns empty and are named, with a short reason, in
        a ``skipped`` column (present only when some test was skipped).
        """
        cols = ["mean", "band_lo", "band_hi", "p", "p_lower", "excess"]
        order = []
        for t in list(self.tests) + list(self.skipped):
            key = (t.statistic, -1.0 if math.isnan(t.tau) else t.tau)
            if key not in order:
                order.append(key)
        first = {key: i for i, key in enumerate(order)}
        rank = {key: i for i, key in enumerate(sorted(order, key=lambda kt: (STATISTICS.index(kt[0]), first[kt])))}
        obs: dict[tuple[str, float], float] = {}
        for t in list(self.tests) + list(self.skipped):
            obs.setdefault((t.statistic, -1.0 if math.isnan(t.tau) else t.tau), t.observed)
        out = pd.DataFrame([{"statistic": s_, "tau": t_, "observed": obs[(s_, t_)]} for s_, t_ in order])
        nulls_seen = list(dict.fromkeys([t.null for t in self.tests] + [t.null for t in self.skipped]))
        for null in nulls_seen:
            vals = {(t.statistic, -1.0 if math.isnan(t.tau) else t.tau): [getattr(t, c) for c in cols]
                    for t in self.tests if t.null == null}
            arr = np.array([vals.get(key, [np.nan] * len(cols)) for key in order], dtype=float)
            for i, c in enumerate(cols):
                out[f"{null}_{c}"] = arr[:, i]
        if self.skipped:
            notes: dict = {}
            for t in self.skipped:
                key = (t.statistic, -1.0 if math.isnan(t.tau) else t.tau)
                notes.setdefault(key, []).append(f"{t.null}: {t.short}")
            out["skipped"] = ["; ".join(notes.get(key, [])) for key in order]
        out["_rank"] = [rank[key] for key in order]
        out = out.sort_values("_rank", kind="stable").drop(columns="_rank").reset_index(drop=True)
        out["tau"] = out["tau"].where(out["tau"] >= 0, np.nan)
        return out

    def to_dict(self) -> dict:
        """JSON-ready: per tau (exact keys ``repr(float(tau))``) and statistic, ``observed`` and per
        null its summary, or ``{"skipped": true, "reason", "instead"}``; chain diagnostics; notes."""
        out: dict = {"taus": {}, "pass1": {}}
        for t in list(self.tests) + list(self.skipped):
            if math.isnan(t.tau):
                slot = out["pass1"]
            else:
                slot = out["taus"].setdefault(tau_key(t.tau), {}).setdefault(t.statistic, {})
            slot["observed"] = t.observed
            slot[t.null] = t.to_dict()
        if not out["pass1"]:
            del out["pass1"]
        if self.chain is not None:
            ch = self.chain
            out["chain"] = {
                "move": ch.move, "n_chains": ch.n_chains, "burn_in": ch.burn_in, "thin": ch.thin,
                "proposals": ch.proposals, "acceptance": ch.acceptance,
                "ess": {f"{s}" + ("" if math.isnan(tt) else f"@{tau_key(tt)}"): e for (s, tt), e in ch.ess.items()},
            }
        if self.skipped:
            out["skipped"] = [{"statistic": t.statistic, "tau": None if math.isnan(t.tau) else t.tau, "null": t.null,
                               "reason": t.reason, "instead": t.instead} for t in self.skipped]
        if self.notes:
            out["notes"] = list(self.notes)
        out["pool"] = {"n_prompts": self.n_prompts, "n_policies": self.n_policies, "k": self.k, "n_degenerate": self.n_degenerate}
        return out


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


# ============================================================================ re-deal
def _check_table_bytes(n_draws: int, prep: _Prepared, max_bytes) -> None:
    need_b = 2 * n_draws * prep.n * prep.M * 8
    if max_bytes is not None and need_b > check_int(max_bytes, "max_bytes", minimum=1):
        raise ValueError(f"{n_draws} tables of shape ({prep.n}, {prep.M}) need about {_fmt_bytes(need_b)} of memory, above "
                         f"max_bytes = {_fmt_bytes(max_bytes)}; ask for fewer draws or raise max_bytes")


def redeal(x, n_draws: int = 2000, *, k: int | None = None, seed=0, max_bytes: int | None = DEFAULT_MAX_BYTES) -> np.ndarray:
    """Count tables int64 [n_draws, n, M] drawn from the re-deal null.

    For every prompt the total s_i is dealt into M groups of k uniformly at random, i.e. the
    counts follow the multivariate hypergeometric law; prompt totals (hence the uniform
    mixture's raw rate) are preserved exactly. The draws are the ones :func:`null_tests` uses
    with the same ``seed``. Refused up front when the tables would take more than ``max_bytes``.
    """
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    prep = _prepare(x, [1.0], k)
    _check_table_bytes(n_draws, prep, max_bytes)
    key, _ = _keys(as_rng(seed))
    out = np.broadcast_to(prep.counts, (n_draws,) + prep.counts.shape).copy()
    if prep.active.size:
        out[:, prep.active, :] = _redeal_active_tables(prep, key, 0, n_draws)
    return out


# ============================================================================ margin chain
def _default_steps(n: int, M: int, burn_in, thin) -> tuple[int, int]:
    b = 60 * n * M if burn_in is None else check_int(burn_in, "burn_in", minimum=0)
    t = 2 * n * M if thin is None else check_int(thin, "thin", minimum=1)
    return b, t


def _run_margin(prep: _Prepared, chain_key, n_draws: int, burn: int, thin: int, n_chains: int, move: str,
                store_tables: bool, progress: bool, batch: int | None, blocks: bool = True):
    """Run the chains; return (stats [B, S], tables or None, chain_id [B], moves per chain, proposals).

    The compiled kernel is called on short pieces (at most ``_CHUNK`` proposals per chain per
    call, fewer with ``batch``), so that Ctrl-C interrupts a long run; the pieces consume each
    chain's random stream exactly as one long call would, so the draws do not depend on them.
    """
    na, M = prep.active.size, prep.M
    C = max(1, min(n_chains, n_draws))
    n_per = np.full(C, n_draws // C, np.int64)
    n_per[: n_draws % C] += 1
    starts = np.concatenate([[0], np.cumsum(n_per)[:-1]]).astype(np.int64)
    chain_id = np.repeat(np.arange(C), n_per)
    S = 3 * prep.taus.size + 1
    if na < 2:  # nothing can move: the null is a point mass at the observed table
        obs = _observed_stats(prep)
        stats = np.tile(obs, (n_draws, 1))
        tables = np.broadcast_to(prep.counts, (n_draws,) + prep.counts.shape).copy() if store_tables else None
        return stats, tables, chain_id, np.zeros(C, np.int64), 0
    states = np.ascontiguousarray(np.broadcast_to(prep.c_active.astype(chain_dtype(prep.k)), (C, na, M)).copy())
    perms = np.ascontiguousarray(np.broadcast_to(np.arange(na, dtype=np.int64), (C, na)).copy())
    pos = np.zeros(C, np.int64)
    block = chain_block(M) if blocks else na + 1
    epoch = max(1, na * M)  # proposals between reshuffles of the stored rows (multi-block tables only)
    streams = np.array([_stream_start(chain_key, c) for c in range(C)], dtype=np.uint64)
    stats = np.empty((n_draws, S))
    tables_active = np.empty((n_draws if store_tables else 0, na, M), np.int64)
    moves = np.zeros(C, np.int64)
    proposals_total = int(C * burn + thin * n_draws)
    parallel = C > 1 and proposals_total >= _PARALLEL_WORK
    kern = run_block_chains_parallel if parallel else run_block_chains
    heat = move == "heatbath"
    zeros = np.zeros(C, np.int64)
    done = np.zeros(C, np.int64)
    chunk = max(1, int(_CHUNK))
    draws_per_call = max(1, chunk // thin)
    if batch is not None:
        draws_per_call = min(draws_per_call, check_int(batch, "batch", minimum=1))
    bar = _progress_bar(progress, proposals_total, "margin chain", "proposal")

    def call(burn_, thin_, take):
        kern(states, streams, prep.k, burn_, thin_, take, starts + done, heat, prep.needs, prep.need_mix, prep.n,
             stats, tables_active, store_tables, moves, perms, pos, epoch, block)
        if bar is not None:
            bar.update(int(C * burn_ + thin_ * take.sum()))

    def advance(live: np.ndarray, steps: int):
        """``steps`` proposals on the chains in ``live`` only (the others keep their state)."""
        sub_states = np.ascontiguousarray(states[live])
        sub_streams = streams[live].copy()
        sub_perms = np.ascontiguousarray(perms[live])
        sub_pos = pos[live].copy()
        sub_moves = np.zeros(live.size, np.int64)
        kern(sub_states, sub_streams, prep.k, steps, 1, np.zeros(live.size, np.int64), np.zeros(live.size, np.int64),
             heat, prep.needs, prep.need_mix, prep.n, stats, tables_active, False, sub_moves, sub_perms, sub_pos,
             epoch, block)
        states[live] = sub_states
        streams[live] = sub_streams
        perms[live] = sub_perms
        pos[live] = sub_pos
        moves[live] += sub_moves
        if bar is not None:
            bar.update(int(live.size * steps))

    old_chunk = numba.set_parallel_chunksize(1) if parallel else None  # hand chains out one at a time
    try:
        left = burn
        while left > 0:
            step = min(chunk, left)
            call(step, thin, zeros)
            left -= step
        if thin <= chunk:
            while (done < n_per).any():
                take = np.minimum(draws_per_call, n_per - done).astype(np.int64)
                call(0, thin, take)
                done += take
        else:  # one retained table is longer than a piece: walk thin - 1 proposals in pieces, then one more
            while (done < n_per).any():
                live = np.flatnonzero(done < n_per)
                left = thin - 1
                while left > 0:
                    step = min(chunk, left)
                    advance(live, step)
                    left -= step
                take = (done < n_per).astype(np.int64)
                call(0, 1, take)
                done += take
    finally:
        if parallel:
            numba.set_parallel_chunksize(old_chunk)  # type: ignore[arg-type]  # an int when parallel
        if bar is not None:
            bar.close()
    tables = None
    if store_tables:
        tables = np.broadcast_to(prep.counts, (n_draws,) + prep.counts.shape).copy()
        tables[:, prep.active, :] = tables_active
    return stats, tables, chain_id, moves, proposals_total


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ChainSample(Result):
    """Tables retained by the margin-preserving chain, with the chain each came from."""

    tables: np.ndarray  # int64 [B, n, M]
    chain_id: np.ndarray
    acceptance: float
    burn_in: int
    thin: int
    move: str

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"draw": np.arange(len(self.chain_id)), "chain": self.chain_id,
                             "total": self.tables.sum(axis=(1, 2))})


def margin_chain(x, n_draws: int = 2000, *, k: int | None = None, seed=0, burn_in: int | None = None,
                 thin: int | None = None, n_chains: int = 4, move: str = "heatbath",
                 max_proposals: int | None = DEFAULT_MAX_PROPOSALS, max_bytes: int | None = DEFAULT_MAX_BYTES) -> ChainSample:
    """Count tables from the margin-preserving null: P(c) proportional to prod C(k, c_im) given
    prompt and member totals (see the module docstring). Draws match :func:`null_tests` with the
    same ``seed`` and settings. Defaults: ``burn_in = 60 n M``, ``thin = 2 n M`` proposals.
    Requests above ``max_proposals`` or ``max_bytes`` are refused up front."""
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    n_chains = check_int(n_chains, "n_chains", minimum=1)
    _check_choice(move, "move", _MOVES)
    prep = _prepare(x, [1.0], k)
    burn, th = _default_steps(prep.n, prep.M, burn_in, thin)
    _check_table_bytes(n_draws, prep, max_bytes)
    C = max(1, min(n_chains, n_draws))
    NullCost(int(C * burn + th * n_draws) if prep.active.size >= 2 else 0, 0, 0).check(max_proposals, None)
    _, chain_key = _keys(as_rng(seed))
    _, tables, chain_id, moves, proposals = _run_margin(prep, chain_key, n_draws, burn, th, n_chains, move, True, False, None)
    return ChainSample(tables, chain_id, int(moves.sum()) / proposals if proposals else 0.0, burn, th, move)


# ============================================================================ exact margin law
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ExactMarginLaw(Result):
    """Every count table with the given prompt and member totals and its probability under the
    margin-preserving null, P(c) = prod C(k, c_im) / sum over the fibre of the same product."""

    tables: np.ndarray  # int64 [N, n, M]
    prob: np.ndarray  # [N]
    k: int

    def statistic(self, statistic: str, tau=None) -> np.ndarray:
        """The statistic's value on every table (``tau`` ignored for ``pass1``)."""
        _check_statistics(statistic)
        st = table_statistics(self.tables, [0.5 if tau is None else tau], self.k)
        return st.pass1 if statistic == "pass1" else getattr(st, statistic)[:, 0]

    def mean(self, statistic: str, tau=None) -> float:
        return float(self.prob @ self.statistic(statistic, tau))

    def p_upper(self, statistic: str, tau, observed: float) -> float:
        v = self.statistic(statistic, tau)
        return float(self.prob[v >= observed - _TOL].sum())

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"table": [t.tolist() for t in self.tables], "prob": self.prob})


def exact_margin_law(x, *, k: int | None = None, max_tables: int = 200_000) -> ExactMarginLaw:
    """Enumerate the margin-preserving null exactly (tiny tables only: a test oracle and a teaching aid).

    Raises ValueError when the fibre holds more than ``max_tables`` tables.
    """
    c, k = as_counts(x, k)
    max_tables = check_int(max_tables, "max_tables", minimum=1)
    n, M = c.shape
    rows = c.sum(axis=1)
    cols = c.sum(axis=0)
    logc = np.array([math.lgamma(k + 1) - math.lgamma(j + 1) - math.lgamma(k - j + 1) for j in range(k + 1)])
    found: list[np.ndarray] = []
    cur = np.zeros((n, M), np.int64)

    def compositions(total, caps):
        # all vectors v with 0 <= v_m <= caps_m and sum v = total
        if len(caps) == 1:
            if 0 <= total <= caps[0]:
                yield (total,)
            return
        rest_cap = sum(caps[1:])
        for v in range(max(0, total - rest_cap), min(caps[0], total) + 1):
            for tail in compositions(total - v, caps[1:]):
                yield (v,) + tail

    def rec(i, remaining):
        if i == n - 1:
            if all(0 <= r <= k for r in remaining) and sum(remaining) == rows[i]:
                cur[i] = remaining
                found.append(cur.copy())
                if len(found) > max_tables:
                    raise ValueError(f"the margin fibre holds more than max_tables={max_tables} tables; use margin_chain")
            return
        caps = [min(k, int(r)) for r in remaining]
        for v in compositions(int(rows[i]), caps):
            cur[i] = v
            rec(i + 1, [remaining[m] - v[m] for m in range(M)])

    rec(0, [int(v) for v in cols])
    tables = np.array(found, dtype=np.int64)
    lw = logc[tables].sum(axis=(1, 2))
    w = np.exp(lw - lw.max())
    return ExactMarginLaw(tables, w / w.sum(), int(k))


# ============================================================================ effective sample size
def effective_sample_size(x, chains=None) -> float:
    """Effective sample size of Markov-chain draws (multi-chain autocorrelation with Geyer's
    initial monotone sequence; Geyer 1992, Vehtari et al. 2021).

    ``x`` is 1-d; ``chains`` optionally labels the chain of every draw (each chain's draws
    contiguous and in order). Within-chain autocovariances are averaged over chains and
    combined with the between-chain variance, rho_t = 1 - (W - mean_j acov_j(t)) / var+, where
    W is the mean within-chain variance and var+ = W (n-1)/n + var(chain means). Sums of
    adjacent pairs rho_2s + rho_2s+1 are added while positive and forced to be non-increasing;
    ESS = (draws) / (-1 + 2 sum). Chains are cut to the shortest one for the estimate, which is
    then scaled to all draws. A constant sequence has no autocorrelation to estimate and gets
    ESS equal to its length.
    """
    x = np.asarray(x, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("x is empty")
    if chains is None:
        groups = [x]
    else:
        ch = np.asarray(chains).ravel()
        if ch.shape != x.shape:
            raise ValueError(f"chains must label every draw: got {ch.shape} labels for {x.shape} draws")
        groups = [x[ch == c] for c in pd.unique(ch)]
    total = x.size
    n = min(g.size for g in groups)
    if n < 4 or np.ptp(x) == 0:
        return float(total)
    arr = np.stack([g[:n] for g in groups])  # [m, n]
    m = arr.shape[0]
    xc = arr - arr.mean(axis=1, keepdims=True)
    f = np.fft.rfft(xc, 2 * n, axis=1)
    acov = np.fft.irfft(f * np.conj(f), 2 * n, axis=1)[:, :n] / n  # biased autocovariances
    w_var = acov[:, 0].mean() * n / (n - 1)
    var_plus = w_var * (n - 1) / n + (arr.mean(axis=1).var(ddof=1) if m > 1 else 0.0)
    if var_plus <= 0:
        return float(total)
    rho = 1.0 - (w_var - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    s_sum = 0.0
    prev = np.inf
    for t in range(0, n - 1, 2):
        pair = rho[t] + rho[t + 1]
        if pair <= 0:
            break
        pair = min(pair, prev)
        s_sum += pair
        prev = pair
    tau = max(-1.0 + 2.0 * s_sum, 1.0 / np.log10(m * n))
    return float(total / tau)


# ============================================================================ the main entry point
def _redeal_stats_chunked(prep: _Prepared, key, n_draws: int, batch: int | None, progress: bool) -> np.ndarray:
    """Re-deal statistics of draws [0, n_draws) in short kernel calls (Ctrl-C works between them;
    draw d always uses stream d, so the pieces do not change the draws)."""
    per = max(1, _REDEAL_CHUNK_CELLS // max(1, prep.totals.size * prep.M))
    # at least two batches of draws per thread and call, so that large pools keep every core busy
    per = max(per, 2 * _REDEAL_BATCH * numba.get_num_threads())
    if batch is not None:
        per = min(per, check_int(batch, "batch", minimum=1))
    out = np.empty((n_draws, 3 * prep.taus.size + 1))
    for s0 in _progress(range(0, n_draws, per), progress, desc="re-deal", unit="batch"):
        b = min(per, n_draws - s0)
        out[s0:s0 + b] = _redeal_stats(prep, key, s0, b)
    return out


# ---------------------------------------------------------------------------- degenerate nulls
@dataclasses.dataclass(frozen=True, repr=False)
class SkippedTest(Result):
    """A test that was not run because its null is degenerate: the statistic is a function of
    what the null holds fixed, so every null draw equals the observed value and p = 1 by
    construction. ``reason`` says why, ``short`` is a label for tables, ``instead`` says what
    does apply."""

    statistic: str
    tau: float
    null: str
    observed: float
    reason: str
    short: str
    instead: str

    @property
    def label(self) -> str:
        t = "" if math.isnan(self.tau) else f" tau={self.tau:g}"
        return f"{self.statistic}{t} [{self.null}]"

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"statistic": self.statistic, "tau": self.tau, "null": self.null, "observed": self.observed,
                              "skipped": self.short, "reason": self.reason, "instead": self.instead}])

    def to_dict(self) -> dict:
        return {"skipped": True, "reason": self.reason, "instead": self.instead}


_CERTIFY_HINT = ("the selection-valid certificates apply at k = 1: `oraclegap certify POOL` "
                 "(oraclegap.stats.certify.selection_valid_gap)")


def degenerate_tests(x, taus=(0.05, 0.10, 0.20, 0.30), *, k: int | None = None, nulls=NULLS,
                     statistics=STATISTICS) -> dict:
    """Which (statistic, tau, null) tests are degenerate by construction, with the reason.

    A null conditions on some totals of the count table; a statistic that is a function of
    those totals has a point-mass null (p = 1 whatever the data). The cases, exactly:

    * no prompt has both a success and a failure: both nulls fix the whole table;
    * fewer than two such prompts: the margin-preserving chain has no move;
    * k = 1: every statistic is a function of the prompt and member totals (C_m is a member
      total, C_orac = #{s_i >= 1}, C_mix = #{s_i >= need(tau, M)}, D = #{1 <= s_i < M}), so the
      margin-preserving null is a point mass for all of them, and the re-deal (which keeps the
      prompt totals) for D and oracle-minus-mixture;
    * need(tau, k) = 1 (tau <= 1/k): C_orac = #{s_i >= 1} and C_mix are functions of the prompt
      totals, so oracle-minus-mixture has a point-mass null under both.

    Returns ``{(statistic, tau, null): (reason, short label, what applies instead)}`` (tau None
    for ``pass1``).
    """
    prep = _prepare(x, taus, k)
    return _degenerate(prep, _check_statistics(statistics), _check_nulls(nulls))


def _degenerate(prep: _Prepared, statistics, nulls) -> dict:
    out = {}
    na, kk = int(prep.active.size), prep.k
    for null in nulls:
        for st in statistics:
            taus = [None] if st == "pass1" else [float(t) for t in prep.taus]
            for j, tau in enumerate(taus):
                why = None
                if na == 0:
                    why = ("every prompt is all wrong or all right, so both nulls fix the whole table: the null is a "
                           "point mass at the observed value (p = 1 by construction)",
                           "point mass: no prompt can move", "no randomisation test can inform about this pool")
                elif null == "margin" and na < 2:
                    why = ("fewer than two prompts have both successes and failures, so no margin-preserving move "
                           "exists: the null is a point mass (p = 1 by construction)",
                           "point mass: < 2 movable prompts", "the re-deal null, which moves single prompts")
                elif kk == 1 and null == "margin":
                    why = ("at k = 1 every statistic is a function of the prompt totals and the member totals, which "
                           "the margin-preserving null holds fixed: the null is a point mass (p = 1 by construction)",
                           "point mass at k=1", _CERTIFY_HINT)
                elif kk == 1 and st in ("D", "oracle_minus_mixture"):
                    why = (f"at k = 1 {st} is a function of the prompt totals, which the re-deal holds fixed: the null "
                           "is a point mass (p = 1 by construction)", "point mass at k=1", _CERTIFY_HINT)
                elif st == "oracle_minus_mixture" and int(prep.needs[j]) == 1:
                    why = (f"at tau = {tau:g} <= 1/k (k = {kk}) one success covers a prompt, so the oracle's and the "
                           "mixture's coverage are functions of the prompt totals, which both nulls hold fixed: the "
                           "null is a point mass (p = 1 by construction)", "point mass: tau <= 1/k",
                           f"L and D at this tau, or oracle_minus_mixture at a tau above 1/k = {1 / kk:.4g}")
                if why is not None:
                    out[(st, tau, null)] = why
    return out


def _nan_tau(tau) -> float:
    """Internal keys use None for the threshold-free ``pass1``; results carry NaN."""
    return float("nan") if tau is None else float(tau)


def _tau_notes(prep: _Prepared, statistics) -> tuple:
    """Notes on thresholds that give the same count rule (the same test repeated)."""
    notes = []
    th = [s for s in ("L", "D") if s in statistics]
    if th and prep.taus.size > 1:
        groups: dict[int, list[float]] = {}
        for t, nd in zip(prep.taus, prep.needs, strict=True):
            groups.setdefault(int(nd), []).append(float(t))
        for nd, ts in groups.items():
            if len(ts) > 1:
                notes.append(f"tau = {', '.join(f'{t:g}' for t in ts)} each need {nd} success{'es' if nd > 1 else ''} of "
                             f"k = {prep.k}: {' and '.join(th)} {'is' if len(th) == 1 else 'are'} the same test at each of them")
    return tuple(notes)


#: The note :func:`null_tests` adds to its result for a pool with ``alignment == "seed-aligned"``.
ALIGNMENT_NOTE = ("the pool is seed-aligned (draw j used the same sampling seed under every member): both nulls assume "
                  "draws independent across members, so where the shared seeds couple the members' draws they are "
                  "conservative (the observed gap is pulled below its null, p-values too large); nulls.draw_alignment "
                  "measures the coupling (matched agreement above its shuffle band), and sampling each member with its "
                  "own seeds (draw_seeds='per-policy') removes it")


def alignment_note(x) -> str | None:
    """:data:`ALIGNMENT_NOTE` when ``x`` is a Pool marked ``alignment == "seed-aligned"``, else None."""
    return ALIGNMENT_NOTE if getattr(x, "alignment", None) == "seed-aligned" else None


def _check_nulls(nulls) -> tuple[str, ...]:
    if isinstance(nulls, str):
        nulls = (nulls,)
    try:
        nulls = tuple(nulls)
    except TypeError:
        raise TypeError(f"nulls must be a subset of {NULLS}, got {nulls!r}") from None
    if not nulls or any(nl not in NULLS for nl in nulls):
        raise ValueError(f"nulls must be a non-empty subset of {NULLS}, got {nulls!r}")
    if len(set(nulls)) != len(nulls):
        raise ValueError(f"nulls repeats an entry: {nulls!r}")
    return nulls


# ---------------------------------------------------------------------------- cost bounds
@dataclasses.dataclass(frozen=True)
class NullCost:
    """What a call of :func:`null_tests` will cost, estimated before any work: chain proposals
    (``n_chains * burn_in + thin * n_draws``), re-dealt cells (``n_draws * movable prompts *
    members``, one hypergeometric draw each) and bytes of memory for the retained draws."""

    proposals: int
    redeal_cells: int
    bytes: int

    @property
    def steps(self) -> int:
        return int(self.proposals + self.redeal_cells)

    def check(self, max_proposals=DEFAULT_MAX_PROPOSALS, max_bytes=DEFAULT_MAX_BYTES) -> None:
        """Raise ``ValueError`` when the cost exceeds a bound (None: no bound), naming what drives it."""
        problems = []
        if max_bytes is not None and self.bytes > max_bytes:
            problems.append(f"about {_fmt_bytes(self.bytes)} of memory for its null draws, above the limit of "
                            f"{_fmt_bytes(max_bytes)} (max_bytes, CLI --max-memory)")
        if max_proposals is not None and self.steps > max_proposals:
            parts = []
            if self.proposals:
                parts.append(f"{self.proposals:.3g} margin-chain proposals")
            if self.redeal_cells:
                parts.append(f"{self.redeal_cells:.3g} re-dealt cells")
            problems.append(f"{' + '.join(parts)}, above the limit of {max_proposals:.3g} (max_proposals, CLI --max-proposals)")
        if problems:
            raise ValueError(f"this request needs {' and '.join(problems)}; lower n_draws, burn_in or thin, "
                             "or raise the limit")


def _fmt_bytes(b: float) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{int(b)} B"


def _cost(prep: _Prepared, nulls, n_tests: int, skip: dict, statistics, n_draws: int, burn: int, thin: int,
          n_chains: int) -> NullCost:
    per_null = {nl: any((st, tau, nl) not in skip for st in statistics
                        for tau in ([None] if st == "pass1" else [float(t) for t in prep.taus]))
                for nl in nulls}
    S = 3 * prep.taus.size + 1
    na = int(prep.active.size)
    proposals = 0
    redeal_cells = 0
    bytes_ = 0
    if per_null.get("margin") and na >= 2:
        C = max(1, min(n_chains, n_draws))
        proposals = C * burn + thin * n_draws
        bytes_ += n_draws * S * 8 + C * na * prep.M * 8
    if per_null.get("redeal") and na:
        redeal_cells = n_draws * na * prep.M
        bytes_ += n_draws * S * 8 + min(n_draws, _REDEAL_CHUNK_CELLS) * 8
    bytes_ += n_tests * n_draws * 8 * 2  # each test keeps its draws (and a copy while it is built)
    return NullCost(int(proposals), int(redeal_cells), int(bytes_))


def null_cost(x, taus=(0.05, 0.10, 0.20, 0.30), *, k: int | None = None, nulls=NULLS, statistics=STATISTICS,
              n_draws: int = 2000, burn_in: int | None = None, thin: int | None = None, n_chains: int = 4,
              skip_degenerate: bool = True) -> NullCost:
    """The :class:`NullCost` of :func:`null_tests` with these arguments, computed without running it."""
    prep = _prepare(x, taus, k)
    statistics = _check_statistics(statistics)
    nulls = _check_nulls(nulls)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    n_chains = check_int(n_chains, "n_chains", minimum=1)
    burn, th = _default_steps(prep.n, prep.M, burn_in, thin)
    skip = _degenerate(prep, statistics, nulls) if skip_degenerate else {}
    n_tests = sum(1 for nl in nulls for st in statistics
                  for tau in ([None] if st == "pass1" else [float(t) for t in prep.taus]) if (st, tau, nl) not in skip)
    return _cost(prep, nulls, n_tests, skip, statistics, n_draws, burn, th, n_chains)


def null_tests(
    x,
    taus=(0.05, 0.10, 0.20, 0.30),
    *,
    k: int | None = None,
    nulls=NULLS,
    statistics=STATISTICS,
    n_draws: int = 2000,
    seed=0,
    burn_in: int | None = None,
    thin: int | None = None,
    n_chains: int = 4,
    move: str = "heatbath",
    p_convention: str = "plus-one",
    progress: bool = False,
    batch: int | None = None,
    skip_degenerate: bool = True,
    max_proposals: int | None = DEFAULT_MAX_PROPOSALS,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> NullTests:
    """Test each statistic at each threshold against the re-deal and/or margin-preserving null.

    ``x``: a Pool, verdicts [n, M, k], or counts [n, M] with ``k=``. ``statistics`` is a subset
    of :data:`STATISTICS`; ``pass1`` is tested once (no threshold). ``burn_in``/``thin`` default
    to 60 n M and 2 n M proposals (n = all prompts), proposals go to movable prompts only, and
    the ``n_draws`` retained tables are split over ``n_chains`` chains.

    Degenerate nulls. A statistic that is a function of what a null holds fixed has a
    point-mass null: p = 1 by construction, no evidence either way (:func:`degenerate_tests`
    lists the cases; at k = 1 they include every statistic under the margin-preserving null).
    Such tests are not run: they are reported in ``.skipped`` as :class:`SkippedTest` objects
    with the reason and what applies instead (at k = 1: the selection-valid certificates).
    ``skip_degenerate=False`` runs them anyway (draws equal to the observed value, ``p =
    p_lower = 1``, excess 0).

    Cost. The work (chain proposals plus re-dealt cells) and the memory for the draws are
    estimated first (:func:`null_cost`); above ``max_proposals`` or ``max_bytes`` the call is
    refused with a ``ValueError`` (None removes a bound). The compiled kernels run in short
    pieces, so Ctrl-C interrupts a long run. ``batch`` (draws per chain per call) only affects
    the progress display; results do not depend on it.

    Independence. Both nulls assume draws independent across members. For a Pool marked
    ``alignment == "seed-aligned"`` the result's ``notes`` start with :data:`ALIGNMENT_NOTE`
    (the tests are conservative on such draws; see the module docstring).
    """
    prep = _prepare(x, taus, k)
    statistics = _check_statistics(statistics)
    nulls = _check_nulls(nulls)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    n_chains = check_int(n_chains, "n_chains", minimum=1)
    _check_choice(move, "move", _MOVES)
    _check_choice(p_convention, "p_convention", _P_CONVENTIONS)
    if batch is not None:
        check_int(batch, "batch", minimum=1)
    for name, bound in (("max_proposals", max_proposals), ("max_bytes", max_bytes)):
        if bound is not None:
            check_int(bound, name, minimum=1)
    burn, th = _default_steps(prep.n, prep.M, burn_in, thin)
    skip = _degenerate(prep, statistics, nulls) if skip_degenerate else {}

    def taus_of(st):
        return [None] if st == "pass1" else [float(t) for t in prep.taus]

    wanted = {nl: [(st, j, tau) for st in statistics for j, tau in enumerate(taus_of(st)) if (st, tau, nl) not in skip]
              for nl in nulls}
    n_tests = sum(len(v) for v in wanted.values())
    _cost(prep, nulls, n_tests, skip, statistics, n_draws, burn, th, n_chains).check(max_proposals, max_bytes)
    redeal_key, chain_key = (seed.redeal, seed.chain) if isinstance(seed, _PresetKeys) else _keys(as_rng(seed))
    observed = _observed_stats(prep)
    T = prep.taus.size
    tests: list[NullTest] = []
    skipped: list[SkippedTest] = []
    chain_diag = None
    for null in nulls:
        for st in statistics:
            for j, tau in enumerate(taus_of(st)):
                if (st, tau, null) in skip:
                    reason, short, instead = skip[(st, tau, null)]
                    col = _stat_columns(st, T)[j]
                    skipped.append(SkippedTest(st, _nan_tau(tau), null, float(observed[col]), reason, short, instead))
        if not wanted[null]:
            continue
        if null == "redeal":
            if prep.active.size == 0:
                stats = np.tile(observed, (n_draws, 1))
            else:
                stats = _redeal_stats_chunked(prep, redeal_key, n_draws, batch, progress)
            chain_id, acc = None, None
        else:
            stats, _, chain_id, moves, proposals = _run_margin(prep, chain_key, n_draws, burn, th, n_chains, move,
                                                               False, progress, batch)
            acc = int(moves.sum()) / proposals if proposals else 0.0
        ess_map = {}
        for st, j, tau in wanted[null]:
            col = _stat_columns(st, T)[j]
            if null == "redeal":
                ess = float(n_draws)
            else:
                ess = effective_sample_size(stats[:, col], chain_id) if proposals else float("nan")
                ess_map[(st, _nan_tau(tau))] = ess
            tests.append(NullTest(st, _nan_tau(tau), null, float(observed[col]), stats[:, col], p_convention,
                                  ess, acc if null == "margin" else None))
        if null == "margin":
            assert chain_id is not None and acc is not None  # set by the margin branch above
            per_chain = np.bincount(chain_id)
            chain_acc = tuple(float(m) / (burn + th * int(d)) if proposals else 0.0
                              for m, d in zip(moves, per_chain, strict=True))
            chain_diag = ChainDiagnostics(move, per_chain.size, burn, th, int(prep.active.size), proposals, acc,
                                          chain_acc, ess_map)
    note = alignment_note(x)
    return NullTests(tuple(tests), chain_diag, prep.n, prep.M, prep.k, int(prep.n - prep.active.size),
                     tuple(skipped), ((note,) if note else ()) + _tau_notes(prep, statistics))



# ============================================================================ Benjamini-Hochberg
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class BHResult(Result):
    """Benjamini-Hochberg adjustment over a family of tests (target false-discovery rate ``alpha``)."""

    labels: tuple
    p: np.ndarray
    p_adjusted: np.ndarray
    reject: np.ndarray
    alpha: float

    @property
    def n_rejected(self) -> int:
        return int(self.reject.sum())

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"test": list(self.labels), "p": self.p, "p_adjusted": self.p_adjusted, "reject": self.reject})


def benjamini_hochberg(results, alpha: float = 0.05, labels: Sequence[str] | None = None) -> BHResult:
    """Benjamini-Hochberg step-up adjustment (:func:`oraclegap.stats.multiplicity.benjamini_hochberg_adjust`,
    statsmodels ``multipletests(method="fdr_bh")``).

    ``results``: p-values, NullTest objects, or containers with ``.tests``; the upper-tail ``p``
    of each test is used.
    """
    alpha = check_alpha(alpha)
    ps: list[float] = []
    labs: list[str] = []
    for item in _walk_results(results, allow_p=True):
        ps.append(item.p if isinstance(item, NullTest) else item)
        labs.append(item.label if isinstance(item, NullTest) else f"test {len(labs) + 1}")
    if not ps:
        raise ValueError("results holds no tests")
    p = np.asarray(ps, dtype=float)
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("every p-value must lie in [0, 1]")
    if labels is not None:
        labels = [str(s) for s in labels]
        if len(labels) != p.size:
            raise ValueError(f"labels has {len(labels)} entries for {p.size} tests")
        labs = labels
    reject, p_adj = benjamini_hochberg_adjust(p, alpha)
    return BHResult(tuple(labs), p, p_adj, reject, alpha)


