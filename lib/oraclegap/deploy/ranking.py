"""Router families ranked with uncertainty.

Router leaderboards rank families by point estimates. :func:`rank_families` ranks them on the
paired prompt-bootstrap resamples of :mod:`oraclegap.deploy.evaluate` (every family scored on the
same resampled prompts, drawn by :func:`~oraclegap.deploy.evaluate.bootstrap_means`):

* ``rank`` -- per family an :class:`~oraclegap._result.Interval`: its value is the point rank,
  1 = best, ties sharing the better rank (competition ranking), its limits the percentile interval
  (alpha/2, 1 - alpha/2) of the family's rank over the resamples, each resample ranking all
  families again (ties shared the same way);
* ``p_first`` -- the share of resamples in which the family ranks first (ties included);
* ``p_vs_best`` / ``p_holm`` -- the exact McNemar test of the family against the point-best family
  on the same prompts (paired 0/1 outcomes), Holm-adjusted over the F - 1 comparisons
  (:func:`oraclegap.stats.multiplicity.holm`); ``indistinguishable`` -- the point-best family and
  every family whose Holm-adjusted p is >= alpha: the set that the data do not separate from the
  best at family-wise level alpha.

:func:`rank_routers` applies it to a :class:`~oraclegap.deploy.evaluate.RouterComparison` (the
per-prompt outcomes of each family's choices on the evaluated prompts).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from statsmodels.stats.contingency_tables import mcnemar

from .._result import Interval, Result, jsonable
from .._validate import check_alpha, check_int
from ..pool import Pool
from ..stats.multiplicity import holm
from .evaluate import RouterComparison, bootstrap_means, outcome_matrix

__all__ = ["RouterRanking", "rank_families", "rank_routers"]


@dataclasses.dataclass(frozen=True, repr=False)
class RouterRanking(Result):
    """Families ranked with bootstrap rank intervals and the set not distinguishable from the best."""

    families: tuple
    score: np.ndarray
    rank: tuple  # one Interval per family
    p_first: np.ndarray
    difference: np.ndarray  # score - score of the best family
    p_vs_best: np.ndarray
    p_holm: np.ndarray
    indistinguishable: np.ndarray
    best: str
    alpha: float
    n_boot: int
    n_eval: int

    _repr_fields = ("best", "tied_with_best", "families", "score", "rank", "alpha", "n_boot",
                    "n_eval")

    @property
    def tied_with_best(self) -> tuple:
        """Names of the families not distinguishable from the best (the best included), best first."""
        order = np.argsort([r.value for r in self.rank], kind="stable")
        return tuple(self.families[i] for i in order if self.indistinguishable[i])

    def frame(self) -> pd.DataFrame:
        """One row per family, best first: score, the rank (``value``) with its interval (lo, hi,
        level, method), share ranked first, difference to the best, McNemar p against the best,
        Holm p, indistinguishable."""
        ranks = pd.DataFrame([r.to_dict() for r in self.rank],
                             columns=["value", "lo", "hi", "level", "method"])
        tests = pd.DataFrame({"p_first": self.p_first, "difference": self.difference,
                              "p_vs_best": self.p_vs_best, "p_holm": self.p_holm,
                              "indistinguishable": self.indistinguishable})
        head = pd.DataFrame({"family": list(self.families), "score": self.score})
        df = pd.concat([head, ranks, tests], axis=1)
        return df.sort_values(["value", "family"], kind="stable").reset_index(drop=True)

    def to_dict(self) -> dict:
        """JSON-ready: the best family, the indistinguishable set and the rows (NaN as null)."""
        return jsonable({"best": self.best, "alpha": self.alpha, "n_boot": self.n_boot,
                         "tied_with_best": list(self.tied_with_best), "rows": self.frame()})


def _competition_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks of the rows of x[..., F] (higher is better): 1 + the number of strictly better families."""
    return rankdata(-x, method="min", axis=-1).astype(np.int64)


def rank_families(S, families, *, n_boot: int = 2000, seed=0, alpha: float = 0.05) -> RouterRanking:
    """Rank F families from their paired per-prompt 0/1 outcomes ``S`` [n, F] (see the module docstring)."""
    A = np.asarray(S)
    if A.ndim != 2 or A.shape[0] < 1 or A.shape[1] < 1:
        raise ValueError(f"S must be a [n_prompts, n_families] array of 0/1 outcomes, got shape {A.shape}")
    if A.dtype != bool:
        if not np.isin(A, (0, 1)).all():
            raise ValueError("S must hold 0/1 outcomes (one per prompt and family)")
        A = A.astype(bool)
    names = tuple(str(f) for f in families)
    if len(names) != A.shape[1] or len(set(names)) != len(names):
        raise ValueError(f"families must be {A.shape[1]} distinct names (one per column of S), got {list(families)}")
    alpha = check_alpha(alpha)
    n_boot = check_int(n_boot, "n_boot", minimum=100)
    n, F = A.shape
    score = A.mean(axis=0)
    rank = _competition_ranks(score)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    draws = bootstrap_means(A.astype(float), n_boot, rng)  # [n_boot, F], the same resampled prompts for all families
    R = _competition_ranks(draws)
    lo = np.quantile(R, alpha / 2, axis=0, method="inverted_cdf").astype(np.int64)
    hi = np.quantile(R, 1 - alpha / 2, axis=0, method="inverted_cdf").astype(np.int64)
    p_first = (R == 1).mean(axis=0)
    b = int(np.argmin(rank))  # the first family with the best score
    base = A[:, b]
    n10 = (A & ~base[:, None]).sum(axis=0)
    n01 = (~A & base[:, None]).sum(axis=0)
    p = np.ones(F)
    for j in range(F):  # one exact binomial test per family (F is small)
        if j != b and n10[j] + n01[j] > 0:
            p[j] = float(mcnemar([[0, int(n10[j])], [int(n01[j]), 0]], exact=True).pvalue)
    others = np.arange(F) != b
    p_holm = np.full(F, np.nan)
    p_holm[others] = holm(p[others]) if others.any() else []
    p[b] = np.nan
    indist = np.where(others, p_holm >= alpha, True)
    ranks = tuple(Interval.of(int(r), int(a), int(b), 1 - alpha, "bootstrap percentile of the rank")
                  for r, a, b in zip(rank, lo, hi, strict=True))
    return RouterRanking(families=names, score=score, rank=ranks, p_first=p_first,
                         difference=score - score[b], p_vs_best=p, p_holm=p_holm, indistinguishable=indist,
                         best=names[b], alpha=alpha, n_boot=n_boot, n_eval=n)


def rank_routers(res: RouterComparison, pool: Pool, *, regime: str | None = "pre-answer", n_boot: int | None = None,
                 seed=0, alpha: float | None = None) -> RouterRanking:
    """:func:`rank_families` of the families of ``res`` (evaluated on ``pool``) in ``regime``
    (default ``"pre-answer"``: the routers that commit before any member answers, with the
    constant baselines; ``"post-inference"`` the selectors that read answers; None every family):
    per prompt the outcome (accuracy, or coverage at ``res.tau``) of the member each family chose,
    on the evaluated prompts of ``res.protocol``. ``n_boot``/``alpha`` default to those of ``res``."""
    if not isinstance(res, RouterComparison):
        raise TypeError(f"res must be a RouterComparison (from evaluate_routers), got {type(res).__name__}")
    if regime not in (None, "pre-answer", "post-inference"):
        raise ValueError(f"regime must be 'pre-answer', 'post-inference' or None, got {regime!r}")
    O, _ = outcome_matrix(pool, res.tau)
    ev = res.protocol.eval_idx
    if tuple(pool.policy_names) != tuple(res.policy_names) or (ev.size and ev.max() >= O.shape[0]):
        raise ValueError("pool is not the pool res was evaluated on (policies or prompts differ)")
    rows = np.arange(ev.size)
    fams = [f for f, e in res.evaluations.items() if regime is None or e.regime == regime]
    if not fams:
        raise ValueError(f"res has no {regime} family to rank; it evaluated {list(res.evaluations)}")
    S = np.stack([O[ev][rows, res.evaluations[f].choice] for f in fams], axis=1)
    return rank_families(S, fams, n_boot=res.n_boot if n_boot is None else n_boot, seed=seed,
                         alpha=res.alpha if alpha is None else alpha)
