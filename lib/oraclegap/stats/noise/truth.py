"""Paper 001's decomposition as point values: the population truth for known success rates
p[n, M] with independent draws (O_exp = O_repro + Delta, best-of-K, the information ladder, the
rescue probability, the Frechet bounds) and the plug-in decomposition of a pool's draws.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._result import Result
from ..._validate import check_int
from .inputs import _form, _inputs


@dataclasses.dataclass(frozen=True, repr=False)
class OracleDecomposition(Result):
    """O_exp = O_repro + Delta, and the split of a router's gap G = G_rec + G_noise."""

    O_exp: float
    O_repro: float
    router: float
    form: str  # "truth-independent", "seed-aligned", "independent"

    @property
    def delta(self) -> float:
        return self.O_exp - self.O_repro

    @property
    def G(self) -> float:
        return self.O_exp - self.router

    @property
    def G_rec(self) -> float:
        return self.O_repro - self.router

    @property
    def noise_share(self) -> float:
        return self.delta / self.G if self.G > 0 else float("nan")

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "form": self.form,
                    "O_exp": self.O_exp,
                    "O_repro": self.O_repro,
                    "Delta": self.delta,
                    "router": self.router,
                    "G": self.G,
                    "G_rec": self.G_rec,
                    "G_noise": self.delta,
                    "noise_share": self.noise_share,
                }
            ]
        )


def _check_p(p) -> np.ndarray:
    """``p`` as a float [n, M] array of probabilities, or a ValueError."""
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or 0 in p.shape:
        raise ValueError(
            f"p must be a non-empty [n, M] array of success probabilities, got shape {p.shape}"
        )
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p must hold probabilities in [0, 1]")
    return p


def decompose_truth(p, router=None) -> OracleDecomposition:
    """Population decomposition for known rates p[n, M] with independent draws across members.

    ``router`` is the router's score; default: the best fixed member, max_m mean_i p_im.
    """
    p = _check_p(p)
    O_exp = float((1 - np.prod(1 - p, axis=1)).mean())
    O_repro = float(p.max(axis=1).mean())
    r = float(p.mean(axis=0).max()) if router is None else float(router)
    return OracleDecomposition(O_exp, O_repro, r, "truth-independent")


def decompose(x, *, form: str | None = None, router=None) -> OracleDecomposition:
    """Plug-in decomposition from a pool with k draws per cell.

    ``form="seed-aligned"`` estimates O_exp by mean_{i,j} max_m R_imj (valid for any dependence
    across members when draw j shares a seed); ``"independent"`` uses 1 - prod_m (1 - c_im/k),
    unbiased for O_exp under independence. Default: seed-aligned when the pool says so, else
    independent. O_repro is the plug-in mean_i max_m c_im/k (biased upward at small k: the
    winner's curse); ``router`` defaults to the best member's mean rate.
    """
    v, alignment, _, _ = _inputs(x)
    form = _form(form, alignment)
    rates = v.mean(axis=2)
    O_exp = (
        float(v.any(axis=1).mean())
        if form == "seed-aligned"
        else float((1 - np.prod(1 - rates, axis=1)).mean())
    )
    O_repro = float(rates.max(axis=1).mean())
    r = float(rates.mean(axis=0).max()) if router is None else float(router)
    return OracleDecomposition(O_exp, O_repro, r, form)


def best_of_k_truth(p, K: int | None = None) -> float:
    """Best-of-K on the per-prompt maximizer: mean_i [1 - (1 - max_m p_im)^K] (K defaults to M)."""
    p = _check_p(p)
    K = p.shape[1] if K is None else check_int(K, "K", minimum=1)
    return float((1 - (1 - p.max(axis=1)) ** K).mean())


@dataclasses.dataclass(frozen=True, repr=False)
class Ladder(Result):
    """The information ladder of a pool with known rates (k = 1 outcomes, one draw per member).

    p_star <= q_Z <= O_repro <= O_exp, where p_star is the best fixed member, q_Z the best
    policy that sees a finite signal Z (arXiv 002 Thm 2), O_repro the best policy that sees the
    prompt itself (Z = prompt identity) and O_exp = q the outcome oracle (arXiv 2607.03436).
    """

    p_star: float
    q_Z: float
    O_repro: float
    O_exp: float

    @property
    def G_out(self) -> float:
        return self.O_exp - self.p_star

    @property
    def G_Z(self) -> float:
        return self.q_Z - self.p_star

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "p_star": self.p_star,
                    "q_Z": self.q_Z,
                    "O_repro": self.O_repro,
                    "O_exp": self.O_exp,
                    "G_Z": self.G_Z,
                    "G_out": self.G_out,
                }
            ]
        )


def ladder_truth(p, z=None, weights=None) -> Ladder:
    """Population ladder for rates p[n, M] over a finite prompt population (weights: uniform
    unless given).

    ``z[i]`` is a finite pre-answer signal (any hashable labels); q_Z = sum_z P(z) max_m
    E[p_m | z]. Draws are independent across members, so O_exp = E[1 - prod_m (1 - p_m)].
    ``z=None`` gives the constant signal (q_Z = p_star).
    """
    p = _check_p(p)
    n = p.shape[0]
    w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n,) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be {n} non-negative numbers summing to 1")
    zz = np.zeros(n, dtype=int) if z is None else pd.factorize(pd.Series(list(z)))[0]
    if len(zz) != n:
        raise ValueError(f"z must have one label per prompt ({n}), got {len(zz)}")
    cell_mass = np.bincount(zz, weights=w)
    theta = np.stack(
        [np.bincount(zz, weights=w * p[:, m], minlength=len(cell_mass)) for m in range(p.shape[1])],
        axis=1,
    )
    q_Z = float(theta.max(axis=1).sum())  # sum_z max_m P(Z = z, R_m = 1)
    return Ladder(
        p_star=float((w @ p).max()),
        q_Z=q_Z,
        O_repro=float(w @ p.max(axis=1)),
        O_exp=float(w @ (1 - np.prod(1 - p, axis=1))),
    )


def rescue_probability(p, b: int, weights=None) -> float:
    """P(R_b = 0 and some other member R_m = 1) for independent draws with rates p[n, M].

    By arXiv 002 Prop. 1 this equals the outcome-oracle gap G_out when b is a best fixed member.
    """
    p = _check_p(p)
    n, M = p.shape
    b = check_int(b, "b", minimum=0, maximum=M - 1)
    w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=float)
    others = np.delete(p, b, axis=1)
    return float(w @ ((1 - p[:, b]) * (1 - np.prod(1 - others, axis=1))))


def frechet_truth(p) -> dict:
    """Bounds on the single-draw oracle mean_i P(union_m R_im = 1) from the marginals p[n, M] alone.

    Frechet: max_m p_im <= P(union) <= min(1, sum_m p_im) for any joint law of the draws; the
    independence form 1 - prod_m (1 - p_im) is exact under independence and an upper envelope
    under positive association (FKG). Returns the three prompt means.
    """
    p = _check_p(p)
    return {
        "lower": float(p.max(axis=1).mean()),
        "upper": float(np.minimum(1.0, p.sum(axis=1)).mean()),
        "independent": float((1 - np.prod(1 - p, axis=1)).mean()),
    }
