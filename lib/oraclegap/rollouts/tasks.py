"""Tasks: a prompt template plus an answer extractor and a checker, registered by name.

A task turns a prompt record (``id``, ``prompt``, ``answer`` and any feature fields) into the
text the model sees, and a response into a :class:`~oraclegap.rollouts.verify.Verdict`.
Built in: ``gsm8k``, ``math``, ``multiple_choice``, ``exact``, ``numeric`` and ``integer``.
New tasks (the policy lab's procedurally generated ones, code tasks, ...) register here with
:func:`register_task`; :func:`get_task` and :data:`TASKS` are the one place tasks are looked up.
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Callable, Mapping
from types import MappingProxyType

from . import verify

__all__ = ["Task", "TASKS", "register_task", "get_task"]


@dataclasses.dataclass(frozen=True)
class Task:
    """A named task.

    ``template`` is a ``str.format`` template over the prompt record's fields (``{prompt}``
    at least; literal braces doubled). ``extract(response) -> answer | None`` and
    ``check(answer, gold) -> bool`` define the verdict; ``gold(answer_field) -> str``
    normalises the gold answer once per prompt (e.g. a whole GSM8K solution to its number).
    """

    name: str
    template: str
    extract: Callable[[str], str | None]
    check: Callable[[str, str], bool]
    gold: Callable[[str], str] = str
    description: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"task name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.template, str):
            raise TypeError(f"task template must be a string, got {type(self.template).__name__}")
        fields = _template_fields(self.template)
        if "prompt" not in fields:
            raise ValueError(f"task {self.name!r}: template must contain '{{prompt}}', got {self.template!r}")
        for attr in ("extract", "check", "gold"):
            if not callable(getattr(self, attr)):
                raise TypeError(f"task {self.name!r}: {attr} must be callable")

    def render(self, record: Mapping) -> str:
        """The prompt text for one record: ``template`` filled from the record's fields."""
        try:
            return self.template.format_map(dict(record))
        except KeyError as exc:
            raise ValueError(
                f"task {self.name!r}: template field {exc.args[0]!r} is not in prompt {record.get('id')!r}"
            ) from None

    def verdict(self, response: str, gold) -> verify.Verdict:
        """Verdict of ``response`` against the (raw) gold answer; a parse failure is wrong."""
        return verify.check_response(response, self.gold(str(gold)), self.extract, self.check)


def _template_fields(template: str) -> set[str]:
    try:
        return {f for _, f, _, _ in string.Formatter().parse(template) if f}
    except ValueError as exc:
        raise ValueError(f"task template {template!r} is not a valid format string: {exc}") from None


_REGISTRY: dict[str, Task] = {}
TASKS: Mapping[str, Task] = MappingProxyType(_REGISTRY)
"""Read-only view of the registered tasks, by name."""


def register_task(
    task: Task | str,
    *,
    template: str = "{prompt}",
    extract: Callable[[str], str | None] | None = None,
    check: Callable[[str, str], bool] | None = None,
    gold: Callable[[str], str] = str,
    description: str = "",
    overwrite: bool = False,
) -> Task:
    """Register a task (a :class:`Task`, or a name with ``extract`` and ``check``).

    Re-registering an existing name raises unless ``overwrite=True``. Returns the task.
    """
    if isinstance(task, str):
        if extract is None or check is None:
            raise ValueError(f"register_task({task!r}): pass extract= and check= (or a Task)")
        task = Task(task, template, extract, check, gold, description)
    elif not isinstance(task, Task):
        raise TypeError(f"task must be a Task or a name, got {type(task).__name__}")
    if task.name in _REGISTRY and not overwrite:
        raise ValueError(f"task {task.name!r} is already registered; pass overwrite=True to replace it")
    _REGISTRY[task.name] = task
    return task


def get_task(task: Task | str) -> Task:
    """The registered task of that name (a :class:`Task` is returned as is)."""
    if isinstance(task, Task):
        return task
    if not isinstance(task, str):
        raise TypeError(f"task must be a task name or a Task, got {type(task).__name__}")
    if task not in _REGISTRY:
        raise ValueError(f"unknown task {task!r}; registered tasks: {sorted(_REGISTRY)}")
    return _REGISTRY[task]


register_task(
    "gsm8k",
    template="{prompt}\nWork it out step by step, then give the final number after '####'.",
    extract=verify.extract_gsm8k,
    check=verify.check_numeric,
    gold=verify.gsm8k_gold,
    description="final number after the last '####', else the last number; numeric equality",
)
register_task(
    "math",
    template="{prompt}\nReason step by step and write the final answer inside \\boxed{{}}.",
    extract=verify.extract_math,
    check=verify.check_math,
    description="math-verify extraction (boxed first) and symbolic equivalence",
)
register_task(
    "multiple_choice",
    template="{prompt}\nAnswer with the letter of the correct option.",
    extract=verify.extract_choice,
    check=verify.check_choice,
    description="the option letter committed to; letter equality",
)
register_task(
    "exact",
    template="{prompt}",
    extract=verify.extract_exact,
    check=verify.check_exact,
    description="text after the last 'Answer:' (else the last line); normalised exact match",
)
register_task(
    "numeric",
    template="{prompt}",
    extract=verify.extract_last_number,
    check=verify.numeric_checker(rel_tol=1e-6),
    description="last number in the response; equal within relative tolerance 1e-6",
)
register_task(
    "integer",
    template="{prompt}",
    extract=verify.extract_integer,
    check=verify.check_integer,
    description="last integer in the response; exact integer match",
)
