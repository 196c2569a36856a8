"""The pre-routing audit: one call (or ``oraclegap audit POOL --out DIR``) that answers, with the
numbers behind it, whether a pool's oracle gap is worth a router.

:func:`run_audit` computes every number; :class:`AuditResult` holds them as one JSON-ready dict
(``.to_json()``, written as ``audit.json``) beside the library result objects they came from.
:func:`write_audit` writes ``audit.json``, executes the parameterised report notebook shipped
inside the package (``oraclegap/notebooks/audit.py``, which only *displays* ``audit.json``) and
renders it to ``report.html``, all in a temporary folder beside the target that is moved into
place at the end, so the report and ``audit.json`` agree by construction and a failed run leaves
nothing half-written. In an existing folder only the files an earlier audit wrote (its hidden
manifest ``.oraclegap-audit.json``) are replaced; nothing else there is touched.

Sections (all from the library; seeds derived from one ``seed``, see :data:`SEED_OFFSETS`):

* pool summary -- shape, alignment, degenerate prompts, member rates, metadata present;
* coverage -- oracle, best member, mixture, D, L and the break-even router error L/D at each
  threshold (:func:`oraclegap.stats.coverage.coverage`; arXiv 2609.32996 Sec. 2);
* nulls (k > 1) -- the re-deal and margin-preserving tests of L at each threshold
  (:func:`oraclegap.stats.nulls.null_tests`), Holm-adjusted over thresholds within each null, the
  prompt-bootstrap interval of the re-deal excess at the primary threshold, and the power this
  design has against a diffuse effect of a useful size (:func:`oraclegap.stats.studies.power`)
  with the planner over responses per prompt and prompts (:func:`~oraclegap.stats.studies.plan_power`
  on the sizes of :func:`plan_grid`; the power is judged by its Wilson interval, :func:`power_state`);
  at k = 1 no null that needs k > 1 applies and the certificates carry the inference. Both nulls
  assume draws independent across members: on a seed-aligned pool (draw j sampled with one seed
  under every member) the section measures the coupling (:func:`oraclegap.stats.nulls.draw_alignment`,
  matched against shuffled agreement) and, when matched agreement lies above the shuffle band,
  says the tests are conservative there;
* certificates -- the selection-valid (Thm 4) and paired intervals of the outcome-oracle gap of
  paper 002 on k = 1 outcomes, or on "covered at tau" outcomes at each threshold (k > 1), at
  level 1 - alpha / T simultaneously over the T thresholds, and how many prompts would certify it;
* single-draw noise (k > 1) -- paper 001's decomposition O_exp = O_repro + Delta with intervals
  and the best-of-K check (:mod:`oraclegap.stats.noise`);
* a quick held-out router -- nearest neighbours on the pool's embeddings (``embed_knn``) or text
  (``tfidf_knn``) through :mod:`oraclegap.deploy.routers`, fitted on a calibration half and
  compared on the other half with the calibration-selected member by paired inference
  (:func:`oraclegap.stats.certify.paired_comparison`, exact McNemar, Holm over thresholds);
* the verdict in plain words and what to collect next (:func:`verdict`; the rules are in its
  docstring and in the README; on seed-aligned draws whose coupling is measurable it adds the
  independence caveat and recommends per-policy draws).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__
from ._validate import as_rng, check_alpha, check_int, check_prob, check_taus
from .pool import Pool
from .report import md
from .stats import certify, noise, nulls, studies
from .stats.coverage import coverage, coverage_from_rates, need, pass1_oracle_gap, routing_account
from .stats.multiplicity import holm as _holm  # NaN entries stay NaN and are not counted

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "DEFAULT_TAUS",
    "PRIMARY_TAU",
    "SEED_OFFSETS",
    "VERDICTS",
    "AuditSettings",
    "audit_settings",
    "section_seeds",
    "plan_grid",
    "power_state",
    "primary_tau",
    "check_auditable",
    "EffectSize",
    "useful_effect",
    "effect_centres",
    "CertificatePlan",
    "certificate_prompts",
    "quick_router",
    "Verdict",
    "verdict",
    "AuditResult",
    "run_audit",
    "summary",
    "draws_sweep",
    "load_numbers",
    "is_audit_dir",
    "notebook_source",
    "render_report",
    "write_audit",
    "texts",
    "frames",
    "plot_coverage",
    "plot_nulls",
    "plot_power",
    "plot_noise",
]

FORMAT_NAME = "oraclegap.audit"
FORMAT_VERSION = 1
#: Thresholds audited by default (those of arXiv 2609.32996).
DEFAULT_TAUS = (0.05, 0.10, 0.20, 0.30)
#: The power planner and the headline read the threshold closest to this one (2609.32996's primary tau).
PRIMARY_TAU = 0.10
#: Seed of each section = ``seed + offset`` (recorded in ``audit.json`` under settings.seeds).
SEED_OFFSETS = {"nulls": 0, "excess": 1, "effect": 2, "power": 3, "plan_k": 4, "plan_n": 5,
                "decomposition": 6, "best_of_k": 7, "router": 8, "alignment": 9}
#: Verdict codes, in the order the rules are tried (see :func:`verdict`).
VERDICTS = ("no-gap", "noise", "quality-only", "inconclusive", "certified-recoverable", "luck", "certified",
            "detected-not-certified")
#: Noise share Delta / G whose lower limit makes "most of the gap single-draw luck".
LUCK_SHARE = 0.5
#: Fewest prompts for the quick held-out router (half calibration, half test).
ROUTER_MIN_PROMPTS = 20
#: The planners look at least this far: responses per prompt up to max(4 k, 64), prompts up to max(4 n, 1000).
PLAN_K_REACH, PLAN_N_REACH = 64, 1000
#: Responses per prompt the planner tries for a k = 1 pool.
K1_PLAN = (4, 8, 16)
_SIZES = {  # full / small
    "n_draws": (2000, 400), "n_boot": (2000, 400), "n_reps": (40, 12), "plan_reps": (40, 12),
    "plan_draws": (200, 100), "n_excess": (300, 60), "excess_draws": (200, 100), "align_draws": (200, 100),
}


# ============================================================================ settings
@dataclasses.dataclass(frozen=True)
class AuditSettings:
    """What the audit runs: thresholds, level, seed and the Monte Carlo sizes of each section."""

    taus: tuple
    alpha: float
    seed: int
    small: bool
    effect: float
    primary_tau: float
    target_power: float
    n_draws: int
    n_boot: int
    n_reps: int
    plan_reps: int
    plan_draws: int
    n_excess: int
    excess_draws: int
    align_draws: int = 200

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["taus"] = list(self.taus)
        d["seeds"] = section_seeds(self.seed)
        return d


def primary_tau(taus) -> float:
    """The threshold in ``taus`` closest to :data:`PRIMARY_TAU` = 0.10 (ties: the smaller)."""
    t = check_taus(taus)
    return float(sorted(t, key=lambda x: (round(abs(x - PRIMARY_TAU), 12), x))[0])


def audit_settings(taus=DEFAULT_TAUS, alpha: float = 0.05, seed: int = 0, *, small: bool = False,
                   effect: float = 0.05, power_tau=None, target_power: float = 0.8) -> AuditSettings:
    """Validated settings. ``effect``: the population oracle gap L (at the primary threshold) that
    counts as useful, for the power planner; ``power_tau``: that threshold (default
    :func:`primary_tau`); ``small``: reduced Monte Carlo sizes (a quick look)."""
    t = check_taus(taus, "taus")
    if len(np.unique(t)) != t.size:
        raise ValueError(f"taus repeats a threshold: {t.tolist()}; give each once")
    t = tuple(float(x) for x in np.sort(t))
    alpha = check_alpha(alpha)
    if alpha >= 0.5:
        raise ValueError(f"alpha must be below 0.5, got {alpha}")
    seed = check_int(seed, "seed", minimum=0)
    effect = check_prob(effect, "effect", open_low=True, open_high=True)
    target_power = check_prob(target_power, "target_power", open_low=True, open_high=True)
    if power_tau is None:
        pt = primary_tau(t)
    else:
        pt = float(power_tau)
        if not any(abs(pt - x) < 1e-12 for x in t):
            raise ValueError(f"power_tau={power_tau!r} is not one of the audited thresholds {list(t)}")
    j = 1 if small else 0
    sizes = {name: v[j] for name, v in _SIZES.items()}
    return AuditSettings(t, alpha, seed, bool(small), effect, pt, target_power, **sizes)


def plan_grid(current: int, reach: int) -> tuple:
    """The design sizes the planner tries: ``current`` doubled (2c, 4c, 8c, ...) up to
    max(4 c, ``reach``). A pool with few responses or prompts is thus planned far enough ahead
    to name a size that reaches the target power, not only twice and four times its own."""
    c = check_int(current, "current", minimum=1)
    top = max(4 * c, check_int(reach, "reach", minimum=1))
    out, v = [], 2 * c
    while v <= top:
        out.append(v)
        v *= 2
    return tuple(out)


def power_state(rate: float, lo: float, hi: float, target: float) -> str:
    """How a Monte Carlo power estimate compares with ``target``, read from its 95% interval
    [lo, hi]: ``"adequate"`` when lo >= target, ``"low"`` when hi < target, else ``"uncertain"``
    (the replicates cannot tell; the point ``rate`` alone would flip with the Monte Carlo size)."""
    for name, v in (("rate", rate), ("lo", lo), ("hi", hi), ("target", target)):
        if v is None or not math.isfinite(float(v)):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if not lo - 1e-9 <= rate <= hi + 1e-9:  # Wilson limits carry rounding (1 - 1e-16 at rate 1)
        raise ValueError(f"rate {rate} must lie in its interval [{lo}, {hi}]")
    return "adequate" if lo >= target else "low" if hi < target else "uncertain"


def section_seeds(seed: int) -> dict:
    """The seed of every section: ``seed + SEED_OFFSETS[section]`` (plain integers, so each
    number of an audit can be recomputed with one direct library call)."""
    seed = check_int(seed, "seed", minimum=0)
    return {name: seed + off for name, off in SEED_OFFSETS.items()}


def check_auditable(pool) -> None:
    """Raise ``ValueError`` when ``pool`` cannot be audited: fewer than two policies or two
    prompts, or every verdict equal (all correct or all incorrect)."""
    if not isinstance(pool, Pool):
        raise TypeError(f"pool must be an oraclegap Pool, got {type(pool).__name__}")
    n, M, k = pool.shape
    if M < 2:
        raise ValueError(f"the pool has {M} policy; the audit compares the members of a pool and needs at least 2 policies")
    if n < 2:
        raise ValueError(f"the pool has {n} prompt; the audit needs at least 2 prompts")
    v = pool.verdicts
    if v.all() or not v.any():
        word = "correct" if v.all() else "incorrect"
        raise ValueError(f"every verdict in the pool is {word} ({n} prompts x {M} policies x k={k}); there is no gap to audit")


# ============================================================================ helpers
def _jsonable(obj):
    """numpy/pandas values -> JSON values (NaN and infinities become null)."""
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return None if math.isnan(f) or math.isinf(f) else f
    if obj is None or isinstance(obj, str):
        return obj
    return str(obj)


def _records(df: pd.DataFrame) -> list:
    return _jsonable(df.to_dict(orient="records"))


def _num(x):
    """A JSON number back to float (None -> NaN)."""
    return float("nan") if x is None else float(x)


def _prompt_means(pool: Pool) -> np.ndarray:
    """Pooled success rate of every prompt, sum_m c_im / (M k)."""
    return pool.counts().sum(axis=1) / (pool.n_policies * pool.k)


def effect_centres(pool: Pool) -> np.ndarray:
    """The prompt rates the useful effect perturbs: each prompt's pooled success rate clipped to
    [1/(2 M k), 1 - 1/(2 M k)] with this pool's M and k (arXiv 2609.32996, Table 2).

    :func:`useful_effect` calibrates sigma on these centres and the power planner simulates every
    design from them, so a plan over k holds one population fixed: clipping with the *planned* k
    instead would move prompts with no observed success towards rate 0 as k grows, and the
    planned designs would face a smaller effect than the one calibrated (on a pool with k = 2,
    less than half of it at k = 64). At k = 1 the pooled rates are multiples of 1/M and the
    clip 1/(2 M) is as coarse as a threshold (with M = 5 it *is* tau = 0.10, so an infinitesimal
    perturbation would count as a gap); there the clip uses the smallest planned k,
    min(:data:`K1_PLAN`): every planned design's own clip (1/(2 M k'), k' >= that k) then leaves
    the centres unchanged, so the population is again the same at every planned k.
    """
    n, M, k = pool.shape
    k_clip = min(K1_PLAN) if k == 1 else k
    eps = 1.0 / (2 * M * k_clip)
    return np.clip(_prompt_means(pool), eps, 1 - eps)


# ============================================================================ pool summary
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


# ============================================================================ effect size for the planner
@dataclasses.dataclass(frozen=True)
class EffectSize:
    """A diffuse alternative calibrated to a target population gap (for the power planner).

    ``sigma``: the log-odds standard deviation of arXiv 2609.32996's diffuse alternative
    (Table 2) centred on this pool's prompt means; ``calibrated_L``: its population oracle gap
    L(tau) on the calibration draws; ``reachable``: whether the target was reached on the grid.
    """

    tau: float
    target_L: float
    sigma: float
    calibrated_L: float
    reachable: bool

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def useful_effect(pool: Pool, tau: float, target_L: float = 0.05, *, seed=0, n_rep: int = 8,
                  sigmas=None) -> EffectSize:
    """The smallest diffuse perturbation whose population gap reaches ``target_L`` at ``tau``.

    The diffuse alternative (2609.32996 Table 2, App. C.2): logit p_im = logit q_i + sigma z_im
    with q_i the pool's pooled prompt rates clipped to [1/(2 M k), 1 - 1/(2 M k)] and z_im
    standard normal. For each sigma on the grid (default 0 to 4 in steps of 0.05) the population
    gap L(tau) = P[max_m p_im >= tau] - max_m P[p_im >= tau] is averaged over ``n_rep`` draws of z
    (the same draws for every sigma); the first sigma whose mean reaches ``target_L`` is
    returned (``reachable=False`` and the largest sigma when none does).
    """
    target_L = check_prob(target_L, "target_L", open_low=True, open_high=True)
    n_rep = check_int(n_rep, "n_rep", minimum=1)
    rng = as_rng(seed)
    n, M, k = pool.shape
    q = effect_centres(pool)
    lq = np.log(q / (1 - q))
    grid = np.round(np.arange(0.0, 4.0001, 0.05), 4) if sigmas is None else np.asarray(sigmas, dtype=float)
    z = rng.standard_normal((n_rep, n, M))
    Ls = np.empty(grid.size)
    for j, s in enumerate(grid):
        p = 1.0 / (1.0 + np.exp(-(lq[None, :, None] + s * z)))
        Ls[j] = np.mean([coverage_from_rates(p[r], [tau]).L[0] for r in range(n_rep)])
    hit = np.flatnonzero(Ls >= target_L)
    j = int(hit[0]) if hit.size else int(Ls.argmax())
    return EffectSize(float(tau), float(target_L), float(grid[j]), float(Ls[j]), bool(hit.size))


# ============================================================================ certificate planner
@dataclasses.dataclass(frozen=True)
class CertificatePlan:
    """Prompts the paired certificate would need to clear ``target`` if the observed rates held
    (a projection, not a power calculation)."""

    target: float
    gap: float  # the plug-in outcome-oracle gap
    lo: float  # the paired lower limit now
    n_now: int
    certified_now: bool  # lo > target now
    n_needed: int | None  # None: not reached within the largest factor, or the plug-in gap is <= target
    factor: int | None
    max_factor: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def certificate_prompts(R, alpha: float, *, target: float = 0.0, factors=(2, 4, 8, 16, 32)) -> CertificatePlan:
    """Smallest multiple f * n of the prompts at which the paired selection-valid interval of the
    outcome-oracle gap (paper 002) would have a lower limit above ``target``, if the oracle's and
    every member's observed success rates held: counts o and c_m become f o and f c_m out of f n
    and :func:`oraclegap.stats.certify.selection_valid_gap` is evaluated on them. When the plug-in
    gap itself is at most ``target`` no number of prompts at these rates suffices (``n_needed``
    None)."""
    X = np.asarray(R, dtype=bool)
    n = X.shape[0]
    c = X.sum(axis=0)
    o = int(X.any(axis=1).sum())
    now = certify.selection_valid_gap(c, o, n, alpha, "paired")
    factors = [check_int(f, "factors", minimum=2) for f in factors]
    top = int(max(factors))
    if now.lo > target:
        return CertificatePlan(float(target), now.estimate, now.lo, n, True, n, 1, top)
    if now.estimate > target:
        for f in factors:
            if certify.selection_valid_gap(c * f, o * f, n * f, alpha, "paired").lo > target:
                return CertificatePlan(float(target), now.estimate, now.lo, n, False, n * f, f, top)
    return CertificatePlan(float(target), now.estimate, now.lo, n, False, None, None, top)


# ============================================================================ quick held-out router
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
        from .deploy import routers
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
    for level, key in zip(levels, keys, strict=True):
        O = pool.verdicts[:, :, 0] if level is None else pool.counts() >= need(level, k)
        Y_cal = O[cal].astype(float)
        b = int(np.argmax(O[cal].sum(axis=0)))
        r = routers.make_router(family)
        r.fit(X_cal, Y_cal)
        choice = np.asarray(r.predict(X_test), dtype=np.int64)
        Ot = O[test]
        S, B, Yo = Ot[np.arange(test.size), choice], Ot[:, b], Ot.any(axis=1)
        pc = certify.paired_comparison(S, B, alpha, oracle=Yo, n_boot=n_boot, seed=rng)
        acct = routing_account(test_pool, choice, 1.0 if level is None else level)
        row = {**_jsonable(dataclasses.asdict(pc)), "baseline_policy": names[b],
               "e_D": _jsonable(acct.e_D), "break_even": _jsonable(acct.break_even), "D_test": acct.D,
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


# ============================================================================ the verdict
@dataclasses.dataclass(frozen=True)
class Verdict:
    """The audit's conclusion: ``code`` (one of :data:`VERDICTS`), a ``headline`` sentence, the
    ``reasons`` behind it, ``next_steps`` (what to collect next) and every rule that fired
    (``findings``), each sentence built from the audit's numbers."""

    code: str
    headline: str
    reasons: tuple
    next_steps: tuple
    findings: tuple
    tau: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "findings", tuple(dict.fromkeys(self.findings)))  # each rule once, in order

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["reasons"], d["next_steps"], d["findings"] = list(self.reasons), list(self.next_steps), list(self.findings)
        return d

    def markdown(self) -> str:
        out = [f"**{self.headline}**"]
        if self.reasons:
            out += ["", "Why:", ""] + [f"- {r}" for r in self.reasons]
        if self.next_steps:
            out += ["", "What to collect next:", ""] + [f"- {s}" for s in self.next_steps]
        return "\n".join(out)


def _taus_text(keys: list, numbers: dict) -> str:
    taus = [numbers["coverage"]["taus"][key]["tau"] for key in keys]
    return ", ".join(f"{t:g}" for t in taus) if taus else "none"


def _current_power(numbers: dict) -> tuple[dict, str | None]:
    """The power of this design (``power.current``) and its state (:func:`power_state`); audits
    written before the state was recorded are read from the point estimate and its interval."""
    pw = numbers.get("power") or {}
    cur = pw.get("current") or {}
    if not cur:
        return cur, None
    state = cur.get("state")
    if state is None:
        rate = cur["power"].get("redeal")
        row = next((r for r in cur.get("rows", []) if r.get("null") == "redeal"), None)
        lo, hi = (row["ci_lo"], row["ci_hi"]) if row else (rate, rate)
        state = power_state(rate, lo, hi, numbers["settings"]["target_power"])
    return cur, state


def _power_sentence(numbers: dict) -> str | None:
    pw = numbers.get("power") or {}
    cur, state = _current_power(numbers)
    if not cur:
        return None
    x, t = cur["population_L"], pw["tau"]
    pr, pm = cur["power"].get("redeal"), cur["power"].get("margin")
    iv = (cur.get("interval") or {}).get("redeal")
    pr_txt = md("{pr}", pr=pr) if not iv else md("{pr} [{lo}, {hi}]", pr=pr, lo=iv[0], hi=iv[1])
    target = numbers["settings"]["target_power"]
    margin = "" if pm is None else md(", {pm} for the margin null", pm=pm)
    if state == "adequate":
        return md("This design would detect a diffuse effect of size L = {x} at tau = {t:g} with power {pr} "
                  "(re-deal null{margin}).", x=x, t=t, pr=pr_txt, margin=margin)
    if state == "uncertain":
        return md("Against a diffuse effect of size L = {x} at tau = {t:g} this design has power {pr} for the re-deal "
                  "null{margin}: its {reps} simulated replicates cannot tell whether that reaches the target {target}, "
                  "so a gap of that size may have gone undetected.", x=x, t=t, pr=pr_txt, margin=margin,
                  reps=cur.get("n_reps", "few"), target=target)
    return md("This design could not reliably detect a diffuse effect of size L = {x} at tau = {t:g}: its power is "
              "{pr} for the re-deal null{margin}, below the target {target}.", x=x, t=t, pr=pr_txt, margin=margin,
              target=target)


def _plan_steps(numbers: dict) -> list:
    """'Collect k' / n' ...' sentences from the planners (re-deal null at the primary threshold)."""
    pw = numbers.get("power") or {}
    steps = []
    if not pw.get("applicable"):
        return steps
    target = numbers["settings"]["target_power"]
    cur, state = _current_power(numbers)
    if cur and state == "adequate":
        return steps
    for vary, what in (("plan_k", "responses per prompt and policy"), ("plan_n", "prompts")):
        plan = pw.get(vary)
        if not plan:
            continue
        var = plan["vary"]
        curve = [row for row in plan["curve"] if row["null"] == "redeal"]
        req = plan["required"].get("redeal")
        if req is not None:
            row = next(r for r in curve if r[var] == req)
            steps.append(md("Collect {v} = {req} {what} (the planner gives power {p} [{lo}, {hi}] for a diffuse "
                            "effect of size L = {x} at tau = {t:g}).", v=var, req=req, what=what, p=row["reject_rate"],
                            lo=row["ci_lo"], hi=row["ci_hi"], x=row["population_L"], t=pw["tau"]))
        elif curve:
            last = curve[-1]
            steps.append(md("Even {v} = {val} {what} reach only power {p} for L = {x} (target {target}); a useful "
                            "effect of this kind needs more than that.", v=var, val=last[var], what=what,
                            p=last["reject_rate"], x=last["population_L"], target=target))
    return steps


def _cert_step(numbers: dict, key: str) -> str | None:
    """What the certificate planner says about certifying a gap of the useful size at ``key``."""
    lev = numbers["certificates"]["levels"].get(key)
    if not lev:
        return None
    plan = lev["plan"]
    if plan["certified_now"]:
        return None
    if plan["gap"] <= plan["target"]:
        return md("The plug-in gap {g} is not above the useful size {t}: more prompts at these rates cannot certify a "
                  "useful gap.", g=plan["gap"], t=plan["target"])
    if plan["n_needed"] is None:
        return md("Even {f} times as many prompts ({n}) would not certify a gap above the useful size {t} at the "
                  "observed rates.", f=plan["max_factor"], n=plan["n_now"] * plan["max_factor"], t=plan["target"])
    return md("About {nn} prompts ({f} times the current {n}) would certify that the gap exceeds the useful size {t}, "
              "if the observed rates held.", nn=plan["n_needed"], f=plan["factor"], n=plan["n_now"], t=plan["target"])


def _alignment_caveat(numbers: dict) -> tuple[str, str | None, bool] | None:
    """(reason, next step, coupled) for a seed-aligned pool whose nulls ran, built from the
    measured matched and shuffled agreement; None otherwise (or for audits written before it was
    measured). ``coupled`` is True when matched agreement lies above the shuffle band: only then
    do the draws share measurable common random numbers, are the nulls called conservative and
    is per-policy sampling the next step (``step`` is None otherwise)."""
    nl = numbers.get("nulls") or {}
    al = nl.get("draw_alignment")
    if not nl.get("applicable") or not nl.get("seed_aligned") or not al:
        return None
    coupled = al["matched"] > al["band"][1]
    if not coupled:
        reason = md("The draws are marked seed-aligned (draw j of a prompt used one sampling seed under every member), "
                    "while both nulls assume draws independent across members; here responses with the same draw index "
                    "agree {a} of the time against {e} after shuffling, within the shuffle band [{lo}, {hi}] "
                    "(p = {p:p}), so no coupling of the draws is measurable and the nulls read as for independent draws.",
                    a=al["matched"], e=al["shuffled"], lo=al["band"][0], hi=al["band"][1], p=al["p"])
        return reason, None, False
    reason = md("The draws are seed-aligned (draw j of a prompt used one sampling seed under every member), but both "
                "nulls assume draws independent across members: responses with the same draw index agree {a} of the "
                "time against {e} after shuffling, above the shuffle band [{lo}, {hi}] (p = {p:p}), so on these draws "
                "the nulls are conservative and a non-rejection is weaker evidence than it reads.",
                a=al["matched"], e=al["shuffled"], lo=al["band"][0], hi=al["band"][1], p=al["p"])
    step = md("Sample each member with its own seeds (`oraclegap rollouts --draw-seeds per-policy`, or "
              "`generate(draw_seeds=\"per-policy\")`) and rerun the audit: the nulls assume independent draws, and on "
              "these seed-aligned ones matched agreement is {a} against {e} shuffled.", a=al["matched"], e=al["shuffled"])
    return reason, step, True


def verdict(numbers) -> Verdict:
    """The verdict in plain words, chosen from the audit's numbers by explicit rules (see
    :func:`_verdict_rules`). On a seed-aligned pool whose nulls ran, the measured coupling is
    reported first among the reasons. When matched agreement lies above the shuffle band
    (common random numbers show), the finding ``seed-aligned`` is added, the reason says the
    nulls assume independent draws and are conservative on these, per-policy draws come first in
    ``next_steps``, and a ``noise`` headline says the non-rejection comes from seed-aligned
    draws; when it lies within the band, only the reason (no coupling measurable) is added."""
    if isinstance(numbers, AuditResult):
        numbers = numbers.to_json()
    v = _verdict_rules(numbers)
    caveat = _alignment_caveat(numbers)
    if caveat is None or v.code == "no-gap":
        return v
    reason, step, coupled = caveat
    if not coupled:
        return Verdict(v.code, v.headline, (reason,) + v.reasons, v.next_steps, v.findings, v.tau)
    headline = v.headline
    if v.code == "noise":
        headline += " The draws are seed-aligned, which makes both nulls conservative: see below."
    return Verdict(v.code, headline, (reason,) + v.reasons, (step,) + v.next_steps,
                   ("seed-aligned",) + v.findings, v.tau)


def _verdict_rules(numbers) -> Verdict:
    """The verdict in plain words, chosen from the audit's numbers by explicit rules.

    ``numbers`` is :meth:`AuditResult.to_json` (or the dict read from ``audit.json``, or an
    :class:`AuditResult`). Notation: alpha the audit's level; tau* the primary threshold; a
    null *rejects at tau* when its p-value for L(tau), Holm-adjusted over the audited thresholds
    within that null, is <= alpha; the gap is *certified at tau* when the paired selection-valid
    interval (level 1 - alpha/T over the T thresholds; at k = 1 the single outcome) has a
    positive lower limit; the router *beats at tau* when its Holm-adjusted exact McNemar p <= alpha
    and its held-out difference against the calibration-selected member is positive; *luck* means
    the lower limit of the noise share Delta / G (paper 001, bracket interval) is >= 0.5. The
    first rule that applies gives the code:

    1. ``no-gap`` -- D(tau) = 0 at every audited threshold: no prompt separates the members.
    2. k = 1 (no null that needs k > 1 applies; the certificates carry the inference):
       ``noise`` when the outcome-oracle gap is not certified; ``certified-recoverable`` when it
       is and the router beats; else ``certified``.
    3. k > 1: ``noise`` -- neither null rejects at any threshold;
    4. ``quality-only`` -- the re-deal null rejects somewhere but the margin-preserving null (which
       allows for member quality) nowhere;
    5. ``inconclusive`` -- the nulls reject, but never both at the same threshold;
    6. the thresholds where both reject are *detected*. ``certified-recoverable`` -- certified at
       a detected threshold where the router beats;
    7. ``luck`` -- most of the single-draw gap is single-draw luck;
    8. ``certified`` -- certified at a detected threshold (a router must reach e_D < L/D there);
    9. ``detected-not-certified`` -- otherwise.

    Every rule that holds is listed in ``findings`` (also ``low-power`` when the re-deal power at
    tau* against a diffuse effect of the useful size is below the target -- the upper limit of its
    Wilson 95% interval over the simulated replicates is below it -- and ``power-uncertain`` when
    that interval contains the target (:func:`power_state`; the planner's steps are given in both
    cases), ``luck`` beside another code, ``k1``). ``next_steps`` come from the planners: responses per prompt and prompts that
    reach the target power, prompts that would certify the gap at the observed rates, and for
    k = 1 the responses per prompt the nulls would need.
    """
    if isinstance(numbers, AuditResult):
        numbers = numbers.to_json()
    s, pool, cov = numbers["settings"], numbers["pool"], numbers["coverage"]["taus"]
    keys = list(cov)
    k = pool["k"]
    pkey = next(key for key in keys if abs(cov[key]["tau"] - s["primary_tau"]) < 1e-12)
    findings, reasons, steps = [], [], []
    certs = numbers["certificates"]["levels"]
    router = numbers.get("router") or {}
    beats = set(router.get("beats_at") or [])

    def router_reason(key):
        if not router.get("available"):
            return md("No quick router was run: {why}.", why=router.get("reason", "not available"))
        row = router["levels"][key]
        return md("The quick held-out router ({fam}) scores {a} against {b} for the calibration-selected member "
                  "{name} on {nt} test prompts: difference {d} [{lo}, {hi}], exact McNemar p = {p:p} (Holm {ph:p}); "
                  "on those test prompts its disagreement error e_D = {e} is read against their own break-even "
                  "L/D = {be} (not the all-prompt L/D of the coverage table).", fam=router["family"],
                  a=row["accuracy"], b=row["baseline_accuracy"], name=row["baseline_policy"], nt=router["n_test"],
                  d=row["difference"], lo=row["diff_lo"], hi=row["diff_hi"], p=row["p_mcnemar"], ph=_num(row["p_holm"]),
                  e=_num(row["e_D"]), be=_num(row["break_even"]))

    def cert_reason(key):
        c = certs[key]["paired"]
        return md("The paired selection-valid interval of the gap{where} is [{lo}, {hi}] around the plug-in {g} "
                  "(level {lvl}); the exact interval of Thm 4 is [{elo}, {ehi}].",
                  where="" if k == 1 else md(" in coverage at tau = {t:g}", t=cov[key]["tau"]), lo=c["lo"], hi=c["hi"],
                  g=c["gap"], lvl=1 - numbers["certificates"]["alpha"], elo=certs[key]["exact"]["lo"],
                  ehi=certs[key]["exact"]["hi"]) + (
            md(" Its lower limit is below the useful size {e}: the gap is certified, but it may be small.",
               e=s["effect"]) if 0 < c["lo"] < s["effect"] else "")

    # rule 1
    if all(_num(cov[key]["D"]) == 0 for key in keys):
        code = "no-gap"
        headline = md("The members never disagree: D = 0 at every audited threshold ({ts}), so there is no oracle "
                      "gap to route.", ts=_taus_text(keys, numbers))
        if pool.get("identical_members"):
            reasons.append("Every member gave the same verdict on every response: the pool's members are identical.")
        steps.append("Nothing to route: diversify the pool (other models, datasets or training recipes) first.")
        return Verdict(code, headline, tuple(reasons), tuple(steps), tuple(findings + [code]), None)
    pw_sentence = _power_sentence(numbers)
    _, state = _current_power(numbers)
    if state == "low":
        findings.append("low-power")
    elif state == "uncertain":
        findings.append("power-uncertain")
    noise_part = numbers.get("noise") or {}
    luck = bool(noise_part.get("luck"))
    if luck:
        findings.append("luck")

    def luck_reason():
        e = noise_part["decomposition"]["estimates"]["noise_share"]
        g = noise_part["decomposition"]["estimates"]["gap"]
        return md("Against the best single member the single-draw oracle gap is G = {g}; the noise share Delta/G = "
                  "{sh} [{lo}, {hi}] is single-draw luck that no single-commit router can close (paper 001).",
                  g=g["value"], sh=e["value"], lo=e["lo"], hi=e["hi"])

    if k == 1:
        findings.append("k1")
        key = keys[0] if "outcome" not in certs else "outcome"
        reasons.append("No nulls that need k > 1 apply; see the certificates.")
        certified = bool(certs[key]["certified"])
        c = certs[key]["paired"]
        reasons.append(cert_reason(key))
        rkey = next(iter(router["levels"])) if router.get("available") else None
        if not certified:
            code = "noise"
            headline = md("The outcome-oracle gap G = {g} is not certified after selecting the best member: its paired "
                          "interval [{lo}, {hi}] reaches zero, so it is within sampling noise.", g=c["gap"], lo=c["lo"], hi=c["hi"])
            step = _cert_step(numbers, key)
            if step:
                steps.append(step)
        else:
            code = "certified-recoverable" if rkey is not None and router["levels"][rkey]["beats"] else "certified"
            headline = md("The outcome-oracle opportunity G = {g} is certified (paired interval [{lo}, {hi}]), but with "
                          "one response per prompt it cannot be told apart from single-draw luck", g=c["gap"],
                          lo=c["lo"], hi=c["hi"])
            if code == "certified-recoverable":
                row = router["levels"][rkey]
                headline += md(", and the quick held-out router beats the calibration-selected member by {d} [{lo}, {hi}].",
                               d=row["difference"], lo=row["diff_lo"], hi=row["diff_hi"])
            else:
                be = _num(cov[keys[0]]["break_even"])
                headline += md("; a router must keep its error on the disagreement prompts below L/D = {be} to beat the "
                               "best member.", be=be)
            reasons.append("At k = 1 the outcome-oracle gap includes single-draw luck (paper 001), which one response "
                           "per prompt cannot separate from reproducible specialization.")
        reasons.append(router_reason(rkey))
        plan = (numbers.get("power") or {}).get("plan_k")
        if plan:
            curve = [r for r in plan["curve"] if r["null"] == "redeal"]
            req = plan["required"].get("redeal")
            row = next((r for r in curve if r["k"] == req), curve[-1] if curve else None)
            if row is not None:
                steps.append(md("Collect k >= 2 responses per prompt and policy to separate luck from specialization: {w} "
                                "k = {kk} the re-deal null would detect a diffuse effect of size L = {x} at tau = {t:g} "
                                "with power {p} [{lo}, {hi}]{tail}.", w="with" if req is not None else "even with",
                                kk=row["k"], x=row["population_L"], t=numbers["power"]["tau"], p=row["reject_rate"],
                                lo=row["ci_lo"], hi=row["ci_hi"],
                                tail="" if req is not None else md(", below the target {tg}", tg=s["target_power"])))
        if code == "certified":
            steps.append("Before training a router, check that the prompts carry a routing signal (text, embeddings, "
                         "features) and evaluate a router family with cross-fitting (`oraclegap routers`).")
            step = _cert_step(numbers, key)
            if step:
                steps.append(step)
        elif code == "certified-recoverable":
            steps.append("Train and evaluate a full router with cross-fitting; the quick router is a lower bound on what "
                         "a tuned one recovers.")
        return Verdict(code, headline, tuple(reasons), tuple(steps), tuple(findings + [code]), None)

    nl = numbers["nulls"]
    rd, mg, det = nl["redeal_taus"], nl["margin_taus"], nl["detected_taus"]
    min_p = min((_num(nl["L"][key][null]["p_holm"]) for key in keys for null in ("redeal", "margin")
                 if nl["L"][key].get(null) and nl["L"][key][null].get("p_holm") is not None), default=float("nan"))
    if not rd and not mg:
        code = "noise"
        headline = md("The gap is within sampling noise: neither null rejects at any threshold (smallest Holm-adjusted "
                      "p = {p:p}).", p=min_p)
        if pw_sentence:
            headline += " " + pw_sentence
            if state == "adequate":
                headline = headline[:-1] + ", so an undetected gap of that size is unlikely."
        Lp = nl["L"][pkey]
        if "mean" in Lp.get("redeal", {}):
            reasons.append(md("At tau = {t:g} the observed gap L = {L} against a re-deal null mean of {m}: excess {e}.",
                              t=cov[pkey]["tau"], L=Lp["observed"], m=Lp["redeal"]["mean"], e=Lp["redeal"]["excess"]))
        if luck:
            reasons.append(luck_reason())
        steps += _plan_steps(numbers)
        if not steps and pw_sentence:
            steps.append("More data is unlikely to reveal a useful gap: look for a more diverse pool instead.")
        return Verdict(code, headline, tuple(reasons), tuple(steps), tuple(findings + [code]), cov[pkey]["tau"])
    if rd and not mg:
        code = "quality-only"
        headline = md("The members differ beyond sampling noise (the re-deal null rejects at tau = {ts}), but the "
                      "margin-preserving null, which allows for differences in member quality, rejects at no "
                      "threshold: no specialization beyond member quality is detected.", ts=_taus_text(rd, numbers))
        if pw_sentence:
            reasons.append(pw_sentence)
        steps += _plan_steps(numbers)
        return Verdict(code, headline, tuple(reasons), tuple(steps), tuple(findings + [code]), cov[pkey]["tau"])
    if not det:
        code = "inconclusive"
        headline = md("The evidence is mixed: the margin-preserving null rejects at tau = {m} and the re-deal null at "
                      "tau = {r}, never both at the same threshold; the margin test leans on its log-odds model.",
                      m=_taus_text(mg, numbers), r=_taus_text(rd, numbers) if rd else "none")
        if pw_sentence:
            reasons.append(pw_sentence)
        steps += _plan_steps(numbers)
        return Verdict(code, headline, tuple(reasons), tuple(steps), tuple(findings + [code]), cov[pkey]["tau"])
    findings.append("detected")
    cert_det = [key for key in det if certs[key]["certified"]]
    if cert_det:
        findings.append("certified")
    rec = [key for key in cert_det if key in beats]

    def pick(cands):
        if pkey in cands:
            return pkey
        return max(cands, key=lambda kk: certs[kk]["paired"]["lo"])

    reasons.append(md("Both nulls reject (Holm over {T} thresholds, level {a}) at tau = {ts}.", T=len(keys),
                      a=s["alpha"], ts=_taus_text(det, numbers)))
    if rec:
        code = "certified-recoverable"
        key = pick(rec)
        row = router["levels"][key]
        headline = md("The gap is real and recoverable: at tau = {t:g} it is certified (L = {L}) and the quick held-out "
                      "router beats the calibration-selected member by {d} [{lo}, {hi}] (Holm p = {p:p}).",
                      t=cov[key]["tau"], L=cov[key]["L"], d=row["difference"], lo=row["diff_lo"], hi=row["diff_hi"],
                      p=row["p_holm"])
        reasons += [cert_reason(key), router_reason(key)]
        if luck:
            reasons.append(luck_reason())
        steps.append("Train and evaluate a full router with cross-fitting (`oraclegap routers`); the quick router is a "
                     "lower bound on what a tuned one recovers.")
        return Verdict(code, headline, tuple(reasons), tuple(steps), tuple(findings + [code]), cov[key]["tau"])
    if luck:
        code = "luck"
        dec = noise_part["decomposition"]["estimates"]
        bok = noise_part["best_of_k"]
        headline = md("Most of the gap is single-draw luck: the noise share of the single-draw oracle gap is {sh} "
                      "[{lo}, {hi}], a part no single-commit router can close; best-of-{K} sampling of the committed "
                      "member can.", sh=dec["noise_share"]["value"], lo=dec["noise_share"]["lo"], hi=dec["noise_share"]["hi"],
                      K=bok["K"])
        reasons.append(luck_reason())
        steps.append(md("Spend the budget on best-of-{K} sampling of the committed member (estimated {b} on held-out "
                        "draws, against the single-draw oracle's {o}) rather than on a router.", K=bok["K"],
                        b=bok["best_of_k_split"]["value"], o=bok["o_exp_independent"]["value"]))
        return Verdict(code, headline, tuple(reasons), tuple(steps), tuple(findings + [code]), cov[pkey]["tau"])
    if cert_det:
        code = "certified"
        key = pick(cert_det)
        headline = md("The gap is certified at tau = {t:g} (L = {L} on D = {D} disagreement prompts), but a router must "
                      "reach a disagreement error e_D < L/D = {be} (all prompts) to beat the best member.",
                      t=cov[key]["tau"],
                      L=cov[key]["L"], D=cov[key]["D"], be=_num(cov[key]["break_even"]))
        reasons += [cert_reason(key), router_reason(key)]
        steps.append("Evaluate stronger router families with cross-fitting (`oraclegap routers`), or collect routing "
                     "signals (prompt text, embeddings, features) the quick router lacked.")
        step = _cert_step(numbers, key)
        if step:
            steps.append(step)
        return Verdict(code, headline, tuple(reasons), tuple(steps), tuple(findings + [code]), cov[key]["tau"])
    code = "detected-not-certified"
    key = pick(det)
    headline = md("The gap is more than sampling noise at tau = {ts} (both nulls reject), but it is not certified "
                  "after selecting the best member: the paired interval at tau = {t:g} is [{lo}, {hi}].",
                  ts=_taus_text(det, numbers), t=cov[key]["tau"], lo=certs[key]["paired"]["lo"], hi=certs[key]["paired"]["hi"])
    step = _cert_step(numbers, key)
    if step:
        steps.append(step)
    return Verdict(code, headline, tuple(reasons), tuple(steps), tuple(findings + [code]), cov[key]["tau"])


# ============================================================================ the audit
@dataclasses.dataclass(frozen=True, eq=False)
class AuditResult:
    """Every number of an audit (``numbers``, JSON-ready; :meth:`to_json`) and the library result
    objects behind them (``results``: coverage, nulls, power, plans, certificates, decomposition,
    best-of-K), with the :class:`Verdict`."""

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
        return frames(self.numbers)["overview"]


def _steps(progress: bool, total: int):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="audit", unit="section", leave=False)


def run_audit(pool: Pool, taus=DEFAULT_TAUS, alpha: float = 0.05, seed: int = 0, *, small: bool = False,
              effect: float = 0.05, power_tau=None, target_power: float = 0.8, source: str | None = None,
              progress: bool = False) -> AuditResult:
    """Run the whole pre-routing audit on ``pool`` (see the module docstring for the sections).

    ``taus``: thresholds; ``alpha``: level of every test and interval; ``seed``: the seed every
    section's seed derives from (:func:`section_seeds`); ``small``: reduced Monte Carlo sizes;
    ``effect``: the population gap L at the primary threshold that counts as useful for the power
    planner; ``source``: how the pool was named (kept in the numbers). Raises ``ValueError`` for
    pools that cannot be audited (:func:`check_auditable`).
    """
    check_auditable(pool)
    s = audit_settings(taus, alpha, seed, small=small, effect=effect, power_tau=power_tau, target_power=target_power)
    seeds = section_seeds(s.seed)
    n, M, k = pool.shape
    bar = _steps(progress, 7)

    def tick(name):
        if bar is not None:
            bar.set_postfix_str(f"{name} done")
            bar.update(1)

    results: dict = {}
    numbers: dict = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "library": f"oraclegap {__version__}",
                     "source": source if source is not None else str(pool.meta.get("dataset", pool.meta.get("source", "pool"))),
                     "settings": s.to_dict(), "pool": _pool_summary(pool)}
    # ---------------------------------------------------------------- coverage
    cov = coverage(pool, s.taus)
    cdict = cov.to_dict()
    keys = list(cdict)
    tau_of = dict(zip(keys, s.taus, strict=True))
    pkey = next(key for key in keys if abs(tau_of[key] - s.primary_tau) < 1e-12)
    p1 = pass1_oracle_gap(pool)
    results["coverage"], results["pass1"] = cov, p1
    numbers["coverage"] = {
        "taus": {key: {"tau": tau_of[key], **row} for key, row in cdict.items()},
        "members": _records(cov.members_frame()),
        "pass1": {"oracle": p1.oracle, "best": p1.best, "best_policy": p1.best_policy, "gap": p1.gap},
        "primary_key": pkey,
    }
    if k > 1:
        grid = np.arange(1, k + 1) / k if k <= 60 else np.linspace(1 / k, 1.0, 60)
        curve = coverage(pool, grid)
        numbers["coverage"]["curve"] = {"tau": grid, "oracle": curve.oracle, "best": curve.best, "mixture": curve.mixture,
                                        "D": curve.D}
    tick("coverage")
    # ---------------------------------------------------------------- nulls
    if k == 1:
        numbers["nulls"] = {"applicable": False, "reason": "No nulls that need k > 1 apply; see the certificates.",
                            "redeal_taus": [], "margin_taus": [], "detected_taus": []}
    else:
        nt = nulls.null_tests(pool, s.taus, n_draws=s.n_draws, seed=seeds["nulls"], progress=progress)
        results["nulls"] = nt
        per = {key: {"tau": tau_of[key]} for key in keys}
        p_raw = {null: [] for null in nulls.NULLS}
        for key in keys:
            for null in nulls.NULLS:
                try:
                    t = nt.get("L", tau_of[key], null)
                except KeyError as exc:  # a test the library skipped (degenerate): no p-value
                    per[key][null] = {"skipped": str(exc.args[0]) if exc.args else "skipped"}
                    p_raw[null].append(float("nan"))
                    continue
                per[key]["observed"] = t.observed
                per[key][null] = {"mean": t.mean, "band": [t.band_lo, t.band_hi], "p": t.p, "excess": t.excess,
                                  "ess": t.ess}
                p_raw[null].append(t.p)
        reject = {}
        for null in nulls.NULLS:
            adj = _holm(p_raw[null])
            for key, pa in zip(keys, adj, strict=True):
                if "skipped" not in per[key][null]:
                    per[key][null]["p_holm"] = _jsonable(pa)
                    per[key][null]["reject"] = bool(pa <= s.alpha)
            reject[null] = [key for key in keys if per[key][null].get("reject")]
        for key in keys:
            per[key]["detected"] = key in reject["redeal"] and key in reject["margin"]
        try:
            ex = nulls.excess_bootstrap(pool, s.primary_tau, n_boot=s.n_excess, n_draws=s.excess_draws,
                                        seed=seeds["excess"])
        except (ValueError, KeyError) as exc:  # e.g. a degenerate test the library refuses
            ex, ex_reason = None, str(exc)
        results["excess"] = ex
        align = None
        if pool.alignment == "seed-aligned":
            da = nulls.draw_alignment(pool, n_draws=s.align_draws, seed=seeds["alignment"])
            results["draw_alignment"] = da
            align = {"matched": da.test.observed, "shuffled": da.expected, "p": da.test.p,
                     "band": [da.test.band_lo, da.test.band_hi], "n_draws": s.align_draws, "seed": seeds["alignment"]}
        numbers["nulls"] = {
            "applicable": True, "n_draws": s.n_draws, "seed": seeds["nulls"], "tests": _jsonable(nt.to_dict()),
            "seed_aligned": pool.alignment == "seed-aligned", "draw_alignment": align,
            "L": _jsonable(per), "redeal_taus": reject["redeal"], "margin_taus": reject["margin"],
            "detected_taus": [key for key in keys if per[key]["detected"]],
            "n_degenerate": nt.n_degenerate,
            "excess": ({"tau": s.primary_tau, "null": "redeal", "reason": ex_reason} if ex is None else
                       {"tau": s.primary_tau, "null": "redeal", "excess": ex.excess, "lo": ex.lo, "hi": ex.hi,
                        "level": ex.level, "n_boot": s.n_excess, "n_draws": s.excess_draws, "seed": seeds["excess"]}),
        }
    tick("nulls")
    # ---------------------------------------------------------------- power and the planner
    eff = useful_effect(pool, s.primary_tau, s.effect, seed=seeds["effect"])
    results["effect"] = eff
    base = effect_centres(pool)  # one population for the current design and every planned one
    common = dict(M=M, tau=s.primary_tau, alpha=s.alpha, n_draws=s.plan_draws, base=base, sigma=eff.sigma)
    pw_num: dict = {"applicable": True, "tau": s.primary_tau, "effect": eff.to_dict(), "target": s.target_power}
    if k > 1:
        pw = studies.power("diffuse", n=n, k=k, n_reps=s.n_reps, nulls=("redeal", "margin"), seed=seeds["power"], **common)
        results["power"] = pw
        fr = pw.frame()
        pw_num["current"] = {
            "n": n, "k": k, "n_reps": s.n_reps, "rows": _records(fr),
            "population_L": float(fr["population_L"].mean()),
            "power": {null: pw.power(null) for null in ("redeal", "margin")},
            "interval": {null: [float(fr.loc[fr["null"] == null, "ci_lo"].iloc[0]),
                                float(fr.loc[fr["null"] == null, "ci_hi"].iloc[0])] for null in ("redeal", "margin")},
        }
        rlo, rhi = pw_num["current"]["interval"]["redeal"]
        pw_num["current"]["state"] = power_state(pw.power("redeal"), rlo, rhi, s.target_power)
        plans = {"plan_k": ("k", plan_grid(k, PLAN_K_REACH)), "plan_n": ("n", plan_grid(n, PLAN_N_REACH))}
    else:
        pw_num["current"] = None
        pw_num["reason"] = "at k = 1 the nulls do not apply; the planner shows what k >= 2 responses per prompt would give"
        plans = {"plan_k": ("k", K1_PLAN)}
    for name, (vary, grid) in plans.items():
        plan = studies.plan_power("diffuse", target=s.target_power, vary=vary, grid=grid, n=n, k=k, n_reps=s.plan_reps,
                                  nulls=("redeal",), seed=seeds[name], progress=progress, **common)
        results[name] = plan
        pw_num[name] = {"vary": vary, "grid": list(grid), "curve": _records(plan.frame()), "required": plan.required,
                        "n_reps": s.plan_reps, "seed": seeds[name]}
    numbers["power"] = _jsonable(pw_num)
    tick("power")
    # ---------------------------------------------------------------- certificates
    T = 1 if k == 1 else len(keys)
    a_cert = s.alpha / T
    levels = [None] if k == 1 else [tau_of[key] for key in keys]
    lkeys = ["outcome"] if k == 1 else keys
    cert_num: dict = {"alpha": a_cert, "outcome": "k = 1 outcomes" if k == 1 else "covered at tau by k draws", "levels": {}}
    results["certificates"] = {}
    for level, key in zip(levels, lkeys, strict=True):
        R = certify.outcomes_from_pool(pool) if level is None else certify.outcomes_from_pool(pool, tau=level)
        ex_i = certify.selection_valid_gap_from_outcomes(R, a_cert, "exact", model_names=pool.policy_names)
        pa_i = certify.selection_valid_gap_from_outcomes(R, a_cert, "paired", model_names=pool.policy_names)
        plan = certificate_prompts(R, a_cert, target=s.effect)
        results["certificates"][key] = {"exact": ex_i, "paired": pa_i, "plan": plan}
        cert_num["levels"][key] = {"tau": level, "exact": _records(ex_i.frame())[0], "paired": _records(pa_i.frame())[0],
                                   "certified": pa_i.certified, "exact_certified": ex_i.certified, "plan": plan.to_dict()}
    cert_num["certified_taus"] = [key for key in lkeys if cert_num["levels"][key]["certified"]]
    numbers["certificates"] = _jsonable(cert_num)
    tick("certificates")
    # ---------------------------------------------------------------- single-draw noise
    if k == 1:
        numbers["noise"] = {"applicable": False, "luck": False,
                            "reason": "at k = 1 the reproducible ceiling O_repro is not identified: one draw cannot tell a "
                                      "member's success probability from luck"}
    else:
        dec = noise.decomposition(pool, n_boot=s.n_boot, seed=seeds["decomposition"])
        bok = noise.best_of_k_check(pool, n_boot=s.n_boot, seed=seeds["best_of_k"])
        results["decomposition"], results["best_of_k"] = dec, bok
        share = dec["noise_share"]
        numbers["noise"] = _jsonable({
            "applicable": True, "decomposition": dec.to_dict(),
            "best_of_k": {"K": bok.K, "best_of_k_split": dataclasses.asdict(bok.best_of_k_split),
                          "best_of_k_insample": bok.best_of_k_insample, "best_of_all_k_insample": bok.best_of_all_k_insample,
                          "o_exp_independent": dataclasses.asdict(bok.o_exp_independent), "o_exp": bok.o_exp,
                          "difference": dataclasses.asdict(bok.difference), "passes": bok.passes,
                          "n_boot": s.n_boot, "seed": seeds["best_of_k"]},
            "luck": bool(not math.isnan(share.lo) and share.lo >= LUCK_SHARE),
            "luck_threshold": LUCK_SHARE,
        })
    tick("noise")
    # ---------------------------------------------------------------- quick router
    numbers["router"] = _jsonable(quick_router(pool, levels, lkeys, alpha=s.alpha, seed=seeds["router"],
                                               n_boot=max(s.n_boot, 100)))
    tick("router")
    numbers = _jsonable(numbers)
    numbers["verdict"] = _jsonable(verdict(numbers).to_dict())
    tick("verdict")
    if bar is not None:
        bar.close()
    return AuditResult(numbers, results, s)


# ============================================================================ more responses
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
    if not isinstance(pool, Pool):
        raise TypeError(f"pool must be an oraclegap Pool, got {type(pool).__name__}")
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


# ============================================================================ files
def load_numbers(path) -> dict:
    """Read an ``audit.json`` (checking that it is one)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"audit file {str(path)!r} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ValueError(f"{str(path)!r} is not an oraclegap audit (format {data.get('format') if isinstance(data, dict) else None!r})")
    if data.get("version", 0) > FORMAT_VERSION:
        raise ValueError(f"{str(path)!r} has audit format version {data['version']}, newer than this library reads")
    return data


#: The files an audit writes into its folder (and the only ones it ever replaces or removes).
AUDIT_FILES = ("audit.json", "audit.ipynb", "report.html")
#: The hidden manifest in the folder: the files the audit wrote there, with their SHA-256.
MANIFEST_NAME = ".oraclegap-audit.json"
MANIFEST_FORMAT = "oraclegap.audit-files"
#: Marker inside the audit's temporary folder ``.DIR.tmp-<pid>-<hex>`` beside DIR.
TMP_MARK = ".oraclegap-audit-tmp"
_LEGACY_TMP_AGE_S = 24 * 3600  # temporary folders of older versions (no pid, no marker): removed after a day


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def owned_files(out) -> dict:
    """The files of folder ``out`` an earlier audit wrote, as {name: accepted SHA-256 list}: from its
    manifest (:data:`MANIFEST_NAME`), or, for a folder an older version wrote (no manifest, only
    audit files, a valid ``audit.json``), those files. ``{}`` for an empty or absent folder. A folder
    holding other files without a manifest, a manifest naming anything but :data:`AUDIT_FILES`, and
    an audit file changed since the audit wrote it raise ``ValueError``: the audit never replaces
    or deletes a file it did not write."""
    out = Path(out)
    if not out.is_dir():
        return {}
    entries = sorted(p.name for p in out.iterdir())
    man = out / MANIFEST_NAME
    if man.exists():
        try:
            data = json.loads(man.read_text(encoding="utf-8"))
            files = data["files"] if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT else None
            ok = isinstance(files, dict) and all(k in AUDIT_FILES and isinstance(v, list) for k, v in files.items())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError):
            ok = False
        if not ok:
            raise ValueError(f"--out {str(out)!r} has a damaged audit manifest {MANIFEST_NAME}; refusing to replace "
                             "anything in it: choose a new or empty directory (or move the audit files out)")
        for name, hashes in files.items():
            f = out / name
            if f.exists() and (not f.is_file() or _sha256(f) not in hashes):
                raise ValueError(f"--out {str(out)!r}: {name} was changed since the audit wrote it; refusing to replace "
                                 "it: move it away (or delete it) and rerun")
        return {k: list(v) for k, v in files.items() if (out / k).exists()}
    if not entries:
        return {}
    if set(entries) <= set(AUDIT_FILES) and "audit.json" in entries:
        try:
            load_numbers(out / "audit.json")
        except ValueError:
            pass
        else:  # written by an older version (before the manifest): every entry is an audit file
            return {name: [_sha256(out / name)] for name in entries}
    theirs = [e for e in entries if e not in AUDIT_FILES]
    raise ValueError(f"--out {str(out)!r} exists and is not an audit directory (no audit manifest; it holds "
                     f"{', '.join(theirs[:4] or entries[:4])}{', ...' if len(theirs) > 4 else ''}); refusing to overwrite "
                     "anything in it: choose a new or empty directory")


def is_audit_dir(path) -> bool:
    """True for a directory an audit wrote (its manifest, or an older version's audit files) or an empty one."""
    path = Path(path)
    if not path.is_dir():
        return False
    try:
        owned_files(path)
    except ValueError:
        return False
    return True


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def clean_stale_temporaries(out) -> list:
    """Remove the temporary folders ``.DIR.tmp-<pid>-*`` beside ``out`` that earlier audits left when
    they were killed: those holding the audit's marker whose process no longer runs, and those of
    older versions (no pid) that hold only the audit's own files and are more than a day old. A
    live audit's folder is never touched. Returns the removed paths."""
    import re
    import time

    out = Path(out)
    parent = out.parent
    if not parent.is_dir():
        return []
    removed = []
    pat = re.compile(rf"^\.{re.escape(out.name)}\.(tmp|old)-(?:(\d+)-[0-9a-f]+|[A-Za-z0-9_]+)$")
    known = {*AUDIT_FILES, TMP_MARK, MANIFEST_NAME, "audit_report.py", "audit_report.ipynb"}
    for entry in parent.iterdir():
        m = pat.match(entry.name)
        if not m or not entry.is_dir() or entry.is_symlink():
            continue
        try:
            names = {p.name for p in entry.iterdir()}
            if m.group(2) is not None:  # this version's: the pid that made it is gone
                stale = (TMP_MARK in names or names <= known) and not _pid_alive(int(m.group(2)))
            else:
                stale = names <= known and time.time() - entry.stat().st_mtime > _LEGACY_TMP_AGE_S
        except OSError:
            continue
        if stale:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _pool_path(source) -> Path | None:
    if source is None or isinstance(source, Pool):
        return None
    spec = os.fspath(source)
    p = Path(spec)
    if not p.exists() and ":" in spec:
        p = Path(spec.rsplit(":", 1)[0])
    return p if p.exists() else None


def check_out(out, pool=None) -> Path:
    """Check an audit's target folder before any work: not a file, its nearest existing ancestor a
    directory we can write into, POOL (a path) neither inside it nor containing it, and, when it
    exists, an audit folder (:func:`owned_files`) or an empty one. Raises ``ValueError``."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, expected a directory for the report")
    anc = out
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise ValueError(f"--out {str(out)!r}: {str(anc)!r} is a file, expected a directory")
    src = _pool_path(pool)
    if src is not None:
        o, s_ = out.resolve(), src.resolve()
        if s_ == o or o in s_.parents:
            raise ValueError(f"POOL {str(pool)!r} lies inside --out {str(out)!r}; the report folder must not hold its "
                             "input: choose another --out")
        if s_.is_dir() and s_ in o.parents:
            raise ValueError(f"--out {str(out)!r} lies inside POOL {str(pool)!r}; choose a folder outside the pool")
    owned_files(out)
    for probe_dir in ([out.parent, out] if out.exists() else [anc]):  # where the temporary folder and the files go
        try:
            probe = Path(tempfile.mkdtemp(prefix=f".{out.name}.probe-", dir=probe_dir))
            probe.rmdir()
        except OSError as exc:
            raise ValueError(f"--out {str(out)!r}: cannot write into {str(probe_dir)!r} ({exc.strerror or exc})") from None
    return out


_check_out = check_out  # the old private name


def notebook_source() -> Path:
    """The report notebook shipped inside the package (jupytext py:percent)."""
    return Path(__file__).resolve().parent / "notebooks" / "audit.py"


def _find_quarto() -> str | None:
    """A Quarto to render the report with, installing nothing: ``quarto`` on PATH, else the one
    ``make quarto`` installed into the project's ``.quarto-kit/`` (of this source tree or of the
    current folder), else one in the virtual environment (:func:`oraclegap.book.quarto.find_quarto`)."""
    from .book.quarto import find_quarto

    for root in dict.fromkeys((Path(__file__).resolve().parents[2], Path.cwd())):
        found = find_quarto(root, install=False, log=lambda *a, **k: None)
        if found:
            return found.path
    return None


def render_report(executed: Path, html_path: Path) -> str:
    """Render an executed report notebook to one HTML page; returns the renderer used.

    Quarto (``quarto render --no-execute``, code hidden, resources embedded) when one is found
    (:func:`_find_quarto`) and succeeds, else nbconvert's HTML exporter with the code cells hidden.
    """
    import subprocess

    executed, html_path = Path(executed), Path(html_path)
    quarto = _find_quarto()
    if quarto:
        res = subprocess.run([quarto, "render", executed.name, "--to", "html", "--no-execute", "-M", "echo:false",
                              "-M", "embed-resources:true", "--output", html_path.name], cwd=executed.parent,
                             capture_output=True, text=True)
        produced = executed.parent / html_path.name
        if res.returncode == 0 and produced.is_file():
            if produced.resolve() != html_path.resolve():
                os.replace(produced, html_path)
            return "quarto"
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(executed, as_version=4)
    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input = True
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": "oraclegap audit"}})
    html_path.write_text(body, encoding="utf-8")
    return "nbconvert"


def _check_out(out: Path) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file; give a directory for the report")
    if out.exists() and not is_audit_dir(out):
        raise ValueError(f"--out {str(out)!r} exists and is not an audit directory (no oraclegap audit.json); "
                         "refusing to overwrite it: choose a new or empty directory")
    return out


def write_audit(pool: Pool, out, *, source: str | None = None, report: bool = True, progress: bool = False,
                timeout: int = 900, **kwargs) -> tuple[AuditResult, dict]:
    """Run :func:`run_audit` and write ``out/audit.json``, ``out/audit.ipynb`` (the executed report
    notebook) and ``out/report.html``.

    The target is checked before any work (:func:`check_out`: a file, an unwritable parent, POOL
    inside ``out``, a folder holding files no audit wrote are refused) and temporary folders that
    killed audits left beside it are removed (:func:`clean_stale_temporaries`). Everything is
    written into a temporary folder ``.OUT.tmp-<pid>-<hex>`` beside ``out``: a new ``out`` is that
    folder renamed into place; an existing audit folder has only the files the earlier audit
    wrote (its manifest :data:`MANIFEST_NAME`) replaced, each by an atomic rename, and those this
    run does not write (``report.html`` after ``report=False``) removed; any other file in it (a
    note of yours) is kept. The manifest is rewritten first listing both versions and last listing
    the new files, so a run killed in between leaves a folder the next run still recognises.
    ``report=False`` writes ``audit.json`` alone. Returns the result and a dict of the written paths
    and the renderer used. ``kwargs`` go to :func:`run_audit`.
    """
    import secrets

    from ._io import atomic_write, fsync_dir

    out = check_out(Path(out), source)
    clean_stale_temporaries(out)
    if report:
        missing = [m for m in ("papermill", "jupytext", "nbconvert", "nbformat") if _missing(m)]
        if missing:
            raise ValueError(f"the HTML report needs {', '.join(missing)} (pip install 'oraclegap[book]'); "
                             "or ask for audit.json alone")
    res = run_audit(pool, source=source, progress=progress, **kwargs)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    tmp.mkdir()
    (tmp / TMP_MARK).write_text(str(os.getpid()), encoding="utf-8")
    info = {"renderer": None}
    try:
        jpath = tmp / "audit.json"
        from . import _buildinfo

        numbers = dict(res.numbers, build=_buildinfo.build_info(small=bool(res.numbers["settings"]["small"])))
        jpath.write_text(json.dumps(numbers, indent=2, allow_nan=False), encoding="utf-8")
        if report:
            info["renderer"] = _report(tmp, jpath, numbers, timeout)
            from .book.buildline import stamp_html

            page = tmp / "report.html"
            line = _buildinfo.build_line(dict(numbers["build"], renderer=info["renderer"]))
            page.write_text(stamp_html(page.read_text(encoding="utf-8"), line), encoding="utf-8")
        written = {name: _sha256(tmp / name) for name in AUDIT_FILES if (tmp / name).is_file()}
        old = owned_files(check_out(out, source))  # still safe to replace?
        manifest = lambda files: json.dumps({"format": MANIFEST_FORMAT, "version": 1, "files": files},  # noqa: E731
                                            indent=2, sort_keys=True)
        if not out.exists():
            for extra in [p for p in tmp.iterdir() if p.name not in written]:  # leftovers of the renderer, the marker
                shutil.rmtree(extra) if extra.is_dir() and not extra.is_symlink() else extra.unlink()
            (tmp / MANIFEST_NAME).write_text(manifest({k: [v] for k, v in written.items()}), encoding="utf-8")
            os.replace(tmp, out)
            fsync_dir(out.parent)
        else:
            both = {name: sorted(set(old.get(name, [])) | ({written[name]} if name in written else set()))
                    for name in set(old) | set(written)}
            atomic_write(out / MANIFEST_NAME, manifest(both))
            for name in written:
                os.replace(tmp / name, out / name)
            for name in set(old) - set(written):
                (out / name).unlink(missing_ok=True)
            fsync_dir(out)
            atomic_write(out / MANIFEST_NAME, manifest({k: [v] for k, v in written.items()}))
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    info.update({"dir": str(out), "json": str(out / "audit.json")})
    if report:
        info.update({"html": str(out / "report.html"), "notebook": str(out / "audit.ipynb")})
    return res, info


def _missing(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is None


def _execute(src: Path, out: Path, parameters: dict, cwd: Path, timeout: int) -> Path:
    """Execute the report notebook with papermill (through :mod:`oraclegap.book`)."""
    from . import book

    return book.execute_chapter(src, out, parameters, cwd=cwd, timeout=timeout)


def _report(tmp: Path, jpath: Path, numbers: dict, timeout: int) -> str:
    import nbformat

    src = tmp / "audit_report.py"
    shutil.copyfile(notebook_source(), src)
    out = tmp / "audit.ipynb"
    params = {"AUDIT_JSON": str(jpath.resolve()), "POOL": numbers.get("source", "pool"), "SMALL": numbers["settings"]["small"]}
    try:
        _execute(src, out, params, tmp, timeout)
    except Exception as exc:  # papermill raises its own types; report the notebook's first error line
        msg = str(exc).strip().splitlines()
        raise ValueError(f"the report notebook failed: {type(exc).__name__}: {msg[-1] if msg else ''}") from None
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for c in nbformat.read(out, as_version=4).cells
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    if errors:
        raise ValueError(f"the report notebook failed: {errors[0]}")
    renderer = render_report(out, tmp / "report.html")
    for leftover in (src, tmp / "audit_report.ipynb"):
        if leftover.exists():
            leftover.unlink()
    return renderer


# ============================================================================ display: text
def _yes(b) -> str:
    return "yes" if b else "no"


def texts(numbers: dict) -> dict:
    """Markdown for every section of the report, built from the numbers (nothing typed by hand)."""
    out = {}
    pool, cov, s = numbers["pool"], numbers["coverage"]["taus"], numbers["settings"]
    keys = list(cov)
    pkey = numbers["coverage"]["primary_key"]
    k = pool["k"]
    mem = sorted(pool["members"], key=lambda r: r["mean_rate"])
    deg, meta = pool["degenerate"], pool["metadata"]
    out["title"] = md("Pool: **{src}**.", src=numbers["source"])
    out["summary"] = md(
        "The pool holds {n} prompts, {M} policies and k = {k} response{s} per prompt and policy (draw alignment: "
        "{al}). {d} prompts are degenerate ({w} with every response wrong, {r} with every response right): no null "
        "can move them. Member success rates run from {lo} ({lo_name}) to {hi} ({hi_name}). Metadata present: "
        "prompt text {text}, embeddings {emb}, answers {ans}, costs {cost}, dataset labels {dl}, splits {sp}.",
        n=pool["n_prompts"], M=pool["n_policies"], k=k, s="" if k == 1 else "s", al=pool["alignment"],
        d=deg["degenerate"], w=deg["all_wrong"], r=deg["all_right"], lo=mem[0]["mean_rate"], lo_name=mem[0]["policy"],
        hi=mem[-1]["mean_rate"], hi_name=mem[-1]["policy"], text=_yes(meta["text"]),
        emb="no" if meta["embeddings"] is None else md("yes ({d} dimensions)", d=meta["embeddings"]),
        ans=_yes(meta["answers"]), cost=_yes(meta["cost"]),
        dl="no" if not meta["dataset_levels"] else md("yes ({d} level{s})", d=meta["dataset_levels"],
                                                       s="" if meta["dataset_levels"] == 1 else "s"),
        sp=", ".join(meta["splits"]) if meta["splits"] else "none")
    row = cov[pkey]
    if _num(row["D"]) > 0:
        cov_txt = md("At tau = {t:g} the oracle covers {o} of the prompts and the best member ({b}) {c}: the oracle gap "
                     "L = {L} sits on D = {D} disagreement prompts, so a router beats the best member only if its error "
                     "on those prompts stays below the break-even L/D = {be}.", t=row["tau"], o=row["oracle"],
                     b=row["best_policy"], c=row["best"], L=row["L"], D=row["D"], be=_num(row["break_even"]))
    else:
        cov_txt = md("At tau = {t:g} no prompt separates the members (D = 0): the oracle gap is zero.", t=row["tau"])
    if k == 1:
        cov_txt += " At k = 1 every threshold reads the single verdict, so all thresholds give the same numbers."
    out["coverage"] = cov_txt
    nl = numbers["nulls"]
    if not nl["applicable"]:
        out["nulls"] = nl["reason"]
    else:
        det = nl["detected_taus"]
        L = nl["L"][pkey]
        ex = nl["excess"]
        head = (md("Both nulls reject at tau = {ts} (Holm-adjusted over the {T} thresholds within each null, level {a}).",
                   ts=_taus_text(det, numbers), T=len(keys), a=s["alpha"]) if det else
                md("The two nulls never both reject at a threshold (Holm-adjusted over the {T} thresholds, level {a}); "
                   "the re-deal null rejects at tau = {r}, the margin-preserving null at tau = {m}.", T=len(keys),
                   a=s["alpha"], r=_taus_text(nl["redeal_taus"], numbers), m=_taus_text(nl["margin_taus"], numbers)))
        body = ""
        if "mean" in L.get("redeal", {}) and "excess" in ex:
            body = md(" At tau = {t:g} the observed L = {o} against null means {mr} (re-deal) and {mm} (margin): the "
                      "re-deal excess is {e} with a {lvl:%} prompt-bootstrap interval [{lo}, {hi}].", t=L["tau"],
                      o=L["observed"], mr=L["redeal"]["mean"], mm=_num(L["margin"].get("mean")), e=ex["excess"], lvl=ex["level"],
                      lo=ex["lo"], hi=ex["hi"])
        out["nulls"] = head + body
        caveat = _alignment_caveat(numbers)
        if caveat is not None:
            out["nulls"] += " " + caveat[0]
    pw = numbers["power"]
    ps = _power_sentence(numbers)
    eff = pw["effect"]
    eff_txt = md("The useful effect is a diffuse perturbation of every member's log-odds (sd {sg}) centred on this "
                 "pool's prompt rates, calibrated to a population gap L = {x} at tau = {t:g}{r}.", sg=eff["sigma"],
                 x=eff["calibrated_L"], t=eff["tau"],
                 r="" if eff["reachable"] else md(" (the target {tg} is out of reach; this is the largest)", tg=eff["target_L"]))
    out["power"] = eff_txt + (" " + ps if ps else " " + pw.get("reason", ""))
    c = numbers["certificates"]
    cert_keys = list(c["levels"])
    crow = c["levels"]["outcome"] if k == 1 else c["levels"][pkey]
    where = "" if k == 1 else md(" in coverage at tau = {t:g}", t=crow["tau"])
    cert_txt = md("At level {lvl} (simultaneous over the {T} threshold{pl}), the paired selection-valid interval of the "
                  "gap{where} is [{lo}, {hi}] around the plug-in {g}; Thm 4's exact interval is [{elo}, {ehi}] and the "
                  "naive interval that ignores the selection of the best member is [{nlo}, {nhi}]. Certified at: {ct}.",
                  lvl=1 - c["alpha"], T=len(cert_keys), pl="" if len(cert_keys) == 1 else "s", where=where,
                  lo=crow["paired"]["lo"], hi=crow["paired"]["hi"], g=crow["paired"]["gap"], elo=crow["exact"]["lo"],
                  ehi=crow["exact"]["hi"], nlo=crow["paired"]["naive_lo"], nhi=crow["paired"]["naive_hi"],
                  ct="none" if not c["certified_taus"] else ("the k = 1 outcomes" if k == 1 else
                                                              _taus_text(c["certified_taus"], numbers)))
    plan = crow["plan"]
    if plan["certified_now"]:
        cert_txt += md(" Its lower limit already exceeds the useful size {t}.", t=plan["target"])
    else:
        cert_txt += " " + (_cert_step(numbers, "outcome" if k == 1 else pkey) or "")
    if k > 1:
        cert_txt += (" The outcome here is whether k draws cover tau; the interval allows for prompt sampling and for "
                     "picking the best member, not for draw noise: even exchangeable members have a positive gap in "
                     "this outcome, which is why the verdict asks both nulls to reject first.")
    else:
        cert_txt += (" At k = 1 the outcome-oracle gap includes single-draw luck; k >= 2 responses per prompt would "
                     "separate it.")
    out["certificates"] = cert_txt
    nz = numbers["noise"]
    if not nz["applicable"]:
        out["noise"] = md("Not applicable: {r}.", r=nz["reason"])
    else:
        e = nz["decomposition"]["estimates"]
        b = nz["best_of_k"]
        share = e["noise_share"]
        if _num(share["lo"]) >= LUCK_SHARE:
            most = "most"
        elif _num(share["value"]) >= LUCK_SHARE:
            most = "perhaps most"
        else:
            most = "less than half" if _num(share["hi"]) < LUCK_SHARE else "probably less than half"
        out["noise"] = md(
            "The expected single-draw oracle O_exp = {oe} [{oel}, {oeh}] splits into the reproducible ceiling "
            "O_repro = {orp} [{orl}, {orh}] and the floor Delta = {d} [{dl}, {dh}]. Against the best single member "
            "({bs}) the gap is G = {g} [{gl}, {gh}] and the noise share Delta/G = {sh} [{shl}, {shh}]: {most} of the "
            "single-draw gap is single-draw luck. Best-of-{K} on the committed member, scored on held-out draws, "
            "reaches {bk} against the independence-form oracle {oi}: difference {df} [{dfl}, {dfh}], {res}.",
            oe=e["o_exp"]["value"], oel=e["o_exp"]["lo"], oeh=e["o_exp"]["hi"], orp=e["o_repro"]["value"],
            orl=e["o_repro"]["lo"], orh=e["o_repro"]["hi"], d=e["delta"]["value"], dl=e["delta"]["lo"], dh=e["delta"]["hi"],
            bs=e["best_single"]["value"], g=e["gap"]["value"], gl=e["gap"]["lo"], gh=e["gap"]["hi"], sh=share["value"],
            shl=share["lo"], shh=share["hi"], most=most, K=b["K"], bk=b["best_of_k_split"]["value"],
            oi=b["o_exp_independent"]["value"], df=b["difference"]["value"], dfl=b["difference"]["lo"],
            dfh=b["difference"]["hi"],
            res="so the falsifier of paper 001 does not fire" if b["passes"] else "below zero: paper 001's falsifier fires")
    r = numbers["router"]
    if not r.get("available"):
        out["router"] = md("No quick router: {why}.", why=r.get("reason", "not available"))
    else:
        rk = "outcome" if k == 1 else pkey
        row = r["levels"][rk]
        rec = (md(" It recovers {rho} [{lo}, {hi}] of the split-selected gap G_b = {gb}.", rho=row["recovered"],
                  lo=row["recovered_lo"], hi=row["recovered_hi"], gb=row["G_b"]) if row.get("recovered_reported") else
               md(" The split-selected gap G_b = {gb} [{lo}, {hi}] is not certified on the test half, so no recovered "
                  "fraction is reported.", gb=row["G_b"], lo=row["G_b_lo"], hi=row["G_b_hi"]))
        out["router"] = md(
            "{fam} ({how}) was fitted on {nc} calibration prompts and compared on {nt} held-out prompts with the "
            "member selected on the calibration prompts ({b}){where}: {a} against {ba}, difference {d} [{dl}, {dh}], "
            "exact McNemar p = {p:p}{holm}; disagreement error e_D = {e} against the break-even L/D = {be} on the test "
            "prompts.", holm="" if k == 1 else md(" (Holm over thresholds {ph:p})", ph=_num(row["p_holm"])), fam=r["family"], how=r["how"], nc=r["n_cal"], nt=r["n_test"],
            b=row["baseline_policy"], where="" if k == 1 else md(" at tau = {t:g}", t=row["tau"]), a=row["accuracy"],
            ba=row["baseline_accuracy"], d=row["difference"], dl=row["diff_lo"], dh=row["diff_hi"], p=row["p_mcnemar"],
            e=_num(row["e_D"]), be=_num(row["break_even"])) + rec
    v = numbers["verdict"]
    out["verdict"] = Verdict(v["code"], v["headline"], tuple(v["reasons"]), tuple(v["next_steps"]), tuple(v["findings"]),
                             v["tau"]).markdown()
    out["settings"] = md("Settings: thresholds {ts}; level alpha = {a}; seed {seed}{small}; {nd:d} null draws, {nb:d} "
                         "bootstrap resamples, {nr:d} power replicates ({pr:d} per planner point).",
                         ts=", ".join(f"{t:g}" for t in s["taus"]), a=s["alpha"], seed=s["seed"],
                         small=" (small run: reduced Monte Carlo sizes)" if s["small"] else "", nd=s["n_draws"],
                         nb=s["n_boot"], nr=s["n_reps"], pr=s["plan_reps"])
    if numbers.get("build"):  # what computed these numbers (commit, lock, library versions, date)
        from ._buildinfo import build_line

        out["build"] = "Computed by " + build_line(numbers["build"]).removeprefix("built ") + "."
    return out


# ============================================================================ display: tables
def frames(numbers: dict) -> dict:
    """Tidy tables of the report (pandas), built from the numbers."""
    out = {}
    cov = numbers["coverage"]["taus"]
    keys = list(cov)
    k = numbers["pool"]["k"]
    rows = []
    nl = numbers["nulls"]
    certs = numbers["certificates"]["levels"]
    for key in keys:
        r = dict(cov[key])
        if nl["applicable"]:
            for null in ("redeal", "margin"):
                r[f"p_{null}"] = _num(nl["L"][key].get(null, {}).get("p_holm"))
        ck = "outcome" if k == 1 else key
        r["cert_lo"], r["cert_hi"] = certs[ck]["paired"]["lo"], certs[ck]["paired"]["hi"]
        rows.append(r)
    df = pd.DataFrame(rows).rename(columns={"break_even": "L/D"})
    if k == 1:
        df = df.iloc[[0]].drop(columns=["tau"] + [c for c in ("need",) if c in df.columns])
    out["overview"] = df
    out["coverage"] = df.drop(columns=[c for c in df.columns if c.startswith(("p_", "cert_")) or c == "gap"])
    mem = pd.DataFrame(numbers["pool"]["members"])
    if k > 1:
        wide = pd.DataFrame(numbers["coverage"]["members"]).pivot(index="policy", columns="tau", values="coverage")
        wide.columns = [f"C({t:g})" for t in wide.columns]
        mem = mem.merge(wide, left_on="policy", right_index=True)
    out["members"] = mem
    if nl["applicable"]:
        nrows = []
        for key in keys:
            L = nl["L"][key]
            for null in ("redeal", "margin"):
                t = L.get(null, {})
                nrows.append({"tau": L["tau"], "null": null, "observed": L.get("observed"), "null_mean": t.get("mean"),
                              "band_lo": (t.get("band") or [None, None])[0], "band_hi": (t.get("band") or [None, None])[1],
                              "excess": t.get("excess"), "p": t.get("p"), "p_holm": t.get("p_holm"),
                              "reject": bool(t.get("reject"))})
        out["nulls"] = pd.DataFrame(nrows)
    pw = numbers["power"]
    prow = []
    if pw.get("current"):
        for r in pw["current"]["rows"]:
            prow.append({"design": "this design", "n": r["n"], "k": r["k"], "null": r["null"], "population_L": r["population_L"],
                         "power": r["reject_rate"], "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "reps": r["reps"]})
    for name in ("plan_k", "plan_n"):
        plan = pw.get(name)
        if not plan:
            continue
        for r in plan["curve"]:
            prow.append({"design": f"more {'responses' if plan['vary'] == 'k' else 'prompts'}", "n": r["n"], "k": r["k"],
                         "null": r["null"], "population_L": r["population_L"], "power": r["reject_rate"],
                         "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "reps": r["reps"]})
    out["power"] = pd.DataFrame(prow)
    crow = []
    for lev in certs.values():
        for method in ("paired", "exact"):
            c = lev[method]
            crow.append({"tau": lev["tau"], "method": method, "best_model": c["best_model"], "gap": c["gap"],
                         "naive_lo": c["naive_lo"], "naive_hi": c["naive_hi"], "lo": c["lo"], "hi": c["hi"],
                         "certified": bool(c["lo"] > 0), "prompts_needed": lev["plan"]["n_needed"]})
    cf = pd.DataFrame(crow)
    cf["prompts_needed"] = pd.array(cf["prompts_needed"].tolist(), dtype="Int64")  # None where no size suffices
    if k == 1:
        cf = cf.drop(columns=["tau"])
    out["certificates"] = cf
    nz = numbers["noise"]
    if nz["applicable"]:
        est = nz["decomposition"]["estimates"]
        show = ("best_single", "o_repro", "o_repro_split_loo", "o_exp", "delta", "gap", "g_rec", "noise_share",
                "frechet_upper")
        out["noise"] = pd.DataFrame([{"quantity": q, **{c: est[q][c] for c in ("value", "lo", "hi", "interval")}}
                                     for q in show])
        b = nz["best_of_k"]
        out["best_of_k"] = pd.DataFrame([
            {"quantity": f"best-of-{b['K']}, committed on half the draws", "value": b["best_of_k_split"]["value"],
             "lo": b["best_of_k_split"]["lo"], "hi": b["best_of_k_split"]["hi"]},
            {"quantity": "single-draw oracle, independence form", "value": b["o_exp_independent"]["value"],
             "lo": b["o_exp_independent"]["lo"], "hi": b["o_exp_independent"]["hi"]},
            {"quantity": "difference", "value": b["difference"]["value"], "lo": b["difference"]["lo"], "hi": b["difference"]["hi"]},
        ])
    r = numbers["router"]
    if r.get("available"):
        rrow = []
        for _key, row in r["levels"].items():
            rrow.append({"tau": row["tau"], "router": row["accuracy"], "baseline": row["baseline_accuracy"],
                         "baseline_policy": row["baseline_policy"], "difference": row["difference"], "diff_lo": row["diff_lo"],
                         "diff_hi": row["diff_hi"], "p_mcnemar": row["p_mcnemar"], "p_holm": row["p_holm"],
                         "e_D": row["e_D"], "L/D": row["break_even"], "recovered": row["recovered"]})
        rf = pd.DataFrame(rrow)
        out["router"] = rf.drop(columns=["tau"]) if k == 1 else rf
    return out


# ============================================================================ display: figures
def _err(v, lo, hi) -> np.ndarray:
    """Error-bar lengths [2, n] from limits (a value outside its interval gets a zero-length side)."""
    v, lo, hi = (np.asarray(a, dtype=float) for a in (v, lo, hi))
    return np.vstack([np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)])


def plot_coverage(numbers: dict):
    """Oracle, best member and uniform mixture coverage over thresholds (k > 1), audited taus marked."""
    import matplotlib.pyplot as plt

    cv = numbers["coverage"].get("curve")
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    if cv is None:
        ax.text(0.5, 0.5, "k = 1: one verdict per cell, no coverage curve", ha="center", va="center")
        ax.set_axis_off()
        return fig
    for name, style in (("oracle", "-"), ("best", "--"), ("mixture", ":")):
        ax.step(cv["tau"], cv[name], where="post", ls=style, label={"best": "best member"}.get(name, name))
    for row in numbers["coverage"]["taus"].values():
        ax.axvline(row["tau"], color="0.8", lw=0.8, zorder=0)
    ax.set(xlabel="threshold tau", ylabel="coverage", ylim=(0, 1.02))
    ax.legend()
    return fig


def plot_nulls(numbers: dict):
    """Observed L(tau) against each null's mean and 90% band."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    nl = numbers["nulls"]
    if not nl["applicable"]:
        ax.text(0.5, 0.5, "k = 1: no nulls that need k > 1 apply", ha="center", va="center")
        ax.set_axis_off()
        return fig
    taus = np.array([nl["L"][key]["tau"] for key in nl["L"]])
    obs = np.array([_num(nl["L"][key].get("observed")) for key in nl["L"]])
    for j, null in enumerate(("redeal", "margin")):
        m = np.array([_num(nl["L"][key].get(null, {}).get("mean")) for key in nl["L"]])
        band = np.array([(nl["L"][key].get(null, {}).get("band") or [np.nan, np.nan]) for key in nl["L"]], dtype=float)
        x = np.arange(taus.size) + (j - 0.5) * 0.18
        ax.errorbar(x, m, yerr=_err(m, band[:, 0], band[:, 1]), fmt="o", capsize=3, label=f"{null} null: mean, 90% band")
    ax.plot(np.arange(taus.size), obs, "k*", ms=10, label="observed L")
    ax.set_xticks(np.arange(taus.size), [f"{t:g}" for t in taus])
    ax.set(xlabel="threshold tau", ylabel="oracle gap L")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
    return fig


def plot_power(numbers: dict):
    """Power of the re-deal null (Wilson 95% intervals) over responses per prompt and prompts."""
    import matplotlib.pyplot as plt

    pw = numbers["power"]
    plans = [(name, pw[name]) for name in ("plan_k", "plan_n") if pw.get(name)]
    fig, axes = plt.subplots(1, len(plans), figsize=(3.4 * len(plans) + 0.5, 3.4), squeeze=False)
    cur = pw.get("current")
    for ax, (_name, plan) in zip(axes[0], plans, strict=True):
        var = plan["vary"]
        rows = [r for r in plan["curve"] if r["null"] == "redeal"]
        if cur:
            rows = [r for r in cur["rows"] if r["null"] == "redeal"] + rows
        x = np.array([r[var] for r in rows], dtype=float)
        y = np.array([r["reject_rate"] for r in rows])
        lo = np.array([r["ci_lo"] for r in rows])
        hi = np.array([r["ci_hi"] for r in rows])
        ax.errorbar(x, y, yerr=_err(y, lo, hi), fmt="o-", capsize=3)
        ax.axhline(pw["target"], color="0.5", ls="--", lw=1)
        ax.set(xscale="log", xlabel="responses per prompt k" if var == "k" else "prompts n", ylabel="power (re-deal)",
               ylim=(-0.02, 1.02))
        ax.set_xticks(x, [f"{int(v)}" for v in x])
        ax.minorticks_off()
    return fig


def plot_noise(numbers: dict):
    """Best single member, O_repro and O_exp with their intervals (paper 001's ladder)."""
    import matplotlib.pyplot as plt

    e = numbers["noise"]["decomposition"]["estimates"]
    names = [("best_single", "best single"), ("o_repro", "O_repro"), ("o_exp", "O_exp")]
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    v = np.array([e[q]["value"] for q, _ in names])
    lo = np.array([e[q]["lo"] for q, _ in names])
    hi = np.array([e[q]["hi"] for q, _ in names])
    ax.barh(np.arange(3), v, xerr=_err(v, lo, hi), capsize=4, color=["#949494", "#0173b2", "#de8f05"])
    ax.set_yticks(np.arange(3), [label for _, label in names])
    ax.set(xlabel="score (mean over prompts)", xlim=(0, 1))
    return fig
