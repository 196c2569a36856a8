"""Cost-aware utilities (paper 002, Appendix C): U_m = R_m - lambda*C_m with normalised costs, for
the best fixed model, the best rule on a finite signal and the oracle, over a grid of lambda.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._result import Result
from ..._validate import check_cost
from ...pool import Pool
from .outcomes import _as_outcomes, _names, _signal_codes


@dataclasses.dataclass(frozen=True, repr=False)
class CostUtilities(Result):
    """U_m = R_m - lambda*C_m with normalised costs C in [0, 1] (002 App. C), over a grid of lambda.

    fixed = max_m E U_m (of the best fixed member at that lambda, ``best_member`` its name),
    signal = E max_m E[U_m | Z] (plug-in, when a finite signal is given), oracle = E max_m U_m.
    fixed <= signal <= oracle in the population; the plug-ins keep fixed <= signal <= oracle
    exactly.
    """

    lambdas: np.ndarray
    fixed: np.ndarray
    best_member: tuple
    signal: np.ndarray | None
    oracle: np.ndarray
    oracle_accuracy: np.ndarray
    oracle_cost: np.ndarray
    fixed_accuracy: np.ndarray
    fixed_cost: np.ndarray
    cost_scale: float

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(
            {
                "lambda": self.lambdas,
                "fixed": self.fixed,
                "best_member": list(self.best_member),
                "fixed_accuracy": self.fixed_accuracy,
                "fixed_cost": self.fixed_cost,
                "oracle": self.oracle,
                "oracle_accuracy": self.oracle_accuracy,
                "oracle_cost": self.oracle_cost,
            }
        )
        if self.signal is not None:
            df.insert(5, "signal", self.signal)
        return df


def _normalized_costs(cost, n: int, K: int, normalize: str) -> tuple[np.ndarray, float]:
    """Checked costs [n, K] (:func:`oraclegap._validate.check_cost`) in the units of App. C, and
    the divisor: ``"max"`` divides by the largest cost (1 when every cost is 0), so C lies in
    [0, 1]; ``"none"`` requires costs already in [0, 1] (divisor 1)."""
    C = check_cost(cost, n, K)
    if normalize == "max":
        scale = float(C.max()) if C.max() > 0 else 1.0
        return C / scale, scale
    if normalize == "none":
        if C.max() > 1:
            raise ValueError("with normalize='none' costs must already lie in [0, 1]")
        return C, 1.0
    raise ValueError(f"normalize must be 'max' or 'none', got {normalize!r}")


def cost_utilities(R, cost, lambdas, *, signal=None, normalize: str = "max", model_names=None,
                   ties: str = "index") -> CostUtilities:
    """Cost-aware fixed, signal and oracle utilities for each lambda >= 0.

    ``cost``: per-item-per-model cost [n, K] (or per-model [K]); ``normalize="max"`` divides by
    the largest cost so C lies in [0, 1] (``cost_scale`` records the divisor), ``"none"``
    requires costs already in [0, 1]. Accuracy and normalised cost of the chosen models are
    reported beside each utility. Utilities do not depend on how the oracle breaks ties, but
    its accuracy and cost do (at lambda = 0 every correct model ties): ``ties="index"`` picks
    the lowest index, ``"cheapest"`` the cheapest tied model (the limit lambda -> 0+),
    ``"dearest"`` the most expensive one, so the two bracket what any tie rule pays.
    """
    if isinstance(R, Pool):
        if model_names is None:
            model_names = R.policy_names
        if cost is None:
            cost = R.cost
    X = _as_outcomes(R)
    n, K = X.shape
    mnames = _names(model_names, K, "model_names", "m")
    C, scale = _normalized_costs(cost, n, K, normalize)
    lam = np.atleast_1d(np.asarray(lambdas, dtype=float))
    if lam.ndim != 1 or lam.size == 0 or not np.isfinite(lam).all() or (lam < 0).any():
        raise ValueError("lambdas must be a non-empty 1-d sequence of finite values >= 0")
    if ties not in ("index", "cheapest", "dearest"):
        raise ValueError(f"ties must be 'index', 'cheapest' or 'dearest', got {ties!r}")
    Xf = X.astype(float)
    U = Xf[None] - lam[:, None, None] * C[None]  # [Λ, n, K]
    mean_u = U.mean(axis=1)  # [Λ, K]
    fm = mean_u.argmax(axis=1)
    if ties == "index":
        pick = U.argmax(axis=2)  # [Λ, n]
    else:  # among the maximisers of U, the cheapest (or dearest) model; index breaks remaining ties
        best = U >= U.max(axis=2, keepdims=True) - 1e-12
        key = np.where(best, -C[None] if ties == "cheapest" else C[None], -np.inf)
        pick = key.argmax(axis=2)
    rows = np.arange(n)
    sig = None
    if signal is not None:
        codes, levels = _signal_codes(signal, n, None)
        onehot = np.zeros((n, len(levels)))
        onehot[rows, codes] = 1
        cell_u = np.einsum("nj,lnk->ljk", onehot, U)  # sums per level
        sig = cell_u.max(axis=2).sum(axis=1) / n
    return CostUtilities(
        lambdas=lam,
        fixed=mean_u.max(axis=1),
        best_member=tuple(mnames[j] for j in fm),
        signal=sig,
        oracle=U.max(axis=2).mean(axis=1),
        oracle_accuracy=Xf[rows[None, :], pick].mean(axis=1),
        oracle_cost=C[rows[None, :], pick].mean(axis=1),
        fixed_accuracy=Xf.mean(axis=0)[fm],
        fixed_cost=C.mean(axis=0)[fm],
        cost_scale=scale,
    )
