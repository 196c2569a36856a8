"""The policy lab: real policy pools trained on CPU, in miniature of paper 000's pipeline.

Two procedurally generated integer-answer task families (:mod:`~oraclegap.lab.tasks`: ``primary``
in Geometry3K's role, ``secondary`` in MathVista's), tiny Llama-architecture base models with a
character tokenizer (:mod:`~oraclegap.lab.model`) pretrained by supervised learning to a
modest success rate (:mod:`~oraclegap.lab.pretrain`), GRPO fine-tuning with LoRA adapters
under several seeds and two recipes (:mod:`~oraclegap.lab.grpo`, :mod:`~oraclegap.lab.recipes`),
model soups (:mod:`~oraclegap.lab.soup`), and sampling through :mod:`oraclegap.rollouts` into
:class:`~oraclegap.Pool` directories under ``data/lab/`` (:mod:`~oraclegap.lab.pipeline`).

``python -m oraclegap.lab build`` (``make lab``) rebuilds everything; ``retrain`` trains one
small pool with new seeds (the entry point of chapter 03's class parameter). Importing this
package does not import torch.
"""

from .pipeline import DEFAULT_OUT, build, load_pool, response_arrays, retrain
from .recipes import LIGHT, STRONGER, LabConfig, full_config, reduced_config

__all__ = [
    "DEFAULT_OUT",
    "build",
    "retrain",
    "load_pool",
    "response_arrays",
    "LIGHT",
    "STRONGER",
    "LabConfig",
    "full_config",
    "reduced_config",
]
