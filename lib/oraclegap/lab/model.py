"""Tiny causal language models for the lab: a character tokenizer and Llama-architecture bases.

The tokenizer is a fast ``tokenizers`` word-level model over single characters (digits, lower-
case letters, space and a few symbols) with ``<pad>``, ``<s>``, ``</s>`` and ``<unk>``; it
prepends ``<s>`` to every encoded text and decodes by concatenation, and it is saved beside the
model as ``tokenizer.json`` so that ``transformers.AutoTokenizer`` (and vllm) load it offline.

:data:`BASES` names the base architectures: ``main`` (the larger, in the 7B role) and ``small``
(the 3B role). Both are ``LlamaForCausalLM`` with tied embeddings, saved as ordinary model
directories (``config.json``, ``model.safetensors``, ``generation_config.json``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path

__all__ = [
    "ALPHABET",
    "SPECIALS",
    "Arch",
    "BASES",
    "build_tokenizer",
    "new_model",
    "save_model",
    "load_model",
    "load_tokenizer",
    "n_parameters",
    "atomic_dir",
    "quiet_transformers",
]

SPECIALS = ("<pad>", "<s>", "</s>", "<unk>")
ALPHABET = " 0123456789=+-*/?.,:()abcdefghijklmnopqrstuvwxyz"
MAX_POSITIONS = 64


@dataclasses.dataclass(frozen=True)
class Arch:
    """A base architecture: width, depth, heads and MLP width of a Llama model."""

    hidden: int
    layers: int
    heads: int
    mlp: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


BASES: dict[str, Arch] = {
    "main": Arch(hidden=64, layers=3, heads=4, mlp=160),
    "small": Arch(hidden=32, layers=2, heads=4, mlp=96),
}


def build_tokenizer():
    """The lab's fast character tokenizer as a ``transformers.PreTrainedTokenizerFast``."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(list(SPECIALS) + list(ALPHABET))}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tk.decoder = decoders.Fuse()
    tk.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", 1)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tk,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        padding_side="left",
        model_max_length=MAX_POSITIONS,
    )


def new_model(arch: Arch, seed: int):
    """A freshly initialised ``LlamaForCausalLM`` of ``arch`` (weights drawn from ``seed``)."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=len(SPECIALS) + len(ALPHABET),
        hidden_size=arch.hidden,
        intermediate_size=arch.mlp,
        num_hidden_layers=arch.layers,
        num_attention_heads=arch.heads,
        num_key_value_heads=arch.heads,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        initializer_range=0.05,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(cfg)
    model.generation_config = GenerationConfig(bos_token_id=1, eos_token_id=2, pad_token_id=0, max_new_tokens=8)
    return model


def n_parameters(model) -> int:
    """Number of distinct parameters of a torch module (tied weights counted once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


class atomic_dir:
    """Context manager: write into a temporary sibling directory, then move it onto ``path``.

    Only what this write produces is replaced: an entry of the old ``path`` that the new
    directory does not hold (a note of yours beside a saved model) is moved into the new one
    before the swap, never deleted."""

    def __init__(self, path):
        self.path = Path(path)

    def __enter__(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.", dir=self.path.parent))
        return self.tmp

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            return False
        if self.path.exists():
            for entry in self.path.iterdir():  # files this write did not produce are the user's: kept
                if not (self.tmp / entry.name).exists():
                    os.replace(entry, self.tmp / entry.name)
            old = self.path.with_name(f".{self.path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(self.path, old)
            os.replace(self.tmp, self.path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(self.tmp, self.path)
        return False


def save_model(model, tokenizer, path, info: dict | None = None) -> Path:
    """Save ``model`` and ``tokenizer`` as one ordinary model directory (atomic), with ``lab.json`` info."""
    quiet_transformers()
    with atomic_dir(path) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        if info is not None:
            (tmp / "lab.json").write_text(json.dumps(info, indent=2, sort_keys=True))
    return Path(path)


def quiet_transformers() -> None:
    """Switch off transformers' per-load progress bars (the lab shows its own per stage) and peft's
    warning about a deprecated transformers property it still queries."""
    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)


def load_model(path):
    """Load a saved lab base model with ``transformers`` (offline, float32, eval mode)."""
    from transformers import AutoModelForCausalLM

    quiet_transformers()

    path = Path(path)
    if not (path / "config.json").is_file():
        raise ValueError(f"model path {str(path)!r} is not a model directory (no config.json)")
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    return model.eval()


def load_tokenizer(path):
    """Load the tokenizer saved beside a lab model (offline)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(Path(path), local_files_only=True)
