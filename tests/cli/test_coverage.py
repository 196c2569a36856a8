"""The CLI's coverage command on every POOL form, JSON output and errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from oraclegap import cli
from oraclegap.pool import Pool
from oraclegap.stats import coverage as cov


@pytest.fixture()
def verdicts():
    rng = np.random.default_rng(11)
    return rng.random((30, 3, 8)) < rng.beta(0.5, 0.5, (30, 1, 1))


def run_json(capsys, argv):
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


def check_payload(out, v, taus):
    tab = cov.coverage(v, taus)
    for a, tau in enumerate(taus):
        row = out["taus"][repr(float(tau))]  # exact, round-trippable keys
        for key in ("oracle", "best", "mixture", "D", "L", "oracle_minus_mixture"):
            assert key in row
        assert np.isclose(row["oracle"], tab.oracle[a]) and np.isclose(row["L"], tab.L[a])
        assert np.isclose(row["oracle_minus_mixture"], row["oracle"] - row["mixture"])


def test_npy_npz_dir_csv(tmp_path, capsys, verdicts):
    np.save(tmp_path / "v.npy", verdicts.astype(np.uint8))
    check_payload(run_json(capsys, ["coverage", str(tmp_path / "v.npy"), "--taus", "0.05,0.1", "--json"]), verdicts, [0.05, 0.1])
    np.savez(tmp_path / "v.npz", V=verdicts.astype(np.int8))
    check_payload(run_json(capsys, ["coverage", f"{tmp_path / 'v.npz'}:V", "--taus", "0.2", "--json"]), verdicts, [0.2])
    Pool.from_array(verdicts).save(tmp_path / "pool")
    check_payload(run_json(capsys, ["coverage", str(tmp_path / "pool"), "--taus", "0.3", "--json"]), verdicts, [0.3])
    wide = pd.DataFrame(verdicts[:, :, 0].astype(int), columns=["a", "b", "c"])
    wide.insert(0, "id", [f"i{i}" for i in range(len(wide))])
    wide.to_csv(tmp_path / "w.csv", index=False)
    out = run_json(capsys, ["coverage", str(tmp_path / "w.csv"), "--taus", "1.0", "--json"])
    check_payload(out, verdicts[:, :, :1], [1.0])
    assert out["pool"]["policies"] == ["a", "b", "c"]


def test_table_output_and_errors(tmp_path, capsys, verdicts):
    np.save(tmp_path / "v.npy", verdicts)
    assert cli.main(["coverage", str(tmp_path / "v.npy")]) == 0
    assert "oracle" in capsys.readouterr().out
    assert cli.main(["coverage", str(tmp_path / "nope.npy")]) == 2
    assert "neither an existing path" in capsys.readouterr().err
    np.save(tmp_path / "o.npy", np.array([object()], dtype=object), allow_pickle=True)
    assert cli.main(["coverage", str(tmp_path / "o.npy")]) == 2
    assert "never unpickled" in capsys.readouterr().err
    np.savez(tmp_path / "z.npz", V=verdicts)
    assert cli.main(["coverage", f"{tmp_path / 'z.npz'}:W"]) == 2
    assert "no array 'W'" in capsys.readouterr().err
    assert cli.main(["coverage", str(tmp_path / "v.npy"), "--taus", "1.5"]) == 2


def test_console_script_entry_point(tmp_path, verdicts):
    np.save(tmp_path / "v.npy", verdicts)
    res = subprocess.run([sys.executable, "-m", "oraclegap.cli", "coverage", str(tmp_path / "v.npy"), "--json"],
                         capture_output=True, text=True, check=True)
    assert "0.05" in json.loads(res.stdout)["taus"]
