"""The cost models the CLI checks before any work sit beside their algorithms: each covers what
its algorithm then resamples (counted by wrapping the algorithm's bootstraps), and the CLI
refuses a request above its bounds with the model's numbers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from oraclegap.cli import main
from oraclegap.deploy import compose as CO
from oraclegap.deploy import evaluate as EV
from oraclegap.deploy.compose import search as SE
from oraclegap.deploy.evaluate import compare as CMP
from oraclegap.deploy.features import router_inputs, simulated_router_pool
from oraclegap.stats import noise
from oraclegap.stats.noise import intervals as NI


def _recording(fn, log):
    def wrapped(Z, n_boot, *args, **kwargs):
        out = fn(Z, n_boot, *args, **kwargs)
        log.append((int(n_boot), int(np.asarray(Z).shape[0]), out.nbytes))
        return out

    return wrapped


@pytest.mark.parametrize("n, M, k, n_boot", [(40, 3, 4, 200), (25, 5, 2, 120)])
def test_decomposition_cost_covers_its_bootstrap(monkeypatch, n, M, k, n_boot):
    log = []
    monkeypatch.setattr(NI, "bootstrap_means", _recording(NI.bootstrap_means, log))
    pool = simulated_router_pool(n=n, M=M, k=k, seed=4).pool
    noise.decomposition(pool, baseline=np.linspace(0, 1, n), n_boot=n_boot, seed=0)
    steps, bytes_ = noise.decomposition_cost(n, M, n_boot)
    assert steps == sum(b * rows for b, rows, _ in log) == n_boot * n
    assert bytes_ >= sum(nb for *_, nb in log)  # the draws it keeps fit in the estimate


@pytest.mark.parametrize("with_costs", [False, True])
def test_evaluation_cost_covers_its_bootstraps(monkeypatch, with_costs):
    joint, paired = [], []
    monkeypatch.setattr(CMP, "bootstrap_means", _recording(CMP.bootstrap_means, joint))
    real_paired = CMP.paired_comparison

    def paired_comparison(x, base, *args, n_boot, **kwargs):
        paired.append((int(n_boot), len(x)))
        return real_paired(x, base, *args, n_boot=n_boot, **kwargs)

    monkeypatch.setattr(CMP, "paired_comparison", paired_comparison)
    sim = simulated_router_pool(n=120, M=3, k=1, strength=0.4, seed=3)
    cost = np.broadcast_to([1.0, 2.0, 6.0], (120, 3)).copy() if with_costs else None
    pool = dataclasses.replace(sim.pool, cost=cost)
    families = ["embed_knn", "embed_pca_logreg"]
    EV.evaluate_routers(pool, families, split="half", seed=0, inputs=router_inputs(pool, embed="pool"),
                        n_boot=150)
    steps, bytes_ = EV.evaluation_cost(pool.n_prompts, pool.n_policies, len(families), 150, costs=with_costs)
    done = sum(b * rows for b, rows, _ in joint) + sum(b * rows for b, rows in paired)
    assert len(paired) == len(families) and done <= steps
    assert bytes_ >= sum(nb for *_, nb in joint)


@pytest.mark.parametrize("sizes, max_subsets", [(None, 10_000), ([1, 2, 3], 10_000), ([2, 4], 40)])
def test_enumeration_cost_counts_the_subsets_enumerated(monkeypatch, sizes, max_subsets):
    seen = []
    real = SE._subsets_by_size

    def recording(cols, smax):
        for s, combos, ors in real(cols, smax):
            seen.append((combos.shape[0] * ors.shape[1], combos.nbytes + ors.nbytes))
            yield s, combos, ors

    monkeypatch.setattr(SE, "_subsets_by_size", recording)
    X = np.random.default_rng(5).random((150, 7)) < 0.5
    CO.compose_pools(X, sizes=sizes, max_subsets=max_subsets)
    steps, bytes_ = CO.enumeration_cost(150, 7, sizes, max_subsets)
    assert steps == sum(w for w, _ in seen) > 0
    assert bytes_ >= max(b for _, b in seen)
    if sizes == [2, 4]:  # 4 of 6 candidates: 56 subsets of sizes 1..4 go to branch and bound
        assert steps == CO.enumeration_cost(150, 7, [2], max_subsets)[0]


@pytest.mark.parametrize("model, args", [(noise.decomposition_cost, (10, 3, 100)),
                                         (EV.evaluation_cost, (10, 3, 2, 100))])
def test_costs_grow_with_the_work(model, args):
    base = model(*args)
    more_boot = model(*args[:-1], 2 * args[-1])
    more_prompts = model(10 * args[0], *args[1:])
    assert more_boot[0] == 2 * base[0] and more_boot[1] > base[1]
    assert more_prompts[0] == 10 * base[0] and more_prompts[1] > base[1]
    with pytest.raises(ValueError, match="n_boot"):
        model(*args[:-1], 0)


@pytest.mark.parametrize("verb, extra", [("decompose", []), ("routers", ["--families", "embed_knn"])])
def test_cli_refuses_above_the_bound_with_the_models_numbers(tmp_path, capsys, verb, extra):
    pool = simulated_router_pool(n=60, M=3, k=4 if verb == "decompose" else 1, seed=2).pool
    pool.save(tmp_path / "pool")
    if verb == "decompose":
        steps, _ = noise.decomposition_cost(60, 3, 400)
    else:  # one named family, or two when the task-wise baseline joins it
        steps, _ = EV.evaluation_cost(60, 3, 1, 400)
    code = main([verb, str(tmp_path / "pool"), "--n-boot", "400", "--max-proposals", str(steps - 1), *extra])
    err = capsys.readouterr().err
    assert code == 2 and "above --max-proposals" in err, err
    if verb == "decompose":
        assert f"needs about {steps:.3g} steps" in err
