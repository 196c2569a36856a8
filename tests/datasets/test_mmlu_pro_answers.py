"""MMLU-Pro's released predicted letters as the pool's answers (k = 1): read beside the verdicts,
never changing them; a plurality vote over them is a post-inference selector."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from oraclegap import datasets as D
from oraclegap.deploy.evaluate import evaluate_routers
from oraclegap.deploy.features import router_inputs


def _release(tmp_path, with_letters=True):
    recs = {
        "A": [{"question_id": q, "question": f"question {q} about x{q % 3}", "options": list("abcd"), "answer": "ABCD"[q % 4],
               "answer_index": q % 4, "category": ["math", "law"][q % 2], "src": "s", "pred": ["A", "B", None, "D"][q % 4]}
              for q in range(1, 41)],
        "B": [{"question_id": q, "question": f"question {q} about x{q % 3}", "options": list("abcd"), "answer": "ABCD"[q % 4],
               "answer_index": q % 4, "category": ["math", "law"][q % 2], "src": "s", "pred": "ABCD"[(q + 1) % 4]}
              for q in range(1, 41)],
        "C": [{"question_id": q, "question": f"question {q} about x{q % 3}", "options": list("abcd"), "answer": "ABCD"[q % 4],
               "answer_index": q % 4, "category": ["math", "law"][q % 2], "src": "s", "pred": "ABCD"[q % 4] if q % 5 else "A"}
              for q in range(1, 41)],
    }
    zips = {}
    for m, data in recs.items():
        zp = tmp_path / f"{m}.zip"
        with zipfile.ZipFile(zp, "w") as zf:
            zf.writestr(f"{m}.json", json.dumps(data))
        zips[m] = zp
    out = D.derive_mmlu_pro(zips, tmp_path / "ext" / D.MMLUPRO)
    if not with_letters:
        (out / "predicted_letters.csv").unlink()
    return recs


def test_letters_become_answers_and_leave_the_verdicts_alone(tmp_path, monkeypatch):
    recs = _release(tmp_path)
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path / "ext"))
    pool = D.load("mmlu-pro")
    assert pool.shape == (40, 3, 1) and pool.answers.shape == (40, 3, 1)
    for j, m in enumerate("ABC"):
        preds = ["" if r["pred"] is None else r["pred"] for r in recs[m]]
        assert pool.answers[:, j, 0].tolist() == preds
        assert pool.verdicts[:, j, 0].tolist() == [r["pred"] is not None and r["pred"] == r["answer"] for r in recs[m]]
    assert "predicted letter" in pool.meta["answers"]
    # without the letters file: the same verdicts, no answers, and the meta says so
    (tmp_path / "ext" / D.MMLUPRO / "predicted_letters.csv").unlink()
    bare = D.load("mmlu-pro")
    assert bare.answers is None and "absent" in bare.meta["answers"]
    assert np.array_equal(bare.verdicts, pool.verdicts)


def test_a_letters_file_missing_an_item_is_an_error(tmp_path, monkeypatch):
    _release(tmp_path)
    f = tmp_path / "ext" / D.MMLUPRO / "predicted_letters.csv"
    pl = pd.read_csv(f)
    pl.iloc[1:].to_csv(f, index=False)
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path / "ext"))
    with pytest.raises(ValueError, match="no predicted letters for question_id '1'"):
        D.load("mmlu-pro")


def test_plurality_vote_on_the_letters(tmp_path, monkeypatch):
    _release(tmp_path)
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path / "ext"))
    pool = D.load("mmlu-pro")
    X = router_inputs(pool, embed="tfidf-svd")
    assert X.answers is not None and X.answers.shape == (40, 3)
    res = evaluate_routers(pool, ["plurality_vote"], split="half", seed=0, inputs=X, n_boot=200)
    e = res.evaluation("plurality_vote")
    assert e.regime == "post-inference" and 0 <= e.accuracy <= 1


@pytest.mark.external
def test_released_letters_agree_with_the_released_verdicts(external_dir):
    f = external_dir / D.MMLUPRO / "predicted_letters.csv"
    if not f.exists():
        pytest.skip(f"{f} is absent")
    pool = D.load("mmlu-pro")
    A, V = pool.answers[:, :, 0], pool.verdicts[:, :, 0]
    assert pool.answers.shape == pool.verdicts.shape
    assert not (V & (A == "")).any()  # an unparsed answer is never counted right
    q = pd.read_json(external_dir / D.MMLUPRO / "questions.jsonl", lines=True).set_index("question_id")
    gold = q.loc[pool.prompts["id"].astype(int), "answer"].to_numpy()
    # verdicts were scored against each model's own file; a few dozen items carry another gold
    # letter there than in questions.jsonl, so agreement is near-total, not total
    agree = ((A == gold[:, None]) == V).mean()
    assert agree > 0.999
    # the verdicts are those of the correctness matrix, untouched by the letters
    cm = pd.read_csv(external_dir / D.MMLUPRO / "correctness_matrix.csv").dropna().set_index("question_id")
    assert np.array_equal(cm.loc[pool.prompts["id"].astype(int)].to_numpy().astype(bool), V)
