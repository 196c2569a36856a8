"""Pieces every harness reader shares: JSON reading with located errors, model names, 0/1 verdicts, the Pool."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath

import numpy as np
import pandas as pd

from .._formats import iter_json_lines
from ..pool import Pool

#: Where a reader puts the harness's own words on what it kept and dropped.
DROPPED = "dropped"


def load_json(path: Path, what: str):
    """A whole JSON file, with the file and position named on failure."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} ({what}) cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} ({what}) is not valid JSON: {exc.msg} (line {exc.lineno} column "
                         f"{exc.colno})") from None
    except RecursionError:
        raise ValueError(f"{path} ({what}) nests JSON too deeply to read; it is damaged") from None


def iter_jsonl(path: Path, what: str) -> Iterator[tuple[int, dict]]:
    """(line number, record) of a JSON-lines file (:func:`oraclegap._formats.iter_json_lines`)."""
    return iter_json_lines(path, what)


#: How many directory entries a format check looks at below a folder before it gives up (a large folder that is no
#: harness output is not walked to its end just to say so).
SNIFF_ENTRIES = 5000


def files_below(path: Path, limit: int = SNIFF_ENTRIES):
    """Files below ``path`` in a stable order (sorted within each folder), stopping after ``limit`` entries."""
    seen = 0
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            seen += 1
            if seen > limit:
                return
            yield Path(root) / name
        seen += len(dirs)
        if seen > limit:
            return


def first_jsonl_record(path: Path) -> dict | None:
    """The first JSON object of a JSON-lines file, or None when it has none or is not JSON lines."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    rec = json.loads(line)
                    return rec if isinstance(rec, dict) else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return None


_PATHLIKE = re.compile(r"^(/|\./|\.\./|~|[A-Za-z]:[\\/])")


def short_model_names(names: list[str]) -> dict[str, str]:
    """A policy name per model reference: the last folder of a local path (``/models/lab-base`` ->
    ``lab-base``), a hub name (``org/model``) as it is; when two references would share a short
    name, both keep their full reference."""
    short = {}
    for n in names:
        if _PATHLIKE.match(n):
            p = PureWindowsPath(n) if re.match(r"^[A-Za-z]:", n) else PurePosixPath(n)
            short[n] = p.name or n
        else:
            short[n] = n
    counts = pd.Series(list(short.values())).value_counts()
    return {n: (s if counts[s] == 1 else n) for n, s in short.items()}


def as_verdict(value, where: str, field: str) -> bool:
    """A 0/1 score (bool, 0, 1, 0.0, 1.0) as a verdict; anything else is refused naming ``where``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{where}: {field} is {value!r}, not a 0/1 verdict")


def keep_complete(rows: pd.DataFrame, notes: list) -> pd.DataFrame:
    """The rows of the prompts every model answered (``drop_incomplete``), with a note of how many were left out."""
    per = rows.groupby("prompt_id")["policy"].nunique()
    full = per.index[per == rows["policy"].nunique()]
    if len(full) < len(per):
        notes.append(f"{len(per) - len(full)} prompts not answered by every model (drop_incomplete)")
    return rows[rows["prompt_id"].isin(full)]


def build_pool(rows: pd.DataFrame, *, alignment: str, meta: dict, label: str) -> Pool:
    """The Pool of a long frame of responses: prompt_id, policy, draw, correct, answer, text, dataset (+ seed).

    Prompts keep the frame's order; every (prompt, policy) cell must hold the same draws (named
    in the error otherwise)."""
    cells = rows.groupby(["prompt_id", "policy"], sort=False).size()
    pols = list(dict.fromkeys(rows["policy"]))
    prompts = list(dict.fromkeys(rows["prompt_id"]))
    if len(cells) != len(prompts) * len(pols):
        have = rows.groupby("policy", sort=False)["prompt_id"].nunique()
        short = {p: int(have[p]) for p in pols if have[p] < len(prompts)}
        raise ValueError(f"{label}: the models did not answer the same prompts ({len(prompts)} prompts in all; "
                         f"answered by fewer: {dict(list(short.items())[:4])}); point at runs of one task set")
    if cells.nunique() != 1:
        sizes = cells.value_counts().sort_index()
        raise ValueError(f"{label}: the (prompt, model) cells hold different numbers of draws "
                         f"({dict(sizes.head(4))} cells by size); every model needs the same draws per prompt")
    if rows.duplicated(["prompt_id", "policy", "draw"]).any():
        d = rows[rows.duplicated(["prompt_id", "policy", "draw"], keep=False)].iloc[0]
        raise ValueError(f"{label}: draw {d['draw']} of prompt {d['prompt_id']!r} under {d['policy']!r} appears twice; "
                         "no draw is counted twice -- point at one run per model")
    prompt_cols = [c for c in ("text", "dataset", "gold") if c in rows.columns]
    policy_cols = [c for c in ("seed",) if c in rows.columns]
    pool = Pool.from_long(rows, prompt="prompt_id", policy="policy", correct="correct", draw="draw",
                          answer="answer" if "answer" in rows.columns else None, prompt_columns=prompt_cols,
                          policy_columns=policy_cols, alignment=alignment, meta=meta)
    order = pd.Index(pool.policies["name"]).get_indexer(pols)
    if not np.array_equal(order, np.arange(len(pols))):
        pool = pool.select(policies=order)
    return pool
