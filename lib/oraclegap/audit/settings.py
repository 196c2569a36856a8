"""Settings of an audit and the small rules every section shares: thresholds, level, seeds, the
Monte Carlo sizes (:func:`audit_settings`), the planners' design grids (:func:`plan_grid`), how a
Monte Carlo power estimate reads against its target (:func:`power_state`), which pools can be
audited (:func:`check_auditable`), and the conversion of numbers to JSON values."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

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
#: Large-n null draws per excess-bootstrap resample (full / small).
LARGE_N_EXCESS_DRAWS = (20, 10)


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

    @property
    def power_draws(self) -> int:
        """Null draws of each power and planner trial."""
        return self.plan_draws if self.trial_draws is None else self.trial_draws

    def chain_steps(self, n: int, M: int) -> dict:
        """``burn_in`` and ``thin`` (proposals) of the audit's margin chain on an n x M pool; empty
        (the library's defaults) in the standard design."""
        out = {}
        if self.margin_burn_sweeps is not None:
            out["burn_in"] = max(1, int(round(self.margin_burn_sweeps * n * M)))
        if self.margin_thin_sweeps is not None:
            out["thin"] = max(1, int(round(self.margin_thin_sweeps * n * M)))
        return out

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
    sizes = {name: v[j] for name, v in _SIZES.items()}
    s = AuditSettings(t, alpha, seed, bool(small), effect, pt, target_power, **sizes)
    large = design == "large-n" or (design == "auto" and n_prompts is not None and n_prompts > LARGE_N)
    return large_n_design(s) if large else s


def large_n_design(s: AuditSettings) -> AuditSettings:
    """``s`` with the large-n Monte Carlo design: each Monte Carlo size is set by the precision of
    the decision it feeds, not by n (at 1e5 prompts every null draw, resample or trial costs
    O(n), and the standard design spends about 660 CPU-seconds on a 1e5 x 10 x 16 pool with
    ``small``). What changes, and why it keeps the decisions:

    * **Power and planner trials** (``trial_draws``): each trial's decision is "p <= alpha", an
      exact level-alpha Monte Carlo test already at :func:`trial_draws` = 39 draws (100 or 200 in the
      standard design, 400 in the paper's trials, App. C); the power loss per trial is stated there.
      The number of trials (``n_reps``, ``plan_reps``) is unchanged: the power's Monte Carlo error
      is its Wilson interval, which :func:`power_state` reads, and that depends on the trials only.
    * **The power trials test the re-deal null only** (``power_nulls``): the verdict, the planners
      and :func:`power_state` read the re-deal power alone; the margin chain's power would cost
      60 + 2 N sweeps per trial. The paper's Table 2 (arXiv 2609.32996) finds the two nulls'
      power equal against the diffuse alternative at every sigma; ``power.current.power.margin``
      is absent (not zero) in this design.
    * **The planners stop at the first grid value whose power reaches the target** (``plan_stop``):
      ``required`` is the first such value, so it is the one the full grid gives; the curve lists
      the values up to it.
    * **The audit's margin chain** (``margin_burn_sweeps``, ``margin_thin_sweeps``): burn-in 30 n M
      proposals per chain (the paper's power-trial burn-in, App. C.1) and a table every n M / 2
      proposals. The draws' effective sample size is measured on the pool and reported with each
      test (``nulls.L.<tau>.margin.ess``); on 1e4 x 10 x 16 exchangeable pools half a sweep gives
      an ESS of 0.3-0.75 per draw (2 sweeps: about 1), i.e. more effective draws per proposal.
      The number of draws (``n_draws``) and so the p-values' resolution 1/n_draws is unchanged.
      The re-deal draws are independent and stay as in the standard design.
    * **The excess bootstrap** (``excess_draws``): each resample's null mean from
      :data:`LARGE_N_EXCESS_DRAWS` draws (20 full, 10 small) instead of 200 / 100. The Monte Carlo
      error of a resample's null mean adds var_0 / d to the resample's variance (var_0 the null
      variance of the statistic): it widens the percentile interval by at most sqrt(1 + 1/d)
      (5% at d = 10) when var_0 is no larger than the bootstrap variance, and never narrows it.
      The number of resamples (``n_excess``) is unchanged.

    Unchanged: the numbers of null draws, bootstrap resamples and permutations of every other
    section, the thresholds, seeds and tests. Each changed size is recorded in ``settings``."""
    excess = LARGE_N_EXCESS_DRAWS[1 if s.small else 0]
    return dataclasses.replace(s, design="large-n", power_nulls=("redeal",), trial_draws=trial_draws(s.alpha),
                               margin_burn_sweeps=float(LARGE_N_BURN_SWEEPS), margin_thin_sweeps=float(LARGE_N_THIN_SWEEPS),
                               plan_stop=True, excess_draws=min(s.excess_draws, excess))


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
