"""Single-draw oracle noise (arXiv 2607.03436, T.-R. Chen): O_exp = O_repro + Delta.

A pool answers prompt i with independent-in-time draws R_imj ~ Bernoulli(p_im). Three per-prompt
ceilings, averaged over prompts:

* reproducible ceiling  O_repro = mean_i max_m p_im -- the best any *single-commit* router can
  score (it commits to one member and is scored on that member's fresh draw), whatever the joint
  law of the draws;
* expected single-draw oracle  O_exp = mean_i P(max_m R_im = 1) -- what an oracle built from one
  draw per member scores in expectation. Without assuming independence across members it is
  estimated from seed-aligned draws, mean_{i,j} max_m R_imj; under independence it equals
  mean_i [1 - prod_m (1 - p_im)];
* the floor  Delta = O_exp - O_repro >= 0, since P(union) >= max P: single-draw luck that no
  single-commit router can capture.

Against any router r with score S_r: G = O_exp - S_r = G_rec + G_noise with G_rec = O_repro - S_r
and G_noise = Delta; the noise share is Delta / G. Best-of-K on the per-prompt maximizer at the
oracle's budget (K = M draws) reaches mean_i [1 - (1 - max_m p_im)^M] >= O_exp under independence.

Worked example: M = 10 members each with p = 0.1 give O_exp = 1 - 0.9^10 = 0.651 but
O_repro = 0.1, so Delta = 0.551.

This module is the first slice of the paper's machinery (population values and point estimates);
later issues add support strata, the aggregation ceiling and dependence-corrected bounds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .._validate import as_bool_array, check_int
from ..pool import Pool

__all__ = ["OracleDecomposition", "decompose_truth", "decompose", "best_of_k_truth", "Ladder", "ladder_truth", "rescue_probability"]


@dataclasses.dataclass(frozen=True)
class OracleDecomposition:
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
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or 0 in p.shape:
        raise ValueError(f"p must be a non-empty [n, M] array of success probabilities, got shape {p.shape}")
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
    if isinstance(x, Pool):
        v, alignment = x.verdicts, x.alignment
    else:
        v, alignment = as_bool_array(x, "verdicts", ndim=3), "unknown"
    if 0 in v.shape:
        raise ValueError(f"verdicts has a zero-size axis (shape {v.shape})")
    if form is None:
        form = "seed-aligned" if alignment == "seed-aligned" else "independent"
    if form not in ("seed-aligned", "independent"):
        raise ValueError(f"form must be 'seed-aligned' or 'independent', got {form!r}")
    if form == "seed-aligned" and alignment not in ("seed-aligned", "unknown"):
        raise ValueError(f"form='seed-aligned' needs seed-aligned draws; this pool is {alignment!r}")
    rates = v.mean(axis=2)
    O_exp = float(v.any(axis=1).mean()) if form == "seed-aligned" else float((1 - np.prod(1 - rates, axis=1)).mean())
    O_repro = float(rates.max(axis=1).mean())
    r = float(rates.mean(axis=0).max()) if router is None else float(router)
    return OracleDecomposition(O_exp, O_repro, r, form)


def best_of_k_truth(p, K: int | None = None) -> float:
    """Best-of-K on the per-prompt maximizer: mean_i [1 - (1 - max_m p_im)^K] (K defaults to M)."""
    p = _check_p(p)
    K = p.shape[1] if K is None else check_int(K, "K", minimum=1)
    return float((1 - (1 - p.max(axis=1)) ** K).mean())


@dataclasses.dataclass(frozen=True)
class Ladder:
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
            [{"p_star": self.p_star, "q_Z": self.q_Z, "O_repro": self.O_repro, "O_exp": self.O_exp, "G_Z": self.G_Z, "G_out": self.G_out}]
        )


def ladder_truth(p, z=None, weights=None) -> Ladder:
    """Population ladder for rates p[n, M] over a finite prompt population with weights (default uniform).

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
    theta = np.stack([np.bincount(zz, weights=w * p[:, m], minlength=len(cell_mass)) for m in range(p.shape[1])], axis=1)
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
