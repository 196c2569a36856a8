"""Routers chosen on validation and the Table 3 comparison (2609.32996 Sections 3.3-3.4,
Tables 3 and A12): properties on simulated pools whose truth is known."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap.deploy import mixtures, validation
from oraclegap.deploy.features import simulated_router_pool
from oraclegap.pool import Pool


def _split(kind="specialists", n=320, k=8, seed=0, strength=0.5):
    """One simulated pool cut into a validation and a test half (same members, same inputs)."""
    pool = simulated_router_pool(n, M=4, k=k, kind=kind, strength=strength, seed=seed).pool
    half = np.arange(n) < n // 2
    return pool.select(prompts=half), pool.select(prompts=~half)


FAMS = ("embed_knn", "tfidf_knn", "embed_pca_logreg")


def test_a_predictable_specialist_pool_is_routed_and_beats_every_member():
    val, test = _split()
    ro = validation.route_on_validation(val, test, FAMS, (0.05, 0.5), taus=[0.3], n_boot=300, seed=0)
    assert ro.chosen in FAMS and ro.val_rauc[ro.chosen] == max(ro.val_rauc.values())
    rules = mixtures.deployment_rules(test, (0.05, 0.5), n_subsamples=20, n_boot=300, seed=0)
    best = rules.row("best_test")["rauc"]
    assert ro.test_rauc[ro.chosen] > best + 0.02  # the topic is in every input: routing recovers a real gain
    cells = ro.cells
    assert set(cells["family"]) == set(FAMS) and (cells["gain"] > 0).all()
    assert ro.cells_summary()["above"] >= 1


def test_routed_verdicts_are_the_chosen_members_and_score_like_a_member():
    val, test = _split(seed=1)
    ro = validation.route_on_validation(val, test, FAMS, seed=2, n_boot=200)
    v = ro.verdicts()
    ch = ro.choices[ro.chosen]
    assert v.shape == (test.n_prompts, test.k)
    assert all(np.array_equal(v[i], test.verdicts[i, ch[i]]) for i in range(test.n_prompts))
    # the same rAUC through deployment_rules' extra column (the split's own prior) as computed here
    t = mixtures.deployment_rules(test, extra={"routing": v}, n_subsamples=20, n_boot=200, seed=0)
    assert t.row("routing")["rauc"] == pytest.approx(ro.test_rauc[ro.chosen], abs=1e-12)


def test_exchangeable_pool_gives_no_resolved_routing_gain():
    val, test = _split(kind="exchangeable", seed=3)
    ro = validation.route_on_validation(val, test, FAMS, (0.05, 0.5), taus=[0.2, 0.4], n_boot=400, seed=0)
    # population gap zero: no cell can truly gain, and the re-selected comparator shifts intervals against the router
    assert ro.cells_summary()["above"] == 0


def test_a_reused_fit_gives_the_same_routes_and_is_checked():
    val, test = _split(seed=4)
    fit = validation.fit_on_validation(val, FAMS, seed=5)
    a = validation.route_on_validation(val, test, FAMS, seed=5)
    b = validation.route_on_validation(None, test, fit=fit, seed=9)
    assert a.chosen == b.chosen == fit.chosen
    assert all(np.array_equal(a.choices[f], b.choices[f]) for f in FAMS)
    assert b.fit is fit and list(fit.frame()["family"]) == list(FAMS)
    other = Pool(test.verdicts[:, :3], test.prompts, test.policies.iloc[:3], embeddings=test.embeddings)
    with pytest.raises(ValueError, match="same members"):
        validation.route_on_validation(None, other, fit=fit)
    with pytest.raises(ValueError, match="validation pool or a ValidationFit"):
        validation.route_on_validation(None, test)


def test_families_without_inputs_are_skipped_with_a_reason():
    val, test = _split(seed=6)
    strip = lambda p: Pool(p.verdicts, p.prompts.assign(text=None), p.policies, embeddings=p.embeddings)  # noqa: E731
    ro = validation.route_on_validation(strip(val), strip(test), ("tfidf_knn", "embed_knn"), seed=0, n_boot=200)
    assert ro.families == ("embed_knn",) and "text" in ro.skipped["tfidf_knn"]
    with pytest.raises(ValueError, match="no router family"):
        validation.fit_on_validation(strip(val), ("tfidf_knn",))


def test_deployment_comparison_orders_table3_rows_and_shares_resamples():
    val, test = _split(seed=7)
    base = test.verdicts[:, 0, :] & (np.random.default_rng(0).random(test.verdicts[:, 0, :].shape) < 0.7)  # a weaker policy
    soup = test.verdicts[:, 1, :]
    dc = validation.deployment_comparison(test, (0.05, 0.5), validation=val, base=base, soup=soup, families=FAMS, n_subsamples=20,
                                          n_boot=300, seed=0)
    f = dc.frame()
    assert list(f["kind"]) == ["base", "best_test", "best_val", "oracle", "mixture_matched", "soup", "routing"]
    members = dc.rules.frame().set_index("system")
    assert dc.row("soup")["rauc"] == pytest.approx(members.loc[test.policy_names[1], "rauc"])  # the soup here is member 1's verdicts
    assert dc.row("oracle")["rauc"] >= dc.row("best_test")["rauc"] >= dc.row("best_val")["rauc"]
    assert dc.row("routing")["rauc"] == pytest.approx(dc.routing.test_rauc[dc.routing.chosen])
    again = validation.deployment_comparison(test, (0.05, 0.5), validation=val, base=base, soup=soup, families=FAMS, n_subsamples=20,
                                             n_boot=300, seed=0)
    assert again.frame().equals(f)
    plain = validation.deployment_comparison(test, (0.05, 0.5), n_subsamples=20, n_boot=300, seed=0)
    assert plain.routing is None and list(plain.frame()["kind"]) == ["best_test", "oracle", "mixture_matched"]
    with pytest.raises(KeyError, match="present"):
        plain.row("soup")
    with pytest.raises(TypeError, match="Pool"):
        validation.deployment_comparison(test.verdicts)
