"""The audit's large-n Monte Carlo design and the compiled within-cell permutations of
paper 001's assumption checks: what changes above LARGE_N prompts, that nothing changes up to it,
and that the permutations are uniform, independent and summarised exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oraclegap import audit
from oraclegap.audit import compute, settings
from oraclegap.stats import noise, nulls, simulate, studies
from oraclegap.stats.noise import _permutations
from oraclegap.stats.noise.stopping import PValueStop


# ---------------------------------------------------------------------------- permutation statistics
def _verdicts(n, M, k, seed):
    rng = np.random.default_rng(seed)
    v = rng.random((n, M, k)) < rng.random((n, M, 1)) ** 2
    v[: n // 4] = True  # cells with every draw right, and (below) cells with none
    v[n // 4 : n // 3] = False
    return v


def _pieces(v):
    """(counts c, Poisson-binomial law pb, dispersion denominator den) of verdicts v."""
    k = v.shape[-1]
    c = v.sum(axis=-1).astype(np.int64)
    q = (c / k)[None]
    pb = _permutations._poisson_binomial(q[0]).mean(axis=0)
    return c, pb, k * (q * (1 - q)).sum(axis=(-2, -1))


@pytest.mark.parametrize("n,M,k,seed", [(40, 3, 4, 0), (257, 5, 16, 1), (9, 2, 2, 2), (120, 4, 7, 3),
                                        (600, 10, 16, 4), (30, 3, 70, 5)])
def test_permuted_stats_are_the_statistics_of_the_permuted_verdicts(n, M, k, seed):
    v = _verdicts(n, M, k, seed)
    c, pb, den = _pieces(v)
    key = np.uint64(2**64 - 1 - seed)
    P = _permutations._permuted_verdicts(c, k, key, 0, 4)
    assert P.shape == (4, n, M, k)
    np.testing.assert_array_equal(P.sum(axis=-1), np.broadcast_to(c, (4, n, M)))  # counts kept
    ref = _permutations._draw_stats(P)
    got = _permutations._permuted_stats(c, k, key, 0, 4, pb, den)
    assert got.shape == ref.shape == (4, 3)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)
    # permutation b is the same in any block of permutations and on any chunking of the prompts
    parts = np.concatenate([_permutations._permuted_stats(c, k, key, 0, 1, pb, den),
                            _permutations._permuted_stats(c, k, key, 1, 3, pb, den)])
    np.testing.assert_array_equal(parts, got)
    T, U, H = _permutations._permuted_counts(c, k, key, 0, 4, 7)
    np.testing.assert_array_equal(T, P.sum(axis=1))
    np.testing.assert_array_equal(H.sum(axis=-1), np.full(4, n * k))
    assert (U == n * k - H[:, 0]).all()


def test_permuted_counts_do_not_depend_on_the_thread_count():
    import numba

    c, _, _ = _pieces(_verdicts(500, 6, 16, 7))
    key = np.uint64(99)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _permutations._permuted_counts(c, 16, key, 3, 5, 11)
    finally:
        numba.set_num_threads(before)
    for a, b in zip(one, _permutations._permuted_counts(c, 16, key, 3, 5, 11), strict=True):
        np.testing.assert_array_equal(a, b)


def test_within_cell_permutations_are_uniform_and_independent():
    """Every arrangement of c successes among k positions is equally likely (exact enumeration
    of the C(5, 2) = 10 arrangements, a chi-square test), and two cells of one prompt, and one
    cell in consecutive permutations, are independent (chi-square on the 10 x 10 table)."""
    from itertools import combinations

    from scipy.stats import chi2_contingency, chisquare

    k, n, B = 5, 4000, 10
    c = np.full((n, 2), 2, np.int64)
    P = _permutations._permuted_verdicts(c, k, np.uint64(12345), 0, B)
    code = {sum(1 << j for j in s): r for r, s in enumerate(combinations(range(k), 2))}
    words = (P * (1 << np.arange(k))).sum(axis=-1)  # [B, n, 2]
    idx = np.vectorize(code.__getitem__)(words)  # every word is one of the 10 arrangements
    assert chisquare(np.bincount(idx.ravel(), minlength=10)).pvalue > 1e-3
    for a, b in ((idx[:, :, 0], idx[:, :, 1]), (idx[:-1, :, 0], idx[1:, :, 0])):
        table = np.zeros((10, 10))
        np.add.at(table, (a.ravel(), b.ravel()), 1)
        assert chi2_contingency(table).pvalue > 1e-3
    # a large k (beyond one 64-bit word): each position is a success with probability c / k
    c70 = np.full((3000, 1), 21, np.int64)
    share = _permutations._permuted_verdicts(c70, 70, np.uint64(5), 0, 2).mean(axis=(0, 1, 2))
    assert np.abs(share - 0.3).max() < 4 * math.sqrt(0.3 * 0.7 / 6000)


def test_bounded_draws_are_exactly_uniform():
    """_int_below_exact's multiply-shift with rejection: each of r values equally likely
    (chi-square), also for an r whose rejection zone is large relative to 2^32 / r (3 * 2^30)."""
    from numba import njit
    from scipy.stats import chisquare

    from oraclegap.stats._streams import _int_below_exact

    @njit
    def draws(r, size):
        out = np.empty(size, np.int64)
        state = np.uint64(7)
        for t in range(size):
            state, out[t] = _int_below_exact(state, r)
        return out

    for r in (2, 3, 7, 16, 63):
        x = draws(r, 200_000)
        assert x.min() >= 0 and x.max() < r
        assert chisquare(np.bincount(x, minlength=r)).pvalue > 1e-3
    big = draws(3 * 2**30, 300_000) // 2**30  # thirds of the range
    assert chisquare(np.bincount(big, minlength=3)).pvalue > 1e-3


@pytest.mark.parametrize("n,M,k", [(150, 5, 16), (40, 3, 6)])
def test_permutation_checks_use_the_keyed_permutations(n, M, k):
    """The checks' null law is the statistics of the permutations keyed by the first integer the
    seed's generator draws: p-values and references recomputed from the verdicts themselves."""
    from oraclegap.pool import Pool

    rng = np.random.default_rng(n)
    v = rng.random((n, M, k)) < rng.random((n, 1, 1))
    disp, coup, tv = noise.permutation_checks(Pool.from_array(v, alignment="seed-aligned"), n_perm=99, seed=5)
    key = np.random.default_rng(5).integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True)
    c, _, _ = _pieces(v)
    ref = _permutations._draw_stats(_permutations._permuted_verdicts(c, k, key, 0, 99))
    assert disp.p_value == pytest.approx(float((1 + np.sum(ref[:, 0] >= _obs(v)[0] - 1e-12)) / 100))
    mu = ref[:, 1].mean()
    two = (1 + np.sum(np.abs(ref[:, 1] - mu) >= abs(_obs(v)[1] - mu) - 1e-12)) / 100
    assert coup.reference == pytest.approx(float(mu), rel=1e-12)
    assert coup.p_value == pytest.approx(float(two))
    assert tv.reference == pytest.approx(float(ref[:, 2].mean()), rel=1e-12)


def _obs(v):
    return _permutations._draw_stats(v)


# ---------------------------------------------------------------------------- settings
def test_auto_design_is_standard_up_to_large_n():
    std = audit.audit_settings(small=True)
    assert std.design == "standard"
    for n in (2, 300, settings.LARGE_N):
        assert audit.audit_settings(small=True, n_prompts=n) == std
    assert audit.audit_settings(small=True, design="standard", n_prompts=10**6) == std
    big = audit.audit_settings(small=True, n_prompts=settings.LARGE_N + 1)
    assert big == audit.audit_settings(small=True, design="large-n") == settings.large_n_design(std)
    assert big.design == "large-n" and big.power_nulls == ("redeal",) and big.plan_stop
    assert big.sequential and big.excess_method == "delta" and not big.plan_if_adequate
    assert big.margin_chains == settings.LARGE_N_CHAINS
    assert big.power_first_look is None  # 12 trials: no early look
    full = audit.audit_settings(design="large-n")
    assert full.power_first_look == settings.power_first_look(40, 0.8) == 16
    # what does not change: the largest numbers of draws, resamples, trials and permutations
    same = ("n_draws", "n_boot", "n_reps", "plan_reps", "n_excess", "excess_draws", "align_draws",
            "taus", "alpha", "seed")
    assert all(getattr(big, f) == getattr(std, f) for f in same)
    assert std.null_stop() is None
    assert big.null_stop().alpha == big.alpha and big.null_stop().statistics == ("L",)
    d = big.to_dict()
    assert d["design"] == "large-n" and d["power_nulls"] == ["redeal"] and d["trial_draws"] == 39
    for bad in ({"design": "fast"}, {"n_prompts": 0}):
        with pytest.raises(ValueError, match="design|n_prompts"):
            audit.audit_settings(**bad)


def test_chain_steps_in_sweeps():
    assert audit.audit_settings().chain_steps(1000, 10) == {}
    s = audit.audit_settings(design="large-n")
    assert s.chain_steps(1000, 10) == {"burn_in": settings.LARGE_N_BURN_SWEEPS * 10_000,
                                       "thin": int(settings.LARGE_N_THIN_SWEEPS * 10_000),
                                       "n_chains": settings.LARGE_N_CHAINS}


def test_power_first_look_keeps_the_adequacy_error_at_its_level():
    """Stopping after m trials that all reject, else running all, calls a power of exactly the
    target adequate with probability <= 0.05 at the m returned and > 0.05 at m - 1 (recomputed
    here with statsmodels' Wilson interval)."""
    from scipy.stats import binom
    from statsmodels.stats.proportion import proportion_confint

    def error(m, n, t):
        r_star = next(r for r in range(n + 1)
                      if proportion_confint(r, n, alpha=0.10, method="wilson")[0] >= t)
        return t**m + sum(binom.pmf(j, m, t) * binom.sf(r_star - j - 1, n - m, t) for j in range(m))

    for n, t in ((40, 0.8), (40, 0.9), (60, 0.8)):
        m = settings.power_first_look(n, t)
        assert m is not None and error(m, n, t) <= 0.05 < error(m - 1, n, t)
    assert settings.power_first_look(12, 0.8) is None


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.2])
def test_trial_draws_give_an_exact_level_alpha_test(alpha):
    N = settings.trial_draws(alpha)
    # a trial rejects when #{draws >= observed} / N <= alpha; with the observed table exchangeable
    # with the draws its rank is uniform on 1..N+1, so the level is (largest such # + 1) / (N + 1)
    c = math.floor(alpha * N + 1e-12)
    assert c >= 1 and c / N <= alpha < (c + 1) / N
    assert (c + 1) / (N + 1) == pytest.approx(alpha, abs=1e-12) or (c + 1) / (N + 1) <= alpha
    # by enumeration of the rank of the observed value among N + 1 exchangeable values (no ties)
    rank_from_top = np.arange(N + 1)  # draws above the observed value
    assert np.mean(rank_from_top / N <= alpha) <= alpha + 1e-12


def test_trial_level_by_simulation_under_a_null_world():
    # exchangeable pools: the 39-draw trial rejects at most at its level (plus Monte Carlo error)
    gen = simulate.effect_generator("exchangeable", n=60, M=3, k=8)
    st = studies.study(gen, 200, taus=(0.10,), nulls=("redeal",), n_draws=settings.trial_draws(0.05), seed=11,
                       progress=False)
    rate = st.frame()["reject"].mean()
    lo, hi = studies.rate_interval(int(st.frame()["reject"].sum()), 200)
    assert lo <= 0.05 + 1e-9 and rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 200)


# ---------------------------------------------------------------------------- planners
def test_plan_until_target_is_plan_power_up_to_the_first_crossing():
    pool = simulate.exchangeable(80, 3, 4, seed=2).pool
    base = audit.effect_centres(pool)
    common = dict(M=3, tau=0.10, alpha=0.05, n_draws=19, base=base, sigma=1.5, n_reps=6, nulls=("redeal",))
    grid = (8, 16, 32, 64)
    full = studies.plan_power("diffuse", target=0.8, vary="k", grid=grid, n=80, k=4, seed=9, progress=False, **common)
    part = compute._plan_until_target("diffuse", target=0.8, vary="k", grid=grid, n=80, k=4, seed=9, **common)
    assert part.required == full.required
    m = len(part.curve)
    assert 1 <= m <= len(full.curve)
    rr = part.curve["reject_rate"].to_numpy()
    assert (rr[:-1] < 0.8).all() and (rr[-1] >= 0.8 or m == len(grid))
    cols = ["k", "reps", "rejections", "reject_rate", "ci_lo", "ci_hi", "observed", "null_mean"]
    np.testing.assert_allclose(part.curve[cols].to_numpy(float), full.curve[cols].iloc[:m].to_numpy(float))


# ---------------------------------------------------------------------------- the audit in the large-n design
@pytest.fixture(scope="module")
def audits():
    pool = simulate.diffuse(240, 4, 8, 0.9, seed=7).pool
    return pool, audit.run_audit(pool, small=True, seed=3), audit.run_audit(pool, small=True, seed=3, design="large-n")


def test_auto_equals_standard_at_small_n(audits):
    pool, auto, _ = audits
    std = audit.run_audit(pool, small=True, seed=3, design="standard")
    assert auto.numbers == std.numbers and auto.numbers["settings"]["design"] == "standard"
    assert "design" not in auto.numbers["power"]


def test_large_n_audit_records_and_runs_its_design(audits):
    pool, std, big = audits
    j, s = big.numbers, big.settings
    assert j["settings"]["design"] == "large-n" and j["power"]["design"]["trial_draws"] == s.trial_draws
    cur = j["power"]["current"]
    assert set(cur["power"]) == {"redeal"} and set(cur["interval"]) == {"redeal"}
    assert all(r["reps"] == s.n_reps for r in cur["rows"])  # 12 trials: no early look
    nM = pool.n_prompts * pool.n_policies
    diag = big.results["nulls"].chain
    assert (diag.burn_in, diag.thin, diag.n_chains) == (30 * nM, nM // 2, settings.LARGE_N_CHAINS)
    # the excess: the standard point (the same full-data draws), resamples without draws
    assert j["nulls"]["excess"]["n_draws"] == s.excess_draws
    assert j["nulls"]["excess"]["value"] == std.numbers["nulls"]["excess"]["value"]
    for null in ("redeal", "margin"):
        for key, row in j["nulls"]["L"].items():
            B = row[null]["n_draws"]
            assert B <= s.n_draws and (B % 100 == 0 or B == s.n_draws)
            # the decisions of the standard design, from at most as many draws
            std_row = std.numbers["nulls"]["L"][key][null]
            assert row[null]["reject"] == std_row["reject"], (null, key)
    assert j["nulls"]["quality"]["reject"] == std.numbers["nulls"]["quality"]["reject"]
    assert j["nulls"]["quality"]["n_draws"] <= s.n_draws
    for name in ("plan_k", "plan_n"):
        plan = j["power"][name]
        if cur["state"] == "adequate":  # the planners feed no next step: skipped, and said so
            assert plan["curve"] == [] and plan["required"] == {} and plan["skipped"]
            continue
        rates = [r["reject_rate"] for r in plan["curve"]]
        assert all(x < s.target_power for x in rates[:-1])
        last = plan["curve"][-1][plan["vary"]]
        assert plan["required"]["redeal"] == (last if rates[-1] >= s.target_power else None)
    # the sections the design does not touch give the same numbers
    for key in ("pool", "coverage", "certificates", "router", "integrity"):
        assert j[key] == std.numbers[key], key
    # the noise bootstraps stop once the luck and best-of-K calls are settled: the same calls and
    # point values from at most n_boot resamples, recorded in the section and in settings
    nz, nz_std = j["noise"], std.numbers["noise"]
    assert (nz["luck"], nz["best_of_k"]["passes"]) == (nz_std["luck"], nz_std["best_of_k"]["passes"])
    used = {"decomposition": nz["decomposition"]["n_boot"], "best_of_k": nz["best_of_k"]["n_boot"]}
    assert j["settings"]["noise_boot"] == used | {"checks": nz["n_perm_drawn"]}
    assert "noise_boot" not in std.numbers["settings"]
    for name, B in used.items():
        assert B <= s.n_boot and (B % 100 == 0 or B == s.n_boot), name
        assert nz["stop"][name]["step"] == 100
    for q, row in nz["decomposition"]["estimates"].items():
        assert row["value"] == nz_std["decomposition"]["estimates"][q]["value"], q
    assert nz["best_of_k"]["difference"]["value"] == nz_std["best_of_k"]["difference"]["value"]
    # the assumption checks' permutations stop once every check's pass or fail is settled: the
    # same decisions from the permutations drawn, a count the rule's looks allow, recorded beside
    # the requested count
    rule = PValueStop(**nz["stop"]["checks"])
    drawn = nz["n_perm_drawn"]
    assert nz["n_perm"] == nz_std["n_perm"] and "n_perm_drawn" not in nz_std
    assert drawn in rule.looks(nz["n_perm"]) and drawn == nz["assumptions"]["n_perm"]
    assert nz["stop"]["checks"] == s.noise_stops()["checks"].to_dict()
    assert ([c["passed"] for c in nz["assumptions"]["checks"]]
            == [c["passed"] for c in nz_std["assumptions"]["checks"]])
    assert nz["luck_flag"] == nz_std["luck_flag"] and nz["best_of_k"]["passes_flag"] == nz_std["best_of_k"]["passes_flag"]
    assert big.verdict.code == std.verdict.code
    for row in j["nulls"]["L"].values():
        assert row["margin"]["ess"] > 0


def test_large_n_power_stops_after_a_first_look_without_a_miss():
    """Full sizes (40 trials): where every trial of the first look rejects, the estimate stops
    there, with the standard design's first trials, and the planners are skipped (adequate power);
    where one misses, all 40 trials run, the standard design's."""
    seeds = settings.section_seeds(0)
    big = audit.audit_settings(design="large-n")
    m = big.power_first_look
    for n, M, k in ((3000, 5, 16), (300, 4, 8)):
        pool = simulate.diffuse(n, M, k, 0.9, seed=3).pool
        eff = audit.useful_effect(pool, big.primary_tau, big.effect, seed=seeds["effect"])
        common = dict(n=n, k=k, M=M, tau=big.primary_tau, alpha=big.alpha, n_draws=big.power_draws,
                      base=audit.effect_centres(pool), sigma=eff.sigma, nulls=("redeal",),
                      seed=seeds["power"])
        full = studies.power("diffuse", n_reps=big.n_reps, **common).study.rows
        looked = compute._power_with_look("diffuse", n_reps=big.n_reps, first=m, **common)
        looked = looked.study.rows
        stops = bool(full["reject"].to_numpy()[:m].all())
        assert len(looked) == (m if stops else big.n_reps) and stops == (n == 3000)
        np.testing.assert_array_equal(looked["p"].to_numpy(), full["p"].to_numpy()[: len(looked)])
        if stops:
            sec = compute.power_section(pool, big)
            cur = sec.numbers["current"]
            assert cur["state"] == "adequate" and cur["n_reps"] == m
            assert sec.numbers["plan_k"]["skipped"] and sec.numbers["plan_n"]["curve"] == []


def test_sequential_nulls_are_not_refused_for_the_most_they_may_take(monkeypatch):
    """A sequential run stops once its decisions are settled, so the audit lifts the bound on a
    direct request's work (which at 1e6 x 10 x 16 refuses 2000 draws of each null); the standard
    design keeps it."""
    seen = []
    real = nulls.null_tests

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(nulls, "null_tests", spy)
    pool = simulate.exchangeable(120, 3, 4, seed=1).pool
    for design, bound in (("large-n", True), ("standard", False)):
        s = audit.audit_settings(small=True, design=design)
        compute.nulls_section(pool, s, compute.coverage_section(pool, s))
        main = [kw for kw in seen if "sequential" in kw][-1]  # the tests of L
        assert ("max_proposals" in main and main["max_proposals"] is None) == bound


def test_large_n_chain_agrees_with_the_standard_chain():
    # the shorter burn-in and spacing target the same law: null means agree within Monte Carlo error
    pool = simulate.exchangeable(400, 4, 8, seed=8).pool
    a = nulls.null_tests(pool, (0.1, 0.3), nulls=("margin",), n_draws=400, seed=1)
    b = nulls.null_tests(pool, (0.1, 0.3), nulls=("margin",), n_draws=400, seed=2,
                         **audit.audit_settings(design="large-n").chain_steps(400, 4))
    for tau in (0.1, 0.3):
        ta, tb = a.get("L", tau, "margin"), b.get("L", tau, "margin")
        se = math.hypot(ta.draws.std() / math.sqrt(ta.ess), tb.draws.std() / math.sqrt(tb.ess))
        assert abs(ta.mean - tb.mean) <= 4 * se + 1e-12


def test_report_states_the_large_n_design(audits):
    from oraclegap.audit import display

    _, std, big = audits
    s_big = display.texts(big.numbers)["settings"]
    s = big.settings
    assert "Large-n Monte Carlo design" in s_big and f"{s.trial_draws} null draws" in s_big
    assert "sequential null and quality tests" in s_big and "without draws" in s_big
    nb = big.numbers["settings"]["noise_boot"]  # the noise section's stopped sizes (k = 8 here)
    assert f"stopped at {nb['decomposition']} and {nb['best_of_k']} resamples" in s_big
    assert f"assumption checks at {nb['checks']} permutations" in s_big
    assert "Large-n" not in display.texts(std.numbers)["settings"]


# ---------------------------------------------------------------------------- sections on threads
@pytest.mark.parametrize("design", ["standard", "large-n"])
def test_sections_on_threads_give_the_audit_in_order(design):
    # every section draws from its own seed: one, two or three threads give the same numbers,
    # key for key and in the same order (audit.json is written in this order)
    import json

    from oraclegap._result import jsonable

    pool = simulate.diffuse(160, 4, 8, 0.9, seed=11).pool
    runs = [audit.run_audit(pool, small=True, seed=5, design=design, workers=w).to_json() for w in (1, 2, 3)]
    assert json.dumps(runs[1]) == json.dumps(runs[0]) == json.dumps(runs[2])
    # the nulls run as four parts on the threads: together they are the nulls section
    s = audit.audit_settings(small=True, seed=5, design=design, n_prompts=pool.n_prompts)
    whole = compute.nulls_section(pool, s, compute.coverage_section(pool, s))
    assert json.dumps(jsonable(whole.numbers)) == json.dumps(runs[0]["nulls"])
    parts = compute.null_parts(pool, s, compute.coverage_section(pool, s))
    reordered = compute.merge_null_parts([parts[name]() for name in reversed(list(parts))])
    assert json.dumps(jsonable(reordered.numbers)) == json.dumps(runs[0]["nulls"])


def test_sections_run_side_by_side_and_come_back_in_order():
    import threading

    started, gate = [], threading.Barrier(2, timeout=10)

    def job(name, wait):
        def run():
            started.append(name)
            if wait:
                gate.wait()  # both long jobs must be running at once, or this times out
            return compute.Section(name, {}, {})
        return run

    jobs = {"router": job("router", False), "nulls": job("nulls", True), "noise": job("noise", True)}
    ticks: list = []
    out = compute._run_sections(jobs, 2, ticks.append)
    assert [s.name for s in out] == list(jobs) and sorted(ticks) == sorted(jobs)
    assert started[:2] == ["nulls", "noise"]  # the costliest first
    with pytest.raises(ValueError, match="workers"):
        compute._run_sections(jobs, 0, ticks.append)


@pytest.mark.slow
def test_warm_kernels_readies_the_serial_threaded_and_noise_kernels():
    """``make setup`` runs warm_kernels so that no audit pays numba's compilation: in a fresh
    process (where no other test has touched them), the null tests' serial and threaded kernels
    and the noise section's resampler have no compiled signature before it and one after it
    (compiled then or loaded from the cache)."""
    import subprocess
    import sys

    code = (
        "from oraclegap.audit.compute import warm_kernels\n"
        "from oraclegap.stats.noise import _permutations\n"
        "from oraclegap.stats.nulls import _kernels as K\n"
        "ks = (K.redeal_stats, K.redeal_stats_parallel, K.run_chains_parallel, K.many_table_stats,"
        " _permutations._permuted_counts)\n"
        "before = [bool(k.signatures) for k in ks]\n"
        "warm_kernels()\n"
        "print(before, [bool(k.signatures) for k in ks])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         check=True).stdout.split("\n")[-2]
    assert out == f"{[False] * 5} {[True] * 5}", out
