"""Benchmark: the held-out pool-construction sweep (paper 002 App. J) against a per-subset Python loop.

The workload is the paper's grid: an 8-model pool on four datasets of 300 items each
(``compose.latent_world``), sizes 1..7 x 4 datasets x 40 folds = 1,120 cells, each with the
calibration-half anchor, greedy, the exhaustive optimum, held-out coverage and 200 random subsets.

1. the full sweep (``compose.pool_sweep``: also the four baselines and the downstream gain of the
   routers module's embedding nearest-neighbour router, ``router="auto"``, on the pool's
   embeddings), timed;
2. the core of the sweep (anchor, greedy, exhaustive, held-out coverage, random subsets) twice
   in the same run: with the packed bit-mask engine, and with a plain loop that evaluates one
   subset at a time (numpy on the boolean columns of that subset) -- the speed ratio is
   reference seconds / ours;
3. agreement of the two on every deterministic number (greedy and optimum on calibration,
   held-out greedy and hindsight optimum), and of the random-subset means within Monte Carlo error.

Exit status 1 when an agreement check fails or the full sweep takes longer than 120 s (timings
are printed, never asserted by tests).

usage: python bench/bench_pools.py [--folds 40] [--items 300] [--random 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from oraclegap.deploy import compose  # noqa: E402

TARGET_S = 120.0


def reference_core(parts, folds, n_random, seed):
    """One subset at a time: the sweep's core quantities with Python loops over subsets and draws."""
    rng = np.random.default_rng(seed)
    out = {}
    for (ds, X), T in zip(parts, folds, strict=True):
        n, K = X.shape
        for f in range(T.shape[0]):
            test = T[f]
            cal = ~test
            Xc, Xt = X[cal], X[test]
            b = int(np.argmax(Xc.sum(axis=0)))
            cand = [j for j in range(K) if j != b]

            def F(M, S, b=b):
                return int((~M[:, b] & M[:, list(S)].any(axis=1)).sum()) if S else 0

            chosen = []
            for s in range(1, K):
                best_j, best_v = None, -1
                for j in cand:
                    if j in chosen:
                        continue
                    v = F(Xc, chosen + [j])
                    if v > best_v:
                        best_j, best_v = j, v
                chosen.append(best_j)
                opt_c, hind = -1, -1
                for S in itertools.combinations(cand, s):
                    opt_c = max(opt_c, F(Xc, S))
                    hind = max(hind, F(Xt, S))
                rnd = [F(Xt, rng.choice(cand, size=s, replace=False).tolist()) for _ in range(n_random)]
                out[(ds, f, s)] = (F(Xc, chosen), opt_c, F(Xt, chosen), hind, float(np.mean(rnd)) / test.sum(), float(np.var(rnd)) / test.sum() ** 2)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, default=40)
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--random", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    world = compose.latent_world(n_items=args.items, n_models=8, seed=args.seed)
    pool = world.pool
    ds_names = list(dict.fromkeys(pool.prompts["dataset"]))
    print(f"== pool sweep: {len(ds_names)} datasets x {args.items} items x 8 models, sizes 1..7, {args.folds} folds, "
          f"{args.random} random subsets per cell")
    compose.pool_sweep(pool, n_folds=2, n_random=4, seed=0, router="auto")  # imports, kmedoids, sklearn

    t0 = time.perf_counter()
    full = compose.pool_sweep(pool, n_folds=args.folds, n_random=args.random, seed=args.seed, router="auto")
    t_full = time.perf_counter() - t0
    n_cells = len(full.cells)
    print(f"   full sweep (greedy, exhaustive, 4 baselines, random, embed_knn router gain): {n_cells:,} cells in "
          f"{t_full:.2f} s (target < {TARGET_S:.0f} s: {'ok' if t_full < TARGET_S else 'SLOW'})")

    t0 = time.perf_counter()
    core = compose.pool_sweep(pool, n_folds=args.folds, n_random=args.random, seed=args.seed, baselines=())
    t_core = time.perf_counter() - t0

    # the same folds for the reference: regenerate them with the sweep's own generator and order
    rng = np.random.default_rng(args.seed)
    parts, folds = [], []
    X_all = pool.verdicts[:, :, 0]
    for ds in ds_names:
        X = X_all[(pool.prompts["dataset"] == ds).to_numpy()]
        parts.append((ds, X))
        folds.append(compose._fold_masks(X.shape[0], args.folds, 0.5, rng))
        rng.random((args.folds, args.random, X.shape[1]))  # the sweep draws its random keys here
    t0 = time.perf_counter()
    ref = reference_core(parts, folds, args.random, args.seed + 1)
    t_ref = time.perf_counter() - t0
    print(f"   core (anchor, greedy, exhaustive, held-out, random): bit masks {t_core:.3f} s, per-subset loop {t_ref:.2f} s "
          f"-> speed ratio {t_ref / t_core:.0f}x")

    c = core.cells.set_index(["dataset", "fold", "size"])
    bad, z_max = 0, 0.0
    for key, (gc, oc, gt, hd, rmean, rvar) in ref.items():
        row = c.loc[key]
        same = (round(row.greedy_cal * row.n_cal) == gc and round(row.optimum_cal * row.n_cal) == oc
                and round(row.greedy_test * row.n_test) == gt and round(row.hindsight_test * row.n_test) == hd)
        bad += not same
        se = np.sqrt(2 * rvar / args.random)  # two independent means of n_random draws
        if se > 0:
            z_max = max(z_max, abs(row.random_mean - rmean) / se)
    print(f"   agreement on greedy/optimum (calibration) and greedy/hindsight (test): {len(ref) - bad}/{len(ref)} cells")
    print(f"   random-subset means, sweep vs loop (independent draws): largest |z| = {z_max:.2f} over {len(ref)} cells")
    s = full.summary()
    print(f"   greedy/optimum over all cells: min {full.cells['ratio'].min():.3f}, mean {full.cells['ratio'].mean():.3f} "
          f"(Thm 8 bound {compose.GREEDY_BOUND:.3f}); greedy above the random p95 in {full.cells['above_p95'].mean():.1%} of cells")
    print(f"   mean embed_knn router gain at size 2 (greedy pool): {s.loc[s['size'] == 2, 'greedy_router_gain'].mean():+.4f}")
    try:
        print(f"   (1-minute load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    except OSError:  # pragma: no cover
        pass
    ok = bad == 0 and z_max < 5 and t_full < TARGET_S
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
