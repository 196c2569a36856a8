"""Multiple-testing adjustments, one of each for the whole library: Holm's step-down family-wise
adjustment and the Benjamini-Hochberg false-discovery-rate adjustment.

* :func:`holm` -- adjusted p-values p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)) over the m
  p-values sorted in increasing order, returned in the input order. These are statsmodels'
  ``multipletests(p, method="holm")[1]``, computed here because statsmodels runs ``gc.collect()``
  on every Holm call, which costs seconds in a process that holds many objects (the router sweeps
  call it once per pool and regime). ``tests/test_multiplicity.py`` checks equality with statsmodels.
* :func:`benjamini_hochberg_adjust` -- statsmodels' ``multipletests(p, alpha, method="fdr_bh")``:
  the step-up adjusted p-values min_{j >= i} min(1, m p_(j) / j) and the rejections at level alpha.

Missing p-values (NaN) are not tests: they stay NaN in the output, are never rejected and do not
count towards m (a threshold where a test could not be made, as in the audit, does not weaken the
others). Any other value outside [0, 1] is an error.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_alpha

__all__ = ["holm", "benjamini_hochberg_adjust"]


def _check_p(p, name: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        arr = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of p-values, got {type(p).__name__}") from None
    if arr.ndim > 1:
        raise ValueError(f"{name} must be one-dimensional (one p-value per test), got shape {arr.shape}")
    arr = arr.reshape(-1)
    ok = ~np.isnan(arr)
    if (arr[ok] < 0).any() or (arr[ok] > 1).any():
        raise ValueError(f"{name} must hold p-values in [0, 1] (NaN for a missing test)")
    return arr, ok


def holm(p) -> np.ndarray:
    """Holm step-down adjusted p-values, float[m] in the input order (NaN entries stay NaN and are
    not counted). Equal to statsmodels' ``multipletests(p, method="holm")[1]`` on the non-NaN
    entries; reject hypothesis i at family-wise level alpha when the adjusted p_i <= alpha."""
    arr, ok = _check_p(p, "p")
    out = np.full(arr.shape, np.nan)
    q = arr[ok]
    m = q.size
    if m:
        order = np.argsort(q, kind="mergesort")
        adj = np.minimum(1.0, np.maximum.accumulate(q[order] * np.arange(m, 0, -1)))
        sub = np.empty(m)
        sub[order] = adj
        out[ok] = sub
    return out


def benjamini_hochberg_adjust(p, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini-Hochberg step-up adjustment (statsmodels ``multipletests(method="fdr_bh")``):
    ``(reject, p_adjusted)``, bool[m] and float[m] in the input order, at false-discovery rate
    ``alpha``. NaN entries are left out of the family: adjusted NaN, never rejected."""
    from statsmodels.stats.multitest import multipletests

    alpha = check_alpha(alpha)
    arr, ok = _check_p(p, "p")
    reject = np.zeros(arr.shape, dtype=bool)
    out = np.full(arr.shape, np.nan)
    if ok.any():
        r, adj, _, _ = multipletests(arr[ok], alpha=alpha, method="fdr_bh")
        reject[ok] = np.asarray(r, dtype=bool)
        out[ok] = np.asarray(adj, dtype=float)
    return reject, out
