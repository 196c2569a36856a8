"""Paper 000's four routers as its Appendix B.2 states them (arXiv 2609.32996, "Text-based
routers"; Section 3.3): text k-NN, linear on the hard best-member label, boosted per-member
correctness and the validation best single, declared in one table (``PRESETS``) that the registry
reads beside the library's families.

The library's families are stronger variants (soft choice-distribution targets, pool feature
columns, sublinear TF-IDF, incumbent-first ties); these presets follow App. B.2, so that the book
can set the paper's routers beside the library's. What App. B.2 states, each preset does; what it
leaves open is named in the preset's docstring with the choice made here. Choices common to all
four:

* targets: each member's validation success rate as given (``Y``; at k = 1 its correctness).
  App. B.1 also defines a Beta-smoothed rate (s + a) / (k + a + b) with one prior per split; that
  is an increasing affine map of the raw rate shared by all members, so it leaves every hard
  label, every neighbour mean's argmax and every squared-loss tree ensemble's argmax unchanged:
  the raw rate gives the same choices.
* ties: App. B.2 says "the member with the highest" rate and names no tie rule. Ties go to the
  lowest member index (a plain argmax over the members in pool order), as the authors' released
  code does (github.com/KurbanIntelligenceLab/oracle-gaps, lib/csm_router.py), not to the
  calibration incumbent as the library's families do. This applies to the training labels and to
  every choice; at k = 1 a prompt that all members solve (or none) is such a tie.
* one fit: the paper reports the median over initialisations; a preset is one fit
  (``random_state``), and a caller wanting the median fits several.
"""

from __future__ import annotations

import re

import numpy as np

from ..._threads import limited_threads
from .base import Router, _fit_per_member, _predict_per_member, _seed, choose
from .featurise import _handcrafted, _shared, _texts_digest, _tfidf_fit, _tfidf_transform
from .fixed import BestSingle
from .knn import _KNNMean

__all__ = [
    "PRESETS",
    "PAPER000_FAMILIES",
    "PAPER000_KEYWORDS",
    "PAPER000_TFIDF",
    "keyword_counts",
    "Paper000KNN",
    "Paper000Linear",
    "Paper000Boosted",
    "Paper000BestSingle",
]


def _lowest_index_ties(means: np.ndarray) -> np.ndarray:
    """The tie order of the presets: member index (rank 0 = member 0)."""
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
    label = "k-NN, TF-IDF 1-2-grams (2609.32996)"
    description = "as published in 2609.32996: the best member on the 15 prompts nearest in TF-IDF"
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
    label = "linear, hard label (2609.32996)"
    description = "as published in 2609.32996: logistic regression from TF-IDF to the best member's label"
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
    label = "boosted per-member correctness (2609.32996)"
    description = "as published in 2609.32996: boosted trees per member on handcrafted text features"
    _tie_order = staticmethod(_lowest_index_ties)

    def __init__(self, n_estimators: int = 100, max_depth: int = 3, learning_rate: float = 0.1, random_state=0):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.random_state = random_state

    def _fit(self, X, Y):
        from sklearn.ensemble import HistGradientBoostingRegressor

        with limited_threads(1, "openmp"):  # the OpenMP runtime the import above may have loaded
            self.models_ = _fit_per_member(_paper000_text_features(X.text), Y, lambda: HistGradientBoostingRegressor(
                max_iter=self.n_estimators, max_depth=self.max_depth, max_leaf_nodes=None, min_samples_leaf=1,
                learning_rate=self.learning_rate, early_stopping=False, random_state=_seed(self.random_state)))

    def _utility(self, X):
        return _predict_per_member(self.models_, _paper000_text_features(X.text))


class Paper000BestSingle(BestSingle):
    """000's deployable comparator (App. B.2, "Comparator selection"): the member with the highest mean
    validation rate, on every prompt. Left open, chosen here: ties go to the lowest member index."""

    family = "paper000_best_single"
    label = "best single on validation (2609.32996)"
    description = "as published in 2609.32996: the validation-best member, on every prompt"
    _tie_order = staticmethod(_lowest_index_ties)


#: The four presets of 2609.32996 (App. B.2), in the order of every table; the registry
#: (:mod:`oraclegap.deploy.routers.registry`) lists them after the library's families.
PRESETS: tuple[type[Router], ...] = (Paper000KNN, Paper000Linear, Paper000Boosted, Paper000BestSingle)
#: Their registry names.
PAPER000_FAMILIES = tuple(cls.family for cls in PRESETS)
