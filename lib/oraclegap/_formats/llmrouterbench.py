"""LLMRouterBench / OpenRouterBench results as a pool: a result file, a results folder, or the flat
records its loader exports.

A result file is ``results/bench/<dataset>/<split>/<model>/<dataset>-<split>-<model>-<YYYYMMDD_HHMMSS>.json``
(``dataset_name``, ``split``, ``model_name``, ``demo`` and a list ``records`` of ``index``,
``origin_query``, ``prompt``, ``prediction``, ``ground_truth``, ``score``, ``prompt_tokens``,
``completion_tokens``, ``cost``); the flat records of its ``BaselineDataLoader`` (``dataset_id``,
``split``, ``model_name``, ``record_index``, ...) come as a JSON list or JSON lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..pool import Pool
from ._common import _int_column, _is_missing, _numbers, _whole_numbers, check_threshold, scores_to_verdicts
from .assemble import _assemble, _Rows
from .jsonio import _column, _key_column, _load_json, _text_column, json_records

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

