"""The long table's schema: its required columns, the names it is often written with, and the JSON
Schema every long table is checked against (``oraclegap/schemas/long.schema.json``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import numpy as np
import pandas as pd

from .._validate import as_bool_columns

LONG_FORMAT = "oraclegap.long"
LONG_VERSION = 1
LONG_REQUIRED = ("prompt_id", "policy", "correct")
#: Names a long table is often written with, and the long format's name for each (said when a file uses them).
LONG_ALIASES = {"model": "policy", "model_name": "policy", "model_id": "policy", "text": "prompt_text",
                "question": "prompt_text", "response": "answer", "dataset": "prompt_dataset", "split": "prompt_split"}


def long_alias_hint(columns) -> str:
    """'; rename 'model' to 'policy', ...' for the common names among ``columns`` (empty when none)."""
    pairs = [f"'{c}' to '{LONG_ALIASES[c]}'" for c in map(str, columns) if c in LONG_ALIASES]
    return f"; rename {', '.join(pairs)}" if pairs else ""


#: The long format's JSON Schema (one row = one object), shipped in ``oraclegap/schemas/``.
LONG_SCHEMA_FILE = "long.schema.json"


def long_schema() -> dict:
    """The long format's JSON Schema (``oraclegap/schemas/long.schema.json``, shipped with the package)."""
    from importlib.resources import files

    return json.loads(files("oraclegap").joinpath("schemas", LONG_SCHEMA_FILE).read_text(encoding="utf-8"))


def _schema_of(col: str, schema: dict) -> dict | None:
    if col in schema["properties"]:
        return schema["properties"][col]
    for pat, sub in schema.get("patternProperties", {}).items():
        if re.search(pat, col):
            return sub
    return None


def validate_long_table(d: pd.DataFrame, label: str, where: Callable[[int], str] | None = None) -> None:
    """Check a long table against :func:`long_schema`, column by column (vectorised; the schema
    describes one row, and a column holds that field of every row): the required columns, no
    column outside ``properties``/``patternProperties``, and each column's ``type``, ``enum``,
    ``minimum`` and ``minLength`` (a CSV's text cells by what they parse to; a blank cell is a
    missing value). Raises ``ValueError`` naming the file, the column and the first offending row
    (``where(i)``, default ``"<label>: row i"``)."""
    schema = long_schema()
    where = where or (lambda i: f"{label}: row {i}")
    absent = [c for c in schema["required"] if c not in d.columns]
    if absent:
        raise ValueError(f"{label} lacks long-table columns {absent}; a long table has prompt_id, policy, correct "
                         "(and optional draw, answer, cost, prompt_*, policy_*, response_*) -- see the schema "
                         f"oraclegap/schemas/{LONG_SCHEMA_FILE}{long_alias_hint(d.columns)}")
    other = [c for c in d.columns if _schema_of(str(c), schema) is None]
    if other:
        raise ValueError(f"{label} has columns {other[:5]} that are not part of the long format; name prompt fields "
                         "prompt_<name>, policy fields policy_<name> and numeric per-response fields response_<name>, drop "
                         "the rest, or build the pool in Python with Pool.from_long(df, prompt_columns=..., "
                         f"policy_columns=...) (schema oraclegap/schemas/{LONG_SCHEMA_FILE}){long_alias_hint(other)}")
    for c in d.columns:
        sub = _schema_of(str(c), schema) or {}
        types = sub.get("type")
        if types is None:
            continue
        if c == "correct":  # the one rule of every 0/1 outcome column, wide or long (as_bool_columns)
            as_bool_columns(d, [c], label, row_names=lambda i: where(i).removeprefix(f"{label}: "))
            continue
        types = [types] if isinstance(types, str) else list(types)
        col = d[c]
        present = col.notna().to_numpy().copy()
        if col.dtype.kind in "biuf":
            vals = col.to_numpy()
        else:  # text (a CSV's cells): a blank cell is a missing value
            vals = col.to_numpy(dtype=object)
            present &= ~np.asarray([isinstance(v, str) and v.strip() == "" for v in vals], dtype=bool)
        if "null" not in types and c in schema["required"] and not present.all():
            i = int(np.flatnonzero(~present)[0])
            raise ValueError(f"{where(i)}: field {c!r} is blank; every response needs it")
        v = vals[present]
        idx = np.flatnonzero(present)
        if {"integer", "number"} & set(types):
            num = pd.to_numeric(pd.Series(v, dtype=object), errors="coerce").to_numpy(dtype=float)
            bad = np.isnan(num) | ~np.isfinite(num)
            if "integer" in types:
                bad |= np.where(np.isfinite(num), num != np.round(num), True)
            if "minimum" in sub:
                bad |= num < sub["minimum"]
            if "enum" in sub:
                bad |= ~np.isin(num, sub["enum"])
            if bad.any():
                i = int(idx[np.flatnonzero(bad)[0]])
                want = f"one of {sub['enum']}" if "enum" in sub else ("a whole number" if "integer" in types else "a number")
                if "minimum" in sub:
                    want += f" >= {sub['minimum']}"
                raise ValueError(f"{where(i)}: field {c!r} holds {vals[i]!r}, not {want} (schema oraclegap/schemas/"
                                 f"{LONG_SCHEMA_FILE})")
        elif "string" in types and "minLength" in sub:
            short = np.array([len(str(x).strip()) < sub["minLength"] for x in v], dtype=bool)
            if short.any():
                i = int(idx[np.flatnonzero(short)[0]])
                raise ValueError(f"{where(i)}: field {c!r} is blank; every response needs it")
