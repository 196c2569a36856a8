"""Rollouts with the transformers backend on a tiny random model built here (no network).

The model is a 2-layer Llama with a character-level tokenizer (oraclegap.rollouts.tiny), with
two LoRA adapters saved by peft. Checks: the output schema and the pool it assembles into,
seeds and seed alignment (aligned and per-policy draw seeds), reproducibility and independence
of the worker partition in both modes, adapter
switching without reloading, the per-row sampler (exact law, batch-composition independence),
chat templates, and the bad-input errors.
"""

from __future__ import annotations

import json
import types

import numpy as np
import pandas as pd
import pytest
import torch

from oraclegap import Pool, _store
from oraclegap.rollouts import Store, draw_seed, generate, get_task, load_prompts, prompt_seed, tiny
from oraclegap.rollouts.backends.hf import RowSampler, row_uniforms
from oraclegap.rollouts.generate import DRAW_SEEDS, SEED_RULE, SEED_RULES
from oraclegap.sources import open_pool

K, T, BATCH = 3, 16, 6  # 3 draws, 16 tokens, chunks of 2 prompts
RUN = dict(task="integer", k=K, max_tokens=T, batch_size=BATCH, progress=False, seed=11)


@pytest.fixture(scope="module")
def tiny_setup(tmp_path_factory, one_torch_thread):
    root = tmp_path_factory.mktemp("tiny")
    model = tiny.build_tiny_model(root / "model", seed=0)
    lora0 = tiny.build_tiny_adapter(model, root / "lora0", seed=1)
    lora1 = tiny.build_tiny_adapter(model, root / "lora1", seed=2)
    recs = [
        {"id": f"q{i}", "prompt": f"{i} + {i % 4} =", "answer": str(i + i % 4), "split": "test" if i % 2 else "val", "level": i % 3}
        for i in range(5)
    ]
    pfile = root / "prompts.jsonl"
    pfile.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return types.SimpleNamespace(root=root, model=model, lora0=lora0, lora1=lora1, prompts=pfile, records=recs)


@pytest.fixture(scope="module")
def full(tiny_setup, tmp_path_factory):
    """base + two adapters, 5 prompts x 3 policies x k=3."""
    out = tmp_path_factory.mktemp("full") / "store"
    store = generate(
        tiny_setup.model, tiny_setup.prompts, out=out, adapters={"a0": tiny_setup.lora0, "a1": tiny_setup.lora1},
        include_base=True, **RUN,
    )
    return store


def test_schema_seeds_and_verdicts(full, tiny_setup):
    df = full.to_frame()
    assert tuple(df.columns) == _store.COLUMNS
    assert len(df) == 5 * 3 * K and not df.duplicated(list(_store.KEY)).any()
    assert df["policy"].unique().tolist() == ["base", "a0", "a1"]
    # seeds: draw j of prompt i is prompt_seed(seed, id) + j, the same under every policy
    want = [draw_seed(11, p, j) for p, j in zip(df["prompt_id"], df["sample"], strict=True)]
    assert df["seed"].tolist() == want
    assert df.groupby(["prompt_id", "sample"])["seed"].nunique().eq(1).all()
    assert prompt_seed(11, "q0") != prompt_seed(12, "q0") != prompt_seed(11, "q1")
    # verdicts are the task's verdicts of the stored texts; parse failures are wrong, counted
    task = get_task("integer")
    gold = {r["id"]: r["answer"] for r in tiny_setup.records}
    for row in df.itertuples():
        v = task.verdict(row.text, gold[row.prompt_id])
        assert (v.answer, v.parsed, v.correct) == (row.answer if row.parsed else None, row.parsed, row.correct)
    assert (~df["parsed"]).any() and df["parsed"].any()
    assert not df.loc[~df["parsed"], "correct"].any() and df.loc[~df["parsed"], "answer"].isna().all()
    # token counts, finish reasons, confidences
    assert df["completion_tokens"].between(1, T).all()
    assert (df.loc[df["finish_reason"] == "length", "completion_tokens"] == T).all()
    assert set(df["finish_reason"]) <= {"stop", "length"} and (df["finish_reason"] == "stop").any()
    assert np.isfinite(df["mean_logprob"]).all() and (df["mean_logprob"] < 0).all()
    tok = tiny.build_tokenizer()
    n_prompt = {r["id"]: len(tok(task.render(r))["input_ids"]) for r in tiny_setup.records}
    assert (df["prompt_tokens"] == df["prompt_id"].map(n_prompt)).all()


def test_status_and_pool(full, tiny_setup):
    df = full.to_frame()
    st = full.status()
    assert st.complete and st.cells_done == st.cells_total == 15 and st.responses_done == 45 and not st.missing
    per = st.frame().set_index("policy")
    assert per["responses"].tolist() == [15, 15, 15]
    assert per["parse_failures"].to_dict() == (~df["parsed"]).groupby(df["policy"]).sum().reindex(per.index).to_dict()
    assert per["correct"].to_dict() == df.groupby("policy")["correct"].sum().reindex(per.index).to_dict()
    pool = Pool.from_store(full.path)
    assert pool.shape == (5, 3, K) and pool.alignment == "seed-aligned"
    assert pool.prompt_ids == [r["id"] for r in tiny_setup.records] and pool.policy_names == ["base", "a0", "a1"]
    assert pool.splits == ["test", "val"] and pool.prompts["level"].tolist() == [0, 1, 2, 0, 1]
    i = pool.prompt_ids.index("q3")
    m = pool.policy_names.index("a1")
    cell = df[(df.prompt_id == "q3") & (df.policy == "a1")].sort_values("sample")
    assert pool.verdicts[i, m].tolist() == cell["correct"].tolist()
    assert pool.answers[i, m].tolist() == cell["answer"].fillna("").tolist()
    conf = pool.per_response["confidence"]
    assert conf.shape == pool.shape and np.allclose(conf[i, m], cell["mean_logprob"])
    assert pool.meta["parse_failures"] == per["parse_failures"].to_dict()
    assert pool.counts().sum() == df["correct"].sum()
    assert np.array_equal(open_pool(str(full.path)).verdicts, pool.verdicts)  # open_pool reads stores
    saved = pool.save(full.path.parent / "as_pool")  # survives the pool format
    assert np.array_equal(Pool.load(saved).verdicts, pool.verdicts)


def test_rerun_resumes_and_is_reproducible(full, tiny_setup, tmp_path):
    before = sorted(p.name for p in (full.path / "shards").iterdir())
    again = generate(
        tiny_setup.model, tiny_setup.prompts, out=full.path, adapters={"a0": tiny_setup.lora0, "a1": tiny_setup.lora1},
        include_base=True, **RUN,
    )
    assert sorted(p.name for p in (again.path / "shards").iterdir()) == before  # nothing regenerated
    # a fresh store from two in-process workers holds the same responses, bit for bit
    kw = dict(out=tmp_path / "two", adapters={"a0": tiny_setup.lora0, "a1": tiny_setup.lora1}, include_base=True, **RUN)
    generate(tiny_setup.model, tiny_setup.prompts, worker="1/2", **kw)
    with pytest.raises(ValueError, match="incomplete"):
        Pool.from_store(tmp_path / "two")
    st = generate(tiny_setup.model, tiny_setup.prompts, worker=(0, 2), **kw)
    pd.testing.assert_frame_equal(st.to_frame(), full.to_frame())
    names = {p.name[:5] for p in (tmp_path / "two" / "shards").iterdir()}
    assert names == {"w0of2", "w1of2"}


def test_adapters_switch_without_reload(full, tiny_setup, tmp_path):
    """Each policy's responses are the same whether or not other policies share the run."""
    ref = full.to_frame()
    only_a1 = generate(tiny_setup.model, tiny_setup.prompts, out=tmp_path / "a1", adapters={"a1": tiny_setup.lora1}, **RUN)
    base = generate(tiny_setup.model, tiny_setup.prompts, out=tmp_path / "base", **RUN)
    for st, name in ((only_a1, "a1"), (base, "base")):
        got = st.to_frame()
        assert got["policy"].unique().tolist() == [name]
        want = ref[ref.policy == name].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want)
    # the adapters change the responses (same seeds, different policies)
    texts = ref.pivot_table(index=["prompt_id", "sample"], columns="policy", values="text", aggfunc="first")
    assert (texts["a0"] != texts["base"]).mean() > 0.5 and (texts["a1"] != texts["a0"]).mean() > 0.5


# ---------------------------------------------------------------------- per-policy draw seeds
PER = dict(RUN, draw_seeds="per-policy")


@pytest.fixture(scope="module")
def full_pp(tiny_setup, tmp_path_factory):
    """The same run as ``full`` with per-policy draw seeds."""
    out = tmp_path_factory.mktemp("full_pp") / "store"
    return generate(
        tiny_setup.model, tiny_setup.prompts, out=out, adapters={"a0": tiny_setup.lora0, "a1": tiny_setup.lora1},
        include_base=True, **PER,
    )


def test_per_policy_seeds_differ_across_policies(full_pp, full):
    df = full_pp.to_frame()
    assert tuple(df.columns) == _store.COLUMNS and len(df) == 5 * 3 * K
    want = [draw_seed(11, p, j, m) for p, j, m in zip(df["prompt_id"], df["sample"], df["policy"], strict=True)]
    assert df["seed"].tolist() == want
    assert df.groupby(["prompt_id", "sample"])["seed"].nunique().eq(3).all()  # no two policies share a seed
    assert df["seed"].nunique() == len(df)
    aligned = full.to_frame()
    assert not set(df["seed"]) & set(aligned["seed"])  # neither does any policy with the aligned run
    assert draw_seed(11, "q0", 2, "a0") == prompt_seed(11, "q0", "a0") + 2 != draw_seed(11, "q0", 2)
    assert prompt_seed(11, "q0", "a0") != prompt_seed(11, "q0", "a1") != prompt_seed(12, "q0", "a1")
    # the identity records the mode and its rule; the pool is independent
    assert full_pp.identity["sampling"]["draw_seeds"] == "per-policy" and full.identity["sampling"]["draw_seeds"] == "aligned"
    assert full_pp.identity["seeds"]["rule"] == SEED_RULES["per-policy"] != full.identity["seeds"]["rule"]
    assert DRAW_SEEDS == ("aligned", "per-policy") and all(SEED_RULES[m] in SEED_RULE for m in DRAW_SEEDS)
    assert "policy name" in SEED_RULES["per-policy"] and "policy" not in SEED_RULES["aligned"]
    pool = Pool.from_store(full_pp.path)
    assert pool.alignment == "independent" and Pool.from_store(full.path).alignment == "seed-aligned"
    pi = pd.Index(pool.prompt_ids).get_indexer(df["prompt_id"])
    mi = pd.Index(pool.policy_names).get_indexer(df["policy"])
    assert (pool.per_response["seed"][pi, mi, df["sample"].to_numpy()] == df["seed"].to_numpy()).all()
    # other seeds, other responses: the per-policy texts are not the aligned ones
    key = ["prompt_id", "policy", "sample"]
    both = aligned.merge(df, on=key, suffixes=("_al", "_pp"))
    assert (both["text_al"] != both["text_pp"]).mean() > 0.5


def test_per_policy_rerun_partition_and_policy_subsets_are_reproducible(full_pp, tiny_setup, tmp_path):
    kw = dict(adapters={"a0": tiny_setup.lora0, "a1": tiny_setup.lora1}, include_base=True, **PER)
    before = sorted(p.name for p in (full_pp.path / "shards").iterdir())
    generate(tiny_setup.model, tiny_setup.prompts, out=full_pp.path, **kw)  # resumes: nothing regenerated
    assert sorted(p.name for p in (full_pp.path / "shards").iterdir()) == before
    with pytest.raises(ValueError, match="sampling.draw_seeds: store has 'per-policy', this run has 'aligned'"):
        generate(tiny_setup.model, tiny_setup.prompts, out=full_pp.path, **{**kw, "draw_seeds": "aligned"})
    # a fresh store from three workers, filled in reverse order, holds the same responses bit for bit
    for w in ("2/3", "0/3", "1/3"):
        st = generate(tiny_setup.model, tiny_setup.prompts, out=tmp_path / "three", worker=w, **kw)
    pd.testing.assert_frame_equal(st.to_frame(), full_pp.to_frame())
    # a policy's per-policy draws depend on its name, not on which other policies share the run
    only = generate(tiny_setup.model, tiny_setup.prompts, out=tmp_path / "a1", adapters={"a1": tiny_setup.lora1}, **PER)
    ref = full_pp.to_frame()
    pd.testing.assert_frame_equal(only.to_frame(), ref[ref.policy == "a1"].reset_index(drop=True))
    # the same adapter under another name draws other seeds
    renamed = generate(tiny_setup.model, tiny_setup.prompts, out=tmp_path / "b1", adapters={"b1": tiny_setup.lora1}, **PER)
    assert not set(renamed.to_frame()["seed"]) & set(ref["seed"])


def test_chat_template_is_applied(tmp_path):
    tmpl = "{% for m in messages %}user: {{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}bot: {% endif %}"
    model = tiny.build_tiny_model(tmp_path / "chat", seed=3, chat_template=tmpl)
    recs = [{"id": "a", "prompt": "1 + 1 =", "answer": "2"}, {"id": "b", "prompt": "2 + 3 =", "answer": "5"}]
    st = generate(model, recs, out=tmp_path / "s1", **RUN)
    plain = generate(model, recs, out=tmp_path / "s2", chat_template=False, **RUN)
    assert st.identity["template"]["chat"] is True and plain.identity["template"]["chat"] is False
    extra = len("user: ") + len("\nbot: ") - 1  # the template's characters; it adds no BOS token
    got = st.to_frame().groupby("prompt_id")["prompt_tokens"].first() - plain.to_frame().groupby("prompt_id")["prompt_tokens"].first()
    assert got.tolist() == [extra, extra]
    with pytest.raises(ValueError, match="no chat template"):
        generate(tiny.build_tiny_model(tmp_path / "nochat", seed=3), recs, out=tmp_path / "s3", chat_template=True, **RUN)


# ---------------------------------------------------------------------- the row sampler
def _sample(logits, seeds, temperature=1.0, top_p=1.0, step=0, n_steps=4, u=None):
    u = torch.from_numpy(row_uniforms(seeds, n_steps) if u is None else u)
    s = RowSampler(u, prompt_len=3, temperature=temperature, top_p=top_p)
    out = s(torch.zeros((len(u), 3 + step), dtype=torch.long), torch.as_tensor(logits, dtype=torch.float32))
    choice = s.tokens[0]
    assert torch.equal(torch.isfinite(out).nonzero()[:, 1], choice)  # one admissible token per row
    return choice.numpy(), s.logprobs[0].numpy()


def test_row_sampler_ignores_batch_composition():
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 2, (6, 40))
    seeds = [101, 7, 55, 3, 99, 12]
    a, lp_a = _sample(logits, seeds, 0.8, 0.9, step=2)
    perm = [4, 0, 5, 2, 1, 3]
    extra = rng.normal(0, 2, (3, 40))
    b, _ = _sample(np.vstack([logits[perm], extra]), [seeds[p] for p in perm] + [1, 2, 3], 0.8, 0.9, step=2)
    assert b[:6].tolist() == a[perm].tolist()
    ref = torch.log_softmax(torch.as_tensor(logits, dtype=torch.float32), -1).numpy()
    assert np.allclose(lp_a, ref[np.arange(6), a])  # raw (temperature-1) log-probabilities


def test_row_sampler_draws_from_the_tempered_nucleus():
    z = np.array([2.0, 1.0, 0.5, 0.0, -1.0, -3.0])
    R = 6000
    logits = np.tile(z, (R, 1))
    seeds = np.arange(R) * 7919 + 1
    u = row_uniforms(seeds, 1)
    from scipy.stats import chisquare

    for temp, top_p in ((1.0, 1.0), (0.6, 1.0), (1.3, 0.8)):
        p = np.exp(z / temp) / np.exp(z / temp).sum()
        order = np.argsort(-p, kind="stable")
        keep = np.zeros(len(z), dtype=bool)
        keep[order[(np.cumsum(p[order]) - p[order]) < top_p]] = True
        q = np.where(keep, p, 0) / p[keep].sum()
        got, _ = _sample(logits, seeds, temp, top_p, n_steps=1, u=u)
        counts = np.bincount(got, minlength=len(z))
        assert counts[~keep].sum() == 0
        assert chisquare(counts[keep], R * q[keep]).pvalue > 1e-3, (temp, top_p, counts, R * q)
        edge, _ = _sample(logits[:2], seeds[:2], temp, top_p, n_steps=1, u=np.array([[0.0], [1.0]]))
        assert keep[edge].all()  # u at either end of [0, 1] still picks a token of the nucleus
    greedy, _ = _sample(logits[:50], seeds[:50], 0.0)
    assert (greedy == 0).all()
    # the uniforms of a row depend only on its seed and the position
    u = row_uniforms([5, 6, 5], 8)
    assert np.array_equal(u[0], u[2]) and not np.array_equal(u[0], u[1])
    assert np.array_equal(u[0], np.random.default_rng(5).random(8))


# ---------------------------------------------------------------------- bad inputs
def _write(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    "rows, match",
    [
        ([{"prompt": "a", "answer": "1"}], "no 'id'"),
        ([{"id": "", "prompt": "a", "answer": "1"}], "missing or empty 'id'"),
        ([{"id": 1, "prompt": "a", "answer": "1"}, {"id": "1", "prompt": "b", "answer": "2"}], "duplicate ids"),
        ([{"id": "a", "prompt": "  ", "answer": "1"}], "no prompt text"),
        ([{"id": "a", "answer": "1"}], "no 'prompt'"),
        ([{"id": "a", "prompt": "x"}], "no 'answer'"),
        (['{"id": "a", "prompt": '], "line 1 is not valid JSON"),
        ([], "holds no prompts"),
    ],
)
def test_bad_prompt_files(tmp_path, rows, match):
    with pytest.raises(ValueError, match=match):
        load_prompts(_write(tmp_path / "p.jsonl", rows))


def test_load_prompts_keeps_features(tmp_path):
    recs = load_prompts(_write(tmp_path / "p.jsonl", [{"id": 7, "prompt": "x", "answer": 3, "topic": "alg", "tags": [1, 2]}]))
    assert recs == [{"id": "7", "prompt": "x", "answer": "3", "topic": "alg", "tags": [1, 2]}]
    with pytest.raises(ValueError, match="does not exist"):
        load_prompts(tmp_path / "none.jsonl")


def test_bad_arguments(tiny_setup, tmp_path):
    m, p = tiny_setup.model, tiny_setup.prompts
    base = dict(RUN, out=tmp_path / "s")
    cases = [
        (dict(k=0), ValueError, "k must be >= 1"),
        (dict(temperature=-0.5), ValueError, "temperature must lie in"),
        (dict(top_p=0.0), ValueError, "top_p must lie in"),
        (dict(max_tokens=0), ValueError, "max_tokens must be >= 1"),
        (dict(task="nope"), ValueError, "unknown task 'nope'"),
        (dict(backend="tgi"), ValueError, "unknown backend 'tgi'"),
        (dict(worker="3/3"), ValueError, "0 <= i < n"),
        (dict(worker="one of two"), ValueError, "i/n"),
        (dict(tensor_parallel=2), ValueError, "tensor_parallel applies to the vllm backend"),
        (dict(adapters={"x": tmp_path}), ValueError, "not a LoRA adapter: it has no adapter_config.json"),
        (dict(adapters={"x": tmp_path / "missing"}), ValueError, "is not a directory"),
        (dict(adapters={"base": tiny_setup.lora0}), ValueError, "reserved for the base model"),
        (dict(adapters=[str(tiny_setup.lora0)]), TypeError, "adapters must map policy names"),
        (dict(device="gpu0"), ValueError, "device must be a torch device"),
        (dict(draw_seeds="independent"), ValueError, "draw_seeds must be one of"),
        (dict(draw_seeds=None), ValueError, "draw_seeds must be one of"),
    ]
    if not torch.cuda.is_available():
        cases.append((dict(device="cuda"), ValueError, "sees no CUDA device"))
    for kw, exc, match in cases:
        with pytest.raises(exc, match=match):
            generate(m, p, **{**base, **kw})
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    (prefix / "adapter_config.json").write_text(json.dumps({"peft_type": "PREFIX_TUNING"}))
    with pytest.raises(ValueError, match="not a LoRA adapter \\(peft_type='PREFIX_TUNING'\\)"):
        generate(m, p, **{**base, "adapters": {"x": prefix}})
    with pytest.raises(ValueError, match="gold answer is unusable for task 'integer'"):
        generate(m, [{"id": "a", "prompt": "x", "answer": "seven"}], **base)
    assert not (tmp_path / "s").exists()  # no store is created by a refused run


def test_model_directories_that_do_not_load(tiny_setup, tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        generate(tmp_path / "nowhere", tiny_setup.prompts, out=tmp_path / "s", **RUN)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no config.json"):
        generate(empty, tiny_setup.prompts, out=tmp_path / "s", **RUN)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="does not load"):
        generate(broken, tiny_setup.prompts, out=tmp_path / "s", **RUN)
    # tokenizer fine, weights damaged: refused when the model loads, before any store exists
    bad_weights = tmp_path / "badw"
    tiny.build_tiny_model(bad_weights, seed=0)
    w = bad_weights / "model.safetensors"
    w.write_bytes(w.read_bytes()[:200])
    with pytest.raises(ValueError, match="does not load as a causal LM"):
        generate(bad_weights, tiny_setup.prompts, out=tmp_path / "s", **RUN)
    assert not (tmp_path / "s").exists()
    # a non-store directory is not overwritten
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a rollout store"):
        generate(tiny_setup.model, tiny_setup.prompts, out=other, **RUN)
    with pytest.raises(ValueError, match="no manifest.json"):
        Store(other)
