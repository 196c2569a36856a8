"""``oraclegap export POOL --format long|llmrouterbench|routerbench|embedllm --out PATH``.

Writes the pool in a layout another router tool reads (:func:`oraclegap.exchange.export_pool`):
``long`` (oraclegap's exchange format, ``.parquet``/``.csv``, validated against the shipped
schema ``oraclegap/schemas/long.schema.json``), ``llmrouterbench`` (a results folder),
``routerbench`` (a wide ``.parquet``/``.csv``; k = 1 with costs) and ``embedllm`` (a long
``.csv``; k = 1). oraclegap reads every one back as a POOL. POOL is read as by every
verb; its input format is ``--input-format`` here. ``--out`` must not exist: nothing is replaced, and of two exports racing to one ``--out`` one
writes it and the other is refused.
"""

from __future__ import annotations

from ..exchange import EXPORT_FORMATS, check_export_out, export_pool
from ._common import add_pool_argument, emit, pool_from_args


def register(sub) -> None:
    p = sub.add_parser("export", help="write the pool in another router tool's layout (long, llmrouterbench, routerbench, embedllm)")
    add_pool_argument(p, format_option="--input-format")
    p.add_argument("--format", dest="to_format", required=True, choices=tuple(EXPORT_FORMATS), metavar="FORMAT",
                   help="the layout to write: " + "; ".join(f"{k}: {v}" for k, v in EXPORT_FORMATS.items()))
    p.add_argument("--out", required=True, metavar="PATH", help="the file or folder to write (must not exist)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a line")
    p.set_defaults(func=run)


def run(args) -> int:
    check_export_out(args.to_format, args.out)  # the target before the pool is read
    pool = pool_from_args(args)
    info = export_pool(pool, args.to_format, args.out)
    payload = {"pool": {"source": args.pool, "n_prompts": pool.n_prompts, "n_policies": pool.n_policies, "k": pool.k}, **info}
    if args.json:
        emit(payload, None, True)
    else:
        dropped = ", ".join(info.get("dropped") or []) or "nothing"
        print(f"wrote {info['out']} ({args.to_format}) from {pool.n_prompts} prompts x {pool.n_policies} policies, k={pool.k}; "
              f"not held by the format: {dropped}")
    return 0
