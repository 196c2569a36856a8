"""OpenCompass results with per-copy details (``opencompass CONFIG --dump-eval-details -w OUT``) as a Pool.

What OpenCompass writes: ``OUT/<time>/results/<model abbr>/<dataset abbr>.json`` with the dataset's scores and, with
``--dump-eval-details``, ``details``; beside it ``OUT/<time>/predictions/<model abbr>/<dataset abbr>.json`` (one entry
per copy: ``origin_prompt``, ``prediction``, ``gold``). A dataset with ``n`` copies (``n = K`` in its config, or
``--dataset-num-runs K``) is evaluated copy by copy and ``details`` holds one entry per example with
``example_abbr`` (``<subset>_<index>``), ``pred`` (the K predictions), ``answer`` and ``correct`` (K booleans: the
evaluator's own verdict of each copy). With one copy, ``details`` is one entry per example whose ``correct`` is a
single boolean (a list or a dict keyed by the example's index).

The reader takes a results file, a ``results/`` folder, a run folder (``<time>/``), or a work folder with one run.
A prompt is (dataset, example index); the model is the folder under ``results/``; draw j is copy j (OpenCompass
evaluates copy j of every example as replica j). The verdict is ``correct`` (else ``is_correct``); an example whose
details carry neither is refused. The prompt text comes from the predictions file when it is there. OpenCompass
records no per-model sampling seed: the alignment is ``unknown`` (the audit's measured check decides).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..pool import Pool
from ._common import DROPPED, as_verdict, build_pool, files_below, keep_complete, load_json

NAME = "opencompass"
_VERDICT_KEYS = ("correct", "is_correct")


def _looks_like_details(obj) -> bool:
    if not isinstance(obj, dict) or "details" not in obj:
        return False
    d = obj["details"]
    first = d[0] if isinstance(d, list) and d else (next(iter(d.values()), None) if isinstance(d, dict) else None)
    return isinstance(first, dict) and any(k in first for k in _VERDICT_KEYS)


def is_details_file(path: Path) -> bool:
    if path.suffix.lower() != ".json" or path.parent.parent.name != "results":
        return False
    try:
        return _looks_like_details(load_json(path, "an OpenCompass results file"))
    except ValueError:
        return False


def _results_files(path: Path) -> list[Path]:
    return sorted(f for f in path.rglob("results/*/*.json") if f.is_file() and is_details_file(f))


def folder_sample(path: Path) -> str | None:
    for f in files_below(path):
        if f.suffix == ".json" and is_details_file(f):
            return str(f.relative_to(path))
    return None


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = [f for f in sorted(path.glob("*/*.json")) if is_details_file(f)] if path.name == "results" \
        else _results_files(path)
    if not files:
        raise ValueError(f"{path} holds no OpenCompass results with details (results/<model>/<dataset>.json written "
                         "with --dump-eval-details)")
    runs = sorted({f.parent.parent.parent for f in files})
    if len(runs) > 1:
        raise ValueError(f"{path} holds {len(runs)} OpenCompass runs ({', '.join(r.name for r in runs[:4])}); each "
                         "draw is counted once -- point at one run folder")
    return files


def _entries(details) -> list[tuple[str, dict]]:
    if isinstance(details, dict):
        return [(str(k), v) for k, v in details.items()]
    out = []
    for i, e in enumerate(details):
        abbr = e.get("example_abbr") if isinstance(e, dict) else None
        out.append((str(abbr).rsplit("_", 1)[-1] if abbr else str(i), e))
    return out


def _texts(results_file: Path) -> dict[str, str]:
    pred = results_file.parent.parent.parent / "predictions" / results_file.parent.name / results_file.name
    if not pred.is_file():
        return {}
    obj = load_json(pred, "an OpenCompass predictions file")
    if not isinstance(obj, dict):
        return {}
    return {str(k): str(v.get("origin_prompt", "")) for k, v in obj.items() if isinstance(v, dict)}


def read_opencompass(path, *, drop_incomplete: bool = False) -> Pool:
    """A Pool from OpenCompass results with per-copy details (see the module docstring)."""
    path = Path(path)
    label = str(path)
    frames, ks, models, notes = [], {}, {}, []
    for f in _files(path):
        obj = load_json(f, "an OpenCompass results file")
        if not _looks_like_details(obj):
            raise ValueError(f"{f} has no per-example details with 'correct'; rerun OpenCompass with "
                             "--dump-eval-details")
        model, dataset = f.parent.name, f.stem
        texts = _texts(f)
        rows = []
        for idx, e in _entries(obj["details"]):
            where = f"{f.name}: example {idx}"
            key = next((k for k in _VERDICT_KEYS if k in e), None)
            if key is None:
                raise ValueError(f"{where} has no 'correct' or 'is_correct'; its evaluator gives no per-copy verdict")
            v = e[key]
            vs = v if isinstance(v, list) else [v]
            preds = e.get("pred", e.get("prediction"))
            preds = preds if isinstance(preds, list) and len(preds) == len(vs) else [preds] * len(vs)
            ans = e.get("answer", e.get("gold"))
            gold = ans[0] if isinstance(ans, list) and len(vs) > 1 and ans else ans
            gold = " | ".join(map(str, gold)) if isinstance(gold, list) else ("" if gold is None else str(gold))
            for j, (ok, p) in enumerate(zip(vs, preds, strict=True)):
                rows.append((idx, j, as_verdict(ok, where, key), "" if p is None else str(p), texts.get(idx, ""), gold))
        frame = pd.DataFrame(rows, columns=["idx", "draw", "correct", "answer", "text", "gold"])
        k = int(frame.groupby("idx")["draw"].nunique().max())
        if frame.groupby("idx")["draw"].nunique().min() != k:
            raise ValueError(f"{f}: examples hold different numbers of copies; every example needs the same n")
        ks[(model, dataset)] = k
        frame.insert(0, "task", dataset)
        frame.insert(0, "policy", model)
        frames.append(frame)
        models.setdefault(model, {"results": []})["results"].append(str(f))
    if len(set(ks.values())) > 1:
        raise ValueError(f"{label}: the copies per example differ between models or datasets ({ks}); every model needs "
                         "the same n")
    rows = pd.concat(frames, ignore_index=True)
    rows["prompt_id"] = rows["task"] + "/" + rows["idx"]
    rows["dataset"] = rows["task"]
    text = rows[rows["text"] != ""].groupby("prompt_id")["text"].first()
    rows["text"] = rows["prompt_id"].map(text).fillna("")
    if drop_incomplete:
        rows = keep_complete(rows, notes)
    rows = rows.sort_values(["task", "idx", "draw"], kind="stable",
                            key=lambda c: c.map(lambda x: (len(x), x)) if c.name == "idx" else c)
    meta = {"source": label, "format": NAME, "harness": NAME, "models": models,
            "tasks": {d: {"n": k} for (_, d), k in ks.items()},
            "alignment_from": "OpenCompass records no per-model sampling seed: the audit's measured check decides",
            DROPPED: notes, "assumed": ["prompt = (dataset, example index); model = the folder under results/",
                                        "draw j = copy j of the example; verdict = the evaluator's 'correct'"]}
    return build_pool(rows.drop(columns=["idx"]), alignment="unknown", meta=meta, label=label)
