"""The statistics floor's front-door verbs: each takes a :class:`~oraclegap.pool.Pool` and
returns a result object, with the defaults of the matching CLI verb (``oraclegap coverage``,
``nulls``, ``certify``, ``decompose``), so a call with defaults gives the CLI's numbers.

The library functions behind them are named in each docstring; these verbs only choose defaults
and reductions. Each imports its module when called, so importing this module (and
``oraclegap``) stays cheap.

One rule for pools with several draws per cell (k > 1), shared with ``routers`` and
``compose``: a verb that needs one success bit per (prompt, member) refuses to pick one silently
and asks for ``tau`` (coverage at tau: at least ceil(tau k) of the k draws succeed) or, where a
single draw is meaningful, ``draw``. Every interval's error rate is ``alpha`` (the interval has
level 1 - alpha); tests report p-values.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._validate import check_alpha
from ..pool import Pool, check_pool
from .coverage import DEFAULT_TAUS

__all__ = ["DEFAULT_TAUS", "CERTIFY_METHODS", "coverage", "nulls", "certify", "decompose"]

#: ``certify(method=...)``: the front door's names and the :data:`~oraclegap.stats.certify.GAP_METHODS`
#: each stands for ("thm4" is paper 002's Theorem 4, the CLI's default ``exact``).
CERTIFY_METHODS = {"thm4": "exact", "exact": "exact", "paired": "paired", "hoeffding": "hoeffding",
                   "hoeffding-paired": "hoeffding-paired"}


def tau_rule(pool: Pool, tau) -> None:
    """The rule of the verbs that score one success per cell: a k = 1 pool takes no ``tau`` (its
    one draw is the success); a k > 1 pool needs ``tau`` (success = coverage at tau). Each
    breach raises a ValueError that says what to pass."""
    if pool.k == 1 and tau is not None:
        raise ValueError("the pool has k=1: tau applies only to pools with several draws per cell")
    if pool.k > 1 and tau is None:
        raise ValueError(
            f"the pool has k={pool.k} draws per cell: pass tau=T (success = coverage at T)"
        )


def coverage(pool: Pool, taus: Sequence[float] = DEFAULT_TAUS, *, estimator: str = "raw"):
    """Coverage functionals of a pool at each threshold.

    A member covers a prompt at tau when at least ceil(tau k) of its k draws succeed; the
    oracle covers it when some member does. Per tau: oracle, best-member and mixture coverage,
    D (share of prompts where members disagree), L = oracle - best, oracle - mixture and the
    break-even router error L/D (:func:`oraclegap.stats.coverage.coverage`).

    Parameters
    ----------
    pool : Pool
        Verdicts of M members on n prompts, k draws each (k = 1 allowed).
    taus : sequence of float
        Thresholds in (0, 1].
    estimator : {"raw", ...}
        How member coverage is estimated (see :func:`oraclegap.stats.coverage.coverage`).

    Returns
    -------
    CoverageTable
        One row per tau in ``.frame()``.

    Examples
    --------
    >>> import oraclegap as og
    >>> from oraclegap.deploy.features import simulated_router_pool
    >>> pool = simulated_router_pool(n=60, M=3, k=4, seed=1).pool
    >>> table = og.coverage(pool, taus=[0.5])
    >>> row = table.frame().iloc[0]
    >>> bool(row["oracle"] >= row["best"]), bool(abs(row["L"] - (row["oracle"] - row["best"])) < 1e-12)
    (True, True)
    """
    from . import coverage as _coverage

    return _coverage.coverage(check_pool(pool, verb="coverage"), taus, estimator=estimator)


def nulls(pool: Pool, taus: Sequence[float] = DEFAULT_TAUS, *, n_draws: int = 2000, seed: int = 0, **options):
    """Paper 000's null tests: is the oracle gap sampling noise?

    Each statistic (L, D, oracle - mixture, the Pass@1 gap) at each tau is compared with its law
    under the re-deal null (exchangeable members) and the margin-preserving null (additive
    logit quality); p = (1 + b) / (B + 1) with b of the B null draws at least as large
    (:func:`oraclegap.stats.nulls.null_tests`).

    Parameters
    ----------
    pool : Pool
    taus : sequence of float
        Thresholds in (0, 1].
    n_draws : int
        Null draws B per test.
    seed : int
        Seed of the named random streams.
    **options
        Keyword arguments of :func:`~oraclegap.stats.nulls.null_tests` (``nulls``,
        ``statistics``, ``burn_in``, ``thin``, ``n_chains``, ``p_convention``, ...).

    Returns
    -------
    NullTests
        One row per (statistic, tau, null) in ``.frame()``.

    Examples
    --------
    >>> import oraclegap as og
    >>> from oraclegap.deploy.features import simulated_router_pool
    >>> pool = simulated_router_pool(n=60, M=3, k=4, seed=1).pool
    >>> tests = og.nulls(pool, taus=[0.5], n_draws=199)
    >>> p = tests.frame()["p"]
    >>> bool(((p >= 1 / 200) & (p <= 1)).all())
    True
    """
    from .nulls import null_tests

    return null_tests(check_pool(pool, verb="nulls"), taus, n_draws=n_draws, seed=seed, **options)


def certify(pool: Pool, method: str = "thm4", *, alpha: float = 0.05, naive: str = "cp",
            draw: int | None = None, tau: float | None = None):
    """A selection-valid interval for the outcome-oracle gap G = q - max_m p_m (paper 002).

    q is the probability that some member succeeds on a prompt, p_m member m's success
    probability; the interval covers G with probability >= 1 - alpha although the best member is
    chosen on the same prompts (:func:`oraclegap.stats.certify.selection_valid_gap_from_outcomes`).

    Parameters
    ----------
    pool : Pool
        A k = 1 pool is used as it is. A k > 1 pool needs ``tau`` (success = coverage at tau)
        or ``draw`` (success = draw j); the verb refuses to choose one.
    method : {"thm4", "paired", "hoeffding", "hoeffding-paired"}
        ``"thm4"`` is paper 002's Theorem 4 (the CLI's ``exact``).
    alpha : float
        Error rate in (0, 1): the interval has level 1 - alpha.
    naive : str
        The naive interval shown beside it (``"cp"``: Clopper-Pearson).
    draw, tau
        The reduction of a k > 1 pool (give one).

    Returns
    -------
    GapInterval
        An Interval (``value``, ``lo``, ``hi``, ``level``, ``method``) with ``certified``
        (lo > 0) and the ``naive`` interval beside it.

    Examples
    --------
    >>> import oraclegap as og
    >>> from oraclegap.deploy.features import simulated_router_pool
    >>> pool = simulated_router_pool(n=60, M=3, k=4, seed=1).pool
    >>> gi = og.certify(pool, tau=0.5)
    >>> bool(gi.lo <= gi.value <= gi.hi)
    True
    """
    from .certify import outcomes_from_pool, selection_valid_gap_from_outcomes

    pool = check_pool(pool, verb="certify")
    alpha = check_alpha(alpha)
    if method not in CERTIFY_METHODS:
        raise ValueError(f"method must be one of {sorted(CERTIFY_METHODS)}, got {method!r}")
    if draw is not None and tau is not None:
        raise ValueError("give draw or tau, not both")
    if pool.k == 1:
        if tau is not None:
            raise ValueError("the pool has k=1: tau applies only to pools with several draws per cell")
        if draw not in (None, 0):
            raise ValueError("the pool has k=1: draw applies only to pools with several draws per cell")
        R = outcomes_from_pool(pool)
    elif tau is not None:
        R = outcomes_from_pool(pool, tau=tau)
    elif draw is not None:
        R = outcomes_from_pool(pool, draw=draw)
    else:
        raise ValueError(f"the pool has k={pool.k} draws per cell: pass tau=T (success = coverage at T) "
                         "or draw=J (success = draw J)")
    return selection_valid_gap_from_outcomes(R, alpha, CERTIFY_METHODS[method], naive=naive,
                                             model_names=pool.policy_names)


def decompose(pool: Pool, baseline=None, *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05,
              form: str | None = None, split: str = "loo"):
    """Paper 001's single-draw decomposition O_exp = O_repro + Delta and G = G_rec + Delta.

    O_exp is the expected single-draw oracle, O_repro its reproducible part (the member chosen
    on other draws), Delta the single-draw luck; each comes with a prompt-bootstrap interval of
    level 1 - alpha (:func:`oraclegap.stats.noise.decomposition`).

    Parameters
    ----------
    pool : Pool
        Needs k >= 2 draws per cell (O_repro is not identified from one draw).
    baseline : None, "best" or per-prompt choices/scores
        The router the gap is measured against (default: the best single member).
    n_boot : int
        Prompt-bootstrap resamples.
    seed : int
    alpha : float
        Error rate in (0, 1) of every interval.
    form : {None, "seed-aligned", "independent"}
        O_exp estimator (default: from the pool's alignment).
    split : {"loo", "half"}
        Split-draw estimator behind the brackets.

    Returns
    -------
    Decomposition
        ``estimates`` (an Interval per quantity) and ``.frame()``.

    Examples
    --------
    >>> import oraclegap as og
    >>> from oraclegap.deploy.features import simulated_router_pool
    >>> pool = simulated_router_pool(n=60, M=3, k=4, seed=1).pool
    >>> dec = og.decompose(pool, n_boot=200)
    >>> e = dec.estimates["o_exp"]
    >>> bool(e.lo <= e.value <= e.hi), e.level
    (True, 0.95)
    """
    from . import noise

    pool = check_pool(pool, verb="decompose")
    level = 1.0 - check_alpha(alpha)
    if pool.k < 2:
        raise ValueError(f"decompose needs k >= 2 draws per cell; the pool has k={pool.k} "
                         "(O_repro is not identified from one draw)")
    return noise.decomposition(pool, baseline=baseline, split=split, form=form, n_boot=n_boot, seed=seed,
                               level=level)
