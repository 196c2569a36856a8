"""Reading the pickles other router tools publish without executing pickle code.

A pickle is a small program: its ``GLOBAL``/``STACK_GLOBAL`` opcodes import any callable by name
and ``REDUCE`` calls it, which is how a hostile file runs ``os.system``. :func:`safe_load` runs
the standard :class:`pickle.Unpickler` with :meth:`~pickle.Unpickler.find_class` restricted to
:data:`ALLOWED_GLOBALS`: the numpy and pandas reconstruction
functions and classes that a pickled ``DataFrame``, ``Series`` or ``ndarray`` names, plus the
harmless builtins their state uses (``slice``, ``bytearray``, ``_codecs.encode`` for protocol-2
bytes). Every other global -- ``os.system``, ``builtins.eval``, ``subprocess.Popen``, a
``pandas.*`` function that is not on the list, pyarrow's buffer restorers (a frame pickled by
pandas >= 3 with Arrow-backed strings: its buffers are not validated on load, so they stay off the
list, and the refusal says to convert the file with ``to_parquet``) -- raises :class:`UnsafePickle` naming it, at the
opcode that names it, i.e. before anything it would call can run (the idea of
``torch.load(weights_only=True)``). Persistent ids are refused too. Plain containers (dict,
list, tuple, str, numbers, bytes) need no global and load as usual.

Ground floor: imports only the standard library (numpy/pandas are imported lazily by the
unpickler when a file names them).
"""

from __future__ import annotations

import _compat_pickle
import io
import pickle
from pathlib import Path

__all__ = ["ALLOWED_GLOBALS", "UnsafePickle", "safe_load", "safe_loads"]

_NUMPY = {
    f"{mod}.{name}"
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray")
    for name in ("_reconstruct", "scalar")
} | {
    f"{mod}._frombuffer" for mod in ("numpy.core.numeric", "numpy._core.numeric")
} | {"numpy.ndarray", "numpy.dtype"} | {
    f"numpy.dtypes.{n}DType"
    for n in ("Float64", "Float32", "Float16", "Int64", "Int32", "Int16", "Int8", "UInt64", "UInt32", "UInt16", "UInt8",
              "Bool", "Str", "Bytes", "Object")
}
_PANDAS = {
    "pandas.DataFrame", "pandas.Series", "pandas.Index", "pandas.RangeIndex", "pandas.StringDtype",
    "pandas.core.frame.DataFrame", "pandas.core.series.Series",
    "pandas.core.internals.managers.BlockManager", "pandas.core.internals.managers.SingleBlockManager",
    "pandas.core.internals.blocks.new_block", "pandas._libs.internals._unpickle_block",
    "pandas.core.indexes.base._new_Index", "pandas.core.indexes.base.Index", "pandas.core.indexes.range.RangeIndex",
    "pandas.core.indexes.numeric.Int64Index", "pandas.core.indexes.numeric.Float64Index",
    "pandas.core.arrays.string_.StringDtype", "pandas.core.arrays.string_.StringArray",
    "pandas.arrays.ArrowStringArray", "pandas.arrays.StringArray", "pandas.core.arrays.string_arrow.ArrowStringArray",
}
_BUILTINS = {f"{mod}.{name}" for mod in ("builtins", "__builtin__") for name in ("slice", "bytearray", "set", "frozenset",
                                                                                  "complex")}
#: Every global a pickle may name: ``module.name`` strings (nothing else is ever imported).
ALLOWED_GLOBALS = frozenset(_NUMPY | _PANDAS | _BUILTINS | {"_codecs.encode", "collections.OrderedDict"})


class UnsafePickle(ValueError):
    """A pickle names a global outside :data:`ALLOWED_GLOBALS` (or is not a readable pickle)."""


def _is_arrow(module: str, name: str) -> bool:
    """A global of pyarrow's or of pandas' Arrow-backed arrays and dtypes (what ``DataFrame.to_pickle``
    names for Arrow strings, the default string storage of pandas >= 3)."""
    return module.split(".")[0] == "pyarrow" or (module.split(".")[0] == "pandas" and "Arrow" in name)


class _Restricted(pickle.Unpickler):
    def __init__(self, fh, label: str):
        super().__init__(fh)
        self._label = label

    def find_class(self, module, name):  # noqa: D401 - pickle API
        # protocol-2 files name Python 2 modules (__builtin__, commands ...): check the Python 3 global they denote
        m3, n3 = _compat_pickle.NAME_MAPPING.get((module, name), (_compat_pickle.IMPORT_MAPPING.get(module, module), name))
        full = f"{m3}.{n3}"
        if full not in ALLOWED_GLOBALS and _is_arrow(m3, n3):
            raise UnsafePickle(
                f"{self._label}: pandas >= 3 pickles with Arrow strings cannot be read safely (it names {full!r}; "
                "Arrow buffers are not validated on load): convert it where it was written with "
                "pandas.read_pickle(path).to_parquet('table.parquet') and pass the .parquet file"
            )
        if full not in ALLOWED_GLOBALS:
            raise UnsafePickle(
                f"{self._label} names the global {full!r}, which is not on oraclegap's allow-list of numpy/pandas "
                "reconstruction globals; the file was refused before anything in it ran (oraclegap never executes "
                "pickle code)"
            )
        return super().find_class(module, name)

    def persistent_load(self, pid):  # noqa: D401 - pickle API
        raise UnsafePickle(f"{self._label} uses persistent ids ({pid!r}); refused (oraclegap never executes pickle code)")


def safe_loads(data: bytes, label: str = "the pickle"):
    """The object a pickle ``data`` holds, loaded with only :data:`ALLOWED_GLOBALS` importable."""
    try:
        return _Restricted(io.BytesIO(data), label).load()
    except UnsafePickle:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            ImportError, MemoryError, UnicodeDecodeError, OverflowError) as exc:
        raise UnsafePickle(f"{label} is not a readable pickle ({type(exc).__name__}: {exc})") from None


def safe_load(path, label: str | None = None):
    """:func:`safe_loads` of a file's bytes (``label`` defaults to the path)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"{p} cannot be read: {exc.strerror or exc}") from None
    return safe_loads(data, str(p) if label is None else label)
