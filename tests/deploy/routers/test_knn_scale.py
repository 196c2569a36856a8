"""The k-NN routers' blocked cosine top-k equals sklearn's brute-force cosine NearestNeighbors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import normalize

from oraclegap.deploy.routers import knn as routers


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


def _inputs(E):
    from oraclegap.deploy.features import RouterInputs

    return RouterInputs(embeddings=E)


def test_capped_reference_is_the_exact_router_up_to_the_cap_and_a_seeded_sample_above_it():
    rng = np.random.default_rng(5)
    E = rng.normal(size=(400, 16))
    Y = (rng.random((400, 3)) < 0.5).astype(float)
    Q = rng.normal(size=(90, 16))
    exact = routers.EmbedKNN().fit(_inputs(E), Y)
    same = routers.EmbedKNN(max_reference=400).fit(_inputs(E), Y)  # cap = calibration size: exact
    np.testing.assert_array_equal(exact.predict_utility(_inputs(Q)), same.predict_utility(_inputs(Q)))
    capped = routers.EmbedKNN(max_reference=100, random_state=3).fit(_inputs(E), Y)
    assert capped.Z_.shape[0] == 100
    keep = np.sort(np.random.default_rng(3).choice(400, 100, replace=False))
    nn = NearestNeighbors(n_neighbors=15, metric="cosine", algorithm="brute").fit(E[keep])
    ref = Y[keep][nn.kneighbors(Q, return_distance=False)].mean(axis=1)
    np.testing.assert_allclose(capped.predict_utility(_inputs(Q)), ref, rtol=0, atol=1e-12)
    assert not np.array_equal(capped.predict_utility(_inputs(Q)), exact.predict_utility(_inputs(Q)))
    again = routers.EmbedKNN(max_reference=100, random_state=3).fit(_inputs(E), Y)
    np.testing.assert_array_equal(again.predict(_inputs(Q)), capped.predict(_inputs(Q)))


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "100"])
def test_capped_reference_refuses_a_bad_cap(bad):
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match="max_reference"):
        routers.EmbedKNN(max_reference=bad).fit(_inputs(rng.normal(size=(30, 4))), rng.random((30, 2)))


@pytest.mark.parametrize("cap", [None, 60])
def test_with_targets_equals_a_fresh_fit_and_reuses_the_neighbour_search(monkeypatch, cap):
    rng = np.random.default_rng(9)
    E, Q = rng.normal(size=(200, 8)), rng.normal(size=(70, 8))
    Y1, Y2 = rng.random((200, 4)), (rng.random((200, 4)) < 0.3).astype(float)
    Xc, Xq = _inputs(E), _inputs(Q)
    r1 = routers.EmbedKNN(max_reference=cap).fit(Xc, Y1)
    r1.predict(Xq)
    calls = []
    real = routers.cosine_topk
    monkeypatch.setattr(routers, "cosine_topk", lambda *a: calls.append(1) or real(*a))
    r2 = r1.with_targets(Y2)
    fresh = routers.EmbedKNN(max_reference=cap).fit(Xc, Y2)
    np.testing.assert_array_equal(r2.predict_utility(Xq), fresh.predict_utility(Xq))
    np.testing.assert_array_equal(r2.predict(Xq), fresh.predict(Xq))
    np.testing.assert_array_equal(r2.rank_, fresh.rank_)
    assert len(calls) == 1  # the fresh router searched once (its predict reused it); r2 reused r1's search
    np.testing.assert_array_equal(r1.predict_utility(Xq), routers.EmbedKNN(max_reference=cap).fit(Xc, Y1).predict_utility(Xq))
    with pytest.raises(ValueError, match="rows"):
        r1.with_targets(Y2[:10])
