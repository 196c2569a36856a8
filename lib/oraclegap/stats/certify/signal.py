"""The finite-signal certificate (paper 002, Theorem 7 and Appendix M.2): the best accuracy q_Z of
any rule that sees only a pre-declared finite signal Z, and its gain G_Z over the best fixed model;
the per-level best-model rule for such a signal, and signals declared without test outcomes
(quantile bins of a numeric feature, frozen text clusters).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..._result import Interval, Result
from ..._validate import as_rng, check_alpha, check_int, check_prob
from .binomial import _cp
from .outcomes import _as_outcomes, _outcomes_named, _signal_codes

#: The construction of the finite-signal certificate's intervals.
SIGNAL_METHOD = "clopper-pearson per cell, Bonferroni (Thm 7, M.2)"


@dataclasses.dataclass(frozen=True, repr=False)
class SignalCertificate(Result):
    """002 Thm 7 and App. M.2 for a pre-declared finite signal Z with J levels.

    q_Z = sum_z max_m theta_zm, theta_zm = P(Z = z, R_m = 1), is the accuracy of the best rule
    that sees only Z. ``q``: its plug-in with the Thm 7 interval at level 1 - alpha (CP at
    alpha/(JK) per cell). ``G`` for G_Z = q_Z - p*: cells at cell_share*alpha/(JK), each fixed
    model at (1 - cell_share)*alpha/K, level 1 - alpha. ``cells``: per level, its best member and
    the largest cell share theta with its limits.
    """

    _repr_fields = ("G", "q", "best_fixed", "oracle", "J", "K", "n", "alpha", "levels",
                    "cell_share")

    alpha: float
    n: int
    K: int
    J: int
    levels: tuple
    oracle: float
    best_fixed: float
    q: Interval
    G: Interval
    cell_share: float
    cells: pd.DataFrame = dataclasses.field(repr=False, compare=False)

    def frame(self) -> pd.DataFrame:
        """One row per quantity (q_Z, G_Z): value, lo, hi, level, method, with J, K, n, alpha."""
        return pd.DataFrame(
            [{"quantity": "q_Z", **self.q.to_dict()}, {"quantity": "G_Z", **self.G.to_dict()}]
        ).assign(J=self.J, K=self.K, n=self.n, alpha=self.alpha)


def _signal_bounds(cell_counts, c, n, alpha: float, cell_share: float):
    """Vectorised Thm 7 / M.2 from counts: cell_counts [..., J, K], c [..., K]."""
    cc = np.asarray(cell_counts, dtype=float)
    J, K = cc.shape[-2], cc.shape[-1]
    Lz, Uz = _cp(cc, n, alpha / (J * K))
    q_lo = np.clip(Lz.max(axis=-1).sum(axis=-1), 0, 1)
    q_hi = np.clip(Uz.max(axis=-1).sum(axis=-1), 0, 1)
    Lz2, Uz2 = _cp(cc, n, cell_share * alpha / (J * K))
    Lm, Um = _cp(c, n, (1 - cell_share) * alpha / K)
    g_lo = np.maximum(0.0, np.clip(Lz2.max(axis=-1).sum(axis=-1), 0, 1) - Um.max(axis=-1))
    g_hi = np.minimum(1.0, np.clip(Uz2.max(axis=-1).sum(axis=-1), 0, 1) - Lm.max(axis=-1))
    return q_lo, q_hi, g_lo, g_hi, (Lz, Uz)


def finite_signal_certificate(
    R,
    signal,
    alpha: float = 0.05,
    *,
    levels: Sequence | None = None,
    cell_share: float = 0.5,
    model_names: Sequence[str] | None = None,
) -> SignalCertificate:
    """Certificate for the best accuracy any rule seeing only a finite signal Z can reach (002 Thm 7, M.2).

    ``signal``: the level of Z for every test item (task tag, length bin, frozen cluster id),
    declared without the test outcomes; ``levels`` the declared support (default: the levels
    seen; a declared level never seen still widens the upper limits). An upper limit of G_Z
    below eps certifies that *this* signal cannot buy more than eps over the best fixed model;
    it says nothing about richer signals.
    """
    alpha = check_alpha(alpha)
    cell_share = check_prob(cell_share, "cell_share", open_low=True, open_high=True)
    X, mnames = _outcomes_named(R, model_names)
    n, K = X.shape
    codes, levels = _signal_codes(signal, n, levels)
    J = len(levels)
    onehot = np.zeros((n, J), dtype=np.int64)
    onehot[np.arange(n), codes] = 1
    cell = onehot.T @ X.astype(np.int64)  # [J, K]
    c = X.sum(axis=0)
    q_lo, q_hi, g_lo, g_hi, (Lz, Uz) = _signal_bounds(cell, c, n, alpha, cell_share)
    q_hat = cell.max(axis=1).sum() / n
    nz = onehot.sum(axis=0)
    bm = cell.argmax(axis=1)
    cells = pd.DataFrame(
        {
            "level": levels,
            "n": nz,
            "best_member": [mnames[j] for j in bm],
            "best_accuracy": np.where(nz > 0, cell.max(axis=1) / np.maximum(nz, 1), np.nan),
            "theta_max": cell.max(axis=1) / n,
            "theta_lo": Lz.max(axis=1),
            "theta_hi": Uz.max(axis=1),
        }
    )
    return SignalCertificate(
        alpha=alpha,
        n=n,
        K=K,
        J=J,
        levels=tuple(levels),
        oracle=float(X.any(axis=1).mean()),
        best_fixed=c.max() / n,
        q=Interval.of(q_hat, q_lo, q_hi, 1.0 - alpha, SIGNAL_METHOD),
        G=Interval.of(q_hat - c.max() / n, g_lo, g_hi, 1.0 - alpha, SIGNAL_METHOD),
        cell_share=cell_share,
        cells=cells,
    )


def fit_cell_rule(R, signal, fit) -> np.ndarray:
    """A per-level best-model rule: fitted on the ``fit`` items, applied to every item.

    For each level z of ``signal`` the rule picks the model with the most correct answers among
    fit items with Z = z (ties: lowest index); levels absent from the fit items get the best
    model overall on the fit items. Returns int[n] model choices (the rule is Z-measurable, so
    it belongs to any family certified for this signal).
    """
    X = _as_outcomes(R)
    n, K = X.shape
    f = np.asarray(fit)
    if f.dtype != bool or f.shape != (n,):
        raise ValueError(f"fit must be a bool mask of length n={n}")
    if not f.any():
        raise ValueError("fit selects no items")
    codes, levels = _signal_codes(signal, n, None)
    J = len(levels)
    onehot = np.zeros((n, J), dtype=np.int64)
    onehot[np.arange(n), codes] = 1
    cell = onehot[f].T @ X[f].astype(np.int64)
    seen = onehot[f].sum(axis=0) > 0
    overall = int(np.argmax(X[f].sum(axis=0)))
    rule = np.where(seen, cell.argmax(axis=1), overall)
    return rule[codes]


def length_bins(lengths, fit, n_bins: int = 4) -> np.ndarray:
    """A finite signal from a numeric prompt feature: quantile bins with edges frozen on the ``fit`` items.

    Edges are the 1/n_bins, ..., (n_bins-1)/n_bins quantiles of ``lengths`` over the fit items
    (duplicates merged), so the signal is declared without looking at any test item. Returns
    int[n] bin codes in [0, n_bins).
    """
    x = np.asarray(lengths, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.isfinite(x).all():
        raise ValueError("lengths must be a non-empty 1-d array of finite numbers")
    f = np.asarray(fit)
    if f.dtype != bool or f.shape != x.shape:
        raise ValueError(f"fit must be a bool mask of the same length as lengths ({x.size})")
    if not f.any():
        raise ValueError("fit selects no items")
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    edges = np.unique(np.quantile(x[f], np.arange(1, n_bins) / n_bins))
    return np.searchsorted(edges, x, side="right")


def frozen_text_clusters(texts, fit, n_clusters: int = 8, seed=0, max_features: int = 20000) -> np.ndarray:
    """A finite signal from prompt text: TF-IDF + k-means fitted on the ``fit`` items' text only.

    Every item (fit or not) is then assigned to its nearest centre. No outcome is used, so the
    cluster id is a valid pre-declared signal for Thm 7 on items outside ``fit``. Returns
    int[n] cluster ids in [0, n_clusters).
    """
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    t = pd.Series(list(texts), dtype=object).fillna("").astype(str).to_numpy()
    f = np.asarray(fit)
    if f.dtype != bool or f.shape != (t.size,):
        raise ValueError(f"fit must be a bool mask of the same length as texts ({t.size})")
    n_clusters = check_int(n_clusters, "n_clusters", minimum=1)
    if f.sum() < n_clusters:
        raise ValueError(f"fit selects {int(f.sum())} items, fewer than n_clusters={n_clusters}")
    rs = int(as_rng(seed).integers(2**31 - 1))
    vec = TfidfVectorizer(max_features=max_features, sublinear_tf=True, stop_words="english")
    Xf = vec.fit_transform(t[f])
    km = KMeans(n_clusters=n_clusters, n_init=3, random_state=rs).fit(Xf)
    return km.predict(vec.transform(t)).astype(int)
