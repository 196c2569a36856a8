"""Two procedurally generated task families with integer answers, in the roles of Geometry3K and MathVista.

* ``primary`` (Geometry3K's role): short geometry facts -- the third angle of a triangle, a
  supplement or complement, the base angle of an isosceles triangle, the area or perimeter of
  a rectangle, the perimeter of a square.
* ``secondary`` (MathVista's role): reading a small bar chart or pie -- the largest or
  smallest bar, the total, the range, how many bars exceed a level, the missing slice of a pie.

Skills overlap partly: subtracting from a constant (triangle 180 - a - b, pie 100 - a - b,
supplement/complement), adding several numbers (perimeter, total) and comparing them (range
needs max and min) appear in both; halving, multiplication and counting appear in one only.
Difficulty varies within each template by operand size (one- or two-digit numbers, carries,
three or four bars), so a partly trained model's per-prompt success rates spread over (0, 1)
with some prompts always right and some always wrong.

Every prompt is a short text ending in ``=`` whose answer is a non-negative integer. A prompt's
id hashes its task and text (``sha256``), and the fixed splits are assigned by sorting the
unique generated prompts on that hash: validation (240), test (240), extra test (361, primary
only), then training prompts. :func:`build_tasks` gives the split tables; :func:`stream`
yields fresh supervised examples for pretraining that never repeat a split prompt.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd

from .._rng import stream as named_stream
from .._validate import as_rng, check_int

__all__ = [
    "TASKS",
    "TaskFamily",
    "SPLITS",
    "prompt_id",
    "make_problem",
    "build_tasks",
    "stream",
    "parse_integer",
    "reward",
]

SPLITS = ("validation", "test", "extra_test", "train")

# A problem is (text, answer, template, difficulty features).
Problem = tuple[str, int, str, dict]


def prompt_id(task: str, text: str) -> str:
    """The hashed id of a prompt: ``t`` + the first 12 hex digits of sha256("task|text")."""
    return "t" + hashlib.sha256(f"{task}|{text}".encode()).hexdigest()[:12]


def _digits(x: int) -> int:
    return len(str(abs(int(x))))


# ----------------------------------------------------------------------------- primary templates
_LETTERS = "abcdefghijkmnpqrstuvwxyz"  # names of the unknown (no l, o: they look like 1, 0)


def _var(rng) -> str:
    return _LETTERS[int(rng.integers(len(_LETTERS)))]


def _angles(rng, n: int, total: int, step: int = 5, low: int = 5) -> list[int]:
    """``n`` angles, multiples of ``step`` and at least ``low``, summing to less than ``total``."""
    while True:
        v = [int(x) for x in rng.integers(low // step, total // step, size=n) * step]
        if sum(v) <= total - low:
            return v


def _feats(v) -> dict:
    return {"operands": len(v), "size": max(_digits(x) for x in v)}


def _triangle(rng) -> Problem:
    v = _angles(rng, 2, 180)
    return f"tri {v[0]} {v[1]} {_var(rng)}=", 180 - sum(v), "triangle", _feats(v)


def _exterior(rng) -> Problem:
    v = _angles(rng, 2, 180)
    return f"ext {v[0]} {v[1]} {_var(rng)}=", sum(v), "exterior", _feats(v)


def _quad(rng) -> Problem:
    v = _angles(rng, 3, 360, step=10, low=30)
    return f"quad {v[0]} {v[1]} {v[2]} {_var(rng)}=", 360 - sum(v), "quad", _feats(v)


def _area(rng) -> Problem:
    v = [int(x) for x in rng.integers(2, 13, size=2)]
    return f"area {v[0]} {v[1]} {_var(rng)}=", v[0] * v[1], "area", _feats(v)


def _perimeter(rng) -> Problem:
    v = [int(x) for x in rng.integers(1, 21, size=2)]
    return f"per {v[0]} {v[1]} {_var(rng)}=", 2 * sum(v), "perimeter", _feats(v)


# ----------------------------------------------------------------------------- secondary templates
def _bars(rng, hi: int = 10) -> list[int]:
    n = int(rng.integers(3, 6))
    return [int(x) for x in rng.integers(1, hi, size=n)]


def _bar_text(v: list[int]) -> str:
    return " ".join(str(x) for x in v)


def _bmax(rng) -> Problem:
    v = _bars(rng)
    return f"max {_bar_text(v)}=", max(v), "max", _feats(v)


def _bmin(rng) -> Problem:
    v = _bars(rng)
    return f"min {_bar_text(v)}=", min(v), "min", _feats(v)


def _bsum(rng) -> Problem:
    v = _bars(rng)[:4]
    return f"sum {_bar_text(v)}=", sum(v), "total", _feats(v)


def _brange(rng) -> Problem:
    v = _bars(rng)
    return f"range {_bar_text(v)}=", max(v) - min(v), "range", _feats(v)


def _bcount(rng) -> Problem:
    v = _bars(rng)
    t = int(rng.integers(min(v), max(v) + 1))
    return f"over {t}: {_bar_text(v)}=", sum(x > t for x in v), "count", _feats(v)


def _pie(rng) -> Problem:
    v = _angles(rng, 2, 100)
    return f"pie {v[0]} {v[1]} {_var(rng)}=", 100 - sum(v), "pie", _feats(v)


@dataclasses.dataclass(frozen=True)
class TaskFamily:
    """A task family: its templates (drawn uniformly) and the sizes of its fixed splits."""

    name: str
    role: str
    templates: tuple[Callable[[np.random.Generator], Problem], ...]
    n_validation: int = 240
    n_test: int = 240
    n_extra_test: int = 0
    n_train: int = 1200

    @property
    def template_names(self) -> tuple[str, ...]:
        rng = np.random.default_rng(0)
        return tuple(t(rng)[2] for t in self.templates)


TASKS: dict[str, TaskFamily] = {
    "primary": TaskFamily(
        "primary",
        "Geometry3K",
        (_triangle, _exterior, _quad, _area, _perimeter),
        n_extra_test=361,
        n_train=1200,
    ),
    "secondary": TaskFamily("secondary", "MathVista", (_bmax, _bmin, _bsum, _brange, _bcount, _pie), n_train=1200),
}


def _family(task) -> TaskFamily:
    if isinstance(task, TaskFamily):
        return task
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    return TASKS[task]


def make_problem(task, rng) -> Problem:
    """One random problem of ``task``: (text, answer, template name, difficulty features)."""
    fam = _family(task)
    rng = as_rng(rng)
    t = fam.templates[int(rng.integers(len(fam.templates)))]
    return t(rng)


def build_tasks(seed: int = 0) -> pd.DataFrame:
    """The fixed prompt table of both families (columns: id, text, answer, dataset, split, template, operands, size).

    For each family, unique problems are drawn from ``seed`` until the split sizes are filled;
    the split of a prompt follows the order of its hashed id (validation first, then test,
    extra test and train), so it depends on the prompt, not on the drawing order.
    """
    seed = check_int(seed, "seed", minimum=0)
    frames = []
    for j, fam in enumerate(TASKS.values()):
        rng = named_stream(seed, "lab.task_problems", j)
        need = fam.n_validation + fam.n_test + fam.n_extra_test + fam.n_train
        seen: dict[str, Problem] = {}
        tries = 0
        while len(seen) < need:
            tries += 1
            if tries > 200 * need:
                raise RuntimeError(f"task {fam.name!r} cannot produce {need} unique prompts")
            p = make_problem(fam, rng)
            seen.setdefault(p[0], p)
        rows = [
            {"id": prompt_id(fam.name, text), "text": text, "answer": ans, "dataset": fam.name, "template": tpl, **feats}
            for text, ans, tpl, feats in seen.values()
        ]
        df = pd.DataFrame(rows).sort_values("id", kind="stable").reset_index(drop=True)
        sizes = [("validation", fam.n_validation), ("test", fam.n_test), ("extra_test", fam.n_extra_test), ("train", fam.n_train)]
        df["split"] = np.repeat([s for s, _ in sizes], [n for _, n in sizes])
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    if out["id"].duplicated().any():  # a 48-bit hash collision would be a bug worth knowing about
        raise RuntimeError("hashed prompt ids collide")
    cols = ["id", "text", "answer", "dataset", "split", "template", "operands", "size"]
    return out[cols]


def stream(tasks, weights, seed: int, exclude) -> Iterator[tuple[str, str, int]]:
    """Endless supervised examples ``(task, text, answer)`` drawn from ``tasks`` with ``weights``.

    Prompts whose text is in ``exclude`` (the fixed splits) are skipped, so pretraining never
    sees a validation, test or training prompt.
    """
    fams = [_family(t) for t in tasks]
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(fams),) or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"weights must be {len(fams)} non-negative numbers with a positive sum, got {weights!r}")
    w = w / w.sum()
    rng = named_stream(check_int(seed, "seed", minimum=0), "lab.pretrain_examples")
    exclude = set(exclude)
    while True:
        fam = fams[int(rng.choice(len(fams), p=w))]
        text, ans, _, _ = make_problem(fam, rng)
        if text in exclude:
            continue
        yield fam.name, text, ans


def parse_integer(response: str) -> str:
    """The answer a response gives under the rollouts ``integer`` task: its last integer (``""`` when none)."""
    from ..rollouts.verify import extract_integer

    got = extract_integer(response)
    return "" if got is None else got


def reward(response: str, answer) -> float:
    """Verifier reward: 1.0 when the rollouts ``integer`` task judges ``response`` correct for ``answer``, else 0.0.

    Training and evaluation share one verifier (:func:`oraclegap.rollouts.get_task`), so the
    GRPO reward is exactly the verdict stored in the pools.
    """
    return float(_INTEGER_TASK().verdict(response, str(int(answer))).correct)


def _INTEGER_TASK():
    from ..rollouts import get_task

    return get_task("integer")
