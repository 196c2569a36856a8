"""What every computation of the noise package starts from: a pool's verdicts and draw alignment,
the form of O_exp the alignment allows, the per-prompt single-draw oracle, the score of a
selection with ties split evenly, and the router baseline.
"""

from __future__ import annotations

import numpy as np

from ..._validate import as_bool_array
from ...pool import Pool


def _inputs(x, *, min_k: int = 1):
    """(verdicts bool [n, M, k], alignment, policy names, answers or None) from a Pool or array."""
    if isinstance(x, Pool):
        v, alignment, names, answers = x.verdicts, x.alignment, x.policy_names, x.answers
    else:
        v = as_bool_array(x, "verdicts", ndim=3)
        alignment, names, answers = "unknown", [f"m{j}" for j in range(v.shape[1])], None
    if 0 in v.shape:
        raise ValueError(f"verdicts has a zero-size axis (shape {v.shape})")
    if v.shape[2] < min_k:
        raise ValueError(
            f"this needs k >= {min_k} draws per cell, the pool has k={v.shape[2]} "
            "(at k = 1 the reproducible ceiling O_repro is not identified: one draw cannot "
            "tell p from luck)"
        )
    return v, alignment, list(names), answers


def _form(form, alignment: str) -> str:
    """The O_exp estimator: ``form`` checked against the draws' alignment; None gives
    "seed-aligned" for seed-aligned draws, else "independent"."""
    if form is None:
        form = "seed-aligned" if alignment == "seed-aligned" else "independent"
    if form not in ("seed-aligned", "independent"):
        raise ValueError(f"form must be 'seed-aligned' or 'independent', got {form!r}")
    if form == "seed-aligned" and alignment not in ("seed-aligned", "unknown"):
        raise ValueError(
            f"form='seed-aligned' needs seed-aligned draws; this pool is {alignment!r}"
        )
    return form


def _o_exp_prompt(v: np.ndarray, form: str) -> np.ndarray:
    """Per-prompt single-draw oracle: seed-aligned mean_j max_m R_imj, or 1 - prod_m (1 -
    c_im/k)."""
    if form == "seed-aligned":
        return v.any(axis=1).mean(axis=1)
    return 1 - np.prod(1 - v.mean(axis=2), axis=1)


def _tie_mean(sel: np.ndarray, score: np.ndarray, axis: int) -> np.ndarray:
    """Score of the maximiser of ``sel`` along ``axis``, ties split evenly (a uniformly random
    tie-break in expectation)."""
    top = sel >= sel.max(axis=axis, keepdims=True)
    return (score * top).sum(axis=axis) / top.sum(axis=axis)


def baseline_scores(baseline, rates: np.ndarray) -> tuple[str, np.ndarray | None]:
    """A router baseline resolved against raw rates [n, M]: ("best-single", None) or (kind, S[n]).

    ``baseline`` may be None / ``"best"`` / ``"best-single"`` (the best member by mean rate,
    re-selected in every bootstrap resample), an integer array of per-prompt choices (policy
    positions; the router's score on prompt i is the chosen member's rate c_{i,r(i)}/k), or a
    float array of per-prompt scores in [0, 1] (e.g. a released router's per-prompt success
    rate). Choices must not depend on the scored draws (a cross-fitted router's do not).
    """
    n, M = rates.shape
    if baseline is None or (isinstance(baseline, str) and baseline in ("best", "best-single")):
        return "best-single", None
    if isinstance(baseline, str):
        raise ValueError(
            "baseline must be 'best', an integer choice vector or per-prompt scores, got "
            f"{baseline!r}"
        )
    b = np.asarray(baseline)
    if b.shape != (n,):
        raise ValueError(
            f"baseline must have one entry per prompt (shape ({n},)), got shape {b.shape}"
        )
    if b.dtype == bool:
        raise TypeError("baseline must be integer choices or float scores, got booleans")
    if np.issubdtype(b.dtype, np.integer):
        if (b < 0).any() or (b >= M).any():
            raise ValueError(
                f"baseline choices must be policy positions in [0, {M}), got values in "
                f"[{b.min()}, {b.max()}]"
            )
        return "choices", rates[np.arange(n), b]
    if np.issubdtype(b.dtype, np.floating):
        if np.isnan(b).any() or (b < 0).any() or (b > 1).any():
            raise ValueError(
                "baseline scores must be per-prompt success rates in [0, 1] without NaN"
            )
        return "scores", b.astype(np.float64)
    raise TypeError(f"baseline must be integer choices or float scores, got dtype {b.dtype}")
