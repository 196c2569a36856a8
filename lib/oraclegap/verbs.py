"""Every front-door verb in one place (the map is the package docstring of :mod:`oraclegap`).

``coverage``, ``nulls``, ``certify`` and ``decompose`` live in :mod:`oraclegap.stats.verbs`,
``routers`` and ``compose`` in :mod:`oraclegap.deploy.verbs`; ``audit`` (the one-command
pre-routing audit, on the top floor) is here. Each takes a Pool and uses the defaults of the
matching CLI verb.
"""

from __future__ import annotations

from collections.abc import Sequence

from .deploy.verbs import compose, routers
from .pool import Pool, check_pool
from .stats.verbs import certify, check_alpha, coverage, decompose, nulls

__all__ = ["VERBS", "coverage", "nulls", "certify", "decompose", "routers", "compose", "audit"]

#: The verbs, in the order of the map.
VERBS = ("coverage", "nulls", "certify", "decompose", "routers", "compose", "audit")


def audit(pool: Pool, out=None, *, taus: Sequence[float] | None = None, alpha: float = 0.05, seed: int = 0,
          small: bool = False, effect: float = 0.05, power_tau: float | None = None, report: bool = True,
          progress: bool = False, source: str | None = None):
    """The pre-routing audit of a pool: one verdict code with the numbers behind it.

    Coverage functionals, paper 000's null tests, the quality test, the certified gap
    (the split-draw coverage gap at k > 1, paper 002's outcome-oracle gap at k = 1), paper
    001's decomposition, planners and a router check, read together by the first rule of
    :data:`oraclegap.audit.verdict.RULES` that holds (:func:`oraclegap.audit.run_audit`).

    Parameters
    ----------
    pool : Pool
        k = 1 or k > 1 (both handled; the sections that need k > 1 say why they are skipped).
    out : path, optional
        A folder: also write ``report.html``, ``audit.ipynb`` and ``audit.json`` there, as
        ``oraclegap audit POOL --out DIR`` does (``report=False``: the JSON only).
    taus : sequence of float, optional
        Thresholds (default :data:`oraclegap.audit.DEFAULT_TAUS`).
    alpha : float
        Error rate in (0, 1) of every test and interval.
    seed : int
    small : bool
        Smaller Monte Carlo sizes (faster, wider intervals).
    effect, power_tau
        The gap the power planner asks about, and its threshold.
    report, progress, source
        Write the HTML report; show progress; the pool's name in the report.

    Returns
    -------
    AuditResult
        ``verdict`` (code, headline, reasons), each section's result and ``.frame()``.

    Examples
    --------
    >>> import oraclegap as og
    >>> from oraclegap.deploy.features import simulated_router_pool
    >>> pool = simulated_router_pool(n=60, M=3, k=4, seed=1).pool
    >>> res = og.audit(pool, small=True)
    >>> from oraclegap.audit.verdict import VERDICTS
    >>> res.verdict.code in VERDICTS
    True
    """
    from . import audit as _audit

    pool = check_pool(pool, verb="audit")
    kw = dict(alpha=check_alpha(alpha), taus=_audit.DEFAULT_TAUS if taus is None else taus, seed=seed, small=small,
              effect=effect, power_tau=power_tau, progress=progress, source=source)
    if out is None:
        return _audit.run_audit(pool, **kw)
    res, _ = _audit.write_audit(pool, out, report=report, **kw)
    return res
