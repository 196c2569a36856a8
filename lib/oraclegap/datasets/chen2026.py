"""Chen (2026)'s released k = 30 correctness tensors (MATH-500, HumanEval+, GPQA) as registry
entries, and ``chen_release`` for the other arrays of the release files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .._datalog import declare as _declare
from .._validate import as_bool_array
from ..pool import Pool
from .registry import Entry, _meta, _read_json, _register, external_dir

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
