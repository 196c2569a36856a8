# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Pre-routing audit
#
# Is this pool's oracle gap worth a router? This report answers with the numbers behind each
# step: the coverage gap and what a router would have to achieve (arXiv 2609.32996), whether the
# gap is more than sampling noise and how much power this design has (the re-deal and
# margin-preserving nulls with the power planner), whether it survives selecting the best member
# (the selection-valid certificates of Shihab et al.), how much of it is single-draw luck (arXiv
# 2607.03436), and whether a quick held-out router recovers any of it. Every number shown is read
# from `audit.json`, which `oraclegap.audit.run_audit` wrote; this notebook computes nothing new.

# %% tags=["parameters"]
AUDIT_JSON = ""  # an audit.json written by `oraclegap audit`; empty: run the audit on POOL here
POOL = "sim-exchangeable"  # anything oraclegap.sources.open_pool takes (used when AUDIT_JSON is empty)
TAUS = "0.05,0.1,0.2,0.3"
ALPHA = 0.05
SEED = 0
EFFECT = 0.05
SMALL = False

# %%
from IPython.display import Markdown, display

from oraclegap import audit
from oraclegap.report import fmt_interval, table, use_style
from oraclegap.sources import open_pool

use_style()
if AUDIT_JSON:
    numbers = audit.load_numbers(AUDIT_JSON)
else:
    numbers = audit.run_audit(open_pool(POOL), TAUS, ALPHA, SEED, small=SMALL, effect=EFFECT, source=str(POOL)).to_json()
text, tabs = audit.texts(numbers), audit.frames(numbers)
display(Markdown(text["title"] + "\n\n" + text["settings"]))

# %% [markdown]
# ## Verdict
#
# The verdict follows explicit rules (`oraclegap.audit.verdict`, listed in the README) applied to
# the numbers in the sections below.

# %%
display(Markdown(text["verdict"]))

# %% [markdown]
# ## The pool
#
# Shape, draw alignment, prompts no null can move, and each member's mean success rate (with its
# coverage at each threshold when k > 1).

# %%
display(Markdown(text["summary"]))
table(tabs["members"])

# %% [markdown]
# ## Coverage, disagreement and the break-even router error
#
# Per threshold: oracle, best member and uniform-mixture coverage, the disagreement D, the oracle
# gap L and the break-even error L/D a router must beat on disagreement prompts.

# %%
display(Markdown(text["coverage"]))
table(tabs["coverage"])

# %%
#| label: fig-coverage
#| fig-cap: "Coverage of the per-prompt oracle, the best member and the uniform mixture over thresholds; grey lines mark the audited thresholds."
fig = audit.plot_coverage(numbers)

# %% [markdown]
# ## Is the gap more than sampling noise?
#
# The re-deal null deals each prompt's successes back among the members at random; the
# margin-preserving null also keeps every member's total (member quality) fixed.

# %%
display(Markdown(text["nulls"]))
if "nulls" in tabs:
    display(table(tabs["nulls"]))

# %%
#| label: fig-nulls
#| fig-cap: "Observed oracle gap L (stars) against the mean and 90% band of each null at every audited threshold."
fig = audit.plot_nulls(numbers)

# %% [markdown]
# ## Power of this design, and what more data would buy
#
# Simulated pools with the shape of this one and a diffuse effect of a useful size show how often
# the nulls would reject; the planner repeats that with more responses per prompt or more prompts.

# %%
display(Markdown(text["power"]))
table(tabs["power"])

# %%
#| label: fig-power
#| fig-cap: "Power of the re-deal null against the useful diffuse effect, with Wilson 95% intervals, as responses per prompt or prompts grow; the dashed line is the target power."
fig = audit.plot_power(numbers)

# %% [markdown]
# ## Certificates that survive selecting the best member
#
# The certified quantity (k > 1) is the split-draw coverage gap: each prompt's member is chosen on
# half of its draws and scored on the other half, so it is zero when the members are exchangeable.
# The apparent gap of the k draws and Shihab et al.'s intervals of it stand beside it; they include the
# within-prompt winner's curse. The naive interval conditions on the choice of the best member and
# is shown only to be compared. `prompts_needed`: prompts at which the certified lower limit would
# exceed the useful size, if the observed rates held.

# %%
display(Markdown(text["certificates"]))
table(tabs["certificates"])

# %% [markdown]
# ## Single-draw luck
#
# The expected single-draw oracle splits into the reproducible ceiling any single-commit router is
# held to and a floor of single-draw luck; best-of-K sampling of the committed member is the check.

# %%
display(Markdown(text["noise"]))
if "noise" in tabs:
    display(table(tabs["noise"]))
    display(table(tabs["best_of_k"]))
    fig = audit.plot_noise(numbers)

# %% [markdown]
# ## A quick held-out router
#
# A nearest-neighbour router fitted on a calibration half, compared with the member selected on
# that half by paired inference on the other half.

# %%
display(Markdown(text["router"]))
if "router" in tabs:  # the difference with its interval in one column, so the table fits the page
    rf = tabs["router"].copy()
    rf.insert(list(rf.columns).index("difference"), "difference [95%]",
              [fmt_interval(d, lo, hi) for d, lo, hi in zip(rf["difference"], rf["diff_lo"], rf["diff_hi"], strict=True)])
    display(table(rf.drop(columns=["difference", "diff_lo", "diff_hi"])))

# %% [markdown]
# ## Integrity before inference
#
# Duplicated prompts (exact and near) and whether copies straddle the quick router's split
# (leakage), outcome alignment where answers and gold answers exist, aggregation warnings, and the
# constant baselines a router has to beat.

# %%
if "integrity" in text:
    display(Markdown(text["integrity"]))

# %%
if "build" in text:  # the commit, lock and library versions that computed these numbers
    display(Markdown(text["build"]))
