"""Paper 001's decomposition with prompt-bootstrap intervals: percentile intervals, and brackets
for O_repro and the terms built on it (between an estimator biased down and one biased up).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..._result import Interval, Result, jsonable
from ..._validate import as_rng, check_alpha, check_int
from ..bootstrap import bootstrap_means
from .checks import AssumptionChecks, assumption_checks
from .inputs import _form, _inputs, _o_exp_prompt, _tie_mean, baseline_scores
from .split_draw import _half_counts, split_draw_repro
from .stopping import LimitStop, PValueStop


@dataclasses.dataclass(frozen=True, repr=False)
class Estimate(Interval):
    """An :class:`~oraclegap._result.Interval` (the shared interval type) with the plain
    prompt interval beside it.

    ``method`` names the construction:
    ``"percentile"`` (prompt-bootstrap percentiles of the estimate) or ``"bracket"`` (lower limit
    from the estimator biased downward, upper limit from the one biased upward).
    ``lo_prompt``/``hi_prompt``: the plain percentile interval of the point estimate
    (prompt-sampling uncertainty only, no allowance for within-prompt bias).
    """

    lo_prompt: float = math.nan
    hi_prompt: float = math.nan

    def row(self) -> dict:
        """{value, lo, hi, level, method, lo_prompt, hi_prompt}: the columns of the
        decomposition's frame."""
        return {
            "value": self.value,
            "lo": self.lo,
            "hi": self.hi,
            "level": self.level,
            "method": self.method,
            "lo_prompt": self.lo_prompt,
            "hi_prompt": self.hi_prompt,
        }


_ORDER = (
    "best_single",
    "baseline",
    "o_exp",
    "o_repro",
    "o_repro_split_half",
    "o_repro_split_loo",
    "delta",
    "delta_split",
    "gap",
    "g_rec",
    "noise_share",
    "noise_share_split",
    "o_exp_independent",
    "frechet_lower",
    "frechet_upper",
)


@dataclasses.dataclass(frozen=True, repr=False)
class Decomposition(Result):
    """O_exp = O_repro + Delta and G = G_rec + Delta against a baseline, each with an interval.

    Keys of ``estimates`` (see :func:`decomposition`): best_single, baseline, o_exp, o_repro
    (plug-in), o_repro_split_half, o_repro_split_loo, delta, delta_split, gap (G), g_rec,
    noise_share (Delta / G), noise_share_split, o_exp_independent, frechet_lower, frechet_upper.
    """

    estimates: dict
    n_prompts: int
    n_policies: int
    k: int
    form: str
    baseline_kind: str
    best_member: str
    split: str
    level: float
    n_boot: int
    seed: object
    assumptions: AssumptionChecks | None = None  # 001's gates, with ``checks=True``

    def __getitem__(self, name: str) -> Estimate:
        return self.estimates[name]

    def value(self, name: str) -> float:
        return self.estimates[name].value

    def flag(self, name: str) -> str:
        """'' or why the magnitude ``name`` is not backed by 001's checks (needs
        ``checks=True``)."""
        if name not in self.estimates:
            raise KeyError(f"no quantity {name!r}; quantities: {list(self.estimates)}")
        return "" if self.assumptions is None else self.assumptions.flag(name)

    def frame(self) -> pd.DataFrame:
        """One row per quantity: value, interval (lo, hi, level, method), the plain prompt interval;
        with 001's checks run, a ``flag`` column names the failed (or untested) check behind it."""
        df = pd.DataFrame(
            [{"quantity": q, **e.row()} for q, e in self.estimates.items()],
            columns=["quantity", "value", "lo", "hi", "level", "method", "lo_prompt", "hi_prompt"],
        )
        if self.assumptions is not None:
            df["flag"] = [self.assumptions.flag(q) for q in df["quantity"]]
        return df

    def to_dict(self) -> dict:
        """JSON-ready: the settings and {quantity: {value, lo, hi, level, method, lo_prompt,
        hi_prompt}} (NaN as null)."""
        return jsonable({
            "n_prompts": self.n_prompts,
            "n_policies": self.n_policies,
            "k": self.k,
            "form": self.form,
            "baseline": self.baseline_kind,
            "best_member": self.best_member,
            "split": self.split,
            "level": self.level,
            "n_boot": self.n_boot,
            "seed": self.seed if isinstance(self.seed, (int, type(None))) else str(self.seed),
            "estimates": {q: e.row() for q, e in self.estimates.items()},
            **({} if self.assumptions is None else {"assumptions": self.assumptions.to_dict()}),
        })


def _q(a: np.ndarray, qs) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if np.isnan(a).all():
        return np.full(len(qs), np.nan)
    return np.nanquantile(a, qs)


def _ratio(num, den):
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


_BEST_SPLITS = 8  # random draw splits behind the split-draw partner of the best single member


def decomposition(
    x,
    *,
    baseline=None,
    form: str | None = None,
    split: str = "loo",
    level: float = 0.95,
    n_boot: int = 2000,
    n_splits: int = 200,
    seed=0,
    progress: bool = False,
    checks: bool = False,
    n_perm: int = 200,
    stop: LimitStop | None = None,
    check_stop: PValueStop | None = None,
) -> Decomposition:
    """The single-draw decomposition of a pool with k >= 2 draws, with prompt-bootstrap intervals.

    Point estimates (plug-in, as 001 reports them): best_single = max_m mean_i c_im/k; O_exp =
    mean_{i,j} max_m R_imj (``form="seed-aligned"``, any dependence across members) or
    mean_i [1 - prod_m (1 - c_im/k)] (``"independent"``); O_repro = mean_i max_m c_im/k; Delta =
    O_exp - O_repro; against the baseline score S (``baseline``: see :func:`baseline_scores`;
    default the best single member) G = O_exp - S, G_rec = O_repro - S and noise share Delta / G.
    Split-draw O_repro (:func:`split_draw_repro`, both methods) and delta_split / noise_share_split
    computed with the ``split`` method; o_exp_independent (the FKG envelope) and the Frechet bounds
    mean_i max_m c_im/k <= single-draw oracle <= mean_i min(1, sum_m c_im/k).

    Intervals at ``level`` from ``n_boot`` prompt resamples (one set of resamples for every
    quantity, so they are joint). Percentile intervals for O_exp (unbiased within a prompt), a
    fixed baseline, the split estimates, o_exp_independent and frechet_upper. O_repro is
    bracketed (module docstring): lower limit the alpha/2 quantile of the split estimate
    (``split``), upper limit the 1 - alpha/2 quantile of the plug-in; since E[split] <= O_repro
    <= E[plug-in], the bracket covers the population value with probability >= level up to the
    normal approximation of each side. Delta, G_rec and the noise share take the matching sides
    (Delta falls as O_repro rises). The best single member is re-selected inside every resample;
    its bracket runs from a split-draw partner (the member chosen on half of every prompt's draws,
    scored on the other half, 8 random splits) to the plug-in max, which removes the selection
    bias that comes from within-prompt draw noise but not the winner's curse across members on
    the same prompts (for that, see :mod:`oraclegap.stats.certify`'s selection-valid intervals);
    G and the share inherit it. Shares are NaN in resamples where G <= 0.

    ``checks=True`` runs 001's assumption checks (:func:`assumption_checks`, ``n_perm``
    permutations, seed ``seed``) and attaches them as ``assumptions``: a magnitude whose check
    fails carries a flag (:meth:`Decomposition.flag`, the ``flag`` column of ``frame()``).
    ``check_stop`` (a :class:`~oraclegap.stats.noise.stopping.PValueStop`, with ``checks=True``)
    stops the checks' permutations once every check's pass or fail is settled, at most ``n_perm``
    (:func:`~oraclegap.stats.noise.checks.permutation_checks`); the checks record the
    permutations drawn.

    ``stop`` (a :class:`~oraclegap.stats.noise.stopping.LimitStop` naming one estimate and one of
    its limits) sizes the bootstrap by the decision that limit feeds: resamples are drawn in looks
    and stop once "limit >= threshold" is settled with Monte Carlo risk ``stop.risk``, at most
    ``n_boot`` (:mod:`~oraclegap.stats.noise.stopping`); every interval is then computed from the
    resamples taken, the first of the full-size bootstrap's, and ``n_boot`` records how many.
    Without ``stop`` all ``n_boot`` resamples are drawn.
    """
    v, alignment, names, _ = _inputs(x, min_k=2)
    form = _form(form, alignment)
    alpha = check_alpha(1 - float(level), "1 - level")
    if split not in ("loo", "half"):
        raise ValueError(f"split must be 'loo' or 'half', got {split!r}")
    if check_stop is not None and not checks:
        raise ValueError("check_stop sizes the assumption checks' permutations: it needs checks=True")
    if check_stop is not None and not isinstance(check_stop, PValueStop):
        raise ValueError(f"check_stop must be a PValueStop or None, got {type(check_stop).__name__}")
    rng = as_rng(seed)
    n, M, k = v.shape
    r = v.mean(axis=2)
    kind, fixed = baseline_scores(baseline, r)
    half = split_draw_repro(v, method="half", n_splits=n_splits, seed=rng)
    loo = split_draw_repro(v, method="loo")
    cols = {
        "o_exp": _o_exp_prompt(v, form),
        "plug": r.max(axis=1),
        "half": half,
        "loo": loo,
        "indep": 1 - np.prod(1 - r, axis=1),
        "fup": np.minimum(1.0, r.sum(axis=1)),
    }
    if fixed is not None:
        cols["base"] = fixed
    keys = list(cols)
    # split-draw partner of the best single member: choose the member on half the draws of every
    # prompt, score it on the other half (both directions, _BEST_SPLITS random splits)
    S = _BEST_SPLITS
    maskA = rng.random((S, k)).argsort(axis=1) < k // 2
    # X = [cols..., r] and the successes on each half, H = [cA (S*M), cB (S*M)], filled in
    # blocks of prompts (memory O(X + H + block)). H holds integer counts in float32, which the
    # bootstrap reads without a float64 copy (at n = 1e6 that halves the 177-column table's
    # memory); the half-rates are H's means over the half sizes.
    q0 = len(keys) + M
    X = np.empty((n, q0))
    for j, c in enumerate(keys):
        X[:, j] = cols[c]
    X[:, len(keys) :] = r
    H = _half_counts(v, maskA)
    point = np.concatenate([X.mean(axis=0), H.sum(axis=0, dtype=np.float64) / n])
    half_sizes = np.repeat([k // 2, k - k // 2], S * M).astype(np.float64)
    point[q0:] /= half_sizes
    off = len(keys)

    def pick(src, name):
        return src[..., keys.index(name)]

    def stats(src):
        member = src[..., off : off + M]
        A = src[..., off + M : off + M + S * M].reshape(src.shape[:-1] + (S, M))
        B = src[..., off + M + S * M :].reshape(src.shape[:-1] + (S, M))
        best = member.max(axis=-1)
        best_lo = (0.5 * (_tie_mean(A, B, axis=-1) + _tie_mean(B, A, axis=-1))).mean(axis=-1)
        base = pick(src, "base") if fixed is not None else best
        base_lo = base if fixed is not None else best_lo
        oe, plug, sp = pick(src, "o_exp"), pick(src, "plug"), pick(src, split)
        gap = oe - base
        return {
            "best_single": best,
            "baseline": base,
            "o_exp": oe,
            "o_repro": plug,
            "o_repro_split_half": pick(src, "half"),
            "o_repro_split_loo": pick(src, "loo"),
            "delta": oe - plug,
            "delta_split": oe - sp,
            "gap": gap,
            "g_rec": plug - base,
            "noise_share": _ratio(oe - plug, gap),
            "noise_share_split": _ratio(oe - sp, gap),
            "o_exp_independent": pick(src, "indep"),
            "frechet_lower": plug,
            "frechet_upper": pick(src, "fup"),
            # the partners biased the other way, for the brackets
            "_best_lo": best_lo,
            "_base_lo": base_lo,
            "_o_repro_lo": sp,
            "_delta_hi": oe - sp,
            "_gap_hi": oe - base_lo,
            "_g_rec_lo": sp - base,
            "_g_rec_hi": plug - base_lo,
            "_share_lo": _ratio(oe - plug, oe - base_lo),
            "_share_hi": _ratio(oe - sp, gap),
        }

    pt = stats(point)
    qs = (alpha / 2, 1 - alpha / 2)
    bracket = {  # quantity: (series for the lower limit, series for the upper limit)
        "best_single": ("_best_lo", "best_single"),
        "baseline": ("_base_lo", "baseline"),
        "o_repro": ("_o_repro_lo", "o_repro"),
        "frechet_lower": ("_o_repro_lo", "frechet_lower"),
        "delta": ("delta", "_delta_hi"),
        "gap": ("gap", "_gap_hi"),
        "g_rec": ("_g_rec_lo", "_g_rec_hi"),
        "noise_share": ("_share_lo", "_share_hi"),
    }
    if fixed is not None:  # a fixed router's score has no selection inside it
        del bracket["baseline"], bracket["gap"]

    def intervals(raw: np.ndarray) -> tuple[dict, dict]:
        """(quantiles of every series, estimates) from the raw bootstrap means [B, q]."""
        rep = raw.copy()
        rep[:, q0:] /= half_sizes
        bs = stats(rep)
        series = list(bs)
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", RuntimeWarning
            )  # all-NaN columns (a share with G <= 0 throughout)
            Q = dict(
                zip(
                    series,
                    np.nanquantile(np.column_stack([bs[q] for q in series]), qs, axis=0).T,
                    strict=True,
                )
            )
        est = {}
        for q in _ORDER:
            plo, phi = Q[q]
            if q in bracket:
                a, b = bracket[q]
                lo, hi, kind_i = Q[a][0], Q[b][1], "bracket"
                if lo > hi:  # degenerate pools (one member, tiny n): the two sides can cross
                    lo, hi = hi, lo
            else:
                lo, hi, kind_i = plo, phi, "percentile"
            if q == "noise_share" and fixed is None:
                # against the best single member 0 <= Delta <= G in the population (O_repro >= S),
                # so the bracket, whose upper side pairs the split-draw O_repro (biased down) with
                # the plug-in S (biased up) and can pass 1, is cut to [0, 1]: coverage is kept
                lo, hi = min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0)
            est[q] = Estimate(
                float(pt[q]), float(lo), float(hi), float(level), kind_i, float(plo), float(phi)
            )
        return bs, est

    decided, looks = None, None
    if stop is not None:
        if stop.quantity not in _ORDER:
            raise ValueError(f"stop.quantity must be one of {list(_ORDER)}, got {stop.quantity!r}")
        name = stop.quantity
        if name in bracket:
            name = bracket[name][0 if stop.side == "lo" else 1]
        j = 0 if stop.side == "lo" else 1

        def decided(raw: np.ndarray) -> bool:
            bs, est = intervals(raw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN series
                own = float(np.nanquantile(bs[name], qs[j]))
            limit = getattr(est[stop.quantity], stop.side)
            # the reported limit must be the series' own quantile's side of the threshold (it is
            # not when a degenerate bracket's sides crossed)
            same = (own >= stop.threshold) == (limit >= stop.threshold)
            return same and stop.decided(bs[name], limit, level, n_boot)

        looks = stop.looks(n_boot)
    boot = bootstrap_means(
        X, n_boot, rng, counts=H, progress=progress, looks=looks, decided=decided
    )
    del H
    _, est = intervals(boot)
    best_member = names[int(r.mean(axis=0).argmax())]
    checked = None
    if checks:
        checked = assumption_checks(
            x,
            baseline=baseline,
            form=form,
            n_perm=n_perm,
            seed=seed if not isinstance(seed, np.random.Generator) else rng,
            stop=check_stop,
        )
    return Decomposition(
        est,
        n,
        M,
        k,
        form,
        kind,
        best_member,
        split,
        float(level),
        int(boot.shape[0]),
        seed if not isinstance(seed, np.random.Generator) else None,
        checked,
    )


def decomposition_cost(n: int, M: int, n_boot: int) -> tuple[int, int]:
    """(steps, bytes) of :func:`decomposition`'s prompt bootstrap on n prompts and M members,
    estimated before any work: a step is one resampled prompt (n per resample); the resampled
    columns are at most 7 per-prompt terms (6, and a fixed baseline's scores), the M member rates
    and the 2 x :data:`_BEST_SPLITS` x M half-draw counts of the best member's split-draw
    partner, one float each per resample, and the statistics built from them hold about four
    such arrays at once, beside one block of resample counts."""
    n, M = check_int(n, "n", minimum=1), check_int(M, "M", minimum=1)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    cols = 7 + M + 2 * _BEST_SPLITS * M
    return n_boot * n, n_boot * cols * 8 * 4 + min(256, n_boot) * n * 8 * 2


def baseline_table(
    x, baselines: Mapping, *, form=None, level: float = 0.95, n_boot: int = 2000, seed=0
) -> pd.DataFrame:
    """The decomposition against several baselines (name -> None/'best', choices or scores).

    One row per baseline: its score S, O_exp, O_repro, Delta (identical in every row: the floor
    does not depend on the router), G = O_exp - S, G_rec and the noise share Delta / G with its
    bracket interval. Same seed, same resamples for every row.
    """
    if not isinstance(baselines, Mapping) or not baselines:
        raise ValueError("baselines must be a non-empty mapping name -> baseline")
    rows = []
    for name, b in baselines.items():
        d = decomposition(x, baseline=b, form=form, level=level, n_boot=n_boot, seed=seed)
        row = {"name": str(name), "kind": d.baseline_kind, "score": d.value("baseline")}
        for q in ("o_exp", "o_repro", "delta", "gap", "g_rec", "noise_share"):
            row[q] = d.value(q)
        row["gap_lo"], row["gap_hi"] = d["gap"].lo, d["gap"].hi
        row["noise_share_lo"], row["noise_share_hi"] = d["noise_share"].lo, d["noise_share"].hi
        rows.append(row)
    return pd.DataFrame(rows)
