"""The verdict study (oraclegap.audit.study): truth pools carry their truth, the confusion table and
false-claim rates are counts of the audits' codes with Wilson intervals, an exchangeable k = 1 pool is
not reported as certified, the build resumes and extends, and the committed study (data/study/) is
current for the rules and rebuilds (reduced) to its own codes."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from oraclegap.audit import study


def test_truth_pools_carry_their_truth():
    n, k, M = 80, 6, 4
    pool, p = study.truth_pool("exchangeable", n, k, M, seed=1)
    assert pool.shape == (n, M, k) and np.all(p == p[:, :1])
    pool, p = study.truth_pool("quality-only", n, k, M, seed=1)
    d = np.log(p / (1 - p)) - np.log(p[:, :1] / (1 - p[:, :1]))
    assert np.allclose(d, d[:1]) and np.all(np.diff(d[0]) > 0)  # one constant logit offset per member
    pool, p = study.truth_pool("specialist-text", n, k, M, seed=1)
    spec = p.argmax(axis=1)
    assert np.all((p == p.max(axis=1, keepdims=True)).sum(axis=1) == 1)  # one specialist per prompt
    assert all(f"topic{m} " in t for m, t in zip(spec, pool.prompts["text"], strict=True))
    pool_nt, p_nt = study.truth_pool("specialist-no-text", n, k, M, seed=1)
    assert np.array_equal(p_nt, p) and pool_nt.prompts["text"].isna().all()
    # common random numbers: one uniform per draw for every member, so a member with a higher rate
    # on a prompt is right on every draw where a member with a lower rate is
    pool, p = study.truth_pool("seed-aligned", n, k, M, seed=1)
    assert pool.alignment == "seed-aligned"
    v = pool.verdicts
    order = np.argsort(p, axis=1)
    ranked = np.take_along_axis(v, order[:, :, None], axis=1)
    assert np.all(np.diff(ranked.astype(int), axis=1) >= 0)
    pool, p = study.truth_pool("quality-probability", n, k, M, seed=1)
    inner = (p > 0.002) & (p < 0.998)
    d = p - p[:, :1]
    assert np.allclose(d[inner.all(axis=1)], d[inner.all(axis=1)][:1])  # constant offsets on the rate scale
    pool, p = study.truth_pool("dominant", n, k, M, seed=1)
    assert np.all(p[:, 0] > p[:, 1:].max(axis=1))  # member 0 beats every other member on every prompt
    with pytest.raises(ValueError, match="truth"):
        study.truth_pool("planted", n, k, M)


def test_a_seed_aligned_pool_read_from_a_long_csv_declares_nothing_and_keeps_its_verdicts():
    pool, _ = study.truth_pool("seed-aligned", 40, 4, 3, seed=2)
    back = study.via_long_csv(pool)
    assert back.alignment == "unknown" and np.array_equal(back.verdicts, pool.verdicts)


def test_population_value_is_zero_on_identical_members_and_exact_at_k1():
    rng = np.random.default_rng(0)
    q = rng.random(50)
    same = np.repeat(q[:, None], 4, axis=1)
    assert abs(study.population_value(same, 8, 0.3)) < 1e-12
    assert abs(study.population_value(same, 8, 0.3, aligned=True, reps=3)) < 1e-12  # aligned: equal verdicts
    p = rng.random((50, 3))
    want = float((1 - np.prod(1 - p, axis=1)).mean() - p.mean(axis=0).max())
    assert study.population_value(p, 1, 0.5) == pytest.approx(want)


def test_scores_follow_the_truth_table():
    assert study.score("exchangeable", 16, "noise") == "correct"
    assert study.score("exchangeable", 16, "certified") == "wrong"
    assert study.score("exchangeable", 16, "quality-only") == "acceptable"
    assert study.score("quality-only", 16, "quality-only") == "correct"
    assert study.score("exchangeable", 1, "certified-recoverable") == "wrong"
    assert study.score("specialist-text", 16, "certified") == "acceptable"
    assert study.score("specialist-no-text", 16, "certified-recoverable") == "wrong"
    assert study.score("dominant", 16, "certified") == "wrong"
    assert study.score("diffuse-weak", 4, "noise") == "acceptable"
    with pytest.raises(ValueError, match="truth"):
        study.score("planted", 4, "noise")


@pytest.fixture(scope="module")
def tiny():
    return study.verdict_study(("exchangeable", "specialist-text"), ks=(1, 4), ns=(60,), n_pools=2, seed=3)


@pytest.mark.slow
def test_confusion_table_counts_the_codes(tiny):
    runs = tiny.runs
    seeds = {study.pool_seed(t, 60, k, r, 3) for t in ("exchangeable", "specialist-text") for k in (1, 4)
             for r in range(2)}
    assert len(runs) == 8 and set(runs["seed"]) == seeds and len(seeds) == 8
    tab = tiny.table()
    assert (tab.sum(axis=1) == 2).all()  # every cell's pools, each given one code
    conf = tiny.confusion()
    for row in conf.itertuples():
        got = ((runs["truth"] == row.truth) & (runs["k"] == row.k) & (runs["code"] == row.code)).sum()
        assert row.count == got and row.pools == 2
        lo, hi = proportion_confint(row.count, row.pools, alpha=0.05, method="wilson")
        assert (row.lo, row.hi) == pytest.approx((lo, hi)) and row.lo <= row.rate <= row.hi


def test_false_claims_and_precision(tiny):
    runs = tiny.runs
    fc = tiny.false_claims()
    assert set(fc["truth"]) == {"exchangeable"}  # only truths without specialization
    for row in fc.itertuples():
        cell = runs[(runs["truth"] == row.truth) & (runs["k"] == row.k)]
        assert row.false == cell["code"].isin(study.CLAIM_CODES + ("quality-only",)).sum()
        assert row.above_alpha == (row.lo > 0.05)
    pr = tiny.precision()
    for row in pr.itertuples():
        given = runs[runs["code"] == row.code]
        assert row.given == len(given) and row.right == given["truth"].isin(study.SPECIALIZED).sum()


def test_exchangeable_k1_pools_are_not_certified(tiny):
    codes = tiny.runs.query("truth == 'exchangeable' and k == 1")["code"]
    assert not codes.isin(["certified", "certified-recoverable"]).any()
    assert codes.isin(["noise", "luck-not-excluded"]).all()


def test_study_refuses_bad_designs():
    with pytest.raises(ValueError, match="truths"):
        study.verdict_study(("nothing",))
    with pytest.raises(ValueError, match="ns"):
        study.verdict_study(ns=(10,))
    with pytest.raises(ValueError, match="n_pools"):
        study.verdict_study(n_pools=0)


def test_a_cell_draws_the_same_pools_whatever_else_runs(tiny):
    alone = study.verdict_study(("specialist-text",), ks=(1,), ns=(60,), n_pools=2, seed=3).runs
    both = tiny.runs.query("truth == 'specialist-text' and k == 1")
    cols = ["truth", "n", "k", "rep", "seed", "code"]
    assert alone[cols].reset_index(drop=True).equals(both[cols].reset_index(drop=True))
    assert study.pool_seed("diffuse", 200, 4, 0) != study.pool_seed("diffuse", 200, 4, 1)
    assert study.pool_seed("diffuse", 200, 4, 0) != study.pool_seed("diffuse-weak", 200, 4, 0)


def test_build_study_writes_resumes_and_extends(tmp_path, tiny):
    design = {**study.STUDY, "truths": ("exchangeable", "specialist-text"), "ks": (1,), "ns": (60,),
              "n_pools": 1, "stability_pools": 1, "stability_ns": (60,), "seed": 3, "extra_cells": (),
              "certificate_cells": (("exchangeable", 60, 4),), "certificate_pools": 3}
    tiny_k1 = tiny.runs[tiny.runs["k"] == 1]
    cells = tmp_path / "cells"
    s1 = study.build_study(tmp_path / "out", design=design, jobs=1, cells_dir=cells, progress=False)
    cols = ["truth", "n", "k", "rep", "seed", "code"]
    want = tiny_k1[tiny_k1["rep"] == 0][cols].reset_index(drop=True)
    assert s1.runs[cols].reset_index(drop=True).equals(want)  # the same pools and codes as in-process
    files = sorted(cells.rglob("*.csv"))
    stamps = [f.stat().st_mtime_ns for f in files]
    s2 = study.build_study(tmp_path / "out", design=design, jobs=1, cells_dir=cells, progress=False)
    assert [f.stat().st_mtime_ns for f in files] == stamps  # resumed: nothing rerun
    assert s2.runs.equals(s1.runs)
    s3 = study.build_study(tmp_path / "out", design={**design, "n_pools": 2}, jobs=1, cells_dir=cells,
                           progress=False)
    assert s3.runs[cols].reset_index(drop=True).equals(tiny_k1[cols].reset_index(drop=True))
    back = study.load_study(tmp_path / "out")
    cert = back.certificate_runs  # the certificate study: its own pools, each with its population value
    assert len(cert) == 3 and set(cert["truth"]) == {"exchangeable"} and (cert["population"].abs() < 1e-9).all()
    assert back.coverage()["pools"].sum() == 3
    assert back.runs.equals(s3.runs.reset_index(drop=True)) and back.meta["rules"] == study.rules_signature()
    st = back.stability()
    runs = back.stability_runs
    assert len(runs) == 2 and set(runs["seed"]) <= set(s3.runs["seed"])
    same = (runs["code_small"] == runs["code_full"]).sum()
    assert st.loc[st["k"] == "all", "same"].item() == same and st.loc[st["k"] == "all", "pools"].item() == 2
    with pytest.raises(ValueError, match="path"):
        study.load_study(tmp_path / "nothing")


STUDY_DIR = study.STUDY_DIR


@pytest.mark.skipif(not (STUDY_DIR / study.RUNS_FILE).is_file(), reason="no committed study (make study)")
def test_committed_study_is_current_and_holds_the_rule():
    s = study.load_study()
    assert s.meta["rules"] == study.rules_signature(), "the verdict rules changed: rerun `make study`"
    d = s.meta["design"]
    assert set(s.runs["truth"]) == set(d["truths"]) and len(s.runs) == (
        (len(d["truths"]) * len(d["ks"]) * len(d["ns"]) + len(d["extra_cells"])) * d["n_pools"])
    fc = s.false_claims()
    assert (fc["lo"] <= s.alpha).all(), fc[fc["lo"] > s.alpha]  # no cell shown to exceed alpha
    no_spec = s.runs[~s.runs["truth"].isin(study.SPECIALIZED)]
    strong = no_spec["code"].isin(["certified", "certified-recoverable"]).sum()
    assert strong == 0 and int(fc["false"].sum()) <= s.alpha * int(fc["pools"].sum())
    # the certified quantity: covers its population value, and on identical members stays <= 0
    cov = s.coverage()
    assert (cov["hi"] >= 0.95).all(), cov[cov["hi"] < 0.95]  # no cell shown to cover less than 95%
    by_truth = cov.groupby("truth")[["covers", "pools"]].sum()
    assert (by_truth["covers"] >= 0.95 * by_truth["pools"]).all(), by_truth
    ll = s.lower_limits()
    ident = ll[ll["truth"] == "exchangeable"]
    assert (ident["rate"] >= 0.95).all() and ident["certified"].sum() == 0 and ident["promises"].sum() == 0
    assert set(ident["k"]) >= {4, 16, 30} and ident["n"].max() >= 8000
    # quality-only: on quality pools with n >= 1500 and k >= 16, and at most alpha on identical members
    q = s.code_rate("quality-only")
    big = q[(q["truth"] == "quality-only") & (q["n"] >= 1500) & (q["k"] >= 16)]
    assert len(big) and (big["rate"] >= 0.8).all(), big
    exch = q[(q["truth"] == "exchangeable") & (q["k"] > 1)]
    assert exch["given"].sum() <= s.alpha * exch["pools"].sum()
    # seed-aligned pools read from a long CSV are found seed-aligned
    al = s.alignment_found()
    assert (al.loc[al["truth"] == "seed-aligned", "rate"] >= 0.9).all()
    exch1 = s.runs.query("truth == 'exchangeable' and k == 1")["code"]
    assert not exch1.isin(["certified", "certified-recoverable"]).any()


@pytest.mark.slow
@pytest.mark.skipif(not (STUDY_DIR / study.RUNS_FILE).is_file(), reason="no committed study (make study)")
def test_committed_study_rebuilds_reduced():
    """Pool 0 of every truth at the design's smallest n and k in {1, 16}, audited again here: the
    committed codes come back. Codes are Monte Carlo decisions, so a pool on a threshold could flip
    between CPUs (floating point): all but one must agree."""
    s = study.load_study()
    d = s.meta["design"]
    again = study.verdict_study(d["truths"], ks=(1, 16), ns=(min(d["ns"]),), n_pools=1, M=d["M"], alpha=d["alpha"],
                                seed=d["seed"]).runs
    cols = ["truth", "n", "k", "rep", "seed"]
    merged = again.merge(s.runs, on=cols, suffixes=("", "_committed"))
    assert len(merged) == len(again) == 2 * len(d["truths"])
    assert (merged["code"] == merged["code_committed"]).sum() >= len(merged) - 1, merged


def test_cached_cells_are_not_reused_after_the_code_changes(tmp_path, monkeypatch):
    design = {**study.STUDY, "truths": ("exchangeable",), "ks": (1,), "ns": (60,), "n_pools": 1,
              "stability_pools": 0, "seed": 3, "extra_cells": (), "certificate_cells": ()}
    cells = tmp_path / "cells"
    study.build_study(tmp_path / "out", design=design, jobs=1, cells_dir=cells, progress=False)
    first = {p.parent.name for p in cells.rglob("*.csv")}
    monkeypatch.setattr(study, "_code_digest", lambda: "another version of the library")
    study.build_study(tmp_path / "out", design=design, jobs=1, cells_dir=cells, progress=False)
    both = {p.parent.name for p in cells.rglob("*.csv")}
    assert len(first) == 1 and len(both) == 2  # a second folder: the cell was run again
