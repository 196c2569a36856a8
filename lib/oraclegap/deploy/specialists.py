"""Cross-dataset specialists in the layout of paper 000 (Sec. 4, App. C.4, D; Tables A5, A7-A9).

A cross-dataset pool joins members trained on different datasets and scores every member on
the union of the datasets' prompts. The helpers here build the tables of that section from the
library's statistics; none of them adds a statistic of its own.

* :func:`cross_table` -- per threshold tau: the plug-in oracle gap L(tau) and the disagreement
  D(tau), each against the re-deal and the margin-preserving null (null mean, upper-tail p and
  lower-tail p), and the coverage of the best member, the uniform mixture (all pooled responses,
  raw rates) and the plug-in oracle (Tables A7-A9);
* :func:`coverage_by_group` / :func:`separation` -- each member's coverage C_m(tau) on each
  dataset half, and which member leads on which half as tau rises: the *separation threshold*
  of a half is the smallest tau of the grid from which a member trained on that half covers
  strictly more of its prompts than every other member, at that tau and at every larger one;
* :func:`router_sweep` -- router families fitted on calibration prompts (a named split is the
  test part) and scored on test at every threshold
  (:func:`~oraclegap.deploy.evaluate.evaluate_routers`): gains over the threshold-specific best
  member with prompt-bootstrap intervals (the best member re-selected in every resample), over
  the calibration-selected member, the disagreement error e_D and the break-even error L/D;
* :func:`rule_account` -- the same routing account for a fixed rule (a size rule, a known
  specialist assignment): C_r - C_best = L - D e_D (:func:`~oraclegap.stats.coverage.routing_account`);
* :class:`PC1Rule` / :func:`fit_pc1_rule` / :func:`plant_predictable` -- App. C.4's predictable
  specialists: the embedding standardisation, its first principal component and the quantile
  boundaries are fitted on validation prompts, the fixed rule assigns every prompt's specialist
  (bin m -> member m), and round(delta k) successes are planted towards it
  (:func:`~oraclegap.stats.simulate.plant`) on validation and test alike;
* :func:`positive_control` -- one row per threshold of Table A5: L, D, both nulls' p, L/D, each
  router's gain and e_D, and the fixed rule's gain and e_D;
* :func:`join_members` -- two pools' members side by side on their shared prompts (the
  mixed-size pool of App. C.4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._result import Result
from .._validate import check_int, check_prob
from ..pool import Pool, check_pool
from ..stats import nulls
from ..stats.coverage import coverage, need, routing_account
from ..stats.simulate import PC1Rule, fit_pc1_rule, plant
from .evaluate import RouterComparison, evaluate_routers
from .features import RouterInputs, router_inputs

__all__ = [
    "cross_table",
    "CrossTable",
    "coverage_by_group",
    "separation",
    "Separation",
    "router_sweep",
    "RouterSweep",
    "rule_account",
    "PC1Rule",
    "fit_pc1_rule",
    "plant_predictable",
    "PlantedControl",
    "positive_control",
    "ControlResult",
    "join_members",
]


def _taus(taus) -> list[float]:
    t = [float(check_prob(x, "taus")) for x in np.atleast_1d(np.asarray(taus, dtype=float))]
    if not t:
        raise ValueError("taus is empty; pass at least one threshold in (0, 1]")
    if any(x <= 0 for x in t):
        raise ValueError(f"taus must lie in (0, 1], got {t}")
    return t


# ====================================================================== the gap table (Tables A7-A9)
@dataclasses.dataclass(frozen=True, repr=False)
class CrossTable(Result):
    """The oracle-gap tests of one cross-dataset pool: ``tests`` (every :class:`~oraclegap.stats.nulls.NullTest`)
    and the coverage of the best member, the mixture and the oracle per threshold.

    :meth:`frame` has one row per tau: ``L``, ``D``; for each null (``redeal``, ``margin``) the
    null means ``L_null``/``L_margin`` and ``D_null``/``D_margin``, the re-deal 90% band of L
    (``L_band_lo``, ``L_band_hi``), upper-tail p (``p``, ``p_m``,
    ``D_p``, ``D_p_m``), lower-tail p (``p_lower``, ``p_m_lower``), the excesses L - null mean
    (``excess``, ``excess_m``); ``best``, ``mixture``, ``oracle`` coverage and ``break_even`` L/D.
    """

    taus: tuple
    tests: nulls.NullTests
    best: np.ndarray
    mixture: np.ndarray
    oracle: np.ndarray
    best_member: tuple
    n_prompts: int
    n_policies: int

    def frame(self) -> pd.DataFrame:
        rows = []
        for j, tau in enumerate(self.taus):
            L, Lm = self.tests.get("L", tau, "redeal"), self.tests.get("L", tau, "margin")
            D, Dm = self.tests.get("D", tau, "redeal"), self.tests.get("D", tau, "margin")
            rows.append({
                "tau": tau, "L": L.observed, "D": D.observed,
                "L_null": L.mean, "L_band_lo": L.band.lo, "L_band_hi": L.band.hi, "p": L.p, "p_lower": L.p_lower,
                "excess": L.excess,
                "L_margin": Lm.mean, "p_m": Lm.p, "p_m_lower": Lm.p_lower, "excess_m": Lm.excess,
                "D_null": D.mean, "D_p": D.p, "D_margin": Dm.mean, "D_p_m": Dm.p,
                "best": float(self.best[j]), "best_member": self.best_member[j], "mixture": float(self.mixture[j]),
                "oracle": float(self.oracle[j]),
                "break_even": L.observed / D.observed if D.observed > 0 else np.nan,
            })
        return pd.DataFrame(rows)


def cross_table(pool: Pool, taus, *, n_draws: int = 2000, seed=0, progress: bool = False) -> CrossTable:
    """L(tau) and D(tau) of ``pool`` against both nulls (re-deal: every member has the prompt's
    rate, so the prompt's successes are dealt to the members at random; margin-preserving: the
    additive logit model, member totals kept) with ``n_draws`` draws each, beside the coverage
    of the best member, the uniform mixture (raw pooled rates) and the plug-in oracle.

    Degenerate (point-mass) nulls raise: a cross-dataset pool with k > 1 and two or more members
    has none at thresholds with ceil(tau k) > 1.
    """
    pool = check_pool(pool)
    t = _taus(taus)
    tests = nulls.null_tests(pool, t, statistics=("L", "D"), n_draws=check_int(n_draws, "n_draws", minimum=1), seed=seed,
                             progress=progress)
    if tests.skipped:
        raise ValueError(f"some tests are degenerate on this pool ({[sk.label for sk in tests.skipped]}); "
                         "choose thresholds with ceil(tau k) > 1")
    cv = coverage(pool, t)
    names = pool.policy_names
    return CrossTable(tuple(t), tests, cv.best, cv.mixture, cv.oracle, tuple(names[i] for i in cv.best_index),
                      pool.n_prompts, pool.n_policies)


# ====================================================================== coverage by dataset half
def _group_labels(pool: Pool, by: str) -> np.ndarray:
    if by not in pool.prompts.columns:
        raise ValueError(f"by={by!r} is not a column of the prompt table; it has {list(pool.prompts.columns)}")
    col = pool.prompts[by]
    if col.isna().any():
        raise ValueError(f"the prompt column {by!r} has missing values; every prompt needs a group")
    return col.astype(str).to_numpy()


def _owners(pool: Pool, owner: str) -> list:
    if owner not in pool.policies.columns:
        raise ValueError(f"owner={owner!r} is not a column of the policy table; it has {list(pool.policies.columns)}")
    return [None if pd.isna(v) else str(v) for v in pool.policies[owner]]


def coverage_by_group(pool: Pool, taus, *, by: str = "dataset", owner: str = "dataset") -> pd.DataFrame:
    """Coverage C_m(tau) = share of a group's prompts with c_im >= ceil(tau k), per group of the
    prompt column ``by`` (the dataset halves), member and threshold, with each member's mean
    success rate on the group. Columns: group, n_prompts, tau, policy, trained_on (the policy
    column ``owner``), own (trained_on == group), coverage, mean_rate."""
    pool = check_pool(pool)
    t = _taus(taus)
    g = _group_labels(pool, by)
    own = _owners(pool, owner)
    counts, k = pool.counts(), pool.k
    needs = np.array([need(x, k) for x in t])
    rows = []
    for grp in dict.fromkeys(g):  # first-appearance order
        c = counts[g == grp]
        cov = (c[None, :, :] >= needs[:, None, None]).mean(axis=1)  # [T, M]
        rate = c.mean(axis=0) / k
        for j, tau in enumerate(t):
            for m, name in enumerate(pool.policy_names):
                rows.append({"group": grp, "n_prompts": int(c.shape[0]), "tau": tau, "policy": name, "trained_on": own[m],
                             "own": own[m] == grp, "coverage": float(cov[j, m]), "mean_rate": float(rate[m])})
    return pd.DataFrame(rows)


@dataclasses.dataclass(frozen=True, repr=False)
class Separation(Result):
    """Which member leads on which half as tau rises (see the module docstring).

    ``table`` (:meth:`frame`): one row per (group, tau) with the leading member and its coverage,
    whether it was trained on the group, the best coverage among members trained on the group
    (``own_best``) and among the others (``other_best``) and ``margin = own_best - other_best``.
    ``from_tau[group]``: the separation threshold (NaN when the own members never lead to the
    top of the grid); ``own_leads[group]``: the thresholds at which they lead strictly.
    """

    table: pd.DataFrame
    from_tau: dict
    own_leads: dict

    def frame(self) -> pd.DataFrame:
        return self.table.copy()


def separation(pool: Pool, taus, *, by: str = "dataset", owner: str = "dataset") -> Separation:
    """The thresholds at which the specialists separate: on each group of ``by`` (a dataset half)
    and each tau, the member with the highest coverage and the margin of the best member trained
    on that group over the best other member. A group with no member trained on it, or none
    trained elsewhere, raises."""
    cg = coverage_by_group(pool, taus, by=by, owner=owner)
    rows, from_tau, leads = [], {}, {}
    for grp, d in cg.groupby("group", sort=False):
        if not d["own"].any() or d["own"].all():
            raise ValueError(f"group {grp!r} needs members trained on it and members trained elsewhere (policy column {owner!r})")
        ts, margins = [], []
        for tau, e in d.groupby("tau", sort=True):
            top = e.loc[e["coverage"].idxmax()]
            own_best, other_best = e.loc[e["own"], "coverage"].max(), e.loc[~e["own"], "coverage"].max()
            tied = int((e["coverage"] == top["coverage"]).sum())
            rows.append({"group": grp, "tau": float(tau), "leader": top["policy"] if tied == 1 else f"{tied} members tied",
                         "leader_coverage": float(top["coverage"]), "leader_own": bool(own_best > other_best),
                         "own_best": float(own_best), "other_best": float(other_best), "margin": float(own_best - other_best)})
            ts.append(float(tau))
            margins.append(own_best - other_best)
        pos = np.asarray(margins) > 0
        leads[grp] = tuple(t for t, p in zip(ts, pos, strict=True) if p)
        # smallest tau from which the margin stays positive to the top of the grid
        tail = np.flip(np.cumprod(np.flip(pos)).astype(bool))
        from_tau[grp] = float(np.asarray(ts)[tail][0]) if tail.any() else float("nan")
    return Separation(pd.DataFrame(rows), from_tau, leads)


# ====================================================================== routers at every threshold
@dataclasses.dataclass(frozen=True, repr=False)
class RouterSweep(Result):
    """Router families evaluated at several thresholds under one protocol: ``comparisons[tau]``
    is the :class:`~oraclegap.deploy.evaluate.RouterComparison` at tau; :meth:`frame` one row
    per (tau, family)."""

    comparisons: dict

    def frame(self) -> pd.DataFrame:
        cols = ("family", "accuracy", "gain_best", "gain_best_lo", "gain_best_hi", "gain_cal", "gain_cal_lo", "gain_cal_hi",
                "e_D", "break_even", "L", "D", "best_member", "baseline_member", "identity_residual", "n_eval")
        rows = []
        for tau, res in self.comparisons.items():
            for e in res.evaluations.values():
                rows.append({"tau": float(tau), **{c: getattr(e, c) for c in cols}})
        return pd.DataFrame(rows).rename(columns={"accuracy": "coverage"})

    def get(self, tau: float, family: str):
        """The :class:`~oraclegap.deploy.evaluate.RouterEvaluation` of ``family`` at ``tau``."""
        for t, res in self.comparisons.items():
            if abs(float(t) - float(tau)) < 1e-12:
                return res.evaluation(family)
        raise KeyError(f"tau {tau} was not evaluated; evaluated: {list(self.comparisons)}")


def router_sweep(pool: Pool, families: Sequence[str], taus, *, split: str = "test", inputs: RouterInputs | None = None,
                 n_boot: int = 1000, alpha: float = 0.05, seed: int = 0, target: str = "rate",
                 params: Mapping | None = None) -> RouterSweep:
    """Fit ``families`` on the prompts outside split ``split`` and score them on ``split`` at
    every tau (coverage at tau, raw counts): each comparison is
    :func:`~oraclegap.deploy.evaluate.evaluate_routers` with the same ``seed``, so the prompt
    resamples of one threshold are shared by every family. ``inputs`` defaults to
    :func:`~oraclegap.deploy.features.router_inputs` of the pool (its own embeddings first)."""
    pool = check_pool(pool)
    t = _taus(taus)
    if not isinstance(families, (list, tuple)) or not families:
        raise ValueError("families must be a non-empty list of router family names")
    X = router_inputs(pool) if inputs is None else inputs
    comps: dict[float, RouterComparison] = {}
    for tau in t:
        comps[tau] = evaluate_routers(pool, list(families), tau=tau, split=split, seed=seed, inputs=X, n_boot=n_boot,
                                      alpha=alpha, target=target, params=params, progress=False)
    return RouterSweep(comps)


def rule_account(pool: Pool, rule, taus, *, split: str | None = "test") -> pd.DataFrame:
    """The routing account of a fixed rule on the prompts of ``split`` (all prompts for None) at
    every tau: coverage C_r, the best member's coverage, the gain C_r - C_best = L - D e_D, the
    disagreement error e_D and the break-even error L/D.

    ``rule``: an int array of member positions, one per prompt of the whole pool (the rows of
    ``split`` are taken), or a callable ``tau -> that array`` when the rule depends on the
    threshold (a member selected per threshold on validation)."""
    pool = check_pool(pool)
    t = _taus(taus)
    rows_sel = np.ones(pool.n_prompts, bool) if split is None else (pool.prompts["split"].astype(str) == split).to_numpy()
    if not rows_sel.any():
        raise ValueError(f"split {split!r} has no prompts; this pool has splits {pool.splits}")
    counts = pool.counts()[rows_sel]
    out = []
    for tau in t:
        ch = np.asarray(rule(tau) if callable(rule) else rule)
        if ch.shape != (pool.n_prompts,) or not np.issubdtype(ch.dtype, np.integer):
            raise ValueError(f"rule must give an int array of one member position per prompt (length {pool.n_prompts}), "
                             f"got shape {ch.shape} and dtype {ch.dtype}")
        if (ch < 0).any() or (ch >= pool.n_policies).any():
            raise ValueError(f"rule holds member positions outside [0, {pool.n_policies})")
        ra = routing_account(counts, ch[rows_sel], tau, k=pool.k)
        out.append({"tau": tau, "coverage": ra.routed, "best": ra.best, "gain": ra.gain, "e_D": ra.e_D,
                    "break_even": ra.break_even, "L": ra.L, "D": ra.D})
    return pd.DataFrame(out)


# ====================================================================== predictable specialists (App. C.4)
@dataclasses.dataclass(frozen=True)
class PlantedControl:
    """A pool with predictable specialists planted: ``pool`` (counts changed, prompt table,
    policies and embeddings kept), ``specialist`` [n] (member per prompt from ``rule``),
    ``transfers`` [n] (successes actually moved), ``target`` (round(delta k))."""

    pool: Pool
    specialist: np.ndarray
    transfers: np.ndarray
    target: int
    rule: PC1Rule


def plant_predictable(pool: Pool, delta: float, *, fit_split: str = "validation", seed=0) -> PlantedControl:
    """App. C.4's predictable specialization: fit a :class:`PC1Rule` with M bins (quintiles for
    five members) on the embeddings of the ``fit_split`` prompts, assign every prompt of the
    pool (both splits) its specialist by that fixed rule, and plant round(delta k) successes
    towards it with :func:`~oraclegap.stats.simulate.plant` (donors among the other members,
    stopping when the specialist is full or no donor has a success; prompt totals kept)."""
    pool = check_pool(pool)
    if pool.embeddings is None:
        raise ValueError("pool has no embeddings; the planting rule is fitted on prompt embeddings")
    if fit_split not in pool.splits:
        raise ValueError(f"fit_split {fit_split!r} is not a split of this pool; it has {pool.splits}")
    fit_rows = (pool.prompts["split"].astype(str) == fit_split).to_numpy()
    rule = fit_pc1_rule(pool.embeddings[fit_rows], pool.n_policies)
    spec = rule.assign(pool.embeddings)
    sim = plant(pool, delta, specialist=spec, seed=seed)
    out = dataclasses.replace(sim.pool, embeddings=pool.embeddings, alignment="independent",
                              meta={**sim.pool.meta, "planted_rule": f"PC1 bins fitted on {fit_split}"})
    return PlantedControl(out, spec, np.asarray(sim.info["transfers"]), int(sim.info["target"]), rule)


# ====================================================================== Table A5
@dataclasses.dataclass(frozen=True, repr=False)
class ControlResult(Result):
    """One positive control: ``gaps`` (:class:`CrossTable` on the test prompts), ``sweep``
    (routers fitted on calibration, scored on test) and ``rule`` (:func:`rule_account` of the
    fixed rule). :meth:`frame`: one row per tau with L, D, p, p_m, L/D, each family's gain over
    the threshold-specific best member with its interval and e_D, and the rule's gain and e_D."""

    gaps: CrossTable
    sweep: RouterSweep
    rule: pd.DataFrame
    families: tuple

    def frame(self) -> pd.DataFrame:
        g = self.gaps.frame().set_index("tau")
        sw = self.sweep.frame()
        rows = []
        for tau in g.index:
            r = {"tau": tau, "L": g.loc[tau, "L"], "D": g.loc[tau, "D"], "p": g.loc[tau, "p"], "p_m": g.loc[tau, "p_m"],
                 "break_even": g.loc[tau, "break_even"]}
            for f in self.families:
                e = sw[(np.abs(sw["tau"] - tau) < 1e-12) & (sw["family"] == f)].iloc[0]
                r.update({f"{f}_gain": e["gain_best"], f"{f}_lo": e["gain_best_lo"], f"{f}_hi": e["gain_best_hi"],
                          f"{f}_e_D": e["e_D"]})
            ru = self.rule.set_index("tau").loc[tau]
            r.update({"rule_gain": ru["gain"], "rule_e_D": ru["e_D"]})
            rows.append(r)
        return pd.DataFrame(rows)


def positive_control(pool: Pool, taus, rule, *, families: Sequence[str] = ("embed_knn", "embed_pca_logreg"),
                     split: str = "test", n_draws: int = 2000, n_boot: int = 1000, seed: int = 0,
                     inputs: RouterInputs | None = None) -> ControlResult:
    """A Table A5 block: both nulls on the test prompts of ``split``, the routers ``families``
    fitted on the other prompts and scored on ``split``, and the fixed ``rule`` (see
    :func:`rule_account`), all at every tau."""
    pool = check_pool(pool)
    if split not in pool.splits:
        raise ValueError(f"split {split!r} is not a split of this pool; it has {pool.splits}")
    gaps = cross_table(pool.split(split), taus, n_draws=n_draws, seed=seed)
    sweep = router_sweep(pool, list(families), taus, split=split, inputs=inputs, n_boot=n_boot, seed=seed)
    return ControlResult(gaps, sweep, rule_account(pool, rule, taus, split=split), tuple(families))


# ====================================================================== joining pools
def join_members(first: Pool, *others: Pool) -> Pool:
    """The members of several pools side by side on the prompts they share (by prompt id, in the
    first pool's order): verdicts concatenated along the member axis, policy tables stacked, the
    first pool's prompt table and embeddings, answers and per-response arrays where every pool
    has them. All pools need the same k and distinct policy names; the alignment is kept when
    every pool has the same, else ``"unknown"``."""
    pools = [check_pool(first, "first")] + [check_pool(p, "others") for p in others]
    if len(pools) < 2:
        raise ValueError("join_members needs at least two pools")
    ks = {p.k for p in pools}
    if len(ks) != 1:
        raise ValueError(f"pools have different k (responses per cell): {sorted(ks)}")
    names = [n for p in pools for n in p.policy_names]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"policy names must be distinct across the pools; repeated: {dup}")
    shared = set(first.prompt_ids)
    for p in pools[1:]:
        shared &= set(p.prompt_ids)
    ids = [i for i in first.prompt_ids if i in shared]
    if not ids:
        raise ValueError("the pools share no prompt id")
    subs = [p.select(prompts=ids) for p in pools]
    answers = np.concatenate([s.answers for s in subs], axis=1) if all(s.answers is not None for s in subs) else None
    keys = set.intersection(*(set(s.per_response) for s in subs))
    per = {k: np.concatenate([s.per_response[k] for s in subs], axis=1) for k in sorted(keys)}
    aligns = {s.alignment for s in subs}
    return Pool(
        verdicts=np.concatenate([s.verdicts for s in subs], axis=1),
        prompts=subs[0].prompts,
        policies=pd.concat([s.policies for s in subs], ignore_index=True),
        answers=answers,
        embeddings=subs[0].embeddings,
        alignment=aligns.pop() if len(aligns) == 1 else "unknown",
        meta={"joined": [s.meta.get("stored_pool", s.meta.get("source", "pool")) for s in subs]},
        per_response=per,
    )

