"""The columnar path of the long-table reader: a parquet written by ``Pool.to_long`` read through
Arrow in batches, or None whenever the row-by-row reader must decide.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..pool import Pool
from .long_schema import LONG_FORMAT

_LONG_BATCH = 1 << 17  # rows per Arrow batch read: 2 MiB of verdicts; larger batches cost memory, not time


class _LongLayout:
    """Where row ``r`` of a long table in C order of [n, M, k] belongs, for runs of rows.

    For rows ``r0 .. r0 + b - 1`` :meth:`at` gives the prompt (counted from ``r0 // (M k)``), the
    policy and the draw of every row, and the offsets of the rows that open a prompt. The three
    patterns repeat with period ``M k``, so they are computed once for ``b_max + M k`` rows and
    every run is a slice of them (views: no integer division per row and batch)."""

    def __init__(self, M: int, k: int, b_max: int):
        self.M, self.k, self.Mk = M, k, M * k
        self._patterns(b_max)

    def _patterns(self, b_max: int) -> None:
        reps = -(-(b_max + self.Mk) // self.Mk)
        self.prompt = np.repeat(np.arange(reps, dtype=np.int64), self.Mk)
        self.policy = np.tile(np.repeat(np.arange(self.M, dtype=np.int64), self.k), reps)
        self.draw = np.tile(np.arange(self.k, dtype=np.int64), reps * self.M)

    def at(self, r0: int, b: int):
        """``(prompt - r0 // (M k), policy, draw, starts)`` of rows ``r0 .. r0 + b - 1``."""
        off = r0 % self.Mk
        if b + off > self.prompt.size:  # a longer run than planned: widen the patterns
            self._patterns(b)
        sl = slice(off, off + b)
        starts = np.arange((self.Mk - off) % self.Mk, b, self.Mk)
        return self.prompt[sl], self.policy[sl], self.draw[sl], starts


def _read_long_arrow(path: Path) -> Pool | None:
    """The columnar path of :func:`read_long` for a parquet written by :meth:`Pool.to_long`.

    Through pyarrow (already a dependency, and the engine pandas itself reads parquet with): row
    groups are read one batch at a time with the text columns kept dictionary-encoded, checked
    with vectorised comparisons against the layout ``to_long`` writes (rows in C order of
    [n, M, k], the prompt and policy of every row, draws 0..k-1, 0/1 verdicts, one cost per cell,
    prompt and policy fields constant), and assembled straight into the arrays. Returns None
    whenever the file is anything else or any check fails: the row-by-row reader then reads it
    and gives its usual answers and refusals, so both paths yield the same pool or the same error.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, read_dictionary=None)
        kv = pf.metadata.metadata or {}
        info = json.loads(kv.get(b"PANDAS_ATTRS", b"{}")).get("oraclegap")
        schema = pf.schema_arrow
    except Exception:  # noqa: BLE001 - unreadable or unusual files: the general reader explains
        return None
    if not isinstance(info, dict) or info.get("format") != LONG_FORMAT or not isinstance(info.get("shape"), list):
        return None
    try:
        n, M, k = (int(x) for x in info["shape"])
    except (TypeError, ValueError):
        return None
    names = list(schema.names)
    if n < 1 or M < 1 or k < 1 or pf.metadata.num_rows != n * M * k or names[:4] != ["prompt_id", "policy", "draw", "correct"]:
        return None
    extra = names[4:]
    if len(set(names)) != len(names) or any(
            not (c in ("cost", "answer") or c.startswith(("prompt_", "policy_", "response_"))) or c == "prompt_id"
            for c in extra):
        return None  # unknown columns, repeated names: the general reader
    text = lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)  # noqa: E731
    if not (text(schema.field("prompt_id").type) and text(schema.field("policy").type)):
        return None
    if not pa.types.is_integer(schema.field("draw").type):
        return None
    if not (pa.types.is_integer(schema.field("correct").type) or pa.types.is_boolean(schema.field("correct").type)):
        return None
    resp = [c for c in extra if c.startswith("response_")]
    for c in resp + (["cost"] if "cost" in extra else []):
        t = schema.field(c).type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t)) or pa.types.is_float16(t):
            return None
    if "answer" in extra and not (text(schema.field("answer").type) or pa.types.is_null(schema.field("answer").type)):
        return None
    fields = [c for c in extra if c.startswith(("prompt_", "policy_"))]
    Mk = M * k
    v = np.empty(n * Mk, dtype=bool)
    cost = np.empty(n * M) if "cost" in extra else None
    answers = np.empty(n * Mk, dtype=object) if "answer" in extra else None
    per_resp: dict[str, np.ndarray] = {}
    ids: list = []
    pol_names = None
    firsts: dict[str, list] = {c: [] for c in fields}
    pol_vals: dict[str, pa.Array] = {}
    carry: dict[str, pa.Array] = {}
    try:
        pf = pq.ParquetFile(path, read_dictionary=["prompt_id", "policy"])
        layout = _LongLayout(M, k, _LONG_BATCH)
        r0 = 0
        for batch in pf.iter_batches(batch_size=_LONG_BATCH, use_threads=True):
            b = batch.num_rows
            # each row's prompt (counted from the batch's first, lo), policy and draw
            p_rel, m_exp, d_exp, starts = layout.at(r0, b)
            lo = r0 // Mk
            # prompt ids: the first row of each prompt names it; every row must carry its prompt's id
            pid = batch.column("prompt_id")
            pol = batch.column("policy")
            if pid.null_count or pol.null_count:
                return None
            ids.extend(pid.take(pa.array(starts)).dictionary_decode().to_pylist() if len(starts) else [])
            dict_ids = pid.dictionary.to_numpy(zero_copy_only=False)
            local = pd.Index(np.asarray(ids[lo:lo + int(p_rel[-1]) + 1], dtype=object))
            if not local.is_unique:
                return None
            code = local.get_indexer(dict_ids)
            got = code[pid.indices.to_numpy(zero_copy_only=False)]
            if (got != p_rel).any():
                return None
            if pol_names is None:
                if b < Mk:
                    return None
                pol_names = pol.take(pa.array(np.arange(M) * k)).dictionary_decode().to_pylist()
                if len(set(pol_names)) != M:
                    return None
                pol_index = pd.Index(np.asarray(pol_names, dtype=object))
                for c in fields:
                    if c.startswith("policy_"):
                        pol_vals[c] = batch.column(c).take(pa.array(np.arange(M) * k))
            pcode = pol_index.get_indexer(pol.dictionary.to_numpy(zero_copy_only=False))
            if (pcode[pol.indices.to_numpy(zero_copy_only=False)] != m_exp).any():
                return None
            dr = batch.column("draw")
            if dr.null_count or (dr.to_numpy() != d_exp).any():
                return None
            cor = batch.column("correct")
            if cor.null_count:
                return None
            cv = cor.to_numpy(zero_copy_only=False)
            if cv.dtype != bool and ((cv != 0) & (cv != 1)).any():
                return None
            v[r0:r0 + b] = cv.astype(bool)
            if cost is not None:
                cc = batch.column("cost")
                if cc.null_count:
                    return None
                cval = cc.to_numpy().astype(float)
                if not np.isfinite(cval).all() or (cval < 0).any():
                    return None
                # a cell's first row gives its cost; the cell's other rows must repeat it
                c0, c1 = r0 // k, -(-(r0 + b) // k)  # the cells the batch touches
                head = np.flatnonzero(d_exp == 0)
                cost[(r0 + head) // k] = cval[head]
                if (cval != np.repeat(cost[c0:c1], k)[r0 - c0 * k:r0 - c0 * k + b]).any():
                    return None
            if answers is not None:
                a = batch.column("answer").to_numpy(zero_copy_only=False)
                answers[r0:r0 + b] = np.where(pd.isna(a), "", a)
            for c in resp:
                col = batch.column(c)
                if col.null_count:
                    return None
                a = col.to_numpy()
                if c not in per_resp:
                    keep = a.dtype.kind in "iu" or a.dtype == np.float32
                    per_resp[c] = np.empty(n * Mk, dtype=a.dtype if keep else float)
                per_resp[c][r0:r0 + b] = a
            for c in fields:
                col = batch.column(c)
                if c.startswith("prompt_"):
                    ref = col.take(pa.array(starts))
                    firsts[c].append(ref)
                    # the batch's prompts: the one carried over from the previous batch, then those starting here
                    local_f = ref if (len(starts) and starts[0] == 0) else pa.concat_arrays([carry[c], ref])
                    carry[c] = local_f.slice(len(local_f) - 1, 1)
                    exp = local_f.take(pa.array(p_rel))
                else:
                    exp = pol_vals[c].take(pa.array(m_exp))
                if pa.types.is_null(col.type):  # every value missing: constant
                    continue
                same = pc.fill_null(pc.equal(col, exp), False)
                if pa.types.is_floating(col.type):
                    both = pc.and_(pc.is_null(col, nan_is_null=True), pc.is_null(exp, nan_is_null=True))
                else:
                    both = pc.and_(pc.is_null(col), pc.is_null(exp))
                if not pc.all(pc.or_(same, both)).as_py():
                    return None
            r0 += b
        if r0 != n * Mk or len(ids) != n:
            return None
    except (pa.ArrowException, ValueError, TypeError, KeyError):
        return None
    pid_all = [str(x) for x in ids]
    if any(x.strip() == "" for x in pid_all) or any(str(x).strip() == "" for x in pol_names or []):
        return None
    if len(set(pid_all)) != n:
        return None
    ptab = pd.DataFrame({"id": np.asarray(pid_all, dtype=object)})
    mtab = pd.DataFrame({"name": np.asarray([str(x) for x in pol_names or []], dtype=object)})
    for c in fields:
        if c.startswith("prompt_"):
            vals = pa.concat_arrays(firsts[c]).to_pandas().to_numpy(dtype=object)
            ptab[c.split("_", 1)[1]] = vals
        else:
            mtab[c.split("_", 1)[1]] = pol_vals[c].to_pandas().to_numpy(dtype=object)
    per_response = {c.split("_", 1)[1]: a.reshape(n, M, k) for c, a in per_resp.items()}
    alignment = info.get("alignment", "unknown")
    meta = dict(info.get("meta") or {})
    try:
        return Pool(v.reshape(n, M, k), ptab, mtab, None if answers is None else answers.reshape(n, M, k), None, None if cost is None else cost.reshape(n, M), alignment,
                    meta, per_response)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
