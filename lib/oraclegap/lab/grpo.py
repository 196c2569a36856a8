"""GRPO with LoRA adapters (peft) on a frozen lab base model: group-relative advantages, verifier reward, no KL.

At every step the current policy samples ``group`` responses (temperature 1) to each of
``prompts_per_step`` training prompts; the verifier reward is 1 for a correct integer and 0
otherwise. A response's advantage is its reward minus the mean reward of its group, divided by
the group's standard deviation plus ``1e-4`` (groups that are all right or all wrong carry no
signal). The loss is ``-mean_i A_i * mean_t log pi(o_it | prompt, o_i,<t)`` over the sampled
responses; with one update per batch the importance ratio is 1, so no clipping is needed, and
there is no Kullback-Leibler term. Only the LoRA factors (on every attention and MLP
projection) are trained, with AdamW.

Everything random is derived from the run's ``seed``: the LoRA initialisation (``A`` factors;
peft starts ``B`` at zero), the order of training prompts (a fresh permutation each epoch) and
the sampled responses (an explicit ``torch.Generator``). :func:`train` is single-threaded by
default so that a run gives the same adapter on any machine load or thread count.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from .._rng import stream as named_stream
from .model import atomic_dir, load_model, load_tokenizer
from .sampler import sample
from .tasks import reward

__all__ = ["TARGET_MODULES", "Recipe", "RunConfig", "train", "advantages", "load_policy"]

TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A GRPO recipe: steps, training prompts (the first ``n_prompts`` of the ordered list; None = all), LoRA rank and scaling."""

    name: str
    steps: int
    n_prompts: int | None
    rank: int
    alpha: int
    lr: float
    prompts_per_step: int = 8
    group: int = 8
    temperature: float = 1.0
    max_new_tokens: int = 6
    warmup: int = 10

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """One training run: the base (name and weight hash), the task and its ordered prompt-list hash, the recipe, the seed.

    ``seed`` is the only seed field; :meth:`hash_without_seed` is what every member of a
    pool must share.
    """

    base: str
    base_hash: str
    task: str
    prompts_hash: str
    recipe: Recipe
    seed: int

    SEED_FIELDS = ("seed",)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["recipe"] = self.recipe.to_dict()
        return d

    def hash_without_seed(self) -> str:
        from .pretrain import config_hash

        return config_hash(self.to_dict(), drop=self.SEED_FIELDS)

    def full_hash(self) -> str:
        from .pretrain import config_hash

        return config_hash(self.to_dict())


def advantages(rewards: np.ndarray, group: int, eps: float = 1e-4) -> np.ndarray:
    """Group-relative advantages: ``(r - mean_g) / (std_g + eps)`` within consecutive groups of ``group``."""
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1 or r.size % group:
        raise ValueError(f"rewards must be 1-d with a length divisible by group={group}, got shape {r.shape}")
    g = r.reshape(-1, group)
    return ((g - g.mean(1, keepdims=True)) / (g.std(1, keepdims=True) + eps)).ravel()


def _peft_config(recipe: Recipe):
    from peft import LoraConfig

    return LoraConfig(
        r=recipe.rank,
        lora_alpha=recipe.alpha,
        lora_dropout=0.0,
        target_modules=list(TARGET_MODULES),
        bias="none",
        task_type="CAUSAL_LM",
    )


def _response_logprobs(model, batch):
    """Mean log-probability of each row's response tokens under ``model`` (with grad)."""
    import torch

    ids, att = batch.ids, batch.attention
    pos = (att.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=ids, attention_mask=att, position_ids=pos).logits
    P = batch.prompt_len
    lp = torch.log_softmax(logits[:, P - 1 : -1].float(), dim=-1)
    tok = ids[:, P:]
    tok_lp = lp.gather(-1, tok.unsqueeze(-1)).squeeze(-1)
    m = batch.response_mask.float()
    return (tok_lp * m).sum(1) / m.sum(1).clamp(min=1.0)


def train(
    base_dir, prompts, answers, config: RunConfig, out_dir=None, progress: bool = True, threads: int | None = 1, on_step=None, base_name=None
):
    """Run GRPO for ``config`` from the base model in ``base_dir`` on ``prompts``/``answers``.

    ``prompts`` is the task's ordered training list (the recipe uses its first
    ``n_prompts``). Returns ``(peft_model, log)``; with ``out_dir`` the adapter is saved there
    (atomic) with ``training_log.json``. ``log`` holds the mean reward per step, the share of
    groups with a learning signal, wall time and both config hashes. ``on_step(n)`` (optional)
    is told every 10 steps how many steps have passed since its last call.
    """
    import torch
    from peft import get_peft_model
    from tqdm.auto import tqdm

    rec = config.recipe
    prompts = list(prompts)
    answers = np.asarray(answers)
    if len(prompts) != len(answers) or not prompts:
        raise ValueError(f"prompts and answers must be non-empty and of equal length, got {len(prompts)} and {len(answers)}")
    n = len(prompts) if rec.n_prompts is None else min(rec.n_prompts, len(prompts))
    prompts, answers = prompts[:n], answers[:n]
    old_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        base = load_model(base_dir)
        tok = load_tokenizer(base_dir)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            model = get_peft_model(base, _peft_config(rec))
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=rec.lr, weight_decay=0.0, betas=(0.9, 0.99))
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, rec.warmup)))
        rng = named_stream(config.seed, "lab.grpo_prompt_order")
        sampling = named_stream(config.seed, "lab.grpo_sampling")
        gen = torch.Generator().manual_seed(int(sampling.integers(2**62)))
        order: list[int] = []
        rewards_log, signal_log = [], []
        t0 = time.perf_counter()
        bar = tqdm(range(rec.steps), desc=f"grpo {config.task}/{rec.name}/seed{config.seed}", disable=not progress, leave=False)
        for step in bar:
            if len(order) < rec.prompts_per_step:
                order.extend(rng.permutation(n).tolist())
            idx, order = order[: rec.prompts_per_step], order[rec.prompts_per_step :]
            model.eval()
            batch = sample(model, tok, [prompts[i] for i in idx], rec.group, gen, rec.temperature, rec.max_new_tokens)
            model.train()
            r = np.array([reward(t, a) for t, a in zip(batch.texts, np.repeat(answers[idx], rec.group), strict=True)])
            adv = advantages(r, rec.group)
            rewards_log.append(float(r.mean()))
            signal = float((r.reshape(-1, rec.group).std(1) > 0).mean())
            signal_log.append(signal)
            if signal > 0:
                lp = _response_logprobs(model, batch)
                loss = -(torch.as_tensor(adv, dtype=lp.dtype) * lp).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()
                sched.step()  # the warm-up counts updates
            if on_step is not None and (step + 1) % 10 == 0:
                on_step(10)
            if (step + 1) % 20 == 0:
                bar.set_postfix(reward=f"{np.mean(rewards_log[-20:]):.3f}")
        if on_step is not None and rec.steps % 10:
            on_step(rec.steps % 10)
        model.eval()
        wall = time.perf_counter() - t0
    finally:
        torch.set_num_threads(old_threads)
    tenth = max(1, rec.steps // 10)
    log = {
        "config": config.to_dict(),
        "config_hash": config.full_hash(),
        "config_hash_without_seed": config.hash_without_seed(),
        "n_train_prompts": n,
        "reward_per_step": [round(x, 6) for x in rewards_log],
        "signal_per_step": [round(x, 6) for x in signal_log],
        "reward_first_tenth": float(np.mean(rewards_log[:tenth])),
        "reward_last_tenth": float(np.mean(rewards_log[-tenth:])),
        "wall_s": wall,
        "base_name": base_name or config.base,
    }
    if out_dir is not None:
        save_adapter(model, out_dir, log)
    return model, log


def save_adapter(model, out_dir, log: dict, adapter_name: str = "default") -> Path:
    """Save one adapter of a peft model (atomic) with its ``training_log.json``."""
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp, selected_adapters=[adapter_name], save_embedding_layers=False)
        sub = tmp / adapter_name if adapter_name != "default" else tmp
        if sub != tmp:  # peft nests non-default adapters in a sub-folder; keep one flat directory
            for f in sub.iterdir():
                f.rename(tmp / f.name)
            sub.rmdir()
        (tmp / "README.md").unlink(missing_ok=True)  # peft's empty model card
        cfg_path = tmp / "adapter_config.json"
        cfg = json.loads(cfg_path.read_text())
        cfg["base_model_name_or_path"] = log.get("base_name", cfg.get("base_model_name_or_path"))
        if isinstance(cfg.get("target_modules"), list):  # peft keeps a set: fix the order for stable files
            cfg["target_modules"] = sorted(cfg["target_modules"])
        cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True))
        (tmp / "training_log.json").write_text(json.dumps(log, indent=2, sort_keys=True))
    return Path(out_dir)


def load_policy(base_dir, adapter_dir=None):
    """A base model (and optionally one LoRA adapter over it, via peft) loaded offline for evaluation."""
    model = load_model(base_dir)
    if adapter_dir is None:
        return model
    from peft import PeftModel

    return PeftModel.from_pretrained(model, Path(adapter_dir), is_trainable=False).eval()
