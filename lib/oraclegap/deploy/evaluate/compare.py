"""The evaluation of routers: every family fitted under one protocol and scored on the evaluated
prompts, with one prompt bootstrap shared by all comparisons, paired inference against the
calibration-selected member, the family certificate and the quality-cost analysis.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..._result import Interval
from ..._rng import seed_sequence
from ..._rng import stream as named_stream
from ..._validate import check_alpha, check_int
from ...pool import Pool, check_pool
from ...stats.bootstrap import bootstrap_means
from ...stats.certify import _cp, family_certificate, paired_comparison, rescue_loss
from ...stats.coverage import routing_account
from ...stats.multiplicity import holm
from ..features import RouterInputs, router_inputs
from ..routers import (
    FAMILIES,
    Router,
    check_cost,
    check_lambda,
    check_targets,
    choose,
    make_router,
    missing_inputs,
)
from .metrics import PGR_FRACTIONS, _pair_columns, aiq, apgr, cpt, gain_at_b, gap_at_o
from .protocol import make_protocol, outcome_matrix, router_targets
from .results import CostAnalysis, RouterComparison, RouterEvaluation

DEFAULT_LAMBDAS = np.r_[0.0, np.geomspace(0.01, 100.0, 21), 1e6]


def _interval(draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap draws [n_boot, ...] over the first axis: the alpha/2 and
    1 - alpha/2 quantiles (NaN draws ignored; all-NaN positions give NaN)."""
    with np.errstate(invalid="ignore"):
        lo, hi = np.nanquantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
    return lo, hi


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
    first = routers.pop("best_single", None) or make_router(
        "best_single", **dict(params.get("best_single", {}))
    )
    return {
        "best_single": first,
        **routers,
    }, skipped  # the comparator is always evaluated, and first


def _policy_datasets(pool: Pool):
    col = pool.policies.get("dataset")
    return None if col is None else [None if pd.isna(v) else str(v) for v in col]


def evaluation_cost(n: int, M: int, n_families: int, n_boot: int, *, costs: bool = False,
                    n_lambdas: int = DEFAULT_LAMBDAS.size) -> tuple[int, int]:
    """(steps, bytes) of :func:`evaluate_routers`' prompt bootstraps on n prompts and M policies
    with ``n_families`` families (the calibration-selected best single member comes on top),
    estimated before any work.

    A step is one resampled prompt: n per resample for the joint bootstrap and again for each
    family's paired comparison. Memory is one float per resample and bootstrapped column, with
    copies while the intervals are built, plus one block of resample counts. The columns: per
    policy its rate, per family its score, paired differences and rescue/loss terms; with
    ``costs`` (a pool with costs) also per family its accuracy and cost at each of ``n_lambdas``
    cost penalties and its strong-weak curve at each fraction of :data:`PGR_FRACTIONS`, and per
    policy its cost.
    """
    n, M = check_int(n, "n", minimum=1), check_int(M, "M", minimum=1)
    n_families = check_int(n_families, "n_families", minimum=0)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    F = n_families + 1
    cols = M + 6 * F + 4
    if costs:
        cols += F * (2 * check_int(n_lambdas, "n_lambdas", minimum=1) + PGR_FRACTIONS.size) + M
    steps = n_boot * n * (n_families + 2)
    return steps, n_boot * cols * 8 * 3 + min(128, n_boot) * n * 4


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
    check_pool(pool)
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
    if families is None and not any(
        X.has(f) for f in ("text", "embeddings", "features", "dataset")
    ):
        raise ValueError(
            "the pool has no prompt text, embeddings, features or dataset column: routers have "
            "nothing to route on"
        )
    C = None
    if cost is not None:
        C = check_cost(cost, n, M)
    elif pool.cost is not None:
        C = pool.cost
    lam_grid = (
        DEFAULT_LAMBDAS if lambdas is None else np.atleast_1d(np.asarray(lambdas, dtype=float))
    )
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
    bar = tqdm(
        jobs,
        desc="fitting routers",
        disable=(not progress) if progress is not None else None,
        leave=False,
    )
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
    ss = seed_sequence(seed, "deploy.router_bootstrap")
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
        # tied pair scores (a constant router) are broken in one seeded random order: such a router
        # routes at random
        tie = named_stream(seed, "deploy.pgr_ties").permutation(ev.size)
        Pg = np.stack(
            [
                _pair_columns(
                    U[f][:, str_i] - U[f][:, weak_i],
                    Oe[:, str_i].astype(float),
                    Oe[:, weak_i].astype(float),
                    PGR_FRACTIONS,
                    tie,
                )
                for f in fams
            ],
            axis=1,
        )  # [n_eval, F, G]
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
        pf = pd.DataFrame(
            [
                {
                    **paired_comparison(
                        S[:, fams.index(f)], base, alpha, oracle=Ymax, n_boot=n_boot, seed=pseed
                    ).row(),
                    "policy": f,
                }
                for f in members
            ]
        )
        pf["p_holm"] = holm(pf["p_mcnemar"].to_numpy())
        first = [
            "policy",
            "accuracy",
            "accuracy_lo",
            "accuracy_hi",
            "difference",
            "diff_lo",
            "diff_hi",
            "n10",
            "n01",
            "p_mcnemar",
            "p_holm",
        ]
        pf = pf[first + [c for c in pf.columns if c not in first]]
        pf.insert(1, "regime", reg)
        paired_rows.append(pf)
    paired = (
        pd.concat(paired_rows, ignore_index=True)
        if paired_rows
        else pd.DataFrame(columns=["policy"])
    )
    paired = paired.set_index("policy")

    # the member the baseline family (the first, best_single) actually uses: it selects on the
    # mean of its training targets, which need not be the coverage O at tau
    c0 = choice[fams[0]]
    cal_member = (
        "cross-fitted" if proto.mode != "split"
        else names[int(c0[0])] if c0.size and bool((c0 == c0[0]).all())
        else "varies by prompt"
    )
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
            rec, rec_lo, rec_hi = (
                float(pr["recovered"]),
                float(pr["recovered_lo"]),
                float(pr["recovered_hi"]),
            )
        else:  # the baseline itself
            n10 = n01 = 0
            p_mc = p_holm = 1.0
            gb_ = int((Ymax & ~base).sum())
            Gb, (Gb_lo, Gb_hi) = gb_ / ev.size, map(float, _cp(gb_, ev.size, alpha))
            rec = rec_lo = rec_hi = 0.0 if Gb_lo > 0 else math.nan
        evals[f] = RouterEvaluation(
            family=f,
            regime=regimes[f],
            protocol=proto.describe(),
            tau=None if k == 1 else tau_eff,
            n_eval=int(ev.size),
            accuracy_ci=ci(acc, a_lo[j], a_hi[j], "clopper-pearson"),
            best=best_pt,
            best_member=names[int(np.argmax(mem_pt))],
            gain_best_ci=ci(acc - best_pt, gb_lo[j], gb_hi[j]),
            baseline=float(S[:, 0].mean()),
            baseline_member=cal_member,
            gain_cal_ci=ci(acc - float(S[:, 0].mean()), gc_lo[j], gc_hi[j]),
            oracle=orc_pt,
            D=ra.D,
            L=ra.L,
            e_D=ra.e_D,
            break_even=ra.break_even,
            identity_residual=ra.identity_residual,
            n10=n10,
            n01=n01,
            p_mcnemar=p_mc,
            p_holm=p_holm,
            rescue=rl.rescue,
            loss=rl.loss,
            G_b_ci=ci(Gb, Gb_lo, Gb_hi, "clopper-pearson"),
            recovered_ci=ci(rec, rec_lo, rec_hi, "joint bootstrap"),
            gain_at_b_ci=ci(gain_at_b(acc, best_pt), gab_lo[j], gab_hi[j]),
            gap_at_o_ci=ci(gap_at_o(acc, orc_pt), gao_lo[j], gao_hi[j]),
            fit_seconds=secs[f],
            choice=choice[f],
            utility=U[f],
        )

    # ---------------------------------------------------------- the family certificate (split only)
    cert, note = None, ""
    if proto.mode == "split":
        fam_choices = {
            f: choice[f] for f in fams if regimes[f] == "pre-answer" and f != "best_single"
        }
        cert = family_certificate(Oe, fam_choices or None, alpha, model_names=names)
        note = (
            f"Thm 6 over the {M} constant policies and {len(fam_choices)} fitted routers (L = "
            f"{cert.L})"
        )
    else:
        note = (
            "not reported under cross-fitting: each fold's policy is fitted on the other "
            "folds' outcomes (use split='half')"
        )

    cost_an = None
    if cost_cols is not None:
        cost_an = _cost_analysis(cost_cols, draws, point, fams, names, alpha)
    return RouterComparison(
        evaluations=evals,
        protocol=proto,
        tau=None if k == 1 else tau_eff,
        k=k,
        alpha=alpha,
        n_boot=n_boot,
        inputs=X.describe(),
        skipped=skipped,
        paired=paired.reset_index(),
        certificate=cert,
        certificate_note=note,
        cost=cost_an,
        policy_names=tuple(names),
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
    aiq_b = aiq(
        c_b,
        q_b,
        np.repeat(mc_b.min(axis=1)[:, None], F, axis=1),
        np.repeat(mc_b.max(axis=1)[:, None], F, axis=1),
    )
    aiq_lo, aiq_hi = _interval(aiq_b, alpha)

    # PGR from the pair's columns: A(0) = weak, A(1) = strong on every resample
    def pgr_of(P):
        den = P[..., -1] - P[..., 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(
                den[..., None] > 0,
                (P - P[..., :1]) / np.where(den > 0, den, 1.0)[..., None],
                np.nan,
            )

    pgr_pt, pgr_b = pgr_of(pg_pt), pgr_of(pg_b)
    ap_pt = apgr(pgr_pt, PGR_FRACTIONS)
    ap_b = apgr(pgr_b, PGR_FRACTIONS)
    cp_pt = np.atleast_1d(cpt(pgr_pt, PGR_FRACTIONS))
    cp_b = cpt(pgr_b.reshape(-1, G), PGR_FRACTIONS).reshape(-1, F)
    ap_lo, ap_hi = _interval(ap_b, alpha)
    cp_lo, cp_hi = _interval(cp_b, alpha)
    summary = pd.DataFrame(
        {
            "family": fams,
            "aiq": aiq_pt,
            "aiq_lo": aiq_lo,
            "aiq_hi": aiq_hi,
            "apgr": ap_pt,
            "apgr_lo": ap_lo,
            "apgr_hi": ap_hi,
            "cpt50": cp_pt,
            "cpt50_lo": cp_lo,
            "cpt50_hi": cp_hi,
        }
    )
    frontier = pd.DataFrame(
        {
            "family": np.repeat(fams, L),
            "lambda": np.tile(lamb, F),
            "quality": q_pt.ravel(),
            "cost": c_pt.ravel(),
        }
    )
    members = pd.DataFrame({"policy": names, "mean_cost": mc_pt, "quality": point[:M]})
    return CostAnalysis(
        lambdas=lamb,
        strong=names[s_i],
        weak=names[w_i],
        cost_range=(lo_pt, hi_pt),
        frontier=frontier,
        summary=summary,
        members=members,
    )


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
