"""Executing one chapter: jupytext -> papermill, with its data reads recorded.

The kernel starts with ``oraclegap._datalog`` recording (``IPKernelApp.exec_lines``), so the
cache learns which data files the chapter read without the chapter saying so, and with its
application log at ERROR (ipykernel's harmless "Kernel is running over TCP without
encryption" warning would otherwise be printed once per chapter). After the run, a labelled
figure or table cell keeps only its figure (table) outputs; what the cell printed before or
after -- typically the one-line reading -- moves into unlabelled cells beside it, so Quarto
renders one numbered figure instead of sub-figures "(a)", "(b)".

A chapter answers its question on its first screen with numbers it computes only later: the
outputs of a cell tagged ``og-answer`` (computed where its values exist, e.g. beside the
takeaways) move into the cell tagged ``og-answer-slot`` placed under the opening question
(:func:`lift_answer`).
"""

from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .. import _datalog
from ..report.tables import DOWNLOADS_DIR_ENV
from .structure import cell_options, project_root

__all__ = ["execute_chapter", "error_outputs", "split_float_outputs", "lift_answer", "KERNEL_ARGS"]

ANSWER_TAG, ANSWER_SLOT_TAG = "og-answer", "og-answer-slot"

KERNEL_ARGS = ("--IPKernelApp.log_level=ERROR",)


def _notebook_env() -> None:
    """Environment for kernels: no Agg backend (figures would vanish), a writable MPLCONFIGDIR,
    and OpenMP threads that sleep when idle (``OMP_WAIT_POLICY=PASSIVE`` unless set): chapters
    run side by side, and threads spinning between numba's or torch's parallel regions took the
    cores the other chapter needed (chapter 07 alone: 113 CPU-s spinning, 96 passive)."""
    os.environ.pop("MPLBACKEND", None)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if not os.environ.get("MPLCONFIGDIR"):
        d = Path(tempfile.gettempdir()) / "oraclegap-mplconfig"
        d.mkdir(parents=True, exist_ok=True)
        os.environ["MPLCONFIGDIR"] = str(d)


@contextmanager
def _env(values: dict[str, str]):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _is_image(out) -> bool:
    data = out.get("data", {}) if out.get("output_type") in ("display_data", "execute_result") else {}
    return any(m.startswith("image/") or m == "application/pdf" for m in data)


def _is_table(out) -> bool:
    data = out.get("data", {}) if out.get("output_type") in ("display_data", "execute_result") else {}
    if "<table" in str(data.get("text/html", "")):
        return True
    md = str(data.get("text/markdown", ""))
    return any(line.lstrip().startswith("|") for line in md.splitlines()) or "text/latex" in data


_BLOCK = re.compile(r"^#\|\s*([\w-]+):\s*([>|])[-+]?\s*$")


def flatten_cell_options(nb) -> int:
    """Rewrite every block-scalar cell option (``#| tbl-cap: >-`` over indented ``#|`` lines) as one
    quoted line, in place; returns how many were rewritten. Quarto 1.7 reads multi-line options in
    ``.qmd`` files but not in a notebook's cells, where such a cell renders as a broken div; the
    sources keep the folded form (lines within 100 characters), the executed notebook the flat one."""
    import json

    n = 0
    for cell in nb.cells:
        if cell.get("cell_type") != "code" or "#|" not in cell.source:
            continue
        lines, out, i = cell.source.split("\n"), [], 0
        while i < len(lines):
            m = _BLOCK.match(lines[i])
            if not m:
                out.append(lines[i])
                i += 1
                continue
            parts, i = [], i + 1
            while i < len(lines) and re.match(r"^#\|\s{2,}\S", lines[i]):
                parts.append(lines[i][2:].strip())
                i += 1
            sep = " " if m.group(2) == ">" else "\n"
            out.append(f"#| {m.group(1)}: {json.dumps(sep.join(parts), ensure_ascii=False)}")
            n += 1
        cell.source = "\n".join(out)
    return n


def split_float_outputs(nb) -> int:
    """Give each labelled figure (``fig-``) or table (``tbl-``) cell only its figure or table
    outputs: outputs before the first such output move into an unlabelled cell before it, outputs
    after the last one into an unlabelled cell after it (both ``echo: false``). Returns how many
    cells were split. Cells with error outputs are left alone."""
    import nbformat

    cells, n_split = [], 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            cells.append(cell)
            continue
        label = cell_options(cell.source)[0].get("label", "")
        test = _is_image if label.startswith("fig-") else _is_table if label.startswith("tbl-") else None
        outs = list(cell.get("outputs", []))
        hits = [i for i, o in enumerate(outs) if test and test(o)]
        if not hits or any(o.get("output_type") == "error" for o in outs) or (hits[0] == 0 and hits[-1] == len(outs) - 1):
            cells.append(cell)
            continue
        before, keep, after = outs[: hits[0]], outs[hits[0] : hits[-1] + 1], outs[hits[-1] + 1 :]
        if before:
            cells.append(nbformat.v4.new_code_cell("#| echo: false", outputs=before, metadata={"tags": ["og-split"]}))
        cell.outputs = keep
        cells.append(cell)
        if after:
            cells.append(nbformat.v4.new_code_cell("#| echo: false", outputs=after, metadata={"tags": ["og-split"]}))
        n_split += 1
    if (nb.nbformat, nb.nbformat_minor) < (4, 5):
        for c in cells:  # cell ids arrived with nbformat 4.5
            c.pop("id", None)
    nb.cells = cells
    return n_split


def _tagged(nb, tag: str) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and tag in c.get("metadata", {}).get("tags", [])]


def lift_answer(nb) -> int:
    """Move the outputs of the code cells tagged ``og-answer`` (in order) into the one code cell
    tagged ``og-answer-slot``, so a chapter's first screen shows an answer built from values
    computed further down. Returns how many outputs moved (0 when the notebook has neither tag,
    or the slot would receive an error). Raises ValueError for a notebook with answer cells and
    not exactly one slot, or a slot after an answer cell."""
    answers, slots = _tagged(nb, ANSWER_TAG), _tagged(nb, ANSWER_SLOT_TAG)
    if not answers and not slots:
        return 0
    if len(slots) != 1 or not answers:
        raise ValueError(f"a chapter needs exactly one {ANSWER_SLOT_TAG!r} cell and at least one "
                         f"{ANSWER_TAG!r} cell; it has {len(slots)} and {len(answers)}")
    slot = slots[0]
    if nb.cells.index(slot) > nb.cells.index(answers[0]):
        raise ValueError(f"the {ANSWER_SLOT_TAG!r} cell must come before the {ANSWER_TAG!r} cells")
    outs = [o for c in answers for o in c.get("outputs", [])]
    if any(o.get("output_type") == "error" for o in outs):
        return 0
    slot.outputs = list(slot.get("outputs", [])) + outs
    for c in answers:
        c.outputs = []
    return len(outs)


def error_outputs(nb) -> list[str]:
    """Error outputs of an executed notebook, as short strings."""
    errs = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                errs.append(f"{o.get('ename')}: {o.get('evalue')}")
    return errs


def execute_chapter(
    src: Path,
    out: Path,
    parameters: dict | None = None,
    cwd: Path | None = None,
    timeout: int = 1800,
    datalog: Path | None = None,
    data_roots: tuple = (),
    data_ignore: tuple = (),
) -> Path:
    """Convert one jupytext chapter and execute it with papermill into ``out`` (kernel ``python3``).

    With ``datalog``, the kernel records the data files it reads under ``data_roots`` (and every
    registry file it declares) into that file (:mod:`oraclegap._datalog`). Labelled figure and
    table cells are then split (:func:`split_float_outputs`) and the answer lifted to the first
    screen (:func:`lift_answer`). The executed notebook is written
    even when a cell fails (papermill raises after writing it)."""
    import jupytext
    import nbformat
    import papermill as pm

    src, out = Path(src), Path(out)
    if not src.is_file():
        raise ValueError(f"chapter source {str(src)!r} does not exist")
    _notebook_env()
    nb = jupytext.read(src)
    paired = src.with_suffix(".ipynb")
    try:
        nbformat.write(nb, paired)
    except OSError:  # read-only checkout: execute from a temporary copy
        paired = Path(tempfile.mkdtemp()) / (src.stem + ".ipynb")
        nbformat.write(nb, paired)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = out.with_name(f".tmp-{out.name}")
    args = list(KERNEL_ARGS)
    # The kernel's own settings go to this kernel alone (set inside it before the first cell),
    # never through this process's environment: chapters execute side by side in threads. The
    # chapter's CSV downloads land beside its executed notebook, so a run into another folder
    # (a parameter check, a test) never overwrites the files the book's build copies.
    kernel_env = {DOWNLOADS_DIR_ENV: str(out.parent.resolve())}
    start = ""
    if datalog is not None:
        Path(datalog).write_text("")
        kernel_env |= {
            _datalog.ENV_LOG: str(datalog),
            _datalog.ENV_ROOTS: os.pathsep.join(map(str, data_roots)),
            _datalog.ENV_IGNORE: os.pathsep.join(map(str, data_ignore)),
        }
        start = " or __import__('oraclegap._datalog')._datalog.start()"
    args.append(f"--IPKernelApp.exec_lines=__import__('os').environ.update({kernel_env!r}){start} "
                "and None")
    try:
        pm.execute_notebook(
            str(paired),
            str(tmp_out),
            parameters=dict(parameters or {}),
            kernel_name="python3",
            cwd=str(cwd or project_root(src.parent)),
            progress_bar=False,
            # written once at the end (and on failure), not after every cell: rewriting a
            # megabyte notebook after each of ~150 cells cost seconds per chapter
            request_save_on_cell_execute=False,
            # the kernel is stopped at once when the last cell is done (its outputs are in, and
            # chapters write their files synchronously); the graceful shutdown, in which Python
            # tears down numba, torch and the pools, cost about a second per chapter
            shutdown_kernel="immediate",
            execution_timeout=timeout,
            extra_arguments=args,
        )
    finally:
        if tmp_out.exists():
            executed = nbformat.read(tmp_out, as_version=4)
            flatten_cell_options(executed)
            split_float_outputs(executed)
            lift_answer(executed)
            nbformat.write(executed, tmp_out)
            os.replace(tmp_out, out)  # keep the executed notebook (with its error, if any)
    return out
