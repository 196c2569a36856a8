"""Simulated registry entries: pools generated on the fly from a seed (``sim-exchangeable``,
``sim-diffuse``)."""

from __future__ import annotations

import dataclasses

from ..pool import Pool
from .registry import Entry, _meta, _register


def _sim(generator: str):
    def build(entry: Entry, seed=0, **params) -> Pool:
        from ..stats import simulate

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
