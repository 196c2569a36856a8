"""``oraclegap certify POOL [--alpha 0.05] [--method exact|paired|hoeffding|hoeffding-paired] [--json]``.

A selection-valid interval for the outcome-oracle gap G = q - max_m p_m (paper 002, Thm 4; the
paired interval; the Hoeffding variants) with the naive interval beside it. k = 1 pools are
used directly; a k > 1 pool needs a reduction: coverage at a threshold (``--tau T``) or one draw
(``--draw J``), as every front-door verb asks. ``--by COLUMN`` certifies every level of a prompt-table column
separately (e.g. ``--by category`` on ``mmlu-pro``). POOL may be a registry name.
"""

from __future__ import annotations

import pandas as pd

from ..stats.certify import GAP_METHODS, NAIVE_METHODS, outcomes_from_pool, selection_valid_gap_from_outcomes
from ._common import add_pool_argument, emit, float_arg, int_arg, pool_from_args


def register(sub) -> None:
    p = sub.add_parser("certify", help="selection-valid interval for the oracle gap (Shihab et al.'s Theorem 4, paired, Hoeffding)")
    add_pool_argument(p)
    p.add_argument("--alpha", type=float_arg("--alpha", 0, 1, open_low=True, open_high=True), default=0.05,
                   help="1 - confidence level, in (0, 1)")
    p.add_argument("--method", choices=GAP_METHODS, default="exact")
    p.add_argument("--naive", choices=NAIVE_METHODS, default="cp", help="the naive interval shown beside it")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--draw", type=int_arg("--draw", minimum=0), default=None, help="for k > 1: success = draw J")
    g.add_argument("--tau", type=float_arg("--tau", 0, 1, open_low=True), default=None,
                   help="for k > 1: success = coverage at threshold tau in (0, 1]")
    p.add_argument("--by", default=None, metavar="COLUMN", help="certify each level of this prompt-table column separately")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args) -> int:
    pool = pool_from_args(args)
    if pool.k == 1:
        if args.draw not in (None, 0) or args.tau is not None:
            raise ValueError("the pool has k=1; --draw and --tau apply only to pools with several draws per cell")
        R = outcomes_from_pool(pool)
        reduction = "k=1"
    elif args.tau is not None:
        R = outcomes_from_pool(pool, tau=args.tau)
        reduction = f"coverage at tau={args.tau}"
    elif args.draw is not None:
        R = outcomes_from_pool(pool, draw=args.draw)
        reduction = f"draw {args.draw} of k={pool.k}"
    else:
        raise ValueError(f"the pool has k={pool.k} draws per cell: pass --tau T (success = coverage at T) "
                         "or --draw J (success = draw J)")
    names = pool.policy_names
    groups = [("all", slice(None))]
    if args.by is not None:
        groups = _by_groups(pool, args.by)
    frames, results = [], []
    for lvl, sel in groups:
        res = selection_valid_gap_from_outcomes(R[sel], args.alpha, args.method, naive=args.naive, model_names=names)
        fr = res.frame()
        if args.by is not None:
            fr.insert(0, args.by, lvl)
        frames.append(fr)
        d = fr.iloc[0].to_dict()
        d["certified"] = res.certified
        results.append(d)
    table = pd.concat(frames, ignore_index=True)
    payload = {
        "pool": {"source": args.pool, "n_prompts": pool.n_prompts, "n_policies": pool.n_policies, "k": pool.k, "reduction": reduction},
        "alpha": args.alpha,
        "method": args.method,
        "naive": args.naive,
        "by": args.by,
        "results": results,
    }
    emit(payload, table, args.json)
    return 0


def _by_groups(pool, by: str) -> list:
    """(level, mask) per level of a prompt-table column; refuses an unknown, empty or partly missing column."""
    if by not in pool.prompts.columns:
        raise ValueError(f"--by {by!r} is not a prompt-table column; columns: {list(pool.prompts.columns)}")
    raw = pool.prompts[by]
    missing = raw.isna().to_numpy() | raw.map(lambda x: isinstance(x, str) and not x.strip()).to_numpy(dtype=bool)
    if missing.all():
        raise ValueError(f"--by {by!r}: the column is empty (no prompt has a value); choose a column with levels")
    if missing.any():
        first = pool.prompt_ids[int(missing.nonzero()[0][0])]
        raise ValueError(f"--by {by!r}: {int(missing.sum())} of {pool.n_prompts} prompts have no value (first: id {first!r}); "
                         "every prompt needs a level")
    col = raw.astype(str)
    if pd.Series(raw.map(type)).nunique() > 1 and col.nunique() != pd.Series(raw).nunique():
        raise ValueError(f"--by {by!r} mixes values that read as the same level (e.g. 1 and '1')")
    return [(lvl, (col == lvl).to_numpy()) for lvl in sorted(col.unique())]
