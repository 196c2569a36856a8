"""The statistics floor's front-door verbs: each takes a :class:`~oraclegap.pool.Pool` and
returns a result object, with the defaults of the matching CLI verb (``oraclegap coverage``,
``nulls``, ``certify``, ``decompose``), so a call with defaults gives the CLI's numbers.

The library functions behind them stay where they were (named in each docstring); these verbs
only choose defaults and reductions. Each imports its module when called, so importing this
module (and ``oraclegap``) stays cheap.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..pool import Pool

__all__ = ["DEFAULT_TAUS", "CERTIFY_METHODS", "coverage", "nulls", "certify", "decompose"]

#: The thresholds of ``oraclegap coverage`` / ``oraclegap nulls`` by default.
DEFAULT_TAUS = (0.05, 0.1, 0.2, 0.3)
#: ``certify(method=...)``: the front door's names and the :data:`~oraclegap.stats.certify.GAP_METHODS`
#: each stands for ("thm4" is paper 002's Theorem 4, the CLI's default ``exact``).
CERTIFY_METHODS = {"thm4": "exact", "exact": "exact", "paired": "paired", "hoeffding": "hoeffding",
                   "hoeffding-paired": "hoeffding-paired"}


def _check_pool(pool, verb: str) -> Pool:
    if not isinstance(pool, Pool):
        raise TypeError(f"{verb}: pool must be an oraclegap.Pool, got {type(pool).__name__} "
                        "(open one with oraclegap.sources.open_pool or oraclegap.datasets.load)")
    return pool


def coverage(pool: Pool, taus: Sequence[float] = DEFAULT_TAUS, *, estimator: str = "raw"):
    """Coverage functionals at each threshold: oracle, best, mixture, D, L, oracle-minus-mixture
    (:func:`oraclegap.stats.coverage.coverage`; a :class:`~oraclegap.stats.coverage.CoverageTable`)."""
    from . import coverage as _coverage

    return _coverage.coverage(_check_pool(pool, "coverage"), taus, estimator=estimator)


def nulls(pool: Pool, taus: Sequence[float] = DEFAULT_TAUS, *, n_draws: int = 2000, seed: int = 0, **options):
    """Paper 000's re-deal and margin-preserving null tests of L, D, oracle-minus-mixture and the
    Pass@1 gap (:func:`oraclegap.stats.nulls.null_tests`; ``options`` are its keyword arguments:
    ``nulls``, ``statistics``, ``burn_in``, ``thin``, ``n_chains``, ``p_convention``, ...)."""
    from .nulls import null_tests

    return null_tests(_check_pool(pool, "nulls"), taus, n_draws=n_draws, seed=seed, **options)


def certify(pool: Pool, method: str = "thm4", *, alpha: float = 0.05, naive: str = "cp",
            draw: int | None = None, tau: float | None = None):
    """A selection-valid interval for the outcome-oracle gap G = q - max_m p_m.

    ``method``: ``"thm4"`` (paper 002, Theorem 4; the CLI's default ``exact``), ``"paired"``, or
    ``"hoeffding"`` / ``"hoeffding-paired"``. A k = 1 pool is used directly; a k > 1 pool is
    reduced to draw ``draw`` (default 0) or to coverage at ``tau``, as ``oraclegap certify`` does
    (:func:`oraclegap.stats.certify.selection_valid_gap_from_outcomes`; a
    :class:`~oraclegap.stats.certify.GapInterval`).
    """
    from .certify import outcomes_from_pool, selection_valid_gap_from_outcomes

    pool = _check_pool(pool, "certify")
    if method not in CERTIFY_METHODS:
        raise ValueError(f"method must be one of {sorted(CERTIFY_METHODS)}, got {method!r}")
    if draw is not None and tau is not None:
        raise ValueError("give draw or tau, not both")
    if pool.k == 1:
        if draw not in (None, 0) or tau is not None:
            raise ValueError("the pool has k=1; draw and tau apply only to pools with several draws per cell")
        R = outcomes_from_pool(pool)
    elif tau is not None:
        R = outcomes_from_pool(pool, tau=tau)
    else:
        R = outcomes_from_pool(pool, draw=0 if draw is None else draw)
    return selection_valid_gap_from_outcomes(R, alpha, CERTIFY_METHODS[method], naive=naive,
                                             model_names=pool.policy_names)


def decompose(pool: Pool, baseline=None, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95,
              form: str | None = None, split: str = "loo"):
    """Paper 001's single-draw decomposition O_exp = O_repro + Delta and G = G_rec + Delta, each
    with an interval (:func:`oraclegap.stats.noise.decomposition`; a
    :class:`~oraclegap.stats.noise.Decomposition`). Needs k >= 2 draws per cell."""
    from . import noise

    pool = _check_pool(pool, "decompose")
    if pool.k < 2:
        raise ValueError(f"decompose needs k >= 2 draws per cell; the pool has k={pool.k} "
                         "(O_repro is not identified from one draw)")
    return noise.decomposition(pool, baseline=baseline, split=split, form=form, n_boot=n_boot, seed=seed, level=level)
