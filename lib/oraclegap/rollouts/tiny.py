"""A tiny random causal LM, its tokenizer and LoRA adapters, built locally (no network, no hub).

For tests, benchmarks and examples of the rollout layer: :func:`build_tiny_model` writes an
ordinary model directory (a Llama- or Qwen2-architecture model from a config, weights drawn
from a ``numpy.random.Generator``; a character-level tokenizer built with ``tokenizers``), and
:func:`build_tiny_adapter` saves a peft LoRA adapter with non-zero weights over it. Both load
with ``from_pretrained`` offline, so every code path of a real model directory is exercised.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

__all__ = ["ALPHABET", "SPECIAL_TOKENS", "build_tokenizer", "build_tiny_model", "build_tiny_adapter"]

ALPHABET = "0123456789 +-*/=.,#?()abcdefghijklmnopqrstuvwxyz\n"
SPECIAL_TOKENS = ("<pad>", "<s>", "</s>", "<unk>")


def build_tokenizer(alphabet: str = ALPHABET, chat_template: str | None = None):
    """A character-level fast tokenizer: one token per character of ``alphabet`` plus
    ``<pad>``, ``<s>`` (BOS, prepended), ``</s>`` (EOS) and ``<unk>``."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    chars = list(dict.fromkeys(alphabet))
    vocab = {t: i for i, t in enumerate(list(SPECIAL_TOKENS) + chars)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", vocab["<s>"])])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )
    if chat_template is not None:
        fast.chat_template = chat_template
    return fast


def build_tiny_model(
    path,
    *,
    arch: str = "llama",
    alphabet: str = ALPHABET,
    hidden_size: int = 32,
    intermediate_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    max_positions: int = 512,
    seed: int = 0,
    logit_scale: float = 2.0,
    chat_template: str | None = None,
) -> Path:
    """Write a random ``arch`` ("llama" or "qwen2") causal LM and its tokenizer to ``path``.

    Weights: embeddings N(0, 1), other matrices N(0, 1/fan_in), the output head
    N(0, logit_scale^2 / hidden_size) so next-token logits have spread about ``logit_scale``;
    norms 1, biases 0; all drawn from ``numpy.random.default_rng(seed)``.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    path = Path(path)
    tok = build_tokenizer(alphabet, chat_template)
    common = dict(
        vocab_size=len(tok),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        max_position_embeddings=max_positions,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=False,
    )
    if arch == "llama":
        model = LlamaForCausalLM(LlamaConfig(**common))
    elif arch == "qwen2":
        model = Qwen2ForCausalLM(Qwen2Config(**common))
    else:
        raise ValueError(f"arch must be 'llama' or 'qwen2', got {arch!r}")
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if name.endswith("norm.weight"):
                vals = np.ones(p.shape)
            elif name.endswith(".bias"):
                vals = np.zeros(p.shape)
            elif "embed_tokens" in name:
                vals = rng.normal(0.0, 1.0, p.shape)
            elif name.startswith("lm_head"):
                vals = rng.normal(0.0, logit_scale / np.sqrt(hidden_size), p.shape)
            else:
                vals = rng.normal(0.0, 1.0 / np.sqrt(p.shape[-1]), p.shape)
            p.copy_(torch.from_numpy(vals.astype(np.float32)))
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def build_tiny_adapter(
    model_dir,
    path,
    *,
    seed: int,
    r: int = 4,
    alpha: int = 8,
    target_modules=("q_proj", "v_proj", "down_proj"),
    scale: float = 0.5,
) -> Path:
    """Save a LoRA adapter (peft) for the model in ``model_dir`` with random non-zero A and B
    (``N(0, scale^2 / fan_in)``, from ``numpy.random.default_rng(seed)``), so it changes outputs."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True)
    with warnings.catch_warnings():  # peft queries a deprecated transformers property
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        peft_model = get_peft_model(
            base, LoraConfig(r=r, lora_alpha=alpha, target_modules=list(target_modules), lora_dropout=0.0)
        )
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in sorted(peft_model.named_parameters()):
            if "lora_A" in name or "lora_B" in name:
                vals = rng.normal(0.0, scale / np.sqrt(p.shape[-1]), p.shape)
                p.copy_(torch.from_numpy(vals.astype(np.float32)))
    path = Path(path)
    peft_model.save_pretrained(path)
    return path
