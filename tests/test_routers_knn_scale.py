"""The k-NN routers' blocked cosine top-k equals sklearn's brute-force cosine NearestNeighbors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import normalize

from oraclegap.deploy import routers


@pytest.mark.parametrize("sparse", [False, True])
def test_cosine_topk_matches_sklearn_brute_force(monkeypatch, sparse):
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(500, 24))
    Q = rng.normal(size=(130, 24))
    if sparse:
        Z[rng.random(Z.shape) < 0.7] = 0.0
        Q[rng.random(Q.shape) < 0.7] = 0.0
        Z, Q = sp.csr_matrix(Z), sp.csr_matrix(Q)
    monkeypatch.setattr(routers, "_TOPK_CELLS", 7 * 500)  # several blocks of query rows
    got = routers.cosine_topk(Q, normalize(Z), 15)
    ref = NearestNeighbors(n_neighbors=15, metric="cosine", algorithm="brute").fit(Z).kneighbors(Q, return_distance=False)
    np.testing.assert_array_equal(got, ref)


def test_cosine_topk_keeps_sklearns_choice_among_ties_and_handles_k_equal_n():
    Z = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]] * 5)
    Q = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    nn = NearestNeighbors(n_neighbors=7, metric="cosine", algorithm="brute").fit(Z)
    np.testing.assert_array_equal(routers.cosine_topk(Q, normalize(Z), 7), nn.kneighbors(Q, return_distance=False))
    full = routers.cosine_topk(Q, normalize(Z), len(Z))
    ref = NearestNeighbors(n_neighbors=len(Z), metric="cosine", algorithm="brute").fit(Z).kneighbors(Q, return_distance=False)
    np.testing.assert_array_equal(full, ref)
