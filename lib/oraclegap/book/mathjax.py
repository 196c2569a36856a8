"""Math that renders offline: a local MathJax for the Quarto pages.

Quarto's HTML pages load MathJax 3 from a CDN (``cdn.jsdelivr.net/npm/mathjax@3/es5/...``). On
a machine that reaches only the package registries (this project's machines, a classroom
behind a firewall) the pages would then show raw TeX. ``make quarto`` therefore also fetches
MathJax from the npm registry (``npm pack mathjax@VERSION``) into ``.quarto-kit/mathjax/``,
and after every Quarto render :func:`localize` copies its ``es5/`` folder into
``_book/site_libs/mathjax/`` and points each page's script at that copy by a relative path.
Without npm (or without the download) the CDN stays, which is what Quarto does by default and
what readers with internet access get anyway; the build says which.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from .quarto import KIT_DIR

__all__ = ["MATHJAX_VERSION", "CDN_PREFIX", "local_mathjax", "install_mathjax", "localize"]

MATHJAX_VERSION = "3.2.2"
#: What Quarto 1.7 writes for ``html-math-method: mathjax`` (the es5 bundle of MathJax 3).
CDN_PREFIX = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/"
_ENTRY = "tex-chtml-full.js"
#: Folders of es5/ the page never loads: the speech-rule engine (about 4 MB, screen-reader speech).
_SKIP = ("sre",)
_SRC_RE = re.compile(re.escape(CDN_PREFIX) + r"([\w./-]+\.js)")


def local_mathjax(root: Path) -> Path | None:
    """The ``es5`` folder of the MathJax that :func:`install_mathjax` put into ``.quarto-kit/``, if any."""
    es5 = Path(root) / KIT_DIR / "mathjax" / "es5"
    return es5 if (es5 / _ENTRY).is_file() else None


def install_mathjax(root: Path, *, log=print, timeout: float = 180.0) -> tuple[Path | None, str]:
    """Fetch MathJax ``MATHJAX_VERSION`` from the npm registry into ``.quarto-kit/mathjax/``
    (once); returns (the es5 folder or None, what happened). Never raises for a failed download."""
    have = local_mathjax(root)
    if have:
        return have, f"MathJax {MATHJAX_VERSION} in {KIT_DIR}/"
    npm = shutil.which("npm")
    if not npm:
        return None, "no npm to fetch MathJax (pages load it from the CDN)"
    dest = Path(root) / KIT_DIR / "mathjax"
    with tempfile.TemporaryDirectory(prefix="og-mathjax-") as tmp:
        try:
            res = subprocess.run([npm, "pack", f"mathjax@{MATHJAX_VERSION}", "--pack-destination", tmp],
                                 capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"npm pack mathjax failed ({type(exc).__name__}); pages load MathJax from the CDN"
        tgz = next(Path(tmp).glob("mathjax-*.tgz"), None)
        if res.returncode != 0 or tgz is None:
            tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["no output"]
            return None, f"npm pack mathjax failed ({tail[0]}); pages load MathJax from the CDN"
        staging = Path(tmp) / "x"
        with tarfile.open(tgz) as tf:
            members = [m for m in tf.getmembers() if m.name.startswith("package/es5/") and (m.isfile() or m.isdir())]
            tf.extractall(staging, members=members, filter="data")
        if not (staging / "package" / "es5" / _ENTRY).is_file():
            return None, f"the mathjax package has no es5/{_ENTRY}; pages load MathJax from the CDN"
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        shutil.move(str(staging / "package"), part)
        os.replace(part, dest)
    log(f"mathjax: MathJax {MATHJAX_VERSION} from the npm registry into {KIT_DIR}/mathjax/")
    return local_mathjax(root), f"MathJax {MATHJAX_VERSION} installed into {KIT_DIR}/"


def localize(book_dir: Path, es5: Path | None) -> int:
    """Point every page under ``book_dir`` that loads MathJax from the CDN at a copy of ``es5``
    in ``book_dir/site_libs/mathjax/``; returns the number of pages rewritten (0 when ``es5`` is
    None: the CDN stays)."""
    book_dir = Path(book_dir)
    if es5 is None:
        return 0
    target = book_dir / "site_libs" / "mathjax"
    pages = []
    for page in sorted(book_dir.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if CDN_PREFIX in text:
            pages.append((page, text))
    if not pages:
        return 0
    if not (target / _ENTRY).is_file():
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        shutil.copy2(es5 / _ENTRY, target / _ENTRY)
        for sub in es5.iterdir():  # what the bundle loads on demand (fonts, TeX extensions, menu)
            if sub.is_dir() and sub.name not in _SKIP:
                shutil.copytree(sub, target / sub.name)
    for page, text in pages:
        rel = os.path.relpath(target, page.parent).replace(os.sep, "/")
        new = _SRC_RE.sub(lambda m, r=rel: f"{r}/{m.group(1)}", text)
        tmp = page.with_name(page.name + ".og-tmp")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, page)
    return len(pages)
