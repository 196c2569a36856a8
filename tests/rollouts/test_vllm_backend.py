"""The vllm backend against the fake ``vllm`` in tests/fake_vllm (vllm itself needs a GPU).

Checked: the arguments given to ``LLM`` (model, seed, tensor parallelism, LoRA settings, the
model's own sampling defaults switched off), ``SamplingParams`` per prompt (n = k, the prompt's
seed, temperature, top_p, max_tokens, logprobs), prompts passed as the same token ids the
transformers backend uses, LoRA routing (one ``LoRARequest`` per adapter, none for the base
model), and the parsing of ``RequestOutput``/``CompletionOutput`` into the store's schema; with
per-policy draw seeds, each policy's ``SamplingParams(seed=...)`` is its own.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from oraclegap import Pool
from oraclegap.rollouts import draw_seed, generate, get_task, prompt_seed, tiny
from oraclegap.rollouts.generate import render_prompts

FAKE = Path(__file__).resolve().parents[1] / "fake_vllm"
RUN = dict(task="integer", k=3, max_tokens=10, temperature=0.7, top_p=0.9, seed=8, progress=False)


@pytest.fixture()
def fake_vllm(monkeypatch):
    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(FAKE))
    vllm = importlib.import_module("vllm")
    assert vllm.__version__.endswith("+fake")
    vllm.CALLS.clear()
    yield vllm
    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        sys.modules.pop(name, None)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("vllm")
    model = tiny.build_tiny_model(root / "model", seed=31)
    l0 = tiny.build_tiny_adapter(model, root / "l0", seed=32, r=4)
    l1 = tiny.build_tiny_adapter(model, root / "l1", seed=33, r=12)
    recs = [{"id": f"v{i}", "prompt": f"{i} + 1 =", "answer": str(i + 1)} for i in range(5)]
    return types.SimpleNamespace(root=root, model=model, l0=l0, l1=l1, records=recs)


def test_llm_arguments_sampling_params_and_lora_routing(fake_vllm, setup, tmp_path):
    st = generate(
        setup.model, setup.records, out=tmp_path / "s", backend="vllm", adapters={"a0": setup.l0, "a1": setup.l1},
        include_base=True, tensor_parallel=2, batch_size=6, **RUN,
    )
    init = [c for c in fake_vllm.CALLS if c["call"] == "LLM"]
    assert len(init) == 1  # one engine for every policy
    init = init[0]
    assert init["model"] == str(setup.model) and init["tokenizer"] == str(setup.model)
    assert (init["seed"], init["tensor_parallel_size"], init["generation_config"]) == (8, 2, "vllm")
    assert init["enable_lora"] is True and init["max_loras"] == 2
    assert init["max_lora_rank"] == 16  # the smallest rank vllm accepts that holds r = 12
    calls = [c for c in fake_vllm.CALLS if c["call"] == "generate"]
    # chunks of max(1, 6 // 3) = 2 prompts: 3 groups x 3 policies
    assert len(calls) == 9
    ids, _ = render_prompts(setup.records, get_task("integer"), tiny.build_tokenizer(), None)
    layout = st.layout()
    for c, call in enumerate(calls):
        policy, pids = layout[c]
        assert [p["prompt_token_ids"] for p in call["prompts"]] == [ids[p] for p in pids]
        for sp, pid in zip(call["params"], pids, strict=True):
            assert (sp.n, sp.temperature, sp.top_p, sp.max_tokens, sp.logprobs) == (3, 0.7, 0.9, 10, 1)
            assert sp.seed == prompt_seed(8, pid)
        lora = call["lora"][0]
        if policy == "base":
            assert all(r is None for r in call["lora"])
        else:
            assert all(r is lora for r in call["lora"])
            want = {"a0": (1, setup.l0), "a1": (2, setup.l1)}[policy]
            assert (lora.lora_name, lora.lora_int_id, lora.lora_path) == (policy, want[0], str(want[1]))


def test_outputs_are_parsed_into_the_schema(fake_vllm, setup, tmp_path):
    st = generate(setup.model, setup.records, out=tmp_path / "s", backend="vllm", adapters={"a0": setup.l0}, include_base=True, **RUN)
    df = st.to_frame()
    ids, _ = render_prompts(setup.records, get_task("integer"), tiny.build_tokenizer(), None)
    gold = {r["id"]: r["answer"] for r in setup.records}
    task = get_task("integer")
    for row in df.itertuples():
        lora_id = 0 if row.policy == "base" else 1
        seed = draw_seed(8, row.prompt_id, row.sample)  # vllm's child j of a seed-s request has seed s + j
        assert row.seed == seed
        text, toks, lps, reason = fake_vllm.fake_completion(ids[row.prompt_id], seed, lora_id, 10, 0.7)
        assert (row.text, row.completion_tokens, row.finish_reason) == (text, len(toks), reason)
        assert row.prompt_tokens == len(ids[row.prompt_id])
        assert np.isclose(row.mean_logprob, np.mean(lps))
        v = task.verdict(text, gold[row.prompt_id])
        assert (row.parsed, row.correct) == (v.parsed, v.correct)
    assert set(df["finish_reason"]) == {"stop", "length"}
    pool = Pool.from_store(st.path)
    assert pool.alignment == "seed-aligned" and pool.shape == (5, 2, 3)
    assert st.identity["backend"] == {"name": "vllm", "device": "cuda", "dtype": "auto", "tensor_parallel": 1}
    assert "vllm" in st.identity["versions"] and "peft" not in st.identity["versions"]


def test_per_policy_seeds_reach_sampling_params(fake_vllm, setup, tmp_path):
    """draw_seeds='per-policy': every request's SamplingParams seed is the policy's own prompt seed,
    the stored seed of draw j is that + j, and the outputs parse as before."""
    st = generate(setup.model, setup.records, out=tmp_path / "s", backend="vllm", adapters={"a0": setup.l0, "a1": setup.l1},
                  include_base=True, batch_size=6, draw_seeds="per-policy", **RUN)
    calls = [c for c in fake_vllm.CALLS if c["call"] == "generate"]
    layout = st.layout()
    assert len(calls) == len(layout) == 9
    seen = {}
    for (policy, pids), call in zip(layout, calls, strict=True):
        for sp, pid in zip(call["params"], pids, strict=True):
            assert sp.n == 3 and sp.seed == prompt_seed(8, pid, policy) != prompt_seed(8, pid)
            seen.setdefault(pid, set()).add(sp.seed)
    assert all(len(v) == 3 for v in seen.values())  # three policies, three seeds per prompt
    ids, _ = render_prompts(setup.records, get_task("integer"), tiny.build_tokenizer(), None)
    df = st.to_frame()
    for row in df.itertuples():
        seed = draw_seed(8, row.prompt_id, row.sample, row.policy)
        assert row.seed == seed
        lora_id = {"base": 0, "a0": 1, "a1": 2}[row.policy]
        text, toks, _, reason = fake_vllm.fake_completion(ids[row.prompt_id], seed, lora_id, 10, 0.7)
        assert (row.text, row.completion_tokens, row.finish_reason) == (text, len(toks), reason)
    assert Pool.from_store(st.path).alignment == "independent"
    assert st.identity["sampling"]["draw_seeds"] == "per-policy"


def test_without_adapters_lora_stays_off(fake_vllm, setup, tmp_path):
    generate(setup.model, setup.records[:2], out=tmp_path / "s", backend="vllm", **RUN)
    init = next(c for c in fake_vllm.CALLS if c["call"] == "LLM")
    assert init["enable_lora"] is False
    assert all(r is None for c in fake_vllm.CALLS if c["call"] == "generate" for r in c["lora"])


def test_vllm_errors(fake_vllm, setup, tmp_path):
    with pytest.raises(ValueError, match="unknown backend"):
        generate(setup.model, setup.records, out=tmp_path / "s", backend="VLLM", **RUN)
    too_big = tmp_path / "big"
    too_big.mkdir()
    for f in setup.l0.iterdir():
        (too_big / f.name).write_bytes(f.read_bytes())
    cfg = json.loads((too_big / "adapter_config.json").read_text())
    cfg["r"] = 1024
    (too_big / "adapter_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="LoRA rank 1024 exceeds"):
        generate(setup.model, setup.records, out=tmp_path / "s2", backend="vllm", adapters={"big": too_big}, **RUN)


def test_vllm_missing_is_a_clear_error(monkeypatch, setup, tmp_path):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError, as on a CPU machine
    with pytest.raises(ValueError, match="requirements-gpu.txt"):
        generate(setup.model, setup.records, out=tmp_path / "s", backend="vllm", **RUN)
    assert not (tmp_path / "s").exists()
