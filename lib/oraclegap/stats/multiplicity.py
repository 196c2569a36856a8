"""Multiple-testing adjustments, one of each for the whole library: Holm's step-down family-wise
adjustment and the Benjamini-Hochberg false-discovery-rate adjustment.

* :func:`holm` -- adjusted p-values p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)) over the m
  p-values sorted in increasing order, returned in the input order. These are statsmodels'
  ``multipletests(p, method="holm")[1]``, computed here because statsmodels runs ``gc.collect()``
  on every Holm call, which costs seconds in a process that holds many objects (the router sweeps
  call it once per pool and regime). ``tests/stats/test_multiplicity.py`` checks equality with
  statsmodels.
* :func:`benjamini_hochberg_adjust` -- statsmodels' ``multipletests(p, alpha, method="fdr_bh")``:
  the step-up adjusted p-values min_{j >= i} min(1, m p_(j) / j) and the rejections at level alpha.
* :func:`benjamini_hochberg` -- the same adjustment over a family of test results (anything with
  a p-value ``p`` and a ``label``, such as the nulls' ``NullTest``, or containers of them), with
  labels: a :class:`BHResult`.

Missing p-values (NaN) are not tests: they stay NaN in the output, are never rejected and do not
count towards m (a threshold where a test could not be made, as in the audit, does not weaken the
others). Any other value outside [0, 1] is an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from .._result import Result
from .._validate import check_alpha

__all__ = ["holm", "benjamini_hochberg_adjust", "BHResult", "benjamini_hochberg", "walk_tests"]


def _check_p(p, name: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        arr = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of p-values, got {type(p).__name__}") from None
    if arr.ndim > 1:
        raise ValueError(f"{name} must be one-dimensional (one p-value per test), "
                         f"got shape {arr.shape}")
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


def walk_tests(results, is_test: Callable[[object], bool], what: str, *,
               allow_p: bool = False) -> Iterator:
    """The tests inside nested results, in order: an object for which ``is_test`` holds is a test;
    a container with ``.tests`` and any other iterable (not a string) are walked; with ``allow_p`` a
    bare number is yielded as a float p-value. Anything else raises a ``TypeError`` that says the
    results must hold ``what``."""
    if is_test(results):
        yield results
    elif hasattr(results, "tests"):
        for t in results.tests:
            yield from walk_tests(t, is_test, what, allow_p=allow_p)
    elif (allow_p and isinstance(results, (int, float, np.integer, np.floating))
          and not isinstance(results, bool)):
        yield float(results)
    elif isinstance(results, Iterable) and not isinstance(results, (str, bytes)):
        for t in results:
            yield from walk_tests(t, is_test, what, allow_p=allow_p)
    else:
        raise TypeError(f"results must hold {what}, got {type(results).__name__}")


def _is_test_result(obj) -> bool:
    """A test result: an object with a p-value ``p`` and a ``label`` (the nulls' ``NullTest``)."""
    return hasattr(obj, "p") and hasattr(obj, "label")


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class BHResult(Result):
    """Benjamini-Hochberg adjustment over a family of tests (target false-discovery rate
    ``alpha``)."""

    labels: tuple
    p: np.ndarray
    p_adjusted: np.ndarray
    reject: np.ndarray
    alpha: float

    @property
    def n_rejected(self) -> int:
        return int(self.reject.sum())

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"test": list(self.labels), "p": self.p, "p_adjusted": self.p_adjusted,
                             "reject": self.reject})


def benjamini_hochberg(results, alpha: float = 0.05,
                       labels: Sequence[str] | None = None) -> BHResult:
    """Benjamini-Hochberg step-up adjustment (:func:`benjamini_hochberg_adjust`, statsmodels
    ``multipletests(method="fdr_bh")``) over a family of tests, at false-discovery rate ``alpha``.

    ``results``: p-values, test results (objects with a p-value ``p`` and a ``label``, such as
    :class:`oraclegap.stats.nulls.NullTest`: its upper-tail p is used), containers with ``.tests``,
    or lists of these. ``labels`` names the tests (default: each test's ``label``, ``test i`` for a
    bare p-value). Every p-value must lie in [0, 1].
    """
    alpha = check_alpha(alpha)
    ps: list[float] = []
    labs: list[str] = []
    what = "p-values or test results (NullTest objects)"
    for item in walk_tests(results, _is_test_result, what, allow_p=True):
        ps.append(item if isinstance(item, float) else item.p)
        labs.append(f"test {len(labs) + 1}" if isinstance(item, float) else item.label)
    if not ps:
        raise ValueError("results holds no tests")
    p = np.asarray(ps, dtype=float)
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("every p-value must lie in [0, 1]")
    if labels is not None:
        labels = [str(s) for s in labels]
        if len(labels) != p.size:
            raise ValueError(f"labels has {len(labels)} entries for {p.size} tests")
        labs = labels
    reject, p_adj = benjamini_hochberg_adjust(p, alpha)
    return BHResult(tuple(labs), p, p_adj, reject, alpha)
