"""The dataset registry: embedded pools, external releases read in place, fetch without a network."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oraclegap import datasets as D
from oraclegap.datasets import download
from oraclegap.stats.certify import selection_valid_gap

EXTERNAL = D.external_dir()


def _need(name: str):
    """Skip, naming the first missing file, when an external entry's data are absent."""
    e = D._entry(name)
    missing = e.missing()
    if missing:
        pytest.skip(f"external data absent: {missing[0]} (set OG_EXTERNAL_DIR; now {EXTERNAL})")
    return D.load(name)


# ---------------------------------------------------------------------- registry API


def test_registry_and_available_columns():
    reg = D.registry()
    assert reg["name"].is_unique and len(reg) >= 30
    assert set(reg["kind"]) == {"simulated", "paper", "lab", "external"}
    av = D.available()
    assert list(av.columns) == ["name", "kind", "shape", "provenance", "license", "present", "path"]
    assert av.loc[av["kind"] != "external", "present"].all()
    assert (av["license"].str.len() > 0).all() and (av["provenance"].str.len() > 0).all()
    assert set(D.available("paper")["kind"]) == {"paper"}
    with pytest.raises(ValueError, match="kind must be"):
        D.available("bogus")
    d = D.describe("mmlu-pro")
    assert d["kind"] == "external" and d["license"] == "Apache-2.0" and d["files"]


def test_unknown_name_lists_known_names():
    with pytest.raises(KeyError, match="known names:.*mmlu-pro"):
        D.load("no-such-pool")
    with pytest.raises(KeyError):
        D.describe("no-such-pool")
    with pytest.raises(TypeError):
        D.load("")


def test_missing_external_names_path_and_env(tmp_path, monkeypatch):
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path))
    assert D.external_dir() == tmp_path
    assert not D.available("external")["present"].any()
    with pytest.raises(FileNotFoundError, match=r"OG_EXTERNAL_DIR.*") as exc:
        D.load("chen2026-math500")
    assert str(tmp_path / "chen2026_routing_oracle_k30" / "math500" / "correctness_slim.npz") in str(exc.value)


def test_seed_suffix_only_for_generated_pools():
    a = D.load("sim-exchangeable@3")
    b = D.load("sim-exchangeable", seed=3)
    c = D.load("sim-exchangeable@4")
    assert (a.verdicts == b.verdicts).all() and not (a.verdicts == c.verdicts).all()
    assert a.meta["seed"] == 3 and a.meta["kind"] == "simulated"
    with pytest.raises(ValueError, match="integer"):
        D.load("sim-diffuse@x")


# ---------------------------------------------------------------------- paper pools


@pytest.mark.parametrize("name,ds", [("paper002-pilot-arc", "arc_challenge"), ("paper002-pilot-hellaswag", "hellaswag"), ("paper002-pilot-gsm8k", "gsm8k")])
def test_paper_pilot_pools_have_the_published_margins(name, ds):
    counts = D.paper_table("002_appP_pilot_counts")
    d = counts[counts["dataset"] == ds]
    for seed in (0, 1, 2):
        pool = D.load(f"{name}@{seed}")
        R = pool.verdicts[:, :, 0]
        np.testing.assert_array_equal(R.sum(axis=0), d.loc[d["policy"] != "oracle", "correct"].to_numpy())
        assert R.any(axis=1).sum() == d.loc[d["policy"] == "oracle", "correct"].iloc[0]
        assert pool.meta["synthetic_arrangement"] is True
    t11 = D.paper_table("002_table11_pilot_gap").set_index("dataset").loc[ds]
    r = selection_valid_gap(R.sum(axis=0), int(R.any(axis=1).sum()), R.shape[0])
    assert (round(r.lo, 3), round(r.hi, 3)) == (t11["sv_lo"], t11["sv_hi"])


def test_outcomes_from_margins_property():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = int(rng.integers(5, 80))
        K = int(rng.integers(1, 6))
        c = rng.integers(0, n + 1, size=K)
        lo, hi = int(c.max()), int(min(n, c.sum()))
        o = int(rng.integers(lo, hi + 1))
        X = D.outcomes_from_margins(c, o, n, seed=int(rng.integers(1000)))
        assert X.shape == (n, K)
        np.testing.assert_array_equal(X.sum(axis=0), c)
        assert X.any(axis=1).sum() == o
    with pytest.raises(ValueError, match="exceeds the sum"):
        D.outcomes_from_margins([3, 4], 9, 10)


def test_confirmatory_arc_pool():
    pool = D.load("paper002-confirmatory-arc")
    t6 = D.paper_table("002_table6_confirmatory_models")
    np.testing.assert_allclose(np.round(pool.verdicts[:, :, 0].mean(axis=0), 3), t6["arc_accuracy"], atol=1e-9)
    assert pool.verdicts[:, :, 0].any(axis=1).mean() == pytest.approx(0.970)


def test_paper_table_unknown():
    with pytest.raises(KeyError, match="002_table11_pilot_gap"):
        D.paper_table("002_table99")


def test_paper_sources_manifest_covers_every_file():
    man = json.loads((D.paper_dir() / "002_sources.json").read_text())
    csvs = {p.name for p in D.paper_dir().glob("002_*.csv")}
    assert csvs == set(man["files"])


def test_table7_post_inference_agrees_with_tables_1_and_15():
    """Table 7's transcription against the paper's other tables: its outcome oracle is Table 1's
    oracle, its raw maximum confidence and plurality vote are Table 15's accuracies, and no
    selector exceeds the outcome oracle."""
    t7 = D.paper_table("002_table7_post_inference").pivot(index="dataset", columns="method", values="accuracy")
    t1 = D.paper_table("002_table1_confirmatory").set_index("dataset")
    t15 = D.paper_table("002_table15_paired").pivot(index="dataset", columns="method", values="accuracy")
    assert set(t7.index) == set(t1.index) == set(t15.index) and t7.shape == (4, 6)
    np.testing.assert_allclose(t7["Outcome oracle"], t1.loc[t7.index, "oracle"], atol=1e-9)
    np.testing.assert_allclose(t7["Raw maximum confidence"], t15.loc[t7.index, "Max confidence"], atol=1e-9)
    np.testing.assert_allclose(t7["Plurality vote"], t15.loc[t7.index, "Plurality vote"], atol=1e-9)
    assert (t7.drop(columns="Outcome oracle").le(t7["Outcome oracle"], axis=0)).all().all()


# ---------------------------------------------------------------------- external releases (figures from SOURCE.md)

CHEN = {  # shape, best single, O_repro (mean max_m p^_im), seed-aligned O_exp
    "math500": ((500, 11, 30), 0.773, 0.837, 0.873),
    "humanevalplus": ((164, 11, 30), 0.889, 0.957, 0.967),
    "gpqa": ((198, 11, 30), 0.506, 0.878, 0.934),
}


@pytest.mark.parametrize("bench", list(CHEN))
def test_chen2026_tensors(bench):
    pool = _need(f"chen2026-{bench}")
    shape, best, repro, oexp = CHEN[bench]
    assert pool.shape == shape and pool.alignment == "seed-aligned"
    v = pool.verdicts
    assert round(v.mean(axis=(0, 2)).max(), 3) == best
    assert round(pool.rates().max(axis=1).mean(), 3) == repro
    assert round(v.any(axis=1).mean(), 3) == oexp
    assert len(pool.policy_names) == 11 and "microsoft/phi-4" in pool.policy_names
    for variant in ("single", "greedy"):
        p1 = D.load(f"chen2026-{bench}-{variant}")
        assert p1.shape == (shape[0], 11, 1) and p1.policy_names == pool.policy_names
    if bench == "math500":
        assert round(D.load("chen2026-math500-single").verdicts[:, :, 0].any(axis=1).mean(), 3) == 0.870


ROUTERDC_COUNTS = {  # best single, O_repro, 1 - prod(1 - p)
    "routerdc-gsm8k-test": ((1319, 7, 10), 0.698, 0.833, 0.875),
    "routerdc-mbpp": ((500, 7, 10), 0.473, 0.624, 0.643),
}


@pytest.mark.parametrize("name", list(ROUTERDC_COUNTS))
def test_routerdc_counts(name):
    pool = _need(name)
    shape, best, repro, indep = ROUTERDC_COUNTS[name]
    assert pool.shape == shape and pool.alignment == "independent"
    r = pool.rates()
    assert round(r.mean(axis=0).max(), 3) == best
    assert round(r.max(axis=1).mean(), 3) == repro
    assert round((1 - np.prod(1 - r, axis=1)).mean(), 3) == indep


@pytest.mark.parametrize(
    "name,splits",
    [
        ("routerdc-gsm8k-train", {"train": 1000}),
        ("routerdc-humaneval", {"train": 115, "test": 49}),
        ("routerdc-javascript", {"test": 164}),
        ("routerdc-mmlu", {"test": 4213, "train": 2000}),
        ("routerdc-arc-challenge", {"test": 352, "train": 820}),
        ("routerdc-arc-easy", {"test": 713, "train": 1663}),
        ("routerdc-cmmlu", {"test": 3475, "train": 2000}),
        ("routerdc-ceval", {"test": 1346}),
        ("routerdc-math-prealgebra", {"test": 871}),
    ],
)
def test_routerdc_sizes(name, splits):
    pool = _need(name)
    assert pool.n_policies == 7
    assert pool.prompts["split"].value_counts().to_dict() == splits
    assert pool.shape == tuple(int(x) for x in D.describe(name)["shape"].strip("()").split(","))
    acc = pool.verdicts.mean(axis=(0, 2))
    assert ((acc > 0) & (acc < 1)).all()


ROUTERBENCH = {  # n, best single, uniform-random mean, per-item oracle (SOURCE.md)
    "routerbench-arc-challenge": (1456, 0.954, 0.788, 0.987),
    "routerbench-mbpp": (427, 0.686, 0.516, 0.867),
    "routerbench-winogrande": (1267, 0.859, 0.606, 0.999),
}


@pytest.mark.parametrize("name", list(ROUTERBENCH))
def test_routerbench_subset(name):
    pool = _need(name)
    n, best, mean, orac = ROUTERBENCH[name]
    R = pool.verdicts[:, :, 0]
    assert pool.shape == (n, 11, 1) and pool.cost.shape == (n, 11)
    acc = R.mean(axis=0)
    assert (round(acc.max(), 3), round(acc.mean(), 3), round(R.any(axis=1).mean(), 3)) == (best, mean, orac)
    assert pool.policy_names[int(acc.argmax())] == "gpt-4-1106-preview"
    assert (pool.cost > 0).all()


def test_mmlu_pro():
    pool = _need("mmlu-pro")
    R = pool.verdicts[:, :, 0]
    assert pool.shape == (10326, 29, 1)
    acc = R.mean(axis=0)
    assert (round(acc.max(), 3), round(acc.mean(), 3), round(R.any(axis=1).mean(), 3)) == (0.718, 0.423, 0.949)
    assert pool.policy_names[int(acc.argmax())] == "gemini-1.5-pro-002"
    assert pool.prompts["category"].nunique() == 14
    assert pool.meta["items_in_file"] == 12032


def test_llmrouter_sets():
    rp = _need("llmrouter-routeprofile")
    raw = json.loads((EXTERNAL / D.ULAB / "RouteProfile" / "routing_test_data.json").read_text())
    assert len(raw) == 600 and len({x["task_name"] for x in raw}) == 12
    assert rp.shape == (550, 8, 1) and rp.cost.shape == (550, 8)
    assert rp.meta["items_with_continuous_scores_dropped"] == 50
    assert rp.prompts["dataset"].value_counts().eq(50).all() and "commongen" not in set(rp.prompts["dataset"])
    dc = _need("llmrouter-dcrouter")
    assert dc.n_policies == 9 and dc.meta["items_in_files"] == 5608 + 500
    assert dc.n_prompts + dc.meta["items_with_fractional_scores_dropped"] == 6108
    # the data page's description states the importer's own counts: files, dropped, per split
    desc = D.describe("llmrouter-dcrouter")["description"]
    m = re.search(r"train \((\d+) items\) \+ test \((\d+)\).*the (\d+) items with a fractional "
                  r"score dropped \((\d+) train, (\d+) test\)", desc)
    assert m, desc
    kept = dc.prompts["split"].value_counts()
    assert int(m[1]) + int(m[2]) == dc.meta["items_in_files"]
    assert int(m[3]) == dc.meta["items_with_fractional_scores_dropped"]
    assert (int(m[1]) - int(m[4]), int(m[2]) - int(m[5])) == (kept["train"], kept["test"])


def test_routerbench_mini():
    pool = _need("routerbench-mini")
    assert pool.shape == (800, 2, 1) and pool.cost.shape == (800, 2)
    main = pd.read_csv(EXTERNAL / D.RBMINI / "main_results.csv")
    main = main[main["slice_type"] == "all"].set_index("strategy")["accuracy"]
    acc = pool.verdicts[:, :, 0].mean(axis=0)
    assert acc[0] == pytest.approx(main["always_cheap"]) and acc[1] == pytest.approx(main["always_strong"])


def test_every_present_external_entry_loads():
    present = D.available("external")
    present = present[present["present"]]
    if present.empty:
        pytest.skip(f"no external data under {EXTERNAL} (set OG_EXTERNAL_DIR)")
    for name in present["name"]:
        pool = D.load(name)
        shape = tuple(int(x) for x in D.describe(name)["shape"].strip("()").split(","))
        assert pool.shape == shape, name
        assert pool.meta["dataset"] == name and pool.meta["license"]


def test_npz_object_arrays_are_never_unpickled():
    path = EXTERNAL / D.CHEN / "math500" / "correctness_slim.npz"
    if not path.exists():
        pytest.skip(f"external data absent: {path}")
    with np.load(path, allow_pickle=False) as z:
        with pytest.raises(ValueError, match="allow_pickle"):
            z["gold"]  # the object array stays unread; the loader never touches it


# ---------------------------------------------------------------------- fetch


def test_fetch_records_failures_and_successes(tmp_path, monkeypatch):
    src = tmp_path / "src.csv"
    src.write_text("a,b\n1,2\n")
    monkeypatch.setattr(
        download, "_fetch_list", lambda: [("x/ok.csv", src.as_uri()), ("x/missing.csv", (tmp_path / "nope.csv").as_uri())]
    )
    res = D.fetch(tmp_path / "dest", timeout=1, mmlu_pro=False)
    st = dict(zip(res["path"], res["status"], strict=True))
    assert st == {"x/ok.csv": "ok", "x/missing.csv": "failed"}
    assert (tmp_path / "dest" / "x" / "ok.csv").read_text() == "a,b\n1,2\n"
    again = D.fetch(tmp_path / "dest", timeout=1, mmlu_pro=False)
    assert dict(zip(again["path"], again["status"], strict=True))["x/ok.csv"] == "present"


def test_fetch_cli_exits_zero_and_summarises(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(download, "_fetch_list", lambda: [("y/gone.csv", (tmp_path / "gone").as_uri())])
    monkeypatch.setattr(download, "_MMLUPRO_RAW", (tmp_path / "nozips").as_uri())
    assert D.main(["fetch", "--dest", str(tmp_path / "d"), "--timeout", "1"]) == 0
    out = capsys.readouterr().out
    assert "could not be fetched" in out and "y/gone.csv" in out


def test_derive_mmlu_pro_from_zips(tmp_path):
    recs = {
        "A": [
            {"question_id": 1, "question": "q1", "options": ["x", "y"], "answer": "A", "answer_index": 0, "category": "math", "src": "s", "pred": "A"},
            {"question_id": 2, "question": "q2", "options": ["x", "y"], "answer": "B", "answer_index": 1, "category": "law", "src": "s", "pred": None},
            "junk",
        ],
        "B": [{"question_id": 1, "question": "q1", "options": ["x", "y"], "answer": "A", "answer_index": 0, "category": "math", "src": "s", "pred": "B"}],
    }
    zips = {}
    for m, data in recs.items():
        zp = tmp_path / f"{m}.zip"
        with zipfile.ZipFile(zp, "w") as zf:
            zf.writestr(f"{m}.json", json.dumps(data))
        zips[m] = zp
    out = D.derive_mmlu_pro(zips, tmp_path / "out")
    cm = pd.read_csv(out / "correctness_matrix.csv")
    assert list(cm.columns) == ["question_id", "A_5shots", "B_5shots"]
    assert cm["A_5shots"].tolist() == [1, 0] and cm["B_5shots"].iloc[0] == 0 and pd.isna(cm["B_5shots"].iloc[1])
    q = pd.read_json(out / "questions.jsonl", lines=True)
    assert q["category"].tolist() == ["math", "law"]
    assert Path(out / "predicted_letters.csv").exists()


def test_underscore_alias():
    assert D.describe("paper002_pilot_arc")["name"] == "paper002-pilot-arc"
    a, b = D.load("sim_diffuse@2"), D.load("sim-diffuse@2")
    assert (a.verdicts == b.verdicts).all()


@pytest.mark.parametrize("name", ["routerbench-all", "routerdc-k1-all"])
def test_stacked_multitask_pools(name):
    pool = _need(name)
    parts = pool.meta["parts"]
    assert pool.n_prompts == sum(D.load(p).n_prompts for p in parts)
    assert pool.prompts["task"].value_counts().to_dict() == {p: D.load(p).n_prompts for p in parts}
    first = D.load(parts[0])
    got = pool.verdicts[: first.n_prompts][:, [pool.policy_names.index(m) for m in first.policy_names]]
    assert (got == first.verdicts).all()


def test_chen2026_single_is_draw_zero():
    """SOURCE.md calls b_single a separate draw; in the released files it is draw 0 of the tensor."""
    pool = _need("chen2026-math500")
    single = D.load("chen2026-math500-single")
    assert (single.verdicts[:, :, 0] == pool.verdicts[:, :, 0]).all()


def test_load_optional_reports_why(monkeypatch, tmp_path):
    pool, why = D.load_optional("sim-exchangeable")
    assert pool is not None and why is None
    pool, why = D.load_optional("no-such-dataset")
    assert pool is None and "no-such-dataset" in why
    monkeypatch.setenv("OG_EXTERNAL_DIR", str(tmp_path))
    pool, why = D.load_optional("chen2026-math500")
    assert pool is None and "missing" in why


def test_lab_entries_are_registered_sub_pools():
    """The lab's pools by name: the seed pool is the five light primary seeds on primary test
    prompts, taken from the cross pool with every per-cell value intact."""
    lab = D.available("lab")
    assert set(lab["name"]) >= {"lab-cross", "lab-seed-primary", "lab-seed-primary-val", "lab-seed-secondary",
                                "lab-primary-k64", "lab-secondary-k64", "lab-primary-extra", "lab-small",
                                "lab-seed-primary-aligned"}
    if not lab["present"].all():
        pytest.skip("data/lab/ is not built (make lab)")
    cross = D.load("lab-cross")
    seed = D.load("lab-seed-primary")
    assert seed.k == cross.k and seed.alignment == cross.alignment == "independent"
    pol = seed.policies
    assert (pol["recipe"] == "light").all() and (pol["dataset"] == "primary").all() and len(pol) == 5
    assert set(seed.prompts["split"]) == {"test"} and set(seed.prompts["dataset"]) == {"primary"}
    ci = [cross.prompt_ids.index(i) for i in seed.prompt_ids]
    mi = [cross.policy_names.index(m) for m in seed.policy_names]
    assert np.array_equal(seed.verdicts, cross.verdicts[np.ix_(ci, mi)])
    assert np.array_equal(seed.embeddings, cross.embeddings[ci])
    val = D.load("lab-seed-primary-val")
    assert set(val.prompts["split"]) == {"validation"} and not set(val.prompt_ids) & set(seed.prompt_ids)
    with pytest.raises(ValueError, match="seed"):
        D.load("lab-seed-primary@3")
    # the same seed pool sampled seed-aligned: same prompts (in order), same members, other draws
    al = D.load("lab-seed-primary-aligned")
    assert al.alignment == "seed-aligned" and al.shape == seed.shape
    assert al.prompt_ids == seed.prompt_ids and al.policy_names == seed.policy_names
    assert al.meta["draw_seeds"] == "aligned" and seed.meta["draw_seeds"] == "per-policy"
    assert not np.array_equal(al.verdicts, seed.verdicts)
