"""The deployment floor's front-door verbs: each takes a :class:`~oraclegap.pool.Pool` and
returns a result object, with the defaults of the matching CLI verb (``oraclegap routers``,
``oraclegap compose``), so a call with defaults gives the CLI's numbers. Each imports its module
when called, so importing this module (and ``oraclegap``) stays cheap. A k > 1 pool needs
``tau`` (success = coverage at tau), the rule every verb shares
(:func:`oraclegap.stats.verbs.tau_rule`).
"""

from __future__ import annotations

from ..pool import Pool, check_pool
from ..stats.verbs import check_alpha, tau_rule

__all__ = ["routers", "compose"]


def routers(pool: Pool, families=None, *, tau: float | None = None, cv: int | None = None,
            split: str | None = None, seed: int = 0, alpha: float = 0.05, **options):
    """Fit router families on calibration prompts and score them on held-out prompts.

    A router picks one member per prompt from what is known before answering; its accuracy
    (k = 1) or coverage at tau (k > 1) is compared with the best single member chosen on the
    calibration prompts, with prompt-bootstrap intervals of level 1 - alpha and McNemar tests
    (:func:`oraclegap.deploy.evaluate.evaluate_routers`).

    Parameters
    ----------
    pool : Pool
        k = 1, or k > 1 with ``tau``.
    families : sequence of str, optional
        Names from :data:`~oraclegap.deploy.routers.FAMILIES` (default: every family the
        pool's inputs allow).
    tau : float, optional
        Coverage threshold in (0, 1]; required when k > 1.
    cv, split
        5-fold cross-fitting unless ``split`` is given (``"half"`` or a split name of the
        pool); give one of them.
    seed : int
    alpha : float
        Error rate in (0, 1) of every interval and test.
    **options
        ``embed``, ``n_boot``, ``progress``, ... (see ``evaluate_routers``).

    Returns
    -------
    RouterComparison
        One row per family in ``.frame()``.

    Examples
    --------
    >>> import oraclegap as og
    >>> from oraclegap.deploy.features import simulated_router_pool
    >>> pool = simulated_router_pool(n=60, M=3, k=4, seed=1).pool
    >>> res = og.routers(pool, ["best_single", "dataset"], tau=0.5, n_boot=200)
    >>> sorted(res.frame()["family"])
    ['best_single', 'dataset']
    """
    from .evaluate import evaluate_routers

    pool = check_pool(pool, verb="routers")
    alpha = check_alpha(alpha)
    tau_rule(pool, tau)
    if cv is not None and split is not None:
        raise ValueError("give cv or split, not both")
    cv = cv if cv is not None else (None if split else 5)
    options.setdefault("progress", False)
    return evaluate_routers(pool, families, tau=tau, cv=cv, split=split, seed=seed, alpha=alpha, **options)


def compose(pool: Pool, anchor: str = "best", sizes=None, *, tau: float | None = None, budget: float | None = None,
            **options):
    """Pool construction by complementary coverage (paper 002, Thm 8).

    For each size b: the greedy pool (each step adds the member that covers most prompts no
    member already covers), the exhaustive optimum of F_b (the share of prompts some member of
    the chosen b covers) and the accuracy-ranked pool, all containing ``anchor``
    (:func:`oraclegap.deploy.compose.compose_pools`).

    Parameters
    ----------
    pool : Pool
        k = 1, or k > 1 with ``tau``.
    anchor : str
        ``"best"`` (the most accurate member) or a member's name.
    sizes : sequence of int, optional
        Pool sizes b (default 2..M).
    tau : float, optional
        Coverage threshold in (0, 1]; required when k > 1.
    budget : float, optional
        A cost budget (the knapsack variant).
    **options
        Keyword arguments of ``compose_pools``.

    Returns
    -------
    Composition
        One row per size in ``.frame()``.

    Examples
    --------
    >>> import oraclegap as og
    >>> from oraclegap.deploy.features import simulated_router_pool
    >>> pool = simulated_router_pool(n=60, M=3, k=4, seed=1).pool
    >>> frame = og.compose(pool, tau=0.5).frame()
    >>> bool((frame["F_b optimum"] >= frame["F_b greedy"] - 1e-12).all())
    True
    """
    from .compose import compose_pools

    pool = check_pool(pool, verb="compose")
    tau_rule(pool, tau)
    return compose_pools(pool, anchor, sizes, tau=tau, budget=budget, **options)
