"""The verdict table (oraclegap.audit.verdict.RULES): each rule's predicate on its own, on numbers
edited from real audits, and the order in which the rules are tried."""

from __future__ import annotations

import copy

import pytest

from oraclegap import audit
from oraclegap.audit import verdict_text
from oraclegap.audit.verdict import RULES, Facts, findings, first_rule
from oraclegap.stats import simulate


@pytest.fixture(scope="module")
def base16():
    """An exchangeable pool at k = 16 (neither null rejects): the numbers the k > 1 edits start from."""
    return audit.run_audit(simulate.exchangeable(300, 5, 16, seed=3).pool, small=True).to_json()


@pytest.fixture(scope="module")
def base1():
    """An exchangeable pool at k = 1: the numbers the k = 1 edits start from."""
    return audit.run_audit(simulate.exchangeable(400, 5, 1, seed=8).pool, small=True).to_json()


# ---------------------------------------------------------------------------- edits
def _edit(base, *edits):
    j = copy.deepcopy(base)
    for e in edits:
        e(j)
    return j


def nulls_(rd, mg, det=None):
    """Set the thresholds where each null rejects (by index); detected: both, unless given."""
    def f(j):
        keys = list(j["coverage"]["taus"])
        j["nulls"]["redeal_taus"] = [keys[i] for i in rd]
        j["nulls"]["margin_taus"] = [keys[i] for i in mg]
        j["nulls"]["detected_taus"] = [keys[i] for i in (sorted(set(rd) & set(mg)) if det is None else det)]
    return f


def certified_(flag, which=None):
    """Set whether the gap is certified at every level, or at the levels ``which`` (the others: not)."""
    def f(j):
        for i, lev in enumerate(j["certificates"]["levels"].values()):
            lev["certified"] = flag if which is None or i in which else not flag
    return f


def luck_(flag):
    def f(j):
        j["noise"]["luck"] = flag
    return f


def router_(beat):
    """A quick router that beats at the certificate levels with these indices."""
    def f(j):
        keys = list(j["certificates"]["levels"])
        beats = [keys[i] for i in beat]
        j["router"] = {"available": True, "family": "embed_knn", "n_test": 10, "beats_at": beats,
                       "levels": {key: {"accuracy": 0.6, "baseline_accuracy": 0.5, "baseline_policy": "m0",
                                        "difference": 0.1, "diff_lo": 0.01, "diff_hi": 0.2, "p_mcnemar": 0.01,
                                        "p_holm": 0.02, "e_D": 0.1, "break_even": 0.3, "beats": key in beats}
                                  for key in keys}}
    return f


def quality_(flag):
    """Set whether the exact member-quality test rejects."""
    def f(j):
        j["nulls"]["quality"]["reject"] = flag
        j["nulls"]["quality"]["p"] = 0.001 if flag else 0.5
    return f


def no_gap_(j):
    for row in j["coverage"]["taus"].values():
        row["D"] = 0.0


def _holds(name, j) -> bool:
    rule = next(r for r in RULES if r.name == name)
    return rule.holds(Facts(j))


# ---------------------------------------------------------------------------- one test per predicate
def test_no_gap(base16, base1):
    for base in (base16, base1):
        assert _holds("no-gap", _edit(base, no_gap_))
        assert not _holds("no-gap", base)
    j = _edit(base16, no_gap_)
    next(iter(j["coverage"]["taus"].values()))["D"] = 0.01  # one threshold with a disagreement prompt
    assert not _holds("no-gap", j)


def test_k1_not_certified(base1, base16):
    assert _holds("k1-not-certified", _edit(base1, certified_(False)))
    assert not _holds("k1-not-certified", _edit(base1, certified_(True)))
    assert not _holds("k1-not-certified", _edit(base16, certified_(False)))  # k > 1: the nulls decide


def test_k1_recoverable(base1, base16):
    assert _holds("k1-recoverable", _edit(base1, certified_(True), router_([0])))
    assert not _holds("k1-recoverable", _edit(base1, certified_(True), router_([])))  # the router does not beat
    assert not _holds("k1-recoverable", _edit(base1, certified_(False), router_([0])))  # nothing certified
    assert not _holds("k1-recoverable", _edit(base16, certified_(True), router_([0])))


def test_k1_certified(base1, base16):
    assert _holds("k1-certified", _edit(base1, certified_(True)))
    assert not _holds("k1-certified", _edit(base1, certified_(False)))
    assert not _holds("k1-certified", _edit(base16, certified_(True)))


def test_no_rejection(base16, base1):
    assert _holds("no-rejection", _edit(base16, nulls_([], []), quality_(False)))
    assert not _holds("no-rejection", _edit(base16, nulls_([0], []), quality_(False)))
    assert not _holds("no-rejection", _edit(base16, nulls_([], [0]), quality_(False)))
    assert not _holds("no-rejection", _edit(base16, nulls_([], []), quality_(True)))  # the members' quality differs
    assert not _holds("no-rejection", base1)  # k = 1: no null ran, the certificates decide


def test_quality_only(base16):
    """quality-only: the quality test rejects and the margin null nowhere; the re-deal null of L,
    which has no power against quality, does not decide it."""
    assert _holds("quality-only", _edit(base16, nulls_([], []), quality_(True)))
    assert _holds("quality-only", _edit(base16, nulls_([0, 1], []), quality_(True)))
    assert not _holds("quality-only", _edit(base16, nulls_([0, 1], [2]), quality_(True)))  # a margin rejection
    assert not _holds("quality-only", _edit(base16, nulls_([0, 1], []), quality_(False)))  # re-deal alone


def test_never_both(base16):
    assert _holds("never-both", _edit(base16, nulls_([0], [1])))
    assert _holds("never-both", _edit(base16, nulls_([], [1])))  # the margin null alone
    assert not _holds("never-both", _edit(base16, nulls_([0, 1], [1])))  # both at tau 1
    assert _holds("never-both", _edit(base16, nulls_([0], []), quality_(False)))  # the re-deal null alone


def test_recoverable(base16):
    both = nulls_([0, 1, 2, 3], [0, 1, 2, 3])
    assert _holds("recoverable", _edit(base16, both, certified_(True), router_([1])))
    assert not _holds("recoverable", _edit(base16, both, certified_(False), router_([1])))
    assert not _holds("recoverable", _edit(base16, both, certified_(True, [0]), router_([1])))  # beats where uncertified
    assert not _holds("recoverable", _edit(base16, nulls_([0], [0]), certified_(True), router_([1])))  # not detected there


def test_luck(base16):
    both = nulls_([0], [0])
    assert _holds("luck", _edit(base16, both, luck_(True)))
    assert not _holds("luck", _edit(base16, both, luck_(False)))
    assert not _holds("luck", _edit(base16, nulls_([], []), luck_(True)))  # luck without detection is not the rule


def test_certified(base16):
    assert _holds("certified", _edit(base16, nulls_([2], [2]), certified_(True, [2])))
    assert not _holds("certified", _edit(base16, nulls_([2], [2]), certified_(True, [1])))  # certified elsewhere
    assert not _holds("certified", _edit(base16, nulls_([], []), certified_(True)))


def test_detected(base16):
    assert _holds("detected", _edit(base16, nulls_([1], [1])))
    assert not _holds("detected", _edit(base16, nulls_([1], [0])))


# ---------------------------------------------------------------------------- the order
ORDER_CASES = {  # rule name: (base, edits) on which it is the first rule that holds
    "no-gap": ("base16", (nulls_([0], [0]), certified_(True), luck_(True), no_gap_)),
    "k1-not-certified": ("base1", (certified_(False), router_([0]))),
    "k1-recoverable": ("base1", (certified_(True), router_([0]))),
    "k1-certified": ("base1", (certified_(True), router_([]))),
    "no-rejection": ("base16", (nulls_([], []), quality_(False), certified_(True), luck_(True), router_([0]))),
    "quality-only": ("base16", (nulls_([0, 1], [], det=[0]), quality_(True), certified_(True), luck_(True))),
    "never-both": ("base16", (nulls_([0], [1]), certified_(True), luck_(True))),
    "recoverable": ("base16", (nulls_([0, 1], [0, 1]), certified_(True), luck_(True), router_([1]))),
    "luck": ("base16", (nulls_([0, 1], [0, 1]), certified_(True), luck_(True), router_([2]))),
    "certified": ("base16", (nulls_([0, 1], [0, 1]), certified_(True, [1]), luck_(False))),
    "detected": ("base16", (nulls_([0, 1], [0, 1]), certified_(False), luck_(False))),
}


def test_every_rule_has_an_order_case_and_a_template():
    assert [r.name for r in RULES] == list(ORDER_CASES) == list(verdict_text.TEMPLATES)
    assert len({r.name for r in RULES}) == len(RULES)
    assert {r.code for r in RULES} == set(audit.VERDICTS)
    assert all(r.doc for r in RULES)  # each predicate says what it means


@pytest.mark.parametrize("name", list(ORDER_CASES))
def test_rule_order(name, request):
    """On its edit the rule holds, every earlier rule does not, and the verdict gives its code
    (later rules may hold too: the order decides)."""
    base, edits = ORDER_CASES[name]
    j = _edit(request.getfixturevalue(base), *edits)
    f = Facts(j)
    i = [r.name for r in RULES].index(name)
    assert RULES[i].holds(f)
    assert not any(r.holds(f) for r in RULES[:i]), [r.name for r in RULES[:i] if r.holds(f)]
    assert first_rule(f).name == name
    v = audit.verdict(j)
    assert v.code == RULES[i].code and v.code in v.findings
    words = verdict_text.TEMPLATES[name](f)
    assert v.headline == words.headline and list(v.reasons) == words.reasons and list(v.next_steps) == words.steps
    for text in (v.headline, *v.reasons, *v.next_steps):
        assert "None" not in text and "nan" not in text.lower()


def test_later_rules_yield_to_earlier_ones(base16):
    """Where several rules hold the first gives the code: recoverable before luck before certified."""
    j = _edit(base16, nulls_([0, 1], [0, 1]), certified_(True), luck_(True), router_([0]))
    f = Facts(j)
    assert all(_holds(n, j) for n in ("recoverable", "luck", "certified", "detected"))
    assert first_rule(f).name == "recoverable"


def test_findings_follow_the_path(base16, base1):
    j = _edit(base16, nulls_([0, 1], [0, 1]), certified_(True, [1]), luck_(True))
    j["power"]["current"]["state"] = "low"
    f = Facts(j)
    assert findings(f, first_rule(f)) == ("low-power", "luck", "detected", "certified", "luck")
    assert audit.verdict(j).findings == ("low-power", "luck", "detected", "certified")  # each once, in order
    j["power"]["current"]["state"] = "uncertain"
    assert audit.verdict(_edit(j, nulls_([0], []), quality_(True))).findings == ("power-uncertain", "luck",
                                                                                  "quality-only")
    assert audit.verdict(_edit(j, no_gap_)).findings == ("no-gap",)
    k1 = _edit(base1, certified_(True))
    assert audit.verdict(k1).findings == ("k1", "luck-not-excluded")


@pytest.mark.parametrize("state", ["low", "uncertain"])
def test_planner_steps_only_where_no_threshold_has_both_nulls_rejecting(base16, state):
    """With power low or uncertain, the k > 1 codes reached with no threshold where both nulls
    reject give the planner's steps; the codes reached through such a threshold give their own
    steps, and the planner's sizes stay in the power section (as the module docstring says)."""
    without = {"no-rejection", "quality-only", "never-both"}
    seen = set()
    for name, (base, edits) in ORDER_CASES.items():
        if base != "base16" or name == "no-gap":
            continue
        j = _edit(base16, *edits)
        j["power"]["current"]["state"] = state
        plan = verdict_text._plan_steps(j)
        assert plan  # the planner names sizes on this pool
        steps = audit.verdict(j).next_steps
        if name in without:
            assert all(step in steps for step in plan), (name, steps)
        else:
            assert bool(j["nulls"]["detected_taus"]) and not set(plan) & set(steps), (name, steps)
        seen.add(name)
    assert without < seen and {"recoverable", "luck", "certified", "detected"} < seen


def test_exchangeable_k1_pool_is_not_reported_certified(base1):
    """At k = 1 exchangeable members have a certified outcome-oracle gap (the oracle
    collects the luck of M single draws); the code says luck is not excluded, and the headline
    names the responses per prompt the planner says would decide it."""
    assert base1["certificates"]["levels"]["outcome"]["certified"]  # the gap of pure luck is certified
    v = audit.verdict(base1)
    assert v.code == base1["verdict"]["code"] == "luck-not-excluded" and "certified" not in v.findings
    plan = base1["power"]["plan_k"]
    req = plan["required"]["redeal"]
    row = next(r for r in plan["curve"] if r["null"] == "redeal" and r["k"] == (req or max(plan["grid"])))
    assert f"k = {row['k']} responses per prompt" in v.headline and f"{row['reject_rate']:.3f}" in v.headline
    assert ("more than k =" in v.headline) == (req is None)
    with_router = _edit(base1, router_([0]))  # a held-out router that beats: a claim the split can test
    assert audit.verdict(with_router).code == "certified-recoverable"


def test_no_rule_for_an_impossible_pool(base16):
    j = copy.deepcopy(base16)
    j["pool"]["k"] = 0
    with pytest.raises(ValueError, match="no verdict rule applies"):
        audit.verdict(j)


# ---------------------------------------------------------------------------- the words: LaTeX and one break-even
def _verdict_cases(base16, base1):
    return {"certified": _edit(base16, nulls_([0], [0]), certified_(True), router_([]), luck_(False)),
            "recoverable": _edit(base16, nulls_([0], [0]), certified_(True), router_([0])),
            "detected": _edit(base16, nulls_([0], [0]), certified_(False), luck_(False)),
            "luck": _edit(base16, nulls_([0], [0]), certified_(False), luck_(True)),
            "quality-only": _edit(base16, nulls_([0], []), quality_(True)),
            "no-rejection": base16,
            "k1-certified": _edit(base1, certified_(True), router_([])),
            "k1-recoverable": _edit(base1, certified_(True), router_([0])),
            "k1-not-certified": _edit(base1, certified_(False))}


def test_latex_writes_the_symbols_and_leaves_code_alone():
    t = verdict_text.latex("At tau = 0.3 (L = 0.1 on D = 0.2), e_D < L/D = 0.5; Delta/G_exp = 0.6 and "
                           "G_out = 0.2; collect k >= 2, not `oraclegap audit --tau 0.3`; member model-L = 3")
    assert t == ("At $\\tau$ = 0.3 ($L$ = 0.1 on $D$ = 0.2), $e_D < L/D$ = 0.5; $\\Delta/G_{\\exp}$ = 0.6 and "
                 "$G_{\\mathrm{out}}$ = 0.2; collect $k \\ge 2$, not `oraclegap audit --tau 0.3`; member model-L = 3")
    assert verdict_text.latex("no symbols here") == "no symbols here"
    with pytest.raises(TypeError, match="text"):
        verdict_text.latex(None)


def test_callouts_are_latex_the_json_plain_and_one_break_even_each(base16, base1):
    import re

    from oraclegap.audit.display import verdict_markdown

    for name, j in _verdict_cases(base16, base1).items():
        v = audit.verdict(j)
        assert first_rule(Facts(j)).name == name
        plain = " ".join([v.headline, *v.reasons, *v.next_steps])
        assert "$" not in plain, name  # the JSON and the CLI keep plain text
        md = verdict_markdown(v)
        prose = re.sub(r"`[^`]*`|\$[^$]*\$", "", md)  # outside code and math
        assert not re.search(r"\b(tau|Delta|G_out|G_exp|e_D|L/D)\b", prose), (name, prose)
        # one break-even error per callout (a headline's all-prompt L/D, or the router's test-prompt one)
        assert len(set(re.findall(r"L/D\$ = ([\d.]+)", md))) <= 1, (name, md)
