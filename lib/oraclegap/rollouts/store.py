"""The rollout store: append-only parquet shards, a manifest that a rerun must match, resume.

Layout and schema are defined in :mod:`oraclegap._store` (the ground floor, which
``Pool.from_store`` reads through). This module creates stores, checks a run's settings
against an existing manifest, writes shards atomically and reports progress.

* **Creation** is race-free: the manifest, the prompt file and the shard folder are written
  into a temporary directory that is renamed into place; when several workers start at once,
  one rename wins and the others compare their settings with the winner's manifest.
* **A different run refuses to write**: every entry of the manifest's ``identity`` (model and
  adapter hashes, task and template, prompt-file hash, sampling parameters and draw-seed mode, seed rule, backend,
  layout, package versions) must equal the new run's; the error names each difference.
* **Shards** hold whole chunks and are written to a temporary name, flushed, fsynced and
  renamed; a killed writer leaves at most a temporary file, which readers ignore.
* **Workers**: worker i of n owns the chunks c with ``c % n == i`` and names its shards
  ``wIofN-...``; n processes fill one store with no coordination. A rerun skips every chunk
  that has a shard, whoever wrote it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from .. import _store
from .._io import fsync_dir as _fsync_dir
from .._result import Result
from ..pool import Pool

__all__ = ["Store", "StoreStatus", "identity_diff"]


def _arrow_schema():
    import pyarrow as pa

    kinds = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "bool": pa.bool_(), "double": pa.float64()}
    return pa.schema([pa.field(name, kinds[t]) for name, t in _store.SCHEMA])


def _flatten(obj, prefix: str = "") -> dict:
    if isinstance(obj, dict):
        out = {}
        for k in sorted(obj):
            out.update(_flatten(obj[k], f"{prefix}.{k}" if prefix else str(k)))
        return out if out or not prefix else {prefix: {}}
    if isinstance(obj, list):
        out = {}
        for i, v in enumerate(obj):
            out.update(_flatten(v, f"{prefix}[{i}]"))
        return out if out else {prefix: []}
    return {prefix: obj}


def _with_defaults(identity: dict) -> dict:
    """A stored identity with the settings added since it was written filled in: a store without
    ``sampling.draw_seeds`` holds draws sampled with aligned seeds (its writer had no other mode)."""
    samp = identity.get("sampling") if isinstance(identity, dict) else None
    if isinstance(samp, dict) and "draw_seeds" not in samp:
        return {**identity, "sampling": {**samp, "draw_seeds": "aligned"}}
    return identity


def identity_diff(stored: dict, new: dict) -> list[str]:
    """Entries where two manifest identities differ, as ``"key: store has X, this run has Y"``."""
    a, b = _flatten(stored), _flatten(new)
    lines = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, "(absent)"), b.get(key, "(absent)")
        if va != vb:
            lines.append(f"{key}: store has {va!r}, this run has {vb!r}")
    return lines


@dataclasses.dataclass(frozen=True, repr=False)
class StoreStatus(Result):
    """Progress of a store: cells (prompt, policy) and responses done out of the total, per
    policy (with verdict rate, parse failures and responses cut at max_tokens), missing cells,
    chunks claimed by more than one shard, leftover temporary files."""

    path: str
    n_prompts: int
    policies: tuple[str, ...]
    k: int
    cells_total: int
    cells_done: int
    responses_done: int
    chunks_total: int
    chunks_done: int
    missing: tuple[tuple[str, str], ...]
    duplicates: dict
    temp_files: tuple[str, ...]
    per_policy: pd.DataFrame

    @property
    def complete(self) -> bool:
        """Every cell present, and no chunk written twice."""
        return self.cells_done == self.cells_total and not self.duplicates

    def frame(self) -> pd.DataFrame:
        """One row per policy: cells_done, cells_total, responses, correct, accuracy,
        parse_failures, cut_at_max_tokens."""
        return self.per_policy.copy()

    def to_dict(self) -> dict:
        """The status as plain JSON-ready values (the CLI's ``--json`` output)."""
        return {
            "path": self.path,
            "complete": self.complete,
            "n_prompts": self.n_prompts,
            "policies": list(self.policies),
            "k": self.k,
            "cells_done": self.cells_done,
            "cells_total": self.cells_total,
            "responses_done": self.responses_done,
            "chunks_done": self.chunks_done,
            "chunks_total": self.chunks_total,
            "missing": [list(c) for c in self.missing],
            "duplicates": {str(c): v for c, v in self.duplicates.items()},
            "temp_files": list(self.temp_files),
            "per_policy": self.per_policy.to_dict(orient="records"),
        }


class Store:
    """A rollout store on disk (see the module docstring). ``Store(path)`` opens an existing one."""

    def __init__(self, path):
        self.path = Path(path)
        self.manifest = _store.read_manifest(self.path)

    # ------------------------------------------------------------------ creation
    @staticmethod
    def check_target(path) -> Path:
        """``path`` must be absent, an empty directory, or a rollout store."""
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise ValueError(f"out {str(path)!r} exists and is not a directory")
        if path.is_dir() and not (path / _store.MANIFEST).exists() and any(path.iterdir()):
            raise ValueError(f"out {str(path)!r} is a non-empty directory that is not a rollout store")
        return path

    @classmethod
    def open_or_create(cls, path, identity: dict, info: dict, prompt_lines: bytes) -> Store:
        """Create the store with this identity, or open it and check that its identity matches."""
        path = cls.check_target(path)
        if not (path / _store.MANIFEST).exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            manifest = {
                "format": _store.FORMAT_NAME,
                "version": _store.FORMAT_VERSION,
                "identity": identity,
                "info": info,
            }
            tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.creating-", dir=path.parent))
            try:
                (tmp / _store.SHARDS).mkdir()
                (tmp / _store.PROMPTS).write_bytes(prompt_lines)
                (tmp / _store.MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
                try:
                    os.rename(tmp, path)  # atomic; fails when another creator won
                except OSError:
                    if not (path / _store.MANIFEST).exists():
                        raise
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
        store = cls(path)
        diff = identity_diff(_with_defaults(store.manifest["identity"]), identity)
        if diff:
            raise ValueError(
                f"rollout store {str(path)!r} was written by a run with different settings; refusing to add to it. "
                f"Differences: {'; '.join(diff[:8])}{' ...' if len(diff) > 8 else ''}. "
                "Use a new --out, or rerun with the store's settings."
            )
        _store.read_prompts(path, store.manifest)  # the prompt file must be intact
        return store

    # ------------------------------------------------------------------ layout
    @property
    def identity(self) -> dict:
        """The manifest's identity: every setting a rerun must match."""
        return self.manifest["identity"]

    @property
    def policy_names(self) -> list[str]:
        """Policy names in manifest order (the pool's policy axis)."""
        return [p["name"] for p in self.identity["policies"]]

    @property
    def k(self) -> int:
        """Responses per (prompt, policy)."""
        return int(self.identity["sampling"]["k"])

    def prompts(self) -> list[dict]:
        """The stored prompt records."""
        return _store.read_prompts(self.path, self.manifest)

    def layout(self):
        """Chunk c -> (policy, prompt ids)."""
        return _store.chunk_layout(self.manifest, [r["id"] for r in self.prompts()])

    @staticmethod
    def owned(n_chunks: int, worker: tuple[int, int] | None) -> list[int]:
        """The chunks worker (i, n) owns: ``c % n == i`` (all of them for ``None``)."""
        if worker is None:
            return list(range(n_chunks))
        i, n = worker
        return [c for c in range(n_chunks) if c % n == i]

    def committed_chunks(self) -> set[int]:
        """Chunks with a committed shard, every shard checked (a damaged one raises, named)."""
        data = _store.read_store(self.path)
        return {s.chunk for s in data.shards}

    # ------------------------------------------------------------------ writing
    def clean_temps(self, tag: str) -> int:
        """Remove temporary files a killed writer with this tag left behind; return how many."""
        sdir = self.path / _store.SHARDS
        n = 0
        for f in sdir.glob(f"{_store.TEMP_PREFIX}{tag}-*"):
            f.unlink(missing_ok=True)
            n += 1
        return n

    def write_chunk(self, chunk: int, tag: str, rows: pd.DataFrame) -> Path:
        """Write one chunk's responses as a shard: temp name, fsync, rename into place."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        missing = [c for c in _store.COLUMNS if c not in rows.columns]
        if missing:
            raise ValueError(f"chunk rows lack columns {missing}")
        table = pa.Table.from_pandas(rows[list(_store.COLUMNS)], schema=_arrow_schema(), preserve_index=False)
        table = table.replace_schema_metadata({"oraclegap.chunk": str(int(chunk)), "oraclegap.worker": tag})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        data = sink.getvalue().to_pybytes()
        sdir = self.path / _store.SHARDS
        final = sdir / _store.shard_name(tag, chunk, _store.digest_bytes(data))
        tmp = sdir / f"{_store.TEMP_PREFIX}{tag}-c{int(chunk):06d}-{uuid.uuid4().hex}.parquet"
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        _fsync_dir(sdir)
        return final

    # ------------------------------------------------------------------ reading
    def to_frame(self) -> pd.DataFrame:
        """Every stored response, one row each (schema in :data:`oraclegap._store.SCHEMA`),
        sorted by prompt (file order), policy (manifest order) and sample."""
        data = _store.read_store(self.path)
        df = data.responses.copy()
        order_p = {r["id"]: i for i, r in enumerate(data.prompts)}
        order_m = {m: i for i, m in enumerate(data.policy_names)}
        df["_p"] = df["prompt_id"].map(order_p)
        df["_m"] = df["policy"].map(order_m)
        df = df.sort_values(["_p", "_m", "sample"], kind="stable").drop(columns=["_p", "_m"])
        return df.reset_index(drop=True)

    def to_pool(self) -> Pool:
        """The store as a :class:`~oraclegap.pool.Pool` (complete stores only)."""
        return Pool.from_store(self.path)

    def status(self) -> StoreStatus:
        """Progress: cells and responses done, per policy, what is missing."""
        data = _store.read_store(self.path)
        names = data.policy_names
        n = len(data.prompts)
        df = data.responses
        cells_per_policy = pd.Series(0, index=names, dtype=int)
        for c in range(len(data.layout)):
            if c not in data.missing_chunks:
                cells_per_policy[data.layout[c][0]] += len(data.layout[c][1])
        agg = (
            df.assign(
                _n=1,
                _ok=df["correct"].astype(bool),
                _fail=~df["parsed"].astype(bool),
                _cut=df["finish_reason"].astype(str).eq("length"),
            )
            .groupby("policy")[["_n", "_ok", "_fail", "_cut"]]
            .sum()
            .reindex(names, fill_value=0)
        )
        per = pd.DataFrame({"policy": names})
        per["cells_done"] = cells_per_policy.reindex(names).to_numpy()
        per["cells_total"] = n
        per["responses"] = agg["_n"].to_numpy(dtype=int)
        per["correct"] = agg["_ok"].to_numpy(dtype=int)
        per["accuracy"] = np.divide(
            per["correct"].to_numpy(float), per["responses"].to_numpy(float),
            out=np.full(len(names), np.nan), where=per["responses"].to_numpy() > 0,
        )
        per["parse_failures"] = agg["_fail"].to_numpy(dtype=int)
        per["cut_at_max_tokens"] = agg["_cut"].to_numpy(dtype=int)
        missing = tuple(data.missing_cells())
        return StoreStatus(
            path=str(self.path),
            n_prompts=n,
            policies=tuple(names),
            k=data.k,
            cells_total=n * len(names),
            cells_done=int(per["cells_done"].sum()),
            responses_done=int(len(df)),
            chunks_total=len(data.layout),
            chunks_done=len(data.layout) - len(data.missing_chunks),
            missing=missing,
            duplicates=dict(data.duplicates),
            temp_files=data.temp_files,
            per_policy=per,
        )


def now_iso() -> str:
    """The local time as ISO 8601 (for the manifest's informational part)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
