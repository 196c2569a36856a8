"""Every Eval Ever instance-level records (evaleval/every_eval_ever, ``instance_level_eval.schema.json``, version
``instance_level_eval_0.2.1``): one JSON object per line, one per (sample, model), with ``schema_version``,
``evaluation_id``, ``model_id``, ``evaluation_name``, ``sample_id``, ``sample_hash``, ``interaction_type``,
``input`` (``raw``, ``reference``), ``output`` (``raw``: the responses), ``answer_attribution`` and ``evaluation``
(``score``, ``is_correct``), plus ``metadata`` whose values are strings.

The schema has no epoch or draw field. :func:`records` writes one record per (prompt, model, draw), the draw index in
``metadata.draw`` (a string, as the schema's metadata holds), so k draws are k records with one ``sample_id``;
:func:`read_eee` reads ``metadata.draw`` back as the draw, and without it takes the records of one (sample, model)
as its draws in file order (said in ``meta["assumed"]``). A prompt is (``evaluation_name``, ``sample_id``), a model
is ``model_id``, the verdict is ``evaluation.is_correct``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from ..pool import Pool
from ._common import DROPPED, build_pool, first_jsonl_record, iter_jsonl, keep_complete

NAME = "every-eval-ever"
SCHEMA_VERSION = "instance_level_eval_0.2.1"
#: The fields the schema requires of every record.
REQUIRED = ("schema_version", "evaluation_id", "model_id", "evaluation_name", "sample_id", "interaction_type", "input",
            "answer_attribution", "evaluation")


def is_record(rec) -> bool:
    return (isinstance(rec, dict) and str(rec.get("schema_version", "")).startswith("instance_level_eval")
            and "sample_id" in rec and isinstance(rec.get("evaluation"), dict))


def is_file(path: Path) -> bool:
    return path.suffix.lower() in (".jsonl", ".json") and is_record(first_jsonl_record(path))


def _hash(raw: str, refs: list[str]) -> str:
    return hashlib.sha256((raw + "\x1f" + "\x1f".join(refs)).encode("utf-8")).hexdigest()


def records(pool: Pool) -> tuple[list[dict], list[str]]:
    """The pool as instance-level records (one per prompt, model and draw) and what the format cannot hold."""
    n, M, k = pool.verdicts.shape
    texts = pool.prompts["text"].astype(object).where(pool.prompts["text"].notna(), "").astype(str).to_numpy() \
        if "text" in pool.prompts.columns else np.full(n, "", dtype=object)
    ds = pool.prompts["dataset"].astype(object).where(pool.prompts["dataset"].notna(), "pool").astype(str).to_numpy() \
        if "dataset" in pool.prompts.columns else np.full(n, "pool", dtype=object)
    split = pool.prompts["split"] if "split" in pool.prompts.columns else pd.Series([None] * n)
    gold = None
    for c in ("gold", "ground_truth", "gold_answer", "answer"):
        if c in pool.prompts.columns and pool.prompts[c].notna().any():
            gold = pool.prompts[c].to_numpy(dtype=object)
            break
    out = []
    for i in range(n):
        refs = [] if gold is None or gold[i] is None or (isinstance(gold[i], float) and np.isnan(gold[i])) \
            else [str(gold[i])]
        h = _hash(str(texts[i]), refs)
        for m, model in enumerate(pool.policy_names):
            for j in range(k):
                ok = bool(pool.verdicts[i, m, j])
                resp = "" if pool.answers is None else str(pool.answers[i, m, j])
                meta = {"draw": str(j), "k": str(k), "alignment": pool.alignment}
                if split.iloc[i] is not None and not (isinstance(split.iloc[i], float) and np.isnan(split.iloc[i])):
                    meta["split"] = str(split.iloc[i])
                out.append({
                    "schema_version": SCHEMA_VERSION,
                    "evaluation_id": f"oraclegap/{ds[i]}/{model}",
                    "model_id": str(model),
                    "evaluation_name": str(ds[i]),
                    "sample_id": str(pool.prompt_ids[i]),
                    "sample_hash": h,
                    "interaction_type": "single_turn",
                    "input": {"raw": str(texts[i]), "reference": refs},
                    "output": {"raw": [resp]},
                    "messages": None,
                    "answer_attribution": [{"turn_idx": 0, "source": "output.raw", "extracted_value": resp,
                                            "extraction_method": "oraclegap verdict", "is_terminal": True}],
                    "evaluation": {"score": 1.0 if ok else 0.0, "is_correct": ok},
                    "metadata": meta,
                })
    dropped = [x for x, present in (("embeddings", pool.embeddings is not None), ("cost", pool.cost is not None),
                                    ("per-response fields", bool(pool.per_response)),
                                    ("the policy table beyond the name", len(pool.policies.columns) > 1)) if present]
    return out, dropped


def read_eee(path, *, drop_incomplete: bool = False) -> Pool:
    """A Pool from an Every Eval Ever instance-level JSON-lines file (see the module docstring)."""
    path = Path(path)
    label = str(path)
    rows, labelled, unlabelled, aligns = [], 0, 0, set()
    for ln, rec in iter_jsonl(path, "Every Eval Ever instance-level records"):
        missing = [f for f in ("model_id", "sample_id", "evaluation") if f not in rec]
        if missing:
            raise ValueError(f"{path}: line {ln} lacks {missing}; not an instance-level record")
        ev = rec["evaluation"]
        ok = ev.get("is_correct") if isinstance(ev, dict) else None
        if not isinstance(ok, bool):
            raise ValueError(f"{path}: line {ln}: evaluation.is_correct is {ok!r}, not true/false")
        meta = rec.get("metadata") or {}
        draw = meta.get("draw") if isinstance(meta, dict) else None
        if draw is None:
            unlabelled += 1
        else:
            labelled += 1
            try:
                draw = int(draw)
            except (TypeError, ValueError):
                raise ValueError(f"{path}: line {ln}: metadata.draw is {draw!r}, not a whole number") from None
        out = rec.get("output") or {}
        raw = out.get("raw") if isinstance(out, dict) else None
        inp = rec.get("input") or {}
        rows.append((str(rec.get("evaluation_name", "")), str(rec["sample_id"]), str(rec["model_id"]), draw, ok,
                     str(raw[0]) if isinstance(raw, list) and raw else "", str(inp.get("raw", "")),
                     " | ".join(map(str, inp.get("reference") or [])), ln))
        if isinstance(meta, dict):
            aligns.add(meta.get("alignment"))
    if not rows:
        raise ValueError(f"{path} holds no records")
    if labelled and unlabelled:
        raise ValueError(f"{path}: {labelled} records carry metadata.draw and {unlabelled} do not; label every draw "
                         "or none")
    d = pd.DataFrame(rows, columns=["dataset", "sample_id", "policy", "draw", "correct", "answer", "text", "gold",
                                    "line"])
    one_name = d.groupby("sample_id")["dataset"].nunique().max() == 1
    d["prompt_id"] = d["sample_id"] if one_name else d["dataset"] + "/" + d["sample_id"]
    assumed = ["prompt = sample_id (with evaluation_name when one sample_id appears under several); model = model_id; "
               "verdict = evaluation.is_correct"]
    if unlabelled:
        d["draw"] = d.groupby(["prompt_id", "policy"], sort=False).cumcount()
        assumed.append("no metadata.draw: the records of one (sample, model) are its draws in file order")
    else:
        dup = d[d.duplicated(["prompt_id", "policy", "draw"], keep=False)]
        if len(dup):
            r = dup.iloc[1]
            raise ValueError(f"{path}: line {r['line']} repeats draw {r['draw']} of sample {r['sample_id']!r} under "
                             f"{r['policy']!r}; no draw is counted twice")
    notes: list[str] = []
    if drop_incomplete:
        d = keep_complete(d, notes)
    meta = {"source": label, "format": NAME, "assumed": assumed, DROPPED: notes}
    # metadata.alignment is oraclegap's own statement (its export writes it); anything else leaves it unknown
    alignment = aligns.pop() if len(aligns) == 1 and None not in aligns else "unknown"
    if alignment not in ("seed-aligned", "independent", "unknown"):
        alignment = "unknown"
    return build_pool(d.drop(columns=["line", "sample_id"]), alignment=alignment, meta=meta, label=label)
