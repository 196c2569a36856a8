"""An online contextual-bandit router (MixLLM-style, Wang et al. 2025; paper 002 App. H, Table 8).

Prompts arrive one at a time. For prompt t with context x_t the router picks one member a_t,
observes only that member's verdict O[t, a_t] and its cost, and updates; the reward is
r_t = O[t, a_t] - lam * C[t, a_t] / scale (a cost penalty). Two policies, each with one ridge
regression of the reward on x per member (A_a = ridge I + sum x x', b_a = sum r x):

* ``"linucb"`` -- disjoint LinUCB (Li et al. 2010): pick argmax_a theta_a' x + alpha sqrt(x' A_a^-1 x);
* ``"epsilon_greedy"`` -- with probability epsilon a uniformly random member, else argmax theta_a' x.

The loop is inherently sequential (every choice depends on all earlier verdicts); it runs
compiled (numba), with A_a^-1 kept by Sherman-Morrison updates, O(M d^2) per prompt. Ties and
exploration draw from uniforms generated up front from ``seed``, so a seed fixes the run.

Contexts: prompt embeddings, standardised and projected on at most ``n_components`` principal
axes fitted on the prompts' embeddings alone (no outcomes), plus an intercept.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from numba import njit

from .._result import Result
from .._validate import as_rng, check_int, check_prob
from .routers import check_cost, check_lambda

__all__ = ["POLICIES", "bandit_contexts", "run_bandit", "BanditRun", "regret_curve"]

POLICIES = ("linucb", "epsilon_greedy")


@njit(cache=True)
def _bandit_loop(
    X, R, Cs, lam, alpha, eps, ridge, greedy_only, u_tie, u_explore, u_arm
):  # pragma: no cover - compiled
    T, d = X.shape
    M = R.shape[1]
    Ainv = np.zeros((M, d, d))
    for a in range(M):
        for j in range(d):
            Ainv[a, j, j] = 1.0 / ridge
    b = np.zeros((M, d))
    choice = np.empty(T, dtype=np.int64)
    reward = np.empty(T)
    Ax = np.empty((M, d))
    for t in range(T):
        x = X[t]
        best, arg = -np.inf, 0
        explore = (not greedy_only) and u_explore[t] < eps
        for a in range(M):
            mean = 0.0
            quad = 0.0
            for i in range(d):
                s = 0.0
                for j in range(d):
                    s += Ainv[a, i, j] * x[j]
                Ax[a, i] = s
                mean += b[a, i] * s
                quad += x[i] * s
            score = mean + (alpha * np.sqrt(max(quad, 0.0)) if alpha > 0 else 0.0) + 1e-9 * u_tie[t, a]
            if score > best:
                best, arg = score, a
        if explore:
            arg = min(int(u_arm[t] * M), M - 1)
        r = R[t, arg] - lam * Cs[t, arg]
        choice[t] = arg
        reward[t] = r
        den = 1.0
        for i in range(d):
            den += x[i] * Ax[arg, i]
        for i in range(d):
            for j in range(d):
                Ainv[arg, i, j] -= Ax[arg, i] * Ax[arg, j] / den
            b[arg, i] += r * x[i]
    return choice, reward


def bandit_contexts(embeddings, n_components: int = 16, fit_rows=None) -> np.ndarray:
    """Standardised embeddings projected on at most ``n_components`` principal axes, plus an
    intercept column: float[n, d + 1]. The axes are fitted on ``fit_rows`` (default all prompts);
    no outcome is used."""
    E = np.asarray(embeddings, dtype=float)
    if E.ndim != 2 or E.shape[0] < 1 or not np.isfinite(E).all():
        raise ValueError(f"embeddings must be a finite float[n, d] array, got shape {E.shape}")
    n_components = check_int(n_components, "n_components", minimum=1)
    F = E if fit_rows is None else E[np.asarray(fit_rows)]
    mu, sd = F.mean(axis=0), F.std(axis=0)
    Z = (E - mu) / np.where(sd > 0, sd, 1.0)
    k = min(n_components, Z.shape[1], max(F.shape[0] - 1, 1))
    _, s, Vt = np.linalg.svd((F - mu) / np.where(sd > 0, sd, 1.0), full_matrices=False)
    P = Z @ Vt[:k].T
    P /= np.where(s[:k] > 0, s[:k] / np.sqrt(max(F.shape[0], 1)), 1.0)  # unit variance per axis
    return np.column_stack([P, np.ones(E.shape[0])])


@dataclasses.dataclass(frozen=True, repr=False)
class BanditRun(Result):
    """One pass of the bandit over a stream: the order, the choice and the reward of every step."""

    _repr_fields = ("policy", "lam", "cost_scale", "reward", "choice", "order")

    policy: str
    order: np.ndarray
    choice: np.ndarray
    reward: np.ndarray
    lam: float
    cost_scale: float

    def frame(self) -> pd.DataFrame:
        """One row per step: the step, the prompt served, the member chosen and the reward."""
        return pd.DataFrame({"step": np.arange(len(self.order)), "prompt": self.order,
                             "choice": self.choice, "reward": self.reward})


def run_bandit(
    contexts,
    O,
    cost=None,
    *,
    policy: str = "linucb",
    lam: float = 0.0,
    alpha: float = 1.0,
    epsilon: float = 0.1,
    ridge: float = 1.0,
    order=None,
    seed=0,
) -> BanditRun:
    """Run the bandit once over the prompts in ``order`` (default: a seeded random permutation).

    ``contexts`` float[n, d] (e.g. :func:`bandit_contexts`), ``O`` outcomes [n, M] in [0, 1],
    ``cost`` [n, M] or [M] per call (scaled by the dearest member's mean cost; None: no cost),
    ``lam`` the cost penalty, ``alpha`` LinUCB's width, ``epsilon`` the exploration rate,
    ``ridge`` the prior precision. Returns choices and rewards in stream order.
    """
    X = np.ascontiguousarray(contexts, dtype=float)
    A = np.ascontiguousarray(O, dtype=float)
    if X.ndim != 2 or A.ndim != 2 or X.shape[0] != A.shape[0]:
        raise ValueError(f"contexts [n, d] and O [n, M] must have the same n; got {X.shape} and {A.shape}")
    if not np.isfinite(X).all():
        raise ValueError("contexts contain NaN or infinite values")
    n, M = A.shape
    if M < 2 or (A < 0).any() or (A > 1).any():
        raise ValueError("O must hold outcomes in [0, 1] for at least two members")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    lam = check_lambda(lam)
    eps = check_prob(epsilon, "epsilon")
    if not alpha >= 0 or not ridge > 0:
        raise ValueError(f"alpha must be >= 0 and ridge > 0, got alpha={alpha!r}, ridge={ridge!r}")
    C = np.zeros((n, M)) if cost is None else check_cost(cost, n, M)
    scale = float(C.mean(axis=0).max()) or 1.0
    rng = as_rng(seed)
    ordr = rng.permutation(n) if order is None else np.asarray(order, dtype=np.int64)
    if ordr.ndim != 1 or ordr.size == 0 or ordr.min() < 0 or ordr.max() >= n:
        raise ValueError(f"order must be prompt positions in [0, {n})")
    T = ordr.size
    u_tie, u_exp, u_arm = rng.random((T, M)), rng.random(T), rng.random(T)
    ucb = policy == "linucb"
    choice, reward = _bandit_loop(
        X[ordr],
        A[ordr],
        C[ordr] / scale,
        lam,
        float(alpha) if ucb else 0.0,
        eps if not ucb else 0.0,
        float(ridge),
        ucb,
        u_tie,
        u_exp,
        u_arm,
    )
    return BanditRun(policy, ordr, choice, reward, lam, scale)


def regret_curve(run: BanditRun, O, cost=None, truth=None) -> pd.DataFrame:
    """Cumulative regret of a run, step by step.

    ``regret_fixed``: the reward the best fixed member in hindsight (over this stream) would have
    collected minus the bandit's realised reward; ``regret_oracle``: against the per-prompt best
    member (the outcome oracle). With ``truth`` (float[n, M] success probabilities of a simulated
    pool) also ``pseudo_regret``: sum_t max_a mu_ta - mu_t,a_t, with mu = truth - lam * cost.
    """
    A = np.asarray(O, dtype=float)
    n, M = A.shape
    C = np.zeros((n, M)) if cost is None else check_cost(cost, n, M)
    Rw = (A - run.lam * C / run.cost_scale)[run.order]
    got = Rw[np.arange(run.order.size), run.choice]
    fixed = Rw.sum(axis=0).argmax()
    df = pd.DataFrame(
        {
            "step": np.arange(1, run.order.size + 1),
            "regret_fixed": np.cumsum(Rw[:, fixed] - got),
            "regret_oracle": np.cumsum(Rw.max(axis=1) - got),
        }
    )
    if truth is not None:
        mu = (np.asarray(truth, dtype=float) - run.lam * C / run.cost_scale)[run.order]
        df["pseudo_regret"] = np.cumsum(mu.max(axis=1) - mu[np.arange(run.order.size), run.choice])
    return df
