"""Shared pieces of the subcommands: reading POOL arguments and printing results."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..pool import Pool

__all__ = ["load_pool_arg", "add_pool_argument", "emit", "to_jsonable"]

POOL_HELP = (
    "a pool directory, a .npy verdict array [n, M, k], FILE.npz:KEY (numeric array), "
    "a wide CSV (items x models, 0/1), or a registry name (see `oraclegap.datasets.available()`)"
)


def add_pool_argument(parser) -> None:
    parser.add_argument("pool", metavar="POOL", help=POOL_HELP)


def load_pool_arg(spec: str) -> Pool:
    """Resolve a POOL argument to a :class:`Pool` (see ``POOL_HELP`` for the accepted forms)."""
    if not isinstance(spec, str) or not spec:
        raise ValueError("POOL must be a non-empty path or name")
    path = Path(spec)
    if path.is_dir():
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
        from .. import datasets
    except ImportError:  # pragma: no cover - registry not built yet
        datasets = None
    if datasets is not None and hasattr(datasets, "load"):
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


def to_jsonable(obj):
    """Recursively convert numpy/pandas values for ``json.dumps`` (NaN becomes null)."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return None if math.isnan(f) or math.isinf(f) else f
    return obj


def emit(payload: dict, frame: pd.DataFrame | None, as_json: bool) -> None:
    """Print ``payload`` as JSON, or ``frame`` as an aligned text table."""
    if as_json:
        print(json.dumps(to_jsonable(payload), indent=2))
    elif frame is not None:
        with pd.option_context("display.width", 200, "display.max_columns", 50, "display.float_format", "{:.4f}".format):
            print(frame.to_string(index=False))
    else:
        print(json.dumps(to_jsonable(payload), indent=2))
