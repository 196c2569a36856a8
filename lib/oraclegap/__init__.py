"""oraclegap: how much of a pool's oracle gap is noise, specialization, or recoverable.

The package is arranged in floors; a module imports only its own floor and those below
(checked by import-linter in ``make test``):

* ground: ``pool`` (the Pool data model), ``_validate`` (shared argument checks),
  ``_datalog`` (which data files a run reads, for the book's execution cache);
* ``stats/``: ``coverage`` (reliability coverage, D, L, routing identity, mixture bound,
  rAUC), ``nulls`` and ``simulate`` (paper 000's tests and generators), ``studies``
  (simulation studies that run the tests), ``certify`` (paper 002's selection-valid
  intervals), ``noise`` (paper 001's single-draw oracle decomposition);
* ``deploy/``: deployment rules (routers, mixtures and votes, pool construction);
* generation: ``rollouts/``, ``lab/``;
* data in: ``datasets`` (named pools), ``sources`` (``open_pool`` for any pool reference);
* on top: ``report`` (style and formatting), ``book``, ``audit``, ``cli`` + ``commands/``.

Import submodules explicitly (``from oraclegap.stats import coverage``); importing the
package stays cheap.
"""

from .pool import Pool

__version__ = "0.1.0"
__all__ = ["Pool", "__version__"]
