"""Routers: rules that choose one member per prompt from what a deployed system sees before
answering, behind one scikit-learn-style interface (paper 000 Section 3.3 and Appendix B.2; paper
002 Section 3.3, Appendix D.5).

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

Where things are: :mod:`~oraclegap.deploy.routers.base` (the interface, the checks and the
choice rule), :mod:`~oraclegap.deploy.routers.featurise` (featurisations shared between fits),
the families by kind (:mod:`~oraclegap.deploy.routers.fixed`, ``text``, ``knn``, ``embedding``,
``post``, ``estimator``), paper 000's presets (:mod:`~oraclegap.deploy.routers.paper000`) and the
registry that lists them (:mod:`~oraclegap.deploy.routers.registry`). The names below are
re-exported here, so ``oraclegap.deploy.routers.X`` reaches each of them.
"""

from __future__ import annotations

from ..features import RouterInputs, handcrafted_features, router_inputs, simulated_router_pool
from .base import (
    Router,
    SoftmaxRegression,
    check_cost,
    check_lambda,
    check_targets,
    choose,
)
from .embedding import (
    ClusterBest,
    EmbedPCALogReg,
    EncoderHead,
    KMeansBest,
    MatrixFactorization,
    MLPRouter,
    MultiLogReg,
    TagExpert,
)
from .estimator import EstimatorRouter
from .featurise import shared_neighbours
from .fixed import BestSingle, Cheapest, DatasetIdentity, RandomRouter, TaskwiseBest
from .knn import EmbedKNN, TfidfKNN, cosine_topk
from .paper000 import (
    PAPER000_FAMILIES,
    PAPER000_KEYWORDS,
    PAPER000_TFIDF,
    PRESETS,
    Paper000BestSingle,
    Paper000Boosted,
    Paper000KNN,
    Paper000Linear,
    keyword_counts,
)
from .post import CalibratedConfidence, MaxConfidence, PluralityVote
from .registry import (
    FAMILIES,
    LABELS,
    LIBRARY,
    POST_INFERENCE,
    PRE_ANSWER,
    family_requirements,
    label,
    make_router,
    missing_inputs,
)
from .text import GBRFeatures, TfidfLogReg

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
    "LIBRARY",
    "PRESETS",
    "family_requirements",
    "missing_inputs",
    "choose",
    "check_targets",
    "check_cost",
    "check_lambda",
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
    "cosine_topk",
    "handcrafted_features",
    "PAPER000_FAMILIES",
    "PAPER000_KEYWORDS",
    "PAPER000_TFIDF",
    "keyword_counts",
    "Paper000KNN",
    "Paper000Linear",
    "Paper000Boosted",
    "Paper000BestSingle",
]
