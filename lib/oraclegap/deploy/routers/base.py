"""The router interface: input checks, the choice rule r(i) = argmax_m mu^_m(Z_i) - lambda C^_m
with its tie order, the ``Router`` base class every family derives from, and the pieces
several families share (a soft-target softmax regression, embedding standardisation and PCA,
per-member regressors).

A router is fitted on calibration prompts with per-policy targets ``Y`` float[n, M] and predicts
a utility per member, ``predict_utility(X)`` -> float[n, M] (an estimate of mu_m(Z) = E[R_m | Z]);
``predict`` takes the argmax of the utility minus lambda times the normalised mean calibration
cost, ties to the calibration incumbent, then to the lowest index (002 App. F).
"""

from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator

from ..._threads import limited_threads
from ..._validate import check_cost
from ..features import RouterInputs

__all__ = [
    "check_targets",
    "check_cost",
    "check_lambda",
    "choose",
    "SoftmaxRegression",
    "Router",
]


_TIE = 1e-12


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

    Subclasses implement ``_fit(X, Y)`` and ``_utility(X)``. A registered family declares itself
    in its class body (:mod:`oraclegap.deploy.routers.registry` reads these): ``family`` (its
    registry name), ``label`` (the human label of tables and figures), ``description`` (one line
    of at most 100 characters: what the family fits or picks, as a table of families prints it), ``needs``
    (the :class:`RouterInputs` fields it reads; ``"features|text"``: either), ``requires`` (what
    else it needs: ``"cost"``, ``"policy_datasets"``), ``regime`` (``"pre-answer"``, or
    ``"post-inference"`` for selectors that run every member first) and ``optional`` (a package
    it needs that the library does not install, or None). Fitted attributes common to all:
    ``n_policies_``, ``means_`` (calibration mean target per member), ``rank_`` (tie order),
    ``cost_`` (normalised mean calibration cost per member or None), ``cost_scale_``.
    """

    family: str = "router"
    label: str = "router"
    description: str = ""
    needs: tuple = ()
    requires: tuple = ()
    regime: str = "pre-answer"
    optional: str | None = None
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
        # native pools on one thread: gradient boosting and k-means spin-wait for minutes on a
        # shared machine otherwise, and a fit on one thread is the same whatever the thread count
        with limited_threads():
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
        with limited_threads():
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


def _fit_fractional_logistic(Z: np.ndarray, y: np.ndarray, make):
    """A logistic regression ``make()`` of a fractional target y in [0, 1] on features Z, fitted
    by weighted duplication: rows (z, 1) with weight y and (z, 0) with weight 1 - y, zero weights
    dropped. A constant target keeps its mean instead (a float)."""
    if y.max() - y.min() < 1e-12:
        return float(y.mean())
    ZZ = np.vstack([Z, Z])
    lab = np.r_[np.ones(len(y)), np.zeros(len(y))]
    w = np.r_[y, 1 - y]
    keep = w > 0
    return make().fit(ZZ[keep], lab[keep], sample_weight=w[keep])


def _prob_of_one(model, Z: np.ndarray) -> np.ndarray:
    """float[len(Z)]: P(target = 1) per row of Z under a :func:`_fit_fractional_logistic` model
    (its mean where the target was constant)."""
    if isinstance(model, float):
        return np.full(len(Z), model)
    return model.predict_proba(Z)[:, list(model.classes_).index(1.0)]


def _predict_per_member(models: list, F: np.ndarray) -> np.ndarray:
    """float[n, M]: each member's predicted target from :func:`_fit_per_member`'s models, in [0, 1]."""
    cols = [np.full(len(F), g) if isinstance(g, float) else g.predict(F) for g in models]
    return np.clip(np.stack(cols, axis=1), 0.0, 1.0) if cols else np.zeros((len(F), 0))
