"""Deployment rules chosen on a validation split and scored on a test split, in rAUC
(arXiv 2609.32996 Sections 3.3-3.4, Tables 3, A1 and A12, App. B.2).

Table 3 of the paper compares on one test split the base model, the best member (selected on
test, and on validation), the plug-in oracle, the budget-matched mixture, the soup and the router
family selected on validation. Whatever a deployed system must choose -- the member, the router
family, the router's fit -- is chosen from validation outcomes only; the test outcomes only score.

* :func:`fit_on_validation` -- (a) every router family is cross-fitted on the validation prompts
  (K folds, each fold routed by a router fitted on the other folds) and scored there by rAUC;
  the family with the highest cross-fitted validation rAUC is the one deployed; (b) every family
  is fitted on all validation prompts. Targets are the members' validation success rates
  c_im / k (000 fits its routers to rates), so one fit serves every threshold.
* :func:`route_on_validation` -- applies those fits (made here, or reused: one validation fit
  can route several test splits, as the paper's extra prompts reuse the primary validation fit)
  to the test prompts. A route r(i) turns into per-prompt verdicts of the routed member,
  R_{i, r(i), j}: one more policy column, scored by
  :func:`~oraclegap.deploy.mixtures.deployment_rules` exactly like a member. With ``taus`` it
  also gives each family's coverage gain over the threshold-specific best test member,
  mean_i 1[c_{i r(i)} >= need(tau, k)] - max_m C_m(tau), with a prompt-bootstrap interval that
  re-selects that member inside every resample (Table A1's rule; Table A12 counts these cells),
  and the routing identity's e_D and break-even L/D.
* :func:`deployment_comparison` -- the Table 3 rows of one test split: deployment_rules with
  the base, the soup and the routed policy as extra columns and the validation-selected member.

rAUC uses the same estimator on both splits (default: posterior means under the split's own
fitted Beta prior, 000 App. B.1), so a validation rAUC and a test rAUC are each computed the way
the paper computes them on that split.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._result import Result
from .._validate import as_rng, check_alpha, check_int, check_taus
from ..pool import Pool, check_pool
from ..stats.bootstrap import bootstrap_means
from ..stats.coverage import need, routing_account
from .evaluate import make_protocol
from .features import router_inputs
from .mixtures import DeploymentTable, _count_rate, _prior_for, deployment_rules, rauc_contributions
from .routers import family_requirements, make_router, missing_inputs

__all__ = [
    "PAPER_FAMILIES",
    "ValidationFit",
    "fit_on_validation",
    "ValidationRouting",
    "route_on_validation",
    "DeploymentComparison",
    "deployment_comparison",
]

#: The five router families of 2609.32996 App. B.2 (three on text, two on the base model's embedding).
PAPER_FAMILIES = ("tfidf_logreg", "gbr_features", "tfidf_knn", "embed_pca_logreg", "embed_knn")


@dataclasses.dataclass(frozen=True, repr=False)
class ValidationRouting(Result):
    """Router families fitted on validation; the one with the best cross-fitted validation rAUC deployed.

    ``val_rauc`` / ``test_rauc``: family -> rAUC of its routes (cross-fitted on validation; fitted
    on all validation and applied to test); ``choices`` family -> routed member per test prompt;
    ``validation_choices`` the cross-fitted routes on validation; ``cells`` (with ``taus``): one row
    per (family, tau) with coverage, gain over the threshold-specific best test member and its
    interval, e_D and break-even; ``skipped`` families that could not run, with the reason; ``fit``
    the :class:`ValidationFit` it used (reusable for another test split of the same members).
    """

    chosen: str
    families: tuple
    val_rauc: dict
    test_rauc: dict
    choices: dict
    validation_choices: dict
    cells: pd.DataFrame | None
    skipped: dict
    band: tuple
    estimator: str
    policy_names: tuple
    test_verdicts: np.ndarray = dataclasses.field(repr=False)
    fit: ValidationFit | None = dataclasses.field(default=None, repr=False)

    def verdicts(self, family: str | None = None) -> np.ndarray:
        """Verdicts bool[n_test, k] of the routed member on each test prompt (default: the chosen family)."""
        f = self.chosen if family is None else family
        if f not in self.choices:
            raise KeyError(f"family {f!r} was not evaluated; evaluated: {list(self.choices)}")
        n = self.test_verdicts.shape[0]
        return self.test_verdicts[np.arange(n), self.choices[f], :]

    def frame(self) -> pd.DataFrame:
        """One row per family: cross-fitted validation rAUC, test rAUC, whether it was chosen."""
        return pd.DataFrame({"family": list(self.families), "val_rauc": [self.val_rauc[f] for f in self.families],
                             "test_rauc": [self.test_rauc[f] for f in self.families],
                             "chosen": [f == self.chosen for f in self.families]})

    def cells_summary(self) -> dict:
        """Counts of (family, tau) cells whose gain interval lies wholly below / above zero."""
        if self.cells is None:
            raise ValueError("no threshold cells: route_on_validation was called without taus")
        return {"cells": int(len(self.cells)), "below": int((self.cells["hi"] < 0).sum()),
                "above": int((self.cells["lo"] > 0).sum())}


def _contrib(pool: Pool, band, estimator: str, grid: int) -> np.ndarray:
    """Per-prompt rAUC contributions [n, M] of every member with the split's own prior."""
    c, k = pool.counts(), pool.k
    prior = _prior_for(c, k, estimator, None)
    return rauc_contributions(_count_rate(c, k, prior), band, k_eff=k, grid=grid)


@dataclasses.dataclass(frozen=True, repr=False)
class ValidationFit(Result):
    """Router families fitted on one validation split (step (a) of the module docstring).

    ``val_rauc``: family -> cross-fitted validation rAUC; ``chosen``: the deployed family;
    ``validation_choices``: the cross-fitted routes; ``routers``: each family fitted on every
    validation prompt (ready to route any test split of the same members); ``skipped``: families
    that could not run on validation, with the reason.
    """

    chosen: str
    families: tuple
    val_rauc: dict
    validation_choices: dict
    routers: dict = dataclasses.field(repr=False)
    skipped: dict
    band: tuple
    estimator: str
    embed: str
    embed_dim: int | None
    policy_names: tuple

    def frame(self) -> pd.DataFrame:
        """One row per family: cross-fitted validation rAUC and whether it was chosen."""
        return pd.DataFrame({"family": list(self.families), "val_rauc": [self.val_rauc[f] for f in self.families],
                             "chosen": [f == self.chosen for f in self.families]})


def _family_names(families) -> list:
    names = [families] if isinstance(families, str) else list(families)
    if not names:
        raise ValueError("families is empty; name at least one router family")
    return names


def fit_on_validation(
    validation: Pool,
    families=PAPER_FAMILIES,
    band=(0.05, 0.30),
    *,
    cv: int = 5,
    estimator: str = "smoothed",
    seed=0,
    embed: str = "auto",
    params=None,
) -> ValidationFit:
    """Cross-fit every router family on ``validation`` and choose the one to deploy.

    Targets: the members' validation success rates c_im / k. Each of ``cv`` folds is routed by a
    router fitted on the other folds; a family's validation rAUC is the mean over prompts of the
    routed member's rAUC contribution (``estimator``: the split's own fitted prior, or raw
    rates). The family with the highest cross-fitted rAUC is chosen (ties: the one listed
    first). Every family is then fitted on all validation prompts. Families whose inputs are
    missing are skipped with the reason; ``params`` maps a family to router parameters;
    ``seed`` fixes the folds.
    """
    check_pool(validation, "validation")
    names = _family_names(families)
    cv = check_int(cv, "cv", minimum=2)
    fold_seed = int(as_rng(seed).integers(2**31 - 1))
    params = dict(params or {})
    Xv = router_inputs(validation, embed=embed)
    skipped = {f: why for f in names if (why := missing_inputs(f, Xv)) is not None}
    fams = [f for f in names if f not in skipped]
    if not fams:
        raise ValueError(f"no router family can run on the validation pool: {skipped}")
    Yv = validation.rates()
    contrib = _contrib(validation, band, estimator, 1001)
    folds = make_protocol(validation, cv=cv, seed=fold_seed).folds
    iv = np.arange(validation.n_prompts)
    choices, rauc, routers = {}, {}, {}
    for f in fams:
        proto = make_router(f, **dict(params.get(f, {})))
        ch = np.empty(validation.n_prompts, dtype=np.int64)
        for cal, held in folds:
            ch[held] = clone(proto).fit(Xv.take(cal), Yv[cal]).predict(Xv.take(held))
        choices[f], rauc[f] = ch, float(contrib[iv, ch].mean())
        routers[f] = clone(proto).fit(Xv, Yv)
    chosen = max(fams, key=lambda f: (rauc[f], -fams.index(f)))
    return ValidationFit(chosen, tuple(fams), rauc, choices, routers, skipped, (float(band[0]), float(band[1])), estimator, embed,
                         None if Xv.embeddings is None else int(Xv.embeddings.shape[1]), tuple(validation.policy_names))


def route_on_validation(
    validation: Pool | None,
    test: Pool,
    families=PAPER_FAMILIES,
    band=(0.05, 0.30),
    *,
    fit: ValidationFit | None = None,
    taus=None,
    cv: int = 5,
    estimator: str = "smoothed",
    n_boot: int = 2000,
    level: float = 0.95,
    seed=0,
    embed: str = "auto",
    params=None,
) -> ValidationRouting:
    """Choose a router family on validation and route the test prompts with it (module docstring).

    ``validation`` and ``test`` must hold the same members (same names, same order); their k may
    differ (routers see rates). ``fit``: a :class:`ValidationFit` of the same members to reuse
    (then ``validation`` may be None and ``families``, ``cv``, ``params`` are not used), e.g. one
    validation fit routing several test splits. A fitted family whose inputs are missing on the
    test split is skipped with the reason. ``seed`` fixes the validation folds and the bootstrap
    resamples.
    """
    check_pool(test, "test")
    n_boot = check_int(n_boot, "n_boot", minimum=100)
    alpha = check_alpha(1 - float(level), "1 - level")
    rng = as_rng(seed)
    if fit is None:
        if validation is None:
            raise ValueError("pass a validation pool or a ValidationFit (fit=)")
        fit = fit_on_validation(validation, families, band, cv=cv, estimator=estimator, seed=rng, embed=embed, params=params)
    elif not isinstance(fit, ValidationFit):
        raise TypeError(f"fit must be a ValidationFit, got {type(fit).__name__}")
    if list(fit.policy_names) != list(test.policy_names):
        raise ValueError(f"validation and test must hold the same members in the same order; got {list(fit.policy_names)} "
                         f"and {test.policy_names}")
    Xt = router_inputs(test, embed=fit.embed)
    skipped, fams = dict(fit.skipped), []
    for f in fit.families:
        why = missing_inputs(f, Xt)
        uses_emb = any("embeddings" in r.split("|") for r in family_requirements(f))
        if why is None and uses_emb and Xt.embeddings is not None and Xt.embeddings.shape[1] != fit.embed_dim:
            why = f"was fitted on {fit.embed_dim}-dimensional embeddings; the test pool's have {Xt.embeddings.shape[1]}"
        if why is None:
            fams.append(f)
        else:
            skipped[f] = why
    if not fams:
        raise ValueError(f"no fitted router family can run on the test pool: {skipped}")
    contrib = _contrib(test, band, estimator, 1001)
    it = np.arange(test.n_prompts)
    choices = {f: fit.routers[f].predict(Xt) for f in fams}
    test_rauc = {f: float(contrib[it, choices[f]].mean()) for f in fams}
    chosen = fit.chosen if fit.chosen in fams else max(fams, key=lambda f: (fit.val_rauc[f], -fams.index(f)))
    cells = None if taus is None else _cells(test, fams, choices, check_taus(taus), n_boot, alpha, rng)
    return ValidationRouting(chosen, tuple(fams), {f: fit.val_rauc[f] for f in fams}, test_rauc, choices,
                             {f: fit.validation_choices[f] for f in fams}, cells, skipped, fit.band, fit.estimator,
                             tuple(test.policy_names), test.verdicts, fit)


def _cells(test: Pool, fams, choices, taus, n_boot, alpha, rng) -> pd.DataFrame:
    """Coverage gains of every family over the threshold-specific best member, per tau."""
    c, k = test.counts(), test.k
    n, M = c.shape
    rows = np.arange(n)
    out = []
    for tau in taus:
        O = c >= need(tau, k)
        S = np.column_stack([O[rows, choices[f]] for f in fams])
        boot = bootstrap_means(np.column_stack([O, S]).astype(float), n_boot, rng)
        gain_b = boot[:, M:] - boot[:, :M].max(axis=1, keepdims=True)
        lo, hi = np.quantile(gain_b, (alpha / 2, 1 - alpha / 2), axis=0)
        best = O.mean(axis=0).max()
        for j, f in enumerate(fams):
            ra = routing_account(c, choices[f], float(tau), k=k)
            out.append({"family": f, "tau": float(tau), "coverage": float(S[:, j].mean()), "gain": float(S[:, j].mean() - best),
                        "lo": float(lo[j]), "hi": float(hi[j]), "e_D": ra.e_D, "break_even": ra.break_even})
    return pd.DataFrame(out)


@dataclasses.dataclass(frozen=True, repr=False)
class DeploymentComparison(Result):
    """The Table 3 rows of one test split (see :func:`deployment_comparison`).

    ``frame()``: one row per system in Table 3's order -- ``base``, ``best_test``, ``best_val``,
    ``oracle``, ``mixture_matched``, ``soup``, ``routing`` (those present) -- with rAUC, Pass@1
    and the paired-bootstrap differences of :class:`~oraclegap.deploy.mixtures.DeploymentTable`.
    """

    rules: DeploymentTable
    routing: ValidationRouting | None

    ORDER = ("base", "best_test", "best_val", "oracle", "mixture_matched", "soup", "routing")

    def frame(self) -> pd.DataFrame:
        t = self.rules.frame()
        t["kind"] = np.where(t["kind"] == "extra", t["system"], t["kind"])
        t = t[t["kind"].isin(self.ORDER)].copy()
        t["order"] = t["kind"].map({k: i for i, k in enumerate(self.ORDER)})
        return t.sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True)

    def row(self, kind: str) -> pd.Series:
        """The row of one system kind (``KeyError`` naming those present otherwise)."""
        f = self.frame()
        hit = f[f["kind"] == kind]
        if hit.empty:
            raise KeyError(f"no system {kind!r}; present: {f['kind'].tolist()}")
        return hit.iloc[0]


def deployment_comparison(
    test: Pool,
    band=(0.05, 0.30),
    *,
    validation: Pool | None = None,
    base=None,
    soup=None,
    families=PAPER_FAMILIES,
    fit: ValidationFit | None = None,
    taus=None,
    cv: int = 5,
    estimator: str = "smoothed",
    n_subsamples: int | None = 200,
    n_boot: int = 2000,
    level: float = 0.95,
    seed=0,
    embed: str = "auto",
) -> DeploymentComparison:
    """Table 3 of 2609.32996 for one test split.

    Members of ``test`` are the pool; ``base`` and ``soup`` (verdicts [n, k'] or one-policy Pools on
    the same test prompts) are scored as extra policies; with ``validation`` (the same members on
    validation prompts) the member selected there by rAUC is reported and, unless ``families`` is
    None, the router family chosen there (:func:`route_on_validation`) routes the test prompts and
    is scored as one more extra policy; ``fit`` reuses a :class:`ValidationFit` of those members (one
    validation fit for several test splits). All systems share one set of paired prompt resamples
    (:func:`~oraclegap.deploy.mixtures.deployment_rules`).
    """
    check_pool(test, "test")
    rng = as_rng(seed)
    extra = {}
    for name, block in (("base", base), ("soup", soup)):
        if block is not None:
            extra[name] = block
    routing = None
    if fit is not None or (validation is not None and families is not None):
        routing = route_on_validation(validation, test, families, band, fit=fit, taus=taus, cv=cv, estimator=estimator, n_boot=n_boot,
                                      level=level, seed=rng, embed=embed)
        extra["routing"] = routing.verdicts()
    rules = deployment_rules(test, band, validation=validation, extra=extra, estimator=estimator, n_subsamples=n_subsamples,
                             n_boot=n_boot, level=level, seed=rng)
    return DeploymentComparison(rules, routing)
