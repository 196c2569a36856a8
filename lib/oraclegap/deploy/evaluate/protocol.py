"""What a router evaluation scores and on which prompts: the outcome of each choice (accuracy at
k = 1, coverage at tau at k > 1), the routers' training targets, and the calibration/test
protocols (a 50/50 or named split, or K-fold cross-fitting).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._rng import stream as named_stream
from ..._validate import check_int, check_tau
from ...pool import Pool, check_pool
from ...stats.certify import random_halves

TARGETS = ("rate", "covered")


def outcome_matrix(pool: Pool, tau=None) -> tuple[np.ndarray, float]:
    """O bool[n, M] scored per choice, and the threshold used for the routing identity.

    k = 1: O = the verdicts (``tau`` is ignored; any tau in (0, 1] gives need = 1, reported as 1).
    k > 1: O_im = 1[c_im >= need(tau, k)]; ``tau`` is required. The outcomes are
    :meth:`oraclegap.pool.Pool.outcomes`.
    """
    check_pool(pool)
    if pool.k == 1:
        return pool.outcomes(), 1.0
    if tau is None:
        raise ValueError(
            f"the pool has k={pool.k} draws per cell: pass tau (routers are scored by coverage "
            "at tau)"
        )
    t = check_tau(tau)
    return pool.outcomes(tau=t), t


def router_targets(pool: Pool, tau=None, target: str = "rate") -> np.ndarray:
    """Per-policy training targets float[n, M]: k = 1 the verdicts; k > 1 ``"rate"`` c_im / k
    (000 fits its routers to success rates) or ``"covered"`` the coverage indicators at tau."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if pool.k == 1:
        return pool.verdicts[:, :, 0].astype(float)
    if target == "rate":
        return pool.rates()
    return outcome_matrix(pool, tau)[0].astype(float)


@dataclasses.dataclass(frozen=True)
class Protocol:
    """Calibration/test folds: ``folds`` is a list of (calibration positions, test positions);
    ``eval_idx`` the prompts scored (the test part of a split, every prompt under cross-fitting)."""

    mode: str  # "split" or "cv"
    name: str
    folds: tuple
    eval_idx: np.ndarray
    seed: int | None

    @property
    def n_eval(self) -> int:
        """Number of prompts scored."""
        return int(self.eval_idx.size)

    def describe(self) -> str:
        """One line: the protocol, its sizes and its seed."""
        if self.mode == "cv":
            return f"{len(self.folds)}-fold cross-fitting (seed {self.seed})"
        cal = self.folds[0][0].size
        return f"{self.name} split: {cal} calibration / {self.n_eval} test prompts" + (
            f" (seed {self.seed})" if self.seed is not None else ""
        )


def make_protocol(
    pool: Pool, *, cv: int | None = 5, split: str | None = None, seed: int = 0
) -> Protocol:
    """A 50/50 split (``split="half"``, by ``seed``), a named split (``split=NAME``: those prompts
    are the test part) or ``cv``-fold cross-fitting (folds by ``seed``)."""
    n = pool.n_prompts
    seed = check_int(seed, "seed", minimum=0)
    if split is not None:
        if not isinstance(split, str) or not split:
            raise TypeError(
                "split must be 'half' or the name of a split in the pool's prompt table"
            )
        if split == "half":
            if n < 2:
                raise ValueError("a 50/50 split needs at least 2 prompts")
            test = random_halves(n, named_stream(seed, "deploy.split_half"))
            s = seed
        else:
            if split not in pool.splits:
                raise ValueError(
                    f"unknown split {split!r}; this pool has splits "
                    f"{pool.splits or '(none set)'}; or use split='half'"
                )
            test = (pool.prompts["split"].astype(str) == split).to_numpy()
            s = None
        cal = np.flatnonzero(~test)
        tst = np.flatnonzero(test)
        if cal.size == 0:
            raise ValueError(
                f"the calibration split has no prompts: every prompt is in the test split {split!r}"
            )
        return Protocol("split", split, ((cal, tst),), tst, s)
    if cv is None:
        raise ValueError("pass cv=K (cross-fitting) or split='half' / split=NAME")
    cv = check_int(cv, "cv", minimum=2)
    if cv > n:
        raise ValueError(f"cv={cv} folds need at least {cv} prompts; the pool has {n}")
    perm = named_stream(seed, "deploy.cv_folds").permutation(n)
    fold = np.empty(n, dtype=int)
    fold[perm] = np.arange(n) % cv
    folds = tuple((np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(cv))
    return Protocol("cv", f"cv{cv}", folds, np.arange(n), seed)
