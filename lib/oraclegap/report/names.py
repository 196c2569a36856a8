"""Names a reader reads: the display names of code keys (benchmarks, tasks, rules, registry
names, router families), pool members' names and the human names of the null tests.
"""

from __future__ import annotations

import math
import re

#: Code keys that tables show as labels, with the names a reader reads: benchmark and task keys of
#: the released pools and the papers' tables, pool-construction rules, and the keys of
#: 2607.03436's released summaries. Registry names ("routerdc-mmlu") and router family keys
#: ("embed_knn") have their own names (:func:`display_name`).
DISPLAY_NAMES = {
    "arc_challenge": "ARC-Challenge", "arc-challenge": "ARC-Challenge", "hellaswag": "HellaSwag",
    "gsm8k": "GSM8K", "mmlu": "MMLU", "mmlu_pro": "MMLU-Pro", "mbpp": "MBPP", "winogrande": "Winogrande",
    "humaneval": "HumanEval", "humaneval_plus": "HumanEval+", "math500": "MATH-500", "math_500": "MATH-500",
    "gpqa": "GPQA", "commonsense_qa": "CommonsenseQA", "human_eval": "HumanEval", "natural_qa": "Natural Questions",
    "openbook_qa": "OpenBookQA", "trivia_qa": "TriviaQA",
    "dpp": "DPP", "kmedoids": "k-medoids", "k_medoids": "k-medoids",
    "one_per_lineage": "one member per lineage", "qwen_size_sweep": "Qwen size sweep",
    "known_p_tv": "known-rate check (TV distance)",
    "per_response": "per response", "per_policy": "per policy",
    "cost-benefit greedy (partial=3)": "cost-benefit greedy, partial enumeration",
    "cost-benefit greedy (partial=0)": "cost-benefit greedy",
}


def display_name(key):
    """The name a table shows for a code key: :data:`DISPLAY_NAMES`, else a registry name's title
    (``datasets.title``), else a router family's label; anything else is returned as it is."""
    if not isinstance(key, str):
        return key
    if key in DISPLAY_NAMES:
        return DISPLAY_NAMES[key]
    if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", key):
        from .. import datasets

        if key in set(datasets.registry()["name"]):
            return datasets.title(key)
    elif re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", key):
        from ..deploy import routers

        return routers.LABELS.get(key, key)
    return key


#: a lab policy trained with the light recipe under one seed: "primary-light-s1"
_LAB_SEED = re.compile(r"[\w-]+-light-s(\d+)")


def member_name(name) -> str:
    """The name a reader reads for a pool member: a lab seed ``primary-light-s1`` is "seed 1", the
    lab's ``base`` is "base model", and a hub name keeps its model without the organisation
    (``meta-llama/Meta-Llama-3-8B`` is "Meta-Llama-3-8B"); any other name is returned as text."""
    if name is None or (isinstance(name, float) and math.isnan(name)):
        raise ValueError(f"name must be a member's name, got {name!r}")
    text = str(name).rsplit("/", 1)[-1]
    m = _LAB_SEED.fullmatch(text)
    return f"seed {m.group(1)}" if m else "base model" if text == "base" else text


STATISTIC_NAMES = {
    "L": "oracle gap L",
    "D": "disagreement D",
    "oracle_minus_mixture": "oracle − mixture",
    "pass1": "Pass@1 oracle gap",
    "member_spread": "member spread",
    "mean_pairwise_corr": "mean pairwise correlation",
    "frac_rates_differ": "share of prompts whose rates differ by > 0.25",
}
NULL_NAMES = {"redeal": "re-deal", "margin": "margin-preserving", "label-permutation": "label permutation"}


def test_name(statistic: str, tau=None, null: str | None = None) -> str:
    """A human name for one null test: ``oracle gap L at τ = 0.10, margin-preserving``.

    Statistic names from the nulls module (``L``, ``rise_L_2_to_5``, ...) map to words; the null
    names ``redeal``/``margin`` to "re-deal"/"margin-preserving".
    """
    if statistic.startswith("rise_"):
        parts = statistic.split("_")  # rise_L_2_to_5
        name = f"rise of {parts[1]} from {parts[2]} to {parts[4]} members" if len(parts) == 5 else statistic
    else:
        name = STATISTIC_NAMES.get(statistic, statistic)
    if tau is not None and not (isinstance(tau, float) and math.isnan(tau)):
        name += f" at τ = {float(tau):.2f}"
    if null:
        name += f", {NULL_NAMES.get(null, null)}"
    return name
