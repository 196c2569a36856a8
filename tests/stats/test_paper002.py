"""Paper 002's Tables 15, 3 and 2 recomputed from its own published figures (stats.paper002)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from oraclegap.datasets import paper_table
from oraclegap.stats import certify as C
from oraclegap.stats import paper002 as P


@pytest.fixture(scope="module")
def tabs():
    return {
        k: paper_table(f"002_{v}")
        for k, v in (
            ("t1", "table1_confirmatory"),
            ("t2", "table2_family"),
            ("t3", "table3_plateau"),
            ("t4", "table4_router_accuracy"),
            ("t15", "table15_paired"),
        )
    }


def test_counts_behind_table1(tabs):
    c = P.published_counts(tabs["t1"]).set_index("dataset")
    assert c.loc["arc_challenge", "b"] == 262 and c.loc["arc_challenge", "o"] == 291  # .873 and .970 of 300
    bad = tabs["t1"].assign(best=tabs["t1"]["best"] + 0.0016)
    with pytest.raises(ValueError, match="best"):
        P.published_counts(bad)


def test_mcnemar_exact_is_the_binomial_test():
    n10, n01 = np.array([16, 0, 7, 22]), np.array([39, 0, 14, 42])
    p = P.mcnemar_exact(n10, n01)
    assert p[1] == 1.0
    for j in (0, 2, 3):
        assert p[j] == pytest.approx(binomtest(int(n10[j]), int(n10[j] + n01[j]), 0.5).pvalue, rel=1e-10)
    with pytest.raises(ValueError, match="non-negative"):
        P.mcnemar_exact([-1], [2])


def test_table15_every_number_from_the_discordant_counts(tabs):
    """Accuracy, exact CI, Holm-corrected exact McNemar p and recovered % of all eight rows, at the paper's rounding."""
    t = P.table15_from_counts(tabs["t15"], tabs["t1"])
    assert len(t) == 8 and t["matches"].all(), t.loc[~t["matches"]].T
    g = t.set_index(["dataset", "method"]).loc[("gsm8k", "Max confidence")]
    assert g["p_holm"] < 0.05 and (t["p_holm"] >= 0.05).sum() == 7  # the one significant row is a harm


def test_table15_check_can_fail(tabs):
    t15 = tabs["t15"].copy()
    t15.loc[0, "n10"] += 1  # one discordant count off changes the accuracy at the third decimal
    t = P.table15_from_counts(t15, tabs["t1"])
    assert not t.loc[0, "matches"] and t.loc[1:, "matches"].sum() >= 6


def test_table3_from_tables_1_and_4(tabs):
    t = P.table3_from_tables(tabs["t1"], tabs["t4"], tabs["t3"])
    assert (t["best_router"] == "Fine-tuned encoder, K heads").all()
    routes = t.filter(like="_route")
    assert (routes != "neither").all().all(), (
        routes
    )  # every published cell follows from one of the two routes
    # the two routes are the same numbers up to the third decimal: neither is far off anywhere
    for col in ("oracle_opportunity", "best_gain", "residual"):
        assert np.abs(t[f"{col}_counts"] - t[f"{col}_rounded"]).max() < 1.5e-3
    # the routes do differ on some cell, so "both" everywhere would mean the check cannot tell them apart
    assert (routes != "both").any().any()


def test_table3_check_can_fail(tabs):
    t3 = tabs["t3"].copy()
    t3.loc[0, "recovered"] = 0.150
    t = P.table3_from_tables(tabs["t1"], tabs["t4"], t3)
    assert t.loc[0, "recovered_route"] == "neither"


def test_table2_attempt_equals_theorem6_on_a_matrix_with_the_published_counts(tabs):
    """The attempt needs only o, b and the routers' counts: a matrix with those counts gives the same intervals."""
    att = P.table2_attempt(tabs["t1"], tabs["t4"]).set_index("dataset")
    row = att.loc["hellaswag"]
    n, o, b = int(row["n"]), int(row["oracle_count"]), int(row["best_count"])
    rng = np.random.default_rng(0)
    R = np.zeros((n, 8), bool)
    R[:b, 0] = True
    R[b:o, 1:] = rng.random((o - b, 7)) < 0.5
    R[b:o, 1] = True  # every oracle item is covered, so the oracle count is o
    R[:, 2:] |= (rng.random((n, 6)) < 0.3) & R[:, [0]]
    assert R.sum(axis=0).max() == b and R.any(axis=1).sum() == o
    counts = np.round(
        paper_table("002_table4_router_accuracy")
        .set_index("method")
        .loc[list(P.PAPER_FAMILY_ROWS), "hellaswag"]
        * n
    )
    Y = R.any(axis=1)
    pols = {nm: np.arange(n) < 0 for nm in P.PAPER_FAMILY_ROWS}
    for nm, c in zip(P.PAPER_FAMILY_ROWS, counts.astype(int), strict=True):
        pols[nm] = Y & (np.cumsum(Y) <= c)
    cert = C.family_certificate(R, policy_outcomes=pols)
    assert cert.L == 11
    for a, q in (
        ("G_Pi_lo", cert.G.lo),
        ("G_Pi_hi", cert.G.hi),
        ("H_Pi_lo", cert.H.lo),
        ("H_Pi_hi", cert.H.hi),
    ):
        assert row[a] == pytest.approx(q, abs=1e-12)


def test_table2_does_not_follow_from_the_published_figures(tabs):
    t = P.table2_attempt(tabs["t1"], tabs["t4"], tabs["t2"])
    assert (t["L"] == 11).all() and (
        t["G_Pi_lo"] == 0
    ).all()  # the lower limit of G_Pi agrees: zero on all four
    d = t[["d_G_Pi_hi", "d_H_Pi_lo", "d_H_Pi_hi"]].abs()
    assert not t["matches"].any()
    assert (d.max(axis=1) > 0.005).all()  # beyond the paper's rounding on every dataset
    with pytest.raises(ValueError, match="family rows"):
        P.table2_attempt(tabs["t1"], tabs["t4"], family_rows=("no such router",))


def test_bad_inputs_name_the_argument(tabs):
    with pytest.raises(TypeError, match="t15"):
        P.table15_from_counts([1, 2], tabs["t1"])
    with pytest.raises(ValueError, match="t1 lacks"):
        P.table15_from_counts(tabs["t15"], pd.DataFrame({"dataset": ["x"]}))
    with pytest.raises(ValueError, match="group"):
        P.table3_from_tables(tabs["t1"], tabs["t4"], group="nothing")


def test_table8_transcription_agrees_with_table4(tabs):
    """Table 8's reference rows are Table 4's macro means (frozen best, cheapest) and the oracle's."""
    t8 = paper_table("002_table8_cost_aware").set_index("method")
    t4 = tabs["t4"].set_index("method")
    assert t8.loc["Frozen best fixed", "macro_accuracy"] == t4.loc["Frozen task-wise best", "mean"]
    assert t8.loc["Cheapest fixed", "macro_accuracy"] == t4.loc["Cheapest fixed", "mean"]
    assert t8.loc["Cost-aware oracle", "macro_accuracy"] == t4.loc["Full-information oracle", "mean"]
    assert t8.loc["Frozen best fixed", "relative_cost"] == 1.0
    deployable = t8[~t8["setting"].isin(["Reference", "Nondeployable"])]
    # the text: "every cost-aware method buys a small accuracy gain at 62-78% of the reference cost"
    assert deployable["relative_cost"].between(0.62, 0.78).all()
    assert (deployable["macro_accuracy"] >= t8.loc["Frozen best fixed", "macro_accuracy"]).all()


# ---------------------------------------------------------------------------- Tables 14 and 16, the audit
def test_table14_net_is_rescue_minus_loss():
    t14 = paper_table("002_table14_rescue_loss")
    n = {"arc_challenge": 150, "hellaswag": 150, "gsm8k": 100}  # the pilot's item counts (App. E, App. P)
    assert set(t14["dataset"]) == set(n)
    for r in t14.itertuples():
        counts = [round(x * n[r.dataset]) for x in (r.rescue, r.loss, r.net)]
        # every rate is a whole number of items to its three-decimal rounding, and net = rescue - loss in items
        assert all(abs(x * n[r.dataset] - c) <= n[r.dataset] * 5e-4 + 1e-9
                   for x, c in zip((r.rescue, r.loss, r.net), counts, strict=True))
        assert counts[0] - counts[1] == counts[2]


def _t16_arc():
    t16 = paper_table("002_table16_calibration")
    t6 = paper_table("002_table6_confirmatory_models")
    acc = pd.Series(t6["arc_accuracy"].to_numpy(), index=t6["family"].to_numpy())
    names = {"TinyLlama": "TinyLlama", "Qwen-0.5B": "Qwen2.5", "Llama-3.2-3B": "Llama-3.2", "Gemma-2-2B": "Gemma-2",
             "Phi-3.5-mini": "Phi-3.5", "Mistral-7B": "Mistral"}
    qwen = t6[t6["family"] == "Qwen2.5"].set_index("params")["arc_accuracy"]
    by_model = {m: (qwen[m.split("-")[1]] if m.startswith("Qwen") else acc[names[m]]) for m in t16["model"].unique()}
    return t16, pd.Series(by_model), int(paper_table("002_table1_confirmatory").set_index("dataset").loc["arc_challenge", "n"])


def test_table16_rescue_minus_loss_is_the_accuracy_difference():
    t16, acc, n = _t16_arc()
    r = P.table16_counts(t16, acc, n)
    assert len(r) == 8 and r["baseline"].sum() == 1
    assert r.loc[r["baseline"], "model"].item() == acc.idxmax()  # the baseline is Table 6's most accurate model
    assert r["ok"].all(), r[~r["ok"]]
    assert (r.loc[~r["baseline"], "net"] < 0).all()  # every other model is less accurate than the baseline
    bad = acc.copy()
    bad["Mistral-7B"] += 0.010
    assert not P.table16_counts(t16, bad, n).set_index("model").loc["Mistral-7B", "ok"]
    with pytest.raises(ValueError, match="lacks models"):
        P.table16_counts(t16, acc.drop("TinyLlama"), n)


def test_calibration_audit_known_cases():
    rng = np.random.default_rng(3)
    v = rng.random((200, 3, 4)) < np.array([0.3, 0.6, 0.5])[None, :, None]
    conf = np.where(v, 0.9, 0.2)  # member 0 and 1: confidence separates right from wrong perfectly
    conf[:, 2, :] = 0.5  # member 2: one constant confidence
    a = P.calibration_audit(v, conf, names=["a", "b", "c"], n_boot=50, seed=1).set_index("member")
    assert a.loc["b", "baseline"] and a["baseline"].sum() == 1  # most accurate member by default
    assert a.loc["a", "auroc"] == pytest.approx(1.0) and a.loc["a", "auprc"] == pytest.approx(1.0)
    assert a.loc["c", "auroc"] == pytest.approx(0.5)
    acc_c = v[:, 2, :].mean()
    assert a.loc["c", "ece"] == pytest.approx(abs(acc_c - 0.5))  # one bin: |accuracy - confidence|
    brier_a = np.mean((conf[:, 0, :] - v[:, 0, :]) ** 2)
    assert a.loc["a", "brier"] == pytest.approx(brier_a)
    acc = v.mean(axis=(0, 2))
    np.testing.assert_allclose(a["net"].to_numpy(), acc - acc[1], atol=1e-12)  # rescue - loss = acc_m - acc_b
    assert a.loc["b", "rescue"] == 0 == a.loc["b", "loss"]
    inside = (a["accuracy_lo"] <= a["accuracy"]) & (a["accuracy"] <= a["accuracy_hi"])
    assert inside.all()


def test_calibration_audit_ece_by_hand_and_errors():
    v = np.array([[True], [True], [False], [False]])[:, :, None]
    c = np.array([[0.95], [0.65], [0.55], [0.05]])[:, :, None]
    a = P.calibration_audit(v, c, n_bins=2, n_boot=0)
    # bins [0, .5) and [.5, 1]: {0.05: wrong} and {0.55 wrong, 0.65 right, 0.95 right}
    assert a["ece"].item() == pytest.approx((1 * abs(0 - 0.05) + 3 * abs(2 / 3 - (0.55 + 0.65 + 0.95) / 3)) / 4)
    with pytest.raises(ValueError, match="probabilities"):
        P.calibration_audit(v, np.log(c))
    with pytest.raises(TypeError, match="boolean"):
        P.calibration_audit(v.astype(int), c)
    with pytest.raises(ValueError, match="shape"):
        P.calibration_audit(v, c[:3])


def test_table2_count_search_finds_counts_that_give_the_limits(tabs):
    """Known truth: limits computed by Theorem 6 from chosen counts are found again by the search;
    on the published Table 2, three of the four rows have no count triple at all."""
    att = P.table2_attempt(tabs["t1"], tabs["t4"])
    made = att[["dataset", "G_Pi_lo", "G_Pi_hi", "H_Pi_lo", "H_Pi_hi"]].round(3)
    found = P.table2_count_search(made, tabs["t1"]).set_index("dataset")
    for r in att.itertuples():
        assert (r.oracle_count, r.best_policy_count, r.best_count) in found.loc[r.dataset, "fits"]
    pub = P.table2_count_search(tabs["t2"], tabs["t1"]).set_index("dataset")
    assert (pub["n_fits"] == 0).sum() >= 3
    t4 = tabs["t4"].set_index("method")
    for d, row in pub.iterrows():  # no fit uses Table 4's best family router and Table 1's counts together
        r_best = round(float(t4.loc[list(P.PAPER_FAMILY_ROWS), d].max()) * row["n"])
        assert (row["oracle_count"], max(r_best, row["best_count"]), row["best_count"]) not in row["fits"]
