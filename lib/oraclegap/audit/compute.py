"""The audit's computation: one builder per section, each returning a :class:`Section` (its
JSON-ready numbers beside the library result objects they came from), and :func:`run_audit`,
which runs them with the seeds of :func:`~oraclegap.audit.settings.section_seeds` (those after
coverage side by side on threads, the same numbers for any thread count) and ends with the
verdict (:func:`oraclegap.audit.verdict.verdict`).

Sections: the pool summary (:func:`pool_section`), coverage (:func:`coverage_section`), the nulls
(:func:`nulls_section`), power and the planners (:func:`power_section`), the certificates
(:func:`certificates_section`), single-draw noise (:func:`noise_section`) and the quick held-out
router (:func:`router_section`, :func:`quick_router`). :func:`summary` puts one audit in one row;
:func:`draws_sweep` audits the first k draws for several k.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from .._result import Result
from .._validate import as_rng, check_int
from ..pool import Pool, check_pool
from ..stats import certify, noise, nulls, studies
from ..stats.coverage import coverage, need, pass1_oracle_gap, routing_account
from ..stats.multiplicity import holm as _holm  # NaN entries stay NaN and are not counted
from ..stats.nulls.quality import member_quality
from ..stats.split_gap import split_draw_gap, split_groups
from . import display
from .planners import certificate_prompts, effect_centres, split_certificate_prompts, useful_effect
from .settings import (
    ALIGN_MAX_PROMPTS,
    DEFAULT_TAUS,
    FORMAT_NAME,
    FORMAT_VERSION,
    K1_PLAN,
    LUCK_SHARE,
    PLAN_K_REACH,
    PLAN_N_REACH,
    POWER_DECISION_ALPHA,
    ROUTER_MIN_PROMPTS,
    AuditSettings,
    _current_power,
    _jsonable,
    _num,
    _records,
    audit_settings,
    check_auditable,
    plan_grid,
    power_state,
    section_seeds,
)
from .verdict import Verdict, verdict

__all__ = ["Section", "CoverageSection", "pool_section", "coverage_section", "nulls_section",
           "null_parts", "merge_null_parts", "power_section",
           "certificates_section", "noise_section", "router_section", "quick_router", "AuditResult", "run_audit",
           "summary", "draws_sweep", "warm_kernels"]


# ============================================================================ section results
@dataclasses.dataclass(frozen=True)
class Section:
    """One computed section of an audit: ``name`` (its key in ``audit.json``), ``numbers`` (what
    ``audit.json`` holds under that key) and ``results`` (the library result objects behind them,
    by name, as :attr:`AuditResult.results` holds them)."""

    name: str
    numbers: dict
    results: dict


@dataclasses.dataclass(frozen=True)
class CoverageSection(Section):
    """The coverage section, with the thresholds every later section reads: ``keys`` (the keys of
    ``coverage.taus``), ``tau_of`` (key -> threshold) and ``primary_key`` (the primary threshold's)."""

    keys: tuple = ()
    tau_of: dict = dataclasses.field(default_factory=dict)
    primary_key: str = ""

    def levels(self, k: int) -> tuple[list, list]:
        """(levels, keys) of the certificates and the router: the single outcome at k = 1
        (level None, key ``outcome``), else every audited threshold."""
        if k == 1:
            return [None], ["outcome"]
        return [self.tau_of[key] for key in self.keys], list(self.keys)


# ============================================================================ pool summary
def pool_section(pool: Pool) -> Section:
    """Shape, alignment, degenerate prompts, member rates, the metadata present."""
    return Section("pool", _pool_summary(pool), {})


def _pool_summary(pool: Pool) -> dict:
    n, M, k = pool.shape
    rates = pool.rates()
    member = rates.mean(axis=0)
    deg = nulls.degenerate_prompts(pool)
    pt, pol = pool.prompts, pool.policies
    text = pt["text"]
    has_text = bool(text.notna().any() and text.dropna().astype(str).str.strip().ne("").any())
    dataset_levels = int(pt["dataset"].dropna().nunique())
    extra_prompt = [c for c in pt.columns if c not in ("id", "text", "dataset", "split") and pt[c].notna().any()]
    extra_policy = [c for c in pol.columns if c != "name" and pol[c].notna().any()]
    v = pool.verdicts
    identical = bool((v == v[:, :1, :]).all())
    return {
        "n_prompts": n, "n_policies": M, "k": k, "alignment": pool.alignment,
        "policies": pool.policy_names,
        "members": [{"policy": nm, "mean_rate": float(r)} for nm, r in zip(pool.policy_names, member, strict=True)],
        "best_member": pool.policy_names[int(member.argmax())],
        "degenerate": deg,
        "identical_members": identical,
        "metadata": {
            "text": has_text,
            "embeddings": None if pool.embeddings is None else int(pool.embeddings.shape[1]),
            "answers": pool.answers is not None,
            "cost": pool.cost is not None,
            "dataset_levels": dataset_levels,
            "splits": pool.splits,
            "prompt_columns": extra_prompt,
            "policy_columns": extra_policy,
        },
        "meta": _jsonable({key: pool.meta[key] for key in ("dataset", "provenance", "license", "source") if key in pool.meta}),
    }


# ============================================================================ coverage
def coverage_section(pool: Pool, s: AuditSettings) -> CoverageSection:
    """Oracle, best member, mixture, D, L and L/D at each threshold, the pass@1 gap and (k > 1) the
    coverage curve over every threshold the k draws can tell apart."""
    k = pool.k
    cov = coverage(pool, s.taus)
    cdict = cov.to_dict()
    keys = list(cdict)
    tau_of = dict(zip(keys, s.taus, strict=True))
    pkey = next(key for key in keys if abs(tau_of[key] - s.primary_tau) < 1e-12)
    p1 = pass1_oracle_gap(pool)
    num = {
        "taus": {key: {"tau": tau_of[key], **row} for key, row in cdict.items()},
        "members": _records(cov.members_frame()),
        "pass1": {"oracle": p1.oracle, "best": p1.best, "best_member": p1.best_member, "gap": p1.gap},
        "primary_key": pkey,
    }
    if k > 1:
        grid = np.arange(1, k + 1) / k if k <= 60 else np.linspace(1 / k, 1.0, 60)
        curve = coverage(pool, grid)
        num["curve"] = {"tau": grid, "oracle": curve.oracle, "best": curve.best, "mixture": curve.mixture,
                        "D": curve.D}
    return CoverageSection("coverage", num, {"coverage": cov, "pass1": p1}, tuple(keys), tau_of, pkey)


# ============================================================================ nulls
_K1_NULLS = "No nulls that need k > 1 apply; see the certificates."


def need_groups(keys, tau_of: dict, k: int) -> dict:
    """Thresholds that need the same number of successes out of k, need(tau, k), test one and the
    same statistic: key -> the index of its group (groups in the order of ``keys``)."""
    needs = {key: need(tau_of[key], k) for key in keys}
    order = list(dict.fromkeys(needs.values()))
    return {key: order.index(needs[key]) for key in keys}


def _holm_groups(p_by_key: dict, groups: dict) -> dict:
    """Holm over the distinct tests (one p per group, that of its first threshold), read back per
    threshold; NaN stays NaN."""
    first: dict = {}
    for key, g in groups.items():
        first.setdefault(g, key)
    adj = _holm([p_by_key[first[g]] for g in sorted(first)])
    return {key: float(adj[g]) for key, g in groups.items()}


def alignment_check(pool: Pool, s: AuditSettings) -> tuple[dict, Any]:
    """Matched agreement of same-index draws across members against within-cell shuffles
    (:func:`oraclegap.stats.nulls.draw_alignment`) on up to :data:`ALIGN_MAX_PROMPTS` prompts drawn
    at random, for every pool with k > 1 whatever it declares: ``coupled`` when the plus-one p is
    at most alpha, i.e. matched agreement exceeds what the counts imply."""
    seed = section_seeds(s.seed)["alignment"]
    n = pool.n_prompts
    sub = pool
    if n > ALIGN_MAX_PROMPTS:
        sub = pool.select(prompts=np.sort(as_rng(seed).permutation(n)[:ALIGN_MAX_PROMPTS]))
    da = nulls.draw_alignment(sub, n_draws=s.align_draws, seed=seed)
    num = {"declared": pool.alignment, "matched": da.test.observed, "shuffled": da.expected, "p": da.test.p,
           "band": [da.test.band.lo, da.test.band.hi], "n_draws": s.align_draws, "seed": seed,
           "n_prompts": sub.n_prompts, "coupled": bool(da.test.p <= s.alpha),
           "independent_by": independent_by_construction(pool)}
    return num, da


def independent_by_construction(pool: Pool) -> str | None:
    """Why the pool's draws are independent across members by how they were made, or None when
    its records cannot say: ``"per-policy seeds"`` when every response carries its sampling seed
    (``per_response["seed"]``) and no two members share a seed at any (prompt, draw index), so
    the draw index couples nothing; ``"arranged from counts"`` when the draws were arranged at
    random within each cell from counts (:meth:`Pool.from_counts`). Under either, matched agreement
    and its within-cell shuffles are exchangeable, so the alignment check's p-value is uniform and
    falls at or below alpha with probability at most alpha."""
    if pool.n_policies < 2 or pool.k < 2:
        return None
    if (pool.meta or {}).get("arranged_from_counts"):
        return "arranged from counts"
    seeds = pool.per_response.get("seed")
    if seeds is None:
        return None
    ordered = np.sort(np.asarray(seeds), axis=1)  # [n, M, k]: members sorted per (prompt, draw)
    return "per-policy seeds" if bool((ordered[:, 1:] != ordered[:, :-1]).all()) else None


def nulls_section(pool: Pool, s: AuditSettings, cov: CoverageSection, *, progress: bool = False) -> Section:
    """The re-deal and margin-preserving tests of L at each threshold, Holm-adjusted within each
    null over the distinct tests (thresholds with the same need(tau, k) are one test,
    :func:`need_groups`); the exact member-quality test
    (:func:`oraclegap.stats.nulls.quality.member_quality`); the excess bootstrap at the primary
    threshold; the measured draw alignment (:func:`alignment_check`). At k = 1 no null applies.
    The four parts draw from their own seeds (:func:`null_parts`): run in any order, or side by
    side, they give these numbers."""
    if pool.k == 1:
        return Section("nulls", {"applicable": False, "reason": _K1_NULLS, "redeal_taus": [], "margin_taus": [],
                                 "detected_taus": []}, {})
    parts = null_parts(pool, s, cov, progress=progress)
    return merge_null_parts([part() for part in parts.values()])


#: The keys of the nulls section, in the order ``audit.json`` holds them.
_NULL_KEYS = ("applicable", "n_draws", "seed", "tests", "seed_aligned", "draw_alignment", "n_tests",
              "L", "redeal_taus", "margin_taus", "detected_taus", "quality", "n_degenerate",
              "excess")


def null_parts(pool: Pool, s: AuditSettings, cov: CoverageSection, *,
               progress: bool = False) -> dict:
    """The independent parts of :func:`nulls_section` (k > 1), name -> a function returning a
    partial ``Section("nulls", ...)``: the tests of L, the excess bootstrap, the quality test and
    the draw alignment. :func:`merge_null_parts` puts their numbers together."""
    return {"nulls": lambda: _null_tests_part(pool, s, cov, progress),
            "excess": lambda: _excess_part(pool, s),
            "quality": lambda: _quality_part(pool, s),
            "alignment": lambda: _alignment_part(pool, s)}


def merge_null_parts(parts) -> Section:
    """The nulls section from its parts (:func:`null_parts`), keys in ``audit.json``'s order."""
    numbers: dict = {}
    results: dict = {}
    for part in parts:
        numbers.update(part.numbers)
        results.update(part.results)
    order = ("nulls", "excess", "quality", "draw_alignment")
    return Section("nulls", {key: numbers[key] for key in _NULL_KEYS},
                   {key: results[key] for key in order if key in results})


def _null_tests_part(pool: Pool, s: AuditSettings, cov: CoverageSection, progress: bool) -> Section:
    seeds = section_seeds(s.seed)
    keys, tau_of = list(cov.keys), cov.tau_of
    groups = need_groups(keys, tau_of, pool.k)
    # a sequential run stops once its decisions are settled: the bound on a direct request's work
    # (the most it may take, n_draws of each null) would refuse the audit of a pool of 1e6 prompts
    bound = None if s.sequential else nulls.DEFAULT_MAX_PROPOSALS
    nt = nulls.null_tests(pool, s.taus, n_draws=s.n_draws, seed=seeds["nulls"], progress=progress,
                          sequential=s.null_stop(), max_proposals=bound,
                          **s.chain_steps(pool.n_prompts, pool.n_policies))
    per = {key: {"tau": tau_of[key], "test": groups[key]} for key in keys}
    p_raw: dict[str, dict] = {null: {} for null in nulls.NULLS}
    for key in keys:
        for null in nulls.NULLS:
            try:
                t = nt.get("L", tau_of[key], null)
            except KeyError as exc:  # a test the library skipped (degenerate): no p-value
                per[key][null] = {"skipped": str(exc.args[0]) if exc.args else "skipped"}
                p_raw[null][key] = float("nan")
                continue
            per[key]["observed"] = t.observed
            per[key][null] = {"mean": t.mean, "band": [t.band.lo, t.band.hi], "p": t.p, "excess": t.excess,
                              "ess": t.ess, "n_draws": t.n_draws}
            p_raw[null][key] = t.p
    reject = {}
    for null in nulls.NULLS:
        adj = _holm_groups(p_raw[null], groups)
        for key in keys:
            if "skipped" not in per[key][null]:
                per[key][null]["p_holm"] = _jsonable(adj[key])
                per[key][null]["reject"] = bool(adj[key] <= s.alpha)
        reject[null] = [key for key in keys if per[key][null].get("reject")]
    for key in keys:
        per[key]["detected"] = key in reject["redeal"] and key in reject["margin"]
    num = {"applicable": True, "n_draws": s.n_draws, "seed": seeds["nulls"],
           "tests": _jsonable(nt.to_dict()), "seed_aligned": pool.alignment == "seed-aligned",
           "n_tests": len(set(groups.values())), "L": _jsonable(per),
           "redeal_taus": reject["redeal"], "margin_taus": reject["margin"],
           "detected_taus": [key for key in keys if per[key]["detected"]],
           "n_degenerate": nt.n_degenerate}
    return Section("nulls", num, {"nulls": nt})


def _excess_part(pool: Pool, s: AuditSettings) -> Section:
    seed = section_seeds(s.seed)["excess"]
    try:
        ex = nulls.excess_bootstrap(pool, s.primary_tau, n_boot=s.n_excess, n_draws=s.excess_draws,
                                    seed=seed, method=s.excess_method)
    except (ValueError, KeyError) as exc:  # e.g. a degenerate test the library refuses
        why = {"tau": s.primary_tau, "null": "redeal", "reason": str(exc)}
        return Section("nulls", {"excess": why}, {"excess": None})
    num = {"tau": s.primary_tau, "null": "redeal", "value": ex.value, "lo": ex.lo, "hi": ex.hi,
           "level": ex.level, "n_boot": s.n_excess, "n_draws": s.excess_draws, "seed": seed}
    return Section("nulls", {"excess": num}, {"excess": ex})


def _quality_part(pool: Pool, s: AuditSettings) -> Section:
    seed = section_seeds(s.seed)["quality"]
    qt = member_quality(pool, n_draws=s.n_draws, seed=seed, sequential=s.null_stop())
    member_means = pool.rates().mean(axis=0)
    quality = {"statistic": "spread of member totals", "null": "labels permuted within prompts",
               "observed": qt.observed, "mean": qt.mean, "p": qt.p, "reject": bool(qt.p <= s.alpha),
               "n_draws": qt.n_draws, "seed": seed,
               "range": [float(member_means.min()), float(member_means.max())]}
    return Section("nulls", {"quality": quality}, {"quality": qt})


def _alignment_part(pool: Pool, s: AuditSettings) -> Section:
    align, da = alignment_check(pool, s)
    return Section("nulls", {"draw_alignment": align}, {"draw_alignment": da})


# ============================================================================ power and the planner
def power_section(pool: Pool, s: AuditSettings, *, progress: bool = False) -> Section:
    """The useful effect (:func:`~oraclegap.audit.planners.useful_effect`), this design's power
    against it (k > 1; judged by its Wilson interval, :func:`~oraclegap.audit.settings.power_state`)
    and the planners over responses per prompt and prompts (k = 1: over :data:`K1_PLAN`)."""
    seeds = section_seeds(s.seed)
    n, M, k = pool.shape
    results: dict = {}
    eff = useful_effect(pool, s.primary_tau, s.effect, seed=seeds["effect"])
    results["effect"] = eff
    base = effect_centres(pool)  # one population for the current design and every planned one
    common: dict[str, Any] = dict(M=M, tau=s.primary_tau, alpha=s.alpha, n_draws=s.power_draws, base=base, sigma=eff.sigma)
    pw_num: dict = {"applicable": True, "tau": s.primary_tau, "effect": eff.to_dict(), "target": s.target_power}
    if s.design != "standard":
        pw_num["design"] = {"name": s.design, "trial_draws": s.power_draws, "nulls": list(s.power_nulls),
                            "plan_stop": s.plan_stop, "first_look": s.power_first_look,
                            "plan_if_adequate": s.plan_if_adequate}
    if k > 1:
        pw = _power_with_look("diffuse", n=n, k=k, n_reps=s.n_reps, first=s.power_first_look,
                              nulls=s.power_nulls, seed=seeds["power"], **common)
        results["power"] = pw
        fr = pw.frame()
        pw_num["current"] = {
            "n": n, "k": k, "n_reps": int(fr["reps"].iloc[0]), "rows": _records(fr),
            "population_L": float(fr["population_L"].mean()),
            "power": {null: pw.power(null) for null in s.power_nulls},
            "interval": {null: [float(fr.loc[fr["null"] == null, "ci_lo"].iloc[0]),
                                float(fr.loc[fr["null"] == null, "ci_hi"].iloc[0])] for null in s.power_nulls},
        }
        row = fr.loc[fr["null"] == "redeal"].iloc[0]
        dlo, dhi = studies.rate_interval(int(row["rejections"]), int(row["reps"]), 2 * POWER_DECISION_ALPHA)
        pw_num["current"]["decision_interval"] = [float(dlo), float(dhi)]
        pw_num["current"]["state"] = power_state(pw.power("redeal"), float(dlo), float(dhi), s.target_power)
        plans = {"plan_k": ("k", plan_grid(k, PLAN_K_REACH)), "plan_n": ("n", plan_grid(n, PLAN_N_REACH))}
        if pw_num["current"]["state"] == "adequate" and not s.plan_if_adequate:
            why = "this design's power is adequate, so the planner's sizes would feed no next step"
            for name, (vary, grid) in plans.items():
                pw_num[name] = {"vary": vary, "grid": list(grid), "curve": [], "required": {},
                                "n_reps": 0, "seed": seeds[name], "skipped": why}
            plans = {}
    else:
        pw_num["current"] = None
        pw_num["reason"] = "at k = 1 the nulls do not apply; the planner shows what k >= 2 responses per prompt would give"
        plans = {"plan_k": ("k", K1_PLAN)}
    for name, (vary, grid) in plans.items():
        if s.plan_stop:
            plan = _plan_until_target("diffuse", target=s.target_power, vary=vary, grid=grid, n=n,
                                      k=k, n_reps=s.plan_reps, first=s.power_first_look,
                                      nulls=("redeal",), seed=seeds[name], progress=progress,
                                      **common)
        else:
            plan = studies.plan_power("diffuse", target=s.target_power, vary=vary, grid=grid, n=n,
                                      k=k, n_reps=s.plan_reps, nulls=("redeal",), seed=seeds[name],
                                      progress=progress, **common)
        results[name] = plan
        pw_num[name] = {"vary": vary, "grid": list(grid), "curve": _records(plan.frame()), "required": plan.required,
                        "n_reps": s.plan_reps, "seed": seeds[name]}
    return Section("power", _jsonable(pw_num), results)


def _power_with_look(effect: str, *, n_reps: int, first: int | None, seed,
                     **kwargs) -> studies.PowerResult:
    """:func:`~oraclegap.stats.studies.power` with one early look: the first ``first`` trials, and
    when every one of them rejects, the estimate from those alone; else all ``n_reps`` trials. The
    trials are drawn in order from one Generator built from ``seed``, as ``power`` draws them, so
    a run past the look gives the trials (and the numbers) of ``power(n_reps=n_reps)``."""
    if first is None or first >= n_reps:
        return studies.power(effect, n_reps=n_reps, seed=seed, **kwargs)
    rng = as_rng(seed)
    head = studies.power(effect, n_reps=first, seed=rng, **kwargs)
    rows = head.study.rows
    if bool(rows.loc[rows["null"] == "redeal", "reject"].all()):
        return head
    tail = studies.power(effect, n_reps=n_reps - first, seed=rng, **kwargs)
    later = tail.study.rows.assign(rep=tail.study.rows["rep"] + first)
    both = pd.concat([rows, later], ignore_index=True)
    return dataclasses.replace(head, study=dataclasses.replace(head.study, rows=both))


def _plan_until_target(effect: str, *, target: float, vary: str, grid, n: int, k: int, seed, progress: bool = False,
                       first: int | None = None, **kwargs) -> studies.PowerPlan:
    """:func:`~oraclegap.stats.studies.plan_power` over the grid values up to the first whose
    re-deal power reaches ``target`` (the large-n design's planners). The values are taken in
    order from one Generator built from ``seed``, exactly as ``plan_power`` takes them, so with
    ``first=None`` every row computed is the row ``plan_power`` gives and ``required`` is the one
    it names; the values after ``required`` are not simulated (at 1e5 prompts the next value of the
    prompt planner would simulate pools of 4 n prompts). ``first``: each value's estimate stops
    after that many trials when all of them reject (:func:`_power_with_look`)."""
    rng = as_rng(seed)
    frames: list = []
    for v in grid:
        shape = {"n": n, "k": k, vary: v}
        res = _power_with_look(effect, n=shape["n"], k=shape["k"], first=first, seed=rng, **kwargs)
        frames.append(res.frame())
        if float(frames[-1].loc[frames[-1]["null"] == "redeal", "reject_rate"].iloc[0]) >= target:
            break
    curve = pd.concat(frames, ignore_index=True)
    sub = curve[curve["null"] == "redeal"]
    ok = sub[sub["reject_rate"] >= target]
    return studies.PowerPlan(effect, vary, target, curve, {"redeal": None if ok.empty else int(ok[vary].iloc[0])})


# ============================================================================ certificates
def certificates_section(pool: Pool, s: AuditSettings, cov: CoverageSection) -> Section:
    """The certified quantity at each level, with the paper-002 intervals beside it.

    k > 1: the split-draw coverage gap (:mod:`oraclegap.stats.split_gap`: a per-prompt choice
    made on half of each cell's draws, scored at tau on the other half, cross-fitted, against the
    best fixed member on the same draws; zero under exchangeable members) with its simultaneous
    interval at level 1 - alpha / T', T' the distinct tests among the thresholds
    (:func:`~oraclegap.stats.split_gap.split_groups`); ``certified`` is its lower limit above 0. Beside
    it the *apparent* gap, the outcome-oracle gap of paper 002 on "covered at tau by the k draws"
    outcomes (paired interval and Thm 4, level 1 - alpha / T), which carries the within-prompt
    winner's curse. k = 1: the outcome-oracle gap of paper 002 itself (paired interval, Thm 4
    beside it); whether it is luck is for the verdict's k = 1 rules. ``plan``: the prompts that
    would certify a gap of the useful size if the observed rates held."""
    k = pool.k
    levels, lkeys = cov.levels(k)
    a_app = s.alpha / len(lkeys)
    num: dict = {"outcome": "k = 1 outcomes" if k == 1 else "covered at tau by k draws", "levels": {},
                 "alpha_apparent": a_app}
    results: dict = {}
    if k > 1:
        pairs = split_groups(levels, k)
        order = list(dict.fromkeys(pairs))
        a_cert = s.alpha / len(order)
        splits = split_draw_gap(pool, levels, a_cert, seed=section_seeds(s.seed)["split"])
        num.update({"certificate": "split-draw coverage gap", "alpha": a_cert, "n_tests": len(order)})
    else:
        a_cert = a_app
        num.update({"certificate": "outcome-oracle gap (Shihab et al.)", "alpha": a_cert, "n_tests": 1})
    for j, (level, key) in enumerate(zip(levels, lkeys, strict=True)):
        R = certify.outcomes_from_pool(pool) if level is None else certify.outcomes_from_pool(pool, tau=level)
        ex_i = certify.selection_valid_gap_from_outcomes(R, a_app, "exact", model_names=pool.policy_names)
        pa_i = certify.selection_valid_gap_from_outcomes(R, a_app, "paired", model_names=pool.policy_names)
        row = {"tau": level, "exact": _records(ex_i.frame())[0], "paired": _records(pa_i.frame())[0],
               "apparent_certified": pa_i.certified, "exact_certified": ex_i.certified}
        if k > 1:
            sp = splits[j]
            plan = split_certificate_prompts(sp, a_cert, target=s.effect)
            cert = {"name": num["certificate"], **sp.to_dict(), "test": order.index(pairs[j])}
            results[key] = {"split": sp, "exact": ex_i, "paired": pa_i, "plan": plan}
        else:
            plan = certificate_prompts(R, a_cert, target=s.effect)
            cert = {"name": num["certificate"], "tau": None, "value": pa_i.value, "lo": pa_i.lo, "hi": pa_i.hi,
                    "level": 1 - a_cert, "method": "paired Clopper-Pearson, Bonferroni over members",
                    "best_member": pa_i.best_member, "certified": pa_i.certified}
            results[key] = {"exact": ex_i, "paired": pa_i, "plan": plan}
        num["levels"][key] = {**row, "certificate": cert, "certified": bool(cert["certified"]), "plan": plan.to_dict()}
    num["certified_taus"] = [key for key in lkeys if num["levels"][key]["certified"]]
    return Section("certificates", _jsonable(num), {"certificates": results})


# ============================================================================ single-draw noise
def noise_section(pool: Pool, s: AuditSettings) -> Section:
    """Paper 001's decomposition O_exp = O_repro + Delta with intervals and the best-of-K check
    (k > 1; at k = 1 O_repro is not identified)."""
    if pool.k == 1:
        return Section("noise", {"applicable": False, "luck": False,
                                 "reason": "at k = 1 the reproducible ceiling O_repro is not identified: one draw "
                                           "cannot tell a member's success probability from luck"}, {})
    seeds = section_seeds(s.seed)
    n_perm = NOISE_PERMUTATIONS_SMALL if s.small else NOISE_PERMUTATIONS
    stops = s.noise_stops()  # the large-n design's sequential sizes; none in the standard design
    dec = noise.decomposition(pool, n_boot=s.n_boot, seed=seeds["decomposition"], checks=True, n_perm=n_perm,
                              stop=stops.get("decomposition"), check_stop=stops.get("checks"))
    bok = noise.best_of_k_check(pool, n_boot=s.n_boot, seed=seeds["best_of_k"], stop=stops.get("best_of_k"))
    share = dec["noise_share"]
    failed = dec.assumptions.flags if dec.assumptions is not None else {}  # failed, not untested, checks
    share_flag, bok_flag = (("check failed: " + ", ".join(failed[q])) if q in failed else ""
                            for q in ("noise_share", "best_of_k"))
    num = _jsonable({
        "applicable": True, "decomposition": dec.to_dict(),
        "best_of_k": {"K": bok.K, "best_of_k_split": bok.best_of_k_split.row(),
                      "best_of_k_insample": bok.best_of_k_insample, "best_of_all_k_insample": bok.best_of_all_k_insample,
                      "headline_001": "best_of_all_k_insample",  # 001's best-of-K: per-prompt argmax over all draws
                      "o_exp_independent": bok.o_exp_independent.row(), "o_exp": bok.o_exp,
                      "difference": bok.difference.row(), "passes": bok.passes, "passes_flag": bok_flag,
                      "n_boot": bok.n_boot, "seed": seeds["best_of_k"]},
        # 001's rule: a magnitude whose assumption check fails is reported as such, not as luck
        "luck": bool(not math.isnan(share.lo) and share.lo >= LUCK_SHARE and not share_flag),
        "luck_flag": share_flag,
        "luck_threshold": LUCK_SHARE,
        "assumptions": dec.assumptions.to_dict() if dec.assumptions is not None else None,
        "n_perm": n_perm,  # requested; with a check stop the permutations drawn are n_perm_drawn
        **({"n_perm_drawn": dec.assumptions.n_perm} if "checks" in stops else {}),
        **({"stop": {name: rule.to_dict() for name, rule in stops.items()}} if stops else {}),
    })
    return Section("noise", num, {"decomposition": dec, "best_of_k": bok})


#: Permutations behind 001's assumption checks in the audit (each test needs >= 1/alpha - 1).
NOISE_PERMUTATIONS, NOISE_PERMUTATIONS_SMALL = 199, 99


# ============================================================================ quick held-out router
def router_section(pool: Pool, s: AuditSettings, cov: CoverageSection) -> Section:
    """The quick held-out router at every level of the certificates (:func:`quick_router`)."""
    levels, lkeys = cov.levels(pool.k)
    num = quick_router(pool, levels, lkeys, alpha=s.alpha, seed=section_seeds(s.seed)["router"],
                       n_boot=max(s.n_boot, 100))
    return Section("router", _jsonable(num), {})


def integrity_section(pool: Pool, s: AuditSettings) -> Section:
    """Integrity before inference (:func:`oraclegap.deploy.integrity.integrity_checks`): duplicated
    prompts (exact and near) and whether they cross the quick router's calibration/test split
    (leakage), outcome alignment with gold answers, aggregation warnings, and the constant and
    task-wise baselines, on the quick router's own split (same seed, same test fraction)."""
    from ..deploy.integrity import integrity_checks

    n = pool.n_prompts
    perm = as_rng(section_seeds(s.seed)["router"]).permutation(n)
    test = np.sort(perm[: int(round(n * 0.5))])
    rep = integrity_checks(pool, tau=s.primary_tau if pool.k > 1 else None, seed=s.seed, test=test)
    num = {"checks": rep.frame().to_dict(orient="records"), "findings": list(rep.findings),
           "leakage": any(str(f).startswith("leakage") for f in rep.findings),
           "baselines": rep.baselines.frame().to_dict(orient="records") if rep.baselines is not None else [],
           "baselines_note": rep.baselines_note}
    return Section("integrity", _jsonable(num), {"integrity": rep})


def _router_plan(pool: Pool) -> tuple[str | None, str | None, str]:
    """(family, embed source, reason) for the quick router, or (None, None, why not)."""
    if pool.embeddings is not None:
        return "embed_knn", "pool", "nearest neighbours on the pool's prompt embeddings"
    text = pool.prompts["text"]
    if text.notna().any() and text.dropna().astype(str).str.strip().ne("").any():
        return "tfidf_knn", "none", "nearest neighbours on TF-IDF vectors of the prompt text"
    return None, None, "the pool has neither prompt text nor embeddings, so no router can see anything about a prompt"


def _router_inputs(routers, pool: Pool, embed: str):
    try:
        return routers.router_inputs(pool, embed=embed)
    except ValueError:  # an embed source this version does not know: let it choose
        return routers.router_inputs(pool, embed="auto")


def quick_router(pool: Pool, levels: list, keys: list, *, alpha: float, seed: int, n_boot: int,
                 test_fraction: float = 0.5) -> dict:
    """A nearest-neighbour router fitted on a calibration split and compared on the held-out
    split with the member selected on the calibration split (paper 002 Sec. 4, Cor 5).

    Prompts are split at random (``seed``) into calibration and test parts. For each level (a
    threshold tau for k > 1, the single outcome for k = 1) the per-policy outcomes are
    O_im = 1[c_im >= need(tau, k)] (k = 1: the verdict); the router (``embed_knn`` on the pool's
    embeddings, else ``tfidf_knn`` on the prompt text, via :func:`oraclegap.deploy.routers.make_router`)
    is fitted on the calibration outcomes, and the calibration-selected member b is the member
    with the most calibration successes (ties: the lowest index). On the test prompts
    :func:`oraclegap.stats.certify.paired_comparison` compares the router's outcomes with b's
    (difference with a paired bootstrap interval, exact McNemar, G_b = P(oracle right, b wrong)
    with its Clopper-Pearson interval and the recovered fraction), McNemar p-values are
    Holm-adjusted over levels, and :func:`oraclegap.stats.coverage.routing_account` gives the
    router's disagreement error e_D against the break-even L/D on the test prompts.
    """
    family, embed, how = _router_plan(pool)
    base = {"available": False, "family": family, "how": how}
    if family is None:
        return {**base, "reason": how}
    try:
        from ..deploy import routers
    except ImportError:
        return {**base, "reason": "oraclegap.deploy.routers is not part of this version of the library"}
    n, M, k = pool.shape
    if n < ROUTER_MIN_PROMPTS:
        return {**base, "reason": f"the pool has {n} prompts; a held-out split needs at least {ROUTER_MIN_PROMPTS}"}
    rng = as_rng(seed)
    perm = rng.permutation(n)
    n_test = int(round(n * test_fraction))
    test, cal = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    try:
        return _fit_quick_router(routers, pool, family, embed, how, levels, keys, cal, test, alpha, rng, n_boot, seed)
    except (ValueError, TypeError) as exc:  # inputs a router cannot use: the audit goes on without it
        return {**base, "reason": f"the quick router could not be fitted ({exc})"}


def _fit_quick_router(routers, pool, family, embed, how, levels, keys, cal, test, alpha, rng, n_boot, seed) -> dict:
    n, M, k = pool.shape
    X = _router_inputs(routers, pool, embed)
    X_cal, X_test = X.take(cal), X.take(test)
    test_pool = pool.select(prompts=test)
    names = pool.policy_names
    rows = {}
    first = None
    for level, key in zip(levels, keys, strict=True):
        O = pool.verdicts[:, :, 0] if level is None else pool.counts() >= need(level, k)
        Y_cal = O[cal].astype(float)
        b = int(np.argmax(O[cal].sum(axis=0)))
        if first is not None and hasattr(first, "with_targets"):
            # a k-NN router: the features, the reference rows and the test prompts' neighbours do
            # not depend on the level, so every later level reuses the first level's search
            r = first.with_targets(Y_cal)
        else:
            r = routers.make_router(family)
            r.fit(X_cal, Y_cal)
            first = r
        choice = np.asarray(r.predict(X_test), dtype=np.int64)
        Ot = O[test]
        S, B, Yo = Ot[np.arange(test.size), choice], Ot[:, b], Ot.any(axis=1)
        pc = certify.paired_comparison(S, B, alpha, oracle=Yo, n_boot=n_boot, seed=rng)
        acct = routing_account(test_pool, choice, 1.0 if level is None else level)
        # the break-even against the same comparator as the router's gain: on the test prompts the
        # router scores O - e_D D, so it beats the calibration-selected member b iff e_D < (O - C_b) / D
        be_b = (float(Yo.mean()) - float(B.mean())) / acct.D if acct.D > 0 else float("nan")
        row = {**_jsonable(pc.row()), "baseline_policy": names[b],
               "e_D": _jsonable(acct.e_D), "break_even": _jsonable(acct.break_even),
               "break_even_selected": _jsonable(be_b), "D_test": acct.D,
               "chosen": _jsonable(np.bincount(choice, minlength=M)), "tau": level}
        rows[key] = row
    p_holm = _holm([_num(rows[key]["p_mcnemar"]) for key in keys])
    for key, ph in zip(keys, p_holm, strict=True):
        rows[key]["p_holm"] = _jsonable(ph)
        rows[key]["beats"] = bool(ph <= alpha and rows[key]["difference"] > 0)
    return {
        "available": True, "family": family, "how": how, "source": getattr(X, "source", embed),
        "n_cal": int(cal.size), "n_test": int(test.size), "seed": seed, "levels": rows,
        "beats_at": [key for key in keys if rows[key]["beats"]],
    }


# ============================================================================ the audit
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class AuditResult(Result):
    """Every number of an audit (``numbers``, JSON-ready; :meth:`to_json`) and the library result
    objects behind them (``results``: coverage, nulls, power, plans, certificates, decomposition,
    best-of-K), with the :class:`~oraclegap.audit.verdict.Verdict`."""

    _repr_fields = ("verdict", "numbers", "results")

    numbers: dict
    results: dict
    settings: AuditSettings

    @property
    def verdict(self) -> Verdict:
        v = self.numbers["verdict"]
        return Verdict(v["code"], v["headline"], tuple(v["reasons"]), tuple(v["next_steps"]), tuple(v["findings"]), v["tau"])

    def to_json(self) -> dict:
        """A deep copy of every number the report states (what ``audit.json`` holds)."""
        return copy.deepcopy(self.numbers)

    def frame(self) -> pd.DataFrame:
        """One row per threshold: coverage, D, L, L/D, the Holm-adjusted null p-values and the
        paired certificate's limits."""
        return display.frames(self.numbers)["overview"]


def _steps(progress: bool, total: int):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="audit", unit="section", leave=False)


def _run_sections(jobs: dict, workers: int | None, tick) -> list[Section]:
    """Run the section builders ``jobs`` (name -> callable), longest expected first, on
    ``workers`` threads (default numba's thread count), ticking ``tick(name)`` as each ends; the
    sections come back in the order of ``jobs``, whatever order they finished in."""
    import numba

    workers = numba.get_num_threads() if workers is None else check_int(workers, "workers", minimum=1)
    if workers == 1:
        out = []
        for name, job in jobs.items():
            out.append(job())
            tick(name)
        return out
    from concurrent.futures import ThreadPoolExecutor, as_completed

    order = sorted(jobs, key=lambda name: _SECTION_COST.get(name, 0), reverse=True)
    with ThreadPoolExecutor(max_workers=min(workers, len(jobs)), thread_name_prefix="audit") as ex:
        futs = {ex.submit(jobs[name]): name for name in order}
        done = {}
        for fut in as_completed(futs):
            done[futs[fut]] = fut.result()
            tick(futs[fut])
    return [done[name] for name in jobs]


#: Relative CPU cost of the sections, the scheduling order (CPU seconds of the default audit of a
#: 1e5 x 10 x 16 pool on one thread, bench/bench_audit.py): the costliest start first, so the last
#: section to finish is a short one.
_SECTION_COST = {"nulls": 12, "noise": 10, "power": 8, "excess": 2.4, "alignment": 1.1,
                 "integrity": 0.5, "certificates": 0.3, "quality": 0.25, "router": 0.1}


def run_audit(pool: Pool, taus=DEFAULT_TAUS, alpha: float = 0.05, seed: int = 0, *, small: bool = False,
              effect: float = 0.05, power_tau=None, target_power: float = 0.8, source: str | None = None,
              progress: bool = False, design: str = "auto", workers: int | None = None) -> AuditResult:
    """Run the whole pre-routing audit on ``pool`` (see :mod:`oraclegap.audit` for the sections).

    ``taus``: thresholds; ``alpha``: level of every test and interval; ``seed``: the seed every section's seed derives from
    (:func:`~oraclegap.audit.settings.section_seeds`); ``small``: reduced Monte Carlo sizes;
    ``design``: the Monte Carlo design (``auto``: the standard one up to
    :data:`~oraclegap.audit.settings.LARGE_N` prompts, the large-n one above, see
    :func:`~oraclegap.audit.settings.large_n_design`; ``standard`` or ``large-n`` force one);
    ``effect``: the population gap L at the primary threshold that counts as useful for the power
    planner; ``source``: how the pool was named (kept in the numbers); ``workers``: threads that
    run the sections after coverage side by side (default: numba's thread count; 1 runs them in
    order). Every section draws from its own seed and reads only the pool, the settings and the
    coverage section, so the numbers are the same for any ``workers`` (tested); the compiled
    kernels and numpy's large operations release the GIL, which is what the threads overlap.
    Raises ``ValueError`` for pools that cannot be audited
    (:func:`~oraclegap.audit.settings.check_auditable`).
    """
    check_auditable(pool)
    s = audit_settings(taus, alpha, seed, small=small, effect=effect, power_tau=power_tau, target_power=target_power,
                       design=design, n_prompts=pool.n_prompts)
    bar = _steps(progress, 11 if pool.k > 1 else 8)

    def tick(name):
        if bar is not None:
            bar.set_postfix_str(f"{name} done")
            bar.update(1)

    numbers: dict = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "library": f"oraclegap {__version__}",
                     "source": source if source is not None else str(pool.meta.get("dataset", pool.meta.get("source", "pool"))),
                     "settings": s.to_dict()}
    results: dict = {}

    def add(section: Section, done: str | None = None):
        numbers[section.name] = section.numbers
        results.update(section.results)
        if done:
            tick(done)

    add(pool_section(pool))
    cov = coverage_section(pool, s)
    add(cov, "coverage")
    # the sections after coverage read the pool, the settings and coverage only; the nulls run as
    # their four parts, so that the short ones fill a core beside the long tests of L
    nulls_jobs = (null_parts(pool, s, cov, progress=progress) if pool.k > 1
                  else {"nulls": lambda: nulls_section(pool, s, cov, progress=progress)})
    jobs = {**nulls_jobs,
            "power": lambda: power_section(pool, s, progress=progress),
            "certificates": lambda: certificates_section(pool, s, cov),
            "noise": lambda: noise_section(pool, s),
            "router": lambda: router_section(pool, s, cov),
            "integrity": lambda: integrity_section(pool, s)}
    ran = _run_sections(jobs, workers, tick)
    parts = [sec for sec in ran if sec.name == "nulls"]
    add(merge_null_parts(parts) if len(parts) > 1 else parts[0])
    for section in ran:
        if section.name != "nulls":
            add(section)
    if s.noise_stop and numbers["noise"].get("applicable"):  # the resamples the stopped bootstraps took
        nz = numbers["noise"]
        numbers["settings"]["noise_boot"] = {"decomposition": nz["decomposition"]["n_boot"],
                                             "best_of_k": nz["best_of_k"]["n_boot"],
                                             **({"checks": nz["n_perm_drawn"]} if "n_perm_drawn" in nz else {})}
    numbers = _jsonable(numbers)
    numbers["verdict"] = _jsonable(verdict(numbers).to_dict())
    tick("verdict")
    if bar is not None:
        bar.close()
    return AuditResult(numbers, results, s)


def summary(numbers) -> dict:
    """One audit in one row: the verdict code and headline, the primary threshold's L, D and
    L/D, the smallest Holm-adjusted p of each null over the thresholds (NaN at k = 1), the
    thresholds where both nulls reject and where the gap is certified, this design's re-deal power
    against the useful effect with its Wilson 95% interval and :func:`power_state`, the sizes the
    planners name (k and n whose estimated power reaches the target; None when none on the grid
    does), the noise share Delta/G, the first step of what to collect next and the pool's draw alignment."""
    if isinstance(numbers, AuditResult):
        numbers = numbers.numbers
    pool, cov, nl = numbers["pool"], numbers["coverage"]["taus"], numbers["nulls"]
    pkey = numbers["coverage"]["primary_key"]
    row = cov[pkey]

    def min_p(null):
        ps = [_num(nl["L"][key][null].get("p_holm")) for key in nl.get("L", {}) if nl["L"][key].get(null)]
        ps = [p for p in ps if not math.isnan(p)]
        return min(ps) if ps else float("nan")

    pw = numbers["power"]
    cur, state = _current_power(numbers)
    iv = (cur.get("interval") or {}).get("redeal") or [float("nan"), float("nan")]
    req = {name: (pw.get(name) or {}).get("required", {}).get("redeal") for name in ("plan_k", "plan_n")}
    nz = numbers["noise"]
    v = numbers["verdict"]
    return {
        "n": pool["n_prompts"], "M": pool["n_policies"], "k": pool["k"], "code": v["code"], "headline": v["headline"],
        "tau": row["tau"], "L": _num(row["L"]), "D": _num(row["D"]), "break_even": _num(row["break_even"]),
        "p_redeal": min_p("redeal") if nl["applicable"] else float("nan"),
        "p_margin": min_p("margin") if nl["applicable"] else float("nan"),
        "detected_taus": [cov[key]["tau"] for key in nl.get("detected_taus", [])],
        "certified_taus": [cov[key]["tau"] for key in numbers["certificates"]["certified_taus"] if key in cov],
        "power": _num(cur["power"]["redeal"]) if cur else float("nan"), "power_lo": _num(iv[0]), "power_hi": _num(iv[1]),
        "power_state": state, "k_needed": req["plan_k"], "n_needed": req["plan_n"],
        "noise_share": _num(nz["decomposition"]["estimates"]["noise_share"]["value"]) if nz["applicable"] else float("nan"),
        "next": v["next_steps"][0] if v["next_steps"] else None,
        "alignment": pool.get("alignment"),
    }


def draws_sweep(pool: Pool, ks, *, progress: bool = False, **kwargs) -> tuple[pd.DataFrame, dict]:
    """What the audit would have said with fewer responses: :func:`run_audit` on the first k draws
    of every (prompt, policy) cell (``pool.draws(range(k))``) for each k in ``ks``.

    The subsets are nested, as responses are collected -- the k-response pool is the first k
    draws of every larger one -- and for seed-aligned pools draw j keeps its seed, so each row is
    the audit a practitioner who stopped at k would have run. ``kwargs`` go to
    :func:`run_audit` (the same seed for every k). Returns one :func:`summary` row per k (a
    DataFrame in the order of ``ks``) and the :class:`AuditResult` of each k.
    """
    check_pool(pool)
    ks = [check_int(k, "ks", minimum=1) for k in np.atleast_1d(ks).tolist()]
    if not ks or len(set(ks)) != len(ks):
        raise ValueError(f"ks must be distinct response counts, got {ks}")
    if max(ks) > pool.k:
        raise ValueError(f"ks asks for k = {max(ks)} responses but the pool holds k = {pool.k}")
    it = ks
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(ks, desc="audit over k", leave=False)
    results = {k: run_audit(pool if k == pool.k else pool.draws(np.arange(k)), **kwargs) for k in it}
    return pd.DataFrame([summary(res) for res in results.values()]), results


def warm_kernels() -> None:
    """Compile every numba kernel the audit runs (the null tests' serial and threaded kernels,
    the noise section's resampling; also the routers' AIQ hull, prompt bootstrap and bandit) into
    numba's on-disk cache, or load them from it: a tiny
    audit on a 40 x 3 x 4 pool after :func:`~oraclegap.stats.nulls.warm_up`. ``make setup``
    calls it once, so the first audit, test run or chapter does not pay the compilation
    (about 40 s on two cores); with a warm cache it returns in a second or two."""
    nulls.warm_up(parallel=True)
    from ..deploy.bandit import run_bandit
    from ..deploy.evaluate import aiq, bootstrap_means

    aiq([0.0, 1.0], [0.0, 1.0])  # the cost analysis's hull kernel (the routers' cost section, chapter 05)
    bootstrap_means(np.eye(4), 100, 0)  # the routers' shared prompt bootstrap (chapter 05)
    run_bandit(np.eye(4), np.eye(4), order=np.arange(4))  # the contextual bandit (chapter 05)
    rng = np.random.default_rng(0)
    v = rng.random((40, 3, 4)) < rng.beta(2.0, 2.0, (40, 1, 1))
    run_audit(Pool.from_array(v), [0.5], 0.05, 0, small=True, workers=1)
