"""Binary strong/weak routers on two-member pools (paper 002 App. Q; RouteLLM, Ong et al. 2025;
HybridLLM, Ding et al. 2024): a learned probability that the weak member suffices, and a
threshold on it.

For a designated pair (strong s, weak w) with per-prompt success rates p_s, p_w (k = 1: the
verdicts), both routers fit a logistic regression on the prompt embedding to a soft label and
send a prompt to the weak member when the predicted P(weak suffices) >= threshold:

* ``"routellm"`` -- RouteLLM's preference label: P(strong wins) with ties counted half,
  p_s (1 - p_w) + (1/2)[p_s p_w + (1 - p_s)(1 - p_w)] (independent draws), so P(weak suffices) =
  1 - P(strong wins);
* ``"hybridllm"`` -- HybridLLM's label: P(q_w >= q_s - t) with relaxation t = 0, i.e. P(weak
  draw is at least as good as the strong draw) = 1 - p_s (1 - p_w).

With one verdict per member the two labels differ only on ties (both right or both wrong: 1/2
for RouteLLM, 1 for HybridLLM). Soft labels are fitted by weighting every prompt's two label
copies (y = 1 with weight label, y = 0 with weight 1 - label). The sweep over thresholds is
RouteLLM's call-share curve (PGR, APGR in :mod:`oraclegap.deploy.evaluate`).
"""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .._validate import check_int

__all__ = ["STYLES", "pair_labels", "BinaryRouter"]

STYLES = ("routellm", "hybridllm")


def pair_labels(p_strong, p_weak, style: str) -> np.ndarray:
    """The soft label P(weak suffices) of each prompt for ``style`` (see the module docstring)."""
    s, w = np.asarray(p_strong, dtype=float), np.asarray(p_weak, dtype=float)
    if s.shape != w.shape or s.ndim != 1 or ((s < 0) | (s > 1) | (w < 0) | (w > 1)).any():
        raise ValueError("p_strong and p_weak must be equal-length 1-d rates in [0, 1]")
    if style == "routellm":
        tie = s * w + (1 - s) * (1 - w)
        return 1.0 - (s * (1 - w) + 0.5 * tie)
    if style == "hybridllm":
        return 1.0 - s * (1 - w)
    raise ValueError(f"style must be one of {STYLES}, got {style!r}")


class BinaryRouter:
    """Logistic P(weak suffices) on standardised, PCA-reduced embeddings for one ``style``."""

    def __init__(self, style: str = "routellm", *, n_components: int = 32, C: float = 1.0, seed: int = 0):
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}, got {style!r}")
        self.style, self.n_components, self.C, self.seed = style, n_components, C, seed

    def fit(self, embeddings, p_strong, p_weak):
        """Fit on calibration embeddings [n, d] and the pair's success rates (or verdicts) [n]."""
        E = np.asarray(embeddings, dtype=float)
        if E.ndim != 2 or E.shape[0] != np.size(p_strong):
            raise ValueError(f"embeddings must be [n, d] with n = len(p_strong), got {E.shape}")
        y = pair_labels(p_strong, p_weak, self.style)
        k = min(check_int(self.n_components, "n_components", minimum=1), E.shape[1], max(E.shape[0] - 1, 1))
        self.model_ = make_pipeline(
            StandardScaler(), PCA(k, random_state=self.seed), LogisticRegression(C=self.C, max_iter=500)
        )
        Xd = np.vstack([E, E])
        yd = np.r_[np.ones(len(y)), np.zeros(len(y))]
        wd = np.r_[y, 1.0 - y]
        keep = wd > 0
        if np.unique(yd[keep]).size < 2:  # every label certain on one side: a constant score
            self.constant_ = float(y.mean())
            return self
        self.constant_ = None  # type: ignore[assignment]  # fitted model instead of a constant
        self.model_.fit(Xd[keep], yd[keep], logisticregression__sample_weight=wd[keep])
        return self

    def weak_suffices(self, embeddings) -> np.ndarray:
        """Predicted P(weak suffices) per prompt."""
        if not hasattr(self, "model_"):
            raise ValueError("this BinaryRouter is not fitted yet; call fit(...) first")
        E = np.asarray(embeddings, dtype=float)
        if self.constant_ is not None:
            return np.full(E.shape[0], self.constant_)
        return self.model_.predict_proba(E)[:, 1]

    def to_strong(self, embeddings, threshold: float) -> np.ndarray:
        """bool[n]: the prompts sent to the strong member (P(weak suffices) < threshold)."""
        return self.weak_suffices(embeddings) < float(threshold)
