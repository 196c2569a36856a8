"""The studies' tools (stats.studies): Wilson intervals of Monte Carlo rates, reconciling two
estimates, settings sweeps, and the power of the family certificate (Theorem 6 on
simulated test sets)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from oraclegap.stats import simulate, studies


def test_rate_interval_is_wilson_and_checks_input():
    lo, hi = studies.rate_interval(np.array([0, 5, 10]), 10)
    assert lo[0] == 0 and hi[2] == 1 and lo[1] < 0.5 < hi[1]
    # Wilson interval for 5/10 (closed form)
    z = 1.959963984540054
    centre, half = (0.5 + z**2 / 20) / (1 + z**2 / 10), z * np.sqrt(0.25 / 10 + z**2 / 400) / (1 + z**2 / 10)
    assert lo[1] == pytest.approx(centre - half) and hi[1] == pytest.approx(centre + half)
    with pytest.raises(ValueError):
        studies.rate_interval(11, 10)


def test_compare_rates_agrees_and_disagrees():
    same = studies.compare_rates(20, 40, 22, 40)
    assert same["p_equal"] > 0.5 and same["pooled"] == pytest.approx(42 / 80) and same["pooled_lo"] < same["pooled"] < same["pooled_hi"]
    far = studies.compare_rates(0, 40, 30, 40)
    assert far["p_equal"] < 1e-6
    with pytest.raises(ValueError, match="0 <= x <= n"):
        studies.compare_rates(5, 4, 1, 4)


def test_sweep_stacks_settings_with_intervals_and_errors():
    base = simulate.exchangeable(60, 3, 8, seed=1).pool
    grid = [{"delta": 0.0}, {"delta": 0.25}]
    out = studies.sweep(grid, lambda delta: (lambda r: simulate.plant(base, delta, seed=r)), 6, seed=3, taus=(0.10,),
                        nulls=("redeal",), n_draws=50)
    assert list(out["delta"]) == [0.0, 0.25] and set(out["null"]) == {"redeal"}
    assert {"reject_rate", "ci_lo", "ci_hi", "excess_se", "observed_se", "rejections", "reps"} <= set(out.columns)
    assert (out["ci_lo"] <= out["reject_rate"]).all() and (out["reject_rate"] <= out["ci_hi"]).all()
    assert (out["reps"] == 6).all() and (out["excess_se"] >= 0).all()
    # same seed, same numbers
    again = studies.sweep(grid, lambda delta: (lambda r: simulate.plant(base, delta, seed=r)), 6, seed=3, taus=(0.10,),
                          nulls=("redeal",), n_draws=50)
    pd.testing.assert_frame_equal(out, again)
    with pytest.raises(ValueError, match="same keys"):
        studies.sweep([{"a": 1}, {"b": 2}], lambda **kw: None, 1)
    with pytest.raises(ValueError, match="empty"):
        studies.sweep([], lambda **kw: None, 1)


def _theorem6_certifies(p, rule, alpha, seed):
    """One simulated test set as family_power draws it (all N prompts, seed ``seed``), certified
    by the library's Theorem 6 on the family of the constants and the rule: G_Pi's lower limit
    above zero."""
    from oraclegap.stats import certify

    rng = np.random.default_rng(seed)
    X = (rng.random((1, *p.shape), dtype=np.float32) < p)[0]
    return certify.family_certificate(X, rule, alpha).G.lo > 0


def test_family_power_is_theorem6_on_simulated_test_sets():
    from oraclegap.stats import studies

    rng = np.random.default_rng(4)
    N, K = 80, 3
    p = rng.uniform(0.2, 0.5, (N, K))
    rule = rng.integers(0, K, N)
    p[np.arange(N), rule] = 0.85  # the rule knows each prompt's strong member
    # one test set per seed: the power is Theorem 6's verdict on that set (L = K + 1: the family
    # is the constants and the rule, so family_certificate spends the same budget)
    verdicts = [studies.family_power(p, rule, N, L=K + 1, reps=1, seed=s) for s in range(20)]
    assert verdicts == [float(_theorem6_certifies(p, rule, 0.05, s)) for s in range(20)]
    assert 0 < sum(verdicts) < len(verdicts)  # both verdicts occur, so the match means something


def test_family_power_grows_with_n_and_keeps_its_level_without_a_gain():
    from oraclegap.stats import studies

    rng = np.random.default_rng(5)
    N, K = 200, 4
    p = rng.uniform(0.3, 0.6, (N, K))
    rule = rng.integers(0, K, N)
    p[np.arange(N), rule] += 0.3
    power = [studies.family_power(p, rule, n, L=K + 3, reps=400, seed=1) for n in (100, 200, 800)]
    assert power[0] < power[1] < power[2] and power[2] > 0.9
    # every member equally good everywhere: the gain is 0 and a certificate is a false one, at
    # most alpha of the time (Theorem 6's guarantee; the Monte Carlo error of 2000 reps is 0.005)
    flat = np.full((N, K), 0.5)
    assert studies.family_power(flat, rule, 300, L=K + 1, reps=2000, seed=2) <= 0.05
    # the same seed gives the same share
    assert studies.family_power(p, rule, 100, L=K + 3, reps=50, seed=3) == \
        studies.family_power(p, rule, 100, L=K + 3, reps=50, seed=3)


@pytest.mark.parametrize("kw, match", [
    ({"p": np.full((4, 2), 1.5)}, "probabilities"),
    ({"rule": np.array([0, 1, 2, 0])}, "rule must be"),
    ({"rule": np.array([0.0, 1.0, 0.0, 1.0])}, "rule must be"),
    ({"n": 0}, "n"),
    ({"L": 2}, "L"),
    ({"alpha": 1.5}, "alpha"),
])
def test_family_power_refuses_bad_input(kw, match):
    from oraclegap.stats import studies

    args = {"p": np.full((4, 2), 0.5), "rule": np.array([0, 1, 0, 1]), "n": 4, "L": 3} | kw
    with pytest.raises(ValueError, match=match):
        studies.family_power(args.pop("p"), args.pop("rule"), args.pop("n"), **args)
