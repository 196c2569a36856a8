"""Benchmark: the one-command audit, ``oraclegap audit POOL --out DIR --no-report``, as a user runs it.

Synthetic pools of n prompts x M = 10 policies x k = 16 draws (exchangeable Beta(0.347, 0.601)
prompt rates, :func:`oraclegap.stats.simulate.exchangeable`, seed 0), saved with ``Pool.save``;
each audit runs in a fresh process (imports, reading the pool, every section, writing
``audit.json``; the HTML report is left out: its cost does not grow with n). Per size: the median
wall time, process CPU seconds (all threads) and the peak resident memory (``os.wait4``'s
``ru_maxrss`` of that process) over ``--repeats`` runs, the verdict, and the growth exponents
b of time ~ n^b (wall and CPU) fitted over the sizes >= 1e4 (all sizes when fewer than two are).

``--small`` is the default here (the audit's quick look: null draws 2000 -> 400, bootstraps
2000 -> 400, power and planner replicates 40 -> 12, planner draws 200 -> 100, the noise
checks' permutations 199 -> 99, the excess bootstrap 300 x 200 -> 60 x 100; see
``oraclegap.audit.settings``); ``--full`` runs the standard sizes. Above ``LARGE_N`` = 5000
prompts either takes the large-n Monte Carlo design (``audit.settings.large_n_design``), so the
row at 1e3 is the standard design. ``--workers N`` passes the sections' thread count
(default numba's, i.e. every core).

Targets (issue 24, 2 cores): n = 1e5 in <= 60 s and <= 2 GiB; n = 1e6 in <= 600 s and <= 8 GiB
(add 1000000 to ``--sizes``). The machine may be shared: the load average is printed; timings are
printed, never asserted by tests.

usage: python bench/bench_audit.py [--sizes 1000,10000,100000] [--repeats 3] [--full] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from oraclegap.stats import simulate  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import _fit_b as fit_b  # noqa: E402  - the same exponent fit as the step bench

#: (seconds, GiB) per size, issue 24's targets on 2 cores.
TARGETS = {100_000: (60.0, 2.0), 1_000_000: (600.0, 8.0)}


def audit_once(pool_dir: Path, out: Path, small: bool, workers: int | None) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS (GiB) and verdict code of one audit in a fresh process."""
    cmd = [sys.executable, "-c", "import sys; from oraclegap.cli import main; sys.exit(main())", "audit", str(pool_dir), "--out", str(out), "--no-report", "--quiet"]
    cmd += ["--small"] if small else []
    cmd += [] if workers is None else ["--workers", str(workers)]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    stdout, stderr = proc.communicate()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"audit failed: {stderr.decode(errors='replace').strip()}")
    code = json.loads((out / "audit.json").read_text())["verdict"]["code"]
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 2**20, code


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--full", action="store_true", help="the standard Monte Carlo sizes instead of --small")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",") if s.strip()]
    mode = "full sizes" if args.full else "--small"
    print(f"== oraclegap audit --no-report ({mode}), M = 10, k = 16, fresh process per run, "
          f"median of {args.repeats}")
    rows = {}
    with tempfile.TemporaryDirectory(prefix="og-bench-audit-") as td:
        tmp = Path(td)
        for n in sizes:
            pool_dir = tmp / f"pool_{n}"
            simulate.exchangeable(n, 10, 16, seed=0).pool.save(pool_dir)
            runs = [audit_once(pool_dir, tmp / f"audit_{n}_{r}", not args.full, args.workers)
                    for r in range(max(1, args.repeats))]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rss = max(r[2] for r in runs)
            rows[n] = (wall, cpu, rss, runs[0][3])
            target = TARGETS.get(n)
            verdict = "" if target is None else (
                f"  target <= {target[0]:.0f} s, <= {target[1]:.0f} GiB: "
                + ("ok" if wall <= target[0] and rss <= target[1] else "NOT MET"))
            print(f"   n={n:>9,}: wall {wall:8.1f} s, cpu {cpu:8.1f} s, peak RSS {rss:5.2f} GiB, verdict "
                  f"{runs[0][3]}  (walls {', '.join(f'{r[0]:.1f}' for r in runs)}){verdict}", flush=True)
    ns = sorted(rows)
    over = "n >= 1e4" if sum(n >= 10_000 for n in ns) >= 2 else "all sizes"
    print(f"growth exponent over {over}: wall b = {fit_b(ns, [rows[n][0] for n in ns]):.2f}, "
          f"cpu b = {fit_b(ns, [rows[n][1] for n in ns]):.2f} (target b <= 1.1)")
    print(f"(1-minute load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
