"""Batched temperature sampling from a lab model with a shared prompt prefill and a KV cache.

Used inside GRPO (eight responses per prompt at every step) and for quick checks during
development; the pools themselves are sampled through :mod:`oraclegap.rollouts`. Each prompt
is encoded once, its cache is repeated for its ``n`` responses, and tokens are drawn with
``torch.multinomial`` from an explicit ``torch.Generator`` -- the same generator state gives
the same responses.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["Batch", "encode_prompts", "sample"]


def _cache_name() -> str:
    """The forward argument that carries the KV cache: ``cache`` (transformers >= 5.x), else ``past_key_values``."""
    import inspect

    from transformers import LlamaForCausalLM

    return "cache" if "cache" in inspect.signature(LlamaForCausalLM.forward).parameters else "past_key_values"


@dataclasses.dataclass
class Batch:
    """Sampled sequences: ``ids`` [B, P+T] (left-padded prompts, then responses), masks and texts.

    ``prompt_len`` is P; ``response_mask`` [B, T] marks response tokens up to and including
    the end-of-sequence token; ``texts`` are the decoded responses (special tokens dropped);
    ``group`` [B] gives the prompt index of each row.
    """

    ids: object
    attention: object
    prompt_len: int
    response_mask: object
    texts: list[str]
    group: np.ndarray


def encode_prompts(tokenizer, texts):
    """Left-padded ``(input_ids, attention_mask)`` tensors for ``texts`` (with the ``<s>`` prefix)."""
    enc = tokenizer(list(texts), padding=True, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"]


def sample(model, tokenizer, texts, n: int, generator, temperature: float = 1.0, max_new_tokens: int = 6) -> Batch:
    """``n`` responses per prompt in ``texts``, sampled at ``temperature`` (rows grouped by prompt)."""
    import torch

    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    ids, att = encode_prompts(tokenizer, texts)
    B0, P = ids.shape
    with torch.no_grad():
        pos = (att.cumsum(-1) - 1).clamp(min=0)
        out = model(input_ids=ids, attention_mask=att, position_ids=pos, use_cache=True)
        key = _cache_name()
        cache = getattr(out, key)
        if n > 1:
            cache.batch_repeat_interleave(n)
        logits = out.logits[:, -1].repeat_interleave(n, dim=0)
        att = att.repeat_interleave(n, dim=0)
        last = pos[:, -1:].repeat_interleave(n, dim=0)
        B = B0 * n
        done = torch.zeros(B, dtype=torch.bool)
        toks = []
        for t in range(max_new_tokens):
            probs = torch.softmax(logits.float() / temperature, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator).squeeze(1)
            real = ~done
            nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
            toks.append(nxt)
            done = done | (nxt == eos)
            if bool(done.all()) or t == max_new_tokens - 1:
                break
            att = torch.cat([att, real.long()[:, None]], dim=1)
            last = last + 1
            out = model(input_ids=nxt[:, None], attention_mask=att, position_ids=last, use_cache=True, **{key: cache})
            cache = getattr(out, key)
            logits = out.logits[:, -1]
    resp = torch.stack(toks, dim=1)
    # response tokens up to and including the first </s>; pads after it are masked
    is_eos = resp == eos
    after = (is_eos.cumsum(1) - is_eos.long()) > 0
    rmask = (~after) & (resp != pad)
    full = torch.cat([ids.repeat_interleave(n, dim=0), resp], dim=1)
    full_att = torch.cat([att[:, :P], rmask.long()], dim=1)
    texts_out = tokenizer.batch_decode(torch.where(rmask, resp, torch.full_like(resp, pad)), skip_special_tokens=True)
    return Batch(full, full_att, P, rmask, texts_out, np.repeat(np.arange(B0), n))
