"""The ``Pool``: stored correctness outcomes of several policies on the same prompts.

A pool holds ``verdicts[i, m, j]``: whether the j-th sampled response of policy m to prompt i
was judged correct (n prompts x M policies x k draws). Everything else in the library reads
pools or plain arrays derived from them (success counts ``c[i, m] = sum_j verdicts[i, m, j]``).

Alongside the verdicts a pool carries a prompt table (``id``, ``text``, ``dataset``, ``split``
and any feature columns), a policy table (``name``, ``base``, ``dataset``, ``recipe``,
``seed``, ``size``, ``cost`` and any other columns), optional per-response ``answers``,
per-response numeric arrays ``per_response`` (name -> array [n, M, k], e.g. ``confidence``:
the mean token log-probability of each response, ``completion_tokens``, ``seed``), per-prompt
``embeddings`` and per-prompt-and-policy ``cost``, and ``alignment``: how the draw index lines
up across policies. Every per-response, per-prompt and per-cell array is cut with the pool by
:meth:`Pool.select`, :meth:`Pool.split` and :meth:`Pool.draws`, so it always lines up with the
verdicts (never keep such data in ``meta``, which is copied as it is).

* ``"seed-aligned"`` -- draw j of every policy used the same sampling seed (paper 001's
  protocol); the seed-aligned single-draw oracle estimator applies.
* ``"independent"`` -- draws are independent across policies (or were arranged at random,
  as ``from_counts`` does); only the independence forms apply.
* ``"unknown"`` -- nothing is claimed.

On disk a pool is a directory of numeric arrays, parquet tables and a checksummed manifest,
saved atomically (:meth:`Pool.save`, :meth:`Pool.load`; the format and its crash safety:
:mod:`oraclegap.pool._storage`); :meth:`Pool.to_long` writes the portable long table.

The package: ``_fields`` (the threshold ``need``, table and array checks), ``_pool`` (the class,
its views and sub-pools), ``_build`` (constructors), ``_storage`` (the directory format),
``_long`` (the long table), ``_checks`` (``check_pool``, the type check of a pool argument).
"""

from ._checks import check_pool
from ._fields import ALIGNMENTS, POLICY_COLUMNS, PROMPT_COLUMNS, need
from ._pool import Pool
from ._storage import FORMAT_NAME, FORMAT_VERSION, POOL_FILES

__all__ = ["Pool", "check_pool", "need", "ALIGNMENTS", "FORMAT_NAME", "FORMAT_VERSION", "POOL_FILES", "PROMPT_COLUMNS", "POLICY_COLUMNS"]
