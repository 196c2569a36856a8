"""Paper 001 (arXiv 2607.03436) with its own definitions: the assumption checks and their flags,
the winner's-curse radius, reliable fractions, family correlation, Fig. 9 (pool composition,
lineage jackknife, pool size), the learned-router share and the released summary's identities.
Known truths: exact enumeration, simulated pools with known dependence, by-hand cases; the
released k = 30 tensors where present (``external``)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from oraclegap import datasets
from oraclegap.cli import main
from oraclegap.pool import Pool
from oraclegap.stats import noise
from oraclegap.stats import paper001 as P
from oraclegap.stats.noise import _permutations, checks

CHEN = "chen2026_routing_oracle_k30"


def _iid(n=300, M=4, k=12, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.8, 0.8, (n, M))
    return Pool.from_array(rng.random((n, M, k)) < p[:, :, None], alignment="seed-aligned"), p


def _comonotone(n=300, M=4, k=12, seed=0):
    """R_imj = 1[U_ij < p_im] with one uniform per prompt and draw shared by all members."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 0.9, (n, M))
    u = rng.random((n, 1, k))
    return Pool.from_array(u < p[:, :, None], alignment="seed-aligned")


# ---------------------------------------------------------------------------- runs test
@pytest.mark.parametrize("k", [4, 7, 10])
def test_runs_null_table_equals_enumeration(k):
    z = 1.959963984540054
    table = checks._runs_null(k, z)
    for n1 in range(k + 1):
        arr = np.array([[1 if j in ones else 0 for j in range(k)] for ones in itertools.combinations(range(k), n1)])
        runs = 1 + (np.diff(arr, axis=1) != 0).sum(axis=1)
        n0 = k - n1
        mu = 1 + 2 * n1 * n0 / k
        var = 2 * n1 * n0 * (2 * n1 * n0 - k) / (k * k * (k - 1))
        out = np.abs(runs - mu) > z * math.sqrt(var) if var > 0 else np.zeros(len(arr), bool)
        assert table[n1] == pytest.approx(out.mean(), abs=1e-12), (k, n1)


def test_runs_check_passes_iid_and_fails_sorted_draws():
    pool, _ = _iid(seed=1)
    c = noise.runs_check(pool)
    assert c.passed and c.n == int(((pool.verdicts.sum(2) > 0) & (pool.verdicts.sum(2) < pool.k)).sum())
    assert abs(c.value - c.reference) < 0.03
    # successes first in every cell: a single run of ones then zeros, the least mixed order
    v = np.sort(pool.verdicts, axis=2)[:, :, ::-1]
    bad = noise.runs_check(Pool.from_array(v, alignment="seed-aligned"))
    assert bad.passed is False and bad.p_value < 1e-6 and bad.value < c.value


# ---------------------------------------------------------------------------- permutation checks
def test_permutation_checks_pass_on_independent_iid_pool():
    pool, _ = _iid(seed=2)
    disp, coup, tv = noise.permutation_checks(pool, n_perm=999, seed=0)
    assert disp.passed and coup.passed and tv.passed
    assert abs(disp.value - 1) < 0.15 and disp.reference == 1.0
    assert tv.value < 0.06


def test_dispersion_index_has_null_mean_one():
    pool, _ = _iid(n=200, M=3, k=8, seed=3)
    v = pool.verdicts
    rng = np.random.default_rng(0)
    order = rng.random((400,) + v.shape).argsort(axis=-1)
    permuted = np.take_along_axis(np.broadcast_to(v, (400,) + v.shape), order, axis=-1)
    stats = _permutations._draw_stats(permuted)
    se = stats[:, 0].std() / math.sqrt(400)
    assert abs(stats[:, 0].mean() - 1.0) < 4 * se


def test_dispersion_flags_draw_position_effects():
    rng = np.random.default_rng(4)
    n, M, k = 300, 3, 10
    p = rng.uniform(0.2, 0.8, (n, M))
    shift = np.where(np.arange(k) < k // 2, -0.15, 0.15)  # half the seeds are better on every prompt
    v = rng.random((n, M, k)) < np.clip(p[:, :, None] + shift, 0, 1)
    disp, _, _ = noise.permutation_checks(Pool.from_array(v, alignment="seed-aligned"), n_perm=99, seed=1)
    assert disp.passed is False and disp.value > 1.5


def test_coupling_and_tv_fail_under_shared_seeds():
    pool = _comonotone(seed=5)
    _, coup, tv = noise.permutation_checks(pool, n_perm=99, seed=2)
    assert coup.passed is False and coup.value < coup.reference  # positive association lowers the union
    assert tv.passed is False and tv.value > tv.reference


def test_not_seed_aligned_leaves_independence_untested():
    pool, _ = _iid(seed=6)
    ind = Pool.from_array(pool.verdicts, alignment="independent")
    a = noise.assumption_checks(ind, n_perm=99)
    assert a.check("coupling").passed is None and a.check("known_p_tv").passed is None
    assert "not seed-aligned" in a.check("coupling").note
    assert a.flag("o_exp").startswith("untested") and a.flag("o_exp_independent").startswith("untested")
    r = ind.verdicts.mean(axis=2)
    assert a.frechet["o_exp_lower"] == pytest.approx(r.max(axis=1).mean())
    assert a.frechet["o_exp_upper"] == pytest.approx(np.minimum(1, r.sum(axis=1)).mean())
    assert a.frechet["delta_lower"] == 0.0 <= a.frechet["delta_upper"]


def test_pool_arranged_from_counts_is_untested_not_passed():
    rng = np.random.default_rng(17)
    counts = rng.integers(0, 9, (60, 3))
    pool = Pool.from_counts(counts, k=8, seed=0)
    a = noise.assumption_checks(pool, n_perm=99)
    assert all(c.passed is None for c in a.checks)
    assert a.flag("o_repro").startswith("untested") and not a.flags


# ---------------------------------------------------------------------------- the rule: flags
def test_failed_check_flags_the_magnitudes_that_need_it():
    d = noise.decomposition(_comonotone(seed=7), n_boot=50, checks=True, n_perm=99)
    a = d.assumptions
    assert not a.all_pass
    assert "coupling" in d.flag("o_exp_independent") and d.flag("o_exp_independent").startswith("check failed")
    assert d.flag("o_exp") == ""  # the seed-aligned O_exp needs no independence
    frame = d.frame()
    assert "flag" in frame and set(frame.loc[frame["flag"] != "", "quantity"]) == set(a.flags) & set(d.estimates)
    assert d.to_dict()["assumptions"]["flags"]["o_exp_independent"]


def test_passing_checks_leave_no_flags_and_checks_off_by_default():
    pool, _ = _iid(seed=8)
    d = noise.decomposition(pool, n_boot=50, checks=True, n_perm=99)
    assert d.assumptions.all_pass and not d.assumptions.flags and (d.frame()["flag"] == "").all()
    plain = noise.decomposition(pool, n_boot=50)
    assert plain.assumptions is None and "flag" not in plain.frame() and plain.flag("o_exp") == ""
    with pytest.raises(KeyError, match="no quantity"):
        plain.flag("nope")


def test_check_errors():
    v = np.random.default_rng(0).random((20, 2, 4)) < 0.5
    with pytest.raises(ValueError, match="n_perm"):
        noise.permutation_checks(v, n_perm=0)
    with pytest.raises(ValueError, match="cannot give a p-value"):
        noise.permutation_checks(v, n_perm=50)
    with pytest.raises(ValueError, match="max_tv"):
        noise.permutation_checks(v, max_tv=0)
    with pytest.raises(ValueError, match="k >= 2"):
        noise.runs_check(v[:, :, :1])
    with pytest.raises(KeyError, match="no check"):
        noise.assumption_checks(v, n_perm=99).check("nope")


# ---------------------------------------------------------------------------- winner's curse
@pytest.mark.parametrize(("p", "k"), [([0.5, 0.5], 3), ([0.3, 0.6, 0.5], 2), ([0.5] * 4, 2), ([0.2, 0.9], 4)])
def test_winners_curse_radius_bounds_the_plugin_bias_exactly(p, k):
    p = np.asarray(p)
    M = len(p)
    best = 0.0
    # E[max_m c_m / k] by enumeration of the binomial counts
    from scipy.stats import binom

    for counts in itertools.product(range(k + 1), repeat=M):
        w = np.prod([binom.pmf(c, k, q) for c, q in zip(counts, p, strict=True)])
        best += w * max(counts) / k
    assert best - p.max() <= noise.winners_curse_radius(M, k) + 1e-12
    assert best >= p.max() - 1e-12


def test_winners_curse_terms():
    pool, _ = _iid(seed=9)
    w = noise.winners_curse(pool)
    assert w.R_k == pytest.approx(math.sqrt(math.log(pool.n_policies) / (2 * pool.k)))
    assert w.o_repro_upper == pytest.approx(w.o_repro + w.R_k) and w.o_exp_lower == pytest.approx(w.o_exp - w.R_k)
    assert 0 <= w.delta_lower <= w.delta
    assert w.share_lower == pytest.approx(w.delta_lower / w.gap)
    with pytest.raises(ValueError, match="M"):
        noise.winners_curse_radius(0, 3)


# ---------------------------------------------------------------------------- reliable fractions
def test_reliable_fractions_by_hand():
    # 3 prompts, 2 members, k = 4: best counts 2, 4, 3 -> reliable at 0.5: all; at 0.9: one; at 0.75: two
    c = np.array([[2, 1], [0, 4], [3, 3]])
    v = np.arange(4)[None, None, :] < c[:, :, None]
    t = noise.reliable_fractions(v, taus=[0.5, 0.75, 0.9]).set_index("tau")
    assert t.loc[0.5, "reliable_frac"] == 1.0 and t.loc[0.75, "n_reliable"] == 2 and t.loc[0.9, "n_reliable"] == 1
    with pytest.raises(ValueError, match="taus"):
        noise.reliable_fractions(v, taus=[0])


# ---------------------------------------------------------------------------- family correlation, Fig. 9
def test_family_correlation_limits_and_by_hand():
    rng = np.random.default_rng(10)
    q = rng.uniform(0, 1, 400)
    v = rng.random((400, 1, 20)) < q[:, None, None]
    same = np.repeat(v, 4, axis=1)  # four identical members: one effective member
    fc = P.family_correlation(same, ["a", "a", "b", "b"])
    assert fc.effective_pool_size == pytest.approx(1.0) and fc.within_lineage_mean == pytest.approx(1.0)
    indep = rng.random((2000, 5, 20)) < rng.uniform(0, 1, (2000, 5))[:, :, None]
    assert P.family_correlation(indep, list("abcde")).effective_pool_size > 4.5
    r = indep.mean(axis=2)
    C = np.corrcoef(r.T)
    fc = P.family_correlation(indep, ["x", "x", "y", "y", "y"])
    assert fc.within_lineage_mean == pytest.approx(np.mean([C[0, 1], C[2, 3], C[2, 4], C[3, 4]]))
    with pytest.raises(ValueError, match="one label per member"):
        P.family_correlation(indep, ["x"])


def test_pool_composition_jackknife_and_size():
    pool, _ = _iid(n=200, M=5, k=6, seed=11)
    lin = ["A", "A", "B", "C", "C"]
    comp = P.pool_composition(pool, lin).set_index("pool")
    full = noise.decompose(pool)
    assert comp.loc["full", "o_exp"] == pytest.approx(full.O_exp) and comp.loc["full", "o_repro"] == pytest.approx(full.O_repro)
    assert comp.loc["full", "noise_share"] == pytest.approx(full.noise_share)
    strong = P.strongest_per_lineage(pool, lin)
    means = pool.verdicts.mean(axis=(0, 2))
    assert strong == [pool.policy_names[i] for i in sorted([int(np.argmax(means[:2])), 2, 3 + int(np.argmax(means[3:]))])]
    assert comp.loc["one_per_lineage", "M"] == 3 and comp.loc["one_per_lineage", "n_lineages"] == 3
    jk = P.lineage_jackknife(pool, lin).set_index("dropped")
    sub = noise.decompose(pool.verdicts[:, [0, 1, 3, 4]], form="seed-aligned")
    assert jk.loc["B", "o_exp"] == pytest.approx(sub.O_exp) and jk.loc["B", "n_left"] == 4
    sz = P.pool_size_shares(pool, sizes=[2, 5]).set_index("K")
    shares = [noise.decompose(pool.verdicts[:, list(c)], form="seed-aligned").noise_share for c in itertools.combinations(range(5), 2)]
    assert sz.loc[2, "exhaustive"] and sz.loc[2, "gap_share_mean"] == pytest.approx(np.nanmean(shares))
    assert sz.loc[5, "gap_share_mean"] == pytest.approx(full.noise_share)
    with pytest.raises(ValueError, match="unknown members"):
        P.pool_composition(pool, lin, {"x": ["nobody"]})


def test_k_sweep_band_first_is_001s_sweep_and_band_brackets_random_mean():
    pool, _ = _iid(n=150, M=3, k=10, seed=16)
    b = P.k_sweep_band(pool, ks=[1, 3, 10], n_subsets=40, seed=0).set_index("k")
    first = noise.k_sweep(pool, ks=[1, 3, 10], subsets="first").set_index("k")
    assert b["first_noise_share"].to_numpy() == pytest.approx(first["noise_share"].to_numpy())
    assert b.loc[1, "first_noise_share"] == 0.0  # one draw: the plug-in ceiling is the oracle
    assert (b["random_noise_share_lo"] <= b["random_noise_share"] + 1e-12).all()
    assert (b["random_noise_share"] <= b["random_noise_share_hi"] + 1e-12).all()
    assert b.loc[10, "random_noise_share_lo"] == pytest.approx(b.loc[10, "first_noise_share"])  # k' = k: one set
    with pytest.raises(ValueError, match="band"):
        P.k_sweep_band(pool, band=1.0)


def test_share_against_a_router():
    pool, _ = _iid(seed=12)
    s = P.share_against(pool, 0.4)
    d = noise.decompose(pool, router=0.4)
    assert s["noise_share"] == pytest.approx(d.noise_share) and s["gap"] == pytest.approx(d.G)
    with pytest.raises(ValueError, match="score"):
        P.share_against(pool, 1.5)


def test_released_summary_identities_hold():
    # data/paper/001_released_summary.csv (transcribed to 10 significant digits)
    summary = datasets.paper_table("001_released_summary")
    assert set(summary["bench"]) == {"math500", "gpqa", "gsm8k"}
    for bench in ("math500", "gpqa", "gsm8k"):
        t = P.released_identities(summary, bench)
        assert len(t) == 9 and (t["difference"].abs() < 1e-8).all(), t
    with pytest.raises(ValueError, match="no released summary"):
        P.released_identities(summary, "mmlu")


def test_transcribed_files_have_their_source():
    man = json.loads((datasets.paper_dir() / "001_sources.json").read_text())
    csvs = {p.name for p in datasets.paper_dir().glob("001_*.csv")}
    assert csvs == set(man["files"])


# ---------------------------------------------------------------------------- the released tensors
def _released(external_dir, bench):
    root = external_dir / CHEN / bench
    if not (root / "correctness_slim.npz").exists() or not (root / "robustness.json").exists():
        pytest.skip(f"{root} (tensor and robustness.json) is absent")
    return (datasets.load(f"chen2026-{bench}"), json.loads((root / "decomposition.json").read_text()),
            json.loads((root / "robustness.json").read_text()))


@pytest.mark.external
@pytest.mark.parametrize("bench", ["math500", "gpqa"])
def test_released_gates_radius_and_reliable_fractions(external_dir, bench):
    pool, dec, rob = _released(external_dir, bench)
    runs = noise.runs_check(pool)
    gate = dec["gates"]["independence"]
    assert runs.n == gate["n_cells"] and runs.value == pytest.approx(gate["frac_in_band"], abs=1e-12)
    a = noise.assumption_checks(pool, n_perm=99)
    assert a.all_pass == dec["gates"]["all_pass"]
    assert a.check("known_p_tv").value <= dec["gates"]["known_p"]["max_tv"]  # our TV construction passes 001's threshold too
    w, cons = a.winners_curse, dec["conservative_one_sided"]
    for ours, theirs in (("R_k", "R_k"), ("o_repro_upper", "O_repro_upper_mean"), ("o_exp_lower", "O_exp_lower_mean"),
                         ("delta_lower", "Delta_lower_mean"), ("share_lower", "noise_recoverable_share_lower")):
        assert getattr(w, ours) == pytest.approx(cons[theirs], abs=1e-9), ours
    rel = noise.reliable_fractions(pool, taus=[t["tau"] for t in rob["tau"]])
    assert rel["reliable_frac"].tolist() == pytest.approx([t["reliable_frac"] for t in rob["tau"]], abs=1e-12)
    lr = rob["learned_router"]
    s = P.share_against(pool, lr["router_acc"])
    assert s["noise_share"] == pytest.approx(lr["gap_share"], abs=1e-9) and s["gap"] == pytest.approx(lr["G"], abs=1e-9)


@pytest.mark.external
@pytest.mark.parametrize("bench", ["math500", "gpqa"])
def test_released_fig9_reproduced(external_dir, bench):
    pool, dec, rob = _released(external_dir, bench)
    lin = dict(datasets.paper_table("001_lineages")[["model", "lineage"]].values)
    pools = {k: v["models"] for k, v in dec["pool_definitions"].items() if not k.startswith("_")}
    assert P.strongest_per_lineage(pool, lin) == pools["one_per_lineage"]
    comp = P.pool_composition(pool, lin, pools).set_index("pool")
    for name, want in dec["pool_definitions"].items():
        if name.startswith("_"):
            continue
        got = comp.loc[name]
        assert got["o_exp"] == pytest.approx(want["oracles_mean"]["exp_seed_aligned"], abs=1e-12)
        assert got["o_repro"] == pytest.approx(want["oracles_mean"]["reproducible"], abs=1e-12)
        assert got["baseline"] == pytest.approx(want["oracles_mean"]["router"], abs=1e-12)
        assert got["noise_share"] == pytest.approx(want["noise_share"]["point"], abs=1e-12)
    jk = P.lineage_jackknife(pool, lin).set_index("dropped")
    for fold in rob["jackknife"]["folds"]:
        got = jk.loc[fold["dropped"]]
        assert got["n_left"] == fold["n_left"]
        for ours, theirs in (("baseline", "router_acc"), ("o_exp", "O_exp"), ("o_repro", "O_repro"), ("noise_share", "gap_share")):
            assert got[ours] == pytest.approx(fold[theirs], abs=1e-12)
    fc, want = P.family_correlation(pool, lin), dec["family_correlation"]
    order = want["order"]
    np.testing.assert_allclose(fc.matrix.loc[order, order].to_numpy(), np.array(want["matrix"]), atol=5e-4)  # released to 3 decimals
    for q in ("within_lineage_mean", "cross_lineage_mean", "effective_pool_size"):
        assert getattr(fc, q) == pytest.approx(want[q], abs=1e-9)
    # pool size: ours is the exact mean over every sub-pool of K members; 001's is a mean over
    # random sub-pools whose number the release does not give. Tolerance: 3 standard errors of a
    # mean over 30 random sub-pools, sd / sqrt(30) with sd the spread of the share over sub-pools.
    sz = P.pool_size_shares(pool, sizes=[r["K"] for r in rob["K_sweep"]]).set_index("K")
    for r in rob["K_sweep"]:
        got = sz.loc[r["K"]]
        tol = 1e-9 if r["K"] == pool.n_policies else 3 * got["gap_share_sd"] / math.sqrt(30)
        assert abs(got["gap_share_mean"] - r["gap_share_mean"]) <= tol, (r["K"], got["gap_share_mean"], r["gap_share_mean"], tol)


# ---------------------------------------------------------------------------- the CLI
@pytest.fixture
def pool_dir(make_pool):
    return make_pool(80, 3, 6, seed=13, sim="beta", a=0.8)[0]


def test_cli_reports_checks_and_flags(capsys, tmp_path, pool_dir):
    assert main(["decompose", str(pool_dir), "--json", "--n-boot", "100", "--n-perm", "99"]) == 0
    payload = json.loads(capsys.readouterr().out)
    a = payload["assumptions"]
    assert [c["name"] for c in a["checks"]] == ["runs", "dispersion", "coupling", "known_p_tv"]
    assert set(a) >= {"flags", "untested", "frechet", "winners_curse", "all_pass"}
    assert [r["tau"] for r in payload["reliable"]] == [0.5, 0.9] and "paper001" in payload
    assert main(["decompose", str(pool_dir), "--n-boot", "100", "--n-perm", "99"]) == 0
    out = capsys.readouterr().out
    assert "001 checks: runs" in out and "flag" in out
    assert main(["decompose", str(pool_dir), "--n-boot", "100", "--no-checks"]) == 0
    assert "001 checks" not in capsys.readouterr().out
    # a pool with shared seeds: the failed check is named in the table and in the JSON flags
    _comonotone(n=120, M=3, k=8, seed=14).save(tmp_path / "co")
    assert main(["decompose", str(tmp_path / "co"), "--json", "--n-boot", "100", "--n-perm", "99"]) == 0
    flags = json.loads(capsys.readouterr().out)["assumptions"]["flags"]
    assert "coupling" in flags["o_exp_independent"]
    assert main(["decompose", str(pool_dir), "--n-perm", "0"]) == 2
    assert "--n-perm" in capsys.readouterr().err


def test_frame_of_checks_is_tidy():
    a = noise.assumption_checks(_iid(seed=15)[0], n_perm=99)
    f = a.frame()
    assert list(f["name"]) == ["runs", "dispersion", "coupling", "known_p_tv"] and isinstance(f, pd.DataFrame)


# ---------------------------------------------------------------------------- Lemma 2 and Table V
def test_lemma2_randomized_routers_are_capped_at_o_repro():
    """A router scored linearly (A4-linear) that picks member m on prompt i with probability pi_im
    scores sum_m pi_im p_im <= max_m p_im: no randomized router beats O_repro, and committing to
    the argmax reaches it."""
    pool, p = _iid(n=400, M=5, k=10, seed=21)
    rng = np.random.default_rng(5)
    o_repro = p.max(axis=1).mean()
    for _ in range(50):
        pi = rng.dirichlet(np.full(5, 0.3), size=400)
        assert (pi * p).sum(axis=1).mean() <= o_repro + 1e-12
    commit = np.eye(5)[p.argmax(axis=1)]
    assert (commit * p).sum(axis=1).mean() == pytest.approx(o_repro)
    # on the pool's plug-in rates the same cap holds for O_repro as the library computes it
    r = pool.verdicts.mean(axis=2)
    cap = P.share_against(pool, 0.5)["o_repro"]
    pi = rng.dirichlet(np.ones(5), size=400)
    assert (pi * r).sum(axis=1).mean() <= cap + 1e-12


@pytest.mark.external
def test_released_learned_router_share(external_dir):
    """Table V's baseline dependence on MATH-500: Delta over the learned router's gap (its released
    accuracy) is the released learned-router share, and it is below the best-single share."""
    pool, dec, rob = _released(external_dir, "math500")
    lr = rob["learned_router"]
    s = P.share_against(pool, lr["router_acc"])
    assert s["delta"] == pytest.approx(lr["G_noise"], abs=1e-9)
    assert s["gap"] == pytest.approx(lr["G"], abs=1e-9)
    assert s["noise_share"] == pytest.approx(lr["gap_share"], abs=1e-9)
    best = P.share_against(pool, dec["decomposition_point"]["router_mean"])
    assert best["noise_share"] == pytest.approx(dec["decomposition_point"]["noise_share"], abs=1e-9)
    assert s["noise_share"] < best["noise_share"]  # a weaker baseline leaves a larger gap, the floor fixed


def test_random_subset_means_center_on_the_exhaustive_mean():
    pool, _ = _iid(n=200, M=6, k=8, seed=4)
    r = P.random_subset_means(pool, 2, 5, n_reps=400, seed=1)
    ex = P.pool_size_shares(pool, sizes=[2], n_subsets=1000).iloc[0]
    assert bool(ex["exhaustive"]) and r["n_all"] == 15
    assert r["exhaustive"] == pytest.approx(ex["gap_share_mean"])
    assert r["lo"] <= r["exhaustive"] <= r["hi"]
    whole = P.random_subset_means(pool, 2, 15, n_reps=5, seed=1)  # every sub-pool: no randomness left
    assert whole["lo"] == pytest.approx(whole["exhaustive"]) == pytest.approx(whole["hi"])
    with pytest.raises(ValueError, match="n_subsets"):
        P.random_subset_means(pool, 2, 16)


@pytest.mark.external
def test_released_gpqa_pool_size_two_is_a_random_subset_mean(external_dir):
    """001's K = 2 GPQA share (0.1291) against the book's mean over all 55 pairs: the release
    averages random pairs, and its figure lies in the range a mean of 30 random pairs takes."""
    pool, _, rob = _released(external_dir, "gpqa")
    rel = next(r["gap_share_mean"] for r in rob["K_sweep"] if r["K"] == 2)
    r = P.random_subset_means(pool, 2, 30, n_reps=2000, seed=0)
    assert r["n_all"] == 55 and abs(r["exhaustive"] - rel) > 0.005  # not the exhaustive mean
    assert r["lo"] <= rel <= r["hi"]
