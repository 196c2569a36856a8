"""Benchmark: where the book's Quarto render spends its time, page by page.

The render is the largest single step of a build after the chapters (it runs on one core while
the chapters use two). This script renders the already executed book once more into a temporary
output folder (``_book/`` is left as it is) with a timing wrapper in place of Quarto's pandoc,
and prints for every page the seconds spent inside pandoc (Quarto's Lua filters run there) and,
for the whole render, the wall time, the pandoc share and the rest (Deno: notebook conversion,
HTML post-processing, the book's cross-reference and search passes). With ``--plain`` it also
converts each chapter's markdown with plain pandoc (no Quarto filters), so the ratio Quarto
pandoc / plain pandoc says how much of a page's cost is Quarto's filter chain.

Timings are printed, never asserted. It needs executed chapters (``python -m oraclegap.book
build``) and Quarto (``make quarto``); without them it says so and exits 0.

usage: python bench/bench_render.py [--small] [--plain]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pandoc_binary(quarto: str) -> str | None:
    """The pandoc Quarto runs: $QUARTO_PANDOC, else the one in Quarto's bin/tools folder."""
    if os.environ.get("QUARTO_PANDOC"):
        return os.environ["QUARTO_PANDOC"]
    res = subprocess.run([quarto, "--paths"], capture_output=True, text=True, timeout=120)
    lines = res.stdout.splitlines()
    bin_dir = Path(lines[0]) if lines else Path(quarto).resolve().parent
    for cand in (bin_dir / "tools" / "x86_64" / "pandoc", bin_dir / "tools" / "pandoc",
                 bin_dir / "tools" / "aarch64" / "pandoc"):
        if cand.is_file():
            return str(cand)
    return shutil.which("pandoc")


def _wrapper(folder: Path, pandoc: str, log: Path) -> Path:
    """A pandoc stand-in that runs the real one and appends 'seconds<TAB>output' to ``log``."""
    script = folder / "pandoc"
    script.write_text(
        "#!/usr/bin/env python3\n"
        "import subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        f"rc = subprocess.call([{pandoc!r}] + sys.argv[1:])\n"
        "out = '?'\n"
        "if '--defaults' in sys.argv:\n"
        "    for line in open(sys.argv[sys.argv.index('--defaults') + 1]):\n"
        "        if line.startswith('output-file:'):\n"
        "            out = line.split(':', 1)[1].strip().strip(chr(34) + chr(39))\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(f'{time.perf_counter() - t:.3f}\\t{out}\\n')\n"
        "sys.exit(rc)\n")
    script.chmod(0o755)
    return script


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="render with the reduced-build profile")
    ap.add_argument("--plain", action="store_true", help="also time plain pandoc on each chapter's markdown")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "lib"))
    from oraclegap.book import find_quarto

    quarto = find_quarto(ROOT, install=False, log=lambda *a: None)
    chapters = sorted((ROOT / "chapters").glob("*.ipynb")) if (ROOT / "chapters").is_dir() else []
    if not quarto or not chapters:
        print("bench_render: skipped: " + ("no Quarto (make quarto)" if not quarto
                                           else "no executed chapters (python -m oraclegap.book build)"))
        return 0
    pandoc = _pandoc_binary(quarto.path)
    if pandoc is None:
        print("bench_render: skipped: no pandoc beside Quarto, in $QUARTO_PANDOC or on PATH")
        return 0
    before = _leftovers()
    try:
        return _bench(quarto, pandoc, args)
    finally:  # keep-md leaves each page's markdown (and a site_libs/) beside its source
        for path in _leftovers() - before:
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def _leftovers() -> set[Path]:
    found = set(ROOT.glob("*.html.md")) | set((ROOT / "chapters").glob("*.html.md"))
    return found | ({ROOT / "site_libs"} if (ROOT / "site_libs").exists() else set())


def _bench(quarto, pandoc: str, args) -> int:
    with tempfile.TemporaryDirectory(prefix="og-render-") as tmp:
        tmp = Path(tmp)
        log = tmp / "pandoc.log"
        env = dict(os.environ, QUARTO_PANDOC=str(_wrapper(tmp, pandoc, log)))
        env.pop("QUARTO_PROFILE", None)
        cmd = [quarto.path, "render", "--no-execute", "--output-dir", str(tmp / "out")]
        cmd += ["--profile", "small"] if args.small else []
        if args.plain:
            cmd += ["-M", "keep-md:true"]
        t = time.perf_counter()
        res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        if res.returncode != 0:
            print("bench_render: quarto render failed:\n" + res.stderr[-2000:])
            return 1
        rows = [line.split("\t") for line in log.read_text().splitlines() if line.strip()]
        pages = [(float(s), Path(o).name) for s, o in rows]
        inside = sum(s for s, _ in pages)
        print(f"{'page':<40} {'pandoc s':>9}")
        for s, name in sorted(pages, reverse=True):
            print(f"{name:<40} {s:9.2f}")
        print(f"render wall {wall:.1f} s; inside pandoc {inside:.1f} s ({inside / wall:.0%}); "
              f"the rest (Deno) {wall - inside:.1f} s; {len(pages)} pandoc runs; "
              f"command: {' '.join(shlex.quote(c) for c in cmd[1:])}")
        if args.plain:
            _plain(pandoc, pages, tmp)
    return 0


def _plain(pandoc: str, pages, tmp: Path) -> None:
    """Plain pandoc (markdown -> html, no Quarto filters) on each chapter's kept markdown."""
    by_name = {name: s for s, name in pages}
    for md in sorted((ROOT / "chapters").glob("*.html.md")):
        t = time.perf_counter()
        subprocess.run([pandoc, str(md), "-f", "markdown", "-t", "html", "-o", str(tmp / "plain.html")],
                       capture_output=True)
        plain = time.perf_counter() - t
        quarto_s = by_name.get(md.name[: -len(".md")])
        ratio = f"{quarto_s / plain:5.1f}x" if quarto_s else "   - "
        print(f"{md.name[: -len('.html.md')]:<32} plain pandoc {plain:6.2f} s; with Quarto's filters "
              f"{quarto_s if quarto_s else float('nan'):6.2f} s; ratio {ratio}")


if __name__ == "__main__":
    sys.exit(main())
