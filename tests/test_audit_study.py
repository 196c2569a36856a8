"""The reduced verdict study (oraclegap.audit.study, issue 25): truth pools carry their truth, the
confusion table and false-claim rates are counts of the audits' codes with Wilson intervals, and an
exchangeable k = 1 pool is not reported as certified."""

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
    with pytest.raises(ValueError, match="truth"):
        study.truth_pool("planted", n, k, M)


@pytest.fixture(scope="module")
def tiny():
    return study.verdict_study(("exchangeable", "specialist-text"), ks=(1, 4), ns=(60,), n_pools=2, seed=3)


def test_confusion_table_counts_the_codes(tiny):
    runs = tiny.runs
    assert len(runs) == 8 and set(runs["seed"]) == {3, 4, 1003, 1004, 2003, 2004, 3003, 3004}
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
