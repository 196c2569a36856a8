"""The nbconvert fallback renderer, for machines where no Quarto can be had.

It writes every page ``_quarto.yml`` lists where Quarto would (``_book/index.html``,
``_book/chapters/NN_name.html``, ``_book/PAGE.html``), correct rather than complete:

* chapters go through nbconvert's ``lab`` template; labelled figures and tables get
  "Figure N.k" / "Table N.k" captions (N the chapter's file number), and ``@fig-``/``@tbl-``/
  ``@sec-`` references become links, across pages too;
* ``.qmd`` pages (the preface, front matter) are converted from Markdown after their Quarto
  constructs are rewritten: callout blocks (``::: {.callout-note}``, collapsed or not) become
  titled block quotes, heading attributes are dropped, a ``::: {#refs}`` block becomes the
  list of ``references.bib``;
* every page has a contents/previous/next bar and, when given, a note (the fallback's reason,
  the reduced-build banner).

Everything else Quarto adds (sidebar, search, code folding, themes) is left to Quarto.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

from .structure import (
    BOOK_DIR,
    REF_RE,
    Page,
    cell_options,
    quarto_book,
    quarto_pages,
)

__all__ = ["render_fallback", "callouts_to_quotes", "bib_entries"]

_SEC_HEAD_RE = re.compile(r"^(#+)[ \t]+(.*?)[ \t]*\{#(sec-[A-Za-z0-9_-]+)[^}]*\}[ \t]*$", re.M)
_ATTR_RE = re.compile(r"[ \t]*\{(?:[#.][\w-]+(?:=\"[^\"]*\")?[ \t]*|-[ \t]*)+\}")
_CALLOUT_RE = re.compile(r"^(:{3,})\s*\{\.callout-(\w+)([^}]*)\}\s*$")
_FRONT_RE = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n", re.S)

_CSS = """
<style>
.og-nav{font-family:system-ui,sans-serif;padding:.6em 1em;background:#f4f6f8;border-bottom:1px solid #dde;display:flex;gap:1.5em}
.og-nav a{text-decoration:none;color:#0173b2}
.og-caption{font-family:system-ui,sans-serif;font-size:.92em;color:#333;margin:.3em 0 1.2em 0}
.og-note{font-family:system-ui,sans-serif;background:#fff8e1;border-left:4px solid #de8f05;padding:.5em 1em;margin:1em}
.og-page{max-width:52em;margin:2em auto;font-family:system-ui,sans-serif;line-height:1.5}
.og-page li{margin:.3em 0}
.og-page blockquote{border-left:4px solid #0173b2;margin:1em 0;padding:.2em 1em;background:#f4f8fb}
</style>
"""


def callouts_to_quotes(text: str) -> str:
    """Quarto callout blocks (``::: {.callout-note title="..." collapse="true"}`` ... ``:::``)
    become block quotes headed by their title (or kind); nested fences are kept in the quote."""
    out: list[str] = []
    depth = 0  # open callouts
    fence_stack: list[str] = []
    for line in text.splitlines():
        m = _CALLOUT_RE.match(line)
        if m:
            title = re.search(r'title="([^"]*)"', m.group(3))
            head = title.group(1) if title else m.group(2).capitalize()
            prefix = "> " * depth
            out.append(f"{prefix}> **{head}**")
            out.append(f"{prefix}>")
            fence_stack.append(m.group(1))
            depth += 1
            continue
        if depth and re.match(r"^:{3,}\s*$", line) and line.strip() == fence_stack[-1]:
            fence_stack.pop()
            depth -= 1
            out.append("> " * depth if depth else "")
            continue
        prefix = "> " * depth
        out.append((prefix + line) if line else prefix.rstrip())
    return "\n".join(out)


def bib_entries(path: Path) -> list[dict]:
    """Entries of a BibTeX file as dicts (``key``, ``type`` and lower-cased fields); a small
    parser for the flat ``field = {value}`` entries of ``references.bib``."""
    text = Path(path).read_text(encoding="utf-8")
    entries = []
    for m in re.finditer(r"@(\w+)\s*\{\s*([^,\s]+)\s*,(.*?)\n\}", text, re.S):
        fields = {"type": m.group(1).lower(), "key": m.group(2)}
        for f in re.finditer(r"(\w+)\s*=\s*(\{(?:[^{}]|\{[^{}]*\})*\}|\"[^\"]*\"|\d+)", m.group(3)):
            val = f.group(2).strip()
            if val[0] in "{\"":
                val = val[1:-1]
            fields[f.group(1).lower()] = re.sub(r"[{}]", "", val).strip()
        entries.append(fields)
    return entries


def _bibliography_md(root: Path) -> str:
    bib = Path(root) / "references.bib"
    if not bib.is_file():
        return ""
    items = []
    for e in sorted(bib_entries(bib), key=lambda e: (e.get("author", e["key"]), e.get("year", ""))):
        parts = [e.get("author", ""), f"({e['year']})" if e.get("year") else "", f"*{e.get('title', e['key'])}*.",
                 e.get("journal", "")]
        if e.get("volume"):
            parts.append(e["volume"] + (f"({e['number']})" if e.get("number") else ""))
        if e.get("pages"):
            parts.append(e["pages"].replace("--", "-"))
        items.append("- " + " ".join(p for p in parts if p).strip())
    return "\n".join(items)


def _strip_front(text: str) -> tuple[dict, str]:
    import yaml

    m = _FRONT_RE.match(text)
    if not m:
        return {}, text
    try:
        meta = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError:
        meta = {}
    return (meta if isinstance(meta, dict) else {}), text[m.end():]


class _Labels:
    """Book-wide label table: label -> (page html path, display text)."""

    def __init__(self):
        self.where: dict[str, tuple[str, str]] = {}

    def add(self, label: str, page_html: str, text: str) -> None:
        self.where.setdefault(label, (page_html, text))

    def link(self, text: str, here: str, *, as_html: bool = False) -> str:
        """``text`` with each known ``@label`` as a link (Markdown, or an HTML anchor)."""
        def sub(m):
            lab = m.group(1)
            if lab not in self.where:
                return m.group(0)
            page, shown = self.where[lab]
            href = f"#{lab}" if page == here else f"{os.path.relpath(page, os.path.dirname(here) or '.')}#{lab}"
            return f'<a href="{html.escape(href)}">{shown}</a>' if as_html else f"[{shown}]({href})"

        return REF_RE.sub(sub, text)


def _chapter_labels(nb, chapter: int, page_html: str, labels: _Labels) -> None:
    nfig = ntab = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for m in _SEC_HEAD_RE.finditer(cell.source):
                labels.add(m.group(3), page_html, f"“{_ATTR_RE.sub('', m.group(2)).strip()}”")
        elif cell.cell_type == "code":
            lab = cell_options(cell.source)[0].get("label", "")
            if lab.startswith("fig-"):
                nfig += 1
                labels.add(lab, page_html, f"Figure {chapter}.{nfig}")
            elif lab.startswith("tbl-"):
                ntab += 1
                labels.add(lab, page_html, f"Table {chapter}.{ntab}")


# [text](page.qmd) or [text](../page.qmd#sec-x): Quarto links pages by their sources; the fallback
# writes page.qmd as page.html in the same relative place.
_QMD_LINK_RE = re.compile(r"\]\(((?:\.\./)*[\w./-]*?)\.qmd(#[\w-]+)?\)")


def _markdown(text: str, page_html: str, labels: _Labels) -> str:
    text = callouts_to_quotes(text)  # before the attributes go: {.callout-note} is one
    text = _QMD_LINK_RE.sub(lambda m: f"]({m.group(1)}.html{m.group(2) or ''})", text)
    text = _SEC_HEAD_RE.sub(lambda m: f'<a id="{m.group(3)}"></a>\n\n{m.group(1)} {m.group(2)}', text)
    text = _ATTR_RE.sub("", text)
    return labels.link(text, page_html)


def _prepare_chapter(nb, page_html: str, labels: _Labels):
    """Captions and anchors for labelled cells, links for references, cell options stripped."""
    import nbformat

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _markdown(cell.source, page_html, labels)
            continue
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):  # Markdown emitted by code (readings, folded solutions)
            data = out.get("data", {})
            if isinstance(data.get("text/markdown"), str):
                data["text/markdown"] = _markdown(data["text/markdown"], page_html, labels)
        opts, body = cell_options(cell.source)
        cell.source = body
        tags = set(cell.metadata.get("tags", []))
        if opts.get("echo", "").lower() == "false" or not body.strip():
            tags.add("remove_input")
        if opts.get("include", "").lower() == "false" or opts.get("output", "").lower() == "false":
            tags.add("remove_output")
        cell.metadata["tags"] = sorted(tags)
        lab = opts.get("label", "")
        if lab in labels.where and labels.where[lab][0] == page_html:
            cap = opts.get("fig-cap") or opts.get("tbl-cap") or ""
            caption = (
                f'<div class="og-caption" id="{html.escape(lab)}"><b>{labels.where[lab][1]}</b>: '
                f"{labels.link(html.escape(cap), page_html, as_html=True)}</div>"
            )
            out = nbformat.v4.new_output("display_data", data={"text/html": caption})
            cell.outputs = [out] + list(cell.outputs) if lab.startswith("tbl-") else list(cell.outputs) + [out]
    return nb


def _nav(here: str, links: list[tuple[str, str]]) -> str:
    rel = lambda target: os.path.relpath(target, os.path.dirname(here) or ".")  # noqa: E731
    inner = "".join(f'<a href="{html.escape(rel(h))}">{html.escape(t)}</a>' for t, h in links if h)
    return f'<nav class="og-nav">{inner}</nav>'


def _title_of(nb_or_text, fallback: str) -> str:
    if isinstance(nb_or_text, str):
        sources = [nb_or_text]
    else:
        sources = [c.source for c in nb_or_text.cells if c.cell_type == "markdown"]
    for src in sources:
        for line in src.splitlines():
            if line.startswith("# "):
                return _ATTR_RE.sub("", line[2:]).strip()
    return fallback


def render_fallback(root: Path, executed: list[Path], out_dir: Path | None = None, note: str | None = None) -> Path:
    """Render the pages of ``_quarto.yml`` to HTML without Quarto: executed chapters (those in
    ``executed``) with nbconvert, ``.qmd`` pages from Markdown; returns ``_book/index.html``.
    Chapters not in ``executed`` are listed on the index page as not rendered."""
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
    by_stem = {Path(p).stem: Path(p) for p in executed}
    pages: list[tuple[Page, object, str]] = []  # (page, notebook or markdown text, title)
    labels = _Labels()
    for page in quarto_pages(root):
        if page.is_chapter:
            if Path(page.file).stem not in by_stem:
                continue
            nb = nbformat.read(by_stem[Path(page.file).stem], as_version=4)
            _chapter_labels(nb, page.number, page.html, labels)
            pages.append((page, nb, _title_of(nb, Path(page.file).stem)))
        elif (root / page.file).is_file():
            meta, text = _strip_front((root / page.file).read_text(encoding="utf-8"))
            for m in _SEC_HEAD_RE.finditer(text):
                labels.add(m.group(3), page.html, f"“{_ATTR_RE.sub('', m.group(2)).strip()}”")
            title = meta.get("title") if isinstance(meta.get("title"), str) else _title_of(text, Path(page.file).stem)
            pages.append((page, text, _ATTR_RE.sub("", title).strip()))
    note_html = f'<div class="og-note">{html.escape(note)}</div>' if note else ""
    bibliography = _bibliography_md(root)
    for i, (page, content, title) in enumerate(pages):
        here = page.html
        prev_link = (f"← {pages[i - 1][2]}", pages[i - 1][0].html) if i else ("", "")
        next_link = (f"{pages[i + 1][2]} →", pages[i + 1][0].html) if i + 1 < len(pages) else ("", "")
        header = _nav(here, [("Contents", "index.html"), prev_link, next_link]) + note_html
        target = out_dir / here
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            text = re.sub(r"^:::+\s*\{#refs\}\s*\n:::+\s*$", lambda _m: bibliography, content, flags=re.M)
            body = markdown2html(_markdown(text, here, labels))
            if page.file == "index.qmd":
                items = "\n".join(
                    f'<li><a href="{html.escape(p.html)}">{html.escape(t)}</a></li>' for p, _, t in pages[1:]
                )
                missing = [p.file for p in quarto_pages(root) if p.is_chapter and Path(p.file).stem not in by_stem]
                if missing:
                    items += "".join(f"<li>{html.escape(Path(m).stem)} (not executed yet)</li>" for m in missing)
                body = (
                    f"<h1>{html.escape(str(book.get('title', 'Book')))}</h1>"
                    f"<p><em>{html.escape(str(book.get('subtitle', '')))}</em></p>{body}<h2>Contents</h2><ul>{items}</ul>"
                )
            page_html = (
                f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>{_CSS}</head>"
                f"<body>{header}<div class='og-page'>{body}</div></body></html>"
            )
        else:
            nb = _prepare_chapter(content, here, labels)
            page_html, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
            page_html = re.sub(r"(<body[^>]*>)", lambda m, h=header: m.group(1) + _CSS + h, page_html, count=1)
        target.write_text(page_html, encoding="utf-8")
    if not (out_dir / "index.html").is_file():
        (out_dir / "index.html").write_text(f"<!DOCTYPE html><html><body>{note_html}</body></html>", encoding="utf-8")
    return out_dir / "index.html"
