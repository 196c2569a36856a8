"""The book's structure: ``_quarto.yml`` against ``notebooks/`` and the pages it lists.

``_quarto.yml`` lists the pages of the book: ``index.qmd``, Markdown pages (``.qmd``: front
matter, references), and one executed notebook ``chapters/NN_name.ipynb`` per chapter source
``notebooks/NN_name.py``, flat or grouped under ``part:`` entries, in ``chapters:`` or
``appendices:``. It lists only chapters whose source exists (Quarto refuses a book whose pages
are missing); a chapter that arrives later is added together with its notebook.

Quarto 1.7 numbers the numbered pages of ``chapters:`` consecutively (``bookRenderItems`` in
its ``book-config.ts``; no option sets a chapter's number), so chapter numbers equal file
numbers exactly when every page other than a chapter is unnumbered (``{.unnumbered}`` on its
title or first heading, or listed under ``appendices:``) and no chapter number is skipped.
:func:`structure_problems` reports numbered non-chapter pages as problems;
:func:`numbering_notes` reports chapters whose number waits for a missing earlier chapter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CHAPTER_GLOB",
    "EXECUTED_DIR",
    "BOOK_DIR",
    "Page",
    "project_root",
    "chapter_sources",
    "quarto_config",
    "quarto_book",
    "quarto_pages",
    "quarto_chapters",
    "chapter_source",
    "cell_options",
    "page_is_numbered",
    "structure_problems",
    "numbering_notes",
]

CHAPTER_GLOB = "[0-9][0-9]_*.py"
EXECUTED_DIR = "chapters"
BOOK_DIR = "_book"
REF_RE = re.compile(r"(?<![\w@])@((?:fig|tbl|sec|eq)-[A-Za-z0-9_-]*[A-Za-z0-9])")
_OPT_RE = re.compile(r"^#\|\s*([\w-]+)\s*:\s*(.*?)\s*$")
_OPT_MORE_RE = re.compile(r"^#\|\s{2,}(\S.*?)\s*$")  # a continuation line of a YAML block scalar
_ID_RE = re.compile(r"\{#((?:sec|fig|tbl|eq)-[A-Za-z0-9_-]+)[^}]*\}")
_HEADING_RE = re.compile(r"^#{1,6}[ \t]+(.*?)[ \t]*$", re.M)
_FRONT_RE = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n", re.S)
_CHAPTER_RE = re.compile(rf"^{EXECUTED_DIR}/(\d\d)_[^/]+\.ipynb$")


@dataclass(frozen=True)
class Page:
    """One page of ``_quarto.yml``: its file, the list it is in, and the part it belongs to."""

    file: str
    section: str = "chapters"  # "chapters" | "appendices"
    part: str | None = None

    @property
    def is_chapter(self) -> bool:
        """An executed chapter notebook ``chapters/NN_name.ipynb``."""
        return bool(_CHAPTER_RE.match(self.file))

    @property
    def number(self) -> int | None:
        """The chapter's file number (NN), None for other pages."""
        m = _CHAPTER_RE.match(self.file)
        return int(m.group(1)) if m else None

    @property
    def html(self) -> str:
        """Where Quarto (and the fallback) write the page, relative to ``_book/``."""
        return str(Path(self.file).with_suffix(".html"))


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


def chapter_source(root: Path, page: Page | str) -> Path:
    """The jupytext source ``notebooks/NN_name.py`` of an executed chapter entry."""
    file = page.file if isinstance(page, Page) else page
    return Path(root) / "notebooks" / (Path(file).stem + ".py")


def _load_yaml(path: Path) -> dict:
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a YAML mapping, got {type(data).__name__}")
    return data


def quarto_config(root: Path) -> dict:
    """``_quarto.yml`` as a dict."""
    return _load_yaml(Path(root) / "_quarto.yml")


def quarto_book(root: Path) -> dict:
    """The ``book`` section of ``_quarto.yml``."""
    book = quarto_config(root).get("book")
    if not isinstance(book, dict):
        raise ValueError("_quarto.yml has no 'book' section")
    return book


def _walk(items, section: str, part: str | None, out: list[Page]) -> None:
    for item in items or []:
        if isinstance(item, str):
            out.append(Page(item, section, part))
        elif isinstance(item, dict):
            if "part" in item:
                # a part is a title or a .qmd page of its own, with chapters under it
                label = str(item["part"])
                if label.endswith((".qmd", ".md")):
                    out.append(Page(label, section, label))
                _walk(item.get("chapters"), section, label, out)
            else:
                if "href" in item:
                    out.append(Page(str(item["href"]), section, part))
                elif "file" in item:
                    out.append(Page(str(item["file"]), section, part))
                _walk(item.get("chapters"), section, part, out)


def quarto_pages(root: Path) -> list[Page]:
    """Every page ``_quarto.yml`` lists, in book order (``chapters:`` then ``appendices:``)."""
    book = quarto_book(root)
    out: list[Page] = []
    _walk(book.get("chapters"), "chapters", None, out)
    _walk(book.get("appendices"), "appendices", None, out)
    return out


def quarto_chapters(root: Path) -> list[str]:
    """Files ``_quarto.yml`` lists (parts flattened), e.g. ``chapters/01_theory_checks.ipynb``."""
    return [p.file for p in quarto_pages(root)]


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
        if val in (">", ">-", "|", "|-"):  # a block scalar over the following indented "#|" lines
            parts = []
            while i + 1 < len(lines) and _OPT_MORE_RE.match(lines[i + 1]):
                i += 1
                parts.append(_OPT_MORE_RE.match(lines[i]).group(1))
            val = (" " if val[0] == ">" else "\n").join(parts)
        elif len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
            val = val[1:-1]
        opts[m.group(1)] = val
        i += 1
    return opts, "\n".join(lines[i:])


def _read_cells(src: Path):
    import jupytext

    return jupytext.read(src).cells


def _markdown_of(root: Path, page: Page) -> tuple[dict, str]:
    """(front matter, text) of a page: a .qmd/.md file, or the markdown cells of a chapter source."""
    import yaml

    if page.is_chapter:
        src = chapter_source(root, page)
        cells = _read_cells(src)
        meta = {}
        text = "\n\n".join(c.source for c in cells if c.cell_type == "markdown")
        return meta, text
    text = (Path(root) / page.file).read_text(encoding="utf-8")
    m = _FRONT_RE.match(text)
    meta = {}
    if m:
        try:
            meta = yaml.safe_load(m.group(1)) or {}
        except yaml.YAMLError:
            meta = {}
        text = text[m.end():]
    return (meta if isinstance(meta, dict) else {}), text


def _strip_code_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def page_is_numbered(root: Path, page: Page) -> bool:
    """Whether Quarto gives the page a chapter number: its front-matter title, else its first
    heading, lacks ``.unnumbered`` (Quarto's ``isNumberedChapter``). Appendix pages are counted
    apart and never shift chapter numbers; they are reported as unnumbered here."""
    if page.section == "appendices":
        return False
    meta, text = _markdown_of(root, page)
    title = meta.get("title")
    if isinstance(title, str):
        return ".unnumbered" not in title and "-}" not in title
    m = _HEADING_RE.search(_strip_code_blocks(text))
    if not m:
        return True
    attrs = re.search(r"\{([^}]*)\}\s*$", m.group(1))
    return not (attrs and (".unnumbered" in attrs.group(1) or re.search(r"(^|\s)-(\s|$)", attrs.group(1))))


def _labels_and_refs(root: Path, page: Page) -> tuple[dict[str, int], set[str], list[str]]:
    """Labels defined on a page (with counts), references it makes, and caption problems."""
    labels: dict[str, int] = {}
    refs: set[str] = set()
    problems: list[str] = []
    name = Path(page.file).name
    if page.is_chapter:
        src = chapter_source(root, page)
        name = src.name
        cells = _read_cells(src)
        if not cells or cells[0].cell_type != "markdown" or not re.match(r"#[ \t]", cells[0].source):
            problems.append(
                f"{name}: the first cell must be Markdown opening with the chapter's '# Title' (Quarto takes the "
                "chapter title from it; otherwise the title becomes a numbered section and every number shifts)"
            )
        for cell in cells:
            if cell.cell_type == "code":
                opts, _ = cell_options(cell.source)
                lab = opts.get("label", "")
                if lab:
                    labels[lab] = labels.get(lab, 0) + 1
                    if lab.startswith("fig-") and "fig-cap" not in opts:
                        problems.append(f"{name}: figure {lab} has no fig-cap")
                    if lab.startswith("tbl-") and "tbl-cap" not in opts:
                        problems.append(f"{name}: table {lab} has no tbl-cap")
            elif cell.cell_type == "markdown":
                refs.update(REF_RE.findall(cell.source))
                for lab in _ID_RE.findall(cell.source):
                    labels[lab] = labels.get(lab, 0) + 1
    else:
        _, text = _markdown_of(root, page)
        for lab in _ID_RE.findall(text) + re.findall(r"^#\|\s*label:\s*(\S+)", text, re.M):
            labels[lab] = labels.get(lab, 0) + 1
        refs.update(REF_RE.findall(_strip_code_blocks(text)))
    return labels, refs, problems


def structure_problems(root: Path) -> list[str]:
    """What would break the book: ``_quarto.yml`` against ``notebooks/`` and the listed pages,
    numbered pages that shift chapter numbers, and cross-references without labels.

    * every page ``_quarto.yml`` lists exists (a chapter entry: its ``notebooks/`` source), and
      ``index.qmd`` comes first;
    * every chapter source is listed, once, and chapters appear in numeric order;
    * a page that is not a chapter is unnumbered (or an appendix), so chapter numbers follow
      file numbers;
    * every ``@fig-``/``@tbl-``/``@sec-`` reference names a label of its own page or of another
      page of the book; no label is defined twice on one page; labelled figures and tables have
      captions;
    * a chapter opens with a Markdown cell holding its ``# Title``.
    """
    root = Path(root)
    problems: list[str] = []
    pages = quarto_pages(root)
    files = [p.file for p in pages]
    if not files or files[0] != "index.qmd":
        problems.append("_quarto.yml does not list index.qmd as its first page")
    for f in sorted({f for f in files if files.count(f) > 1}):
        problems.append(f"_quarto.yml lists {f} more than once")
    sources = chapter_sources(root)
    expected = [f"{EXECUTED_DIR}/{p.stem}.ipynb" for p in sources]
    present: list[Page] = []
    for page in pages:
        if page.is_chapter:
            if page.file not in expected:
                problems.append(
                    f"_quarto.yml lists {page.file} but notebooks/ has no {Path(page.file).stem}.py "
                    "(list a chapter only once its source exists)"
                )
                continue
        elif page.file.endswith(".ipynb"):
            problems.append(f"_quarto.yml lists {page.file}; executed chapters are {EXECUTED_DIR}/NN_name.ipynb")
            continue
        elif not (root / page.file).is_file():
            problems.append(f"_quarto.yml lists {page.file}, which does not exist")
            continue
        present.append(page)
    for c in expected:
        if c not in files:
            problems.append(f"notebooks/ has {Path(c).stem}.py but _quarto.yml does not list {c}")
    listed_chapters = [p.file for p in pages if p.is_chapter and p.file in expected]
    if listed_chapters != sorted(listed_chapters):
        problems.append("_quarto.yml lists the chapters out of their numeric order")
    for page in present:
        if not page.is_chapter and page_is_numbered(root, page):
            problems.append(
                f"{page.file} would get a chapter number from Quarto and shift every later chapter's "
                "number; add {.unnumbered} to its title or first heading, or list it under appendices"
            )
    present += [Page(c) for c in expected if c not in files]  # unlisted chapters are checked too
    per_page = {p.file: _labels_and_refs(root, p) for p in present}
    book_labels: set[str] = set()
    for labels, _, _ in per_page.values():
        book_labels.update(labels)
    for page in present:
        labels, refs, caption_problems = per_page[page.file]
        name = chapter_source(root, page).name if page.is_chapter else page.file
        problems.extend(caption_problems)
        for lab, count in sorted(labels.items()):
            if count > 1:
                problems.append(f"{name}: label {lab} is defined {count} times")
        for ref in sorted(refs - book_labels):
            problems.append(f"{name}: @{ref} has no matching label")
    return problems


def numbering_notes(root: Path) -> list[str]:
    """Chapters whose Quarto number differs from their file number because an earlier chapter
    does not exist yet (e.g. chapter 04 is numbered 3 until chapter 03 arrives)."""
    root = Path(root)
    notes = []
    n = 0
    for page in quarto_pages(root):
        if page.section != "chapters":
            continue
        try:
            numbered = page_is_numbered(root, page)
        except (OSError, ValueError):
            continue
        if not numbered:
            continue
        n += 1
        if page.is_chapter and page.number != n:
            missing = [f"{k:02d}" for k in range(1, page.number) if not any(
                p.number == k for p in quarto_pages(root) if p.is_chapter)]
            why = f"until chapter(s) {', '.join(missing)} exist" if missing else "(numbered pages before it)"
            notes.append(f"{Path(page.file).stem} is numbered {n} by Quarto {why}")
    return notes
