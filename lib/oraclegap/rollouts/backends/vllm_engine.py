"""The vllm backend (GPU machines): ``LLM`` with LoRA enabled when adapters are given,
``SamplingParams(n=k, seed=prompt_seed, ...)`` per prompt, LoRA policies as ``LoRARequest``.

Seeds: vllm's engine (V1) splits a request with ``n = k`` and a seed s into k child requests
whose seeds are ``s + j`` (j = 0..k-1), so draw j of a prompt is sampled with seed
``prompt_seed + j``, and that is the seed the store records. The request's seed is the one the
caller gives: the same under every policy with aligned draws (the seed alignment of paper
001), the policy's own with per-policy draws. Prompts go in as token ids (``{"prompt_token_ids": [...]}``), so both
backends see identical inputs; the model's ``generation_config.json`` sampling defaults are
switched off (``generation_config="vllm"``) so only the parameters given here apply.

vllm batches requests dynamically, so its responses are reproducible only as far as vllm's
own batching allows (per-request seeds fix the random stream, not the floating-point batch
shape). This module is tested against the fake ``vllm`` in ``tests/fake_vllm``; see the README.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from . import BASE, Completion, Sampling

__all__ = ["VllmBackend", "LORA_RANKS"]

# the max_lora_rank values vllm accepts
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


class VllmBackend:
    """A vllm ``LLM`` over the base model; adapters are served as LoRA requests."""

    name = "vllm"

    def __init__(
        self,
        model_dir: Path,
        adapters: Mapping[str, Path],
        *,
        seed: int = 0,
        tensor_parallel: int = 1,
        dtype=None,
        llm_kwargs: Mapping | None = None,
    ):
        try:
            import vllm
            from vllm.lora.request import LoRARequest
        except ImportError:
            raise ValueError(
                "backend 'vllm' needs the vllm package, which runs on GPU machines only: "
                "pip install -r requirements-gpu.txt in a separate environment (see the README)"
            ) from None
        self._vllm = vllm
        self.adapters = dict(adapters)
        self.tensor_parallel = int(tensor_parallel)
        self.dtype = str(dtype) if dtype is not None else "auto"
        kwargs = dict(
            model=str(model_dir),
            tokenizer=str(model_dir),
            seed=int(seed),
            tensor_parallel_size=self.tensor_parallel,
            dtype=self.dtype,
            generation_config="vllm",
        )
        if self.adapters:
            ranks = [int(json.loads((Path(p) / "adapter_config.json").read_text()).get("r", 8)) for p in self.adapters.values()]
            top = max(ranks)
            fit = [r for r in LORA_RANKS if r >= top]
            if not fit:
                raise ValueError(f"LoRA rank {top} exceeds vllm's largest max_lora_rank {LORA_RANKS[-1]}")
            kwargs.update(enable_lora=True, max_lora_rank=fit[0], max_loras=len(self.adapters))
        kwargs.update(llm_kwargs or {})
        try:
            self.llm = vllm.LLM(**kwargs)
        except (ValueError, TypeError, OSError, RuntimeError) as exc:
            raise ValueError(f"vllm could not load model directory {str(model_dir)!r}: {exc}") from None
        # stable positive ids, one per adapter, in the order given
        self.lora = {name: LoRARequest(name, i + 1, str(path)) for i, (name, path) in enumerate(self.adapters.items())}

    def generate(self, policy: str, requests, sampling: Sampling) -> list[list[Completion]]:
        """k completions per request (token ids, prompt seed) from one ``LLM.generate`` call."""
        if policy != BASE and policy not in self.lora:
            raise ValueError(f"unknown policy {policy!r}; adapters: {sorted(self.lora)}")
        sp = self._vllm.SamplingParams
        params = [
            sp(
                n=sampling.k,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                max_tokens=sampling.max_tokens,
                seed=int(seed),
                logprobs=1,
            )
            for _, seed in requests
        ]
        prompts = [{"prompt_token_ids": list(map(int, ids))} for ids, _ in requests]
        lora = None if policy == BASE else self.lora[policy]
        outs = self.llm.generate(prompts, params, lora_request=lora, use_tqdm=False)
        if len(outs) != len(requests):
            raise RuntimeError(f"vllm returned {len(outs)} outputs for {len(requests)} prompts")
        res = []
        for (ids, seed), ro in zip(requests, outs, strict=True):
            comps = sorted(ro.outputs, key=lambda c: c.index)
            if [c.index for c in comps] != list(range(sampling.k)):
                raise RuntimeError(f"vllm returned completions {[c.index for c in comps]} for n={sampling.k}")
            n_prompt = len(ro.prompt_token_ids) if ro.prompt_token_ids is not None else len(ids)
            res.append([_completion(c, n_prompt, int(seed) + c.index) for c in comps])
        return res


def _completion(c, n_prompt: int, seed: int) -> Completion:
    """A :class:`Completion` from a vllm ``CompletionOutput``."""
    toks = list(c.token_ids)
    n = len(toks)
    total = None
    if c.logprobs is not None and len(c.logprobs) == n:
        vals = []
        for tok, pos in zip(toks, c.logprobs, strict=True):
            entry = pos.get(tok) if pos is not None else None
            if entry is None:
                vals = None
                break
            vals.append(float(entry.logprob))
        total = None if vals is None else sum(vals)
    if total is None and c.cumulative_logprob is not None:
        total = float(c.cumulative_logprob)
    mean = total / n if (total is not None and n) else math.nan
    reason = c.finish_reason if c.finish_reason in ("stop", "length") else str(c.finish_reason)
    return Completion(
        text=c.text, prompt_tokens=int(n_prompt), completion_tokens=n, mean_logprob=mean, finish_reason=reason, seed=seed
    )
