"""Benchmark: the vectorised prompt bootstrap of the single-draw decomposition against a plain
loop over resamples.

Both resample the per-prompt columns that :func:`oraclegap.stats.noise.decomposition` resamples
(O_exp, plug-in and LOO O_repro, the independence form, the Frechet upper bound, every member's
rate and its rates on 8 random half splits of the draws) and derive the noise share against the
best member re-selected per resample; :func:`oraclegap.stats.bootstrap.bootstrap_means` counts
the draws of a block of resamples at once and takes exact matrix products, the loop draws
indices and averages once per resample. Prints both wall times, the ratio, and checks that
the two agree in distribution (the 2.5% and 97.5% quantiles of the noise share within 0.01).

Second, the within-cell permutation null of 001's assumption checks
(:func:`oraclegap.stats.noise.permutation_checks`) on a simulated seed-aligned pool of
``--perm-n`` prompts x 10 members x 16 draws: the compiled keyed kernel (one random subset per
mixed cell, :func:`oraclegap.stats.noise._permutations._permuted_stats`) against an array
reference (argsort of fresh uniforms per cell, reordered verdicts, :func:`_draw_stats`),
with the ratio and the agreement of the two null means (within 4 standard errors).
The pool is the k = 30 MATH-500 tensor when ``$OG_EXTERNAL_DIR`` holds it, else a simulated
pool of the same shape (500 x 11 x 30). Timings are printed, never asserted by tests.

usage: python bench/bench_noise.py [--boot 2000] [--seed 0] [--perm-n 20000] [--perms 100]
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
from oraclegap.stats.bootstrap import bootstrap_means  # noqa: E402
from oraclegap.stats.noise import _permutations  # noqa: E402


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


def reference_permutation_null(v: np.ndarray, n_perm: int, seed: int) -> np.ndarray:
    """[n_perm, 3] statistics of within-cell permutations drawn as the argsort of uniforms."""
    rng = np.random.default_rng(seed)
    draw = _permutations._draw_stats
    out = [draw(np.take_along_axis(v, rng.random(v.shape).argsort(axis=-1), -1))
           for _ in range(n_perm)]
    return np.stack(out)


def permutation_bench(n: int, n_perm: int, seed: int) -> bool:
    rng = np.random.default_rng(seed)
    v = rng.random((n, 10, 16)) < rng.beta(0.347, 0.601, (n, 10, 1))
    c = v.sum(axis=-1).astype(np.int64)
    q = (c / 16)[None]
    pb = _permutations._poisson_binomial(q[0]).mean(axis=0)
    den = 16 * (q * (1 - q)).sum(axis=(-2, -1))
    # compiled (or loaded) before timing
    _permutations._permuted_stats(c[:50], 16, 1, 0, 2, pb, den)
    t0 = time.perf_counter()
    fast = _permutations._permuted_stats(c, 16, 12345, 0, n_perm, pb, den)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = reference_permutation_null(v, n_perm, seed + 1)  # not the stream that drew v
    t_ref = time.perf_counter() - t0
    se = np.sqrt(fast.var(axis=0, ddof=1) / n_perm + ref.var(axis=0, ddof=1) / n_perm)
    z = np.abs(fast.mean(axis=0) - ref.mean(axis=0)) / np.where(se > 0, se, np.inf)
    print(f"\nwithin-cell permutation null, {n:,} x 10 x 16, {n_perm} permutations:")
    print(f"  keyed kernel: {t_fast:.3f} s   null means {fast.mean(axis=0).round(5).tolist()}")
    print(f"  argsort reference: {t_ref:.3f} s   null means {ref.mean(axis=0).round(5).tolist()}")
    ok = bool((z < 4).all())
    print(f"  agreement of the null means (|z| < 4): {'ok' if ok else 'FAILED'} (z = {z.round(2).tolist()})")
    print(f"  speed ratio (reference / kernel): {t_ref / t_fast:.1f}x")
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boot", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--perm-n", type=int, default=20_000)
    ap.add_argument("--perms", type=int, default=100)
    args = ap.parse_args(argv)
    pool, label = pool_for_bench(args.seed)
    v = pool.verdicts
    print(f"pool: {label} {v.shape}, B = {args.boot} prompt resamples of the decomposition's per-prompt columns")

    X = columns(v, args.seed)
    M = v.shape[1]
    t0 = time.perf_counter()
    share_vec = share(bootstrap_means(X, args.boot, seed=args.seed), M)
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
    ok_perm = permutation_bench(args.perm_n, args.perms, args.seed)
    return 0 if ok and ok_perm else 1


if __name__ == "__main__":
    sys.exit(main())
