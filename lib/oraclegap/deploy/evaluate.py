"""Evaluation of routers: one function for every family (papers 000 Sec. 3.3, App. B.2-B.3;
002 Sec. 4, 7, App. C, D.9, G-I, O).

Outcomes. On prompt i choosing member m scores O_im = R_im (k = 1: the one verdict) or
O_im = 1[c_im >= need(tau, k)] (k > 1: coverage at tau with raw counts, 000's rule). A router's
score on the evaluated prompts is A_r = mean_i O_{i, r(i)} -- accuracy (k = 1) or coverage.

Protocols. ``split="half"``: a 50/50 calibration/test split drawn from ``seed`` (the seed is
released with the result); ``split=NAME``: the prompts whose ``split`` column is NAME are the
test part, the rest calibration; ``cv=K``: K-fold cross-fitting, every prompt predicted by a
router fitted on the other folds (002's secondary analysis). Routers and the calibration-selected
member see only calibration outcomes.

Comparisons, each on the evaluated prompts:

* against the *threshold-specific best member* C_best = max_m mean_i O_im, chosen on the
  evaluated prompts themselves: gain_best = A_r - C_best, with a 95% prompt-bootstrap
  percentile interval that *re-selects* the best member inside every resample (000's rule; it
  shifts the interval against the router);
* against the *calibration-selected member* b (the deployable comparison): gain_cal = A_r - A_b
  with a paired prompt-bootstrap interval; exact McNemar on the discordant counts n10/n01 and
  Holm within the family of routers (the rows of :func:`oraclegap.stats.certify.paired_family`),
  rescue/loss (:func:`~oraclegap.stats.certify.rescue_loss`), G_b and the recovered fraction
  (reported only when G_b's exact lower limit is positive);
* the routing identity C_orac - C_r = D e_D with the break-even error L/D
  (:func:`oraclegap.stats.coverage.routing_account`), which holds exactly for every router;
* with a 50/50 or named split, the family certificate (002 Thm 6) over the predeclared family of
  evaluated routers (:func:`~oraclegap.stats.certify.family_certificate`). Under cross-fitting the
  fitted policies depend on other folds' outcomes, so the certificate is not reported.

Field summaries, each with a prompt-bootstrap interval: LLMRouterBench's Gain@B and Gap@O, and,
where costs exist, the quality-cost frontier over lambda (U = R - lambda C, 002 App. C),
RouterBench's AIQ, and RouteLLM's PGR / APGR and CPT(50%) for a strong-weak pair.

Vectorised bootstrap: one block of multinomial resampling counts W[b, i] (how often prompt i
is drawn in resample b), counted by one compiled pass over the generator's raw 32-bit words,
multiplies the per-prompt outcome columns of every member and router at once, (W @ Z) / n (in
float32 for 0/1 columns, where it is exact); no Python loop over resamples. Every router is
scored on the same resamples, so all comparisons are paired.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping

import numpy as np
import pandas as pd
from numba import njit
from sklearn.base import clone

from .._result import Interval, Result
from .._validate import check_alpha, check_int, check_tau
from ..pool import Pool
from ..stats.certify import (
    FamilyCertificate,
    _cp,
    family_certificate,
    paired_comparison,
    random_halves,
    rescue_loss,
)
from ..stats.coverage import routing_account
from ..stats.multiplicity import holm
from .features import RouterInputs, router_inputs
from .routers import (
    FAMILIES,
    Router,
    _one_thread,
    check_cost,
    check_lambda,
    check_targets,
    choose,
    make_router,
    missing_inputs,
)

__all__ = [
    "TARGETS",
    "DEFAULT_LAMBDAS",
    "outcome_matrix",
    "router_targets",
    "Protocol",
    "make_protocol",
    "bootstrap_means",
    "bootstrap_means_loop",
    "holm",
    "aiq",
    "pgr_curve",
    "apgr",
    "cpt",
    "gain_at_b",
    "gap_at_o",
    "RouterEvaluation",
    "CostAnalysis",
    "RouterComparison",
    "evaluate_routers",
    "evaluate_router",
]

TARGETS = ("rate", "covered")
DEFAULT_LAMBDAS = np.r_[0.0, np.geomspace(0.01, 100.0, 21), 1e6]
PGR_FRACTIONS = np.linspace(0.0, 1.0, 21)


# ====================================================================== outcomes and targets
def outcome_matrix(pool: Pool, tau=None) -> tuple[np.ndarray, float]:
    """O bool[n, M] scored per choice, and the threshold used for the routing identity.

    k = 1: O = the verdicts (``tau`` is ignored; any tau in (0, 1] gives need = 1, reported as 1).
    k > 1: O_im = 1[c_im >= need(tau, k)]; ``tau`` is required. The outcomes are
    :meth:`oraclegap.pool.Pool.outcomes`.
    """
    if not isinstance(pool, Pool):
        raise TypeError(f"pool must be an oraclegap Pool, got {type(pool).__name__}")
    if pool.k == 1:
        return pool.outcomes(), 1.0
    if tau is None:
        raise ValueError(f"the pool has k={pool.k} draws per cell: pass tau (routers are scored by coverage at tau)")
    t = check_tau(tau)
    return pool.outcomes(tau=t), t


def router_targets(pool: Pool, tau=None, target: str = "rate") -> np.ndarray:
    """Per-policy training targets float[n, M]: k = 1 the verdicts; k > 1 ``"rate"`` c_im / k
    (000 fits its routers to success rates) or ``"covered"`` the coverage indicators at tau."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if pool.k == 1:
        return pool.verdicts[:, :, 0].astype(float)
    if target == "rate":
        return pool.rates()
    return outcome_matrix(pool, tau)[0].astype(float)


# ====================================================================== protocols
@dataclasses.dataclass(frozen=True)
class Protocol:
    """Calibration/test folds: ``folds`` is a list of (calibration positions, test positions);
    ``eval_idx`` the prompts scored (the test part of a split, every prompt under cross-fitting)."""

    mode: str  # "split" or "cv"
    name: str
    folds: tuple
    eval_idx: np.ndarray
    seed: int | None

    @property
    def n_eval(self) -> int:
        """Number of prompts scored."""
        return int(self.eval_idx.size)

    def describe(self) -> str:
        """One line: the protocol, its sizes and its seed."""
        if self.mode == "cv":
            return f"{len(self.folds)}-fold cross-fitting (seed {self.seed})"
        cal = self.folds[0][0].size
        return f"{self.name} split: {cal} calibration / {self.n_eval} test prompts" + (f" (seed {self.seed})" if self.seed is not None else "")


def make_protocol(pool: Pool, *, cv: int | None = 5, split: str | None = None, seed: int = 0) -> Protocol:
    """A 50/50 split (``split="half"``, by ``seed``), a named split (``split=NAME``: those prompts
    are the test part) or ``cv``-fold cross-fitting (folds by ``seed``)."""
    n = pool.n_prompts
    seed = check_int(seed, "seed", minimum=0)
    if split is not None:
        if not isinstance(split, str) or not split:
            raise TypeError("split must be 'half' or the name of a split in the pool's prompt table")
        if split == "half":
            if n < 2:
                raise ValueError("a 50/50 split needs at least 2 prompts")
            test = random_halves(n, np.random.default_rng([seed, 1]))
            s = seed
        else:
            if split not in pool.splits:
                raise ValueError(f"unknown split {split!r}; this pool has splits {pool.splits or '(none set)'}; or use split='half'")
            test = (pool.prompts["split"].astype(str) == split).to_numpy()
            s = None
        cal = np.flatnonzero(~test)
        tst = np.flatnonzero(test)
        if cal.size == 0:
            raise ValueError(f"the calibration split has no prompts: every prompt is in the test split {split!r}")
        return Protocol("split", split, ((cal, tst),), tst, s)
    if cv is None:
        raise ValueError("pass cv=K (cross-fitting) or split='half' / split=NAME")
    cv = check_int(cv, "cv", minimum=2)
    if cv > n:
        raise ValueError(f"cv={cv} folds need at least {cv} prompts; the pool has {n}")
    perm = np.random.default_rng([seed, 2]).permutation(n)
    fold = np.empty(n, dtype=int)
    fold[perm] = np.arange(n) % cv
    folds = tuple((np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(cv))
    return Protocol("cv", f"cv{cv}", folds, np.arange(n), seed)


# ====================================================================== the vectorised bootstrap
_U32 = 4294967296  # 2**32
_CHUNK_CELLS = 2**23  # resamples x prompts held at once (a float32 count block of 32 MiB at most)


def _chunk_size(n: int, chunk: int) -> int:
    """Resamples per block: ``chunk``, fewer when n is large (memory), at least one."""
    return max(1, min(int(chunk), _CHUNK_CELLS // max(n, 1)))


def _words(rng: np.random.Generator, n: int, b: int) -> np.ndarray:
    """Uniform 32-bit words from ``rng``'s bit generator for b * n bounded draws on [0, n):
    b * n words plus a margin for the rare rejected words of :func:`_bounded` (their expected
    number is b n (2^32 mod n) / 2^32 < b n^2 / 2^32)."""
    expected = b * n * ((_U32 - n) % n) / _U32
    extra = int(64 + 4 * expected + 8 * math.sqrt(expected + 1.0))
    return rng.bit_generator.random_raw((b * n + extra + 1) // 2).view(np.uint32)


@njit(cache=True, boundscheck=False)
def _bounded(u, n, b, W, idx, count):  # pragma: no cover - compiled
    """b resamples of n prompt positions each, from the 32-bit words ``u``, by Lemire's
    multiply-shift rule with rejection, which is exactly uniform on [0, n): word x gives position
    floor(x n / 2^32) unless (x n) mod 2^32 < 2^32 mod n, in which case x is skipped. ``count``:
    the positions of resample r are counted into W[r] (zeroed first); otherwise stored in
    idx[r, :]. Returns the number of words used, or -1 when ``u`` ran out."""
    nn = np.uint64(n)
    thresh = np.uint64((_U32 - n) % n)
    low = np.uint64(0xFFFFFFFF)
    shift = np.uint64(32)
    w = 0
    nw = u.shape[0]
    for r in range(b):
        if count:
            for j in range(n):
                W[r, j] = 0.0
        for j in range(n):
            while True:
                if w >= nw:
                    return -1
                m = np.uint64(u[w]) * nn
                w += 1
                if (m & low) >= thresh:
                    break
            if count:
                W[r, m >> shift] += 1.0
            else:
                idx[r, j] = m >> shift
    return w


def _resample_block(rng: np.random.Generator, n: int, b: int, W=None) -> np.ndarray:
    """One block of b prompt-bootstrap resamples of n prompts: counted into ``W[:b]`` (float,
    returned) when W is given, else their positions uint32[b, n]. The same words of ``rng`` give
    the same resamples either way, so the loop of :func:`bootstrap_means_loop` sees the draws of
    :func:`bootstrap_means`."""
    if n >= 2**31:
        raise ValueError(f"the bootstrap draws 32-bit positions; n={n} prompts is too many")
    u = _words(rng, n, b)
    idx = np.empty((0 if W is not None else b, n), dtype=np.uint32)
    Wb = W[:b] if W is not None else np.empty((0, 0), dtype=np.float32)
    while _bounded(u, n, b, Wb, idx, W is not None) < 0:  # out of words (practically never): more, same rule
        u = np.concatenate([u, _words(rng, n, 1)])
    return Wb if W is not None else idx


def _exact_in_float32(Z: np.ndarray) -> np.ndarray:
    """Columns whose resample sums float32 computes exactly: integer values with
    n * max|Z_j| < 2^24, so every partial sum of counts times values is an integer below 2^24."""
    if Z.size == 0:
        return np.zeros(Z.shape[1], dtype=bool)
    integer = (Z == np.round(Z)).all(axis=0)
    return integer & (Z.shape[0] * np.abs(Z).max(axis=0) < 2**24)


def _check_z(Z) -> np.ndarray:
    Z = np.ascontiguousarray(np.asarray(Z, dtype=np.float64))
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.ndim != 2 or Z.shape[0] == 0:
        raise ValueError(f"Z must be a non-empty [n_prompts, columns] array, got shape {Z.shape}")
    if not np.isfinite(Z).all():
        raise ValueError("Z must be finite (per-prompt outcome, score or cost columns)")
    return Z


def _as_rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def bootstrap_means(Z, n_boot: int = 2000, seed=0, *, chunk: int = 128) -> np.ndarray:
    """Prompt-bootstrap means of every column of Z[n, c]: float[n_boot, c].

    Resample b draws n prompts uniformly with replacement; its mean of column j is
    sum_i W_bi Z_ij / n with W_bi the number of times prompt i was drawn (a Multinomial(n; 1/n,
    ..., 1/n) vector). Per block of ``chunk`` resamples: the b n positions come from the
    generator's raw 32-bit words by an exact bounded rule and are counted straight into a reused
    count block W (one compiled pass over the draws, no index array), then W multiplies every
    column at once. Integer-valued columns (0/1 outcomes, counts) are multiplied in float32, which
    is exact for them (:func:`_exact_in_float32`) and twice as fast; other columns (costs) in
    float64. No Python loop over resamples; one BLAS thread, so the numbers do not depend on the
    machine's thread count. :func:`bootstrap_means_loop` computes the same numbers resample by
    resample.
    """
    Z = _check_z(Z)
    n, c = Z.shape
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    chunk = _chunk_size(n, check_int(chunk, "chunk", minimum=1))
    rng = _as_rng(seed)
    exact = _exact_in_float32(Z)
    Z32 = np.ascontiguousarray(Z[:, exact], dtype=np.float32)
    Z64 = np.ascontiguousarray(Z[:, ~exact])
    out = np.empty((n_boot, c))
    W = np.empty((min(chunk, n_boot), n), dtype=np.float32)
    with _one_thread():
        for s in range(0, n_boot, chunk):
            b = min(chunk, n_boot - s)
            Wb = _resample_block(rng, n, b, W)
            if Z32.shape[1]:
                out[s : s + b, exact] = Wb @ Z32
            if Z64.shape[1]:
                out[s : s + b, ~exact] = Wb.astype(np.float64) @ Z64
    return out / n


def bootstrap_means_loop(Z, n_boot: int = 2000, seed=0, *, chunk: int = 128) -> np.ndarray:
    """The plain loop over resamples that :func:`bootstrap_means` replaces, doing the same work:
    the same draws (the same words of ``seed``'s generator, block by block, turned into prompt
    positions by the same rule), then for each resample the sum of its rows, ``Z[idx].sum(axis=0)
    / n``. Same numbers (exactly for integer-valued columns); the reference for the tests and the
    benchmark."""
    Z = _check_z(Z)
    n = Z.shape[0]
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    chunk = _chunk_size(n, check_int(chunk, "chunk", minimum=1))
    rng = _as_rng(seed)
    out = np.empty((n_boot, Z.shape[1]))
    for s in range(0, n_boot, chunk):
        b = min(chunk, n_boot - s)
        idx = _resample_block(rng, n, b)
        for r in range(b):
            out[s + r] = Z[idx[r]].sum(axis=0)
    return out / n


def _interval(draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore"):
        lo, hi = np.nanquantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
    return lo, hi


# ====================================================================== field summary metrics
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
            while h >= 2 and (hx[h - 1] - hx[h - 2]) * (y - hy[h - 2]) >= (hy[h - 1] - hy[h - 2]) * (x - hx[h - 2]):
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
        raise ValueError(f"costs and qualities must have the same non-empty shape [..., P], got {c.shape} and {q.shape}")
    if not (np.isfinite(c).all() and np.isfinite(q).all()):
        raise ValueError("costs and qualities must be finite")
    if (c < 0).any():
        raise ValueError("costs must be non-negative")
    lo = c.min(axis=-1) if c_lo is None else np.broadcast_to(np.asarray(c_lo, dtype=float), c.shape[:-1])
    hi = c.max(axis=-1) if c_hi is None else np.broadcast_to(np.asarray(c_hi, dtype=float), c.shape[:-1])
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


def _pair_columns(score: np.ndarray, strong: np.ndarray, weak: np.ndarray, fractions: np.ndarray, tiebreak=None) -> np.ndarray:
    """Per-prompt outcome columns [n, G]: at fraction x the round(x n) highest-scoring prompts
    go to the strong member, the rest to the weak one (ties in the order of ``tiebreak``, a key
    per prompt, else by position)."""
    n = score.size
    key = np.arange(n) if tiebreak is None else np.asarray(tiebreak)
    order = np.lexsort((key, -score))
    pos = np.empty(n, dtype=int)
    pos[order] = np.arange(n)
    m = np.round(fractions * n).astype(int)
    to_strong = pos[:, None] < m[None, :]
    return np.where(to_strong, strong[:, None], weak[:, None]).astype(float)


def pgr_curve(score, strong_outcome, weak_outcome, fractions=PGR_FRACTIONS, tiebreak=None) -> np.ndarray:
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
        raise ValueError("score, strong_outcome and weak_outcome must be non-empty and of equal length")
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
    -> CPT(50%) = 0.25; PGR (0, .2, .6, ...) at (0, .25, .5, ...) -> 0.25 + 0.25 * 0.3/0.4 = 0.4375."""
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


# ====================================================================== results
#: RouterEvaluation's interval fields: the name of each estimate, its ``*_ci`` field holding an
#: :class:`~oraclegap._result.Interval`; ``value``, ``value_lo`` and ``value_hi`` stay readable.
_INTERVAL_FIELDS = ("accuracy", "gain_best", "gain_cal", "G_b", "recovered", "gain_at_b", "gap_at_o")
#: The columns of RouterEvaluation.frame(), in order (the flat layout the class had before).
_FRAME_COLUMNS = (
    "family", "regime", "protocol", "tau", "n_eval", "accuracy", "accuracy_lo", "accuracy_hi", "best", "best_member",
    "gain_best", "gain_best_lo", "gain_best_hi", "baseline", "baseline_member", "gain_cal", "gain_cal_lo", "gain_cal_hi",
    "oracle", "D", "L", "e_D", "break_even", "identity_residual", "n10", "n01", "p_mcnemar", "p_holm", "rescue", "loss",
    "G_b", "G_b_lo", "recovered", "recovered_lo", "recovered_hi", "gain_at_b", "gain_at_b_lo", "gain_at_b_hi",
    "gap_at_o", "gap_at_o_lo", "gap_at_o_hi", "fit_seconds",
)


def _interval_property(name: str, part: str) -> property:
    def get(self):
        return getattr(getattr(self, f"{name}_ci"), part)

    suffix = "" if part == "value" else f" ({part} of ``{name}_ci``)"
    get.__doc__ = f"``{name}_ci.{part}``{suffix}: read-only, kept from the flat layout."
    return property(get)


@dataclasses.dataclass(frozen=True, repr=False)
class RouterEvaluation(Result):
    """One router family scored on the evaluated prompts (see the module docstring).

    Every estimate with an interval is an :class:`~oraclegap._result.Interval` in a ``*_ci``
    field; the flat names (``accuracy``, ``accuracy_lo``, ``accuracy_hi``, ...) stay readable.
    ``accuracy_ci`` is accuracy (k = 1) or coverage at tau (k > 1), with an exact CP interval.
    ``gain_best_ci`` (interval re-selecting the best member per resample), ``gain_cal_ci`` (paired
    interval against the calibration-selected member), ``e_D`` / ``break_even`` / ``identity_residual``
    from the routing identity, ``n10`` / ``n01`` / ``p_mcnemar`` / ``p_holm`` against the
    calibration-selected member, ``rescue`` / ``loss``, ``G_b_ci`` (CP interval; the frame shows its
    lower limit) and ``recovered_ci`` (NaN unless G_b's lower limit is positive), ``gain_at_b_ci`` /
    ``gap_at_o_ci`` (relative, with intervals).
    """

    family: str
    regime: str
    protocol: str
    tau: float | None
    n_eval: int
    accuracy_ci: Interval
    best: float
    best_member: str
    gain_best_ci: Interval
    baseline: float
    baseline_member: str
    gain_cal_ci: Interval
    oracle: float
    D: float
    L: float
    e_D: float
    break_even: float
    identity_residual: float
    n10: int
    n01: int
    p_mcnemar: float
    p_holm: float
    rescue: float
    loss: float
    G_b_ci: Interval
    recovered_ci: Interval
    gain_at_b_ci: Interval
    gap_at_o_ci: Interval
    fit_seconds: float
    choice: np.ndarray = dataclasses.field(repr=False, compare=False)
    utility: np.ndarray = dataclasses.field(repr=False, compare=False)

    _repr_fields = ("family", "regime", "protocol", "tau", "n_eval", "accuracy_ci", "best_member", "gain_best_ci",
                    "baseline_member", "gain_cal_ci", "oracle", "e_D", "break_even", "n10", "n01", "p_holm",
                    "G_b_ci", "recovered_ci", "gain_at_b_ci", "gap_at_o_ci")

    for _name in _INTERVAL_FIELDS:
        locals()[_name] = _interval_property(_name, "value")
        locals()[f"{_name}_lo"] = _interval_property(_name, "lo")
        if _name != "G_b":
            locals()[f"{_name}_hi"] = _interval_property(_name, "hi")
    del _name

    @property
    def metric(self) -> str:
        """``"accuracy"`` (k = 1) or ``"coverage@tau"``."""
        return "accuracy" if self.tau is None else f"coverage@{self.tau:g}"

    def intervals(self) -> dict:
        """{estimate name: Interval} for every estimate with an interval."""
        return {n: getattr(self, f"{n}_ci") for n in _INTERVAL_FIELDS}

    def frame(self) -> pd.DataFrame:
        """One row with every estimate and its limits as flat columns, the per-prompt arrays aside."""
        return pd.DataFrame([{c: getattr(self, c) for c in _FRAME_COLUMNS}])


@dataclasses.dataclass(frozen=True, repr=False)
class CostAnalysis(Result):
    """Quality-cost frontier over lambda for every family and the cost-aware summaries.

    ``frontier``: one row per (family, lambda) with quality, mean cost (pool units) and the share
    of prompts sent to the strong member. ``summary``: per family AIQ over the single members'
    cost range [cheapest, dearest mean cost], APGR and CPT(50%) for the strong-weak pair
    (``strong``, ``weak``), each with a prompt-bootstrap interval (lambdas and call shares fixed,
    resampled prompts).
    """

    lambdas: np.ndarray
    strong: str
    weak: str
    cost_range: tuple
    frontier: pd.DataFrame
    summary: pd.DataFrame
    members: pd.DataFrame


@dataclasses.dataclass(frozen=True, repr=False)
class RouterComparison(Result):
    """Every evaluated family on one pool under one protocol, sharing bootstrap resamples.

    ``frame()`` is the router table; ``paired`` the full paired-inference frame; ``certificate``
    the family certificate (split protocols only; ``certificate_note`` says why not otherwise);
    ``cost`` the cost analysis (None without costs); ``inputs`` which inputs were used;
    ``skipped`` families that could not run and why.
    """

    evaluations: dict
    protocol: Protocol
    tau: float | None
    k: int
    alpha: float
    n_boot: int
    inputs: dict
    skipped: dict
    paired: pd.DataFrame
    certificate: FamilyCertificate | None
    certificate_note: str
    cost: CostAnalysis | None
    policy_names: tuple

    TABLE_COLUMNS = ("family", "regime", "accuracy", "gain_best", "gain_best_lo", "gain_best_hi", "gain_cal", "gain_cal_lo",
                     "gain_cal_hi", "e_D", "break_even", "n10", "n01", "p_mcnemar", "p_holm")

    def evaluation(self, family: str) -> RouterEvaluation:
        """The result of one family (KeyError naming the evaluated ones otherwise)."""
        if family not in self.evaluations:
            raise KeyError(f"family {family!r} was not evaluated; evaluated: {list(self.evaluations)}")
        return self.evaluations[family]

    def full_frame(self) -> pd.DataFrame:
        """Every field of every family's :class:`RouterEvaluation`, one row per family."""
        return pd.concat([e.frame() for e in self.evaluations.values()], ignore_index=True)

    def frame(self) -> pd.DataFrame:
        """The router table: family, accuracy or coverage, gains over the threshold-specific and
        the calibration-selected best member with intervals, e_D, L/D, n10/n01, McNemar and Holm p."""
        df = self.full_frame()[list(self.TABLE_COLUMNS)]
        if self.tau is not None:
            df = df.rename(columns={"accuracy": f"coverage@{self.tau:g}"})
        return df

    def field_summary(self) -> pd.DataFrame:
        """Field summaries per family: Gain@B and Gap@O (and AIQ, APGR, CPT(50%) with costs)."""
        cols = ["family", "accuracy", "gain_at_b", "gain_at_b_lo", "gain_at_b_hi", "gap_at_o", "gap_at_o_lo", "gap_at_o_hi"]
        df = self.full_frame()[cols]
        if self.cost is not None:
            df = df.merge(self.cost.summary, on="family", how="left")
        return df

    def summary(self) -> pd.DataFrame:
        """Old name of :meth:`field_summary` (kept so callers keep working)."""
        return self.field_summary()

    def to_dict(self) -> dict:
        """JSON-ready: protocol, inputs, skipped families, the full router rows, certificate, costs."""
        out = {
            "protocol": self.protocol.describe(),
            "tau": self.tau,
            "k": self.k,
            "alpha": self.alpha,
            "n_boot": self.n_boot,
            "inputs": self.inputs,
            "skipped": self.skipped,
            "routers": self.full_frame().to_dict(orient="records"),
            "certificate": None if self.certificate is None else self.certificate.frame().to_dict(orient="records"),
            "certificate_note": self.certificate_note,
        }
        if self.cost is not None:
            out["cost"] = {"strong": self.cost.strong, "weak": self.cost.weak, "cost_range": list(self.cost.cost_range),
                           "summary": self.cost.summary.to_dict(orient="records"), "frontier": self.cost.frontier.to_dict(orient="records")}
        return out


# ====================================================================== the evaluation
def _resolve_families(families, X, cost, policy_datasets, params) -> tuple[dict, dict]:
    """name -> unfitted Router, and name -> reason for skipped families."""
    explicit = families is not None
    if families is None:
        names = [f for f in FAMILIES]
    elif isinstance(families, str):
        names = [f.strip() for f in families.split(",") if f.strip()]
    elif isinstance(families, Mapping):
        names = list(families)
    else:
        names = list(families)
    if not names:
        raise ValueError("families is empty; name at least one router family")
    params = dict(params or {})
    routers, skipped = {}, {}
    for nm in names:
        if isinstance(families, Mapping) and isinstance(families[nm], Router):
            routers[str(nm)] = families[nm]
            continue
        if isinstance(nm, Router):
            routers[type(nm).__name__] = nm
            continue
        if nm not in FAMILIES:
            raise ValueError(f"unknown router family {nm!r}; known families: {', '.join(FAMILIES)}")
        reason = missing_inputs(nm, X, cost=cost, policy_datasets=policy_datasets)
        if reason is not None:
            if explicit:
                raise ValueError(f"router family {nm!r} cannot run on this pool: it {reason}")
            skipped[nm] = reason
            continue
        p = dict(params.get(nm, {}))
        if nm == "dataset" and "policy_datasets" not in p:
            p["policy_datasets"] = list(policy_datasets)
        routers[nm] = make_router(nm, **p)
    first = routers.pop("best_single", None) or make_router("best_single", **dict(params.get("best_single", {})))
    return {"best_single": first, **routers}, skipped  # the comparator is always evaluated, and first


def _policy_datasets(pool: Pool):
    col = pool.policies.get("dataset")
    return None if col is None else [None if pd.isna(v) else str(v) for v in col]


def evaluate_routers(
    pool: Pool,
    families=None,
    *,
    tau=None,
    cv: int | None = 5,
    split: str | None = None,
    seed: int = 0,
    inputs: RouterInputs | None = None,
    embed: str = "auto",
    target: str = "rate",
    targets=None,
    params: Mapping | None = None,
    n_boot: int = 2000,
    alpha: float = 0.05,
    cost=None,
    lambdas=None,
    strong=None,
    weak=None,
    progress: bool | None = None,
) -> RouterComparison:
    """Fit and score router ``families`` on ``pool`` under one protocol (see the module docstring).

    ``families``: names from :data:`~oraclegap.deploy.routers.FAMILIES` (a list or a
    comma-separated string), a dict name -> Router, or None for every family the inputs allow
    (those that cannot run are listed in ``skipped``; a named family that cannot run raises).
    ``best_single`` is always evaluated: it is the calibration-selected comparator.
    ``inputs`` (default :func:`router_inputs` of the pool with ``embed``), ``targets`` float[n, M]
    overrides the training targets (default :func:`router_targets` with ``target``), ``params``
    name -> router parameters, ``cost`` [n, M] or [M] overrides the pool's costs, ``lambdas`` the
    cost-penalty grid (each >= 0), ``strong`` / ``weak`` the pair for PGR (names or positions).
    """
    if not isinstance(pool, Pool):
        raise TypeError(f"pool must be an oraclegap Pool, got {type(pool).__name__}")
    n, M, k = pool.shape
    if M < 2:
        raise ValueError(f"the pool has {M} policy; routing needs at least two policies")
    alpha = check_alpha(alpha)
    n_boot = check_int(n_boot, "n_boot", minimum=100)
    O, tau_eff = outcome_matrix(pool, tau)
    Y = router_targets(pool, tau, target) if targets is None else targets
    Y = check_targets(Y, n, "targets")
    if Y.shape[1] != M:
        raise ValueError(f"targets have {Y.shape[1]} policy columns but the pool has {M} policies")
    X = router_inputs(pool, embed=embed, progress=progress) if inputs is None else inputs
    if not isinstance(X, RouterInputs):
        raise TypeError(f"inputs must be RouterInputs, got {type(X).__name__}")
    if len(X) != n:
        raise ValueError(f"inputs describe {len(X)} prompts but the pool has {n}")
    if families is None and not any(X.has(f) for f in ("text", "embeddings", "features", "dataset")):
        raise ValueError("the pool has no prompt text, embeddings, features or dataset column: routers have nothing to route on")
    C = None
    if cost is not None:
        C = check_cost(cost, n, M)
    elif pool.cost is not None:
        C = pool.cost
    lam_grid = DEFAULT_LAMBDAS if lambdas is None else np.atleast_1d(np.asarray(lambdas, dtype=float))
    if lam_grid.ndim != 1 or lam_grid.size == 0:
        raise ValueError("lambdas must be a non-empty 1-d grid of cost penalties")
    for v in lam_grid:
        check_lambda(v, "lambdas")
    proto = make_protocol(pool, cv=cv, split=split, seed=seed)
    routers, skipped = _resolve_families(families, X, C, _policy_datasets(pool), params)

    from tqdm.auto import tqdm

    ev = proto.eval_idx
    pos = np.full(n, -1)
    pos[ev] = np.arange(ev.size)
    U = {f: np.zeros((ev.size, M)) for f in routers}
    choice = {f: np.zeros(ev.size, dtype=np.int64) for f in routers}
    rank = np.zeros((ev.size, M), dtype=np.int64)
    chat = np.zeros((ev.size, M))
    secs = dict.fromkeys(routers, 0.0)
    jobs = [(f, fi) for fi in range(len(proto.folds)) for f in routers]
    bar = tqdm(jobs, desc="fitting routers", disable=(not progress) if progress is not None else None, leave=False)
    for f, fi in bar:
        cal, tst = proto.folds[fi]
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(f"{f} fold {fi + 1}/{len(proto.folds)}")
        t0 = time.perf_counter()
        r = clone(routers[f])
        r.fit(X.take(cal), Y[cal], cost=None if C is None else C[cal])
        Xt = X.take(tst)
        u = r.predict_utility(Xt)
        secs[f] += time.perf_counter() - t0
        p = pos[tst]
        U[f][p] = u
        choice[f][p] = choose(u, r.rank_)
        if f == "best_single":
            rank[p] = r.rank_[None, :]
            if r.cost_ is not None:
                chat[p] = r.cost_[None, :]
    Oe = O[ev]
    counts = pool.counts()[ev]
    names = pool.policy_names
    fams = list(routers)
    F = len(fams)
    rows = np.arange(ev.size)
    S = np.stack([Oe[rows, choice[f]] for f in fams], axis=1)  # [n_eval, F]
    base = S[:, 0].astype(bool)
    Ymax = Oe.any(axis=1)

    # ---------------------------------------------------------------- one shared bootstrap
    ss = np.random.SeedSequence([seed, 3])
    boot_seed, pair_seed = ss.spawn(2)
    blocks = [Oe.astype(float), S.astype(float), Ymax[:, None].astype(float)]
    cost_cols = None
    if C is not None:
        Ce = C[ev]
        lamb = lam_grid
        str_i, weak_i = _pair(strong, weak, names, O, C, proto)
        Sl = np.empty((ev.size, F, lamb.size))
        Cl = np.empty((ev.size, F, lamb.size))
        for a, f in enumerate(fams):
            for b_, lam in enumerate(lamb):
                ch = _choose_rows(U[f] - lam * chat, rank)
                Sl[:, a, b_] = Oe[rows, ch]
                Cl[:, a, b_] = Ce[rows, ch]
        # tied pair scores (a constant router) are broken in one seeded random order: such a router routes at random
        tie = np.random.default_rng([seed, 4]).permutation(ev.size)
        Pg = np.stack([_pair_columns(U[f][:, str_i] - U[f][:, weak_i], Oe[:, str_i].astype(float), Oe[:, weak_i].astype(float),
                                     PGR_FRACTIONS, tie) for f in fams], axis=1)  # [n_eval, F, G]
        cost_cols = (len(blocks), lamb, Sl, Cl, Pg, Ce, str_i, weak_i)
        blocks += [Sl.reshape(ev.size, -1), Cl.reshape(ev.size, -1), Pg.reshape(ev.size, -1), Ce]
    Z = np.concatenate(blocks, axis=1)
    point = Z.mean(axis=0)
    draws = bootstrap_means(Z, n_boot, np.random.default_rng(boot_seed))
    mem_b, acc_b, orc_b = draws[:, :M], draws[:, M : M + F], draws[:, M + F]
    best_b = mem_b.max(axis=1)
    gb_lo, gb_hi = _interval(acc_b - best_b[:, None], alpha)
    gc_lo, gc_hi = _interval(acc_b - acc_b[:, [0]], alpha)
    gab_lo, gab_hi = _interval(gain_at_b(acc_b, best_b[:, None]), alpha)
    gao_lo, gao_hi = _interval(gap_at_o(acc_b, orc_b[:, None]), alpha)
    mem_pt = point[:M]
    best_pt = float(mem_pt.max())
    orc_pt = float(point[M + F])

    # ---------------------------------------------------------------- paired inference, per regime
    regimes = {f: routers[f].regime for f in fams}
    paired_rows = []
    pseed = np.random.default_rng(pair_seed)
    for reg in ("pre-answer", "post-inference"):
        members = [f for f in fams if regimes[f] == reg and f != "best_single"]
        if not members:
            continue
        # paired_family's rows, with Holm's step-down over this regime's routers (the shared
        # stats.multiplicity.holm: statsmodels' numbers without its gc.collect() per call)
        pf = pd.concat([paired_comparison(S[:, fams.index(f)], base, alpha, oracle=Ymax, n_boot=n_boot, seed=pseed).frame()
                        .assign(policy=f) for f in members], ignore_index=True)
        pf["p_holm"] = holm(pf["p_mcnemar"].to_numpy())
        first = ["policy", "accuracy", "accuracy_lo", "accuracy_hi", "difference", "diff_lo", "diff_hi", "n10", "n01", "p_mcnemar",
                 "p_holm"]
        pf = pf[first + [c for c in pf.columns if c not in first]]
        pf.insert(1, "regime", reg)
        paired_rows.append(pf)
    paired = pd.concat(paired_rows, ignore_index=True) if paired_rows else pd.DataFrame(columns=["policy"])
    paired = paired.set_index("policy")

    cal_member = names[int(np.argmax(O[proto.folds[0][0]].mean(axis=0)))] if proto.mode == "split" else "cross-fitted"
    evals = {}
    a_lo, a_hi = _cp(S.sum(axis=0), ev.size, alpha)

    def ci(v, lo, hi, method="percentile"):
        return Interval.of(v, lo, hi, 1 - alpha, method)

    for j, f in enumerate(fams):
        acc = float(S[:, j].mean())
        ra = routing_account(counts, choice[f], tau_eff, k=k)
        rl = rescue_loss(S[:, j], base, Oe)
        if f in paired.index:
            pr = paired.loc[f]
            n10, n01 = int(pr["n10"]), int(pr["n01"])
            p_mc, p_holm = float(pr["p_mcnemar"]), float(pr["p_holm"])
            Gb, Gb_lo, Gb_hi = float(pr["G_b"]), float(pr["G_b_lo"]), float(pr["G_b_hi"])
            rec, rec_lo, rec_hi = float(pr["recovered"]), float(pr["recovered_lo"]), float(pr["recovered_hi"])
        else:  # the baseline itself
            n10 = n01 = 0
            p_mc = p_holm = 1.0
            gb_ = int((Ymax & ~base).sum())
            Gb, (Gb_lo, Gb_hi) = gb_ / ev.size, map(float, _cp(gb_, ev.size, alpha))
            rec = rec_lo = rec_hi = (0.0 if Gb_lo > 0 else math.nan)
        evals[f] = RouterEvaluation(
            family=f, regime=regimes[f], protocol=proto.describe(), tau=None if k == 1 else tau_eff, n_eval=int(ev.size),
            accuracy_ci=ci(acc, a_lo[j], a_hi[j], "clopper-pearson"),
            best=best_pt, best_member=names[int(np.argmax(mem_pt))],
            gain_best_ci=ci(acc - best_pt, gb_lo[j], gb_hi[j]),
            baseline=float(S[:, 0].mean()), baseline_member=cal_member,
            gain_cal_ci=ci(acc - float(S[:, 0].mean()), gc_lo[j], gc_hi[j]),
            oracle=orc_pt, D=ra.D, L=ra.L, e_D=ra.e_D, break_even=ra.break_even, identity_residual=ra.identity_residual,
            n10=n10, n01=n01, p_mcnemar=p_mc, p_holm=p_holm, rescue=rl.rescue, loss=rl.loss,
            G_b_ci=ci(Gb, Gb_lo, Gb_hi, "clopper-pearson"), recovered_ci=ci(rec, rec_lo, rec_hi, "joint bootstrap"),
            gain_at_b_ci=ci(gain_at_b(acc, best_pt), gab_lo[j], gab_hi[j]),
            gap_at_o_ci=ci(gap_at_o(acc, orc_pt), gao_lo[j], gao_hi[j]),
            fit_seconds=secs[f], choice=choice[f], utility=U[f],
        )

    # ---------------------------------------------------------------- the family certificate (split only)
    cert, note = None, ""
    if proto.mode == "split":
        fam_choices = {f: choice[f] for f in fams if regimes[f] == "pre-answer" and f != "best_single"}
        cert = family_certificate(Oe, fam_choices or None, alpha, model_names=names)
        note = f"Thm 6 over the {M} constant policies and {len(fam_choices)} fitted routers (L = {cert.L})"
    else:
        note = "not reported under cross-fitting: each fold's policy is fitted on the other folds' outcomes (use split='half')"

    cost_an = None
    if cost_cols is not None:
        cost_an = _cost_analysis(cost_cols, draws, point, fams, names, alpha)
    return RouterComparison(
        evaluations=evals, protocol=proto, tau=None if k == 1 else tau_eff, k=k, alpha=alpha, n_boot=n_boot,
        inputs=X.describe(), skipped=skipped, paired=paired.reset_index(), certificate=cert, certificate_note=note,
        cost=cost_an, policy_names=tuple(names),
    )


def _choose_rows(U: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """:func:`choose` with a per-row tie order rank[n, M] (each fold has its own incumbent)."""
    mx = U.max(axis=1, keepdims=True)
    tied = U >= mx - 1e-12 * (1.0 + np.abs(mx))
    return np.where(tied, rank, rank.shape[1] + 1).argmin(axis=1)


def _pair(strong, weak, names, O, C, proto) -> tuple[int, int]:
    """The strong-weak pair for PGR: given, else the most accurate member on the calibration part
    (cross-fitting: on all prompts) and the one with the lowest mean cost there."""
    ref = proto.folds[0][0] if proto.mode == "split" else np.arange(O.shape[0])

    def idx(v, what):
        if isinstance(v, str):
            if v not in names:
                raise ValueError(f"{what} {v!r} is not a policy name; policies: {names}")
            return names.index(v)
        return check_int(v, what, minimum=0, maximum=len(names) - 1)

    s = int(np.argmax(O[ref].mean(axis=0))) if strong is None else idx(strong, "strong")
    if weak is None:
        mc = C[ref].mean(axis=0).astype(float)
        mc[s] = np.inf
        w = int(np.argmin(mc))
    else:
        w = idx(weak, "weak")
    if s == w:
        raise ValueError("strong and weak must be different policies")
    return s, w


def _cost_analysis(cost_cols, draws, point, fams, names, alpha) -> CostAnalysis:
    _, lamb, Sl, Cl, Pg, Ce, s_i, w_i = cost_cols
    n_eval, F, L = Sl.shape
    G = Pg.shape[2]
    M = Ce.shape[1]
    widths = [F * L, F * L, F * G, M]
    cuts = np.cumsum([0] + widths)
    base_col = draws.shape[1] - sum(widths)
    def part(arr, j):
        return arr[..., base_col + cuts[j] : base_col + cuts[j + 1]]
    q_pt, c_pt = part(point, 0).reshape(F, L), part(point, 1).reshape(F, L)
    pg_pt = part(point, 2).reshape(F, G)
    mc_pt = part(point, 3)
    q_b, c_b = part(draws, 0).reshape(-1, F, L), part(draws, 1).reshape(-1, F, L)
    pg_b = part(draws, 2).reshape(-1, F, G)
    mc_b = part(draws, 3)
    lo_pt, hi_pt = float(mc_pt.min()), float(mc_pt.max())
    aiq_pt = aiq(c_pt, q_pt, np.full(F, lo_pt), np.full(F, hi_pt))
    aiq_b = aiq(c_b, q_b, np.repeat(mc_b.min(axis=1)[:, None], F, axis=1), np.repeat(mc_b.max(axis=1)[:, None], F, axis=1))
    aiq_lo, aiq_hi = _interval(aiq_b, alpha)
    # PGR from the pair's columns: A(0) = weak, A(1) = strong on every resample
    def pgr_of(P):
        den = P[..., -1] - P[..., 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den[..., None] > 0, (P - P[..., :1]) / np.where(den > 0, den, 1.0)[..., None], np.nan)
    pgr_pt, pgr_b = pgr_of(pg_pt), pgr_of(pg_b)
    ap_pt = apgr(pgr_pt, PGR_FRACTIONS)
    ap_b = apgr(pgr_b, PGR_FRACTIONS)
    cp_pt = np.atleast_1d(cpt(pgr_pt, PGR_FRACTIONS))
    cp_b = cpt(pgr_b.reshape(-1, G), PGR_FRACTIONS).reshape(-1, F)
    ap_lo, ap_hi = _interval(ap_b, alpha)
    cp_lo, cp_hi = _interval(cp_b, alpha)
    summary = pd.DataFrame({
        "family": fams, "aiq": aiq_pt, "aiq_lo": aiq_lo, "aiq_hi": aiq_hi,
        "apgr": ap_pt, "apgr_lo": ap_lo, "apgr_hi": ap_hi, "cpt50": cp_pt, "cpt50_lo": cp_lo, "cpt50_hi": cp_hi,
    })
    frontier = pd.DataFrame({
        "family": np.repeat(fams, L), "lambda": np.tile(lamb, F), "quality": q_pt.ravel(), "cost": c_pt.ravel(),
    })
    members = pd.DataFrame({"policy": names, "mean_cost": mc_pt, "quality": point[:M]})
    return CostAnalysis(lambdas=lamb, strong=names[s_i], weak=names[w_i], cost_range=(lo_pt, hi_pt), frontier=frontier,
                        summary=summary, members=members)


def evaluate_router(family, pool: Pool, **kwargs) -> RouterEvaluation:
    """Fit and score one router family on ``pool`` (beside the calibration-selected member); the
    keyword arguments are those of :func:`evaluate_routers`. ``family`` is a name from
    :data:`~oraclegap.deploy.routers.FAMILIES` or an unfitted :class:`Router`."""
    if isinstance(family, Router):
        res = evaluate_routers(pool, {"router": family}, **kwargs)
        return res.evaluation("router")
    if not isinstance(family, str):
        raise TypeError(f"family must be a family name or a Router, got {type(family).__name__}")
    return evaluate_routers(pool, [family], **kwargs).evaluation(family)

