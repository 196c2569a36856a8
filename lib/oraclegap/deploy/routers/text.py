"""Router families on the prompt text: TF-IDF 1-2-grams with a multinomial logistic regression on
the choice distribution, and one gradient-boosted regressor per member on handcrafted prompt
features (paper 000's linear and boosted text routers, with per-policy targets)."""

from __future__ import annotations

from .base import (
    Router,
    SoftmaxRegression,
    _choice_distribution,
    _fit_per_member,
    _predict_per_member,
    _seed,
    _tile,
)
from .featurise import _feature_matrix, _tfidf_fit, _tfidf_transform

__all__ = ["TfidfLogReg", "GBRFeatures"]


class TfidfLogReg(Router):
    """TF-IDF of word 1-2-grams (fitted on calibration text) -> multinomial logistic regression on
    the choice distribution Y_i / sum_m Y_im (000's linear text router, with per-policy targets)."""

    needs = ("text",)
    family = "tfidf_logreg"
    label = "TF-IDF logistic"
    description = "softmax regression from word 1-2-gram TF-IDF to each member's share of the successes"

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


class GBRFeatures(Router):
    """One gradient-boosted regressor per member (scikit-learn's histogram GBM) predicting its
    target from handcrafted prompt features (:func:`handcrafted_features`) and the pool's numeric
    feature columns (000's gradient-boosted router)."""

    needs = ("features|text",)
    family = "gbr_features"
    label = "boosted features"
    description = "one boosted-tree regressor per member: its success rate from handcrafted prompt features"

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
