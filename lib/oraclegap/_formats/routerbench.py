"""RouterBench's wide table as a pool: one correctness column per model beside
``<model>|total_cost`` and ``<model>|model_response``.

withmartian/routerbench publishes a pickled frame (read without running pickle code), often
converted to CSV or parquet: ``sample_id``, ``prompt``, ``eval_name``, one correctness column
per model, ``<model>|model_response`` and ``<model>|total_cost``. The registry's RouterBench
entries (:mod:`oraclegap.datasets`) parse it with :func:`routerbench_parts` too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from .._validate import as_bool_columns, literal_list
from ..pool import Pool
from ._common import check_threshold, scores_to_verdicts, split_from_name
from .tables import _read_table, _row_namer, _text_of, literal_cells


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

