"""Theory on fitted routers (deploy/theory.py): joint laws with fixed marginals, the routing identity
on fitted choices, and the recoverability asymmetry against known rates."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap.deploy import theory as T
from oraclegap.deploy.features import simulated_router_pool


@pytest.fixture(scope="module")
def sim():
    return simulated_router_pool(n=160, M=3, k=8, strength=0.4, seed=3)


@pytest.mark.parametrize("coupling", T.COUPLINGS)
def test_coupled_draws_keep_the_marginals(coupling):
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, (6, 4))
    R = T.coupled_draws(p, 20000, coupling, seed=1)
    assert R.shape == (6, 4, 20000) and R.dtype == bool
    se = np.sqrt(p * (1 - p) / 20000)
    assert (np.abs(R.mean(axis=2) - p) < 4.5 * se).all()
    again = T.coupled_draws(p, 20000, coupling, seed=1)
    assert np.array_equal(R, again)


def test_joint_laws_are_what_they_say():
    rng = np.random.default_rng(2)
    p = rng.uniform(0.0, 0.25, (50, 4))  # sum of rates per prompt <= 1 for the antithetic check
    co = T.coupled_draws(p, 300, "comonotone", seed=0)
    # comonotone: a member succeeds whenever a member with a higher rate does, so the union is the maximiser's draw
    top = p.argmax(axis=1)
    assert np.array_equal(co.any(axis=1), co[np.arange(50), top])
    anti = T.coupled_draws(p, 300, "antithetic", seed=0)
    # antithetic with p_im <= 1/M: the shifted uniforms fall in disjoint windows, never two successes at once
    assert anti.sum(axis=1).max() <= 1
    ind = T.coupled_draws(np.full((1, 2), 0.5), 40000, "independent", seed=0)
    both = (ind[0, 0] & ind[0, 1]).mean()
    assert abs(both - 0.25) < 4.5 * np.sqrt(0.25 * 0.75 / 40000)


def test_fit_choices_split_and_best_single(sim):
    fc = T.fit_choices(sim.pool, ["best_single", "embed_knn"], seed=4)
    n = sim.pool.n_prompts
    assert len(fc.test) == n // 2 and np.array_equal(np.sort(np.r_[fc.cal, fc.test]), np.arange(n))
    best = int(np.argmax(sim.pool.rates()[fc.cal].mean(axis=0)))
    assert (fc.choices["best_single"] == best).all()
    assert fc.choices["embed_knn"].min() >= 0 and fc.choices["embed_knn"].max() < 3 and fc.source == "pool"
    again = T.fit_choices(sim.pool, ["best_single", "embed_knn"], seed=4)
    assert all(np.array_equal(fc.choices[f], again.choices[f]) for f in fc.choices)
    assert list(fc.frame().columns) == ["best_single", "embed_knn"]
    with pytest.raises(ValueError, match="at least one router family"):
        T.fit_choices(sim.pool, [])
    with pytest.raises(TypeError, match="Pool"):
        T.fit_choices(sim.pool.verdicts, "best_single")


def test_routing_identity_on_fitted_routers(sim):
    fams = ["best_single", "random", "embed_knn", "multi_logreg"]
    fc = T.fit_choices(sim.pool, fams, seed=1)
    df = T.routing_identity(sim.pool, fc, [0.1, 0.3, 0.5])
    assert len(df) == 4 * 3 and (df["residual"].abs() <= 1e-12).all()
    # one row by hand: coverage at tau from counts on the test prompts
    r = df[(df["family"] == "embed_knn") & (df["tau"] == 0.3)].iloc[0]
    c = sim.pool.counts()[fc.test]
    cov = c >= np.ceil(0.3 * sim.pool.k - 1e-9)
    dis = cov.any(axis=1) & ~cov.all(axis=1)
    chosen = cov[np.arange(len(fc.test)), fc.choices["embed_knn"]]
    assert r.D == pytest.approx(dis.mean()) and r.e_D == pytest.approx((~chosen[dis]).mean())
    assert r.routed == pytest.approx(chosen.mean()) and r.oracle == pytest.approx(cov.any(axis=1).mean())
    decided = df[(df["D"] > 0) & ~np.isclose(df["e_D"], df["break_even"])]
    assert ((decided["gain"] > 0) == (decided["e_D"] < decided["break_even"])).all()


def test_recoverability_cap_and_lift(sim):
    rec = T.recoverability(sim.pool, sim.p, ["best_single", "random", "embed_knn"], n_fresh=300, seed=5)
    s = rec.scores
    assert set(s["router"]) == {"best_single", "random", "embed_knn", "maximiser"} and set(s["coupling"]) == set(T.COUPLINGS)
    assert (s["committed"] <= rec.O_repro + 1e-12).all()
    assert np.allclose(s.loc[s["router"] == "maximiser", "committed"], rec.O_repro)
    # the committed score does not depend on the joint law; fresh draws agree with it within Monte Carlo error
    assert (s.groupby("router")["committed"].nunique() == 1).all()
    assert ((s["fresh"] - s["committed"]).abs() <= 4.5 * s["se"]).all()
    # best-of-K on the maximiser at the oracle's budget: above the independent-pool oracle, through the cap
    assert rec.K == 3 and rec.best_of_K >= rec.O_exp_independent - 1e-12 and rec.best_of_K > rec.O_repro
    assert abs(rec.best_of_K_fresh - rec.best_of_K) <= 4.5 * rec.best_of_K_se
    # the single-draw oracle does depend on the law: the comonotone one is the cap itself
    assert abs(rec.O_exp["comonotone"] - rec.O_repro) <= 4.5 * rec.O_exp_se["comonotone"]
    assert abs(rec.O_exp["independent"] - rec.O_exp_independent) <= 4.5 * rec.O_exp_se["independent"]
    assert rec.O_exp["antithetic"] >= rec.O_exp["independent"] - 4.5 * rec.O_exp_se["antithetic"]


def test_bad_inputs(sim):
    with pytest.raises(ValueError, match="coupling must be one of"):
        T.coupled_draws(sim.p, 2, "gaussian")
    with pytest.raises(ValueError, match="probabilities in"):
        T.coupled_draws(np.full((2, 2), 1.5), 2)
    with pytest.raises(ValueError, match="multiple of K=3"):
        T.recoverability(sim.pool, sim.p, ["best_single"], n_fresh=10)
    with pytest.raises(ValueError, match="pool's shape"):
        T.recoverability(sim.pool, sim.p[:, :2], ["best_single"])
