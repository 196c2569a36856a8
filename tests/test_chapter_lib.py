"""Helpers that moved from the chapters into the library: the lab slicer (chapter 02), the
dcrouter price reader and the Chen release reader (05), the embedding reason (05), the one
registry of router labels (02, 03, 05), members' names (02, 05) and the family certificate's
power (05)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from oraclegap import datasets
from oraclegap.deploy import features, routers


def test_lab_slice_keeps_one_task_split_and_role():
    cross = datasets.load("lab-cross")
    sec = datasets.lab_slice(cross, "secondary", "test")
    assert set(sec.prompts["dataset"]) == {"secondary"} and set(sec.prompts["split"]) == {"test"}
    assert set(sec.policies["role"]) == {"member"} and set(sec.policies["recipe"]) == {"light"}
    assert set(sec.policies["dataset"]) == {"secondary"}
    n_test = int(((cross.prompts["dataset"] == "secondary") & (cross.prompts["split"] == "test")).sum())
    assert sec.n_prompts == n_test
    base = datasets.lab_slice(cross, "secondary", "test", role="base")
    assert set(base.policies["role"]) == {"base"} and base.n_prompts == n_test
    with pytest.raises(ValueError, match="no prompt of task"):
        datasets.lab_slice(cross, "tertiary", "test")
    with pytest.raises(ValueError, match="not a lab pool"):
        datasets.lab_slice(datasets.load("paper002-pilot-gsm8k"), "secondary", "test")


def test_dcrouter_prices_follow_the_member_order(tmp_path, monkeypatch):
    root = tmp_path / datasets.ULAB / "LLMRouter_dcrouter_preprocessed"
    root.mkdir(parents=True)
    (root / "default_llm.json").write_text(json.dumps({"b": {"input_price": 0.2, "output_price": 0.4},
                                                       "a": {"input_price": 0.1, "output_price": 0.3}}))
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path))
    from oraclegap.pool import Pool

    pool = Pool.from_array(np.ones((3, 2, 1), dtype=bool), policies=["a", "b"])
    assert datasets.dcrouter_prices(pool).tolist() == [0.1, 0.2]
    assert datasets.dcrouter_prices(pool, "output_price").tolist() == [0.3, 0.4]
    with pytest.raises(ValueError, match="field must be"):
        datasets.dcrouter_prices(pool, "price")
    other = Pool.from_array(np.ones((3, 2, 1), dtype=bool), policies=["a", "c"])
    with pytest.raises(ValueError, match="no input_price for members"):
        datasets.dcrouter_prices(other)


def test_chen_release_reads_one_array(tmp_path, monkeypatch):
    root = tmp_path / datasets.CHEN / "humanevalplus"
    root.mkdir(parents=True)
    q = np.linspace(0, 1, 5)
    np.savez(root / "correctness_slim.npz", q_router=q, b=np.zeros((5, 2, 3), dtype=bool))
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path))
    assert np.array_equal(datasets.chen_release("humanevalplus", "q_router"), q)
    with pytest.raises(ValueError, match="has no array 'p_router'"):
        datasets.chen_release("humanevalplus", "p_router")
    with pytest.raises(ValueError, match="bench must be one of"):
        datasets.chen_release("mbpp", "q_router")
    with pytest.raises(ValueError, match="does not exist"):
        datasets.chen_release("math500", "q_router")


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


def test_router_labels_are_one_registry():
    assert set(routers.LABELS) == set(routers.FAMILIES)
    assert len(set(routers.LABELS.values())) == len(routers.LABELS)  # distinct labels
    for name in routers.FAMILIES:
        assert routers.make_router(name).label == routers.LABELS[name] == routers.FAMILIES[name]["label"]
        assert routers.label(name) == routers.LABELS[name]
    assert routers.label("oracle") == "outcome oracle" and routers.label("some-member") == "some-member"


def test_cell_options_read_folded_captions():
    from oraclegap.book import cell_options

    src = ("#| label: tbl-x\n#| tbl-cap: >-\n#|   The first half of a long caption: with a colon,\n"
           "#|   and the rest of it.\n#| echo: false\nshow(1)")
    opts, body = cell_options(src)
    assert opts == {"label": "tbl-x", "tbl-cap": "The first half of a long caption: with a colon, and the rest of it.",
                    "echo": "false"}
    assert body == "show(1)"
    assert cell_options('#| fig-cap: "Short."\nx')[0] == {"fig-cap": "Short."}


def test_member_name_reads_lab_seeds_base_and_hub_names():
    from oraclegap import report as R

    assert R.member_name("primary-light-s1") == "seed 1"
    assert R.member_name("secondary-light-s12") == "seed 12"
    assert R.member_name("base") == "base model"
    assert R.member_name("meta-llama/Meta-Llama-3-8B") == "Meta-Llama-3-8B"
    # a soup, another recipe or a plain model keeps its name
    for name in ("primary-light-soup", "primary-heavy-s1", "gpt-4o"):
        assert R.member_name(name) == name
    for bad in (None, float("nan")):
        with pytest.raises(ValueError, match="member's name"):
            R.member_name(bad)


def _theorem6_certifies(p, rule, alpha, seed):
    """One simulated test set as family_power draws it (all N prompts, seed ``seed``), certified
    by the library's Theorem 6 on the family of the constants and the rule: G_Pi's lower limit
    above zero."""
    from oraclegap.stats import certify

    rng = np.random.default_rng(seed)
    X = (rng.random((1, *p.shape), dtype=np.float32) < p)[0]
    return certify.family_certificate(X, rule, alpha).G.lo > 0


def test_family_power_is_theorem6_on_simulated_test_sets():
    from oraclegap.stats import studies

    rng = np.random.default_rng(4)
    N, K = 80, 3
    p = rng.uniform(0.2, 0.5, (N, K))
    rule = rng.integers(0, K, N)
    p[np.arange(N), rule] = 0.85  # the rule knows each prompt's strong member
    # one test set per seed: the power is Theorem 6's verdict on that set (L = K + 1: the family
    # is the constants and the rule, so family_certificate spends the same budget)
    verdicts = [studies.family_power(p, rule, N, L=K + 1, reps=1, seed=s) for s in range(20)]
    assert verdicts == [float(_theorem6_certifies(p, rule, 0.05, s)) for s in range(20)]
    assert 0 < sum(verdicts) < len(verdicts)  # both verdicts occur, so the match means something


def test_family_power_grows_with_n_and_keeps_its_level_without_a_gain():
    from oraclegap.stats import studies

    rng = np.random.default_rng(5)
    N, K = 200, 4
    p = rng.uniform(0.3, 0.6, (N, K))
    rule = rng.integers(0, K, N)
    p[np.arange(N), rule] += 0.3
    power = [studies.family_power(p, rule, n, L=K + 3, reps=400, seed=1) for n in (100, 200, 800)]
    assert power[0] < power[1] < power[2] and power[2] > 0.9
    # every member equally good everywhere: the gain is 0 and a certificate is a false one, at
    # most alpha of the time (Theorem 6's guarantee; the Monte Carlo error of 2000 reps is 0.005)
    flat = np.full((N, K), 0.5)
    assert studies.family_power(flat, rule, 300, L=K + 1, reps=2000, seed=2) <= 0.05
    # the same seed gives the same share
    assert studies.family_power(p, rule, 100, L=K + 3, reps=50, seed=3) == \
        studies.family_power(p, rule, 100, L=K + 3, reps=50, seed=3)


@pytest.mark.parametrize("kw, match", [
    ({"p": np.full((4, 2), 1.5)}, "probabilities"),
    ({"rule": np.array([0, 1, 2, 0])}, "rule must be"),
    ({"rule": np.array([0.0, 1.0, 0.0, 1.0])}, "rule must be"),
    ({"n": 0}, "n"),
    ({"L": 2}, "L"),
    ({"alpha": 1.5}, "alpha"),
])
def test_family_power_refuses_bad_input(kw, match):
    from oraclegap.stats import studies

    args = {"p": np.full((4, 2), 0.5), "rule": np.array([0, 1, 0, 1]), "n": 4, "L": 3} | kw
    with pytest.raises(ValueError, match=match):
        studies.family_power(args.pop("p"), args.pop("rule"), args.pop("n"), **args)
