"""Any scikit-learn regressor or classifier as a router (``EstimatorRouter``), on the
embedding, the handcrafted and declared prompt features, or TF-IDF of the text."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone, is_classifier

from .base import Router, _quiet
from .featurise import _feature_matrix

__all__ = ["EstimatorRouter"]


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
