"""The audit's verdict: an ordered table of small named rules (:data:`RULES`), each a predicate on
the facts an audit's numbers establish (:class:`Facts`); the first rule that holds gives the code.
The words of each rule are apart from the rules, in :mod:`oraclegap.audit.verdict_text`
(``TEMPLATES``, keyed by the rule's name).

Notation: alpha the audit's level; tau* the primary threshold; a null *rejects at tau* when its
p-value for L(tau), Holm-adjusted within that null over the distinct tests among the audited
thresholds (thresholds with the same need(tau, k) are one test), is <= alpha (every Monte Carlo p is
(1 + #{draws >= observed}) / (1 + B), for which "p <= alpha" is an exact level-alpha rule: the one
boundary convention of the audit); the gap is *certified at tau* when the certified quantity's
interval has a positive lower limit: at k > 1 the split-draw coverage gap
(:mod:`oraclegap.stats.split_gap`, zero under exchangeable members), at k = 1 paper 002's paired
selection-valid interval of the outcome-oracle gap; the router *beats at tau* when
its Holm-adjusted exact McNemar p <= alpha and its held-out difference against the
calibration-selected member is positive; *luck* means the lower limit of the noise share
Delta / G (paper 001, bracket interval) is >= 0.5. The rules, in order:

1. ``no-gap`` -- D(tau) = 0 at every audited threshold: no prompt separates the members.
2. k = 1 (no null that needs k > 1 applies; the certificates carry the inference):
   ``noise`` when the outcome-oracle gap is not certified; ``certified-recoverable`` when it
   is and the quick router beats the calibration-selected member on held-out prompts; else
   ``luck-not-excluded``: the gap is certified, but at k = 1 even exchangeable members have a
   positive outcome-oracle gap (the oracle collects the luck of M single draws), so a certified
   gap alone is no finding; the headline names the responses per prompt that would decide it.
3. k > 1: ``noise`` -- neither null of L rejects at any threshold and the exact quality test
   (spread of member totals against labels permuted within prompts,
   :mod:`oraclegap.stats.nulls.quality`) does not reject;
4. ``quality-only`` -- the quality test rejects and the margin-preserving null (which allows for
   member quality) rejects nowhere: the members differ in quality, no specialization is detected;
5. ``inconclusive`` -- a null of L rejects somewhere, but never both at the same threshold;
6. the thresholds where both reject are *detected*. ``certified-recoverable`` -- certified at
   a detected threshold where the router beats;
7. ``luck`` -- most of the single-draw gap is single-draw luck;
8. ``certified`` -- certified at a detected threshold (a router must reach e_D < L/D there);
9. ``detected-not-certified`` -- otherwise.

Besides the code, ``findings`` lists ``low-power`` when the re-deal power at tau* against a
diffuse effect of the useful size is below the target (the upper limit of its Wilson 95% interval
over the simulated replicates is below it) and ``power-uncertain`` when that interval contains the
target (:func:`~oraclegap.audit.settings.power_state`; in both cases a k > 1 code reached with no
threshold where both nulls reject -- ``noise``, ``quality-only``, ``inconclusive`` -- gives the
planner's steps, while the codes reached through such a threshold give their own steps and leave
the planner's sizes in the numbers' power section), ``luck`` beside another code, ``k1``, ``detected`` and ``certified`` on the way to a code
that needs them, ``seed-aligned`` when the draws share measurable common random numbers, and last
the code itself.

(The module's name is also the name of the function :func:`verdict`, which the package
re-exports: ``oraclegap.audit.verdict`` is the function; import this module's names with
``from oraclegap.audit.verdict import RULES``.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from functools import cached_property

import pandas as pd

from .._result import Result
from . import verdict_text
from .settings import _current_power, _num

__all__ = ["VERDICTS", "Verdict", "Facts", "Rule", "RULES", "first_rule", "findings", "verdict"]

#: Verdict codes (the k = 1 code ``luck-not-excluded`` last; :data:`RULES` gives the order they are tried).
VERDICTS = ("no-gap", "noise", "quality-only", "inconclusive", "certified-recoverable", "luck", "certified",
            "detected-not-certified", "luck-not-excluded")


@dataclasses.dataclass(frozen=True, repr=False)
class Verdict(Result):
    """The audit's conclusion: ``code`` (one of :data:`VERDICTS`), a ``headline`` sentence, the
    ``reasons`` behind it, ``next_steps`` (what to collect next) and every rule that fired
    (``findings``), each sentence built from the audit's numbers."""

    code: str
    headline: str
    reasons: tuple
    next_steps: tuple
    findings: tuple
    tau: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "findings", tuple(dict.fromkeys(self.findings)))  # each rule once, in order

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["reasons"], d["next_steps"], d["findings"] = list(self.reasons), list(self.next_steps), list(self.findings)
        return d

    def _summary(self) -> str:
        return f"Verdict({self.code}: {self.headline})"

    def frame(self) -> pd.DataFrame:
        """One row per sentence: ``part`` (headline, reason or next step) and its ``text``, with the
        code."""
        rows = [("headline", self.headline)] + [("reason", r) for r in self.reasons] + [
            ("next step", s) for s in self.next_steps]
        return pd.DataFrame(rows, columns=["part", "text"]).assign(code=self.code)

    def markdown(self) -> str:
        out = [f"**{self.headline}**"]
        if self.reasons:
            out += ["", "Why:", ""] + [f"- {r}" for r in self.reasons]
        if self.next_steps:
            out += ["", "What to collect next:", ""] + [f"- {s}" for s in self.next_steps]
        return "\n".join(out)


class Facts:
    """What the rules read from an audit's numbers (``audit.json`` as a dict), each read only when a
    rule asks for it (an audit edited or written by an older version may lack what no rule needs)."""

    def __init__(self, numbers: Mapping):
        self.numbers = numbers

    # -------------------------------------------------------------- the pool and its thresholds
    @cached_property
    def k(self) -> int:
        return self.numbers["pool"]["k"]

    @cached_property
    def cov(self) -> dict:
        return self.numbers["coverage"]["taus"]

    @cached_property
    def keys(self) -> list:
        return list(self.cov)

    @cached_property
    def primary_key(self) -> str:
        pt = self.numbers["settings"]["primary_tau"]
        return next(key for key in self.keys if abs(self.cov[key]["tau"] - pt) < 1e-12)

    @cached_property
    def no_disagreement(self) -> bool:
        """D(tau) = 0 at every audited threshold."""
        return all(_num(self.cov[key]["D"]) == 0 for key in self.keys)

    # -------------------------------------------------------------- power, luck
    @cached_property
    def power_state(self) -> str | None:
        return _current_power(self.numbers)[1]

    @cached_property
    def luck(self) -> bool:
        return bool((self.numbers.get("noise") or {}).get("luck"))

    # -------------------------------------------------------------- certificates and the router
    @cached_property
    def certs(self) -> dict:
        return self.numbers["certificates"]["levels"]

    @cached_property
    def router(self) -> dict:
        return self.numbers.get("router") or {}

    @cached_property
    def beats(self) -> set:
        return set(self.router.get("beats_at") or [])

    # -------------------------------------------------------------- k = 1
    @cached_property
    def k1_key(self) -> str:
        """The certificate of the single outcome (``outcome``; the first threshold in old audits)."""
        return self.keys[0] if "outcome" not in self.certs else "outcome"

    @cached_property
    def k1_certified(self) -> bool:
        return bool(self.certs[self.k1_key]["certified"])

    @cached_property
    def k1_router_key(self) -> str | None:
        return next(iter(self.router["levels"])) if self.router.get("available") else None

    @cached_property
    def k1_router_beats(self) -> bool:
        return self.k1_router_key is not None and bool(self.router["levels"][self.k1_router_key]["beats"])

    # -------------------------------------------------------------- k > 1: the nulls
    @cached_property
    def redeal(self) -> list:
        return self.numbers["nulls"]["redeal_taus"]

    @cached_property
    def margin(self) -> list:
        return self.numbers["nulls"]["margin_taus"]

    @cached_property
    def detected(self) -> list:
        return self.numbers["nulls"]["detected_taus"]

    @cached_property
    def quality(self) -> bool:
        """The exact member-quality test rejects (audits without it: False)."""
        return bool((self.numbers["nulls"].get("quality") or {}).get("reject"))

    @cached_property
    def certified_detected(self) -> list:
        return [key for key in self.detected if self.certs[key]["certified"]]

    @cached_property
    def recovered(self) -> list:
        return [key for key in self.certified_detected if key in self.beats]


# ============================================================================ the predicates
def no_gap(f: Facts) -> bool:
    """No prompt separates the members: D = 0 at every audited threshold."""
    return f.no_disagreement


def k1_not_certified(f: Facts) -> bool:
    """k = 1 and the outcome-oracle gap is not certified."""
    return f.k == 1 and not f.k1_certified


def k1_recoverable(f: Facts) -> bool:
    """k = 1, the outcome-oracle gap is certified and the quick held-out router beats."""
    return f.k == 1 and f.k1_certified and f.k1_router_beats


def k1_certified(f: Facts) -> bool:
    """k = 1 and the outcome-oracle gap is certified."""
    return f.k == 1 and f.k1_certified


def no_rejection(f: Facts) -> bool:
    """k > 1, neither null of L rejects at any threshold and the quality test does not reject."""
    return f.k > 1 and not f.redeal and not f.margin and not f.quality


def quality_only(f: Facts) -> bool:
    """k > 1, the quality test rejects and the margin-preserving null (which allows for quality) rejects nowhere."""
    return f.k > 1 and f.quality and not f.margin


def never_both(f: Facts) -> bool:
    """k > 1, a null of L rejects somewhere, but never both at the same threshold."""
    return f.k > 1 and bool(f.redeal or f.margin) and not f.detected


def recoverable(f: Facts) -> bool:
    """k > 1 and, at a detected threshold, the gap is certified and the router beats."""
    return f.k > 1 and bool(f.recovered)


def mostly_luck(f: Facts) -> bool:
    """k > 1, both nulls reject somewhere and most of the single-draw gap is luck."""
    return f.k > 1 and bool(f.detected) and f.luck


def certified(f: Facts) -> bool:
    """k > 1 and the gap is certified at a detected threshold."""
    return f.k > 1 and bool(f.certified_detected)


def detected(f: Facts) -> bool:
    """k > 1 and both nulls reject at some threshold."""
    return f.k > 1 and bool(f.detected)


@dataclasses.dataclass(frozen=True)
class Rule:
    """One row of the verdict table: ``name`` (the key of its prose in
    :data:`oraclegap.audit.verdict_text.TEMPLATES`), the ``code`` it gives and the predicate
    ``holds`` on the :class:`Facts`."""

    name: str
    code: str
    holds: Callable[[Facts], bool]

    @property
    def doc(self) -> str:
        return (self.holds.__doc__ or "").strip()


#: The verdict rules, in the order they are tried: the first that holds gives the code.
RULES = (
    Rule("no-gap", "no-gap", no_gap),
    Rule("k1-not-certified", "noise", k1_not_certified),
    Rule("k1-recoverable", "certified-recoverable", k1_recoverable),
    Rule("k1-certified", "luck-not-excluded", k1_certified),
    Rule("no-rejection", "noise", no_rejection),
    Rule("quality-only", "quality-only", quality_only),
    Rule("never-both", "inconclusive", never_both),
    Rule("recoverable", "certified-recoverable", recoverable),
    Rule("luck", "luck", mostly_luck),
    Rule("certified", "certified", certified),
    Rule("detected", "detected-not-certified", detected),
)
_K_GT_1_DETECTED = ("recoverable", "luck", "certified", "detected")  # the rules reached when both nulls reject


def first_rule(f: Facts) -> Rule:
    """The first rule of :data:`RULES` that holds."""
    for rule in RULES:
        if rule.holds(f):
            return rule
    raise ValueError("no verdict rule applies to these numbers: the pool's k must be a positive integer "
                     f"(got k = {f.k!r})")


def findings(f: Facts, rule: Rule) -> tuple:
    """What the verdict lists besides its code: the power flag, ``luck``, ``k1``, ``detected`` and
    ``certified`` on the way to the code, then the code (``no-gap`` lists only itself)."""
    if rule.name == "no-gap":
        return (rule.code,)
    out = []
    if f.power_state == "low":
        out.append("low-power")
    elif f.power_state == "uncertain":
        out.append("power-uncertain")
    if f.luck:
        out.append("luck")
    if f.k == 1:
        out.append("k1")
    elif rule.name in _K_GT_1_DETECTED:
        out.append("detected")
        if f.certified_detected:
            out.append("certified")
    return tuple(out) + (rule.code,)


def _as_numbers(numbers) -> Mapping:
    if not isinstance(numbers, Mapping) and hasattr(numbers, "to_json"):  # an AuditResult
        return numbers.to_json()
    return numbers


def _verdict_rules(numbers) -> Verdict:
    """The verdict of the first rule that holds (:data:`RULES`), in the words of its template,
    without the draw-alignment caveat (:func:`verdict` adds it)."""
    f = Facts(_as_numbers(numbers))
    rule = first_rule(f)
    words = verdict_text.TEMPLATES[rule.name](f)
    return Verdict(rule.code, words.headline, tuple(words.reasons), tuple(words.steps), findings(f, rule), words.tau)


def verdict(numbers) -> Verdict:
    """The verdict in plain words, chosen from the audit's numbers (:meth:`AuditResult.to_json`,
    the dict read from ``audit.json``, or an :class:`AuditResult`) by the rules of :data:`RULES`
    (the module docstring lists them). On a seed-aligned pool whose nulls ran, the measured coupling
    is reported first among the reasons. When matched agreement lies above the shuffle band
    (common random numbers show), the finding ``seed-aligned`` is added, the reason says the
    nulls assume independent draws and are conservative on these, per-policy draws come first in
    ``next_steps``, and a ``noise`` headline says the non-rejection comes from seed-aligned
    draws; when it lies within the band, only the reason (no coupling measurable) is added."""
    numbers = _as_numbers(numbers)
    v = _verdict_rules(numbers)
    caveat = verdict_text._alignment_caveat(numbers)
    if caveat is None or v.code == "no-gap":
        return v
    reason, step, coupled = caveat
    if not coupled:
        return Verdict(v.code, v.headline, (reason,) + v.reasons, v.next_steps, v.findings, v.tau)
    headline = v.headline
    if v.code == "noise":
        headline += " The draws are seed-aligned, which makes both nulls conservative: see below."
    return Verdict(v.code, headline, (reason,) + v.reasons, (step,) + v.next_steps,
                   ("seed-aligned",) + v.findings, v.tau)
