"""Tables of the importers (CSV, parquet and RouterBench's pickled frame): separators checked,
headers read without the rows, rows named as a reader sees them, list-literal cells joined.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from .._safepickle import safe_load
from .._validate import literal_list
from ._common import SAFE_PICKLE_SUFFIXES

_SEP_NAMES = {";": "';'", "\t": "tabs", "|": "'|'"}


def csv_preamble(text: str, label: str) -> tuple[str, int]:
    """A CSV's text ready for a comma-separated reader, and how many lines were skipped.

    Excel's first line ``sep=,`` (it names the separator) is skipped; ``sep=`` naming another
    separator, and a header that splits into more fields by ';', tabs or '|' than by commas (with
    the first data line agreeing), raise ``ValueError`` saying which separator the file looks
    separated by (and its decimal commas, as European spreadsheets write them)."""
    import csv

    first, _, rest = text.partition("\n")
    m = re.fullmatch(r"\s*sep=(.?)\s*", first)
    skip = 0
    if m:
        sep = m.group(1) or ","
        if sep != ",":
            raise ValueError(f"{label} starts with Excel's line 'sep={sep}': it is separated by {_SEP_NAMES.get(sep, repr(sep))}; "
                             "oraclegap reads comma-separated files -- save it as CSV (comma delimited)")
        text, skip = rest, 1
        first, _, rest = text.partition("\n")
    second = rest.partition("\n")[0]
    try:
        by_comma = len(next(csv.reader([first]), []))
    except csv.Error:  # not line-structured text (a binary file): the reader that follows says what it is
        return text, skip
    for sep, what in _SEP_NAMES.items():
        try:
            n = len(next(csv.reader([first], delimiter=sep), []))
            if n <= by_comma or (second.strip() and len(next(csv.reader([second], delimiter=sep), [])) != n):
                continue
        except csv.Error:
            continue
        decimals = " with decimal commas (e.g. '1,0')" if re.search(r"\d,\d", second) else ""
        head = (f"has a single column {first.strip()[:60]!r}" if by_comma == 1
                else f"has a header of {by_comma} fields by commas but {n} by {what}")
        how = f"sep={sep!r}" + (", decimal=','" if decimals else "")
        raise ValueError(f"{label} {head}: it looks separated by {what}{decimals}; oraclegap reads comma-separated files "
                         f"with '.' decimals -- save it as CSV (comma delimited), e.g. pandas.read_csv(path, {how})"
                         ".to_csv(new_path, index=False)")
    return text, skip


def _csv_head(path: Path, n_bytes: int = 1 << 16) -> str:
    """The first bytes of a CSV as text (a byte-order mark dropped; a character cut at the end ignored)."""
    with open(path, "rb") as fh:
        raw = fh.read(n_bytes)
    return raw.decode("utf-8-sig", errors="ignore")


def table_columns(path) -> list[str]:
    """Column names of a CSV (its header) or parquet file, read without loading the rows."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types
            raise ValueError(f"{path} is not a readable parquet file ({exc})") from None
    import csv

    with open(path, encoding="utf-8-sig", newline="") as fh:
        first = fh.readline()
        if re.fullmatch(r"\s*sep=,?\s*", first):  # Excel's separator line: the header follows
            first = fh.readline()
        return [h.strip() for h in next(csv.reader([first]), [])]


def _csv_skip(path: Path) -> int:
    """Lines before a CSV's header (Excel's ``sep=,``), after checking its separator (:func:`csv_preamble`)."""
    try:
        head = _csv_head(path)
    except OSError as exc:
        raise ValueError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if "\n" in head:
        head = head[: head.rfind("\n")]  # whole lines only
    return csv_preamble(head, str(path))[1]


def _read_table(path: Path, dtype=None) -> pd.DataFrame:
    if path.suffix.lower() in SAFE_PICKLE_SUFFIXES:  # RouterBench's routerbench_0shot.pkl: no pickle code runs
        obj = safe_load(path)
        if not isinstance(obj, pd.DataFrame):
            raise ValueError(f"{path} holds a {type(obj).__name__}, not a pandas DataFrame (a RouterBench table)")
        return obj
    if path.suffix.lower() == ".parquet":
        try:
            return pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"{path} is not a readable parquet file ({exc})") from None
    skip = _csv_skip(path)
    try:
        return pd.read_csv(path, dtype=dtype, encoding="utf-8-sig", keep_default_na=dtype is not str, skiprows=skip)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte offset {exc.start}); save it as UTF-8") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise ValueError(f"{path} is not a well-formed CSV: {str(exc).strip()}") from None


def _row_word(path: Path) -> Callable[[int], str]:
    """Row i of a table as a reader sees it: "line i+2" of a CSV (after the header), "row i" of a parquet."""
    if path.suffix.lower() == ".parquet" or path.suffix.lower() in SAFE_PICKLE_SUFFIXES:
        return lambda i: f"row {i}"
    try:
        skip = _csv_skip(path) if path.is_file() else 0
    except ValueError:
        skip = 0
    return lambda i: f"line {i + 2 + skip}"


def _row_namer(path: Path, ids=None, id_name: str = "") -> Callable[[int], str]:
    word = _row_word(path)

    def where(i: int) -> str:
        return f"{path}: {word(i)}" + (f" ({id_name} {ids[i]!r})" if ids is not None else "")

    return where


def _refuse_blank(d: pd.DataFrame, columns, where: Callable[[int], str], what: str) -> None:
    """Refuse a table whose key ``columns`` hold a missing or blank (white space only) cell, naming
    the first such row (``where(i)``) and the field; ``what`` names one row ("row", "response")."""
    for c in columns:
        blank = (d[c].isna() | (d[c].astype(str).str.strip() == "")).to_numpy()
        if blank.any():
            i = int(np.flatnonzero(blank)[0])
            raise ValueError(f"{where(i)}: field {c!r} is blank; every {what} needs it")


def _text_of(x):
    """A prompt cell as text: lists/arrays of strings (RouterBench keeps some prompts as lists, its
    CSVs as list literals) joined by blank lines."""
    if isinstance(x, str):
        lst = literal_list(x)
        return x if lst is None else "\n\n".join(lst)
    if isinstance(x, (list, tuple, np.ndarray)):
        return "\n\n".join(str(y) for y in x)
    return x


def literal_cells(values) -> tuple[np.ndarray, int]:
    """(texts, number of list-literal cells parsed): each list-literal cell joined as :func:`_text_of` does."""
    vals = np.asarray(values, dtype=object)
    out = np.empty(len(vals), dtype=object)
    n = 0
    for i, x in enumerate(vals):  # one pass over the cells (text parsing has no vector form)
        lst = literal_list(x)
        if lst is None:
            out[i] = x
        else:
            out[i] = "\n\n".join(lst)
            n += 1
    return out, n

