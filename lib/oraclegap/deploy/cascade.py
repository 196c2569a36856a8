"""A FrugalGPT-style cascade (Chen et al. 2024; paper 002 App. H, Table 8): answer with a cheap
member, escalate to the next member of a chain while a score of the current member's success
is below a threshold; the last member of the chain always answers.

The score of member m on prompt i is either a *learned scorer*: the predicted success of m from
a router family of :mod:`oraclegap.deploy.routers` fitted on calibration prompts (the prompt-level
analogue of FrugalGPT's answer scorer, which here sees no answer), or the member's own
*confidence* in its committed answer where the inputs carry one (``RouterInputs.confidence``).

Cost is counted per call: a prompt that stops at stage j pays the costs of stages 0..j, so the
calls that were escalated are paid too. The chain (default: members on the calibration
cost-accuracy Pareto front, cheapest first, ending with the most accurate, at most ``max_len``)
and the threshold (default: the calibration grid point maximising accuracy - lam * cost /
mean cost of the dearest member, scored with out-of-fold scores so the threshold does not see
in-sample predictions; ties to the cheaper point) are chosen on calibration prompts only.
Everything after the fit is vectorised over prompts and thresholds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._result import Result
from .._rng import stream as named_stream
from .._validate import check_int
from .features import RouterInputs
from .routers import check_cost, check_lambda, make_router

__all__ = ["cascade_route", "cascade_curve", "pareto_chain", "Cascade", "CascadeRun"]

DEFAULT_THRESHOLDS = np.linspace(0.0, 1.0, 41)


def _outcomes(O, name="O") -> np.ndarray:
    A = np.asarray(O, dtype=float)
    if A.ndim != 2 or A.shape[1] < 2:
        raise ValueError(f"{name} must be outcomes [n_prompts, n_members >= 2], got shape {A.shape}")
    if not np.isfinite(A).all() or (A < 0).any() or (A > 1).any():
        raise ValueError(f"{name} must hold outcomes in [0, 1]")
    return A


def _chain(chain, M: int) -> np.ndarray:
    c = np.asarray(chain)
    if c.ndim != 1 or c.size < 1 or not np.issubdtype(c.dtype, np.integer) or c.min() < 0 or c.max() >= M:
        raise ValueError(f"chain must be a non-empty sequence of member positions in [0, {M})")
    if np.unique(c).size != c.size:
        raise ValueError("chain must not repeat a member")
    return c.astype(np.int64)


def cascade_route(scores, chain, cost, thresholds):
    """Route every prompt through ``chain`` at each of ``thresholds``.

    ``scores`` float[n, M] (the score of each member), ``chain`` member positions (cheapest first),
    ``cost`` float[n, M] per call, ``thresholds`` a scalar or a 1-d grid. Stage j answers when
    score[i, chain[j]] >= t; the last stage always answers. Returns ``(member, paid, calls)``,
    each [n] for a scalar threshold or [n, T] for a grid: the answering member, the summed cost of
    every call made, and the number of calls.
    """
    S = np.asarray(scores, dtype=float)
    if S.ndim != 2:
        raise ValueError(f"scores must be [n_prompts, n_members], got shape {S.shape}")
    n, M = S.shape
    ch = _chain(chain, M)
    C = check_cost(cost, n, M)
    t = np.asarray(thresholds, dtype=float)
    scalar = t.ndim == 0
    t = np.atleast_1d(t)
    if t.ndim != 1 or not np.isfinite(t).all():
        raise ValueError("thresholds must be a finite number or a 1-d grid")
    stop = S[:, ch][:, :, None] >= t[None, None, :]  # [n, J, T]
    stop[:, -1, :] = True
    stage = stop.argmax(axis=1)  # first stage that answers, [n, T]
    paid = np.take_along_axis(np.cumsum(C[:, ch], axis=1), stage, axis=1)
    member = ch[stage]
    calls = stage + 1
    if scalar:
        return member[:, 0], paid[:, 0], calls[:, 0]
    return member, paid, calls


def cascade_curve(scores, chain, O, cost, thresholds=DEFAULT_THRESHOLDS) -> pd.DataFrame:
    """Quality and cost of the cascade at each threshold: accuracy, mean cost, mean calls, share escalated."""
    A = _outcomes(O)
    member, paid, calls = cascade_route(scores, chain, cost, np.atleast_1d(thresholds))
    acc = np.take_along_axis(A, member, axis=1).mean(axis=0)
    return pd.DataFrame(
        {
            "threshold": np.atleast_1d(thresholds).astype(float),
            "accuracy": acc,
            "cost": paid.mean(axis=0),
            "calls": calls.mean(axis=0),
            "escalated": (calls > 1).mean(axis=0),
        }
    )


def pareto_chain(acc, mean_cost, max_len: int = 3) -> np.ndarray:
    """Members on the cost-accuracy Pareto front, cheapest first, ending with the most accurate.

    A member is on the front when no member is at most as costly and strictly more accurate. With
    more than ``max_len`` front members: the cheapest, the most accurate and those between at
    evenly spaced front positions.
    """
    a, c = np.asarray(acc, dtype=float), np.asarray(mean_cost, dtype=float)
    max_len = check_int(max_len, "max_len", minimum=1)
    order = np.lexsort((-a, c))  # cheapest first, then most accurate
    front, best = [], -np.inf
    for j in order:
        if a[j] > best:
            front.append(int(j))
            best = a[j]
    if len(front) > max_len:
        pick = np.unique(np.round(np.linspace(0, len(front) - 1, max_len)).astype(int))
        front = [front[p] for p in pick]
    return np.asarray(front, dtype=np.int64)


@dataclasses.dataclass(frozen=True, repr=False)
class CascadeRun(Result):
    """A fitted cascade on prompts: answering member, cost paid and calls per prompt, and its score curve."""

    member: np.ndarray
    paid: np.ndarray
    calls: np.ndarray
    scores: np.ndarray = dataclasses.field(repr=False)

    def frame(self) -> pd.DataFrame:
        """One row per prompt: the answering member, the cost paid and the members called."""
        return pd.DataFrame({"prompt": np.arange(len(self.member)), "member": self.member,
                             "paid": self.paid, "calls": self.calls})


class Cascade:
    """FrugalGPT-style cascade (see the module docstring).

    ``scorer``: a router family name (its predicted success per member is the score) or
    ``"confidence"`` (the members' own confidence from the inputs); ``chain`` / ``threshold`` fix
    them (else chosen on calibration); ``lam`` the cost penalty of the threshold choice; ``cv``
    folds for the out-of-fold calibration scores.
    """

    def __init__(
        self,
        scorer: str = "embed_knn",
        *,
        chain=None,
        threshold=None,
        lam: float = 0.0,
        max_len: int = 3,
        thresholds=DEFAULT_THRESHOLDS,
        cv: int = 5,
        seed: int = 0,
        scorer_params=None,
    ):
        self.scorer, self.chain, self.threshold, self.lam = scorer, chain, threshold, lam
        self.max_len, self.thresholds, self.cv, self.seed, self.scorer_params = (
            max_len,
            thresholds,
            cv,
            seed,
            scorer_params,
        )

    def _scores(self, model, X: RouterInputs) -> np.ndarray:
        if self.scorer == "confidence":
            if X.confidence is None:
                raise ValueError(
                    "scorer='confidence' needs RouterInputs.confidence (each member's confidence per prompt)"
                )
            return np.asarray(X.confidence, dtype=float)
        return model.predict_utility(X)

    def fit(self, X: RouterInputs, O, cost):
        """Choose the chain and the threshold on calibration inputs ``X``, outcomes ``O`` [n, M], ``cost``."""
        if not isinstance(X, RouterInputs):
            raise TypeError(f"X must be RouterInputs, got {type(X).__name__}")
        A = _outcomes(O)
        n, M = A.shape
        if len(X) != n:
            raise ValueError(f"X describes {len(X)} prompts but O has {n}")
        C = check_cost(cost, n, M)
        lam = check_lambda(self.lam)
        cv = check_int(self.cv, "cv", minimum=2)
        acc, mc = A.mean(axis=0), C.mean(axis=0)
        self.chain_ = pareto_chain(acc, mc, self.max_len) if self.chain is None else _chain(self.chain, M)
        self.model_ = None
        if self.scorer != "confidence":
            proto = make_router(self.scorer, **dict(self.scorer_params or {}))
            self.model_ = clone(proto).fit(X, A)
            oof = np.zeros((n, M))
            fold = named_stream(self.seed, "deploy.cascade_folds").permutation(n) % min(cv, n)
            for f in range(min(cv, n)):
                tr, te = fold != f, fold == f
                if tr.sum() == 0 or te.sum() == 0:
                    continue
                oof[te] = (
                    clone(proto)
                    .fit(X.take(np.flatnonzero(tr)), A[tr])
                    .predict_utility(X.take(np.flatnonzero(te)))
                )
        else:
            oof = self._scores(None, X)
        grid = np.atleast_1d(np.asarray(self.thresholds, dtype=float))
        curve = cascade_curve(oof, self.chain_, A, C, grid)
        scale = float(mc.max()) or 1.0
        curve["utility"] = curve["accuracy"] - lam * curve["cost"] / scale
        self.calibration_curve_ = curve
        if self.threshold is None:
            best = curve.sort_values(["utility", "cost"], ascending=[False, True], kind="mergesort").iloc[0]
            self.threshold_ = float(best["threshold"])
        else:
            self.threshold_ = float(self.threshold)
        return self

    def run(self, X: RouterInputs, cost, threshold=None) -> CascadeRun:
        """Route prompts ``X`` (at the fitted threshold, or ``threshold``) with per-call ``cost``."""
        if not hasattr(self, "chain_"):
            raise ValueError("this Cascade is not fitted yet; call fit(X, O, cost) first")
        S = self._scores(self.model_, X)
        t = self.threshold_ if threshold is None else threshold
        member, paid, calls = cascade_route(S, self.chain_, cost, t)
        return CascadeRun(member, paid, calls, S)
