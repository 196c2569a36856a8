"""Router families that learn no prompt model: the fixed references (the calibration-selected
best single member, the frozen task-wise best, uniform random, the cheapest member) and the
dataset-identity router (each prompt to the member trained on its dataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .base import Router, _seed, _tile

__all__ = ["BestSingle", "TaskwiseBest", "RandomRouter", "Cheapest", "DatasetIdentity"]


class BestSingle(Router):
    """The calibration-selected best single member, used on every prompt (the deployable
    comparator of 000 App. B.2)."""

    family = "best_single"
    label = "best single (frozen)"
    description = "the member with the best calibration mean, on every prompt"

    def _fit(self, X, Y):
        pass

    def _utility(self, X):
        return _tile(self.means_, len(X))


class TaskwiseBest(Router):
    """The frozen task-wise best (002's primary baseline): for each dataset level the member with
    the best calibration mean on that level; unseen levels get the overall best."""

    needs = ("dataset",)
    family = "taskwise_best"
    label = "task-wise best (frozen)"
    description = "per task tag, the member with the best calibration mean on that tag"

    def _fit(self, X, Y):
        levels = pd.Series(X.dataset).astype(str)
        df = pd.DataFrame(Y).groupby(levels.to_numpy()).mean()
        self.levels_ = {str(k): v.to_numpy() for k, v in df.iterrows()}

    def _utility(self, X):
        return np.stack([self.levels_.get(str(z), self.means_) for z in X.dataset]) if len(X) else np.zeros((0, self.n_policies_))


class RandomRouter(Router):
    """Uniform random routing: utilities are i.i.d. U(0, 1) draws from ``random_state``, so the
    choice is uniform over members (with lambda > 0 it leans to cheap members)."""

    family = "random"
    label = "uniform random"
    description = "a member drawn uniformly at random for each prompt"

    def __init__(self, random_state=0):
        self.random_state = random_state

    def _fit(self, X, Y):
        pass

    def _utility(self, X):
        return np.random.default_rng(_seed(self.random_state)).random((len(X), self.n_policies_))


class Cheapest(Router):
    """The member with the lowest mean calibration cost (needs costs)."""

    family = "cheapest"
    label = "cheapest"
    description = "the member with the lowest mean calibration cost, on every prompt"
    requires = ("cost",)

    def _fit(self, X, Y):
        if self.cost_ is None:
            raise ValueError("router 'cheapest' needs costs: fit it with cost=[n, M] (the pool has no cost array)")

    def _utility(self, X):
        cost = self.cost_
        assert cost is not None  # _fit refuses a fit without costs
        return _tile(1.0 - cost, len(X))


class DatasetIdentity(Router):
    """Each prompt goes to the member trained on its dataset (000's identity router):
    ``policy_datasets[m]`` is member m's training dataset (the policy table's ``dataset``
    column); among several matching members the best on calibration, and prompts whose dataset
    no member was trained on go to the best single member."""

    needs = ("dataset",)
    family = "dataset"
    label = "dataset identity"
    description = "each prompt to the member trained on its task (needs each member's training task)"
    requires = ("policy_datasets",)

    def __init__(self, policy_datasets=None):
        self.policy_datasets = policy_datasets

    def _fit(self, X, Y):
        if self.policy_datasets is None:
            raise ValueError("router 'dataset' needs policy_datasets: each member's training dataset (the policy table's 'dataset' column)")
        pdat = [None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in self.policy_datasets]
        if len(pdat) != Y.shape[1]:
            raise ValueError(f"policy_datasets has {len(pdat)} entries for {Y.shape[1]} policies")
        self.map_ = np.array(pdat, dtype=object)

    def _utility(self, X):
        match = np.asarray(X.dataset, dtype=object)[:, None] == self.map_[None, :]
        return self.means_[None, :] + match.astype(float)
