"""Fake ``vllm.sampling_params.SamplingParams`` with vllm's argument checks."""

from __future__ import annotations


class SamplingParams:
    def __init__(
        self,
        n: int = 1,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        max_tokens: int | None = 16,
        seed: int | None = None,
        logprobs: int | None = None,
        **kwargs,
    ):
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}.")
        if temperature < 0.0:
            raise ValueError(f"temperature must be non-negative, got {temperature}.")
        if not 0.0 < top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}.")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}.")
        if logprobs is not None and logprobs < 0:
            raise ValueError(f"logprobs must be non-negative, got {logprobs}.")
        self.n = n
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.max_tokens = max_tokens
        self.seed = seed
        self.logprobs = logprobs
        self.extra = dict(kwargs)

    def __repr__(self) -> str:
        return (
            f"SamplingParams(n={self.n}, temperature={self.temperature}, top_p={self.top_p}, "
            f"max_tokens={self.max_tokens}, seed={self.seed}, logprobs={self.logprobs})"
        )
