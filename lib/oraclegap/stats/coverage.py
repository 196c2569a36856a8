"""Reliability coverage and the limits of selection (arXiv 2609.32996, Section 2 and App. B.1).

Notation. A pool has M policies; on prompt i policy m succeeds with probability p_im. With k
sampled responses we observe counts c_im and estimate p_im by

* the raw frequency  p^_im = c_im / k, or
* the Beta-smoothed posterior mean  p~_im = (c_im + a) / (k + a + b), with (a, b) fitted by the
  method of moments on the evaluated split (:func:`fit_beta_prior`).

For a reliability threshold tau in (0, 1] a prompt is *covered* by an estimate when it is at
least tau. With raw frequencies this is a count rule: c_im >= need(tau, k) = max(1, ceil(tau*k - 1e-9))
(the 1e-9 keeps 0.1*30 = 3.0000000000000004 from demanding a 4th success; the floor of one
success keeps a threshold below 1e-9/k from counting a prompt with no success as covered:
tau > 0, so a rate of 0 never reaches it).

Coverage functionals, each the fraction of prompts that satisfy the condition:

* member       C_m(tau)    = mean_i 1[p_im >= tau]
* oracle       C_orac(tau) = mean_i 1[max_m p_im >= tau]
* best member  C_best(tau) = max_m C_m(tau)          (the threshold-specific comparator)
* mixture      C_mix(tau)  = mean_i 1[(1/M) sum_m p_im >= tau]   (uniform mixture). Its estimate
  pools the M*k responses of a prompt, S_i = sum_m c_im: raw S_i / (M k) (a pooled count >=
  need(tau, M*k)); smoothed (S_i + a) / (M k + a + b), the posterior of the pooled counts
  (App. B.1), not the average of the members' posterior means
* disagreement D(tau)      = mean_i 1[max_m p_im >= tau > min_m p_im]
* oracle gap   L(tau)      = C_orac - C_best;  0 <= L <= D
* oracle minus mixture     = C_orac - C_mix

Routing identity (Prop. 2): for any per-prompt choice r(i),
C_orac - C_r = D * e_D, with e_D = P[p_{r(i)} < tau | i in disagreement set]; r beats the best
member iff e_D < L / D (the break-even error). Mixture bound (Prop. 3): C_mix(tau) >= C_orac(M tau).

All functions accept a :class:`~oraclegap.pool.Pool`, a 0/1 array [n, M, k], or success counts
[n, M] together with ``k=``. Plug-in values obey every identity above exactly; population
values follow from passing true rates to :func:`coverage_from_rates`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from .._result import Result
from .._validate import as_bool_array, as_counts_array, check_int, check_tau, check_taus, tau_key
from ..pool import Pool, need  # need: the success threshold, defined on the pool floor
from ..pool._fields import _NEED_EPS

__all__ = [
    "DEFAULT_TAUS",
    "need",
    "as_counts",
    "mixture_rates",
    "BetaPrior",
    "fit_beta_prior",
    "member_rates",
    "covered",
    "CoverageTable",
    "coverage",
    "coverage_from_rates",
    "RoutingAccount",
    "routing_account",
    "rauc",
    "rauc_table",
    "pass1_oracle_gap",
    "Pass1Gap",
    "mixture_bound",
    "GEOMETRY3K_PRIOR",
]

#: The thresholds every verb, the CLI and the audit use by default: a member covers a prompt
#: when at least 5%, 10%, 20% or 30% of its k draws succeed (arXiv 2609.32996's thresholds).
DEFAULT_TAUS = (0.05, 0.10, 0.20, 0.30)

_EPS = _NEED_EPS


def as_counts(x, k: int | None = None) -> tuple[np.ndarray, int]:
    """Success counts int64 [n, M] and k from a Pool, a 0/1 array [n, M, k], or counts with ``k=``."""
    if isinstance(x, Pool):
        if k is not None and k != x.k:
            raise ValueError(f"k={k} disagrees with the pool's k={x.k}")
        return x.counts(), x.k
    arr = np.asarray(x)
    if arr.ndim == 3:
        v = as_bool_array(arr, "verdicts")
        if 0 in v.shape:
            raise ValueError(f"verdicts has a zero-size axis (shape {v.shape})")
        if k is not None and k != v.shape[2]:
            raise ValueError(f"k={k} disagrees with the verdicts' last axis ({v.shape[2]})")
        return v.sum(axis=2, dtype=np.int64), v.shape[2]
    if arr.ndim == 2:
        if k is None:
            raise ValueError("a 2-d input is read as success counts [n, M] and needs k= (draws per cell)")
        k = check_int(k, "k", minimum=1)
        c = as_counts_array(arr, k, "counts")
        if 0 in c.shape:
            raise ValueError(f"counts has a zero-size axis (shape {c.shape})")
        return c, k
    raise ValueError(
        f"expected a Pool, verdicts [n, M, k] or counts [n, M] with k=; got an array of rank {arr.ndim}"
    )


@dataclasses.dataclass(frozen=True)
class BetaPrior:
    """A Beta(a, b) prior for per-cell success rates; ``posterior_mean(c, k) = (c + a) / (k + a + b)``."""

    a: float
    b: float

    def __post_init__(self):
        if not (self.a > 0 and self.b > 0 and math.isfinite(self.a) and math.isfinite(self.b)):
            raise ValueError(f"Beta prior parameters must be positive and finite, got a={self.a}, b={self.b}")

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b)

    def posterior_mean(self, counts, k):
        return (np.asarray(counts, dtype=float) + self.a) / (k + self.a + self.b)


#: The prompt-rate prior the paper fitted on its Geometry3K split (arXiv 2609.32996, App. B.1).
GEOMETRY3K_PRIOR = BetaPrior(0.347, 0.601)


def fit_beta_prior(x, k: int | None = None) -> BetaPrior:
    """Method-of-moments Beta prior from the cells of the evaluated split (App. B.1).

    Treat every (prompt, policy) count as beta-binomial: c ~ Binomial(k, p), p ~ Beta(a, b).
    With mu = E[c/k] and s2 = Var(c/k) over cells, Var(c/k) = mu(1-mu)(1 + (k-1) rho) / k where
    rho = 1 / (a + b + 1). Solving gives rho, then a + b = (1 - rho)/rho and a = mu (a + b).
    Under-dispersed data (rho <= 0) means no detectable spread in rates: rho is floored at 1e-6,
    i.e. a very strong prior centred on mu. Needs k >= 2 and 0 < mu < 1.
    """
    c, k = as_counts(x, k)
    if k < 2:
        raise ValueError("fitting a Beta prior by moments needs k >= 2 draws per cell (k=1 cannot separate the spread)")
    r = c.ravel() / k
    mu = float(r.mean())
    if not (0 < mu < 1):
        raise ValueError(f"every cell is all-{'correct' if mu == 1 else 'incorrect'}; a Beta prior cannot be fitted")
    s2 = float(r.var(ddof=1)) if r.size > 1 else 0.0
    rho = (k * s2 / (mu * (1 - mu)) - 1) / (k - 1)
    rho = min(max(rho, 1e-6), 1 - 1e-9)
    total = (1 - rho) / rho
    return BetaPrior(mu * total, (1 - mu) * total)


def member_rates(x, k: int | None = None, *, estimator: str = "raw", prior: BetaPrior | None = None) -> np.ndarray:
    """Per-cell rate estimates [n, M]: raw ``c/k`` or smoothed posterior means."""
    c, k = as_counts(x, k)
    if estimator == "raw":
        return c / k
    if estimator == "smoothed":
        prior = prior if prior is not None else fit_beta_prior(c, k)
        if not isinstance(prior, BetaPrior):
            raise TypeError(f"prior must be a BetaPrior, got {type(prior).__name__}")
        return prior.posterior_mean(c, k)
    raise ValueError(f"estimator must be 'raw' or 'smoothed', got {estimator!r}")


def mixture_rates(x, k: int | None = None, *, estimator: str = "raw", prior: BetaPrior | None = None) -> np.ndarray:
    """Per-prompt rate estimate [n] of the uniform mixture from the pooled responses.

    With S_i = sum_m c_im successes among the M*k pooled responses of prompt i: raw S_i / (M k)
    (equal to the average of the members' raw rates); smoothed (S_i + a) / (M k + a + b), the
    Beta(a, b) posterior mean of the *pooled* counts (arXiv 2609.32996, App. B.1), with the
    prior fitted on ``x`` by moments when None. Averaging the members' posterior means instead,
    (S_i/M + a) / (k + a + b), shrinks M times less towards the prior mean: for counts
    (2, 2, 1, 1, 1) at k = 16 under Beta(0.347, 0.601) the pooled posterior is 0.0908 (below
    tau = 0.10) while the member average is 0.1031.
    """
    c, k = as_counts(x, k)
    M = c.shape[1]
    if estimator == "raw":
        return c.sum(axis=1) / (M * k)
    if estimator == "smoothed":
        prior = prior if prior is not None else fit_beta_prior(c, k)
        if not isinstance(prior, BetaPrior):
            raise TypeError(f"prior must be a BetaPrior, got {type(prior).__name__}")
        return prior.posterior_mean(c.sum(axis=1), M * k)
    raise ValueError(f"estimator must be 'raw' or 'smoothed', got {estimator!r}")


def covered(rates, tau, k_eff: float | None = None):
    """1[rate >= tau], with a tolerance of 1e-9/k_eff so that raw frequencies match ``need``.

    A rate of 0 is never covered (tau > 0), however small tau is against the tolerance.
    """
    tol = _EPS / k_eff if k_eff else 1e-12
    r = np.asarray(rates)
    return (r >= np.asarray(tau) - tol) & (r > 0)


# ---------------------------------------------------------------------------- the coverage table
@dataclasses.dataclass(frozen=True, repr=False)
class CoverageTable(Result):
    """Coverage functionals at several thresholds (arrays indexed by threshold, then policy)."""

    _repr_fields = ("taus", "L", "D", "break_even", "oracle", "best", "best_member", "mixture",
                    "oracle_minus_mixture", "member", "policy_names", "n_prompts", "k", "estimator",
                    "prior")

    taus: np.ndarray
    member: np.ndarray  # [T, M]
    oracle: np.ndarray
    mixture: np.ndarray
    D: np.ndarray
    policy_names: tuple
    n_prompts: int
    k: int | None
    estimator: str
    prior: BetaPrior | None = None

    @property
    def best(self) -> np.ndarray:
        return self.member.max(axis=1)

    @property
    def best_index(self) -> np.ndarray:
        return self.member.argmax(axis=1)

    @property
    def best_member(self) -> tuple:
        """The best member's name at each threshold."""
        return tuple(self.policy_names[j] for j in self.best_index)

    @property
    def L(self) -> np.ndarray:
        return self.oracle - self.best

    @property
    def oracle_minus_mixture(self) -> np.ndarray:
        """Oracle minus uniform mixture."""
        return self.oracle - self.mixture

    @property
    def break_even(self) -> np.ndarray:
        """L/D: the largest disagreement error e_D with which a router still beats the best member (NaN if D=0)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.D > 0, self.L / np.where(self.D > 0, self.D, 1), np.nan)

    def frame(self) -> pd.DataFrame:
        """One row per threshold: need, oracle, best (and which member), mixture, D, L,
        oracle - mixture, L/D."""
        df = pd.DataFrame(
            {
                "tau": self.taus,
                "oracle": self.oracle,
                "best": self.best,
                "best_member": list(self.best_member),
                "mixture": self.mixture,
                "D": self.D,
                "L": self.L,
                "oracle_minus_mixture": self.oracle_minus_mixture,
                "break_even": self.break_even,
            }
        )
        if self.k is not None and self.estimator == "raw":
            df.insert(1, "need", need(self.taus, self.k))
        return df

    def members_frame(self) -> pd.DataFrame:
        """Tidy per-policy coverage: one row per (tau, policy)."""
        T, M = self.member.shape
        return pd.DataFrame(
            {
                "tau": np.repeat(self.taus, M),
                "policy": list(self.policy_names) * T,
                "coverage": self.member.ravel(),
            }
        )

    def to_dict(self) -> dict:
        """Plain JSON-ready values keyed by threshold (exact keys: ``repr(float(tau))``)."""
        out = {}
        for row in self.frame().to_dict(orient="records"):
            key = tau_key(row.pop("tau"))
            out[key] = {kk: (None if isinstance(v, float) and math.isnan(v) else (v.item() if hasattr(v, "item") else v)) for kk, v in row.items()}
        return out


def _core(rates: np.ndarray, mix_rates: np.ndarray, taus: np.ndarray, k_member, k_mix) -> tuple:
    cov = covered(rates[None, :, :], taus[:, None, None], k_member)  # [T, n, M]
    member = cov.mean(axis=1)
    any_cov = cov.any(axis=2)
    all_cov = cov.all(axis=2)
    oracle = any_cov.mean(axis=1)
    D = (any_cov & ~all_cov).mean(axis=1)
    mixture = covered(mix_rates[None, :], taus[:, None], k_mix).mean(axis=1)
    return member, oracle, mixture, D


def coverage(
    x, taus, *, k: int | None = None, estimator: str = "raw", prior: BetaPrior | None = None, policy_names=None
) -> CoverageTable:
    """Plug-in coverage functionals at each threshold in ``taus`` (see the module docstring).

    ``estimator="raw"`` uses frequencies (count rule ``need``); ``"smoothed"`` uses Beta
    posterior means with ``prior`` (fitted on ``x`` by moments when None). The mixture's rate is
    estimated from the pooled M*k responses of each prompt (:func:`mixture_rates`): raw, the
    pooled count over M*k; smoothed, the posterior of the pooled counts (S + a)/(M k + a + b).
    """
    taus = check_taus(taus)
    c, k = as_counts(x, k)
    n, M = c.shape
    if policy_names is None:
        policy_names = x.policy_names if isinstance(x, Pool) else [f"m{j}" for j in range(M)]
    if len(policy_names) != M:
        raise ValueError(f"policy_names has {len(policy_names)} names for {M} policies")
    if estimator == "smoothed" and prior is None:
        prior = fit_beta_prior(c, k)
    rates = member_rates(c, k, estimator=estimator, prior=prior)
    member, oracle, mixture, D = _core(rates, mixture_rates(c, k, estimator=estimator, prior=prior), taus, k, M * k)
    return CoverageTable(taus, member, oracle, mixture, D, tuple(policy_names), n, k, estimator, prior if estimator == "smoothed" else None)


def coverage_from_rates(p, taus, *, policy_names=None) -> CoverageTable:
    """Coverage functionals of known success probabilities p[n, M] (population truth, no sampling)."""
    taus = check_taus(taus)
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or 0 in p.shape:
        raise ValueError(f"p must be a non-empty [n, M] array of probabilities, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p must hold probabilities in [0, 1]")
    M = p.shape[1]
    names = tuple(policy_names) if policy_names is not None else tuple(f"m{j}" for j in range(M))
    member, oracle, mixture, D = _core(p, p.mean(axis=1), taus, None, None)
    return CoverageTable(taus, member, oracle, mixture, D, names, p.shape[0], None, "truth")


# ---------------------------------------------------------------------------- routing identity
@dataclasses.dataclass(frozen=True, repr=False)
class RoutingAccount(Result):
    """A per-prompt choice scored against the oracle at one threshold (Prop. 2)."""

    tau: float
    oracle: float
    best: float
    routed: float
    D: float
    e_D: float
    break_even: float

    @property
    def L(self) -> float:
        return self.oracle - self.best

    @property
    def gain(self) -> float:
        """Routed coverage minus the threshold-specific best member."""
        return self.routed - self.best

    @property
    def identity_residual(self) -> float:
        """(C_orac - C_r) - D * e_D: zero up to rounding (NaN-safe when D = 0)."""
        return (self.oracle - self.routed) - (self.D * (0.0 if math.isnan(self.e_D) else self.e_D))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([{**dataclasses.asdict(self), "L": self.L, "gain": self.gain}])


def routing_account(x, choice, tau, *, k: int | None = None, estimator: str = "raw", prior=None) -> RoutingAccount:
    """Score a per-prompt choice ``choice[i]`` (policy index) at threshold ``tau``.

    Returns C_orac, C_best, C_r, D and e_D = P[chosen member below tau | disagreement prompt];
    ``break_even`` = L/D. The routing identity C_orac - C_r = D e_D holds exactly in-sample.
    """
    tau = check_tau(tau)
    c, k = as_counts(x, k)
    n, M = c.shape
    ch = np.asarray(choice)
    if ch.shape != (n,) or not np.issubdtype(ch.dtype, np.integer):
        raise ValueError(f"choice must be an integer array of length n_prompts={n} (policy positions)")
    if (ch < 0).any() or (ch >= M).any():
        raise ValueError(f"choice holds policy positions outside [0, {M})")
    rates = member_rates(c, k, estimator=estimator, prior=prior)
    cov = covered(rates, tau, k)
    any_cov, all_cov = cov.any(axis=1), cov.all(axis=1)
    dis = any_cov & ~all_cov
    chosen = cov[np.arange(n), ch]
    D = float(dis.mean())
    e_D = float((~chosen[dis]).mean()) if dis.any() else float("nan")
    oracle = float(any_cov.mean())
    best = float(cov.mean(axis=0).max())
    return RoutingAccount(tau, oracle, best, float(chosen.mean()), D, e_D, (oracle - best) / D if D > 0 else float("nan"))


# ---------------------------------------------------------------------------- rAUC
def _check_band(band) -> tuple[float, float]:
    try:
        lo, hi = (float(b) for b in band)
    except (TypeError, ValueError):
        raise ValueError(f"band must be a pair (lo, hi), got {band!r}") from None
    if not (0 < lo < hi <= 1):
        raise ValueError(f"band must satisfy 0 < lo < hi <= 1, got {band!r}")
    return lo, hi


def rauc(rates, band=(0.05, 0.30), *, k_eff: float | None = None, grid: int = 1001, method: str = "trapezoid") -> float:
    """Band-averaged coverage rAUC = (1/(hi-lo)) * integral_lo^hi C(tau) dtau of one system.

    ``rates`` is the system's per-prompt estimate (a member's column, the row max for the
    oracle, the row mean for the mixture). arXiv 2609.32996 defines rAUC by the integral and
    gives no quadrature. ``method="trapezoid"`` applies the trapezoid rule on ``grid`` equally
    spaced thresholds (spacing h = (hi - lo) / (grid - 1)); C is non-increasing in tau, so the
    error is at most (h / 2) (C(lo) - C(hi)) / (hi - lo) <= 1 / (2 (grid - 1)), 5e-4 at the
    default 1001 points. ``"exact"`` uses the closed form of raw rates,
    mean_i clip(p_i - lo, 0, hi - lo) / (hi - lo), which the trapezoid converges to.
    """
    lo, hi = _check_band(band)
    try:
        r = np.asarray(rates, dtype=float).ravel()
    except (TypeError, ValueError):
        raise TypeError(f"rates must be numbers in [0, 1], got {type(rates).__name__}") from None
    if r.size == 0:
        raise ValueError("rates is empty")
    if np.isnan(r).any():
        raise ValueError(f"rates contains NaN ({int(np.isnan(r).sum())} of {r.size}); every rate must be a number in [0, 1]")
    if (r < 0).any() or (r > 1).any():
        out = r[(r < 0) | (r > 1)]
        raise ValueError(f"rates must lie in [0, 1]; found {out[:5].tolist()}")
    if k_eff is not None and not (isinstance(k_eff, (int, float, np.integer, np.floating)) and k_eff > 0 and math.isfinite(k_eff)):
        raise ValueError(f"k_eff must be a positive number of draws, got {k_eff!r}")
    if method == "exact":
        return float(np.clip(r - lo, 0, hi - lo).mean() / (hi - lo))
    if method != "trapezoid":
        raise ValueError(f"method must be 'trapezoid' or 'exact', got {method!r}")
    grid = check_int(grid, "grid", minimum=2)
    ts = np.linspace(lo, hi, grid)
    curve = covered(r[None, :], ts[:, None], k_eff).mean(axis=1)
    return float(np.trapezoid(curve, ts) / (hi - lo))


def rauc_table(x, band=(0.05, 0.30), *, k: int | None = None, estimator: str = "raw", prior=None, grid: int = 1001) -> pd.DataFrame:
    """rAUC of every member, the best member, the plug-in oracle and the uniform mixture.

    The mixture's rates come from the pooled M*k responses (:func:`mixture_rates`; smoothed:
    the posterior of the pooled counts); ``prior`` is fitted on ``x`` when smoothing without one.
    """
    c, k = as_counts(x, k)
    M = c.shape[1]
    names = x.policy_names if isinstance(x, Pool) else [f"m{j}" for j in range(M)]
    if estimator == "smoothed" and prior is None:
        prior = fit_beta_prior(c, k)
    rates = member_rates(c, k, estimator=estimator, prior=prior)
    rows: list[dict[str, Any]] = [{"system": names[j], "kind": "member", "rauc": rauc(rates[:, j], band, k_eff=k, grid=grid)}
                                  for j in range(M)]
    best = max(rows, key=lambda r: r["rauc"])
    rows.append({"system": f"best member ({best['system']})", "kind": "best", "rauc": best["rauc"]})
    rows.append({"system": "oracle", "kind": "oracle", "rauc": rauc(rates.max(axis=1), band, k_eff=k, grid=grid)})
    mix = mixture_rates(c, k, estimator=estimator, prior=prior)
    rows.append({"system": "uniform mixture", "kind": "mixture", "rauc": rauc(mix, band, k_eff=M * k, grid=grid)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- Pass@1 and the mixture bound
@dataclasses.dataclass(frozen=True, repr=False)
class Pass1Gap(Result):
    """Pass@1 oracle: mean_i max_m p_im versus the best member's mean rate (``best_member`` its
    name); ``gap`` is their difference."""

    _repr_fields = ("gap", "oracle", "best", "best_member")

    oracle: float
    best: float
    best_member: str

    @property
    def gap(self) -> float:
        """The Pass@1 oracle minus the best member's mean rate."""
        return self.oracle - self.best

    def frame(self) -> pd.DataFrame:
        """One row: oracle, best, best_member, gap."""
        return pd.DataFrame([{"oracle": self.oracle, "best": self.best,
                              "best_member": self.best_member, "gap": self.gap}])


def pass1_oracle_gap(x, k: int | None = None) -> Pass1Gap:
    """Pass@1 oracle gap with raw rates: mean_i max_m c_im/k - max_m mean_i c_im/k."""
    c, k = as_counts(x, k)
    r = c / k
    means = r.mean(axis=0)
    names = x.policy_names if isinstance(x, Pool) else [f"m{j}" for j in range(c.shape[1])]
    j = int(means.argmax())
    return Pass1Gap(float(r.max(axis=1).mean()), float(means[j]), names[j])


def mixture_bound(x, taus, *, k: int | None = None, estimator: str = "raw", prior=None) -> pd.DataFrame:
    """The factor-M guarantee C_mix(tau) >= C_orac(M tau) at each tau (C_orac above 1 is 0)."""
    taus = check_taus(taus)
    c, k = as_counts(x, k)
    M = c.shape[1]
    tab = coverage(c, taus, k=k, estimator=estimator, prior=prior)
    scaled = M * taus
    orac_scaled = np.zeros_like(taus)
    ok = scaled <= 1
    if ok.any():
        orac_scaled[ok] = coverage(c, scaled[ok], k=k, estimator=estimator, prior=tab.prior or prior).oracle
    return pd.DataFrame(
        {"tau": taus, "M_tau": scaled, "mixture": tab.mixture, "oracle_at_M_tau": orac_scaled, "holds": tab.mixture >= orac_scaled}
    )

