"""The ``Pool`` class: the verdicts with their tables, validated on construction, its shape and
outcomes, and its sub-pools (``select``, ``split``, ``draws``).

Constructors, files and the long table live beside it and are bound here as its methods:
:mod:`oraclegap.pool._build` (``from_array``, ``from_counts``, ``from_long``, ``from_wide``,
``from_store``, ``concat``), :mod:`oraclegap.pool._storage` (``save``, ``load``) and
:mod:`oraclegap.pool._long` (``to_long``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._validate import as_bool_array, check_int, check_tau
from . import _build, _long, _storage
from ._fields import (
    ALIGNMENTS,
    POLICY_COLUMNS,
    PROMPT_COLUMNS,
    _per_response,
    _policy_names,
    _prompt_ids,
    _table,
    _text_array,
    need,
)


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

    def _revalidated(self) -> Pool:
        """A fresh Pool from the current fields: runs every check of construction again."""
        try:
            return Pool(self.verdicts, self.prompts, self.policies, self.answers, self.embeddings, self.cost,
                        self.alignment, dict(self.meta), dict(self.per_response))
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"the pool no longer passes validation (was a table changed after construction?): {exc}") from None

    # ------------------------------------------------------------------ constructors (_build)
    from_array = classmethod(_build.from_array)
    from_counts = classmethod(_build.from_counts)
    from_long = classmethod(_build.from_long)
    from_wide = classmethod(_build.from_wide)
    from_store = classmethod(_build.from_store)
    concat = classmethod(_build.concat)

    # ------------------------------------------------------------------ files (_storage, _long)
    save = _storage.save
    load = classmethod(_storage.load)
    to_long = _long.to_long
