"""The rollout store: a changed manifest and a corrupt or truncated shard are refused with a
clear message naming what differs or which shard; missing and doubled chunks are reported
and refused by Pool.from_store; leftover temporary files are ignored and cleaned up."""

from __future__ import annotations

import json
import shutil
import types

import pytest

from oraclegap import Pool, _store
from oraclegap.rollouts import Store, generate, tiny
from oraclegap.rollouts.generate import SEED_RULES
from oraclegap.rollouts.store import identity_diff

RUN = dict(task="integer", k=2, max_tokens=8, batch_size=4, progress=False, seed=3)


@pytest.fixture(scope="module")
def setup(tmp_path_factory, one_torch_thread):
    root = tmp_path_factory.mktemp("store")
    model = tiny.build_tiny_model(root / "model", seed=5)
    lora = tiny.build_tiny_adapter(model, root / "lora", seed=6)
    recs = [{"id": f"p{i}", "prompt": f"{i}*2=", "answer": str(2 * i)} for i in range(4)]
    pfile = root / "prompts.jsonl"
    pfile.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = root / "store"
    generate(model, pfile, out=out, adapters={"a": lora}, include_base=True, **RUN)
    return types.SimpleNamespace(root=root, model=model, lora=lora, prompts=pfile, records=recs, out=out)


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def _shards(path):
    return sorted((path / _store.SHARDS).glob("*.parquet"))


def test_layout_on_disk(setup):
    m = json.loads((setup.out / _store.MANIFEST).read_text())
    assert m["format"] == "oraclegap.rollouts" and m["version"] == 1
    ident = m["identity"]
    assert [p["name"] for p in ident["policies"]] == ["base", "a"]
    assert ident["policies"][0]["adapter_sha256"] is None and len(ident["policies"][1]["adapter_sha256"]) == 64
    assert ident["sampling"] == {"k": 2, "temperature": 1.0, "top_p": 1.0, "max_tokens": 8, "seed": 3, "draw_seeds": "aligned"}
    assert ident["seeds"]["rule"] == SEED_RULES["aligned"]
    assert ident["layout"] == {"batch_size": 4, "prompts_per_chunk": 2}
    assert {"torch", "transformers", "peft", "math-verify", "oraclegap"} <= set(ident["versions"])
    # 4 prompts in groups of 2, x 2 policies = 4 chunks, one shard each, digest in the name
    shards = _shards(setup.out)
    assert [s.name[:13] for s in shards] == [f"w0of1-c{c:06d}" for c in range(4)]
    for s in shards:
        assert _store.digest_bytes(s.read_bytes()) == s.stem.rsplit("-", 1)[1]
    assert _store.is_store(setup.out) and not _store.is_store(setup.root)


@pytest.mark.parametrize(
    "change, named",
    [
        (dict(temperature=0.7), "sampling.temperature: store has 1.0, this run has 0.7"),
        (dict(k=3), "sampling.k"),
        (dict(seed=4), "sampling.seed"),
        (dict(max_tokens=9), "sampling.max_tokens"),
        (dict(task="numeric"), "task.name"),
        (dict(batch_size=8), "layout.batch_size"),
        (dict(include_base=False), "policies"),
        (dict(draw_seeds="per-policy"), "sampling.draw_seeds: store has 'aligned', this run has 'per-policy'"),
    ],
)
def test_changed_manifest_is_refused(setup, change, named):
    kw = {**dict(adapters={"a": setup.lora}, include_base=True, **RUN), **change}
    with pytest.raises(ValueError, match="different settings") as err:
        generate(setup.model, setup.prompts, out=setup.out, **kw)
    assert named in str(err.value)


def test_store_from_before_draw_seeds_resumes_as_aligned(setup, tmp_path):
    """A store whose manifest predates the draw-seed mode was sampled aligned: an aligned rerun
    resumes it, a per-policy rerun is refused, and its pool is seed-aligned."""
    st = _copy(setup.out, tmp_path / "old")
    m = json.loads((st / _store.MANIFEST).read_text())
    del m["identity"]["sampling"]["draw_seeds"]
    (st / _store.MANIFEST).write_text(json.dumps(m, indent=2, sort_keys=True))
    before = _shards(st)
    generate(setup.model, setup.prompts, out=st, adapters={"a": setup.lora}, include_base=True, **RUN)
    assert _shards(st) == before
    with pytest.raises(ValueError, match="sampling.draw_seeds: store has 'aligned'"):
        generate(setup.model, setup.prompts, out=st, adapters={"a": setup.lora}, include_base=True, draw_seeds="per-policy", **RUN)
    assert Pool.from_store(st).alignment == "seed-aligned"


def test_seeds_that_contradict_the_manifest_are_refused(setup, tmp_path):
    st = _copy(setup.out, tmp_path / "liar")
    m = json.loads((st / _store.MANIFEST).read_text())
    m["identity"]["sampling"]["draw_seeds"] = "per-policy"  # the stored seeds are shared across policies
    (st / _store.MANIFEST).write_text(json.dumps(m, indent=2, sort_keys=True))
    with pytest.raises(ValueError, match="draw_seeds='per-policy', but the stored seeds are shared"):
        Pool.from_store(st)


def test_changed_prompts_or_model_is_refused(setup, tmp_path):
    recs = [dict(r) for r in setup.records]
    recs[1]["prompt"] = "1*2 ="
    with pytest.raises(ValueError, match="prompts.sha256"):
        generate(setup.model, recs, out=setup.out, adapters={"a": setup.lora}, include_base=True, **RUN)
    other = tiny.build_tiny_model(tmp_path / "other", seed=99)
    with pytest.raises(ValueError, match="model.sha256"):
        generate(other, setup.prompts, out=setup.out, adapters={"a": setup.lora}, include_base=True, **RUN)
    lora2 = tiny.build_tiny_adapter(setup.model, tmp_path / "lora2", seed=7)
    with pytest.raises(ValueError, match=r"policies\[1\].adapter_sha256"):
        generate(setup.model, setup.prompts, out=setup.out, adapters={"a": lora2}, include_base=True, **RUN)
    assert identity_diff({"a": {"b": 1}, "c": [1]}, {"a": {"b": 2}, "c": [1]}) == ["a.b: store has 1, this run has 2"]


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty"])
def test_corrupt_shard_is_named(setup, tmp_path, damage):
    st = _copy(setup.out, tmp_path / "s")
    victim = _shards(st)[2]
    data = bytearray(victim.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data = bytearray()
    victim.write_bytes(bytes(data))
    for call in (lambda: Pool.from_store(st), lambda: Store(st).status(), lambda: Store(st).to_frame()):
        with pytest.raises(ValueError, match=f"shard '{victim.name}' is corrupt or truncated"):
            call()
    with pytest.raises(ValueError, match=victim.name):  # a rerun refuses too, naming it
        generate(setup.model, setup.prompts, out=st, adapters={"a": setup.lora}, include_base=True, **RUN)
    victim.unlink()  # the remedy the message gives: delete it and rerun
    generate(setup.model, setup.prompts, out=st, adapters={"a": setup.lora}, include_base=True, **RUN)
    assert Pool.from_store(st).shape == (4, 2, 2)


def test_shard_with_foreign_rows_is_refused(setup, tmp_path):
    st = _copy(setup.out, tmp_path / "s")
    s0, s1 = _shards(st)[:2]
    # chunk 1's valid bytes under chunk 0's name (digest of its own bytes): wrong keys for chunk 0
    data = s1.read_bytes()
    s0.unlink()
    (st / _store.SHARDS / _store.shard_name("w0of1", 0, _store.digest_bytes(data))).write_bytes(data)
    with pytest.raises(ValueError, match="does not hold exactly chunk 0's keys"):
        Pool.from_store(st)


def test_missing_and_doubled_chunks(setup, tmp_path):
    st = _copy(setup.out, tmp_path / "s")
    shards = _shards(st)
    shards[1].unlink()
    status = Store(st).status()
    assert not status.complete and status.cells_done == 6 and status.missing == (("p0", "a"), ("p1", "a"))
    assert status.frame().set_index("policy")["cells_done"].to_dict() == {"base": 4, "a": 2}
    with pytest.raises(ValueError, match=r"incomplete: 2 of 8 .* missing, e.g. \[\('p0', 'a'\), \('p1', 'a'\)\]"):
        Pool.from_store(st)
    generate(setup.model, setup.prompts, out=st, adapters={"a": setup.lora}, include_base=True, **RUN)
    assert Store(st).status().complete
    # the same chunk under a second writer's name: refused, both shards named
    first = _shards(st)[0]
    dup = st / _store.SHARDS / first.name.replace("w0of1", "w1of3")
    shutil.copyfile(first, dup)
    status = Store(st).status()
    assert not status.complete and status.duplicates == {0: sorted([first.name, dup.name])}
    with pytest.raises(ValueError, match="written more than once") as err:
        Pool.from_store(st)
    assert first.name in str(err.value) and dup.name in str(err.value)


def test_temp_files_and_strangers(setup, tmp_path):
    st = _copy(setup.out, tmp_path / "s")
    sdir = st / _store.SHARDS
    (sdir / ".tmp-w0of1-c000009-dead.parquet").write_bytes(b"half a shard")  # a killed writer's leftover
    status = Store(st).status()
    assert status.complete and status.temp_files == (".tmp-w0of1-c000009-dead.parquet",)
    assert Pool.from_store(st).shape == (4, 2, 2)
    _shards(st)[3].unlink()
    generate(setup.model, setup.prompts, out=st, adapters={"a": setup.lora}, include_base=True, **RUN)
    assert not list(sdir.glob(".tmp-*"))  # the same writer cleans its own leftovers
    (sdir / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="unexpected file .*notes.txt"):
        Pool.from_store(st)


def test_damaged_prompt_file_and_manifest(setup, tmp_path):
    st = _copy(setup.out, tmp_path / "s")
    (st / _store.PROMPTS).write_text((st / _store.PROMPTS).read_text().replace("p1", "px"))
    with pytest.raises(ValueError, match="prompts.jsonl' is damaged"):
        Pool.from_store(st)
    st2 = _copy(setup.out, tmp_path / "s2")
    (st2 / _store.MANIFEST).write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        Pool.from_store(st2)
    m = json.loads((setup.out / _store.MANIFEST).read_text())
    m["version"] = 99
    (st2 / _store.MANIFEST).write_text(json.dumps(m))
    with pytest.raises(ValueError, match="format version 99"):
        Store(st2)
