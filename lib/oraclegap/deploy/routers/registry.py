"""The registry of router families: one ordered table of family classes (the library's, then
paper 000's presets), each declaring its own name, label, description, inputs, regime and
optional dependency, and everything read from it (``FAMILIES``, ``LABELS``,
``PRE_ANSWER``, ``POST_INFERENCE``, ``make_router``, ``missing_inputs``)."""

from __future__ import annotations

import importlib.util

import numpy as np

from ..features import RouterInputs
from .base import Router
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
from .fixed import BestSingle, Cheapest, DatasetIdentity, RandomRouter, TaskwiseBest
from .knn import EmbedKNN, TfidfKNN
from .paper000 import PRESETS
from .post import CalibratedConfidence, MaxConfidence, PluralityVote
from .text import GBRFeatures, TfidfLogReg

__all__ = [
    "LIBRARY",
    "FAMILIES",
    "LABELS",
    "label",
    "PRE_ANSWER",
    "POST_INFERENCE",
    "make_router",
    "family_requirements",
    "missing_inputs",
]


#: The library's router families in the order of every table (paper 000's presets,
#: :data:`~oraclegap.deploy.routers.paper000.PRESETS`, follow them in the registry).
LIBRARY: tuple[type[Router], ...] = (
    BestSingle,
    TaskwiseBest,
    RandomRouter,
    Cheapest,
    TfidfLogReg,
    GBRFeatures,
    TfidfKNN,
    EmbedPCALogReg,
    EmbedKNN,
    DatasetIdentity,
    MultiLogReg,
    MLPRouter,
    KMeansBest,
    ClusterBest,
    MatrixFactorization,
    TagExpert,
    EncoderHead,
    MaxConfidence,
    CalibratedConfidence,
    PluralityVote,
)

#: What every registered class states in its own body (an inherited value would name its parent).
_DECLARED = ("family", "label", "description")
_REGIMES = ("pre-answer", "post-inference")


def _registry(classes) -> dict[str, type[Router]]:
    """name -> class for the family ``classes``, in their order. Each must be a :class:`Router`
    declaring ``family``, ``label`` and ``description`` in its own class body, with a known
    ``regime`` and a name no other class of the table uses."""
    table: dict[str, type[Router]] = {}
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, Router)):
            raise ValueError(f"a router family must be a Router subclass, got {cls!r}")
        missing = [a for a in _DECLARED if a not in vars(cls)]
        if missing:
            raise ValueError(f"router family class {cls.__name__} must declare {', '.join(missing)} "
                             "in its own class body")
        if cls.regime not in _REGIMES:
            raise ValueError(f"router family {cls.family!r} has regime {cls.regime!r}; expected one of {_REGIMES}")
        if cls.family in table:
            raise ValueError(f"router family {cls.family!r} is declared by both "
                             f"{table[cls.family].__name__} and {cls.__name__}")
        table[cls.family] = cls
    return table


_CLASSES = _registry(LIBRARY + PRESETS)

#: name -> human label (each family class's ``label``; :func:`label` adds the oracle).
LABELS = {name: cls.label for name, cls in _CLASSES.items()}
_OTHER_LABELS = {"oracle": "outcome oracle"}


def label(name: str) -> str:
    """The human label of a router family (or of ``"oracle"``, the outcome oracle); an unknown
    name is returned as it is, so a table of families and other rows maps cleanly."""
    return LABELS.get(name, _OTHER_LABELS.get(name, name))


def _family_class(name: str) -> type[Router]:
    if name not in _CLASSES:
        raise ValueError(f"unknown router family {name!r}; known families: {', '.join(_CLASSES)}")
    return _CLASSES[name]


def family_requirements(name: str) -> tuple:
    """The inputs a family needs (``"features|text"``: either) plus ``"cost"`` / ``"policy_datasets"``."""
    cls = _family_class(name)
    return tuple(cls.needs) + tuple(cls.requires)


#: name -> {"label", "description", "needs" (inputs), "regime" ("pre-answer" | "post-inference"), "optional"}.
FAMILIES: dict[str, dict] = {
    name: {
        "label": cls.label,
        "description": cls.description,
        "needs": family_requirements(name),
        "regime": cls.regime,
        "optional": cls.optional,
    }
    for name, cls in _CLASSES.items()
}
PRE_ANSWER = tuple(k for k, v in FAMILIES.items() if v["regime"] == "pre-answer")
POST_INFERENCE = tuple(k for k, v in FAMILIES.items() if v["regime"] == "post-inference")


def make_router(name: str, **params) -> Router:
    """An unfitted router of family ``name`` (see :data:`FAMILIES`) with ``params``."""
    cls = _family_class(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise TypeError(f"router family {name!r} does not take these parameters: {exc}") from None


def missing_inputs(name: str, X: RouterInputs, *, cost=None, policy_datasets=None) -> str | None:
    """Why family ``name`` cannot run on inputs ``X`` (None when it can)."""
    for need in family_requirements(name):
        if need == "cost":
            if cost is None:
                return "needs costs (the pool has none)"
        elif need == "policy_datasets":
            pdat = [] if policy_datasets is None else [v for v in policy_datasets if v is not None and not (isinstance(v, float) and np.isnan(v))]
            if not pdat:
                return "needs each member's training dataset (the policy table's 'dataset' column is empty)"
            if X.dataset is not None and not set(map(str, pdat)) & set(map(str, X.dataset)):
                return "no member's training dataset matches a prompt dataset"
        elif not any(X.has(f) for f in need.split("|")):
            return f"needs prompt {' or '.join(need.split('|'))} (absent)"
    optional = _family_class(name).optional
    if optional is not None and importlib.util.find_spec(optional) is None:
        return f"needs {optional} (not installed)"
    return None
