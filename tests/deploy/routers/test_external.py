"""Routers on released LLM outcomes (skip when ``OG_EXTERNAL_DIR`` lacks them): the RouterBench
subset with per-query costs, and MMLU-Pro's category as the task tag."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap import datasets as D
from oraclegap.deploy.evaluate import evaluate_routers, outcome_matrix


def _load(name):
    pool, why = D.load_optional(name)
    if pool is None:
        pytest.skip(f"{name}: {why}")
    return pool


@pytest.mark.external
def test_routerbench_with_costs(external_dir):
    pool = _load("routerbench-mbpp")
    res = evaluate_routers(pool, ["tfidf_knn", "embed_knn", "cheapest", "random"], split="test", embed="tfidf-svd", n_boot=300)
    assert res.inputs["embeddings"]["source"] == "tfidf-svd" and res.inputs["text"]
    assert res.protocol.n_eval == int((pool.prompts["split"] == "test").sum())
    for e in res.evaluations.values():
        assert abs(e.identity_residual) <= 1e-12
    cheapest = int(np.argmin(pool.cost[res.protocol.folds[0][0]].mean(axis=0)))
    assert (res.evaluation("cheapest").choice == cheapest).all()
    assert res.cost is not None and res.cost.weak == pool.policy_names[cheapest]
    s = res.summary().set_index("family")
    assert (s["aiq_lo"] <= s["aiq"] + 1e-9).all() and (s["aiq"] <= s["aiq_hi"] + 1e-9).all()


@pytest.mark.external
def test_mmlu_pro_category_routers(external_dir):
    pool = _load("mmlu-pro").select(prompts=np.arange(0, 10326, 5))
    res = evaluate_routers(pool, ["taskwise_best", "tfidf_knn"], cv=3, embed="none", n_boot=300)
    assert res.inputs["dataset"]["column"] == "category" and res.inputs["dataset"]["levels"] == 14
    O, _ = outcome_matrix(pool)
    for e in res.evaluations.values():
        assert abs(e.identity_residual) <= 1e-12 and e.n_eval == pool.n_prompts
        assert e.accuracy == pytest.approx(O[np.arange(pool.n_prompts), e.choice].mean())
