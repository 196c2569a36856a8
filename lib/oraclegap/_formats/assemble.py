"""Responses in file order assembled into a pool: cells, draws, repeated copies, prompt and policy
fields, costs and per-response numbers.

The row readers (LLMRouterBench, LLMRouter, EmbedLLM and the long table) collect their records
into :class:`_Rows` and call :func:`_assemble`, which refuses incomplete cells, unequal draw
counts and rows repeated whole (unless asked to drop them), naming the file and the row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..pool import Pool
from ._common import _numbers, _shown


@dataclasses.dataclass
class _Rows:
    """Responses in file order: one entry per response in every array."""

    label: str
    where: Callable[[int], str]
    prompt: np.ndarray  # prompt keys (str)
    policy: np.ndarray  # policy keys (str)
    correct: np.ndarray  # bool
    answer: np.ndarray | None = None
    cost: np.ndarray | None = None  # per response; NaN = missing
    draw: np.ndarray | None = None  # explicit draw positions 0..k-1 (long format)
    prompt_cols: dict = dataclasses.field(default_factory=dict)  # name -> values, constant per prompt
    policy_cols: dict = dataclasses.field(default_factory=dict)  # name -> values, constant per policy
    per_response: dict = dataclasses.field(default_factory=dict)  # name -> numbers (NaN = missing) for meta
    embed_row: np.ndarray | None = None  # row of an embeddings matrix, constant per prompt
    prompt_sort: np.ndarray | None = None  # numeric key: prompts ordered by it (else first appearance)
    policy_sort: np.ndarray | None = None


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    sa, sb = pd.Series(a, dtype=object), pd.Series(b, dtype=object)
    na, nb = sa.isna().to_numpy(), sb.isna().to_numpy()
    with np.errstate(invalid="ignore"):
        eq = (sa == sb).to_numpy(dtype=bool)
    return (eq & ~na & ~nb) | (na & nb)


def _first_rows(codes: np.ndarray, n: int) -> np.ndarray:
    first = np.full(n, -1, dtype=np.int64)
    uniq, idx = np.unique(codes, return_index=True)
    first[uniq] = idx
    return first


def _per_key(values, codes, first, keys, what: str, name: str, where) -> np.ndarray:
    """The value of ``name`` per key, checked to be the same on every row of the key."""
    v = np.asarray(values, dtype=object)
    ref = v[first[codes]]
    ok = _same(v, ref)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        j = int(first[codes[i]])
        raise ValueError(
            f"{where(i)}: field {name!r} is {v[i]!r} here but {ref[i]!r} at {where(j)} for the same {what} "
            f"{keys[codes[i]]!r}; a {what}'s {name!r} must be the same on all its rows"
        )
    return v[first]


def _order(codes: np.ndarray, uniq: np.ndarray, sort_key: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if sort_key is None:
        return codes, uniq
    first = _first_rows(codes, len(uniq))
    key = np.asarray(sort_key)
    key = key[first] if key.dtype == object else key.astype(float)[first]  # object: exact Python ints
    perm = np.argsort(key, kind="stable")
    rank = np.empty_like(perm)
    rank[perm] = np.arange(len(perm))
    return rank[codes], uniq[perm]


def _copies(rows: _Rows, orig: np.ndarray, cell: np.ndarray) -> tuple[int, np.ndarray]:
    """``(r, first)`` when, without draw labels, every distinct row of every (prompt, policy) cell
    appears a multiple r >= 2 of times (a file appended to itself, rows doubled by a join): the
    same response is then counted r times as if drawn anew. ``first`` marks the first 1/r of each
    distinct row's occurrences, in file order. ``(1, None)`` otherwise."""
    cols = {"cell": cell, "correct": np.asarray(rows.correct, dtype=bool)[orig]}
    for name, vals in (("answer", rows.answer), ("cost", rows.cost)):
        if vals is not None:
            cols[name] = pd.Series(np.asarray(vals, dtype=object)[orig]).astype(str).to_numpy(dtype=object)
    for name, vals in rows.per_response.items():
        cols[f"response_{name}"] = pd.Series(np.asarray(vals)[orig]).astype(str).to_numpy(dtype=object)
    key = pd.DataFrame(cols)
    group = key.groupby(list(key.columns), sort=False, dropna=False).ngroup().to_numpy()
    counts = np.bincount(group)
    r = int(np.gcd.reduce(counts[counts > 0]))
    if r < 2:
        return 1, None
    seen = pd.Series(group).groupby(group).cumcount().to_numpy()
    return r, seen < counts[group] // r


def _assemble(rows: _Rows, *, drop_incomplete: bool = False, embeddings: np.ndarray | None = None,
              alignment: str = "unknown", meta: dict | None = None, dedupe: bool = False) -> Pool:
    label, where = rows.label, rows.where
    N = len(rows.prompt)
    if N == 0:
        raise ValueError(f"{label} holds no responses")
    p_codes, p_uniq = pd.factorize(pd.Series(rows.prompt, dtype=object).astype(str).to_numpy(dtype=object), sort=False)
    m_codes, m_uniq = pd.factorize(pd.Series(rows.policy, dtype=object).astype(str).to_numpy(dtype=object), sort=False)
    p_uniq, m_uniq = np.asarray(p_uniq, dtype=object), np.asarray(m_uniq, dtype=object)
    p_codes, p_uniq = _order(p_codes, p_uniq, rows.prompt_sort)
    m_codes, m_uniq = _order(m_codes, m_uniq, rows.policy_sort)
    n, M = len(p_uniq), len(m_uniq)
    orig = np.arange(N)
    counts = np.bincount(p_codes * M + m_codes, minlength=n * M).reshape(n, M)
    meta = dict(meta or {})
    missing = counts == 0
    if missing.any():
        if not drop_incomplete:
            cells = np.argwhere(missing)
            per = {str(m_uniq[j]): int(c) for j, c in enumerate(missing.sum(axis=0)) if c}
            eg = ", ".join(f"({p_uniq[i]!r}, {m_uniq[j]!r})" for i, j in cells[:3])
            raise ValueError(
                f"{label}: {len(cells)} of {n * M} (prompt, policy) cells have no response, e.g. {eg}; missing per policy: "
                f"{per}. Every policy must answer every prompt; pass drop_incomplete=True (CLI --drop-incomplete) to keep "
                "only the prompts every policy answered"
            )
        keep = ~missing.any(axis=1)
        if not keep.any():
            raise ValueError(f"{label}: no prompt was answered by all {M} policies; nothing is left after dropping incomplete prompts")
        meta["prompts_dropped_incomplete"] = int((~keep).sum())
        remap = np.full(n, -1, dtype=np.int64)
        remap[keep] = np.arange(int(keep.sum()))
        sel = keep[p_codes]
        orig, p_codes, m_codes = orig[sel], remap[p_codes[sel]], m_codes[sel]
        p_uniq, counts = p_uniq[keep], counts[keep]
        n = len(p_uniq)
    k = int(counts.max())
    if (counts != k).any():
        sizes, freq = np.unique(counts, return_counts=True)
        usual = int(sizes[np.argmax(freq)])  # the number most cells hold (ties: the smaller)
        extra, short = np.argwhere(counts > usual), np.argwhere(counts < usual)
        i, j = (extra if len(extra) else short)[0]
        what = ("more" if len(extra) else "fewer") + f" rows than the {int((counts == usual).sum())} cells with {usual}"
        raise ValueError(
            f"{label}: the (prompt, policy) cells hold different numbers of responses {[int(x) for x in sizes[:6]]}: prompt "
            f"{p_uniq[i]!r} x policy {m_uniq[j]!r} has {int(counts[i, j])}, {what} ({len(extra)} cells have more, "
            f"{len(short)} fewer); several rows of one cell are read as repeated samples (k > 1), so every cell needs the "
            "same number -- remove duplicated rows if they are copies"
        )
    cell = p_codes * M + m_codes
    if rows.draw is None and k > 1:
        r, first = _copies(rows, orig, cell)
        if r > 1 and not dedupe:
            raise ValueError(
                f"{label}: every row appears {r} times in its (prompt, policy) cell ({len(orig)} rows, "
                f"{len(orig) // r} distinct), as when a file is appended to itself; without draw labels the copies would "
                f"count as k = {k} draws instead of {k // r} -- remove them, pass dedupe=True (CLI --dedupe) to keep one of "
                "each, or label the draws (a long table's 'draw' column) if they are distinct"
            )
        if r > 1:
            meta["duplicates_dropped"] = {"rows": int(len(orig) - first.sum()), "copies": r, "k_before": k}
            orig, p_codes, m_codes, cell = orig[first], p_codes[first], m_codes[first], cell[first]
            k //= r
    if dedupe and "duplicates_dropped" not in meta:  # asked for and nothing to drop: said, not silent
        meta["duplicates_dropped"] = {"rows": 0, "copies": 1, "k_before": k}
    if rows.draw is None:
        j_pos = pd.Series(cell).groupby(cell, sort=False).cumcount().to_numpy()
    else:
        d = _numbers(np.asarray(rows.draw)[orig], "draw", lambda i: where(int(orig[i])), integer=True, nonneg=True)
        if np.isnan(d).any() or (d >= k).any():
            i = int(np.flatnonzero(np.isnan(d) | (d >= k))[0])
            raise ValueError(f"{where(int(orig[i]))}: field 'draw' must be a draw position in 0..{k - 1} (k = {k} rows per cell)")
        j_pos = d.astype(np.int64)
        dup = pd.Series(cell * k + j_pos).duplicated().to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise ValueError(f"{where(int(orig[i]))}: draw {j_pos[i]} of prompt {p_uniq[p_codes[i]]!r} x policy "
                             f"{m_uniq[m_codes[i]]!r} appears twice")
    at = (p_codes, m_codes, j_pos)
    v = np.zeros((n, M, k), dtype=bool)
    v[at] = np.asarray(rows.correct, dtype=bool)[orig]
    ow = lambda i: where(int(orig[i]))  # noqa: E731 - rows after dropping, named by their place in the file
    p_first, m_first = _first_rows(p_codes, n), _first_rows(m_codes, M)
    ptab = pd.DataFrame({"id": p_uniq})
    for name, vals in rows.prompt_cols.items():
        ptab[name] = _per_key(np.asarray(vals, dtype=object)[orig], p_codes, p_first, p_uniq, "prompt", name, ow)
    mtab = pd.DataFrame({"name": m_uniq})
    for name, vals in rows.policy_cols.items():
        mtab[name] = _per_key(np.asarray(vals, dtype=object)[orig], m_codes, m_first, m_uniq, "policy", name, ow)
    answers = None
    if rows.answer is not None:
        answers = np.full((n, M, k), "", dtype=object)
        a = np.asarray(rows.answer, dtype=object)[orig]
        answers[at] = np.where(pd.isna(a), "", a)
    cost = None
    if rows.cost is not None:
        c = np.asarray(rows.cost, dtype=float)[orig]
        if np.isnan(c).any():
            i = int(np.flatnonzero(np.isnan(c))[0])
            raise ValueError(f"{ow(i)}: field 'cost' is missing here but present on other rows; give every response a cost or none")
        if (c < 0).any() or not np.isfinite(c).all():
            i = int(np.flatnonzero((c < 0) | ~np.isfinite(c))[0])
            raise ValueError(f"{ow(i)}: field 'cost' holds {_shown(c[i])}, not a finite non-negative number")
        cost = np.bincount(cell, weights=c, minlength=n * M) / k  # mean cost per response of the cell
        lo, hi = np.full(n * M, np.inf), np.full(n * M, -np.inf)
        np.minimum.at(lo, cell, c)
        np.maximum.at(hi, cell, c)
        cost = np.where(lo == hi, lo, cost).reshape(n, M)  # one cost per cell: kept exactly
    per_response = {}
    for name, vals in rows.per_response.items():
        src = np.asarray(vals)
        if src.dtype.kind in "iu" or src.dtype == np.float32:  # a typed column (parquet): keep its dtype exactly
            a = np.zeros((n, M, k), dtype=src.dtype)  # every (i, m, j) is filled: cells are complete here
        else:
            src = src.astype(float)
            a = np.full((n, M, k), np.nan)
        a[at] = src[orig]
        per_response[name] = a
    emb = None
    if embeddings is not None:
        if rows.embed_row is None:
            raise ValueError(f"{label}: embeddings need an integer key per prompt in the file (embedding_id / prompt_id)")
        r = _per_key(np.asarray(rows.embed_row, dtype=object)[orig], p_codes, p_first, p_uniq, "prompt", "embedding row", ow)
        E = np.asarray(embeddings)
        out = np.array([not (0 <= int(x) < E.shape[0]) for x in r], dtype=bool)  # exact ints: no wrap-around
        if out.any():
            i = int(np.flatnonzero(out)[0])
            raise ValueError(f"{label}: prompt {p_uniq[i]!r} has embedding row {int(r[i])}, outside the embeddings' {E.shape[0]} rows")
        emb = E[np.asarray([int(x) for x in r], dtype=np.int64)]
    try:
        return Pool(v, ptab, mtab, answers, emb, cost, alignment, meta, per_response)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{label}: {exc}") from None

