"""Deployment rules other than routing: mixtures, votes and weight-averaged policies
(arXiv 2609.32996, Sections 3.3-3.4, App. B.1-B.3).

A *uniform mixture* answers each response by a member drawn uniformly at random, so its success
probability on prompt i is (1/M) sum_m p_im. Two estimates of it from stored responses:

* **all responses** -- the posterior of the pooled counts, (S_i + a) / (M k + a + b) with
  S_i = sum_m c_im (raw: S_i / (M k)); it sees M k responses per prompt where a member sees k,
  so it enjoys a finer count grid and a smaller variance than any member
  (:func:`oraclegap.stats.coverage.mixture_rates`);
* **budget-matched** (App. B.1, the paper's primary comparison) -- subsample k of the M k pooled
  outcomes of each prompt, estimate the rate from those k exactly as for one member (the split's
  fitted prior: (s + a) / (k + a + b)), and average the score over 200 subsamples. The number of
  successes in a uniform k-subset of M k outcomes with S_i successes is hypergeometric, so the
  subsample counts are drawn from that law directly (the same law as drawing the outcomes).

Systems are compared by rAUC, the band-averaged coverage (1/(hi - lo)) int_lo^hi C(tau) dtau,
which is a mean over prompts of a per-prompt contribution (:func:`rauc_contributions`), so every
paired prompt bootstrap is one matrix product: each resample reweights the same per-prompt
contributions of every system (for the budget-matched mixture: averaged over the *same*
subsamples). Differences are reported against the member selected on the evaluated split (the
best member by rAUC, held fixed across the resamples as 2609.32996 does; ``reselect=True``
re-selects it inside every resample) and against the member selected on a validation split (the
deployable comparison).

* :func:`deployment_rules` -- Table 3 of 2609.32996: members, test- and validation-selected best
  member, the plug-in oracle, both mixtures, any extra policy column (a soup), rAUC and Pass@1,
  with paired-bootstrap differences;
* :func:`band_sensitivity` -- the budget-matched mixture over several bands (App. B.3);
* :func:`matched_mixture_coverage` -- coverage at thresholds of both mixture estimates;
* :func:`vote_comparison` -- a plurality vote over r responses drawn from the pool versus the best
  member's self-consistency vote over r of its own responses (Section 3.4; needs answers); with
  ``replace=True`` the r responses are drawn with replacement, so r may exceed k (k = 1 pools);
* :func:`score_soup` -- the hook for a weight-averaged policy: its verdicts are one more policy
  column, scored through the same path as a member.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
from scipy.stats import hypergeom

from .._result import Interval, Result
from .._validate import as_bool_array, as_rng, check_alpha, check_int, check_taus
from ..pool import Pool
from ..stats.bootstrap import bootstrap_means
from ..stats.coverage import BetaPrior, as_counts, covered, fit_beta_prior, member_rates, mixture_rates
from ..stats.noise import answer_codes, plurality_vote

__all__ = [
    "DEFAULT_BANDS",
    "rauc_contributions",
    "matched_mixture_counts",
    "MatchedMixture",
    "matched_mixture",
    "matched_mixture_coverage",
    "DeploymentTable",
    "deployment_rules",
    "score_soup",
    "band_sensitivity",
    "VoteComparison",
    "vote_comparison",
]

#: The reliability bands of 2609.32996 App. B.3 (primary band first).
DEFAULT_BANDS = ((0.05, 0.30), (0.05, 0.50), (0.10, 0.30), (0.05, 0.20))


def _band(band) -> tuple[float, float]:
    try:
        lo, hi = (float(b) for b in band)
    except (TypeError, ValueError):
        raise ValueError(f"band must be a pair (lo, hi), got {band!r}") from None
    if not (0 < lo < hi <= 1):
        raise ValueError(f"band must satisfy 0 < lo < hi <= 1, got {band!r}")
    return lo, hi


def rauc_contributions(rates, band=(0.05, 0.30), *, k_eff: float | None = None, grid: int = 1001, method: str = "trapezoid") -> np.ndarray:
    """Per-element rAUC contributions: the mean of the result over prompts is the rAUC.

    For a rate r: (1/(hi - lo)) * trapezoid over ``grid`` equally spaced thresholds of 1[r >= tau]
    (with :func:`~oraclegap.stats.coverage.covered`'s tolerance for ``k_eff``), or the exact
    clip(r - lo, 0, hi - lo)/(hi - lo) with ``method="exact"``. Identical, element by element, to
    what :func:`oraclegap.stats.coverage.rauc` averages. Any shape; computed once per distinct value.
    """
    lo, hi = _band(band)
    r = np.asarray(rates, dtype=np.float64)
    if method == "exact":
        return np.clip(r - lo, 0, hi - lo) / (hi - lo)
    if method != "trapezoid":
        raise ValueError(f"method must be 'trapezoid' or 'exact', got {method!r}")
    grid = check_int(grid, "grid", minimum=2)
    uniq, inv = np.unique(r.ravel(), return_inverse=True)
    ts = np.linspace(lo, hi, grid)
    contrib = np.trapezoid(covered(uniq[None, :], ts[:, None], k_eff).astype(np.float64), ts, axis=0) / (hi - lo)
    return contrib[inv].reshape(r.shape)


def _prior_for(c, k, estimator: str, prior):
    if estimator == "raw":
        return None
    if estimator != "smoothed":
        raise ValueError(f"estimator must be 'raw' or 'smoothed', got {estimator!r}")
    if prior is None:
        return fit_beta_prior(c, k)
    if not isinstance(prior, BetaPrior):
        raise TypeError(f"prior must be a BetaPrior, got {type(prior).__name__}")
    return prior


def _count_rate(counts, k: int, prior):
    """Rate of ``counts`` successes out of ``k`` for one member: raw c/k or (c + a)/(k + a + b)."""
    return np.asarray(counts) / k if prior is None else prior.posterior_mean(counts, k)


def matched_mixture_counts(x, n_subsamples: int = 200, seed=0, *, k: int | None = None) -> np.ndarray:
    """Success counts [n_subsamples, n] of k outcomes subsampled without replacement from each prompt's M k.

    Draw s_ri ~ Hypergeometric(S_i successes, M k - S_i failures, k draws), the law of the number
    of successes in a uniformly random k-subset of the pooled outcomes.
    """
    c, k = as_counts(x, k)
    n_subsamples = check_int(n_subsamples, "n_subsamples", minimum=1)
    M = c.shape[1]
    S = c.sum(axis=1)
    return as_rng(seed).hypergeometric(S, M * k - S, k, size=(n_subsamples, c.shape[0]))


@dataclasses.dataclass(frozen=True, repr=False)
class MatchedMixture(Result):
    """The budget-matched mixture: per-prompt rAUC contribution averaged over subsamples."""

    _repr_fields = ("rauc", "pass1", "n_subsamples", "prior", "contributions", "subsample_rauc")

    rauc: float
    contributions: np.ndarray  # [n], mean over subsamples (exact expectation when n_subsamples is None)
    subsample_rauc: np.ndarray | None  # [R] rAUC of each subsample (None for the exact expectation)
    pass1: float
    prior: BetaPrior | None
    n_subsamples: int | None

    def frame(self) -> pd.DataFrame:
        """One row: rAUC, Pass@1, the subsamples (None: the exact expectation), the prior's a, b."""
        a, b = (np.nan, np.nan) if self.prior is None else (self.prior.a, self.prior.b)
        return pd.DataFrame([{"rauc": self.rauc, "pass1": self.pass1,
                              "n_subsamples": self.n_subsamples, "prior_a": a, "prior_b": b}])


def matched_mixture(
    x,
    band=(0.05, 0.30),
    *,
    k: int | None = None,
    estimator: str = "smoothed",
    prior: BetaPrior | None = None,
    n_subsamples: int | None = 200,
    seed=0,
    grid: int = 1001,
) -> MatchedMixture:
    """rAUC of the budget-matched uniform mixture (2609.32996 App. B.1).

    For each of ``n_subsamples`` subsamples, k of the M k pooled outcomes of every prompt are kept
    (:func:`matched_mixture_counts`), the rate is estimated from those k as for one member
    (``estimator="smoothed"``: the split's fitted Beta prior, (s + a)/(k + a + b); ``"raw"``: s/k)
    and its rAUC contribution taken; contributions are averaged over the subsamples.
    ``n_subsamples=None`` gives the exact expectation over the hypergeometric law (the limit of
    infinitely many subsamples). Pass@1 is the pooled success rate S_i/(M k) averaged over
    prompts (every subsample's expectation).
    """
    c, k = as_counts(x, k)
    n, M = c.shape
    prior = _prior_for(c, k, estimator, prior)
    table = rauc_contributions(_count_rate(np.arange(k + 1), k, prior), band, k_eff=k, grid=grid)
    S = c.sum(axis=1)
    if n_subsamples is None:
        s = np.arange(k + 1)
        pmf = hypergeom.pmf(s[None, :], M * k, S[:, None], k)  # [n, k + 1]
        contrib = pmf @ table
        sub = None
    else:
        draws = matched_mixture_counts(c, n_subsamples, seed, k=k)
        per = table[draws]  # [R, n]
        contrib = per.mean(axis=0)
        sub = per.mean(axis=1)
    return MatchedMixture(float(contrib.mean()), contrib, sub, float((S / (M * k)).mean()), prior, n_subsamples)


def matched_mixture_coverage(
    x, taus, *, k: int | None = None, estimator: str = "smoothed", prior: BetaPrior | None = None
) -> pd.DataFrame:
    """Coverage at each tau of the budget-matched mixture (exact expectation over subsamples),
    the all-responses mixture (pooled posterior) and the best member, with the same prior."""

    taus = check_taus(taus)
    c, k = as_counts(x, k)
    n, M = c.shape
    prior = _prior_for(c, k, estimator, prior)
    S = c.sum(axis=1)
    s = np.arange(k + 1)
    pmf = hypergeom.pmf(s[None, :], M * k, S[:, None], k)
    cov_count = covered(_count_rate(s, k, prior)[None, :], taus[:, None], k)  # [T, k + 1]
    matched = (pmf @ cov_count.T).mean(axis=0)
    est = "raw" if prior is None else "smoothed"
    mix_all = covered(mixture_rates(c, k, estimator=est, prior=prior)[None, :], taus[:, None], M * k).mean(axis=1)
    rates = member_rates(c, k, estimator=est, prior=prior)
    best = covered(rates[None], taus[:, None, None], k).mean(axis=1).max(axis=1)
    return pd.DataFrame({"tau": taus, "best_member": best, "mixture_matched": matched, "mixture_all": mix_all})


# ============================================================================ the deployment table
@dataclasses.dataclass(frozen=True, repr=False)
class DeploymentTable(Result):
    """rAUC and Pass@1 of every deployment rule with paired prompt-bootstrap differences.

    ``frame()`` columns: system, kind, rauc, pass1, then for each comparator X in (test, val,
    mixture) ``diff_X``, ``lo_X``, ``hi_X``: the system's rAUC minus the test-selected best member
    (held fixed across the resamples, 2609.32996's rule; re-selected inside every resample when
    ``reselect``), the validation-selected member, and the budget-matched mixture.
    """

    table: pd.DataFrame
    band: tuple
    estimator: str
    prior: BetaPrior | None
    test_member: str
    val_member: str | None
    n_subsamples: int | None
    n_boot: int
    level: float
    reselect: bool = False

    def frame(self) -> pd.DataFrame:
        return self.table.copy()

    def row(self, system_or_kind: str) -> pd.Series:
        t = self.table
        hit = t[(t["system"] == system_or_kind) | (t["kind"] == system_or_kind)]
        if hit.empty:
            raise KeyError(f"no row {system_or_kind!r}; systems: {t['system'].tolist()}")
        return hit.iloc[0]


def _extra_counts(name: str, block, n: int) -> tuple[np.ndarray, int]:
    """Counts [n] and k of an extra policy given as verdicts [n, k] / [n, 1, k] or a one-policy Pool."""
    if isinstance(block, Pool):
        if block.n_policies != 1:
            raise ValueError(f"extra policy {name!r}: a Pool must hold exactly one policy, got {block.n_policies}")
        v = block.verdicts[:, 0, :]
    else:
        v = as_bool_array(block, f"extra[{name!r}]")
        if v.ndim == 3 and v.shape[1] == 1:
            v = v[:, 0, :]
        if v.ndim == 1:
            v = v[:, None]
        if v.ndim != 2:
            raise ValueError(f"extra policy {name!r} must be verdicts [n, k] (or [n, 1, k]), got shape {v.shape}")
    if v.shape[0] != n or v.shape[1] == 0:
        raise ValueError(f"extra policy {name!r} has shape {v.shape}; expected {n} prompts and at least one draw")
    return v.sum(axis=1).astype(np.int64), v.shape[1]


def _validation_member(validation, names, band, estimator, grid) -> int | None:
    if validation is None:
        return None
    if isinstance(validation, (int, np.integer)) and not isinstance(validation, bool):
        j = int(validation)
        if not 0 <= j < len(names):
            raise ValueError(f"validation member position {j} is outside [0, {len(names)})")
        return j
    if isinstance(validation, str):
        if validation not in names:
            raise ValueError(f"validation member {validation!r} is not a policy; policies: {names}")
        return names.index(validation)
    cv, kv = as_counts(validation)
    if cv.shape[1] != len(names):
        raise ValueError(f"validation has {cv.shape[1]} policies, the evaluated pool {len(names)}")
    pv = _prior_for(cv, kv, estimator, None)
    contrib = rauc_contributions(_count_rate(cv, kv, pv), band, k_eff=kv, grid=grid)
    return int(contrib.mean(axis=0).argmax())


def deployment_rules(
    x,
    band=(0.05, 0.30),
    *,
    k: int | None = None,
    validation=None,
    extra=None,
    estimator: str = "smoothed",
    prior: BetaPrior | None = None,
    n_subsamples: int | None = 200,
    n_boot: int = 2000,
    level: float = 0.95,
    seed=0,
    grid: int = 1001,
    reselect: bool = False,
) -> DeploymentTable:
    """Every deployment rule of 2609.32996 Table 3 on one evaluated split, at a matched estimator.

    Systems (rates estimated with the evaluated split's prior, fitted by moments when
    ``prior`` is None and ``estimator="smoothed"``): each member; the best member selected on this
    split (max rAUC); the member selected on ``validation`` (a pool or verdicts of the same members
    on validation prompts -- selected by rAUC with *its* fitted prior -- or a member position or
    name); the plug-in oracle (per prompt the member with the highest estimated rate); the uniform
    mixture from all M k responses (pooled posterior); the budget-matched mixture
    (:func:`matched_mixture`); and every ``extra`` policy (name -> verdicts [n, k'], e.g. a soup),
    scored exactly like a member. Pass@1: mean success rate (oracle: mean_i max_m c_im/k).

    Intervals: ``n_boot`` paired prompt resamples shared by all systems; the budget-matched
    mixture's per-prompt contribution is averaged over the same subsamples in every resample.
    Differences against the test-selected member hold that member fixed across the resamples, as
    2609.32996 does for the budget-matched mixture (its Table 3 and App. B.3). ``reselect=True``
    re-selects the best member inside each resample instead (the paper's rule for *router* gains,
    Table A1), which shifts every interval against the system. The validation-selected member is
    always fixed.
    """
    if not isinstance(reselect, (bool, np.bool_)):
        raise TypeError(f"reselect must be True or False, got {reselect!r}")
    c, k = as_counts(x, k)
    n, M = c.shape
    names = x.policy_names if isinstance(x, Pool) else [f"m{j}" for j in range(M)]
    alpha = check_alpha(1 - float(level), "1 - level")
    prior = _prior_for(c, k, estimator, prior)
    rng = as_rng(seed)
    member = rauc_contributions(_count_rate(c, k, prior), band, k_eff=k, grid=grid)  # [n, M]
    oracle = member.max(axis=1)
    est = "raw" if prior is None else "smoothed"
    mix_all = rauc_contributions(mixture_rates(c, k, estimator=est, prior=prior), band, k_eff=M * k, grid=grid)
    matched = matched_mixture(c, band, k=k, estimator=est, prior=prior, n_subsamples=n_subsamples, seed=rng, grid=grid)
    extras = {}
    for name, block in (extra or {}).items():
        ce, ke = _extra_counts(str(name), block, n)
        extras[str(name)] = (rauc_contributions(_count_rate(ce, ke, prior), band, k_eff=ke, grid=grid), ce / ke)
    j_val = _validation_member(validation, names, band, estimator, grid)

    r = c / k
    systems = [(names[j], "member", member[:, j], r[:, j]) for j in range(M)]
    systems += [
        ("plug-in oracle", "oracle", oracle, r.max(axis=1)),
        ("uniform mixture, all responses", "mixture_all", mix_all, c.sum(axis=1) / (M * k)),
        (f"uniform mixture, {k} of {M * k} responses", "mixture_matched", matched.contributions, c.sum(axis=1) / (M * k)),
    ]
    systems += [(name, "extra", con, p1) for name, (con, p1) in extras.items()]
    Xs = np.column_stack([s[2] for s in systems])
    boot = bootstrap_means(Xs, n_boot, rng)
    pt = Xs.mean(axis=0)
    j_test = int(pt[:M].argmax())
    best_b, best_p = (boot[:, :M].max(axis=1) if reselect else boot[:, j_test]), pt[:M].max()
    i_mix = 2 + M
    qs = (alpha / 2, 1 - alpha / 2)

    def diffs(col):
        out = {}
        pairs = [("test", pt[col] - best_p, boot[:, col] - best_b)]
        if j_val is not None:
            pairs.append(("val", pt[col] - pt[j_val], boot[:, col] - boot[:, j_val]))
        pairs.append(("mixture", pt[col] - pt[i_mix], boot[:, col] - boot[:, i_mix]))
        for key, d, db in pairs:
            lo, hi = np.quantile(db, qs)
            out.update({f"diff_{key}": float(d), f"lo_{key}": float(lo), f"hi_{key}": float(hi)})
        return out

    rows = []
    for col, (name, kind, _, p1) in enumerate(systems):
        rows.append({"system": name, "kind": kind, "rauc": float(pt[col]), "pass1": float(np.mean(p1)), **diffs(col)})
        if col == M - 1:  # after the members: the selected ones
            rows.append({"system": f"best member on this split ({names[j_test]})", "kind": "best_test", "rauc": float(best_p),
                         "pass1": float(r[:, j_test].mean()), **diffs(j_test)})
            if j_val is not None:
                rows.append({"system": f"member selected on validation ({names[j_val]})", "kind": "best_val",
                             "rauc": float(pt[j_val]), "pass1": float(r[:, j_val].mean()), **diffs(j_val)})
    table = pd.DataFrame(rows)
    # with reselect, the test-selected row's difference from itself re-selected per resample is the selection shift, keep it
    return DeploymentTable(
        table, _band(band), est, prior, names[j_test], None if j_val is None else names[j_val], n_subsamples, int(n_boot), float(level),
        bool(reselect),
    )


def score_soup(x, soup, band=(0.05, 0.30), *, name: str = "soup", **kwargs) -> DeploymentTable:
    """Score a weight-averaged policy (the lab's soup) through the same path as a member.

    ``soup``: its verdicts on the evaluated prompts, [n, k] (or a one-policy Pool): one more
    policy column. Its rates use the evaluated split's prior, its rAUC the same per-prompt
    contributions, and its differences from the test- and validation-selected members and from
    the budget-matched mixture the same paired resamples (:func:`deployment_rules`; ``kwargs``
    pass through). The soup is not a pool member: it never becomes the selected best member.
    """
    extra = dict(kwargs.pop("extra", None) or {})
    extra[name] = soup
    return deployment_rules(x, band, extra=extra, **kwargs)


def band_sensitivity(x, bands=DEFAULT_BANDS, **kwargs) -> pd.DataFrame:
    """The budget-matched mixture's rAUC differences over several reliability bands (App. B.3).

    One row per band: mixture rAUC, test-selected best member rAUC, the difference with its
    paired interval, and (with ``validation=``) the difference from the validation-selected
    member. Every band uses the same seed, hence the same subsamples and resamples.
    """
    rows = []
    for band in bands:
        t = deployment_rules(x, band, **kwargs)
        mix = t.row("mixture_matched")
        row = {"band": f"[{band[0]:g}, {band[1]:g}]", "lo_band": float(band[0]), "hi_band": float(band[1]),
               "mixture_matched": mix["rauc"], "best_test": t.row("best_test")["rauc"], "test_member": t.test_member,
               "diff_test": mix["diff_test"], "lo_test": mix["lo_test"], "hi_test": mix["hi_test"]}
        if t.val_member is not None:
            row.update(val_member=t.val_member, diff_val=mix["diff_val"], lo_val=mix["lo_val"], hi_val=mix["hi_val"])
        rows.append(row)
    return pd.DataFrame(rows)


# ============================================================================ votes
@dataclasses.dataclass(frozen=True, repr=False)
class VoteComparison(Result):
    """Pooled vote versus the best member's self-consistency at r responses per prompt.

    ``difference``: pooled rAUC minus the best member's self-consistency rAUC, with its paired
    prompt-bootstrap interval (the best member re-selected in every resample)."""

    _repr_fields = ("difference", "pooled_rauc", "best_sc_rauc", "best_member", "r", "band")

    r: int
    band: tuple
    pooled_rauc: float
    best_member: str
    best_sc_rauc: float
    difference: Interval
    pooled_rate: np.ndarray  # [n] expected vote correctness per prompt
    member_rate: np.ndarray  # [n, M]
    members: pd.DataFrame

    def frame(self) -> pd.DataFrame:
        """One row: r, both rAUCs, the best member, the difference's value with its interval
        (lo, hi, level, method) and both votes' mean accuracy."""
        d = self.difference
        return pd.DataFrame(
            [{"r": self.r, "pooled_rauc": self.pooled_rauc, "best_member": self.best_member, "best_sc_rauc": self.best_sc_rauc,
              "value": d.value, "lo": d.lo, "hi": d.hi, "level": d.level, "method": d.method,
              "pooled_accuracy": float(self.pooled_rate.mean()),
              "best_sc_accuracy": float(self.member_rate[:, self.members["policy"].tolist().index(self.best_member)].mean())}]
        )


def _subsample_vote(codes, verdict, valid, r: int, n_subsamples: int, rng, label: str, progress: bool,
                    replace: bool = False) -> np.ndarray:
    """Mean over subsamples of the plurality vote over r of the last axis (without replacement, or with)."""
    N = codes.shape[-1]
    per = math.prod(codes.shape[:-1]) * max(N, r) or 1
    chunk = max(1, min(n_subsamples, 4_000_000 // per))
    total = np.zeros(codes.shape[:-1])
    starts = range(0, n_subsamples, chunk)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc=label, leave=False)
    for start in starts:
        b = min(chunk, n_subsamples - start)
        full = (b,) + codes.shape
        if replace:
            idx = rng.integers(0, N, (b,) + codes.shape[:-1] + (r,))
        else:
            keys = rng.random(full)
            idx = np.argpartition(keys, r - 1, axis=-1)[..., :r] if r < N else np.broadcast_to(np.arange(N), full)
        picked = [np.take_along_axis(np.broadcast_to(a, full), idx, axis=-1) for a in (codes, verdict, valid)]
        total += plurality_vote(*picked).sum(axis=0)
    return total / n_subsamples


def vote_comparison(
    x: Pool,
    r: int = 9,
    band=(0.05, 0.30),
    *,
    n_subsamples: int = 200,
    n_boot: int = 2000,
    level: float = 0.95,
    seed=0,
    grid: int = 1001,
    progress: bool = False,
    replace: bool = False,
) -> VoteComparison:
    """Pooled plurality vote versus self-consistency at equal response counts (2609.32996 Section 3.4).

    Pooled vote: r responses drawn without replacement from the M k pooled responses of a prompt,
    plurality answer (ties broken uniformly, empty answers abstain; :func:`oraclegap.stats.noise.
    plurality_vote`). Self-consistency of member m: r of its own k responses. A system's rate on
    a prompt is its expected vote correctness, estimated over ``n_subsamples`` subsamples; rAUC of
    those rates (no smoothing: they are averages, not counts). The difference pooled minus the best
    member's self-consistency re-selects the best member in each of ``n_boot`` paired prompt
    resamples. Needs answers and r <= k, unless ``replace=True``: then each vote draws its r
    responses with replacement (from the M k pooled responses, and from a member's own k), as
    2609.32996 can for a pool with one response per member and prompt (k = 1), where the draw
    without replacement cannot exceed r = k = 1 per member. With k = 1 a member's self-consistency
    with replacement repeats its one answer, so its rate is its verdict.
    """
    if not isinstance(x, Pool) or x.answers is None:
        raise ValueError("vote_comparison needs a Pool with per-response answers (Pool.answers is None)")
    n, M, k = x.shape
    if not isinstance(replace, (bool, np.bool_)):
        raise TypeError(f"replace must be True or False, got {replace!r}")
    r = check_int(r, "r", minimum=1, maximum=None if replace else k)
    n_subsamples = check_int(n_subsamples, "n_subsamples", minimum=1)
    alpha = check_alpha(1 - float(level), "1 - level")
    rng = as_rng(seed)
    codes, valid = answer_codes(x.answers)
    v = x.verdicts
    pooled = _subsample_vote(codes.reshape(n, M * k), v.reshape(n, M * k), valid.reshape(n, M * k), r, n_subsamples, rng, "pooled vote",
                             progress, replace)
    if replace and k == 1:  # r draws with replacement from one response repeat it: the vote is that answer, exactly
        own = (v[:, :, 0] & valid[:, :, 0]).astype(float)
    else:
        own = _subsample_vote(codes, v, valid, r, n_subsamples, rng, "self-consistency", progress, replace)  # [n, M]
    X = np.column_stack([rauc_contributions(pooled, band, grid=grid), rauc_contributions(own, band, grid=grid)])
    pt = X.mean(axis=0)
    boot = bootstrap_means(X, n_boot, rng)
    d_b = boot[:, 0] - boot[:, 1:].max(axis=1)
    lo, hi = np.quantile(d_b, (alpha / 2, 1 - alpha / 2))
    j = int(pt[1:].argmax())
    members = pd.DataFrame({"policy": x.policy_names, "sc_rauc": pt[1:], "sc_accuracy": own.mean(axis=0)})
    diff = Interval.of(pt[0] - pt[1 + j], lo, hi, float(level),
                       "paired prompt-bootstrap percentile, best re-selected")
    return VoteComparison(r, _band(band), float(pt[0]), x.policy_names[j], float(pt[1 + j]), diff,
                          pooled, own, members)
