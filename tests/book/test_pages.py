"""Pages generated from the library (oraclegap.book.pages): the data page from the registry and the
chapter table of the preface and README from one record; the committed texts are never stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from oraclegap import datasets
from oraclegap.book import pages, quarto_pages

ROOT = Path(__file__).resolve().parents[2]


def test_committed_generated_pages_are_current():
    assert pages.stale_pages(ROOT) == [], "run `python -m oraclegap.book pages` and commit the result"


def test_data_page_lists_every_registered_pool_with_its_facts():
    text = pages.data_page()
    reg = datasets.registry()
    for r in reg.itertuples():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{r.name}` |"))
        assert r.shape in row and (", ".join(pages.POOL_INPUTS[r.name]) or "verdicts only") in row
    for kind, how in pages.OBTAIN.items():
        assert (f"How to obtain: {how}." in text) == (kind in set(reg["kind"]))
    assert "data.qmd" in [p.file for p in quarto_pages(ROOT)]


def test_an_unrecorded_pool_is_refused(monkeypatch):
    monkeypatch.delitem(pages.POOL_INPUTS, "sim-diffuse")
    with pytest.raises(ValueError, match="sim-diffuse"):
        pages.data_page()


def test_pool_inputs_match_the_loaded_pools():
    """Every entry whose files are here carries exactly the inputs the page says (text, embeddings,
    cost); entries whose files are absent are skipped, and the test says how many."""
    avail = datasets.available()
    checked = 0
    for r in avail.itertuples():
        if not r.present:
            continue
        p = datasets.load(r.name)
        has = tuple(x for x, ok in (("text", "text" in p.prompts and p.prompts["text"].astype(str).str.len().gt(0).all()),
                                    ("embeddings", p.embeddings is not None), ("cost", p.cost is not None)) if ok)
        assert has == pages.POOL_INPUTS[r.name], r.name
        checked += 1
    if checked < len(avail):
        print(f"checked {checked} of {len(avail)} pools; the others' files are absent (OG_EXTERNAL_DIR)")
    assert checked >= int((avail["kind"] != "external").sum())


def test_chapter_table_follows_quarto_and_every_notebook(tmp_path):
    table = pages.chapter_table(ROOT)
    chapters = [p for p in quarto_pages(ROOT) if p.is_chapter]
    assert len(table.splitlines()) == 2 + len(chapters)
    for p in chapters:
        assert f"| {Path(p.file).stem[:2]} " in table
    with pytest.raises(ValueError, match="markers"):
        pages._with_table("no markers here", table, "x.md")


def test_run_times_come_from_one_record(tmp_path):
    import json
    import shutil

    root = ROOT
    for name in ("_quarto.yml", "instructors.qmd"):
        shutil.copy(root / name, tmp_path / name)
    shutil.copytree(root / "notebooks", tmp_path / "notebooks")
    stems = [Path(p.file).stem for p in quarto_pages(root) if p.is_chapter]
    assert len(stems) == 7
    secs = {s: 10.0 + i for i, s in enumerate(stems)}
    res = {"seconds": secs, "cached": [], "small": True, "render_seconds": 31.0, "total_seconds": 123.0}
    # a build that took a chapter from the cache has no time for it: nothing is recorded
    said = pages.record_times(tmp_path, {**res, "cached": stems[:1]})
    assert "not recorded" in said and not (tmp_path / pages.RUNTIMES).exists()
    assert "recorded" in pages.record_times(tmp_path, res)
    rec = json.loads((tmp_path / pages.RUNTIMES).read_text())
    assert rec["small"]["chapters"] == secs and "full" not in rec
    text = pages.runtimes_section(tmp_path)
    assert "| `--small` |" in text and "123 s" in text
    # the processor is named beside the times (records from before it was kept: cores alone)
    assert rec["small"]["cpu"] == pages.cpu_model()
    if rec["small"]["cpu"]:
        assert f"{rec['small']['cpus']} cores ({rec['small']['cpu']})" in text
    old = json.loads((tmp_path / pages.RUNTIMES).read_text())
    del old["small"]["cpu"]
    (tmp_path / pages.RUNTIMES).write_text(json.dumps(old))
    assert f"{old['small']['cpus']} cores, load average" in pages.runtimes_section(tmp_path)
    pages.record_times(tmp_path, res)
    for i, s in enumerate(stems):
        assert f"(`{s}`) | {10 + i} s |" in text
    # chapters executed side by side: the page says so, since the build is then shorter than their sum
    pages.record_times(tmp_path, {**res, "small": False, "jobs": 2})
    text = pages.runtimes_section(tmp_path)
    assert "chapters 2 at a time" in text and "chapters one at a time" not in text
    pages.record_times(tmp_path, {**res, "jobs": 1})
    assert "chapters one at a time" in pages.runtimes_section(tmp_path)
    (tmp_path / pages.RUNTIMES).unlink()
    with pytest.raises(ValueError, match="runtimes.json"):
        pages.runtimes_section(tmp_path)


def test_class_audit_time_comes_from_the_record(tmp_path):
    import json
    import shutil

    for name in ("_quarto.yml", "instructors.qmd"):
        shutil.copy(ROOT / name, tmp_path / name)
    assert pages.AU_BEGIN in (tmp_path / "instructors.qmd").read_text()
    assert "not recorded yet" in pages.audit_time_sentence(tmp_path)
    seen = []
    said = pages.record_audit_time(tmp_path, run=lambda argv: seen.append(argv) or 41.3)
    assert "41.3 s" in said
    argv = seen[0]
    assert argv[2:5] == ["oraclegap.cli", "audit", pages.CLASS_AUDIT[0]] and argv[-2:] == ["--small", "--no-report"]
    rec = json.loads((tmp_path / pages.RUNTIMES).read_text())["audit"]
    assert rec["seconds"] == 41.3 and rec["pool"] == pages.CLASS_AUDIT[0]
    text = pages.audit_time_sentence(tmp_path)
    assert "Timed without the HTML report (flags `--small` and `--no-report`), it took 41 s" in text
    assert "the command above also writes the HTML report" in text and f"load average {rec['load_average']}" in text
    assert rec["cpu"] == pages.cpu_model()
    if rec["cpu"]:
        assert f"on {rec['cpus']} CPU cores ({rec['cpu']}; load average" in text

    def fails(argv):
        raise ValueError("the class audit of x failed (exit 2): no data")

    with pytest.raises(ValueError, match="failed"):
        pages.record_audit_time(tmp_path, run=fails)
    assert json.loads((tmp_path / pages.RUNTIMES).read_text())["audit"]["seconds"] == 41.3  # kept
