"""Exporters and the long format's shipped schema.

For every format, ``open_pool(export(pool))`` equals the pool on what the format holds (verdicts,
policy names, texts, datasets, splits, answers, costs where held; prompt ids where the format
keeps them, else mapped back). The long format is validated against
``oraclegap/schemas/long.schema.json`` on write and on read; the schema itself is checked to be
a valid JSON Schema (Draft 2020-12) and to agree with the column validator on sample rows.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from oraclegap import cli
from oraclegap._formats import long_schema, validate_long_table
from oraclegap.exchange import export_pool
from oraclegap.pool import Pool
from oraclegap.sources import open_pool


def _pool(k=1, seed=0, cost=True, answers=True):
    rng = np.random.default_rng(seed)
    n, M = 12, 3
    pr = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "text": [f"question {i}, with a comma" for i in range(n)],
                       "dataset": np.where(np.arange(n) < 7, "math", "code"), "split": np.where(np.arange(n) % 3, "train", "test"),
                       "ground_truth": [str(i) for i in range(n)]})
    ans = np.array([[[f"a{i}{m}{j}" for j in range(k)] for m in range(M)] for i in range(n)], dtype=object) if answers else None
    return Pool(rng.random((n, M, k)) < 0.5, pr, pd.DataFrame({"name": ["gpt-4o", "llama-3", "qwen2"]}), answers=ans,
                cost=rng.uniform(1e-4, 1e-2, (n, M)) if cost else None)


def _aligned(pool, back, key):
    """back's prompts reordered to pool's, matched by the prompt table column ``key`` (the text)."""
    pos = pd.Index(back.prompts[key]).get_indexer(pool.prompts[key])
    assert (pos >= 0).all()
    return back.select(prompts=pos)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
@pytest.mark.parametrize("k", [1, 3])
def test_long_round_trip(tmp_path, suffix, k):
    pool = _pool(k)
    out = tmp_path / f"x{suffix}"
    info = export_pool(pool, "long", out)
    back = open_pool(str(out))
    assert info["rows"] == pool.n_prompts * pool.n_policies * k
    np.testing.assert_array_equal(back.verdicts, pool.verdicts)
    assert back.prompt_ids == pool.prompt_ids and back.policy_names == pool.policy_names
    np.testing.assert_array_equal(back.answers, pool.answers)
    np.testing.assert_allclose(back.cost, pool.cost, rtol=1e-12)
    for c in ("text", "dataset", "split", "ground_truth"):
        assert back.prompts[c].astype(str).tolist() == pool.prompts[c].astype(str).tolist()


def test_llmrouterbench_round_trip(tmp_path):
    pool = _pool(k=2)
    export_pool(pool, "llmrouterbench", tmp_path / "results")
    files = sorted((tmp_path / "results").rglob("*.json"))
    assert len(files) == 2 * 2 * 3  # (dataset, split) groups x models
    back = _aligned(pool, open_pool(str(tmp_path / "results")), "text")
    np.testing.assert_array_equal(back.verdicts, pool.verdicts)
    assert back.policy_names == pool.policy_names
    np.testing.assert_array_equal(back.answers, pool.answers)
    np.testing.assert_allclose(back.cost, pool.cost, rtol=1e-12)
    assert back.prompts["ground_truth"].tolist() == pool.prompts["ground_truth"].tolist()
    assert back.prompts["dataset"].tolist() == pool.prompts["dataset"].tolist()
    assert back.prompts["split"].tolist() == pool.prompts["split"].tolist()


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_routerbench_round_trip(tmp_path, suffix):
    pool = _pool()
    out = tmp_path / f"routerbench{suffix}"
    export_pool(pool, "routerbench", out)
    back = open_pool(str(out))
    assert back.meta["read_as"]["format"] == "routerbench"
    assert back.prompt_ids == pool.prompt_ids and back.policy_names == pool.policy_names
    np.testing.assert_array_equal(back.verdicts, pool.verdicts)
    np.testing.assert_array_equal(back.answers, pool.answers)
    np.testing.assert_allclose(back.cost, pool.cost, rtol=1e-12)
    assert back.prompts["text"].tolist() == pool.prompts["text"].tolist()
    assert back.prompts["dataset"].tolist() == pool.prompts["dataset"].tolist()
    with pytest.raises(ValueError, match=r"needs a cost per \(prompt, model\)"):
        export_pool(_pool(cost=False), "routerbench", tmp_path / "nc.parquet")
    with pytest.raises(ValueError, match=r"the pool has k=3"):
        export_pool(_pool(k=3), "routerbench", tmp_path / "k3.parquet")


def test_embedllm_round_trip(tmp_path):
    pool = _pool()
    export_pool(pool, "embedllm", tmp_path / "train.csv")
    back = open_pool(str(tmp_path / "train.csv"))
    assert back.meta["read_as"]["format"] == "embedllm"
    assert back.prompt_ids == [str(i) for i in range(pool.n_prompts)]  # EmbedLLM's integer ids, in pool order
    assert back.policy_names == pool.policy_names
    np.testing.assert_array_equal(back.verdicts, pool.verdicts)
    assert back.prompts["text"].tolist() == pool.prompts["text"].tolist()
    assert back.prompts["category"].tolist() == pool.prompts["dataset"].tolist()
    assert back.prompts["split"].iloc[0] == "train"  # from the file name, as EmbedLLM names its files


def test_existing_out_is_never_replaced_and_cli_errors_are_one_line(tmp_path, capsys):
    pool = _pool()
    pool.save(tmp_path / "pool")
    (tmp_path / "mine.parquet").write_text("a user's file")
    with pytest.raises(ValueError, match="exists; oraclegap never replaces or deletes"):
        export_pool(pool, "long", tmp_path / "mine.parquet")
    assert (tmp_path / "mine.parquet").read_text() == "a user's file"
    rc = cli.main(["export", str(tmp_path / "pool"), "--format", "long", "--out", str(tmp_path / "x.txt")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1 and "must end in .parquet or .csv" in err
    assert cli.main(["export", str(tmp_path / "pool"), "--format", "embedllm", "--out", str(tmp_path / "e.csv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dropped"] == ["costs", "answers"]
    assert not list(tmp_path.glob(".*tmp*"))  # no temporary file left behind


def test_long_schema_is_shipped_valid_and_enforced(tmp_path):
    schema = long_schema()
    assert schema["required"] == ["prompt_id", "policy", "correct"] and schema["additionalProperties"] is False
    pool = _pool()
    export_pool(pool, "long", tmp_path / "x.csv")
    d = pd.read_csv(tmp_path / "x.csv", dtype=str, keep_default_na=False)
    validate_long_table(d, "x.csv")
    for col, val, msg in (("correct", "2", r"column 'correct' (line|row) \d+ holds '2', not a 0/1 outcome"),
                          ("draw", "-1", r"field 'draw' holds '-1', not a whole number >= 0"),
                          ("cost", "cheap", r"field 'cost' holds 'cheap', not a number >= 0"),
                          ("policy", " ", r"field 'policy' is blank")):
        bad = d.copy()
        bad.loc[3, col] = val
        with pytest.raises(ValueError, match=msg):
            validate_long_table(bad, "x.csv")
        bad.to_csv(tmp_path / f"bad_{col}.csv", index=False)
        with pytest.raises(ValueError):
            open_pool(str(tmp_path / f"bad_{col}.csv"))
    with pytest.raises(ValueError, match=r"columns \['extra'\] that are not part of the long format"):
        validate_long_table(d.assign(extra="x"), "x.csv")
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    row = {"prompt_id": "q0", "policy": "a", "correct": 1, "draw": 0, "cost": 0.1, "answer": "x", "prompt_text": "t",
           "response_tokens": 3}
    assert v.is_valid(row)
    for change in ({"correct": 2}, {"draw": -1}, {"cost": -1.0}, {"policy": ""}, {"extra": 1}):
        assert not v.is_valid({**row, **change}), change
