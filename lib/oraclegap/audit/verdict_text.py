"""The verdict's prose: one template per rule of :data:`oraclegap.audit.verdict.RULES` (keyed by
the rule's name in :data:`TEMPLATES`) and the sentences they and the report share, every number
taken from the audit's numbers (nothing typed by hand).

A template takes the rule's facts (:class:`oraclegap.audit.verdict.Facts`: the numbers and what
the rules read from them) and returns :class:`Prose`: the headline, the reasons, what to collect
next and the threshold the verdict speaks of. Which rule applies is decided in
:mod:`oraclegap.audit.verdict`; nothing here chooses a code.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..report import md
from .settings import _current_power, _num

__all__ = ["Prose", "TEMPLATES", "SYMBOLS", "CODE_GUIDE", "CodeGuide", "latex"]


class Prose(NamedTuple):
    """The words of one verdict: ``headline``, ``reasons``, ``steps`` (what to collect next) and
    ``tau`` (the threshold it speaks of; None at k = 1 and for ``no-gap``)."""

    headline: str
    reasons: list
    steps: list
    tau: float | None


# ============================================================================ plain text and LaTeX
#: The symbols the sentences write in plain text (the verdict's JSON and the CLI's output) and
#: their LaTeX (the Markdown of the report and the book's callouts), notation page's symbols.
SYMBOLS = {
    "Delta/G_out": r"\Delta/G_{\mathrm{out}}",
    "Delta/G_exp": r"\Delta/G_{\exp}",
    "e_D < L/D": r"e_D < L/D",
    "L/D": r"L/D",
    "e_D": r"e_D",
    "O_exp": r"O_{\exp}",
    "O_repro": r"O_{\mathrm{repro}}",
    "G_out": r"G_{\mathrm{out}}",
    "G_exp": r"G_{\exp}",
    "G_b": r"G_b",
    "Delta": r"\Delta",
    "tau": r"\tau",
    "alpha": r"\alpha",
}
_SYMBOL = re.compile(r"(?<![\w/\\$])(" + "|".join(re.escape(k) for k in sorted(SYMBOLS, key=len, reverse=True))
                     + r")(?![\w/])")
#: a one-letter quantity set equal to (or bounded by) a number: L = 0.1, D = 0.2, k = 1, n >= 40
_LETTER = re.compile(r"(?<![\w/\\$-])([LDkn])(?= (?:=|<|>|>=|<=) [-+\d.<>])")
_BOUND = re.compile(r"\$([kn])\$ (>=|<=|>|<|=) (\d+)(?![\d.])")
_TEX_OP = {">=": r"\ge", "<=": r"\le", ">": ">", "<": "<", "=": "="}


_DRAW = re.compile(r"(?<=\bdraw )j\b")  # "draw j of a prompt"


def _latex_plain(text: str) -> str:
    text = _DRAW.sub("$j$", _SYMBOL.sub(lambda m: f"${SYMBOLS[m.group(1)]}$", text))
    text = _LETTER.sub(lambda m: f"${m.group(1)}$", text)
    return _BOUND.sub(lambda m: f"${m.group(1)} {_TEX_OP[m.group(2)]} {m.group(3)}$", text)


def latex(text: str) -> str:
    """A sentence of the audit with its plain-text symbols (:data:`SYMBOLS`: ``tau``, ``Delta/G_out``,
    ``e_D``, ``L/D``, ``G_out``, ``O_exp`` ...; and ``L``, ``D``, ``k``, ``n`` where a number is set
    equal to them) written as inline LaTeX math, for Markdown. Code spans (backticks) are left as
    they are; a sentence without such symbols comes back unchanged."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    parts = text.split("`")
    return "`".join(part if j % 2 else _latex_plain(part) for j, part in enumerate(parts))


# ============================================================================ shared sentences
def _taus_text(keys: list, numbers: dict) -> str:
    taus = [numbers["coverage"]["taus"][key]["tau"] for key in keys]
    return ", ".join(f"{t:g}" for t in taus) if taus else "none"


def _effect_words(numbers: dict, design_L, which: str = "this") -> str:
    """The planted useful effect named by its one calibrated population gap L, with the mean population gap
    of the pools simulated at one design beside it (that mean moves with the design's n and k and its
    replicates; the planted effect does not)."""
    eff = (numbers.get("power") or {}).get("effect") or {}
    cal = eff.get("calibrated_L")
    if cal is None:
        return md("a diffuse effect of population gap L = {x}", x=design_L)
    return md("the useful diffuse effect (planted at population gap L = {c}; the pools simulated for {w} "
              "design average L = {x})", c=cal, x=design_L, w=which)


def _power_sentence(numbers: dict) -> str | None:
    pw = numbers.get("power") or {}
    cur, state = _current_power(numbers)
    if not cur:
        return None
    t = pw["tau"]
    eff = _effect_words(numbers, cur["population_L"])
    pr, pm = cur["power"].get("redeal"), cur["power"].get("margin")
    iv = (cur.get("interval") or {}).get("redeal")
    pr_txt = md("{pr}", pr=pr) if not iv else md("{pr} [{lo}, {hi}]", pr=pr, lo=iv[0], hi=iv[1])
    target = numbers["settings"]["target_power"]
    margin = "" if pm is None else md(", {pm} for the margin null", pm=pm)
    dec = cur.get("decision_interval")
    if state == "adequate":
        shown = "" if not dec else md("; one-sided 95% lower limit {d}, at least the target {target}", d=dec[0],
                                      target=target)
        return md("This design would detect {eff} at tau = {t:g} with power {pr} "
                  "(re-deal null{margin}{shown}).", eff=eff, t=t, pr=pr_txt, margin=margin, shown=shown)
    if state == "uncertain":
        return md("Against {eff} at tau = {t:g} this design has power {pr} for the re-deal "
                  "null{margin}: its {reps} simulated replicates cannot tell whether that reaches the target {target}, "
                  "so a gap of that size may have gone undetected.", eff=eff, t=t, pr=pr_txt, margin=margin,
                  reps=cur.get("n_reps", "few"), target=target)
    return md("This design could not reliably detect {eff} at tau = {t:g}: its power is "
              "{pr} for the re-deal null{margin}, below the target {target}.", eff=eff, t=t, pr=pr_txt, margin=margin,
              target=target)


def _plan_steps(numbers: dict) -> list:
    """'Collect k' / n' ...' sentences from the planners (re-deal null at the primary threshold)."""
    pw = numbers.get("power") or {}
    steps: list[str] = []
    if not pw.get("applicable"):
        return steps
    target = numbers["settings"]["target_power"]
    cur, state = _current_power(numbers)
    if cur and state == "adequate":
        return steps
    for vary, what in (("plan_k", "responses per prompt and policy"), ("plan_n", "prompts")):
        plan = pw.get(vary)
        if not plan:
            continue
        var = plan["vary"]
        curve = [row for row in plan["curve"] if row["null"] == "redeal"]
        req = plan["required"].get("redeal")
        now = (cur or {}).get("power", {}).get("redeal")
        if req is not None:
            row = next(r for r in curve if r[var] == req)
            if now is not None and row["reject_rate"] <= now:
                steps.append(md("More {what} would not help: the planner's {v} = {req} gives power {p}, no more than "
                                "this design's {now}.", what=what, v=var, req=req, p=row["reject_rate"], now=now))
                continue
            steps.append(md("Collect {v} = {req} {what} (the planner gives power {p} [{lo}, {hi}] for {eff} "
                            "at tau = {t:g}).", v=var, req=req, what=what, p=row["reject_rate"],
                            lo=row["ci_lo"], hi=row["ci_hi"], eff=_effect_words(numbers, row["population_L"], "that"),
                            t=pw["tau"]))
        elif curve:
            last = curve[-1]
            steps.append(md("Even {v} = {val} {what} reach only power {p} (target {target}) for {eff}; a useful "
                            "effect of this kind needs more than that.", v=var, val=last[var], what=what,
                            p=last["reject_rate"], eff=_effect_words(numbers, last["population_L"], "that"), target=target))
    return steps


def _cert_step(numbers: dict, key: str) -> str | None:
    """What the certificate planner says about certifying a gap of the useful size at ``key``."""
    lev = numbers["certificates"]["levels"].get(key)
    if not lev:
        return None
    plan = lev["plan"]
    if plan["certified_now"]:
        return None
    if plan["gap"] <= plan["target"]:
        return md("The {name} is estimated at {g}, not above the useful size {t}: more prompts at these rates would not "
                  "certify a useful gap.", name=_cert_name(lev), g=plan["gap"], t=plan["target"])
    if plan["n_needed"] is None:
        return md("Even {f} times as many prompts ({n}) would not certify a gap above the useful size {t} at the "
                  "observed rates.", f=plan["max_factor"], n=plan["n_now"] * plan["max_factor"], t=plan["target"])
    return md("About {nn} prompts ({f} times the current {n}) would certify that the gap exceeds the useful size {t}, "
              "if the observed rates held.", nn=plan["n_needed"], f=plan["factor"], n=plan["n_now"], t=plan["target"])


def _cert_name(lev: dict) -> str:
    return (lev.get("certificate") or {}).get("name", "outcome-oracle gap")


def _cert(lev: dict) -> dict:
    """The certified quantity of one level (audits without one: the paired interval)."""
    c = lev.get("certificate")
    if c is not None:
        return c
    p = lev["paired"]
    return {"name": "outcome-oracle gap", "value": p["value"], "lo": p["lo"], "hi": p["hi"]}


def _alignment_caveat(numbers: dict) -> tuple[str, str | None, bool] | None:
    """(reason, next step, coupled) from the measured draw alignment of a k > 1 pool, whatever the
    pool declares; None when nothing needs saying (no measurement, or a pool not declared
    seed-aligned whose draws show no coupling). ``coupled`` is True when matched agreement of
    same-index draws exceeds the within-cell shuffle (plus-one p <= alpha): only then are the nulls
    called conservative and is per-policy sampling the next step (``step`` is None otherwise)."""
    nl = numbers.get("nulls") or {}
    al = nl.get("draw_alignment")
    if not nl.get("applicable") or not al:
        return None
    declared = al.get("declared", "seed-aligned" if nl.get("seed_aligned") else "unknown")
    alpha = numbers.get("settings", {}).get("alpha", 0.05)
    coupled = bool(al.get("coupled", al["p"] <= alpha))
    facts = md("responses with the same draw index agree {a} of the time against {e} after shuffling each cell's "
               "draws (shuffle band [{lo}, {hi}], p = {p:p}, on {np} prompts)", a=al["matched"], e=al["shuffled"],
               lo=al["band"][0], hi=al["band"][1], p=al["p"], np=al.get("n_prompts", numbers["pool"]["n_prompts"]))
    if coupled and al.get("independent_by"):
        reason = md("Responses with the same draw index agree more often than after shuffling ({a} against {e}, "
                    "p = {p:p}), but these draws are independent across members by construction ({why}), and a "
                    "check at level {alpha:g} rejects by chance on at most {alpha:%} of such pools: the "
                    "excess is read as chance, and the nulls as for independent draws.",
                    a=al["matched"], e=al["shuffled"], p=al["p"], why=al["independent_by"], alpha=alpha)
        return reason, None, False
    if not coupled:
        if declared != "seed-aligned":
            return None
        reason = ("The draws are marked seed-aligned (draw j of a prompt used one sampling seed under every member), "
                  "while both nulls assume draws independent across members; here " + facts
                  + ", so no coupling of the draws is measurable and the nulls read as for independent draws.")
        return reason, None, False
    said = {"seed-aligned": "The draws are marked seed-aligned (draw j of a prompt used one sampling seed under "
                            "every member) and measure so",
            "independent": "The pool is marked as sampled independently, but its draws measure seed-aligned",
            }.get(declared, "The pool does not say how its draws were sampled, and they measure seed-aligned")
    reason = (said + ": " + facts + ". Both nulls assume draws independent across members, so on these draws they "
              "are conservative and a non-rejection is weaker evidence than it reads.")
    step = md("Sample each member with its own seeds (`oraclegap rollouts --draw-seeds per-policy`, or "
              "`generate(draw_seeds=\"per-policy\")`; in lm-evaluation-harness a different `--seed` per model) and "
              "rerun the audit: the nulls assume independent draws, and on these matched agreement is {a} against "
              "{e} shuffled.", a=al["matched"], e=al["shuffled"])
    return reason, step, True


def _router_reason(f, key, *, break_even: bool = True) -> str:
    """The quick router against the calibration-selected member on the test prompts. Its
    disagreement error e_D is read against the break-even L/D of those same test prompts; with
    ``break_even=False`` (a headline already states the all-prompt L/D) that comparison is said
    in words, so that one callout never prints two break-even errors."""
    router = f.router
    if not router.get("available"):
        return md("No quick router was run: {why}.", why=router.get("reason", "not available"))
    row = router["levels"][key]
    head = md("The quick held-out router ({how}) scores {a} against {b} for the calibration-selected member "
              "{name} on {nt} test prompts: difference {d} [{lo}, {hi}], exact McNemar p = {p:p} (Holm {ph:p})",
              how=router.get("how", router.get("family")), a=row["accuracy"], b=row["baseline_accuracy"], name=row["baseline_policy"],
              nt=router["n_test"], d=row["difference"], lo=row["diff_lo"], hi=row["diff_hi"], p=row["p_mcnemar"],
              ph=_num(row["p_holm"]))
    e, be = _num(row["e_D"]), _num(row.get("break_even_selected", row["break_even"]))
    if e != e or be != be:  # no disagreement prompts among the test prompts
        return head + "; no test prompt separates the members, so no disagreement error applies."
    if break_even:
        return head + md("; on those test prompts it beats {name} exactly when its disagreement error e_D = {e} is "
                         "below (C_orac - C_{name}) / D = {be}.", e=e, be=be, name=row["baseline_policy"])
    return head + md("; on those test prompts its disagreement error {w} the break-even against {name}.",
                     w="is below" if e < be else "does not fall below", name=row["baseline_policy"])


def _cert_reason(f, key) -> str:
    """Which certificate decided, its interval, and paper 002's intervals beside it."""
    certs, cov, st = f.certs, f.cov, f.numbers["settings"]
    lev = certs[key]
    c, p, ex = _cert(lev), lev["paired"], lev["exact"]
    alpha = f.numbers["certificates"]["alpha"]
    if f.k == 1:
        out = md("Certificate: the outcome-oracle gap of Shihab et al. on the single outcomes, {g} with paired "
                 "selection-valid interval [{lo}, {hi}] (confidence {lvl}); its Thm 4 interval is [{elo}, {ehi}].",
                 g=c["value"], lo=c["lo"], hi=c["hi"], lvl=1 - alpha, elo=ex["lo"], ehi=ex["hi"])
    else:
        out = md("Certificate at tau = {t:g}: the split-draw coverage gap (each prompt's member chosen on half of its "
                 "draws and scored on the other half, against the best fixed member {b} on the same draws) is {g} "
                 "[{lo}, {hi}] (confidence {lvl}, simultaneous over members). Beside it, the apparent gap of the k "
                 "draws (includes the winner's curse) is {pg} [{plo}, {phi}], and Shihab et al.'s Theorem 4 interval of that "
                 "apparent gap is [{elo}, {ehi}]: both score each member on the draws that made it look best, "
                 "so under pure noise they sit above zero, while the split-draw gap does not.",
                 t=cov[key]["tau"], b=c.get("best_member", "?"), g=c["value"], lo=c["lo"], hi=c["hi"],
                 lvl=1 - alpha, pg=p["value"], plo=p["lo"], phi=p["hi"], elo=ex["lo"], ehi=ex["hi"])
    if 0 < c["lo"] < st["effect"]:
        out += md(" Its lower limit is below the useful size {e}: the gap is certified, but it may be small.",
                  e=st["effect"])
    return out


def _luck_reason(f) -> str:
    est = f.numbers["noise"]["decomposition"]["estimates"]
    e, g = est["noise_share"], est["gap"]
    return md("Against the best single member the single-draw oracle gap is G_out = {g}; the noise share Delta/G_out = "
              "{sh} [{lo}, {hi}] is single-draw luck that no single-commit router can close (arXiv 2607.03436).",
              g=g["value"], sh=e["value"], lo=e["lo"], hi=e["hi"])


def _both_reject(f) -> str:
    T = f.numbers["nulls"].get("n_tests", len(f.keys))
    return md("Both nulls reject (Holm over {T} distinct {w}, level {a}) at tau = {ts}.", T=T,
              w="test" if T == 1 else "tests", a=f.numbers["settings"]["alpha"], ts=_taus_text(f.detected, f.numbers))


def _pick(f, cands) -> str:
    """The threshold a detected verdict speaks of: the primary one when it is a candidate, else the
    candidate with the highest certified lower limit."""
    if f.primary_key in cands:
        return f.primary_key
    return max(cands, key=lambda kk: _cert(f.certs[kk])["lo"])


# ============================================================================ rule 1
def no_gap(f) -> Prose:
    if f.k == 1:
        headline = "The members never disagree: every prompt gets the same verdict from every member, so there is no " \
                   "oracle gap to route."
    else:
        headline = md("The members never disagree: D = 0 at every audited threshold ({ts}), so there is no oracle "
                      "gap to route.", ts=_taus_text(f.keys, f.numbers))
    reasons = []
    if f.numbers["pool"].get("identical_members"):
        reasons.append("Every member gave the same verdict on every response: the pool's members are identical.")
    steps = ["Nothing to route: diversify the pool (other models, datasets or training recipes) first."]
    return Prose(headline, reasons, steps, None)


# ============================================================================ k = 1
def _k1_reasons(f) -> list:
    return ["No nulls that need k > 1 apply; see the certificates.", _cert_reason(f, f.k1_key)]


def _k1_plan_row(f) -> tuple[dict | None, int | None]:
    """The planner's row that decides a k = 1 pool (re-deal null): the first k on its grid whose
    power reaches the target, else its largest k; and that k (None when none reaches it)."""
    plan = (f.numbers.get("power") or {}).get("plan_k")
    if not plan:
        return None, None
    curve = [r for r in plan["curve"] if r["null"] == "redeal"]
    req = plan["required"].get("redeal")
    return next((r for r in curve if r["k"] == req), curve[-1] if curve else None), req


def _k1_collect_step(f) -> list:
    """The k >= 2 the re-deal null would need (the planner over responses per prompt)."""
    row, req = _k1_plan_row(f)
    if row is None:
        return []
    return [md("Collect k >= 2 responses per prompt and policy to separate luck from specialization: {w} "
               "k = {kk} the re-deal null would detect {eff} at tau = {t:g} "
               "with power {p} [{lo}, {hi}]{reps}{tail}.", w="with" if req is not None else "even with",
               reps="" if row.get("reps") is None else md(" ({r} of {n} simulated pools rejected)",
                                                           r=int(row["rejections"]), n=int(row["reps"])),
               kk=row["k"], eff=_effect_words(f.numbers, row["population_L"], "that"),
               t=f.numbers["power"]["tau"], p=row["reject_rate"],
               lo=row["ci_lo"], hi=row["ci_hi"],
               tail="" if req is not None else md(", below the target {tg}", tg=f.numbers["settings"]["target_power"]))]


_K1_LUCK = ("At k = 1 the outcome-oracle gap includes single-draw luck (arXiv 2607.03436), which one response "
            "per prompt cannot separate from reproducible specialization.")


def k1_not_certified(f) -> Prose:
    c = f.certs[f.k1_key]["paired"]
    headline = md("The outcome-oracle gap G_out = {g} is not certified after selecting the best member: its paired "
                  "interval [{lo}, {hi}] reaches zero, so it is within sampling noise.", g=c["value"], lo=c["lo"],
                  hi=c["hi"])
    step = _cert_step(f.numbers, f.k1_key)
    steps = [step] if step else []
    reasons = _k1_reasons(f) + [_router_reason(f, f.k1_router_key)]
    return Prose(headline, reasons, steps + _k1_collect_step(f), None)


def k1_recoverable(f) -> Prose:
    row = f.router["levels"][f.k1_router_key]
    c = f.certs[f.k1_key]["paired"]
    headline = md("The quick held-out router beats the calibration-selected member by {d} [{lo}, {hi}] on held-out "
                  "prompts, and the outcome-oracle gap G_out = {g} is certified (paired interval [{glo}, {ghi}]); with "
                  "one response per prompt, how much of that gap is reproducible rather than single-draw luck is not "
                  "identified.", d=row["difference"], lo=row["diff_lo"], hi=row["diff_hi"], g=c["value"], glo=c["lo"],
                  ghi=c["hi"])
    reasons = _k1_reasons(f) + [_K1_LUCK, _router_reason(f, f.k1_router_key)]
    steps = _k1_collect_step(f) + ["Train and evaluate a full router with cross-fitting; the quick router is a "
                                   "lower bound on what a tuned one recovers."]
    return Prose(headline, reasons, steps, None)


def k1_certified(f) -> Prose:
    """``luck-not-excluded``: the outcome-oracle gap is certified, but at k = 1 even exchangeable
    members have one (the oracle collects the luck of every member's single draw), so the headline names the
    responses per prompt that would decide it."""
    c = f.certs[f.k1_key]["paired"]
    row, req = _k1_plan_row(f)
    if row is None:
        decide = "k >= 2 responses per prompt and policy would decide it"
    elif req is not None:
        decide = md("k = {kk} responses per prompt and policy would decide it (the re-deal null would then detect "
                    "{eff} with power {p} [{lo}, {hi}])", kk=row["k"],
                    eff=_effect_words(f.numbers, row["population_L"], "that"),
                    p=row["reject_rate"], lo=row["ci_lo"], hi=row["ci_hi"])
    else:
        decide = md("more than k = {kk} responses per prompt and policy would be needed to decide it (at k = {kk} the "
                    "re-deal null detects {eff} with power {p} [{lo}, {hi}] only)",
                    kk=row["k"], eff=_effect_words(f.numbers, row["population_L"], "that"), p=row["reject_rate"],
                    lo=row["ci_lo"], hi=row["ci_hi"])
    be = _num(f.cov[f.keys[0]]["break_even"])
    headline = md("The outcome-oracle gap G_out = {g} is certified after selecting the best member (paired interval "
                  "[{lo}, {hi}]), but with one response per prompt single-draw luck cannot be excluded: even "
                  "exchangeable members have a positive outcome-oracle gap at k = 1, and {decide}; until then a router "
                  "must keep its error on the disagreement prompts below L/D = {be} to beat the best member.",
                  g=c["value"], lo=c["lo"], hi=c["hi"], decide=decide, be=be)
    reasons = _k1_reasons(f) + [_K1_LUCK, _router_reason(f, f.k1_router_key, break_even=False)]
    steps = _k1_collect_step(f) + ["Before training a router, check that the prompts carry a routing signal (text, "
                                   "embeddings, features) and evaluate a router family with cross-fitting "
                                   "(`oraclegap routers`)."]
    step = _cert_step(f.numbers, f.k1_key)
    return Prose(headline, reasons, steps + ([step] if step else []), None)


# ============================================================================ k > 1: the nulls
def _quality_sentence(numbers: dict) -> str | None:
    """The exact quality test in one sentence (None for audits without it)."""
    q = (numbers.get("nulls") or {}).get("quality")
    if not q:
        return None
    lo, hi = q["range"]
    return md("The exact quality test (spread of the members' totals against their labels permuted within each "
              "prompt) {w}: p = {p:p}; member success rates range from {lo} to {hi}.",
              w="rejects" if q["reject"] else "does not reject", p=q["p"], lo=lo, hi=hi)


def no_rejection(f) -> Prose:
    nl, cov, pkey = f.numbers["nulls"], f.cov, f.primary_key
    min_p = min((_num(nl["L"][key][null]["p_holm"]) for key in f.keys for null in ("redeal", "margin")
                 if nl["L"][key].get(null) and nl["L"][key][null].get("p_holm") is not None), default=float("nan"))
    headline = md("The gap is within sampling noise: neither null rejects at any threshold (smallest Holm-adjusted "
                  "p = {p:p}), and the members' overall quality does not differ detectably.", p=min_p)
    pw_sentence = _power_sentence(f.numbers)
    if pw_sentence:
        headline += " " + pw_sentence
        if f.power_state == "adequate":
            headline = headline[:-1] + ", so an undetected gap of that size is unlikely."
    reasons = []
    Lp = nl["L"][pkey]
    if "mean" in Lp.get("redeal", {}):
        reasons.append(md("At tau = {t:g} the observed gap L = {L} against a re-deal null mean of {m}: excess {e}.",
                          t=cov[pkey]["tau"], L=Lp["observed"], m=Lp["redeal"]["mean"], e=Lp["redeal"]["excess"]))
    qs = _quality_sentence(f.numbers)
    if qs:
        reasons.append(qs)
    if f.luck:
        reasons.append(_luck_reason(f))
    steps = _plan_steps(f.numbers)
    if not steps and pw_sentence:
        steps.append("More data is unlikely to reveal a useful gap: look for a more diverse pool instead.")
    return Prose(headline, reasons, steps, cov[pkey]["tau"])


def quality_only(f) -> Prose:
    q = f.numbers["nulls"]["quality"]
    best = f.numbers["pool"].get("best_member", "the best member")
    headline = md("The members differ in overall quality (exact quality test p = {p:p}), but the margin-preserving "
                  "null, which allows for quality differences, rejects at no threshold: no specialization beyond "
                  "quality is detected, and the best single member ({b}) is the natural deployment.", p=q["p"],
                  b=best)
    reasons = [_quality_sentence(f.numbers)]
    if f.redeal:
        reasons.append(md("The re-deal null of L rejects at tau = {ts}; it assumes members of equal quality, so "
                          "quality differences alone can make it reject.", ts=_taus_text(f.redeal, f.numbers)))
    pw_sentence = _power_sentence(f.numbers)
    return Prose(headline, reasons + ([pw_sentence] if pw_sentence else []), _plan_steps(f.numbers),
                 f.cov[f.primary_key]["tau"])


def never_both(f) -> Prose:
    parts = []
    if f.margin:
        parts.append(md("the margin-preserving null rejects at tau = {m}", m=_taus_text(f.margin, f.numbers)))
    if f.redeal:
        parts.append(md("the re-deal null rejects at tau = {r}", r=_taus_text(f.redeal, f.numbers)))
    missing = "the re-deal null rejects nowhere" if not f.redeal else (
        "the margin-preserving null rejects nowhere" if not f.margin else "they never reject at the same threshold")
    headline = ("The evidence is mixed: " + " and ".join(parts) + ", but " + missing
                + "; specialization needs both at one threshold.")
    reasons = [r for r in (_quality_sentence(f.numbers), _power_sentence(f.numbers)) if r]
    return Prose(headline, reasons, _plan_steps(f.numbers), f.cov[f.primary_key]["tau"])


# ============================================================================ k > 1: both nulls reject
def recoverable(f) -> Prose:
    key = _pick(f, f.recovered)
    cov, row = f.cov, f.router["levels"][key]
    c = _cert(f.certs[key])
    headline = md("The gap is real and recoverable: at tau = {t:g} the {name} is certified at {g} [{glo}, {ghi}] and "
                  "the quick held-out router beats the calibration-selected member by {d} [{lo}, {hi}] (Holm p = {p:p}).",
                  t=cov[key]["tau"], name=c["name"], g=c["value"], glo=c["lo"], ghi=c["hi"], d=row["difference"],
                  lo=row["diff_lo"], hi=row["diff_hi"], p=row["p_holm"])
    reasons = [_both_reject(f), _cert_reason(f, key), _router_reason(f, key)] + ([_luck_reason(f)] if f.luck else [])
    steps = ["Train and evaluate a full router with cross-fitting (`oraclegap routers`); the quick router is a "
             "lower bound on what a tuned one recovers."]
    return Prose(headline, reasons, steps, cov[key]["tau"])


def mostly_luck(f) -> Prose:
    noise_part = f.numbers["noise"]
    dec, bok = noise_part["decomposition"]["estimates"], noise_part["best_of_k"]
    headline = md("Most of the gap is single-draw luck: the noise share of the single-draw oracle gap is {sh} "
                  "[{lo}, {hi}], a part no single-commit router can close; best-of-M sampling of the committed "
                  "member (M = {K} draws of it, one per member of the pool) can.", sh=dec["noise_share"]["value"], lo=dec["noise_share"]["lo"],
                  hi=dec["noise_share"]["hi"], K=bok["K"])
    steps = [md("If a verifier can recognise a correct response, spend the budget on best-of-M sampling of the "
                "committed member, M = {K} draws (estimated {b} on held-out draws, against the single-draw oracle's {o}) rather "
                "than on a router; without one, best-of-M cannot pick the right draw either.", K=bok["K"],
                b=bok["best_of_k_split"]["value"], o=bok["o_exp_independent"]["value"])]
    return Prose(headline, [_both_reject(f), _luck_reason(f)], steps, f.cov[f.primary_key]["tau"])


def certified(f) -> Prose:
    key = _pick(f, f.certified_detected)
    cov = f.cov
    c = _cert(f.certs[key])
    headline = md("The gap is certified at tau = {t:g}: the {name} is {g} [{lo}, {hi}]. The quick router is not "
                  "shown to beat the calibration-selected member (its Holm-adjusted McNemar test does not reject "
                  "with a positive difference); against the best member in hindsight (apparent L = {L}, on a share "
                  "D = {D} of prompts that separate the members) a router must reach a disagreement error e_D < L/D = {be}.",
                  t=cov[key]["tau"], name=c["name"], g=c["value"], lo=c["lo"], hi=c["hi"],
                  L=cov[key]["L"], D=cov[key]["D"], be=_num(cov[key]["break_even"]))
    steps = ["Evaluate stronger router families with cross-fitting (`oraclegap routers`), or collect routing "
             "signals (prompt text, embeddings, features) the quick router lacked."]
    step = _cert_step(f.numbers, key)
    return Prose(headline, [_both_reject(f), _cert_reason(f, key), _router_reason(f, key, break_even=False)],
                 steps + ([step] if step else []), cov[key]["tau"])


def detected_not_certified(f) -> Prose:
    key = _pick(f, f.detected)
    c = _cert(f.certs[key])
    headline = md("The gap is more than sampling noise at tau = {ts} (both nulls reject), but it is not certified "
                  "over the best member: the {name} at tau = {t:g} is {g} [{lo}, {hi}].",
                  ts=_taus_text(f.detected, f.numbers), name=c["name"], t=f.cov[key]["tau"], g=c["value"],
                  lo=c["lo"], hi=c["hi"])
    step = _cert_step(f.numbers, key)
    return Prose(headline, [_both_reject(f), _cert_reason(f, key)], [step] if step else [], f.cov[key]["tau"])


#: The prose of each rule, keyed by the rule's name in :data:`oraclegap.audit.verdict.RULES`.
TEMPLATES = {
    "no-gap": no_gap,
    "k1-not-certified": k1_not_certified,
    "k1-recoverable": k1_recoverable,
    "k1-certified": k1_certified,
    "no-rejection": no_rejection,
    "quality-only": quality_only,
    "never-both": never_both,
    "recoverable": recoverable,
    "luck": mostly_luck,
    "certified": certified,
    "detected": detected_not_certified,
}


# ============================================================================ the codes, for the decision page
class CodeGuide(NamedTuple):
    """What a verdict code means and what to do next, in general words (the decision page's rows;
    an audit's own verdict says the same with its numbers)."""

    means: str
    next: str


#: One entry per verdict code of :data:`oraclegap.audit.verdict.VERDICTS` (the decision page is
#: generated from :data:`~oraclegap.audit.verdict.RULES` and this record; a code without an entry
#: stops the page from being written).
CODE_GUIDE = {
    "no-gap": CodeGuide(
        "No prompt separates the members at any audited threshold: there is no oracle gap to route.",
        "Diversify the pool (other models, data or training recipes) before anything else."),
    "noise": CodeGuide(
        "The gap is within sampling noise: at k = 1 the outcome-oracle gap is not certified after selecting the "
        "best member; at k > 1 neither null rejects at any threshold and the exact quality test finds no "
        "difference in member quality. A non-rejection is evidence of absence only "
        "when the findings do not list `low-power` or `power-uncertain`.",
        "With low or uncertain power, collect the responses per prompt or the prompts the planner names and "
        "rerun; with adequate power, look for a more diverse pool rather than a router."),
    "quality-only": CodeGuide(
        "The members differ in overall quality (the exact quality test on the spread of member totals rejects), "
        "and no specialization is detected: the margin-preserving null, which allows for member quality, rejects "
        "nowhere.",
        "Deploy the best member: a router has nothing beyond quality to exploit. With low power, collect what the "
        "planner names before concluding."),
    "inconclusive": CodeGuide(
        "A null of L rejects somewhere, but never both at one threshold (and the rejection is not explained by "
        "quality alone): the margin test leans on its log-odds model, the re-deal test assumes equal quality.",
        "Build no router on this evidence: collect more responses or prompts (the planner's steps) and rerun."),
    "certified-recoverable": CodeGuide(
        "The gap is certified over the best member (at k > 1 the split-draw coverage gap, at a threshold where "
        "both nulls reject; at k = 1 the outcome-oracle gap) and the quick held-out router beats the "
        "calibration-selected member.",
        "Train and evaluate a full router with cross-fitting (`oraclegap routers`); the quick router is a lower "
        "bound on what a tuned one recovers. At k = 1, collect k >= 2 responses to separate luck."),
    "luck": CodeGuide(
        "Both nulls reject, but the lower limit of the noise share Delta/G_out is at least one half: most of the "
        "single-draw gap is single-draw luck, which no router that commits to one member collects.",
        "With a verifier that recognises a correct response, spend the budget on best-of-M sampling of the "
        "committed member (M draws of that one member, one per member of the pool) rather than on a router."),
    "certified": CodeGuide(
        "The split-draw coverage gap is certified at a threshold where both nulls reject, but the quick router "
        "is not shown to beat the calibration-selected member: a router must reach e_D < L/D there.",
        "Evaluate stronger router families with cross-fitting, or collect the routing signals (text, embeddings, "
        "features) the quick router lacked."),
    "detected-not-certified": CodeGuide(
        "Both nulls reject at some threshold, but the certified quantity's interval (the split-draw coverage "
        "gap) reaches zero: real, perhaps, but not shown to exceed the best member.",
        "Collect the prompts the certificate planner names and rerun."),
    "luck-not-excluded": CodeGuide(
        "k = 1: the outcome-oracle gap is certified, but even exchangeable members have a positive gap at k = 1 "
        "(the oracle collects the luck of every member's single draw), so single-draw luck is not excluded.",
        "Collect k >= 2 responses per prompt and policy (the verdict names how many) and rerun; until then a "
        "router must keep e_D below L/D."),
}
