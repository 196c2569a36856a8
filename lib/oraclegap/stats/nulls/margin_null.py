"""The margin-preserving null of :mod:`oraclegap.stats.nulls` (logit q_im = a_i + b_m): the
conditional law of the count table given its prompt and member totals, P(c) proportional to
prod C(k, c_im), sampled by chains of 2x2 moves (heat-bath or Metropolis) in short kernel calls
(:func:`margin_chain` keeps the tables), enumerated exactly for tiny tables
(:func:`exact_margin_law`), the effective sample size of the chains' draws
(:func:`effective_sample_size`) and what the chains cost.
"""

from __future__ import annotations

import dataclasses
import math

import numba
import numpy as np
import pandas as pd

from ..._result import Result
from ..._validate import as_rng, check_int
from ..coverage import as_counts
from ._kernels import (
    _stream_start,
    chain_block,
    chain_dtype,
    run_block_chains,
    run_block_chains_parallel,
)
from .limits import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_PROPOSALS,
    NullCost,
    _check_table_bytes,
    _progress_bar,
)
from .results import _TOL
from .tables import (
    _check_choice,
    _check_statistics,
    _keys,
    _observed_stats,
    _prepare,
    _Prepared,
    table_statistics,
)

_MOVES = ("heatbath", "metropolis")
# Work (proposals) above which the chains spread over threads (a parallel region costs tens of
# microseconds; 2^21 proposals take several milliseconds). Results do not depend on the choice
# (one random stream per chain).
_PARALLEL_WORK = 1 << 21
# Most proposals per chain handed to a compiled kernel in one call (a few tenths of a second);
# between calls Python runs, so Ctrl-C stops a long run promptly.
_CHUNK = 1 << 22


def _default_steps(n: int, M: int, burn_in, thin) -> tuple[int, int]:
    b = 60 * n * M if burn_in is None else check_int(burn_in, "burn_in", minimum=0)
    t = 2 * n * M if thin is None else check_int(thin, "thin", minimum=1)
    return b, t


def _margin_cost(prep: _Prepared, n_draws: int, burn: int, thin: int,
                 n_chains: int) -> tuple[int, int]:
    """(proposals, bytes) of ``n_draws`` tables from ``n_chains`` chains: the chains' proposals,
    the statistics of every draw and the chains' states. Nothing runs with fewer than two
    movable prompts."""
    na = int(prep.active.size)
    if na < 2:
        return 0, 0
    C = max(1, min(n_chains, n_draws))
    S = 3 * prep.taus.size + 1
    return C * burn + thin * n_draws, n_draws * S * 8 + C * na * prep.M * 8


def _run_margin(prep: _Prepared, chain_key, n_draws: int, burn: int, thin: int, n_chains: int, move: str,
                store_tables: bool, progress: bool, batch: int | None, blocks: bool = True,
                looks=None, stop=None):
    """Run the chains; return (stats [B, S], tables or None, chain_id [B], moves per chain, proposals).

    The compiled kernel is called on short pieces (at most ``_CHUNK`` proposals per chain per
    call, fewer with ``batch``), so that Ctrl-C interrupts a long run; the pieces consume each
    chain's random stream exactly as one long call would, so the draws do not depend on them.
    With ``looks`` (increasing draw counts, each spread over the chains as ``n_draws`` is) and
    ``stop`` (a function of the statistics and chain labels drawn so far) the chains end at the
    first look where ``stop`` is true; each chain's draws are then the first of its full run.
    """
    na, M = prep.active.size, prep.M
    C = max(1, min(n_chains, n_draws))
    n_per = _spread(n_draws, C)
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
    targets = [_spread(int(b), C) for b in (looks or ()) if b < n_draws] + [n_per]

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
        for target in targets:
            if thin <= chunk:
                while (done < target).any():
                    take = np.minimum(draws_per_call, target - done).astype(np.int64)
                    call(0, thin, take)
                    done += take
            else:  # a retained table is longer than a piece: thin - 1 proposals in pieces, then 1
                while (done < target).any():
                    live = np.flatnonzero(done < target)
                    left = thin - 1
                    while left > 0:
                        step = min(chunk, left)
                        advance(live, step)
                        left -= step
                    take = (done < target).astype(np.int64)
                    call(0, 1, take)
                    done += take
            if stop is not None and (done < n_per).any():
                rows = np.concatenate([starts[c] + np.arange(done[c]) for c in range(C)])
                if stop(stats[rows], chain_id[rows]):
                    break
    finally:
        if parallel:
            numba.set_parallel_chunksize(old_chunk)  # type: ignore[arg-type]  # an int when parallel
        if bar is not None:
            bar.close()
    if (done < n_per).any():  # stopped at a look: the draws taken, chain by chain
        rows = np.concatenate([starts[c] + np.arange(done[c]) for c in range(C)])
        stats, chain_id = stats[rows], chain_id[rows]
        tables_active = tables_active[rows] if store_tables else tables_active
        n_draws, proposals_total = rows.size, int(C * burn + thin * rows.size)
    tables = None
    if store_tables:
        tables = np.broadcast_to(prep.counts, (n_draws,) + prep.counts.shape).copy()
        tables[:, prep.active, :] = tables_active
    return stats, tables, chain_id, moves, proposals_total


def _spread(n_draws: int, n_chains: int) -> np.ndarray:
    """Draws per chain when ``n_draws`` are split over ``n_chains`` chains (the first get one
    more)."""
    out = np.full(n_chains, n_draws // n_chains, np.int64)
    out[: n_draws % n_chains] += 1
    return out


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
    NullCost(_margin_cost(prep, n_draws, burn, th, n_chains)[0], 0, 0).check(max_proposals, None)
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
