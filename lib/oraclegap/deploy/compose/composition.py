"""The composition ``oraclegap compose`` prints: on all items, the greedy trace, per size the
optimum and the accuracy-ranked pool, and optionally a budgeted pool."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._result import Result
from ...pool import Pool
from .baselines import _order_accuracy
from .budget import BudgetPool, budgeted_pool
from .coverage import complementary_coverage
from .inputs import check_sizes, outcome_matrix, resolve_anchor
from .search import _DEFAULT_MAX_SUBSETS, GreedyPool, exhaustive_pool, greedy_pool

__all__ = ["Composition", "compose_pools"]


@dataclasses.dataclass(frozen=True, repr=False)
class Composition(Result):
    """Per size: the greedy pool with F_b and its marginal gains, the exhaustive optimum (or a bound)
    with the greedy/optimum ratio, and the accuracy-ranked pool; optionally a budgeted pool."""

    anchor: str
    anchor_accuracy: float
    n: int
    K: int
    sizes: np.ndarray
    greedy: GreedyPool
    optima: tuple
    accuracy_pools: tuple
    accuracy_values: np.ndarray
    budget: BudgetPool | None
    names: tuple

    def frame(self) -> pd.DataFrame:
        rows = []
        for s, opt, acc_m, acc_v in zip(self.sizes, self.optima, self.accuracy_pools, self.accuracy_values, strict=True):
            g = self.greedy
            rows.append(
                {
                    "size": int(s),
                    "greedy": " + ".join(self.names[m] for m in g.members[:s]),
                    "F_b greedy": float(g.values[s - 1]),
                    "gains": ", ".join(f"{x:.4f}" for x in g.gains[:s] / g.n),
                    "F_b optimum": opt.value,
                    "optimum": " + ".join(self.names[m] for m in opt.members),
                    "optimum exact": opt.exact,
                    "optimum upper": opt.upper_value,
                    "greedy/optimum": float(g.values[s - 1]) / opt.value if opt.value > 0 else 1.0,
                    "accuracy pool": " + ".join(self.names[m] for m in acc_m),
                    "F_b accuracy": float(acc_v),
                }
            )
        return pd.DataFrame(rows)


def compose_pools(data, anchor="best", sizes=None, *, tau=None, budget=None, cost=None, partial: int = 3,
                  max_subsets: int = _DEFAULT_MAX_SUBSETS, max_nodes: int = 50_000) -> Composition:
    """Pool construction on all items of ``data`` (a Pool or bool[n, K]; k > 1 pools need ``tau``):
    the anchor (``"best"``: most accurate), the greedy trace up to max(sizes) (default 1..K-1), per
    size the optimum (:func:`exhaustive_pool`) and the accuracy-ranked pool, and with ``budget`` the
    cost-benefit greedy pool under sum of model costs <= budget (:func:`budgeted_pool`)."""
    if isinstance(data, Pool) and cost is None:
        cost = data.cost
    X, names = outcome_matrix(data, tau=tau)
    n, K = X.shape
    b = resolve_anchor(anchor, X, names)
    grid = check_sizes(sizes, K)
    g = greedy_pool(X, b, int(grid.max()), lazy=K > 24)
    if g.lazy:  # the lazy trace has only the certificate bound; the online bound is cheap to add
        g = greedy_pool(X, b, int(grid.max()))
    optima = tuple(exhaustive_pool(X, b, int(s), max_subsets=max_subsets, max_nodes=max_nodes) for s in grid)
    acc_order = _order_accuracy(X, b)
    acc_pools = tuple(tuple(sorted(int(j) for j in acc_order[:s])) for s in grid)
    acc_vals = np.array([complementary_coverage(X, b, m) for m in acc_pools])
    bp = None
    if budget is not None:
        if cost is None:
            raise ValueError("budget needs costs: the pool has none; pass cost= (per-model [K] or per-item [n, K])")
        bp = budgeted_pool(X, b, cost, budget, partial=partial)
    return Composition(names[b], float(X[:, b].mean()), n, K, grid, g, optima, acc_pools, acc_vals, bp, tuple(names))
