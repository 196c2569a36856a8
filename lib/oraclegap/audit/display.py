"""Displaying an audit's numbers: Markdown for every section of the report (:func:`texts`), tidy
tables (:func:`frames`) and figures (``plot_*``), all built from ``audit.json`` as a dict (nothing
computed anew, nothing typed by hand)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..report import md
from .settings import LUCK_SHARE, _num
from .verdict import Verdict
from .verdict_text import _alignment_caveat, _cert_step, _power_sentence, _quality_sentence, _taus_text, latex

__all__ = ["texts", "frames", "verdict_markdown", "plot_coverage", "plot_nulls", "plot_power", "plot_noise"]

#: The sections of :func:`texts` whose symbols are written as LaTeX (the others name files, the
#: pool's source, prompts or settings as they are).
MATH_SECTIONS = ("summary", "coverage", "nulls", "power", "certificates", "noise", "router", "verdict")


def verdict_markdown(v: Verdict) -> str:
    """The verdict as Markdown for a report or a callout: :meth:`Verdict.markdown` with its
    symbols in LaTeX (:func:`~oraclegap.audit.verdict_text.latex`); ``Verdict.headline`` and the
    JSON keep the plain text the CLI prints."""
    if not isinstance(v, Verdict):
        raise TypeError(f"v must be a Verdict (an audit's .verdict), got {type(v).__name__}")
    return latex(v.markdown())


# ============================================================================ display: text
def _yes(b) -> str:
    return "yes" if b else "no"


def texts(numbers: dict) -> dict:
    """Markdown for every section of the report, built from the numbers (nothing typed by hand),
    symbols in LaTeX in the sections of :data:`MATH_SECTIONS`."""
    out = {}
    pool, cov, s = numbers["pool"], numbers["coverage"]["taus"], numbers["settings"]
    keys = list(cov)
    pkey = numbers["coverage"]["primary_key"]
    k = pool["k"]
    mem = sorted(pool["members"], key=lambda r: r["mean_rate"])
    deg, meta = pool["degenerate"], pool["metadata"]
    out["title"] = md("Pool: **{src}**.", src=numbers["source"])
    out["summary"] = md(
        "The pool holds {n} prompts, {M} policies and k = {k} response{s} per prompt and policy (draw alignment: "
        "{al}). {d} prompts are degenerate ({w} with every response wrong, {r} with every response right): no null "
        "can move them. Member success rates run from {lo} ({lo_name}) to {hi} ({hi_name}). Metadata present: "
        "prompt text {text}, embeddings {emb}, answers {ans}, costs {cost}, dataset labels {dl}, splits {sp}.",
        n=pool["n_prompts"], M=pool["n_policies"], k=k, s="" if k == 1 else "s", al=pool["alignment"],
        d=deg["degenerate"], w=deg["all_wrong"], r=deg["all_right"], lo=mem[0]["mean_rate"], lo_name=mem[0]["policy"],
        hi=mem[-1]["mean_rate"], hi_name=mem[-1]["policy"], text=_yes(meta["text"]),
        emb="no" if meta["embeddings"] is None else md("yes ({d} dimensions)", d=meta["embeddings"]),
        ans=_yes(meta["answers"]), cost=_yes(meta["cost"]),
        dl="no" if not meta["dataset_levels"] else md("yes ({d} level{s})", d=meta["dataset_levels"],
                                                       s="" if meta["dataset_levels"] == 1 else "s"),
        sp=", ".join(meta["splits"]) if meta["splits"] else "none")
    row = cov[pkey]
    if _num(row["D"]) > 0:
        cov_txt = md("At tau = {t:g} the oracle covers {o} of the prompts and the best member ({b}) {c}: the oracle gap "
                     "L = {L} sits on D = {D} disagreement prompts, so a router beats the best member only if its error "
                     "on those prompts stays below the break-even L/D = {be}.", t=row["tau"], o=row["oracle"],
                     b=row["best_member"], c=row["best"], L=row["L"], D=row["D"], be=_num(row["break_even"]))
    else:
        cov_txt = md("At tau = {t:g} no prompt separates the members (D = 0): the oracle gap is zero.", t=row["tau"])
    if k == 1:
        cov_txt += " At k = 1 every threshold reads the single verdict, so all thresholds give the same numbers."
    out["coverage"] = cov_txt
    nl = numbers["nulls"]
    if not nl["applicable"]:
        out["nulls"] = nl["reason"]
    else:
        det = nl["detected_taus"]
        L = nl["L"][pkey]
        ex = nl["excess"]
        T = nl.get("n_tests", len(keys))
        tests = md("{T} distinct test{pl}", T=T, pl="" if T == 1 else "s")
        if det:
            head = md("Both nulls reject at tau = {ts} (Holm-adjusted within each null over the {tests} among the "
                      "thresholds, level {a}).", ts=_taus_text(det, numbers), tests=tests, a=s["alpha"])
        else:
            rj = [md("the re-deal null rejects at tau = {r}", r=_taus_text(nl["redeal_taus"], numbers))
                  if nl["redeal_taus"] else "the re-deal null rejects nowhere",
                  md("the margin-preserving null at tau = {m}", m=_taus_text(nl["margin_taus"], numbers))
                  if nl["margin_taus"] else "the margin-preserving null nowhere"]
            head = md("The two nulls never both reject at a threshold (Holm-adjusted over the {tests}, level {a}): ",
                      tests=tests, a=s["alpha"]) + "; ".join(rj) + "."
        body = ""
        if "mean" in L.get("redeal", {}) and "excess" in ex:
            body = md(" At tau = {t:g} the observed L = {o} against null means {mr} (re-deal) and {mm} (margin): the "
                      "re-deal excess is {e} with a {lvl:%} prompt-bootstrap interval [{lo}, {hi}].", t=L["tau"],
                      o=L["observed"], mr=L["redeal"]["mean"], mm=_num(L["margin"].get("mean")), e=ex["value"], lvl=ex["level"],
                      lo=ex["lo"], hi=ex["hi"])
        out["nulls"] = head + body
        qs = _quality_sentence(numbers)
        if qs:
            out["nulls"] += " " + qs
        caveat = _alignment_caveat(numbers)
        if caveat is not None:
            out["nulls"] += " " + caveat[0]
    pw = numbers["power"]
    ps = _power_sentence(numbers)
    eff = pw["effect"]
    eff_txt = md("The useful effect is a diffuse perturbation of every member's log-odds (sd {sg}) centred on this "
                 "pool's prompt rates, calibrated to a population gap L = {x} at tau = {t:g}{r}.", sg=eff["sigma"],
                 x=eff["calibrated_L"], t=eff["tau"],
                 r="" if eff["reachable"] else md(" (the target {tg} is out of reach; this is the largest)", tg=eff["target_L"]))
    out["power"] = eff_txt + (" " + ps if ps else " " + pw.get("reason", ""))
    c = numbers["certificates"]
    crow = c["levels"]["outcome"] if k == 1 else c["levels"][pkey]
    cert = crow.get("certificate") or {"value": crow["paired"]["value"], "lo": crow["paired"]["lo"],
                                       "hi": crow["paired"]["hi"]}
    T = c.get("n_tests", len(c["levels"]))
    ct = "none" if not c["certified_taus"] else ("the k = 1 outcomes" if k == 1 else
                                                 _taus_text(c["certified_taus"], numbers))
    if k > 1:
        cert_txt = md(
            "The certified quantity is the split-draw coverage gap: for every prompt the member with the most successes "
            "on half of its draws is scored at tau on the other half (and the halves swapped), against the best fixed "
            "member ({b}) scored on the same draws; under exchangeable members it is zero. At tau = {t:g} it is {g} "
            "[{lo}, {hi}] (confidence {lvl}, simultaneous over members and the {T} distinct test{pl}). Certified at: "
            "{ct}. Beside it, the apparent gap of the k draws (includes the winner's curse) is {pg} with paired interval "
            "[{plo}, {phi}]; Thm 4's exact interval of that apparent gap is [{elo}, {ehi}] and the naive interval that "
            "ignores the selection of the best member [{nlo}, {nhi}]. The apparent gap scores each member on the draws "
            "that made it look best, so even exchangeable members have a positive one; the split-draw gap under-states "
            "the reproducible gap (the choice sees half of the draws).",
            b=cert.get("best_member", "?"), t=crow["tau"], g=cert["value"], lo=cert["lo"], hi=cert["hi"],
            lvl=1 - c["alpha"], T=T, pl="" if T == 1 else "s", ct=ct, pg=crow["paired"]["value"],
            plo=crow["paired"]["lo"], phi=crow["paired"]["hi"], elo=crow["exact"]["lo"], ehi=crow["exact"]["hi"],
            nlo=crow["paired"]["naive_lo"], nhi=crow["paired"]["naive_hi"])
    else:
        cert_txt = md("At confidence {lvl}, the paired selection-valid interval of the outcome-oracle gap (Shihab et al.) is "
                      "[{lo}, {hi}] around the plug-in {g}; Thm 4's exact interval is [{elo}, {ehi}] and the naive "
                      "interval that ignores the selection of the best member is [{nlo}, {nhi}]. Certified: {ct}.",
                      lvl=1 - c["alpha"], lo=cert["lo"], hi=cert["hi"], g=cert["value"], elo=crow["exact"]["lo"],
                      ehi=crow["exact"]["hi"], nlo=crow["paired"]["naive_lo"], nhi=crow["paired"]["naive_hi"],
                      ct="no" if ct == "none" else "yes")
    plan = crow["plan"]
    if plan["certified_now"]:
        cert_txt += md(" Its lower limit already exceeds the useful size {t}.", t=plan["target"])
    else:
        cert_txt += " " + (_cert_step(numbers, "outcome" if k == 1 else pkey) or "")
    if k == 1:
        cert_txt += (" At k = 1 the outcome-oracle gap includes single-draw luck; k >= 2 responses per prompt would "
                     "separate it.")
    out["certificates"] = cert_txt
    nz = numbers["noise"]
    if not nz["applicable"]:
        out["noise"] = md("Not applicable: {r}.", r=nz["reason"])
    else:
        e = nz["decomposition"]["estimates"]
        b = nz["best_of_k"]
        share = e["noise_share"]
        if _num(share["lo"]) >= LUCK_SHARE:
            most = "most"
        elif _num(share["value"]) >= LUCK_SHARE:
            most = "perhaps most"
        else:
            most = "less than half" if _num(share["hi"]) < LUCK_SHARE else "probably less than half"
        out["noise"] = md(
            "The expected single-draw oracle O_exp = {oe} [{oel}, {oeh}] splits into the reproducible ceiling "
            "O_repro = {orp} [{orl}, {orh}] and the floor Delta = {d} [{dl}, {dh}]. Against the best single member "
            "({bs}) the gap is G_out = {g} [{gl}, {gh}] and the noise share Delta/G_out = {sh} [{shl}, {shh}]: {most} of the "
            "single-draw gap is single-draw luck. Best-of-{K} on the committed member, scored on held-out draws, "
            "reaches {bk} against the independence-form oracle {oi}: difference {df} [{dfl}, {dfh}], {res}.",
            oe=e["o_exp"]["value"], oel=e["o_exp"]["lo"], oeh=e["o_exp"]["hi"], orp=e["o_repro"]["value"],
            orl=e["o_repro"]["lo"], orh=e["o_repro"]["hi"], d=e["delta"]["value"], dl=e["delta"]["lo"], dh=e["delta"]["hi"],
            bs=e["best_single"]["value"], g=e["gap"]["value"], gl=e["gap"]["lo"], gh=e["gap"]["hi"], sh=share["value"],
            shl=share["lo"], shh=share["hi"], most=most, K=b["K"], bk=b["best_of_k_split"]["value"],
            oi=b["o_exp_independent"]["value"], df=b["difference"]["value"], dfl=b["difference"]["lo"],
            dfh=b["difference"]["hi"],
            res="so the falsifier of arXiv 2607.03436 does not fire" if b["passes"]
            else "below zero: the falsifier of arXiv 2607.03436 fires")
        asm = nz.get("assumptions")
        if asm:  # 001's checks behind the sampling formulas and the closed-form O_exp
            failed = [c["name"] for c in asm["checks"] if c.get("passed") is False]
            untested = sorted({c for v in asm["untested"].values() for c in v})
            out["noise"] += " " + md(
                "The assumption checks of arXiv 2607.03436: {res}{unt}.{luck}",
                res=("every check that could run passed" if not failed
                     else "failed: " + ", ".join(failed) + " (the magnitudes that lean on them are flagged, not read)"),
                unt=(f"; not testable on these draws: {', '.join(untested)}" if untested else ""),
                luck=(" The noise share is therefore not read as single-draw luck." if nz.get("luck_flag") else ""))
    ig = numbers.get("integrity")
    if ig is not None:  # integrity before inference: duplicates and leakage, alignment, aggregation
        out["integrity"] = ("Integrity before inference: " + (" ".join(ig["findings"]) if ig["findings"]
                            else "no duplicated prompts, no outcome disagreements, no aggregation warnings."))
    r = numbers["router"]
    if not r.get("available"):
        out["router"] = md("No quick router: {why}.", why=r.get("reason", "not available"))
    else:
        rk = "outcome" if k == 1 else pkey
        row = r["levels"][rk]
        rec = (md(" It recovers {rho} [{lo}, {hi}] of the split-selected gap G_b = {gb}.", rho=row["recovered"],
                  lo=row["recovered_lo"], hi=row["recovered_hi"], gb=row["G_b"]) if row.get("recovered_reported") else
               md(" The split-selected gap G_b = {gb} [{lo}, {hi}] is not certified on the test half, so no recovered "
                  "fraction is reported.", gb=row["G_b"], lo=row["G_b_lo"], hi=row["G_b_hi"]))
        out["router"] = md(
            "The quick router ({how}) was fitted on {nc} calibration prompts and compared on {nt} held-out prompts with the "
            "member selected on the calibration prompts ({b}){where}: {a} against {ba}, difference {d} [{dl}, {dh}], "
            "exact McNemar p = {p:p}{holm}; disagreement error e_D = {e} against the break-even (C_orac - C_b) / D = {be} "
            "for that member on the test prompts.", holm="" if k == 1 else md(" (Holm over thresholds {ph:p})", ph=_num(row["p_holm"])), how=r["how"], nc=r["n_cal"], nt=r["n_test"],
            b=row["baseline_policy"], where="" if k == 1 else md(" at tau = {t:g}", t=row["tau"]), a=row["accuracy"],
            ba=row["baseline_accuracy"], d=row["difference"], dl=row["diff_lo"], dh=row["diff_hi"], p=row["p_mcnemar"],
            e=_num(row["e_D"]), be=_num(row.get("break_even_selected", row["break_even"]))) + rec
    v = numbers["verdict"]
    out["verdict"] = Verdict(v["code"], v["headline"], tuple(v["reasons"]), tuple(v["next_steps"]), tuple(v["findings"]),
                             v["tau"]).markdown()
    out["settings"] = md("Settings: thresholds {ts}; level alpha = {a}; seed {seed}{small}; {nd:d} null draws, {nb:d} "
                         "bootstrap resamples, {nr:d} power replicates ({pr:d} per planner point).",
                         ts=", ".join(f"{t:g}" for t in s["taus"]), a=s["alpha"], seed=s["seed"],
                         small=" (small run: reduced Monte Carlo sizes)" if s["small"] else "", nd=s["n_draws"],
                         nb=s["n_boot"], nr=s["n_reps"], pr=s["plan_reps"])
    if s.get("design") == "large-n":  # the audit's large-n Monte Carlo design (audit.settings.large_n_design)
        seq = (" sequential null and quality tests (draws stop once each decision is settled),"
               if s.get("sequential") else "")
        look = (md(" power estimates stopped after {m:d} trials that all reject,",
                   m=s["power_first_look"]) if s.get("power_first_look") else "")
        plans = ("" if s.get("plan_if_adequate", True)
                 else " run only when this design's power is not adequate and")
        excess = ("excess resamples' null means shifted from the full data's without draws"
                  if s.get("excess_method") == "delta"
                  else md("{xd:d} null draws per excess resample", xd=s["excess_draws"]))
        nb = s.get("noise_boot") or {}
        noise_stop = ("" if not nb else md(
            "; the noise section's bootstraps stopped at {d:d} and {b:d} resamples{c} once the "
            "decisions they feed were settled", d=nb["decomposition"], b=nb["best_of_k"],
            c=md(" and its assumption checks at {p:d} permutations", p=nb["checks"])
            if "checks" in nb else ""))
        large = (" Large-n Monte Carlo design:{seq} power trials of {td:d} null draws on the "
                 "re-deal null only,{look} planners{plans} stopped at the first size reaching the "
                 "target, margin chain burn-in {bs:g} and spacing {ts:g} sweeps of n M proposals, "
                 "{excess}{noise}.")
        out["settings"] += md(large, seq=seq, look=look, plans=plans, excess=excess,
                              td=s["trial_draws"], bs=s["margin_burn_sweeps"],
                              ts=s["margin_thin_sweeps"], noise=noise_stop)
    if numbers.get("build"):  # what computed these numbers (commit, lock, library versions, date)
        from .._buildinfo import build_line

        out["build"] = "Computed by " + build_line(numbers["build"]).removeprefix("built ") + "."
    for name in MATH_SECTIONS:
        out[name] = latex(out[name])
    return out


# ============================================================================ display: tables
def frames(numbers: dict) -> dict:
    """Tidy tables of the report (pandas), built from the numbers."""
    out = {}
    cov = numbers["coverage"]["taus"]
    keys = list(cov)
    k = numbers["pool"]["k"]
    rows = []
    nl = numbers["nulls"]
    certs = numbers["certificates"]["levels"]
    for key in keys:
        r = dict(cov[key])
        if nl["applicable"]:
            for null in ("redeal", "margin"):
                r[f"p_{null}"] = _num(nl["L"][key].get(null, {}).get("p_holm"))
        ck = "outcome" if k == 1 else key
        cc = certs[ck].get("certificate") or certs[ck]["paired"]
        r["cert_lo"], r["cert_hi"] = cc["lo"], cc["hi"]
        rows.append(r)
    df = pd.DataFrame(rows).rename(columns={"break_even": "L/D"})
    if k == 1:
        df = df.iloc[[0]].drop(columns=["tau"] + [c for c in ("need",) if c in df.columns])
    out["overview"] = df
    out["coverage"] = df.drop(columns=[c for c in df.columns if c.startswith(("p_", "cert_")) or c == "oracle_minus_mixture"])
    mem = pd.DataFrame(numbers["pool"]["members"])
    if k > 1:
        wide = pd.DataFrame(numbers["coverage"]["members"]).pivot(index="policy", columns="tau", values="coverage")
        wide.columns = [f"C({t:g})" for t in wide.columns]
        mem = mem.merge(wide, left_on="policy", right_index=True)
    out["members"] = mem
    if nl["applicable"]:
        nrows = []
        for key in keys:
            L = nl["L"][key]
            for null in ("redeal", "margin"):
                t = L.get(null, {})
                nrows.append({"tau": L["tau"], "null": null, "observed": L.get("observed"), "null_mean": t.get("mean"),
                              "band_lo": (t.get("band") or [None, None])[0], "band_hi": (t.get("band") or [None, None])[1],
                              "excess": t.get("excess"), "p": t.get("p"), "p_holm": t.get("p_holm"),
                              "reject": bool(t.get("reject"))})
        out["nulls"] = pd.DataFrame(nrows)
    pw = numbers["power"]
    prow = []
    if pw.get("current"):
        for r in pw["current"]["rows"]:
            prow.append({"design": "this design", "n": r["n"], "k": r["k"], "null": r["null"], "population_L": r["population_L"],
                         "power": r["reject_rate"], "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "reps": r["reps"]})
    for name in ("plan_k", "plan_n"):
        plan = pw.get(name)
        if not plan:
            continue
        for r in plan["curve"]:
            prow.append({"design": f"more {'responses' if plan['vary'] == 'k' else 'prompts'}", "n": r["n"], "k": r["k"],
                         "null": r["null"], "population_L": r["population_L"], "power": r["reject_rate"],
                         "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "reps": r["reps"]})
    out["power"] = pd.DataFrame(prow)
    crow = []
    for lev in certs.values():
        cert = lev.get("certificate")
        if cert is not None and k > 1:
            crow.append({"tau": lev["tau"], "quantity": "split-draw gap (certified)", "best_member": cert["best_member"],
                         "value": cert["value"], "naive_lo": float("nan"), "naive_hi": float("nan"), "lo": cert["lo"],
                         "hi": cert["hi"], "certified": bool(cert["lo"] > 0), "prompts_needed": lev["plan"]["n_needed"]})
        for method in ("paired", "exact"):
            c = lev[method]
            name = ("outcome-oracle gap, " if k == 1 else "apparent gap, ") + (
                "paired" if method == "paired" else "Thm 4")
            crow.append({"tau": lev["tau"], "quantity": name, "best_member": c["best_member"], "value": c["value"],
                         "naive_lo": c["naive_lo"], "naive_hi": c["naive_hi"], "lo": c["lo"], "hi": c["hi"],
                         "certified": bool(c["lo"] > 0),
                         "prompts_needed": lev["plan"]["n_needed"] if (k == 1 and method == "paired") else None})
    cf = pd.DataFrame(crow)
    cf["prompts_needed"] = pd.array(cf["prompts_needed"].tolist(), dtype="Int64")  # None where no size suffices
    if k == 1:
        cf = cf.drop(columns=["tau"])
    out["certificates"] = cf
    nz = numbers["noise"]
    if nz["applicable"]:
        est = nz["decomposition"]["estimates"]
        show = ("best_single", "o_repro", "o_repro_split_loo", "o_exp", "delta", "gap", "g_rec", "noise_share",
                "frechet_upper")
        out["noise"] = pd.DataFrame([{"quantity": q, **{c: est[q][c] for c in ("value", "lo", "hi", "method")}}
                                     for q in show])
        b = nz["best_of_k"]
        out["best_of_k"] = pd.DataFrame([
            {"quantity": f"best-of-{b['K']}, committed on half the draws", "value": b["best_of_k_split"]["value"],
             "lo": b["best_of_k_split"]["lo"], "hi": b["best_of_k_split"]["hi"]},
            {"quantity": "single-draw oracle, independence form", "value": b["o_exp_independent"]["value"],
             "lo": b["o_exp_independent"]["lo"], "hi": b["o_exp_independent"]["hi"]},
            {"quantity": "difference", "value": b["difference"]["value"], "lo": b["difference"]["lo"], "hi": b["difference"]["hi"]},
        ])
    r = numbers["router"]
    if r.get("available"):
        rrow = []
        for _key, row in r["levels"].items():
            rrow.append({"tau": row["tau"], "router": row["accuracy"], "baseline": row["baseline_accuracy"],
                         "baseline_policy": row["baseline_policy"], "difference": row["difference"], "diff_lo": row["diff_lo"],
                         "diff_hi": row["diff_hi"], "p_mcnemar": row["p_mcnemar"], "p_holm": row["p_holm"],
                         "e_D": row["e_D"], "break_even": row.get("break_even_selected", row["break_even"]),
                         "recovered": row["recovered"]})
        rf = pd.DataFrame(rrow)
        out["router"] = rf.drop(columns=["tau"]) if k == 1 else rf
    return out


# ============================================================================ display: figures
def _err(v, lo, hi) -> np.ndarray:
    """Error-bar lengths [2, n] from limits (a value outside its interval gets a zero-length side)."""
    v, lo, hi = (np.asarray(a, dtype=float) for a in (v, lo, hi))
    return np.vstack([np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)])


def plot_coverage(numbers: dict):
    """Oracle, best member and uniform mixture coverage over thresholds (k > 1), audited taus marked."""
    import matplotlib.pyplot as plt

    cv = numbers["coverage"].get("curve")
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    if cv is None:
        ax.text(0.5, 0.5, "k = 1: one verdict per cell, no coverage curve", ha="center", va="center")
        ax.set_axis_off()
        return fig
    for name, style in (("oracle", "-"), ("best", "--"), ("mixture", ":")):
        ax.step(cv["tau"], cv[name], where="post", ls=style, label={"best": "best member"}.get(name, name))
    for row in numbers["coverage"]["taus"].values():
        ax.axvline(row["tau"], color="0.8", lw=0.8, zorder=0)
    ax.set(xlabel=r"threshold $\tau$", ylabel="coverage", ylim=(0, 1.02))
    ax.legend()
    return fig


def plot_nulls(numbers: dict):
    """Observed L(tau) against each null's mean and 90% band."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    nl = numbers["nulls"]
    if not nl["applicable"]:
        ax.text(0.5, 0.5, "k = 1: no nulls that need k > 1 apply", ha="center", va="center")
        ax.set_axis_off()
        return fig
    taus = np.array([nl["L"][key]["tau"] for key in nl["L"]])
    obs = np.array([_num(nl["L"][key].get("observed")) for key in nl["L"]])
    for j, null in enumerate(("redeal", "margin")):
        m = np.array([_num(nl["L"][key].get(null, {}).get("mean")) for key in nl["L"]])
        band = np.array([(nl["L"][key].get(null, {}).get("band") or [np.nan, np.nan]) for key in nl["L"]], dtype=float)
        x = np.arange(taus.size) + (j - 0.5) * 0.18
        ax.errorbar(x, m, yerr=_err(m, band[:, 0], band[:, 1]), fmt="o", capsize=3, label=f"{null} null: mean, 90% band")
    ax.plot(np.arange(taus.size), obs, "k*", ms=10, label=r"observed $L$")
    ax.set_xticks(np.arange(taus.size), [f"{t:g}" for t in taus])
    ax.set(xlabel=r"threshold $\tau$", ylabel=r"oracle gap $L$")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
    return fig


def plot_power(numbers: dict):
    """Power of the re-deal null (Wilson 95% intervals) over responses per prompt and prompts."""
    import matplotlib.pyplot as plt

    pw = numbers["power"]
    plans = [(name, pw[name]) for name in ("plan_k", "plan_n") if pw.get(name)]
    fig, axes = plt.subplots(1, len(plans), figsize=(3.4 * len(plans) + 0.5, 3.4), squeeze=False)
    cur = pw.get("current")
    for ax, (_name, plan) in zip(axes[0], plans, strict=True):
        var = plan["vary"]
        rows = [r for r in plan["curve"] if r["null"] == "redeal"]
        if cur:
            rows = [r for r in cur["rows"] if r["null"] == "redeal"] + rows
        x = np.array([r[var] for r in rows], dtype=float)
        y = np.array([r["reject_rate"] for r in rows])
        lo = np.array([r["ci_lo"] for r in rows])
        hi = np.array([r["ci_hi"] for r in rows])
        ax.errorbar(x, y, yerr=_err(y, lo, hi), fmt="o-", capsize=3)
        ax.axhline(pw["target"], color="0.5", ls="--", lw=1)
        ax.set(xscale="log", xlabel="responses per prompt k" if var == "k" else "prompts n", ylabel="power (re-deal)",
               ylim=(-0.02, 1.02))
        ax.set_xticks(x, [f"{int(v)}" for v in x])
        ax.minorticks_off()
    return fig


def plot_noise(numbers: dict):
    """Best single member, O_repro and O_exp with their intervals (paper 001's ladder)."""
    import matplotlib.pyplot as plt

    e = numbers["noise"]["decomposition"]["estimates"]
    names = [("best_single", "best single"), ("o_repro", r"$O_{\mathrm{repro}}$"), ("o_exp", r"$O_{\exp}$")]
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    v = np.array([e[q]["value"] for q, _ in names])
    lo = np.array([e[q]["lo"] for q, _ in names])
    hi = np.array([e[q]["hi"] for q, _ in names])
    ax.barh(np.arange(3), v, xerr=_err(v, lo, hi), capsize=4, color=["#949494", "#0173b2", "#de8f05"])
    ax.set_yticks(np.arange(3), [label for _, label in names])
    ax.set(xlabel="score (mean over prompts)", xlim=(0, 1))
    return fig
