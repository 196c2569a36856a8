"""The family certificate (paper 002, Thm 6): simultaneous intervals for the gain G_Pi of the best
member of a finite family of frozen policies over the best fixed model, and the gap H_Pi that the
family leaves to the oracle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..._result import Interval, Result
from ..._validate import as_bool_array, check_alpha
from .binomial import _cp
from .outcomes import _outcomes_named, _policy_outcomes

#: The construction of the family certificate's intervals.
FAMILY_METHOD = "clopper-pearson, Bonferroni (Thm 6)"


@dataclasses.dataclass(frozen=True, repr=False)
class FamilyCertificate(Result):
    """002 Thm 6: simultaneous intervals ``G`` for G_Pi = q_Pi - p* and ``H`` for H_Pi = q - q_Pi.

    q_Pi is the population accuracy of the best member of a finite policy family Pi that holds
    every constant policy (L members in all); ``best_family`` is its plug-in accuracy and
    ``best_family_name`` its name, ``best_fixed`` the plug-in p*, ``oracle`` the plug-in q.
    Budget: alpha/3 to the oracle, alpha/(3K) to each fixed model, alpha/(3L) to each policy; the
    two intervals hold together with probability >= 1 - alpha (their ``level``).
    """

    _repr_fields = ("G", "H", "best_family_name", "best_family", "best_fixed", "oracle", "L", "K",
                    "n", "alpha")

    alpha: float
    n: int
    K: int
    L: int
    oracle: float
    best_fixed: float
    best_family: float
    best_family_name: str
    G: Interval
    H: Interval
    policies: pd.DataFrame = dataclasses.field(repr=False, compare=False)

    def frame(self) -> pd.DataFrame:
        """One row per quantity (G_Pi, H_Pi): value, lo, hi, level, method, with L, K, n, alpha."""
        return pd.DataFrame(
            [{"quantity": "G_Pi", **self.G.to_dict()}, {"quantity": "H_Pi", **self.H.to_dict()}]
        ).assign(L=self.L, K=self.K, n=self.n, alpha=self.alpha)


def _family_bounds(o, c, s, n, alpha: float):
    """Vectorised Thm 6 from counts: o [...], c [..., K] (fixed), s [..., L] (all policies incl. constants)."""
    c = np.asarray(c, dtype=float)
    s = np.asarray(s, dtype=float)
    K, L = c.shape[-1], s.shape[-1]
    Lq, Uq = _cp(o, n, alpha / 3)
    Lm, Um = _cp(c, n, alpha / (3 * K))
    Lp, Up = _cp(s, n, alpha / (3 * L))
    g_lo = np.maximum(0.0, Lp.max(axis=-1) - Um.max(axis=-1))
    g_hi = np.minimum(1.0, Up.max(axis=-1) - Lm.max(axis=-1))
    h_lo = np.maximum(0.0, Lq - Up.max(axis=-1))
    h_hi = np.minimum(1.0, Uq - Lp.max(axis=-1))
    return g_lo, g_hi, h_lo, h_hi, (Lp, Up)


def family_certificate(
    R,
    choices=None,
    alpha: float = 0.05,
    *,
    policy_outcomes=None,
    model_names: Sequence[str] | None = None,
    policy_names: Sequence[str] | None = None,
) -> FamilyCertificate:
    """002 Thm 6 on test outcomes ``R`` bool[n, K] for a family of frozen policies.

    ``choices``: the model each router picks per test item (int[n] or int[n, L'] or a dict
    name -> int[n]); ``policy_outcomes``: bool[n, L''] correctness of further policies whose
    outcomes are known directly (each must satisfy S <= max_m R_m pointwise). The K constant
    policies are always members, so L = K + L' + L''. The policies must have been fitted
    without the test outcomes. With probability >= 1 - alpha, simultaneously,
    G_Pi in [max(0, max_pi L_pi - max_m U_m), min(1, max_pi U_pi - max_m L_m)] and
    H_Pi in [max(0, L_q - max_pi U_pi), min(1, U_q - max_pi L_pi)].
    """
    alpha = check_alpha(alpha)
    X, mnames = _outcomes_named(R, model_names)
    n, K = X.shape
    S1, n1 = _policy_outcomes(X, choices, policy_names if not isinstance(choices, Mapping) else None)
    Y = np.asarray(X.any(axis=1))
    if policy_outcomes is not None:
        if isinstance(policy_outcomes, Mapping):
            n2 = [str(k) for k in policy_outcomes]
            S2 = np.stack([np.asarray(v) for v in policy_outcomes.values()], axis=1) if n2 else np.zeros((n, 0), dtype=bool)
        else:
            S2 = np.asarray(policy_outcomes)
            if S2.ndim == 1:
                S2 = S2[:, None]
            n2 = [f"policy{len(n1) + j}" for j in range(S2.shape[1] if S2.ndim == 2 else 0)]
        S2 = as_bool_array(S2, "policy_outcomes", ndim=2)
        if S2.shape[0] != n:
            raise ValueError(f"policy_outcomes must have n={n} rows, got {S2.shape[0]}")
        if (S2 & ~Y[:, None]).any():
            raise ValueError("policy_outcomes is right on an item where no model is right; a policy picks one of the K models")
    else:
        S2, n2 = np.zeros((n, 0), dtype=bool), []
    S = np.concatenate([X, S1, S2], axis=1)
    names = mnames + list(n1) + list(n2)
    kinds = ["constant"] * K + ["router"] * (S.shape[1] - K)
    c = X.sum(axis=0)
    s = S.sum(axis=0)
    o = int(Y.sum())
    g_lo, g_hi, h_lo, h_hi, (Lp, Up) = _family_bounds(o, c, s, n, alpha)
    L = S.shape[1]
    bp = int(np.argmax(s))
    pol = pd.DataFrame({"policy": names, "kind": kinds, "accuracy": s / n, "lo": Lp, "hi": Up})
    return FamilyCertificate(
        alpha=alpha,
        n=n,
        K=K,
        L=L,
        oracle=o / n,
        best_fixed=c.max() / n,
        best_family=s[bp] / n,
        best_family_name=names[bp],
        G=Interval.of((s.max() - c.max()) / n, g_lo, g_hi, 1.0 - alpha, FAMILY_METHOD),
        H=Interval.of((o - s.max()) / n, h_lo, h_hi, 1.0 - alpha, FAMILY_METHOD),
        policies=pol,
    )
