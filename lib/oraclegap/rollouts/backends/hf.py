"""The transformers backend: batched ``generate`` with the KV cache, left padding, LoRA
adapters through peft, and per-draw random streams.

Why per-draw streams. ``generate(do_sample=True)`` draws every row's next token from one
global generator, so a response would depend on which other rows share its batch (and so on
the batch size, the worker partition and where a killed run resumed). Here each draw has its
own stream instead: row r (prompt i, draw j) gets the uniforms ``u[r, t]`` of
``numpy.random.default_rng(prompt_seed_i + j)`` (the prompt seed the caller gives: shared
across policies for aligned draws, the policy's own for per-policy draws), one per generated position t, and its token
at position t is the inverse-CDF draw of ``u[r, t]`` from that row's temperature-scaled,
top-p-truncated next-token distribution. The draw is made inside ``generate`` by a logits
processor that leaves a single admissible token per row, which greedy decoding then takes;
``generate`` still provides the batching, the KV cache and the padding.

What remains batch-dependent is floating-point rounding: a row's logits can differ in the
last bits with the padding length and the shape of the batch it is computed in. The caller
therefore always computes a chunk (fixed prompts, fixed policy, all k draws) as one batch, so
a chunk's responses are the same whatever else ran, on the same device, dtype and library
versions (all recorded in the store's manifest).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import BASE, Completion, Sampling

__all__ = ["TransformersBackend", "RowSampler", "row_uniforms"]


def row_uniforms(seeds, n_steps: int) -> np.ndarray:
    """Uniforms [rows, n_steps] on [0, 1): row r from ``numpy.random.default_rng(seeds[r])``."""
    return np.stack([np.random.default_rng(int(s)).random(n_steps) for s in seeds]) if len(seeds) else np.zeros((0, n_steps))


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is in the rollouts extra
        raise ImportError("the transformers backend needs torch, transformers and peft: pip install -e '.[rollouts]'") from None
    return torch


class RowSampler:
    """A logits processor that samples each row from its own uniforms.

    At generated position t the row's raw logits z give the reported log-probability
    ``log_softmax(z)[token]``; the token itself is drawn from ``softmax(z / temperature)``
    restricted to the smallest set of most likely tokens whose mass reaches ``top_p``
    (temperature 0: the arg-max), by inverting that distribution's CDF at ``u[row, t]``.
    The returned scores are 0 for the drawn token and -inf elsewhere.
    """

    def __init__(self, uniforms, prompt_len: int, temperature: float, top_p: float):
        torch = _torch()
        self.u = uniforms
        self.prompt_len = int(prompt_len)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.tokens: list = []
        self.logprobs: list = []
        self._torch = torch

    def __call__(self, input_ids, scores):
        torch = self._torch
        t = input_ids.shape[1] - self.prompt_len
        logits = scores.float()
        lp = torch.log_softmax(logits, dim=-1)
        if self.temperature == 0.0:
            choice = torch.argmax(logits, dim=-1)
        else:
            p = torch.softmax(logits.double() / self.temperature, dim=-1)
            if self.top_p < 1.0:  # the nucleus: most likely tokens first, the first always kept
                sp, si = torch.sort(p, dim=-1, descending=True, stable=True)
                cum = sp.cumsum(dim=-1)
                cum = (sp * ((cum - sp) < self.top_p)).cumsum(dim=-1)
            else:  # no truncation: invert the CDF in vocabulary order (no sort needed)
                cum = p.cumsum(dim=-1)
            total = cum[:, -1:]
            # first position whose cumulative mass exceeds u * total; never past the token that
            # completes the mass (so a rounding of u * total up to total cannot pick a zero)
            last = (cum < total).sum(dim=-1, keepdim=True)
            pos = torch.minimum(torch.searchsorted(cum, self.u[:, t : t + 1] * total, right=True), last)
            choice = si.gather(1, pos)[:, 0] if self.top_p < 1.0 else pos[:, 0]
        self.tokens.append(choice)
        self.logprobs.append(lp.gather(1, choice[:, None])[:, 0])
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(1, choice[:, None], 0.0)
        return out


class TransformersBackend:
    """Base model plus LoRA adapters (peft), loaded once; ``generate`` switches adapters
    without reloading the base."""

    name = "transformers"

    def __init__(self, model_dir: Path, adapters: Mapping[str, Path], *, tokenizer, device: str = "cpu", dtype=None):
        torch = _torch()
        from transformers import AutoModelForCausalLM, GenerationConfig, LogitsProcessorList

        self.tokenizer = tokenizer
        self.device = torch.device(device)
        if dtype is None:
            dtype = "bfloat16" if self.device.type == "cuda" and torch.cuda.is_bf16_supported() else "float32"
        tdtype = getattr(torch, str(dtype), None)
        if not isinstance(tdtype, torch.dtype):
            raise ValueError(f"dtype must name a torch floating dtype (float32, bfloat16, float16), got {dtype!r}")
        self.dtype = str(dtype)
        try:
            model = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True, dtype=tdtype)
        except Exception as exc:  # transformers raises many types for unloadable directories
            raise ValueError(f"model directory {str(model_dir)!r} does not load as a causal LM: {exc}") from None
        eos = model.generation_config.eos_token_id if model.generation_config is not None else None
        eos_ids = set(eos if isinstance(eos, (list, tuple)) else ([] if eos is None else [eos]))
        if tokenizer.eos_token_id is not None:
            eos_ids.add(int(tokenizer.eos_token_id))
        if not eos_ids:
            raise ValueError(f"model {str(model_dir)!r} defines no end-of-sequence token (generation_config or tokenizer)")
        self.eos_ids = sorted(int(e) for e in eos_ids)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else self.eos_ids[0]
        # a clean generation config: the model's own sampling defaults (repetition penalty,
        # top-k, ...) must not alter the distribution the row sampler draws from
        model.generation_config = GenerationConfig(eos_token_id=self.eos_ids, pad_token_id=self.pad_id)
        self._gen_config = GenerationConfig
        self._processors = LogitsProcessorList
        self.adapters = dict(adapters)
        if self.adapters:
            from peft import PeftModel

            items = list(self.adapters.items())
            try:
                with warnings.catch_warnings():  # peft queries a deprecated transformers property
                    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
                    model = PeftModel.from_pretrained(model, str(items[0][1]), adapter_name=items[0][0], is_trainable=False)
                    for name, path in items[1:]:
                        model.load_adapter(str(path), adapter_name=name, is_trainable=False)
            except Exception as exc:
                raise ValueError(f"a LoRA adapter does not load onto {str(model_dir)!r}: {exc}") from None
        model.eval()
        self.model = model.to(self.device)

    def _policy(self, policy: str):
        if policy == BASE:
            if self.adapters:
                return self.model.disable_adapter()
            return contextlib.nullcontext()
        if policy not in self.adapters:
            raise ValueError(f"unknown policy {policy!r}; adapters: {sorted(self.adapters)}")
        self.model.set_adapter(policy)
        return contextlib.nullcontext()

    def generate(self, policy: str, requests, sampling: Sampling) -> list[list[Completion]]:
        """k completions per request (token ids, prompt seed), all rows in one batch."""
        torch = _torch()
        k, T = sampling.k, sampling.max_tokens
        lens = [len(ids) for ids, _ in requests]
        L = max(lens)
        R = len(requests) * k
        seeds = [int(s) + j for _, s in requests for j in range(k)]
        ids = torch.full((R, L), self.pad_id, dtype=torch.long)
        mask = torch.zeros((R, L), dtype=torch.long)
        for i, (tok, _) in enumerate(requests):  # left padding
            ids[i * k : (i + 1) * k, L - len(tok) :] = torch.tensor(tok, dtype=torch.long)
            mask[i * k : (i + 1) * k, L - len(tok) :] = 1
        u = torch.from_numpy(row_uniforms(seeds, T)).to(self.device)
        sampler = RowSampler(u, L, sampling.temperature, sampling.top_p)
        config = self._gen_config(
            do_sample=False,
            num_beams=1,
            max_new_tokens=T,
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
            use_cache=True,
        )
        with torch.inference_mode(), self._policy(policy):
            out = self.model.generate(
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                generation_config=config,
                logits_processor=self._processors([sampler]),
            )
        chosen = torch.stack(sampler.tokens, dim=1).cpu()
        lps = torch.stack(sampler.logprobs, dim=1).double().cpu()
        steps = chosen.shape[1]
        gen = out[:, L : L + steps].cpu()
        is_eos = torch.isin(chosen, torch.tensor(self.eos_ids))
        stopped = is_eos.any(dim=1)
        first = torch.where(stopped, is_eos.int().argmax(dim=1) + 1, torch.full((R,), steps))
        valid = torch.arange(steps)[None, :] < first[:, None]
        if gen.shape[1] != steps or not bool(((gen == chosen) | ~valid).all()):
            raise RuntimeError("generate() did not follow the row sampler's tokens; a logits processor interfered")
        n_tok = first.numpy()
        sums = (lps * valid).sum(dim=1).numpy()
        body = [row[: n - int(s)].tolist() for row, n, s in zip(chosen, n_tok, stopped, strict=True)]
        texts = self.tokenizer.batch_decode(body, skip_special_tokens=True)
        res: list[list[Completion]] = []
        for i in range(len(requests)):
            cell = []
            for j in range(k):
                r = i * k + j
                n = int(n_tok[r])
                cell.append(
                    Completion(
                        text=texts[r],
                        prompt_tokens=lens[i],
                        completion_tokens=n,
                        mean_logprob=float(sums[r] / n) if n else float("nan"),
                        finish_reason="stop" if bool(stopped[r]) else "length",
                        seed=seeds[r],
                    )
                )
            res.append(cell)
        return res
