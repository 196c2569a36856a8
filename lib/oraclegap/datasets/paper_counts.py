"""Pools built from the counts the papers publish (``data/paper/``): one outcome arrangement
consistent with the published margins, and the transcribed tables (``paper_table``).

Only the margins (each model's correct count and the oracle count) are published, so the
item-level joint is one random arrangement consistent with them
(:func:`outcomes_from_margins`); every statistic that depends only on the margins is exact on it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .._datalog import declare as _declare
from .._validate import as_rng, check_margin_counts
from ..pool import Pool
from .registry import Entry, _meta, _register, paper_dir

CITE_002 = "Shihab et al. (arXiv), 'Opportunity Is Not Realizability: Selection-Valid Diagnostics for Multi-LLM Routing'"


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
    from ..stats import paper000

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
