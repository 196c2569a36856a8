"""The re-deal null of :mod:`oraclegap.stats.nulls`: every prompt's total s_i dealt into M groups
of k uniformly at random (the multivariate hypergeometric law), drawn by sequential hypergeometric
draws from alias tables, one random stream per draw; the statistics of the re-dealt tables in short
kernel calls, the tables themselves (:func:`redeal`) and what a re-deal costs.
"""

from __future__ import annotations

import numba
import numpy as np

from ..._validate import as_rng, check_int
from ._kernels import (
    _REDEAL_BATCH,
    _alias,
    many_table_stats,
    redeal_stats,
    redeal_stats_parallel,
    redeal_tables,
)
from .limits import DEFAULT_MAX_BYTES, _check_table_bytes, _progress
from .tables import _keys, _prepare, _Prepared

# Re-dealt cells (draws x movable prompts x members) above which the re-deal spreads its batches of
# draws over threads: a cell costs a few nanoseconds, so 2^18 cells are about a millisecond of work
# against tens of microseconds for the parallel region (the 240 x 5 x 16 benchmark pool's 2000
# draws, 2.05M cells, fell just under 2^21 and ran on one thread).
_REDEAL_PARALLEL_CELLS = 1 << 18
# Most re-dealt cells (draws x movable prompts x members) handed to a compiled kernel in one call;
# between calls Python runs, so Ctrl-C stops a long run promptly.
_REDEAL_CHUNK_CELLS = 1 << 25


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


def _redeal_stats_chunked(prep: _Prepared, key, n_draws: int, batch: int | None, progress: bool,
                          looks=None, stop=None) -> np.ndarray:
    """Re-deal statistics of draws [0, n_draws) in short kernel calls (Ctrl-C works between them;
    draw d always uses stream d, so the pieces do not change the draws). With ``looks`` (increasing
    draw counts) and ``stop`` (a function of the statistics drawn so far), the draws end at the
    first look where ``stop`` is true: the result is then the first rows of the full draws."""
    per = max(1, _REDEAL_CHUNK_CELLS // max(1, prep.totals.size * prep.M))
    # at least two batches of draws per thread and call, so that large pools keep every core busy
    per = max(per, 2 * _REDEAL_BATCH * numba.get_num_threads())
    if batch is not None:
        per = min(per, check_int(batch, "batch", minimum=1))
    out = np.empty((n_draws, 3 * prep.taus.size + 1))
    ends = [n_draws] if looks is None else [int(b) for b in looks if b < n_draws] + [n_draws]
    pieces = [(s0, min(s0 + per, end)) for start, end in zip([0] + ends[:-1], ends, strict=True)
              for s0 in range(start, end, per)]
    for s0, s1 in _progress(pieces, progress, desc="re-deal", unit="batch"):
        out[s0:s1] = _redeal_stats(prep, key, s0, s1 - s0)
        if stop is not None and s1 in ends[:-1] and stop(out[:s1], None):
            return out[:s1]
    return out


def _redeal_cost(prep: _Prepared, n_draws: int) -> tuple[int, int]:
    """(re-dealt cells, bytes) of ``n_draws`` re-deals: one hypergeometric draw per cell, the
    statistics of every draw and one chunk of draws in memory."""
    na = int(prep.active.size)
    if not na:
        return 0, 0
    S = 3 * prep.taus.size + 1
    return n_draws * na * prep.M, n_draws * S * 8 + min(n_draws, _REDEAL_CHUNK_CELLS) * 8


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
