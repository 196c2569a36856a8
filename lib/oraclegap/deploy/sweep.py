"""The held-out pool-construction sweep of paper 002 (App. J), with the router it measures.

:func:`pool_sweep`: for each dataset, random splits into a calibration part and a test part; on
calibration the anchor, the greedy pools of every size, the exhaustive optimum (or a bound) and the
baseline pools (:mod:`oraclegap.deploy.compose`, the construction core); on the test part F_b of
each pool, the hindsight optimum, ``n_random`` random pools per cell and, with a router, the router
gain of the pool over its anchor. :class:`PoolSweep` holds the cells and the chosen pools, with
summaries, stability across folds and plots. The router and its inputs are resolved here:
:func:`sweep_embedding` (which embedding ``routers.router_inputs`` uses: the pool's, MiniLM from the
cache, TF-IDF + SVD) and the registry / estimator / function router of a cell.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._result import Result
from .._validate import as_rng, check_cost, check_int, check_prob
from ..pool import Pool, check_pool
from .compose import (
    BASELINES,
    GREEDY_BOUND,
    RULES,
    check_sizes,
    outcome_matrix,
    pack_bits,
    popcount,
    resolve_anchor,
)
from .compose.baselines import _kmedoids_set, _order_accuracy, _order_diversity, _order_dpp
from .compose.search import (
    _DEFAULT_MAX_SUBSETS,
    _branch_and_bound,
    _counts_chunked,
    _greedy_core,
    _n_subsets,
    _pad_set,
    _subsets_by_size,
)

__all__ = ["SWEEP_EMBEDS", "sweep_embedding", "PoolSweep", "pool_sweep"]

# ====================================================================== routers for the sweep
#: Embedding choices of :func:`pool_sweep`: ``routers.router_inputs``'s sources, plus "cached".
SWEEP_EMBEDS = ("cached", "auto", "pool", "minilm", "tfidf-svd", "features", "none")


def _minilm_cache_file(pool: Pool):
    """Where ``features.embed_texts`` keeps (or would keep) MiniLM vectors of this pool's prompt
    texts, or None without text or without a cache folder. Mirrors ``router_inputs``'s texts."""
    from . import features

    tcol = pool.prompts["text"]
    if not tcol.notna().any():
        return None
    texts = [str(t) if t is not None else "" for t in tcol.tolist()]
    if not any(t.strip() for t in texts):
        return None
    folder = features.cache_dir()
    if folder is None:
        return None
    return folder / f"minilm-{features._text_key(texts, features.MINILM_NAME)}.npz"


def sweep_embedding(pool: Pool, embed: str = "cached") -> str:
    """The embedding source that ``routers.router_inputs`` uses for ``pool`` in a sweep.

    One of ``router_inputs``'s sources is returned unchanged. ``"cached"`` never computes a
    sentence embedding: the pool's own embeddings (``"pool"``) when it has them; else, for prompts
    with text, MiniLM (``"minilm"``) only when the embedding cache already holds MiniLM vectors of
    exactly these texts, otherwise TF-IDF + SVD of the text (``"tfidf-svd"``, fitted on the prompt
    texts only, no outcome read); a pool without text gets ``"auto"`` (numeric prompt features, or
    nothing). The cache file looked for is declared to the book's data log, so an executed chapter
    is re-run once the cache appears.
    """
    check_pool(pool)
    if embed not in SWEEP_EMBEDS:
        raise ValueError(f"embed must be one of {SWEEP_EMBEDS}, got {embed!r}")
    if embed != "cached":
        return embed
    if pool.embeddings is not None:
        return "pool"
    path = _minilm_cache_file(pool)
    if path is None:
        return "auto"
    from .. import _datalog

    _datalog.declare(path)
    return "minilm" if path.is_file() else "tfidf-svd"


def _take(inputs, idx: np.ndarray):
    if hasattr(inputs, "take") and not isinstance(inputs, np.ndarray | pd.DataFrame | pd.Series):
        return inputs.take(idx)
    if isinstance(inputs, pd.DataFrame | pd.Series):
        return inputs.iloc[idx]
    return np.asarray(inputs)[idx]


def _member_columns(inputs, members: np.ndarray, K: int):
    """RouterInputs restricted to a pool's members: per-member fields (answers, confidence [n, K])
    keep only the members' columns, in pool order, so that column j is member ``members[j]``."""
    if not dataclasses.is_dataclass(inputs) or isinstance(inputs, type):
        return inputs
    change = {}
    for field in ("answers", "confidence"):
        v = getattr(inputs, field, None)
        if v is not None and np.ndim(v) == 2 and np.shape(v)[1] == K:
            change[field] = np.asarray(v)[:, members]
    return dataclasses.replace(inputs, **change) if change else inputs


def _resolve_router(router, confidence, embed: str):
    """(kind, maker, inputs_from_pool, family): kind "registry" (a ``routers.FAMILIES`` name; maker()
    -> an unfitted router), "estimator" (maker() -> a clone of the given object with fit(X, Y) /
    predict(X)) or "function" (router(X_cal, Y_cal, X_test) -> member indices), or None when no
    router gain is wanted; inputs_from_pool(pool) gives what the router sees per item when inputs
    are not passed (``routers.router_inputs`` with :func:`sweep_embedding` for registry routers,
    else the pool's embeddings); family is the registry name or None."""
    if router is None:
        return None, None, None, None
    if embed not in SWEEP_EMBEDS:
        raise ValueError(f"embed must be one of {SWEEP_EMBEDS}, got {embed!r}")
    if isinstance(router, str):
        from . import routers as _routers

        name = router
        if router == "auto":
            name = "max_confidence" if confidence is not None else "embed_knn"
        if name not in _routers.FAMILIES:
            raise ValueError(
                f"router {router!r} is not a router family; choose 'auto', None, an estimator, a function, or one of "
                f"{', '.join(_routers.FAMILIES)}"
            )
        if name == "dataset":
            raise ValueError(
                "router 'dataset' maps prompts to members by their training datasets, which a sweep over sub-pools does not "
                "carry; choose another family (e.g. 'taskwise_best' or 'embed_knn')"
            )
        if _routers.FAMILIES[name]["regime"] == "post-inference":
            def from_pool(pool):
                return _routers.router_inputs(pool, embed="none")
        else:
            def from_pool(pool):
                return _routers.router_inputs(pool, embed=sweep_embedding(pool, embed))
        return "registry", (lambda: _routers.make_router(name)), from_pool, name

    def embeddings(pool):
        return pool.embeddings

    if hasattr(router, "fit") and hasattr(router, "predict"):
        def maker():
            try:
                from sklearn.base import clone

                return clone(router)
            except TypeError:
                return copy.deepcopy(router)

        return "estimator", maker, embeddings, None
    if callable(router):
        return "function", router, embeddings, None
    raise TypeError(
        "router must be None, 'auto', a routers.FAMILIES name (e.g. 'max_confidence', 'embed_knn'), an estimator with "
        f"fit/predict, or a function (X_cal, Y_cal, X_test) -> choices; got {type(router).__name__}"
    )


def _dataset_inputs(kind, family, inputs, from_pool, ds: str, dpool, cache: dict, confidence, n_source: int, K: int):
    """What the router sees for one dataset of a sweep (indexed by the item positions in the source)."""
    if kind is None:
        return None
    if isinstance(inputs, Mapping):
        if ds not in inputs:
            raise ValueError(f"inputs is a mapping without an entry for dataset {ds!r}")
        return inputs[ds]
    if inputs is not None:
        return inputs
    from . import routers as _routers

    post = family is not None and _routers.FAMILIES[family]["regime"] == "post-inference"
    if post and confidence is not None:
        conf = np.asarray(confidence, dtype=float)
        if conf.shape != (n_source, K):
            raise ValueError(f"confidence for dataset {ds!r} must have shape [n={n_source}, K={K}] (one per item and model), got {conf.shape}")
        if dpool is not None:
            return _routers.router_inputs(dpool, embed="none", confidence=conf)
        return _routers.RouterInputs(confidence=conf)
    if dpool is not None:
        if id(dpool) not in cache:
            cache[id(dpool)] = from_pool(dpool)
        return cache[id(dpool)]
    if post:
        raise ValueError(f"router {family!r} needs confidence= (an [n, K] array of per-model confidences) or a pool whose answers give them")
    raise ValueError("the router needs inputs= (features, embeddings or RouterInputs per item): the data carry none")


def _check_family_inputs(family, X, ds: str, C) -> None:
    """A registry router that cannot run on a dataset's inputs is refused before any fit."""
    if family is None:
        return
    from . import routers as _routers

    if not isinstance(X, _routers.RouterInputs):
        raise TypeError(
            f"router {family!r} reads routers.RouterInputs (see routers.router_inputs); inputs for dataset {ds!r} are a "
            f"{type(X).__name__}: pass RouterInputs, or an estimator / function for plain arrays"
        )
    why = _routers.missing_inputs(family, X, cost=C)
    if why is not None:
        if "confidence" in why:
            why = "needs confidence= (an [n, K] array of per-model confidences), or a pool whose answers give them"
        raise ValueError(f"router {family!r} cannot run on dataset {ds!r}: it {why}")


# ====================================================================== the held-out sweep (App. J)
@dataclasses.dataclass(frozen=True, repr=False)
class PoolSweep(Result):
    """The held-out pool-construction sweep: one row per cell (dataset, fold, size) in ``cells``, one
    row per (cell, rule) in ``rules``; ``frame()`` is ``cells``.

    cells: anchor (chosen on the calibration half), greedy F_b on calibration, the calibration
    optimum (exact, or the greedy trace's upper bound when enumeration is infeasible) and the ratio
    (a lower bound when inexact), held-out F_b of the greedy pool, of the calibration-optimal pool
    and the hindsight test optimum (not deployable), the random-subset distribution on the test
    half (mean, p05, p95, share of draws strictly below greedy, share tied), and router gain /
    relative cost per rule when a router is given.
    """

    cells: pd.DataFrame
    rules: pd.DataFrame
    settings: dict
    splits: dict  # dataset -> bool[n_folds, n] test masks; dataset -> item positions in ``items``
    items: dict

    def frame(self) -> pd.DataFrame:
        return self.cells

    def summary(self) -> pd.DataFrame:
        """Per (dataset, size): mean and min greedy/optimum ratio, mean held-out F_b per rule, the mean
        random p05/mean/p95, the share of folds where greedy beats the random p95, the mean share of
        random draws greedy beats, and router gains when present."""
        c = self.cells
        g = c.groupby(["dataset", "size"], sort=False)
        out = g.agg(
            folds=("fold", "size"),
            ratio_mean=("ratio", "mean"),
            ratio_min=("ratio", "min"),
            ratio_exact=("optimum_exact", "mean"),
            greedy_cal=("greedy_cal", "mean"),
            greedy_test=("greedy_test", "mean"),
            optpool_test=("optpool_test", "mean"),
            hindsight_test=("hindsight_test", "mean"),
            random_mean=("random_mean", "mean"),
            random_p05=("random_p05", "mean"),
            random_p95=("random_p95", "mean"),
            above_p95=("above_p95", "mean"),
            beats_random=("beats_random", "mean"),
        )
        wide = self.rules.pivot_table(index=["dataset", "size"], columns="rule", values="test", aggfunc="mean", sort=False)
        wide.columns = [f"{r}_test" for r in wide.columns]
        out = out.join(wide.drop(columns=[c for c in ("greedy_test", "exhaustive_test") if c in wide.columns]))
        if "router_gain" in self.rules and self.rules["router_gain"].notna().any():
            rg = self.rules.pivot_table(index=["dataset", "size"], columns="rule", values="router_gain", aggfunc="mean", sort=False)
            rg.columns = [f"{r}_router_gain" for r in rg.columns]
            out = out.join(rg)
        for col in ("pool_cost_ratio", "routed_cost_ratio"):
            if col in self.rules and self.rules[col].notna().any():
                rc = self.rules.pivot_table(index=["dataset", "size"], columns="rule", values=col, aggfunc="mean", sort=False)
                rc.columns = [f"{r}_{col}" for r in rc.columns]
                out = out.join(rc)
        return out.reset_index()

    def table10(self, size: int = 2) -> pd.DataFrame:
        """Held-out F_b at one size per dataset (002 Table 10 analog): mean over folds of every rule,
        the random-subset mean, the calibration-optimal pool ("exhaustive") and the hindsight optimum
        on the test half (not deployable)."""
        r = self.rules[self.rules["size"] == size]
        if r.empty:
            raise ValueError(f"size={size} is not in the sweep's size grid")
        wide = r.pivot_table(index="dataset", columns="rule", values="test", aggfunc="mean", sort=False)
        c = self.cells[self.cells["size"] == size].groupby("dataset", sort=False)
        wide["random"] = c["random_mean"].mean()
        wide["hindsight"] = c["hindsight_test"].mean()
        order = [x for x in ("greedy", "accuracy", "diversity", "kmedoids", "dpp", "random", "exhaustive", "hindsight") if x in wide]
        out = wide[order].reset_index()
        out.columns.name = None
        return out

    def table9(self, size: int = 2, rules: Sequence[str] = ("greedy", "accuracy")) -> pd.DataFrame:
        """002 Table 9 analog at one size: per dataset and rule the mean held-out F_b ("test
        opportunity"), the mean greedy/optimum ratio on calibration (greedy rows), the mean router gain
        over the anchor and the mean relative costs (whole pool queried; routed calls)."""
        r = self.rules[(self.rules["size"] == size) & self.rules["rule"].isin(rules)]
        if r.empty:
            raise ValueError(f"size={size} is not in the sweep's size grid")
        g = r.groupby(["dataset", "rule"], sort=False).agg(
            test_opportunity=("test", "mean"), router_gain=("router_gain", "mean"),
            pool_cost_ratio=("pool_cost_ratio", "mean"), routed_cost_ratio=("routed_cost_ratio", "mean"),
        ).reset_index()
        ratio = self.cells[self.cells["size"] == size].groupby("dataset", sort=False)["ratio"].mean()
        g.insert(3, "greedy_over_optimum", np.where(g["rule"] == "greedy", g["dataset"].map(ratio), np.nan))
        return g

    def conversion(self, size: int = 2) -> pd.DataFrame:
        """Does coverage convert into router gain? One row per dataset: at ``size``, the mean held-out
        F_b of the greedy and the accuracy-ranked pools, the mean router gain over the anchor of each
        (with the standard error of the greedy gain over folds), the share of the greedy pool's
        coverage the router realises (mean gain / mean F_b; at most 1, since a router restricted to
        the pool can gain over the anchor only on items it rescues), the share of folds with a
        positive greedy gain, and ``corr``, the correlation between held-out F_b and router gain over
        every routed pool of the dataset (all sizes, rules and folds; NaN when either is constant)."""
        r = self.rules
        if "router_gain" not in r or not r["router_gain"].notna().any():
            raise ValueError("the sweep has no router gains: run pool_sweep with router=...")
        if not (r["size"] == size).any():
            raise ValueError(f"size={size} is not in the sweep's size grid")
        routed = r[r["router_gain"].notna()]
        rows = []
        for ds, d in routed.groupby("dataset", sort=False):
            at = d[d["size"] == size]
            g, a = at[at["rule"] == "greedy"], at[at["rule"] == "accuracy"]
            ok = d["test"].std() > 0 and d["router_gain"].std() > 0
            rows.append({
                "dataset": ds, "folds": int(g["fold"].nunique()),
                "greedy_test": g["test"].mean(), "accuracy_test": a["test"].mean() if len(a) else np.nan,
                "greedy_gain": g["router_gain"].mean(),
                "greedy_gain_se": g["router_gain"].std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else np.nan,
                "accuracy_gain": a["router_gain"].mean() if len(a) else np.nan,
                "realised": g["router_gain"].mean() / g["test"].mean() if g["test"].mean() > 0 else np.nan,
                "positive_folds": float((g["router_gain"] > 0).mean()) if len(g) else np.nan,
                "corr": float(np.corrcoef(d["test"], d["router_gain"])[0, 1]) if ok else np.nan,
            })
        return pd.DataFrame(rows)

    def overview(self, size: int = 2, frac: float = 0.9) -> pd.DataFrame:
        """One row per dataset: items, K, folds, the share of cells with an exact optimum, the smallest
        and mean greedy/optimum ratio over exact cells (and the smallest proven lower bound over the
        others), at ``size`` the held-out F_b of greedy and of accuracy ranking, the share of folds
        where greedy beats the random p95, the mean share of random draws it beats and how often the
        modal greedy pool recurs, and the saturation size: the smallest size whose mean calibration
        coverage reaches ``frac`` of the whole pool's (NaN when K - 1 is not in the grid)."""
        c = self.cells
        st = self.stability()
        rows = []
        for ds, d in c.groupby("dataset", sort=False):
            K = int(self.settings["K"][ds])
            ex = d[d["optimum_exact"]]
            inex = d[~d["optimum_exact"]]
            at = d[d["size"] == size]
            acc = self.rules[(self.rules["dataset"] == ds) & (self.rules["size"] == size) & (self.rules["rule"] == "accuracy")]
            curve = d.groupby("size")["greedy_cal"].mean()
            sat = curve.index[curve >= frac * curve.loc[K - 1]].min() if (K - 1) in curve.index and curve.loc[K - 1] > 0 else np.nan
            sg = st[(st["dataset"] == ds) & (st["size"] == size) & (st["rule"] == "greedy")]
            rows.append({
                "dataset": ds, "items": int(d["n_cal"].iloc[0] + d["n_test"].iloc[0]), "K": K,
                "folds": int(d["fold"].nunique()), "exact_share": float(d["optimum_exact"].mean()),
                "ratio_min": float(ex["ratio"].min()) if len(ex) else np.nan,
                "ratio_mean": float(ex["ratio"].mean()) if len(ex) else np.nan,
                "ratio_lower_bound_min": float(inex["ratio"].min()) if len(inex) else np.nan,
                "greedy_test": float(at["greedy_test"].mean()) if len(at) else np.nan,
                "accuracy_test": float(acc["test"].mean()) if len(acc) else np.nan,
                "above_p95": float(at["above_p95"].mean()) if len(at) else np.nan,
                "beats_random": float(at["beats_random"].mean()) if len(at) else np.nan,
                "greedy_modal_share": float(sg["modal_pool_share"].iloc[0]) if len(sg) else np.nan,
                "full_pool_cal": float(curve.loc[K - 1]) if (K - 1) in curve.index else np.nan,
                "saturation_size": float(sat),
            })
        return pd.DataFrame(rows)

    def saturation(self) -> pd.DataFrame:
        """Held-out saturation curves, one row per (dataset, size): ``share`` = size / (K - 1) of the
        alternatives kept, and the mean held-out F_b of the greedy pool (``greedy``) and of the random
        pools (``random``), each divided by the mean held-out F_b of the whole pool (the pool of all
        K - 1 alternatives; every fold's pool is a subset of it, so both lie in [0, 1] and equal 1 at
        share 1). Datasets whose size grid lacks K - 1 are left out; a whole pool that covers nothing
        held out gives NaN."""
        s = self.summary()
        K = s["dataset"].map(self.settings["K"]).astype(int)
        whole = s.loc[s["size"] == K - 1].set_index("dataset")["greedy_test"]
        keep = s["dataset"].isin(whole.index).to_numpy()
        s, K = s[keep], K[keep]
        top = s["dataset"].map(whole.astype(float)).astype(float)
        top = top.where(top > 0)
        return pd.DataFrame({"dataset": s["dataset"], "K": K, "size": s["size"], "share": s["size"] / (K - 1),
                             "greedy": s["greedy_test"] / top, "random": s["random_mean"] / top}).reset_index(drop=True)

    def saturation_reach(self, frac: float = 0.9) -> pd.DataFrame:
        """One row per dataset of :meth:`saturation`: the smallest share of alternatives at which the
        greedy curve, and the random curve, reach ``frac`` of the whole pool's held-out coverage
        (NaN where the curve is undefined)."""
        frac = check_prob(frac, "frac", open_low=True)
        c = self.saturation()
        out = c.groupby("dataset", sort=False)["K"].first().to_frame()
        for col in ("greedy", "random"):
            out[col] = c[c[col] >= frac].groupby("dataset", sort=False)["share"].min()
        return out.reset_index()

    def stability(self) -> pd.DataFrame:
        """How often the same pool is chosen across folds, per (dataset, size, rule): the share of folds
        choosing the most frequent pool (anchor included), the mean pairwise Jaccard similarity of the
        chosen pools, and the share of folds with the most frequent anchor."""
        rows = []
        for (ds, s, rule), d in self.rules.groupby(["dataset", "size", "rule"], sort=False):
            pools = d["pool"].tolist()
            K = int(self.settings["K"][ds])
            M = np.zeros((len(pools), K))
            for i, p in enumerate(pools):
                M[i, list(p)] = 1
            inter = M @ M.T
            sz = M.sum(axis=1)
            union = sz[:, None] + sz[None, :] - inter
            iu = np.triu_indices(len(pools), 1)
            jac = float((inter[iu] / union[iu]).mean()) if iu[0].size else 1.0
            vc = pd.Series([tuple(p) for p in pools]).value_counts()
            rows.append(
                {
                    "dataset": ds,
                    "size": s,
                    "rule": rule,
                    "folds": len(pools),
                    "modal_pool_share": float(vc.iloc[0] / len(pools)),
                    "distinct_pools": int(vc.size),
                    "mean_jaccard": jac,
                    "modal_anchor_share": float(d["anchor"].value_counts().iloc[0] / len(d)),
                }
            )
        return pd.DataFrame(rows)


def _split_datasets(data, by, tau):
    """[(name, X, names, item positions in the source, pool or None)]."""
    if isinstance(data, Mapping):
        out = []
        for name, d in data.items():
            X, names = outcome_matrix(d, tau=tau, name=f"data[{name!r}]")
            out.append((str(name), X, names, np.arange(X.shape[0]), d if isinstance(d, Pool) else None))
        if not out:
            raise ValueError("data is an empty mapping; give at least one dataset")
        return out
    X, names = outcome_matrix(data, tau=tau, name="data")
    pool = data if isinstance(data, Pool) else None
    if isinstance(by, str):
        if pool is not None and by in pool.prompts.columns:
            col = pool.prompts[by].astype(str).to_numpy()
            levels = list(dict.fromkeys(col))
            return [(lvl, X[col == lvl], names, np.flatnonzero(col == lvl), pool) for lvl in levels]
        if by != "dataset":  # the default splits only when the column exists
            where = f"columns {list(pool.prompts.columns)}" if pool is not None else "no prompt table (data is a matrix)"
            raise ValueError(f"by={by!r} is not a prompt-table column ({where}); pass a column name or an array of labels")
    elif by is not None:
        labels = np.asarray(by)
        if labels.shape != (X.shape[0],):
            raise ValueError(f"by must be a prompt-table column of the pool or an array of {X.shape[0]} dataset labels")
        labels = labels.astype(str)
        levels = list(dict.fromkeys(labels))
        return [(lvl, X[labels == lvl], names, np.flatnonzero(labels == lvl), None) for lvl in levels]
    return [("all", X, names, np.arange(X.shape[0]), pool)]


def _fold_masks(n: int, n_folds: int, test_fraction: float, rng) -> np.ndarray:
    m = min(max(int(round(test_fraction * n)), 1), n - 1)
    order = np.argsort(rng.random((n_folds, n)), axis=1)
    T = np.zeros((n_folds, n), dtype=bool)
    np.put_along_axis(T, order[:, :m], True, axis=1)
    return T


def _prefix_counts(cols: np.ndarray, orders: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """orders int[F, R, L]: member orders; Z uint64[F, H, W]. Returns int[F, H, R, L], the count of
    the OR of the first t + 1 members within Z (one step per position, vectorised over F and R)."""
    F, R, L = orders.shape
    H = Z.shape[1]
    acc = np.zeros((F, R, cols.shape[1]), dtype=np.uint64)
    out = np.empty((F, H, R, L), dtype=np.int64)
    for t in range(L):
        acc |= cols[orders[:, :, t]]
        out[:, :, :, t] = popcount(acc[:, None, :, :] & Z[:, :, None, :])
    return out


def pool_sweep(data, *, sizes=None, n_folds: int = 40, n_random: int = 200, test_fraction: float = 0.5,
               anchor="best", by="dataset", tau=None, router=None, inputs=None, confidence=None, embed: str = "auto", cost=None,
               baselines: Sequence[str] = ("accuracy", "diversity", "kmedoids", "dpp"),
               router_rules: Sequence[str] = ("greedy", "accuracy"), max_subsets: int = _DEFAULT_MAX_SUBSETS,
               max_nodes: int = 0, seed=0, progress: bool = False) -> PoolSweep:
    """The held-out sweep of 002 App. J: for each dataset, ``n_folds`` random splits into a calibration
    part and a test part (``test_fraction``); on calibration the anchor (``"best"``: most accurate, or
    fixed by name/index), the greedy pools for every size, the exhaustive optimum (enumerated when at
    most ``max_subsets`` subsets, else bounded by the greedy trace) and the baseline pools; on the
    test part F_b of each pool, the hindsight optimum and ``n_random`` random pools per cell. Where
    enumeration is infeasible, ``max_nodes > 0`` runs branch and bound per cell (calibration optimum
    and hindsight optimum) within that node budget; cells it does not finish keep an upper bound.

    ``data``: a Pool (split into datasets by the prompt column ``by``; k > 1 needs ``tau``), a
    mapping name -> Pool/bool matrix, or one bool[n, K] (``by`` may then be an array of labels).
    ``router``: None (no router gain), ``"auto"`` (``routers.make_router("max_confidence")`` when
    ``confidence`` [n, K] is given, else ``routers.make_router("embed_knn")``), any other
    ``routers.FAMILIES`` name, an estimator with fit(X, Y) / predict(X) -> member index (cloned per
    fit), or a function (X_cal, Y_cal, X_test) -> member index. It is fitted on the calibration part
    restricted to the pool (anchor + members, in index order; Y = their outcomes, and per-member
    inputs such as confidences restricted to the same columns) and predicts an index into those
    columns; its held-out accuracy minus the anchor's is the router gain. A registry router sees
    ``inputs`` if given, else ``routers.router_inputs(pool, embed=sweep_embedding(pool, embed))``
    (``embed="cached"``: the pool's embeddings, MiniLM only from the cache, else TF-IDF + SVD);
    post-inference families see the confidences (``confidence``, else the pool's answers).
    ``settings["inputs"]`` records per dataset which embedding was used. With costs (``cost`` [n, K]
    or [K], else the pool's) the relative cost of the pool (all members queried, as a confidence
    router must) and of the routed calls, both over the anchor's, are reported; registry routers
    are fitted with the members' costs (they choose by utility alone: lambda = 0).
    """
    n_folds = check_int(n_folds, "n_folds", minimum=1)
    n_random = check_int(n_random, "n_random", minimum=1)
    test_fraction = check_prob(test_fraction, "test_fraction", open_low=True, open_high=True)
    max_subsets = check_int(max_subsets, "max_subsets", minimum=1)
    max_nodes = check_int(max_nodes, "max_nodes", minimum=0)
    for r in baselines:
        if r not in BASELINES or r == "random":
            raise ValueError(f"baselines must be among {BASELINES[:-1]} (random subsets are always drawn), got {r!r}")
    for r in router_rules:
        if r not in RULES:
            raise ValueError(f"router_rules must be among {RULES}, got {r!r}")
    rng = as_rng(seed)
    parts = _split_datasets(data, by, tau)
    n_total = sum(p[3].size for p in parts)  # rows of the source that item positions index
    kind, maker, from_pool, family = _resolve_router(router, confidence, embed)
    sources: dict = {}
    input_cache: dict = {}
    cells, rules = [], []
    Ks, splits, items = {}, {}, {}
    from tqdm.auto import tqdm

    bar = tqdm(total=len(parts) * n_folds, desc="pool sweep", disable=not progress, leave=False)
    for ds, X, names, pos, dpool in parts:
        n, K = X.shape
        ds_conf = confidence[ds] if isinstance(confidence, Mapping) else confidence
        n_source = n if isinstance(data, Mapping) else n_total
        ds_inputs = _dataset_inputs(kind, family, inputs, from_pool, ds, dpool, input_cache, ds_conf, n_source, K)
        C = _dataset_costs(cost, ds, pos, n, K, dpool)
        if kind is not None:
            _check_family_inputs(family, ds_inputs, ds, C)
            sources[ds] = getattr(ds_inputs, "source", type(ds_inputs).__name__)
        Ks[ds] = K
        if n < 2:
            raise ValueError(f"dataset {ds!r} has {n} item(s); a calibration/test split needs at least 2")
        grid = check_sizes(sizes, K)
        smax = int(grid.max())
        T = _fold_masks(n, n_folds, test_fraction, rng)
        cal = ~T
        splits[ds], items[ds] = T, pos
        if isinstance(anchor, str) and anchor == "best":
            acc = (X[None, :, :] & cal[:, :, None]).sum(axis=1)
            anchors = np.argmax(acc, axis=1)
        else:
            anchors = np.full(n_folds, resolve_anchor(anchor, X, names), dtype=np.int64)
        fails = ~X[:, anchors].T  # [F, n]
        Z = pack_bits(np.stack([fails & cal, fails & T], axis=1))  # [F, 2, W]
        n_cal, n_test = cal.sum(axis=1), T.sum(axis=1)
        cols = pack_bits(X.T)
        # greedy (calibration), its held-out counts
        order, gains, ub = _greedy_core(cols, Z[:, 0], anchors, smax)
        gcounts = _prefix_counts(cols, order[:, None, :], Z)[:, :, 0, :]  # [F, 2, smax]
        # exhaustive optimum on calibration where feasible, hindsight optimum on test
        opt_cal = np.full((n_folds, smax), -1, dtype=np.int64)
        opt_test = np.full((n_folds, smax), -1, dtype=np.int64)
        hind = np.full((n_folds, smax), -1, dtype=np.int64)
        opt_sets: dict[int, np.ndarray] = {}
        feasible = [s for s in range(1, smax + 1) if _n_subsets(K, s) <= max_subsets]
        if feasible:
            smax_ex = max(feasible)
            for s, combos, ors in _subsets_by_size(cols, smax_ex):
                has = np.zeros((combos.shape[0], K), dtype=bool)
                has[np.arange(combos.shape[0])[:, None], combos] = True
                bad = has[:, anchors].T  # [F, C]
                cc = _counts_chunked(ors, Z[:, 0])
                ct = _counts_chunked(ors, Z[:, 1])
                cc[bad] = -1
                ct[bad] = -1
                arg = np.argmax(cc, axis=1)
                opt_cal[:, s - 1] = cc[np.arange(n_folds), arg]
                opt_test[:, s - 1] = ct[np.arange(n_folds), arg]
                hind[:, s - 1] = ct.max(axis=1)
                opt_sets[s] = combos[arg]
        upper_cal = ub.copy()
        if max_nodes > 0 and any(int(s) not in opt_sets for s in grid):
            t_order, t_gains, _ = _greedy_core(cols, Z[:, 1], anchors, smax)
            for s in (int(s) for s in grid if int(s) not in opt_sets):
                sets = np.full((n_folds, s), -1, dtype=np.int64)
                for f in range(n_folds):
                    b = int(anchors[f])
                    best, bset, up, ok, _ = _branch_and_bound(cols, Z[f, 0], b, s, order[f, :s], int(gcounts[f, 0, s - 1]), max_nodes)
                    upper_cal[f, s - 1] = min(upper_cal[f, s - 1], up)
                    hb, _, _, hok, _ = _branch_and_bound(cols, Z[f, 1], b, s, t_order[f, :s], int(t_gains[f, :s].sum()), max_nodes)
                    if ok and hok:
                        m = _pad_set(bset, s, [j for j in range(K) if j != b])
                        sets[f] = m
                        opt_cal[f, s - 1] = best
                        opt_test[f, s - 1] = int(popcount(np.bitwise_or.reduce(cols[list(m)], axis=0) & Z[f, 1]))
                        hind[f, s - 1] = hb
                opt_sets[s] = sets
        # baselines
        rule_orders, kmed = {}, {}
        for r in baselines:
            if r in ("accuracy", "diversity", "dpp"):
                fn = {"accuracy": _order_accuracy, "diversity": _order_diversity, "dpp": _order_dpp}[r]
                rule_orders[r] = np.stack([fn(X[cal[f]], int(anchors[f])) for f in range(n_folds)])[:, :smax]
        nested = list(rule_orders)
        bcounts = _prefix_counts(cols, np.stack([rule_orders[r] for r in nested], axis=1), Z) if nested else None
        if "kmedoids" in baselines:
            for s in grid:
                sets = np.stack([_kmedoids_set(X[cal[f]], int(anchors[f]), int(s)) for f in range(n_folds)])
                ors = np.bitwise_or.reduce(cols[sets], axis=1)  # [F, W]
                kmed[int(s)] = (sets, popcount(ors[:, None, :] & Z))  # [F, 2]
        # random subsets: nested prefixes of random permutations of the candidates
        keys = rng.random((n_folds, n_random, K))
        keys[np.arange(n_folds), :, anchors] = np.inf
        perm = np.argsort(keys, axis=2)[:, :, :smax]
        rcounts = _prefix_counts(cols, perm, Z[:, 1:2])[:, 0]  # [F, R, smax] test counts
        sets_by_rule = {}
        for s in grid:
            s = int(s)
            d = {"greedy": order[:, :s]}
            if s in opt_sets:
                d["exhaustive"] = opt_sets[s]
            for r in nested:
                d[r] = rule_orders[r][:, :s]
            if s in kmed:
                d["kmedoids"] = kmed[s][0]
            sets_by_rule[s] = d
        # cells, vectorised over folds x sizes
        gi = grid - 1
        fi = np.repeat(np.arange(n_folds), gi.size)
        si = np.tile(gi, n_folds)
        nc, nt = n_cal[fi].astype(float), n_test[fi].astype(float)
        g_cal, g_test = gcounts[fi, 0, si], gcounts[fi, 1, si]
        exact = opt_cal[fi, si] >= 0
        bound = np.minimum(upper_cal[fi, si], np.floor(g_cal / GREEDY_BOUND + 1e-9).astype(np.int64))
        optc = np.where(exact, opt_cal[fi, si], bound)
        rc = rcounts[fi, :, si]  # [cells, R] integer counts: exact comparisons, then shares
        p05, p95 = np.quantile(rc, [0.05, 0.95], axis=1) / nt
        cells.append(pd.DataFrame({
            "dataset": ds, "fold": fi, "size": si + 1, "anchor": np.asarray(names, dtype=object)[anchors[fi]],
            "n_cal": n_cal[fi], "n_test": n_test[fi],
            "greedy": [" + ".join(names[j] for j in order[f, : i + 1]) for f, i in zip(fi, si, strict=True)],
            "greedy_cal": g_cal / nc, "optimum_cal": optc / nc, "optimum_exact": exact,
            "ratio": np.where(optc > 0, g_cal / np.maximum(optc, 1), 1.0),
            "greedy_test": g_test / nt,
            "optpool_test": np.where(exact, opt_test[fi, si] / nt, np.nan),
            "hindsight_test": np.where(exact, hind[fi, si] / nt, np.nan),
            "random_mean": rc.mean(axis=1) / nt, "random_p05": p05, "random_p95": p95,
            "beats_random": (rc < g_test[:, None]).mean(axis=1), "ties_random": (rc == g_test[:, None]).mean(axis=1),
            "above_p95": g_test > np.quantile(rc, 0.95, axis=1),
        }))
        # one row per (cell, rule): members, calibration and held-out F_b, router gain, relative cost
        gain_cache: dict = {}
        fold_takes: dict = {}  # one split's inputs, shared by its sub-pools' routers (and their neighbour searches)
        from .routers import shared_neighbours

        with shared_neighbours():  # k-NN routers of one split share its neighbour search
            for s in grid:
                s = int(s)
                i = s - 1
                counts = {"greedy": gcounts[:, :, i]}
                if s in opt_sets:
                    counts["exhaustive"] = np.stack([opt_cal[:, i], opt_test[:, i]], axis=1)
                for k_, r in enumerate(nested):
                    assert bcounts is not None  # computed whenever nested is non-empty
                    counts[r] = bcounts[:, :, k_, i]
                if s in kmed:
                    counts["kmedoids"] = kmed[s][1]
                for rule, sets in sets_by_rule[s].items():
                    cnt = counts[rule]
                    for f in range(n_folds):
                        if sets[f][0] < 0:  # no exact optimum in this cell
                            continue
                        b = int(anchors[f])
                        chosen = sorted(int(j) for j in sets[f])
                        pool_members = tuple(sorted([b] + chosen))
                        row = {
                            "dataset": ds, "fold": f, "size": s, "rule": rule, "anchor": names[b],
                            "members": " + ".join(names[j] for j in chosen), "pool": pool_members,
                            "cal": cnt[f, 0] / n_cal[f], "test": cnt[f, 1] / n_test[f],
                            "router_gain": np.nan, "pool_cost_ratio": np.nan, "routed_cost_ratio": np.nan,
                        }
                        if C is not None:
                            base_c = C[T[f], b].mean()
                            row["pool_cost_ratio"] = float(C[T[f]][:, list(pool_members)].mean(axis=0).sum() / base_c) if base_c > 0 else np.nan
                        if kind is not None and rule in router_rules:
                            key = (f, pool_members)
                            if key not in gain_cache:
                                if f not in fold_takes and kind == "registry":  # the library's routers only read them
                                    fold_takes[f] = (_take(ds_inputs, pos[np.flatnonzero(cal[f])]),
                                                     _take(ds_inputs, pos[np.flatnonzero(T[f])]))
                                gain_cache[key] = _router_gain(kind, maker, X, pos, ds_inputs, cal[f], T[f], b,
                                                               pool_members, C, fold_takes.get(f))
                            row["router_gain"], routed = gain_cache[key]
                            if C is not None:
                                row["routed_cost_ratio"] = routed
                        rules.append(row)
        bar.update(n_folds)
    bar.close()
    settings = {
        "n_folds": n_folds, "n_random": n_random, "test_fraction": test_fraction, "anchor": anchor, "tau": tau,
        "router": None if router is None else (router if isinstance(router, str) else type(router).__name__),
        "router_family": family, "embed": embed, "inputs": sources,
        "baselines": tuple(baselines), "max_subsets": max_subsets, "max_nodes": max_nodes, "K": Ks,
    }
    cells_df = pd.concat(cells, ignore_index=True).sort_values(["dataset", "fold", "size"], kind="stable", key=_dataset_order(parts))
    rules_df = pd.DataFrame(rules).sort_values(["dataset", "fold", "size"], kind="stable", key=_dataset_order(parts))
    return PoolSweep(cells_df.reset_index(drop=True), rules_df.reset_index(drop=True), settings, splits, items)


def _dataset_order(parts):
    rank = {p[0]: i for i, p in enumerate(parts)}

    def key(col: pd.Series) -> pd.Series:
        return col.map(rank) if col.name == "dataset" else col

    return key


def _dataset_costs(cost, ds: str, pos: np.ndarray, n: int, K: int, dpool: Pool | None = None):
    """Per-item costs [n, K] of one dataset of a sweep (None without costs), checked by ``check_cost``.
    Without ``cost``, a dataset that is a Pool with costs uses its own."""
    if cost is None:
        if dpool is not None and dpool.cost is not None:
            cost = dpool.cost
        else:
            return None
    if isinstance(cost, Mapping):
        if ds not in cost:
            return None
        C = np.asarray(cost[ds], dtype=float)
        C = np.broadcast_to(C, (n, K)) if C.shape == (K,) else C
    else:
        C = np.asarray(cost, dtype=float)
        if C.shape == (K,):
            C = np.broadcast_to(C, (n, K))
        elif C.ndim == 2 and C.shape[1] == K and C.shape[0] > pos.max():
            C = C[pos]
    return check_cost(C, n, K)


def _router_gain(kind, maker, X, pos, inputs, cal, test, b, pool, C, takes=None):
    """Held-out accuracy of the router restricted to ``pool`` minus the anchor's, and the routed cost
    ratio (mean cost of the called members over the anchor's) when costs exist.

    The router is fitted on the calibration items with Y = the outcomes of the pool's members
    (column j = member ``pool[j]``; per-member inputs restricted the same way) and predicts, for
    each test item, an index into those columns. Registry routers also get the members' costs."""
    members = np.asarray(pool, dtype=np.int64)
    ci, ti = np.flatnonzero(cal), np.flatnonzero(test)
    K = X.shape[1]
    if takes is None:  # the split's inputs, taken once per split when the caller keeps them
        takes = (_take(inputs, pos[ci]), _take(inputs, pos[ti]))
    Xc = _member_columns(takes[0], members, K)
    Xt = _member_columns(takes[1], members, K)
    Y = X[np.ix_(ci, members)].astype(float)
    if kind in ("registry", "estimator"):
        r = maker()
        if kind == "registry" and C is not None:
            r.fit(Xc, Y, cost=C[np.ix_(ci, members)])
        else:
            r.fit(Xc, Y)
        choice = np.asarray(r.predict(Xt))
    else:
        choice = np.asarray(maker(Xc, Y, Xt))
    if choice.shape != (ti.size,) or not np.issubdtype(choice.dtype, np.integer) or choice.min() < 0 or choice.max() >= members.size:
        raise ValueError(
            f"the router must return one member index in [0, {members.size}) per test item; got shape {choice.shape}"
        )
    picked = members[choice]
    gain = float(X[ti, picked].mean() - X[ti, b].mean())
    routed = np.nan
    if C is not None:
        base = C[ti, b].mean()
        routed = float(C[ti, picked].mean() / base) if base > 0 else np.nan
    return gain, routed

