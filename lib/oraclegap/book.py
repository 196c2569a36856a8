"""Build and check the book: jupytext -> papermill -> quarto render (or an nbconvert fallback).

``python -m oraclegap.book build [--small] [-p NAME VALUE ...] [--only NN]``
    1. converts each ``notebooks/NN_*.py`` (jupytext py:percent) to ``notebooks/NN_*.ipynb``;
    2. executes it with papermill (kernel ``python3``, parameters injected after the cell
       tagged ``parameters``) into ``chapters/NN_*.ipynb``, from the project root;
    3. renders: ``quarto render`` (execution disabled in ``_quarto.yml``) when the ``quarto``
       command exists, otherwise every executed chapter goes through nbconvert to
       ``_book/NN_*.html`` -- with Quarto's figure/table labels numbered, captions placed and
       ``@fig-``/``@tbl-`` references linked -- plus an ``_book/index.html`` built from
       ``_quarto.yml``'s chapter list. It prints which renderer it used.

``python -m oraclegap.book check``
    opens each rendered page in headless Chromium, saves a screenshot per chapter under
    ``screenshots/`` and fails on pages with missing images or error outputs.

Executed chapters go to ``chapters/`` rather than an underscore folder because Quarto
skips ``_``-prefixed paths when it collects a project.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "project_root",
    "chapter_sources",
    "quarto_chapters",
    "structure_problems",
    "section_labels",
    "cell_options",
    "execute_chapter",
    "build",
    "render_fallback",
    "check_pages",
    "main",
]

CHAPTER_GLOB = "[0-9][0-9]_*.py"
EXECUTED_DIR = "chapters"
BOOK_DIR = "_book"
_REF_RE = re.compile(r"(?<![\w@])@((?:fig|tbl|sec)-[A-Za-z0-9_-]*[A-Za-z0-9])")
_OPT_RE = re.compile(r"^#\|\s*([\w-]+)\s*:\s*(.*?)\s*$")
_SEC_RE = re.compile(r"\{#(sec-[A-Za-z0-9_-]+)[^}]*\}")
_SEC_HEAD_RE = re.compile(r"^(#+)[ \t]+(.*?)[ \t]*\{#(sec-[A-Za-z0-9_-]+)[^}]*\}[ \t]*$", re.M)
# [text](page.qmd) or [text](../page.qmd) -> page.html: the fallback writes every page into one folder
_QMD_LINK_RE = re.compile(r"\]\((?:\.\./)*([\w-]+)\.qmd(#[\w-]+)?\)")
_ATTR_RE = re.compile(r"[ \t]*\{(?:[#.][\w-]+[ \t]*)+\}")  # Quarto heading attributes: {#sec-x .unnumbered}


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: cwd) holding ``_quarto.yml``."""
    here = Path(start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "_quarto.yml").is_file():
            return d
    raise ValueError(f"no _quarto.yml found at or above {str(here)!r}; run from the project folder")


def chapter_sources(root: Path) -> list[Path]:
    """The chapter sources ``notebooks/NN_*.py``, in order."""
    return sorted((Path(root) / "notebooks").glob(CHAPTER_GLOB))


def _load_yaml(path: Path) -> dict:
    import yaml

    try:
        return yaml.safe_load(Path(path).read_text()) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path} is not valid YAML: {exc}") from None


def _flatten_chapters(items) -> list[str]:
    out: list[str] = []
    for item in items or []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            if "href" in item:
                out.append(item["href"])
            out.extend(_flatten_chapters(item.get("chapters")))
    return out


def quarto_book(root: Path) -> dict:
    """The ``book`` section of ``_quarto.yml``."""
    cfg = _load_yaml(Path(root) / "_quarto.yml")
    book = cfg.get("book")
    if not isinstance(book, dict):
        raise ValueError("_quarto.yml has no 'book' section")
    return book


def quarto_chapters(root: Path) -> list[str]:
    """Chapter entries of ``_quarto.yml`` (parts flattened), e.g. ``chapters/01_theory_checks.ipynb``."""
    return _flatten_chapters(quarto_book(root).get("chapters"))


def _read_cells(src: Path):
    import jupytext

    return jupytext.read(src).cells


def cell_options(source: str) -> tuple[dict, str]:
    """Split Quarto cell options (leading ``#| key: value`` lines) from a code cell's source."""
    opts: dict[str, str] = {}
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        m = _OPT_RE.match(lines[i])
        if not m:
            break
        val = m.group(2)
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
            val = val[1:-1]
        opts[m.group(1)] = val
        i += 1
    return opts, "\n".join(lines[i:])


def structure_problems(root: Path) -> list[str]:
    """Mismatches between ``_quarto.yml`` and ``notebooks/``, and cross-references without labels."""
    root = Path(root)
    problems: list[str] = []
    sources = chapter_sources(root)
    expected = [f"{EXECUTED_DIR}/{p.stem}.ipynb" for p in sources]
    pages = [c for c in quarto_chapters(root) if c.endswith(".qmd")]
    listed = [c for c in quarto_chapters(root) if not c.endswith(".qmd")]
    if "index.qmd" not in quarto_chapters(root):
        problems.append("_quarto.yml does not list index.qmd")
    for c in pages:
        if not (root / c).is_file():
            problems.append(f"_quarto.yml lists {c} but the file does not exist")
    for c in listed:
        if c not in expected:
            problems.append(f"_quarto.yml lists {c} but notebooks/ has no matching chapter source")
    for c in expected:
        if c not in listed:
            problems.append(f"notebooks/ has {c.split('/')[-1][:-6]}.py but _quarto.yml does not list {c}")
    if [c for c in listed if c in expected] != [c for c in expected if c in listed]:
        problems.append("_quarto.yml lists the chapters out of their numeric order")
    book_sections = section_labels(root)  # @sec- references may point into another chapter or page
    for page in pages:
        path = root / page
        if path.is_file():
            for ref in sorted(set(_REF_RE.findall(path.read_text(encoding="utf-8")))):
                if not (ref.startswith("sec-") and ref in book_sections):
                    problems.append(f"{page}: @{ref} has no matching label")
    for src in sources:
        labels: dict[str, int] = {}
        refs: set[str] = set()
        for cell in _read_cells(src):
            if cell.cell_type == "code":
                opts, _ = cell_options(cell.source)
                if "label" in opts:
                    labels[opts["label"]] = labels.get(opts["label"], 0) + 1
                    if opts["label"].startswith("fig-") and "fig-cap" not in opts:
                        problems.append(f"{src.name}: figure {opts['label']} has no fig-cap")
                    if opts["label"].startswith("tbl-") and "tbl-cap" not in opts:
                        problems.append(f"{src.name}: table {opts['label']} has no tbl-cap")
            elif cell.cell_type == "markdown":
                refs.update(_REF_RE.findall(cell.source))
                for sec in _SEC_RE.findall(cell.source):
                    labels[sec] = labels.get(sec, 0) + 1
        for lab, count in labels.items():
            if count > 1:
                problems.append(f"{src.name}: label {lab} is defined {count} times")
        for ref in sorted(refs - set(labels)):
            if ref.startswith("sec-") and ref in book_sections:
                continue
            problems.append(f"{src.name}: @{ref} has no matching label")
    return problems


def section_labels(root: Path) -> dict[str, tuple[str, str]]:
    """Every ``{#sec-...}`` heading of the book: label -> (page stem, heading text), over the
    chapter sources and the ``.qmd`` pages that ``_quarto.yml`` lists."""
    root = Path(root)
    out: dict[str, tuple[str, str]] = {}
    texts = [(p.stem, "\n".join(c.source for c in _read_cells(p) if c.cell_type == "markdown")) for p in chapter_sources(root)]
    for c in quarto_chapters(root):
        if c.endswith(".qmd") and (root / c).is_file():
            texts.append((Path(c).stem, (root / c).read_text(encoding="utf-8")))
    for stem, text in texts:
        for m in _SEC_HEAD_RE.finditer(text):
            out.setdefault(m.group(3), (stem, _ATTR_RE.sub("", m.group(2)).strip()))
    return out


# ---------------------------------------------------------------------------- execution
def _notebook_env() -> None:
    """Environment for kernels: no Agg backend (figures would vanish), a writable MPLCONFIGDIR."""
    os.environ.pop("MPLBACKEND", None)
    if not os.environ.get("MPLCONFIGDIR"):
        d = Path(tempfile.gettempdir()) / "oraclegap-mplconfig"
        d.mkdir(parents=True, exist_ok=True)
        os.environ["MPLCONFIGDIR"] = str(d)


def execute_chapter(src: Path, out: Path, parameters: dict | None = None, cwd: Path | None = None, timeout: int = 1800) -> Path:
    """Convert one jupytext chapter and execute it with papermill into ``out`` (kernel ``python3``)."""
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
    try:
        pm.execute_notebook(
            str(paired),
            str(tmp_out),
            parameters=dict(parameters or {}),
            kernel_name="python3",
            cwd=str(cwd or project_root(src.parent)),
            progress_bar=False,
            execution_timeout=timeout,
        )
    finally:
        if tmp_out.exists():
            os.replace(tmp_out, out)  # keep the executed notebook (with its error, if any)
    return out


def error_outputs(nb) -> list[str]:
    """Error outputs of an executed notebook, as short strings."""
    errs = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                errs.append(f"{o.get('ename')}: {o.get('evalue')}")
    return errs


# ---------------------------------------------------------------------------- fallback renderer
_CSS = """
<style>
.og-nav{font-family:system-ui,sans-serif;padding:.6em 1em;background:#f4f6f8;border-bottom:1px solid #dde;display:flex;gap:1.5em}
.og-nav a{text-decoration:none;color:#0173b2}
.og-caption{font-family:system-ui,sans-serif;font-size:.92em;color:#333;margin:.3em 0 1.2em 0}
.og-note{font-family:system-ui,sans-serif;background:#fff8e1;border-left:4px solid #de8f05;padding:.5em 1em;margin:1em}
.og-index{max-width:52em;margin:2em auto;font-family:system-ui,sans-serif;line-height:1.5}
.og-index li{margin:.3em 0}
summary.og-fold{cursor:pointer;color:#555;font-family:system-ui,sans-serif;font-size:.85em;margin:.2em 0 .4em 0}
</style>
"""


@dataclass
class _Numbering:
    chapter: int
    labels: dict = field(default_factory=dict)  # label -> "Figure 1.2"


def _callouts_to_quotes(text: str) -> str:
    """Quarto callout blocks (``::: {.callout-note}``) become titled block quotes (a collapsed
    callout's title says that Quarto shows it folded)."""
    out, inside = [], False
    for line in text.splitlines():
        m = re.match(r"^:::+\s*\{\.callout-(\w+)([^}]*)\}\s*$", line)
        if m and not inside:
            folded = " (folded in the Quarto book)" if 'collapse="true"' in m.group(2) else ""
            out.append(f"> **{m.group(1).capitalize()}**{folded}")
            out.append(">")
            inside = True
        elif inside and re.match(r"^:::+\s*$", line):
            inside = False
        elif inside:
            out.append("> " + line if line else ">")
        else:
            out.append(line)
    return "\n".join(out)


def _prepare_for_fallback(nb, chapter: int, book_sections: dict | None = None):
    """Number labelled figures/tables, add captions and anchors, link references (``@sec-`` ones
    also into other pages, from ``book_sections``), strip options; callouts in Markdown outputs
    become block quotes as in Markdown cells."""
    import nbformat

    num = _Numbering(chapter)
    elsewhere = dict(book_sections or {})
    nfig = ntab = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for m in _SEC_HEAD_RE.finditer(cell.source):
                num.labels[m.group(3)] = f"“{_ATTR_RE.sub('', m.group(2)).strip()}”"
        if cell.cell_type != "code":
            continue
        opts, _ = cell_options(cell.source)
        lab = opts.get("label", "")
        if lab.startswith("fig-"):
            nfig += 1
            num.labels[lab] = f"Figure {chapter}.{nfig}"
        elif lab.startswith("tbl-"):
            ntab += 1
            num.labels[lab] = f"Table {chapter}.{ntab}"
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            text = _callouts_to_quotes(cell.source)
            text = _SEC_HEAD_RE.sub(lambda m: f'<a id="{m.group(3)}"></a>\n\n{m.group(1)} {m.group(2)}', text)
            text = _ATTR_RE.sub("", text)

            def link(m):
                lab = m.group(1)
                if lab in num.labels:
                    return f"[{num.labels[lab]}](#{lab})"
                if lab in elsewhere:
                    stem, title = elsewhere[lab]
                    return f"[“{title}”]({stem}.html#{lab})"
                return m.group(0)

            cell.source = _QMD_LINK_RE.sub(lambda m: f"]({m.group(1)}.html{m.group(2) or ''})", _REF_RE.sub(link, text))
            continue
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if isinstance(data.get("text/markdown"), str) and ":::" in data["text/markdown"]:
                data["text/markdown"] = _callouts_to_quotes(data["text/markdown"])
        opts, body = cell_options(cell.source)
        cell.source = body
        tags = set(cell.metadata.get("tags", []))
        if opts.get("echo", "").lower() == "false":
            tags.add("remove_input")
        if opts.get("include", "").lower() == "false" or opts.get("output", "").lower() == "false":
            tags.add("remove_output")
        cell.metadata["tags"] = sorted(tags)
        lab = opts.get("label", "")
        if lab in num.labels:
            cap = opts.get("fig-cap") or opts.get("tbl-cap") or ""
            caption = (
                f'<div class="og-caption" id="{html.escape(lab)}"><b>{num.labels[lab]}</b>: '
                f"{html.escape(cap)}</div>"
            )
            out = nbformat.v4.new_output("display_data", data={"text/html": caption})
            if lab.startswith("tbl-"):
                cell.outputs = [out] + list(cell.outputs)
            else:
                cell.outputs = list(cell.outputs) + [out]
    return nb


def _nav(links: list[tuple[str, str]]) -> str:
    inner = "".join(f'<a href="{html.escape(h)}">{html.escape(t)}</a>' for t, h in links if h)
    return f'<nav class="og-nav">{inner}</nav>'


# Quarto's ``code-fold: true``: code cells start folded under "Show the code".
_FOLD_JS = """
<script>
document.querySelectorAll('.jp-CodeCell .jp-Cell-inputWrapper').forEach(function (el) {
  var d = document.createElement('details'); var s = document.createElement('summary');
  s.textContent = 'Show the code'; s.className = 'og-fold'; d.appendChild(s);
  el.parentNode.insertBefore(d, el); d.appendChild(el);
});
</script>
"""


def _inject(body_html: str, header: str) -> str:
    page = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + _CSS + header, body_html, count=1)
    return page.replace("</body>", _FOLD_JS + "</body>", 1)


def _chapter_title(nb, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return _ATTR_RE.sub("", line[2:]).strip()
    return fallback


_MATHJAX = ('<script>window.MathJax={tex:{inlineMath:[["$","$"],["\\\\(","\\\\)"]]}};</script>'
            '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js"></script>')


def _render_qmd_pages(root: Path, out_dir: Path, sections: dict) -> list[tuple[str, str]]:
    """Render the ``.qmd`` pages of ``_quarto.yml`` other than index.qmd to HTML (fallback)."""
    from nbconvert.filters import markdown2html

    done = []
    for c in quarto_chapters(root):
        if not c.endswith(".qmd") or c == "index.qmd" or not (root / c).is_file():
            continue
        text = re.sub(r"\A---\n.*?\n---\n", "", (root / c).read_text(encoding="utf-8"), flags=re.S)
        title = next((_ATTR_RE.sub("", ln[2:]).strip() for ln in text.splitlines() if ln.startswith("# ")), Path(c).stem)
        text = _callouts_to_quotes(text)
        text = _SEC_HEAD_RE.sub(lambda m: f'<a id="{m.group(3)}"></a>\n\n{m.group(1)} {m.group(2)}', text)
        text = _ATTR_RE.sub("", text)

        def link(m):
            lab = m.group(1)
            if lab in sections:
                stem, head = sections[lab]
                return f"[“{head}”]({stem}.html#{lab})"
            return m.group(0)

        text = _QMD_LINK_RE.sub(lambda m: f"]({m.group(1)}.html{m.group(2) or ''})", _REF_RE.sub(link, text))
        page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>{_CSS}{_MATHJAX}"
                f"</head><body>{_nav([('Contents', 'index.html')])}<div class='og-index'>{markdown2html(text)}</div></body></html>")
        (out_dir / f"{Path(c).stem}.html").write_text(page, encoding="utf-8")
        done.append((Path(c).stem, title))
    return done


def render_fallback(root: Path, executed: list[Path], out_dir: Path | None = None, note: str | None = None) -> Path:
    """Render executed chapters to HTML with nbconvert and write an index page from ``_quarto.yml``."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbconvert.filters import markdown2html
    from traitlets.config import Config

    root = Path(root)
    out_dir = Path(out_dir or root / BOOK_DIR)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = Config()
    cfg.TagRemovePreprocessor.enabled = True
    cfg.TagRemovePreprocessor.remove_input_tags = {"remove_input"}
    cfg.TagRemovePreprocessor.remove_all_outputs_tags = {"remove_output"}
    exporter = HTMLExporter(config=cfg, template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    book = quarto_book(root)
    order = [Path(c).stem for c in quarto_chapters(root) if not c.endswith(".qmd")]
    by_stem = {Path(p).stem: Path(p) for p in executed}
    pages = [(stem, by_stem[stem]) for stem in order if stem in by_stem]
    sections = section_labels(root) if (root / "notebooks").is_dir() else {}
    front = _render_qmd_pages(root, out_dir, sections)
    titles = {}
    for i, (stem, path) in enumerate(pages):
        nb = nbformat.read(path, as_version=4)
        chapter = int(stem[:2]) if stem[:2].isdigit() else i + 1
        titles[stem] = _chapter_title(nb, stem)
        nb = _prepare_for_fallback(nb, chapter, sections)
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": titles[stem]}})
        prev_link = (f"← {titles.get(pages[i - 1][0], pages[i - 1][0])}", f"{pages[i - 1][0]}.html") if i else ("", "")
        nxt = pages[i + 1][0] if i + 1 < len(pages) else None
        next_link = (f"{nxt} →", f"{nxt}.html") if nxt else ("", "")
        header = _nav([("Contents", "index.html"), prev_link, next_link])
        (out_dir / f"{stem}.html").write_text(_inject(body, header), encoding="utf-8")
    # index page from index.qmd and the chapter list
    index_md = ""
    qmd = root / "index.qmd"
    if qmd.is_file():
        text = qmd.read_text()
        text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
        index_md = _QMD_LINK_RE.sub(lambda m: f"]({m.group(1)}.html{m.group(2) or ''})", _callouts_to_quotes(_ATTR_RE.sub("", text)))
    items = "\n".join(f'<li><a href="{stem}.html">{html.escape(titles[stem])}</a></li>' for stem, _ in pages)
    if front:
        items = "</ol><ul>" + "".join(f'<li><a href="{stem}.html">{html.escape(t)}</a></li>' for stem, t in front) + "</ul><ol>" + items
    title = html.escape(str(book.get("title", "Book")))
    subtitle = html.escape(str(book.get("subtitle", "")))
    note_html = f'<div class="og-note">{html.escape(note)}</div>' if note else ""
    page = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>{_CSS}</head><body>"
        f"<div class='og-index'><h1>{title}</h1><p><em>{subtitle}</em></p>{note_html}"
        f"{markdown2html(index_md)}<h2>Chapters</h2><ol>{items}</ol></div></body></html>"
    )
    (out_dir / "index.html").write_text(page, encoding="utf-8")
    return out_dir / "index.html"


# ---------------------------------------------------------------------------- build
def build(root: Path | None = None, *, small: bool = False, parameters: dict | None = None, only: list[str] | None = None, renderer: str = "auto") -> dict:
    """Execute every chapter and render the book; returns a summary dict (raises on failure)."""
    import nbformat
    from tqdm.auto import tqdm

    root = project_root(root)
    problems = structure_problems(root)
    if problems and only:
        print("warning: the book's structure has problems:\n  " + "\n  ".join(problems), file=sys.stderr)
    elif problems:
        raise ValueError("the book's structure has problems:\n  " + "\n  ".join(problems))
    params = dict(parameters or {})
    if small:
        params["SMALL"] = True
    sources = chapter_sources(root)
    if only:
        sources = [s for s in sources if any(s.name.startswith(o) for o in only)]
        if not sources:
            raise ValueError(f"--only {only} matches no chapter in notebooks/")
    executed, failures, times = [], [], {}
    for src in tqdm(sources, desc="chapters", unit="chapter"):
        out = root / EXECUTED_DIR / f"{src.stem}.ipynb"
        t0 = time.perf_counter()
        try:
            execute_chapter(src, out, params, cwd=root)
        except Exception as exc:  # papermill raises its own error types; report and go on
            failures.append(f"{src.name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        times[src.stem] = time.perf_counter() - t0
        if out.exists():
            errs = error_outputs(nbformat.read(out, as_version=4))
            if errs and not any(f.startswith(src.name) for f in failures):
                failures.append(f"{src.name}: {errs[0]}")
            executed.append(out)
        print(f"  {src.stem}: {times[src.stem]:.1f} s", flush=True)
    if failures:
        raise RuntimeError("chapters failed:\n  " + "\n  ".join(failures))
    all_executed = sorted((root / EXECUTED_DIR).glob("*.ipynb"))
    quarto = shutil.which("quarto")
    if renderer == "quarto" or (renderer == "auto" and quarto):
        if not quarto:
            raise ValueError("renderer='quarto' but the quarto command is not on PATH")
        subprocess.run([quarto, "render", "--no-execute"], cwd=root, check=True)
        used = "quarto"
    else:
        render_fallback(
            root,
            all_executed,
            note="Rendered with the nbconvert fallback: the quarto command was not found. "
            "With Quarto installed, `make book` renders the same executed chapters as a Quarto book.",
        )
        used = "nbconvert fallback"
    print(f"book: rendered with {used} into {root / BOOK_DIR}/ ({len(all_executed)} chapters)")
    return {"renderer": used, "executed": [str(p) for p in executed], "seconds": times}


# ---------------------------------------------------------------------------- check
def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def page_problems(path: Path) -> list[str]:
    """Static checks of a rendered page: error outputs, images whose source is missing."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    problems = []
    if "Traceback (most recent call last)" in text or re.search(r'class="[^"]*(output_error|cell-output-error|jp-RenderedText[^"]*stderr)', text):
        if "Traceback" in text or "Error" in text:
            problems.append(f"{path.name}: contains an error output")
    for src in re.findall(r'<img[^>]*\ssrc="([^"]*)"', text):
        if src.startswith("data:"):
            if len(src) < 64:
                problems.append(f"{path.name}: an embedded image is empty")
        elif src.startswith(("http://", "https://")):
            continue
        elif not (Path(path).parent / src.split("#")[0].split("?")[0]).is_file():
            problems.append(f"{path.name}: image {src} is missing")
    return problems


def check_pages(root: Path | None = None, shots: str = "screenshots") -> list[str]:
    """Screenshot every rendered chapter in headless Chromium; return the problems found."""
    root = project_root(root)
    book = root / BOOK_DIR
    if not (book / "index.html").is_file():
        return [f"{book}/index.html does not exist; run `make book` first"]
    browser = _chromium()
    if not browser:
        return ["no Chromium found: install Debian's `chromium` (apt-get install chromium) and rerun"]
    out = root / shots
    out.mkdir(exist_ok=True)
    problems = []
    pages = ["index.html"] + [f"{Path(c).stem}.html" for c in quarto_chapters(root) if c != "index.qmd"]
    for page in pages:
        path = book / page
        if not path.is_file():
            problems.append(f"{page}: not rendered")
            continue
        problems.extend(page_problems(path))
        shot = out / (Path(page).stem + ".png")
        with tempfile.TemporaryDirectory() as profile:
            cmd = [
                browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={profile}", "--hide-scrollbars", "--window-size=1280,2400",
                f"--screenshot={shot}", path.resolve().as_uri(),
            ]
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if res.returncode != 0 or not shot.is_file() or shot.stat().st_size < 1000:
            problems.append(f"{page}: Chromium could not take a screenshot ({res.stderr.strip()[-200:]})")
        else:
            print(f"  {page}: screenshot {shot.relative_to(root)}")
    return problems


# ---------------------------------------------------------------------------- CLI
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m oraclegap.book", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="execute every chapter and render the book")
    b.add_argument("--small", action="store_true", help="run every chapter with SMALL=True")
    b.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"), default=[],
                   help="a papermill parameter for every chapter (VALUE parsed as JSON when possible)")
    b.add_argument("--only", action="append", help="chapter number prefix to run, e.g. 01 (repeatable)")
    b.add_argument("--renderer", choices=("auto", "quarto", "fallback"), default="auto")
    sub.add_parser("check", help="screenshot rendered pages in headless Chromium and check them")
    sub.add_parser("structure", help="check _quarto.yml against notebooks/ and cross-references")
    args = ap.parse_args(argv)
    if args.cmd == "build":
        params = {}
        for name, value in args.parameter:
            try:
                params[name] = json.loads(value)
            except json.JSONDecodeError:
                params[name] = value
        try:
            build(small=args.small, parameters=params, only=args.only, renderer=args.renderer)
        except (ValueError, RuntimeError) as exc:
            print(f"book build failed: {exc}", file=sys.stderr)
            return 1
        return 0
    if args.cmd == "structure":
        problems = structure_problems(project_root())
    else:
        problems = check_pages()
    for p in problems:
        print(f"PROBLEM: {p}")
    print("ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
