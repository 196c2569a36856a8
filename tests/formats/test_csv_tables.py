"""Wide and long CSV tables read as pools: a bad cell is named by column and line, models are
the declared columns (never guessed from dtypes), standard label columns are not models,
``true``/``false`` read like 1/0 in long and wide tables, and Excel's ``sep=,`` line is
skipped and counted in line numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oraclegap.sources import open_pool


def write(path: Path, text: str, encoding="utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_csv_bad_cell_is_an_error_naming_column_and_line(tmp_path):
    f = write(tmp_path / "w.csv", "id,a,b,c\nq0,1,0,1\nq1,0,yes,1\nq2,1,1,0\n")
    with pytest.raises(ValueError, match=r"column 'b' line 3 \(id 'q1'\) holds 'yes'"):
        open_pool(str(f))
    f = write(tmp_path / "blank.csv", "id,a,b\nq0,1,0\nq1,,1\n")
    with pytest.raises(ValueError, match=r"column 'a' line 3 .* blank"):
        open_pool(str(f))
    f = write(tmp_path / "half.csv", "id,a,b\nq0,1,0.5\n")
    with pytest.raises(ValueError, match=r"column 'b' line 2 .* '0.5'"):
        open_pool(str(f))


def test_csv_models_are_chosen_by_declaration_not_dtype(tmp_path):
    f = write(tmp_path / "w.csv", "id,is_math,a,b,topic\nq0,1,1,0,alg\nq1,0,0,1,geo\nq2,1,1,1,alg\n")
    # a text metadata column is an error unless declared (it is not silently dropped)
    with pytest.raises(ValueError, match=r"column 'topic' line 2 .* 'alg'"):
        open_pool(str(f))
    p = open_pool(str(f), prompt_columns="is_math,topic")
    assert p.policy_names == ["a", "b"] and p.prompts["is_math"].tolist() == ["1", "0", "1"]
    np.testing.assert_array_equal(p.verdicts[:, :, 0], [[1, 0], [0, 1], [1, 1]])
    q = open_pool(str(f), models=["b"])
    assert q.policy_names == ["b"] and q.n_prompts == 3
    with pytest.raises(ValueError, match="models names columns not in"):
        open_pool(str(f), models="a,nope")
    with pytest.raises(ValueError, match="repeats"):
        open_pool(str(f), models="a,a")


def test_csv_standard_label_columns_are_not_models(tmp_path):
    f = write(tmp_path / "w.csv", "item_id,text,split,m1,m2\nx,what is 2+2,test,1,0\ny,name a prime,train,0,0\n")
    p = open_pool(str(f))
    assert p.policy_names == ["m1", "m2"] and p.prompt_ids == ["x", "y"] and p.splits == ["test", "train"]


def test_true_and_false_read_alike_in_long_and_wide_tables(tmp_path):
    rng = np.random.default_rng(3)
    v = rng.random((5, 2)) < 0.5
    words = [["TRUE", "false"], ["True", "FALSE"], ["true", "0"], ["1", "False"], ["1.0", "0.0"]]
    cells = np.where(v, np.array([[w[0]] * 2 for w in words]), np.array([[w[1]] * 2 for w in words]))
    wide = pd.DataFrame({"id": [f"q{i}" for i in range(5)], "a": cells[:, 0], "b": cells[:, 1]})
    wide.to_csv(tmp_path / "wide.csv", index=False)
    long = pd.DataFrame({"prompt_id": np.repeat(wide["id"], 2), "policy": ["a", "b"] * 5, "correct": cells.ravel()})
    long.to_csv(tmp_path / "long.csv", index=False)
    w, lg = open_pool(str(tmp_path / "wide.csv")), open_pool(str(tmp_path / "long.csv"))
    np.testing.assert_array_equal(w.verdicts[:, :, 0], v)
    np.testing.assert_array_equal(lg.verdicts[:, :, 0], v)


def test_excel_sep_line_is_skipped_and_counted_in_line_numbers(tmp_path):
    body = "id,a,b\nq0,1,0\nq1,0,1\nq2,1,1\n"
    (tmp_path / "plain.csv").write_text(body)
    (tmp_path / "excel.csv").write_text("sep=,\r\n" + body.replace("\n", "\r\n"))
    a, b = open_pool(str(tmp_path / "plain.csv")), open_pool(str(tmp_path / "excel.csv"))
    np.testing.assert_array_equal(a.verdicts, b.verdicts)
    assert list(a.prompt_ids) == list(b.prompt_ids) == ["q0", "q1", "q2"]
    long = "prompt_id,policy,correct\np0,a,1\np0,b,0\np1,a,0\np1,b,1\n"
    (tmp_path / "long.csv").write_text("sep=,\n" + long)
    assert open_pool(str(tmp_path / "long.csv")).meta["read_as"]["format"] == "long"
    (tmp_path / "ragged.csv").write_text("sep=,\n" + body + "q3,1\n")
    with pytest.raises(ValueError, match=r"ragged.csv: line 6 has 2 fields but the header has 3"):
        open_pool(str(tmp_path / "ragged.csv"))


def test_separator_check_leaves_binary_text_to_its_own_reader():
    """A pickle's bytes decoded as text can hold a bare carriage return, which the csv module refuses:
    the separator check then says nothing and the file's own reader decides (it raised csv.Error)."""
    from oraclegap._formats import csv_preamble

    junk = "\x80\x04\x95\r\x00abc,def\rxyz\n\x00\x01;\x02"
    assert csv_preamble(junk, "f.pkl") == (junk, 0)
