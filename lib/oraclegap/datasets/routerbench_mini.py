"""routerbench-mini's frozen test predictions as a registry entry: Qwen3.5 cheap against strong on
eight datasets, with per-item cost."""

from __future__ import annotations

import pandas as pd

from .._validate import as_bool_columns
from ..pool import Pool
from .registry import Entry, _meta, _register, external_dir

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

