"""RouterDC's released training data as registry entries: seven open models with correct counts
out of 10 sampled responses, and one-answer sets."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..pool import Pool
from .registry import Entry, _meta, _read_json, _register, _scores, external_dir

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
