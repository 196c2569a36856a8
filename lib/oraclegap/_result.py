"""The result contract shared by every floor: one interval type and a mixin for short displays
and JSON values.

* :class:`Interval` -- a point estimate with an interval: ``value``, ``lo``, ``hi``, ``level``
  (the nominal coverage, e.g. 0.95; one-sided intervals keep ``hi = inf`` or ``lo = -inf``) and
  ``method`` (how it was built: ``"percentile"``, ``"clopper-pearson"``, ``"bracket"`` ...).
* :class:`Result` -- mixed into the library's frozen result dataclasses (declared with
  ``repr=False`` so that the mixin's ``__repr__`` is used): a short ``repr`` (class name, the
  headline fields first, small arrays as values, larger arrays and tables as shapes; at most
  :data:`MAX_LINES` lines), ``_repr_markdown_`` / ``_repr_html_`` so that a notebook shows a
  readable summary, and ``to_dict()``, every field as a JSON value (:func:`jsonable`). Tidy data
  is each class's ``frame()``. A result that is one interval subclasses both (``Result`` first).

This module is on the ground floor: it imports only numpy and the standard library (pandas is
looked at by type name, never imported), so every floor may import it.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

__all__ = ["Interval", "Result", "MAX_LINES", "SHOWN_VALUES", "short_value", "jsonable"]

#: A result's repr never runs longer than this many lines (field lines plus the two frame lines).
MAX_LINES = 24
_MAX_WIDTH = 96


def _num(x: float) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.4g}"


@dataclasses.dataclass(frozen=True, repr=False)
class Interval:
    """A point estimate with an interval [lo, hi] at nominal coverage ``level``, built by ``method``."""

    value: float
    lo: float
    hi: float
    level: float = 0.95
    method: str = ""

    @classmethod
    def of(cls, value, lo, hi, level: float = 0.95, method: str = "") -> Interval:
        """An Interval from numbers (numpy scalars become floats)."""
        return cls(float(value), float(lo), float(hi), float(level), str(method))

    @classmethod
    def from_columns(cls, df, name: str, lo: str | None = None, hi: str | None = None, *,
                     level: float = 0.95, method: str = "") -> list[Interval]:
        """One Interval per row of a table with columns ``name``, ``name_lo``, ``name_hi``
        (or the columns named by ``lo`` / ``hi``)."""
        lo, hi = lo or f"{name}_lo", hi or f"{name}_hi"
        missing = [c for c in (name, lo, hi) if c not in df.columns]
        if missing:
            raise ValueError(f"df has no column(s) {missing}; expected {name!r}, {lo!r} and {hi!r}")
        return [cls.of(v, a, b, level, method) for v, a, b in zip(df[name], df[lo], df[hi], strict=True)]

    def contains(self, x: float) -> bool:
        """Whether ``x`` lies in [lo, hi]."""
        return bool(self.lo <= x <= self.hi)

    @property
    def width(self) -> float:
        """hi - lo."""
        return float(self.hi - self.lo)

    def to_dict(self) -> dict:
        """{value, lo, hi, level, method} as plain numbers (:func:`jsonable` makes NaN null)."""
        return dataclasses.asdict(self)

    def _short(self) -> str:
        how = f"{self.level:.0%}" if self.level == self.level else ""
        how = f"{how} {self.method}".strip()
        return f"{_num(self.value)} [{_num(self.lo)}, {_num(self.hi)}]" + (f" ({how})" if how else "")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._short()})"

    def _repr_markdown_(self) -> str:
        return self._short()


#: Numeric arrays with at most this many entries show their values, larger ones their shape.
SHOWN_VALUES = 12


def _array_values(v: np.ndarray) -> str:
    if v.ndim == 2:
        return "[" + ", ".join(_array_values(row) for row in v) + "]"
    return "[" + ", ".join(_num(x) for x in v.tolist()) + "]"


def _is_number(x: Any) -> bool:
    number = isinstance(x, (int, float, np.integer, np.floating))
    return number and not isinstance(x, (bool, np.bool_))


def short_value(v: Any) -> str:
    """A one-line description of a field value: numbers to four significant digits, intervals as
    ``value [lo, hi]``, small numeric arrays (at most :data:`SHOWN_VALUES` entries) as their
    values, mappings of numbers as their first :data:`SHOWN_VALUES` items, larger arrays and tables
    as their shapes, a nested result as its one-line summary (:meth:`Result._summary`), other
    containers as their sizes."""
    if isinstance(v, Interval):
        return Interval._short(v)
    if v is None or isinstance(v, (bool, np.bool_)):
        return str(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return _num(v)
    if isinstance(v, str):
        return repr(v if len(v) <= 60 else v[:57] + "...")
    if isinstance(v, np.ndarray):
        if v.size <= SHOWN_VALUES and v.ndim <= 2 and v.dtype.kind in "biuf":
            return _array_values(v)
        return f"array{tuple(v.shape)} {v.dtype}"
    kind = type(v).__name__
    if kind == "DataFrame":
        return f"DataFrame({v.shape[0]} rows x {v.shape[1]} columns)"
    if kind == "Series":
        return f"Series({len(v)})"
    if isinstance(v, Result):
        return v._summary()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return f"{kind}(...)"
    if isinstance(v, Mapping):
        keys = list(v)
        if keys and all(_is_number(x) for x in v.values()):
            more = ", ..." if len(keys) > SHOWN_VALUES else ""
            return "{" + ", ".join(f"{k}: {_num(v[k])}" for k in keys[:SHOWN_VALUES]) + more + "}"
        head = ", ".join(map(str, keys[:4])) + (", ..." if len(keys) > 4 else "")
        return f"{{{len(keys)} entries: {head}}}"
    if isinstance(v, (list, tuple)):
        if len(v) <= 4 and all(isinstance(x, (int, float, str, np.integer, np.floating)) for x in v):
            inner = ", ".join(short_value(x) for x in v)
            if isinstance(v, list):
                return f"[{inner}]"
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        return f"{kind}({len(v)})"
    text = repr(v)
    return text if len(text) <= 60 else f"<{kind}>"


def jsonable(v: Any) -> Any:
    """``v`` as a JSON value: numpy scalars as Python numbers, NaN and infinities as None, arrays,
    tuples and sets as lists, a table (DataFrame) as its records, a Series as a list, mappings with
    string keys, an Interval or a result as its ``to_dict()``, another dataclass as a dict of its
    fields; anything else as its ``str``."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return None if math.isnan(f) or math.isinf(f) else f
    if isinstance(v, (Result, Interval)):
        return jsonable(v.to_dict())
    if isinstance(v, np.ndarray):
        return jsonable(v.tolist())
    if isinstance(v, Mapping):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [jsonable(x) for x in v]
    kind = type(v).__name__
    if kind == "DataFrame":
        return jsonable(v.to_dict(orient="records"))
    if kind == "Series":
        return jsonable(v.tolist())
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    return str(v)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


class Result:
    """Mixin: a short repr and notebook displays for a frozen result dataclass.

    ``_repr_fields`` (optional class attribute) names the headline fields in order (properties
    allowed); by default every dataclass field is shown, up to :data:`MAX_LINES` lines.
    """

    _repr_fields: ClassVar[Sequence[str] | None] = None

    def _summary(self) -> str:
        """One line for this result shown as a field of another (classes with a headline override
        it)."""
        return f"{type(self).__name__}(...)"

    def to_dict(self) -> dict:
        """Every field as a JSON value (:func:`jsonable`); classes with a specific layout override
        it."""
        return {f.name: jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def _repr_items(self) -> tuple[list[tuple[str, str]], list[str]]:
        names = list(self._repr_fields) if self._repr_fields is not None else [
            f.name for f in dataclasses.fields(self) if f.repr]
        every = [f.name for f in dataclasses.fields(self)]
        shown = names[:MAX_LINES]
        rest = names[MAX_LINES:] + [n for n in every if n not in names]
        items = []
        for n in shown:
            try:
                val = short_value(getattr(self, n))
            except Exception as e:  # a display never raises
                val = f"<{type(e).__name__}>"
            items.append((n, val if len(val) <= _MAX_WIDTH else val[: _MAX_WIDTH - 3] + "..."))
        return items, rest

    def __repr__(self) -> str:
        items, rest = self._repr_items()
        lines = [f"{type(self).__name__}("] + [f"  {n}={v}," for n, v in items]
        if rest:
            more = ", ".join(rest)
            more = more if len(more) <= _MAX_WIDTH - 12 else more[: _MAX_WIDTH - 15] + "..."
            lines.append(f"  # also: {more}")
        lines.append(")")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        items, rest = self._repr_items()
        rows = [f"**{type(self).__name__}**", "", "| field | value |", "|---|---|"]
        rows += [f"| {n} | {_md_cell(v)} |" for n, v in items]
        if rest:
            tidy = " (`.frame()` for tidy data)" if hasattr(self, "frame") else ""
            rows += ["", f"Also: {_md_cell(', '.join(rest))}{tidy}"]
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        items, rest = self._repr_items()
        body = "".join(f"<tr><td><code>{html.escape(n)}</code></td><td>{html.escape(v)}</td></tr>" for n, v in items)
        tail = f"<p>Also: {html.escape(', '.join(rest))}</p>" if rest else ""
        return (f"<div><strong>{html.escape(type(self).__name__)}</strong>"
                f"<table><thead><tr><th>field</th><th>value</th></tr></thead><tbody>{body}</tbody></table>{tail}</div>")
