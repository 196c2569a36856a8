"""Is an oracle gap sampling noise? The re-deal and margin-preserving nulls (arXiv 2609.32996,
Section 3.2 and Appendices B.1, C.1 and C.5).

Data. A pool gives success counts ``c[i, m]`` out of ``k`` responses for prompt i and policy
m. Every statistic below is a function of the count table, with raw-frequency coverage
(``c >= need(tau, k)``, see :mod:`oraclegap.stats.coverage`):

* ``L``    oracle gap C_orac(tau) - C_best(tau);
* ``D``    disagreement, the fraction of prompts where some but not all members are covered;
* ``oracle_minus_mixture``  C_orac(tau) - C_mix(tau) (mixture: pooled count >= need(tau, M k));
* ``pass1``  Pass@1 oracle gap  mean_i max_m c_im/k - max_m mean_i c_im/k  (no threshold).

Two reference laws for the count table, both conditioning on every prompt's total
s_i = sum_m c_im, so a prompt whose responses are all wrong or all right (a *degenerate*
prompt) is fixed and adds no randomisation variance:

* **re-deal** (plain null): all members share one success probability per prompt. Given s_i,
  the M k outcomes of prompt i are exchangeable, so the per-member counts follow the
  multivariate hypergeometric law of dealing s_i successes into M groups of k. We draw those
  counts directly (sequential hypergeometric draws from precomputed alias tables), never by
  shuffling responses, so the cost per draw does not depend on k.
* **margin-preserving**: logit q_im = a_i + b_m (App. C.1). Conditioning on the prompt totals
  and the member totals t_m = sum_i c_im removes a and b; the conditional law of the table is
  P(c) proportional to prod_{i,m} C(k, c_im) over tables with those margins and cells in
  [0, k]. We sample it with a Markov chain of 2x2 moves on prompts p != q and members a != b
  (c[p,a] - t, c[p,b] + t, c[q,a] + t, c[q,b] - t), proposed only among prompts that can move.
  The default move is a *heat-bath* move, which draws t from its exact conditional law given
  the other cells (the whole feasible range at once); ``move="metropolis"`` gives the paper's
  +-1 transfer accepted by the weight ratio. Both leave the law above invariant and connect
  the tables with given margins. By default the chain discards its first 60 n M proposals
  and then keeps one table every 2 n M proposals (n prompts, M members), split over
  ``n_chains`` independent chains. :func:`exact_margin_law` enumerates the law for tiny tables.

Assumption: independent draws. Both nulls treat the k responses of every (prompt, member)
cell as independent draws, independent across members too. Pools sampled with *seed-aligned*
draws (draw j of a prompt uses the same random seed under every member: common random numbers,
paper 001's protocol) break the second part: near-identical members then give near-identical
verdicts draw by draw, their counts move together, the observed gap falls below what
independent sampling would give, and both tests become conservative (p-values too large); members
that share nothing but the seed (different models, different tokenizers) may show no coupling. Sample
every member with its own seeds (``oraclegap.rollouts.generate(draw_seeds="per-policy")``) for
these tests; :func:`draw_alignment` measures the coupling, :func:`disjoint_draws` removes it from
an aligned pool with enough draws, and :func:`null_tests` adds a note to its result when the
pool says it is seed-aligned.

Every test returns a :class:`NullTest`: the statistic, tau, the observed value, the null
draws, their mean, the 90% band (5th-95th percentile, a range of randomised statistics, not an
interval for the population gap), the upper-tail p (fraction of draws at least as large as
observed; ``p_convention="plus-one"`` gives (1 + #)/(1 + B)), the lower-tail p (fraction at
most as large) and the excess, observed minus null mean.

Around the two nulls: :func:`excess_bootstrap` (prompt bootstrap of the excess, recomputing the
null on each resample), :func:`split_half` (select on half the responses, score on the other
half), :func:`pool_size_curve` (statistics averaged over all member subsets of each size and
the re-deal null of their rise), :func:`member_spread` (spread of member coverage against
labels permuted within prompts), :func:`similarity` (App. B.1 pairwise diagnostics) and
:func:`benjamini_hochberg` (false-discovery-rate adjustment over a family of tests).

Randomness. Every function takes ``seed`` (an int or a ``numpy.random.Generator``); the
generator supplies 64-bit keys for the compiled kernels' SplitMix64 streams, one stream per
re-deal draw and per chain, so the same seed gives the same draws whatever the thread count
or batch size.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence

import numba
import numpy as np
import pandas as pd
from numba import njit, prange

from .._validate import as_bool_array, as_rng, check_alpha, check_int, check_prob, check_taus, tau_key
from .coverage import as_counts, need

__all__ = [
    "STATISTICS",
    "NULLS",
    "NullTest",
    "NullTests",
    "ChainDiagnostics",
    "TableStatistics",
    "ChainSample",
    "ExactMarginLaw",
    "ExcessBootstrap",
    "SplitHalf",
    "PoolSizeCurve",
    "Similarity",
    "BHResult",
    "tests_frame",
    "table_statistics",
    "degenerate_prompts",
    "degenerate_tests",
    "SkippedTest",
    "NullCost",
    "null_cost",
    "DEFAULT_MAX_PROPOSALS",
    "DEFAULT_MAX_BYTES",
    "redeal",
    "margin_chain",
    "exact_margin_law",
    "null_tests",
    "effective_sample_size",
    "excess_bootstrap",
    "split_half",
    "pool_size_curve",
    "member_spread",
    "MemberCoverage",
    "member_coverage",
    "DrawAlignment",
    "draw_alignment",
    "alignment_note",
    "ALIGNMENT_NOTE",
    "disjoint_draws",
    "similarity",
    "benjamini_hochberg",
    "warm_up",
    "GapTable",
    "gap_table",
    "sampler_tv",
]

#: Statistics computed from count tables (``pass1`` has no threshold).
STATISTICS = ("L", "D", "oracle_minus_mixture", "pass1")
#: The two reference laws.
NULLS = ("redeal", "margin")
_P_CONVENTIONS = ("paper", "plus-one")
_MOVES = ("heatbath", "metropolis")
_TOL = 1e-9
# Work (proposals, or draws x prompts x members) above which the kernels spread over threads.
# Below it the serial kernels win: on a busy machine a parallel region waits for its slowest
# thread. Results do not depend on the choice (one random stream per draw and per chain).
_PARALLEL_WORK = 30_000_000
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

# ============================================================================ compiled kernels
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0


# ---------------------------------------------------------------------------- random streams
@njit(cache=True)
def _mix64(z):
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def _stream_start(key, index):
    """Starting state of the stream for ``index`` under ``key`` (both uint64)."""
    return _mix64(key ^ _mix64(np.uint64(index) * _GAMMA + _GAMMA))


@njit(cache=True)
def _u64(s):
    """Advance a SplitMix64 state; return (new state, 64 random bits)."""
    s += _GAMMA
    return s, _mix64(s)


@njit(cache=True)
def _double(s):
    """(new state, uniform double in [0, 1))."""
    s, z = _u64(s)
    return s, np.float64(z >> _S11) * _INV53


@njit(cache=True)
def _int_below(s, n):
    """(new state, uniform integer in [0, n)) by Lemire's multiply-shift on 32 random bits."""
    s, z = _u64(s)
    return s, np.int64(((z >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


# ---------------------------------------------------------------------------- statistics
# A table's statistics need only these tallies over prompts: per member the histogram of its
# counts (hist[m, v]), histograms of each prompt's largest and smallest count and of its total,
# the members' column sums and the sum of row maxima. Coverage at any threshold is then a
# suffix sum: C_m = #{c_im >= need}, C_orac = #{max_m c_im >= need}, all covered =
# #{min_m c_im >= need}, so D = C_orac - #all, and C_mix = #{sum_m c_im >= need(tau, M k)}.
@njit(cache=True)
def _accumulate_row(row, hist, hmax, hmin, htot, colsum):
    """Add one prompt's counts ``row[M]`` to the tallies; return its largest count."""
    M = row.shape[0]
    rmax = row[0]
    rmin = row[0]
    tot = 0
    for m in range(M):
        v = row[m]
        tot += v
        colsum[m] += v
        hist[m, v] += 1
        if v > rmax:
            rmax = v
        if v < rmin:
            rmin = v
    hmax[rmax] += 1
    hmin[rmin] += 1
    htot[tot] += 1
    return rmax


@njit(cache=True)
def _finalize(out, hist, hmax, hmin, htot, colsum, rmax_sum, needs, need_mix, n_total, k):
    """Write [L_t..., D_t..., oracle-minus-mixture_t..., Pass@1 gap] into ``out``."""
    T = needs.shape[0]
    M = colsum.shape[0]
    for t in range(T):
        nd = needs[t]
        best = 0
        for m in range(M):
            cm = 0
            for v in range(nd, k + 1):
                cm += hist[m, v]
            if cm > best:
                best = cm
        orac = 0
        allc = 0
        for v in range(nd, k + 1):
            orac += hmax[v]
            allc += hmin[v]
        mixc = 0
        for v in range(need_mix[t], htot.shape[0]):
            mixc += htot[v]
        out[t] = (orac - best) / n_total
        out[T + t] = (orac - allc) / n_total
        out[2 * T + t] = (orac - mixc) / n_total
    cmax = colsum[0]
    for m in range(M):
        if colsum[m] > cmax:
            cmax = colsum[m]
    out[3 * T] = (rmax_sum - cmax) / (n_total * k)


@njit(cache=True)
def _table_stats(c, needs, need_mix, n_total, k, out):
    """Statistics of one count table ``c[n_rows, M]`` (rows may be the movable prompts only)."""
    M = c.shape[1]
    hist = np.zeros((M, k + 1), np.int64)
    hmax = np.zeros(k + 1, np.int64)
    hmin = np.zeros(k + 1, np.int64)
    htot = np.zeros(M * k + 1, np.int64)
    colsum = np.zeros(M, np.int64)
    rmax_sum = 0
    for i in range(c.shape[0]):
        rmax_sum += _accumulate_row(c[i], hist, hmax, hmin, htot, colsum)
    _finalize(out, hist, hmax, hmin, htot, colsum, rmax_sum, needs, need_mix, n_total, k)


@njit(cache=True)
def many_table_stats(tables, needs, need_mix, n_total, k):
    """Statistics of tables[B, n, M]; returns float64 [B, 3T + 1]."""
    B = tables.shape[0]
    T = needs.shape[0]
    out = np.empty((B, 3 * T + 1))
    for b in range(B):
        _table_stats(tables[b], needs, need_mix, n_total, k, out[b])
    return out


# ---------------------------------------------------------------------------- re-deal
@njit(cache=True)
def build_alias(M, k):
    """Alias tables for Hypergeometric(g, r k - g, k): successes a group of k receives when g
    successes remain among r groups of k. Row ``offsets[r] + g`` holds the table for (g, r)."""
    offsets = np.zeros(M + 1, np.int64)
    total = 0
    for r in range(2, M + 1):
        offsets[r] = total
        total += r * k + 1
    K = k + 1
    prob = np.zeros((total, K))
    alias = np.zeros((total, K), np.int64)
    pmf = np.zeros(K)
    small = np.empty(K, np.int64)
    large = np.empty(K, np.int64)
    for r in range(2, M + 1):
        N = r * k
        lden = math.lgamma(N + 1) - math.lgamma(k + 1) - math.lgamma(N - k + 1)
        for g in range(N + 1):
            row = offsets[r] + g
            lo = max(0, g - (N - k))
            hi = min(g, k)
            s = 0.0
            for c in range(K):
                if c < lo or c > hi:
                    pmf[c] = 0.0
                else:
                    lp = (
                        math.lgamma(g + 1) - math.lgamma(c + 1) - math.lgamma(g - c + 1)
                        + math.lgamma(N - g + 1) - math.lgamma(k - c + 1) - math.lgamma(N - g - k + c + 1)
                        - lden
                    )
                    pmf[c] = math.exp(lp)
                    s += pmf[c]
            # Vose's alias method on K equal-width cells
            ns = 0
            nl = 0
            for c in range(K):
                pmf[c] = pmf[c] / s * K
                if pmf[c] < 1.0:
                    small[ns] = c
                    ns += 1
                else:
                    large[nl] = c
                    nl += 1
            while ns > 0 and nl > 0:
                ns -= 1
                sm = small[ns]
                lg = large[nl - 1]
                prob[row, sm] = pmf[sm]
                alias[row, sm] = lg
                pmf[lg] = pmf[lg] + pmf[sm] - 1.0
                if pmf[lg] < 1.0:
                    nl -= 1
                    small[ns] = lg
                    ns += 1
            while nl > 0:
                nl -= 1
                prob[row, large[nl]] = 1.0
                alias[row, large[nl]] = large[nl]
            while ns > 0:  # rounding leftovers
                ns -= 1
                prob[row, small[ns]] = 1.0
                alias[row, small[ns]] = small[ns]
    return offsets, prob, alias


@njit(cache=True)
def _deal_row(s, total, M, k, offsets, prob, alias, row):
    """Deal ``total`` successes among M groups of k (sequential hypergeometric draws, O(1) each
    from the alias tables); return the new stream state."""
    g = total
    K = k + 1
    for m in range(M - 1):
        idx = offsets[M - m] + g
        s, u = _double(s)
        u *= K
        j = np.int64(u)
        if j > k:
            j = k
        if u - j >= prob[idx, j]:
            j = alias[idx, j]
        row[m] = j
        g -= j
    row[M - 1] = g
    return s


_REDEAL_BATCH = 32


@njit(cache=True)
def _redeal_batch(bi, out, totals, M, k, key, start, n_draws, offsets, prob, alias, needs, need_mix, n_total):
    """Draws [bi*32, bi*32 + 32) of :func:`redeal_stats`, prompt-major so that the alias rows of
    one prompt serve the whole batch while they are in cache."""
    bb = _REDEAL_BATCH
    b0 = bi * bb
    nb = min(bb, n_draws - b0)
    na = totals.shape[0]
    states = np.empty(nb, np.uint64)
    for j in range(nb):
        states[j] = _stream_start(key, start + b0 + j)
    row = np.empty(M, np.int64)
    hist = np.zeros((nb, M, k + 1), np.int32)
    hmax = np.zeros((nb, k + 1), np.int32)
    hmin = np.zeros((nb, k + 1), np.int32)
    htot = np.zeros((nb, M * k + 1), np.int32)
    colsum = np.zeros((nb, M), np.int64)
    rmax_sum = np.zeros(nb, np.int64)
    for i in range(na):
        ti = totals[i]
        for j in range(nb):
            states[j] = _deal_row(states[j], ti, M, k, offsets, prob, alias, row)
            rmax_sum[j] += _accumulate_row(row, hist[j], hmax[j], hmin[j], htot[j], colsum[j])
    for j in range(nb):
        _finalize(out[b0 + j], hist[j], hmax[j], hmin[j], htot[j], colsum[j], rmax_sum[j], needs, need_mix, n_total, k)


@njit(cache=True)
def redeal_stats(totals, M, k, key, start, n_draws, offsets, prob, alias, needs, need_mix, n_total):
    """Statistics of ``n_draws`` re-deals of the movable prompts' totals, float64 [n_draws, 3T+1];
    draw d uses the stream ``start + d``, consumed prompt by prompt."""
    out = np.empty((n_draws, 3 * needs.shape[0] + 1))
    for bi in range((n_draws + _REDEAL_BATCH - 1) // _REDEAL_BATCH):
        _redeal_batch(bi, out, totals, M, k, key, start, n_draws, offsets, prob, alias, needs, need_mix, n_total)
    return out


@njit(cache=True, parallel=True)
def redeal_stats_parallel(totals, M, k, key, start, n_draws, offsets, prob, alias, needs, need_mix, n_total):
    """:func:`redeal_stats` with batches of draws spread over threads (same results)."""
    out = np.empty((n_draws, 3 * needs.shape[0] + 1))
    for bi in prange((n_draws + _REDEAL_BATCH - 1) // _REDEAL_BATCH):
        _redeal_batch(bi, out, totals, M, k, key, start, n_draws, offsets, prob, alias, needs, need_mix, n_total)
    return out


@njit(cache=True)
def redeal_tables(totals, M, k, key, start, n_draws, offsets, prob, alias):
    """``n_draws`` re-dealt count tables [n_draws, n_rows, M] (same streams as ``redeal_stats``)."""
    na = totals.shape[0]
    out = np.empty((n_draws, na, M), np.int64)
    row = np.empty(M, np.int64)
    for d in range(n_draws):
        s = _stream_start(key, start + d)
        for i in range(na):
            s = _deal_row(s, totals[i], M, k, offsets, prob, alias, row)
            for m in range(M):
                out[d, i, m] = row[m]
    return out


# ---------------------------------------------------------------------------- margin chain
@njit(cache=True)
def _chain_segment(c, k, s, n_steps, heat, w, up, dn, logc, use_log):
    """Run ``n_steps`` proposals of the margin chain on table ``c`` (in place) from stream state
    ``s``; return (new state, number of proposals that changed the table).

    A proposal picks prompts p != q among the movable prompts and members a != b uniformly and
    considers the transfer t: (c[p,a] - t, c[p,b] + t, c[q,a] + t, c[q,b] - t), which keeps
    every prompt and member total. The target weights along that line are
    W(t) = C(k, c[p,a]-t) C(k, c[p,b]+t) C(k, c[q,a]+t) C(k, c[q,b]-t) on the feasible range
    lo <= t <= hi. Heat-bath (``heat``): draw t with probability W(t) / sum W, computed in one
    pass from lo with the ratios up[j] = C(k, j+1)/C(k, j) and dn[j] = C(k, j-1)/C(k, j) (log
    weights when k > 128). Metropolis: t = +1, accepted with probability min(1, W(1)/W(0)).
    """
    na = c.shape[0]
    M = c.shape[1]
    una = np.uint64(na)
    una1 = np.uint64(na - 1)
    uM = np.uint64(M)
    uM1 = np.uint64(M - 1)
    lo32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    moved = 0
    for _ in range(n_steps):
        s, z = _u64(s)
        p = np.int64(((z & lo32) * una) >> s32)
        q = np.int64(((z >> s32) * una1) >> s32)
        s, z = _u64(s)
        a = np.int64(((z & lo32) * uM) >> s32)
        b = np.int64(((z >> s32) * uM1) >> s32)
        if q >= p:
            q += 1
        if b >= a:
            b += 1
        x = c[p, a]
        y = c[p, b]
        u = c[q, a]
        v = c[q, b]
        if heat:
            hi = min(min(x, k - y), min(k - u, v))
            lo = -min(min(k - x, y), min(u, k - v))
            if hi == lo:
                continue
            nn = hi - lo
            if use_log:
                mx = -1e300
                for j in range(nn + 1):
                    t = lo + j
                    w[j] = logc[x - t] + logc[y + t] + logc[u + t] + logc[v - t]
                    if w[j] > mx:
                        mx = w[j]
                acc = 0.0
                for j in range(nn + 1):
                    acc += math.exp(w[j] - mx)
                    w[j] = acc
            else:
                cur = 1.0
                acc = 1.0
                w[0] = 1.0
                for j in range(1, nn + 1):
                    t = lo + j
                    cur *= (dn[x - t + 1] * up[y + t - 1]) * (up[u + t - 1] * dn[v - t + 1])
                    acc += cur
                    w[j] = acc
            s, z = _u64(s)
            r = np.float64(z >> _S11) * _INV53 * w[nn]
            i = 0
            for j in range(nn):
                i += w[j] <= r
            t = lo + i
            if t != 0:
                c[p, a] = x - t
                c[p, b] = y + t
                c[q, a] = u + t
                c[q, b] = v - t
                moved += 1
        else:
            s, z = _u64(s)
            if x == 0 or y == k or u == k or v == 0:
                continue
            ratio = dn[x] * up[y] * up[u] * dn[v]
            if ratio >= 1.0 or np.float64(z >> _S11) * _INV53 < ratio:
                c[p, a] = x - 1
                c[p, b] = y + 1
                c[q, a] = u + 1
                c[q, b] = v - 1
                moved += 1
    return s, moved


@njit(cache=True)
def _ratio_tables(k):
    up = np.empty(k + 1)
    dn = np.empty(k + 1)
    logc = np.empty(k + 1)
    for j in range(k + 1):
        up[j] = (k - j) / (j + 1)
        dn[j] = j / (k - j + 1)
        logc[j] = math.lgamma(k + 1) - math.lgamma(j + 1) - math.lgamma(k - j + 1)
    return up, dn, logc


@njit(cache=True)
def _one_chain(ch, states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
               tables_out, store_tables, moves_out, up, dn, logc):
    c = states[ch]
    use_log = k > 128
    w = np.empty(k + 2)
    s, moved = _chain_segment(c, k, streams[ch], burn, heat, w, up, dn, logc, use_log)
    for d in range(n_per[ch]):
        s, m = _chain_segment(c, k, s, thin, heat, w, up, dn, logc, use_log)
        moved += m
        _table_stats(c, needs, need_mix, n_total, k, stats_out[out_off[ch] + d])
        if store_tables:
            tables_out[out_off[ch] + d] = c
    streams[ch] = s
    moves_out[ch] += moved


@njit(cache=True)
def run_chains(states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
               tables_out, store_tables, moves_out):
    """Advance each chain (states[C, n_rows, M], stream states[C]) by ``burn`` proposals, then
    retain ``n_per[ch]`` tables, one every ``thin`` proposals, writing their statistics (and the
    tables when ``store_tables``) at rows ``out_off[ch] + d``; ``moves_out[ch]`` counts changes.
    The chain state and its stream state are updated in place, so a long run split into several
    calls gives exactly the draws of one call (the driver keeps every call short, so that
    Ctrl-C is honoured between calls)."""
    up, dn, logc = _ratio_tables(k)
    for ch in range(states.shape[0]):
        _one_chain(ch, states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
                   tables_out, store_tables, moves_out, up, dn, logc)


@njit(cache=True, parallel=True)
def run_chains_parallel(states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
                        tables_out, store_tables, moves_out):
    """:func:`run_chains` with the chains spread over threads (same results: one stream per chain)."""
    up, dn, logc = _ratio_tables(k)
    for ch in prange(states.shape[0]):
        _one_chain(ch, states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
                   tables_out, store_tables, moves_out, up, dn, logc)


# ---------------------------------------------------------------------------- label permutation
@njit(cache=True)
def spread_draws(c, needs, key, start, n_draws):
    """Member-coverage spread max_m C_m - min_m C_m (per threshold, as counts of prompts) after
    permuting the policy labels independently within every prompt; returns int64 [n_draws, T]."""
    n, M = c.shape
    T = needs.shape[0]
    out = np.empty((n_draws, T), np.int64)
    row = np.empty(M, np.int64)
    member = np.zeros((T, M), np.int64)
    for d in range(n_draws):
        s = _stream_start(key, start + d)
        member[:] = 0
        for i in range(n):
            for m in range(M):
                row[m] = c[i, m]
            for m in range(M - 1, 0, -1):  # Fisher-Yates
                s, j = _int_below(s, m + 1)
                tmp = row[m]
                row[m] = row[j]
                row[j] = tmp
            for t in range(T):
                for m in range(M):
                    if row[m] >= needs[t]:
                        member[t, m] += 1
        for t in range(T):
            lo = member[t, 0]
            hi = member[t, 0]
            for m in range(1, M):
                lo = min(lo, member[t, m])
                hi = max(hi, member[t, m])
            out[d, t] = hi - lo
    return out


# ---------------------------------------------------------------------------- pool-size curves
@njit(cache=True)
def _subset_curve(masks_hist, member, M, n_total, out_L, out_D, sizes_count):
    """From per-threshold histograms of coverage bitmasks, average L and D over every subset of
    each size. masks_hist[T, 2^M], member[T, M] (counts); out_*[T, M+1] (index = subset size)."""
    T = masks_hist.shape[0]
    F = 1 << M
    sub = np.empty(F, np.int64)
    sup = np.empty(F, np.int64)
    for t in range(T):
        for s in range(F):
            sub[s] = masks_hist[t, s]
            sup[s] = masks_hist[t, s]
        for bit in range(M):
            b = 1 << bit
            for s in range(F):
                if s & b:
                    sub[s] += sub[s ^ b]  # sum over masks contained in s
                else:
                    sup[s] += sup[s | b]  # sum over masks containing s
        for sz in range(M + 1):
            out_L[t, sz] = 0.0
            out_D[t, sz] = 0.0
        full = F - 1
        n_in = 0
        for s in range(F):
            n_in += masks_hist[t, s]
        for S in range(1, F):
            size = 0
            best = 0
            for m in range(M):
                if S & (1 << m):
                    size += 1
                    if member[t, m] > best:
                        best = member[t, m]
            orac = n_in - sub[full ^ S]
            allc = sup[S]
            out_L[t, size] += (orac - best) / n_total
            out_D[t, size] += (orac - allc) / n_total
        for sz in range(1, M + 1):
            out_L[t, sz] /= sizes_count[sz]
            out_D[t, sz] /= sizes_count[sz]


@njit(cache=True)
def _hist_from_row(row, needs, hist, member):
    T = needs.shape[0]
    M = row.shape[0]
    for t in range(T):
        mask = 0
        for m in range(M):
            if row[m] >= needs[t]:
                mask |= 1 << m
                member[t, m] += 1
        hist[t, mask] += 1


@njit(cache=True)
def size_curve_observed(c, needs, n_total, sizes_count, n_full):
    n, M = c.shape
    T = needs.shape[0]
    hist = np.zeros((T, 1 << M), np.int64)
    member = np.zeros((T, M), np.int64)
    for i in range(n):
        _hist_from_row(c[i], needs, hist, member)
    for t in range(T):
        hist[t, (1 << M) - 1] += n_full
        for m in range(M):
            member[t, m] += n_full
    out_L = np.zeros((T, M + 1))
    out_D = np.zeros((T, M + 1))
    _subset_curve(hist, member, M, n_total, out_L, out_D, sizes_count)
    return out_L, out_D


@njit(cache=True)
def size_curve_redeal(totals, M, k, key, start, n_draws, offsets, prob, alias, needs, n_total, sizes_count, n_full):
    """Pool-size curves of L and D for ``n_draws`` re-deals: float64 [n_draws, 2, T, M+1]."""
    T = needs.shape[0]
    na = totals.shape[0]
    out = np.zeros((n_draws, 2, T, M + 1))
    row = np.empty(M, np.int64)
    hist = np.zeros((T, 1 << M), np.int64)
    member = np.zeros((T, M), np.int64)
    oL = np.zeros((T, M + 1))
    oD = np.zeros((T, M + 1))
    for d in range(n_draws):
        s = _stream_start(key, start + d)
        hist[:] = 0
        member[:] = 0
        for i in range(na):
            s = _deal_row(s, totals[i], M, k, offsets, prob, alias, row)
            _hist_from_row(row, needs, hist, member)
        for t in range(T):
            hist[t, (1 << M) - 1] += n_full
            for m in range(M):
                member[t, m] += n_full
        _subset_curve(hist, member, M, n_total, oL, oD, sizes_count)
        out[d, 0] = oL
        out[d, 1] = oD
    return out


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


_ALIAS_CACHE: dict[tuple[int, int], tuple] = {}
_ALIAS_LIMIT = 30_000_000  # entries; beyond this the re-deal falls back to numpy's sampler


def _alias(M: int, k: int):
    key = (M, k)
    if key not in _ALIAS_CACHE:
        size = sum(r * k + 1 for r in range(2, M + 1)) * (k + 1)
        if size > _ALIAS_LIMIT:
            return None
        if len(_ALIAS_CACHE) > 16:
            _ALIAS_CACHE.clear()
        _ALIAS_CACHE[key] = build_alias(M, k)
    return _ALIAS_CACHE[key]


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
    kern = redeal_stats_parallel if n_draws * prep.totals.size * prep.M >= _PARALLEL_WORK else redeal_stats
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
@dataclasses.dataclass(frozen=True, eq=False)
class NullTest:
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
    p_convention: str = "paper"
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


@dataclasses.dataclass(frozen=True, eq=False)
class ChainDiagnostics:
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


@dataclasses.dataclass(frozen=True, eq=False)
class NullTests:
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
        obs = {}
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
            notes = {}
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
@dataclasses.dataclass(frozen=True, eq=False)
class TableStatistics:
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
                store_tables: bool, progress: bool, batch: int | None):
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
    states = np.ascontiguousarray(np.broadcast_to(prep.c_active, (C, na, M)).copy())
    streams = np.array([_stream_start(chain_key, c) for c in range(C)], dtype=np.uint64)
    stats = np.empty((n_draws, S))
    tables_active = np.empty((n_draws if store_tables else 0, na, M), np.int64)
    moves = np.zeros(C, np.int64)
    proposals_total = int(C * burn + thin * n_draws)
    parallel = C > 1 and proposals_total >= _PARALLEL_WORK
    kern = run_chains_parallel if parallel else run_chains
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
             stats, tables_active, store_tables, moves)
        if bar is not None:
            bar.update(int(C * burn_ + thin_ * take.sum()))

    def advance(live: np.ndarray, steps: int):
        """``steps`` proposals on the chains in ``live`` only (the others keep their state)."""
        sub_states = np.ascontiguousarray(states[live])
        sub_streams = streams[live].copy()
        sub_moves = np.zeros(live.size, np.int64)
        kern(sub_states, sub_streams, prep.k, steps, 1, np.zeros(live.size, np.int64), np.zeros(live.size, np.int64),
             heat, prep.needs, prep.need_mix, prep.n, stats, tables_active, False, sub_moves)
        states[live] = sub_states
        streams[live] = sub_streams
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
            numba.set_parallel_chunksize(old_chunk)
        if bar is not None:
            bar.close()
    tables = None
    if store_tables:
        tables = np.broadcast_to(prep.counts, (n_draws,) + prep.counts.shape).copy()
        tables[:, prep.active, :] = tables_active
    return stats, tables, chain_id, moves, proposals_total


@dataclasses.dataclass(frozen=True, eq=False)
class ChainSample:
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
@dataclasses.dataclass(frozen=True, eq=False)
class ExactMarginLaw:
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


# ============================================================================ kernel warm-up
def warm_up(parallel: bool = False) -> None:
    """Compile (or load from numba's cache) every kernel on a tiny table, so that later timings
    measure the work and not the compilation; ``parallel=True`` includes the threaded kernels
    used for large pools."""
    c = np.array([[1, 0, 2], [2, 1, 0], [0, 2, 1], [2, 2, 2]], dtype=np.int64)
    null_tests(c, (0.5,), k=2, n_draws=4, seed=0)
    redeal(c, 2, k=2)
    margin_chain(c, 2, k=2)
    member_spread(c, (0.5,), k=2, n_draws=2)
    pool_size_curve(c, (0.5,), k=2, n_draws=2)
    if parallel:
        prep = _prepare(c, (0.5,), 2)
        offsets, prob, alias = _alias(prep.M, prep.k)
        redeal_stats_parallel(prep.totals, prep.M, prep.k, np.uint64(1), 0, 2, offsets, prob, alias, prep.needs,
                              prep.need_mix, prep.n)
        states = np.ascontiguousarray(np.broadcast_to(prep.c_active, (2,) + prep.c_active.shape).copy())
        run_chains_parallel(states, np.array([1, 2], np.uint64), prep.k, 1, 1, np.array([1, 1], np.int64),
                            np.array([0, 1], np.int64), True, prep.needs, prep.need_mix, prep.n, np.empty((2, 4)),
                            np.empty((0,) + prep.c_active.shape, np.int64), False, np.zeros(2, np.int64))


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
    if batch is not None:
        per = min(per, check_int(batch, "batch", minimum=1))
    out = np.empty((n_draws, 3 * prep.taus.size + 1))
    for s0 in _progress(range(0, n_draws, per), progress, desc="re-deal", unit="batch"):
        b = min(per, n_draws - s0)
        out[s0:s0 + b] = _redeal_stats(prep, key, s0, b)
    return out


# ---------------------------------------------------------------------------- degenerate nulls
@dataclasses.dataclass(frozen=True)
class SkippedTest:
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
    p_convention: str = "paper",
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
    redeal_key, chain_key = _keys(as_rng(seed))
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
            per_chain = np.bincount(chain_id)
            chain_acc = tuple(float(m) / (burn + th * int(d)) if proposals else 0.0
                              for m, d in zip(moves, per_chain, strict=True))
            chain_diag = ChainDiagnostics(move, per_chain.size, burn, th, int(prep.active.size), proposals, acc,
                                          chain_acc, ess_map)
    note = alignment_note(x)
    return NullTests(tuple(tests), chain_diag, prep.n, prep.M, prep.k, int(prep.n - prep.active.size),
                     tuple(skipped), ((note,) if note else ()) + _tau_notes(prep, statistics))


# ============================================================================ excess bootstrap
@dataclasses.dataclass(frozen=True, eq=False)
class ExcessBootstrap:
    """Prompt-bootstrap percentile interval for the excess (observed minus null mean)."""

    statistic: str
    tau: float
    null: str
    excess: float
    lo: float
    hi: float
    level: float
    draws: np.ndarray

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"statistic": self.statistic, "tau": self.tau, "null": self.null, "excess": self.excess,
                              "lo": self.lo, "hi": self.hi, "level": self.level, "n_boot": self.draws.size}])


def excess_bootstrap(
    x,
    tau: float = 0.10,
    *,
    k: int | None = None,
    statistic: str = "L",
    null: str = "redeal",
    n_boot: int = 1000,
    n_draws: int = 200,
    level: float = 0.95,
    seed=0,
    progress: bool = False,
) -> ExcessBootstrap:
    """Percentile interval for the excess: resample prompts with replacement ``n_boot`` times and
    on each resample recompute the observed statistic and its null mean (``n_draws`` null draws;
    a resampled prompt that appears twice is re-dealt twice, independently). The point estimate
    uses the full data with the same ``n_draws``."""
    _check_statistics(statistic)
    _check_choice(null, "null", NULLS)
    n_boot = check_int(n_boot, "n_boot", minimum=2)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    level = check_prob(level, "level", open_low=True, open_high=True)
    prep = _prepare(x, [tau], k)
    rng = as_rng(seed)

    def one(counts, gen):
        res = null_tests(counts, [tau], k=prep.k, nulls=(null,), statistics=(statistic,), n_draws=n_draws, seed=gen,
                         n_chains=1 if null == "margin" else 4, skip_degenerate=False)
        t = res.tests[0]
        return t.observed - t.mean

    point = one(prep.counts, rng)
    draws = np.empty(n_boot)
    for b in _progress(range(n_boot), progress, desc="excess bootstrap", unit="resample"):
        idx = rng.integers(0, prep.n, prep.n)
        draws[b] = one(prep.counts[idx], rng)
    a = (1 - level) / 2
    lo, hi = np.percentile(draws, [100 * a, 100 * (1 - a)])
    return ExcessBootstrap(statistic, float(prep.taus[0]) if statistic != "pass1" else float("nan"), null, float(point),
                           float(lo), float(hi), level, draws)


# ============================================================================ split-half
@dataclasses.dataclass(frozen=True, eq=False)
class SplitHalf:
    """Select on one half of every cell's responses, score on the other (averaged over splits).

    ``gap_selection``: per-prompt member and fixed comparator both chosen on the selection half,
    both scored on the scoring half. ``gap_scoring``: comparator chosen on the scoring half
    (favours the comparator). ``plugin_half``: the plug-in L on the selection half alone.
    Arrays are [n_splits, T]; the attributes ending in ``_mean`` average over splits.
    """

    taus: np.ndarray
    k_select: int
    k_score: int
    gap_selection: np.ndarray
    gap_scoring: np.ndarray
    plugin_half: np.ndarray

    @property
    def gap_selection_mean(self) -> np.ndarray:
        return self.gap_selection.mean(axis=0)

    @property
    def gap_scoring_mean(self) -> np.ndarray:
        return self.gap_scoring.mean(axis=0)

    @property
    def plugin_half_mean(self) -> np.ndarray:
        return self.plugin_half.mean(axis=0)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({
            "tau": self.taus,
            "need_select": need(self.taus, self.k_select),
            "need_score": need(self.taus, self.k_score),
            "split_half": self.gap_selection_mean,
            "split_half_sd": self.gap_selection.std(axis=0, ddof=1) if self.gap_selection.shape[0] > 1 else np.nan,
            "scoring_comparator": self.gap_scoring_mean,
            "plugin_half": self.plugin_half_mean,
            "n_splits": self.gap_selection.shape[0],
        })


def split_half(x, taus=(0.05, 0.10, 0.20, 0.30), *, k: int | None = None, n_splits: int = 200, seed=0) -> SplitHalf:
    """Split-half selection and scoring (arXiv 2609.32996, App. C.1).

    For each of ``n_splits`` random splits, every cell's k responses are split into a selection
    half of floor(k/2) and a scoring half of the rest (drawn from the counts: the selection-half
    count is hypergeometric, the law of a uniformly random split). On each prompt the member
    with the most selection-half successes is chosen (ties at random); its coverage is scored on
    the scoring half against a fixed comparator chosen on the selection half (ties at random).
    Needs k >= 2.
    """
    taus = check_taus(taus)
    c, k = as_counts(x, k)
    if k < 2:
        raise ValueError(f"split_half needs k >= 2 responses per cell to split them, got k={k}")
    if c.shape[1] < 2:
        raise ValueError("x has a single policy; split_half compares members and needs n_policies >= 2")
    n_splits = check_int(n_splits, "n_splits", minimum=1)
    rng = as_rng(seed)
    n, M = c.shape
    k1 = k // 2
    k2 = k - k1
    T = taus.size
    g_sel = np.empty((n_splits, T))
    g_sco = np.empty((n_splits, T))
    plug = np.empty((n_splits, T))
    n1 = np.atleast_1d(need(taus, k1))
    n2 = np.atleast_1d(need(taus, k2))
    chunk = max(1, int(4_000_000 // max(1, n * M)))
    for s0 in range(0, n_splits, chunk):
        S = min(chunk, n_splits - s0)
        c1 = rng.hypergeometric(np.broadcast_to(c, (S, n, M)), np.broadcast_to(k - c, (S, n, M)), k1)
        c2 = c[None] - c1
        key = c1 + 0.5 * rng.random((S, n, M))
        sel = key.argmax(axis=2)  # [S, n]
        tie_m = 0.5 * rng.random((S, T, M))
        for t in range(T):
            cov1 = c1 >= n1[t]
            cov2 = c2 >= n2[t]
            orac_score = np.take_along_axis(cov2, sel[:, :, None], axis=2)[:, :, 0].mean(axis=1)
            m1 = cov1.sum(axis=1) + tie_m[:, t, :]
            comp = m1.argmax(axis=1)
            comp_score = np.take_along_axis(cov2, comp[:, None, None], axis=2)[:, :, 0].mean(axis=1)
            g_sel[s0:s0 + S, t] = orac_score - comp_score
            g_sco[s0:s0 + S, t] = orac_score - cov2.mean(axis=1).max(axis=1)
            plug[s0:s0 + S, t] = cov1.any(axis=2).mean(axis=1) - cov1.mean(axis=1).max(axis=1)
    return SplitHalf(taus, k1, k2, g_sel, g_sco, plug)


# ============================================================================ pool-size curve
@dataclasses.dataclass(frozen=True, eq=False)
class PoolSizeCurve:
    """L and D averaged over all member subsets of each size, observed and under the re-deal null.

    ``observed_L``/``observed_D`` and ``null_L``/``null_D`` are [T, M - 1] for sizes 2..M (null:
    mean over draws); ``rise`` holds one :class:`NullTest` per threshold for the rise of the
    chosen statistic from 2 to M members.
    """

    taus: np.ndarray
    sizes: np.ndarray
    observed_L: np.ndarray
    observed_D: np.ndarray
    null_L: np.ndarray
    null_D: np.ndarray
    rise: tuple

    @property
    def tests(self) -> tuple:
        return self.rise

    def frame(self) -> pd.DataFrame:
        rows = []
        for t, tau in enumerate(self.taus):
            for j, s in enumerate(self.sizes):
                rows.append({"tau": tau, "size": int(s), "L": self.observed_L[t, j], "L_null": self.null_L[t, j],
                             "D": self.observed_D[t, j], "D_null": self.null_D[t, j]})
        return pd.DataFrame(rows)


def pool_size_curve(x, taus=(0.05, 0.10, 0.20, 0.30), *, k: int | None = None, n_draws: int = 2000, seed=0,
                    statistic: str = "L", max_policies: int = 14) -> PoolSizeCurve:
    """Average L and D over every subset of each size 2..M (Section 3.4), and test the rise of
    ``statistic`` (``"L"`` or ``"D"``) from 2 to M members against the re-deal null: each draw
    re-deals the full pool, then averages over the same subsets. Exact over all 2^M subsets via
    subset-sum transforms of per-prompt coverage bitmasks (M <= ``max_policies``)."""
    _check_choice(statistic, "statistic", ("L", "D"))
    prep = _prepare(x, taus, k)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    M = prep.M
    if M > check_int(max_policies, "max_policies", minimum=2):
        raise ValueError(f"pool_size_curve enumerates 2^M subsets; M={M} exceeds max_policies={max_policies}")
    sizes_count = np.array([math.comb(M, s) for s in range(M + 1)], dtype=np.float64)
    s_all = prep.counts.sum(axis=1)
    n_full = int((s_all == M * prep.k).sum())
    obs_L, obs_D = size_curve_observed(prep.c_active, prep.needs, prep.n, sizes_count, n_full)
    key, _ = _keys(as_rng(seed))
    tabs = _alias(M, prep.k)
    if prep.active.size == 0:
        draws = np.broadcast_to(np.stack([obs_L, obs_D]), (n_draws, 2) + obs_L.shape).copy()
    elif tabs is None:  # very large M k: tables from numpy's sampler, curves one table at a time
        draws = np.empty((n_draws, 2) + obs_L.shape)
        for s0 in range(0, n_draws, 256):
            tabs_b = _redeal_active_tables(prep, key, s0, min(256, n_draws - s0))
            for j, tb in enumerate(tabs_b):
                draws[s0 + j, 0], draws[s0 + j, 1] = size_curve_observed(tb, prep.needs, prep.n, sizes_count, n_full)
    else:
        offsets, prob, alias = tabs
        draws = size_curve_redeal(prep.totals, M, prep.k, key, 0, n_draws, offsets, prob, alias, prep.needs, prep.n,
                                  sizes_count, n_full)
    which = 0 if statistic == "L" else 1
    obs = obs_L if statistic == "L" else obs_D
    rise = tuple(
        NullTest(f"rise_{statistic}_2_to_{M}", float(tau), "redeal", float(obs[t, M] - obs[t, 2]),
                 draws[:, which, t, M] - draws[:, which, t, 2], ess=float(n_draws))
        for t, tau in enumerate(prep.taus)
    )
    return PoolSizeCurve(prep.taus, np.arange(2, M + 1), obs_L[:, 2:], obs_D[:, 2:], draws[:, 0, :, 2:].mean(axis=0),
                         draws[:, 1, :, 2:].mean(axis=0), rise)


# ============================================================================ member spread
def member_spread(x, taus=(0.05, 0.10, 0.20, 0.30), *, k: int | None = None, n_draws: int = 2000, seed=0,
                  p_convention: str = "paper") -> NullTests:
    """Spread of member coverage, max_m C_m(tau) - min_m C_m(tau), against a reference that
    permutes the policy labels independently within every prompt (App. C.5). The reference keeps
    each prompt's set of member rates and removes consistent member identity across prompts."""
    prep = _prepare(x, taus, k)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    _check_choice(p_convention, "p_convention", _P_CONVENTIONS)
    key, _ = _keys(as_rng(seed))
    cov = prep.counts[None, :, :] >= prep.needs[:, None, None]
    member = cov.mean(axis=1)
    obs = member.max(axis=1) - member.min(axis=1)
    c_act = prep.c_active
    if c_act.shape[0] == 0:
        d = np.zeros((n_draws, prep.taus.size))
    else:
        d = spread_draws(c_act, prep.needs, key, 0, n_draws) / prep.n
    tests = tuple(NullTest("member_spread", float(tau), "label-permutation", float(obs[t]), d[:, t], p_convention,
                           float(n_draws)) for t, tau in enumerate(prep.taus))
    return NullTests(tests, None, prep.n, prep.M, prep.k, int(prep.n - prep.active.size))


# ============================================================================ member coverage
@dataclasses.dataclass(frozen=True, eq=False)
class MemberCoverage:
    """Each member's coverage against the margin-preserving null (App. C.5): ``tests`` holds one
    :class:`NullTest` per (member, tau), statistic ``member_coverage``, in the order of
    ``members`` x ``taus``; :meth:`frame` adds a ``member`` column."""

    tests: tuple
    members: tuple  # member name of each test
    chain: ChainDiagnostics | None

    def frame(self) -> pd.DataFrame:
        return tests_frame(self.tests).assign(member=list(self.members))


def member_coverage(x, taus=(0.05, 0.10, 0.20, 0.30), *, k: int | None = None, n_draws: int = 2000, seed=0,
                    burn_in: int | None = None, thin: int | None = None, p_convention: str = "paper") -> MemberCoverage:
    """Coverage C_m(tau) = (1/n) sum_i 1[c_im >= need(tau, k)] of every member against its law
    under the margin-preserving null, which keeps the member's total successes t_m = sum_i c_im
    (and every prompt's total). A small upper-tail p (lower-tail fraction near 1) says the member
    covers more prompts than the additive logit model predicts for its total: its successes are
    spread thinly over many prompts (2609.32996 App. C.5: the leading seed on validation, lower-tail
    fraction 0.993); a small lower-tail fraction says they are concentrated on fewer prompts.
    Draws come from :func:`margin_chain` with the same settings; each test's ESS uses the chains."""
    prep = _prepare(x, taus, k)
    _check_choice(p_convention, "p_convention", _P_CONVENTIONS)
    names = x.policy_names if hasattr(x, "policy_names") else [f"m{j}" for j in range(prep.M)]
    sample = margin_chain(prep.counts, n_draws, k=prep.k, seed=seed, burn_in=burn_in, thin=thin)
    obs = (prep.counts[None] >= prep.needs[:, None, None]).mean(axis=1)  # [T, M]
    draws = (sample.tables[:, None] >= prep.needs[None, :, None, None]).mean(axis=2)  # [B, T, M]
    ess = {}
    tests, members = [], []
    for m, name in enumerate(names):
        for t, tau in enumerate(prep.taus):
            d = draws[:, t, m]
            e = effective_sample_size(d, sample.chain_id)
            ess[(f"member_coverage:{name}", float(tau))] = e
            tests.append(NullTest("member_coverage", float(tau), "margin", float(obs[t, m]), d, p_convention, e,
                                  sample.acceptance))
            members.append(str(name))
    chain = ChainDiagnostics("heatbath", int(np.unique(sample.chain_id).size), sample.burn_in, sample.thin,
                             int(prep.active.size), int(sample.burn_in * np.unique(sample.chain_id).size + sample.thin * n_draws),
                             sample.acceptance, (), ess)
    return MemberCoverage(tuple(tests), tuple(members), chain)


# ============================================================================ draw alignment
@dataclasses.dataclass(frozen=True, eq=False)
class DrawAlignment:
    """Agreement of responses with the same draw index across members (App. C.5).

    ``test``: the mean matched agreement against draw indices shuffled independently within
    every cell; ``expected``: the exact mean of that shuffle law; ``pairs``: observed and
    expected agreement per member pair."""

    test: NullTest
    expected: float
    pairs: pd.DataFrame

    @property
    def tests(self) -> tuple:
        return (self.test,)

    def frame(self) -> pd.DataFrame:
        return self.test.frame().assign(expected=self.expected)


def _pair_agreement(v: np.ndarray) -> np.ndarray:
    """Matched agreement per member pair, [..., P]: mean over prompts and draws of 1[R_imj = R_ilj]."""
    k = v.shape[-1]
    c = v.sum(axis=-1, dtype=np.int64)  # [..., n, M]
    both = np.einsum("...imj,...ilj->...iml", v.astype(np.int32), v.astype(np.int32))
    agree = (k - c[..., :, None] - c[..., None, :] + 2 * both) / k  # [..., n, M, M]
    iu = np.triu_indices(v.shape[-2], 1)
    return agree[..., iu[0], iu[1]].mean(axis=-2)


def draw_alignment(x, *, n_draws: int = 200, seed=0, p_convention: str = "paper") -> DrawAlignment:
    """Do responses with the same index j agree across members more than their counts imply?

    Statistic: A = mean over member pairs (m < l), prompts i and draws j of 1[R_imj = R_ilj].
    Reference: every cell's k responses put in an independent uniformly random order, which keeps
    every count c_im and breaks any link between draw j of one member and draw j of another.
    Its exact mean is the pair-and-prompt average of (c_im c_il + (k - c_im)(k - c_il)) / k^2.
    Both nulls of this module assume independent draws; seed-aligned sampling (the same random
    numbers for draw j under every policy) can make A exceed the reference, which moves the
    members' counts together and pulls oracle gaps below both nulls. ``x``: a Pool or verdicts
    bool[n, M, k] with M >= 2 and k >= 2.
    """
    v = np.asarray(x.verdicts if hasattr(x, "verdicts") else as_bool_array(x, "x"))
    if v.ndim != 3:
        raise ValueError(f"x must be a Pool or verdicts [n, M, k], got an array of rank {v.ndim}")
    n, M, k = v.shape
    if M < 2 or k < 2:
        raise ValueError(f"draw_alignment needs at least 2 members and 2 draws per cell, got M={M}, k={k}")
    v = v.astype(bool)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    _check_choice(p_convention, "p_convention", _P_CONVENTIONS)
    rng = as_rng(seed)
    obs_pairs = _pair_agreement(v)
    c = v.sum(axis=2, dtype=np.int64)
    iu = np.triu_indices(M, 1)
    exp_pairs = ((c[:, iu[0]] * c[:, iu[1]] + (k - c[:, iu[0]]) * (k - c[:, iu[1]])) / k**2).mean(axis=0)
    chunk = max(1, int(4_000_000 // (n * M * k)))
    draws = []
    for s0 in range(0, n_draws, chunk):
        b = min(chunk, n_draws - s0)
        order = np.argsort(rng.random((b, n, M, k)), axis=3)
        draws.append(_pair_agreement(np.take_along_axis(np.broadcast_to(v, order.shape), order, axis=3)).mean(axis=1))
    test = NullTest("matched_agreement", float("nan"), "draw-shuffle", float(obs_pairs.mean()), np.concatenate(draws),
                    p_convention, float(n_draws))
    names = x.policy_names if hasattr(x, "policy_names") else [f"m{j}" for j in range(M)]
    pairs = pd.DataFrame({"member_a": [names[a] for a in iu[0]], "member_b": [names[b] for b in iu[1]],
                          "observed": obs_pairs, "expected": exp_pairs})
    return DrawAlignment(test, float(exp_pairs.mean()), pairs)


def disjoint_draws(pool, k_each: int, *, offset: int = 0):
    """A pool in which member m keeps only its draws offset + m k_each, ..., offset + (m + 1) k_each - 1.

    When the pool is seed-aligned (draw j used the same sampling seed under every policy), no
    two members of the result share a draw index, hence no sampling seed, so their responses are
    independent given the policies, as both nulls assume. Needs offset + M k_each <= k. Answers
    and per-response arrays are cut the same way; the result's ``alignment`` is ``independent``
    and ``meta["disjoint_draws"]`` records the blocks.
    """
    from ..pool import Pool

    if not isinstance(pool, Pool):
        raise TypeError(f"pool must be an oraclegap Pool, got {type(pool).__name__}")
    n, M, k = pool.shape
    k_each = check_int(k_each, "k_each", minimum=1)
    offset = check_int(offset, "offset", minimum=0)
    if offset + M * k_each > k:
        raise ValueError(f"k_each={k_each} for {M} members from offset {offset} needs {offset + M * k_each} draws per cell; "
                         f"the pool has k={k}")
    idx = offset + np.arange(M)[:, None] * k_each + np.arange(k_each)[None, :]  # [M, k_each]

    def cut(a):
        return np.take_along_axis(a, np.broadcast_to(idx[None], (n, M, k_each)), axis=2)

    return dataclasses.replace(
        pool, verdicts=cut(pool.verdicts), answers=None if pool.answers is None else cut(pool.answers),
        per_response={name: cut(a) for name, a in pool.per_response.items()}, alignment="independent",
        meta={**pool.meta, "disjoint_draws": {"k_each": k_each, "offset": offset, "blocks": idx[:, [0, -1]].tolist()}},
    )


# ============================================================================ similarity
@dataclasses.dataclass(frozen=True, eq=False)
class Similarity:
    """App. B.1 diagnostics: mean pairwise correlation of members' per-prompt rates and the
    fraction of prompts whose member rates differ by more than ``diff`` (max - min), each against
    the re-deal null. ``corr`` is the observed M x M correlation matrix."""

    tests: tuple
    corr: np.ndarray
    diff: float

    def frame(self) -> pd.DataFrame:
        return tests_frame(self.tests)


def _similarity_stats(tables: np.ndarray, k: int, diff: float) -> tuple[np.ndarray, np.ndarray]:
    r = tables.astype(float) / k  # [B, n, M]
    B, n, M = r.shape
    z = r - r.mean(axis=1, keepdims=True)
    sd = np.sqrt((z ** 2).mean(axis=1, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = z / sd
        corr = np.einsum("bim,bil->bml", z, z) / n
    iu = np.triu_indices(M, 1)
    pairs = corr[:, iu[0], iu[1]]
    ok = ~np.isnan(pairs)
    n_ok = ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_corr = np.where(ok, pairs, 0.0).sum(axis=1) / n_ok  # NaN when every pair is undefined
    rng_ = tables.max(axis=2) - tables.min(axis=2)
    frac = (rng_ > diff * k + _TOL).mean(axis=1)
    return mean_corr, frac


def similarity(x, *, k: int | None = None, diff: float = 0.25, n_draws: int = 2000, seed=0,
               p_convention: str = "paper") -> Similarity:
    """Pairwise-similarity diagnostics of App. B.1 against the re-deal null.

    ``mean_pairwise_corr``: Pearson correlation of two members' raw per-prompt rates, averaged
    over the M(M-1)/2 pairs (pairs with a constant member are skipped). ``frac_rates_differ``:
    fraction of prompts where max_m c_im/k - min_m c_im/k > ``diff``.
    """
    diff = check_prob(diff, "diff")
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    prep = _prepare(x, [1.0], k)
    key, _ = _keys(as_rng(seed))
    obs_corr, obs_frac = _similarity_stats(prep.counts[None], prep.k, diff)
    corr = np.corrcoef((prep.counts / prep.k).T) if prep.n > 1 else np.full((prep.M, prep.M), np.nan)
    chunk = max(1, int(8_000_000 // max(1, prep.n * prep.M)))
    mc, fr = [], []
    for s0 in range(0, n_draws, chunk):
        b = min(chunk, n_draws - s0)
        tabs = np.broadcast_to(prep.counts, (b,) + prep.counts.shape).copy()
        if prep.active.size:
            tabs[:, prep.active, :] = _redeal_active_tables(prep, key, s0, b)
        m_, f_ = _similarity_stats(tabs, prep.k, diff)
        mc.append(m_)
        fr.append(f_)
    mc = np.concatenate(mc)
    fr = np.concatenate(fr)
    tests = []
    if np.isfinite(obs_corr[0]) and np.isfinite(mc).all():
        tests.append(NullTest("mean_pairwise_corr", float("nan"), "redeal", float(obs_corr[0]), mc, p_convention, float(n_draws)))
    tests.append(NullTest("frac_rates_differ", float("nan"), "redeal", float(obs_frac[0]), fr, p_convention, float(n_draws)))
    return Similarity(tuple(tests), corr, diff)


# ============================================================================ the Table 1 layout
@dataclasses.dataclass(frozen=True, eq=False)
class GapTable:
    """The oracle-gap tests of one pool side by side (the layout of Table 1 of 2609.32996):
    the null tests, split-half scores and the pool-size rise, with :meth:`frame` giving one row
    per threshold."""

    tests: NullTests
    split: SplitHalf
    sizes: PoolSizeCurve

    def frame(self) -> pd.DataFrame:
        rows = []
        for j, tau in enumerate(self.tests_taus):
            r = {"tau": tau}
            d = _test_or_point_mass(self.tests, "D", tau)
            r.update({"D": d.observed, "D_null": d.mean, "D_p": d.p})
            L = _test_or_point_mass(self.tests, "L", tau)
            r.update({"L": L.observed, "L_null": L.mean, "L_band_lo": L.band_lo, "L_band_hi": L.band_hi, "p": L.p,
                      "p_lower": L.p_lower, "excess": L.excess})
            try:
                m = self.tests.get("L", tau, "margin")
                r.update({"L_margin": m.mean, "p_m": m.p})
            except KeyError:
                r.update({"L_margin": np.nan, "p_m": np.nan})
            r["split_half"] = float(self.split.gap_selection_mean[j])
            o = _test_or_point_mass(self.tests, "oracle_minus_mixture", tau)
            r.update({"orac_minus_mix": o.observed, "orac_minus_mix_null": o.mean, "orac_minus_mix_p": o.p})
            notes = [f"{name}: {sk.short}" for name, sk in (("L", self.tests.is_skipped("L", tau)),
                     ("D", self.tests.is_skipped("D", tau)),
                     ("orac_minus_mix", self.tests.is_skipped("oracle_minus_mixture", tau))) if sk is not None]
            if notes:
                r["skipped"] = "; ".join(notes)
            rise = self.sizes.rise[j]
            r.update({"rise_L": rise.observed, "rise_L_null": rise.mean, "rise_p": rise.p})
            rows.append(r)
        out = pd.DataFrame(rows)
        if "skipped" in out.columns:
            out["skipped"] = out["skipped"].fillna("")
        return out

    @property
    def tests_taus(self) -> list[float]:
        return [float(t) for t in self.split.taus]


@dataclasses.dataclass(frozen=True)
class _PointMass:
    observed: float
    mean: float
    p: float
    band_lo: float
    band_hi: float
    p_lower: float
    excess: float


def _test_or_point_mass(tests: NullTests, statistic: str, tau):
    """The re-deal test, or for a skipped (degenerate) one its exact point mass: the null mean
    equals the observed value and p is left empty (NaN), since no test was made."""
    sk = tests.is_skipped(statistic, tau, "redeal")
    if sk is not None:
        o = sk.observed
        return _PointMass(o, o, float("nan"), o, o, float("nan"), 0.0)
    return tests.get(statistic, tau, "redeal")


def gap_table(x, taus=(0.05, 0.10, 0.20, 0.30), *, k: int | None = None, n_draws: int = 2000, n_splits: int = 200,
              seed=0, nulls=NULLS) -> GapTable:
    """Run everything Table 1 of 2609.32996 reports for one pool: L, D and oracle-minus-mixture
    against the re-deal null (and L against the margin-preserving null), split-half selection
    and scoring, and the re-deal null of the rise in L from 2 to M members."""
    nl = (nulls,) if isinstance(nulls, str) else tuple(nulls)
    if "redeal" not in nl:
        raise ValueError(f"nulls must include 'redeal' (D, oracle-minus-mixture and the rise use it), got {nulls!r}")
    rng = as_rng(seed)
    tests = null_tests(x, taus, k=k, nulls=nl, statistics=("L", "D", "oracle_minus_mixture"), n_draws=n_draws,
                       seed=rng)
    split = split_half(x, taus, k=k, n_splits=n_splits, seed=rng)
    sizes = pool_size_curve(x, taus, k=k, n_draws=n_draws, seed=rng)
    return GapTable(tests, split, sizes)


# ============================================================================ Benjamini-Hochberg
@dataclasses.dataclass(frozen=True, eq=False)
class BHResult:
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
    """Benjamini-Hochberg step-up adjustment (statsmodels ``multipletests(method="fdr_bh")``).

    ``results``: p-values, NullTest objects, or containers with ``.tests``; the upper-tail ``p``
    of each test is used.
    """
    from statsmodels.stats.multitest import multipletests

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
    reject, p_adj, _, _ = multipletests(p, alpha=alpha, method="fdr_bh")
    return BHResult(tuple(labs), p, np.asarray(p_adj), np.asarray(reject, dtype=bool), alpha)



# ============================================================================ checking a sampler
def sampler_tv(samples, support, prob, *, n_ref: int = 20, seed=0) -> tuple[float, float]:
    """How far a sampler's draws are from an exact law, against exact sampling at the same size.

    ``samples``: draws [S, ...] (each draw an array, e.g. a count table or one prompt's counts);
    ``support``: the law's outcomes [T, ...] in the same shape; ``prob``: their probabilities
    [T]. Returns ``(tv, ref)``: the total-variation distance between the empirical law of the S
    draws and the exact law, and the mean distance of ``n_ref`` samples of size S drawn from the
    exact law itself. ``tv`` near ``ref`` means the sampler is indistinguishable from exact
    sampling at this size; a wrong law gives ``tv`` far above ``ref``. Draws outside the support
    count fully towards the distance.
    """
    x = np.asarray(samples)
    sup = np.asarray(support)
    pr = np.asarray(prob, dtype=float)
    if x.ndim < 1 or x.shape[0] == 0:
        raise ValueError("samples must hold at least one draw")
    if sup.shape[0] != pr.shape[0] or pr.ndim != 1:
        raise ValueError(f"support has {sup.shape[0]} outcomes but prob has shape {pr.shape}")
    if sup.shape[1:] != x.shape[1:]:
        raise ValueError(f"draws have shape {x.shape[1:]} but the support's outcomes have shape {sup.shape[1:]}")
    if (pr < 0).any() or not np.isclose(pr.sum(), 1.0):
        raise ValueError("prob must be non-negative and sum to 1")
    n_ref = check_int(n_ref, "n_ref", minimum=1)
    S = x.shape[0]
    flat_x = x.reshape(S, -1)
    flat_s = sup.reshape(sup.shape[0], -1)
    keys, counts = np.unique(flat_x, axis=0, return_counts=True)
    index = {tuple(row): j for j, row in enumerate(flat_s.tolist())}
    emp = np.zeros(pr.size)
    outside = 0.0
    for row, c in zip(keys.tolist(), counts, strict=True):
        j = index.get(tuple(row))
        if j is None:
            outside += c / S
        else:
            emp[j] = c / S
    tv = 0.5 * (np.abs(emp - pr).sum() + outside)
    rng = as_rng(seed)
    ref = 0.5 * np.abs(rng.multinomial(S, pr, size=n_ref) / S - pr[None, :]).sum(axis=1)
    return float(tv), float(ref.mean())
