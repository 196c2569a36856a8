"""Single-draw oracle noise (arXiv 2607.03436, T.-R. Chen): O_exp = O_repro + Delta.

A pool answers prompt i with independent-in-time draws R_imj ~ Bernoulli(p_im). Three per-prompt
ceilings, averaged over prompts:

* reproducible ceiling  O_repro = mean_i max_m p_im -- the best any *single-commit* router can
  score (it commits to one member and is scored on that member's fresh draw), whatever the joint
  law of the draws;
* expected single-draw oracle  O_exp = mean_i P(max_m R_im = 1) -- what an oracle built from one
  draw per member scores in expectation. Without assuming independence across members it is
  estimated from seed-aligned draws, mean_{i,j} max_m R_imj; under independence it equals
  mean_i [1 - prod_m (1 - p_im)];
* the floor  Delta = O_exp - O_repro >= 0, since P(union) >= max P: single-draw luck that no
  single-commit router can capture.

Against any router r with score S_r: G = O_exp - S_r = G_rec + G_noise with G_rec = O_repro - S_r
and G_noise = Delta; the noise share is Delta / G. Best-of-K on the per-prompt maximizer at the
oracle's budget (K = M draws) reaches mean_i [1 - (1 - max_m p_im)^M] >= O_exp under independence.

Worked example: M = 10 members each with p = 0.1 give O_exp = 1 - 0.9^10 = 0.651 but
O_repro = 0.1, so Delta = 0.551.

Beyond the point estimates this module gives, for pools with k > 1 draws per cell:

* :func:`decomposition` -- every term with a 95% prompt-bootstrap interval. O_exp gets a
  percentile interval. O_repro = mean_i max_m p_im has no unbiased
  estimator: the plug-in mean_i max_m c_im/k is biased *upward* (the winner's curse inside a
  prompt: E max >= max E) and a split-draw estimate, which selects the maximiser on some draws
  and scores it on the others, is biased *downward* (its expected score is that of a member the
  selection picked, never above max_m p_im). The interval for O_repro therefore runs from the
  lower bootstrap limit of the split-draw estimate to the upper limit of the plug-in (a
  *bracket*), and Delta, G_rec and the noise share inherit it (the best single member is
  bracketed the same way against draw noise); a plain percentile interval around each plug-in
  is reported beside it (prompt-sampling uncertainty only). On simulated pools the plain
  interval misses the population Delta and noise share far more often than its level says.
* Frechet bounds on the single-draw oracle without any assumption on the joint law,
  max_m p_im <= P(union) <= min(1, sum_m p_im), and the independence form 1 - prod_m (1 - p_im),
  which is an upper envelope under positive association (FKG: P(all fail) >= prod P(fail)).
* :func:`support_strata` -- the decomposition within strata of prompt support.
* :func:`k_sweep` and :func:`pool_size_sweep` -- the terms on subsampled draws and members.
* :func:`best_of_k_check` -- 001's falsifier: best-of-K on the committed maximiser at the
  oracle's budget (K = M) against the single-draw oracle.
* :func:`aggregation_ceiling` -- the verifier-free ceiling O_agg (plurality vote) and the split of
  Delta into Delta_know and Delta_guess, where per-response answers exist.
* :func:`baseline_table` -- the same floor against several routers: the noise share depends on the
  baseline, Delta does not.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from numba import njit, prange
from scipy.special import comb

from .._result import Interval, Result
from .._validate import as_bool_array, as_rng, check_alpha, check_int
from ..pool import Pool, need
from ._streams import _int_below_exact, _stream_start

__all__ = [
    "OracleDecomposition",
    "decompose_truth",
    "decompose",
    "best_of_k_truth",
    "Ladder",
    "ladder_truth",
    "rescue_probability",
    "frechet_truth",
    "Estimate",
    "Decomposition",
    "decomposition",
    "split_draw_repro",
    "baseline_scores",
    "support_strata",
    "k_sweep",
    "pool_size_sweep",
    "BestOfK",
    "best_of_k_check",
    "plurality_vote",
    "answer_codes",
    "AggregationSplit",
    "aggregation_ceiling",
    "baseline_table",
    "boot_means",
    "NEEDS",
    "Check",
    "runs_check",
    "permutation_checks",
    "WinnersCurse",
    "winners_curse_radius",
    "winners_curse",
    "AssumptionChecks",
    "assumption_checks",
    "reliable_fractions",
]


@dataclasses.dataclass(frozen=True, repr=False)
class OracleDecomposition(Result):
    """O_exp = O_repro + Delta, and the split of a router's gap G = G_rec + G_noise."""

    O_exp: float
    O_repro: float
    router: float
    form: str  # "truth-independent", "seed-aligned", "independent"

    @property
    def delta(self) -> float:
        return self.O_exp - self.O_repro

    @property
    def G(self) -> float:
        return self.O_exp - self.router

    @property
    def G_rec(self) -> float:
        return self.O_repro - self.router

    @property
    def noise_share(self) -> float:
        return self.delta / self.G if self.G > 0 else float("nan")

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "form": self.form,
                    "O_exp": self.O_exp,
                    "O_repro": self.O_repro,
                    "Delta": self.delta,
                    "router": self.router,
                    "G": self.G,
                    "G_rec": self.G_rec,
                    "G_noise": self.delta,
                    "noise_share": self.noise_share,
                }
            ]
        )


def _check_p(p) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or 0 in p.shape:
        raise ValueError(f"p must be a non-empty [n, M] array of success probabilities, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p must hold probabilities in [0, 1]")
    return p


def decompose_truth(p, router=None) -> OracleDecomposition:
    """Population decomposition for known rates p[n, M] with independent draws across members.

    ``router`` is the router's score; default: the best fixed member, max_m mean_i p_im.
    """
    p = _check_p(p)
    O_exp = float((1 - np.prod(1 - p, axis=1)).mean())
    O_repro = float(p.max(axis=1).mean())
    r = float(p.mean(axis=0).max()) if router is None else float(router)
    return OracleDecomposition(O_exp, O_repro, r, "truth-independent")


def decompose(x, *, form: str | None = None, router=None) -> OracleDecomposition:
    """Plug-in decomposition from a pool with k draws per cell.

    ``form="seed-aligned"`` estimates O_exp by mean_{i,j} max_m R_imj (valid for any dependence
    across members when draw j shares a seed); ``"independent"`` uses 1 - prod_m (1 - c_im/k),
    unbiased for O_exp under independence. Default: seed-aligned when the pool says so, else
    independent. O_repro is the plug-in mean_i max_m c_im/k (biased upward at small k: the
    winner's curse); ``router`` defaults to the best member's mean rate.
    """
    if isinstance(x, Pool):
        v, alignment = x.verdicts, x.alignment
    else:
        v, alignment = as_bool_array(x, "verdicts", ndim=3), "unknown"
    if 0 in v.shape:
        raise ValueError(f"verdicts has a zero-size axis (shape {v.shape})")
    if form is None:
        form = "seed-aligned" if alignment == "seed-aligned" else "independent"
    if form not in ("seed-aligned", "independent"):
        raise ValueError(f"form must be 'seed-aligned' or 'independent', got {form!r}")
    if form == "seed-aligned" and alignment not in ("seed-aligned", "unknown"):
        raise ValueError(f"form='seed-aligned' needs seed-aligned draws; this pool is {alignment!r}")
    rates = v.mean(axis=2)
    O_exp = float(v.any(axis=1).mean()) if form == "seed-aligned" else float((1 - np.prod(1 - rates, axis=1)).mean())
    O_repro = float(rates.max(axis=1).mean())
    r = float(rates.mean(axis=0).max()) if router is None else float(router)
    return OracleDecomposition(O_exp, O_repro, r, form)


def best_of_k_truth(p, K: int | None = None) -> float:
    """Best-of-K on the per-prompt maximizer: mean_i [1 - (1 - max_m p_im)^K] (K defaults to M)."""
    p = _check_p(p)
    K = p.shape[1] if K is None else check_int(K, "K", minimum=1)
    return float((1 - (1 - p.max(axis=1)) ** K).mean())


@dataclasses.dataclass(frozen=True, repr=False)
class Ladder(Result):
    """The information ladder of a pool with known rates (k = 1 outcomes, one draw per member).

    p_star <= q_Z <= O_repro <= O_exp, where p_star is the best fixed member, q_Z the best
    policy that sees a finite signal Z (arXiv 002 Thm 2), O_repro the best policy that sees the
    prompt itself (Z = prompt identity) and O_exp = q the outcome oracle (arXiv 2607.03436).
    """

    p_star: float
    q_Z: float
    O_repro: float
    O_exp: float

    @property
    def G_out(self) -> float:
        return self.O_exp - self.p_star

    @property
    def G_Z(self) -> float:
        return self.q_Z - self.p_star

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [{"p_star": self.p_star, "q_Z": self.q_Z, "O_repro": self.O_repro, "O_exp": self.O_exp, "G_Z": self.G_Z, "G_out": self.G_out}]
        )


def ladder_truth(p, z=None, weights=None) -> Ladder:
    """Population ladder for rates p[n, M] over a finite prompt population with weights (default uniform).

    ``z[i]`` is a finite pre-answer signal (any hashable labels); q_Z = sum_z P(z) max_m
    E[p_m | z]. Draws are independent across members, so O_exp = E[1 - prod_m (1 - p_m)].
    ``z=None`` gives the constant signal (q_Z = p_star).
    """
    p = _check_p(p)
    n = p.shape[0]
    w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n,) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be {n} non-negative numbers summing to 1")
    zz = np.zeros(n, dtype=int) if z is None else pd.factorize(pd.Series(list(z)))[0]
    if len(zz) != n:
        raise ValueError(f"z must have one label per prompt ({n}), got {len(zz)}")
    cell_mass = np.bincount(zz, weights=w)
    theta = np.stack([np.bincount(zz, weights=w * p[:, m], minlength=len(cell_mass)) for m in range(p.shape[1])], axis=1)
    q_Z = float(theta.max(axis=1).sum())  # sum_z max_m P(Z = z, R_m = 1)
    return Ladder(
        p_star=float((w @ p).max()),
        q_Z=q_Z,
        O_repro=float(w @ p.max(axis=1)),
        O_exp=float(w @ (1 - np.prod(1 - p, axis=1))),
    )


def rescue_probability(p, b: int, weights=None) -> float:
    """P(R_b = 0 and some other member R_m = 1) for independent draws with rates p[n, M].

    By arXiv 002 Prop. 1 this equals the outcome-oracle gap G_out when b is a best fixed member.
    """
    p = _check_p(p)
    n, M = p.shape
    b = check_int(b, "b", minimum=0, maximum=M - 1)
    w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=float)
    others = np.delete(p, b, axis=1)
    return float(w @ ((1 - p[:, b]) * (1 - np.prod(1 - others, axis=1))))


def frechet_truth(p) -> dict:
    """Bounds on the single-draw oracle mean_i P(union_m R_im = 1) from the marginals p[n, M] alone.

    Frechet: max_m p_im <= P(union) <= min(1, sum_m p_im) for any joint law of the draws; the
    independence form 1 - prod_m (1 - p_im) is exact under independence and an upper envelope
    under positive association (FKG). Returns the three prompt means.
    """
    p = _check_p(p)
    return {
        "lower": float(p.max(axis=1).mean()),
        "upper": float(np.minimum(1.0, p.sum(axis=1)).mean()),
        "independent": float((1 - np.prod(1 - p, axis=1)).mean()),
    }


# ============================================================================ inputs and kernels
def _inputs(x, *, min_k: int = 1):
    """(verdicts bool [n, M, k], alignment, policy names, answers or None) from a Pool or array."""
    if isinstance(x, Pool):
        v, alignment, names, answers = x.verdicts, x.alignment, x.policy_names, x.answers
    else:
        v = as_bool_array(x, "verdicts", ndim=3)
        if 0 in v.shape:
            raise ValueError(f"verdicts has a zero-size axis (shape {v.shape})")
        alignment, names, answers = "unknown", [f"m{j}" for j in range(v.shape[1])], None
    if v.shape[2] < min_k:
        raise ValueError(
            f"this needs k >= {min_k} draws per cell, the pool has k={v.shape[2]} "
            "(at k = 1 the reproducible ceiling O_repro is not identified: one draw cannot tell p from luck)"
        )
    return v, alignment, list(names), answers


def _form(form, alignment: str) -> str:
    if form is None:
        form = "seed-aligned" if alignment == "seed-aligned" else "independent"
    if form not in ("seed-aligned", "independent"):
        raise ValueError(f"form must be 'seed-aligned' or 'independent', got {form!r}")
    if form == "seed-aligned" and alignment not in ("seed-aligned", "unknown"):
        raise ValueError(f"form='seed-aligned' needs seed-aligned draws; this pool is {alignment!r}")
    return form


def _o_exp_prompt(v: np.ndarray, form: str) -> np.ndarray:
    """Per-prompt single-draw oracle: seed-aligned mean_j max_m R_imj, or 1 - prod_m (1 - c_im/k)."""
    if form == "seed-aligned":
        return v.any(axis=1).mean(axis=1)
    return 1 - np.prod(1 - v.mean(axis=2), axis=1)


def _tie_mean(sel: np.ndarray, score: np.ndarray, axis: int) -> np.ndarray:
    """Score of the maximiser of ``sel`` along ``axis``, ties split evenly (a uniformly random tie-break in expectation)."""
    top = sel >= sel.max(axis=axis, keepdims=True)
    return (score * top).sum(axis=axis) / top.sum(axis=axis)


# ---------------------------------------------------------------------------- compiled split selection
# The split-draw estimates (split_draw_repro, best_of_k_check) select on one half of each prompt's
# draws and score on the other, for every prompt, member and split. With k <= 64 the draws of a
# cell are one 64-bit word and a half's successes one popcount; the kernels below give, per prompt
# and split (or left-out draw), exactly the value the array code's _tie_mean gives (the tied
# members' scores added in member order, divided by their number), and the callers reduce those
# values over splits with the same numpy sums as before.
_BITS = 64  # draws per cell the compiled path takes (one word)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@njit(cache=True, inline="always")
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit(cache=True, nogil=True)
def _pack_draws(v):  # pragma: no cover - compiled
    """The draws of each cell of verdicts v [n, M, k] (k <= 64) as one word: bit j = draw j."""
    n, M, k = v.shape
    out = np.zeros((n, M), np.uint64)
    for i in range(n):
        for m in range(M):
            w = np.uint64(0)
            for j in range(k):
                if v[i, m, j]:
                    w |= np.uint64(1) << np.uint64(j)
            out[i, m] = w
    return out


@njit(cache=True, nogil=True)
def _split_select(bits, c, masks, score_a, score_b, out):  # pragma: no cover - compiled
    """out[i, s] = 0.5 * (T_A + T_B) for prompt i and split s (half A = the draws set in
    masks[s]): T_A is the mean of score_b[successes on half B] over the members with the most
    successes on half A (ties split evenly), T_B the same with the halves swapped."""
    n, M = bits.shape
    S = masks.shape[0]
    ca = np.empty(M, np.int64)
    for i in range(n):
        for s in range(S):
            top_a = -1
            top_b = -1
            for m in range(M):
                a = _popcount(bits[i, m] & masks[s])
                ca[m] = a
                if a > top_a:
                    top_a = a
                if c[i, m] - a > top_b:
                    top_b = c[i, m] - a
            ta = 0.0
            tb = 0.0
            na = 0
            nb = 0
            for m in range(M):
                a = ca[m]
                b = c[i, m] - a
                if a == top_a:
                    ta += score_b[b]
                    na += 1
                if b == top_b:
                    tb += score_a[a]
                    nb += 1
            out[i, s] = 0.5 * (ta / na + tb / nb)


@njit(cache=True, nogil=True)
def _loo_select(v, c, out):  # pragma: no cover - compiled
    """out[i, j] = the share of right answers at draw j among the members with the most successes
    on the other k - 1 draws of prompt i (ties split evenly)."""
    n, M, k = v.shape
    for i in range(n):
        for j in range(k):
            top = -1
            for m in range(M):
                rest = c[i, m] - v[i, m, j]
                if rest > top:
                    top = rest
            t = 0.0
            nt = 0
            for m in range(M):
                if c[i, m] - v[i, m, j] == top:
                    t += 1.0 if v[i, m, j] else 0.0
                    nt += 1
            out[i, j] = t / nt


def _mask_words(mask: np.ndarray) -> np.ndarray:
    """Boolean split masks [S, k] as words (bit j = draw j in half A)."""
    return (mask.astype(np.uint64) << np.arange(mask.shape[1], dtype=np.uint64)).sum(axis=1, dtype=np.uint64)


def split_draw_repro(x, *, method: str = "loo", n_splits: int = 200, seed=0) -> np.ndarray:
    """Per-prompt split-draw estimates [n] of max_m p_im: select on some draws, score on the others.

    ``method="half"``: the draws of each prompt are split at random into halves A and B (the same
    positions for every member, so seed alignment is kept); the member with the highest rate on
    A is scored by its rate on B and vice versa; averaged over ``n_splits`` random splits.
    ``"loo"``: select on k - 1 draws, score the left-out draw, averaged over the k draws. Ties are
    split evenly. Because the scored draws are independent of the ones that chose the member,
    E[estimate_i] = E[p_{i, chosen}] <= max_m p_im: the estimate is biased *downward* (by the
    regret of choosing on fewer draws), whatever the dependence across members, while the
    plug-in max_m c_im/k is biased upward.
    """
    v, _, _, _ = _inputs(x, min_k=2)
    n, M, k = v.shape
    c = v.sum(axis=2, dtype=np.float64)
    if method == "loo":  # per prompt, in blocks of prompts (memory O(block))
        out = np.empty(n)
        per = max(1, _CELLS // (M * k))
        ci = c.astype(np.int64)
        for i0 in range(0, n, per):
            i1 = min(n, i0 + per)
            sel = np.empty((i1 - i0, k))
            _loo_select(np.ascontiguousarray(v[i0:i1]), ci[i0:i1], sel)
            out[i0:i1] = sel.mean(axis=1)
        return out
    if method != "half":
        raise ValueError(f"method must be 'loo' or 'half', got {method!r}")
    n_splits = check_int(n_splits, "n_splits", minimum=1)
    rng = as_rng(seed)
    hA = k // 2
    hB = k - hA
    out = np.zeros(n)
    per = max(1, _CELLS // (M * 64))  # prompts per block: memory O(block), results unchanged (per prompt)
    words = _pack_draws(v) if k <= _BITS else None
    ci = c.astype(np.int64)
    rates_a, rates_b = np.arange(hA + 1) / hA, np.arange(hB + 1) / hB
    for start in range(0, n_splits, 64):  # blocks of splits bound the memory; vectorised within
        b = min(64, n_splits - start)
        maskA = rng.random((b, k)).argsort(axis=1) < hA  # [b, k]
        for i0 in range(0, n, per):
            i1 = min(n, i0 + per)
            if words is not None:  # compiled: the same values, one word per cell
                val = np.empty((i1 - i0, b))
                _split_select(words[i0:i1], ci[i0:i1], _mask_words(maskA), rates_a, rates_b, val)
            else:  # successes on half A: one matrix product (sums of 0/1 terms, exact in any order)
                cA = (v[i0:i1].reshape(-1, k).astype(np.float64) @ maskA.T.astype(np.float64)).reshape(i1 - i0, M, b)
                rA, rB = cA / hA, (c[i0:i1, :, None] - cA) / hB
                val = 0.5 * (_tie_mean(rA, rB, axis=1) + _tie_mean(rB, rA, axis=1))
            out[i0:i1] += val.sum(axis=1)
    return out / n_splits


def _half_counts(v: np.ndarray, maskA: np.ndarray) -> np.ndarray:
    """Successes of every member on each half of its draws: [n, 2*S*M], first the halves in
    ``maskA`` (bool [S, k]), then their complements, split by split. Whole numbers up to k, so
    float32 holds them exactly, and blocks of prompts change nothing."""
    n, M, k = v.shape
    S = maskA.shape[0]
    H = np.empty((n, 2 * S * M), dtype=np.float32)
    mA, mB = maskA.astype(np.float32), (~maskA).astype(np.float32)
    per = max(1, _CELLS // (M * k + 2 * S * M))
    for i0 in range(0, n, per):
        i1 = min(n, i0 + per)
        vf = v[i0:i1].astype(np.float32)
        H[i0:i1, : S * M] = np.einsum("imj,sj->ism", vf, mA).reshape(i1 - i0, S * M)
        H[i0:i1, S * M :] = np.einsum("imj,sj->ism", vf, mB).reshape(i1 - i0, S * M)
    return H


# Cells of one block of resampling work (prompts x members x splits, or resamples x prompts): about
# 32 MB of float64, so memory stays O(pool + block) at any n.
_CELLS = 1 << 22


def baseline_scores(baseline, rates: np.ndarray) -> tuple[str, np.ndarray | None]:
    """Resolve a router baseline against raw rates [n, M]: ("best-single", None) or (kind, scores [n]).

    ``baseline`` may be None / ``"best"`` / ``"best-single"`` (the best member by mean rate,
    re-selected in every bootstrap resample), an integer array of per-prompt choices (policy
    positions; the router's score on prompt i is the chosen member's rate c_{i,r(i)}/k), or a
    float array of per-prompt scores in [0, 1] (e.g. a released router's per-prompt success
    rate). Choices must not depend on the scored draws (a cross-fitted router's do not).
    """
    n, M = rates.shape
    if baseline is None or (isinstance(baseline, str) and baseline in ("best", "best-single")):
        return "best-single", None
    if isinstance(baseline, str):
        raise ValueError(f"baseline must be 'best', an integer choice vector or per-prompt scores, got {baseline!r}")
    b = np.asarray(baseline)
    if b.shape != (n,):
        raise ValueError(f"baseline must have one entry per prompt (shape ({n},)), got shape {b.shape}")
    if b.dtype == bool:
        raise TypeError("baseline must be integer choices or float scores, got booleans")
    if np.issubdtype(b.dtype, np.integer):
        if (b < 0).any() or (b >= M).any():
            raise ValueError(f"baseline choices must be policy positions in [0, {M}), got values in [{b.min()}, {b.max()}]")
        return "choices", rates[np.arange(n), b]
    if np.issubdtype(b.dtype, np.floating):
        if np.isnan(b).any() or (b < 0).any() or (b > 1).any():
            raise ValueError("baseline scores must be per-prompt success rates in [0, 1] without NaN")
        return "scores", b.astype(np.float64)
    raise TypeError(f"baseline must be integer choices or float scores, got dtype {b.dtype}")


@njit(cache=True, nogil=True, boundscheck=False)
def _count_rows(idx, W):  # pragma: no cover - compiled
    """W[r, j] = the number of times prompt j appears in resample r's positions idx[r, :]:
    np.bincount of each row, one row at a time, so the counts being written (one row of n) stay
    in cache at any n."""
    b, n = idx.shape
    for r in range(b):
        for j in range(n):
            W[r, j] = 0.0
        for j in range(n):
            W[r, idx[r, j]] += 1.0


def boot_means(X, n_boot: int, seed=0, *, counts=None, chunk: int = 256,
               progress: bool = False) -> np.ndarray:
    """Prompt-bootstrap means [n_boot, q] of per-prompt columns X[n, q].

    Each resample draws n prompt indices uniformly with replacement; their counts w (a
    multinomial(n, 1/n) vector) give the resample's means w @ X / n. Blocks of ``chunk``
    resamples are one compiled counting pass and one matrix product each (no Python loop over
    resamples). The
    products run on one BLAS thread: the same seed gives the same numbers bit for bit whatever
    the machine's thread count, and thin products like these gain nothing from threads (on a
    busy machine threaded BLAS made them ten times slower). Another ``chunk`` (or the memory
    cap on large n) draws the same resamples, but BLAS may sum a block of another shape in
    another order: the means then agree to the last digit or two (about 1e-16), not bit for bit.

    ``counts`` (optional, nonnegative integers [n, p]) are more columns, returned after X's
    ([n_boot, q + p]), from the same resamples. While every sum w @ counts stays below 2^24
    (n * counts.max() < 2^24) they are held and multiplied in float32, which is exact there:
    every product and partial sum is an integer float32 represents, in any summation order. That
    halves the memory of the widest columns at large n (the decomposition's half-draw counts).
    """
    from threadpoolctl import threadpool_limits

    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    n, q = X.shape
    C = _exact_counts(counts, n)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    chunk = check_int(chunk, "chunk", minimum=1)
    rng = as_rng(seed)
    chunk = min(chunk, max(1, _CELLS // n))  # never a resamples x prompts block above _CELLS (large n)
    out = np.empty((n_boot, q + (0 if C is None else C.shape[1])))
    starts = range(0, n_boot, chunk)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc="prompt bootstrap", leave=False)
    W64 = np.empty((min(chunk, n_boot), n))
    f32 = C is not None and C.dtype == np.float32
    W32 = np.empty((W64.shape[0] if f32 else 0, n), dtype=np.float32)
    with threadpool_limits(1, user_api="blas"):
        for start in starts:
            b = min(chunk, n_boot - start)
            idx = rng.integers(0, n, size=(b, n))
            _count_rows(idx, W64[:b])  # the resamples' counts w (exact integers)
            del idx
            if f32:
                W32[:b] = W64[:b]
            out[start : start + b, :q] = W64[:b] @ X / n
            if C is not None:
                out[start : start + b, q:] = (W32[:b] if f32 else W64[:b]) @ C
                out[start : start + b, q:] /= n
    return out


def _exact_counts(counts, n: int) -> np.ndarray | None:
    """``counts`` as float32 when n * max < 2^24 (integer sums exact in float32), else float64."""
    if counts is None:
        return None
    C = np.asarray(counts)
    if C.ndim != 2 or C.shape[0] != n:
        raise ValueError(f"counts must be a 2-D array with one row per prompt ({n}), got shape {C.shape}")
    top = float(C.max()) if C.size else 0.0
    per = max(1, _CELLS // max(1, C.shape[1]))
    if C.size and (float(C.min()) < 0 or any(  # in blocks of rows: no full-size temporary
            not np.array_equal(C[i : i + per], np.floor(C[i : i + per])) for i in range(0, n, per))):
        raise ValueError("counts must be nonnegative integers")
    dtype = np.float32 if n * top < 2**24 else np.float64
    return C if C.dtype == dtype else C.astype(dtype)


# ============================================================================ the decomposition with intervals
@dataclasses.dataclass(frozen=True, repr=False)
class Estimate(Interval):
    """An :class:`~oraclegap._result.Interval` (the shared interval type) with the plain
    prompt interval beside it.

    ``method`` (also readable as ``interval``, its old name) names the construction:
    ``"percentile"`` (prompt-bootstrap percentiles of the estimate) or ``"bracket"`` (lower limit
    from the estimator biased downward, upper limit from the one biased upward).
    ``lo_prompt``/``hi_prompt``: the plain percentile interval of the point estimate
    (prompt-sampling uncertainty only, no allowance for within-prompt bias).
    """

    lo_prompt: float = math.nan
    hi_prompt: float = math.nan

    @property
    def interval(self) -> str:
        """The construction's name (the field was called ``interval`` before it was ``method``)."""
        return self.method

    def row(self) -> dict:
        """{value, lo, hi, interval, lo_prompt, hi_prompt}: the columns of the decomposition's frame."""
        return {"value": self.value, "lo": self.lo, "hi": self.hi, "interval": self.method,
                "lo_prompt": self.lo_prompt, "hi_prompt": self.hi_prompt}


_ORDER = (
    "best_single",
    "baseline",
    "o_exp",
    "o_repro",
    "o_repro_split_half",
    "o_repro_split_loo",
    "delta",
    "delta_split",
    "gap",
    "g_rec",
    "noise_share",
    "noise_share_split",
    "o_exp_independent",
    "frechet_lower",
    "frechet_upper",
)


@dataclasses.dataclass(frozen=True, repr=False)
class Decomposition(Result):
    """O_exp = O_repro + Delta and G = G_rec + Delta against a baseline, each with an interval.

    Keys of ``estimates`` (see :func:`decomposition`): best_single, baseline, o_exp, o_repro
    (plug-in), o_repro_split_half, o_repro_split_loo, delta, delta_split, gap (G), g_rec,
    noise_share (Delta / G), noise_share_split, o_exp_independent, frechet_lower, frechet_upper.
    """

    estimates: dict
    n_prompts: int
    n_policies: int
    k: int
    form: str
    baseline_kind: str
    best_policy: str
    split: str
    level: float
    n_boot: int
    seed: object
    assumptions: AssumptionChecks | None = None  # 001's gates, with ``checks=True``

    def __getitem__(self, name: str) -> Estimate:
        return self.estimates[name]

    def value(self, name: str) -> float:
        return self.estimates[name].value

    def flag(self, name: str) -> str:
        """'' or why the magnitude ``name`` is not backed by 001's checks (needs ``checks=True``)."""
        if name not in self.estimates:
            raise KeyError(f"no quantity {name!r}; quantities: {list(self.estimates)}")
        return "" if self.assumptions is None else self.assumptions.flag(name)

    def frame(self) -> pd.DataFrame:
        """One row per quantity: estimate, interval (lo, hi, kind) and the plain prompt interval;
        with 001's checks run, a ``flag`` column names the failed (or untested) check behind it."""
        df = pd.DataFrame(
            [{"quantity": q, **e.row()} for q, e in self.estimates.items()],
            columns=["quantity", "value", "lo", "hi", "interval", "lo_prompt", "hi_prompt"],
        )
        if self.assumptions is not None:
            df["flag"] = [self.assumptions.flag(q) for q in df["quantity"]]
        return df

    def to_dict(self) -> dict:
        """JSON-ready: the settings and {quantity: {value, lo, hi, interval, lo_prompt, hi_prompt}}."""
        return {
            "n_prompts": self.n_prompts,
            "n_policies": self.n_policies,
            "k": self.k,
            "form": self.form,
            "baseline": self.baseline_kind,
            "best_policy": self.best_policy,
            "split": self.split,
            "level": self.level,
            "n_boot": self.n_boot,
            "seed": self.seed if isinstance(self.seed, (int, type(None))) else str(self.seed),
            "estimates": {q: e.row() for q, e in self.estimates.items()},
            **({} if self.assumptions is None else {"assumptions": self.assumptions.to_dict()}),
        }


def _q(a: np.ndarray, qs) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if np.isnan(a).all():
        return np.full(len(qs), np.nan)
    return np.nanquantile(a, qs)


def _ratio(num, den):
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


_BEST_SPLITS = 8  # random draw splits behind the split-draw partner of the best single member


def decomposition(
    x,
    *,
    baseline=None,
    form: str | None = None,
    split: str = "loo",
    level: float = 0.95,
    n_boot: int = 2000,
    n_splits: int = 200,
    seed=0,
    progress: bool = False,
    checks: bool = False,
    n_perm: int = 200,
) -> Decomposition:
    """The single-draw decomposition of a pool with k >= 2 draws, with prompt-bootstrap intervals.

    Point estimates (plug-in, as 001 reports them): best_single = max_m mean_i c_im/k; O_exp =
    mean_{i,j} max_m R_imj (``form="seed-aligned"``, any dependence across members) or
    mean_i [1 - prod_m (1 - c_im/k)] (``"independent"``); O_repro = mean_i max_m c_im/k; Delta =
    O_exp - O_repro; against the baseline score S (``baseline``: see :func:`baseline_scores`;
    default the best single member) G = O_exp - S, G_rec = O_repro - S and noise share Delta / G.
    Split-draw O_repro (:func:`split_draw_repro`, both methods) and delta_split / noise_share_split
    computed with the ``split`` method; o_exp_independent (the FKG envelope) and the Frechet bounds
    mean_i max_m c_im/k <= single-draw oracle <= mean_i min(1, sum_m c_im/k).

    Intervals at ``level`` from ``n_boot`` prompt resamples (one set of resamples for every
    quantity, so they are joint). Percentile intervals for O_exp (unbiased within a prompt), a
    fixed baseline, the split estimates, o_exp_independent and frechet_upper. O_repro is
    bracketed (module docstring): lower limit the alpha/2 quantile of the split estimate
    (``split``), upper limit the 1 - alpha/2 quantile of the plug-in; since E[split] <= O_repro
    <= E[plug-in], the bracket covers the population value with probability >= level up to the
    normal approximation of each side. Delta, G_rec and the noise share take the matching sides
    (Delta falls as O_repro rises). The best single member is re-selected inside every resample;
    its bracket runs from a split-draw partner (the member chosen on half of every prompt's draws,
    scored on the other half, 8 random splits) to the plug-in max, which removes the selection
    bias that comes from within-prompt draw noise but not the winner's curse across members on
    the same prompts (for that, see :mod:`oraclegap.stats.certify`'s selection-valid intervals);
    G and the share inherit it. Shares are NaN in resamples where G <= 0.

    ``checks=True`` runs 001's assumption checks (:func:`assumption_checks`, ``n_perm``
    permutations, seed ``seed``) and attaches them as ``assumptions``: a magnitude whose check
    fails carries a flag (:meth:`Decomposition.flag`, the ``flag`` column of ``frame()``).
    """
    v, alignment, names, _ = _inputs(x, min_k=2)
    form = _form(form, alignment)
    alpha = check_alpha(1 - float(level), "1 - level")
    if split not in ("loo", "half"):
        raise ValueError(f"split must be 'loo' or 'half', got {split!r}")
    rng = as_rng(seed)
    n, M, k = v.shape
    r = v.mean(axis=2)
    kind, fixed = baseline_scores(baseline, r)
    half = split_draw_repro(v, method="half", n_splits=n_splits, seed=rng)
    loo = split_draw_repro(v, method="loo")
    cols = {
        "o_exp": _o_exp_prompt(v, form),
        "plug": r.max(axis=1),
        "half": half,
        "loo": loo,
        "indep": 1 - np.prod(1 - r, axis=1),
        "fup": np.minimum(1.0, r.sum(axis=1)),
    }
    if fixed is not None:
        cols["base"] = fixed
    keys = list(cols)
    # split-draw partner of the best single member: choose the member on half the draws of every
    # prompt, score it on the other half (both directions, _BEST_SPLITS random splits)
    S = _BEST_SPLITS
    maskA = rng.random((S, k)).argsort(axis=1) < k // 2
    # X = [cols..., r] and the successes on each half, H = [cA (S*M), cB (S*M)], filled in
    # blocks of prompts (memory O(X + H + block)). H holds integer counts, which boot_means keeps
    # in float32 while that is exact (at n = 1e6 it halves the 177-column table's memory); the
    # half-rates are H's means over the half sizes.
    q0 = len(keys) + M
    X = np.empty((n, q0))
    for j, c in enumerate(keys):
        X[:, j] = cols[c]
    X[:, len(keys):] = r
    H = _half_counts(v, maskA)
    point = np.concatenate([X.mean(axis=0), H.sum(axis=0, dtype=np.float64) / n])
    boot = boot_means(X, n_boot, rng, counts=H, progress=progress)
    del H
    half_sizes = np.repeat([k // 2, k - k // 2], S * M).astype(np.float64)
    point[q0:] /= half_sizes
    boot[:, q0:] /= half_sizes
    off = len(keys)

    def pick(src, name):
        return src[..., keys.index(name)]

    def stats(src):
        member = src[..., off : off + M]
        A = src[..., off + M : off + M + S * M].reshape(src.shape[:-1] + (S, M))
        B = src[..., off + M + S * M :].reshape(src.shape[:-1] + (S, M))
        best = member.max(axis=-1)
        best_lo = (0.5 * (_tie_mean(A, B, axis=-1) + _tie_mean(B, A, axis=-1))).mean(axis=-1)
        base = pick(src, "base") if fixed is not None else best
        base_lo = base if fixed is not None else best_lo
        oe, plug, sp = pick(src, "o_exp"), pick(src, "plug"), pick(src, split)
        gap = oe - base
        return {
            "best_single": best,
            "baseline": base,
            "o_exp": oe,
            "o_repro": plug,
            "o_repro_split_half": pick(src, "half"),
            "o_repro_split_loo": pick(src, "loo"),
            "delta": oe - plug,
            "delta_split": oe - sp,
            "gap": gap,
            "g_rec": plug - base,
            "noise_share": _ratio(oe - plug, gap),
            "noise_share_split": _ratio(oe - sp, gap),
            "o_exp_independent": pick(src, "indep"),
            "frechet_lower": plug,
            "frechet_upper": pick(src, "fup"),
            # the partners biased the other way, for the brackets
            "_best_lo": best_lo,
            "_base_lo": base_lo,
            "_o_repro_lo": sp,
            "_delta_hi": oe - sp,
            "_gap_hi": oe - base_lo,
            "_g_rec_lo": sp - base,
            "_g_rec_hi": plug - base_lo,
            "_share_lo": _ratio(oe - plug, oe - base_lo),
            "_share_hi": _ratio(oe - sp, gap),
        }

    pt, bs = stats(point), stats(boot)
    qs = (alpha / 2, 1 - alpha / 2)
    series = list(bs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (a share with G <= 0 throughout)
        Q = dict(zip(series, np.nanquantile(np.column_stack([bs[q] for q in series]), qs, axis=0).T, strict=True))
    bracket = {  # quantity: (series for the lower limit, series for the upper limit)
        "best_single": ("_best_lo", "best_single"),
        "baseline": ("_base_lo", "baseline"),
        "o_repro": ("_o_repro_lo", "o_repro"),
        "frechet_lower": ("_o_repro_lo", "frechet_lower"),
        "delta": ("delta", "_delta_hi"),
        "gap": ("gap", "_gap_hi"),
        "g_rec": ("_g_rec_lo", "_g_rec_hi"),
        "noise_share": ("_share_lo", "_share_hi"),
    }
    if fixed is not None:  # a fixed router's score has no selection inside it
        del bracket["baseline"], bracket["gap"]
    est = {}
    for q in _ORDER:
        plo, phi = Q[q]
        if q in bracket:
            a, b = bracket[q]
            lo, hi, kind_i = Q[a][0], Q[b][1], "bracket"
            if lo > hi:  # degenerate pools (one member, tiny n): the two sides can cross
                lo, hi = hi, lo
        else:
            lo, hi, kind_i = plo, phi, "percentile"
        if q == "noise_share" and fixed is None:
            # against the best single member 0 <= Delta <= G in the population (O_repro >= S),
            # so the bracket, whose upper side pairs the split-draw O_repro (biased down) with the
            # plug-in S (biased up) and can pass 1, is cut to [0, 1]: coverage is kept
            lo, hi = min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0)
        est[q] = Estimate(float(pt[q]), float(lo), float(hi), float(level), kind_i, float(plo), float(phi))
    best_policy = names[int(r.mean(axis=0).argmax())]
    checked = None
    if checks:
        checked = assumption_checks(x, baseline=baseline, form=form, n_perm=n_perm, seed=seed if not isinstance(seed, np.random.Generator) else rng)
    return Decomposition(est, n, M, k, form, kind, best_policy, split, float(level), int(n_boot),
                         seed if not isinstance(seed, np.random.Generator) else None, checked)


# ============================================================================ strata, sweeps
def _parts(v: np.ndarray, form: str, fixed: np.ndarray | None, choices: np.ndarray | None = None) -> dict:
    """Plug-in components of a (sub)pool: best single (re-selected), O_exp, O_repro, LOO, baseline."""
    r = v.mean(axis=2)
    best = float(r.mean(axis=0).max())
    if choices is not None:
        base = float(r[np.arange(r.shape[0]), choices].mean())
    elif fixed is not None:
        base = float(fixed.mean())
    else:
        base = best
    oe = float(_o_exp_prompt(v, form).mean())
    orp = float(r.max(axis=1).mean())
    return {"best_single": best, "baseline": base, "o_exp": oe, "o_repro": orp}


def _finish(row: dict) -> dict:
    row["delta"] = row["o_exp"] - row["o_repro"]
    row["gap"] = row["o_exp"] - row["baseline"]
    row["g_rec"] = row["o_repro"] - row["baseline"]
    row["noise_share"] = row["delta"] / row["gap"] if row["gap"] > 0 else float("nan")
    if "o_repro_split_loo" in row:
        row["delta_split"] = row["o_exp"] - row["o_repro_split_loo"]
        row["noise_share_split"] = row["delta_split"] / row["gap"] if row["gap"] > 0 else float("nan")
    return row


def support_strata(x, *, support: str = "rate", draw: int = 0, thin: int = 3, baseline=None, form: str | None = None) -> pd.DataFrame:
    """The decomposition within strata of prompt support (001, Cor. 2).

    Support of prompt i: ``support="rate"`` counts members with c_im > 0 (some draw succeeded:
    the plug-in of #{m : p_im > 0}); ``"draw"`` counts members whose draw ``draw`` succeeded
    (the single recorded benchmark draw; 001's released strata use draw 0). One row per support
    level present, then ``thin`` (support <= ``thin``) and ``dense`` (> ``thin``) and ``all``.
    Per stratum s: O_exp_s, O_repro_s (plug-in and LOO split), the baseline's score on the
    stratum (default: the best single member of the *whole* pool, fixed), Delta_s, G_s and the
    share Delta_s / G_s; ``frac`` is the stratum's share of prompts, so sum_s frac_s Delta_s = Delta.
    """
    v, alignment, _, _ = _inputs(x, min_k=2)
    form = _form(form, alignment)
    n, M, k = v.shape
    r = v.mean(axis=2)
    kind, fixed = baseline_scores(baseline, r)
    if fixed is None:
        fixed = r[:, int(r.mean(axis=0).argmax())]
    thin = check_int(thin, "thin", minimum=0)
    if support == "rate":
        s = (r > 0).sum(axis=1)
    elif support == "draw":
        j = check_int(draw, "draw", minimum=0, maximum=k - 1)
        s = v[:, :, j].sum(axis=1)
    else:
        raise ValueError(f"support must be 'rate' or 'draw', got {support!r}")
    oe, plug, loo = _o_exp_prompt(v, form), r.max(axis=1), split_draw_repro(v, method="loo")
    rows = []
    groups = [(str(int(level)), s == level) for level in np.unique(s)]
    groups += [(f"thin (<= {thin})", s <= thin), (f"dense (> {thin})", s > thin), ("all", np.ones(n, bool))]
    for name, sel in groups:
        if not sel.any():
            continue
        row = {
            "stratum": name,
            "n": int(sel.sum()),
            "frac": float(sel.mean()),
            "baseline": float(fixed[sel].mean()),
            "o_exp": float(oe[sel].mean()),
            "o_repro": float(plug[sel].mean()),
            "o_repro_split_loo": float(loo[sel].mean()),
        }
        rows.append(_finish(row))
    out = pd.DataFrame(rows)
    out.attrs.update(support=support, baseline=kind)
    return out


def _subset_draws(k: int, kk: int, n_subsets: int, rng, subsets: str) -> np.ndarray:
    if subsets == "first" or kk == k:
        return np.arange(kk)[None, :]
    if subsets != "random":
        raise ValueError(f"subsets must be 'random' or 'first', got {subsets!r}")
    return np.sort(rng.random((n_subsets, k)).argsort(axis=1)[:, :kk], axis=1)


def k_sweep(
    x,
    ks=None,
    *,
    subsets: str = "random",
    n_subsets: int = 50,
    seed=0,
    baseline=None,
    form: str | None = None,
) -> pd.DataFrame:
    """The decomposition on k' of the k draws (001's k-sweep): how the noise share grows with k'.

    For each k' in ``ks`` (default 1, 2, 5, 10, 20, k, those <= k) the plug-in terms are averaged
    over ``n_subsets`` random sets of k' draw positions (the same positions for every member, so
    seed alignment survives; ``subsets="first"`` uses the first k' draws, as 001's released table
    does). The share is computed from the averaged terms. At k' = 1 the plug-in O_repro equals the
    single-draw oracle, so Delta = 0: the floor is invisible to a single draw per cell and the
    plug-in O_repro falls towards the population value as k' grows, while the LOO split estimate
    (k' >= 2) rises towards it from below. A baseline of integer choices is rescored on each
    subset; per-prompt float scores stay fixed.
    """
    v, alignment, _, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    n, M, k = v.shape
    rng = as_rng(seed)
    r = v.mean(axis=2)
    choices = None
    kind, fixed = baseline_scores(baseline, r)
    if kind == "choices":
        choices, fixed = np.asarray(baseline), None
    if ks is None:
        ks = sorted({kk for kk in (1, 2, 5, 10, 20) if kk <= k} | {k})
    ks = [check_int(kk, "ks", minimum=1, maximum=k) for kk in np.atleast_1d(ks)]
    n_subsets = check_int(n_subsets, "n_subsets", minimum=1)
    rows = []
    for kk in ks:
        sets = _subset_draws(k, kk, n_subsets, rng, subsets)
        parts = [_parts(v[:, :, idx], form, fixed, choices) for idx in sets]
        row = {"k": kk, "n_subsets": len(sets)}
        row.update({key: float(np.mean([p[key] for p in parts])) for key in parts[0]})
        if kk >= 2:
            row["o_repro_split_loo"] = float(np.mean([split_draw_repro(v[:, :, idx], method="loo").mean() for idx in sets]))
        rows.append(_finish(row))
    out = pd.DataFrame(rows)
    out.attrs.update(subsets=subsets, baseline=kind)
    return out


def pool_size_sweep(x, sizes=None, *, n_subsets: int = 100, seed=0, form: str | None = None) -> pd.DataFrame:
    """The plug-in decomposition on random sub-pools of K' members (001's pool-size sweep).

    For each K' (default 2, 4, 8, M, those <= M) up to ``n_subsets`` distinct member subsets
    (all of them when there are fewer) are drawn; the baseline is the best single member *within*
    each subset. Reported: the terms averaged over subsets, ``noise_share`` (from the averaged
    terms) and ``noise_share_mean`` (the mean of the subsets' shares, as 001 reports it).
    """
    v, alignment, _, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    n, M, k = v.shape
    rng = as_rng(seed)
    if sizes is None:
        sizes = sorted({s for s in (2, 4, 8) if s <= M} | {M})
    sizes = [check_int(s, "sizes", minimum=1, maximum=M) for s in np.atleast_1d(sizes)]
    n_subsets = check_int(n_subsets, "n_subsets", minimum=1)
    rows = []
    for size in sizes:
        total = math.comb(M, size)
        if total <= n_subsets:
            from itertools import combinations

            sets = [np.array(c) for c in combinations(range(M), size)]
        else:
            seen, sets = set(), []
            while len(sets) < n_subsets:
                c = tuple(np.sort(rng.choice(M, size, replace=False)).tolist())
                if c not in seen:
                    seen.add(c)
                    sets.append(np.array(c))
        parts = [_finish(_parts(v[:, idx, :], form, None)) for idx in sets]
        row = {"size": size, "n_subsets": len(sets)}
        row.update({key: float(np.mean([p[key] for p in parts])) for key in ("best_single", "o_exp", "o_repro")})
        row["baseline"] = row["best_single"]
        row = _finish(row)
        row["noise_share_mean"] = float(np.nanmean([p["noise_share"] for p in parts]))
        rows.append(row)
    return pd.DataFrame(rows)


# ============================================================================ best-of-K check
def _pass_at(h: int, K: int) -> np.ndarray:
    """Unbiased pass@K from c successes in h draws, for c = 0..h: 1 - C(h - c, K) / C(h, K)."""
    c = np.arange(h + 1)
    return 1.0 - comb(h - c, K) / comb(h, K)


@dataclasses.dataclass(frozen=True, repr=False)
class BestOfK(Result):
    """001's falsifier: best-of-K on the committed maximiser versus the single-draw oracle."""

    K: int
    best_of_k_split: Estimate
    best_of_k_insample: float
    best_of_all_k_insample: float
    o_exp_independent: Estimate
    o_exp: float
    difference: Estimate  # best_of_k_split - o_exp_independent

    @property
    def passes(self) -> bool:
        """Not falsified: the interval of best-of-K minus O_exp^indep does not lie below zero."""
        return bool(self.difference.hi >= 0)

    def frame(self) -> pd.DataFrame:
        rows = [
            {"quantity": f"best-of-{self.K}, committed on half the draws", **self.best_of_k_split.row()},
            {"quantity": f"best-of-{self.K}, committed and scored in-sample", "value": self.best_of_k_insample},
            {"quantity": "best-of-k on all k draws, in-sample (001's released figure)", "value": self.best_of_all_k_insample},
            {"quantity": "single-draw oracle, independence form", **self.o_exp_independent.row()},
            {"quantity": "single-draw oracle (decomposition form)", "value": self.o_exp},
            {"quantity": "difference (split best-of-K - independence oracle)", **self.difference.row()},
        ]
        return pd.DataFrame(rows)


def best_of_k_check(x, K: int | None = None, *, level: float = 0.95, n_boot: int = 2000, n_splits: int = 200, seed=0, form=None) -> BestOfK:
    """Best-of-K on the per-prompt maximiser at the oracle's budget K = M, against O_exp (001, Thm 2b).

    Under independent draws mean_i [1 - (1 - max_m p_im)^K] >= mean_i [1 - prod_m (1 - p_im)]
    when K = M: sampling the committed member K times lifts through the single-commit cap. Data
    version: the maximiser is committed on a random half A of the draws (ties split evenly) and
    its best-of-K is estimated on the other half B by the unbiased pass@K formula
    1 - C(h_B - c_B, K) / C(h_B, K) (K is capped at the half size), both directions, averaged
    over ``n_splits`` splits -- biased *down* by the commitment's regret, so a pass is
    conservative. Beside it: the in-sample version (commit and score on all k draws) and the
    in-sample best-of-all-k, mean_i 1[max_m c_im > 0], which is the figure 001 releases.
    ``difference`` = split best-of-K - O_exp^indep with a prompt-bootstrap percentile interval.
    """
    v, alignment, _, _ = _inputs(x, min_k=2)
    form = _form(form, alignment)
    n, M, k = v.shape
    K = M if K is None else check_int(K, "K", minimum=1)
    alpha = check_alpha(1 - float(level), "1 - level")
    rng = as_rng(seed)
    hA, hB = k // 2, k - k // 2
    K_eff = min(K, hA)
    c = v.sum(axis=2, dtype=np.int64)
    pa, pb = _pass_at(hA, K_eff), _pass_at(hB, K_eff)
    split = np.zeros(n)
    n_splits = check_int(n_splits, "n_splits", minimum=1)
    per = max(1, _CELLS // (M * 64))  # prompts per block: memory O(block), results unchanged (per prompt)
    words = _pack_draws(v) if k <= _BITS else None
    for start in range(0, n_splits, 64):
        b = min(64, n_splits - start)
        maskA = rng.random((b, k)).argsort(axis=1) < hA
        for i0 in range(0, n, per):
            i1 = min(n, i0 + per)
            if words is not None:  # compiled: the same values, one word per cell
                val = np.empty((i1 - i0, b))
                _split_select(words[i0:i1], c[i0:i1], _mask_words(maskA), pa, pb, val)
            else:  # successes on half A (sums of 0/1 terms: exact integers in any summation order)
                cA = np.rint(np.einsum("imj,sj->ims", v[i0:i1].astype(np.float64), maskA.astype(np.float64))).astype(np.int64)
                cB = c[i0:i1, :, None] - cA
                val = 0.5 * (_tie_mean(cA / hA, pb[cB], axis=1) + _tie_mean(cB / hB, pa[cA], axis=1))
            split[i0:i1] += val.sum(axis=1)
    split /= n_splits
    Kin = min(K, k)
    insample = _tie_mean(c, _pass_at(k, Kin)[c], axis=1)
    indep = 1 - np.prod(1 - c / k, axis=1)
    X = np.column_stack([split, indep, split - indep])
    bs = boot_means(X, n_boot, rng)
    qs = (alpha / 2, 1 - alpha / 2)

    def est(j):
        lo, hi = _q(bs[:, j], qs)
        return Estimate(float(X[:, j].mean()), float(lo), float(hi), float(level), "percentile", float(lo), float(hi))

    return BestOfK(
        K_eff,
        est(0),
        float(insample.mean()),
        float((c.max(axis=1) > 0).mean()),
        est(1),
        float(_o_exp_prompt(v, form).mean()),
        est(2),
    )


# ============================================================================ verifier-free aggregation
def plurality_vote(codes, correct, valid=None) -> np.ndarray:
    """Expected correctness of a plurality vote over the last axis, ties broken uniformly at random.

    ``codes[..., r]``: integer answer labels of r responses (equal labels = equal answers);
    ``correct[..., r]``: each response's verdict; ``valid``: responses that gave an answer
    (invalid ones abstain). The plurality answers are those with the largest count among valid
    responses; the vote's expected correctness is the mean verdict over the responses that carry
    a plurality answer (which equals the average over the tied answers of each answer's mean
    verdict, since every tied answer has the same count). No valid response: 0.
    """
    codes = np.asarray(codes)
    correct = np.asarray(correct, dtype=np.float64)
    if codes.shape != correct.shape:
        raise ValueError(f"codes and correct must have the same shape, got {codes.shape} and {correct.shape}")
    valid = np.ones(codes.shape, bool) if valid is None else np.asarray(valid, bool)
    if valid.shape != codes.shape:
        raise ValueError(f"valid must have the shape of codes {codes.shape}, got {valid.shape}")
    eq = (codes[..., :, None] == codes[..., None, :]) & valid[..., :, None] & valid[..., None, :]
    cnt = eq.sum(axis=-1)  # [..., r]; 0 for invalid responses
    top = cnt.max(axis=-1, keepdims=True)
    plural = (cnt == top) & (top > 0)
    n_pl = plural.sum(axis=-1)
    return np.where(n_pl > 0, (plural * correct).sum(axis=-1) / np.maximum(n_pl, 1), 0.0)


def answer_codes(answers) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes for string answers (equal strings, equal codes) and the mask of non-empty answers."""
    a = np.asarray(answers).astype(str)
    codes = pd.factorize(a.ravel())[0].reshape(a.shape)
    return codes, a != ""


@dataclasses.dataclass(frozen=True, repr=False)
class AggregationSplit(Result):
    """O_agg and the split Delta = Delta_know + Delta_guess (means over prompts)."""

    o_agg: float
    o_exp: float
    o_repro: float
    delta_know: float
    delta_guess: float

    @property
    def delta(self) -> float:
        return self.o_exp - self.o_repro

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([{**dataclasses.asdict(self), "delta": self.delta}])


def aggregation_ceiling(x, *, form: str | None = None) -> AggregationSplit:
    """The verifier-free aggregation ceiling O_agg and the split of Delta by it (001, A6 / Cor. 3).

    O_agg_i = mean_j vote_ij, where vote_ij is the expected correctness of a plurality vote
    (:func:`plurality_vote`) over the M responses with draw index j, one per member -- the
    oracle's own budget, aggregated without a verifier (a lower bound on the best verifier-free
    aggregator, which is the sup over aggregation rules). Per prompt, the part of the floor that
    a vote reaches is Delta_know_i = clip(O_agg_i - O_repro_i, 0, Delta_i) and the rest,
    Delta_guess_i = Delta_i - Delta_know_i, needs a verifier (only lucky draws reach it); both are
    averaged over prompts, so Delta_know + Delta_guess = Delta (plug-in O_repro). Needs a Pool
    with ``answers``.
    """
    if not isinstance(x, Pool) or x.answers is None:
        raise ValueError("aggregation_ceiling needs a Pool with per-response answers (Pool.answers is None)")
    v, alignment, _, answers = _inputs(x, min_k=1)
    form = _form(form, alignment)
    codes, valid = answer_codes(answers)
    # vote over members (axis 1) at each draw index j
    agg = plurality_vote(np.moveaxis(codes, 1, 2), np.moveaxis(v, 1, 2), np.moveaxis(valid, 1, 2)).mean(axis=1)
    oe, orp = _o_exp_prompt(v, form), v.mean(axis=2).max(axis=1)
    d = oe - orp
    know = np.clip(agg - orp, 0.0, np.maximum(d, 0.0))
    return AggregationSplit(float(agg.mean()), float(oe.mean()), float(orp.mean()), float(know.mean()), float((d - know).mean()))


# ============================================================================ baseline dependence
def baseline_table(x, baselines: Mapping, *, form=None, level: float = 0.95, n_boot: int = 2000, seed=0) -> pd.DataFrame:
    """The decomposition against several baselines (name -> None/'best', choices or scores).

    One row per baseline: its score S, O_exp, O_repro, Delta (identical in every row: the floor
    does not depend on the router), G = O_exp - S, G_rec and the noise share Delta / G with its
    bracket interval. Same seed, same resamples for every row.
    """
    if not isinstance(baselines, Mapping) or not baselines:
        raise ValueError("baselines must be a non-empty mapping name -> baseline")
    rows = []
    for name, b in baselines.items():
        d = decomposition(x, baseline=b, form=form, level=level, n_boot=n_boot, seed=seed)
        row = {"name": str(name), "kind": d.baseline_kind, "score": d.value("baseline")}
        for q in ("o_exp", "o_repro", "delta", "gap", "g_rec", "noise_share"):
            row[q] = d.value(q)
        row["gap_lo"], row["gap_hi"] = d["gap"].lo, d["gap"].hi
        row["noise_share_lo"], row["noise_share_hi"] = d["noise_share"].lo, d["noise_share"].hi
        rows.append(row)
    return pd.DataFrame(rows)


# ============================================================================ 001's assumption checks
# 001 reports a magnitude only behind two gates: the draws of a prompt-member cell behave as
# i.i.d. Bernoulli(p_im) (A1: the sampling formulas -- pass@K, binomial brackets, the
# winner's-curse radius -- need it), and, for the closed-form O_exp = 1 - prod_m (1 - p_im) and
# the best-of-K comparison against it, the members' draws on a prompt are independent (A2).
# Each check below returns a :class:`Check`; :func:`assumption_checks` gathers them and maps
# every failed check to the magnitudes that lean on it (``flags``), so a magnitude whose check
# fails is reported as such instead of silently.

#: The magnitudes that lean on each assumption (keys of :class:`Decomposition` and of the
#: other results of this module).
NEEDS = {
    "iid": ("o_repro", "delta", "g_rec", "noise_share", "delta_split", "noise_share_split", "best_of_k", "winners_curse"),
    "independence": ("o_exp_independent", "best_of_k"),
}
#: Which assumption each check tests.
CHECK_TESTS = {"runs": "iid", "dispersion": "iid", "known_p_tv": "independence", "coupling": "independence"}


@dataclasses.dataclass(frozen=True)
class Check:
    """One assumption check: its statistic, the reference it is judged against, and the verdict.

    ``passed`` is None when the check cannot be run on this pool (``note`` says why).
    ``value`` is the statistic; ``reference`` what it is compared with (a band, a null mean or a
    threshold, named in ``note``); ``p_value`` where the check is a test.
    """

    name: str
    assumption: str
    value: float
    reference: float
    p_value: float
    passed: bool | None
    n: int
    note: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _arranged(x) -> bool:
    """True for a pool whose draw order was made up from counts (:meth:`Pool.from_counts`)."""
    return isinstance(x, Pool) and bool(x.meta.get("arranged_from_counts"))


_ARRANGED = "the draw order was arranged at random from counts, so within-cell order carries no information"


def _runs_null(k: int, z: float) -> np.ndarray:
    """P(|Z_runs| > z) under exchangeability for n1 = 0..k ones among k draws (exact law of runs).

    With n1 ones and n0 = k - n1 zeros in random order the number of runs R has
    P(R = 2s) = 2 C(n1-1, s-1) C(n0-1, s-1) / C(k, n1) and
    P(R = 2s+1) = [C(n1-1, s) C(n0-1, s-1) + C(n1-1, s-1) C(n0-1, s)] / C(k, n1); Z is the usual
    normal score (R - mu) / sigma. Cells with n1 in {0, k} have one run and are never out of band.
    """
    n1 = np.arange(k + 1)[:, None].astype(float)
    n0 = k - n1
    r = np.arange(1, k + 1)[None, :].astype(float)
    s_even, s_odd = r / 2, (r - 1) / 2
    even = 2 * comb(n1 - 1, s_even - 1) * comb(n0 - 1, s_even - 1)
    odd = comb(n1 - 1, s_odd) * comb(n0 - 1, s_odd - 1) + comb(n1 - 1, s_odd - 1) * comb(n0 - 1, s_odd)
    prob = np.where(r % 2 == 0, even, odd) / comb(k, n1)
    mu = 1 + 2 * n1 * n0 / k
    var = 2 * n1 * n0 * (2 * n1 * n0 - k) / (k * k * max(k - 1, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        zz = np.where(var > 0, (r - mu) / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
    out = np.where(np.abs(zz) > z, prob, 0.0).sum(axis=1)
    out[[0, k]] = 0.0
    return out


def runs_check(x, *, level: float = 0.95, alpha: float = 0.01) -> Check:
    """Wald-Wolfowitz runs test in every prompt-member cell with 0 < c_im < k (001's i.i.d. gate).

    Per cell the runs of the k draws in draw order get the normal score (R - mu) / sigma; a cell
    is *in band* when |Z| <= z_{(1+level)/2}. ``value`` is the fraction of cells in band (001's
    ``frac_in_band``, on the same cells: its ``n_cells``). Because the runs law is discrete the
    in-band probability of an exchangeable cell is not exactly ``level``: ``reference`` is its
    exact mean over the cells (from the exact law of runs given c_im), and the test compares the
    count of out-of-band cells with that Poisson-binomial expectation (normal approximation,
    upper tail: too many out-of-band cells). ``passed``: p > ``alpha``. Untested (``passed``
    None) on a pool arranged from counts, whose draw order is random by construction. Cells are treated as
    independent, which they are under the hypothesis tested.
    """
    v, _, _, _ = _inputs(x, min_k=2)
    n, M, k = v.shape
    level = 1 - check_alpha(1 - float(level), "1 - level")
    alpha = check_alpha(alpha, "alpha")
    if _arranged(x):
        nan = float("nan")
        return Check("runs", "iid", nan, nan, nan, None, 0, f"not testable: {_ARRANGED}")
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    cells = v.reshape(n * M, k)
    c = cells.sum(axis=1)
    keep = (c > 0) & (c < k)
    N = int(keep.sum())
    if N == 0:
        return Check("runs", "iid", float("nan"), float("nan"), float("nan"), None, 0,
                     "no cell has both successes and failures: the runs test has nothing to test")
    x_ = cells[keep].astype(np.int8)
    runs = 1 + (np.diff(x_, axis=1) != 0).sum(axis=1)
    n1 = c[keep].astype(float)
    n0 = k - n1
    mu = 1 + 2 * n1 * n0 / k
    var = 2 * n1 * n0 * (2 * n1 * n0 - k) / (k * k * max(k - 1, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        zz = np.where(var > 0, (runs - mu) / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
    inb = np.abs(zz) <= z
    p_out = _runs_null(k, z)[c[keep]]
    out_obs, out_exp, sd = float((~inb).sum()), float(p_out.sum()), float(np.sqrt((p_out * (1 - p_out)).sum()))
    p = float(norm.sf((out_obs - out_exp - 0.5) / sd)) if sd > 0 else float(out_obs <= out_exp)
    return Check("runs", "iid", float(inb.mean()), float(1 - p_out.mean()), p, bool(p > alpha), N,
                 f"fraction of {N} cells with |Z_runs| <= {z:.2f}; reference: its exact expectation under i.i.d. draws")


def _poisson_binomial(p: np.ndarray) -> np.ndarray:
    """Law of the number of successes of independent Bernoulli(p[i, m]) over m: [n, M + 1]."""
    n, M = p.shape
    out = np.zeros((n, M + 1))
    out[:, 0] = 1.0
    for m in range(M):  # M convolutions (members, not draws)
        q = p[:, m : m + 1]
        nxt = out * (1 - q)
        nxt[:, 1:] += out[:, :-1] * q
        out = nxt
    return out


def _draw_stats(v: np.ndarray) -> np.ndarray:
    """[..., 3] statistics of verdicts [..., n, M, k]: dispersion index, union rate, known-p TV.

    * dispersion: sum_m sum_j (T_mj - mean_j T_mj)^2 / (k sum_{i,m} q_im (1 - q_im)), with
      T_mj = sum_i R_imj the successes of member m at draw position j and q = c/k; its mean is 1
      when the draws of every cell are exchangeable (positions are interchangeable), above 1 when
      some draw positions succeed more than others across prompts;
    * union: mean_{i,j} max_m R_imj (the seed-aligned single-draw oracle);
    * TV: total variation between the pooled law of S_ij = sum_m R_imj (members right at draw j)
      and the mixture over prompts of the Poisson-binomial law that independent members with the
      cells' rates q_im give.
    """
    n, M, k = v.shape[-3:]
    q = v.sum(axis=-1, dtype=np.float64) / k  # sums in float64 without a float copy of v
    T = v.sum(axis=-3, dtype=np.float64)  # [..., M, k]
    ss = ((T - T.mean(axis=-1, keepdims=True)) ** 2).sum(axis=(-2, -1))
    den = k * (q * (1 - q)).sum(axis=(-2, -1))
    disp = np.where(den > 0, ss / np.where(den > 0, den, 1.0), np.nan)
    union = v.any(axis=-2).mean(axis=(-2, -1))
    S = v.sum(axis=-2)  # [..., n, k]
    lead = S.shape[:-2]
    Sf = S.reshape((-1, n * k))
    obs = np.stack([np.bincount(row, minlength=M + 1) for row in Sf]) / (n * k)  # loop over permutations only
    pb = np.stack([_poisson_binomial(qq).mean(axis=0) for qq in q.reshape((-1, n, M))])
    tv = 0.5 * np.abs(obs - pb).sum(axis=-1)
    return np.stack([np.asarray(disp).reshape(-1), np.asarray(union).reshape(-1), tv], axis=-1).reshape(lead + (3,))


# ---------------------------------------------------------------------------- within-cell permutations
# The permutation null of 001's checks reorders the k draws of every cell at random. A uniformly
# random reordering of a cell with c successes puts them on a uniformly random c-subset of the k
# positions, whatever their order before, so the null needs only the counts c_im and one random
# subset per cell (none for c = 0 or c = k, whose every order is the same). The subsets come from
# a counter-based stream: prompt i of permutation b (of n prompts) draws from the SplitMix64
# stream b n + i under one key (:mod:`oraclegap.stats._streams`), so every permutation is the
# same on any number of threads and in any block of permutations, and no [B, n, M, k] array of
# uniforms is drawn or stored (at 1e6 x 10 x 16 that array was 1.3 GB per permutation).

@njit(cache=True, inline="always")
def _random_subset(state, s, k, mark, chosen):
    """Floyd's algorithm: a uniformly random s-subset of the positions 0..k-1 written to
    chosen[:s] and marked in mark (which must be all False before; the caller clears it), and
    the next state. For j = k - s .. k - 1 it adds a uniform t in [0, j], or j when t is taken."""
    for r in range(s):
        j = k - s + r
        state, t = _int_below_exact(state, j + 1)
        if mark[t]:
            t = j
        mark[t] = True
        chosen[r] = t
    return state


@njit(cache=True, nogil=True)
def _permuted_verdicts(c, k, key, start, n_perm):  # pragma: no cover - compiled
    """bool [n_perm, n, M, k]: permutations start .. start + n_perm - 1 of the cells with counts
    c [n, M], as :func:`_permuted_counts` summarises them: cell (i, m) of permutation b has its
    c_im successes on a uniformly random subset of the k positions (:func:`_random_subset` picks
    min(c, k - c) positions: the successes, or the failures). For tests and small pools."""
    n, M = c.shape
    out = np.zeros((n_perm, n, M, k), np.bool_)
    mark = np.zeros(k, np.bool_)
    chosen = np.empty(k, np.int64)
    for b in range(n_perm):
        for i in range(n):
            state = _stream_start(key, (start + b) * n + i)
            for m in range(M):
                cim = c[i, m]
                if cim == k:
                    out[b, i, m, :] = True
                elif cim > 0:
                    s = min(cim, k - cim)
                    state = _random_subset(state, s, k, mark, chosen)
                    for j in range(k):
                        out[b, i, m, j] = mark[j] == (s == cim)
                    for r in range(s):
                        mark[chosen[r]] = False
    return out


@njit(cache=True, nogil=True, parallel=True)
def _permuted_counts(c, k, key, start, n_perm, chunk):  # pragma: no cover - compiled
    """Integer summaries of permutations start .. start + n_perm - 1 of the cells with counts
    c [n, M] (the arrangements :func:`_permuted_verdicts` gives): per permutation the
    draw-position totals T [B, M, k], the number of (prompt, draw) pairs with some member right
    [B] and the counts of prompt-draws with s = 0..M members right [B, M + 1]. Prompts are split
    into chunks summed in integers, so the result is the same for any thread count."""
    n, M = c.shape
    n_chunks = (n + chunk - 1) // chunk
    T = np.zeros((n_perm, n_chunks, M, k), np.int64)
    U = np.zeros((n_perm, n_chunks), np.int64)
    H = np.zeros((n_perm, n_chunks, M + 1), np.int64)
    for q in prange(n_chunks * n_perm):
        b, ch = q // n_chunks, q % n_chunks
        S = np.empty(k, np.int64)
        mark = np.zeros(k, np.bool_)
        chosen = np.empty(k, np.int64)
        for i in range(ch * chunk, min(n, (ch + 1) * chunk)):
            S[:] = 0
            state = _stream_start(key, (start + b) * n + i)
            for m in range(M):
                cim = c[i, m]
                if cim == 0:
                    continue
                if cim == k:
                    for j in range(k):
                        T[b, ch, m, j] += 1
                        S[j] += 1
                    continue
                s = min(cim, k - cim)
                state = _random_subset(state, s, k, mark, chosen)
                if s == cim:  # the chosen positions are the successes
                    for r in range(s):
                        T[b, ch, m, chosen[r]] += 1
                        S[chosen[r]] += 1
                else:  # the chosen positions are the failures
                    for j in range(k):
                        if not mark[j]:
                            T[b, ch, m, j] += 1
                            S[j] += 1
                for r in range(s):
                    mark[chosen[r]] = False
            for j in range(k):
                H[b, ch, S[j]] += 1
                if S[j] > 0:
                    U[b, ch] += 1
    return T.sum(axis=1), U.sum(axis=1), H.sum(axis=1)


def _permuted_stats(c: np.ndarray, k: int, key, start: int, n_perm: int, pb: np.ndarray,
                    den: np.ndarray) -> np.ndarray:
    """:func:`_draw_stats` of permutations start .. start + n_perm - 1 of the cells with counts
    c [n, M] (``_draw_stats(_permuted_verdicts(c, k, key, start, n_perm))``), computed from
    integer counts: the cell rates q, the denominator ``den`` and the Poisson-binomial law
    ``pb`` do not change under a within-cell reordering and are computed once. The kernel runs
    on blocks of permutations that bound its per-chunk integer summaries (a permutation's values
    do not depend on its block)."""
    n, M = c.shape
    chunk = max(1, n // 64)
    n_chunks = (n + chunk - 1) // chunk
    block = max(1, int(4e6 // (n_chunks * M * k)))
    key = np.uint64(key)
    out = []
    for b0 in range(start, start + n_perm, block):
        Ti, Ui, Hi = _permuted_counts(c, k, key, b0, min(block, start + n_perm - b0), chunk)
        T = Ti.astype(np.float64)  # [B, M, k], as vf.sum(axis=-3) gives it
        ss = ((T - T.mean(axis=-1, keepdims=True)) ** 2).sum(axis=(-2, -1))
        disp = np.where(den > 0, ss / np.where(den > 0, den, 1.0), np.nan)
        union = Ui.astype(np.float64) / (n * k)
        tv = 0.5 * np.abs(Hi / (n * k) - pb).sum(axis=-1)
        out.append(np.stack([disp, union, tv], axis=-1))
    return np.concatenate(out)


def permutation_checks(x, *, n_perm: int = 200, alpha: float = 0.01, max_tv: float = 0.06, seed=0) -> tuple[Check, Check, Check]:
    """Three checks against one within-cell permutation null: dispersion, coupling and known-p TV.

    The null permutes the k draws of every prompt-member cell independently: it keeps every
    cell's count c_im and makes the draws of a cell exchangeable and the members of a prompt
    independent (given the counts) -- the joint hypothesis of A1 and A2. ``n_perm`` permutations
    give the null law of each statistic of :func:`_draw_stats`. A permutation puts each cell's
    c_im successes on a uniformly random subset of its k positions (what a uniformly random
    reordering does), drawn in a compiled kernel from a counter-based stream keyed by one
    integer from ``seed`` (:func:`_permuted_counts`): the same permutations on any number of
    threads, without storing them.

    * ``dispersion`` (A1): the dispersion index of the draw-position totals; upper-tail
      permutation p (draw positions that are better than others across prompts);
    * ``coupling`` (A2): the seed-aligned union rate mean_{i,j} max_m R_imj against its
      permutation law; two-sided p. Positive association between members at a shared seed lowers
      it, which is what makes the independence form an upper envelope (FKG);
    * ``known_p_tv`` (A2): 001's known-p total-variation gate: the TV between the law of the
      number of members right at a draw and the Poisson-binomial law of independent members with
      the observed rates; 001 passes it when TV <= ``max_tv`` (0.06). ``reference`` is its
      permutation-null mean (the TV that independent draws with these rates show at this n and
      k) and ``p_value`` its upper-tail permutation p; ``passed`` needs both TV <= ``max_tv``
      and p > ``alpha``.

    A check passes when its p-value exceeds ``alpha``; ``n_perm`` must be large enough for a
    permutation p-value to reach ``alpha`` (n_perm >= 1/alpha - 1), else a check could not fail.

    The coupling and TV checks need seed-aligned draws (draw j of every member shares a seed):
    on other pools they are returned with ``passed=None``, and only the Frechet bracket of O_exp
    holds without assumptions. On a pool arranged from counts (:meth:`Pool.from_counts`) the
    draw order is itself a random permutation, so the dispersion check is returned untested too.
    """
    v, alignment, _, _ = _inputs(x, min_k=2)
    n, M, k = v.shape
    n_perm = check_int(n_perm, "n_perm", minimum=1)
    alpha = check_alpha(alpha, "alpha")
    if 1 / (n_perm + 1) > alpha:
        raise ValueError(f"n_perm={n_perm} permutations cannot give a p-value <= alpha={alpha:g}; "
                         f"use n_perm >= {math.ceil(1 / alpha) - 1}")
    max_tv = float(max_tv)
    if not 0 < max_tv <= 1:
        raise ValueError(f"max_tv must be in (0, 1], got {max_tv}")
    rng = as_rng(seed)
    obs = _draw_stats(v)
    c = np.ascontiguousarray(v.sum(axis=-1, dtype=np.int64))
    q = (c / k)[None]  # [1, n, M]: the same in every permutation
    den = k * (q * (1 - q)).sum(axis=(-2, -1))
    pb = _poisson_binomial(q[0]).mean(axis=0)
    key = rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True)
    null_stats = _permuted_stats(c, k, key, 0, n_perm, pb, den)
    B = len(null_stats)

    def upper(j):
        return float((1 + np.sum(null_stats[:, j] >= obs[j] - 1e-12)) / (B + 1))

    disp_p = upper(0) if np.isfinite(obs[0]) else float("nan")
    dispersion = Check("dispersion", "iid", float(obs[0]), 1.0, disp_p,
                       None if not np.isfinite(obs[0]) else bool(disp_p > alpha), n * M,
                       f"dispersion index of draw-position totals (null mean 1); upper-tail p from {B} within-cell permutations")
    if _arranged(x):
        dispersion = dataclasses.replace(dispersion, passed=None, note=f"not testable: {_ARRANGED}")
    aligned = alignment in ("seed-aligned", "unknown")
    if not aligned:
        why = f"draws are {alignment!r}, not seed-aligned: cross-member coupling is not observable; only the Frechet bracket holds"
        nan = float("nan")
        return (dispersion, Check("coupling", "independence", nan, nan, nan, None, n, why),
                Check("known_p_tv", "independence", nan, nan, nan, None, n, why))
    mu = float(null_stats[:, 1].mean())
    two = float((1 + np.sum(np.abs(null_stats[:, 1] - mu) >= abs(obs[1] - mu) - 1e-12)) / (B + 1))
    coupling = Check("coupling", "independence", float(obs[1]), mu, two, bool(two > alpha), n,
                     f"seed-aligned union rate against its mean under {B} within-cell permutations (two-sided p)")
    tv_p = upper(2)
    tv = Check("known_p_tv", "independence", float(obs[2]), float(null_stats[:, 2].mean()), tv_p,
               bool(obs[2] <= max_tv and tv_p > alpha), n * k,
               f"TV of members-right-per-draw against independent members at the observed rates; 001 passes TV <= {max_tv:g}; "
               f"reference: mean TV under {B} within-cell permutations")
    return dispersion, coupling, tv


@dataclasses.dataclass(frozen=True, repr=False)
class WinnersCurse(Result):
    """001's one-sided, dependence-free correction: the winner's-curse radius R_k of O_repro.

    R_k = sqrt(ln M / (2k)) bounds the upward bias of the plug-in max: for each prompt
    E[max_m c_im/k] - max_m p_im <= E[max_m (c_im/k - p_im)] <= sqrt(ln M / (2k)) (each c_im/k -
    p_im is sub-Gaussian with variance proxy 1/(4k); the maximal inequality needs no
    independence across members). The conservative terms: O_repro_upper = O_repro + R_k,
    O_exp_lower = O_exp - R_k, Delta_lower = mean_i max(0, (O_exp_i - R_k) - (O_repro_i + R_k))
    and its share of the gap to the baseline (001's ``conservative_one_sided``).
    """

    R_k: float
    o_exp: float
    o_repro: float
    o_repro_upper: float
    o_exp_lower: float
    delta: float
    delta_lower: float
    gap: float
    share_lower: float

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([dataclasses.asdict(self)])


def winners_curse_radius(M: int, k: int) -> float:
    """sqrt(ln M / (2k)): the bound on E[max_m p_hat_m] - max_m p_m for M members and k draws."""
    M = check_int(M, "M", minimum=1)
    k = check_int(k, "k", minimum=1)
    return float(math.sqrt(math.log(M) / (2 * k)))


def winners_curse(x, *, baseline=None, form: str | None = None) -> WinnersCurse:
    """The winner's-curse radius of O_repro and 001's conservative one-sided decomposition."""
    v, alignment, _, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    n, M, k = v.shape
    r = v.mean(axis=2)
    kind, fixed = baseline_scores(baseline, r)
    base = float(r.mean(axis=0).max()) if fixed is None else float(fixed.mean())
    Rk = winners_curse_radius(M, k)
    oe, orp = _o_exp_prompt(v, form), r.max(axis=1)
    dl = float(np.maximum(0.0, (oe - Rk) - (orp + Rk)).mean())
    gap = float(oe.mean() - base)
    return WinnersCurse(Rk, float(oe.mean()), float(orp.mean()), float(orp.mean() + Rk), float(oe.mean() - Rk),
                        float(oe.mean() - orp.mean()), dl, gap, dl / gap if gap > 0 else float("nan"))


@dataclasses.dataclass(frozen=True, repr=False)
class AssumptionChecks(Result):
    """001's gates on a pool, the magnitudes each failed check flags, and the Frechet bracket.

    ``checks``: the :class:`Check` results (runs, dispersion, coupling, known_p_tv).
    ``flags``: quantity -> names of the failed checks it leans on (only quantities with a
    failure appear). ``untested``: quantity -> checks that could not be run (e.g. independence on
    draws that are not seed-aligned). ``frechet``: the assumption-free bracket of the single-draw
    oracle and of Delta, mean_i max_m p_im <= O_exp <= mean_i min(1, sum_m p_im) (reported
    whatever the alignment; where draws are not seed-aligned it is the only bracket without an
    independence assumption). ``winners_curse``: :class:`WinnersCurse`.
    """

    checks: tuple
    flags: dict
    untested: dict
    alignment: str
    frechet: dict
    winners_curse: WinnersCurse

    @property
    def all_pass(self) -> bool:
        return all(c.passed is not False for c in self.checks)

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check {name!r}; checks: {[c.name for c in self.checks]}")

    def flag(self, quantity: str) -> str:
        """'' when every check behind ``quantity`` passed, else 'check failed: ...' / 'untested: ...'."""
        if quantity in self.flags:
            return "check failed: " + ", ".join(self.flags[quantity])
        if quantity in self.untested:
            return "untested: " + ", ".join(self.untested[quantity])
        return ""

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([c.to_dict() for c in self.checks])

    def to_dict(self) -> dict:
        return {"checks": [c.to_dict() for c in self.checks], "all_pass": self.all_pass, "flags": dict(self.flags),
                "untested": dict(self.untested), "alignment": self.alignment, "frechet": dict(self.frechet),
                "winners_curse": dataclasses.asdict(self.winners_curse)}


def assumption_checks(
    x, *, baseline=None, form: str | None = None, n_perm: int = 200, alpha: float = 0.01, max_tv: float = 0.06, seed=0
) -> AssumptionChecks:
    """Run 001's assumption checks on a pool and flag the magnitudes that lean on a failed one.

    Checks: :func:`runs_check` and the dispersion index (A1, i.i.d. draws within a cell) and
    the coupling permutation test and the known-p TV gate (A2, independence across members) of
    :func:`permutation_checks`. Rule: every quantity in :data:`NEEDS` of a failed assumption is
    flagged (``flags``), and one whose check could not be run is listed in ``untested``. When the
    pool's O_exp itself uses the independence form (``form="independent"``: draws not
    seed-aligned) O_exp, Delta, the gap and the share lean on A2 as well.
    """
    v, alignment, _, _ = _inputs(x, min_k=2)
    form = _form(form, alignment)
    runs = runs_check(x, alpha=alpha)
    disp, coup, tv = permutation_checks(x, n_perm=n_perm, alpha=alpha, max_tv=max_tv, seed=seed)
    checks = (runs, disp, coup, tv)
    needs = {a: set(q) for a, q in NEEDS.items()}
    if form == "independent":
        needs["independence"] |= {"o_exp", "delta", "gap", "noise_share", "delta_split", "noise_share_split"}
    flags: dict[str, list[str]] = {}
    untested: dict[str, list[str]] = {}
    for c in checks:
        target = flags if c.passed is False else untested if c.passed is None else None
        if target is None:
            continue
        for q in sorted(needs[c.assumption]):
            target.setdefault(q, []).append(c.name)
    r = v.mean(axis=2)
    orp = float(r.max(axis=1).mean())
    fup = float(np.minimum(1.0, r.sum(axis=1)).mean())
    frechet = {"o_exp_lower": orp, "o_exp_upper": fup, "delta_lower": 0.0, "delta_upper": fup - orp,
               "o_exp_independent": float((1 - np.prod(1 - r, axis=1)).mean())}
    wc = winners_curse(v, baseline=baseline, form=form)
    return AssumptionChecks(checks, {q: tuple(c) for q, c in flags.items()}, {q: tuple(c) for q, c in untested.items()},
                            alignment, frechet, wc)


def reliable_fractions(x, taus=(0.5, 0.9)) -> pd.DataFrame:
    """001's reliable fractions: the share of prompts whose best member's rate reaches tau.

    reliable(tau) = mean_i 1[max_m c_im/k >= tau] (a prompt some member solves reliably); with
    the threshold rule of :func:`oraclegap.stats.coverage.need` (c >= ceil(tau k - 1e-9)), so
    tau k on a whole number counts. One row per tau: tau, reliable_frac, n_reliable.
    """
    v, _, _, _ = _inputs(x, min_k=1)
    n, M, k = v.shape
    taus = np.atleast_1d(np.asarray(taus, dtype=float))
    if taus.size == 0 or np.isnan(taus).any() or (taus <= 0).any() or (taus > 1).any():
        raise ValueError(f"taus must be thresholds in (0, 1], got {taus.tolist()}")
    cmax = v.sum(axis=2).max(axis=1)
    rows = [{"tau": float(t), "reliable_frac": float((cmax >= need(float(t), k)).mean()),
             "n_reliable": int((cmax >= need(float(t), k)).sum())} for t in taus]
    return pd.DataFrame(rows)
