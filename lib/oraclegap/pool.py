"""The ``Pool``: stored correctness outcomes of several policies on the same prompts.

A pool holds ``verdicts[i, m, j]``: whether the j-th sampled response of policy m to prompt i
was judged correct (n prompts x M policies x k draws). Everything else in the library reads
pools or plain arrays derived from them (success counts ``c[i, m] = sum_j verdicts[i, m, j]``).

Alongside the verdicts a pool carries a prompt table (``id``, ``text``, ``dataset``, ``split``
and any feature columns), a policy table (``name``, ``base``, ``dataset``, ``recipe``,
``seed``, ``size``, ``cost`` and any other columns), optional per-response ``answers``,
per-prompt ``embeddings`` and per-prompt-and-policy ``cost``, and ``alignment``: how the draw
index lines up across policies.

* ``"seed-aligned"`` -- draw j of every policy used the same sampling seed (paper 001's
  protocol); the seed-aligned single-draw oracle estimator applies.
* ``"independent"`` -- draws are independent across policies (or were arranged at random,
  as ``from_counts`` does); only the independence forms apply.
* ``"unknown"`` -- nothing is claimed.

On disk a pool is a directory: ``arrays.npz`` (numeric and fixed-width string arrays only,
read with ``allow_pickle=False``), ``prompts.parquet``, ``policies.parquet`` and
``manifest.json`` (format name, version, shapes, alignment, provenance). Writes are atomic.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._validate import as_bool_array, as_counts_array, as_rng, check_int

__all__ = ["Pool", "ALIGNMENTS", "FORMAT_NAME", "FORMAT_VERSION", "PROMPT_COLUMNS", "POLICY_COLUMNS"]

ALIGNMENTS = ("seed-aligned", "independent", "unknown")
FORMAT_NAME = "oraclegap.pool"
FORMAT_VERSION = 1
PROMPT_COLUMNS = ("id", "text", "dataset", "split")
POLICY_COLUMNS = ("name", "base", "dataset", "recipe", "seed", "size", "cost")


def _table(table, n: int, key: str, standard: Sequence[str], what: str, arg: str, default_ids) -> pd.DataFrame:
    """Normalise a prompt or policy table: ``key`` column of unique strings, standard columns present."""
    if table is None:
        df = pd.DataFrame({key: default_ids})
    elif isinstance(table, pd.DataFrame):
        df = table.reset_index(drop=True).copy()
    elif isinstance(table, Mapping):
        df = pd.DataFrame(dict(table))
    else:
        # a plain list of ids / names
        vals = list(table)
        df = pd.DataFrame({key: vals})
    if len(df) != n:
        raise ValueError(f"{arg} has {len(df)} rows but the verdicts have {n} {what}")
    if key not in df.columns:
        df.insert(0, key, default_ids)
    ids = df[key]
    if ids.isna().any():
        raise ValueError(f"{arg}['{key}'] has missing values; every {what[:-1]} needs an id")
    ids = ids.astype(str)
    dup = ids[ids.duplicated()].unique()
    if len(dup):
        raise ValueError(f"{arg}['{key}'] must be unique; duplicated: {list(dup[:5])}")
    df[key] = ids.to_numpy(dtype=object)
    for col in standard:
        if col not in df.columns:
            df[col] = None
    ordered = list(standard) + [c for c in df.columns if c not in standard]
    return df[ordered].reset_index(drop=True)


@dataclasses.dataclass(frozen=True, eq=False)
class Pool:
    """Correctness outcomes ``verdicts`` bool[n_prompts, n_policies, k] with their labels.

    Build one with :meth:`from_array`, :meth:`from_counts`, :meth:`from_long` or
    :meth:`from_wide`, or read one with :meth:`load`. Validation happens on construction and
    names the offending argument.
    """

    verdicts: np.ndarray
    prompts: pd.DataFrame | None = None
    policies: pd.DataFrame | None = None
    answers: np.ndarray | None = None
    embeddings: np.ndarray | None = None
    cost: np.ndarray | None = None
    alignment: str = "unknown"
    meta: dict = dataclasses.field(default_factory=dict)

    # ------------------------------------------------------------------ validation
    def __post_init__(self):
        v = as_bool_array(self.verdicts, "verdicts")
        if v.ndim != 3:
            raise ValueError(
                f"verdicts must have rank 3 [n_prompts, n_policies, k], got rank {v.ndim} (shape {v.shape}); "
                "for one draw per cell use Pool.from_wide or add a trailing axis of length 1"
            )
        n, M, k = v.shape
        for size, axis in ((n, "n_prompts"), (M, "n_policies"), (k, "k (draws per cell)")):
            if size == 0:
                raise ValueError(f"verdicts has a zero-size axis: {axis} is 0 (shape {v.shape})")
        v = np.ascontiguousarray(v)
        v.setflags(write=False)
        object.__setattr__(self, "verdicts", v)
        object.__setattr__(
            self, "prompts", _table(self.prompts, n, "id", PROMPT_COLUMNS, "prompts", "prompts", [f"p{i}" for i in range(n)])
        )
        object.__setattr__(
            self,
            "policies",
            _table(self.policies, M, "name", POLICY_COLUMNS, "policies", "policies", [f"m{j}" for j in range(M)]),
        )
        if self.alignment not in ALIGNMENTS:
            raise ValueError(f"alignment must be one of {ALIGNMENTS}, got {self.alignment!r}")
        if self.answers is not None:
            a = np.asarray(self.answers)
            if a.shape != v.shape:
                raise ValueError(f"answers must have the verdicts' shape {v.shape}, got {a.shape}")
            if a.dtype.kind not in "UO":
                raise ValueError(f"answers must hold strings, got dtype {a.dtype}")
            a = np.where(pd.isna(a), "", a).astype(str)
            object.__setattr__(self, "answers", a)
        if self.embeddings is not None:
            e = np.asarray(self.embeddings, dtype=float)
            if e.ndim != 2 or e.shape[0] != n:
                raise ValueError(f"embeddings must have shape [n_prompts={n}, d], got {e.shape}")
            if not np.isfinite(e).all():
                raise ValueError("embeddings contain NaN or infinite values")
            object.__setattr__(self, "embeddings", e)
        if self.cost is not None:
            c = np.asarray(self.cost, dtype=float)
            if c.shape != (n, M):
                raise ValueError(f"cost must have shape [n_prompts={n}, n_policies={M}], got {c.shape}")
            if not np.isfinite(c).all() or (c < 0).any():
                raise ValueError("cost must be finite and non-negative")
            object.__setattr__(self, "cost", c)
        if not isinstance(self.meta, dict):
            raise TypeError(f"meta must be a dict, got {type(self.meta).__name__}")

    # ------------------------------------------------------------------ shape
    @property
    def shape(self) -> tuple[int, int, int]:
        return self.verdicts.shape  # type: ignore[return-value]

    @property
    def n_prompts(self) -> int:
        return self.verdicts.shape[0]

    @property
    def n_policies(self) -> int:
        return self.verdicts.shape[1]

    @property
    def k(self) -> int:
        return self.verdicts.shape[2]

    @property
    def prompt_ids(self) -> list[str]:
        return self.prompts["id"].tolist()

    @property
    def policy_names(self) -> list[str]:
        return self.policies["name"].tolist()

    @property
    def splits(self) -> list[str]:
        """Split names present in the prompt table (empty when none is set)."""
        s = self.prompts["split"]
        return sorted(s.dropna().astype(str).unique().tolist())

    def counts(self) -> np.ndarray:
        """Success counts ``c[i, m] = sum_j verdicts[i, m, j]`` as int64 [n, M]."""
        return self.verdicts.sum(axis=2, dtype=np.int64)

    def rates(self) -> np.ndarray:
        """Raw per-cell success frequencies ``c[i, m] / k``."""
        return self.counts() / self.k

    def __repr__(self) -> str:
        n, M, k = self.shape
        extra = [name for name in ("answers", "embeddings", "cost") if getattr(self, name) is not None]
        sp = f", splits={self.splits}" if self.splits else ""
        return (
            f"Pool(n_prompts={n}, n_policies={M}, k={k}, alignment={self.alignment!r}{sp}"
            + (f", with {'+'.join(extra)}" if extra else "")
            + f", policies={self.policy_names[:6]}{'...' if M > 6 else ''})"
        )

    # ------------------------------------------------------------------ subsetting
    def _index(self, sel, ids: list[str], arg: str) -> np.ndarray:
        size = len(ids)
        if sel is None:
            return np.arange(size)
        if isinstance(sel, (str, int, np.integer)):
            sel = [sel]
        arr = np.asarray(list(sel) if not isinstance(sel, np.ndarray) else sel)
        if arr.dtype == bool:
            if arr.shape != (size,):
                raise ValueError(f"{arg} as a boolean mask must have length {size}, got shape {arr.shape}")
            idx = np.flatnonzero(arr)
        elif arr.size == 0:
            idx = np.array([], dtype=int)
        elif np.issubdtype(arr.dtype, np.integer):
            idx = arr.astype(int)
            if (idx < -size).any() or (idx >= size).any():
                raise ValueError(f"{arg} holds positions outside [0, {size})")
            idx = idx % size
        else:
            lookup = {v: i for i, v in enumerate(ids)}
            missing = [str(x) for x in arr if str(x) not in lookup]
            if missing:
                raise ValueError(f"{arg} names unknown entries: {missing[:5]}")
            idx = np.array([lookup[str(x)] for x in arr], dtype=int)
        if idx.size == 0:
            raise ValueError(f"{arg} selects nothing; a pool needs at least one entry on each axis")
        if len(np.unique(idx)) != len(idx):
            raise ValueError(f"{arg} selects some entries twice")
        return idx

    def select(self, prompts=None, policies=None) -> Pool:
        """A sub-pool. ``prompts``/``policies``: boolean masks, integer positions, or ids/names."""
        pi = self._index(prompts, self.prompt_ids, "prompts")
        mi = self._index(policies, self.policy_names, "policies")
        return Pool(
            verdicts=self.verdicts[np.ix_(pi, mi)],
            prompts=self.prompts.iloc[pi].reset_index(drop=True),
            policies=self.policies.iloc[mi].reset_index(drop=True),
            answers=None if self.answers is None else self.answers[np.ix_(pi, mi)],
            embeddings=None if self.embeddings is None else self.embeddings[pi],
            cost=None if self.cost is None else self.cost[np.ix_(pi, mi)],
            alignment=self.alignment,
            meta=dict(self.meta),
        )

    def split(self, name: str) -> Pool:
        """The prompts whose ``split`` column equals ``name``."""
        available = self.splits
        if name not in available:
            raise ValueError(f"unknown split {name!r}; this pool has splits {available or '(none set)'}")
        return self.select(prompts=(self.prompts["split"].astype(str) == name).to_numpy())

    def draws(self, idx) -> Pool:
        """A pool restricted to some draw positions (e.g. the first half of each cell's responses)."""
        idx = np.atleast_1d(np.asarray(idx))
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= self.k or len(np.unique(idx)) != idx.size:
            raise ValueError(f"idx must be distinct draw positions in [0, k={self.k})")
        return dataclasses.replace(
            self,
            verdicts=self.verdicts[:, :, idx],
            answers=None if self.answers is None else self.answers[:, :, idx],
        )

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_array(
        cls,
        verdicts,
        prompts=None,
        policies=None,
        *,
        alignment: str = "unknown",
        answers=None,
        embeddings=None,
        cost=None,
        meta: dict | None = None,
    ) -> Pool:
        """From a 0/1 array [n, M, k] (a 2-d array [n, M] is read as k = 1)."""
        v = np.asarray(verdicts)
        if v.ndim == 2:
            v = v[:, :, None]
        return cls(v, prompts, policies, answers, embeddings, cost, alignment, dict(meta or {}))

    @classmethod
    def from_counts(cls, counts, k: int, seed=0, prompts=None, policies=None, *, cost=None, meta=None) -> Pool:
        """For releases that give only success counts ``counts[i, m]`` out of ``k`` draws.

        Each cell's ``c`` successes are placed at ``c`` draw positions chosen uniformly at
        random (independently across cells, from ``seed``), so the draw index carries no
        alignment: the pool is marked ``"independent"``. Every count-based statistic is
        unaffected by the arrangement.
        """
        k = check_int(k, "k", minimum=1)
        c = as_counts_array(counts, k, "counts", ndim=2)
        rng = as_rng(seed)
        n, M = c.shape
        if n == 0 or M == 0:
            raise ValueError(f"counts has a zero-size axis (shape {c.shape})")
        # rank of a uniform key within each cell: the first c ranks are successes
        keys = rng.random((n, M, k))
        ranks = keys.argsort(axis=2).argsort(axis=2)
        v = ranks < c[:, :, None]
        m = {"arranged_from_counts": True, "arrangement_seed": seed if isinstance(seed, int) else None}
        m.update(meta or {})
        return cls(v, prompts, policies, None, None, cost, "independent", m)

    @classmethod
    def from_long(
        cls,
        df: pd.DataFrame,
        *,
        prompt: str = "prompt_id",
        policy: str = "policy",
        correct: str = "correct",
        draw: str | None = "draw",
        answer: str | None = None,
        prompt_columns: Iterable[str] = (),
        policy_columns: Iterable[str] = (),
        alignment: str = "unknown",
        meta: dict | None = None,
    ) -> Pool:
        """From a long table, one row per response.

        Every (prompt, policy) cell must have the same number of responses k. With a ``draw``
        column the draw positions are its sorted values within each cell (the same set in every
        cell); without one (``draw=None`` or column absent) rows keep their order of appearance.
        ``prompt_columns``/``policy_columns`` are carried into the prompt and policy tables
        (each must be constant within a prompt / policy).
        """
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
        for col, arg in ((prompt, "prompt"), (policy, "policy"), (correct, "correct")):
            if col not in df.columns:
                raise ValueError(f"{arg} column {col!r} is not in df (columns: {list(df.columns)[:10]})")
        if len(df) == 0:
            raise ValueError("df is empty; a pool needs at least one response")
        d = df.copy()
        d["_p"] = d[prompt].astype(str)
        d["_m"] = d[policy].astype(str)
        p_ids = pd.unique(d["_p"])
        m_ids = pd.unique(d["_m"])
        p_pos = pd.Index(p_ids).get_indexer(d["_p"])
        m_pos = pd.Index(m_ids).get_indexer(d["_m"])
        sizes = d.groupby(["_p", "_m"], sort=False).size()
        if len(sizes) != len(p_ids) * len(m_ids):
            raise ValueError(
                f"every policy must answer every prompt: found {len(sizes)} (prompt, policy) cells, "
                f"expected {len(p_ids)} x {len(m_ids)}"
            )
        if sizes.nunique() != 1:
            raise ValueError(
                f"every (prompt, policy) cell needs the same number of responses k; found sizes {sorted(sizes.unique())[:5]}"
            )
        k = int(sizes.iloc[0])
        if draw is not None and draw in d.columns:
            dvals = pd.unique(d[draw])
            dvals = np.sort(dvals)
            if len(dvals) != k:
                raise ValueError(f"draw column {draw!r} must take the same {k} values in every cell; found {len(dvals)} values")
            j_pos = pd.Index(dvals).get_indexer(d[draw])
            dup = pd.DataFrame({"p": p_pos, "m": m_pos, "j": j_pos}).duplicated()
            if dup.any():
                raise ValueError(f"draw column {draw!r} repeats a draw within a (prompt, policy) cell")
        else:
            j_pos = d.groupby(["_p", "_m"], sort=False).cumcount().to_numpy()
        corr = as_bool_array(d[correct].to_numpy(), f"df[{correct!r}]", ndim=1)
        v = np.zeros((len(p_ids), len(m_ids), k), dtype=bool)
        v[p_pos, m_pos, j_pos] = corr
        ans = None
        if answer is not None:
            if answer not in d.columns:
                raise ValueError(f"answer column {answer!r} is not in df")
            ans = np.full(v.shape, "", dtype=object)
            ans[p_pos, m_pos, j_pos] = d[answer].fillna("").astype(str).to_numpy()
        ptab = _constant_columns(d, "_p", "id", p_ids, prompt_columns, "prompt")
        mtab = _constant_columns(d, "_m", "name", m_ids, policy_columns, "policy")
        return cls(v, ptab, mtab, ans, None, None, alignment, dict(meta or {}))

    @classmethod
    def from_wide(
        cls,
        df: pd.DataFrame,
        *,
        id_column: str | None = None,
        models: Sequence[str] | None = None,
        prompt_columns: Iterable[str] = (),
        meta: dict | None = None,
    ) -> Pool:
        """From an items x models table of 0/1 outcomes (one draw per cell, k = 1).

        ``models`` names the outcome columns (default: every column except ``id_column`` and
        ``prompt_columns``); ``id_column`` gives prompt ids (default: the index).
        """
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
        if len(df) == 0:
            raise ValueError("df has no rows; a pool needs at least one item")
        prompt_columns = list(prompt_columns)
        if id_column is not None and id_column not in df.columns:
            raise ValueError(f"id_column {id_column!r} is not in df")
        for col in prompt_columns:
            if col not in df.columns:
                raise ValueError(f"prompt column {col!r} is not in df")
        if models is None:
            models = [c for c in df.columns if c != id_column and c not in prompt_columns]
        models = list(models)
        if not models:
            raise ValueError("no model columns: pass models= or a df with outcome columns")
        missing = [m for m in models if m not in df.columns]
        if missing:
            raise ValueError(f"models names columns not in df: {missing[:5]}")
        v = as_bool_array(df[models].to_numpy(), "df[models]", ndim=2)
        ids = df[id_column].astype(str).to_numpy() if id_column else df.index.astype(str).to_numpy()
        ptab = pd.DataFrame({"id": ids})
        for col in prompt_columns:
            ptab[col] = df[col].to_numpy()
        return cls(v[:, :, None], ptab, pd.DataFrame({"name": [str(m) for m in models]}), None, None, None, "unknown", dict(meta or {}))

    # ======================================================== from_store (rollout stores, issue 12)
    # One self-contained block: reads a store written by oraclegap.rollouts through the
    # ground-floor helper oraclegap._store (schema, shard checks, completeness).
    @classmethod
    def from_store(cls, path) -> Pool:
        """The pool in a rollout store written by :func:`oraclegap.rollouts.generate`.

        ``verdicts[i, m, j]`` is the stored verdict of response j of policy m to prompt i
        (prompts in prompt-file order, policies in manifest order); ``answers`` holds the
        parsed answers ("" where none could be parsed, which counts as wrong). Every
        (prompt, policy, sample) key must be present exactly once: a store with missing or
        doubled chunks is refused with the missing cells (or the doubled shards) named. The
        alignment is ``"seed-aligned"`` when draw j of prompt i used the same sampling seed
        under every policy, else ``"independent"``. ``meta`` carries the sampling settings and,
        as nested lists [n][M][k], the per-response ``confidence`` (mean token log-probability;
        None for an empty completion), ``completion_tokens`` and ``seeds``, plus per-policy counts of
        parse failures and of responses cut at ``max_tokens``.
        """
        from . import _store

        data = _store.read_store(path)
        where = f"rollout store {str(path)!r}"
        if data.duplicates:
            first = sorted(data.duplicates.items())[:3]
            raise ValueError(
                f"{where} has chunks written more than once ({len(data.duplicates)}), e.g. "
                + "; ".join(f"chunk {c}: {names}" for c, names in first)
                + " -- overlapping workers ran; delete all but one shard of each such chunk"
            )
        names = data.policy_names
        ids = [r["id"] for r in data.prompts]
        n, M, k = len(ids), len(names), data.k
        if data.missing_chunks:
            cells = data.missing_cells()
            per = pd.Series([m for _, m in cells]).value_counts().reindex(names, fill_value=0)
            raise ValueError(
                f"{where} is incomplete: {len(cells)} of {n * M} (prompt, policy) cells are missing, e.g. "
                f"{cells[:5]}; missing per policy: {per.to_dict()}; rerun the same command to fill them"
            )
        df = data.responses
        pi = pd.Index(ids).get_indexer(df["prompt_id"].astype(str))
        mi = pd.Index(names).get_indexer(df["policy"].astype(str))
        ji = df["sample"].to_numpy(dtype=np.int64)
        verdicts = np.zeros((n, M, k), dtype=bool)
        verdicts[pi, mi, ji] = df["correct"].to_numpy(dtype=bool)
        answers = np.full((n, M, k), "", dtype=object)
        answers[pi, mi, ji] = df["answer"].fillna("").astype(str).to_numpy()
        conf = np.full((n, M, k), np.nan)
        conf[pi, mi, ji] = df["mean_logprob"].to_numpy(dtype=float)
        toks = np.zeros((n, M, k), dtype=np.int64)
        toks[pi, mi, ji] = df["completion_tokens"].to_numpy(dtype=np.int64)
        seeds = np.zeros((n, M, k), dtype=np.int64)
        seeds[pi, mi, ji] = df["seed"].to_numpy(dtype=np.int64)
        alignment = "seed-aligned" if bool((seeds == seeds[:, :1, :]).all()) else "independent"
        ptab = pd.DataFrame(
            {
                "id": ids,
                "text": [r["prompt"] for r in data.prompts],
                "dataset": [r.get("dataset") for r in data.prompts],
                "split": [r.get("split") for r in data.prompts],
                "answer": [r["answer"] for r in data.prompts],
            }
        )
        for col in sorted({c for r in data.prompts for c in r} - set(ptab.columns) - {"prompt"}):
            ptab[col] = [r.get(col) for r in data.prompts]
        ident = data.identity
        mtab = pd.DataFrame(
            {
                "name": names,
                "base": ident["model"].get("name"),
                "recipe": ["lora adapter" if p.get("adapter_sha256") else "base model" for p in ident["policies"]],
                "adapter_sha256": [p.get("adapter_sha256") for p in ident["policies"]],
            }
        )
        per_policy = lambda mask: {m: int(mask[:, j].sum()) for j, m in enumerate(names)}  # noqa: E731
        parse_fail = np.zeros((n, M, k), dtype=bool)
        parse_fail[pi, mi, ji] = ~df["parsed"].to_numpy(dtype=bool)
        cut = np.zeros((n, M, k), dtype=bool)
        cut[pi, mi, ji] = (df["finish_reason"].astype(str) == "length").to_numpy()
        meta = {
            "source": "rollout store",
            "store": str(path),
            "task": ident["task"]["name"],
            "sampling": dict(ident["sampling"]),
            "backend": dict(ident["backend"]),
            "model_sha256": ident["model"].get("sha256"),
            "confidence": np.where(np.isnan(conf), None, conf).tolist(),
            "confidence_definition": "mean log-probability of the generated tokens under the model (temperature 1, no top-p)",
            "completion_tokens": toks.tolist(),
            "seeds": seeds.tolist(),
            "parse_failures": per_policy(parse_fail.sum(axis=2)),
            "cut_at_max_tokens": per_policy(cut.sum(axis=2)),
        }
        return cls(verdicts, ptab, mtab, answers.astype(str), None, None, alignment, meta)

    # ======================================================== end of from_store block (issue 12)

    # ------------------------------------------------------------------ persistence
    def save(self, path, overwrite: bool = False) -> Path:
        """Write the pool as a directory (atomic: written beside, then moved into place)."""
        path = Path(path)
        if path.exists() and not overwrite:
            raise ValueError(f"path {str(path)!r} exists; pass overwrite=True to replace it")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
        try:
            arrays: dict[str, np.ndarray] = {"verdicts": np.packbits(self.verdicts, axis=2)}
            if self.answers is not None:
                arrays["answers"] = self.answers.astype(str)
            if self.embeddings is not None:
                arrays["embeddings"] = self.embeddings
            if self.cost is not None:
                arrays["cost"] = self.cost
            np.savez_compressed(tmp / "arrays.npz", **arrays)
            _to_parquet(self.prompts, tmp / "prompts.parquet")
            _to_parquet(self.policies, tmp / "policies.parquet")
            manifest = {
                "format": FORMAT_NAME,
                "version": FORMAT_VERSION,
                "shape": list(self.shape),
                "alignment": self.alignment,
                "arrays": sorted(arrays),
                "verdicts_packed": "numpy.packbits along the draw axis",
                "meta": _jsonable(self.meta),
            }
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
            if path.exists():
                old = path.with_name(f".{path.name}.old")
                if old.exists():
                    shutil.rmtree(old)
                os.replace(path, old)
                os.replace(tmp, path)
                shutil.rmtree(old)
            else:
                os.replace(tmp, path)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return path

    @classmethod
    def load(cls, path) -> Pool:
        """Read a pool directory written by :meth:`save`, checking every file."""
        path = Path(path)
        if not path.is_dir():
            raise ValueError(f"pool path {str(path)!r} is not a directory")
        mpath = path / "manifest.json"
        if not mpath.is_file():
            raise ValueError(f"pool directory {str(path)!r} has no manifest.json")
        try:
            manifest = json.loads(mpath.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"manifest.json in {str(path)!r} is not valid JSON: {exc}") from None
        if manifest.get("format") != FORMAT_NAME:
            raise ValueError(f"{str(mpath)!r} is not an oraclegap pool manifest (format={manifest.get('format')!r})")
        version = manifest.get("version")
        if not isinstance(version, int) or version < 1:
            raise ValueError(f"manifest version must be a positive integer, got {version!r}")
        if version > FORMAT_VERSION:
            raise ValueError(
                f"pool format version {version} is newer than this library supports ({FORMAT_VERSION}); upgrade oraclegap"
            )
        for name in ("arrays.npz", "prompts.parquet", "policies.parquet"):
            if not (path / name).is_file():
                raise ValueError(f"pool directory {str(path)!r} is missing {name}")
        try:
            with np.load(path / "arrays.npz", allow_pickle=False) as z:
                arrays = {key: z[key] for key in z.files}
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
            raise ValueError(f"arrays.npz in {str(path)!r} is corrupt or unreadable: {exc}") from None
        if "verdicts" not in arrays:
            raise ValueError(f"arrays.npz in {str(path)!r} has no 'verdicts' array")
        shape = manifest.get("shape")
        if not (isinstance(shape, list) and len(shape) == 3):
            raise ValueError(f"manifest shape must be [n, M, k], got {shape!r}")
        n, M, k = shape
        packed = arrays["verdicts"]
        if packed.dtype != np.uint8 or packed.shape[:2] != (n, M):
            raise ValueError(f"arrays.npz 'verdicts' does not match the manifest shape {shape}")
        verdicts = np.unpackbits(packed, axis=2, count=k).astype(bool)
        try:
            prompts = pd.read_parquet(path / "prompts.parquet")
            policies = pd.read_parquet(path / "policies.parquet")
        except Exception as exc:  # pyarrow raises several types for damaged files
            raise ValueError(f"a parquet table in {str(path)!r} is corrupt or unreadable: {exc}") from None
        return cls(
            verdicts,
            prompts,
            policies,
            arrays.get("answers"),
            arrays.get("embeddings"),
            arrays.get("cost"),
            manifest.get("alignment", "unknown"),
            dict(manifest.get("meta") or {}),
        )


def _constant_columns(d: pd.DataFrame, key: str, name: str, ids, columns, what: str) -> pd.DataFrame:
    """A table of ``ids`` with ``columns`` taken from long rows; each must be constant per id."""
    tab = pd.DataFrame({name: ids})
    for col in columns:
        if col not in d.columns:
            raise ValueError(f"{what} column {col!r} is not in df")
        if (d.groupby(key, sort=False)[col].nunique(dropna=False) > 1).any():
            raise ValueError(f"{what} column {col!r} varies within a {what}")
        tab[col] = d.drop_duplicates(key).set_index(key).loc[ids, col].to_numpy()
    return tab


def _to_parquet(df: pd.DataFrame, path: Path) -> None:
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
    out.to_parquet(path, index=False)


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
