"""EleutherAI lm-evaluation-harness output (``lm_eval run ... --output_path OUT --log_samples``) as a Pool.

What lm-eval writes, per model: ``OUT/<model_name_sanitized>/results_<timestamp>.json`` (``model_name``,
``config.model_args``, the four seeds ``config.{random,numpy,torch,fewshot}_seed``, ``configs.<task>`` with
``repeats``, ``filter_list`` and ``metric_list``) and beside it one ``samples_<task>_<timestamp>.jsonl`` per task:
one line per (document, filter pipeline) with ``doc_id``, ``doc``, ``target``, ``arguments`` (the prompt),
``resps`` (``resps[0]``: the K raw responses of the document under ``repeats: K``), ``filtered_resps``,
``filter``, ``metrics`` and each metric's value for the filtered response, ``doc_hash``.

The reader takes an output folder (any depth: every ``results_*.json`` below it is one model's run), one model's
folder, or one samples file (the model from the sibling results file of the same timestamp). Prompts are
(task, doc_id), the task is the ``dataset`` column, the prompt text is the context the model saw.

Verdicts per draw, in this order:

1. *Per-draw filters* -- the task defines one filter pipeline per draw, each ending in a selection of one response
   (lm-eval's ``custom`` filter with a function returning ``r[j]``). A pipeline is matched to draw j when, on
   every document, its filtered response equals draw j's response put through the pipeline's own extraction
   steps (``regex``, ``lowercase``, ``uppercase``, ``remove_whitespace``); the verdict of draw j is the
   harness's own metric on that line.
2. *Re-graded* -- otherwise the task's one ``take_first`` pipeline (lm-eval's default, which scores draw 0
   alone) is applied to every draw and the draw graded with the task's metric when it is deterministic:
   ``exact_match`` with the task's ``regexes_to_ignore``/``ignore_case``/``ignore_punctuation``/``ignore_numbers``.
   Draw 0's re-grade must equal the harness's own score on every document, else the file is refused.
3. Otherwise refused, with the per-draw filter recipe (:data:`RECIPE`).

``multiple_choice`` tasks are scored by log-likelihood, which has no draws: k = 1, the verdict is ``acc``.

Alignment: runs whose seeds (``torch_seed``, and the rest) are set and equal for every model, with the same batch
size, drew with common random numbers: ``seed-aligned`` (lm-eval's default seeds are the same for every run).
Pairwise-different set seeds: ``independent``. Anything else: ``unknown`` (the audit measures it).
"""

from __future__ import annotations

import re
import string
from collections import defaultdict
from pathlib import Path

import pandas as pd

from ..pool import Pool
from ._common import (
    DROPPED,
    as_verdict,
    build_pool,
    files_below,
    first_jsonl_record,
    iter_jsonl,
    load_json,
    short_model_names,
)

NAME = "lm-eval"
SAMPLE_KEYS = ("doc_id", "resps", "filtered_resps")
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<ts>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
_RESULTS = re.compile(r"^results_(?P<ts>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.json$")
SEED_FIELDS = ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
_TRANSFORMS = ("regex", "lowercase", "uppercase", "remove_whitespace")
_DRAW_PICKERS = ("custom",)
#: Metrics re-graded here; every other metric needs per-draw filters.
REGRADABLE = ("exact_match",)

RECIPE = (
    "define one filter pipeline per draw in the task YAML so that lm-eval scores every draw itself: for j in "
    "0..K-1, `filter_list: - name: draw<j>  filter: [<your extraction steps, e.g. function: regex>, "
    "{function: custom, filter_fn: !function utils.draw<j>}]` with `def draw<j>(resps, docs): return [r[<j>] "
    "for r in resps]` in utils.py beside the YAML, then rerun with --log_samples"
)


# ---------------------------------------------------------------------------- recognising the files
def is_samples_record(rec) -> bool:
    return isinstance(rec, dict) and all(k in rec for k in SAMPLE_KEYS) and ("doc_hash" in rec or "filter" in rec)


def is_samples_file(path: Path) -> bool:
    return bool(_SAMPLES.match(path.name)) and is_samples_record(first_jsonl_record(path))


def is_results_object(obj) -> bool:
    return isinstance(obj, dict) and "configs" in obj and "results" in obj and ("lm_eval_version" in obj or
                                                                               "config" in obj)


def is_results_file(path: Path) -> bool:
    if not _RESULTS.match(path.name):
        return False
    try:
        return is_results_object(load_json(path, "an lm-eval results file"))
    except ValueError:
        return False


def folder_sample(path: Path) -> str | None:
    """The first lm-eval samples file below ``path`` (within the first entries a format check looks at), else None."""
    for f in files_below(path):
        if f.name.startswith("samples_") and f.suffix == ".jsonl" and is_samples_file(f):
            return str(f.relative_to(path))
    return None


# ---------------------------------------------------------------------------- the runs below a path
class _Run:
    """One model's run: its results file (or None) and its samples files by task."""

    def __init__(self, folder: Path, ts: str, results: Path | None):
        self.folder, self.ts, self.results_path = folder, ts, results
        self.samples: dict[str, Path] = {}
        self.results: dict = {}

    @property
    def label(self) -> str:
        return str(self.results_path or next(iter(self.samples.values())))


def _runs(path: Path) -> list[_Run]:
    if path.is_file():
        m = _SAMPLES.match(path.name)
        if not m:
            raise ValueError(f"{path} is not an lm-eval samples file (samples_<task>_<timestamp>.jsonl)")
        res = path.parent / f"results_{m['ts']}.json"
        run = _Run(path.parent, m["ts"], res if res.is_file() else None)
        run.samples[m["task"]] = path
        return [run]
    runs: dict[tuple[Path, str], _Run] = {}
    for f in sorted(path.rglob("results_*.json")):
        m = _RESULTS.match(f.name)
        if m and f.is_file():
            runs[(f.parent, m["ts"])] = _Run(f.parent, m["ts"], f)
    for f in sorted(path.rglob("samples_*.jsonl")):
        m = _SAMPLES.match(f.name)
        if not (m and f.is_file()):
            continue
        key = (f.parent, m["ts"])
        if key not in runs:
            runs[key] = _Run(f.parent, m["ts"], None)
        runs[key].samples[m["task"]] = f
    out = [r for r in runs.values() if r.samples]
    missing = [r for r in runs.values() if not r.samples]
    if not out:
        if missing:
            raise ValueError(f"{path}: lm-eval results files but no samples files (e.g. {missing[0].results_path}); "
                             "rerun lm_eval with --log_samples, which writes every response")
        raise ValueError(f"{path} holds no lm-eval samples files (samples_<task>_<timestamp>.jsonl)")
    return out


def _model_ref(run: _Run) -> tuple[str, str]:
    """(model reference, where it came from) of a run."""
    r = run.results
    args = (r.get("config") or {}).get("model_args")
    ref = None
    if isinstance(args, dict):
        ref = args.get("pretrained") or args.get("model") or args.get("path")
        if ref and args.get("peft"):
            ref = f"{ref}+{Path(str(args['peft'])).name}"
        if ref and args.get("lora_local_path"):
            ref = f"{ref}+{Path(str(args['lora_local_path'])).name}"
    elif isinstance(args, str):
        kv = dict(p.split("=", 1) for p in args.split(",") if "=" in p)
        ref = kv.get("pretrained") or kv.get("model")
    if ref:
        return str(ref), "results: config.model_args"
    if r.get("model_name"):
        return str(r["model_name"]), "results: model_name"
    return run.folder.name, f"the folder name {run.folder.name!r} (no results file beside the samples)"


# ---------------------------------------------------------------------------- lm-eval's own steps
def _regex(resp: str, step: dict) -> str:
    pattern = step.get("regex_pattern", r"#### (\-?[0-9\.\,]+)")
    group = int(step.get("group_select", 0))
    fallback = step.get("fallback", "[invalid]")
    found = re.findall(pattern, resp if isinstance(resp, str) else "")
    if not found:
        return fallback
    try:
        hit = found[group]
    except IndexError:
        return fallback
    if isinstance(hit, tuple):
        hit = next((h for h in hit if h), fallback)
    return hit.strip()


def _transform(resp: str, steps: list[dict]) -> str:
    for st in steps:
        fn = st.get("function")
        if fn == "regex":
            resp = _regex(resp, st)
        elif fn == "lowercase":
            resp = resp.lower()
        elif fn == "uppercase":
            resp = resp.upper()
        elif fn == "remove_whitespace":
            resp = resp.strip()
    return resp


def _exact_match(pred: str, refs: list[str], kw: dict) -> bool:
    """lm-eval's exact_match of one prediction against its reference(s) (any of several counts)."""
    def norm(x: str) -> str:
        for rx in kw.get("regexes_to_ignore") or []:
            x = re.sub(rx, "", x)
        if kw.get("ignore_case"):
            x = x.lower()
        if kw.get("ignore_punctuation"):
            x = x.translate(str.maketrans("", "", string.punctuation))
        if kw.get("ignore_numbers"):
            x = x.translate(str.maketrans("", "", string.digits))
        return x

    p = norm(str(pred))
    return any(p == norm(str(r)) for r in refs)


def _pipelines(cfg: dict) -> dict[str, list[dict]]:
    """Filter name -> its steps, from the task config (lm-eval's default: one ``take_first`` pipeline 'none')."""
    fl = cfg.get("filter_list")
    if not fl:
        return {"none": [{"function": "take_first"}]}
    out = {}
    for f in fl:
        if isinstance(f, dict) and "name" in f:
            out[str(f["name"])] = [s for s in (f.get("filter") or []) if isinstance(s, dict)]
    return out


def _kind(steps: list[dict]) -> str:
    """'take_first' (extraction steps then draw 0), 'picker' (extraction steps then a custom selection),
    or 'other' (a vote, top-k or unknown step: not one draw's verdict)."""
    fns = [s.get("function") for s in steps]
    if not fns:
        return "other"
    head, last = fns[:-1], fns[-1]
    if any(f not in _TRANSFORMS for f in head):
        return "other"
    if last == "take_first":
        return "take_first"
    if last in _DRAW_PICKERS:
        return "picker"
    return "other"


def _match_draws(cands: dict[str, set[int]], K: int) -> dict[int, str] | None:
    """A filter per draw 0..K-1 from each filter's possible draws (bipartite matching), or None."""
    owner: dict[int, str] = {}

    def place(f: str, seen: set[int]) -> bool:
        for j in sorted(cands[f]):
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = f
                return True
        return False

    for f in cands:
        place(f, set())
    return owner if len(owner) == K else None


# ---------------------------------------------------------------------------- one task of one run
def _task_rows(run: _Run, task: str, policy: str, *, which_filter, notes: list[str]):
    path = run.samples[task]
    cfg = (run.results.get("configs") or {}).get(task) or {}
    by_doc: dict = defaultdict(dict)  # doc_id -> filter -> record
    for ln, rec in iter_jsonl(path, "an lm-eval samples file"):
        if not all(k in rec for k in SAMPLE_KEYS):
            raise ValueError(f"{path}: line {ln} lacks {[k for k in SAMPLE_KEYS if k not in rec]}; not an lm-eval "
                             "samples line")
        f = str(rec.get("filter", "none"))
        if f in by_doc[rec["doc_id"]]:
            raise ValueError(f"{path}: line {ln} repeats document {rec['doc_id']} under filter {f!r}")
        rec["_line"] = ln
        by_doc[rec["doc_id"]][f] = rec
    if not by_doc:
        raise ValueError(f"{path} holds no samples")
    docs = sorted(by_doc, key=lambda d: (isinstance(d, str), d))
    first = next(iter(by_doc[docs[0]].values()))
    out_type = cfg.get("output_type") or ("multiple_choice" if "acc" in first else "generate_until")
    filters = list(dict.fromkeys(f for d in docs for f in by_doc[d]))
    for d in docs:
        if set(by_doc[d]) != set(filters):
            raise ValueError(f"{path}: document {d} has filters {sorted(by_doc[d])}, others {sorted(filters)}")
    metrics = [m for m in (first.get("metrics") or []) if m in first]
    if not metrics:
        metrics = [m["metric"] for m in cfg.get("metric_list") or []
                   if isinstance(m, dict) and m.get("metric") in first]
    info = {"task": task, "output_type": out_type, "filters": filters, "samples_file": str(path)}
    if out_type == "multiple_choice" or out_type.startswith("loglikelihood"):
        return _mc_rows(path, task, policy, by_doc, docs, filters, which_filter, info, notes)
    if out_type != "generate_until":
        raise ValueError(f"{path}: task {task!r} has output_type {out_type!r}; oraclegap reads generate_until "
                         "(k sampled responses) and multiple_choice tasks")
    K = len(first["resps"][0]) if first["resps"] and isinstance(first["resps"][0], list) else 1
    rep = cfg.get("repeats")
    if rep is not None and int(rep) != K:
        raise ValueError(f"{path}: task {task!r} says repeats {rep} but document {docs[0]} holds {K} responses")
    pipes = _pipelines(cfg)
    metric = _one_metric(metrics, path, task)
    info.update(repeats=K, metric=metric, generation_kwargs=cfg.get("generation_kwargs"))
    for d in docs:
        for f in filters:
            r = by_doc[d][f]["resps"]
            if not (isinstance(r, list) and r and isinstance(r[0], list) and len(r[0]) == K):
                raise ValueError(f"{path}: line {by_doc[d][f]['_line']} has resps of another shape than the "
                                 f"[[{K} responses]] of document {docs[0]}")
    resp = {d: [str(x) for x in by_doc[d][filters[0]]["resps"][0]] for d in docs}

    def filtered(d, f):
        v = by_doc[d][f]["filtered_resps"]
        return v[0] if isinstance(v, list) and len(v) == 1 else v

    def harness_verdict(d, f):
        rec = by_doc[d][f]
        return as_verdict(rec[metric], f"{path}: line {rec['_line']}", metric)

    if which_filter is not None:
        if which_filter not in filters:
            raise ValueError(f"lmeval_filter {which_filter!r} is not a filter of task {task!r} ({filters})")
        use = [which_filter]
    else:
        use = filters
    draw_of = None
    if K > 1:
        cands = {}
        for f in use:
            steps = pipes.get(f)
            if steps is None or _kind(steps) != "picker":
                continue
            ext = steps[:-1]
            c = set(range(K))
            for d in docs:
                fv = filtered(d, f)
                c &= {j for j in range(K) if isinstance(fv, str) and _transform(resp[d][j], ext) == fv}
                if not c:
                    break
            if c:
                cands[f] = c
        draw_of = _match_draws(cands, K) if len(cands) >= K else None
    if draw_of is not None:
        rows = [(d, j, harness_verdict(d, draw_of[j]), resp[d][j]) for d in docs for j in range(K)]
        unused = [f for f in filters if f not in draw_of.values()]
        info["verdicts_from"] = (f"per-draw filters {[draw_of[j] for j in range(K)]}: the harness's own "
                                 f"{metric} of draw j")
        if unused:
            notes.append(f"task {task}: filters {unused} not used (not one draw each)")
    else:
        tf = [f for f in use if pipes.get(f) is not None and _kind(pipes[f]) == "take_first"]
        if K == 1 and len(use) == 1:
            tf = list(use)
        if len(tf) != 1:
            what = (f"{len(tf)} take_first pipelines {tf}" if tf else "no take_first pipeline whose steps "
                    "oraclegap can repeat (regex, lowercase, uppercase, remove_whitespace)")
            if len(tf) > 1:
                raise ValueError(f"{path}: task {task!r} has {what}; choose one with lmeval_filter=NAME "
                                 "(CLI --lmeval-filter)")
            raise ValueError(f"{path}: task {task!r} (repeats {K}) has {what} and no per-draw filters, so only a "
                             f"summary of the {K} responses is scored; {RECIPE}")
        f = tf[0]
        if K > 1 and metric not in REGRADABLE:
            raise ValueError(f"{path}: task {task!r} (repeats {K}) scores only draw 0 ({f!r} takes the first "
                             f"response) and its metric {metric!r} is not one oraclegap re-grades "
                             f"({', '.join(REGRADABLE)}); {RECIPE}")
        if K == 1:
            rows = [(d, 0, harness_verdict(d, f), resp[d][0]) for d in docs]
            info["verdicts_from"] = f"the harness's own {metric} (filter {f!r}, one response per document)"
        else:
            kw = next((m for m in cfg.get("metric_list") or [] if isinstance(m, dict) and m.get("metric") == metric),
                      {})
            kw = {k: v for k, v in kw.items() if k in ("regexes_to_ignore", "ignore_case", "ignore_punctuation",
                                                      "ignore_numbers")}
            ext = pipes[f][:-1]
            rows, bad = [], []
            for d in docs:
                rec = by_doc[d][f]
                t = rec.get("target")
                refs = [str(x) for x in t] if isinstance(t, list) else [str(t)]
                vs = [_exact_match(_transform(resp[d][j], ext), refs, kw) for j in range(K)]
                if vs[0] != harness_verdict(d, f):
                    bad.append(d)
                rows += [(d, j, vs[j], resp[d][j]) for j in range(K)]
            if bad:
                raise ValueError(f"{path}: re-grading draw 0 of task {task!r} with {metric} {kw or ''} disagrees "
                                 f"with the harness's own score on {len(bad)} of {len(docs)} documents (first: "
                                 f"{bad[0]}); the task scores in a way oraclegap does not repeat; {RECIPE}")
            info["verdicts_from"] = (f"re-graded: filter {f!r}'s extraction steps applied to each of the {K} "
                                     f"responses, then {metric}{' ' + str(kw) if kw else ''} against the target "
                                     f"(draw 0 equals the harness's own score on all {len(docs)} documents)")
            others = [x for x in filters if x != f]
            if others:
                notes.append(f"task {task}: filters {others} not used")
    frame = pd.DataFrame(rows, columns=["doc_id", "draw", "correct", "answer"])
    texts = {d: _prompt_text(by_doc[d][filters[0]]) for d in docs}
    hashes = {d: by_doc[d][filters[0]].get("doc_hash") for d in docs}
    frame["text"] = frame["doc_id"].map(texts)
    frame["gold"] = frame["doc_id"].map({d: _gold(by_doc[d][filters[0]]) for d in docs})
    frame["doc_hash"] = frame["doc_id"].map(hashes)
    return frame, info


def _mc_rows(path, task, policy, by_doc, docs, filters, which_filter, info, notes):
    f = which_filter or (filters[0] if len(filters) == 1 else None)
    if f is None:
        raise ValueError(f"{path}: task {task!r} has filters {filters}; choose one with lmeval_filter=NAME "
                         "(CLI --lmeval-filter)")
    rows = []
    for d in docs:
        rec = by_doc[d][f]
        if "acc" not in rec:
            raise ValueError(f"{path}: line {rec['_line']} (multiple choice) has no 'acc' metric to read as the "
                             "verdict")
        rows.append((d, 0, as_verdict(rec["acc"], f"{path}: line {rec['_line']}", "acc"), ""))
    info.update(repeats=1, metric="acc", verdicts_from="the harness's own acc (log-likelihood choice: no draws)")
    frame = pd.DataFrame(rows, columns=["doc_id", "draw", "correct", "answer"])
    frame["text"] = frame["doc_id"].map({d: _prompt_text(by_doc[d][f]) for d in docs})
    frame["gold"] = frame["doc_id"].map({d: _gold(by_doc[d][f]) for d in docs})
    frame["doc_hash"] = frame["doc_id"].map({d: by_doc[d][f].get("doc_hash") for d in docs})
    return frame, info


def _gold(rec: dict) -> str:
    t = rec.get("target")
    return " | ".join(map(str, t)) if isinstance(t, list) else ("" if t is None else str(t))


def _one_metric(metrics: list[str], path: Path, task: str) -> str:
    if len(metrics) == 1:
        return metrics[0]
    for m in ("exact_match", "acc"):
        if m in metrics:
            return m
    raise ValueError(f"{path}: task {task!r} records metrics {metrics}; oraclegap needs one 0/1 metric per response")


def _prompt_text(rec: dict) -> str:
    args = rec.get("arguments")
    if isinstance(args, dict) and args:
        first = next(iter(args.values()))
        if isinstance(first, dict) and isinstance(first.get("arg_0"), str):
            return first["arg_0"]
    if isinstance(args, list) and args and isinstance(args[0], list) and args[0] and isinstance(args[0][0], str):
        return args[0][0]
    doc = rec.get("doc")
    return str(doc.get("question") or doc.get("text") or doc.get("prompt") or "") if isinstance(doc, dict) else ""


# ---------------------------------------------------------------------------- the reader
def read_lmeval(path, *, drop_incomplete: bool = False, lmeval_filter: str | None = None) -> Pool:
    """A Pool from lm-evaluation-harness output: an output folder, one model's folder or a samples file (see
    the module docstring for what is read and assumed). ``lmeval_filter`` names the filter pipeline to read when
    a task has several; ``drop_incomplete`` keeps only the prompts every model answered."""
    path = Path(path)
    label = str(path)
    runs = _runs(path)
    for run in runs:
        if run.results_path is not None:
            obj = load_json(run.results_path, "an lm-eval results file")
            if not is_results_object(obj):
                raise ValueError(f"{run.results_path} is not an lm-eval results file (no 'configs' and 'results')")
            run.results = obj
    refs = [_model_ref(r) for r in runs]
    names = short_model_names(list(dict.fromkeys(ref for ref, _ in refs)))
    notes: list[str] = []
    frames, tasks, models, seen = [], {}, {}, {}
    for run, (ref, source) in zip(runs, refs, strict=True):
        policy = names[ref]
        cfg = run.results.get("config") or {}
        seeds = {k: cfg.get(k) for k in SEED_FIELDS if k in cfg}
        models.setdefault(policy, {"reference": ref, "named_from": source, "runs": []})["runs"].append({
            "results": str(run.results_path) if run.results_path else None, "model_args": cfg.get("model_args"),
            "seeds": seeds, "batch_size": cfg.get("batch_size"), "lm_eval_version": run.results.get("lm_eval_version"),
        })
        for task in sorted(run.samples):
            key = (policy, task)
            if key in seen:
                raise ValueError(f"{label}: model {policy!r} ran task {task!r} twice ({seen[key]} and "
                                 f"{run.samples[task]}); each draw is counted once -- point at one run per model")
            seen[key] = run.samples[task]
            frame, info = _task_rows(run, task, policy, which_filter=lmeval_filter, notes=notes)
            frame.insert(0, "task", task)
            frame.insert(0, "policy", policy)
            frame["seed"] = seeds.get("torch_seed")
            frames.append(frame)
            prev = tasks.setdefault(task, info)
            if prev is not info and prev.get("repeats") != info.get("repeats"):
                raise ValueError(f"{label}: task {task!r} has repeats {prev.get('repeats')} in one run and "
                                 f"{info.get('repeats')} in another; every model needs the same k")
    rows = pd.concat(frames, ignore_index=True)
    ks = {t: i.get("repeats") for t, i in tasks.items()}
    if len(set(ks.values())) > 1:
        raise ValueError(f"{label}: the tasks have different numbers of draws per document ({ks}); read one task at a "
                         "time (point at its samples files)")
    rows["prompt_id"] = rows["task"] + "/" + rows["doc_id"].astype(str)
    rows["dataset"] = rows["task"]
    _check_same_docs(rows, label)
    if drop_incomplete:
        per = rows.groupby("prompt_id")["policy"].nunique()
        full = per.index[per == rows["policy"].nunique()]
        gone = len(per) - len(full)
        if gone:
            notes.append(f"{gone} prompts not answered by every model (drop_incomplete)")
        rows = rows[rows["prompt_id"].isin(full)]
    rows = rows.sort_values(["task", "doc_id", "policy", "draw"], kind="stable",
                            key=lambda c: c.map(lambda x: (isinstance(x, str), x)) if c.name == "doc_id" else c)
    alignment, why = _alignment(models)
    meta = {"source": label, "format": "lm-eval", "harness": NAME,
            "harness_version": sorted({r["lm_eval_version"] for m in models.values() for r in m["runs"]
                                       if r["lm_eval_version"]}),
            "models": models, "tasks": tasks, "alignment_from": why, DROPPED: notes,
            "assumed": ["prompt = (task, doc_id); its text is the context the model saw",
                        "draw j = the j-th of the K responses lm-eval stores for a document (resps[0][j])"]}
    return build_pool(rows.drop(columns=["doc_hash"]), alignment=alignment, meta=meta, label=label)


def _check_same_docs(rows: pd.DataFrame, label: str) -> None:
    h = rows.dropna(subset=["doc_hash"]).groupby("prompt_id")["doc_hash"].nunique()
    bad = h.index[h > 1]
    if len(bad):
        raise ValueError(f"{label}: document {bad[0]!r} differs between models (different doc_hash): the runs read "
                         "different data (dataset version, --limit or a changed task); point at runs of the same task")


def _alignment(models: dict) -> tuple[str, str]:
    runs = [r for m in models.values() for r in m["runs"]]
    if len(runs) < 2:
        return "unknown", "one model: alignment between models does not arise"
    seeds = [tuple(r["seeds"].get(k) for k in SEED_FIELDS) for r in runs]
    torch = [s[2] for s in seeds]
    if any(t is None for t in torch) or not all(r["seeds"] for r in runs):
        return "unknown", "a run's torch seed is unset or not recorded: the audit's measured check decides"
    batch = {str(r["batch_size"]) for r in runs}
    if len(set(seeds)) == 1 and len(batch) == 1:
        same = dict(zip(SEED_FIELDS, seeds[0], strict=True))
        return "seed-aligned", (f"every model ran with the same seeds {same} and batch "
                                f"size {batch.pop()}: draw j of a document used the same random stream")
    if len(set(torch)) == len(torch):
        return "independent", f"each model ran with its own torch seed {torch}"
    return "unknown", "some models share a torch seed and others do not: the audit's measured check decides"

