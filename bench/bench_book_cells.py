"""Benchmark: the book's heavy cells, each shortcut switched off (A) and on (B) in one process.

Every shortcut here returns the very numbers of the computation it replaces; each case prints the
CPU seconds of A and B (``time.process_time``: on a shared machine CPU seconds, not wall time), the
ratio A/B and whether the outputs are equal (``array_equal`` / ``DataFrame.equals``):

1. ``cp`` -- chapter 04's coverage grid (``studies.gap_coverage`` over the lead x n grid): the
   Clopper-Pearson and binomial-percentile limits once per distinct count
   (``certify.binomial._on_unique``) against once per element;
2. ``features`` -- ``evaluate_routers`` with every text family on one pool (chapter 05): the
   TF-IDF of 000's two presets and the handcrafted prompt statistics computed once per
   settings and texts (``routers.featurise._SHARED``) against once per fit;
3. ``neighbours`` -- chapter 06's router-gain sweep (``compose.pool_sweep`` with the embedding
   k-NN router): one neighbour search per split (``routers.shared_neighbours``) against one per
   sub-pool;
4. ``embeddings`` -- chapter 05's TF-IDF + SVD embedding of a pool: fitted (``cache=False``)
   against read from the cache (``features.tfidf_svd_embeddings``, keyed by the texts, the
   settings, the module's source and the library versions);
5. ``tables`` -- chapter 02's paper-000 studies (Tables 2 and A3 at the chapter's 20 replicates
   and 400 null draws): the default prompt and policy tables of every simulated pool normalised
   once per shape (``pool._DEFAULT_TABLES``, copies handed out) against once per pool.

With ``$OG_EXTERNAL_DIR`` the cases run on the chapters' registry pools (RouterBench for 2-4),
otherwise on simulated pools of similar size. Timings are printed, never asserted; the exit
status is 1 only when A and B disagree.

usage: python bench/bench_book_cells.py [--reps 20000] [--pool routerbench-all|sim] [--only cp,features,...]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time

import numpy as np
import pandas as pd

from oraclegap import datasets
from oraclegap.deploy import compose as CO
from oraclegap.deploy import features as FE
from oraclegap.deploy import routers as RT
from oraclegap.deploy.evaluate import evaluate_routers
from oraclegap.deploy.routers import featurise as RF
from oraclegap.stats import studies
from oraclegap.stats.certify import binomial

CASES = ("cp", "features", "neighbours", "embeddings", "tables")


def _cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def _report(name, a, b, same, what):
    print(f"{name:<11} A {a:7.2f} CPU-s   B {b:7.2f} CPU-s   A/B {a / max(b, 1e-9):6.2f}x   equal: {same}   ({what})",
          flush=True)
    return same


def case_cp(reps: int) -> bool:
    def grid():
        rng = np.random.default_rng(0)
        rows = []
        for d in (0.0, 0.01, 0.03, 0.05, 0.10, 0.20):
            pop = studies.mixture_population(np.r_[0.6, np.full(7, 0.6 - d)])
            for n in (25, 50, 100, 200, 400, 800):
                rows.append(studies.gap_coverage(pop, n, reps=reps, alpha=0.05, seed=rng,
                                                 methods=("naive", "naive-percentile", "exact",
                                                          "paired")))
        return pd.concat(rows, ignore_index=True)

    keep = binomial._UNIQUE_MIN
    binomial._UNIQUE_MIN = 10**15  # A: every element evaluated
    try:
        a, ga = _cpu(grid)
    finally:
        binomial._UNIQUE_MIN = keep
    b, gb = _cpu(grid)
    return _report("cp", a, b, ga.equals(gb), f"6 x 6 coverage cells, {reps:,} samples each, M = 8")


def _pool(name: str):
    if name != "sim":
        pool, why = datasets.load_optional(name)
        if pool is not None:
            return pool, name
        print(f"({name} absent: {why}; a simulated pool instead)")
    return FE.simulated_router_pool(1600, 8, 1, strength=0.3, seed=0).pool, "simulated 1600 x 8"


def case_features(pool, label) -> bool:
    fams = ["tfidf_logreg", "tfidf_knn", "gbr_features", "paper000_knn", "paper000_linear", "paper000_boosted"]
    X = FE.router_inputs(pool, embed="none")

    def run():
        RF._SHARED.clear()
        return evaluate_routers(pool, fams, split="half", seed=0, inputs=X, n_boot=300)

    keep = RF._SHARED_SIZE
    RF._SHARED_SIZE = 0  # A: nothing kept
    try:
        a, ra = _cpu(run)
    finally:
        RF._SHARED_SIZE = keep
    b, rb = _cpu(run)
    same = all(np.array_equal(ra.evaluation(f).utility, rb.evaluation(f).utility) for f in ["best_single", *fams])
    return _report("features", a, b, same, f"{len(fams)} text families on {label}")


def case_neighbours(pool, label) -> bool:
    kw = dict(by="dataset" if "dataset" in pool.prompts else None, sizes=[1, 2, 3], n_folds=10, n_random=200,
              seed=0, router="embed_knn", embed="tfidf-svd", baselines=("accuracy",))
    real = RT.shared_neighbours
    RT.shared_neighbours = contextlib.nullcontext  # A: one search per sub-pool
    try:
        a, sa = _cpu(lambda: CO.pool_sweep(pool, **kw))
    finally:
        RT.shared_neighbours = real
    b, sb = _cpu(lambda: CO.pool_sweep(pool, **kw))
    same = sa.rules.equals(sb.rules) and sa.cells.equals(sb.cells)
    return _report("neighbours", a, b, same, f"pool sweep, 10 folds, sizes 1-3, embedding k-NN, {label}")


def case_embeddings(pool, label) -> bool:
    texts = [str(t) for t in pool.prompts["text"]]
    with tempfile.TemporaryDirectory() as tmp:
        a, ea = _cpu(lambda: FE.tfidf_svd_embeddings(texts, cache=False))
        FE.tfidf_svd_embeddings(texts, cache=tmp)  # the first chapter that embeds the pool
        b, eb = _cpu(lambda: FE.tfidf_svd_embeddings(texts, cache=tmp))
    return _report("embeddings", a, b, np.array_equal(ea, eb), f"TF-IDF + SVD of {len(texts):,} texts, {label}")


class _NoMemo(dict):
    def __setitem__(self, key, value):  # nothing kept: every pool builds its tables
        pass


def case_tables() -> bool:
    from oraclegap.pool import _fields as P
    from oraclegap.stats import paper000 as P000

    margins = P000.margins_from_table(datasets.paper_table("000_seed_pool"))

    def run():
        rng = np.random.default_rng(0)
        return pd.concat([fn(datasets.paper_table(stem), margins=margins, n_reps=20, n_draws=400, seed=rng).frame()
                          for fn, stem in ((P000.table2_diffuse, "000_table2_diffuse"),
                                           (P000.tableA3_excess, "000_tableA3_excess"))], ignore_index=True)

    keep = P._DEFAULT_TABLES
    P._DEFAULT_TABLES = _NoMemo()
    try:
        a, fa = _cpu(run)
    finally:
        P._DEFAULT_TABLES = keep
    b, fb = _cpu(run)
    return _report("tables", a, b, fa.equals(fb), "000's Tables 2 and A3, 20 replicates, 400 null draws")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20000, help="samples per coverage cell (chapter 04: 20000)")
    ap.add_argument("--pool", default="routerbench-all", help="registry pool for cases 2-4, or 'sim'")
    ap.add_argument("--only", default=",".join(CASES), help=f"comma-separated subset of {CASES}")
    args, _ = ap.parse_known_args(argv)
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    bad = [c for c in only if c not in CASES]
    if bad:
        print(f"--only: unknown case(s) {bad}; choose from {CASES}", file=sys.stderr)
        return 2
    ok = True
    if "cp" in only:
        ok &= case_cp(args.reps)
    if "tables" in only:
        ok &= case_tables()
    if set(only) - {"cp", "tables"}:
        pool, label = _pool(args.pool)
        if "features" in only:
            ok &= case_features(pool, label)
        if "neighbours" in only:
            ok &= case_neighbours(pool, label)
        if "embeddings" in only:
            ok &= case_embeddings(pool, label)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
