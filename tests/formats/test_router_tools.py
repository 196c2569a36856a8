"""Importers of the files other router tools write, and Pool.to_long.

Each importer reads a small file the test writes in that tool's layout (LLMRouterBench result
files and flat records, LLMRouter routing JSON lines, RouterEval .npz, EmbedLLM long CSV,
RouterBench wide CSV/parquet); the expected pool is computed from the same rows the file was
written from. Format detection, the score rule, pickle refusals, the CLI options and the long
exchange format's round trip are checked too.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oraclegap import cli
from oraclegap import datasets as D
from oraclegap.pool import Pool
from oraclegap.sources import detect_format, open_pool

RNG = np.random.default_rng(14)


# ============================================================================ LLMRouterBench
def _lrb_file(root: Path, ds: str, split: str, model: str, scores, stamp="20250101_120000", demo=False, start_cost=0.0):
    f = root / ds / split / model / f"{ds}-{split}-{model}-{stamp}.json"
    f.parent.mkdir(parents=True, exist_ok=True)
    recs = [{"index": i, "origin_query": f"{ds} question {i}", "prompt": f"Solve: {ds} question {i}", "prediction": f"{model}-{i}",
             "ground_truth": f"gt{i}", "score": s, "prompt_tokens": 100 + i, "completion_tokens": 10 * (i + 1),
             "cost": start_cost + 0.01 * i, "raw_output": "...", "extra_fields": {}} for i, s in enumerate(scores)]
    f.write_text(json.dumps({"performance": float(np.mean([x or 0.0 for x in scores])), "time_taken": 1.0, "prompt_tokens": 0, "completion_tokens": 0,
                             "cost": 0.0, "counts": len(scores), "model_name": model, "dataset_name": ds, "split": split,
                             "demo": demo, "extra_metrics": {}, "data_fingerprint": "", "records": recs}))
    return f


def test_llmrouterbench_results_folder(tmp_path):
    root = tmp_path / "results" / "bench"
    truth = {("aime", "A"): [1.0, 0.0, 1.0], ("aime", "B"): [0.0, 0.0, 1.0],
             ("mbpp", "A"): [1.0, 1.0], ("mbpp", "B"): [0.0, 1.0]}
    for (ds, m), s in truth.items():
        _lrb_file(root, ds, "test", m, s, start_cost=0.5 if m == "B" else 0.0)
    _lrb_file(root, "aime", "test", "A", [0.0, 0.0, 0.0], stamp="20240101_000000")  # an older run: superseded
    _lrb_file(root, "aime", "test", "C", [1.0, 1.0, 1.0], stamp="20260101_000000", demo=True)  # a demo run: skipped
    assert detect_format(str(root))[0] == "llmrouterbench"
    pool = open_pool(str(root))
    assert pool.shape == (5, 2, 1) and pool.policy_names == ["A", "B"]
    assert pool.prompt_ids == ["aime/test/0", "aime/test/1", "aime/test/2", "mbpp/test/0", "mbpp/test/1"]
    expect = np.array([truth[("aime", m)] + truth[("mbpp", m)] for m in "AB"]).T
    np.testing.assert_array_equal(pool.verdicts[:, :, 0], expect == 1)
    assert pool.prompts["text"].tolist()[:2] == ["aime question 0", "aime question 1"]  # origin_query, not the prompt
    assert pool.prompts["dataset"].tolist() == ["aime"] * 3 + ["mbpp"] * 2 and pool.splits == ["test"]
    assert pool.prompts["ground_truth"].tolist() == ["gt0", "gt1", "gt2", "gt0", "gt1"]
    np.testing.assert_allclose(pool.cost[:, 0], [0, 0.01, 0.02, 0, 0.01])
    np.testing.assert_allclose(pool.cost[:, 1], [0.5, 0.51, 0.52, 0.5, 0.51])
    assert pool.answers[2, 1, 0] == "B-2"
    assert pool.per_response["completion_tokens"][1].tolist() == [[20], [20]] and pool.per_response["prompt_tokens"][4].tolist() == [[101], [101]]
    assert len(pool.meta["superseded_files_skipped"]) == 1 and "20240101_000000" in pool.meta["superseded_files_skipped"][0]
    assert len(pool.meta["demo_files_skipped"]) == 1
    assert pool.meta["read_as"]["format"] == "llmrouterbench"
    one = open_pool(str(_lrb_file(tmp_path / "single", "gsm8k", "test", "A", [1.0, 0.0])))  # one result file: one model
    assert one.shape == (2, 1, 1) and one.meta["read_as"]["chosen_by"].startswith("an LLMRouterBench result file")


def _flat_records(rows):
    return [{"dataset_id": d, "split": "test", "model_name": m, "record_index": i, "origin_query": f"q{i}",
             "prompt": f"q{i}", "prediction": p, "raw_output": None, "ground_truth": "g", "score": s,
             "prompt_tokens": 5, "completion_tokens": 7, "cost": c} for d, m, i, s, p, c in rows]


def test_llmrouterbench_flat_records_with_repeated_samples(tmp_path):
    # BaselineDataLoader's records as JSON lines; each (item, model) twice: k = 2 in file order
    rows = [("math", m, i, float((i + j + (m == "y")) % 2), f"{m}{i}.{j}", 0.1 * j) for j in range(2) for i in range(3)
            for m in ("x", "y")]
    f = tmp_path / "records.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in _flat_records(rows)) + "\n")
    pool = open_pool(str(f))
    assert pool.meta["read_as"] == {"format": "llmrouterbench", "chosen_by": "records with dataset, model_name, index and score"}
    assert pool.shape == (3, 2, 2)
    for _d, m, i, s, p, _ in rows:
        j = int(p.rsplit(".", 1)[1])
        assert pool.verdicts[i, "xy".index(m), j] == (s == 1) and pool.answers[i, "xy".index(m), j] == p
    np.testing.assert_allclose(pool.cost, 0.05)  # mean cost per response of each cell
    g = tmp_path / "records.json"  # the same records as one JSON list
    g.write_text(json.dumps(_flat_records(rows)))
    np.testing.assert_array_equal(open_pool(str(g)).verdicts, pool.verdicts)


def test_llmrouterbench_scores_nulls_and_missing_cells(tmp_path):
    root = tmp_path / "bench"
    _lrb_file(root, "arena", "test", "A", [1.0, 0.7, 0.2])
    _lrb_file(root, "arena", "test", "B", [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match=r"A-20250101_120000.json: records\[1\]: field 'score' holds 0.7, a non-binary score "
                                         r"\(3 of 6 responses\); pass score_threshold=t"):
        open_pool(str(root))
    pool = open_pool(str(root), score_threshold=0.5)  # documented rule: correct when score >= t
    np.testing.assert_array_equal(pool.verdicts[:, :, 0], [[1, 0], [1, 1], [0, 1]])
    assert pool.meta["non_binary_scores"] == 3 and pool.meta["score_threshold"] == 0.5
    with pytest.raises(ValueError, match=r"score_threshold must lie in \(0, 1\]"):
        open_pool(str(root), score_threshold=0)
    _lrb_file(root, "arena", "test", "A", [1.0, None, 0.0], stamp="20250202_000000")  # a newer run with a failed evaluation
    with pytest.raises(ValueError, match=r"records\[1\]: field 'score' is null .* null_scores='wrong'"):
        open_pool(str(root), score_threshold=0.5)
    pool = open_pool(str(root), score_threshold=0.5, null_scores="wrong")
    assert not pool.verdicts[1, 0, 0] and pool.meta["null_scores_counted_wrong"] == 1
    _lrb_file(root, "gsm8k", "test", "A", [1.0, 1.0])  # model B never ran gsm8k
    with pytest.raises(ValueError, match=r"2 of 10 \(prompt, policy\) cells have no response, e.g. \('gsm8k/test/0', 'B'\).*"
                                         r"missing per policy: \{'B': 2\}.*drop_incomplete=True"):
        open_pool(str(root), score_threshold=0.5, null_scores="wrong")
    pool = open_pool(str(root), score_threshold=0.5, null_scores="wrong", drop_incomplete=True)
    assert pool.n_prompts == 3 and pool.meta["prompts_dropped_incomplete"] == 2
    (root / "notes.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match=r"notes.json is not an LLMRouterBench result file"):
        open_pool(str(root), format="llmrouterbench")


# ============================================================================ LLMRouter
def _llmrouter_lines(path: Path, perf, with_ids=True, tokens=True):
    """perf[q][m]: performance of model m on query q; queries get embedding ids 5, 2, 7, ..."""
    lines = []
    emb = [5, 2, 7, 0, 3]
    for m, model in enumerate(("qwen2.5-7b-instruct", "llama-3.1-8b-instruct")):
        for q in range(len(perf)):
            rec = {"task_name": "gsm8k" if q < 2 else "mmlu", "query": f"question {q}", "ground_truth": str(q), "metric": "GSM8K",
                   "choices": None, "task_id": None, "model_name": model, "response": f"answer {q} by {m}",
                   "token_num": 120 + q, "input_tokens": 100 + q, "output_tokens": 20 * (m + 1), "response_time": 0.5,
                   "api_key_used": "", "performance": perf[q][m], "user_id": None, "fig_id": None}
            if with_ids:
                rec["embedding_id"] = emb[q]
            if not tokens:
                del rec["input_tokens"], rec["output_tokens"]
            lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_llmrouter_routing_jsonl(tmp_path):
    perf = [[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    f = _llmrouter_lines(tmp_path / "default_routing_test_data.jsonl", perf)
    prices = {"qwen2.5-7b-instruct": {"size": "7B", "input_price": 0.2, "output_price": 0.3},
              "llama-3.1-8b-instruct": {"size": "8B", "input_price": 0.1, "output_price": 0.4}}
    (tmp_path / "default_llm.json").write_text(json.dumps(prices))
    E = RNG.normal(size=(8, 4))
    np.save(tmp_path / "emb.npy", E)
    pool = open_pool(str(f), llm_data=str(tmp_path / "default_llm.json"), embeddings=str(tmp_path / "emb.npy"))
    assert pool.meta["read_as"]["format"] == "llmrouter"
    assert pool.shape == (3, 2, 1) and pool.prompt_ids == ["5", "2", "7"]
    np.testing.assert_array_equal(pool.verdicts[:, :, 0], np.array(perf) == 1)
    assert pool.prompts["text"].tolist() == ["question 0", "question 1", "question 2"]
    assert pool.prompts["dataset"].tolist() == ["gsm8k", "gsm8k", "mmlu"] and pool.splits == ["test"]  # from the file name
    np.testing.assert_array_equal(pool.embeddings, E[[5, 2, 7]])
    for q in range(3):
        for m, name in enumerate(pool.policy_names):
            p = prices[name]
            assert pool.cost[q, m] == pytest.approx(((100 + q) * p["input_price"] + 20 * (m + 1) * p["output_price"]) / 1e6)
    assert pool.policies["size"].tolist() == ["7B", "8B"] and pool.answers[2, 1, 0] == "answer 2 by 1"
    assert pool.per_response["output_tokens"][0].tolist() == [[20], [40]]
    assert open_pool(str(f), split="heldout").splits == ["heldout"]
    g = tmp_path / "with_cost.jsonl"  # lines with their own cost: used as is, and llm_data would be a second cost
    g.write_text("".join(json.dumps({**json.loads(x), "cost": 0.25}) + "\n" for x in f.read_text().splitlines()))
    np.testing.assert_allclose(open_pool(str(g)).cost, 0.25)
    with pytest.raises(ValueError, match=r"the lines carry their own 'cost'; llm_data would give a second"):
        open_pool(str(g), llm_data=str(tmp_path / "default_llm.json"))


def test_llmrouter_scores_ids_and_prices(tmp_path):
    f = _llmrouter_lines(tmp_path / "routing.jsonl", [[1.0, 0.4], [0.0, 1.0]], with_ids=False)
    with pytest.raises(ValueError, match=r"routing.jsonl: line 3: field 'performance' holds 0.4, a non-binary score"):
        open_pool(str(f))
    pool = open_pool(str(f), score_threshold=0.25)
    assert pool.prompt_ids == ["q0", "q1"] and pool.splits == [] and pool.verdicts[0, 1, 0]
    assert pool.meta["prompt_id_from"].startswith("distinct (task_name, query")
    with pytest.raises(ValueError, match=r"embeddings need an 'embedding_id' on every line"):
        open_pool(str(f), score_threshold=0.25, embeddings=str(tmp_path / "nope.npy"))
    (tmp_path / "llm.json").write_text(json.dumps({"qwen2.5-7b-instruct": {"input_price": 0.1, "output_price": 0.1}}))
    with pytest.raises(ValueError, match=r"llm_data has no prices for models \['llama-3.1-8b-instruct'\]"):
        open_pool(str(f), score_threshold=0.25, llm_data=str(tmp_path / "llm.json"))


# ============================================================================ RouterEval
def test_routereval_npz(tmp_path):
    S = {s: (RNG.random((n, 3)) < 0.5).astype(np.float64) for s, n in (("train", 4), ("val", 2), ("test", 3))}
    E = {s: RNG.normal(size=(len(S[s]), 5)) for s in S}
    f = tmp_path / "arc_3_strong.npz"
    np.savez(f, test_score=S["test"], train_score=S["train"], val_score=S["val"],  # member order does not matter
             train_embed=E["train"], val_embed=E["val"], test_embed=E["test"])
    assert detect_format(str(f)) == ("routereval", "arrays train_score, val_score, test_score")
    pool = open_pool(str(f))
    assert pool.shape == (9, 3, 1) and pool.policy_names == ["m0", "m1", "m2"]
    np.testing.assert_array_equal(pool.verdicts[:, :, 0], np.concatenate([S["train"], S["val"], S["test"]]) == 1)
    np.testing.assert_array_equal(pool.embeddings, np.concatenate([E["train"], E["val"], E["test"]]))
    assert pool.prompt_ids[:5] == ["train-0", "train-1", "train-2", "train-3", "val-0"]
    assert pool.prompts["split"].value_counts().to_dict() == {"train": 4, "val": 2, "test": 3}
    named = open_pool(str(f), model_names=["a", "b", "c"])
    assert named.policy_names == ["a", "b", "c"]
    with pytest.raises(ValueError, match="model_names has 2 names but .* has 3 models"):
        open_pool(str(f), model_names=["a", "b"])
    S["val"][1, 2] = 0.75
    np.savez(f, train_score=S["train"], val_score=S["val"], test_score=S["test"])
    with pytest.raises(ValueError, match=r"array 'val_score' row 1 column 2 \(model 'm2'\): field 'score' holds 0.75, a non-binary"):
        open_pool(str(f))
    assert open_pool(str(f), score_threshold=0.7).verdicts[5, 2, 0]
    np.savez(f, train_score=S["train"], train_embed=E["train"], test_score=S["test"])
    with pytest.raises(ValueError, match=r"'embed' arrays exist for some splits only"):
        open_pool(str(f), score_threshold=0.7)
    np.savez(f, train_score=S["train"], train_prompt=np.array([object()] * 4, dtype=object))
    with pytest.raises(ValueError, match=r"array 'train_prompt' is an object array, which is never unpickled; convert"):
        open_pool(str(f))


# ============================================================================ EmbedLLM
def _embedllm_frame(L: np.ndarray) -> pd.DataFrame:
    """EmbedLLM rows for labels L[prompt, model] (prompt_id 0..n-1, model_id 0..M-1), shuffled."""
    n, M = L.shape
    rows = [{"model_id": m, "model_name": f"org/model-{m}", "prompt_id": p, "prompt": f"Question {p}, with a comma",
             "category": "math" if p % 2 else "law", "label": int(L[p, m])} for p in range(n) for m in range(M)]
    return pd.DataFrame(rows).sample(frac=1.0, random_state=3).reset_index(drop=True)


def test_embedllm_long_csv_and_parquet(tmp_path):
    L = RNG.random((12, 3)) < 0.5  # 12 prompts: numeric order puts 10 after 9
    df = _embedllm_frame(L)
    f = tmp_path / "test.csv"
    df.to_csv(f, index=False)
    assert detect_format(str(f)) == ("embedllm", "columns model_id, prompt_id, label")
    E = RNG.normal(size=(12, 6))
    np.save(tmp_path / "question_embeddings.npy", E)
    pool = open_pool(str(f), embeddings=str(tmp_path / "question_embeddings.npy"))
    assert pool.prompt_ids == [str(i) for i in range(12)]
    assert pool.policy_names == ["org/model-0", "org/model-1", "org/model-2"] and pool.policies["model_id"].tolist() == ["0", "1", "2"]
    np.testing.assert_array_equal(pool.verdicts[:, :, 0], L)
    np.testing.assert_array_equal(pool.embeddings, E)
    assert pool.splits == ["test"] and pool.prompts["category"].tolist()[:2] == ["law", "math"]
    assert pool.prompts["text"].iloc[11] == "Question 11, with a comma"
    df.to_parquet(tmp_path / "val.parquet", index=False)
    pq = open_pool(str(tmp_path / "val.parquet"))
    np.testing.assert_array_equal(pq.verdicts, pool.verdicts)
    assert pq.splits == ["val"]
    bad = df.copy()
    bad["label"] = bad["label"].astype(object)
    bad.loc[4, "label"] = "yes"
    bad.to_csv(f, index=False)
    with pytest.raises(ValueError, match=r"test.csv: column 'label' line 6 holds 'yes', not a 0/1 outcome"):
        open_pool(str(f))
    df.drop(index=7).to_csv(f, index=False)
    with pytest.raises(ValueError, match=r"1 of 36 \(prompt, policy\) cells have no response"):
        open_pool(str(f))
    assert open_pool(str(f), drop_incomplete=True).n_prompts == 11
    with pytest.raises(ValueError, match=r"apply to wide CSV files only; .* read as embedllm .* format='wide-csv'"):
        open_pool(str(f), models="label")


# ============================================================================ RouterBench
MODELS = ("gpt-4-1106-preview", "claude-v2", "mistralai/mixtral-8x7b-chat")


def _routerbench_frame(V: np.ndarray, C: np.ndarray) -> pd.DataFrame:
    n = len(V)
    d = {"Unnamed: 0": np.arange(100, 100 + n), "sample_id": [f"mbpp.dev.{i}" for i in range(n)],
         "prompt": [f"['Write a function number {i}.']" for i in range(n)], "eval_name": ["mbpp"] * n}
    for j, m in enumerate(MODELS):
        d[m] = V[:, j]
    for j, m in enumerate(MODELS):
        d[f"{m}|model_response"] = [f"def f{i}(): return {j}" for i in range(n)]
    for j, m in enumerate(MODELS):
        d[f"{m}|total_cost"] = C[:, j]
    d["oracle_model_to_route_to"] = [MODELS[0]] * n
    return pd.DataFrame(d)


def test_routerbench_wide_csv(tmp_path):
    V = (RNG.random((6, 3)) < 0.5).astype(float)
    C = RNG.uniform(1e-5, 1e-3, (6, 3))
    f = tmp_path / "mbpp_train.csv"
    _routerbench_frame(V, C).to_csv(f, index=False)
    pool = open_pool(str(f))
    assert pool.meta["read_as"] == {"format": "routerbench", "chosen_by": "3 '<model>|total_cost' columns"}
    assert pool.shape == (6, 3, 1) and pool.policy_names == list(MODELS)
    np.testing.assert_array_equal(pool.verdicts[:, :, 0], V == 1)
    np.testing.assert_allclose(pool.cost, C)
    assert pool.answers[4, 2, 0] == "def f4(): return 2" and pool.prompts["dataset"].eq("mbpp").all()
    assert pool.splits == ["train"] and pool.meta["ignored_columns"] == ["Unnamed: 0"]  # RouterDC's index column: recorded as dropped
    V2 = V.copy()
    V2[3, 1] = 0.8  # an MT-Bench-style fractional score
    V2[5, 0] = np.nan
    _routerbench_frame(V2, C).to_csv(f, index=False)
    with pytest.raises(ValueError, match=r"mbpp_train.csv: line 7 \(sample_id 'mbpp.dev.5'\) has no value in "
                                         r"\['gpt-4-1106-preview'\].*drop_incomplete=True"):
        open_pool(str(f))
    with pytest.raises(ValueError, match=r"line 5 \(sample_id 'mbpp.dev.3'\): column 'claude-v2': field 'score' holds 0.8, "
                                         r"a non-binary score"):
        open_pool(str(f), drop_incomplete=True)
    pool = open_pool(str(f), drop_incomplete=True, score_threshold=0.5)
    assert pool.n_prompts == 5 and pool.verdicts[3, 1, 0] and pool.meta["rows_dropped_incomplete"] == 1
    dup = _routerbench_frame(V, C)
    dup.loc[2, "sample_id"] = "mbpp.dev.0"
    dup.to_csv(f, index=False)
    with pytest.raises(ValueError, match=r"line 4 \(sample_id 'mbpp.dev.0'\): sample_id 'mbpp.dev.0' appears more than once"):
        open_pool(str(f))


def test_routerbench_parquet_from_the_pickle(tmp_path):
    # routerbench_0shot.pkl converted with pd.read_pickle(...).to_parquet(...): prompts may be lists of strings
    V = (RNG.random((4, 3)) < 0.5).astype(float)
    d = _routerbench_frame(V, np.full((4, 3), 1e-4))
    d["prompt"] = [[f"turn one {i}", f"turn two {i}"] for i in range(4)]
    d.to_parquet(tmp_path / "routerbench_0shot.parquet", index=False)
    pool = open_pool(str(tmp_path / "routerbench_0shot.parquet"))
    assert pool.prompts["text"].iloc[1] == "turn one 1\n\nturn two 1"
    np.testing.assert_array_equal(pool.verdicts[:, :, 0], V == 1)


def test_routerbench_real_file_matches_the_registry(external_dir):
    f = external_dir / D.RDC / "routerbench_zs" / "mbpp_test.csv"
    if not f.is_file():
        pytest.skip(f"{f} is not present")
    pool = open_pool(str(f))
    reg = D.load("routerbench-mbpp")
    sub = reg.select(prompts=pool.prompt_ids)  # the test rows of the registry pool, by sample_id
    np.testing.assert_array_equal(pool.verdicts, sub.verdicts)
    np.testing.assert_array_equal(pool.cost, sub.cost)
    assert pool.policy_names == reg.policy_names and (sub.prompts["split"] == "test").all()


# ============================================================================ detection and refusals
def test_detection_refuses_ambiguity_and_unknown_layouts(tmp_path):
    f = tmp_path / "both.csv"
    pd.DataFrame({"model_id": [0], "prompt_id": [0], "label": [1], "policy": ["a"], "correct": [1]}).to_csv(f, index=False)
    with pytest.raises(ValueError, match=r"fits several layouts: embedllm \(columns model_id, prompt_id, label\), long "
                                         r"\(columns prompt_id, policy, correct\); pass format="):
        open_pool(str(f))
    assert open_pool(str(f), format="embedllm").shape == (1, 1, 1)
    g = tmp_path / "other.jsonl"
    g.write_text(json.dumps({"question": "q", "answer": "a"}) + "\n")
    with pytest.raises(ValueError, match=r"not a layout oraclegap reads \(the first record has keys \['answer', 'question'\]\)"):
        open_pool(str(g))
    with pytest.raises(ValueError, match=r"format 'routereval' reads a .npz file or a .pkl file or a .pickle file; POOL .*both.csv.* is not"):
        open_pool(str(f), format="routereval")
    with pytest.raises(ValueError, match=r"format must be one of pool, store"):
        open_pool(str(f), format="excel")
    np.save(tmp_path / "v.npy", np.ones((3, 2, 1), np.int8))
    with pytest.raises(ValueError, match=r"option\(s\) \['score_threshold'\] do not apply to POOL .*v.npy.* read as npy"):
        open_pool(str(tmp_path / "v.npy"), score_threshold=0.5)
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['thresh'\]"):
        open_pool(str(tmp_path / "v.npy"), thresh=0.5)
    h = tmp_path / "wide.csv"  # a plain wide CSV still reads as before
    h.write_text("id,a,b\nq0,1,0\nq1,0,1\n")
    assert detect_format(str(h)) == ("wide-csv", "a .csv file") and open_pool(str(h)).policy_names == ["a", "b"]


def test_pickles_are_refused_with_how_to_convert(tmp_path):
    # .pkl/.pickle go through the restricted unpickler (tests/formats/test_safe_pickle.py); torch files stay refused
    for name, how in (("query_embeddings_longformer.pt", r"torch.load"),
                      ("question_embeddings.pth", r"np.save\('x.npy', x.numpy\(\)\)")):
        (tmp_path / name).write_bytes(b"\x80\x04not really")
        with pytest.raises(ValueError, match=r"pickle-based file .* oraclegap never unpickles files .*" + how):
            open_pool(str(tmp_path / name))
    for name in ("routerbench_0shot.pkl", "router.pickle"):
        (tmp_path / name).write_bytes(b"\x80\x04not really")
        with pytest.raises(ValueError, match=r"routerbench_0shot.pkl|router.pickle is not a readable pickle"):
            open_pool(str(tmp_path / name))
    with pytest.raises(ValueError, match=r"routerbench_0shot.pkl is not a readable pickle"):
        open_pool(str(tmp_path / "routerbench_0shot.pkl"), format="routerbench")
    np.save(tmp_path / "obj.npy", np.array([object(), 1], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"obj.npy holds an object array, which is never unpickled.*; convert it where it was "
                                         r"written, e.g. `np.save\('x.npy', np.asarray\(a, dtype=np.int8\)\)`"):
        open_pool(str(tmp_path / "obj.npy"))
    np.savez(tmp_path / "obj.npz", V=np.array([object()], dtype=object))
    with pytest.raises(ValueError, match=r"array 'V' is an object array, which is never unpickled; convert"):
        open_pool(str(tmp_path / "obj.npz") + ":V")


# ============================================================================ Pool.to_long: the exchange format
def _rich_pool(k=3, alignment="seed-aligned") -> Pool:
    n, M = 5, 3
    v = RNG.random((n, M, k)) < 0.5
    prompts = pd.DataFrame({"id": ["007", "a,b", "c", "d", "e"], "text": ['say "hi"', "two\nlines", "x", None, "é ü"],
                            "dataset": ["m"] * 5, "split": ["train", "train", "test", "test", None], "level": [1, 2, 3, 4, 5]})
    policies = pd.DataFrame({"name": ["p0", "p1", "p2"], "base": ["tiny", "tiny", None], "seed": [0, 1, 2],
                             "recipe": ["grpo", "grpo", "sft"]})
    answers = RNG.choice(np.array(["42", "x, y", "", "multi\nline"], dtype=object), size=(n, M, k))
    cost = RNG.uniform(0, 1, (n, M))
    return Pool.from_array(v, prompts, policies, alignment=alignment, answers=answers, cost=cost,
                           meta={"source": "test", "nested": {"a": [1, 2]}})


def _same_tables(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False)


def test_to_long_parquet_round_trip_keeps_what_save_keeps(tmp_path):
    pool = _rich_pool()
    out = pool.to_long(tmp_path / "pool.parquet")
    assert out == tmp_path / "pool.parquet" and sorted(p.name for p in tmp_path.iterdir()) == ["pool.parquet"]
    df = pd.read_parquet(out)
    assert len(df) == 5 * 3 * 3 and list(df.columns[:4]) == ["prompt_id", "policy", "draw", "correct"]
    assert {"answer", "cost", "prompt_text", "prompt_level", "policy_seed", "policy_base"} <= set(df.columns)
    back = open_pool(str(out))
    assert back.meta["read_as"] == {"format": "long", "chosen_by": "columns prompt_id, policy, correct"}
    saved = Pool.load(pool.save(tmp_path / "dir"))  # what the lossless format gives back
    np.testing.assert_array_equal(back.verdicts, pool.verdicts)
    np.testing.assert_array_equal(back.answers, pool.answers)
    np.testing.assert_array_equal(back.cost, pool.cost)
    assert back.alignment == "seed-aligned"
    assert {k: v for k, v in back.meta.items() if k != "read_as"} == saved.meta
    _same_tables(back.prompts, saved.prompts)
    _same_tables(back.policies, saved.policies)
    with pytest.raises(ValueError, match="exists; pass overwrite=True"):
        pool.to_long(out)
    assert pool.select(policies=["p2"]).to_long(out, overwrite=True) == out and open_pool(str(out)).n_policies == 1


def test_to_long_round_trip_keeps_per_response_arrays(tmp_path):
    """pool.per_response travels as response_<name> columns and comes back from open_pool: exactly
    (dtype included) from parquet, by value from CSV."""
    base = _rich_pool()
    n, M, k = base.shape
    per = {"confidence": RNG.normal(-1, 0.3, (n, M, k)).astype(np.float32),
           "seed": (2**62 + np.arange(n * M * k, dtype=np.int64)).reshape(n, M, k),  # beyond float precision
           "tokens": RNG.integers(1, 9, (n, M, k))}
    pool = Pool.from_array(base.verdicts, base.prompts, base.policies, alignment=base.alignment, answers=base.answers,
                           per_response=per)
    back = open_pool(str(pool.to_long(tmp_path / "p.parquet")))
    assert set(back.per_response) == set(per)
    for name, a in per.items():
        assert back.per_response[name].dtype == a.dtype
        np.testing.assert_array_equal(back.per_response[name], a)
    csv = open_pool(str(pool.to_long(tmp_path / "p.csv")))
    np.testing.assert_allclose(csv.per_response["confidence"], per["confidence"], rtol=1e-6)
    np.testing.assert_array_equal(csv.per_response["tokens"], per["tokens"])
    np.testing.assert_array_equal(csv.per_response["seed"], per["seed"])  # whole numbers stay exact
    # a non-numeric response_ column is refused, naming the row and field
    df = pd.read_csv(tmp_path / "p.csv", dtype=str)
    df.loc[2, "response_tokens"] = "many"
    df.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match=r"bad.csv: line 4: field 'response_tokens' holds 'many', not a number"):
        open_pool(str(tmp_path / "bad.csv"))


def test_to_long_csv_round_trip(tmp_path):
    pool = _rich_pool(k=2, alignment="independent")
    out = pool.to_long(tmp_path / "pool.csv")
    back = open_pool(str(out))
    np.testing.assert_array_equal(back.verdicts, pool.verdicts)
    assert back.prompt_ids == ["007", "a,b", "c", "d", "e"]  # ids stay text ("007" is not 7)
    np.testing.assert_array_equal(back.answers, pool.answers)  # commas, quotes and newlines survive
    np.testing.assert_allclose(back.cost, pool.cost, rtol=1e-15)
    std = ["id", "text", "dataset", "split"]
    _same_tables(back.prompts[std], pool.prompts[std])  # quotes, newlines, non-ASCII and a missing text survive
    assert pd.isna(back.prompts["text"].iloc[3]) and back.prompts["text"].iloc[1] == "two\nlines"
    assert back.prompts["level"].tolist() == [1, 2, 3, 4, 5] and back.policies["seed"].tolist() == [0, 1, 2]
    _same_tables(back.policies, pool.policies)
    assert back.alignment == "unknown"  # a CSV keeps no alignment


def test_long_tables_written_by_hand(tmp_path):
    # draws given out of order are placed by the draw column; a prompt field must be constant per prompt
    df = pd.DataFrame({"prompt_id": ["q1", "q1", "q0", "q0", "q1", "q0"], "policy": ["a", "a", "a", "a", "b", "b"],
                       "draw": [1, 0, 0, 1, 0, 0], "correct": [1, 0, 0, 0, 1, 1], "prompt_text": ["one", "one", "zero", "zero", "one", "zero"]})
    f = tmp_path / "mine.csv"
    df.to_csv(f, index=False)
    with pytest.raises(ValueError, match=r"cells hold different numbers of responses \[1, 2\]"):
        open_pool(str(f))
    extra = pd.DataFrame({"prompt_id": ["q1", "q0"], "policy": ["b", "b"], "draw": [1, 1], "correct": [0, 1],
                          "prompt_text": ["one", "zero"]})
    pd.concat([df, extra]).to_csv(f, index=False)
    pool = open_pool(str(f))
    np.testing.assert_array_equal(pool.verdicts, [[[0, 1], [1, 0]], [[0, 0], [1, 1]]])
    assert pool.prompt_ids == ["q1", "q0"] and pool.prompts["text"].tolist() == ["one", "zero"]
    bad = pd.concat([df, extra]).reset_index(drop=True)
    bad.loc[3, "prompt_text"] = "ZERO"
    bad.to_csv(f, index=False)
    with pytest.raises(ValueError, match=r"mine.csv: line 5: field 'text' is 'ZERO' here but 'zero' at .*mine.csv: line 4 "
                                         r"for the same prompt 'q0'"):
        open_pool(str(f))
    bad.assign(tokens=1).to_csv(f, index=False)
    with pytest.raises(ValueError, match=r"columns \['tokens'\] that are not part of the long format; name prompt fields"):
        open_pool(str(f))


def test_to_long_is_atomic_when_a_write_fails(tmp_path, monkeypatch):
    pool = _rich_pool()
    out = pool.select(prompts=[0]).to_long(tmp_path / "p.parquet")
    before = out.read_bytes()

    def boom(pool, path, info):
        Path(path).write_bytes(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr("oraclegap.pool._long._write_long_rows", boom)
    with pytest.raises(OSError, match="disk full"):
        pool.to_long(out, overwrite=True)
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["p.parquet"]
    with pytest.raises(ValueError, match=r"to_long writes .parquet or .csv files"):
        pool.to_long(tmp_path / "p.xlsx")


# ============================================================================ the CLI
def test_cli_reads_router_formats_with_options(tmp_path, capsys):
    f = _llmrouter_lines(tmp_path / "routing_train.jsonl", [[1.0, 0.3], [0.0, 1.0], [1.0, 1.0]])
    assert cli.main(["coverage", str(f), "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "field 'performance' holds 0.3, a non-binary score" in err[0] and "--score-threshold" in err[0]
    assert cli.main(["coverage", str(f), "--score-threshold", "0.5", "--split-label", "dev", "--format", "llmrouter", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pool"]["n_prompts"] == 3 and out["pool"]["n_policies"] == 2
    assert cli.main(["coverage", str(f), "--score-threshold", "2", "--json"]) == 2
    assert "--score-threshold must lie in (0, 1]" in capsys.readouterr().err
    g = tmp_path / "p.csv"
    _rich_pool(k=1).to_long(g)
    assert cli.main(["certify", str(g), "--json"]) == 0
    capsys.readouterr()
    assert cli.main(["coverage", str(g), "--drop-incomplete", "--json"]) == 2
    assert "option(s) ['drop_incomplete'] do not apply" in capsys.readouterr().err
