"""The ``oraclegap nulls`` subcommand: JSON layout, agreement with the library, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from oraclegap.cli import main
from oraclegap.stats import nulls, simulate


@pytest.fixture()
def pool_file(tmp_path):
    sim = simulate.exchangeable(60, 4, 8, seed=2)
    path = tmp_path / "v.npy"
    np.save(path, sim.pool.verdicts.astype(np.uint8))
    return path, sim.pool


def test_nulls_json_matches_library(pool_file, capsys):
    path, pool = pool_file
    rc = main(["nulls", str(path), "--taus", "0.1,0.2", "--n-draws", "80", "--seed", "3", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["taus"]) == {"0.1", "0.2"}
    entry = out["taus"]["0.1"]["L"]
    lib = nulls.null_tests(pool, (0.1, 0.2), n_draws=80, seed=3)
    assert entry["observed"] == pytest.approx(lib.get("L", 0.1).observed)
    for null in ("redeal", "margin"):
        t = lib.get("L", 0.1, null)
        assert entry[null]["mean"] == pytest.approx(t.mean)
        assert entry[null]["band"] == pytest.approx([t.band.lo, t.band.hi])
        assert entry[null]["p"] == pytest.approx(t.p) and entry[null]["p_lower"] == pytest.approx(t.p_lower)
        assert entry[null]["excess"] == pytest.approx(t.excess)
    assert 0 < out["chain"]["acceptance"] < 1 and "L@0.1" in out["chain"]["ess"]
    assert out["pool"]["n_prompts"] == 60 and "pass1" in out


def test_nulls_table_output_and_errors(pool_file, capsys):
    path, _ = pool_file
    assert main(["nulls", str(path), "--taus", "0.1", "--n-draws", "20", "--nulls", "redeal"]) == 0
    text = capsys.readouterr().out
    assert "redeal_mean" in text and "margin_mean" not in text
    assert main(["nulls", str(path), "--taus", "0.1", "--n-draws", "20", "--nulls", "margin"]) == 0
    assert "margin chain: heatbath moves" in capsys.readouterr().out
    assert main(["nulls", str(path), "--taus", "1.5"]) == 2
    assert "taus" in capsys.readouterr().err
    assert main(["nulls", str(path), "--nulls", "bootstrap"]) == 2
    assert "--nulls" in capsys.readouterr().err
