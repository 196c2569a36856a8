"""Paper 001's plug-in decomposition on parts of a pool: strata of prompt support, sweeps over
subsets of draws (k') and of members (pool size), and the reliable fractions.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd

from ..._validate import as_rng, check_int
from ...pool import need
from .inputs import _form, _inputs, _o_exp_prompt, baseline_scores
from .split_draw import split_draw_repro


def _parts(
    v: np.ndarray, form: str, fixed: np.ndarray | None, choices: np.ndarray | None = None
) -> dict:
    """Plug-in components of a (sub)pool: best single (re-selected), O_exp, O_repro, LOO,
    baseline."""
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
        row["noise_share_split"] = (
            row["delta_split"] / row["gap"] if row["gap"] > 0 else float("nan")
        )
    return row


def support_strata(
    x,
    *,
    support: str = "rate",
    draw: int = 0,
    thin: int = 3,
    baseline=None,
    form: str | None = None,
) -> pd.DataFrame:
    """The decomposition within strata of prompt support (001, Cor. 2).

    Support of prompt i: ``support="rate"`` counts members with c_im > 0 (some draw succeeded:
    the plug-in of #{m : p_im > 0}); ``"draw"`` counts members whose draw ``draw`` succeeded
    (the single recorded benchmark draw; 001's released strata use draw 0). One row per support
    level present, then ``thin`` (support <= ``thin``) and ``dense`` (> ``thin``) and ``all``.
    Per stratum s: O_exp_s, O_repro_s (plug-in and LOO split), the baseline's score on the
    stratum (default: the best single member of the *whole* pool, fixed), Delta_s, G_s and the
    share Delta_s / G_s; ``frac`` is the stratum's share of prompts, so sum_s frac_s Delta_s =
    Delta.
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
    groups += [
        (f"thin (<= {thin})", s <= thin),
        (f"dense (> {thin})", s > thin),
        ("all", np.ones(n, bool)),
    ]
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


#: The default k' of the k-sweeps (with k itself) and sub-pool sizes of the pool-size sweeps
#: (with M itself), those that do not exceed k or M.
_K_GRID = (1, 2, 5, 10, 20)
_SIZE_GRID = (2, 4, 8)


def _sweep_grid(values, top: int, default: tuple, name: str) -> list[int]:
    """The grid of a sweep: ``values`` checked to be integers in 1..top; by default the values of
    ``default`` that do not exceed ``top``, and ``top``, in increasing order."""
    if values is None:
        values = sorted({v for v in default if v <= top} | {top})
    return [check_int(v, name, minimum=1, maximum=top) for v in np.atleast_1d(values)]


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
    ks = _sweep_grid(ks, k, _K_GRID, "ks")
    n_subsets = check_int(n_subsets, "n_subsets", minimum=1)
    rows = []
    for kk in ks:
        sets = _subset_draws(k, kk, n_subsets, rng, subsets)
        parts = [_parts(v[:, :, idx], form, fixed, choices) for idx in sets]
        row = {"k": kk, "n_subsets": len(sets)}
        row.update({key: float(np.mean([p[key] for p in parts])) for key in parts[0]})
        if kk >= 2:
            row["o_repro_split_loo"] = float(
                np.mean([split_draw_repro(v[:, :, idx], method="loo").mean() for idx in sets])
            )
        rows.append(_finish(row))
    out = pd.DataFrame(rows)
    out.attrs.update(subsets=subsets, baseline=kind)
    return out


def _member_subsets(M: int, size: int, n_subsets: int, rng) -> list[tuple]:
    """Subsets of ``size`` of the M members: all of them (in lexicographic order) when there are
    at most ``n_subsets``, else ``n_subsets`` distinct ones drawn uniformly from ``rng`` (each a
    sorted ``rng.choice`` without replacement, repeats redrawn), in the order drawn."""
    if math.comb(M, size) <= n_subsets:
        return list(combinations(range(M), size))
    seen: set = set()
    subsets: list[tuple] = []
    while len(subsets) < n_subsets:
        c = tuple(np.sort(rng.choice(M, size, replace=False)).tolist())
        if c not in seen:
            seen.add(c)
            subsets.append(c)
    return subsets


def pool_size_sweep(
    x, sizes=None, *, n_subsets: int = 100, seed=0, form: str | None = None
) -> pd.DataFrame:
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
    sizes = _sweep_grid(sizes, M, _SIZE_GRID, "sizes")
    n_subsets = check_int(n_subsets, "n_subsets", minimum=1)
    rows = []
    for size in sizes:
        sets = [np.array(c) for c in _member_subsets(M, size, n_subsets, rng)]
        parts = [_finish(_parts(v[:, idx, :], form, None)) for idx in sets]
        row = {"size": size, "n_subsets": len(sets)}
        row.update(
            {
                key: float(np.mean([p[key] for p in parts]))
                for key in ("best_single", "o_exp", "o_repro")
            }
        )
        row["baseline"] = row["best_single"]
        row = _finish(row)
        row["noise_share_mean"] = float(np.nanmean([p["noise_share"] for p in parts]))
        rows.append(row)
    return pd.DataFrame(rows)


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
    rows = [
        {
            "tau": float(t),
            "reliable_frac": float((cmax >= need(float(t), k)).mean()),
            "n_reliable": int((cmax >= need(float(t), k)).sum()),
        }
        for t in taus
    ]
    return pd.DataFrame(rows)
