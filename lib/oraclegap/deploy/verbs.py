"""The deployment floor's front-door verbs: each takes a :class:`~oraclegap.pool.Pool` and
returns a result object, with the defaults of the matching CLI verb (``oraclegap routers``,
``oraclegap compose``), so a call with defaults gives the CLI's numbers. Each imports its module
when called, so importing this module (and ``oraclegap``) stays cheap.
"""

from __future__ import annotations

from ..pool import Pool

__all__ = ["routers", "compose"]


def _check_pool(pool, verb: str) -> Pool:
    if not isinstance(pool, Pool):
        raise TypeError(f"{verb}: pool must be an oraclegap.Pool, got {type(pool).__name__} "
                        "(open one with oraclegap.sources.open_pool or oraclegap.datasets.load)")
    return pool


def routers(pool: Pool, families=None, *, tau: float | None = None, cv: int | None = None,
            split: str | None = None, seed: int = 0, **options):
    """Fit router families on calibration prompts and score them on held-out prompts
    (:func:`oraclegap.deploy.evaluate.evaluate_routers`; a
    :class:`~oraclegap.deploy.evaluate.RouterComparison`). ``families``: names from
    :data:`~oraclegap.deploy.routers.FAMILIES` (default every family the pool's inputs allow);
    ``tau``: coverage threshold (k > 1 pools); 5-fold cross-fitting unless ``split`` is given
    (``"half"`` or a split name of the pool); ``options``: ``embed``, ``n_boot``, ``alpha``, ...
    """
    from .evaluate import evaluate_routers

    pool = _check_pool(pool, "routers")
    if pool.k == 1 and tau is not None:
        raise ValueError("the pool has k=1: tau applies only to pools with several draws per cell")
    if cv is not None and split is not None:
        raise ValueError("give cv or split, not both")
    cv = cv if cv is not None else (None if split else 5)
    options.setdefault("progress", False)
    return evaluate_routers(pool, families, tau=tau, cv=cv, split=split, seed=seed, **options)


def compose(pool: Pool, anchor: str = "best", sizes=None, *, tau: float | None = None, budget: float | None = None,
            **options):
    """Pool construction by complementary coverage (paper 002, Thm 8): per size the greedy pool,
    the exhaustive optimum and the accuracy-ranked pool relative to ``anchor``
    (:func:`oraclegap.deploy.compose.compose_pools`; a ``Composition``). k > 1 pools need ``tau``."""
    from .compose import compose_pools

    pool = _check_pool(pool, "compose")
    if pool.k > 1 and tau is None:
        raise ValueError(f"the pool has k={pool.k} draws per cell; pass tau=T to define success as coverage at T")
    return compose_pools(pool, anchor, sizes, tau=tau, budget=budget, **options)
