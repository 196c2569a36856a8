"""Prompt files: JSONL, one object per line with ``id``, ``prompt`` (the text) and ``answer``
(the gold answer); every other field is kept as a prompt feature.

:func:`load_prompts` validates a file (or a list of dicts) and returns canonical records;
:func:`canonical_lines` gives the exact bytes the store keeps and hashes, so a rerun can tell
whether it was handed the same prompts.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from .._validate import read_text

__all__ = ["load_prompts", "canonical_lines", "prompts_digest"]

REQUIRED = ("id", "prompt", "answer")


def _check_value(value, where: str):
    """Features must survive a JSON round trip unchanged (no NaN, no objects)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where} is {value!r}; prompt fields must be finite numbers, strings, lists or objects")
    if isinstance(value, Mapping):
        for k, v in value.items():
            _check_value(v, f"{where}[{k!r}]")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_value(v, f"{where}[{i}]")
    elif not (value is None or isinstance(value, (str, int, float, bool))):
        raise TypeError(f"{where} has type {type(value).__name__}; prompt fields must be JSON values")


def _record(obj, where: str) -> dict:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{where} is not a JSON object (got {type(obj).__name__}); expected {{'id', 'prompt', 'answer'}}")
    for key in REQUIRED:
        if key not in obj:
            raise ValueError(f"{where} has no {key!r} field; every prompt needs 'id', 'prompt' and 'answer'")
    pid = obj["id"]
    if pid is None or isinstance(pid, bool) or not isinstance(pid, (str, int)) or str(pid).strip() == "":
        raise ValueError(f"{where} has a missing or empty 'id' ({pid!r}); ids must be non-empty strings or integers")
    text = obj["prompt"]
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where} (id {pid!r}) has no prompt text; 'prompt' must be a non-empty string")
    ans = obj["answer"]
    if ans is None or isinstance(ans, (bool, Mapping, list)) or str(ans).strip() == "":
        raise ValueError(f"{where} (id {pid!r}) has no gold answer; 'answer' must be a non-empty string or number")
    rec = {"id": str(pid), "prompt": text, "answer": str(ans) if not isinstance(ans, str) else ans}
    for k, v in obj.items():
        if k in REQUIRED:
            continue
        if not isinstance(k, str):
            raise TypeError(f"{where}: field names must be strings")
        _check_value(v, f"{where} field {k!r}")
        rec[k] = v
    return rec


def load_prompts(source) -> list[dict]:
    """Read and validate prompts: a JSONL path, or a sequence of dicts.

    Returns records in file order, each ``{"id": str, "prompt": str, "answer": str, ...features}``.
    Raises ``ValueError`` naming the line (or position) for invalid JSON, a missing or empty id,
    duplicate ids, missing prompt text or a missing gold answer, and for an empty file.
    """
    records: list[dict] = []
    if isinstance(source, (str, Path)):
        path = Path(source)
        text = read_text(path, f"prompts file {str(path)!r}")  # a directory, a missing or non-UTF-8 file: named
        for lineno, line in enumerate(text.split("\n"), 1):  # JSON lines end at \n only
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"prompts file {str(path)!r} line {lineno} is not valid JSON: {exc.msg}") from None
            records.append(_record(obj, f"prompts file {str(path)!r} line {lineno}"))
        origin = f"prompts file {str(path)!r}"
    elif isinstance(source, Sequence) and not isinstance(source, (bytes, str)):
        records = [_record(obj, f"prompts[{i}]") for i, obj in enumerate(source)]
        origin = "prompts"
    else:
        raise TypeError(f"prompts must be a JSONL path or a list of dicts, got {type(source).__name__}")
    if not records:
        raise ValueError(f"{origin} holds no prompts")
    seen: dict[str, int] = {}
    dup = []
    for r in records:
        if r["id"] in seen:
            dup.append(r["id"])
        seen[r["id"]] = 1
    if dup:
        raise ValueError(f"{origin} has duplicate ids: {sorted(set(dup))[:5]}; every prompt id must be unique")
    return records


def canonical_lines(records: Sequence[Mapping]) -> bytes:
    """The records as canonical JSONL (sorted keys, UTF-8, one record per line)."""
    return b"".join(
        json.dumps(dict(r), sort_keys=True, ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n" for r in records
    )


def prompts_digest(records: Sequence[Mapping]) -> str:
    """SHA-256 of :func:`canonical_lines`."""
    return hashlib.sha256(canonical_lines(records)).hexdigest()
