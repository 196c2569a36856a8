"""Paper 001's assumption checks: independent, identically distributed draws within a cell (runs,
dispersion) and independence across members (coupling, known-p TV), the winner's-curse radius,
and the magnitudes a failed check flags.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
from scipy.special import comb

from ..._result import Result, jsonable
from ..._validate import as_rng, check_alpha, check_int
from ...pool import Pool
from ._permutations import _draw_stats, _permuted_stats, _poisson_binomial
from .inputs import _form, _inputs, _o_exp_prompt, baseline_scores
from .stopping import PValueStop

# 001 reports a magnitude only behind two gates: the draws of a prompt-member cell behave as
# i.i.d. Bernoulli(p_im) (A1: the sampling formulas -- pass@K, binomial brackets, the
# winner's-curse radius -- need it), and, for the closed-form O_exp = 1 - prod_m (1 - p_im) and
# the best-of-K comparison against it, the members' draws on a prompt are independent (A2).
# Each check below returns a :class:`Check`; :func:`assumption_checks` gathers them and maps
# every failed check to the magnitudes that lean on it (``flags``), so a magnitude whose check
# fails is reported as such instead of silently.

#: The magnitudes that lean on each assumption (keys of :class:`Decomposition` and of the
#: other results of this module).
NEEDS = {
    "iid": (
        "o_repro",
        "delta",
        "g_rec",
        "noise_share",
        "delta_split",
        "noise_share_split",
        "best_of_k",
        "winners_curse",
    ),
    "independence": ("o_exp_independent", "best_of_k"),
}
#: Which assumption each check tests.
CHECK_TESTS = {
    "runs": "iid",
    "dispersion": "iid",
    "known_p_tv": "independence",
    "coupling": "independence",
}


@dataclasses.dataclass(frozen=True, repr=False)
class Check(Result):
    """One assumption check: its statistic, the reference it is judged against, and the verdict.

    ``passed`` is None when the check cannot be run on this pool (``note`` says why).
    ``value`` is the statistic; ``reference`` what it is compared with (a band, a null mean or a
    threshold, named in ``note``); ``p_value`` where the check is a test.
    """

    name: str
    assumption: str
    value: float
    reference: float
    p_value: float
    passed: bool | None
    n: int
    note: str

    def frame(self) -> pd.DataFrame:
        """One row: the fields."""
        return pd.DataFrame([dataclasses.asdict(self)])


def _arranged(x) -> bool:
    """True for a pool whose draw order was made up from counts (:meth:`Pool.from_counts`)."""
    return isinstance(x, Pool) and bool(x.meta.get("arranged_from_counts"))


_ARRANGED = (
    "the draw order was arranged at random from counts, so within-cell order carries no information"
)


def _runs_null(k: int, z: float) -> np.ndarray:
    """P(|Z_runs| > z) under exchangeability for n1 = 0..k ones among k draws (exact law of runs).

    With n1 ones and n0 = k - n1 zeros in random order the number of runs R has
    P(R = 2s) = 2 C(n1-1, s-1) C(n0-1, s-1) / C(k, n1) and
    P(R = 2s+1) = [C(n1-1, s) C(n0-1, s-1) + C(n1-1, s-1) C(n0-1, s)] / C(k, n1); Z is the usual
    normal score (R - mu) / sigma. Cells with n1 in {0, k} have one run and are never out of band.
    """
    n1 = np.arange(k + 1)[:, None].astype(float)
    n0 = k - n1
    r = np.arange(1, k + 1)[None, :].astype(float)
    s_even, s_odd = r / 2, (r - 1) / 2
    even = 2 * comb(n1 - 1, s_even - 1) * comb(n0 - 1, s_even - 1)
    odd = comb(n1 - 1, s_odd) * comb(n0 - 1, s_odd - 1) + comb(n1 - 1, s_odd - 1) * comb(
        n0 - 1, s_odd
    )
    prob = np.where(r % 2 == 0, even, odd) / comb(k, n1)
    mu = 1 + 2 * n1 * n0 / k
    var = 2 * n1 * n0 * (2 * n1 * n0 - k) / (k * k * max(k - 1, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        zz = np.where(var > 0, (r - mu) / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
    out = np.where(np.abs(zz) > z, prob, 0.0).sum(axis=1)
    out[[0, k]] = 0.0
    return out


def runs_check(x, *, level: float = 0.95, alpha: float = 0.01) -> Check:
    """Wald-Wolfowitz runs test in every prompt-member cell with 0 < c_im < k (001's i.i.d. gate).

    Per cell the runs of the k draws in draw order get the normal score (R - mu) / sigma; a cell
    is *in band* when |Z| <= z_{(1+level)/2}. ``value`` is the fraction of cells in band (001's
    ``frac_in_band``, on the same cells: its ``n_cells``). Because the runs law is discrete the
    in-band probability of an exchangeable cell is not exactly ``level``: ``reference`` is its
    exact mean over the cells (from the exact law of runs given c_im), and the test compares the
    count of out-of-band cells with that Poisson-binomial expectation (normal approximation,
    upper tail: too many out-of-band cells). ``passed``: p > ``alpha``. Untested (``passed``
    None) on a pool arranged from counts, whose draw order is random by construction. Cells are
    treated as independent, which they are under the hypothesis tested.
    """
    v, _, _, _ = _inputs(x, min_k=2)
    n, M, k = v.shape
    level = 1 - check_alpha(1 - float(level), "1 - level")
    alpha = check_alpha(alpha, "alpha")
    if _arranged(x):
        nan = float("nan")
        return Check("runs", "iid", nan, nan, nan, None, 0, f"not testable: {_ARRANGED}")
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    cells = v.reshape(n * M, k)
    c = cells.sum(axis=1)
    keep = (c > 0) & (c < k)
    N = int(keep.sum())
    if N == 0:
        return Check(
            "runs",
            "iid",
            float("nan"),
            float("nan"),
            float("nan"),
            None,
            0,
            "no cell has both successes and failures: the runs test has nothing to test",
        )
    x_ = cells[keep].astype(np.int8)
    runs = 1 + (np.diff(x_, axis=1) != 0).sum(axis=1)
    n1 = c[keep].astype(float)
    n0 = k - n1
    mu = 1 + 2 * n1 * n0 / k
    var = 2 * n1 * n0 * (2 * n1 * n0 - k) / (k * k * max(k - 1, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        zz = np.where(var > 0, (runs - mu) / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
    inb = np.abs(zz) <= z
    p_out = _runs_null(k, z)[c[keep]]
    out_obs, out_exp, sd = (
        float((~inb).sum()),
        float(p_out.sum()),
        float(np.sqrt((p_out * (1 - p_out)).sum())),
    )
    p = float(norm.sf((out_obs - out_exp - 0.5) / sd)) if sd > 0 else float(out_obs <= out_exp)
    return Check(
        "runs",
        "iid",
        float(inb.mean()),
        float(1 - p_out.mean()),
        p,
        bool(p > alpha),
        N,
        f"fraction of {N} cells with |Z_runs| <= {z:.2f}; reference: its exact expectation "
        "under i.i.d. draws",
    )


def permutation_checks(
    x,
    *,
    n_perm: int = 200,
    alpha: float = 0.01,
    max_tv: float = 0.06,
    seed=0,
    stop: PValueStop | None = None,
) -> tuple[Check, Check, Check]:
    """Three checks against one within-cell permutation null: dispersion, coupling and known-p TV.

    The null permutes the k draws of every prompt-member cell independently: it keeps every
    cell's count c_im and makes the draws of a cell exchangeable and the members of a prompt
    independent (given the counts) -- the joint hypothesis of A1 and A2. ``n_perm`` permutations
    give the null law of each statistic of :func:`_draw_stats`. A permutation puts each cell's
    c_im successes on a uniformly random subset of its k positions (what a uniformly random
    reordering does), drawn in a compiled kernel from a counter-based stream keyed by one
    integer from ``seed`` (:func:`_permuted_counts`): the same permutations on any number of
    threads, without storing them.

    * ``dispersion`` (A1): the dispersion index of the draw-position totals; upper-tail
      permutation p (draw positions that are better than others across prompts);
    * ``coupling`` (A2): the seed-aligned union rate mean_{i,j} max_m R_imj against its
      permutation law; two-sided p. Positive association between members at a shared seed lowers
      it, which is what makes the independence form an upper envelope (FKG);
    * ``known_p_tv`` (A2): 001's known-p total-variation gate: the TV between the law of the
      number of members right at a draw and the Poisson-binomial law of independent members with
      the observed rates; 001 passes it when TV <= ``max_tv`` (0.06). ``reference`` is its
      permutation-null mean (the TV that independent draws with these rates show at this n and
      k) and ``p_value`` its upper-tail permutation p; ``passed`` needs both TV <= ``max_tv``
      and p > ``alpha``.

    A check passes when its p-value exceeds ``alpha``; ``n_perm`` must be large enough for a
    permutation p-value to reach ``alpha`` (n_perm >= 1/alpha - 1), else a check could not fail.

    ``stop`` (a :class:`~oraclegap.stats.noise.stopping.PValueStop`) sizes the permutations by the
    checks' decisions: they are drawn in looks and stop once every check whose decision depends
    on its p-value is settled at Monte Carlo risk ``stop.risk``, at most ``n_perm``
    (:mod:`~oraclegap.stats.noise.stopping`; the coupling check's two-sided p settles only a
    pass early). The permutations taken are the first ``n_perm`` would give, and every check
    (p-values, references, notes: "from B") is the one ``n_perm`` = B would give. Without
    ``stop`` all ``n_perm`` are drawn.

    The coupling and TV checks need seed-aligned draws (draw j of every member shares a seed):
    on other pools they are returned with ``passed=None``, and only the Frechet bracket of O_exp
    holds without assumptions. On a pool arranged from counts (:meth:`Pool.from_counts`) the
    draw order is itself a random permutation, so the dispersion check is returned untested too.
    """
    return _permutation_checks(x, n_perm, alpha, max_tv, seed, stop)[0]


def _upper_count(null: np.ndarray, observed: float) -> int:
    """How many permuted statistics reach the observed one (within 1e-12)."""
    return int(np.sum(null >= observed - 1e-12))


def _two_sided_p(null: np.ndarray, observed: float) -> tuple[float, float]:
    """(p, mu): the two-sided p-value about the permutations' mean mu, (1 + #{|T* - mu| >=
    |t - mu|}) / (B + 1) (within 1e-12)."""
    mu = float(null.mean())
    two = float((1 + np.sum(np.abs(null - mu) >= abs(observed - mu) - 1e-12)) / (len(null) + 1))
    return two, mu


def _settled(null_stats, obs, held, stop: PValueStop, alpha: float, n_max: int) -> bool:
    """Whether every held check (indices into the statistics: 0 dispersion, 1 coupling, 2 TV) is
    settled by ``stop`` on the permutations taken."""
    B = len(null_stats)
    for j in held:
        t = null_stats[:, j]
        if j == 1:
            two, _ = _two_sided_p(t, obs[1])
            b_le, b_ge = int(np.sum(t <= obs[1] + 1e-12)), _upper_count(t, obs[1])
            if not stop.settled_two_sided(b_le, b_ge, two, B, alpha, n_max):
                return False
        elif not stop.settled(_upper_count(t, obs[j]), B, alpha, n_max):
            return False
    return True


def _permutation_checks(
    x, n_perm, alpha, max_tv, seed, stop
) -> tuple[tuple[Check, Check, Check], int]:
    """:func:`permutation_checks` and the number of permutations drawn."""
    v, alignment, _, _ = _inputs(x, min_k=2)
    n, M, k = v.shape
    n_perm = check_int(n_perm, "n_perm", minimum=1)
    alpha = check_alpha(alpha, "alpha")
    if 1 / (n_perm + 1) > alpha:
        raise ValueError(
            f"n_perm={n_perm} permutations cannot give a p-value <= alpha={alpha:g}; "
            f"use n_perm >= {math.ceil(1 / alpha) - 1}"
        )
    max_tv = float(max_tv)
    if not 0 < max_tv <= 1:
        raise ValueError(f"max_tv must be in (0, 1], got {max_tv}")
    if stop is not None and not isinstance(stop, PValueStop):
        raise ValueError(f"stop must be a PValueStop or None, got {type(stop).__name__}")
    rng = as_rng(seed)
    obs = _draw_stats(v)
    c = np.ascontiguousarray(v.sum(axis=-1, dtype=np.int64))
    q = (c / k)[None]  # [1, n, M]: the same in every permutation
    den = k * (q * (1 - q)).sum(axis=(-2, -1))
    pb = _poisson_binomial(q[0]).mean(axis=0)
    key = rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True)
    arranged = _arranged(x)
    aligned = alignment in ("seed-aligned", "unknown")
    if stop is None:
        null_stats = _permuted_stats(c, k, key, 0, n_perm, pb, den)
    else:
        # the checks whose decision depends on their p-value hold the permutations
        held = [j for j, holds in ((0, np.isfinite(obs[0]) and not arranged), (1, aligned),
                                   (2, aligned and obs[2] <= max_tv)) if holds]
        parts, taken = [], 0
        for B in stop.looks(n_perm):
            parts.append(_permuted_stats(c, k, key, taken, B - taken, pb, den))
            taken = B
            if B < n_perm and _settled(np.concatenate(parts), obs, held, stop, alpha, n_perm):
                break
        null_stats = np.concatenate(parts)
    B = len(null_stats)

    def upper(j):
        return float((1 + _upper_count(null_stats[:, j], obs[j])) / (B + 1))

    disp_p = upper(0) if np.isfinite(obs[0]) else float("nan")
    dispersion = Check(
        "dispersion",
        "iid",
        float(obs[0]),
        1.0,
        disp_p,
        None if not np.isfinite(obs[0]) else bool(disp_p > alpha),
        n * M,
        f"dispersion index of draw-position totals (null mean 1); upper-tail p from {B} "
        "within-cell permutations",
    )
    if arranged:
        dispersion = dataclasses.replace(dispersion, passed=None, note=f"not testable: {_ARRANGED}")
    if not aligned:
        why = (
            f"draws are {alignment!r}, not seed-aligned: cross-member coupling is not "
            "observable; only the Frechet bracket holds"
        )
        nan = float("nan")
        return (
            dispersion,
            Check("coupling", "independence", nan, nan, nan, None, n, why),
            Check("known_p_tv", "independence", nan, nan, nan, None, n, why),
        ), B
    two, mu = _two_sided_p(null_stats[:, 1], obs[1])
    coupling = Check(
        "coupling",
        "independence",
        float(obs[1]),
        mu,
        two,
        bool(two > alpha),
        n,
        f"seed-aligned union rate against its mean under {B} within-cell permutations "
        "(two-sided p)",
    )
    tv_p = upper(2)
    tv = Check(
        "known_p_tv",
        "independence",
        float(obs[2]),
        float(null_stats[:, 2].mean()),
        tv_p,
        bool(obs[2] <= max_tv and tv_p > alpha),
        n * k,
        "TV of members-right-per-draw against independent members at the observed rates; 001 "
        f"passes TV <= {max_tv:g}; "
        f"reference: mean TV under {B} within-cell permutations",
    )
    return (dispersion, coupling, tv), B


@dataclasses.dataclass(frozen=True, repr=False)
class WinnersCurse(Result):
    """001's one-sided, dependence-free correction: the winner's-curse radius R_k of O_repro.

    R_k = sqrt(ln M / (2k)) bounds the upward bias of the plug-in max: for each prompt
    E[max_m c_im/k] - max_m p_im <= E[max_m (c_im/k - p_im)] <= sqrt(ln M / (2k)) (each c_im/k -
    p_im is sub-Gaussian with variance proxy 1/(4k); the maximal inequality needs no
    independence across members). The conservative terms: O_repro_upper = O_repro + R_k,
    O_exp_lower = O_exp - R_k, Delta_lower = mean_i max(0, (O_exp_i - R_k) - (O_repro_i + R_k))
    and its share of the gap to the baseline (001's ``conservative_one_sided``).
    """

    R_k: float
    o_exp: float
    o_repro: float
    o_repro_upper: float
    o_exp_lower: float
    delta: float
    delta_lower: float
    gap: float
    share_lower: float

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([dataclasses.asdict(self)])


def winners_curse_radius(M: int, k: int) -> float:
    """sqrt(ln M / (2k)): the bound on E[max_m p_hat_m] - max_m p_m for M members and k draws."""
    M = check_int(M, "M", minimum=1)
    k = check_int(k, "k", minimum=1)
    return float(math.sqrt(math.log(M) / (2 * k)))


def winners_curse(x, *, baseline=None, form: str | None = None) -> WinnersCurse:
    """The winner's-curse radius of O_repro and 001's conservative one-sided decomposition."""
    v, alignment, _, _ = _inputs(x, min_k=1)
    form = _form(form, alignment)
    n, M, k = v.shape
    r = v.mean(axis=2)
    kind, fixed = baseline_scores(baseline, r)
    base = float(r.mean(axis=0).max()) if fixed is None else float(fixed.mean())
    Rk = winners_curse_radius(M, k)
    oe, orp = _o_exp_prompt(v, form), r.max(axis=1)
    dl = float(np.maximum(0.0, (oe - Rk) - (orp + Rk)).mean())
    gap = float(oe.mean() - base)
    return WinnersCurse(
        Rk,
        float(oe.mean()),
        float(orp.mean()),
        float(orp.mean() + Rk),
        float(oe.mean() - Rk),
        float(oe.mean() - orp.mean()),
        dl,
        gap,
        dl / gap if gap > 0 else float("nan"),
    )


@dataclasses.dataclass(frozen=True, repr=False)
class AssumptionChecks(Result):
    """001's gates on a pool, the magnitudes each failed check flags, and the Frechet bracket.

    ``checks``: the :class:`Check` results (runs, dispersion, coupling, known_p_tv).
    ``flags``: quantity -> names of the failed checks it leans on (only quantities with a
    failure appear). ``untested``: quantity -> checks that could not be run (e.g. independence on
    draws that are not seed-aligned). ``frechet``: the assumption-free bracket of the single-draw
    oracle and of Delta, mean_i max_m p_im <= O_exp <= mean_i min(1, sum_m p_im) (reported
    whatever the alignment; where draws are not seed-aligned it is the only bracket without an
    independence assumption). ``winners_curse``: :class:`WinnersCurse`. ``n_perm``: the
    within-cell permutations drawn behind the permutation checks; ``stop``: the
    :class:`~oraclegap.stats.noise.stopping.PValueStop` that sized them (None: all requested).
    """

    checks: tuple
    flags: dict
    untested: dict
    alignment: str
    frechet: dict
    winners_curse: WinnersCurse
    n_perm: int | None = None
    stop: PValueStop | None = None

    @property
    def all_pass(self) -> bool:
        return all(c.passed is not False for c in self.checks)

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check {name!r}; checks: {[c.name for c in self.checks]}")

    def flag(self, quantity: str) -> str:
        """'' when every check behind ``quantity`` passed, else 'check failed: ...' / 'untested:
        ...'."""
        if quantity in self.flags:
            return "check failed: " + ", ".join(self.flags[quantity])
        if quantity in self.untested:
            return "untested: " + ", ".join(self.untested[quantity])
        return ""

    def frame(self) -> pd.DataFrame:
        """One row per check: its fields."""
        return pd.DataFrame([dataclasses.asdict(c) for c in self.checks])

    def to_dict(self) -> dict:
        """JSON-ready: the checks, whether all pass, the flags and untested quantities per check,
        the alignment, the Frechet bounds and the winner's-curse reading; with a ``stop``, the
        permutations drawn (``n_perm``) and the rule (``stop``)."""
        return jsonable({
            "checks": [c.to_dict() for c in self.checks],
            "all_pass": self.all_pass,
            "flags": dict(self.flags),
            "untested": dict(self.untested),
            "alignment": self.alignment,
            "frechet": dict(self.frechet),
            "winners_curse": dataclasses.asdict(self.winners_curse),
            **({} if self.stop is None else {"n_perm": self.n_perm, "stop": self.stop.to_dict()}),
        })


def assumption_checks(
    x,
    *,
    baseline=None,
    form: str | None = None,
    n_perm: int = 200,
    alpha: float = 0.01,
    max_tv: float = 0.06,
    seed=0,
    stop: PValueStop | None = None,
) -> AssumptionChecks:
    """Run 001's assumption checks on a pool and flag the magnitudes that lean on a failed one.

    Checks: :func:`runs_check` and the dispersion index (A1, i.i.d. draws within a cell) and
    the coupling permutation test and the known-p TV gate (A2, independence across members) of
    :func:`permutation_checks` (``n_perm`` permutations, or fewer with a ``stop``: see there).
    Rule: every quantity in :data:`NEEDS` of a failed assumption is flagged (``flags``), and one
    whose check could not be run is listed in ``untested``. When the pool's O_exp itself uses the
    independence form (``form="independent"``: draws not seed-aligned) O_exp, Delta, the gap and
    the share lean on A2 as well.
    """
    v, alignment, _, _ = _inputs(x, min_k=2)
    form = _form(form, alignment)
    runs = runs_check(x, alpha=alpha)
    (disp, coup, tv), drawn = _permutation_checks(x, n_perm, alpha, max_tv, seed, stop)
    checks = (runs, disp, coup, tv)
    needs = {a: set(q) for a, q in NEEDS.items()}
    if form == "independent":
        needs["independence"] |= {
            "o_exp",
            "delta",
            "gap",
            "noise_share",
            "delta_split",
            "noise_share_split",
        }
    flags: dict[str, list[str]] = {}
    untested: dict[str, list[str]] = {}
    for c in checks:
        target = flags if c.passed is False else untested if c.passed is None else None
        if target is None:
            continue
        for q in sorted(needs[c.assumption]):
            target.setdefault(q, []).append(c.name)
    r = v.mean(axis=2)
    orp = float(r.max(axis=1).mean())
    fup = float(np.minimum(1.0, r.sum(axis=1)).mean())
    frechet = {
        "o_exp_lower": orp,
        "o_exp_upper": fup,
        "delta_lower": 0.0,
        "delta_upper": fup - orp,
        "o_exp_independent": float((1 - np.prod(1 - r, axis=1)).mean()),
    }
    wc = winners_curse(v, baseline=baseline, form=form)
    return AssumptionChecks(
        checks,
        {q: tuple(c) for q, c in flags.items()},
        {q: tuple(c) for q, c in untested.items()},
        alignment,
        frechet,
        wc,
        drawn,
        stop,
    )
