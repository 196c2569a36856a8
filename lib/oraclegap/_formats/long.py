"""oraclegap's own long table as a pool: one row per response, as ``Pool.to_long`` writes it (CSV or
parquet) or as written by hand.

A parquet that ``Pool.to_long`` wrote is read through Arrow (:mod:`.long_arrow`); every other
file, and every file the columnar path declines, row by row against the schema of
:mod:`.long_schema`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._validate import as_bool_columns
from ..pool import Pool
from . import long_arrow
from ._common import _numbers
from .assemble import _assemble, _Rows
from .long_schema import LONG_FORMAT, LONG_REQUIRED, long_alias_hint, validate_long_table
from .tables import _read_table, _refuse_blank, _row_namer, _row_word


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
        fast = long_arrow._read_long_arrow(path)
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
    _refuse_blank(d, ("prompt_id", "policy"), where, "response")
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
