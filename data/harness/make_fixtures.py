"""Make the harness fixtures in ``data/harness/``: real lm-evaluation-harness and inspect_ai runs on the lab's models.

Runs in its own environment, never the project's (the harnesses are not project dependencies)::

    python3 -m venv /tmp/harness-venv
    /tmp/harness-venv/bin/pip install torch==2.13.0          # first: the CPU wheel
    /tmp/harness-venv/bin/pip install lm-eval inspect-ai transformers peft pandas pyarrow
    /tmp/harness-venv/bin/python data/harness/make_fixtures.py all --work /tmp/harness-work

Stages (each can be run alone; ``all`` runs them in order):

* ``models`` -- the lab's base model (``data/lab/models/main``) and three LoRA adapters merged into it with
  peft (``merge_and_unload``), each saved as an ordinary Hugging Face model folder (config, safetensors, fast
  tokenizer) under ``WORK/models/<name>``; loadable with ``transformers``' Auto classes.
* ``data`` -- 48 lab prompts (the first 24 test prompts of each task family, ``data/lab/prompts.parquet``) as a
  local JSON-lines dataset ``WORK/data/lab48.jsonl`` (``id``, ``text``, ``answer``, ``dataset``).
* ``lmeval`` -- ``lm_eval run`` on each model with a custom task (``repeats: 4``, ``generate_until``, sampling at
  temperature 1, ``exact_match``; lm-eval's default ``take_first`` pipeline, which scores draw 0 alone),
  ``--log_samples``, offline, twice: with lm-eval's default seeds (the same for every model) and with per-model
  seeds (``--seed S,S,S,S``). A third run (``lmeval-per-draw``, two models, default seeds, ``--limit 12``) uses the
  same task with one filter pipeline per draw (the last integer, then ``custom`` ``utils.draw<j>``), so that lm-eval
  scores every draw itself.
* ``inspect`` -- ``inspect eval`` on each model (``hf/local`` with ``model_path``), ``--epochs 4``, the same
  dataset (its first 12 prompts, ``--limit 12``), a ``match`` scorer on the last number, per-model ``--seed``,
  written as ``.eval`` logs and converted with ``inspect log convert --to json``; the JSON logs are kept without
  each sample's ``events`` (the transcript), rewritten by inspect_ai's ``write_eval_log``, then unindented. A tiny
  ``.eval`` log (2 samples, 2 epochs) is kept as it is.
* ``lighteval`` -- ``lighteval accelerate`` on each model from its own environment (``--lighteval-venv``), a custom
  task with pass@1 over n = 4 sampled responses, a ``seed`` per model, ``--save-details`` (see
  :func:`stage_lighteval` for what an offline run needed).
* ``opencompass`` -- ``opencompass CONFIG --dump-eval-details`` from its own environment (``--opencompass-venv``):
  the prompts as a custom dataset with ``n = 4`` copies and ``EMEvaluator``, the four models in one run (see
  :func:`stage_opencompass` for what an offline run needed).
* ``collect`` -- copies the small output files into ``data/harness/`` (the samples/results files, the JSON
  logs and one ``.eval`` log) and writes ``versions.json`` with the harness and library versions.

Nothing here is read by the tests: they read only the collected files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
LAB = ROOT / "data" / "lab"
#: model folder name -> adapter (None: the base model itself)
MODELS = {
    "lab-base": None,
    "lab-primary-light-s1": "primary-light-s1",
    "lab-secondary-light-s1": "secondary-light-s1",
    "lab-primary-stronger-s1": "primary-stronger-s1",
}
#: per-model seeds of the second lm-eval run (random, numpy, torch, fewshot)
MODEL_SEEDS = {"lab-base": 11, "lab-primary-light-s1": 12, "lab-secondary-light-s1": 13, "lab-primary-stronger-s1": 14}
N_PER_TASK = 24
K = 4
MAX_TOKENS = 8

TASK_YAML = """\
task: {task}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{text}}}}"
doc_to_target: "{{{{answer}}}}"
target_delimiter: ""
repeats: {k}
generation_kwargs:
  until: ["</s>", "\\n"]
  do_sample: true
  temperature: 1.0
  max_gen_toks: {max_tokens}
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: false
{filters}metadata:
  version: 1.0
"""

INSPECT_TASK = '''\
"""The lab's 48 prompts as an inspect_ai task: the prompt text as input, the integer answer as target."""

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset, FieldSpec
from inspect_ai.scorer import match
from inspect_ai.solver import generate


@task
def lab48():
    return Task(
        dataset=json_dataset({data!r}, FieldSpec(input="text", target="answer", id="id",
                                                metadata=["dataset"])),
        solver=generate(),
        scorer=match(location="end", numeric=True),
    )
'''


def per_draw_filters(k: int) -> str:
    """One filter pipeline per draw: the last integer of each response, then draw j's alone (``utils.draw<j>``)."""
    lines = ["filter_list:\n"]
    for j in range(k):
        lines += [f"  - name: draw{j}\n", "    filter:\n",
                  "      - function: regex\n", "        regex_pattern: \"(-?[0-9]+)(?!.*[0-9])\"\n",
                  "        group_select: 0\n", "        fallback: \"[invalid]\"\n",
                  "      - function: custom\n", f"        filter_fn: !function utils.draw{j}\n"]
    return "".join(lines)


def draw_utils(k: int) -> str:
    """``utils.py`` beside the task: ``draw<j>(resps, docs)`` keeps response j of every document."""
    out = ['"""Per-draw selection filters: draw j of every document\'s repeats."""\n']
    for j in range(k):
        out.append(f"\n\ndef draw{j}(resps, docs):\n    return [r[{j}] for r in resps]\n")
    return "".join(out)


def stage_models(work: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    base_dir = LAB / "models" / "main"
    for name, adapter in MODELS.items():
        out = work / "models" / name
        if (out / "config.json").is_file():
            continue
        model = AutoModelForCausalLM.from_pretrained(base_dir, local_files_only=True)
        if adapter is not None:
            model = PeftModel.from_pretrained(model, LAB / "adapters" / adapter).merge_and_unload()
        tok = AutoTokenizer.from_pretrained(base_dir, local_files_only=True)
        out.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(out, safe_serialization=True)
        tok.save_pretrained(out)
        shutil.copy(base_dir / "generation_config.json", out / "generation_config.json")
        print(f"model {name}: {out}")


def stage_data(work: Path) -> Path:
    import pandas as pd

    d = pd.read_parquet(LAB / "prompts.parquet")
    d = d[d["split"] == "test"].sort_values("id")
    rows = pd.concat([d[d["dataset"] == t].head(N_PER_TASK) for t in ("primary", "secondary")])
    out = work / "data" / "lab48.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as fh:
        for r in rows.itertuples():
            rec = {"id": r.id, "text": r.text, "answer": str(int(r.answer)), "dataset": r.dataset}
            fh.write(json.dumps(rec) + "\n")
    print(f"data: {len(rows)} prompts -> {out}")
    return out


def _env() -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1", INSPECT_DISPLAY="none")
    return env


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, env=_env(), cwd=cwd)


#: lm-eval runs: output folder -> (task, per-model seeds or None for lm-eval's defaults, --limit, models)
LMEVAL_RUNS = {
    "lmeval/default-seed": ("lab48", None, None, tuple(MODELS)),
    "lmeval/per-model-seed": ("lab48", MODEL_SEEDS, None, tuple(MODELS)),
    "lmeval-per-draw/default-seed": ("lab48_per_draw", None, 12, ("lab-base", "lab-primary-light-s1")),
}
#: inspect runs on the first INSPECT_LIMIT prompts (a log holds ~1 KB per sample even without its transcript)
INSPECT_LIMIT = 12


def stage_lmeval(work: Path) -> None:
    data = work / "data" / "lab48.jsonl"
    tasks = work / "lmeval_tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "lab48.yaml").write_text(TASK_YAML.format(task="lab48", data=data, k=K, max_tokens=MAX_TOKENS, filters=""))
    (tasks / "lab48_per_draw.yaml").write_text(TASK_YAML.format(task="lab48_per_draw", data=data, k=K,
                                                                max_tokens=MAX_TOKENS, filters=per_draw_filters(K)))
    (tasks / "utils.py").write_text(draw_utils(K))
    lm_eval = str(Path(sys.executable).parent / "lm_eval")
    for run, (task, seeds, limit, models) in LMEVAL_RUNS.items():
        out = work / run
        for name in models:
            if (out / name).is_dir() and any((out / name).rglob("samples_*.jsonl")):
                continue
            cmd = [lm_eval, "run", "--model", "hf",
                   "--model_args", f"pretrained={work / 'models' / name},dtype=float32,add_bos_token=True",
                   "--tasks", task, "--include_path", str(tasks), "--device", "cpu", "--batch_size", "16",
                   "--output_path", str(out / name), "--log_samples"]
            if seeds is not None:
                s = seeds[name]
                cmd += ["--seed", f"{s},{s},{s},{s}"]
            if limit is not None:
                cmd += ["--limit", str(limit)]
            _run(cmd)


def stage_inspect(work: Path) -> None:
    data = work / "data" / "lab48.jsonl"
    tdir = work / "inspect_task"
    tdir.mkdir(parents=True, exist_ok=True)
    (tdir / "lab48.py").write_text(INSPECT_TASK.format(data=str(data)))
    inspect = str(Path(sys.executable).parent / "inspect")
    logs = work / "inspect" / "logs"
    for i, name in enumerate(MODELS):
        done = logs / f".done-{name}"
        if done.is_file():
            continue
        # the lab's tokenizer has no chat template: the prompt text alone, as lm-eval sends it
        cfg = tdir / f"{name}.yaml"
        cfg.write_text(json.dumps({"model_path": str(work / "models" / name), "device": "cpu",
                                   "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"}))
        _run([inspect, "eval", "lab48.py", "--model", "hf/local", "--model-config", str(cfg),
              "--epochs", str(K), "--limit", str(INSPECT_LIMIT), "--temperature", "1.0",
              "--max-tokens", str(MAX_TOKENS), "--seed", str(100 + i), "--log-dir", str(logs), "--log-format", "eval",
              "--max-connections", "1",
              "--tags", name], cwd=tdir)
        done.write_text("")
    json_dir = work / "inspect" / "json"
    _run([inspect, "log", "convert", str(logs), "--to", "json", "--output-dir", str(json_dir), "--overwrite"])
    slim_logs(json_dir, work / "inspect" / "slim")
    tiny = work / "inspect" / "tiny"
    if not any(tiny.glob("*.eval")):
        _run([inspect, "eval", "lab48.py", "--model", "hf/local", "--model-config", str(tdir / "lab-base.yaml"),
              "--epochs", "2", "--limit", "2", "--temperature", "1.0", "--max-tokens", str(MAX_TOKENS), "--seed", "7",
              "--log-dir", str(tiny), "--log-format", "eval", "--max-connections", "1"], cwd=tdir)


def slim_logs(src: Path, dest: Path) -> None:
    """The JSON logs without each sample's ``events`` (the transcript, 80% of a log's bytes; no reader needs it),
    rewritten with inspect_ai's own ``write_eval_log`` and then without indentation."""
    from inspect_ai.log import read_eval_log, write_eval_log

    dest.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.glob("*.json")):
        log = read_eval_log(str(f))
        for smp in log.samples or []:
            smp.events = []
        write_eval_log(log, str(dest / f.name), format="json")
        obj = json.loads((dest / f.name).read_text(encoding="utf-8"))
        (dest / f.name).write_text(json.dumps(obj, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")


LIGHTEVAL_TASK = '''\
"""The lab's 48 prompts as a lighteval custom task: 4 sampled responses per prompt, pass@1 over them."""
from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc


def lab48_prompt(line, task_name: str = None):
    return Doc(task_name=task_name, query=line["text"], choices=[line["answer"]], gold_index=0)


lab48 = LightevalTaskConfig(
    name="lab48",
    prompt_function=lab48_prompt,
    hf_repo={data!r},
    hf_subset="default",
    hf_avail_splits=["test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    generation_size={max_tokens},
    stop_sequence=["\\n"],
    metrics=[Metrics.pass_at_k(sample_params={{"k": 1, "n": {k}}})],
    version=0,
)
TASKS_TABLE = [lab48]
'''
#: lighteval's per-model sampling seeds
LIGHTEVAL_SEEDS = {"lab-base": 21, "lab-primary-light-s1": 22, "lab-secondary-light-s1": 23,
                   "lab-primary-stronger-s1": 24}


def stage_lighteval(work: Path, venv: Path) -> None:
    """lighteval 0.13 in its own environment (``venv``), offline.

    Four things an offline run of lighteval 0.13.0 needed here, each worked around in the throwaway environment or
    in the run, never in the outputs: (1) it imports every bundled task module at start, and three of them reach the
    network on import (``tiny_benchmarks`` downloads a pickle: an empty placeholder file stops it; ``mt_bench`` and
    ``mix_eval`` packages and ``hle.py`` check a judge model on the Hub: moved aside); (2) it hashes str with xxhash,
    which xxhash 4 refuses (``pip install "xxhash<4"``); (3) it never sets ``do_sample``, so sampling n responses
    needs ``do_sample: true`` in the model's ``generation_config.json`` (copies of the model folders under
    ``WORK/models-sampling``); (4) ``max_new_tokens`` in ``generation_parameters`` caps the *prompt* at that many
    tokens, so the task's ``generation_size`` sets it instead."""
    lighteval = str(venv / "bin" / "lighteval")
    ds = work / "lighteval" / "ds"
    ds.mkdir(parents=True, exist_ok=True)
    shutil.copy(work / "data" / "lab48.jsonl", ds / "test.jsonl")
    task = work / "lighteval" / "lab48_task.py"
    task.write_text(LIGHTEVAL_TASK.format(data=str(ds), max_tokens=MAX_TOKENS, k=K))
    for name in MODELS:
        src, dst = work / "models" / name, work / "models-sampling" / name
        if not dst.is_dir():
            shutil.copytree(src, dst)
            gc = json.loads((dst / "generation_config.json").read_text())
            (dst / "generation_config.json").write_text(json.dumps({**gc, "do_sample": True}, indent=2))
        out = work / "lighteval" / "out"
        done = work / "lighteval" / f".done-{name}"
        if done.is_file():
            continue
        _run([lighteval, "accelerate",
              f"model_name={dst},dtype=float32,batch_size=16,"
              f"generation_parameters={{temperature:1.0,seed:{LIGHTEVAL_SEEDS[name]}}}",
              "lab48|0", "--custom-tasks", str(task), "--save-details", "--output-dir", str(out)],
             cwd=work / "lighteval")
        done.write_text("")


OPENCOMPASS_CONFIG = '''\
"""The lab's 48 prompts as an OpenCompass custom dataset, n = 4 copies, exact match, one HF model per lab model."""
from opencompass.datasets.custom import CustomDataset
from opencompass.models import HuggingFaceBaseModel
from opencompass.openicl.icl_evaluator import EMEvaluator
from opencompass.openicl.icl_inferencer import GenInferencer
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import ZeroRetriever

datasets = [
    dict(
        type=CustomDataset, abbr="lab48", path={data!r}, n={k}, k=1,
        reader_cfg=dict(input_columns=["question"], output_column="answer"),
        infer_cfg=dict(
            prompt_template=dict(type=PromptTemplate, template="{{question}}"),
            retriever=dict(type=ZeroRetriever),
            inferencer=dict(type=GenInferencer)),
        eval_cfg=dict(evaluator=dict(type=EMEvaluator)),
    )
]
models = [
{models}
]
'''


def stage_opencompass(work: Path, venv: Path) -> None:
    """OpenCompass 0.5.4 in its own environment (``venv``), offline, all four models in one run.

    What an offline run of OpenCompass 0.5.4 needed here: (1) ``pyarrow<18`` (OpenCompass pins numpy 1.x, newer
    pyarrow needs numpy 2) and ``transformers<5`` (its HF wrapper calls ``batch_encode_plus``); (2) copies of the model
    folders whose ``tokenizer_config.json`` names ``PreTrainedTokenizerFast`` (transformers 4 does not know the
    ``TokenizersBackend`` class transformers 5 writes) and ``model_input_names`` without ``token_type_ids``; (3) a
    Python config (``--dataset-num-runs`` fails on custom datasets, which have no ``n``); (4) the answer as a list
    (``EMEvaluator`` adds the reference to a list)."""
    oc = str(venv / "bin" / "opencompass")
    d = work / "opencompass"
    d.mkdir(parents=True, exist_ok=True)
    with open(work / "data" / "lab48.jsonl") as fh, open(d / "lab48.jsonl", "w") as out:
        for line in fh:
            r = json.loads(line)
            out.write(json.dumps({"question": r["text"], "answer": [r["answer"]]}) + "\n")
    entries = []
    for name in MODELS:
        dst = work / "models-oc" / name
        if not dst.is_dir():
            shutil.copytree(work / "models" / name, dst)
            tc = json.loads((dst / "tokenizer_config.json").read_text())
            tc.pop("backend", None)
            tc.update(tokenizer_class="PreTrainedTokenizerFast", model_input_names=["input_ids", "attention_mask"])
            (dst / "tokenizer_config.json").write_text(json.dumps(tc, indent=2))
        entries.append(f"    dict(type=HuggingFaceBaseModel, abbr={name!r}, path={str(dst)!r}, "
                       f"max_out_len={MAX_TOKENS}, max_seq_len=64, batch_size=16, run_cfg=dict(num_gpus=0), "
                       "generation_kwargs=dict(do_sample=True, temperature=1.0)),")
    cfg = d / "eval_lab48.py"
    cfg.write_text(OPENCOMPASS_CONFIG.format(data=str(d / "lab48.jsonl"), k=K, models="\n".join(entries)))
    if not any((d / "out").rglob("results/*/lab48.json")):
        _run([oc, str(cfg), "--dump-eval-details", "-w", str(d / "out")], cwd=d)


def _versions() -> dict:
    from importlib import metadata

    out = {}
    for pkg in ("lm_eval", "inspect_ai", "transformers", "torch", "peft", "datasets"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    for pkg, py in (("lighteval", "/tmp/lighteval-venv/bin/python"), ("opencompass", "/tmp/oc-venv/bin/python")):
        if Path(py).is_file():
            got = subprocess.run([py, "-c", f"from importlib.metadata import version as v; print(v({pkg!r}))"],
                                 capture_output=True, text=True)
            if got.returncode == 0:
                out[pkg] = got.stdout.strip()
    out["python"] = sys.version.split()[0]
    return out


def stage_collect(work: Path) -> None:
    dest = HERE
    for run, (_, _, _, models) in LMEVAL_RUNS.items():
        src = work / run
        for f in sorted(src.rglob("*")):
            if f.is_file() and f.suffix in (".json", ".jsonl") and f.relative_to(src).parts[0] in models:
                rel = f.relative_to(src)
                # <model>/<pretrained path, sanitized>/<file>: kept as <model>/<file>
                target = dest / run / rel.parts[0] / f.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(f, target)
    slim = work / "inspect" / "slim"
    if slim.is_dir():
        (dest / "inspect").mkdir(parents=True, exist_ok=True)
        for f in sorted(slim.glob("*.json")):
            shutil.copy(f, dest / "inspect" / f.name)
    tiny = sorted((work / "inspect" / "tiny").glob("*.eval"))
    if tiny:
        (dest / "inspect-eval").mkdir(parents=True, exist_ok=True)
        shutil.copy(tiny[0], dest / "inspect-eval" / tiny[0].name)
    details = work / "lighteval" / "out" / "details"
    for f in sorted(details.rglob("details_*.parquet")):
        model = f.parent.parent.name  # details/<model path>/<time>/details_<task>_<time>.parquet
        (dest / "lighteval" / model).mkdir(parents=True, exist_ok=True)
        shutil.copy(f, dest / "lighteval" / model / f.name.replace("|", "_"))
        res = next((work / "lighteval" / "out" / "results").rglob(f"results_{f.parent.name}.json"), None)
        if res is not None:
            shutil.copy(res, dest / "lighteval" / model / res.name)
    runs = sorted((work / "opencompass" / "out").glob("*/results"))
    if runs:  # the latest run's per-model details (results/<model>/<dataset>.json), not its predictions
        for f in sorted(runs[-1].glob("*/*.json")):
            (dest / "opencompass" / "results" / f.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copy(f, dest / "opencompass" / "results" / f.parent.name / f.name)
        # one model's predictions file, for the prompt text (the others' are the same prompts)
        pred = runs[-1].parent / "predictions" / "lab-base" / "lab48.json"
        (dest / "opencompass" / "predictions" / "lab-base").mkdir(parents=True, exist_ok=True)
        shutil.copy(pred, dest / "opencompass" / "predictions" / "lab-base" / pred.name)
    (dest / "versions.json").write_text(json.dumps(_versions(), indent=1) + "\n")
    print(f"collected into {dest}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stage", choices=["models", "data", "lmeval", "inspect", "lighteval", "opencompass", "collect",
                                      "all"])
    ap.add_argument("--work", type=Path, default=Path("/tmp/harness-work"))
    ap.add_argument("--lighteval-venv", type=Path, default=Path("/tmp/lighteval-venv"),
                    help="the environment with lighteval (it pins other versions than lm-eval)")
    ap.add_argument("--opencompass-venv", type=Path, default=Path("/tmp/oc-venv"),
                    help="the environment with opencompass (numpy 1, transformers 4)")
    a = ap.parse_args(argv)
    a.work.mkdir(parents=True, exist_ok=True)
    every = ["models", "data", "lmeval", "inspect", "lighteval", "opencompass", "collect"]
    todo = every if a.stage == "all" else [a.stage]
    for s in todo:
        if s == "models":
            stage_models(a.work)
        elif s == "data":
            stage_data(a.work)
        elif s == "lmeval":
            stage_lmeval(a.work)
        elif s == "inspect":
            stage_inspect(a.work)
        elif s == "lighteval":
            stage_lighteval(a.work, a.lighteval_venv)
        elif s == "opencompass":
            stage_opencompass(a.work, a.opencompass_venv)
        else:
            stage_collect(a.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
