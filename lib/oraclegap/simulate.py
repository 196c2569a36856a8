"""Pools with known population truth (arXiv 2609.32996, Section 3 and App. C).

Every generator returns a :class:`Simulated`: the sampled :class:`~oraclegap.pool.Pool` and
the true success probabilities ``p[n, M]`` it was drawn from, so population coverage, D and L
(:func:`oraclegap.coverage.coverage_from_rates`) are known exactly. Draws within a cell are
independent Bernoulli(p_im); randomness only through ``seed`` (an int or a Generator).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import expit, logit

from ._validate import as_rng, check_int
from .pool import Pool

__all__ = ["Simulated", "GEOMETRY3K_AB", "sample_pool", "exchangeable", "diffuse"]

#: The Beta prompt-rate prior fitted on Geometry3K in arXiv 2609.32996 (App. B.1).
GEOMETRY3K_AB = (0.347, 0.601)


@dataclasses.dataclass(frozen=True)
class Simulated:
    """A sampled pool and the truth behind it."""

    pool: Pool
    p: np.ndarray  # true success probabilities [n, M]
    info: dict = dataclasses.field(default_factory=dict)


def sample_pool(p, k: int, seed=0, *, alignment: str = "independent", meta: dict | None = None) -> Pool:
    """Draw k independent Bernoulli(p_im) verdicts per cell of ``p[n, M]``."""
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or 0 in p.shape:
        raise ValueError(f"p must be a non-empty [n, M] array, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p must hold probabilities in [0, 1]")
    k = check_int(k, "k", minimum=1)
    rng = as_rng(seed)
    v = rng.random((p.shape[0], p.shape[1], k)) < p[:, :, None]
    return Pool.from_array(v, alignment=alignment, meta=dict(meta or {}))


def _prompt_rates(n: int, a: float, b: float, rng) -> np.ndarray:
    if not (a > 0 and b > 0):
        raise ValueError(f"Beta parameters must be positive, got a={a}, b={b}")
    return rng.beta(a, b, size=n)


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
) -> Simulated:
    """Diffuse differences: logit p_im = logit p_i + sigma * z_im, z_im ~ N(0, 1) independent.

    Prompt rates p_i ~ Beta(a, b) are clipped to [1e-4, 1 - 1e-4] before the perturbation so
    that every member's log-odds is finite. ``sigma = 0`` gives the exchangeable world.
    """
    n = check_int(n, "n", minimum=1)
    M = check_int(M, "M", minimum=1)
    if not (sigma >= 0):
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    rng = as_rng(seed)
    base = np.clip(_prompt_rates(n, a, b, rng), 1e-4, 1 - 1e-4)
    p = expit(logit(base)[:, None] + sigma * rng.standard_normal((n, M)))
    pool = sample_pool(p, k, rng, meta={"generator": "diffuse", "sigma": sigma, "a": a, "b": b})
    return Simulated(pool, p, {"generator": "diffuse", "sigma": sigma, "a": a, "b": b})
