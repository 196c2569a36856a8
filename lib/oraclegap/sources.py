"""Where pools come from: ``open_pool(spec)`` resolves a reference (a pool directory, a verdict
array file, a wide CSV, a registry name, or a file another router tool wrote) to a
:class:`~oraclegap.pool.Pool`. The CLI's POOL argument and the chapters' ``POOL`` parameter both
go through here. The importers of other router tools' formats (LLMRouterBench, LLMRouter,
RouterEval, EmbedLLM, RouterBench) and of oraclegap's own long table (:meth:`Pool.to_long`)
parse in :mod:`oraclegap._formats`; this module picks the format (an explicit ``format=`` or an
unambiguous look at the file) and checks the options. It sits above ``datasets`` (registry
names) and below presentation and the command line.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

from . import _formats, _harness, _store, datasets
from ._datalog import declare as _declare
from ._formats import FORMATS as ROUTER_FORMATS
from ._validate import (
    as_bool_columns,
    check_file,
    is_pickle_file,
    link_problem,
    parse_list,
    read_npy,
    read_npz,
)
from .pool import Pool

__all__ = [
    "open_pool",
    "detect_format",
    "read_wide_csv",
    "read_llmrouterbench",
    "read_llmrouter",
    "read_routereval",
    "read_embedllm",
    "read_routerbench",
    "read_long",
    "FORMAT_NAMES",
    "FORMAT_OPTIONS",
    "ID_COLUMNS",
    "CSV_LABEL_COLUMNS",
    "TEXT_COLUMNS",
    "harness_fixture",
    "HARNESS_FIXTURES",
    "HARNESS_FORMATS",
]

#: Column names taken as the prompt id of a wide CSV (the first one present).
ID_COLUMNS = ("id", "item_id", "prompt_id", "question_id")
#: Columns of a wide CSV that are always prompt labels, never models (the Pool's standard
#: prompt columns); any other metadata column must be declared with ``prompt_columns``.
CSV_LABEL_COLUMNS = ("text", "dataset", "split")
#: Common names of a wide CSV's prompt-text column, taken as ``text`` when no ``text`` column exists.
TEXT_COLUMNS = ("prompt", "question", "query")

#: Every value ``format=`` (CLI ``--format``) takes.
FORMAT_NAMES = ("pool", "store", "npy", "npz", "wide-csv", *ROUTER_FORMATS, *_harness.FORMATS)
#: The options each importer takes (every other format takes none beyond the wide-CSV ones).
FORMAT_OPTIONS = {
    "llmrouterbench": ("score_threshold", "null_scores", "drop_incomplete", "dedupe"),
    "llmrouter": ("score_threshold", "split", "llm_data", "embeddings", "drop_incomplete", "dedupe"),
    "routereval": ("score_threshold", "model_names", "leaf"),
    "embedllm": ("split", "embeddings", "drop_incomplete", "dedupe"),
    "routerbench": ("score_threshold", "split", "drop_incomplete"),
    "long": ("dedupe",),
}
FORMAT_OPTIONS.update(_harness.FORMAT_OPTIONS)  # evaluation harnesses (oraclegap._harness)
_ALL_OPTIONS = sorted({o for opts in FORMAT_OPTIONS.values() for o in opts})
_TABLE_SUFFIXES = (".csv", ".parquet")
_JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
_FILE_SUFFIXES = (".npy", ".npz", *_TABLE_SUFFIXES, *_JSON_SUFFIXES)  # names of files, never of pool folders
_SUFFIXES = {  # what each explicit format reads ("dir" = a directory)
    "pool": ("dir",), "store": ("dir",), "npy": (".npy",), "wide-csv": (".csv",),
    "routereval": (".npz", *_formats.SAFE_PICKLE_SUFFIXES),
    "llmrouterbench": ("dir", *_JSON_SUFFIXES), "llmrouter": _JSON_SUFFIXES, "embedllm": _TABLE_SUFFIXES,
    "routerbench": (*_TABLE_SUFFIXES, *_formats.SAFE_PICKLE_SUFFIXES), "long": _TABLE_SUFFIXES,
}
_SUFFIXES.update(_harness.SUFFIXES)

read_llmrouterbench = _formats.read_llmrouterbench
read_llmrouter = _formats.read_llmrouter
read_routereval = _formats.read_routereval
read_embedllm = _formats.read_embedllm
read_routerbench = _formats.read_routerbench
read_long = _formats.read_long
#: The committed evaluation-harness fixtures (``data/harness/``): name -> (format, folder); one Pool each from
#: :func:`harness_fixture` (e.g. ``harness_fixture("lm-eval-default-seed")``).
HARNESS_FIXTURES = _harness.FIXTURES
HARNESS_FORMATS = _harness.FORMATS  # harness format -> its description, the tool named first
harness_fixture = _harness.fixture


def open_pool(spec, *, format=None, models=None, prompt_columns=None, id_column=None, text_column=None, **options) -> Pool:
    """Resolve a pool reference to a :class:`Pool`.

    ``spec`` may be a Pool (returned as is), a pool directory, a rollout store, a ``.npy`` verdict array
    [n, M, k] (or [n, M] for k = 1), ``FILE.npz:KEY`` (a numeric array; object arrays are never
    unpickled), a wide ``.csv`` (items x models of 0/1), a file another router tool wrote (see
    below), a long table written by :meth:`Pool.to_long`, or a name in the
    :mod:`oraclegap.datasets` registry. The CLI's POOL argument and the chapters' ``POOL``
    parameter both go through here.

    Other router tools' files (``format=`` one of :data:`FORMAT_NAMES`, else detected):
    ``llmrouterbench`` (a result ``.json``, a results folder, or flat records ``.json``/``.jsonl``),
    ``llmrouter`` (routing ``.jsonl``), ``routereval`` (``.npz`` of ``<split>_score`` /
    ``<split>_embed``), ``embedllm`` (long ``.csv``/``.parquet`` of model_id, prompt_id, label),
    ``routerbench`` (wide ``.csv``/``.parquet`` with ``<model>|total_cost`` columns) and ``long``
    (``.csv``/``.parquet`` of prompt_id, policy, correct, ...). Without ``format`` the file is
    looked at -- a CSV or parquet by its columns, JSON by its first record, an ``.npz`` without
    ``:KEY`` by its array names, a folder by its first ``.json`` -- and read when exactly one
    layout fits; a file that fits several is refused naming them. ``pool.meta["read_as"]`` says
    which format was read and how it was chosen. Pickles (``.pkl``, ``.pickle``, ``.pt``,
    ``.pth``, ``.joblib``, and object arrays in ``.npy``/``.npz``) are refused with the lines that
    convert them. ``options`` go to the importer (see :data:`FORMAT_OPTIONS`):
    ``score_threshold`` (a response counts as correct when its score >= t; without it any
    score other than 0 or 1 is refused), ``null_scores`` ("error" or "wrong"),
    ``drop_incomplete`` (keep only prompts every policy answered), ``dedupe`` (files without draw
    labels whose every row appears r >= 2 times in its cell -- a file appended to itself -- are
    refused, since the copies would count as draws; with ``dedupe`` one of each is kept and
    ``pool.meta["duplicates_dropped"]`` says how many rows went), ``split`` (a split label for
    every prompt), ``llm_data`` (LLMRouter's model prices), ``embeddings`` (a ``.npy`` of prompt
    embeddings) and ``model_names`` (RouterEval). See :mod:`oraclegap._formats` for each layout.

    A wide CSV's model columns are chosen by name, never by dtype: ``models`` (a list, or a
    comma-separated string) when given, else every column except the id column (``id_column``,
    default the first of :data:`ID_COLUMNS` present), the standard label columns
    :data:`CSV_LABEL_COLUMNS` and the declared ``prompt_columns`` (metadata such as a 0/1
    ``is_math`` flag). Every model cell must be 0/1; a blank or "yes" raises ``ValueError``
    naming the column and the CSV line. The prompt text is ``text_column`` when given, else a
    column named ``text``, else the first of :data:`TEXT_COLUMNS` (``prompt``, ``question``,
    ``query``) present and not named in ``models``; Python list-literal cells (``"['...']"``, as
    RouterBench-derived CSVs hold) are parsed with :func:`ast.literal_eval` into text.
    ``models``/``prompt_columns``/``id_column``/``text_column`` apply to wide-CSV input only.
    ``leaf`` picks one router dataset of a nested RouterEval ``.pkl``.

    Evaluation harnesses' outputs (``lm-eval``, ``inspect``, ``lighteval``, ``opencompass``: k draws per
    prompt and model, read by :mod:`oraclegap._harness`) are detected the same way; ``lmeval_filter`` and
    ``inspect_scorer`` choose a filter pipeline or scorer when a run has several.
    """
    if isinstance(spec, Pool):
        return spec
    try:
        return _open_pool(spec, format, models, prompt_columns, id_column, text_column, options)
    except RecursionError:  # a file nested deeper than any reader can follow (JSON, a manifest, a pickle)
        raise ValueError(f"POOL {os.fspath(spec)!r} (or a file in it) nests lists or objects too deeply to read (deeper "
                         "than Python's recursion limit); it is damaged or not a pool") from None


def _open_pool(spec, format, models, prompt_columns, id_column, text_column, options) -> Pool:
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str) or not spec:
        raise ValueError("POOL must be a non-empty path or name")
    unknown = sorted(set(options) - set(_ALL_OPTIONS))
    if unknown:
        raise TypeError(f"open_pool got unknown option(s) {unknown}; the importers take {_ALL_OPTIONS}")
    options = {k: v for k, v in options.items() if v is not None and v is not False}
    if format is not None and format not in FORMAT_NAMES:
        raise ValueError(f"format must be one of {', '.join(FORMAT_NAMES)}; got {format!r}")
    path = Path(spec)
    if path.exists():
        _declare(path)  # an input of a cached book run (oraclegap._datalog)
    csv_opts = {k: v for k, v in (("models", models), ("prompt_columns", prompt_columns), ("id_column", id_column),
                                  ("text_column", text_column)) if v is not None}
    is_csv = path.suffix.lower() == ".csv" and path.is_file()
    if not is_csv and csv_opts:
        raise ValueError(f"models, prompt_columns, id_column and text_column apply to wide CSV files only; POOL {spec!r} is not "
                         "a .csv file")
    if path.suffix.lower() in _formats.PICKLE_SUFFIXES and path.suffix.lower() not in _formats.SAFE_PICKLE_SUFFIXES \
            and path.is_file():
        raise ValueError(_formats.pickle_refusal(path))
    if format is None:
        fmt, how, parsed = detect_format(spec, _parse=True)
    else:
        fmt, how, parsed = format, "the format argument", None
        _check_suffix(fmt, path, spec)
        if path.suffix.lower() in _formats.SAFE_PICKLE_SUFFIXES:
            parsed = _pickle_object(path)
    if fmt != "wide-csv" and csv_opts:
        raise ValueError(f"models, prompt_columns, id_column and text_column apply to wide CSV files only; POOL {spec!r} is read as "
                         f"{fmt} ({how}); pass format='wide-csv' (CLI --format wide-csv) to read it as a wide CSV")
    extra = sorted(set(options) - set(FORMAT_OPTIONS.get(fmt, ())))
    if extra:
        takes = FORMAT_OPTIONS.get(fmt) or ()
        raise ValueError(f"option(s) {extra} do not apply to POOL {spec!r} read as {fmt} ({how}); "
                         f"{fmt} takes {', '.join(takes) if takes else 'no options'}")
    if fmt == "registry":
        try:
            return datasets.load(spec)
        except (KeyError, IndexError, AttributeError) as exc:  # a released file without the fields its loader reads
            raise ValueError(f"dataset {spec!r}: its files do not have the expected layout ({type(exc).__name__}: {exc})") from None
    if fmt == "store":
        return Pool.from_store(path)
    if fmt == "pool":
        return Pool.load(path)
    if fmt in ("npz", "npy"):
        try:
            if fmt == "npz":
                file, key = spec.rsplit(":", 1)
                _declare(Path(file))
                arr = read_npz(Path(file), [key], label=file)[key]
            else:
                arr = read_npy(path, label=spec)
        except ValueError as exc:
            if "object array" in str(exc):  # a pickled object: say how to convert it
                raise ValueError(f"{exc}{_formats.object_array_hint()}") from None
            raise
        return _from_numeric(arr, spec)
    if fmt == "wide-csv":
        return read_wide_csv(path, **csv_opts)
    if fmt in _harness.FORMATS:  # lm-eval, inspect_ai, lighteval, OpenCompass outputs
        pool = _harness.read(fmt, path, **options)
        return dataclasses.replace(pool, meta={**pool.meta, "read_as": {"format": fmt, "chosen_by": how}})
    reader = getattr(_formats, f"read_{fmt}")
    if parsed is not None and (fmt in ("llmrouterbench", "llmrouter") or path.suffix.lower() in _formats.SAFE_PICKLE_SUFFIXES):
        options["_parsed"] = parsed
    pool = reader(path, **options)
    return dataclasses.replace(pool, meta={**pool.meta, "read_as": {"format": fmt, "chosen_by": how}})


def _check_suffix(fmt: str, path: Path, spec: str) -> None:
    if fmt == "npz":
        if ":" not in spec or not spec.rsplit(":", 1)[0].endswith(".npz"):
            raise ValueError(f"format 'npz' reads FILE.npz:KEY; POOL {spec!r} names no array")
        file, key = spec.rsplit(":", 1)
        check_file(file, "POOL file")
        if not key:
            raise ValueError(f"POOL {spec!r} names no array after the colon; use FILE.npz:KEY")
        return
    if not path.exists():
        raise ValueError(f"POOL {spec!r} {link_problem(path) or 'does not exist'}")
    kinds = _SUFFIXES[fmt]
    ok = ("dir" in kinds and path.is_dir()) or (path.is_file() and path.suffix.lower() in kinds)
    if not ok:
        shown = " or ".join("a directory" if k == "dir" else f"a {k} file" for k in kinds)
        files = [k for k in kinds if k != "dir"]
        if path.is_dir() and "dir" not in kinds:
            raise ValueError(f"POOL {spec!r} is a directory, expected a file: format {fmt!r} reads {shown}")
        if path.is_file() and not files:
            raise ValueError(f"POOL {spec!r} is a file, expected a directory: format {fmt!r} reads {shown}")
        raise ValueError(f"format {fmt!r} reads {shown}; POOL {spec!r} is not")


def _one(spec: str, candidates: list[tuple[str, str]], what: str):
    if len(candidates) > 1:
        names = ", ".join(f"{f} ({h})" for f, h in candidates)
        raise ValueError(f"POOL {spec!r} fits several layouts: {names}; pass format= (CLI --format) to choose one")
    if not candidates:
        raise ValueError(f"POOL {spec!r} is not a layout oraclegap reads ({what}); known formats: "
                         + "; ".join(f"{k}: {v}" for k, v in ROUTER_FORMATS.items()))
    return candidates[0]


def _table_candidates(cols: list[str]) -> list[tuple[str, str]]:
    c = set(cols)
    out = []
    if {"model_id", "prompt_id", "label"} <= c:
        out.append(("embedllm", "columns model_id, prompt_id, label"))
    cost = [x for x in cols if x.endswith("|total_cost")]
    if cost:
        out.append(("routerbench", f"{len(cost)} '<model>|total_cost' columns"))
    if set(_formats.LONG_REQUIRED) <= c:
        out.append(("long", "columns prompt_id, policy, correct"))
    elif {"prompt_id", "correct"} <= c and "policy" not in c and c & {"model", "model_name"}:  # a long table's
        out.append(("long", "columns prompt_id, correct and a model column"))  # reader names the rename
    return out


def detect_format(spec, *, _parse: bool = False):
    """``(format, how it was recognised)`` for a POOL reference, by unambiguous sniffing (see
    :func:`open_pool`); ``"registry"`` for a dataset name. Raises ``ValueError`` for a missing
    path, a file that fits no layout and one that fits several (naming them)."""
    spec = os.fspath(spec)
    path = Path(spec)
    suffix = path.suffix.lower()
    res = None
    parsed = None
    hit = _harness.detect(path) if path.exists() else None  # an evaluation harness's output
    if hit is not None:
        return (*hit, None) if _parse else hit
    if path.is_dir():
        if _store.is_store(path):  # a rollout store (oraclegap.rollouts): every key present exactly once
            res = ("store", "a rollout store")
        elif suffix in _FILE_SUFFIXES and not (path / "manifest.json").exists() and _lrb_folder_sample(path) is None:
            raise ValueError(f"POOL {spec!r} is a directory, expected a {suffix} file (a pool directory holds manifest.json)")
        else:
            sample = None if (path / "manifest.json").exists() else _lrb_folder_sample(path)
            res = (("pool", "a directory") if sample is None else
                   ("llmrouterbench", f"a folder of LLMRouterBench result files (e.g. {sample})"))
    elif ":" in spec and not path.exists() and Path(spec.rsplit(":", 1)[0]).suffix == ".npz":
        file, key = spec.rsplit(":", 1)
        check_file(file, "POOL file")
        if not key:
            raise ValueError(f"POOL {spec!r} names no array after the colon; use FILE.npz:KEY")
        res = ("npz", "FILE.npz:KEY")
    elif path.is_file():
        if suffix in _formats.SAFE_PICKLE_SUFFIXES:  # read by the restricted unpickler: no pickle code runs
            parsed = _pickle_object(path)
            if isinstance(parsed, pd.DataFrame):
                res = _one(spec, [c for c in _table_candidates([str(c) for c in parsed.columns]) if c[0] == "routerbench"],
                           f"a pickled DataFrame with columns {[str(c) for c in parsed.columns][:8]}")
                res = (res[0], "a pickled DataFrame with " + res[1])
            elif _formats._leaves(parsed):
                res = ("routereval", "a pickled RouterEval router dataset ('data' and 'model')")
            else:
                kind = (f"a dict with keys {sorted(map(str, parsed))[:8]}" if isinstance(parsed, dict)
                        else f"a {type(parsed).__name__}")
                raise ValueError(f"POOL {spec!r} is a pickle holding {kind}, neither a RouterBench DataFrame nor a "
                                 "RouterEval router dataset (a dict with 'data' and 'model'); convert it where it was "
                                 "written, e.g. to a long table: `Pool.from_long(df, prompt=..., policy=..., "
                                 "correct=...).to_long('x.parquet')`")
            return (*res, parsed) if _parse else res
        if suffix in _formats.PICKLE_SUFFIXES:
            raise ValueError(_formats.pickle_refusal(path))
        if is_pickle_file(path):  # a pickle under another name (e.g. .npz): the same refusal
            raise ValueError(_formats.pickle_refusal(path, by_content=True))
        if suffix == ".npy":
            res = ("npy", "a .npy file")
        elif suffix == ".npz":
            try:
                with np.load(path, allow_pickle=False) as z:
                    names = list(z.files)
            except Exception:  # noqa: BLE001 - damaged: the FILE.npz:KEY message below still applies
                names = []
            splits = _formats.routereval_members(names)
            if not splits:
                raise ValueError(f"{spec!r}: name the array as FILE.npz:KEY (or give a RouterEval file with <split>_score "
                                 f"arrays); it holds {names}")
            res = ("routereval", f"arrays {', '.join(s + '_score' for s in splits)}")
        elif suffix == ".csv":
            try:
                cols = _formats.table_columns(path)
            except (OSError, UnicodeDecodeError, csv.Error):
                cols = []  # the wide-CSV reader names the problem
            cands = _table_candidates(cols)
            res = ("wide-csv", "a .csv file") if not cands else _one(spec, cands, "")
        elif suffix == ".parquet":
            cols = _formats.table_columns(path)
            res = _one(spec, _table_candidates(cols), f"a parquet file with columns {cols[:8]}")
        elif suffix in _JSON_SUFFIXES:
            kind, payload = _formats.json_records(path)
            parsed = (kind, payload)
            if kind == "object":
                if not _formats.is_llmrouterbench_result(payload):
                    raise ValueError(f"POOL {spec!r} is a JSON object but not an LLMRouterBench result file (keys "
                                     f"{sorted(payload)[:8]}); known formats: "
                                     + "; ".join(f"{k}: {v}" for k, v in ROUTER_FORMATS.items()))
                res = ("llmrouterbench", "an LLMRouterBench result file (dataset_name, model_name, records)")
            else:
                first = payload[0][1]
                cands = []
                if _formats.is_llmrouterbench_record(first):
                    cands.append(("llmrouterbench", "records with dataset, model_name, index and score"))
                if _formats.is_llmrouter_record(first):
                    cands.append(("llmrouter", "records with model_name, query and performance"))
                res = _one(spec, cands, f"the first record has keys {sorted(first)[:10]}")
        else:
            raise ValueError(f"POOL file {spec!r} has an unsupported type; use .npy, FILE.npz:KEY, .csv, .parquet, "
                             ".json/.jsonl (other router tools' files), .npz (RouterEval) or a pool directory")
    elif path.exists():
        raise ValueError(f"POOL {spec!r} is neither a regular file nor a directory")
    else:
        problem = link_problem(path)
        if problem:
            raise ValueError(f"POOL {spec!r} {problem}")
        try:
            datasets.describe(spec)
        except KeyError:
            raise ValueError(f"POOL {spec!r} is neither an existing path nor a known dataset name") from None
        res = ("registry", "a dataset name")
    return (*res, parsed) if _parse else res


def _pickle_object(path: Path):
    """The object a ``.pkl`` holds, loaded by :func:`oraclegap._safepickle.safe_load` (only numpy
    and pandas reconstruction globals; anything else is refused naming the global, before it runs)."""
    from ._safepickle import safe_load

    return safe_load(path)


def _lrb_folder_sample(path: Path) -> str | None:
    """The first ``.json`` below ``path`` when it is an LLMRouterBench result file, else None."""
    first = next(iter(sorted(p for p in path.rglob("*.json") if p.is_file())), None)
    if first is None:
        return None
    try:
        ok = _formats.is_llmrouterbench_result(_formats._load_json(first))
    except ValueError:
        return None
    return str(first.relative_to(path)) if ok else None


def _names_arg(value, name: str) -> list[str] | None:
    if value is None:
        return None
    return list(parse_list(value, name))


def read_wide_csv(path, *, models=None, prompt_columns=None, id_column=None, text_column=None) -> Pool:
    """A k = 1 pool from a comma-separated, UTF-8 items x models CSV (see :func:`open_pool`).

    Refused with a message naming the file: an empty file, a file that is not UTF-8, a file
    that looks separated by ';' or tabs (Excel's ``sep=,`` first line is skipped), repeated column names (pandas would rename them
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
    text, skip = _formats.csv_preamble(text, label)  # Excel's sep= line; ';' or tab separators refused by name
    if not text.strip():
        raise ValueError(f"{label} has no header after its 'sep=,' line; a wide CSV needs a header row and one row per item")
    try:
        reader = csv.reader(io.StringIO(text))
        header = next(reader)
        for row in reader:  # every row must have the header's number of fields (pandas would shift them)
            if row and len(row) != len(header):
                raise ValueError(f"{label}: line {reader.line_num + skip} has {len(row)} fields but the header has "
                                 f"{len(header)}")
    except (csv.Error, StopIteration) as exc:
        raise ValueError(f"{label} is not a readable CSV: {exc}") from None
    header = [h.strip() for h in header]
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
    text_from = None
    if text_column is not None:
        if not isinstance(text_column, str) or text_column not in df.columns:
            raise ValueError(f"text_column {text_column!r} is not a column of {label} (columns: {list(df.columns)[:12]})")
        if text_column != "text" and "text" in df.columns:
            raise ValueError(f"text_column {text_column!r} and the column 'text' of {label} would both be the prompt text; "
                             "drop one or pass text_column='text'")
        if text_column == id_column or (models is not None and text_column in models):
            raise ValueError(f"text_column {text_column!r} is also the id column or a model column of {label}")
        text_from = f"column {text_column!r} (the text_column argument)"
    elif "text" not in df.columns:
        text_column = next((c for c in TEXT_COLUMNS if c in df.columns and c != id_column
                            and (models is None or c not in models)), None)
        if text_column is not None:
            text_from = f"column {text_column!r} (a common name of the prompt text)"
    if text_column is not None and text_column != "text":
        prompt_columns = [c for c in prompt_columns if c != text_column]
    if models is None:
        labels = {id_column, *CSV_LABEL_COLUMNS, *prompt_columns, text_column}
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
    n_lit = {}
    if text_column is not None:
        texts, n = _formats.literal_cells(df[text_column].to_numpy(dtype=object))
        df = df.drop(columns=[text_column]).assign(text=texts)
        n_lit[text_column] = n
        if "text" not in keep:
            keep = ["text", *keep]
    for c in prompt_columns:  # declared metadata (answers such as "['D']") parsed the same way when every cell is a literal
        vals = df[c].to_numpy(dtype=object)
        nonblank = [x for x in vals if str(x).strip()]
        if nonblank and all(_formats.literal_list(x) is not None for x in nonblank):
            df[c], n_lit[c] = _formats.literal_cells(vals)
    ids = df[id_column].to_numpy() if id_column else None
    if ids is not None:
        blank = np.flatnonzero([not str(x).strip() for x in ids])
        if blank.size:
            raise ValueError(f"{label}: id column {id_column!r} is blank on line {int(blank[0]) + 2 + skip}; every item "
                             "needs an id")

    def where(i: int) -> str:
        return f"line {i + 2 + skip}" + (f" (id {ids[i]!r})" if ids is not None else "")

    v = as_bool_columns(df, models, label, row_names=where)
    frame = pd.DataFrame(v.astype(np.int8), columns=models)
    if id_column:
        frame.insert(0, id_column, ids)
    for c in keep:
        frame[c] = df[c].to_numpy()
    try:
        meta = {"source": label, "format": "wide-csv"}
        if text_from is not None:
            meta["text_from"] = text_from
        if any(n_lit.values()):
            meta["list_literal_cells_parsed"] = {c: n for c, n in n_lit.items() if n}
        return Pool.from_wide(frame, id_column=id_column, models=models, prompt_columns=keep, meta=meta)
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
