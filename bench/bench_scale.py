"""Benchmark: how each step's cost grows with the number of prompts.

Synthetic pools of n prompts x M = 10 policies x k = 16 draws (exchangeable Beta(0.347, 0.601)
prompt rates, :func:`oraclegap.stats.simulate.exchangeable`), n in ``--sizes`` (default 1e3, 1e4,
1e5; add 1e6 where it fits). Per step and size: the median wall time of ``--repeats`` runs (default
3) and the peak of traced memory (tracemalloc, which numpy reports its buffers to) in one more run;
per step the fitted growth exponent b of time ~ n^b over the sizes >= 1e4 (all sizes when fewer
than two are). Steps: coverage (4 thresholds), certify (paired comparison, 4000 resamples),
noise decomposition (2000 resamples), re-deal null (1000 draws), both nulls (1000 draws),
to_long (parquet), open_pool of that long parquet, the k-NN router (fit on a calibration half,
predict the other half, 32-d embeddings) exact (``routers_knn``) and with its reference set
capped at ``--knn-reference`` prompts (``routers_knn_ref``, :class:`EmbedKNN` ``max_reference``),
and with ``--steps ...,audit`` the whole audit in ``--small`` mode (``run_audit(small=True)``,
without the report; ``--small`` cuts the null draws 2000 -> 400, the power replicates 40 -> 12,
the planners' replicates 40 -> 12 and their draws 200 -> 100, the bootstraps 2000 -> 400, the
noise checks' permutations 199 -> 99 and the excess bootstrap 300 x 200 -> 60 x 100; see
``oraclegap.audit.settings``). Above ``LARGE_N`` = 5000 prompts the audit takes its large-n Monte
Carlo design (``oraclegap.audit.settings.large_n_design``: sequential null and quality tests,
39-draw exact power trials on the re-deal null with an early look, planners only when the power is
not adequate, two margin chains with 30 n M burn-in and a table every n M / 2 proposals, excess
resamples without null draws), so the audit's row at 1e3 is the standard design and its growth
exponent (fitted over n >= 1e4) is the large-n design's; ``bench/bench_audit.py`` times the whole
command per section. Every step also prints its process CPU seconds (all threads; median) and
the growth exponent of those, which a shared machine's load distorts less than wall time.
Target: b <= 1.1 for
every step except the exact k-NN: exact neighbours compare each query with every calibration
prompt, O(n_q n_cal) = O(n^2) by definition, so its row is printed as such; the capped router is
the linear one (exact, neighbour for neighbour, while the calibration half holds at most the cap).
The long-table steps have absolute targets too: at n = 1e5, ``to_long`` and
``open_pool`` of that file each in <= 1 s (the median above) and <= 10x the verdicts' size
(n M k bytes) in memory. Memory here is the peak resident size a fresh process gains during the
step (Linux's ``VmHWM`` minus ``VmRSS``, the mark reset just before the step, after a
warm-up on a 500-prompt pool; the pool read with ``Pool.load``): unlike the traced peak it counts Arrow's buffers, its
threads' heaps and what the allocators keep.
The machine may be shared: compare ratios within one run. Timings are printed, never asserted by
tests.

usage: python bench/bench_scale.py [--sizes 1000,10000,100000] [--repeats 3] [--steps a,b] [--no-memory]
                                   [--knn-reference 4096]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from oraclegap import sources  # noqa: E402
from oraclegap.audit import run_audit  # noqa: E402
from oraclegap.deploy import routers  # noqa: E402
from oraclegap.stats import certify, coverage, noise, nulls, simulate  # noqa: E402

TAUS = (0.05, 0.10, 0.20, 0.30)
B_MAX = 1.1


#: Steps run unless ``--steps`` names others (the audit takes minutes at 1e5: ask for it).
DEFAULT_STEPS = ("coverage", "certify", "noise", "redeal", "both_nulls", "to_long", "open_pool_long", "routers_knn",
                 "routers_knn_ref")
#: The long-table steps with absolute targets at LONG_TARGET_N, and what their fresh process runs.
LONG_STEPS = {"to_long": "to_long", "open_pool_long": "open_pool"}
#: Steps held to no growth target, with the reason printed beside them.
NO_TARGET = {"routers_knn": "exact k-NN: O(n_q n_cal) = O(n^2) by definition; routers_knn_ref is the linear router"}


def _knn(emb, half: int, reference: int | None):
    from oraclegap.deploy.features import RouterInputs

    Y = (np.random.default_rng(1).random((half, 10)) < 0.5).astype(float)
    r = routers.EmbedKNN(max_reference=reference).fit(RouterInputs(embeddings=emb[:half]), Y)
    r.predict(RouterInputs(embeddings=emb[half:]))


def _steps(pool, tmp: Path, knn_reference: int = 4096):
    v = pool.verdicts
    n = v.shape[0]
    long_path = tmp / f"long_{n}.parquet"
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(n, 32))
    half = n // 2

    def to_long():
        pool.to_long(long_path, overwrite=True)

    def open_long():
        if not long_path.exists():
            to_long()
        sources.open_pool(str(long_path))

    return {
        "coverage": lambda: coverage.coverage(pool, TAUS),
        "certify": lambda: certify.paired_comparison(v[:, 0, 0], v[:, 1, 0], oracle=v[:, :, 0].any(axis=1), seed=0),
        "noise": lambda: noise.decomposition(pool, n_boot=2000, seed=0),
        "redeal": lambda: nulls.null_tests(pool, TAUS, nulls=("redeal",), n_draws=1000, seed=0),
        "both_nulls": lambda: nulls.null_tests(pool, TAUS, n_draws=1000, seed=0),
        "to_long": to_long,
        "open_pool_long": open_long,
        "routers_knn": lambda: _knn(emb, half, None),
        "routers_knn_ref": lambda: _knn(emb, half, knn_reference),
        "audit": lambda: run_audit(pool, small=True),
    }


#: Absolute targets of the long-table steps at this many prompts: seconds, memory / verdicts' bytes.
LONG_TARGET_N, LONG_TARGET_S, LONG_TARGET_X = 100_000, 1.0, 10.0


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(f"/proc/self/status has no {field}")


def _rss_child(step: str, pool_dir: str, long_path: str) -> int:
    """In a fresh process: the peak resident bytes gained while ``step`` runs (see the docstring).

    Linux's high-water mark (``VmHWM``) is reset to the current resident size just before the
    step (``/proc/self/clear_refs``), so neither the imports nor the parent's size count; -1
    where the mark cannot be reset."""
    from oraclegap.pool import Pool

    with tempfile.TemporaryDirectory(prefix="og-bench-warm-") as td:
        warm = simulate.exchangeable(500, 10, 16, seed=1).pool
        warm.to_long(Path(td) / "w.parquet")
        sources.open_pool(str(Path(td) / "w.parquet"))
    pool = Pool.load(pool_dir) if step == "to_long" else None
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        start = _status_bytes("VmRSS")
    except OSError:
        return -1
    if step == "to_long":
        pool.to_long(Path(long_path).with_name("rss_" + Path(long_path).name), overwrite=True)
    else:
        sources.open_pool(long_path)
    return _status_bytes("VmHWM") - start


def _rss_of(step: str, pool, tmp: Path) -> int:
    import subprocess

    n = pool.shape[0]
    pool_dir, long_path = tmp / f"pool_{n}", tmp / f"long_{n}.parquet"
    if not pool_dir.exists():
        pool.save(pool_dir)
    if not long_path.exists():
        pool.to_long(long_path)
    out = subprocess.run([sys.executable, __file__, "--rss-child", step, str(pool_dir), str(long_path)],
                         check=True, capture_output=True, text=True)
    return int(out.stdout.split()[-1])


def _fit_b(ns, ts) -> float:
    pts = [(n, t) for n, t in zip(ns, ts, strict=True) if n >= 10_000 and t > 0]
    if len(pts) < 2:
        pts = [(n, t) for n, t in zip(ns, ts, strict=True) if t > 0]
    if len(pts) < 2:
        return float("nan")
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def _fmt_t(t: float) -> str:
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def _fmt_b(b: float) -> str:
    return f"{b / 2**20:.0f} MiB" if b >= 2**20 else f"{b / 1024:.0f} KiB"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", default=None, help="comma-separated subset of the steps")
    ap.add_argument("--no-memory", action="store_true", help="skip the traced-memory run")
    ap.add_argument("--knn-reference", type=int, default=4096,
                    help="reference prompts of the capped k-NN router (routers_knn_ref)")
    ap.add_argument("--rss-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rss_child:
        print(_rss_child(*args.rss_child))
        return 0
    sizes = [int(float(s)) for s in args.sizes.split(",") if s.strip()]
    results: dict[str, dict[int, tuple[float, float | None]]] = {}
    long_rows: dict[str, tuple[float, int, int]] = {}
    with tempfile.TemporaryDirectory(prefix="og-bench-scale-") as td:
        tmp = Path(td)
        warm = simulate.exchangeable(64, 10, 16, seed=1).pool
        warm_steps = _steps(warm, tmp, args.knn_reference)
        wanted = list(DEFAULT_STEPS) if args.steps is None else [s for s in args.steps.split(",") if s in warm_steps]
        for name in wanted:  # compile kernels, import modules
            warm_steps[name]()
        for n in sizes:
            pool = simulate.exchangeable(n, 10, 16, seed=0).pool
            steps = _steps(pool, tmp, args.knn_reference)
            names = wanted
            for name in names:
                fn = steps[name]
                times, cpus = [], []
                for _ in range(max(1, args.repeats)):
                    gc.collect()
                    t0, c0 = time.perf_counter(), time.process_time()
                    fn()
                    times.append(time.perf_counter() - t0)
                    cpus.append(time.process_time() - c0)
                peak = None
                if not args.no_memory:
                    gc.collect()
                    tracemalloc.start()
                    fn()
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                results.setdefault(name, {})[n] = (statistics.median(times), peak, statistics.median(cpus))
                print(f"   {name:<15} n={n:>9,}: {_fmt_t(statistics.median(times)):>10}, cpu "
                      f"{_fmt_t(statistics.median(cpus))}" + ("" if peak is None else f", peak {_fmt_b(peak)}"), flush=True)
                if name in LONG_STEPS and n == LONG_TARGET_N:
                    long_rows[name] = (statistics.median(times), _rss_of(LONG_STEPS[name], pool, tmp), pool.verdicts.size)
    print(f"== growth of each step, M = 10, k = 16 (median of {args.repeats}; b from time ~ n^b over n >= 1e4)")
    head = f"{'step':<15}" + "".join(f"{f'n={n:,}':>22}" for n in sizes) + f"{'b':>7}{'b cpu':>7}  target"
    print(head)
    ok = True
    for name, per in results.items():
        ns = [n for n in sizes if n in per]
        b = _fit_b(ns, [per[n][0] for n in ns])
        b_cpu = _fit_b(ns, [per[n][2] for n in ns])
        cells = "".join(f"{(_fmt_t(per[n][0]) + ('' if per[n][1] is None else ' / ' + _fmt_b(per[n][1]))):>22}"
                        if n in per else f"{'-':>22}" for n in sizes)
        if name in NO_TARGET:
            print(f"{name:<15}{cells}{b:>7.2f}{b_cpu:>7.2f}  no target ({NO_TARGET[name]})")
            continue
        good = not (b > B_MAX)
        ok &= good
        print(f"{name:<15}{cells}{b:>7.2f}{b_cpu:>7.2f}  {'ok' if good else 'GROWS'} (b <= {B_MAX})")
    for name, (t, rss, nbytes) in long_rows.items():
        good = t <= LONG_TARGET_S and 0 <= rss <= LONG_TARGET_X * nbytes
        mem = "not measurable (no /proc/self/clear_refs)" if rss < 0 else \
            f"{_fmt_b(rss)} = {rss / nbytes:.1f}x the verdicts' {_fmt_b(nbytes)}"
        print(f"{name} at n = {LONG_TARGET_N:,}: {_fmt_t(t)}, peak resident gain {mem}; target <= "
              f"{LONG_TARGET_S:.0f} s and <= {LONG_TARGET_X:.0f}x: {'ok' if good else 'MISSED'}")
    try:
        print(f"(1-minute load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    except OSError:  # pragma: no cover
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
