"""Pieces every importer shares: the score rule, thresholds, numbers and whole numbers read with
located errors, split names, token costs and embeddings files.

Every reader names the file and the record in its refusals; the helpers here take a
``where(i)`` callable that names record ``i``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from .._validate import PICKLE_SUFFIXES, check_file, pickle_refusal, read_npy

#: Pickle names read by the restricted unpickler (:mod:`oraclegap._safepickle`); ``.pt``/``.pth``/``.joblib`` stay refused.
SAFE_PICKLE_SUFFIXES = (".pkl", ".pickle")

SCORE_RULE = (
    "a score must be a finite number in [0, 1]; 0 and 1 are wrong and right, and any other value is refused "
    "unless score_threshold=t is given (a response then counts as correct when its score >= t)"
)
_SPLIT_WORDS = {"train": "train", "training": "train", "val": "val", "valid": "val", "validation": "val",
                "dev": "val", "test": "test", "testing": "test"}


def check_threshold(t, name: str = "score_threshold") -> float | None:
    """``None`` or a threshold in (0, 1]: a response with score >= t counts as correct."""
    if t is None:
        return None
    if isinstance(t, bool):
        raise TypeError(f"{name} must be a number in (0, 1], got {t!r}")
    try:
        v = float(t)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number in (0, 1], got {t!r}") from None
    if math.isnan(v) or not 0.0 < v <= 1.0:
        raise ValueError(f"{name} must lie in (0, 1], got {t!r}")
    return v


def token_cost(input_tokens, output_tokens, input_price, output_price):
    """Cost of a response from token counts and prices per million tokens:
    ``(input_tokens * input_price + output_tokens * output_price) / 1e6`` (elementwise)."""
    return (input_tokens * input_price + output_tokens * output_price) / 1e6


def split_from_name(path) -> str | None:
    """The split a file name states (``train``, ``val`` or ``test``), when exactly one of the
    words train/training, val/valid/validation/dev, test/testing is a separate token of its stem."""
    stem = Path(path).name.split(".")[0].lower()
    found = {_SPLIT_WORDS[t] for t in re.split(r"[^a-z0-9]+", stem) if t in _SPLIT_WORDS}
    return found.pop() if len(found) == 1 else None


def object_array_hint(what: str = "it") -> str:
    """The sentence appended to an object-array refusal: how to save the array as numbers or text."""
    return (f"; convert {what} where it was written, e.g. `np.save('x.npy', np.asarray(a, dtype=np.int8))` for verdicts "
            "or `.astype(str)` for texts, then open the numeric file")


def _shown(v) -> str:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return repr(v)
    return repr(v) if not isinstance(v, float) else f"{v:.6g}"


_NUMERIC_TYPES = {int, float, bool, type(None), np.int64, np.float64, np.int32, np.float32, np.bool_}


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def _numbers(values, field: str, where: Callable[[int], str], *, integer: bool = False, nonneg: bool = False):
    """Numbers from JSON/table values as float (NaN where missing); text, lists etc. are refused."""
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.dtype.kind in "biuf":
        out = arr.astype(float)
    elif set(map(type, arr)) <= _NUMERIC_TYPES:  # fast path: numbers and None (-> NaN) only
        out = np.array(arr.tolist(), dtype=float)
    else:
        out = np.full(len(arr), np.nan)
        for i, v in enumerate(arr):  # one pass over the records (JSON values of any type)
            if _is_missing(v):
                continue
            if isinstance(v, (bool, np.bool_, int, float, np.integer, np.floating)):
                out[i] = float(v)
            else:
                raise ValueError(f"{where(i)}: field {field!r} holds {v!r}, not a number")
    present = ~np.isnan(out)
    bad = present & ~np.isfinite(out)
    if integer:
        bad |= present & np.isfinite(out) & (out != np.round(out))
    if nonneg:
        bad |= present & (out < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        kind = "a non-negative " if nonneg else "a "
        raise ValueError(f"{where(i)}: field {field!r} holds {_shown(out[i])}, not {kind}{'whole number' if integer else 'finite number'}")
    return out


_EXACT_FLOAT = 2**53  # floats hold every whole number up to here exactly


def _whole_numbers(values, field: str, where: Callable[[int], str]) -> np.ndarray:
    """Non-negative whole numbers kept exact (ids, item indices): an object array of Python ints,
    None where missing. JSON integers of any size stay exact (never through float or int64); a
    float beyond 2**53, where floats skip whole numbers, is refused naming the record; so are
    text, fractions and negative values."""
    vals = list(values.tolist() if isinstance(values, np.ndarray) else values)
    out = np.empty(len(vals), dtype=object)
    if set(map(type, vals)) <= {int}:  # fast path: JSON integers (any size, exact)
        out[:] = vals
        if vals and min(vals) < 0:
            i = next(i for i, v in enumerate(vals) if v < 0)
            raise ValueError(f"{where(i)}: field {field!r} holds {vals[i]}, not a non-negative whole number")
        return out
    for i, v in enumerate(vals):
        if _is_missing(v):
            out[i] = None
            continue
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise ValueError(f"{where(i)}: field {field!r} holds {v!r}, not a whole number")
        if isinstance(v, (float, np.floating)):
            f = float(v)
            if not math.isfinite(f) or f != round(f):
                raise ValueError(f"{where(i)}: field {field!r} holds {_shown(f)}, not a whole number")
            if abs(f) > _EXACT_FLOAT:
                raise ValueError(f"{where(i)}: field {field!r} holds {f:.17g}, a float beyond 2**53 that cannot name one "
                                 "item exactly (neighbouring ids collapse); write it as a JSON integer or a string")
            v = int(f)
        v = int(v)
        if v < 0:
            raise ValueError(f"{where(i)}: field {field!r} holds {v}, not a non-negative whole number")
        out[i] = v
    return out


def _int_column(ints: np.ndarray) -> np.ndarray:
    """Exact ints as int64 when every one fits, else as their decimal text (never wrapped)."""
    if all(x is not None and -(2**63) <= x < 2**63 for x in ints):
        return np.asarray(list(ints), dtype=np.int64)
    return np.asarray([None if x is None else str(x) for x in ints], dtype=object)


def scores_to_verdicts(scores: np.ndarray, threshold: float | None, field: str, where: Callable[[int], str]):
    """(verdicts bool, number of non-binary scores) under :data:`SCORE_RULE`; NaN is a missing score."""
    s = np.asarray(scores, dtype=float)
    if s.size == 0:
        return s.astype(bool), 0
    miss = np.isnan(s)
    if miss.any():
        i = int(np.flatnonzero(miss)[0])
        raise ValueError(f"{where(i)}: field {field!r} is missing ({int(miss.sum())} such responses); every response needs a score")
    out = ~np.isfinite(s) | (s < 0) | (s > 1)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise ValueError(f"{where(i)}: field {field!r} holds {_shown(s[i])}, outside the score range [0, 1] ({SCORE_RULE})")
    nonbin = (s != 0) & (s != 1)
    n_non = int(nonbin.sum())
    if n_non and threshold is None:
        i = int(np.flatnonzero(nonbin)[0])
        raise ValueError(
            f"{where(i)}: field {field!r} holds {_shown(s[i])}, a non-binary score ({n_non} of {s.size} responses); "
            "pass score_threshold=t (CLI --score-threshold t) to count a response as correct when its score >= t"
        )
    return (s >= threshold) if threshold is not None else (s == 1), n_non



def _read_embeddings(path, label: str) -> np.ndarray:
    """Prompt embeddings [rows, d] from a ``.npy`` file (row r belongs to the file's integer prompt key r);
    pickles and other suffixes are refused."""
    p = Path(path)
    if p.suffix.lower() in PICKLE_SUFFIXES:
        raise ValueError(pickle_refusal(p))
    check_file(p, "embeddings file")
    if p.suffix.lower() != ".npy":
        raise ValueError(f"embeddings {str(p)!r} must be a .npy array [rows, d] (row r = the file's integer prompt key r)")
    try:
        e = read_npy(p)
    except ValueError as exc:
        raise ValueError(f"{exc}{object_array_hint('the embeddings') if 'object array' in str(exc) else ''}") from None
    if e.ndim != 2 or e.dtype.kind not in "biuf":
        raise ValueError(f"embeddings {str(p)!r} must be a numeric 2-d array [rows, d] for {label}, got {e.dtype} {e.shape}")
    return e
