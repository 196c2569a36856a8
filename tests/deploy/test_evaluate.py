"""Router evaluation (oraclegap.deploy.evaluate): the routing identity for every fitted router,
gains against both comparators, the vectorised bootstrap, paired inference against the
calibration-selected member, the family certificate, cost metrics on hand-computed examples,
planted specialists (gain above zero) and exchangeable pools (no family above zero more often
than the nominal rate)."""

from __future__ import annotations

import dataclasses
import gc

import numpy as np
import pytest
from scipy.stats import binom

from oraclegap.deploy.evaluate import (
    aiq,
    apgr,
    bootstrap_means,
    bootstrap_means_loop,
    cpt,
    evaluate_router,
    evaluate_routers,
    gain_at_b,
    gap_at_o,
    make_protocol,
    outcome_matrix,
    pgr_curve,
)
from oraclegap.deploy.routers import (
    FAMILIES,
    POST_INFERENCE,
    PRE_ANSWER,
    router_inputs,
    simulated_router_pool,
)
from oraclegap.pool import Pool
from oraclegap.stats.certify import paired_comparison
from oraclegap.stats.coverage import need

FAST = {
    "gbr_features": {"max_iter": 20},
    "paper000_boosted": {"n_estimators": 20},
    "mlp": {"max_iter": 60},
    "encoder_head": {"epochs": 5},
    "matrix_factorization": {"max_iter": 60},
}


def _with_cost(pool, seed=0):
    rng = np.random.default_rng(seed)
    M = pool.n_policies
    cost = (2.0 ** np.arange(M))[None, :] * rng.uniform(0.5, 1.5, (pool.n_prompts, M))
    return dataclasses.replace(pool, cost=cost)


@pytest.fixture(scope="module")
def planted_k1():
    sim = simulated_router_pool(320, 4, 1, strength=0.3, seed=11)
    return sim, router_inputs(sim.pool, confidence=sim.info["confidence"])


@pytest.fixture(scope="module")
def full_split(planted_k1):
    sim, X = planted_k1
    return evaluate_routers(_with_cost(sim.pool), None, split="half", seed=0, inputs=X, params=FAST, n_boot=500)


# ---------------------------------------------------------------------------- the routing identity, everywhere
def test_every_family_ran_on_the_planted_pool(full_split):
    assert set(full_split.evaluations) == set(FAMILIES) and not full_split.skipped


@pytest.mark.parametrize("case", ["k1-split", "k1-cv", "k8-tau-cv", "exchangeable-k4-split"])
def test_routing_identity_holds_for_every_fitted_router(case, planted_k1, full_split):
    if case == "k1-split":
        res, pool, tau = full_split, _with_cost(planted_k1[0].pool), None
    else:
        if case == "k1-cv":
            pool, tau, kw = planted_k1[0].pool, None, {"cv": 4}
        elif case == "k8-tau-cv":
            pool, tau, kw = simulated_router_pool(160, 3, 8, seed=5).pool, 0.3, {"cv": 3}
        else:
            pool, tau, kw = simulated_router_pool(160, 3, 4, kind="exchangeable", seed=6).pool, 0.5, {"split": "half"}
        res = evaluate_routers(pool, None, tau=tau, params=FAST, n_boot=200, seed=1, **kw)
    O, t = outcome_matrix(pool, tau)
    ev = res.protocol.eval_idx
    Oe = O[ev]
    orac = Oe.any(axis=1).mean()
    dis = Oe.any(axis=1) & ~Oe.all(axis=1)
    for f, e in res.evaluations.items():
        routed = Oe[np.arange(ev.size), e.choice].mean()
        assert e.accuracy == pytest.approx(routed, abs=1e-15)
        e_D = (~Oe[np.arange(ev.size), e.choice])[dis].mean()
        assert e.e_D == pytest.approx(e_D, abs=1e-15), f
        assert abs((orac - routed) - dis.mean() * e_D) <= 1e-12, f  # C_orac - C_r = D e_D
        assert abs(e.identity_residual) <= 1e-12, f
        assert e.gain_best == pytest.approx(routed - Oe.mean(axis=0).max(), abs=1e-15)
        assert e.gain_best == pytest.approx(e.L - e.D * e.e_D, abs=1e-12)  # the gain is L - D e_D
        assert e.break_even == pytest.approx(e.L / e.D)


def test_cross_fitting_predicts_every_prompt_out_of_fold(planted_k1):
    sim, X = planted_k1
    pool = sim.pool
    res = evaluate_routers(pool, ["embed_knn"], cv=4, seed=3, inputs=X, n_boot=200)
    proto = make_protocol(pool, cv=4, seed=3)
    assert proto.n_eval == pool.n_prompts and sorted(np.concatenate([t for _, t in proto.folds]).tolist()) == list(range(pool.n_prompts))
    cal, test = proto.folds[2]
    from oraclegap.deploy.routers import make_router

    r = make_router("embed_knn").fit(X.take(cal), pool.verdicts[cal, :, 0].astype(float))
    np.testing.assert_array_equal(res.evaluation("embed_knn").choice[test], r.predict(X.take(test)))
    assert res.certificate is None and "cross-fitting" in res.certificate_note


def test_same_seed_same_numbers_and_the_split_is_released(planted_k1):
    sim, X = planted_k1
    a = evaluate_routers(sim.pool, ["tfidf_knn", "mlp"], split="half", seed=7, inputs=X, params=FAST, n_boot=300)
    b = evaluate_routers(sim.pool, ["tfidf_knn", "mlp"], split="half", seed=7, inputs=X, params=FAST, n_boot=300)
    assert a.full_frame().drop(columns="fit_seconds").equals(b.full_frame().drop(columns="fit_seconds"))
    c = evaluate_routers(sim.pool, ["tfidf_knn"], split="half", seed=8, inputs=X, n_boot=300)
    assert not np.array_equal(a.protocol.eval_idx, c.protocol.eval_idx)
    assert "seed 7" in a.protocol.describe() and a.protocol.n_eval == 160


# ---------------------------------------------------------------------------- comparisons and paired inference
def test_paired_inference_matches_certify(full_split, planted_k1):
    pool = planted_k1[0].pool
    ev = full_split.protocol.eval_idx
    O = pool.verdicts[ev, :, 0]
    cal = full_split.protocol.folds[0][0]
    b = int(np.argmax(pool.verdicts[cal, :, 0].mean(axis=0)))
    base = full_split.evaluation("best_single")
    assert base.baseline_member == pool.policy_names[b] and base.gain_cal == 0 and base.gain_best_hi <= 0
    pre = [f for f, e in full_split.evaluations.items() if e.regime == "pre-answer" and f != "best_single"]
    for f in ("embed_knn", "dataset", "plurality_vote"):
        e = full_split.evaluation(f)
        S = O[np.arange(ev.size), e.choice]
        pc = paired_comparison(S, O[:, b], oracle=O.any(axis=1), n_boot=200)
        assert (e.n10, e.n01) == (pc.n10, pc.n01) and e.p_mcnemar == pytest.approx(pc.p_mcnemar)
        assert e.gain_cal == pytest.approx(pc.difference.value) and e.G_b == pytest.approx(pc.G_b.value)
        assert e.rescue - e.loss == pytest.approx(e.gain_cal)
        assert e.p_holm >= e.p_mcnemar
        if f != "plurality_vote":
            assert e.p_holm <= min(1.0, len(pre) * e.p_mcnemar) + 1e-12
        assert np.isnan(e.recovered) == (not e.G_b_lo > 0)
        assert e.accuracy_lo <= e.accuracy <= e.accuracy_hi
        assert e.gain_cal_lo <= e.gain_cal <= e.gain_cal_hi
    assert full_split.evaluation("plurality_vote").regime == "post-inference"
    assert set(POST_INFERENCE) <= set(full_split.paired.query("regime == 'post-inference'")["policy"])


def test_family_certificate_over_the_predeclared_family(full_split):
    cert = full_split.certificate
    pre = [f for f, e in full_split.evaluations.items() if e.regime == "pre-answer" and f != "best_single"]
    assert cert.L == 4 + len(pre) and cert.K == 4 and cert.n == full_split.protocol.n_eval
    assert 0 <= cert.G.lo <= cert.G.value <= cert.G.hi and cert.H.lo <= cert.H.value <= cert.H.hi
    best = max(full_split.evaluation(f).accuracy for f in pre + ["best_single"])
    assert cert.best_family >= best - 1e-12  # the constants can only add


def test_gain_intervals_re_select_the_best_member(planted_k1):
    sim, X = planted_k1
    res = evaluate_routers(sim.pool, ["embed_knn"], split="half", seed=0, inputs=X, n_boot=400)
    e = res.evaluation("embed_knn")
    ev = res.protocol.eval_idx
    O = sim.pool.verdicts[ev, :, 0].astype(float)
    S = O[np.arange(ev.size), e.choice]
    # reproduce the interval: the same resamples, best member re-selected in each one
    draws = bootstrap_means(np.column_stack([O, S]), 400, np.random.default_rng(np.random.SeedSequence([0, 3]).spawn(2)[0]))
    fixed = draws[:, 4] - draws[:, int(np.argmax(O.mean(axis=0)))]
    resel = draws[:, 4] - draws[:, :4].max(axis=1)
    lo, hi = np.quantile(resel, [0.025, 0.975])
    assert (e.gain_best_lo, e.gain_best_hi) == pytest.approx((lo, hi))
    assert (resel <= fixed + 1e-15).all()  # re-selection shifts every resample against the router


def test_vectorised_bootstrap_equals_the_loop():
    rng = np.random.default_rng(1)
    Z = (rng.random((137, 5)) < 0.4).astype(float)
    a = bootstrap_means(Z, 700, seed=42, chunk=256)
    b = bootstrap_means_loop(Z, 700, seed=42)
    assert np.array_equal(a, b)  # the same resamples; 0/1 columns are summed exactly by both
    assert a.mean(axis=0) == pytest.approx(Z.mean(axis=0), abs=0.01)



# ---------------------------------------------------------------------------- the Done-when truths
@pytest.mark.parametrize("k,tau", [(1, None), (8, 0.5)])
def test_planted_specialists_identity_and_nn_gain_above_zero(k, tau):
    sim = simulated_router_pool(400, 4, k, strength=0.3, seed=21)
    res = evaluate_routers(sim.pool, ["dataset", "embed_knn", "tfidf_knn"], tau=tau, split="half", seed=0, n_boot=1000)
    for f in ("dataset", "embed_knn", "tfidf_knn"):
        e = res.evaluation(f)
        assert e.gain_best_lo > 0, (f, e.gain_best, e.gain_best_lo)
        assert e.gain_cal_lo > 0 and e.e_D < e.break_even
    cert = res.certificate  # Thm 6 spends alpha / (3L) per policy: its estimate sees the gain, its limits are wide
    assert cert.G.value == pytest.approx(max(res.evaluation(f).accuracy for f in res.evaluations) - res.evaluation("best_single").best)
    assert cert.G.lo <= cert.G.value <= cert.G.hi


@pytest.mark.slow
def test_exchangeable_pools_no_family_above_zero_more_often_than_nominal():
    """>= 100 exchangeable pools (population gain of every pre-answer rule = 0): for every
    pre-answer family the share of pools whose 95% interval lies wholly above zero is compatible
    with the one-sided nominal 2.5% (exact binomial upper tail, Bonferroni over families and both
    comparators). Post-inference selectors are exempt: they read the realised answers, which carry
    the outcome, so they can beat every member even here."""
    n_pools, alpha = 100, 0.05
    above_best, above_cal = {}, {}
    gc.freeze()  # statsmodels' Holm runs gc.collect(); keep the long-lived objects out of it
    for s in range(n_pools):
        sim = simulated_router_pool(120, 3, 1, kind="exchangeable", seed=1000 + s)
        X = router_inputs(sim.pool)
        fams = [f for f in PRE_ANSWER if f != "cheapest"]
        res = evaluate_routers(sim.pool, fams, split="half", seed=s, inputs=X, params=FAST, n_boot=400, alpha=alpha)
        for f, e in res.evaluations.items():
            above_best[f] = above_best.get(f, 0) + int(e.gain_best_lo > 0)
            above_cal[f] = above_cal.get(f, 0) + int(e.gain_cal_lo > 0)
    gc.unfreeze()
    print("\nexchangeable pools, intervals above zero (best / calibration-selected):",
          {f: (above_best[f], above_cal[f]) for f in above_best})
    fams = list(above_best)
    assert len(fams) == len(PRE_ANSWER) - 1  # every pre-answer family but 'cheapest' (no costs)
    tests = 2 * len(fams)
    for f in fams:
        for count in (above_best[f], above_cal[f]):
            p_upper = binom.sf(count - 1, n_pools, alpha / 2)  # P(X >= count) at the nominal rate
            assert p_upper > 0.01 / tests, (f, above_best[f], above_cal[f])
        assert above_best[f] <= above_cal[f] or above_best[f] <= 2  # re-selection only makes it harder
    # the identity and nearest-neighbour routers, whose gains the planted pools resolve, stay at chance here
    assert max(above_cal["dataset"], above_cal["embed_knn"]) / n_pools <= 0.08


# ---------------------------------------------------------------------------- cost-aware metrics
def test_aiq_hand_examples():
    assert aiq([0, 1, 2], [0.2, 0.3, 0.8]) == pytest.approx(0.5)  # (1, .3) lies under the hull
    assert aiq([0, 1, 2], [0.2, 0.5, 0.6]) == pytest.approx(0.45)  # (0.35 + 0.55) / 2
    assert aiq([0, 2], [0.5, 0.4]) == pytest.approx(0.5)  # non-decreasing: flat after the peak
    assert aiq([1, 2], [0.4, 0.6], 0, 2) == pytest.approx(0.25)  # nothing reachable below cost 1
    assert aiq([0, 1, 2, 1.5], [0.2, 0.5, 0.6, 0.3]) == pytest.approx(0.45)  # a dominated point changes nothing
    c = np.array([[0, 1, 2], [0, 1, 2]])
    q = np.array([[0.2, 0.3, 0.8], [0.2, 0.5, 0.6]])
    np.testing.assert_allclose(aiq(c, q), [0.5, 0.45])


def _envelope(c: np.ndarray, q: np.ndarray, x: np.ndarray) -> np.ndarray:
    """R~(x) = max{quality of a mixture of the points with cost <= x} for points (c, q)[..., P]
    at x[..., E]; 0 where no point costs <= x. The definition taken over every pair of points
    (O(E P^2) per curve): the reference for :func:`aiq`'s compiled hull."""
    cj = c[..., None, :]
    qj = q[..., None, :]
    X = x[..., :, None]
    pt = np.where(cj <= X, qj, -np.inf).max(axis=-1)
    c1, c2 = c[..., None, :, None], c[..., None, None, :]
    q1, q2 = q[..., None, :, None], q[..., None, None, :]
    Xp = x[..., :, None, None]
    ok = (c1 < c2) & (c1 <= Xp) & (Xp <= c2)
    with np.errstate(invalid="ignore", divide="ignore"):
        seg = q1 + (q2 - q1) * (Xp - c1) / np.where(c2 > c1, c2 - c1, 1.0)
    seg = np.where(ok, seg, -np.inf).reshape(*seg.shape[:-2], -1).max(axis=-1)
    out = np.maximum(pt, seg)
    return np.where(np.isfinite(out), out, 0.0)


def _aiq_pairs(c: np.ndarray, q: np.ndarray, lo: np.ndarray, hi: np.ndarray, chunk: int = 128) -> np.ndarray:
    """:func:`aiq`'s integral with R~ from :func:`_envelope` (every pair of points) for curves
    c, q [N, P] over [lo, hi] [N]: the reference the compiled hull is tested against
    (the same pieces, the same midpoints)."""
    out = np.empty(c.shape[0])
    for s in range(0, c.shape[0], chunk):
        sl = slice(s, s + chunk)
        e = np.sort(np.concatenate([np.clip(c[sl], lo[sl, None], hi[sl, None]), lo[sl, None], hi[sl, None]], axis=1), axis=1)
        mid = 0.5 * (e[:, 1:] + e[:, :-1])
        area = (np.diff(e, axis=1) * _envelope(c[sl], q[sl], mid)).sum(axis=1)
        span = hi[sl] - lo[sl]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[sl] = np.where(span > 0, area / np.where(span > 0, span, 1.0), _envelope(c[sl], q[sl], hi[sl, None])[:, 0])
    return out


def test_aiq_hull_equals_the_definition_over_every_pair():
    """The compiled hull integral against R~ taken over every pair of points (the definition), on
    random curves with tied costs, tied qualities, one point, ranges wider than the points and
    empty ranges; and an exact integral on a hand curve with a dominated point between the pieces."""
    rng = np.random.default_rng(7)
    for P in (1, 2, 3, 5, 23, 40):
        c = np.round(rng.random((200, P)) * 4, 1)  # one decimal: many equal costs
        q = np.round(rng.random((200, P)), 1)
        lo = np.maximum(c.min(axis=1) - rng.random(200) * (rng.random(200) < 0.5), 0.0)
        hi = c.max(axis=1) + rng.random(200) * (rng.random(200) < 0.5)
        hi[::9] = lo[::9]  # empty ranges: R~ at the point
        np.testing.assert_allclose(aiq(c, q, lo, hi), _aiq_pairs(c, q, lo, hi), rtol=0, atol=1e-12)
    # (0, .1) (1, .7) (2, .4) (3, .9): hull (0,.1)-(1,.7)-(3,.9), (2, .4) under it; on [0, 4]:
    # 0.4 + 1.6 + 0.9 (at 4, flat) = 2.9 over a width of 4
    assert aiq([2, 0, 3, 1], [0.4, 0.1, 0.9, 0.7], 0, 4) == pytest.approx((0.4 + 1.6 + 0.9) / 4, abs=1e-15)


def test_pgr_apgr_cpt_hand_examples():
    pgr = pgr_curve([4, 2, 3, 1], [1, 1, 1, 0], [0, 1, 0, 0], fractions=[0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_allclose(pgr, [0, 0.5, 1, 1, 1])
    fr = [0, 0.25, 0.5, 0.75, 1]
    assert apgr(pgr, fr) == pytest.approx(0.75)
    assert cpt(pgr, fr) == pytest.approx(0.25)
    assert cpt([0, 0.2, 0.6, 0.9, 1], fr) == pytest.approx(0.25 + 0.25 * 0.3 / 0.4)
    assert np.isnan(cpt([0, 0.1, 0.2, 0.3, 0.4], fr))
    assert np.isnan(pgr_curve([1, 2], [0, 0], [1, 0], [0, 1])).all()  # the strong member is not stronger
    assert float(gain_at_b(0.66, 0.60)) == pytest.approx(0.10) and float(gap_at_o(0.66, 0.88)) == pytest.approx(0.25)


def test_cost_frontier_and_summaries(full_split, planted_k1):
    cost = full_split.cost
    assert cost is not None and cost.weak == "m0"  # the cheapest member
    fr = cost.frontier
    lam = cost.lambdas
    for f in ("embed_knn", "best_single", "cheapest", "dataset"):
        rows = fr[fr.family == f]
        assert rows["lambda"].tolist() == lam.tolist()
        assert rows["quality"].iloc[0] == pytest.approx(full_split.evaluation(f).accuracy)  # lambda = 0 is the router itself
        assert rows["cost"].iloc[-1] == pytest.approx(cost.members["mean_cost"].iloc[0])  # lambda -> inf: the cheapest member
    chp = fr[fr.family == "cheapest"]
    assert chp["cost"].nunique() == 1
    s = full_split.summary().set_index("family")
    for f in ("embed_knn", "dataset", "random"):
        assert s.loc[f, "aiq_lo"] <= s.loc[f, "aiq"] + 1e-9 and s.loc[f, "aiq"] <= s.loc[f, "aiq_hi"] + 1e-9
    assert s.loc["dataset", "aiq"] > s.loc["cheapest", "aiq"]
    assert s.loc["dataset", "gain_at_b"] == pytest.approx(
        (s.loc["dataset", "accuracy"] - full_split.evaluation("dataset").best) / full_split.evaluation("dataset").best)


# ---------------------------------------------------------------------------- bad inputs
def test_evaluation_bad_inputs(planted_k1):
    sim, X = planted_k1
    pool = sim.pool
    with pytest.raises(ValueError, match="pass tau"):
        evaluate_routers(simulated_router_pool(40, 3, 4, seed=0).pool, ["embed_knn"])
    with pytest.raises(ValueError, match="calibration split has no prompts"):
        all_test = Pool.from_array(pool.verdicts, pool.prompts.assign(split="test"), pool.policies, embeddings=pool.embeddings)
        evaluate_routers(all_test, ["embed_knn"], split="test")
    with pytest.raises(ValueError, match="unknown split"):
        evaluate_routers(pool, ["embed_knn"], split="validation", inputs=X)
    with pytest.raises(ValueError, match="needs prompt text"):
        bare = Pool.from_array(pool.verdicts, pool.prompts.drop(columns=["text"]), pool.policies, embeddings=pool.embeddings)
        evaluate_routers(bare, ["tfidf_logreg"])
    with pytest.raises(ValueError, match="nothing to route on"):
        evaluate_routers(Pool.from_array(pool.verdicts), None)
    with pytest.raises(ValueError, match="shape"):
        evaluate_routers(pool, ["embed_knn"], inputs=X, cost=np.ones((3, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        evaluate_routers(pool, ["embed_knn"], inputs=X, cost=-np.ones(4))
    with pytest.raises(ValueError, match=">= 0"):
        evaluate_routers(_with_cost(pool), ["embed_knn"], inputs=X, lambdas=[0, -1])
    with pytest.raises(ValueError, match="policy columns"):
        evaluate_routers(pool, ["embed_knn"], inputs=X, targets=np.zeros((pool.n_prompts, 3)))
    with pytest.raises(ValueError, match="rows but the inputs"):
        evaluate_routers(pool, ["embed_knn"], inputs=X, targets=np.zeros((5, 4)))
    with pytest.raises(ValueError, match="at least two policies"):
        evaluate_routers(pool.select(policies=[0]), ["embed_knn"], inputs=X)
    with pytest.raises(ValueError, match="unknown router family"):
        evaluate_routers(pool, ["oracle"], inputs=X)
    with pytest.raises(ValueError, match="inputs describe"):
        evaluate_routers(pool, ["embed_knn"], inputs=X.take(np.arange(10)))
    e = evaluate_router("embed_knn", pool, inputs=X, split="half", n_boot=200)
    assert e.family == "embed_knn" and e.tau is None
    # the comparator is always evaluated first, wherever it is named
    r = evaluate_routers(pool, ["embed_knn", "best_single"], inputs=X, split="half", n_boot=200)
    assert list(r.evaluations)[0] == "best_single" and r.evaluation("embed_knn").gain_cal == pytest.approx(e.gain_cal)
    # k > 1: the coverage rule is the library's count rule
    p8 = simulated_router_pool(60, 3, 8, seed=2).pool
    O, t = outcome_matrix(p8, 0.3)
    np.testing.assert_array_equal(O, p8.counts() >= need(0.3, 8))


def test_aiq_compiles_one_kernel_for_any_range():
    """A scalar range reaches the hull kernel as a read-only broadcast unless copied; numba would
    then compile (and ``make setup``'s warm-up miss) a second version of it. One version serves
    the default range, scalar ranges and per-curve ranges, with the definition's values."""
    from oraclegap.deploy import evaluate

    c, q = np.array([[0.0, 1.0, 2.0]]), np.array([[0.2, 0.3, 0.8]])
    assert evaluate.aiq(c[0], q[0]) == pytest.approx(0.5)  # the docstring's hand example
    assert evaluate.aiq(c[0], q[0], 0.0, 2.0) == pytest.approx(0.5)
    np.testing.assert_allclose(evaluate.aiq(c, q, np.array([0.0]), np.array([2.0])), [0.5])
    ro = np.broadcast_to(c, (2, 3))  # read-only costs
    np.testing.assert_allclose(evaluate.aiq(ro, np.broadcast_to(q, (2, 3))), [0.5, 0.5])
    assert len(evaluate.metrics._aiq_rows.signatures) == 1


def test_the_baseline_member_is_the_one_the_baseline_uses():
    """At k > 1 the baseline (best single) selects on its training targets, success rates by
    default: where the rate-best member is not the coverage-best one, the member reported as the
    calibration-selected one is the member whose outcomes the baseline scores, and its gain is 0."""
    rng = np.random.default_rng(3)
    n, k = 400, 16
    p = np.empty((n, 2))
    p[:, 0] = 0.5  # the best mean rate, rarely 12 of 16 right
    p[:, 1] = np.where(rng.random(n) < 0.45, 0.95, 0.0)  # a lower mean rate, covered far more often
    pool = Pool.from_array(rng.random((n, 2, k)) < p[:, :, None])
    res = evaluate_routers(pool, ["best_single"], tau=0.7, split="half", seed=1, n_boot=100)
    base = res.evaluation("best_single")
    ev = res.protocol.eval_idx
    covered = pool.counts()[ev] >= 12  # need(0.7, 16) = 12
    m = pool.policy_names.index(base.baseline_member)
    assert m == 0  # the rate-best member, though member 1 covers more prompts
    assert covered[:, 1].mean() > covered[:, 0].mean()
    assert base.accuracy == pytest.approx(covered[:, m].mean()) and base.gain_cal == 0
