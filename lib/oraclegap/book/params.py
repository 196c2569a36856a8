"""Parameters the book tells a reader to change, with the values that are tested, and ``check-params``, which executes every listed change at ``--small`` and runs the prose checks on it.

:data:`PARAMETERS` is the one table of them: for each chapter and parameter (or parameters changed
together) the documented range, the changes that are tested -- at least the two ends of the range,
and every value an exercise tells a reader to pass -- and what a student sees. The instructors'
page shows it (:func:`instructors_table`, written by ``python -m oraclegap.book pages``), and a
test checks that every ``-p NAME VALUE`` an exercise or that page gives is one of its changes.

``python -m oraclegap.book check-params [--only NN] [--force] [--jobs N]`` executes each chapter
with ``SMALL = True`` and one change at a time into ``.cache/check-params/`` (never into
``chapters/``), runs :func:`oraclegap.book.prose.executed_problems` on the result, checks that the
chapter kept every value it was given (a chapter that overwrites a parameter with ``SMALL`` makes
the change a no-op), prints a table (chapter, change, seconds, problems) and exits 1 when any run
has a problem. A run is skipped when the execution cache (:mod:`.cache`: the chapter source, the
library, the parameters, the environment, the dependency lock, the data the run read) says its
last result is still valid; a change that needs the released data is skipped, with the reason,
when ``OG_EXTERNAL_DIR`` does not hold it.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .._io import atomic_write
from . import cache
from .structure import chapter_sources, project_root

__all__ = [
    "Param",
    "PARAMETERS",
    "SCRATCH",
    "BEGIN",
    "END",
    "Run",
    "change_label",
    "parse_value",
    "parameter_defaults",
    "planned_changes",
    "instructors_table",
    "exercise_changes",
    "check_params",
    "report_table",
    "add_arguments",
    "run_command",
]

#: where check-params executes the chapters (inside the project, hidden: no chapter reads it)
SCRATCH = Path(".cache") / "check-params"
BEGIN = "<!-- generated: parameters worth changing (python -m oraclegap.book pages, from oraclegap.book.params) -->"
END = "<!-- end of generated parameters -->"
#: the tag of the cell check-params appends to a chapter: it prints the parameters' final values
CHECK_TAG = "og-check-params"


@dataclasses.dataclass(frozen=True)
class Param:
    """One row of the parameters table.

    ``chapter``: the chapter's number prefix ("01"); ``names``: the parameters of its parameters
    cell that the row changes; ``span``: the documented range, in words; ``changes``: the tested
    changes, each a ``{name: value}`` for ``-p NAME VALUE`` (at least the two ends of ``span``);
    ``shows``: what a student sees; ``external``: a change has an effect only with the released
    data under ``OG_EXTERNAL_DIR``, so it is skipped without it."""

    chapter: str
    names: tuple[str, ...]
    span: str
    changes: tuple[dict, ...]
    shows: str
    external: bool = False

    def __post_init__(self):
        if not re.fullmatch(r"\d\d", self.chapter):
            raise ValueError(f"chapter must be a two-digit chapter prefix such as '01', got {self.chapter!r}")
        if not self.names or not self.changes:
            raise ValueError(f"{self.chapter} {self.names}: a row needs parameter names and changes")
        for change in self.changes:
            if not change or set(change) - set(self.names):
                raise ValueError(f"{self.chapter} {self.names}: change {change!r} must set only {self.names}")


PARAMETERS: tuple[Param, ...] = (
    Param("01", ("K",), "4 to 64", ({"K": 4}, {"K": 64}),
          "the manufactured gap of an equal-rate pool shrinks with $k$ (Exercise 2 passes 64)"),
    Param("01", ("M",), "2 to 10", ({"M": 2}, {"M": 10}),
          "the manufactured gap grows with the number of members $M$"),
    Param("01", ("TOY_TAU",), "0.25 to 1", ({"TOY_TAU": 0.25}, {"TOY_TAU": 1.0}),
          "$L$, $D$ and the break-even error of the toy pool move with the threshold (Exercise 1)"),
    Param("02", ("K",), "9 to 64", ({"K": 9}, {"K": 64}),
          "every test at fewer or more responses per prompt (the first $k$ of the 64-response "
          "replication; the vote comparison needs at least `VOTE_R` of them)"),
    Param("02", ("M",), "3 to 5", ({"M": 3},),
          "the seed pool's first $M$ seeds: the null gap grows with pool size (Exercise 1 passes 3)"),
    Param("02", ("N_POWER_REPS",), "2 to 24", ({"N_POWER_REPS": 2}, {"N_POWER_REPS": 24}),
          "power against diffuse gaps, and how Monte Carlo intervals shrink with more replicates"),
    Param("02", ("POOL",), "a registry name, a pool directory or a file",
          ({"POOL": "lab-seed-secondary"}, {"POOL": "chen2026-math500"}),
          "every test on another pool (the second needs the released data)", external=True),
    Param("03", ("PAIR_SEED",), "1 to 2", ({"PAIR_SEED": 2},),
          "which seed pair separates where (Exercise 1); seed 1 is the default"),
    Param("03", ("PLANT",), "one to three planted successes",
          ({"PLANT": [1]}, {"PLANT": [1, 2, 3]}),
          "how many planted successes a router needs to collect a gap (Exercise 3 passes [1, 2, 3])"),
    Param("03", ("RETRAIN_SEEDS", "RETRAIN_STEPS"), "one or two new seeds; 40 to 150 GRPO steps",
          ({"RETRAIN_SEEDS": [101, 102]}, {"RETRAIN_SEEDS": [101], "RETRAIN_STEPS": 150}),
          "a lab pool retrained with new seeds and the main comparison rerun on it (Exercise 4; its "
          "solution gives the time it took)"),
    Param("04", ("ALPHA",), "0.01 to 0.10", ({"ALPHA": 0.01}, {"ALPHA": 0.1}),
          "wider or narrower intervals, and how many pilot gaps are certified (Exercise 3 passes 0.1)"),
    Param("04", ("M_SIM",), "4 to 10", ({"M_SIM": 4}, {"M_SIM": 10}),
          "selection among more members moves the naive interval's coverage (with 2 members the "
          "chapter's opening claim fails and the chapter stops; 16 takes minutes)"),
    Param("04", ("P_BEST",), "0.3 to 0.9", ({"P_BEST": 0.3}, {"P_BEST": 0.9}),
          "the coverage grid at another accuracy of the best member"),
    Param("04", ("TIE_GRID",), "leads from 0 to 0.3",
          ({"TIE_GRID": [0.0, 0.02]}, {"TIE_GRID": [0.0, 0.1, 0.3]}),
          "how a clear leader makes the naive interval nearly valid"),
    Param("04", ("N_GRID",), "25 to 1600 items",
          ({"N_GRID": [25, 50]}, {"N_GRID": [100, 1600]}),
          "coverage at more items per sample (Exercise 1 passes [100, 1600])"),
    Param("05", ("TAU_K10",), "0.5 to 0.8", ({"TAU_K10": 0.8},),
          "the RouterDC ten-sample pools at another coverage threshold (Exercise 1 passes 0.8)",
          external=True),
    Param("05", ("MAX_PROMPTS",), "100 to 400 prompts with `--small`, any number at full size",
          ({"MAX_PROMPTS": 100},),
          "every real pool subsampled for a faster run, with wider intervals", external=True),
    Param("06", ("TOPIC_SD",), "0 to 1", ({"TOPIC_SD": 0}, {"TOPIC_SD": 0.5}),
          "a simulated pool with less model-by-topic complementarity, and how greedy construction "
          "and the baselines compare on it (Exercise 1 passes 0.5; at 2 the simulated router "
          "realises more than half of the coverage and the chapter's opening-answer check stops "
          "it)"),
    Param("06", ("M_SIM",), "4 to 10", ({"M_SIM": 4}, {"M_SIM": 10}),
          "the same comparison with fewer or more models"),
    Param("06", ("EXERCISE_ANCHOR",), "weakest, strongest, or a model index",
          ({"EXERCISE_ANCHOR": "strongest"}, {"EXERCISE_ANCHOR": 3}),
          "greedy beside another fixed anchor (Exercise 2)"),
    Param("06", ("WORST_SCALES",), "grid weights from 1 to 1000",
          ({"WORST_SCALES": [1, 2]}, {"WORST_SCALES": [1, 1000]}),
          "the worst case's ratio falling towards its limit (Exercise 3 passes [1, 1000])"),
    Param("07", ("ADAPTERS", "N_LIVE", "K_LIVE"),
          "two or three of the lab's adapters, 8 to 48 prompts, 2 to 16 responses",
          ({"ADAPTERS": ["primary-light-s1", "secondary-light-s1"], "N_LIVE": 8, "K_LIVE": 2},
           {"ADAPTERS": ["primary-light-s3", "primary-light-s4", "primary-light-s5"], "N_LIVE": 48,
            "K_LIVE": 16}),
          "the live rollouts on other lab adapters (a secondary seed among them), more prompts or "
          "responses, and the audit's verdict on them"),
    Param("07", ("K_GRID", "LAB_POOL", "LAB_K64"),
          "responses from 2 to 64; the primary (default) or the secondary seed pool",
          ({"K_GRID": [2, 64]},
           {"K_GRID": [2, 4, 8, 16, 32, 64], "LAB_POOL": "lab-seed-secondary",
            "LAB_K64": "lab-secondary-k64"}),
          "at which number of responses the verdict changes, on the primary or the secondary seed "
          "pool"),
)


# ---------------------------------------------------------------------------- the table
def _value_text(value) -> str:
    """A value as a reader types it after ``-p NAME`` (read back by :func:`parse_value`): a list
    or mapping as JSON in single quotes, which a shell keeps whole both on the command line and
    inside ``make book BOOK_ARGS="..."``."""
    if isinstance(value, str):
        return value
    text = json.dumps(value)
    return shlex.quote(text) if isinstance(value, (list, dict)) else text


def change_label(change: dict) -> str:
    """``-p NAME VALUE`` for each parameter of a change, in the order given."""
    return " ".join(f"-p {name} {_value_text(value)}" for name, value in change.items())


def _parameters_cell(src: Path):
    from .structure import _read_cells

    cells = [c for c in _read_cells(Path(src)) if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{Path(src).name}: expected one cell tagged 'parameters', found {len(cells)}")
    return cells[0]


def parameter_defaults(src: Path) -> dict:
    """``{name: default}`` of a chapter's parameters cell, as papermill reads it; a default that is
    not a Python literal maps to ``...``."""
    from papermill.translators import PythonTranslator

    out = {}
    for p in PythonTranslator.inspect(_parameters_cell(src)):
        try:
            out[p.name] = ast.literal_eval(p.default)
        except (ValueError, SyntaxError):
            out[p.name] = ...
    return out


def _same(a, b) -> bool:
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(b, sort_keys=True, default=repr)


def _selected(root: Path, only: Sequence[str] | None) -> list[Path]:
    sources = chapter_sources(root)
    if only:
        sources = [s for s in sources if any(s.name.startswith(o) for o in only)]
        if not sources:
            raise ValueError(f"--only {list(only)} matches no chapter in notebooks/")
    return sources


def planned_changes(root: Path, only: Sequence[str] | None = None,
                    table: Sequence[Param] = PARAMETERS) -> list[tuple[Path, Param, dict]]:
    """(chapter source, row, change) for every change of ``table`` on the selected chapters, in
    book order, without the changes that equal the chapter's defaults (the ordinary build runs
    those). Raises ``ValueError`` for a row whose chapter or parameter does not exist."""
    sources = {s.name[:2]: s for s in chapter_sources(root)}
    wanted = {s.name[:2] for s in _selected(root, only)}
    out = []
    for row in table:
        src = sources.get(row.chapter)
        if src is None:
            raise ValueError(f"the parameters table names chapter {row.chapter}, which notebooks/ lacks")
        defaults = parameter_defaults(src)
        missing = [n for n in row.names if n not in defaults]
        if missing:
            raise ValueError(f"{src.name}: the parameters table names {missing}, not in its parameters cell")
        if row.chapter not in wanted:
            continue
        out += [(src, row, ch) for ch in row.changes
                if not all(_same(v, defaults[n]) for n, v in ch.items())]
    return sorted(out, key=lambda t: t[0].name)


def instructors_table(root: Path, table: Sequence[Param] = PARAMETERS) -> str:
    """The instructors' page's table of parameters worth changing, from ``table``: chapter,
    parameter, the tested changes with the documented range, and what students see."""
    from .pages import _chapter_title

    rows = ["| chapter | parameter | tested with `--small` (range) | what students see |", "|---|---|---|---|"]
    sources = {s.name[:2]: s for s in chapter_sources(root)}
    for row in table:
        title = _chapter_title(sources[row.chapter])
        tested = ", ".join(f"`{change_label(ch)}`" for ch in row.changes)
        names = ", ".join(f"`{n}`" for n in row.names)
        rows.append(f"| {row.chapter} {title} | {names} | {tested} ({row.span}) | {row.shows} |")
    return "\n".join(rows)


_P_OPTION = re.compile(r"`(?:[^`]*?\s)??((?:-p\s+[A-Z_][A-Z0-9_]*\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*)+)`")
_ONE = re.compile(r"-p\s+([A-Z_][A-Z0-9_]*)\s+(\"[^\"]*\"|'[^']*'|[^\s`]+)")
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def parse_value(text: str):
    """The value of ``-p NAME VALUE`` as the book passes it to papermill: ``text`` read as JSON
    (``64``, ``0.1``, ``"[1, 2]"``, ``'["a", "b"]'``), else as YAML the way papermill's ``-y``
    reads it (``[a, b]``, ``['a', 'b']``, ``True``, ``.5``: a list whose quotes a shell or
    ``make BOOK_ARGS="..."`` removed still arrives as a list), else the text itself (``strongest``,
    ``lab-seed-secondary``; also a YAML value that is no JSON value, such as a date)."""
    import yaml

    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        value = yaml.safe_load(text)
        json.dumps(value, allow_nan=True)
    except (yaml.YAMLError, TypeError, ValueError):
        return text
    return text if value is None and text.strip() not in ("~", "null", "Null", "NULL") else value


def exercise_changes(text: str) -> list[dict]:
    """Every change a text tells a reader to pass: each code span, and each line of a fenced code
    block, holding ``-p NAME VALUE`` options, as ``{name: value}`` (each value without its shell
    quotes, read by :func:`parse_value` as the book CLI reads it)."""
    def one(options: str) -> dict:
        return {m.group(1): parse_value(m.group(2).strip("\"'")) for m in _ONE.finditer(options)}

    fenced = _FENCE.findall(text)
    out = [one(span.group(1)) for span in _P_OPTION.finditer(_FENCE.sub("", text))]
    return out + [one(line) for block in fenced for line in block.splitlines() if _ONE.search(line)]


# ---------------------------------------------------------------------------- running
@dataclasses.dataclass
class Run:
    """One executed (or cached, or skipped) change: the chapter's stem, the change, the seconds
    the execution took (when it ran: now or when it was cached), and what the checks found."""

    chapter: str
    change: dict
    seconds: float | None = None
    cached: bool = False
    skipped: str | None = None
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def label(self) -> str:
        return change_label(self.change)

    @property
    def ok(self) -> bool:
        return not self.problems


def _slug(change: dict) -> str:
    text = "_".join(f"{k}-{_value_text(v)}" for k, v in change.items())
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "", text)[:60]
    return f"{safe}-{hashlib.sha256(json.dumps(change, sort_keys=True).encode()).hexdigest()[:8]}"


def _check_cell(names: Sequence[str]) -> str:
    """The cell appended to a chapter: it prints the final value of each parameter as JSON."""
    return (f'\n\n# %% tags=["{CHECK_TAG}"]\n'
            f'print("{CHECK_TAG} " + __import__("json").dumps('
            f'{{n: globals().get(n, "<unset>") for n in {list(names)!r}}}, default=repr))\n')


def _final_values(nb: dict) -> dict | None:
    for cell in nb.get("cells", []):
        if CHECK_TAG in cell.get("metadata", {}).get("tags", []):
            for o in cell.get("outputs", []):
                text = "".join(o.get("text", "")) if o.get("output_type") == "stream" else ""
                if text.startswith(CHECK_TAG + " "):
                    return json.loads(text[len(CHECK_TAG) + 1:])
    return None


def overwritten(change: dict, final: dict | None) -> list[str]:
    """The parameters of ``change`` whose final value in the executed chapter (``final``, printed
    by the appended cell) differs from the value given, each as a sentence."""
    if final is None:
        return ["the chapter stopped before its last cell: its parameters' final values are unknown"]
    return [f"{n} was given {json.dumps(v)} but ended as {json.dumps(final.get(n))} (the chapter "
            "overwrote it, so the change does nothing)"
            for n, v in change.items() if not _same(v, final.get(n))]


def _run_one(root: Path, src: Path, row: Param, change: dict, *, scratch: Path, force: bool,
             keys: set[str], say: Callable[[str], None]) -> Run:
    """Execute ``src`` with SMALL and ``change`` (unless its cache is valid) and check it."""
    import nbformat

    from .build import _environment_key, _library_dir, execute_recorded
    from .prose import executed_problems

    run = Run(src.stem, dict(change))
    if row.external:
        from .. import datasets

        if not datasets.external_dir().is_dir() or not any(datasets.external_dir().iterdir()):
            run.skipped = f"needs the released data (OG_EXTERNAL_DIR={datasets.external_dir()})"
            return run
    folder = root / scratch / src.stem / _slug(change)
    folder.mkdir(parents=True, exist_ok=True)
    code = folder / "source.py"
    text = src.read_text(encoding="utf-8").rstrip("\n") + _check_cell(list(parameter_defaults(src)))
    if not code.is_file() or code.read_text(encoding="utf-8") != text:
        atomic_write(code, text)
    out, record = folder / "executed.ipynb", folder / "run.json"
    params = {"SMALL": True, **change}
    static = cache.static_key(code, _library_dir(), params, _environment_key(), lock=cache.lock_key(root))
    reasons = ["--force"] if force else cache.stale_reasons(out, static, root)
    if not reasons and record.is_file():
        run.cached, run.seconds = True, json.loads(record.read_text(encoding="utf-8")).get("seconds")
        say(f"  {src.stem} {run.label}: cached (source, library, parameters and data unchanged)")
    else:
        say(f"  {src.stem} {run.label}: executing ({'; '.join(reasons) or 'no run record'})")
        failure, run.seconds = execute_recorded(code, out, params, static, root, log=folder / ".datalog",
                                                name=f"{src.stem} {run.label}", say=say)
        atomic_write(record, json.dumps({"chapter": src.stem, "change": change, "seconds": run.seconds}))
        if failure and not out.is_file():
            run.problems.append(f"did not execute: {failure}")
    if out.is_file():
        nb = nbformat.read(out, as_version=4)
        run.problems += executed_problems(nb, keys) + overwritten(change, _final_values(nb))
    say(f"  {src.stem} {run.label}: {run.seconds or 0:.1f} s, "
        f"{len(run.problems) or 'no'} problem{'' if len(run.problems) == 1 else 's'}")
    return run


def check_params(root: Path | None = None, *, only: Sequence[str] | None = None, force: bool = False,
                 jobs: int | None = None, table: Sequence[Param] = PARAMETERS, scratch: Path = SCRATCH,
                 progress: bool = True) -> list[Run]:
    """Execute every change of ``table`` on the selected chapters (``only``: number prefixes) at
    ``--small`` into ``root/scratch`` and check each result; returns one :class:`Run` per change,
    in book order. ``jobs`` chapters run side by side (default: the book build's
    :func:`.build.default_jobs`); ``force`` ignores the cache."""
    from concurrent.futures import ThreadPoolExecutor

    from tqdm.auto import tqdm

    from .build import _say, default_jobs
    from .prose import code_keys

    root = project_root(root)
    todo = planned_changes(root, only, table)
    keys = code_keys()
    n_jobs = max(1, min(int(jobs or default_jobs()), len(todo) or 1))
    say = _say if progress else (lambda msg: None)
    runs: list[Run | None] = [None] * len(todo)
    with tqdm(total=len(todo), desc=f"check-params ({n_jobs} at a time)", unit="run",
              disable=not progress) as bar:
        def one(i: int) -> None:
            src, row, change = todo[i]
            runs[i] = _run_one(root, src, row, change, scratch=Path(scratch), force=force, keys=keys, say=say)
            bar.update(1)

        if n_jobs == 1:
            for i in range(len(todo)):
                one(i)
        else:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                list(pool.map(one, range(len(todo))))
    return [r for r in runs if r is not None]


def report_table(runs: Sequence[Run]) -> str:
    """The runs as a plain-text table: chapter, change, seconds (``cached`` when the result came
    from the cache, with the seconds its execution took), and problems (one line each)."""
    rows = [("chapter", "change", "seconds", "problems")]
    for r in runs:
        secs = "skipped" if r.skipped else (f"{r.seconds:.1f}" if r.seconds is not None else "-")
        if r.cached:
            secs += " (cached)"
        first = r.skipped or (r.problems[0] if r.problems else "none")
        rows.append((r.chapter, r.label, secs, first))
        rows += [("", "", "", p) for p in r.problems[1:]]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3]
                     for row in rows)


# ---------------------------------------------------------------------------- CLI
def add_arguments(parser) -> None:
    """The options of ``python -m oraclegap.book check-params``."""
    parser.add_argument("--only", action="append", help="chapter number prefix to check, e.g. 01 (repeatable)")
    parser.add_argument("--force", action="store_true", help="execute every change, cached or not")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="chapters executed side by side (default: as the book build)")
    parser.add_argument("--clean", action="store_true", help=f"remove {SCRATCH}/ first")


def run_command(args) -> int:
    """Run check-params for parsed ``args``; print the table; 0 when every run is clean, 1 when
    a run has a problem, 2 on bad input."""
    try:
        root = project_root()
        if args.clean:
            shutil.rmtree(root / SCRATCH, ignore_errors=True)
        t0 = time.perf_counter()
        runs = check_params(root, only=args.only, force=args.force, jobs=args.jobs)
    except ValueError as exc:
        print(f"check-params: {exc}", file=sys.stderr)
        return 2
    print(report_table(runs))
    bad = [r for r in runs if r.problems]
    done = [r for r in runs if not r.skipped]
    print(f"check-params: {len(done)} change(s) checked ({sum(r.cached for r in done)} from the cache), "
          f"{len(runs) - len(done)} skipped, {len(bad)} with problems; {time.perf_counter() - t0:.0f} s")
    return 1 if bad else 0
