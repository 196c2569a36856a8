"""Every verb reads POOL one way.

One function (``oraclegap.commands._common.pool_from_args``) turns (POOL, options) into a Pool
for every verb. The matrix below runs every verb that takes a POOL over the same option cases
(wide-CSV options, --format, --embeddings, --score-threshold, --drop-incomplete, --dedupe,
--split-label, --llm-data, --model-names, --null-scores) and checks, for each, that the verb read exactly the
pool ``open_pool`` gives with those options, or refused the same way. A verb that read its pool
another way (as ``routers`` once did: a metadata column became a model, --models was ignored, a
wrong --format was not refused) fails here: the spy sees no call, or sees the wrong pool.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oraclegap import cli
from oraclegap.commands import _common
from oraclegap.sources import open_pool


class _Stop(BaseException):
    """Raised by the spy once the pool is read: the verb's own work is not what is tested here."""


def _pool_verbs() -> list[str]:
    parser = cli.build_parser()
    sub = next(a for a in parser._subparsers._group_actions)
    return sorted(name for name, p in sub.choices.items() if any(a.dest == "pool" for a in p._actions))


VERBS = _pool_verbs()


def test_every_pool_verb_is_covered():
    assert {"coverage", "nulls", "certify", "decompose", "routers", "compose", "audit"} <= set(VERBS)
    # no command module reads pools another way
    for verb in VERBS:
        src = Path(importlib.import_module(f"oraclegap.commands.{verb}").__file__).read_text()
        assert "open_pool" not in src, verb
        assert "pool_from_args(args)" in src, verb


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("pool_options")
    rng = np.random.default_rng(19)
    n = 40
    v = rng.random((n, 3)) < 0.5
    df = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "text": [f"question {i} about {'math' if i % 2 else 'law'}" for i in range(n)],
                       "is_math": np.arange(n) % 2, "a": v[:, 0].astype(int), "b": v[:, 1].astype(int), "c": v[:, 2].astype(int)})
    df.to_csv(d / "meta.csv", index=False)
    E = rng.normal(size=(8, 4))
    np.save(d / "emb.npy", E)
    emb_ids = [5, 2, 7, 0]
    lines, inc = [], []
    for q in range(4):
        for m, model in enumerate(("m-one", "m-two")):
            rec = {"task_name": "gsm8k", "query": f"question {q}", "ground_truth": str(q), "metric": "em", "model_name": model,
                   "response": f"r{q}{m}", "input_tokens": 100 + q, "output_tokens": 10 * (m + 1), "performance": [0.2, 0.7, 1.0, 0.0][(q + m) % 4],
                   "embedding_id": emb_ids[q]}
            lines.append(json.dumps(rec))
            if not (q == 3 and m == 1):
                inc.append(json.dumps(rec))
    (d / "routing.jsonl").write_text("\n".join(lines) + "\n")
    (d / "routing_incomplete.jsonl").write_text("\n".join(inc) + "\n")
    (d / "prices.json").write_text(json.dumps({"m-one": {"input_price": 0.2, "output_price": 0.6},
                                               "m-two": {"input_price": 1.0, "output_price": 3.0}}))
    np.savez(d / "re.npz", train_score=(rng.random((6, 3)) < 0.5).astype(float), test_score=(rng.random((4, 3)) < 0.5).astype(float))
    recs = [{"dataset_id": "math", "split": "test", "model_name": m, "record_index": i, "score": None if (i, m) == (1, "y") else float((i + j) % 2)}
            for j, m in enumerate(("x", "y")) for i in range(3)]
    (d / "lrb.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    long = pd.DataFrame({"prompt_id": np.repeat([f"p{i}" for i in range(6)], 2), "policy": ["a", "b"] * 6,
                         "correct": (rng.random(12) < 0.5).astype(int)})
    pd.concat([long, long]).to_csv(d / "doubled_long.csv", index=False)  # every row twice, no draw column
    return {"d": d, "E": E}


# (POOL file, CLI options, open_pool keyword arguments or None for a refusal, regex of the refusal)
CASES = [
    ("meta.csv", [], {}, None),
    ("meta.csv", ["--prompt-columns", "is_math"], {"prompt_columns": "is_math"}, None),
    ("meta.csv", ["--models", "a,b"], {"models": "a,b"}, None),
    ("meta.csv", ["--models", "a,b", "--prompt-columns", "is_math"], {"models": "a,b", "prompt_columns": "is_math"}, None),
    ("meta.csv", ["--id-column", "text", "--prompt-columns", "id,is_math"], {"id_column": "text", "prompt_columns": "id,is_math"}, None),
    ("meta.csv", ["--models", "a,zz"], None, r"models names columns not in .*\['zz'\]"),
    ("meta.csv", ["--id-column", "zz"], None, r"id_column 'zz' is not a column"),
    ("meta.csv", ["--format", "npy"], None, r"format 'npy' reads a \.npy file"),
    ("meta.csv", ["--format", "pool"], None, r"is a file, expected a directory"),
    ("meta.csv", ["--score-threshold", "0.5"], None, r"option\(s\) \['score_threshold'\] do not apply"),
    ("meta.csv", ["--embeddings", "{d}/emb.npy"], None, r"option\(s\) \['embeddings'\] do not apply"),
    ("meta.csv", ["--drop-incomplete"], None, r"option\(s\) \['drop_incomplete'\] do not apply"),
    ("routing.jsonl", [], None, r"non-binary score"),
    ("routing.jsonl", ["--score-threshold", "0.5"], {"score_threshold": 0.5}, None),
    ("routing.jsonl", ["--score-threshold", "0.5", "--embeddings", "{d}/emb.npy"],
     {"score_threshold": 0.5, "embeddings": "{d}/emb.npy"}, None),
    ("routing.jsonl", ["--score-threshold", "0.5", "--split-label", "dev", "--format", "llmrouter"],
     {"score_threshold": 0.5, "split": "dev", "format": "llmrouter"}, None),
    ("routing.jsonl", ["--score-threshold", "0.5", "--llm-data", "{d}/prices.json"],
     {"score_threshold": 0.5, "llm_data": "{d}/prices.json"}, None),
    ("routing.jsonl", ["--score-threshold", "0.5", "--format", "wide-csv"], None, r"format 'wide-csv' reads a \.csv file"),
    ("routing.jsonl", ["--score-threshold", "0.5", "--models", "a"], None, r"apply to wide CSV files only"),
    ("routing.jsonl", ["--score-threshold", "0.5", "--embeddings", "{d}"], None, r"is a directory, expected a file"),
    ("routing_incomplete.jsonl", ["--score-threshold", "0.5"], None, r"cells have no response"),
    ("routing_incomplete.jsonl", ["--score-threshold", "0.5", "--drop-incomplete"], {"score_threshold": 0.5, "drop_incomplete": True}, None),
    ("re.npz", ["--model-names", "a,b,c"], {"model_names": ["a", "b", "c"]}, None),
    ("re.npz", ["--model-names", "a,b"], None, r"model_names has 2 names but .* has 3 models"),
    ("lrb.jsonl", [], None, r"field 'score' is null"),
    ("lrb.jsonl", ["--null-scores", "wrong"], {"null_scores": "wrong"}, None),
    ("meta.csv", ["--dedupe"], None, r"option\(s\) \['dedupe'\] do not apply"),
    ("doubled_long.csv", [], None, r"every row appears 2 times in its \(prompt, policy\) cell"),
    ("doubled_long.csv", ["--dedupe"], {"dedupe": True}, None),
]


def _same_pool(a, b) -> None:
    assert a.shape == b.shape
    np.testing.assert_array_equal(a.verdicts, b.verdicts)
    assert a.policy_names == b.policy_names and list(a.prompt_ids) == list(b.prompt_ids)
    assert list(a.prompts.columns) == list(b.prompts.columns)
    for x, y in ((a.embeddings, b.embeddings), (a.cost, b.cost)):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0]} {' '.join(c[1])}"[:70] for c in CASES])
def test_every_verb_reads_pool_options_the_same_way(files, tmp_path, monkeypatch, capsys, verb, case):
    name, opts, kwargs, refusal = CASES[case]
    d = files["d"]
    fill = lambda x: x.replace("{d}", str(d)) if isinstance(x, str) else x  # noqa: E731
    spec = str(d / name)
    mod = importlib.import_module(f"oraclegap.commands.{verb}")
    seen = []

    def spy(args):
        pool = _common.pool_from_args(args)
        seen.append(pool)
        raise _Stop

    monkeypatch.setattr(mod, "pool_from_args", spy)
    extra = {"audit": ["--out", str(tmp_path / "out")],  # export: --format is the output's, --input-format the POOL's
             "export": ["--format", "llmrouterbench", "--out", str(tmp_path / "out")]}.get(verb, [])
    opts = ["--input-format" if (verb == "export" and o == "--format") else o for o in opts]
    argv = [verb, spec, *[fill(o) for o in opts], *extra]
    if refusal is None:
        with pytest.raises(_Stop):
            cli.main(argv)
        assert len(seen) == 1
        _same_pool(seen[0], open_pool(spec, **{k: fill(v) for k, v in kwargs.items()}))
    else:
        rc = cli.main(argv)
        err = capsys.readouterr().err
        assert rc == 2 and len(err.splitlines()) == 1, err
        assert re.search(refusal, err), err
    assert not (tmp_path / "out").exists()


def test_routers_end_to_end_honours_pool_options(files, capsys):
    """Routers on a wide CSV with a 0/1 metadata column and --models."""
    f = str(files["d"] / "meta.csv")
    base = ["routers", f, "--embed", "tfidf-svd", "--families", "best_single,embed_knn", "--n-boot", "200", "--json", "--cv", "2"]
    assert cli.main([*base, "--prompt-columns", "is_math"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pool"]["n_policies"] == 3
    assert cli.main([*base, "--models", "a,b"]) == 0
    assert json.loads(capsys.readouterr().out)["pool"]["n_policies"] == 2


def test_routers_uses_the_given_embeddings_file(tmp_path, capsys):
    """--embeddings reaches routers: the pool's embeddings are the ones used (never a cached
    MiniLM of the texts), and nothing asks for the option that was given."""
    rng = np.random.default_rng(7)
    E = rng.normal(size=(60, 5))
    lines = [json.dumps({"model_name": m, "query": f"question {q}", "performance": float(rng.random() < 0.5),
                         "embedding_id": q}) for q in range(60) for m in ("m-one", "m-two")]
    (tmp_path / "routing.jsonl").write_text("\n".join(lines) + "\n")
    np.save(tmp_path / "e.npy", E)
    argv = ["routers", str(tmp_path / "routing.jsonl"), "--embeddings", str(tmp_path / "e.npy"), "--families",
            "best_single,embed_knn", "--n-boot", "200", "--cv", "2", "--json"]
    assert cli.main(argv) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    assert out["inputs"]["embeddings"]["source"] == "pool" and out["inputs"]["embeddings"]["dim"] == 5
