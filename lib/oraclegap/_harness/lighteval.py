"""Hugging Face lighteval details (``lighteval accelerate MODEL TASKS --save-details --output-dir OUT``) as a Pool.

What lighteval writes: ``OUT/details/<model_name>/<time>/details_<task>|<fewshot>_<time>.parquet`` with one row per
document and three struct columns -- ``doc`` (``query``, ``choices``, ``gold_index``, ``id``, ``task_name``,
``num_samples``), ``model_response`` (``text``: the n sampled responses, ``text_post_processed``) and ``metric``
(the document's *reduced* metric, e.g. ``pass@k:k=1&n=4``) -- and ``OUT/results/<model_name>/results_<time>.json``
(``config_general.model_name``, ``model_config.generation_parameters`` with ``seed`` and ``temperature``).

The reader takes a details file or a folder (every ``details_*.parquet`` below it). The model is
``config_general.model_name`` of the results file of the same time beside the details file, or in lighteval's
``results/`` tree; else the folder above the time folder (said in ``meta``). A prompt is (task, ``doc.id``); the
draws are the n responses of ``model_response`` (``text_post_processed`` when lighteval filled it, as its metrics
read it). The reduced metric is not a per-draw verdict: each response is re-graded with lighteval's default
sampling score (the response and the gold, both stripped, equal), and the re-grade must reproduce the file's own
``pass@k`` (the unbiased estimator) or ``avg@n`` on every document, else the file is refused: a task that scores
with a custom function (math or letter extraction) needs its own grader. Seeds from ``generation_parameters``:
pairwise different -> ``independent``, else ``unknown``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..pool import Pool
from ._common import DROPPED, build_pool, files_below, keep_complete, load_json, short_model_names

NAME = "lighteval"
_DETAILS = re.compile(r"^details_(?P<task>.+?)[|_](?P<shots>\d+)_(?P<ts>\d{4}-\d{2}-\d{2}T[0-9.\-:]+)\.parquet$")
_METRIC = re.compile(r"^(?P<kind>pass@k|avg@n|avg@k)(?::(?P<params>.*))?$")


def is_details_file(path: Path) -> bool:
    if not _DETAILS.match(path.name):
        return False
    try:
        import pyarrow.parquet as pq

        names = set(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 - not a parquet file
        return False
    return {"doc", "model_response", "metric"} <= names


def folder_sample(path: Path) -> str | None:
    for f in files_below(path):
        if f.name.startswith("details_") and f.suffix == ".parquet" and is_details_file(f):
            return str(f.relative_to(path))
    return None


def _results_for(f: Path, ts: str) -> Path | None:
    beside = f.parent / f"results_{ts}.json"
    if beside.is_file():
        return beside
    for anc in f.parents:
        if anc.name == "details" and (anc.parent / "results").is_dir():
            return next((anc.parent / "results").rglob(f"results_{ts}.json"), None)
    return None


def _model_of(f: Path, ts: str) -> tuple[str, str, dict]:
    res = _results_for(f, ts)
    if res is not None:
        obj = load_json(res, "a lighteval results file")
        cg = obj.get("config_general") or {}
        name = cg.get("model_name") or (cg.get("model_config") or {}).get("model_name")
        if name:
            return str(name), f"results: config_general.model_name ({res.name})", cg
    folder = f.parent.parent.name if _is_time(f.parent.name) else f.parent.name
    return folder, f"the folder name {folder!r} (no results file found)", {}


def _is_time(name: str) -> bool:
    return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}T[0-9.\-:]+", name))


def _pass_at_k(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _params(text: str | None) -> dict:
    out = {}
    for part in (text or "").split("&"):
        if "=" in part:
            a, b = part.split("=", 1)
            try:
                out[a.strip()] = int(b)
            except ValueError:
                pass
    return out


def _list(x) -> list:
    if x is None:
        return []
    if isinstance(x, np.ndarray):
        return list(x)
    return list(x) if isinstance(x, (list, tuple)) else [x]


def read_lighteval(path, *, drop_incomplete: bool = False) -> Pool:
    """A Pool from lighteval details parquet files (a file or a folder; see the module docstring)."""
    path = Path(path)
    label = str(path)
    files = [path] if path.is_file() else sorted(f for f in path.rglob("details_*.parquet") if is_details_file(f))
    if not files:
        raise ValueError(f"{path} holds no lighteval details files (details_<task>|<fewshot>_<time>.parquet)")
    runs = []
    for f in files:
        m = _DETAILS.match(f.name)
        if not m:
            raise ValueError(f"{f} is not named as lighteval names details files "
                             "(details_<task>|<fewshot>_<time>.parquet)")
        ref, named_from, cg = _model_of(f, m["ts"])
        runs.append((f, m["task"], ref, named_from, cg))
    names = short_model_names(list(dict.fromkeys(r[2] for r in runs)))
    frames, models, tasks, seen, notes = [], {}, {}, {}, []
    for f, task, ref, named_from, cg in runs:
        policy = names[ref]
        if (policy, task) in seen:
            raise ValueError(f"{label}: {seen[(policy, task)].name} and {f.name} are both model {policy!r} on task "
                             f"{task!r}; each draw is counted once -- point at one run per model")
        seen[(policy, task)] = f
        try:
            d = pd.read_parquet(f)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"{f} is not a readable parquet file ({exc})") from None
        gen = ((cg.get("model_config") or {}).get("generation_parameters") or {})
        models[policy] = {"reference": ref, "named_from": named_from, "seed": gen.get("seed"),
                          "temperature": gen.get("temperature"), "details": str(f)}
        rows, n_of = [], None
        for i, (doc, resp, met) in enumerate(zip(d["doc"], d["model_response"], d["metric"], strict=True)):
            where = f"{f.name}: row {i}"
            texts = _list(resp.get("text_post_processed")) or _list(resp.get("text"))
            texts = [str(t) for t in texts]
            if n_of is None:
                n_of = len(texts)
            if len(texts) != n_of or not texts:
                raise ValueError(f"{where} holds {len(texts)} responses, row 0 {n_of}; every document needs the same n")
            choices = [str(c) for c in _list(doc.get("choices"))]
            gi = doc.get("gold_index")
            gi = _list(gi)
            if len(gi) != 1 or not choices:
                raise ValueError(f"{where}: {len(gi)} gold indices; oraclegap re-grades one gold answer per document")
            gold = choices[int(gi[0])].strip()
            ok = [t.strip() == gold for t in texts]
            met = {k: v for k, v in (met or {}).items() if v is not None}
            keys = [k for k in met if _METRIC.match(k)]
            if not keys:
                raise ValueError(f"{where}: the metrics {sorted(met)} are reductions oraclegap cannot check a re-grade "
                                 "against (it checks pass@k and avg@n); a reduced metric is no per-draw verdict -- add "
                                 "pass@k with k=1 to the task, or export per-response scores")
            for key in keys:
                mm = _METRIC.match(key)
                p = _params(mm["params"])
                if mm["kind"] == "pass@k":
                    want = _pass_at_k(len(ok), sum(ok), p.get("k", 1))
                else:
                    want = sum(ok) / len(ok)
                if not math.isclose(float(met[key]), want, abs_tol=1e-9):
                    raise ValueError(f"{where}: re-grading the {len(ok)} responses (stripped text equal to the gold "
                                     f"{gold!r}) gives {key} = {want:.4g}, the file says {float(met[key]):.4g}; the "
                                     "task scores with a function oraclegap does not repeat (e.g. math extraction)")
            doc_id = doc.get("id") if doc.get("id") not in (None, "") else str(i)
            for j, (t, v) in enumerate(zip(texts, ok, strict=True)):
                rows.append((str(doc_id), j, v, t, str(doc.get("query") or ""), gold))
        frame = pd.DataFrame(rows, columns=["doc_id", "draw", "correct", "answer", "text", "gold"])
        tname = task.split("|")[0]
        frame.insert(0, "task", tname)
        frame.insert(0, "policy", policy)
        frame["seed"] = gen.get("seed")
        frames.append(frame)
        info = tasks.setdefault(tname, {"n": n_of, "metrics": sorted(keys)})
        if info["n"] != n_of:
            raise ValueError(f"{label}: task {tname!r} has {info['n']} responses per document in one file and {n_of} "
                             f"in {f.name}; every model needs the same k")
    ks = {t: i["n"] for t, i in tasks.items()}
    if len(set(ks.values())) > 1:
        raise ValueError(f"{label}: the tasks have different numbers of responses per document ({ks})")
    rows = pd.concat(frames, ignore_index=True)
    rows["prompt_id"] = rows["task"] + "/" + rows["doc_id"]
    rows["dataset"] = rows["task"]
    if drop_incomplete:
        rows = keep_complete(rows, notes)
    rows = rows.sort_values(["task", "doc_id", "draw"], kind="stable",
                            key=lambda c: c.map(lambda x: (len(x), x)) if c.name == "doc_id" else c)
    seeds = [m["seed"] for m in models.values()]
    if len(models) > 1 and all(s is not None for s in seeds) and len(set(seeds)) == len(seeds):
        alignment, why = "independent", f"each model ran with its own seed {seeds}"
    else:
        alignment, why = "unknown", "the runs do not show a seed per model: the audit's measured check decides"
    meta = {"source": label, "format": NAME, "harness": NAME, "models": models, "tasks": tasks, "alignment_from": why,
            DROPPED: notes + ["the reduced per-document metric (checked against the re-grade, then not used)"],
            "assumed": ["prompt = (task, doc.id); draw j = response j of model_response",
                        "verdict = the response, stripped, equals the gold choice, stripped (lighteval's default "
                        "sampling score), checked against the file's pass@k / avg@n"]}
    return build_pool(rows, alignment=alignment, meta=meta, label=label)
