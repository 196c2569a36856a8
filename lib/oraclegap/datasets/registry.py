"""The registry of named pools: entries with their provenance, license and files, the roots they
are read from, and ``load``, ``available``, ``describe`` and ``title``.

Every entry module of :mod:`oraclegap.datasets` registers its entries here when the package is
imported; names use hyphens, underscores are accepted as aliases, and ``name@SEED`` sets the seed
of simulated and paper pools.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from .._datalog import declare as _declare
from .._validate import check_int
from ..pool import Pool

#: The project's root (the folder holding ``data/``): four levels above this file.
_REPO = Path(__file__).resolve().parents[3]


def external_dir() -> Path:
    """Root of the external data: ``$OG_EXTERNAL_DIR`` if set, else ``data/external/`` in the project."""
    env = os.environ.get("OG_EXTERNAL_DIR")
    return Path(env).expanduser() if env else _REPO / "data" / "external"


def lab_dir() -> Path:
    """``data/lab/``: the pools, models and adapters the project's policy lab trained (``make lab``)."""
    return _REPO / "data" / "lab"


def paper_dir() -> Path:
    """``data/paper/``: counts and table values the papers publish, transcribed with citations."""
    return _REPO / "data" / "paper"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One registered pool: static facts plus how to build it."""

    name: str
    kind: str  # "simulated" | "paper" | "lab" | "external"
    shape: str  # nominal (n_prompts, n_policies, k)
    description: str
    provenance: str
    license: str
    files: tuple[str, ...] = ()  # relative to the kind's root (external_dir(), paper_dir() or lab_dir())
    builder: Callable | None = dataclasses.field(default=None, repr=False, compare=False)

    def root(self) -> Path | None:
        if self.kind == "external":
            return external_dir()
        if self.kind == "paper":
            return paper_dir()
        if self.kind == "lab":
            return lab_dir()
        return None

    def paths(self) -> list[Path]:
        root = self.root()
        out = [] if root is None else [root / f for f in self.files]
        _declare(*out)  # inputs of a cached book run, present or not (oraclegap._datalog)
        return out

    def missing(self) -> list[Path]:
        return [p for p in self.paths() if not p.exists()]


_REGISTRY: dict[str, Entry] = {}


def _register(entry: Entry) -> None:
    if entry.name in _REGISTRY:  # pragma: no cover - programming error
        raise RuntimeError(f"duplicate registry name {entry.name}")
    _REGISTRY[entry.name] = entry


def _read_json(path: Path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _scores(x) -> dict:
    s = x["scores"]
    if isinstance(s, str):
        s = ast.literal_eval(s)  # literals only: a dict of model -> number
    if not isinstance(s, dict):
        raise ValueError(f"expected a dict of scores, got {type(s).__name__}")
    return s


def _meta(entry: Entry, **extra) -> dict:
    m = {"dataset": entry.name, "kind": entry.kind, "provenance": entry.provenance, "license": entry.license}
    m.update(extra)
    return m


def _split_name(name: str) -> tuple[str, int | None]:
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if "@" in name:
        base, _, s = name.partition("@")
        try:
            return base, int(s)
        except ValueError:
            raise ValueError(f"the seed after '@' must be an integer, got {s!r} in {name!r}") from None
    return name, None


def _entry(name: str) -> Entry:
    base, _ = _split_name(name)
    if base not in _REGISTRY and base.replace("_", "-") in _REGISTRY:
        base = base.replace("_", "-")  # "chen2026_math500" names the same entry as "chen2026-math500"
    if base not in _REGISTRY:
        raise KeyError(f"unknown dataset {name!r}; known names: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[base]


def registry() -> pd.DataFrame:
    """Every registered pool: name, kind, shape, description, provenance, license."""
    return pd.DataFrame(
        [
            {"name": e.name, "kind": e.kind, "shape": e.shape, "description": e.description, "provenance": e.provenance, "license": e.license}
            for e in _REGISTRY.values()
        ]
    )


def describe(name: str) -> dict:
    """Static facts of one entry (plus its file paths and whether they are present)."""
    e = _entry(name)
    return {
        "name": e.name,
        "kind": e.kind,
        "shape": e.shape,
        "description": e.description,
        "provenance": e.provenance,
        "license": e.license,
        "files": [str(p) for p in e.paths()],
        "present": not e.missing(),
    }


#: How the book writes the parts of a registry name (source first, then task and variant).
_TITLE_SOURCE = {"chen2026": "Chen 2026", "routerdc": "RouterDC", "routerbench": "RouterBench",
                 "llmrouter": "LLMRouter", "paper002": "Shihab et al.", "paper000": "arXiv 2609.32996",
                 "lab": "lab", "sim": "simulated"}
_TITLE_PART = {"math500": "MATH-500", "humanevalplus": "HumanEval+", "gpqa": "GPQA", "gsm8k": "GSM8K",
               "humaneval": "HumanEval", "mbpp": "MBPP", "javascript": "HumanEval-JS", "mmlu": "MMLU",
               "arc-challenge": "ARC-Challenge", "arc-easy": "ARC-Easy", "arc": "ARC-Challenge",
               "cmmlu": "CMMLU", "ceval": "C-Eval", "math-prealgebra": "MATH prealgebra",
               "winogrande": "Winogrande", "hellaswag": "HellaSwag", "all": "three tasks",
               "k1-all": "one-answer sets", "single": "single draw", "greedy": "greedy decoding",
               "mini": "mini", "routeprofile": "RouteProfile", "dcrouter": "DCRouter",
               "mmlu-pro": "MMLU-Pro", "k64": "64 responses", "val": "validation",
               "routerbench-mini": "ken-ab routerbench-mini"}  # not RouterBench (Hu et al.)


def title(name: str) -> str:
    """The human name of a registry entry for tables and figures ("routerdc-gsm8k-test" ->
    "RouterDC GSM8K test"); an unregistered name is titled by the same rules."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty registry name, got {name!r}")
    base = name.split("@")[0]
    if base in _TITLE_PART:
        return _TITLE_PART[base]
    source, _, rest = base.partition("-")
    words = [_TITLE_SOURCE.get(source, source)]
    while rest:  # the longest known part first ("arc-challenge" before "arc")
        parts = rest.split("-")
        for j in range(len(parts), 0, -1):
            head = "-".join(parts[:j])
            if head in _TITLE_PART or j == 1:
                words.append(_TITLE_PART.get(head, head))
                rest = "-".join(parts[j:])
                break
    return " ".join(words)


def available(kind: str | None = None) -> pd.DataFrame:
    """The registry with ``present`` (all files found) and ``path`` (the first file, or empty)."""
    if kind is not None and kind not in ("simulated", "paper", "lab", "external"):
        raise ValueError(f"kind must be 'simulated', 'paper', 'lab', 'external' or None, got {kind!r}")
    rows = []
    for e in _REGISTRY.values():
        if kind is not None and e.kind != kind:
            continue
        paths = e.paths()
        rows.append(
            {
                "name": e.name,
                "kind": e.kind,
                "shape": e.shape,
                "provenance": e.provenance,
                "license": e.license,
                "present": not e.missing(),
                "path": str(paths[0]) if paths else "",
            }
        )
    return pd.DataFrame(rows, columns=["name", "kind", "shape", "provenance", "license", "present", "path"])


def load(name: str, **params) -> Pool:
    """Build the registered pool ``name`` (``name@SEED`` sets the seed of simulated and paper pools).

    Unknown name: ``KeyError`` listing the known names. Known external entry without its
    files: ``FileNotFoundError`` naming the first missing path and ``OG_EXTERNAL_DIR``.
    """
    e = _entry(name)
    _, seed = _split_name(name)
    missing = e.missing()
    if missing:
        if e.kind == "external":
            raise FileNotFoundError(
                f"dataset {e.name!r} needs {missing[0]} (and {len(missing) - 1} more file(s)) which is missing; "
                f"set OG_EXTERNAL_DIR to the folder holding the released data (now {external_dir()}) "
                "or run `python -m oraclegap.datasets fetch` where the network allows"
            )
        raise FileNotFoundError(f"dataset {e.name!r} needs {missing[0]}, which is missing from the project")
    if seed is not None:
        if e.kind in ("external", "lab"):
            raise ValueError(f"{e.name!r} holds sampled responses; a seed ('@{seed}') applies only to simulated and paper pools")
        params.setdefault("seed", seed)
    if "seed" in params and params["seed"] is not None and not isinstance(params["seed"], np.random.Generator):
        params["seed"] = check_int(params["seed"], "seed", minimum=0)
    return e.builder(e, **params)


def load_optional(name: str, **params) -> tuple[Pool | None, str | None]:
    """``(pool, None)`` when ``name`` loads, else ``(None, reason)``: for chapter sections that
    use real data when it is present and say why they were skipped when it is not."""
    try:
        return load(name, **params), None
    except (KeyError, FileNotFoundError, ValueError) as exc:
        return None, (str(exc.args[0]) if exc.args else type(exc).__name__).splitlines()[0]
