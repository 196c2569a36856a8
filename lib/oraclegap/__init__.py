"""oraclegap: how much of a pool's oracle gap is noise, specialization, or recoverable.

The front door: each verb takes a :class:`Pool` (open one with ``oraclegap.sources.open_pool``
or ``oraclegap.datasets.load``) and returns a result object with a short ``repr``, a readable
notebook display and ``.frame()`` (tidy pandas); the defaults are those of the CLI verb of the
same name, so ``og.nulls(pool)`` gives the numbers of ``oraclegap nulls POOL``::

    import oraclegap as og
    from oraclegap import datasets
    pool = datasets.load("lab-seed-primary")
    og.coverage(pool)            # oracle, best, mixture coverage, D, L      -> stats.coverage
    og.nulls(pool)               # is the gap sampling noise? (paper 000)    -> stats.nulls
    og.certify(pool)             # selection-valid gap interval, method="thm4"|"paired" (002)
    og.decompose(pool)           # single-draw noise: O_exp = O_repro + Delta (001) -> stats.noise
    og.routers(pool)             # fit and score router families (002 Sec. 7) -> deploy.evaluate
    og.compose(pool, tau=0.5)    # pool construction by complementary coverage -> deploy.compose
    og.audit(pool)               # the one-command pre-routing audit (out=DIR writes the report)

The verbs, ``Pool`` and ``Interval`` are loaded on first use (importing ``oraclegap`` imports
neither numpy, pandas, numba, scikit-learn nor torch); ``oraclegap.stats`` and ``oraclegap.deploy`` expose the same verbs of their floor.
Intervals are one type, :class:`oraclegap.Interval` (defined in ``_result``) (value, lo, hi, level, method).

The package is arranged in floors; a module imports only its own floor and those below
(checked by import-linter in ``make test``):

* ground: ``pool`` (the Pool data model), ``_validate`` (shared argument checks), ``_result``
  (Interval and the result display contract), ``_datalog`` (which data files a run reads);
* ``stats/``: ``coverage`` (reliability coverage, D, L, routing identity, mixture bound,
  rAUC), ``nulls`` and ``simulate`` (paper 000's tests and generators), ``studies``
  (simulation studies that run the tests), ``certify`` (paper 002's selection-valid
  intervals), ``noise`` (paper 001's single-draw oracle decomposition);
* ``deploy/``: deployment rules (routers, mixtures and votes, pool construction);
* generation: ``rollouts/``, ``lab/``;
* data in: ``datasets`` (named pools), ``sources`` (``open_pool`` for any pool reference);
* on top: ``report`` (style and formatting), ``book``, ``audit``, ``verbs`` (every front-door
  verb in one module), ``cli`` + ``commands/``.

Import submodules explicitly (``from oraclegap.stats import coverage``) for everything beyond
the verbs; importing the package stays cheap.
"""

from . import _lazy

TYPE_CHECKING = False  # (typing.TYPE_CHECKING without importing typing: type checkers read the name)
if TYPE_CHECKING:  # loaded on first use like the verbs: `import oraclegap` stays instant (the CLI starts here)
    from ._result import Interval
    from .pool import Pool

__version__ = "0.1.0"
#: The front-door verbs and where each is implemented.
VERBS = {
    "coverage": "oraclegap.stats.verbs:coverage",
    "nulls": "oraclegap.stats.verbs:nulls",
    "certify": "oraclegap.stats.verbs:certify",
    "decompose": "oraclegap.stats.verbs:decompose",
    "routers": "oraclegap.deploy.verbs:routers",
    "compose": "oraclegap.deploy.verbs:compose",
    "audit": "oraclegap.verbs:audit",
}
__all__ = ["Pool", "Interval", "__version__", *VERBS]
__getattr__ = _lazy.install(__name__, {**VERBS, "Pool": "oraclegap.pool:Pool", "Interval": "oraclegap._result:Interval"})


def __dir__():
    return sorted(set(globals()) | set(VERBS) | {"Pool", "Interval"})
