"""A pool on disk: one directory, written atomically and read back with every file checked.

On disk a pool is a directory: ``arrays.npz`` (numeric arrays only, read with
``allow_pickle=False``; per-response arrays as ``response__NAME``), ``prompts.parquet``,
``policies.parquet``, ``answers.parquet`` when the
pool has answers (variable-length text, one row per response in C order of [n, M, k]) and
``manifest.json`` (format name, version, shape, alignment, provenance, and a SHA-256 of every
file and of the verdicts' content, checked on load). Format version 1 (answers as fixed-width
strings inside ``arrays.npz``, no checksums) is still read.

Saving is atomic and survives being killed at any point: the new pool is written into a hidden
sibling ``.NAME.new-TOKEN``; an existing pool is moved aside to ``.NAME.old-TOKEN``, the new one
is renamed into place and the old one removed. If a save dies between the two renames,
:meth:`Pool.load` (and the next :meth:`Pool.save`) puts a complete pool back at the path (the
new one when it was finished, else the old one) and removes what dead saves left behind.
Directories and files get the user's umask. Only a directory that holds a pool manifest is
ever overwritten.

:func:`save` and :func:`load` are ``Pool.save`` and ``Pool.load`` (bound in
:mod:`oraclegap.pool._pool`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._io import fsync_dir as _fsync_dir
from .._io import fsync_file as _fsync_file
from .._io import pid_alive
from .._validate import read_npz

if TYPE_CHECKING:
    from ._pool import Pool

FORMAT_NAME = "oraclegap.pool"
FORMAT_VERSION = 2
#: The files :meth:`Pool.save` writes (and replaces on ``overwrite=True``); any other file in a pool
#: directory is someone else's and is kept.
POOL_FILES = frozenset({"arrays.npz", "prompts.parquet", "policies.parquet", "answers.parquet", "manifest.json",
                        "manifest.json.part"})
_RESPONSE_PREFIX = "response__"


def save(self: Pool, path, overwrite: bool = False) -> Path:
    """Write the pool as a directory, atomically (see :mod:`oraclegap.pool._storage`).

    The pool is validated again first (its tables are mutable DataFrames). With
    ``overwrite=True`` an existing *pool* directory is replaced; any other file or directory
    at ``path`` is refused. Files in the old directory that are not the pool's own
    (:data:`POOL_FILES`: a note of yours, a file another tool keeps beside the pool) are carried
    into the new one, never deleted. A SHA-256 of every file and of the verdicts' content is
    recorded in the manifest and checked by :meth:`Pool.load`.
    """
    path = Path(path)
    pool = self._revalidated()
    parent = path.parent
    parent.mkdir(parents=True, exist_ok=True)
    _recover(path)
    if path.exists() or path.is_symlink():
        if not overwrite:
            raise ValueError(f"path {str(path)!r} exists; pass overwrite=True to replace it")
        if path.is_symlink() or not path.is_dir() or not _holds_pool_manifest(path):
            raise ValueError(
                f"path {str(path)!r} exists and is not an oraclegap pool directory (no pool manifest.json); "
                "refusing to overwrite it -- choose another path or remove it yourself"
            )
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    tmp = parent / f".{path.name}.new-{token}"
    old = parent / f".{path.name}.old-{token}"
    os.mkdir(tmp)  # mode 0o777 & ~umask, like any directory the user creates
    moved_aside = False
    try:
        _write_files(pool, tmp)
        if path.is_dir():  # keep what is not the pool's own (a user's note, another tool's file)
            for f in sorted(path.rglob("*")):
                rel = f.relative_to(path)
                if rel.as_posix() in POOL_FILES or not (f.is_file() or f.is_symlink()):
                    continue
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, tmp / rel, follow_symlinks=False)
        _fsync_dir(tmp)
        if path.exists():
            os.rename(path, old)
            moved_aside = True
            os.rename(tmp, path)
            moved_aside = False
            _fsync_dir(parent)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, path)
            _fsync_dir(parent)
    except BaseException:
        if moved_aside and not path.exists() and old.exists():
            os.rename(old, path)  # put the old pool back
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def _write_files(pool: Pool, d: Path) -> None:
    """Write every file of the pool into the directory ``d``; the manifest last."""
    arrays: dict[str, np.ndarray] = {"verdicts": np.packbits(pool.verdicts, axis=2)}
    if pool.embeddings is not None:
        arrays["embeddings"] = pool.embeddings
    if pool.cost is not None:
        arrays["cost"] = pool.cost
    for name, arr in pool.per_response.items():
        arrays[_RESPONSE_PREFIX + name] = arr
    np.savez_compressed(d / "arrays.npz", **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds
    _to_parquet(pool.prompts, d / "prompts.parquet")
    _to_parquet(pool.policies, d / "policies.parquet")
    files = ["arrays.npz", "prompts.parquet", "policies.parquet"]
    if pool.answers is not None:
        _answers_to_parquet(pool.answers, d / "answers.parquet")
        files.append("answers.parquet")
    checksums = {}
    for name in files:
        checksums[name] = _sha256(d / name)
        _fsync_file(d / name)
    manifest = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "shape": list(pool.shape),
        "alignment": pool.alignment,
        "arrays": sorted(arrays),
        "answers": "answers.parquet" if pool.answers is not None else None,
        "verdicts_packed": "numpy.packbits along the draw axis",
        "checksums": {"sha256": checksums, "verdicts_content_sha256": _verdicts_digest(arrays["verdicts"], pool.shape)},
        "meta": _jsonable(pool.meta),
    }
    part = d / "manifest.json.part"
    part.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    _fsync_file(part)
    os.rename(part, d / "manifest.json")


def load(cls: type[Pool], path) -> Pool:
    """Read a pool directory written by :meth:`Pool.save`, checking every file.

    The stored arrays must match the manifest's shape and (format 2) every file its SHA-256
    recorded at save; a mismatch raises ``ValueError`` naming the file. A save killed
    between its two renames is completed first (see :mod:`oraclegap.pool._storage`).
    """
    path = Path(path)
    if not path.exists():
        _recover(path)
    if not path.exists():
        raise ValueError(f"pool path {str(path)!r} does not exist")
    if not path.is_dir():
        raise ValueError(f"pool path {str(path)!r} is not a directory")
    where = str(path)
    mpath = path / "manifest.json"
    if not mpath.is_file():
        raise ValueError(f"pool directory {where!r} has no manifest.json")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"manifest.json in {where!r} is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        fmt = manifest.get("format") if isinstance(manifest, dict) else None
        raise ValueError(f"{str(mpath)!r} is not an oraclegap pool manifest (format={fmt!r})")
    version = manifest.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"manifest version must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"pool format version {version} is newer than this library supports ({FORMAT_VERSION}); upgrade oraclegap"
        )
    shape = manifest.get("shape")
    if not (isinstance(shape, list) and len(shape) == 3 and all(isinstance(x, int) and not isinstance(x, bool) and x > 0
                                                                  for x in shape)):
        raise ValueError(f"manifest.json in {where!r}: shape must be [n, M, k] of positive integers, got {shape!r}")
    n, M, k = shape
    names = ["arrays.npz", "prompts.parquet", "policies.parquet"]
    if version >= 2 and manifest.get("answers"):
        if manifest["answers"] != "answers.parquet":
            raise ValueError(f"manifest.json in {where!r} names an unexpected answers file {manifest['answers']!r}")
        names.append("answers.parquet")
    for name in names:
        if not (path / name).is_file():
            raise ValueError(f"pool directory {where!r} is missing {name}")
    if version >= 2:
        sums = (manifest.get("checksums") or {}).get("sha256")
        if not isinstance(sums, dict) or set(sums) != set(names):
            raise ValueError(f"manifest.json in {where!r} lacks the checksums of its files; the pool is damaged")
        for name in names:
            if _sha256(path / name) != sums[name]:
                raise ValueError(
                    f"{name} in {where!r} does not match the checksum recorded at save: the file is damaged or was changed"
                )
    arrays = read_npz(path / "arrays.npz", label=f"{_name_in(where, 'arrays.npz')}")
    if "verdicts" not in arrays:
        raise ValueError(f"arrays.npz in {where!r} has no 'verdicts' array")
    listed = manifest.get("arrays")
    if isinstance(listed, list):
        absent = [a for a in listed if a not in arrays]
        if absent:
            raise ValueError(f"arrays.npz in {where!r} lacks arrays the manifest lists: {absent}")
    packed = arrays["verdicts"]
    stored = (n, M, -(-k // 8))
    if packed.dtype != np.uint8 or packed.ndim != 3 or packed.shape != stored:
        held = f"{packed.shape[2] * 8 if packed.ndim == 3 else '?'}"
        raise ValueError(
            f"arrays.npz in {where!r}: the stored verdicts (packed shape {packed.shape}, dtype {packed.dtype}, room for "
            f"up to {held} draws) do not match the manifest's shape {shape}; refusing to invent or drop draws"
        )
    if k % 8:
        pad = np.unpackbits(packed[:, :, -1:], axis=2)[:, :, k % 8:]
        if pad.any():
            raise ValueError(
                f"arrays.npz in {where!r} holds successes beyond the manifest's k={k} draws; the manifest understates "
                "the stored draws, refusing to drop them"
            )
    if version >= 2:
        digest = (manifest.get("checksums") or {}).get("verdicts_content_sha256")
        if digest != _verdicts_digest(packed, (n, M, k)):
            raise ValueError(
                f"arrays.npz in {where!r}: the verdicts do not match the content checksum for the manifest's shape {shape}"
            )
    verdicts = np.unpackbits(packed, axis=2, count=k).astype(bool)
    answers = None
    if version >= 2 and manifest.get("answers"):
        answers = _answers_from_parquet(path / "answers.parquet", (n, M, k), _name_in(where, "answers.parquet"))
    elif "answers" in arrays:  # format 1: fixed-width strings
        answers = arrays["answers"]
    tables = {}
    for name in ("prompts.parquet", "policies.parquet"):
        try:
            tables[name] = pd.read_parquet(path / name)
        except Exception as exc:  # pyarrow raises several types for damaged files
            raise ValueError(f"{name} in {where!r} is corrupt or unreadable: {exc}") from None
    try:
        return cls(
            verdicts,
            tables["prompts.parquet"],
            tables["policies.parquet"],
            answers,
            arrays.get("embeddings"),
            arrays.get("cost"),
            manifest.get("alignment", "unknown"),
            dict(manifest.get("meta") or {}),
            {name[len(_RESPONSE_PREFIX):]: a for name, a in arrays.items() if name.startswith(_RESPONSE_PREFIX)},
        )
    except (ValueError, TypeError) as exc:
        raise ValueError(f"pool {where!r} fails validation: {exc}") from None


def _name_in(directory: str, name: str) -> str:
    return str(Path(directory) / name)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _verdicts_digest(packed: np.ndarray, shape) -> str:
    """SHA-256 of the verdicts' content: the shape [n, M, k] and the packed bits."""
    h = hashlib.sha256(json.dumps([int(x) for x in shape]).encode())
    h.update(np.ascontiguousarray(packed, dtype=np.uint8).tobytes())
    return h.hexdigest()


def _holds_pool_manifest(path: Path) -> bool:
    try:
        m = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(m, dict) and m.get("format") == FORMAT_NAME


_SIBLING = re.compile(r"^\.(?P<name>.+)\.(?P<kind>new|old)-(?P<pid>\d+)-(?P<rand>[0-9a-f]+)$")


def _recover(path: Path) -> None:
    """Finish or undo a save that died, and remove what dead saves left beside ``path``.

    Only entries named ``.NAME.new-PID-HEX`` / ``.NAME.old-PID-HEX`` whose process is gone are
    touched. When ``path`` is missing and a dead save had moved the old pool aside, the finished
    new pool (manifest present) is moved into place, else the old one.
    """
    parent = path.parent
    if not parent.is_dir():
        return
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    dead: dict[str, dict[str, Path]] = {}
    for e in entries:
        m = _SIBLING.match(e.name)
        if m is None or m.group("name") != path.name or pid_alive(int(m.group("pid"))):
            continue
        dead.setdefault(f"{m.group('pid')}-{m.group('rand')}", {})[m.group("kind")] = e
    if not path.exists() and not path.is_symlink():
        swaps = [d for d in dead.values() if "old" in d]
        swaps.sort(key=lambda d: _mtime(d["old"]), reverse=True)
        for d in swaps:
            new, old = d.get("new"), d["old"]
            for cand in (new, old):
                if cand is not None and _holds_pool_manifest(cand):
                    try:
                        os.rename(cand, path)
                    except OSError:
                        continue
                    break
            if path.exists():
                break
    if path.exists():
        for d in dead.values():
            for e in d.values():
                if e.exists():
                    shutil.rmtree(e, ignore_errors=True)


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def _answers_to_parquet(answers: np.ndarray, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    col = pa.array(answers.ravel(), type=pa.large_string())
    pq.write_table(pa.table({"answer": col}), path, compression="zstd")


def _answers_from_parquet(path: Path, shape, label: str) -> np.ndarray:
    import pyarrow.parquet as pq

    try:
        tab = pq.read_table(path)
    except Exception as exc:  # damaged parquet: several pyarrow exception types
        raise ValueError(f"{label} is damaged or unreadable: {exc}") from None
    if tab.column_names != ["answer"]:
        raise ValueError(f"{label} must hold one column 'answer', found {tab.column_names}")
    expected = int(np.prod(shape))
    if tab.num_rows != expected:
        raise ValueError(f"{label} holds {tab.num_rows} answers but the manifest's shape {list(shape)} needs {expected}")
    vals = tab.column("answer").to_numpy(zero_copy_only=False)
    return np.asarray(vals, dtype=object).reshape(shape)


def _parquet_safe(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every object column of mixed non-numeric values turned to text (as :func:`_to_parquet`)."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object:
            vals = out[col].dropna()
            if len(vals) and not all(isinstance(x, str) for x in vals):
                kinds = {type(x) for x in vals}
                if not kinds <= {int, float, bool, np.integer, np.floating, np.bool_} and not all(
                    isinstance(x, (int, float, np.number)) for x in vals
                ):
                    out[col] = out[col].map(lambda x: None if x is None or (isinstance(x, float) and np.isnan(x)) else str(x))
    return out


def _to_parquet(df: pd.DataFrame, path: Path) -> None:
    _parquet_safe(df).to_parquet(path, index=False)


def _jsonable(obj: Any):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)
