"""The pre-routing audit (oraclegap.audit): numbers equal the library's, verdict rules on
constructed pools, the planners, atomic writing of the report folder."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import sys
import types

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from oraclegap import audit
from oraclegap.audit.settings import ALIGN_MAX_PROMPTS
from oraclegap.audit.verdict_text import latex
from oraclegap.pool import Pool
from oraclegap.stats import certify, noise, nulls, simulate, studies
from oraclegap.stats.coverage import coverage, coverage_from_rates, need, pass1_oracle_gap
from oraclegap.stats.nulls.quality import member_quality
from oraclegap.stats.split_gap import split_draw_gap, split_groups

TAUS = (0.05, 0.1, 0.2, 0.3)


def _json(x):
    """What a value becomes in audit.json."""
    return json.loads(json.dumps(audit._jsonable(x)))


# ---------------------------------------------------------------------------- constructed pools
def exchangeable_pool():
    return simulate.exchangeable(300, 5, 16, seed=3).pool


def luck_pool():
    """Low success rates with one real specialist per prompt: detectable, but most of the
    single-draw oracle gap is the luck of 8 members' single draws (paper 001's regime)."""
    rng = np.random.default_rng(5)
    n, M = 400, 8
    p = np.full((n, M), 0.08)
    p[np.arange(n), rng.integers(0, M, n)] = 0.25
    return simulate.sample_pool(p, 16, seed=6)


def predictable_pool():
    """Specialists assigned by the first principal component of prompt features (App. C.4); the
    features are the pool's embeddings, so a nearest-neighbour router can see them."""
    sim = simulate.predictable(300, 3, 8, delta=0.5, seed=4)
    return Pool.from_array(sim.pool.verdicts, sim.pool.prompts, embeddings=sim.info["features"], alignment="independent")


def identical_pool():
    v = simulate.exchangeable(300, 1, 8, seed=2).pool.verdicts
    return Pool.from_array(np.repeat(v, 3, axis=1))


def k1_pool():
    return simulate.exchangeable(400, 5, 1, seed=8).pool


# ---------------------------------------------------------------------------- a stand-in for the routers interface
class _KNN:
    """The agreed router interface (ROUTER_INTERFACE.md) on embeddings: mean outcome of the 15
    nearest calibration prompts, argmax with ties to the member best on calibration."""

    def fit(self, X, Y):
        from sklearn.neighbors import NearestNeighbors

        self.Y_ = np.asarray(Y, float)
        self.nn_ = NearestNeighbors(n_neighbors=min(15, len(self.Y_))).fit(X.embeddings)
        self.rank_ = self.Y_.mean(axis=0)
        return self

    def predict_utility(self, X):
        idx = self.nn_.kneighbors(X.embeddings, return_distance=False)
        return self.Y_[idx].mean(axis=1)

    def predict(self, X):
        U = self.predict_utility(X) + 1e-9 * self.rank_
        return U.argmax(axis=1)


@dataclasses.dataclass(frozen=True)
class _Inputs:
    embeddings: np.ndarray
    source: str = "pool"

    def take(self, idx):
        return _Inputs(self.embeddings[idx], self.source)

    def __len__(self):
        return len(self.embeddings)


@pytest.fixture
def fake_routers(monkeypatch):
    mod = types.ModuleType("oraclegap.deploy.routers")
    calls = []

    def router_inputs(pool, embed="auto"):
        calls.append(embed)
        if pool.embeddings is None:
            raise ValueError("no embeddings")
        return _Inputs(pool.embeddings)

    def make_router(name, **params):
        assert name in ("embed_knn", "tfidf_knn")
        return _KNN()

    mod.router_inputs, mod.make_router, mod.calls = router_inputs, make_router, calls
    import oraclegap.deploy as deploy

    monkeypatch.setitem(sys.modules, "oraclegap.deploy.routers", mod)
    monkeypatch.setattr(deploy, "routers", mod, raising=False)
    return mod


def _routers_available() -> bool:
    try:
        import oraclegap.deploy.routers  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------------- settings
def test_settings_rules():
    assert audit.primary_tau((0.05, 0.1, 0.2)) == 0.1
    assert audit.primary_tau((0.05, 0.15)) == 0.05  # a tie goes to the smaller threshold
    assert audit.primary_tau((0.3, 0.5)) == 0.3
    s = audit.audit_settings("0.3,0.05,0.1", seed=7)
    assert s.taus == (0.05, 0.1, 0.3) and s.primary_tau == 0.1
    assert s.to_dict()["seeds"] == {name: 7 + off for name, off in audit.SEED_OFFSETS.items()}
    assert len(set(s.to_dict()["seeds"].values())) == len(audit.SEED_OFFSETS)
    small = audit.audit_settings(small=True)
    assert small.n_draws < s.n_draws and small.n_reps < s.n_reps and small.n_boot < s.n_boot
    for bad, match in (({"taus": "0.1,0.1"}, "repeat"), ({"taus": "0.1,abc"}, "taus"), ({"taus": "1.5"}, "taus"),
                       ({"taus": "0"}, "taus"), ({"alpha": 0.7}, "alpha"), ({"alpha": 0}, "alpha"),
                       ({"power_tau": 0.15}, "power_tau"), ({"effect": 0}, "effect"), ({"seed": -1}, "seed")):
        with pytest.raises((ValueError, TypeError), match=match):
            audit.audit_settings(**bad)


def test_pools_that_cannot_be_audited():
    rng = np.random.default_rng(0)
    v = rng.random((20, 3, 4)) < 0.5
    with pytest.raises(ValueError, match="1 policy"):
        audit.run_audit(Pool.from_array(v[:, :1]), small=True)
    with pytest.raises(ValueError, match="1 prompt"):
        audit.run_audit(Pool.from_array(v[:1]), small=True)
    for fill, word in ((True, "correct"), (False, "incorrect")):
        with pytest.raises(ValueError, match=f"every verdict in the pool is {word}"):
            audit.run_audit(Pool.from_array(np.full((20, 3, 4), fill)), small=True)
    with pytest.raises(TypeError, match="Pool"):
        audit.check_auditable(v)


# ---------------------------------------------------------------------------- audit.json = direct library calls
@pytest.fixture(scope="module")
def spec_audit():
    pool = simulate.specialists(160, 4, 8, f=0.5, s=0.3, seed=11).pool
    return pool, audit.run_audit(pool, TAUS, 0.05, 3, small=True)


def _assert_numbers_equal_library_calls(pool, res, seed):
    """Every section of ``res`` (as audit.json holds it) equals a direct library call on ``pool``."""
    j = json.loads(json.dumps(res.to_json()))  # exactly what audit.json holds
    s = res.settings
    seeds = j["settings"]["seeds"]
    assert seeds == audit.section_seeds(seed)
    # coverage
    cov = coverage(pool, TAUS).to_dict()
    assert [{kk: v for kk, v in row.items() if kk != "tau"} for row in j["coverage"]["taus"].values()] == _json(list(cov.values()))
    p1 = pass1_oracle_gap(pool)
    assert j["coverage"]["pass1"] == _json({"oracle": p1.oracle, "best": p1.best, "best_member": p1.best_member, "gap": p1.gap})
    # nulls and their Holm adjustment over thresholds
    nt = nulls.null_tests(pool, TAUS, n_draws=s.n_draws, seed=seeds["nulls"])
    assert j["nulls"]["tests"] == _json(nt.to_dict())
    needs = [need(t, pool.k) for t in TAUS]
    distinct = list(dict.fromkeys(needs))  # thresholds with one need(tau, k) are one test
    assert j["nulls"]["n_tests"] == len(distinct)
    for null in nulls.NULLS:
        raw = [nt.get("L", t, null).p for t in TAUS]
        first = [raw[needs.index(d)] for d in distinct]
        adj = multipletests(first, method="holm")[1]
        got = [row[null]["p_holm"] for row in j["nulls"]["L"].values()]
        assert got == pytest.approx([adj[distinct.index(d)] for d in needs])
        assert [row[null]["p"] for row in j["nulls"]["L"].values()] == raw
        assert min(raw) > 0  # plus-one Monte Carlo p-values
    qt = member_quality(pool, n_draws=s.n_draws, seed=seeds["quality"])
    assert (j["nulls"]["quality"]["p"], j["nulls"]["quality"]["reject"]) == (qt.p, qt.p <= s.alpha)
    ex = nulls.excess_bootstrap(pool, s.primary_tau, n_boot=s.n_excess, n_draws=s.excess_draws, seed=seeds["excess"])
    assert (j["nulls"]["excess"]["value"], j["nulls"]["excess"]["lo"], j["nulls"]["excess"]["hi"]) == (ex.value, ex.lo, ex.hi)
    # the effect, the power at this design and the planners
    eff = audit.useful_effect(pool, s.primary_tau, s.effect, seed=seeds["effect"])
    assert j["power"]["effect"] == _json(eff.to_dict())
    n, M, k = pool.shape
    base = np.clip(pool.counts().sum(axis=1) / (M * k), 1 / (2 * M * k), 1 - 1 / (2 * M * k))  # Table 2's centres
    common = dict(M=pool.n_policies, tau=s.primary_tau, alpha=s.alpha, n_draws=s.plan_draws, base=base, sigma=eff.sigma)
    pw = studies.power("diffuse", n=pool.n_prompts, k=pool.k, n_reps=s.n_reps, nulls=("redeal", "margin"),
                       seed=seeds["power"], **common)
    assert j["power"]["current"]["rows"] == _json(pw.frame().to_dict(orient="records"))
    assert j["power"]["current"]["power"] == {"redeal": pw.power("redeal"), "margin": pw.power("margin")}
    for vary, size, reach in (("n", n, audit.PLAN_N_REACH), ("k", k, audit.PLAN_K_REACH)):
        grid = [size * 2 ** e for e in range(1, 12) if size * 2 ** e <= max(4 * size, reach)]
        plan = studies.plan_power("diffuse", target=s.target_power, vary=vary, grid=grid, n=n, k=k, n_reps=s.plan_reps,
                                  nulls=("redeal",), seed=seeds[f"plan_{vary}"], progress=False, **common)
        assert j["power"][f"plan_{vary}"]["grid"] == grid
        assert j["power"][f"plan_{vary}"]["curve"] == _json(plan.frame().to_dict(orient="records"))
        assert j["power"][f"plan_{vary}"]["required"] == _json(plan.required)
    # the power of this design is judged by its one-sided Wilson limits (the 90% two-sided interval)
    fr = pw.frame().set_index("null")
    lo, hi = studies.rate_interval(int(fr.loc["redeal", "rejections"]), int(fr.loc["redeal", "reps"]), 0.10)
    state = "adequate" if lo >= s.target_power else "low" if hi < s.target_power else "uncertain"
    assert j["power"]["current"]["state"] == state
    # certificates: the split-draw gap at level alpha / T' (T' distinct split tests), the apparent
    # gap of paper 002 beside it at alpha / T
    pairs = split_groups(TAUS, pool.k)
    a_cert = 0.05 / len(set(pairs))
    assert j["certificates"]["alpha"] == pytest.approx(a_cert)
    splits = split_draw_gap(pool, TAUS, a_cert, seed=seeds["split"])
    for key, t, sp in zip(j["certificates"]["levels"], TAUS, splits, strict=True):
        R = certify.outcomes_from_pool(pool, tau=t)
        for method in ("exact", "paired"):
            want = certify.selection_valid_gap_from_outcomes(R, 0.05 / len(TAUS), method, model_names=pool.policy_names)
            assert j["certificates"]["levels"][key][method] == _json(want.frame().to_dict(orient="records")[0])
        cert = j["certificates"]["levels"][key]["certificate"]
        assert (cert["value"], cert["lo"], cert["hi"]) == pytest.approx((sp.value, sp.lo, sp.hi))
        assert j["certificates"]["levels"][key]["certified"] == sp.certified == (sp.lo > 0)
    # single-draw decomposition and best-of-K
    from oraclegap.audit.compute import NOISE_PERMUTATIONS, NOISE_PERMUTATIONS_SMALL

    dec = noise.decomposition(pool, n_boot=s.n_boot, seed=seeds["decomposition"], checks=True,
                              n_perm=NOISE_PERMUTATIONS_SMALL if s.small else NOISE_PERMUTATIONS)
    assert j["noise"]["decomposition"] == _json(dec.to_dict())
    bok = noise.best_of_k_check(pool, n_boot=s.n_boot, seed=seeds["best_of_k"])
    assert j["noise"]["best_of_k"]["difference"] == _json(bok.difference.row())
    assert j["noise"]["best_of_k"]["passes"] == bok.passes
    assert j["noise"]["luck"] == (dec["noise_share"].lo >= audit.LUCK_SHARE)
    # the draw-alignment check runs on every pool with k > 1, whatever it declares
    sub = pool
    if pool.n_prompts > ALIGN_MAX_PROMPTS:
        rng = np.random.default_rng(seeds["alignment"])
        sub = pool.select(prompts=np.sort(rng.permutation(pool.n_prompts)[:ALIGN_MAX_PROMPTS]))
    da = nulls.draw_alignment(sub, n_draws=s.align_draws, seed=seeds["alignment"])
    al = j["nulls"]["draw_alignment"]
    assert al["declared"] == pool.alignment and al["n_prompts"] == sub.n_prompts
    assert (al["matched"], al["shuffled"], al["p"]) == (da.test.observed, da.expected, da.test.p)
    assert al["coupled"] == (da.test.p <= s.alpha)
    # the verdict is a function of the numbers alone
    assert audit.verdict(j).to_dict() == j["verdict"]


def test_numbers_equal_library_calls(spec_audit):
    pool, res = spec_audit
    _assert_numbers_equal_library_calls(pool, res, 3)


@pytest.fixture(scope="module")
def lab_audit():
    from oraclegap import datasets

    pool = datasets.load("lab-seed-primary")
    return pool, audit.run_audit(pool, TAUS, 0.05, 1, small=True, source="lab-seed-primary")


@pytest.mark.slow
def test_numbers_equal_library_calls_on_the_lab_seed_pool(lab_audit):
    """The lab's seed pool (five GRPO seeds of one recipe, k = 16, per-policy draws, embeddings):
    every section equals the library calls, and the quick router is the documented protocol run
    with the library's routers."""
    pool, res = lab_audit
    assert pool.shape == (240, 5, 16) and pool.alignment == "independent" and pool.embeddings is not None
    _assert_numbers_equal_library_calls(pool, res, 1)
    pytest.importorskip("oraclegap.deploy.routers", reason="oraclegap.deploy.routers is not in this version")
    from oraclegap.deploy import routers

    j = json.loads(json.dumps(res.to_json()))
    r = j["router"]
    assert r["available"] and r["family"] == "embed_knn" and r["source"] == "pool"
    rng = np.random.default_rng(j["settings"]["seeds"]["router"])
    perm = rng.permutation(pool.n_prompts)
    test, cal = np.sort(perm[:120]), np.sort(perm[120:])
    X = routers.router_inputs(pool, embed="pool")
    p_raw = []
    for key, t in zip(r["levels"], TAUS, strict=True):
        O = pool.counts() >= int(np.ceil(t * pool.k - 1e-9))
        b = int(np.argmax(O[cal].sum(axis=0)))
        knn = routers.make_router("embed_knn").fit(X.take(cal), O[cal].astype(float))
        ch = np.asarray(knn.predict(X.take(test)))
        Ot = O[test]
        want = certify.paired_comparison(Ot[np.arange(test.size), ch], Ot[:, b], 0.05, oracle=Ot.any(axis=1),
                                         n_boot=max(res.settings.n_boot, 100), seed=rng)
        row = r["levels"][key]
        assert row["baseline_policy"] == pool.policy_names[b]
        assert row["chosen"] == np.bincount(ch, minlength=pool.n_policies).tolist()
        assert [row["difference"], row["diff_lo"], row["diff_hi"], row["n10"], row["n01"], row["p_mcnemar"]] == \
            _json((want.difference.value, want.difference.lo, want.difference.hi, want.n10, want.n01, want.p_mcnemar))
        p_raw.append(want.p_mcnemar)
    assert [row["p_holm"] for row in r["levels"].values()] == pytest.approx(multipletests(p_raw, method="holm")[1])


def test_lab_seed_pool_verdict_states_its_power(lab_audit):
    """On the lab's seed pool (per-policy draws) both nulls reject at tau = 0.3 only, and most of
    the single-draw gap is luck: the verdict is ``luck``, with the best-of-K step; the power state
    is flagged as its interval says. (Sampled seed-aligned, the same seeds reject nowhere: see
    test_lab_aligned_and_independent_seed_pools.)"""
    _, res = lab_audit
    j, v = res.to_json(), res.verdict
    nl, cov = j["nulls"], j["coverage"]["taus"]
    assert [cov[key]["tau"] for key in nl["detected_taus"]] == [0.3]
    assert nl["detected_taus"] == sorted(set(nl["redeal_taus"]) & set(nl["margin_taus"]), key=list(cov).index)
    share = j["noise"]["decomposition"]["estimates"]["noise_share"]
    assert v.code == "luck" and share["lo"] >= audit.LUCK_SHARE and f"{share['value']:.3f}" in v.headline
    assert any("best-of-" in step for step in v.next_steps)
    cur = j["power"]["current"]
    lo, hi = cur["interval"]["redeal"]
    assert lo <= cur["power"]["redeal"] <= hi
    flag = {"low": "low-power", "uncertain": "power-uncertain"}.get(cur["state"])
    assert (flag in v.findings) if flag else not ({"low-power", "power-uncertain"} & set(v.findings))


def test_same_seed_same_numbers(spec_audit):
    pool, res = spec_audit
    again = audit.run_audit(pool, TAUS, 0.05, 3, small=True)
    assert again.to_json() == res.to_json()
    other = audit.run_audit(pool, TAUS, 0.05, 4, small=True)
    assert other.to_json()["nulls"]["tests"] != res.to_json()["nulls"]["tests"]


def test_texts_and_frames_state_the_numbers(spec_audit):
    _, res = spec_audit
    j = res.to_json()
    tx = audit.texts(j)
    pk = j["coverage"]["primary_key"]
    row = j["coverage"]["taus"][pk]
    # the report's Markdown writes its symbols in LaTeX (the JSON and the CLI keep plain text)
    assert f"$L$ = {row['L']:.3f}" in tx["coverage"] and f"$L/D$ = {row['break_even']:.3f}" in tx["coverage"]
    c = j["certificates"]["levels"][pk]["paired"]
    assert f"[{c['lo']:.3f}, {c['hi']:.3f}]" in tx["certificates"]
    e = j["noise"]["decomposition"]["estimates"]["o_exp"]
    assert f"$O_{{\\exp}}$ = {e['value']:.3f}" in tx["noise"]
    assert latex(j["verdict"]["headline"]) in tx["verdict"]
    prose = re.sub(r"`[^`]*`|\$[^$]*\$", "", tx["verdict"] + tx["noise"])  # outside code and math
    assert not re.search(r"\b(tau|Delta|O_exp|e_D|L/D)\b", prose), prose
    for text in tx.values():
        assert "None" not in text and "nan" not in text.lower()
    fr = audit.frames(j)
    assert fr["coverage"]["L"].tolist() == [r["L"] for r in j["coverage"]["taus"].values()]
    assert fr["overview"]["p_redeal"].tolist() == [r["redeal"]["p_holm"] for r in j["nulls"]["L"].values()]
    assert set(fr) >= {"coverage", "members", "nulls", "power", "certificates", "noise", "best_of_k"}


# ---------------------------------------------------------------------------- the planners
def test_useful_effect_is_the_first_crossing():
    pool = exchangeable_pool()
    eff = audit.useful_effect(pool, 0.1, 0.05, seed=1)
    assert eff.reachable and eff.calibrated_L >= 0.05
    # the grid point before it stays below the target, with the same normal draws
    grid = np.round(np.arange(0.0, eff.sigma + 1e-9, 0.05), 4)
    prev = audit.useful_effect(pool, 0.1, 0.99, seed=1, sigmas=grid[:-1])
    assert prev.calibrated_L < 0.05
    # sigma = 0 is the exchangeable world: population L is exactly zero
    zero = audit.useful_effect(pool, 0.1, 0.5, seed=1, sigmas=[0.0])
    assert zero.calibrated_L == 0.0 and not zero.reachable
    # the population gap it reports is that of coverage_from_rates on the same construction
    rng = np.random.default_rng(1)
    n, M, k = pool.shape
    eps = 1 / (2 * M * k)
    q = np.clip(pool.counts().sum(axis=1) / (M * k), eps, 1 - eps)
    z = rng.standard_normal((8, n, M))
    p = 1 / (1 + np.exp(-(np.log(q / (1 - q))[None, :, None] + eff.sigma * z)))
    assert eff.calibrated_L == pytest.approx(np.mean([coverage_from_rates(p[r], [0.1]).L[0] for r in range(8)]))


def test_certificate_prompts_projection():
    rng = np.random.default_rng(2)
    R = rng.random((60, 4)) < 0.5
    c, o, n = R.sum(axis=0), int(R.any(axis=1).sum()), R.shape[0]
    now = certify.selection_valid_gap(c, o, n, 0.05, "paired")
    assert now.value > 0.1
    # target 0: certified now (every member has a discordant item)
    assert audit.certificate_prompts(R, 0.05).certified_now == now.certified
    # a target above the current lower limit but below the plug-in gap: the first factor that clears it
    target = (now.lo + now.value) / 2
    plan = audit.certificate_prompts(R, 0.05, target=target)
    assert not plan.certified_now and plan.factor is not None and plan.n_needed == n * plan.factor
    f = plan.factor
    assert certify.selection_valid_gap(c * f, o * f, n * f, 0.05, "paired").lo > target
    for g in (2, 4, 8, 16, 32):
        if g < f:
            assert certify.selection_valid_gap(c * g, o * g, n * g, 0.05, "paired").lo <= target
    # a target at or above the plug-in gap can never be reached at these rates
    assert audit.certificate_prompts(R, 0.05, target=now.value).n_needed is None
    # identical members: no gap, never certified
    p0 = audit.certificate_prompts(np.repeat(R[:, :1], 3, axis=1), 0.05)
    assert not p0.certified_now and p0.n_needed is None and p0.now.value == 0


def test_plan_grid_doubles_far_enough():
    assert audit.plan_grid(16, 64) == (32, 64)
    assert audit.plan_grid(2, 64) == (4, 8, 16, 32, 64)  # few responses: planned up to the reach
    assert audit.plan_grid(30, 64) == (60, 120)  # many: twice and four times
    assert audit.plan_grid(240, 1000) == (480, 960)
    assert audit.plan_grid(24, 1000) == (48, 96, 192, 384, 768)
    with pytest.raises(ValueError, match="current"):
        audit.plan_grid(0, 64)


def test_power_state_reads_the_interval():
    assert audit.power_state(0.9, 0.82, 0.96, 0.8) == "adequate"
    assert audit.power_state(0.5, 0.3, 0.7, 0.8) == "low"
    # 10 of 12 and 28 of 40 replicates: on either side of 0.8, and neither interval excludes it
    from oraclegap.stats.studies import rate_interval

    for x, m in ((10, 12), (28, 40)):
        lo, hi = (float(v) for v in rate_interval(x, m))
        assert audit.power_state(x / m, lo, hi, 0.8) == "uncertain"
    assert audit.power_state(1.0, 0.7575, 1 - 1e-16, 0.8) == "uncertain"  # Wilson's rounding at rate 1
    for bad in ((0.9, 0.95, 0.99, 0.8), (float("nan"), 0.1, 0.2, 0.8)):
        with pytest.raises(ValueError):
            audit.power_state(*bad)


@pytest.mark.parametrize("k", [1, 2])
def test_planner_holds_the_effect_fixed_over_k(k):
    """A pool with k = 2 or k = 1 (many prompts with no success): the planned designs with more
    responses face the population the effect was calibrated on, not a smaller or larger one."""
    pool = simulate.exchangeable(240, 5, 16, seed=3).pool.draws(np.arange(k))
    n, M, _ = pool.shape
    q = audit.effect_centres(pool)
    eps = 1 / (2 * M * (min(audit.K1_PLAN) if k == 1 else k))  # at k = 1, 1/(2M) = 0.1 would sit on tau = 0.1
    assert q.min() >= eps - 1e-15 and q.max() <= 1 - eps + 1e-15
    grid = audit.K1_PLAN if k == 1 else audit.plan_grid(k, audit.PLAN_K_REACH)
    for k_plan in grid:  # diffuse() clips with 1/(2 M k'): a no-op on these centres
        e = 1 / (2 * M * k_plan)
        assert np.array_equal(np.clip(q, e, 1 - e), q)
    j = audit.run_audit(pool, small=True).to_json()
    target = j["power"]["effect"]["calibrated_L"]
    planned = [r["population_L"] for r in j["power"]["plan_k"]["curve"]]
    assert j["power"]["plan_k"]["grid"] == list(grid)
    assert max(abs(x - target) for x in planned) < 0.02, (target, planned)


# ---------------------------------------------------------------------------- seed-aligned against independent draws
def _crn_pools(n=200, M=4, k=12, seed=21):
    """One population (equal member rates per prompt, small member offsets), sampled twice: with
    common random numbers (draw j of a prompt: one uniform for every member; seed-aligned) and with
    independent uniforms per member (independent)."""
    rng = np.random.default_rng(seed)
    p = np.clip(rng.beta(0.8, 0.8, size=(n, 1)) + rng.normal(0, 0.03, size=(1, M)), 0.01, 0.99)
    shared = rng.random((n, 1, k))
    own = rng.random((n, M, k))
    aligned = Pool.from_array(shared < p[:, :, None], alignment="seed-aligned")
    indep = Pool.from_array(own < p[:, :, None], alignment="independent")
    return aligned, indep


@pytest.fixture(scope="module")
def crn_audits():
    aligned, indep = _crn_pools()
    return {name: (pool, audit.run_audit(pool, TAUS, 0.05, 2, small=True)) for name, pool in
            (("aligned", aligned), ("independent", indep))}


@pytest.mark.slow
def test_seed_aligned_pool_gets_the_independence_caveat(crn_audits):
    """On seed-aligned draws the nulls section and the verdict say the nulls assume independent
    draws and are conservative here, with the measured matched and shuffled agreement, and what to
    collect next starts with per-policy draws; on independent draws of the same population, none of it."""
    pool, res = crn_audits["aligned"]
    _assert_numbers_equal_library_calls(pool, res, 2)
    j, v = res.to_json(), res.verdict
    al = j["nulls"]["draw_alignment"]
    assert j["nulls"]["seed_aligned"] and al["matched"] > al["band"][1] > al["shuffled"]  # common random numbers show
    assert al["coupled"] and al["declared"] == "seed-aligned"
    assert "seed-aligned" in v.findings and v.findings[0] == "seed-aligned"
    words = f"agree {al['matched']:.3f} of the time against {al['shuffled']:.3f} after shuffling"
    assert words in v.reasons[0] and "assume draws independent across members" in v.reasons[0]
    assert "conservative" in v.reasons[0]
    assert "--draw-seeds per-policy" in v.next_steps[0] and f"{al['matched']:.3f}" in v.next_steps[0]
    nulls_text = audit.texts(j)["nulls"]
    assert latex(v.reasons[0]) in nulls_text and "conservative" in nulls_text
    if v.code == "noise":
        assert "seed-aligned" in v.headline
    pool_i, res_i = crn_audits["independent"]
    _assert_numbers_equal_library_calls(pool_i, res_i, 2)
    ji, vi = res_i.to_json(), res_i.verdict
    assert not ji["nulls"]["draw_alignment"]["coupled"] and "seed-aligned" not in vi.findings
    assert not any("per-policy" in step for step in vi.next_steps)
    assert "seed-aligned" not in audit.texts(ji)["nulls"] and "conservative" not in audit.texts(ji)["nulls"]
    # an audit written before the check existed reads without the caveat
    old = copy.deepcopy(j)
    del old["nulls"]["draw_alignment"], old["nulls"]["seed_aligned"]
    assert "seed-aligned" not in audit.verdict(old).findings


def test_seed_aligned_label_without_measurable_coupling(crn_audits):
    """Draws labelled seed-aligned whose matched agreement lies within the shuffle band (here the
    independent draws, relabelled): the verdict reports the measurement, but calls nothing
    conservative, adds no finding and asks for no per-policy draws."""
    pool_i, res_i = crn_audits["independent"]
    da = nulls.draw_alignment(pool_i, n_draws=res_i.settings.align_draws, seed=3)
    assert da.test.band.lo <= da.test.observed <= da.test.band.hi  # no coupling in these draws
    j = copy.deepcopy(res_i.to_json())
    j["nulls"]["seed_aligned"] = True
    j["nulls"]["draw_alignment"] = {"matched": da.test.observed, "shuffled": da.expected, "p": da.test.p,
                                    "band": [da.test.band.lo, da.test.band.hi]}
    v, v_i = audit.verdict(j), res_i.verdict
    assert v.code == v_i.code and v.headline == v_i.headline and v.next_steps == v_i.next_steps
    assert v.findings == v_i.findings and "seed-aligned" not in v.findings
    assert v.reasons[1:] == v_i.reasons and "no coupling of the draws is measurable" in v.reasons[0]
    assert f"agree {da.test.observed:.3f} of the time" in v.reasons[0] and "conservative" not in v.reasons[0]
    assert "no coupling" in audit.texts(j)["nulls"] and "conservative" not in audit.texts(j)["nulls"]


def test_independence_by_construction_reads_a_chance_excess_as_chance(crn_audits):
    """Draws whose records prove them independent across members (each response's own seed, no
    seed shared at any prompt and draw index; or draws arranged from counts) are flagged by the
    alignment check only by chance: the verdict then says so, calls nothing conservative, adds no
    finding and asks for no per-policy draws. Shared seeds, or no seeds recorded, prove nothing."""
    from oraclegap.audit.compute import independent_by_construction

    pool_i, res_i = crn_audits["independent"]
    n, M, k = pool_i.shape
    own = np.arange(n * M * k).reshape(n, M, k)
    with_seeds = lambda s: Pool.from_array(pool_i.verdicts, per_response={"seed": s})  # noqa: E731
    assert independent_by_construction(with_seeds(own)) == "per-policy seeds"
    assert independent_by_construction(with_seeds(np.repeat(own[:, :1], M, axis=1))) is None
    one_shared = own.copy()
    one_shared[0, 1, 0] = one_shared[0, 0, 0]
    assert independent_by_construction(with_seeds(one_shared)) is None
    assert independent_by_construction(pool_i) is None
    counts = Pool.from_counts(pool_i.verdicts.sum(axis=2), k, seed=1)
    assert independent_by_construction(counts) == "arranged from counts"
    j = copy.deepcopy(res_i.to_json())
    al = j["nulls"]["draw_alignment"]
    al.update(p=0.03, coupled=True, independent_by="per-policy seeds")  # a chance rejection
    v, v_i = audit.verdict(j), res_i.verdict
    assert v.code == v_i.code and v.headline == v_i.headline and v.next_steps == v_i.next_steps
    assert v.findings == v_i.findings and "seed-aligned" not in v.findings
    assert "by construction (per-policy seeds)" in v.reasons[0] and "conservative" not in v.reasons[0]
    al.pop("independent_by")  # no record of how the draws were made: the caveat stands
    assert "seed-aligned" in audit.verdict(j).findings


def test_lab_aligned_and_independent_seed_pools(lab_audit):
    """The lab's seed pool sampled seed-aligned carries the caveat; the same seeds sampled per
    policy (the default lab pool) do not."""
    from oraclegap import datasets

    pool = datasets.load_optional("lab-seed-primary-aligned")[0]
    if pool is None:
        pytest.skip("data/lab/ is not built (make lab)")
    res = audit.run_audit(pool, TAUS, 0.05, 1, small=True, source="lab-seed-primary-aligned")
    j, v = res.to_json(), res.verdict
    assert pool.alignment == "seed-aligned" and j["nulls"]["seed_aligned"] and "seed-aligned" in v.findings
    assert j["nulls"]["draw_alignment"]["matched"] == pytest.approx(nulls.draw_alignment(
        pool, n_draws=res.settings.align_draws, seed=j["settings"]["seeds"]["alignment"]).test.observed)
    assert "--draw-seeds per-policy" in v.next_steps[0]
    assert v.code == "noise" and j["nulls"]["redeal_taus"] == [] == j["nulls"]["margin_taus"]  # aligned: no rejection
    _, res_i = lab_audit
    assert not res_i.to_json()["nulls"]["draw_alignment"]["coupled"] and "seed-aligned" not in res_i.verdict.findings


# ---------------------------------------------------------------------------- the verdict on constructed pools
def test_verdict_exchangeable_is_noise():
    res = audit.run_audit(exchangeable_pool(), small=True)
    v = res.verdict
    assert v.code == "noise"
    assert res.numbers["nulls"]["redeal_taus"] == [] and res.numbers["nulls"]["margin_taus"] == []
    assert "within sampling noise" in v.headline
    pw = res.numbers["power"]["current"]
    assert f"{pw['population_L']:.3f}" in v.headline  # the effect size this design could (not) detect
    assert v.next_steps  # low power: the planner says what to collect


def test_verdict_luck():
    res = audit.run_audit(luck_pool(), small=True)
    v = res.verdict
    assert v.code == "luck" and "luck" in v.findings and "detected" in v.findings
    share = res.numbers["noise"]["decomposition"]["estimates"]["noise_share"]
    assert share["lo"] >= 0.5 and "single-draw luck" in v.headline
    assert res.numbers["noise"]["best_of_k"]["passes"]
    assert any("best-of-" in s for s in v.next_steps)


def test_verdict_identical_members():
    res = audit.run_audit(identical_pool(), small=True)
    v = res.verdict
    assert v.code == "no-gap" and v.findings == ("no-gap",)
    assert res.numbers["pool"]["identical_members"]
    assert all(row["D"] == 0 for row in res.numbers["coverage"]["taus"].values())


def test_verdict_k1_pool():
    res = audit.run_audit(k1_pool(), small=True)
    v = res.verdict
    j = res.numbers
    assert "k1" in v.findings
    assert "No nulls that need k > 1 apply; see the certificates." in v.reasons
    assert not j["nulls"]["applicable"] and j["nulls"]["reason"] == "No nulls that need k > 1 apply; see the certificates."
    assert not j["noise"]["applicable"]
    assert list(j["certificates"]["levels"]) == ["outcome"] and j["certificates"]["alpha"] == 0.05
    R = certify.outcomes_from_pool(k1_pool())
    want = certify.selection_valid_gap_from_outcomes(R, 0.05, "paired")
    assert j["certificates"]["levels"]["outcome"]["paired"]["lo"] == want.lo
    # exchangeable members at k = 1 still have an outcome-oracle gap (single-draw luck): certified, but the code says
    # that luck is not excluded, and the headline names the responses per prompt that would decide it
    assert v.code == ("luck-not-excluded" if want.certified else "noise") and v.code != "certified"
    assert "single-draw luck" in v.headline
    if want.certified:
        plan = j["power"]["plan_k"]
        k_decide = plan["required"]["redeal"] or max(plan["grid"])
        assert f"k = {k_decide} responses per prompt" in v.headline
        assert audit.summary(j)["code"] == "luck-not-excluded" and audit.summary(j)["k_needed"] == plan["required"]["redeal"]
    assert j["power"]["plan_k"]["grid"] == [4, 8, 16]
    assert any("k >= 2" in s for s in v.next_steps)
    assert "No nulls that need $k > 1$ apply" in audit.texts(j)["nulls"]


def test_verdict_k1_not_certified():
    """One member is right wherever another is: the plug-in outcome-oracle gap is 0, so no
    certificate can be positive although the members disagree (D > 0)."""
    rng = np.random.default_rng(3)
    weak = rng.random((60, 1, 1)) < 0.4
    strong = weak | (rng.random((60, 1, 1)) < 0.3)
    pool = Pool.from_array(np.concatenate([weak, strong, weak & (rng.random((60, 1, 1)) < 0.7)], axis=1))
    res = audit.run_audit(pool, small=True)
    lev = res.numbers["certificates"]["levels"]["outcome"]
    assert lev["paired"]["value"] == 0 and lev["paired"]["lo"] == 0
    assert res.numbers["coverage"]["taus"][res.numbers["coverage"]["primary_key"]]["D"] > 0
    assert res.verdict.code == "noise"
    assert "not certified" in res.verdict.headline


def test_verdict_predictable_specialists_certified(fake_routers):
    res = audit.run_audit(predictable_pool(), small=True)
    v = res.verdict
    r = res.numbers["router"]
    assert fake_routers.calls and fake_routers.calls[0] == "pool"
    assert r["available"] and r["family"] == "embed_knn" and r["n_cal"] + r["n_test"] == 300
    assert v.code == "certified-recoverable", v.headline
    assert "detected" in v.findings and "certified" in v.findings
    pk = res.numbers["coverage"]["primary_key"]
    row = r["levels"][pk]
    assert row["beats"] and row["difference"] > 0 and row["p_holm"] <= 0.05
    assert row["e_D"] < row["break_even"]  # it beats the best member, so e_D is below L/D on the test half


def test_router_section_paired_inference(fake_routers):
    """The router numbers are paired_comparison on the held-out half with the calibration-selected member."""
    pool = predictable_pool()
    levels, keys = [0.1], ["0.1"]
    r = audit.quick_router(pool, levels, keys, alpha=0.05, seed=9, n_boot=200)
    rng = np.random.default_rng(9)
    perm = rng.permutation(pool.n_prompts)
    test, cal = np.sort(perm[:150]), np.sort(perm[150:])
    O = pool.counts() >= 1  # need(0.1, 8) = 1
    b = int(np.argmax(O[cal].sum(axis=0)))
    knn = _KNN().fit(_Inputs(pool.embeddings[cal]), O[cal].astype(float))
    ch = knn.predict(_Inputs(pool.embeddings[test]))
    Ot = O[test]
    want = certify.paired_comparison(Ot[np.arange(150), ch], Ot[:, b], 0.05, oracle=Ot.any(axis=1), n_boot=200, seed=rng)
    row = r["levels"]["0.1"]
    assert row["baseline_policy"] == pool.policy_names[b]
    assert (row["difference"], row["diff_lo"], row["diff_hi"], row["n10"], row["n01"], row["p_mcnemar"]) == (
        want.difference.value, want.difference.lo, want.difference.hi, want.n10, want.n01, want.p_mcnemar)
    assert row["p_holm"] == want.p_mcnemar  # one level: Holm changes nothing


@pytest.mark.skipif(_routers_available(), reason="the routers module is present")
def test_router_section_says_why_when_routers_are_absent():
    res = audit.run_audit(predictable_pool(), small=True)
    r = res.numbers["router"]
    assert not r["available"] and "routers" in r["reason"]
    assert res.verdict.code == "certified"
    assert "No quick router" in audit.texts(res.numbers)["router"]


def test_router_needs_text_or_embeddings():
    r = audit.quick_router(exchangeable_pool(), [0.1], ["0.1"], alpha=0.05, seed=0, n_boot=100)
    assert not r["available"] and "neither prompt text nor embeddings" in r["reason"]


def test_verdict_rule_order():
    """Each rule on numbers edited from one audit: the first rule that applies gives the code."""
    base = audit.run_audit(exchangeable_pool(), small=True).to_json()
    keys = list(base["coverage"]["taus"])

    def code(edit):
        j = copy.deepcopy(base)
        edit(j)
        return audit.verdict(j).code

    def nulls_(rd, mg):
        def f(j):
            j["nulls"]["redeal_taus"], j["nulls"]["margin_taus"] = rd, mg
            j["nulls"]["detected_taus"] = [x for x in rd if x in mg]
        return f

    def with_quality(edit):
        def f(j):
            edit(j)
            j["nulls"]["quality"]["reject"] = True
        return f

    assert code(lambda j: None) == "noise"
    assert code(with_quality(nulls_([], []))) == "quality-only"
    assert code(with_quality(nulls_(keys[:2], []))) == "quality-only"
    assert code(nulls_(keys[:2], [])) == "inconclusive"  # the re-deal null alone: not evidence of quality
    assert code(nulls_(keys[:1], keys[1:2])) == "inconclusive"

    def detected(certified, luck=False, beats=False):
        def f(j):
            nulls_(keys, keys)(j)
            for key in keys:
                j["certificates"]["levels"][key]["certified"] = certified
            j["noise"]["luck"] = luck
            if beats:
                j["router"] = {"available": True, "family": "embed_knn", "n_test": 10, "beats_at": keys[:1],
                               "levels": {key: {"accuracy": 0.6, "baseline_accuracy": 0.5, "baseline_policy": "m0",
                                                "difference": 0.1, "diff_lo": 0.01, "diff_hi": 0.2, "p_mcnemar": 0.01,
                                                "p_holm": 0.02, "e_D": 0.1, "break_even": 0.3, "beats": key in keys[:1]}
                                          for key in keys}}
        return f

    assert code(detected(False)) == "detected-not-certified"
    assert code(detected(True)) == "certified"
    assert code(detected(True, luck=True)) == "luck"
    assert code(detected(False, luck=True)) == "luck"
    assert code(detected(True, luck=True, beats=True)) == "certified-recoverable"

    def no_gap(j):
        for row in j["coverage"]["taus"].values():
            row["D"] = 0.0

    assert code(no_gap) == "no-gap"
    assert set(audit.VERDICTS) >= {"no-gap", "noise", "quality-only", "inconclusive", "certified-recoverable", "luck",
                                   "certified", "detected-not-certified"}


# ---------------------------------------------------------------------------- writing the folder
def test_write_audit_json_only_and_atomic(tmp_path):
    pool = exchangeable_pool()
    out = tmp_path / "rep"
    res, info = audit.write_audit(pool, out, report=False, small=True)
    written = json.loads((out / "audit.json").read_text())
    assert set(written.pop("build")) >= {"commit", "lock_sha256", "versions", "date", "small"}  # what computed it
    assert written == res.to_json()
    assert audit.load_numbers(out / "audit.json")["format"] == audit.FORMAT_NAME
    assert audit.is_audit_dir(out)
    # an audit folder is replaced; nothing is left beside it
    audit.write_audit(pool, out, report=False, small=True, seed=1)
    assert audit.load_numbers(out / "audit.json")["settings"]["seed"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]
    # a folder that is not an audit is refused, untouched
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    with pytest.raises(ValueError, match="not an audit directory"):
        audit.write_audit(pool, other, report=False, small=True)
    assert (other / "notes.txt").read_text() == "keep"
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        audit.write_audit(pool, f, report=False, small=True)


def test_failed_report_leaves_nothing(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("kernel died")

    monkeypatch.setattr(audit.write, "_execute", boom)  # looked up where write_audit runs
    out = tmp_path / "rep"
    with pytest.raises(ValueError, match="report notebook failed.*kernel died"):
        audit.write_audit(identical_pool(), out, small=True)
    assert list(tmp_path.iterdir()) == []


def test_load_numbers_refuses_other_files(tmp_path):
    (tmp_path / "a.json").write_text('{"format": "something"}')
    with pytest.raises(ValueError, match="not an oraclegap audit"):
        audit.load_numbers(tmp_path / "a.json")
    (tmp_path / "b.json").write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        audit.load_numbers(tmp_path / "b.json")
    with pytest.raises(ValueError, match="does not exist"):
        audit.load_numbers(tmp_path / "c.json")


def test_notebook_ships_inside_the_package():
    src = audit.notebook_source()
    assert src.is_file() and src.parent.name == "notebooks" and src.parent.parent.name == "oraclegap"
    import jupytext

    nb = jupytext.read(src)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and "AUDIT_JSON" in params[0].source and "SMALL" in params[0].source


@pytest.mark.slow
@pytest.mark.external
def test_math500_k30(external_dir):
    from oraclegap import datasets

    pool = datasets.load("chen2026-math500")
    res = audit.run_audit(pool, small=True)
    j = res.to_json()
    assert j["pool"]["k"] == 30 and j["pool"]["alignment"] == "seed-aligned"
    dec = j["noise"]["decomposition"]["estimates"]
    # the released tensors' headline numbers (paper 001 via its review): best 0.773, O_repro 0.837, O_exp 0.873
    assert dec["best_single"]["value"] == pytest.approx(0.773, abs=5e-4)
    assert dec["o_repro"]["value"] == pytest.approx(0.837, abs=5e-4)
    assert dec["o_exp"]["value"] == pytest.approx(0.873, abs=5e-4)
    assert not j["noise"]["luck"]
    assert res.verdict.code in ("certified", "certified-recoverable")


def _tiny_notebook(path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("1 + 1")]
    nb.cells[1].outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1)]
    nbformat.write(nb, path)
    return path


def test_find_quarto_prefers_path(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "quarto"
    script.write_text("#!/bin/sh\necho 1.7.34\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    assert audit._find_quarto() == str(script)


@pytest.mark.parametrize("quarto_rc", [0, 1])
def test_render_report_quarto_or_fallback(tmp_path, monkeypatch, quarto_rc):
    """Quarto is used when it is on PATH and succeeds; otherwise nbconvert renders the page."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "quarto"
    script.write_text("#!/bin/sh\n"
                      'while [ "$#" -gt 0 ]; do if [ "$1" = "--output" ]; then out="$2"; fi; shift; done\n'
                      f'[ {quarto_rc} -eq 0 ] && echo "<html>by quarto</html>" > "$out"\n'
                      f"exit {quarto_rc}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    monkeypatch.setattr(audit.write, "_find_quarto", lambda: str(script))  # not the project's installed kit
    work = tmp_path / "work"
    work.mkdir()
    nb = _tiny_notebook(work / "audit.ipynb")
    html = tmp_path / "report.html"
    used = audit.render_report(nb, html)
    assert used == ("quarto" if quarto_rc == 0 else "nbconvert")
    text = html.read_text()
    assert ("by quarto" in text) == (quarto_rc == 0)
    if quarto_rc:
        assert "Title" in text and "1 + 1" not in text  # code cells hidden in the report


def test_real_routers_recover_predictable_specialists():
    """With the library's routers (oraclegap.deploy.routers), the quick router on the features of a
    predictable-specialist pool beats the calibration-selected member."""
    pytest.importorskip("oraclegap.deploy.routers", reason="oraclegap.deploy.routers is not in this version")
    res = audit.run_audit(predictable_pool(), small=True)
    r = res.numbers["router"]
    assert r["available"] and r["family"] == "embed_knn"
    assert res.verdict.code == "certified-recoverable"
    text = audit.texts(res.numbers)["router"]
    assert "prompt embeddings" in text and "embed_knn" not in text and "held-out prompts" in text


@pytest.mark.slow
def test_notebook_runs_standalone_on_a_pool(tmp_path):
    """pip-install users can run the shipped notebook on any POOL without audit.json."""
    import shutil

    import nbformat

    from oraclegap import book

    pool = simulate.exchangeable(80, 3, 6, seed=1).pool
    pool.save(tmp_path / "pool")
    src = tmp_path / "audit_copy.py"
    shutil.copyfile(audit.notebook_source(), src)
    out = tmp_path / "out.ipynb"
    book.execute_chapter(src, out, {"POOL": str(tmp_path / "pool"), "SMALL": True, "TAUS": "0.1,0.3", "SEED": 4},
                         cwd=tmp_path)
    nb = nbformat.read(out, as_version=4)
    assert book.error_outputs(nb) == []
    shown = "\n".join(o["data"]["text/markdown"] for c in nb.cells for o in c.get("outputs", [])
                      if "text/markdown" in o.get("data", {}))
    want = audit.run_audit(pool, "0.1,0.3", 0.05, 4, small=True, source=str(tmp_path / "pool"))
    assert latex(want.verdict.headline) in shown and audit.texts(want.to_json())["coverage"] in shown


def test_router_failure_is_reported_not_raised(monkeypatch, fake_routers):
    def broken(name, **params):
        raise ValueError("no usable inputs")

    monkeypatch.setattr(fake_routers, "make_router", broken)
    r = audit.quick_router(predictable_pool(), [0.1], ["0.1"], alpha=0.05, seed=0, n_boot=100)
    assert not r["available"] and "could not be fitted (no usable inputs)" in r["reason"]


# ---------------------------------------------------------------------------- more responses
def test_draws_sweep_audits_nested_subsets():
    pool = simulate.specialists(80, 3, 8, f=0.5, s=0.3, seed=5).pool
    rows, res = audit.draws_sweep(pool, [2, 8], small=True, seed=1)
    assert rows["k"].tolist() == [2, 8] and sorted(res) == [2, 8]
    for k in (2, 8):  # each row is the audit of the first k draws, summarised from its own numbers
        want = audit.run_audit(pool.draws(np.arange(k)), small=True, seed=1)
        assert res[k].to_json() == want.to_json()
        got = rows.set_index("k").loc[k]
        s = audit.summary(want)
        assert got["code"] == s["code"] == want.verdict.code
        assert got["L"] == want.numbers["coverage"]["taus"][want.numbers["coverage"]["primary_key"]]["L"]
        holm = [row["redeal"]["p_holm"] for row in want.numbers["nulls"]["L"].values() if "p_holm" in row["redeal"]]
        assert s["p_redeal"] == min(holm)
        cur = want.numbers["power"]["current"]
        assert (s["power"], s["power_lo"], s["power_hi"], s["power_state"]) == (
            cur["power"]["redeal"], *cur["interval"]["redeal"], cur["state"])
        assert s["k_needed"] == want.numbers["power"]["plan_k"]["required"]["redeal"]
    k1 = audit.summary(audit.run_audit(pool.draws([0]), small=True))  # k = 1: no nulls, no power of this design
    assert np.isnan(k1["p_redeal"]) and np.isnan(k1["power"]) and k1["power_state"] is None
    for bad, match in (([2, 16], "holds k = 8"), ([2, 2], "distinct"), ([0], "ks")):
        with pytest.raises(ValueError, match=match):
            audit.draws_sweep(pool, bad, small=True)
    with pytest.raises(TypeError, match="Pool"):
        audit.draws_sweep(pool.verdicts, [2])


def test_planted_duplicates_across_the_split_are_reported_as_leakage():
    """Copies of prompts planted on both sides of the quick router's split show up in the
    audit's integrity section as leakage; the stored lab pool has none."""
    from oraclegap import datasets

    pool = datasets.load("lab-seed-primary")
    clean = audit.run_audit(pool, small=True, seed=1)
    assert clean.numbers["integrity"]["leakage"] is False
    prompts = pool.prompts.copy()
    prompts.loc[1:30, "text"] = prompts.loc[0, "text"]  # 31 copies of one prompt: both halves get some
    planted = audit.run_audit(dataclasses.replace(pool, prompts=prompts), small=True, seed=1)
    ig = planted.numbers["integrity"]
    assert ig["leakage"] is True and any(f.startswith("leakage") for f in ig["findings"])
    assert "leakage" in audit.texts(planted.numbers)["integrity"]
