"""Malformed input that is not a one-line refusal: ids kept exact in every importer, the
uneven-draws message naming the cell that has the extra rows, the out-of-memory message, the
estimate and progress of long ``nulls`` runs, and arguments validated before the output mode.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from oraclegap import cli
from oraclegap.commands import nulls as nulls_cmd
from oraclegap.pool import Pool
from oraclegap.sources import open_pool

BIG = [2**53 + 1, 2**53 + 2, 2**63 + 1, 2**64 + 7]  # beyond float's exact range; the last two beyond int64


# ============================================================================ exact ids
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


# ============================================================================ uneven draws
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


# ============================================================================ out of memory
@pytest.mark.parametrize("verb, has_bound", [("coverage", False), ("certify", False), ("nulls", True), ("decompose", True)])
def test_out_of_memory_names_max_memory_only_where_it_exists(tmp_path, monkeypatch, capsys, verb, has_bound):
    import importlib

    np.save(tmp_path / "v.npy", np.random.default_rng(0).random((10, 3, 4)) < 0.5)
    mod = importlib.import_module(f"oraclegap.commands.{verb}")

    def oom(args):
        raise MemoryError

    monkeypatch.setattr(mod, "pool_from_args", oom)
    assert cli.main([verb, str(tmp_path / "v.npy")]) == 2
    err = capsys.readouterr().err
    assert "out of memory" in err and ("--max-memory" in err) == has_bound, err


# ============================================================================ nulls: estimate and progress
def test_nulls_prints_an_estimate_and_progress_on_long_runs(tmp_path, monkeypatch, capsys):
    np.save(tmp_path / "v.npy", (np.random.default_rng(1).random((60, 4, 4)) < 0.5).astype(np.uint8))
    argv = ["nulls", str(tmp_path / "v.npy"), "--n-draws", "50", "--taus", "0.5", "--json"]
    assert cli.main(argv) == 0
    quick = capsys.readouterr()
    assert quick.err == ""  # a quick request says nothing on stderr
    monkeypatch.setattr(nulls_cmd, "PROGRESS_AFTER_S", 0.0)  # as if the pool were large
    assert cli.main(argv) == 0
    slow = capsys.readouterr()
    first = slow.err.splitlines()[0]
    assert re.match(r"oraclegap nulls: 60 x 4 x 4 pool, 50 draws: about .*margin-chain proposals and .*re-dealt cells, "
                    r"roughly \d+ s on one core", first), first
    assert "margin chain" in slow.err and "re-deal" in slow.err  # the tqdm bars
    assert json.loads(slow.out) == json.loads(quick.out)  # progress does not change the numbers
    assert cli.main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_nulls_estimate_matches_the_cost_model():
    from oraclegap.stats.nulls import NullCost

    c = NullCost(proposals=int(2.5e9), redeal_cells=int(3.5e9), bytes=0)
    assert nulls_cmd.estimate_seconds(c) == pytest.approx(2.5e9 / nulls_cmd.PROPOSALS_PER_S + 3.5e9 / nulls_cmd.REDEAL_CELLS_PER_S)
    # a 20000 x 40 x 8 pool with the default settings is estimated at minutes, so the bar is shown
    from oraclegap.stats.nulls import null_cost

    v = np.zeros((20000, 40, 8), dtype=bool)
    v[::2, ::3, ::2] = True
    assert nulls_cmd.estimate_seconds(null_cost(v)) > 60 * nulls_cmd.PROGRESS_AFTER_S


# ============================================================================ validate before the output mode
BAD = {
    "coverage": [["--taus", "0.1,0.1"], ["--estimator", "x"]],
    "nulls": [["--n-draws", "0"], ["--thin", "0"], ["--statistics", "L,L"], ["--seed", "-1"]],
    "certify": [["--alpha", "1"], ["--tau", "0"], ["--draw", "-2"]],
    "decompose": [["--thin", "-1"], ["--n-boot", "0"], ["--alpha", "1"], ["--seed", "-1"], ["--n-boot", "1e9"],
                  ["--baseline", "nope.txt"]],
    "routers": [["--cv", "1"], ["--n-boot", "5"], ["--alpha", "0"], ["--families", "a,a"], ["--tau", "2"], ["--n-boot", "1e9"]],
    "compose": [["--sizes", "1,1"], ["--max-subsets", "0"], ["--tau", "-1"], ["--sizes", "x"]],
    "audit": [["--seed", "-1"], ["--taus", "0.2,0.2"], ["--alpha", "nan"]],
    "rollouts": [["--k", "0"], ["--seed", "-1"], ["--batch-size", "0"]],
    "integrity": [["--seed", "-1"], ["--near-threshold", "2"], ["--cv", "1"], ["--dedupe-near"]],
    "export": [["--format", "excel"], ["--format", "routerbench"], ["--format", "long", "--out", "x.txt"]],
}


def _verbs_with_json() -> list[str]:
    parser = cli.build_parser()
    sub = next(a for a in parser._subparsers._group_actions)
    return sorted(n for n, p in sub.choices.items() if "--json" in p._option_string_actions)


def test_every_verb_with_json_is_in_the_table():
    assert set(_verbs_with_json()) == set(BAD)


@pytest.mark.parametrize("verb, bad", [(v, b) for v, bs in BAD.items() for b in bs], ids=lambda x: " ".join(x) if isinstance(x, list) else x)
def test_arguments_are_validated_before_the_output_mode(tmp_path, monkeypatch, capsys, verb, bad):
    monkeypatch.chdir(tmp_path)
    Pool(np.random.default_rng(2).random((30, 3, 4)) < 0.5).save(tmp_path / "p")
    head = [verb] if verb == "rollouts" else [verb, str(tmp_path / "p")]
    extra = ["--out", str(tmp_path / "o")] if verb == "audit" else []
    if verb in ("routers", "compose") and "--tau" not in bad:
        extra += ["--tau", "0.5"]
    if verb == "export":
        extra += ([] if "--format" in bad else ["--format", "long"]) + ([] if "--out" in bad else ["--out", "o.parquet"])
    results = []
    for mode in ([], ["--json"]):
        rc = cli.main([*head, *bad, *extra, *mode])
        results.append((rc, capsys.readouterr().err))
    (rc_table, err_table), (rc_json, err_json) = results
    assert rc_table == rc_json == 2, results
    assert err_table == err_json and len(err_table.splitlines()) == 1, results
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]


# ============================================================================ other directory writers
def test_lab_directory_writes_keep_files_they_did_not_write(tmp_path):
    from oraclegap.lab.model import atomic_dir

    target = tmp_path / "model"
    with atomic_dir(target) as d:
        (d / "weights.bin").write_bytes(b"v1")
    (target / "my_notes.md").write_text("keep")
    with atomic_dir(target) as d:
        (d / "weights.bin").write_bytes(b"v2")
    assert (target / "weights.bin").read_bytes() == b"v2" and (target / "my_notes.md").read_text() == "keep"
    with pytest.raises(RuntimeError):  # a failed write leaves the folder as it was
        with atomic_dir(target) as d:
            (d / "weights.bin").write_bytes(b"v3")
            raise RuntimeError("killed")
    assert (target / "weights.bin").read_bytes() == b"v2" and sorted(p.name for p in tmp_path.iterdir()) == ["model"]


_CHAPTER = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Owned

# %% tags=["parameters"]
SMALL = False

# %%
print(1 + 1, SMALL)
'''


@pytest.mark.notebooks
def test_book_build_never_deletes_a_file_of_yours_in_book(tmp_path, capsys, monkeypatch):
    """_book/ is rendered from scratch; a file no build (and no pdf run) wrote makes the build
    stop before any work, naming it, and leaves it in place."""
    from oraclegap import book
    from oraclegap.book import quarto as bq

    (tmp_path / "_quarto.yml").write_text("book:\n  title: T\n  chapters:\n    - index.qmd\n    - chapters/01_c.ipynb\n")
    (tmp_path / "index.qmd").write_text("# Preface {.unnumbered}\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_c.py").write_text(_CHAPTER)
    monkeypatch.setattr(bq, "find_quarto", lambda root, install=True: bq.Quarto(None, tried=("no quarto here (test)",)))
    book.build(tmp_path, small=True)
    b = tmp_path / "_book"
    assert "chapters/01_c.html" in json.loads((b / ".og-build.json").read_text())["files"]
    (b / "oraclegap.pdf").write_bytes(b"%PDF")  # what `python -m oraclegap.book pdf` writes: the build's own
    book.build(tmp_path, small=True)
    (b / "notes.md").write_text("mine")
    with pytest.raises(ValueError, match=r"holds files no build wrote \(notes.md\)"):
        book.build(tmp_path, small=True)
    assert (b / "notes.md").read_text() == "mine" and (b / "chapters" / "01_c.html").is_file()
    assert book.unowned_book_files(b) == ["notes.md"]
