"""The nulls at scale: the margin chain's cache-friendly blocked schedule keeps the exact margin law,
draws do not depend on the thread count or on how the work is cut into kernel calls, and the
re-deal spreads over threads with the same draws."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from oraclegap.stats import nulls, simulate
from oraclegap.stats.nulls import _kernels, margin_null, redeal_null, tables

TAUS = (0.05, 0.10, 0.20, 0.30)
# six movable prompts, two members, k = 2: 70 tables share its margins
BLOCK_TABLE = np.array([[1, 0], [1, 1], [0, 1], [2, 0], [0, 2], [1, 1]])


def _empirical(tables) -> dict:
    keys, counts = np.unique(tables.reshape(len(tables), -1), axis=0, return_counts=True)
    return {tuple(k): c / len(tables) for k, c in zip(keys, counts, strict=True)}


@pytest.mark.parametrize("move", ["heatbath", "metropolis"])
def test_blocked_chain_matches_the_exact_margin_law(monkeypatch, move):
    monkeypatch.setattr(margin_null, "chain_block", lambda M: 2)  # three blocks of two prompts, reshuffled
    law = nulls.exact_margin_law(BLOCK_TABLE, k=2)
    assert len(law.prob) == 70
    sample = nulls.margin_chain(BLOCK_TABLE, 60_000, k=2, seed=3, move=move, thin=4 * BLOCK_TABLE.size)
    # the tables come back in prompt order: every prompt keeps its own total
    assert (sample.tables.sum(axis=2) == BLOCK_TABLE.sum(axis=1)).all()
    assert (sample.tables.sum(axis=1) == BLOCK_TABLE.sum(axis=0)).all()
    exact = {tuple(t.ravel()): p for t, p in zip(law.tables, law.prob, strict=True)}
    got = _empirical(sample.tables)
    assert set(got) <= set(exact)
    tv = 0.5 * sum(abs(got.get(key, 0.0) - p) for key, p in exact.items())
    # iid sampling from the exact law gives a total variation of about 0.01 at this size
    assert tv < 0.02
    res = nulls.null_tests(BLOCK_TABLE, (0.5,), k=2, nulls=("margin",), n_draws=20_000, seed=4, move=move)
    t = res.get("L", 0.5, "margin")
    assert t.mean == pytest.approx(law.mean("L", 0.5), abs=0.01)


def test_blocked_chain_is_used_on_large_tables_and_leaves_small_ones_unchanged():
    # one block: the blocked driver gives the draws of the global kernel
    sim = simulate.exchangeable(60, 4, 8, seed=2)
    prep = tables._prepare(sim.pool, TAUS, None)
    burn, th = margin_null._default_steps(prep.n, prep.M, None, None)
    a = margin_null._run_margin(prep, np.uint64(9), 30, burn, th, 3, "heatbath", False, False, None, True)[0]
    b = margin_null._run_margin(prep, np.uint64(9), 30, burn, th, 3, "heatbath", False, False, None, False)[0]
    np.testing.assert_array_equal(a, b)
    assert _kernels.chain_block(10) < 100_000


@pytest.mark.slow
def test_blocked_draws_do_not_depend_on_threads_or_kernel_pieces(monkeypatch):
    monkeypatch.setattr(margin_null, "chain_block", lambda M: 16)
    sim = simulate.exchangeable(300, 4, 8, seed=7)
    kw = dict(nulls=("margin", "redeal"), n_draws=64, seed=11)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = nulls.null_tests(sim.pool, TAUS, **kw)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        monkeypatch.setattr(margin_null, "_PARALLEL_WORK", 1)  # force the threaded kernels
        monkeypatch.setattr(redeal_null, "_REDEAL_PARALLEL_CELLS", 1)
        two = nulls.null_tests(sim.pool, TAUS, **kw)
        monkeypatch.setattr(margin_null, "_CHUNK", 97)  # many short kernel calls, burn-in and thinning cut anywhere
        monkeypatch.setattr(redeal_null, "_REDEAL_CHUNK_CELLS", 50)
        cut = nulls.null_tests(sim.pool, TAUS, **kw)
    finally:
        numba.set_num_threads(old)
    for x in (two, cut):
        for t1, t2 in zip(one.tests, x.tests, strict=True):
            np.testing.assert_array_equal(t1.draws, t2.draws)
    # the blocked chain's stored tables are the tables its statistics came from
    sample = nulls.margin_chain(sim.pool, 64, seed=11)
    st_ = nulls.table_statistics(sample.tables, TAUS, 8)
    np.testing.assert_allclose(one.get("L", 0.2, "margin").draws, st_.L[:, 2], atol=1e-12)


def test_blocked_kernels_serial_and_threaded_agree():
    sim = simulate.exchangeable(200, 3, 6, seed=5)
    prep = tables._prepare(sim.pool, TAUS, None)
    na, M = prep.active.size, prep.M
    outs = []
    for kern in (_kernels.run_block_chains, _kernels.run_block_chains_parallel):
        states = np.ascontiguousarray(np.broadcast_to(prep.c_active, (3, na, M)).copy())
        perms = np.ascontiguousarray(np.broadcast_to(np.arange(na), (3, na)).copy())
        pos = np.zeros(3, np.int64)
        stats = np.empty((9, 3 * len(TAUS) + 1))
        tabs = np.empty((9, na, M), np.int64)
        kern(states, np.array([5, 6, 7], np.uint64), prep.k, 500, 40, np.array([3, 3, 3]), np.array([0, 3, 6]),
             True, prep.needs, prep.need_mix, prep.n, stats, tabs, True, np.zeros(3, np.int64), perms, pos, na * M, 32)
        # stored tables are in prompt order: rows keep their prompt totals; statistics match them
        assert (tabs.sum(axis=2) == prep.totals).all()
        # L counts prompts; all-wrong and all-right prompts add nothing to it
        np.testing.assert_allclose(nulls.table_statistics(tabs, TAUS, prep.k).L * na,
                                   stats[:, :len(TAUS)] * prep.n, atol=1e-9)
        assert sorted(perms[0]) == list(range(na))
        outs.append((stats, states, perms, pos))
    for a, b in zip(outs[0], outs[1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_preset_keys_give_the_draws_of_the_generator_and_consume_it_alike():
    sim = simulate.exchangeable(120, 4, 8, seed=5)
    a, b = np.random.default_rng(21), np.random.default_rng(21)
    direct = nulls.null_tests(sim.pool, TAUS, n_draws=40, seed=a)
    preset = nulls.null_tests(sim.pool, TAUS, n_draws=40, seed=tables._PresetKeys.draw(b))
    for t1, t2 in zip(direct.tests, preset.tests, strict=True):
        np.testing.assert_array_equal(t1.draws, t2.draws)
    assert a.integers(0, 2**62) == b.integers(0, 2**62)  # both Generators advanced by the same draws
    other = nulls.null_tests(sim.pool, TAUS, n_draws=40, seed=tables._PresetKeys.draw(np.random.default_rng(22)))
    assert not np.array_equal(direct.tests[0].draws, other.tests[0].draws)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs numba to allow two threads")
def test_study_replicates_on_worker_threads_give_the_sequential_results():
    from oraclegap.stats import studies

    kw = dict(n=150, M=4, k=8, n_reps=5, nulls=("redeal", "margin"), seed=8, sigma=0.7, n_draws=60)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)  # one worker: the replicates one after another
        one = studies.power("diffuse", **kw).frame()
        numba.set_num_threads(2)
        two = studies.power("diffuse", **kw).frame()
    finally:
        numba.set_num_threads(old)
    assert one.equals(two)
    assert (one["reps"] == 5).all() and set(one["null"]) == {"redeal", "margin"}
