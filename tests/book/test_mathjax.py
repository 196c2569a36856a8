"""Offline math: the rendered pages load a local MathJax copy instead of the CDN."""

from __future__ import annotations

from oraclegap.book import mathjax


def _fake_es5(tmp_path):
    es5 = tmp_path / ".quarto-kit" / "mathjax" / "es5"
    (es5 / "output" / "chtml" / "fonts").mkdir(parents=True)
    (es5 / "sre").mkdir()
    (es5 / "tex-chtml-full.js").write_text("/* mathjax */")
    (es5 / "output" / "chtml" / "fonts" / "f.woff").write_text("font")
    (es5 / "sre" / "speech.js").write_text("big")
    (es5 / "tex-svg.js").write_text("another bundle")
    return es5


def test_localize_rewrites_cdn_scripts_with_relative_paths(tmp_path):
    es5 = _fake_es5(tmp_path)
    assert mathjax.local_mathjax(tmp_path) == es5
    book = tmp_path / "_book"
    (book / "chapters").mkdir(parents=True)
    src = f'<script src="{mathjax.CDN_PREFIX}tex-chtml-full.js" type="text/javascript"></script>'
    (book / "index.html").write_text(f"<html>{src}</html>")
    (book / "chapters" / "01_a.html").write_text(f"<html>{src}<span class='math inline'>x</span></html>")
    (book / "plain.html").write_text("<html>no math</html>")
    assert mathjax.localize(book, es5) == 2
    assert 'src="site_libs/mathjax/tex-chtml-full.js"' in (book / "index.html").read_text()
    chap = (book / "chapters" / "01_a.html").read_text()
    assert 'src="../site_libs/mathjax/tex-chtml-full.js"' in chap and mathjax.CDN_PREFIX not in chap
    assert (book / "plain.html").read_text() == "<html>no math</html>"
    lib = book / "site_libs" / "mathjax"
    assert (lib / "output" / "chtml" / "fonts" / "f.woff").is_file()  # fonts loaded on demand travel along
    assert not (lib / "sre").exists() and not (lib / "tex-svg.js").exists()  # unused parts stay behind
    assert mathjax.localize(book, es5) == 0  # idempotent: nothing left pointing at the CDN


def test_no_local_copy_keeps_the_cdn(tmp_path):
    book = tmp_path / "_book"
    book.mkdir()
    page = book / "index.html"
    page.write_text(f'<script src="{mathjax.CDN_PREFIX}tex-chtml-full.js"></script>')
    assert mathjax.local_mathjax(tmp_path) is None
    assert mathjax.localize(book, None) == 0
    assert mathjax.CDN_PREFIX in page.read_text()
