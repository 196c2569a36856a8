"""Numeric helpers refuse nonsense: rAUC of rates outside [0, 1] or NaN, Clopper-Pearson
limits of non-integer counts (whole floats are accepted)."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap.stats import certify, coverage


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
