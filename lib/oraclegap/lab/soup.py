"""Model soup of LoRA seeds: the mean of their weight updates, written as one adapter with stacked factors.

Seed m's adapter changes a target weight by ``Delta_m = s_m B_m A_m`` (``s_m = alpha / r``).
The soup's update is the plain mean ``(1/M) sum_m Delta_m``. It is exactly a LoRA update of
rank ``sum_m r_m`` (``5r`` for five seeds): stack the scaled ``A`` factors, ``A = [w s_1 A_1;
...; w s_M A_M]`` with ``w = 1/M``, and the ``B`` factors side by side, ``B = [B_1 ... B_M]``,
at scaling 1 -- peft's ``add_weighted_adapter(..., combination_type="cat")`` builds exactly
this. :func:`explicit_mean_update` recomputes the mean from the saved seed files without
peft, and :func:`check_soup` compares the two (the lab requires agreement to 1e-6).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .grpo import save_adapter
from .model import load_model

__all__ = ["make_soup", "lora_updates", "explicit_mean_update", "check_soup"]


def make_soup(base_dir, adapter_dirs, out_dir, info: dict | None = None) -> Path:
    """Write the soup of the adapters in ``adapter_dirs`` (uniform weights) to ``out_dir``."""
    from peft import PeftModel

    adapter_dirs = [Path(a) for a in adapter_dirs]
    if len(adapter_dirs) < 2:
        raise ValueError(f"adapter_dirs must name at least two adapters, got {len(adapter_dirs)}")
    model = PeftModel.from_pretrained(load_model(base_dir), adapter_dirs[0], adapter_name="m0")
    for i, a in enumerate(adapter_dirs[1:], start=1):
        model.load_adapter(a, adapter_name=f"m{i}")
    names = [f"m{i}" for i in range(len(adapter_dirs))]
    model.add_weighted_adapter(names, [1.0 / len(names)] * len(names), adapter_name="soup", combination_type="cat")
    log = {"soup_of": [str(a) for a in adapter_dirs], "weights": [1.0 / len(names)] * len(names)}
    log.update(info or {})
    return save_adapter(model, out_dir, log, adapter_name="soup")


def lora_updates(adapter_dir) -> dict[str, np.ndarray]:
    """Every target module's update ``(alpha / r) B A`` from an adapter directory (float64, no peft)."""
    from safetensors.numpy import load_file

    adapter_dir = Path(adapter_dir)
    cfg = json.loads((adapter_dir / "adapter_config.json").read_text())
    scale = cfg["lora_alpha"] / cfg["r"]
    w = load_file(adapter_dir / "adapter_model.safetensors")
    out = {}
    for key, a in w.items():
        if ".lora_A." not in key:
            continue
        b = w[key.replace(".lora_A.", ".lora_B.")]
        out[key.replace(".lora_A.weight", "")] = scale * (b.astype(np.float64) @ a.astype(np.float64))
    if not out:
        raise ValueError(f"no LoRA factors in {str(adapter_dir)!r}")
    return out


def explicit_mean_update(adapter_dirs) -> dict[str, np.ndarray]:
    """The mean of the seeds' updates, module by module, computed directly from their files."""
    ups = [lora_updates(a) for a in adapter_dirs]
    keys = set(ups[0])
    if any(set(u) != keys for u in ups):
        raise ValueError("adapter_dirs do not all adapt the same modules")
    return {k: np.mean([u[k] for u in ups], axis=0) for k in sorted(keys)}


def check_soup(soup_dir, adapter_dirs) -> float:
    """Largest absolute difference between the soup's update and the explicit mean update (over all modules)."""
    soup = lora_updates(soup_dir)
    mean = explicit_mean_update(adapter_dirs)
    if set(soup) != set(mean):
        raise ValueError("the soup adapts different modules than its seeds")
    return float(max(np.abs(soup[k] - mean[k]).max() for k in mean))
