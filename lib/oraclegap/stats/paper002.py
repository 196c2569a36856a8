"""Paper 002 (Shihab et al.) recomputed from its own published figures.

Three tables of the paper can be checked from numbers the paper prints elsewhere:

* :func:`table15_from_counts` -- Appendix O, Table 15: every selector's accuracy follows from the
  frozen best model's count (Table 1) and the discordant counts n10 / n01 (router accuracy =
  (b + n10 - n01) / n); the exact Clopper-Pearson interval of that count, the exact McNemar test
  of n10 = n01 (binomial on the n10 + n01 discordant items), Holm over the eight rows, and the
  recovered share (n10 - n01) / (o - b) of the oracle opportunity follow.
* :func:`table3_from_tables` -- Section 7.2, Table 3 from Tables 1 and 4: the best prompt router's
  gain over the frozen best model, the share of the oracle opportunity it recovers and the
  residual. The paper's figures follow from two routes that differ in the third decimal: the
  rounded three-decimal figures (gain / opportunity) and the integer counts (round(acc * n)); the
  result says which route reproduces each published cell.
* :func:`table2_attempt` -- Section 7.1, Table 2 (Theorem 6 with L = 11): with the paper's budget
  split (delta/3 to the oracle, delta/(3K) to each member, delta/(3L) to each policy) at the
  published n, the intervals depend only on the oracle count, the best member's count and the
  best policy's count (Clopper-Pearson limits are monotone in the count), all of which Tables 1
  and 4 publish. The computed intervals do not match the published ones; the result reports the
  differences.
* :func:`table2_count_search` -- which integer counts (oracle, best policy, best member) give
  Table 2's four published limits under Theorem 6's split: the text fixes the split and the
  Clopper-Pearson construction but not which counts enter, so every triple near the published
  figures is tried.
* :func:`table16_counts` -- Appendix O, Table 16's rescue and loss columns against the accuracies
  of Table 6: on n items, rescue - loss = acc_m - acc_b for every model m and the frozen baseline
  b, which holds in whole items.
* :func:`calibration_audit` -- Table 16's audit on any pool with per-response confidences:
  AUROC, AUPRC, Brier score and expected calibration error of each member's own confidence
  against its correctness, and its rescue and loss rates against the frozen baseline, each with a
  prompt-bootstrap interval.

Inputs are the transcribed tables (``datasets.paper_table("002_...")``) as DataFrames; nothing here
reads files.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from .._validate import check_alpha
from .certify import _cp, _family_bounds

__all__ = [
    "PAPER_FAMILY_ROWS",
    "published_counts",
    "mcnemar_exact",
    "table15_from_counts",
    "table3_from_tables",
    "table2_attempt",
    "table2_count_search",
    "table16_counts",
    "calibration_audit",
]

#: Table 4 rows of the fitted routers in paper 002's predeclared Theorem 6 family (Sec. 7.1, App. D.9).
PAPER_FAMILY_ROWS = ("Logistic multi-output", "k-NN", "Fine-tuned encoder, K heads")


def _need(df, cols, name):
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{name} lacks columns {missing}; expected the transcribed paper table")


def published_counts(t1: pd.DataFrame) -> pd.DataFrame:
    """Integer counts behind Table 1: n, b = round(best * n) and o = round(oracle * n) per dataset.

    Three-decimal rates at n <= 300 identify the count uniquely (1 / n > 0.001), so the rounding is
    exact; a rate that is not within 0.0005 of a count / n raises.
    """
    _need(t1, ["dataset", "n", "best", "oracle"], "t1")
    n = t1["n"].to_numpy(dtype=int)
    out = pd.DataFrame({"dataset": t1["dataset"].to_numpy(), "n": n})
    for col, key in (("best", "b"), ("oracle", "o")):
        c = np.round(t1[col].to_numpy(dtype=float) * n).astype(int)
        if np.any(np.abs(c / n - t1[col].to_numpy(dtype=float)) > 5e-4 + 1e-12):
            raise ValueError(f"t1[{col!r}] holds a rate that is no count / n at three decimals")
        out[key] = c
    return out


def mcnemar_exact(n10, n01) -> np.ndarray:
    """Two-sided exact McNemar p-values (statsmodels: n10 ~ Bin(n10 + n01, 1/2)); 1 with no discordant items."""
    a, b = np.atleast_1d(np.asarray(n10)), np.atleast_1d(np.asarray(n01))
    if a.shape != b.shape or np.any(a < 0) or np.any(b < 0):
        raise ValueError("n10 and n01 must be non-negative counts of the same shape")
    return np.array(
        [
            1.0 if x + y == 0 else float(mcnemar([[0, int(x)], [int(y), 0]], exact=True).pvalue)
            for x, y in zip(a, b, strict=True)
        ]
    )


def table15_from_counts(t15: pd.DataFrame, t1: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Table 15 recomputed from the discordant counts and Table 1's counts (see the module docstring).

    One row per Table 15 row: the computed ``accuracy``, ``ci_lo`` / ``ci_hi`` (exact, level
    1 - alpha), ``p_mcnemar``, ``p_holm`` (Holm over all rows), ``recovered_percent``, each beside the
    published value (``*_paper``), and ``matches``: every computed value equals the published one
    at the paper's rounding (three decimals; one for the percent).
    """
    alpha = check_alpha(alpha)
    _need(
        t15,
        ["dataset", "n", "method", "accuracy", "ci_lo", "ci_hi", "n10", "n01", "p_holm", "recovered_percent"],
        "t15",
    )
    cnt = published_counts(t1).set_index("dataset")
    unknown = sorted(set(t15["dataset"]) - set(cnt.index))
    if unknown:
        raise ValueError(f"t15 names datasets {unknown} that t1 does not hold")
    n = t15["n"].to_numpy(dtype=int)
    if np.any(cnt.loc[t15["dataset"], "n"].to_numpy() != n):
        raise ValueError("t15 and t1 disagree on n")
    b = cnt.loc[t15["dataset"], "b"].to_numpy()
    o = cnt.loc[t15["dataset"], "o"].to_numpy()
    n10, n01 = t15["n10"].to_numpy(dtype=int), t15["n01"].to_numpy(dtype=int)
    s = b + n10 - n01
    lo, hi = _cp(s, n, alpha)
    p = mcnemar_exact(n10, n01)
    out = pd.DataFrame(
        {
            "dataset": t15["dataset"],
            "method": t15["method"],
            "n": n,
            "baseline_count": b,
            "router_count": s,
            "n10": n10,
            "n01": n01,
            "accuracy": s / n,
            "ci_lo": lo,
            "ci_hi": hi,
            "p_mcnemar": p,
            "p_holm": multipletests(p, method="holm")[1],
            "recovered_percent": 100 * (s - b) / (o - b),
        }
    )
    ok = np.ones(len(out), bool)
    for col in ("accuracy", "ci_lo", "ci_hi", "p_holm", "recovered_percent"):
        out[col + "_paper"] = t15[col].to_numpy(dtype=float)
        d = 1 if col == "recovered_percent" else 3
        ok &= np.isclose(np.round(out[col].to_numpy(), d), out[col + "_paper"].to_numpy(), atol=1e-9)
    out["matches"] = ok
    return out


def _best_router_rows(t4, datasets, group):
    _need(t4, ["group", "method", *datasets], "t4")
    rows = t4[t4["group"] == group]
    if rows.empty:
        raise ValueError(f"t4 has no rows of group {group!r}")
    return rows


def table3_from_tables(
    t1: pd.DataFrame, t4: pd.DataFrame, t3: pd.DataFrame | None = None, *, group: str = "Prompt"
) -> pd.DataFrame:
    """Table 3 from Table 1 (best member, oracle) and Table 4 (the best router of ``group``), two routes.

    Route ``rounded``: gain = router - best from the three-decimal figures, recovered = gain /
    (oracle - best), residual = opportunity - gain. Route ``counts``: the same from the integer
    counts round(rate * n). With ``t3`` (the published Table 3) each published cell gets the
    route(s) that reproduce it at the paper's rounding (three decimals; recovered in percent at
    one decimal), in ``<col>_route``: "both", "rounded", "counts" or "neither".
    """
    cnt = published_counts(t1).set_index("dataset")
    ds = list(cnt.index)
    rows = _best_router_rows(t4, ds, group)
    t1i = t1.set_index("dataset")
    out = []
    for d in ds:
        n, b, o = int(cnt.loc[d, "n"]), int(cnt.loc[d, "b"]), int(cnt.loc[d, "o"])
        j = rows[d].to_numpy(dtype=float).argmax()
        best_r, router = rows["method"].iloc[j], float(rows[d].iloc[j])
        r = int(round(router * n))
        opp_r = float(t1i.loc[d, "oracle"] - t1i.loc[d, "best"])
        gain_r = router - float(t1i.loc[d, "best"])
        out.append(
            {
                "dataset": d,
                "best_router": best_r,
                "n": n,
                "oracle_opportunity_rounded": opp_r,
                "best_gain_rounded": gain_r,
                "recovered_rounded": gain_r / opp_r,
                "residual_rounded": opp_r - gain_r,
                "oracle_opportunity_counts": (o - b) / n,
                "best_gain_counts": (r - b) / n,
                "recovered_counts": (r - b) / (o - b),
                "residual_counts": (o - r) / n,
            }
        )
    df = pd.DataFrame(out)
    if t3 is not None:
        _need(t3, ["dataset", "oracle_opportunity", "best_gain", "recovered", "residual"], "t3")
        pub = t3.set_index("dataset").loc[ds]
        for col in ("oracle_opportunity", "best_gain", "recovered", "residual"):
            p = pub[col].to_numpy(dtype=float)
            df[col + "_paper"] = p
            scale, d = (100.0, 1) if col == "recovered" else (1.0, 3)
            hit = {
                rt: np.isclose(
                    np.round(scale * df[f"{col}_{rt}"].to_numpy(), d), np.round(scale * p, d), atol=1e-9
                )
                for rt in ("rounded", "counts")
            }
            df[col + "_route"] = np.select(
                [hit["rounded"] & hit["counts"], hit["rounded"], hit["counts"]],
                ["both", "rounded", "counts"],
                "neither",
            )
    return df


def table2_attempt(
    t1: pd.DataFrame,
    t4: pd.DataFrame,
    t2: pd.DataFrame | None = None,
    *,
    K: int = 8,
    family_rows=PAPER_FAMILY_ROWS,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Theorem 6 from the published figures with the paper's budget split (see the module docstring).

    Pi = the K constant members plus the Table 4 rows ``family_rows`` (L = K + 3 = 11). The K
    members' counts other than the best one are not published, but they do not enter: each
    maximum of Clopper-Pearson limits is attained at the largest count, and the best member's
    count is the largest among the members (it is the best). With ``t2`` the published limits
    stand beside, with the differences ``d_<limit>`` = computed - published.
    """
    alpha = check_alpha(alpha)
    cnt = published_counts(t1).set_index("dataset")
    _need(t4, ["method", *cnt.index], "t4")
    t4i = t4.set_index("method")
    miss = [r for r in family_rows if r not in t4i.index]
    if miss:
        raise ValueError(f"t4 lacks the family rows {miss}")
    out = []
    for d in cnt.index:
        n, b, o = int(cnt.loc[d, "n"]), int(cnt.loc[d, "b"]), int(cnt.loc[d, "o"])
        r = np.round(t4i.loc[list(family_rows), d].to_numpy(dtype=float) * n).astype(int)
        c = np.r_[b, np.zeros(K - 1, dtype=int)]  # unpublished members: any count <= b gives the same maxima
        g_lo, g_hi, h_lo, h_hi, _ = _family_bounds(o, c, np.r_[c, r], n, alpha)
        out.append(
            {
                "dataset": d,
                "n": n,
                "K": K,
                "L": K + len(family_rows),
                "oracle_count": o,
                "best_count": b,
                "best_policy_count": int(max(b, r.max())),
                "G_Pi_lo": float(g_lo),
                "G_Pi_hi": float(g_hi),
                "H_Pi_lo": float(h_lo),
                "H_Pi_hi": float(h_hi),
            }
        )
    df = pd.DataFrame(out)
    if t2 is not None:
        _need(t2, ["dataset", "G_Pi_lo", "G_Pi_hi", "H_Pi_lo", "H_Pi_hi"], "t2")
        pub = t2.set_index("dataset").loc[df["dataset"]]
        for col in ("G_Pi_lo", "G_Pi_hi", "H_Pi_lo", "H_Pi_hi"):
            df[col + "_paper"] = pub[col].to_numpy(dtype=float)
            df["d_" + col] = df[col] - df[col + "_paper"]
        df["matches"] = np.all(
            [
                np.isclose(np.round(df[c], 3), df[c + "_paper"], atol=1e-9)
                for c in ("G_Pi_lo", "G_Pi_hi", "H_Pi_lo", "H_Pi_hi")
            ],
            axis=0,
        )
    return df


def table16_counts(t16: pd.DataFrame, accuracy: pd.Series, n: int, dataset: str = "arc_challenge") -> pd.DataFrame:
    """Table 16's rescue and loss rates read back as item counts on one dataset of ``n`` items.

    For model m and the frozen baseline b, rescue = P(R_m = 1, R_b = 0) and loss = P(R_m = 0,
    R_b = 1), so rescue - loss = acc_m - acc_b exactly. ``accuracy`` maps Table 16's model names
    to published accuracies (Table 6 for ARC-Challenge). Per model: the counts n * rescue,
    n * loss, n * acc_m (each must be whole to the three-decimal rounding), and ``ok`` when
    rescue count - loss count = acc count - baseline's acc count.
    """
    _need(t16, ["dataset", "model", "baseline", "rescue", "loss"], "t16")
    if not isinstance(accuracy, pd.Series):
        raise TypeError(f"accuracy must be a pandas Series indexed by model, got {type(accuracy).__name__}")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    rows = t16[t16["dataset"] == dataset]
    if rows.empty:
        raise ValueError(f"t16 has no rows for dataset {dataset!r}")
    base = rows[rows["baseline"].astype(str).str.lower() == "true"]
    if len(base) != 1:
        raise ValueError(f"t16 must mark exactly one baseline for {dataset!r}, got {len(base)}")
    missing = sorted(set(rows["model"]) - set(accuracy.index))
    if missing:
        raise ValueError(f"accuracy lacks models {missing}")
    half = n * 0.0005 + 1e-9

    def whole(x):
        c = round(float(x) * n)
        return c, abs(float(x) * n - c) <= half

    b_acc, b_ok = whole(accuracy[base["model"].iloc[0]])
    out = []
    for r in rows.itertuples():
        (res, ok1), (los, ok2), (acc, ok3) = whole(r.rescue), whole(r.loss), whole(accuracy[r.model])
        out.append({"model": r.model, "baseline": r.model == base["model"].iloc[0], "rescue_count": res,
                    "loss_count": los, "acc_count": acc, "baseline_count": b_acc,
                    "net": res - los, "acc_difference": acc - b_acc,
                    "ok": bool(ok1 and ok2 and ok3 and b_ok and res - los == acc - b_acc)})
    return pd.DataFrame(out)


def _ece(y, c, w, bins):
    idx = np.clip(np.searchsorted(bins, c, side="right") - 1, 0, len(bins) - 2)
    tot = np.bincount(idx, weights=w, minlength=len(bins) - 1)
    gap = np.bincount(idx, weights=w * y, minlength=len(bins) - 1) - np.bincount(idx, weights=w * c, minlength=len(bins) - 1)
    return float(np.abs(gap).sum() / tot.sum())


def _audit_stats(y, c, w, bins):
    from sklearn.metrics import average_precision_score, roc_auc_score

    keep = w > 0
    y, c, w = y[keep], c[keep], w[keep]
    two = 0 < (w * y).sum() < w.sum()
    return (float(np.average(y, weights=w)),
            float(roc_auc_score(y, c, sample_weight=w)) if two else float("nan"),
            float(average_precision_score(y, c, sample_weight=w)) if two else float("nan"),
            float(np.average((c - y) ** 2, weights=w)), _ece(y, c, w, bins))


def calibration_audit(verdicts, confidence, *, names=None, baseline=None, n_bins: int = 10, n_boot: int = 200,
                      level: float = 0.95, seed=0) -> pd.DataFrame:
    """Table 16's confidence and rescue-set audit of Shihab et al. on any pool with confidences.

    ``verdicts``: bool [n, M] or [n, M, k]; ``confidence``: each response's confidence as a
    probability in [0, 1], same shape (NaN: no confidence; that response is left out of the
    calibration columns; accuracy, rescue and loss count every response). Per member m, over its
    responses: AUROC and AUPRC of the confidence
    as a score for correctness (scikit-learn; AUPRC reads against the accuracy as prevalence),
    the Brier score and the expected calibration error with ``n_bins`` equal-width bins (the paper
    says "fixed bins" without their number; ten here). Against the frozen baseline b (``baseline``:
    a position or name; default the most accurate member), on draw-aligned responses:
    rescue = P(R_m = 1, R_b = 0) and loss = P(R_m = 0, R_b = 1), so rescue - loss =
    acc_m - acc_b. Intervals: percentile, ``n_boot`` resamples of the library's prompt bootstrap
    (:func:`~oraclegap.stats.bootstrap.bootstrap_counts`; every response of a resampled prompt
    carries the prompt's count as a weight). Returns one row per member: point values and
    ``*_lo`` / ``*_hi`` for accuracy, auroc, auprc, brier, ece, rescue, loss.
    """
    from .._validate import as_rng, check_int
    from .bootstrap import bootstrap_counts

    v = np.asarray(verdicts)
    c = np.asarray(confidence, dtype=float)
    if v.dtype != bool:
        raise TypeError(f"verdicts must be a boolean array, got dtype {v.dtype}")
    if v.ndim == 2:
        v, c = v[:, :, None], c[:, :, None] if c.ndim == 2 else c
    if v.ndim != 3 or c.shape != v.shape:
        raise ValueError(f"confidence must have the verdicts' shape {v.shape}, got {c.shape}")
    ok = np.isfinite(c)
    if ((c[ok] < 0) | (c[ok] > 1)).any():
        raise ValueError("confidence must be probabilities in [0, 1] (exponentiate log-probabilities first)")
    n, M, k = v.shape
    names = [f"member {m}" for m in range(M)] if names is None else [str(x) for x in names]
    if len(names) != M:
        raise ValueError(f"names must have one entry per member ({M}), got {len(names)}")
    if baseline is None:
        b = int(np.argmax(v.mean(axis=(0, 2))))
    elif isinstance(baseline, str):
        if baseline not in names:
            raise ValueError(f"baseline {baseline!r} is not among the names {names}")
        b = names.index(baseline)
    else:
        b = check_int(baseline, "baseline", minimum=0, maximum=M - 1)
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    n_boot = check_int(n_boot, "n_boot", minimum=0)
    check_alpha(1 - level, "1 - level")
    bins = np.linspace(0.0, 1.0, n_bins + 1)
    rng = as_rng(seed)
    weights = [np.ones(n), *(bootstrap_counts(n, n_boot, rng) if n_boot else ())]
    keys = ("accuracy", "auroc", "auprc", "brier", "ece", "rescue", "loss")
    vb = v[:, b, :]
    rows = []
    for m in range(M):
        y, cm, fin = v[:, m, :].astype(float), c[:, m, :], ok[:, m, :]
        acc = y.mean(axis=1)
        resc = (v[:, m, :] & ~vb).mean(axis=1)
        loss = (~v[:, m, :] & vb).mean(axis=1)
        stats = []
        for w in weights:
            wr = np.broadcast_to(w[:, None], (n, k))[fin]
            st = _audit_stats(y[fin], cm[fin], wr, bins)
            stats.append((np.average(acc, weights=w), *st[1:], np.average(resc, weights=w),
                          np.average(loss, weights=w)))
        arr = np.asarray(stats)
        row = {"member": names[m], "baseline": m == b, "n_responses": int(fin.sum())}
        for j, key in enumerate(keys):
            row[key] = float(arr[0, j])
            lo, hi = (np.nanquantile(arr[1:, j], [(1 - level) / 2, (1 + level) / 2]) if n_boot and
                      np.isfinite(arr[1:, j]).any() else (np.nan, np.nan))
            row[f"{key}_lo"], row[f"{key}_hi"] = float(lo), float(hi)
        rows.append(row)
    out = pd.DataFrame(rows)
    out["net"] = out["rescue"] - out["loss"]
    return out


def table2_count_search(t2: pd.DataFrame, t1: pd.DataFrame, *, K: int = 8, L: int = 11, alpha: float = 0.05,
                        radius: int = 15) -> pd.DataFrame:
    """Every (oracle, best policy, best member) count triple within ``radius`` of Tables 1 and 4's
    that reproduces Table 2's four limits to their three decimals under Theorem 6's split.

    Theorem 6 gives the oracle's Clopper-Pearson interval failure delta/3, each member's
    delta/(3K) and each policy's delta/(3L); G_Pi = [max(0, max L_pi - max U_m),
    min(1, max U_pi - max L_m)], H_Pi = [max(0, L_q - max U_pi), min(1, U_q - max L_pi)]. Each
    maximum is attained at the largest count, so the limits depend on three counts only. Returns
    one row per dataset: the published counts, the number of matching triples and the triples.
    """
    from statsmodels.stats.proportion import proportion_confint

    alpha = check_alpha(alpha)
    _need(t2, ["dataset", "G_Pi_lo", "G_Pi_hi", "H_Pi_lo", "H_Pi_hi"], "t2")
    cnt = published_counts(t1).set_index("dataset")
    out = []
    for r in t2.itertuples():
        n, o, b = int(cnt.loc[r.dataset, "n"]), int(cnt.loc[r.dataset, "o"]), int(cnt.loc[r.dataset, "b"])
        x = np.arange(n + 1)
        q_lo, q_hi = proportion_confint(x, n, alpha / 3, method="beta")
        m_lo, m_hi = proportion_confint(x, n, alpha / (3 * K), method="beta")
        p_lo, p_hi = proportion_confint(x, n, alpha / (3 * L), method="beta")
        oo = np.arange(max(o - radius, 0), min(o + radius, n) + 1)[:, None, None]
        pp = np.arange(max(b - radius, 0), min(b + 2 * radius, n) + 1)[None, :, None]
        mm = np.arange(max(b - radius, 0), min(b + radius, n) + 1)[None, None, :]
        lims = (np.maximum(0, p_lo[pp] - m_hi[mm]), np.minimum(1, p_hi[pp] - m_lo[mm]),
                np.maximum(0, q_lo[oo] - p_hi[pp]), np.minimum(1, q_hi[oo] - p_lo[pp]))
        ok = np.ones(np.broadcast_shapes(oo.shape, pp.shape, mm.shape), dtype=bool)
        for lim, pub in zip(lims, (r.G_Pi_lo, r.G_Pi_hi, r.H_Pi_lo, r.H_Pi_hi), strict=True):
            ok &= np.abs(lim - pub) <= 5e-4 + 1e-9
        hits = [(int(oo[i, 0, 0]), int(pp[0, j, 0]), int(mm[0, 0, k])) for i, j, k in zip(*np.nonzero(ok), strict=True)]
        out.append({"dataset": r.dataset, "n": n, "oracle_count": o, "best_count": b, "n_fits": len(hits),
                    "fits": hits})
    return pd.DataFrame(out)
