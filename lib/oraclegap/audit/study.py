"""A verdict study (issue 25, reduced): audits of simulated pools whose truth is known, counted as
a confusion table (truth x verdict code) with Wilson intervals, each claim code's precision and the
rate of false claims of specialization.

Truth classes (:data:`TRUTHS`; M members, prompt rates q_i ~ Beta(0.347, 0.601), the Geometry3K
fit of arXiv 2609.32996, and p_im the true rate of member m on prompt i):

* ``exchangeable`` -- p_im = q_i: no member differs from another;
* ``quality-only`` -- logit p_im = logit q_i + c_m with constant offsets c_m evenly spaced in
  [-0.6, 0.6]: members differ in quality only;
* ``diffuse`` -- logit p_im = logit q_i + sigma z_im, z standard normal (sigma = :data:`DIFFUSE_SIGMA`):
  prompt-by-member effects everywhere;
* ``specialist-text`` -- one specialist per prompt (uniform over members) with
  p = 1 - (1 - q_i)(1 - :data:`SPECIALIST_BOOST`), the others q_i; the prompt text names the
  specialist's topic, so a router can see it;
* ``specialist-no-text`` -- the same rates, no text (real, not routable);
* ``seed-aligned`` -- the quality-only rates sampled with common random numbers (draw j of a prompt:
  one uniform for every member), as seed-aligned rollouts are.

Specialization is real in ``diffuse`` and both ``specialist`` classes (:data:`SPECIALIZED`). A
*false claim* is a code that asserts more than noise (:data:`CLAIM_CODES`) on a pool without
specialization, or ``quality-only`` on a pool whose members do not differ at all (``exchangeable``).

:func:`verdict_study` runs one :func:`~oraclegap.audit.compute.run_audit` per pool (``small=True``
by default) over truth x n x k with ``n_pools`` pools per cell; the committed study of issue 25 is
this function at larger sizes (see the report of the change for its cost).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pandas as pd

from .._validate import as_rng, check_int
from ..pool import Pool
from ..stats.simulate import GEOMETRY3K_AB
from ..stats.studies import rate_interval
from .compute import run_audit

__all__ = ["TRUTHS", "SPECIALIZED", "CLAIM_CODES", "truth_pool", "VerdictStudy", "verdict_study"]

TRUTHS = ("exchangeable", "quality-only", "diffuse", "specialist-text", "specialist-no-text", "seed-aligned")
#: Truth classes with real prompt-by-member specialization.
SPECIALIZED = frozenset({"diffuse", "specialist-text", "specialist-no-text"})
#: Verdict codes that assert more than sampling noise and member quality.
CLAIM_CODES = ("certified-recoverable", "certified", "luck", "detected-not-certified")
DIFFUSE_SIGMA = 1.0
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
    elif truth == "diffuse":
        p = _expit(_logit(q)[:, None] + DIFFUSE_SIGMA * rng.standard_normal((n, M)))
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


@dataclasses.dataclass(frozen=True)
class VerdictStudy:
    """The audits of a verdict study: ``runs`` (one row per pool: truth, n, k, rep, seed, code,
    seconds) and the level ``alpha`` of the Wilson intervals."""

    runs: pd.DataFrame
    alpha: float = 0.05

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


def verdict_study(truths=TRUTHS, ks=(1, 4, 16), ns=(200,), n_pools: int = 4, *, M: int = 5, alpha: float = 0.05,
                  seed: int = 0, small: bool = True, progress: bool = False) -> VerdictStudy:
    """Audit ``n_pools`` simulated pools of every truth class at every n and k (pool r of cell
    (truth, n, k) is sampled with seed ``seed + 1000 * cell + r`` and audited with seed 0, level
    ``alpha``, ``small`` Monte Carlo sizes); returns the :class:`VerdictStudy`."""
    truths = tuple(truths)
    bad = [t for t in truths if t not in TRUTHS]
    if bad or not truths:
        raise ValueError(f"truths must be a non-empty selection of {TRUTHS}, got {list(truths)}")
    ks = [check_int(k, "ks", minimum=1) for k in ks]
    ns = [check_int(n, "ns", minimum=20) for n in ns]
    n_pools = check_int(n_pools, "n_pools", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    cells = [(t, n, k) for t in truths for n in ns for k in ks]
    it = range(len(cells) * n_pools)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc="verdict study", unit="audit", leave=False)
    rows = []
    for j in it:
        c, r = divmod(j, n_pools)
        truth, n, k = cells[c]
        pool_seed = seed + 1000 * c + r
        pool, _ = truth_pool(truth, n, k, M, seed=pool_seed)
        t0 = time.perf_counter()
        try:
            code = run_audit(pool, alpha=alpha, seed=0, small=small).verdict.code
        except ValueError:  # a pool with every verdict equal (tiny n): nothing to audit
            code = "not-auditable"
        rows.append({"truth": truth, "n": n, "k": k, "rep": r, "seed": pool_seed, "code": code,
                     "seconds": time.perf_counter() - t0})
    return VerdictStudy(pd.DataFrame(rows), alpha)
