"""Named pools: simulations by seed, counts the papers publish, and real LLM outcome releases.

``load(name) -> Pool`` builds any registered pool; ``available()`` lists every entry with its
provenance, license and whether its files are present; ``registry()`` and ``describe(name)``
give the static facts. Four kinds of entries:

* ``simulated`` -- generated on the fly (``sim-exchangeable``, ``sim-diffuse``); a seed may be
  appended as ``name@SEED`` (default 0) or passed as ``load(name, seed=...)``.
* ``paper`` -- pools built from integer counts a paper publishes (files in ``data/paper/``,
  cited in ``data/paper/002_sources.json``). Only the margins (each model's correct count and
  the oracle count) are published, so the item-level joint is one random arrangement
  consistent with them (:func:`outcomes_from_margins`); every statistic that depends only on
  the margins -- all of :mod:`oraclegap.stats.certify`'s gap intervals -- is exact on it, anything
  else (splits, routers) is illustrative. ``paper_table(stem)`` reads the transcribed tables.
* ``lab`` -- pools the project's policy lab trained and sampled (``data/lab/``, rebuilt by
  ``make lab``): ``lab-cross`` (both tasks, every policy) and named sub-pools such as
  ``lab-seed-primary`` (the seed pool on primary test prompts; every lab pool has independent
  per-policy draws except ``lab-seed-primary-aligned``, the same seed pool seed-aligned), read through
  :func:`oraclegap.lab.load_pool` (per-response confidences and token counts in ``meta``).
* ``external`` -- released correctness data read in place from ``$OG_EXTERNAL_DIR`` (else
  ``data/external/``, which ``python -m oraclegap.datasets fetch`` fills where the network
  allows). Nothing is copied into the project. npz files are read with
  ``allow_pickle=False`` and only their numeric arrays are used.

Names use hyphens; underscores are accepted as aliases (``chen2026_math500``). Errors: an
unknown name raises ``KeyError`` listing the known names; a known external entry
whose files are missing raises ``FileNotFoundError`` naming the missing path and
``OG_EXTERNAL_DIR``.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from . import _formats
from ._datalog import declare as _declare
from ._io import atomic_write
from ._validate import as_bool_array, as_bool_columns, as_rng, check_int, check_margin_counts
from .pool import Pool

__all__ = [
    "Entry",
    "registry",
    "describe",
    "available",
    "load",
    "load_optional",
    "external_dir",
    "paper_dir",
    "paper_table",
    "outcomes_from_margins",
    "lab_slice",
    "chen_release",
    "dcrouter_prices",
    "fetch",
    "derive_mmlu_pro",
    "main",
]

_REPO = Path(__file__).resolve().parents[2]
CITE_002 = "Shihab et al. (arXiv), 'Opportunity Is Not Realizability: Selection-Valid Diagnostics for Multi-LLM Routing'"


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


# ====================================================================== helpers
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


def _ids_unique(ids: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for x in ids:
        if x in seen:
            seen[x] += 1
            out.append(f"{x}#{seen[x]}")
        else:
            seen[x] = 0
            out.append(x)
    return out


# ====================================================================== simulated
def _sim(generator: str):
    def build(entry: Entry, seed=0, **params) -> Pool:
        from .stats import simulate

        fn = getattr(simulate, generator)
        sim = fn(seed=seed, **params)
        return dataclasses.replace(sim.pool, meta={**sim.pool.meta, **_meta(entry, seed=seed, params=params)})

    return build


_register(
    Entry(
        "sim-exchangeable",
        "simulated",
        "(240, 5, 16)",
        "exchangeable Beta pool (every member shares one rate per prompt; population L = D = 0); name@SEED picks the seed",
        "oraclegap.stats.simulate.exchangeable (Beta prior fitted on Geometry3K in arXiv 2609.32996)",
        "MIT (generated)",
        builder=_sim("exchangeable"),
    )
)
_register(
    Entry(
        "sim-diffuse",
        "simulated",
        "(240, 5, 16)",
        "diffuse log-odds perturbation of the exchangeable pool (sigma=0.5); name@SEED picks the seed",
        "oraclegap.stats.simulate.diffuse",
        "MIT (generated)",
        builder=_sim("diffuse"),
    )
)


# ====================================================================== the policy lab (data/lab)
LAB_PROV = "the project's policy lab (oraclegap.lab, `make lab`): GRPO + LoRA policies on a tiny Llama base, trained on CPU"


def _lab(stored: str, *, dataset: str | None = None, split: str | None = None, policies=None):
    """A builder for a lab pool, optionally restricted to prompts of one ``dataset`` and ``split``
    and to ``policies`` (a predicate on the policy table)."""

    def build(entry: Entry, seed=None) -> Pool:
        from . import lab

        pool = lab.load_pool(stored, lab_dir())
        keep = np.ones(pool.n_prompts, dtype=bool)
        if dataset is not None:
            keep &= pool.prompts["dataset"].astype(str).to_numpy() == dataset
        if split is not None:
            keep &= pool.prompts["split"].astype(str).to_numpy() == split
        cols = None if policies is None else policies(pool.policies).to_numpy()
        sub = pool.select(prompts=keep, policies=cols)
        return dataclasses.replace(sub, meta={**sub.meta, **_meta(entry, stored_pool=stored, dataset_filter=dataset,
                                                               split_filter=split)})

    return build


def _light(task: str):
    return lambda t: (t["role"] == "member") & (t["recipe"] == "light") & (t["dataset"] == task)


for _name, _stored, _shape, _desc, _kw in (
    ("lab-cross", "cross", "(960, 17, 16)", "validation and test prompts of both lab tasks; base, 5 light and 2 stronger seeds per task, both soups", {}),
    ("lab-seed-primary", "cross", "(240, 5, 16)", "the seed pool: primary test prompts, the five light primary seeds (Table 1's analog)",
     {"dataset": "primary", "split": "test", "policies": _light("primary")}),
    ("lab-seed-primary-val", "cross", "(240, 5, 16)", "the seed pool on primary validation prompts (for selecting members and fitting routers)",
     {"dataset": "primary", "split": "validation", "policies": _light("primary")}),
    ("lab-seed-secondary", "cross", "(240, 5, 16)", "secondary test prompts, the five light secondary seeds",
     {"dataset": "secondary", "split": "test", "policies": _light("secondary")}),
    ("lab-seed-primary-aligned", "primary-aligned", "(240, 5, 16)",
     "the seed pool of lab-seed-primary sampled with seed-aligned draws (draw j: one seed under every member; "
     "for teaching common random numbers)", {"policies": _light("primary")}),
    ("lab-primary-k64", "primary-k64", "(240, 6, 64)", "primary test prompts, base and five light primary seeds, 64 responses", {}),
    ("lab-secondary-k64", "secondary-k64", "(240, 6, 64)", "secondary test prompts, base and five light secondary seeds, 64 responses", {}),
    ("lab-primary-extra", "primary-extra", "(361, 6, 16)", "361 extra primary test prompts, base and five light primary seeds", {}),
    ("lab-small", "small", "(480, 6, 16)", "primary validation and test prompts, the smaller base and its five light seeds", {}),
):
    _register(Entry(_name, "lab", _shape, _desc, LAB_PROV, "MIT (made by the project)",
                    files=(f"pools/{_stored}/manifest.json",), builder=_lab(_stored, **_kw)))


# ====================================================================== paper counts
def outcomes_from_margins(model_counts, oracle_count: int, n: int, seed=0) -> np.ndarray:
    """One random outcome matrix bool[n, K] with the given margins: column sums ``model_counts`` and
    exactly ``oracle_count`` rows with at least one success.

    Construction: the first ``oracle_count`` rows (before a final shuffle) are the covered
    items; each receives one "witness" model drawn with probability proportional to that
    model's remaining count, then every model's remaining successes go to covered rows chosen
    uniformly among those it does not yet solve. This is *one* arrangement consistent with
    the margins, not the (unpublished) real joint; statistics of the margins are exact on it.
    """
    c, o, n = check_margin_counts(model_counts, oracle_count, n)
    rng = as_rng(seed)
    K = c.size
    X = np.zeros((n, K), dtype=bool)
    cap = c.astype(float).copy()
    for i in range(o):
        m = rng.choice(K, p=cap / cap.sum())
        X[i, m] = True
        cap[m] -= 1
    for m in range(K):
        r = int(cap[m])
        if r:
            free = np.flatnonzero(~X[:o, m])
            X[rng.choice(free, size=r, replace=False), m] = True
    return X[rng.permutation(n)]


def paper_table(stem: str) -> pd.DataFrame:
    """A transcribed paper table from ``data/paper/`` by file stem (e.g. ``"002_table11_pilot_gap"``)."""
    if not isinstance(stem, str) or not stem:
        raise TypeError("stem must be a non-empty string such as '002_table11_pilot_gap'")
    path = paper_dir() / f"{stem.removesuffix('.csv')}.csv"
    _declare(path)
    if not path.is_file():
        known = sorted(p.stem for p in paper_dir().glob("*.csv"))
        raise KeyError(f"no paper table {stem!r} in {paper_dir()}; known: {known}")
    return pd.read_csv(path)


def _pilot(dataset: str):
    def build(entry: Entry, seed=0) -> Pool:
        df = pd.read_csv(paper_dir() / "002_appP_pilot_counts.csv")
        d = df[df["dataset"] == dataset]
        models = d[d["policy"] != "oracle"]
        n = int(d["n"].iloc[0])
        o = int(d.loc[d["policy"] == "oracle", "correct"].iloc[0])
        X = outcomes_from_margins(models["correct"].to_numpy(), o, n, seed)
        prompts = pd.DataFrame({"id": [f"{dataset}-{i}" for i in range(n)], "dataset": dataset})
        return Pool.from_array(
            X,
            prompts,
            pd.DataFrame({"name": models["policy"].tolist()}),
            alignment="unknown",
            meta=_meta(entry, synthetic_arrangement=True, arrangement_seed=seed, oracle_count=o, citation=CITE_002),
        )

    return build


def _confirmatory_arc(entry: Entry, seed=0) -> Pool:
    t6 = pd.read_csv(paper_dir() / "002_table6_confirmatory_models.csv")
    t1 = pd.read_csv(paper_dir() / "002_table1_confirmatory.csv").set_index("dataset")
    n = int(t1.loc["arc_challenge", "n"])
    counts = np.round(t6["arc_accuracy"].to_numpy() * n).astype(int)
    o = int(round(t1.loc["arc_challenge", "oracle"] * n))
    X = outcomes_from_margins(counts, o, n, seed)
    prompts = pd.DataFrame({"id": [f"arc_challenge-{i}" for i in range(n)], "dataset": "arc_challenge"})
    pol = pd.DataFrame({"name": t6["checkpoint"].tolist(), "base": t6["family"].tolist(), "size": t6["params"].tolist()})
    return Pool.from_array(
        X, prompts, pol, meta=_meta(entry, synthetic_arrangement=True, arrangement_seed=seed, oracle_count=o, citation=CITE_002)
    )


def _paper000_reference(entry: Entry, seed=0) -> Pool:
    from .stats import paper000

    sim = paper000.reference_pool(paper000.margins_from_table(paper_table("000_seed_pool")), seed=seed)
    return dataclasses.replace(sim.pool, meta={**sim.pool.meta, **_meta(entry, seed=seed, citation="arXiv 2609.32996")})


_register(
    Entry(
        "paper000-reference",
        "paper",
        "(240, 5, 16)",
        "arXiv 2609.32996's seed pool simulated from its published margins (Beta prompt prior, member means 0.355..0.376, n, M, k); "
        "population L = 0; name@SEED picks the seed",
        "arXiv 2609.32996, Sec. 3.1 and App. C.3 (margins); oraclegap.stats.paper000.reference_pool",
        "published facts (cited); pool generated",
        ("000_seed_pool.csv",),
        builder=_paper000_reference,
    )
)


for _ds, _n in (("arc_challenge", 150), ("hellaswag", 150), ("gsm8k", 100)):
    _register(
        Entry(
            f"paper002-pilot-{_ds.split('_')[0]}",
            "paper",
            f"({_n}, 4, 1)",
            f"Shihab et al.'s four-model pilot on {_ds}: App. P counts; item-level joint is one random arrangement consistent with them",
            f"{CITE_002}, Appendix P (counts), Table 13 (model names)",
            "published facts (cited)",
            ("002_appP_pilot_counts.csv",),
            builder=_pilot(_ds),
        )
    )
_register(
    Entry(
        "paper002-confirmatory-arc",
        "paper",
        "(300, 8, 1)",
        "Shihab et al.'s eight-model confirmatory pool on ARC-Challenge: Table 6 accuracies x 300 and Table 1's oracle; joint is one random arrangement",
        f"{CITE_002}, Table 6 and Table 1",
        "published facts (cited)",
        ("002_table6_confirmatory_models.csv", "002_table1_confirmatory.csv"),
        builder=_confirmatory_arc,
    )
)


# ====================================================================== external: Chen 2026 k=30 tensors
CHEN = "chen2026_routing_oracle_k30"
CHEN_PROV = "Chen (2026), arXiv 2607.03436; github.com/luka-krixvon/routing-oracle-experiment @ 0304028d (gpqa: a08fed21)"


def _chen(bench: str, variant: str):
    def build(entry: Entry) -> Pool:
        root = external_dir() / CHEN / bench
        with np.load(root / "correctness_slim.npz", allow_pickle=False) as z:
            key = {"": "b", "single": "b_single", "greedy": "greedy"}[variant]
            arr = np.asarray(z[key])
            meta = json.loads(str(z["meta"][()]))
        if arr.ndim == 2:
            arr = arr[:, :, None]
        n = arr.shape[0]
        if bench == "gpqa":
            items = _read_json(root / "subset_ids.json")
            prompts = pd.DataFrame({"id": [x["id"] for x in items], "text": None, "dataset": "gpqa"})
        else:
            items = _read_json(root / "subset.json")
            prompts = pd.DataFrame(
                {"id": [x["id"] for x in items], "text": [x.get("prompt") for x in items], "dataset": bench}
            )
        if len(prompts) != n:
            raise ValueError(f"{root}: {len(prompts)} items in the item file but {n} rows in the tensor")
        pol = pd.DataFrame({"name": meta["models"]})
        align = "seed-aligned" if variant == "" else "unknown"
        return Pool.from_array(
            as_bool_array(arr, f"{entry.name}: array {key!r} of {root / 'correctness_slim.npz'}"),
            prompts,
            pol,
            alignment=align,
            meta=_meta(entry, temperature=meta.get("temperature"), sampling_seed=meta.get("seed"), variant=variant or "k30"),
        )

    return build




def lab_slice(pool: Pool, task: str, split: str, role: str = "member") -> Pool:
    """Prompts of one lab ``task`` and ``split`` of a lab pool (e.g. ``load("lab-cross")``), with
    the policies of one ``role``: the task's light-recipe seeds (``"member"``), its soup
    (``"soup"``), or the base model (``"base"``, shared by every task)."""
    for col, table in (("role", pool.policies), ("dataset", pool.policies), ("recipe", pool.policies),
                       ("dataset", pool.prompts), ("split", pool.prompts)):
        if col not in table.columns:
            raise ValueError(f"pool is not a lab pool: its {'policy' if table is pool.policies else 'prompt'} "
                             f"table has no {col!r} column")
    pol = pool.policies
    keep_pol = ((pol["role"] == role) & ((pol["dataset"] == task) | (role == "base"))
                & ((pol["recipe"] == "light") | (role != "member")))
    keep = (pool.prompts["dataset"] == task).to_numpy() & (pool.prompts["split"] == split).to_numpy()
    if not keep.any():
        raise ValueError(f"no prompt of task {task!r} in split {split!r}; tasks: "
                         f"{sorted(pool.prompts['dataset'].dropna().unique())}, splits: {sorted(pool.prompts['split'].dropna().unique())}")
    if not keep_pol.any():
        raise ValueError(f"no policy with role {role!r} for task {task!r}; roles: {sorted(pol['role'].dropna().unique())}")
    return pool.select(prompts=keep, policies=keep_pol.to_numpy())

def chen_release(bench: str, key: str) -> np.ndarray:
    """One array of a Chen (2026) release file beside the tensors, e.g. ``chen_release("humanevalplus",
    "q_router")`` (the released router's per-prompt scores): ``correctness_slim.npz`` under
    ``external_dir()/chen2026_routing_oracle_k30/BENCH/``, read without unpickling."""
    if bench not in ("math500", "humanevalplus", "gpqa"):
        raise ValueError(f"bench must be one of math500, humanevalplus, gpqa; got {bench!r}")
    path = external_dir() / CHEN / bench / "correctness_slim.npz"
    _declare(path)
    if not path.is_file():
        raise ValueError(f"{path} does not exist; set OG_EXTERNAL_DIR to the released data (or run `make data`)")
    with np.load(path, allow_pickle=False) as z:
        if key not in z.files:
            raise ValueError(f"{path} has no array {key!r}; it holds {sorted(z.files)}")
        return np.asarray(z[key])

for _b, _n in (("math500", 500), ("humanevalplus", 164), ("gpqa", 198)):
    _files = (f"{CHEN}/{_b}/correctness_slim.npz", f"{CHEN}/{_b}/{'subset_ids' if _b == 'gpqa' else 'subset'}.json")
    _register(
        Entry(
            f"chen2026-{_b}",
            "external",
            f"({_n}, 11, 30)",
            f"{_b}: 11 open models x 30 seed-aligned draws at T=0.2",
            CHEN_PROV,
            "MIT",
            _files,
            builder=_chen(_b, ""),
        )
    )
    _register(
        Entry(
            f"chen2026-{_b}-single",
            "external",
            f"({_n}, 11, 1)",
            f"{_b}: the released b_single array at T=0.2 (described as a separate draw; in the files it equals draw 0 of the k=30 tensor)",
            CHEN_PROV,
            "MIT",
            _files,
            builder=_chen(_b, "single"),
        )
    )
    _register(
        Entry(
            f"chen2026-{_b}-greedy",
            "external",
            f"({_n}, 11, 1)",
            f"{_b}: greedy decoding, one response per model",
            CHEN_PROV,
            "MIT",
            _files,
            builder=_chen(_b, "greedy"),
        )
    )


# ====================================================================== external: RouterDC
RDC = "routerdc_7model_k10_and_routerbench_subset"
RDC_PROV = "RouterDC (Chen et al., NeurIPS 2024) training data; github.com/shuhao02/RouterDC @ 0e63989c, datasets/split2_model7"
RDC_LICENSE = "none stated (no LICENSE file in the repository)"


def _routerdc_items(files: Mapping[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read split2_model7 json files: one scores frame (items x models) and one prompt table."""
    frames, prompts = [], []
    for split, fname in files.items():
        data = _read_json(external_dir() / RDC / "split2_model7" / fname)
        sc = pd.DataFrame([_scores(x) for x in data])
        p = pd.DataFrame(
            {
                "id": [f"{Path(fname).stem}-{i}" for i in range(len(data))],
                "text": [x.get("question") for x in data],
                "dataset": Path(fname).stem,
                "split": split,
            }
        )
        if any("cluster_id" in x for x in data):
            p["cluster_id"] = [x.get("cluster_id") for x in data]
        frames.append(sc)
        prompts.append(p)
    sc = pd.concat(frames, ignore_index=True)
    if sc.isna().any().any():
        raise ValueError(f"{RDC}: some items lack a score for some model")
    return sc, pd.concat(prompts, ignore_index=True)


def _routerdc_counts(files: Mapping[str, str]):
    def build(entry: Entry, seed=0) -> Pool:
        sc, prompts = _routerdc_items(files)
        counts = sc.to_numpy(dtype=float) * 10
        if not np.allclose(counts, np.round(counts), atol=1e-6):
            raise ValueError(f"{entry.name}: scores are not multiples of 0.1 (k=10)")
        return Pool.from_counts(
            np.round(counts).astype(int),
            10,
            seed=seed,
            prompts=prompts,
            policies=pd.DataFrame({"name": list(sc.columns)}),
            meta=_meta(entry, note="counts of correct draws out of 10; draws arranged at random (no draw-level data released)"),
        )

    return build


def _routerdc_k1(files: Mapping[str, str]):
    def build(entry: Entry) -> Pool:
        sc, prompts = _routerdc_items(files)
        sv = sc.to_numpy(dtype=float)
        if (sv < 0).any() or (sv > 1).any():
            raise ValueError(f"{entry.name}: scores must lie in [0, 1] (found {sv[(sv < 0) | (sv > 1)][:3].tolist()})")
        v = sv > 0
        return Pool.from_array(
            v,
            prompts,
            pd.DataFrame({"name": list(sc.columns)}),
            meta=_meta(entry, note="log-likelihood scoring; score > 0 means the argmax option is correct"),
        )

    return build


_RDC_COUNTS = {
    "routerdc-gsm8k-test": ({"test": "gsm8k-test.json"}, 1319, "GSM8K test (all 1319)"),
    "routerdc-gsm8k-train": ({"train": "gsm8k-train.json"}, 1000, "1000 items of the GSM8K train split"),
    "routerdc-humaneval": ({"train": "humaneval_train.json", "test": "humaneval_test.json"}, 164, "HumanEval (115 train + 49 test)"),
    "routerdc-mbpp": ({"test": "mbpp.json"}, 500, "MBPP (500)"),
    "routerdc-javascript": ({"test": "javascript.json"}, 164, "HumanEvalPack-JS (164)"),
}
for _name, (_files, _n, _d) in _RDC_COUNTS.items():
    _register(
        Entry(
            _name,
            "external",
            f"({_n}, 7, 10)",
            f"{_d}: 7 open models, correct counts out of 10 sampled responses (T=0.2)",
            RDC_PROV,
            RDC_LICENSE,
            tuple(f"{RDC}/split2_model7/{f}" for f in _files.values()),
            builder=_routerdc_counts(_files),
        )
    )

_RDC_K1 = {
    "routerdc-mmlu": ({"test": "mmlu_test.json", "train": "mmlu_train.json"}, 6213, "MMLU (4213 test + 2000 train)"),
    "routerdc-arc-challenge": (
        {"test": "arc_challenge_test.json", "train": "arc_challenge_train.json"},
        1172,
        "ARC-Challenge (352 + 820 = all 1172 test items)",
    ),
    "routerdc-arc-easy": ({"test": "arc_easy_test.json", "train": "arc_easy_train.json"}, 2376, "ARC-Easy (713 test + 1663 train)"),
    "routerdc-cmmlu": ({"test": "cmmlu_test.json", "train": "cmmlu_train.json"}, 5475, "CMMLU (3475 test + 2000 train)"),
    "routerdc-ceval": ({"test": "ceval.json"}, 1346, "C-Eval (1346)"),
    "routerdc-math-prealgebra": ({"test": "MATH_prealgebra.json"}, 871, "MATH prealgebra (871)"),
}
for _name, (_files, _n, _d) in _RDC_K1.items():
    _register(
        Entry(
            _name,
            "external",
            f"({_n}, 7, 1)",
            f"{_d}: 7 open models, one deterministic answer each",
            RDC_PROV,
            RDC_LICENSE,
            tuple(f"{RDC}/split2_model7/{f}" for f in _files.values()),
            builder=_routerdc_k1(_files),
        )
    )


# ====================================================================== external: RouterBench subset with costs
RB_PROV = "RouterBench (Hu et al. 2024) 0-shot subset as shipped in github.com/shuhao02/RouterDC @ 0e63989c, datasets/routerbench_zs"


def _routerbench(stem: str):
    def build(entry: Entry) -> Pool:
        root = external_dir() / RDC / "routerbench_zs"
        parts = []
        for split in ("train", "test"):
            d = pd.read_csv(root / f"{stem}_{split}.csv")
            d["split"] = split
            parts.append(d)
        d = pd.concat(parts, ignore_index=True)
        # the RouterBench wide layout is parsed where the importer reads it too (oraclegap._formats);
        # the registry drops rows with a missing outcome or cost and keeps the first row of a repeated sample_id
        rb = _formats.routerbench_parts(d, f"{entry.name}: {root / stem}_{{train,test}}.csv", drop_incomplete=True,
                                        duplicates="first")
        return Pool.from_array(
            rb["verdicts"],
            rb["prompts"],
            pd.DataFrame({"name": rb["models"]}),
            cost=rb["cost"],
            meta=_meta(entry, cost_unit="USD per query", rows_with_nan_dropped=rb["rows_dropped_incomplete"]),
        )

    return build


for _name, _stem, _n, _d in (
    ("routerbench-arc-challenge", "arc_challenge", 1456, "ARC-Challenge (1470 unique ids, 14 with missing outcomes dropped)"),
    ("routerbench-mbpp", "mbpp", 427, "MBPP (427)"),
    ("routerbench-winogrande", "winograde", 1267, "Winogrande (1267)"),
):
    _register(
        Entry(
            _name,
            "external",
            f"({_n}, 11, 1)",
            f"{_d}: 11 API and open models with per-query USD cost",
            RB_PROV,
            "RouterBench data: see withmartian/routerbench; RouterDC repository states no license",
            (f"{RDC}/routerbench_zs/{_stem}_train.csv", f"{RDC}/routerbench_zs/{_stem}_test.csv"),
            builder=_routerbench(_stem),
        )
    )


# ====================================================================== external: multi-task combinations
def _concat(names: tuple[str, ...]):
    """Stack pools with the same models on the same number of draws (policies aligned by name)."""

    def build(entry: Entry) -> Pool:
        pools = [load(nm) for nm in names]
        models = pools[0].policy_names
        for nm, p in zip(names, pools, strict=True):
            if sorted(p.policy_names) != sorted(models) or p.k != pools[0].k:
                raise ValueError(f"{nm} does not share the models and k of {names[0]}")
        pools = [p.select(policies=models) for p in pools]
        prompts = pd.concat([p.prompts for p in pools], ignore_index=True)
        prompts["id"] = [f"{p.meta['dataset']}:{i}" for p in pools for i in p.prompt_ids]
        prompts["task"] = [p.meta["dataset"] for p in pools for _ in range(p.n_prompts)]
        costs = [p.cost for p in pools]
        return Pool.from_array(
            np.concatenate([p.verdicts for p in pools], axis=0),
            prompts,
            pools[0].policies,
            cost=None if any(c is None for c in costs) else np.concatenate(costs, axis=0),
            meta=_meta(entry, parts=list(names)),
        )

    return build


_RB_PARTS = ("routerbench-arc-challenge", "routerbench-mbpp", "routerbench-winogrande")
_register(
    Entry(
        "routerbench-all",
        "external",
        "(3150, 11, 1)",
        "the three RouterBench tasks stacked (ARC-Challenge, MBPP, Winogrande; part name in the 'task' column) with per-query USD cost",
        RB_PROV,
        "RouterBench data: see withmartian/routerbench; RouterDC repository states no license",
        tuple(f for nm in _RB_PARTS for f in _REGISTRY[nm].files),
        builder=_concat(_RB_PARTS),
    )
)
_RDC_K1_PARTS = tuple(_RDC_K1)
_register(
    Entry(
        "routerdc-k1-all",
        "external",
        "(17453, 7, 1)",
        "the six RouterDC one-answer sets stacked (MMLU, ARC-C, ARC-E, CMMLU, C-Eval, MATH prealgebra; part name in the 'task' column)",
        RDC_PROV,
        RDC_LICENSE,
        tuple(f for nm in _RDC_K1_PARTS for f in _REGISTRY[nm].files),
        builder=_concat(_RDC_K1_PARTS),
    )
)


# ====================================================================== external: MMLU-Pro 29 models
MMLUPRO = "mmlu_pro_29models_k1"
MMLUPRO_MODELS = (
    "DeepSeek-Coder-V2 Llama-2-13b-hf Llama-2-70b-hf Llama-2-7b-hf Meta-Llama-3-70B Meta-Llama-3-8B "
    "Meta-Llama-3_1-70B-Instruct Meta-Llama-3_1-70B Meta-Llama-3_1-8B-Instruct Meta-Llama-3_1-8B "
    "Mistral-7B-Instruct-v0.1 Mistral-7B-Instruct-v0.2 Mistral-7B-v0.1 Mistral-7B-v0.2-hf Mixtral-8x7B-Instruct-v0.1 "
    "Mixtral-8x7B-v0.1 Phi-3-mini-4k-instruct Qwen1.5-110B Qwen1.5-72B-Chat Qwen1.5-7B-Chat Yi-34B Yi-6B Yi-6b-Chat "
    "c4ai-command-r-v01 gemini-1.5-flash-002 gemini-1.5-pro-002 gemma-7b jamba-1.5-large mathstral-7B"
).split()
MMLUPRO_COMMIT = "f418b116db00b065c2aea046518d8fcf74d39872"


def _mmlu_pro(entry: Entry) -> Pool:
    root = external_dir() / MMLUPRO
    m = pd.read_csv(root / "correctness_matrix.csv")
    q = pd.read_json(root / "questions.jsonl", lines=True)
    models = [c for c in m.columns if c != "question_id"]
    n_all = len(m)
    m = m.dropna(subset=models).reset_index(drop=True)
    q = q.set_index("question_id").loc[m["question_id"]].reset_index()
    answers, note = _mmlu_pro_letters(root / "predicted_letters.csv", m["question_id"], models)
    prompts = pd.DataFrame(
        {
            "id": m["question_id"].astype(str),
            "text": q["question"].to_numpy(),
            "dataset": "mmlu_pro",
            "category": q["category"].to_numpy(),
            "src": q["src"].to_numpy(),
        }
    )
    return Pool.from_array(
        as_bool_columns(m, models, f"{entry.name}: {root / 'correctness_matrix.csv'}",
                        row_names=lambda i: f"row {i} (question_id {m['question_id'].astype(str).iloc[i]})"),
        prompts,
        pd.DataFrame({"name": [c.removesuffix("_5shots") for c in models]}),
        answers=answers,
        meta=_meta(entry, items_in_file=n_all, note="items answered by all 29 models; unparsed answers count as wrong",
                   answers=note),
    )


def _mmlu_pro_letters(path: Path, question_ids: pd.Series, models: list[str]) -> tuple[np.ndarray | None, str]:
    """Each model's released predicted letter per item as the pool's ``answers`` [n, M, 1] ("" where
    unparsed), read from ``predicted_letters.csv`` when it is present (verdicts never come from it)."""
    _declare(path)
    if not path.is_file():
        return None, f"absent ({path.name} not found)"
    pl = pd.read_csv(path, dtype=str, keep_default_na=False).set_index("question_id")
    pl.index = pl.index.astype(str)
    missing = [c for c in models if c not in pl.columns]
    if missing:
        raise ValueError(f"{path}: no predicted-letter column for {missing[:3]}")
    ids = question_ids.astype(str)
    absent = ids[~ids.isin(pl.index)]
    if len(absent):
        raise ValueError(f"{path}: no predicted letters for question_id {absent.iloc[0]!r} ({len(absent)} items)")
    letters = pl.loc[ids, models].to_numpy(dtype=object)
    return letters[:, :, None], "the released predicted letter per model (pred; empty where unparsed), k = 1"


_register(
    Entry(
        "mmlu-pro",
        "external",
        "(10326, 29, 1)",
        "MMLU-Pro (5-shot CoT, one generation): 29 models on the 10326 of 12032 items every model answered; category in the prompt table",
        f"TIGER-AI-Lab/MMLU-Pro @ {MMLUPRO_COMMIT[:8]} eval_results/model_outputs_*_5shots.zip, derived (pred == answer)",
        "Apache-2.0",
        (f"{MMLUPRO}/correctness_matrix.csv", f"{MMLUPRO}/questions.jsonl"),
        builder=_mmlu_pro,
    )
)


# ====================================================================== external: LLMRouter sets
ULAB = "ulab_uiuc_llmrouter_routeprofile_k1"


def _routeprofile(entry: Entry) -> Pool:
    root = external_dir() / ULAB / "RouteProfile"
    data = _read_json(root / "routing_test_data.json")
    prices = _read_json(root / "candidate_models.json")
    models = list(data[0]["model_performance"].keys())
    keep, rows, cost, prompts = [], [], [], []
    dropped = 0
    for k, it in enumerate(data):
        perf = it["model_performance"]
        vals = [float(perf[m]["task_performance"]) for m in models]
        if any(v not in (0.0, 1.0) for v in vals):
            dropped += 1
            continue
        keep.append(k)
        rows.append(vals)
        cost.append(
            [
                _formats.token_cost(perf[m]["prompt_tokens"], perf[m]["completion_tokens"], prices[m]["input_price"],
                                    prices[m]["output_price"])
                for m in models
            ]
        )
        prompts.append({"id": f"{it['task_name']}-{it.get('task_id', k)}", "text": it["query"], "dataset": it["task_name"]})
    p = pd.DataFrame(prompts)
    p["id"] = _ids_unique(p["id"].tolist())
    return Pool.from_array(
        as_bool_array(np.asarray(rows, dtype=float).reshape(len(rows), len(models)), f"{entry.name}: task_performance"),
        p,
        pd.DataFrame({"name": models}),
        cost=np.asarray(cost),
        meta=_meta(
            entry,
            items_in_file=len(data),
            items_with_continuous_scores_dropped=dropped,
            cost_unit="USD (tokens x candidate_models.json prices per million tokens)",
        ),
    )


def _dcrouter(entry: Entry) -> Pool:
    root = external_dir() / ULAB / "LLMRouter_dcrouter_preprocessed"
    frames, prompts = [], []
    for split in ("train", "test"):
        data = _read_json(root / f"{split}.json")
        frames.append(pd.DataFrame([_scores(x) for x in data]))
        prompts.append(
            pd.DataFrame(
                {
                    "id": [f"{split}-{i}" for i in range(len(data))],
                    "text": [x.get("question") for x in data],
                    "dataset": "dcrouter",
                    "split": split,
                    "cluster_id": [x.get("cluster_id") for x in data],
                }
            )
        )
    sc = pd.concat(frames, ignore_index=True)
    p = pd.concat(prompts, ignore_index=True)
    models = sorted(sc.columns)
    v = sc[models].to_numpy(dtype=float)
    binary = ((v == 0) | (v == 1)).all(axis=1)
    return Pool.from_array(
        as_bool_array(v[binary], f"{entry.name}: scores"),
        p[binary].reset_index(drop=True),
        pd.DataFrame({"name": models}),
        meta=_meta(entry, items_in_files=int(v.shape[0]), items_with_fractional_scores_dropped=int((~binary).sum())),
    )



def dcrouter_prices(pool: Pool, field: str = "input_price") -> np.ndarray:
    """The declared price (USD per million tokens, ``field`` = ``input_price`` or ``output_price``)
    of each member of an ``llmrouter-dcrouter`` pool, in the pool's member order, from the set's
    ``default_llm.json`` as :mod:`oraclegap._formats` parses it. The set has no token counts, so
    this is the set's only cost."""
    if field not in ("input_price", "output_price"):
        raise ValueError(f"field must be 'input_price' or 'output_price', got {field!r}")
    path = external_dir() / ULAB / "LLMRouter_dcrouter_preprocessed" / "default_llm.json"
    _declare(path)
    prices = _formats._llm_prices(path)
    absent = [m for m in pool.policy_names if not isinstance(prices.get(m), Mapping) or field not in prices[m]]
    if absent:
        raise ValueError(f"{path} has no {field} for members {absent[:5]}")
    return np.array([float(prices[m][field]) for m in pool.policy_names])

_register(
    Entry(
        "llmrouter-routeprofile",
        "external",
        "(550, 8, 1)",
        "RouteProfile routing test set: 8 open models on 11 binary-scored tasks x 50 (commongen, scored continuously, dropped) with per-item token costs",
        "github.com/ulab-uiuc/RouteProfile @ 96a5b910, route_data/routing_test_data.json + profile_data/candidate_models.json",
        "MIT",
        (f"{ULAB}/RouteProfile/routing_test_data.json", f"{ULAB}/RouteProfile/candidate_models.json"),
        builder=_routeprofile,
    )
)
_register(
    Entry(
        "llmrouter-dcrouter",
        "external",
        "(5908, 9, 1)",
        "LLMRouter dcrouter_preprocessed train (5608) + test (500): 9 open models; items with fractional scores dropped; cluster_id in the prompt table",
        "github.com/ulab-uiuc/LLMRouter @ 4e7a7969, data/dcrouter_preprocessed/{train,test}.json",
        "MIT",
        (f"{ULAB}/LLMRouter_dcrouter_preprocessed/train.json", f"{ULAB}/LLMRouter_dcrouter_preprocessed/test.json"),
        builder=_dcrouter,
    )
)


# ====================================================================== external: routerbench-mini
RBMINI = "routerbench_mini_qwen35_2models"


def _rbmini(entry: Entry) -> Pool:
    d = pd.read_csv(external_dir() / RBMINI / "test_predictions.csv")
    d = d[d["strategy"].isin(["always_cheap", "always_strong"])]
    models = [d.loc[d["strategy"] == s, "selected_model"].iloc[0] for s in ("always_cheap", "always_strong")]
    wide = d.pivot(index="canonical_id", columns="strategy", values="correct")
    cost = d.pivot(index="canonical_id", columns="strategy", values="cost")
    info = d[d["strategy"] == "always_cheap"].set_index("canonical_id").loc[wide.index]
    prompts = pd.DataFrame(
        {
            "id": wide.index.astype(str),
            "dataset": info["dataset"].to_numpy(),
            "task_family": info["task_family"].to_numpy(),
            "task_type": info["task_type"].to_numpy(),
            "difficulty_group": info["difficulty_group"].to_numpy(),
        }
    )
    return Pool.from_array(
        as_bool_columns(wide, ["always_cheap", "always_strong"], f"{entry.name}: 'correct' in {RBMINI}/test_predictions.csv",
                        row_names=lambda i: f"canonical_id {str(wide.index[i])!r}"),
        prompts,
        pd.DataFrame({"name": models, "recipe": ["cheap", "strong"]}),
        cost=cost[["always_cheap", "always_strong"]].to_numpy(dtype=float),
        meta=_meta(entry, cost_unit="CNY per item"),
    )


_register(
    Entry(
        "routerbench-mini",
        "external",
        "(800, 2, 1)",
        "routerbench-mini V5 frozen test: Qwen3.5 cheap vs strong on 8 datasets, per-item cost (CNY) and latency; no item text",
        "github.com/ken-ab/routerbench-mini @ c03410ce, results/qwen3.5-v5-3200-800/test_predictions.csv",
        "none stated (CITATION.cff only)",
        (f"{RBMINI}/test_predictions.csv",),
        builder=_rbmini,
    )
)


# ====================================================================== public API
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
               "mmlu-pro": "MMLU-Pro", "k64": "64 responses", "val": "validation"}


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


# ====================================================================== fetch (make data)
_RAW = "https://raw.githubusercontent.com"
_CHEN_MAIN = f"{_RAW}/luka-krixvon/routing-oracle-experiment/0304028d5ad721af96f4cc97fca10f8490126133/artifacts"
_CHEN_GPQA = f"{_RAW}/luka-krixvon/routing-oracle-experiment/a08fed21d8072741df42312dd3c0d3074a160b01/artifacts"
_RDC_RAW = f"{_RAW}/shuhao02/RouterDC/0e63989c5bf4363330b8a4616386e3f7f116d9f8/datasets"
_RP_RAW = f"{_RAW}/ulab-uiuc/RouteProfile/96a5b910b00617a47ccfe043ec5cb5023058b666"
_LR_RAW = f"{_RAW}/ulab-uiuc/LLMRouter/4e7a796942ce26e9d5f2b93191c7c2585c99c2e3"
_RBM_RAW = f"{_RAW}/ken-ab/routerbench-mini/c03410ce55a44ccbd0a46cfc777a41fdbacad28d"
_MMLUPRO_RAW = f"{_RAW}/TIGER-AI-Lab/MMLU-Pro/{MMLUPRO_COMMIT}/eval_results"


def _fetch_list() -> list[tuple[str, str]]:
    """(relative destination, URL) for every file the external entries read (MMLU-Pro is derived separately)."""
    out = []
    for b in ("math500", "humanevalplus"):
        out += [(f"{CHEN}/{b}/correctness_slim.npz", f"{_CHEN_MAIN}/{b}/correctness_slim.npz"), (f"{CHEN}/{b}/subset.json", f"{_CHEN_MAIN}/{b}/subset.json")]
    out += [(f"{CHEN}/gpqa/correctness_slim.npz", f"{_CHEN_GPQA}/gpqa/correctness_slim.npz"), (f"{CHEN}/gpqa/subset_ids.json", f"{_CHEN_GPQA}/gpqa/subset_ids.json")]
    fnames = sorted({f for files, _, _ in list(_RDC_COUNTS.values()) + list(_RDC_K1.values()) for f in files.values()})
    out += [(f"{RDC}/split2_model7/{f}", f"{_RDC_RAW}/split2_model7/{f}") for f in fnames]
    for stem in ("arc_challenge", "mbpp", "winograde"):
        for split in ("train", "test"):
            out.append((f"{RDC}/routerbench_zs/{stem}_{split}.csv", f"{_RDC_RAW}/routerbench_zs/{stem}_{split}.csv"))
    out += [
        (f"{ULAB}/RouteProfile/routing_test_data.json", f"{_RP_RAW}/route_data/routing_test_data.json"),
        (f"{ULAB}/RouteProfile/candidate_models.json", f"{_RP_RAW}/profile_data/candidate_models.json"),
        (f"{ULAB}/LLMRouter_dcrouter_preprocessed/train.json", f"{_LR_RAW}/data/dcrouter_preprocessed/train.json"),
        (f"{ULAB}/LLMRouter_dcrouter_preprocessed/test.json", f"{_LR_RAW}/data/dcrouter_preprocessed/test.json"),
        (f"{RBMINI}/test_predictions.csv", f"{_RBM_RAW}/results/qwen3.5-v5-3200-800/test_predictions.csv"),
    ]
    return out


def _download(url: str, dest: Path, timeout: float) -> None:
    with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - fixed https URLs
        data = resp.read()
    atomic_write(dest, data)  # the folder is made only once something arrived


def derive_mmlu_pro(zips: Mapping[str, Path], out_dir) -> Path:
    """Build ``correctness_matrix.csv``, ``predicted_letters.csv`` and ``questions.jsonl`` from
    MMLU-Pro's per-model output zips (model -> zip path), as in the external folder's SOURCE.md:
    correct = (pred == answer), an unparsed prediction counts as wrong, an item absent from a
    model's file is blank, entries that are not dicts are dropped.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    correct, letters, questions = {}, {}, {}
    for model, zpath in zips.items():
        with zipfile.ZipFile(zpath) as zf:
            members = [m for m in zf.namelist() if m.endswith(".json")]
            if not members:
                raise ValueError(f"{zpath}: no .json member")
            data = json.loads(zf.read(members[0]).decode("utf-8"))
        col_c, col_l = {}, {}
        for rec in data:
            if not isinstance(rec, dict) or "question_id" not in rec:
                continue
            qid = int(rec["question_id"])
            pred = rec.get("pred")
            col_c[qid] = int(pred is not None and pred == rec.get("answer"))
            col_l[qid] = pred if pred is not None else ""
            if qid not in questions:
                questions[qid] = {k: rec.get(k) for k in ("question_id", "question", "options", "answer", "answer_index", "category", "src")}
        correct[f"{model}_5shots"] = col_c
        letters[f"{model}_5shots"] = col_l
    qids = sorted(questions)
    cm = pd.DataFrame({k: pd.Series(v, dtype="Int64") for k, v in correct.items()}).reindex(qids)
    cm.index.name = "question_id"
    cm.to_csv(out / "correctness_matrix.csv")
    pl = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in letters.items()}).reindex(qids)
    pl.index.name = "question_id"
    pl.to_csv(out / "predicted_letters.csv")
    with open(out / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q in qids:
            fh.write(json.dumps(questions[q]) + "\n")
    return out


def fetch(dest=None, *, timeout: float = 10.0, skip_existing: bool = True, mmlu_pro: bool = True) -> pd.DataFrame:
    """Download the released files the external entries read into ``dest`` (default ``data/external/``).

    Every file is tried independently; failures (no network, HTTP errors) are recorded, never
    raised. MMLU-Pro's compact files are derived from the official per-model zips. Returns one
    row per file: path, url, status ("ok", "present", "failed"), message.
    """
    root = Path(dest) if dest is not None else _REPO / "data" / "external"
    rows = []
    for rel, url in _fetch_list():
        path = root / rel
        if skip_existing and path.exists():
            rows.append({"path": rel, "url": url, "status": "present", "message": ""})
            continue
        try:
            _download(url, path, timeout)
            rows.append({"path": rel, "url": url, "status": "ok", "message": ""})
        except (urllib.error.URLError, OSError, TimeoutError, ValueError) as exc:
            rows.append({"path": rel, "url": url, "status": "failed", "message": f"{type(exc).__name__}: {exc}"})
    if mmlu_pro:
        target = root / MMLUPRO / "correctness_matrix.csv"
        if skip_existing and target.exists():
            rows.append({"path": f"{MMLUPRO}/*", "url": _MMLUPRO_RAW, "status": "present", "message": ""})
        else:
            with tempfile.TemporaryDirectory() as tmp:
                zips, failed = {}, []
                for model in MMLUPRO_MODELS:
                    url = f"{_MMLUPRO_RAW}/model_outputs_{model}_5shots.zip"
                    zp = Path(tmp) / f"{model}.zip"
                    try:
                        _download(url, zp, timeout)
                        zips[model] = zp
                    except (urllib.error.URLError, OSError, TimeoutError, ValueError) as exc:
                        failed.append(model)
                        rows.append({"path": f"(zip) {model}", "url": url, "status": "failed", "message": f"{type(exc).__name__}: {exc}"})
                        if len(failed) == 1 and not zips:
                            # the first zip failed: the network is most likely closed; do not try 28 more
                            rows.append(
                                {"path": f"{MMLUPRO}/*", "url": _MMLUPRO_RAW, "status": "failed", "message": "skipped the remaining zips"}
                            )
                            break
                if zips and not failed:
                    try:
                        derive_mmlu_pro(zips, root / MMLUPRO)
                        rows.append({"path": f"{MMLUPRO}/*", "url": _MMLUPRO_RAW, "status": "ok", "message": "derived"})
                    except (ValueError, OSError, zipfile.BadZipFile, json.JSONDecodeError) as exc:
                        rows.append({"path": f"{MMLUPRO}/*", "url": _MMLUPRO_RAW, "status": "failed", "message": str(exc)})
    return pd.DataFrame(rows, columns=["path", "url", "status", "message"])


def main(argv=None) -> int:
    """``python -m oraclegap.datasets fetch|list`` (the only place in the library that prints)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m oraclegap.datasets")
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download the released external files into data/external/ (or --dest)")
    f.add_argument("--dest", default=None)
    f.add_argument("--timeout", type=float, default=10.0)
    f.add_argument("--force", action="store_true", help="download even files already present")
    sub.add_parser("list", help="list the registry and which entries are present")
    args = parser.parse_args(argv)
    if args.cmd == "list":
        with pd.option_context("display.width", 200, "display.max_colwidth", 60, "display.max_rows", 200):
            print(available()[["name", "kind", "shape", "present", "license"]].to_string(index=False))
        return 0
    res = fetch(args.dest, timeout=args.timeout, skip_existing=not args.force)
    buf = io.StringIO()
    for r in res.itertuples():
        line = f"{r.status:8s} {r.path}"
        if r.status == "failed":
            line += f"  <- {r.url}  ({r.message})"
        print(line, file=buf)
    counts = res["status"].value_counts().to_dict()
    print(buf.getvalue(), end="")
    print(
        f"fetch summary: {counts.get('ok', 0)} downloaded, {counts.get('present', 0)} already present, "
        f"{counts.get('failed', 0)} could not be fetched (into {Path(args.dest) if args.dest else _REPO / 'data' / 'external'})"
    )
    if counts.get("failed", 0):
        print("where the network is closed, point OG_EXTERNAL_DIR at a folder holding the released files instead")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
