"""LLMRouter routing data as a pool: one JSON line per (query, model), with token prices from its
``default_llm.json``.

ulab-uiuc/LLMRouter writes ``default_routing_{train,test}_data.jsonl``: one line per (query,
model) with ``task_name``, ``query``, ``ground_truth``, ``metric``, ``model_name``, ``response``,
``input_tokens``, ``output_tokens``, ``response_time``, ``performance`` and ``embedding_id``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from .._validate import check_file
from ..pool import Pool
from ._common import (
    _int_column,
    _is_missing,
    _numbers,
    _read_embeddings,
    _whole_numbers,
    check_threshold,
    scores_to_verdicts,
    split_from_name,
    token_cost,
)
from .assemble import _assemble, _Rows
from .jsonio import _column, _key_column, _load_json, _text_column, json_records


def is_llmrouter_record(rec: Mapping) -> bool:
    """Whether a record looks like an LLMRouter routing line: model_name, query and performance."""
    return "model_name" in rec and "query" in rec and "performance" in rec



def llm_prices(llm_data) -> dict:
    """Model -> prices from LLMRouter's ``default_llm.json`` (a path) or a mapping given as it is:
    ``input_price`` and ``output_price`` in USD per million tokens, and other fields such as ``size``."""
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
        prices = llm_prices(llm_data)
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

