"""Named pools: simulations by seed, counts the papers publish, and real LLM outcome releases.

``load(name) -> Pool`` builds any registered pool; ``available()`` lists every entry with its
provenance, license and whether its files are present; ``registry()`` and ``describe(name)``
give the static facts. Four kinds of entries:

* ``simulated`` -- generated on the fly (``sim-exchangeable``, ``sim-diffuse``); a seed may be
  appended as ``name@SEED`` (default 0) or passed as ``load(name, seed=...)``.
* ``paper`` -- pools built from integer counts a paper publishes (files in ``data/paper/``,
  cited in ``data/paper/002_sources.json``). Only the margins (each model's correct count and
  the oracle count) are published, so the item-level joint is one random arrangement
  consistent with them (:func:`outcomes_from_margins`); every statistic that depends only on
  the margins -- all of :mod:`oraclegap.stats.certify`'s gap intervals -- is exact on it, anything
  else (splits, routers) is illustrative. ``paper_table(stem)`` reads the transcribed tables.
* ``lab`` -- pools the project's policy lab trained and sampled (``data/lab/``, rebuilt by
  ``make lab``): ``lab-cross`` (both tasks, every policy) and named sub-pools such as
  ``lab-seed-primary`` (the seed pool on primary test prompts; every lab pool has independent
  per-policy draws except ``lab-seed-primary-aligned``, the same seed pool seed-aligned), read through
  :func:`oraclegap.lab.load_pool` (per-response confidences and token counts in ``meta``).
* ``external`` -- released correctness data read in place from ``$OG_EXTERNAL_DIR`` (else
  ``data/external/``, which ``python -m oraclegap.datasets fetch`` fills where the network
  allows). Nothing is copied into the project. npz files are read with
  ``allow_pickle=False`` and only their numeric arrays are used.

Names use hyphens; underscores are accepted as aliases (``chen2026_math500``). Errors: an
unknown name raises ``KeyError`` listing the known names; a known external entry
whose files are missing raises ``FileNotFoundError`` naming the missing path and
``OG_EXTERNAL_DIR``.

The registry and its verbs live in :mod:`.registry`; each kind of entry in its own module
(:mod:`.simulated`, :mod:`.lab_pools`, :mod:`.paper_counts`, and one module per external source:
:mod:`.chen2026`, :mod:`.routerdc`, :mod:`.routerbench`, :mod:`.stacked`, :mod:`.mmlu_pro`,
:mod:`.llmrouter`, :mod:`.routerbench_mini`), imported here in the registry's order; downloads
in :mod:`.download` and the command line in :mod:`.cli` (``python -m oraclegap.datasets``).
"""

from __future__ import annotations

# isort: off
# The entry modules register their entries when imported, in this order: the registry's order.
from . import simulated, lab_pools, paper_counts  # noqa: F401
from . import chen2026, routerdc, routerbench, stacked  # noqa: F401
from . import mmlu_pro, llmrouter, routerbench_mini  # noqa: F401
# isort: on
from .chen2026 import CHEN as CHEN
from .chen2026 import CHEN_PROV as CHEN_PROV
from .chen2026 import chen_release
from .cli import main
from .download import derive_mmlu_pro, fetch
from .lab_pools import LAB_PROV as LAB_PROV
from .lab_pools import lab_slice
from .llmrouter import ULAB as ULAB
from .llmrouter import dcrouter_prices
from .mmlu_pro import MMLUPRO as MMLUPRO
from .mmlu_pro import MMLUPRO_COMMIT as MMLUPRO_COMMIT
from .mmlu_pro import MMLUPRO_MODELS as MMLUPRO_MODELS
from .paper_counts import CITE_002 as CITE_002
from .paper_counts import outcomes_from_margins, paper_table
from .registry import Entry, available, describe, external_dir, load, load_optional, paper_dir, registry
from .registry import _entry as _entry
from .registry import lab_dir as lab_dir
from .registry import title as title
from .routerbench import RB_PROV as RB_PROV
from .routerbench_mini import RBMINI as RBMINI
from .routerdc import RDC as RDC
from .routerdc import RDC_LICENSE as RDC_LICENSE
from .routerdc import RDC_PROV as RDC_PROV

# Besides __all__, the chapters and tests read the sources' folder names (``CHEN``, ``RDC``,
# ``ULAB``, ``MMLUPRO``, ``RBMINI``), ``lab_dir`` and ``title`` here: re-exported by name.
__all__ = [
    "Entry",
    "registry",
    "describe",
    "available",
    "load",
    "load_optional",
    "external_dir",
    "paper_dir",
    "paper_table",
    "outcomes_from_margins",
    "lab_slice",
    "chen_release",
    "dcrouter_prices",
    "fetch",
    "derive_mmlu_pro",
    "main",
]
