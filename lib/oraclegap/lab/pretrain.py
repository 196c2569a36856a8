"""Supervised pretraining of a lab base model on generated solutions, stopped at a modest success rate.

The base model learns to answer both task families from an endless stream of fresh problems
(:func:`oraclegap.lab.tasks.stream`, which never yields a prompt of the fixed splits). Each
example is ``<s>`` + prompt + answer digits + ``</s>``; the loss is the mean cross-entropy of
the answer tokens and the end token (the prompt is context only). Training runs for a fixed
number of AdamW steps with a linear warm-up, so the success rate it reaches is set by the step
count: the lab stops early on purpose, leaving per-prompt success rates spread over (0, 1).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time

import numpy as np

from .model import BASES, build_tokenizer, new_model
from .tasks import stream

__all__ = ["PretrainConfig", "pretrain", "encode_examples", "config_hash"]


@dataclasses.dataclass(frozen=True)
class PretrainConfig:
    """Settings of one base model's supervised pretraining."""

    base: str = "main"
    steps: int = 600
    batch: int = 64
    lr: float = 3e-3
    warmup: int = 50
    weight_decay: float = 0.01
    weights: tuple[float, float] = (0.5, 0.5)  # primary, secondary
    seed: int = 0

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["weights"] = list(self.weights)
        d["arch"] = BASES[self.base].to_dict()
        return d


def config_hash(d: dict, drop=()) -> str:
    """sha256 (first 16 hex digits) of a config dict's canonical JSON, without the keys in ``drop``."""
    clean = {k: v for k, v in d.items() if k not in set(drop)}
    return hashlib.sha256(json.dumps(clean, sort_keys=True, default=str).encode()).hexdigest()[:16]


def encode_examples(tokenizer, texts, answers):
    """Right-padded ``(input_ids, attention_mask, labels)`` for prompt+answer+``</s>`` (labels only on the answer)."""
    import torch

    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    p_ids = tokenizer(list(texts))["input_ids"]
    a_ids = tokenizer([str(a) for a in answers], add_special_tokens=False)["input_ids"]
    seqs = [p + a + [eos] for p, a in zip(p_ids, a_ids, strict=True)]
    L = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), L), pad, dtype=torch.long)
    labels = torch.full((len(seqs), L), -100, dtype=torch.long)
    att = torch.zeros((len(seqs), L), dtype=torch.long)
    for i, (s, p) in enumerate(zip(seqs, p_ids, strict=True)):
        ids[i, : len(s)] = torch.tensor(s)
        att[i, : len(s)] = 1
        labels[i, len(p) : len(s)] = torch.tensor(s[len(p) :])
    return ids, att, labels


def pretrain(cfg: PretrainConfig, exclude, progress: bool = True, callback=None, on_step=None, threads: int | None = 1):
    """Train a fresh ``cfg.base`` model; returns ``(model, tokenizer, log)``.

    ``exclude``: prompt texts never to train on (the fixed splits). ``log`` holds the loss
    every 25 steps, the wall time and the config. ``callback(step, model)`` (optional) runs
    every 100 steps, e.g. for a validation check during development; ``on_step(n)`` (optional)
    is told every 10 steps how many steps have passed since its last call. Runs with ``threads``
    torch threads (1 by default: the same seed gives the same weights on any machine).
    """
    import torch

    if cfg.base not in BASES:
        raise ValueError(f"cfg.base must be one of {sorted(BASES)}, got {cfg.base!r}")
    old_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return _pretrain(cfg, exclude, progress, callback, on_step)
    finally:
        torch.set_num_threads(old_threads)


def _pretrain(cfg, exclude, progress, callback, on_step):
    import torch
    from tqdm.auto import tqdm

    tok = build_tokenizer()
    model = new_model(BASES[cfg.base], seed=cfg.seed)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, cfg.warmup)))
    data = stream(["primary", "secondary"], cfg.weights, seed=cfg.seed, exclude=exclude)
    losses = []
    t0 = time.perf_counter()
    bar = tqdm(range(cfg.steps), desc=f"pretrain {cfg.base}", disable=not progress, leave=False)
    running = []
    for step in bar:
        rows = [next(data) for _ in range(cfg.batch)]
        ids, att, labels = encode_examples(tok, [r[1] for r in rows], [r[2] for r in rows])
        out = model(input_ids=ids, attention_mask=att, labels=labels)
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        running.append(float(out.loss.detach()))
        if (step + 1) % 25 == 0:
            losses.append(float(np.mean(running)))
            running = []
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
        if on_step is not None and (step + 1) % 10 == 0:
            on_step(10)
        if callback is not None and (step + 1) % 100 == 0:
            model.eval()
            callback(step + 1, model)
            model.train()
    if on_step is not None and cfg.steps % 10:
        on_step(cfg.steps % 10)
    model.eval()
    log = {"config": cfg.to_dict(), "loss_every_25": losses, "wall_s": time.perf_counter() - t0}
    return model, tok, log
