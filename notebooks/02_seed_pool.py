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
# # The seed pool: is the oracle gap sampling noise? {#sec-seed-pool}
#
# **The question.** Train the same model several times, changing only the random seed, and
# the per-prompt oracle over the resulting policies covers noticeably more prompts than the
# best single policy. Is that gap evidence that the seeds specialise, or what picking the
# largest of several noisy success-rate estimates produces anyway? arXiv 2609.32996 (Section 3
# and Appendices B-C) answers with two randomisation tests built from stored responses: the
# *re-deal* null and the *margin-preserving* null (@sec-nulls). This chapter runs both tests
# and everything around them (split-half scoring, pool-size curves, calibration and power
# simulations, a power planner) and asks how much a non-rejection can be trusted. Symbols
# follow the [notation page](../notation.qmd); coverage, $L$, $D$ and the plug-in are defined in
# @sec-coverage.
#
# **Claims checked.** Each is checked by code below; the outcome, with the paper's number
# beside ours, is read after each result and collected in the takeaways.
#
# 1. In a pool without any specialisation the plug-in oracle gap is large, both nulls
#    reproduce it, and split-half scoring removes it.
# 2. Both tests hold their nominal level on null data (the paper reports 3%-6% at level 5%).
# 3. Power against concentrated specialisation (the paper: 0.65 and 0.70 with one transfer
#    per prompt, 1.00 with two) and against diffuse log-odds differences at $k = 16$ and
#    $k = 64$ (the paper: power 0.50 for a gap near 0.05 at $k = 16$, 0.90 at $k = 64$).
# 4. How much of a known population gap the excess recovers (the paper: 14%-35% of gaps of at
#    least 0.02 at $k = 16$).
# 5. How the margin-preserving test reacts to quality differences that are constant on the
#    probit or probability scale rather than the logit (the paper: rejection rate 0.33 at
#    $\tau = 0.20$ on the probability scale).
# 6. When the MATH-500 tensors of 2607.03436 are present: which null is the right reference for
#    a pool of genuinely different models.

# %% tags=["parameters"]
SMALL = False  # a quick run for tests and classes: fewer draws and replicates
SEED = 0
N_PROMPTS = 240  # n: the seed pool's shape follows the paper's Geometry3K test split
M = 5  # members
K = 16  # k, responses per member and prompt
POOL = None  # your own pool instead of the simulated one: a pool directory, .npy, FILE.npz:KEY, wide .csv or registry name
TAUS = [0.05, 0.10, 0.20, 0.30]  # the paper's reporting thresholds
N_DRAWS = 2000  # null draws for the main tests
N_SPLITS = 200  # random splits for split-half scoring
N_BOOT = 1000  # prompt-bootstrap resamples of the excess
N_BOOT_DRAWS = 200  # re-deals per bootstrap resample
N_FP_POOLS = 200  # null datasets per null for the false-positive rates
N_STUDY_DRAWS = 400  # null draws per test in the simulation studies
N_POWER_REPS = 40  # replicates per setting in the power and planting studies
N_A3_REPS = 30  # replicates per setting in the excess-versus-truth study
N_A4_REPS = 30  # replicates per setting in the link-sensitivity study
N_PLAN_REPS = 60  # replicates per grid point of the power planner
N_CHECK_REPS = 200  # replicate pools for the Monte Carlo checks of the appendix
TAUS_REAL = [0.10, 0.30, 0.50, 0.70, 0.90]

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

from oraclegap import datasets
from oraclegap import report as R
from oraclegap.sources import open_pool
from oraclegap.stats import coverage as cov
from oraclegap.stats import nulls, simulate, studies

R.use_style()
if SMALL:
    N_DRAWS, N_SPLITS, N_BOOT, N_BOOT_DRAWS, N_CHECK_REPS = 400, 40, 60, 40, 40
    N_FP_POOLS, N_STUDY_DRAWS, N_POWER_REPS, N_A3_REPS, N_A4_REPS, N_PLAN_REPS = 30, 100, 6, 5, 5, 8
rng, t_start, skipped = np.random.default_rng(SEED), time.perf_counter(), []
nulls.warm_up()  # compile or load the numba kernels once, before anything is timed

# %% [markdown]
# ## Data and settings
#
# The policy lab that trains real seed pools arrives with a later issue, so the main pool here
# is a simulated stand-in with the paper's shape. Every member shares one success probability
# per prompt, drawn from the Beta prompt-rate prior the paper fitted on Geometry3K: the
# population oracle gap is exactly zero, and every apparent gap is noise. Planted variants of
# it carry the power studies. When `OG_EXTERNAL_DIR` holds the released MATH-500 tensors of
# 2607.03436 (eleven open models, 30 responses each), a later section contrasts a pool of
# genuinely different models. @tbl-seed-settings lists the pools and the settings.
#
# To run the chapter on your own pool, set the `POOL` parameter (a pool directory, a `.npy`
# verdict array, `FILE.npz:KEY`, a wide CSV or a registry name from `oraclegap.datasets`);
# every test and every planted or simulated variant then starts from your pool's counts, and
# only the statements about a known zero gap no longer apply.

# %%
#| label: tbl-seed-settings
#| tbl-cap: "Pools and settings of this chapter."
if POOL:
    seed_pool = open_pool(POOL)  # bring your own pool: every test below runs on it
    N_PROMPTS, M, K = seed_pool.shape
    truth = "unknown (your pool)"
else:
    seed_pool = simulate.exchangeable(N_PROMPTS, M, K, seed=rng).pool
    truth = f"equal rates pᵢₘ = pᵢ ~ Beta{cov.GEOMETRY3K_PRIOR.a, cov.GEOMETRY3K_PRIOR.b}: population gap 0"
n_moves = N_PROMPTS * M
settings = pd.DataFrame({"item": ["pool", "truth", "thresholds τ", "null draws", "margin chain", "split-half", "simulation studies"],
                         "value": [f"{POOL or 'simulated'}: {N_PROMPTS} prompts × {M} members × {K} responses", truth,
                                   ", ".join(f"{t:g}" for t in TAUS), f"{N_DRAWS:,} per null",
                                   f"heat-bath 2×2 moves, burn-in {60 * n_moves:,}, then every {2 * n_moves:,}th table",
                                   f"{N_SPLITS} random splits of each cell's responses, {K // 2} + {K - K // 2}",
                                   f"{N_STUDY_DRAWS} null draws per test; chain burn-in {30 * n_moves:,}, thinning {n_moves:,}"]})
R.table(settings)

# %% [markdown]
# Before any test, a first look at the pool: the members' mean success rates, and the prompts
# that no null can move because all their responses are wrong, or all right, across the pool.

# %%
deg, means, tab0 = nulls.degenerate_prompts(seed_pool), seed_pool.rates().mean(axis=0), cov.coverage(seed_pool, TAUS)
R.show_md(
    "Member mean success rates range from {lo} to {hi}. {d} of {n} prompts are degenerate ({w} all wrong, {r} all right) "
    "and carry no randomisation variance. At $\\tau = 0.10$ the members disagree on $\\hat D = {D}$ of the prompts and the "
    "plug-in oracle beats the best member by $\\hat L = {L}$, so a router would have to pick a covered member on more than "
    "{be:%} of the disagreement prompts ($1 - \\hat L/\\hat D$) just to match the best member.",
    lo=means.min(), hi=means.max(), d=deg["degenerate"], n=deg["n_prompts"], w=deg["all_wrong"], r=deg["all_right"],
    D=tab0.D[1], L=tab0.L[1], be=1 - tab0.break_even[1],
)

# %% [markdown]
# ## Two reference laws {#sec-nulls}
#
# **The re-deal null** assumes that on each prompt every member has the same rate (rates may
# differ across prompts). Then, given the prompt's total successes among its $Mk$ responses,
# every way of dealing those successes into $M$ hands of $k$ is equally likely, as in dealing
# cards (@fig-redeal). Re-dealing every prompt independently draws a table from that law (the
# multivariate hypergeometric law); repeating it gives the null distribution of any statistic.
# It keeps every prompt's total, hence the uniform mixture's raw rate, and it breaks any link
# between a member and its successes.

# %%
#| label: fig-redeal
#| fig-cap: "The re-deal null on one prompt of the seed pool: the observed responses of each member (left; filled square: correct, drawn as counts) and one re-deal of the same successes into the members' hands (right)."
i_show = int(np.argsort(np.abs(seed_pool.counts().sum(axis=1) - M * K / 3))[0])
dealt = nulls.redeal(seed_pool, 1, seed=rng)[0, i_show]
fig, axes = plt.subplots(1, 2, figsize=(9, 2.2))
for ax, row, title in ((axes[0], seed_pool.counts()[i_show], "observed"), (axes[1], dealt, "one re-deal")):
    R.draw_outcomes(ax, np.arange(K)[None, :] < row[:, None], row_labels=list(seed_pool.policy_names),
                    row_notes=[f"{c}/{K}" for c in row], title=f"{title}: {row.sum()} successes on prompt {i_show}")
plt.tight_layout()
plt.show()

# %% [markdown]
# **The margin-preserving null** also keeps every member's total number of successes, so it
# allows one member to be better than another everywhere, in one particular way: the *additive
# logit model* $\operatorname{logit} p_{im} = a_i + b_m$, with a difficulty $a_i$ per prompt and a
# strength $b_m$ per member, and no interaction (no specialisation).
#
# ::: {.callout-tip}
# ## Why conditioning on the totals removes the unknown parameters
# Under the additive logit model the probability of a count table $c$ with row totals
# $r_i = \sum_m c_{im}$ and column totals $s_m = \sum_i c_{im}$ is
# $$P(c \mid a, b) = \Big[\prod_{i,m} \binom{k}{c_{im}}\Big]\,
#   \frac{\exp\big(\sum_i a_i r_i + \sum_m b_m s_m\big)}{\prod_{i,m} (1 + e^{a_i + b_m})^k}.$$
# The parameters touch the table only through its totals. Among tables with the observed totals
# the exponential factor and the denominator are the same constant, so the conditional law is
# $P(c \mid r, s) \propto \prod_{i,m} \binom{k}{c_{im}}$, whatever $a$ and $b$ are. The test needs
# no estimate of difficulty or strength; it only asks whether the pattern of successes across
# prompts is unusual for tables with these totals.
# :::
#
# The *margin chain* samples that law with $2\times 2$ moves (@fig-swap): pick two prompts and
# two members, move successes from one member to the other on the first prompt and back on the
# second; every row and column total stays. Our chain draws the whole feasible transfer at
# once from its exact conditional law (a heat-bath move), which mixes faster than the paper's
# one-success Metropolis move; both are checked against the exact law in @sec-seed-checks. The
# chain's draws are dependent, so we report their *effective sample size* (ESS): the number
# of independent draws with the same Monte Carlo precision.

# %%
#| label: fig-swap
#| fig-cap: "One 2×2 move of the margin chain on two prompts and two members of the seed pool: one success moves from member a to member b on the first prompt and back on the second. Grey numbers are the row and column totals of the sub-table; they do not change."
c_all = seed_pool.counts()
i1, i2 = [int(i) for i in np.flatnonzero((c_all[:, 0] > 0) & (c_all[:, 1] < K))[:1]] + \
         [int(i) for i in np.flatnonzero((c_all[:, 1] > 0) & (c_all[:, 0] < K))[1:2]]
sub = c_all[[i1, i2]][:, [0, 1]]
move = np.array([[-1, 1], [1, -1]])
fig, axes = plt.subplots(1, 2, figsize=(6, 2.3))
labels = {"row_labels": [f"prompt {i1}", f"prompt {i2}"], "col_labels": [f"a = {seed_pool.policy_names[0]}", f"b = {seed_pool.policy_names[1]}"]}
R.draw_counts(axes[0], sub, title="before", **labels)
R.draw_counts(axes[1], sub + move, changes=move, title="after one move", **labels)
plt.tight_layout()
plt.show()

# %% [markdown]
# Both tests compare the observed statistic with its null draws through upper-tail
# fractions: $p_{\mathrm{re}}$ (re-deal) and $p_{\mathrm{mp}}$ (margin-preserving) are the shares
# of null draws at or above the observed value; the *lower-tail* fraction is the share at or
# below. These are p-values, not rates, hence the subscripts.
#
# ## How much of the gap does sampling explain?
#
# @tbl-table1 and @tbl-table1-more mirror Table 1 of 2609.32996, split in two. The *excess* is
# the observed gap minus the re-deal null mean; its *prompt bootstrap* interval resamples
# prompts with replacement and recomputes both. *Split-half* scoring chooses both the per-prompt
# member and the fixed comparator on half of each cell's responses and scores them on the other
# half, so selection and scoring use different data.

# %%
#| label: tbl-table1
#| tbl-cap: "Oracle-gap tests on the seed pool (first half of the layout of Table 1 of 2609.32996): disagreement and oracle gap, observed and re-deal null means, the 5th-95th percentile band of re-deal draws, the upper-tail p-values of both nulls, and the split-half gap."
gt = nulls.gap_table(seed_pool, TAUS, n_draws=N_DRAWS, n_splits=N_SPLITS, seed=rng)
t1 = gt.frame()
t1["band"] = [R.fmt_interval(None, a, b) for a, b in zip(t1["L_band_lo"], t1["L_band_hi"], strict=True)]
R.table(t1, columns={"tau": "τ", "D": "D̂", "D_null": "D̂ re-deal", "L": "L̂", "L_null": "L̂ re-deal", "band": "re-deal 90% band",
                     "p": "pᵣₑ", "p_m": "pₘₚ", "split_half": "split-half gap"})

# %%
#| label: tbl-table1-more
#| tbl-cap: "The rest of the layout of Table 1: oracle minus uniform mixture, and the rise of the plug-in gap from two members to all of them, each observed, with its re-deal null mean and upper-tail p-value."
R.table(t1, columns={"tau": "τ", "orac_minus_mix": "oracle − mixture", "orac_minus_mix_null": "re-deal mean",
                     "orac_minus_mix_p": "pᵣₑ", "rise_L": f"rise of L̂, 2 to {M}", "rise_L_null": "rise, re-deal mean", "rise_p": "rise, pᵣₑ"})

# %%
row = t1.set_index("tau").loc[0.10]
boot = nulls.excess_bootstrap(seed_pool, 0.10, n_boot=N_BOOT, n_draws=N_BOOT_DRAWS, seed=rng)
rejects = [name for name, pv in (("re-deal", row["p"]), ("margin-preserving", row["p_m"])) if pv <= 0.05]
R.show_md(
    "At $\\tau = 0.10$ the re-deal null, in which no member differs from another, produces a mean gap of {m} against {L} "
    "observed: the null {rel} the observed gap. The excess is {e:+} with 95% prompt-bootstrap interval {ci}; {verdict} "
    "($p_{{\\mathrm{{re}}}} = {p:p}$, $p_{{\\mathrm{{mp}}}} = {pm:p}$). The split-half gap is {sh:+}. For comparison, the "
    "paper's Geometry3K pool had $\\hat L = {pL}$ against a null mean of {pn} ($p_{{\\mathrm{{re}}}} = {pp}$, $p_{{\\mathrm{{mp}}}} = {ppm}$).",
    m=row["L_null"], L=row["L"], rel=R.compare(row["L_null"], row["L"], more="exceeds", less="falls short of", same="matches"),
    e=row["excess"], ci=R.fmt_interval(None, boot.lo, boot.hi), p=row["p"], pm=row["p_m"], sh=row["split_half"],
    verdict="neither test rejects at level 0.05" if not rejects else "the " + " and ".join(rejects) + " test rejects at level 0.05",
    pL=R.published("000.T1.L_010").text, pn=R.published("000.T1.L_null_010").text, pp=R.published("000.T1.p_010").text,
    ppm=R.published("000.T1.pm_010").text,
)

# %% [markdown]
# A reader of @tbl-table1-more may wonder why one p-value can be exactly one. At the lowest
# threshold the oracle covers a prompt when some member has one success, that is, when the
# prompt's total is positive; the mixture covers it when the pooled count reaches its own count
# rule. Both depend on the prompt totals alone, which the re-deal keeps, so their difference
# is the same in every null draw.

# %%
const = [t for t in gt.tests.tests if np.ptp(t.draws) == 0]
R.show_callout(
    "Under the re-deal null these statistics take one value in every draw: {names}. At $\\tau = {t:g}$ with $k = {k}$ the "
    "oracle's count rule needs {a} success and the mixture's needs {b} of {mk}; both are fixed by the prompt totals. A test "
    "whose null is a single point has $p = 1$ whatever the data (the paper's Table 1 prints {pp} there too) and can never "
    "reject, so it stays out of the multiple-testing family below, where it would only dilute the others.",
    names=", ".join(R.test_name(t.statistic, t.tau, t.null) for t in const) or "none", t=TAUS[0], k=K, a=cov.need(TAUS[0], K),
    b=cov.need(TAUS[0], M * K), mk=M * K, pp=R.published("000.T1.omm_p_005").text, kind="tip",
    title="Why a test statistic can be constant under a null",
)

# %% [markdown]
# Where does the observed gap fall within the null distributions? @fig-null shows both at
# $\tau = 0.10$.

# %%
#| label: fig-null
#| fig-cap: "Null distributions of the plug-in oracle gap at τ = 0.10 on the seed pool: re-deal draws and margin-chain draws, with the observed gap (solid line) and the re-deal 5th-95th percentile band (shaded)."
lr, lm = gt.tests.get("L", 0.10, "redeal"), gt.tests.get("L", 0.10, "margin")
fig, ax = plt.subplots()
edges = np.arange(min(lr.draws.min(), lm.draws.min()) - 0.5 / N_PROMPTS, max(lr.draws.max(), lm.draws.max()) + 1 / N_PROMPTS, 1 / N_PROMPTS)
ax.hist(lr.draws, bins=edges, alpha=0.6, label="re-deal null")
ax.hist(lm.draws, bins=edges, alpha=0.6, label="margin-preserving null")
ax.axvspan(lr.band_lo, lr.band_hi, color="C0", alpha=0.08)
ax.axvline(lr.observed, color="k", lw=2, label="observed L̂")
ax.set(xlabel="oracle gap L̂ at τ = 0.10", ylabel="null draws", title="Where the observed gap falls")
ax.legend()
plt.show()

# %%
ch, ess = gt.tests.chain, [gt.tests.get("L", t, "margin").ess / N_DRAWS for t in TAUS]
R.show_md(
    "Reading: the observed gap lies {where} the re-deal 90% band {band}, and the two null means differ by {dm}. The chain "
    "changed the table on {acc:%} of its {prop:,} proposals; its ESS for $\\hat L$ is {lo:%} to {hi:%} of the {n:,} draws "
    "across thresholds.",
    where=R.position(lr.observed, lr.band_lo, lr.band_hi, above="above", below="below"), band=R.fmt_interval(None, *lr.band),
    dm=abs(lr.mean - lm.mean), acc=ch.acceptance, prop=ch.proposals, lo=min(ess), hi=max(ess), n=N_DRAWS,
)

# %% [markdown]
# ### Are the members alike?
#
# Two descriptive checks from Appendices B.1 and C.5 of the paper (@tbl-similarity): the mean
# pairwise correlation of the members' per-prompt rates and the share of prompts whose member
# rates differ by more than a quarter, each against the re-deal null; and the spread of member
# coverage (best minus worst member) against a reference that permutes member labels within
# prompts.

# %%
#| label: tbl-similarity
#| tbl-cap: "Pairwise similarity (re-deal null) and the spread of member coverage (labels permuted within prompts) on the seed pool: observed value, reference mean and 90% band, upper- and lower-tail fractions."
sim_diag = nulls.similarity(seed_pool, n_draws=N_DRAWS, seed=rng)
spread = nulls.member_spread(seed_pool, TAUS, n_draws=N_DRAWS, seed=rng)
diag = nulls.tests_frame([sim_diag, spread])
diag["test"] = [R.test_name(s, t, n) for s, t, n in zip(diag["statistic"], diag["tau"], diag["null"], strict=True)]
diag["band"] = [R.fmt_interval(None, a, b) for a, b in zip(diag["band_lo"], diag["band_hi"], strict=True)]
R.table(diag, columns={"test": "statistic, reference", "observed": "observed", "mean": "reference mean", "band": "90% band",
                       "p": "upper-tail p", "p_lower": "lower-tail p"})

# %%
corr_t = sim_diag.tests[0]
R.show_md("Reading: pairwise correlations average {c} against {cn} under the re-deal null (the paper: {pc} against {pcn}), "
          "and the smallest member-spread p-value is {p:p}.", c=corr_t.observed, cn=corr_t.mean,
          pc=R.published("000.B1.corr").text, pcn=R.published("000.B1.corr_null").text, p=min(t.p for t in spread.tests))

# %% [markdown]
# ## Do the tests keep their level?
#
# Following Appendix C.2 we generate null datasets from the seed pool itself: re-deal datasets
# deal every prompt's successes back at random, and margin-preserving datasets are successive
# tables of the chain. Both tests then run on each dataset at the two lowest thresholds. A
# calibrated test rejects a share of them close to its level $\alpha = 0.05$ (@tbl-fpr).

# %%
#| label: tbl-fpr
#| tbl-cap: "False-positive rates at nominal level 0.05 on null datasets made from the seed pool, with Wilson 95% intervals: rows are the kind of null dataset and the test, columns the threshold."
fp = studies.sweep([{"datasets": w} for w in nulls.NULLS], lambda datasets: studies.null_world(seed_pool, datasets, N_FP_POOLS, seed=rng),
                   N_FP_POOLS, seed=rng, taus=TAUS[:2], n_draws=N_STUDY_DRAWS, burn_in=30 * n_moves, thin=n_moves)
fp["rate"] = [R.fmt_rate(r, lo, hi, digits=1) for r, lo, hi in zip(fp["reject_rate"], fp["ci_lo"], fp["ci_hi"], strict=True)]
fp["null datasets, test"] = [f"{R.NULL_NAMES[d]} datasets, {R.NULL_NAMES[t]} test" for d, t in zip(fp["datasets"], fp["null"], strict=True)]
R.table(fp.pivot(index="null datasets, test", columns="tau", values="rate").rename(columns=lambda t: f"τ = {t:.2f}").reset_index())

# %%
inside = int(((fp["ci_lo"] <= 0.05) & (fp["ci_hi"] >= 0.05)).sum())
R.show_md("Reading: across {n} null datasets per null the rejection rates lie between {lo:%} and {hi:%} at nominal 5%; the "
          "nominal level lies inside {i} of the {t} Wilson intervals. The paper reports {plo}-{phi} for the same design.",
          n=N_FP_POOLS, lo=fp["reject_rate"].min(), hi=fp["reject_rate"].max(), i=inside, t=len(fp),
          plo=R.published("000.C2.fpr_lo").text, phi=R.published("000.C2.fpr_hi").text)

# %% [markdown]
# ## What can the tests detect?
#
# ### Concentrated specialisation
#
# We plant specialisation into the seed pool's counts: on each prompt up to
# $\operatorname{round}(\delta k)$ successes move one at a time from random donors to a randomly
# designated specialist, keeping the prompt total (Table A2 of the paper; $\delta$ is the
# planting strength). Both tests run at $\tau = 0.10$ on each planting (@tbl-planting).

# %%
#| label: tbl-planting
#| tbl-cap: "Power against concentrated specialisation planted into the seed pool, τ = 0.10, level 0.05, with Wilson 95% intervals. Transfers: the target number of successes moved per prompt; excess: planted L̂ minus its re-deal null mean."
deltas = (0.0, 0.05, 0.10, 0.15, 0.20, 0.25) if K == 16 else tuple(t / K for t in range(5))  # the paper's strengths at k = 16
plant = studies.sweep([{"delta": d} for d in deltas], lambda delta: (lambda r: simulate.plant(seed_pool, delta, seed=r)),
                      N_POWER_REPS, seed=rng, taus=(0.10,), n_draws=N_STUDY_DRAWS, burn_in=30 * n_moves, thin=n_moves)
plant["rate"] = [R.fmt_rate(r, lo, hi) for r, lo, hi in zip(plant["reject_rate"], plant["ci_lo"], plant["ci_hi"], strict=True)]
plant["transfers"] = [simulate.transfer_target(d, K) for d in plant["delta"]]
pw = plant.pivot(index=["delta", "transfers"], columns="null", values="rate").reset_index()
pw = pw.merge(plant[plant["null"] == "redeal"][["delta", "observed", "excess"]], on="delta")
R.table(pw, columns={"delta": "δ", "transfers": "transfers", "redeal": "power, re-deal", "margin": "power, margin-preserving",
                     "observed": "mean L̂", "excess": "mean excess"})

# %%
def power_of(df, null, **where):
    """The rejection rate (with its Wilson interval) of one setting of a sweep."""
    sel = df[(df["null"] == null) & np.logical_and.reduce([df[k] == v for k, v in where.items()])].iloc[0]
    return R.fmt_rate(sel["reject_rate"], sel["ci_lo"], sel["ci_hi"])


R.show_md("Reading: one transfer per prompt is detected in {a} (re-deal) and {b} (margin-preserving) of {n} plantings, against "
          "the paper's {pa} and {pb}; with two transfers the rates are {c} and {d} (the paper: {p2}).",
          a=power_of(plant, "redeal", transfers=1), b=power_of(plant, "margin", transfers=1), n=N_POWER_REPS,
          pa=R.published("000.TA2.power_redeal_1").text, pb=R.published("000.TA2.power_margin_1").text,
          c=power_of(plant, "redeal", transfers=2), d=power_of(plant, "margin", transfers=2), p2=R.published("000.TA2.power_2").text)

# %% [markdown]
# ### Diffuse differences, and what more responses buy
#
# Concentrated transfers are one alternative. Table 2 of the paper perturbs every member's
# log-odds on every prompt independently, with standard deviation $\sigma$, centred on the
# prompt's observed mean rate, so no member is a designated specialist and the population gap
# $L$ is known exactly. We repeat the study with $k = 64$ responses per member (@tbl-diffuse).

# %%
#| label: tbl-diffuse
#| tbl-cap: "Power against diffuse log-odds differences centred on the seed pool's prompt means, τ = 0.10, level 0.05, with Wilson 95% intervals, at k = 16 and k = 64. L: population gap (mean over replicates); excess: plug-in L̂ minus the re-deal null mean."
grid_d = [{"k": kk, "sigma": s} for kk in (16, 64) for s in (0.25, 0.5, 1.0)]
diff = studies.sweep(grid_d, lambda k, sigma: (lambda r: simulate.diffuse_from(seed_pool, sigma, k_sim=k, seed=r)), N_POWER_REPS,
                     seed=rng, taus=(0.10,), n_draws=N_STUDY_DRAWS, burn_in=30 * n_moves, thin=n_moves)
diff["rate"] = [R.fmt_rate(r, lo, hi) for r, lo, hi in zip(diff["reject_rate"], diff["ci_lo"], diff["ci_hi"], strict=True)]
dw = diff.pivot(index=["k", "sigma"], columns="null", values="rate").reset_index()
dw = dw.merge(diff[diff["null"] == "redeal"][["k", "sigma", "population_L", "excess"]], on=["k", "sigma"])
R.table(dw, columns={"k": "k", "sigma": "σ", "population_L": "L", "excess": "mean excess", "redeal": "power, re-deal",
                     "margin": "power, margin-preserving"})

# %%
mid = diff[(diff["sigma"] == 0.5) & (diff["null"] == "redeal")].set_index("k")
R.show_md(
    "Reading: at $\\sigma = 0.5$ the population gap is {L} (the paper: {pL}). At $k = 16$ the re-deal test detects it in "
    "{p16} of replicates, and the paper's {pp16} lies {w16} our interval; at $k = 64$ in {p64}, the paper's {pp64} lying "
    "{w64} it. A non-rejection at the smaller budget leaves gaps of this size unresolved.",
    L=mid.loc[16, "population_L"], pL=R.published("000.T2.L_050").text, p16=power_of(diff, "redeal", k=16, sigma=0.5),
    pp16=R.published("000.T2.power_redeal_050").text, p64=power_of(diff, "redeal", k=64, sigma=0.5),
    pp64=R.published("000.C2.power_k64_050").text,
    w16=R.position(R.published("000.T2.power_redeal_050").value, mid.loc[16, "ci_lo"], mid.loc[16, "ci_hi"]),
    w64=R.position(R.published("000.C2.power_k64_050").value, mid.loc[64, "ci_lo"], mid.loc[64, "ci_hi"]),
)

# %% [markdown]
# ### What the excess measures
#
# The excess is easy to misread as an estimate of the population gap. Appendix C.3 tests that
# reading on pools whose truth is known: a fraction $f$ of prompts gets one member raised by
# $s$ above the common rate. We compare the known population $L(0.10)$, the plug-in gap and its
# excess over the re-deal mean, at $k = 16$ and $k = 64$ (@tbl-excess, @fig-excess).
#
# ::: {.callout-tip}
# ## Why the excess understates a real gap
# The null mean is computed from the observed counts, and those already contain the
# specialists' extra successes. Re-dealing spreads them over all members, where the winner's
# curse turns them into a null gap of its own, so part of the real gap is subtracted as if it
# were noise. And at small $k$ the plug-in itself misses part of the gap: a specialist whose
# rate crosses the threshold by a little shows up only when its $k$ responses happen to reach
# the count rule.
# :::

# %%
#| label: tbl-excess
#| tbl-cap: "Finite-sample excess against the known population gap at τ = 0.10 (Table A3 of 2609.32996): a fraction f of prompts gets a specialist raised by s. L: population gap; L̂: plug-in gap; ratio: excess / L (means over replicates)."
grid_x = [{"k": kk, "f": f, "s": s} for kk in (16, 64) for f in (0.1, 0.3, 0.5) for s in (0.05, 0.10, 0.20)]
a3 = studies.sweep(grid_x, lambda k, f, s: (lambda r: simulate.specialists(N_PROMPTS, M, k, f, s, seed=r)), N_A3_REPS, seed=rng,
                   taus=(0.10,), nulls=("redeal",), n_draws=N_STUDY_DRAWS)
a3["ratio"] = a3["excess"] / a3["population_L"]
R.table(a3, columns={"k": "k", "f": "f", "s": "s", "population_L": "L", "observed": "L̂", "excess": "mean excess", "ratio": "ratio"})

# %%
big = a3[a3["population_L"] >= R.published("000.C3.min_gap").value]
pooled = big.groupby("k").apply(lambda d: d["excess"].sum() / d["population_L"].sum(), include_groups=False)
R.check((pooled < 1).all(), "the excess understates a real gap (callout above)")
lo_hi = big.groupby("k")["ratio"].agg(["min", "max"])
R.show_md(
    "Reading: over the settings with a population gap of at least {g}, the excess recovers {p16:%} of the gap in total at "
    "$k = 16$ (single settings {a:%} to {b:%}, each a mean of {r} noisy replicates) and {p64:%} at $k = 64$ ({c:%} to {d:%}). "
    "The paper reports {q1}-{q2} at $k = 16$ and {q3}-{q4} at $k = 64$.",
    g=R.published("000.C3.min_gap").text, p16=pooled.loc[16], p64=pooled.loc[64], a=lo_hi.loc[16, "min"], b=lo_hi.loc[16, "max"],
    c=lo_hi.loc[64, "min"], d=lo_hi.loc[64, "max"], r=N_A3_REPS, q1=R.published("000.C3.share_k16_lo").text,
    q2=R.published("000.C3.share_k16_hi").text, q3=R.published("000.C3.share_k64_lo").text, q4=R.published("000.C3.share_k64_hi").text,
)

# %% [markdown]
# @fig-excess plots every setting: its known population gap against the mean excess, with
# two Monte Carlo standard errors, and the diagonal where the excess would equal the gap.

# %%
#| label: fig-excess
#| fig-cap: "Mean excess over the re-deal null mean (bars: ± 2 Monte Carlo standard errors) against the known population gap L(0.10), at k = 16 (circles) and k = 64 (squares); dashed: the diagonal where the excess equals the gap."
fig, ax = plt.subplots()
for kk, marker in ((16, "o"), (64, "s")):
    d = a3[a3["k"] == kk]
    ax.errorbar(d["population_L"], d["excess"], yerr=2 * d["excess_se"], fmt=marker, capsize=2, label=f"k = {kk}")
lim = max(a3["population_L"].max(), a3["excess"].max()) * 1.05
ax.plot([0, lim], [0, lim], color="k", ls="--", lw=1, label="excess = population gap")
ax.set(xlabel="population gap L(0.10)", ylabel="mean excess", title="The excess against the gap it should measure")
ax.legend()
plt.show()

# %%
side = np.where(a3["excess"] + 2 * a3["excess_se"] < a3["population_L"], "below",
                np.where(a3["excess"] - 2 * a3["excess_se"] > a3["population_L"], "above", "within noise"))
n_side = pd.Series(side).value_counts().reindex(["below", "within noise", "above"], fill_value=0)
above_L = a3.loc[side == "above", "population_L"]
R.show_md("Reading: {b} of the {t} settings lie clearly below the diagonal (by more than two standard errors), {w} are within "
          "Monte Carlo noise of it, and {a} lie clearly above it{where}. The excess is a lower reading of a real gap, not an "
          "estimate of it.", b=int(n_side["below"]), w=int(n_side["within noise"]), a=int(n_side["above"]), t=len(a3),
          where="" if above_L.empty else R.md(" (population gaps up to {g}, where the ratio is unstable)", g=above_L.max()))

# %% [markdown]
# ## How sensitive is the margin-preserving null to its model?
#
# The margin-preserving test conditions on member totals under the additive logit model.
# Appendix C.4 probes what happens when a quality difference is constant on another scale: two
# groups of five members share the seed pool's prompt difficulties, the stronger group keeps
# the pool's own mean rate (as in the paper, where the stronger group was the observed pool),
# and the weaker group sits 0.13 or 0.20 below it (the paper's gaps), with effects constant on
# the logit, probit or probability scale. No member specialises, so any rejection reflects
# the null's link (@fig-links, @tbl-links).

# %%
base_q = seed_pool.counts().sum(axis=1) / (M * K)
strong = float(base_q.mean())
grid_l = [{"link": link, "gap": g} for link in simulate.LINKS for g in (R.published("000.C4.gap_1").value, R.published("000.C4.gap_2").value)]
links = studies.sweep(grid_l, lambda link, gap: (lambda r: simulate.quality_shift(k=K, link=link, strong_mean=strong,
                      weak_mean=max(strong - gap, 0.01), base=base_q, seed=r)), N_A4_REPS, seed=rng, taus=(0.05, 0.10, 0.20),
                      n_draws=N_STUDY_DRAWS, burn_in=30 * N_PROMPTS * 10, thin=N_PROMPTS * 10)

# %%
#| label: fig-links
#| fig-cap: "Rejection rates of the margin-preserving test (level 0.05, Wilson 95% intervals) when two groups differ in quality by an effect constant on the logit, probit or probability scale, for the two quality gaps; the dashed line is the nominal level."
fig, axes = plt.subplots(1, 2, figsize=(9, 3.3), sharey=True)
for ax, g in zip(axes, sorted(links["gap"].unique()), strict=True):
    for j, link in enumerate(simulate.LINKS):
        d = links[(links["link"] == link) & (links["gap"] == g) & (links["null"] == "margin")]
        x = d["tau"] + (j - 1) * 0.006
        ax.errorbar(x, d["reject_rate"], yerr=[d["reject_rate"] - d["ci_lo"], d["ci_hi"] - d["reject_rate"]], fmt="o", capsize=2,
                    label={"identity": "probability scale"}.get(link, link))
    ax.axhline(0.05, color="k", ls="--", lw=1)
    ax.set_xticks(sorted(links["tau"].unique()))
    ax.set(xlabel="τ", title=f"quality gap {g:.2f}")
fig.suptitle(f"stronger group's mean rate {strong:.2f}", fontsize=9)
axes[0].set_ylabel("rejection rate, margin-preserving")
axes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()

# %%
#| label: tbl-links
#| tbl-cap: "Mean plug-in oracle gap L̂ in the link-sensitivity study (quality differences only, no specialisation), by link, quality gap and threshold."
lw = links[links["null"] == "margin"].pivot(index=["link", "gap"], columns="tau", values="observed").reindex(simulate.LINKS, level=0)
R.table(lw.rename(columns=lambda t: f"L̂ at τ = {t:.2f}").reset_index().replace({"link": {"identity": "probability"}}))

# %%
mx = links[links["null"] == "margin"].groupby("link")["reject_rate"].max()
redeal_max = links.loc[links["null"] == "redeal", "reject_rate"].max()
R.show_md(
    "Reading: the largest margin-preserving rejection rate is {lg:%} on the logit scale (its own model), {pb:%} on the probit "
    "scale and {id:%} on the probability scale; the re-deal test rejects in at most {rd:%} of these runs. The paper reports "
    "{pid} on the probability scale at $\\tau = 0.20$ and mean gaps $\\hat L(0.05)$ of {pl} (logit) and {pi} (probability) "
    "for the smaller quality gap, against our {ol} and {oi}. A rejection of the margin-preserving test certifies a departure "
    "from the logit model, not necessarily specialisation.",
    lg=mx["logit"], pb=mx["probit"], id=mx["identity"], rd=redeal_max, pid=R.published("000.TA4.reject_identity_020").text,
    pl=R.published("000.TA4.L005_logit_1").text, pi=R.published("000.TA4.L005_identity_1").text,
    ol=lw.loc[("logit", R.published("000.C4.gap_1").value), 0.05], oi=lw.loc[("identity", R.published("000.C4.gap_1").value), 0.05],
)

# %% [markdown]
# ## Planning a study: how many responses, how many prompts?
#
# Non-rejection means something only when the test had a fair chance. The power planner
# simulates a pool shape and an effect and reports the power at each response budget $k$ or
# prompt count $n$, and the smallest grid value that reaches a target power. The effect is the
# $\sigma = 0.5$ diffuse perturbation around the seed pool's prompt difficulties, the test the
# re-deal test at level $\alpha = 0.05$, and the target power is the dashed line of @fig-planner.
# The planner redraws the prompt difficulties from the pool's prompts in every replicate.

# %%
#| label: fig-planner
#| fig-cap: "Power of the re-deal test of L(0.10) against σ = 0.5 diffuse differences, as the response budget k grows (n = 240 prompts, left) and as the number of prompts n grows (k = 16, right); bars are Wilson 95% intervals, the dashed line the target power."
common = dict(sigma=0.5, base=base_q, n=N_PROMPTS, M=M, k=K, n_reps=N_PLAN_REPS, n_draws=N_STUDY_DRAWS, seed=rng, progress=False)
plan_k = studies.plan_power("diffuse", vary="k", grid=(8, 16, 32, 64, 128), **common)
plan_n = studies.plan_power("diffuse", vary="n", grid=(120, 240, 480, 960), **common)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
for ax, plan, var in ((axes[0], plan_k, "k"), (axes[1], plan_n, "n")):
    c = plan.curve
    ax.errorbar(c[var], c["reject_rate"], yerr=[c["reject_rate"] - c["ci_lo"], c["ci_hi"] - c["reject_rate"]], marker="o", capsize=3)
    ax.axhline(0.8, color="k", ls="--", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(c[var], [str(v) for v in c[var]])
    ax.minorticks_off()
    ax.set(xlabel="responses per member, k" if var == "k" else "prompts, n", title=f"power as {var} grows")
axes[0].set_ylabel("power at level 0.05")
plt.tight_layout()
plt.show()

# %% [markdown]
# The planner's point at $k = 16$, $n = 240$ and the diffuse row of @tbl-diffuse at
# $\sigma = 0.5$, $k = 16$ estimate the power of one setting twice, from independent replicates
# (the planner also redraws the prompt difficulties); the next cell reconciles them.

# %%
pk = plan_k.curve.set_index("k").loc[16]
tab16 = diff[(diff["k"] == 16) & (diff["sigma"] == 0.5) & (diff["null"] == "redeal")].iloc[0]
rec = studies.compare_rates(int(tab16["rejections"]), int(tab16["reps"]), int(pk["rejections"]), int(pk["reps"]))
need_txt = {v: ("none of the grid values" if p.required["redeal"] is None else str(p.required["redeal"])) for v, p in (("k", plan_k), ("n", plan_n))}
R.show_md(
    "Reading: the smallest response budget reaching 80% power is {k} (at $n = {n}$) and the smallest prompt count is {nn} (at "
    "$k = {kk}$). At $k = 16$ the table estimates power {a} (mean population gap {La}) and the planner {b} (mean gap {Lb}): "
    "Fisher's exact test of equality gives $p = {p:p}$, so the two {agree}.",
    k=need_txt["k"], n=N_PROMPTS, nn=need_txt["n"], kk=K, a=R.fmt_rate(rec["rate1"]), b=R.fmt_rate(rec["rate2"]), p=rec["p_equal"],
    La=tab16["population_L"], Lb=pk["population_L"],
    agree=R.md("agree within Monte Carlo error; pooled, power is {pool}",
               pool=R.fmt_rate(rec["pooled"], rec["pooled_lo"], rec["pooled_hi"])) if rec["p_equal"] > 0.05 else
    R.md("differ by more than Monte Carlo error: the table's power is conditional on this pool's {n} prompts, the planner's "
         "averages over prompt sets redrawn from them, so they estimate neighbouring but different settings", n=N_PROMPTS),
)

# %% [markdown]
# ## A pool of different models
#
# The seed pool's members are alike by construction. The MATH-500 tensors released with
# 2607.03436 are the opposite: eleven open models of different sizes and families, 30
# responses each. Here the re-deal null's assumption, equal rates on every prompt, is plainly
# false, and dealing the strong models' successes to weak ones can itself create large gaps.
# The margin-preserving null keeps each model's total and asks whether the pattern across
# prompts goes beyond the additive logit model (@tbl-seed-real).

# %%
#| label: tbl-seed-real
#| tbl-cap: "Oracle-gap tests on the MATH-500 pool of 11 models (2607.03436 tensors, k = 30): disagreement, plug-in gap, both null means with their upper-tail p-values, the re-deal lower-tail fraction, and the split-half gap."
real, why = datasets.load_optional("chen2026_math500")
if real is None:
    skipped.append(f"A pool of different models: the MATH-500 tensors of 2607.03436 ({why})")
else:
    gt_real = nulls.gap_table(real, TAUS_REAL, n_draws=N_DRAWS, n_splits=N_SPLITS, seed=rng)
    tr = gt_real.frame()
    display(R.table(tr, columns={"tau": "τ", "D": "D̂", "L": "L̂", "L_null": "L̂ re-deal", "p": "pᵣₑ", "p_lower": "lower-tail p",
                                 "L_margin": "L̂ margin-preserving", "p_m": "pₘₚ", "split_half": "split-half gap"}))

# %%
if real is not None:
    where = [R.position(r.L, r.L_band_lo, r.L_band_hi, above="above", below="below") for r in tr.itertuples()]
    groups = [f"{w} it at $\\tau \\in \\{{{', '.join(f'{t:g}' for t, x in zip(tr['tau'], where, strict=True) if x == w)}\\}}$"
              for w in ("below", "inside", "above") if w in where]
    R.show_md(
        "Reading: measured against the re-deal 90% band, the observed gap lies {groups}. Where the re-deal mean exceeds the "
        "observed gap, dealing the strong models' successes to weak ones manufactures gaps: the null then measures quality "
        "differences, not noise. The margin-preserving mean stays between {mlo} and {mhi}, and the largest "
        "$p_{{\\mathrm{{mp}}}}$ over the thresholds is {pmax:p}.",
        groups="; ".join(groups), mlo=tr["L_margin"].min(), mhi=tr["L_margin"].max(), pmax=tr["p_m"].max(),
    )

# %% [markdown]
# ## Many tests at once
#
# This chapter ran many tests. The Benjamini-Hochberg adjustment controls the false-discovery
# rate across the whole family of upper-tail tests: the seed pool's gap, disagreement,
# oracle-minus-mixture and rise tests under both nulls and its member-spread tests, and, when
# present, the same tests on the real pool. Tests whose null is a single point are left out
# (see the callout above), and so are the descriptive similarity diagnostics. @tbl-bh lists
# the discoveries, or the ten smallest adjusted p-values when there are none.

# %%
#| label: tbl-bh
#| tbl-cap: "Benjamini-Hochberg adjustment (false-discovery rate 0.05) across the chapter's tests, sorted by adjusted p, then raw p, then name."
family = {"seed pool": list(gt.tests.tests) + list(gt.sizes.rise) + list(spread.tests)}
if real is not None:
    family["MATH-500"] = list(gt_real.tests.tests) + list(gt_real.sizes.rise)
members = [(pool_name, t) for pool_name, tests in family.items() for t in tests if np.ptp(t.draws) > 0]
bh = nulls.benjamini_hochberg([t for _, t in members], alpha=0.05)
bh_df = bh.frame().assign(pool=[p for p, _ in members], name=[R.test_name(t.statistic, t.tau, t.null) for _, t in members])
bh_df = bh_df.sort_values(["p_adjusted", "p", "pool", "name"], kind="stable")
R.table(bh_df[bh_df["reject"]] if bh.n_rejected else bh_df.head(10),
        columns={"pool": "pool", "name": "test", "p": "p", "p_adjusted": "adjusted p", "reject": "discovery"})

# %%
seed_rej = int(bh_df.loc[bh_df["pool"] == "seed pool", "reject"].sum())
R.show_md("Reading: of {n} tests ({c} constant-null tests left out), {r} survive the adjustment; {s} of them concern the seed "
          "pool{zero}.", n=len(bh_df), c=sum(len(v) for v in family.values()) - len(members), r=bh.n_rejected, s=seed_rej,
          zero="" if POOL else ", whose population gap is zero")

# %% [markdown]
# ## Appendix: checks behind the tests {#sec-seed-checks}
#
# The conclusions above rest on facts about the two nulls that can be checked exactly or
# against a known truth; each becomes a row of a claims table. The sampler checks ask whether
# the samplers are distinguishable from exact sampling at the sample size used.

# %%
checks = R.Claims()
c_obs, S_CHECK = seed_pool.counts(), 8000 if SMALL else 40000  # S_CHECK: sampler draws for the distribution checks
rd = nulls.redeal(seed_pool, 500, seed=rng)
mix_same = all(np.array_equal(cov.coverage(t, TAUS, k=K).mixture, tab0.mixture) for t in rd[:50])
checks.add("re-deal keeps every prompt total and the mixture's raw coverage", "2609.32996 §3.2", f"{len(rd)} tables",
           (rd.sum(axis=2) == c_obs.sum(axis=1)).all() and mix_same)
mc = nulls.margin_chain(seed_pool, 200, seed=rng)
checks.add("margin chain keeps prompt and member totals", "2609.32996 App. C.1", f"{len(mc.tables)} tables",
           (mc.tables.sum(axis=2) == c_obs.sum(axis=1)).all() and (mc.tables.sum(axis=1) == c_obs.sum(axis=0)).all())
st = nulls.table_statistics(c_obs, TAUS, K)
checks.add("count-table L, D, oracle − mixture and Pass@1 gap equal the coverage module's", "2609.32996 §2, App. C.5",
           "4 statistics × 4 thresholds", np.allclose(st.L[0], tab0.L) and np.allclose(st.D[0], tab0.D)
           and np.allclose(st.oracle_minus_mixture[0], tab0.gap) and abs(st.pass1[0] - cov.pass1_oracle_gap(seed_pool).gap) < 1e-12,
           kind="sanity")

# %% [markdown]
# The two samplers against their exact laws: per-prompt re-deal counts of a small table
# against the multivariate hypergeometric probabilities (a chi-square test, since re-deals are
# independent), and whole tables from both chains against the enumerated conditional law of a
# $3 \times 3$ table with $k = 3$ (chain draws are dependent, so we compare their
# total-variation distance with that of independent exact draws of the same number).

# %%
from scipy.stats import chisquare, multivariate_hypergeom

small_c, small_k = np.array([[4, 1, 0], [2, 2, 1], [0, 0, 1]]), 4
rd_small = nulls.redeal(small_c, S_CHECK, k=small_k, seed=rng)
chi_p = []
for i, total in enumerate(small_c.sum(axis=1)):
    support = np.array([v for v in np.ndindex(*(small_k + 1,) * 3) if sum(v) == total])
    observed = (rd_small[:, i, None, :] == support[None]).all(axis=2).sum(axis=0)
    chi_p.append(chisquare(observed, multivariate_hypergeom.pmf(support, [small_k] * 3, total) * S_CHECK).pvalue)
checks.add("re-deal counts follow the multivariate hypergeometric law (χ² test per prompt, Bonferroni at 0.01)",
           "2609.32996 §3.2", f"smallest p = {min(chi_p):.3f} of {len(chi_p)}", min(chi_p) >= 0.01 / len(chi_p), kind="simulation")

# %%
law_c = np.array([[3, 1, 0], [1, 2, 1], [0, 1, 3]])
law = nulls.exact_margin_law(law_c, k=3)
for move in ("heatbath", "metropolis"):
    smp = nulls.margin_chain(law_c, S_CHECK, k=3, seed=rng, move=move, thin=4 * law_c.size)
    tv, ref = nulls.sampler_tv(smp.tables, law.tables, law.prob, seed=rng)
    checks.add(f"{move} chain samples the exact margin law ({len(law.prob)} tables)", "2609.32996 App. C.1",
               f"TV {tv:.4f} vs exact sampling {ref:.4f}", tv < 2 * ref + 0.005, kind="simulation")

# %% [markdown]
# Four Monte Carlo checks with known truth. In equal-rate pools the re-deal law is the exact
# conditional law of the counts given the prompt totals, so $\hat L$ minus its re-deal mean
# averages zero over replicate pools. Choosing the comparator on the scoring half can only
# favour it (App. C.1). The re-deal expectation of $L$ rises with every member added
# (Section 3.4). And with specialists on half the prompts the excess falls short of the known
# gap (App. C.3).

# %%
draw_test = lambda pool: nulls.null_tests(pool, [0.10], nulls=("redeal",), statistics=("L",), n_draws=200, seed=rng).tests[0]  # noqa: E731
diffs = np.array([(lambda t: t.observed - t.mean)(draw_test(simulate.exchangeable(N_PROMPTS, M, K, seed=rng).pool)) for _ in range(N_CHECK_REPS)])
se_d = diffs.std(ddof=1) / np.sqrt(diffs.size)
checks.add("equal-rate pools: the mean of L̂ − re-deal mean is zero (within 3 standard errors)", "2609.32996 §3.2",
           f"{diffs.mean():+.4f} ± {se_d:.4f}", abs(diffs.mean()) <= 3 * se_d, kind="simulation")
sh = nulls.split_half(seed_pool, TAUS, n_splits=50, seed=rng)
checks.add("a comparator chosen on the scoring half is never worse for it", "2609.32996 App. C.1",
           f"{sh.gap_selection.size} split × τ cases", (sh.gap_scoring <= sh.gap_selection + 1e-12).all())
curve = gt.sizes

# %%
checks.add("the re-deal expectation of L rises with pool size", "2609.32996 §3.4",
           f"τ = 0.10, sizes 2..{M}: " + ", ".join(f"{v:.3f}" for v in curve.null_L[1]), (np.diff(curve.null_L, axis=1) > 0).all(),
           kind="simulation")
sims = [simulate.specialists(N_PROMPTS, M, K, f=0.5, s=0.2, seed=rng) for _ in range(max(N_CHECK_REPS // 5, 8))]
exc = np.array([draw_test(s.pool).excess for s in sims])
popL = float(np.mean([simulate.population_L(s.p, [0.10])[0] for s in sims]))
se_e = exc.std(ddof=1) / np.sqrt(exc.size)
checks.add("the excess understates a known population gap (f = 0.5, s = 0.2)", "2609.32996 App. C.3",
           f"excess {exc.mean():.3f} ± {se_e:.3f} vs L {popL:.3f}", exc.mean() + 3 * se_e < popL, kind="simulation")

# %%
#| label: tbl-seed-checks
#| tbl-cap: "Checks behind the seed-pool tests of 2609.32996: what the nulls preserve, the exactness of both samplers, agreement of the statistics with their definitions, and four Monte Carlo facts with known truth."
checks.table()

# %%
checks.stop_if_failed()
R.show_md("All {n} checks hold on this run (seed {seed}). Over {r} equal-rate pools $\\hat L$ exceeds its re-deal mean by {d:+} "
          "on average (standard error {s}); with specialists on half the prompts the excess averages {e} against a population "
          "gap of {L}.", n=len(checks), seed=SEED, r=diffs.size, d=diffs.mean(), s=se_d, e=exc.mean(), L=popL)

# %% [markdown]
# ## Takeaways

# %%
R.skipped_callout(skipped)
R.show_md(
    "- {lead} shows a plug-in oracle gap of {L} at $\\tau = 0.10$; the re-deal null's mean gap is {m}, and split-half scoring "
    "leaves {sh:+}.\n"
    "- Both tests hold their level on null data (rejection rates {flo:%} to {fhi:%} at nominal 5%, the paper {plo}-{phi}). "
    "They detect two planted transfers per prompt ({two}), but diffuse gaps of about {dl} only in {p16} of replicates at "
    "$k = 16$ ({p64} at $k = 64$): non-rejection at small budgets is weak evidence.\n"
    "- The excess recovered {r16:%} of known gaps of at least {g} at $k = 16$ in total (the paper: {q1}-{q2}); report it with "
    "its bootstrap interval, never as the gap itself.\n"
    "- The margin-preserving test reads quality differences through a logit model; with effects constant on the probability "
    "scale it rejected in up to {idm:%} of replicates without any specialisation.\n"
    "{real}- Whole chapter: {secs:.0f} s.",
    lead=f"Your pool ({POOL})" if POOL else "A pool without any specialisation", L=row["L"], m=row["L_null"], sh=row["split_half"],
    flo=fp["reject_rate"].min(), fhi=fp["reject_rate"].max(), plo=R.published("000.C2.fpr_lo").text,
    phi=R.published("000.C2.fpr_hi").text, two=power_of(plant, "redeal", transfers=2), dl=mid.loc[16, "population_L"],
    p16=power_of(diff, "redeal", k=16, sigma=0.5), p64=power_of(diff, "redeal", k=64, sigma=0.5), r16=pooled.loc[16],
    g=R.published("000.C3.min_gap").text, q1=R.published("000.C3.share_k16_lo").text, q2=R.published("000.C3.share_k16_hi").text,
    idm=mx["identity"], secs=time.perf_counter() - t_start,
    real="" if real is None else R.md("- On MATH-500 the re-deal null is the wrong reference for different models: its mean gap "
                                      "is {a} the observed one at $\\tau = {t:g}$, while the margin-preserving test rejects at "
                                      "level 0.05 at {nr} of {nt} thresholds.\n", a=R.compare(tr["L_null"].iloc[-1],
                                      tr["L"].iloc[-1], more="above", less="below"), t=tr["tau"].iloc[-1],
                                      nr=int((tr["p_m"] <= 0.05).sum()), nt=len(tr)),
)

# %% [markdown]
# ## Exercises
#
# 1. **A smaller pool.** Predict whether the re-deal null mean of $L(0.10)$ is larger for three
#    members or for all of them, then read it off the pool-size curve (`gt.sizes.null_L`) or
#    rerun with `-p M 3`.
# 2. **Pen and paper: a constant statistic.** For which thresholds $\tau$ is the
#    oracle-minus-mixture statistic constant under the re-deal null when $k = 16$ and $M = 5$?
# 3. **Budget against effect.** Before looking at @tbl-diffuse again, predict the power of the
#    re-deal test against $\sigma = 1$ at $k = 16$, and against $\sigma = 0.25$ at $k = 64$.
#    Then rerun the chapter with `-p N_POWER_REPS 100` and see how the intervals shrink.

# %%
sizes = list(gt.sizes.sizes)
R.solution("1. The re-deal mean of $L(0.10)$ is {a} with {m3} members and {b} with {mM}: every added member gives the oracle one "
           "more noisy estimate to pick from, so the null gap {w} with pool size.", a=gt.sizes.null_L[1, sizes.index(min(3, M))],
           m3=min(3, M), b=gt.sizes.null_L[1, -1], mM=M, w=R.compare(gt.sizes.null_L[1, -1], gt.sizes.null_L[1, sizes.index(min(3, M))],
                                                                     more="grows", less="shrinks", same="stays"))
t_const = [t for t in np.round(np.linspace(0.01, 0.5, 50), 2) if cov.need(t, K) == 1]
R.solution("2. The mixture's count rule always depends on the prompt total alone; the oracle's does exactly when one success "
           "suffices, $\\lceil \\tau k \\rceil = 1$, i.e. $\\tau \\le 1/k = {inv}$. On a grid of step 0.01 that is "
           "$\\tau \\in [{lo:g}, {hi:g}]$; of this chapter's thresholds that is {q}.", inv=1 / K, lo=t_const[0], hi=t_const[-1],
           q=", ".join(f"$\\tau = {t:g}$" for t in TAUS if cov.need(t, K) == 1) or "none")
R.solution("3. This run's estimates: $\\sigma = 1$ at $k = 16$: {a}; $\\sigma = 0.25$ at $k = 64$: {b} (population gap {L}). A "
           "large diffuse gap is found at the paper's budget; a small one is hard to find even with four times the responses.",
           a=power_of(diff, "redeal", k=16, sigma=1.0), b=power_of(diff, "redeal", k=64, sigma=0.25),
           L=float(diff[(diff["k"] == 64) & (diff["sigma"] == 0.25)]["population_L"].iloc[0]))
