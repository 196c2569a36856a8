"""Native thread pools (BLAS, OpenMP) limited for the length of a computation (ground floor): one
controller of the loaded libraries for the whole library, scanned again only after new modules
were imported.

Thin matrix products and small model fits run fastest on one thread on a shared machine (other
threads only spin-wait), and a fit on one thread is reproducible whatever the machine's thread
count. :func:`limited_threads` sets the limit; scanning the loaded libraries takes milliseconds,
so the scan is kept while ``sys.modules`` has not grown (an import can load a new native library,
e.g. the OpenMP runtime of scikit-learn's gradient boosting).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = ["limited_threads"]

_SCAN: tuple[int, object] | None = None


def _controller():
    """The threadpoolctl controller of the native libraries loaded now (rescanned when modules
    were imported since the last scan)."""
    global _SCAN
    from threadpoolctl import ThreadpoolController

    loaded = len(sys.modules)
    if _SCAN is None or _SCAN[0] != loaded:
        _SCAN = (loaded, ThreadpoolController())
    return _SCAN[1]


@contextlib.contextmanager
def limited_threads(limits: int = 1, user_api: str | None = None) -> Iterator[None]:
    """Within the block, the native thread pools of ``user_api`` (``"blas"``, ``"openmp"``, or
    None for both) use at most ``limits`` threads; the previous limits return on exit."""
    with _controller().limit(limits=limits, user_api=user_api):
        yield
