"""Benchmark: the audit command (``oraclegap audit POOL --out DIR --no-report``) as a user runs it.

Synthetic pools of n prompts x M = 10 members x k = 16 draws: Beta(0.347, 0.601) prompt rates and
member offsets evenly spaced in [-0.6, 0.6] on the logit scale (the verdict study's
``quality-only`` truth, :func:`oraclegap.audit.study.truth_pool`, seed 0; ``--pool exchangeable``
gives identical members), saved with ``Pool.save``. Each audit runs in a fresh process (imports,
reading the pool, every section, writing ``audit.json``; the HTML report is left out: its cost
does not grow with n), in both modes by default: the default audit and ``--small`` (the quick
look: null draws 2000 -> 400, bootstraps 2000 -> 400, power and planner replicates 40 -> 12,
planner draws 200 -> 100, the noise checks' permutations 199 -> 99, the excess bootstrap 300 -> 60
resamples; see ``oraclegap.audit.settings``). Above ``LARGE_N`` = 5000 prompts both take the
large-n Monte Carlo design (``audit.settings.large_n_design``), so the rows at 1e3 are the standard
design.

Per size and mode: the median wall time, process CPU seconds (all threads) and their ratio (the
cores kept busy), the peak resident memory (``os.wait4``'s ``ru_maxrss`` of that process) over
``--repeats`` runs, the verdict, and per mode the growth exponents b of time ~ n^b (wall and CPU)
fitted over the sizes >= 1e4 (all sizes when fewer than two are). With ``--sections`` (default
on) one more fresh process per size and mode runs the audit on one thread
(``run_audit(workers=1)``) and prints the CPU seconds of every section and of its costly parts
(``time.process_time`` around each, all threads of the process): on a shared machine these move
far less with the load than wall times do. The machine is named (CPU model, cores) and the
1-minute load average printed before and after.

Targets (two cores of the slower machine class, AMD EPYC): n = 1e5 in <= 60 s and <= 2 GiB; n = 1e6
in <= 600 s and <= 8 GiB (add 1000000 to ``--sizes``). Timings are printed, never asserted by tests.

usage: python bench/bench_audit.py [--sizes 1000,10000,100000] [--repeats 3] [--modes default,small]
                                   [--pool quality|exchangeable] [--workers N] [--no-sections]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import _fit_b as fit_b  # noqa: E402  - the same exponent fit as the step bench

#: (seconds, GiB) per size: the targets on two cores of the slower machine class.
TARGETS = {100_000: (60.0, 2.0), 1_000_000: (600.0, 8.0)}
MODES = ("default", "small")

#: The per-section profile, run in a fresh process: ``argv`` pool directory, small (0/1). Each
#: wrapped call adds its process CPU seconds to its label (calls nest: a section's own share is its
#: time less the parts listed under it). Prints one JSON object.
_PROFILE = r"""
import json, sys, time
t0 = time.process_time()
from oraclegap.audit import compute
from oraclegap.pool import Pool
from oraclegap.stats import noise, nulls
acc = {}
def wrap(obj, name, label):
    f = getattr(obj, name)
    def g(*a, **k):
        s = time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[label] = acc.get(label, 0.0) + time.process_time() - s
    setattr(obj, name, g)
for name in ("pool_section", "coverage_section", "nulls_section", "power_section",
             "certificates_section", "noise_section", "router_section", "integrity_section"):
    wrap(compute, name, name.removesuffix("_section"))
wrap(compute, "_null_tests_part", "nulls: tests of L")
wrap(nulls, "excess_bootstrap", "nulls: excess bootstrap")
wrap(compute, "member_quality", "nulls: member quality")
wrap(compute, "alignment_check", "nulls: draw alignment")
wrap(compute, "useful_effect", "power: useful effect")
wrap(compute, "_plan_until_target", "power: planners")
wrap(compute.studies, "plan_power", "power: planners")
wrap(noise, "decomposition", "noise: decomposition")
wrap(noise, "best_of_k_check", "noise: best-of-K")
acc["imports"] = time.process_time() - t0
s = time.process_time()
pool = Pool.load(sys.argv[1])
acc["read pool"] = time.process_time() - s
s = time.process_time()
res = compute.run_audit(pool, small=sys.argv[2] == "1", workers=1)
acc["run_audit"] = time.process_time() - s
print(json.dumps({"cpu": acc, "code": res.verdict.code, "total": time.process_time() - t0}))
"""

#: Rows of the section table: (label, inclusive label, parts to subtract).
_ROWS = [
    ("imports", "imports", ()),
    ("read pool", "read pool", ()),
    ("pool summary + coverage", ("pool", "coverage"), ()),
    ("nulls: re-deal and margin tests", "nulls: tests of L", ()),
    ("nulls: excess bootstrap", "nulls: excess bootstrap", ()),
    ("nulls: member quality", "nulls: member quality", ()),
    ("nulls: draw alignment", "nulls: draw alignment", ()),
    ("power: useful effect", "power: useful effect", ()),
    ("power: this design's power", "power", ("power: useful effect", "power: planners")),
    ("power: planners", "power: planners", ()),
    ("certificates", "certificates", ()),
    ("noise: decomposition", "noise: decomposition", ()),
    ("noise: best-of-K", "noise: best-of-K", ()),
    ("router", "router", ()),
    ("integrity", "integrity", ()),
]


def machine() -> str:
    """CPU model, cores and memory of this machine, from /proc (Linux) or platform."""
    import platform

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(
            next(
                x
                for x in Path("/proc/meminfo").read_text().splitlines()
                if x.startswith("MemTotal")
            ).split()[1]
        )
        mem = f", {kb / 2**20:.0f} GiB memory"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{model}, {os.cpu_count()} cores{mem}"


def _env() -> dict:
    return dict(
        os.environ, PYTHONPATH=str(ROOT / "lib") + os.pathsep + os.environ.get("PYTHONPATH", "")
    )


def audit_once(
    pool_dir: Path, out: Path, small: bool, workers: int | None
) -> tuple[float, float, float, str]:
    """Wall and CPU seconds, peak RSS (GiB) and verdict code of one audit in a fresh process."""
    cmd = [
        sys.executable,
        "-c",
        "import sys; from oraclegap.cli import main; sys.exit(main())",
        "audit",
        str(pool_dir),
        "--out",
        str(out),
        "--no-report",
        "--quiet",
    ]
    cmd += ["--small"] if small else []
    cmd += [] if workers is None else ["--workers", str(workers)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    stdout, stderr = proc.communicate()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"audit failed: {stderr.decode(errors='replace').strip()}")
    code = json.loads((out / "audit.json").read_text())["verdict"]["code"]
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 2**20, code


def sections_once(pool_dir: Path, small: bool) -> dict:
    """CPU seconds of every section of one audit on one thread, in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", _PROFILE, str(pool_dir), "1" if small else "0"],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def section_rows(prof: dict) -> list[tuple[str, float]]:
    """(label, CPU seconds) for the section table; the rest of the process last."""
    cpu = prof["cpu"]
    rows = []
    for label, incl, parts in _ROWS:
        t = sum(cpu.get(x, 0.0) for x in incl) if isinstance(incl, tuple) else cpu.get(incl, 0.0)
        t -= sum(cpu.get(x, 0.0) for x in parts)
        rows.append((label, t))
    rows.append(("the rest (verdict, JSON)", prof["total"] - sum(t for _, t in rows)))
    return rows


def make_pool(n: int, kind: str, path: Path) -> None:
    from oraclegap.audit.study import truth_pool

    truth = "quality-only" if kind == "quality" else "exchangeable"
    truth_pool(truth, n, 16, M=10, seed=0)[0].save(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--modes", default=",".join(MODES), help="default, small or both (comma-separated)"
    )
    ap.add_argument("--pool", choices=("quality", "exchangeable"), default="quality")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--no-sections", action="store_true", help="skip the per-section CPU profile")
    ap.add_argument("--full", action="store_true", help="same as --modes default")
    args = ap.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",") if s.strip()]
    modes = ["default"] if args.full else [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        ap.error(f"--modes takes {', '.join(MODES)}; got {args.modes!r}")
    load = os.getloadavg()[0]
    print(f"== oraclegap audit --no-report on {machine()}; 1-minute load average {load:.2f}")
    print(f"   pools: n x M = 10 x k = 16, {args.pool} members; fresh process per run, "
          f"median of {args.repeats}")
    rows: dict = {m: {} for m in modes}
    profiles: dict = {}
    with tempfile.TemporaryDirectory(prefix="og-bench-audit-") as td:
        tmp = Path(td)
        for n in sizes:
            pool_dir = tmp / f"pool_{n}"
            make_pool(n, args.pool, pool_dir)
            for mode in modes:
                small = mode == "small"
                runs = [
                    audit_once(pool_dir, tmp / f"audit_{n}_{mode}_{r}", small, args.workers)
                    for r in range(max(1, args.repeats))
                ]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                rss = max(r[2] for r in runs)
                rows[mode][n] = (wall, cpu, rss, runs[0][3])
                target = TARGETS.get(n)
                verdict = (
                    ""
                    if target is None
                    else (
                        f"  target <= {target[0]:.0f} s, <= {target[1]:.0f} GiB: "
                        + ("ok" if wall <= target[0] and rss <= target[1] else "NOT MET")
                    )
                )
                walls = ", ".join(f"{r[0]:.1f}" for r in runs)
                print(
                    f"   {mode:>7} n={n:>9,}: wall {wall:7.1f} s, cpu {cpu:7.1f} s "
                    f"({cpu / wall:.2f} cores busy), peak RSS {rss:5.2f} GiB, "
                    f"verdict {runs[0][3]}  (walls {walls}){verdict}",
                    flush=True,
                )
                if not args.no_sections:
                    profiles[(mode, n)] = sections_once(pool_dir, small)
    for mode in modes:
        ns = sorted(rows[mode])
        over = "n >= 1e4" if sum(n >= 10_000 for n in ns) >= 2 else "all sizes"
        bw = fit_b(ns, [rows[mode][n][0] for n in ns])
        bc = fit_b(ns, [rows[mode][n][1] for n in ns])
        print(f"   {mode:>7} growth exponent over {over}: wall b = {bw:.2f}, cpu b = {bc:.2f}")
    if profiles:
        keys = sorted(profiles, key=lambda x: (MODES.index(x[0]), x[1]))
        print("== CPU seconds per section (one thread, run_audit(workers=1), fresh process)")
        head = "".join(f"{f'{m} {n:.0e}':>15}" for m, n in keys)
        print(f"   {'section':34}{head}")
        tables = {key: dict(section_rows(profiles[key])) for key in keys}
        for label in tables[keys[0]]:
            print(f"   {label:34}" + "".join(f"{tables[key][label]:15.2f}" for key in keys))
        print(f"   {'total':34}" + "".join(f"{profiles[key]['total']:15.2f}" for key in keys))
    print(f"(1-minute load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
