"""The single-draw decomposition and the ladder (stats.noise): a worked example, properties,
unbiased estimators under seed-aligned and independent draws, bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from oraclegap.pool import Pool
from oraclegap.stats import noise

rates = arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 6)), elements=st.floats(0, 1))


def test_worked_example():
    d = noise.decompose_truth(np.full((1, 10), 0.1))
    assert np.isclose(d.O_exp, 1 - 0.9**10) and np.isclose(d.O_repro, 0.1)
    assert np.isclose(d.delta, 1 - 0.9**10 - 0.1)


@settings(max_examples=60, deadline=None)
@given(rates)
def test_decomposition_and_ladder_properties(p):
    d = noise.decompose_truth(p)
    assert d.delta >= -1e-12 and np.isclose(d.G, d.G_rec + d.delta)
    assert noise.best_of_k_truth(p) >= d.O_exp - 1e-12
    z = np.arange(p.shape[0]) % 3
    lad = noise.ladder_truth(p, z)
    assert lad.p_star - 1e-12 <= lad.q_Z <= lad.O_repro + 1e-12 <= lad.O_exp + 2e-12
    assert np.isclose(noise.ladder_truth(p).q_Z, lad.p_star)
    assert np.isclose(noise.ladder_truth(p, np.arange(p.shape[0])).q_Z, lad.O_repro)
    b = int(p.mean(axis=0).argmax())
    assert np.isclose(noise.rescue_probability(p, b), lad.G_out)


def test_seed_aligned_estimator_unbiased_under_dependence():
    # two perfectly anti-correlated members: one draw each, exactly one succeeds per draw
    rng = np.random.default_rng(0)
    u = rng.random((200, 1, 40)) < 0.5
    v = np.concatenate([u, ~u], axis=1)
    pool = Pool.from_array(v, alignment="seed-aligned")
    sa = noise.decompose(pool)
    ind = noise.decompose(pool, form="independent")
    assert sa.form == "seed-aligned" and sa.O_exp == 1.0  # the union always succeeds
    assert ind.O_exp < 0.9  # the independence form misses the dependence
    with pytest.raises(ValueError, match="needs seed-aligned draws"):
        noise.decompose(Pool.from_array(v, alignment="independent"), form="seed-aligned")


def test_independent_estimator_unbiased():
    rng = np.random.default_rng(1)
    p = rng.beta(0.5, 0.5, (300, 4))
    truth = noise.decompose_truth(p).O_exp
    est = [noise.decompose((rng.random((300, 4, 5)) < p[:, :, None]), form="independent").O_exp for _ in range(200)]
    assert abs(np.mean(est) - truth) < 4 * np.std(est) / np.sqrt(len(est)) + 1e-4


def test_noise_bad_inputs():
    with pytest.raises(ValueError, match="probabilities"):
        noise.decompose_truth(np.array([[1.5]]))
    with pytest.raises(ValueError, match="weights"):
        noise.ladder_truth(np.array([[0.5], [0.5]]), weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="form"):
        noise.decompose(np.zeros((2, 2, 2)), form="both")
