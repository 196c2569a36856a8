"""MMLU-Pro's released outputs of 29 models as a registry entry: correctness derived as pred ==
answer on the items every model answered, with each model's predicted letter as its answer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._datalog import declare as _declare
from .._validate import as_bool_columns
from ..pool import Pool
from .registry import Entry, _meta, _register, external_dir

MMLUPRO = "mmlu_pro_29models_k1"
MMLUPRO_MODELS = (
    "DeepSeek-Coder-V2 Llama-2-13b-hf Llama-2-70b-hf Llama-2-7b-hf Meta-Llama-3-70B Meta-Llama-3-8B "
    "Meta-Llama-3_1-70B-Instruct Meta-Llama-3_1-70B Meta-Llama-3_1-8B-Instruct Meta-Llama-3_1-8B "
    "Mistral-7B-Instruct-v0.1 Mistral-7B-Instruct-v0.2 Mistral-7B-v0.1 Mistral-7B-v0.2-hf Mixtral-8x7B-Instruct-v0.1 "
    "Mixtral-8x7B-v0.1 Phi-3-mini-4k-instruct Qwen1.5-110B Qwen1.5-72B-Chat Qwen1.5-7B-Chat Yi-34B Yi-6B Yi-6b-Chat "
    "c4ai-command-r-v01 gemini-1.5-flash-002 gemini-1.5-pro-002 gemma-7b jamba-1.5-large mathstral-7B"
).split()
MMLUPRO_COMMIT = "f418b116db00b065c2aea046518d8fcf74d39872"


def _mmlu_pro(entry: Entry) -> Pool:
    root = external_dir() / MMLUPRO
    m = pd.read_csv(root / "correctness_matrix.csv")
    q = pd.read_json(root / "questions.jsonl", lines=True)
    models = [c for c in m.columns if c != "question_id"]
    n_all = len(m)
    m = m.dropna(subset=models).reset_index(drop=True)
    q = q.set_index("question_id").loc[m["question_id"]].reset_index()
    answers, note = _mmlu_pro_letters(root / "predicted_letters.csv", m["question_id"], models)
    prompts = pd.DataFrame(
        {
            "id": m["question_id"].astype(str),
            "text": q["question"].to_numpy(),
            "dataset": "mmlu_pro",
            "category": q["category"].to_numpy(),
            "src": q["src"].to_numpy(),
        }
    )
    return Pool.from_array(
        as_bool_columns(m, models, f"{entry.name}: {root / 'correctness_matrix.csv'}",
                        row_names=lambda i: f"row {i} (question_id {m['question_id'].astype(str).iloc[i]})"),
        prompts,
        pd.DataFrame({"name": [c.removesuffix("_5shots") for c in models]}),
        answers=answers,
        meta=_meta(entry, items_in_file=n_all, note="items answered by all 29 models; unparsed answers count as wrong",
                   answers=note),
    )


def _mmlu_pro_letters(path: Path, question_ids: pd.Series, models: list[str]) -> tuple[np.ndarray | None, str]:
    """Each model's released predicted letter per item as the pool's ``answers`` [n, M, 1] ("" where
    unparsed), read from ``predicted_letters.csv`` when it is present (verdicts never come from it)."""
    _declare(path)
    if not path.is_file():
        return None, f"absent ({path.name} not found)"
    pl = pd.read_csv(path, dtype=str, keep_default_na=False).set_index("question_id")
    pl.index = pl.index.astype(str)
    missing = [c for c in models if c not in pl.columns]
    if missing:
        raise ValueError(f"{path}: no predicted-letter column for {missing[:3]}")
    ids = question_ids.astype(str)
    absent = ids[~ids.isin(pl.index)]
    if len(absent):
        raise ValueError(f"{path}: no predicted letters for question_id {absent.iloc[0]!r} ({len(absent)} items)")
    letters = pl.loc[ids, models].to_numpy(dtype=object)
    return letters[:, :, None], "the released predicted letter per model (pred; empty where unparsed), k = 1"


_register(
    Entry(
        "mmlu-pro",
        "external",
        "(10326, 29, 1)",
        "MMLU-Pro (5-shot CoT, one generation): 29 models on the 10326 of 12032 items every model answered; category in the prompt table",
        f"TIGER-AI-Lab/MMLU-Pro @ {MMLUPRO_COMMIT[:8]} eval_results/model_outputs_*_5shots.zip, derived (pred == answer)",
        "Apache-2.0",
        (f"{MMLUPRO}/correctness_matrix.csv", f"{MMLUPRO}/questions.jsonl"),
        builder=_mmlu_pro,
    )
)

