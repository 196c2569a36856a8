"""Degenerate nulls and the cost of a null run: a test whose null is a point mass is skipped
with its reason (library and CLI) and every run test varies; chunked kernels give the same
draws; the cost is estimated and bounded before any work, printed with progress on long
runs, and a long chain can be interrupted."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oraclegap import cli
from oraclegap.commands import nulls as nulls_cmd
from oraclegap.pool import Pool
from oraclegap.stats import nulls
from oraclegap.stats.nulls import margin_null, redeal_null


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
