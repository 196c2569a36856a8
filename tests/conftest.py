"""Shared fixtures: the project root, the shared folder, external data (skips name what is missing),
saved simulated pools of a given shape (``make_pool``) and the ``oraclegap`` command line run in
process (``run_cli``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    d = Path(os.environ.get("OG_SHARED_DIR", ROOT.parent / "shared"))
    if not d.is_dir():
        pytest.skip(f"shared folder not found at {d} (set OG_SHARED_DIR)")
    return d


@pytest.fixture(scope="session")
def external_dir() -> Path:
    env = os.environ.get("OG_EXTERNAL_DIR")
    if not env:
        pytest.skip("OG_EXTERNAL_DIR is not set; external real-LLM data are not available")
    d = Path(env)
    if not d.is_dir():
        pytest.skip(f"OG_EXTERNAL_DIR={d} does not exist")
    return d


def _simulated_pool(n: int, M: int, k: int, seed: int, sim: str, **kw):
    """The pool of simulator ``sim`` with n prompts, M members and k draws per cell."""
    from oraclegap.pool import Pool

    if sim == "specialists":  # specialists on a share f of the prompts (App. C.3)
        from oraclegap.stats import simulate

        return simulate.specialists(n, M, k, seed=seed, **kw).pool
    if sim == "router":  # members specialise by a topic every router input reveals
        from oraclegap.deploy.features import simulated_router_pool

        return simulated_router_pool(n, M, k, seed=seed, **kw).pool
    if sim == "latent":  # the latent-ability world of pool construction (one draw per cell)
        from oraclegap.stats import simulate

        if k != 1:
            raise ValueError(f"sim='latent' draws one response per cell, got k={k}")
        return simulate.latent_world(n_items=n, n_models=M, seed=seed, **kw).pool
    if sim == "beta":  # iid draws at a Beta(a, a) success rate per (prompt, member)
        a = kw.pop("a", 0.8)
        policies = kw.pop("policies", None)
        if kw:
            raise ValueError(f"sim='beta' takes a and policies, got {sorted(kw)}")
        rng = np.random.default_rng(seed)
        p = rng.beta(a, a, (n, M))
        return Pool.from_array(rng.random((n, M, k)) < p[:, :, None], policies=policies,
                               alignment="seed-aligned")
    raise ValueError(f"sim must be 'specialists', 'router', 'latent' or 'beta', got {sim!r}")


@pytest.fixture(scope="session")
def make_pool(tmp_path_factory):
    """``make_pool(n, M, k, seed, sim="specialists", **kw) -> (path, pool)``: a simulated pool of
    shape (n, M, k) saved into a fresh folder. ``sim`` picks the simulator (``specialists``,
    ``router``, ``latent`` or ``beta``); ``kw`` go to it. Session-scoped, so module-scoped
    fixtures can use it; every call builds and saves a new pool."""

    def make(n: int, M: int, k: int, seed: int, sim: str = "specialists", **kw):
        pool = _simulated_pool(n, M, k, seed, sim, **kw)
        path = tmp_path_factory.mktemp(f"pool-{sim}") / "pool"
        pool.save(path)
        return path, pool

    return make


@pytest.fixture(scope="module")
def one_torch_thread():
    """torch computes on one thread for the module (the tiny models' runs are then reproducible
    and do not spin-wait beside another test worker); the earlier thread count returns after."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def run_cli(capsys):
    """``run_cli(*argv) -> (rc, out, err)``: the ``oraclegap`` command run in this process on
    ``argv`` (each turned into a string), with its exit status and what was printed since the
    test's output was last read."""
    from oraclegap.cli import main

    def run(*argv):
        rc = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return rc, captured.out, captured.err

    return run
