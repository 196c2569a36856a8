"""Evaluation-harness outputs as pools (private: read them through :func:`oraclegap.sources.open_pool`).

One reader per harness, each returning a :class:`~oraclegap.pool.Pool` with k draws per prompt and model, the
prompt text, the task as the ``dataset`` column, the harness's seeds and settings in ``meta`` (``meta["models"]``,
``meta["tasks"]``), what it assumed (``meta["assumed"]``) and what it left out (``meta["dropped"]``):

* ``lm-eval`` -- EleutherAI lm-evaluation-harness ``--log_samples`` output (:mod:`.lmeval`);
* ``inspect`` -- UK AISI inspect_ai logs, ``.json`` or ``.eval`` (:mod:`.inspect_log`);
* ``lighteval`` -- Hugging Face lighteval ``--save-details`` parquet files (:mod:`.lighteval`);
* ``opencompass`` -- OpenCompass ``--dump-eval-details`` prediction/result files (:mod:`.opencompass`);
* ``every-eval-ever`` -- the cross-harness instance-level records of evaleval/every_eval_ever (:mod:`.eee`), which
  :func:`oraclegap.exchange.export_pool` also writes.

:func:`detect` says which of them a path is (or None); :func:`read` reads it. :func:`fixture` loads one of the
committed real-run fixtures in ``data/harness/`` as a Pool.
"""

from __future__ import annotations

from pathlib import Path

from .. import _store
from ..pool import Pool
from . import eee, inspect_log, lighteval, lmeval, opencompass

__all__ = ["FORMATS", "FORMAT_OPTIONS", "SUFFIXES", "detect", "read", "fixture", "FIXTURES", "fixture_dir"]

#: The harness layouts read here: name -> one line describing it.
FORMATS = {
    "lm-eval": "lm-evaluation-harness --log_samples output: an output folder, a model's folder or a "
               "samples_<task>_<time>.jsonl (model from the results_<time>.json beside it)",
    "inspect": "inspect_ai logs: a .json log (inspect log convert --to json), a .eval log (read with inspect_ai "
               "when installed) or a folder of logs; epochs are the draws",
    "lighteval": "lighteval --save-details parquet files (details_<task>|<fewshot>_<time>.parquet) or their folder: "
                 "the n responses per document re-graded with lighteval's default exact match, checked against "
                 "pass@k/avg@n",
    "opencompass": "OpenCompass --dump-eval-details results (results/<model>/<dataset>.json with per-copy 'correct' "
                   "lists), a results folder, or one run's folder: n copies per example",
    "every-eval-ever": "Every Eval Ever instance-level records (.jsonl, schema instance_level_eval): one line per "
                       "sample and model; the draw in metadata.draw (oraclegap export writes it), else file order",
}
#: The options each harness reader takes.
FORMAT_OPTIONS = {
    "lm-eval": ("drop_incomplete", "lmeval_filter"),
    "inspect": ("drop_incomplete", "score_threshold", "inspect_scorer"),
    "lighteval": ("drop_incomplete",),
    "opencompass": ("drop_incomplete",),
    "every-eval-ever": ("drop_incomplete",),
}
#: What each reads ("dir" = a directory).
SUFFIXES = {
    "lm-eval": ("dir", ".jsonl"),
    "inspect": ("dir", ".json", ".eval"),
    "lighteval": ("dir", ".parquet"),
    "opencompass": ("dir", ".json"),
    "every-eval-ever": (".jsonl", ".json"),
}
#: Folder layouts :func:`detect` looks for: (format, reader module, what such a folder is).
_FOLDERS = (("lm-eval", lmeval, "a folder of lm-eval samples files"),
            ("inspect", inspect_log, "a folder of inspect_ai logs"),
            ("lighteval", lighteval, "a folder of lighteval details files"),
            ("opencompass", opencompass, "an OpenCompass output folder"))
_READERS = {
    "lm-eval": lmeval.read_lmeval,
    "inspect": inspect_log.read_inspect,
    "lighteval": lighteval.read_lighteval,
    "opencompass": opencompass.read_opencompass,
    "every-eval-ever": eee.read_eee,
}


def detect(path) -> tuple[str, str] | None:
    """``(format, how it was recognised)`` when ``path`` is a harness output, else None (never raises for a
    file that is simply something else)."""
    path = Path(path)
    if path.is_dir():
        if (path / "manifest.json").exists() or _store.is_store(path):
            return None
        hits = []
        for name, module, words in _FOLDERS:
            s = module.folder_sample(path)
            if s:
                hits.append((name, f"{words} (e.g. {s})"))
        if len(hits) > 1:
            names = ", ".join(f"{f} ({h})" for f, h in hits)
            raise ValueError(f"POOL {str(path)!r} holds the outputs of several harnesses: {names}; point at one "
                             "harness's folder or pass format= (CLI --format)")
        return hits[0] if hits else None
    if not path.is_file():
        return None
    suffix = path.suffix.lower()
    if suffix == ".jsonl" and lmeval.is_samples_file(path):
        return "lm-eval", "an lm-eval samples file (doc_id, resps, filtered_resps)"
    if suffix in (".jsonl", ".json") and eee.is_file(path):
        return "every-eval-ever", "Every Eval Ever instance-level records (schema_version instance_level_eval)"
    if suffix == ".eval" and inspect_log.is_eval_file(path):
        return "inspect", "an inspect_ai .eval log"
    if suffix == ".json":
        if inspect_log.is_json_log(path):
            return "inspect", "an inspect_ai JSON log (eval, samples)"
        if opencompass.is_details_file(path):
            return "opencompass", "an OpenCompass results file with per-copy details"
        if lmeval.is_results_file(path):
            raise ValueError(f"POOL {str(path)!r} is an lm-eval results file, which holds only aggregate scores; "
                             "point at its folder or at the samples_<task>_<time>.jsonl beside it (written by "
                             "--log_samples)")
    if suffix == ".parquet" and lighteval.is_details_file(path):
        return "lighteval", "a lighteval details file (doc, model_response, metric)"
    return None


def read(fmt: str, path, **options) -> Pool:
    """Read ``path`` as harness format ``fmt`` (one of :data:`FORMATS`) with that reader's options."""
    if fmt not in _READERS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    extra = sorted(set(options) - set(FORMAT_OPTIONS[fmt]))
    if extra:
        raise ValueError(f"option(s) {extra} do not apply to {fmt}; it takes {', '.join(FORMAT_OPTIONS[fmt])}")
    return _READERS[fmt](path, **options)


# ---------------------------------------------------------------------------- the committed fixtures
_REPO = Path(__file__).resolve().parents[3]
#: Committed real-run fixtures (``data/harness/``): name -> (format, path below data/harness).
FIXTURES = {
    "lm-eval-default-seed": ("lm-eval", "lmeval/default-seed"),
    "lm-eval-per-model-seed": ("lm-eval", "lmeval/per-model-seed"),
    "lm-eval-per-draw": ("lm-eval", "lmeval-per-draw/default-seed"),
    "inspect": ("inspect", "inspect"),
    "lighteval": ("lighteval", "lighteval"),
    "opencompass": ("opencompass", "opencompass"),
}


def fixture_dir() -> Path:
    """``data/harness/``: the committed harness outputs and the script that made them."""
    return _REPO / "data" / "harness"


def fixture(name: str) -> Pool:
    """One committed harness fixture (a key of :data:`FIXTURES`) read by its importer, as a Pool."""
    if name not in FIXTURES:
        raise ValueError(f"fixture must be one of {', '.join(FIXTURES)}; got {name!r}")
    fmt, rel = FIXTURES[name]
    path = fixture_dir() / rel
    if not path.exists():
        raise ValueError(f"harness fixture {name!r} is missing ({path}); it is committed with the project")
    return read(fmt, path)
