"""Every front-door verb in one place (the map is the package docstring of :mod:`oraclegap`).

``coverage``, ``nulls``, ``certify`` and ``decompose`` live in :mod:`oraclegap.stats.verbs`,
``routers`` and ``compose`` in :mod:`oraclegap.deploy.verbs`; ``audit`` (the one-command
pre-routing audit, on the top floor) is here. Each takes a Pool and uses the defaults of the
matching CLI verb.
"""

from __future__ import annotations

from collections.abc import Sequence

from .deploy.verbs import compose, routers
from .pool import Pool
from .stats.verbs import certify, coverage, decompose, nulls

__all__ = ["VERBS", "coverage", "nulls", "certify", "decompose", "routers", "compose", "audit"]

#: The verbs, in the order of the map.
VERBS = ("coverage", "nulls", "certify", "decompose", "routers", "compose", "audit")


def audit(pool: Pool, out=None, *, taus: Sequence[float] | None = None, alpha: float = 0.05, seed: int = 0,
          small: bool = False, effect: float = 0.05, power_tau: float | None = None, report: bool = True,
          progress: bool = False, source: str | None = None):
    """The pre-routing audit of ``pool`` (:func:`oraclegap.audit.run_audit`; an ``AuditResult``
    with the verdict, the sections' results and every number). With ``out`` (a folder) it also
    writes ``report.html``, ``audit.ipynb`` and ``audit.json`` there, as ``oraclegap audit POOL
    --out DIR`` does (``report=False``: the JSON only)."""
    from . import audit as _audit

    if not isinstance(pool, Pool):
        raise TypeError(f"audit: pool must be an oraclegap.Pool, got {type(pool).__name__}")
    kw = dict(taus=_audit.DEFAULT_TAUS if taus is None else taus, alpha=alpha, seed=seed, small=small,
              effect=effect, power_tau=power_tau, progress=progress, source=source)
    if out is None:
        return _audit.run_audit(pool, **kw)
    res, _ = _audit.write_audit(pool, out, report=report, **kw)
    return res
