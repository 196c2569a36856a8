"""Readers of the data the chapters use: the lab slicer, the dcrouter price reader (member
order) and the Chen release reader."""

from __future__ import annotations

import json

import numpy as np
import pytest

from oraclegap import datasets


def test_lab_slice_keeps_one_task_split_and_role():
    cross = datasets.load("lab-cross")
    sec = datasets.lab_slice(cross, "secondary", "test")
    assert set(sec.prompts["dataset"]) == {"secondary"} and set(sec.prompts["split"]) == {"test"}
    assert set(sec.policies["role"]) == {"member"} and set(sec.policies["recipe"]) == {"light"}
    assert set(sec.policies["dataset"]) == {"secondary"}
    n_test = int(((cross.prompts["dataset"] == "secondary") & (cross.prompts["split"] == "test")).sum())
    assert sec.n_prompts == n_test
    base = datasets.lab_slice(cross, "secondary", "test", role="base")
    assert set(base.policies["role"]) == {"base"} and base.n_prompts == n_test
    with pytest.raises(ValueError, match="no prompt of task"):
        datasets.lab_slice(cross, "tertiary", "test")
    with pytest.raises(ValueError, match="not a lab pool"):
        datasets.lab_slice(datasets.load("paper002-pilot-gsm8k"), "secondary", "test")


def test_dcrouter_prices_follow_the_member_order(tmp_path, monkeypatch):
    root = tmp_path / datasets.ULAB / "LLMRouter_dcrouter_preprocessed"
    root.mkdir(parents=True)
    (root / "default_llm.json").write_text(json.dumps({"b": {"input_price": 0.2, "output_price": 0.4},
                                                       "a": {"input_price": 0.1, "output_price": 0.3}}))
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path))
    from oraclegap.pool import Pool

    pool = Pool.from_array(np.ones((3, 2, 1), dtype=bool), policies=["a", "b"])
    assert datasets.dcrouter_prices(pool).tolist() == [0.1, 0.2]
    assert datasets.dcrouter_prices(pool, "output_price").tolist() == [0.3, 0.4]
    with pytest.raises(ValueError, match="field must be"):
        datasets.dcrouter_prices(pool, "price")
    other = Pool.from_array(np.ones((3, 2, 1), dtype=bool), policies=["a", "c"])
    with pytest.raises(ValueError, match="no input_price for members"):
        datasets.dcrouter_prices(other)


def test_chen_release_reads_one_array(tmp_path, monkeypatch):
    root = tmp_path / datasets.CHEN / "humanevalplus"
    root.mkdir(parents=True)
    q = np.linspace(0, 1, 5)
    np.savez(root / "correctness_slim.npz", q_router=q, b=np.zeros((5, 2, 3), dtype=bool))
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path))
    assert np.array_equal(datasets.chen_release("humanevalplus", "q_router"), q)
    with pytest.raises(ValueError, match="has no array 'p_router'"):
        datasets.chen_release("humanevalplus", "p_router")
    with pytest.raises(ValueError, match="bench must be one of"):
        datasets.chen_release("mbpp", "q_router")
    with pytest.raises(ValueError, match="does not exist"):
        datasets.chen_release("math500", "q_router")
