"""The registry of router families (oraclegap.deploy.routers.registry): one ordered table of
family classes, each declaring itself, from which FAMILIES, the labels and the regimes are read."""

from __future__ import annotations

import pytest

from oraclegap.deploy import routers
from oraclegap.deploy import routers as R
from oraclegap.deploy.routers.registry import _registry


def test_every_family_declares_itself_in_its_own_class():
    for name, entry in R.FAMILIES.items():
        cls = type(R.make_router(name))
        for attr in ("family", "label", "description"):
            assert attr in vars(cls), (name, attr)
        assert cls.family == name
        assert entry == {"label": cls.label, "description": cls.description,
                         "needs": tuple(cls.needs) + tuple(cls.requires), "regime": cls.regime,
                         "optional": cls.optional}
        assert R.label(name) == R.LABELS[name] == cls.label


def test_every_description_is_one_distinct_short_line():
    # the book prints them as a table of the families: one line each, and no two alike
    descriptions = [entry["description"] for entry in R.FAMILIES.values()]
    for text in descriptions:
        assert text and "\n" not in text and len(text) <= 100 and text == text.strip(), text
    assert len(set(descriptions)) == len(descriptions)


def test_the_table_is_the_library_then_the_presets():
    assert tuple(R.FAMILIES) == tuple(c.family for c in R.LIBRARY + R.PRESETS)
    assert R.PAPER000_FAMILIES == tuple(c.family for c in R.PRESETS)
    assert set(R.PRE_ANSWER) | set(R.POST_INFERENCE) == set(R.FAMILIES)
    assert not set(R.PRE_ANSWER) & set(R.POST_INFERENCE)
    assert R.PRE_ANSWER == tuple(f for f in R.FAMILIES if type(R.make_router(f)).regime == "pre-answer")


def test_inherited_or_repeated_declarations_are_refused():
    class Undeclared(R.BestSingle):  # inherits best_single's name, label and description
        pass

    with pytest.raises(ValueError, match="must declare family, label, description"):
        _registry([Undeclared])

    class Twin(R.BestSingle):
        family = "best_single"
        label = "twin"
        description = "a second class under the same name"

    with pytest.raises(ValueError, match="declared by both BestSingle and Twin"):
        _registry([R.BestSingle, Twin])

    class Elsewhere(R.Router):
        family = "elsewhere"
        label = "elsewhere"
        description = "an unknown regime"
        regime = "mid-answer"

    with pytest.raises(ValueError, match="regime 'mid-answer'"):
        _registry([Elsewhere])
    with pytest.raises(ValueError, match="Router subclass"):
        _registry([object])
    assert list(_registry([R.BestSingle, R.Cheapest])) == ["best_single", "cheapest"]


def test_optional_dependency_is_reported_by_name(monkeypatch):
    import importlib.util

    pool = R.simulated_router_pool(40, 3, 1, seed=0).pool
    X, bare = R.router_inputs(pool), R.router_inputs(pool, embed="none")
    assert R.FAMILIES["encoder_head"]["optional"] == "torch"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "torch" else real(n, *a))
    assert R.missing_inputs("encoder_head", X) == "needs torch (not installed)"
    assert R.missing_inputs("encoder_head", bare) == "needs prompt embeddings (absent)"  # inputs first
    assert R.missing_inputs("embed_knn", X) is None  # no optional dependency


def test_router_labels_are_one_registry():
    assert set(routers.LABELS) == set(routers.FAMILIES)
    assert len(set(routers.LABELS.values())) == len(routers.LABELS)  # distinct labels
    for name in routers.FAMILIES:
        assert routers.make_router(name).label == routers.LABELS[name] == routers.FAMILIES[name]["label"]
        assert routers.label(name) == routers.LABELS[name]
    assert routers.label("oracle") == "outcome oracle" and routers.label("some-member") == "some-member"
