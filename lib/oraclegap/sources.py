"""Where pools come from: ``open_pool(spec)`` resolves a reference (a pool directory, a verdict
array file, a wide CSV, a registry name) to a :class:`~oraclegap.pool.Pool`. The CLI's POOL
argument and the chapters' ``POOL`` parameter both go through here. Importers of other router
tools' formats live here too. This module sits above ``datasets`` (registry names) and below
presentation and the command line.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd

from . import _store, datasets
from ._datalog import declare as _declare
from ._validate import as_bool_columns, parse_list, read_npy, read_npz
from .pool import Pool

__all__ = ["open_pool", "read_wide_csv", "ID_COLUMNS", "CSV_LABEL_COLUMNS"]

#: Column names taken as the prompt id of a wide CSV (the first one present).
ID_COLUMNS = ("id", "item_id", "prompt_id", "question_id")
#: Columns of a wide CSV that are always prompt labels, never models (the Pool's standard
#: prompt columns); any other metadata column must be declared with ``prompt_columns``.
CSV_LABEL_COLUMNS = ("text", "dataset", "split")


def open_pool(spec, *, models=None, prompt_columns=None, id_column=None) -> Pool:
    """Resolve a pool reference to a :class:`Pool`.

    ``spec`` may be a Pool (returned as is), a pool directory, a rollout store, a ``.npy`` verdict array
    [n, M, k] (or [n, M] for k = 1), ``FILE.npz:KEY`` (a numeric array; object arrays are never
    unpickled), a wide ``.csv`` (items x models of 0/1), or a name in the
    :mod:`oraclegap.datasets` registry. The CLI's POOL argument and the chapters' ``POOL``
    parameter both go through here.

    A wide CSV's model columns are chosen by name, never by dtype: ``models`` (a list, or a
    comma-separated string) when given, else every column except the id column (``id_column``,
    default the first of :data:`ID_COLUMNS` present), the standard label columns
    :data:`CSV_LABEL_COLUMNS` and the declared ``prompt_columns`` (metadata such as a 0/1
    ``is_math`` flag). Every model cell must be 0/1; a blank or "yes" raises ``ValueError``
    naming the column and the CSV line. ``models``/``prompt_columns``/``id_column`` apply to
    CSV input only.
    """
    if isinstance(spec, Pool):
        return spec
    if not isinstance(spec, str) or not spec:
        raise ValueError("POOL must be a non-empty path or name")
    path = Path(spec)
    if path.exists():
        _declare(path)  # an input of a cached book run (oraclegap._datalog)
    is_csv = path.suffix.lower() == ".csv" and path.is_file()
    if not is_csv and any(x is not None for x in (models, prompt_columns, id_column)):
        raise ValueError(f"models, prompt_columns and id_column apply to wide CSV files only; POOL {spec!r} is not a .csv file")
    if path.is_dir():
        if _store.is_store(path):  # a rollout store (oraclegap.rollouts): every key present exactly once
            return Pool.from_store(path)
        return Pool.load(path)
    if ":" in spec and not path.exists():
        file, key = spec.rsplit(":", 1)
        fpath = Path(file)
        _declare(fpath)
        if fpath.suffix == ".npz":
            if not fpath.is_file():
                raise ValueError(f"POOL file {file!r} does not exist")
            if not key:
                raise ValueError(f"POOL {spec!r} names no array after the colon; use FILE.npz:KEY")
            arr = read_npz(fpath, [key], label=file)[key]
            return _from_numeric(arr, f"{file}:{key}")
    if path.is_file():
        if path.suffix == ".npy":
            return _from_numeric(read_npy(path, label=spec), spec)
        if is_csv:
            return read_wide_csv(path, models=models, prompt_columns=prompt_columns, id_column=id_column)
        if path.suffix == ".npz":
            raise ValueError(f"{spec!r}: name the array as FILE.npz:KEY")
        raise ValueError(f"POOL file {spec!r} has an unsupported type; use .npy, FILE.npz:KEY, .csv or a pool directory")
    if path.exists():
        raise ValueError(f"POOL {spec!r} is neither a regular file nor a directory")
    try:
        datasets.describe(spec)
    except KeyError:
        raise ValueError(f"POOL {spec!r} is neither an existing path nor a known dataset name") from None
    try:
        return datasets.load(spec)
    except (KeyError, IndexError, AttributeError) as exc:  # a released file without the fields its loader reads
        raise ValueError(f"dataset {spec!r}: its files do not have the expected layout ({type(exc).__name__}: {exc})") from None


def _names_arg(value, name: str) -> list[str] | None:
    if value is None:
        return None
    return list(parse_list(value, name))


def read_wide_csv(path, *, models=None, prompt_columns=None, id_column=None) -> Pool:
    """A k = 1 pool from a comma-separated, UTF-8 items x models CSV (see :func:`open_pool`).

    Refused with a message naming the file: an empty file, a file that is not UTF-8, a file
    that looks separated by ';' or tabs, repeated column names (pandas would rename them
    silently), unknown declared columns, and any model cell that is not 0/1.
    """
    path = Path(path)
    label = str(path)
    models = _names_arg(models, "models")
    prompt_columns = _names_arg(prompt_columns, "prompt_columns") or []
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{label} cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{label} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save it as UTF-8 "
            "(e.g. it may be latin-1)"
        ) from None
    if not text.strip():
        raise ValueError(f"{label} is empty; a wide CSV needs a header row and one row per item")
    try:
        reader = csv.reader(io.StringIO(text))
        header = next(reader)
        for row in reader:  # every row must have the header's number of fields (pandas would shift them)
            if row and len(row) != len(header):
                raise ValueError(f"{label}: line {reader.line_num} has {len(row)} fields but the header has {len(header)}")
    except (csv.Error, StopIteration) as exc:
        raise ValueError(f"{label} is not a readable CSV: {exc}") from None
    header = [h.strip() for h in header]
    if len(header) == 1:
        for sep, what in ((";", "';'"), ("\t", "tabs")):
            if sep in header[0]:
                raise ValueError(f"{label} has a single column {header[0][:60]!r}: it looks separated by {what}; "
                                 "oraclegap reads comma-separated files")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise ValueError(f"{label} repeats column names {dup}; every column needs a distinct name")
    if any(not h for h in header):
        raise ValueError(f"{label} has a column without a name (position {header.index('') + 1}); name every column")
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise ValueError(f"{label} is not a well-formed CSV: {str(exc).strip()}") from None
    df.columns = [str(c).strip() for c in df.columns]
    if len(df) == 0:
        raise ValueError(f"{label} has a header but no rows; a pool needs at least one item")
    if id_column is not None:
        if id_column not in df.columns:
            raise ValueError(f"id_column {id_column!r} is not a column of {label} (columns: {list(df.columns)[:12]})")
    else:
        id_column = next((c for c in ID_COLUMNS if c in df.columns), None)
    unknown = [c for c in prompt_columns if c not in df.columns]
    if unknown:
        raise ValueError(f"prompt_columns names columns not in {label}: {unknown} (columns: {list(df.columns)[:12]})")
    if models is None:
        labels = {id_column, *CSV_LABEL_COLUMNS, *prompt_columns}
        models = [c for c in df.columns if c not in labels]
        if not models:
            raise ValueError(f"{label} has no model columns (columns: {list(df.columns)[:12]})")
    else:
        unknown = [m for m in models if m not in df.columns]
        if unknown:
            raise ValueError(f"models names columns not in {label}: {unknown} (columns: {list(df.columns)[:12]})")
        clash = [m for m in models if m == id_column or m in prompt_columns]
        if clash:
            raise ValueError(f"models and the id/prompt columns of {label} overlap: {clash}")
    keep = [c for c in df.columns if c in CSV_LABEL_COLUMNS and c not in models and c != id_column] + prompt_columns
    ids = df[id_column].to_numpy() if id_column else None
    if ids is not None:
        blank = np.flatnonzero([not str(x).strip() for x in ids])
        if blank.size:
            raise ValueError(f"{label}: id column {id_column!r} is blank on line {int(blank[0]) + 2}; every item needs an id")

    def where(i: int) -> str:
        return f"line {i + 2}" + (f" (id {ids[i]!r})" if ids is not None else "")

    v = as_bool_columns(df, models, label, row_names=where)
    frame = pd.DataFrame(v.astype(np.int8), columns=models)
    if id_column:
        frame.insert(0, id_column, ids)
    for c in keep:
        frame[c] = df[c].to_numpy()
    try:
        return Pool.from_wide(frame, id_column=id_column, models=models, prompt_columns=keep, meta={"source": label})
    except ValueError as exc:
        raise ValueError(f"{label}: {exc}") from None


def _from_numeric(arr: np.ndarray, source: str) -> Pool:
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{source}: expected a numeric 0/1 array, got dtype {arr.dtype}")
    if arr.ndim not in (2, 3):
        raise ValueError(f"{source}: expected verdicts [n, M, k] (or [n, M] for k=1), got shape {arr.shape}")
    try:
        return Pool.from_array(arr, meta={"source": source})
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
