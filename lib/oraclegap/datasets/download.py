"""Downloading the released files the external entries read (``make data``), and deriving
MMLU-Pro's compact files from its per-model output zips."""

from __future__ import annotations

import json
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .._io import atomic_write
from .chen2026 import CHEN
from .llmrouter import ULAB
from .mmlu_pro import MMLUPRO, MMLUPRO_COMMIT, MMLUPRO_MODELS
from .registry import _REPO
from .routerbench_mini import RBMINI
from .routerdc import _RDC_COUNTS, _RDC_K1, RDC

_RAW = "https://raw.githubusercontent.com"
_CHEN_MAIN = f"{_RAW}/luka-krixvon/routing-oracle-experiment/0304028d5ad721af96f4cc97fca10f8490126133/artifacts"
_CHEN_GPQA = f"{_RAW}/luka-krixvon/routing-oracle-experiment/a08fed21d8072741df42312dd3c0d3074a160b01/artifacts"
_RDC_RAW = f"{_RAW}/shuhao02/RouterDC/0e63989c5bf4363330b8a4616386e3f7f116d9f8/datasets"
_RP_RAW = f"{_RAW}/ulab-uiuc/RouteProfile/96a5b910b00617a47ccfe043ec5cb5023058b666"
_LR_RAW = f"{_RAW}/ulab-uiuc/LLMRouter/4e7a796942ce26e9d5f2b93191c7c2585c99c2e3"
_RBM_RAW = f"{_RAW}/ken-ab/routerbench-mini/c03410ce55a44ccbd0a46cfc777a41fdbacad28d"
_MMLUPRO_RAW = f"{_RAW}/TIGER-AI-Lab/MMLU-Pro/{MMLUPRO_COMMIT}/eval_results"


def _fetch_list() -> list[tuple[str, str]]:
    """(relative destination, URL) for every file the external entries read (MMLU-Pro is derived separately)."""
    out = []
    for b in ("math500", "humanevalplus"):
        out += [(f"{CHEN}/{b}/correctness_slim.npz", f"{_CHEN_MAIN}/{b}/correctness_slim.npz"), (f"{CHEN}/{b}/subset.json", f"{_CHEN_MAIN}/{b}/subset.json")]
    out += [(f"{CHEN}/gpqa/correctness_slim.npz", f"{_CHEN_GPQA}/gpqa/correctness_slim.npz"), (f"{CHEN}/gpqa/subset_ids.json", f"{_CHEN_GPQA}/gpqa/subset_ids.json")]
    fnames = sorted({f for files, _, _ in list(_RDC_COUNTS.values()) + list(_RDC_K1.values()) for f in files.values()})
    out += [(f"{RDC}/split2_model7/{f}", f"{_RDC_RAW}/split2_model7/{f}") for f in fnames]
    for stem in ("arc_challenge", "mbpp", "winograde"):
        for split in ("train", "test"):
            out.append((f"{RDC}/routerbench_zs/{stem}_{split}.csv", f"{_RDC_RAW}/routerbench_zs/{stem}_{split}.csv"))
    out += [
        (f"{ULAB}/RouteProfile/routing_test_data.json", f"{_RP_RAW}/route_data/routing_test_data.json"),
        (f"{ULAB}/RouteProfile/candidate_models.json", f"{_RP_RAW}/profile_data/candidate_models.json"),
        (f"{ULAB}/LLMRouter_dcrouter_preprocessed/train.json", f"{_LR_RAW}/data/dcrouter_preprocessed/train.json"),
        (f"{ULAB}/LLMRouter_dcrouter_preprocessed/test.json", f"{_LR_RAW}/data/dcrouter_preprocessed/test.json"),
        (f"{RBMINI}/test_predictions.csv", f"{_RBM_RAW}/results/qwen3.5-v5-3200-800/test_predictions.csv"),
    ]
    return out


def _download(url: str, dest: Path, timeout: float) -> None:
    with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - fixed https URLs
        data = resp.read()
    atomic_write(dest, data)  # the folder is made only once something arrived


def derive_mmlu_pro(zips: Mapping[str, Path], out_dir) -> Path:
    """Build ``correctness_matrix.csv``, ``predicted_letters.csv`` and ``questions.jsonl`` from
    MMLU-Pro's per-model output zips (model -> zip path), as in the external folder's SOURCE.md:
    correct = (pred == answer), an unparsed prediction counts as wrong, an item absent from a
    model's file is blank, entries that are not dicts are dropped.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    correct, letters, questions = {}, {}, {}
    for model, zpath in zips.items():
        with zipfile.ZipFile(zpath) as zf:
            members = [m for m in zf.namelist() if m.endswith(".json")]
            if not members:
                raise ValueError(f"{zpath}: no .json member")
            data = json.loads(zf.read(members[0]).decode("utf-8"))
        col_c, col_l = {}, {}
        for rec in data:
            if not isinstance(rec, dict) or "question_id" not in rec:
                continue
            qid = int(rec["question_id"])
            pred = rec.get("pred")
            col_c[qid] = int(pred is not None and pred == rec.get("answer"))
            col_l[qid] = pred if pred is not None else ""
            if qid not in questions:
                questions[qid] = {k: rec.get(k) for k in ("question_id", "question", "options", "answer", "answer_index", "category", "src")}
        correct[f"{model}_5shots"] = col_c
        letters[f"{model}_5shots"] = col_l
    qids = sorted(questions)
    cm = pd.DataFrame({k: pd.Series(v, dtype="Int64") for k, v in correct.items()}).reindex(qids)
    cm.index.name = "question_id"
    cm.to_csv(out / "correctness_matrix.csv")
    pl = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in letters.items()}).reindex(qids)
    pl.index.name = "question_id"
    pl.to_csv(out / "predicted_letters.csv")
    with open(out / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q in qids:
            fh.write(json.dumps(questions[q]) + "\n")
    return out


def fetch(dest=None, *, timeout: float = 10.0, skip_existing: bool = True, mmlu_pro: bool = True) -> pd.DataFrame:
    """Download the released files the external entries read into ``dest`` (default ``data/external/``).

    Every file is tried independently; failures (no network, HTTP errors) are recorded, never
    raised. MMLU-Pro's compact files are derived from the official per-model zips. Returns one
    row per file: path, url, status ("ok", "present", "failed"), message.
    """
    root = Path(dest) if dest is not None else _REPO / "data" / "external"
    rows = []
    for rel, url in _fetch_list():
        path = root / rel
        if skip_existing and path.exists():
            rows.append({"path": rel, "url": url, "status": "present", "message": ""})
            continue
        try:
            _download(url, path, timeout)
            rows.append({"path": rel, "url": url, "status": "ok", "message": ""})
        except (urllib.error.URLError, OSError, TimeoutError, ValueError) as exc:
            rows.append({"path": rel, "url": url, "status": "failed", "message": f"{type(exc).__name__}: {exc}"})
    if mmlu_pro:
        target = root / MMLUPRO / "correctness_matrix.csv"
        if skip_existing and target.exists():
            rows.append({"path": f"{MMLUPRO}/*", "url": _MMLUPRO_RAW, "status": "present", "message": ""})
        else:
            with tempfile.TemporaryDirectory() as tmp:
                zips, failed = {}, []
                for model in MMLUPRO_MODELS:
                    url = f"{_MMLUPRO_RAW}/model_outputs_{model}_5shots.zip"
                    zp = Path(tmp) / f"{model}.zip"
                    try:
                        _download(url, zp, timeout)
                        zips[model] = zp
                    except (urllib.error.URLError, OSError, TimeoutError, ValueError) as exc:
                        failed.append(model)
                        rows.append({"path": f"(zip) {model}", "url": url, "status": "failed", "message": f"{type(exc).__name__}: {exc}"})
                        if len(failed) == 1 and not zips:
                            # the first zip failed: the network is most likely closed; do not try 28 more
                            rows.append(
                                {"path": f"{MMLUPRO}/*", "url": _MMLUPRO_RAW, "status": "failed", "message": "skipped the remaining zips"}
                            )
                            break
                if zips and not failed:
                    try:
                        derive_mmlu_pro(zips, root / MMLUPRO)
                        rows.append({"path": f"{MMLUPRO}/*", "url": _MMLUPRO_RAW, "status": "ok", "message": "derived"})
                    except (ValueError, OSError, zipfile.BadZipFile, json.JSONDecodeError) as exc:
                        rows.append({"path": f"{MMLUPRO}/*", "url": _MMLUPRO_RAW, "status": "failed", "message": str(exc)})
    return pd.DataFrame(rows, columns=["path", "url", "status", "message"])
