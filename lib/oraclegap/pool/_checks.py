"""The type check every verb makes of its pool argument: ``check_pool`` returns a
`oraclegap.pool.Pool` unchanged and refuses anything else with a `TypeError` that names the
argument and how to open a pool."""

from __future__ import annotations

from ._pool import Pool

__all__ = ["check_pool"]


def check_pool(pool, name: str = "pool", *, verb: str | None = None) -> Pool:
    """``pool`` itself when it is a :class:`~oraclegap.pool.Pool`, else a ``TypeError``.

    The message names the argument (``name``, e.g. ``"test"`` or ``"pools[2]"``), the type it
    got and how to open a pool; ``verb`` (a front-door verb such as ``"coverage"``) prefixes it.
    """
    if not isinstance(pool, Pool):
        where = f"{verb}: " if verb else ""
        raise TypeError(f"{where}{name} must be an oraclegap.Pool, got {type(pool).__name__} "
                        "(open one with oraclegap.sources.open_pool or oraclegap.datasets.load)")
    return pool
