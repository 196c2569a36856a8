"""``oraclegap rollouts``: sample k responses per prompt and policy into a store, or report a store.

    oraclegap rollouts --model DIR [--adapter NAME=DIR ...] [--include-base] --prompts FILE.jsonl
        --task T --k 16 --temperature 1.0 [--top-p P] [--max-tokens N] [--seed S]
        [--draw-seeds aligned|per-policy] --out STORE
        [--backend transformers|vllm] [--worker i/n | --ray [ADDRESS] [--ray-workers N] [--ray-gpus G]]
        [--tensor-parallel N] [--batch-size B]
        [--device cpu|cuda] [--dtype D] [--no-progress] [--json]
    oraclegap rollouts --status STORE [--json]

Rerunning the same command resumes; n processes with ``--worker 0/n`` ... ``--worker n-1/n``
fill one store without coordination; ``--ray`` runs those n workers as Ray tasks (one engine each,
GPUs as Ray resources) writing the same store. ``--draw-seeds per-policy`` gives every policy its own
seeds (independent draws, as paper 000's nulls assume); the default ``aligned`` shares draw j's
seed across policies (paper 001's seed-aligned protocol).
"""

from __future__ import annotations

from .._validate import check_dir
from ._common import emit, float_arg, int_arg, seed_arg


def register(sub) -> None:
    p = sub.add_parser(
        "rollouts",
        help="sample k responses per prompt and policy (transformers or vllm) into a resumable store",
        description="Sample, verify and store k responses per prompt and policy; or --status STORE.",
    )
    p.add_argument("--status", metavar="STORE", help="report progress of a store (done, missing, per policy) and exit")
    p.add_argument("--model", help="local model directory (loads offline)")
    p.add_argument(
        "--adapter", action="append", default=[], metavar="NAME=DIR", help="a LoRA adapter as a policy (repeatable)"
    )
    p.add_argument("--include-base", action="store_true", help="add the bare base model as policy 'base' beside adapters")
    p.add_argument("--prompts", help="JSONL prompt file: one object per line with id, prompt, answer (+ features)")
    p.add_argument("--task", help="task name (gsm8k, math, multiple_choice, exact, numeric, integer, or registered)")
    p.add_argument("--k", type=int_arg("--k", minimum=1), default=16, help="responses per prompt and policy (default 16)")
    p.add_argument("--temperature", type=float_arg("--temperature", 0), default=1.0, help="sampling temperature, >= 0")
    p.add_argument("--top-p", type=float_arg("--top-p", 0, 1, open_low=True), default=1.0, help="nucleus mass in (0, 1]")
    p.add_argument("--max-tokens", type=int_arg("--max-tokens", minimum=1), default=64)
    p.add_argument("--seed", type=seed_arg(), default=0)
    p.add_argument("--draw-seeds", default="aligned", metavar="aligned|per-policy",
                   help="aligned: draw j of a prompt has the same seed under every policy (the protocol of arXiv 2607.03436; "
                        "default); per-policy: each policy its own seeds (independent draws, for the nulls of arXiv 2609.32996)")
    p.add_argument("--out", help="store directory (created, or resumed when it exists)")
    p.add_argument("--backend", default="transformers", help="transformers (CPU/GPU) or vllm (GPU)")
    p.add_argument("--worker", metavar="i/n", help="generate only worker i's share of n")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run the workers as Ray tasks (optional extra .[ray]); ADDRESS joins a cluster "
                        "('auto', 'ray://head:10001'), none starts a local one")
    p.add_argument("--ray-workers", type=int_arg("--ray-workers", minimum=1), default=None,
                   help="Ray tasks (default: the cluster's GPUs with --ray-gpus, else its CPUs)")
    p.add_argument("--ray-gpus", type=float_arg("--ray-gpus", 0), default=0.0, help="GPUs per Ray task (default 0)")
    p.add_argument("--tensor-parallel", type=int_arg("--tensor-parallel", minimum=1), default=1, help="vllm tensor_parallel_size")
    p.add_argument("--batch-size", type=int_arg("--batch-size", minimum=1), default=64,
                   help="responses per batch (chunk = max(1, B // k) prompts)")
    p.add_argument("--device", default="cpu", help="transformers backend device (cpu, cuda, cuda:1, ...)")
    p.add_argument("--dtype", default=None, help="model dtype (default: float32 on CPU, bfloat16 on CUDA)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _adapters(items) -> dict:
    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ValueError(f"--adapter must be NAME=DIR, got {item!r}")
        if name in out:
            raise ValueError(f"--adapter name {name!r} given twice")
        out[name.strip()] = path.strip()
    return out


def run(args) -> int:
    from ..rollouts import Store, generate

    if args.status:
        check_dir(args.status, "--status STORE")  # a file or a missing path is named as such
        st = Store(args.status).status()
        payload = st.to_dict()
        if not args.json:
            state = "complete" if st.complete else "incomplete"
            print(
                f"{st.path}: {state}; {st.cells_done}/{st.cells_total} (prompt, policy) cells, "
                f"{st.responses_done} responses (k={st.k}), {len(st.missing)} cells missing"
                + (f", {len(st.duplicates)} chunks written twice" if st.duplicates else "")
            )
        emit(payload, st.frame(), args.json)
        return 0
    missing = [flag for flag, val in (("--model", args.model), ("--prompts", args.prompts), ("--task", args.task), ("--out", args.out)) if not val]
    if missing:
        raise ValueError(f"missing {', '.join(missing)} (or use --status STORE)")
    check_dir(args.out, "--out STORE", must_exist=False)
    check_dir(args.model, "--model")
    run_fn = generate
    extra = {}
    if args.ray is not None:
        from ..rollouts import generate_ray

        if args.worker:
            raise ValueError("--worker and --ray are exclusive: with --ray every Ray task is one worker")
        run_fn = generate_ray
        extra = {"address": args.ray or None, "n_workers": args.ray_workers, "num_gpus": args.ray_gpus}
    store = run_fn(
        **extra,
        model=args.model,
        prompts=args.prompts,
        task=args.task,
        out=args.out,
        k=args.k,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        seed=args.seed,
        draw_seeds=args.draw_seeds,
        adapters=_adapters(args.adapter),
        include_base=args.include_base,
        backend=args.backend,
        worker=args.worker,
        batch_size=args.batch_size,
        device=args.device,
        progress=not args.no_progress,
        tensor_parallel=args.tensor_parallel,
        dtype=args.dtype,
    )
    st = store.status()
    emit(st.to_dict(), st.frame(), args.json)
    return 0
