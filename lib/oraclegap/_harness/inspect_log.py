"""UK AISI inspect_ai evaluation logs as a Pool.

What inspect writes (``inspect eval TASK --model M --epochs K``): one log per (task, model) run, either a ``.eval``
file (a zip whose members are zstd-compressed JSON: ``header.json``, ``samples/<id>_epoch_<e>.json``, ...) or a
``.json`` file (``--log-format json``, or ``inspect log convert LOG --to json --output-dir DIR``). The JSON log holds
``eval`` (``task``, ``model``, ``model_args``, ``model_generate_config`` with ``seed``, ``config.epochs``,
``packages``), ``status`` and ``samples``: one per (sample id, epoch) with ``input``, ``target``, ``output.completion``
and ``scores.<scorer>.value``.

The reader takes one log, or a folder of logs (every ``*.json`` / ``*.eval`` log below it; inspect's
``logs.json`` index is skipped). A ``.eval`` log is read with inspect_ai's own reader when inspect_ai is installed;
without it the reader says how to convert the log to JSON (Python before 3.14 cannot unpack zstd zip members).

* Models: ``eval.model`` names the model when it differs between logs; for local models every log says
  ``hf/local`` (or ``vllm/local``), and then the model is the last folder of ``model_args.model_path`` (or
  ``model_args.model_name``/``path``). Logs that still cannot be told apart are refused naming them.
* Draws: epoch e is draw e - 1; every (sample, model) needs all ``config.epochs`` epochs.
* Scores (:data:`SCORE_RULE`): ``C``/``I`` are right/wrong, ``N`` (no answer) wrong, ``P`` (partial, 0.5 in
  inspect's own value_to_float) and numbers other than 0/1 are refused unless ``score_threshold`` t is given (correct
  when the value >= t); ``true``/``yes`` and ``false``/``no`` are right and wrong. A sample with several scorers needs
  ``inspect_scorer``.
* Alignment: logs with pairwise-different ``seed`` are ``independent``; otherwise ``unknown`` -- inspect may
  interleave samples and epochs differently from run to run, so a shared seed does not fix which random stream a
  draw used; the audit's measured check decides.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pandas as pd

from ..pool import Pool
from ._common import DROPPED, build_pool, files_below, keep_complete, load_json, short_model_names

NAME = "inspect"
SCORE_RULE = ("C = right, I = wrong, N (no answer) = wrong; P (partial = 0.5) and numbers other than 0/1 need "
              "score_threshold t (right when >= t); true/yes right, false/no wrong")
_LOCAL = ("hf/local", "vllm/local", "transformers/local")
_PATH_ARGS = ("model_path", "model_name", "path", "pretrained")
_WORDS = {"C": True, "I": False, "N": False, "true": True, "yes": True, "false": False, "no": False}


# ---------------------------------------------------------------------------- recognising the files
def _looks_like_log(obj) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("eval"), dict) and "model" in obj["eval"] and (
        "samples" in obj or "status" in obj)


def is_json_log(path: Path) -> bool:
    if path.name == "logs.json":
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if b'"eval"' not in head and b'"version"' not in head:
        return False
    try:
        return _looks_like_log(load_json(path, "an inspect_ai log"))
    except ValueError:
        return False


def is_eval_file(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
    return "header.json" in names or "_journal/start.json" in names or any(n.startswith("samples/") for n in names)


def folder_sample(path: Path) -> str | None:
    for f in files_below(path):
        if (f.suffix == ".eval" and is_eval_file(f)) or (f.suffix == ".json" and is_json_log(f)):
            return str(f.relative_to(path))
    return None


# ---------------------------------------------------------------------------- reading one log
def _read_log(path: Path) -> dict:
    if path.suffix.lower() == ".eval":
        try:
            from inspect_ai.log import read_eval_log
        except ImportError:
            raise ValueError(
                f"{path} is an inspect_ai .eval log (a zip of zstd-compressed JSON, which Python "
                f"{sys.version_info.major}.{sys.version_info.minor} cannot unpack without inspect_ai); convert it "
                f"with `inspect log convert {path} --to json --output-dir DIR` and read DIR, or install inspect_ai"
            ) from None
        import json

        try:
            log = read_eval_log(str(path))
        except Exception as exc:  # noqa: BLE001 - inspect_ai's own error, named
            raise ValueError(f"{path}: inspect_ai could not read it ({type(exc).__name__}: {exc})") from None
        return json.loads(log.model_dump_json(exclude={"samples": {"__all__": {"events"}}}))
    obj = load_json(path, "an inspect_ai log")
    if not _looks_like_log(obj):
        raise ValueError(f"{path} is not an inspect_ai log (no 'eval' with 'model')")
    return obj


def _logs(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    out = [f for f in sorted(path.rglob("*")) if f.is_file() and (
        (f.suffix == ".eval" and is_eval_file(f)) or (f.suffix == ".json" and is_json_log(f)))]
    if not out:
        raise ValueError(f"{path} holds no inspect_ai logs (.json or .eval)")
    return out


def _model_ref(ev: dict) -> str | None:
    args = ev.get("model_args") or {}
    for k in _PATH_ARGS:
        if isinstance(args.get(k), str) and args[k]:
            return args[k]
    return None


def _value(v, where: str, threshold: float | None):
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        w = _WORDS.get(v) if v in ("C", "I", "N") else _WORDS.get(v.strip().lower())
        if w is not None:
            return w
        if v == "P":
            if threshold is None:
                raise ValueError(f"{where}: score 'P' (partial credit, 0.5 in inspect's value_to_float) is neither "
                                 "right nor wrong; pass score_threshold=t (right when 0.5 >= t)")
            return 0.5 >= threshold
        raise ValueError(f"{where}: score {v!r} is not one oraclegap reads ({SCORE_RULE})")
    if isinstance(v, (int, float)):
        if v in (0, 1):
            return bool(v)
        if threshold is None:
            raise ValueError(f"{where}: score {v!r} is neither 0 nor 1; pass score_threshold=t (right when >= t)")
        return float(v) >= threshold
    raise ValueError(f"{where}: score {v!r} is a {type(v).__name__}, not a single value ({SCORE_RULE})")


def _text(inp) -> str:
    if isinstance(inp, str):
        return inp
    if isinstance(inp, list):
        users = [m for m in inp if isinstance(m, dict) and m.get("role") == "user"]
        m = (users or [x for x in inp if isinstance(x, dict)] or [{}])[-1]
        c = m.get("content", "")
        if isinstance(c, list):
            return "".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
        return str(c)
    return ""


# ---------------------------------------------------------------------------- the reader
def read_inspect(path, *, drop_incomplete: bool = False, score_threshold=None,
                 inspect_scorer: str | None = None) -> Pool:
    """A Pool from inspect_ai logs (a log file or a folder of them; see the module docstring for the rules)."""
    from .._formats import check_threshold

    path = Path(path)
    label = str(path)
    threshold = check_threshold(score_threshold)
    files = _logs(path)
    logs = [(f, _read_log(f)) for f in files]
    models_seen = [str(lg["eval"].get("model")) for _, lg in logs]
    tasks_seen = [str(lg["eval"].get("task")) for _, lg in logs]
    # one name per log: eval.model when it tells the logs of a task apart, else the model path of model_args
    pairs = list(zip(models_seen, tasks_seen, strict=True))
    shared = len(set(pairs)) < len(pairs)
    need_args = shared or any(m in _LOCAL for m in models_seen)
    refs = []
    for (f, lg), m in zip(logs, models_seen, strict=True):
        if need_args:
            r = _model_ref(lg["eval"])
            if r is None and not shared:
                r = m
            if r is None:
                raise ValueError(f"{label}: several logs name the model {m!r} and {f.name} has no model_path in "
                                 "eval.model_args to tell them apart; point at one log per model")
            refs.append(r)
        else:
            refs.append(m)
    names = short_model_names(list(dict.fromkeys(refs)))
    notes: list[str] = []
    frames, models, tasks, seen = [], {}, {}, {}
    for (f, lg), ref, task in zip(logs, refs, tasks_seen, strict=True):
        ev = lg["eval"]
        policy = names[ref]
        key = (policy, task)
        if key in seen:
            raise ValueError(f"{label}: logs {seen[key].name} and {f.name} are both model {policy!r} on task "
                             f"{task!r}; each draw is counted once -- point at one log per model and task")
        seen[key] = f
        status = lg.get("status")
        if status not in (None, "success") and not drop_incomplete:
            raise ValueError(f"{f}: the run's status is {status!r}, not 'success' (its samples may be incomplete); "
                             "rerun it, or pass drop_incomplete to keep the prompts every model finished")
        epochs = int((ev.get("config") or {}).get("epochs") or 1)
        gen = ev.get("model_generate_config") or {}
        args = {k: v for k, v in (ev.get("model_args") or {}).items() if k != "chat_template"}
        models[policy] = {"model": ev.get("model"), "model_args": args, "seed": gen.get("seed"),
                          "temperature": gen.get("temperature"), "log": str(f),
                          "inspect_ai": (ev.get("packages") or {}).get("inspect_ai")}
        rows = []
        samples = lg.get("samples") or []
        if not samples:
            raise ValueError(f"{f} holds no samples (run without --no-log-samples)")
        for s in samples:
            where = f"{f.name}: sample {s.get('id')!r} epoch {s.get('epoch')}"
            scores = s.get("scores") or {}
            if not scores:
                if drop_incomplete:
                    continue
                raise ValueError(f"{where} has no score (errored or unscored); pass drop_incomplete to leave it out")
            if inspect_scorer is not None:
                if inspect_scorer not in scores:
                    raise ValueError(f"{where}: inspect_scorer {inspect_scorer!r} is not among its scorers "
                                     f"{sorted(scores)}")
                sc = inspect_scorer
            elif len(scores) == 1:
                sc = next(iter(scores))
            else:
                raise ValueError(f"{where} has several scorers {sorted(scores)}; choose one with inspect_scorer=NAME "
                                 "(CLI --inspect-scorer)")
            val = scores[sc].get("value") if isinstance(scores[sc], dict) else scores[sc]
            ok = _value(val, where, threshold)
            e = int(s.get("epoch", 1))
            if not 1 <= e <= epochs:
                raise ValueError(f"{where}: epoch {e} is outside 1..{epochs} (eval.config.epochs)")
            out = s.get("output") or {}
            tgt = s.get("target")
            gold = " | ".join(map(str, tgt)) if isinstance(tgt, list) else ("" if tgt is None else str(tgt))
            rows.append((task, s.get("id"), e - 1, ok, str(out.get("completion", "")), _text(s.get("input")), gold))
        frame = pd.DataFrame(rows, columns=["task", "sample_id", "draw", "correct", "answer", "text", "gold"])
        frame.insert(0, "policy", policy)
        frame["seed"] = gen.get("seed")
        counts = frame.groupby("sample_id")["draw"].nunique()
        short = counts.index[counts < epochs]
        if len(short):
            if not drop_incomplete:
                raise ValueError(f"{f}: sample {short[0]!r} has {int(counts[short[0]])} of {epochs} epochs scored; "
                                 "pass drop_incomplete to keep the samples with every epoch")
            notes.append(f"{policy}/{task}: {len(short)} samples without every epoch left out")
            frame = frame[~frame["sample_id"].isin(short)]
        frames.append(frame)
        info = tasks.setdefault(task, {"epochs": epochs, "scorer": sorted({sc for s in samples for sc in
                                                                              (s.get("scores") or {})})})
        if info["epochs"] != epochs:
            raise ValueError(f"{label}: task {task!r} ran {info['epochs']} epochs in one log and {epochs} in "
                             f"{f.name}; every model needs the same k")
    ks = {t: i["epochs"] for t, i in tasks.items()}
    if len(set(ks.values())) > 1:
        raise ValueError(f"{label}: the tasks ran different numbers of epochs ({ks}); read one task at a time")
    rows = pd.concat(frames, ignore_index=True)
    rows["prompt_id"] = rows["task"] + "/" + rows["sample_id"].astype(str)
    rows["dataset"] = rows["task"]
    if drop_incomplete:
        rows = keep_complete(rows, notes)
    seeds = [m["seed"] for m in models.values()]
    if len(models) > 1 and all(s is not None for s in seeds) and len(set(seeds)) == len(seeds):
        alignment, why = "independent", f"each model ran with its own seed {seeds}"
    else:
        alignment, why = "unknown", ("the logs do not show per-model seeds (or share one, which inspect does not tie "
                                     "to a draw): the audit's measured check decides")
    meta = {"source": label, "format": "inspect", "harness": NAME,
            "harness_version": sorted({str(m["inspect_ai"]) for m in models.values() if m["inspect_ai"]}),
            "models": models, "tasks": tasks, "alignment_from": why, "score_rule": SCORE_RULE, DROPPED: notes,
            "assumed": ["prompt = (task, sample id); draw = epoch - 1",
                        "model = eval.model, or the last folder of model_args.model_path when eval.model is shared"]}
    return build_pool(rows, alignment=alignment, meta=meta, label=label)
