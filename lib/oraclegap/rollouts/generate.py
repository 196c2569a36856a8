"""``generate``: k responses per prompt and policy into a resumable, shardable store.

One run = a base model (a local directory), optional LoRA adapters (each a policy; the bare
base model is policy ``"base"``), a prompt file, a task (template + verifier) and sampling
parameters. The work is cut into chunks (``prompts_per_chunk = max(1, batch_size // k)``
consecutive prompts under one policy, all k draws of each), which are the unit of batching,
of resumption and of the worker partition: worker i of n takes the chunks ``c % n == i``.

Seeds (``draw_seeds``). ``"aligned"`` (paper 001's seed-aligned protocol, the default): draw j
of prompt i uses seed ``prompt_seed(seed, id_i) + j`` under every policy, where ``prompt_seed``
is the top 62 bits of a BLAKE2b hash of (seed, prompt id): the policies share their random
numbers (common random numbers), which paper 001's seed-aligned O_exp estimator uses.
``"per-policy"``: draw j of prompt i under policy m uses ``prompt_seed(seed, id_i, m) + j``, a
hash of (seed, policy name, prompt id), so no two policies share a seed and their draws are
independent given the policies -- what paper 000's re-deal and margin-preserving nulls (and any
test that assumes independent draws) need. Either way seeds depend only on (seed, [policy,]
prompt id, j), never on batch, worker or resume point; the mode is part of the store's
identity, and every response's seed is stored.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import math
import platform
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .. import _store
from .._validate import check_int
from . import backends as _backends
from .prompts import canonical_lines, load_prompts, prompts_digest
from .store import Store, now_iso
from .tasks import get_task

__all__ = ["generate", "prompt_seed", "draw_seed", "parse_worker", "dir_digest", "SEED_RULE", "SEED_RULES", "DRAW_SEEDS",
           "check_draw_seeds"]

#: The draw-seed modes of :func:`generate`: shared seeds across policies, or each policy its own.
DRAW_SEEDS = ("aligned", "per-policy")
#: The seed rule of each mode (recorded in a store's manifest identity).
SEED_RULES = {
    "aligned": "draw j of prompt i: blake2b-64('oraclegap.rollouts', seed, prompt id) >> 2, plus j",
    "per-policy": "draw j of prompt i under policy m: blake2b-64('oraclegap.rollouts.per-policy', seed, policy name m, "
    "prompt id) >> 2, plus j",
}
SEED_RULE = (
    f"aligned (the same seed for draw j under every policy; seed-aligned draws): {SEED_RULES['aligned']}. "
    f"per-policy (each policy its own seeds; independent draws): {SEED_RULES['per-policy']}"
)
_STREAMS = {
    "transformers": "numpy default_rng(draw seed): one uniform per generated token, inverse CDF",
    "vllm": "SamplingParams(n=k, seed=draw-0 seed); vllm gives child j the seed + j",
}


def prompt_seed(seed: int, prompt_id: str, policy: str | None = None) -> int:
    """The seed of draw 0 of a prompt: a 62-bit hash of (seed, prompt id), the same under every
    policy (``policy=None``, aligned draws), or of (seed, policy name, prompt id) (per-policy draws)."""
    if policy is None:
        key = f"oraclegap.rollouts\x00{int(seed)}\x00{prompt_id}"
    else:
        key = f"oraclegap.rollouts.per-policy\x00{int(seed)}\x00{policy}\x00{prompt_id}"
    h = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") >> 2


def draw_seed(seed: int, prompt_id: str, j: int, policy: str | None = None) -> int:
    """The seed of draw j of a prompt: ``prompt_seed(seed, prompt_id, policy) + j`` (with
    ``policy=None`` the aligned seed, the same under every policy)."""
    return prompt_seed(seed, prompt_id, policy) + int(j)


def check_draw_seeds(draw_seeds) -> str:
    """``"aligned"`` or ``"per-policy"``, or a ``ValueError`` naming the choices."""
    if not isinstance(draw_seeds, str) or draw_seeds not in DRAW_SEEDS:
        raise ValueError(f"draw_seeds must be one of {DRAW_SEEDS} ('aligned': the same seed for draw j under every "
                         f"policy; 'per-policy': each policy its own seeds), got {draw_seeds!r}")
    return draw_seeds


def parse_worker(worker) -> tuple[int, int] | None:
    """``None``, ``(i, n)`` or ``"i/n"`` -> ``(i, n)`` with ``0 <= i < n``."""
    if worker is None:
        return None
    if isinstance(worker, str):
        parts = worker.split("/")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"worker must look like 'i/n' (e.g. '0/4'), got {worker!r}")
        worker = (int(parts[0]), int(parts[1]))
    if not (isinstance(worker, (tuple, list)) and len(worker) == 2):
        raise TypeError(f"worker must be None, (i, n) or 'i/n', got {worker!r}")
    i, n = (check_int(v, name) for v, name in zip(worker, ("worker index i", "worker count n"), strict=True))
    if n < 1 or not (0 <= i < n):
        raise ValueError(f"worker must satisfy 0 <= i < n, got {i}/{n}")
    return i, n


def dir_digest(path: Path) -> str:
    """SHA-256 over every regular file of a directory (relative path, size, content hash), hidden
    files and folders excluded: the content hash of a model or adapter directory."""
    path = Path(path)
    outer = hashlib.sha256()
    files = sorted(
        p for p in path.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )
    for f in files:
        h = hashlib.sha256()
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 24), b""):
                h.update(block)
        outer.update(f"{f.relative_to(path).as_posix()}\x00{f.stat().st_size}\x00{h.hexdigest()}\n".encode())
    return outer.hexdigest()


def _version(pkg: str) -> str | None:
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return None


def _check_float(value, name: str, lo: float, hi: float | None = None, lo_open: bool = False) -> float:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < lo or (lo_open and v == lo) or (hi is not None and v > hi):
        rng = f"{'(' if lo_open else '['}{lo}, {hi if hi is not None else 'inf'}{']' if hi is not None else ')'}"
        raise ValueError(f"{name} must lie in {rng}, got {value!r}")
    return v


def _load_tokenizer(model_dir: Path):
    try:
        from transformers import AutoTokenizer
    except ImportError:  # pragma: no cover
        raise ImportError("rollouts need transformers: pip install -e '.[rollouts]'") from None
    try:
        return AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    except Exception as exc:  # many error types for unloadable directories
        raise ValueError(f"model directory {str(model_dir)!r} does not load: its tokenizer fails ({exc})") from None


def render_prompts(records, task, tokenizer, chat_template: bool | None):
    """Token ids per prompt: the task template filled in, then the tokenizer's chat template
    (a single user turn plus the generation prompt) when it has one and ``chat_template`` is not
    False. Returns (ids per prompt id, whether the chat template was used)."""
    has = bool(getattr(tokenizer, "chat_template", None))
    if chat_template is True and not has:
        raise ValueError("chat_template=True, but the model's tokenizer has no chat template")
    use = has if chat_template is None else bool(chat_template)
    out = {}
    for r in records:
        text = task.render(r)
        if use:
            text = tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True)
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        else:
            ids = tokenizer(text)["input_ids"]
        if not ids:
            raise ValueError(f"prompt {r['id']!r} tokenizes to nothing")
        out[r["id"]] = [int(t) for t in ids]
    return out, use


def generate(
    model,
    prompts,
    task,
    *,
    out,
    k: int = 16,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_tokens: int = 64,
    seed: int = 0,
    draw_seeds: str = "aligned",
    adapters: Mapping[str, str] | None = None,
    include_base: bool = False,
    backend: str = "transformers",
    worker=None,
    batch_size: int = 64,
    device: str = "cpu",
    progress: bool = True,
    tensor_parallel: int = 1,
    dtype: str | None = None,
    chat_template: bool | None = None,
    vllm_kwargs: Mapping | None = None,
) -> Store:
    """Sample ``k`` responses per prompt and policy, verify them, and store them in ``out``.

    Each response is stored with its prompt id, policy, sample index j, seed, text, parsed
    answer (None when the task's extractor finds none: a wrong answer, counted), verdict, prompt
    and completion token counts, mean token log-probability (a confidence) and finish reason.
    ``adapters`` maps policy names to LoRA adapter directories; with none, the base model is the
    only policy, and ``include_base=True`` adds it beside the adapters. Rerunning the same call
    resumes (completed chunks are skipped); a call with different settings on the same ``out``
    is refused with the differences named. ``worker=(i, n)`` (or ``"i/n"``) generates only that
    worker's share, so n processes can fill one store. Returns the :class:`Store`.

    ``draw_seeds`` (see the module docstring): ``"aligned"`` gives draw j of a prompt the same
    seed under every policy (paper 001's seed-aligned protocol: common random numbers, for its
    seed-aligned O_exp estimator); ``"per-policy"`` derives each policy's seeds from its name as
    well, so the policies' draws are independent -- use it for paper 000's nulls and any test
    that assumes independent draws. The mode is part of the store's identity.
    """
    k = check_int(k, "k", minimum=1)
    temperature = _check_float(temperature, "temperature", 0.0)
    top_p = _check_float(top_p, "top_p", 0.0, 1.0, lo_open=True)
    max_tokens = check_int(max_tokens, "max_tokens", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    draw_seeds = check_draw_seeds(draw_seeds)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    tensor_parallel = check_int(tensor_parallel, "tensor_parallel", minimum=1)
    if backend not in _backends.BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {_backends.BACKENDS}")
    if not isinstance(include_base, bool):
        raise TypeError(f"include_base must be True or False, got {include_base!r}")
    if out is None or not str(out):
        raise ValueError("out must name the store directory")
    out = Store.check_target(out)
    worker = parse_worker(worker)
    task = get_task(task)
    records = load_prompts(prompts)
    for r in records:  # a gold answer the task cannot read fails here, before any generation
        try:
            g = task.gold(r["answer"])
            task.check(g, g)
        except ValueError as exc:
            raise ValueError(f"prompt {r['id']!r}: gold answer is unusable for task {task.name!r}: {exc}") from None
    model_dir = _backends.check_model_dir(model)
    if adapters is not None and not isinstance(adapters, Mapping):
        raise TypeError(f"adapters must map policy names to LoRA adapter directories, got {type(adapters).__name__}")
    adapters = dict(adapters or {})
    adapter_dirs = {}
    for name, path in adapters.items():
        _backends.check_adapter(name, path)
        adapter_dirs[name] = Path(path)
    policies = ([_backends.BASE] if (include_base or not adapters) else []) + list(adapters)
    tokenizer = _load_tokenizer(model_dir)
    token_ids, used_chat = render_prompts(records, task, tokenizer, chat_template)

    if backend == "transformers":
        import torch

        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError):
            raise ValueError(f"device must be a torch device such as 'cpu', 'cuda' or 'cuda:1', got {device!r}") from None
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {device!r} was asked for, but this torch sees no CUDA device")
        dtype_name = dtype or ("bfloat16" if dev.type == "cuda" and torch.cuda.is_bf16_supported() else "float32")
        backend_id = {"name": "transformers", "device": dev.type, "dtype": dtype_name, "tensor_parallel": 1}
        if tensor_parallel != 1:
            raise ValueError("tensor_parallel applies to the vllm backend only; the transformers backend runs on one device")
        versions = {p: _version(p) for p in ("oraclegap", "torch", "transformers", "peft", "math-verify")}
    else:
        backend_id = {"name": "vllm", "device": "cuda", "dtype": dtype or "auto", "tensor_parallel": tensor_parallel}
        dtype_name = backend_id["dtype"]
        versions = {p: _version(p) for p in ("oraclegap", "vllm", "torch", "transformers", "math-verify")}
    lines = canonical_lines(records)
    identity = {
        "model": {"name": model_dir.name, "sha256": dir_digest(model_dir)},
        "policies": [
            {"name": m, "adapter_sha256": None if m == _backends.BASE else dir_digest(adapter_dirs[m])} for m in policies
        ],
        "task": {"name": task.name, "template": task.template},
        "prompts": {"n": len(records), "sha256": prompts_digest(records)},
        "sampling": {"k": k, "temperature": temperature, "top_p": top_p, "max_tokens": max_tokens, "seed": seed,
                     "draw_seeds": draw_seeds},
        "seeds": {"rule": SEED_RULES[draw_seeds], "stream": _STREAMS[backend]},
        "template": {
            "chat": used_chat,
            "chat_template_sha256": hashlib.sha256(tokenizer.chat_template.encode()).hexdigest() if used_chat else None,
        },
        "backend": backend_id,
        "layout": {"batch_size": batch_size, "prompts_per_chunk": max(1, batch_size // k)},
        "versions": versions,
    }
    info = {
        "created": now_iso(),
        "model_path": str(model_dir.resolve()),
        "adapter_paths": {m: str(p.resolve()) for m, p in adapter_dirs.items()},
        "prompts_source": str(prompts) if isinstance(prompts, (str, Path)) else "(in memory)",
        "host": platform.node(),
    }
    # the work: every chunk this worker owns that no shard holds yet (an existing store must
    # match this run's identity before anything is read from it)
    tag = _store.worker_tag(*(worker or (0, 1)))
    layout = _store.chunk_layout({"identity": identity}, [r["id"] for r in records])
    done: set[int] = set()
    if (out / _store.MANIFEST).exists():
        done = Store.open_or_create(out, identity, info, lines).committed_chunks()
    todo = [c for c in Store.owned(len(layout), worker) if c not in done]
    engine = None
    if todo:  # load the model before creating a store, so a model that fails to load leaves none
        engine = _backends.make_backend(
            backend,
            model_dir,
            adapter_dirs,
            tokenizer=tokenizer,
            device=device,
            dtype=dtype_name if backend == "transformers" else dtype,
            seed=seed,
            tensor_parallel=tensor_parallel,
            vllm_kwargs=vllm_kwargs,
        )
    store = Store.open_or_create(out, identity, info, lines)
    store.clean_temps(tag)
    if not todo:
        return store
    sampling = _backends.Sampling(k=k, temperature=temperature, top_p=top_p, max_tokens=max_tokens)
    gold = {r["id"]: r["answer"] for r in records}
    from tqdm.auto import tqdm

    total = sum(len(layout[c][1]) * k for c in todo)
    bar = tqdm(total=total, unit="resp", desc=f"rollouts {tag}", disable=not progress, smoothing=0.1)
    try:
        for c in todo:
            policy, pids = layout[c]
            own = policy if draw_seeds == "per-policy" else None  # per-policy: the policy's own seeds
            requests = [(token_ids[p], prompt_seed(seed, p, own)) for p in pids]
            comps = engine.generate(policy, requests, sampling)
            store.write_chunk(c, tag, _rows(task, policy, pids, comps, gold))
            bar.update(len(pids) * k)
    finally:
        bar.close()
    return store


def _rows(task, policy: str, pids, comps, gold) -> pd.DataFrame:
    """One chunk's responses, verified, in the store's schema."""
    recs = []
    for pid, cell in zip(pids, comps, strict=True):
        for j, c in enumerate(cell):
            v = task.verdict(c.text, gold[pid])
            recs.append(
                {
                    "prompt_id": pid,
                    "policy": policy,
                    "sample": j,
                    "seed": int(c.seed),
                    "text": c.text,
                    "answer": v.answer,
                    "parsed": v.parsed,
                    "correct": v.correct,
                    "prompt_tokens": int(c.prompt_tokens),
                    "completion_tokens": int(c.completion_tokens),
                    "mean_logprob": float(c.mean_logprob),
                    "finish_reason": c.finish_reason,
                }
            )
    return pd.DataFrame.from_records(recs)

