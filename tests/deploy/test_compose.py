"""Pool construction (paper 002 Thm 8, App. D.7, M.3): F_b, greedy, exhaustive, baselines, budgets.

Property tests (hypothesis) check Thm 8 on random outcome matrices against a plain Python
definition of F_b; constructed instances with known optimum check greedy where it is provably
optimal and where it is provably not; budgets are checked against exhaustive knapsack optima.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from oraclegap.deploy import compose as C
from oraclegap.pool import Pool
from oraclegap.stats.certify import cost_utilities

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def instances(draw, max_n=45, min_K=2, max_K=7):
    n = draw(st.integers(1, max_n))
    K = draw(st.integers(min_K, max_K))
    X = draw(arrays(np.bool_, (n, K)))
    b = draw(st.integers(0, K - 1))
    return X, b


def F_python(X, b, S) -> int:
    """The definition, one item at a time: anchor wrong and some member of S right."""
    return sum(1 for row in X.tolist() if not row[b] and any(row[m] for m in S))


# ---------------------------------------------------------------------- Thm 8 on random matrices
@SETTINGS
@given(instances())
def test_lattice_matches_definition(inst):
    X, b = inst
    lat = C.coverage_lattice(X, b)
    cand = [j for j in range(X.shape[1]) if j != b]
    for mask in range(1 << len(cand)):
        S = [cand[t] for t in range(len(cand)) if mask >> t & 1]
        assert lat.counts[mask] == F_python(X, b, S)


@SETTINGS
@given(instances())
def test_theorem8_normalised_monotone_submodular(inst):
    X, b = inst
    chk = C.theorem8_checks(X, b)
    k = X.shape[1] - 1
    assert chk.normalised
    assert chk.monotone_checks == k * 2 ** (k - 1)
    assert chk.submodular_checks == k * (k - 1) * 2 ** max(k - 2, 0) if k >= 2 else chk.submodular_checks == 0
    assert chk.monotone_violations == 0 and chk.submodular_violations == 0


@SETTINGS
@given(instances(max_K=8))
def test_greedy_reaches_one_minus_inv_e(inst):
    X, b = inst
    K = X.shape[1]
    g = C.greedy_pool(X, b)
    for s in range(1, K):
        opt = C.exhaustive_pool(X, b, s)
        brute = max(F_python(X, b, S) for S in itertools.combinations([j for j in range(K) if j != b], s))
        assert opt.count == brute and opt.exact
        assert g.gains[:s].sum() >= C.GREEDY_BOUND * opt.count - 1e-9
        assert g.gains[:s].sum() <= opt.count
        assert g.upper[s - 1] >= opt.count  # the online bound is a valid upper bound


@SETTINGS
@given(instances(max_n=60, min_K=3, max_K=9))
def test_lazy_greedy_equals_greedy_and_bnb_equals_enumeration(inst):
    X, b = inst
    K = X.shape[1]
    g, gl = C.greedy_pool(X, b), C.greedy_pool(X, b, lazy=True)
    assert g.members == gl.members and np.array_equal(g.gains, gl.gains)
    assert gl.evaluations <= g.evaluations + K
    # what is counted: plain greedy evaluates each candidate left once per step, lazy greedy the
    # K - 1 initial gains plus, per step, at least one re-evaluation and at most one per candidate
    # left and one more (the winner, popped again after its fresh gain was pushed back)
    for s in range(1, K):
        left = sum(K - 1 - t for t in range(s))
        assert C.greedy_pool(X, b, s).evaluations == left
        assert K - 1 + s <= C.greedy_pool(X, b, s, lazy=True).evaluations <= K - 1 + left + s
    for s in range(1, K):
        e = C.exhaustive_pool(X, b, s)
        bb = C.exhaustive_pool(X, b, s, max_subsets=1, max_nodes=10**6)
        assert bb.method == "branch-and-bound" and bb.exact and bb.count == e.count
        assert F_python(X, b, bb.members) == bb.count and len(bb.members) == s and b not in bb.members


def test_bnb_node_budget_gives_a_valid_bound():
    rng = np.random.default_rng(3)
    X = rng.random((400, 14)) < rng.uniform(0.1, 0.7, 14)
    exact = C.exhaustive_pool(X, 0, 6)
    cut = C.exhaustive_pool(X, 0, 6, max_subsets=1, max_nodes=3)
    assert exact.exact and exact.method == "enumeration"
    assert cut.count <= exact.count <= cut.upper
    if not cut.exact:
        assert cut.method == "bound"


# ---------------------------------------------------------------------- constructed instances
@SETTINGS
@given(st.lists(st.integers(0, 12), min_size=1, max_size=7), st.integers(1, 5), st.integers(0, 10**6))
def test_greedy_optimal_on_disjoint_rescue_sets(sizes, extra, seed):
    X = C.disjoint_rescue_instance(sizes, n_anchor_right=extra, seed=seed)
    K = X.shape[1]
    if K < 2:
        return
    g = C.greedy_pool(X, 0)
    srt = np.sort(sizes)[::-1]
    for s in range(1, K):
        assert g.gains[:s].sum() == srt[:s].sum() == C.exhaustive_pool(X, 0, s).count


def test_greedy_optimal_on_nested_rescue_sets():
    # candidate j rescues the first 10 * (j + 1) anchor failures: a chain, greedy takes the largest first
    n = 80
    X = np.zeros((n, 8), dtype=bool)
    for j in range(1, 8):
        X[: 10 * j, j] = True
    g = C.greedy_pool(X, 0)
    assert g.members[0] == 7 and g.gains[0] == 70 and g.gains[1:].sum() == 0
    assert all(C.exhaustive_pool(X, 0, s).count == 70 for s in range(1, 8))


@pytest.mark.parametrize("s,scale", [(2, 3), (3, 1), (3, 4), (4, 2)])
def test_greedy_worst_case_instance(s, scale):
    X, greedy_count, optimum_count = C.greedy_worst_case(s, scale)
    g = C.greedy_pool(X, 0, s)
    opt = C.exhaustive_pool(X, 0, s)
    assert g.gains.sum() == greedy_count and opt.count == optimum_count
    assert set(g.members) == set(range(1, s + 1))  # greedy takes the rows G_1..G_s
    ratio = greedy_count / optimum_count
    assert C.GREEDY_BOUND < ratio < 1
    # the ratio tends to 1 - (1 - 1/s)^s as the private items' weight vanishes
    assert ratio == pytest.approx(1 - (1 - 1 / s) ** s + 1 / (scale * s**s))


def test_theorem8_study_rows():
    df = C.theorem8_study(30, seed=1)
    assert len(df) == 30 and set(df["kind"]) == {"independent", "shared difficulty", "sparse"}
    assert (df["monotone_violations"] == 0).all() and (df["submodular_violations"] == 0).all()
    assert (df["min_ratio"] >= C.GREEDY_BOUND).all() and (df["min_ratio"] <= 1).all()


# ---------------------------------------------------------------------- bits
@SETTINGS
@given(arrays(np.bool_, st.tuples(st.integers(1, 4), st.integers(1, 200))))
def test_pack_and_popcount(B):
    W = C.pack_bits(B)
    assert W.dtype == np.uint64 and W.shape == B.shape[:-1] + (math.ceil(B.shape[-1] / 64),)
    assert np.array_equal(C.popcount(W), B.sum(axis=-1))
    assert np.array_equal(C.popcount(W & ~W), np.zeros(B.shape[0]))


def test_complementary_coverage_and_pool_input():
    X = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 0, 0]], dtype=bool)
    assert C.complementary_coverage(X, 0, []) == 0
    assert C.complementary_coverage(X, 0, [1]) == 0.25
    assert C.complementary_coverage(X, 0, [1, 2]) == 0.5
    assert C.complementary_coverage(X, 0, [1, 2], rows=[0, 2]) == 0.5
    pool = Pool.from_array(X[:, :, None], policies={"name": ["a", "b", "c"]})
    assert C.complementary_coverage(pool, "a", [1, 2]) == 0.5
    # k > 1 pools: coverage at tau
    V = np.zeros((2, 2, 4), dtype=bool)
    V[0, 1, :2] = True  # model 1 has 2/4 on item 0
    kp = Pool.from_array(V)
    X2, _ = C.outcome_matrix(kp, tau=0.5)
    assert X2.tolist() == [[False, True], [False, False]]
    assert C.outcome_matrix(kp, tau=0.75)[0].sum() == 0


# ---------------------------------------------------------------------- baselines
def test_baselines_pick_what_they_promise():
    rng = np.random.default_rng(0)
    n = 300
    z = rng.random(n)
    X = np.column_stack(
        [
            z < 0.6,  # anchor
            z < 0.7,  # nearly a copy of the anchor (errors correlated), the most accurate
            rng.random(n) < 0.5,  # independent
            z > 0.55,  # rescues the anchor's failures (anti-correlated errors)
            rng.random(n) < 0.05,  # weak
        ]
    )
    assert C.baseline_pool(X, 0, 1, "accuracy") == (1,)
    assert C.baseline_pool(X, 0, 1, "diversity") == (3,)
    assert C.greedy_pool(X, 0, 1).members == (3,)
    assert 3 in C.baseline_pool(X, 0, 2, "dpp")
    km = C.baseline_pool(X, 0, 2, "kmedoids")
    assert len(km) == 2 and 0 not in km
    assert C.baseline_pool(X, 0, 4, "kmedoids") == (1, 2, 3, 4)
    r1, r2 = C.baseline_pool(X, 0, 2, "random", seed=5), C.baseline_pool(X, 0, 2, "random", seed=5)
    assert r1 == r2 and 0 not in r1
    rp = C.random_pools(X, 0, 2, 300, seed=0)
    vals = [C.complementary_coverage(X, 0, S) for S in itertools.combinations([1, 2, 3, 4], 2)]
    assert min(vals) <= rp.values.min() and rp.values.max() <= max(vals)
    assert set(np.round(rp.values, 12)) <= set(np.round(vals, 12))
    assert rp.quantile(0.05) <= rp.values.mean() <= rp.quantile(0.95)


# ---------------------------------------------------------------------- budgets (App. M.3)
@st.composite
def cost_instances(draw):
    X, b = draw(instances(max_n=40, min_K=3, max_K=8))
    K = X.shape[1]
    w = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=K, max_size=K)))
    B = draw(st.floats(0.05, float(w.sum())))
    return X, b, w, B


@SETTINGS
@given(cost_instances())
def test_budgeted_greedy_respects_budget_and_guarantees(inst):
    X, b, w, B = inst
    opt = C.knapsack_optimum(X, b, w, B, normalize="none")
    assert opt.cost <= B + 1e-9
    for d, bound in ((0, C.GREEDY_BOUND / 2), (1, C.GREEDY_BOUND / 2), (2, C.GREEDY_BOUND / 2), (3, C.GREEDY_BOUND)):
        bp = C.budgeted_pool(X, b, w, B, partial=d, normalize="none")
        assert bp.cost <= B + 1e-9 and w[list(bp.members)].sum() <= B + 1e-9 if bp.members else bp.cost == 0
        assert b not in bp.members
        assert bp.count == F_python(X, b, bp.members) <= opt.count
        assert bp.count >= bound * opt.count - 1e-9
        assert bp.guarantee == pytest.approx(bound)


@SETTINGS
@given(instances(max_n=40, min_K=3, max_K=8), st.integers(1, 6))
def test_unit_costs_reduce_to_cardinality(inst, s):
    X, b = inst
    K = X.shape[1]
    s = min(s, K - 1)
    w = np.ones(K)
    opt = C.exhaustive_pool(X, b, s).count
    # with unit costs the knapsack is the cardinality problem
    assert C.knapsack_optimum(X, b, w, float(s), normalize="none").count == opt
    # and cost-benefit greedy without enumeration is the plain greedy (the best singleton never beats it)
    bp0 = C.budgeted_pool(X, b, w, float(s), partial=0, normalize="none")
    assert bp0.count == C.greedy_pool(X, b, s).gains.sum() and len(bp0.members) <= s
    bp3 = C.budgeted_pool(X, b, w, float(s), partial=3, normalize="none")
    assert bp0.count <= bp3.count <= opt


def test_model_costs_in_cost_utilities_units():
    rng = np.random.default_rng(1)
    X = rng.random((120, 5)) < 0.5
    cost = rng.uniform(0.001, 0.03, (120, 5))
    w = C.model_costs(cost, 120, 5)
    cu = cost_utilities(X, cost, [0.0, 2.0])
    names = [f"m{j}" for j in range(5)]
    for fm, fc in zip(cu.best_member, cu.fixed_cost, strict=True):
        assert w[names.index(fm)] == pytest.approx(fc)
    assert np.allclose(C.model_costs(cost[0], 120, 5), cost[0] / cost[0].max())


def test_one_cost_check_for_budgets_utilities_and_routers():
    # model_costs, cost_utilities and the routers' check_cost refuse bad costs with the same
    # message, and accept a per-member vector as the same per-prompt table
    from oraclegap.deploy.routers import check_cost

    X = np.ones((4, 3), dtype=bool)
    callers = (
        lambda c: C.model_costs(c, 4, 3),
        lambda c: cost_utilities(X, c, [0.0]),
        lambda c: check_cost(c, 4, 3),
    )
    bad = {
        "is required": None,
        "must be numeric": ["a", "b", "c"],
        r"must have shape \[n=4, M=3\] or \[M=3\], got \(4, 2\)": np.ones((4, 2)),
        r"missing values \(NaN\)": [1.0, np.nan, 2.0],
        "must be finite; found infinite": [1.0, np.inf, 2.0],
        "must be non-negative; found 4 negative entries such as \\[-1.0\\]": [1.0, -1.0, 2.0],
    }
    for match, cost in bad.items():
        messages = set()
        for call in callers:
            with pytest.raises((ValueError, TypeError), match=match) as err:
                call(cost)
            messages.add(str(err.value))
        assert len(messages) == 1, messages
    per_member = check_cost([1.0, 2.0, 4.0], 4, 3)
    assert per_member.shape == (4, 3) and per_member.flags.writeable
    assert np.array_equal(per_member, check_cost(np.tile([1.0, 2.0, 4.0], (4, 1)), 4, 3))
    assert np.allclose(C.model_costs([1.0, 2.0, 4.0], 4, 3), [0.25, 0.5, 1.0])


def test_budget_curve_columns():
    w = C.latent_world(n_items=60, n_models=6, datasets=("A",), seed=2)
    fit = np.arange(60) % 2 == 0
    df = C.budget_curve(w.pool, "best", budgets=[0.3, 1.0], fit=fit, test=~fit)
    assert set(df["method"]) == {"cost-benefit greedy (partial=0)", "cost-benefit greedy (partial=3)", "exhaustive knapsack",
                                 "cost-blind greedy prefix"}
    assert (df["cost"] <= df["budget"] + 1e-9).all()
    for _, d in df.groupby("budget"):
        assert d.loc[d["method"] == "exhaustive knapsack", "fit"].iloc[0] == d["fit"].max()


def test_budget_ratios_known_frame_and_bounds():
    # a hand-made curve: the ratios are known, and a budget where the optimum is 0 is left out
    curve = pd.DataFrame({"budget": [0.1, 0.5, 1.0] * 3,
                          "method": ["exhaustive knapsack"] * 3 + ["a"] * 3 + ["b"] * 3,
                          "fit": [0.0, 0.4, 0.8, 0.0, 0.3, 0.8, 0.0, 0.4, 0.2]})
    assert C.budget_ratios(curve) == {"a": pytest.approx(0.75), "b": pytest.approx(0.25)}
    # on a real curve: every ratio is at most 1 on the fit rows, partial enumeration keeps 1 - 1/e
    w = C.latent_world(n_items=80, n_models=7, datasets=("A",), seed=4)
    fit = np.arange(80) % 2 == 0
    df = C.budget_curve(w.pool, "best", budgets=np.linspace(0.1, 2.0, 6), fit=fit, test=~fit)
    r = C.budget_ratios(df)
    assert set(r) == set(df["method"]) - {"exhaustive knapsack"}
    assert all(v <= 1 + 1e-12 for v in r.values())
    assert r["cost-benefit greedy (partial=3)"] >= C.GREEDY_BOUND
    assert set(C.budget_ratios(df, column="test")) == set(r)
    with pytest.raises(ValueError, match="exhaustive knapsack"):
        C.budget_ratios(df[df["method"] != "exhaustive knapsack"])
    with pytest.raises(ValueError, match="column"):
        C.budget_ratios(df, column="nope")
    with pytest.raises(TypeError, match="curve"):
        C.budget_ratios(df.to_dict())


# ---------------------------------------------------------------------- compose_pools
def test_compose_pools_frame():
    w = C.latent_world(n_items=100, n_models=7, datasets=("A",), seed=3)
    res = C.compose_pools(w.pool, sizes=[1, 3, 6], budget=0.5)
    df = res.frame()
    assert df["size"].tolist() == [1, 3, 6]
    assert (df["greedy/optimum"] >= C.GREEDY_BOUND).all() and (df["greedy/optimum"] <= 1 + 1e-12).all()
    assert (df["F_b optimum"] >= df["F_b accuracy"] - 1e-12).all()
    assert res.budget is not None and res.budget.cost <= 0.5 + 1e-9
    assert df.loc[df["size"] == 6, "F_b greedy"].iloc[0] == pytest.approx(df.loc[df["size"] == 6, "F_b optimum"].iloc[0])


# ---------------------------------------------------------------------- bad inputs
def test_bad_inputs():
    X = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 0]], dtype=bool)
    with pytest.raises(ValueError, match="anchor 'z' is not a model"):
        C.greedy_pool(X, "z")
    with pytest.raises(ValueError, match="at least 1"):
        C.greedy_pool(X, 0, 0)
    with pytest.raises(ValueError, match="larger than the pool allows"):
        C.exhaustive_pool(X, 0, 3)
    with pytest.raises(ValueError, match="larger than the pool allows"):
        C.baseline_pool(X, 0, 5, "accuracy")
    with pytest.raises(ValueError, match="empty"):
        C.greedy_pool(np.zeros((0, 3)), 0)
    with pytest.raises(ValueError, match="binary"):
        C.greedy_pool(np.array([[0, 2], [1, 0]]), 0)
    with pytest.raises(ValueError, match="NaN"):
        C.greedy_pool(np.array([[0, np.nan], [1, 0]]), 0)
    with pytest.raises(ValueError, match="needs an anchor and at least one alternative"):
        C.greedy_pool(np.ones((3, 1)), 0)
    with pytest.raises(ValueError, match="non-negative"):
        C.budgeted_pool(X, 0, [0.1, -0.2, 0.3], 1.0)
    with pytest.raises(ValueError, match="missing values"):
        C.budgeted_pool(X, 0, [0.1, np.nan, 0.3], 1.0)
    with pytest.raises(ValueError, match="cost is required"):
        C.budgeted_pool(X, 0, None, 1.0)
    with pytest.raises(ValueError, match="budget must be"):
        C.budgeted_pool(X, 0, [0.1, 0.2, 0.3], 0)
    with pytest.raises(ValueError, match="1..K-1=2"):
        C.check_sizes([1, 2, 3], 3)
    with pytest.raises(ValueError, match="1..K-1=2"):
        C.compose_pools(X, sizes="1,4")
    with pytest.raises(ValueError, match="k=4 draws per cell"):
        C.greedy_pool(Pool.from_array(np.zeros((3, 2, 4), dtype=bool)), 0)
    with pytest.raises(ValueError, match="members must not contain the anchor"):
        C.complementary_coverage(X, 0, [0, 1])
    with pytest.raises(TypeError, match="anchor must be"):
        C.greedy_pool(X, 1.5)
    with pytest.raises(ValueError, match="unknown|must be one of"):
        C.baseline_pool(X, 0, 1, "nope")
