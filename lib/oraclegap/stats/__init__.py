"""The statistics of a pool (second floor): coverage functionals (``coverage``), paper 000's
nulls (``nulls``), generators with known truth (``simulate``) and the studies that run tests on
them (``studies``), paper 002's certificates (``certify``) and its tables recomputed from its own published
figures (``paper002``), paper 000's tables on a pool simulated from its published margins
(``paper000``), and paper 001's single-draw noise
decomposition (``noise``). Modules here import only ``oraclegap.pool``, ``oraclegap._validate``
and each other (never a higher floor).

Front door (each verb takes a Pool, with the CLI's defaults; see :mod:`oraclegap.stats.verbs`):
``coverage(pool)``, ``nulls(pool)``, ``certify(pool, method="thm4"|"paired")``,
``decompose(pool)``. ``coverage``, ``nulls`` and ``certify`` are also the submodules of those
names, made callable, so ``from oraclegap.stats import coverage; coverage.coverage(...)`` still
works."""

from .. import _lazy

VERBS = {name: f"oraclegap.stats.verbs:{name}" for name in ("coverage", "nulls", "certify", "decompose")}
__getattr__ = _lazy.install(__name__, VERBS)
