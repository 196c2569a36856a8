"""The registry of named random streams (`oraclegap._rng`): one salt per stream within a floor,
and each stream the seed sequence its call site draws from."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from oraclegap._rng import STREAMS, seed_sequence, stream

#: The seed sequence of each stream as its call site spells it: [seed, *index, salt].
CALL_SITES = {
    "deploy.split_half": lambda s: [s, 1],
    "deploy.cv_folds": lambda s: [s, 2],
    "deploy.router_bootstrap": lambda s: [s, 3],
    "deploy.pgr_ties": lambda s: [s, 4],
    "deploy.cascade_folds": lambda s: [s, 5],
    "deploy.bandit_order": lambda s: [s, 7],
    "deploy.bandit_choices": lambda s: [s, 8],
    "deploy.binary_ties": lambda s: [s, 9],
    "deploy.binary_bootstrap": lambda s: [s, 10],
    "deploy.regime_bootstrap": lambda s: [s, 11],
    "lab.grpo_prompt_order": lambda s: [s, 1],
    "lab.grpo_sampling": lambda s: [s, 2],
    "lab.task_problems": lambda s, j: [s, j, 7],
    "lab.pretrain_examples": lambda s: [s, 11],
}


def test_salts_are_unique_within_each_floor():
    by_floor = collections.defaultdict(list)
    for name, entry in STREAMS.items():
        by_floor[name.split(".")[0]].append(entry.salt)
    assert set(by_floor) == {"deploy", "lab"}
    for floor, salts in by_floor.items():
        repeated = sorted(s for s, c in collections.Counter(salts).items() if c > 1)
        assert not repeated, f"salts used twice on the {floor} floor: {repeated}"


def test_every_stream_says_what_it_draws():
    for name, entry in STREAMS.items():
        assert entry.draws.strip() and entry.indices >= 0, name


@pytest.mark.parametrize("name", sorted(STREAMS))
@pytest.mark.parametrize("seed", [0, 3, 2**40 + 5])
def test_stream_reproduces_the_call_sites_sequence(name, seed):
    assert set(CALL_SITES) == set(STREAMS)
    index = tuple(range(2, 2 + STREAMS[name].indices))
    spelled = CALL_SITES[name](seed, *index)
    np.testing.assert_array_equal(stream(seed, name, *index).random(64),
                                  np.random.default_rng(spelled).random(64))
    ss = seed_sequence(seed, name, *index)
    assert ss.entropy == np.random.SeedSequence(spelled).entropy
    children = [np.random.default_rng(c).integers(2**62, size=4) for c in ss.spawn(2)]
    spelled_children = [np.random.default_rng(c).integers(2**62, size=4)
                        for c in np.random.SeedSequence(spelled).spawn(2)]
    np.testing.assert_array_equal(children, spelled_children)


def test_streams_of_one_seed_differ():
    draws = {name: stream(0, name, *([1] * STREAMS[name].indices)).integers(2**62, size=4).tolist()
             for name in STREAMS if name.startswith("deploy.")}
    assert len({tuple(d) for d in draws.values()}) == len(draws)


@pytest.mark.parametrize("call, match", [
    (lambda: stream(0, "deploy.no_such_stream"), "unknown random stream"),
    (lambda: stream(0, "lab.task_problems"), "takes 1 index value"),
    (lambda: stream(0, "deploy.cv_folds", 3), "takes 0 index value"),
    (lambda: stream(-1, "deploy.cv_folds"), "seed must be a non-negative integer"),
    (lambda: stream(1.5, "deploy.cv_folds"), "seed must be a non-negative integer"),
    (lambda: stream(True, "deploy.cv_folds"), "seed must be a non-negative integer"),
    (lambda: seed_sequence(0, "lab.task_problems", -2), "index 0 must be a non-negative integer"),
])
def test_bad_requests_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()
