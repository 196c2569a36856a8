"""Shared pieces of the subcommands: reading POOL arguments, parsing option values, bounding
what a request may cost, and printing results.

Every verb gets the same behaviour for free by using these helpers:

* ``add_pool_argument(parser)`` / ``pool_from_args(args)`` -- the POOL argument (with
  ``--models``, ``--prompt-columns``, ``--id-column`` for wide CSV files, and ``--format``,
  ``--score-threshold``, ... for other router tools' files);
* argparse ``type=`` factories that name the option in their message: ``int_arg``,
  ``float_arg``, ``seed_arg``, ``bytes_arg``, ``limit_arg``;
* ``parse_taus(value)`` -> (taus, exact JSON keys), refusing repeats; ``parse_list(value, name,
  allowed)`` -> distinct names, refusing repeats and unknown entries;
* ``add_resource_arguments(parser)`` (``--max-proposals``, ``--max-memory``) and
  ``check_resources(args, what, steps=..., bytes_=...)`` / ``estimate_bytes(...)`` to refuse a
  request that would run for ever or exhaust memory, before any work;
* ``emit(payload, frame, as_json)`` -- JSON or an aligned table on stdout.

Errors are raised as ``ValueError``/``TypeError`` with a message naming the option; the CLI
(``oraclegap.cli.main``) prints them as one line on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import re

import numpy as np
import pandas as pd

from .._result import jsonable as to_jsonable
from .._validate import check_taus, tau_key
from .._validate import parse_list as _parse_list
from ..sources import FORMAT_NAMES, open_pool

__all__ = [
    "add_pool_argument",
    "pool_from_args",
    "parse_taus",
    "parse_list",
    "int_arg",
    "float_arg",
    "seed_arg",
    "bytes_arg",
    "limit_arg",
    "add_resource_arguments",
    "check_resources",
    "estimate_bytes",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_BYTES",
    "emit",
    "to_jsonable",
]

#: Default bounds of one CLI request: elementary steps (chain proposals, re-dealt cells,
#: resamples x items ...) and bytes of memory. ``--max-proposals`` / ``--max-memory`` override.
DEFAULT_MAX_STEPS = 10_000_000_000
DEFAULT_MAX_BYTES = 4 << 30

POOL_HELP = (
    "a pool directory, a .npy verdict array [n, M, k], FILE.npz:KEY (numeric array), "
    "a wide CSV (items x models, 0/1), a file another router tool wrote (LLMRouterBench, LLMRouter, "
    "RouterEval, EmbedLLM, RouterBench; see --format), an evaluation harness's output (lm-eval, inspect_ai, "
    "lighteval, OpenCompass), a long table (Pool.to_long), "
    "or a registry name (see `oraclegap.datasets.available()`)"
)


# ---------------------------------------------------------------------------- POOL
def add_pool_argument(parser, *, format_option: str = "--format") -> None:
    """The positional POOL plus the wide-CSV options ``--models``, ``--prompt-columns``, ``--id-column``.
    ``format_option`` names the option that chooses how POOL is read (``oraclegap export`` uses
    ``--input-format``, its ``--format`` being the output's); its value is ``args.format`` either way."""
    parser.add_argument("pool", metavar="POOL", help=POOL_HELP)
    g = parser.add_argument_group("wide CSV input")
    g.add_argument("--models", default=None, metavar="A,B,...",
                   help="CSV columns holding the models' 0/1 outcomes (default: all but the id and --prompt-columns)")
    g.add_argument("--prompt-columns", default=None, metavar="C,D,...",
                   help="CSV metadata columns (e.g. is_math): kept in the prompt table, never read as models")
    g.add_argument("--id-column", default=None, metavar="COL", help="CSV column with item ids (default: id, item_id, ...)")
    g.add_argument("--text-column", default=None, metavar="COL",
                   help="CSV column holding the prompt text (default: a column named text, else prompt, question or "
                        "query; Python list literals such as \"['...']\" are parsed into text)")
    f = parser.add_argument_group("other router tools' files (see oraclegap.sources.open_pool)")
    f.add_argument(format_option, dest="format", default=None, choices=FORMAT_NAMES, metavar="NAME",
                   help=f"how to read POOL: {', '.join(FORMAT_NAMES)} (default: detected from the file; an ambiguous file is refused)")
    f.add_argument("--score-threshold", type=float_arg("--score-threshold", 0.0, 1.0, open_low=True), default=None, metavar="T",
                   help="count a response as correct when its score >= T (without it, a score other than 0 or 1 is refused)")
    f.add_argument("--null-scores", default=None, choices=("error", "wrong"),
                   help="LLMRouterBench: a null score is an error (default) or counts as wrong")
    f.add_argument("--drop-incomplete", action="store_true",
                   help="keep only the prompts every model answered (default: a missing answer is an error)")
    f.add_argument("--dedupe", action="store_true",
                   help="long tables and records without draw labels: keep one of each row that appears r >= 2 times "
                        "in every (prompt, policy) cell (default: such copies are an error, never counted as draws)")
    f.add_argument("--split-label", default=None, metavar="NAME",
                   help="LLMRouter/EmbedLLM/RouterBench: split label for every prompt (default: from the file name)")
    f.add_argument("--llm-data", default=None, metavar="FILE", help="LLMRouter: default_llm.json with model prices (gives costs)")
    f.add_argument("--embeddings", default=None, metavar="FILE.npy",
                   help="LLMRouter/EmbedLLM: prompt embeddings [rows, d], row r = embedding_id / prompt_id r")
    f.add_argument("--model-names", default=None, metavar="A,B,...",
                   help="RouterEval: the models' names in column order, from this argument (default: from the file, its "
                        "'model' list or model_names array, else m0, m1, ...)")
    f.add_argument("--leaf", default=None, metavar="KEYS",
                   help="RouterEval .pkl: which router dataset of a nested file, keys joined by / (e.g. easy/3/0)")
    f.add_argument("--lmeval-filter", default=None, metavar="NAME",
                   help="lm-eval: the filter pipeline to read when a task has several (e.g. strict-match)")
    f.add_argument("--inspect-scorer", default=None, metavar="NAME",
                   help="inspect_ai: the scorer to read when the samples have several")


#: The importer options :func:`add_pool_argument` defines, as attribute names of the parsed arguments.
POOL_OPTIONS = ("format", "score_threshold", "null_scores", "drop_incomplete", "dedupe", "split_label", "llm_data",
                "embeddings", "model_names", "leaf", "lmeval_filter", "inspect_scorer")


def pool_from_args(args):
    """The Pool named by ``args.pool`` with the options of :func:`add_pool_argument`: the one way
    every verb turns (POOL, options) into a Pool, so that ``--models``, ``--prompt-columns``,
    ``--format``, ``--embeddings``, ``--score-threshold``, ``--drop-incomplete`` ... mean the same
    for every verb (an option that does not apply to the file is refused, never ignored)."""
    opts = {name: getattr(args, name, None) for name in ("models", "prompt_columns", "id_column", "text_column", *POOL_OPTIONS)}
    opts["split"] = opts.pop("split_label")
    if opts.get("model_names") is not None:
        opts["model_names"] = list(parse_list(opts["model_names"], "--model-names"))
    pool = open_pool(args.pool, **{k: v for k, v in opts.items() if v is not None and v is not False})
    dropped = (getattr(pool, "meta", None) or {}).get("duplicates_dropped")
    if isinstance(dropped, dict):  # --dedupe: what it did, on stderr (stdout stays the result)
        import sys

        if dropped.get("rows"):
            print(f"note: --dedupe dropped {dropped['rows']} duplicated rows of {args.pool} (each appeared "
                  f"{dropped['copies']} times in its cell): k = {pool.k} instead of {dropped['k_before']}", file=sys.stderr)
        else:
            print(f"note: --dedupe found no duplicated rows in {args.pool}", file=sys.stderr)
    return pool


# ---------------------------------------------------------------------------- option values
def parse_taus(value, name: str = "--taus") -> tuple[np.ndarray, list[str]]:
    """Thresholds from ``"0.05,0.1"``: (float array, exact JSON keys ``repr(float(tau))``).

    Refuses empty entries, non-numbers, values outside (0, 1] and repeated thresholds.
    """
    taus = check_taus(value, name)
    return taus, [tau_key(t) for t in taus]


def parse_list(value, name: str, allowed=None) -> tuple[str, ...]:
    """Distinct names from ``"a,b"``; repeats, empty entries and (with ``allowed``) unknown names are refused."""
    return _parse_list(value, name, allowed)


_INT_TEXT = re.compile(r"^[+-]?(\d[\d_]*)(\.0*)?([eE][+]?\d+)?$")


def _to_int(text: str, name: str) -> int:
    t = str(text).strip()
    if not _INT_TEXT.match(t):
        raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}")
    try:
        v = float(t) if any(c in t for c in ".eE") else int(t.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}") from None
    if isinstance(v, float):
        if not math.isfinite(v) or not v.is_integer():
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}")
        v = int(v)
    return v


def int_arg(name: str, minimum: int | None = None, maximum: int | None = None):
    """An argparse ``type=`` for whole numbers ("2000", "2_000", "2e3") within [minimum, maximum]."""

    def parse(text):
        v = _to_int(text, name)
        if minimum is not None and v < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be >= {minimum}, got {text!r}")
        if maximum is not None and v > maximum:
            raise argparse.ArgumentTypeError(f"{name} must be <= {maximum}, got {text!r}")
        return v

    parse.__name__ = "int"
    return parse


def float_arg(name: str, low: float | None = None, high: float | None = None, *, open_low: bool = False,
              open_high: bool = False):
    """An argparse ``type=`` for finite numbers within the given (optionally open) bounds."""

    def parse(text):
        try:
            v = float(str(text).strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number, got {text!r}")
        lo_ok = low is None or (v > low if open_low else v >= low)
        hi_ok = high is None or (v < high if open_high else v <= high)
        if not (lo_ok and hi_ok):
            lo = "-inf" if low is None else f"{low:g}"
            hi = "inf" if high is None else f"{high:g}"
            raise argparse.ArgumentTypeError(
                f"{name} must lie in {'(' if open_low or low is None else '['}{lo}, {hi}{')' if open_high or high is None else ']'}, got {text!r}"
            )
        return v

    parse.__name__ = "float"
    return parse


def seed_arg(name: str = "--seed"):
    """An argparse ``type=`` for random seeds: whole numbers >= 0."""
    return int_arg(name, minimum=0)


_BYTES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?[bB])?\s*$")


def bytes_arg(name: str = "--max-memory"):
    """An argparse ``type=`` for memory sizes: "4G", "512M", "2.5GiB", "1000000" (bytes); "none" for no bound."""

    def parse(text):
        t = str(text).strip()
        if t.lower() in ("none", "inf", "unlimited"):
            return None
        m = _BYTES.match(t)
        if not m:
            raise argparse.ArgumentTypeError(f"{name} must be a size such as 4G, 512M or a number of bytes (or 'none'), got {text!r}")
        scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
        v = int(float(m.group(1)) * scale)
        if v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be positive, got {text!r}")
        return v

    parse.__name__ = "size"
    return parse


def limit_arg(name: str):
    """An argparse ``type=`` for a work bound: a whole number >= 1 ("1e10"), or "none" for no bound."""
    inner = int_arg(name, minimum=1)

    def parse(text):
        if str(text).strip().lower() in ("none", "inf", "unlimited"):
            return None
        return inner(text)

    parse.__name__ = "limit"
    return parse


# ---------------------------------------------------------------------------- resource bounds
def add_resource_arguments(parser) -> None:
    """``--max-proposals`` and ``--max-memory``: the bounds :func:`check_resources` enforces."""
    g = parser.add_argument_group("resource bounds (a request above them is refused before any work)")
    g.add_argument("--max-proposals", type=limit_arg("--max-proposals"), default=DEFAULT_MAX_STEPS, metavar="N",
                   help=f"most elementary steps (chain proposals, re-dealt cells, ...) one request may take "
                        f"(default {DEFAULT_MAX_STEPS:.0e}; 'none' for no bound)")
    g.add_argument("--max-memory", type=bytes_arg("--max-memory"), default=DEFAULT_MAX_BYTES, metavar="SIZE",
                   help="most memory for results one request may hold, e.g. 4G (default 4G; 'none' for no bound)")


def estimate_bytes(*shapes, itemsize: int = 8) -> int:
    """Bytes of arrays of the given shapes (``itemsize`` bytes per element)."""
    total = 0
    for shape in shapes:
        total += int(np.prod([int(s) for s in np.atleast_1d(shape)], dtype=object)) * itemsize
    return int(total)


def check_resources(args, what: str, *, steps: int = 0, bytes_: int = 0, hint: str = "") -> None:
    """Refuse (``ValueError``) a request whose estimated ``steps`` or memory ``bytes_`` exceed the
    bounds in ``args`` (``--max-proposals``, ``--max-memory``; the defaults when absent)."""
    max_steps = getattr(args, "max_proposals", DEFAULT_MAX_STEPS)
    max_bytes = getattr(args, "max_memory", DEFAULT_MAX_BYTES)
    tail = f"; {hint}" if hint else ""
    if max_steps is not None and steps > max_steps:
        raise ValueError(f"{what} needs about {steps:.3g} steps, above --max-proposals {max_steps:.3g}{tail} "
                         "(or raise --max-proposals)")
    if max_bytes is not None and bytes_ > max_bytes:
        raise ValueError(f"{what} needs about {_fmt_bytes(bytes_)} of memory, above --max-memory {_fmt_bytes(max_bytes)}{tail} "
                         "(or raise --max-memory)")


def _fmt_bytes(b: float) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{int(b)} B"


# ---------------------------------------------------------------------------- output
def emit(payload: dict, frame: pd.DataFrame | None, as_json: bool) -> None:
    """Print ``payload`` as JSON, or ``frame`` as an aligned text table."""
    if as_json:
        print(json.dumps(to_jsonable(payload), indent=2, allow_nan=False))
    elif frame is not None:
        with pd.option_context("display.width", 200, "display.max_columns", 50, "display.float_format", "{:.4f}".format):
            print(frame.to_string(index=False))
    else:
        print(json.dumps(to_jsonable(payload), indent=2, allow_nan=False))
