"""Named random streams (ground floor): every random stream the library derives from a user's seed
by a fixed salt, one registry entry each, so that two draws of one computation never share a
stream by accident and each salt says what it draws.

Stream ``name`` of seed ``s`` (with the integers ``index`` that the entry takes, e.g. a task
family's position) is ``numpy.random.default_rng([s, *index, salt])``, the salt being
``STREAMS[name].salt``: :func:`stream` returns that Generator and :func:`seed_sequence` the
``numpy.random.SeedSequence`` it starts from (for code that spawns child sequences). The salts
are unique within each floor: the deployment floor's streams (``deploy.*``) take the seed of an
evaluation, the policy lab's (``lab.*``) the seed of a lab run or task table, so a salt may
serve one stream of each.

Functions that take a ``seed`` and draw one stream use :func:`oraclegap._validate.as_rng`
instead; this registry is for the streams that one seed feeds several of.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["Stream", "STREAMS", "stream", "seed_sequence"]


@dataclasses.dataclass(frozen=True)
class Stream:
    """One named stream: its ``salt`` (the last entry of its seed sequence), how many integer
    ``indices`` come between the seed and the salt, and what it ``draws``."""

    salt: int
    draws: str
    indices: int = 0


#: Every salted stream of the library, by name (the floor first).
STREAMS: dict[str, Stream] = {
    # deployment (deploy/): the seed of a router evaluation or a regime comparison
    "deploy.split_half": Stream(1, "the random 50/50 calibration/test split of split='half' "
                                   "(deploy.evaluate.protocol)"),
    "deploy.cv_folds": Stream(2, "the prompt permutation that deals prompts into cross-fitting "
                                 "folds (deploy.evaluate.protocol)"),
    "deploy.router_bootstrap": Stream(3, "the sequence spawned into the prompt bootstrap and the "
                                         "paired comparisons of evaluate_routers "
                                         "(deploy.evaluate.compare)"),
    "deploy.pgr_ties": Stream(4, "the random order that breaks tied strong-minus-weak scores on "
                                 "the PGR curves of evaluate_routers (deploy.evaluate.compare)"),
    "deploy.cascade_folds": Stream(5, "the fold permutation of a cascade's out-of-fold scorer "
                                      "(deploy.cascade)"),
    "deploy.bandit_order": Stream(7, "the order in which the online bandit meets the prompts, "
                                     "calibration first when warm-started (deploy.regimes)"),
    "deploy.bandit_choices": Stream(8, "the bandit's own tie-breaking and exploration draws "
                                       "(deploy.regimes)"),
    "deploy.binary_ties": Stream(9, "the random order that breaks tied scores of the binary "
                                    "strong/weak routers (deploy.regimes)"),
    "deploy.binary_bootstrap": Stream(10, "the prompt bootstrap of the binary routers' APGR "
                                          "(deploy.regimes)"),
    "deploy.regime_bootstrap": Stream(11, "the prompt bootstrap of the regimes' policy table "
                                          "(deploy.regimes.evaluate_policies)"),
    # the policy lab (lab/): the seed of a GRPO run or of the task table
    "lab.grpo_prompt_order": Stream(1, "the prompt permutations that GRPO steps take their "
                                       "prompts from (lab.grpo)"),
    "lab.grpo_sampling": Stream(2, "the seed of the torch generator that samples GRPO's "
                                   "completions (lab.grpo)"),
    "lab.task_problems": Stream(7, "the problems drawn for task family j (the index) of the "
                                   "fixed prompt table (lab.tasks.build_tasks)", indices=1),
    "lab.pretrain_examples": Stream(11, "the endless supervised examples of pretraining "
                                        "(lab.tasks.stream)"),
}


def _entropy(seed, name: str, index: tuple) -> list[int]:
    if name not in STREAMS:
        raise ValueError(f"unknown random stream {name!r}; the streams are {sorted(STREAMS)}")
    entry = STREAMS[name]
    if len(index) != entry.indices:
        raise ValueError(f"stream {name!r} takes {entry.indices} index value(s) after the seed, "
                         f"got {len(index)}")
    out = []
    for what, v in (("seed", seed), *((f"index {i}", x) for i, x in enumerate(index))):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"stream {name!r}: the {what} must be a non-negative integer, got {v!r}")
        out.append(int(v))
    return [*out, entry.salt]


def seed_sequence(seed, name: str, *index) -> np.random.SeedSequence:
    """``numpy.random.SeedSequence([seed, *index, salt])`` of stream ``name`` (see :data:`STREAMS`)."""
    return np.random.SeedSequence(_entropy(seed, name, index))


def stream(seed, name: str, *index) -> np.random.Generator:
    """The Generator of stream ``name`` of ``seed``: ``numpy.random.default_rng([seed, *index,
    salt])`` with the stream's salt from :data:`STREAMS` (``index``: the integers the entry takes)."""
    return np.random.default_rng(_entropy(seed, name, index))
