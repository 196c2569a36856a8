"""Small input checks shared by every module: each raises with the argument's name and what was expected."""

from __future__ import annotations

import ast
import errno
import math
import os
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

__all__ = [
    "check_tau",
    "check_taus",
    "tau_key",
    "parse_list",
    "check_int",
    "check_prob",
    "check_alpha",
    "as_rng",
    "as_bool_array",
    "as_counts_array",
    "check_cost",
    "as_bool_columns",
    "link_problem",
    "read_npy",
    "read_npz",
    "read_text",
    "check_file",
    "check_dir",
    "is_pickle_file",
    "pickle_refusal",
    "literal_list",
]

#: File names that are pickles (or zip archives of pickles, as torch writes): never unpickled.
PICKLE_SUFFIXES = (".pkl", ".pickle", ".pt", ".pth", ".joblib")


def check_tau(tau, name: str = "tau") -> float:
    """Return ``tau`` as a float in (0, 1] or raise ``ValueError``."""
    try:
        t = float(tau)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number in (0, 1], got {tau!r}") from None
    if not (0.0 < t <= 1.0) or math.isnan(t):
        raise ValueError(f"{name} must lie in (0, 1], got {tau!r}")
    return t


def tau_key(tau) -> str:
    """The exact, round-trippable text form of a threshold used as a JSON key: ``repr(float(tau))``.

    ``float(tau_key(t)) == float(t)`` for every float, so two distinct thresholds never share a
    key (``f"{t:g}"`` would print 0.1 and 0.1000001 both as "0.1").
    """
    return repr(float(tau))


def check_taus(taus, name: str = "taus") -> np.ndarray:
    """Return a 1-d float array of distinct thresholds, each in (0, 1].

    A string is read as comma-separated numbers. Repeated thresholds are refused (they would
    be the same test twice and collide as keys of a result).
    """
    if isinstance(taus, str):
        parts = [t.strip() for t in taus.split(",")]
        if any(not t for t in parts):
            raise ValueError(f"{name} must be comma-separated numbers in (0, 1] with no empty entries, got {taus!r}")
        try:
            taus = [float(t) for t in parts]
        except ValueError:
            raise ValueError(f"{name} must be comma-separated numbers in (0, 1], got {taus!r}") from None
    try:
        arr = np.atleast_1d(np.asarray(taus, dtype=float))
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numbers in (0, 1], got {taus!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d list of thresholds in (0, 1], got shape {arr.shape}")
    bad = ~((arr > 0) & (arr <= 1))
    if bad.any():
        raise ValueError(f"{name} must lie in (0, 1]; got {arr[bad].tolist()}")
    uniq, counts = np.unique(arr, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"{name} must not repeat a threshold; repeated: {[tau_key(t) for t in uniq[counts > 1]]}")
    return arr


def parse_list(value, name: str, allowed: Sequence[str] | None = None) -> tuple[str, ...]:
    """A non-empty tuple of distinct names from a comma-separated string (or a sequence of names).

    With ``allowed`` every name must be one of them. Empty entries and repeats are refused.
    """
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
        if any(not v for v in items):
            raise ValueError(f"{name} must be a comma-separated list with no empty entries, got {value!r}")
    else:
        try:
            items = [str(v) for v in value]
        except TypeError:
            raise TypeError(f"{name} must be a comma-separated string or a list of names, got {value!r}") from None
    if not items:
        raise ValueError(f"{name} must name at least one entry")
    seen, dup = set(), []
    for v in items:
        if v in seen and v not in dup:
            dup.append(v)
        seen.add(v)
    if dup:
        raise ValueError(f"{name} repeats {dup}; name each entry once")
    if allowed is not None:
        bad = [v for v in items if v not in allowed]
        if bad:
            raise ValueError(f"{name} must be a comma-separated subset of {', '.join(allowed)}; unknown: {bad}")
    return tuple(items)


def check_int(value, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int within [minimum, maximum] or raise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_prob(value, name: str, open_low: bool = False, open_high: bool = False) -> float:
    """Return ``value`` as a float probability in [0, 1] (ends optionally open)."""
    lo = "(" if open_low else "["
    hi = ")" if open_high else "]"
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number in {lo}0, 1{hi}, got {value!r}") from None
    lo_ok = v > 0 if open_low else v >= 0
    hi_ok = v < 1 if open_high else v <= 1
    if not (lo_ok and hi_ok) or math.isnan(v):
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}, got {value!r}")
    return v


def check_alpha(alpha, name: str = "alpha") -> float:
    """Return a significance level in (0, 1)."""
    return check_prob(alpha, name, open_low=True, open_high=True)


def as_rng(seed) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a seed, a Generator (returned as is) or None."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {int(seed)}")
        return np.random.default_rng(int(seed))
    if isinstance(seed, Iterable) and not isinstance(seed, (str, bytes)):
        vals = list(seed)
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in vals):
            raise ValueError(f"seed as a sequence must hold non-negative integers, got {vals!r}")
        return np.random.default_rng(vals)
    raise TypeError(f"seed must be an int, a numpy Generator or None, got {type(seed).__name__}")


def _first_index(mask: np.ndarray) -> tuple:
    return tuple(int(i) for i in np.unravel_index(int(np.flatnonzero(mask.ravel())[0]), mask.shape))


def as_bool_array(x, name: str, ndim: int | None = None) -> np.ndarray:
    """Convert 0/1 or boolean data to a bool array; reject NaN and values other than 0 and 1
    (the message names the first offending position)."""
    arr = np.asarray(x)
    if arr.dtype == object:
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold only 0/1 or True/False values") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got {arr.ndim} (shape {arr.shape})")
    if arr.dtype == bool:
        return arr
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be numeric or boolean, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating) and np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN (first at index {_first_index(np.isnan(arr))}); every verdict must be 0 or 1")
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        vals = np.unique(arr[bad])[:5].tolist()
        raise ValueError(
            f"{name} must be binary (0/1 or bool); found other values such as {vals} (first at index {_first_index(bad)})"
        )
    return arr.astype(bool)


_TRUE_TEXT = {"1", "1.0", "true"}
_FALSE_TEXT = {"0", "0.0", "false"}


def as_bool_columns(df, columns: Sequence, source: str, row_names=None) -> np.ndarray:
    """0/1 outcome columns of a table as bool [n_rows, len(columns)], checked cell by cell.

    Accepted cells: booleans, the numbers 0 and 1, and the texts "0", "1", "0.0", "1.0",
    "true", "false" (any case). Anything else -- a blank, "yes", 0.5, -1 -- raises
    ``ValueError`` naming ``source``, the column and the row (``row_names(i)`` when a callable
    is given, ``row_names[i]`` for a sequence, else "row i" counting data rows from 0).
    """
    import pandas as pd

    out = np.empty((len(df), len(columns)), dtype=bool)
    for j, col in enumerate(columns):
        s = df[col]
        vals = s.to_numpy()
        good = None
        if vals.dtype == bool:
            out[:, j] = vals
            continue
        if np.issubdtype(vals.dtype, np.number) and not np.issubdtype(vals.dtype, np.complexfloating):
            with np.errstate(invalid="ignore"):
                is1 = vals == 1
                good = is1 | (vals == 0)
            res = is1
        else:
            # text and mixed cells: compare their text form (True -> "true", 1 -> "1", 1.0 -> "1.0")
            low = pd.Series(vals, dtype=object).astype(str).str.strip().str.lower()
            res = low.isin(_TRUE_TEXT).to_numpy()
            good = res | low.isin(_FALSE_TEXT).to_numpy()
        if not good.all():
            i = int(np.flatnonzero(~good)[0])
            v = vals[i]
            if callable(row_names):
                where = row_names(i)
            else:
                where = row_names[i] if row_names is not None else f"row {i}"
            shown = "a blank (missing value)" if (v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA
                                                  or (isinstance(v, str) and not v.strip())) else repr(v.item() if hasattr(v, "item") else v)
            n_bad = int((~good).sum())
            raise ValueError(
                f"{source}: column {str(col)!r} {where} holds {shown}, not a 0/1 outcome"
                + (f" ({n_bad} such cells in the column)" if n_bad > 1 else "")
            )
        out[:, j] = res
    return out


def link_problem(path) -> str | None:
    """What is wrong with ``path`` when a symbolic link makes it unusable, as words to follow the
    path in a message: a link that loops (to itself, or a cycle, anywhere on the path) or a link
    whose target does not exist. None when the path resolves or is simply absent."""
    try:
        os.stat(path)
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "leads through a symbolic link that loops (a link to itself or a cycle of links)"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) and os.path.islink(path):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return f"is a symbolic link to {target!r}, which does not exist (a dangling link)"
        return None


def check_file(path, name: str) -> Path:
    """``path`` as a Path when it is an existing regular file; else ``ValueError`` saying what it is
    instead: "is a directory, expected a file", "does not exist", "is not a regular file"."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{name} {str(p)!r} is a directory, expected a file")
    if not p.exists():
        raise ValueError(f"{name} {str(p)!r} {link_problem(p) or 'does not exist'}")
    if not p.is_file():
        raise ValueError(f"{name} {str(p)!r} is not a regular file (a device, socket or pipe?), expected a file")
    return p


def check_dir(path, name: str, *, must_exist: bool = True) -> Path:
    """``path`` as a Path when it is a directory (or, with ``must_exist=False``, absent); a file
    raises "is a file, expected a directory"."""
    p = Path(path)
    problem = link_problem(p)
    if problem:
        raise ValueError(f"{name} {str(p)!r} {problem}")
    if p.exists() and not p.is_dir():
        raise ValueError(f"{name} {str(p)!r} is a file, expected a directory")
    if must_exist and not p.exists():
        raise ValueError(f"{name} {str(p)!r} does not exist")
    return p


def read_text(path, label: str | None = None) -> str:
    """The text of a UTF-8 file (a byte-order mark is dropped). A directory, a missing file and a
    file that is not UTF-8 raise ``ValueError`` naming the file (and the offending byte)."""
    label = label or str(path)
    p = _checked(path, label)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"{label} cannot be read: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{label} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}: {exc.reason}); "
                         "save it as UTF-8 (it may be latin-1 or cp1252)") from None


def _checked(path, label: str) -> Path:
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{label} is a directory, expected a file")
    if not p.exists():
        raise ValueError(f"{label} {link_problem(p) or 'does not exist'}")
    return p


def is_pickle_file(path) -> bool:
    """Whether a file's bytes are a pickle (protocol 2 and later start with 0x80 and the protocol
    number) or a zip archive holding one (torch's ``.pt``), whatever its name says."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return True
    if head[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(path) as z:
                return any(n.endswith((".pkl", ".pickle")) for n in z.namelist())
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            return False
    return False


def pickle_refusal(path, *, by_content: bool = False) -> str:
    """The message for a pickle-based file: why it is refused and how to convert it (by its name,
    or, with ``by_content``, for a pickle whose name claims another type such as ``.npz``)."""
    p = Path(path)
    torch_like = p.suffix.lower() in (".pt", ".pth")
    if by_content and not torch_like:
        try:
            with zipfile.ZipFile(p) as z:
                torch_like = any(n.endswith("data.pkl") for n in z.namelist())
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            pass
    if torch_like:
        how = (f"load it where it was written and save numbers: `import torch, numpy as np; x = torch.load({p.name!r}); "
               "np.save('x.npy', x.numpy())` (for a dict of tensors keyed 0..N-1, as LLMRouter's query_embeddings_longformer.pt: "
               "`np.save('x.npy', np.stack([x[i].numpy() for i in range(len(x))]))`); embeddings as .npy can be given "
               "as embeddings= (CLI --embeddings) to the llmrouter and embedllm readers")
    else:
        how = ("RouterBench's routerbench_0shot.pkl / 5shot.pkl and RouterEval's router-dataset .pkl files are read as "
               "they are, by a restricted unpickler that runs no pickle code (name them .pkl; --format routerbench or "
               "routereval); anything else: convert it in the environment that wrote it, a pandas DataFrame with "
               f"`pd.read_pickle({p.name!r}).to_parquet('x.parquet')`, other data as a long table, "
               "`Pool.from_long(df, prompt=..., policy=..., correct=...).to_long('x.parquet')`")
    what = (f"is a pickle (its bytes are Python's pickle format{', inside a zip archive' if torch_like and by_content else ''}, "
            f"whatever its name {p.suffix or '(none)'} says)" if by_content else f"is a pickle-based file ({p.suffix})")
    return f"{p} {what}; oraclegap never unpickles files (loading a pickle can run arbitrary code). {how}"


def _fmt_size(b: int) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{int(b)} bytes"


def _check_data_size(label: str, shape, dtype, available: int) -> None:
    """A header that claims more data than the file holds: the file is damaged (never try to read it)."""
    need = int(np.prod([int(s) for s in shape], dtype=object)) * int(dtype.itemsize)
    if need > available:
        raise ValueError(f"{label} is damaged: its header claims an array of shape {tuple(int(s) for s in shape)} "
                         f"and dtype {dtype} ({_fmt_size(need)} of data) but the file holds {_fmt_size(available)} after "
                         "the header; write it again")


def read_npy(path, label: str | None = None) -> np.ndarray:
    """Read a ``.npy`` file without unpickling; a damaged file (a bad header, or a header whose
    shape claims more data than the file holds), a pickle or an object array raises a
    ``ValueError`` that says which and names the file."""
    path = Path(path)
    label = label or str(path)
    if path.is_dir():
        raise ValueError(f"{label} is a directory, expected a .npy file")
    if is_pickle_file(path):
        raise ValueError(pickle_refusal(path, by_content=True))
    try:
        with open(path, "rb") as fh:
            try:
                version = np.lib.format.read_magic(fh)
                reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape, fortran, dtype = reader(fh)
            except Exception as exc:
                raise ValueError(f"{label} is damaged or not a .npy file (bad header: {exc})") from None
            if dtype.hasobject:
                raise ValueError(f"{label} holds an object array, which is never unpickled; save a numeric 0/1 array")
            _check_data_size(label, shape, dtype, path.stat().st_size - fh.tell())
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        if str(exc).startswith(label) or str(exc).startswith(str(path)):
            raise
        raise ValueError(f"{label} is damaged (cannot read its data: {exc})") from None
    except (OSError, EOFError) as exc:
        raise ValueError(f"{label} is damaged or unreadable ({type(exc).__name__}: {exc})") from None


def _check_npz_member(z, key: str, label: str) -> None:
    """Header of member ``key`` against its uncompressed size in the archive's directory."""
    zf = getattr(z, "zip", None)
    if zf is None:
        return
    name = key if key in zf.namelist() else f"{key}.npy"
    try:
        info = zf.getinfo(name)
        with zf.open(name) as fh:
            version = np.lib.format.read_magic(fh)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = reader(fh)
            offset = fh.tell()
    except (KeyError, ValueError, zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError):
        return  # the reader below names the problem
    if not dtype.hasobject:
        _check_data_size(f"{label}: member {key!r}", shape, dtype, int(info.file_size) - offset)


def read_npz(path, keys: Sequence[str] | None = None, label: str | None = None) -> dict:
    """Arrays of a ``.npz`` file (all, or ``keys``) read without unpickling. A truncated file, a
    bad CRC, a damaged compressed stream, a member whose header claims more data than it holds,
    a pickle (named ``.npz``) or an object array raises ``ValueError`` naming the file (and the
    member); a missing key raises ``ValueError`` listing the members."""
    path = Path(path)
    label = label or str(path)
    if path.is_dir():
        raise ValueError(f"{label} is a directory, expected a .npz file")
    if is_pickle_file(path):
        raise ValueError(pickle_refusal(path, by_content=True))
    try:
        with np.load(path, allow_pickle=False) as z:
            files = list(z.files)
            want = files if keys is None else list(keys)
            missing = [k for k in want if k not in files]
            if missing:
                raise KeyError(missing)
            out = {}
            for key in want:
                _check_npz_member(z, key, label)
                try:
                    out[key] = z[key]
                except ValueError as exc:
                    if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                        raise ValueError(f"{label}: array {key!r} is an object array, which is never unpickled") from None
                    raise ValueError(f"{label} is damaged: member {key!r} cannot be read ({exc})") from None
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError) as exc:
                    raise ValueError(f"{label} is damaged: member {key!r} fails to decompress or check ({exc})") from None
            return out
    except KeyError as exc:
        raise ValueError(f"{label} has no array {exc.args[0][0]!r}; it holds {files}") from None
    except ValueError as exc:
        if str(exc).startswith(label) or str(exc).startswith(str(path)):
            raise
        raise ValueError(f"{label} is damaged or not a .npz file ({exc})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise ValueError(f"{label} is damaged or not a .npz file ({type(exc).__name__}: {exc})") from None


def as_counts_array(counts, k: int, name: str = "counts", ndim: int = 2) -> np.ndarray:
    """Validate integer success counts in [0, k]; return an int64 array."""
    arr = np.asarray(counts)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got {arr.ndim} (shape {arr.shape})")
    if np.issubdtype(arr.dtype, np.floating):
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN; counts must be integers in [0, k]")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains infinite values; counts must be integers in [0, k={k}]")
        if not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must hold whole numbers")
    elif not np.issubdtype(arr.dtype, np.integer) and arr.dtype != bool:
        raise ValueError(f"{name} must be an integer array, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() > k):
        raise ValueError(f"{name} must lie in [0, k={k}]; found min {arr.min()} and max {arr.max()}")
    return arr


def check_cost(cost, n: int, M: int, name: str = "cost") -> np.ndarray:
    """Costs float[n, M] of M members on n prompts from per-prompt-and-member [n, M] or per-member
    [M] costs (a new array broadcast over the prompts): present, numeric, finite and
    non-negative."""
    if cost is None:
        raise ValueError(f"{name} is required: per-prompt-and-member [n, M] or per-member [M] costs")
    try:
        C = np.asarray(cost, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be numeric: per-prompt-and-member [n, M] or per-member [M] costs"
        ) from None
    if C.shape == (M,):
        C = np.broadcast_to(C, (n, M)).copy()
    if C.shape != (n, M):
        raise ValueError(f"{name} must have shape [n={n}, M={M}] or [M={M}], got {C.shape}")
    if np.isnan(C).any():
        raise ValueError(
            f"{name} has missing values (NaN); every member needs a finite, non-negative cost on "
            "every prompt"
        )
    if not np.isfinite(C).all():
        raise ValueError(f"{name} must be finite; found infinite values")
    if (C < 0).any():
        raise ValueError(
            f"{name} must be non-negative; found {int((C < 0).sum())} negative entries such as "
            f"{np.unique(C[C < 0])[:3].tolist()}"
        )
    return C


def check_margin_counts(model_counts, oracle_count, n) -> tuple[np.ndarray, int, int]:
    """Validate published margins: K per-model correct counts, the oracle's count and n items
    (integers with max(c) <= oracle <= min(n, sum(c))); return (counts int64, oracle, n)."""
    n = check_int(n, "n", minimum=1)
    c = np.asarray(model_counts)
    if c.ndim != 1:
        raise ValueError(f"model_counts must be a 1-d sequence of K per-model correct counts, got shape {c.shape}")
    if c.size == 0:
        raise ValueError("model_counts is empty (K=0); at least one model is needed")
    if c.dtype == bool or not (np.issubdtype(c.dtype, np.integer) or np.issubdtype(c.dtype, np.floating)):
        raise TypeError(f"model_counts must hold integers, got dtype {c.dtype}")
    if np.issubdtype(c.dtype, np.floating):
        if np.isnan(c).any() or not np.all(c == np.round(c)):
            raise ValueError(f"model_counts must hold whole numbers, got {c.tolist()}")
    c = c.astype(np.int64)
    if (c < 0).any():
        raise ValueError(f"model_counts must be >= 0, got {c.tolist()}")
    if (c > n).any():
        raise ValueError(f"model_counts must be <= n={n}, got {c.tolist()}")
    o = check_int(oracle_count, "oracle_count", minimum=0, maximum=n)
    if o < c.max():
        raise ValueError(
            f"oracle_count={o} is below the best model's count {int(c.max())}; the oracle solves every item any model solves"
        )
    if o > c.sum():
        raise ValueError(f"oracle_count={o} exceeds the sum of the model counts {int(c.sum())}; no arrangement is possible")
    return c, o, n


def literal_list(x):
    """A cell holding a Python list literal of strings (RouterBench's CSVs: ``"['George wants ...']"``,
    answers ``"['D']"``) as that list, parsed with :func:`ast.literal_eval` on strings only (never
    ``eval``); anything else -- including a literal that is not a list of strings -- is None."""
    if not isinstance(x, str):
        return None
    t = x.strip()
    if len(t) < 2 or t[0] not in "[(" or t[-1] not in "])" or len(t) > 10_000_000:
        return None
    try:
        v = ast.literal_eval(t)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(v, (list, tuple)) and all(isinstance(y, str) for y in v):
        return list(v)
    return None
