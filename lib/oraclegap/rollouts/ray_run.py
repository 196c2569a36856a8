"""Rollouts on a Ray cluster: the worker partition of :func:`oraclegap.rollouts.generate` run as
Ray tasks.

``generate_ray(..., n_workers=n)`` starts n Ray tasks; task i runs ``generate(..., worker=(i, n))``
in its own Ray worker process, so each loads one engine (transformers or vllm, with
``num_gpus`` GPUs reserved as Ray resources) and writes the chunks ``c % n == i`` as the same
atomic shards an array job's ``--worker i/n`` processes write. The store, its resume rule and
``Pool.from_store`` are therefore unchanged: a task that dies (node lost, process killed) is
retried by Ray (``max_retries``), and the retry resumes from the chunks already committed -- a
chunk is either committed whole or not at all, so no (prompt, policy, sample) is lost or doubled.

Ray is an optional extra (``pip install 'oraclegap[ray]'``), imported only here, only when asked
for. The model, adapter and prompt paths and the store directory must be visible at the same
paths on every node (a shared file system), as for an array job.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._validate import check_int
from .generate import generate
from .store import Store

__all__ = ["generate_ray", "FAULT_ENV"]

#: Fault injection for tests: with this variable set to a file path, the first task attempt that
#: finds no such file creates it and kills its own process right after committing its first
#: chunk (``os._exit``), as a node loss would; Ray then retries the task.
FAULT_ENV = "OG_RAY_FAULT_MARKER"


def _import_ray():
    try:
        import ray
    except ImportError:
        raise ValueError("--ray needs Ray, an optional extra: pip install 'oraclegap[ray]'") from None
    return ray


def _run_share(i: int, n: int, kwargs: dict) -> int:
    """Body of one Ray task: worker i of n, in the Ray worker's own process."""
    marker = os.environ.get(FAULT_ENV)
    if marker:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # only the first attempt to get here
        except FileExistsError:
            pass
        else:
            os.close(fd)
            original = Store.write_chunk

            def write_then_die(self, chunk, tag, rows):
                path = original(self, chunk, tag, rows)
                os._exit(1)
                return path  # pragma: no cover

            Store.write_chunk = write_then_die  # type: ignore[method-assign]  # this process only
    store = generate(worker=(i, n), progress=False, **kwargs)
    return len(store.committed_chunks())


def generate_ray(model, prompts, task, *, out, address: str | None = None, n_workers: int | None = None,
                 num_gpus: float = 0, num_cpus: float = 1, max_retries: int = 3, **kwargs) -> Store:
    """:func:`oraclegap.rollouts.generate` with the work spread over Ray tasks (see the module docstring).

    ``address``: the Ray cluster to join (``"auto"``, ``"ray://host:10001"``, ...); None joins the
    cluster this process is already connected to, or starts a local one. ``n_workers`` (default:
    the cluster's GPUs when ``num_gpus`` > 0, else its CPUs) tasks run, each reserving
    ``num_gpus`` GPUs and ``num_cpus`` CPUs. The other keyword arguments are :func:`generate`'s
    (``worker`` excepted: the tasks are the workers). Returns the :class:`Store` once every task
    has finished; a task that fails after its retries raises.
    """
    if kwargs.get("worker") is not None:
        raise ValueError("worker and ray are exclusive: with Ray every task is one worker of the partition")
    kwargs.pop("worker", None)
    kwargs.pop("progress", None)
    max_retries = check_int(max_retries, "max_retries", minimum=0)
    if not isinstance(num_gpus, (int, float)) or num_gpus < 0:
        raise ValueError(f"num_gpus must be a number >= 0, got {num_gpus!r}")
    if not isinstance(num_cpus, (int, float)) or num_cpus <= 0:
        raise ValueError(f"num_cpus must be a number > 0, got {num_cpus!r}")
    if out is None or not str(out):
        raise ValueError("out must name the store directory")
    ray = _import_ray()
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    if n_workers is None:
        res = ray.cluster_resources()
        n_workers = int(res.get("GPU", 0) // num_gpus) if num_gpus else int(res.get("CPU", 1) // num_cpus)
    n_workers = check_int(max(1, n_workers), "n_workers", minimum=1)
    share = dict(kwargs, model=str(model), prompts=str(prompts) if isinstance(prompts, (str, Path)) else prompts,
                 task=task, out=str(out))
    remote = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus, max_retries=max_retries)(_run_share)
    ray.get([remote.remote(i, n_workers, share) for i in range(n_workers)])
    return Store(out)
