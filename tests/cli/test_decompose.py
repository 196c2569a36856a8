"""``oraclegap decompose``: table and JSON output, --baseline files, errors, the released tensors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from oraclegap.stats import noise

KEYS = ("best_single", "o_repro", "o_exp", "delta", "gap", "noise_share")


@pytest.fixture
def pool_dir(make_pool):
    return make_pool(80, 4, 6, seed=0, sim="beta", a=0.7, policies=["a", "b", "c", "d"])


def test_json_matches_library(run_cli, pool_dir):
    path, pool = pool_dir
    rc, out, _ = run_cli("decompose", path, "--json", "--n-boot", "300", "--seed", "4")
    assert rc == 0
    payload = json.loads(out)
    d = noise.decomposition(pool, n_boot=300, seed=4)
    for q in KEYS:
        assert payload[q] == pytest.approx(d.value(q))
        assert payload["intervals"][q]["lo"] == pytest.approx(d[q].lo) and payload["intervals"][q]["hi"] == pytest.approx(d[q].hi)
    assert set(payload) >= {"split_draw", "frechet", "strata", "k_sweep", "pool_size_sweep", "best_of_k", "baselines"}
    assert payload["split_draw"]["o_repro_split_loo"] <= payload["o_repro"] + 1e-12
    assert payload["frechet"]["lower"] <= payload["frechet"]["o_exp"] <= payload["frechet"]["upper"]
    assert {"rate", "draw"} == set(payload["strata"]) and {"random", "first"} == set(payload["k_sweep"])


def test_table_output(run_cli, pool_dir):
    rc, out, _ = run_cli("decompose", pool_dir[0], "--n-boot", "100")
    assert rc == 0 and "noise_share" in out and "bracket" in out and "percentile" in out


def test_baseline_files(run_cli, tmp_path, pool_dir):
    path, pool = pool_dir
    ch = np.arange(80) % 4
    np.save(tmp_path / "ch.npy", ch)
    (tmp_path / "names.txt").write_text("\n".join(pool.policy_names[c] for c in ch))
    scores = pool.rates()[np.arange(80), ch]
    (tmp_path / "scores.txt").write_text("\n".join(f"{s:.6f}" for s in scores))
    want = noise.decomposition(pool, baseline=ch, n_boot=200).value("noise_share")
    for f in ("ch.npy", "names.txt", "scores.txt"):
        rc, out, err = run_cli("decompose", path, "--baseline", tmp_path / f, "--json", "--n-boot", "200")
        assert rc == 0, err
        payload = json.loads(out)
        assert payload["noise_share"] == pytest.approx(want, abs=1e-5)
        assert len(payload["baselines"]) == 2 and payload["baselines"][0]["delta"] == payload["baselines"][1]["delta"]
    (tmp_path / "zeroone.txt").write_text("\n".join(str(c % 2) for c in ch))
    rc, _, err = run_cli("decompose", path, "--baseline", tmp_path / "zeroone.txt")
    assert rc == 2 and "--baseline-kind" in err and len(err.strip().splitlines()) == 1
    rc, out, _ = run_cli("decompose", path, "--baseline", tmp_path / "zeroone.txt", "--baseline-kind", "choices", "--json", "--n-boot", "50")
    assert rc == 0 and json.loads(out)["pool"]["baseline"].endswith("zeroone.txt")


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--baseline", "missing.npy"], "neither 'best' nor an existing file"),
        (["--n-boot", "0"], "--n-boot"),
        (["--alpha", "2"], "--alpha"),
    ],
)
def test_errors(run_cli, pool_dir, extra, match):
    rc, _, err = run_cli("decompose", pool_dir[0], *extra)
    assert rc == 2 and match in err and "Traceback" not in err


def test_k1_pool_and_wrong_length(run_cli, tmp_path, pool_dir):
    np.save(tmp_path / "k1.npy", np.random.default_rng(0).random((20, 3)) < 0.5)
    rc, _, err = run_cli("decompose", tmp_path / "k1.npy")
    assert rc == 2 and "k >= 2" in err
    np.save(tmp_path / "short.npy", np.zeros(5, dtype=int))
    rc, _, err = run_cli("decompose", pool_dir[0], "--baseline", tmp_path / "short.npy")
    assert rc == 2 and "one value per prompt" in err


CHEN = "chen2026_routing_oracle_k30"


@pytest.mark.external
def test_released_tensors_via_cli(run_cli, external_dir):
    if not (external_dir / CHEN / "math500" / "correctness_slim.npz").exists():
        pytest.skip(f"{external_dir / CHEN} is absent")
    rc, out, _ = run_cli("decompose", "chen2026-math500", "--json", "--n-boot", "500")
    m = json.loads(out)
    assert rc == 0
    for q, want in zip(("best_single", "o_repro", "o_exp", "noise_share"), (0.773, 0.837, 0.873, 0.361), strict=True):
        assert abs(m[q] - want) <= 0.002, (q, m[q])
    for bench, want in (("humanevalplus", 0.123), ("gpqa", 0.131)):
        rc, out, _ = run_cli("decompose", f"chen2026-{bench}", "--json", "--n-boot", "200")
        assert rc == 0 and abs(json.loads(out)["noise_share"] - want) <= 0.002
    q = external_dir / CHEN / "humanevalplus" / "correctness_slim.npz"
    rc, out, _ = run_cli("decompose", "chen2026-humanevalplus", "--baseline", f"{q}:q_router", "--json", "--n-boot", "200")
    h = json.loads(out)
    best, knn = h["baselines"]
    assert rc == 0 and best["delta"] == knn["delta"] and knn["noise_share"] < best["noise_share"]
