"""Sentence checks of the book's prose: direction words agree with the intervals they read,
one test on one pool is quoted with one p-value, and intervals of shares lie in [0, 1].

Each check is shown able to fail on a synthetic Markdown string;
``tests/chapters/test_execute_small.py`` runs the same scanners over every executed chapter's
Markdown outputs.
"""

from __future__ import annotations

import pytest

from oraclegap import report as R
from oraclegap.stats import noise, simulate


# ---------------------------------------------------------------- (a) words against intervals
@pytest.mark.parametrize("text", [
    "the pooled vote beats the best member's own vote by +0.025 rAUC [-0.003, +0.057]",
    "on the primary task the pooled vote beats the best member's own vote by +0.034 rAUC, an "
    "interval that includes zero",
    "the soup trails the best member: −0.012 [−0.048, +0.019]",
    "a gain above zero, +0.01 [-0.02, 0.04]",
    "the router outperforms it by 1.5% [-0.5%, 3.5%]",
])
def test_direction_problems_catch_a_word_its_interval_does_not_support(text):
    assert len(R.direction_problems(text)) == 1


@pytest.mark.parametrize("text", [
    "the pooled vote beats the best member's own vote by +0.034 [+0.003, +0.057]",
    "the mixture trails it, −0.029 [−0.05, −0.01]; the soup is +0.01 [-0.02, 0.04]",
    "no interval lies above zero; the vote is +0.034 [-0.003, +0.057]",  # clause ends at ';'
    "the pooled vote cannot be told apart from the member's own vote (+0.034, an interval that "
    "includes zero)",
])
def test_direction_problems_pass_sentences_that_hold(text):
    assert R.direction_problems(text) == []


@pytest.mark.parametrize("text, n", [
    ("the 15-NN router gains -0.033 with $e_D = 0.282$", 1),  # a gain of a loss
    ("the 15-NN router gains −0.033 [−0.071, −0.004]", 1),
    ("the router gains 0.000 [-0.071, -0.004] over the anchor", 1),  # its interval is a loss
    ("the known assignment loses +0.029", 1),
    ("the router gains +0.042 [+0.012, +0.071]; the soup loses 0.033", 0),
    ("the router gains +0.006 [-0.021, +0.023]", 0),  # a point with its interval, not a claim
    ("gains over the validation-selected member range from -0.006 to +0.044", 0),  # a noun
    ("the router gains on 3 of 5 pools", 0),
])
def test_gain_words_agree_with_the_sign_they_read(text, n):
    assert len(R.direction_problems(text)) == n


def test_a_gain_word_from_compare_passes_the_scanner():
    """The chapters' form: the verb from the interval, then the signed gain with its interval."""
    words = dict(more="gains", less="loses", same="neither gains nor loses clearly:")
    for g, lo, hi in ((-0.033, -0.071, -0.004), (0.042, 0.012, 0.071), (0.006, -0.021, 0.023)):
        w = R.compare(g, 0, interval=(lo, hi), **words)
        assert w == ("loses" if hi < 0 else "gains" if lo > 0 else words["same"])
        shown = R.fmt_signed_interval(*((-g, -hi, -lo) if w == "loses" else (g, lo, hi)))
        assert R.direction_problems(f"the router {w} {shown.lstrip('+')}") == []
    # the unguarded form fails on the loss
    assert len(R.direction_problems("the router gains " + R.fmt_signed_interval(-0.033, -0.071,
                                                                                -0.004))) == 1


def test_compare_takes_its_word_from_the_interval():
    words = dict(more="beats", less="trails", same="cannot be told apart from")
    assert R.compare(0.034, 0, interval=(-0.003, 0.057), **words) == "cannot be told apart from"
    assert R.compare(0.034, 0, interval=(0.003, 0.057), **words) == "beats"
    assert R.compare(-0.03, 0, interval=(-0.05, -0.01), **words) == "trails"
    assert R.compare(0.034, 0, **words) == "beats"  # without the interval: the point decides
    with pytest.raises(R.ProseError):
        R.compare(0.034, 0, interval=(-0.003, 0.057), expect="beats", **words)
    with pytest.raises(ValueError, match="interval"):
        R.compare(0.0, 0, interval=(0.2, 0.1))
    # a sentence built with the helper passes the scanner
    w = R.compare(0.034, 0, interval=(-0.003, 0.057), more="beats", less="trails", same="ties")
    assert R.direction_problems(f"the vote {w} the member, +0.034 [-0.003, +0.057]") == []


# ---------------------------------------------------------------- (b) one test, one p-value
def test_one_test_one_p_value():
    pv = R.PValues()
    assert pv("L(0.10), re-deal, lab seed pool", 0.2421) == pytest.approx(0.2421)
    assert pv("L(0.10), re-deal, lab seed pool", 0.2423) == pytest.approx(0.2423)  # prints 0.242
    assert pv("L(0.10), re-deal, seed-aligned twin", 0.925) == pytest.approx(0.925)
    with pytest.raises(R.ProseError, match="one test, one p-value"):
        pv("L(0.10), re-deal, lab seed pool", 0.232)  # the same test, recomputed with other draws
    assert pv.conflicts([("Pass@1, re-deal", 0.001), ("Pass@1, re-deal", 0.0012)]) == []
    assert len(pv.conflicts([("L(0.10), re-deal, lab seed pool", 0.237)])) == 1
    with pytest.raises(TypeError):
        pv("", 0.1)


# ---------------------------------------------------------------- (c) shares in [0, 1]
@pytest.mark.parametrize("text, n", [
    ("a noise share of 0.871 [0.507, 1.235]", 1),
    ("the fraction recovered is 40% [-5%, 80%]", 1),
    ("a noise share of 0.626 [0.584, 0.967] and a proportion of 50% [19%, 81%]", 0),
    ("the share of prompts, 0.3, and a gain of 1.2 [0.9, 1.5]", 0),  # the interval is no share's
])
def test_share_problems(text, n):
    assert len(R.share_problems(text)) == n


def test_the_noise_share_bracket_lies_in_unit_interval():
    """Against the best single member 0 <= Delta <= G in the population; the bracket's upper side
    (split-draw O_repro, biased down, over the plug-in G) passes 1 on small pools unless cut."""
    for seed in range(3):
        pool = simulate.exchangeable(30, 4, 2, seed=seed).pool
        e = noise.decomposition(pool, n_boot=200, n_splits=10, seed=seed).estimates["noise_share"]
        assert 0.0 <= e.lo <= e.value <= e.hi <= 1.0
        assert R.share_problems(f"a noise share of {R.fmt_interval(e.value, e.lo, e.hi)}") == []


def test_a_table_column_named_a_share_holds_values_in_the_unit_interval():
    import pandas as pd

    ok = pd.DataFrame({"pool": ["a", "b"], "noise share": [0.2, 1.0], "gain": [-0.3, 2.0]})
    R.table(ok)  # a gain may be anything
    bad = pd.DataFrame({"pool": ["a", "b"], "recovered": [-0.011, 0.14]})
    with pytest.raises(R.ProseError, match="outside \\[0, 1\\]"):
        R.table(bad, columns={"pool": "pool", "recovered": "recovered share of G_b"})
    R.table(bad, columns={"pool": "pool", "recovered": "net recovered fraction of G_b"})
    with pytest.raises(R.ProseError, match="proportion"):
        R.table(pd.DataFrame({"proportion": [1.2]}))


@pytest.mark.parametrize("text, n", [
    ("one transfer per prompt is detected as often here (0.40 against the paper's 0.65).", 1),
    ("one transfer per prompt is detected less often here (0.40 against the paper's 0.65).", 0),
    ("the rate is higher here (65% against 40%); the paper's is lower (0.40 against 0.65).", 0),
    ("the rate is higher here (40% against 65%).", 1),
    ("the lower limit is positive on 3 of 4 against 4 published.", 0),
])
def test_a_comparison_word_agrees_with_the_pair_it_reads(text, n):
    assert len(R.direction_problems(text)) == n


@pytest.mark.parametrize("text, n", [
    ("Holm-corrected tests reject in at most 0.0% of pools.", 1),
    ("the certified lower limit is at most 0 in 95% of pools.", 0),
    ("as in paper Shihab et al.'s Table 3", 1),
    ("as in Shihab et al.'s Table 3 (arXiv 2607.03436)", 0),
    ("the sections (in the book), (in the book), (in the book) say", 1),
    ("at $n = 50,000$ Theorem 4 is wider", 1),
    ("at $n$ = 50,000 the interval $[0.1, 0.2]$ and $n = 50{,}000$", 0),
    ("$a$ has 1,000 items and $b$ none", 0),
])
def test_unparseable_wordings_are_reported(text, n):
    assert len(R.wording_problems(text)) == n


def test_at_most_says_zero_instead_of_a_bound_of_zero():
    assert R.at_most(0.0) == "zero" and R.at_most(0.0, zero="no") == "no"
    assert R.at_most(0.05) == R.md("at most {x:%}", x=0.05)
    assert R.wording_problems("reject in " + R.at_most(0.0, zero="no") + " pools") == []
