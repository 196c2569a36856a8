"""Human names of registry entries (``datasets.title``), as the chapters' tables print them."""

from __future__ import annotations

import pytest

from oraclegap import datasets


def test_every_registry_entry_has_a_distinct_human_title():
    names = datasets.registry()["name"].tolist()
    titles = [datasets.title(n) for n in names]
    assert len(set(titles)) == len(names), "two entries would print under one name"
    raw_sources = ("chen2026", "routerdc-", "routerbench-", "llmrouter-", "paper002", "sim-")
    assert not [t for t in titles if t.startswith(raw_sources)]


def test_known_titles_and_the_longest_part_first():
    assert datasets.title("routerdc-gsm8k-test") == "RouterDC GSM8K test"
    assert datasets.title("routerbench-arc-challenge") == "RouterBench ARC-Challenge"
    assert datasets.title("chen2026-math500@3") == "Chen 2026 MATH-500"
    assert datasets.title("mmlu-pro") == "MMLU-Pro"
    assert datasets.title("newsource-gsm8k") == "newsource GSM8K"  # unknown source kept as written


@pytest.mark.parametrize("bad", ["", None, 3])
def test_title_rejects_a_non_name(bad):
    with pytest.raises(ValueError, match="name must be"):
        datasets.title(bad)
