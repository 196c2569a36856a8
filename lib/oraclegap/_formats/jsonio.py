"""JSON input of the importers: whole files and JSON lines read with located errors, and record
fields gathered into columns.

Text that is not UTF-8, JSON that does not parse or nests too deeply, and values of the wrong
kind are refused naming the file and the line or element.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ._common import _is_missing


def _load_json(path: Path):
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ValueError(f"{path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte offset {exc.start}); save it as UTF-8") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"{path} {TOO_DEEP}") from None


#: The words for JSON nested beyond what Python's parser can follow (a damaged or hostile file).
TOO_DEEP = "nests JSON lists or objects too deeply to read (deeper than Python's recursion limit); it is damaged or not a " \
           "file of records"


def iter_json_lines(path, what: str = "one record per line"):
    """(line number, record) of a JSON-lines file, read as a stream: blank lines skipped; a line
    that is not JSON, nests too deeply, or is not an object, and text that is not UTF-8, are
    refused naming the file and the line (``what`` says what a line should hold)."""
    path = Path(path)
    try:
        fh = open(path, encoding="utf-8-sig")
    except OSError as exc:
        raise ValueError(f"{path} cannot be read: {exc.strerror or exc}") from None
    with fh:
        try:
            for ln, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {ln} is not valid JSON: {exc.msg} (column {exc.colno})") from None
                except RecursionError:
                    raise ValueError(f"{path}: line {ln} {TOO_DEEP}") from None
                if not isinstance(rec, dict):
                    raise ValueError(f"{path}: line {ln} holds a JSON {type(rec).__name__}, not an object ({what})")
                yield ln, rec
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path} is not UTF-8 text (byte offset {exc.start}); save it as UTF-8") from None


def json_records(path) -> tuple[str, object]:
    """Read a ``.json`` or ``.jsonl`` file: ``("object", dict)`` for a JSON object, else
    ``("records", [(where, dict), ...])`` for a JSON list or JSON lines (blank lines skipped)."""
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        out = [(f"line {ln}", rec) for ln, rec in iter_json_lines(path)]
        if not out:
            raise ValueError(f"{path} is empty; JSON lines need one record per line")
        return "records", out
    obj = _load_json(path)
    if isinstance(obj, dict):
        return "object", obj
    if isinstance(obj, list):
        bad = next((i for i, r in enumerate(obj) if not isinstance(r, dict)), None)
        if bad is not None:
            raise ValueError(f"{path}: element {bad} of the JSON list is a {type(obj[bad]).__name__}, not an object (a record)")
        if not obj:
            raise ValueError(f"{path} holds an empty JSON list; no records")
        return "records", [(f"element {i}", r) for i, r in enumerate(obj)]
    raise ValueError(f"{path} holds a JSON {type(obj).__name__}; expected an object or a list of records")


_MISSING = object()


def _get(rec: Mapping, names):
    for n in names:
        if n in rec:
            return rec[n]
    return _MISSING


def _column(recs, names):
    vals = [_get(r, names) for r in recs]
    present = np.array([v is not _MISSING for v in vals])
    return [None if v is _MISSING else v for v in vals], present


def _text_column(vals) -> np.ndarray:
    if set(map(type, vals)) <= {str, type(None)}:  # fast path
        out = np.empty(len(vals), dtype=object)
        out[:] = vals
        return out
    out = np.empty(len(vals), dtype=object)
    for i, v in enumerate(vals):
        out[i] = None if _is_missing(v) else (v if isinstance(v, str) else json.dumps(v) if isinstance(v, (list, dict)) else str(v))
    return out


def _key_column(vals, field: str, where) -> np.ndarray:
    if set(map(type, vals)) <= {str}:  # fast path: texts; only blanks to find
        out = np.empty(len(vals), dtype=object)
        out[:] = vals
        blank = pd.Series(out, dtype=object).str.strip().eq("").to_numpy()
        if not blank.any():
            return out
    out = np.empty(len(vals), dtype=object)
    for i, v in enumerate(vals):
        if _is_missing(v) or (isinstance(v, str) and not v.strip()):
            raise ValueError(f"{where(i)}: field {field!r} is missing or blank; every record needs it")
        if isinstance(v, (dict, list)):
            raise ValueError(f"{where(i)}: field {field!r} holds a {type(v).__name__}, not a name")
        out[i] = str(v)
    return out

