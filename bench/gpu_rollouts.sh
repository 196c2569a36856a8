#!/usr/bin/env bash
# GPU check of the rollout layer (issue 12), prepared as one script for a machine with a CUDA GPU.
#
#   bash bench/gpu_rollouts.sh [WORKDIR]        (PY=python3 by default)
#
# Needs python with torch (CUDA), transformers and peft; math-verify is not needed (the check
# registers a "first_digit" task: the first digit of the response against a gold digit, which a
# random model gets right about one time in ten, so the rates are informative); vllm is used
# when importable. Nothing is downloaded: the script
# builds a small random Llama (hidden 256, 4 layers, head dim 64 so vllm's kernels accept it)
# with a character tokenizer and two LoRA adapters, then runs the same rollouts
#   1. transformers on CPU (float32)       -- the reference verdict rates
#   2. transformers on CUDA (float32)      -- same batches; verdict rates and identical-text share
#   3. transformers on CUDA (bfloat16, batch 512) -- throughput
#   4. vllm (float32), if `import vllm` works
# and prints responses/s and tokens/s for each, and whether each policy's verdict rate agrees
# with the CPU run within sampling error (|difference| <= 3 standard errors of two independent
# proportions; seed-aligned draws make the real error smaller, so the check is conservative).
# Exit status 1 when a rate disagrees. Expected wall time on one H200: about 2-4 minutes.
# A dry run of the script's logic without a GPU: GPU_ROLLOUTS_DEVICE=cpu GPU_ROLLOUTS_SMALL=1.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
WORK=${1:-$(mktemp -d)}
export PYTHONPATH="$PWD/lib${PYTHONPATH:+:$PYTHONPATH}" TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
echo "== gpu_rollouts: work folder $WORK"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || echo "(nvidia-smi not available)"
"$PY" - "$WORK" <<'PYTHON'
import importlib.util
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from oraclegap.rollouts import generate, register_task, tiny

register_task(
    "first_digit",
    extract=lambda text: next((ch for ch in text if ch.isdigit()), None),
    check=lambda answer, gold: answer == gold,
    description="the first digit in the response equals the gold digit",
)

work = Path(sys.argv[1])
work.mkdir(parents=True, exist_ok=True)
DEV = os.environ.get("GPU_ROLLOUTS_DEVICE", "cuda")  # "cpu": a dry run of this script's logic
SMALL = os.environ.get("GPU_ROLLOUTS_SMALL") == "1"
print(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}, device for the GPU runs: {DEV}")
if DEV == "cuda":
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this check needs a GPU (GPU_ROLLOUTS_DEVICE=cpu for a dry run)")
    print(f"device: {torch.cuda.get_device_name(0)}")
model = work / "model"
if not (model / "config.json").exists():
    size = dict(hidden_size=64, intermediate_size=128, num_layers=2) if SMALL else dict(hidden_size=256, intermediate_size=512, num_layers=4)
    tiny.build_tiny_model(model, num_heads=4, num_kv_heads=4, seed=0, **size)
adapters = {}
for name, seed in (("lora0", 1), ("lora1", 2)):
    if not (work / name / "adapter_config.json").exists():
        tiny.build_tiny_adapter(model, work / name, seed=seed, r=8)
    adapters[name] = str(work / name)
rng = np.random.default_rng(0)
recs = [{"id": f"g{i}", "prompt": f"{a} + {b} =", "answer": str((a + b) % 10)} for i, (a, b) in enumerate(rng.integers(0, 10, (16 if SMALL else 96, 2)))]
common = dict(prompts=recs, task="first_digit", k=8, temperature=1.0, top_p=1.0, max_tokens=32, seed=0,
              adapters=adapters, include_base=True, progress=False)


def run(tag, **kw):
    out = work / f"store_{tag}"
    t0 = time.perf_counter()
    st = generate(model=str(model), out=out, **{**common, **kw})
    if str(kw.get("device", "cpu")).startswith("cuda"):
        torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    df = st.to_frame()
    print(f"{tag:<28} {len(df):6d} responses {df['completion_tokens'].sum():8d} tokens {secs:8.2f} s "
          f"{len(df) / secs:9.1f} responses/s {df['completion_tokens'].sum() / secs:10.1f} tokens/s (model load included)")
    return df


runs = {"cpu float32 (reference)": run("cpu_fp32", device="cpu", dtype="float32", batch_size=64)}
runs[f"{DEV} float32"] = run(f"{DEV}_fp32_again" if DEV == "cpu" else "cuda_fp32", device=DEV, dtype="float32", batch_size=64)
runs[f"{DEV} bfloat16 b512"] = run(f"{DEV}_bf16", device=DEV, dtype="bfloat16", batch_size=512)
if DEV == "cuda" and importlib.util.find_spec("vllm") is not None:
    try:
        runs["vllm float32"] = run("vllm_fp32", backend="vllm", dtype="float32", batch_size=768,
                                   vllm_kwargs={"gpu_memory_utilization": 0.3})
    except Exception as exc:  # report and go on: the transformers checks still count
        print(f"vllm run failed: {type(exc).__name__}: {exc}")
    try:  # the store records seed s + j for child j of an n = k request: check that vllm does so
        import vllm

        llm = vllm.LLM(model=str(model), seed=0, dtype="float32", generation_config="vllm", gpu_memory_utilization=0.3)
        ids = {"prompt_token_ids": [1, 5, 6, 7]}
        joint = llm.generate([ids], vllm.SamplingParams(n=4, seed=1234, max_tokens=16), use_tqdm=False)[0].outputs
        apart = llm.generate([ids] * 4, [vllm.SamplingParams(n=1, seed=1234 + j, max_tokens=16) for j in range(4)], use_tqdm=False)
        same = [sorted(joint, key=lambda c: c.index)[j].text == apart[j].outputs[0].text for j in range(4)]
        print(f"vllm child seeds: n=4 with seed s equals four n=1 requests with seeds s..s+3: {same}")
    except Exception as exc:
        print(f"vllm child-seed check failed: {type(exc).__name__}: {exc}")
else:
    print("vllm: not importable here; skipped")

ref = runs["cpu float32 (reference)"].set_index(["prompt_id", "policy", "sample"])
ok = True
print("\nverdict rates by policy (CPU float32 is the reference; agree = |diff| <= 3 SE)")
for name, df in runs.items():
    d = df.set_index(["prompt_id", "policy", "sample"]).loc[ref.index]
    same_text = float((d["text"] == ref["text"]).mean())
    for pol in ref.index.get_level_values("policy").unique():
        a = ref.xs(pol, level="policy")["correct"].to_numpy(float)
        b = d.xs(pol, level="policy")["correct"].to_numpy(float)
        pa, pb = a.mean(), b.mean()
        se = math.sqrt(pa * (1 - pa) / len(a) + pb * (1 - pb) / len(b)) or 1e-12
        agree = abs(pa - pb) <= 3 * se
        ok &= agree
        print(f"  {name:<20} {pol:<6} rate {pb:.4f} vs cpu {pa:.4f}  diff {pb - pa:+.4f}  3SE {3 * se:.4f}  "
              f"{'agree' if agree else 'DISAGREE'}")
    print(f"  {name:<20} identical texts to the CPU run: {same_text:.3f}")
print("\nRESULT:", "verdict rates agree with the CPU run" if ok else "some verdict rate DISAGREES with the CPU run")
json.dump({k: v["correct"].mean() for k, v in runs.items()}, open(work / "rates.json", "w"), indent=2)
sys.exit(0 if ok else 1)
PYTHON
