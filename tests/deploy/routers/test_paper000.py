"""The four routers of arXiv 2609.32996 (App. B.2) as the paper describes them, registered as
``paper000_*`` families beside the library's defaults."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from oraclegap._threads import limited_threads
from oraclegap.deploy import routers as R
from oraclegap.deploy.routers import (
    FAMILIES,
    PAPER000_FAMILIES,
    PRE_ANSWER,
    make_router,
    paper000,
    router_inputs,
)
from oraclegap.deploy.routers.base import _rank
from oraclegap.deploy.routers.featurise import _tfidf_transform
from oraclegap.pool import Pool


def _text_pool(n=120, seed=0):
    """Prompts of two kinds ('circle ...' / 'triangle ...'); member 0 solves circles, member 2
    triangles, member 1 is mediocre everywhere: the best member is predictable from one word."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 2, n)
    words = np.array(["radius", "angle", "area", "side", "length", "point"])
    text = [("circle " if k == 0 else "triangle ") + " ".join(rng.choice(words, 2)) for k in kind]
    p = np.where(kind[:, None] == 0, [0.9, 0.5, 0.1], [0.1, 0.5, 0.9])
    v = rng.random((n, 3, 8)) < p[:, :, None]
    return Pool.from_array(v, pd.DataFrame({"id": [f"q{i}" for i in range(n)], "text": text})), kind


def test_registered_with_label_and_description():
    assert PAPER000_FAMILIES == ("paper000_knn", "paper000_linear", "paper000_boosted", "paper000_best_single")
    for name in PAPER000_FAMILIES:
        assert name in FAMILIES and name in PRE_ANSWER
        assert FAMILIES[name]["label"].endswith("(2609.32996)")
        assert FAMILIES[name]["description"].startswith("as published in 2609.32996: ")
        assert type(make_router(name)).family == name
    # the library's own families are still there, unchanged
    assert {"tfidf_knn", "tfidf_logreg", "gbr_features", "best_single"} <= set(FAMILIES)


@pytest.mark.parametrize("name", ["paper000_knn", "paper000_linear", "paper000_boosted"])
def test_text_routers_find_the_predictable_member(name):
    pool, kind = _text_pool()
    Y = pool.rates()
    cal, test = np.arange(80), np.arange(80, 120)
    inputs = lambda idx: router_inputs(pool.select(prompts=idx))  # noqa: E731
    r = make_router(name).fit(inputs(cal), Y[cal])
    chosen = r.predict(inputs(test))
    right = np.where(kind[test] == 0, 0, 2)
    assert np.mean(chosen == right) >= 0.9


def test_linear_uses_hard_labels_and_bigrams():
    pool, _ = _text_pool()
    X, Y = router_inputs(pool), pool.rates()
    r = R.Paper000Linear().fit(X, Y)
    np.testing.assert_array_equal(r.labels_, R.choose(Y, r.rank_))
    assert set(r.classes_) <= {0, 1, 2}
    assert any(" " in t for t in r.vectorizer_.vocabulary_)  # word pairs
    U = r.predict_utility(X)
    np.testing.assert_allclose(U.sum(axis=1), 1.0)
    knn = R.Paper000KNN().fit(X, Y)
    assert any(" " in t for t in knn.vectorizer_.vocabulary_) and knn.k_ == 15


def test_linear_is_the_penalised_likelihood_optimum():
    """The fitted coefficients solve the first-order condition of the L2-penalised multinomial
    log-likelihood, X'(onehot - P) = W / C for the weights and sum(onehot - P) = 0 for the
    intercepts, to scikit-learn's tolerance on the per-prompt scale; its penalised loss is no
    higher than the default L-BFGS fit's and within 1e-6 (relative) of a fit run to 1e-10."""
    from sklearn.linear_model import LogisticRegression

    pool, _ = _text_pool(n=200, seed=3)
    X, Y = router_inputs(pool), pool.rates()
    r = R.Paper000Linear().fit(X, Y)
    Z = _tfidf_transform(r.vectorizer_, X.text)
    m, n = r.model_, pool.n_prompts
    onehot = (r.labels_[:, None] == m.classes_[None, :]).astype(float)
    resid = onehot - m.predict_proba(Z)
    grad_w = np.asarray(Z.T @ resid).T - m.coef_ / r.C
    assert np.abs(grad_w).max() / n < 1e-4 and np.abs(resid.sum(axis=0)).max() / n < 1e-4

    def loss(model):
        P = model.predict_proba(Z)
        return -np.log(P[onehot.astype(bool)]).sum() + 0.5 * (model.coef_ ** 2).sum() / r.C

    lbfgs = LogisticRegression(C=r.C, max_iter=1000).fit(Z, r.labels_)
    tight = LogisticRegression(C=r.C, max_iter=5000, tol=1e-10).fit(Z, r.labels_)
    assert loss(m) <= loss(lbfgs) + 1e-9
    assert loss(m) - loss(tight) <= 1e-6 * loss(tight)


def test_linear_with_one_label_routes_to_it():
    pool, _ = _text_pool()
    Y = np.tile([0.2, 0.9, 0.1], (pool.n_prompts, 1))
    r = R.Paper000Linear().fit(router_inputs(pool), Y)
    assert (r.predict(router_inputs(pool)) == 1).all()


def test_boosted_ignores_pool_feature_columns():
    pool, _ = _text_pool()
    Y = pool.rates()
    noisy = pool.prompts.assign(noise=np.random.default_rng(1).normal(size=pool.n_prompts))
    pool2 = Pool.from_array(pool.verdicts, noisy)
    u1 = R.Paper000Boosted().fit(router_inputs(pool), Y).predict_utility(router_inputs(pool))
    u2 = R.Paper000Boosted().fit(router_inputs(pool2), Y).predict_utility(router_inputs(pool2))
    np.testing.assert_allclose(u1, u2)


def test_best_single_is_the_calibration_best():
    pool, _ = _text_pool()
    Y = np.tile([0.2, 0.3, 0.25], (pool.n_prompts, 1))
    assert (make_router("paper000_best_single").fit(router_inputs(pool), Y).predict(router_inputs(pool)) == 1).all()


def test_text_routers_need_text():
    pool = Pool.from_array(np.ones((10, 2, 2), bool))
    with pytest.raises(ValueError, match="text"):
        make_router("paper000_knn").fit(router_inputs(pool), np.ones((10, 2)))


def test_keyword_counts_equal_one_whole_word_count_per_keyword():
    """One scan of each text counts what a separate ``\\bword s?\\b`` count per keyword counts,
    on texts built to trip it: plurals, keywords inside other words (rectangle, arcs, areas),
    neighbours by punctuation, underscores and digits, upper case and non-ASCII letters."""
    rng = np.random.default_rng(5)
    parts = ["angle", "angles", "rectangle", "triangle's", "arc", "arcs", "area", "areas", "arcane",
             "Circle", "CIRCLES", "radius_2", "radius2", "square-root", "tangent.", "degreess",
             "ángle", "chord,", "parallel(", "x", "$", "\n", "diameter", "polygonal"]
    texts = ["".join(rng.choice(parts + [" "] * 8, size=rng.integers(0, 25))) for _ in range(300)]
    texts += ["", "angle angle angles", "arc area arcs areas"]
    low = pd.Series([t.lower() for t in texts], dtype=object)
    ref = np.column_stack([low.str.count(rf"\b{w}s?\b").to_numpy(float) for w in R.PAPER000_KEYWORDS])
    got = R.keyword_counts(texts)
    np.testing.assert_array_equal(got, ref)
    assert got.sum() > 100  # the texts hold many matches
    np.testing.assert_array_equal(R.keyword_counts(texts, ("arc", "area")), ref[:, [14, 5]])


def test_boosted_histogram_trees_equal_exact_split_trees_when_features_fit_the_bins():
    """With at most 255 distinct values per feature every split point is a bin edge, so the
    histogram ensemble grows the exact-split ensemble's trees (GradientBoostingRegressor, same
    sizes); they differ only by the histogram method's float32 gradients."""
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(0)
    F = rng.integers(0, 40, size=(400, 6)).astype(float)
    y = 0.5 * (rng.random(400) < 0.3 + 0.4 * (F[:, 0] > 20)) + 0.1 * rng.random(400)
    r = R.Paper000Boosted()
    exact = GradientBoostingRegressor(n_estimators=r.n_estimators, max_depth=r.max_depth,
                                      learning_rate=r.learning_rate, random_state=0).fit(F, y)
    texts = [f"q{i}" for i in range(400)]
    X = router_inputs(Pool.from_array(np.zeros((400, 2, 1), bool), pd.DataFrame({"id": texts, "text": texts})))
    import unittest.mock as mock

    with mock.patch.object(paper000, "_paper000_text_features", lambda t: F):
        r.fit(X, np.column_stack([y, y[::-1]]))
    hist = r.models_[0]
    assert hist.n_iter_ == 100 and max(tree.get_max_depth() for stage in hist._predictors for tree in stage) <= 3
    np.testing.assert_allclose(hist.predict(F), exact.predict(F), atol=1e-7)
    assert np.abs(hist.predict(F) - y.mean()).max() > 0.1  # the trees did split


# ---------------------------------------------------------------------------------------------------------------
# Each preset against an independent re-implementation of App. B.2's stated rule on a tiny k = 1 pool, written
# here with numpy and scikit-learn directly. App. B.2 names no tie rule; the presets break ties towards the
# lowest member index (a plain argmax), so the re-implementations use np.argmax. The pool is built so that this
# matters: member 0 is the weakest on average (the incumbent-first rule of the library's families would choose
# otherwise on tied prompts), and at k = 1 many prompts are solved by every member or by none.
_VOCAB = np.array(["angle", "circle", "radius", "triangle", "area", "side", "find", "value", "the", "of", "x",
                   "length", "chord", "arc", "point", "line", "segment", "degree", "square", "sum"])


def _k1_pool(n=140, M=4, seed=11):
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, 2, n)
    texts = []
    for t in topic:
        words = rng.choice(_VOCAB[:10] if t == 0 else _VOCAB[8:], rng.integers(5, 11))
        texts.append(" ".join(words) + f" {rng.integers(1, 90)}")
    p = np.array([[0.30, 0.55, 0.60, 0.50], [0.30, 0.50, 0.45, 0.65]])[topic][:, :M]
    v = (rng.random((n, M)) < p)[:, :, None]
    prompts = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "text": texts})
    return Pool.from_array(v, prompts)


def _halves(pool, n_cal=90):
    idx = np.arange(pool.n_prompts)
    X = router_inputs(pool.select(prompts=idx[:n_cal])), router_inputs(pool.select(prompts=idx[n_cal:]))
    Y = pool.rates()
    return X, (Y[:n_cal], Y[n_cal:]), list(pool.prompts["text"][:n_cal]), list(pool.prompts["text"][n_cal:])


def _incumbent_choice(U, Ycal):
    return R.choose(U, _rank(Ycal.mean(axis=0)))


def test_k1_pool_makes_the_tie_rule_matter():
    pool = _k1_pool()
    Y = pool.rates()
    assert Y.mean(axis=0).argmax() != 0 and Y.mean(axis=0).argmin() == 0
    tied = (Y == Y.max(axis=1, keepdims=True)).sum(axis=1) > 1
    assert tied.mean() > 0.3  # all-right / all-wrong / several-right prompts


def test_knn_equals_an_independent_tfidf_cosine_15nn():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.neighbors import NearestNeighbors

    (Xc, Xt), (Yc, Yt), tc, tt = _halves(_k1_pool())
    vec = TfidfVectorizer(ngram_range=(1, 2), max_features=4000).fit(tc)
    nn = NearestNeighbors(n_neighbors=15, metric="cosine", algorithm="brute").fit(vec.transform(tc))
    idx = nn.kneighbors(vec.transform(tt), return_distance=False)
    mean = Yc[idx].mean(axis=1)
    want = mean.argmax(axis=1)
    r = make_router("paper000_knn").fit(Xc, Yc)
    np.testing.assert_array_equal(r.predict(Xt), want)
    np.testing.assert_allclose(r.predict_utility(Xt), mean)
    assert (_incumbent_choice(mean, Yc) != want).sum() >= 3  # the tie rule is what the test checks


def test_linear_equals_an_independent_multinomial_logit_on_argmax_labels():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    (Xc, Xt), (Yc, Yt), tc, tt = _halves(_k1_pool())
    vec = TfidfVectorizer(ngram_range=(1, 2), max_features=4000).fit(tc)
    labels = Yc.argmax(axis=1)  # ties (every member right, or none) to the lowest index
    clf = LogisticRegression(C=1.0, max_iter=10000, tol=1e-10).fit(vec.transform(tc), labels)
    want = clf.predict(vec.transform(tt))
    r = make_router("paper000_linear").fit(Xc, Yc)
    np.testing.assert_array_equal(r.labels_, labels)
    np.testing.assert_array_equal(r.predict(Xt), want)
    P = np.zeros((len(tt), Yc.shape[1]))
    P[:, clf.classes_] = clf.predict_proba(vec.transform(tt))
    # one optimum, two solvers: the preset's Newton-CG stops at scikit-learn's default tolerance (1e-4), the
    # reference runs L-BFGS to 1e-10, so the probabilities agree to a few 1e-4 and the choices exactly
    np.testing.assert_allclose(r.predict_utility(Xt), P, atol=2e-3)
    assert (R.choose(Yc, _rank(Yc.mean(axis=0))) != labels).sum() >= 5  # incumbent-first ties would differ


def test_boosted_equals_independent_per_member_ensembles():
    """One histogram gradient-boosted ensemble per member (the sizes the preset states: 100 depth-3 trees,
    learning rate 0.1, leaves of any size, no early stopping) on the preset's text features, written here with
    scikit-learn directly: equal utilities and equal choices. Exact-split trees (GradientBoostingRegressor) are
    not the reference here: on 0/1 targets several splits of the calibration prompts tie in gain and the two
    algorithms break those ties differently, so their choices on new prompts differ even where every split
    point is a bin edge (on MMLU-Pro's held-out half the two accuracies differ by 0.002, inventory row App. B.2)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    (Xc, Xt), (Yc, Yt), tc, tt = _halves(_k1_pool())
    Fc = np.hstack([R.handcrafted_features(tc).to_numpy(float), R.keyword_counts(tc)])
    Ft = np.hstack([R.handcrafted_features(tt).to_numpy(float), R.keyword_counts(tt)])
    def ensemble():
        return HistGradientBoostingRegressor(max_iter=100, max_depth=3, learning_rate=0.1, max_leaf_nodes=None,
                                             min_samples_leaf=1, early_stopping=False, random_state=0)

    with limited_threads(1, "openmp"):  # small fits: more OpenMP threads only spin-wait
        P = np.column_stack([ensemble().fit(Fc, Yc[:, m]).predict(Ft) for m in range(Yc.shape[1])])
    P = np.clip(P, 0.0, 1.0)
    r = make_router("paper000_boosted").fit(Xc, Yc)
    np.testing.assert_allclose(r.predict_utility(Xt), P, atol=1e-9)
    np.testing.assert_array_equal(r.predict(Xt), P.argmax(axis=1))


def test_best_single_is_the_first_of_the_best_validation_means():
    (Xc, Xt), (Yc, _), _, _ = _halves(_k1_pool())
    r = make_router("paper000_best_single").fit(Xc, Yc)
    assert (r.predict(Xt) == Yc.mean(axis=0).argmax()).all()
    Y2 = np.zeros((4, 3))
    Y2[[0, 1], 2] = 1.0
    Y2[[2, 3], 1] = 1.0  # members 1 and 2 tie for the best mean: the lower index is chosen
    X2 = router_inputs(_k1_pool(n=4, M=3))
    assert (make_router("paper000_best_single").fit(X2, Y2).predict(X2) == 1).all()


def test_tie_order_is_the_presets_own():
    """The presets' lowest-index ties leave the library's families on incumbent-first ties."""
    pool = _k1_pool()
    X, Y = router_inputs(pool), pool.rates()
    for name in PAPER000_FAMILIES:
        np.testing.assert_array_equal(make_router(name).fit(X, Y).rank_, np.arange(Y.shape[1]))
    for name in ("tfidf_knn", "best_single"):
        np.testing.assert_array_equal(make_router(name).fit(X, Y).rank_, _rank(Y.mean(axis=0)))
    knn = make_router("paper000_knn").fit(X, Y)
    np.testing.assert_array_equal(knn.with_targets(Y[:, ::-1]).rank_, np.arange(Y.shape[1]))


def test_registry_is_built_once():
    """The presets sit in the one registry: FAMILIES, PRE_ANSWER and the labels all come from it."""
    assert PRE_ANSWER == tuple(f for f, v in FAMILIES.items() if v["regime"] == "pre-answer")
    assert PRE_ANSWER[-4:] == PAPER000_FAMILIES
    for name in PAPER000_FAMILIES:
        cls = type(make_router(name))
        assert cls.family == name and R.label(name) == FAMILIES[name]["label"] == cls.label
        assert FAMILIES[name]["needs"] == R.family_requirements(name)


@pytest.mark.slow
def test_presets_equal_the_re_implementations_on_mmlu_pro_held_out_half(external_dir):
    """The same re-implementations on a real k = 1 pool (MMLU-Pro, 29 models): fitted on a random half, every
    test-half choice equal, and so every accuracy. App. B.2 publishes its routers' figures only for its own
    Geometry3K and MathVista pools, whose responses were not released, so no published accuracy applies."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import NearestNeighbors

    from oraclegap import datasets as D

    if not (external_dir / D.MMLUPRO).is_dir():
        pytest.skip(f"{D.MMLUPRO} is not under OG_EXTERNAL_DIR={external_dir}")
    pool = D.load("mmlu-pro")
    O = pool.verdicts[:, :, 0].astype(float)
    half = np.random.default_rng(0).permutation(pool.n_prompts)
    cal, te = np.sort(half[: pool.n_prompts // 2]), np.sort(half[pool.n_prompts // 2:])
    X = router_inputs(pool, embed="none")
    text = pool.prompts["text"].astype(str).to_numpy()
    vec = TfidfVectorizer(ngram_range=(1, 2), max_features=4000).fit(text[cal])
    Zc, Zt = vec.transform(text[cal]), vec.transform(text[te])
    nn = NearestNeighbors(n_neighbors=15, metric="cosine", algorithm="brute").fit(Zc)
    idx = nn.kneighbors(Zt, return_distance=False)
    want = {"paper000_knn": O[cal][idx].mean(axis=1).argmax(axis=1),
            "paper000_linear": LogisticRegression(C=1.0, max_iter=2000).fit(Zc, O[cal].argmax(axis=1)).predict(Zt)}
    for name, w in want.items():
        got = make_router(name).fit(X.take(cal), O[cal]).predict(X.take(te))
        assert np.mean(got == w) >= 0.999, name  # a few near-equal probabilities may fall either way
        assert abs(O[te, got].mean() - O[te, w].mean()) <= 0.001, name
