"""Pools with known population truth, plantings, and power studies (arXiv 2609.32996, Section 3
and Appendix C).

Generators return a :class:`Simulated`: the sampled :class:`~oraclegap.pool.Pool`, the true
success probabilities ``p[n, M]`` it was drawn from (``None`` when the pool was made by moving
successes within an existing count table, where no population truth exists), and ``info``.
With truth known, population coverage, D and L follow exactly from
:func:`oraclegap.stats.coverage.coverage_from_rates` (see :func:`population_L`). Draws within a cell
are independent Bernoulli(p_im); randomness only through ``seed`` (an int or a Generator).

Worlds and alternatives:

* :func:`exchangeable` -- the null world, p_im = p_i ~ Beta(a, b) (default: the Beta(0.347,
  0.601) prompt-rate prior fitted on Geometry3K).
* :func:`diffuse` / :func:`diffuse_from` -- every member's log-odds perturbed independently,
  logit p_im = logit q_i + sigma z_im; ``diffuse_from`` centres q_i on a pool's observed prompt
  means, clipped to [1/(2 M k), 1 - 1/(2 M k)] (Table 2).
* :func:`plant` / :func:`planted` -- concentrated specialists: on each prompt up to
  round(delta k) successes move, one at a time, from a random donor with a success left to the
  prompt's specialist, stopping when the specialist reaches k or no donor has one (Table A2).
* :func:`specialists` -- a fraction f of prompts gets one uniformly chosen member raised to
  min(1, q + s) (Table A3), with the population gap known.
* :func:`quality_shift` -- two groups sharing prompt difficulties, with member effects constant
  on the logit, probit or probability scale (Table A4).
* :func:`predictable` -- specialists assigned by quantile bins of the first principal component
  of prompt features (the features go into the pool's prompt table).

:func:`effect_generator` returns one of these generators at a pool shape. The studies that run
tests on generated pools (rejection rates, power, the planner) live in
:mod:`oraclegap.stats.studies`, one floor up, so that generators never import tests.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numba import njit
from scipy.optimize import brentq
from scipy.special import expit, logit, ndtr, ndtri

from .._validate import as_rng, check_int, check_prob
from ..pool import Pool
from .coverage import as_counts, coverage_from_rates

__all__ = [
    "Simulated",
    "GEOMETRY3K_AB",
    "LINKS",
    "EFFECTS",
    "sample_pool",
    "exchangeable",
    "diffuse",
    "diffuse_from",
    "transfer_target",
    "plant",
    "planted",
    "specialists",
    "quality_shift",
    "PC1Rule",
    "fit_pc1_rule",
    "pc1_bins",
    "predictable",
    "World",
    "latent_world",
    "population_L",
    "effect_generator",
]

#: The Beta prompt-rate prior fitted on Geometry3K in arXiv 2609.32996 (App. B.1).
GEOMETRY3K_AB = (0.347, 0.601)
#: Scales on which :func:`quality_shift` holds member effects constant.
LINKS = ("logit", "probit", "identity")
#: Effects the power planner knows.
EFFECTS = ("exchangeable", "diffuse", "specialists", "planted")


@dataclasses.dataclass(frozen=True, eq=False)
class Simulated:
    """A sampled pool and the truth behind it (``p`` is None when no population truth exists)."""

    pool: Pool
    p: np.ndarray | None  # true success probabilities [n, M]
    info: dict = dataclasses.field(default_factory=dict)

    def population(self, taus) -> pd.DataFrame:
        """Population coverage functionals (oracle, best, mixture, D, L) of the true rates."""
        if self.p is None:
            raise ValueError("this pool was made by moving successes within a count table; it has no population truth")
        return coverage_from_rates(self.p, taus).frame()


def population_L(p, taus) -> np.ndarray:
    """Population oracle gap L(tau) = P[max_m p_im >= tau] - max_m P[p_im >= tau] of true rates p[n, M]."""
    return coverage_from_rates(p, taus).L


# ---------------------------------------------------------------------------- sampling
def sample_pool(p, k: int, seed=0, *, alignment: str = "independent", meta: dict | None = None, prompts=None) -> Pool:
    """Draw k independent Bernoulli(p_im) verdicts per cell of ``p[n, M]`` (``prompts``: an
    optional prompt table, e.g. with feature columns)."""
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or 0 in p.shape:
        raise ValueError(f"p must be a non-empty [n, M] array, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p must hold probabilities in [0, 1]")
    k = check_int(k, "k", minimum=1)
    rng = as_rng(seed)
    return Pool.from_array(_bernoulli(p, k, rng), prompts, alignment=alignment, meta=dict(meta or {}))


@njit(cache=True)
def _bernoulli_kernel(rng, p, k, v):  # pragma: no cover - compiled
    n, M = p.shape
    for i in range(n):
        for m in range(M):
            pim = p[i, m]
            for j in range(k):
                v[i, m, j] = rng.random() < pim


def _bernoulli(p: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """bool[n, M, k] with entry (i, m, j) = U_imj < p[i, m], the uniforms U taken from ``rng`` in
    C order: the verdicts of ``rng.random((n, M, k)) < p[:, :, None]`` (numba draws from the
    generator's own stream, tested equal), without that n x M x k float array (at 1e6 x 10 x 16,
    1.3 GB) and in a fifth of the time."""
    v = np.empty((p.shape[0], p.shape[1], k), dtype=bool)
    _bernoulli_kernel(rng, np.ascontiguousarray(p, dtype=np.float64), k, v)
    return v


def _check_ab(a: float, b: float) -> None:
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"Beta parameters a and b must be positive and finite, got a={a}, b={b}")


def _prompt_rates(n: int, a: float, b: float, rng) -> np.ndarray:
    _check_ab(a, b)
    return rng.beta(a, b, size=n)


def _check_base(base, n_name: str = "base") -> np.ndarray:
    q = np.asarray(base, dtype=float).ravel()
    if q.size == 0 or np.isnan(q).any() or (q < 0).any() or (q > 1).any():
        raise ValueError(f"{n_name} must be a non-empty array of prompt rates in [0, 1]")
    return q


def exchangeable(n: int = 240, M: int = 5, k: int = 16, *, a: float = GEOMETRY3K_AB[0], b: float = GEOMETRY3K_AB[1], seed=0) -> Simulated:
    """The null world: every member shares one rate per prompt, p_im = p_i ~ Beta(a, b).

    Population L and D are exactly 0 at every threshold; any plug-in gap is sampling noise.
    """
    n = check_int(n, "n", minimum=1)
    M = check_int(M, "M", minimum=1)
    rng = as_rng(seed)
    p = np.repeat(_prompt_rates(n, a, b, rng)[:, None], M, axis=1)
    pool = sample_pool(p, k, rng, meta={"generator": "exchangeable", "a": a, "b": b})
    return Simulated(pool, p, {"generator": "exchangeable", "a": a, "b": b})


def diffuse(
    n: int = 240,
    M: int = 5,
    k: int = 16,
    sigma: float = 0.5,
    *,
    a: float = GEOMETRY3K_AB[0],
    b: float = GEOMETRY3K_AB[1],
    seed=0,
    base=None,
) -> Simulated:
    """Diffuse differences: logit p_im = logit q_i + sigma * z_im, z_im ~ N(0, 1) independent.

    Prompt centres q_i ~ Beta(a, b) are clipped to [1e-4, 1 - 1e-4] so every member's log-odds
    is finite. With ``base`` (n prompt rates, e.g. a pool's observed prompt means) the centres
    are ``base`` clipped to [1/(2 M k), 1 - 1/(2 M k)] as in arXiv 2609.32996 (Table 2) and
    ``n`` is taken from it. ``sigma = 0`` gives the exchangeable world.
    """
    M = check_int(M, "M", minimum=1)
    k = check_int(k, "k", minimum=1)
    if not (sigma >= 0) or not math.isfinite(sigma):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma}")
    rng = as_rng(seed)
    if base is None:
        n = check_int(n, "n", minimum=1)
        centre = np.clip(_prompt_rates(n, a, b, rng), 1e-4, 1 - 1e-4)
        source = "beta"
    else:
        eps = 1.0 / (2 * M * k)
        centre = np.clip(_check_base(base), eps, 1 - eps)
        n = centre.size
        source = "base"
    p = expit(logit(centre)[:, None] + sigma * rng.standard_normal((n, M)))
    info = {"generator": "diffuse", "sigma": sigma, "a": a, "b": b, "centre": source}
    pool = sample_pool(p, k, rng, meta=info)
    return Simulated(pool, p, info)


def diffuse_from(x, sigma: float, *, k: int | None = None, k_sim: int | None = None, M: int | None = None, seed=0) -> Simulated:
    """Diffuse perturbations centred on a pool's observed prompt means (Table 2 of 2609.32996).

    The centre of prompt i is its pooled success rate sum_m c_im / (M k), clipped to
    [1/(2 M k), 1 - 1/(2 M k)] with the *observed* k; ``k_sim`` responses per member are then
    simulated (default: the observed k; the paper's budget study uses 64). ``M`` defaults to the
    pool's member count.
    """
    c, k = as_counts(x, k)
    n, M0 = c.shape
    M = M0 if M is None else check_int(M, "M", minimum=1)
    k_sim = k if k_sim is None else check_int(k_sim, "k_sim", minimum=1)
    if not (sigma >= 0) or not math.isfinite(sigma):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma}")
    rng = as_rng(seed)
    eps = 1.0 / (2 * M0 * k)
    centre = np.clip(c.sum(axis=1) / (M0 * k), eps, 1 - eps)
    p = expit(logit(centre)[:, None] + sigma * rng.standard_normal((n, M)))
    info = {"generator": "diffuse_from", "sigma": sigma, "k_observed": k, "k": k_sim}
    return Simulated(sample_pool(p, k_sim, rng, meta=info), p, info)


# ---------------------------------------------------------------------------- concentrated planting
def transfer_target(delta: float, k: int) -> int:
    """Transfers per prompt for strength ``delta``: round(delta k), halves rounded up."""
    delta = check_prob(delta, "delta")
    k = check_int(k, "k", minimum=1)
    return int(math.floor(delta * k + 0.5 + 1e-12))


def _plant_counts(c: np.ndarray, k: int, target: int, spec: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """Move up to ``target`` successes per prompt to member ``spec[i]`` (vectorised over prompts)."""
    c = c.copy()
    n, M = c.shape
    rows = np.arange(n)
    done = np.zeros(n, np.int64)
    for _ in range(target):
        donors = c > 0
        donors[rows, spec] = False
        can = donors.any(axis=1) & (c[rows, spec] < k)
        if not can.any():
            break
        keys = np.where(donors, rng.random((n, M)), -1.0)
        donor = keys.argmax(axis=1)
        idx = rows[can]
        c[idx, donor[can]] -= 1
        c[idx, spec[can]] += 1
        done[can] += 1
    return c, done


def plant(x, delta: float, *, k: int | None = None, specialist=None, seed=0) -> Simulated:
    """Concentrated specialization planted in an observed count table (App. C.2, Table A2).

    On each prompt the target is round(delta k) transfers; each moves one success from a donor
    chosen uniformly among the other members with a success left to the prompt's specialist,
    and transfers stop when the specialist reaches k or no donor has a success. Prompt totals
    are kept; the specialist's total can change. ``specialist``: None (uniformly random member
    per prompt), one member index for every prompt, or an int array [n]. The returned pool is
    rebuilt from the counts (draw positions at random); ``p`` is None.
    """
    c, k = as_counts(x, k)
    n, M = c.shape
    if M < 2:
        raise ValueError("planting moves successes between members and needs n_policies >= 2")
    target = transfer_target(delta, k)
    rng = as_rng(seed)
    spec: np.ndarray
    if specialist is None:
        spec = np.asarray(rng.integers(0, M, n))
    else:
        spec = np.asarray(specialist)
        if spec.ndim == 0:
            spec = np.full(n, int(spec))
        if spec.shape != (n,) or not np.issubdtype(spec.dtype, np.integer):
            raise ValueError(f"specialist must be None, an int, or an integer array of length n_prompts={n}")
        if (spec < 0).any() or (spec >= M).any():
            raise ValueError(f"specialist holds member indices outside [0, {M})")
        spec = spec.astype(np.int64)
    new, done = _plant_counts(c, k, target, spec, rng)
    prompts = x.prompts if isinstance(x, Pool) else None
    policies = x.policies if isinstance(x, Pool) else None
    info = {"generator": "plant", "delta": delta, "target": target, "specialist": spec, "transfers": done}
    pool = Pool.from_counts(new, k, seed=int(rng.integers(0, 2**31 - 1)), prompts=prompts, policies=policies,
                            meta={"generator": "plant", "delta": delta, "target": target})
    return Simulated(pool, None, info)


def planted(n: int = 240, M: int = 5, k: int = 16, delta: float = 0.10, *, a: float = GEOMETRY3K_AB[0],
            b: float = GEOMETRY3K_AB[1], seed=0) -> Simulated:
    """An exchangeable Beta pool with concentrated specialization planted into its counts."""
    rng = as_rng(seed)
    base = exchangeable(n, M, k, a=a, b=b, seed=rng)
    out = plant(base.pool, delta, seed=rng)
    return Simulated(out.pool, None, {**out.info, "generator": "planted", "base_p": base.p})


# ---------------------------------------------------------------------------- specialist fraction
def specialists(n: int = 240, M: int = 5, k: int = 16, f: float = 0.3, s: float = 0.10, *, a: float = GEOMETRY3K_AB[0],
                b: float = GEOMETRY3K_AB[1], seed=0) -> Simulated:
    """Specialists on a fraction of prompts (App. C.3, Table A3).

    Common rates q_i ~ Beta(a, b); each prompt independently (probability ``f``) gets one
    uniformly chosen member at min(1, q_i + s), the others keep q_i. The population gap is
    known: :func:`population_L` of ``.p``.
    """
    n = check_int(n, "n", minimum=1)
    M = check_int(M, "M", minimum=2)
    f = check_prob(f, "f")
    s = check_prob(s, "s")
    rng = as_rng(seed)
    q = _prompt_rates(n, a, b, rng)
    p = np.repeat(q[:, None], M, axis=1)
    chosen = rng.random(n) < f
    who = rng.integers(0, M, n)
    idx = np.flatnonzero(chosen)
    p[idx, who[idx]] = np.minimum(1.0, q[idx] + s)
    info = {"generator": "specialists", "f": f, "s": s, "selected": chosen, "specialist": np.where(chosen, who, -1)}
    return Simulated(sample_pool(p, k, rng, meta={"generator": "specialists", "f": f, "s": s}), p, info)


# ---------------------------------------------------------------------------- quality shifts
def _link_pair(link: str):
    if link == "logit":
        return logit, expit
    if link == "probit":
        return ndtri, ndtr
    if link == "identity":
        return (lambda v: v), (lambda v: np.clip(v, 0.0, 1.0))
    raise ValueError(f"link must be one of {LINKS}, got {link!r}")


def _shift_for_mean(q: np.ndarray, target: float, link: str) -> float:
    g, ginv = _link_pair(link)
    eta = g(q)
    lo, hi = (-1.0, 1.0) if link == "identity" else (-30.0, 30.0)
    fn = lambda d: float(np.mean(ginv(eta + d))) - target  # noqa: E731
    if fn(lo) > 0 or fn(hi) < 0:
        raise ValueError(f"no constant {link} shift gives mean rate {target} from these prompt difficulties")
    return float(brentq(fn, lo, hi, xtol=1e-12))


def quality_shift(
    n: int = 240,
    k: int = 16,
    *,
    link: str = "logit",
    strong_mean: float = 0.37,
    weak_mean: float = 0.24,
    groups: Sequence[int] = (5, 5),
    base=None,
    a: float = GEOMETRY3K_AB[0],
    b: float = GEOMETRY3K_AB[1],
    seed=0,
) -> Simulated:
    """Two groups of members whose quality differs by an effect constant on one scale (App. C.4,
    Table A4).

    Members share prompt difficulties q_i (``base``, e.g. observed prompt rates, or Beta(a, b)
    draws), clipped to [1/(2 M k), 1 - 1/(2 M k)]. Group g gets p_im = F(F^-1(q_i) + d_g) with
    F the inverse link (logit: expit; probit: the normal CDF; identity: clip to [0, 1]) and d_g
    solved so that the group's mean rate is ``strong_mean`` or ``weak_mean``. Only the logit
    case satisfies the margin-preserving null's model; the others test its sensitivity.
    """
    _link_pair(link)
    sizes = [check_int(g, "groups", minimum=1) for g in groups]
    if len(sizes) != 2:
        raise ValueError(f"groups must give the sizes of two groups, got {groups!r}")
    M = sum(sizes)
    k = check_int(k, "k", minimum=1)
    strong_mean = check_prob(strong_mean, "strong_mean", open_low=True, open_high=True)
    weak_mean = check_prob(weak_mean, "weak_mean", open_low=True, open_high=True)
    rng = as_rng(seed)
    if base is None:
        n = check_int(n, "n", minimum=1)
        q = _prompt_rates(n, a, b, rng)
    else:
        q = _check_base(base)
        n = q.size
    eps = 1.0 / (2 * M * k)
    q = np.clip(q, eps, 1 - eps)
    _, ginv = _link_pair(link)
    g, _ = _link_pair(link)
    d_strong = _shift_for_mean(q, strong_mean, link)
    d_weak = _shift_for_mean(q, weak_mean, link)
    p_strong = ginv(g(q) + d_strong)
    p_weak = ginv(g(q) + d_weak)
    p = np.concatenate([np.repeat(p_strong[:, None], sizes[0], axis=1), np.repeat(p_weak[:, None], sizes[1], axis=1)], axis=1)
    info = {"generator": "quality_shift", "link": link, "strong_mean": strong_mean, "weak_mean": weak_mean,
            "shifts": (d_strong, d_weak), "groups": tuple(sizes)}
    policies = pd.DataFrame({"name": [f"strong{j}" for j in range(sizes[0])] + [f"weak{j}" for j in range(sizes[1])],
                             "group": ["strong"] * sizes[0] + ["weak"] * sizes[1]})
    pool = sample_pool(p, k, rng, meta={"generator": "quality_shift", "link": link})
    pool = Pool.from_array(pool.verdicts, None, policies, alignment="independent", meta=dict(pool.meta))
    return Simulated(pool, p, info)


# ---------------------------------------------------------------------------- predictable specialists
@dataclasses.dataclass(frozen=True)
class PC1Rule:
    """A fixed assignment rule fitted on some prompts' features: standardise with the fitted
    ``mean`` and ``sd``, project on the fitted first principal component ``direction``, and bin
    the score at the fitted interior quantile ``edges`` (bin b = number of edges at or below the
    score, so bins run 0 .. len(edges))."""

    mean: np.ndarray
    sd: np.ndarray
    direction: np.ndarray
    edges: np.ndarray

    @property
    def n_bins(self) -> int:
        return int(self.edges.size + 1)

    def score(self, features) -> np.ndarray:
        """The first-principal-component score of each row under the fitted standardisation."""
        X = np.asarray(features, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.mean.size:
            raise ValueError(f"features must have shape [n, {self.mean.size}], got {X.shape}")
        if not np.isfinite(X).all():
            raise ValueError("features contain NaN or infinite values")
        return ((X - self.mean) / self.sd) @ self.direction

    def assign(self, features) -> np.ndarray:
        """Bin index in [0, n_bins) of each row."""
        return np.searchsorted(self.edges, self.score(features), side="right").astype(np.int64)


def _fit_pc1(features, n_bins: int) -> tuple[PC1Rule, np.ndarray]:
    """The :class:`PC1Rule` of ``features`` [n, d] with ``n_bins`` bins and the fitting rows'
    scores: column means and standard deviations (a constant column keeps sd 1), the first right
    singular vector of the standardised matrix and the n_bins-quantile boundaries of the scores."""
    X = np.asarray(features, dtype=float)
    if X.ndim != 2 or 0 in X.shape:
        raise ValueError(f"features must be a non-empty [n, d] array, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("features contain NaN or infinite values")
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    Z = (X - mu) / sd
    _, _, vt = np.linalg.svd(Z, full_matrices=False)
    score = Z @ vt[0]
    edges = np.quantile(score, np.linspace(0, 1, n_bins + 1)[1:-1])
    return PC1Rule(mu, sd, vt[0].copy(), np.asarray(edges, dtype=float)), score


def fit_pc1_rule(features, n_bins: int) -> PC1Rule:
    """Fit a :class:`PC1Rule` on ``features`` [n, d] (at least ``n_bins`` rows): column means and
    standard deviations (a constant column keeps sd 1), the first right singular vector of the
    standardised matrix and its n_bins-quantile boundaries. On the fitting rows the rule gives
    :func:`pc1_bins`."""
    rule, score = _fit_pc1(features, n_bins)
    if rule.n_bins > score.size:
        raise ValueError(f"n_bins={n_bins} bins need at least as many fitting rows; got {score.size}")
    return rule


def pc1_bins(features, n_bins: int) -> np.ndarray:
    """Bin index in [0, n_bins) of each row's score on the first principal component of the
    standardised features, with equal-count (quantile) bins: quintiles when n_bins = 5 (the
    :class:`PC1Rule` fitted on the same rows, applied to them)."""
    rule, score = _fit_pc1(features, n_bins)
    return np.searchsorted(rule.edges, score, side="right").astype(np.int64)


def predictable(n: int = 240, M: int = 5, k: int = 16, delta: float = 0.10, *, d: int = 8, a: float = GEOMETRY3K_AB[0],
                b: float = GEOMETRY3K_AB[1], seed=0, features=None) -> Simulated:
    """Predictable specialization (App. C.4): prompts carry features, the specialist of a prompt
    is its quantile bin of the first principal component (bin m -> member m), and
    round(delta k) successes are planted towards it in an exchangeable Beta pool.

    ``features`` (n x d) defaults to standard-normal draws; they are stored as prompt-table
    columns ``f0 .. f{d-1}``, and ``info["specialist"]`` holds the assignment.
    """
    n = check_int(n, "n", minimum=1)
    M = check_int(M, "M", minimum=2)
    rng = as_rng(seed)
    if features is None:
        d = check_int(d, "d", minimum=1)
        X = rng.standard_normal((n, d))
    else:
        X = np.asarray(features, dtype=float)
        if X.ndim != 2 or X.shape[0] != n:
            raise ValueError(f"features must have shape [n={n}, d], got {X.shape}")
    spec = pc1_bins(X, M)
    base = exchangeable(n, M, k, a=a, b=b, seed=rng)
    prompts = pd.DataFrame({"id": [f"p{i}" for i in range(n)], **{f"f{j}": X[:, j] for j in range(X.shape[1])}})
    pool = Pool.from_array(base.pool.verdicts, prompts, alignment="independent", meta=dict(base.pool.meta))
    out = plant(pool, delta, specialist=spec, seed=rng)
    return Simulated(out.pool, None, {**out.info, "generator": "predictable", "base_p": base.p, "features": X})


# ---------------------------------------------------------------------------- effect generators
def effect_generator(effect: str, *, n: int = 240, M: int = 5, k: int = 16, base=None, **params):
    """A callable rng -> Simulated for one of :data:`EFFECTS` at pool shape (n, M, k).

    ``exchangeable``: no parameters. ``diffuse``: ``sigma`` (centres from ``base`` prompt rates
    when given, else Beta draws). ``specialists``: ``f`` and ``s``. ``planted``: ``delta``.
    Prompt rates come from Beta(a, b) (``a``, ``b`` optional) unless ``base`` is given.
    """
    n = check_int(n, "n", minimum=1)
    M = check_int(M, "M", minimum=2)
    k = check_int(k, "k", minimum=1)
    a = params.pop("a", GEOMETRY3K_AB[0])
    b = params.pop("b", GEOMETRY3K_AB[1])
    _check_ab(a, b)
    base_q = None if base is None else _check_base(base)

    def need_keys(*keys):
        missing = [key for key in keys if key not in params]
        extra = [key for key in params if key not in keys]
        if missing or extra:
            raise ValueError(f"effect {effect!r} takes parameters {keys}; missing {missing}, unexpected {extra}")

    if effect == "exchangeable":
        need_keys()
        return lambda rng: exchangeable(n, M, k, a=a, b=b, seed=rng)
    if effect == "diffuse":
        need_keys("sigma")
        sigma = float(params["sigma"])

        def gen(rng):
            q = None if base_q is None else base_q[rng.integers(0, base_q.size, n)]
            return diffuse(n, M, k, sigma, a=a, b=b, seed=rng, base=q)

        return gen
    if effect == "specialists":
        need_keys("f", "s")
        return lambda rng: specialists(n, M, k, float(params["f"]), float(params["s"]), a=a, b=b, seed=rng)
    if effect == "planted":
        need_keys("delta")
        return lambda rng: planted(n, M, k, float(params["delta"]), a=a, b=b, seed=rng)
    raise ValueError(f"effect must be one of {EFFECTS}, got {effect!r}")


# ---------------------------------------------------------------------------- multi-dataset worlds (pool construction)
@dataclasses.dataclass(frozen=True)
class World:
    """A simulated multi-dataset pool with its true success probabilities ``p`` [n, K] and topics."""

    pool: Pool
    p: np.ndarray
    topic: np.ndarray


def latent_world(n_items: int = 300, n_models: int = 8, datasets: Sequence[str] = ("A", "B", "C", "D"), *,
                 accuracy=None, topic_sd: float = 1.0, n_topics: int = 6, dataset_sd: float = 0.5,
                 item_sd: float = 1.5, embed_dim: int = 8, embed_noise: float = 0.5, seed=0) -> World:
    """Pools of ``n_models`` models on ``n_items`` items per dataset with known success probabilities:

        logit p_im = a_m + v_{m, dataset(i)} + u_{m, topic(i)} - d_i,

    a_m the logit of ``accuracy`` (default evenly spaced 0.25..0.85, like paper 002's pool),
    v ~ N(0, dataset_sd^2), u ~ N(0, topic_sd^2) model-by-topic skills (the complementarity), d_i ~
    N(0, item_sd^2) item difficulty, topics uniform over ``n_topics``. Prompts carry ``dataset``
    and ``topic`` columns and embeddings = topic centroid + N(0, embed_noise^2) noise (so a
    nearest-neighbour router can learn topics); per-model costs rise with accuracy. R_im ~
    Bernoulli(p_im), independent given p.
    """
    n_items = check_int(n_items, "n_items", minimum=2)
    K = check_int(n_models, "n_models", minimum=2)
    n_topics = check_int(n_topics, "n_topics", minimum=1)
    embed_dim = check_int(embed_dim, "embed_dim", minimum=1)
    rng = as_rng(seed)
    acc = np.linspace(0.25, 0.85, K) if accuracy is None else np.asarray(accuracy, dtype=float)
    if acc.shape != (K,) or ((acc <= 0) | (acc >= 1)).any():
        raise ValueError(f"accuracy must be {K} values in (0, 1)")
    a = np.log(acc / (1 - acc))
    T = len(datasets)
    ds = np.repeat(np.arange(T), n_items)
    n = ds.size
    topic = rng.integers(0, n_topics, n)
    v = rng.normal(0, dataset_sd, (T, K))
    u = rng.normal(0, topic_sd, (n_topics, K))
    d = rng.normal(0, item_sd, n)
    eta = a[None, :] + v[ds] + u[topic] - d[:, None]
    p = 1 / (1 + np.exp(-eta))
    X = rng.random((n, K)) < p
    centres = rng.normal(0, 1, (n_topics, embed_dim))
    emb = centres[topic] + rng.normal(0, embed_noise, (n, embed_dim))
    prompts = pd.DataFrame({"id": [f"{datasets[int(t)]}-{i}" for t, i in zip(ds, range(n), strict=True)],
                            "dataset": [datasets[int(t)] for t in ds], "topic": topic})
    cost_m = 1.0 + 4.0 * (acc - acc.min()) / max(acc.max() - acc.min(), 1e-9)
    cost = np.broadcast_to(cost_m, (n, K)) * rng.uniform(0.8, 1.2, (n, K))
    policies = pd.DataFrame({"name": [f"model{j}" for j in range(K)]})
    pool = Pool.from_array(X[:, :, None], prompts, policies, embeddings=emb, cost=cost,
                           meta={"generator": "latent_world", "topic_sd": topic_sd, "seed": str(seed)})
    return World(pool, p, topic)
