"""Kill-during-save: a save killed with SIGKILL at any point leaves a loadable pool at
the path -- the old one or the new one, never neither.

Two kinds of kills, each in a separate process: (a) at a random step of ``Pool.save`` (a random
one of the calls it makes -- creating the temporary directory, writing each file, hashing,
fsync, each of the renames including the one between moving the old pool aside and moving the
new one in, removing the old one -- before or after it), and (b) at a random time while the
process saves two pools alternately in a loop. After every kill the path must load, equal to
one of the two pools, and the next save must leave no temporary directory behind.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from oraclegap.pool import Pool

CHILD = r'''
import os, signal, sys
import numpy as np
import oraclegap.pool._storage as P
from oraclegap.pool import Pool

path, mode = sys.argv[1], sys.argv[2]
n, M, k = 40, 4, 12
A = Pool(np.zeros((n, M, k), bool), answers=np.full((n, M, k), "old answer", dtype=object), meta={"which": "A"})
B = Pool(np.ones((n, M, k), bool), answers=np.full((n, M, k), "new answer " * 20, dtype=object), meta={"which": "B"})

def die():
    os.kill(os.getpid(), signal.SIGKILL)

if mode == "loop":
    print("ready", flush=True)
    i = 0
    while True:
        (B if i % 2 == 0 else A).save(path, overwrite=True)
        i += 1
else:
    target, nth, when = sys.argv[3], int(sys.argv[4]), sys.argv[5]
    owner, name = {"rename": (P.os, "rename"), "mkdir": (P.os, "mkdir"), "rmtree": (P.shutil, "rmtree"),
                   "savez": (P.np, "savez_compressed"), "parquet": (P, "_to_parquet"),
                   "answers": (P, "_answers_to_parquet"), "sha256": (P, "_sha256"), "fsync_file": (P, "_fsync_file"),
                   "fsync_dir": (P, "_fsync_dir"), "write_text": (P.Path, "write_text")}[target]
    real = getattr(owner, name)
    calls = {"n": 0}

    def hooked(*a, **kw):
        calls["n"] += 1
        if calls["n"] == nth and when == "before":
            die()
        out = real(*a, **kw)
        if calls["n"] == nth and when == "after":
            die()
        return out

    setattr(owner, name, hooked)
    B.save(path, overwrite=True)
    print("finished", flush=True)
'''

# (target, how many calls save makes to it on an overwrite) -- the renames are: manifest.part ->
# manifest.json, pool -> .old (then the window between the renames), .new -> pool
STEPS = [("mkdir", 1), ("savez", 1), ("parquet", 2), ("answers", 1), ("sha256", 4), ("fsync_file", 5),
         ("write_text", 1), ("rename", 3), ("fsync_dir", 2), ("rmtree", 1)]


def _pools():
    n, M, k = 40, 4, 12
    return np.zeros((n, M, k), bool), np.ones((n, M, k), bool)


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def _check_loadable(path: Path, seen: dict) -> None:
    a, b = _pools()
    if not path.exists():
        seen["recovered"] += 1
    p = Pool.load(path)
    if np.array_equal(p.verdicts, a):
        assert p.meta["which"] == "A" and p.answers[0, 0, 0] == "old answer"
        seen["old"] += 1
    else:
        np.testing.assert_array_equal(p.verdicts, b)
        assert p.meta["which"] == "B" and p.answers[-1, -1, -1] == "new answer " * 20
        seen["new"] += 1


def _reset(path: Path) -> None:
    """Put pool A at the path with a normal save: it must also clear what the killed save left."""
    a, _ = _pools()
    n, M, k = a.shape
    Pool(a, answers=np.full((n, M, k), "old answer", dtype=object), meta={"which": "A"}).save(path, overwrite=True)
    assert _siblings(path) == [], _siblings(path)


def _child(path: Path, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(path), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


@pytest.mark.slow
def test_sigkill_at_random_steps_of_save_always_leaves_a_pool(tmp_path):
    rng = random.Random(20260107)
    path = tmp_path / "pool"
    _reset(path)
    seen = {"old": 0, "new": 0, "recovered": 0}
    plan = [("rename", 2, "after")] * 3  # the window between the two renames, for certain
    plan += [("rename", 3, "before"), ("rmtree", 1, "before"), ("rename", 1, "before")]
    while len(plan) < 24:
        target, calls = rng.choice(STEPS)
        plan.append((target, rng.randint(1, calls), rng.choice(["before", "after"])))
    killed = 0
    for target, nth, when in plan:
        proc = _child(path, "hook", target, str(nth), when)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode in (-signal.SIGKILL, 0), err
        killed += proc.returncode == -signal.SIGKILL
        _check_loadable(path, seen)
        _reset(path)
    assert killed >= 20
    assert seen["recovered"] >= 3 and seen["old"] > 0 and seen["new"] > 0, seen


@pytest.mark.slow
def test_sigkill_at_random_times_while_saving_always_leaves_a_pool(tmp_path):
    rng = random.Random(7)
    path = tmp_path / "pool"
    _reset(path)
    seen = {"old": 0, "new": 0, "recovered": 0}
    for _ in range(10):
        proc = _child(path, "loop")
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.8))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        _check_loadable(path, seen)
        _reset(path)
    assert seen["old"] + seen["new"] == 10
