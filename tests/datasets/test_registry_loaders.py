"""The registry's loaders refuse outcome values other than 0 and 1."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oraclegap import datasets as D


def _fake_external(root: Path) -> None:
    mm = root / D.MMLUPRO
    mm.mkdir(parents=True)
    pd.DataFrame({"question_id": [1, 2, 3], "m1_5shots": [1.0, 0.0, 0.5], "m2_5shots": [0, 1, 1]}).to_csv(
        mm / "correctness_matrix.csv", index=False)
    pd.DataFrame({"question_id": [1, 2, 3], "question": ["a", "b", "c"], "category": ["x", "y", "x"],
                  "src": ["s", "s", "s"]}).to_json(mm / "questions.jsonl", orient="records", lines=True)
    ch = root / D.CHEN / "math500"
    ch.mkdir(parents=True)
    b = np.zeros((2, 2, 3))
    b[1, 0, 2] = -1.0
    np.savez(ch / "correctness_slim.npz", b=b, b_single=b[:, :, 0], greedy=b[:, :, 0],
             meta=np.array(json.dumps({"models": ["u", "v"], "temperature": 0.2, "seed": 0})))
    (ch / "subset.json").write_text(json.dumps([{"id": "i0", "prompt": "p"}, {"id": "i1", "prompt": "q"}]))
    rb = root / D.RDC / "routerbench_zs"
    rb.mkdir(parents=True)
    for split, val in (("train", 1.0), ("test", 2.0)):
        pd.DataFrame({"sample_id": [f"{split}0"], "prompt": ["p"], "eval_name": ["mbpp"], "gpt": [val],
                      "gpt|total_cost": [0.1]}).to_csv(rb / f"mbpp_{split}.csv", index=False)


def test_registry_loaders_reject_values_other_than_0_and_1(tmp_path, monkeypatch):
    _fake_external(tmp_path)
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path))
    with pytest.raises(ValueError, match=r"mmlu-pro: .*correctness_matrix.csv: column 'm1_5shots' row 2 \(question_id 3\) holds 0.5"):
        D.load("mmlu-pro")
    with pytest.raises(ValueError, match=r"chen2026-math500: array 'b' .* found other values such as \[-1.0\]"):
        D.load("chen2026-math500")
    with pytest.raises(ValueError, match=r"routerbench-mbpp: .*column 'gpt' row 1 holds 2.0"):
        D.load("routerbench-mbpp")
