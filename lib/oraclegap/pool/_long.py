"""A pool as a long table, one row per response: the portable exchange format (parquet or CSV),
read back by :func:`oraclegap.sources.open_pool`.

:func:`to_long` is ``Pool.to_long`` (bound in :mod:`oraclegap.pool._pool`).
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._io import fsync_dir as _fsync_dir
from .._io import fsync_file as _fsync_file
from ._storage import _jsonable, _parquet_safe

if TYPE_CHECKING:
    from ._pool import Pool


def to_long(self: Pool, path, overwrite: bool = False) -> Path:
    """Write the pool as a long table, one row per response (the portable exchange format).

    Row (i, m, j), in C order of [n, M, k], holds ``prompt_id``, ``policy``, ``draw`` (= j),
    ``correct`` (0/1), ``answer`` (when the pool has answers), ``cost`` (the cell's
    ``cost[i, m]``, repeated on its k rows, when the pool has costs), each per-response array
    as ``response_<name>``, every other column of
    the prompt table as ``prompt_<column>`` and of the policy table as ``policy_<column>``.
    The suffix picks the file type: ``.parquet`` (which also keeps ``alignment`` and ``meta``
    in the file's metadata) or ``.csv`` (UTF-8, comma-separated; alignment and meta are not
    kept, and non-text table columns are read back by value). Per-prompt ``embeddings`` are
    not part of the long format: use :meth:`Pool.save` for a lossless copy.
    :func:`oraclegap.sources.open_pool` reads the file back. The write is atomic (a hidden
    temporary file beside ``path``, then a rename); an existing file is replaced only with
    ``overwrite=True``.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise ValueError(f"to_long writes .parquet or .csv files; path {str(path)!r} has suffix {path.suffix!r}")
    if path.is_dir():
        raise ValueError(f"path {str(path)!r} is a directory; to_long writes one file")
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise ValueError(f"path {str(path)!r} exists; pass overwrite=True to replace it")
    pool = self._revalidated()
    n, M, k = pool.shape
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    if suffix == ".parquet":  # through Arrow, one row group at a time (no per-row Python objects)
        info = {"format": "oraclegap.long", "version": 1, "shape": [n, M, k], "alignment": pool.alignment,
                "meta": _jsonable(pool.meta)}
        return _replace_with(path, tmp, lambda t: _write_long_rows(pool, t, info))
    cols: dict[str, Any] = {
        "prompt_id": np.repeat(np.asarray(pool.prompt_ids, dtype=object), M * k),
        "policy": np.tile(np.repeat(np.asarray(pool.policy_names, dtype=object), k), n),
        "draw": np.tile(np.arange(k, dtype=np.int64), n * M),
        "correct": pool.verdicts.ravel().astype(np.int8),
    }
    if pool.answers is not None:
        cols["answer"] = pool.answers.ravel()
    if pool.cost is not None:
        cols["cost"] = np.repeat(pool.cost.ravel(), k)
    for name, arr in pool.per_response.items():
        cols[f"response_{name}"] = arr.ravel()
    for c in pool.prompts.columns:
        if c != "id":
            cols[f"prompt_{c}"] = np.repeat(pool.prompts[c].to_numpy(dtype=object), M * k)
    for c in pool.policies.columns:
        if c != "name":
            cols[f"policy_{c}"] = np.tile(np.repeat(pool.policies[c].to_numpy(dtype=object), k), n)
    df = pd.DataFrame(cols)
    return _replace_with(path, tmp, lambda t: df.to_csv(t, index=False, encoding="utf-8", lineterminator="\n"))


def _replace_with(path: Path, tmp: Path, write) -> Path:
    """``write(tmp)``, then move ``tmp`` onto ``path`` atomically (fsynced); ``tmp`` is removed on failure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        write(tmp)
        _fsync_file(tmp)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


# Rows per parquet row group (and per Arrow batch) of a long table.
_LONG_ROWS = 1 << 20


def _write_long_rows(pool: Pool, tmp: Path, info: dict) -> None:
    """``to_long``'s parquet file at ``tmp``, through Arrow: the same columns, values and file
    metadata as ``DataFrame.to_parquet`` of the same rows would write, built one row group at a time (about a million
    rows) from the per-prompt and per-policy tables (text as dictionary columns: each text once
    per row group, never one Python object per row). The caller renames it into place."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n, M, k = pool.shape
    Mk = M * k
    # the prompt and policy tables as Arrow arrays, typed from object values with to_parquet's text
    # conversion of mixed columns, exactly as the per-row frame would be
    ptab = pd.DataFrame({"prompt_id": np.asarray(pool.prompt_ids, dtype=object)}
                        | {f"prompt_{c}": pool.prompts[c].to_numpy(dtype=object) for c in pool.prompts.columns if c != "id"})
    mtab = pd.DataFrame({"policy": np.asarray(pool.policy_names, dtype=object)}
                        | {f"policy_{c}": pool.policies[c].to_numpy(dtype=object)
                           for c in pool.policies.columns if c != "name"})
    pcols = {c: pa.Array.from_pandas(v) for c, v in _parquet_safe(ptab).items()}
    mcols = {c: pa.Array.from_pandas(v) for c, v in _parquet_safe(mtab).items()}
    order = ["prompt_id", "policy", "draw", "correct"]
    if pool.answers is not None:
        order.append("answer")
    if pool.cost is not None:
        order.append("cost")
    order += [f"response_{nm}" for nm in pool.per_response]
    order += [c for c in pcols if c != "prompt_id"] + [c for c in mcols if c != "policy"]

    def dict_col(values: pa.Array, idx: np.ndarray, lo: int = 0, hi: int | None = None) -> pa.Array:
        """values[idx] (idx in [lo, hi)): text as a dictionary column over values[lo:hi]."""
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            # a dictionary of distinct values (nulls as null indices): with repeated entries the
            # parquet writer's bytes would depend on memory it never initialised
            enc = values.slice(lo, (len(values) if hi is None else hi) - lo).dictionary_encode()
            codes = enc.indices.take(pa.array(idx - lo, pa.int32()))
            return pa.DictionaryArray.from_arrays(codes, enc.dictionary)
        return values.take(pa.array(idx, pa.int32()))

    verd = pool.verdicts.reshape(n, Mk)
    per = max(1, _LONG_ROWS // Mk)

    def group(i0: int) -> pa.Table:
        """Prompts ``i0 .. i0 + per - 1`` as one row group."""
        i1 = min(n, i0 + per)
        r = (i1 - i0) * Mk
        pi = np.repeat(np.arange(i0, i1, dtype=np.int32), Mk)
        mi = np.tile(np.repeat(np.arange(M, dtype=np.int32), k), i1 - i0)
        arrays: dict[str, pa.Array] = {
            "prompt_id": dict_col(pcols["prompt_id"], pi, i0, i1),
            "policy": dict_col(mcols["policy"], mi),
            "draw": pa.array(np.tile(np.arange(k, dtype=np.int64), (i1 - i0) * M)),
            "correct": pa.array(verd[i0:i1].reshape(r).astype(np.int8)),
        }
        if pool.answers is not None:
            arrays["answer"] = pa.Array.from_pandas(pd.Series(pool.answers[i0:i1].reshape(r), dtype=object))
        if pool.cost is not None:
            arrays["cost"] = pa.array(np.repeat(pool.cost[i0:i1].reshape(-1), k))
        for nm, arr in pool.per_response.items():
            arrays[f"response_{nm}"] = pa.array(np.ascontiguousarray(arr[i0:i1]).reshape(r))
        for c, vals in pcols.items():
            if c != "prompt_id":
                arrays[c] = dict_col(vals, pi, i0, i1)
        for c, vals in mcols.items():
            if c != "policy":
                arrays[c] = dict_col(vals, mi)
        return pa.Table.from_arrays([arrays[c] for c in order], names=order)

    # the next row group is built on a second thread while Arrow encodes this one (both release
    # the GIL for their array work); the groups are written in order, so the file is the same
    from concurrent.futures import ThreadPoolExecutor

    writer = None
    with ThreadPoolExecutor(max_workers=1) as ex:
        try:
            nxt = ex.submit(group, 0)
            for i0 in range(0, n, per):
                batch = nxt.result()
                if i0 + per < n:
                    nxt = ex.submit(group, i0 + per)
                if writer is None:
                    # text columns go in as dictionary arrays (written as parquet dictionary pages, no
                    # per-row hashing); without the stored Arrow schema readers see plain text columns,
                    # as in a file pandas writes. The pool's alignment and meta: pandas' attrs key.
                    schema = batch.schema
                    writer = pq.ParquetWriter(tmp, schema, store_schema=False)
                    writer.add_key_value_metadata({"PANDAS_ATTRS": json.dumps({"oraclegap": info})})
                writer.write_table(batch.cast(schema) if batch.schema != schema else batch, row_group_size=_LONG_ROWS)
        finally:
            if writer is not None:
                writer.close()

