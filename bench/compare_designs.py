"""The large-n Monte Carlo design against the standard one on the verdict study's pools.

The audit takes its large-n design (``oraclegap.audit.settings.large_n_design``: sequential null
and quality tests, an early look at the power trials, planners only when the power is not
adequate, two margin chains, excess resamples without null draws) above 5,000 prompts only. This
script forces it on a stratified subset of the verdict study's pools (``oraclegap.audit.study``:
every truth class at n 300 and 1500 and k 1, 4 and 16, the first ``--pools`` pools of each cell,
the pools the committed study audited) and compares it with the standard design, audit by audit:

* ``std`` -- the standard design (seed 0, the study's audit); its code is checked against the
  committed ``data/study/verdict_study.csv`` at ``--small`` (the study's sizes);
* ``std1`` -- the standard design with audit seed 1: how often two standard audits of one pool
  disagree by Monte Carlo error alone (the yardstick for the comparison);
* ``new`` -- the large-n design, seed 0.

For each pair it counts: the same verdict code; the same rejections of each null at each
threshold and of the quality test; p-values within Monte Carlo error (|p1 - p2| <= 3 sqrt(p(1 - p)
(1/B1 + 1/B2)) + 1/B1 + 1/B2, B the draws each took); power estimates within Monte Carlo error
(3 binomial standard errors of the two estimates); the excess point and interval (point equal, as
both take the same full-data draws; limits within 3 Monte Carlo standard errors of two percentile
estimates, 2.67 sd / sqrt(resamples) each, sd the resamples' spread); the noise section at k > 1
(its bootstraps stop once the luck call and best-of-K's ``passes`` are settled, its assumption
checks' permutations once every check's pass or fail is): the same luck call and ``passes``, the
same point values, the resamples each bootstrap took, the same decision (``passed``) of every
assumption check and the within-cell permutations drawn; and the sections the design does not
touch (pool, coverage, certificates, router, integrity) identical.

usage: python bench/compare_designs.py [--pools 2] [--full] [--out results.csv]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from oraclegap.audit import run_audit  # noqa: E402
from oraclegap.audit.study import STUDY_DIR, TRUTHS, _study_pool, pool_seed  # noqa: E402

UNTOUCHED = ("pool", "coverage", "certificates", "router", "integrity")


def _noise_points(nz: dict) -> dict:
    """The point values of the noise section (decomposition estimates and best-of-K)."""
    est = {q: row["value"] for q, row in nz["decomposition"]["estimates"].items()}
    bok = nz["best_of_k"]
    return {**est, **{q: bok[q]["value"] for q in ("best_of_k_split", "o_exp_independent", "difference")}}


def _check_decisions(nz: dict) -> list:
    """The decision (``passed``: True, False or None for untested) of every assumption check."""
    return [(c["name"], c["passed"]) for c in nz["assumptions"]["checks"]]


def _p_close(p1, b1, p2, b2) -> bool:
    p = 0.5 * (p1 + p2)
    return (
        abs(p1 - p2) <= 3 * math.sqrt(max(p * (1 - p), 1e-12) * (1 / b1 + 1 / b2)) + 1 / b1 + 1 / b2
    )


def compare(a: dict, b: dict) -> dict:
    """Agreement of two audits' numbers (``audit.json`` dicts), by the module docstring's rules."""
    out = {
        "same_code": a["verdict"]["code"] == b["verdict"]["code"],
        "untouched_equal": all(a[key] == b[key] for key in UNTOUCHED),
    }
    za, zb = a["noise"], b["noise"]
    if za.get("applicable") and zb.get("applicable"):
        out.update(
            noise_luck_same=za["luck"] == zb["luck"],
            noise_passes_same=za["best_of_k"]["passes"] == zb["best_of_k"]["passes"],
            noise_points_equal=_noise_points(za) == _noise_points(zb),
            noise_boot_a=za["decomposition"]["n_boot"] + za["best_of_k"]["n_boot"],
            noise_boot_b=zb["decomposition"]["n_boot"] + zb["best_of_k"]["n_boot"],
            noise_checks_same=_check_decisions(za) == _check_decisions(zb),
            noise_perm_a=za.get("n_perm_drawn", za["n_perm"]),
            noise_perm_b=zb.get("n_perm_drawn", zb["n_perm"]),
        )
    else:  # k = 1: not applicable in either design, the same record
        out["untouched_equal"] = out["untouched_equal"] and za == zb
    na, nb = a["nulls"], b["nulls"]
    if na.get("applicable"):
        dec = pclose = tests = 0
        for key, row in na["L"].items():
            for null in ("redeal", "margin"):
                ra, rb = row.get(null, {}), nb["L"][key].get(null, {})
                if "p" not in ra or "p" not in rb:
                    continue
                tests += 1
                dec += ra["reject"] == rb["reject"]
                ba = ra.get("n_draws", a["settings"]["n_draws"])
                bb = rb.get("n_draws", b["settings"]["n_draws"])
                pclose += _p_close(ra["p"], ba, rb["p"], bb)
        qa, qb = na["quality"], nb["quality"]
        out.update(
            null_tests=tests,
            null_decisions_same=dec,
            null_p_close=pclose,
            quality_same=qa["reject"] == qb["reject"],
            quality_p_close=_p_close(qa["p"], qa["n_draws"], qb["p"], qb["n_draws"]),
        )
        ea, eb = na["excess"], nb["excess"]
        if "value" in ea and "value" in eb:
            sd = max(abs(ea["hi"] - ea["lo"]) / 3.92, 1e-12)
            se = 2.67 * sd * math.sqrt(1 / ea["n_boot"] + 1 / eb["n_boot"])
            out.update(
                excess_point_equal=ea["value"] == eb["value"],
                excess_limits_close=abs(ea["lo"] - eb["lo"]) <= 3 * se
                and abs(ea["hi"] - eb["hi"]) <= 3 * se,
            )
    pa, pb = a["power"].get("current"), b["power"].get("current")
    if pa and pb:
        ra, rb = pa["power"]["redeal"], pb["power"]["redeal"]
        se = math.sqrt(
            max(ra * (1 - ra), rb * (1 - rb), 0.25 / min(pa["n_reps"], pb["n_reps"]) ** 2)
            * (1 / pa["n_reps"] + 1 / pb["n_reps"])
        )
        out.update(
            power_close=abs(ra - rb) <= 3 * se + 1e-12, power_state_same=pa["state"] == pb["state"]
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", type=int, default=2, help="pools per cell (the first of each cell)")
    ap.add_argument("--ns", default="300,1500")
    ap.add_argument("--ks", default="1,4,16")
    ap.add_argument("--truths", default=",".join(TRUTHS))
    ap.add_argument(
        "--full",
        action="store_true",
        help="the standard Monte Carlo sizes (default: --small, the study's)",
    )
    ap.add_argument("--out", default=None, help="CSV of one row per pool and pair")
    args = ap.parse_args(argv)
    small = not args.full
    committed = pd.read_csv(STUDY_DIR / "verdict_study.csv")
    committed = committed[committed["small"]].set_index(["truth", "n", "k", "rep"])["code"]
    rows = []
    t0 = time.process_time()
    for truth in args.truths.split(","):
        for n in (int(x) for x in args.ns.split(",")):
            for k in (int(x) for x in args.ks.split(",")):
                for rep in range(args.pools):
                    seed = pool_seed(truth, n, k, rep)
                    pool, _ = _study_pool(truth, n, k, 5, seed)
                    cpu = {}
                    runs = {}
                    for name, kw in (
                        ("std", {"seed": 0, "design": "standard"}),
                        ("std1", {"seed": 1, "design": "standard"}),
                        ("new", {"seed": 0, "design": "large-n"}),
                    ):
                        s = time.process_time()
                        runs[name] = run_audit(pool, small=small, **kw).numbers
                        cpu[name] = time.process_time() - s
                    base = {
                        "truth": truth,
                        "n": n,
                        "k": k,
                        "rep": rep,
                        "code_std": runs["std"]["verdict"]["code"],
                        "code_std1": runs["std1"]["verdict"]["code"],
                        "code_new": runs["new"]["verdict"]["code"],
                        "committed": committed.get((truth, n, k, rep)) if small else None,
                        "cpu_std": cpu["std"],
                        "cpu_new": cpu["new"],
                    }
                    for pair, (x, y) in (
                        ("std-std1", ("std", "std1")),
                        ("std-new", ("std", "new")),
                    ):
                        rows.append({**base, "pair": pair, **compare(runs[x], runs[y])})
                    print(
                        f"{truth:20s} n={n:5d} k={k:2d} rep={rep}: std {base['code_std']:24s} "
                        f"std1 {base['code_std1']:24s} new {base['code_new']:24s} "
                        f"cpu {cpu['std']:.1f} / {cpu['new']:.1f} s",
                        flush=True,
                    )
    df = pd.DataFrame(rows)
    if args.out:
        df.to_csv(args.out, index=False)
    print(
        f"\n== {len(df) // 2} pools, {'--small' if small else 'full'} sizes, "
        f"{time.process_time() - t0:.0f} CPU-s"
    )
    if small:
        one = df[df["pair"] == "std-new"]
        print(
            "standard design reproduces the committed study's code: "
            f"{int((one['code_std'] == one['committed']).sum())}"
            f" of {len(one)}"
        )
    for pair, g in df.groupby("pair", sort=False):
        line = [
            f"{pair}: same code {int(g['same_code'].sum())}/{len(g)}",
            f"untouched sections equal {int(g['untouched_equal'].sum())}/{len(g)}",
        ]
        if "null_tests" in g:
            t = g.dropna(subset=["null_tests"])
            nt = int(t["null_tests"].sum())
            line += [
                f"null decisions same {int(t['null_decisions_same'].sum())}/{nt}",
                f"null p within MC error {int(t['null_p_close'].sum())}/{nt}",
                f"quality decision same {int(t['quality_same'].sum())}/{len(t)}",
                f"quality p within MC error {int(t['quality_p_close'].sum())}/{len(t)}",
            ]
        if "excess_point_equal" in g:
            e = g.dropna(subset=["excess_point_equal"])
            line += [
                f"excess point equal {int(e['excess_point_equal'].sum())}/{len(e)}",
                f"excess limits within MC error {int(e['excess_limits_close'].sum())}/{len(e)}",
            ]
        if "noise_luck_same" in g:
            z = g.dropna(subset=["noise_luck_same"])
            line += [
                f"noise luck call same {int(z['noise_luck_same'].sum())}/{len(z)}",
                f"best-of-K passes same {int(z['noise_passes_same'].sum())}/{len(z)}",
                f"noise points equal {int(z['noise_points_equal'].sum())}/{len(z)}",
                f"noise resamples {int(z['noise_boot_b'].sum())} of {int(z['noise_boot_a'].sum())}",
                f"assumption checks same {int(z['noise_checks_same'].sum())}/{len(z)}",
                f"check permutations {int(z['noise_perm_b'].sum())} of {int(z['noise_perm_a'].sum())}",
            ]
        if "power_close" in g:
            w = g.dropna(subset=["power_close"])
            line += [
                f"power within MC error {int(w['power_close'].sum())}/{len(w)}",
                f"power state same {int(w['power_state_same'].sum())}/{len(w)}",
            ]
        print("; ".join(line))
    one = df[df["pair"] == "std-new"]
    print(
        f"CPU seconds per audit, median: standard {np.median(one['cpu_std']):.2f}, "
        f"large-n {np.median(one['cpu_new']):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
