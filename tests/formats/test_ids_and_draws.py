"""Prompt ids and draws as every importer reads them: ids beyond float's exact range stay
exact, ambiguous ids and missing draw labels are refused, uneven draws name the cell that
differs, and rows repeated without draw labels are refused or collapsed by ``--dedupe``,
never counted as draws."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from oraclegap.pool import Pool
from oraclegap.sources import open_pool

BIG = [2**53 + 1, 2**53 + 2, 2**63 + 1, 2**64 + 7]  # beyond float's exact range; the last two beyond int64


def test_llmrouterbench_record_index_beyond_2_53_stays_exact(tmp_path):
    recs = [{"dataset_id": "d", "split": "test", "model_name": m, "record_index": i, "score": float((i + j) % 2)}
            for i in BIG for j, m in enumerate(("x", "y"))]
    f = tmp_path / "r.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    pool = open_pool(str(f))
    assert pool.shape == (4, 2, 1)  # four prompts, not two
    assert list(pool.prompt_ids) == [f"d/test/{i}" for i in BIG]
    assert [str(x) for x in pool.prompts["index"]] == [str(i) for i in BIG]
    for r in recs:
        i, m = pool.prompt_ids.index(f"d/test/{r['record_index']}"), "xy".index(r["model_name"])
        assert pool.verdicts[i, m, 0] == (r["score"] == 1)
    # ids that fit int64 stay integers in the prompt table
    small = [dict(r, record_index=BIG.index(r["record_index"])) for r in recs]
    f.write_text("\n".join(json.dumps(r) for r in small) + "\n")
    assert [type(x) for x in open_pool(str(f)).prompts["index"]] == [int] * 4


def test_llmrouter_embedding_id_beyond_2_53_stays_exact(tmp_path):
    lines = [{"model_name": m, "query": f"q{q}", "performance": float((q + j) % 2), "embedding_id": e}
             for q, e in enumerate(BIG) for j, m in enumerate(("x", "y"))]
    f = tmp_path / "routing.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    pool = open_pool(str(f))
    assert list(pool.prompt_ids) == [str(e) for e in BIG] and pool.shape == (4, 2, 1)
    np.save(tmp_path / "e.npy", np.zeros((3, 2)))
    with pytest.raises(ValueError, match=rf"embedding row {BIG[0]}, outside the embeddings' 3 rows"):
        open_pool(str(f), embeddings=str(tmp_path / "e.npy"))


def test_embedllm_prompt_ids_beyond_2_53_keep_their_order(tmp_path):
    ids = [BIG[3], BIG[0], BIG[2], BIG[1]]
    df = pd.DataFrame([{"model_id": m, "prompt_id": str(p), "label": (p + m) % 2} for p in ids for m in (0, 1)])
    df.to_csv(tmp_path / "train.csv", index=False)
    pool = open_pool(str(tmp_path / "train.csv"))
    assert list(pool.prompt_ids) == [str(p) for p in sorted(ids)]  # numeric order, exactly
    for p in ids:
        for m in (0, 1):
            assert pool.verdicts[pool.prompt_ids.index(str(p)), m, 0] == bool((p + m) % 2)


def test_long_table_integer_columns_beyond_int64_stay_exact(tmp_path):
    df = pd.DataFrame({"prompt_id": ["a", "a", "b", "b"], "policy": ["x", "y", "x", "y"], "correct": [1, 0, 0, 1],
                       "prompt_source_id": [str(BIG[3])] * 2 + [str(BIG[0])] * 2})
    df.to_csv(tmp_path / "long.csv", index=False)
    pool = open_pool(str(tmp_path / "long.csv"))
    assert [str(x) for x in pool.prompts["source_id"]] == [str(BIG[3]), str(BIG[0])]
    df["prompt_source_id"] = ["7", "7", "9", "9"]
    df.to_csv(tmp_path / "long.csv", index=False)
    assert open_pool(str(tmp_path / "long.csv")).prompts["source_id"].tolist() == [7, 9]


def _uneven_files(tmp_path, extra: bool) -> dict:
    """One file per importer that reads repeated rows as draws; prompt 'p2' x policy 'b' has one
    row more (extra=True) or one fewer than every other cell (k = 2 elsewhere)."""
    cells = [(p, m) for p in ("p0", "p1", "p2", "p3") for m in ("a", "b")]
    rows = []
    for p, m in cells:
        n = 2 + (1 if extra else -1) * ((p, m) == ("p2", "b"))
        rows += [(p, m, j) for j in range(n)]
    out = {}
    out["llmrouterbench"] = tmp_path / "lrb.jsonl"
    out["llmrouterbench"].write_text("\n".join(json.dumps({"dataset_id": "d", "model_name": m, "record_index": int(p[1:]),
                                                           "score": float(j % 2)}) for p, m, j in rows) + "\n")
    out["llmrouter"] = tmp_path / "lr.jsonl"
    out["llmrouter"].write_text("\n".join(json.dumps({"model_name": m, "query": p, "performance": float(j % 2),
                                                      "embedding_id": int(p[1:])}) for p, m, j in rows) + "\n")
    out["embedllm"] = tmp_path / "emb.csv"
    pd.DataFrame({"model_id": [m for _, m, _ in rows], "prompt_id": [p for p, _, _ in rows],
                  "label": [j % 2 for *_, j in rows]}).to_csv(out["embedllm"], index=False)
    out["long"] = tmp_path / "long.csv"
    pd.DataFrame({"prompt_id": [p for p, _, _ in rows], "policy": [m for _, m, _ in rows],
                  "correct": [j % 2 for *_, j in rows]}).to_csv(out["long"], index=False)
    return out


@pytest.mark.parametrize("extra", [True, False], ids=["extra row", "missing row"])
@pytest.mark.parametrize("fmt", ["llmrouterbench", "llmrouter", "embedllm", "long"])
def test_uneven_draws_name_the_cell_that_differs(tmp_path, fmt, extra):
    f = _uneven_files(tmp_path, extra)[fmt]
    with pytest.raises(ValueError) as err:
        open_pool(str(f), format=fmt)
    msg = str(err.value)
    prompt = {"llmrouterbench": "d/2", "llmrouter": "2"}.get(fmt, "p2")
    policy = "b"
    assert re.search(rf"prompt '{re.escape(prompt)}' x policy '{policy}' has {3 if extra else 1}, "
                     rf"{'more' if extra else 'fewer'} rows than the 7 cells with 2", msg), msg


def test_from_long_refuses_ambiguous_ids_and_missing_draw_labels():
    base = pd.DataFrame({"prompt_id": [1, 1, "1", "1"], "policy": ["a", "b", "a", "b"], "correct": [1, 0, 0, 1]})
    with pytest.raises(ValueError, match="read as the same prompt id '1'"):
        Pool.from_long(base)
    pol = pd.DataFrame({"prompt_id": ["x", "x"], "policy": [7, "7"], "correct": [1, 0]})
    with pytest.raises(ValueError, match="read as the same policy name '7'"):
        Pool.from_long(pol)
    nan_id = pd.DataFrame({"prompt_id": ["x", None], "policy": ["a", "a"], "correct": [1, 0]})
    with pytest.raises(ValueError, match="prompt column 'prompt_id' has missing values"):
        Pool.from_long(nan_id)
    draws = pd.DataFrame({"prompt_id": ["x"] * 4, "policy": ["a", "a", "b", "b"], "draw": [0, np.nan, 0, 1],
                          "correct": [1, 0, 0, 1]})
    with pytest.raises(ValueError, match="draw column 'draw' has missing labels"):
        Pool.from_long(draws)
    ok = pd.DataFrame({"prompt_id": [1, 1, 2, 2], "policy": ["a", "b", "a", "b"], "correct": [1, 0, 0, 1]})
    assert Pool.from_long(ok).shape == (2, 2, 1)


def _long(k: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n, M = 6, 3
    return pd.DataFrame({"prompt_id": np.repeat([f"p{i}" for i in range(n)], M * k),
                         "policy": np.tile(np.repeat(["a", "b", "c"], k), n),
                         "correct": (rng.random(n * M * k) < 0.5).astype(int)})


def _cells(pool: Pool) -> dict:
    """{(prompt, policy): sorted verdicts}: a pool independent of its row and draw order."""
    return {(p, m): sorted(pool.verdicts[i, j].tolist()) for i, p in enumerate(pool.prompt_ids)
            for j, m in enumerate(pool.policy_names)}


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("how", ["appended", "in_place", "shuffled", "tripled"])
def test_repeated_rows_are_refused_or_collapsed_never_counted_as_draws(tmp_path, run_cli, k, how):
    d = _long(k, seed=k)
    d.to_csv(tmp_path / "once.csv", index=False)
    copies = 3 if how == "tripled" else 2
    rep = {"appended": pd.concat([d, d]), "in_place": d.loc[d.index.repeat(2)], "tripled": pd.concat([d, d, d]),
           "shuffled": pd.concat([d, d]).sample(frac=1.0, random_state=1)}[how]
    f = tmp_path / "rep.csv"
    rep.to_csv(f, index=False)
    with pytest.raises(ValueError, match=rf"every row appears {copies} times in its \(prompt, policy\) cell .* k = "
                                         rf"{copies * k} draws instead of {k}"):
        open_pool(str(f))
    once, deduped = open_pool(str(tmp_path / "once.csv")), open_pool(str(f), dedupe=True)
    assert deduped.k == k and deduped.meta["duplicates_dropped"] == {"rows": (copies - 1) * len(d), "copies": copies,
                                                                     "k_before": copies * k}
    assert _cells(deduped) == _cells(once)
    rc, out, err = run_cli("coverage", f, "--dedupe", "--json")
    assert rc == 0 and json.loads(out)
    assert err.strip() == (f"note: --dedupe dropped {(copies - 1) * len(d)} duplicated rows of {f} (each appeared {copies} "
                           f"times in its cell): k = {k} instead of {copies * k}")


def test_distinct_draws_and_labelled_draws_are_not_taken_for_copies(tmp_path, run_cli):
    d = _long(4, seed=5)
    d.to_csv(tmp_path / "k4.csv", index=False)
    assert open_pool(str(tmp_path / "k4.csv")).k == 4  # verdicts that differ within cells: real draws
    same = d.assign(correct=1, answer=np.arange(len(d)).astype(str))  # equal verdicts, different answers
    same.to_csv(tmp_path / "answers.csv", index=False)
    assert open_pool(str(tmp_path / "answers.csv")).k == 4
    labelled = pd.concat([d.assign(draw=d.groupby(["prompt_id", "policy"]).cumcount())] * 2)
    labelled.to_csv(tmp_path / "labelled.csv", index=False)
    with pytest.raises(ValueError, match=r"draw 0 of prompt 'p0' x policy 'a' appears twice"):
        open_pool(str(tmp_path / "labelled.csv"))
    rc, _, err = run_cli("coverage", tmp_path / "k4.csv", "--dedupe")
    assert rc == 0 and err.strip() == f"note: --dedupe found no duplicated rows in {tmp_path / 'k4.csv'}"
