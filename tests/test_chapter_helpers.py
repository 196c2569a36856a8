"""Helpers the chapters use: settings sweeps with Wilson intervals, reconciling two Monte Carlo
estimates, the distance of a sampler from an exact law, oracle cost under explicit tie rules,
human test names and the small pictures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_hypergeom

from oraclegap import report
from oraclegap.stats import certify, nulls, simulate, studies


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


def test_sampler_tv_tells_exact_sampling_from_a_wrong_law():
    rng = np.random.default_rng(0)
    support = np.array([v for v in np.ndindex(5, 5, 5) if sum(v) == 6])
    prob = multivariate_hypergeom.pmf(support, [4, 4, 4], 6)
    exact = support[rng.choice(len(support), size=4000, p=prob)]
    tv, ref = nulls.sampler_tv(exact, support, prob, seed=1)
    assert tv < 2 * ref
    uniform = support[rng.integers(0, len(support), 4000)]
    tv_u, ref_u = nulls.sampler_tv(uniform, support, prob, seed=1)
    assert tv_u > 5 * ref_u
    outside = np.full((10, 3), 9)
    assert nulls.sampler_tv(outside, support, prob)[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="sum to 1"):
        nulls.sampler_tv(exact, support, prob * 2)
    with pytest.raises(ValueError, match="shape"):
        nulls.sampler_tv(exact[:, :2], support, prob)


def test_cost_utilities_tie_rules_bracket_the_oracle_cost():
    R = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 1]], bool)
    cost = np.array([[0.9, 0.1, 0.5], [0.2, 0.3, 0.1], [0.4, 0.4, 0.8]])
    kw = dict(normalize="none")
    first = certify.cost_utilities(R, cost, [0.0], **kw)
    cheap = certify.cost_utilities(R, cost, [0.0], ties="cheapest", **kw)
    dear = certify.cost_utilities(R, cost, [0.0], ties="dearest", **kw)
    # utilities do not depend on the tie rule; the oracle's cost does
    assert first.oracle[0] == cheap.oracle[0] == dear.oracle[0]
    assert cheap.oracle_cost[0] == pytest.approx((0.1 + 0.1 + 0.8) / 3)
    assert dear.oracle_cost[0] == pytest.approx((0.9 + 0.3 + 0.8) / 3)
    assert cheap.oracle_cost[0] <= first.oracle_cost[0] <= dear.oracle_cost[0]
    # the cheapest rule is the limit lambda -> 0+
    tiny = certify.cost_utilities(R, cost, [1e-9], **kw)
    assert tiny.oracle_cost[0] == pytest.approx(cheap.oracle_cost[0])
    with pytest.raises(ValueError, match="ties"):
        certify.cost_utilities(R, cost, [0.0], ties="random", **kw)


def test_test_names_are_human():
    assert report.test_name("L", 0.1, "margin") == "oracle gap L at τ = 0.10, margin-preserving"
    assert report.test_name("rise_L_2_to_5", 0.05, "redeal") == "rise of L from 2 to 5 members at τ = 0.05, re-deal"
    assert report.test_name("mean_pairwise_corr", float("nan"), "redeal") == "mean pairwise correlation, re-deal"


def test_pictures_draw_and_validate():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2)
    report.draw_outcomes(a, np.array([[1, 0, 1], [0, 0, 0]]), row_labels=["x", "y"], row_notes=["2/3", "0/3"], group=1)
    report.draw_counts(b, np.array([[3, 1], [0, 2]]), row_labels=["i", "j"], col_labels=["a", "b"], changes=np.array([[-1, 1], [1, -1]]))
    assert len(a.patches) == 6 and len(b.patches) == 4
    with pytest.raises(ValueError):
        report.draw_outcomes(a, np.zeros(3))
    with pytest.raises(ValueError, match="labels"):
        report.draw_counts(b, np.ones((2, 2)), row_labels=["i"], col_labels=["a", "b"])
    plt.close(fig)
