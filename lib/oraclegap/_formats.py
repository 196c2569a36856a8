"""Parsers of the files other router tools write (private: read them through :mod:`oraclegap.sources`).

One reader per layout, each returning a :class:`~oraclegap.pool.Pool`:

* ``llmrouterbench`` -- LLMRouterBench / OpenRouterBench results: a result file
  ``results/bench/<dataset>/<split>/<model>/<dataset>-<split>-<model>-<YYYYMMDD_HHMMSS>.json``
  (``dataset_name``, ``split``, ``model_name``, ``demo`` and a list ``records`` of ``index``,
  ``origin_query``, ``prompt``, ``prediction``, ``ground_truth``, ``score``, ``prompt_tokens``,
  ``completion_tokens``, ``cost``), a folder of such files, or the flat records its
  ``BaselineDataLoader`` exports (``dataset_id``, ``split``, ``model_name``, ``record_index``, ...)
  as a JSON list or JSON lines.
* ``llmrouter`` -- ulab-uiuc/LLMRouter routing data (``default_routing_{train,test}_data.jsonl``):
  one JSON line per (query, model) with ``task_name``, ``query``, ``ground_truth``, ``metric``,
  ``model_name``, ``response``, ``input_tokens``, ``output_tokens``, ``response_time``,
  ``performance`` and ``embedding_id``.
* ``routereval`` -- RouterEval's router datasets: an ``.npz`` of ``<split>_score`` correctness
  matrices [n_split, M] with ``<split>_embed`` prompt embeddings [n_split, d] (splits ``train``,
  ``val``, ``test``; optional ``<split>_prompt`` texts, ``<split>_tokens``, ``<split>_time``).
* ``embedllm`` -- EmbedLLM's long CSV (``train.csv``/``val.csv``/``test.csv``): one row per
  (model, question) with ``model_id``, ``model_name``, ``prompt_id``, ``prompt``, ``category``,
  ``label``.
* ``routerbench`` -- RouterBench's wide table (withmartian/routerbench, converted from its
  pickle to CSV or parquet): ``sample_id``, ``prompt``, ``eval_name``, one correctness column per
  model, ``<model>|model_response`` and ``<model>|total_cost``.
* ``long`` -- oraclegap's own exchange format written by :meth:`Pool.to_long`.

Scores. Every format's score field must be a finite number in [0, 1]: 0 and 1 are read as wrong
and right. Any other value is refused, naming the file, the line or row and the field, unless a
``score_threshold`` t in (0, 1] is given: then a response counts as correct when its score is
>= t (and the number of non-binary scores is recorded in ``meta``). Values are never cast
silently. A cell of a long format with several rows holds repeated samples (k > 1) in the
order of the file; every (prompt, policy) cell must hold the same number.

This module sits just below :mod:`oraclegap.datasets` (whose registry loaders share its
RouterBench and token-price parsers) and imports only the ground floor.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ._safepickle import safe_load
from ._validate import (
    PICKLE_SUFFIXES,
    as_bool_columns,
    check_file,
    is_pickle_file,
    literal_list,
    pickle_refusal,
    read_npy,
    read_npz,
)
from .pool import Pool

#: Pickle names read by the restricted unpickler (:mod:`oraclegap._safepickle`); ``.pt``/``.pth``/``.joblib`` stay refused.
SAFE_PICKLE_SUFFIXES = (".pkl", ".pickle")

__all__ = [
    "FORMATS",
    "SCORE_RULE",
    "check_threshold",
    "token_cost",
    "routerbench_parts",
    "read_llmrouterbench",
    "read_llmrouter",
    "read_routereval",
    "read_embedllm",
    "read_routerbench",
    "read_long",
    "PICKLE_SUFFIXES",
    "pickle_refusal",
    "is_pickle_file",
    "object_array_hint",
    "split_from_name",
    "json_records",
]

#: The layouts read here: name -> one line describing it.
FORMATS = {
    "llmrouterbench": "LLMRouterBench result files (a file, a results folder, or its flat records as JSON / JSON lines)",
    "llmrouter": "LLMRouter routing data: JSON lines, one per (query, model), with 'performance'",
    "routereval": "RouterEval router dataset (.npz, or the published .pkl read without running pickle code): "
                  "<split>_score correctness matrices with <split>_embed embeddings",
    "embedllm": "EmbedLLM long CSV/parquet: model_id, prompt_id, label (+ model_name, prompt, category)",
    "routerbench": "RouterBench wide CSV/parquet/.pkl (routerbench_0shot.pkl read without running pickle code): one "
                   "correctness column per model plus '<model>|total_cost'",
    "long": "oraclegap long table (Pool.to_long): prompt_id, policy, draw, correct, ... as CSV or parquet",
}

SCORE_RULE = (
    "a score must be a finite number in [0, 1]; 0 and 1 are wrong and right, and any other value is refused "
    "unless score_threshold=t is given (a response then counts as correct when its score >= t)"
)

LONG_FORMAT = "oraclegap.long"
LONG_VERSION = 1
_SPLIT_WORDS = {"train": "train", "training": "train", "val": "val", "valid": "val", "validation": "val",
                "dev": "val", "test": "test", "testing": "test"}


# ============================================================================ small shared pieces
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


# ============================================================================ assembling rows into a pool
@dataclasses.dataclass
class _Rows:
    """Responses in file order: one entry per response in every array."""

    label: str
    where: Callable[[int], str]
    prompt: np.ndarray  # prompt keys (str)
    policy: np.ndarray  # policy keys (str)
    correct: np.ndarray  # bool
    answer: np.ndarray | None = None
    cost: np.ndarray | None = None  # per response; NaN = missing
    draw: np.ndarray | None = None  # explicit draw positions 0..k-1 (long format)
    prompt_cols: dict = dataclasses.field(default_factory=dict)  # name -> values, constant per prompt
    policy_cols: dict = dataclasses.field(default_factory=dict)  # name -> values, constant per policy
    per_response: dict = dataclasses.field(default_factory=dict)  # name -> numbers (NaN = missing) for meta
    embed_row: np.ndarray | None = None  # row of an embeddings matrix, constant per prompt
    prompt_sort: np.ndarray | None = None  # numeric key: prompts ordered by it (else first appearance)
    policy_sort: np.ndarray | None = None


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    sa, sb = pd.Series(a, dtype=object), pd.Series(b, dtype=object)
    na, nb = sa.isna().to_numpy(), sb.isna().to_numpy()
    with np.errstate(invalid="ignore"):
        eq = (sa == sb).to_numpy(dtype=bool)
    return (eq & ~na & ~nb) | (na & nb)


def _first_rows(codes: np.ndarray, n: int) -> np.ndarray:
    first = np.full(n, -1, dtype=np.int64)
    uniq, idx = np.unique(codes, return_index=True)
    first[uniq] = idx
    return first


def _per_key(values, codes, first, keys, what: str, name: str, where) -> np.ndarray:
    """The value of ``name`` per key, checked to be the same on every row of the key."""
    v = np.asarray(values, dtype=object)
    ref = v[first[codes]]
    ok = _same(v, ref)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        j = int(first[codes[i]])
        raise ValueError(
            f"{where(i)}: field {name!r} is {v[i]!r} here but {ref[i]!r} at {where(j)} for the same {what} "
            f"{keys[codes[i]]!r}; a {what}'s {name!r} must be the same on all its rows"
        )
    return v[first]


def _order(codes: np.ndarray, uniq: np.ndarray, sort_key: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if sort_key is None:
        return codes, uniq
    first = _first_rows(codes, len(uniq))
    key = np.asarray(sort_key)
    key = key[first] if key.dtype == object else key.astype(float)[first]  # object: exact Python ints
    perm = np.argsort(key, kind="stable")
    rank = np.empty_like(perm)
    rank[perm] = np.arange(len(perm))
    return rank[codes], uniq[perm]


def _copies(rows: _Rows, orig: np.ndarray, cell: np.ndarray) -> tuple[int, np.ndarray]:
    """``(r, first)`` when, without draw labels, every distinct row of every (prompt, policy) cell
    appears a multiple r >= 2 of times (a file appended to itself, rows doubled by a join): the
    same response is then counted r times as if drawn anew. ``first`` marks the first 1/r of each
    distinct row's occurrences, in file order. ``(1, None)`` otherwise."""
    cols = {"cell": cell, "correct": np.asarray(rows.correct, dtype=bool)[orig]}
    for name, vals in (("answer", rows.answer), ("cost", rows.cost)):
        if vals is not None:
            cols[name] = pd.Series(np.asarray(vals, dtype=object)[orig]).astype(str).to_numpy(dtype=object)
    for name, vals in rows.per_response.items():
        cols[f"response_{name}"] = pd.Series(np.asarray(vals)[orig]).astype(str).to_numpy(dtype=object)
    key = pd.DataFrame(cols)
    group = key.groupby(list(key.columns), sort=False, dropna=False).ngroup().to_numpy()
    counts = np.bincount(group)
    r = int(np.gcd.reduce(counts[counts > 0]))
    if r < 2:
        return 1, None
    seen = pd.Series(group).groupby(group).cumcount().to_numpy()
    return r, seen < counts[group] // r


def _assemble(rows: _Rows, *, drop_incomplete: bool = False, embeddings: np.ndarray | None = None,
              alignment: str = "unknown", meta: dict | None = None, dedupe: bool = False) -> Pool:
    label, where = rows.label, rows.where
    N = len(rows.prompt)
    if N == 0:
        raise ValueError(f"{label} holds no responses")
    p_codes, p_uniq = pd.factorize(pd.Series(rows.prompt, dtype=object).astype(str).to_numpy(dtype=object), sort=False)
    m_codes, m_uniq = pd.factorize(pd.Series(rows.policy, dtype=object).astype(str).to_numpy(dtype=object), sort=False)
    p_uniq, m_uniq = np.asarray(p_uniq, dtype=object), np.asarray(m_uniq, dtype=object)
    p_codes, p_uniq = _order(p_codes, p_uniq, rows.prompt_sort)
    m_codes, m_uniq = _order(m_codes, m_uniq, rows.policy_sort)
    n, M = len(p_uniq), len(m_uniq)
    orig = np.arange(N)
    counts = np.bincount(p_codes * M + m_codes, minlength=n * M).reshape(n, M)
    meta = dict(meta or {})
    missing = counts == 0
    if missing.any():
        if not drop_incomplete:
            cells = np.argwhere(missing)
            per = {str(m_uniq[j]): int(c) for j, c in enumerate(missing.sum(axis=0)) if c}
            eg = ", ".join(f"({p_uniq[i]!r}, {m_uniq[j]!r})" for i, j in cells[:3])
            raise ValueError(
                f"{label}: {len(cells)} of {n * M} (prompt, policy) cells have no response, e.g. {eg}; missing per policy: "
                f"{per}. Every policy must answer every prompt; pass drop_incomplete=True (CLI --drop-incomplete) to keep "
                "only the prompts every policy answered"
            )
        keep = ~missing.any(axis=1)
        if not keep.any():
            raise ValueError(f"{label}: no prompt was answered by all {M} policies; nothing is left after dropping incomplete prompts")
        meta["prompts_dropped_incomplete"] = int((~keep).sum())
        remap = np.full(n, -1, dtype=np.int64)
        remap[keep] = np.arange(int(keep.sum()))
        sel = keep[p_codes]
        orig, p_codes, m_codes = orig[sel], remap[p_codes[sel]], m_codes[sel]
        p_uniq, counts = p_uniq[keep], counts[keep]
        n = len(p_uniq)
    k = int(counts.max())
    if (counts != k).any():
        sizes, freq = np.unique(counts, return_counts=True)
        usual = int(sizes[np.argmax(freq)])  # the number most cells hold (ties: the smaller)
        extra, short = np.argwhere(counts > usual), np.argwhere(counts < usual)
        i, j = (extra if len(extra) else short)[0]
        what = ("more" if len(extra) else "fewer") + f" rows than the {int((counts == usual).sum())} cells with {usual}"
        raise ValueError(
            f"{label}: the (prompt, policy) cells hold different numbers of responses {[int(x) for x in sizes[:6]]}: prompt "
            f"{p_uniq[i]!r} x policy {m_uniq[j]!r} has {int(counts[i, j])}, {what} ({len(extra)} cells have more, "
            f"{len(short)} fewer); several rows of one cell are read as repeated samples (k > 1), so every cell needs the "
            "same number -- remove duplicated rows if they are copies"
        )
    cell = p_codes * M + m_codes
    if rows.draw is None and k > 1:
        r, first = _copies(rows, orig, cell)
        if r > 1 and not dedupe:
            raise ValueError(
                f"{label}: every row appears {r} times in its (prompt, policy) cell ({len(orig)} rows, "
                f"{len(orig) // r} distinct), as when a file is appended to itself; without draw labels the copies would "
                f"count as k = {k} draws instead of {k // r} -- remove them, pass dedupe=True (CLI --dedupe) to keep one of "
                "each, or label the draws (a long table's 'draw' column) if they are distinct"
            )
        if r > 1:
            meta["duplicates_dropped"] = {"rows": int(len(orig) - first.sum()), "copies": r, "k_before": k}
            orig, p_codes, m_codes, cell = orig[first], p_codes[first], m_codes[first], cell[first]
            k //= r
    if dedupe and "duplicates_dropped" not in meta:  # asked for and nothing to drop: said, not silent
        meta["duplicates_dropped"] = {"rows": 0, "copies": 1, "k_before": k}
    if rows.draw is None:
        j_pos = pd.Series(cell).groupby(cell, sort=False).cumcount().to_numpy()
    else:
        d = _numbers(np.asarray(rows.draw)[orig], "draw", lambda i: where(int(orig[i])), integer=True, nonneg=True)
        if np.isnan(d).any() or (d >= k).any():
            i = int(np.flatnonzero(np.isnan(d) | (d >= k))[0])
            raise ValueError(f"{where(int(orig[i]))}: field 'draw' must be a draw position in 0..{k - 1} (k = {k} rows per cell)")
        j_pos = d.astype(np.int64)
        dup = pd.Series(cell * k + j_pos).duplicated().to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise ValueError(f"{where(int(orig[i]))}: draw {j_pos[i]} of prompt {p_uniq[p_codes[i]]!r} x policy "
                             f"{m_uniq[m_codes[i]]!r} appears twice")
    at = (p_codes, m_codes, j_pos)
    v = np.zeros((n, M, k), dtype=bool)
    v[at] = np.asarray(rows.correct, dtype=bool)[orig]
    ow = lambda i: where(int(orig[i]))  # noqa: E731 - rows after dropping, named by their place in the file
    p_first, m_first = _first_rows(p_codes, n), _first_rows(m_codes, M)
    ptab = pd.DataFrame({"id": p_uniq})
    for name, vals in rows.prompt_cols.items():
        ptab[name] = _per_key(np.asarray(vals, dtype=object)[orig], p_codes, p_first, p_uniq, "prompt", name, ow)
    mtab = pd.DataFrame({"name": m_uniq})
    for name, vals in rows.policy_cols.items():
        mtab[name] = _per_key(np.asarray(vals, dtype=object)[orig], m_codes, m_first, m_uniq, "policy", name, ow)
    answers = None
    if rows.answer is not None:
        answers = np.full((n, M, k), "", dtype=object)
        a = np.asarray(rows.answer, dtype=object)[orig]
        answers[at] = np.where(pd.isna(a), "", a)
    cost = None
    if rows.cost is not None:
        c = np.asarray(rows.cost, dtype=float)[orig]
        if np.isnan(c).any():
            i = int(np.flatnonzero(np.isnan(c))[0])
            raise ValueError(f"{ow(i)}: field 'cost' is missing here but present on other rows; give every response a cost or none")
        if (c < 0).any() or not np.isfinite(c).all():
            i = int(np.flatnonzero((c < 0) | ~np.isfinite(c))[0])
            raise ValueError(f"{ow(i)}: field 'cost' holds {_shown(c[i])}, not a finite non-negative number")
        cost = np.bincount(cell, weights=c, minlength=n * M) / k  # mean cost per response of the cell
        lo, hi = np.full(n * M, np.inf), np.full(n * M, -np.inf)
        np.minimum.at(lo, cell, c)
        np.maximum.at(hi, cell, c)
        cost = np.where(lo == hi, lo, cost).reshape(n, M)  # one cost per cell: kept exactly
    per_response = {}
    for name, vals in rows.per_response.items():
        src = np.asarray(vals)
        if src.dtype.kind in "iu" or src.dtype == np.float32:  # a typed column (parquet): keep its dtype exactly
            a = np.zeros((n, M, k), dtype=src.dtype)  # every (i, m, j) is filled: cells are complete here
        else:
            src = src.astype(float)
            a = np.full((n, M, k), np.nan)
        a[at] = src[orig]
        per_response[name] = a
    emb = None
    if embeddings is not None:
        if rows.embed_row is None:
            raise ValueError(f"{label}: embeddings need an integer key per prompt in the file (embedding_id / prompt_id)")
        r = _per_key(np.asarray(rows.embed_row, dtype=object)[orig], p_codes, p_first, p_uniq, "prompt", "embedding row", ow)
        E = np.asarray(embeddings)
        out = np.array([not (0 <= int(x) < E.shape[0]) for x in r], dtype=bool)  # exact ints: no wrap-around
        if out.any():
            i = int(np.flatnonzero(out)[0])
            raise ValueError(f"{label}: prompt {p_uniq[i]!r} has embedding row {int(r[i])}, outside the embeddings' {E.shape[0]} rows")
        emb = E[np.asarray([int(x) for x in r], dtype=np.int64)]
    try:
        return Pool(v, ptab, mtab, answers, emb, cost, alignment, meta, per_response)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{label}: {exc}") from None


# ============================================================================ JSON input
def _load_json(path: Path):
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ValueError(f"{path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte offset {exc.start}); save it as UTF-8") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"{path} {TOO_DEEP}") from None


#: The words for JSON nested beyond what Python's parser can follow (a damaged or hostile file).
TOO_DEEP = "nests JSON lists or objects too deeply to read (deeper than Python's recursion limit); it is damaged or not a " \
           "file of records"


def iter_json_lines(path, what: str = "one record per line"):
    """(line number, record) of a JSON-lines file, read as a stream: blank lines skipped; a line
    that is not JSON, nests too deeply, or is not an object, and text that is not UTF-8, are
    refused naming the file and the line (``what`` says what a line should hold)."""
    path = Path(path)
    try:
        fh = open(path, encoding="utf-8-sig")
    except OSError as exc:
        raise ValueError(f"{path} cannot be read: {exc.strerror or exc}") from None
    with fh:
        try:
            for ln, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {ln} is not valid JSON: {exc.msg} (column {exc.colno})") from None
                except RecursionError:
                    raise ValueError(f"{path}: line {ln} {TOO_DEEP}") from None
                if not isinstance(rec, dict):
                    raise ValueError(f"{path}: line {ln} holds a JSON {type(rec).__name__}, not an object ({what})")
                yield ln, rec
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path} is not UTF-8 text (byte offset {exc.start}); save it as UTF-8") from None


def json_records(path) -> tuple[str, object]:
    """Read a ``.json`` or ``.jsonl`` file: ``("object", dict)`` for a JSON object, else
    ``("records", [(where, dict), ...])`` for a JSON list or JSON lines (blank lines skipped)."""
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        out = [(f"line {ln}", rec) for ln, rec in iter_json_lines(path)]
        if not out:
            raise ValueError(f"{path} is empty; JSON lines need one record per line")
        return "records", out
    obj = _load_json(path)
    if isinstance(obj, dict):
        return "object", obj
    if isinstance(obj, list):
        bad = next((i for i, r in enumerate(obj) if not isinstance(r, dict)), None)
        if bad is not None:
            raise ValueError(f"{path}: element {bad} of the JSON list is a {type(obj[bad]).__name__}, not an object (a record)")
        if not obj:
            raise ValueError(f"{path} holds an empty JSON list; no records")
        return "records", [(f"element {i}", r) for i, r in enumerate(obj)]
    raise ValueError(f"{path} holds a JSON {type(obj).__name__}; expected an object or a list of records")


_MISSING = object()


def _get(rec: Mapping, names):
    for n in names:
        if n in rec:
            return rec[n]
    return _MISSING


def _column(recs, names):
    vals = [_get(r, names) for r in recs]
    present = np.array([v is not _MISSING for v in vals])
    return [None if v is _MISSING else v for v in vals], present


def _text_column(vals) -> np.ndarray:
    if set(map(type, vals)) <= {str, type(None)}:  # fast path
        out = np.empty(len(vals), dtype=object)
        out[:] = vals
        return out
    out = np.empty(len(vals), dtype=object)
    for i, v in enumerate(vals):
        out[i] = None if _is_missing(v) else (v if isinstance(v, str) else json.dumps(v) if isinstance(v, (list, dict)) else str(v))
    return out


def _key_column(vals, field: str, where) -> np.ndarray:
    if set(map(type, vals)) <= {str}:  # fast path: texts; only blanks to find
        out = np.empty(len(vals), dtype=object)
        out[:] = vals
        blank = pd.Series(out, dtype=object).str.strip().eq("").to_numpy()
        if not blank.any():
            return out
    out = np.empty(len(vals), dtype=object)
    for i, v in enumerate(vals):
        if _is_missing(v) or (isinstance(v, str) and not v.strip()):
            raise ValueError(f"{where(i)}: field {field!r} is missing or blank; every record needs it")
        if isinstance(v, (dict, list)):
            raise ValueError(f"{where(i)}: field {field!r} holds a {type(v).__name__}, not a name")
        out[i] = str(v)
    return out


# ============================================================================ LLMRouterBench
LRB_DATASET = ("dataset_id", "dataset_name", "dataset")
LRB_MODEL = ("model_name", "model")
LRB_INDEX = ("record_index", "index")


def is_llmrouterbench_result(obj) -> bool:
    """Whether a parsed JSON value is one LLMRouterBench result file (one model on one dataset split)."""
    return isinstance(obj, dict) and isinstance(obj.get("records"), list) and "model_name" in obj and "dataset_name" in obj


def is_llmrouterbench_record(rec: Mapping) -> bool:
    """Whether a record looks like LLMRouterBench's flat export: dataset, model, item index and score."""
    return (any(k in rec for k in LRB_DATASET) and any(k in rec for k in LRB_MODEL) and any(k in rec for k in LRB_INDEX)
            and "score" in rec)


def _lrb_timestamp(path: Path) -> int:
    m = re.search(r"(\d{8})_(\d{6})\.json$", path.name)
    return int(m.group(1) + m.group(2)) if m else int(path.stat().st_mtime)


def _lrb_folder(path: Path):
    from tqdm.auto import tqdm

    files = sorted(p for p in path.rglob("*.json") if p.is_file())
    if not files:
        raise ValueError(f"{path} holds no .json files; an LLMRouterBench results folder holds "
                         "<dataset>/<split>/<model>/<dataset>-<split>-<model>-<timestamp>.json")
    docs, demo = {}, []
    for f in tqdm(files, desc="LLMRouterBench result files", leave=False, disable=len(files) < 20):
        obj = _load_json(f)
        if not is_llmrouterbench_result(obj):
            keys = sorted(obj)[:8] if isinstance(obj, dict) else type(obj).__name__
            raise ValueError(f"{f} is not an LLMRouterBench result file (a JSON object with dataset_name, split, model_name "
                             f"and a list of records; it holds {keys}); move other files out of {path}")
        if obj.get("demo") is True:  # LLMRouterBench's own loader skips demo runs
            demo.append(str(f))
            continue
        docs.setdefault((str(obj["dataset_name"]), str(obj.get("split")), str(obj["model_name"])), []).append((f, obj))
    if not docs:
        raise ValueError(f"{path}: every result file is a demo run ({len(demo)} files); no results to read")
    chosen, superseded = [], []
    for key in sorted(docs):
        runs = sorted(docs[key], key=lambda fo: _lrb_timestamp(fo[0]))
        chosen.append(runs[-1])  # the latest run of each (dataset, split, model), as LLMRouterBench's loader does
        superseded += [str(f) for f, _ in runs[:-1]]
    info = {"files_read": len(chosen), "demo_files_skipped": demo, "superseded_files_skipped": superseded,
            "run_rule": "latest file per (dataset, split, model) by its YYYYMMDD_HHMMSS name (else modification time); demo runs skipped"}
    return chosen, info


def _lrb_result_records(f: Path, obj: dict):
    out = []
    top = {"dataset_name": obj["dataset_name"], "split": obj.get("split"), "model_name": obj["model_name"]}
    for j, rec in enumerate(obj["records"]):
        if not isinstance(rec, dict):
            raise ValueError(f"{f}: records[{j}] is a {type(rec).__name__}, not an object")
        out.append((f"{f}: records[{j}]", {**top, **rec}))
    return out


def read_llmrouterbench(path, *, score_threshold=None, null_scores: str = "error", drop_incomplete: bool = False,
                        dedupe: bool = False, _parsed=None) -> Pool:
    """A pool from LLMRouterBench results: a result file, a folder of them, or flat records.

    A prompt is (dataset, split, index): its id is ``"<dataset>/<split>/<index>"``; ``text`` is
    the record's ``origin_query`` (the question; its ``prompt`` when there is none),
    ``ground_truth`` goes into the prompt table. A policy is ``model_name``. ``verdicts`` follow
    ``score`` under :data:`SCORE_RULE`; a ``null`` score (an evaluation that failed) is refused
    unless ``null_scores="wrong"``, which counts it as 0 as LLMRouterBench's own loader does.
    ``answers`` are the ``prediction`` fields, ``cost[i, m]`` the mean ``cost`` (USD) per
    response and ``per_response`` holds ``prompt_tokens`` / ``completion_tokens`` as arrays
    [n, M, k]. In a folder, the latest run of each (dataset, split, model) is read and demo
    runs are skipped (both listed in ``meta``); records repeated within a file are repeated
    samples (k > 1).
    """
    thr = check_threshold(score_threshold)
    if null_scores not in ("error", "wrong"):
        raise ValueError(f"null_scores must be 'error' or 'wrong', got {null_scores!r}")
    path = Path(path)
    info: dict = {}
    if path.is_dir():
        chosen, info = _lrb_folder(path)
        recs = [r for f, obj in chosen for r in _lrb_result_records(f, obj)]
    else:
        kind, payload = _parsed if _parsed is not None else json_records(path)
        if kind == "object":
            if not is_llmrouterbench_result(payload):
                raise ValueError(f"{path} is a JSON object without LLMRouterBench's dataset_name, model_name and records")
            recs = _lrb_result_records(path, payload)
        else:
            recs = [(f"{path}: {w}", r) for w, r in payload]
    if not recs:
        raise ValueError(f"{path} holds no LLMRouterBench records")
    wh = [w for w, _ in recs]
    rs = [r for _, r in recs]
    where = lambda i: wh[i]  # noqa: E731
    ds = _key_column(_column(rs, LRB_DATASET)[0], "dataset_id", where)
    model = _key_column(_column(rs, LRB_MODEL)[0], "model_name", where)
    split_vals, _ = _column(rs, ("split",))
    split = _text_column(split_vals)
    idx = _whole_numbers(_column(rs, LRB_INDEX)[0], "index", where)  # exact: ids beyond 2**53 stay distinct
    if any(x is None for x in idx):
        i = next(i for i, x in enumerate(idx) if x is None)
        raise ValueError(f"{where(i)}: field 'index' (record_index) is missing; every record needs its item index")
    key = np.array([f"{d}/{s}/{j}" if s is not None else f"{d}/{j}" for d, s, j in zip(ds, split, idx, strict=True)], dtype=object)
    score = _numbers(_column(rs, ("score",))[0], "score", where)
    nulls = np.isnan(score)
    if nulls.any() and null_scores == "error":
        i = int(np.flatnonzero(nulls)[0])
        raise ValueError(f"{where(i)}: field 'score' is null or missing ({int(nulls.sum())} records): the evaluation gave no "
                         "score; pass null_scores='wrong' (CLI --null-scores wrong) to count it as 0, as LLMRouterBench's own "
                         "loader does")
    score[nulls] = 0.0
    correct, n_non = scores_to_verdicts(score, thr, "score", where)
    oq, oq_present = _column(rs, ("origin_query",))
    pr, _ = _column(rs, ("prompt",))
    text = _text_column([o if p and not _is_missing(o) else q for o, p, q in zip(oq, oq_present, pr, strict=True)])
    gt, gt_present = _column(rs, ("ground_truth",))
    pred, pred_present = _column(rs, ("prediction",))
    rows = _Rows(str(path), where, key, model, correct,
                 prompt_cols={"text": text, "dataset": ds, "split": split, "index": _int_column(idx)})
    if gt_present.any():
        rows.prompt_cols["ground_truth"] = _text_column(gt)
    if pred_present.any():
        rows.answer = _text_column(pred)
    cost_vals, cost_present = _column(rs, ("cost",))
    if cost_present.any():
        rows.cost = _numbers(cost_vals, "cost", where, nonneg=True)
    for name in ("prompt_tokens", "completion_tokens", "tokens"):
        vals, present = _column(rs, (name,))
        if present.any():
            rows.per_response[name] = _numbers(vals, name, where, integer=True, nonneg=True)
    meta = {"source": str(path), "format": "llmrouterbench", "score_field": "score", "score_threshold": thr,
            "non_binary_scores": n_non, "null_scores_counted_wrong": int(nulls.sum()), **info}
    if rows.cost is not None:
        meta["cost_unit"] = "USD per response (LLMRouterBench 'cost'; mean over a cell's responses)"
    return _assemble(rows, drop_incomplete=drop_incomplete, meta=meta, dedupe=dedupe)


# ============================================================================ LLMRouter routing data
def is_llmrouter_record(rec: Mapping) -> bool:
    """Whether a record looks like an LLMRouter routing line: model_name, query and performance."""
    return "model_name" in rec and "query" in rec and "performance" in rec


def _read_embeddings(path, label: str) -> np.ndarray:
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


def _llm_prices(llm_data) -> dict:
    if isinstance(llm_data, Mapping):
        return dict(llm_data)
    p = Path(llm_data)
    if not p.exists():
        raise ValueError(f"llm_data {str(p)!r} does not exist; give LLMRouter's default_llm.json (model -> input_price, output_price)")
    obj = _load_json(check_file(p, "llm_data"))
    if not isinstance(obj, dict):
        raise ValueError(f"llm_data {str(p)!r} must be a JSON object of model -> {{input_price, output_price, ...}}")
    return obj


def read_llmrouter(path, *, score_threshold=None, split=None, llm_data=None, embeddings=None,
                   drop_incomplete: bool = False, dedupe: bool = False, _parsed=None) -> Pool:
    """A pool from LLMRouter routing data (one JSON line per query and model).

    A prompt is a query: its id is ``embedding_id`` when every line has one (the same query
    has the same id in LLMRouter's train and test files), else ``q<ordinal>`` of the distinct
    (task_name, query, ground_truth, metric) in file order. ``text`` is ``query``, ``dataset``
    ``task_name``; ``metric``, ``ground_truth`` and ``task_id`` join the prompt table; ``split``
    is the argument, else the split the file name states (``..._train_...``), else unset.
    ``verdicts`` follow ``performance`` under :data:`SCORE_RULE`; ``answers`` are the
    responses. ``cost`` is a ``cost`` field when the lines have one, else, with ``llm_data``
    (LLMRouter's ``default_llm.json``: model -> ``input_price``/``output_price`` in USD per
    million tokens), ``(input_tokens * input_price + output_tokens * output_price) / 1e6``.
    ``embeddings`` (a ``.npy`` [rows, d]; row r belongs to ``embedding_id`` r, e.g. LLMRouter's
    ``query_embeddings_longformer.pt`` converted) fill ``Pool.embeddings``. Token counts and
    response times go to ``per_response`` as arrays [n, M, k].
    """
    thr = check_threshold(score_threshold)
    path = Path(path)
    kind, payload = _parsed if _parsed is not None else json_records(path)
    if kind == "object":
        raise ValueError(f"{path} holds one JSON object; LLMRouter routing data is one record per (query, model) line")
    wh = [f"{path}: {w}" for w, _ in payload]
    rs = [r for _, r in payload]
    where = lambda i: wh[i]  # noqa: E731
    model = _key_column(_column(rs, ("model_name",))[0], "model_name", where)
    query = _column(rs, ("query",))[0]
    for i, q in enumerate(query):
        if not isinstance(q, str):
            raise ValueError(f"{where(i)}: field 'query' holds {q!r}, not a text")
    task = _text_column(_column(rs, ("task_name",))[0])
    gt = _text_column(_column(rs, ("ground_truth",))[0])
    metric = _text_column(_column(rs, ("metric",))[0])
    emb_vals, emb_present = _column(rs, ("embedding_id",))
    emb_id = None
    if emb_present.all() and not any(_is_missing(v) for v in emb_vals):
        emb_id = _whole_numbers(emb_vals, "embedding_id", where)  # exact: ids beyond 2**53 stay distinct
        key = np.array([str(e) for e in emb_id], dtype=object)
    else:
        combo = pd.Series([json.dumps([t, q, g, m]) for t, q, g, m in zip(task, query, gt, metric, strict=True)])
        codes, _ = pd.factorize(combo, sort=False)
        key = np.array([f"q{c}" for c in codes], dtype=object)
    perf = _numbers(_column(rs, ("performance",))[0], "performance", where)
    correct, n_non = scores_to_verdicts(perf, thr, "performance", where)
    if split is None:
        split_name, split_how = split_from_name(path), "the file name"
    else:
        split_name, split_how = str(split), "the split argument"
    rows = _Rows(str(path), where, key, model, correct,
                 prompt_cols={"text": np.asarray(query, dtype=object), "dataset": task,
                              "split": np.full(len(rs), split_name, dtype=object), "metric": metric, "ground_truth": gt})
    tid, tid_present = _column(rs, ("task_id",))
    if tid_present.any():
        rows.prompt_cols["task_id"] = _text_column(tid)
    if emb_id is not None:
        rows.prompt_cols["embedding_id"] = _int_column(emb_id)
        rows.embed_row = emb_id
    resp, resp_present = _column(rs, ("response",))
    if resp_present.any():
        rows.answer = _text_column(resp)
    tok = {}
    for name in ("input_tokens", "output_tokens", "token_num", "response_time"):
        vals, present = _column(rs, (name,))
        if present.any():
            tok[name] = _numbers(vals, name, where, integer=name != "response_time", nonneg=True)
            rows.per_response[name] = tok[name]
    meta = {"source": str(path), "format": "llmrouter", "score_field": "performance", "score_threshold": thr,
            "non_binary_scores": n_non, "split_from": split_how if split_name is not None else None,
            "prompt_id_from": "embedding_id" if emb_id is not None else "distinct (task_name, query, ground_truth, metric)"}
    cost_vals, cost_present = _column(rs, ("cost",))
    if cost_present.any() and llm_data is not None:
        raise ValueError(f"{path}: the lines carry their own 'cost'; llm_data would give a second, different cost -- "
                         "leave llm_data out (or remove the cost fields to price the tokens)")
    if cost_present.any():
        rows.cost = _numbers(cost_vals, "cost", where, nonneg=True)
        meta["cost_unit"] = "the lines' 'cost' field (mean over a cell's responses)"
    elif llm_data is not None:
        prices = _llm_prices(llm_data)
        names = sorted(set(model))
        absent = [m for m in names if m not in prices or not isinstance(prices[m], Mapping)]
        if absent:
            raise ValueError(f"llm_data has no prices for models {absent[:5]} of {path}")
        for m in names:
            for fld in ("input_price", "output_price"):
                val = prices[m].get(fld)
                if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val) or val < 0:
                    raise ValueError(f"llm_data: {fld} of model {m!r} is {val!r}, not a non-negative number (USD per million tokens)")
        for fld in ("input_tokens", "output_tokens"):
            if fld not in tok or np.isnan(tok[fld]).any():
                i = 0 if fld not in tok else int(np.flatnonzero(np.isnan(tok[fld]))[0])
                raise ValueError(f"{where(i)}: field {fld!r} is missing; costs from llm_data need input and output token counts")
        ip = np.array([float(prices[m]["input_price"]) for m in model])
        op = np.array([float(prices[m]["output_price"]) for m in model])
        rows.cost = token_cost(tok["input_tokens"], tok["output_tokens"], ip, op)
        rows.policy_cols["input_price"] = ip
        rows.policy_cols["output_price"] = op
        if all("size" in prices[m] for m in names):
            rows.policy_cols["size"] = np.array([prices[m]["size"] for m in model], dtype=object)
        meta["cost_unit"] = "USD: (input_tokens x input_price + output_tokens x output_price) / 1e6 with llm_data's prices"
    E = None
    if embeddings is not None:
        if emb_id is None:
            raise ValueError(f"embeddings need an 'embedding_id' on every line of {path}")
        E = _read_embeddings(embeddings, str(path))
        meta["embeddings_source"] = str(embeddings)
    return _assemble(rows, drop_incomplete=drop_incomplete, embeddings=E, meta=meta, dedupe=dedupe)


# ============================================================================ RouterEval .npz
_SPLIT_ORDER = ("train", "val", "valid", "dev", "test")


def routereval_members(names) -> list[str]:
    """The splits of a RouterEval-style npz (members named ``<split>_score``), in train/val/test order."""
    splits = [n[: -len("_score")] for n in names if n.endswith("_score") and len(n) > len("_score")]
    return sorted(splits, key=lambda s: (_SPLIT_ORDER.index(s) if s in _SPLIT_ORDER else len(_SPLIT_ORDER), s))


def _npz_member(path: Path, name: str) -> np.ndarray:
    try:
        return read_npz(path, [name])[name]
    except ValueError as exc:
        hint = object_array_hint(f"array {name!r}") if "object array" in str(exc) else ""
        raise ValueError(f"{exc}{hint}") from None


def _leaves(obj, prefix=(), depth=0, out=None):
    """(path, leaf) for every RouterEval leaf ``{'data': {...}, 'model': [...]}`` inside nested dicts/lists."""
    out = [] if out is None else out
    if depth > 8:
        return out
    if isinstance(obj, dict) and "data" in obj and isinstance(obj["data"], dict):
        out.append(("/".join(map(str, prefix)), obj))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _leaves(v, (*prefix, k), depth + 1, out)
    elif isinstance(obj, (list, tuple)):
        for k, v in enumerate(obj):
            _leaves(v, (*prefix, k), depth + 1, out)
    return out


def _as_member(v, name: str, label: str) -> np.ndarray:
    """A pickled value as an array: numbers stay numbers, a list of strings becomes a text array."""
    if isinstance(v, np.ndarray) and v.dtype != object:
        return v
    if isinstance(v, pd.DataFrame):
        return v.to_numpy()
    if isinstance(v, (list, tuple, np.ndarray, pd.Series)):
        vals = list(v)
        if vals and all(isinstance(x, str) for x in vals):
            return np.asarray(vals, dtype=str)
        try:
            arr = np.asarray(vals, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{label}: entry {name!r} holds neither numbers nor texts (e.g. {vals[0]!r:.60})") from None
        return arr
    raise ValueError(f"{label}: entry {name!r} is a {type(v).__name__}, not an array or a list")


def routereval_pickle(path, leaf=None, *, obj=None) -> tuple[dict, list | None, dict]:
    """The arrays of one RouterEval router dataset in a ``.pkl`` read by the restricted unpickler
    (:mod:`oraclegap._safepickle`): ``(members, model names or None, meta)``. The published file
    nests ``router_dataset[difficulty][n][config]`` leaves ``{'data': {train_score, ...},
    'model': [names], 'prompt': {train_prompt, ...}}``; a fork's file is one such leaf. ``leaf``
    (``"easy/3/0"``, keys joined by ``/``) picks one when the file holds several."""
    path = Path(path)
    obj = safe_load(path) if obj is None else obj
    leaves = _leaves(obj)
    if not leaves:
        kind = f"a dict with keys {sorted(map(str, obj))[:8]}" if isinstance(obj, dict) else f"a {type(obj).__name__}"
        raise ValueError(f"{path} holds {kind}, not a RouterEval router dataset (a dict with 'data' and 'model', possibly "
                         "nested as router_dataset[difficulty][n][config])")
    paths = [lp for lp, _ in leaves]
    if leaf is None and len(leaves) > 1:
        raise ValueError(f"{path} holds {len(leaves)} RouterEval router datasets ({', '.join(paths[:6])}"
                         f"{', ...' if len(paths) > 6 else ''}); pick one with leaf='{paths[0]}' (CLI --leaf {paths[0]})")
    if leaf is not None:
        if str(leaf) not in paths:
            raise ValueError(f"leaf {leaf!r} is not in {path}; it holds {', '.join(paths[:10])}{', ...' if len(paths) > 10 else ''}")
        chosen = dict(leaves)[str(leaf)]
        at = str(leaf)
    else:
        at, chosen = leaves[0]
    members = {}
    for part in ("data", "prompt"):
        sub = chosen.get(part)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            raise ValueError(f"{path}: '{part}' of router dataset {at or '(top)'} is a {type(sub).__name__}, not a dict of arrays")
        for k, v in sub.items():
            members[str(k)] = v
    names = chosen.get("model")
    if names is not None:
        if not isinstance(names, (list, tuple, np.ndarray)) or not all(isinstance(x, str) for x in names):
            raise ValueError(f"{path}: 'model' of router dataset {at or '(top)'} must be a list of model names")
        names = [str(x) for x in names]
    meta = {"leaf": at or None, "leaves_in_file": len(leaves),
            "ignored_keys": sorted(str(k) for k in chosen if k not in ("data", "prompt", "model"))}
    return members, names, meta


def read_routereval(path, *, score_threshold=None, model_names=None, leaf=None, _parsed=None) -> Pool:
    """A pool from a RouterEval router dataset: a ``.npz`` or the published ``.pkl`` (read without
    executing pickle code, :func:`routereval_pickle`; ``leaf`` picks one of a nested file's
    datasets): ``<split>_score`` [n_split, M] (or [n_split, M, k])
    correctness per split, stacked in train/val/test order; ``<split>_embed`` [n_split, d] become
    ``Pool.embeddings`` (all splits or none), ``<split>_prompt`` (a text array) the prompt text,
    ``<split>_tokens`` / ``<split>_time`` [n_split, M] go to ``per_response`` (``tokens``, ``time``;
    one value per cell, repeated over its responses). Prompt ids are
    ``"<split>-<row>"`` and ``split`` is set. Model names: ``model_names`` (the argument, in
    column order), else the file's (the pickle's ``model`` list, an npz's ``model_names``/``models``
    text array), else ``m0, m1, ...``; ``meta['model_names_from']`` says which. Scores follow
    :data:`SCORE_RULE`. Entries not read are listed in ``meta['ignored_members']``.
    """
    thr = check_threshold(score_threshold)
    path = Path(path)
    file_names, extra_meta = None, {}
    if path.suffix.lower() in SAFE_PICKLE_SUFFIXES:
        members, file_names, extra_meta = routereval_pickle(path, leaf, obj=_parsed)
        names = list(members)

        def member(name):
            return _as_member(members[name], name, str(path))
    else:
        if leaf is not None:
            raise ValueError(f"leaf applies to RouterEval .pkl files only; {path} is an .npz (one router dataset)")
        try:
            with np.load(path, allow_pickle=False) as z:
                names = list(z.files)
        except Exception as exc:  # noqa: BLE001 - numpy raises several types for a damaged zip
            raise ValueError(f"{path} is damaged or not a .npz file ({type(exc).__name__}: {exc})") from None

        def member(name):
            return _npz_member(path, name)
    splits = routereval_members(names)
    if not splits:
        raise ValueError(f"{path} has no '<split>_score' arrays (it holds {names}); a RouterEval file holds train_score, "
                         "test_score, ... and train_embed, test_embed, ...")
    scores, embeds, texts, extra = [], [], [], {"tokens": [], "time": []}
    used = set()
    for s in splits:
        a = member(f"{s}_score")
        used.add(f"{s}_score")
        if a.dtype.kind not in "biuf" or a.ndim not in (2, 3):
            raise ValueError(f"{path}: array '{s}_score' must be numeric [n, M] (or [n, M, k]), got {a.dtype} {a.shape}")
        scores.append(a if a.ndim == 3 else a[:, :, None])
    shapes = {a.shape[1:] for a in scores}
    if len(shapes) != 1:
        raise ValueError(f"{path}: the score arrays disagree on (models, draws): "
                         + ", ".join(f"{s}_score {a.shape}" for s, a in zip(splits, scores, strict=True)))
    for part, store in (("embed", embeds), ("prompt", texts)):
        have = [f"{s}_{part}" in names for s in splits]
        if any(have) and not all(have):
            raise ValueError(f"{path}: '{part}' arrays exist for some splits only ({[s for s, h in zip(splits, have, strict=True) if h]} "
                             f"of {splits}); give every split one or none")
        if all(have):
            for s, a in zip(splits, scores, strict=True):
                x = member(f"{s}_{part}")
                used.add(f"{s}_{part}")
                if x.shape[0] != a.shape[0]:
                    raise ValueError(f"{path}: '{s}_{part}' has {x.shape[0]} rows but '{s}_score' has {a.shape[0]}")
                if part == "embed" and (x.ndim != 2 or x.dtype.kind not in "biuf"):
                    raise ValueError(f"{path}: '{s}_embed' must be a numeric [n, d] array, got {x.dtype} {x.shape}")
                if part == "prompt" and x.dtype.kind not in "US":
                    raise ValueError(f"{path}: '{s}_prompt' must be a text array, got dtype {x.dtype}")
                store.append(x)
    for part in ("tokens", "time"):
        if all(f"{s}_{part}" in names for s in splits):
            for s, a in zip(splits, scores, strict=True):
                x = member(f"{s}_{part}")
                used.add(f"{s}_{part}")
                if x.shape[:2] != a.shape[:2] or x.dtype.kind not in "biuf":
                    raise ValueError(f"{path}: '{s}_{part}' must be numeric {a.shape[:2]}, got {x.dtype} {x.shape}")
                extra[part].append(x.astype(float))
    M = scores[0].shape[1]
    names_from = "the model_names argument" if model_names is not None else None
    if model_names is None and file_names is not None:
        if len(file_names) != M:
            raise ValueError(f"{path}: the file's 'model' list has {len(file_names)} names but the scores have {M} columns")
        model_names, names_from = file_names, "the file ('model' list)"
    if model_names is None:
        for nm in ("model_names", "models"):
            if nm in names:
                arr = member(nm)
                used.add(nm)
                if arr.dtype.kind not in "US" or arr.shape != (M,):
                    raise ValueError(f"{path}: '{nm}' must be a text array of the {M} model names, got {arr.dtype} {arr.shape}")
                model_names, names_from = [str(x) for x in arr], f"the file (array {nm!r})"
                break
    if model_names is None:
        names_from = "positions m0, m1, ... (the file has no model names)"
    if names_from.startswith("positions"):
        model_names = [f"m{j}" for j in range(M)]
    model_names = [str(x) for x in model_names]
    if len(model_names) != M:
        raise ValueError(f"model_names has {len(model_names)} names but {path} has {M} models (score columns)")
    S = np.concatenate([a.astype(float) for a in scores], axis=0)
    sizes = [a.shape[0] for a in scores]
    starts = np.cumsum([0] + sizes)

    def where(flat: int) -> str:
        i, rest = divmod(flat, S.shape[1] * S.shape[2])
        m, d = divmod(rest, S.shape[2])
        b = int(np.searchsorted(starts, i, side="right") - 1)
        return f"{path}: array '{splits[b]}_score' row {i - starts[b]} column {m} (model {model_names[m]!r})" + \
            (f" draw {d}" if S.shape[2] > 1 else "")

    v, n_non = scores_to_verdicts(S.ravel(), thr, "score", where)
    split_col = np.concatenate([np.full(n, s, dtype=object) for s, n in zip(splits, sizes, strict=True)])
    ids = np.concatenate([[f"{s}-{i}" for i in range(n)] for s, n in zip(splits, sizes, strict=True)]).astype(object)
    prompts = pd.DataFrame({"id": ids, "split": split_col})
    if texts:
        prompts["text"] = np.concatenate([t.astype(str) for t in texts]).astype(object)
    meta = {"source": str(path), "format": "routereval", "score_threshold": thr, "non_binary_scores": n_non,
            "model_names_from": names_from, "ignored_members": sorted(set(names) - used), **extra_meta}
    V = v.reshape(S.shape)
    V3 = V if V.ndim == 3 else V[:, :, None]
    per_response = {}
    for part, arrs in extra.items():
        if arrs:  # one value per (prompt, model): the same for each of its k responses
            a = np.asarray(np.concatenate(arrs, axis=0), dtype=float)
            per_response[part] = np.broadcast_to(a.reshape(a.shape[0], a.shape[1], -1)[:, :, :1], V3.shape)
    try:
        return Pool(V3, prompts, pd.DataFrame({"name": model_names}), None,
                    np.concatenate(embeds, axis=0) if embeds else None, None, "unknown", meta, per_response)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {exc}") from None


# ============================================================================ tables (CSV / parquet)
_SEP_NAMES = {";": "';'", "\t": "tabs", "|": "'|'"}


def csv_preamble(text: str, label: str) -> tuple[str, int]:
    """A CSV's text ready for a comma-separated reader, and how many lines were skipped.

    Excel's first line ``sep=,`` (it names the separator) is skipped; ``sep=`` naming another
    separator, and a header that splits into more fields by ';', tabs or '|' than by commas (with
    the first data line agreeing), raise ``ValueError`` saying which separator the file looks
    separated by (and its decimal commas, as European spreadsheets write them)."""
    import csv

    first, _, rest = text.partition("\n")
    m = re.fullmatch(r"\s*sep=(.?)\s*", first)
    skip = 0
    if m:
        sep = m.group(1) or ","
        if sep != ",":
            raise ValueError(f"{label} starts with Excel's line 'sep={sep}': it is separated by {_SEP_NAMES.get(sep, repr(sep))}; "
                             "oraclegap reads comma-separated files -- save it as CSV (comma delimited)")
        text, skip = rest, 1
        first, _, rest = text.partition("\n")
    second = rest.partition("\n")[0]
    try:
        by_comma = len(next(csv.reader([first]), []))
    except csv.Error:  # not line-structured text (a binary file): the reader that follows says what it is
        return text, skip
    for sep, what in _SEP_NAMES.items():
        try:
            n = len(next(csv.reader([first], delimiter=sep), []))
            if n <= by_comma or (second.strip() and len(next(csv.reader([second], delimiter=sep), [])) != n):
                continue
        except csv.Error:
            continue
        decimals = " with decimal commas (e.g. '1,0')" if re.search(r"\d,\d", second) else ""
        head = (f"has a single column {first.strip()[:60]!r}" if by_comma == 1
                else f"has a header of {by_comma} fields by commas but {n} by {what}")
        how = f"sep={sep!r}" + (", decimal=','" if decimals else "")
        raise ValueError(f"{label} {head}: it looks separated by {what}{decimals}; oraclegap reads comma-separated files "
                         f"with '.' decimals -- save it as CSV (comma delimited), e.g. pandas.read_csv(path, {how})"
                         ".to_csv(new_path, index=False)")
    return text, skip


def _csv_head(path: Path, n_bytes: int = 1 << 16) -> str:
    """The first bytes of a CSV as text (a byte-order mark dropped; a character cut at the end ignored)."""
    with open(path, "rb") as fh:
        raw = fh.read(n_bytes)
    return raw.decode("utf-8-sig", errors="ignore")


def table_columns(path) -> list[str]:
    """Column names of a CSV (its header) or parquet file, read without loading the rows."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types
            raise ValueError(f"{path} is not a readable parquet file ({exc})") from None
    import csv

    with open(path, encoding="utf-8-sig", newline="") as fh:
        first = fh.readline()
        if re.fullmatch(r"\s*sep=,?\s*", first):  # Excel's separator line: the header follows
            first = fh.readline()
        return [h.strip() for h in next(csv.reader([first]), [])]


def _csv_skip(path: Path) -> int:
    """Lines before a CSV's header (Excel's ``sep=,``), after checking its separator (:func:`csv_preamble`)."""
    try:
        head = _csv_head(path)
    except OSError as exc:
        raise ValueError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if "\n" in head:
        head = head[: head.rfind("\n")]  # whole lines only
    return csv_preamble(head, str(path))[1]


def _read_table(path: Path, dtype=None) -> pd.DataFrame:
    if path.suffix.lower() in SAFE_PICKLE_SUFFIXES:  # RouterBench's routerbench_0shot.pkl: no pickle code runs
        obj = safe_load(path)
        if not isinstance(obj, pd.DataFrame):
            raise ValueError(f"{path} holds a {type(obj).__name__}, not a pandas DataFrame (a RouterBench table)")
        return obj
    if path.suffix.lower() == ".parquet":
        try:
            return pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"{path} is not a readable parquet file ({exc})") from None
    skip = _csv_skip(path)
    try:
        return pd.read_csv(path, dtype=dtype, encoding="utf-8-sig", keep_default_na=dtype is not str, skiprows=skip)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte offset {exc.start}); save it as UTF-8") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise ValueError(f"{path} is not a well-formed CSV: {str(exc).strip()}") from None


def _row_word(path: Path) -> Callable[[int], str]:
    """Row i of a table as a reader sees it: "line i+2" of a CSV (after the header), "row i" of a parquet."""
    if path.suffix.lower() == ".parquet" or path.suffix.lower() in SAFE_PICKLE_SUFFIXES:
        return lambda i: f"row {i}"
    try:
        skip = _csv_skip(path) if path.is_file() else 0
    except ValueError:
        skip = 0
    return lambda i: f"line {i + 2 + skip}"


def _row_namer(path: Path, ids=None, id_name: str = "") -> Callable[[int], str]:
    word = _row_word(path)

    def where(i: int) -> str:
        return f"{path}: {word(i)}" + (f" ({id_name} {ids[i]!r})" if ids is not None else "")

    return where


def _text_of(x):
    """A prompt cell as text: lists/arrays of strings (RouterBench keeps some prompts as lists, its
    CSVs as list literals) joined by blank lines."""
    if isinstance(x, str):
        lst = literal_list(x)
        return x if lst is None else "\n\n".join(lst)
    if isinstance(x, (list, tuple, np.ndarray)):
        return "\n\n".join(str(y) for y in x)
    return x


def literal_cells(values) -> tuple[np.ndarray, int]:
    """(texts, number of list-literal cells parsed): each list-literal cell joined as :func:`_text_of` does."""
    vals = np.asarray(values, dtype=object)
    out = np.empty(len(vals), dtype=object)
    n = 0
    for i, x in enumerate(vals):  # one pass over the cells (text parsing has no vector form)
        lst = literal_list(x)
        if lst is None:
            out[i] = x
        else:
            out[i] = "\n\n".join(lst)
            n += 1
    return out, n


def routerbench_parts(d: pd.DataFrame, label: str, *, score_threshold=None, drop_incomplete: bool = True,
                      duplicates: str = "first", where: Callable[[int], str] | None = None) -> dict:
    """Parse a RouterBench wide frame: models are the columns ``X`` with a ``X|total_cost`` partner.

    Returns verdicts [n, M] (bool), the prompt table (``id`` = ``sample_id``, ``text`` =
    ``prompt``, ``dataset`` = ``eval_name``, ``split`` when the frame has one), the model names,
    ``cost`` [n, M] (USD per query), the ``X|model_response`` answers when every model has them
    (else None), and counts. Rows with a missing outcome or cost are dropped when
    ``drop_incomplete`` (else refused); a repeated ``sample_id`` keeps its first row
    (``duplicates="first"``) or is refused (``"error"``). Outcomes must be 0/1 (checked cell by
    cell) unless ``score_threshold`` is given. ``where(i)`` names row i of ``d`` in messages
    (default: "row i" after dropping, as :func:`~oraclegap._validate.as_bool_columns` counts).
    """
    thr = check_threshold(score_threshold)
    cost_cols = [c for c in d.columns if isinstance(c, str) and c.endswith("|total_cost")]
    if not cost_cols:
        raise ValueError(f"{label} has no '<model>|total_cost' columns; a RouterBench table has one per model")
    models = [c.removesuffix("|total_cost") for c in cost_cols]
    missing = [m for m in models if m not in d.columns]
    if missing:
        raise ValueError(f"{label}: correctness columns missing for {missing}")
    if "sample_id" not in d.columns:
        raise ValueError(f"{label} has no 'sample_id' column (the RouterBench prompt id)")
    d = d.assign(_row=np.arange(len(d)))
    n_raw = len(d)
    incomplete = d[models + cost_cols].isna().any(axis=1).to_numpy()
    if incomplete.any() and not drop_incomplete:
        i = int(np.flatnonzero(incomplete)[0])
        cols = [c for c in models + cost_cols if pd.isna(d[c].iloc[i])]
        name = where(i) if where else f"{label}: row {i}"
        raise ValueError(f"{name} has no value in {cols[:4]} ({int(incomplete.sum())} such rows); pass drop_incomplete=True "
                         "(CLI --drop-incomplete) to keep only the rows with every model's outcome and cost")
    d = d[~incomplete]
    ids = d["sample_id"].astype(str)
    dup = ids.duplicated().to_numpy()
    if dup.any() and duplicates == "error":
        i = int(np.flatnonzero(dup)[0])
        name = where(int(d["_row"].iloc[i])) if where else f"{label}: row {i}"
        raise ValueError(f"{name}: sample_id {ids.iloc[i]!r} appears more than once; every prompt needs one row")
    d = d[~dup].reset_index(drop=True)
    rownames = None if where is None else (lambda i: where(int(d["_row"].iloc[i])))
    n_non = 0
    if thr is None and where is None:
        v = as_bool_columns(d, models, label)
    else:
        vals = d[models].to_numpy()
        num = pd.DataFrame(vals).apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
        text_cells = np.isnan(num) & ~pd.isna(vals)
        if text_cells.any():
            i, j = np.argwhere(text_cells)[0]
            raise ValueError(f"{rownames(i)}: column {models[j]!r} holds {vals[i, j]!r}, not a score")
        flat_where = lambda f: f"{rownames(f // len(models))}: column {models[f % len(models)]!r}"  # noqa: E731
        v, n_non = scores_to_verdicts(num.ravel(), thr, "score", lambda f: flat_where(f))
        v = v.reshape(num.shape)
    cost = d[cost_cols].to_numpy(dtype=float)
    bad = ~np.isfinite(cost) | (cost < 0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        name = rownames(i) if rownames else f"{label}: row {i}"
        raise ValueError(f"{name}: column {cost_cols[j]!r} holds {cost[i, j]!r}, not a non-negative cost")
    n_lit = 0
    if "prompt" in d.columns:
        n_lit = int(d["prompt"].map(lambda x: literal_list(x) is not None).sum())
    prompts = pd.DataFrame({"id": d["sample_id"].astype(str),
                            "text": d["prompt"].map(_text_of) if "prompt" in d.columns else None,
                            "dataset": d["eval_name"] if "eval_name" in d.columns else None})
    if "split" in d.columns:
        prompts["split"] = d["split"]
    resp_cols = [f"{m}|model_response" for m in models]
    answers = None
    if all(c in d.columns for c in resp_cols):
        a = d[resp_cols].to_numpy(dtype=object)
        a = np.where(pd.isna(a), "", a).astype(object)
        flat, n_ans = literal_cells(a.ravel())
        answers = flat.reshape(a.shape)
        n_lit += n_ans
    known = set(models) | set(cost_cols) | set(resp_cols) | {"sample_id", "prompt", "eval_name", "split", "_row",
                                                            "oracle_model_to_route_to"}
    ignored = [str(c) for c in d.columns if c not in known]  # kept in meta: what the importer drops (e.g. 'Unnamed: 0')
    return {"verdicts": v, "prompts": prompts, "models": models, "cost": cost, "answers": answers,
            "rows_dropped_incomplete": int(incomplete.sum()), "rows_in_file": n_raw, "duplicate_rows_dropped": int(dup.sum()),
            "non_binary_scores": n_non, "ignored_columns": ignored, "list_literal_cells_parsed": n_lit}


def read_routerbench(path, *, score_threshold=None, split=None, drop_incomplete: bool = False, _parsed=None) -> Pool:
    """A k = 1 pool from a RouterBench wide table (CSV, or parquet from its pickle: see
    :func:`routerbench_parts`). Outcomes follow :data:`SCORE_RULE` (RouterBench's MT-Bench scores
    are fractional: give ``score_threshold``); ``cost`` is ``<model>|total_cost`` (USD per query),
    ``answers`` the ``<model>|model_response`` texts; ``split`` is the argument, else the file
    name's (``mbpp_train.csv``), else unset. A repeated ``sample_id`` or a missing outcome or cost
    is refused (``drop_incomplete=True`` drops rows missing any)."""
    path = Path(path)
    if _parsed is not None:
        if not isinstance(_parsed, pd.DataFrame):
            raise ValueError(f"{path} holds a {type(_parsed).__name__}, not a pandas DataFrame (a RouterBench table)")
        d = _parsed
    else:
        d = _read_table(path, dtype={"sample_id": str} if path.suffix.lower() == ".csv" else None)
    if len(d) == 0:
        raise ValueError(f"{path} has a header but no rows")
    split_name = str(split) if split is not None else split_from_name(path)
    if "split" not in d.columns:
        d["split"] = split_name
    where = _row_namer(path, d["sample_id"].astype(str).to_numpy() if "sample_id" in d.columns else None, "sample_id")
    parts = routerbench_parts(d, str(path), score_threshold=score_threshold, drop_incomplete=drop_incomplete,
                              duplicates="error", where=where)
    meta = {"source": str(path), "format": "routerbench", "cost_unit": "USD per query ('<model>|total_cost')",
            "score_threshold": check_threshold(score_threshold),
            **{k: parts[k] for k in ("rows_in_file", "rows_dropped_incomplete", "non_binary_scores", "ignored_columns",
                                     "list_literal_cells_parsed")},
            "split_from": None if split_name is None else ("the split argument" if split is not None else "the file name")}
    v = parts["verdicts"][:, :, None]
    ans = None if parts["answers"] is None else parts["answers"][:, :, None]
    try:
        return Pool(v, parts["prompts"], pd.DataFrame({"name": parts["models"]}), ans, None, parts["cost"], "unknown", meta)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {exc}") from None


# ============================================================================ EmbedLLM long CSV
EMBEDLLM_COLUMNS = ("model_id", "prompt_id", "label")


def read_embedllm(path, *, split=None, embeddings=None, drop_incomplete: bool = False, dedupe: bool = False) -> Pool:
    """A pool from an EmbedLLM correctness table (``train.csv``/``val.csv``/``test.csv``, or
    parquet): one row per (model, question) with ``model_id``, ``prompt_id`` and a 0/1
    ``label``. Policies are ``model_name`` (else ``model_id``) in ``model_id`` order; prompts
    are ``prompt_id`` in numeric order with ``text`` = ``prompt`` and ``category``; ``split`` is
    the argument, else the file name's, else unset. ``embeddings`` (``.npy`` [rows, d], row r =
    ``prompt_id`` r: EmbedLLM's ``question_embeddings.pth`` converted) fill
    ``Pool.embeddings``. Labels must be 0/1 (True/False); anything else is refused naming the
    line. Repeated rows of one (model, question) are repeated samples (k > 1)."""
    path = Path(path)
    d = _read_table(path, dtype=str)
    absent = [c for c in EMBEDLLM_COLUMNS if c not in d.columns]
    if absent:
        raise ValueError(f"{path} lacks EmbedLLM columns {absent} (it has {list(d.columns)[:10]})")
    if len(d) == 0:
        raise ValueError(f"{path} has a header but no rows")
    where = _row_namer(path)
    for c in ("model_id", "prompt_id"):
        blank = (d[c].isna() | (d[c].astype(str).str.strip() == "")).to_numpy()
        if blank.any():
            raise ValueError(f"{where(int(np.flatnonzero(blank)[0]))}: field {c!r} is blank; every row needs it")
    correct = as_bool_columns(d, ["label"], str(path), row_names=_row_word(path))[:, 0]

    def numeric_key(col):
        """Whole-number ids as exact Python ints (ids beyond 2**53 keep their order), other
        numbers as float, None when some id is not a number."""
        txt = d[col].astype(str).str.strip()
        if txt.str.fullmatch(r"[+-]?\d+").all():
            return np.asarray([int(t) for t in txt], dtype=object)
        x = pd.to_numeric(d[col], errors="coerce").to_numpy(dtype=float)
        return x if not np.isnan(x).any() else None

    pid_num = numeric_key("prompt_id")
    rows = _Rows(str(path), where, d["prompt_id"].astype(str).str.strip().to_numpy(dtype=object),
                 d["model_id"].astype(str).str.strip().to_numpy(dtype=object), correct,
                 prompt_sort=pid_num, policy_sort=numeric_key("model_id"))
    split_name = str(split) if split is not None else split_from_name(path)
    if "prompt" in d.columns:
        rows.prompt_cols["text"] = d["prompt"].to_numpy(dtype=object)
    rows.prompt_cols["split"] = np.full(len(d), split_name, dtype=object)
    if "category" in d.columns:
        rows.prompt_cols["category"] = d["category"].to_numpy(dtype=object)
    if "model_name" in d.columns:
        rows.policy_cols["model_name"] = d["model_name"].to_numpy(dtype=object)
    E = None
    if embeddings is not None:
        if pid_num is None or pid_num.dtype != object or any(x < 0 for x in pid_num):
            raise ValueError(f"embeddings need whole-number prompt_ids in {path}")
        rows.embed_row = pid_num
        E = _read_embeddings(embeddings, str(path))
    known = {*EMBEDLLM_COLUMNS, "model_name", "prompt", "category"}
    meta = {"source": str(path), "format": "embedllm", "split_from": None if split_name is None else
            ("the split argument" if split is not None else "the file name"),
            "ignored_columns": [c for c in d.columns if c not in known]}
    if E is not None:
        meta["embeddings_source"] = str(embeddings)
    pool = _assemble(rows, drop_incomplete=drop_incomplete, embeddings=E, meta=meta, dedupe=dedupe)
    if "model_name" in d.columns:  # name the policies by model_name (distinct names required), keep model_id
        names = pool.policies["model_name"].astype(str)
        if names.duplicated().any():
            raise ValueError(f"{path}: model_name {names[names.duplicated()].iloc[0]!r} belongs to several model_ids")
        pol = pool.policies.rename(columns={"name": "model_id"}).drop(columns="model_name")
        pol.insert(0, "name", names.to_numpy())
        pool = dataclasses.replace(pool, policies=pol)
    return pool


# ============================================================================ oraclegap long table
LONG_REQUIRED = ("prompt_id", "policy", "correct")
#: Names a long table is often written with, and the long format's name for each (said when a file uses them).
LONG_ALIASES = {"model": "policy", "model_name": "policy", "model_id": "policy", "text": "prompt_text",
                "question": "prompt_text", "response": "answer", "dataset": "prompt_dataset", "split": "prompt_split"}


def long_alias_hint(columns) -> str:
    """'; rename 'model' to 'policy', ...' for the common names among ``columns`` (empty when none)."""
    pairs = [f"'{c}' to '{LONG_ALIASES[c]}'" for c in map(str, columns) if c in LONG_ALIASES]
    return f"; rename {', '.join(pairs)}" if pairs else ""
#: The long format's JSON Schema (one row = one object), shipped in ``oraclegap/schemas/``.
LONG_SCHEMA_FILE = "long.schema.json"


def long_schema() -> dict:
    """The long format's JSON Schema (``oraclegap/schemas/long.schema.json``, shipped with the package)."""
    from importlib.resources import files

    return json.loads(files("oraclegap").joinpath("schemas", LONG_SCHEMA_FILE).read_text(encoding="utf-8"))


def _schema_of(col: str, schema: dict) -> dict | None:
    if col in schema["properties"]:
        return schema["properties"][col]
    for pat, sub in schema.get("patternProperties", {}).items():
        if re.search(pat, col):
            return sub
    return None


def validate_long_table(d: pd.DataFrame, label: str, where: Callable[[int], str] | None = None) -> None:
    """Check a long table against :func:`long_schema`, column by column (vectorised; the schema
    describes one row, and a column holds that field of every row): the required columns, no
    column outside ``properties``/``patternProperties``, and each column's ``type``, ``enum``,
    ``minimum`` and ``minLength`` (a CSV's text cells by what they parse to; a blank cell is a
    missing value). Raises ``ValueError`` naming the file, the column and the first offending row
    (``where(i)``, default ``"<label>: row i"``)."""
    schema = long_schema()
    where = where or (lambda i: f"{label}: row {i}")
    absent = [c for c in schema["required"] if c not in d.columns]
    if absent:
        raise ValueError(f"{label} lacks long-table columns {absent}; a long table has prompt_id, policy, correct "
                         "(and optional draw, answer, cost, prompt_*, policy_*, response_*) -- see the schema "
                         f"oraclegap/schemas/{LONG_SCHEMA_FILE}{long_alias_hint(d.columns)}")
    other = [c for c in d.columns if _schema_of(str(c), schema) is None]
    if other:
        raise ValueError(f"{label} has columns {other[:5]} that are not part of the long format; name prompt fields "
                         "prompt_<name>, policy fields policy_<name> and numeric per-response fields response_<name>, drop "
                         "the rest, or build the pool in Python with Pool.from_long(df, prompt_columns=..., "
                         f"policy_columns=...) (schema oraclegap/schemas/{LONG_SCHEMA_FILE}){long_alias_hint(other)}")
    for c in d.columns:
        sub = _schema_of(str(c), schema) or {}
        types = sub.get("type")
        if types is None:
            continue
        if c == "correct":  # the one rule of every 0/1 outcome column, wide or long (as_bool_columns)
            as_bool_columns(d, [c], label, row_names=lambda i: where(i).removeprefix(f"{label}: "))
            continue
        types = [types] if isinstance(types, str) else list(types)
        col = d[c]
        present = col.notna().to_numpy().copy()
        if col.dtype.kind in "biuf":
            vals = col.to_numpy()
        else:  # text (a CSV's cells): a blank cell is a missing value
            vals = col.to_numpy(dtype=object)
            present &= ~np.asarray([isinstance(v, str) and v.strip() == "" for v in vals], dtype=bool)
        if "null" not in types and c in schema["required"] and not present.all():
            i = int(np.flatnonzero(~present)[0])
            raise ValueError(f"{where(i)}: field {c!r} is blank; every response needs it")
        v = vals[present]
        idx = np.flatnonzero(present)
        if {"integer", "number"} & set(types):
            num = pd.to_numeric(pd.Series(v, dtype=object), errors="coerce").to_numpy(dtype=float)
            bad = np.isnan(num) | ~np.isfinite(num)
            if "integer" in types:
                bad |= np.where(np.isfinite(num), num != np.round(num), True)
            if "minimum" in sub:
                bad |= num < sub["minimum"]
            if "enum" in sub:
                bad |= ~np.isin(num, sub["enum"])
            if bad.any():
                i = int(idx[np.flatnonzero(bad)[0]])
                want = f"one of {sub['enum']}" if "enum" in sub else ("a whole number" if "integer" in types else "a number")
                if "minimum" in sub:
                    want += f" >= {sub['minimum']}"
                raise ValueError(f"{where(i)}: field {c!r} holds {vals[i]!r}, not {want} (schema oraclegap/schemas/"
                                 f"{LONG_SCHEMA_FILE})")
        elif "string" in types and "minLength" in sub:
            short = np.array([len(str(x).strip()) < sub["minLength"] for x in v], dtype=bool)
            if short.any():
                i = int(idx[np.flatnonzero(short)[0]])
                raise ValueError(f"{where(i)}: field {c!r} is blank; every response needs it")


def _blank_is_none(col: pd.Series) -> np.ndarray:
    a = col.to_numpy(dtype=object)
    return np.where(a == "", None, a)


def _infer(col: pd.Series) -> np.ndarray:
    """A CSV text column back to values: "" is missing; a column of numbers becomes numbers."""
    s = pd.Series(_blank_is_none(col), index=col.index, dtype=object)
    present = s.dropna()
    if len(present):
        num = pd.to_numeric(present, errors="coerce")
        if not num.isna().any():
            txt = present.astype(str).str.strip()
            if txt.str.fullmatch(r"[+-]?\d+").all():  # whole numbers: exact, never through float
                ints = [int(t) for t in txt]
                if not all(-(2**63) <= x < 2**63 for x in ints):
                    return s.to_numpy(dtype=object)  # beyond int64: kept as the text that names them exactly
                out = pd.Series(None, index=s.index, dtype=object)
                out[present.index] = ints
                return (out.astype(np.int64) if len(present) == len(s) else out).to_numpy()
            out = pd.Series(np.nan, index=s.index)
            out[present.index] = num.astype(float).to_numpy()
            return out.to_numpy()
    return s.to_numpy(dtype=object)


_LONG_BATCH = 1 << 17  # rows per Arrow batch read: 2 MiB of verdicts; larger batches cost memory, not time


class _LongLayout:
    """Where row ``r`` of a long table in C order of [n, M, k] belongs, for runs of rows.

    For rows ``r0 .. r0 + b - 1`` :meth:`at` gives the prompt (counted from ``r0 // (M k)``), the
    policy and the draw of every row, and the offsets of the rows that open a prompt. The three
    patterns repeat with period ``M k``, so they are computed once for ``b_max + M k`` rows and
    every run is a slice of them (views: no integer division per row and batch)."""

    def __init__(self, M: int, k: int, b_max: int):
        self.M, self.k, self.Mk = M, k, M * k
        self._patterns(b_max)

    def _patterns(self, b_max: int) -> None:
        reps = -(-(b_max + self.Mk) // self.Mk)
        self.prompt = np.repeat(np.arange(reps, dtype=np.int64), self.Mk)
        self.policy = np.tile(np.repeat(np.arange(self.M, dtype=np.int64), self.k), reps)
        self.draw = np.tile(np.arange(self.k, dtype=np.int64), reps * self.M)

    def at(self, r0: int, b: int):
        """``(prompt - r0 // (M k), policy, draw, starts)`` of rows ``r0 .. r0 + b - 1``."""
        off = r0 % self.Mk
        if b + off > self.prompt.size:  # a longer run than planned: widen the patterns
            self._patterns(b)
        sl = slice(off, off + b)
        starts = np.arange((self.Mk - off) % self.Mk, b, self.Mk)
        return self.prompt[sl], self.policy[sl], self.draw[sl], starts


def _read_long_arrow(path: Path) -> Pool | None:
    """The columnar path of :func:`read_long` for a parquet written by :meth:`Pool.to_long`.

    Through pyarrow (already a dependency, and the engine pandas itself reads parquet with): row
    groups are read one batch at a time with the text columns kept dictionary-encoded, checked
    with vectorised comparisons against the layout ``to_long`` writes (rows in C order of
    [n, M, k], the prompt and policy of every row, draws 0..k-1, 0/1 verdicts, one cost per cell,
    prompt and policy fields constant), and assembled straight into the arrays. Returns None
    whenever the file is anything else or any check fails: the row-by-row reader then reads it
    and gives its usual answers and refusals, so both paths yield the same pool or the same error.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, read_dictionary=None)
        kv = pf.metadata.metadata or {}
        info = json.loads(kv.get(b"PANDAS_ATTRS", b"{}")).get("oraclegap")
        schema = pf.schema_arrow
    except Exception:  # noqa: BLE001 - unreadable or unusual files: the general reader explains
        return None
    if not isinstance(info, dict) or info.get("format") != LONG_FORMAT or not isinstance(info.get("shape"), list):
        return None
    try:
        n, M, k = (int(x) for x in info["shape"])
    except (TypeError, ValueError):
        return None
    names = list(schema.names)
    if n < 1 or M < 1 or k < 1 or pf.metadata.num_rows != n * M * k or names[:4] != ["prompt_id", "policy", "draw", "correct"]:
        return None
    extra = names[4:]
    if len(set(names)) != len(names) or any(
            not (c in ("cost", "answer") or c.startswith(("prompt_", "policy_", "response_"))) or c == "prompt_id"
            for c in extra):
        return None  # unknown columns, repeated names: the general reader
    text = lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)  # noqa: E731
    if not (text(schema.field("prompt_id").type) and text(schema.field("policy").type)):
        return None
    if not pa.types.is_integer(schema.field("draw").type):
        return None
    if not (pa.types.is_integer(schema.field("correct").type) or pa.types.is_boolean(schema.field("correct").type)):
        return None
    resp = [c for c in extra if c.startswith("response_")]
    for c in resp + (["cost"] if "cost" in extra else []):
        t = schema.field(c).type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t)) or pa.types.is_float16(t):
            return None
    if "answer" in extra and not (text(schema.field("answer").type) or pa.types.is_null(schema.field("answer").type)):
        return None
    fields = [c for c in extra if c.startswith(("prompt_", "policy_"))]
    Mk = M * k
    v = np.empty(n * Mk, dtype=bool)
    cost = np.empty(n * M) if "cost" in extra else None
    answers = np.empty(n * Mk, dtype=object) if "answer" in extra else None
    per_resp: dict[str, np.ndarray] = {}
    ids: list = []
    pol_names = None
    firsts: dict[str, list] = {c: [] for c in fields}
    pol_vals: dict[str, pa.Array] = {}
    carry: dict[str, pa.Array] = {}
    try:
        pf = pq.ParquetFile(path, read_dictionary=["prompt_id", "policy"])
        layout = _LongLayout(M, k, _LONG_BATCH)
        r0 = 0
        for batch in pf.iter_batches(batch_size=_LONG_BATCH, use_threads=True):
            b = batch.num_rows
            # each row's prompt (counted from the batch's first, lo), policy and draw
            p_rel, m_exp, d_exp, starts = layout.at(r0, b)
            lo = r0 // Mk
            # prompt ids: the first row of each prompt names it; every row must carry its prompt's id
            pid = batch.column("prompt_id")
            pol = batch.column("policy")
            if pid.null_count or pol.null_count:
                return None
            ids.extend(pid.take(pa.array(starts)).dictionary_decode().to_pylist() if len(starts) else [])
            dict_ids = pid.dictionary.to_numpy(zero_copy_only=False)
            local = pd.Index(np.asarray(ids[lo:lo + int(p_rel[-1]) + 1], dtype=object))
            if not local.is_unique:
                return None
            code = local.get_indexer(dict_ids)
            got = code[pid.indices.to_numpy(zero_copy_only=False)]
            if (got != p_rel).any():
                return None
            if pol_names is None:
                if b < Mk:
                    return None
                pol_names = pol.take(pa.array(np.arange(M) * k)).dictionary_decode().to_pylist()
                if len(set(pol_names)) != M:
                    return None
                pol_index = pd.Index(np.asarray(pol_names, dtype=object))
                for c in fields:
                    if c.startswith("policy_"):
                        pol_vals[c] = batch.column(c).take(pa.array(np.arange(M) * k))
            pcode = pol_index.get_indexer(pol.dictionary.to_numpy(zero_copy_only=False))
            if (pcode[pol.indices.to_numpy(zero_copy_only=False)] != m_exp).any():
                return None
            dr = batch.column("draw")
            if dr.null_count or (dr.to_numpy() != d_exp).any():
                return None
            cor = batch.column("correct")
            if cor.null_count:
                return None
            cv = cor.to_numpy(zero_copy_only=False)
            if cv.dtype != bool and ((cv != 0) & (cv != 1)).any():
                return None
            v[r0:r0 + b] = cv.astype(bool)
            if cost is not None:
                cc = batch.column("cost")
                if cc.null_count:
                    return None
                cval = cc.to_numpy().astype(float)
                if not np.isfinite(cval).all() or (cval < 0).any():
                    return None
                # a cell's first row gives its cost; the cell's other rows must repeat it
                c0, c1 = r0 // k, -(-(r0 + b) // k)  # the cells the batch touches
                head = np.flatnonzero(d_exp == 0)
                cost[(r0 + head) // k] = cval[head]
                if (cval != np.repeat(cost[c0:c1], k)[r0 - c0 * k:r0 - c0 * k + b]).any():
                    return None
            if answers is not None:
                a = batch.column("answer").to_numpy(zero_copy_only=False)
                answers[r0:r0 + b] = np.where(pd.isna(a), "", a)
            for c in resp:
                col = batch.column(c)
                if col.null_count:
                    return None
                a = col.to_numpy()
                if c not in per_resp:
                    keep = a.dtype.kind in "iu" or a.dtype == np.float32
                    per_resp[c] = np.empty(n * Mk, dtype=a.dtype if keep else float)
                per_resp[c][r0:r0 + b] = a
            for c in fields:
                col = batch.column(c)
                if c.startswith("prompt_"):
                    ref = col.take(pa.array(starts))
                    firsts[c].append(ref)
                    # the batch's prompts: the one carried over from the previous batch, then those starting here
                    local_f = ref if (len(starts) and starts[0] == 0) else pa.concat_arrays([carry[c], ref])
                    carry[c] = local_f.slice(len(local_f) - 1, 1)
                    exp = local_f.take(pa.array(p_rel))
                else:
                    exp = pol_vals[c].take(pa.array(m_exp))
                if pa.types.is_null(col.type):  # every value missing: constant
                    continue
                same = pc.fill_null(pc.equal(col, exp), False)
                if pa.types.is_floating(col.type):
                    both = pc.and_(pc.is_null(col, nan_is_null=True), pc.is_null(exp, nan_is_null=True))
                else:
                    both = pc.and_(pc.is_null(col), pc.is_null(exp))
                if not pc.all(pc.or_(same, both)).as_py():
                    return None
            r0 += b
        if r0 != n * Mk or len(ids) != n:
            return None
    except (pa.ArrowException, ValueError, TypeError, KeyError):
        return None
    pid_all = [str(x) for x in ids]
    if any(x.strip() == "" for x in pid_all) or any(str(x).strip() == "" for x in pol_names or []):
        return None
    if len(set(pid_all)) != n:
        return None
    ptab = pd.DataFrame({"id": np.asarray(pid_all, dtype=object)})
    mtab = pd.DataFrame({"name": np.asarray([str(x) for x in pol_names or []], dtype=object)})
    for c in fields:
        if c.startswith("prompt_"):
            vals = pa.concat_arrays(firsts[c]).to_pandas().to_numpy(dtype=object)
            ptab[c.split("_", 1)[1]] = vals
        else:
            mtab[c.split("_", 1)[1]] = pol_vals[c].to_pandas().to_numpy(dtype=object)
    per_response = {c.split("_", 1)[1]: a.reshape(n, M, k) for c, a in per_resp.items()}
    alignment = info.get("alignment", "unknown")
    meta = dict(info.get("meta") or {})
    try:
        return Pool(v.reshape(n, M, k), ptab, mtab, None if answers is None else answers.reshape(n, M, k), None, None if cost is None else cost.reshape(n, M), alignment,
                    meta, per_response)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def read_long(path, *, dedupe: bool = False) -> Pool:
    """A pool from oraclegap's long table (written by :meth:`Pool.to_long`, or by hand): one row
    per response with ``prompt_id``, ``policy``, ``correct`` (0/1), optional ``draw`` (positions
    0..k-1; without it rows keep their file order), ``answer``, ``cost`` (the cell's cost per
    response), ``prompt_<column>`` (prompt table; the same on every row of a prompt) and
    ``policy_<column>`` (policy table) and ``response_<name>`` (a numeric per-response array,
    ``pool.per_response[name]``; a parquet keeps its dtype). Any other column is refused. A parquet
    written by ``to_long`` also restores the pool's alignment and ``meta``."""
    path = Path(path)
    is_csv = path.suffix.lower() != ".parquet"
    if not is_csv:
        fast = _read_long_arrow(path)
        if fast is not None:
            return fast
    d = _read_table(path, dtype=str if is_csv else None)
    if len(d):
        validate_long_table(d, str(path), _row_namer(path))  # the shipped schema (oraclegap/schemas/long.schema.json)
    absent = [c for c in LONG_REQUIRED if c not in d.columns]
    if absent:
        raise ValueError(f"{path} lacks long-table columns {absent}; a long table has prompt_id, policy, correct "
                         f"(and optional draw, answer, cost, prompt_*, policy_*){long_alias_hint(d.columns)}")
    if len(d) == 0:
        raise ValueError(f"{path} has a header but no rows; a pool needs at least one response")
    other = [c for c in d.columns if c not in (*LONG_REQUIRED, "draw", "answer", "cost")
             and not str(c).startswith(("prompt_", "policy_", "response_"))]
    if other:
        raise ValueError(f"{path} has columns {other[:5]} that are not part of the long format; name prompt fields "
                         "prompt_<name>, policy fields policy_<name> and numeric per-response fields response_<name>, "
                         "drop the rest, or build the pool in Python with Pool.from_long(df, prompt_columns=..., "
                         f"policy_columns=...){long_alias_hint(other)}")
    where = _row_namer(path)
    for c in ("prompt_id", "policy"):
        blank = (d[c].isna() | (d[c].astype(str).str.strip() == "")).to_numpy()
        if blank.any():
            raise ValueError(f"{where(int(np.flatnonzero(blank)[0]))}: field {c!r} is blank; every response needs it")
    correct = as_bool_columns(d, ["correct"], str(path), row_names=_row_word(path))[:, 0]
    rows = _Rows(str(path), where, d["prompt_id"].astype(str).to_numpy(dtype=object),
                 d["policy"].astype(str).to_numpy(dtype=object), correct)
    conv = _infer if is_csv else (lambda s: s.to_numpy(dtype=object))
    if "draw" in d.columns:
        rows.draw = _numbers(conv(d["draw"]), "draw", where, integer=True, nonneg=True)
    if "answer" in d.columns:
        rows.answer = d["answer"].to_numpy(dtype=object)
    if "cost" in d.columns:
        rows.cost = _numbers(conv(d["cost"]), "cost", where, nonneg=True)
    for c in d.columns:  # per-response numbers (to_long writes pool.per_response as response_<name>)
        if str(c).startswith("response_"):
            col = d[c]
            if not is_csv and col.dtype.kind in "iuf":
                vals = col.to_numpy()
            elif is_csv:  # text: numbers (whole numbers stay exact integers), blanks are NaN
                num = pd.to_numeric(col, errors="coerce")
                bad = (col.notna() & col.astype(str).str.strip().ne("") & num.isna()).to_numpy()
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise ValueError(f"{where(i)}: field {c!r} holds {col.iloc[i]!r}, not a number")
                vals = num.to_numpy()
            else:
                vals = _numbers(conv(col), c, where)
            rows.per_response[str(c).split("_", 1)[1]] = vals
    text_cols = {"prompt_text", "prompt_dataset", "prompt_split", "policy_base", "policy_dataset", "policy_recipe"}
    for c in d.columns:
        if c in ("prompt_id",) or not (str(c).startswith("prompt_") or str(c).startswith("policy_")):
            continue
        vals = _blank_is_none(d[c]) if (is_csv and c in text_cols) else conv(d[c])
        (rows.prompt_cols if c.startswith("prompt_") else rows.policy_cols)[c.split("_", 1)[1]] = vals
    info = (d.attrs or {}).get("oraclegap") if not is_csv else None
    alignment, meta = "unknown", {"source": str(path), "format": "long"}
    if isinstance(info, dict) and info.get("format") == LONG_FORMAT:  # written by Pool.to_long: restore what it kept
        alignment = info.get("alignment", "unknown")
        meta = dict(info.get("meta") or {})
    pool = _assemble(rows, meta=meta, alignment=alignment, dedupe=dedupe)
    if isinstance(info, dict) and info.get("shape") not in (None, list(pool.shape)):
        raise ValueError(f"{path}: the rows make a pool of shape {list(pool.shape)} but the file records {info['shape']}")
    if rows.cost is not None:  # a cell's cost is written on each of its rows: the rows must agree
        c = np.asarray(rows.cost)
        cell_mean = pool.cost[pd.Index(pool.prompt_ids).get_indexer(rows.prompt), pd.Index(pool.policy_names).get_indexer(rows.policy)]
        off = ~np.isclose(c, cell_mean, rtol=1e-12, atol=0)
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise ValueError(f"{where(i)}: field 'cost' differs between the rows of one (prompt, policy) cell; the long format "
                             "holds one cost per cell")
    return pool
