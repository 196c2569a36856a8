"""Shared pieces of the subcommands: reading POOL arguments and printing results."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from ..sources import open_pool as load_pool_arg

__all__ = ["load_pool_arg", "add_pool_argument", "emit", "to_jsonable"]


POOL_HELP = (
    "a pool directory, a .npy verdict array [n, M, k], FILE.npz:KEY (numeric array), "
    "a wide CSV (items x models, 0/1), or a registry name (see `oraclegap.datasets.available()`)"
)


def add_pool_argument(parser) -> None:
    parser.add_argument("pool", metavar="POOL", help=POOL_HELP)


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
