"""Settings of an audit and the small rules every section shares: thresholds, level, seeds, the
Monte Carlo sizes (:func:`audit_settings`), the planners' design grids (:func:`plan_grid`), how a
Monte Carlo power estimate reads against its target (:func:`power_state`), which pools can be
audited (:func:`check_auditable`), and the conversion of numbers to JSON values."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._result import jsonable as _jsonable
from .._validate import check_alpha, check_int, check_prob, check_taus
from ..pool import check_pool
from ..stats.coverage import DEFAULT_TAUS

FORMAT_NAME = "oraclegap.audit"
FORMAT_VERSION = 1
#: The power planner and the headline read the threshold closest to this one (2609.32996's primary tau).
PRIMARY_TAU = 0.10
#: Seed of each section = ``seed + offset`` (recorded in ``audit.json`` under settings.seeds).
SEED_OFFSETS = {"nulls": 0, "excess": 1, "effect": 2, "power": 3, "plan_k": 4, "plan_n": 5,
                "decomposition": 6, "best_of_k": 7, "router": 8, "alignment": 9, "quality": 10, "split": 11}
#: Each one-sided limit of a Monte Carlo power that decides "adequate" or "low" (:func:`power_state`).
POWER_DECISION_ALPHA = 0.05
#: Noise share Delta / G whose lower limit makes "most of the gap single-draw luck".
LUCK_SHARE = 0.5
#: Fewest prompts for the quick held-out router (half calibration, half test).
ROUTER_MIN_PROMPTS = 20
#: The planners look at least this far: responses per prompt up to max(4 k, 64), prompts up to max(4 n, 1000).
PLAN_K_REACH, PLAN_N_REACH = 64, 1000
#: Prompts (a random subset, from the alignment seed) on which draw alignment is measured: the
#: coupling of seed-aligned draws moves matched agreement far outside the shuffle band, so a subset
#: detects it while the shuffle's cost stays bounded on large pools.
ALIGN_MAX_PROMPTS = 1000
#: Responses per prompt the planner tries for a k = 1 pool.
K1_PLAN = (4, 8, 16)
_SIZES = {  # full / small
    "n_draws": (2000, 400), "n_boot": (2000, 400), "n_reps": (40, 12), "plan_reps": (40, 12),
    "plan_draws": (200, 100), "n_excess": (300, 60), "excess_draws": (200, 100), "align_draws": (200, 100),
}

# ---------------------------------------------------------------------------- the large-n Monte Carlo design
#: Prompts above which ``design="auto"`` takes the large-n Monte Carlo design (:data:`MC_DESIGNS`).
#: Every pool of the book and of the verdict study has at most this many prompts, so their audits
#: keep the standard design and every number they publish.
LARGE_N = 5000
#: The Monte Carlo designs of an audit. ``standard``: the sizes of :data:`_SIZES` with the library's
#: chain defaults (burn-in 60 n M, thinning 2 n M proposals, arXiv 2609.32996 App. C.1's main tests)
#: and both nulls in the power trials. ``large-n``: the same numbers of draws, resamples and trials,
#: but each sized by the precision of the decision it feeds rather than by n (see
#: :func:`large_n_design`). ``auto``: ``large-n`` above :data:`LARGE_N` prompts.
MC_DESIGNS = ("auto", "standard", "large-n")
#: Large-n margin chain, in sweeps of n M proposals: burn-in per chain (the paper's power trials,
#: App. C.1) and spacing of the retained tables.
LARGE_N_BURN_SWEEPS, LARGE_N_THIN_SWEEPS = 30, 0.5
#: Large-n margin chains: one per core of the two-core machines the audit is sized for (each chain
#: pays its own burn-in).
LARGE_N_CHAINS = 2


def trial_draws(alpha: float) -> int:
    """Null draws of one power trial in the large-n design: 2 / alpha - 1 (39 at alpha = 0.05).

    A trial rejects when p = (1 + #{draws >= observed}) / (N + 1) <= alpha, i.e. when at most one of
    the N = 39 draws reaches the observed statistic: with the observed table exchangeable with the draws under
    the null that is an exact level-alpha Monte Carlo test (rank 1 or 2 of 40; Barnard 1963, Hope
    1968). Against an alternative whose infinite-draw p-value is pi the trial rejects with
    probability P[Bin(N, pi) <= 1], so a trial loses 1 - P[Bin(39, pi) <= 1] of power: 0.06 at
    pi = 0.01, below 0.001 at pi <= 0.001. The estimated power is therefore that of a slightly less
    powerful (never a more powerful) test than the audit's own, and the planners err towards larger
    designs."""
    return max(19, int(math.ceil(2.0 / check_alpha(alpha) - 1e-9)) - 1)


@dataclasses.dataclass(frozen=True)
class AuditSettings:
    """What the audit runs: thresholds, level, seed and the Monte Carlo sizes of each section."""

    taus: tuple
    alpha: float
    seed: int
    small: bool
    effect: float
    primary_tau: float
    target_power: float
    n_draws: int
    n_boot: int
    n_reps: int
    plan_reps: int
    plan_draws: int
    n_excess: int
    excess_draws: int
    align_draws: int = 200
    design: str = "standard"
    power_nulls: tuple = ("redeal", "margin")
    trial_draws: int | None = None  # null draws per power trial (None: plan_draws)
    margin_burn_sweeps: float | None = None  # None: the library's default (60 n M proposals)
    margin_thin_sweeps: float | None = None  # None: the library's default (2 n M proposals)
    plan_stop: bool = False  # the planners stop at the first grid value reaching the target
    margin_chains: int | None = None  # None: the library's default (4 chains)
    sequential: bool = False  # null and quality tests stop once their decisions are settled
    excess_method: str = "draws"  # each excess resample's null mean (nulls.excess_bootstrap)
    power_first_look: int | None = None  # trials after which a power estimate with no miss stops
    plan_if_adequate: bool = True  # run the planners when this design's power is adequate
    noise_stop: bool = False  # the noise bootstraps stop once the luck and best-of-K calls settle

    @property
    def power_draws(self) -> int:
        """Null draws of each power and planner trial."""
        return self.plan_draws if self.trial_draws is None else self.trial_draws

    def chain_steps(self, n: int, M: int) -> dict:
        """``burn_in``, ``thin`` (proposals) and ``n_chains`` of the audit's margin chain on an
        n x M pool; empty (the library's defaults) in the standard design."""
        out = {}
        if self.margin_burn_sweeps is not None:
            out["burn_in"] = max(1, int(round(self.margin_burn_sweeps * n * M)))
        if self.margin_thin_sweeps is not None:
            out["thin"] = max(1, int(round(self.margin_thin_sweeps * n * M)))
        if self.margin_chains is not None:
            out["n_chains"] = self.margin_chains
        return out

    def null_stop(self):
        """The sequential rule of the null tests (a
        :class:`~oraclegap.stats.nulls.sequential.SequentialStop`: Holm at level alpha over the
        distinct tests of L, as the verdict reads them), or None in the standard design. The
        member-quality test uses the same rule (a family of one)."""
        from ..stats.nulls.sequential import SequentialStop

        return SequentialStop(self.alpha, statistics=("L",)) if self.sequential else None

    def noise_stops(self) -> dict:
        """The sequential rules of the noise section: its two bootstraps
        (:class:`~oraclegap.stats.noise.stopping.LimitStop`), keyed ``decomposition`` (the luck
        call: the noise share's lower limit at or above :data:`LUCK_SHARE`) and ``best_of_k``
        (``passes``: the upper limit of split best-of-K minus the independence oracle at or
        above 0), and the assumption checks' within-cell permutations, keyed ``checks``
        (:class:`~oraclegap.stats.noise.stopping.PValueStop`: each check's pass or fail at its
        alpha); empty in the standard design (every bootstrap draws ``n_boot`` resamples and
        the checks every permutation)."""
        from ..stats.noise.stopping import LimitStop, PValueStop

        if not self.noise_stop:
            return {}
        return {"decomposition": LimitStop("noise_share", "lo", LUCK_SHARE),
                "best_of_k": LimitStop("difference", "hi", 0.0),
                "checks": PValueStop()}

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["taus"] = list(self.taus)
        d["power_nulls"] = list(self.power_nulls)
        d["seeds"] = section_seeds(self.seed)
        return d


def primary_tau(taus) -> float:
    """The threshold in ``taus`` closest to :data:`PRIMARY_TAU` = 0.10 (ties: the smaller)."""
    t = check_taus(taus)
    return float(sorted(t, key=lambda x: (round(abs(x - PRIMARY_TAU), 12), x))[0])


def audit_settings(taus=DEFAULT_TAUS, alpha: float = 0.05, seed: int = 0, *, small: bool = False,
                   effect: float = 0.05, power_tau=None, target_power: float = 0.8, design: str = "auto",
                   n_prompts: int | None = None) -> AuditSettings:
    """Validated settings. ``effect``: the population oracle gap L (at the primary threshold) that
    counts as useful, for the power planner; ``power_tau``: that threshold (default
    :func:`primary_tau`); ``small``: reduced Monte Carlo sizes (a quick look); ``design``: the
    Monte Carlo design (:data:`MC_DESIGNS`; ``auto`` takes ``large-n`` when ``n_prompts`` exceeds
    :data:`LARGE_N`, see :func:`large_n_design`)."""
    arr = check_taus(taus, "taus")
    if len(np.unique(arr)) != arr.size:
        raise ValueError(f"taus repeats a threshold: {arr.tolist()}; give each once")
    t = tuple(float(x) for x in np.sort(arr))
    alpha = check_alpha(alpha)
    if alpha >= 0.5:
        raise ValueError(f"alpha must be below 0.5, got {alpha}")
    seed = check_int(seed, "seed", minimum=0)
    effect = check_prob(effect, "effect", open_low=True, open_high=True)
    target_power = check_prob(target_power, "target_power", open_low=True, open_high=True)
    if power_tau is None:
        pt = primary_tau(t)
    else:
        pt = float(power_tau)
        if not any(abs(pt - x) < 1e-12 for x in t):
            raise ValueError(f"power_tau={power_tau!r} is not one of the audited thresholds {list(t)}")
    if design not in MC_DESIGNS:
        raise ValueError(f"design must be one of {MC_DESIGNS}, got {design!r}")
    if n_prompts is not None:
        n_prompts = check_int(n_prompts, "n_prompts", minimum=1)
    j = 1 if small else 0
    sizes: dict[str, Any] = {name: v[j] for name, v in _SIZES.items()}
    s = AuditSettings(t, alpha, seed, bool(small), effect, pt, target_power, **sizes)
    large = design == "large-n" or (design == "auto" and n_prompts is not None and n_prompts > LARGE_N)
    return large_n_design(s) if large else s


def large_n_design(s: AuditSettings) -> AuditSettings:
    """``s`` with the large-n Monte Carlo design: each Monte Carlo size is set by the decision it
    feeds, not by n (at 1e5 prompts every null draw, resample or trial costs O(n)). What changes,
    and why it keeps the decisions:

    * **Sequential null tests** (``sequential``): the re-deal and margin draws of the tests of L
      are taken in looks of 100 and stop once every test's p-value is decided against each level
      Holm compares it with (alpha / T', ..., alpha), by a Clopper-Pearson interval of its
      conditional p-value, or a moment bound for a statistic far above its draws, that holds at
      every look with probability 0.99 (:mod:`oraclegap.stats.nulls.sequential`); at most
      ``n_draws``, where a p-value near a level is the fixed-size test. The member-quality test
      stops the same way at level alpha. A p-value far from every level is reported from the
      draws taken (as few as 100: its Monte Carlo resolution, not its decision, changes).
    * **Power trials** (``trial_draws``): each trial's decision is "p <= alpha", an exact
      level-alpha Monte Carlo test already at :func:`trial_draws` = 39 draws (100 or 200 in the
      standard design, 400 in the paper's trials, App. C); the power loss per trial is stated there.
    * **Power estimates stop early when no trial misses** (``power_first_look``): the trials run
      in order from one Generator, and when the first :func:`power_first_look` all reject the
      estimate stops there; its Wilson limit then already shows the target reached, and the chance
      that an estimate whose power is exactly the target is called adequate stays at most
      :data:`POWER_DECISION_ALPHA` (the first look's chance plus the full run's). Otherwise the
      trials continue to ``n_reps``: the same trials the standard count gives.
    * **The power trials test the re-deal null only** (``power_nulls``): the verdict, the planners
      and :func:`power_state` read the re-deal power alone; the margin chain's power would cost
      60 + 2 N sweeps per trial. The paper's Table 2 (arXiv 2609.32996) finds the two nulls'
      power equal against the diffuse alternative at every sigma; ``power.current.power.margin``
      is absent (not zero) in this design.
    * **The planners run only when this design's power is not adequate** (``plan_if_adequate``):
      their sizes feed the next steps, which an adequate power does not give; they stop at the
      first grid value whose power reaches the target (``plan_stop``), the one the full grid names.
    * **The audit's margin chain** (``margin_burn_sweeps``, ``margin_thin_sweeps``,
      ``margin_chains``): two chains, burn-in 30 n M proposals each (the paper's power-trial
      burn-in, App. C.1) and a table every n M / 2 proposals. The draws' effective sample size is
      measured and reported with each test (``nulls.L.<tau>.margin.ess``) and scales the
      sequential rule's interval; on 1e4 x 10 x 16 exchangeable pools half a sweep gives an ESS of
      0.3-0.75 per draw.
    * **The noise bootstraps** (``noise_stop``): the decomposition's and best-of-K's prompt
      resamples are drawn in looks of 100 and stop once the decision each feeds is settled: the
      luck call (the noise share's lower limit >= :data:`LUCK_SHARE`) and best-of-K's ``passes``
      (the difference's upper limit >= 0). At each look the one-sided Clopper-Pearson limits of
      the resamples' share below the threshold, at risk 0.01 over the looks, must lie on the same
      side of the limit's quantile (alpha / 2 or 1 - alpha / 2) as the limit of the resamples
      taken (:mod:`oraclegap.stats.noise.stopping`); at most ``n_boot``, where a limit near its
      threshold is the fixed-size bootstrap. The other intervals of the section come from the
      resamples taken, the first of the full-size bootstrap's; their counts are recorded in
      ``noise`` (``decomposition.n_boot``, ``best_of_k.n_boot``) and in ``settings.noise_boot``.
      The assumption checks' within-cell permutations (199, or 99 with ``small``) are drawn in
      looks of 20 and stop once each check whose decision depends on its p-value (dispersion,
      coupling, known-p TV at alpha = 0.01) is settled: the Clopper-Pearson limits of its
      exceedance probability, at risk 0.01 over the looks, on the side of alpha its p-value is
      on; the two-sided coupling p settles only a pass early, by the smaller of its two one-sided
      exceedances (:class:`~oraclegap.stats.noise.stopping.PValueStop`). A clear pass stops at
      20 permutations; a failure, or a p-value near alpha, draws them all. The permutations
      drawn are recorded in ``noise.n_perm_drawn`` beside the requested ``noise.n_perm``.
    * **The excess bootstrap** (``excess_method="delta"``): each resample's null mean is the full
      data's (from ``excess_draws`` re-deals, as in the standard design) plus the exact change of
      its linear part and the normal-theory change of the best member's winner's curse
      (:func:`oraclegap.stats.nulls.excess_bootstrap`): no null draws per resample, where the
      standard design re-deals every resample ``excess_draws`` times. The point estimate is the
      standard design's.

    Unchanged: the numbers of bootstrap resamples and permutations of every other section, the
    thresholds, seeds and tests. Each changed setting is recorded in ``settings``."""
    return dataclasses.replace(s, design="large-n", power_nulls=("redeal",), trial_draws=trial_draws(s.alpha),
                               margin_burn_sweeps=float(LARGE_N_BURN_SWEEPS), margin_thin_sweeps=float(LARGE_N_THIN_SWEEPS),
                               margin_chains=LARGE_N_CHAINS, plan_stop=True, sequential=True,
                               excess_method="delta",
                               power_first_look=power_first_look(s.n_reps, s.target_power),
                               plan_if_adequate=False, noise_stop=True)


def power_first_look(n_reps: int, target: float, alpha: float = POWER_DECISION_ALPHA) -> int | None:
    """The fewest trials m < ``n_reps`` such that stopping after m trials that all reject, else
    running all ``n_reps``, calls a power of exactly ``target`` adequate (:func:`power_state`) with
    probability at most ``alpha``: target^m + P(not all of the first m reject, and the full run's
    one-sided Wilson limit reaches the target) <= alpha. None when no m qualifies (few trials).
    40 trials at target 0.8 give m = 16 (0.049; the full run alone: 0.029)."""
    from scipy.stats import binom

    from ..stats.studies import rate_interval

    n_reps = check_int(n_reps, "n_reps", minimum=1)
    target = check_prob(target, "target", open_low=True, open_high=True)
    r = np.arange(n_reps + 1)
    lo, _ = rate_interval(r, np.full(r.size, n_reps), 2 * alpha)
    ok = r[np.asarray(lo) >= target]
    r_star = int(ok[0]) if ok.size else n_reps + 1
    for m in range(1, n_reps):
        j = np.arange(m)
        late = float((binom.pmf(j, m, target) * binom.sf(r_star - j - 1, n_reps - m, target)).sum())
        if target**m + late <= alpha:
            return m
    return None


def plan_grid(current: int, reach: int) -> tuple:
    """The design sizes the planner tries: ``current`` doubled (2c, 4c, 8c, ...) up to
    max(4 c, ``reach``). A pool with few responses or prompts is thus planned far enough ahead
    to name a size that reaches the target power, not only twice and four times its own."""
    c = check_int(current, "current", minimum=1)
    top = max(4 * c, check_int(reach, "reach", minimum=1))
    out, v = [], 2 * c
    while v <= top:
        out.append(v)
        v *= 2
    return tuple(out)


def power_state(rate: float, lo: float, hi: float, target: float) -> str:
    """How a Monte Carlo power estimate compares with ``target``, read from its one-sided limits
    at level 1 - :data:`POWER_DECISION_ALPHA` (the Wilson interval at level 1 - 2 x that alpha):
    ``"adequate"`` when the lower limit ``lo`` >= target (the power is shown to reach the target),
    ``"low"`` when the upper limit ``hi`` < target (shown to fall short), else ``"uncertain"``.
    With one-sided limits every replicate count of the audit can decide: 12 of 12 successful
    replicates give a lower limit of 12 / (12 + 1.645^2) = 0.816, above a target of 0.8."""
    for name, v in (("rate", rate), ("lo", lo), ("hi", hi), ("target", target)):
        if v is None or not math.isfinite(float(v)):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if not lo - 1e-9 <= rate <= hi + 1e-9:  # Wilson limits carry rounding (1 - 1e-16 at rate 1)
        raise ValueError(f"rate {rate} must lie in its interval [{lo}, {hi}]")
    return "adequate" if lo >= target else "low" if hi < target else "uncertain"


def section_seeds(seed: int) -> dict:
    """The seed of every section: ``seed + SEED_OFFSETS[section]`` (plain integers, so each
    number of an audit can be recomputed with one direct library call)."""
    seed = check_int(seed, "seed", minimum=0)
    return {name: seed + off for name, off in SEED_OFFSETS.items()}


def check_auditable(pool) -> None:
    """Raise ``ValueError`` when ``pool`` cannot be audited: fewer than two policies or two
    prompts, or every verdict equal (all correct or all incorrect)."""
    check_pool(pool)
    n, M, k = pool.shape
    if M < 2:
        raise ValueError(f"the pool has {M} policy; the audit compares the members of a pool and needs at least 2 policies")
    if n < 2:
        raise ValueError(f"the pool has {n} prompt; the audit needs at least 2 prompts")
    v = pool.verdicts
    if v.all() or not v.any():
        word = "correct" if v.all() else "incorrect"
        raise ValueError(f"every verdict in the pool is {word} ({n} prompts x {M} policies x k={k}); there is no gap to audit")


# ============================================================================ JSON values
def _records(df: pd.DataFrame) -> list:
    return _jsonable(df.to_dict(orient="records"))


def _num(x):
    """A JSON number back to float (None -> NaN)."""
    return float("nan") if x is None else float(x)


def _current_power(numbers: Mapping) -> tuple[dict, str | None]:
    """The power of this design (``power.current``) and its state (:func:`power_state`); audits
    written before the state was recorded are read from the point estimate and its interval."""
    pw = numbers.get("power") or {}
    cur = pw.get("current") or {}
    if not cur:
        return cur, None
    state = cur.get("state")
    if state is None:
        rate = cur["power"].get("redeal")
        row = next((r for r in cur.get("rows", []) if r.get("null") == "redeal"), None)
        lo, hi = (row["ci_lo"], row["ci_hi"]) if row else (rate, rate)
        state = power_state(rate, lo, hi, numbers["settings"]["target_power"])
    return cur, state
