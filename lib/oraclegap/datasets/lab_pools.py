"""The policy lab's pools as registry entries (``data/lab/``, rebuilt by ``make lab``), and
``lab_slice`` for one task, split and role of a lab pool.

Every lab pool is read through :func:`oraclegap.lab.load_pool` (per-response confidences and
token counts in ``meta``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..pool import Pool
from .registry import Entry, _meta, _register, lab_dir

LAB_PROV = "the project's policy lab (oraclegap.lab, `make lab`): GRPO + LoRA policies on a tiny Llama base, trained on CPU"


def _lab(stored: str, *, dataset: str | None = None, split: str | None = None, policies=None):
    """A builder for a lab pool, optionally restricted to prompts of one ``dataset`` and ``split``
    and to ``policies`` (a predicate on the policy table)."""

    def build(entry: Entry, seed=None) -> Pool:
        from .. import lab

        pool = lab.load_pool(stored, lab_dir())
        keep = np.ones(pool.n_prompts, dtype=bool)
        if dataset is not None:
            keep &= pool.prompts["dataset"].astype(str).to_numpy() == dataset
        if split is not None:
            keep &= pool.prompts["split"].astype(str).to_numpy() == split
        cols = None if policies is None else policies(pool.policies).to_numpy()
        sub = pool.select(prompts=keep, policies=cols)
        return dataclasses.replace(sub, meta={**sub.meta, **_meta(entry, stored_pool=stored, dataset_filter=dataset,
                                                               split_filter=split)})

    return build


def _light(task: str):
    return lambda t: (t["role"] == "member") & (t["recipe"] == "light") & (t["dataset"] == task)


for _name, _stored, _shape, _desc, _kw in (
    ("lab-cross", "cross", "(960, 17, 16)", "validation and test prompts of both lab tasks; base, 5 light and 2 stronger seeds per task, both soups", {}),
    ("lab-seed-primary", "cross", "(240, 5, 16)", "the seed pool: primary test prompts, the five light primary seeds (Table 1's analog)",
     {"dataset": "primary", "split": "test", "policies": _light("primary")}),
    ("lab-seed-primary-val", "cross", "(240, 5, 16)", "the seed pool on primary validation prompts (for selecting members and fitting routers)",
     {"dataset": "primary", "split": "validation", "policies": _light("primary")}),
    ("lab-seed-secondary", "cross", "(240, 5, 16)", "secondary test prompts, the five light secondary seeds",
     {"dataset": "secondary", "split": "test", "policies": _light("secondary")}),
    ("lab-seed-primary-aligned", "primary-aligned", "(240, 5, 16)",
     "the seed pool of lab-seed-primary sampled with seed-aligned draws (draw j: one seed under every member; "
     "for teaching common random numbers)", {"policies": _light("primary")}),
    ("lab-primary-k64", "primary-k64", "(240, 6, 64)", "primary test prompts, base and five light primary seeds, 64 responses", {}),
    ("lab-secondary-k64", "secondary-k64", "(240, 6, 64)", "secondary test prompts, base and five light secondary seeds, 64 responses", {}),
    ("lab-primary-extra", "primary-extra", "(361, 6, 16)", "361 extra primary test prompts, base and five light primary seeds", {}),
    ("lab-small", "small", "(480, 6, 16)", "primary validation and test prompts, the smaller base and its five light seeds", {}),
):
    _register(Entry(_name, "lab", _shape, _desc, LAB_PROV, "MIT (made by the project)",
                    files=(f"pools/{_stored}/manifest.json",), builder=_lab(_stored, **_kw)))


def lab_slice(pool: Pool, task: str, split: str, role: str = "member") -> Pool:
    """Prompts of one lab ``task`` and ``split`` of a lab pool (e.g. ``load("lab-cross")``), with
    the policies of one ``role``: the task's light-recipe seeds (``"member"``), its soup
    (``"soup"``), or the base model (``"base"``, shared by every task)."""
    for col, table in (("role", pool.policies), ("dataset", pool.policies), ("recipe", pool.policies),
                       ("dataset", pool.prompts), ("split", pool.prompts)):
        if col not in table.columns:
            raise ValueError(f"pool is not a lab pool: its {'policy' if table is pool.policies else 'prompt'} "
                             f"table has no {col!r} column")
    pol = pool.policies
    keep_pol = ((pol["role"] == role) & ((pol["dataset"] == task) | (role == "base"))
                & ((pol["recipe"] == "light") | (role != "member")))
    keep = (pool.prompts["dataset"] == task).to_numpy() & (pool.prompts["split"] == split).to_numpy()
    if not keep.any():
        raise ValueError(f"no prompt of task {task!r} in split {split!r}; tasks: "
                         f"{sorted(pool.prompts['dataset'].dropna().unique())}, splits: {sorted(pool.prompts['split'].dropna().unique())}")
    if not keep_pol.any():
        raise ValueError(f"no policy with role {role!r} for task {task!r}; roles: {sorted(pol['role'].dropna().unique())}")
    return pool.select(prompts=keep, policies=keep_pol.to_numpy())
