"""What of the lab is reproducible, and how closely: byte for byte on one machine, within stated
tolerances on any other.

The lab is seeded throughout and every job runs single-threaded, so two builds **on one machine**
write identical bytes (whatever the worker or thread count). Across **machines** the float results
differ in their last bits: the CPU's vector width (torch's dispatch: AVX-512, AVX2, scalar) changes
the order of floating-point accumulations in matrix products and reductions. Those differences stay
at the level of float32 rounding unless a sampled token flips, which needs a uniform draw within
about 1e-7 of a probability boundary. What a reader relies on is therefore compared with tolerances:

* weights: the relative Frobenius difference of each safetensors file,
  ``||a - b||_2 / ||a||_2``, at most :data:`TOLERANCES` ``["weights_rel"]`` (measured between
  torch's AVX-512, AVX2 and scalar dispatch of one build: at most 1.6e-7);
* training rewards: the mean reward per GRPO step within ``reward_mean`` (one response of the
  reduced recipe's 32 per step is 1/32; measured difference 0);
* embeddings and per-response confidences (mean token log-probability) within ``embed_abs`` /
  ``confidence_abs`` absolute (measured 6e-7 and 5e-7);
* pools: the share of verdicts equal to the reference at least ``verdict_agreement``, and each
  policy's mean success within ``z_max`` binomial standard errors of the reference's
  (:func:`mean_success_z`).

:func:`compare_builds` applies these to two lab directories; :func:`resample` re-draws a slice of a
committed pool with the committed models and compares it with the committed verdicts.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np

from .pipeline import DEFAULT_OUT, file_hash, load_pool, response_arrays, sampling_prompts

__all__ = ["TOLERANCES", "TIMED_FILES", "compare_builds", "mean_success_z", "resample", "file_hashes", "weight_differences"]

#: Cross-machine tolerances (module docstring). Each is at least 100 times the difference measured
#: between CPU dispatch variants of one build, and far below what would change a reader's number.
TOLERANCES = {
    "weights_rel": 1e-4,
    "reward_mean": 0.05,
    "embed_abs": 1e-4,
    "confidence_abs": 1e-3,
    "verdict_agreement": 0.9,
    "z_max": 4.0,
}


#: Files that record wall-clock times (pretraining and training logs): never byte-identical.
TIMED_FILES = ("lab.json", "training_log.json")


def file_hashes(lab_dir, timed: bool = False) -> dict[str, str]:
    """``{relative path: content hash}`` of every committed file of a lab directory (``build/`` and
    ``reference/`` excluded, as in the manifest); the logs that record wall times
    (:data:`TIMED_FILES`) only with ``timed=True``."""
    lab_dir = Path(lab_dir)
    return {
        str(p.relative_to(lab_dir)): file_hash(p)
        for p in sorted(lab_dir.rglob("*"))
        if p.is_file() and p.relative_to(lab_dir).parts[0] not in ("build", "reference")
        and p.name != "manifest.json" and not p.name.startswith(".") and (timed or p.name not in TIMED_FILES)
    }


def weight_differences(new_dir, ref_dir) -> dict[str, float]:
    """Relative Frobenius difference ``||new - ref|| / ||ref||`` over all tensors of each weights file
    of ``ref_dir`` (``inf`` where the tensor names or shapes differ)."""
    from safetensors.numpy import load_file

    new_dir, ref_dir = Path(new_dir), Path(ref_dir)
    out = {}
    for f in sorted(ref_dir.rglob("*.safetensors")):
        rel = f.relative_to(ref_dir)
        if rel.parts[0] in ("build", "reference"):
            continue
        a, b = load_file(f), load_file(new_dir / rel)
        if a.keys() != b.keys() or any(a[k].shape != b[k].shape for k in a):
            out[str(rel)] = float("inf")
            continue
        num = sum(float(np.sum((a[k].astype(np.float64) - b[k].astype(np.float64)) ** 2)) for k in a)
        den = sum(float(np.sum(a[k].astype(np.float64) ** 2)) for k in a)
        out[str(rel)] = float(np.sqrt(num / den)) if den > 0 else float(np.sqrt(num))
    return out


def mean_success_z(new: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per policy, the difference of mean success between two verdict arrays [n, M, k] in binomial
    standard errors: ``(p_new - p_ref) / sqrt(2 p (1 - p) / (n k) + 1 / (n k)^2)`` with ``p`` the
    pooled mean. For two independent draws of one policy it is about standard normal; the
    ``1 / (n k)^2`` term keeps the scale positive for a policy that never succeeds (one flipped
    verdict out of ``n k`` then gives ``|z|`` below 1)."""
    new, ref = np.asarray(new, dtype=float), np.asarray(ref, dtype=float)
    if new.shape != ref.shape or new.ndim != 3:
        raise ValueError(f"new and ref must be verdict arrays [n, M, k] of one shape, got {new.shape} and {ref.shape}")
    cells = new.shape[0] * new.shape[2]
    pn, pr = new.mean(axis=(0, 2)), ref.mean(axis=(0, 2))
    p = (pn + pr) / 2
    return (pn - pr) / np.sqrt(2 * p * (1 - p) / cells + 1.0 / cells**2)


def _rewards(lab_dir: Path) -> dict[str, np.ndarray]:
    out = {}
    for log in sorted((lab_dir / "adapters").glob("*/training_log.json")):
        r = json.loads(log.read_text()).get("reward_per_step")
        if r is not None:
            out[log.parent.name] = np.asarray(r, dtype=float)
    return out


def compare_builds(new_dir, ref_dir, tolerances: dict | None = None) -> dict:
    """Compare a lab build with a reference build of the same configuration on what a reader relies on.

    Returns ``{"ok": bool, "failures": [...], "measured": {...}}``: ``measured`` holds the largest
    weight difference (:func:`weight_differences`), the largest difference of mean reward per run,
    of embeddings and of confidences, the verdict agreement and the largest ``|z|`` of
    :func:`mean_success_z` per pool, and whether the files are byte-identical. Raises ``ValueError``
    when the two were built from different configurations (the config hashes differ).
    """
    tol = dict(TOLERANCES, **(tolerances or {}))
    new_dir, ref_dir = Path(new_dir), Path(ref_dir)
    mn, mr = (json.loads((d / "manifest.json").read_text()) for d in (new_dir, ref_dir))
    if mn["config_hash"] != mr["config_hash"]:
        raise ValueError(f"new_dir and ref_dir hold different lab configurations "
                         f"({mn['config_hash']} vs {mr['config_hash']})")
    untimed = {k: v for k, v in mr["files"].items() if Path(k).name not in TIMED_FILES}
    m: dict = {"byte_identical": file_hashes(new_dir) == untimed}
    w = weight_differences(new_dir, ref_dir)
    m["weights_rel"] = max(w.values()) if w else 0.0
    rn, rr = _rewards(new_dir), _rewards(ref_dir)
    m["reward_mean"] = max((abs(rn[k].mean() - rr[k].mean()) if k in rn else float("inf")) for k in rr) if rr else 0.0
    m["embed_abs"] = m["confidence_abs"] = 0.0
    m["verdict_agreement"], m["z_max"] = 1.0, 0.0
    for pool_dir in sorted((ref_dir / "pools").iterdir()):
        a, b = load_pool(pool_dir), load_pool(new_dir / "pools" / pool_dir.name)
        if a.shape != b.shape:
            m["verdict_agreement"] = 0.0
            continue
        m["embed_abs"] = max(m["embed_abs"], float(np.max(np.abs(a.embeddings - b.embeddings))))
        ca, cb = response_arrays(pool_dir)["confidence"], response_arrays(new_dir / "pools" / pool_dir.name)["confidence"]
        both = ~(np.isnan(ca) | np.isnan(cb))
        m["confidence_abs"] = max(m["confidence_abs"], float(np.max(np.abs(ca[both] - cb[both]), initial=0.0)))
        m["verdict_agreement"] = min(m["verdict_agreement"], float(np.mean(a.verdicts == b.verdicts)))
        m["z_max"] = max(m["z_max"], float(np.max(np.abs(mean_success_z(b.verdicts, a.verdicts)))))
    failures = [k for k in ("weights_rel", "reward_mean", "embed_abs", "confidence_abs", "z_max") if m[k] > tol[k]]
    failures += [k for k in ("verdict_agreement",) if m[k] < tol[k]]
    return {"ok": not failures, "failures": failures, "measured": m, "tolerances": tol}


def resample(pool: str = "primary-extra", policies=("base", "primary-light-s1"), n_prompts: int = 40,
             lab_dir=None, workdir=None) -> dict:
    """Re-draw the first ``n_prompts`` prompts of a committed lab pool for ``policies`` with the
    committed models and the pool's own seeds, and compare with the committed verdicts.

    Draw seeds depend only on the sampling seed, the policy and the prompt (per-policy pools), or on
    the prompt (the seed-aligned pool), never on which other prompts are sampled, so on the machine
    that built the lab the re-drawn verdicts equal the committed ones. Returns ``{"agreement",
    "z" (per policy, :func:`mean_success_z`), "text_agreement", "new", "ref"}``.
    """
    from ..pool import Pool
    from .pipeline import _response_texts, _sample_job
    from .recipes import full_config

    import pandas as pd

    lab_dir = Path(lab_dir) if lab_dir is not None else DEFAULT_OUT
    cfg = full_config()
    specs = {s.name: s for s in cfg.samples}
    if pool not in specs:
        raise ValueError(f"pool must be one of the lab's sampled pools {sorted(specs)}, got {pool!r}")
    spec = specs[pool]
    known = (["base"] if spec.base_policy else []) + list(spec.policies)
    bad = [p for p in policies if p not in known]
    if bad or not policies:
        raise ValueError(f"policies must be a non-empty subset of {known}, got {list(policies)}")
    tasks = pd.read_parquet(lab_dir / "prompts.parquet")
    prompts = sampling_prompts(tasks, spec, cfg.prompt_limit).head(int(n_prompts))
    recs = [{"id": r.id, "prompt": r.text, "answer": str(int(r.answer))} for r in prompts.itertuples()]
    members = [p for p in policies if p != "base"]
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        store = Path(tmp) / "store"
        _sample_job({
            "base_dir": str(lab_dir / "models" / spec.base), "prompts": recs, "k": spec.k,
            "temperature": cfg.temperature, "max_tokens": cfg.max_tokens, "seed": cfg.sample_seed,
            "adapters": {p: str(lab_dir / "adapters" / p) for p in members},
            "include_base": "base" in policies, "store": str(store), "worker": [0, 1], "batch_size": 512,
            "draw_seeds": spec.draw_seeds,
        }, lambda _n: None)
        new = Pool.from_store(store)
        new_t = _response_texts(store, new)
    ref = load_pool(pool, lab_dir)
    ids = prompts["id"].tolist()
    names = list(new.policy_names)
    ref_v = ref.select(prompts=ids, policies=names).verdicts
    new_v = new.select(prompts=ids).verdicts
    pi = [ref.prompt_ids.index(i) for i in ids]
    mi = [ref.policy_names.index(n) for n in names]
    ref_t = response_arrays(pool, lab_dir)["text"][np.ix_(pi, mi)]
    new_t = new_t[np.ix_([new.prompt_ids.index(i) for i in ids], range(len(names)))]
    out = {"agreement": float(np.mean(new_v == ref_v)),
           "z": dict(zip(names, mean_success_z(new_v, ref_v).tolist())),
           "text_agreement": float(np.mean(new_t == ref_t)), "new": new_v, "ref": ref_v}
    return out
