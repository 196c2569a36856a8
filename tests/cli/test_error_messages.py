"""The CLI's errors name what is wrong: messages that say which option or file, the
out-of-memory message naming ``--max-memory`` only where the verb has it, and arguments
validated before the output mode is chosen."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from oraclegap import cli
from oraclegap.pool import Pool
from oraclegap.stats import nulls


def test_unclear_messages_are_now_clear(tmp_path, capsys):
    with pytest.raises(ValueError, match="seed must be a non-negative integer, got -1"):
        nulls.null_tests(np.ones((3, 2, 2), bool), (0.5,), seed=-1)
    with pytest.raises(ValueError, match="counts contains infinite values"):
        Pool.from_counts(np.array([[1.0, np.inf]]), k=3)
    p = Pool(np.random.default_rng(0).random((4, 2, 1)) < 0.5,
             prompts=pd.DataFrame({"id": list("abcd"), "cat": [None] * 4, "half": ["x", None, "y", "x"]}))
    p.save(tmp_path / "p")
    from oraclegap.cli import main

    capsys.readouterr()
    assert main(["certify", str(tmp_path / "p"), "--by", "cat"]) == 2
    assert "--by 'cat': the column is empty" in capsys.readouterr().err
    assert main(["certify", str(tmp_path / "p"), "--by", "half"]) == 2
    assert "1 of 4 prompts have no value (first: id 'b')" in capsys.readouterr().err


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
