"""Post-inference selectors: rules that run every member first and choose among the committed
answers (maximum confidence, Platt-calibrated confidence, plurality vote), a cost regime apart
from the pre-answer routers."""

from __future__ import annotations

import numpy as np

from .base import Router, _fit_fractional_logistic, _prob_of_one

__all__ = ["MaxConfidence", "CalibratedConfidence", "PluralityVote"]


class MaxConfidence(Router):
    """Post-inference: the member whose committed answer has the highest confidence."""

    needs = ("confidence",)
    regime = "post-inference"
    family = "max_confidence"
    label = "max confidence"
    description = "after every member answers: the answer given with the highest confidence"

    def _fit(self, X, Y):
        pass

    def _utility(self, X):
        return np.asarray(X.confidence, dtype=float)


class CalibratedConfidence(Router):
    """Post-inference: per-member Platt calibration of confidence -> P(correct) fitted on
    calibration prompts (logistic regression of the target on the confidence), then the member
    with the highest calibrated probability."""

    needs = ("confidence",)
    regime = "post-inference"
    family = "calibrated_confidence"
    label = "calibrated confidence"
    description = "after every member answers: the highest confidence after per-member calibration"

    def _fit(self, X, Y):
        from sklearn.linear_model import LogisticRegression

        c = np.asarray(X.confidence, dtype=float)
        def make():
            return LogisticRegression(C=100.0)

        self.models_ = [_fit_fractional_logistic(c[:, [m]], Y[:, m], make) for m in range(Y.shape[1])]

    def _utility(self, X):
        c = np.asarray(X.confidence, dtype=float)
        return np.stack([_prob_of_one(g, c[:, [m]]) for m, g in enumerate(self.models_)], axis=1)


class PluralityVote(Router):
    """Post-inference: the plurality answer among the members' committed answers; the chosen
    member is one that gave it (the best on calibration among them). Utility = the share of
    members agreeing with member m's answer (empty answers vote for nothing)."""

    needs = ("answers",)
    regime = "post-inference"
    family = "plurality_vote"
    label = "plurality vote"
    description = "after every member answers: a member giving the most common answer"

    def _fit(self, X, Y):
        pass

    def _utility(self, X):
        A = np.asarray(X.answers).astype(str)
        same = (A[:, :, None] == A[:, None, :]) & (A[:, None, :] != "")
        return same.mean(axis=2) * (A != "")
