"""The lab pipeline: tasks -> base models -> GRPO pools -> soups -> sampling -> pools, timed per stage.

``build(config, out)`` runs every stage and writes, under ``out`` (``data/lab/`` by default):

* ``prompts.parquet`` -- both task families' fixed prompt tables (id, text, answer, split, ...);
* ``models/<base>/`` -- the pretrained base models (ordinary transformers directories, tokenizer beside);
* ``adapters/<member>/`` -- one peft LoRA adapter per trained policy and per soup, with
  ``training_log.json`` (config, both config hashes, reward per step, wall time);
* ``pools/<name>/`` -- the sampled pools (:meth:`oraclegap.Pool.save`) with policy metadata
  (task, recipe, seed, base, soup), embeddings and training-log summaries;
* ``manifest.json`` -- the configuration and its hash, file hashes, time per stage, sanity
  numbers; ``build/`` (not committed) holds the rollout stores.

Every stage is resumable: an artifact is rebuilt only when the hash of everything it depends
on changed (``fresh=True`` rebuilds all). Jobs run in ``workers`` processes, each single-
threaded, so the outputs do not depend on the number of workers or the machine's load.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from .._io import atomic_write
from .._validate import check_int
from ..pool import Pool
from .grpo import Recipe, RunConfig
from .pretrain import PretrainConfig, config_hash
from .recipes import LabConfig, SampleSpec, full_config

__all__ = [
    "DEFAULT_OUT",
    "build",
    "file_hash",
    "policy_table",
    "sampling_prompts",
    "embed_prompts",
    "stack_prompts",
    "load_pool",
    "response_arrays",
    "save_pool",
    "retrain",
    "LAB_TASK",
]

REPO = Path(__file__).resolve().parents[3]
DEFAULT_OUT = REPO / "data" / "lab"
LAB_TASK = "integer"  # the rollouts task: the prompt verbatim, last integer, exact integer match


def file_hash(path) -> str:
    """sha256 (first 16 hex digits) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def _write_json(path: Path, obj) -> None:
    atomic_write(path, json.dumps(obj, indent=2, sort_keys=True, default=str))


def _read_json(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError):
        return None


# ----------------------------------------------------------------------------- parallel jobs
def _worker(fn: Callable, job: dict, queue) -> dict:
    return fn(job, queue.put)


def run_jobs(fn: Callable, jobs: list[dict], workers: int, desc: str, total: int, progress: bool, unit: str = "step") -> list:
    """Run ``fn(job, report)`` for every job, in ``workers`` spawned processes (inline for 1), with one progress bar.

    ``report(n)`` advances the bar by ``n`` units; ``total`` is the bar's length. Results come
    back in job order; the first failure is raised.
    """
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=desc, disable=not progress, unit=unit, file=sys.stdout)
    try:
        if workers <= 1 or len(jobs) <= 1:
            return [fn(job, bar.update) for job in jobs]
        import multiprocessing as mp
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        ctx = mp.get_context("spawn")
        with ctx.Manager() as mgr:
            q = mgr.Queue()
            with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx) as ex:
                futs = [ex.submit(_worker, fn, job, q) for job in jobs]
                pending = set(futs)
                while pending:
                    done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                    while not q.empty():
                        bar.update(q.get_nowait())
                    for f in done:
                        if f.exception() is not None:
                            for g in pending:
                                g.cancel()
                            raise f.exception()
                while not q.empty():
                    bar.update(q.get_nowait())
            return [f.result() for f in futs]
    finally:
        bar.close()


# ----------------------------------------------------------------------------- stage: tasks
def _stage_tasks(cfg: LabConfig, out: Path) -> pd.DataFrame:
    from .tasks import build_tasks

    df = build_tasks(cfg.task_seed)
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    atomic_write(out / "prompts.parquet", buf.getvalue())
    return df


def _training_prompts(tasks: pd.DataFrame, task: str) -> pd.DataFrame:
    """The ordered training list of ``task`` (hashed-id order)."""
    return tasks[(tasks["dataset"] == task) & (tasks["split"] == "train")].sort_values("id", kind="stable")


def sampling_prompts(tasks: pd.DataFrame, spec: SampleSpec, limit: int | None = None) -> pd.DataFrame:
    """The prompts a sampling job covers, in (task, split, id) order; ``limit`` keeps the first N per (task, split)."""
    parts = []
    for t in spec.tasks:
        for s in spec.splits:
            d = tasks[(tasks["dataset"] == t) & (tasks["split"] == s)].sort_values("id", kind="stable")
            if len(d) == 0:
                raise ValueError(f"sampling job {spec.name!r}: task {t!r} has no {s!r} prompts")
            parts.append(d if limit is None else d.head(limit))
    return pd.concat(parts, ignore_index=True)


# ----------------------------------------------------------------------------- stage: bases
def _pretrain_job(job: dict, report) -> dict:
    from .model import save_model
    from .pretrain import pretrain

    cfg = PretrainConfig(**{**job["config"], "weights": tuple(job["config"]["weights"])})
    model, tok, log = pretrain(cfg, exclude=set(job["exclude"]), progress=False, on_step=report)
    save_model(model, tok, job["out_dir"], info={"key": job["key"], "pretrain": log})
    return {"base": cfg.base, "wall_s": log["wall_s"]}


def _stage_bases(cfg: LabConfig, out: Path, tasks: pd.DataFrame, workers: int, fresh: bool, progress: bool) -> dict:
    held_out = sorted(tasks.loc[tasks["split"] != "train", "text"])
    jobs = []
    for name, pc in cfg.bases.items():
        d = pc.to_dict()
        d.pop("arch")
        key = config_hash({"pretrain": pc.to_dict(), "held_out": config_hash({"t": held_out})})
        out_dir = out / "models" / name
        info = _read_json(out_dir / "lab.json")
        if not fresh and info and info.get("key") == key and (out_dir / "model.safetensors").is_file():
            continue
        jobs.append({"config": d, "exclude": held_out, "out_dir": str(out_dir), "key": key})
    total = sum(j["config"]["steps"] for j in jobs)
    res = run_jobs(_pretrain_job, sorted(jobs, key=lambda j: -j["config"]["steps"]), workers, "pretrain bases", total, progress)
    return {"built": [r["base"] for r in res]}


# ----------------------------------------------------------------------------- stage: GRPO
def _grpo_job(job: dict, report) -> dict:
    from .grpo import train

    c = job["config"]
    cfg = RunConfig(c["base"], c["base_hash"], c["task"], c["prompts_hash"], Recipe(**c["recipe"]), c["seed"])
    _, log = train(
        job["base_dir"], job["prompts"], job["answers"], cfg, out_dir=job["out_dir"], progress=False, on_step=report,
        base_name=job["base_name"],
    )
    log_path = Path(job["out_dir"]) / "training_log.json"
    full = json.loads(log_path.read_text())
    full.update(job["meta"])
    _write_json(log_path, full)
    return {"member": job["meta"]["member"], "wall_s": log["wall_s"]}


def _run_configs(cfg: LabConfig, out: Path, tasks: pd.DataFrame) -> dict[str, tuple[RunConfig, dict]]:
    """Every trained member's RunConfig and metadata, from the config and the built bases."""
    runs = {}
    for spec in cfg.train:
        base_dir = out / "models" / spec.base
        bhash = file_hash(base_dir / "model.safetensors")
        tr = _training_prompts(tasks, spec.task)
        n = len(tr) if spec.recipe.n_prompts is None else min(spec.recipe.n_prompts, len(tr))
        phash = config_hash({"ids": tr["id"].head(n).tolist()})
        for seed in spec.seeds:
            rc = RunConfig(spec.base, bhash, spec.task, phash, spec.recipe, seed)
            meta = {"member": spec.member(seed), "train_pool": spec.name, "task": spec.task, "recipe": spec.recipe.name,
                    "seed": seed, "base": spec.base}
            runs[spec.member(seed)] = (rc, meta)
    return runs


def _stage_grpo(cfg: LabConfig, out: Path, tasks: pd.DataFrame, workers: int, fresh: bool, progress: bool) -> dict:
    runs = _run_configs(cfg, out, tasks)
    jobs = []
    for member, (rc, meta) in runs.items():
        out_dir = out / "adapters" / member
        log = _read_json(out_dir / "training_log.json")
        if not fresh and log and log.get("config_hash") == rc.full_hash() and (out_dir / "adapter_model.safetensors").is_file():
            continue
        tr = _training_prompts(tasks, rc.task)
        jobs.append({
            "config": rc.to_dict(), "base_dir": str(out / "models" / rc.base), "base_name": f"oraclegap-lab/{rc.base}",
            "prompts": tr["text"].tolist(), "answers": tr["answer"].astype(int).tolist(), "out_dir": str(out_dir), "meta": meta,
        })
    jobs.sort(key=lambda j: -j["config"]["recipe"]["steps"])
    total = sum(j["config"]["recipe"]["steps"] for j in jobs)
    run_jobs(_grpo_job, jobs, workers, "GRPO policies", total, progress)
    # only seed fields differ within a pool: check the recorded hashes
    hashes = {}
    from .recipes import check_pool_hashes

    for spec in cfg.train:
        logs = {m: _read_json(out / "adapters" / m / "training_log.json") for m in spec.members}
        hashes[spec.name] = check_pool_hashes(logs)
    return {"built": [j["meta"]["member"] for j in jobs], "config_hash_without_seed": hashes}


# ----------------------------------------------------------------------------- stage: soups
def _stage_soups(cfg: LabConfig, out: Path, fresh: bool) -> dict:
    from .soup import check_soup, make_soup

    res = {}
    for soup in cfg.soups:
        spec = cfg.train_spec(soup.of)
        dirs = [out / "adapters" / m for m in spec.members]
        key = config_hash({"members": [file_hash(d / "adapter_model.safetensors") for d in dirs]})
        out_dir = out / "adapters" / soup.name
        log = _read_json(out_dir / "training_log.json")
        if fresh or not log or log.get("key") != key:
            make_soup(out / "models" / spec.base, dirs, out_dir, info={
                "key": key, "member": soup.name, "soup_of_pool": soup.of, "task": spec.task, "recipe": spec.recipe.name,
                "base": spec.base, "base_name": f"oraclegap-lab/{spec.base}",
            })
        res[soup.name] = {"max_abs_diff_vs_explicit_mean": check_soup(out_dir, dirs)}
    return res


# ----------------------------------------------------------------------------- stage: sampling
def _sample_job(job: dict, report) -> dict:
    import torch

    from ..rollouts import generate
    from .model import quiet_transformers

    quiet_transformers()
    old = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread per job: the same responses whatever the machine
    try:
        generate(
            model=job["base_dir"], prompts=job["prompts"], task=LAB_TASK, k=job["k"], temperature=job["temperature"],
            top_p=1.0, max_tokens=job["max_tokens"], seed=job["seed"], adapters=job["adapters"],
            include_base=job["include_base"], out=job["store"], backend="transformers", worker=tuple(job["worker"]),
            draw_seeds=job["draw_seeds"],
            batch_size=job["batch_size"], device="cpu", progress=False,
        )
    finally:
        torch.set_num_threads(old)
    report(1)
    return {"store": job["store"], "worker": job["worker"]}


def _policy_names(spec: SampleSpec) -> list[str]:
    return (["base"] if spec.base_policy else []) + list(spec.policies)


def _stage_sample(cfg: LabConfig, out: Path, tasks: pd.DataFrame, workers: int, fresh: bool, progress: bool) -> dict:
    jobs = []
    for spec in cfg.samples:
        base_dir = out / "models" / spec.base
        prompts = sampling_prompts(tasks, spec, cfg.prompt_limit)
        adapters = {p: str(out / "adapters" / p) for p in spec.policies}
        from ..rollouts.generate import dir_digest

        key = config_hash({  # the rollouts store refuses a resumed call whose directories changed: start over then
            "spec": spec.__dict__, "base": dir_digest(base_dir),
            "adapters": {p: dir_digest(Path(d)) for p, d in adapters.items()},
            "prompts": prompts["id"].tolist(), "seed": cfg.sample_seed, "t": cfg.temperature, "max_tokens": cfg.max_tokens,
        })
        store = out / "build" / "stores" / spec.name
        key_file = out / "build" / "stores" / f"{spec.name}.key"
        if fresh or (key_file.is_file() and key_file.read_text() != key) or (store.exists() and not key_file.is_file()):
            shutil.rmtree(store, ignore_errors=True)
        key_file.parent.mkdir(parents=True, exist_ok=True)
        key_file.write_text(key)
        recs = [
            {"id": r.id, "prompt": r.text, "answer": str(int(r.answer)), "dataset": r.dataset, "split": r.split,
             "template": r.template, "operands": int(r.operands), "size": int(r.size)}
            for r in prompts.itertuples()
        ]
        n_parts = max(1, min(workers, len(recs)))
        for i in range(n_parts):
            jobs.append({
                "base_dir": str(base_dir), "prompts": recs, "k": spec.k, "temperature": cfg.temperature,
                "max_tokens": cfg.max_tokens, "seed": cfg.sample_seed, "adapters": adapters,
                "include_base": spec.base_policy, "store": str(store), "worker": [i, n_parts], "batch_size": 512,
                "draw_seeds": spec.draw_seeds,
            })
    run_jobs(_sample_job, jobs, workers, "sample pools", len(jobs), progress, unit="part")
    return {"jobs": len(jobs)}


# ----------------------------------------------------------------------------- stage: pools
def embed_prompts(base_dir, texts, batch: int = 256) -> np.ndarray:
    """Each prompt's embedding: the base model's final hidden state, mean-pooled over the prompt's tokens."""
    import torch

    from .model import load_model, load_tokenizer
    from .sampler import encode_prompts

    model, tok = load_model(base_dir), load_tokenizer(base_dir)
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        outs = []
        with torch.no_grad():
            for i in range(0, len(texts), batch):
                ids, att = encode_prompts(tok, texts[i : i + batch])
                pos = (att.cumsum(-1) - 1).clamp(min=0)
                h = model(input_ids=ids, attention_mask=att, position_ids=pos, output_hidden_states=True).hidden_states[-1]
                m = att.unsqueeze(-1).to(h.dtype)
                outs.append(((h * m).sum(1) / m.sum(1)).double().numpy())
    finally:
        torch.set_num_threads(old)
    return np.concatenate(outs, axis=0)


def stack_prompts(pools: list[Pool]) -> Pool:
    """One pool from pools that share their policies (same order) and k, stacking their prompts."""
    if len(pools) == 1:
        return pools[0]
    first = pools[0]
    for p in pools[1:]:
        if p.policy_names != first.policy_names or p.k != first.k:
            raise ValueError("pools to stack must have the same policies (in order) and the same k")

    def cat(name):
        vals = [getattr(p, name) for p in pools]
        return None if any(v is None for v in vals) else np.concatenate(vals, axis=0)

    return Pool(
        verdicts=np.concatenate([p.verdicts for p in pools], axis=0),
        prompts=pd.concat([p.prompts for p in pools], ignore_index=True),
        policies=first.policies,
        answers=cat("answers"),
        embeddings=cat("embeddings"),
        cost=cat("cost"),
        alignment=first.alignment if all(p.alignment == first.alignment for p in pools) else "unknown",
        meta=dict(first.meta),
    )


def policy_table(out: Path, names: list[str], base: str) -> pd.DataFrame:
    """Policy metadata for ``names`` from the saved adapters' logs: task, recipe, seed, base, soup, training summary."""
    from .model import load_model, n_parameters

    size = n_parameters(load_model(out / "models" / base))
    rows = []
    for name in names:
        if name == "base":
            rows.append({"name": name, "base": base, "dataset": None, "recipe": None, "seed": None, "size": size,
                         "role": "base", "soup": False, "train_pool": None, "lora_rank": 0})
            continue
        d = out / "adapters" / name
        log = _read_json(d / "training_log.json") or {}
        acfg = _read_json(d / "adapter_config.json") or {}
        soup = "soup_of" in log
        row = {"name": name, "base": log.get("base", base), "dataset": log.get("task"), "recipe": log.get("recipe"),
               "seed": None if soup else log.get("seed"), "size": size, "role": "soup" if soup else "member",
               "soup": soup, "train_pool": log.get("soup_of_pool") if soup else log.get("train_pool"),
               "lora_rank": acfg.get("r")}
        if not soup:
            row.update({"config_hash": log.get("config_hash"), "config_hash_without_seed": log.get("config_hash_without_seed"),
                        "train_steps": len(log.get("reward_per_step", [])), "train_prompts": log.get("n_train_prompts"),
                        "train_reward_first_tenth": log.get("reward_first_tenth"),
                        "train_reward_last_tenth": log.get("reward_last_tenth")})
        rows.append(row)
    df = pd.DataFrame(rows)
    df["seed"] = df["seed"].astype("Int64")
    return df


RESPONSES_FILE = "responses.npz"
PER_RESPONSE = ("confidence", "completion_tokens")


def _split_meta(pool: Pool) -> tuple[Pool, dict[str, np.ndarray]]:
    """Take the store's per-response arrays out of the pool into compact arrays for ``responses.npz``
    (confidence float32, completion tokens int16); the draw seeds are checked against the
    rollouts rule and replaced by the rule's text in ``meta``."""
    import dataclasses

    meta = dict(pool.meta)
    per = dict(pool.per_response)
    arrays = {}
    if "confidence" in per:
        arrays["confidence"] = per.pop("confidence").astype(np.float32)
    if "completion_tokens" in per:
        arrays["completion_tokens"] = per.pop("completion_tokens").astype(np.int16)
    seeds = per.pop("seed", None)
    if seeds is not None:
        from ..rollouts.generate import SEED_RULES, prompt_seed

        sd = np.asarray(seeds, dtype=np.int64)
        sampling = meta.get("sampling", {})
        base_seed, mode = int(sampling.get("seed", 0)), sampling.get("draw_seeds", "aligned")
        ids, names = pool.prompt_ids, pool.policy_names
        expect = np.array([[prompt_seed(base_seed, pid, m if mode == "per-policy" else None) for m in names] for pid in ids],
                          dtype=np.int64)
        if not (sd == expect[:, :, None] + np.arange(pool.k)[None, None, :]).all():
            raise RuntimeError(f"stored draw seeds do not follow the rollouts seed rule ({mode!r} draw seeds)")
        meta["seed_rule"] = SEED_RULES[mode]
        meta["draw_seeds"] = mode
    return dataclasses.replace(pool, meta=meta, per_response=per), arrays


def _response_texts(store, pool: Pool) -> np.ndarray:
    """The stored response texts [n, M, k] of a rollout store, in the pool's prompt and policy order."""
    from ..rollouts import Store

    df = Store(store).to_frame()
    pi = pd.Index(pool.prompt_ids).get_indexer(df["prompt_id"].astype(str))
    mi = pd.Index(pool.policy_names).get_indexer(df["policy"].astype(str))
    if (pi < 0).any() or (mi < 0).any() or len(df) != pool.verdicts.size:
        raise RuntimeError(f"store {str(store)!r} does not match its pool")
    texts = np.full(pool.shape, "", dtype=object)
    texts[pi, mi, df["sample"].to_numpy(dtype=np.int64)] = df["text"].fillna("").astype(str).to_numpy()
    return texts.astype(str)


def save_pool(pool: Pool, path, arrays: dict[str, np.ndarray]) -> Path:
    """``Pool.save`` plus the per-response arrays (confidence float32, completion tokens int16, response text) in ``responses.npz``."""
    path = Path(pool.save(path, overwrite=True))
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    atomic_write(path / RESPONSES_FILE, buf.getvalue())
    return path


def _stage_pools(cfg: LabConfig, out: Path, tasks: pd.DataFrame) -> dict:
    import dataclasses

    specs = {s.name: s for s in cfg.samples}
    made = {}
    for pool_name, sample_names in cfg.pools.items():
        parts, extras = [], []
        for s in sample_names:
            p = Pool.from_store(out / "build" / "stores" / s)
            if p.policy_names != _policy_names(specs[s]):
                raise RuntimeError(f"store {s!r} holds policies {p.policy_names}, expected {_policy_names(specs[s])}")
            p, arr = _split_meta(p)
            arr["text"] = _response_texts(out / "build" / "stores" / s, p)
            parts.append(p)
            extras.append(arr)
        base = specs[sample_names[0]].base
        pool = stack_prompts(parts)
        arrays = {k: np.concatenate([e[k] for e in extras], axis=0) for k in extras[0]}
        emb = embed_prompts(out / "models" / base, pool.prompts["text"].tolist())
        pol = policy_table(out, pool.policy_names, base)
        meta = dict(pool.meta)
        meta["lab"] = {
            "pool": pool_name, "config": cfg.name, "config_hash": cfg.hash(), "samples": list(sample_names),
            "base_model": f"models/{base}", "embeddings": "base model final hidden state, mean over prompt tokens",
            "per_response_arrays": {k: f"{RESPONSES_FILE}:{k}" for k in arrays},
        }
        meta.pop("store", None)
        pool = dataclasses.replace(pool, policies=pol, embeddings=emb, meta=meta)
        save_pool(pool, out / "pools" / pool_name, arrays)
        made[pool_name] = list(pool.shape)
    return made


# ----------------------------------------------------------------------------- driver
STAGES = ("tasks", "bases", "grpo", "soups", "sample", "pools")


def build(config: LabConfig | None = None, out=None, workers: int | None = None, fresh: bool = False,
          progress: bool = True, stages=STAGES, echo: Callable[[str], None] | None = print) -> dict:
    """Build the lab for ``config`` (default: :func:`~oraclegap.lab.recipes.full_config`) into ``out``; returns the manifest.

    ``workers``: processes for training and sampling (default: the machine's CPU count, at
    most 4); each job is single-threaded, so the outputs do not depend on it. ``echo`` prints
    one line per stage with its wall time.
    """
    cfg = config or full_config()
    out = Path(out) if out is not None else DEFAULT_OUT
    workers = check_int(workers if workers is not None else min(4, os.cpu_count() or 1), "workers", minimum=1)
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise ValueError(f"stages must be among {STAGES}, got {unknown}")
    out.mkdir(parents=True, exist_ok=True)
    manifest = {} if fresh else (_read_json(out / "manifest.json") or {})
    manifest.update({"format": "oraclegap.lab", "config_name": cfg.name, "config_hash": cfg.hash(), "config": cfg.to_dict()})
    times = manifest.setdefault("stage_seconds", {})
    results = manifest.setdefault("stages", {})
    t_all = time.perf_counter()
    tasks = None
    for stage in STAGES:
        if stage not in stages and stage != "tasks":
            continue
        t0 = time.perf_counter()
        if stage == "tasks":
            tasks = _stage_tasks(cfg, out)
            results["tasks"] = {"n_prompts": len(tasks)}
        elif stage == "bases":
            results["bases"] = _stage_bases(cfg, out, tasks, workers, fresh, progress)
        elif stage == "grpo":
            results["grpo"] = _stage_grpo(cfg, out, tasks, workers, fresh, progress)
        elif stage == "soups":
            results["soups"] = _stage_soups(cfg, out, fresh)
        elif stage == "sample":
            results["sample"] = _stage_sample(cfg, out, tasks, workers, fresh, progress)
        elif stage == "pools":
            results["pools"] = _stage_pools(cfg, out, tasks)
        times[stage] = round(time.perf_counter() - t0, 2)
        if echo:
            echo(f"[lab] stage {stage:<6} {times[stage]:8.1f} s")
        _write_json(out / "manifest.json", manifest)
    manifest["total_seconds"] = round(time.perf_counter() - t_all, 2)
    manifest["files"] = {
        str(p.relative_to(out)): file_hash(p)
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.relative_to(out).parts[0] not in ("build", "reference")
        and p.name != "manifest.json" and not p.name.startswith(".")
    }
    _write_json(out / "manifest.json", manifest)
    if echo:
        echo(f"[lab] total        {manifest['total_seconds']:8.1f} s  ({workers} workers) -> {out}")
    return manifest


def load_pool(name: str, lab_dir=None) -> Pool:
    """A lab pool by name (``cross``, ``primary-extra``, ``primary-k64``, ``secondary-k64``, ``small``,
    ``primary-aligned``), or a pool directory.

    The per-response confidences (mean token log-probability; NaN where a completion was empty)
    and completion token counts are put into ``pool.per_response`` as arrays [n, M, k], as
    :meth:`Pool.from_store` gives them.
    """
    lab_dir = Path(lab_dir) if lab_dir is not None else DEFAULT_OUT
    path = Path(name) if Path(name).is_dir() and (Path(name) / "manifest.json").is_file() else lab_dir / "pools" / name
    if not path.is_dir():
        have = sorted(p.name for p in (lab_dir / "pools").iterdir()) if (lab_dir / "pools").is_dir() else []
        raise ValueError(f"no lab pool {name!r} in {str(lab_dir)!r}; available: {have or '(none; run make lab)'}")
    pool = Pool.load(path)
    if (path / RESPONSES_FILE).is_file():
        import dataclasses

        per = dict(pool.per_response)
        with np.load(path / RESPONSES_FILE, allow_pickle=False) as z:
            if "confidence" in z.files:
                per["confidence"] = z["confidence"].astype(float)
            if "completion_tokens" in z.files:
                per["completion_tokens"] = z["completion_tokens"].astype(np.int64)
        pool = dataclasses.replace(pool, per_response=per)
    return pool


def response_arrays(name: str, lab_dir=None) -> dict[str, np.ndarray]:
    """The per-response arrays of a lab pool, each [n, M, k]: ``confidence`` (mean token log-probability; NaN: empty
    completion), ``completion_tokens`` and ``text`` (the response as generated)."""
    lab_dir = Path(lab_dir) if lab_dir is not None else DEFAULT_OUT
    path = Path(name) if Path(name).is_dir() else lab_dir / "pools" / name
    with np.load(path / RESPONSES_FILE, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def retrain(pool: str = "primary-light", seeds=(101, 102), *, steps: int | None = None, splits=("test",), k: int = 16,
            out=None, lab_dir=None, workers: int | None = None, include_base: bool = True, progress: bool = True,
            echo: Callable[[str], None] | None = print) -> Pool:
    """Retrain one training pool of the full lab with new ``seeds`` from the committed base model, and sample it.

    The recipe, base model and training prompts are those of ``pool`` in
    :func:`~oraclegap.lab.recipes.full_config` (``steps`` may shorten the run); only the
    seeds differ, so the new members are exchangeable with the committed ones. The new
    policies (and the base, with ``include_base``) are sampled ``k`` times on the pool's task
    prompts of ``splits`` through :mod:`oraclegap.rollouts`. Returns the new :class:`Pool`
    (also saved under ``out/pools/retrain``; ``out`` defaults to a fresh temporary directory).
    """
    import dataclasses
    import tempfile

    from .recipes import SampleSpec, TrainSpec

    full = full_config()
    spec = full.train_spec(pool)
    seeds = tuple(check_int(s, "seeds", minimum=0) for s in (seeds if not isinstance(seeds, int) else [seeds]))
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct non-negative integers, got {seeds!r}")
    k = check_int(k, "k", minimum=1)
    recipe = spec.recipe if steps is None else dataclasses.replace(spec.recipe, steps=check_int(steps, "steps", minimum=1))
    lab_dir = Path(lab_dir) if lab_dir is not None else DEFAULT_OUT
    base_src = lab_dir / "models" / spec.base
    if not (base_src / "model.safetensors").is_file():
        raise ValueError(f"no committed base model at {str(base_src)!r}; run make lab first")
    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="oraclegap-retrain-"))
    if not (out / "models" / spec.base / "model.safetensors").is_file() or file_hash(
        out / "models" / spec.base / "model.safetensors"
    ) != file_hash(base_src / "model.safetensors"):
        shutil.rmtree(out / "models" / spec.base, ignore_errors=True)
        shutil.copytree(base_src, out / "models" / spec.base)
    tspec = TrainSpec(spec.name, spec.base, spec.task, recipe, seeds)
    sspec = SampleSpec("retrain", spec.base, (spec.task,), tuple(splits), tuple(tspec.members), k, base_policy=include_base)
    cfg = dataclasses.replace(full, name=f"retrain-{pool}", bases={}, train=(tspec,), soups=(), samples=(sspec,),
                              pools={"retrain": ("retrain",)})
    build(cfg, out, workers=workers, progress=progress, stages=("grpo", "sample", "pools"), echo=echo)
    return load_pool("retrain", out)
