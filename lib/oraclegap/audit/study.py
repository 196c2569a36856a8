"""A verdict study: audits of simulated pools whose truth is known, counted as a confusion table
(truth x verdict code) with Wilson intervals, each claim code's precision, the rate of false claims
of specialization, each verdict scored against the truth table of ``shared/notes`` (correct,
acceptable, wrong), and the coverage of the certified quantity's interval of its population value.

Truth classes (:data:`TRUTHS`; M members, prompt rates q_i ~ Beta(0.347, 0.601), the Geometry3K
fit of arXiv 2609.32996, and p_im the true rate of member m on prompt i):

* ``exchangeable`` -- p_im = q_i: identical members;
* ``quality-only`` -- logit p_im = logit q_i + c_m with constant offsets c_m evenly spaced in
  [-0.6, 0.6]: members differ in quality only, on the logit scale;
* ``quality-probability`` -- p_im = q_i + d_m clipped to [0.001, 0.999], d_m evenly spaced in
  [-:data:`QUALITY_PROB_SPREAD`, +:data:`QUALITY_PROB_SPREAD`]: quality on the probability scale (the margin
  null's log-odds model does not hold, arXiv 2609.32996 App. C);
* ``dominant`` -- members 2..M specialize among themselves (one of them boosted per prompt) and
  member 1 is better than all of them on every prompt: p_i1 = 1 - (1 - max_m>1 p_im)(1 - :data:`DOMINANT_BOOST`);
  the reproducible gap over the best member is 0;
* ``seed-aligned`` -- the quality-only rates sampled with common random numbers (draw j of a prompt:
  one uniform for every member), as seed-aligned rollouts are; the study reads these pools back from a
  long CSV, which cannot declare alignment, so the audit must measure it;
* ``diffuse`` -- logit p_im = logit q_i + sigma z_im, z standard normal (sigma = :data:`DIFFUSE_SIGMA`):
  prompt-by-member effects everywhere; ``diffuse-weak`` the same at sigma = :data:`DIFFUSE_WEAK_SIGMA`;
* ``specialist-text`` -- one specialist per prompt (uniform over members) with
  p = 1 - (1 - q_i)(1 - :data:`SPECIALIST_BOOST`), the others q_i; the prompt text names the
  specialist's topic, so a router can see it;
* ``specialist-no-text`` -- the same rates, no text (real, not routable).

Specialization is real in both ``diffuse`` classes and both ``specialist`` classes (:data:`SPECIALIZED`). A
*false claim* is a code that asserts more than noise (:data:`CLAIM_CODES`) on a pool without
specialization, or ``quality-only`` on a pool whose members do not differ at all (``exchangeable``).
:func:`score` grades every (truth, k, code) by the truth table of ``shared/notes/verdict-truth-table.md``.

Every audited pool also records the certified quantity at the primary threshold (k > 1: the
split-draw coverage gap, :mod:`oraclegap.stats.split_gap`; k = 1: paper 002's outcome-oracle gap)
with its interval and its *population value*, computed from the true rates p of that pool's prompts
(:func:`population_value`; exact for independent draws, by simulation of the draws for seed-aligned
ones). :func:`certificate_study` runs that section alone on many more pools, including identical
members at n up to 8000, for the coverage and lower-limit tables.

:func:`verdict_study` runs one :func:`~oraclegap.audit.compute.run_audit` per pool (``small=True``
by default) over truth x n x k with ``n_pools`` pools per cell. :func:`build_study` runs the committed
design (:data:`STUDY`) cell by cell -- resumable, in parallel processes, identical for any number of
them since every pool has its own seed -- adds the *stability* check (the first pools of some cells
audited again at the full Monte Carlo sizes) and the certificate study, and writes ``data/study/``
(``make study``); :func:`load_study` reads it back.
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

__all__ = ["TRUTHS", "SPECIALIZED", "QUALITY", "CLAIM_CODES", "STUDY", "STUDY_DIR", "truth_pool", "via_long_csv",
           "population_value", "score", "certificate_runs", "VerdictStudy", "verdict_study", "build_study",
           "load_study"]

TRUTHS = ("exchangeable", "quality-only", "quality-probability", "dominant", "seed-aligned", "diffuse-weak",
          "diffuse", "specialist-text", "specialist-no-text")
#: Truth classes with real prompt-by-member specialization.
SPECIALIZED = frozenset({"diffuse-weak", "diffuse", "specialist-text", "specialist-no-text"})
#: Truth classes whose members differ in quality and in nothing else.
QUALITY = frozenset({"quality-only", "quality-probability", "seed-aligned"})
#: Verdict codes that assert more than sampling noise and member quality.
CLAIM_CODES = ("certified-recoverable", "certified", "luck", "detected-not-certified")
DIFFUSE_SIGMA = 1.0
DIFFUSE_WEAK_SIGMA = 0.5
SPECIALIST_BOOST = 0.6
QUALITY_SPREAD = 0.6
QUALITY_PROB_SPREAD = 0.1
DOMINANT_BOOST = 0.3


def _logit(p):
    return np.log(p / (1 - p))


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def _specialists(q, M, rng):
    spec = rng.integers(0, M, q.size)
    p = np.repeat(q[:, None], M, axis=1)
    p[np.arange(q.size), spec] = 1 - (1 - q) * (1 - SPECIALIST_BOOST)
    return p, spec


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
    elif truth == "quality-probability":
        p = np.clip(q[:, None] + np.linspace(-QUALITY_PROB_SPREAD, QUALITY_PROB_SPREAD, M)[None, :], 1e-3, 1 - 1e-3)
    elif truth == "dominant":
        rest, _ = _specialists(q, M - 1, rng)
        top = 1 - (1 - rest.max(axis=1)) * (1 - DOMINANT_BOOST)
        p = np.column_stack([top, rest])
    elif truth in ("diffuse", "diffuse-weak"):
        sigma = DIFFUSE_SIGMA if truth == "diffuse" else DIFFUSE_WEAK_SIGMA
        p = _expit(_logit(q)[:, None] + sigma * rng.standard_normal((n, M)))
    else:
        p, spec = _specialists(q, M, rng)
        if truth == "specialist-text":
            prompts = pd.DataFrame({"id": [f"p{i}" for i in range(n)],
                                    "text": [f"a question on topic{m} number {i}" for i, m in enumerate(spec)]})
    if truth == "seed-aligned":
        u = rng.random((n, 1, k))  # one uniform per draw, shared by every member
        pool = Pool.from_array(u < p[:, :, None], prompts, alignment="seed-aligned")
    else:
        pool = Pool.from_array(rng.random((n, M, k)) < p[:, :, None], prompts, alignment="independent")
    return pool, p


def via_long_csv(pool: Pool) -> Pool:
    """The pool written as a long CSV (:meth:`Pool.to_long`) and read back
    (:func:`oraclegap.sources.open_pool`): what a practitioner's export gives the audit. A CSV
    cannot declare how the draws were sampled, so the result's alignment is ``unknown``."""
    import tempfile

    from ..sources import open_pool

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "pool.csv"
        pool.to_long(path)
        return open_pool(str(path))


def population_value(p: np.ndarray, k: int, tau: float, *, aligned: bool = False, reps: int = 40,
                     seed=0) -> float:
    """The population value of the audit's certified quantity for true rates ``p`` [n, M] with k draws,
    averaged over these prompts: k > 1, the split-draw coverage gap at ``tau``
    (:func:`oraclegap.stats.split_gap.split_draw_population`, exact for independent draws; for
    ``aligned`` draws, common random numbers, the mean over ``reps`` simulated draws of every prompt
    of min_m mean_i E[d_im] estimated by the draws' average); k = 1, paper 002's outcome-oracle gap
    E[max_m Y_im] - max_m E[Y_im] (independent: 1 - prod_m (1 - p_im); aligned: max_m p_im)."""
    from ..stats.split_gap import _differences, split_draw_counts, split_draw_population, split_halves

    p = np.asarray(p, dtype=float)
    if k == 1:
        oracle = p.max(axis=1) if aligned else 1 - np.prod(1 - p, axis=1)
        return float(oracle.mean() - p.mean(axis=0).max())
    if not aligned:
        return float(split_draw_population(p, k, [tau])[0])
    rng = as_rng(seed)
    n, M = p.shape
    ka, kb = split_halves(k)
    acc = np.zeros(M)
    for _ in range(reps):
        v = rng.random((n, 1, k)) < p[:, :, None]
        ca, cb = split_draw_counts(v)
        d, _, _ = _differences(ca, cb, ka, kb, tau, rng.random((n, M)), rng.random((n, M)))
        acc += d.mean(axis=0)
    return float((acc / reps).min())


# ---------------------------------------------------------------------------- scoring (shared/notes)
_NO_SPEC_K = {"correct": {"noise", "no-gap", "quality-only"}, "acceptable": {"inconclusive", "luck"}}
_NO_SPEC_1 = {"correct": {"noise", "luck-not-excluded", "no-gap"}, "acceptable": set()}
_SCORES = {
    ("specialist-text", True): {"correct": {"certified-recoverable"},
                                "acceptable": {"certified", "detected-not-certified", "inconclusive"}},
    ("specialist-text", False): {"correct": {"certified-recoverable"}, "acceptable": {"luck-not-excluded"}},
    ("specialist-no-text", True): {"correct": {"certified"}, "acceptable": {"detected-not-certified", "inconclusive"}},
    ("specialist-no-text", False): {"correct": {"luck-not-excluded"}, "acceptable": set()},
    ("diffuse", True): {"correct": {"certified", "detected-not-certified", "luck"},
                        "acceptable": {"noise", "quality-only", "inconclusive"}},
    ("diffuse", False): {"correct": {"noise", "luck-not-excluded"}, "acceptable": set()},
    ("dominant", True): {"correct": {"noise", "quality-only", "luck"},
                         "acceptable": {"inconclusive", "detected-not-certified"}},
}


def score(truth: str, k: int, code: str) -> str:
    """``correct``, ``acceptable`` (conservative) or ``wrong`` for verdict ``code`` on a pool of
    ``truth`` with k draws, by the truth table of ``shared/notes/verdict-truth-table.md``
    (``diffuse`` is graded as weak diffuse interaction; exchangeable members given ``quality-only``
    are graded ``acceptable``, a minor error: it says members differ)."""
    if truth not in TRUTHS:
        raise ValueError(f"truth must be one of {TRUTHS}, got {truth!r}")
    key = "diffuse" if truth == "diffuse-weak" else truth
    if key in ("dominant",) and k == 1 or key not in {t for t, _ in _SCORES}:
        table = _NO_SPEC_K if k > 1 else _NO_SPEC_1
        if truth == "exchangeable" and code == "quality-only":
            return "acceptable"
    else:
        table = _SCORES[(key, k > 1)]
    if code in table["correct"]:
        return "correct"
    return "acceptable" if code in table["acceptable"] else "wrong"


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
    certificate_runs: pd.DataFrame | None = None

    def frame(self) -> pd.DataFrame:
        """The audits: one row per pool (``runs``)."""
        return self.runs.copy()

    def graded(self) -> pd.DataFrame:
        """The audits (``runs``) with two gradings of each verdict: ``grade``, correct, acceptable
        or wrong by the truth table (:func:`score`), and ``false_claim``, whether it is a false
        claim (see the module docstring; always False on a truth with specialization)."""
        r = self.runs
        return r.assign(grade=[score(t, int(k), c) for t, k, c in zip(r["truth"], r["k"], r["code"], strict=True)],
                        false_claim=[_false_claim(t, c) for t, c in zip(r["truth"], r["code"], strict=True)])

    def scores(self) -> pd.DataFrame:
        """Per (truth, k): pools whose verdict is correct, acceptable or wrong by :func:`score`,
        with the wrong rate and its Wilson interval, and the pools given a false claim
        (``false_claims``, the count :meth:`false_claims` rates per cell)."""
        r = self.graded()
        out = (r.groupby(["truth", "k"])["grade"].value_counts().unstack(fill_value=0)
               .reindex(columns=["correct", "acceptable", "wrong"], fill_value=0).reset_index())
        out["false_claims"] = r.groupby(["truth", "k"])["false_claim"].sum().to_numpy()
        out["pools"] = out[["correct", "acceptable", "wrong"]].sum(axis=1)
        out = _with_interval(out, "wrong", "pools", self.alpha)
        return out.sort_values(["truth", "k"], key=_order).reset_index(drop=True)

    def _cert_sample(self) -> pd.DataFrame:
        c = self.certificate_runs
        return self.runs if c is None or c.empty else c

    def coverage(self) -> pd.DataFrame:
        """Per (truth, n, k): how often the certified quantity's interval covers its population
        value (from the certificate study when present, else the audits), with Wilson intervals."""
        c = self._cert_sample().dropna(subset=["cert_lo"])
        out = c.groupby(["truth", "n", "k"]).agg(covers=("covers", "sum"), pools=("covers", "size"),
                                                 population=("population", "mean")).reset_index()
        return _with_interval(out, "covers", "pools", self.alpha).sort_values(["truth", "n", "k"], key=_order)

    def lower_limits(self) -> pd.DataFrame:
        """Per cell of a truth without specialization: the share of pools whose certified lower limit
        is <= 0 (Wilson interval), how many were certified and how many planners named a prompt count
        that would certify a useful gap."""
        c = self._cert_sample().dropna(subset=["cert_lo"])
        c = c[~c["truth"].isin(SPECIALIZED)].assign(le0=lambda d: d["cert_lo"] <= 0,
                                                      promise=lambda d: d["plan_n"].notna())
        out = c.groupby(["truth", "n", "k"]).agg(le0=("le0", "sum"), pools=("le0", "size"),
                                                 certified=("certified", "sum"),
                                                 apparent_certified=("apparent_certified", "sum"),
                                                 promises=("promise", "sum")).reset_index()
        return _with_interval(out, "le0", "pools", self.alpha).sort_values(["truth", "n", "k"], key=_order)

    def certification(self) -> pd.DataFrame:
        """Per cell of a specialized truth: the share of pools certified by the certified quantity and
        by the apparent gap's paired interval beside it (the power the certificate keeps)."""
        c = self._cert_sample().dropna(subset=["cert_lo"])
        c = c[c["truth"].isin(SPECIALIZED)]
        out = c.groupby(["truth", "n", "k"]).agg(certified=("certified", "sum"),
                                                 apparent_certified=("apparent_certified", "sum"),
                                                 pools=("certified", "size")).reset_index()
        return _with_interval(out, "certified", "pools", self.alpha).sort_values(["truth", "n", "k"], key=_order)

    def code_rate(self, code: str) -> pd.DataFrame:
        """Per (truth, n, k): the share of pools given ``code``, with its Wilson interval."""
        r = self.runs.assign(hit=self.runs["code"] == code)
        out = r.groupby(["truth", "n", "k"]).agg(given=("hit", "sum"), pools=("hit", "size")).reset_index()
        return _with_interval(out, "given", "pools", self.alpha).sort_values(["truth", "n", "k"], key=_order)

    def alignment_found(self) -> pd.DataFrame:
        """Per (truth, n, k) with k > 1: the share of pools whose verdict lists ``seed-aligned``."""
        r = self.runs[self.runs["k"] > 1]
        out = r.groupby(["truth", "n", "k"]).agg(found=("aligned_found", "sum"),
                                                 pools=("aligned_found", "size")).reset_index()
        return _with_interval(out, "found", "pools", self.alpha).sort_values(["truth", "n", "k"], key=_order)

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
        r = self.graded()
        flag = r[~r["truth"].isin(SPECIALIZED)].rename(columns={"false_claim": "false"})
        out = flag.groupby(["truth", "n", "k"]).agg(false=("false", "sum"), pools=("false", "size")).reset_index()
        out = _with_interval(out, "false", "pools", self.alpha)
        return out.assign(above_alpha=out["lo"] > self.alpha)

    def precision(self) -> pd.DataFrame:
        """Per claim code and ``quality-only``: of the pools given it, the share whose truth bears it
        out (specialization for a claim code; members that differ in quality, :data:`QUALITY` or
        ``dominant``, for ``quality-only``), with its Wilson interval."""
        rows = []
        for code in (*CLAIM_CODES, "quality-only"):
            given = self.runs[self.runs["code"] == code]
            if given.empty:
                continue
            right = (given["truth"].isin(SPECIALIZED) if code != "quality-only"
                     else given["truth"].isin(QUALITY | {"dominant"}))
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


def _certificate_fields(numbers: dict, p: np.ndarray, k: int, tau: float, aligned: bool, seed: int) -> dict:
    """The certified quantity at the primary threshold, its population value and whether its
    interval covers it; the apparent gap's lower limit beside it."""
    certs = numbers["certificates"]["levels"]
    key = "outcome" if k == 1 else numbers["coverage"]["primary_key"]
    c = certs[key].get("certificate") or {}
    pop = population_value(p, k, tau, aligned=aligned, seed=seed)
    lo, hi = c.get("lo", float("nan")), c.get("hi", float("nan"))
    return {"cert_estimate": c.get("value"), "cert_lo": lo, "cert_hi": hi, "cert_level": c.get("level"),
            "population": pop, "covers": bool(lo <= pop + 1e-12 and pop - 1e-12 <= hi),
            "certified": bool(certs[key]["certified"]), "apparent_lo": certs[key]["paired"]["lo"],
            "apparent_certified": bool(certs[key]["paired"]["lo"] > 0),
            "plan_n": certs[key]["plan"]["n_needed"]}


def _study_pool(truth: str, n: int, k: int, M: int, seed: int) -> tuple[Pool, np.ndarray]:
    pool, p = truth_pool(truth, n, k, M, seed=seed)
    return (via_long_csv(pool) if truth == "seed-aligned" else pool), p


def _audit_row(pool: Pool, p: np.ndarray, truth: str, alpha: float, small: bool, seed: int) -> dict:
    try:
        res = run_audit(pool, alpha=alpha, seed=0, small=small)
    except ValueError:  # a pool with every verdict equal (tiny n): nothing to audit
        return {"code": "not-auditable"}
    j = res.numbers
    nl = j["nulls"]
    row = {"code": res.verdict.code, "findings": " ".join(res.verdict.findings),
           "quality_p": (nl.get("quality") or {}).get("p"),
           "aligned_found": "seed-aligned" in res.verdict.findings}
    tau = j["settings"]["primary_tau"]
    row.update(_certificate_fields(j, p, pool.k, tau, truth == "seed-aligned", seed))
    return row


def _cell_runs(truth: str, n: int, k: int, reps, M: int, alpha: float, seed: int, small: bool) -> list[dict]:
    rows = []
    for r in reps:
        s = pool_seed(truth, n, k, r, seed)
        pool, p = _study_pool(truth, n, k, M, s)
        t0 = time.perf_counter()
        row = _audit_row(pool, p, truth, alpha, small, s)
        rows.append({"truth": truth, "n": n, "k": k, "rep": r, "seed": s, **row, "small": small,
                     "seconds": round(time.perf_counter() - t0, 4)})
    return rows


def certificate_runs(truth: str, n: int, k: int, reps, M: int = 5, alpha: float = 0.05, seed: int = 0,
                     tau: float | None = None) -> list[dict]:
    """The audit's certificates section alone (:func:`~oraclegap.audit.compute.certificates_section`,
    default thresholds) on pools ``reps`` of cell (truth, n, k): one row per pool with the certified
    quantity at the primary threshold, its population value, coverage, and the apparent gap's lower
    limit (the sample the coverage and lower-limit tables read; far cheaper than whole audits)."""
    from .compute import certificates_section, coverage_section
    from .settings import audit_settings

    st = audit_settings(alpha=alpha, seed=0, small=True)
    tau = st.primary_tau if tau is None else tau
    rows = []
    for r in reps:
        s = pool_seed(truth, n, k, r, seed + 1)
        pool, p = truth_pool(truth, n, k, M, seed=s)
        t0 = time.perf_counter()
        cov = coverage_section(pool, st)
        num = {"coverage": cov.numbers, "certificates": certificates_section(pool, st, cov).numbers}
        row = _certificate_fields(num, p, k, tau, truth == "seed-aligned", s)
        rows.append({"truth": truth, "n": n, "k": k, "rep": r, "seed": s, **row,
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


#: The committed design (``make study``): every truth class at k in {1, 4, 16} and n in {300, 1500},
#: 20 pools per cell audited with the ``--small`` sizes, plus the ``extra_cells`` (identical members at
#: k = 30 and at n = 8000, quality-only at k = 30); the first 3 pools of each n = 300 cell again at full
#: sizes; and the certificate study: the certificates section alone on ``certificate_pools`` pools of
#: each ``certificate_cells`` cell (every truth at n 300/1500 and k 4/16, identical members at n up to
#: 8000 and k up to 30). About 3,000 CPU-seconds on two cores of the machines this project runs on.
STUDY = {"truths": TRUTHS, "ks": (1, 4, 16), "ns": (300, 1500), "n_pools": 20, "stability_pools": 3,
         "stability_ns": (300,), "M": 5, "alpha": 0.05, "seed": 0,
         "extra_cells": (("exchangeable", 1500, 30), ("quality-only", 1500, 30), ("exchangeable", 8000, 4),
                         ("exchangeable", 8000, 30)),
         "certificate_cells": tuple((t, n, k) for t in TRUTHS for n, k in ((300, 4), (1500, 4), (1500, 16)))
         + (("exchangeable", 1500, 30), ("exchangeable", 8000, 4), ("exchangeable", 8000, 16),
            ("exchangeable", 8000, 30)),
         "certificate_pools": 200}
STUDY_DIR = Path(__file__).resolve().parents[3] / "data" / "study"
RUNS_FILE, STABILITY_FILE, META_FILE = "verdict_study.csv", "verdict_stability.csv", "study.json"
CERT_FILE = "certificate_study.csv"


def _cell_file(cells_dir: Path, truth: str, n: int, k: int, what: str) -> Path:
    return cells_dir / f"{what}-{truth}-n{n}-k{k}.csv"


def _extend(path: Path, truth: str, n: int, k: int, reps: int, M: int, alpha: float, seed: int,
            small: bool, chunk: int = 4, runner=None) -> None:
    """Make the cell file at ``path`` hold pools 0..reps-1, running only the missing ones and
    saving every ``chunk`` pools (an interrupted cell resumes from its last save)."""
    have = pd.read_csv(path) if path.exists() else None
    start = 0 if have is None else int(have["rep"].max()) + 1
    while start < reps:
        stop = min(reps, start + chunk)
        if runner is None:
            new = pd.DataFrame(_cell_runs(truth, n, k, range(start, stop), M, alpha, seed, small))
        else:
            new = pd.DataFrame(runner(truth, n, k, range(start, stop), M, alpha, seed))
        have = new if have is None else pd.concat([have, new])
        atomic_write(path, have.to_csv(index=False))
        start = stop


def _run_cell(args) -> tuple[str, int, int]:
    cells_dir, truth, n, k, n_pools, stab, M, alpha, seed = args
    if stab == "cert":
        _extend(_cell_file(cells_dir, truth, n, k, "cert"), truth, n, k, n_pools, M, alpha, seed, True, 50,
                certificate_runs)
        return truth, n, k
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
    sizes = ("n_pools", "stability_pools", "stability_ns", "truths", "ks", "ns", "extra_cells", "certificate_cells",
             "certificate_pools")
    fixed = {k: v for k, v in d.items() if k not in sizes}
    key = hashlib.sha256(json.dumps([fixed, rules_signature(), _code_digest()], sort_keys=True,
                                    default=list).encode()).hexdigest()
    cells_dir = cells_dir / key[:12]
    cells_dir.mkdir(parents=True, exist_ok=True)
    jobs = check_int(jobs if jobs is not None else (os.cpu_count() or 1), "jobs", minimum=1)
    stab_ns = [check_int(n, "stability_ns", minimum=20) for n in d.get("stability_ns", ns)]
    grid = [(t, n, k) for n in ns for k in ks for t in truths]
    extra = [tuple(c) for c in d.get("extra_cells", ()) if tuple(c) not in grid]
    work: list[tuple] = [(cells_dir, t, n, k, n_pools, stab * (n in stab_ns and (t, n, k) in grid), d["M"], d["alpha"], seed)
            for t, n, k in grid + extra]
    work.sort(key=lambda w: w[2] * (1 + (w[3] > 1)))  # the cheapest cells first: a cut run keeps most cells
    cert_cells = [tuple(c) for c in d.get("certificate_cells", ())]
    n_cert = check_int(d.get("certificate_pools", 0), "certificate_pools", minimum=0)
    if n_cert and cert_cells:
        work += [(cells_dir, t, n, k, n_cert, "cert", d["M"], d["alpha"], seed) for t, n, k in cert_cells]
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
    files = [_cell_file(cells_dir, t, n, k, "runs") for _, t, n, k, _, st, *_ in work if st != "cert"]
    runs = pd.concat([_read_cell(f, n_pools) for f in files]).sort_values(["truth", "n", "k", "rep"], key=_order)
    certs = None
    if n_cert and cert_cells:
        certs = pd.concat([_read_cell(_cell_file(cells_dir, t, n, k, "cert"), n_cert) for t, n, k in cert_cells])
        certs = certs.sort_values(["truth", "n", "k", "rep"], key=_order).reset_index(drop=True)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / RUNS_FILE, runs.to_csv(index=False))
    stability = None
    if stab:
        full = pd.concat([_read_cell(_cell_file(cells_dir, t, n, k, "full"), stab)
                          for _, t, n, k, _, st, *_ in work if st and st != "cert"])
        stability = _stability_rows(runs, full)
        atomic_write(out / STABILITY_FILE, stability.to_csv(index=False))
    if certs is not None:
        atomic_write(out / CERT_FILE, certs.to_csv(index=False))
    meta = {"design": {**d, "truths": list(truths), "ks": ks, "ns": ns, "stability_ns": stab_ns,
                       "extra_cells": [list(c) for c in extra], "certificate_cells": [list(c) for c in cert_cells]},
            "rules": rules_signature(),
            "audits": int(len(runs) + (0 if stability is None else len(stability))),
            "certificate_pools": 0 if certs is None else int(len(certs)),
            "cpu_seconds": round(float(runs["seconds"].sum() + (0 if stability is None else
                                                                 stability["seconds_full"].sum())
                                       + (0 if certs is None else certs["seconds"].sum())), 1),
            "wall_seconds_this_run": round(time.perf_counter() - t0, 1), "jobs": jobs}
    atomic_write(out / META_FILE, json.dumps(meta, indent=1) + "\n")
    return VerdictStudy(runs.reset_index(drop=True), float(d["alpha"]), stability, meta, certs)


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
    certs = pd.read_csv(d / CERT_FILE) if (d / CERT_FILE).is_file() else None
    return VerdictStudy(pd.read_csv(d / RUNS_FILE), alpha, stab, meta, certs)


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
    for title, table in (("false claims", s.false_claims()), ("scores", s.scores()),
                         ("coverage of the certified interval", s.coverage()),
                         ("lower limits without specialization", s.lower_limits()),
                         ("certification of specialists", s.certification())):
        print(f"== {title}")
        print(table.to_string(index=False))
    print(f"cpu seconds: {s.meta.get('cpu_seconds')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
