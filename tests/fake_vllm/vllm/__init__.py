"""A fake vllm for CPU tests (see ../README.md). Not the real package."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np

from .logprobs import Logprob
from .lora.request import LoRARequest
from .outputs import CompletionOutput, RequestOutput
from .sampling_params import SamplingParams

__version__ = "0.0.0+fake"
__all__ = ["LLM", "SamplingParams", "RequestOutput", "CompletionOutput", "LoRARequest", "CALLS", "fake_completion"]

CALLS: list[dict] = []
EOS = 99
_CHARS = "0123456789 "


def fake_completion(prompt_token_ids, seed: int, lora_int_id: int, max_tokens: int, temperature: float = 1.0):
    """The fake engine's answer to one child request: (text, token_ids, logprobs per token,
    finish_reason); a pure function of its arguments."""
    key = [int(seed) & 0xFFFFFFFFFFFFFFFF, int(lora_int_id), zlib.crc32(json.dumps(list(prompt_token_ids)).encode())]
    rng = np.random.default_rng(key)
    length = int(rng.integers(1, max_tokens + 1))
    toks = rng.integers(0, len(_CHARS), length).tolist()
    lps = (-rng.exponential(1.0 + temperature, length)).tolist()
    if length < max_tokens:  # stopped by an end-of-sequence token, which counts as a token
        return "".join(_CHARS[t] for t in toks), toks + [EOS], lps + [-0.1], "stop"
    return "".join(_CHARS[t] for t in toks), toks, lps, "length"


class LLM:
    """Records its arguments; ``generate`` answers with :func:`fake_completion`."""

    def __init__(
        self,
        model: str,
        tokenizer: str | None = None,
        *,
        seed: int = 0,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        enable_lora: bool = False,
        max_lora_rank: int = 16,
        max_loras: int = 1,
        generation_config: str = "auto",
        **kwargs,
    ):
        if not (Path(model) / "config.json").is_file():
            raise ValueError(f"Invalid repository ID or local directory specified: {model!r}")
        if max_lora_rank not in (1, 8, 16, 32, 64, 128, 256, 320, 512):
            raise ValueError(f"max_lora_rank ({max_lora_rank}) must be one of the supported ranks")
        if int(tensor_parallel_size) < 1:
            raise ValueError("tensor_parallel_size must be >= 1")
        self.model = model
        self.seed = seed
        self.enable_lora = bool(enable_lora)
        self.max_lora_rank = max_lora_rank
        self.max_loras = max_loras
        CALLS.append(
            {
                "call": "LLM",
                "model": model,
                "tokenizer": tokenizer,
                "seed": seed,
                "tensor_parallel_size": tensor_parallel_size,
                "dtype": dtype,
                "enable_lora": enable_lora,
                "max_lora_rank": max_lora_rank,
                "max_loras": max_loras,
                "generation_config": generation_config,
                "kwargs": dict(kwargs),
            }
        )

    def _check_lora(self, lora):
        if lora is None:
            return 0
        if not isinstance(lora, LoRARequest):
            raise TypeError(f"lora_request must be a LoRARequest, got {type(lora).__name__}")
        if not self.enable_lora:
            raise ValueError(f"LoRA is not enabled! (got a request for {lora.lora_name!r})")
        cfg = json.loads((Path(lora.lora_path) / "adapter_config.json").read_text())
        if int(cfg["r"]) > self.max_lora_rank:
            raise ValueError(f"LoRA rank {cfg['r']} is greater than max_lora_rank {self.max_lora_rank}")
        return lora.lora_int_id

    def generate(self, prompts, sampling_params=None, *, use_tqdm=True, lora_request=None, priority=None):
        if not isinstance(prompts, (list, tuple)):
            prompts = [prompts]
        if sampling_params is None:
            sampling_params = SamplingParams()
        params = list(sampling_params) if isinstance(sampling_params, (list, tuple)) else [sampling_params] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError("The lengths of prompts and sampling_params must be the same.")
        loras = list(lora_request) if isinstance(lora_request, (list, tuple)) else [lora_request] * len(prompts)
        CALLS.append({"call": "generate", "prompts": list(prompts), "params": params, "lora": loras, "use_tqdm": use_tqdm})
        outs = []
        engine_rng = np.random.default_rng(self.seed)
        for rid, (prompt, sp, lora) in enumerate(zip(prompts, params, loras, strict=True)):
            lora_id = self._check_lora(lora)
            if isinstance(prompt, dict):
                ids = list(prompt["prompt_token_ids"])
                text = prompt.get("prompt")
            else:
                ids = [ord(c) % 97 for c in str(prompt)]
                text = str(prompt)
            comps = []
            for j in range(sp.n):
                child_seed = sp.seed + j if sp.seed is not None else int(engine_rng.integers(0, 2**31))
                t, toks, lps, reason = fake_completion(ids, child_seed, lora_id, sp.max_tokens, sp.temperature)
                logprobs = None
                cum = None
                if sp.logprobs is not None:
                    logprobs = [{tok: Logprob(logprob=lp, rank=1, decoded_token=None)} for tok, lp in zip(toks, lps, strict=True)]
                    cum = float(sum(lps))
                comps.append(CompletionOutput(j, t, toks, cum, logprobs, reason, None, lora))
            outs.append(RequestOutput(str(rid), text, ids, None, comps, True, lora_request=lora))
        return outs
