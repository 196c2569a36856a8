"""Writing a pool in the layouts other router tools read.

:func:`export_pool` writes one of :data:`EXPORT_FORMATS`; :func:`oraclegap.sources.open_pool`
reads each back, and the round trip keeps what the format holds
(``tests/formats/test_exchange.py``):

* ``long`` -- oraclegap's exchange format (:meth:`Pool.to_long`; ``.parquet`` or ``.csv``),
  documented by the JSON Schema shipped as ``oraclegap/schemas/long.schema.json``
  (:func:`oraclegap._formats.long_schema`) and validated against it on write (the written file
  is read back and checked before it replaces anything) and on read. Holds everything but the
  embeddings.
* ``llmrouterbench`` -- an LLMRouterBench results folder
  ``<dataset>/<split>/<model>/<dataset>-<split>-<model>-<YYYYMMDD_HHMMSS>.json``, one record per
  response (``index`` = the prompt's position within its dataset and split, ``origin_query`` the
  text, ``prediction`` the answer, ``ground_truth`` the prompt table's ``ground_truth``/``gold``,
  ``score`` 0/1, ``cost``), k records per item for k draws. Prompt ids become
  ``<dataset>/<split>/<index>``; the original id is kept as ``prompt_id`` in each record.
* ``routerbench`` -- RouterBench's wide table (``.parquet`` or ``.csv``): ``sample_id``,
  ``prompt``, ``eval_name``, one 0/1 column per model, ``<model>|model_response`` (with answers)
  and ``<model>|total_cost``. k = 1 only, and the pool needs costs (RouterBench has no table
  without them).
* ``embedllm`` -- EmbedLLM's long CSV: ``model_id``, ``model_name``, ``prompt_id`` (0..n-1 in pool
  order: EmbedLLM indexes its embedding matrix by it), ``prompt``, ``category`` (the dataset),
  ``label``. k = 1 only.

Every write is atomic and exclusive: the output is built in a marked temporary folder beside
``out`` (:func:`oraclegap._io.make_temp_dir`) and moved into place only if nothing is at ``out``
(:func:`oraclegap._io.place_new`); an existing ``out`` is never replaced or deleted, and of two
exports racing to one ``out`` one writes it and the other is refused. Temporary folders that
killed exports of the same ``out`` left are removed first (by their marker only).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from . import _formats
from ._io import atomic_write, clean_dead_temps, fsync_file, make_temp_dir, place_new
from ._validate import link_problem
from .pool import Pool, check_pool

__all__ = ["EXPORT_FORMATS", "export_pool", "check_export_out"]

#: Formats :func:`export_pool` writes: name -> what ``out`` is.
EXPORT_FORMATS = {
    "long": "a .parquet or .csv file (oraclegap long table, schema oraclegap/schemas/long.schema.json)",
    "llmrouterbench": "a folder (LLMRouterBench results: <dataset>/<split>/<model>/<...>.json)",
    "routerbench": "a .parquet or .csv file (RouterBench wide table)",
    "embedllm": "a .csv file (EmbedLLM long table)",
    "every-eval-ever": "a .jsonl file (Every Eval Ever instance-level records; one per draw, the draw in "
                       "metadata.draw: the schema has no epoch field)",
}
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


_SUFFIXES = {"long": (".parquet", ".csv"), "llmrouterbench": (), "routerbench": (".parquet", ".csv"), "embedllm": (".csv",)}
_SUFFIXES["every-eval-ever"] = (".jsonl",)


def _check_out(out, suffixes) -> Path:
    out = Path(out)
    problem = link_problem(out)
    if problem:
        raise ValueError(f"--out {str(out)!r} {problem}; remove the link or choose another path")
    if out.exists() or out.is_symlink():
        raise ValueError(f"--out {str(out)!r} exists; oraclegap never replaces or deletes a file it did not write -- choose "
                         "another path")
    if suffixes and out.suffix.lower() not in suffixes:
        raise ValueError(f"--out {str(out)!r} must end in {' or '.join(suffixes)} for this format")
    anc = out.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    problem = link_problem(anc)
    if problem or not anc.is_dir():
        raise ValueError(f"--out {str(out)!r}: {str(anc)!r} {problem or 'is a file, expected a directory'}")
    return out


def check_export_out(format: str, out) -> Path:
    """Refuse ``out`` for ``format`` before any work: an existing path (a dangling link
    included), a link that loops, a suffix the format does not write, a parent that is a file."""
    if format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}; got {format!r}")
    return _check_out(out, _SUFFIXES[format])


def _write_new(out: Path, write) -> None:
    """``write(path)`` builds the output at ``path`` inside a fresh marked temporary folder beside
    ``out``; the result is then moved to ``out`` only if nothing is there (else one line: the
    other run's output stays). The temporary folder is removed in every case."""
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_dead_temps(out)
    work = make_temp_dir(out, "export")
    try:
        staged = work / out.name
        write(staged)
        try:
            place_new(staged, out)
        except FileExistsError:
            raise ValueError(f"--out {str(out)!r} was created by another run while this export ran; nothing was "
                             "replaced -- choose another path") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _write_table(df: pd.DataFrame, out: Path) -> None:
    def write(path: Path) -> None:
        if out.suffix.lower() == ".parquet":
            df.to_parquet(path, index=False)
            fsync_file(path)
        else:
            atomic_write(path, df.to_csv(index=False, lineterminator="\n").encode("utf-8"))

    _write_new(out, write)


def _k1(pool: Pool, fmt: str) -> None:
    if pool.k != 1:
        raise ValueError(f"format {fmt!r} holds one response per (prompt, model); the pool has k={pool.k} draws per cell -- "
                         "export one draw (pool.draws([0])) or use --format long / llmrouterbench")


def _gold(pool: Pool):
    for c in ("ground_truth", "gold", "gold_answer", "answer"):
        if c in pool.prompts.columns and pool.prompts[c].notna().any():
            return pool.prompts[c].to_numpy(dtype=object)
    return None


def _export_long(pool: Pool, out: Path) -> dict:
    out = _check_out(out, (".parquet", ".csv"))

    def write(path: Path) -> None:  # to_long picks the file type by the suffix (the staged file keeps out's name)
        pool.to_long(path)
        _formats.validate_long_table(_formats._read_table(path, dtype=str if out.suffix.lower() == ".csv" else None), str(out))
        fsync_file(path)

    _write_new(out, write)
    return {"rows": pool.n_prompts * pool.n_policies * pool.k, "dropped": ["embeddings"] if pool.embeddings is not None else []}


def _datasets_splits(pool: Pool):
    ds = pool.prompts["dataset"].astype(object).where(pool.prompts["dataset"].notna(), "pool").astype(str).to_numpy()
    sp = pool.prompts["split"].astype(object).where(pool.prompts["split"].notna(), "all").astype(str).to_numpy()
    return ds, sp


def _export_llmrouterbench(pool: Pool, out: Path) -> dict:
    out = _check_out(out, ())
    n, M, k = pool.shape
    ds, sp = _datasets_splits(pool)
    key = pd.Series([f"{a}\x00{b}" for a, b in zip(ds, sp, strict=True)])
    index = key.groupby(key).cumcount().to_numpy()  # position within (dataset, split)
    text = pool.prompts["text"].to_numpy(dtype=object)
    gold = _gold(pool)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d_%H%M%S")
    files = 0

    def write(tmp: Path) -> None:
        nonlocal files
        tmp.mkdir()
        for (d, s), rows in pd.Series(np.arange(n)).groupby([ds, sp], sort=True):
            rows = rows.to_numpy()
            for m, model in enumerate(pool.policy_names):
                recs = []
                for i in rows:  # records of one file (JSON objects; no vector form)
                    for j in range(k):
                        rec = {"index": int(index[i]), "prompt_id": pool.prompt_ids[i],
                               "origin_query": None if pd.isna(text[i]) else str(text[i]),
                               "score": int(pool.verdicts[i, m, j])}
                        if pool.answers is not None:
                            rec["prediction"] = str(pool.answers[i, m, j])
                        if gold is not None and not pd.isna(gold[i]):
                            rec["ground_truth"] = str(gold[i])
                        if pool.cost is not None:
                            rec["cost"] = float(pool.cost[i, m])
                        recs.append(rec)
                doc = {"performance": float(pool.verdicts[rows, m].mean()), "model_name": model, "dataset_name": d,
                       "split": s, "demo": False, "counts": len(recs), "records": recs}
                sd, ss, sm = (_SAFE.sub("_", x) for x in (d, s, model))
                f = tmp / sd / ss / sm / f"{sd}-{ss}-{sm}-{stamp}.json"
                f.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(f, json.dumps(doc, ensure_ascii=False))
                files += 1

    _write_new(out, write)  # one step: the folder appears complete or not at all
    dropped = [x for x, present in (("embeddings", pool.embeddings is not None), ("per_response", bool(pool.per_response)))
               if present]
    return {"files": files, "dropped": dropped, "prompt_ids": "<dataset>/<split>/<index> (the original id as 'prompt_id')"}


def _export_routerbench(pool: Pool, out: Path) -> dict:
    out = _check_out(out, (".parquet", ".csv"))
    _k1(pool, "routerbench")
    if pool.cost is None:
        raise ValueError("format 'routerbench' needs a cost per (prompt, model) ('<model>|total_cost'); the pool has no costs "
                         "-- use --format long")
    names = pool.policy_names
    bad = [m for m in names if "|" in m]
    if bad:
        raise ValueError(f"policy names {bad[:3]} contain '|', which RouterBench's column names reserve")
    cols = {"sample_id": pool.prompt_ids, "prompt": pool.prompts["text"].to_numpy(dtype=object),
            "eval_name": pool.prompts["dataset"].to_numpy(dtype=object)}
    for m, name in enumerate(names):
        cols[name] = pool.verdicts[:, m, 0].astype(np.int8)
        if pool.answers is not None:
            cols[f"{name}|model_response"] = pool.answers[:, m, 0]
        cols[f"{name}|total_cost"] = pool.cost[:, m]
    if "split" in pool.prompts.columns and pool.prompts["split"].notna().any():
        cols["split"] = pool.prompts["split"].to_numpy(dtype=object)
    _write_table(pd.DataFrame(cols), out)
    return {"rows": pool.n_prompts, "dropped": [x for x, p in (("embeddings", pool.embeddings is not None),
                                                                 ("per_response", bool(pool.per_response))) if p]}


def _export_embedllm(pool: Pool, out: Path) -> dict:
    out = _check_out(out, (".csv",))
    _k1(pool, "embedllm")
    n, M, _ = pool.shape
    df = pd.DataFrame({
        "model_id": np.repeat(np.arange(M), n), "model_name": np.repeat(np.asarray(pool.policy_names, dtype=object), n),
        "prompt_id": np.tile(np.arange(n), M), "prompt": np.tile(pool.prompts["text"].to_numpy(dtype=object), M),
        "category": np.tile(pool.prompts["dataset"].to_numpy(dtype=object), M),
        "label": pool.verdicts[:, :, 0].T.ravel().astype(np.int8),
    })
    _write_table(df, out)
    return {"rows": n * M, "prompt_ids": "0..n-1 in pool order (EmbedLLM indexes embeddings by them)",
            "dropped": [x for x, p in (("costs", pool.cost is not None), ("answers", pool.answers is not None),
                                       ("embeddings (save them as .npy, row r = prompt r)", pool.embeddings is not None))
                        if p]}


def _export_eee(pool: Pool, out: Path) -> dict:
    from ._harness import eee

    out = _check_out(out, (".jsonl",))
    recs, dropped = eee.records(pool)
    body = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in recs).encode("utf-8")
    _write_new(out, lambda path: atomic_write(path, body))
    return {"rows": len(recs), "dropped": dropped,
            "note": "the schema has no epoch field: each draw is one record, its index in metadata.draw"}


def export_pool(pool: Pool, format: str, out) -> dict:
    """Write ``pool`` as ``format`` (one of :data:`EXPORT_FORMATS`) to ``out``; returns what was
    written and what the format cannot hold (``dropped``). Refused: an existing ``out``, a suffix
    the format does not write, k > 1 for the one-response formats, routerbench without costs."""
    check_pool(pool)
    if format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}; got {format!r}")
    writer = {"long": _export_long, "llmrouterbench": _export_llmrouterbench, "routerbench": _export_routerbench,
              "embedllm": _export_embedllm, "every-eval-ever": _export_eee}[format]
    info = writer(pool, Path(out))
    return {"format": format, "out": str(out), **info}
