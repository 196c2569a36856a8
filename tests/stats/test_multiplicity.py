"""stats.multiplicity: the one Holm and the one Benjamini-Hochberg of the library, against
statsmodels and hand-computed families; every caller uses them."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from oraclegap import audit
from oraclegap.deploy import evaluate
from oraclegap.stats import certify, multiplicity

# a hand example: sorted 0.005, 0.01, 0.03, 0.04 (m = 4)
HAND_P = [0.01, 0.04, 0.03, 0.005]
# Holm: 4 * 0.005 = 0.02, 3 * 0.01 = 0.03, 2 * 0.03 = 0.06, 1 * 0.04 = 0.04 -> running max 0.02, 0.03, 0.06, 0.06
HAND_HOLM = [0.03, 0.06, 0.06, 0.02]
# BH: m p_(j) / j = 0.02, 0.02, 0.04, 0.04 -> running min from the largest: 0.02, 0.02, 0.04, 0.04
HAND_BH = [0.02, 0.04, 0.04, 0.02]


def _families(seed=0):
    rng = np.random.default_rng(seed)
    for m in (1, 2, 3, 5, 17, 100):
        p = rng.uniform(0, 0.3, m) ** rng.uniform(0.5, 2)
        p[: m // 3] = p[0]  # ties
        if m > 3:
            p[-1] = 1.0
            p[-2] = 0.0
        yield p


def test_holm_hand_example():
    np.testing.assert_allclose(multiplicity.holm(HAND_P), HAND_HOLM, rtol=0, atol=1e-15)


def test_bh_hand_example():
    reject, adj = multiplicity.benjamini_hochberg_adjust(HAND_P, 0.05)
    np.testing.assert_allclose(adj, HAND_BH, rtol=0, atol=1e-15)
    assert reject.tolist() == [True, True, True, True]
    reject, _ = multiplicity.benjamini_hochberg_adjust(HAND_P, 0.03)
    assert reject.tolist() == [True, False, False, True]


def test_holm_equals_statsmodels():
    for p in _families():
        want = multipletests(p, method="holm")[1]
        np.testing.assert_allclose(multiplicity.holm(p), want, rtol=0, atol=1e-15)


def test_bh_equals_statsmodels():
    for p in _families(1):
        for alpha in (0.05, 0.2):
            r, adj, _, _ = multipletests(p, alpha=alpha, method="fdr_bh")
            got_r, got_adj = multiplicity.benjamini_hochberg_adjust(p, alpha)
            np.testing.assert_allclose(got_adj, adj, rtol=0, atol=1e-15)
            assert got_r.tolist() == list(r)


def test_holm_properties():
    for p in _families(2):
        adj = multiplicity.holm(p)
        assert (adj >= p - 1e-15).all() and (adj <= 1).all()
        order = np.argsort(p, kind="stable")
        assert (np.diff(adj[order]) >= -1e-15).all()  # monotone in the raw p
        assert adj.min() == pytest.approx(min(1.0, p.size * p.min()))  # the smallest is Bonferroni's


def test_holm_controls_the_family_wise_error():
    # ten true nulls with uniform p: P(any adjusted p <= 0.05) <= 0.05 (Holm is exact for
    # independent tests at the first step: 1 - 0.995^10 = 0.0489)
    rng = np.random.default_rng(3)
    hits = sum(bool((multiplicity.holm(rng.uniform(size=10)) <= 0.05).any()) for _ in range(4000))
    assert hits / 4000 <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 4000)


def test_missing_p_values_are_not_tests():
    p = np.array([0.01, np.nan, 0.04, 0.03, np.nan, 0.005])
    adj = multiplicity.holm(p)
    assert np.isnan(adj[[1, 4]]).all()
    np.testing.assert_allclose(adj[[0, 2, 3, 5]], HAND_HOLM, rtol=0, atol=1e-15)
    reject, badj = multiplicity.benjamini_hochberg_adjust(p)
    assert not reject[[1, 4]].any() and np.isnan(badj[[1, 4]]).all()
    np.testing.assert_allclose(badj[[0, 2, 3, 5]], HAND_BH, rtol=0, atol=1e-15)
    assert np.isnan(multiplicity.holm([np.nan, np.nan])).all()
    assert multiplicity.holm([]).size == 0
    assert multiplicity.benjamini_hochberg_adjust([])[1].size == 0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match=r"p must hold p-values in \[0, 1\]"):
        multiplicity.holm([0.1, 1.5])
    with pytest.raises(ValueError, match=r"p must hold p-values in \[0, 1\]"):
        multiplicity.benjamini_hochberg_adjust([-0.1, 0.5])
    with pytest.raises(ValueError, match="one-dimensional"):
        multiplicity.holm(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="sequence of p-values"):
        multiplicity.holm(["a", "b"])
    with pytest.raises(ValueError, match="alpha"):
        multiplicity.benjamini_hochberg_adjust([0.1], alpha=1.5)


def test_every_caller_uses_the_shared_adjustments():
    assert audit._holm is multiplicity.holm
    assert evaluate.holm is multiplicity.holm
    rng = np.random.default_rng(4)
    base = rng.random(300) < 0.5
    pols = rng.random((300, 4)) < np.array([0.5, 0.55, 0.6, 0.45])
    df = certify.paired_family(pols, base, n_boot=200, seed=0)
    np.testing.assert_allclose(df["p_holm"], multiplicity.holm(df["p_mcnemar"].to_numpy()), rtol=0, atol=0)
    np.testing.assert_allclose(df["p_holm"], multipletests(df["p_mcnemar"].to_numpy(), method="holm")[1],
                               rtol=0, atol=1e-15)
    bh = multiplicity.benjamini_hochberg(HAND_P, alpha=0.05)
    np.testing.assert_allclose(bh.p_adjusted, HAND_BH, rtol=0, atol=1e-15)
