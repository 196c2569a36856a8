"""The verifier-free aggregation ceiling of paper 001: plurality votes over the members' answers
and the split of the floor Delta into the part a vote reaches and the part that needs a verifier.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..._result import Result
from ...pool import Pool
from .inputs import _form, _inputs, _o_exp_prompt


def plurality_vote(codes, correct, valid=None) -> np.ndarray:
    """Expected correctness of a plurality vote over the last axis, ties broken uniformly at random.

    ``codes[..., r]``: integer answer labels of r responses (equal labels = equal answers);
    ``correct[..., r]``: each response's verdict; ``valid``: responses that gave an answer
    (invalid ones abstain). The plurality answers are those with the largest count among valid
    responses; the vote's expected correctness is the mean verdict over the responses that carry
    a plurality answer (which equals the average over the tied answers of each answer's mean
    verdict, since every tied answer has the same count). No valid response: 0.
    """
    codes = np.asarray(codes)
    correct = np.asarray(correct, dtype=np.float64)
    if codes.shape != correct.shape:
        raise ValueError(
            f"codes and correct must have the same shape, got {codes.shape} and {correct.shape}"
        )
    valid = np.ones(codes.shape, bool) if valid is None else np.asarray(valid, bool)
    if valid.shape != codes.shape:
        raise ValueError(f"valid must have the shape of codes {codes.shape}, got {valid.shape}")
    eq = (codes[..., :, None] == codes[..., None, :]) & valid[..., :, None] & valid[..., None, :]
    cnt = eq.sum(axis=-1)  # [..., r]; 0 for invalid responses
    top = cnt.max(axis=-1, keepdims=True)
    plural = (cnt == top) & (top > 0)
    n_pl = plural.sum(axis=-1)
    return np.where(n_pl > 0, (plural * correct).sum(axis=-1) / np.maximum(n_pl, 1), 0.0)


def answer_codes(answers) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes for string answers (equal strings, equal codes) and the mask of non-empty
    answers."""
    a = np.asarray(answers).astype(str)
    codes = pd.factorize(a.ravel())[0].reshape(a.shape)
    return codes, a != ""


@dataclasses.dataclass(frozen=True, repr=False)
class AggregationSplit(Result):
    """O_agg and the split Delta = Delta_know + Delta_guess (means over prompts)."""

    o_agg: float
    o_exp: float
    o_repro: float
    delta_know: float
    delta_guess: float

    @property
    def delta(self) -> float:
        return self.o_exp - self.o_repro

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([{**dataclasses.asdict(self), "delta": self.delta}])


def aggregation_ceiling(x, *, form: str | None = None) -> AggregationSplit:
    """The verifier-free aggregation ceiling O_agg and the split of Delta by it (001, A6 / Cor. 3).

    O_agg_i = mean_j vote_ij, where vote_ij is the expected correctness of a plurality vote
    (:func:`plurality_vote`) over the M responses with draw index j, one per member -- the
    oracle's own budget, aggregated without a verifier (a lower bound on the best verifier-free
    aggregator, which is the sup over aggregation rules). Per prompt, the part of the floor that
    a vote reaches is Delta_know_i = clip(O_agg_i - O_repro_i, 0, Delta_i) and the rest,
    Delta_guess_i = Delta_i - Delta_know_i, needs a verifier (only lucky draws reach it); both are
    averaged over prompts, so Delta_know + Delta_guess = Delta (plug-in O_repro). Needs a Pool
    with ``answers``.
    """
    if not isinstance(x, Pool) or x.answers is None:
        raise ValueError(
            "aggregation_ceiling needs a Pool with per-response answers (Pool.answers is None)"
        )
    v, alignment, _, answers = _inputs(x, min_k=1)
    form = _form(form, alignment)
    codes, valid = answer_codes(answers)
    # vote over members (axis 1) at each draw index j
    agg = plurality_vote(
        np.moveaxis(codes, 1, 2), np.moveaxis(v, 1, 2), np.moveaxis(valid, 1, 2)
    ).mean(axis=1)
    oe, orp = _o_exp_prompt(v, form), v.mean(axis=2).max(axis=1)
    d = oe - orp
    know = np.clip(agg - orp, 0.0, np.maximum(d, 0.0))
    return AggregationSplit(
        float(agg.mean()),
        float(oe.mean()),
        float(orp.mean()),
        float(know.mean()),
        float((d - know).mean()),
    )
