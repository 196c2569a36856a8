"""Routing regimes beyond one pre-answer call (paper 002 Table 8, App. H and Q), scored like the
fixed routers of :mod:`oraclegap.deploy.evaluate`.

:func:`evaluate_policies` scores any policy given as, per evaluated prompt, the member whose
answer it returns and the cost it paid (a cascade pays for every call it made): accuracy with its
exact interval; the paired gain over the frozen calibration-selected member b with a
prompt-bootstrap interval (one shared set of resamples for every policy); discordant counts with
the exact McNemar test and Holm within the family; rescue / loss; mean cost and cost relative to
b's, with bootstrap intervals.

:func:`compare_regimes` runs, on a 50/50 calibration/test split of a pool with costs: the
cascade (:mod:`.cascade`), the online bandit (:mod:`.bandit`, LinUCB and epsilon-greedy), the two
binary strong/weak routers on the pool's strong-weak pair (:mod:`.binary`), the cheapest member
and the non-deployable cost-aware oracle (the cheapest correct member; the cheapest member where
none is right), with quality-cost curves, the bandit's regret on the test stream, APGR of the
binary routers, and 002's Theorem 6 over the constants plus the policies fitted on calibration
only. The bandit is not in that family: it keeps learning from the test verdicts it observes,
so its choices are not independent of the test outcomes (its paired rows describe the realised
stream; they are not selection-valid).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar

from .._result import Result
from .._rng import stream as named_stream
from .._validate import check_alpha, check_int
from ..pool import Pool, check_pool
from ..stats.certify import FamilyCertificate, _cp, family_certificate
from .bandit import bandit_contexts, regret_curve, run_bandit
from .binary import STYLES, BinaryRouter
from .cascade import Cascade, cascade_curve
from .evaluate import (
    PGR_FRACTIONS,
    apgr,
    bootstrap_means,
    holm,
    make_protocol,
    outcome_matrix,
)
from .evaluate.compare import _interval
from .evaluate.metrics import _pair_columns
from .features import RouterInputs
from .routers import check_cost, check_lambda

#: Regime labels of rows that are references, not tested rules (left out of Holm's family).
REFERENCE_REGIMES = ("fixed reference", "non-deployable")

__all__ = [
    "REFERENCE_REGIMES",
    "evaluate_policies",
    "RegimeComparison",
    "compare_regimes",
    "cost_aware_oracle",
]


def _mcnemar_p(n10: int, n01: int) -> float:
    return 1.0 if n10 + n01 == 0 else float(mcnemar([[0, n10], [n01, 0]], exact=True).pvalue)


def evaluate_policies(
    O,
    policies: Mapping,
    baseline: int,
    *,
    member_cost=None,
    names=None,
    alpha: float = 0.05,
    n_boot: int = 2000,
    seed=0,
) -> pd.DataFrame:
    """Paired evaluation of ``policies`` against the frozen member ``baseline`` on the prompts of ``O``.

    ``O`` outcomes [n, M] (0/1), ``policies`` name -> dict with ``member`` int[n] (whose answer
    is returned) and optionally ``paid`` float[n] (default: member_cost of the member), ``calls``
    float[n] (default 1) and ``regime`` (a label). ``member_cost`` [n, M] or [M] per call. The first
    row is the baseline itself. Holm runs over the exact McNemar p-values of the policies whose
    ``regime`` is not a reference (:data:`REFERENCE_REGIMES`: fixed references and non-deployable
    oracles are not tested rules); a reference row keeps its raw p-value as ``p_holm``.
    """
    A = np.asarray(O, dtype=float)
    if A.ndim != 2 or A.shape[1] < 2 or not np.isin(A, (0.0, 1.0)).all():
        raise ValueError(f"O must be 0/1 outcomes [n_prompts, n_members >= 2], got shape {A.shape}")
    n, M = A.shape
    alpha = check_alpha(alpha)
    n_boot = check_int(n_boot, "n_boot", minimum=100)
    b = check_int(baseline, "baseline", minimum=0, maximum=M - 1)
    if not isinstance(policies, Mapping) or not policies:
        raise ValueError("policies must be a non-empty mapping name -> {'member': int[n], ...}")
    C = None if member_cost is None else check_cost(member_cost, n, M, "member_cost")
    names = [f"m{j}" for j in range(M)] if names is None else list(names)
    rows_ = np.arange(n)
    cols = {"frozen best member": {"member": np.full(n, b), "regime": "fixed reference"}}
    cols.update(policies)
    S_cols: list[np.ndarray] = []
    P_cols: list[np.ndarray] = []
    K: list[np.ndarray] = []
    reg: list = []
    for nm, spec in cols.items():
        m = np.asarray(spec["member"])
        if m.shape != (n,) or not np.issubdtype(m.dtype, np.integer) or m.min() < 0 or m.max() >= M:
            raise ValueError(f"policies[{nm!r}]['member'] must be member positions int[{n}] in [0, {M})")
        S_cols.append(A[rows_, m])
        paid = spec.get("paid")
        if paid is None:
            paid = np.zeros(n) if C is None else C[rows_, m]
        paid = np.asarray(paid, dtype=float)
        if paid.shape != (n,) or not np.isfinite(paid).all() or (paid < 0).any():
            raise ValueError(f"policies[{nm!r}]['paid'] must be finite non-negative costs float[{n}]")
        P_cols.append(paid)
        K.append(np.asarray(spec.get("calls", np.ones(n)), dtype=float))
        reg.append(spec.get("regime", ""))
    S, P = np.column_stack(S_cols), np.column_stack(P_cols)
    F = S.shape[1]
    draws = bootstrap_means(np.column_stack([S, P]), n_boot, np.random.default_rng(seed))
    acc_b, cost_b = draws[:, :F], draws[:, F:]
    g_lo, g_hi = _interval(acc_b - acc_b[:, [0]], alpha)
    c_lo, c_hi = _interval(cost_b, alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel_b = cost_b / cost_b[:, [0]]
        r_lo, r_hi = _interval(np.where(np.isfinite(rel_b), rel_b, np.nan), alpha)
    a_lo, a_hi = _cp(S.sum(axis=0), n, alpha)
    B = S[:, 0].astype(bool)
    out = []
    for j, nm in enumerate(cols):
        s = S[:, j].astype(bool)
        n10, n01 = int((s & ~B).sum()), int((~s & B).sum())
        base_cost = P[:, 0].mean()
        out.append(
            {
                "policy": nm,
                "regime": reg[j],
                "accuracy": s.mean(),
                "accuracy_lo": a_lo[j],
                "accuracy_hi": a_hi[j],
                "gain": s.mean() - B.mean(),
                "gain_lo": g_lo[j],
                "gain_hi": g_hi[j],
                "n10": n10,
                "n01": n01,
                "p_mcnemar": _mcnemar_p(n10, n01),
                "rescue": n10 / n,
                "loss": n01 / n,
                "mean_cost": P[:, j].mean(),
                "cost_lo": c_lo[j],
                "cost_hi": c_hi[j],
                "rel_cost": P[:, j].mean() / base_cost if base_cost > 0 else np.nan,
                "rel_cost_lo": r_lo[j],
                "rel_cost_hi": r_hi[j],
                "calls": K[j].mean(),
            }
        )
    df = pd.DataFrame(out)
    fam = ~df["regime"].isin(REFERENCE_REGIMES).to_numpy()
    df["p_holm"] = df["p_mcnemar"].to_numpy()
    if fam.any():
        df.loc[fam, "p_holm"] = holm(df.loc[fam, "p_mcnemar"].to_numpy())
    df.attrs["baseline_member"] = names[b]
    return df


def cost_aware_oracle(O, cost) -> np.ndarray:
    """Per prompt the cheapest member that is right; the cheapest member where none is (non-deployable)."""
    A = np.asarray(O, dtype=float)
    n, M = A.shape
    C = check_cost(cost, n, M)
    return np.where(A > 0, C, np.inf).argmin(axis=1) * A.any(axis=1) + C.argmin(axis=1) * ~A.any(axis=1)


@dataclasses.dataclass(frozen=True, repr=False)
class RegimeComparison(Result):
    """The regimes of :func:`compare_regimes` on one pool (see the module docstring).

    ``table``: :func:`evaluate_policies` rows; ``curves``: quality-cost points per policy family
    (policy, parameter, accuracy, mean cost, relative cost) on the test half; ``regret``: the
    bandits' cumulative regret over the test stream; ``binary``: APGR with its interval per style;
    ``certificate``: Theorem 6 over the constants and the calibration-fitted policies; ``members``:
    each member's test accuracy, mean cost and cost relative to b's.
    """

    table: pd.DataFrame
    curves: pd.DataFrame
    members: pd.DataFrame
    regret: pd.DataFrame
    binary: pd.DataFrame
    certificate: FamilyCertificate
    baseline_member: str
    strong: str
    weak: str
    protocol: str
    lam: float
    n_eval: int

    def frame(self) -> pd.DataFrame:
        return self.table.copy()


def _check_inputs(pool, inputs, cost):
    check_pool(pool)
    if not isinstance(inputs, RouterInputs) or inputs.embeddings is None:
        raise ValueError(
            "inputs must be RouterInputs with embeddings (the cascade scorer, the bandit and the binary routers read them)"
        )
    if len(inputs) != pool.n_prompts:
        raise ValueError(f"inputs describe {len(inputs)} prompts but the pool has {pool.n_prompts}")
    c = pool.cost if cost is None else cost
    if c is None:
        raise ValueError("compare_regimes needs costs: the pool has none and cost= was not given")
    return check_cost(c, pool.n_prompts, pool.n_policies)


def compare_regimes(
    pool: Pool,
    inputs: RouterInputs,
    cost=None,
    *,
    tau=None,
    seed: int = 0,
    lam: float = 0.1,
    lams=(0.0, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0),
    scorer: str = "embed_knn",
    warm_start: bool = True,
    n_boot: int = 1000,
    alpha: float = 0.05,
) -> RegimeComparison:
    """Every regime of the module docstring on a 50/50 split of ``pool`` (seeded by ``seed``).

    ``lam``: the cost penalty of the operating points (reward or utility = outcome - lam * cost /
    cost of the dearest member on calibration); ``lams``: the grid of the bandits' quality-cost
    curves; ``scorer``: the cascade's learned scorer (a router family); ``warm_start``: the bandit
    first streams the calibration prompts, then the test prompts (it learns throughout).
    """
    C = _check_inputs(pool, inputs, cost)
    lam = check_lambda(lam)
    O, _ = outcome_matrix(pool, tau)
    O = O.astype(float)
    proto = make_protocol(pool, split="half", seed=seed)
    cal, tst = proto.folds[0]
    names = pool.policy_names
    acc_cal, mc_cal = O[cal].mean(axis=0), C[cal].mean(axis=0)
    b = int(np.lexsort((np.arange(len(names)), -acc_cal))[0])
    Xc, Xt, Ot, Ct = inputs.take(cal), inputs.take(tst), O[tst], C[tst]
    pol, curves = {}, []

    cas = Cascade(scorer, lam=lam, seed=seed).fit(Xc, O[cal], C[cal])
    run = cas.run(Xt, Ct)
    pol["cascade"] = {
        "member": run.member,
        "paid": run.paid,
        "calls": run.calls.astype(float),
        "regime": "sequential cascade",
    }
    cc = cascade_curve(run.scores, cas.chain_, Ot, Ct, cas.thresholds)
    curves.append(
        pd.DataFrame(
            {
                "policy": "cascade",
                "parameter": cc["threshold"],
                "accuracy": cc["accuracy"],
                "cost": cc["cost"],
            }
        )
    )

    ctx = bandit_contexts(inputs.embeddings, fit_rows=cal)
    rng = named_stream(seed, "deploy.bandit_order")
    stream = np.r_[rng.permutation(cal), rng.permutation(tst)] if warm_start else rng.permutation(tst)
    is_test = np.isin(stream, tst)
    regret = []
    for policy in ("linucb", "epsilon_greedy"):
        pts = []
        for lm in sorted(set(lams) | {lam}):
            choices = named_stream(seed, "deploy.bandit_choices")
            br = run_bandit(ctx, O, C, policy=policy, lam=lm, order=stream, seed=choices)
            member = np.empty(pool.n_prompts, dtype=np.int64)
            member[br.order] = br.choice
            pts.append(
                {
                    "policy": policy,
                    "parameter": lm,
                    "accuracy": Ot[np.arange(tst.size), member[tst]].mean(),
                    "cost": Ct[np.arange(tst.size), member[tst]].mean(),
                }
            )
            if lm == lam:
                pol[policy] = {"member": member[tst], "regime": "online bandit"}
                rc = regret_curve(
                    dataclasses.replace(br, order=br.order[is_test], choice=br.choice[is_test]), O, C
                )
                regret.append(rc.assign(policy=policy))
        curves.append(pd.DataFrame(pts))

    w = int(np.argmin(np.where(np.arange(len(names)) == b, np.inf, mc_cal)))
    bin_rows, tie = [], named_stream(seed, "deploy.binary_ties").permutation(tst.size)
    share = np.linspace(0.0, 1.0, 21)
    for style in STYLES:
        emb = inputs.embeddings
        assert emb is not None  # the binary routers read embeddings (checked by the caller)
        br = BinaryRouter(style, seed=seed).fit(emb[cal], O[cal, b], O[cal, w])
        t_op = float(np.median(br.weak_suffices(emb[cal])))
        ws = br.weak_suffices(emb[tst])
        strong_calls = ws < t_op
        pol[style] = {"member": np.where(strong_calls, b, w), "regime": "binary (two members)"}
        pg = _pair_columns(-ws, Ot[:, b], Ot[:, w], PGR_FRACTIONS, tie)
        cost_cols = _pair_columns(-ws, Ct[:, b], Ct[:, w], share, tie)
        qual_cols = _pair_columns(-ws, Ot[:, b], Ot[:, w], share, tie)
        curves.append(
            pd.DataFrame(
                {
                    "policy": style,
                    "parameter": share,
                    "accuracy": qual_cols.mean(axis=0),
                    "cost": cost_cols.mean(axis=0),
                }
            )
        )
        d = bootstrap_means(pg, n_boot, named_stream(seed, "deploy.binary_bootstrap"))
        den_pt, den_b = pg[:, -1].mean() - pg[:, 0].mean(), d[:, -1] - d[:, 0]
        pgr_pt = (pg.mean(axis=0) - pg[:, 0].mean()) / den_pt if den_pt > 0 else np.full(pg.shape[1], np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            pgr_b = np.where(
                den_b[:, None] > 0, (d - d[:, :1]) / np.where(den_b > 0, den_b, 1.0)[:, None], np.nan
            )
        lo, hi = _interval(apgr(pgr_b, PGR_FRACTIONS), alpha)
        bin_rows.append(
            {
                "style": style,
                "apgr": float(apgr(pgr_pt, PGR_FRACTIONS)),
                "apgr_lo": float(lo),
                "apgr_hi": float(hi),
                "strong_share": float(strong_calls.mean()),
                "threshold": t_op,
            }
        )

    cheap = int(np.argmin(mc_cal))
    pol["cheapest member"] = {"member": np.full(tst.size, cheap), "regime": "fixed reference"}
    pol["cost-aware oracle"] = {"member": cost_aware_oracle(Ot, Ct), "regime": "non-deployable"}
    table = evaluate_policies(
        Ot.astype(int), pol, b, member_cost=Ct, names=names, alpha=alpha, n_boot=n_boot,
        seed=named_stream(seed, "deploy.regime_bootstrap"),
    )
    fitted = {k: v["member"] for k, v in pol.items() if k in ("cascade", *STYLES)}
    cert = family_certificate(Ot.astype(bool), fitted, alpha, model_names=names)
    cur = pd.concat(curves, ignore_index=True)
    base_cost = Ct[:, b].mean() if Ct[:, b].mean() > 0 else np.nan
    cur["rel_cost"] = cur["cost"] / base_cost
    mem = pd.DataFrame(
        {
            "policy": names,
            "accuracy": Ot.mean(axis=0),
            "cost": Ct.mean(axis=0),
            "rel_cost": Ct.mean(axis=0) / base_cost,
        }
    )
    return RegimeComparison(
        table=table,
        curves=cur,
        members=mem,
        regret=pd.concat(regret, ignore_index=True),
        binary=pd.DataFrame(bin_rows),
        certificate=cert,
        baseline_member=names[b],
        strong=names[b],
        weak=names[w],
        protocol=proto.describe(),
        lam=lam,
        n_eval=int(tst.size),
    )
