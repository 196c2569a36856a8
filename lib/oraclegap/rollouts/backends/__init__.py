"""Generation backends behind one interface: ``transformers`` (CPU or GPU) and ``vllm`` (GPU).

A backend is built once per run for a base model and its LoRA adapters, and answers
``generate(policy, requests, sampling)``: for each request (prompt token ids, prompt seed) the
k completions, draw j sampled with seed ``prompt_seed + j``. The caller picks the prompt seed
(the same under every policy for aligned draws, the policy's own for per-policy draws;
:func:`oraclegap.rollouts.generate`), so both backends honour either mode by construction. Both backends take the same token
ids (the prompt template and chat template are applied once, by the caller), the same seeds and
the same sampling parameters, and return the same :class:`Completion` records.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "BASE",
    "Sampling",
    "Completion",
    "check_adapter",
    "check_model_dir",
    "make_backend",
    "BACKENDS",
]

BASE = "base"
BACKENDS = ("transformers", "vllm")


@dataclasses.dataclass(frozen=True)
class Sampling:
    """Sampling parameters: k draws per prompt, temperature (0 = greedy), nucleus top_p, max_tokens."""

    k: int
    temperature: float
    top_p: float
    max_tokens: int


@dataclasses.dataclass(frozen=True)
class Completion:
    """One sampled response: text (special tokens removed), token counts, the mean
    log-probability of its generated tokens under the model (temperature 1, no top-p; NaN for
    an empty completion), why it ended ("stop" at an end-of-sequence token, "length" at
    max_tokens) and the seed of its draw."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    mean_logprob: float
    finish_reason: str
    seed: int


def check_model_dir(model) -> Path:
    """A local model directory (with config.json), or ``ValueError``."""
    if not isinstance(model, (str, Path)) or not str(model):
        raise TypeError(f"model must be a path to a model directory, got {model!r}")
    path = Path(model)
    if not path.is_dir():
        raise ValueError(f"model directory {str(path)!r} does not exist (models load offline from a local directory)")
    if not (path / "config.json").is_file():
        raise ValueError(f"model directory {str(path)!r} does not load: it has no config.json")
    return path


def check_adapter(name: str, path) -> dict:
    """Check that ``path`` is a saved LoRA adapter (peft's ``adapter_config.json`` with
    ``peft_type`` LORA and a weights file); return its config."""
    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise ValueError(f"adapter name must be a non-empty string without '/', got {name!r}")
    if name == BASE:
        raise ValueError(f"adapter name {BASE!r} is reserved for the base model; rename the adapter")
    p = Path(path)
    if not p.is_dir():
        raise ValueError(f"adapter {name!r}: path {str(p)!r} is not a directory (expected a saved LoRA adapter)")
    cfg_path = p / "adapter_config.json"
    if not cfg_path.is_file():
        raise ValueError(f"adapter {name!r} at {str(p)!r} is not a LoRA adapter: it has no adapter_config.json")
    try:
        cfg = json.loads(cfg_path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"adapter {name!r}: {str(cfg_path)!r} is not valid JSON ({exc})") from None
    if not isinstance(cfg, Mapping) or str(cfg.get("peft_type", "")).upper() != "LORA":
        kind = cfg.get("peft_type") if isinstance(cfg, Mapping) else None
        raise ValueError(f"adapter {name!r} at {str(p)!r} is not a LoRA adapter (peft_type={kind!r})")
    if not any((p / f).is_file() for f in ("adapter_model.safetensors", "adapter_model.bin")):
        raise ValueError(f"adapter {name!r} at {str(p)!r} has no adapter_model.safetensors (or .bin) weights file")
    return dict(cfg)


def make_backend(
    name: str,
    model_dir: Path,
    adapters: Mapping[str, Path],
    *,
    tokenizer,
    device: str = "cpu",
    dtype: str | None = None,
    seed: int = 0,
    tensor_parallel: int = 1,
    vllm_kwargs: Mapping | None = None,
):
    """Build the named backend (models are loaded here, once)."""
    if name == "transformers":
        from .hf import TransformersBackend

        if tensor_parallel != 1:
            raise ValueError("tensor_parallel applies to the vllm backend only; the transformers backend runs on one device")
        return TransformersBackend(model_dir, adapters, tokenizer=tokenizer, device=device, dtype=dtype)
    if name == "vllm":
        from .vllm_engine import VllmBackend

        return VllmBackend(
            model_dir, adapters, seed=seed, tensor_parallel=tensor_parallel, dtype=dtype, llm_kwargs=dict(vllm_kwargs or {})
        )
    raise ValueError(f"unknown backend {name!r}; choose one of {BACKENDS}")


def mean_or_nan(total: float, count: int) -> float:
    """``total / count``, NaN when ``count`` is 0."""
    return float(total) / count if count else math.nan
