"""Benchmark: the vectorised prompt bootstrap of the single-draw decomposition against a plain
loop over resamples.

Both resample the per-prompt columns that :func:`oraclegap.stats.noise.decomposition` resamples
(O_exp, plug-in and LOO O_repro, the independence form, the Frechet upper bound, every member's
rate and its rates on 8 random half splits of the draws) and derive the noise share against the
best member re-selected per resample; :func:`oraclegap.stats.noise.boot_means` draws the
weights of a block of resamples at once and takes one matrix product, the loop draws indices
and averages once per resample. Prints both wall times, the ratio, and checks that
the two agree in distribution (the 2.5% and 97.5% quantiles of the noise share within 0.01).
The pool is the k = 30 MATH-500 tensor when ``$OG_EXTERNAL_DIR`` holds it, else a simulated
pool of the same shape (500 x 11 x 30). Timings are printed, never asserted by tests.

usage: python bench/bench_noise.py [--boot 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from oraclegap import datasets  # noqa: E402
from oraclegap.pool import Pool  # noqa: E402
from oraclegap.stats import noise  # noqa: E402


def pool_for_bench(seed: int) -> tuple[Pool, str]:
    try:
        return datasets.load("chen2026-math500"), "chen2026-math500"
    except (FileNotFoundError, KeyError):
        rng = np.random.default_rng(seed)
        p = rng.beta(0.5, 0.3, (500, 11))
        return Pool.from_array(rng.random((500, 11, 30)) < p[:, :, None], alignment="seed-aligned"), "simulated 500 x 11 x 30"


def columns(v: np.ndarray, seed: int, splits: int = 8) -> np.ndarray:
    """The per-prompt columns the decomposition resamples: O_exp, plug-in and LOO O_repro, the
    independence form, the Frechet upper bound, member rates and split-half member rates."""
    n, M, k = v.shape
    r = v.mean(axis=2)
    mask = np.random.default_rng(seed).random((splits, k)).argsort(axis=1) < k // 2
    vf = v.astype(float)
    rA = np.einsum("imj,sj->ism", vf, mask.astype(float)).reshape(n, -1) / (k // 2)
    rB = np.einsum("imj,sj->ism", vf, (~mask).astype(float)).reshape(n, -1) / (k - k // 2)
    return np.column_stack([v.any(axis=1).mean(axis=1), r.max(axis=1), noise.split_draw_repro(v, method="loo"),
                            1 - np.prod(1 - r, axis=1), np.minimum(1, r.sum(axis=1)), r, rA, rB])


def share(means: np.ndarray, M: int) -> np.ndarray:
    """Noise share against the re-selected best member from resampled column means [..., q]."""
    return (means[..., 0] - means[..., 1]) / (means[..., 0] - means[..., 5 : 5 + M].max(axis=-1))


def loop_bootstrap(X: np.ndarray, B: int, seed: int) -> np.ndarray:
    """The same resampled column means, one resample per Python iteration."""
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    out = np.empty((B, X.shape[1]))
    for b in range(B):
        out[b] = X[rng.integers(0, n, n)].mean(axis=0)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boot", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    pool, label = pool_for_bench(args.seed)
    v = pool.verdicts
    print(f"pool: {label} {v.shape}, B = {args.boot} prompt resamples of the decomposition's per-prompt columns")

    X = columns(v, args.seed)
    M = v.shape[1]
    t0 = time.perf_counter()
    share_vec = share(noise.boot_means(X, args.boot, seed=args.seed), M)
    t_vec = time.perf_counter() - t0

    t0 = time.perf_counter()
    share_loop = share(loop_bootstrap(X, args.boot, args.seed + 1), M)
    t_loop = time.perf_counter() - t0

    t0 = time.perf_counter()
    d = noise.decomposition(pool, n_boot=args.boot, seed=args.seed)
    t_full = time.perf_counter() - t0

    qv, ql = np.quantile(share_vec, [0.025, 0.975]), np.quantile(share_loop, [0.025, 0.975])
    print(f"noise-share bootstrap, vectorised: {t_vec:.3f} s   quantiles {qv.round(4).tolist()}")
    print(f"noise-share bootstrap, loop:       {t_loop:.3f} s   quantiles {ql.round(4).tolist()}")
    print(f"full decomposition (all 15 terms, brackets, split draws): {t_full:.3f} s; noise share {d.value('noise_share'):.4f}")
    ok = bool(np.abs(qv - ql).max() < 0.01)
    print(f"agreement of the two bootstraps: {'ok' if ok else 'FAILED'}")
    print(f"speed ratio (loop / vectorised): {t_loop / t_vec:.1f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
