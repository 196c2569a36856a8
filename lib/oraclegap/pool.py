"""The ``Pool``: stored correctness outcomes of several policies on the same prompts.

A pool holds ``verdicts[i, m, j]``: whether the j-th sampled response of policy m to prompt i
was judged correct (n prompts x M policies x k draws). Everything else in the library reads
pools or plain arrays derived from them (success counts ``c[i, m] = sum_j verdicts[i, m, j]``).

Alongside the verdicts a pool carries a prompt table (``id``, ``text``, ``dataset``, ``split``
and any feature columns), a policy table (``name``, ``base``, ``dataset``, ``recipe``,
``seed``, ``size``, ``cost`` and any other columns), optional per-response ``answers``,
per-response numeric arrays ``per_response`` (name -> array [n, M, k], e.g. ``confidence``:
the mean token log-probability of each response, ``completion_tokens``, ``seed``), per-prompt
``embeddings`` and per-prompt-and-policy ``cost``, and ``alignment``: how the draw index lines
up across policies. Every per-response, per-prompt and per-cell array is cut with the pool by
:meth:`Pool.select`, :meth:`Pool.split` and :meth:`Pool.draws`, so it always lines up with the
verdicts (never keep such data in ``meta``, which is copied as it is).

* ``"seed-aligned"`` -- draw j of every policy used the same sampling seed (paper 001's
  protocol); the seed-aligned single-draw oracle estimator applies.
* ``"independent"`` -- draws are independent across policies (or were arranged at random,
  as ``from_counts`` does); only the independence forms apply.
* ``"unknown"`` -- nothing is claimed.

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
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import os
import re
import secrets
import shutil
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._io import fsync_dir as _fsync_dir
from ._io import fsync_file as _fsync_file
from ._io import pid_alive
from ._validate import as_bool_array, as_bool_columns, as_counts_array, as_rng, check_int, check_tau, read_npz

__all__ = ["Pool", "need", "ALIGNMENTS", "FORMAT_NAME", "FORMAT_VERSION", "PROMPT_COLUMNS", "POLICY_COLUMNS"]

ALIGNMENTS = ("seed-aligned", "independent", "unknown")
FORMAT_NAME = "oraclegap.pool"
FORMAT_VERSION = 2
#: The files :meth:`Pool.save` writes (and replaces on ``overwrite=True``); any other file in a pool
#: directory is someone else's and is kept.
POOL_FILES = frozenset({"arrays.npz", "prompts.parquet", "policies.parquet", "answers.parquet", "manifest.json",
                        "manifest.json.part"})
PROMPT_COLUMNS = ("id", "text", "dataset", "split")
POLICY_COLUMNS = ("name", "base", "dataset", "recipe", "seed", "size", "cost")
#: Tolerance of the success threshold: c successes out of k reach tau when c >= tau k - 1e-9.
_NEED_EPS = 1e-9


def need(tau, k):
    """Successes out of ``k`` that a raw frequency needs to reach ``tau``: max(1, ceil(tau*k - 1e-9)).

    Vectorised over ``tau`` (and ``k``). At k = 16: tau = 0.05 needs 1, tau = 0.10 needs 2.
    Every tau in (0, 1] needs at least one success: a covered prompt has c/k >= tau > 0.
    (Defined on the pool's floor for :meth:`Pool.outcomes`; :func:`oraclegap.stats.coverage.need`
    is this function.)
    """
    t = np.asarray(tau, dtype=float)
    if np.any(~((t > 0) & (t <= 1))):
        raise ValueError(f"tau must lie in (0, 1], got {tau!r}")
    kk = np.asarray(k)
    if not np.issubdtype(kk.dtype, np.integer) or np.any(kk < 1):
        raise ValueError(f"k must be a positive integer, got {k!r}")
    out = np.maximum(np.ceil(t * kk - _NEED_EPS), 1).astype(np.int64)
    return int(out) if out.ndim == 0 else out


#: The default tables already normalised (simulations build thousands of pools of a few shapes):
#: (key, standard columns, n) -> DataFrame, handed out as copies; the most recent few.
_DEFAULT_TABLES: collections.OrderedDict = collections.OrderedDict()
_DEFAULT_TABLES_SIZE = 16
_DEFAULT_TABLES_LOCK = threading.Lock()  # the audit's sections and the studies build pools on threads


def _table(table, n: int, key: str, standard: Sequence[str], what: str, arg: str, default_ids) -> pd.DataFrame:
    """Normalise a prompt or policy table: ``key`` column of unique strings, standard columns present.
    ``default_ids(n)`` gives the ids when the table has none (its tables are memoised by size)."""
    if table is None:
        memo = (key, tuple(standard), n)
        with _DEFAULT_TABLES_LOCK:
            hit = _DEFAULT_TABLES.get(memo)
            if hit is not None:
                _DEFAULT_TABLES.move_to_end(memo)
        if hit is None:  # built outside the lock; a race builds the same table twice
            hit = _table(pd.DataFrame({key: default_ids(n)}), n, key, standard, what, arg, default_ids)
            with _DEFAULT_TABLES_LOCK:
                _DEFAULT_TABLES[memo] = hit
                while len(_DEFAULT_TABLES) > _DEFAULT_TABLES_SIZE:
                    _DEFAULT_TABLES.popitem(last=False)
        return hit.copy()
    if isinstance(table, pd.DataFrame):
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
        df.insert(0, key, default_ids(n))
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


def _prompt_ids(n: int) -> list[str]:
    """The default prompt ids p0, p1, ..."""
    return [f"p{i}" for i in range(n)]


def _policy_names(M: int) -> list[str]:
    """The default policy names m0, m1, ..."""
    return [f"m{j}" for j in range(M)]


@dataclasses.dataclass(frozen=True, eq=False)
class Pool:
    """Correctness outcomes ``verdicts`` bool[n_prompts, n_policies, k] with their labels.

    Build one with :meth:`from_array`, :meth:`from_counts`, :meth:`from_long` or
    :meth:`from_wide`, or read one with :meth:`load`. Validation happens on construction and
    names the offending argument.
    """

    verdicts: np.ndarray
    # None gives the default tables; __post_init__ always leaves a DataFrame here
    prompts: pd.DataFrame = None
    policies: pd.DataFrame = None
    answers: np.ndarray | None = None
    embeddings: np.ndarray | None = None
    cost: np.ndarray | None = None
    alignment: str = "unknown"
    meta: dict = dataclasses.field(default_factory=dict)
    per_response: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)

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
            self, "prompts", _table(self.prompts, n, "id", PROMPT_COLUMNS, "prompts", "prompts", _prompt_ids)
        )
        object.__setattr__(
            self,
            "policies",
            _table(self.policies, M, "name", POLICY_COLUMNS, "policies", "policies", _policy_names),
        )
        if self.alignment not in ALIGNMENTS:
            raise ValueError(f"alignment must be one of {ALIGNMENTS}, got {self.alignment!r}")
        if self.answers is not None:
            a = np.asarray(self.answers)
            if a.shape != v.shape:
                raise ValueError(f"answers must have the verdicts' shape {v.shape}, got {a.shape}")
            if a.dtype.kind not in "UO":
                raise ValueError(f"answers must hold strings, got dtype {a.dtype}")
            object.__setattr__(self, "answers", _text_array(a))
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
        object.__setattr__(self, "per_response", _per_response(self.per_response, v.shape))

    # ------------------------------------------------------------------ shape
    @property
    def shape(self) -> tuple[int, int, int]:
        n, M, k = self.verdicts.shape
        return int(n), int(M), int(k)

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

    def outcomes(self, tau: float | None = None, draw: int | None = None) -> np.ndarray:
        """One 0/1 outcome per (prompt, policy), bool[n_prompts, n_policies].

        * ``tau=t``: success at threshold t over the k draws, O_im = 1[c_im >= need(t, k)] with
          need(t, k) = max(1, ceil(t k - 1e-9)) (:func:`need`): the raw frequency c_im / k reaches t.
          At k = 1 every t in (0, 1] gives the verdict itself.
        * ``draw=j``: draw j alone, O_im = verdicts[i, m, j] (a single-commit outcome; in a
          seed-aligned pool every policy's draw j shares a seed).
        * neither: the only draw of a k = 1 pool; a pool with k > 1 needs one of them.

        Passing both is an error. ``.astype(float)`` gives 0/1 floats.
        """
        if draw is not None and tau is not None:
            raise ValueError("pass draw or tau, not both")
        if tau is not None:
            t = check_tau(tau)
            return self.counts() >= need(t, self.k)
        if draw is not None:
            j = check_int(draw, "draw", minimum=0, maximum=self.k - 1)
            return self.verdicts[:, :, j].copy()
        if self.k != 1:
            raise ValueError(f"the pool has k={self.k} draws per cell; pass draw=j (0 <= j < {self.k}) or tau=t")
        return self.verdicts[:, :, 0].copy()

    def __repr__(self) -> str:
        n, M, k = self.shape
        extra = [name for name in ("answers", "embeddings", "cost") if getattr(self, name) is not None]
        extra += [f"per_response[{name}]" for name in self.per_response]
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
            per_response={name: a[np.ix_(pi, mi)] for name, a in self.per_response.items()},
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
            per_response={name: a[:, :, idx] for name, a in self.per_response.items()},
        )

    # ------------------------------------------------------------------ constructors
    @classmethod
    def concat(cls, pools: Sequence[Pool]) -> Pool:
        """The prompts of several pools stacked into one pool, in the order given.

        Every pool must hold the same policies (names, in the same order) with the same k, and no
        prompt id may appear in two of them. The result takes the first pool's policy table; its
        alignment is the common one (``"unknown"`` when they differ). Per-prompt and per-cell data
        (``answers``, ``embeddings``, ``cost`` and each ``per_response`` array) are stacked where
        every pool has them and dropped otherwise; ``meta["concat"]`` records the prompt counts.
        """
        if isinstance(pools, Pool) or not isinstance(pools, Iterable):
            raise TypeError(f"pools must be a sequence of Pool objects, got {type(pools).__name__}")
        ps = list(pools)
        if not ps:
            raise ValueError("pools is empty; Pool.concat needs at least one pool")
        for i, p in enumerate(ps):
            if not isinstance(p, Pool):
                raise TypeError(f"pools[{i}] must be an oraclegap Pool, got {type(p).__name__}")
        first = ps[0]
        for i, p in enumerate(ps[1:], start=1):
            if p.policy_names != first.policy_names:
                raise ValueError(f"pools[{i}] holds policies {p.policy_names}, pools[0] {first.policy_names}; "
                                 "Pool.concat stacks prompts of the same policies (use select(policies=...) first)")
            if p.k != first.k:
                raise ValueError(f"pools[{i}] has k={p.k} draws per cell, pools[0] has k={first.k}; "
                                 "Pool.concat needs the same k (use draws(...) first)")
        ids = pd.Series([i for p in ps for i in p.prompt_ids])
        dup = ids[ids.duplicated()].unique()
        if len(dup):
            raise ValueError(f"prompt ids appear in more than one pool: {list(dup[:5])}; Pool.concat stacks distinct prompts")
        dims = {p.embeddings.shape[1] for p in ps if p.embeddings is not None}
        if len(dims) > 1:
            raise ValueError(f"the pools' embeddings have different dimensions {sorted(dims)}")

        def stack(arrays):
            return None if any(a is None for a in arrays) else np.concatenate(arrays)

        shared = [name for name in first.per_response if all(name in p.per_response for p in ps[1:])]
        alignments = {p.alignment for p in ps}
        return cls(
            verdicts=np.concatenate([p.verdicts for p in ps]),
            prompts=pd.concat([p.prompts for p in ps], ignore_index=True),
            policies=first.policies,
            answers=stack([p.answers for p in ps]),
            embeddings=stack([p.embeddings for p in ps]),
            cost=stack([p.cost for p in ps]),
            alignment=alignments.pop() if len(alignments) == 1 else "unknown",
            meta={"concat": {"n_prompts": [p.n_prompts for p in ps]}},
            per_response={name: np.concatenate([p.per_response[name] for p in ps]) for name in shared},
        )

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
        per_response: Mapping[str, Any] | None = None,
    ) -> Pool:
        """From a 0/1 array [n, M, k] (a 2-d array [n, M] is read as k = 1; so are 2-d
        ``answers`` and ``per_response`` arrays)."""
        v = np.asarray(verdicts)
        if v.ndim == 2:
            v = v[:, :, None]
            if answers is not None and np.ndim(answers) == 2:
                answers = np.asarray(answers)[:, :, None]
            per_response = {name: (np.asarray(a)[:, :, None] if np.ndim(a) == 2 else a) for name, a in (per_response or {}).items()}
        return cls(v, prompts, policies, answers, embeddings, cost, alignment, dict(meta or {}), dict(per_response or {}))

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
        p_ids, p_pos = _labels(d[prompt], f"prompt column {prompt!r}", "prompt id")
        m_ids, m_pos = _labels(d[policy], f"policy column {policy!r}", "policy name")
        d["_p"] = p_ids[p_pos]
        d["_m"] = m_ids[m_pos]
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
            dcol = d[draw]
            if dcol.isna().any():
                rows = np.flatnonzero(dcol.isna().to_numpy())
                raise ValueError(
                    f"draw column {draw!r} has missing labels in {rows.size} rows (first at row {int(rows[0])}); "
                    "label every response's draw, or pass draw=None to keep the order of appearance"
                )
            codes, uniq = pd.factorize(dcol, sort=False)
            try:
                order = np.argsort(np.asarray(uniq), kind="stable")
            except TypeError:
                raise ValueError(f"draw column {draw!r} mixes labels that cannot be ordered (e.g. numbers and text)") from None
            texts = pd.Index(uniq).astype(str)
            if texts.duplicated().any():
                raise ValueError(
                    f"draw column {draw!r} holds labels that differ only in type (e.g. 1 and '1'): {list(texts[texts.duplicated()][:5])}"
                )
            if len(uniq) != k:
                raise ValueError(f"draw column {draw!r} must take the same {k} values in every cell; found {len(uniq)} values")
            rank = np.empty(len(uniq), dtype=np.int64)
            rank[order] = np.arange(len(uniq))
            j_pos = rank[codes]
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
        ``prompt_columns``; columns are never chosen by dtype); ``id_column`` gives prompt ids
        (default: the index). Every outcome cell must be 0/1 (or True/False, or the texts "0",
        "1", "true", "false"); any other cell -- a blank, "yes", 0.5 -- raises ``ValueError``
        naming the column and the row.
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
        dup = sorted({str(m) for m in models if models.count(m) > 1})
        if dup:
            raise ValueError(f"models names a column more than once: {dup}")
        overlap = [m for m in models if m == id_column or m in prompt_columns]
        if overlap:
            raise ValueError(f"models and the id/prompt columns overlap: {overlap}; a column is either an outcome or a label")
        if id_column:
            ids = df[id_column].to_numpy()
            def row_names(i, ids=ids):
                x = ids[i]
                return f"row {i} (id {(x.item() if isinstance(x, np.generic) else x)!r})"
        else:
            ids = df.index.astype(str).to_numpy()
            row_names = None  # type: ignore[assignment]
        v = as_bool_columns(df, models, "df", row_names=row_names)
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
        under every policy (``draw_seeds="aligned"``), ``"independent"`` when every policy drew
        its own seeds (``"per-policy"``); the stored seeds must agree with the manifest's mode
        (with two or more policies), else the store is refused as damaged. ``per_response`` holds, as arrays [n, M, k],
        ``confidence`` (mean token log-probability; NaN for an empty completion),
        ``completion_tokens`` and ``seed`` (the sampling seed of each response); ``meta`` carries
        the sampling settings and per-policy counts of parse failures and of responses cut at
        ``max_tokens``.
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
        shared = bool((seeds == seeds[:, :1, :]).all())  # draw j of prompt i: one seed under every policy
        mode = (data.identity.get("sampling") or {}).get("draw_seeds", "aligned")  # older stores: aligned only
        if M >= 2 and shared != (mode == "aligned"):
            raise ValueError(f"{where} is damaged: its manifest records draw_seeds={mode!r}, but the stored seeds are "
                             f"{'shared' if shared else 'not shared'} across policies")
        alignment = "seed-aligned" if mode == "aligned" else "independent"
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
            "confidence_definition": "mean log-probability of the generated tokens under the model (temperature 1, no top-p)",
            "parse_failures": per_policy(parse_fail.sum(axis=2)),
            "cut_at_max_tokens": per_policy(cut.sum(axis=2)),
        }
        per_response = {"confidence": conf, "completion_tokens": toks, "seed": seeds}
        return cls(verdicts, ptab, mtab, answers.astype(str), None, None, alignment, meta, per_response)

    # ======================================================== end of from_store block (issue 12)

    # ======================================================== to_long (issue 14, item 3)
    # One self-contained block: the portable exchange format, read back by oraclegap.sources.open_pool.
    def to_long(self, path, overwrite: bool = False) -> Path:
        """Write the pool as a long table, one row per response (the portable exchange format).

        Row (i, m, j), in C order of [n, M, k], holds ``prompt_id``, ``policy``, ``draw`` (= j),
        ``correct`` (0/1), ``answer`` (when the pool has answers), ``cost`` (the cell's
        ``cost[i, m]``, repeated on its k rows, when the pool has costs), each per-response array
        as ``response_<name>``, every other column of
        the prompt table as ``prompt_<column>`` and of the policy table as ``policy_<column>``.
        The suffix picks the file type: ``.parquet`` (which also keeps ``alignment`` and ``meta``
        in the file's metadata) or ``.csv`` (UTF-8, comma-separated; alignment and meta are not
        kept, and non-text table columns are read back by value). Per-prompt ``embeddings`` are
        not part of the long format: use :meth:`save` for a lossless copy.
        :func:`oraclegap.sources.open_pool` reads the file back. The write is atomic (a hidden
        temporary file beside ``path``, then a rename); an existing file is replaced only with
        ``overwrite=True``.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".parquet", ".csv"):
            raise ValueError(f"to_long writes .parquet or .csv files; path {str(path)!r} has suffix {path.suffix!r}")
        if path.is_dir():
            raise ValueError(f"path {str(path)!r} is a directory; to_long writes one file")
        if (path.exists() or path.is_symlink()) and not overwrite:
            raise ValueError(f"path {str(path)!r} exists; pass overwrite=True to replace it")
        pool = self._revalidated()
        n, M, k = pool.shape
        tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        if suffix == ".parquet":  # through Arrow, one row group at a time (no per-row Python objects)
            info = {"format": "oraclegap.long", "version": 1, "shape": [n, M, k], "alignment": pool.alignment,
                    "meta": _jsonable(pool.meta)}
            return _replace_with(path, tmp, lambda t: _write_long_rows(pool, t, info))
        cols: dict[str, Any] = {
            "prompt_id": np.repeat(np.asarray(pool.prompt_ids, dtype=object), M * k),
            "policy": np.tile(np.repeat(np.asarray(pool.policy_names, dtype=object), k), n),
            "draw": np.tile(np.arange(k, dtype=np.int64), n * M),
            "correct": pool.verdicts.ravel().astype(np.int8),
        }
        if pool.answers is not None:
            cols["answer"] = pool.answers.ravel()
        if pool.cost is not None:
            cols["cost"] = np.repeat(pool.cost.ravel(), k)
        for name, arr in pool.per_response.items():
            cols[f"response_{name}"] = arr.ravel()
        for c in pool.prompts.columns:
            if c != "id":
                cols[f"prompt_{c}"] = np.repeat(pool.prompts[c].to_numpy(dtype=object), M * k)
        for c in pool.policies.columns:
            if c != "name":
                cols[f"policy_{c}"] = np.tile(np.repeat(pool.policies[c].to_numpy(dtype=object), k), n)
        df = pd.DataFrame(cols)
        return _replace_with(path, tmp, lambda t: df.to_csv(t, index=False, encoding="utf-8", lineterminator="\n"))

    # ======================================================== end of to_long block (issue 14)

    # ------------------------------------------------------------------ persistence
    def save(self, path, overwrite: bool = False) -> Path:
        """Write the pool as a directory, atomically (see the module docstring).

        The pool is validated again first (its tables are mutable DataFrames). With
        ``overwrite=True`` an existing *pool* directory is replaced; any other file or directory
        at ``path`` is refused. Files in the old directory that are not the pool's own
        (:data:`POOL_FILES`: a note of yours, a file another tool keeps beside the pool) are carried
        into the new one, never deleted. A SHA-256 of every file and of the verdicts' content is
        recorded in the manifest and checked by :meth:`load`.
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
            pool._write_files(tmp)
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

    def _revalidated(self) -> Pool:
        """A fresh Pool from the current fields: runs every check of construction again."""
        try:
            return Pool(self.verdicts, self.prompts, self.policies, self.answers, self.embeddings, self.cost,
                        self.alignment, dict(self.meta), dict(self.per_response))
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"the pool no longer passes validation (was a table changed after construction?): {exc}") from None

    def _write_files(self, d: Path) -> None:
        """Write every file of the pool into the directory ``d``; the manifest last."""
        arrays: dict[str, np.ndarray] = {"verdicts": np.packbits(self.verdicts, axis=2)}
        if self.embeddings is not None:
            arrays["embeddings"] = self.embeddings
        if self.cost is not None:
            arrays["cost"] = self.cost
        for name, arr in self.per_response.items():
            arrays[_RESPONSE_PREFIX + name] = arr
        np.savez_compressed(d / "arrays.npz", **arrays)  # type: ignore[arg-type]  # numpy stubs: **kwds
        _to_parquet(self.prompts, d / "prompts.parquet")
        _to_parquet(self.policies, d / "policies.parquet")
        files = ["arrays.npz", "prompts.parquet", "policies.parquet"]
        if self.answers is not None:
            _answers_to_parquet(self.answers, d / "answers.parquet")
            files.append("answers.parquet")
        checksums = {}
        for name in files:
            checksums[name] = _sha256(d / name)
            _fsync_file(d / name)
        manifest = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "shape": list(self.shape),
            "alignment": self.alignment,
            "arrays": sorted(arrays),
            "answers": "answers.parquet" if self.answers is not None else None,
            "verdicts_packed": "numpy.packbits along the draw axis",
            "checksums": {"sha256": checksums, "verdicts_content_sha256": _verdicts_digest(arrays["verdicts"], self.shape)},
            "meta": _jsonable(self.meta),
        }
        part = d / "manifest.json.part"
        part.write_text(json.dumps(manifest, indent=2, sort_keys=True))
        _fsync_file(part)
        os.rename(part, d / "manifest.json")

    @classmethod
    def load(cls, path) -> Pool:
        """Read a pool directory written by :meth:`save`, checking every file.

        The stored arrays must match the manifest's shape and (format 2) every file its SHA-256
        recorded at save; a mismatch raises ``ValueError`` naming the file. A save killed
        between its two renames is completed first (see the module docstring).
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


_RESPONSE_PREFIX = "response__"
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _per_response(arrays, shape) -> dict[str, np.ndarray]:
    """Validated per-response arrays: a mapping of identifier -> numeric array of the verdicts'
    shape (read-only copies; integers stay integers, floats may hold NaN for "none")."""
    if arrays is None:
        return {}
    if not isinstance(arrays, Mapping):
        raise TypeError(f"per_response must be a mapping of name -> array [n, M, k], got {type(arrays).__name__}")
    out = {}
    for name, a in arrays.items():
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError(f"per_response names must be identifiers (letters, digits, _), got {name!r}")
        arr = np.asarray(a)
        if arr.shape != tuple(shape):
            raise ValueError(f"per_response[{name!r}] must have the verdicts' shape {tuple(shape)}, got {arr.shape}")
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"per_response[{name!r}] must be numeric, got dtype {arr.dtype}")
        if arr.dtype.kind == "f" and np.isinf(arr).any():
            raise ValueError(f"per_response[{name!r}] holds infinite values (use NaN for 'none')")
        arr = np.array(arr, copy=True)
        arr.setflags(write=False)
        out[name] = arr
    return out


def _name_in(directory: str, name: str) -> str:
    return str(Path(directory) / name)


# ---------------------------------------------------------------------------- storage helpers
def _labels(col: pd.Series, what: str, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(distinct labels as strings in order of appearance, each row's position among them).

    Missing labels are refused, and so are distinct values that read as the same text (1 and
    "1"): they would silently merge into one prompt or policy.
    """
    miss = col.isna().to_numpy()
    if miss.any():
        rows = np.flatnonzero(miss)
        raise ValueError(f"{what} has missing values in {rows.size} rows (first at row {int(rows[0])}); every row needs a {kind}")
    codes, uniq = pd.factorize(col, sort=False)
    texts = pd.Index(uniq).astype(str)
    if texts.duplicated().any():
        clash = texts[texts.duplicated()][0]
        same = [u for u, t in zip(uniq, texts, strict=True) if t == clash]
        raise ValueError(
            f"{what} holds distinct values that read as the same {kind} {clash!r}: {same[:4]!r}; "
            "make the labels one type (all text or all numbers)"
        )
    return np.asarray(texts, dtype=object), np.asarray(codes, dtype=np.int64)


def _replace_with(path: Path, tmp: Path, write) -> Path:
    """``write(tmp)``, then move ``tmp`` onto ``path`` atomically (fsynced); ``tmp`` is removed on failure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        write(tmp)
        _fsync_file(tmp)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


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


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` may still be saving (True when unsure: its files are then left alone)."""
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill(pid, 0) would signal the process
        return True
    return pid_alive(pid)


def _recover(path: Path) -> None:
    """Finish or undo a save that died, and remove what dead saves left beside ``path``.

    Only entries named ``.NAME.new-PID-HEX`` / ``.NAME.old-PID-HEX`` whose process is gone are
    touched (and a ``.NAME.old`` holding a pool, which an older version of this library left).
    When ``path`` is missing and a dead save had moved the old pool aside, the finished new
    pool (manifest present) is moved into place, else the old one.
    """
    parent = path.parent
    if not parent.is_dir():
        return
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    dead: dict[str, dict[str, Path]] = {}
    legacy_old = parent / f".{path.name}.old"
    for e in entries:
        m = _SIBLING.match(e.name)
        if m is None or m.group("name") != path.name or _pid_alive(int(m.group("pid"))):
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
        if not path.exists() and legacy_old.is_dir() and _holds_pool_manifest(legacy_old):
            try:
                os.rename(legacy_old, path)
            except OSError:
                pass
    if path.exists():
        for d in dead.values():
            for e in d.values():
                if e.exists():
                    shutil.rmtree(e, ignore_errors=True)
        if legacy_old.is_dir() and _holds_pool_manifest(legacy_old):  # a pool an older save had moved aside
            shutil.rmtree(legacy_old, ignore_errors=True)


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def _text_array(a: np.ndarray) -> np.ndarray:
    """Answers as a read-only object array of Python strings (variable length; missing -> "")."""
    flat = np.asarray(a, dtype=object).ravel()
    out = np.empty(flat.shape, dtype=object)
    miss = pd.isna(flat)
    out[:] = np.where(miss, "", flat)
    if not all(type(x) is str for x in out):
        out[:] = [x if isinstance(x, str) else str(x) for x in out]
    shaped = out.reshape(a.shape)
    shaped.setflags(write=False)
    return shaped


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


# Rows per parquet row group (and per Arrow batch) of a long table.
_LONG_ROWS = 1 << 20


def _write_long_rows(pool: Pool, tmp: Path, info: dict) -> None:
    """``to_long``'s parquet file at ``tmp``, through Arrow: the same columns, values and file
    metadata as the pandas frame it replaces, built one row group at a time (about a million
    rows) from the per-prompt and per-policy tables (text as dictionary columns: each text once
    per row group, never one Python object per row). The caller renames it into place."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n, M, k = pool.shape
    Mk = M * k
    # the prompt and policy tables as Arrow arrays, typed from object values with to_parquet's text
    # conversion of mixed columns, exactly as the per-row frame would be
    ptab = pd.DataFrame({"prompt_id": np.asarray(pool.prompt_ids, dtype=object)}
                        | {f"prompt_{c}": pool.prompts[c].to_numpy(dtype=object) for c in pool.prompts.columns if c != "id"})
    mtab = pd.DataFrame({"policy": np.asarray(pool.policy_names, dtype=object)}
                        | {f"policy_{c}": pool.policies[c].to_numpy(dtype=object)
                           for c in pool.policies.columns if c != "name"})
    pcols = {c: pa.Array.from_pandas(v) for c, v in _parquet_safe(ptab).items()}
    mcols = {c: pa.Array.from_pandas(v) for c, v in _parquet_safe(mtab).items()}
    order = ["prompt_id", "policy", "draw", "correct"]
    if pool.answers is not None:
        order.append("answer")
    if pool.cost is not None:
        order.append("cost")
    order += [f"response_{nm}" for nm in pool.per_response]
    order += [c for c in pcols if c != "prompt_id"] + [c for c in mcols if c != "policy"]

    def dict_col(values: pa.Array, idx: np.ndarray, lo: int = 0, hi: int | None = None) -> pa.Array:
        """values[idx] (idx in [lo, hi)): text as a dictionary column over values[lo:hi]."""
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            sub = values.slice(lo, (len(values) if hi is None else hi) - lo)
            if sub.null_count == 0:  # Arrow cannot write a dictionary holding nulls
                return pa.DictionaryArray.from_arrays(pa.array(idx - lo, pa.int32()), sub)
        return values.take(pa.array(idx, pa.int32()))

    verd = pool.verdicts.reshape(n, Mk)
    per = max(1, _LONG_ROWS // Mk)

    def group(i0: int) -> pa.Table:
        """Prompts ``i0 .. i0 + per - 1`` as one row group."""
        i1 = min(n, i0 + per)
        r = (i1 - i0) * Mk
        pi = np.repeat(np.arange(i0, i1, dtype=np.int32), Mk)
        mi = np.tile(np.repeat(np.arange(M, dtype=np.int32), k), i1 - i0)
        arrays: dict[str, pa.Array] = {
            "prompt_id": dict_col(pcols["prompt_id"], pi, i0, i1),
            "policy": dict_col(mcols["policy"], mi),
            "draw": pa.array(np.tile(np.arange(k, dtype=np.int64), (i1 - i0) * M)),
            "correct": pa.array(verd[i0:i1].reshape(r).astype(np.int8)),
        }
        if pool.answers is not None:
            arrays["answer"] = pa.Array.from_pandas(pd.Series(pool.answers[i0:i1].reshape(r), dtype=object))
        if pool.cost is not None:
            arrays["cost"] = pa.array(np.repeat(pool.cost[i0:i1].reshape(-1), k))
        for nm, arr in pool.per_response.items():
            arrays[f"response_{nm}"] = pa.array(np.ascontiguousarray(arr[i0:i1]).reshape(r))
        for c, vals in pcols.items():
            if c != "prompt_id":
                arrays[c] = dict_col(vals, pi, i0, i1)
        for c, vals in mcols.items():
            if c != "policy":
                arrays[c] = dict_col(vals, mi)
        return pa.Table.from_arrays([arrays[c] for c in order], names=order)

    # the next row group is built on a second thread while Arrow encodes this one (both release
    # the GIL for their array work); the groups are written in order, so the file is the same
    from concurrent.futures import ThreadPoolExecutor

    writer = None
    with ThreadPoolExecutor(max_workers=1) as ex:
        try:
            nxt = ex.submit(group, 0)
            for i0 in range(0, n, per):
                batch = nxt.result()
                if i0 + per < n:
                    nxt = ex.submit(group, i0 + per)
                if writer is None:
                    # text columns go in as dictionary arrays (written as parquet dictionary pages, no
                    # per-row hashing); without the stored Arrow schema readers see plain text columns,
                    # as in a file pandas writes. The pool's alignment and meta: pandas' attrs key.
                    schema = batch.schema
                    writer = pq.ParquetWriter(tmp, schema, store_schema=False)
                    writer.add_key_value_metadata({"PANDAS_ATTRS": json.dumps({"oraclegap": info})})
                writer.write_table(batch.cast(schema) if batch.schema != schema else batch, row_group_size=_LONG_ROWS)
        finally:
            if writer is not None:
                writer.close()


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
