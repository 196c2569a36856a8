"""The policy lab (oraclegap.lab): tasks, tokenizer and models, GRPO pieces, soups, config hashes,
the reduced rebuild (bytes on one machine, tolerances against the committed reference on any), and the committed pools' sanity on validation."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("transformers")

from oraclegap.lab import checks, grpo, model, recipes, soup, tasks  # noqa: E402
from oraclegap.lab import pipeline as lab_build  # noqa: E402

LAB = lab_build.DEFAULT_OUT
REFERENCE = LAB / "reference"
have_lab = pytest.mark.skipif(not (LAB / "pools" / "cross").is_dir(), reason=f"no built lab pools under {LAB} (run make lab)")


# ----------------------------------------------------------------------------- tasks
@pytest.fixture(scope="module")
def table():
    return tasks.build_tasks(0)


def test_split_sizes_ids_and_hash_order(table):
    sizes = table.groupby(["dataset", "split"]).size().to_dict()
    assert sizes == {
        ("primary", "validation"): 240, ("primary", "test"): 240, ("primary", "extra_test"): 361, ("primary", "train"): 1200,
        ("secondary", "validation"): 240, ("secondary", "test"): 240, ("secondary", "train"): 1200,
    }
    expect = ["t" + hashlib.sha256(f"{t}|{x}".encode()).hexdigest()[:12] for t, x in zip(table.dataset, table.text, strict=True)]
    assert table["id"].tolist() == expect
    assert table["id"].is_unique and table["text"].is_unique
    for task, d in table.groupby("dataset"):  # splits follow the hashed-id order
        order = [s for s in ("validation", "test", "extra_test", "train") if (d.split == s).any()]
        bounds = [(d.loc[d.split == s, "id"].min(), d.loc[d.split == s, "id"].max()) for s in order]
        assert all(bounds[i][1] < bounds[i + 1][0] for i in range(len(bounds) - 1)), task
    assert tasks.build_tasks(0).equals(table)
    assert not tasks.build_tasks(1)["text"].equals(table["text"])


def _solve(text: str) -> int:
    """An independent solver for the prompt grammar (not the generators' code)."""
    nums = [int(x) for x in re.findall(r"\d+", text)]
    word = text.split()[0]
    if word == "over":
        t, vals = nums[0], nums[1:]
        return sum(v > t for v in vals)
    return {
        "tri": lambda v: 180 - sum(v), "ext": sum, "quad": lambda v: 360 - sum(v), "area": lambda v: v[0] * v[1],
        "per": lambda v: 2 * sum(v), "max": max, "min": min, "sum": sum, "range": lambda v: max(v) - min(v),
        "pie": lambda v: 100 - sum(v),
    }[word](nums)


def test_answers_match_an_independent_solver(table):
    solved = table["text"].map(_solve)
    assert (solved == table["answer"]).all()
    assert (table["answer"] >= 0).all() and table["text"].str.endswith("=").all()
    assert set("".join(table["text"])) <= set(model.ALPHABET)
    # several templates per family, each with a spread of operand sizes
    assert table.groupby("dataset")["template"].nunique().to_dict() == {"primary": 5, "secondary": 6}


def test_pretraining_stream_never_yields_held_out_prompts(table):
    held = set(table.loc[table.split != "train", "text"])
    s = tasks.stream(["primary", "secondary"], [1, 1], seed=3, exclude=held)
    assert not any(next(s)[1] in held for _ in range(4000))
    s0 = tasks.stream(["primary", "secondary"], [1, 1], seed=3, exclude=())
    assert any(next(s0)[1] in held for _ in range(4000))  # the exclusion is what keeps them out
    with pytest.raises(ValueError, match="weights"):
        next(tasks.stream(["primary"], [1, 1], seed=0, exclude=()))


def test_reward_is_the_rollouts_integer_verdict():
    from oraclegap.rollouts import get_task

    cases = [("45", 45, 1.0), ("045", 45, 1.0), ("4 5", 45, 0.0), ("", 3, 0.0), ("12 7", 7, 1.0), ("x", 0, 0.0)]
    for text, ans, r in cases:
        assert tasks.reward(text, ans) == r
        assert get_task("integer").verdict(text, str(ans)).correct == bool(r)


# ----------------------------------------------------------------------------- tokenizer, models
def test_tokenizer_round_trip_and_offline_reload(tmp_path, table):
    tok = model.build_tokenizer()
    texts = table["text"].head(50).tolist()
    enc = tok(texts)["input_ids"]
    assert all(ids[0] == tok.bos_token_id and len(ids) == len(t) + 1 for ids, t in zip(enc, texts, strict=True))
    assert tok.batch_decode(enc, skip_special_tokens=True) == texts
    m = model.new_model(model.Arch(16, 1, 2, 32), seed=0)
    model.save_model(m, tok, tmp_path / "m")
    tok2 = model.load_tokenizer(tmp_path / "m")
    assert tok2(texts)["input_ids"] == enc and tok2.padding_side == "left"
    m2 = model.load_model(tmp_path / "m")
    ids = torch.tensor([enc[0]])
    assert torch.equal(m(input_ids=ids).logits, m2(input_ids=ids).logits)


def test_sampler_is_reproducible_and_respects_eos(table):
    m = model.new_model(model.Arch(16, 1, 2, 32), seed=1).eval()
    tok = model.build_tokenizer()
    texts = table["text"].head(5).tolist()
    a = __import__("oraclegap.lab.sampler", fromlist=["sample"]).sample(m, tok, texts, 4, torch.Generator().manual_seed(5))
    b = __import__("oraclegap.lab.sampler", fromlist=["sample"]).sample(m, tok, texts, 4, torch.Generator().manual_seed(5))
    assert a.texts == b.texts and torch.equal(a.ids, b.ids)
    resp = a.ids[:, a.prompt_len :]
    eos = resp == tok.eos_token_id
    after = (eos.cumsum(1) - eos.long()) > 0
    assert not (a.response_mask & after).any()  # nothing after the first </s> counts
    assert list(a.group) == [i for i in range(5) for _ in range(4)]


# ----------------------------------------------------------------------------- GRPO pieces and hashes
def test_group_relative_advantages():
    r = np.array([1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1], dtype=float)
    a = grpo.advantages(r, 4)
    g = a.reshape(3, 4)
    assert np.allclose(g.mean(1), 0)
    assert np.allclose(g[1], 0)  # an all-right group carries no signal
    assert np.allclose(g[0], (np.array([1, 0, 0, 0]) - 0.25) / (np.std([1, 0, 0, 0]) + 1e-4))
    with pytest.raises(ValueError, match="divisible"):
        grpo.advantages(r[:5], 4)


def test_only_seed_fields_differ_within_a_pool():
    rec = recipes.LIGHT
    cfgs = {f"m{s}": grpo.RunConfig("main", "b", "primary", "p", rec, s) for s in (1, 2, 3)}
    logs = {k: {"config_hash": c.full_hash(), "config_hash_without_seed": c.hash_without_seed()} for k, c in cfgs.items()}
    h = recipes.check_pool_hashes(logs)
    assert h == cfgs["m1"].hash_without_seed()
    other = grpo.RunConfig("main", "b", "primary", "p", rec.__class__(**{**rec.to_dict(), "lr": 1e-3}), 4)
    logs["m4"] = {"config_hash": other.full_hash(), "config_hash_without_seed": other.hash_without_seed()}
    with pytest.raises(ValueError, match="m4"):
        recipes.check_pool_hashes(logs)
    # the recipes differ exactly in steps (x3), training prompts and LoRA rank/scaling
    diff = {k for k, v in recipes.LIGHT.to_dict().items() if recipes.STRONGER.to_dict()[k] != v}
    assert diff == {"name", "steps", "n_prompts", "rank", "alpha"}
    assert recipes.STRONGER.steps == 3 * recipes.LIGHT.steps
    assert recipes.LIGHT.alpha / recipes.LIGHT.rank == recipes.STRONGER.alpha / recipes.STRONGER.rank


# ----------------------------------------------------------------------------- soups
def _random_adapters(tmp_path, n=3, r=4):
    from peft import LoraConfig, get_peft_model

    tok = model.build_tokenizer()
    base = model.new_model(model.Arch(16, 2, 2, 32), seed=0)
    model.save_model(base, tok, tmp_path / "base")
    dirs = []
    for i in range(n):
        torch.manual_seed(10 + i)
        cfg = LoraConfig(r=r, lora_alpha=2 * r, target_modules=list(grpo.TARGET_MODULES), init_lora_weights=False)
        pm = get_peft_model(model.load_model(tmp_path / "base"), cfg)
        grpo.save_adapter(pm, tmp_path / f"a{i}", {"member": f"a{i}", "base": "x", "base_name": "x"})
        dirs.append(tmp_path / f"a{i}")
    return tmp_path / "base", dirs


def test_soup_is_the_mean_update_with_stacked_factors(tmp_path):
    from peft import PeftModel

    base_dir, dirs = _random_adapters(tmp_path)
    soup.make_soup(base_dir, dirs, tmp_path / "soup")
    cfg = json.loads((tmp_path / "soup" / "adapter_config.json").read_text())
    assert cfg["r"] == 3 * 4
    assert soup.check_soup(tmp_path / "soup", dirs) < 1e-6
    # the soup model computes what the base with the mean update merged computes
    ids = torch.tensor([[1, 10, 11, 12, 15]])
    sm = PeftModel.from_pretrained(model.load_model(base_dir), tmp_path / "soup").eval()
    merged = model.load_model(base_dir)
    mean = soup.explicit_mean_update(dirs)
    with torch.no_grad():
        for name, mod in merged.named_modules():
            key = f"base_model.model.{name}"
            if key in mean:
                mod.weight += torch.as_tensor(mean[key], dtype=mod.weight.dtype)
        assert torch.allclose(sm(input_ids=ids).logits, merged(input_ids=ids).logits, atol=1e-5)
    # negative control: a soup of other adapters is not this mean
    soup.make_soup(base_dir, dirs[:2], tmp_path / "soup2")
    assert soup.check_soup(tmp_path / "soup2", dirs) > 1e-3


# ----------------------------------------------------------------------------- reduced rebuild vs committed reference
_BUILD = ("import sys; from oraclegap.lab import pipeline, recipes; "
          "pipeline.build(recipes.reduced_config(), sys.argv[1], workers=1, progress=False, echo=None)")


def _spawn_build(out, **env):
    """A reduced build in a fresh process, with extra environment variables (thread count, torch dispatch)."""
    import os
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-c", _BUILD, str(out)], env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow
@pytest.mark.skipif(not (REFERENCE / "pools" / "seed").is_dir(), reason=f"no committed reference under {REFERENCE}")
def test_reduced_rebuild_bytes_on_one_machine_tolerance_across_machines(tmp_path):
    """Same machine: byte-identical, whatever the thread count. Any machine (and another torch CPU
    dispatch, standing in for another CPU): the committed reference within reproduce.TOLERANCES."""
    from oraclegap.lab import reproduce

    procs = {"threads2": _spawn_build(tmp_path / "threads2", OMP_NUM_THREADS="2", MKL_NUM_THREADS="2"),
             "scalar": _spawn_build(tmp_path / "scalar", ATEN_CPU_CAPABILITY="default", OMP_NUM_THREADS="1")}
    out = tmp_path / "main"
    man = lab_build.build(recipes.reduced_config(), out, workers=1, progress=False, echo=None)
    for name, proc in procs.items():
        log, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{name} build failed:\n{log[-2000:]}"
    ref = json.loads((REFERENCE / "manifest.json").read_text())
    assert man["config_hash"] == ref["config_hash"]
    weights = [k for k in ref["files"] if k.endswith(".safetensors")]
    assert len(weights) >= 4
    assert reproduce.file_hashes(tmp_path / "threads2") == reproduce.file_hashes(out)  # hidden randomness shows here
    for d in (out, tmp_path / "scalar"):
        rep = reproduce.compare_builds(d, REFERENCE)
        assert rep["ok"], (d.name, rep["failures"], rep["measured"])
    new, old = lab_build.load_pool(out / "pools" / "seed"), lab_build.load_pool(REFERENCE / "pools" / "seed")
    a = lab_build.response_arrays(out / "pools" / "seed")
    from oraclegap.rollouts import get_task

    task = get_task("integer")  # the stored verdicts are the verifier's verdicts on the stored texts
    gold = np.broadcast_to(new.prompts["answer"].to_numpy()[:, None, None], new.shape)
    redo = np.vectorize(lambda t, g: task.verdict(str(t), str(g)).correct)(a["text"], gold)
    assert np.array_equal(redo, new.verdicts)
    # the policy tables agree except for training rewards (compared within tolerance above) and the
    # run-config hashes, which include the digest of the base model's bytes (machine-dependent)
    def machine_free(p):
        return p.policies.drop(columns=[c for c in p.policies if "reward" in c or "hash" in c])

    assert machine_free(new).equals(machine_free(old))
    # resumable: a lost adapter is retrained alone (same bytes as this machine's first build), the rest is kept
    import shutil

    shutil.rmtree(out / "adapters" / "primary-light-s2")
    man2 = lab_build.build(recipes.reduced_config(), out, workers=1, progress=False, echo=None)
    assert man2["stages"]["bases"]["built"] == [] and man2["stages"]["grpo"]["built"] == ["primary-light-s2"]
    assert {k: man2["files"][k] for k in weights} == {k: man["files"][k] for k in weights}
    assert np.array_equal(lab_build.load_pool(out / "pools" / "seed").verdicts, new.verdicts)


@pytest.mark.skipif(not (REFERENCE / "pools" / "seed").is_dir(), reason=f"no committed reference under {REFERENCE}")
def test_compare_builds_fails_on_a_perturbed_build(tmp_path):
    """The tolerance check can fail: weights moved by 1e-3 of their norm, or one policy's verdicts
    flipped, are reported as such."""
    import shutil

    from safetensors.numpy import load_file, save_file

    from oraclegap.lab import reproduce

    copy = tmp_path / "copy"
    shutil.copytree(REFERENCE, copy)
    assert reproduce.compare_builds(copy, REFERENCE)["measured"]["byte_identical"]
    f = copy / "adapters" / "primary-light-s1" / "adapter_model.safetensors"
    w = load_file(f)
    save_file({k: (v * (1 + 1e-3)).astype(v.dtype) for k, v in w.items()}, f)
    rep = reproduce.compare_builds(copy, REFERENCE)
    assert rep["failures"] == ["weights_rel"] and 5e-4 < rep["measured"]["weights_rel"] < 2e-3
    with pytest.raises(ValueError, match="different lab configurations"):
        man = json.loads((copy / "manifest.json").read_text())
        (copy / "manifest.json").write_text(json.dumps(dict(man, config_hash="x")))
        reproduce.compare_builds(copy, REFERENCE)


def test_mean_success_z_is_standard_normal_between_independent_draws():
    from oraclegap.lab.reproduce import mean_success_z

    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, size=(1, 400, 1))  # 400 policies, each its own success rate
    z = mean_success_z(rng.random((30, 400, 8)) < p, rng.random((30, 400, 8)) < p)
    assert abs(z.mean()) < 0.2 and 0.85 < z.std() < 1.15  # sd of the sd estimate ~0.035
    ref = np.zeros((10, 2, 5), dtype=bool)
    new = ref.copy()
    new[0, 1, 0] = True
    z = mean_success_z(new, ref)
    assert z[0] == 0 and 0 < z[1] < 1  # one flip of 50 where the reference never succeeds
    with pytest.raises(ValueError, match="one shape"):
        mean_success_z(new[:, :1], ref)


@have_lab
def test_committed_pools_redraw_within_sampling_error():
    """Any machine: re-drawing committed prompts with the committed models and the pools' own seeds
    gives the committed verdicts within reproduce.TOLERANCES (on the building machine: all of them),
    for a per-policy pool and the seed-aligned pool."""
    from oraclegap.lab import reproduce

    tol = reproduce.TOLERANCES
    for pool, pols in (("primary-extra", ("base", "primary-light-s1")), ("primary-aligned", ("primary-light-s3",))):
        r = reproduce.resample(pool, policies=pols, n_prompts=24)
        assert r["new"].shape == (24, len(pols), 16) and 0.05 < r["ref"].mean() < 0.95
        assert r["agreement"] >= tol["verdict_agreement"], (pool, r["agreement"])
        assert max(abs(v) for v in r["z"].values()) <= tol["z_max"], (pool, r["z"])


# ----------------------------------------------------------------------------- the committed lab
@have_lab
def test_validation_sanity_of_the_committed_pools():
    s = checks.sanity(LAB)
    assert 0.2 <= s["base_primary"] <= 0.6, s["base_primary"]
    assert set(s["light_spread"]) == {"primary-light", "secondary-light", "small-primary-light"}
    assert all(v <= 0.05 for v in s["light_spread"].values()), s["light_spread"]
    assert set(s["stronger_lift"]) == {"primary", "secondary"}
    assert all(v >= 0.05 for v in s["stronger_lift"].values()), s["stronger_lift"]


@have_lab
def test_committed_pools_shapes_metadata_and_hashes():
    cfg = recipes.full_config()
    cross = lab_build.load_pool("cross")
    assert cross.k == 16 and cross.alignment == "independent"  # per-policy draw seeds
    assert cross.n_prompts == 960 and sorted(cross.splits) == ["test", "validation"]
    pol = cross.policies.set_index("name")
    assert pol.loc["base", "role"] == "base"
    for spec in cfg.train:
        if spec.base != "main":
            continue
        assert list(pol.loc[spec.members, "seed"]) == list(spec.seeds)
        assert set(pol.loc[spec.members, "recipe"]) == {spec.recipe.name}
        assert set(pol.loc[spec.members, "dataset"]) == {spec.task}
        assert pol.loc[spec.members, "config_hash_without_seed"].nunique() == 1
        logs = [json.loads((LAB / "adapters" / m / "training_log.json").read_text())["config"] for m in spec.members]
        varying = {k for k in logs[0] if len({json.dumps(c[k], sort_keys=True) for c in logs}) > 1}
        assert varying == {"seed"}
    assert pol.loc["primary-light-soup", "soup"] and pol.loc["primary-light-soup", "lora_rank"] == 5 * recipes.LIGHT.rank
    assert cross.embeddings.shape[0] == cross.n_prompts
    conf = cross.per_response["confidence"]
    assert conf.shape == cross.shape and np.nanmax(conf) <= 0
    shapes = {"primary-extra": (361, 16), "primary-k64": (240, 64), "secondary-k64": (240, 64), "small": (480, 16),
              "primary-aligned": (240, 16)}
    for name, (n, k) in shapes.items():
        p = lab_build.load_pool(name)
        assert (p.n_prompts, p.k) == (n, k) and p.n_policies == 6
        mode = {s.name: s.draw_seeds for s in cfg.samples}[name]
        assert p.meta["draw_seeds"] == mode and p.alignment == ("seed-aligned" if mode == "aligned" else "independent")
    assert [s.name for s in cfg.samples if s.draw_seeds == "aligned"] == ["primary-aligned"]  # one aligned teaching pool
    assert cross.meta["draw_seeds"] == "per-policy"
    man = json.loads((LAB / "manifest.json").read_text())
    assert all(v["max_abs_diff_vs_explicit_mean"] < 1e-6 for v in man["stages"]["soups"].values())


@have_lab
def test_committed_soups_equal_the_explicit_mean_update():
    for s in recipes.full_config().soups:
        members = [LAB / "adapters" / m for m in recipes.full_config().train_spec(s.of).members]
        assert soup.check_soup(LAB / "adapters" / s.name, members) < 1e-6


@have_lab
def test_every_committed_model_and_adapter_loads_offline():
    res = checks.check_loads(LAB)
    n_adapters = sum(1 for d in (LAB / "adapters").iterdir() if (d / "adapter_config.json").is_file())
    assert n_adapters == sum(len(t.seeds) for t in recipes.full_config().train) + len(recipes.full_config().soups)
    assert len(res) == n_adapters + len(recipes.full_config().bases)
    assert checks.lab_size(LAB) < 20e6


@have_lab
def test_retrain_one_pool_with_new_seeds(tmp_path):
    pool = lab_build.retrain("primary-light", seeds=(7,), steps=3, splits=("validation",), k=2, out=tmp_path,
                             workers=1, include_base=False, progress=False, echo=None)
    assert pool.policy_names == ["primary-light-s7"] and pool.k == 2 and pool.n_prompts == 240
    assert set(pool.prompts["dataset"]) == {"primary"} and pool.policies.loc[0, "seed"] == 7
    new = json.loads((tmp_path / "adapters" / "primary-light-s7" / "training_log.json").read_text())["config"]
    old = json.loads((LAB / "adapters" / "primary-light-s1" / "training_log.json").read_text())["config"]
    assert {k for k in old if old[k] != new[k]} == {"seed", "recipe"}  # same base, task and prompts
    assert {k for k in old["recipe"] if old["recipe"][k] != new["recipe"][k]} == {"steps"}
    with pytest.raises(ValueError, match="distinct"):
        lab_build.retrain("primary-light", seeds=(3, 3), out=tmp_path, echo=None)


def test_cli_reports_bad_arguments_in_one_line(capsys):
    from oraclegap.lab.__main__ import main

    assert main(["retrain", "--seeds", "a,b"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--seeds" in err[0]
    assert main(["retrain", "--pool", "nope"]) == 2
    assert "unknown training pool" in capsys.readouterr().err
