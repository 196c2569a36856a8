"""Checks of a built lab: validation sanity numbers, offline loading of every model and adapter, size on disk.

:func:`sanity` computes, on **validation** prompts only (the lab is tuned on validation; test
numbers are reported as they fall):

* ``base_primary`` -- the base model's mean success rate on primary prompts (required in [0.2, 0.6]);
* ``light_spread[pool]`` -- max minus min over the light seeds of a pool of their mean success
  on the pool's own task (required <= 0.05);
* ``stronger_lift[task]`` -- the mean success on ``task`` of the stronger specialist trained on
  it minus that of the stronger specialist trained on the other task, for every pair of
  stronger seeds (the smallest pair is reported; required >= 0.05 on both tasks).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from .pipeline import DEFAULT_OUT, load_pool

__all__ = ["sanity", "check_loads", "lab_size", "REQUIREMENTS"]

REQUIREMENTS = {"base_primary": (0.2, 0.6), "light_spread_max": 0.05, "stronger_lift_min": 0.05}


def _mean_success(pool, task: str, names) -> dict[str, float]:
    p = pool.split("validation")
    mask = (p.prompts["dataset"] == task).to_numpy()
    sub = p.select(prompts=mask, policies=list(names))
    rates = sub.verdicts.mean(axis=(0, 2))
    return dict(zip(sub.policy_names, rates.tolist(), strict=True))


def sanity(lab_dir=None) -> dict:
    """Validation sanity numbers of a built lab and whether each meets its requirement (see module doc)."""
    lab_dir = Path(lab_dir) if lab_dir is not None else DEFAULT_OUT
    cross = load_pool("cross", lab_dir)
    pol = cross.policies
    out: dict = {}
    base = _mean_success(cross, "primary", ["base"])["base"]
    out["base_primary"] = base
    out["base_secondary"] = _mean_success(cross, "secondary", ["base"])["base"]
    spreads, means = {}, {}
    for tp in sorted(pol.loc[(pol["role"] == "member") & (pol["recipe"] == "light"), "train_pool"].unique()):
        names = pol.loc[pol["train_pool"] == tp, "name"][pol["role"] == "member"].tolist()
        task = pol.loc[pol["train_pool"] == tp, "dataset"].iloc[0]
        m = _mean_success(cross, task, names)
        spreads[tp] = max(m.values()) - min(m.values())
        means[tp] = m
    small_dir = lab_dir / "pools" / "small"
    if small_dir.is_dir():
        small = load_pool("small", lab_dir)
        sp = small.policies
        names = sp.loc[sp["role"] == "member", "name"].tolist()
        m = _mean_success(small, "primary", names)
        spreads["small-primary-light"] = max(m.values()) - min(m.values())
        means["small-primary-light"] = m
        out["small_base_primary"] = _mean_success(small, "primary", ["base"])["base"]
    out["light_spread"] = spreads
    out["light_means"] = means
    strong = pol[(pol["role"] == "member") & (pol["recipe"] == "stronger")]
    lifts, strong_means = {}, {}
    for task, other in (("primary", "secondary"), ("secondary", "primary")):
        own = strong.loc[strong["dataset"] == task, "name"].tolist()
        oth = strong.loc[strong["dataset"] == other, "name"].tolist()
        if not own or not oth:
            continue
        m = _mean_success(cross, task, own + oth)
        strong_means[task] = m
        lifts[task] = min(m[a] - m[b] for a in own for b in oth)
    out["stronger_means"] = strong_means
    out["stronger_lift"] = lifts
    lo, hi = REQUIREMENTS["base_primary"]
    out["ok"] = {
        "base_primary": bool(lo <= base <= hi),
        "light_spread": bool(all(v <= REQUIREMENTS["light_spread_max"] for v in spreads.values())),
        "stronger_lift": bool(len(lifts) == 2 and all(v >= REQUIREMENTS["stronger_lift_min"] for v in lifts.values())),
    }
    return out


def check_loads(lab_dir=None) -> dict[str, str]:
    """Load every saved model (transformers) and adapter (peft, over its base) with the network switched off.

    Returns ``{path: "ok"}``; raises on the first directory that does not load.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from peft import PeftModel

    from .model import load_model, load_tokenizer

    lab_dir = Path(lab_dir) if lab_dir is not None else DEFAULT_OUT
    res = {}
    bases = {}
    for d in sorted((lab_dir / "models").iterdir()):
        if (d / "config.json").is_file():
            load_tokenizer(d)
            bases[d.name] = d
            load_model(d)
            res[str(d.relative_to(lab_dir))] = "ok"
    for d in sorted((lab_dir / "adapters").iterdir()) if (lab_dir / "adapters").is_dir() else []:
        if not (d / "adapter_config.json").is_file():
            continue
        log = json.loads((d / "training_log.json").read_text())
        base = log.get("base") or log["config"]["base"]
        PeftModel.from_pretrained(load_model(bases[base]), d, is_trainable=False)
        res[str(d.relative_to(lab_dir))] = "ok"
    return res


def lab_size(lab_dir=None) -> int:
    """Bytes on disk of everything under the lab directory that is committed (``build/`` excluded)."""
    lab_dir = Path(lab_dir) if lab_dir is not None else DEFAULT_OUT
    return int(sum(p.stat().st_size for p in lab_dir.rglob("*") if p.is_file() and "build" not in p.relative_to(lab_dir).parts))


def _fmt(x) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def summary_lines(s: dict) -> list[str]:
    """Readable lines of a :func:`sanity` result."""
    lines = [f"base success on primary validation {_fmt(s['base_primary'])} (required 0.2-0.6)"]
    for k, v in s["light_spread"].items():
        lines.append(f"light seeds of {k}: spread {_fmt(v)} in mean success (required <= 0.05)")
    for k, v in s["stronger_lift"].items():
        lines.append(f"stronger specialist lift on {k}: {_fmt(v)} over the other specialist (required >= 0.05)")
    lines.append("all requirements met" if all(s["ok"].values()) else f"requirements NOT met: {s['ok']}")
    return lines


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(sanity(), indent=2, default=float))
    print(np.round(lab_size() / 1e6, 2), "MB")
