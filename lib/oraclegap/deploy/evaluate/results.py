"""The results of a router evaluation: one family's scores with their intervals
(:class:`RouterEvaluation`), the quality-cost analysis (:class:`CostAnalysis`) and every family
on one pool under one protocol (:class:`RouterComparison`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._result import Interval, Result, jsonable
from ...stats.certify import FamilyCertificate
from .protocol import Protocol

#: RouterEvaluation's interval fields: the name of each estimate, its ``*_ci`` field holding an
#: :class:`~oraclegap._result.Interval`; ``value``, ``value_lo`` and ``value_hi`` stay readable.
_INTERVAL_FIELDS = (
    "accuracy",
    "gain_best",
    "gain_cal",
    "G_b",
    "recovered",
    "gain_at_b",
    "gap_at_o",
)
#: The columns of RouterEvaluation.frame(), in order (every estimate and its limits, flat).
_FRAME_COLUMNS = (
    "family",
    "regime",
    "protocol",
    "tau",
    "n_eval",
    "accuracy",
    "accuracy_lo",
    "accuracy_hi",
    "best",
    "best_member",
    "gain_best",
    "gain_best_lo",
    "gain_best_hi",
    "baseline",
    "baseline_member",
    "gain_cal",
    "gain_cal_lo",
    "gain_cal_hi",
    "oracle",
    "D",
    "L",
    "e_D",
    "break_even",
    "identity_residual",
    "n10",
    "n01",
    "p_mcnemar",
    "p_holm",
    "rescue",
    "loss",
    "G_b",
    "G_b_lo",
    "recovered",
    "recovered_lo",
    "recovered_hi",
    "gain_at_b",
    "gain_at_b_lo",
    "gain_at_b_hi",
    "gap_at_o",
    "gap_at_o_lo",
    "gap_at_o_hi",
    "fit_seconds",
)


def _interval_property(name: str, part: str) -> property:
    def get(self):
        return getattr(getattr(self, f"{name}_ci"), part)

    suffix = "" if part == "value" else f" ({part} of ``{name}_ci``)"
    get.__doc__ = f"``{name}_ci.{part}``{suffix}: read-only, a flat name for the interval's part."
    return property(get)


@dataclasses.dataclass(frozen=True, repr=False)
class RouterEvaluation(Result):
    """One router family scored on the evaluated prompts (see the module docstring).

    Every estimate with an interval is an :class:`~oraclegap._result.Interval` in a ``*_ci``
    field; the flat names (``accuracy``, ``accuracy_lo``, ``accuracy_hi``, ...) stay readable.
    ``accuracy_ci`` is accuracy (k = 1) or coverage at tau (k > 1), with an exact CP interval.
    ``gain_best_ci`` (interval re-selecting the best member per resample), ``gain_cal_ci`` (paired
    interval against the calibration-selected member), ``e_D`` / ``break_even`` /
    ``identity_residual``
    from the routing identity, ``n10`` / ``n01`` / ``p_mcnemar`` / ``p_holm`` against the
    calibration-selected member, ``rescue`` / ``loss``, ``G_b_ci`` (CP interval; the frame shows its
    lower limit) and ``recovered_ci`` (NaN unless G_b's lower limit is positive), ``gain_at_b_ci`` /
    ``gap_at_o_ci`` (relative, with intervals).
    """

    family: str
    regime: str
    protocol: str
    tau: float | None
    n_eval: int
    accuracy_ci: Interval
    best: float
    best_member: str
    gain_best_ci: Interval
    baseline: float
    baseline_member: str
    gain_cal_ci: Interval
    oracle: float
    D: float
    L: float
    e_D: float
    break_even: float
    identity_residual: float
    n10: int
    n01: int
    p_mcnemar: float
    p_holm: float
    rescue: float
    loss: float
    G_b_ci: Interval
    recovered_ci: Interval
    gain_at_b_ci: Interval
    gap_at_o_ci: Interval
    fit_seconds: float
    choice: np.ndarray = dataclasses.field(repr=False, compare=False)
    utility: np.ndarray = dataclasses.field(repr=False, compare=False)

    _repr_fields = (
        "family",
        "regime",
        "protocol",
        "tau",
        "n_eval",
        "accuracy_ci",
        "best_member",
        "gain_best_ci",
        "baseline_member",
        "gain_cal_ci",
        "oracle",
        "e_D",
        "break_even",
        "n10",
        "n01",
        "p_holm",
        "G_b_ci",
        "recovered_ci",
        "gain_at_b_ci",
        "gap_at_o_ci",
    )

    for _name in _INTERVAL_FIELDS:
        locals()[_name] = _interval_property(_name, "value")
        locals()[f"{_name}_lo"] = _interval_property(_name, "lo")
        if _name != "G_b":
            locals()[f"{_name}_hi"] = _interval_property(_name, "hi")
    del _name

    @property
    def metric(self) -> str:
        """``"accuracy"`` (k = 1) or ``"coverage@tau"``."""
        return "accuracy" if self.tau is None else f"coverage@{self.tau:g}"

    def intervals(self) -> dict:
        """{estimate name: Interval} for every estimate with an interval."""
        return {n: getattr(self, f"{n}_ci") for n in _INTERVAL_FIELDS}

    def frame(self) -> pd.DataFrame:
        """One row with every estimate and its limits as flat columns (the per-prompt arrays
        left out)."""
        return pd.DataFrame([{c: getattr(self, c) for c in _FRAME_COLUMNS}])


@dataclasses.dataclass(frozen=True, repr=False)
class CostAnalysis(Result):
    """Quality-cost frontier over lambda for every family and the cost-aware summaries.

    ``frontier``: one row per (family, lambda) with quality, mean cost (pool units) and the share
    of prompts sent to the strong member. ``summary``: per family AIQ over the single members'
    cost range [cheapest, dearest mean cost], APGR and CPT(50%) for the strong-weak pair
    (``strong``, ``weak``), each with a prompt-bootstrap interval (lambdas and call shares fixed,
    resampled prompts).
    """

    _repr_fields = ("summary", "strong", "weak", "cost_range", "lambdas", "frontier", "members")

    lambdas: np.ndarray
    strong: str
    weak: str
    cost_range: tuple
    frontier: pd.DataFrame
    summary: pd.DataFrame
    members: pd.DataFrame

    def frame(self) -> pd.DataFrame:
        """The cost-aware summaries: one row per family (AIQ, APGR and CPT(50%) with intervals)."""
        return self.summary.copy()


@dataclasses.dataclass(frozen=True, repr=False)
class RouterComparison(Result):
    """Every evaluated family on one pool under one protocol, sharing bootstrap resamples.

    ``frame()`` is the router table; ``paired`` the full paired-inference frame; ``certificate``
    the family certificate (split protocols only; ``certificate_note`` says why not otherwise);
    ``cost`` the cost analysis (None without costs); ``inputs`` which inputs were used;
    ``skipped`` families that could not run and why.
    """

    evaluations: dict
    protocol: Protocol
    tau: float | None
    k: int
    alpha: float
    n_boot: int
    inputs: dict
    skipped: dict
    paired: pd.DataFrame
    certificate: FamilyCertificate | None
    certificate_note: str
    cost: CostAnalysis | None
    policy_names: tuple

    TABLE_COLUMNS = (
        "family",
        "regime",
        "accuracy",
        "gain_best",
        "gain_best_lo",
        "gain_best_hi",
        "gain_cal",
        "gain_cal_lo",
        "gain_cal_hi",
        "e_D",
        "break_even",
        "n10",
        "n01",
        "p_mcnemar",
        "p_holm",
    )

    def evaluation(self, family: str) -> RouterEvaluation:
        """The result of one family (KeyError naming the evaluated ones otherwise)."""
        if family not in self.evaluations:
            raise KeyError(
                f"family {family!r} was not evaluated; evaluated: {list(self.evaluations)}"
            )
        return self.evaluations[family]

    def full_frame(self) -> pd.DataFrame:
        """Every field of every family's :class:`RouterEvaluation`, one row per family."""
        return pd.concat([e.frame() for e in self.evaluations.values()], ignore_index=True)

    def frame(self) -> pd.DataFrame:
        """The router table: family, accuracy or coverage, gains over the threshold-specific and
        the calibration-selected best member with intervals, e_D, L/D, n10/n01, and the McNemar
        and Holm p-values."""
        df = self.full_frame()[list(self.TABLE_COLUMNS)]
        if self.tau is not None:
            df = df.rename(columns={"accuracy": f"coverage@{self.tau:g}"})
        return df

    def field_summary(self) -> pd.DataFrame:
        """Field summaries per family: Gain@B and Gap@O (and AIQ, APGR, CPT(50%) with costs)."""
        cols = [
            "family",
            "accuracy",
            "gain_at_b",
            "gain_at_b_lo",
            "gain_at_b_hi",
            "gap_at_o",
            "gap_at_o_lo",
            "gap_at_o_hi",
        ]
        df = self.full_frame()[cols]
        if self.cost is not None:
            df = df.merge(self.cost.summary, on="family", how="left")
        return df

    def summary(self) -> pd.DataFrame:
        """The same table as :meth:`field_summary`."""
        return self.field_summary()

    def to_dict(self) -> dict:
        """JSON-ready (NaN as null): the protocol, inputs, skipped families, full router rows,
        certificate and costs."""
        out = {
            "protocol": self.protocol.describe(),
            "tau": self.tau,
            "k": self.k,
            "alpha": self.alpha,
            "n_boot": self.n_boot,
            "inputs": self.inputs,
            "skipped": self.skipped,
            "routers": self.full_frame().to_dict(orient="records"),
            "certificate": None
            if self.certificate is None
            else self.certificate.frame().to_dict(orient="records"),
            "certificate_note": self.certificate_note,
        }
        if self.cost is not None:
            out["cost"] = {
                "strong": self.cost.strong,
                "weak": self.cost.weak,
                "cost_range": list(self.cost.cost_range),
                "summary": self.cost.summary.to_dict(orient="records"),
                "frontier": self.cost.frontier.to_dict(orient="records"),
            }
        return jsonable(out)
