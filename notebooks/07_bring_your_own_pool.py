# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Bring your own pool {#sec-byop}
#
# **The question.** You hold a pool: a base model and a few fine-tuned adapters, or several
# models you already evaluated, or only a table of which responses passed a verifier. Before
# you build a router for it, is its oracle gap more than sampling noise, does it survive
# choosing the best member on the same prompts, how much of it is single-draw luck, what would
# a router have to achieve, and what should you collect next if the answer is "not yet"? The
# three papers agree that these questions come first ([decision procedure](../decision.qmd)).
# This chapter runs the project's one-step answer, `oraclegap audit`, on a model with adapters
# and a prompt file (sampled here on the CPU through `oraclegap rollouts`), on the lab's seed
# pool and on a released pool of real LLM outcomes (the $k = 30$ MATH-500 tensors of arXiv
# 2607.03436). It then asks how the verdict moves as responses are added and how often a
# verdict is right on simulated pools of known truth. Long tables, other tools' files and the
# exporters are in the appendix (@sec-byop-appendix). The audit's sections, its verdict rules
# and every number it states are those of the earlier chapters (@sec-seed-pool, @sec-certificates
# and @sec-routing-plateau); symbols follow the [notation page](../notation.qmd).

# %% tags=["og-answer-slot"]
#| echo: false
# The built book shows here the answer computed with the takeaways (oraclegap.book.lift_answer).

# %% [markdown]
# **Learning objectives.** After this chapter you can
#
# - run `oraclegap audit` on a rollout store, a registry name, a long table or a `Pool` in Python;
# - read the audit's verdict code, its reasons and its next steps;
# - tell a verdict backed by a rejection from one that rests on a non-rejection, and read the
#   latter against the planner's power;
# - sample your own pool with `oraclegap rollouts` and know why per-policy draw seeds matter.
#
# **Claims checked.**
#
# 1. `oraclegap rollouts --draw-seeds per-policy` turns the lab's base model, two of its
#    adapters and a prompt file into a complete store on the CPU, each adapter sampled with its
#    own seeds; with the lab's seeds it reproduces the lab's stored responses (the first $k$ of
#    its 64 per prompt) answer for answer.
# 2. `oraclegap audit` writes an HTML report and an `audit.json` whose numbers equal those of
#    `run_audit` called from Python on the same pool and seed.
# 3. On the lab's seed pool (five GRPO seeds of one recipe, 16 responses per prompt, per-policy
#    draws) neither null rejects at $\tau = 0.10$, as neither does on the Geometry3K seed pool
#    of 2609.32996 (Table 1); the audit says at which thresholds they do reject, how much power
#    the design had and what the planner would collect. On the same seeds sampled seed-aligned
#    the audit adds that the nulls assume independent draws and asks for per-policy draws.
# 4. On the MATH-500 tensors the audit's decomposition reproduces the released figures (best
#    single 0.773, $O_{\mathrm{repro}}$ 0.837, $O_{\exp}$ 0.873) within 0.002, and its verdict
#    is a certified gap that the quick router is not shown to recover (its difference against
#    the calibration-selected member has an interval that includes zero).
# 5. A long table of verdicts read with `Pool.from_long` gives the same audit, section for
#    section, except the router (a long table carries prompt text, not embeddings);
#    `Pool.to_long` and `open_pool` round-trip verdicts, answers, confidences and alignment.
# 6. On nested subsets of the lab's 64 responses per prompt, the verdict changes with $k$: the
#    table shows at which $k$, and whether the planner's request at $k = 16$ was enough.
# 7. In the verdict study (audits of simulated pools of known truth, `make study`) no cell whose
#    truth has no specialization breaks the false-claim rule (§7.4: its false-claim rate's
#    Wilson 95% interval lies wholly above $\alpha$), and exchangeable pools at
#    $k = 1$ are never reported as `certified`; the certified quantity's interval covers its
#    population value in at least 95% of pools of every class, its lower limit on identical
#    members is at most zero in at least 95% of pools, and `quality-only` is the verdict on at
#    least 80% of quality-only pools with $n \ge 1500$ and $k \ge 16$.

# %% tags=["parameters"]
# a quick run: fewer live prompts and responses, reduced Monte Carlo sizes in every audit
SMALL = False
SEED = 0
# lab primary test prompts sampled live, a multiple of 8 (the lab's sampling chunks); None: 48,
# or 16 with SMALL
N_LIVE = None
K_LIVE = None  # responses per prompt and adapter sampled live (None: 16, or 8 with SMALL)
ADAPTERS = ["primary-light-s1", "primary-light-s2"]  # two of the lab's light primary adapters
LAB_POOL = "lab-seed-primary"  # the lab's seed pool: 240 prompts x 5 seeds x 16 responses
LAB_K64 = "lab-primary-k64"  # the same prompts and seeds with 64 responses each
LAB_ALIGNED = "lab-seed-primary-aligned"  # the seed pool's seeds and prompts sampled seed-aligned
# the released MATH-500 tensors, 30 responses each (needs OG_EXTERNAL_DIR)
REAL_POOL = "chen2026-math500"
# responses per prompt in the sweep, up to 64 (None: 2, 4, 8, 16, 32, 64; with SMALL 2, 8, 16, 64)
K_GRID = None
TAUS = [0.05, 0.10, 0.20, 0.30]  # the audit's thresholds (2609.32996's)
ALPHA = 0.05

# %%
import json
import os
import shutil
import tempfile
import textwrap
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import yaml
from IPython.display import display

t_start, skipped = time.perf_counter(), []  # the chapter's clock

# %%
from oraclegap import Pool, audit, datasets
from oraclegap import report as R
from oraclegap.audit.display import verdict_markdown
from oraclegap.audit.settings import section_seeds as audit_section_seeds
from oraclegap.audit.verdict_text import latex
from oraclegap.cli import command_line, run_in_process
from oraclegap.deploy.routers import label as router_label
from oraclegap.rollouts.generate import dir_digest
from oraclegap.sources import harness_fixture, open_pool
from oraclegap.stats import nulls

R.use_style()


# %%
def as_list(value, name):
    """A list parameter as a list: given typed, or as the text of a JSON or YAML list such as
    "[0.05, 0.1]" or "[primary-light-s1, primary-light-s3]" (papermill's ``-p`` passes text)."""
    try:
        v = yaml.safe_load(value) if isinstance(value, str) else value
    except yaml.YAMLError:
        v = None
    if not isinstance(v, (list, tuple)) or not v:
        raise ValueError(f"{name} must be a non-empty list such as [0.05, 0.1], got {value!r}")
    return list(v)


ADAPTERS, TAUS = as_list(ADAPTERS, "ADAPTERS"), as_list(TAUS, "TAUS")
K_GRID = None if K_GRID is None else as_list(K_GRID, "K_GRID")

# %%
# SMALL shrinks the sizes left at None; a value given on the command line is kept
N_LIVE = N_LIVE or (16 if SMALL else 48)
K_LIVE = K_LIVE or (8 if SMALL else 16)
K_GRID = K_GRID or ([2, 8, 16, 64] if SMALL else [2, 4, 8, 16, 32, 64])
nulls.warm_up()  # compile or load the numba kernels once, before anything is timed
LAB, WORK = datasets.lab_dir(), Path(tempfile.mkdtemp(prefix="og-ch07-"))
SETTINGS = audit.audit_settings(TAUS, ALPHA, SEED, small=SMALL)
SMALL_SET = audit.audit_settings(TAUS, ALPHA, SEED, small=True)  # the harness and Exercise 2 audits
SEED_OF = audit_section_seeds(SEED)  # the seed each section of an audit draws from


# %%
def show_verdict(v, title):
    """A verdict as a callout, its symbols in LaTeX (the JSON and the CLI keep plain text)."""
    R.show_lines([R.callout(verdict_markdown(v), kind="note", title=title)])


# %% [markdown]
# ## Data and settings
#
# Everything in the first half of the chapter comes from the project's policy lab
# (`data/lab/`, built by `make lab`): a small Llama-architecture base model with a character
# tokenizer, LoRA adapters trained from it by GRPO under several seeds, and the lab's prompts,
# small arithmetic and geometry questions with integer answers (the primary task plays the role
# of Geometry3K in 2609.32996). The live rollouts sample two adapters with the lab's own
# sampling settings, each adapter with its own draw seeds as the lab does (per-policy draws,
# so the adapters' draws are independent); the lab's stored pools hold the same prompts and
# seeds sampled earlier, 16 and 64 responses per prompt. The real pool is read in place from
# `OG_EXTERNAL_DIR` when
# present. We load the pools and the lab's sampling settings, and fingerprint the base model and the
# two adapters by the digest of their folders, so that the settings table says exactly which files
# were sampled (@tbl-byop-settings).

# %%
LAB_CFG = json.loads((LAB / "manifest.json").read_text())["config"]  # the lab's sampling settings
lab_pool, k64_pool = datasets.load(LAB_POOL), datasets.load(LAB_K64)
real, real_why = datasets.load_optional(REAL_POOL)
digest = {"base": dir_digest(LAB / "models" / "main")[:12],
          **{a: dir_digest(LAB / "adapters" / a)[:12] for a in ADAPTERS}}
live_row = ("live rollouts",
            f"base data/lab/models/main ({digest['base']}) with adapters "
            + ", ".join(f"{a} ({digest[a]})" for a in ADAPTERS),
            f"{N_LIVE} primary test prompts, task integer, k = {K_LIVE}, temperature "
            f"{LAB_CFG['temperature']:g}, {LAB_CFG['max_tokens']} new tokens, seed "
            f"{LAB_CFG['sample_seed']}, transformers on CPU")

audit_row = (f"τ = {', '.join(f'{t:g}' for t in SETTINGS.taus)}; α = {ALPHA:g}; seed {SEED} "
             f"(each section draws from seed {SEED} plus its own offset, "
             f"{min(SEED_OF.values())} to {max(SEED_OF.values())}); "
             f"{'reduced' if SMALL else 'full'} Monte Carlo sizes ({SETTINGS.n_draws:,} null "
             f"draws, {SETTINGS.n_reps} power replicates), except the harness fixtures' audits and "
             f"Exercise 2's, which run at `--small` sizes ({SMALL_SET.n_draws:,} null draws, "
             f"{SMALL_SET.n_reps} power replicates)")

# %%
#| label: tbl-byop-settings
#| tbl-cap: "Inputs and settings of this chapter."
rows = [live_row,
        ("lab seed pool", LAB_POOL,
         f"{lab_pool.n_prompts} prompts × {lab_pool.n_policies} seeds × k = {lab_pool.k}, "
         f"{lab_pool.alignment}"),
        ("seed-aligned twin", LAB_ALIGNED,
         "the seed pool's seeds and prompts, k = 16, sampled with seed-aligned draws"),
        ("more responses", LAB_K64,
         f"the same prompts, base + {k64_pool.n_policies - 1} seeds, k = {k64_pool.k}; k = "
         f"{', '.join(map(str, K_GRID))}"),
        ("real pool", REAL_POOL,
         "absent on this run" if real is None
         else f"{real.n_prompts} problems × {real.n_policies} models × k = {real.k}, "
              f"{real.alignment}"),
        ("every audit", "oraclegap.audit", audit_row)]
R.table(pd.DataFrame(rows, columns=["input", "what", "settings"]))

# %% [markdown]
# ## The audit on your pool {#sec-byop-audit}
#
# The audit reads any pool the same way. Here it reads three: a store sampled live from the
# lab's model and two adapters, the lab's seed pool it was sliced from (with the same seeds
# sampled seed-aligned beside it), and a released pool of real LLM outcomes.

# %% [markdown]
# ### From a model and a prompt file
#
# A prompt file is JSONL, one object per line with an `id`, the `prompt` text and the gold
# `answer`; every other field is kept as a prompt feature. We write the first `N_LIVE` of the
# lab's primary test prompts (in the lab's order, by id) with their dataset and split.

# %%
prompts = pd.read_parquet(LAB / "prompts.parquet")
live = prompts[(prompts["dataset"] == "primary") & (prompts["split"] == "test")].sort_values("id",
        kind="stable").head(N_LIVE)
prompt_file = WORK / "prompts.jsonl"
with prompt_file.open("w", encoding="utf-8") as f:
    for r in live.itertuples():
        f.write(json.dumps({"id": r.id, "prompt": r.text, "answer": str(int(r.answer)),
                            "dataset": r.dataset, "split": r.split}) + "\n")
first = prompt_file.read_text(encoding="utf-8").splitlines()[:2]
R.show_md("Wrote {n} prompts to `prompts.jsonl`; its first lines:\n\n```json\n{lines}\n```",
          n=len(live), lines="\n".join(first))

# %% [markdown]
# The command samples $k$ responses per prompt from each adapter over the base model,
# verifies each with the lab's task `integer` (the last integer in the response must equal the
# gold answer), and writes them to a store (README, "Rollouts"). It runs in its own process, as
# from a shell, with one thread: on a shared CPU that avoids oversubscription, and the lab
# sampled with one thread too. The batch size keeps the lab's chunks of eight prompts per batch,
# and `--draw-seeds per-policy` gives each adapter its own seeds, derived from its name, as the
# lab's pools were sampled: the nulls of the audit assume independent draws across members.

# %%
store = WORK / "store"
roll_args = ["rollouts", "--model", LAB / "models" / "main",
             *[w for a in ADAPTERS
               for w in ("--adapter", f"{a}={os.path.relpath(LAB / 'adapters' / a)}")], "--prompts",
             prompt_file, "--task", "integer", "--k", K_LIVE, "--temperature",
             LAB_CFG["temperature"], "--max-tokens", LAB_CFG["max_tokens"], "--seed",
             LAB_CFG["sample_seed"], "--draw-seeds", "per-policy", "--batch-size", 8 * K_LIVE,
             "--out", store, "--no-progress", "--json"]
status_out, t_roll = run_in_process(*roll_args)
status = json.loads(status_out)
R.show_md("```bash\n{cmd}\n```",
          cmd=command_line(*roll_args, scratch=WORK).replace(" --", " \\\n    --"))

# %%
st = pd.DataFrame(status["per_policy"])
n_resp = status["responses_done"]
R.show_md("Reading: the store is {state} ({done} of {total} prompt-policy cells); {n:,} responses "
          "took {t:.1f} s, {rate:.0f} responses per second including loading the model. Accuracy "
          "per adapter: {acc}.",
          state="complete" if status["complete"] else "incomplete", done=status["cells_done"],
          total=status["cells_total"], n=n_resp, t=t_roll, rate=n_resp / t_roll,
          acc=", ".join(R.md("{p} {a}", p=r["policy"], a=r["accuracy"])
                        for r in st.to_dict("records")))

# %% [markdown]
# A store opens as a pool. `Pool.from_store` checks that every (prompt, policy, draw) is there
# exactly once and marks the pool `independent` when every policy drew its own seeds
# (`seed-aligned` when draw $j$ of a prompt used one seed under every policy); per-response
# confidences (the mean token log-probability) come along in
# `pool.per_response`. The lab sampled the same prompts and adapters with the same seed rule
# earlier (`LAB_K64`, 64 responses each); the first $k$ of them should be our responses.

# %%
live_pool = Pool.from_store(store)
# does the lab's stored pool hold these cells?
held = (set(live_pool.prompt_ids) <= set(k64_pool.prompt_ids)
        and set(ADAPTERS) <= set(k64_pool.policy_names) and K_LIVE <= k64_pool.k)
if held:
    stored = k64_pool.select(prompts=live_pool.prompt_ids,
                             policies=live_pool.policy_names).draws(np.arange(K_LIVE))
    same_answers = float((live_pool.answers == stored.answers).mean())
    repro = R.md("Its answers agree with the lab's stored responses on {sa:%} of the draws "
                 "(verdicts {sv}).",
                 sa=same_answers,
                 sv="identical" if np.array_equal(live_pool.verdicts, stored.verdicts)
                 else "not identical")
else:
    repro = R.md("`{p}` does not hold these prompts, adapters and draws, so there is nothing "
                 "stored to compare with.",
                 p=LAB_K64)

# %%
conf = live_pool.per_response["confidence"]
c_right, c_wrong = float(conf[live_pool.verdicts].mean()), float(conf[~live_pool.verdicts].mean())
R.show_md("Reading: the pool is {n} prompts × {M} policies × k = {k}, alignment `{al}`. {repro} "
          "The mean token log-probability of a correct response is {cr}, {cmp} that of a wrong "
          "one ({cw}): a confidence a post-answer selector could read.",
          n=live_pool.n_prompts, M=live_pool.n_policies, k=live_pool.k, al=live_pool.alignment,
          repro=repro, cr=c_right, cw=c_wrong,
          cmp=R.compare(c_right, c_wrong, more="above", less="below", same="equal to"))

# %% [markdown]
# A store is a `POOL` for every command. `oraclegap audit` runs the whole audit and writes the
# report folder: `audit.json` (every number the report states), the executed report notebook
# and `report.html`, all written to a temporary folder and renamed into place at the end. On a
# SMALL run the audit gets `--small` (reduced Monte Carlo sizes) and `--no-report` (`audit.json`
# alone: executing and rendering the report notebook takes a few seconds more).

# %%
aud_dir = WORK / "audit-live"
aud_args = ["audit", store, "--out", aud_dir, "--seed", SEED, "--quiet",
            *(["--small", "--no-report"] if SMALL else [])]
aud_out, t_aud = run_in_process(*aud_args)
live_numbers = audit.load_numbers(aud_dir / "audit.json")
printed = [textwrap.fill(line.replace(str(WORK), "$WORK"), 80, subsequent_indent="    ")
           for line in aud_out.strip().splitlines()]
R.show_md("```bash\n{cmd}\n```\n\nIt printed:\n\n```\n{out}\n```",
          cmd=command_line(*aud_args, scratch=WORK), out="\n".join(printed))

# %% [markdown]
# The verdict is chosen by the explicit rules of `oraclegap.audit.verdict` (README, "Check your
# own pool"): it names the first rule that applies, the numbers behind it and what to collect
# next.

# %%
direct = audit.run_audit(live_pool, TAUS, ALPHA, SEED, small=SMALL, source=str(store))
computed = {k: v for k, v in live_numbers.items() if k != "build"}  # the build record: what ran
json_equal = json.loads(json.dumps(direct.to_json())) == computed

# %%
live_al = live_numbers["nulls"]["draw_alignment"]  # the live store's draw-alignment check
if not live_al["coupled"]:
    align_txt = R.md("Same-index draws agree {m} of the time against {e} after shuffling "
                     "(p = {p:p}): no coupling is measured, as per-policy seeds intend.",
                     m=live_al["matched"], e=live_al["shuffled"], p=live_al["p"])
elif live_al.get("independent_by"):
    align_txt = R.md("Same-index draws agree {m} of the time against {e} after shuffling "
                     "(p = {p:p}, at or below α = {a:g}); the store's seeds make the draws "
                     "independent by construction ({why}), so the audit reads that rejection as "
                     "the chance it is, a check at level α rejecting on at most that share of such "
                     "pools, and asks for no other sampling.",
                     m=live_al["matched"], e=live_al["shuffled"], p=live_al["p"], a=ALPHA,
                     why=live_al["independent_by"])
else:
    align_txt = R.md("Same-index draws agree {m} of the time against {e} after shuffling "
                     "(p = {p:p}), and the store's seeds do not prove independence, so the audit "
                     "reads the nulls as conservative.",
                     m=live_al["matched"], e=live_al["shuffled"], p=live_al["p"])

# %%
R.show_lines([R.callout(audit.texts(live_numbers)["verdict"], kind="note",
                        title=R.md("Verdict on the live store: {c}",
                                   c=live_numbers["verdict"]["code"]))])
R.show_md("Reading: the report folder holds {files}; the audit took {t:.1f} s{rep}. Its "
          "`audit.json` is {eq} the numbers of `run_audit` on the same pool and seed (beside "
          "them it records the commit, lock and library versions that computed them). With {n} "
          "prompts and {M} members the verdict is `{code}`. {align}",
          files=", ".join(sorted(p.name for p in aud_dir.iterdir())), t=t_aud,
          rep="" if SMALL else " including the report",
          eq="identical to" if json_equal else "different from", n=live_pool.n_prompts,
          M=live_pool.n_policies, code=live_numbers["verdict"]["code"], align=align_txt)

# %% [markdown]
# ### The lab's seed pool, from Python
#
# The live store was a slice of the lab's seed pool: all 240 primary test prompts, the five
# light seeds, 16 responses each. From Python the audit is one call, `run_audit`, whose result
# holds every number (`.to_json()`, what `audit.json` would hold), the library objects they came
# from (`.results`) and the verdict (@tbl-byop-lab).

# %%
res_lab = audit.run_audit(lab_pool, TAUS, ALPHA, SEED, small=SMALL, source=LAB_POOL)
show_verdict(res_lab.verdict, R.md("Verdict on {p}: {c}", p=LAB_POOL, c=res_lab.verdict.code))

# %%
#| label: tbl-byop-lab
#| tbl-cap: >-
#|   The audit of the lab's seed pool per threshold: best-member coverage, disagreement D, oracle
#|   gap L (the oracle's coverage is best + L) and the break-even router error L/D, the
#|   Holm-adjusted p-values of both nulls, and the interval of the certified quantity at τ: the
#|   split-draw coverage gap, zero when the members are exchangeable.
OVERVIEW = {"tau": "τ", "best": "best", "D": "D", "L": "L", "L/D": "$L/D$",
            "p_redeal": "p re-deal (Holm)", "p_margin": "p margin (Holm)", "cert": "certificate"}


def overview(res):
    """The audit's per-threshold table with the certificate as one interval."""
    df = res.frame().copy()
    df["cert"] = [R.fmt_interval(None, lo, hi)
                  for lo, hi in zip(df["cert_lo"], df["cert_hi"], strict=True)]
    for c in ("p_redeal", "p_margin"):
        df[c] = df[c].map(R.fmt_p)
    return R.table(df, columns=OVERVIEW)


overview(res_lab)

# %%
from oraclegap.stats.coverage import need  # the count rule c >= need(tau, k) of a threshold


def half_groups(res):
    """The thresholds of an audit grouped by the halves and count rules of their split-draw
    certificates: (k_a, k_b, need_a, need_b) -> thresholds."""
    groups = {}
    for lv in res.numbers["certificates"]["levels"].values():
        c = lv.get("certificate") or {}
        if "need_a" in c:
            groups.setdefault((c["k_a"], c["k_b"], c["need_a"], c["need_b"]), []).append(c["tau"])
    return groups


listed = lambda xs: " and ".join([", ".join(map(str, xs[:-1])), str(xs[-1])][len(xs) < 2:])  # noqa: E731


# %%
def half_rule_note(res):
    """A sentence for each group of thresholds whose split-draw certificates share the count rule
    of a half but whose count rules on all draws differ (empty when there is none)."""
    k, out = res.numbers["pool"]["k"], []
    for (ka, kb, na, nb), ts in half_groups(res).items():
        full = [int(v) for v in need(ts, k)]
        if len(ts) > 1 and len(set(full)) > 1:
            out.append(R.md(
                "The certificate column reads the same at $\\tau$ = {ts}: the split-draw "
                "certificate counts successes on halves of {h} draws, where the count rule of "
                "{every} is $c \\ge$ {n} ({rule}), so their intervals are one statistic; `best`, "
                "$D$ and $L$ count on all {k} draws, where the rules are $c \\ge$ {f}.",
                ts=listed([f"{t:g}" for t in ts]), every="both" if len(ts) == 2 else "all",
                h=listed(sorted({ka, kb})), n=listed(sorted({na, nb})), k=k, f=listed(full),
                rule=listed([f"$\\lceil \\tau \\cdot {x} \\rceil$" for x in sorted({ka, kb})])))
    return " ".join(out)


note = half_rule_note(res_lab)
if note:
    R.show_md("{n}", n=note)

# %%
st_lab = res_lab.numbers["settings"]
R.show_md("The p-values are Holm-adjusted over the {n} thresholds, so each is at least the raw "
          "p of its test. The null draws ({d:,} per null) come from the audit's nulls seed "
          "{s}, the seed chapter 2 draws its Table 1 (@tbl-table1) and its MATH-500 table "
          "(@tbl-seed-real) from: there the same tests print their raw p-values.",
          n=len(st_lab["taus"]), d=st_lab["n_draws"], s=st_lab["seeds"]["nulls"])

# %%
jl = res_lab.numbers
pw_lab, cur_lab = jl["power"], jl["power"]["current"]
taus_of = lambda keys: (", ".join(f"{jl['coverage']['taus'][key]['tau']:g}" for key in keys)
                        or "none")
rejects = (R.md("neither null rejects at any threshold (smallest Holm-adjusted p {p:p})",
                p=audit.summary(jl)["p_redeal"])
           if not (jl["nulls"]["redeal_taus"] or jl["nulls"]["margin_taus"])
           else R.md("the re-deal null rejects at $\\tau$ = {r} and the margin-preserving null at "
                     "$\\tau$ = {m}",
                     r=taus_of(jl["nulls"]["redeal_taus"]), m=taus_of(jl["nulls"]["margin_taus"])))

# %%
# the planner's designs and whether the verdict's next steps give them: every planner step states
# a power, no other step does
kn, nn = (audit.summary(jl)[c] or "more than its grid" for c in ("k_needed", "n_needed"))
planned = any("power" in step for step in res_lab.verdict.next_steps)
det_lab = jl["nulls"]["detected_taus"]
R.check(not (det_lab and planned), "a verdict with a threshold where both nulls reject gives no "
        "planner step (the reading below says so)")
first_step = (R.md("best-of-M sampling of the committed member (M = {K}), given a verifier",
                   K=jl["noise"]["best_of_k"]["K"]) if res_lab.verdict.code == "luck"
              else R.md("what the verdict `{c}` prescribes", c=res_lab.verdict.code))
plan_lab = (" It asks for no more data." if cur_lab["state"] == "adequate" else R.md(
    " The planner of the audit's power section reaches the target power {tp:g} with k = {kn} "
    "responses or n = {nn} prompts (@tbl-byop-sweep; `power.plan_k` and `power.plan_n` in "
    "`audit.json`){why}.", tp=SETTINGS.target_power, kn=kn, nn=nn,
    why=", the audit's next steps above" if planned else R.md(
        ". Neither is among the audit's next steps above, which give {s}: at k > 1 the audit gives "
        "the planner's designs as next steps only with a verdict where no threshold has both "
        "nulls rejecting, and here both reject at $\\tau$ = {ts}", s=first_step,
        ts=taus_of(det_lab))))

# %%
R.show_md("Reading: at $\\tau$ = {t:g} the oracle beats the best seed by $L$ = {L} on $D$ = {D} "
          "disagreement prompts, and {rejects}. Against a diffuse effect of the useful size the "
          "design's power is {pw} [{lo}, {hi}] over {reps} simulated pools, so the audit reads it "
          "as `{state}`.{plan}",
          t=pw_lab["tau"], L=jl["coverage"]["taus"][jl["coverage"]["primary_key"]]["L"],
          D=jl["coverage"]["taus"][jl["coverage"]["primary_key"]]["D"], rejects=rejects,
          pw=cur_lab["power"]["redeal"], lo=cur_lab["interval"]["redeal"][0],
          hi=cur_lab["interval"]["redeal"][1], reps=cur_lab["n_reps"], state=cur_lab["state"],
          plan=plan_lab)

# %% [markdown]
# ### The same seeds, seed-aligned
#
# The audit's nulls assume draws independent across members, which per-policy seeds give by
# design. Sampled *seed-aligned* instead (draw $j$ of a prompt with one seed under every member,
# `--draw-seeds aligned`, the protocol of 2607.03436's single-draw oracle estimator), the same
# five seeds on the same prompts are fed common random numbers (`LAB_ALIGNED`, as in
# chapter 2's @sec-draw-alignment). The audit reads the pool's alignment, measures the matched
# agreement and says what the coupling does to its nulls. The comparison needs the twin of
# `LAB_POOL`: the same prompts, seeds and $k$ (the lab has one for its primary seed pool);
# otherwise it is skipped.

# %%
al_pool = datasets.load(LAB_ALIGNED)
twin = (al_pool.prompt_ids == lab_pool.prompt_ids and al_pool.policy_names == lab_pool.policy_names
        and al_pool.k == lab_pool.k and al_pool.alignment == "seed-aligned")
res_al = audit.run_audit(al_pool, TAUS, ALPHA, SEED, small=SMALL,
                         source=LAB_ALIGNED) if twin else None
if twin:
    show_verdict(res_al.verdict, R.md("Verdict on {p}: {c}", p=LAB_ALIGNED, c=res_al.verdict.code))
else:
    skipped.append(f"the seed-aligned comparison: {LAB_ALIGNED} is not {LAB_POOL} sampled "
                   "seed-aligned (prompts, seeds or k differ)")

# %%
if twin:
    ja, s_al = res_al.numbers, audit.summary(res_al)
    dal = ja["nulls"]["draw_alignment"]
    R.check("per-policy" in res_al.verdict.next_steps[0],
            "the first step of what to collect next is per-policy draws (the text below)")
    R.show_md("Reading: seed-aligned, responses with the same draw index agree {a} of the time "
              "against {e} after shuffling; the smallest Holm-adjusted re-deal p over the "
              "thresholds {pw} from {p0:p} to {p:p} and the verdict is `{c}` instead of `{c0}`. "
              "The audit says the nulls are conservative on these draws, and its first step of "
              "what to collect next is to sample each member with its own seeds.",
              a=dal["matched"], e=dal["shuffled"],
              pw=R.compare(s_al["p_redeal"], audit.summary(jl)["p_redeal"], more="rises",
                           less="falls", same="stays"), p0=audit.summary(jl)["p_redeal"],
              p=s_al["p_redeal"], c=res_al.verdict.code, c0=res_lab.verdict.code)

# %% [markdown]
# ### A real pool: the MATH-500 tensors
#
# Chen's $k = 30$ tensors (arXiv 2607.03436) hold thirty seed-aligned responses of eleven open
# models to every MATH-500 problem: a pool of genuinely different models rather than seeds.
# Any registry name, pool directory, `.npy`, `FILE.npz:KEY` or wide CSV is a `POOL`; in a shell
# this audit is `oraclegap audit chen2026-math500 --out audit-math500`.

# %%
if real is None:
    skipped.append(f"the MATH-500 audit ({REAL_POOL}): {real_why}")
    R.show_md("The MATH-500 tensors are absent on this run ({why}); this section is skipped.",
              why=real_why)
else:
    res_real = audit.run_audit(real, TAUS, ALPHA, SEED, small=SMALL, source=REAL_POOL)
    show_verdict(res_real.verdict,
                 R.md("Verdict on {p}: {c}", p=REAL_POOL, c=res_real.verdict.code))

# %%
#| label: tbl-byop-real
#| tbl-cap: "The audit of the MATH-500 tensors per threshold (columns as in the seed pool's table)."
if real is not None:
    display(overview(res_real))
else:
    R.show_md("(absent on this run)")

# %%
if real is not None:
    est = res_real.numbers["noise"]["decomposition"]["estimates"]
    rel = {"best_single": "001.REL.best_single", "o_repro": "001.REL.orepro",
           "o_exp": "001.REL.oexp"}
    dev_real = max(abs(est[q]["value"] - R.published(key).value) for q, key in rel.items())
    rr = res_real.numbers["router"]["levels"][res_real.numbers["coverage"]["primary_key"]]
    boot_note = R.md("from the audit's own {nb:,} prompt resamples (seed {sd}, the audit's seed "
                     "{s0} plus the decomposition's offset); chapter 5's "
                     "@tbl-plateau-decomp draws its own resamples from that chapter's seed, so its "
                     "bracket can differ in the third digit",
                     nb=res_real.numbers["settings"]["n_boot"],
                     sd=res_real.numbers["settings"]["seeds"]["decomposition"], s0=SEED)

# %%
if real is not None:
    R.show_md("Reading: the audit's decomposition gives best single {b}, $O_{{\\mathrm{{repro}}}}$ "
              "= {r} and $O_{{\\exp}}$ = {e} (released {pb}, {pr}, {pe}; largest difference "
              "{dev:.4f}), a noise share of {sh} [{slo}, {shi}] ($\\Delta / G_S$, the "
              "$\\Delta / G$ of 2607.03436, with $G_S = O_{{\\exp}} - S$ against the best single "
              "member $S$: it lies in [0, 1] because $O_{{\\mathrm{{repro}}}} \\ge S$, and its "
              "bracket is cut to that range), {boot}. The verdict is `{code}`: the "
              "quick router's difference against the calibration-selected member is {d:+} [{dlo}, "
              "{dhi}].",
              b=est["best_single"]["value"], r=est["o_repro"]["value"], e=est["o_exp"]["value"],
              pb=R.published(rel["best_single"]).text, pr=R.published(rel["o_repro"]).text,
              pe=R.published(rel["o_exp"]).text, dev=dev_real, sh=est["noise_share"]["value"],
              slo=est["noise_share"]["lo"], shi=est["noise_share"]["hi"],
              code=res_real.verdict.code, d=rr["difference"], dlo=rr["diff_lo"], dhi=rr["diff_hi"],
              boot=boot_note)

# %% [markdown]
# The audit certifies the split-draw coverage gap (each prompt's member chosen on half of its
# draws and scored on the other half); the apparent gap of all thirty draws, and Shihab et al.'s
# Theorem 4 interval of it, stand beside it because they carry the winner's curse of picking each
# prompt's best member on the draws that score it.

# %%
if real is not None:
    cr = res_real.numbers["certificates"]["levels"][res_real.numbers["coverage"]["primary_key"]]
    c, ex = cr["certificate"], cr["exact"]
    R.show_md("At $\\tau$ = {t:g} the split-draw gap is {g} [{lo}, {hi}], {w}; the apparent gap "
              "is {a} and its Theorem 4 interval [{elo}, {ehi}] {w2}.", t=cr["tau"],
              g=c["value"], lo=c["lo"], hi=c["hi"], a=cr["paired"]["value"],
              w="certified" if c["lo"] > 0 else "not certified", elo=ex["lo"], ehi=ex["hi"],
              w2="certifies it too" if ex["lo"] > 0 else "does not certify it")

# %% [markdown]
# ### From an evaluation harness {#sec-byop-harness}
#
# Often the responses are on disk already, written by an evaluation harness. The project
# commits real harness runs on the lab's models in `data/harness/` (the
# [harness page](../harness.qmd) says how they were made and what each importer assumes); the
# audit reads an output folder itself, as in
# `oraclegap audit data/harness/lmeval/default-seed --out audit-lmeval`.

# %%
from oraclegap.sources import HARNESS_FIXTURES, HARNESS_FORMATS

fixtures = {name: harness_fixture(name) for name in HARNESS_FIXTURES}
tool = {name: HARNESS_FORMATS[fmt].split()[0] for name, (fmt, _) in HARNESS_FIXTURES.items()}
ks = sorted({p.k for p in fixtures.values()})
models = sorted({m for p in fixtures.values() for m in p.policy_names})
per_fix = sorted({p.n_policies for p in fixtures.values()})  # models per fixture
R.show_md("The {nf} fixtures in `data/harness/` are runs of {tools} on the lab's models ({per} "
          "per fixture, {nm} in all) with {k} sampled responses per prompt and model: {each} "
          "(prompts × models × responses).", nf=len(fixtures), nm=len(models),
          per=R.md("{a} to {b}", a=per_fix[0], b=per_fix[-1]) if len(per_fix) > 1 else per_fix[0],
          tools=listed(list(dict.fromkeys(tool.values()))), k=listed(ks),
          each="; ".join(R.md("`{f}` ({t}) {n} × {M} × {k}", f=name, t=tool[name],
                              n=p.n_prompts, M=p.n_policies, k=p.k)
                         for name, p in fixtures.items()))

# %% [markdown]
# Unless told otherwise, lm-evaluation-harness samples every model with one default seed, which
# aligns the draws across models; the second lm-evaluation-harness run gave each model its own
# seed. @tbl-byop-harness audits those two runs and the inspect_ai run.

# %%
HARNESS_RUNS = ("lm-eval-default-seed", "lm-eval-per-model-seed", "inspect")
h_audits = {name: audit.run_audit(harness_fixture(name), TAUS, ALPHA, SEED, small=True, source=name)
            for name in HARNESS_RUNS}
h_rows = []
for name, res in h_audits.items():
    j = res.to_json()
    al = j["nulls"]["draw_alignment"]
    pl = j["pool"]
    h_rows.append({"run": name, "n × M × k": f"{pl['n_prompts']} × {pl['n_policies']} × {pl['k']}",
                   "declared": al["declared"], "matched": al["matched"], "shuffled": al["shuffled"],
                   "p": R.fmt_p(al["p"]), "verdict": res.verdict.code})
h_tab = pd.DataFrame(h_rows)
h_al = {name: res.to_json()["nulls"]["draw_alignment"] for name, res in h_audits.items()}
h_shuffles = {(a["n_draws"], a["seed"]) for a in h_al.values()}
R.check(len(h_shuffles) == 1, "every harness audit draws the same number of shuffles, one seed")
(H_B, H_SEED), = h_shuffles
P_COL = f"p ({H_B:,} shuffles)"
h_tab = h_tab.rename(columns={"p": P_COL})

# %%
#| label: tbl-byop-harness
#| tbl-cap: >-
#|   Audits of real harness outputs: the pool each importer read (n prompts, M models, k
#|   responses per prompt and model), the alignment it declares from the source, the measured
#|   agreement of same-index draws against within-cell shuffles (Monte Carlo p over the shuffles
#|   named in the header, so never below one over their number plus one), and the verdict.
R.table(h_tab)

# %%
dflt = h_tab.set_index("run").loc["lm-eval-default-seed"]
per = h_tab.set_index("run").loc["lm-eval-per-model-seed"]
R.show_md("Reading: with the default seed the importer marks the lm-evaluation-harness run "
          "{d1}, and same-index draws agree {m1} of the time against {s1} after shuffling "
          "(p = {p1}); with one seed per model it is {d2}, {m2} against {s2} (p = {p2}). Each p "
          "counts the shuffles at least as extreme among the audit's {B:,} (seed {hs}), so the "
          "smallest it can be is {pmin:.4f}, the value of a run that no shuffle reached; the "
          "[harness page](../harness.qmd) draws its own shuffles (another number, another seed), "
          "so its p-values for the same runs differ by Monte Carlo error.",
          d1=dflt["declared"], m1=dflt["matched"], s1=dflt["shuffled"], p1=dflt[P_COL],
          d2=per["declared"], m2=per["matched"], s2=per["shuffled"], p2=per[P_COL], B=H_B,
          hs=H_SEED, pmin=1 / (H_B + 1))

# %% [markdown]
# ## How the verdict moves with more responses
#
# The planner answers "what would more data buy?" by simulation. The lab also lets us look:
# it sampled the same 240 prompts and five seeds 64 times each, with the same seeds for the
# first 16 draws, so the first $k$ draws of every cell are the pool a practitioner who stopped
# at $k$ would have held. `audit.draws_sweep` audits those nested pools (the $k = 16$ one is the
# seed pool audited above, reused); @tbl-byop-sweep and @fig-byop-sweep show what each audit
# says.

# %%
k64_seeds = k64_pool.select(prompts=lab_pool.prompt_ids, policies=lab_pool.policy_names)
R.check(np.array_equal(k64_seeds.draws(np.arange(lab_pool.k)).verdicts, lab_pool.verdicts),
        "the first 16 of the lab's 64 responses per cell are the seed pool")
sweep, sweep_res = audit.draws_sweep(k64_seeds, [k for k in K_GRID if k != lab_pool.k], taus=TAUS,
                                     alpha=ALPHA, seed=SEED, small=SMALL)
sweep_res[lab_pool.k] = res_lab
sweep = pd.DataFrame([audit.summary(sweep_res[k]) for k in sorted(sweep_res)])

# %%
tab = sweep.copy()
tab["both reject at τ"] = [", ".join(f"{t:g}" for t in ts) or "—" for ts in tab["detected_taus"]]
tab["power [95%]"] = [R.fmt_interval(p, lo, hi, 3)  # 3 digits: 0.799 is below a 0.8 target
                      for p, lo, hi in zip(tab["power"], tab["power_lo"], tab["power_hi"],
                                           strict=True)]
tab["p"] = [f"{R.fmt_p(a)} / {R.fmt_p(b)}" for a, b in zip(tab["p_redeal"], tab["p_margin"],
                                                           strict=True)]


def asks(res, name):
    """What one planner names: the grid value reaching the target power, else beyond the grid."""
    plan = res.numbers["power"][name]
    v = plan["required"]["redeal"]
    return f"{plan['vary']} = {v}" if v is not None else f"{plan['vary']} > {max(plan['grid'])}"


tab["plan"] = ["nothing (power adequate)" if st == "adequate"
               else ", ".join(asks(sweep_res[k], name) for name in ("plan_k", "plan_n"))
               for k, st in zip(tab["k"], tab["power_state"], strict=True)]

# %%
#| label: tbl-byop-sweep
#| tbl-cap: >-
#|   The audit of the lab's seed pool with its first k responses per prompt and seed: verdict, L and
#|   L/D at the primary threshold, the smallest Holm-adjusted p of the re-deal / margin-preserving
#|   null over the thresholds, the thresholds where
#|   both nulls reject, the re-deal power against the useful effect with its Wilson 95% interval,
#|   and the responses per prompt k and prompts n the planner names.
R.table(tab, columns={"k": "k", "code": "verdict", "L": "L", "break_even": "$L/D$",
                      "p": "p re-deal / margin", "both reject at τ": "both reject at τ",
                      "power [95%]": "power [95%]",
                      "plan": "planner asks for"})

# %%
plan16 = pd.DataFrame([r for r in res_lab.numbers["power"]["plan_k"]["curve"]
                       if r["null"] == "redeal"])
# Wilson limits round at 0 and 1
err = np.clip([sweep["power"] - sweep["power_lo"], sweep["power_hi"] - sweep["power"]], 0, None)
R.check(bool((sweep[["p_redeal", "p_margin"]] > 0).all().all()),
        "a Monte Carlo p is never zero, so the log axis shows every p")
right = {null: (sweep[null], style, null[2:].replace("redeal", "re-deal"))
         for null, style in (("p_redeal", "o-"), ("p_margin", "s--"))}


# %%
def draw_power(ax):
    """Audited power per k with Wilson intervals, the k = 16 planner's prediction, the target."""
    ax.errorbar(sweep["k"], sweep["power"], yerr=err, fmt="o-", capsize=3, label="audit at k")
    ax.plot([lab_pool.k, *plan16["k"]], [cur_lab["power"]["redeal"], *plan16["reject_rate"]], "s--",
            color=R.PALETTE[1], label="planner at k = 16")
    ax.axhline(SETTINGS.target_power, color="0.6", lw=1,
               label=f"target power {SETTINGS.target_power:g}")
    ax.set(xscale="log", xticks=K_GRID, xticklabels=K_GRID, xlabel="responses per prompt k",
           ylabel="power (re-deal)", ylim=(-0.02, 1.02))

# %%
#| label: fig-byop-sweep
#| fig-cap: >-
#|   Left: re-deal power against the useful diffuse effect at the primary threshold for each audited
#|   k (Wilson 95% intervals; each audit calibrates the effect on its own pooled rates), with the
#|   planner's prediction from the k = 16 audit (dashed) and the target power (grey). Right: the
#|   smallest Holm-adjusted p of each null over the thresholds (a Monte Carlo p, (1 + B_>=)/(B + 1)
#|   over B null draws, so never zero); below the dotted line (α) the null rejects.
fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4), layout="tight")
draw_power(a1)
for j, (ys, style, label) in enumerate(right.values()):
    a2.plot(sweep["k"] * (1 + 0.04 * j), ys, style, color=R.PALETTE[j + 2], label=label)
a2.axhline(ALPHA, color="0.3", ls=":", lw=1, label=f"α = {ALPHA:g}")
a2.set(xscale="log", xticks=K_GRID, xticklabels=K_GRID, yscale="log",
       xlabel="responses per prompt k", ylabel="smallest Holm p")
for ax in (a1, a2):
    ax.minorticks_off()
    ax.legend(fontsize="small")
plt.show()

# %%
changed = sweep[sweep["code"] != sweep["code"].iloc[0]]
k_first = int(changed["k"].iloc[0]) if len(changed) else None
# the k the planner names for the seed pool (none when its power is adequate, as in the table)
ask = audit.summary(res_lab)["k_needed"] if cur_lab["state"] != "adequate" else None
at_ask = sweep.set_index("k").loc[ask] if ask in set(sweep["k"]) else None
runs = sweep.groupby((sweep["code"] != sweep["code"].shift()).cumsum())  # runs of one code
span = lambda a, b: f"k = {a}" if a == b else f"k = {a} to {b}"  # noqa: E731
moves = ", then ".join(R.md("`{c}` at {s}", c=g["code"].iloc[0],
                            s=span(int(g["k"].min()), int(g["k"].max()))) for _, g in runs)

# %%
both = [R.md("at k = {k} at $\\tau$ = {ts}", k=int(r.k),
             ts=", ".join(f"{t:g}" for t in r.detected_taus))
        for r in sweep.itertuples() if len(r.detected_taus)]
not_both = [str(int(r.k)) for r in sweep.itertuples() if not len(r.detected_taus)]
both_txt = ("at no k of the grid do both nulls reject at one threshold" if not both
            else "both nulls reject " + "; ".join(both)
            + ("" if not not_both else R.md(", and at no threshold at k = {ks}",
                                            ks=", ".join(not_both))))
R.show_md("Reading: the verdict is {moves}; {both}. {plan}", moves=moves, both=both_txt,
          plan="" if at_ask is None
          else R.md("At k = {k0} the planner asked for k = {a}; the audit at k = {a} says `{c}`, "
                    "with power {p} [{lo}, {hi}] against the useful effect.",
                    k0=lab_pool.k, a=ask, c=at_ask["code"], p=at_ask["power"],
                    lo=at_ask["power_lo"], hi=at_ask["power_hi"]))

# %% [markdown]
# ## How often is a verdict right? {#sec-byop-study}
#
# A verdict is the first rule of an ordered table that holds, and an order of rules is a design
# choice until it meets pools whose truth is known. The library's verdict study
# (`oraclegap.audit.study`; `make study` writes it to `data/study/`, committed) audits simulated
# pools of known truth, each with the `--small` Monte Carlo sizes: identical members; members
# that differ only in quality, by a constant offset on the logit scale (sampled independently, or
# seed-aligned and read back from a long CSV that cannot say so) or on the probability scale; one
# member better than the others everywhere while they specialize among themselves; diffuse
# prompt-by-member effects at two sizes; and one planted specialist per prompt, with its topic
# named in the prompt text or without text. This section only reads the
# committed results: the confusion table of verdict code against truth, each claim code's
# *precision* (the share of the pools given it whose truth has real specialization), and the
# *false-claim rate* of every cell whose truth has none: the share of its pools given a code that
# claims specialization, or `quality-only` on members that do not differ at all.

# %%
from oraclegap.audit.study import SPECIALIZED, load_study
from oraclegap.book import study_views as SV
from oraclegap.stats.studies import rate_interval

vs = load_study()
cells = vs.runs.groupby(["truth", "n", "k"]).size()
values = lambda col: ", ".join(map(str, sorted(set(vs.runs[col]))))
R.show_md("The committed study holds {p:,} audits: {t} truth classes ({sp} of them with real "
          "specialization), k in {{{ks}}} and n in {{{ns}}}, {c} pools per cell; its intervals are "
          "Wilson intervals at confidence {conf:g}.",
          p=len(vs.runs), t=vs.runs["truth"].nunique(), sp=len(SPECIALIZED & set(vs.runs["truth"])),
          ks=values("k"), ns=values("n"), conf=1 - vs.alpha,
          c=cells.iloc[0] if cells.nunique() == 1 else f"{cells.min()} to {cells.max()}")

# %%
#| label: tbl-byop-study
#| tbl-cap: >-
#|   The verdict study's confusion table, truth classes without specialization: for each verdict
#|   code (rows, in the order the rules give them) the number of pools of each truth class
#|   (columns) that received it, pooled over n and k; the last row counts each class's pools.
by_code = SV.code_by_truth(vs, audit.VERDICTS, precision=False)
code_col, spec_cols = by_code.columns[0], [c for c in by_code.columns if c in SPECIALIZED]
R.table(by_code.drop(columns=spec_cols))

# %%
#| label: tbl-byop-study-specialized
#| tbl-cap: >-
#|   The same for the truth classes with specialization.
R.table(by_code[[code_col, *spec_cols]])

# %%
#| label: tbl-byop-study-precision
#| tbl-cap: >-
#|   Precision of each code that claims specialization (and of quality-only, which claims members
#|   that differ in quality): pools given it, how many of them the truth bears out, and the share
#|   with its Wilson 95% interval.
R.table(SV.precision_table(vs), columns={"code": "verdict", "given": "pools given it",
                                         "right": "truth bears it out", "precision": "precision"})

# %% [markdown]
# The *false-claim rule* the study holds the verdict to: a cell without specialization breaks it
# when the Wilson 95% interval of its false-claim rate lies wholly above $\alpha$
# (@fig-byop-study-false); a point rate above $\alpha$ whose interval reaches $\alpha$ is
# within sampling error of it and does not break the rule. @fig-byop-study-codes shows, for
# every truth class and $k$, which codes its pools received.

# %%
#| label: fig-byop-study-false
#| fig-cap: >-
#|   False-claim rate of every cell whose truth has no specialization (truth class above, k below;
#|   one marker per number of prompts n) with its Wilson 95% interval, against α (dashed).
SV.plot_false_claims(vs)
plt.show()

# %%
#| label: fig-byop-study-codes
#| fig-cap: >-
#|   Share of each truth class's pools given each verdict code, at each k (pooled over n).
SV.plot_code_shares(vs, audit.VERDICTS)
plt.show()

# %% [markdown]
# Each verdict is also graded against the truth table of the three papers' logic: *correct*,
# *acceptable* (conservative, or a minor error) or *wrong* (@tbl-byop-study-scores). This grading
# and the false-claim rule above are two different rules, so the table shows both counts side by
# side: the false-claim rule counts a claim code (`certified-recoverable`, `certified`, `luck`,
# `detected-not-certified`) on a truth without specialization, and `quality-only` on identical
# members (`inconclusive` and `luck-not-excluded` claim nothing and are not counted); the truth
# table asks whether the advice that follows from the code is right for that truth, and so grades
# some false claims acceptable.
# Beside the codes, the study checks the numbers the audit prints: the certified quantity's
# interval should cover its population value, computed from each pool's true rates
# (@tbl-byop-study-coverage), and on members without specialization its lower limit should stay
# at or below zero (@tbl-byop-study-lower); on specialists the study counts how often it
# certifies, beside the apparent gap's paired interval it replaces (@tbl-byop-study-power),
# which is no yardstick of power: it certifies identical members too (the reading counts both).
# These three tables read a separate sample of
# many more pools on which only the certificates run, identical members included at up to
# eight thousand prompts and thirty responses.

# %%
sc = vs.scores()  # per truth class and k: both gradings
sc["wrong rate"] = [R.fmt_interval(r, lo, hi)
                    for r, lo, hi in zip(sc["rate"], sc["lo"], sc["hi"], strict=True)]
by_truth = sc.groupby("truth", sort=False)[["pools", "correct", "acceptable", "wrong",
                                            "false_claims"]].sum()
w_lo, w_hi = rate_interval(by_truth["wrong"], by_truth["pools"], vs.alpha)
by_truth["wrong rate"] = [R.fmt_interval(w / n, lo, hi) for w, n, lo, hi in
                          zip(by_truth["wrong"], by_truth["pools"], w_lo, w_hi, strict=True)]
by_truth["false claims"] = [str(int(f)) if t not in SPECIALIZED else "—"
                            for t, f in by_truth["false_claims"].items()]
by_truth["by k"] = [", ".join(f"k = {r.k}: {r.wrong} / {r.false_claims}"
                              for r in g[(g["wrong"] > 0) | (g["false_claims"] > 0)].itertuples())
                    or "—" for _, g in sc.groupby("truth", sort=False)]

# %%
#| label: tbl-byop-study-scores
#| tbl-cap: >-
#|   Verdicts graded by the two rules, per truth class pooled over k: pools whose code is correct,
#|   acceptable or wrong by the truth table, the wrong rate with its Wilson 95% interval, the false
#|   claims (false-claim rule; none is possible on a truth with specialization), and per k the
#|   wrong codes / false claims where either is not zero (per truth class and k in
#|   [a CSV file](../downloads/07_bring_your_own_pool-study-scores.csv)).
R.csv_download(sc, "07_bring_your_own_pool-study-scores")
R.table(by_truth.rename_axis(columns=None).reset_index(),
        columns={"truth": "truth", "pools": "pools", "correct": "correct",
                 "acceptable": "acceptable", "wrong": "wrong", "wrong rate": "wrong rate",
                 "false claims": "false claims", "by k": "wrong / false claims by k"})

# %%
graded = vs.graded()
fcl = graded[graded["false_claim"]]
kept = fcl[fcl["grade"] != "wrong"].groupby(["grade", "code"]).size()
WHY_KEPT = {"quality-only": "`quality-only` on identical members is a minor error: it says the "
                            "members differ in quality, and it sends no one to build a router",
            "luck": "`luck` advises no router, which is right where the true noise share is 1",
            "detected-not-certified": "`detected-not-certified` certifies nothing"}
R.show_md("Reading: on the truths without specialization {f} pools got a false claim and {w} a "
          "wrong grade. {diff}",
          f=len(fcl), w=int((graded["grade"][~graded["truth"].isin(SPECIALIZED)] == "wrong").sum()),
          diff="Every false claim is graded wrong." if kept.empty else R.md(
              "The false claims the truth table does not grade wrong are {what}. The false-claim "
              "rule counts them because each is a claim code (or quality-only on identical "
              "members); the truth table grades the advice that follows from it: {why}.",
              what="; ".join(R.md("`{c}` on {n} {t} {pl}, graded {g}", c=c, n=int(n), g=g,
                                  pl="pool" if n == 1 else "pools",
                                  t=", ".join(sorted(set(fcl[fcl["code"] == c]["truth"]))))
                             for (g, c), n in kept.items()),
              why="; ".join(WHY_KEPT[c] for c in dict.fromkeys(c for _, c in kept.index)
                            if c in WHY_KEPT) or "it reads them as conservative"))

# %%
#| label: tbl-byop-study-coverage
#| tbl-cap: >-
#|   How often the certified quantity's interval covers its population value, per truth class
#|   (pooled over its cells, Wilson 95% interval) and in its worst cell.
R.table(SV.rate_summary(vs.coverage(), "covers"))

# %%
#| label: tbl-byop-study-lower
#| tbl-cap: >-
#|   Truths without specialization: the share of pools whose certified lower limit is at most
#|   zero, per truth class and in its worst cell.
lower = vs.lower_limits()
R.table(SV.rate_summary(lower, "le0").rename(columns={"le0": "lower limit <= 0"}))

# %%
#| label: tbl-byop-study-power
#| tbl-cap: >-
#|   Truths with specialization: pools certified by the split-draw certificate and, for
#|   comparison, by the apparent gap's paired interval, per cell.
R.table(vs.certification(), columns={"truth": "truth", "n": "n", "k": "k",
                                     "certified": "split-draw certified",
                                     "apparent_certified": "apparent certified", "pools": "pools"})

# %%
cov_all, pw = vs.coverage(), vs.certification()
ident = lower[lower["truth"] == "exchangeable"]
qo, al = vs.code_rate("quality-only"), vs.alignment_found()
q_big = qo[(qo["truth"] == "quality-only") & (qo["n"] >= 1500) & (qo["k"] >= 16)]
q_ex = qo[(qo["truth"] == "exchangeable") & (qo["k"] > 1)]
al_sa = al[al["truth"] == "seed-aligned"]
lost = pw[pw["certified"] < pw["apparent_certified"]]
lost_txt = "" if lost.empty else R.md(  # the cells where the certificate certifies fewer
    ", fewer than the apparent gap in {m} ({cells})", m=len(lost),
    cells="; ".join(R.md("{t}, n = {n}, k = {k}: {c} of {a}", t=r.truth, n=int(r.n), k=int(r.k),
                         c=int(r.certified), a=int(r.apparent_certified))
                    for r in lost.itertuples()))

# %%
R.show_lines([R.md(
    "Reading: the certified interval covers its population value in {c:,} of {p:,} pools, the "
    "lowest cell rate being {cmin:.2f}. On identical members (n up to {nmax:,}, k up to {kmax}) "
    "the lower limit stays at or below zero in {le:,} of {pi:,} pools and the planner promises a "
    "certificate in {pr}. `quality-only` is the verdict on {qb} of {qbp} quality-only pools with "
    "n >= 1500 and k >= 16, and on {qe} of {qep} identical-member pools with k > 1. The "
    "seed-aligned pools read from a long CSV are found seed-aligned in {af} of {ap}. On "
    "specialists the split-draw certificate certifies {sc:,} of {pp:,} pools and the apparent "
    "gap {sa:,}; the certificate certifies every pool in {full} of {t} cells{lost}. The "
    "apparent gap also "
    "certifies {ai:,} of the {pi:,} identical-member pools, so its count is no power the "
    "certificate could keep.",
    pp=int(pw["pools"].sum()), t=len(pw), full=int((pw["certified"] == pw["pools"]).sum()),
    c=int(cov_all["covers"].sum()), p=int(cov_all["pools"].sum()), cmin=cov_all["rate"].min(),
    nmax=int(ident["n"].max()), kmax=int(ident["k"].max()), le=int(ident["le0"].sum()),
    pi=int(ident["pools"].sum()), pr=int(ident["promises"].sum()), qb=int(q_big["given"].sum()),
    qbp=int(q_big["pools"].sum()), qe=int(q_ex["given"].sum()), qep=int(q_ex["pools"].sum()),
    af=int(al_sa["found"].sum()), ap=int(al_sa["pools"].sum()), sc=int(pw["certified"].sum()),
    sa=int(pw["apparent_certified"].sum()), ai=int(ident["apparent_certified"].sum()),
    lost=lost_txt)])

# %%
fc = vs.false_claims()
worst, shown_above = fc.sort_values(["rate", "hi"]).iloc[-1], fc[fc["above_alpha"]]
n_worst = int((fc["rate"] == worst["rate"]).sum())  # cells sharing the largest rate
ex_k1 = vs.runs[(vs.runs["truth"] == "exchangeable") & (vs.runs["k"] == 1)]["code"]
prec, stab = vs.precision(), vs.stability()
cell_name = lambda r: R.md("{t}, n = {n}, k = {k}", t=r["truth"], n=int(r["n"]), k=int(r["k"]))
above_txt = (R.md("no cell's interval lies wholly above α = {a:g}", a=vs.alpha)
             if shown_above.empty
             else R.md("in {m} of them the interval lies wholly above α = {a:g} ({w})",
                       m=len(shown_above), a=vs.alpha,
                       w="; ".join(cell_name(r) for _, r in shown_above.iterrows())))
ex1_txt = ", ".join(f"`{c}` in {n}" for c, n in ex_k1.value_counts().items())

# %%
prec_txt = "; ".join(R.md("`{c}` {r} of {g} ({v})", c=r["code"], r=int(r["right"]),
                          g=int(r["given"]), v=R.fmt_interval(r["rate"], r["lo"], r["hi"], 2))
                     for _, r in prec.iterrows()) or "no code claimed anything"
st_all = None if stab is None else stab[stab["k"].astype(str) == "all"].iloc[0]
stab_txt = ("" if st_all is None else
            R.md(" Rerun at full Monte Carlo sizes, {s} of {p} pools keep their `--small` code "
                 "(a share of {v}).", s=int(st_all["same"]), p=int(st_all["pools"]),
                 v=R.fmt_interval(st_all["rate"], st_all["lo"], st_all["hi"], 2)))

# %%
R.show_lines([R.md(
    "Reading: of the {nc} cells without specialization, {above}; the largest false-claim rate is "
    "{r} ({cell}). Of the {n1} exchangeable pools at k = 1 the verdicts were {ex1}; `certified` "
    "was given to {nc1}: "
    "the k = 1 rule names single-draw luck instead of certifying it. Of the pools given each claim "
    "code, the truth bears it out in: {prec}.{stab}",
    nc=len(fc), above=above_txt, r=R.fmt_interval(worst["rate"], worst["lo"], worst["hi"], 2),
    cell=cell_name(worst) if n_worst == 1
    else R.md("{t} of the {n} cells share it", t=n_worst, n=len(fc)),
    ex1=ex1_txt or "no verdict (none in the study)",
    nc1=int((ex_k1 == "certified").sum()), n1=len(ex_k1), prec=prec_txt, stab=stab_txt)])

# %% [markdown]
# ## Takeaways

# %%
R.skipped_callout(skipped,
                  need="`OG_EXTERNAL_DIR` with the released data, or lab pools that match "
                       "`LAB_POOL`")
lines = [R.md("- One command per input: `oraclegap rollouts` sampled {n:,} responses from the "
              "lab's model and two adapters in {t:.0f} s on the CPU, and `oraclegap audit` turned "
              "the store into {what} in {ta:.0f} s; the same audit runs on a registry name, a "
              "pool directory, a long table or a `Pool` in Python.",
              n=n_resp, t=t_roll, ta=t_aud,
              what="`audit.json`" if SMALL else "a report and `audit.json`"),]

# %%
weight = {"adequate": "is good evidence against a gap of that size",
          "uncertain": "is weak evidence", "low": "says little"}
# the power is the primary threshold's: read a non-rejection only where there is one
tail = ("" if jl["coverage"]["primary_key"] in det_lab else
        R.md(", so {where}a non-rejection {w}", w=weight[cur_lab["state"]],
             where=R.md("at $\\tau$ = {t:g}, where the nulls do not both reject, ", t=pw_lab["tau"])
             if det_lab else ""))
# the audit's next step, and the planner's design where the steps do not give it
tail += ("" if cur_lab["state"] == "adequate" else
         R.md("; the audit's next step is to collect k = {kn} responses or n = {nn} prompts",
              kn=kn, nn=nn) if planned else
         R.md("; the audit's next step is {s}, and the planner's design for $\\tau$ = {t:g} "
              "(k = {kn}) is in its power section, not among its steps", s=first_step,
              t=pw_lab["tau"], kn=kn))

# %%
rej_lab = (R.md(" (both nulls reject at $\\tau$ = {ts})", ts=taus_of(det_lab)) if det_lab
           else " (no threshold where both nulls reject)")
asked = ("" if at_ask is None
         else R.md("; at k = {a}, the planner's design, the audit says `{c}`",
                   a=ask, c=at_ask["code"]))

# %%
pow_lab = R.md("; its power against a useful effect at $\\tau$ = {t:g} is {p} [{lo}, {hi}]{tail}",
               t=pw_lab["tau"], tail=tail, p=cur_lab["power"]["redeal"],
               lo=cur_lab["interval"]["redeal"][0], hi=cur_lab["interval"]["redeal"][1])
lines += [R.md("- On the lab's seed pool at k = {k} the audit's verdict is `{c}`{rej}{pw}.",
               k=lab_pool.k, c=res_lab.verdict.code, rej=rej_lab, pw=pow_lab),
          R.md("- On nested subsets of the lab's {K} responses per prompt the verdict is "
               "{moves}{asked}: collecting before concluding is what the audit is for.",
               K=k64_pool.k, moves=moves, asked=asked)]

# %%
if twin:
    lines.append(R.md("- Seed-aligned, the same seeds give the verdict `{c}`, and the audit says "
                      "why that is weaker evidence: matched agreement {a} against {e} shuffled. "
                      "Sample each member with its own seeds (`--draw-seeds per-policy`) before "
                      "reading a null.", c=res_al.verdict.code, a=dal["matched"],
                      e=dal["shuffled"]))

# %%
claimed = prec[prec["code"] != "quality-only"]
r_cl, g_cl = int(claimed["right"].sum()), int(claimed["given"].sum())
over = fc[fc["rate"] > vs.alpha]  # point rates above alpha; the rule reads shown_above
fc_txt = (R.md("none of the {n} cells without specialization breaks the false-claim rule (no "
               "Wilson interval lies wholly above α = {a:g}{pt})", n=len(fc), a=vs.alpha,
               pt="" if over.empty else R.md("; {m} have a point rate above α, within sampling "
                                             "error of it", m=len(over)))
          if shown_above.empty else
          R.md("{b} of the {n} cells without specialization break the false-claim rule (a Wilson "
               "interval wholly above α = {a:g}; {m} have a point rate above α)",
               b=len(shown_above), n=len(fc), a=vs.alpha, m=len(over)))
worst_txt = (R.md("; none of their {p:,} pools got a false claim (the cells' upper limits "
                  "reach {hi:.2f})", p=int(fc["pools"].sum()), hi=fc["hi"].max())
             if worst["rate"] == 0 else
             R.md(", the largest rate being {w} ({cell})", cell=cell_name(worst),
                  w=R.fmt_interval(worst["rate"], worst["lo"], worst["hi"], 2))
             if n_worst == 1 else
             R.md(", and {t} cells share the largest rate, {w}", t=n_worst,
                  w=R.fmt_interval(worst["rate"], worst["lo"], worst["hi"], 2)))

# %%
lines.append(R.md("- Against known truth (the verdict study's {p:,} audits) {fc}{worst}; a "
                  "claim of specialization was right in {r} of {g} pools given one{bad}.",
                  p=len(vs.runs), fc=fc_txt, worst=worst_txt, r=r_cl, g=g_cl,
                  bad="" if g_cl == r_cl else R.md(" (the other {b} had no specialization)",
                                                   b=g_cl - r_cl)))
VERDICT_WORDS = {"certified": "the opportunity is certified and the quick router is not shown "
                              "to beat the calibration-selected member",
                 "certified-recoverable": "the opportunity is certified and the quick router "
                                          "recovers part of it"}
what_real = (None if real is None else
             VERDICT_WORDS.get(res_real.verdict.code, res_real.verdict.headline.rstrip(".")))

# %%
if real is not None:
    lines.append(R.md("- On MATH-500 the verdict is `{c}`: {what}; a share {sh} of the single-draw "
                      "gap is luck no committed router collects.",
                      c=res_real.verdict.code, sh=est["noise_share"]["value"], what=what_real))
R.show_lines(lines)

# %% tags=["og-answer"]
answer = [R.md("**The answer.** One command gives it. On the lab's seed pool at k = {k} the "
               "audit's verdict is `{c}`{rej}{pw}; on nested subsets of the lab's {K} "
               "responses per prompt it is {moves}{asked}", K=k64_pool.k,
               k=lab_pool.k, c=res_lab.verdict.code, rej=rej_lab, pw=pow_lab, moves=moves,
               asked=asked)]
if real is not None:
    answer.append(R.md(". On the MATH-500 tensors it is `{c}`: {what}", c=res_real.verdict.code,
                       what=what_real))
answer.append(R.md(". Against known truth, in the verdict study, a claim of specialization was "
                   "right in {r} of {g} pools given one and {fc}; the [decision page]"
                   "(../decision.qmd) says what each code means and what to do next.",
                   r=r_cl, g=g_cl, fc=fc_txt))
R.show_callout("{body}", kind="tip", title="In short", body="".join(answer))

# %% [markdown]
# ## Exercises
#
# 1. **A larger useful effect.**
#    The planner plans for a population gap of the useful size at the primary threshold
#    (`--effect`, `effect=0.05` by default). Predict how the responses per prompt it asks for on
#    the lab's seed pool change when only a gap twice as large would be worth a router, then
#    rerun the audit with `effect=0.1`.

# %%
ex1 = audit.run_audit(lab_pool, TAUS, ALPHA, SEED, small=SMALL, effect=0.1)
s1, s0 = audit.summary(ex1), audit.summary(res_lab)
# "beyond the grid", for the comparison
big = 2 * max(audit.plan_grid(lab_pool.k, audit.PLAN_K_REACH))
# what the audit asks to hold
need1 = lab_pool.k if s1["power_state"] == "adequate" else (s1["k_needed"] or big)
need0 = lab_pool.k if s0["power_state"] == "adequate" else (s0["k_needed"] or big)


# %%
R.solution("1. A larger effect is easier to detect, so the prediction is fewer responses. With "
           "`effect=0.1` the calibrated perturbation has sd {sg} (against {sg0}) and a population "
           "gap of {x}; this design's power is {p} [{lo}, {hi}] (`{st}`), so the audit {asks}, "
           "against k = {kn0} for the default effect: {cmp}.",
           sg=ex1.numbers["power"]["effect"]["sigma"],
           sg0=res_lab.numbers["power"]["effect"]["sigma"],
           x=ex1.numbers["power"]["current"]["population_L"], p=s1["power"], lo=s1["power_lo"],
           hi=s1["power_hi"], st=s1["power_state"],
           kn0=need0 if need0 != big else "more than the planner's grid",
           asks=R.md("asks for nothing more: k = {k} suffices", k=lab_pool.k)
           if s1["power_state"] == "adequate" else R.md("asks for k = {k}",
                                                        k=need1 if need1 != big
                                                        else "more than the planner's grid"),
           cmp=R.compare(need1, need0, less="fewer, as predicted",
                         more="more, against the prediction",
                         same="the same grid point (the grid doubles k, so a smaller need can "
                              "round to the same value)"))

# %%
#| code-fold: false
# Self-check: replace None with the responses per prompt the audit asks for with effect=0.1 (the
# k it names, or the k the pool holds when it asks for nothing more) and run this cell; a whole
# number, checked exactly. The check is unavailable when the planner's grid holds no such k.
from oraclegap.book import selfcheck

MINE = {"k": None}
selfcheck.check("Exercise 1", MINE, {"k": need1 if need1 != big else float("nan")}, abs_tol=0.5)

# %% [markdown]
# 2. **One response per prompt.**
#    Audit only the first draw of every cell of the seed pool at `--small` sizes (the solution
#    does, so its power figures are those sizes'). Which verdict rule applies, what
#    do the certificates say, and why can the verdict not tell single-draw luck from
#    specialisation?

# %%
ex2 = audit.run_audit(lab_pool.draws([0]), TAUS, ALPHA, SEED, small=True)
c2 = ex2.numbers["certificates"]["levels"]["outcome"]["paired"]
cal = [((r.numbers.get("power") or {}).get("effect") or {}).get("calibrated_L")
       for r in (ex2, res_lab)]
cal_note = "" if None in cal or R.fmt(cal[0]) == R.fmt(cal[1]) else R.md(
    " The useful effect of that step is calibrated on this one-draw pool, so its planted gap "
    "differs from the one planted by the full pool's audit ($L$ = {b}).", b=cal[1])

# %%
FINDING_WORDS = {"k1": "one response per prompt", "low-power": "low power",
                 "power-uncertain": "power not resolved against the target",
                 "luck": "mostly single-draw luck", "seed-aligned": "seed-aligned draws",
                 "detected": "both nulls reject at a threshold",
                 "certified": "certified at such a threshold"}
found = [FINDING_WORDS.get(x, x) for x in ex2.verdict.findings if x != ex2.verdict.code]
R.solution("2. At k = 1 no null that needs k > 1 applies (the audit's findings: {f}); the "
           "certificates decide. The paired interval of the outcome-oracle gap is [{lo}, {hi}] "
           "around {g}, so the verdict is `{c}`. One response per prompt and seed cannot separate "
           "a seed that is reliably better on a prompt from one that was lucky once: the "
           "single-draw oracle's gap includes single-draw luck (@sec-single-draw), which is why "
           "the next step reads: {step}{cal}",
           f=", ".join(found) or "none besides the code", lo=c2["lo"], hi=c2["hi"], g=c2["value"],
           cal=cal_note, c=ex2.verdict.code,
           step=latex(next((s for s in ex2.verdict.next_steps if "k >= 2" in s),
                           "collect k >= 2 responses per prompt.")))

# %% [markdown]
# 3. **Reading a verdict where both nulls reject.**
#    The sweep table (@tbl-byop-sweep) lists, for each $k$, the thresholds at which both nulls
#    reject. At the largest $k$, take the largest threshold at which both reject. The table under
#    this exercise gives, at that $k$ and every threshold, the oracle gap $L$ and the
#    disagreement $D$ over all prompts and over the held-out prompts the quick router is scored
#    on, and the router's disagreement error $e_D$ on those held-out prompts. What $e_D$ would a
#    router need there to gain over the best member (the break-even $L/D$), over all prompts and
#    over the held-out prompts? Enter both in the self-check under this exercise. Why is the
#    router's $e_D$ read against the second, and did it reach it?

# %%
#| label: tbl-byop-ex3
#| tbl-cap: >-
#|   The audit of the lab's seed pool at the sweep's largest k (Exercise 3), per threshold: the
#|   oracle gap L and the disagreement D over all prompts and over the quick router's held-out
#|   prompts, and the router's disagreement error e_D on the held-out prompts.
top = sweep_res[max(sweep_res)].numbers
# on the router's held-out prompts: L = (L/D) * D, D, and the router's e_D (none without a router)
held3 = {key: (lv["break_even"] * lv["D_test"], lv["D_test"], lv["e_D"])
         for key, lv in top["router"].get("levels", {}).items()}
ex3 = pd.DataFrame([{"k": top["pool"]["k"], "tau": c["tau"], "L": c["L"], "D": c["D"],
                     **dict(zip(("L_test", "D_test", "e_D"), held3.get(key, (np.nan,) * 3),
                                strict=True))}
                    for key, c in top["coverage"]["taus"].items()])
n3, nt3 = top["pool"]["n_prompts"], top["router"].get("n_test", 0)
R.table(ex3, columns={"k": "k", "tau": "τ", "L": f"L (all {n3} prompts)",
                      "D": f"D (all {n3} prompts)", "L_test": f"L ({nt3} held-out)",
                      "D_test": f"D ({nt3} held-out)", "e_D": f"router's $e_D$ ({nt3} held-out)"})

# %%
det3 = top["nulls"]["detected_taus"]
if det3:
    row, rr3 = top["coverage"]["taus"][det3[-1]], top["router"]["levels"][det3[-1]]
    R.solution("3. At k = {k} both nulls reject at $\\tau$ = {ts}; at $\\tau$ = {t:g}, "
               "$L$ = {L} on $D$ = {D} over all prompts, so $L/D$ = {be}; on the {nt} held-out "
               "prompts $L$ = {Lt} on $D$ = {Dt}, so $L/D$ = {be2}. The router is scored on the "
               "held-out prompts only, so its $e_D$ there, {e}, is read against the break-even "
               "of those same prompts, not the all-prompt one: it {w}, and its difference against "
               "the calibration-selected member is {d:+} (Holm p {p:p}).",
               k=max(sweep_res), t=row["tau"], L=row["L"], D=row["D"], be=row["break_even"],
               ts=", ".join(f"{top['coverage']['taus'][t]['tau']:g}" for t in det3), nt=nt3,
               Lt=rr3["break_even"] * rr3["D_test"], Dt=rr3["D_test"], e=rr3["e_D"],
               be2=rr3["break_even"],
               w=R.compare(rr3["e_D"], rr3["break_even"], more="does not reach it",
                           less="reaches it", same="sits exactly at it"), d=rr3["difference"],
               p=rr3["p_holm"])
else:
    R.solution("3. At k = {k} no threshold has both nulls rejecting on this run, so no break-even "
               "error applies yet: the audit's verdict is `{c}`.",
               k=max(sweep_res), c=sweep_res[max(sweep_res)].verdict.code)

# %%
#| code-fold: false
# Self-check: replace each None with the break-even L/D at that threshold, over all prompts and
# over the held-out prompts, then run this cell; each within 0.005 passes.
MINE = {"L/D over all prompts": None, "L/D on the held-out prompts": None}
selfcheck.check("Exercise 3", MINE,
                {"L/D over all prompts": row["break_even"] if det3 else float("nan"),
                 "L/D on the held-out prompts": rr3["break_even"] if det3 else float("nan")},
                abs_tol=0.005)

# %% [markdown]
# ## Appendix: other inputs, other tools and the claims {#sec-byop-appendix}
#
# The main line audited a store, registry names and a `Pool` in Python. Evaluation harnesses and
# router benchmarks write other files: a long table of verdicts, pickles, their own layouts.
# This appendix reads each of them, checks a pool's integrity before inference, writes the pool
# back out in every layout, and ends with the chapter's claims and their outcomes on this run.

# %% [markdown]
# ### A long table of verdicts
#
# Many evaluation harnesses write one row per response: which question, which model, which
# sample, whether it passed. `Pool.from_long` reads such a table with the column names it has.
# Here the table is the lab's seed pool exported row by row (`Pool.to_long`, the portable
# exchange format) and renamed to a harness's columns; each seed drew its own random seeds
# (independent draws), which the table cannot know, so we say so.

# %%
exchange = lab_pool.to_long(WORK / "seed-pool.parquet")
harness = pd.read_parquet(exchange).rename(columns={"prompt_id": "qid", "policy": "model",
                                                    "draw": "sample", "correct": "passed",
                                                    "prompt_text": "question"})
harness = harness[["qid", "question", "model", "sample", "passed"]]
from_long = Pool.from_long(harness, prompt="qid", policy="model", draw="sample",
                           correct="passed", prompt_columns=["question"], alignment="independent")
from_long.prompts["text"] = from_long.prompts.pop("question")
display(R.table(harness.head(3)))

# %%
res_long = audit.run_audit(from_long, TAUS, ALPHA, SEED, small=SMALL, source="harness table")
sections = ["coverage", "nulls", "power", "certificates", "noise", "router"]
equal = {s: res_long.numbers[s] == res_lab.numbers[s] for s in sections}
R.show_md("Reading: the table has {r:,} rows; the pool read from it is {n} × {M} × k = {k} with "
          "verdicts {same}. Its audit equals the seed pool's in {eq} of {t} sections ({which}); "
          "the router differs (the {fl} router on the question text instead of the {fp} router "
          "on the embeddings a long table does not carry), and the verdict is `{code}` as before.",
          r=len(harness), n=from_long.n_prompts, M=from_long.n_policies, k=from_long.k,
          same="identical to the seed pool's"
          if np.array_equal(from_long.verdicts, lab_pool.verdicts) else "different",
          eq=sum(equal.values()), t=len(equal), which=", ".join(s for s, v in equal.items() if v),
          fl=router_label(res_long.numbers["router"]["family"]),
          fp=router_label(res_lab.numbers["router"]["family"]),
          code=res_long.verdict.code)

# %% [markdown]
# The exchange file itself opens with `open_pool` (and so as a `POOL` for every command). A
# parquet written by `to_long` keeps the alignment and the pool's metadata; per-response arrays
# travel as `response_*` columns; embeddings do not travel (use `Pool.save` for a lossless copy).

# %%
back = open_pool(exchange)
trip = {"verdicts": np.array_equal(back.verdicts, lab_pool.verdicts),
        "answers": np.array_equal(back.answers, lab_pool.answers),
        "confidence": np.array_equal(back.per_response["confidence"],
                                     lab_pool.per_response["confidence"]),
        "alignment": back.alignment == lab_pool.alignment,
        "prompt text": back.prompts["text"].equals(lab_pool.prompts["text"])}
R.show_md("Reading: `open_pool` read `{f}` as the `{fmt}` format; kept exactly: {kept}{lost}. "
          "Embeddings: {emb}.",
          f=exchange.name, fmt=back.meta["read_as"]["format"],
          kept=", ".join(k for k, v in trip.items() if v) or "nothing",
          lost="" if all(trip.values())
          else "; not kept: " + ", ".join(k for k, v in trip.items() if not v),
          emb="not in the file" if back.embeddings is None else "kept")

# %% [markdown]
# ### Other tools' files, integrity checks and exporters {#sec-byop-other-tools}
#
# Router benchmarks publish their outcomes as pickles: RouterEval a nested dictionary
# `router_dataset[difficulty][n][config]` of `{'data', 'model', 'prompt'}` leaves, RouterBench a
# pandas frame whose text cells are Python list literals. `open_pool` reads both as they are,
# with a restricted unpickler that can name only numpy and pandas reconstruction globals, so no
# code in the file runs. To show it without downloading anything we write the first draw of the
# lab's seed pool in both layouts, as those tools would.

# %%
import dataclasses
import pickle

k1 = lab_pool.draws([0])
h = k1.n_prompts // 2
score = k1.verdicts[:, :, 0].astype(float)
texts = list(k1.prompts["text"])
leaf = {"model": k1.policy_names,
        "data": {"train_score": score[:h], "test_score": score[h:],
                 "train_embed": k1.embeddings[:h], "test_embed": k1.embeddings[h:]},
        "prompt": {"train_prompt": texts[:h], "test_prompt": texts[h:]}}
nested = {"easy": {k1.n_policies: [leaf]}}  # router_dataset[difficulty][n][config]
n_bytes = (WORK / "router_dataset.pkl").write_bytes(pickle.dumps(nested))

# %% [markdown]
# The RouterBench frame holds one correctness, response and cost column per model (a stand-in
# price per completion token gives the costs), its texts as list literals (`"['...']"`), in
# object columns as pandas wrote them before Arrow-backed strings. Both files open as a `POOL`
# (@tbl-byop-pickles).

# %%
cost = k1.per_response["completion_tokens"][:, :, 0] * 2e-6  # stand-in price per token
obj = lambda xs: pd.Series(list(xs), dtype=object)  # noqa: E731
rb = {"sample_id": obj(k1.prompt_ids), "prompt": obj(repr([t]) for t in texts),
      "eval_name": obj(["primary"] * k1.n_prompts)}
for m, name in enumerate(k1.policy_names):
    rb[name] = score[:, m]
    rb[f"{name}|model_response"] = obj(repr([a]) for a in k1.answers[:, m, 0])
    rb[f"{name}|total_cost"] = cost[:, m]
rb_frame = pd.DataFrame(rb)
rb_frame.columns = pd.Index(list(rb), dtype=object)
n_bytes = (WORK / "routerbench_0shot.pkl").write_bytes(pickle.dumps(rb_frame))

# %%
#| label: tbl-byop-pickles
#| tbl-cap: >-
#|   The two published pickle layouts, written from the lab's seed pool and read back by open_pool:
#|   how the layout was recognised, the pool read, and where the names came from.
read = {f: open_pool(WORK / f) for f in ("router_dataset.pkl", "routerbench_0shot.pkl")}
R.table(pd.DataFrame([
    {"file": f, "read as": p.meta["read_as"]["format"],
     "recognised by": p.meta["read_as"]["chosen_by"],
     "pool": f"{p.n_prompts} × {p.n_policies} × k = {p.k}",
     "verdicts": "equal" if np.array_equal(p.verdicts, k1.verdicts) else "differ",
     "names from": p.meta.get("model_names_from", "the file's columns")} for f, p in read.items()]))

# %% [markdown]
# A pickle is a program, and a hostile one names `os.system`. The reader refuses it at the opcode
# that names the global, before anything is called; the file it would have created does not exist.

# %%
class Hostile:
    def __reduce__(self):
        return os.system, (f"touch {WORK / 'pwned'}",)


hostile = {"data": {"train_score": Hostile()}, "model": ["a"]}
(WORK / "hostile.pkl").write_bytes(pickle.dumps(hostile))
try:
    open_pool(WORK / "hostile.pkl")
    refusal = None
except ValueError as exc:
    refusal = str(exc)
R.check(refusal is not None and not (WORK / "pwned").exists(), "a hostile pickle runs nothing")
R.show_md("Reading: `open_pool` answered: *{msg}*", msg=refusal.replace(str(WORK) + "/", ""))

# %% [markdown]
# **Integrity before inference.** `oraclegap integrity` (in Python
# `oraclegap.deploy.integrity.integrity_checks`) looks for duplicated prompts, exact after
# normalisation and near by TF-IDF cosine, and flags a group that crosses the calibration/test
# split the routers use as leakage; it recomputes verdicts where answers and gold answers exist,
# warns about max-merged or cached data, and scores the constant baselines. We plant copies of a
# few calibration prompts among the test prompts of the same half split the routers use.

# %%
from oraclegap.deploy.evaluate import make_protocol
from oraclegap.deploy.integrity import integrity_checks

cal, tst = make_protocol(k1, split="half", seed=SEED).folds[0]
planted = k1.prompts.copy()
planted.loc[tst[:5], "text"] = planted.loc[cal[:5], "text"].str.upper().to_numpy()
k1_planted = dataclasses.replace(k1, prompts=planted)
ig = {name: integrity_checks(p, split="half", seed=SEED, gold_column="answer")
      for name, p in (("lab", k1), ("planted", k1_planted))}

# %%
#| label: tbl-byop-integrity
#| tbl-cap: >-
#|   The integrity checks of the lab's seed pool (first draw), as stored and with copies of
#|   calibration prompts planted among the test prompts of the routers' half split.
R.table(ig["lab"].frame()[["check", "status", "count"]].merge(
    ig["planted"].frame()[["check", "status", "count", "detail"]], on="check",
    suffixes=(" (lab)", " (planted)")))

# %%
d0, d1, al = ig["lab"].duplicates, ig["planted"].duplicates, ig["lab"].alignment
bl = ig["lab"].baselines.frame().set_index("baseline")["score"]

# %%
# the check skips responses without an answer text and prompts without a gold answer
no_ans = np.vectorize(lambda a: not (isinstance(a, str) and a.strip()), otypes=[bool])(k1.answers)
no_gold = (k1.prompts["answer"].isna() | (k1.prompts["answer"].astype(str).str.strip() == ""))
n_no_gold = int(no_gold.sum()) * k1.n_policies * k1.k
unchecked = k1.verdicts.size - al.n_checked
R.check(unchecked == int(no_ans[~no_gold.to_numpy()].sum()) + n_no_gold,
        "the responses the check skips are those without an answer or a gold answer")
unchecked_txt = ("" if unchecked == 0 else R.md(
    " (of all {t:,} responses, {u} are not checked: {why})", t=k1.verdicts.size, u=unchecked,
    why="; ".join(x for x in (
        R.md("{a} extracted no answer to compare, and all of them are recorded {v}",
             a=int(no_ans.sum()), v="wrong" if not k1.verdicts[no_ans].any() else "right or wrong")
        if no_ans.any() else "",
        R.md("{g} prompts have no gold answer", g=int(no_gold.sum())) if n_no_gold else "") if x)))

# %%
R.show_md("Reading: the stored pool has {g0} duplicate groups; with the planted copies the check "
          "finds {g1}, {lk} of them across the split ({lp} test prompts with a copy in "
          "calibration), which it reports as leakage. Recomputed from the answers and the "
          "prompts' `answer` column, {dis} of {chk:,} verdicts disagree{unchecked}. The best "
          "constant "
          "selected on calibration scores {bc:.3f} on the test half, the oracle {orc:.3f}.",
          g0=d0.n_groups, g1=d1.n_groups,
          lk=d1.n_leaking_groups, lp=d1.n_leaking_prompts, dis=al.n_disagree, chk=al.n_checked,
          unchecked=unchecked_txt,
          bc=bl.iloc[0], orc=bl["oracle (evaluated prompts)"])

# %% [markdown]
# **Exporters.** `oraclegap export POOL --format long|llmrouterbench|routerbench|embedllm --out
# PATH` writes the pool in each tool's layout; `open_pool` reads every one back. The long format
# is documented by a JSON Schema shipped with the package and checked on write and on read.

# %%
import warnings

from oraclegap.exchange import export_pool

# a format's writer may import tqdm.auto, which warns in a notebook without ipywidgets
warnings.filterwarnings("ignore", message="IProgress not found")
k1c = dataclasses.replace(k1, cost=cost)
outs = {"long": "x.parquet", "llmrouterbench": "lrb", "routerbench": "rb.parquet",
        "embedllm": "train.csv"}
HELD_WORDS = {"per_response": "per-response arrays (confidences, token counts)"}
or_list = lambda xs: (", ".join(xs[:-1]) + " or " + xs[-1]) if len(xs) > 1 else "".join(xs)
trips = []
for fmt, out in outs.items():
    info = export_pool(k1c, fmt, WORK / out)
    back = open_pool(WORK / out)
    lrb = fmt == "llmrouterbench"  # its prompts come back in file order: sort by their index
    order = np.argsort(back.prompts["index"].to_numpy()) if lrb else np.arange(back.n_prompts)
    trips.append({"format": fmt, "verdicts": np.array_equal(back.verdicts[order], k1c.verdicts),
                  "names": back.policy_names == k1c.policy_names,
                  "not_held": or_list([HELD_WORDS.get(d, R.display_name(d))
                                        for d in info["dropped"]]) or "—"})
trips = pd.DataFrame(trips)

# %%
#| label: tbl-byop-export
#| tbl-cap: >-
#|   The lab's seed pool (first draw, stand-in costs) exported to each format and read back with
#|   open_pool: verdicts and policy names equal, and what the format cannot hold.
R.table(trips, columns={"format": "format", "verdicts": "verdicts equal", "names": "names equal",
                        "not_held": "not held by the format"})

# %%
R.check(bool(trips["verdicts"].all() and trips["names"].all()), "every export reads back equal")
lost = "; ".join(f"{r.format} does not hold {r.not_held}" for r in trips.itertuples()
                 if r.not_held != "—")  # each format's list reads "a, b and c"
R.show_md("Reading: all {n} formats round-trip the verdicts and the policy names; {lost}.",
          n=len(trips), lost=lost or "nothing is lost")

# %% [markdown]
# ### Claims and outcomes
#
# The claims table, @tbl-byop-claims, collects the claims of the opening list with their outcomes
# on this run. The identities (the same numbers through two routes) must hold, and the chapter
# stops otherwise; the others are findings, read as they come out.

# %%
claims, must = R.Claims(), []
claims.add("rollouts: a complete store with per-policy draws from a model, two adapters and a "
           "prompt file",
           "README (Rollouts)",
           f"{status['cells_done']}/{status['cells_total']} cells, alignment {live_pool.alignment}",
           status["complete"] and live_pool.alignment == "independent", kind="sanity")
must.append(len(claims) - 1)
if held:
    claims.add("the live responses reproduce the lab's stored ones (same seeds)",
               "`oraclegap.rollouts`; data/lab/README.md",
               f"answers agree on {same_answers:.1%} of draws", same_answers == 1.0, kind="sanity")
claims.add("audit.json equals audit.run_audit on the same pool and seed", "`audit.run_audit`",
           "identical" if json_equal else "different", json_equal, kind="sanity")
must.append(len(claims) - 1)

# %%
p10 = {null: jl["nulls"]["L"][jl["coverage"]["primary_key"]][null]["p_holm"]
       for null in ("redeal", "margin")}
claims.add(f"lab seed pool at k = 16: neither null rejects at τ = {pw_lab['tau']:g}",
           "2609.32996 §3, Table 1",
           f"Holm p {p10['redeal']:.3f} (re-deal), {p10['margin']:.3f} (margin); both reject at τ "
           f"= {taus_of(jl['nulls']['detected_taus'])}",
           max(p10.values()) > ALPHA, kind="simulation")
if twin:
    claims.add("the same seeds sampled seed-aligned: the audit says the nulls assume independent "
               "draws",
               "this chapter", ", ".join(res_al.verdict.findings),
               "seed-aligned" in res_al.verdict.findings, kind="sanity")
if real is not None:
    claims.add("MATH-500: the audit's decomposition equals the released figures within 0.002",
               "2607.03436 (released)", f"largest difference {dev_real:.4f}", dev_real <= 0.002,
               kind="published")
    must.append(len(claims) - 1)
    claims.add("MATH-500: a certified gap the quick router is not shown to recover", "this chapter",
               res_real.verdict.code, res_real.verdict.code == "certified", kind="simulation")

# %%
claims.add("a long table gives the same audit in every section but the router",
           "`Pool.from_long`, `audit.run_audit`",
           f"{sum(v for s, v in equal.items() if s != 'router')}/{len(sections) - 1} sections "
           "equal",
           all(v for s, v in equal.items() if s != "router"), kind="identity")
must.append(len(claims) - 1)
claims.add("Pool.to_long / sources.open_pool round trip keeps verdicts, answers, confidences, "
           "alignment",
           "README (Pools from other router tools)", ", ".join(k for k, v in trip.items() if v),
           all(trip.values()), kind="identity")
must.append(len(claims) - 1)
claims.add("the verdict changes as responses are added", "this chapter",
           " → ".join(f"k={int(r.k)}: {r.code}" for r in sweep.itertuples()), k_first is not None,
           kind="simulation")

# %%
claims.add("verdict study: no cell without specialization has its false-claim rate's "
           "Wilson interval wholly above α", "`oraclegap.audit.study`",
           f"{len(shown_above)} of {len(fc)} cells with the interval wholly above α ({len(over)} "
           f"with the point rate above); largest "
           f"{R.fmt_interval(worst['rate'], worst['lo'], worst['hi'], 2)}",
           shown_above.empty, kind="simulation")
claims.add("verdict study: exchangeable pools at k = 1 are never `certified`",
           "`oraclegap.audit.verdict` (rule k1-certified)", ex1_txt or "none in the study",
           len(ex_k1) > 0 and not (ex_k1 == "certified").any(), kind="simulation")

# %%
claims.add("verdict study: the certified interval covers its population value in at least 95% "
           "of pools of every class", "`oraclegap.stats.split_gap`",
           R.md("lowest class {r:.3f}", r=cov_all.groupby("truth")["covers"].sum().div(
               cov_all.groupby("truth")["pools"].sum()).min()),
           bool((cov_all.groupby("truth")["covers"].sum()
                 >= 0.95 * cov_all.groupby("truth")["pools"].sum()).all()), kind="simulation")
claims.add("verdict study: on identical members the certified lower limit is at most 0 in at "
           "least 95% of pools, and quality-only is the verdict on at least 80% of quality-only "
           "pools with n >= 1500 and k >= 16", "`oraclegap.audit.study`",
           R.md("{le} of {pi}; {qb} of {qbp}", le=int(ident["le0"].sum()),
                pi=int(ident["pools"].sum()), qb=int(q_big["given"].sum()),
                qbp=int(q_big["pools"].sum())),
           bool((ident["rate"] >= 0.95).all()
                and q_big["given"].sum() >= 0.8 * q_big["pools"].sum()),
           kind="simulation")

# %%
#| label: tbl-byop-claims
#| tbl-cap: "The chapter's claims on this run: what was computed and whether the claim holds here."
claims.table()

# %%
failed = [claims.rows[i]["claim"] for i in must if not claims.rows[i]["holds"]]
if failed:
    raise R.ProseError(f"claims that must hold failed: {failed}")
R.show_md("{h} of {n} claims hold on this run (seed {s}); every identity holds.",
          h=sum(r["holds"] for r in claims.rows), n=len(claims), s=SEED)

# %%
shutil.rmtree(WORK, ignore_errors=True)  # the chapter's scratch folder
