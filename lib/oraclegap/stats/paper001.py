"""Paper 001 (arXiv 2607.03436, T.-R. Chen) on its released tensors, with 001's own definitions.

The decomposition itself is :mod:`oraclegap.stats.noise`; this module adds the analyses 001
reports around it, each defined as 001 defines it, so the book can set the released figure
beside ours:

* :func:`family_correlation` -- the Pearson correlation of per-prompt rates p_hat_im between
  members across prompts, its within- and cross-lineage means and the *effective pool size*
  (participation ratio of the correlation matrix's eigenvalues, (sum l)^2 / sum l^2: 1 for
  identical members, M for uncorrelated ones);
* :func:`pool_composition` -- 001's Fig. 9 by composition: the decomposition on named sub-pools
  (the full pool, one member per lineage -- the strongest of each -- and any others, e.g. the
  Qwen size sweep), the baseline being the best single member *within* each sub-pool;
* :func:`lineage_jackknife` -- Fig. 9 by model family: the decomposition with one lineage
  dropped at a time;
* :func:`pool_size_shares` -- Fig. 9 by pool size: the mean over sub-pools of K members of the
  gap share Delta / G and the oracle share Delta / O_exp (001's ``K_sweep``), with the spread
  over sub-pools that sets the tolerance of a comparison with a figure from random sub-pools;
* :func:`k_sweep_band` -- 001's k-sweep on the first k' draws, with the band of the same
  terms over random sets of k' draw positions around it;
* :func:`share_against` -- the noise share against a router of known accuracy (001's
  learned-router share: the floor Delta is the pool's, the gap is the router's);
* :func:`released_identities` -- the identities 001's released summary must satisfy among its
  own terms (for GSM8K, whose tensor is not released, the only check available).

Everything takes a Pool or verdicts [n, M, k] and plain labels; nothing here reads files.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from itertools import combinations

import numpy as np
import pandas as pd

from .._result import Result
from .._validate import as_rng, check_int
from . import noise
from .noise.inputs import _form, _inputs, _o_exp_prompt
from .noise.sweeps import (
    _K_GRID,
    _SIZE_GRID,
    _finish,
    _member_subsets,
    _parts,
    _subset_draws,
    _sweep_grid,
)

__all__ = [
    "FamilyCorrelation",
    "family_correlation",
    "strongest_per_lineage",
    "pool_composition",
    "lineage_jackknife",
    "pool_size_shares",
    "random_subset_means",
    "share_against",
    "k_sweep_band",
    "released_identities",
]


def _lineages(lineages, names: list[str]) -> np.ndarray:
    """Lineage labels aligned to the pool's members: a sequence (one per member) or a mapping name -> lineage."""
    if isinstance(lineages, Mapping):
        missing = [m for m in names if m not in lineages]
        if missing:
            raise ValueError(f"lineages has no entry for members {missing[:5]}")
        lab = [str(lineages[m]) for m in names]
    else:
        lab = [str(x) for x in lineages]
        if len(lab) != len(names):
            raise ValueError(f"lineages must give one label per member ({len(names)}), got {len(lab)}")
    return np.asarray(lab, dtype=object)


@dataclasses.dataclass(frozen=True, repr=False)
class FamilyCorrelation(Result):
    """Correlation of per-prompt rates between members, by lineage (001's family_correlation)."""

    matrix: pd.DataFrame
    lineages: tuple
    within_lineage_mean: float
    cross_lineage_mean: float
    effective_pool_size: float

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"n_models": len(self.lineages), "within_lineage_mean": self.within_lineage_mean,
                              "cross_lineage_mean": self.cross_lineage_mean,
                              "effective_pool_size": self.effective_pool_size}])


def family_correlation(x, lineages) -> FamilyCorrelation:
    """Pearson correlation across prompts of the members' rates c_im/k, clustered by lineage.

    ``within_lineage_mean``: mean correlation over pairs of distinct members of one lineage;
    ``cross_lineage_mean``: over pairs from different lineages; ``effective_pool_size``: the
    participation ratio (sum_j l_j)^2 / sum_j l_j^2 of the eigenvalues l of the correlation
    matrix. A member whose rate is constant over prompts has no correlation (NaN; excluded from
    the means, and the participation ratio is then computed on the others).
    """
    v, _, names, _ = _inputs(x, min_k=1)
    lab = _lineages(lineages, names)
    r = v.mean(axis=2)
    if r.shape[0] < 3:
        raise ValueError(f"family_correlation needs at least 3 prompts, got {r.shape[0]}")
    ok = r.std(axis=0) > 0
    C = np.full((len(names), len(names)), np.nan)
    if ok.sum() >= 1:
        C[np.ix_(ok, ok)] = np.corrcoef(r[:, ok].T) if ok.sum() > 1 else 1.0
    same = lab[:, None] == lab[None, :]
    off = ~np.eye(len(names), dtype=bool)
    within = C[same & off]
    cross = C[~same]
    ev = np.linalg.eigvalsh(C[np.ix_(ok, ok)]) if ok.any() else np.array([np.nan])

    def mean(a):
        a = a[np.isfinite(a)]
        return float(a.mean()) if a.size else float("nan")

    return FamilyCorrelation(pd.DataFrame(C, index=names, columns=names), tuple(lab.tolist()), mean(within), mean(cross),
                             float(ev.sum() ** 2 / (ev**2).sum()))


def strongest_per_lineage(x, lineages) -> list[str]:
    """001's one-per-lineage pool: the member with the highest mean rate in each lineage, in pool order."""
    v, _, names, _ = _inputs(x, min_k=1)
    lab = _lineages(lineages, names)
    mean = v.mean(axis=(0, 2))
    keep = set()
    for lin in dict.fromkeys(lab.tolist()):
        idx = np.flatnonzero(lab == lin)
        keep.add(int(idx[np.argmax(mean[idx])]))
    return [names[i] for i in sorted(keep)]


def _terms(v: np.ndarray, form: str) -> dict:
    """Plug-in terms of a sub-pool against its own best single member."""
    row = _finish(_parts(v, form, None))
    row["oracle_share"] = row["delta"] / row["o_exp"] if row["o_exp"] > 0 else float("nan")
    return row


def pool_composition(x, lineages, pools: Mapping | None = None, *, n_boot: int = 0, seed=0, form: str | None = None) -> pd.DataFrame:
    """001's Fig. 9 by composition: the decomposition on named sub-pools of members.

    ``pools``: name -> member names (default: ``full`` and ``one_per_lineage``, the strongest
    member of each lineage). The baseline of each sub-pool is its own best single member (001:
    "router baseline = best-single-within-pool for comparability"). One row per sub-pool: M,
    the number of lineages, best_single, o_exp, o_repro, delta, gap, noise_share; with
    ``n_boot`` > 0 also the 95% bracket of the share and its plain prompt-percentile interval
    (:func:`oraclegap.stats.noise.decomposition`).
    """
    v, alignment, names, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    lab = _lineages(lineages, names)
    if pools is None:
        pools = {"full": list(names), "one_per_lineage": strongest_per_lineage(v, lab.tolist())}
    if not isinstance(pools, Mapping) or not pools:
        raise ValueError("pools must be a non-empty mapping name -> member names")
    n_boot = check_int(n_boot, "n_boot", minimum=0)
    rows = []
    for pname, members in pools.items():
        members = list(members)
        unknown = [m for m in members if m not in names]
        if unknown or not members:
            raise ValueError(f"pools[{pname!r}] names unknown members {unknown[:5]}" if unknown else f"pools[{pname!r}] is empty")
        idx = [names.index(m) for m in members]
        sub = v[:, idx, :]
        row = {"pool": str(pname), "M": len(idx), "n_lineages": len(set(lab[idx].tolist())), **_terms(sub, form)}
        if n_boot:
            d = noise.decomposition(sub if alignment == "unknown" else _as_pool(sub, alignment), form=form, n_boot=n_boot, seed=seed)
            e = d["noise_share"]
            row.update(noise_share_lo=e.lo, noise_share_hi=e.hi, noise_share_lo_prompt=e.lo_prompt, noise_share_hi_prompt=e.hi_prompt)
        rows.append(row)
    return pd.DataFrame(rows)


def _as_pool(v: np.ndarray, alignment: str):
    from ..pool import Pool

    return Pool.from_array(v, alignment=alignment)


def lineage_jackknife(x, lineages, *, form: str | None = None) -> pd.DataFrame:
    """001's Fig. 9 by model family: drop one lineage at a time (baseline: best single of the rest).

    One row per lineage (in order of first appearance): dropped, n_left, best_single, o_exp,
    o_repro, delta, gap, noise_share, oracle_share; a lineage that holds the whole pool is
    skipped (nothing would be left).
    """
    v, alignment, names, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    lab = _lineages(lineages, names)
    rows = []
    for lin in dict.fromkeys(lab.tolist()):
        keep = np.flatnonzero(lab != lin)
        if keep.size == 0:
            continue
        rows.append({"dropped": lin, "n_left": int(keep.size), **_terms(v[:, keep, :], form)})
    return pd.DataFrame(rows)


def pool_size_shares(x, sizes=None, *, n_subsets: int = 400, seed=0, form: str | None = None) -> pd.DataFrame:
    """001's Fig. 9 by pool size: mean gap share and oracle share over sub-pools of K members.

    For each K (default 2, 4, 8, M, those <= M) every K-subset of members when there are at most
    ``n_subsets`` of them, else ``n_subsets`` distinct random ones; each sub-pool is scored
    against its own best single member. Per K: ``gap_share_mean`` = mean over sub-pools of
    Delta / G (001's ``gap_share_mean``; sub-pools with G <= 0 are left out),
    ``oracle_share_mean`` = mean of Delta / O_exp (001's ``oracle_share_S_mean``), the number of
    sub-pools, whether they are all of them (``exhaustive``), and the standard deviation of the
    gap share over sub-pools (``gap_share_sd``), from which the Monte Carlo error of a mean
    over m random sub-pools is sd / sqrt(m).
    """
    v, alignment, _, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    M = v.shape[1]
    rng = as_rng(seed)
    sizes = _sweep_grid(sizes, M, _SIZE_GRID, "sizes")
    n_subsets = check_int(n_subsets, "n_subsets", minimum=1)
    rows = []
    for size in sizes:
        exhaustive = math.comb(M, size) <= n_subsets
        subsets = _member_subsets(M, size, n_subsets, rng)
        sets = [list(c) for c in (subsets if exhaustive else sorted(subsets))]
        parts = [_terms(v[:, s, :], form) for s in sets]
        gs = np.array([p["noise_share"] for p in parts], dtype=float)
        os_ = np.array([p["oracle_share"] for p in parts], dtype=float)
        rows.append({"K": size, "n_subsets": len(sets), "exhaustive": exhaustive,
                     "gap_share_mean": float(np.nanmean(gs)) if np.isfinite(gs).any() else float("nan"),
                     "gap_share_sd": float(np.nanstd(gs, ddof=1)) if np.isfinite(gs).sum() > 1 else float("nan"),
                     "oracle_share_mean": float(np.nanmean(os_)) if np.isfinite(os_).any() else float("nan")})
    return pd.DataFrame(rows)


def random_subset_means(x, size: int, n_subsets: int, *, n_reps: int = 2000, level: float = 0.95, seed=0,
                        form: str | None = None) -> dict:
    """How far a mean over random sub-pools can sit from the mean over all of them (001's Fig. 9).

    The gap share Delta / G of every sub-pool of ``size`` members (each against its own best
    single member) is computed once; ``exhaustive`` is their mean, the book's figure. A release
    that averages ``n_subsets`` distinct sub-pools drawn at random reports one draw of a random
    mean: ``lo`` / ``hi`` are the central ``level`` range of that mean over ``n_reps`` draws
    (sub-pools without replacement), ``n_all`` the number of sub-pools.
    """
    v, alignment, _, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    M = v.shape[1]
    size = check_int(size, "size", minimum=1, maximum=M)
    n_all = math.comb(M, size)
    if n_all > 5000:
        raise ValueError(f"size {size} of {M} members gives {n_all} sub-pools; at most 5000 are enumerated")
    n_subsets = check_int(n_subsets, "n_subsets", minimum=1, maximum=n_all)
    n_reps = check_int(n_reps, "n_reps", minimum=1)
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    shares = np.array([_terms(v[:, list(c), :], form)["noise_share"] for c in combinations(range(M), size)])
    shares = shares[np.isfinite(shares)]
    rng = as_rng(seed)
    means = np.array([rng.choice(shares, min(n_subsets, shares.size), replace=False).mean() for _ in range(n_reps)])
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return {"size": size, "n_all": n_all, "n_subsets": n_subsets, "exhaustive": float(shares.mean()),
            "lo": float(lo), "hi": float(hi)}


def k_sweep_band(x, ks=None, *, n_subsets: int = 50, band: float = 0.9, seed=0, form: str | None = None) -> pd.DataFrame:
    """001's k-sweep (the first k' draws) with the band over random sets of k' draws around it.

    For each k' (default 1, 2, 5, 10, 20, k, those <= k): the plug-in terms on the first k'
    draws against the best single member of those draws (``first_*``: 001's released
    ``k_sweep``), and over ``n_subsets`` random sets of k' draw positions (the same positions
    for every member, so seed alignment survives) the mean and the central ``band`` quantiles
    of each subset's noise share and O_repro (``random_*``). At k' = k every set is the first.
    """
    v, alignment, _, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    k = v.shape[2]
    rng = as_rng(seed)
    ks = _sweep_grid(ks, k, _K_GRID, "ks")
    n_subsets = check_int(n_subsets, "n_subsets", minimum=1)
    band = float(band)
    if not 0 < band < 1:
        raise ValueError(f"band must be in (0, 1), got {band}")
    qs = ((1 - band) / 2, (1 + band) / 2)
    rows = []
    for kk in ks:
        first = _terms(v[:, :, :kk], form)
        sets = _subset_draws(k, kk, n_subsets, rng, "random")
        parts = [_terms(v[:, :, idx], form) for idx in sets]
        share = np.array([p["noise_share"] for p in parts], dtype=float)
        orp = np.array([p["o_repro"] for p in parts], dtype=float)
        fin = share[np.isfinite(share)]
        row = {"k": kk, "first_baseline": first["baseline"], "first_o_exp": first["o_exp"], "first_o_repro": first["o_repro"],
               "first_noise_share": first["noise_share"], "n_subsets": len(sets),
               "random_noise_share": float(fin.mean()) if fin.size else float("nan"),
               "random_noise_share_lo": float(np.quantile(fin, qs[0])) if fin.size else float("nan"),
               "random_noise_share_hi": float(np.quantile(fin, qs[1])) if fin.size else float("nan"),
               "random_o_repro": float(orp.mean()), "random_o_repro_lo": float(np.quantile(orp, qs[0])),
               "random_o_repro_hi": float(np.quantile(orp, qs[1]))}
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update(band=band)
    return out


def share_against(x, score: float, *, form: str | None = None) -> dict:
    """The decomposition against a router whose accuracy is ``score`` (001's learned-router share).

    Delta = O_exp - O_repro is the pool's (plug-in terms, as 001 reports them); the router only
    sets the gap G = O_exp - score, so the share is Delta / G: returns score, o_exp, o_repro,
    delta, gap, g_rec and noise_share.
    """
    v, alignment, _, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    score = float(score)
    if not 0 <= score <= 1:
        raise ValueError(f"score must be a router accuracy in [0, 1], got {score}")
    oe = float(_o_exp_prompt(v, form).mean())
    orp = float(v.mean(axis=2).max(axis=1).mean())
    gap = oe - score
    return {"score": score, "o_exp": oe, "o_repro": orp, "delta": oe - orp, "gap": gap, "g_rec": orp - score,
            "noise_share": (oe - orp) / gap if gap > 0 else float("nan")}


def released_identities(summary: pd.DataFrame, bench: str, *, M: int = 11, k: int = 30) -> pd.DataFrame:
    """The identities 001's released summary of one bench must satisfy among its own terms.

    ``summary``: the long table bench, section, quantity, value (``data/paper/
    001_released_summary.csv``). Each row: the identity, the released value, the value rebuilt
    from the other released terms with 001's definitions, and their difference. Checked:
    noise = O_exp - O_repro, G = O_exp - router, recoverable = O_repro - router, share = noise / G,
    the winner's-curse radius R_k = sqrt(ln M / (2k)), O_repro_upper = O_repro + R_k,
    O_exp_lower = O_exp - R_k, the conservative share = Delta_lower / G and the strata's
    frac-weighted noise = noise. (The verifier-free split Delta_know / Delta_guess is defined per
    prompt with clipping, so it has no identity among the released means.)
    """
    if not {"bench", "section", "quantity", "value"} <= set(summary.columns):
        raise ValueError("summary must have columns bench, section, quantity, value")
    s = summary[summary["bench"] == bench]
    if s.empty:
        raise ValueError(f"no released summary for bench {bench!r}; benches: {sorted(set(summary['bench']))}")

    def val(section, quantity):
        hit = s[(s["section"] == section) & (s["quantity"] == quantity)]
        if hit.empty:
            raise KeyError(f"{bench}: no released {section}.{quantity}")
        return float(hit["value"].iloc[0])

    oe, orp, rt = val("decomposition_point", "O_exp_mean"), val("decomposition_point", "O_repro_mean"), val("decomposition_point", "router_mean")
    noise_, G = val("decomposition_point", "noise"), val("decomposition_point", "G_single")
    Rk = val("conservative_one_sided", "R_k")
    thin, dense = "stratified.thin(<=3)", "stratified.dense(>3)"
    rows = [
        ("noise = O_exp - O_repro", noise_, oe - orp),
        ("G = O_exp - router", G, oe - rt),
        ("recoverable = O_repro - router", val("decomposition_point", "recoverable"), orp - rt),
        ("noise share = noise / G", val("decomposition_point", "noise_share"), noise_ / G),
        ("R_k = sqrt(ln M / 2k)", Rk, noise.winners_curse_radius(M, k)),
        ("O_repro_upper = O_repro + R_k", val("conservative_one_sided", "O_repro_upper_mean"), orp + Rk),
        ("O_exp_lower = O_exp - R_k", val("conservative_one_sided", "O_exp_lower_mean"), oe - Rk),
        ("conservative share = Delta_lower / G", val("conservative_one_sided", "noise_recoverable_share_lower"),
         val("conservative_one_sided", "Delta_lower_mean") / G),
        ("strata: sum frac * noise = noise", noise_, val(thin, "frac") * val(thin, "noise") + val(dense, "frac") * val(dense, "noise")),
    ]
    out = pd.DataFrame(rows, columns=["identity", "released", "rebuilt"])
    out["difference"] = out["released"] - out["rebuilt"]
    out.insert(0, "bench", bench)
    return out

