"""Rollouts: k responses per prompt and policy, verified, in a resumable, shardable store.

::

    from oraclegap.rollouts import generate
    from oraclegap import Pool

    store = generate(model="model_dir", prompts="prompts.jsonl", task="gsm8k", k=16,
                     adapters={"seed0": "lora0", "seed1": "lora1"}, out="store")
    pool = Pool.from_store("store")

* :func:`generate_ray` -- the same work as Ray tasks, one engine per worker (optional extra
  ``.[ray]``; Ray is imported only when it runs).
* :func:`generate` -- two backends behind one API and one output schema: ``transformers``
  (CPU or GPU; batched generate with per-draw random streams) and ``vllm`` (GPU machines).
* :mod:`~oraclegap.rollouts.tasks` -- prompt template plus verifier per task
  (:func:`register_task`, :func:`get_task`, :data:`TASKS`); built in: ``gsm8k``, ``math``,
  ``multiple_choice``, ``exact``, ``numeric``, ``integer``.
* :mod:`~oraclegap.rollouts.verify` -- answer extraction and checking.
* :class:`Store` -- the append-only store (``status()``, ``to_frame()``, ``to_pool()``).
* :func:`load_prompts` -- JSONL prompt files (``id``, ``prompt``, ``answer`` + features).
* :mod:`~oraclegap.rollouts.tiny` -- a tiny random model and LoRA adapters for tests.

Importing this package does not import torch; the backends load it when they run.
"""

from . import verify
from .generate import draw_seed, generate, parse_worker, prompt_seed
from .prompts import load_prompts
from .ray_run import generate_ray
from .store import Store, StoreStatus
from .tasks import TASKS, Task, get_task, register_task

__all__ = [
    "generate",
    "generate_ray",
    "register_task",
    "get_task",
    "TASKS",
    "Task",
    "load_prompts",
    "Store",
    "StoreStatus",
    "prompt_seed",
    "draw_seed",
    "parse_worker",
    "verify",
]
