"""stats.noise completed (paper 001): the decomposition with intervals, split-draw O_repro, Frechet
bounds, strata, sweeps, best-of-K, O_agg, baselines; checked by exact enumeration, simulation
with known p_im, identities, and the released k = 30 tensors (skipped when absent)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import expit

from oraclegap import datasets
from oraclegap.pool import Pool
from oraclegap.stats import bootstrap, noise
from oraclegap.stats.noise import best_of_k, inputs, split_draw

verdict_arrays = arrays(bool, st.tuples(st.integers(1, 12), st.integers(1, 5), st.integers(2, 6)))


def _enumerate(p, k):
    """All outcomes of M members x k independent draws with their probabilities: (v [N, 1, M, k], w [N])."""
    p = np.asarray(p, float)
    M = p.size
    pats = np.array(list(itertools.product([0, 1], repeat=M * k)), dtype=bool).reshape(-1, M, k)
    w = np.prod(np.where(pats, p[None, :, None], 1 - p[None, :, None]), axis=(1, 2))
    return pats[:, None], w


# ---------------------------------------------------------------------------- split-draw O_repro
def test_split_draw_exact_expectation_by_enumeration():
    # M = 2 members with p = (0.3, 0.6), k = 2: selection on one draw, score on the other.
    # P(choose 1) = 0.3 * 0.4, P(choose 2) = 0.7 * 0.6, ties (0.46) split evenly:
    # E = 0.12 * 0.3 + 0.42 * 0.6 + 0.46 * 0.45 = 0.495 < max p = 0.6.
    p = [0.3, 0.6]
    pats, w = _enumerate(p, 2)
    loo = np.array([noise.split_draw_repro(v, method="loo")[0] for v in pats])
    half = np.array([noise.split_draw_repro(v, method="half", n_splits=4, seed=0)[0] for v in pats])
    plug = pats.mean(axis=3).max(axis=2)[:, 0]
    assert w.sum() == pytest.approx(1.0)
    assert w @ loo == pytest.approx(0.495, abs=1e-12)
    assert w @ half == pytest.approx(0.495, abs=1e-12)  # at k = 2 both halves hold one draw
    assert w @ plug > max(p)  # the plug-in max is biased upward


@pytest.mark.parametrize("p", [[0.2, 0.5, 0.55], [0.9, 0.9], [0.1, 0.7, 0.4]])
def test_split_draw_is_biased_down_and_plugin_up_exactly(p):
    pats, w = _enumerate(p, 3)
    loo = np.array([noise.split_draw_repro(v, method="loo")[0] for v in pats])
    plug = pats.mean(axis=3).max(axis=2)[:, 0]
    assert w @ loo <= max(p) + 1e-12 <= w @ plug + 2e-12


def test_split_draw_unbiased_for_exchangeable_members():
    # all members share p_i: whichever is selected scores p_i, so E[split] = mean p exactly
    rng = np.random.default_rng(3)
    q = rng.beta(0.5, 0.5, 4000)
    v = rng.random((4000, 4, 6)) < q[:, None, None]
    se = 0.5 / np.sqrt(4000 * 6)
    assert abs(noise.split_draw_repro(v, method="loo").mean() - q.mean()) < 5 * se
    assert abs(noise.split_draw_repro(v, method="half", n_splits=20, seed=1).mean() - q.mean()) < 5 * se
    assert v.mean(axis=2).max(axis=1).mean() > q.mean() + 0.05


# ---------------------------------------------------------------------------- point identities
@settings(max_examples=40, deadline=None)
@given(verdict_arrays)
def test_decomposition_identities_and_frechet_in_sample(v):
    d = noise.decomposition(v, n_boot=20, n_splits=4, seed=0)
    val = d.value
    assert val("delta") == pytest.approx(val("o_exp") - val("o_repro"))
    assert val("gap") == pytest.approx(val("g_rec") + val("delta"))
    if val("gap") > 0:
        assert val("noise_share") == pytest.approx(val("delta") / val("gap"))
    # in-sample Frechet: mean_j max_m R <= ... holds for the seed-aligned estimate draw by draw
    sa = noise.decomposition(v, form="seed-aligned", n_boot=20, n_splits=4)
    assert val("frechet_lower") - 1e-12 <= sa.value("o_exp") <= val("frechet_upper") + 1e-12
    assert val("o_repro_split_loo") <= val("o_repro") + 1e-12  # a chosen member's score never beats the max
    for e in d.estimates.values():
        assert np.isnan(e.lo) or np.isnan(e.hi) or e.lo <= e.hi + 1e-12  # NaN: a share with G <= 0
    pt = noise.decompose(v, form="independent")
    assert val("o_exp") == pytest.approx(pt.O_exp) and val("o_repro") == pytest.approx(pt.O_repro)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 20), st.integers(1, 5)), elements=st.floats(0, 1)))
def test_frechet_truth_orders(p):
    f = noise.frechet_truth(p)
    assert f["lower"] - 1e-12 <= f["independent"] <= f["upper"] + 1e-12


def test_independence_form_is_fkg_envelope_under_positive_dependence():
    # comonotone draws: R_mj = 1[U_j < p_m] with one uniform per draw shared by all members,
    # so the union succeeds iff U_j < max_m p_m: O_exp = O_repro, below the independence form
    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 0.9, (300, 4))
    u = rng.random((300, 1, 400))
    v = u < p[:, :, None]
    d = noise.decomposition(Pool.from_array(v, alignment="seed-aligned"), n_boot=50, n_splits=4)
    assert d.value("o_exp") == pytest.approx(d.value("o_repro"), abs=1e-12)
    assert d.value("o_exp_independent") > d.value("o_exp") + 0.1


def _logistic_pool(n, M, rng):
    """Prompt difficulty ~ N(0, 2.5), member abilities spread on the logit, prompt-specific noise."""
    ability = np.linspace(-1.0, 1.5, M)
    d = rng.normal(0, 2.5, n)[:, None]
    return expit(ability[None] + 1.5 - d + 1.5 * rng.normal(size=(n, M)))


@pytest.mark.slow
def test_intervals_cover_population_values():
    """Replicates of a pool with known p_im (n = 300 prompts from a super-population, M = 6,
    k = 30, independent draws): each 95% interval must hold the population value in >= 93%.

    500 replicates rather than 200: at exactly nominal coverage 200 replicates fall below 93%
    with probability about 0.1 per quantity (binomial SE 0.015); with 500 (SE 0.010), 0.02."""
    n, M, k, reps = 300, 6, 30, 500
    P = _logistic_pool(400_000, M, np.random.default_rng(99))  # the super-population (Monte Carlo)
    truth = noise.decompose_truth(P)
    pop = {
        "o_exp": truth.O_exp,
        "o_repro": truth.O_repro,
        "best_single": truth.router,
        "delta": truth.delta,
        "gap": truth.G,
        "g_rec": truth.G_rec,
        "noise_share": truth.noise_share,
    }
    rng = np.random.default_rng(2026)
    hits = dict.fromkeys(pop, 0)
    plain = dict.fromkeys(pop, 0)
    for rep in range(reps):
        p = _logistic_pool(n, M, rng)
        v = rng.random((n, M, k)) < p[:, :, None]
        d = noise.decomposition(Pool.from_array(v, alignment="seed-aligned"), n_boot=1000, n_splits=8, seed=rep)
        for q in pop:
            hits[q] += d[q].contains(pop[q])
            plain[q] += d[q].lo_prompt <= pop[q] <= d[q].hi_prompt
    rates = {q: hits[q] / reps for q in pop}
    assert all(r >= 0.93 for r in rates.values()), rates
    # the plain prompt bootstrap around the plug-in ignores the within-prompt winner's curse
    assert plain["delta"] / reps < rates["delta"]


# ---------------------------------------------------------------------------- strata and sweeps
def test_strata_partition_the_decomposition():
    rng = np.random.default_rng(4)
    p = _logistic_pool(400, 5, rng)
    pool = Pool.from_array(rng.random((400, 5, 10)) < p[:, :, None], alignment="seed-aligned")
    d = noise.decomposition(pool, n_boot=50, n_splits=4)
    for support in ("rate", "draw"):
        s = noise.support_strata(pool, support=support, thin=2)
        levels = s[s["stratum"].str.fullmatch(r"\d+")]
        assert levels["n"].sum() == 400
        assert (levels["frac"] * levels["delta"]).sum() == pytest.approx(d.value("delta"))
        thin, dense = s.iloc[-3], s.iloc[-2]
        assert thin["n"] + dense["n"] == 400
        assert s.iloc[-1]["noise_share"] == pytest.approx(d.value("noise_share"))
    r = pool.rates()
    s = noise.support_strata(pool, support="rate")
    assert set(s["stratum"].iloc[:-3].astype(int)) == set((r > 0).sum(axis=1).tolist())
    with pytest.raises(ValueError, match="support"):
        noise.support_strata(pool, support="both")


def test_k_sweep_first_and_random():
    rng = np.random.default_rng(5)
    v = rng.random((200, 4, 12)) < _logistic_pool(200, 4, rng)[:, :, None]
    pool = Pool.from_array(v, alignment="seed-aligned")
    first = noise.k_sweep(pool, ks=[1, 3, 12], subsets="first")
    assert first.iloc[0]["delta"] == 0.0  # one draw: plug-in O_repro is the single-draw oracle
    sub = noise.decompose(Pool.from_array(v[:, :, :3], alignment="seed-aligned"))
    assert first.iloc[1]["o_repro"] == pytest.approx(sub.O_repro) and first.iloc[1]["o_exp"] == pytest.approx(sub.O_exp)
    full = noise.decompose(pool)
    assert first.iloc[2]["noise_share"] == pytest.approx(full.noise_share)
    rnd = noise.k_sweep(pool, ks=[2, 6, 12], n_subsets=30, seed=0)
    assert rnd["o_repro"].is_monotonic_decreasing  # the winner's curse fades as k' grows
    assert (rnd["o_repro_split_loo"] <= rnd["o_repro"] + 1e-12).all()
    choice = np.zeros(200, dtype=int)
    kc = noise.k_sweep(pool, ks=[3], subsets="first", baseline=choice)
    assert kc.iloc[0]["baseline"] == pytest.approx(v[:, 0, :3].mean())


def test_pool_size_sweep():
    rng = np.random.default_rng(6)
    v = rng.random((150, 5, 8)) < _logistic_pool(150, 5, rng)[:, :, None]
    out = noise.pool_size_sweep(v, sizes=[2, 5], n_subsets=100)
    assert out.iloc[0]["n_subsets"] == 10  # all C(5, 2) subsets
    full = noise.decompose(v, form="independent")
    assert out.iloc[1]["noise_share"] == pytest.approx(full.noise_share)
    assert out.iloc[1]["noise_share_mean"] == pytest.approx(full.noise_share)


# ---------------------------------------------------------------------------- best-of-K
def test_pass_at_table_by_hand():
    # h = 4 draws, K = 2: c = 1 -> 1 - C(3, 2)/C(4, 2) = 0.5; c = 3 -> 1
    np.testing.assert_allclose(best_of_k._pass_at(4, 2), [0.0, 0.5, 5 / 6, 1.0, 1.0])


def test_best_of_k_check_on_independent_pool():
    rng = np.random.default_rng(7)
    p = rng.beta(0.6, 0.6, (500, 4))
    v = rng.random((500, 4, 20)) < p[:, :, None]
    b = noise.best_of_k_check(v, n_boot=200, n_splits=20)
    assert b.K == 4
    assert b.best_of_all_k_insample == pytest.approx((v.sum(axis=2).max(axis=1) > 0).mean())
    # the split estimate is biased down from the population best-of-K and still beats O_exp^indep
    assert b.best_of_k_split.value <= noise.best_of_k_truth(p, 4) + 0.01
    assert b.passes and b.difference.lo > 0
    assert b.best_of_k_split.value <= b.best_of_k_insample + 1e-12


# ---------------------------------------------------------------------------- votes and O_agg
@pytest.mark.parametrize("shape", [(40, 3, 2), (120, 5, 16), (90, 4, 7), (60, 6, 64), (30, 1, 5)])
def test_compiled_split_selection_equals_the_array_code(shape, monkeypatch):
    """The compiled kernels give the split-draw estimates and the best-of-K check bit for bit as
    the array code does (forced here by allowing no draws to the one-word path), with ties
    on every prompt of the exchangeable 0/1 pools and odd k (unequal halves)."""
    rng = np.random.default_rng(sum(shape))
    n, M, k = shape
    v = rng.random(shape) < rng.beta(0.4, 0.6, (n, 1, 1))
    v[: n // 4] = v[: n // 4, :1]  # identical members: every member tied on a quarter of the prompts
    fast = (noise.split_draw_repro(v, method="half", n_splits=70, seed=3), noise.split_draw_repro(v, method="loo"),
            noise.best_of_k_check(v, n_boot=200, n_splits=70, seed=4) if M > 1 else None)
    monkeypatch.setattr(split_draw, "_BITS", 0)
    slow = (noise.split_draw_repro(v, method="half", n_splits=70, seed=3), noise.split_draw_repro(v, method="loo"),
            noise.best_of_k_check(v, n_boot=200, n_splits=70, seed=4) if M > 1 else None)
    vf = v.astype(np.float64)
    # the array code
    loo = inputs._tie_mean(vf.sum(axis=2)[:, :, None] - vf, vf, axis=1).mean(axis=1)
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], loo)
    assert repr(fast[2]) == repr(slow[2]) and (fast[2] is None or fast[2].frame().equals(slow[2].frame()))


def test_plurality_vote_by_hand():
    codes = np.array([[1, 1, 2], [1, 2, 3], [4, 4, 5], [7, 7, 7]])
    correct = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1], [1, 1, 1]])
    np.testing.assert_allclose(noise.plurality_vote(codes, correct), [1.0, 1 / 3, 0.0, 1.0])
    valid = np.array([[True, True, True], [True, False, False], [False, False, True], [False, False, False]])
    np.testing.assert_allclose(noise.plurality_vote(codes, correct, valid), [1.0, 1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="same shape"):
        noise.plurality_vote(codes, correct[:, :2])


def _answer_pool(n=120, M=5, k=6, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, (n, M))
    v = rng.random((n, M, k)) < p[:, :, None]
    wrong = rng.integers(0, 3, (n, M, k))
    answers = np.where(v, "right", np.char.add("wrong", wrong.astype(str)))
    return Pool.from_array(v, answers=answers, alignment="seed-aligned")


def test_aggregation_ceiling_split_identity():
    pool = _answer_pool()
    a = noise.aggregation_ceiling(pool)
    assert a.delta_know + a.delta_guess == pytest.approx(a.delta)
    assert 0 <= a.delta_know <= a.delta + 1e-12
    codes, valid = noise.answer_codes(pool.answers)
    j = 3
    vote_j = noise.plurality_vote(codes[:, :, j], pool.verdicts[:, :, j], valid[:, :, j])
    assert a.o_agg == pytest.approx(np.mean([noise.plurality_vote(codes[:, :, t], pool.verdicts[:, :, t], valid[:, :, t]).mean()
                                             for t in range(pool.k)]))
    assert 0 <= vote_j.mean() <= 1
    with pytest.raises(ValueError, match="answers"):
        noise.aggregation_ceiling(Pool.from_array(pool.verdicts))


# ---------------------------------------------------------------------------- baselines
def test_baseline_dependence_and_kinds():
    rng = np.random.default_rng(8)
    v = rng.random((300, 4, 10)) < _logistic_pool(300, 4, rng)[:, :, None]
    r = v.mean(axis=2)
    choices = rng.integers(0, 4, 300)
    scores = r[np.arange(300), choices]
    tab = noise.baseline_table(v, {"best": None, "random choices": choices, "same, as scores": scores}, n_boot=200)
    assert tab["delta"].nunique() == 1  # the floor does not depend on the router
    assert tab.iloc[1]["noise_share"] == pytest.approx(tab.iloc[2]["noise_share"])
    assert tab.iloc[1]["gap"] > tab.iloc[0]["gap"] and tab.iloc[1]["noise_share"] < tab.iloc[0]["noise_share"]
    d = noise.decomposition(v, baseline=choices, n_boot=200)
    assert d.value("noise_share") == pytest.approx(d.value("delta") / (d.value("o_exp") - scores.mean()))


@pytest.mark.parametrize(
    "baseline, match",
    [
        (np.zeros(5, dtype=int), "one entry per prompt"),
        (np.full(30, 4), r"policy positions in \[0, 4\)"),
        (np.full(30, 1.5), r"\[0, 1\]"),
        (np.full(30, True), "booleans"),
        ("worst", "baseline must be"),
    ],
)
def test_baseline_errors(baseline, match):
    v = np.random.default_rng(0).random((30, 4, 3)) < 0.5
    with pytest.raises((ValueError, TypeError), match=match):
        noise.decomposition(v, baseline=baseline, n_boot=10)


def test_decomposition_errors():
    v = np.random.default_rng(0).random((30, 4, 3)) < 0.5
    with pytest.raises(ValueError, match="k >= 2"):
        noise.decomposition(v[:, :, :1])
    with pytest.raises(ValueError, match="split"):
        noise.decomposition(v, split="third")
    with pytest.raises(ValueError, match="1 - level"):
        noise.decomposition(v, level=1.5)
    with pytest.raises(ValueError, match="needs seed-aligned"):
        noise.decomposition(Pool.from_array(v, alignment="independent"), form="seed-aligned")
    with pytest.raises(ValueError, match="method"):
        noise.split_draw_repro(v, method="thirds")


def test_decomposition_is_reproducible():
    v = np.random.default_rng(1).random((50, 3, 4)) < 0.4
    a = noise.decomposition(v, n_boot=100, seed=3).frame()
    b = noise.decomposition(v, n_boot=100, seed=3).frame()
    assert a.equals(b)


# ---------------------------------------------------------------------------- the released k = 30 tensors
CHEN = "chen2026_routing_oracle_k30"
HEADLINE = {  # 001's headline numbers (paper README, SOURCE.md): best single, O_repro, O_exp, share
    "math500": (0.773, 0.837, 0.873, 0.361),
    "humanevalplus": (None, None, None, 0.123),
    "gpqa": (None, None, None, 0.131),
}


@pytest.mark.external
@pytest.mark.parametrize("bench", sorted(HEADLINE))
def test_released_headline_numbers(external_dir, bench):
    if not (external_dir / CHEN / bench / "correctness_slim.npz").exists():
        pytest.skip(f"{external_dir / CHEN / bench} is absent")
    pool = datasets.load(f"chen2026-{bench}")
    d = noise.decomposition(pool, n_boot=500)
    best, repro, oexp, share = HEADLINE[bench]
    for q, want in (("best_single", best), ("o_repro", repro), ("o_exp", oexp), ("noise_share", share)):
        if want is not None:
            assert abs(d.value(q) - want) <= 0.002, (q, d.value(q), want)
    assert d["noise_share"].contains(d.value("noise_share"))
    assert d.value("o_repro_split_loo") < d.value("o_repro")  # the plug-in sits at the top of the bracket


@pytest.mark.external
def test_released_tables_reproduced(external_dir):
    root = external_dir / CHEN / "math500"
    if not (root / "robustness.json").exists():
        pytest.skip(f"{root} is absent")
    pool = datasets.load("chen2026-math500")
    rob = json.loads((root / "robustness.json").read_text())
    dec = json.loads((root / "decomposition.json").read_text())
    sweep = noise.k_sweep(pool, ks=[row["k"] for row in rob["k_sweep"]], subsets="first").set_index("k")
    for row in rob["k_sweep"]:
        got = sweep.loc[row["k"]]
        for ours, theirs in (("baseline", "router_acc"), ("o_exp", "O_exp"), ("o_repro", "O_repro"), ("noise_share", "gap_share")):
            assert got[ours] == pytest.approx(row[theirs], abs=1e-9)
    strata = noise.support_strata(pool, support="draw", thin=3).set_index("stratum")
    for ours, theirs in (("thin (<= 3)", "thin(<=3)"), ("dense (> 3)", "dense(>3)")):
        want = dec["stratified"][theirs]
        assert strata.loc[ours, "frac"] == pytest.approx(want["frac"])
        assert strata.loc[ours, "delta"] == pytest.approx(want["noise"])
        assert strata.loc[ours, "noise_share"] == pytest.approx(want["noise_share"])
    b = noise.best_of_k_check(pool, n_boot=200, n_splits=20)
    assert b.best_of_all_k_insample == pytest.approx(dec["falsifiable_best_of_K"]["best_of_k_committed"])
    assert b.o_exp_independent.value == pytest.approx(dec["falsifiable_best_of_K"]["O_exp_perp_mean"])
    assert b.passes


@pytest.mark.external
def test_humanevalplus_released_router_baseline(external_dir):
    f = external_dir / CHEN / "humanevalplus" / "correctness_slim.npz"
    if not f.exists():
        pytest.skip(f"{f} is absent")
    with np.load(f, allow_pickle=False) as z:
        q = np.asarray(z["q_router"], dtype=float)
    pool = datasets.load("chen2026-humanevalplus")
    tab = noise.baseline_table(pool, {"best": None, "tfidf-knn": q}, n_boot=300).set_index("name")
    assert tab.loc["best", "delta"] == tab.loc["tfidf-knn", "delta"]
    assert tab.loc["tfidf-knn", "score"] == pytest.approx(q.mean())
    assert tab.loc["tfidf-knn", "noise_share"] < tab.loc["best", "noise_share"]


def test_prompt_blocks_of_the_decomposition_and_best_of_k_change_no_number(monkeypatch):
    from oraclegap.stats import simulate

    pool = simulate.exchangeable(300, 4, 6, seed=12).pool
    whole_d = noise.decomposition(pool, n_boot=50, seed=3).to_dict()
    whole_b = noise.best_of_k_check(pool, n_boot=50, seed=4, n_splits=70)
    # 7 prompts per block of split-draw work and 5 resamples per bootstrap block: many blocks,
    # ragged last ones; the same resamples and exact sums, so every number is the same bit
    monkeypatch.setattr(split_draw, "_CELLS", 4 * 64 * 7)
    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", 300 * 5)
    blocked_d = noise.decomposition(pool, n_boot=50, seed=3).to_dict()
    assert json.dumps(blocked_d) == json.dumps(whole_d)
    blocked_b = noise.best_of_k_check(pool, n_boot=50, seed=4, n_splits=70)
    assert repr(blocked_b) == repr(whole_b) and blocked_b.frame().equals(whole_b.frame())
