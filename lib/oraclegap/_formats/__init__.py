"""Parsers of the files other router tools write (private: read them through
:mod:`oraclegap.sources`).

One module per layout, each with a reader returning a :class:`~oraclegap.pool.Pool`:

* ``llmrouterbench`` (:mod:`.llmrouterbench`) -- LLMRouterBench / OpenRouterBench result files,
  a results folder of them, or the flat records its loader exports.
* ``llmrouter`` (:mod:`.llmrouter`) -- ulab-uiuc/LLMRouter routing data: one JSON line per
  (query, model).
* ``routereval`` (:mod:`.routereval`) -- RouterEval's router datasets: an ``.npz`` of
  ``<split>_score`` matrices with ``<split>_embed`` embeddings, or the published ``.pkl``.
* ``embedllm`` (:mod:`.embedllm`) -- EmbedLLM's long CSV, one row per (model, question).
* ``routerbench`` (:mod:`.routerbench`) -- RouterBench's wide table, one correctness column per
  model with ``<model>|total_cost``.
* ``long`` (:mod:`.long`, its schema in :mod:`.long_schema`, the columnar parquet path in
  :mod:`.long_arrow`) -- oraclegap's own exchange format written by :meth:`Pool.to_long`.

The pieces they share: the score rule, numbers read with located errors and split names
(:mod:`._common`), JSON input (:mod:`.jsonio`), tables (:mod:`.tables`) and the assembly of rows
into a pool (:mod:`.assemble`).

Scores. Every format's score field must be a finite number in [0, 1]: 0 and 1 are read as wrong
and right. Any other value is refused, naming the file, the line or row and the field, unless a
``score_threshold`` t in (0, 1] is given: then a response counts as correct when its score is
>= t (and the number of non-binary scores is recorded in ``meta``). Values are never cast
silently. A cell of a long format with several rows holds repeated samples (k > 1) in the
order of the file; every (prompt, policy) cell must hold the same number.

This package sits just below :mod:`oraclegap.datasets` (whose registry loaders share its
RouterBench and token-price parsers) and imports only the ground floor.
"""

from __future__ import annotations

from .._validate import PICKLE_SUFFIXES, is_pickle_file, pickle_refusal
from .._validate import literal_list as literal_list
from ._common import SAFE_PICKLE_SUFFIXES as SAFE_PICKLE_SUFFIXES
from ._common import SCORE_RULE, check_threshold, object_array_hint, split_from_name, token_cost
from ._common import scores_to_verdicts as scores_to_verdicts
from .embedllm import EMBEDLLM_COLUMNS as EMBEDLLM_COLUMNS
from .embedllm import read_embedllm
from .jsonio import TOO_DEEP as TOO_DEEP
from .jsonio import _load_json as _load_json
from .jsonio import iter_json_lines as iter_json_lines
from .jsonio import json_records
from .llmrouter import is_llmrouter_record as is_llmrouter_record
from .llmrouter import llm_prices as llm_prices
from .llmrouter import read_llmrouter
from .llmrouterbench import is_llmrouterbench_record as is_llmrouterbench_record
from .llmrouterbench import is_llmrouterbench_result as is_llmrouterbench_result
from .llmrouterbench import read_llmrouterbench
from .long import read_long
from .long_schema import LONG_ALIASES as LONG_ALIASES
from .long_schema import LONG_FORMAT as LONG_FORMAT
from .long_schema import LONG_REQUIRED as LONG_REQUIRED
from .long_schema import LONG_SCHEMA_FILE as LONG_SCHEMA_FILE
from .long_schema import LONG_VERSION as LONG_VERSION
from .long_schema import long_alias_hint as long_alias_hint
from .long_schema import long_schema as long_schema
from .long_schema import validate_long_table as validate_long_table
from .routerbench import read_routerbench, routerbench_parts
from .routereval import _leaves as _leaves
from .routereval import read_routereval
from .routereval import routereval_members as routereval_members
from .routereval import routereval_pickle as routereval_pickle
from .tables import _read_table as _read_table
from .tables import csv_preamble as csv_preamble
from .tables import literal_cells as literal_cells
from .tables import table_columns as table_columns

# Besides __all__, the rest of the library reads some names here as ``oraclegap._formats.X``
# (format detection in :mod:`oraclegap.sources`, the export check in :mod:`oraclegap.exchange`,
# the registry in :mod:`oraclegap.datasets`, the harness readers in :mod:`oraclegap._harness`):
# they are re-exported by name (``import X as X``).
__all__ = [
    "FORMATS",
    "SCORE_RULE",
    "check_threshold",
    "token_cost",
    "routerbench_parts",
    "read_llmrouterbench",
    "read_llmrouter",
    "read_routereval",
    "read_embedllm",
    "read_routerbench",
    "read_long",
    "PICKLE_SUFFIXES",
    "pickle_refusal",
    "is_pickle_file",
    "object_array_hint",
    "split_from_name",
    "json_records",
]

#: The layouts read here: name -> one line describing it.
FORMATS = {
    "llmrouterbench": (
        "LLMRouterBench result files (a file, a results folder, "
        "or its flat records as JSON / JSON lines)"
    ),
    "llmrouter": "LLMRouter routing data: JSON lines, one per (query, model), with 'performance'",
    "routereval": (
        "RouterEval router dataset (.npz, or the published .pkl read without running pickle code): "
        "<split>_score correctness matrices with <split>_embed embeddings"
    ),
    "embedllm": (
        "EmbedLLM long CSV/parquet: model_id, prompt_id, label (+ model_name, prompt, category)"
    ),
    "routerbench": (
        "RouterBench wide CSV/parquet/.pkl (routerbench_0shot.pkl read without running pickle "
        "code): one correctness column per model plus '<model>|total_cost'"
    ),
    "long": (
        "oraclegap long table (Pool.to_long): prompt_id, policy, draw, correct, ... "
        "as CSV or parquet"
    ),
}
