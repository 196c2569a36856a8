"""Simulation studies: the nulls run on generated pools with known truth, and the coverage of
paper 002's certificates simulated on finite outcome populations with known truth.

Paper 000 (arXiv 2609.32996, App. C) calibrates its tests by simulation: false-positive rates on
pools drawn under a null (:func:`null_world`), power against diffuse, specialist and planted
effects (:func:`power`), and a planner that finds the smallest design reaching a target power
(:func:`plan_power`). The generators live in :mod:`oraclegap.stats.simulate`; this module sits
above both ``simulate`` and ``nulls`` so that the generators never import a test.

Paper 002's intervals (:mod:`oraclegap.stats.certify`) are checked on a finite law for the
outcomes and a signal (:class:`OutcomePopulation`, e.g. latent classes of independent models:
:func:`mixture_population`), whose gap, signal accuracy and rule accuracies are exact: simulated
coverage of the gap intervals (:func:`gap_coverage`), exact coverage over every possible sample
(:func:`exact_gap_coverage`), and simulated coverage of the family (Thm 6,
:func:`family_coverage`) and finite-signal (Thm 7, :func:`signal_coverage`) certificates, and the
family certificate's power to certify a rule's gain on prompts with known success probabilities
(:func:`family_power`).
"""
from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import math
from collections.abc import Callable, Sequence

import numba as _numba
import numpy as np
import pandas as pd

from .._result import Result
from .._validate import as_rng, check_alpha, check_int, check_prob, check_taus
from ..pool import Pool
from . import nulls as _nulls
from .certify.binomial import clopper_pearson
from .certify.family import _family_bounds
from .certify.gap import GAP_METHODS, _check_method, _gap_bounds, _naive_bounds
from .certify.signal import _signal_bounds
from .coverage import as_counts
from .nulls.tables import _PresetKeys
from .simulate import Simulated, effect_generator, population_L

__all__ = ["Study", "study", "null_world", "PowerResult", "power", "PowerPlan", "plan_power", "sweep",
           "rate_interval", "compare_rates", "OutcomePopulation", "mixture_population", "gap_coverage",
           "exact_gap_coverage", "family_coverage", "family_power", "signal_coverage"]


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Study(Result):
    """Per-replicate results of the nulls on generated pools.

    ``frame()``: one row per (replicate, tau, null) with ``p``, ``reject`` (p <= alpha),
    ``observed``, ``null_mean``, ``excess`` and, when the generator knows the truth,
    ``population_L``. ``summary()``: rejection rate with a Wilson 95% interval and means.
    """

    rows: pd.DataFrame
    alpha: float
    label: str = ""

    def frame(self) -> pd.DataFrame:
        return self.rows.copy()

    def summary(self) -> pd.DataFrame:
        from statsmodels.stats.proportion import proportion_confint

        g = self.rows.groupby(["tau", "null"], sort=True)
        out = g.agg(reps=("reject", "size"), rejections=("reject", "sum"), observed=("observed", "mean"),
                    null_mean=("null_mean", "mean"), excess=("excess", "mean"), population_L=("population_L", "mean"))
        out["reject_rate"] = out["rejections"] / out["reps"]
        lo, hi = proportion_confint(out["rejections"], out["reps"], alpha=0.05, method="wilson")
        out["ci_lo"] = np.asarray(lo)
        out["ci_hi"] = np.asarray(hi)
        out.insert(0, "label", self.label)
        return out.reset_index()

    def wide(self) -> pd.DataFrame:
        """One row per threshold: mean observed statistic, mean population L, and per null the
        rejection rate (``power_<null>``) and mean excess (``excess_<null>``)."""
        s = self.summary()
        base = s.groupby("tau").agg(observed=("observed", "first"), population_L=("population_L", "first"))
        rej = s.pivot(index="tau", columns="null", values="reject_rate").add_prefix("power_")
        exc = s.pivot(index="tau", columns="null", values="excess").add_prefix("excess_")
        return pd.concat([base, rej, exc], axis=1).reset_index()


def _as_sim(obj) -> Simulated:
    if isinstance(obj, Simulated):
        return obj
    if isinstance(obj, Pool):
        return Simulated(obj, None, {})
    raise TypeError(f"the generator must return a Simulated or a Pool, got {type(obj).__name__}")




def study(
    generator: Callable[[np.random.Generator], Simulated | Pool],
    n_reps: int,
    *,
    taus=(0.10,),
    statistic: str = "L",
    nulls=("redeal", "margin"),
    n_draws: int = 400,
    alpha: float = 0.05,
    seed=0,
    burn_in: int | None = None,
    thin: int | None = None,
    n_chains: int = 1,
    progress: bool = True,
    label: str = "",
) -> Study:
    """Run the null tests on ``n_reps`` pools from ``generator(rng)`` (false-positive rates when
    the generator is a null world, power otherwise). ``burn_in``/``thin``: proposals per chain
    (default 60 n M / 2 n M; the paper's power trials used 30 n M / n M)."""
    if not callable(generator):
        raise TypeError("generator must be a callable taking a numpy Generator")
    n_reps = check_int(n_reps, "n_reps", minimum=1)
    alpha = check_alpha(alpha)
    taus = check_taus(taus)
    rng = as_rng(seed)
    rows = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=n_reps, desc=label or "study", leave=False)

    def test(sim, keys):
        return _nulls.null_tests(sim.pool, taus, nulls=nulls, statistics=(statistic,), n_draws=n_draws, seed=keys,
                                 burn_in=burn_in, thin=thin, n_chains=n_chains)

    def finish(rep, sim, fut):
        res = fut.result()
        popL = population_L(sim.p, taus) if (sim.p is not None and statistic == "L") else np.full(taus.size, np.nan)
        for t in res.tests:
            j = 0 if math.isnan(t.tau) else int(np.argmin(np.abs(taus - t.tau)))
            rows.append({"rep": rep, "tau": t.tau, "null": t.null, "observed": t.observed, "null_mean": t.mean,
                         "excess": t.excess, "p": t.p, "reject": bool(t.p <= alpha), "population_L": popL[j]})
        if bar is not None:
            bar.update(1)

    # The replicates' tests run on worker threads (the compiled kernels release the GIL) while this
    # thread generates the next pools: every pool and both of its stream keys are drawn here, in the
    # order of the sequential loop (pool r, then the keys of its test), so the draws are the same
    # for any number of workers (numba's thread count). At most workers + 1 pools are held at once.
    workers = max(1, min(n_reps, _numba.get_num_threads()))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        pending: collections.deque = collections.deque()
        for rep in range(n_reps):
            sim = _as_sim(generator(rng))
            keys = _PresetKeys.draw(rng)
            pending.append((rep, sim, ex.submit(test, sim, keys)))
            while len(pending) > workers:
                finish(*pending.popleft())
        while pending:
            finish(*pending.popleft())
    if bar is not None:
        bar.close()
    return Study(pd.DataFrame(rows), alpha, label)


def null_world(x, null: str = "redeal", n_pools: int = 200, *, k: int | None = None, seed=0,
               burn_in: int | None = None, thin: int | None = None):
    """A generator for :func:`study` that returns pools drawn under a null from an observed pool
    (App. C.2): ``"redeal"`` deals each prompt's successes back at random, ``"margin"`` takes
    successive tables of the margin-preserving chain. The ``n_pools`` tables are drawn up front
    from ``seed``; calling the generator more often than that raises ``ValueError``."""
    if null not in ("redeal", "margin"):
        raise ValueError(f"null must be 'redeal' or 'margin', got {null!r}")
    n_pools = check_int(n_pools, "n_pools", minimum=1)
    c, k = as_counts(x, k)
    if null == "redeal":
        tables = _nulls.redeal(c, n_pools, k=k, seed=seed)
    else:
        tables = _nulls.margin_chain(c, n_pools, k=k, seed=seed, burn_in=burn_in, thin=thin).tables
    state = {"i": 0}

    def gen(rng):
        if state["i"] >= n_pools:
            raise ValueError(f"null_world holds {n_pools} pools; all have been used")
        t = tables[state["i"]]
        state["i"] += 1
        return Simulated(Pool.from_counts(t, k, seed=rng), None, {"generator": f"null_world:{null}"})

    return gen


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PowerResult(Result):
    """Rejection rate of the nulls for one effect at one pool shape (with Wilson 95% intervals)."""

    effect: str
    params: dict
    n: int
    M: int
    k: int
    tau: float
    alpha: float
    study: Study

    def frame(self) -> pd.DataFrame:
        s = self.study.summary()
        s.insert(1, "effect", self.effect)
        for key, val in self.params.items():
            s[key] = val
        s["n"], s["M"], s["k"] = self.n, self.M, self.k
        return s

    def power(self, null: str = "redeal") -> float:
        s = self.study.summary()
        row = s[s["null"] == null]
        if row.empty:
            raise KeyError(f"no {null!r} null in this result")
        return float(row["reject_rate"].iloc[0])


def power(
    effect: str = "diffuse",
    *,
    n: int = 240,
    M: int = 5,
    k: int = 16,
    tau: float = 0.10,
    alpha: float = 0.05,
    n_reps: int = 100,
    n_draws: int = 400,
    nulls=("redeal",),
    seed=0,
    base=None,
    progress: bool = False,
    **params,
) -> PowerResult:
    """Power of the null tests of L(tau) at level ``alpha`` against ``effect`` at shape (n, M, k),
    estimated from ``n_reps`` simulated pools (see :func:`effect_generator` for parameters)."""
    gen = effect_generator(effect, n=n, M=M, k=k, base=base, **dict(params))
    st = study(gen, n_reps, taus=(tau,), nulls=nulls, n_draws=n_draws, alpha=alpha, seed=seed, progress=progress,
               label=f"{effect} n={n} k={k}")
    return PowerResult(effect, dict(params), n, M, k, float(tau), alpha, st)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PowerPlan(Result):
    """Power over a grid of k (or n) and the smallest grid value reaching the target."""

    effect: str
    vary: str
    target: float
    curve: pd.DataFrame
    required: dict  # null -> smallest grid value with estimated power >= target (None if none)

    def frame(self) -> pd.DataFrame:
        return self.curve.copy()


def plan_power(
    effect: str = "diffuse",
    *,
    target: float = 0.8,
    vary: str = "k",
    grid=(8, 16, 32, 64, 128),
    n: int = 240,
    M: int = 5,
    k: int = 16,
    tau: float = 0.10,
    alpha: float = 0.05,
    n_reps: int = 100,
    n_draws: int = 400,
    nulls=("redeal",),
    seed=0,
    base=None,
    progress: bool = True,
    **params,
) -> PowerPlan:
    """For a pool shape and an effect: the power at each value of ``vary`` ("k" responses per
    cell or "n" prompts) in ``grid``, and the smallest grid value whose estimated power reaches
    ``target`` (Monte Carlo estimates: read the intervals in ``curve``)."""
    if vary not in ("k", "n"):
        raise ValueError(f"vary must be 'k' or 'n', got {vary!r}")
    target = check_prob(target, "target", open_low=True, open_high=True)
    values = [check_int(v, "grid", minimum=1) for v in grid]
    if not values or sorted(values) != values or len(set(values)) != len(values):
        raise ValueError(f"grid must be a non-empty increasing sequence of integers, got {grid!r}")
    rng = as_rng(seed)
    frames = []
    it = values
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(values, desc=f"power over {vary}", leave=False)
    for v in it:
        shape = {"n": n, "k": k, vary: v}
        res = power(effect, n=shape["n"], M=M, k=shape["k"], tau=tau, alpha=alpha, n_reps=n_reps, n_draws=n_draws,
                    nulls=nulls, seed=rng, base=base, **dict(params))
        frames.append(res.frame())
    curve = pd.concat(frames, ignore_index=True)
    required = {}
    for null in pd.unique(curve["null"]):
        sub = curve[curve["null"] == null].sort_values(vary)
        ok = sub[sub["reject_rate"] >= target]
        required[null] = None if ok.empty else int(ok[vary].iloc[0])
    return PowerPlan(effect, vary, target, curve, required)


# ---------------------------------------------------------------------------- settings grids
def rate_interval(successes, n, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (statsmodels) for a Monte Carlo rate successes/n, vectorised."""
    from statsmodels.stats.proportion import proportion_confint

    x = np.asarray(successes)
    m = np.asarray(n)
    if np.any(m < 1) or np.any(x < 0) or np.any(x > m):
        raise ValueError("rate_interval needs 0 <= successes <= n and n >= 1")
    lo, hi = proportion_confint(x, m, alpha=check_alpha(alpha), method="wilson")
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def sweep(settings, make_generator: Callable[..., Callable], n_reps: int, *, seed=0, **study_kwargs) -> pd.DataFrame:
    """Run :func:`study` once per setting and stack the summaries into one tidy frame.

    ``settings``: a sequence of dicts (e.g. ``[{"k": 16, "sigma": 0.5}, ...]``);
    ``make_generator(**setting)`` returns the generator for that setting. Each row of the result
    is (setting, tau, null) with the setting's keys as columns, then ``reps``, ``rejections``,
    ``reject_rate`` with its Wilson 95% interval ``ci_lo``/``ci_hi``, and the means of the
    observed statistic, the null mean, the excess and (when the generator knows the truth) the
    population L, with Monte Carlo standard errors ``observed_se`` and ``excess_se`` (NaN for a
    single replicate). One Generator built from ``seed`` feeds every setting in order, so the grid
    is reproducible from one seed.
    """
    settings = [dict(s) for s in settings]
    if not settings:
        raise ValueError("settings is empty; give at least one setting (a dict of parameters)")
    if not callable(make_generator):
        raise TypeError("make_generator must be a callable returning a generator for one setting")
    keys = list(settings[0])
    if any(list(s) != keys for s in settings):
        raise ValueError(f"every setting must have the same keys in the same order, e.g. {keys}")
    rng = as_rng(seed)
    study_kwargs.setdefault("progress", False)
    frames = []
    for s in settings:
        st = study(make_generator(**s), n_reps, seed=rng, **study_kwargs)
        summ = st.summary().drop(columns="label")
        spread = st.rows.groupby(["tau", "null"], sort=True)[["observed", "excess"]].std(ddof=1).reset_index()
        summ = summ.merge(spread.rename(columns={"observed": "observed_sd", "excess": "excess_sd"}), on=["tau", "null"])
        summ["observed_se"] = summ.pop("observed_sd") / np.sqrt(summ["reps"])
        summ["excess_se"] = summ.pop("excess_sd") / np.sqrt(summ["reps"])
        for j, key in enumerate(keys):
            summ.insert(j, key, [s[key]] * len(summ))
        frames.append(summ)
    return pd.concat(frames, ignore_index=True)


def compare_rates(x1: int, n1: int, x2: int, n2: int, alpha: float = 0.05) -> dict:
    """Two Monte Carlo estimates of one rate: Fisher's exact test of equality (two-sided p) and
    the pooled rate (x1 + x2) / (n1 + n2) with its Wilson interval. Use it when two studies
    estimate the same setting, to say whether they agree and what they give together."""
    from scipy.stats import fisher_exact

    for name, v in (("x1", x1), ("n1", n1), ("x2", x2), ("n2", n2)):
        check_int(v, name, minimum=0)
    if not (n1 >= 1 and n2 >= 1 and x1 <= n1 and x2 <= n2):
        raise ValueError(f"need 0 <= x <= n and n >= 1 for both estimates, got {x1}/{n1} and {x2}/{n2}")
    p = float(fisher_exact([[x1, n1 - x1], [x2, n2 - x2]])[1])
    lo, hi = rate_interval(x1 + x2, n1 + n2, alpha)
    return {"rate1": x1 / n1, "rate2": x2 / n2, "p_equal": p, "pooled": (x1 + x2) / (n1 + n2),
            "pooled_lo": float(lo), "pooled_hi": float(hi), "n": n1 + n2}


# ============================================================================ certificate coverage
@dataclasses.dataclass(frozen=True)
class OutcomePopulation:
    """A finite law for (Z, R_1..R_K): ``probs[z, pattern]`` = P(Z = z, R = pattern).

    Patterns index the 2^K outcome vectors (bit m of the index is R_m). Every population value
    of this module is exact: p_m, q, G, theta_zm, q_Z, G_Z and the accuracy of any Z-measurable
    rule. Sampling n i.i.d. items is a multinomial draw over the J * 2^K cells, so coverage
    checks need only counts and run fast.
    """

    probs: np.ndarray
    K: int

    def __post_init__(self):
        P = np.asarray(self.probs, dtype=float)
        if P.ndim == 1:
            P = P[None]
        K = check_int(self.K, "K", minimum=1, maximum=16)
        if P.ndim != 2 or P.shape[1] != 2**K:
            raise ValueError(f"probs must have shape [J, 2^K={2**K}], got {P.shape}")
        if (P < -1e-12).any() or not np.isclose(P.sum(), 1.0):
            raise ValueError("probs must be non-negative and sum to 1")
        P = np.clip(P, 0, None)
        P = P / P.sum()
        P.setflags(write=False)
        object.__setattr__(self, "probs", P)

    @property
    def J(self) -> int:
        return self.probs.shape[0]

    @property
    def patterns(self) -> np.ndarray:
        idx = np.arange(2**self.K)
        return ((idx[:, None] >> np.arange(self.K)[None, :]) & 1).astype(bool)

    @property
    def theta(self) -> np.ndarray:
        """theta[z, m] = P(Z = z, R_m = 1)."""
        return self.probs @ self.patterns.astype(float)

    @property
    def p(self) -> np.ndarray:
        return self.theta.sum(axis=0)

    @property
    def q(self) -> float:
        return float(self.probs[:, 1:].sum())

    @property
    def gap(self) -> float:
        return self.q - float(self.p.max())

    @property
    def q_signal(self) -> float:
        return float(self.theta.max(axis=1).sum())

    @property
    def signal_gap(self) -> float:
        return self.q_signal - float(self.p.max())

    def rule_accuracy(self, rule) -> float:
        """Population accuracy of the Z-measurable rule z -> rule[z]."""
        r = np.asarray(rule)
        if r.shape != (self.J,):
            raise ValueError(f"rule must map each of the J={self.J} levels to a model")
        return float(self.theta[np.arange(self.J), r].sum())

    def sample_counts(self, n: int, reps: int, seed=0) -> dict:
        """``reps`` samples of n items as counts: cell [reps, J, K], models [reps, K], oracle [reps]."""
        n = check_int(n, "n", minimum=1)
        reps = check_int(reps, "reps", minimum=1)
        rng = as_rng(seed)
        draws = rng.multinomial(n, self.probs.ravel(), size=reps).reshape(reps, self.J, -1)
        cell = np.einsum("rjp,pk->rjk", draws, self.patterns.astype(np.int64))
        return {"cell": cell, "models": cell.sum(axis=1), "oracle": draws[:, :, 1:].sum(axis=(1, 2))}

    def sample_outcomes(self, n: int, seed=0) -> tuple[np.ndarray, np.ndarray]:
        """n i.i.d. items: outcomes bool[n, K] and signal levels int[n]."""
        n = check_int(n, "n", minimum=1)
        rng = as_rng(seed)
        flat = rng.choice(self.probs.size, size=n, p=self.probs.ravel())
        z, pat = np.divmod(flat, 2**self.K)
        return self.patterns[pat], z


def mixture_population(p, weights=None, signal=None) -> OutcomePopulation:
    """Latent classes c with weights w_c; in class c the K models are independent Bernoulli(p[c, m]).

    One class gives independent models; several classes with a shared difficulty give
    positively correlated models; ``signal`` (int[C]) maps each class to an observable level z,
    so the rule that sees Z can exploit class-specific strengths (J = max(signal) + 1).
    """
    P = np.atleast_2d(np.asarray(p, dtype=float))
    if P.ndim != 2 or P.shape[1] == 0:
        raise ValueError(f"p must be [K] or [C, K] with K >= 1, got shape {np.shape(p)}")
    if (P < 0).any() or (P > 1).any() or np.isnan(P).any():
        raise ValueError("p must hold probabilities in [0, 1]")
    C, K = P.shape
    w = np.full(C, 1.0 / C) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (C,) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be {C} non-negative numbers summing to 1")
    z = np.zeros(C, dtype=int) if signal is None else np.asarray(signal)
    if z.shape != (C,) or not np.issubdtype(z.dtype, np.integer) or z.min() < 0:
        raise ValueError(f"signal must map each of the {C} classes to a level 0, 1, ...")
    J = int(z.max()) + 1
    pats = ((np.arange(2**K)[:, None] >> np.arange(K)[None, :]) & 1).astype(float)
    like = np.prod(np.where(pats[None] == 1, P[:, None, :], 1 - P[:, None, :]), axis=2)  # [C, 2^K]
    probs = np.zeros((J, 2**K))
    np.add.at(probs, z, w[:, None] * like)
    return OutcomePopulation(probs, K)


def _coverage_row(name, lo, hi, truth, est) -> dict:
    cov = (lo <= truth + 1e-12) & (truth - 1e-12 <= hi)
    reps = lo.size
    return {
        "method": name,
        "coverage": float(cov.mean()),
        "mc_se": float(np.sqrt(max(cov.mean() * (1 - cov.mean()), 1e-12) / reps)),
        "mean_width": float((hi - lo).mean()),
        "mean_lo": float(lo.mean()),
        "lo_positive": float((lo > 0).mean()),
        "truth": truth,
        "mean_estimate": float(est.mean()),
        "reps": reps,
    }


def gap_coverage(
    population: OutcomePopulation,
    n: int,
    *,
    reps: int = 2000,
    alpha: float = 0.05,
    methods: Sequence[str] = ("naive", "naive-percentile", "exact", "paired", "hoeffding", "hoeffding-paired"),
    seed=0,
) -> pd.DataFrame:
    """Simulated coverage of G = q - p* by each interval, ``reps`` samples of ``n`` items.

    Columns: method, coverage, mc_se (binomial Monte Carlo s.e.), mean_width, mean_lo,
    lo_positive (share of samples with a positive lower limit), truth, mean_estimate (the
    plug-in G^'s mean; mean_estimate <= truth is Prop 3), reps, n.
    """
    if not isinstance(population, OutcomePopulation):
        raise TypeError("population must be an OutcomePopulation (see mixture_population)")
    alpha = check_alpha(alpha)
    s = population.sample_counts(n, reps, seed)
    truth = population.gap
    rows = []
    for m in methods:
        if m == "naive":
            lo, hi = _naive_bounds(s["models"], s["oracle"], n, alpha, "cp")
            est = (s["oracle"] - s["models"].max(axis=1)) / n
        elif m == "naive-percentile":
            lo, hi = _naive_bounds(s["models"], s["oracle"], n, alpha, "percentile")
            est = (s["oracle"] - s["models"].max(axis=1)) / n
        else:
            est, lo, hi = _gap_bounds(s["models"], s["oracle"], n, alpha, _check_method(m))
        rows.append(_coverage_row(m, np.asarray(lo), np.asarray(hi), truth, np.asarray(est)))
    return pd.DataFrame(rows).assign(n=n, K=population.K, alpha=alpha)


def _compositions(n: int, parts: int) -> np.ndarray:
    """All vectors of ``parts`` non-negative integers summing to n (stars and bars), as int[M, parts]."""
    import itertools

    bars = np.array(list(itertools.combinations(range(n + parts - 1), parts - 1)), dtype=np.int64).reshape(-1, parts - 1)
    edges = np.concatenate([np.full((bars.shape[0], 1), -1), bars, np.full((bars.shape[0], 1), n + parts - 1)], axis=1)
    return np.diff(edges, axis=1) - 1


def exact_gap_coverage(
    population: OutcomePopulation, n: int, *, alpha: float = 0.05, methods: Sequence[str] = GAP_METHODS, max_samples: int = 2_000_000
) -> pd.DataFrame:
    """Exact coverage of G by each interval: every possible sample of n items, weighted by its multinomial probability.

    Feasible for small populations (J * 2^K cells) and n; raises when the number of distinct
    samples exceeds ``max_samples``. Also returns E[G^] exactly (Prop 3: E[G^] <= G).
    """
    from scipy.special import comb, gammaln

    if not isinstance(population, OutcomePopulation):
        raise TypeError("population must be an OutcomePopulation (see mixture_population)")
    alpha = check_alpha(alpha)
    n = check_int(n, "n", minimum=1)
    P = population.probs.ravel()
    size = comb(n + P.size - 1, P.size - 1, exact=True)
    if size > max_samples:
        raise ValueError(f"{size:,} distinct samples exceed max_samples={max_samples:,}; use gap_coverage (simulation)")
    comp = _compositions(n, P.size)
    with np.errstate(divide="ignore"):
        logP = np.log(P)
    terms = np.where(comp > 0, comp * logP[None, :], 0.0)
    w = np.exp(gammaln(n + 1) - gammaln(comp + 1).sum(axis=1) + terms.sum(axis=1))
    pats = np.tile(population.patterns.astype(np.int64), (population.J, 1))
    models = comp @ pats
    oracle = comp.reshape(-1, population.J, 2**population.K)[:, :, 1:].sum(axis=(1, 2))
    truth = population.gap
    rows = []
    for m in methods:
        if m in ("naive", "naive-percentile"):
            lo, hi = _naive_bounds(models, oracle, n, alpha, "cp" if m == "naive" else "percentile")
            est = (oracle - models.max(axis=1)) / n
        else:
            est, lo, hi = _gap_bounds(models, oracle, n, alpha, _check_method(m))
        cov = (np.asarray(lo) <= truth + 1e-12) & (truth - 1e-12 <= np.asarray(hi))
        rows.append(
            {
                "method": m,
                "coverage": float(w[cov].sum()),
                "mean_width": float((w * (np.asarray(hi) - np.asarray(lo))).sum()),
                "truth": truth,
                "mean_estimate": float((w * est).sum()),
                "samples": int(comp.shape[0]),
                "total_probability": float(w.sum()),
            }
        )
    return pd.DataFrame(rows).assign(n=n, K=population.K, alpha=alpha)


def family_coverage(population: OutcomePopulation, rules, n: int, *, reps: int = 2000, alpha: float = 0.05, seed=0) -> pd.DataFrame:
    """Simulated simultaneous coverage of Thm 6 for a family of Z-measurable rules plus the constants.

    ``rules``: int[L', J] (row l maps each level to a model). Rows: G_Pi, H_Pi and both
    (the theorem's simultaneous claim).
    """
    alpha = check_alpha(alpha)
    R = np.atleast_2d(np.asarray(rules))
    J, K = population.J, population.K
    if R.shape[1] != J or not np.issubdtype(R.dtype, np.integer) or R.min() < 0 or R.max() >= K:
        raise ValueError(f"rules must be int[L, J={J}] with entries in [0, K={K})")
    s = population.sample_counts(n, reps, seed)
    pol = s["cell"][:, np.arange(J)[None, :], R].sum(axis=2)  # [reps, L']
    S = np.concatenate([s["models"], pol], axis=1)
    g_lo, g_hi, h_lo, h_hi, _ = _family_bounds(s["oracle"], s["models"], S, n, alpha)
    acc = np.concatenate([population.p, [population.rule_accuracy(r) for r in R]])
    qpi = acc.max()
    G, H = qpi - population.p.max(), population.q - qpi
    g_est = (S.max(axis=1) - s["models"].max(axis=1)) / n
    h_est = (s["oracle"] - S.max(axis=1)) / n
    rows = [_coverage_row("G_Pi", g_lo, g_hi, G, g_est), _coverage_row("H_Pi", h_lo, h_hi, H, h_est)]
    both = ((g_lo <= G + 1e-12) & (G - 1e-12 <= g_hi) & (h_lo <= H + 1e-12) & (H - 1e-12 <= h_hi)).mean()
    rows.append({"method": "G_Pi and H_Pi", "coverage": float(both), "mc_se": float(np.sqrt(both * (1 - both) / reps)), "reps": reps})
    return pd.DataFrame(rows).assign(n=n, K=K, L=S.shape[1], alpha=alpha)


def family_power(p, rule, n: int, *, L: int, alpha: float = 0.05, reps: int = 2000,
                 seed=0) -> float:
    """Power of the family certificate (paper 002, Thm 6) to certify a rule's gain: the share of
    ``reps`` simulated test sets of ``n`` prompts on which the lower limit of G_Pi is positive.

    ``p`` float[N, K] holds each of K members' success probability on each of N prompts and
    ``rule`` int[N] the member a rule picks on each prompt. A test set is all N prompts in order
    when ``n == N``, else ``n`` prompts drawn from the N with replacement, with one Bernoulli(p)
    outcome per (prompt, member). Thm 6's budget for a family of ``L`` policies (the K constants,
    the rule and L - K - 1 others that are not simulated): Clopper-Pearson upper limits at
    alpha/(3K) for the K members, lower limits at alpha/(3L) for the constants and the rule;
    G_Pi is certified when the largest lower limit exceeds the largest upper limit. So the share
    is the power against a family whose best policy is the rule.
    """
    P = np.asarray(p, dtype=float)
    if P.ndim != 2 or 0 in P.shape or not np.all((P >= 0) & (P <= 1)):
        raise ValueError("p must be a non-empty [N, K] array of probabilities in [0, 1], got "
                         f"shape {P.shape}")
    N, K = P.shape
    r = np.asarray(rule)
    if r.shape != (N,) or not np.issubdtype(r.dtype, np.integer) or r.min() < 0 or r.max() >= K:
        raise ValueError(f"rule must be int[N={N}] with members in [0, K={K})")
    n = check_int(n, "n", minimum=1)
    L = check_int(L, "L", minimum=K + 1)
    alpha, reps = check_alpha(alpha), check_int(reps, "reps", minimum=1)
    rng = as_rng(seed)
    rows = np.arange(N) if n == N else rng.integers(0, N, n)
    p_n, r_n = P[rows], r[rows]
    X = rng.random((reps, *p_n.shape), dtype=np.float32) < p_n  # [rep, prompt, member]
    c, s_rule = X.sum(axis=1), X[:, np.arange(n), r_n].sum(axis=1)
    _, upper = clopper_pearson(c, n, alpha / (3 * K))
    lower, _ = clopper_pearson(np.column_stack([c, s_rule]), n, alpha / (3 * L))
    return float((lower.max(axis=1) > upper.max(axis=1)).mean())


def signal_coverage(population: OutcomePopulation, n: int, *, reps: int = 2000, alpha: float = 0.05, cell_share: float = 0.5, seed=0) -> pd.DataFrame:
    """Simulated coverage of the Thm 7 interval for q_Z and the M.2 interval for G_Z."""
    alpha = check_alpha(alpha)
    s = population.sample_counts(n, reps, seed)
    q_lo, q_hi, g_lo, g_hi, _ = _signal_bounds(s["cell"], s["models"], n, alpha, cell_share)
    q_est = s["cell"].max(axis=2).sum(axis=1) / n
    g_est = q_est - s["models"].max(axis=1) / n
    rows = [
        _coverage_row("q_Z", q_lo, q_hi, population.q_signal, q_est),
        _coverage_row("G_Z", g_lo, g_hi, population.signal_gap, g_est),
    ]
    return pd.DataFrame(rows).assign(n=n, K=population.K, J=population.J, alpha=alpha)
