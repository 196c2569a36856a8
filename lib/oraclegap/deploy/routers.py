"""Routers: rules that choose one member per prompt from what a deployed system sees before
answering (paper 000 Sec. 3.3 and App. B.2; paper 002 Sec. 3.3, App. D.5), behind one
scikit-learn-style interface.

A router is fitted on calibration prompts with **per-policy targets** ``Y`` float[n, M] -- each
member's correctness (k = 1), success rate or coverage indicator (k > 1) -- never with one
arbitrary label where several members are right. It predicts a utility per member,
``predict_utility(X)`` -> float[n, M] (an estimate of mu_m(Z) = E[R_m | Z]), and chooses

    r(i) = argmax_m  mu^_m(Z_i) - lambda * C^_m,

where C^_m is member m's mean calibration cost divided by the largest such mean (so C^ lies in
[0, 1]; lambda = 0 unless costs were given to ``fit``). Ties go to the member with the best
calibration mean (the incumbent), then to the lowest index (002 App. F). Every router is a
:class:`sklearn.base.BaseEstimator`: ``get_params``/``set_params``/``sklearn.base.clone`` work,
and :class:`EstimatorRouter` wraps any scikit-learn regressor or classifier.

Families (``FAMILIES`` lists each with the inputs it needs):

* fixed references -- calibration-selected best single member, frozen task-wise best (best
  member per dataset level on calibration), uniform random, cheapest;
* 000's five -- TF-IDF 1-2-gram multinomial logistic regression, one gradient-boosted regressor
  per member on handcrafted prompt features, TF-IDF 15-nearest-neighbour mean targets,
  embedding -> standardise -> PCA(64) -> multinomial logistic regression, embedding cosine 15-NN;
  plus the dataset-identity router (each prompt to the member trained on its dataset);
* 000's text routers as its App. B.2 states them (``PAPER000_FAMILIES``: k-NN, linear on the hard
  best-member label, boosted, validation best single; ties to the lowest member index), beside
  the stronger variants above;
* 002's K-way correctness predictors on embeddings -- multi-output logistic regression, a
  multi-output MLP, KMeans cluster-best (the embedding k-NN above is 002's k-NN too);
* mechanism adaptations (not the authors' systems): cluster-then-best over the nearest
  clusters (Avengers-style), matrix factorisation of prompt x member correctness with learned
  member vectors and a linear prompt encoder (EmbedLLM / IRT-Router-style), a tag-aware expert
  router distilled from softmax-normalised targets (Zooter-style), and a small torch encoder head
  with K correctness outputs on frozen embeddings (002's strongest router; optional);
* post-inference selectors (a different cost regime: they run every member first, reported
  apart) -- maximum confidence, calibrated confidence, plurality vote.

The multinomial routers of 000 are fitted on the *distribution* Y_i / sum_m Y_im over members
(the soft-target cross-entropy), using only prompts where the members' targets differ: a prompt
on which every member is equally good says nothing about which to pick. Evaluation lives in
:mod:`oraclegap.deploy.evaluate` (which imports this module; import its names from there).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import hashlib
import math
import re
import threading
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone, is_classifier

from .features import RouterInputs, handcrafted_features, router_inputs, simulated_router_pool

__all__ = [
    "RouterInputs",
    "router_inputs",
    "simulated_router_pool",
    "FAMILIES",
    "LABELS",
    "label",
    "PRE_ANSWER",
    "POST_INFERENCE",
    "make_router",
    "family_requirements",
    "missing_inputs",
    "choose",
    "check_targets",
    "check_cost",
    "SoftmaxRegression",
    "Router",
    "BestSingle",
    "TaskwiseBest",
    "RandomRouter",
    "Cheapest",
    "TfidfLogReg",
    "GBRFeatures",
    "TfidfKNN",
    "EmbedPCALogReg",
    "EmbedKNN",
    "DatasetIdentity",
    "MultiLogReg",
    "MLPRouter",
    "KMeansBest",
    "ClusterBest",
    "MatrixFactorization",
    "TagExpert",
    "EncoderHead",
    "EstimatorRouter",
    "MaxConfidence",
    "CalibratedConfidence",
    "PluralityVote",
    "shared_neighbours",
    "PAPER000_FAMILIES",
    "PAPER000_KEYWORDS",
    "PAPER000_TFIDF",
    "keyword_counts",
    "Paper000KNN",
    "Paper000Linear",
    "Paper000Boosted",
    "Paper000BestSingle",
]

_TIE = 1e-12
_CONTROLLER = None


# ====================================================================== featurisations shared between fits
# Several families read the same featurisation of the same calibration (or test) texts: the two
# 000 presets fit the same word 1-2-gram TF-IDF, the boosted families the same handcrafted prompt
# statistics, and every fit of one split (one evaluate_routers call, or several thresholds of one
# pool) sees the same texts again. Each is a deterministic function of the texts and its settings,
# so it is computed once per (settings, texts) among the last few and handed out as a copy: the
# fits get the very arrays they computed before, at a fraction of the cost.
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


# ====================================================================== checks and the choice rule
def check_targets(Y, n: int | None = None, name: str = "Y") -> np.ndarray:
    """Per-policy targets float[n, M] in [0, 1] with n >= 1 and M >= 2 (clear errors otherwise)."""
    try:
        T = np.asarray(Y, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a numeric array [n_prompts, n_policies] of per-policy targets") from None
    if T.ndim != 2:
        raise ValueError(f"{name} must be 2-d [n_prompts, n_policies] (one target per policy), got shape {T.shape}")
    if T.shape[0] == 0:
        raise ValueError(f"{name} has no prompts: the calibration split is empty; a router needs calibration prompts")
    if T.shape[1] < 2:
        raise ValueError(f"{name} has {T.shape[1]} policy column(s); a router needs at least two policies to choose from")
    if n is not None and T.shape[0] != n:
        raise ValueError(f"{name} has {T.shape[0]} rows but the inputs describe {n} prompts; targets must match the pool's prompts")
    if not np.isfinite(T).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    if (T < 0).any() or (T > 1).any():
        raise ValueError(f"{name} must hold correctness, success rates or coverage indicators in [0, 1]")
    return T


def check_cost(cost, n: int, M: int, name: str = "cost") -> np.ndarray:
    """Costs float[n, M] (a per-policy [M] vector is broadcast); finite and non-negative."""
    try:
        C = np.asarray(cost, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric: per-prompt-and-policy [n, M] or per-policy [M] costs") from None
    if C.shape == (M,):
        C = np.broadcast_to(C, (n, M)).copy()
    if C.shape != (n, M):
        raise ValueError(f"{name} must have shape [n_prompts={n}, n_policies={M}] or [n_policies={M}], got {C.shape}")
    if not np.isfinite(C).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    if (C < 0).any():
        raise ValueError(f"{name} must be non-negative; found {int((C < 0).sum())} negative entries")
    return C


def check_lambda(lam, name: str = "lam") -> float:
    """A cost penalty lambda as a finite float >= 0 (the lambda of U = R - lambda C)."""
    try:
        v = float(lam)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number >= 0, got {lam!r}") from None
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0 (the cost penalty in U = R - lambda C), got {lam!r}")
    return v


def choose(U, rank) -> np.ndarray:
    """argmax_m U[i, m] per row; among ties (within 1e-12) the member with the lowest ``rank``
    (rank 0 = best calibration mean), so an uninformative utility keeps the incumbent."""
    U = np.asarray(U, dtype=float)
    rank = np.asarray(rank)
    mx = U.max(axis=1, keepdims=True)
    tied = U >= mx - _TIE * (1.0 + np.abs(mx))
    return np.where(tied, rank[None, :], rank.size + 1).argmin(axis=1).astype(np.int64)


def _rank(means: np.ndarray) -> np.ndarray:
    order = np.lexsort((np.arange(means.size), -means))  # best mean first, ties by index
    rank = np.empty(means.size, dtype=np.int64)
    rank[order] = np.arange(means.size)
    return rank


@contextlib.contextmanager
def _one_thread():
    """Native thread pools (OpenMP, BLAS) limited to one thread: on a shared two-core machine
    gradient boosting and k-means spin-wait for minutes otherwise, and one thread makes every
    fit reproducible whatever the machine's thread count."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()  # scanning the loaded libraries once, not per fit
    with _CONTROLLER.limit(limits=1):
        yield


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ====================================================================== a soft-target softmax regression
class SoftmaxRegression(BaseEstimator):
    """Multinomial logistic regression on a target *distribution* T[i, :] over M classes.

    Minimises 0.5 ||W||^2 + C sum_i sum_m T_im (-log softmax(Z_i W + b)_m) by L-BFGS (intercept
    unpenalised). With one-hot T this is scikit-learn's multinomial ``LogisticRegression``
    objective; with soft T it equals fitting that estimator on rows replicated once per class with
    ``sample_weight = T_im`` (tested), at 1/M of the cost. ``Z`` may be dense or scipy-sparse.
    """

    def __init__(self, C: float = 1.0, max_iter: int = 300, tol: float = 1e-6):
        self.C = C
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, Z, T):
        """Fit W, b to features Z[n, p] and target distributions T[n, M] (rows summing to 1;
        a row's sum acts as its weight)."""
        from scipy.optimize import minimize

        T = np.asarray(T, dtype=float)
        n, M = T.shape
        p = Z.shape[1]
        C = float(self.C)

        def f(theta):
            W = theta[: p * M].reshape(p, M)
            b = theta[p * M :]
            L = np.asarray(Z @ W) + b
            L -= L.max(axis=1, keepdims=True)
            lse = np.log(np.exp(L).sum(axis=1, keepdims=True))
            logP = L - lse
            loss = 0.5 * float((W * W).sum()) - C * float((T * logP).sum())
            G = np.exp(logP) * T.sum(axis=1, keepdims=True) - T
            gW = W + C * np.asarray(Z.T @ G)
            gb = C * G.sum(axis=0)
            return loss, np.concatenate([gW.ravel(), gb])

        res = minimize(f, np.zeros(p * M + M), jac=True, method="L-BFGS-B",
                       options={"maxiter": int(self.max_iter), "gtol": float(self.tol)})
        self.coef_ = res.x[: p * M].reshape(p, M)
        self.intercept_ = res.x[p * M :]
        self.n_iter_ = int(res.nit)
        return self

    def predict_proba(self, Z) -> np.ndarray:
        """softmax(Z W + b): a distribution over the M classes per row."""
        L = np.asarray(Z @ self.coef_) + self.intercept_
        L -= L.max(axis=1, keepdims=True)
        P = np.exp(L)
        return P / P.sum(axis=1, keepdims=True)


def _choice_distribution(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows where the members' targets differ, and Y_i / sum_m Y_im on those rows."""
    informative = Y.max(axis=1) - Y.min(axis=1) > 1e-12
    T = Y[informative]
    return informative, T / T.sum(axis=1, keepdims=True)


# ====================================================================== the base class
class Router(BaseEstimator):
    """Base class: ``fit(X, Y, cost=None)``, ``predict_utility(X)``, ``predict(X, lam=0)``.

    Subclasses implement ``_fit(X, Y)`` and ``_utility(X)``; ``needs`` names the
    :class:`RouterInputs` fields they read (``"features|text"``: either). Fitted attributes
    common to all: ``n_policies_``, ``means_`` (calibration mean target per member), ``rank_``
    (tie order), ``cost_`` (normalised mean calibration cost per member or None), ``cost_scale_``.
    """

    needs: tuple = ()
    regime: str = "pre-answer"
    family: str = "router"
    label: str = "router"  # the human label, from the one registry (:data:`LABELS`)
    #: means_ -> rank_, the tie order of :func:`choose` (rank 0 first): the calibration incumbent, then index.
    _tie_order = staticmethod(_rank)

    def _check_inputs(self, X) -> RouterInputs:
        if not isinstance(X, RouterInputs):
            raise TypeError(f"X must be RouterInputs (see oraclegap.deploy.routers.router_inputs), got {type(X).__name__}")
        for need in self.needs:
            if not any(X.has(f) for f in need.split("|")):
                what = " or ".join(need.split("|"))
                raise ValueError(f"router {self.family!r} needs prompt {what}; the inputs have none (inputs: {X.source})")
        return X

    def fit(self, X, Y, cost=None):
        """Fit on calibration inputs ``X`` (n prompts) and per-policy targets ``Y`` float[n, M];
        ``cost`` [n, M] or [M] enables the cost-aware choice in :meth:`predict`."""
        X = self._check_inputs(X)
        T = check_targets(Y, len(X))
        n, M = T.shape
        self.n_policies_ = M
        self.means_ = T.mean(axis=0)
        self.rank_ = self._tie_order(self.means_)
        self.cost_: np.ndarray | None
        self.cost_scale_: float | None
        if cost is not None:
            C = check_cost(cost, n, M)
            mean_c = C.mean(axis=0)
            scale = float(mean_c.max()) if mean_c.max() > 0 else 1.0
            self.cost_, self.cost_scale_ = mean_c / scale, scale
        else:
            self.cost_, self.cost_scale_ = None, None
        with _one_thread():
            self._fit(X, T)
        return self

    def _fit(self, X, Y):  # pragma: no cover - overridden
        raise NotImplementedError

    def _utility(self, X) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def _fitted(self):
        if not hasattr(self, "n_policies_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit(X, Y) first")

    def predict_utility(self, X) -> np.ndarray:
        """Predicted utility (estimated success) float[n, M] of each member on each prompt."""
        self._fitted()
        X = self._check_inputs(X)
        with _one_thread():
            U = np.asarray(self._utility(X), dtype=float)
        if U.shape != (len(X), self.n_policies_):  # pragma: no cover - programming error
            raise RuntimeError(f"{type(self).__name__} returned utilities of shape {U.shape}")
        return U

    def predict(self, X, *, lam: float = 0.0) -> np.ndarray:
        """Chosen member per prompt int[n]: argmax_m U_m - lam * C^_m (ties: incumbent first)."""
        lam = check_lambda(lam)
        U = self.predict_utility(X)
        if lam > 0:
            if self.cost_ is None:
                raise ValueError("lam > 0 needs costs: fit the router with cost=...")
            U = U - lam * self.cost_[None, :]
        return choose(U, self.rank_)


def _tile(v: np.ndarray, n: int) -> np.ndarray:
    return np.broadcast_to(v, (n, v.size)).copy()


class _EmbedPrep:
    """Standardise the embedding and reduce it to ``n_components`` by PCA (fitted on calibration)."""

    def __init__(self, n_components: int | None, seed: int = 0):
        self.n_components = n_components
        self.seed = seed

    def fit(self, E: np.ndarray):
        from sklearn.decomposition import PCA
        from sklearn.preprocessing import StandardScaler

        self.scaler = StandardScaler().fit(E)
        Z = self.scaler.transform(E)
        d = min(E.shape[1], max(1, E.shape[0] - 1))
        self.pca = None
        if self.n_components is not None and self.n_components < d:
            self.pca = PCA(n_components=int(self.n_components), random_state=self.seed).fit(Z)
        return self

    def transform(self, E: np.ndarray) -> np.ndarray:
        Z = self.scaler.transform(E)
        return Z if self.pca is None else self.pca.transform(Z)


def _seed(random_state) -> int:
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**31 - 1))
    return int(random_state)


# ====================================================================== fixed references
class BestSingle(Router):
    """The calibration-selected best single member, used on every prompt (the deployable
    comparator of 000 App. B.2)."""

    family = "best_single"

    def _fit(self, X, Y):
        pass

    def _utility(self, X):
        return _tile(self.means_, len(X))


class TaskwiseBest(Router):
    """The frozen task-wise best (002's primary baseline): for each dataset level the member with
    the best calibration mean on that level; unseen levels get the overall best."""

    needs = ("dataset",)
    family = "taskwise_best"

    def _fit(self, X, Y):
        levels = pd.Series(X.dataset).astype(str)
        df = pd.DataFrame(Y).groupby(levels.to_numpy()).mean()
        self.levels_ = {str(k): v.to_numpy() for k, v in df.iterrows()}

    def _utility(self, X):
        return np.stack([self.levels_.get(str(z), self.means_) for z in X.dataset]) if len(X) else np.zeros((0, self.n_policies_))


class RandomRouter(Router):
    """Uniform random routing: utilities are i.i.d. U(0, 1) draws from ``random_state``, so the
    choice is uniform over members (with lambda > 0 it leans to cheap members)."""

    family = "random"

    def __init__(self, random_state=0):
        self.random_state = random_state

    def _fit(self, X, Y):
        pass

    def _utility(self, X):
        return np.random.default_rng(_seed(self.random_state)).random((len(X), self.n_policies_))


class Cheapest(Router):
    """The member with the lowest mean calibration cost (needs costs)."""

    family = "cheapest"

    def _fit(self, X, Y):
        if self.cost_ is None:
            raise ValueError("router 'cheapest' needs costs: fit it with cost=[n, M] (the pool has no cost array)")

    def _utility(self, X):
        cost = self.cost_
        assert cost is not None  # _fit refuses a fit without costs
        return _tile(1.0 - cost, len(X))


# ====================================================================== 2609.32996's five, plus the identity router
class TfidfLogReg(Router):
    """TF-IDF of word 1-2-grams (fitted on calibration text) -> multinomial logistic regression on
    the choice distribution Y_i / sum_m Y_im (000's linear text router, with per-policy targets)."""

    needs = ("text",)
    family = "tfidf_logreg"

    def __init__(self, ngram_range=(1, 2), max_features: int = 20000, min_df: int = 1, C: float = 1.0, max_iter: int = 200):
        self.ngram_range = ngram_range
        self.max_features = max_features
        self.min_df = min_df
        self.C = C
        self.max_iter = max_iter

    def _fit(self, X, Y):
        self.vectorizer_, Z = _tfidf_fit(X.text, ngram_range=tuple(self.ngram_range), max_features=self.max_features,
                                         min_df=self.min_df, sublinear_tf=True)
        rows, T = _choice_distribution(Y)
        self.model_ = SoftmaxRegression(C=self.C, max_iter=self.max_iter).fit(Z[rows], T) if rows.any() else None

    def _utility(self, X):
        if self.model_ is None:
            return _tile(self.means_, len(X))
        return self.model_.predict_proba(_tfidf_transform(self.vectorizer_, X.text))


def _feature_matrix(X: RouterInputs) -> pd.DataFrame:
    parts = []
    if X.has("text"):
        parts.append(_handcrafted(X.text))
    if X.features is not None:
        parts.append(X.features.add_prefix("feat:"))
    return pd.concat(parts, axis=1)


class GBRFeatures(Router):
    """One gradient-boosted regressor per member (scikit-learn's histogram GBM) predicting its
    target from handcrafted prompt features (:func:`handcrafted_features`) and the pool's numeric
    feature columns (000's gradient-boosted router)."""

    needs = ("features|text",)
    family = "gbr_features"

    def __init__(self, max_iter: int = 100, learning_rate: float = 0.1, max_leaf_nodes: int = 15,
                 min_samples_leaf: int = 20, random_state=0):
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def _fit(self, X, Y):
        from sklearn.ensemble import HistGradientBoostingRegressor

        F = _feature_matrix(X)
        self.columns_ = list(F.columns)
        leaf = min(self.min_samples_leaf, max(1, len(Y) // 4))
        self.models_ = _fit_per_member(F.to_numpy(dtype=float), Y, lambda: HistGradientBoostingRegressor(
            max_iter=self.max_iter, learning_rate=self.learning_rate, max_leaf_nodes=self.max_leaf_nodes,
            min_samples_leaf=leaf, early_stopping=False, random_state=_seed(self.random_state)),
            min_rows=4)

    def _utility(self, X):
        return _predict_per_member(self.models_, _feature_matrix(X)[self.columns_].to_numpy(dtype=float))


def _fit_per_member(F: np.ndarray, Y: np.ndarray, make, *, min_rows: int = 1) -> list:
    """One regressor ``make()`` per member fitted to its column of Y on features F; a member
    whose target is constant (or with fewer than ``min_rows`` rows) keeps its mean instead."""
    models = []
    for m in range(Y.shape[1]):
        y = Y[:, m]
        if y.max() - y.min() < 1e-12 or len(y) < min_rows:
            models.append(float(y.mean()))
        else:
            models.append(make().fit(F, y))
    return models


def _predict_per_member(models: list, F: np.ndarray) -> np.ndarray:
    """float[n, M]: each member's predicted target from :func:`_fit_per_member`'s models, in [0, 1]."""
    cols = [np.full(len(F), g) if isinstance(g, float) else g.predict(F) for g in models]
    return np.clip(np.stack(cols, axis=1), 0.0, 1.0) if cols else np.zeros((len(F), 0))


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

    def _space(self, X, fit):
        if fit:
            self.vectorizer_, Z = _tfidf_fit(X.text, ngram_range=(1, 1), sublinear_tf=True)
            return Z
        return _tfidf_transform(self.vectorizer_, X.text)


class EmbedKNN(_KNNMean):
    """Embedding cosine 15-nearest-neighbour mean targets (000's embedding NN router; 002's k-NN)."""

    needs = ("embeddings",)
    family = "embed_knn"

    def _space(self, X, fit):
        return X.embeddings


class EmbedPCALogReg(Router):
    """Embedding -> standardise -> PCA(64) -> multinomial logistic regression on the choice
    distribution (000's linear embedding router)."""

    needs = ("embeddings",)
    family = "embed_pca_logreg"

    def __init__(self, n_components: int = 64, C: float = 1.0, max_iter: int = 300, random_state=0):
        self.n_components = n_components
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X, Y):
        self.prep_ = _EmbedPrep(self.n_components, _seed(self.random_state)).fit(X.embeddings)
        rows, T = _choice_distribution(Y)
        Z = self.prep_.transform(X.embeddings)
        self.model_ = SoftmaxRegression(C=self.C, max_iter=self.max_iter).fit(Z[rows], T) if rows.any() else None

    def _utility(self, X):
        if self.model_ is None:
            return _tile(self.means_, len(X))
        return self.model_.predict_proba(self.prep_.transform(X.embeddings))


class DatasetIdentity(Router):
    """Each prompt goes to the member trained on its dataset (000's identity router):
    ``policy_datasets[m]`` is member m's training dataset (the policy table's ``dataset``
    column); among several matching members the best on calibration, and prompts whose dataset
    no member was trained on go to the best single member."""

    needs = ("dataset",)
    family = "dataset"

    def __init__(self, policy_datasets=None):
        self.policy_datasets = policy_datasets

    def _fit(self, X, Y):
        if self.policy_datasets is None:
            raise ValueError("router 'dataset' needs policy_datasets: each member's training dataset (the policy table's 'dataset' column)")
        pdat = [None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in self.policy_datasets]
        if len(pdat) != Y.shape[1]:
            raise ValueError(f"policy_datasets has {len(pdat)} entries for {Y.shape[1]} policies")
        self.map_ = np.array(pdat, dtype=object)

    def _utility(self, X):
        match = np.asarray(X.dataset, dtype=object)[:, None] == self.map_[None, :]
        return self.means_[None, :] + match.astype(float)


# ====================================================================== 002's K-way predictors and adaptations
class MultiLogReg(Router):
    """Multi-output logistic regression (002): one logistic regression per member on the
    standardised PCA(64) embedding, fitted to its fractional target by weighted duplication
    (rows (z, 1) with weight y and (z, 0) with weight 1 - y)."""

    needs = ("embeddings",)
    family = "multi_logreg"

    def __init__(self, n_components: int = 64, C: float = 1.0, max_iter: int = 300, random_state=0):
        self.n_components = n_components
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X, Y):
        from sklearn.linear_model import LogisticRegression

        self.prep_ = _EmbedPrep(self.n_components, _seed(self.random_state)).fit(X.embeddings)
        Z = self.prep_.transform(X.embeddings)
        n = Z.shape[0]
        ZZ = np.vstack([Z, Z])
        lab = np.r_[np.ones(n), np.zeros(n)]
        self.models_ = []
        for m in range(Y.shape[1]):
            y = Y[:, m]
            if y.max() - y.min() < 1e-12:
                self.models_.append(float(y.mean()))
                continue
            w = np.r_[y, 1 - y]
            keep = w > 0
            with _quiet():
                lr = LogisticRegression(C=self.C, max_iter=self.max_iter).fit(ZZ[keep], lab[keep], sample_weight=w[keep])
            self.models_.append(lr)

    def _utility(self, X):
        Z = self.prep_.transform(X.embeddings)
        cols = [np.full(len(X), g) if isinstance(g, float) else g.predict_proba(Z)[:, list(g.classes_).index(1.0)] for g in self.models_]
        return np.stack(cols, axis=1)


class MLPRouter(Router):
    """Multi-output MLP (002): scikit-learn's ``MLPRegressor`` from the standardised PCA(64)
    embedding to all K targets at once (squared loss; early stopping on a 10% validation share of
    the calibration prompts when there are at least 50), predictions clipped to [0, 1]."""

    needs = ("embeddings",)
    family = "mlp"

    def __init__(self, hidden_layer_sizes=(128,), alpha: float = 1e-3, max_iter: int = 200, early_stopping: bool = True,
                 n_components: int = 64, random_state=0):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.max_iter = max_iter
        self.early_stopping = early_stopping
        self.n_components = n_components
        self.random_state = random_state

    def _fit(self, X, Y):
        from sklearn.neural_network import MLPRegressor

        self.prep_ = _EmbedPrep(self.n_components, _seed(self.random_state)).fit(X.embeddings)
        Z = self.prep_.transform(X.embeddings)
        with _quiet():
            self.model_ = MLPRegressor(hidden_layer_sizes=tuple(self.hidden_layer_sizes), alpha=self.alpha, max_iter=self.max_iter,
                                       early_stopping=bool(self.early_stopping) and Z.shape[0] >= 50,
                                       random_state=_seed(self.random_state)).fit(Z, Y)

    def _utility(self, X):
        U = self.model_.predict(self.prep_.transform(X.embeddings))
        return np.clip(U.reshape(len(X), -1), 0.0, 1.0)


class KMeansBest(Router):
    """KMeans cluster-best (002): k-means on the standardised PCA(64) embedding (fitted on
    calibration); a prompt gets its cluster's mean calibration target per member."""

    needs = ("embeddings",)
    family = "kmeans_best"

    def __init__(self, n_clusters: int = 8, n_components: int = 64, random_state=0):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.random_state = random_state

    def _fit(self, X, Y):
        from sklearn.cluster import KMeans

        self.prep_ = _EmbedPrep(self.n_components, _seed(self.random_state)).fit(X.embeddings)
        Z = self.prep_.transform(X.embeddings)
        kc = int(min(self.n_clusters, Z.shape[0]))
        with _quiet():
            self.km_ = KMeans(n_clusters=kc, n_init=3, random_state=_seed(self.random_state)).fit(Z)
        lab = self.km_.labels_
        counts = np.bincount(lab, minlength=kc)
        sums = np.zeros((kc, Y.shape[1]))
        np.add.at(sums, lab, Y)
        self.cluster_means_ = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], self.means_[None, :])

    def _utility(self, X):
        return self.cluster_means_[self.km_.predict(self.prep_.transform(X.embeddings))]


class ClusterBest(KMeansBest):
    """Cluster-then-best, an Avengers-style adaptation: many k-means clusters (default 32) on the
    embedding; a prompt scores each member by its mean calibration target averaged over the
    ``top_k`` nearest cluster centres, and goes to the best-scoring member."""

    family = "cluster_best"

    def __init__(self, n_clusters: int = 32, top_k: int = 3, n_components: int = 64, random_state=0):
        self.n_clusters = n_clusters
        self.top_k = top_k
        self.n_components = n_components
        self.random_state = random_state

    def _utility(self, X):
        Z = self.prep_.transform(X.embeddings)
        d = self.km_.transform(Z)
        t = int(min(self.top_k, d.shape[1]))
        near = np.argsort(d, axis=1, kind="stable")[:, :t]
        return self.cluster_means_[near].mean(axis=1)


class MatrixFactorization(Router):
    """Matrix factorisation of prompt x member correctness, an EmbedLLM / IRT-Router-style
    adaptation: logit P(R_im = 1) = <A z_i, v_m> + b_m + w . z_i, with z_i the standardised
    PCA(64) embedding, a learned linear prompt encoder A (rank ``rank``), learned member vectors
    v_m and biases b_m, and a prompt-difficulty term w . z_i (the IRT form a_m . theta_i - d_m is
    the same bilinear model). Fitted by L-BFGS on the mean Bernoulli log-loss of the targets plus
    (l2 / 2)(||A||^2 + ||V||^2 + ||w||^2)."""

    needs = ("embeddings",)
    family = "matrix_factorization"

    def __init__(self, rank: int = 16, n_components: int = 64, l2: float = 1e-3, max_iter: int = 300, random_state=0):
        self.rank = rank
        self.n_components = n_components
        self.l2 = l2
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X, Y):
        from scipy.optimize import minimize
        from scipy.special import expit

        self.prep_ = _EmbedPrep(self.n_components, _seed(self.random_state)).fit(X.embeddings)
        Z = self.prep_.transform(X.embeddings)
        n, p = Z.shape
        M = Y.shape[1]
        r = int(self.rank)
        lam = float(self.l2)
        sizes = [p * r, M * r, M, p]

        def unpack(th):
            A, V, b, w = np.split(th, np.cumsum(sizes)[:-1])
            return A.reshape(p, r), V.reshape(M, r), b, w

        def f(th):
            A, V, b, w = unpack(th)
            H = Z @ A
            L = H @ V.T + b + (Z @ w)[:, None]
            loss = (np.logaddexp(0, L) - Y * L).mean() + 0.5 * lam * ((A * A).sum() + (V * V).sum() + (w * w).sum())
            G = (expit(L) - Y) / (n * M)
            gA = Z.T @ (G @ V) + lam * A
            gV = G.T @ H + lam * V
            gb = G.sum(axis=0)
            gw = Z.T @ G.sum(axis=1) + lam * w
            return loss, np.concatenate([gA.ravel(), gV.ravel(), gb, gw])

        rng = np.random.default_rng(_seed(self.random_state))
        m0 = np.clip(self.means_, 1e-3, 1 - 1e-3)
        th0 = np.concatenate([0.1 * rng.standard_normal(p * r) / math.sqrt(p), 0.1 * rng.standard_normal(M * r),
                              np.log(m0 / (1 - m0)), np.zeros(p)])
        res = minimize(f, th0, jac=True, method="L-BFGS-B", options={"maxiter": int(self.max_iter)})
        self.A_, self.V_, self.b_, self.w_ = unpack(res.x)

    def _utility(self, X):
        from scipy.special import expit

        Z = self.prep_.transform(X.embeddings)
        return expit((Z @ self.A_) @ self.V_.T + self.b_ + (Z @ self.w_)[:, None])


class TagExpert(Router):
    """A Zooter-style adaptation: the router is distilled from softmax-normalised targets
    softmax(Y_i / temperature) over members (reward distillation), by a softmax regression on
    the standardised PCA(64) embedding joined with one-hot task tags (the dataset identity,
    when present) -- a tag-aware expert router."""

    needs = ("embeddings",)
    family = "tag_expert"

    def __init__(self, temperature: float = 0.1, n_components: int = 64, C: float = 1.0, max_iter: int = 300, random_state=0):
        self.temperature = temperature
        self.n_components = n_components
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def _design(self, X) -> np.ndarray:
        Z = self.prep_.transform(X.embeddings)
        if self.tags_ is None or X.dataset is None:
            return Z
        onehot = (np.asarray(X.dataset, dtype=object)[:, None] == self.tags_[None, :]).astype(float)
        return np.hstack([Z, onehot])

    def _fit(self, X, Y):
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature!r}")
        self.prep_ = _EmbedPrep(self.n_components, _seed(self.random_state)).fit(X.embeddings)
        self.tags_ = None if X.dataset is None else np.array(sorted(set(map(str, X.dataset))), dtype=object)
        L = Y / self.temperature
        L = L - L.max(axis=1, keepdims=True)
        T = np.exp(L)
        T /= T.sum(axis=1, keepdims=True)
        self.model_ = SoftmaxRegression(C=self.C, max_iter=self.max_iter).fit(self._design(X), T)

    def _utility(self, X):
        return self.model_.predict_proba(self._design(X))


class EncoderHead(Router):
    """A small torch encoder head with K correctness outputs on the frozen (standardised)
    embedding: Linear(d, hidden) -> ReLU -> Dropout -> Linear(hidden, K), trained with the
    Bernoulli log-loss of all K targets by Adam on CPU, one thread, seeded (002's strongest
    router, here on frozen embeddings). Needs torch."""

    needs = ("embeddings",)
    family = "encoder_head"

    def __init__(self, hidden: int = 128, epochs: int = 40, lr: float = 3e-3, weight_decay: float = 1e-4,
                 dropout: float = 0.1, batch_size: int = 256, random_state=0):
        self.hidden = hidden
        self.epochs = epochs
        self.lr = lr
        self.weight_decay = weight_decay
        self.dropout = dropout
        self.batch_size = batch_size
        self.random_state = random_state

    @contextlib.contextmanager
    def _one_thread(self):
        import torch

        old = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield torch
        finally:
            torch.set_num_threads(old)

    def _fit(self, X, Y):
        try:
            import torch  # noqa: F401
        except ImportError:
            raise ValueError("router 'encoder_head' needs torch (pip install '.[lab]' or '.[embed]')") from None
        self.prep_ = _EmbedPrep(None, 0).fit(X.embeddings)
        Z = self.prep_.transform(X.embeddings)
        with self._one_thread() as torch, torch.random.fork_rng(devices=[]):  # seeded, global torch RNG left untouched
            g = torch.Generator().manual_seed(_seed(self.random_state))
            torch.manual_seed(_seed(self.random_state))
            net = torch.nn.Sequential(torch.nn.Linear(Z.shape[1], int(self.hidden)), torch.nn.ReLU(),
                                      torch.nn.Dropout(float(self.dropout)), torch.nn.Linear(int(self.hidden), Y.shape[1]))
            opt = torch.optim.Adam(net.parameters(), lr=float(self.lr), weight_decay=float(self.weight_decay))
            Zt = torch.tensor(Z, dtype=torch.float32)
            Yt = torch.tensor(Y, dtype=torch.float32)
            lossf = torch.nn.BCEWithLogitsLoss()
            n = Zt.shape[0]
            bs = int(min(self.batch_size, n))
            net.train()
            for _ in range(int(self.epochs)):
                perm = torch.randperm(n, generator=g)
                for s in range(0, n, bs):
                    idx = perm[s : s + bs]
                    opt.zero_grad()
                    loss = lossf(net(Zt[idx]), Yt[idx])
                    loss.backward()
                    opt.step()
            net.eval()
        self.net_ = net

    def _utility(self, X):
        Z = self.prep_.transform(X.embeddings)
        with self._one_thread() as torch, torch.no_grad():
            return torch.sigmoid(self.net_(torch.tensor(Z, dtype=torch.float32))).double().numpy()


def _multi_output(estimator) -> bool:
    """Whether a scikit-learn estimator declares support for a 2-d target (its ``multi_output`` tag)."""
    try:
        from sklearn.utils import get_tags
    except ImportError:  # scikit-learn < 1.6
        return bool(estimator._get_tags().get("multioutput", False))
    return bool(get_tags(estimator).target_tags.multi_output)


class EstimatorRouter(Router):
    """Wrap any scikit-learn estimator as a router. ``input``: ``"embeddings"``, ``"features"``
    (handcrafted + declared) or ``"text"`` (TF-IDF). A regressor is fitted to all K targets at
    once when its tags declare multi-output support (and it then predicts K columns), else through
    ``MultiOutputRegressor`` (one clone per target); an error raised while fitting is the
    estimator's own and propagates. A classifier is fitted to the K indicators Y >= 0.5 through
    ``MultiOutputClassifier``, its utility the predicted probability of 1."""

    family = "sklearn"

    def __init__(self, estimator=None, input: str = "embeddings"):
        self.estimator = estimator
        self.input = input

    @property
    def needs(self):  # type: ignore[override]
        return {"embeddings": ("embeddings",), "features": ("features|text",), "text": ("text",)}.get(self.input, ())

    def _design(self, X, fit: bool):
        if self.input == "embeddings":
            return X.embeddings
        if self.input == "features":
            F = _feature_matrix(X)
            if fit:
                self.columns_ = list(F.columns)
            return F[self.columns_].to_numpy(dtype=float)
        if self.input == "text":
            from sklearn.feature_extraction.text import TfidfVectorizer

            if fit:
                self.vectorizer_ = TfidfVectorizer(sublinear_tf=True)
                return self.vectorizer_.fit_transform(X.text)
            return self.vectorizer_.transform(X.text)
        raise ValueError(f"input must be 'embeddings', 'features' or 'text', got {self.input!r}")

    def _fit(self, X, Y):
        from sklearn.multioutput import MultiOutputClassifier, MultiOutputRegressor

        if self.estimator is None:
            raise ValueError("EstimatorRouter needs estimator= (a scikit-learn regressor or classifier)")
        D = self._design(X, fit=True)
        self.classifier_ = is_classifier(self.estimator)
        if self.classifier_:
            Yb = (Y >= 0.5).astype(int)
            self.const_ = {m: float(Yb[0, m]) for m in range(Y.shape[1]) if Yb[:, m].min() == Yb[:, m].max()}
            keep = [m for m in range(Y.shape[1]) if m not in self.const_]
            self.keep_ = keep
            self.model_ = MultiOutputClassifier(clone(self.estimator)).fit(D, Yb[:, keep]) if keep else None
            return
        if _multi_output(self.estimator):  # fitted to all K targets at once; its errors are real
            with _quiet():
                self.model_ = clone(self.estimator).fit(D, Y)
            if np.asarray(self.model_.predict(D[:1])).reshape(1, -1).shape[1] == Y.shape[1]:
                return
        # single-output (by its tags, or by what it predicted): one clone per target column
        self.model_ = MultiOutputRegressor(clone(self.estimator)).fit(D, Y)

    def _utility(self, X):
        D = self._design(X, fit=False)
        if self.classifier_:
            U = np.zeros((len(X), self.n_policies_))
            for m, v in self.const_.items():
                U[:, m] = v
            if self.model_ is not None:
                for j, (m, P) in enumerate(zip(self.keep_, self.model_.predict_proba(D), strict=True)):
                    U[:, m] = P[:, list(self.model_.estimators_[j].classes_).index(1)]
            return U
        model = self.model_
        assert model is not None  # a regressor is always fitted (None only for an all-constant classifier)
        return np.clip(np.asarray(model.predict(D), dtype=np.float64).reshape(len(X), -1), 0.0, 1.0)


# ====================================================================== post-inference selectors
class MaxConfidence(Router):
    """Post-inference: the member whose committed answer has the highest confidence."""

    needs = ("confidence",)
    regime = "post-inference"
    family = "max_confidence"

    def _fit(self, X, Y):
        pass

    def _utility(self, X):
        return np.asarray(X.confidence, dtype=float)


class CalibratedConfidence(Router):
    """Post-inference: per-member Platt calibration of confidence -> P(correct) fitted on
    calibration prompts (logistic regression of the target on the confidence), then the member
    with the highest calibrated probability."""

    needs = ("confidence",)
    regime = "post-inference"
    family = "calibrated_confidence"

    def _fit(self, X, Y):
        from sklearn.linear_model import LogisticRegression

        c = np.asarray(X.confidence, dtype=float)
        self.models_ = []
        for m in range(Y.shape[1]):
            y = Y[:, m]
            if y.max() - y.min() < 1e-12:
                self.models_.append(float(y.mean()))
                continue
            z = np.r_[c[:, m], c[:, m]][:, None]
            lab = np.r_[np.ones(len(y)), np.zeros(len(y))]
            w = np.r_[y, 1 - y]
            keep = w > 0
            self.models_.append(LogisticRegression(C=100.0).fit(z[keep], lab[keep], sample_weight=w[keep]))

    def _utility(self, X):
        c = np.asarray(X.confidence, dtype=float)
        cols = [np.full(len(X), g) if isinstance(g, float) else g.predict_proba(c[:, [m]])[:, list(g.classes_).index(1.0)]
                for m, g in enumerate(self.models_)]
        return np.stack(cols, axis=1)


class PluralityVote(Router):
    """Post-inference: the plurality answer among the members' committed answers; the chosen
    member is one that gave it (the best on calibration among them). Utility = the share of
    members agreeing with member m's answer (empty answers vote for nothing)."""

    needs = ("answers",)
    regime = "post-inference"
    family = "plurality_vote"

    def _fit(self, X, Y):
        pass

    def _utility(self, X):
        A = np.asarray(X.answers).astype(str)
        same = (A[:, :, None] == A[:, None, :]) & (A[:, None, :] != "")
        return same.mean(axis=2) * (A != "")


# ====================================================================== 2609.32996's four routers (App. B.2)
# The library's defaults above are stronger variants (soft choice-distribution targets, pool feature columns,
# sublinear TF-IDF, incumbent-first ties); these presets follow App. B.2 of arXiv 2609.32996 ("Text-based
# routers"), so that the book can set the paper's routers beside ours. What App. B.2 states, each preset does;
# what it leaves open is named in the preset's docstring with the choice made here. Choices common to all four:
#
# * targets: each member's validation success rate as given (``Y``; at k = 1 its correctness). App. B.1 also
#   defines a Beta-smoothed rate (s + a) / (k + a + b) with one prior per split; that is an increasing affine map
#   of the raw rate shared by all members, so it leaves every hard label, every neighbour mean's argmax and every
#   squared-loss tree ensemble's argmax unchanged: the raw rate gives the same choices.
# * ties: App. B.2 says "the member with the highest" rate and names no tie rule. Ties go to the lowest member
#   index (a plain argmax over the members in pool order), as the authors' released code does
#   (github.com/KurbanIntelligenceLab/oracle-gaps, lib/csm_router.py), not to the calibration incumbent as the
#   library's families do. This applies to the training labels and to every choice; at k = 1 a prompt that all
#   members solve (or none) is such a tie.
# * one fit: the paper reports the median over initialisations; a preset is one fit (``random_state``), and a
#   caller wanting the median fits several.
def _lowest_index_ties(means: np.ndarray) -> np.ndarray:
    return np.arange(np.asarray(means).size, dtype=np.int64)


_PAPER000_MAX_FEATURES = 4000
#: Word 1-2-gram TF-IDF of the two text presets, fitted on validation text. App. B.2 gives the n-grams for the
#: linear router ("individual words and adjacent word pairs") and TF-IDF for the nearest-neighbour router; the
#: vocabulary cap (the 4,000 most frequent terms) and the use of one vectoriser for both are not in the text
#: and are the settings of the authors' released code.
PAPER000_TFIDF = {"ngram_range": (1, 2), "max_features": _PAPER000_MAX_FEATURES}


class Paper000KNN(_KNNMean):
    """000's text nearest-neighbour router (App. B.2, "Text-based routers"; Sec. 3.3).

    Stated by the paper: TF-IDF features of the prompt text; the 15 validation prompts with the largest
    cosine similarity; the member with the highest mean validation success rate on those neighbours.

    Left open, chosen here: the TF-IDF settings (:data:`PAPER000_TFIDF`: word 1-2-grams, 4,000 terms, fitted
    on the validation text only, scikit-learn's defaults otherwise: raw term counts, smoothed idf, unit rows);
    ties in the neighbours' mean go to the lowest member index; neighbours tied in similarity at the 15th
    place are taken in scikit-learn's brute-force order (:func:`cosine_topk`)."""

    needs = ("text",)
    family = "paper000_knn"
    _tie_order = staticmethod(_lowest_index_ties)

    def __init__(self, n_neighbors: int = 15, max_features: int | None = _PAPER000_MAX_FEATURES,
                 max_reference: int | None = None, random_state=0):
        super().__init__(n_neighbors=n_neighbors, max_reference=max_reference, random_state=random_state)
        self.max_features = max_features

    def _space(self, X, fit):
        if fit:
            params = {**PAPER000_TFIDF, "max_features": self.max_features}
            self.vectorizer_, Z = _tfidf_fit(X.text, **params)
            return Z
        return _tfidf_transform(self.vectorizer_, X.text)


class Paper000Linear(Router):
    """000's linear text router (App. B.2, "Text-based routers"; Sec. 3.3).

    Stated by the paper: multinomial logistic regression predicting, for each validation prompt, the member
    with the highest validation rate, from individual words and adjacent word pairs.

    Left open, chosen here: the word features are the TF-IDF of :data:`PAPER000_TFIDF` (fitted on validation
    text); every validation prompt is a training row, its label the member with the highest rate, ties to the
    lowest member index (so a prompt on which all members score alike is labelled member 0); the L2-penalised
    multinomial log-loss with ``C`` = 1 (scikit-learn's default); utilities are the predicted class
    probabilities (0 for members never a label) and the choice their argmax, ties to the lowest index.
    The paper names no solver; the optimum is found by Newton-CG (the solver does not change the optimum the
    preset defines, tested against L-BFGS run to a tight tolerance)."""

    needs = ("text",)
    family = "paper000_linear"
    _tie_order = staticmethod(_lowest_index_ties)

    def __init__(self, C: float = 1.0, max_iter: int = 1000, max_features: int | None = _PAPER000_MAX_FEATURES):
        self.C = C
        self.max_iter = max_iter
        self.max_features = max_features

    def _fit(self, X, Y):
        from sklearn.linear_model import LogisticRegression

        self.vectorizer_, Z = _tfidf_fit(X.text, **{**PAPER000_TFIDF, "max_features": self.max_features})
        self.labels_ = choose(Y, self.rank_)
        self.classes_ = np.unique(self.labels_)
        self.model_ = None
        if self.classes_.size > 1:
            self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter,
                                             solver="newton-cg").fit(Z, self.labels_)

    def _utility(self, X):
        U = np.zeros((len(X), self.n_policies_))
        if self.model_ is None:
            U[:, int(self.classes_[0])] = 1.0
            return U
        U[:, self.model_.classes_.astype(int)] = self.model_.predict_proba(_tfidf_transform(self.vectorizer_, X.text))
        return U


#: Geometry keywords counted (one column each) by the boosted preset.
PAPER000_KEYWORDS = ("angle", "triangle", "circle", "radius", "diameter", "area", "perimeter", "parallel",
                     "perpendicular", "square", "rectangle", "polygon", "chord", "tangent", "arc", "degree")


def keyword_counts(texts, keywords=PAPER000_KEYWORDS) -> np.ndarray:
    """float[n, len(keywords)]: how often each keyword, alone or with a plural s, stands as a
    whole word (``\\bword s?\\b``) in each lower-cased text. One scan of each text: a whole-word
    match is a maximal run of word characters equal to one keyword (or it plus s), so the runs
    of different keywords never overlap and one alternation counts them all."""
    keywords = tuple(keywords)
    rx = re.compile(r"\b(" + "|".join(map(re.escape, keywords)) + r")s?\b")  # re caches it
    col = {w: j for j, w in enumerate(keywords)}
    out = np.zeros((len(texts), len(keywords)))
    for i, t in enumerate(texts):
        for w in rx.findall(str(t).lower()):
            out[i, col[w]] += 1.0
    return out


def _paper000_text_features(texts) -> np.ndarray:
    def compute():
        F = _handcrafted(texts).to_numpy(dtype=float)
        return np.hstack([F, keyword_counts(texts)])

    return _shared(("paper000-features", _texts_digest(texts)), compute).copy()


class Paper000Boosted(Router):
    """000's gradient-boosted router (App. B.2, "Text-based routers"; Sec. 3.3).

    Stated by the paper: one ensemble of decision trees per member, each predicting that member's validation
    rate from prompt features "such as prompt length, numeral counts, typesetting markers, and geometry
    keywords"; the member with the highest predicted rate is chosen.

    Left open, chosen here. Features: text only, no pool feature columns -- :func:`handcrafted_features`
    (length in characters and words, digit and number counts, LaTeX commands, dollar signs, operators and the
    other markers it lists) and whole-word counts of the geometry keywords :data:`PAPER000_KEYWORDS`. Ties in
    the predicted rate go to the lowest member index. Model: ``n_estimators`` = 100 trees of depth
    ``max_depth`` = 3, learning rate 0.1 and squared loss, grown on histograms of the features (scikit-learn's
    HistGradientBoostingRegressor: split points among at most 255 quantile bins per feature), no early
    stopping, leaves of any size. Where no feature has more than 255 distinct values every split point is a
    bin edge and the trees are those of exact split search (GradientBoostingRegressor with the same sizes;
    predictions agree to 1e-7, tested); longer features (prompt length) are split at bin edges only. On
    MMLU-Pro's 5,163-prompt half one member's fit takes 0.09 s instead of exact search's 0.51 s. Each fit runs
    on one OpenMP thread, so the numbers do not depend on the machine's core count."""

    needs = ("text",)
    family = "paper000_boosted"
    _tie_order = staticmethod(_lowest_index_ties)

    def __init__(self, n_estimators: int = 100, max_depth: int = 3, learning_rate: float = 0.1, random_state=0):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.random_state = random_state

    def _fit(self, X, Y):
        from sklearn.ensemble import HistGradientBoostingRegressor
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1, user_api="openmp"):
            self.models_ = _fit_per_member(_paper000_text_features(X.text), Y, lambda: HistGradientBoostingRegressor(
                max_iter=self.n_estimators, max_depth=self.max_depth, max_leaf_nodes=None, min_samples_leaf=1,
                learning_rate=self.learning_rate, early_stopping=False, random_state=_seed(self.random_state)))

    def _utility(self, X):
        return _predict_per_member(self.models_, _paper000_text_features(X.text))


class Paper000BestSingle(BestSingle):
    """000's deployable comparator (App. B.2, "Comparator selection"): the member with the highest mean
    validation rate, on every prompt. Left open, chosen here: ties go to the lowest member index."""

    family = "paper000_best_single"
    _tie_order = staticmethod(_lowest_index_ties)


#: The four presets of 2609.32996 (App. B.2), registered with the library's families.
PAPER000_FAMILIES = ("paper000_knn", "paper000_linear", "paper000_boosted", "paper000_best_single")


# ====================================================================== the registry
_CLASSES: dict[str, type[Router]] = {
    "best_single": BestSingle,
    "taskwise_best": TaskwiseBest,
    "random": RandomRouter,
    "cheapest": Cheapest,
    "tfidf_logreg": TfidfLogReg,
    "gbr_features": GBRFeatures,
    "tfidf_knn": TfidfKNN,
    "embed_pca_logreg": EmbedPCALogReg,
    "embed_knn": EmbedKNN,
    "dataset": DatasetIdentity,
    "multi_logreg": MultiLogReg,
    "mlp": MLPRouter,
    "kmeans_best": KMeansBest,
    "cluster_best": ClusterBest,
    "matrix_factorization": MatrixFactorization,
    "tag_expert": TagExpert,
    "encoder_head": EncoderHead,
    "max_confidence": MaxConfidence,
    "calibrated_confidence": CalibratedConfidence,
    "plurality_vote": PluralityVote,
    "paper000_knn": Paper000KNN,
    "paper000_linear": Paper000Linear,
    "paper000_boosted": Paper000Boosted,
    "paper000_best_single": Paper000BestSingle,
}

#: The one registry of family texts: name -> (human label for tables and figures, description).
_FAMILY_TEXT = {
    "best_single": ("best single (frozen)", "fixed: calibration-selected best single member"),
    "taskwise_best": ("task-wise best (frozen)", "fixed: frozen task-wise best (best member per dataset level on calibration)"),
    "random": ("uniform random", "fixed: uniform random member per prompt"),
    "cheapest": ("cheapest", "fixed: lowest mean calibration cost"),
    "tfidf_logreg": ("TF-IDF logistic", "000: TF-IDF 1-2-gram multinomial logistic regression on the choice distribution"),
    "gbr_features": ("boosted features", "000: one gradient-boosted regressor per member on handcrafted prompt features"),
    "tfidf_knn": ("TF-IDF 15-NN", "000: TF-IDF cosine 15-NN mean targets"),
    "embed_pca_logreg": ("embedding PCA logistic", "000: embedding -> standardise -> PCA(64) -> multinomial logistic regression"),
    "embed_knn": ("embedding 15-NN", "000/002: embedding cosine 15-NN mean targets"),
    "dataset": ("dataset identity", "000: dataset identity (each prompt to the member trained on its dataset)"),
    "multi_logreg": ("logistic multi-output", "002: multi-output logistic regression on the embedding"),
    "mlp": ("MLP multi-output", "002: multi-output MLP on the embedding"),
    "kmeans_best": ("KMeans cluster-best", "002: KMeans cluster-best on the embedding"),
    "cluster_best": ("cluster-then-best", "adaptation (Avengers-style): mean target over the nearest clusters"),
    "matrix_factorization": ("matrix factorisation", "adaptation (EmbedLLM / IRT-Router-style): prompt encoder x member vectors"),
    "tag_expert": ("tag expert", "adaptation (Zooter-style): tag-aware router distilled from softmax targets"),
    "encoder_head": ("encoder, M heads", "002: torch encoder head with M correctness outputs on frozen embeddings"),
    "max_confidence": ("max confidence", "post-inference: highest confidence of the committed answer"),
    "calibrated_confidence": ("calibrated confidence", "post-inference: highest Platt-calibrated confidence"),
    "plurality_vote": ("plurality vote", "post-inference: a member giving the plurality answer"),
    "paper000_knn": ("k-NN, TF-IDF 1-2-grams (2609.32996)",
                     "000 as published: word 1-2-gram TF-IDF cosine 15-NN, highest mean validation rate"),
    "paper000_linear": ("linear, hard label (2609.32996)",
                        "000 as published: word 1-2-gram TF-IDF multinomial logistic regression on the hard "
                        "best-member label"),
    "paper000_boosted": ("boosted per-member correctness (2609.32996)",
                         "000 as published: one gradient-boosted tree ensemble per member on handcrafted text "
                         "features"),
    "paper000_best_single": ("best single on validation (2609.32996)",
                             "000 as published: the validation-selected best member"),
}
_DESCRIPTIONS = {name: text[1] for name, text in _FAMILY_TEXT.items()}
#: name -> human label (also each router class's ``label``; :func:`label` adds the oracle).
LABELS = {name: text[0] for name, text in _FAMILY_TEXT.items()}
_OTHER_LABELS = {"oracle": "outcome oracle"}


def label(name: str) -> str:
    """The human label of a router family (or of ``"oracle"``, the outcome oracle); an unknown
    name is returned as it is, so a table of families and other rows maps cleanly."""
    return LABELS.get(name, _OTHER_LABELS.get(name, name))


for _name, _cls in _CLASSES.items():
    _cls.label = LABELS[_name]
del _name, _cls


def family_requirements(name: str) -> tuple:
    """The inputs a family needs (``"features|text"``: either) plus ``"cost"`` / ``"policy_datasets"``."""
    cls = _family_class(name)
    extra = {"cheapest": ("cost",), "dataset": ("policy_datasets",)}.get(name, ())
    return tuple(cls.needs) + extra


def _family_class(name: str):
    if name not in _CLASSES:
        raise ValueError(f"unknown router family {name!r}; known families: {', '.join(_CLASSES)}")
    return _CLASSES[name]


#: name -> {"label", "description", "needs" (inputs), "regime" ("pre-answer" | "post-inference"), "optional"}.
FAMILIES: dict[str, dict] = {
    name: {
        "label": LABELS[name],
        "description": _DESCRIPTIONS[name],
        "needs": family_requirements(name),
        "regime": cls.regime,
        "optional": "torch" if name == "encoder_head" else None,
    }
    for name, cls in _CLASSES.items()
}
PRE_ANSWER = tuple(k for k, v in FAMILIES.items() if v["regime"] == "pre-answer")
POST_INFERENCE = tuple(k for k, v in FAMILIES.items() if v["regime"] == "post-inference")


def make_router(name: str, **params) -> Router:
    """An unfitted router of family ``name`` (see :data:`FAMILIES`) with ``params``."""
    cls = _family_class(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise TypeError(f"router family {name!r} does not take these parameters: {exc}") from None


def missing_inputs(name: str, X: RouterInputs, *, cost=None, policy_datasets=None) -> str | None:
    """Why family ``name`` cannot run on inputs ``X`` (None when it can)."""
    import importlib.util

    for need in family_requirements(name):
        if need == "cost":
            if cost is None:
                return "needs costs (the pool has none)"
        elif need == "policy_datasets":
            pdat = [] if policy_datasets is None else [v for v in policy_datasets if v is not None and not (isinstance(v, float) and np.isnan(v))]
            if not pdat:
                return "needs each member's training dataset (the policy table's 'dataset' column is empty)"
            if X.dataset is not None and not set(map(str, pdat)) & set(map(str, X.dataset)):
                return "no member's training dataset matches a prompt dataset"
        elif not any(X.has(f) for f in need.split("|")):
            return f"needs prompt {' or '.join(need.split('|'))} (absent)"
    if name == "encoder_head" and importlib.util.find_spec("torch") is None:
        return "needs torch (not installed)"
    return None


