"""The cascade (deploy.cascade): routing, cost per call, the calibration choices, known truths."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap.deploy.cascade import Cascade, cascade_curve, cascade_route, pareto_chain
from oraclegap.deploy.features import RouterInputs


def test_route_by_hand():
    """Three prompts, chain (0, 1, 2): stop where the score reaches the threshold; pay every call made."""
    S = np.array([[0.9, 0.0, 0.0], [0.2, 0.7, 0.0], [0.1, 0.1, 0.1]])
    C = np.array([1.0, 10.0, 100.0])
    member, paid, calls = cascade_route(S, [0, 1, 2], C, 0.5)
    assert member.tolist() == [0, 1, 2] and calls.tolist() == [1, 2, 3]
    assert paid.tolist() == [1.0, 11.0, 111.0]
    m, p, k = cascade_route(S, [0, 1, 2], C, [0.0, 0.8, 1.1])
    assert m[:, 0].tolist() == [0, 0, 0] and m[:, 2].tolist() == [
        2,
        2,
        2,
    ]  # t = 0 never escalates; t > 1 always
    assert m[:, 1].tolist() == [0, 2, 2] and p[:, 1].tolist() == [1.0, 111.0, 111.0]


def test_curve_is_monotone_in_cost():
    rng = np.random.default_rng(0)
    S, O = rng.random((200, 3)), rng.random((200, 3)) < 0.6
    C = rng.random((200, 3)) * [1, 5, 20]
    cur = cascade_curve(S, [0, 1, 2], O, C, np.linspace(0, 1, 11))
    assert (np.diff(cur["cost"]) >= -1e-12).all() and (np.diff(cur["calls"]) >= -1e-12).all()
    assert cur["escalated"].iloc[0] == 0 and cur["calls"].iloc[0] == 1


def test_pareto_chain():
    acc, cost = np.array([0.5, 0.7, 0.6, 0.9, 0.8]), np.array([1.0, 2.0, 3.0, 10.0, 10.0])
    assert pareto_chain(acc, cost).tolist() == [0, 1, 3]  # 2 is dominated by 1, 4 by 3
    assert pareto_chain(acc, cost, max_len=2).tolist() == [0, 3]


def _inputs(n, rng):
    return RouterInputs(embeddings=rng.standard_normal((n, 4)))


def test_cheap_member_always_right_never_escalates():
    rng = np.random.default_rng(1)
    n = 300
    O = np.column_stack([np.ones(n), rng.random(n) < 0.5, np.ones(n)])
    C = np.array([1.0, 3.0, 10.0])
    X = _inputs(n, rng)
    cas = Cascade("embed_knn", lam=0.0).fit(X.take(np.arange(200)), O[:200], C)
    run = cas.run(X.take(np.arange(200, n)), C)
    assert cas.chain_[0] == 0
    assert (run.calls == 1).all() and (run.member == 0).all() and np.allclose(run.paid, 1.0)


def test_useless_cheap_member_is_skipped_or_escalated():
    """The cheap member is never right: every prompt ends at a member that can be right."""
    rng = np.random.default_rng(2)
    n = 400
    O = np.column_stack([np.zeros(n), rng.random(n) < 0.8])
    O[0, 0] = 1  # the cheap member is right once, so it is on the front
    C = np.array([1.0, 4.0])
    X = _inputs(n, rng)
    cas = Cascade("embed_knn").fit(X.take(np.arange(300)), O[:300], C)
    run = cas.run(X.take(np.arange(300, n)), C)
    assert (run.member == 1).all()
    assert np.allclose(run.paid[run.calls == 2], 5.0)  # the escalated prompts pay both calls


def test_confidence_scorer_escalates_on_low_confidence():
    n = 100
    conf = np.column_stack([np.r_[np.full(50, 0.9), np.full(50, 0.1)], np.full(n, 0.5)])
    X = RouterInputs(confidence=conf, n_prompts=n)
    O = np.column_stack([np.r_[np.ones(50), np.zeros(50)], np.ones(n)])
    cas = Cascade("confidence", chain=[0, 1], threshold=0.5).fit(X, O, [1.0, 2.0])
    run = cas.run(X, [1.0, 2.0])
    assert (run.member[:50] == 0).all() and (run.member[50:] == 1).all()
    with pytest.raises(ValueError, match="confidence"):
        Cascade("confidence").fit(RouterInputs(n_prompts=n), O, [1.0, 2.0])


def test_bad_inputs():
    with pytest.raises(ValueError, match="chain"):
        cascade_route(np.zeros((3, 2)), [0, 5], [1.0, 2.0], 0.5)
    with pytest.raises(ValueError, match="repeat"):
        cascade_route(np.zeros((3, 2)), [0, 0], [1.0, 2.0], 0.5)
    with pytest.raises(ValueError, match="cost"):
        cascade_route(np.zeros((3, 2)), [0, 1], [1.0, -2.0], 0.5)
    with pytest.raises(ValueError, match="not fitted"):
        Cascade().run(RouterInputs(n_prompts=2), [1.0, 2.0])
