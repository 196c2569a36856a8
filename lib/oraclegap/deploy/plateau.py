"""The routing plateau in the layout of paper 002 (Sec. 7, App. B, G, I, O): tables built from
router evaluations (:func:`oraclegap.deploy.evaluate.evaluate_routers`) on several pools, and
the simulation study behind the claim that a router's gain interval is trustworthy.

* :func:`router_table` -- accuracy (k = 1) or coverage (k > 1) of every family on every pool,
  with the outcome oracle as the last row (002 Table 4, Table 7 for post-inference selectors);
* :func:`plateau_table` -- per pool: the opportunity G_b = q - p_b left by the frozen
  calibration-selected member b on the test prompts (with the exact interval of 002 Cor. 5),
  the best fitted pre-answer router's gain over b, the recovered share rho = gain / G_b with its
  joint bootstrap interval (reported only when G_b's lower limit is positive) and the residual
  G_b - gain (002 Table 3);
* :func:`paired_table` -- every router against b: accuracy with its exact interval, the paired
  difference with a bootstrap interval, discordant counts n10 / n01, exact McNemar p with Holm
  within the pool's family, rescue and loss rates and the net gain rescue - loss (002 Tables 14
  and 15);
* :func:`certificate` -- 002 Thm 6 over a predeclared family (every constant policy plus the
  named fitted routers) on the test prompts of a split (002 Table 2);
* :func:`simulated_study` -- how often each family's gain interval lies wholly above zero on
  simulated pools with known truth: planted prompt-predictable specialists (power) or
  exchangeable members (false positives; the population gain of every pre-answer rule is 0).

Every function reads results; none refits a router except :func:`simulated_study`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import binom

from .._validate import check_alpha, check_int
from ..pool import Pool
from ..stats.certify import FamilyCertificate, family_certificate
from .evaluate import RouterComparison, evaluate_routers, outcome_matrix
from .features import router_inputs, simulated_router_pool
from .routers import PRE_ANSWER

__all__ = [
    "FIXED_REFERENCES",
    "PAPER_FAMILY",
    "router_table",
    "plateau_table",
    "paired_table",
    "certificate",
    "simulated_study",
]

#: Families that fit nothing from prompts: they are references, not candidate routers
#: (``paper000_best_single``, 2609.32996's validation-selected member, is a constant like ``best_single``).
FIXED_REFERENCES = ("best_single", "taskwise_best", "random", "cheapest", "paper000_best_single")
#: 002's predeclared certificate family (Sec. 7.1): logistic multi-output, k-NN, the K-head encoder.
PAPER_FAMILY = ("multi_logreg", "embed_knn", "encoder_head")


def _check(comparisons) -> dict:
    if not isinstance(comparisons, Mapping) or not comparisons:
        raise ValueError("comparisons must be a non-empty mapping pool name -> RouterComparison")
    for name, res in comparisons.items():
        if not isinstance(res, RouterComparison):
            raise TypeError(f"comparisons[{name!r}] must be a RouterComparison, got {type(res).__name__}")
    return dict(comparisons)


def router_table(comparisons: Mapping, *, regime: str = "pre-answer") -> pd.DataFrame:
    """Families x pools: accuracy (k = 1) or coverage at tau (k > 1) of each family on each
    pool's evaluated prompts, a ``mean`` column over every pool of the table (NaN for a family
    missing from some pool, so that every mean is over the same set of pools), and a last row
    ``oracle`` (the outcome oracle, mean_i max_m O_im). ``regime``: "pre-answer",
    "post-inference" or "all". Families appear in the order first evaluated."""
    comps = _check(comparisons)
    if regime not in ("pre-answer", "post-inference", "all"):
        raise ValueError(f"regime must be 'pre-answer', 'post-inference' or 'all', got {regime!r}")
    cols = {}
    order: list[str] = []
    for pool, res in comps.items():
        col = {}
        for f, e in res.evaluations.items():
            if regime == "all" or e.regime == regime or f == "best_single":
                col[f] = e.accuracy
                if f not in order:
                    order.append(f)
        col["oracle"] = next(iter(res.evaluations.values())).oracle
        cols[pool] = col
    df = pd.DataFrame(cols).reindex(order + ["oracle"])
    df["mean"] = df.mean(axis=1, skipna=False)
    df.index.name = "family"
    return df.reset_index()


def _best_router(res: RouterComparison, exclude=FIXED_REFERENCES):
    fitted = [e for f, e in res.evaluations.items() if e.regime == "pre-answer" and f not in exclude]
    return max(fitted, key=lambda e: (e.gain_cal, -e.p_holm)) if fitted else None


def plateau_table(comparisons: Mapping) -> pd.DataFrame:
    """One row per pool (002 Table 3): test prompts, the frozen member b and its score, the
    oracle, the opportunity G_b = oracle - score of b with its exact (Cor. 5) interval, the
    fitted pre-answer router with the largest gain over b (chosen on the test prompts, so its
    gain is the optimistic end of the family), that gain with its paired interval and Holm p,
    the recovered share gain / G_b with its joint bootstrap interval (NaN unless G_b's lower
    limit is positive) and the residual G_b - gain."""
    rows = []
    for pool, res in _check(comparisons).items():
        base = res.evaluation("best_single")
        best = _best_router(res)
        pr = res.paired.set_index("policy") if len(res.paired) else None
        row = {"pool": pool, "n_test": base.n_eval, "metric": base.metric, "baseline_member": base.baseline_member,
               "baseline": base.baseline, "oracle": base.oracle, "G_b": base.G_b, "G_b_lo": base.G_b_lo,
               "G_b_hi": float(pr["G_b_hi"].iloc[0]) if pr is not None and "G_b_hi" in pr else np.nan}
        if best is None:
            row.update(best_router=None, gain=np.nan, gain_lo=np.nan, gain_hi=np.nan, p_holm=np.nan,
                       recovered=np.nan, recovered_lo=np.nan, recovered_hi=np.nan, residual=np.nan)
        else:
            row.update(best_router=best.family, gain=best.gain_cal, gain_lo=best.gain_cal_lo, gain_hi=best.gain_cal_hi,
                       p_holm=best.p_holm, recovered=best.recovered, recovered_lo=best.recovered_lo,
                       recovered_hi=best.recovered_hi, residual=best.G_b - best.gain_cal)
        rows.append(row)
    return pd.DataFrame(rows)


def paired_table(comparisons: Mapping, *, regime: str | None = None) -> pd.DataFrame:
    """One row per (pool, family) other than the frozen member b (002 Tables 14 and 15):
    accuracy with its exact interval, the paired difference against b with its bootstrap
    interval, n10 / n01, exact McNemar p and Holm p (within the pool's family of the same
    regime), rescue = P(router right, b wrong), loss = P(router wrong, b right), net = rescue -
    loss (= the difference), and the recovered share of G_b (NaN unless reported).
    ``regime``: keep only "pre-answer" or "post-inference" rows."""
    rows = []
    for pool, res in _check(comparisons).items():
        pr = res.paired.set_index("policy") if len(res.paired) else pd.DataFrame()
        for f, e in res.evaluations.items():
            if f == "best_single" or (regime is not None and e.regime != regime):
                continue
            p = pr.loc[f] if f in pr.index else None
            rows.append({
                "pool": pool, "family": f, "regime": e.regime, "accuracy": e.accuracy, "accuracy_lo": e.accuracy_lo,
                "accuracy_hi": e.accuracy_hi, "difference": e.gain_cal,
                "diff_lo": float(p["diff_lo"]) if p is not None else np.nan,
                "diff_hi": float(p["diff_hi"]) if p is not None else np.nan,
                "n10": e.n10, "n01": e.n01, "p_mcnemar": e.p_mcnemar, "p_holm": e.p_holm,
                "rescue": e.rescue, "loss": e.loss, "net": e.rescue - e.loss,
                "recovered": e.recovered, "recovered_lo": e.recovered_lo, "recovered_hi": e.recovered_hi,
            })
    cols = ["pool", "family", "regime", "accuracy", "accuracy_lo", "accuracy_hi", "difference", "diff_lo", "diff_hi", "n10",
            "n01", "p_mcnemar", "p_holm", "rescue", "loss", "net", "recovered", "recovered_lo", "recovered_hi"]
    return pd.DataFrame(rows, columns=cols)


def certificate(res: RouterComparison, pool: Pool, families: Sequence[str] | None = PAPER_FAMILY, *,
                alpha: float | None = None) -> FamilyCertificate:
    """002 Thm 6 on the test prompts of a split protocol, over the predeclared family Pi = every
    constant policy plus the fitted routers ``families`` (those evaluated; None: every fitted
    pre-answer family), with simultaneous (1 - alpha) intervals for G_Pi = q_Pi - p* and
    H_Pi = q - q_Pi. ``pool`` is the pool the comparison was evaluated on (its outcomes are
    rescored at the comparison's tau)."""
    if not isinstance(res, RouterComparison):
        raise TypeError(f"res must be a RouterComparison, got {type(res).__name__}")
    if res.protocol.mode != "split":
        raise ValueError("the family certificate needs a split protocol (test prompts never seen by the fitted routers); "
                         "under cross-fitting every fold's router saw the other folds' outcomes")
    if not isinstance(pool, Pool) or pool.n_policies != len(res.policy_names):
        raise ValueError("pool must be the Pool the comparison was evaluated on")
    O, _ = outcome_matrix(pool, res.tau)
    Oe = O[res.protocol.eval_idx]
    if families is None:
        names = [f for f, e in res.evaluations.items() if e.regime == "pre-answer" and f not in FIXED_REFERENCES]
    else:
        names = [f for f in families if f in res.evaluations]
    choices = {f: res.evaluation(f).choice for f in names}
    return family_certificate(Oe, choices or None, check_alpha(res.alpha if alpha is None else alpha), model_names=res.policy_names)


def simulated_study(
    kind: str = "exchangeable",
    n_pools: int = 100,
    *,
    n: int = 120,
    M: int = 3,
    k: int = 1,
    tau=None,
    strength: float = 0.3,
    families: Sequence[str] | None = None,
    params: Mapping | None = None,
    n_boot: int = 400,
    alpha: float = 0.05,
    seed=0,
    progress: bool | None = None,
) -> pd.DataFrame:
    """How often each family's 95% gain interval lies wholly above zero on ``n_pools`` simulated
    pools (:func:`~oraclegap.deploy.features.simulated_router_pool` of ``kind``, n x M x k, a
    50/50 split per pool), against the threshold-specific best member (interval re-selecting the
    best member per resample) and against the calibration-selected member; and how often the
    Holm-corrected exact McNemar test rejects with a positive difference.

    With ``kind="exchangeable"`` every member has the same rate on every prompt, so every
    pre-answer rule has population gain 0 and each count is a false-positive count: under a
    valid one-sided 2.5% criterion it is at most Binomial(n_pools, alpha/2) in distribution;
    ``p_upper`` = P(X >= count) at that rate. With ``"specialists"`` the counts measure power.
    One row per family: pools, counts, rates and p_upper for both comparators.
    """
    if kind not in ("exchangeable", "specialists"):
        raise ValueError(f"kind must be 'exchangeable' or 'specialists', got {kind!r}")
    n_pools = check_int(n_pools, "n_pools", minimum=1)
    alpha = check_alpha(alpha)
    fams = list(families) if families is not None else [f for f in PRE_ANSWER if f != "cheapest"]
    seeds = np.random.SeedSequence(check_int(seed, "seed", minimum=0)).generate_state(n_pools)
    counts = {f: [0, 0, 0] for f in fams}
    from tqdm.auto import tqdm

    for s in tqdm(seeds, desc=f"{kind} pools", disable=(not progress) if progress is not None else None, leave=False):
        sim = simulated_router_pool(n, M, k, kind=kind, strength=strength, seed=int(s))
        res = evaluate_routers(sim.pool, fams, tau=tau, split="half", seed=int(s) % 2**31, inputs=router_inputs(sim.pool),
                               params=params, n_boot=n_boot, alpha=alpha)
        for f in fams:
            e = res.evaluation(f)
            counts[f][0] += int(e.gain_best_ci.lo > 0)
            counts[f][1] += int(e.gain_cal_ci.lo > 0)
            counts[f][2] += int(e.p_holm < alpha and e.gain_cal_ci.value > 0)
    rows = []
    for f, (cb, cc, ch) in counts.items():
        rows.append({"family": f, "pools": n_pools, "above_best": cb, "above_cal": cc, "holm_positive": ch,
                     "rate_best": cb / n_pools, "rate_cal": cc / n_pools, "rate_holm": ch / n_pools,
                     "p_upper_best": float(binom.sf(cb - 1, n_pools, alpha / 2)),
                     "p_upper_cal": float(binom.sf(cc - 1, n_pools, alpha / 2))})
    out = pd.DataFrame(rows)
    out.attrs.update(kind=kind, n=n, M=M, k=k, nominal=alpha / 2)
    return out
