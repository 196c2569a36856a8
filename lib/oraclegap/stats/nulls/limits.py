"""What a call of the nulls may cost: the default bounds on work and memory, :class:`NullCost`
(an estimate made before any work, refused above the bounds), the memory check for stored tables,
and the progress display of long runs.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from ..._result import Result
from ..._validate import check_int
from .tables import _Prepared

#: Default bounds on what one call may cost: chain proposals plus re-dealt cells, and bytes of
#: memory for the draws it keeps. A request above them is refused up front (pass larger
#: ``max_proposals`` / ``max_bytes``, or None, to allow it).
DEFAULT_MAX_PROPOSALS = 10_000_000_000
DEFAULT_MAX_BYTES = 4 << 30


@dataclasses.dataclass(frozen=True, repr=False)
class NullCost(Result):
    """What a call of :func:`null_tests` will cost, estimated before any work: chain proposals
    (``n_chains * burn_in + thin * n_draws``), re-dealt cells (``n_draws * movable prompts *
    members``, one hypergeometric draw each) and bytes of memory for the retained draws."""

    proposals: int
    redeal_cells: int
    bytes: int

    @property
    def steps(self) -> int:
        return int(self.proposals + self.redeal_cells)

    def frame(self) -> pd.DataFrame:
        """One row: proposals, re-dealt cells, steps (their sum) and bytes."""
        return pd.DataFrame([{"proposals": self.proposals, "redeal_cells": self.redeal_cells,
                              "steps": self.steps, "bytes": self.bytes}])

    def check(self, max_proposals=DEFAULT_MAX_PROPOSALS, max_bytes=DEFAULT_MAX_BYTES) -> None:
        """Raise ``ValueError`` when the cost exceeds a bound (None: no bound), naming what drives it."""
        problems = []
        if max_bytes is not None and self.bytes > max_bytes:
            problems.append(f"about {_fmt_bytes(self.bytes)} of memory for its null draws, above the limit of "
                            f"{_fmt_bytes(max_bytes)} (max_bytes, CLI --max-memory)")
        if max_proposals is not None and self.steps > max_proposals:
            parts = []
            if self.proposals:
                parts.append(f"{self.proposals:.3g} margin-chain proposals")
            if self.redeal_cells:
                parts.append(f"{self.redeal_cells:.3g} re-dealt cells")
            problems.append(f"{' + '.join(parts)}, above the limit of {max_proposals:.3g} (max_proposals, CLI --max-proposals)")
        if problems:
            raise ValueError(f"this request needs {' and '.join(problems)}; lower n_draws, burn_in or thin, "
                             "or raise the limit")


def _fmt_bytes(b: float) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{int(b)} B"


def _check_table_bytes(n_draws: int, prep: _Prepared, max_bytes) -> None:
    need_b = 2 * n_draws * prep.n * prep.M * 8
    if max_bytes is not None and need_b > check_int(max_bytes, "max_bytes", minimum=1):
        raise ValueError(f"{n_draws} tables of shape ({prep.n}, {prep.M}) need about {_fmt_bytes(need_b)} of memory, above "
                         f"max_bytes = {_fmt_bytes(max_bytes)}; ask for fewer draws or raise max_bytes")


def _progress_bar(enabled: bool, total: int, desc: str, unit: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True)


def _progress(iterable, enabled: bool, **kw):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, **kw)

