"""Evaluation-harness outputs read as pools (oraclegap._harness), checked against independent counts.

The fixtures in data/harness/ are real runs of lm-evaluation-harness and inspect_ai on four of the lab's
models (data/harness/make_fixtures.py). Every count here is made from the raw files with plain ``json``
and a grader written for the test (the last integer of a response against the target), never with the
importers' code; the refusals are made from copies of the real files with one thing changed.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from oraclegap import _harness
from oraclegap.sources import FORMAT_NAMES, detect_format, open_pool

ROOT = Path(__file__).resolve().parents[2]
H = ROOT / "data" / "harness"
LM_DEFAULT = H / "lmeval" / "default-seed"
LM_PER_MODEL = H / "lmeval" / "per-model-seed"
LM_PER_DRAW = H / "lmeval-per-draw" / "default-seed"
INSPECT = H / "inspect"
INSPECT_EVAL = H / "inspect-eval"


def _last_int(text: str) -> str | None:
    found = re.findall(r"-?\d+", text)
    return found[-1] if found else None


def lm_counts(folder: Path, *, per_draw: bool = False, last_int: bool = False) -> dict[str, np.ndarray]:
    """model folder -> verdicts [n_docs, k] from the samples files, graded here as the fixture's task defines
    it (the whole response equals the target, case ignored; with last_int, the response's last integer
    equals it, as the per-draw task's regex extracts), or, per_draw, the harness's exact_match of the filter
    named draw<j>."""
    out = {}
    for model in sorted(p for p in folder.iterdir() if p.is_dir()):
        (samples,) = list(model.glob("samples_*.jsonl"))
        cells: dict[int, dict[int, bool]] = defaultdict(dict)
        for line in samples.read_text().splitlines():
            rec = json.loads(line)
            if per_draw:
                j = int(rec["filter"].removeprefix("draw"))
                cells[rec["doc_id"]][j] = rec["exact_match"] == 1
            else:
                for j, resp in enumerate(rec["resps"][0]):
                    got = _last_int(resp) if last_int else resp.lower()
                    cells[rec["doc_id"]][j] = got == str(rec["target"]).lower()
        docs = sorted(cells)
        out[model.name] = np.array([[cells[d][j] for j in sorted(cells[d])] for d in docs])
    return out


def inspect_counts(folder: Path) -> dict[str, np.ndarray]:
    """model folder name -> verdicts [n_samples, epochs] from the JSON logs' 'C'/'I' values."""
    out = {}
    for f in sorted(folder.glob("*.json")):
        log = json.loads(f.read_text())
        name = Path(log["eval"]["model_args"]["model_path"]).name
        cells: dict[str, dict[int, bool]] = defaultdict(dict)
        for s in log["samples"]:
            cells[s["id"]][s["epoch"]] = s["scores"]["match"]["value"] == "C"
        out[name] = np.array([[cells[i][e] for e in sorted(cells[i])] for i in sorted(cells)])
    return out


def _check_against(pool, counts: dict[str, np.ndarray]) -> None:
    assert sorted(pool.policy_names) == sorted(counts)
    n, k = next(iter(counts.values())).shape
    assert (pool.n_prompts, pool.n_policies, pool.k) == (n, len(counts), k)
    for name, v in counts.items():
        m = list(pool.policy_names).index(name)
        assert pool.verdicts[:, m, :].sum() == v.sum(), name
        assert pool.verdicts[:, m, :].mean() == pytest.approx(v.mean()), name


# ---------------------------------------------------------------------------- lm-evaluation-harness
def test_lmeval_folder_is_detected_and_read_as_the_independent_count():
    assert detect_format(LM_DEFAULT)[0] == "lm-eval"
    pool = open_pool(LM_DEFAULT)
    counts = lm_counts(LM_DEFAULT)
    _check_against(pool, counts)
    assert pool.meta["read_as"]["format"] == "lm-eval"
    assert "re-graded" in pool.meta["tasks"]["lab48"]["verdicts_from"]
    # per-prompt totals, not only the means: every cell's count of successes
    for name, v in counts.items():
        m = list(pool.policy_names).index(name)
        assert np.array_equal(pool.verdicts[:, m, :].sum(axis=1), v.sum(axis=1))


def test_lmeval_default_seeds_are_seed_aligned_and_per_model_seeds_independent():
    a = open_pool(LM_DEFAULT)
    b = open_pool(LM_PER_MODEL)
    assert a.alignment == "seed-aligned" and "1234" in a.meta["alignment_from"]
    assert b.alignment == "independent"
    _check_against(b, lm_counts(LM_PER_MODEL))

    def same_text(p):  # share of (prompt, draw) with the same response, per pair of models
        ans = p.answers
        M = ans.shape[1]
        return [float((ans[:, i] == ans[:, j]).mean()) for i in range(M) for j in range(i + 1, M)]

    # common random numbers make the same response at the same (prompt, draw) more common
    assert np.mean(same_text(a)) > np.mean(same_text(b))


def test_lmeval_per_draw_filters_are_the_harness_own_verdicts():
    pool = open_pool(LM_PER_DRAW)
    harness = lm_counts(LM_PER_DRAW, per_draw=True)
    _check_against(pool, harness)
    assert "per-draw filters" in pool.meta["tasks"]["lab48_per_draw"]["verdicts_from"]
    # draw j of the pool is response j: the harness's per-draw verdicts equal the test's own grading
    own = lm_counts(LM_PER_DRAW, last_int=True)
    assert all(np.array_equal(harness[m], own[m]) for m in harness)


def test_lmeval_one_samples_file_and_a_model_folder(tmp_path):
    model = LM_DEFAULT / "lab-base"
    (samples,) = list(model.glob("samples_*.jsonl"))
    assert detect_format(samples)[0] == "lm-eval"
    one = open_pool(samples)
    assert one.policy_names == ["lab-base"] and one.meta["models"]["lab-base"]["named_from"].startswith("results")
    assert np.array_equal(one.verdicts[:, 0], open_pool(model).verdicts[:, 0])
    # without the results file beside it, the model is named from its folder and the pool says so
    alone = tmp_path / "my-model"
    alone.mkdir()
    shutil.copy(samples, alone / samples.name)
    p = open_pool(alone / samples.name)
    assert p.policy_names == ["my-model"] and "folder name" in p.meta["models"]["my-model"]["named_from"]


def test_lmeval_results_file_alone_is_refused_with_the_way():
    (res,) = list((LM_DEFAULT / "lab-base").glob("results_*.json"))
    with pytest.raises(ValueError, match="aggregate scores.*samples_<task>"):
        open_pool(res)


def test_lmeval_two_runs_of_one_model_are_never_counted_twice():
    with pytest.raises(ValueError, match="twice.*counted once"):
        open_pool(H / "lmeval")


def _copy_one_model(tmp_path: Path, edit) -> Path:
    out = tmp_path / "run" / "lab-base"
    shutil.copytree(LM_DEFAULT / "lab-base", out)
    (samples,) = list(out.glob("samples_*.jsonl"))
    lines = [json.loads(x) for x in samples.read_text().splitlines()]
    samples.write_text("".join(json.dumps(edit(i, r)) + "\n" for i, r in enumerate(lines)))
    return out


def test_lmeval_a_metric_it_cannot_regrade_is_refused_with_the_recipe(tmp_path):
    def to_bleu(i, r):
        r["bleu"] = r.pop("exact_match")
        r["metrics"] = ["bleu"]
        return r

    folder = _copy_one_model(tmp_path, to_bleu)
    with pytest.raises(ValueError, match=r"scores only draw 0.*'bleu'.*draw<j>.*utils\.py") as e:
        open_pool(folder)
    assert "\n" not in str(e.value)


def test_lmeval_a_regrade_that_disagrees_with_the_harness_is_refused(tmp_path):
    def flip(i, r):
        if i == 5:
            r["exact_match"] = 1.0 - r["exact_match"]
        return r

    with pytest.raises(ValueError, match="disagrees with the harness's own score on 1 of 48"):
        open_pool(_copy_one_model(tmp_path, flip))


def test_lmeval_documents_that_differ_between_models_are_refused(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(LM_DEFAULT, run)
    (samples,) = list((run / "lab-base").glob("samples_*.jsonl"))
    lines = [json.loads(x) for x in samples.read_text().splitlines()]
    lines[3]["doc_hash"] = "0" * 64
    samples.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(ValueError, match="differs between models"):
        open_pool(run)


def test_lmeval_a_missing_document_is_named_or_dropped(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(LM_DEFAULT, folder)
    (samples,) = list((folder / "lab-base").glob("samples_*.jsonl"))
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(ValueError, match="did not answer the same prompts"):
        open_pool(folder)
    p = open_pool(folder, drop_incomplete=True)
    assert p.n_prompts == 47 and p.meta["dropped"]


# ---------------------------------------------------------------------------- inspect_ai
def test_inspect_folder_is_read_as_the_independent_count():
    assert detect_format(INSPECT)[0] == "inspect"
    pool = open_pool(INSPECT)
    _check_against(pool, inspect_counts(INSPECT))
    # every log says hf/local: the models are told apart by model_args.model_path
    assert {m["model"] for m in pool.meta["models"].values()} == {"hf/local"}
    assert pool.alignment == "independent"  # per-model --seed
    assert pool.meta["read_as"]["format"] == "inspect"


def test_inspect_logs_that_cannot_be_told_apart_are_refused(tmp_path):
    for f in sorted(INSPECT.glob("*.json"))[:2]:
        log = json.loads(f.read_text())
        log["eval"]["model_args"] = {}
        (tmp_path / f.name).write_text(json.dumps(log))
    with pytest.raises(ValueError, match="several logs name the model 'hf/local'.*no model_path"):
        open_pool(tmp_path)


def test_inspect_partial_scores_need_a_threshold(tmp_path):
    f = sorted(INSPECT.glob("*.json"))[0]
    log = json.loads(f.read_text())
    log["samples"][0]["scores"]["match"]["value"] = "P"
    out = tmp_path / f.name
    out.write_text(json.dumps(log))
    with pytest.raises(ValueError, match="'P' \\(partial credit"):
        open_pool(out)
    first_was_wrong = json.loads(f.read_text())["samples"][0]["scores"]["match"]["value"] == "I"
    base = inspect_counts(INSPECT)[Path(log["eval"]["model_args"]["model_path"]).name].sum()
    assert open_pool(out, score_threshold=0.5).verdicts.sum() == base + int(first_was_wrong)
    assert open_pool(out, score_threshold=0.6).verdicts.sum() == base - int(not first_was_wrong)


def test_inspect_eval_log_without_inspect_ai_says_how_to_convert(monkeypatch):
    (ev,) = list(INSPECT_EVAL.glob("*.eval"))
    assert detect_format(ev)[0] == "inspect"
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(ValueError, match="inspect log convert .* --to json") as e:
        open_pool(ev)
    assert "\n" not in str(e.value)


# ---------------------------------------------------------------------------- every verb, the fixture loader
def test_every_harness_format_is_a_format_name():
    for fmt in _harness.FORMATS:
        assert fmt in FORMAT_NAMES


@pytest.mark.parametrize("name", list(_harness.FIXTURES))
def test_fixture_loader_reads_each_committed_fixture(name):
    pool = _harness.fixture(name)
    assert pool.k >= 1 and pool.n_policies >= 2


def test_cli_audit_of_an_lmeval_folder_names_the_models_and_the_alignment(run_cli, tmp_path):
    rc, _, err = run_cli("audit", LM_DEFAULT, "--out", tmp_path / "a", "--small", "--no-report", "--quiet")
    assert rc == 0, err[-2000:]
    text = (tmp_path / "a" / "audit.json").read_text()
    counts = lm_counts(LM_DEFAULT)
    n, k = next(iter(counts.values())).shape
    assert f'"n_prompts": {n}' in text and f'"k": {k}' in text and f'"n_policies": {len(counts)}' in text
    assert '"alignment": "seed-aligned"' in text
    for name in counts:
        assert f'"{name}"' in text


def test_cli_coverage_reads_an_inspect_folder_and_refuses_a_bad_one_in_one_line(run_cli, tmp_path):
    rc, out, err = run_cli("coverage", INSPECT, "--json")
    assert rc == 0, err[-2000:]
    (tmp_path / "x.json").write_text(json.dumps({"eval": {"model": "hf/local"}, "samples": []}))
    rc, out, err = run_cli("coverage", tmp_path / "x.json")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "no samples" in err


def test_eval_log_through_inspect_ai_when_installed():
    pytest.importorskip("inspect_ai")
    (ev,) = list(INSPECT_EVAL.glob("*.eval"))
    pool = open_pool(ev)
    assert (pool.n_prompts, pool.n_policies, pool.k) == (2, 1, 2)


def test_harness_page_is_in_the_book_and_current():
    from oraclegap.book import harness_page, quarto_pages

    assert harness_page.PAGE in [p.file for p in quarto_pages(ROOT)]
    assert (ROOT / harness_page.PAGE).read_text(encoding="utf-8") == harness_page.page_text(ROOT)


def test_harness_page_without_its_markers_is_refused(tmp_path):
    from oraclegap.book import harness_page

    (tmp_path / harness_page.PAGE).write_text("# From your evaluation harness {.unnumbered}\n")
    with pytest.raises(ValueError, match="markers"):
        harness_page.page_text(tmp_path)


# ---------------------------------------------------------------------------- long tables written by hand
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_long_table_with_a_model_or_text_column_says_what_to_rename(tmp_path, suffix):
    import pandas as pd

    d = pd.DataFrame({"prompt_id": ["p1", "p1", "p2", "p2"], "model": ["a", "b", "a", "b"], "correct": [1, 0, 0, 1]})
    f = tmp_path / f"m{suffix}"
    d.to_csv(f, index=False) if suffix == ".csv" else d.to_parquet(f)
    with pytest.raises(ValueError, match="rename 'model' to 'policy'"):
        open_pool(f)
    t = d.rename(columns={"model": "policy"}).assign(text=["hi", "hi", "yo", "yo"])
    f2 = tmp_path / f"t{suffix}"
    t.to_csv(f2, index=False) if suffix == ".csv" else t.to_parquet(f2)
    with pytest.raises(ValueError, match="rename 'text' to 'prompt_text'"):
        open_pool(f2)
    f3 = tmp_path / f"ok{suffix}"
    ok = t.rename(columns={"text": "prompt_text"})
    ok.to_csv(f3, index=False) if suffix == ".csv" else ok.to_parquet(f3)
    p = open_pool(f3)
    assert p.policy_names == ["a", "b"] and list(p.prompts["text"]) == ["hi", "yo"]


# ---------------------------------------------------------------------------- Every Eval Ever, both ways
def test_every_eval_ever_export_round_trip_and_schema(run_cli, tmp_path):
    pool = open_pool(LM_DEFAULT)
    out = tmp_path / "eee.jsonl"
    rc, stdout, err = run_cli("export", LM_DEFAULT, "--format", "every-eval-ever", "--out", out)
    assert rc == 0, err
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == pool.n_prompts * pool.n_policies * pool.k
    required = ("schema_version", "evaluation_id", "model_id", "evaluation_name", "sample_id", "interaction_type",
                "input", "answer_attribution", "evaluation")
    for r in recs[:50]:
        assert all(f in r for f in required) and r["schema_version"].startswith("instance_level_eval")
        assert set(r["input"]) >= {"raw", "reference"} and isinstance(r["output"]["raw"], list)
        assert isinstance(r["evaluation"]["is_correct"], bool)
        assert all(isinstance(v, str) for v in r["metadata"].values())
    # an independent count from the records: per model, the correct records
    for name, v in lm_counts(LM_DEFAULT).items():
        assert sum(r["evaluation"]["is_correct"] for r in recs if r["model_id"] == name) == v.sum()
    back = open_pool(out)
    assert back.meta["read_as"]["format"] == "every-eval-ever"
    assert np.array_equal(back.verdicts, pool.verdicts) and (back.answers == pool.answers).all()
    assert list(back.prompt_ids) == list(pool.prompt_ids) and back.policy_names == pool.policy_names
    assert list(back.prompts["gold"]) == list(pool.prompts["gold"]) and back.alignment == pool.alignment


def test_every_eval_ever_without_draw_labels_reads_file_order_and_refuses_a_repeat(tmp_path):
    pool = open_pool(INSPECT)
    from oraclegap._harness import eee

    recs, _ = eee.records(pool)
    plain = [{k: v for k, v in r.items() if k != "metadata"} for r in recs]
    f = tmp_path / "plain.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in plain))
    p = open_pool(f)
    assert np.array_equal(p.verdicts, pool.verdicts) and "file order" in " ".join(p.meta["assumed"])
    dup = recs[:1] + recs
    g = tmp_path / "dup.jsonl"
    g.write_text("".join(json.dumps(r) + "\n" for r in dup))
    with pytest.raises(ValueError, match="repeats draw 0 .*no draw is counted twice"):
        open_pool(g)


# ---------------------------------------------------------------------------- lighteval
LIGHTEVAL = H / "lighteval"


def lighteval_counts(folder: Path) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """model folder -> verdicts [n_docs, n] graded here (stripped response == stripped gold choice), and the
    harness's own mean pass@1 over documents."""
    import pandas as pd

    out, harness = {}, {}
    for model in sorted(p for p in folder.iterdir() if p.is_dir()):
        (f,) = list(model.glob("details_*.parquet"))
        d = pd.read_parquet(f)
        rows = []
        for doc, resp in zip(d["doc"], d["model_response"], strict=True):
            gold = str(doc["choices"][int(doc["gold_index"])]).strip()
            rows.append([str(t).strip() == gold for t in resp["text"]])
        out[model.name] = np.array(rows)
        harness[model.name] = float(np.mean([m["pass@k:k=1&n=4"] for m in d["metric"]]))
    return out, harness


def test_lighteval_folder_is_read_as_the_independent_count_and_the_harness_mean():
    assert detect_format(LIGHTEVAL)[0] == "lighteval"
    pool = open_pool(LIGHTEVAL)
    counts, harness = lighteval_counts(LIGHTEVAL)
    _check_against(pool, counts)
    for name, mean in harness.items():  # pass@1 with n = 4 is the mean of the four verdicts
        assert pool.verdicts[:, list(pool.policy_names).index(name)].mean() == pytest.approx(mean)
    assert pool.alignment == "independent" and "reduced" in " ".join(pool.meta["dropped"])


def _lighteval_copy(tmp_path: Path, edit) -> Path:
    import pandas as pd

    src = next((LIGHTEVAL / "lab-base").glob("details_*.parquet"))
    out = tmp_path / "lab-base"
    out.mkdir()
    d = pd.read_parquet(src)
    d["metric"] = [edit(i, dict(m)) for i, m in enumerate(d["metric"])]
    d.to_parquet(out / src.name)
    return out / src.name


def test_lighteval_a_reduced_metric_that_the_regrade_does_not_reproduce_is_refused(tmp_path):
    def off(i, m):
        if i == 2:
            m["pass@k:k=1&n=4"] = 1.0 - m["pass@k:k=1&n=4"] + 0.25
        return m

    with pytest.raises(ValueError, match="row 2: re-grading the 4 responses"):
        open_pool(_lighteval_copy(tmp_path, off))


def test_lighteval_a_majority_vote_alone_is_no_per_draw_verdict(tmp_path):
    f = _lighteval_copy(tmp_path, lambda i, m: {"maj@n:n=4": m.pop("pass@k:k=1&n=4")})
    with pytest.raises(ValueError, match="reduced metric is no per-draw verdict"):
        open_pool(f)


# ---------------------------------------------------------------------------- OpenCompass
OPENCOMPASS = H / "opencompass"


def opencompass_counts(folder: Path) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """model -> verdicts [n_examples, n] from the results files' per-copy 'correct' lists, and the harness's own
    'score (n runs average)' as a share."""
    out, harness = {}, {}
    for f in sorted((folder / "results").glob("*/*.json")):
        obj = json.loads(f.read_text())
        out[f.parent.name] = np.array([e["correct"] for e in obj["details"]])
        harness[f.parent.name] = next(v for k, v in obj.items() if k.startswith("score")) / 100
    return out, harness


def test_opencompass_run_is_read_as_the_independent_count_and_the_harness_score():
    assert detect_format(OPENCOMPASS)[0] == "opencompass"
    pool = open_pool(OPENCOMPASS)
    counts, harness = opencompass_counts(OPENCOMPASS)
    _check_against(pool, counts)
    for name, score in harness.items():
        assert pool.verdicts[:, list(pool.policy_names).index(name)].mean() == pytest.approx(score)
    # the prompt text from the predictions file kept beside the results
    pred = json.loads((OPENCOMPASS / "predictions" / "lab-base" / "lab48.json").read_text())
    assert pool.prompts["text"].iloc[0] == pred["0"]["origin_prompt"] and pool.alignment == "unknown"


def test_opencompass_two_runs_and_missing_verdicts_are_refused(tmp_path):
    for run in ("20260101_000000", "20260102_000000"):
        shutil.copytree(OPENCOMPASS, tmp_path / "work" / run)
    with pytest.raises(ValueError, match="2 OpenCompass runs.*counted once"):
        open_pool(tmp_path / "work", format="opencompass")
    assert open_pool(tmp_path / "work" / "20260101_000000").n_policies == 4
    f = tmp_path / "work" / "20260101_000000" / "results" / "lab-base" / "lab48.json"
    obj = json.loads(f.read_text())
    del obj["details"][3]["correct"]
    f.write_text(json.dumps(obj))
    with pytest.raises(ValueError, match="example 3 has no 'correct'"):
        open_pool(tmp_path / "work" / "20260101_000000")


def test_cli_names_the_filter_or_scorer_to_read(run_cli, tmp_path):
    # a second scorer on every sample: refused without --inspect-scorer, read with it
    f = sorted(INSPECT.glob("*.json"))[0]
    log = json.loads(f.read_text())
    for s in log["samples"]:
        s["scores"]["other"] = {"value": "C"}
    (tmp_path / f.name).write_text(json.dumps(log))
    rc, _, err = run_cli("coverage", tmp_path / f.name, "--json")
    assert rc == 2 and "inspect_scorer" in err
    rc, out, err = run_cli("coverage", tmp_path / f.name, "--json", "--inspect-scorer", "other")
    assert rc == 0, err
    rc, _, err = run_cli("coverage", LM_DEFAULT, "--json", "--lmeval-filter", "strict-match")
    assert rc == 2 and "'strict-match' is not a filter" in err
    rc, _, err = run_cli("coverage", INSPECT, "--json", "--lmeval-filter", "x")
    assert rc == 2 and "do not apply" in err


@pytest.mark.parametrize("verb", ["nulls", "certify", "decompose", "integrity"])
def test_every_verb_reads_a_harness_folder(run_cli, verb):
    folder = {"nulls": LM_PER_MODEL, "certify": LIGHTEVAL, "decompose": OPENCOMPASS, "integrity": INSPECT}[verb]
    extra = ("--tau", "0.5") if verb == "certify" else ()  # a k > 1 pool names its reduction
    rc, out, err = run_cli(verb, folder, *extra)
    assert rc == 0, err[-2000:]


def test_the_public_fixture_loader_reads_every_committed_harness_fixture():
    from oraclegap.sources import HARNESS_FIXTURES, harness_fixture

    assert set(HARNESS_FIXTURES) == {"lm-eval-default-seed", "lm-eval-per-model-seed", "lm-eval-per-draw", "inspect",
                                     "lighteval", "opencompass"}
    pool = harness_fixture("lm-eval-default-seed")
    assert pool.alignment == "seed-aligned" and np.array_equal(pool.verdicts, open_pool(LM_DEFAULT).verdicts)
    with pytest.raises(ValueError, match="fixture must be one of"):
        harness_fixture("nope")
