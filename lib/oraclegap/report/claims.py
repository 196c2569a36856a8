"""A chapter's claims and the figures the papers print: the claims table that stops a chapter
when a claim fails, and the published figures (``data/paper/published_figures.csv``) a chapter
sets beside its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import pandas as pd

from .prose import ProseError
from .tables import table


def claim_table(rows: Sequence[Mapping]) -> pd.DataFrame:
    """Rows of ``{claim, source, computed, holds}`` as a DataFrame (the theory-check format)."""
    df = pd.DataFrame(list(rows))
    missing = {"claim", "source", "computed", "holds"} - set(df.columns)
    if missing:
        raise ValueError(f"claim rows need keys claim, source, computed, holds; missing {sorted(missing)}")
    df["holds"] = df["holds"].astype(bool)
    return df[["claim", "source", "computed", "holds"] + [c for c in df.columns if c not in ("claim", "source", "computed", "holds")]]


# ---------------------------------------------------------------------------- claims
class Claims:
    """A chapter's claims table: each row a claim, its source, the computed value and whether it holds.

    ``kind`` says what kind of evidence a row is: ``"identity"`` (a theorem that holds for any
    rates, checked numerically: it can fail only through a bug, so it checks the code),
    ``"enumeration"`` (a probability computed exactly over every possible sample),
    ``"simulation"`` (a Monte Carlo statement that could fail by chance or by being wrong),
    ``"published"`` (a number the papers print, recomputed) and ``"sanity"`` (two routes in the
    code to one definition agree). :meth:`stop_if_failed` raises with the failing claims, so a
    rendered chapter certifies that every row held on its run.
    """

    KINDS = ("identity", "enumeration", "simulation", "published", "sanity")

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, claim: str, source: str, computed, holds, *, kind: str = "identity") -> None:
        """Record one row (returns nothing, so a notebook cell ending with it prints nothing)."""
        if kind not in self.KINDS:
            raise ValueError(f"kind must be one of {self.KINDS}, got {kind!r}")
        self.rows.append({"claim": claim, "source": source, "computed": str(computed), "holds": bool(holds), "kind": kind})

    def __len__(self) -> int:
        return len(self.rows)

    def frame(self) -> pd.DataFrame:
        return claim_table(self.rows) if self.rows else pd.DataFrame(columns=["claim", "source", "computed", "holds", "kind"])

    def table(self):
        """The claims as a display table with human column names."""
        return table(self.frame(), columns={"claim": "claim", "kind": "kind", "source": "source", "computed": "computed", "holds": "holds"})

    def stop_if_failed(self) -> None:
        failed = [r["claim"] for r in self.rows if not r["holds"]]
        if failed:
            raise ProseError(f"{len(failed)} claim(s) failed: {failed}")


# ---------------------------------------------------------------------------- published figures
PUBLISHED_FILE = "published_figures.csv"


@dataclasses.dataclass(frozen=True)
class Published:
    """A figure one of the papers prints, as transcribed in ``data/paper/published_figures.csv``."""

    key: str
    paper: str
    where: str
    quantity: str
    text: str  # as printed, e.g. "0.113" or "14%"

    @property
    def value(self) -> float:
        """The number (percentages as fractions: "14%" -> 0.14)."""
        t = self.text.strip()
        return float(t[:-1]) / 100 if t.endswith("%") else float(t)

    @property
    def cite(self) -> str:
        """Where the figure is printed: ``2609.32996 §3.2``."""
        return f"{PAPER_IDS.get(self.paper, self.paper)} {self.where}"


#: How the book names the three papers.
PAPER_IDS = {"000": "2609.32996", "001": "2607.03436", "002": "Shihab et al."}


def published_table() -> pd.DataFrame:
    """Every transcribed published figure: key, paper, where, quantity, value (as printed)."""
    from .. import datasets

    df = datasets.paper_table(PUBLISHED_FILE)
    df["value"] = df["value"].astype(str)
    df["paper"] = df["paper"].astype(str).str.zfill(3)
    return df


def published(key: str) -> Published:
    """The published figure registered under ``key`` (``KeyError`` naming close keys otherwise)."""
    if not isinstance(key, str):
        raise TypeError(f"key must be a string, got {type(key).__name__}")
    df = published_table().set_index("key")
    if key not in df.index:
        close = [k for k in df.index if key.split(".")[0] in k][:8]
        raise KeyError(f"no published figure {key!r} in data/paper/{PUBLISHED_FILE}; keys like it: {close}")
    r = df.loc[key]
    return Published(key, r["paper"], r["where"], r["quantity"], r["value"])
