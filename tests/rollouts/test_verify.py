"""Answer extraction and verification (oraclegap.rollouts.verify, tasks).

Hand-made cases for each extractor, math-verify equivalences (fractions, \\frac, boxed, units),
and the real gold solutions of GSM8K and MATH-500 (benchmarks_raw): every gold solution's own
final answer verifies, a perturbed one does not.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

import numpy as np
import pytest

from oraclegap.rollouts import get_task, register_task, verify
from oraclegap.rollouts.tasks import TASKS, Task


# ---------------------------------------------------------------------- numbers / GSM8K
@pytest.mark.parametrize(
    "text, want",
    [
        ("so 3 + 4 = 7\n#### 7", "7"),
        ("#### 1,234", "1234"),
        ("The total is $1,234.50.", "1234.50"),
        ("first 12 then 15 #### 18 and later 99", "18"),
        ("answer: -5", "-5"),
        ("x was 3. Then 4.", "4"),
        ("no digits here", None),
        ("#### nothing", None),
    ],
)
def test_extract_gsm8k(text, want):
    assert verify.extract_gsm8k(text) == want


def test_parse_number_and_numeric_check():
    assert verify.parse_number("$1,000") == Fraction(1000)
    assert verify.parse_number("2/3") == Fraction(2, 3)
    assert verify.parse_number("7.") == Fraction(7)
    assert verify.parse_number("seven") is None
    assert verify.check_numeric("18.0", "18")
    assert verify.check_numeric("1234.50", "1234.5")
    assert not verify.check_numeric("19", "18")
    loose = verify.numeric_checker(rel_tol=0.01)
    assert loose("100.5", "100") and not loose("102", "100")
    with pytest.raises(ValueError, match="rel_tol"):
        verify.numeric_checker(rel_tol=-1)
    with pytest.raises(ValueError, match="not a number"):
        verify.check_numeric("1", "abc")


def test_gsm8k_task_on_a_solution_gold():
    task = get_task("gsm8k")
    gold = "She has 3 + 4 = <<3+4=7>>7 apples.\n#### 7"
    assert task.verdict("I think it is 7.", gold).correct
    assert task.verdict("#### 7.00", gold).correct
    v = task.verdict("I cannot tell", gold)
    assert (v.parsed, v.correct, v.answer) == (False, False, None)
    assert not task.verdict("#### 8", gold).correct


# ---------------------------------------------------------------------- integers
@pytest.mark.parametrize(
    "text, want",
    [("3+4=7", "7"), ("x = -12 done", "-12"), ("3-4", "4"), ("007", "7"), ("1,000 apples", "1000"), ("2.5", None), ("", None)],
)
def test_extract_integer(text, want):
    assert verify.extract_integer(text) == want


def test_integer_task():
    t = get_task("integer")
    assert t.verdict("the sum is 12", "12").correct
    assert not t.verdict("the sum is 12.5", "12").correct
    assert not t.verdict("13", "12").correct
    with pytest.raises(ValueError, match="not an integer"):
        t.verdict("12", "twelve")


# ---------------------------------------------------------------------- math-verify
@pytest.mark.parametrize(
    "response, gold",
    [
        ("so the answer is \\boxed{\\frac{1}{2}}", "0.5"),
        ("\\boxed{\\dfrac12}", "\\frac{1}{2}"),
        ("\\boxed{0.5}", "1/2"),
        ("\\boxed{2/4}", "\\frac12"),
        ("thus $x = \\boxed{5\\text{ cm}}$", "5"),
        ("\\boxed{5 \\mbox{ inches}}", "5"),
        ("\\boxed{90^\\circ}", "90"),
        ("\\boxed{\\$18.90}", "18.9"),
        ("\\boxed{(3, \\pi/2)}", "\\left( 3, \\frac{\\pi}{2} \\right)"),
        ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}"),
    ],
)
def test_math_equivalences(response, gold):
    v = get_task("math").verdict(response, gold)
    assert v.parsed and v.correct, (response, gold, v)


@pytest.mark.parametrize(
    "response, gold",
    [("\\boxed{\\frac{1}{3}}", "0.5"), ("\\boxed{6\\text{ cm}}", "5"), ("\\boxed{(3, \\pi)}", "(3, \\frac{\\pi}{2})")],
)
def test_math_inequivalences(response, gold):
    v = get_task("math").verdict(response, gold)
    assert v.parsed and not v.correct


def test_math_parse_failure_is_wrong_and_counted():
    v = get_task("math").verdict("I do not know.", "5")
    assert v == verify.Verdict(None, False, False)


# ---------------------------------------------------------------------- choices, exact
@pytest.mark.parametrize(
    "text, want",
    [
        ("The answer is (B).", "B"),
        ("Answer: C", "C"),
        ("I pick \\boxed{D}", "D"),
        ("Between (A) and (C), I choose (C)", "C"),
        ("A. is wrong, so B.", "B"),
        ("no letter", None),
        ("The answer is Z", None),
    ],
)
def test_extract_choice(text, want):
    assert verify.extract_choice(text) == want


def test_choice_and_exact_tasks():
    mc = get_task("multiple_choice")
    assert mc.verdict("answer is (b)", "B").parsed is False  # lower-case is not an option letter
    assert mc.verdict("Answer: B", "(B)").correct
    ex = get_task("exact")
    assert ex.verdict("reasoning...\nAnswer: Paris.", "paris").correct
    assert ex.verdict("line one\n  The  Eiffel Tower \n", "the eiffel tower").correct
    assert not ex.verdict("Answer: Lyon", "Paris").correct
    assert ex.verdict("   ", "Paris") == verify.Verdict(None, False, False)


def test_register_task_in_one_place():
    t = register_task("last_word_test", extract=lambda s: (s.split() or [None])[-1], check=lambda a, g: a == g)
    try:
        assert get_task("last_word_test") is t and "last_word_test" in TASKS
        assert t.verdict("the end", "end").correct
        with pytest.raises(ValueError, match="already registered"):
            register_task(t)
        register_task(t, overwrite=True)
    finally:
        from oraclegap.rollouts import tasks as _tasks

        _tasks._REGISTRY.pop("last_word_test", None)
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        get_task("nope")
    with pytest.raises(ValueError, match="prompt"):
        Task("bad", "no field", verify.extract_exact, verify.check_exact)
    with pytest.raises(TypeError, match="TASKS|read|item|support"):
        TASKS["x"] = t  # the registry view is read-only


def test_templates_render_fields():
    t = get_task("math")
    out = t.render({"id": "1", "prompt": "What is {x}?", "answer": "1"})
    assert out.startswith("What is {x}?") and "\\boxed{}" in out
    custom = Task("t", "Q: {prompt} ({topic})", verify.extract_exact, verify.check_exact)
    assert custom.render({"prompt": "a", "topic": "b"}) == "Q: a (b)"
    with pytest.raises(ValueError, match="topic"):
        custom.render({"id": "p1", "prompt": "a"})


# ---------------------------------------------------------------------- real gold answers
def _jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_gsm8k_gold_solutions_verify(external_dir):
    path = external_dir / "benchmarks_raw" / "gsm8k" / "test.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    rows = _jsonl(path)
    task = get_task("gsm8k")
    final = re.compile(r"\n?####.*$", re.S)
    for r in rows:
        gold = r["answer"]
        num = verify.gsm8k_gold(gold)
        assert task.verdict(gold, gold).correct, r["question"][:60]  # the solution itself
        # the same solution ending in prose, with a thousands separator where it applies
        as_text = final.sub("", gold) + f"\nSo the answer is {float(num):,.10g}."
        assert task.verdict(as_text, gold).correct, (num, as_text[-40:])
        assert not task.verdict(f"#### {Fraction(num) + 1}", gold).correct
    assert len(rows) == 1319


def test_math500_gold_solutions_verify(external_dir):
    path = external_dir / "benchmarks_raw" / "math500" / "test.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    rows = _jsonl(path)
    task = get_task("math")
    for i, r in enumerate(rows):  # every gold solution's boxed answer equals its gold answer
        v = task.verdict(r["solution"], r["answer"])
        assert v.parsed and v.correct, (i, r["answer"], v.answer)
    assert len(rows) == 500
    # perturbed answers (gold + 1) fail, on a random fifth of the items (time)
    pick = np.random.default_rng(0).choice(len(rows), size=100, replace=False)
    wrong = [not task.verdict(f"The answer is \\boxed{{{rows[i]['answer']} + 1}}.", rows[i]["answer"]).correct for i in pick]
    assert all(wrong), [rows[i]["answer"] for i, w in zip(pick, wrong, strict=True) if not w]
