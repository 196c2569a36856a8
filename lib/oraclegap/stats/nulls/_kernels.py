"""Compiled kernels of the nulls (:mod:`oraclegap.stats.nulls`), on the SplitMix64 random streams
of :mod:`oraclegap.stats._streams`: the count-table statistics, alias tables for the re-deal's sequential hypergeometric draws, the re-deal
batches, the margin-preserving chains (heat-bath and Metropolis 2x2 moves), label permutations for the
member spread and the subset-sum transforms of the pool-size curve.

Everything here works on plain int64/float64 arrays and 64-bit stream keys; the statistical API
(:mod:`.tests`, :mod:`.diagnostics`) prepares the inputs and reads the outputs. Compiled with
``cache=True``: the first call in a fresh environment compiles, later processes load the cache.
The entry points called by the tests (re-deal statistics, chains, table statistics) are compiled
with ``nogil=True``: independent tests can run on Python threads side by side (the simulation
studies do), each on its own random streams, so the thread count never changes a draw.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._streams import _GAMMA, _INV53, _S11, _double, _int_below, _mix64, _stream_start, _u64  # noqa: F401

# ============================================================================ compiled kernels
# The random streams (SplitMix64 keyed by (key, index)) live in oraclegap.stats._streams.


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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def redeal_stats(totals, M, k, key, start, n_draws, offsets, prob, alias, needs, need_mix, n_total):
    """Statistics of ``n_draws`` re-deals of the movable prompts' totals, float64 [n_draws, 3T+1];
    draw d uses the stream ``start + d``, consumed prompt by prompt."""
    out = np.empty((n_draws, 3 * needs.shape[0] + 1))
    for bi in range((n_draws + _REDEAL_BATCH - 1) // _REDEAL_BATCH):
        _redeal_batch(bi, out, totals, M, k, key, start, n_draws, offsets, prob, alias, needs, need_mix, n_total)
    return out


@njit(cache=True, nogil=True, parallel=True)
def redeal_stats_parallel(totals, M, k, key, start, n_draws, offsets, prob, alias, needs, need_mix, n_total):
    """:func:`redeal_stats` with batches of draws spread over threads (same results)."""
    out = np.empty((n_draws, 3 * needs.shape[0] + 1))
    for bi in prange((n_draws + _REDEAL_BATCH - 1) // _REDEAL_BATCH):
        _redeal_batch(bi, out, totals, M, k, key, start, n_draws, offsets, prob, alias, needs, need_mix, n_total)
    return out


@njit(cache=True, nogil=True)
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
def _shuffle_rows(c, perm, s, idx, buf, pbuf):
    """Move the rows of ``c`` (and the prompt labels ``perm``) to a uniformly random order drawn
    from stream state ``s``; return the new state. The table as a function of the prompt is
    unchanged: only where each prompt's row is stored moves."""
    na = c.shape[0]
    M = c.shape[1]
    for i in range(na):
        idx[i] = i
    for i in range(na - 1, 0, -1):  # Fisher-Yates
        s, j = _int_below(s, i + 1)
        t = idx[i]
        idx[i] = idx[j]
        idx[j] = t
    for i in range(na):
        r = idx[i]
        pbuf[i] = perm[r]
        for m in range(M):
            buf[i, m] = c[r, m]
    for i in range(na):
        perm[i] = pbuf[i]
        for m in range(M):
            c[i, m] = buf[i, m]
    return s


@njit(cache=True)
def _chain_segment(c, k, s, n_steps, heat, w, up, dn, logc, use_log, perm, pos, epoch, block, idx, buf, pbuf):
    """Run ``n_steps`` proposals of the margin chain on table ``c`` (in place) from stream state
    ``s``; return (new state, number of proposals that changed the table, proposals since the
    last reshuffle).

    Blocks (cache-friendly pairs). With ``block < na`` the stored rows fall into contiguous
    blocks of ``block`` rows (the last one takes the remainder). An epoch of ``epoch = na M``
    proposals (counted by ``pos`` across calls) visits the blocks in turn, ``size M`` proposals
    each, every one pairing two distinct rows of the current block uniformly; between epochs the
    rows are moved to a fresh uniformly random order (:func:`_shuffle_rows`, labels kept in
    ``perm``). Which pair is proposed depends only on the time and the random order, never on
    the counts, and each heat-bath (or Metropolis) move leaves the margin law invariant for any
    fixed pair, so the chain keeps exactly the same stationary law; its memory traffic stays in
    one block at a time (cache-resident), so a proposal costs the same at any n. With
    ``block >= na`` there is one block, no reshuffle and the pairs are uniform over all movable
    prompts (the draws of the unblocked chain).

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
    cf = c.reshape(-1)  # flat view: one unsigned index per cell (no negative-index wraparound code)
    una = np.uint64(na)
    una1 = np.uint64(na - 1)
    uM = np.uint64(M)
    uM1 = np.uint64(M - 1)
    lo32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    nblocks = max(1, na // block) if block < na else 1
    moved = 0
    # the block of proposal ``pos`` is pos // (block M) (the last block takes the rest of the
    # epoch), tracked as a quotient and remainder so that no proposal divides
    bM = block * M
    quo = pos // bM
    rem = pos - quo * bM
    for _ in range(n_steps):
        if nblocks > 1:
            if pos >= epoch:
                s = _shuffle_rows(c, perm, s, idx, buf, pbuf)
                pos = 0
                quo = 0
                rem = 0
            bi = min(quo, nblocks - 1)
            pos += 1
            rem += 1
            if rem == bM:
                quo += 1
                rem = 0
            b0 = bi * block
            bsz = (na - b0) if bi == nblocks - 1 else block
            s, z = _u64(s)
            p = b0 + np.int64(((z & lo32) * np.uint64(bsz)) >> s32)
            q = b0 + np.int64(((z >> s32) * np.uint64(bsz - 1)) >> s32)
        else:
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
        pa = np.uint64(p * M + a)
        pb = np.uint64(p * M + b)
        qa = np.uint64(q * M + a)
        qb = np.uint64(q * M + b)
        x = cf[pa]
        y = cf[pb]
        u = cf[qa]
        v = cf[qb]
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
                # the ratio table entries along the line, indexed from t = lo (all in [0, k]);
                # unsigned indices: the same products in the same order as indexing by x - t + 1, ...
                i1 = x - lo + 1
                i2 = y + lo - 1
                i3 = u + lo - 1
                i4 = v - lo + 1
                cur = 1.0
                acc = 1.0
                w[0] = 1.0
                for j in range(1, nn + 1):
                    cur *= ((dn[np.uint64(i1 - j)] * up[np.uint64(i2 + j)])
                            * (up[np.uint64(i3 + j)] * dn[np.uint64(i4 - j)]))
                    acc += cur
                    w[np.uint64(j)] = acc
            s, z = _u64(s)
            r = np.float64(z >> _S11) * _INV53 * w[nn]
            i = 0
            for j in range(nn):
                i += w[np.uint64(j)] <= r
            t = lo + i
            # written back whether or not t = 0 (no branch on the outcome of the draw)
            cf[pa] = x - t
            cf[pb] = y + t
            cf[qa] = u + t
            cf[qb] = v - t
            moved += t != 0
        else:
            s, z = _u64(s)
            if x == 0 or y == k or u == k or v == 0:
                continue
            ratio = dn[x] * up[y] * up[u] * dn[v]
            if ratio >= 1.0 or np.float64(z >> _S11) * _INV53 < ratio:
                cf[pa] = x - 1
                cf[pb] = y + 1
                cf[qa] = u + 1
                cf[qb] = v - 1
                moved += 1
    return s, moved, pos


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


#: Bytes of int64 counts per block of the margin chain's proposals (see :func:`_chain_segment`):
#: 1 MiB (13,107 rows at M = 10) stays in a core's L2 cache. Smaller tables are one block (the
#: unblocked chain, draw for draw); at 1e5 x 10 a proposal then costs about 75 ns of CPU against
#: 130-220 ns with pairs drawn over the whole table (measured here, one thread).
CHAIN_BLOCK_BYTES = 1 << 20


def chain_block(M: int) -> int:
    """Rows per block for a table with ``M`` members (a function of M alone: the draws of the
    blocked chain do not depend on how the counts are stored, see :func:`chain_dtype`)."""
    return max(64, CHAIN_BLOCK_BYTES // (8 * M))


def chain_dtype(k: int):
    """The integer type the chains store their tables in: the narrowest that holds 0..k. A
    proposal reads and writes four cells; int8 counts make a block of :func:`chain_block` rows
    one eighth of its int64 size, so it stays in a core's L2 cache beside everything else
    (measured at 1e5 x 10 x 16: about 1.7x fewer CPU seconds per proposal than int64, the same
    draws; the arithmetic is done in int64 and float64 whatever the storage)."""
    return np.int8 if k <= 127 else np.int16 if k <= 32767 else np.int64


@njit(cache=True)
def _one_chain(ch, states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
               tables_out, store_tables, moves_out, up, dn, logc, perms, pos, epoch, block):
    c = states[ch]
    perm = perms[ch]
    na, M = c.shape
    use_log = k > 128
    w = np.empty(k + 2)
    blocked = block < na and na // block > 1
    nb = na if blocked else 0
    idx = np.empty(nb, np.int64)
    buf = np.empty_like(c[:nb])  # the table's own integer type
    pbuf = np.empty(nb, np.int64)
    p0 = pos[ch]
    s, moved, p0 = _chain_segment(c, k, streams[ch], burn, heat, w, up, dn, logc, use_log, perm, p0, epoch, block,
                                  idx, buf, pbuf)
    for d in range(n_per[ch]):
        s, m, p0 = _chain_segment(c, k, s, thin, heat, w, up, dn, logc, use_log, perm, p0, epoch, block, idx, buf,
                                  pbuf)
        moved += m
        _table_stats(c, needs, need_mix, n_total, k, stats_out[out_off[ch] + d])
        if store_tables:
            row = out_off[ch] + d
            if blocked:
                for i in range(na):
                    for mm in range(M):
                        tables_out[row, perm[i], mm] = c[i, mm]
            else:
                tables_out[row] = c
    streams[ch] = s
    pos[ch] = p0
    moves_out[ch] += moved


@njit(cache=True, nogil=True)
def run_block_chains(states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
                     tables_out, store_tables, moves_out, perms, pos, epoch, block):
    """Advance each chain (states[C, n_rows, M], stream states[C]) by ``burn`` proposals, then
    retain ``n_per[ch]`` tables, one every ``thin`` proposals, writing their statistics (and the
    tables, in prompt order, when ``store_tables``) at rows ``out_off[ch] + d``; ``moves_out[ch]``
    counts changes. Pairs are drawn within blocks of ``block`` stored rows, reshuffled every
    ``epoch`` proposals; ``perms[C, n_rows]`` holds the prompt stored at each row and ``pos[C]``
    the proposals since the last reshuffle (see :func:`_chain_segment`). The chain state, its
    labels, its stream state and ``pos`` are updated in place, so a long run split into several
    calls gives exactly the draws of one call (the driver keeps every call short, so that
    Ctrl-C is honoured between calls)."""
    up, dn, logc = _ratio_tables(k)
    for ch in range(states.shape[0]):
        _one_chain(ch, states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
                   tables_out, store_tables, moves_out, up, dn, logc, perms, pos, epoch, block)


@njit(cache=True, nogil=True, parallel=True)
def run_block_chains_parallel(states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total,
                              stats_out, tables_out, store_tables, moves_out, perms, pos, epoch, block):
    """:func:`run_block_chains` with the chains spread over threads (same results: one stream per chain)."""
    up, dn, logc = _ratio_tables(k)
    for ch in prange(states.shape[0]):
        _one_chain(ch, states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
                   tables_out, store_tables, moves_out, up, dn, logc, perms, pos, epoch, block)


@njit(cache=True)
def _unblocked(states):
    C, na = states.shape[0], states.shape[1]
    perms = np.empty((C, na), np.int64)
    for ch in range(C):
        for i in range(na):
            perms[ch, i] = i
    return perms, np.zeros(C, np.int64)


@njit(cache=True, nogil=True)
def run_chains(states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
               tables_out, store_tables, moves_out):
    """:func:`run_block_chains` with one block (pairs uniform over all movable prompts)."""
    perms, pos = _unblocked(states)
    run_block_chains(states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
                     tables_out, store_tables, moves_out, perms, pos, 1, states.shape[1] + 1)


@njit(cache=True, nogil=True)
def run_chains_parallel(states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total, stats_out,
                        tables_out, store_tables, moves_out):
    """:func:`run_chains` with the chains spread over threads (same results: one stream per chain)."""
    perms, pos = _unblocked(states)
    run_block_chains_parallel(states, streams, k, burn, thin, n_per, out_off, heat, needs, need_mix, n_total,
                              stats_out, tables_out, store_tables, moves_out, perms, pos, 1, states.shape[1] + 1)


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



# ---------------------------------------------------------------------------- alias-table cache
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
