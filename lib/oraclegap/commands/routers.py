"""``oraclegap routers POOL [--families a,b,...] [--tau T] [--cv 5 | --split NAME] [--seed S] [--json]``.

Fits router families on calibration prompts and scores them on held-out prompts
(:func:`oraclegap.deploy.evaluate.evaluate_routers`): accuracy (k = 1) or coverage at tau
(k > 1), the gain over the threshold-specific best member (interval re-selecting the best member
per resample) and over the calibration-selected member, e_D against the break-even L/D, the
discordant counts n10/n01 with exact McNemar and Holm p. ``--split half`` is a 50/50 split by
``--seed``; ``--split NAME`` uses the pool's split NAME as the test part; ``--cv K`` cross-fits.
The pool needs prompt text, embeddings or features; the output says which inputs were used.
The calibration-selected constant (``best_single``) is always scored, and the task-wise best is
added to ``--families`` when the pool has a dataset column (``--no-baselines`` leaves it out).
The output ends with a ranking (:func:`oraclegap.deploy.ranking.rank_routers`): bootstrap rank
intervals per family on the shared resamples and the families not distinguishable from the best
(Holm-adjusted exact McNemar tests).
"""

from __future__ import annotations

from ..deploy.evaluate import evaluate_routers, evaluation_cost
from ..deploy.features import DATASET_COLUMNS, EMBED_SOURCES
from ..deploy.ranking import rank_routers
from ..deploy.routers import FAMILIES
from ._common import (
    add_pool_argument,
    add_resource_arguments,
    check_resources,
    emit,
    float_arg,
    int_arg,
    parse_list,
    pool_from_args,
    seed_arg,
)


def register(sub) -> None:
    p = sub.add_parser("routers", help="fit and score router families on held-out prompts (papers 000 Sec. 3.3, 002 Sec. 7)")
    add_pool_argument(p)
    p.add_argument("--families", default=None, metavar="A,B,...",
                   help=f"router families (default: every family the pool's inputs allow); known: {', '.join(FAMILIES)}")
    p.add_argument("--tau", type=float_arg("--tau", 0, 1, open_low=True), default=None,
                   help="for k > 1: score coverage at this threshold in (0, 1] (required)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--cv", type=int_arg("--cv", minimum=2), default=None, metavar="K",
                   help="K-fold cross-fitting, K >= 2 (default 5 when no --split)")
    g.add_argument("--split", default=None, metavar="NAME", help="'half' (50/50 by --seed) or a split name in the pool (its test part)")
    p.add_argument("--seed", type=seed_arg(), default=0, help="seed of the split / folds and the bootstrap (default 0)")
    p.add_argument("--embed", choices=EMBED_SOURCES, default="auto", help="which embedding to use (default auto)")
    p.add_argument("--n-boot", type=int_arg("--n-boot", minimum=100), default=2000,
                   help="prompt-bootstrap resamples, >= 100 (default 2000)")
    p.add_argument("--alpha", type=float_arg("--alpha", 0, 1, open_low=True, open_high=True), default=0.05,
                   help="1 - confidence level of the intervals, in (0, 1)")
    p.add_argument("--progress", action="store_true", help="show a progress bar while fitting")
    p.add_argument("--no-baselines", action="store_true",
                   help="with --families: do not add the task-wise best baseline (the calibration-selected constant, "
                        "best_single, is always scored)")
    add_resource_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _inputs_line(inputs: dict) -> str:
    used = []
    if inputs["text"]:
        used.append("prompt text")
    if inputs["embeddings"]:
        used.append(f"embeddings ({inputs['embeddings']['source']}, d={inputs['embeddings']['dim']})")
    if inputs["features"]:
        used.append(f"features ({len(inputs['features'])} columns)")
    if inputs["dataset"]:
        used.append(f"dataset identity ('{inputs['dataset']['column']}', {inputs['dataset']['levels']} levels)")
    if inputs["answers"] or inputs["confidence"]:
        used.append("answers/confidences (post-inference selectors)")
    return "inputs: " + (", ".join(used) if used else "none")


def _with_baselines(families, pool) -> list | None:
    """The named families plus the task-wise best when the pool has a dataset column with several
    levels (router leaderboards keep finding that such constants beat the routers)."""
    if families is None:
        return None
    has_levels = any(c in pool.prompts.columns and pool.prompts[c].notna().all() and pool.prompts[c].astype(str).nunique() > 1
                     for c in DATASET_COLUMNS)
    if has_levels and "taskwise_best" not in families:
        return [*families, "taskwise_best"]
    return families


def run(args) -> int:
    families = None if args.families is None else list(parse_list(args.families, "--families"))  # repeats refused
    pool = pool_from_args(args)
    if not args.no_baselines:
        families = _with_baselines(families, pool)
    if pool.k == 1 and args.tau is not None:
        raise ValueError("the pool has k=1: --tau applies only to pools with several draws per cell")
    n_families = len(families) if families else len(FAMILIES)
    steps, bytes_ = evaluation_cost(pool.n_prompts, pool.n_policies, n_families, args.n_boot,
                                    costs=pool.cost is not None)
    check_resources(args, f"routers --n-boot {args.n_boot}", steps=steps, bytes_=bytes_, hint="lower --n-boot")
    res = evaluate_routers(
        pool,
        families,
        tau=args.tau,
        cv=args.cv if args.cv is not None else (None if args.split else 5),
        split=args.split,
        seed=args.seed,
        embed=args.embed,
        n_boot=args.n_boot,
        alpha=args.alpha,
        progress=True if args.progress else False,
    )
    ranking = rank_routers(res, pool, seed=args.seed)
    payload = {
        "pool": {"source": args.pool, "n_prompts": pool.n_prompts, "n_policies": pool.n_policies, "k": pool.k},
        **res.to_dict(),
        "ranking": ranking.to_dict(),
    }
    if not args.json:
        metric = "accuracy" if res.tau is None else f"coverage at tau={res.tau:g}"
        print(f"pool {args.pool}: {pool.n_prompts} prompts x {pool.n_policies} policies, k={pool.k}; {metric}; {res.protocol.describe()}")
        print(_inputs_line(res.inputs))
        if res.skipped:
            print("skipped: " + "; ".join(f"{k} ({v})" for k, v in res.skipped.items()))
        print(f"gains: over the threshold-specific best member ({res.evaluation('best_single').best_member}) "
              f"and over the calibration-selected member; {int(100 * (1 - res.alpha))}% prompt-bootstrap intervals")
    emit(payload, res.frame(), args.json)
    if args.json:
        return 0
    if res.certificate is not None:
        c = res.certificate
        print(f"family certificate (002 Thm 6, L={c.L}): G_Pi in [{c.G.lo:.3f}, {c.G.hi:.3f}], H_Pi in [{c.H.lo:.3f}, {c.H.hi:.3f}]")
    else:
        print(f"family certificate: {res.certificate_note}")
    summary = res.field_summary()
    if res.cost is not None:
        print(f"\nfield summaries (strong-weak pair for PGR: {res.cost.strong} / {res.cost.weak}; "
              f"AIQ over mean cost {res.cost.cost_range[0]:.4g}..{res.cost.cost_range[1]:.4g}):")
    else:
        print("\nfield summaries (no costs in the pool: AIQ, APGR and CPT(50%) need them):")
    emit({}, summary.drop(columns=["accuracy"]), False)
    print(f"\nranking of the pre-answer families ({int(100 * (1 - ranking.alpha))}% bootstrap rank intervals on the shared resamples; exact McNemar "
          f"against the best, Holm-adjusted): not distinguishable from {ranking.best}: {', '.join(ranking.tied_with_best)}")
    emit({}, ranking.frame(), False)
    return 0
