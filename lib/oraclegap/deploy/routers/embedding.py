"""Router families on a prompt embedding: 000's PCA logistic router, 002's K-way correctness
predictors (multi-output logistic regression, a multi-output MLP, KMeans cluster-best), the
mechanism adaptations (cluster-then-best, matrix factorisation, a tag-aware expert router) and a
small torch encoder head on frozen embeddings."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from .base import (
    Router,
    SoftmaxRegression,
    _choice_distribution,
    _EmbedPrep,
    _fit_fractional_logistic,
    _prob_of_one,
    _quiet,
    _seed,
    _tile,
)

__all__ = [
    "EmbedPCALogReg",
    "MultiLogReg",
    "MLPRouter",
    "KMeansBest",
    "ClusterBest",
    "MatrixFactorization",
    "TagExpert",
    "EncoderHead",
]


class _EmbeddingRouter(Router):
    """A router on the prompt embedding, standardised and reduced by PCA(``n_components``) with
    the standardisation and the PCA fitted on the calibration prompts (:class:`_EmbedPrep`)."""

    needs = ("embeddings",)

    def _fit_embedding(self, X) -> np.ndarray:
        """Fit the standardisation and PCA on the calibration embeddings; the reduced embeddings."""
        self.prep_ = _EmbedPrep(self.n_components, _seed(self.random_state)).fit(X.embeddings)
        return self._embedding(X)

    def _embedding(self, X) -> np.ndarray:
        """The prompts' embeddings standardised and reduced as on calibration."""
        return self.prep_.transform(X.embeddings)


class EmbedPCALogReg(_EmbeddingRouter):
    """Embedding -> standardise -> PCA(64) -> multinomial logistic regression on the choice
    distribution (000's linear embedding router)."""

    family = "embed_pca_logreg"
    label = "embedding PCA logistic"
    description = "softmax regression from the embedding (PCA to 64) to each member's share of the successes"

    def __init__(self, n_components: int = 64, C: float = 1.0, max_iter: int = 300, random_state=0):
        self.n_components = n_components
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X, Y):
        Z = self._fit_embedding(X)
        rows, T = _choice_distribution(Y)
        self.model_ = SoftmaxRegression(C=self.C, max_iter=self.max_iter).fit(Z[rows], T) if rows.any() else None

    def _utility(self, X):
        if self.model_ is None:
            return _tile(self.means_, len(X))
        return self.model_.predict_proba(self._embedding(X))


# ====================================================================== 002's K-way predictors and adaptations
class MultiLogReg(_EmbeddingRouter):
    """Multi-output logistic regression (002): one logistic regression per member on the
    standardised PCA(64) embedding, fitted to its fractional target by weighted duplication
    (rows (z, 1) with weight y and (z, 0) with weight 1 - y)."""

    family = "multi_logreg"
    label = "logistic multi-output"
    description = "one logistic regression per member: its success from the embedding (PCA to 64)"

    def __init__(self, n_components: int = 64, C: float = 1.0, max_iter: int = 300, random_state=0):
        self.n_components = n_components
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X, Y):
        from sklearn.linear_model import LogisticRegression

        Z = self._fit_embedding(X)

        def make():
            return LogisticRegression(C=self.C, max_iter=self.max_iter)

        with _quiet():
            self.models_ = [_fit_fractional_logistic(Z, Y[:, m], make) for m in range(Y.shape[1])]

    def _utility(self, X):
        Z = self._embedding(X)
        return np.stack([_prob_of_one(g, Z) for g in self.models_], axis=1)


class MLPRouter(_EmbeddingRouter):
    """Multi-output MLP (002): scikit-learn's ``MLPRegressor`` from the standardised PCA(64)
    embedding to all K targets at once (squared loss; early stopping on a 10% validation share of
    the calibration prompts when there are at least 50), predictions clipped to [0, 1]."""

    family = "mlp"
    label = "MLP multi-output"
    description = "one hidden layer from the embedding (PCA to 64) to every member's success; squared loss"

    def __init__(self, hidden_layer_sizes=(128,), alpha: float = 1e-3, max_iter: int = 200, early_stopping: bool = True,
                 n_components: int = 64, random_state=0):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.max_iter = max_iter
        self.early_stopping = early_stopping
        self.n_components = n_components
        self.random_state = random_state

    def _fit(self, X, Y):
        from sklearn.neural_network import MLPRegressor

        Z = self._fit_embedding(X)
        with _quiet():
            self.model_ = MLPRegressor(hidden_layer_sizes=tuple(self.hidden_layer_sizes), alpha=self.alpha, max_iter=self.max_iter,
                                       early_stopping=bool(self.early_stopping) and Z.shape[0] >= 50,
                                       random_state=_seed(self.random_state)).fit(Z, Y)

    def _utility(self, X):
        U = self.model_.predict(self._embedding(X))
        return np.clip(U.reshape(len(X), -1), 0.0, 1.0)


class KMeansBest(_EmbeddingRouter):
    """KMeans cluster-best (002): k-means on the standardised PCA(64) embedding (fitted on
    calibration); a prompt gets its cluster's mean calibration target per member."""

    family = "kmeans_best"
    label = "KMeans cluster-best"
    description = "k-means clusters of the embedding; each prompt to its cluster's best member on calibration"

    def __init__(self, n_clusters: int = 8, n_components: int = 64, random_state=0):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.random_state = random_state

    def _fit(self, X, Y):
        from sklearn.cluster import KMeans

        Z = self._fit_embedding(X)
        kc = int(min(self.n_clusters, Z.shape[0]))
        with _quiet():
            self.km_ = KMeans(n_clusters=kc, n_init=3, random_state=_seed(self.random_state)).fit(Z)
        lab = self.km_.labels_
        counts = np.bincount(lab, minlength=kc)
        sums = np.zeros((kc, Y.shape[1]))
        np.add.at(sums, lab, Y)
        self.cluster_means_ = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], self.means_[None, :])

    def _utility(self, X):
        return self.cluster_means_[self.km_.predict(self._embedding(X))]


class ClusterBest(KMeansBest):
    """Cluster-then-best, an Avengers-style adaptation: many k-means clusters (default 32) on the
    embedding; a prompt scores each member by its mean calibration target averaged over the
    ``top_k`` nearest cluster centres, and goes to the best-scoring member."""

    family = "cluster_best"
    label = "cluster-then-best"
    description = "32 k-means clusters of the embedding; the member best over the prompt's nearest clusters"

    def __init__(self, n_clusters: int = 32, top_k: int = 3, n_components: int = 64, random_state=0):
        self.n_clusters = n_clusters
        self.top_k = top_k
        self.n_components = n_components
        self.random_state = random_state

    def _utility(self, X):
        Z = self._embedding(X)
        d = self.km_.transform(Z)
        t = int(min(self.top_k, d.shape[1]))
        near = np.argsort(d, axis=1, kind="stable")[:, :t]
        return self.cluster_means_[near].mean(axis=1)


class MatrixFactorization(_EmbeddingRouter):
    """Matrix factorisation of prompt x member correctness, an EmbedLLM / IRT-Router-style
    adaptation: logit P(R_im = 1) = <A z_i, v_m> + b_m + w . z_i, with z_i the standardised
    PCA(64) embedding, a learned linear prompt encoder A (rank ``rank``), learned member vectors
    v_m and biases b_m, and a prompt-difficulty term w . z_i (the IRT form a_m . theta_i - d_m is
    the same bilinear model). Fitted by L-BFGS on the mean Bernoulli log-loss of the targets plus
    (l2 / 2)(||A||^2 + ||V||^2 + ||w||^2)."""

    family = "matrix_factorization"
    label = "matrix factorisation"
    description = "a bilinear model of correctness: a learned prompt encoding times one vector per member"

    def __init__(self, rank: int = 16, n_components: int = 64, l2: float = 1e-3, max_iter: int = 300, random_state=0):
        self.rank = rank
        self.n_components = n_components
        self.l2 = l2
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X, Y):
        from scipy.optimize import minimize
        from scipy.special import expit

        Z = self._fit_embedding(X)
        n, p = Z.shape
        M = Y.shape[1]
        r = int(self.rank)
        lam = float(self.l2)
        sizes = [p * r, M * r, M, p]

        def unpack(th):
            A, V, b, w = np.split(th, np.cumsum(sizes)[:-1])
            return A.reshape(p, r), V.reshape(M, r), b, w

        def f(th):
            A, V, b, w = unpack(th)
            H = Z @ A
            L = H @ V.T + b + (Z @ w)[:, None]
            loss = (np.logaddexp(0, L) - Y * L).mean() + 0.5 * lam * ((A * A).sum() + (V * V).sum() + (w * w).sum())
            G = (expit(L) - Y) / (n * M)
            gA = Z.T @ (G @ V) + lam * A
            gV = G.T @ H + lam * V
            gb = G.sum(axis=0)
            gw = Z.T @ G.sum(axis=1) + lam * w
            return loss, np.concatenate([gA.ravel(), gV.ravel(), gb, gw])

        rng = np.random.default_rng(_seed(self.random_state))
        m0 = np.clip(self.means_, 1e-3, 1 - 1e-3)
        th0 = np.concatenate([0.1 * rng.standard_normal(p * r) / math.sqrt(p), 0.1 * rng.standard_normal(M * r),
                              np.log(m0 / (1 - m0)), np.zeros(p)])
        res = minimize(f, th0, jac=True, method="L-BFGS-B", options={"maxiter": int(self.max_iter)})
        self.A_, self.V_, self.b_, self.w_ = unpack(res.x)

    def _utility(self, X):
        from scipy.special import expit

        Z = self._embedding(X)
        return expit((Z @ self.A_) @ self.V_.T + self.b_ + (Z @ self.w_)[:, None])


class TagExpert(_EmbeddingRouter):
    """A Zooter-style adaptation: the router is distilled from softmax-normalised targets
    softmax(Y_i / temperature) over members (reward distillation), by a softmax regression on
    the standardised PCA(64) embedding joined with one-hot task tags (the dataset identity,
    when present) -- a tag-aware expert router."""

    family = "tag_expert"
    label = "tag expert"
    description = "softmax regression on the embedding (and the task tag, where a pool has one)"

    def __init__(self, temperature: float = 0.1, n_components: int = 64, C: float = 1.0, max_iter: int = 300, random_state=0):
        self.temperature = temperature
        self.n_components = n_components
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def _design(self, X, Z: np.ndarray) -> np.ndarray:
        """The reduced embeddings Z joined with the one-hot task tags of the prompts of X."""
        if self.tags_ is None or X.dataset is None:
            return Z
        onehot = (np.asarray(X.dataset, dtype=object)[:, None] == self.tags_[None, :]).astype(float)
        return np.hstack([Z, onehot])

    def _fit(self, X, Y):
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature!r}")
        Z = self._fit_embedding(X)
        self.tags_ = None if X.dataset is None else np.array(sorted(set(map(str, X.dataset))), dtype=object)
        L = Y / self.temperature
        L = L - L.max(axis=1, keepdims=True)
        T = np.exp(L)
        T /= T.sum(axis=1, keepdims=True)
        self.model_ = SoftmaxRegression(C=self.C, max_iter=self.max_iter).fit(self._design(X, Z), T)

    def _utility(self, X):
        return self.model_.predict_proba(self._design(X, self._embedding(X)))


class EncoderHead(Router):
    """A small torch encoder head with K correctness outputs on the frozen (standardised)
    embedding: Linear(d, hidden) -> ReLU -> Dropout -> Linear(hidden, K), trained with the
    Bernoulli log-loss of all K targets by Adam on CPU, one thread, seeded (002's strongest
    router, here on frozen embeddings). Needs torch."""

    needs = ("embeddings",)
    family = "encoder_head"
    label = "encoder, M heads"
    description = "one hidden layer with dropout from the whole embedding (no PCA) to every member's success; log-loss"
    optional = "torch"

    def __init__(self, hidden: int = 128, epochs: int = 40, lr: float = 3e-3, weight_decay: float = 1e-4,
                 dropout: float = 0.1, batch_size: int = 256, random_state=0):
        self.hidden = hidden
        self.epochs = epochs
        self.lr = lr
        self.weight_decay = weight_decay
        self.dropout = dropout
        self.batch_size = batch_size
        self.random_state = random_state

    @contextlib.contextmanager
    def _one_thread(self):
        import torch

        old = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield torch
        finally:
            torch.set_num_threads(old)

    def _fit(self, X, Y):
        try:
            import torch  # noqa: F401
        except ImportError:
            raise ValueError("router 'encoder_head' needs torch (pip install '.[lab]' or '.[embed]')") from None
        self.prep_ = _EmbedPrep(None, 0).fit(X.embeddings)
        Z = self.prep_.transform(X.embeddings)
        with self._one_thread() as torch, torch.random.fork_rng(devices=[]):  # seeded, global torch RNG left untouched
            g = torch.Generator().manual_seed(_seed(self.random_state))
            torch.manual_seed(_seed(self.random_state))
            net = torch.nn.Sequential(torch.nn.Linear(Z.shape[1], int(self.hidden)), torch.nn.ReLU(),
                                      torch.nn.Dropout(float(self.dropout)), torch.nn.Linear(int(self.hidden), Y.shape[1]))
            opt = torch.optim.Adam(net.parameters(), lr=float(self.lr), weight_decay=float(self.weight_decay))
            Zt = torch.tensor(Z, dtype=torch.float32)
            Yt = torch.tensor(Y, dtype=torch.float32)
            lossf = torch.nn.BCEWithLogitsLoss()
            n = Zt.shape[0]
            bs = int(min(self.batch_size, n))
            net.train()
            for _ in range(int(self.epochs)):
                perm = torch.randperm(n, generator=g)
                for s in range(0, n, bs):
                    idx = perm[s : s + bs]
                    opt.zero_grad()
                    loss = lossf(net(Zt[idx]), Yt[idx])
                    loss.backward()
                    opt.step()
            net.eval()
        self.net_ = net

    def _utility(self, X):
        Z = self.prep_.transform(X.embeddings)
        with self._one_thread() as torch, torch.no_grad():
            return torch.sigmoid(self.net_(torch.tensor(Z, dtype=torch.float32))).double().numpy()
