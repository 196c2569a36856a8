"""Ctrl-C while the command starts ends with "interrupted" and status 130, never a traceback."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from oraclegap import audit

LIB = str(Path(audit.__file__).parents[2])


ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([LIB, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def _commands() -> list[list[str]]:
    out = [[sys.executable, "-m", "oraclegap.cli"]]
    script = Path(sys.executable).parent / "oraclegap"
    if script.is_file() and os.access(script, os.X_OK):
        out.append([str(script)])
    return out


def _loaded(pid: int, lib: str) -> bool:
    try:
        return lib in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc to see when numpy is being loaded")
@pytest.mark.parametrize("command", _commands(), ids=lambda c: Path(c[-1]).name)
def test_ctrl_c_while_the_command_starts_is_one_line_and_130(tmp_path, command):
    """SIGINT while numpy and pandas load (the first heavy imports), and at fixed early times:
    'interrupted' on stderr, status 130, never a traceback."""
    np.save(tmp_path / "v.npy", np.ones((4, 2, 2), dtype=np.uint8))
    argv = [*command, "coverage", str(tmp_path / "v.npy")]
    runs = []
    for lib in ("_multiarray_umath", "pandas/_libs"):  # the moment the library's shared object is mapped
        for _ in range(2):
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=tmp_path)
            t0 = time.time()
            while not _loaded(proc.pid, lib) and proc.poll() is None and time.time() - t0 < 60:
                time.sleep(0.001)
            proc.send_signal(signal.SIGINT)
            runs.append((lib, proc.wait(timeout=120), *proc.communicate()))
    for delay in (0.05, 0.1, 0.2, 0.3, 0.5):
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=tmp_path)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        runs.append((delay, proc.wait(timeout=120), *proc.communicate()))
    for when, rc, _out, err in runs:
        if isinstance(when, float) and "Traceback" in err and "oraclegap/cli.py" not in err:
            # on a loaded machine a fixed delay can fall inside the interpreter's own start-up, before
            # any line of the command runs: Python's traceback then has no frame of the CLI
            continue
        assert "Traceback" not in err, (when, err)
        if rc == 0:  # finished before the signal came (a fast machine): nothing to check
            continue
        assert rc == 130 and re.fullmatch(r"oraclegap( coverage)?: interrupted\n", err), (when, rc, err)
