"""Registry entries that stack several tasks into one pool: the three RouterBench tasks and the six
RouterDC one-answer sets (the part's name in the ``task`` column)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..pool import Pool
from .registry import _REGISTRY, Entry, _meta, _register, load
from .routerbench import RB_PROV
from .routerdc import _RDC_K1, RDC_LICENSE, RDC_PROV


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

