"""The distance of a sampler from an exact law (nulls.sampler_tv) tells exact sampling from a
wrong law."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_hypergeom

from oraclegap.stats import nulls


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
