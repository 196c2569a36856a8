"""The online bandit router (deploy.bandit) and the binary routers (deploy.binary): known truths."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap.deploy import bandit as B
from oraclegap.deploy.binary import BinaryRouter, pair_labels


def _topic_pool(T=4000, M=4, seed=0):
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, M, T)
    X = np.eye(M)[topic]
    p = np.full((T, M), 0.3)
    p[np.arange(T), topic] = 0.8
    return X, (rng.random((T, M)) < p).astype(float), p


def test_converges_to_a_dominant_arm():
    rng = np.random.default_rng(3)
    T, M = 3000, 4
    ctx = B.bandit_contexts(rng.standard_normal((T, 8)), 4)
    p = np.tile([0.3, 0.9, 0.3, 0.3], (T, 1))
    O = (rng.random((T, M)) < p).astype(float)
    for policy in B.POLICIES:
        run = B.run_bandit(ctx, O, policy=policy, seed=4)
        tail = (run.choice[-600:] == 1).mean()
        assert tail > (0.97 if policy == "linucb" else 0.9), (policy, tail)


def test_regret_is_sublinear_on_a_stationary_pool():
    """LinUCB on a linear stationary pool: pseudo-regret of the second half well below that of the first."""
    X, O, p = _topic_pool()
    run = B.run_bandit(X, O, order=np.arange(len(O)), seed=1)
    r = B.regret_curve(run, O, truth=p)["pseudo_regret"].to_numpy()
    h = r.size // 2
    assert r[-1] - r[h - 1] < 0.5 * r[h - 1]
    assert r[-1] / r.size < 0.02  # per-step regret far below the 0.5 gap of a wrong arm
    eg = B.run_bandit(X, O, order=np.arange(len(O)), policy="epsilon_greedy", epsilon=0.1, seed=1)
    re = B.regret_curve(eg, O, truth=p)["pseudo_regret"].to_numpy()
    # constant exploration pays about epsilon * (M - 1) / M * 0.5 per step: linear, as it should
    assert re[-1] / re.size == pytest.approx(0.1 * 0.75 * 0.5, abs=0.012)


def test_seeded_and_cost_penalty_moves_to_the_cheap_arm():
    X, O, _ = _topic_pool(2000)
    a = B.run_bandit(X, O, seed=5)
    b = B.run_bandit(X, O, seed=5)
    assert np.array_equal(a.choice, b.choice) and np.array_equal(a.order, b.order)
    cost = np.array([1.0, 1.0, 1.0, 0.01])
    heavy = B.run_bandit(X, O, cost, lam=5.0, seed=5)
    assert (heavy.choice[-500:] == 3).mean() > 0.9  # the penalty dwarfs any accuracy difference
    rc = B.regret_curve(heavy, O, cost)
    assert (np.diff(rc["regret_oracle"]) >= -1e-12).all()  # against the per-prompt best it only grows


def test_bandit_bad_inputs():
    X, O, _ = _topic_pool(50)
    with pytest.raises(ValueError, match="policy"):
        B.run_bandit(X, O, policy="thompson")
    with pytest.raises(ValueError, match="same n"):
        B.run_bandit(X[:10], O)
    with pytest.raises(ValueError, match="order"):
        B.run_bandit(X, O, order=[0, 99])


def test_pair_labels_by_hand():
    s, w = np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, 0.0, 1.0, 0.0])
    assert pair_labels(s, w, "routellm").tolist() == [0.5, 0.0, 1.0, 0.5]  # ties count half
    assert pair_labels(s, w, "hybridllm").tolist() == [1.0, 0.0, 1.0, 1.0]  # ties: the weak one suffices
    with pytest.raises(ValueError, match="style"):
        pair_labels(s, w, "other")


def test_binary_router_learns_where_the_weak_member_suffices():
    rng = np.random.default_rng(6)
    n = 1200
    E = rng.standard_normal((n, 6))
    easy = E[:, 0] > 0
    strong = rng.random(n) < 0.9
    weak = np.where(easy, strong, rng.random(n) < 0.1)
    # population labels: easy prompts tie (routellm 1/2, hybridllm 1); hard ones 0.10 and 0.19
    for style, (l_easy, l_hard) in {"routellm": (0.5, 0.10), "hybridllm": (1.0, 0.19)}.items():
        r = BinaryRouter(style, n_components=6).fit(E[:800], strong[:800], weak[:800])
        ws = r.weak_suffices(E[800:])
        assert ws[easy[800:]].mean() == pytest.approx(l_easy, abs=0.15)
        assert ws[~easy[800:]].mean() == pytest.approx(l_hard, abs=0.15)
        sent = r.to_strong(E[800:], (l_easy + l_hard) / 2)
        assert sent[~easy[800:]].mean() > 0.8 and sent[easy[800:]].mean() < 0.3
