"""EmbedLLM's long correctness table as a pool: one row per (model, question) with ``model_id``,
``prompt_id`` and a 0/1 ``label``.

EmbedLLM ships ``train.csv``/``val.csv``/``test.csv`` with ``model_id``, ``model_name``,
``prompt_id``, ``prompt``, ``category`` and ``label``; its question embeddings are indexed by
``prompt_id``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from .._validate import as_bool_columns
from ..pool import Pool
from ._common import _read_embeddings, split_from_name
from .assemble import _assemble, _Rows
from .tables import _read_table, _refuse_blank, _row_namer, _row_word

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
    _refuse_blank(d, ("model_id", "prompt_id"), where, "row")
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

