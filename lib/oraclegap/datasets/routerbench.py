"""The RouterBench 0-shot subset shipped with RouterDC as registry entries: ARC-Challenge, MBPP and
Winogrande with per-query USD cost."""

from __future__ import annotations

import pandas as pd

from .. import _formats
from ..pool import Pool
from .registry import Entry, _meta, _register, external_dir
from .routerdc import RDC

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
        # the RouterBench wide layout is parsed where the importer reads it too
        # (oraclegap._formats.routerbench); the registry drops rows with a missing outcome or cost
        # and keeps the first row of a repeated sample_id
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
