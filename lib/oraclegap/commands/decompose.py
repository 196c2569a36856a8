"""``oraclegap decompose POOL [--baseline best|FILE] [--json] [--n-boot B] [--seed S]``.

The single-draw decomposition of paper 001 (arXiv 2607.03436) on a pool with k >= 2 draws per
cell: best single member, O_repro, O_exp, Delta = O_exp - O_repro, the gap G = O_exp - S against
the baseline router S and the noise share Delta / G, each with a prompt-bootstrap interval
(O_repro and the terms built on it get the bracket of :mod:`oraclegap.stats.noise`). ``--json``
adds the split-draw O_repro, the Frechet bounds, support strata, the k-sweep, the pool-size sweep,
the best-of-K check, O_agg (when the pool has answers) and the baseline table.

001's assumption checks run by default (``--no-checks`` skips them; ``--n-perm`` permutations):
the runs and dispersion tests of the draws within each prompt-member cell, the coupling
permutation test and the known-p TV gate of cross-member independence. A magnitude whose check
fails is flagged: the table gets a ``flag`` column, the JSON an ``assumptions`` entry (checks,
flags, the Frechet bracket, the winner's-curse radius of O_repro) and ``reliable`` (001's
reliable fractions at tau = 0.5, 0.9); ``paper001`` names the entries that follow 001's own
definitions (strata on draw 0, the first-k sweep, best-of-k over all draws).

``--baseline FILE``: per-prompt choices of another router (integer policy positions, or policy
names one per line) or its per-prompt scores in [0, 1] (e.g. a released ``q_router``), as ``.npy``,
``FILE.npz:KEY`` or a text file with one value per line; ``--baseline-kind`` settles files whose
values could be either.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import _formats
from .._validate import check_file, link_problem, read_npy, read_npz, read_text
from ..stats import noise
from ._common import (
    add_pool_argument,
    add_resource_arguments,
    check_resources,
    emit,
    float_arg,
    int_arg,
    pool_from_args,
    seed_arg,
)

KINDS = ("auto", "choices", "scores")


def register(sub) -> None:
    p = sub.add_parser("decompose", help="single-draw decomposition O_exp = O_repro + Delta with intervals (arXiv 2607.03436)")
    add_pool_argument(p)
    p.add_argument("--baseline", default="best", metavar="best|FILE",
                   help="the router the gap is measured against: 'best' (best single member) or a file of per-prompt choices or scores")
    p.add_argument("--baseline-kind", choices=KINDS, default="auto", help="how to read --baseline FILE (default: from its values)")
    p.add_argument("--n-boot", type=int_arg("--n-boot", minimum=1), default=2000, help="prompt-bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=seed_arg(), default=0, help="random seed, a whole number >= 0")
    p.add_argument("--alpha", type=float_arg("--alpha", 0, 1, open_low=True, open_high=True), default=0.05,
                   help="1 - confidence level of every interval, in (0, 1)")
    p.add_argument("--form", choices=("seed-aligned", "independent"), default=None,
                   help="O_exp estimator (default: seed-aligned when the pool says its draws are)")
    p.add_argument("--split", choices=("loo", "half"), default="loo", help="split-draw estimator behind the brackets")
    p.add_argument("--thin", type=int_arg("--thin", minimum=0), default=3,
                   help="support strata: thin means support <= THIN, a whole number >= 0")
    p.add_argument("--no-checks", action="store_true", help="skip 001's assumption checks (runs, dispersion, coupling, known-p TV)")
    p.add_argument("--n-perm", type=int_arg("--n-perm", minimum=1), default=200,
                   help="within-cell permutations behind the assumption checks (default 200)")
    add_resource_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON (with strata, sweeps, best-of-K, baselines) instead of a table")
    p.set_defaults(func=run)


def _read_values(spec: str) -> np.ndarray:
    """The values of ``--baseline FILE``: a numeric ``.npy``, ``FILE.npz:KEY`` or a UTF-8 text file
    with one value per line. Pickles (by name or by content) get the project's refusal, a
    directory is named as one, a file that is not UTF-8 is named with the offending byte."""
    path = Path(spec)
    if ":" in spec and not path.exists():
        file, key = spec.rsplit(":", 1)
        if not file.endswith(".npz"):
            raise ValueError(f"--baseline {spec!r}: FILE:KEY needs an .npz file")
        check_file(file, "--baseline file")
        if not key:
            raise ValueError(f"--baseline {spec!r} names no array after the colon; use FILE.npz:KEY")
        try:
            return np.asarray(read_npz(Path(file), [key], label=f"--baseline {file}")[key])
        except ValueError as exc:
            if "object array" in str(exc):
                raise ValueError(f"--baseline array {key!r} in {file!r} is not numeric (object arrays are never "
                                 f"unpickled){_formats.object_array_hint()}") from None
            raise
    if spec in ("", "-"):
        raise ValueError(f"--baseline {spec!r} is neither 'best' nor a file")
    if not path.exists():
        problem = link_problem(path)
        raise ValueError(f"--baseline {spec!r} {problem}" if problem else
                         f"--baseline {spec!r} is neither 'best' nor an existing file")
    check_file(path, "--baseline")
    if path.suffix.lower() in _formats.PICKLE_SUFFIXES:
        raise ValueError(f"--baseline: {_formats.pickle_refusal(path)}")
    if path.suffix.lower() == ".npy":
        try:
            return read_npy(path, label=f"--baseline {spec}")
        except ValueError as exc:
            if "object array" in str(exc):
                raise ValueError(f"{exc}{_formats.object_array_hint()}") from None
            raise
    if path.suffix.lower() == ".npz":
        raise ValueError(f"--baseline {spec!r}: name the array as FILE.npz:KEY")
    if _formats.is_pickle_file(path):
        raise ValueError(f"--baseline: {_formats.pickle_refusal(path, by_content=True)}")
    text = read_text(path, f"--baseline {spec}")
    lines = [ln.strip().split(",")[0].strip() for ln in text.splitlines()]
    return np.asarray([ln for ln in lines if ln], dtype=object)


def _as_baseline(values: np.ndarray, kind: str, names: list[str], n: int):
    """Turn file values into integer choices or float scores for :func:`noise.baseline_scores`."""
    vals = np.asarray(values)
    if vals.ndim != 1 or vals.shape[0] != n:
        raise ValueError(f"--baseline must hold one value per prompt ({n}), got shape {vals.shape}")
    if vals.dtype == object or vals.dtype.kind in "US":
        strs = [str(x) for x in vals]
        try:
            vals = np.asarray([float(x) for x in strs])
            text_ints = all(s.lstrip("+-").isdigit() for s in strs)
        except ValueError:
            unknown = sorted({s for s in strs if s not in names})
            if unknown:
                raise ValueError(f"--baseline names unknown policies {unknown[:5]}; policies: {names}") from None
            return np.asarray([names.index(s) for s in strs], dtype=np.int64)
    else:
        text_ints = vals.dtype.kind in "iu"
    if vals.dtype.kind == "b":
        raise ValueError("--baseline holds booleans; give integer choices or float scores")
    whole = bool(np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)))
    if kind == "auto":
        if vals.dtype.kind in "iu":
            kind = "choices"
        elif whole and vals.max() > 1:
            kind = "choices"
        elif text_ints and whole:
            raise ValueError("--baseline holds only 0 and 1: choices of policies 0/1 or per-prompt scores? pass --baseline-kind")
        else:
            kind = "scores"
    if kind == "choices":
        if not whole:
            raise ValueError("--baseline-kind choices needs whole numbers (policy positions)")
        return vals.astype(np.int64)
    return vals.astype(np.float64)


def run(args) -> int:
    pool = pool_from_args(args)
    if pool.k < 2:
        raise ValueError(f"decompose needs k >= 2 draws per cell; {args.pool!r} has k={pool.k} (O_repro is not identified from one draw)")
    steps, bytes_ = noise.decomposition_cost(pool.n_prompts, pool.n_policies, args.n_boot)
    check_resources(args, f"decompose --n-boot {args.n_boot}", steps=steps, bytes_=bytes_, hint="lower --n-boot")
    baseline, label = None, "best single member"
    if args.baseline not in ("best", "best-single"):
        baseline = _as_baseline(_read_values(args.baseline), args.baseline_kind, pool.policy_names, pool.n_prompts)
        label = args.baseline
    common = dict(form=args.form, n_boot=args.n_boot, seed=args.seed, level=1.0 - args.alpha)
    dec = noise.decomposition(pool, baseline=baseline, split=args.split, checks=not args.no_checks, n_perm=args.n_perm, **common)
    frame = dec.frame()
    if not args.json:
        emit({}, frame, False)
        if dec.assumptions is not None:
            verdict = {True: "pass", False: "FAIL", None: "untested"}
            print("001 checks: " + "; ".join(f"{c.name} {verdict[c.passed]} (value {c.value:.4g}, p {c.p_value:.3g})"
                                             for c in dec.assumptions.checks))
        return 0
    payload = {
        "pool": {"source": args.pool, "n_prompts": pool.n_prompts, "n_policies": pool.n_policies, "k": pool.k,
                 "alignment": pool.alignment, "baseline": label},
        **{q: dec.value(q) for q in ("best_single", "o_repro", "o_exp", "delta", "gap", "noise_share")},
        "intervals": {q: {"lo": e.lo, "hi": e.hi, "method": e.method, "lo_prompt": e.lo_prompt, "hi_prompt": e.hi_prompt}
                      for q, e in dec.estimates.items()},
        "decomposition": dec.to_dict(),
        "split_draw": {"o_repro_plugin": dec.value("o_repro"), "o_repro_split_half": dec.value("o_repro_split_half"),
                       "o_repro_split_loo": dec.value("o_repro_split_loo")},
        "frechet": {"lower": dec.value("frechet_lower"), "upper": dec.value("frechet_upper"),
                    "independent": dec.value("o_exp_independent"), "o_exp": dec.value("o_exp")},
        "strata": {s: noise.support_strata(pool, support=s, thin=args.thin, baseline=baseline, form=args.form).to_dict(orient="records")
                   for s in ("rate", "draw")},
        "k_sweep": {s: noise.k_sweep(pool, subsets=s, seed=args.seed, baseline=baseline, form=args.form).to_dict(orient="records")
                    for s in ("random", "first")},
        "pool_size_sweep": noise.pool_size_sweep(pool, seed=args.seed, form=args.form).to_dict(orient="records"),
        "best_of_k": noise.best_of_k_check(pool, n_boot=args.n_boot, seed=args.seed, level=1.0 - args.alpha, form=args.form).frame().to_dict(orient="records"),
    }
    if dec.assumptions is not None:
        payload["assumptions"] = dec.assumptions.to_dict()
    payload["reliable"] = noise.reliable_fractions(pool).to_dict(orient="records")
    payload["paper001"] = {"strata": "strata.draw (support on draw 0)", "k_sweep": "k_sweep.first (the first k draws)",
                           "best_of_k": "best-of-k on all k draws, in-sample (per-prompt argmax over all draws)"}
    bl = {"best single member": None} if baseline is None else {"best single member": None, label: baseline}
    payload["baselines"] = noise.baseline_table(pool, bl, **common).to_dict(orient="records")
    if pool.answers is not None:
        payload["aggregation"] = noise.aggregation_ceiling(pool, form=args.form).frame().to_dict(orient="records")[0]
    emit(payload, frame, True)
    return 0
