"""RouterEval's router datasets as a pool: an ``.npz`` of per-split correctness matrices and
embeddings, or the published ``.pkl`` read without running pickle code.

A file holds ``<split>_score`` correctness matrices [n_split, M] with ``<split>_embed`` prompt
embeddings [n_split, d] (splits ``train``, ``val``, ``test``; optional ``<split>_prompt`` texts,
``<split>_tokens``, ``<split>_time``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._safepickle import safe_load
from .._validate import read_npz
from ..pool import Pool
from ._common import SAFE_PICKLE_SUFFIXES, check_threshold, object_array_hint, scores_to_verdicts

_SPLIT_ORDER = ("train", "val", "valid", "dev", "test")


def routereval_members(names) -> list[str]:
    """The splits of a RouterEval-style npz (members named ``<split>_score``), in train/val/test order."""
    splits = [n[: -len("_score")] for n in names if n.endswith("_score") and len(n) > len("_score")]
    return sorted(splits, key=lambda s: (_SPLIT_ORDER.index(s) if s in _SPLIT_ORDER else len(_SPLIT_ORDER), s))


def _npz_member(path: Path, name: str) -> np.ndarray:
    try:
        return read_npz(path, [name])[name]
    except ValueError as exc:
        hint = object_array_hint(f"array {name!r}") if "object array" in str(exc) else ""
        raise ValueError(f"{exc}{hint}") from None


def _leaves(obj, prefix=(), depth=0, out=None):
    """(path, leaf) for every RouterEval leaf ``{'data': {...}, 'model': [...]}`` inside nested dicts/lists."""
    out = [] if out is None else out
    if depth > 8:
        return out
    if isinstance(obj, dict) and "data" in obj and isinstance(obj["data"], dict):
        out.append(("/".join(map(str, prefix)), obj))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _leaves(v, (*prefix, k), depth + 1, out)
    elif isinstance(obj, (list, tuple)):
        for k, v in enumerate(obj):
            _leaves(v, (*prefix, k), depth + 1, out)
    return out


def _as_member(v, name: str, label: str) -> np.ndarray:
    """A pickled value as an array: numbers stay numbers, a list of strings becomes a text array."""
    if isinstance(v, np.ndarray) and v.dtype != object:
        return v
    if isinstance(v, pd.DataFrame):
        return v.to_numpy()
    if isinstance(v, (list, tuple, np.ndarray, pd.Series)):
        vals = list(v)
        if vals and all(isinstance(x, str) for x in vals):
            return np.asarray(vals, dtype=str)
        try:
            arr = np.asarray(vals, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{label}: entry {name!r} holds neither numbers nor texts (e.g. {vals[0]!r:.60})") from None
        return arr
    raise ValueError(f"{label}: entry {name!r} is a {type(v).__name__}, not an array or a list")


def routereval_pickle(path, leaf=None, *, obj=None) -> tuple[dict, list | None, dict]:
    """The arrays of one RouterEval router dataset in a ``.pkl`` read by the restricted unpickler
    (:mod:`oraclegap._safepickle`): ``(members, model names or None, meta)``. The published file
    nests ``router_dataset[difficulty][n][config]`` leaves ``{'data': {train_score, ...},
    'model': [names], 'prompt': {train_prompt, ...}}``; a fork's file is one such leaf. ``leaf``
    (``"easy/3/0"``, keys joined by ``/``) picks one when the file holds several."""
    path = Path(path)
    obj = safe_load(path) if obj is None else obj
    leaves = _leaves(obj)
    if not leaves:
        kind = f"a dict with keys {sorted(map(str, obj))[:8]}" if isinstance(obj, dict) else f"a {type(obj).__name__}"
        raise ValueError(f"{path} holds {kind}, not a RouterEval router dataset (a dict with 'data' and 'model', possibly "
                         "nested as router_dataset[difficulty][n][config])")
    paths = [lp for lp, _ in leaves]
    if leaf is None and len(leaves) > 1:
        raise ValueError(f"{path} holds {len(leaves)} RouterEval router datasets ({', '.join(paths[:6])}"
                         f"{', ...' if len(paths) > 6 else ''}); pick one with leaf='{paths[0]}' (CLI --leaf {paths[0]})")
    if leaf is not None:
        if str(leaf) not in paths:
            raise ValueError(f"leaf {leaf!r} is not in {path}; it holds {', '.join(paths[:10])}{', ...' if len(paths) > 10 else ''}")
        chosen = dict(leaves)[str(leaf)]
        at = str(leaf)
    else:
        at, chosen = leaves[0]
    members = {}
    for part in ("data", "prompt"):
        sub = chosen.get(part)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            raise ValueError(f"{path}: '{part}' of router dataset {at or '(top)'} is a {type(sub).__name__}, not a dict of arrays")
        for k, v in sub.items():
            members[str(k)] = v
    names = chosen.get("model")
    if names is not None:
        if not isinstance(names, (list, tuple, np.ndarray)) or not all(isinstance(x, str) for x in names):
            raise ValueError(f"{path}: 'model' of router dataset {at or '(top)'} must be a list of model names")
        names = [str(x) for x in names]
    meta = {"leaf": at or None, "leaves_in_file": len(leaves),
            "ignored_keys": sorted(str(k) for k in chosen if k not in ("data", "prompt", "model"))}
    return members, names, meta


def read_routereval(path, *, score_threshold=None, model_names=None, leaf=None, _parsed=None) -> Pool:
    """A pool from a RouterEval router dataset: a ``.npz`` or the published ``.pkl`` (read without
    executing pickle code, :func:`routereval_pickle`; ``leaf`` picks one of a nested file's
    datasets): ``<split>_score`` [n_split, M] (or [n_split, M, k])
    correctness per split, stacked in train/val/test order; ``<split>_embed`` [n_split, d] become
    ``Pool.embeddings`` (all splits or none), ``<split>_prompt`` (a text array) the prompt text,
    ``<split>_tokens`` / ``<split>_time`` [n_split, M] go to ``per_response`` (``tokens``, ``time``;
    one value per cell, repeated over its responses). Prompt ids are
    ``"<split>-<row>"`` and ``split`` is set. Model names: ``model_names`` (the argument, in
    column order), else the file's (the pickle's ``model`` list, an npz's ``model_names``/``models``
    text array), else ``m0, m1, ...``; ``meta['model_names_from']`` says which. Scores follow
    :data:`SCORE_RULE`. Entries not read are listed in ``meta['ignored_members']``.
    """
    thr = check_threshold(score_threshold)
    path = Path(path)
    file_names, extra_meta = None, {}
    if path.suffix.lower() in SAFE_PICKLE_SUFFIXES:
        members, file_names, extra_meta = routereval_pickle(path, leaf, obj=_parsed)
        names = list(members)

        def member(name):
            return _as_member(members[name], name, str(path))
    else:
        if leaf is not None:
            raise ValueError(f"leaf applies to RouterEval .pkl files only; {path} is an .npz (one router dataset)")
        try:
            with np.load(path, allow_pickle=False) as z:
                names = list(z.files)
        except Exception as exc:  # noqa: BLE001 - numpy raises several types for a damaged zip
            raise ValueError(f"{path} is damaged or not a .npz file ({type(exc).__name__}: {exc})") from None

        def member(name):
            return _npz_member(path, name)
    splits = routereval_members(names)
    if not splits:
        raise ValueError(f"{path} has no '<split>_score' arrays (it holds {names}); a RouterEval file holds train_score, "
                         "test_score, ... and train_embed, test_embed, ...")
    scores, embeds, texts, extra = [], [], [], {"tokens": [], "time": []}
    used = set()
    for s in splits:
        a = member(f"{s}_score")
        used.add(f"{s}_score")
        if a.dtype.kind not in "biuf" or a.ndim not in (2, 3):
            raise ValueError(f"{path}: array '{s}_score' must be numeric [n, M] (or [n, M, k]), got {a.dtype} {a.shape}")
        scores.append(a if a.ndim == 3 else a[:, :, None])
    shapes = {a.shape[1:] for a in scores}
    if len(shapes) != 1:
        raise ValueError(f"{path}: the score arrays disagree on (models, draws): "
                         + ", ".join(f"{s}_score {a.shape}" for s, a in zip(splits, scores, strict=True)))
    for part, store in (("embed", embeds), ("prompt", texts)):
        have = [f"{s}_{part}" in names for s in splits]
        if any(have) and not all(have):
            raise ValueError(f"{path}: '{part}' arrays exist for some splits only ({[s for s, h in zip(splits, have, strict=True) if h]} "
                             f"of {splits}); give every split one or none")
        if all(have):
            for s, a in zip(splits, scores, strict=True):
                x = member(f"{s}_{part}")
                used.add(f"{s}_{part}")
                if x.shape[0] != a.shape[0]:
                    raise ValueError(f"{path}: '{s}_{part}' has {x.shape[0]} rows but '{s}_score' has {a.shape[0]}")
                if part == "embed" and (x.ndim != 2 or x.dtype.kind not in "biuf"):
                    raise ValueError(f"{path}: '{s}_embed' must be a numeric [n, d] array, got {x.dtype} {x.shape}")
                if part == "prompt" and x.dtype.kind not in "US":
                    raise ValueError(f"{path}: '{s}_prompt' must be a text array, got dtype {x.dtype}")
                store.append(x)
    for part in ("tokens", "time"):
        if all(f"{s}_{part}" in names for s in splits):
            for s, a in zip(splits, scores, strict=True):
                x = member(f"{s}_{part}")
                used.add(f"{s}_{part}")
                if x.shape[:2] != a.shape[:2] or x.dtype.kind not in "biuf":
                    raise ValueError(f"{path}: '{s}_{part}' must be numeric {a.shape[:2]}, got {x.dtype} {x.shape}")
                extra[part].append(x.astype(float))
    M = scores[0].shape[1]
    names_from = "the model_names argument" if model_names is not None else None
    if model_names is None and file_names is not None:
        if len(file_names) != M:
            raise ValueError(f"{path}: the file's 'model' list has {len(file_names)} names but the scores have {M} columns")
        model_names, names_from = file_names, "the file ('model' list)"
    if model_names is None:
        for nm in ("model_names", "models"):
            if nm in names:
                arr = member(nm)
                used.add(nm)
                if arr.dtype.kind not in "US" or arr.shape != (M,):
                    raise ValueError(f"{path}: '{nm}' must be a text array of the {M} model names, got {arr.dtype} {arr.shape}")
                model_names, names_from = [str(x) for x in arr], f"the file (array {nm!r})"
                break
    if model_names is None:
        names_from = "positions m0, m1, ... (the file has no model names)"
    if names_from.startswith("positions"):
        model_names = [f"m{j}" for j in range(M)]
    model_names = [str(x) for x in model_names]
    if len(model_names) != M:
        raise ValueError(f"model_names has {len(model_names)} names but {path} has {M} models (score columns)")
    S = np.concatenate([a.astype(float) for a in scores], axis=0)
    sizes = [a.shape[0] for a in scores]
    starts = np.cumsum([0] + sizes)

    def where(flat: int) -> str:
        i, rest = divmod(flat, S.shape[1] * S.shape[2])
        m, d = divmod(rest, S.shape[2])
        b = int(np.searchsorted(starts, i, side="right") - 1)
        return f"{path}: array '{splits[b]}_score' row {i - starts[b]} column {m} (model {model_names[m]!r})" + \
            (f" draw {d}" if S.shape[2] > 1 else "")

    v, n_non = scores_to_verdicts(S.ravel(), thr, "score", where)
    split_col = np.concatenate([np.full(n, s, dtype=object) for s, n in zip(splits, sizes, strict=True)])
    ids = np.concatenate([[f"{s}-{i}" for i in range(n)] for s, n in zip(splits, sizes, strict=True)]).astype(object)
    prompts = pd.DataFrame({"id": ids, "split": split_col})
    if texts:
        prompts["text"] = np.concatenate([t.astype(str) for t in texts]).astype(object)
    meta = {"source": str(path), "format": "routereval", "score_threshold": thr, "non_binary_scores": n_non,
            "model_names_from": names_from, "ignored_members": sorted(set(names) - used), **extra_meta}
    V = v.reshape(S.shape)
    V3 = V if V.ndim == 3 else V[:, :, None]
    per_response = {}
    for part, arrs in extra.items():
        if arrs:  # one value per (prompt, model): the same for each of its k responses
            a = np.asarray(np.concatenate(arrs, axis=0), dtype=float)
            per_response[part] = np.broadcast_to(a.reshape(a.shape[0], a.shape[1], -1)[:, :, :1], V3.shape)
    try:
        return Pool(V3, prompts, pd.DataFrame({"name": model_names}), None,
                    np.concatenate(embeds, axis=0) if embeds else None, None, "unknown", meta, per_response)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {exc}") from None

