"""Paper 001's falsifier: best-of-K on the member committed on half of each prompt's draws,
scored on the other half, against the single-draw oracle at the oracle's budget (K = M).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy.special import comb

from ..._result import Result
from ..._validate import as_rng, check_alpha, check_int
from ..bootstrap import bootstrap_means
from .inputs import _form, _inputs, _o_exp_prompt, _tie_mean
from .intervals import Estimate, _q
from .split_draw import _split_sums
from .stopping import LimitStop


def _pass_at(h: int, K: int) -> np.ndarray:
    """Unbiased pass@K from c successes in h draws, for c = 0..h: 1 - C(h - c, K) / C(h, K)."""
    c = np.arange(h + 1)
    return 1.0 - comb(h - c, K) / comb(h, K)


@dataclasses.dataclass(frozen=True, repr=False)
class BestOfK(Result):
    """001's falsifier: best-of-K on the committed maximiser versus the single-draw oracle."""

    K: int
    best_of_k_split: Estimate
    best_of_k_insample: float
    best_of_all_k_insample: float
    o_exp_independent: Estimate
    o_exp: float
    difference: Estimate  # best_of_k_split - o_exp_independent
    n_boot: int | None = None  # prompt resamples behind the intervals

    @property
    def passes(self) -> bool:
        """Not falsified: the interval of best-of-K minus O_exp^indep does not lie below zero."""
        return bool(self.difference.hi >= 0)

    def frame(self) -> pd.DataFrame:
        rows = [
            {
                "quantity": f"best-of-{self.K}, committed on half the draws",
                **self.best_of_k_split.row(),
            },
            {
                "quantity": f"best-of-{self.K}, committed and scored in-sample",
                "value": self.best_of_k_insample,
            },
            {
                "quantity": "best-of-k on all k draws, in-sample (001's released figure)",
                "value": self.best_of_all_k_insample,
            },
            {"quantity": "single-draw oracle, independence form", **self.o_exp_independent.row()},
            {"quantity": "single-draw oracle (decomposition form)", "value": self.o_exp},
            {
                "quantity": "difference (split best-of-K - independence oracle)",
                **self.difference.row(),
            },
        ]
        return pd.DataFrame(rows)


def best_of_k_check(
    x,
    K: int | None = None,
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    n_splits: int = 200,
    seed=0,
    form=None,
    stop: LimitStop | None = None,
) -> BestOfK:
    """Best-of-K on the per-prompt maximiser at the oracle's budget K = M vs O_exp (001 Thm 2b).

    Under independent draws mean_i [1 - (1 - max_m p_im)^K] >= mean_i [1 - prod_m (1 - p_im)]
    when K = M: sampling the committed member K times lifts through the single-commit cap. Data
    version: the maximiser is committed on a random half A of the draws (ties split evenly) and
    its best-of-K is estimated on the other half B by the unbiased pass@K formula
    1 - C(h_B - c_B, K) / C(h_B, K) (K is capped at the half size), both directions, averaged
    over ``n_splits`` splits -- biased *down* by the commitment's regret, so a pass is
    conservative. Beside it: the in-sample version (commit and score on all k draws) and the
    in-sample best-of-all-k, mean_i 1[max_m c_im > 0], which is the figure 001 releases.
    ``difference`` = split best-of-K - O_exp^indep with a prompt-bootstrap percentile interval.

    ``stop`` (a :class:`~oraclegap.stats.noise.stopping.LimitStop` on ``best_of_k_split``,
    ``o_exp_independent`` or ``difference``; the check's ``passes`` reads ``difference``'s upper
    limit against 0) draws the resamples in looks and stops once that limit's side of its
    threshold is settled with Monte Carlo risk ``stop.risk``, at most ``n_boot``; the intervals
    come from the resamples taken (``n_boot`` of the result records how many).
    """
    v, alignment, _, _ = _inputs(x, min_k=2)
    form = _form(form, alignment)
    n, M, k = v.shape
    K = M if K is None else check_int(K, "K", minimum=1)
    alpha = check_alpha(1 - float(level), "1 - level")
    rng = as_rng(seed)
    hA, hB = k // 2, k - k // 2
    K_eff = min(K, hA)
    c = v.sum(axis=2, dtype=np.int64)
    pa, pb = _pass_at(hA, K_eff), _pass_at(hB, K_eff)
    n_splits = check_int(n_splits, "n_splits", minimum=1)
    split = _split_sums(v, c, n_splits, rng, pa, pb) / n_splits
    Kin = min(K, k)
    insample = _tie_mean(c, _pass_at(k, Kin)[c], axis=1)
    indep = 1 - np.prod(1 - c / k, axis=1)
    X = np.column_stack([split, indep, split - indep])
    qs = (alpha / 2, 1 - alpha / 2)
    names = ("best_of_k_split", "o_exp_independent", "difference")

    def est(bs, j):
        lo, hi = _q(bs[:, j], qs)
        return Estimate(
            float(X[:, j].mean()),
            float(lo),
            float(hi),
            float(level),
            "percentile",
            float(lo),
            float(hi),
        )

    decided, looks = None, None
    if stop is not None:
        if stop.quantity not in names:
            raise ValueError(f"stop.quantity must be one of {list(names)}, got {stop.quantity!r}")
        col = names.index(stop.quantity)

        def decided(bs: np.ndarray) -> bool:
            limit = getattr(est(bs, col), stop.side)
            return stop.decided(bs[:, col], limit, level, n_boot)

        looks = stop.looks(n_boot)
    bs = bootstrap_means(X, n_boot, rng, looks=looks, decided=decided)
    return BestOfK(
        K_eff,
        est(bs, 0),
        float(insample.mean()),
        float((c.max(axis=1) > 0).mean()),
        est(bs, 1),
        float(_o_exp_prompt(v, form).mean()),
        est(bs, 2),
        int(bs.shape[0]),
    )
