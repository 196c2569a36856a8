"""Building a pool: from a 0/1 array, from success counts, from long and wide tables, from a
rollout store, and from several pools stacked (the constructors of :class:`oraclegap.pool.Pool`).

Each function here is a classmethod of ``Pool`` (bound in :mod:`oraclegap.pool._pool`); its first
argument is the class. The pool's own validation runs on every result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._validate import as_bool_array, as_bool_columns, as_counts_array, as_rng, check_int

if TYPE_CHECKING:
    from ._pool import Pool


def from_array(
    cls: type[Pool],
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


def from_counts(cls: type[Pool], counts, k: int, seed=0, prompts=None, policies=None, *, cost=None, meta=None) -> Pool:
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

def from_long(
    cls: type[Pool],
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

def from_wide(
    cls: type[Pool],
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

# ------------------------------------------------------------------ constructors
def concat(cls: type[Pool], pools: Sequence[Pool]) -> Pool:
    """The prompts of several pools stacked into one pool, in the order given.

    Every pool must hold the same policies (names, in the same order) with the same k, and no
    prompt id may appear in two of them. The result takes the first pool's policy table; its
    alignment is the common one (``"unknown"`` when they differ). Per-prompt and per-cell data
    (``answers``, ``embeddings``, ``cost`` and each ``per_response`` array) are stacked where
    every pool has them and dropped otherwise; ``meta["concat"]`` records the prompt counts.
    """
    if isinstance(pools, cls) or not isinstance(pools, Iterable):
        raise TypeError(f"pools must be a sequence of Pool objects, got {type(pools).__name__}")
    ps = list(pools)
    if not ps:
        raise ValueError("pools is empty; Pool.concat needs at least one pool")
    for i, p in enumerate(ps):
        if not isinstance(p, cls):
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


def from_store(cls: type[Pool], path) -> Pool:
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
    from .. import _store

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


# ---------------------------------------------------------------------------- long-table labels
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


