"""Nothing silently wrong, nothing lost: one block of tests per class of failure (silent wrong
results 1-8, data safety, unclear errors)."""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oraclegap import datasets as D
from oraclegap.pool import FORMAT_VERSION, Pool
from oraclegap.sources import open_pool
from oraclegap.stats import certify, coverage, nulls
from oraclegap.stats.nulls import margin_null, redeal_null

DATA = Path(__file__).parent / "data"


def write(path: Path, text: str, encoding="utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


# ============================================================================ 1. wide CSV columns
def test_csv_bad_cell_is_an_error_naming_column_and_line(tmp_path):
    f = write(tmp_path / "w.csv", "id,a,b,c\nq0,1,0,1\nq1,0,yes,1\nq2,1,1,0\n")
    with pytest.raises(ValueError, match=r"column 'b' line 3 \(id 'q1'\) holds 'yes'"):
        open_pool(str(f))
    f = write(tmp_path / "blank.csv", "id,a,b\nq0,1,0\nq1,,1\n")
    with pytest.raises(ValueError, match=r"column 'a' line 3 .* blank"):
        open_pool(str(f))
    f = write(tmp_path / "half.csv", "id,a,b\nq0,1,0.5\n")
    with pytest.raises(ValueError, match=r"column 'b' line 2 .* '0.5'"):
        open_pool(str(f))


def test_csv_models_are_chosen_by_declaration_not_dtype(tmp_path):
    f = write(tmp_path / "w.csv", "id,is_math,a,b,topic\nq0,1,1,0,alg\nq1,0,0,1,geo\nq2,1,1,1,alg\n")
    # a text metadata column is an error unless declared (it is not silently dropped)
    with pytest.raises(ValueError, match=r"column 'topic' line 2 .* 'alg'"):
        open_pool(str(f))
    p = open_pool(str(f), prompt_columns="is_math,topic")
    assert p.policy_names == ["a", "b"] and p.prompts["is_math"].tolist() == ["1", "0", "1"]
    np.testing.assert_array_equal(p.verdicts[:, :, 0], [[1, 0], [0, 1], [1, 1]])
    q = open_pool(str(f), models=["b"])
    assert q.policy_names == ["b"] and q.n_prompts == 3
    with pytest.raises(ValueError, match="models names columns not in"):
        open_pool(str(f), models="a,nope")
    with pytest.raises(ValueError, match="repeats"):
        open_pool(str(f), models="a,a")


def test_csv_standard_label_columns_are_not_models(tmp_path):
    f = write(tmp_path / "w.csv", "item_id,text,split,m1,m2\nx,what is 2+2,test,1,0\ny,name a prime,train,0,0\n")
    p = open_pool(str(f))
    assert p.policy_names == ["m1", "m2"] and p.prompt_ids == ["x", "y"] and p.splits == ["test", "train"]


# ============================================================================ 2. registry loaders
def _fake_external(root: Path) -> None:
    mm = root / D.MMLUPRO
    mm.mkdir(parents=True)
    pd.DataFrame({"question_id": [1, 2, 3], "m1_5shots": [1.0, 0.0, 0.5], "m2_5shots": [0, 1, 1]}).to_csv(
        mm / "correctness_matrix.csv", index=False)
    pd.DataFrame({"question_id": [1, 2, 3], "question": ["a", "b", "c"], "category": ["x", "y", "x"],
                  "src": ["s", "s", "s"]}).to_json(mm / "questions.jsonl", orient="records", lines=True)
    ch = root / D.CHEN / "math500"
    ch.mkdir(parents=True)
    b = np.zeros((2, 2, 3))
    b[1, 0, 2] = -1.0
    np.savez(ch / "correctness_slim.npz", b=b, b_single=b[:, :, 0], greedy=b[:, :, 0],
             meta=np.array(json.dumps({"models": ["u", "v"], "temperature": 0.2, "seed": 0})))
    (ch / "subset.json").write_text(json.dumps([{"id": "i0", "prompt": "p"}, {"id": "i1", "prompt": "q"}]))
    rb = root / D.RDC / "routerbench_zs"
    rb.mkdir(parents=True)
    for split, val in (("train", 1.0), ("test", 2.0)):
        pd.DataFrame({"sample_id": [f"{split}0"], "prompt": ["p"], "eval_name": ["mbpp"], "gpt": [val],
                      "gpt|total_cost": [0.1]}).to_csv(rb / f"mbpp_{split}.csv", index=False)


def test_registry_loaders_reject_values_other_than_0_and_1(tmp_path, monkeypatch):
    _fake_external(tmp_path)
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path))
    with pytest.raises(ValueError, match=r"mmlu-pro: .*correctness_matrix.csv: column 'm1_5shots' row 2 \(question_id 3\) holds 0.5"):
        D.load("mmlu-pro")
    with pytest.raises(ValueError, match=r"chen2026-math500: array 'b' .* found other values such as \[-1.0\]"):
        D.load("chen2026-math500")
    with pytest.raises(ValueError, match=r"routerbench-mbpp: .*column 'gpt' row 1 holds 2.0"):
        D.load("routerbench-mbpp")


# ============================================================================ 3. Pool.load trusts the manifest
def _edit_manifest(d: Path, **changes) -> None:
    m = json.loads((d / "manifest.json").read_text())
    m.update(changes)
    (d / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("claim", [[4, 2, 8], [4, 2, 4], [5, 2, 6], [4, 3, 6]])
def test_load_refuses_a_manifest_shape_that_does_not_match_the_arrays(tmp_path, claim):
    v = np.ones((4, 2, 6), bool)
    d = Pool(v).save(tmp_path / "p")
    _edit_manifest(d, shape=claim)
    with pytest.raises(ValueError, match="arrays.npz"):
        Pool.load(d)


def test_load_refuses_fewer_draws_than_stored_even_in_format_1(tmp_path):
    # a format-1 pool (no checksums): claiming k=4 of 6 stored draws would drop successes
    d = tmp_path / "old"
    d.mkdir()
    v = np.ones((3, 2, 6), bool)
    np.savez_compressed(d / "arrays.npz", verdicts=np.packbits(v, axis=2))
    pd.DataFrame({"id": ["a", "b", "c"]}).to_parquet(d / "prompts.parquet")
    pd.DataFrame({"name": ["x", "y"]}).to_parquet(d / "policies.parquet")
    (d / "manifest.json").write_text(json.dumps({"format": "oraclegap.pool", "version": 1, "shape": [3, 2, 4]}))
    with pytest.raises(ValueError, match="successes beyond the manifest's k=4"):
        Pool.load(d)


@pytest.mark.parametrize("name", ["arrays.npz", "prompts.parquet", "policies.parquet", "answers.parquet"])
def test_checksum_recorded_at_save_names_the_changed_file(tmp_path, name):
    v = np.random.default_rng(0).random((5, 2, 3)) < 0.5
    d = Pool(v, answers=np.full(v.shape, "text", dtype=object)).save(tmp_path / "p")
    assert set(json.loads((d / "manifest.json").read_text())["checksums"]["sha256"]) >= {name}
    raw = bytearray((d / name).read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (d / name).write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=rf"{name} in .* does not match the checksum recorded at save"):
        Pool.load(d)


# ============================================================================ 4. tiny thresholds
@pytest.mark.parametrize("tau", [1e-12, 1e-10, 1e-9 / 7])
def test_tiny_thresholds_need_one_success(tau):
    assert coverage.need(tau, 7) == 1 and coverage.need([tau, 0.5], 7).tolist() == [1, 4]
    wrong = np.zeros((6, 3, 7), bool)
    tab = coverage.coverage(wrong, [tau])
    assert tab.oracle[0] == 0 and tab.best[0] == 0 and tab.L[0] == 0 and tab.mixture[0] == 0
    R = certify.outcomes_from_pool(Pool(wrong), tau=tau)
    assert not R.any()
    g = certify.selection_valid_gap_from_outcomes(R)
    assert g.oracle_count == 0 and g.value == 0 and not g.certified
    some = wrong.copy()
    some[0, 1, 3] = True
    tab = coverage.coverage(some, [tau])
    assert tab.oracle[0] == pytest.approx(1 / 6)
    # the truth path: a rate of 0 never reaches a positive threshold
    assert coverage.coverage_from_rates(np.zeros((4, 2)), [1e-13]).oracle[0] == 0


# ============================================================================ 5. thresholds that collide in JSON
def test_tau_keys_are_exact_and_repeats_are_refused():
    v = np.random.default_rng(1).random((40, 3, 10)) < 0.3
    d = coverage.coverage(v, [0.1, 0.1000001]).to_dict()
    assert len(d) == 2 and sorted(float(k) for k in d) == [0.1, 0.1000001]
    for bad in ([0.1, 0.1], "0.2,0.20", [0.3, 0.1, 0.3]):
        with pytest.raises(ValueError, match="repeat"):
            coverage.coverage(v, bad)
    res = nulls.null_tests(v, [0.1, 0.1000001], n_draws=20, seed=0, nulls="redeal", statistics="L").to_dict()
    assert sorted(map(float, res["taus"])) == [0.1, 0.1000001]


def test_cli_tau_keys_round_trip(tmp_path, capsys):
    from oraclegap.cli import main

    v = np.random.default_rng(2).random((30, 3, 10)) < 0.4
    np.save(tmp_path / "v.npy", v)
    assert main(["coverage", str(tmp_path / "v.npy"), "--taus", "0.1,0.1000001,1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [float(k) for k in out["taus"]] == [0.1, 0.1000001, 1.0]
    assert main(["coverage", str(tmp_path / "v.npy"), "--taus", "0.1,0.1"]) == 2
    assert "repeat" in capsys.readouterr().err


# ============================================================================ 6. from_long identities
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


# ============================================================================ 7. degenerate nulls
def _k1_pool(seed=0, n=80, M=5):
    rng = np.random.default_rng(seed)
    return rng.random((n, M, 1)) < rng.beta(1, 1, (n, 1, 1))


def test_k1_margin_null_is_skipped_with_reason_and_pointer():
    v = _k1_pool()
    res = nulls.null_tests(v, (0.05, 0.3), n_draws=50, seed=0)
    margin = [t for t in res.skipped if t.null == "margin"]
    assert len(margin) == 3 * 2 + 1 and not [t for t in res.tests if t.null == "margin"]
    assert all("k = 1" in t.reason and "certify" in t.instead for t in margin)
    assert {(t.statistic_name, t.null) for t in res.skipped if t.null == "redeal"} == {("D", "redeal"), ("oracle_minus_mixture", "redeal")}
    assert {t.statistic_name for t in res.tests} == {"L", "pass1"} and res.chain is None
    assert any("same test" in n for n in res.notes)
    d = res.to_dict()
    assert d["taus"]["0.05"]["L"]["margin"]["skipped"] is True and "certify" in d["taus"]["0.05"]["L"]["margin"]["instead"]
    w = res.wide()
    assert "skipped" in w and w.loc[w["statistic"] == "D", "skipped"].str.contains("point mass at k=1").all()
    with pytest.raises(KeyError, match="was skipped"):
        res.get("L", 0.05, "margin")
    assert nulls.null_cost(v, (0.05, 0.3)).proposals == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4), st.integers(2, 4), st.integers(2, 7), st.integers(0, 10_000),
       st.lists(st.sampled_from([0.01, 0.1, 0.2, 0.34, 0.5, 1.0]), min_size=1, max_size=3, unique=True))
def test_every_skipped_test_is_a_point_mass_and_every_run_test_is_not_always(k, M, n, seed, taus):
    rng = np.random.default_rng(seed)
    c = rng.binomial(k, rng.beta(0.7, 0.7, (n, 1)).repeat(M, axis=1))
    skip = nulls.degenerate_tests(c, taus, k=k)
    full = nulls.null_tests(c, taus, k=k, n_draws=40, seed=seed, skip_degenerate=False, thin=5, burn_in=50)
    for t in full.tests:
        key = (t.statistic_name, None if math.isnan(t.tau) else t.tau, t.null)
        if key in skip:
            assert np.all(t.draws == t.observed), (key, skip[key])


def test_run_tests_do_vary_on_a_generic_pool():
    # the detection is not over-eager: on a generic k = 1 pool the re-deal L and pass1 tests move
    res = nulls.null_tests(_k1_pool(3), (0.2,), n_draws=200, seed=1, nulls="redeal")
    assert all(np.ptp(t.draws) > 0 for t in res.tests)
    rng = np.random.default_rng(0)
    c = rng.binomial(8, rng.beta(1, 1, (60, 1)).repeat(4, axis=1))
    res = nulls.null_tests(c, (0.1, 0.5), k=8, n_draws=200, seed=1)
    assert [(t.statistic_name, t.tau) for t in res.skipped] == [("oracle_minus_mixture", 0.1)] * 2
    assert all(np.ptp(t.draws) > 0 for t in res.tests)


def test_cli_nulls_on_k1_pool_states_the_skip(tmp_path, capsys):
    from oraclegap.cli import main

    np.save(tmp_path / "v.npy", _k1_pool())
    assert main(["nulls", str(tmp_path / "v.npy"), "--taus", "0.1", "--n-draws", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    slot = out["taus"]["0.1"]["D"]["margin"]
    assert slot["skipped"] is True and "k = 1" in slot["reason"] and "oraclegap certify" in slot["instead"]
    assert out["taus"]["0.1"]["L"]["redeal"]["n_draws"] == 30  # the re-deal L still runs
    assert "chain" not in out and all("certify" in s["instead"] for s in out["skipped"])
    assert main(["nulls", str(tmp_path / "v.npy"), "--taus", "0.1", "--n-draws", "30"]) == 0
    text = capsys.readouterr().out
    assert "skipped" in text and "point mass at k=1" in text and "oraclegap certify" in text


def test_gap_table_survives_skipped_tests():
    rng = np.random.default_rng(4)
    c = rng.binomial(16, rng.beta(1, 1, (50, 1)).repeat(3, axis=1))
    tab = nulls.gap_table(Pool.from_counts(c, 16), (0.05, 0.2), n_draws=50, n_splits=5).frame()
    row = tab.set_index("tau").loc[0.05]
    assert np.isnan(row["orac_minus_mix_p"]) and row["orac_minus_mix_null"] == row["orac_minus_mix"]
    assert "tau <= 1/k" in row["skipped"] and not np.isnan(tab.set_index("tau").loc[0.2, "orac_minus_mix_p"])


# ============================================================================ chunked kernels and cost bounds
def test_chunked_kernels_give_the_same_draws(monkeypatch):
    rng = np.random.default_rng(5)
    c = rng.binomial(6, rng.beta(1, 1, (30, 1)).repeat(4, axis=1))
    kw = dict(k=6, n_draws=25, seed=3, burn_in=4000, n_chains=3)
    ref = nulls.null_tests(c, (0.3,), thin=700, **kw)
    ref_big = nulls.null_tests(c, (0.3,), thin=2500, **kw)
    monkeypatch.setattr(margin_null, "_CHUNK", 1000)  # the constants live where they are read
    monkeypatch.setattr(redeal_null, "_REDEAL_CHUNK_CELLS", 300)
    small = nulls.null_tests(c, (0.3,), thin=700, **kw)
    small_big = nulls.null_tests(c, (0.3,), thin=2500, **kw)  # thin > chunk: every kept table in pieces
    for a, b in ((ref, small), (ref_big, small_big)):
        for ta, tb in zip(a.tests, b.tests, strict=True):
            np.testing.assert_array_equal(ta.draws, tb.draws)
        assert a.chain.acceptance == b.chain.acceptance and a.chain.proposals == b.chain.proposals


def test_cost_is_estimated_and_bounded_up_front():
    rng = np.random.default_rng(6)
    c = rng.binomial(10, rng.beta(1, 1, (40, 1)).repeat(3, axis=1))
    cost = nulls.null_cost(c, (0.3,), k=10, n_draws=100, n_chains=2)
    res = nulls.null_tests(c, (0.3,), k=10, n_draws=100, n_chains=2, seed=0)
    assert cost.proposals == res.chain.proposals == 2 * res.chain.burn_in + res.chain.thin * 100
    assert cost.redeal_cells == 100 * res.chain.n_movable * 3
    with pytest.raises(ValueError, match="of memory for its null draws, above the limit of 4 GiB"):
        nulls.null_tests(c, (0.3,), k=10, n_draws=10**9)
    with pytest.raises(ValueError, match=r"4e\+14 margin-chain proposals .* above the limit of 1e\+10"):
        nulls.null_tests(c, (0.3,), k=10, n_draws=10, burn_in=10**14)
    with pytest.raises(ValueError, match="max_bytes"):
        nulls.redeal(c, 10**9, k=10)
    small = nulls.null_tests(c, (0.3,), k=10, n_draws=10, max_proposals=None, max_bytes=None, seed=0)
    assert len(small.tests) > 0


def test_long_chain_is_interruptible(tmp_path):
    script = tmp_path / "long.py"
    script.write_text(
        "import signal, sys, numpy as np\n"
        # Ctrl-C as a user's shell delivers it: a pytest worker may run with SIGINT ignored, which
        # its children inherit, and Python then installs no KeyboardInterrupt handler at all
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from oraclegap.stats import nulls\n"
        "c = np.random.default_rng(0).binomial(8, 0.5, (200, 5))\n"
        "nulls.null_tests(c, (0.3,), k=8, n_draws=2, n_chains=1, statistics='L', nulls='margin', burn_in=10)\n"
        "print('start', flush=True)\n"
        "try:\n"
        "    nulls.null_tests(c, (0.3,), k=8, n_draws=4, n_chains=1, statistics='L', nulls='margin',\n"
        "                     burn_in=10**13, max_proposals=None)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(7)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "start"
        import signal
        import time

        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the chain did not stop on SIGINT; " + proc.communicate()[1][-2000:]) from None
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 7 and "interrupted" in out, err


# ============================================================================ 8. numeric helpers
@pytest.mark.parametrize("rates, match", [([0.2, np.nan], "NaN"), ([0.2, 1.5], r"\[0, 1\]"), ([-0.1, 0.3], r"\[0, 1\]"),
                                          (["a"], "rates")])
def test_rauc_refuses_nonsense(rates, match):
    with pytest.raises((ValueError, TypeError), match=match):
        coverage.rauc(rates)
    with pytest.raises((ValueError, TypeError), match=match):
        coverage.rauc(rates, method="exact")


@pytest.mark.parametrize("s, n", [(3, 10.5), (3, np.inf), (2.5, 10), (3, [10, 11.2]), (np.nan, 10), (3, True)])
def test_clopper_pearson_refuses_non_integer_counts(s, n):
    with pytest.raises((ValueError, TypeError), match="n|successes"):
        certify.clopper_pearson(s, n)


def test_clopper_pearson_accepts_whole_floats():
    assert certify.clopper_pearson(3, 10.0) == certify.clopper_pearson(3, 10)


# ============================================================================ data safety
def test_overwrite_refuses_a_directory_that_is_not_a_pool(tmp_path):
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "chapter1.tex").write_text("years of work")
    with pytest.raises(ValueError, match="not an oraclegap pool directory"):
        Pool(np.ones((2, 2, 2), bool)).save(thesis, overwrite=True)
    assert (thesis / "chapter1.tex").read_text() == "years of work"
    f = tmp_path / "notes.txt"
    f.write_text("x")
    with pytest.raises(ValueError, match="not an oraclegap pool directory"):
        Pool(np.ones((2, 2, 2), bool)).save(f, overwrite=True)
    assert f.read_text() == "x"


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_interrupted_swap_is_recovered_on_load_and_stale_dirs_are_cleaned(tmp_path):
    a = Pool(np.zeros((3, 2, 2), bool))
    b = Pool(np.ones((3, 2, 2), bool))
    path = tmp_path / "pool"
    pid = _dead_pid()
    # state after a kill between the renames: old pool moved aside, finished new pool beside it
    a.save(tmp_path / f".pool.old-{pid}-beef")
    b.save(tmp_path / f".pool.new-{pid}-beef")
    np.testing.assert_array_equal(Pool.load(path).verdicts, b.verdicts)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["pool"]
    # new one unfinished (no manifest): the old one comes back
    os.rename(path, tmp_path / f".pool.old-{pid}-cafe")
    (tmp_path / f".pool.new-{pid}-cafe").mkdir()
    np.testing.assert_array_equal(Pool.load(path).verdicts, b.verdicts)
    # stale temp dirs of a killed save are removed at the next save; a live process's are kept
    (tmp_path / f".pool.new-{pid}-0001").mkdir()
    (tmp_path / f".pool.new-{os.getppid()}-0002").mkdir()
    a.save(path, overwrite=True)
    assert sorted(x.name for x in tmp_path.iterdir()) == [f".pool.new-{os.getppid()}-0002", "pool"]


def test_saved_pool_respects_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        d = Pool(np.ones((2, 2, 2), bool), answers=np.full((2, 2, 2), "a")).save(tmp_path / "p")
    finally:
        os.umask(old)
    assert stat.S_IMODE(d.stat().st_mode) == 0o755
    assert {stat.S_IMODE(f.stat().st_mode) for f in d.iterdir()} == {0o644}


def test_save_validates_again(tmp_path):
    p = Pool(np.ones((3, 2, 2), bool), prompts=["a", "b", "c"])
    p.prompts.loc[2, "id"] = "a"  # tables are mutable DataFrames
    with pytest.raises(ValueError, match="no longer passes validation.*must be unique"):
        p.save(tmp_path / "p")
    assert not (tmp_path / "p").exists() and not list(tmp_path.iterdir())


def test_answers_are_variable_length_text(tmp_path):
    n, M, k = 100, 10, 10
    ans = np.full((n, M, k), "ok", dtype=object)
    ans[3, 4, 5] = "x" * 5000
    tracemalloc.start()
    try:
        p = Pool(np.zeros((n, M, k), bool), answers=ans)
        d = p.save(tmp_path / "p")
        q = Pool.load(d)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 30_000_000, f"peak {peak / 1e6:.0f} MB: answers are being padded to a fixed width"
    assert q.answers.dtype == object and q.answers[3, 4, 5] == "x" * 5000 and (q.answers == ans).all()
    with zipfile.ZipFile(d / "arrays.npz") as z:
        assert "answers.npy" not in z.namelist()
    assert (d / "answers.parquet").stat().st_size < 100_000


def test_pools_of_format_1_still_load():
    q = Pool.load(DATA / "pool_format1")
    assert FORMAT_VERSION == 2 and json.loads((DATA / "pool_format1" / "manifest.json").read_text())["version"] == 1
    np.testing.assert_array_equal(q.verdicts, np.load(DATA / "pool_format1_verdicts.npy"))
    assert q.answers[2, 1, 4] == "answer 2.1.4!!!!" and q.answers.dtype == object
    assert q.alignment == "seed-aligned" and q.policy_names == ["x", "y", "z"] and q.meta["made_by"] == "oraclegap format 1"
    np.testing.assert_array_equal(q.cost, np.full((5, 3), 0.25))


# ============================================================================ clear errors for damaged files
def _npz(tmp_path, name="v.npz"):
    v = (np.random.default_rng(0).random((200, 3, 4)) < 0.5).astype(np.uint8)
    np.savez_compressed(tmp_path / name, V=v)
    return tmp_path / name


def test_damaged_array_files_are_named(tmp_path):
    f = _npz(tmp_path)
    raw = f.read_bytes()
    (tmp_path / "trunc.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"trunc.npz is damaged"):
        open_pool(f"{tmp_path / 'trunc.npz'}:V")
    flipped = bytearray(raw)
    flipped[len(raw) // 3] ^= 0x55
    (tmp_path / "flip.npz").write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match=r"flip.npz is damaged"):
        open_pool(f"{tmp_path / 'flip.npz'}:V")
    np.save(tmp_path / "ok.npy", np.ones((3, 2, 2), np.uint8))
    raw = (tmp_path / "ok.npy").read_bytes()
    (tmp_path / "bad.npy").write_bytes(raw[:60])
    with pytest.raises(ValueError, match=r"bad.npy is damaged") as e:
        open_pool(str(tmp_path / "bad.npy"))
    assert "object" not in str(e.value)
    (tmp_path / "junk.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(ValueError, match=r"junk.npy is damaged"):
        open_pool(str(tmp_path / "junk.npy"))


def test_flipped_byte_in_a_format_1_pool_is_reported_as_damage(tmp_path):
    import shutil

    d = tmp_path / "old"
    shutil.copytree(DATA / "pool_format1", d)
    raw = bytearray((d / "arrays.npz").read_bytes())
    raw[200] ^= 0xFF
    (d / "arrays.npz").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"arrays.npz is damaged"):
        Pool.load(d)


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
