"""The lab's configuration: base pretraining, the two GRPO recipes, the training pools, soups and sampling plan.

Paper 000 (App. B.1) trains five seeds with a light recipe (rank-16 LoRA on attention and MLP
projections, 500 steps, 400 training prompts, eight responses per prompt, no KL term) and two
seeds per dataset with a stronger one (three times the steps, the full training list, rank 64
with scaling 128). The lab keeps those ratios at CPU size: :data:`LIGHT` and :data:`STRONGER`
differ exactly in steps (x3), training prompts (400 vs all) and LoRA rank/scaling (16/32 vs
64/128; both scale the update by 2). Seeds are the only field that differs between members
of a pool; :func:`check_pool_hashes` verifies it from the recorded config hashes.

:func:`full_config` is what ``make lab`` builds; :func:`reduced_config` is a miniature of the
same pipeline (tiny base, a few steps, few prompts) that the tests rebuild and compare with the
committed reference output, byte for byte.
"""

from __future__ import annotations

import dataclasses

from .grpo import Recipe
from .pretrain import PretrainConfig, config_hash

__all__ = [
    "LIGHT",
    "STRONGER",
    "TrainSpec",
    "SoupSpec",
    "SampleSpec",
    "LabConfig",
    "full_config",
    "reduced_config",
    "check_pool_hashes",
]

LIGHT = Recipe(name="light", steps=150, n_prompts=400, rank=16, alpha=32, lr=5e-4)
STRONGER = Recipe(name="stronger", steps=450, n_prompts=None, rank=64, alpha=128, lr=5e-4)


@dataclasses.dataclass(frozen=True)
class TrainSpec:
    """A training pool: ``seeds`` of ``recipe`` on ``task`` from base ``base``; members are named ``{name}-s{seed}``."""

    name: str
    base: str
    task: str
    recipe: Recipe
    seeds: tuple[int, ...]

    def member(self, seed: int) -> str:
        return f"{self.name}-s{seed}"

    @property
    def members(self) -> list[str]:
        return [self.member(s) for s in self.seeds]


@dataclasses.dataclass(frozen=True)
class SoupSpec:
    """A soup: the mean LoRA update of every member of training pool ``of``."""

    name: str
    of: str


@dataclasses.dataclass(frozen=True)
class SampleSpec:
    """One sampling job: ``policies`` (plus the base model when ``base_policy``) on the prompts of ``splits`` x ``tasks``, ``k`` draws each.

    ``draw_seeds`` is the rollouts' draw-seed mode (:func:`oraclegap.rollouts.generate`):
    ``"per-policy"`` (each policy its own seeds: independent draws, what paper 000's nulls
    assume; every pool of the lab but one) or ``"aligned"`` (draw j of a prompt has one seed
    under every policy: paper 001's seed-aligned protocol; the teaching pool ``primary-aligned``).
    """

    name: str
    base: str
    tasks: tuple[str, ...]
    splits: tuple[str, ...]
    policies: tuple[str, ...]
    k: int
    base_policy: bool = True
    draw_seeds: str = "per-policy"


@dataclasses.dataclass(frozen=True)
class LabConfig:
    """Everything ``make lab`` builds: tasks seed, bases, training pools, soups, sampling jobs and the pools they form.

    ``pools`` maps a pool name to the sampling jobs whose prompts it stacks (every job of one
    pool must cover the same policies).
    """

    name: str
    task_seed: int
    bases: dict
    train: tuple[TrainSpec, ...]
    soups: tuple[SoupSpec, ...]
    samples: tuple[SampleSpec, ...]
    pools: dict
    sample_seed: int = 0
    temperature: float = 1.0
    max_tokens: int = 6
    prompt_limit: int | None = None  # per (task, split): keep the first N prompts (reduced configurations)

    def train_spec(self, name: str) -> TrainSpec:
        for t in self.train:
            if t.name == name:
                return t
        raise ValueError(f"unknown training pool {name!r}; this config has {[t.name for t in self.train]}")

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["bases"] = {k: v.to_dict() for k, v in self.bases.items()}
        return d

    def hash(self) -> str:
        return config_hash(self.to_dict())


def full_config() -> LabConfig:
    """The configuration ``make lab`` builds into ``data/lab/``."""
    bases = {
        "main": PretrainConfig(base="main", steps=1000, seed=0),
        "small": PretrainConfig(base="small", steps=1000, seed=0),
    }
    seeds5, seeds2 = (1, 2, 3, 4, 5), (1, 2)
    train = (
        TrainSpec("primary-light", "main", "primary", LIGHT, seeds5),
        TrainSpec("secondary-light", "main", "secondary", LIGHT, seeds5),
        TrainSpec("primary-stronger", "main", "primary", STRONGER, seeds2),
        TrainSpec("secondary-stronger", "main", "secondary", STRONGER, seeds2),
        TrainSpec("small-primary-light", "small", "primary", LIGHT, seeds5),
    )
    soups = (SoupSpec("primary-light-soup", "primary-light"), SoupSpec("secondary-light-soup", "secondary-light"))
    members = {t.name: tuple(t.members) for t in train}
    main_all = (
        members["primary-light"]
        + members["secondary-light"]
        + members["primary-stronger"]
        + members["secondary-stronger"]
        + ("primary-light-soup", "secondary-light-soup")
    )
    samples = (
        # every main-base policy on the union of both tasks' validation and test prompts (chapters 02-03)
        SampleSpec("cross", "main", ("primary", "secondary"), ("validation", "test"), main_all, 16),
        # the replications of Table A12: extra prompts, 64 responses, the smaller base
        SampleSpec("primary-extra", "main", ("primary",), ("extra_test",), members["primary-light"], 16),
        SampleSpec("primary-k64", "main", ("primary",), ("test",), members["primary-light"], 64),
        SampleSpec("secondary-k64", "main", ("secondary",), ("test",), members["secondary-light"], 64),
        SampleSpec("small", "small", ("primary",), ("validation", "test"), members["small-primary-light"], 16),
        # the same seed pool sampled seed-aligned (common random numbers), for teaching what alignment does to the nulls
        SampleSpec("primary-aligned", "main", ("primary",), ("test",), members["primary-light"], 16, draw_seeds="aligned"),
    )
    pools = {s.name: (s.name,) for s in samples}
    return LabConfig("full", 0, bases, train, soups, samples, pools)


def reduced_config() -> LabConfig:
    """A miniature of the full pipeline (small base, 40 pretraining steps, 4 GRPO steps, 12 prompts x 4 draws) for tests."""
    bases = {"small": PretrainConfig(base="small", steps=40, batch=32, seed=0)}
    rec = dataclasses.replace(LIGHT, steps=4, n_prompts=16, prompts_per_step=4)
    train = (TrainSpec("primary-light", "small", "primary", rec, (1, 2)),)
    soups = (SoupSpec("primary-light-soup", "primary-light"),)
    samples = (
        SampleSpec("seed", "small", ("primary",), ("validation",), ("primary-light-s1", "primary-light-s2", "primary-light-soup"), 4),
    )
    return LabConfig("reduced", 0, bases, train, soups, samples, {"seed": ("seed",)}, prompt_limit=12)


def check_pool_hashes(logs: dict[str, dict]) -> str:
    """Check that every member of a training pool shares one config hash without seed fields; return it.

    ``logs`` maps member names to their ``training_log.json`` contents. Raises ``ValueError``
    naming the members whose configuration differs in anything but the seed.
    """
    if not logs:
        raise ValueError("logs is empty; a training pool needs at least one member")
    hashes = {name: log["config_hash_without_seed"] for name, log in logs.items()}
    ref = next(iter(hashes.values()))
    bad = sorted(n for n, h in hashes.items() if h != ref)
    if bad:
        raise ValueError(f"members differ in more than their seed fields: {bad} (hashes {sorted(set(hashes.values()))})")
    full = {log["config_hash"] for log in logs.values()}
    if len(full) != len(logs):
        raise ValueError("two members share a full config hash: their seeds are not distinct")
    return ref
