"""The results of the null tests: one randomisation test (:class:`NullTest`: the observed
statistic, the null draws, their mean, 90% band, upper and lower tail p and the excess), a test not
run because its null is degenerate (:class:`SkippedTest`), the margin-preserving chain's diagnostics
(:class:`ChainDiagnostics`) and the tests of one call together (:class:`NullTests`), with
:func:`tests_frame` for a tidy frame of many.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..._result import Interval, Result
from ..._validate import tau_key
from ..multiplicity import walk_tests
from .tables import STATISTICS, _check_choice

_P_CONVENTIONS = ("paper", "plus-one")
#: The null band of every test: the draws' 5th to 95th percentiles.
BAND_LEVEL = 0.90
BAND_METHOD = "null draws' 5th-95th percentiles"
_TOL = 1e-9


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class NullTest(Result):
    """One randomisation test: an observed statistic against draws from a reference law.

    ``statistic_name`` names the statistic (one of :data:`~oraclegap.stats.nulls.STATISTICS`, or a
    diagnostic's name such as ``rise_L_2_to_5``), ``observed`` is its value on the data and
    ``draws`` its values under the reference law ``null``. ``mean`` is the null mean, ``band``
    the 5th-95th percentile range of the draws as an :class:`~oraclegap._result.Interval` around
    the null mean at level 0.90 (where 90% of randomised statistics fall; not an interval for a
    population quantity), ``p`` the upper-tail
    fraction of draws >= observed (``p_convention="plus-one"``: (1 + #)/(1 + B)), ``p_lower`` the
    fraction <= observed, ``excess`` = observed - mean. ``tau`` is NaN for threshold-free
    statistics. ``ess`` is the effective sample size of the draws (the draw count for
    independent draws), ``acceptance`` the chain's fraction of proposals that changed the table.
    """

    _repr_fields = ("p", "observed", "mean", "band", "excess", "p_lower", "statistic_name", "tau",
                    "null", "draws", "p_convention", "ess", "acceptance")

    statistic_name: str
    tau: float
    null: str
    observed: float
    draws: np.ndarray
    p_convention: str = "plus-one"
    ess: float | None = None
    acceptance: float | None = None
    mean: float = dataclasses.field(init=False)
    band: Interval = dataclasses.field(init=False)
    p: float = dataclasses.field(init=False)
    p_lower: float = dataclasses.field(init=False)
    excess: float = dataclasses.field(init=False)

    def __post_init__(self):
        d = np.asarray(self.draws, dtype=float).ravel()
        if d.size == 0:
            raise ValueError("draws is empty; a null test needs at least one null draw")
        if not np.isfinite(d).all():
            raise ValueError("draws contain NaN or infinite values")
        _check_choice(self.p_convention, "p_convention", _P_CONVENTIONS)
        d = d.copy()
        d.setflags(write=False)
        obs = float(self.observed)
        ge = int((d >= obs - _TOL).sum())
        le = int((d <= obs + _TOL).sum())
        B = d.size
        if self.p_convention == "paper":
            p, pl = ge / B, le / B
        else:
            p, pl = (1 + ge) / (1 + B), (1 + le) / (1 + B)
        lo, hi = np.percentile(d, [5, 95])
        mean = float(d.mean())
        for name, val in (
            ("draws", d),
            ("observed", obs),
            ("tau", float("nan") if self.tau is None else float(self.tau)),
            ("mean", mean),
            ("band", Interval.of(mean, lo, hi, BAND_LEVEL, BAND_METHOD)),
            ("p", float(p)),
            ("p_lower", float(pl)),
            ("excess", obs - mean),
        ):
            object.__setattr__(self, name, val)

    @property
    def n_draws(self) -> int:
        return int(self.draws.size)

    @property
    def label(self) -> str:
        t = "" if math.isnan(self.tau) else f" tau={self.tau:g}"
        return f"{self.statistic_name}{t} [{self.null}]"

    def _summary(self) -> str:
        return f"NullTest({self.label}: observed {self.observed:.4g}, p {self.p:.4g})"

    def frame(self) -> pd.DataFrame:
        """One tidy row (the draws themselves are left out)."""
        return pd.DataFrame(
            [
                {
                    "statistic": self.statistic_name,
                    "tau": self.tau,
                    "null": self.null,
                    "observed": self.observed,
                    "mean": self.mean,
                    "band_lo": self.band.lo,
                    "band_hi": self.band.hi,
                    "p": self.p,
                    "p_lower": self.p_lower,
                    "excess": self.excess,
                    "n_draws": self.n_draws,
                    "ess": np.nan if self.ess is None else self.ess,
                    "acceptance": np.nan if self.acceptance is None else self.acceptance,
                }
            ]
        )

    def to_dict(self) -> dict:
        """JSON-ready summary: mean, band, p, p_lower, excess (and ess/acceptance when known)."""
        out = {"mean": self.mean, "band": [self.band.lo, self.band.hi], "p": self.p, "p_lower": self.p_lower,
               "excess": self.excess, "n_draws": self.n_draws}
        if self.ess is not None:
            out["ess"] = self.ess
        if self.acceptance is not None:
            out["acceptance"] = self.acceptance
        return out


def tests_frame(results) -> pd.DataFrame:
    """A tidy frame from many results: NullTest objects, containers with ``.tests``, or lists of either."""
    rows = [t.frame() for t in walk_tests(results, lambda t: isinstance(t, NullTest),
                                          "NullTest objects (or containers of them)")]
    if not rows:
        raise ValueError("results holds no tests")
    return pd.concat(rows, ignore_index=True)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ChainDiagnostics(Result):
    """How the margin-preserving chain ran: proposals, acceptance (fraction of proposals that
    changed the table), and the effective sample size of each retained statistic."""

    move: str
    n_chains: int
    burn_in: int
    thin: int
    n_movable: int
    proposals: int
    acceptance: float
    chain_acceptance: tuple  # per chain, over its burn-in and sampling proposals
    ess: dict  # (statistic, tau) -> ESS over all chains

    def frame(self) -> pd.DataFrame:
        rows = [
            {"statistic": s, "tau": t, "ess": e, "acceptance": self.acceptance, "move": self.move,
             "n_chains": self.n_chains, "burn_in": self.burn_in, "thin": self.thin}
            for (s, t), e in self.ess.items()
        ]
        return pd.DataFrame(rows)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class NullTests(Result):
    """The tests of several statistics and thresholds under one or both nulls.

    ``tests`` holds the tests that ran; ``skipped`` the degenerate ones that did not (each a
    :class:`SkippedTest` with its reason and what applies instead); ``notes`` remarks such as
    thresholds that give the same count rule (the same test repeated).
    """

    _repr_fields = ("p_values", "n_prompts", "n_policies", "k", "n_degenerate", "tests", "skipped",
                    "notes", "chain")

    tests: tuple
    chain: ChainDiagnostics | None
    n_prompts: int
    n_policies: int
    k: int
    n_degenerate: int
    skipped: tuple = ()
    notes: tuple = ()

    @property
    def p_values(self) -> dict:
        """{label: p} of every test that ran, in order (labels as :attr:`NullTest.label`)."""
        return {t.label: t.p for t in self.tests}

    def frame(self) -> pd.DataFrame:
        """One row per test that ran (see :meth:`skipped_frame` for the skipped ones)."""
        if not self.tests:
            raise ValueError("no test ran: every requested test is degenerate; see .skipped for the reasons")
        return tests_frame(self.tests)

    def skipped_frame(self) -> pd.DataFrame:
        """One row per skipped test: statistic, tau, null, observed, short label, reason, instead."""
        cols = ["statistic", "tau", "null", "observed", "skipped", "reason", "instead"]
        if not self.skipped:
            return pd.DataFrame(columns=cols)
        return pd.concat([t.frame() for t in self.skipped], ignore_index=True)[cols]

    def get(self, statistic: str, tau=None, null: str = "redeal") -> NullTest:
        """The test of ``statistic`` at ``tau`` (ignored for ``pass1``) under ``null``.

        Raises ``KeyError`` when there is no such test; for a skipped test the message says why.
        """
        for t in self.tests:
            if t.statistic_name != statistic or t.null != null:
                continue
            if math.isnan(t.tau) or (tau is not None and abs(t.tau - float(tau)) < 1e-12):
                return t
        for t in self.skipped:
            if t.statistic_name == statistic and t.null == null and (
                    math.isnan(t.tau) or (tau is not None and abs(t.tau - float(tau)) < 1e-12)):
                raise KeyError(f"the test of {statistic!r} at tau={tau!r} under {null!r} was skipped: {t.reason}; "
                               f"instead: {t.instead}")
        raise KeyError(f"no test of {statistic!r} at tau={tau!r} under {null!r}")

    def is_skipped(self, statistic: str, tau=None, null: str = "redeal") -> SkippedTest | None:
        """The :class:`SkippedTest` for this test, or None when it ran (or was not requested)."""
        for t in self.skipped:
            if t.statistic_name == statistic and t.null == null and (
                    math.isnan(t.tau) or (tau is not None and abs(t.tau - float(tau)) < 1e-12)):
                return t
        return None

    def wide(self) -> pd.DataFrame:
        """One row per (statistic, tau): observed, then mean/band/p/p_lower/excess per null.

        Skipped tests leave their null's columns empty and are named, with a short reason, in
        a ``skipped`` column (present only when some test was skipped).
        """
        cols = ["mean", "band_lo", "band_hi", "p", "p_lower", "excess"]
        order = []
        for t in list(self.tests) + list(self.skipped):
            key = (t.statistic_name, -1.0 if math.isnan(t.tau) else t.tau)
            if key not in order:
                order.append(key)
        first = {key: i for i, key in enumerate(order)}
        rank = {key: i for i, key in enumerate(sorted(order, key=lambda kt: (STATISTICS.index(kt[0]), first[kt])))}
        obs: dict[tuple[str, float], float] = {}
        for t in list(self.tests) + list(self.skipped):
            obs.setdefault((t.statistic_name, -1.0 if math.isnan(t.tau) else t.tau), t.observed)
        out = pd.DataFrame([{"statistic": s_, "tau": t_, "observed": obs[(s_, t_)]} for s_, t_ in order])
        nulls_seen = list(dict.fromkeys([t.null for t in self.tests] + [t.null for t in self.skipped]))
        for null in nulls_seen:
            vals = {(t.statistic_name, -1.0 if math.isnan(t.tau) else t.tau):
                    [t.mean, t.band.lo, t.band.hi, t.p, t.p_lower, t.excess] for t in self.tests if t.null == null}
            arr = np.array([vals.get(key, [np.nan] * len(cols)) for key in order], dtype=float)
            for i, c in enumerate(cols):
                out[f"{null}_{c}"] = arr[:, i]
        if self.skipped:
            notes: dict = {}
            for t in self.skipped:
                key = (t.statistic_name, -1.0 if math.isnan(t.tau) else t.tau)
                notes.setdefault(key, []).append(f"{t.null}: {t.short}")
            out["skipped"] = ["; ".join(notes.get(key, [])) for key in order]
        out["_rank"] = [rank[key] for key in order]
        out = out.sort_values("_rank", kind="stable").drop(columns="_rank").reset_index(drop=True)
        out["tau"] = out["tau"].where(out["tau"] >= 0, np.nan)
        return out

    def to_dict(self) -> dict:
        """JSON-ready: per tau (exact keys ``repr(float(tau))``) and statistic, ``observed`` and per
        null its summary, or ``{"skipped": true, "reason", "instead"}``; chain diagnostics; notes."""
        out: dict = {"taus": {}, "pass1": {}}
        for t in list(self.tests) + list(self.skipped):
            if math.isnan(t.tau):
                slot = out["pass1"]
            else:
                slot = out["taus"].setdefault(tau_key(t.tau), {}).setdefault(t.statistic_name, {})
            slot["observed"] = t.observed
            slot[t.null] = t.to_dict()
        if not out["pass1"]:
            del out["pass1"]
        if self.chain is not None:
            ch = self.chain
            out["chain"] = {
                "move": ch.move, "n_chains": ch.n_chains, "burn_in": ch.burn_in, "thin": ch.thin,
                "proposals": ch.proposals, "acceptance": ch.acceptance,
                "ess": {f"{s}" + ("" if math.isnan(tt) else f"@{tau_key(tt)}"): e for (s, tt), e in ch.ess.items()},
            }
        if self.skipped:
            out["skipped"] = [{"statistic": t.statistic_name, "tau": None if math.isnan(t.tau) else t.tau,
                               "null": t.null, "reason": t.reason, "instead": t.instead}
                              for t in self.skipped]
        if self.notes:
            out["notes"] = list(self.notes)
        out["pool"] = {"n_prompts": self.n_prompts, "n_policies": self.n_policies, "k": self.k, "n_degenerate": self.n_degenerate}
        return out


@dataclasses.dataclass(frozen=True, repr=False)
class SkippedTest(Result):
    """A test that was not run because its null is degenerate: the statistic is a function of
    what the null holds fixed, so every null draw equals the observed value and p = 1 by
    construction. ``statistic_name`` names the statistic and ``observed`` is its value;
    ``reason`` says why, ``short`` is a label for tables, ``instead`` says what does apply."""

    statistic_name: str
    tau: float
    null: str
    observed: float
    reason: str
    short: str
    instead: str

    @property
    def label(self) -> str:
        t = "" if math.isnan(self.tau) else f" tau={self.tau:g}"
        return f"{self.statistic_name}{t} [{self.null}]"

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"statistic": self.statistic_name, "tau": self.tau, "null": self.null,
                              "observed": self.observed, "skipped": self.short, "reason": self.reason,
                              "instead": self.instead}])

    def to_dict(self) -> dict:
        return {"skipped": True, "reason": self.reason, "instead": self.instead}
