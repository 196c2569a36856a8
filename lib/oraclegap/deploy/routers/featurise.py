"""Featurisations shared between router fits: each computed once per (settings, texts) among the
last few and handed out as a copy, and one neighbour search per split under
``shared_neighbours``.

Several families read the same featurisation of the same calibration (or test) texts: the two
000 presets fit the same word 1-2-gram TF-IDF, the boosted families the same handcrafted prompt
statistics, and every fit of one split (one evaluate_routers call, or several thresholds of one
pool) sees the same texts again. Each is a deterministic function of the texts and its settings,
so the fits get the very arrays a fresh computation gives, at a fraction of the cost.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import threading

import pandas as pd

from ..features import RouterInputs, handcrafted_features

__all__ = ["shared_neighbours"]


_SHARED: collections.OrderedDict = collections.OrderedDict()
_SHARED_SIZE = 8
_SHARED_LOCK = threading.Lock()


def _texts_digest(texts) -> str:
    h = hashlib.blake2b(digest_size=20)
    for t in texts:
        b = str(t).encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def _shared(key, compute):
    """``compute()`` once per ``key`` among the last :data:`_SHARED_SIZE` keys (thread-safe; a race
    computes twice, never mixes)."""
    with _SHARED_LOCK:
        hit = _SHARED.get(key)
        if hit is not None:
            _SHARED.move_to_end(key)
            return hit
    val = compute()
    with _SHARED_LOCK:
        _SHARED[key] = val
        while len(_SHARED) > _SHARED_SIZE:
            _SHARED.popitem(last=False)
    return val


def _handcrafted(texts) -> pd.DataFrame:
    """:func:`handcrafted_features` of ``texts``, shared (a copy per caller)."""
    return _shared(("handcrafted", _texts_digest(texts)), lambda: handcrafted_features(texts)).copy()


def _tfidf_fit(texts, **params):
    """A ``TfidfVectorizer(**params)`` fitted on ``texts`` and its matrix of them, shared between
    the fits that ask for the same settings on the same texts (the vectorizer is read-only after
    fitting; the matrix is a copy per caller)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    def fit():
        vec = TfidfVectorizer(**params)
        return vec, vec.fit_transform(texts)

    key = ("tfidf-fit", tuple(sorted((k, repr(v)) for k, v in params.items())), _texts_digest(texts))
    vec, Z = _shared(key, fit)
    return vec, Z.copy()


_NEIGHBOURS = threading.local()


@contextlib.contextmanager
def shared_neighbours():
    """Inside this block, k-NN routers (:class:`TfidfKNN`, :class:`EmbedKNN`, ...) fitted on the
    *same* calibration feature object and asked about the *same* query object (identity, not
    equality) reuse the first one's neighbour search. The neighbours depend on the feature space,
    the reference sample and k only, never on the targets, so a caller that fits many k-NN
    routers on one split with different targets or member subsets (the pool sweep: one fold,
    hundreds of sub-pools) gets the same utilities with one search per split. The caller promises
    not to modify those arrays inside the block; the memo ends with it."""
    prev = getattr(_NEIGHBOURS, "memo", None)
    _NEIGHBOURS.memo = {}
    try:
        yield
    finally:
        _NEIGHBOURS.memo = prev


def _tfidf_transform(vec, texts):
    """``vec.transform(texts)``, shared between the routers holding the same fitted vectorizer."""
    key = ("tfidf-transform", id(vec), _texts_digest(texts))
    hit = _shared(key, lambda: (vec, vec.transform(texts)))
    if hit[0] is not vec:  # pragma: no cover - an id reused after its vectorizer left the memo
        return vec.transform(texts)
    return hit[1].copy()


def _feature_matrix(X: RouterInputs) -> pd.DataFrame:
    """The handcrafted statistics of the prompt text (shared) beside the pool's declared feature
    columns (prefixed ``feat:``)."""
    parts = []
    if X.has("text"):
        parts.append(_handcrafted(X.text))
    if X.features is not None:
        parts.append(X.features.add_prefix("feat:"))
    return pd.concat(parts, axis=1)
