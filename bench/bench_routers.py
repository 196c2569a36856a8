"""Benchmark: every router family on MMLU-Pro, and the vectorised bootstrap against a loop.

1. Loads ``mmlu-pro`` (the items all 29 models answered, from ``$OG_EXTERNAL_DIR``), its MiniLM
   embeddings (from the cache; computed and cached on the first run, timed separately), and runs
   :func:`oraclegap.deploy.evaluate.evaluate_routers` with every family the inputs allow under
   5-fold cross-fitting and 2000 prompt-bootstrap resamples. Prints the wall time of the whole
   evaluation (target: under 10 minutes on 2 cores), the fit time of each family and its row of
   the router table.
2. Times the bootstrap of that evaluation -- member, router and oracle columns of all prompts,
   2000 resamples -- vectorised (:func:`~oraclegap.deploy.evaluate.bootstrap_means`: counts
   straight from the generator's raw words into a block, one float32 product per block) against
   the plain loop over resamples doing the same work
   (:func:`~oraclegap.deploy.evaluate.bootstrap_means_loop`: the same draws, then the sum of each
   resample's rows; the same numbers, checked), each the best of five runs, and prints two
   ratios (target: >= 10x):

   * **equal work**: one router's columns (the members, the router, the oracle), vectorised
     against the loop on exactly those columns; the same for all routers' columns at once;
   * **per router inside one evaluation**: every router shares the resamples, so the
     evaluation's bootstrap cost per router (all columns at once, divided by the number of
     routers) against a loop over resamples run once per router.

Without the external data (or with ``--pool sim``) it runs on a simulated pool of the same shape.
Timings are printed, never asserted; the exit status is 1 only when the vectorised and looped
bootstraps disagree.

usage: python bench/bench_routers.py [--pool mmlu-pro|sim] [--cv 5] [--n-boot 2000] [--families a,b]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
os.environ.setdefault("OG_EXTERNAL_DIR", str(ROOT.parent / "shared" / "external"))

from oraclegap import datasets  # noqa: E402
from oraclegap.deploy.evaluate import bootstrap_means, bootstrap_means_loop, evaluate_routers, outcome_matrix  # noqa: E402
from oraclegap.deploy.features import router_inputs, simulated_router_pool  # noqa: E402


def load(name: str):
    if name != "sim":
        pool, why = datasets.load_optional(name)
        if pool is not None:
            return pool, name
        print(f"({name} unavailable: {why}; using a simulated pool of the same shape)")
    sim = simulated_router_pool(10326, 29, 1, strength=0.1, d=384, seed=0)
    return sim.pool, "simulated 10326 x 29"


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", default="mmlu-pro")
    ap.add_argument("--cv", type=int, default=5)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--families", default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    pool, label = load(args.pool)
    print(f"== routers on {label}: {pool.n_prompts} prompts x {pool.n_policies} policies, k={pool.k}; "
          f"{os.cpu_count()} CPU(s); load average {os.getloadavg()[0]:.1f}")
    t0 = time.perf_counter()
    X = router_inputs(pool, progress=True)
    t_inputs = time.perf_counter() - t0
    print(f"inputs: {X.source} embeddings {X.embeddings.shape}, dataset column {X.dataset_column!r}; "
          f"{t_inputs:.1f} s (a cached embedding loads in about a second)")

    t0 = time.perf_counter()
    res = evaluate_routers(pool, args.families, cv=args.cv, seed=args.seed, inputs=X, n_boot=args.n_boot, progress=True)
    wall = time.perf_counter() - t0
    fits = sum(e.fit_seconds for e in res.evaluations.values())
    print(f"\nall {len(res.evaluations)} families, {res.protocol.describe()}, {args.n_boot} resamples: "
          f"{wall:.1f} s wall ({wall / 60:.2f} min; target < 10 min: {'yes' if wall < 600 else 'NO'}); "
          f"fitting {fits:.1f} s, evaluation {wall - fits:.1f} s")
    if res.skipped:
        print("skipped: " + "; ".join(f"{k} ({v})" for k, v in res.skipped.items()))
    table = res.frame().assign(fit_s=[e.fit_seconds for e in res.evaluations.values()])
    with pd.option_context("display.width", 220, "display.max_columns", 30, "display.float_format", "{:.3f}".format):
        print(table.to_string(index=False))

    # ---------------------------------------------------------------- the bootstrap, vectorised vs a loop
    O, _ = outcome_matrix(pool)
    rows = np.arange(pool.n_prompts)
    S = np.stack([O[rows, e.choice] for e in res.evaluations.values()], axis=1)
    Z_all = np.column_stack([O, S, O.any(axis=1)]).astype(float)
    Z_one = np.column_stack([O, S[:, 1], O.any(axis=1)]).astype(float)
    bootstrap_means(Z_one[:50], 10, 0)  # compile the counting kernel
    B = args.n_boot
    t_vec_all, a = best_of(lambda: bootstrap_means(Z_all, B, args.seed), 5)
    t_loop_all, b = best_of(lambda: bootstrap_means_loop(Z_all, B, args.seed), 5)
    t_vec_one, c = best_of(lambda: bootstrap_means(Z_one, B, args.seed), 5)
    t_loop_one, d = best_of(lambda: bootstrap_means_loop(Z_one, B, args.seed), 5)
    same = np.array_equal(a, b) and np.array_equal(c, d)  # 0/1 columns: exact in both
    F = S.shape[1]
    r_one, r_all, r_shared = t_loop_one / t_vec_one, t_loop_all / t_vec_all, t_loop_one / (t_vec_all / F)
    print(f"\n== prompt bootstrap, {B} resamples of {pool.n_prompts} prompts, best of 5 runs each "
          f"(same draws and numbers: {same}; load average {os.getloadavg()[0]:.1f})")
    print(f"equal work, one router ({Z_one.shape[1]} columns): vectorised {t_vec_one:.3f} s, loop {t_loop_one:.3f} s: "
          f"{r_one:.1f}x (target >= 10x: {'yes' if r_one >= 10 else 'NO'})")
    print(f"equal work, all {F} routers at once ({Z_all.shape[1]} columns): vectorised {t_vec_all:.3f} s, loop {t_loop_all:.3f} s: "
          f"{r_all:.1f}x (target >= 10x: {'yes' if r_all >= 10 else 'NO'})")
    print(f"per router inside one evaluation (shared resamples, {t_vec_all / F:.3f} s each) against a loop per router "
          f"({t_loop_one:.3f} s each): {r_shared:.1f}x")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
