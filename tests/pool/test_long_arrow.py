"""The columnar (Arrow) path of long parquet tables: ``Pool.to_long`` writes row groups through
Arrow and ``open_pool`` reads them back through Arrow, giving exactly the pool the row-by-row
reader gives; anything else (files edited by hand, refusals) goes to the row-by-row reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from oraclegap._formats import long_arrow
from oraclegap.pool import Pool
from oraclegap.pool import _long as pool_mod
from oraclegap.sources import open_pool

RNG = np.random.default_rng(5)


def _pool(n=7, M=3, k=4) -> Pool:
    v = RNG.random((n, M, k)) < 0.5
    prompts = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "text": [None if i == 2 else f"t {i}" for i in range(n)],
                            "dataset": ["m"] * n, "split": ["train"] * (n - 1) + [None], "level": list(range(n))})
    policies = pd.DataFrame({"name": [f"p{j}" for j in range(M)], "base": ["tiny"] * (M - 1) + [None],
                             "seed": list(range(M))})
    answers = RNG.choice(np.array(["42", "x, y", "", "multi\nline"], dtype=object), size=(n, M, k))
    return Pool.from_array(v, prompts, policies, alignment="independent", answers=answers,
                           cost=RNG.uniform(0, 1, (n, M)), meta={"source": "test", "nested": {"a": [1, 2]}},
                           per_response={"tokens": RNG.integers(1, 100, (n, M, k)).astype(np.int32)})


def _general(path: Path, monkeypatch) -> Pool:
    with monkeypatch.context() as m:
        m.setattr(long_arrow, "_read_long_arrow", lambda p: None)
        return open_pool(str(path))


def _same_pool(a: Pool, b: Pool) -> None:
    np.testing.assert_array_equal(a.verdicts, b.verdicts)
    np.testing.assert_array_equal(a.answers, b.answers)
    np.testing.assert_array_equal(a.cost, b.cost)
    assert a.per_response.keys() == b.per_response.keys()
    for key in a.per_response:
        np.testing.assert_array_equal(a.per_response[key], b.per_response[key])
        assert a.per_response[key].dtype == b.per_response[key].dtype
    pd.testing.assert_frame_equal(a.prompts, b.prompts)
    pd.testing.assert_frame_equal(a.policies, b.policies)
    assert a.alignment == b.alignment and a.meta == b.meta


@pytest.mark.parametrize("rows", [None, 40])  # one row group, and many groups that cut prompts anywhere
def test_arrow_reader_gives_the_pool_the_row_reader_gives(tmp_path, monkeypatch, rows):
    if rows is not None:
        monkeypatch.setattr(pool_mod, "_LONG_ROWS", rows)
        monkeypatch.setattr(long_arrow, "_LONG_BATCH", 29)
    pool = _pool()
    out = pool.to_long(tmp_path / "p.parquet")
    fast = long_arrow._read_long_arrow(out)
    assert fast is not None  # the columnar path took it
    _same_pool(open_pool(str(out)), _general(out, monkeypatch))
    np.testing.assert_array_equal(fast.verdicts, pool.verdicts)
    assert pq.read_metadata(out).num_row_groups == (1 if rows is None else -(-7 // max(1, 40 // 12)))


def test_edited_files_take_the_row_reader_with_its_refusals(tmp_path, monkeypatch):
    pool = _pool()
    out = pool.to_long(tmp_path / "p.parquet")
    df = pd.read_parquet(out)
    attrs = {"oraclegap": {"format": "oraclegap.long", "version": 1, "shape": [7, 3, 4], "alignment": "independent",
                           "meta": {}}}
    cases = {
        "prompt field varies": lambda d: d.assign(prompt_level=np.where(np.arange(len(d)) == 5, 99, d.prompt_level)),
        "shuffled rows": lambda d: d.sample(frac=1.0, random_state=1),
        "repeated draw": lambda d: d.assign(draw=np.where(np.arange(len(d)) == 1, 0, d.draw)),
        "not zero or one": lambda d: d.assign(correct=np.where(np.arange(len(d)) == 3, 2, d.correct)),
        # row 6 is the third draw of the second cell: its cost differs from the cell's first row
        "cost varies in a cell": lambda d: d.assign(cost=np.where(np.arange(len(d)) == 6, 0.5 + d.cost, d.cost)),
        "policies swapped": lambda d: d.assign(policy=np.where(np.arange(len(d)) == 4, "p0", d.policy)),
    }
    for name, edit in cases.items():
        e = edit(df.copy()).reset_index(drop=True)
        e.attrs = attrs
        f = tmp_path / f"{name.replace(' ', '_')}.parquet"
        e.to_parquet(f, index=False)
        assert long_arrow._read_long_arrow(f) is None, name
        try:
            general = _general(f, monkeypatch)
        except ValueError as exc:
            with pytest.raises(ValueError) as got:
                open_pool(str(f))
            assert str(got.value) == str(exc), name
        else:
            _same_pool(open_pool(str(f)), general)


def test_files_written_by_pandas_still_read(tmp_path, monkeypatch):
    """A long parquet written row by row (older to_long, or by hand) gives the same pool."""
    pool = _pool()
    out = pool.to_long(tmp_path / "p.parquet")
    df = pd.read_parquet(out)
    df.attrs = {"oraclegap": {"format": "oraclegap.long", "version": 1, "shape": list(pool.shape),
                              "alignment": pool.alignment, "meta": pool.meta}}
    f = tmp_path / "by_pandas.parquet"
    df.to_parquet(f, index=False)
    _same_pool(open_pool(str(f)), open_pool(str(out)))


@pytest.mark.parametrize("M,k", [(3, 4), (1, 1), (10, 16), (7, 1)])
def test_long_layout_slices_are_the_division_formulas(M, k):
    """Row r of a [n, M, k] table in C order is prompt r // (M k), policy (r // k) % M, draw r % k;
    the layout's slices give exactly that for runs starting anywhere, longer ones included."""
    lay = long_arrow._LongLayout(M, k, 50)
    rng = np.random.default_rng(M * 100 + k)
    runs = np.column_stack([rng.integers(0, 10_000, 20), rng.integers(1, 130, 20)])
    for r0, b in [(0, 1), (0, 50), (49, 50), (M * k, 3), *runs.tolist()]:
        rows = np.arange(r0, r0 + b)
        p_rel, pol, draw, starts = lay.at(r0, b)
        np.testing.assert_array_equal(p_rel, rows // (M * k) - r0 // (M * k))
        np.testing.assert_array_equal(pol, (rows // k) % M)
        np.testing.assert_array_equal(draw, rows % k)
        np.testing.assert_array_equal(starts, np.flatnonzero(rows % (M * k) == 0))


def test_two_writes_of_one_pool_are_byte_identical(tmp_path):
    """Text columns repeat values across prompts (a subject per prompt); the file written twice
    in one process has the same bytes (one row group past the writer's dictionary page size)."""
    rng = np.random.default_rng(0)
    n, M, k = 60_000, 3, 8
    prompts = pd.DataFrame({"id": [f"q{i}" for i in range(n)],
                            "subject": rng.choice(["alg", "geo", "num"], n),
                            "topic": rng.choice(np.array(["a", "b", None], dtype=object), n)})
    pool = Pool.from_array(rng.random((n, M, k)) < 0.5, prompts)
    first, second = pool.to_long(tmp_path / "a.parquet"), pool.to_long(tmp_path / "b.parquet")
    assert first.read_bytes() == second.read_bytes()
    back = pd.read_parquet(first, columns=["prompt_subject", "prompt_topic"]).iloc[:: M * k]
    for c in ("subject", "topic"):
        assert back[f"prompt_{c}"].fillna("-").tolist() == prompts[c].fillna("-").tolist()
