"""The files other router tools publish, read as they are.

RouterEval's router-dataset pickles (nested ``router_dataset[difficulty][n][config]`` and a
fork's single leaf) and RouterBench's ``routerbench_0shot.pkl`` (a pandas frame) are read by the
restricted unpickler of :mod:`oraclegap._safepickle`; hostile pickles (``os.system``,
``builtins.eval``, ``subprocess.Popen``, a nested ``__reduce__``, a pandas global that is not on
the allow-list) are refused naming the global, and the side effect each would have is checked
NOT to happen. Fixtures are small pickles written here with numpy/pandas objects. Also: the wide
CSV's prompt-text column (``--text-column``, common names) and list-literal cells.
"""

from __future__ import annotations

import os
import pickle
import subprocess

import numpy as np
import pandas as pd
import pytest

from oraclegap import cli
from oraclegap._safepickle import ALLOWED_GLOBALS, UnsafePickle, safe_loads
from oraclegap.sources import detect_format, open_pool

RNG = np.random.default_rng(23)


def _obj_frame(d: dict) -> pd.DataFrame:
    """A frame whose text columns and column index are object arrays (as RouterBench's pandas 1/2 pickle holds)."""
    df = pd.DataFrame({k: (pd.Series(v, dtype=object) if isinstance(v[0], str) else v) for k, v in d.items()})
    df.columns = pd.Index(list(d), dtype=object)
    return df


def _routereval_leaf(n_train=6, n_test=4, M=3, names=("llama", "qwen", "mistral")):
    s_tr = (RNG.random((n_train, M)) < 0.5).astype(float)
    s_te = (RNG.random((n_test, M)) < 0.5).astype(float)
    return {"data": {"train_score": s_tr, "test_score": s_te, "train_embed": RNG.normal(size=(n_train, 4)),
                     "test_embed": RNG.normal(size=(n_test, 4)), "train_tokens": RNG.integers(1, 9, (n_train, M)).astype(float),
                     "test_tokens": RNG.integers(1, 9, (n_test, M)).astype(float), "train_extra": np.zeros(n_train)},
            "model": list(names), "prompt": {"train_prompt": [f"train q{i}" for i in range(n_train)],
                                             "test_prompt": [f"test q{i}" for i in range(n_test)]}}


# ============================================================================ RouterEval .pkl
def test_routereval_leaf_pickle_reads_names_and_arrays(tmp_path):
    leaf = _routereval_leaf()
    f = tmp_path / "router_dataset_leaf.pkl"
    f.write_bytes(pickle.dumps(leaf, protocol=4))
    pool = open_pool(str(f))
    assert pool.meta["read_as"]["format"] == "routereval"
    assert pool.policy_names == leaf["model"] and pool.meta["model_names_from"] == "the file ('model' list)"
    expect = np.concatenate([leaf["data"]["train_score"], leaf["data"]["test_score"]]) == 1
    np.testing.assert_array_equal(pool.verdicts[:, :, 0], expect)
    np.testing.assert_allclose(pool.embeddings, np.concatenate([leaf["data"]["train_embed"], leaf["data"]["test_embed"]]))
    assert pool.prompts["text"].tolist() == leaf["prompt"]["train_prompt"] + leaf["prompt"]["test_prompt"]
    assert pool.meta["ignored_members"] == ["train_extra"]  # what the importer drops is recorded
    np.testing.assert_allclose(pool.per_response["tokens"][:, :, 0],
                               np.concatenate([leaf["data"]["train_tokens"], leaf["data"]["test_tokens"]]))
    named = open_pool(str(f), model_names=["a", "b", "c"])
    assert named.policy_names == ["a", "b", "c"] and named.meta["model_names_from"] == "the model_names argument"


def test_routereval_nested_pickle_needs_a_leaf(tmp_path):
    a, b = _routereval_leaf(), _routereval_leaf(names=("x", "y", "z"))
    nested = {"easy": {3: [a, b]}, "hard": {5: [a]}}
    f = tmp_path / "router_dataset.pkl"
    f.write_bytes(pickle.dumps(nested, protocol=2))
    with pytest.raises(ValueError, match=r"holds 3 RouterEval router datasets \(easy/3/0, easy/3/1, hard/5/0\); pick one "
                                         r"with leaf='easy/3/0' \(CLI --leaf easy/3/0\)"):
        open_pool(str(f))
    pool = open_pool(str(f), leaf="easy/3/1")
    assert pool.policy_names == ["x", "y", "z"] and pool.meta["leaf"] == "easy/3/1"
    np.testing.assert_array_equal(pool.verdicts[:6, :, 0], b["data"]["train_score"] == 1)
    with pytest.raises(ValueError, match=r"leaf 'easy/9/0' is not in"):
        open_pool(str(f), leaf="easy/9/0")
    assert cli.main(["coverage", str(f), "--leaf", "hard/5/0", "--json"]) == 0


# ============================================================================ RouterBench .pkl
def test_routerbench_pickle_frame_is_read_without_conversion(tmp_path):
    V = (RNG.random((5, 2)) < 0.5).astype(float)
    d = {"Unnamed: 0": list(range(5)), "sample_id": [f"arc.{i}" for i in range(5)],
         "prompt": [f"['Question {i}\\nA) dry palms']" for i in range(5)], "eval_name": ["arc"] * 5,
         "gpt-4": V[:, 0], "gpt-4|model_response": ["['D']"] * 5, "gpt-4|total_cost": [0.01] * 5,
         "llama": V[:, 1], "llama|model_response": ["['A']"] * 5, "llama|total_cost": [0.001] * 5}
    f = tmp_path / "routerbench_0shot.pkl"
    f.write_bytes(pickle.dumps(_obj_frame(d), protocol=4))
    assert detect_format(str(f))[0] == "routerbench"
    pool = open_pool(str(f))
    np.testing.assert_array_equal(pool.verdicts[:, :, 0], V == 1)
    assert pool.prompts["text"].iloc[2] == "Question 2\nA) dry palms"  # the cell's literal backslash-n decoded
    assert pool.answers[0, 0, 0] == "D" and pool.answers[0, 1, 0] == "A"
    assert pool.meta["ignored_columns"] == ["Unnamed: 0"] and pool.meta["list_literal_cells_parsed"] == 15
    g = tmp_path / "not_a_frame.pkl"
    g.write_bytes(pickle.dumps([1, 2, 3]))
    with pytest.raises(ValueError, match=r"is a pickle holding a list, neither a RouterBench DataFrame nor a RouterEval"):
        open_pool(str(g))
    with pytest.raises(ValueError, match=r"holds a list, not a pandas DataFrame"):
        open_pool(str(g), format="routerbench")


# ============================================================================ hostile pickles
class _Reduce:
    """An object that pickles as a call of ``fn(*args)`` (what a hostile file holds)."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _hostile(marker):
    m = str(marker)
    return {
        "os.system": (_Reduce(os.system, (f"touch {m}",)), f"{os.system.__module__}.system"),
        "builtins.eval": (_Reduce(eval, (f"open({m!r}, 'w').close()",)), "builtins.eval"),
        "subprocess.Popen": (_Reduce(subprocess.Popen, (["touch", m],)), "subprocess.Popen"),
        # nested: a genuine RouterEval leaf whose arrays load first, then a __reduce__ deep inside
        "nested": ({"easy": {3: [{"data": {"train_score": np.zeros((2, 2)),
                                            "test_score": [np.ones(2), _Reduce(os.system, (f"touch {m}",))]},
                                   "model": ["a", "b"]}]}}, f"{os.system.__module__}.system"),
        # a pandas global that is not a reconstruction function: read_pickle would load the file unrestricted
        "pandas-looking": (_Reduce(pd.read_pickle, (m + ".inner",)), f"{pd.read_pickle.__module__}.read_pickle"),
    }


@pytest.mark.parametrize("kind", ["os.system", "builtins.eval", "subprocess.Popen", "nested", "pandas-looking"])
@pytest.mark.parametrize("protocol", [2, 4])
def test_hostile_pickles_are_refused_before_anything_runs(tmp_path, kind, protocol, capsys):
    marker = tmp_path / "side_effect"
    # pandas-looking: the inner file is an ordinary hostile pickle that read_pickle would run
    (tmp_path / "side_effect.inner").write_bytes(pickle.dumps(_Reduce(os.system, (f"touch {marker}",))))
    obj, name = _hostile(marker)[kind]
    blob = pickle.dumps(obj, protocol=protocol)
    assert name not in ALLOWED_GLOBALS
    with pytest.raises(UnsafePickle, match=rf"names the global '{name}', which is not on oraclegap's allow-list"):
        safe_loads(blob, "hostile.pkl")
    f = tmp_path / "router_dataset.pkl"
    f.write_bytes(blob)
    with pytest.raises(ValueError, match=rf"router_dataset.pkl names the global '{name}'.*refused before anything in it ran"):
        open_pool(str(f))
    assert cli.main(["coverage", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and name in err and "Traceback" not in err
    for fmt in ("routereval", "routerbench"):
        with pytest.raises(ValueError, match=rf"names the global '{name}'"):
            open_pool(str(f), format=fmt)
    assert not marker.exists(), f"the {kind} pickle ran code"


def test_hostile_control_the_payload_would_run(tmp_path):
    # the negative control: the same bytes, loaded by the unrestricted unpickler, do create the file
    marker = tmp_path / "side_effect"
    pickle.loads(pickle.dumps(_Reduce(subprocess.run, (["touch", str(marker)],))))
    assert marker.exists()


def test_persistent_ids_and_arrow_buffers_are_refused():
    class P(pickle.Pickler):
        def persistent_id(self, obj):
            return "x" if obj == "ref" else None

    import io

    buf = io.BytesIO()
    P(buf, protocol=4).dump(["ref"])
    with pytest.raises(UnsafePickle, match="persistent ids"):
        safe_loads(buf.getvalue())
    assert "pyarrow.lib._restore_array" not in ALLOWED_GLOBALS and "builtins.getattr" not in ALLOWED_GLOBALS


# ============================================================================ wide CSV text columns and literals
def test_wide_csv_text_column_and_common_names(tmp_path):
    f = tmp_path / "mmlu_physics.csv"
    f.write_text("id,prompt,gold,gpt4,llama\n"
                 "q0,\"['What is g?\\nA) 9.8']\",['A'],1,0\nq1,What is c?,['B'],0,1\nq2,plain,['C'],1,1\n")
    pool = open_pool(str(f), prompt_columns=["gold"])
    assert pool.policy_names == ["gpt4", "llama"]
    assert pool.prompts["text"].tolist() == ["What is g?\nA) 9.8", "What is c?", "plain"]  # the literal's escape decoded
    assert pool.prompts["gold"].tolist() == ["A", "B", "C"]
    assert pool.meta["text_from"] == "column 'prompt' (a common name of the prompt text)"
    assert pool.meta["list_literal_cells_parsed"] == {"prompt": 1, "gold": 3}
    g = tmp_path / "q.csv"
    g.write_text("id,body,question,a,b\nq0,hello,other,1,0\nq1,world,other2,0,1\n")
    p2 = open_pool(str(g), text_column="body", prompt_columns=["question"])
    assert p2.prompts["text"].tolist() == ["hello", "world"] and "the text_column argument" in p2.meta["text_from"]
    with pytest.raises(ValueError, match=r"text_column 'nope' is not a column"):
        open_pool(str(g), text_column="nope")
    np.save(tmp_path / "v.npy", np.ones((2, 2), np.int8))
    with pytest.raises(ValueError, match=r"text_column apply to wide CSV files only"):
        open_pool(str(tmp_path / "v.npy"), text_column="x")


def test_literal_parsing_never_evaluates_code():
    from oraclegap._formats import literal_list

    assert literal_list("['a', 'b']") == ["a", "b"] and literal_list("('x',)") == ["x"]
    for bad in ("[__import__('os').system('true')]", "[1, 2]", "['a', 1]", "not a list", "[", 5, None):
        assert literal_list(bad) is None
