"""Deployment rules (third floor): routers and their evaluation, the routing-plateau tables,
mixtures and votes, rules chosen on a validation split and scored on test (``validation``: Table 3), and pool
construction, and the regimes beyond one pre-answer call (``cascade``, the online ``bandit``, the
``binary`` strong/weak routers, scored together by ``regimes``). Modules here import the statistics
floor and below, never data loaders or presentation.

Front door (each verb takes a Pool, with the CLI's defaults; see :mod:`oraclegap.deploy.verbs`):
``routers(pool)`` and ``compose(pool)``; both are also the submodules of those names, made
callable, so ``from oraclegap.deploy import routers; routers.make_router(...)`` still works."""

from .. import _lazy

VERBS = {name: f"oraclegap.deploy.verbs:{name}" for name in ("routers", "compose")}
__getattr__ = _lazy.install(__name__, VERBS)
