"""oraclegap: how much of a pool's oracle gap is noise, specialization, or recoverable.

Modules (one idea each): ``pool`` (the Pool data model), ``coverage`` (reliability coverage,
D, L, routing identity, mixture bound, rAUC), ``noise`` (paper 001's single-draw oracle
decomposition), ``nulls`` and ``simulate`` (paper 000's tests and generators), ``certify``
(paper 002's selection-valid intervals), ``datasets`` (named pools), ``report`` (style and
formatting), ``cli``. Import submodules explicitly; importing the package stays cheap.
"""

from .pool import Pool

__version__ = "0.1.0"
__all__ = ["Pool", "__version__"]
