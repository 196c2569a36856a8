"""deploy/mixtures.py and the smoothed uniform mixture of stats/coverage.py (2609.32996 App. B.1):
the pooled-count posterior, rAUC contributions, the budget-matched mixture, the deployment
table, the soup hook, band sensitivity and votes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import hypergeom

from oraclegap.deploy import mixtures as mx
from oraclegap.pool import Pool
from oraclegap.stats import coverage as cov
from oraclegap.stats import simulate
from oraclegap.stats.noise import answer_codes, plurality_vote

G3K = cov.GEOMETRY3K_PRIOR


# ---------------------------------------------------------------------------- the smoothed mixture pools counts
def test_smoothed_mixture_uses_pooled_counts_paper_example():
    # App. B.1: counts (2, 2, 1, 1, 1) at k = 16 under Beta(0.347, 0.601); the pooled posterior
    # (7 + a)/(80 + a + b) = 0.0908 does not reach tau = 0.10, the member average (0.1031) would
    c = np.array([[2, 2, 1, 1, 1]])
    rate = cov.mixture_rates(c, 16, estimator="smoothed", prior=G3K)[0]
    assert rate == pytest.approx((7 + G3K.a) / (80 + G3K.a + G3K.b))
    assert round(rate, 4) == 0.0908
    assert G3K.posterior_mean(c, 16).mean() >= 0.10  # the average of the members' posterior means covers it
    tab = cov.coverage(c, [0.10], k=16, estimator="smoothed", prior=G3K)
    assert tab.mixture[0] == 0.0
    rt = cov.rauc_table(np.vstack([c, [[16, 16, 16, 16, 16]]]), (0.05, 0.30), k=16, estimator="smoothed", prior=G3K)
    mix = rt.set_index("kind").loc["mixture", "rauc"]
    both = cov.mixture_rates(np.vstack([c, [[16] * 5]]), 16, estimator="smoothed", prior=G3K)
    assert mix == pytest.approx(cov.rauc(both, (0.05, 0.30), k_eff=80))


def test_raw_mixture_unchanged_and_prior_fitted_once():
    rng = np.random.default_rng(0)
    c = rng.integers(0, 9, (50, 4))
    np.testing.assert_allclose(cov.mixture_rates(c, 8), (c / 8).mean(axis=1))
    prior = cov.fit_beta_prior(c, 8)
    np.testing.assert_allclose(cov.mixture_rates(c, 8, estimator="smoothed"), prior.posterior_mean(c.sum(axis=1), 32))
    with pytest.raises(ValueError, match="estimator"):
        cov.mixture_rates(c, 8, estimator="bayes")


@settings(max_examples=50, deadline=None)
@given(arrays(np.int64, st.tuples(st.integers(1, 30), st.integers(1, 5)), elements=st.integers(0, 12)),
       st.sampled_from([0.02, 0.05, 0.1, 0.15, 0.2]))
def test_smoothed_mixture_bound_still_holds(c, tau):
    # C_mix(tau) >= C_orac(M tau): (c_max + a)/(k + a + b) >= M tau implies (S + a)/(M k + a + b) >= tau
    M = c.shape[1]
    mb = cov.mixture_bound(c, [tau], k=12, estimator="smoothed", prior=G3K)
    assert bool(mb["holds"].iloc[0]) or M * tau > 1


# ---------------------------------------------------------------------------- rAUC contributions
@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.integers(1, 60), elements=st.floats(0, 1)), st.sampled_from([(0.05, 0.3), (0.5, 0.9), (0.1, 1.0)]))
def test_contributions_average_to_rauc(r, band):
    assert mx.rauc_contributions(r, band, k_eff=16).mean() == pytest.approx(cov.rauc(r, band, k_eff=16), abs=1e-12)
    assert mx.rauc_contributions(r, band, method="exact").mean() == pytest.approx(cov.rauc(r, band, method="exact"), abs=1e-12)


# ---------------------------------------------------------------------------- the budget-matched mixture
def test_matched_counts_follow_the_subsampling_law():
    # explicit subsampling of k of the M k outcomes versus the hypergeometric draws: same law
    rng = np.random.default_rng(1)
    c = np.array([[3, 0, 5], [8, 8, 8], [0, 0, 0], [1, 2, 0]])
    k, M = 8, 3
    draws = mx.matched_mixture_counts(c, 20000, seed=2, k=k)
    outcomes = [np.concatenate([np.r_[np.ones(ci), np.zeros(k - ci)] for ci in row]) for row in c]
    explicit = np.array([[rng.permutation(o)[:k].sum() for o in outcomes] for _ in range(20000)])
    for i in range(len(c)):
        pmf = hypergeom.pmf(np.arange(k + 1), M * k, c[i].sum(), k)
        for sample in (draws[:, i], explicit[:, i]):
            freq = np.bincount(sample.astype(int), minlength=k + 1) / len(sample)
            assert np.abs(freq - pmf).max() < 0.015


def test_matched_mixture_monte_carlo_converges_to_exact():
    sim = simulate.exchangeable(240, 5, 16, seed=3)
    exact = mx.matched_mixture(sim.pool, n_subsamples=None)
    mc = mx.matched_mixture(sim.pool, n_subsamples=200, seed=0)
    se = mc.subsample_rauc.std(ddof=1) / np.sqrt(200)
    assert abs(mc.rauc - exact.rauc) < 4 * se + 1e-9
    assert mc.prior == cov.fit_beta_prior(sim.pool)  # the split's fitted prior, as for one member
    assert exact.pass1 == pytest.approx(sim.pool.rates().mean())
    raw = mx.matched_mixture(sim.pool, estimator="raw", n_subsamples=None)
    assert raw.prior is None and 0 <= raw.rauc <= 1


def test_matched_mixture_coverage_table():
    sim = simulate.exchangeable(120, 4, 8, seed=4)
    t = mx.matched_mixture_coverage(sim.pool, [0.1, 0.3])
    full = cov.coverage(sim.pool, [0.1, 0.3], estimator="smoothed")
    np.testing.assert_allclose(t["mixture_all"], full.mixture)
    np.testing.assert_allclose(t["best_member"], full.best)
    assert ((t["mixture_matched"] >= 0) & (t["mixture_matched"] <= 1)).all()


# ---------------------------------------------------------------------------- the deployment table and the soup
def _pools(seed=0):
    test = simulate.exchangeable(240, 5, 16, seed=seed)
    val = simulate.exchangeable(240, 5, 16, seed=seed + 100)
    return test, val


def test_deployment_table_identities():
    test, val = _pools()
    t = mx.deployment_rules(test.pool, validation=val.pool, n_boot=400, seed=1)
    f = t.frame().set_index("kind")
    members = f.loc["member"]
    assert f.loc["best_test", "rauc"] == pytest.approx(members["rauc"].max())
    assert f.loc["oracle", "rauc"] >= members["rauc"].max()
    rt = cov.rauc_table(test.pool, estimator="smoothed").set_index("kind")
    assert f.loc["mixture_all", "rauc"] == pytest.approx(rt.loc["mixture", "rauc"])
    assert f.loc["oracle", "rauc"] == pytest.approx(rt.loc["oracle", "rauc"])
    np.testing.assert_allclose(members["rauc"].to_numpy(), rt.loc["member", "rauc"].to_numpy())
    row = f.loc["mixture_matched"]
    assert row["diff_test"] == pytest.approx(row["rauc"] - f.loc["best_test", "rauc"])
    assert row["diff_val"] == pytest.approx(row["rauc"] - f.loc["best_val", "rauc"])
    assert row["lo_test"] <= row["hi_test"] and row["lo_val"] <= row["diff_val"] <= row["hi_val"]
    assert f.loc["best_val", "lo_val"] == f.loc["best_val", "hi_val"] == 0.0
    assert t.val_member == val.pool.policy_names[int(mx.rauc_contributions(
        cov.member_rates(val.pool, estimator="smoothed"), k_eff=16).mean(axis=0).argmax())]
    again = mx.deployment_rules(test.pool, validation=val.pool, n_boot=400, seed=1).frame()
    assert again.equals(t.frame())


def test_soup_scored_through_the_member_path():
    # a "soup" whose verdicts equal member 2's must score exactly as member 2
    test, val = _pools(1)
    j = 2
    t = mx.score_soup(test.pool, test.pool.verdicts[:, j, :], validation=val.pool, n_boot=300, seed=2)
    f = t.frame()
    soup, member = f[f["system"] == "soup"].iloc[0], f[f["system"] == test.pool.policy_names[j]].iloc[0]
    for col in ("rauc", "pass1", "diff_test", "lo_test", "hi_test", "diff_val", "diff_mixture", "lo_mixture", "hi_mixture"):
        assert soup[col] == pytest.approx(member[col]), col
    assert t.test_member != "soup"
    as_pool = mx.score_soup(test.pool, Pool.from_array(test.pool.verdicts[:, j : j + 1, :]), n_boot=300, seed=2)
    assert as_pool.row("soup")["rauc"] == pytest.approx(soup["rauc"])


def test_band_sensitivity_rows():
    test, val = _pools(2)
    out = mx.band_sensitivity(test.pool, validation=val.pool, n_boot=300, seed=3)
    assert len(out) == len(mx.DEFAULT_BANDS) and list(out["lo_band"]) == [b[0] for b in mx.DEFAULT_BANDS]
    primary = mx.deployment_rules(test.pool, validation=val.pool, n_boot=300, seed=3).row("mixture_matched")
    assert out.iloc[0]["diff_test"] == pytest.approx(primary["diff_test"])
    assert (out["lo_test"] <= out["hi_test"]).all() and (out["lo_val"] <= out["hi_val"]).all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(band=(0.3, 0.05)), "band"),
        (dict(extra={"soup": np.zeros((10, 16), bool)}), "240 prompts"),
        (dict(validation=np.zeros((20, 3, 4), bool)), "3 policies"),
        (dict(validation="nobody"), "not a policy"),
        (dict(estimator="bayes"), "estimator"),
        (dict(level=1.2), "1 - level"),
    ],
)
def test_deployment_errors(kwargs, match):
    test, _ = _pools()
    band = kwargs.pop("band", (0.05, 0.30))
    with pytest.raises((ValueError, TypeError), match=match):
        mx.deployment_rules(test.pool, band, n_boot=10, **kwargs)


# ---------------------------------------------------------------------------- votes
def _answer_pool(n=150, M=4, k=9, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, (n, M))
    v = rng.random((n, M, k)) < p[:, :, None]
    wrong = rng.integers(0, 3, (n, M, k))
    answers = np.where(v, "right", np.char.add("wrong", wrong.astype(str)))
    return Pool.from_array(v, answers=answers)


def test_vote_with_one_response_is_the_success_rate():
    pool = _answer_pool()
    vc = mx.vote_comparison(pool, r=1, n_subsamples=400, n_boot=200, seed=0)
    rates = pool.rates()
    se = np.sqrt(0.25 / 400)
    assert np.abs(vc.member_rate - rates).max() < 5 * se
    assert np.abs(vc.pooled_rate - rates.mean(axis=1)).max() < 5 * se


def test_self_consistency_over_all_responses_is_deterministic():
    pool = _answer_pool(k=5)
    vc = mx.vote_comparison(pool, r=5, n_subsamples=3, n_boot=200, seed=1)
    codes, valid = answer_codes(pool.answers)
    want = plurality_vote(codes, pool.verdicts, valid)
    np.testing.assert_allclose(vc.member_rate, want)
    assert vc.difference.lo <= vc.difference.hi
    assert vc.frame().iloc[0]["best_member"] in pool.policy_names
    assert vc.best_sc_rauc == pytest.approx(vc.members["sc_rauc"].max())


def test_vote_errors():
    pool = _answer_pool(k=5)
    with pytest.raises(ValueError, match="answers"):
        mx.vote_comparison(Pool.from_array(pool.verdicts))
    with pytest.raises(ValueError, match="r must be <= 5"):
        mx.vote_comparison(pool, r=9)
