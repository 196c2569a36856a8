"""The ulab-uiuc LLMRouter sets as registry entries: the RouteProfile routing test set with token
costs, and the preprocessed dcrouter set with its declared prices (``dcrouter_prices``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .. import _formats
from .._datalog import declare as _declare
from .._validate import as_bool_array
from ..pool import Pool
from .registry import Entry, _meta, _read_json, _register, _scores, external_dir


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
    ``default_llm.json`` as :func:`oraclegap._formats.llmrouter.llm_prices` parses it. The set has
    no token counts, so this is the set's only cost."""
    if field not in ("input_price", "output_price"):
        raise ValueError(f"field must be 'input_price' or 'output_price', got {field!r}")
    path = external_dir() / ULAB / "LLMRouter_dcrouter_preprocessed" / "default_llm.json"
    _declare(path)
    prices = _formats.llm_prices(path)
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
        "LLMRouter dcrouter_preprocessed train (5608 items) + test (500): 9 open models; the 200 items with a "
        "fractional score dropped (150 train, 50 test); cluster_id in the prompt table",
        "github.com/ulab-uiuc/LLMRouter @ 4e7a7969, data/dcrouter_preprocessed/{train,test}.json",
        "MIT",
        (f"{ULAB}/LLMRouter_dcrouter_preprocessed/train.json", f"{ULAB}/LLMRouter_dcrouter_preprocessed/test.json"),
        builder=_dcrouter,
    )
)

