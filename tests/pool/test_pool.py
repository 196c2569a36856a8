"""Pool: construction, subsetting, constructors, round trip, and every validation case."""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from oraclegap.pool import FORMAT_VERSION, Pool


def small_pool(seed=0, n=6, M=3, k=4, **kw):
    rng = np.random.default_rng(seed)
    v = rng.random((n, M, k)) < 0.4
    prompts = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "split": ["val"] * (n // 2) + ["test"] * (n - n // 2),
                            "dataset": "toy", "length": rng.integers(10, 50, n)})
    policies = pd.DataFrame({"name": [f"pol{j}" for j in range(M)], "seed": list(range(M)), "size": "7B"})
    return Pool.from_array(v, prompts, policies, **kw)


def test_counts_and_shape():
    p = small_pool()
    assert p.shape == (6, 3, 4)
    np.testing.assert_array_equal(p.counts(), p.verdicts.sum(axis=2))
    assert p.rates().max() <= 1
    assert p.splits == ["test", "val"]
    assert "Pool(n_prompts=6" in repr(p)


def test_standard_columns_present_and_features_kept():
    p = small_pool()
    for col in ("id", "text", "dataset", "split", "length"):
        assert col in p.prompts.columns
    for col in ("name", "base", "dataset", "recipe", "seed", "size", "cost"):
        assert col in p.policies.columns


def test_select_by_ids_positions_and_mask():
    p = small_pool()
    a = p.select(prompts=["q1", "q3"], policies=["pol2", "pol0"])
    assert a.shape == (2, 2, 4)
    np.testing.assert_array_equal(a.verdicts, p.verdicts[[1, 3]][:, [2, 0]])
    assert a.policy_names == ["pol2", "pol0"]
    b = p.select(prompts=np.array([True, False, True, False, False, False]))
    assert b.prompt_ids == ["q0", "q2"]
    c = p.select(policies=[1])
    assert c.policy_names == ["pol1"]


def test_split_and_unknown_split():
    p = small_pool()
    val = p.split("val")
    assert val.n_prompts == 3 and set(val.prompts["split"]) == {"val"}
    with pytest.raises(ValueError, match="unknown split 'train'"):
        p.split("train")


def test_draws_subset():
    p = small_pool()
    h = p.draws(np.arange(2))
    assert h.k == 2
    np.testing.assert_array_equal(h.verdicts, p.verdicts[:, :, :2])
    with pytest.raises(ValueError, match="draw positions"):
        p.draws([5])


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.full((2, 2, 2), 2), "binary"),
        (np.array([[[0.0, np.nan]]]), "NaN"),
        (np.zeros((2, 2)), "rank 3"),
        (np.zeros((2, 2, 2, 2)), "rank 3"),
        (np.zeros((0, 2, 2)), "zero-size"),
        (np.zeros((2, 0, 2)), "zero-size"),
        (np.zeros((2, 2, 0)), "zero-size"),
    ],
)
def test_verdict_validation(bad, match):
    with pytest.raises(ValueError, match=match):
        Pool(bad)


def test_label_validation():
    v = np.zeros((3, 2, 2), bool)
    with pytest.raises(ValueError, match="must be unique"):
        Pool(v, prompts=["a", "a", "b"])
    with pytest.raises(ValueError, match="must be unique"):
        Pool(v, policies=["x", "x"])
    with pytest.raises(ValueError, match="has 2 rows but the verdicts have 3 prompts"):
        Pool(v, prompts=["a", "b"])
    with pytest.raises(ValueError, match="has 3 rows but the verdicts have 2 policies"):
        Pool(v, policies=["x", "y", "z"])
    with pytest.raises(ValueError, match="alignment"):
        Pool(v, alignment="aligned")


def test_optional_array_validation():
    v = np.zeros((3, 2, 2), bool)
    with pytest.raises(ValueError, match="answers must have the verdicts' shape"):
        Pool(v, answers=np.full((3, 2, 1), "x"))
    with pytest.raises(ValueError, match="embeddings must have shape"):
        Pool(v, embeddings=np.zeros((2, 4)))
    with pytest.raises(ValueError, match="embeddings contain NaN"):
        Pool(v, embeddings=np.full((3, 4), np.nan))
    with pytest.raises(ValueError, match="cost must have shape"):
        Pool(v, cost=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        Pool(v, cost=-np.ones((3, 2)))


def test_roundtrip_with_everything(tmp_path):
    p = small_pool(alignment="seed-aligned")
    n, M, k = p.shape
    answers = np.array([[[f"a{i}{m}{j}" for j in range(k)] for m in range(M)] for i in range(n)])
    p = Pool(p.verdicts, p.prompts, p.policies, answers, np.arange(n * 3, dtype=float).reshape(n, 3),
             np.ones((n, M)) * 0.5, "seed-aligned", {"source": "unit test", "nested": {"x": 1}})
    p.save(tmp_path / "pool")
    q = Pool.load(tmp_path / "pool")
    np.testing.assert_array_equal(q.verdicts, p.verdicts)
    np.testing.assert_array_equal(q.answers, p.answers)
    np.testing.assert_array_equal(q.embeddings, p.embeddings)
    np.testing.assert_array_equal(q.cost, p.cost)
    assert q.alignment == "seed-aligned"
    assert q.meta == p.meta
    pd.testing.assert_frame_equal(q.prompts.astype(str), p.prompts.astype(str))
    pd.testing.assert_frame_equal(q.policies.astype(str), p.policies.astype(str))
    # overwrite is explicit and atomic
    with pytest.raises(ValueError, match="exists"):
        p.save(tmp_path / "pool")
    p.select(policies=[0]).save(tmp_path / "pool", overwrite=True)
    assert Pool.load(tmp_path / "pool").n_policies == 1
    assert not list(tmp_path.glob(".pool*"))


@settings(max_examples=30, deadline=None)
@given(arrays(np.bool_, st.tuples(st.integers(1, 5), st.integers(1, 4), st.integers(1, 19))))
def test_roundtrip_property(tmp_path_factory, v):
    d = tmp_path_factory.mktemp("rt") / "p"
    Pool(v).save(d)
    np.testing.assert_array_equal(Pool.load(d).verdicts, v)


def test_load_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        Pool.load(tmp_path / "missing")
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(ValueError, match="is not a directory"):
        Pool.load(tmp_path / "a_file")
    p = small_pool()
    d = p.save(tmp_path / "p")
    # newer format version
    m = json.loads((d / "manifest.json").read_text())
    m["version"] = FORMAT_VERSION + 1
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(ValueError, match="newer than this library supports"):
        Pool.load(d)
    # corrupt manifest
    (d / "manifest.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        Pool.load(d)
    # missing files
    d2 = p.save(tmp_path / "p2")
    (d2 / "prompts.parquet").unlink()
    with pytest.raises(ValueError, match="missing prompts.parquet"):
        Pool.load(d2)
    d3 = p.save(tmp_path / "p3")
    (d3 / "manifest.json").unlink()
    with pytest.raises(ValueError, match="no manifest.json"):
        Pool.load(d3)
    # corrupt arrays
    d4 = p.save(tmp_path / "p4")
    (d4 / "arrays.npz").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="arrays.npz .* damaged"):
        Pool.load(d4)
    # corrupt parquet
    d5 = p.save(tmp_path / "p5")
    (d5 / "policies.parquet").write_bytes(b"PAR1garbage")
    with pytest.raises(ValueError, match="policies.parquet .* damaged"):
        Pool.load(d5)


def test_load_refuses_object_arrays(tmp_path):
    d = small_pool().save(tmp_path / "p")
    with zipfile.ZipFile(d / "arrays.npz") as z:
        names = z.namelist()
    assert names == ["verdicts.npy"]
    np.savez(d / "arrays.npz", verdicts=np.array([object()], dtype=object))
    with pytest.raises(ValueError):
        Pool.load(d)


def test_from_counts_preserves_counts_and_marks_independent():
    rng = np.random.default_rng(1)
    c = rng.integers(0, 11, size=(50, 4))
    p = Pool.from_counts(c, k=10, seed=3)
    np.testing.assert_array_equal(p.counts(), c)
    assert p.alignment == "independent" and p.meta["arranged_from_counts"]
    np.testing.assert_array_equal(Pool.from_counts(c, 10, seed=3).verdicts, p.verdicts)
    # positions are spread: each draw position holds successes somewhere
    assert p.verdicts.any(axis=(0, 1)).all()
    with pytest.raises(ValueError, match=r"lie in \[0, k=10\]"):
        Pool.from_counts(c + 1, k=10)
    with pytest.raises(ValueError, match="must lie in"):
        Pool.from_counts(-c - 1, k=10)
    with pytest.raises(ValueError, match="k must be >= 1"):
        Pool.from_counts(c, k=0)


def test_from_long_balanced_and_errors():
    rows = [{"prompt_id": i, "policy": m, "draw": j, "correct": (i + "ab".index(m) + j) % 2, "ans": f"{i}{m}{j}", "ds": "d"}
            for i in range(3) for m in ("a", "b") for j in range(4)]
    df = pd.DataFrame(rows).sample(frac=1, random_state=0)
    p = Pool.from_long(df, answer="ans", prompt_columns=["ds"], alignment="seed-aligned")
    assert p.shape == (3, 2, 4)
    i, m = p.prompt_ids.index("1"), p.policy_names.index("b")
    np.testing.assert_array_equal(p.verdicts[i, m], [(1 + 1 + j) % 2 for j in range(4)])
    assert p.answers[i, m, 2] == "1b2"
    assert p.prompts["ds"].tolist() == ["d"] * 3
    with pytest.raises(ValueError, match="same number of responses"):
        Pool.from_long(df.iloc[1:])
    with pytest.raises(ValueError, match="column 'correct'"):
        Pool.from_long(df.drop(columns="correct"))
    bad = df.copy()
    bad.loc[bad.index[0], "correct"] = 3
    with pytest.raises(ValueError, match="binary"):
        Pool.from_long(bad)
    missing_cell = df[~((df.prompt_id == 0) & (df.policy == "a"))]
    with pytest.raises(ValueError, match="every policy must answer every prompt"):
        Pool.from_long(missing_cell)


def test_from_wide():
    df = pd.DataFrame({"item": ["x", "y", "z"], "cat": ["c1", "c1", "c2"], "m1": [1, 0, 1], "m2": [True, True, False]})
    p = Pool.from_wide(df, id_column="item", prompt_columns=["cat"])
    assert p.shape == (3, 2, 1) and p.policy_names == ["m1", "m2"] and p.prompt_ids == ["x", "y", "z"]
    assert p.prompts["cat"].tolist() == ["c1", "c1", "c2"]
    bad = df.copy()
    bad["m1"] = [1, np.nan, 0]
    with pytest.raises(ValueError, match=r"column 'm1' row 1 \(id 'y'\) holds a blank"):
        Pool.from_wide(bad, id_column="item", prompt_columns=["cat"])
    with pytest.raises(ValueError, match="not in df"):
        Pool.from_wide(df, id_column="nope")


def test_open_pool_resolves_every_form(tmp_path):
    from oraclegap.sources import open_pool

    p = small_pool()
    assert open_pool(p) is p
    p.save(tmp_path / "d")
    np.testing.assert_array_equal(open_pool(str(tmp_path / "d")).verdicts, p.verdicts)
    np.save(tmp_path / "v.npy", p.verdicts)
    assert open_pool(str(tmp_path / "v.npy")).shape == p.shape
    sim = open_pool("sim-exchangeable")  # an embedded registry entry: no external data needed
    assert sim.n_policies >= 2
    with pytest.raises(ValueError, match="neither an existing path nor a known dataset"):
        open_pool("no-such-pool-anywhere")


def test_per_response_arrays_follow_the_pool():
    """Per-response numeric arrays are validated, cut with the pool and survive save/load."""
    rng = np.random.default_rng(0)
    v = rng.random((6, 3, 4)) < 0.5
    conf = rng.normal(size=v.shape)
    conf[0, 0, 0] = np.nan  # "none" is NaN
    toks = rng.integers(1, 50, size=v.shape)
    pool = Pool.from_array(v, per_response={"confidence": conf, "completion_tokens": toks})
    sub = pool.select(prompts=[4, 1], policies=["m2", "m0"])
    assert np.array_equal(sub.per_response["confidence"], conf[np.ix_([4, 1], [2, 0])])
    assert np.array_equal(pool.draws([3, 1]).per_response["completion_tokens"],
                          toks[:, :, [3, 1]])
    with pytest.raises(ValueError, match="read-only"):
        pool.per_response["confidence"][0, 0, 0] = 1.0
    back = Pool.load(pool.save(Path(tempfile.mkdtemp()) / "p"))
    assert set(back.per_response) == {"confidence", "completion_tokens"}
    assert np.array_equal(back.per_response["confidence"], conf, equal_nan=True)
    assert back.per_response["completion_tokens"].dtype.kind == "i"
    assert "per_response[confidence]" in repr(pool)
    k1 = Pool.from_array(v[:, :, 0], per_response={"confidence": conf[:, :, 0]})  # 2-d arrays read as k = 1
    assert k1.per_response["confidence"].shape == (6, 3, 1)
    with pytest.raises(ValueError, match=r"per_response\['confidence'\] must have the verdicts' shape"):
        Pool.from_array(v, per_response={"confidence": conf[:, :, :2]})
    with pytest.raises(ValueError, match="must be numeric"):
        Pool.from_array(v, per_response={"text": np.full(v.shape, "a")})
    with pytest.raises(ValueError, match="identifiers"):
        Pool.from_array(v, per_response={"bad name": conf})
    with pytest.raises(ValueError, match="infinite"):
        Pool.from_array(v, per_response={"confidence": np.full(v.shape, np.inf)})


# ------------------------------------------------------------------ Pool.outcomes
def test_outcomes_at_tau_are_raw_frequency_coverage():
    p = small_pool(n=40, k=8, seed=3)
    c = p.counts()
    for tau, need in ((0.05, 1), (0.125, 1), (0.3, 3), (0.5, 4), (1.0, 8)):
        # need(tau, 8) by hand: the smallest c with c / 8 >= tau (and at least one success)
        assert need == max(1, min(c_ for c_ in range(9) if c_ / 8 >= tau - 1e-12))
        out = p.outcomes(tau=tau)
        assert out.dtype == bool and out.shape == (40, 3)
        np.testing.assert_array_equal(out, c >= need)
        np.testing.assert_array_equal(out, p.rates() >= tau - 1e-9)
    # coverage is monotone in tau
    assert (p.outcomes(tau=0.2) >= p.outcomes(tau=0.6)).all()


def test_outcomes_of_one_draw_and_of_k1_pools():
    p = small_pool(k=4, seed=1)
    for j in range(4):
        np.testing.assert_array_equal(p.outcomes(draw=j), p.verdicts[:, :, j])
    o = p.outcomes(draw=0)
    o[:] = ~o  # a copy: the pool is untouched
    np.testing.assert_array_equal(p.outcomes(draw=0), p.verdicts[:, :, 0])
    one = p.draws([2])
    np.testing.assert_array_equal(one.outcomes(), p.verdicts[:, :, 2])
    for tau in (0.01, 0.5, 1.0):  # at k = 1 every threshold gives the verdict
        np.testing.assert_array_equal(one.outcomes(tau=tau), one.outcomes())
    np.testing.assert_array_equal(one.outcomes(draw=0), one.outcomes())


def test_outcomes_refuse_bad_requests():
    p = small_pool(k=4)
    with pytest.raises(ValueError, match="k=4 draws per cell; pass draw=j"):
        p.outcomes()
    with pytest.raises(ValueError, match="not both"):
        p.outcomes(tau=0.5, draw=1)
    with pytest.raises(ValueError, match="draw"):
        p.outcomes(draw=4)
    with pytest.raises(ValueError, match=r"tau must lie in \(0, 1\]"):
        p.outcomes(tau=0.0)
    with pytest.raises(TypeError, match="tau must be a number"):
        p.outcomes(tau="half")


def test_the_outcome_helpers_are_pool_outcomes():
    from oraclegap.deploy import compose, evaluate
    from oraclegap.stats import certify

    p = small_pool(n=30, k=6, seed=7)
    for tau in (0.2, 0.5):
        want = p.outcomes(tau=tau)
        np.testing.assert_array_equal(evaluate.outcome_matrix(p, tau)[0], want)
        np.testing.assert_array_equal(compose.outcome_matrix(p, tau=tau)[0], want)
        np.testing.assert_array_equal(certify.outcomes_from_pool(p, tau=tau), want)
    np.testing.assert_array_equal(compose.outcome_matrix(p, draw=3)[0], p.outcomes(draw=3))
    np.testing.assert_array_equal(certify.outcomes_from_pool(p, draw=3), p.outcomes(draw=3))


# ------------------------------------------------------------------ Pool.concat
def _halves(p, at):
    return p.select(prompts=np.arange(at)), p.select(prompts=np.arange(at, p.n_prompts))


def test_concat_stacks_prompts_and_undoes_a_split():
    rng = np.random.default_rng(0)
    p = small_pool(n=9, k=3, seed=2)
    p = Pool(p.verdicts, p.prompts, p.policies, answers=rng.choice(["1", "22", "x"], p.shape),
             embeddings=rng.normal(size=(9, 4)), cost=rng.uniform(0, 1, (9, 3)), alignment="seed-aligned",
             per_response={"confidence": rng.normal(size=p.shape)})
    a, b = _halves(p, 4)
    c = Pool.concat([a, b])
    assert c.shape == p.shape and c.prompt_ids == p.prompt_ids and c.policy_names == p.policy_names
    np.testing.assert_array_equal(c.verdicts, p.verdicts)
    np.testing.assert_array_equal(c.answers, p.answers)
    np.testing.assert_array_equal(c.embeddings, p.embeddings)
    np.testing.assert_array_equal(c.cost, p.cost)
    np.testing.assert_array_equal(c.per_response["confidence"], p.per_response["confidence"])
    pd.testing.assert_frame_equal(c.prompts, p.prompts)
    assert c.alignment == "seed-aligned" and c.meta["concat"] == {"n_prompts": [4, 5]}
    three = Pool.concat(iter([p.select(prompts=[0]), p.select(prompts=[1, 2]), p.select(prompts=np.arange(3, 9))]))
    np.testing.assert_array_equal(three.counts(), p.counts())
    np.testing.assert_array_equal(Pool.concat([p]).verdicts, p.verdicts)


def test_concat_drops_what_not_every_pool_has_and_mixed_alignment():
    p = small_pool(n=8, k=2)
    a, b = _halves(p, 3)
    a = Pool(a.verdicts, a.prompts, a.policies, embeddings=np.zeros((3, 2)), alignment="independent")
    c = Pool.concat([a, b])
    assert c.embeddings is None and c.answers is None and c.cost is None
    assert c.alignment == "unknown"  # b is "unknown": no common claim


def test_concat_refuses_mismatched_pools():
    p = small_pool(n=8, k=4)
    a, b = _halves(p, 4)
    with pytest.raises(ValueError, match=r"pools\[1\] holds policies"):
        Pool.concat([a, b.select(policies=[1, 0, 2])])
    with pytest.raises(ValueError, match=r"pools\[1\] has k=2 draws per cell, pools\[0\] has k=4"):
        Pool.concat([a, b.draws([0, 1])])
    with pytest.raises(ValueError, match="prompt ids appear in more than one pool: \\['q0'"):
        Pool.concat([a, a])
    with pytest.raises(ValueError, match="pools is empty"):
        Pool.concat([])
    with pytest.raises(TypeError, match=r"pools\[1\] must be an oraclegap Pool"):
        Pool.concat([a, b.verdicts])
    with pytest.raises(TypeError, match="sequence of Pool objects"):
        Pool.concat(a)
    e1 = Pool(a.verdicts, a.prompts, a.policies, embeddings=np.zeros((4, 2)))
    e2 = Pool(b.verdicts, b.prompts, b.policies, embeddings=np.zeros((4, 3)))
    with pytest.raises(ValueError, match="embeddings have different dimensions"):
        Pool.concat([e1, e2])


def test_save_overwrite_keeps_files_that_are_not_the_pools(tmp_path):
    """Replacing a pool directory never deletes a file the pool did not write."""
    rng = np.random.default_rng(0)
    a = Pool.from_array(rng.random((6, 3, 2)) < 0.5)
    b = Pool.from_array(rng.random((8, 3, 2)) < 0.5)
    d = a.save(tmp_path / "p")
    (d / "notes.txt").write_text("mine")
    (d / "extra").mkdir()
    (d / "extra" / "figure.png").write_bytes(b"png")
    b.save(d, overwrite=True)
    assert Pool.load(d).shape == b.shape
    assert (d / "notes.txt").read_text() == "mine" and (d / "extra" / "figure.png").read_bytes() == b"png"
    assert not (d / "answers.parquet").exists()  # the pool's own files are replaced, not carried


def test_check_pool_returns_the_pool_and_names_the_argument():
    from oraclegap.pool import check_pool

    pool = small_pool()
    assert check_pool(pool) is pool
    with pytest.raises(TypeError, match=r"^pool must be an oraclegap\.Pool, got ndarray \(open one with"):
        check_pool(pool.verdicts)
    with pytest.raises(TypeError, match=r"^test must be an oraclegap\.Pool, got dict"):
        check_pool({}, "test")
    with pytest.raises(TypeError, match=r"^coverage: pool must be an oraclegap\.Pool, got list"):
        check_pool([], verb="coverage")
