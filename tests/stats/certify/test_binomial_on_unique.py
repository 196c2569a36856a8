"""Special functions evaluated once per distinct argument (stats.certify.binomial._on_unique) give
the very floats of the elementwise call, on the shapes the coverage simulations use."""

import numpy as np
import pytest
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

from oraclegap.stats import studies
from oraclegap.stats.certify import binomial, gap


def _direct_cp(s, n, alpha):
    s, n = np.asarray(s, dtype=float), np.asarray(n, dtype=float)
    lo, hi = proportion_confint(s, n, alpha=alpha, method="beta")
    return np.where(s <= 0, 0.0, lo), np.where(s >= n, 1.0, hi)


@pytest.mark.parametrize("n", [25, 800])
def test_cp_equals_elementwise_with_scalar_n(n):
    s = np.random.default_rng(n).binomial(n, 0.6, size=(3000, 8)).astype(float)
    lo, hi = binomial._cp(s, n, 0.05 / 16)
    dlo, dhi = _direct_cp(s, n, 0.05 / 16)
    assert lo.shape == s.shape and np.array_equal(lo, dlo) and np.array_equal(hi, dhi)


def test_cp_equals_elementwise_with_array_n():
    rng = np.random.default_rng(1)
    n = rng.integers(1, 60, size=(2000, 1)) * np.ones((1, 3))
    s = rng.binomial(n.astype(int), 0.3).astype(float)
    lo, hi = binomial._cp(s, n, 0.05)
    dlo, dhi = _direct_cp(s, n, 0.05)
    assert np.array_equal(lo, dlo) and np.array_equal(hi, dhi)


def test_naive_percentile_equals_elementwise():
    rng = np.random.default_rng(2)
    c = rng.binomial(100, 0.5, size=(4000, 4))
    o = c.max(axis=1) + rng.integers(0, 20, size=4000)
    lo, hi = gap._naive_bounds(c, o, 100, 0.05, "percentile")
    g = (o - c.max(axis=1)) / 100.0
    assert np.array_equal(lo, binom.ppf(0.025, 100, g) / 100)
    assert np.array_equal(hi, binom.ppf(0.975, 100, g) / 100)


def test_on_unique_falls_back_and_keeps_shapes():
    calls = []

    def f(a, b):
        calls.append(np.size(a))
        return np.asarray(a) * 2 + np.asarray(b)

    x = np.tile(np.arange(5.0), 200).reshape(40, 25)
    out = binomial._on_unique(f, x, 1.0)
    assert np.array_equal(out, x * 2 + 1) and calls[-1] == 5  # five distinct values, one call each
    y = x.copy()
    y[0, 0] = np.nan  # non-finite: the direct call
    assert np.array_equal(binomial._on_unique(f, y, 1.0), y * 2 + 1, equal_nan=True) and calls[-1] == y.size
    z = np.linspace(0, 1, 1000)  # all distinct: the direct call
    assert np.array_equal(binomial._on_unique(f, z, z[::-1]), z * 2 + z[::-1]) and calls[-1] == z.size
    w = np.arange(10.0)  # below the size threshold: the direct call
    assert np.array_equal(binomial._on_unique(f, w, 0.0), w * 2) and calls[-1] == w.size


def test_gap_coverage_same_with_and_without_sharing(monkeypatch):
    pop = studies.mixture_population(np.r_[0.6, np.full(4, 0.57)])
    meth = ("naive", "naive-percentile", "exact", "paired")
    a = studies.gap_coverage(pop, 60, reps=3000, methods=meth, seed=3)
    monkeypatch.setattr(binomial, "_UNIQUE_MIN", 10**12)  # every call elementwise
    b = studies.gap_coverage(pop, 60, reps=3000, methods=meth, seed=3)
    assert a.equals(b)


# ---------------------------------------------------------------- the TF-IDF + SVD embedding cache
def _texts(n=120, seed=0):
    rng = np.random.default_rng(seed)
    words = np.array("alpha beta gamma delta prime sum angle circle code loop tree graph".split())
    return [" ".join(rng.choice(words, 8)) for _ in range(n)]


def test_tfidf_svd_cache_returns_the_fitted_floats(tmp_path):
    from oraclegap.deploy import features as F

    texts = _texts()
    fresh = F.tfidf_svd_embeddings(texts, cache=False)
    first = F.tfidf_svd_embeddings(texts, cache=tmp_path)
    files = sorted(tmp_path.glob("tfidf-svd-*.npz"))
    assert len(files) == 1 and np.array_equal(first, fresh)
    again = F.tfidf_svd_embeddings(texts, cache=tmp_path)
    assert np.array_equal(again, fresh) and again.dtype == fresh.dtype
    # another text, dim or seed: another entry
    F.tfidf_svd_embeddings(texts[:-1] + ["alpha"], cache=tmp_path)
    F.tfidf_svd_embeddings(texts, dim=8, cache=tmp_path)
    F.tfidf_svd_embeddings(texts, seed=1, cache=tmp_path)
    assert len(list(tmp_path.glob("tfidf-svd-*.npz"))) == 4
    # a damaged entry is recomputed and replaced
    files[0].write_bytes(b"not an npz")
    assert np.array_equal(F.tfidf_svd_embeddings(texts, cache=tmp_path), fresh)
    with np.load(files[0], allow_pickle=False) as z:
        assert np.array_equal(z["embeddings"], fresh)


def test_tfidf_svd_cache_keyed_by_the_code(tmp_path, monkeypatch):
    from oraclegap.deploy import features as F

    texts = _texts(60, 1)
    F.tfidf_svd_embeddings(texts, cache=tmp_path)
    monkeypatch.setattr(F, "_TFIDF_SVD_VERSION", "another-version")
    F.tfidf_svd_embeddings(texts, cache=tmp_path)
    assert len(list(tmp_path.glob("tfidf-svd-*.npz"))) == 2


def test_router_inputs_tfidf_svd_reads_the_cache(tmp_path):
    from oraclegap.deploy.features import router_inputs, simulated_router_pool

    pool = simulated_router_pool(80, 3, 1, seed=2).pool
    a = router_inputs(pool, embed="tfidf-svd", cache=tmp_path)
    b = router_inputs(pool, embed="tfidf-svd", cache=tmp_path)
    c = router_inputs(pool, embed="tfidf-svd", cache=False)
    assert len(list(tmp_path.glob("tfidf-svd-*.npz"))) == 1
    assert np.array_equal(a.embeddings, c.embeddings) and np.array_equal(b.embeddings, c.embeddings)


# ---------------------------------------------------------------- featurisations shared between router fits
def test_shared_featurisations_give_the_fits_of_fresh_ones(monkeypatch):
    """Every family that reads text gives the same utilities with the shared featurisations as
    with each fit computing its own (the memo switched off)."""
    from oraclegap.deploy.evaluate import evaluate_routers
    from oraclegap.deploy.features import router_inputs, simulated_router_pool
    from oraclegap.deploy.routers import featurise as RT

    sim = simulated_router_pool(160, 3, 1, strength=0.3, seed=5)
    X = router_inputs(sim.pool, embed="tfidf-svd", cache=False)
    fams = ["tfidf_logreg", "tfidf_knn", "gbr_features", "paper000_knn", "paper000_linear", "paper000_boosted"]
    kw = dict(split="half", seed=1, inputs=X, n_boot=200, params={"gbr_features": {"max_iter": 10},
                                                                 "paper000_boosted": {"n_estimators": 10}})
    RT._SHARED.clear()
    shared = evaluate_routers(sim.pool, fams, **kw)
    assert any(k[0] == "tfidf-fit" for k in RT._SHARED) and any(k[0] == "handcrafted" for k in RT._SHARED)
    monkeypatch.setattr(RT, "_SHARED_SIZE", 0)  # nothing kept: every fit featurises on its own
    RT._SHARED.clear()
    fresh = evaluate_routers(sim.pool, fams, **kw)
    assert not RT._SHARED
    for f in ["best_single", *fams]:
        assert np.array_equal(shared.evaluation(f).utility, fresh.evaluation(f).utility), f
        assert np.array_equal(shared.evaluation(f).choice, fresh.evaluation(f).choice), f
    drop = [c for c in shared.frame().columns if "second" in c]
    a, b = shared.frame().drop(columns=drop), fresh.frame().drop(columns=drop)
    assert a.equals(b)


def test_shared_featurisations_are_copies():
    from oraclegap.deploy.routers import featurise as RT
    from oraclegap.deploy.routers.paper000 import _paper000_text_features

    texts = ["what is 2 + 2?", "find the angle of a triangle", "def f(x): return x"] * 4
    a, b = RT._handcrafted(texts), RT._handcrafted(texts)
    a.iloc[0, 0] = -1.0
    assert b.iloc[0, 0] != -1.0 and RT._handcrafted(texts).iloc[0, 0] != -1.0
    v1, Z1 = RT._tfidf_fit(texts, ngram_range=(1, 2))
    v2, Z2 = RT._tfidf_fit(texts, ngram_range=(1, 2))
    assert v1 is v2 and Z1 is not Z2 and (Z1 != Z2).nnz == 0
    Z1.data[:] = 0.0
    assert RT._tfidf_fit(texts, ngram_range=(1, 2))[1].sum() > 0
    v3, _ = RT._tfidf_fit(texts, ngram_range=(1, 1))  # other settings: another vectorizer
    assert v3 is not v1
    P = _paper000_text_features(texts)
    P[:] = 0
    assert _paper000_text_features(texts).any()


# ---------------------------------------------------------------- one neighbour search per split
def test_shared_neighbours_equal_fresh_searches():
    from oraclegap.deploy import routers as RT
    from oraclegap.deploy.features import router_inputs, simulated_router_pool
    from oraclegap.deploy.routers import featurise, knn

    sim = simulated_router_pool(200, 4, 1, strength=0.3, seed=7)
    X = router_inputs(sim.pool, embed="tfidf-svd", cache=False)
    Y = sim.pool.verdicts[:, :, 0].astype(float)
    cal, test = np.arange(0, 200, 2), np.arange(1, 200, 2)
    Xc, Xt = X.take(cal), X.take(test)
    subsets = [[0, 1], [1, 2, 3], [0, 3], [0, 1, 2, 3]]
    fresh = [RT.make_router("embed_knn").fit(Xc, Y[np.ix_(cal, s)]).predict_utility(Xt) for s in subsets]
    calls = []
    real = knn.cosine_topk

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    knn.cosine_topk = counting
    try:
        with RT.shared_neighbours():
            shared = [RT.make_router("embed_knn").fit(Xc, Y[np.ix_(cal, s)]).predict_utility(Xt) for s in subsets]
            # a capped reference sample is not shared (its rows depend on the sample)
            RT.make_router("embed_knn", max_reference=50).fit(Xc, Y[cal]).predict_utility(Xt)
        outside = RT.make_router("embed_knn").fit(Xc, Y[cal]).predict_utility(Xt)
    finally:
        knn.cosine_topk = real
    assert len(calls) == 3  # one search for the four sub-pools, one for the capped router, one outside
    for a, b in zip(fresh, shared, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(outside, fresh[-1])
    assert getattr(featurise._NEIGHBOURS, "memo", None) is None  # the memo ends with the block


def test_pool_sweep_router_gain_equal_with_and_without_sharing(monkeypatch):
    from oraclegap.deploy import compose as CO
    from oraclegap.deploy import routers as RT
    from oraclegap.deploy.features import simulated_router_pool

    pool = simulated_router_pool(240, 5, 1, strength=0.3, seed=8).pool
    kw = dict(by=None, sizes=[1, 2, 3], n_folds=4, n_random=30, seed=0, router="embed_knn", embed="tfidf-svd",
              baselines=("accuracy",))
    a = CO.pool_sweep(pool, **kw)

    @__import__("contextlib").contextmanager
    def off():
        yield

    monkeypatch.setattr(RT, "shared_neighbours", off)  # every sub-pool searches on its own
    b = CO.pool_sweep(pool, **kw)
    assert a.rules["router_gain"].notna().any()
    assert a.rules.equals(b.rules) and a.cells.equals(b.cells)


# ---------------------------------------------------------------- default pool tables built once per shape
def test_default_tables_are_fresh_copies_equal_to_a_new_build(monkeypatch):
    from oraclegap.pool import Pool
    from oraclegap.pool import _fields as P

    v = np.zeros((30, 4, 2), dtype=bool)
    a = Pool.from_array(v)
    a.prompts.loc[0, "text"] = "changed"  # a pool's table is its own
    a.policies.loc[0, "base"] = "changed"
    b = Pool.from_array(v)
    assert b.prompts.loc[0, "text"] is None and b.policies.loc[0, "base"] is None
    monkeypatch.setattr(P, "_DEFAULT_TABLES", {})
    fresh = P._table(P.pd.DataFrame({"id": [f"p{i}" for i in range(30)]}), 30, "id", P.PROMPT_COLUMNS, "prompts",
                     "prompts", [f"p{i}" for i in range(30)])
    assert b.prompts.equals(fresh) and (b.prompts.dtypes == fresh.dtypes).all()
    assert list(b.policies["name"]) == ["m0", "m1", "m2", "m3"]
