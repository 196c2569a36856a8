"""The field's router metrics on plain arrays: LLMRouterBench's Gain@B and Gap@O, RouterBench's
AIQ (the quality-cost hull, compiled) and RouteLLM's PGR curve, APGR and CPT for a strong-weak
pair.
"""

from __future__ import annotations

import numpy as np
from numba import njit

PGR_FRACTIONS = np.linspace(0.0, 1.0, 21)


def gain_at_b(accuracy, best):
    """LLMRouterBench's Gain@B: the router's relative gain over the best single model,
    (A_r - A_best) / A_best (A_best: the best member's accuracy on the same prompts).
    Example: A_r = 0.66, A_best = 0.60 -> 0.10."""
    a, b = np.asarray(accuracy, dtype=float), np.asarray(best, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, (a - b) / np.where(b > 0, b, 1.0), np.nan)


def gap_at_o(accuracy, oracle):
    """LLMRouterBench's Gap@O: the router's relative shortfall from the outcome oracle,
    (A_oracle - A_r) / A_oracle. Example: A_r = 0.66, A_oracle = 0.88 -> 0.25."""
    a, o = np.asarray(accuracy, dtype=float), np.asarray(oracle, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(o > 0, (o - a) / np.where(o > 0, o, 1.0), np.nan)


@njit(cache=True)
def _hull_value(hx, hy, peak, x):
    """R~(x) from the upper hull vertices (hx, hy) of a curve's points (increasing cost), held at
    the value of vertex ``peak`` (the first highest) beyond it; 0 below the cheapest point."""
    if x < hx[0]:
        return 0.0
    if x >= hx[peak]:
        return hy[peak]
    j = 0
    while hx[j + 1] < x:
        j += 1
    if x == hx[j + 1]:
        return hy[j + 1]
    return hy[j] + (hy[j + 1] - hy[j]) * (x - hx[j]) / (hx[j + 1] - hx[j])


@njit(cache=True)
def _aiq_rows(c, q, lo, hi):
    """AIQ of each curve (c, q)[r, :] over [lo[r], hi[r]] (:func:`aiq`): the points sorted by cost,
    their upper concave hull by a monotone chain (O(P log P), of equal costs the better point),
    R~ = the hull held flat after its highest vertex, integrated exactly by the midpoint rule on
    the pieces between the clipped costs and the range's ends (R~ is linear on each)."""
    N, P = c.shape
    out = np.empty(N)
    hx = np.empty(P)
    hy = np.empty(P)
    e = np.empty(P + 2)
    for r in range(N):
        order = np.argsort(c[r], kind="mergesort")
        h = 0
        for t in range(P):
            x = c[r, order[t]]
            y = q[r, order[t]]
            if h > 0 and x == hx[h - 1]:
                if y <= hy[h - 1]:
                    continue
                h -= 1
            # drop the last vertex while it lies on or under the chord to the new point
            while h >= 2 and (hx[h - 1] - hx[h - 2]) * (y - hy[h - 2]) >= (
                hy[h - 1] - hy[h - 2]
            ) * (x - hx[h - 2]):
                h -= 1
            hx[h] = x
            hy[h] = y
            h += 1
        peak = 0
        for j in range(1, h):
            if hy[j] > hy[peak]:
                peak = j
        a = lo[r]
        b = hi[r]
        for t in range(P):
            e[t] = min(max(c[r, t], a), b)
        e[P] = a
        e[P + 1] = b
        e.sort()
        if b > a:
            area = 0.0
            for t in range(P + 1):
                w = e[t + 1] - e[t]
                if w > 0:
                    area += w * _hull_value(hx[:h], hy[:h], peak, 0.5 * (e[t + 1] + e[t]))
            out[r] = area / (b - a)
        else:
            out[r] = _hull_value(hx[:h], hy[:h], peak, b)
    return out


def aiq(costs, qualities, c_lo=None, c_hi=None):
    """RouterBench's AIQ (arXiv 2403.12031): the average quality of a router's non-decreasing
    convex hull over the cost range,

        AIQ = 1 / (c_hi - c_lo) * integral_{c_lo}^{c_hi} R~(c) dc,

    where the router's operating points (c_j, q_j) come from its parameter sweep (here lambda),
    and R~(c) is the best quality reachable at cost <= c by randomly mixing operating points: the
    upper boundary of their convex hull, held flat after its peak, and 0 below the cheapest point.
    Default range: the points' own [min c, max c]; to compare routers pass one range (the
    evaluation uses the cheapest and dearest single member's mean cost). R~ is linear between
    consecutive point costs, so the integral is exact (midpoint rule on those pieces).
    Vectorised over leading axes of ``costs``/``qualities`` [..., P]: each curve's hull is built
    once (:func:`_aiq_rows`, compiled), equal within rounding to the definition taken over every
    pair of points (the tests' reference).

    Hand example: points (0, 0.2), (1, 0.3), (2, 0.8) on [0, 2]: the hull joins (0, 0.2) to
    (2, 0.8), R~(c) = 0.2 + 0.3 c, AIQ = 0.5 (the point (1, 0.3) lies under the hull).
    """
    c = np.asarray(costs, dtype=float)
    q = np.asarray(qualities, dtype=float)
    if c.shape != q.shape or c.ndim < 1 or c.shape[-1] == 0:
        raise ValueError(
            f"costs and qualities must have the same non-empty shape [..., P], got {c.shape} "
            f"and {q.shape}"
        )
    if not (np.isfinite(c).all() and np.isfinite(q).all()):
        raise ValueError("costs and qualities must be finite")
    if (c < 0).any():
        raise ValueError("costs must be non-negative")
    lo = (
        c.min(axis=-1)
        if c_lo is None
        else np.broadcast_to(np.asarray(c_lo, dtype=float), c.shape[:-1])
    )
    hi = (
        c.max(axis=-1)
        if c_hi is None
        else np.broadcast_to(np.asarray(c_hi, dtype=float), c.shape[:-1])
    )
    if (hi < lo).any():
        raise ValueError("c_hi must be >= c_lo")
    lead = c.shape[:-1]
    P = c.shape[-1]

    # contiguous and writable (a broadcast scalar range, or a caller's read-only array, would make
    # numba compile a second version of the kernel, which make setup's warm-up does not cache)
    def arg(x, shape):
        return np.require(np.reshape(x, shape), dtype=float, requirements=["C", "W"])

    out = _aiq_rows(arg(c, (-1, P)), arg(q, (-1, P)), arg(lo, -1), arg(hi, -1))
    return float(out[0]) if lead == () else out.reshape(lead)


def _pair_columns(
    score: np.ndarray, strong: np.ndarray, weak: np.ndarray, fractions: np.ndarray, tiebreak=None
) -> np.ndarray:
    """Per-prompt outcome columns [n, G]: at fraction x the round(x n) highest-scoring prompts
    go to the strong member, the rest to the weak one (ties in the order of ``tiebreak``, a key
    per prompt, else by position)."""
    n = score.size
    key = np.arange(n) if tiebreak is None else np.asarray(tiebreak)
    order = np.lexsort((key, -score))
    pos = np.empty(n, dtype=int)
    pos[order] = np.arange(n)
    m = np.round(np.asarray(fractions) * n).astype(int)
    to_strong = pos[:, None] < m[None, :]
    return np.where(to_strong, strong[:, None], weak[:, None]).astype(float)


def pgr_curve(
    score, strong_outcome, weak_outcome, fractions=PGR_FRACTIONS, tiebreak=None
) -> np.ndarray:
    """RouteLLM's performance gap recovered (arXiv 2406.18665) at each share x of calls to the
    strong model: PGR(x) = (A(x) - A_weak) / (A_strong - A_weak), where A(x) is the accuracy when
    the round(x n) prompts with the highest ``score`` go to the strong model and the rest to the
    weak one (tied scores in the order of ``tiebreak``, default by position). NaN when
    A_strong <= A_weak. Hand example: strong (1, 1, 1, 0), weak (0, 1, 0, 0), score
    (4, 2, 3, 1): PGR at x = (0, .25, .5, .75, 1) is (0, .5, 1, 1, 1)."""
    s = np.asarray(score, dtype=float).ravel()
    S = np.asarray(strong_outcome, dtype=float).ravel()
    W = np.asarray(weak_outcome, dtype=float).ravel()
    if not (s.size == S.size == W.size) or s.size == 0:
        raise ValueError(
            "score, strong_outcome and weak_outcome must be non-empty and of equal length"
        )
    fr = np.asarray(fractions, dtype=float)
    if fr.ndim != 1 or (fr < 0).any() or (fr > 1).any():
        raise ValueError("fractions must be a 1-d array of shares in [0, 1]")
    A = _pair_columns(s, S, W, fr, tiebreak).mean(axis=0)
    den = S.mean() - W.mean()
    return (A - W.mean()) / den if den > 0 else np.full(fr.size, np.nan)


def apgr(pgr, fractions=PGR_FRACTIONS):
    """RouteLLM's APGR: the area under PGR(x) over x in [0, 1] (trapezoid on ``fractions``,
    which must span 0..1). Vectorised over leading axes of ``pgr``.
    Hand example: PGR (0, .5, 1, 1, 1) at x = (0, .25, .5, .75, 1) -> 0.75."""
    fr = np.asarray(fractions, dtype=float)
    P = np.asarray(pgr, dtype=float)
    if fr[0] != 0 or fr[-1] != 1:
        raise ValueError("fractions must start at 0 and end at 1 for the area under PGR")
    return np.trapezoid(P, fr, axis=-1)


def cpt(pgr, fractions=PGR_FRACTIONS, target: float = 0.5):
    """RouteLLM's CPT(target): the smallest share of calls to the strong model at which PGR
    reaches ``target`` (linear interpolation between grid points; NaN if never reached).
    Vectorised over leading axes. Hand example: PGR (0, .5, 1, 1, 1) at x = (0, .25, ...)
    -> CPT(50%) = 0.25; PGR (0, .2, .6, ...) at (0, .25, .5, ...)
    -> 0.25 + 0.25 * 0.3/0.4 = 0.4375."""
    fr = np.asarray(fractions, dtype=float)
    P = np.atleast_2d(np.asarray(pgr, dtype=float))
    hit = P >= target - 1e-12
    first = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
    out = np.full(P.shape[0], np.nan)
    for_rows = first >= 0
    j = first[for_rows]
    rows = np.flatnonzero(for_rows)
    prev = np.maximum(j - 1, 0)
    p0, p1 = P[rows, prev], P[rows, j]
    x0, x1 = fr[prev], fr[j]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where((j > 0) & (p1 > p0), (target - p0) / np.where(p1 > p0, p1 - p0, 1.0), 1.0)
    out[rows] = np.where(j > 0, x0 + t * (x1 - x0), fr[j])
    return float(out[0]) if np.ndim(pgr) == 1 else out.reshape(np.shape(pgr)[:-1])
