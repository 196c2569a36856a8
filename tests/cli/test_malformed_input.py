"""Fuzz-style CLI test: malformed files and options, each must give exit status 2, exactly one
line on stderr that names the problem, no traceback, and no file written.

The classes: headers that claim more data than the file holds, pickles under other names (.npz,
.npy, .txt, a torch zip), text that is not UTF-8 (--baseline, --prompts, JSON lines), a
directory where a file is expected and the reverse, audit targets (POOL inside DIR, a folder of
files no audit wrote, a file as parent), ids that cannot be exact, uneven draws, requests too
costly to start, options validated alike in both output modes, repeats; ';'-, tab- and
'|'-separated files (European decimal commas named), Excel's ``sep=`` first line, links that
loop or dangle (POOL, other files, ``--out`` before any work), JSON nested past the recursion
limit, pandas >= 3 pickles with Arrow strings, and rows repeated without draw labels (refused
rather than counted as draws). The classes that are not a one-line refusal (clean-up of
temporaries by marker only, exclusive outputs, Ctrl-C during start-up, ``--dedupe``, true/false
in long tables) are in ``test_output_targets.py``, ``test_ctrl_c.py``,
``formats/test_ids_and_draws.py`` and ``formats/test_csv_tables.py``. The option matrix over
every verb is in ``test_pool_options.py``, the audit's folder rules in
``audit/test_out_folder.py``, the classes that succeed with a checked result in
``test_error_messages.py`` and ``formats/test_ids_and_draws.py``.

Most cases run in-process through ``oraclegap.cli.main`` (the console script is
``sys.exit(main())``); a sample runs as real subprocesses to check the exit status and stderr
of the actual command, and broken pipes, ``--debug`` and Ctrl-C are checked separately.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oraclegap import cli
from oraclegap.pool import Pool

DATA = Path(__file__).parents[1] / "data"


def _files(d: Path) -> dict:
    """Every file and directory under d (names, sizes, mtimes): to prove nothing was written."""
    out = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = Path(root) / name
            st = p.lstat()  # links as links (some inputs are links that loop)
            out[str(p.relative_to(d))] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("fuzz")
    rng = np.random.default_rng(0)
    v = rng.random((20, 3, 4)) < 0.5
    np.save(d / "good.npy", v.astype(np.uint8))
    Pool(v).save(d / "good_pool")
    k1 = Pool(rng.random((12, 3, 1)) < 0.5, prompts=pd.DataFrame({"id": [f"i{j}" for j in range(12)], "cat": [None] * 12,
                                                                   "half": ["a", None] + ["b"] * 10}))
    k1.save(d / "k1_pool")
    w = lambda name, text, enc="utf-8": (d / name).write_bytes(text.encode(enc))  # noqa: E731
    w("empty.csv", "")
    w("latin1.csv", "id,caf\xe9\nq0,1\n", "latin-1")
    w("semicolon.csv", "id;a;b\nq0;1;0\n")
    w("yes.csv", "id,a,b\nq0,1,0\nq1,yes,1\n")
    w("blank.csv", "id,a,b\nq0,1,\n")
    w("dupcol.csv", "id,a,a\nq0,1,0\n")
    w("header_only.csv", "id,a,b\n")
    w("half.csv", "id,a,b\nq0,0.5,1\n")
    w("only_id.csv", "id\nq0\nq1\n")
    w("blank_id.csv", "id,a\nq0,1\n ,0\n")
    w("dup_id.csv", "id,a,b\nq0,1,0\nq0,0,1\n")
    w("ok.csv", "id,a,b,topic\nq0,1,0,x\nq1,0,1,y\n")
    w("noname.csv", "id,,b\nq0,1,0\n")
    w("ragged.csv", "id,a,b\nq0,1,0,1,1\n")
    np.savez_compressed(d / "z.npz", V=v.astype(np.uint8))
    raw = (d / "z.npz").read_bytes()
    (d / "trunc.npz").write_bytes(raw[: len(raw) // 2])
    flip = bytearray(raw)
    flip[len(raw) // 3] ^= 0x55
    (d / "badcrc.npz").write_bytes(bytes(flip))
    with zipfile.ZipFile(d / "crc.npz", "w", zipfile.ZIP_STORED) as z:  # stored (no compression): a bad CRC
        import io

        buf = io.BytesIO()
        np.save(buf, v.astype(np.uint8))
        z.writestr("V.npy", buf.getvalue())
    raw = bytearray((d / "crc.npz").read_bytes())
    raw[len(raw) // 2] ^= 0x01
    (d / "crc.npz").write_bytes(bytes(raw))
    np.savez(d / "obj.npz", V=np.array([object()], dtype=object))
    (d / "garbage.npy").write_bytes(b"not an array at all")
    (d / "trunc.npy").write_bytes((d / "good.npy").read_bytes()[:100])
    np.save(d / "obj.npy", np.array([object(), 1], dtype=object), allow_pickle=True)
    np.save(d / "twos.npy", np.full((3, 2, 2), 2))
    np.save(d / "nan.npy", np.array([[[0.0, np.nan]], [[1.0, 0.0]]]))
    np.save(d / "rank1.npy", np.ones(5))
    np.save(d / "rank4.npy", np.ones((2, 2, 2, 2)))
    np.save(d / "str.npy", np.array([["1", "0"]]))
    np.save(d / "empty.npy", np.zeros((0, 3, 2)))
    np.save(d / "complex.npy", np.ones((2, 2, 2), dtype=complex))
    (d / "notes.txt").write_text("hello")
    (d / "not_a_pool").mkdir()
    (d / "not_a_pool" / "x").write_text("x")
    for name, edit in (
        ("flip_pool", "flip"), ("more_draws_pool", "shape"), ("no_manifest_pool", "nomanifest"),
        ("bad_json_pool", "badjson"), ("newer_pool", "newer"), ("missing_file_pool", "missing"),
    ):
        p = Pool(v).save(d / name)
        m = json.loads((p / "manifest.json").read_text())
        if edit == "flip":
            b = bytearray((p / "arrays.npz").read_bytes())
            b[len(b) // 2] ^= 0xFF
            (p / "arrays.npz").write_bytes(bytes(b))
        elif edit == "shape":
            m["shape"] = [20, 3, 9]
            (p / "manifest.json").write_text(json.dumps(m))
        elif edit == "nomanifest":
            (p / "manifest.json").unlink()
        elif edit == "badjson":
            (p / "manifest.json").write_text("{nope")
        elif edit == "newer":
            m["version"] = 99
            (p / "manifest.json").write_text(json.dumps(m))
        else:
            (p / "policies.parquet").unlink()
    _damaged_and_disguised_inputs(d, v)
    _separator_link_and_repeat_inputs(d, v)
    old = d / "format1_flip"
    shutil.copytree(DATA / "pool_format1", old)
    b = bytearray((old / "arrays.npz").read_bytes())
    b[200] ^= 0xFF
    (old / "arrays.npz").write_bytes(bytes(b))
    return d


def _npy_header_only(path: Path, shape) -> None:
    """A small .npy whose header claims ``shape`` (far more than the 64 bytes that follow)."""
    import io

    buf = io.BytesIO()
    _npy_header_only_into(buf, shape)
    path.write_bytes(buf.getvalue())


def _damaged_and_disguised_inputs(d: Path, v: np.ndarray) -> None:
    """Hostile inputs: damaged headers, pickles under other names, non-UTF-8 text,
    directories where files are expected, huge ids, uneven draws, costly requests."""
    import io
    import pickle

    _npy_header_only(d / "huge_header.npy", (10**6, 10**6))
    assert (d / "huge_header.npy").stat().st_size < 300
    with zipfile.ZipFile(d / "huge_member.npz", "w") as z:
        buf = io.BytesIO()
        _npy_header_only_into(buf, (10**6, 10**6))
        z.writestr("V.npy", buf.getvalue())
    blob = pickle.dumps({"V": [1, 0, 1]}, protocol=4)  # bytes only: never loaded back
    for name in ("pickle.npz", "pickle.npy", "pickle.txt", "base.pkl"):
        (d / name).write_bytes(blob)
    with zipfile.ZipFile(d / "torch.npz", "w") as z:  # the layout torch.save writes
        z.writestr("archive/data.pkl", blob)
        z.writestr("archive/version", "3\n")
    (d / "latin1.txt").write_bytes("caf\xe9\n1\n".encode("latin-1"))
    (d / "prompts_latin1.jsonl").write_bytes('{"id": "a", "prompt": "caf\xe9", "answer": "1"}\n'.encode("latin-1"))
    (d / "a_dir").mkdir()
    (d / "dir.npy").mkdir()
    (d / "dir.npz").mkdir()
    (d / "routing.jsonl").write_text("\n".join(json.dumps({"model_name": m, "query": f"q{q}", "performance": 0.25 * ((q + j) % 5),
                                                           "embedding_id": q, "input_tokens": 10, "output_tokens": 5})
                                                for q in range(4) for j, m in enumerate(("x", "y"))) + "\n")
    (d / "routing_latin1.jsonl").write_bytes((d / "routing.jsonl").read_bytes().replace(b"q1", "q\xe9".encode("latin-1")))
    lrb = [{"dataset_id": "math", "split": "test", "model_name": m, "record_index": float(2**60 + i), "score": 1.0}
           for i in range(2) for m in ("x", "y")]
    (d / "lrb_float_ids.jsonl").write_text("\n".join(json.dumps(r) for r in lrb) + "\n")
    uneven = [{"dataset_id": "math", "split": "test", "model_name": m, "record_index": i, "score": float((i + j) % 2)}
              for i in range(4) for j, m in enumerate(("x", "y"))]
    uneven.append(dict(uneven[5]))  # one record repeated: its cell has 2 rows, every other 1
    (d / "uneven.jsonl").write_text("\n".join(json.dumps(r) for r in uneven) + "\n")
    long = pd.DataFrame({"prompt_id": ["p0", "p0", "p1", "p1", "p1"], "policy": ["a", "b", "a", "b", "b"], "correct": [1, 0, 1, 1, 0]})
    long.to_csv(d / "uneven_long.csv", index=False)
    rng = np.random.default_rng(19)
    np.save(d / "wide40.npy", (rng.random((40, 40)) < 0.5).astype(np.uint8))
    proj = d / "project"
    proj.mkdir()
    (proj / "audit.json").write_text(json.dumps({"format": "oraclegap.audit", "version": 1}))
    (proj / "paper.tex").write_text("mine")
    (proj / "data.csv").write_text("a\n1\n")


def _separator_link_and_repeat_inputs(d: Path, v: np.ndarray) -> None:
    """Hostile inputs: other separators, Excel's sep= line, links that loop or dangle,
    JSON nested past the recursion limit, Arrow-string pickles, rows doubled without draw labels."""
    w = lambda name, text: (d / name).write_text(text, encoding="utf-8")  # noqa: E731
    w("euro.csv", "id;a;b\nq0;1,0;0,0\nq1;0,0;1,0\n")
    w("euro_long.csv", "prompt_id;policy;correct\np0;a;1\np0;b;0\n")
    w("tabs.csv", "id\ta\tb\nq0\t1\t0\n")
    w("pipes.csv", "id|a|b\nq0|1|0\n")
    w("excel_semicolon.csv", "sep=;\nid;a;b\nq0;1;0\n")
    w("excel_yes.csv", "sep=,\nid,a,b\nq0,1,0\nq1,yes,1\n")
    w("excel_long_yes.csv", "sep=,\nprompt_id,policy,correct\np0,a,1\np0,b,yes\n")
    w("long_yes.csv", "prompt_id,policy,correct\np0,a,TRUE\np0,b,yes\n")
    w("deep.json", "[" * 200_000 + "]" * 200_000)
    w("deep.jsonl", "[" * 200_000 + "]" * 200_000 + "\n")
    deep_pool = Pool(v).save(d / "deep_pool")
    (deep_pool / "manifest.json").write_text("{\"a\": " * 100_000 + "1" + "}" * 100_000)
    os.symlink("self.npy", d / "self.npy")  # a link to itself
    os.symlink("cycle_b.csv", d / "cycle_a.csv")
    os.symlink("cycle_a.csv", d / "cycle_b.csv")
    os.symlink("nowhere.npy", d / "dangling.npy")
    os.symlink("gone", d / "dangling_out")
    os.symlink("loop_dir", d / "loop_dir")
    pd.DataFrame({"prompt": ["q0", "q1"], "a": pd.array(["x", "y"], dtype="string[pyarrow]"),
                  "m|total_cost": [0.1, 0.2], "m": [1, 0]}).to_pickle(d / "arrow.pkl")
    rng = np.random.default_rng(39)
    long = pd.DataFrame({"prompt_id": np.repeat([f"p{i}" for i in range(5)], 2), "policy": ["a", "b"] * 5,
                         "correct": (rng.random(10) < 0.5).astype(int)})
    pd.concat([long, long]).to_csv(d / "doubled.csv", index=False)  # the file appended to itself
    long.loc[long.index.repeat(2)].to_csv(d / "doubled_in_place.csv", index=False)  # every row twice in a row
    recs = [{"dataset_id": "math", "split": "test", "model_name": m, "record_index": i, "score": float((i + j) % 2)}
            for i in range(4) for j, m in enumerate(("x", "y"))]
    (d / "doubled.jsonl").write_text("\n".join(json.dumps(r) for r in recs + recs) + "\n")


def _npy_header_only_into(buf, shape, dtype=np.uint8) -> None:
    np.lib.format.write_array_header_1_0(buf, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                               "fortran_order": False, "shape": tuple(shape)})
    buf.write(b"\0" * 64)


# (argv with {d} for the inputs folder, regex the one stderr line must match)
CASES = [
    # ---- files
    (["coverage", "{d}/empty.csv"], r"empty.csv is empty"),
    (["coverage", "{d}/latin1.csv"], r"latin1.csv is not UTF-8"),
    (["coverage", "{d}/semicolon.csv"], r"semicolon.csv has a single column .* separated by ';'"),
    (["coverage", "{d}/yes.csv"], r"yes.csv: column 'a' line 3 \(id 'q1'\) holds 'yes'"),
    (["coverage", "{d}/blank.csv"], r"blank.csv: column 'b' line 2 .* blank"),
    (["coverage", "{d}/dupcol.csv"], r"dupcol.csv repeats column names \['a'\]"),
    (["coverage", "{d}/header_only.csv"], r"header_only.csv has a header but no rows"),
    (["coverage", "{d}/half.csv"], r"half.csv: column 'a' line 2 .* '0.5'"),
    (["coverage", "{d}/only_id.csv"], r"only_id.csv has no model columns"),
    (["coverage", "{d}/blank_id.csv"], r"id column 'id' is blank on line 3"),
    (["coverage", "{d}/dup_id.csv"], r"dup_id.csv: .*must be unique; duplicated: \['q0'\]"),
    (["coverage", "{d}/ok.csv"], r"ok.csv: column 'topic' line 2 .* 'x'"),
    (["coverage", "{d}/ok.csv", "--models", "a,zz"], r"models names columns not in .*\['zz'\]"),
    (["coverage", "{d}/ok.csv", "--prompt-columns", "nope"], r"prompt_columns names columns not in .*\['nope'\]"),
    (["coverage", "{d}/ok.csv", "--models", "a,a"], r"models repeats \['a'\]"),
    (["coverage", "{d}/ok.csv", "--id-column", "zz"], r"id_column 'zz' is not a column"),
    (["coverage", "{d}/noname.csv"], r"noname.csv has a column without a name"),
    (["coverage", "{d}/ragged.csv"], r"ragged.csv: line 2 has 5 fields but the header has 3"),
    (["coverage", "{d}/trunc.npz:V"], r"trunc.npz is damaged"),
    (["coverage", "{d}/badcrc.npz:V"], r"badcrc.npz is damaged"),
    (["coverage", "{d}/crc.npz:V"], r"crc.npz is damaged"),
    (["coverage", "{d}/z.npz:W"], r"z.npz has no array 'W'; it holds \['V'\]"),
    (["coverage", "{d}/z.npz:"], r"names no array after the colon"),
    (["coverage", "{d}/obj.npz:V"], r"obj.npz: array 'V' is an object array, which is never unpickled"),
    (["coverage", "{d}/z.npz"], r"name the array as FILE.npz:KEY"),
    (["coverage", "{d}/garbage.npy"], r"garbage.npy is damaged or not a .npy file"),
    (["coverage", "{d}/trunc.npy"], r"trunc.npy is damaged"),
    (["coverage", "{d}/obj.npy"], r"obj.npy holds an object array, which is never unpickled"),
    (["coverage", "{d}/twos.npy"], r"twos.npy: verdicts must be binary .* \[2\]"),
    (["coverage", "{d}/nan.npy"], r"nan.npy: verdicts contains NaN"),
    (["coverage", "{d}/rank1.npy"], r"rank1.npy: expected verdicts \[n, M, k\]"),
    (["coverage", "{d}/rank4.npy"], r"rank4.npy: expected verdicts"),
    (["coverage", "{d}/str.npy"], r"str.npy: expected a numeric 0/1 array, got dtype <U1"),
    (["coverage", "{d}/empty.npy"], r"empty.npy: verdicts has a zero-size axis"),
    (["coverage", "{d}/complex.npy"], r"complex.npy: expected a numeric 0/1 array, got dtype complex128"),
    (["coverage", "{d}/flip_pool"], r"arrays.npz in .*flip_pool.* does not match the checksum recorded at save"),
    (["coverage", "{d}/more_draws_pool"], r"do not match the manifest's shape \[20, 3, 9\]"),
    (["coverage", "{d}/no_manifest_pool"], r"has no manifest.json"),
    (["coverage", "{d}/bad_json_pool"], r"manifest.json in .* is not valid JSON"),
    (["coverage", "{d}/newer_pool"], r"pool format version 99 is newer"),
    (["coverage", "{d}/missing_file_pool"], r"is missing policies.parquet"),
    (["coverage", "{d}/format1_flip"], r"arrays.npz is damaged"),
    (["coverage", "{d}/nope.npy"], r"neither an existing path nor a known dataset name"),
    (["coverage", "{d}/notes.txt"], r"unsupported type"),
    (["coverage", "{d}/not_a_pool"], r"not_a_pool' has no manifest.json"),
    (["coverage", "{d}/good.npy", "--models", "a"], r"apply to wide CSV files only"),
    # ---- options
    (["coverage", "{d}/good.npy", "--taus", "0.1,0.1"], r"--taus must not repeat a threshold; repeated: \['0.1'\]"),
    (["coverage", "{d}/good.npy", "--taus", "0.1,0.10"], r"--taus must not repeat"),
    (["coverage", "{d}/good.npy", "--taus", "0.1,,0.2"], r"--taus .* no empty entries"),
    (["coverage", "{d}/good.npy", "--taus", "abc"], r"--taus must be comma-separated numbers"),
    (["coverage", "{d}/good.npy", "--taus", "1.5"], r"--taus must lie in \(0, 1\]; got \[1.5\]"),
    (["coverage", "{d}/good.npy", "--taus", "0"], r"--taus must lie in \(0, 1\]"),
    (["coverage", "{d}/good.npy", "--taus", "nan"], r"--taus must lie in \(0, 1\]"),
    (["coverage", "{d}/good.npy", "--taus", ""], r"--taus .* no empty entries"),
    (["coverage", "{d}/good.npy", "--taus", "0.1", "--taus", "0.2"], r"argument --taus: given more than once"),
    (["coverage", "{d}/good.npy", "--estimator", "bayes"], r"argument --estimator: invalid choice: 'bayes'"),
    (["coverage", "{d}/k1_pool", "--estimator", "smoothed"], r"needs k >= 2"),
    (["coverage", "{d}/good.npy", "--bogus"], r"unrecognized arguments: --bogus"),
    (["coverage"], r"the following arguments are required: POOL"),
    (["nulls", "{d}/good.npy", "--statistics", "L,L"], r"--statistics repeats \['L'\]"),
    (["nulls", "{d}/good.npy", "--nulls", "redeal,redeal"], r"--nulls repeats \['redeal'\]"),
    (["nulls", "{d}/good.npy", "--nulls", "bootstrap"], r"--nulls must be a comma-separated subset of redeal, margin"),
    (["nulls", "{d}/good.npy", "--statistics", "L,"], r"--statistics .* no empty entries"),
    (["nulls", "{d}/good.npy", "--n-draws", "0"], r"argument --n-draws: --n-draws must be >= 1"),
    (["nulls", "{d}/good.npy", "--n-draws", "1.5"], r"--n-draws must be a whole number, got '1.5'"),
    (["nulls", "{d}/good.npy", "--n-draws", "lots"], r"--n-draws must be a whole number"),
    (["nulls", "{d}/good.npy", "--n-draws", "1000000000"], r"memory for its null draws, above the limit"),
    (["nulls", "{d}/good.npy", "--burn-in", "100000000000000"], r"margin-chain proposals .* above the limit of 1e\+10"),
    (["nulls", "{d}/good.npy", "--burn-in", "1e14"], r"margin-chain proposals .* above the limit"),
    (["nulls", "{d}/good.npy", "--thin", "1e13", "--n-draws", "10"], r"margin-chain proposals .* above the limit"),
    (["nulls", "{d}/good.npy", "--seed", "-1"], r"--seed must be >= 0"),
    (["nulls", "{d}/good.npy", "--seed", "x"], r"--seed must be a whole number"),
    (["nulls", "{d}/good.npy", "--chains", "0"], r"--chains must be >= 1"),
    (["nulls", "{d}/good.npy", "--thin", "0"], r"--thin must be >= 1"),
    (["nulls", "{d}/good.npy", "--max-memory", "lots"], r"--max-memory must be a size"),
    (["nulls", "{d}/good.npy", "--max-proposals", "0"], r"--max-proposals must be >= 1"),
    (["nulls", "{d}/good.npy", "--p-convention", "fisher"], r"invalid choice: 'fisher'"),
    (["nulls", "{d}/good.npy", "--seed", "1", "--seed", "2"], r"argument --seed: given more than once"),
    (["certify", "{d}/k1_pool", "--alpha", "1.5"], r"--alpha must lie in \(0, 1\)"),
    (["certify", "{d}/k1_pool", "--alpha", "nan"], r"--alpha must be a finite number"),
    (["certify", "{d}/good_pool", "--draw", "-1"], r"--draw must be >= 0"),
    (["certify", "{d}/good_pool", "--draw", "9"], r"draw must be <= 3"),
    (["certify", "{d}/good_pool", "--tau", "0"], r"--tau must lie in \(0, 1\]"),
    (["certify", "{d}/good_pool", "--tau", "0.5", "--draw", "1"], r"not allowed with argument"),
    (["certify", "{d}/k1_pool", "--by", "nope"], r"--by 'nope' is not a prompt-table column"),
    (["certify", "{d}/k1_pool", "--by", "cat"], r"--by 'cat': the column is empty"),
    (["certify", "{d}/k1_pool", "--by", "half"], r"--by 'half': 1 of 12 prompts have no value \(first: id 'i1'\)"),
    (["certify", "{d}/k1_pool", "--method", "magic"], r"argument --method: invalid choice: 'magic'"),
    (["certify", "{d}/k1_pool", "--draw", "2"], r"the pool has k=1; --draw and --tau apply only"),
    (["frobnicate", "{d}/good.npy"], r"invalid choice: 'frobnicate'"),
    # ---- a header that claims more data than the file holds is a damaged file
    (["coverage", "{d}/huge_header.npy"], r"huge_header.npy is damaged: its header claims an array of shape \(1000000, 1000000\)"),
    (["certify", "{d}/huge_header.npy"], r"huge_header.npy is damaged: its header claims"),
    (["coverage", "{d}/huge_member.npz:V"], r"huge_member.npz: member 'V' is damaged: its header claims"),
    (["decompose", "{d}/good_pool", "--baseline", "{d}/huge_header.npy"], r"is damaged: its header claims"),
    (["coverage", "{d}/routing.jsonl", "--score-threshold", "0.5", "--embeddings", "{d}/huge_header.npy"],
     r"huge_header.npy is damaged: its header claims"),
    # ---- pickles under other names get the project's refusal with its conversion lines
    (["coverage", "{d}/pickle.npz:V"], r"pickle.npz is a pickle .*never unpickles.*convert it"),
    (["coverage", "{d}/pickle.npz"], r"pickle.npz is a pickle .*never unpickles.*convert it"),
    (["coverage", "{d}/pickle.npy"], r"pickle.npy is a pickle .*never unpickles.*convert it"),
    (["coverage", "{d}/torch.npz:V"], r"torch.npz is a pickle .*inside a zip archive.*torch.load"),
    (["coverage", "{d}/good.npy", "--format", "npy", "--models", "a"], r"apply to wide CSV files only"),
    (["decompose", "{d}/good_pool", "--baseline", "{d}/base.pkl"], r"--baseline: .*base.pkl is a pickle-based file \(.pkl\)"),
    (["decompose", "{d}/good_pool", "--baseline", "{d}/pickle.npy"], r"pickle.npy is a pickle .*never unpickles"),
    (["decompose", "{d}/good_pool", "--baseline", "{d}/pickle.txt"], r"pickle.txt is a pickle .*never unpickles"),
    (["decompose", "{d}/good_pool", "--baseline", "{d}/pickle.npz:V"], r"pickle.npz is a pickle"),
    (["coverage", "{d}/routing.jsonl", "--score-threshold", "0.5", "--embeddings", "{d}/pickle.npy"], r"pickle.npy is a pickle"),
    # ---- text that is not UTF-8: the file and the byte are named
    (["decompose", "{d}/good_pool", "--baseline", "{d}/latin1.txt"], r"--baseline .*latin1.txt is not UTF-8 text \(byte 0xe9 at offset 3"),
    (["coverage", "{d}/routing_latin1.jsonl"], r"routing_latin1.jsonl is not UTF-8 text"),
    (["rollouts", "--model", "{d}/a_dir", "--prompts", "{d}/prompts_latin1.jsonl", "--task", "exact", "--out", "store"],
     r"prompts file .*prompts_latin1.jsonl' is not UTF-8 text \(byte 0xe9"),
    # ---- a directory where a file is expected, and the reverse
    (["coverage", "{d}/dir.npy"], r"dir.npy' is a directory, expected a .npy file"),
    (["coverage", "{d}/dir.npz:V"], r"POOL file '.*dir.npz' is a directory, expected a file"),
    (["coverage", "{d}/good.npy", "--format", "pool"], r"good.npy' is a file, expected a directory"),
    (["coverage", "{d}/good_pool", "--format", "npy"], r"good_pool' is a directory, expected a file"),
    (["decompose", "{d}/good_pool", "--baseline", "{d}/a_dir"], r"--baseline '.*a_dir' is a directory, expected a file"),
    (["decompose", "{d}/good_pool", "--baseline", "{d}/dir.npz:V"], r"--baseline file '.*dir.npz' is a directory, expected a file"),
    (["coverage", "{d}/routing.jsonl", "--score-threshold", "0.5", "--embeddings", "{d}/a_dir"],
     r"embeddings file '.*a_dir' is a directory, expected a file"),
    (["coverage", "{d}/routing.jsonl", "--score-threshold", "0.5", "--llm-data", "{d}/a_dir"], r"llm_data '.*a_dir' is a directory, expected a file"),
    (["rollouts", "--model", "{d}/a_dir", "--prompts", "{d}/a_dir", "--task", "exact", "--out", "store"],
     r"prompts file '.*a_dir' is a directory, expected a file"),
    (["rollouts", "--status", "{d}/notes.txt"], r"--status STORE '.*notes.txt' is a file, expected a directory"),
    (["rollouts", "--status", "{d}/no_store"], r"--status STORE '.*no_store' does not exist"),
    (["rollouts", "--model", "{d}/notes.txt", "--prompts", "{d}/notes.txt", "--task", "exact", "--out", "store"],
     r"--model '.*notes.txt' is a file, expected a directory"),
    (["rollouts", "--model", "{d}/a_dir", "--prompts", "{d}/notes.txt", "--task", "exact", "--out", "{d}/notes.txt"],
     r"--out STORE '.*notes.txt' is a file, expected a directory"),
    (["audit", "{d}/good_pool", "--out", "{d}/notes.txt"], r"--out '.*notes.txt' is a file, expected a directory"),
    (["audit", "{d}/good_pool", "--out", "{d}/notes.txt/rep"], r"notes.txt' is a file, expected a directory"),
    # ---- audit targets: never the input's folder, never a folder of files no audit wrote
    (["audit", "{d}/good.npy", "--out", "{d}"], r"POOL '.*good.npy' lies inside --out"),
    (["audit", "{d}/good_pool", "--out", "{d}/good_pool"], r"lies inside --out"),
    (["audit", "{d}/good_pool", "--out", "{d}/good_pool/report"], r"--out '.*report' lies inside POOL"),
    (["audit", "{d}/good_pool", "--out", "{d}/project"], r"project' exists and is not an audit directory"),
    (["audit", "{d}/good_pool", "--out", "rep", "--seed", "-1"], r"--seed must be >= 0"),
    # ---- ids that cannot be exact, and the cell with the extra rows
    (["coverage", "{d}/lrb_float_ids.jsonl"], r"field 'index' holds 1.152921504606847e\+18, a float beyond 2\*\*53"),
    (["coverage", "{d}/uneven.jsonl"], r"prompt 'math/test/2' x policy 'y' has 2, more rows than the 7 cells with 1"),
    (["coverage", "{d}/uneven_long.csv"], r"prompt 'p1' x policy 'b' has 2, more rows than the 3 cells with 1"),
    # ---- costly requests refused before any work (no option --max-memory needed to understand them)
    (["decompose", "{d}/good_pool", "--n-boot", "1e9"], r"decompose --n-boot 1000000000 needs about .* above --max-(proposals|memory)"),
    (["decompose", "{d}/good_pool", "--n-boot", "1e9", "--json"], r"decompose --n-boot 1000000000 needs about"),
    (["routers", "{d}/good_pool", "--tau", "0.5", "--n-boot", "1e9"], r"routers --n-boot 1000000000 needs about .* lower --n-boot"),
    (["compose", "{d}/wide40.npy", "--sizes", "14", "--max-subsets", "1e11"], r"compose --max-subsets 100000000000 needs about"),
    (["compose", "{d}/wide40.npy", "--max-subsets", "1e11"], r"compose --max-subsets 100000000000 needs about"),
    # ---- options validated before the output mode is chosen, and refused alike
    (["decompose", "{d}/good_pool", "--thin", "-1"], r"--thin must be >= 0"),
    (["decompose", "{d}/good_pool", "--thin", "-1", "--json"], r"--thin must be >= 0"),
    (["decompose", "{d}/good_pool", "--alpha", "1.5"], r"--alpha must lie in \(0, 1\)"),
    (["decompose", "{d}/good_pool", "--n-boot", "0", "--json"], r"--n-boot must be >= 1"),
    (["decompose", "{d}/good_pool", "--seed", "-3"], r"--seed must be >= 0"),
    (["routers", "{d}/good_pool", "--tau", "0.5", "--cv", "1"], r"--cv must be >= 2"),
    (["routers", "{d}/good_pool", "--tau", "0.5", "--alpha", "2"], r"--alpha must lie in \(0, 1\)"),
    (["routers", "{d}/good_pool", "--tau", "0.5", "--n-boot", "10"], r"--n-boot must be >= 100"),
    (["routers", "{d}/good_pool", "--tau", "1.5"], r"--tau must lie in \(0, 1\]"),
    (["routers", "{d}/good_pool", "--seed", "x"], r"--seed must be a whole number"),
    (["compose", "{d}/k1_pool", "--max-subsets", "0"], r"--max-subsets must be >= 1"),
    (["compose", "{d}/good_pool", "--tau", "0"], r"--tau must lie in \(0, 1\]"),
    (["rollouts", "--k", "0"], r"--k must be >= 1"),
    (["rollouts", "--top-p", "0"], r"--top-p must lie in \(0, 1\]"),
    (["audit", "{d}/good_pool", "--out", "rep", "--alpha", "x"], r"--alpha must be a number"),
    # ---- repeats refused like --taus; --tau on a k = 1 pool refused like certify and routers
    (["routers", "{d}/good_pool", "--tau", "0.5", "--families", "best_single,best_single"], r"--families repeats \['best_single'\]"),
    (["compose", "{d}/k1_pool", "--sizes", "1,1"], r"--sizes repeats \['1'\]"),
    (["compose", "{d}/k1_pool", "--sizes", "1,01"], r"--sizes repeats \[1\]"),
    (["compose", "{d}/k1_pool", "--sizes", "1,,2"], r"--sizes must be a comma-separated list with no empty entries"),
    (["compose", "{d}/k1_pool", "--tau", "0.5"], r"the pool has k=1: --tau applies only"),
    (["routers", "{d}/k1_pool", "--tau", "0.5"], r"the pool has k=1: --tau applies only"),
    # ---- other separators and Excel's sep= line are named, with line numbers that count the sep= line
    (["coverage", "{d}/euro.csv"], r"euro.csv has a single column 'id;a;b': it looks separated by ';' with decimal commas"),
    (["coverage", "{d}/euro_long.csv"], r"euro_long.csv has a single column .* looks separated by ';'"),
    (["coverage", "{d}/euro_long.csv", "--format", "long"], r"euro_long.csv has a single column .* looks separated by ';'"),
    (["coverage", "{d}/tabs.csv"], r"tabs.csv has a single column .* looks separated by tabs"),
    (["coverage", "{d}/pipes.csv"], r"pipes.csv has a single column .* looks separated by '\|'"),
    (["coverage", "{d}/excel_semicolon.csv"], r"excel_semicolon.csv starts with Excel's line 'sep=;': it is separated by ';'"),
    (["coverage", "{d}/excel_yes.csv"], r"excel_yes.csv: column 'a' line 4 \(id 'q1'\) holds 'yes', not a 0/1 outcome"),
    (["coverage", "{d}/excel_long_yes.csv"], r"excel_long_yes.csv: column 'correct' line 4 holds 'yes', not a 0/1 outcome"),
    (["coverage", "{d}/long_yes.csv"], r"long_yes.csv: column 'correct' line 3 holds 'yes', not a 0/1 outcome"),
    # ---- links that loop or dangle are named as links, for POOL, other files and --out (before any work)
    (["coverage", "{d}/self.npy"], r"POOL '.*self.npy' leads through a symbolic link that loops"),
    (["coverage", "{d}/cycle_a.csv"], r"POOL '.*cycle_a.csv' leads through a symbolic link that loops"),
    (["coverage", "{d}/self.npy", "--format", "npy"], r"POOL '.*self.npy' leads through a symbolic link that loops"),
    (["coverage", "{d}/dangling.npy"], r"POOL '.*dangling.npy' is a symbolic link to 'nowhere.npy', which does not exist"),
    (["coverage", "{d}/loop_dir/x.npy"], r"POOL '.*x.npy' leads through a symbolic link that loops"),
    (["decompose", "{d}/good_pool", "--baseline", "{d}/self.npy"], r"--baseline '.*self.npy' leads through a symbolic link"),
    (["coverage", "{d}/routing.jsonl", "--score-threshold", "0.5", "--embeddings", "{d}/dangling.npy"],
     r"embeddings file '.*dangling.npy' is a symbolic link to 'nowhere.npy', which does not exist"),
    (["audit", "{d}/good_pool", "--out", "{d}/dangling_out"], r"--out '.*dangling_out' is a symbolic link to 'gone', which does not"),
    (["audit", "{d}/good_pool", "--out", "{d}/loop_dir/rep"], r"--out '.*rep' leads through a symbolic link that loops"),
    (["export", "{d}/good_pool", "--format", "long", "--out", "{d}/dangling_out"], r"--out '.*dangling_out' is a symbolic link"),
    (["export", "{d}/good_pool", "--format", "long", "--out", "{d}/loop_dir/x.csv"], r"--out '.*x.csv' leads through a symbolic"),
    (["rollouts", "--status", "{d}/loop_dir"], r"--status STORE '.*loop_dir' leads through a symbolic link that loops"),
    # ---- JSON nested past the recursion limit names the file
    (["coverage", "{d}/deep.json"], r"deep.json nests JSON lists or objects too deeply to read"),
    (["coverage", "{d}/deep.jsonl"], r"deep.jsonl: line 1 nests JSON lists or objects too deeply to read"),
    (["coverage", "{d}/deep_pool"], r"POOL '.*deep_pool' \(or a file in it\) nests lists or objects too deeply"),
    # ---- a pandas >= 3 pickle with Arrow strings: the reason and the conversion line
    (["coverage", "{d}/arrow.pkl"], r"arrow.pkl: pandas >= 3 pickles with Arrow strings cannot be read safely .*to_parquet"),
    # ---- rows repeated without draw labels are not counted as draws
    (["coverage", "{d}/doubled.csv"], r"doubled.csv: every row appears 2 times in its \(prompt, policy\) cell \(20 rows, 10"),
    (["coverage", "{d}/doubled_in_place.csv"], r"every row appears 2 times in its \(prompt, policy\) cell"),
    (["nulls", "{d}/doubled.csv", "--json"], r"every row appears 2 times .* k = 2 draws instead of 1"),
    (["coverage", "{d}/doubled.jsonl"], r"doubled.jsonl: every row appears 2 times in its \(prompt, policy\) cell"),
    (["coverage", "{d}/good.npy", "--dedupe"], r"option\(s\) \['dedupe'\] do not apply"),
    ([], r"the following arguments are required: COMMAND"),
]


def test_enough_cases():
    assert len(CASES) >= 185


@pytest.mark.parametrize("argv, pattern", CASES, ids=[" ".join(a)[:60] or "<none>" for a, _ in CASES])
def test_malformed_input_gives_one_line_exit_2(inputs, tmp_path, monkeypatch, capsys, argv, pattern):
    import re

    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{d}", str(inputs)) for a in argv]
    before_in, before_cwd = _files(inputs), _files(tmp_path)
    rc = cli.main(argv)
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert rc == 2, (rc, out.err)
    assert len(lines) == 1, out.err
    assert "Traceback" not in out.err and out.out == ""
    assert lines[0].startswith("oraclegap"), lines[0]
    assert re.search(pattern, lines[0]), lines[0]
    assert _files(inputs) == before_in and _files(tmp_path) == before_cwd


SUBPROCESS_CASES = [0, 19, 35, 47, 69, -1]  # files, options, argparse errors, no arguments


@pytest.mark.slow
def test_real_command_exit_status_and_stderr(inputs, tmp_path):
    env = dict(os.environ)
    for i in SUBPROCESS_CASES:
        argv, pattern = CASES[i]
        argv = [a.replace("{d}", str(inputs)) for a in argv]
        before = _files(inputs)
        res = subprocess.run([sys.executable, "-m", "oraclegap.cli", *argv], capture_output=True, text=True, cwd=tmp_path,
                             env=env, timeout=120)
        assert res.returncode == 2, (argv, res.stderr)
        assert len(res.stderr.splitlines()) == 1 and "Traceback" not in res.stderr, res.stderr
        assert __import__("re").search(pattern, res.stderr), res.stderr
        assert _files(inputs) == before and not list(tmp_path.iterdir())


def test_debug_shows_the_traceback(inputs, capsys):
    assert cli.main(["--debug", "coverage", str(inputs / "twos.npy")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("oraclegap coverage: error:")
    assert cli.main(["coverage", str(inputs / "twos.npy"), "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_unexpected_errors_and_interrupts_are_one_line(monkeypatch, capsys, inputs):
    def boom(args):
        raise RuntimeError("something broke\nover two lines")

    parser_run = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser_run(), boom))
    assert cli.main(["coverage", str(inputs / "good.npy")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "unexpected RuntimeError: something broke over two lines" in err[0] and "--debug" in err[0]

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser_run(), interrupted))
    assert cli.main(["coverage", str(inputs / "good.npy")]) == 130
    assert capsys.readouterr().err.strip() == "oraclegap coverage: interrupted"


def _with_func(parser, func):
    for action in parser._subparsers._group_actions:
        for p in action.choices.values():
            p.set_defaults(func=func)
    return parser


def test_broken_pipe_ends_quietly(inputs, tmp_path):
    taus = ",".join(f"{t:.3f}" for t in np.arange(1, 1000) / 1000)
    proc = subprocess.Popen([sys.executable, "-m", "oraclegap.cli", "coverage", str(inputs / "good.npy"), "--taus", taus,
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    first = proc.stdout.read(10)
    proc.stdout.close()  # like `| head -c 10`
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert first.startswith(b"{")
    assert err == "", err
    assert proc.returncode == 141


def test_shared_helpers_for_every_verb():
    import argparse

    from oraclegap.commands import _common as C

    taus, keys = C.parse_taus("0.1,0.1000001,1")
    assert keys == ["0.1", "0.1000001", "1.0"] and [float(x) for x in keys] == taus.tolist()
    with pytest.raises(ValueError, match="repeat"):
        C.parse_taus("0.3,0.30")
    assert C.parse_list("a,b", "--x", ("a", "b", "c")) == ("a", "b")
    with pytest.raises(ValueError, match=r"--x repeats \['a'\]"):
        C.parse_list("a,b,a", "--x")
    with pytest.raises(ValueError, match=r"unknown: \['d'\]"):
        C.parse_list("a,d", "--x", ("a", "b"))
    n = C.int_arg("--n", minimum=1)
    assert n("2000") == n("2_000") == n("2e3") == n("2000.0") == 2000
    for bad in ("1.5", "x", "0", "inf", "1e400"):
        with pytest.raises(argparse.ArgumentTypeError, match="--n"):
            n(bad)
    assert C.bytes_arg()("4G") == 4 << 30 and C.bytes_arg()("512MiB") == 512 << 20 and C.bytes_arg()("none") is None
    assert C.limit_arg("--m")("1e10") == 10**10 and C.limit_arg("--m")("none") is None
    assert C.estimate_bytes((1000, 10), (5,), itemsize=8) == 80_040
    args = argparse.Namespace(max_proposals=1000, max_memory=1 << 20)
    C.check_resources(args, "routing", steps=1000, bytes_=1 << 20)
    with pytest.raises(ValueError, match=r"routing needs about 1e\+04 steps, above --max-proposals 1e\+03"):
        C.check_resources(args, "routing", steps=10_000)
    with pytest.raises(ValueError, match=r"needs about 2 MiB of memory, above --max-memory 1 MiB"):
        C.check_resources(args, "routing", bytes_=2 << 20)
    C.check_resources(argparse.Namespace(max_proposals=None, max_memory=None), "x", steps=10**20, bytes_=10**20)
