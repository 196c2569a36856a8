"""The split-selected gap (paper 002, Cor 5): the anchor model chosen on one part of the items, its
gap G_b = P(R_b = 0, some other model right) certified with an exact Clopper-Pearson interval on the
other part; random splits and the same certificate over many of them.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._result import Interval, Result
from ..._validate import as_rng, check_alpha, check_int, check_prob
from ...pool import Pool
from .binomial import _cp
from .outcomes import _as_outcomes, _names

#: The construction of every split-selected interval.
SPLIT_METHOD = "clopper-pearson"


@dataclasses.dataclass(frozen=True, repr=False, kw_only=True)
class SplitSelectedGap(Result, Interval):
    """Cor 5: the gap G_b = P(R_b = 0, some other model right) of an anchor b chosen on
    independent data, with its exact Clopper-Pearson interval at level ``level`` = 1 - alpha.

    ``value`` is the test part's rescue share ``rescue_count / n_test``; ``anchor`` (index) and
    ``anchor_name`` name the anchor (None when only the counts were given); ``n_select`` items
    chose it.
    """

    _repr_fields = ("value", "lo", "hi", "certified", "level", "anchor_name", "n_select", "n_test",
                    "rescue_count")

    anchor: int | None
    anchor_name: str | None
    n_select: int
    n_test: int
    rescue_count: int

    @property
    def certified(self) -> bool:
        """True when the lower limit is positive."""
        return self.lo > 0

    def frame(self) -> pd.DataFrame:
        """One row: the anchor, the part sizes, the rescue count, G_b's value with its interval."""
        return pd.DataFrame(
            [
                {
                    "anchor": self.anchor_name if self.anchor_name is not None else self.anchor,
                    "n_select": self.n_select,
                    "n_test": self.n_test,
                    "rescues": self.rescue_count,
                    "value": self.value,
                    "lo": self.lo,
                    "hi": self.hi,
                    "level": self.level,
                    "method": self.method,
                }
            ]
        )


def _split_gap(anchor, anchor_name, r: int, n_test: int, alpha: float,
               n_select: int) -> SplitSelectedGap:
    lo, hi = _cp(r, n_test, alpha)
    return SplitSelectedGap(value=r / n_test, lo=float(lo), hi=float(hi), level=1.0 - alpha,
                            method=SPLIT_METHOD, anchor=anchor, anchor_name=anchor_name,
                            n_select=n_select, n_test=n_test, rescue_count=r)


def random_halves(n: int, seed=0, test_fraction: float = 0.5) -> np.ndarray:
    """A random split: bool[n], True marks the test part (round(test_fraction * n) items)."""
    n = check_int(n, "n", minimum=2)
    f = check_prob(test_fraction, "test_fraction", open_low=True, open_high=True)
    rng = as_rng(seed)
    m = min(max(int(round(f * n)), 1), n - 1)
    mask = np.zeros(n, dtype=bool)
    mask[rng.permutation(n)[:m]] = True
    return mask


def split_selected_gap_from_counts(rescue_count: int, n_test: int,
                                   alpha: float = 0.05) -> SplitSelectedGap:
    """Cor 5 from the test-half count of items where the frozen anchor fails and another model succeeds."""
    n_test = check_int(n_test, "n_test", minimum=1)
    r = check_int(rescue_count, "rescue_count", minimum=0, maximum=n_test)
    alpha = check_alpha(alpha)
    return _split_gap(None, None, r, n_test, alpha, 0)


def split_selected_gap(R, test, alpha: float = 0.05, *, anchor: int | None = None,
                       model_names=None) -> SplitSelectedGap:
    """002 Cor 5: choose the anchor on the selection part, certify G_b with exact CP on the test part.

    ``test``: bool mask [n] (True = test item) or integer positions of the test items. The
    anchor is the most accurate model on the selection part (ties: lowest index) unless a
    pre-declared ``anchor`` is given. Conditional on the selection data b is fixed, so
    Delta_i = max_m R_im - R_ib are i.i.d. Bernoulli(G_b) on the test part.
    """
    alpha = check_alpha(alpha)
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    n, K = X.shape
    t = np.asarray(test)
    if t.dtype == bool:
        if t.shape != (n,):
            raise ValueError(f"test as a mask must have length n={n}, got shape {t.shape}")
        mask = t
    else:
        if t.size == 0 or not np.issubdtype(t.dtype, np.integer) or t.min() < 0 or t.max() >= n:
            raise ValueError(f"test must be a bool mask of length {n} or integer positions in [0, {n})")
        mask = np.zeros(n, dtype=bool)
        mask[t] = True
    if not mask.any():
        raise ValueError("test selects no items")
    names = _names(model_names, K, "model_names", "m")
    if anchor is None:
        if mask.all():
            raise ValueError("the selection part is empty: pass a test mask that leaves items to select the anchor on")
        b = int(np.argmax(X[~mask].sum(axis=0)))
    else:
        b = check_int(anchor, "anchor", minimum=0, maximum=K - 1)
    Xt = X[mask]
    r = int((Xt.any(axis=1) & ~Xt[:, b]).sum())
    return _split_gap(b, names[b], r, Xt.shape[0], alpha, int((~mask).sum()))


def split_reseeds(R, n_seeds: int = 20, seed=0, alpha: float = 0.05, test_fraction: float = 0.5, model_names=None) -> pd.DataFrame:
    """Cor 5 over ``n_seeds`` random splits: one row per split (the split's number, its anchor,
    the part sizes, the rescue count and G_b's value with its interval)."""
    n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
    if isinstance(R, Pool) and model_names is None:
        model_names = R.policy_names
    X = _as_outcomes(R)
    rng = as_rng(seed)
    rows = []
    for s in range(n_seeds):
        mask = random_halves(X.shape[0], rng, test_fraction)
        res = split_selected_gap(X, mask, alpha, model_names=model_names)
        rows.append(res.frame().assign(split=s))
    cols = ["split", "anchor", "n_select", "n_test", "rescues", "value", "lo", "hi", "level", "method"]
    return pd.concat(rows, ignore_index=True)[cols]
