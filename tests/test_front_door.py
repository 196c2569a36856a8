"""The front door: ``import oraclegap as og; og.VERB(pool)`` from a fresh Python, cheap to import,
the CLI's numbers with default options, and verbs that are also (callable) submodules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import oraclegap as og
from oraclegap.deploy.features import simulated_router_pool

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = r"""
import json, sys
import oraclegap as og
heavy = sorted(m for m in ("numba", "sklearn", "torch") if m in sys.modules)
from oraclegap.deploy.features import simulated_router_pool
pool = simulated_router_pool(n=60, M=3, k=4, seed=1).pool
calls = {"coverage": lambda: og.coverage(pool), "nulls": lambda: og.nulls(pool, n_draws=200),
         "certify": lambda: og.certify(pool, tau=0.5), "decompose": lambda: og.decompose(pool, n_boot=200),
         "routers": lambda: og.routers(pool, tau=0.5, n_boot=200), "compose": lambda: og.compose(pool, tau=0.5),
         "audit": lambda: og.audit(pool, small=True)}
out = {"heavy": heavy, "results": {}}
for name, call in calls.items():
    res = call()
    out["results"][name] = {"type": type(res).__name__, "frame_rows": len(res.frame())}
print(json.dumps(out))
"""


def _fresh_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "lib"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.slow
def test_every_verb_from_a_fresh_session():
    out = json.loads(_fresh_python(_SCRIPT).strip().splitlines()[-1])
    assert out["heavy"] == [], f"import oraclegap pulled in {out['heavy']}"
    expected = {"coverage": "CoverageTable", "nulls": "NullTests", "certify": "GapInterval",
                "decompose": "Decomposition", "routers": "RouterComparison", "compose": "Composition",
                "audit": "AuditResult"}
    assert {k: v["type"] for k, v in out["results"].items()} == expected
    assert all(v["frame_rows"] > 0 for v in out["results"].values())


def test_import_is_cheap_and_lists_the_verbs():
    code = ("import sys, oraclegap as og; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numba', 'sklearn', 'torch', 'statsmodels'))); print(sorted(og.VERBS)); print(og.__doc__.count('og.'))")
    heavy, verbs, mentions = _fresh_python(code).strip().splitlines()
    assert heavy == "[]"
    assert verbs == str(sorted(["coverage", "nulls", "certify", "decompose", "routers", "compose", "audit"]))
    assert int(mentions) >= 7  # the package docstring names every verb


@pytest.fixture(scope="module")
def pool_dir(make_pool):
    return make_pool(60, 3, 4, seed=2, sim="router")


def _cli_json(run_cli, *argv) -> dict:
    rc, out, err = run_cli(*argv, "--json")
    assert rc == 0, err
    return json.loads(out)


def test_coverage_and_certify_match_the_cli(pool_dir, run_cli):
    path, pool = pool_dir
    cli = _cli_json(run_cli, "coverage", str(path))
    ours = og.coverage(pool).to_dict()
    assert list(ours) == list(cli["taus"])
    for key in ours:
        for field, value in ours[key].items():
            assert cli["taus"][key][field] == pytest.approx(value, nan_ok=True), (key, field)
    cert = _cli_json(run_cli, "certify", str(path), "--draw", "0")["results"][0]
    gi = og.certify(pool, draw=0)
    assert (gi.method, gi.lo, gi.hi, gi.value) == ("exact", pytest.approx(cert["lo"]), pytest.approx(cert["hi"]),
                                                   pytest.approx(cert["value"]))
    paired = _cli_json(run_cli, "certify", str(path), "--method", "paired", "--tau", "0.5")["results"][0]
    gp = og.certify(pool, method="paired", tau=0.5)
    assert (gp.lo, gp.hi) == (pytest.approx(paired["lo"]), pytest.approx(paired["hi"]))


def test_decompose_and_compose_match_the_cli(pool_dir, run_cli):
    path, pool = pool_dir
    cli = _cli_json(run_cli, "decompose", str(path), "--n-boot", "300")
    dec = og.decompose(pool, n_boot=300)
    for q, e in dec.estimates.items():
        assert cli["intervals"][q]["lo"] == pytest.approx(e.lo, nan_ok=True), q
        assert cli["intervals"][q]["hi"] == pytest.approx(e.hi, nan_ok=True), q
    comp = _cli_json(run_cli, "compose", str(path), "--tau", "0.5")
    res = og.compose(pool, tau=0.5)
    assert comp["anchor"] == res.anchor
    assert [s["F_b"] for s in comp["sizes"]] == pytest.approx(res.frame()["F_b greedy"].tolist())


def test_routers_matches_the_cli(pool_dir, run_cli):
    path, pool = pool_dir
    cli = _cli_json(run_cli, "routers", str(path), "--tau", "0.5", "--families", "best_single,dataset", "--n-boot", "200")
    res = og.routers(pool, ["best_single", "dataset"], tau=0.5, n_boot=200)
    rows = {r["family"]: r for r in cli["routers"]}
    for fam, ev in res.evaluations.items():
        assert rows[fam]["accuracy"] == pytest.approx(ev.accuracy)
        assert rows[fam]["gain_best_lo"] == pytest.approx(ev.gain_best_ci.lo)
        assert rows[fam]["gain_cal_hi"] == pytest.approx(ev.gain_cal_ci.hi)


def test_verbs_that_are_submodules_stay_modules():
    from oraclegap.deploy import routers
    from oraclegap.stats import certify, coverage

    assert callable(coverage) and hasattr(coverage, "need")  # the module, callable
    assert hasattr(certify, "clopper_pearson") and hasattr(routers, "make_router")
    import oraclegap.stats as S

    assert S.coverage is coverage and S.decompose is og.decompose
    assert og.audit.run_audit is not None and callable(og.audit)


def test_verbs_refuse_what_is_not_a_pool():
    with pytest.raises(TypeError, match="pool must be an oraclegap.Pool"):
        og.coverage(np.zeros((3, 2, 1), dtype=bool))
    pool1 = simulated_router_pool(n=20, M=2, k=1, seed=0).pool
    with pytest.raises(ValueError, match="k >= 2"):
        og.decompose(pool1)
    with pytest.raises(ValueError, match="method must be one of"):
        og.certify(pool1, method="thm5")
    pool4 = simulated_router_pool(n=20, M=2, k=4, seed=0).pool
    with pytest.raises(ValueError, match="pass tau"):
        og.compose(pool4)
    with pytest.raises(ValueError, match="alpha must lie in"):
        og.certify(pool1, alpha=1.0)
    with pytest.raises(TypeError, match=r"alpha must be a number in \(0, 1\), got 'x'"):
        og.routers(pool1, alpha="x")


@pytest.mark.parametrize("verb", ["certify", "routers", "compose"])
def test_verbs_share_one_rule_for_several_draws(verb):
    """A verb that needs one success bit per cell asks for tau on a k > 1 pool in the same words,
    and refuses tau on a k = 1 pool in the same words; with tau it runs."""
    call = {"certify": lambda p, **kw: og.certify(p, **kw),
            "routers": lambda p, **kw: og.routers(p, ["best_single"], n_boot=200, **kw),
            "compose": lambda p, **kw: og.compose(p, **kw)}[verb]
    pool4 = simulated_router_pool(n=40, M=3, k=4, seed=3).pool
    pool1 = simulated_router_pool(n=40, M=3, k=1, seed=3).pool
    with pytest.raises(ValueError, match=r"the pool has k=4 draws per cell: pass tau=T \(success = coverage at T\)"):
        call(pool4)
    with pytest.raises(ValueError, match="the pool has k=1: tau applies only to pools with several draws"):
        call(pool1, tau=0.5)
    assert len(call(pool4, tau=0.5).frame()) > 0 and len(call(pool1).frame()) > 0


def test_the_verbs_docstring_examples_run():
    """The numpydoc Examples of the seven verbs are doctests, run here."""
    import doctest

    import oraclegap.deploy.verbs as dv
    import oraclegap.stats.verbs as sv
    import oraclegap.verbs as v

    for mod in (sv, dv, v):
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert res.attempted > 0 and res.failed == 0, (mod.__name__, res)
    import importlib

    for name, where in og.VERBS.items():
        module, func = where.split(":")
        doc = getattr(importlib.import_module(module), func).__doc__
        assert all(s in doc for s in ("Parameters\n", "Returns\n", "Examples\n", ">>> ")), name
