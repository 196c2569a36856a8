"""Thresholds tau: a tiny tau needs one success, threshold keys are exact in JSON and repeats
are refused (library and CLI)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from oraclegap.pool import Pool
from oraclegap.stats import certify, coverage, nulls


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
