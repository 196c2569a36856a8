"""Paper 000 (arXiv 2609.32996) number for number on a paper-calibrated reference pool.

The paper released no verdicts, so its tables cannot be recomputed from its data. What it does
publish are the margins of its Geometry3K seed pool: n = 240 prompts, M = 5 seeds, k = 16
responses, the Beta(0.347, 0.601) prompt-rate prior fitted on the test split (App. C.3) and the
range of the five member means, 0.355 to 0.376 (Sec. 3.1). The tables whose values the paper
obtained by simulation, or whose null quantities depend only on these margins, can be rerun on
a pool simulated from them and set beside the paper's figures:

* :func:`reference_rates` / :func:`reference_pool` -- the calibrated pool: prompt rates
  q_i ~ Beta(a, b) and member m at logit p_im = logit q_i + d_m, with d_m solved so that member
  m's mean rate over the prompts equals its published mean (the five means spread evenly over the
  published range: only its ends are printed). A constant logit shift keeps the members' order
  on every prompt, so the population oracle gap is exactly zero: the pool is the paper's
  margin-preserving null world.
* :func:`table1_nulls` -- the null means of D and L (Table 1, re-deal; Table A6, margin-preserving).
* :func:`table2_diffuse` -- power against diffuse log-odds perturbations (Table 2).
* :func:`tableA2_planting` -- power against concentrated planting (Table A2).
* :func:`tableA3_excess` -- the excess against the known population gap (Table A3).
* :func:`tableA4_links` -- quality differences constant on three scales, with the paper's group
  means 0.37 against 0.24 and 0.17 (Table A4).
* :func:`selection_stats`, :func:`dataset_rule`, :func:`band_rule` -- Table A11's two-stage
  dataset and band selection rule (App. F.1).
* :func:`proposition2_counts` -- the routing tables' published figures (Tables A1 and A5) read
  back as integer counts of prompts: a router's gain is L - D e_D (Proposition 2), so the gain,
  the disagreement error and L/D must agree in whole prompts.

Every rerun (``z``: the multiple of the Monte Carlo standard error) returns a :class:`Rerun`: our per-setting values and a long comparison frame with the
paper's figure, ours and a tolerance from Monte Carlo error (:func:`tolerance`), with the verdict
"within", "above" or "below". Inputs are the transcribed tables as DataFrames
(``datasets.paper_table("000_...")``); nothing here reads files.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import expit, logit

from .._result import Result
from .._validate import as_rng, check_int, check_prob
from . import nulls as _nulls
from . import simulate as _sim
from . import studies as _studies
from .coverage import as_counts

__all__ = [
    "ARXIV",
    "SeedPoolMargins",
    "PAPER_MARGINS",
    "margins_from_table",
    "reference_rates",
    "reference_pool",
    "tolerance",
    "Rerun",
    "table1_nulls",
    "table2_diffuse",
    "tableA2_planting",
    "tableA3_excess",
    "tableA4_links",
    "selection_stats",
    "dataset_rule",
    "band_rule",
    "proposition2_counts",
]

ARXIV = "2609.32996"
_Z = 2.0  # tolerances are two Monte Carlo standard errors of the difference


@dataclasses.dataclass(frozen=True)
class SeedPoolMargins:
    """The published margins of 000's seed pool: shape, Beta prompt prior, member means."""

    n: int
    M: int
    k: int
    a: float
    b: float
    member_means: tuple[float, ...]

    def __post_init__(self):
        check_int(self.n, "n", minimum=1)
        check_int(self.M, "M", minimum=2)
        check_int(self.k, "k", minimum=1)
        if not (self.a > 0 and self.b > 0 and math.isfinite(self.a) and math.isfinite(self.b)):
            raise ValueError(f"Beta parameters a and b must be positive and finite, got a={self.a}, b={self.b}")
        if len(self.member_means) != self.M:
            raise ValueError(f"member_means must hold M={self.M} means, got {len(self.member_means)}")
        for v in self.member_means:
            check_prob(v, "member_means", open_low=True, open_high=True)


def _spread(lo: float, hi: float, M: int) -> tuple[float, ...]:
    return tuple(float(v) for v in np.linspace(lo, hi, M))


#: The margins of the Geometry3K seed pool (Sec. 3.1, App. C.3); ``margins_from_table`` rebuilds
#: them from ``data/paper/000_seed_pool.csv`` and a test checks the two agree.
PAPER_MARGINS = SeedPoolMargins(240, 5, 16, 0.347, 0.601, _spread(0.355, 0.376, 5))


def margins_from_table(df: pd.DataFrame) -> SeedPoolMargins:
    """Margins from the transcribed ``000_seed_pool`` table (columns quantity, value)."""
    if not isinstance(df, pd.DataFrame) or not {"quantity", "value"} <= set(df.columns):
        raise ValueError("df must be the transcribed 000_seed_pool table with columns 'quantity' and 'value'")
    v = dict(zip(df["quantity"], df["value"], strict=True))
    need = ("n", "M", "k", "prior_a", "prior_b", "member_mean_lo", "member_mean_hi")
    missing = [q for q in need if q not in v]
    if missing:
        raise ValueError(f"the seed-pool table lacks {missing}")
    M = int(v["M"])
    return SeedPoolMargins(int(v["n"]), M, int(v["k"]), float(v["prior_a"]), float(v["prior_b"]),
                           _spread(float(v["member_mean_lo"]), float(v["member_mean_hi"]), M))


def _check_margins(margins) -> SeedPoolMargins:
    if margins is None:
        return PAPER_MARGINS
    if not isinstance(margins, SeedPoolMargins):
        raise TypeError(f"margins must be a SeedPoolMargins, got {type(margins).__name__}")
    return margins


def _logit_shift(q: np.ndarray, target: float) -> float:
    eta = logit(q)
    fn = lambda d: float(np.mean(expit(eta + d))) - target  # noqa: E731
    return float(brentq(fn, -40.0, 40.0, xtol=1e-13))


def reference_rates(margins: SeedPoolMargins | None = None, seed=0) -> np.ndarray:
    """True rates p[n, M] of the paper-calibrated pool: q_i ~ Beta(a, b) (clipped to
    [1e-9, 1 - 1e-9]) and logit p_im = logit q_i + d_m with mean_i p_im = member_means[m]."""
    mg = _check_margins(margins)
    rng = as_rng(seed)
    q = np.clip(rng.beta(mg.a, mg.b, size=mg.n), 1e-9, 1 - 1e-9)
    shifts = np.array([_logit_shift(q, t) for t in mg.member_means])
    return expit(logit(q)[:, None] + shifts[None, :])


def reference_pool(margins: SeedPoolMargins | None = None, seed=0) -> _sim.Simulated:
    """One paper-calibrated pool: k Bernoulli draws per cell of :func:`reference_rates`."""
    mg = _check_margins(margins)
    rng = as_rng(seed)
    p = reference_rates(mg, rng)
    info = {"generator": "paper000_reference", "a": mg.a, "b": mg.b, "member_means": mg.member_means}
    pool = _sim.sample_pool(p, mg.k, rng, meta={"generator": "paper000_reference", "citation": f"arXiv {ARXIV}"})
    return _sim.Simulated(pool, p, info)


# ---------------------------------------------------------------------------- tolerances
def tolerance(kind: str, *, sd: float = 0.0, reps: int = 1, paper_reps: int | None = None, rate: float | None = None,
              z: float = _Z) -> float:
    """Half-width within which our Monte Carlo figure and the paper's should agree.

    ``"mean"``: both are means over replicates with per-replicate SD ``sd`` (ours over ``reps``,
    the paper's over ``paper_reps``): z sqrt(sd^2 / reps + sd^2 / paper_reps). ``"rate"``: both
    are rejection fractions; with the pooled ``rate`` p: z sqrt(p (1 - p) (1/reps + 1/paper_reps)),
    p kept at least 1/(2 (reps + paper_reps)) from 0 and 1. ``"single"``: the paper's figure comes
    from its one pool, ours is a mean over ``reps`` pools with between-pool SD ``sd``: z sd
    sqrt(1 + 1/reps), a prediction interval for one pool.
    """
    if kind not in ("mean", "rate", "single"):
        raise ValueError(f"kind must be 'mean', 'rate' or 'single', got {kind!r}")
    reps = check_int(reps, "reps", minimum=1)
    if not (sd >= 0 and math.isfinite(sd)):
        raise ValueError(f"sd must be a finite number >= 0, got {sd}")
    if kind == "single":
        return float(z * sd * math.sqrt(1 + 1 / reps))
    paper_reps = check_int(paper_reps, "paper_reps", minimum=1)
    if kind == "mean":
        return float(z * sd * math.sqrt(1 / reps + 1 / paper_reps))
    if kind == "rate":
        if rate is None:
            raise ValueError("kind='rate' needs the pooled rejection rate 'rate'")
        eps = 1 / (2 * (reps + paper_reps))
        p = min(max(check_prob(rate, "rate"), eps), 1 - eps)
        return float(z * math.sqrt(p * (1 - p) * (1 / reps + 1 / paper_reps)))
    raise AssertionError("unreachable")  # pragma: no cover


def _verdict(ours: float, paper: float, tol: float) -> str:
    if not (math.isfinite(ours) and math.isfinite(paper)):
        return "not comparable"
    d = ours - paper
    return "within" if abs(d) <= tol + 1e-12 else ("above" if d > 0 else "below")


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Rerun(Result):
    """One of 000's tables rerun on the reference pool.

    ``ours``: one row per setting (our means, SDs, rejection rates, replicate counts).
    ``comparison``: one row per published cell -- table, setting, quantity, paper, ours, tol (Monte
    Carlo tolerance plus half a unit of the paper's printed rounding),
    diff (ours - paper), verdict ("within" | "above" | "below" | "not comparable") and note.
    """

    table: str
    ours: pd.DataFrame
    comparison: pd.DataFrame
    reps: int

    def frame(self) -> pd.DataFrame:
        return self.comparison.copy()

    def counts(self) -> dict:
        """How many compared cells lie within tolerance, above and below."""
        v = self.comparison["verdict"].value_counts()
        return {key: int(v.get(key, 0)) for key in ("within", "above", "below", "not comparable")}

    _repr_fields = ("table", "reps", "verdicts")

    @property
    def verdicts(self) -> str:
        """``"W within, A above, B below"`` over the compared cells."""
        c = self.counts()
        return f"{c['within']} within, {c['above']} above, {c['below']} below"


def _row(table, setting, quantity, paper, ours, tol, note="", *, digits: int = 3):
    """One compared cell; the tolerance also carries the half unit of the paper's printed
    rounding (three decimals for means, two for rejection rates)."""
    paper, ours = float(paper), float(ours)
    tol = float(tol) + 0.5 * 10.0**-digits
    return {"table": table, "setting": setting, "quantity": quantity, "paper": paper, "ours": ours, "tol": float(tol),
            "diff": ours - paper, "verdict": "not comparable" if note.startswith("not comparable") else _verdict(ours, paper, tol),
            "note": note}


def _need(df, cols, name):
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame (the transcribed table), got {type(df).__name__}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{name} lacks columns {missing}; expected the transcribed 000 table")


def _study_rows(gen, n_reps, *, taus, nulls, n_draws, seed, n_moves):
    st = _studies.study(gen, n_reps, taus=taus, nulls=nulls, n_draws=n_draws, seed=seed, burn_in=30 * n_moves,
                        thin=n_moves, progress=False)
    return st.rows


def _agg(rows: pd.DataFrame) -> pd.DataFrame:
    g = rows.groupby(["tau", "null"], sort=True)
    out = g.agg(reps=("reject", "size"), reject_rate=("reject", "mean"), observed=("observed", "mean"),
                observed_sd=("observed", "std"), excess=("excess", "mean"), excess_sd=("excess", "std"),
                population_L=("population_L", "mean"), population_L_sd=("population_L", "std"))
    return out.fillna({"observed_sd": 0.0, "excess_sd": 0.0, "population_L_sd": 0.0}).reset_index()


# ---------------------------------------------------------------------------- Table 1 / A6 null means
def table1_nulls(t1: pd.DataFrame, a6: pd.DataFrame | None = None, *, margins=None, n_pools: int = 20, n_draws: int = 400,
                 seed=0, z: float = _Z) -> Rerun:
    """Null means of D and L on ``n_pools`` reference pools against Table 1 (re-deal means of D
    and L) and, with ``a6``, Table A6's margin-preserving means of L on Geometry3K test.

    The paper's figures come from its one pool, so the tolerance is a prediction interval for
    one pool (:func:`tolerance` ``"single"``), from the between-pool SD of our null means.
    """
    _need(t1, ["tau", "D_null", "L_null"], "t1")
    mg = _check_margins(margins)
    n_pools = check_int(n_pools, "n_pools", minimum=2)
    rng = as_rng(seed)
    taus = tuple(float(t) for t in t1["tau"])
    per = []
    for _ in range(n_pools):
        pool = reference_pool(mg, rng).pool
        res = _nulls.null_tests(pool, taus, statistics=("L", "D"), n_draws=n_draws, seed=rng, n_chains=1,
                                burn_in=30 * mg.n * mg.M, thin=mg.n * mg.M)
        per.append(res.frame()[["statistic", "tau", "null", "observed", "mean"]])
    df = pd.concat(per, ignore_index=True)
    ours = df.groupby(["statistic", "tau", "null"]).agg(null_mean=("mean", "mean"), null_mean_sd=("mean", "std"),
                                                       observed=("observed", "mean"), pools=("mean", "size")).reset_index()
    o = ours.set_index(["statistic", "tau", "null"])
    rows = []
    for _, r in t1.iterrows():
        tau = float(r["tau"])
        for stat, col in (("D", "D_null"), ("L", "L_null")):
            cell = o.loc[(stat, tau, "redeal")]
            rows.append(_row("Table 1", f"tau={tau:g}", f"re-deal null mean of {stat}", r[col], cell["null_mean"],
                             tolerance("single", sd=cell["null_mean_sd"], reps=n_pools, z=z)))
    if a6 is not None:
        _need(a6, ["tau", "margin"], "a6")
        for _, r in a6.iterrows():
            tau = float(r["tau"])
            if ("L", tau, "margin") in o.index:
                cell = o.loc[("L", tau, "margin")]
                rows.append(_row("Table A6", f"tau={tau:g}", "margin-preserving null mean of L", r["margin"], cell["null_mean"],
                                 tolerance("single", sd=cell["null_mean_sd"], reps=n_pools, z=z)))
    return Rerun("Table 1", ours, pd.DataFrame(rows), n_pools)


# ---------------------------------------------------------------------------- Table 2: diffuse
def table2_diffuse(t2: pd.DataFrame, *, margins=None, n_reps: int = 20, n_draws: int = 400, seed=0, z: float = _Z) -> Rerun:
    """Table 2: every member's log-odds perturbed by N(0, sigma^2) around the prompt means of a
    fresh reference pool (as the paper's were centred on its observed pool), k as in the margins,
    both tests at tau = 0.10, level 0.05."""
    _need(t2, ["sigma", "L", "excess", "power_redeal", "power_margin", "reps"], "t2")
    mg = _check_margins(margins)
    n_reps = check_int(n_reps, "n_reps", minimum=2)
    rng = as_rng(seed)
    frames, rows = [], []
    for _, r in t2.iterrows():
        sigma = float(r["sigma"])

        def gen(g, sigma=sigma):
            return _sim.diffuse_from(reference_pool(mg, g).pool, sigma, seed=g)

        a = _agg(_study_rows(gen, n_reps, taus=(0.10,), nulls=("redeal", "margin"), n_draws=n_draws, seed=rng,
                             n_moves=mg.n * mg.M))
        a.insert(0, "sigma", sigma)
        frames.append(a)
        red, mar = a[a["null"] == "redeal"].iloc[0], a[a["null"] == "margin"].iloc[0]
        pr = int(r["reps"])
        s = f"sigma={sigma:g}"
        rows.append(_row("Table 2", s, "population L", r["L"], red["population_L"],
                         tolerance("mean", sd=red["population_L_sd"], reps=n_reps, paper_reps=pr, z=z)))
        rows.append(_row("Table 2", s, "excess (re-deal)", r["excess"], red["excess"],
                         tolerance("mean", sd=red["excess_sd"], reps=n_reps, paper_reps=pr, z=z)))
        for name, cell, col in (("re-deal", red, "power_redeal"), ("margin", mar, "power_margin")):
            pooled = (cell["reject_rate"] * n_reps + float(r[col]) * pr) / (n_reps + pr)
            rows.append(_row("Table 2", s, f"power, {name}", r[col], cell["reject_rate"],
                             tolerance("rate", reps=n_reps, paper_reps=pr, rate=pooled, z=z), digits=2))
    return Rerun("Table 2", pd.concat(frames, ignore_index=True), pd.DataFrame(rows), n_reps)


# ---------------------------------------------------------------------------- Table A2: planting
def tableA2_planting(a2: pd.DataFrame, *, margins=None, n_reps: int = 20, n_draws: int = 400, seed=0, z: float = _Z) -> Rerun:
    """Table A2: round(delta k) transfers per prompt planted in a fresh reference pool's counts,
    both tests at tau = 0.10. The paper's delta = 0 row retests its own observed pool (its
    excess, 0.017, is that pool's), so it is marked not comparable; its excess in every row
    starts from that pool, ours from a null-world pool."""
    _need(a2, ["delta", "target", "power_redeal", "power_margin", "excess", "reps"], "a2")
    mg = _check_margins(margins)
    n_reps = check_int(n_reps, "n_reps", minimum=2)
    rng = as_rng(seed)
    frames, rows = [], []
    for _, r in a2.iterrows():
        delta = float(r["delta"])

        def gen(g, delta=delta):
            return _sim.plant(reference_pool(mg, g).pool, delta, seed=g)

        a = _agg(_study_rows(gen, n_reps, taus=(0.10,), nulls=("redeal", "margin"), n_draws=n_draws, seed=rng,
                             n_moves=mg.n * mg.M))
        a.insert(0, "delta", delta)
        a.insert(1, "target", _sim.transfer_target(delta, mg.k))
        frames.append(a)
        red, mar = a[a["null"] == "redeal"].iloc[0], a[a["null"] == "margin"].iloc[0]
        pr, s = int(r["reps"]), f"delta={delta:g}"
        note = "not comparable: the paper's row retests its observed pool" if delta == 0 else ""
        rows.append(_row("Table A2", s, "excess (re-deal)", r["excess"], red["excess"],
                         tolerance("mean", sd=red["excess_sd"], reps=n_reps, paper_reps=pr, z=z), note))
        for name, cell, col in (("re-deal", red, "power_redeal"), ("margin", mar, "power_margin")):
            pooled = (cell["reject_rate"] * n_reps + float(r[col]) * pr) / (n_reps + pr)
            rows.append(_row("Table A2", s, f"power, {name}", r[col], cell["reject_rate"],
                             tolerance("rate", reps=n_reps, paper_reps=pr, rate=pooled, z=z), note, digits=2))
    return Rerun("Table A2", pd.concat(frames, ignore_index=True), pd.DataFrame(rows), n_reps)


# ---------------------------------------------------------------------------- Table A3: excess vs truth
def tableA3_excess(a3: pd.DataFrame, *, margins=None, n_reps: int = 30, n_draws: int = 300, seed=0, z: float = _Z) -> Rerun:
    """Table A3: a fraction f of prompts gets one member raised to min(1, q + s), with
    q ~ Beta(a, b), at the margins' n, M, k; known population L(0.10), plug-in L, excess over
    the re-deal mean (``ours`` also holds the ratio of the mean excess to the mean population
    gap; the paper's ratio column, a ratio of small noisy means, is not compared)."""
    _need(a3, ["f", "s", "L", "L_hat", "excess", "ratio", "reps"], "a3")
    mg = _check_margins(margins)
    n_reps = check_int(n_reps, "n_reps", minimum=2)
    rng = as_rng(seed)
    frames, rows = [], []
    for _, r in a3.iterrows():
        f, s = float(r["f"]), float(r["s"])

        def gen(g, f=f, s=s):
            return _sim.specialists(mg.n, mg.M, mg.k, f, s, a=mg.a, b=mg.b, seed=g)

        a = _agg(_study_rows(gen, n_reps, taus=(0.10,), nulls=("redeal",), n_draws=n_draws, seed=rng, n_moves=mg.n * mg.M))
        a.insert(0, "f", f)
        a.insert(1, "s", s)
        a["ratio"] = a["excess"] / a["population_L"]
        frames.append(a)
        c, pr, st = a.iloc[0], int(r["reps"]), f"f={f:g}, s={s:g}"
        rows.append(_row("Table A3", st, "population L", r["L"], c["population_L"],
                         tolerance("mean", sd=c["population_L_sd"], reps=n_reps, paper_reps=pr, z=z)))
        rows.append(_row("Table A3", st, "plug-in L", r["L_hat"], c["observed"],
                         tolerance("mean", sd=c["observed_sd"], reps=n_reps, paper_reps=pr, z=z)))
        rows.append(_row("Table A3", st, "excess (re-deal)", r["excess"], c["excess"],
                         tolerance("mean", sd=c["excess_sd"], reps=n_reps, paper_reps=pr, z=z)))
    return Rerun("Table A3", pd.concat(frames, ignore_index=True), pd.DataFrame(rows), n_reps)


# ---------------------------------------------------------------------------- Table A4: links
def tableA4_links(a4: pd.DataFrame, *, strong_mean: float = 0.37, margins=None, n_reps: int = 30, n_draws: int = 400,
                  seed=0, z: float = _Z) -> Rerun:
    """Table A4 as the paper sets it: two groups of M members share the prompt difficulties of a
    fresh reference pool (its pooled prompt rates), the stronger group at mean ``strong_mean``
    (the paper's 0.37), the weaker at the table's ``weak_mean`` (0.24 or 0.17), with effects
    constant on the logit, probit or probability scale; both tests at tau = 0.05, 0.10, 0.20."""
    _need(a4, ["link", "gap", "weak_mean", "reject_005", "reject_010", "reject_020", "L_005", "L_010", "L_020", "reps"], "a4")
    mg = _check_margins(margins)
    strong_mean = check_prob(strong_mean, "strong_mean", open_low=True, open_high=True)
    n_reps = check_int(n_reps, "n_reps", minimum=2)
    rng = as_rng(seed)
    taus = (0.05, 0.10, 0.20)
    frames, rows = [], []
    for _, r in a4.iterrows():
        link, weak = str(r["link"]), float(r["weak_mean"])

        def gen(g, link=link, weak=weak):
            c = reference_pool(mg, g).pool.counts()
            base = c.sum(axis=1) / (mg.M * mg.k)
            return _sim.quality_shift(k=mg.k, link=link, strong_mean=strong_mean, weak_mean=weak, base=base,
                                      groups=(mg.M, mg.M), seed=g)

        a = _agg(_study_rows(gen, n_reps, taus=taus, nulls=("redeal", "margin"), n_draws=n_draws, seed=rng,
                             n_moves=mg.n * 2 * mg.M))
        a.insert(0, "link", link)
        a.insert(1, "weak_mean", weak)
        frames.append(a)
        pr, st = int(r["reps"]), f"{link}, weak mean {weak:g}"
        for tau in taus:
            key = f"{round(tau * 100):03d}"
            mar = a[(a["null"] == "margin") & np.isclose(a["tau"], tau)].iloc[0]
            pooled = (mar["reject_rate"] * n_reps + float(r[f"reject_{key}"]) * pr) / (n_reps + pr)
            rows.append(_row("Table A4", st, f"reject, margin-preserving, tau={tau:g}", r[f"reject_{key}"], mar["reject_rate"],
                             tolerance("rate", reps=n_reps, paper_reps=pr, rate=pooled, z=z), digits=2))
            rows.append(_row("Table A4", st, f"mean plug-in L, tau={tau:g}", r[f"L_{key}"], mar["observed"],
                             tolerance("mean", sd=mar["observed_sd"], reps=n_reps, paper_reps=pr, z=z)))
    return Rerun("Table A4", pd.concat(frames, ignore_index=True), pd.DataFrame(rows), n_reps)


# ---------------------------------------------------------------------------- Table A11: selection rule
def selection_stats(x, *, k: int | None = None, band=(0.05, 0.30)) -> dict:
    """Table A11's columns for one candidate from base-model counts (a Pool, verdicts or counts
    [n] / [n, 1] with ``k``): items, mean rate, the fractions of prompts with 0/k and k/k correct,
    the mixed-outcome fraction (both outcomes seen) and the band share -- the fraction of the
    mixed prompts whose raw rate s/k lies in ``band`` (closed)."""
    if isinstance(x, np.ndarray) and x.ndim == 1:
        x = x[:, None]
    c, k = as_counts(x, k)
    if c.shape[1] != 1:
        raise ValueError(f"selection_stats takes one policy (the base model), got {c.shape[1]} policies")
    lo, hi = _check_band(band, "band")
    s = c[:, 0]
    rate = s / k
    mixed = (s > 0) & (s < k)
    in_band = mixed & (rate >= lo - 1e-12) & (rate <= hi + 1e-12)
    return {"items": int(s.size), "mean_rate": float(rate.mean()), "zero_correct": float(np.mean(s == 0)),
            "all_correct": float(np.mean(s == k)), "mixed": float(mixed.mean()),
            "band_share": float(in_band.sum() / mixed.sum()) if mixed.any() else float("nan")}


def _check_band(band, name):
    try:
        lo, hi = (float(v) for v in band)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi) of thresholds, got {band!r}") from None
    if not (0 <= lo < hi <= 1):
        raise ValueError(f"{name} must satisfy 0 <= lo < hi <= 1, got {band!r}")
    return lo, hi


def dataset_rule(mixed: Mapping[str, float], *, min_mixed: float = 0.5) -> list[str]:
    """Stage one of App. F.1: the candidates whose mixed-outcome fraction is at least ``min_mixed``
    (the paper: at least half of the validation prompts with between 1 and k - 1 successes)."""
    if not isinstance(mixed, Mapping) or not mixed:
        raise ValueError("mixed must be a non-empty mapping candidate -> mixed-outcome fraction")
    min_mixed = check_prob(min_mixed, "min_mixed")
    return [name for name, v in mixed.items() if check_prob(float(v), f"mixed[{name!r}]") >= min_mixed - 1e-12]


def band_rule(shares: Mapping[tuple, float], *, default=(0.05, 0.30), margin: float = 0.05) -> tuple[float, float]:
    """Stage two of App. F.1: keep ``default`` unless a prespecified band holds at least
    ``margin`` (five percentage points) more of the mixed-outcome prompts than it; then take the
    band with the largest share. ``shares``: band (lo, hi) -> share, ``default`` among them."""
    if not isinstance(shares, Mapping) or not shares:
        raise ValueError("shares must be a non-empty mapping (lo, hi) -> mixed-outcome share")
    clean = {_check_band(b, "shares key"): check_prob(float(v), "shares value") for b, v in shares.items()}
    d = _check_band(default, "default")
    if d not in clean:
        raise ValueError(f"default band {default!r} must be one of the bands in shares")
    margin = check_prob(margin, "margin")
    best = max(clean, key=lambda b: (clean[b], b == d))
    return best if clean[best] >= clean[d] + margin - 1e-12 else d



def _half_unit(digits: int) -> float:
    return 0.5 * 10.0 ** -int(digits) + 1e-9


def proposition2_counts(rows: pd.DataFrame, *, gain_digits: int = 3, error_digits: int = 3,
                        ratio_digits: int = 3) -> pd.DataFrame:
    """Published routing rows read back as whole prompts through Proposition 2.

    On a split of ``n`` prompts the oracle gap is L = C_orac - C_best, the disagreement share D,
    and a router with disagreement error e_D gains C_r - C_best = L - D e_D (Proposition 2). In
    counts: the gain count g = L_n - E, with L_n = n L, D_n = n D and E the router's wrong
    selections on the D_n disagreement prompts. Each row of ``rows`` (columns ``n``, ``L``,
    ``gain``, ``e_D``, and ``D`` or ``L_over_D``) is checked this way: n L and n gain must be
    whole to the figures' rounding, E = L_n - g must satisfy E / D_n = e_D to ``error_digits``
    decimals, and L_n / D_n = L/D to ``ratio_digits`` (where given). Where ``D`` is missing (a
    split whose D is unpublished), every D_n with L_n / D_n = L/D to the rounding is tried and
    the smallest that passes is kept. Returns ``rows`` with the counts, the implied e_D and
    ``ok`` per row.
    """
    _need(rows, ["n", "L", "gain", "e_D"], "rows")
    if "D" not in rows and "L_over_D" not in rows:
        raise ValueError("rows needs a D or an L_over_D column")
    for name, d in (("gain_digits", gain_digits), ("error_digits", error_digits), ("ratio_digits", ratio_digits)):
        check_int(d, name, minimum=0, maximum=6)
    out = []
    for r in rows.to_dict("records"):
        n = check_int(int(r["n"]), "n", minimum=1)
        L, gain, e = float(r["L"]), float(r["gain"]), float(r["e_D"])
        Ln, gn = round(L * n), round(gain * n)
        whole = abs(L * n - Ln) <= n * _half_unit(3) and abs(gain * n - gn) <= n * _half_unit(gain_digits)
        ratio = float(r["L_over_D"]) if "L_over_D" in r and pd.notna(r.get("L_over_D")) else float("nan")
        Dval = float(r["D"]) if "D" in r and pd.notna(r.get("D")) else float("nan")
        if np.isfinite(Dval):
            cands = [round(Dval * n)]
        else:
            cands = [c for c in range(max(Ln, 1), n + 1) if abs(Ln / c - ratio) <= _half_unit(ratio_digits)]
        best = None
        for Dn in cands:
            E = Ln - gn
            ok_e = 0 <= E <= Dn and abs(E / Dn - e) <= _half_unit(error_digits)
            ok_r = not np.isfinite(ratio) or abs(Ln / Dn - ratio) <= _half_unit(ratio_digits)
            ok_d = not np.isfinite(Dval) or abs(Dn / n - Dval) <= _half_unit(3)
            if ok_e and ok_r and ok_d:
                best = (Dn, E)
                break
        Dn, E = best if best else (cands[0] if cands else 0, Ln - gn)
        out.append({**r, "L_count": Ln, "D_count": Dn, "gain_count": gn, "errors": E,
                    "e_D_implied": E / Dn if Dn else float("nan"), "ok": bool(whole and best is not None)})
    return pd.DataFrame(out)
