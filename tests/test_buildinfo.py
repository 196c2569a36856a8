"""The build line (oraclegap._buildinfo, oraclegap.book.buildline): what built a page or an audit,
read from git, the lock file and the installed distributions."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess

import pytest

from oraclegap import _buildinfo
from oraclegap.book import buildline


def _git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin"})


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_state_commit_and_modified(tmp_path):
    assert _buildinfo.git_state(tmp_path) == {"commit": None, "modified": False}  # not a checkout
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("1")
    (tmp_path / _buildinfo.LOCK_FILE).write_text("numpy==2.0 --hash=sha256:00\n")
    _git(tmp_path, "add", "a.txt", _buildinfo.LOCK_FILE)
    _git(tmp_path, "commit", "-q", "-m", "x")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert _buildinfo.git_state(tmp_path) == {"commit": head, "modified": False}
    (tmp_path / "untracked.txt").write_text("build output")  # untracked files are not sources
    assert _buildinfo.git_state(tmp_path)["modified"] is False
    (tmp_path / "a.txt").write_text("2")
    assert _buildinfo.git_state(tmp_path) == {"commit": head, "modified": True}
    info = _buildinfo.build_info(tmp_path, renderer="Quarto 1.7.34", small=True,
                                 now=dt.datetime(2026, 12, 1, 21, 5, tzinfo=dt.timezone.utc))
    line = _buildinfo.build_line(info)
    assert line.startswith(f"built from commit {head[:10]} (modified); lock {info['lock_sha256'][:10]}")
    assert "rendered with Quarto 1.7.34" in line and "2026-12-01 21:05 UTC" in line and line.endswith("(--small)")
    assert f"numpy {_buildinfo.library_versions()['numpy']}" in line and "Python 3." in line


def test_lock_hash_follows_the_file(tmp_path):
    assert _buildinfo.lock_hash(tmp_path) is None
    (tmp_path / _buildinfo.LOCK_FILE).write_text("a==1\n")
    h1 = _buildinfo.lock_hash(tmp_path)
    (tmp_path / _buildinfo.LOCK_FILE).write_text("a==2\n")
    assert len(h1) == 64 and _buildinfo.lock_hash(tmp_path) != h1
    line = _buildinfo.build_line(_buildinfo.build_info(tmp_path))
    assert "built outside a git checkout" in line and "reduced" not in line


def test_missing_library_reads_as_not_installed(monkeypatch):
    monkeypatch.setitem(_buildinfo.LIBRARIES, "nothere", "a-distribution-that-is-not-installed")
    assert _buildinfo.library_versions()["nothere"] == "not installed"


def test_stamp_is_placed_once_and_replaced(tmp_path):
    page = "<html><body><main><p>x</p></main><footer>f</footer></body></html>"
    once = buildline.stamp_html(page, "built from commit abc <&>")
    assert once.count('class="og-build"') == 1 and once.index("og-build") < once.index("</main>")
    assert buildline.page_build_line(once) == "built from commit abc <&>"
    twice = buildline.stamp_html(once, "second")
    assert twice.count('class="og-build"') == 1 and buildline.page_build_line(twice) == "second"
    bare = buildline.stamp_html("<html><body>y</body></html>", "l")
    assert bare.index("og-build") < bare.index("</body>")
    (tmp_path / "site_libs").mkdir()
    (tmp_path / "a.html").write_text(page)
    (tmp_path / "site_libs" / "lib.html").write_text(page)
    assert buildline.stamp_pages(tmp_path, "l") == 1
    assert buildline.page_build_line((tmp_path / "site_libs" / "lib.html").read_text()) is None
    assert buildline.page_build_line("<p>no line</p>") is None
