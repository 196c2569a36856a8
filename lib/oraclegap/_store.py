"""Rollout stores on disk: the schema, shard reading and completeness checks (ground floor).

A rollout store is a directory written by :mod:`oraclegap.rollouts` and read by
:meth:`oraclegap.pool.Pool.from_store`::

    STORE/manifest.json    format, version, "identity" (everything that determines the
                           responses: model and adapter hashes, task, prompt-file hash,
                           sampling parameters, seed rule, backend, layout, package
                           versions) and "info" (paths, time; not compared on resume)
    STORE/prompts.jsonl    the prompt records, canonical JSONL; its SHA-256 is in the manifest
    STORE/shards/wIofN-cCCCCCC-DDDDDDDDDDDDDDDD.parquet
                           one shard per chunk: all k responses of a few prompts under one
                           policy, written by worker I of N; D is the first 16 hex digits of
                           the SHA-256 of the file's bytes, so damage is detected and named

The keys of a store are (prompt_id, policy, sample). Chunk c holds policy ``c % M`` (M
policies, in manifest order) on prompt group ``c // M`` (``prompts_per_chunk`` consecutive
prompts in file order). Shards are append-only and each is renamed into place only once it
is complete, so a store holds only whole chunks. Nothing here imports above ``_validate``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST",
    "PROMPTS",
    "SHARDS",
    "SCHEMA",
    "COLUMNS",
    "KEY",
    "TEMP_PREFIX",
    "StoreData",
    "ShardFile",
    "is_store",
    "worker_tag",
    "shard_name",
    "digest_bytes",
    "read_manifest",
    "read_prompts",
    "chunk_layout",
    "list_shards",
    "read_shard",
    "read_store",
]

FORMAT_NAME = "oraclegap.rollouts"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
PROMPTS = "prompts.jsonl"
SHARDS = "shards"
TEMP_PREFIX = ".tmp-"

# one row per response; the parquet types each shard must carry
SCHEMA: tuple[tuple[str, str], ...] = (
    ("prompt_id", "string"),
    ("policy", "string"),
    ("sample", "int32"),
    ("seed", "int64"),
    ("text", "string"),
    ("answer", "string"),  # null when no answer could be parsed
    ("parsed", "bool"),
    ("correct", "bool"),
    ("prompt_tokens", "int32"),
    ("completion_tokens", "int32"),
    ("mean_logprob", "double"),  # mean log-probability of the generated tokens (NaN for none)
    ("finish_reason", "string"),  # "stop" (end of sequence) or "length" (max_tokens reached)
)
COLUMNS = tuple(name for name, _ in SCHEMA)
KEY = ("prompt_id", "policy", "sample")
_SHARD = re.compile(r"^(?P<worker>w(?P<i>\d+)of(?P<n>\d+))-c(?P<chunk>\d{6,})-(?P<digest>[0-9a-f]{16})\.parquet$")


@dataclasses.dataclass(frozen=True)
class ShardFile:
    """One committed shard: its path, writer tag (``wIofN``), chunk index and content digest."""

    path: Path
    worker: str
    chunk: int
    digest: str


@dataclasses.dataclass(frozen=True)
class StoreData:
    """What a store holds: manifest, prompt records, the responses of every chunk read once
    (``responses``, in chunk order), and what is incomplete or doubled.

    ``missing_chunks`` are chunk indices with no shard; ``duplicates`` maps a chunk index to
    the names of all shards that claim it (a store written by overlapping workers);
    ``temp_files`` are uncommitted temporary files left by interrupted writers.
    """

    path: Path
    manifest: dict
    prompts: list[dict]
    responses: pd.DataFrame
    shards: tuple[ShardFile, ...]
    layout: tuple[tuple[str, tuple[str, ...]], ...]
    missing_chunks: tuple[int, ...]
    duplicates: dict
    temp_files: tuple[str, ...]

    @property
    def identity(self) -> dict:
        return self.manifest["identity"]

    @property
    def policy_names(self) -> list[str]:
        return [p["name"] for p in self.identity["policies"]]

    @property
    def k(self) -> int:
        return int(self.identity["sampling"]["k"])

    def missing_cells(self) -> list[tuple[str, str]]:
        """(prompt_id, policy) cells not yet in the store, in chunk order."""
        return [(pid, self.layout[c][0]) for c in self.missing_chunks for pid in self.layout[c][1]]


def is_store(path) -> bool:
    """Whether ``path`` is a directory holding a rollout-store manifest."""
    p = Path(path) / MANIFEST
    if not p.is_file():
        return False
    try:
        return json.loads(p.read_text()).get("format") == FORMAT_NAME
    except (OSError, ValueError, AttributeError, RecursionError):
        return False


def worker_tag(i: int, n: int) -> str:
    """The shard-name prefix of worker ``i`` of ``n``."""
    return f"w{int(i)}of{int(n)}"


def shard_name(tag: str, chunk: int, digest: str) -> str:
    """The committed file name of a shard."""
    return f"{tag}-c{int(chunk):06d}-{digest}.parquet"


def digest_bytes(data: bytes) -> str:
    """First 16 hex digits of the SHA-256 of ``data`` (the digest in a shard's name)."""
    return hashlib.sha256(data).hexdigest()[:16]


def read_manifest(path) -> dict:
    """The manifest of the store at ``path``, checked for format and version."""
    path = Path(path)
    mpath = path / MANIFEST
    if not path.is_dir():
        raise ValueError(f"rollout store {str(path)!r} is not a directory")
    if not mpath.is_file():
        raise ValueError(f"{str(path)!r} is not a rollout store: it has no {MANIFEST}")
    try:
        manifest = json.loads(mpath.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{str(mpath)!r} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{str(mpath)!r} nests JSON too deeply to read; it is damaged") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        fmt = manifest.get("format") if isinstance(manifest, dict) else None
        raise ValueError(f"{str(mpath)!r} is not a rollout-store manifest (format={fmt!r})")
    version = manifest.get("version")
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"{str(mpath)!r}: version must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise ValueError(f"rollout store {str(path)!r} has format version {version}; this library reads up to {FORMAT_VERSION}")
    ident = manifest.get("identity")
    try:
        names = [p["name"] for p in ident["policies"]]
        k = int(ident["sampling"]["k"])
        g = int(ident["layout"]["prompts_per_chunk"])
        int(ident["prompts"]["n"])
        str(ident["prompts"]["sha256"])
    except (TypeError, KeyError, ValueError):
        raise ValueError(f"{str(mpath)!r} lacks identity.policies, sampling.k, layout or prompts entries") from None
    if not names or len(set(names)) != len(names) or k < 1 or g < 1:
        raise ValueError(f"{str(mpath)!r} has an invalid policy list, k or layout")
    return manifest


def read_prompts(path, manifest: dict) -> list[dict]:
    """The store's prompt records, checked against the manifest's hash and count."""
    ppath = Path(path) / PROMPTS
    if not ppath.is_file():
        raise ValueError(f"rollout store {str(path)!r} has no {PROMPTS}")
    data = ppath.read_bytes()
    want = manifest["identity"]["prompts"]["sha256"]
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        raise ValueError(f"{str(ppath)!r} is damaged: its SHA-256 {got[:16]}... differs from the manifest's {want[:16]}...")
    try:
        records = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    except RecursionError:
        raise ValueError(f"{str(ppath)!r} nests JSON too deeply to read; it is damaged") from None
    if len(records) != int(manifest["identity"]["prompts"]["n"]):
        raise ValueError(f"{str(ppath)!r} holds {len(records)} prompts, the manifest says {manifest['identity']['prompts']['n']}")
    return records


def chunk_layout(manifest: dict, prompt_ids: Sequence[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Chunk c -> (policy, prompt ids): policy ``c % M`` on prompt group ``c // M``."""
    names = [p["name"] for p in manifest["identity"]["policies"]]
    g = int(manifest["identity"]["layout"]["prompts_per_chunk"])
    groups = [tuple(prompt_ids[s : s + g]) for s in range(0, len(prompt_ids), g)]
    return tuple((name, grp) for grp in groups for name in names)


def list_shards(path) -> tuple[list[ShardFile], list[str]]:
    """Committed shards (sorted by name) and leftover temporary files of ``path/shards``.

    Any other file there is refused: a store holds nothing its reader cannot account for.
    """
    sdir = Path(path) / SHARDS
    if not sdir.is_dir():
        return [], []
    shards, temps = [], []
    for f in sorted(sdir.iterdir()):
        if f.name.startswith(TEMP_PREFIX):
            temps.append(f.name)
            continue
        m = _SHARD.match(f.name)
        if m is None or not f.is_file():
            raise ValueError(
                f"unexpected file {str(f)!r} in the store's shards folder; shards are named "
                "wIofN-cCCCCCC-<16 hex digits>.parquet (remove or move the file)"
            )
        shards.append(ShardFile(f, m.group("worker"), int(m.group("chunk")), m.group("digest")))
    return shards, temps


def read_shard(shard: ShardFile, manifest: dict, layout) -> pd.DataFrame:
    """Read one shard and check it: content digest, parquet structure, schema, and that its rows
    are exactly the chunk's keys (every prompt of the chunk, the chunk's policy, samples 0..k-1)."""
    name = shard.path.name
    hint = "delete it and rerun the same command to regenerate its chunk"
    try:
        data = shard.path.read_bytes()
    except OSError as exc:
        raise ValueError(f"shard {name!r} cannot be read: {exc}") from None
    got = digest_bytes(data)
    if got != shard.digest:
        raise ValueError(
            f"shard {name!r} is corrupt or truncated: its content hash {got} does not match the {shard.digest} "
            f"in its name ({len(data)} bytes); {hint}"
        )
    import io

    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise ValueError(f"shard {name!r} is not a readable parquet file ({exc}); {hint}") from None
    cols = table.column_names
    if tuple(cols) != COLUMNS:
        raise ValueError(f"shard {name!r} has columns {cols}, expected {list(COLUMNS)}; {hint}")
    for (col, typ), field in zip(SCHEMA, table.schema, strict=True):
        if str(field.type) not in (typ, "large_string" if typ == "string" else typ):
            raise ValueError(f"shard {name!r}: column {col!r} has type {field.type}, expected {typ}; {hint}")
    df = table.to_pandas()
    if shard.chunk >= len(layout):
        raise ValueError(f"shard {name!r} names chunk {shard.chunk}, but the store has only {len(layout)} chunks; {hint}")
    policy, pids = layout[shard.chunk]
    k = int(manifest["identity"]["sampling"]["k"])
    want = pd.MultiIndex.from_product([list(pids), [policy], range(k)], names=list(KEY))
    have = pd.MultiIndex.from_arrays(
        [df["prompt_id"].astype(str), df["policy"].astype(str), df["sample"].astype(int)], names=list(KEY)
    )
    if len(df) != len(want) or have.has_duplicates or not have.sort_values().equals(want.sort_values()):
        raise ValueError(
            f"shard {name!r} does not hold exactly chunk {shard.chunk}'s keys "
            f"({policy!r} on {len(pids)} prompts x k={k} samples, {len(want)} rows; found {len(df)}); {hint}"
        )
    return df


def read_store(path) -> StoreData:
    """Read and check every committed shard of a store.

    Raises ``ValueError`` naming the shard for a corrupt or truncated shard, or one whose rows
    do not match its chunk, and naming the file for anything unexpected. Missing chunks and
    chunks claimed by several shards are returned, not raised (``Pool.from_store`` refuses
    them; ``status`` reports them).
    """
    path = Path(path)
    manifest = read_manifest(path)
    prompts = read_prompts(path, manifest)
    layout = chunk_layout(manifest, [r["id"] for r in prompts])
    shards, temps = list_shards(path)
    by_chunk: dict[int, list[ShardFile]] = {}
    for s in shards:
        by_chunk.setdefault(s.chunk, []).append(s)
    frames = []
    used = []
    for c in sorted(by_chunk):
        group = by_chunk[c]
        for s in group:  # check every copy, use the first
            df = read_shard(s, manifest, layout)
            if s is group[0]:
                frames.append(df)
                used.append(s)
    duplicates = {c: [s.path.name for s in g] for c, g in by_chunk.items() if len(g) > 1}
    missing = tuple(c for c in range(len(layout)) if c not in by_chunk)
    if frames:
        responses = pd.concat(frames, ignore_index=True)
    else:
        responses = pd.DataFrame({c: pd.Series(dtype=_pandas_dtype(t)) for c, t in SCHEMA})
    return StoreData(path, manifest, prompts, responses, tuple(shards), layout, missing, duplicates, tuple(temps))


def _pandas_dtype(t: str):
    return {"string": object, "int32": np.int32, "int64": np.int64, "bool": bool, "double": float}[t]
