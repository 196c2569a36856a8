"""The opportunity ladder (paper 002, Section 3.4): the plug-in rungs p* <= q_Pi <= q from the best
fixed model through the best member of a policy family to the outcome oracle, with the best rule on
a finite signal q_Z when one is given.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..._result import Result
from .outcomes import _outcomes_named, _policy_outcomes, _signal_codes


@dataclasses.dataclass(frozen=True, repr=False)
class OpportunityLadder(Result):
    """Plug-in rungs p* <= q_Pi <= q (002 Sec. 3.4), with q_Z for a finite signal when given.

    G_out = G_Pi + H_Pi holds exactly for the plug-ins. The plug-in q_Z = sum_z max_m theta^_zm is
    biased upward (a max of noisy means); certify it with :func:`finite_signal_certificate`.
    """

    n: int
    best_fixed: float
    best_fixed_name: str
    best_family: float
    best_family_name: str
    signal: float
    oracle: float

    @property
    def G_out(self) -> float:
        return self.oracle - self.best_fixed

    @property
    def G_Pi(self) -> float:
        return self.best_family - self.best_fixed

    @property
    def H_Pi(self) -> float:
        return self.oracle - self.best_family

    @property
    def G_Z(self) -> float:
        return self.signal - self.best_fixed

    def frame(self) -> pd.DataFrame:
        rows = [
            ("best fixed model p*", self.best_fixed, self.best_fixed_name),
            ("best family member q_Pi", self.best_family, self.best_family_name),
        ]
        if not math.isnan(self.signal):
            rows.append(("best rule on the signal q_Z", self.signal, "per-level best model"))
        rows.append(("outcome oracle q", self.oracle, "oracle"))
        df = pd.DataFrame(rows, columns=["rung", "accuracy", "policy"])
        df["gain_over_best_fixed"] = df["accuracy"] - self.best_fixed
        df["share_of_G_out"] = df["gain_over_best_fixed"] / self.G_out if self.G_out > 0 else np.nan
        return df


def opportunity_ladder(R, choices=None, signal=None, *, model_names=None, policy_names=None) -> OpportunityLadder:
    """The opportunity ladder from test outcomes ``R`` bool[n, K], router ``choices`` and a finite ``signal``."""
    X, mnames = _outcomes_named(R, model_names)
    n, K = X.shape
    S1, n1 = _policy_outcomes(X, choices, policy_names if not isinstance(choices, Mapping) else None)
    S = np.concatenate([X, S1], axis=1)
    names = mnames + list(n1)
    s = S.mean(axis=0)
    c = X.mean(axis=0)
    qz = math.nan
    if signal is not None:
        codes, levels = _signal_codes(signal, n, None)
        onehot = np.zeros((n, len(levels)), dtype=np.int64)
        onehot[np.arange(n), codes] = 1
        qz = float((onehot.T @ X.astype(np.int64)).max(axis=1).sum() / n)
    return OpportunityLadder(
        n=n,
        best_fixed=float(c.max()),
        best_fixed_name=mnames[int(np.argmax(c))],
        best_family=float(s.max()),
        best_family_name=names[int(np.argmax(s))],
        signal=qz,
        oracle=float(X.any(axis=1).mean()),
    )
