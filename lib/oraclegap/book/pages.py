"""Book pages generated from the library, so they cannot drift from it.

:func:`data_page` writes ``data.qmd`` from the dataset registry (:func:`oraclegap.datasets.registry`):
every pool the book can load, what it is, who released it, its licence, its nominal shape
(prompts x members x responses), whether its prompts carry text, embeddings or costs (the router
inputs, :data:`POOL_INPUTS`, checked against the loaded pools by ``tests/book/test_pages.py``
wherever the data are present), and how to obtain it. ``python -m oraclegap.book pages``
rewrites the committed page; ``tests/book/test_pages.py`` fails when it is stale.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["DATA_PAGE", "POOL_INPUTS", "OBTAIN", "CHAPTERS", "data_page", "chapter_table", "write_pages",
           "stale_pages"]

DATA_PAGE = "data.qmd"

#: What each registered pool carries besides verdicts, as loaded by ``datasets.load`` (recorded
#: from the loaded pools; tests/book/test_pages.py re-checks every entry whose files are present).
POOL_INPUTS: dict[str, tuple[str, ...]] = {
    **{n: () for n in ("sim-exchangeable", "sim-diffuse", "paper002-pilot-arc", "paper002-pilot-hellaswag",
                       "paper002-pilot-gsm8k", "paper002-confirmatory-arc", "paper000-reference", "chen2026-gpqa", "chen2026-gpqa-single",
                       "chen2026-gpqa-greedy")},
    **{n: ("text", "embeddings") for n in ("lab-cross", "lab-seed-primary", "lab-seed-primary-val",
                                           "lab-seed-secondary", "lab-seed-primary-aligned", "lab-primary-k64",
                                           "lab-secondary-k64", "lab-primary-extra", "lab-small")},
    **{n: ("text",) for n in ("chen2026-math500", "chen2026-math500-single", "chen2026-math500-greedy",
                              "chen2026-humanevalplus", "chen2026-humanevalplus-single",
                              "chen2026-humanevalplus-greedy", "routerdc-gsm8k-test", "routerdc-gsm8k-train",
                              "routerdc-humaneval", "routerdc-mbpp", "routerdc-javascript", "routerdc-mmlu",
                              "routerdc-arc-challenge", "routerdc-arc-easy", "routerdc-cmmlu", "routerdc-ceval",
                              "routerdc-math-prealgebra", "routerdc-k1-all", "mmlu-pro", "llmrouter-dcrouter")},
    **{n: ("text", "cost") for n in ("routerbench-arc-challenge", "routerbench-mbpp", "routerbench-winogrande",
                                     "routerbench-all", "llmrouter-routeprofile")},
    "routerbench-mini": ("cost",),
}

#: How a reader obtains each kind of pool.
OBTAIN = {
    "simulated": "generated on the fly from a seed (`oraclegap.datasets.load(name)`)",
    "lab": "committed under `data/lab/` (made by the project's policy lab; `make lab` rebuilds it)",
    "paper": "committed under `data/paper/` (counts the paper publishes, transcribed and cited)",
    "external": "read in place from `$OG_EXTERNAL_DIR` (`make data` downloads the released files)",
}
_KIND_TITLES = {"lab": "The policy lab (made by this project)", "simulated": "Simulated pools (known truth)",
                "paper": "Counts published in the papers", "external": "Released LLM outcomes (external)"}


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip()


def data_page() -> str:
    """The text of ``data.qmd`` (deterministic: the registry's order and facts only)."""
    from .. import datasets

    reg = datasets.registry()
    missing = sorted(set(reg["name"]) - set(POOL_INPUTS))
    if missing:
        raise ValueError(f"POOL_INPUTS lacks registered pools {missing}: record what they carry")
    lines = [
        "# Data {.unnumbered}",
        "",
        "Every pool the book and the audit can load by name (`oraclegap.datasets.load(name)`, or the name",
        "as `POOL` of any command). This page is generated from the library's registry",
        "(`python -m oraclegap.book pages`; a test fails when it is stale). *Shape* is prompts x members",
        "x responses per prompt and member (k); *inputs* are what a router can read besides the verdicts.",
        "",
        "Chapters run on the embedded pools (lab, simulated, paper counts); the sections that need released",
        "LLM outcomes run where `OG_EXTERNAL_DIR` points at them and say which were skipped otherwise.",
        "The external files are never copied into the project: they are read where they lie.",
        "",
    ]
    for kind in ("lab", "simulated", "paper", "external"):
        rows = reg[reg["kind"] == kind]
        if rows.empty:
            continue
        lines += [f"## {_KIND_TITLES[kind]}", "", f"How to obtain: {OBTAIN[kind]}.", "",
                  "| name | what it is | shape | inputs | released by | licence |", "|---|---|---|---|---|---|"]
        for r in rows.itertuples():
            inputs = ", ".join(POOL_INPUTS[r.name]) or "verdicts only"
            lines.append(f"| `{r.name}` | {_cell(r.description)} | {_cell(r.shape)} | {inputs} | "
                         f"{_cell(r.provenance)} | {_cell(r.license)} |")
        lines.append("")
    return "\n".join(lines)


#: The one record of what each chapter takes from which paper and which question it answers; the
#: preface (``index.qmd``) and the README show it as a table between ``BEGIN``/``END`` markers.
CHAPTERS = {
    "01_theory_checks": ("all three papers",
                         "Do the identities and bounds hold numerically, on known truth and on a real pool?"),
    "02_seed_pool": ("arXiv 2609.32996 §3, App. B-C",
                     "Is an oracle gap among exchangeable seeds more than sampling noise?"),
    "03_cross_dataset": ("arXiv 2609.32996 §4, App. C.4, D",
                         "Do policies trained on different datasets specialise, where do they separate, and can "
                         "a router collect the gap?"),
    "04_certificates": ("Shihab et al. §3-4, App. E, K-P",
                        "Which gaps survive choosing the best model on the same data?"),
    "05_routing_plateau": ("Shihab et al. §7, App. B, G-I, O; arXiv 2607.03436",
                           "How much of a certified gap does a deployable router recover, and how much is "
                           "single-draw luck no committed router can reach?"),
    "06_pool_construction": ("Shihab et al. §5, Thm 8, App. D.7, J, M.3",
                             "Which few models are worth keeping beside a deployed anchor, and does their coverage "
                             "buy router gain?"),
    "07_bring_your_own_pool": ("all three papers, through `oraclegap audit`",
                               "What does the one-command audit say about a pool sampled from a model and adapters, "
                               "a released pool and a long table of verdicts, and how does its verdict move as "
                               "responses are added?"),
}
BEGIN, END = "<!-- generated: chapter table (python -m oraclegap.book pages) -->", "<!-- end of generated table -->"


def _chapter_title(src: Path) -> str:
    for line in src.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^# # (.+?)(\s*\{[^}]*\})?\s*$", line)
        if m:
            return m.group(1).strip()
    raise ValueError(f"{src} has no chapter heading ('# # Title')")


def chapter_table(root: Path) -> str:
    """The chapter table (number, title, papers, question) in the order of ``_quarto.yml``."""
    from .structure import quarto_pages

    rows = ["| chapter | source | question |", "|---|---|---|"]
    for page in quarto_pages(root):
        if not page.is_chapter:
            continue
        stem = Path(page.file).stem
        if stem not in CHAPTERS:
            raise ValueError(f"CHAPTERS has no entry for {stem}: add its papers and question")
        papers, question = CHAPTERS[stem]
        title = _chapter_title(Path(root) / "notebooks" / f"{stem}.py")
        rows.append(f"| {stem[:2]} {title} | {papers} | {question} |")
    return "\n".join(rows)


def _with_table(text: str, table: str, name: str, begin: str = BEGIN, end: str = END) -> str:
    if begin not in text or end not in text:
        raise ValueError(f"{name} has no generated-table markers ({begin} ... {end})")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{table}\n{end}{tail}"


#: The one record of the book's run times (``book build --record-times``), read by the instructors' page.
RUNTIMES = Path("data") / "book" / "runtimes.json"
RT_BEGIN = "<!-- generated: run times (python -m oraclegap.book pages, from data/book/runtimes.json) -->"
RT_END = "<!-- end of generated run times -->"
INSTRUCTORS_PAGE = "instructors.qmd"


def cpu_model() -> str | None:
    """The processor's model name (``/proc/cpuinfo``; else :func:`platform.processor`), or None.

    Recorded beside run times: the same code takes twice as long on one 2-core machine as on
    another, so a time means little without the processor it was measured on."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model") and value.strip():
                    return " ".join(value.split())
    except OSError:
        pass
    return platform.processor().strip() or None


def _cores(r: dict) -> str:
    """``2 cores`` or, where the record names its processor, ``2 cores (Intel(R) Xeon(R) ...)``."""
    return f"{r['cpus']} cores" + (f" ({r['cpu']})" if r.get("cpu") else "")


def record_times(root: Path, result: dict) -> str:
    """Store the chapter times of a build ``result`` (:func:`oraclegap.book.build`'s return) under
    its mode (``small`` or ``full``) in :data:`RUNTIMES`, with the date, the load average and the
    render and total seconds -- only when every chapter executed in that run (cached chapters
    have no time to record). Returns what it did, in words."""
    import datetime
    import os

    from .._io import atomic_write
    from .structure import quarto_pages

    stems = [Path(p.file).stem for p in quarto_pages(root) if p.is_chapter]
    secs = result.get("seconds") or {}
    cached = set(result.get("cached") or [])
    missing = [s for s in stems if s not in secs or s in cached]
    if missing or result.get("student"):
        return f"run times not recorded: {', '.join(missing) or 'student edition'} not executed in this run"
    path = Path(root) / RUNTIMES
    rec = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    mode = "small" if result.get("small") else "full"
    rec[mode] = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
                 "load_average": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(), "cpu": cpu_model(),
                 "chapters": {s: round(float(secs[s]), 1) for s in stems},
                 "render_seconds": round(float(result["render_seconds"]), 1),
                 "total_seconds": round(float(result["total_seconds"]), 1)}
    jobs = result.get("jobs")
    if jobs:  # chapters side by side: the whole build is then shorter than the chapters' sum
        rec[mode]["note"] = ("chapters one at a time" if int(jobs) == 1 else
                             f"chapters {int(jobs)} at a time, so the whole build takes less than the "
                             "chapters' times added up")
    atomic_write(path, json.dumps(rec, indent=1) + "\n")
    return f"{mode} run times recorded in {RUNTIMES}"


#: The audit the instructors' plan runs in class, and the arguments its recorded time is for.
CLASS_AUDIT = ("chen2026-math500", "--small", "--no-report")
AU_BEGIN = "<!-- generated: class audit time (python -m oraclegap.book pages --time-audit) -->"
AU_END = "<!-- end of generated class audit time -->"


def record_audit_time(root: Path, run=None) -> str:
    """Time the class audit (:data:`CLASS_AUDIT`: ``oraclegap audit POOL --out TMP --small
    --no-report`` in a fresh process, as a student runs it) and store its wall seconds, the date,
    the load average and the CPU count under ``audit`` in :data:`RUNTIMES`. ``run(argv) -> seconds``
    replaces the subprocess (tests). A failing audit (e.g. the released data absent) raises
    ``ValueError`` and records nothing. Returns what it did, in words."""
    import datetime
    import os
    import subprocess
    import sys
    import tempfile
    import time

    from .._io import atomic_write

    pool, *flags = CLASS_AUDIT

    def _subprocess(argv):
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ValueError(f"the class audit of {pool} failed (exit {done.returncode}): {tail[0]}")
        return time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "oraclegap.cli", "audit", pool, "--out", str(Path(tmp) / "a"), *flags]
        seconds = float((run or _subprocess)(argv))
    path = Path(root) / RUNTIMES
    rec = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    rec["audit"] = {"pool": pool, "flags": flags,
                    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
                    "load_average": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(), "cpu": cpu_model(),
                    "seconds": round(seconds, 1)}
    atomic_write(path, json.dumps(rec, indent=1) + "\n")
    return f"class audit of {pool}: {seconds:.1f} s, recorded in {RUNTIMES}"


def audit_time_sentence(root: Path) -> str:
    """The instructors' sentence on how long the class audit takes, from :data:`RUNTIMES`."""
    path = Path(root) / RUNTIMES
    rec = json.loads(path.read_text(encoding="utf-8")).get("audit") if path.is_file() else None
    if not rec:
        return ("Its run time is not recorded yet (`python -m oraclegap.book pages --time-audit` "
                "times it); the HTML report adds its rendering.")
    flags = " and ".join(f"`{f}`" for f in rec["flags"])
    cpu = f"{rec['cpu']}; " if rec.get("cpu") else ""
    bare = "--no-report" in rec["flags"]
    return (f"{'Timed without the HTML report' if bare else 'Timed'} (flags {flags}), it took "
            f"{_secs(rec['seconds'])} on {rec['cpus']} CPU cores ({cpu}load average {rec['load_average']}, "
            f"{rec['date']})" + ("; the command above also writes the HTML report, which adds its rendering."
                                 if bare else "."))


def _secs(x) -> str:
    return f"{x:.0f} s" if x < 600 else f"{x / 60:.1f} min"


def runtimes_section(root: Path) -> str:
    """The instructors' run-time text and table from :data:`RUNTIMES` (one column per recorded mode)."""
    path = Path(root) / RUNTIMES
    if not path.is_file():
        raise ValueError(f"{RUNTIMES} is missing: run `python -m oraclegap.book build --force --record-times`")
    rec = json.loads(path.read_text(encoding="utf-8"))
    modes = [m for m in ("small", "full") if m in rec]
    names = {"small": "`--small`", "full": "full size"}
    lines = []
    for m in modes:
        r = rec[m]
        how = "" if r.get("note") is None else f", {r['note']}"
        load = "" if r.get("load_average") is None else f", load average {r['load_average']}"
        lines.append(f"- {names[m]}: {r['date']}, {_cores(r)}{load}{how}; rendering "
                     f"{_secs(r['render_seconds'])}, the whole build {_secs(r['total_seconds'])}.")
    rows = ["| chapter (source) | " + " | ".join(names[m] for m in modes) + " |",
            "|---|" + "---|" * len(modes)]
    from .structure import quarto_pages

    for page in quarto_pages(root):
        if page.is_chapter:
            stem = Path(page.file).stem
            title = _chapter_title(Path(root) / "notebooks" / f"{stem}.py")
            cells = [_secs(rec[m]["chapters"][stem]) if stem in rec[m]["chapters"] else "--" for m in modes]
            rows.append(f"| {title} (`{stem}`) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + "\n".join(rows)


def _generated(root: Path) -> dict[Path, str]:
    root = Path(root)
    table = chapter_table(root)
    out = {root / DATA_PAGE: data_page()}
    from .inventory import INVENTORY_PAGE, inventory_page

    out[root / INVENTORY_PAGE] = inventory_page(root)
    from . import harness_page

    if (root / harness_page.PAGE).is_file():
        out[root / harness_page.PAGE] = harness_page.page_text(root)
    for name in ("index.qmd", "README.md"):
        out[root / name] = _with_table((root / name).read_text(encoding="utf-8"), table, name)
    inst = root / INSTRUCTORS_PAGE
    if inst.is_file() and RT_BEGIN in inst.read_text(encoding="utf-8"):
        out[inst] = _with_table(inst.read_text(encoding="utf-8"), runtimes_section(root), INSTRUCTORS_PAGE,
                                RT_BEGIN, RT_END)
        if AU_BEGIN in out[inst]:
            out[inst] = _with_table(out[inst], audit_time_sentence(root), INSTRUCTORS_PAGE, AU_BEGIN, AU_END)
        from . import params

        if params.BEGIN in out[inst]:
            out[inst] = _with_table(out[inst], params.instructors_table(root), INSTRUCTORS_PAGE,
                                    params.BEGIN, params.END)
    return out


def write_pages(root: Path) -> list[Path]:
    """Rewrite the generated pages under ``root``; returns those whose text changed."""
    from .._io import atomic_write

    changed = []
    for path, text in _generated(root).items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            atomic_write(path, text)
            changed.append(path)
    return changed


def stale_pages(root: Path) -> list[str]:
    """Generated pages whose committed text differs from what the library generates now."""
    return [p.name for p, text in _generated(root).items()
            if not p.is_file() or p.read_text(encoding="utf-8") != text]
