"""Pool construction under a cost budget (paper 002 Appendix M.3): each model's acquisition cost,
the cost-benefit greedy with partial enumeration, the exhaustive knapsack optimum, F_b against the
budget and each method's worst ratio to the optimum."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..._result import Result
from ..._validate import check_int
from ...pool import Pool
from ...stats.certify.costs import _normalized_costs
from .coverage import _row_mask, _targets, complementary_coverage, coverage_lattice, pack_bits, popcount
from .inputs import outcome_matrix, resolve_anchor
from .search import GREEDY_BOUND, _subsets_by_size, greedy_pool

__all__ = ["model_costs", "BudgetPool", "budgeted_pool", "knapsack_optimum", "budget_curve", "budget_ratios"]


def model_costs(cost, n: int, K: int, *, normalize: str = "max", rows=None) -> np.ndarray:
    """Acquisition cost w_m of each model, in the units of ``certify.cost_utilities``.

    ``cost`` is per item and model [n, K] or per model [K]. With ``normalize="max"`` costs are
    divided by the largest one, C = cost / max(cost) in [0, 1]; ``"none"`` requires costs already
    in [0, 1]. Then w_m = mean_i C_im (over ``rows`` when given), the mean normalised cost of
    querying model m, which is exactly the ``fixed_cost`` that ``cost_utilities`` reports for a
    fixed model. Missing (NaN) or negative costs are refused.
    """
    C, _ = _normalized_costs(cost, n, K, normalize)
    sub = C if rows is None else C[rows]
    return sub.mean(axis=0)


def _check_budget(budget) -> float:
    try:
        B = float(budget)
    except (TypeError, ValueError):
        raise TypeError(f"budget must be a number (total normalised cost), got {budget!r}") from None
    if not math.isfinite(B) or B <= 0:
        raise ValueError(f"budget must be a finite number > 0 in the units of model_costs, got {budget!r}")
    return B


# ====================================================================== budgets (App. M.3)
@dataclasses.dataclass(frozen=True, repr=False)
class BudgetPool(Result):
    """A pool under a knapsack budget sum_{m in S} w_m <= B (w: :func:`model_costs`)."""

    members: tuple
    count: int
    n: int
    cost: float
    budget: float
    method: str
    guarantee: float
    names: tuple

    @property
    def value(self) -> float:
        return self.count / self.n

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "budget": self.budget,
                    "members": " + ".join(self.names[m] for m in self.members),
                    "size": len(self.members),
                    "cost": self.cost,
                    "F_b": self.value,
                    "guarantee": self.guarantee,
                }
            ]
        )


def _cost_benefit_complete(cols, Z, w, B, seeds: np.ndarray, avail0: np.ndarray):
    """Cost-benefit greedy completions of many seed sets at once.

    seeds bool[P, K] (members already in), avail0 bool[K] (candidates that fit alone). At each step
    every completion takes the remaining candidate with the largest gain / cost (zero cost: infinite
    ratio; ties: larger gain, then lowest index); it joins if it fits in the budget and is dropped
    from consideration either way (Sviridenko 2004). Returns members bool[P, K], counts int[P], cost[P].
    """
    P, K = seeds.shape
    inset = seeds.copy()
    cov = np.zeros((P, Z.shape[0]), dtype=np.uint64)
    for j in range(K):
        sel = inset[:, j]
        if sel.any():
            cov[sel] |= cols[j] & Z
    spent = inset.astype(float) @ w
    left = avail0[None, :] & ~inset
    rows = np.arange(P)
    idx = np.arange(K)
    while left.any():
        g = popcount(cols[None, :, :] & (Z[None, :] & ~cov)[:, None, :]).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(w[None, :] > 0, g / w[None, :], np.where(g > 0, np.inf, 0.0))
        ratio = np.where(left, ratio, -1.0)
        # lexicographic argmax: ratio, then gain, then lowest index
        pick = np.lexsort((idx[None, :].repeat(P, 0), -g, -ratio), axis=1)[:, 0]
        active = left[rows, pick] & (g[rows, pick] > 0)
        if not active.any():
            break
        fits = active & (spent + w[pick] <= B + 1e-12)
        inset[rows[fits], pick[fits]] = True
        spent[fits] += w[pick[fits]]
        cov[fits] |= cols[pick[fits]] & Z
        left[rows[active], pick[active]] = False
        left[~active] = False
    return inset, popcount(cov), spent


def budgeted_pool(X, anchor="best", cost=None, budget=None, *, partial: int = 3, rows=None, normalize: str = "max") -> BudgetPool:
    """Cost-benefit greedy with partial enumeration for max F_b(S) s.t. sum_{m in S} w_m <= budget.

    w_m = :func:`model_costs` (mean normalised per-item cost, the units of ``cost_utilities``;
    costs from the pool when ``cost`` is None). ``partial=d``: every feasible set of fewer than d
    candidates is a solution candidate, and every feasible d-set is completed by cost-benefit greedy
    (Sviridenko 2004; guarantee 1 - 1/e for d = 3). ``partial=0``: the better of the cost-benefit
    greedy and the best single candidate (guarantee (1 - 1/e)/2, Khuller, Moss and Naor 1999).
    """
    if isinstance(X, Pool) and cost is None:
        cost = X.cost
    X, names = outcome_matrix(X)
    n, K = X.shape
    rmask = None if rows is None else _row_mask(rows, n)
    b = resolve_anchor(anchor, X, names, rmask)
    w = model_costs(cost, n, K, normalize=normalize, rows=rmask)
    B = _check_budget(budget)
    d = check_int(partial, "partial", minimum=0, maximum=3)
    n_eval = n if rmask is None else int(rmask.sum())
    cols = pack_bits(X.T)
    Z = _targets(X, b, rmask)
    fits = (w <= B + 1e-12) & (np.arange(K) != b)
    cand = np.flatnonzero(fits)
    best: tuple[int, tuple[int, ...], float] = (0, (), 0.0)
    if cand.size == 0:
        return BudgetPool((), 0, n_eval, 0.0, B, f"cost-benefit greedy (partial={d})", _budget_guarantee(d), tuple(names))
    ccols = pack_bits(X[:, cand].T)
    # small sets, enumerated
    for t, combos, ors in _subsets_by_size(ccols, min(max(d - 1, 1), cand.size)):
        if d == 0 and t > 1:
            break
        c = popcount(ors & Z)
        cs = w[cand][combos].sum(axis=1)
        ok = cs <= B + 1e-12
        if ok.any():
            i = np.flatnonzero(ok)[np.argmax(c[ok])]
            if c[i] > best[0]:
                best = (int(c[i]), tuple(int(cand[j]) for j in combos[i]), float(cs[i]))
    # seeds of size d (d = 0: the empty seed)
    if d == 0:
        seeds = np.zeros((1, K), dtype=bool)
    elif d <= cand.size:
        combos = next(cmb for t, cmb, _ in _subsets_by_size(ccols, d) if t == d)
        ok = w[cand][combos].sum(axis=1) <= B + 1e-12
        combos = combos[ok]
        seeds = np.zeros((combos.shape[0], K), dtype=bool)
        seeds[np.arange(combos.shape[0])[:, None], cand[combos]] = True
    else:
        seeds = np.zeros((0, K), dtype=bool)
    if seeds.shape[0]:
        inset, counts, spent = _cost_benefit_complete(cols, Z, w, B, seeds, fits)
        i = int(np.argmax(counts))
        if counts[i] > best[0]:
            best = (int(counts[i]), tuple(int(j) for j in np.flatnonzero(inset[i])), float(spent[i]))
    return BudgetPool(tuple(sorted(best[1])), best[0], n_eval, best[2], B, f"cost-benefit greedy (partial={d})",
                      _budget_guarantee(d), tuple(names))


def _budget_guarantee(d: int) -> float:
    return GREEDY_BOUND if d >= 3 else GREEDY_BOUND / 2


def knapsack_optimum(X, anchor="best", cost=None, budget=None, *, rows=None, normalize: str = "max",
                     max_candidates: int = 20) -> BudgetPool:
    """The exact optimum of F_b under sum_{m in S} w_m <= budget, by enumerating all 2^(K-1) subsets
    (K - 1 <= max_candidates). Ties: the cheapest, then the smallest bit mask."""
    if isinstance(X, Pool) and cost is None:
        cost = X.cost
    X, names = outcome_matrix(X)
    n, K = X.shape
    rmask = None if rows is None else _row_mask(rows, n)
    lat = coverage_lattice(X, anchor, rows=rmask, max_candidates=max_candidates)
    w = model_costs(cost, n, K, normalize=normalize, rows=rmask)
    B = _check_budget(budget)
    k = lat.candidates.size
    wc = w[lat.candidates]
    mcost = np.zeros(1 << k)
    for j in range(k):
        mcost[1 << j : 1 << (j + 1)] = mcost[: 1 << j] + wc[j]
    ok = mcost <= B + 1e-12
    idx = np.flatnonzero(ok)
    i = idx[np.lexsort((idx, mcost[idx], -lat.counts[idx]))[0]]
    return BudgetPool(tuple(lat.members(int(i))), int(lat.counts[i]), lat.n, float(mcost[i]), B, "exhaustive knapsack", 1.0, tuple(names))


def budget_curve(X, anchor="best", cost=None, budgets=None, *, fit=None, test=None, normalize: str = "max",
                 max_candidates: int = 16) -> pd.DataFrame:
    """F_b against the budget: per budget B, the cost-benefit greedy pools (partial 0 and 3), the
    exhaustive knapsack optimum (when K - 1 <= max_candidates) and the cost-blind greedy prefix that
    fits, all chosen on ``fit`` rows (all by default) and, with ``test`` rows, measured there too.
    Costs are normalised on the fit rows (:func:`model_costs`)."""
    if isinstance(X, Pool) and cost is None:
        cost = X.cost
    X, names = outcome_matrix(X)
    n, K = X.shape
    fmask = np.ones(n, bool) if fit is None else _row_mask(fit, n)
    tmask = None if test is None else _row_mask(test, n)
    b = resolve_anchor(anchor, X, names, fmask)
    w = model_costs(cost, n, K, normalize=normalize, rows=fmask)
    if budgets is None:
        raise ValueError("budgets is required: a list of total normalised costs > 0")
    rows = []
    order = greedy_pool(X, b, rows=fmask).members
    for B in np.atleast_1d(np.asarray(budgets, dtype=float)):
        B = _check_budget(B)
        pools = {
            "cost-benefit greedy (partial=0)": budgeted_pool(X, b, w, B, partial=0, rows=fmask, normalize="none").members,
            "cost-benefit greedy (partial=3)": budgeted_pool(X, b, w, B, partial=3, rows=fmask, normalize="none").members,
        }
        if K - 1 <= max_candidates:
            pools["exhaustive knapsack"] = knapsack_optimum(X, b, w, B, rows=fmask, normalize="none").members
        prefix, spent = [], 0.0
        for j in order:
            if spent + w[j] <= B + 1e-12:
                prefix.append(j)
                spent += w[j]
            else:
                break
        pools["cost-blind greedy prefix"] = tuple(prefix)
        for method, m in pools.items():
            row = {
                "budget": B,
                "method": method,
                "members": " + ".join(names[j] for j in m),
                "size": len(m),
                "cost": float(w[list(m)].sum()) if m else 0.0,
                "fit": complementary_coverage(X, b, m, rows=fmask),
            }
            if tmask is not None:
                row["test"] = complementary_coverage(X, b, m, rows=tmask)
            rows.append(row)
    return pd.DataFrame(rows)


def budget_ratios(curve: pd.DataFrame, column: str = "fit") -> dict[str, float]:
    """The worst budget of each method of a :func:`budget_curve`: per method other than the
    exhaustive knapsack, min over budgets B of F_b(S_method(B)) / F_b(S_knapsack(B)), read from
    ``column`` ("fit", or "test" when the curve was measured on test rows). Budgets at which the
    knapsack optimum is 0 are left out (the ratio is undefined there); a method with no budget left
    gets NaN. On the fit rows every ratio is at most 1, and the partial-enumeration method's is at
    least :data:`GREEDY_BOUND` (App. M.3)."""
    if not isinstance(curve, pd.DataFrame):
        raise TypeError(f"curve must be a DataFrame from budget_curve, got {type(curve).__name__}")
    missing = {"budget", "method", column} - set(curve.columns)
    if missing:
        raise ValueError(f"curve lacks the column(s) {sorted(missing)}; expected a budget_curve frame")
    knap = curve[curve["method"] == "exhaustive knapsack"].set_index("budget")[column]
    if knap.empty:
        raise ValueError("curve has no 'exhaustive knapsack' rows (budget_curve skips it above max_candidates)")
    knap = knap.replace(0, np.nan)
    return {m: float((d.set_index("budget")[column] / knap).min())
            for m, d in curve.groupby("method") if m != "exhaustive knapsack"}
