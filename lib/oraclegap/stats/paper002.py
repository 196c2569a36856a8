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
