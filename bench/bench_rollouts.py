"""Benchmark: batched transformers-backend rollouts against a naive generate loop, same model, same run.

Builds the tiny random Llama of ``oraclegap.rollouts.tiny`` (plus its tokenizer) in a temporary
folder and samples k responses per prompt three ways, all at the same temperature, top_p and
max_tokens on the same prompts:

* ``naive``: one ``model.generate(do_sample=True)`` call per response (batch of one row), the
  loop one writes first: ``for prompt: for j in range(k): generate(prompt)``;
* ``per prompt``: one ``generate(num_return_sequences=k)`` call per prompt (printed for context);
* ``oraclegap``: ``oraclegap.rollouts.generate`` end to end -- chunks of ``batch_size`` rows with
  per-draw random streams, answer verification and the atomic parquet store included.

Prints responses/s and generated tokens/s of each and, last, the speed-up of ``oraclegap`` over
``naive`` in responses/s (exit status 1 when it is below ``--min-ratio``, default 5). Timings
exclude model loading for the loops and include it for ``oraclegap`` (so the ratio is conservative).

usage: python bench/bench_rollouts.py [--prompts 24] [--k 8] [--max-tokens 32] [--batch-size 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from oraclegap.rollouts import draw_seed, generate, get_task, tiny  # noqa: E402
from oraclegap.rollouts.generate import render_prompts  # noqa: E402


def naive(model, tok, ids, args, per_prompt: bool):
    """Responses and generated tokens from plain ``generate`` calls."""
    n_resp = n_tok = 0
    eos = tok.eos_token_id
    t0 = time.perf_counter()
    for i, (pid, toks) in enumerate(ids.items()):
        x = torch.tensor([toks])
        reps = [None] if per_prompt else range(args.k)
        for j in reps:
            torch.manual_seed(draw_seed(args.seed, pid, 0 if j is None else j) % 2**63)
            with torch.inference_mode():
                out = model.generate(
                    x, attention_mask=torch.ones_like(x), do_sample=True, temperature=args.temperature, top_p=1.0,
                    top_k=0, max_new_tokens=args.max_tokens, num_return_sequences=args.k if per_prompt else 1,
                    pad_token_id=tok.pad_token_id, eos_token_id=eos,
                )
            gen = out[:, x.shape[1]:]
            n_resp += gen.shape[0]
            # generated tokens up to and including the first end-of-sequence token
            is_eos = gen == eos
            n_tok += int(torch.where(is_eos.any(1), is_eos.int().argmax(1) + 1, gen.shape[1]).sum())
        del i
    return n_resp, n_tok, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", type=int, default=24)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1, help="torch threads for every variant")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-ratio", type=float, default=5.0)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        mdir = tiny.build_tiny_model(tmp / "model", hidden_size=64, intermediate_size=128, num_layers=2, seed=0)
        rng = np.random.default_rng(args.seed)
        recs = [{"id": f"b{i}", "prompt": f"{a} + {b} =", "answer": str(a + b)} for i, (a, b) in enumerate(rng.integers(0, 50, (args.prompts, 2)))]
        tok = AutoTokenizer.from_pretrained(str(mdir), local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(str(mdir), local_files_only=True).eval()
        ids, _ = render_prompts(recs, get_task("integer"), tok, None)
        naive(model, tok, dict(list(ids.items())[:1]), argparse.Namespace(**{**vars(args), "k": 1}), False)  # warm-up

        rows = []
        r, t, s = naive(model, tok, ids, args, per_prompt=False)
        rows.append(("naive: generate per response (batch 1)", r, t, s))
        r, t, s = naive(model, tok, ids, args, per_prompt=True)
        rows.append((f"per prompt: generate(num_return_sequences={args.k})", r, t, s))
        t0 = time.perf_counter()
        st = generate(
            mdir, recs, "integer", out=tmp / "store", k=args.k, temperature=args.temperature, max_tokens=args.max_tokens,
            seed=args.seed, batch_size=args.batch_size, progress=False,
        )
        s = time.perf_counter() - t0
        df = st.to_frame()
        rows.append((f"oraclegap: generate(batch_size={args.batch_size}), store included", len(df), int(df["completion_tokens"].sum()), s))

    print(
        f"== rollouts on a tiny random Llama (hidden 64, 2 layers): {args.prompts} prompts x k={args.k}, "
        f"max_tokens={args.max_tokens}, temperature={args.temperature}, torch threads={args.threads}"
    )
    for name, r, t, s in rows:
        print(f"{name:<58} {r:6d} responses {t:7d} tokens {s:8.2f} s {r / s:9.1f} responses/s {t / s:10.1f} tokens/s")
    ratio = (rows[2][1] / rows[2][3]) / (rows[0][1] / rows[0][3])
    ratio_prompt = (rows[2][1] / rows[2][3]) / (rows[1][1] / rows[1][3])
    ok = ratio >= args.min_ratio
    print(f"speed-up over the per-prompt-batch loop: {ratio_prompt:.1f}x (context)")
    print(f"batching speed-up over the naive loop (responses/s): {ratio:.1f}x -- {'PASS' if ok else 'FAIL'} (>= {args.min_ratio:g}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
