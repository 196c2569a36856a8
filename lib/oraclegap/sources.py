"""Where pools come from: ``open_pool(spec)`` resolves a reference (a pool directory, a verdict
array file, a wide CSV, a registry name) to a :class:`~oraclegap.pool.Pool`. The CLI's POOL
argument and the chapters' ``POOL`` parameter both go through here. Importers of other router
tools' formats live here too. This module sits above ``datasets`` (registry names) and below
presentation and the command line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import _store, datasets
from .pool import Pool

__all__ = ["open_pool"]


def open_pool(spec) -> Pool:
    """Resolve a pool reference to a :class:`Pool`.

    ``spec`` may be a Pool (returned as is), a pool directory, a rollout store, a ``.npy`` verdict array
    [n, M, k] (or [n, M] for k = 1), ``FILE.npz:KEY`` (a numeric array; object arrays are never
    unpickled), a wide ``.csv`` (items x models of 0/1, an ``id`` column optional), or a name in
    the :mod:`oraclegap.datasets` registry. The CLI's POOL argument and the chapters' ``POOL``
    parameter both go through here.
    """
    if isinstance(spec, Pool):
        return spec
    if not isinstance(spec, str) or not spec:
        raise ValueError("POOL must be a non-empty path or name")
    path = Path(spec)
    if path.is_dir():
        if _store.is_store(path):  # a rollout store (oraclegap.rollouts): every key present exactly once
            return Pool.from_store(path)
        return Pool.load(path)
    if ":" in spec and not path.exists():
        file, key = spec.rsplit(":", 1)
        fpath = Path(file)
        if fpath.suffix == ".npz":
            if not fpath.is_file():
                raise ValueError(f"POOL file {file!r} does not exist")
            try:
                with np.load(fpath, allow_pickle=False) as z:
                    if key not in z.files:
                        raise ValueError(f"{file!r} has no array {key!r}; it holds {z.files}")
                    arr = z[key]
            except ValueError as exc:
                if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                    raise ValueError(f"array {key!r} in {file!r} is not numeric (object arrays are never unpickled)") from None
                raise
            return _from_numeric(arr, f"{file}:{key}")
    if path.is_file():
        if path.suffix == ".npy":
            try:
                arr = np.load(path, allow_pickle=False)
            except ValueError:
                raise ValueError(f"{spec!r} is not a numeric .npy array (object arrays are never unpickled)") from None
            return _from_numeric(arr, spec)
        if path.suffix == ".csv":
            df = pd.read_csv(path)
            id_col = next((c for c in ("id", "item_id", "prompt_id", "question_id") if c in df.columns), None)
            models = [c for c in df.columns if c != id_col and pd.api.types.is_numeric_dtype(df[c])]
            return Pool.from_wide(df, id_column=id_col, models=models, meta={"source": spec})
        if path.suffix == ".npz":
            raise ValueError(f"{spec!r}: name the array as FILE.npz:KEY")
        raise ValueError(f"POOL file {spec!r} has an unsupported type; use .npy, FILE.npz:KEY, .csv or a pool directory")
    try:
        return datasets.load(spec)
    except KeyError:
        pass
    raise ValueError(f"POOL {spec!r} is neither an existing path nor a known dataset name")


def _from_numeric(arr: np.ndarray, source: str) -> Pool:
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{source}: expected a numeric 0/1 array, got dtype {arr.dtype}")
    if arr.ndim not in (2, 3):
        raise ValueError(f"{source}: expected verdicts [n, M, k] (or [n, M] for k=1), got shape {arr.shape}")
    return Pool.from_array(arr, meta={"source": source})
