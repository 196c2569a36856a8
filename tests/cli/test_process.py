"""`oraclegap.cli.run_in_process` and `command_line`: the CLI as a shell runs it and as a user types it."""

import json
import shlex
from pathlib import Path

import numpy as np
import pytest

from oraclegap.cli import command_line, run_in_process


def test_run_in_process_returns_what_the_command_printed(tmp_path):
    verdicts = np.zeros((4, 2, 3), bool)
    verdicts[:2, 0], verdicts[2:, 1] = True, True  # member 0 solves prompts 0-1, member 1 prompts 2-3
    pool = tmp_path / "pool.npy"
    np.save(pool, verdicts)
    out, seconds = run_in_process("coverage", pool, "--taus", "0.5", "--json")
    row = json.loads(out)["taus"]["0.5"]
    assert seconds > 0
    assert (row["oracle"], row["best"], row["D"], row["L"]) == (1.0, 0.5, 1.0, 0.5)  # the oracle covers what each member misses


def test_run_in_process_raises_with_the_last_line_of_stderr(tmp_path):
    with pytest.raises(RuntimeError, match=r"oraclegap coverage failed \(2\)"):
        run_in_process("coverage", tmp_path / "missing.npy")


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_run_in_process_refuses_a_bad_thread_count(bad):
    with pytest.raises(ValueError, match="threads"):
        run_in_process("--help", threads=bad)


def test_run_in_process_needs_arguments():
    with pytest.raises(ValueError, match="args"):
        run_in_process()


def test_command_line_quotes_relativises_and_names_the_scratch_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    scratch = tmp_path / "scratch dir"
    line = command_line("audit", scratch / "store", "--out", Path(tmp_path / "data" / "x y"), "--label", "a b",
                        scratch=scratch)
    assert line.startswith("oraclegap audit $WORK/store --out ")
    words = shlex.split(line.replace("$WORK", "WORK"))  # a shell would split it back into the arguments
    assert words == ["oraclegap", "audit", "WORK/store", "--out", "data/x y", "--label", "a b"]


def test_command_line_quotes_around_the_scratch_folder_inside_a_word(tmp_path):
    """The scratch folder inside a word: the variable stays bare, the rest is quoted, so a
    shell with WORK set gives back the original argument."""
    scratch = tmp_path / "w"
    line = command_line("rollouts", f"--adapter=s1={scratch}/a b;c", scratch=scratch)
    assert "$WORK" in line and "'" in line
    words = shlex.split(line.replace("$WORK", str(scratch)))
    assert words == ["oraclegap", "rollouts", f"--adapter=s1={scratch}/a b;c"]


def test_command_line_without_scratch_quotes_every_word():
    assert command_line("coverage", "$HOME/p.npy") == "oraclegap coverage '$HOME/p.npy'"
    assert shlex.split(command_line("nulls", "x;rm -rf y")) == ["oraclegap", "nulls", "x;rm -rf y"]
