"""Nearest-neighbour router families: the mean target of the calibration prompts with the largest
cosine similarity, on TF-IDF of the text or on the embedding, with the blocked exact neighbour
search they share (``cosine_topk``)."""

from __future__ import annotations

import copy

import numpy as np

from .base import Router, _seed, check_targets
from .featurise import _NEIGHBOURS, _tfidf_fit, _tfidf_transform

__all__ = ["cosine_topk", "TfidfKNN", "EmbedKNN"]


class _KNNMean(Router):
    """Mean target of the ``n_neighbors`` reference prompts with the largest cosine similarity.

    The reference prompts are the calibration prompts (exact k-NN, the default:
    ``max_reference=None``). Exact neighbours cost O(queries x calibration prompts) by nature --
    each query is compared with every calibration row -- so the cost grows as n^2 when both
    halves of a pool grow. With ``max_reference=R`` the reference set is part of the router's
    definition: when the calibration split holds more than R prompts, the neighbours are
    searched among R of them drawn uniformly without replacement (``random_state``; the feature
    space, e.g. TF-IDF, is still fitted on every calibration prompt), which makes fit and
    predict linear in the number of prompts at a fixed R; with R or fewer calibration prompts the
    router is the exact one, neighbour for neighbour.
    """

    def __init__(self, n_neighbors: int = 15, max_reference: int | None = None, random_state=0):
        self.n_neighbors = n_neighbors
        self.max_reference = max_reference
        self.random_state = random_state

    def _space(self, X, fit: bool):  # pragma: no cover - overridden
        raise NotImplementedError

    def _fit(self, X, Y):
        from sklearn.preprocessing import normalize

        Z = self._space(X, fit=True)
        space, subsampled = Z, False
        self.n_cal_ = int(Z.shape[0])
        R = self.max_reference
        if R is not None:
            if isinstance(R, bool) or not isinstance(R, (int, np.integer)) or R < 1:
                raise ValueError(f"max_reference must be None or a positive integer, got {R!r}")
            if Z.shape[0] > R:
                keep = np.sort(np.random.default_rng(_seed(self.random_state)).choice(Z.shape[0], int(R), replace=False))
                Z, Y = Z[keep], Y[keep]
                self.keep_, subsampled = keep, True
        self.k_ = int(min(self.n_neighbors, Z.shape[0]))
        self.Z_ = normalize(Z)  # unit rows (zero rows stay zero), as sklearn's cosine distance uses them
        self.Y_ = Y
        self.neighbour_cache_: dict = {}
        # under shared_neighbours: the calibration space object, when every row of it is a reference
        shared = getattr(_NEIGHBOURS, "memo", None) is not None and not subsampled
        self.space_ref_ = space if shared else None

    def with_targets(self, Y) -> _KNNMean:
        """This fitted router with other per-policy targets ``Y`` float[n_cal, M] for the same
        calibration prompts: the reference rows, the feature space and the cached neighbours are
        shared, so predicting the same inputs again reuses the neighbour search. The result equals
        ``clone(self).fit(X_cal, Y)`` (the fit of the features and the reference sample do not
        depend on the targets) without repeating it."""
        self._fitted()
        if hasattr(self, "cost_") and self.cost_ is not None:
            raise ValueError("with_targets is for routers fitted without costs; refit with cost=... instead")
        T = check_targets(Y, self.n_cal_)
        keep = getattr(self, "keep_", None)
        if T.shape[1] != self.n_policies_:
            raise ValueError(f"Y must have {self.n_policies_} columns (the members), got {T.shape[1]}")
        new = copy.copy(self)
        new.means_ = T.mean(axis=0)
        new.rank_ = new._tie_order(new.means_)
        new.Y_ = T if keep is None else T[keep]
        return new

    def _utility(self, X):
        if len(X) == 0:
            return np.zeros((0, self.n_policies_))
        hit = self.neighbour_cache_.get(id(X))
        if hit is not None and hit[0] is X:  # the same inputs object (held here, so its id is not reused)
            idx = hit[1]
        else:
            Q = self._space(X, fit=False)
            memo: dict | None = getattr(_NEIGHBOURS, "memo", None)
            ref = getattr(self, "space_ref_", None)
            key = (type(self).__name__, id(ref), id(Q), self.k_)
            shared = None if memo is None or ref is None else memo.get(key)
            if shared is not None and shared[0] is ref and shared[1] is Q:  # held in the memo: ids not reused
                idx = shared[2]
            else:
                idx = cosine_topk(Q, self.Z_, self.k_)
                if memo is not None and ref is not None:
                    memo[key] = (ref, Q, idx)
            self.neighbour_cache_.clear()
            self.neighbour_cache_[id(X)] = (X, idx)
        return self.Y_[idx].mean(axis=1)


#: Cells (query rows x calibration rows) of one block of cosine distances in :func:`cosine_topk`.
_TOPK_CELLS = 1 << 22


def cosine_topk(Q, Zn, k: int) -> np.ndarray:
    """Indices int64 [len(Q), k] of the ``k`` rows of ``Zn`` (unit rows, dense or sparse) nearest
    to each row of ``Q`` in cosine distance, nearest first.

    The distances are sklearn's cosine distances (1 - the dot product of unit rows, clipped to
    [0, 2]), computed block by block as one matrix product per block of query rows (about
    ``_TOPK_CELLS`` distances at a time, so memory stays bounded), with a partial sort per row:
    the same distances and the same selection (``argpartition`` then ``argsort`` per row) as
    brute-force ``NearestNeighbors(metric="cosine")``, hence the same neighbours, ties included,
    without its per-block overhead.
    """
    import scipy.sparse as sp
    from sklearn.preprocessing import normalize

    Qn = normalize(Q)
    n_cal = Zn.shape[0]
    k = int(k)
    out = np.empty((Qn.shape[0], k), np.int64)
    per = max(1, _TOPK_CELLS // max(1, n_cal))
    ZT = Zn.T
    for i0 in range(0, Qn.shape[0], per):
        i1 = min(Qn.shape[0], i0 + per)
        S = Qn[i0:i1] @ ZT
        S = S.toarray() if sp.issparse(S) else np.asarray(S)
        D = 1.0 - S
        np.clip(D, 0.0, 2.0, out=D)
        # sklearn's brute-force selection on the same distances: a partial sort, then the k sorted
        idx = np.argpartition(D, k - 1, axis=1)[:, :k] if k < n_cal else np.broadcast_to(np.arange(n_cal), D.shape)
        order = np.argsort(np.take_along_axis(D, idx, axis=1), axis=1)
        out[i0:i1] = np.take_along_axis(idx, order, axis=1)
    return out


class TfidfKNN(_KNNMean):
    """TF-IDF (fitted on calibration text) cosine 15-nearest-neighbour mean targets (000's
    nearest-neighbour text router)."""

    needs = ("text",)
    family = "tfidf_knn"
    label = "TF-IDF 15-NN"
    description = "each member's mean success on the 15 calibration prompts nearest in TF-IDF (cosine)"

    def _space(self, X, fit):
        if fit:
            self.vectorizer_, Z = _tfidf_fit(X.text, ngram_range=(1, 1), sublinear_tf=True)
            return Z
        return _tfidf_transform(self.vectorizer_, X.text)


class EmbedKNN(_KNNMean):
    """Embedding cosine 15-nearest-neighbour mean targets (000's embedding NN router; 002's k-NN)."""

    needs = ("embeddings",)
    family = "embed_knn"
    label = "embedding 15-NN"
    description = "each member's mean success on the 15 calibration prompts nearest in the embedding (cosine)"

    def _space(self, X, fit):
        return X.embeddings
