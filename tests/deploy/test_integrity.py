"""Integrity before inference.

Planted duplicates (exact after normalisation, near by TF-IDF cosine) are counted and flagged as
leakage exactly when they cross the routers' calibration/test split; deduplication keeps the first
of each group; outcome alignment lists the planted disagreements; max-merged and cached data are
warned about; the constant baselines equal direct computations. CLI: one-line errors, exit 2.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from oraclegap import cli
from oraclegap.deploy.evaluate import make_protocol
from oraclegap.deploy.integrity import (
    answers_match,
    check_aggregation,
    check_duplicates,
    check_outcome_alignment,
    constant_baselines,
    deduplicate,
    integrity_checks,
)
from oraclegap.pool import Pool

WORDS = np.array("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
                 "upsilon phi chi psi omega".split())


def _texts(n, seed):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, 12)) + f" item{i}" for i in range(n)]


def _pool(texts, split=None, seed=0, **kw):
    n = len(texts)
    rng = np.random.default_rng(seed)
    pr = pd.DataFrame({"id": [f"p{i}" for i in range(n)], "text": texts})
    if split is not None:
        pr["split"] = split
    pr = pr.assign(**{k: v for k, v in kw.items() if k in ("dataset", "gold")})
    return Pool(rng.random((n, 3, 1)) < 0.5, pr, answers=kw.get("answers"))


def test_planted_duplicates_across_the_split_are_leakage():
    n = 60
    t = _texts(n, 1)
    split = ["train"] * 30 + ["test"] * 30
    t[35] = "  " + t[3].upper().replace(" ", "   ") + " "  # exact after normalisation, across the split
    t[12] = t[4]  # exact, both calibration: not leakage
    t[50] = t[7] + " please"  # near: one extra word, across the split
    pool = _pool(t, split)
    d = check_duplicates(pool)
    assert (d.n_exact_groups, d.n_exact_duplicates, d.n_near_pairs) == (2, 2, 1)
    assert d.n_groups == 3 and d.n_duplicates == 3
    assert d.leakage and d.n_leaking_groups == 2 and d.n_leaking_prompts == 2
    g = d.groups.set_index("prompt_id")
    assert set(g.index) == {"p3", "p35", "p4", "p12", "p7", "p50"}
    assert g.loc["p50", "kind"] == "near" and g.loc["p35", "kind"] == "exact"
    assert g.loc[["p3", "p35", "p7", "p50"], "leaking"].all() and not g.loc[["p4", "p12"], "leaking"].any()
    rep = integrity_checks(pool)
    assert any(f.startswith("leakage: 2 duplicate groups cross") for f in rep.findings)
    assert rep.frame().set_index("check").loc["duplicates across the split", "status"] == "leakage"
    ded = deduplicate(pool, d)
    assert ded.n_prompts == n - 2 and "p35" not in ded.prompt_ids and "p12" not in ded.prompt_ids
    assert deduplicate(pool, d, include_near=True).n_prompts == n - 3
    assert not check_duplicates(ded, near=False).leakage


def test_no_duplicates_no_leakage_and_threshold_is_a_cosine():
    pool = _pool(_texts(40, 2), ["train"] * 20 + ["test"] * 20)
    d = check_duplicates(pool)
    assert d.n_groups == 0 and not d.leakage and d.n_near_pairs == 0
    # a threshold of a tiny cosine joins prompts sharing words; the check is monotone in it
    counts = [check_duplicates(pool, near_threshold=c).n_near_pairs for c in (0.9, 0.5, 0.2, 0.05)]
    assert counts == sorted(counts) and counts[-1] > 0
    with pytest.raises(ValueError, match="near_threshold must be a cosine in"):
        check_duplicates(pool, near_threshold=1.5)


def test_leakage_under_cross_fitting_follows_the_routers_folds():
    t = _texts(50, 3)
    t[20] = t[10]
    pool = _pool(t)
    proto = make_protocol(pool, cv=5, seed=4)
    fold = np.empty(50, int)
    for f, (_, tst) in enumerate(proto.folds):
        fold[tst] = f
    d = check_duplicates(pool, cv=5, seed=4)
    assert d.leakage == (fold[10] != fold[20]) and "5-fold" in d.protocol


def test_a_given_test_split_decides_leakage():
    t = _texts(30, 4)
    t[25] = t[5]
    pool = _pool(t)
    assert check_duplicates(pool, test=np.arange(30) >= 20).leakage  # 5 calibration, 25 test
    assert not check_duplicates(pool, test=np.arange(26, 30)).leakage  # both in calibration
    with pytest.raises(ValueError, match="test must leave prompts on both sides"):
        check_duplicates(pool, test=np.ones(30, bool))
    with pytest.raises(ValueError, match="distinct positions"):
        check_duplicates(pool, test=[1, 1])


def test_outcome_alignment_finds_the_planted_disagreements():
    n = 8
    gold = ["A", "B", "C", "D", "42", "paris", "['B']", ""]
    ans = np.empty((n, 2, 1), dtype=object)
    ans[:, 0, 0] = ["(A)", "the answer is (B)", "C.", "A", "42", "Paris ", "B", "x"]
    ans[:, 1, 0] = ["B", "B", "c", "D", "41", "london", "['B']", "y"]
    truth = np.zeros((n, 2, 1), bool)
    for i in range(n):
        for m in range(2):
            truth[i, m, 0] = answers_match(ans[i, m, 0], gold[i])
    V = truth.copy()
    V[3, 0, 0] = True  # planted: recorded right, the answer "A" is not gold "D"
    V[4, 1, 0] = True  # planted: "41" vs "42"
    pr = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "text": [f"t{i}" for i in range(n)], "gold": gold})
    pool = Pool(V, pr, answers=ans)
    a = check_outcome_alignment(pool)
    assert a.gold_column == "gold" and a.n_checked == 14 and a.n_disagree == 2  # the blank gold is not checked
    assert sorted(zip(a.disagreements["prompt_id"], a.disagreements["policy"], strict=True)) == [("q3", "m0"), ("q4", "m1")]
    assert truth[:7, 0, 0].tolist() == [True, True, True, False, True, True, True]
    assert check_outcome_alignment(_pool(_texts(5, 0))).n_checked == 0


def test_aggregation_warnings():
    rng = np.random.default_rng(5)
    V = rng.random((30, 3, 1)) < 0.5
    V[:, 2] = V[:, 0]  # a copied member
    pool = Pool(V, meta={"duplicates_merged": "max over repeated rows"})
    g = check_aggregation(pool)
    assert g.merged_with_max and g.identical_members == (("m0", "m2"),)
    assert any("merged with a max" in w for w in g.warnings)
    small = Pool(V[:5])
    assert check_aggregation(small).identical_members == ()  # 5 draws: agreement by chance is not flagged
    A = np.full((10, 2, 4), "same", dtype=object)
    cached = Pool(rng.random((10, 2, 4)) < 0.5, answers=A)
    assert check_aggregation(cached).constant_cells_share == 1.0


def test_constant_baselines_equal_direct_computation():
    rng = np.random.default_rng(6)
    n = 80
    V = rng.random((n, 3, 1)) < np.array([0.3, 0.6, 0.5])[None, :, None]
    ds = np.where(np.arange(n) % 2, "math", "law")
    V[ds == "law", 2, 0] = True  # member 2 is the law specialist
    pr = pd.DataFrame({"id": [f"p{i}" for i in range(n)], "dataset": ds, "split": ["train"] * 40 + ["test"] * 40})
    pool = Pool(V, pr)
    b = constant_baselines(pool).frame().set_index("baseline")
    O = V[:, :, 0]
    cal, tst = np.arange(40), np.arange(40, n)
    best = int(np.argmax(O[cal].mean(axis=0)))
    assert b.iloc[0]["score"] == pytest.approx(O[tst, best].mean())
    choice = np.array([int(np.argmax(O[cal][ds[cal] == lv].mean(axis=0))) for lv in ds[tst]])
    assert b.iloc[1]["score"] == pytest.approx(O[tst, choice].mean())
    assert b.loc["oracle (evaluated prompts)", "score"] == pytest.approx(O[tst].any(axis=1).mean())


def test_integrity_cli(tmp_path, capsys):
    t = _texts(40, 7)
    t[30] = t[2]
    pool = _pool(t, ["train"] * 20 + ["test"] * 20)
    pool.save(tmp_path / "pool")
    assert cli.main(["integrity", str(tmp_path / "pool"), "--json", "--dedupe-out", str(tmp_path / "dedup")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["duplicates"]["n_leaking_groups"] == 1 and out["baselines"][0]["baseline"].startswith("best constant")
    assert Pool.load(tmp_path / "dedup").n_prompts == 39
    rc = cli.main(["integrity", str(tmp_path / "pool"), "--dedupe-out", str(tmp_path / "dedup")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1 and "exists" in err
    assert cli.main(["integrity", str(tmp_path / "pool"), "--near-threshold", "2"]) == 2
