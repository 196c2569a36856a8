"""A verdict study: audits of simulated pools whose truth is known, counted as
a confusion table (truth x verdict code) with Wilson intervals, each claim code's precision and the
rate of false claims of specialization.

Truth classes (:data:`TRUTHS`; M members, prompt rates q_i ~ Beta(0.347, 0.601), the Geometry3K
fit of arXiv 2609.32996, and p_im the true rate of member m on prompt i):

* ``exchangeable`` -- p_im = q_i: no member differs from another;
* ``quality-only`` -- logit p_im = logit q_i + c_m with constant offsets c_m evenly spaced in
  [-0.6, 0.6]: members differ in quality only;
* ``diffuse`` -- logit p_im = logit q_i + sigma z_im, z standard normal (sigma = :data:`DIFFUSE_SIGMA`):
  prompt-by-member effects everywhere; ``diffuse-weak`` the same at sigma = :data:`DIFFUSE_WEAK_SIGMA`;
* ``specialist-text`` -- one specialist per prompt (uniform over members) with
  p = 1 - (1 - q_i)(1 - :data:`SPECIALIST_BOOST`), the others q_i; the prompt text names the
  specialist's topic, so a router can see it;
* ``specialist-no-text`` -- the same rates, no text (real, not routable);
* ``seed-aligned`` -- the quality-only rates sampled with common random numbers (draw j of a prompt:
  one uniform for every member), as seed-aligned rollouts are.

Specialization is real in both ``diffuse`` classes and both ``specialist`` classes (:data:`SPECIALIZED`). A
*false claim* is a code that asserts more than noise (:data:`CLAIM_CODES`) on a pool without
specialization, or ``quality-only`` on a pool whose members do not differ at all (``exchangeable``).

:func:`verdict_study` runs one :func:`~oraclegap.audit.compute.run_audit` per pool (``small=True``
by default) over truth x n x k with ``n_pools`` pools per cell. :func:`build_study` runs the committed
design (:data:`STUDY`) cell by cell -- resumable, in parallel processes, identical for any number of
them since every pool has its own seed -- adds the *stability* check (the first pools of every cell
audited again at the full Monte Carlo sizes) and writes ``data/study/`` (``make study``);
:func:`load_study` reads it back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from .._io import atomic_write
from .._result import Result
from .._validate import as_rng, check_int
from ..pool import Pool
from ..stats.simulate import GEOMETRY3K_AB
from ..stats.studies import rate_interval
from .compute import run_audit

__all__ = ["TRUTHS", "SPECIALIZED", "CLAIM_CODES", "STUDY", "STUDY_DIR", "truth_pool", "VerdictStudy",
           "verdict_study", "build_study", "load_study"]

TRUTHS = ("exchangeable", "quality-only", "seed-aligned", "diffuse-weak", "diffuse", "specialist-text",
          "specialist-no-text")
#: Truth classes with real prompt-by-member specialization.
SPECIALIZED = frozenset({"diffuse-weak", "diffuse", "specialist-text", "specialist-no-text"})
#: Verdict codes that assert more than sampling noise and member quality.
CLAIM_CODES = ("certified-recoverable", "certified", "luck", "detected-not-certified")
DIFFUSE_SIGMA = 1.0
DIFFUSE_WEAK_SIGMA = 0.5
SPECIALIST_BOOST = 0.6
QUALITY_SPREAD = 0.6


def _logit(p):
    return np.log(p / (1 - p))


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def truth_pool(truth: str, n: int, k: int, M: int = 5, seed=0) -> tuple[Pool, np.ndarray]:
    """A pool of ``truth`` (:data:`TRUTHS`) with n prompts, M members and k responses per cell, and
    its true rates p[n, M]."""
    if truth not in TRUTHS:
        raise ValueError(f"truth must be one of {TRUTHS}, got {truth!r}")
    n, k, M = check_int(n, "n", minimum=2), check_int(k, "k", minimum=1), check_int(M, "M", minimum=2)
    rng = as_rng(seed)
    q = np.clip(rng.beta(*GEOMETRY3K_AB, size=n), 1e-3, 1 - 1e-3)
    offsets = np.linspace(-QUALITY_SPREAD, QUALITY_SPREAD, M)
    prompts = None
    if truth == "exchangeable":
        p = np.repeat(q[:, None], M, axis=1)
    elif truth in ("quality-only", "seed-aligned"):
        p = _expit(_logit(q)[:, None] + offsets[None, :])
    elif truth in ("diffuse", "diffuse-weak"):
        sigma = DIFFUSE_SIGMA if truth == "diffuse" else DIFFUSE_WEAK_SIGMA
        p = _expit(_logit(q)[:, None] + sigma * rng.standard_normal((n, M)))
    else:
        spec = rng.integers(0, M, n)
        p = np.repeat(q[:, None], M, axis=1)
        p[np.arange(n), spec] = 1 - (1 - q) * (1 - SPECIALIST_BOOST)
        if truth == "specialist-text":
            prompts = pd.DataFrame({"id": [f"p{i}" for i in range(n)],
                                    "text": [f"a question on topic{m} number {i}" for i, m in enumerate(spec)]})
    if truth == "seed-aligned":
        u = rng.random((n, 1, k))  # one uniform per draw, shared by every member
        pool = Pool.from_array(u < p[:, :, None], prompts, alignment="seed-aligned")
    else:
        pool = Pool.from_array(rng.random((n, M, k)) < p[:, :, None], prompts, alignment="independent")
    return pool, p


def _false_claim(truth: str, code: str) -> bool:
    if truth in SPECIALIZED:
        return False
    return code in CLAIM_CODES or (truth == "exchangeable" and code == "quality-only")


def _with_interval(df: pd.DataFrame, count: str, total: str, alpha: float) -> pd.DataFrame:
    lo, hi = rate_interval(df[count].to_numpy(), df[total].to_numpy(), alpha)
    return df.assign(rate=df[count] / df[total], lo=lo, hi=hi)


@dataclasses.dataclass(frozen=True, repr=False)
class VerdictStudy(Result):
    """The audits of a verdict study: ``runs`` (one row per pool: truth, n, k, rep, seed, code,
    seconds) and the level ``alpha`` of the Wilson intervals."""

    runs: pd.DataFrame
    alpha: float = 0.05
    stability_runs: pd.DataFrame | None = None
    meta: dict = dataclasses.field(default_factory=dict)

    def stability(self) -> pd.DataFrame | None:
        """Of the pools audited at both sizes, the share given the same code at ``--small`` and at
        full Monte Carlo sizes, overall and per k, with Wilson intervals (None without those runs)."""
        s = self.stability_runs
        if s is None or s.empty:
            return None
        same = s["code_small"] == s["code_full"]
        parts = [pd.DataFrame({"k": ["all"], "same": [int(same.sum())], "pools": [len(s)]})]
        by = s.assign(same=same).groupby("k")["same"].agg(["sum", "size"]).reset_index()
        parts.append(pd.DataFrame({"k": by["k"].astype(str), "same": by["sum"], "pools": by["size"]}))
        return _with_interval(pd.concat(parts, ignore_index=True), "same", "pools", self.alpha)

    def confusion(self) -> pd.DataFrame:
        """One row per (truth, n, k, code) that occurred: count out of the cell's pools, rate and its
        Wilson interval."""
        cells = self.runs.groupby(["truth", "n", "k"]).size().rename("pools")
        counts = self.runs.groupby(["truth", "n", "k", "code"]).size().rename("count").reset_index()
        out = counts.merge(cells.reset_index(), on=["truth", "n", "k"])
        return _with_interval(out, "count", "pools", self.alpha)

    def table(self) -> pd.DataFrame:
        """The confusion table wide: rows (truth, n, k), one column per verdict code (counts)."""
        return self.runs.pivot_table(index=["truth", "n", "k"], columns="code", values="rep", aggfunc="count",
                                     fill_value=0)

    def false_claims(self) -> pd.DataFrame:
        """Per cell of a truth without specialization: pools given a false claim (see the module
        docstring), their rate and its Wilson interval, and whether the interval's lower limit is
        above alpha (``above_alpha``: the rate is shown to exceed the level)."""
        r = self.runs[~self.runs["truth"].isin(SPECIALIZED)]
        flag = r.assign(false=[_false_claim(t, c) for t, c in zip(r["truth"], r["code"], strict=True)])
        out = flag.groupby(["truth", "n", "k"]).agg(false=("false", "sum"), pools=("false", "size")).reset_index()
        out = _with_interval(out, "false", "pools", self.alpha)
        return out.assign(above_alpha=out["lo"] > self.alpha)

    def precision(self) -> pd.DataFrame:
        """Per claim code and ``quality-only``: of the pools given it, the share whose truth bears it
        out (specialization for a claim code, quality-only truth for ``quality-only``), with its
        Wilson interval."""
        rows = []
        for code in (*CLAIM_CODES, "quality-only"):
            given = self.runs[self.runs["code"] == code]
            if given.empty:
                continue
            right = given["truth"].isin(SPECIALIZED) if code != "quality-only" else given["truth"] == "quality-only"
            rows.append({"code": code, "given": len(given), "right": int(right.sum())})
        out = pd.DataFrame(rows, columns=["code", "given", "right"])
        return _with_interval(out, "right", "given", self.alpha) if len(out) else out

    def seconds(self) -> pd.DataFrame:
        """Mean seconds per audit in each (n, k) cell (to size a larger study)."""
        return self.runs.groupby(["n", "k"])["seconds"].agg(["mean", "size"]).reset_index()


def pool_seed(truth: str, n: int, k: int, rep: int, seed: int = 0) -> int:
    """The sampling seed of pool ``rep`` of cell (truth, n, k): a function of those values alone
    (numpy's ``SeedSequence``), so a cell draws the same pools whatever else a study runs."""
    ss = np.random.SeedSequence([seed, TRUTHS.index(truth), n, k, rep])
    return int(ss.generate_state(1, np.uint32)[0])


def _audit_code(pool: Pool, alpha: float, small: bool) -> str:
    try:
        return run_audit(pool, alpha=alpha, seed=0, small=small).verdict.code
    except ValueError:  # a pool with every verdict equal (tiny n): nothing to audit
        return "not-auditable"


def _cell_runs(truth: str, n: int, k: int, reps, M: int, alpha: float, seed: int, small: bool) -> list[dict]:
    rows = []
    for r in reps:
        s = pool_seed(truth, n, k, r, seed)
        pool, _ = truth_pool(truth, n, k, M, seed=s)
        t0 = time.perf_counter()
        code = _audit_code(pool, alpha, small)
        rows.append({"truth": truth, "n": n, "k": k, "rep": r, "seed": s, "code": code, "small": small,
                     "seconds": round(time.perf_counter() - t0, 4)})
    return rows


def _check_design(truths, ks, ns, n_pools, seed):
    truths = tuple(truths)
    bad = [t for t in truths if t not in TRUTHS]
    if bad or not truths:
        raise ValueError(f"truths must be a non-empty selection of {TRUTHS}, got {list(truths)}")
    ks = [check_int(k, "ks", minimum=1) for k in ks]
    ns = [check_int(n, "ns", minimum=20) for n in ns]
    return truths, ks, ns, check_int(n_pools, "n_pools", minimum=1), check_int(seed, "seed", minimum=0)


def verdict_study(truths=TRUTHS, ks=(1, 4, 16), ns=(200,), n_pools: int = 4, *, M: int = 5, alpha: float = 0.05,
                  seed: int = 0, small: bool = True, progress: bool = False) -> VerdictStudy:
    """Audit ``n_pools`` simulated pools of every truth class at every n and k (pool r of cell
    (truth, n, k) is sampled with :func:`pool_seed` and audited with seed 0, level ``alpha``,
    ``small`` Monte Carlo sizes) in this process; returns the :class:`VerdictStudy`."""
    truths, ks, ns, n_pools, seed = _check_design(truths, ks, ns, n_pools, seed)
    cells = [(t, n, k) for t in truths for n in ns for k in ks]
    it = range(len(cells) * n_pools)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc="verdict study", unit="audit", leave=False)
    rows = []
    for j in it:
        c, r = divmod(j, n_pools)
        rows += _cell_runs(*cells[c], [r], M, alpha, seed, small)
    return VerdictStudy(pd.DataFrame(rows), alpha)


#: The committed design (``make study``): every truth class at k in {1, 4, 16} and n in {200, 1000},
#: 20 pools per cell audited with the ``--small`` sizes, the first 4 of each n = 200 cell again at full
#: sizes (a full audit costs about five small ones; at n = 1000 the reruns would double the study).
STUDY = {"truths": TRUTHS, "ks": (1, 4, 16), "ns": (200, 1000), "n_pools": 20, "stability_pools": 4,
         "stability_ns": (200,), "M": 5, "alpha": 0.05, "seed": 0}
STUDY_DIR = Path(__file__).resolve().parents[3] / "data" / "study"
RUNS_FILE, STABILITY_FILE, META_FILE = "verdict_study.csv", "verdict_stability.csv", "study.json"


def _cell_file(cells_dir: Path, truth: str, n: int, k: int, what: str) -> Path:
    return cells_dir / f"{what}-{truth}-n{n}-k{k}.csv"


def _extend(path: Path, truth: str, n: int, k: int, reps: int, M: int, alpha: float, seed: int,
            small: bool, chunk: int = 4) -> None:
    """Make the cell file at ``path`` hold pools 0..reps-1, running only the missing ones and
    saving every ``chunk`` pools (an interrupted cell resumes from its last save)."""
    have = pd.read_csv(path) if path.exists() else None
    start = 0 if have is None else int(have["rep"].max()) + 1
    while start < reps:
        stop = min(reps, start + chunk)
        new = pd.DataFrame(_cell_runs(truth, n, k, range(start, stop), M, alpha, seed, small))
        have = new if have is None else pd.concat([have, new])
        atomic_write(path, have.to_csv(index=False))
        start = stop


def _run_cell(args) -> tuple[str, int, int]:
    cells_dir, truth, n, k, n_pools, stab, M, alpha, seed = args
    _extend(_cell_file(cells_dir, truth, n, k, "runs"), truth, n, k, n_pools, M, alpha, seed, True)
    if stab:
        _extend(_cell_file(cells_dir, truth, n, k, "full"), truth, n, k, stab, M, alpha, seed, False)
    return truth, n, k


def _read_cell(path: Path, reps: int) -> pd.DataFrame:
    df = pd.read_csv(path)
    return df[df["rep"] < reps]


def _code_digest() -> str:
    """SHA-256 of the package's Python sources outside the book layer (what a pool's code depends
    on), so cached cells are never reused after the audit or the samplers change."""
    pkg = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for f in sorted(pkg.rglob("*.py")):
        rel = f.relative_to(pkg).as_posix()
        if not rel.startswith(("book/", "notebooks/")):
            h.update(rel.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def rules_signature() -> list[str]:
    """The verdict rules in the order they are tried (name -> code): a study is current only for the
    rules it was run with."""
    from .verdict import RULES

    return [f"{r.name}->{r.code}" for r in RULES]


def build_study(out: Path | str | None = None, *, design: dict | None = None, jobs: int | None = None,
                cells_dir: Path | str | None = None, progress: bool = True) -> VerdictStudy:
    """Run the verdict study ``design`` (default :data:`STUDY`) and write, atomically, under ``out``
    (default :data:`STUDY_DIR`): ``verdict_study.csv`` (one row per pool), ``verdict_stability.csv``
    (the first ``stability_pools`` pools of every cell with n in ``stability_ns``: the code at
    ``--small`` and at full sizes) and
    ``study.json`` (the design, the rules it was run with, CPU seconds). Each cell is written to
    ``cells_dir`` (default ``.cache/study``, keyed by the fixed settings, the rules and the library's
    sources) as it finishes, so an interrupted build resumes where it stopped; ``jobs`` processes (default: the CPU count) share the cells."""
    d = dict(STUDY if design is None else design)
    truths, ks, ns, n_pools, seed = _check_design(d["truths"], d["ks"], d["ns"], d["n_pools"], d["seed"])
    stab = check_int(d.get("stability_pools", 0), "stability_pools", minimum=0)
    out = Path(STUDY_DIR if out is None else out)
    cells_dir = Path(cells_dir) if cells_dir is not None else STUDY_DIR.parents[1] / ".cache" / "study"
    # the cells' folder is keyed by what decides a pool's code -- the design's fixed settings, the
    # rules and the library code that samples and audits -- not by how many pools (more extend it)
    sizes = ("n_pools", "stability_pools", "stability_ns", "truths", "ks", "ns")
    fixed = {k: v for k, v in d.items() if k not in sizes}
    key = hashlib.sha256(json.dumps([fixed, rules_signature(), _code_digest()], sort_keys=True,
                                    default=list).encode()).hexdigest()
    cells_dir = cells_dir / key[:12]
    cells_dir.mkdir(parents=True, exist_ok=True)
    jobs = check_int(jobs if jobs is not None else (os.cpu_count() or 1), "jobs", minimum=1)
    stab_ns = [check_int(n, "stability_ns", minimum=20) for n in d.get("stability_ns", ns)]
    work = [(cells_dir, t, n, k, n_pools, stab * (n in stab_ns), d["M"], d["alpha"], seed)
            for n in ns for k in ks for t in truths]
    work.sort(key=lambda w: w[2] * (1 + (w[3] > 1)))  # the cheapest cells first: a cut run keeps most cells
    t0 = time.perf_counter()
    done: Iterable
    if jobs == 1:
        done = map(_run_cell, work)
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ex = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
        done = ex.map(_run_cell, work)
    if progress:
        from tqdm.auto import tqdm

        done = tqdm(done, total=len(work), desc="verdict study", unit="cell")
    for _ in done:
        pass
    if jobs > 1:
        ex.shutdown()
    files = [_cell_file(cells_dir, t, n, k, "runs") for _, t, n, k, *_ in work]
    runs = pd.concat([_read_cell(f, n_pools) for f in files]).sort_values(["truth", "n", "k", "rep"], key=_order)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / RUNS_FILE, runs.to_csv(index=False))
    stability = None
    if stab:
        full = pd.concat([_read_cell(_cell_file(cells_dir, t, n, k, "full"), stab)
                          for _, t, n, k, _, st, *_ in work if st])
        stability = _stability_rows(runs, full)
        atomic_write(out / STABILITY_FILE, stability.to_csv(index=False))
    meta = {"design": {**d, "truths": list(truths), "ks": ks, "ns": ns, "stability_ns": stab_ns},
            "rules": rules_signature(),
            "audits": int(len(runs) + (0 if stability is None else len(stability))),
            "cpu_seconds": round(float(runs["seconds"].sum() + (0 if stability is None else
                                                                 stability["seconds_full"].sum())), 1),
            "wall_seconds_this_run": round(time.perf_counter() - t0, 1), "jobs": jobs}
    atomic_write(out / META_FILE, json.dumps(meta, indent=1) + "\n")
    return VerdictStudy(runs.reset_index(drop=True), float(d["alpha"]), stability)


def _order(col: pd.Series) -> pd.Series:
    return col.map(TRUTHS.index) if col.name == "truth" else col


def _stability_rows(runs: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    keys = ["truth", "n", "k", "rep", "seed"]
    f = full[keys + ["code", "seconds"]].rename(columns={"code": "code_full", "seconds": "seconds_full"})
    out = runs[keys + ["code"]].rename(columns={"code": "code_small"}).merge(f, on=keys, how="inner")
    return out.sort_values(["truth", "n", "k", "rep"], key=_order).reset_index(drop=True)


def load_study(path: Path | str | None = None) -> VerdictStudy:
    """The committed verdict study (``data/study/``, or the folder ``path``) as a :class:`VerdictStudy`."""
    d = Path(STUDY_DIR if path is None else path)
    if not (d / RUNS_FILE).is_file():
        raise ValueError(f"path must be a folder holding {RUNS_FILE} (run `make study`), got {str(d)!r}")
    meta = json.loads((d / META_FILE).read_text()) if (d / META_FILE).is_file() else {}
    alpha = float(meta.get("design", {}).get("alpha", 0.05))
    stab = pd.read_csv(d / STABILITY_FILE) if (d / STABILITY_FILE).is_file() else None
    return VerdictStudy(pd.read_csv(d / RUNS_FILE), alpha, stab, meta)


def main(argv=None) -> int:
    """``python -m oraclegap.audit.study [--out DIR] [--pools N] [--jobs N]`` (``make study``)."""
    import argparse

    # the package's own functions (not this file run as __main__), so worker processes find them
    from oraclegap.audit.study import STUDY, build_study

    ap = argparse.ArgumentParser(prog="python -m oraclegap.audit.study", description="Run the verdict study.")
    ap.add_argument("--out", default=None, help="output folder (default data/study)")
    ap.add_argument("--pools", type=int, default=None, help="pools per cell (default the committed design's)")
    ap.add_argument("--stability", type=int, default=None,
                    help="pools per cell audited again at full sizes (default the committed design's)")
    ap.add_argument("--jobs", type=int, default=None, help="processes (default the CPU count)")
    a = ap.parse_args(argv)
    design = dict(STUDY)
    if a.pools is not None:
        design["n_pools"] = a.pools
    if a.stability is not None:
        design["stability_pools"] = a.stability
    try:
        s = build_study(a.out, design=design, jobs=a.jobs)
    except ValueError as e:
        print(f"oraclegap study: {e}")
        return 2
    print(s.false_claims().to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
