"""Held-out saturation curves of the pool-construction sweep (PoolSweep.saturation, .saturation_reach)
and their small-multiples figure (report.draw_saturation): identities of complementary coverage
(every fold's pool is a subset of the whole pool), recomputation from the cells, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from oraclegap.deploy import compose as C
from oraclegap.report import draw_saturation


@pytest.fixture(scope="module")
def sweep():
    world = C.latent_world(n_items=80, n_models=6, datasets=("A", "B"), seed=7)
    return C.pool_sweep(world.pool, n_folds=5, n_random=50, seed=3)


def test_curves_are_ratios_to_the_whole_pool(sweep):
    c = sweep.saturation()
    cells = sweep.cells
    assert list(dict.fromkeys(c["dataset"])) == ["A", "B"]
    for ds, d in c.groupby("dataset"):
        K = int(sweep.settings["K"][ds])
        assert (d["K"] == K).all() and list(d["size"]) == list(range(1, K))
        cd = cells[cells["dataset"] == ds]
        whole = cd.loc[cd["size"] == K - 1, "greedy_test"].mean()
        for s, row in d.set_index("size").iterrows():
            at = cd[cd["size"] == s]
            assert row["share"] == pytest.approx(s / (K - 1))
            assert row["greedy"] == pytest.approx(at["greedy_test"].mean() / whole, rel=1e-12)
            assert row["random"] == pytest.approx(at["random_mean"].mean() / whole, rel=1e-12)
    # monotone F_b: each pool is a subset of the whole pool, on every fold
    assert (c[["greedy", "random"]] <= 1 + 1e-12).all().all() and (c[["greedy", "random"]] >= 0).all().all()
    full = c[c["share"] == 1]
    np.testing.assert_allclose(full[["greedy", "random"]].to_numpy(), 1.0, rtol=0, atol=1e-12)


def test_reach_is_the_first_share_at_the_fraction(sweep):
    c = sweep.saturation()
    for frac in (0.5, 0.9, 1.0):
        r = sweep.saturation_reach(frac).set_index("dataset")
        for ds, d in c.groupby("dataset"):
            for col in ("greedy", "random"):
                ok = d["share"].to_numpy()[d[col].to_numpy() >= frac]
                assert r.loc[ds, col] == ok.min() and 0 < r.loc[ds, col] <= 1
    lo, hi = sweep.saturation_reach(0.3), sweep.saturation_reach(0.95)
    assert (lo[["greedy", "random"]].to_numpy() <= hi[["greedy", "random"]].to_numpy()).all()
    for bad in (0, 1.5, -0.1):
        with pytest.raises(ValueError, match="frac"):
            sweep.saturation_reach(bad)


def test_sizes_without_the_whole_pool_are_left_out():
    world = C.latent_world(n_items=60, n_models=6, datasets=("A",), seed=1)
    sw = C.pool_sweep(world.pool, sizes=[1, 2], n_folds=3, n_random=20, seed=0)
    assert sw.saturation().empty and sw.saturation_reach().empty


def _curves(sweep):
    c = sweep.saturation()
    return pd.concat([c.assign(pool="one"), c[c["dataset"] == "A"].assign(pool="two")], ignore_index=True)


def test_figure_has_one_panel_per_group_and_every_encoding_in_its_legend(sweep):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig = draw_saturation(_curves(sweep), ncols=4)
    try:
        axes = fig.axes
        assert len(axes) == 3  # two groups and the legend panel
        titles = [ax.get_title() for ax in axes[:2]]
        assert titles[0].startswith("one\n2 datasets, M = 6") and titles[1].startswith("two\n1 dataset,")
        # panel one: 2 datasets x (greedy, random) thin + 2 medians; panel two: 1 x 2 + 2
        assert [len(ax.get_lines()) for ax in axes[:2]] == [2 * 2 + 2 + 1, 2 + 2 + 1]
        leg = axes[2].get_legend()
        labels = [t.get_text() for t in leg.get_texts()]
        assert len(labels) == 5 and "90% of the whole pool" in labels
        drawn = {(ln.get_linestyle(), round(ln.get_linewidth(), 1), ln.get_color()) for ax in axes[:2]
                 for ln in ax.get_lines()}
        keyed = {(h.get_linestyle(), round(h.get_linewidth(), 1), h.get_color()) for h in leg.legend_handles}
        assert drawn <= keyed  # no line style, width or colour without a legend entry
    finally:
        plt.close(fig)
    fig = draw_saturation(_curves(sweep), frac=None, ncols=1)
    try:
        assert len(fig.axes) == 3 and len(fig.axes[2].get_legend().get_texts()) == 4
    finally:
        plt.close(fig)


def test_figure_rejects_bad_input(sweep):
    good = _curves(sweep)
    with pytest.raises(ValueError, match="curves must be a DataFrame"):
        draw_saturation(good.drop(columns="random"))
    with pytest.raises(ValueError, match="curves must be a DataFrame"):
        draw_saturation([1, 2])
    with pytest.raises(ValueError, match="at least one row"):
        draw_saturation(good.iloc[:0])
    with pytest.raises(ValueError, match="ncols"):
        draw_saturation(good, ncols=0)
    with pytest.raises(ValueError, match="frac"):
        draw_saturation(good, frac=1.5)
