"""Cost-aware utilities (stats.certify.costs): the tie rules bracket the oracle's cost."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap.stats import certify


def test_cost_utilities_tie_rules_bracket_the_oracle_cost():
    R = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 1]], bool)
    cost = np.array([[0.9, 0.1, 0.5], [0.2, 0.3, 0.1], [0.4, 0.4, 0.8]])
    kw = dict(normalize="none")
    first = certify.cost_utilities(R, cost, [0.0], **kw)
    cheap = certify.cost_utilities(R, cost, [0.0], ties="cheapest", **kw)
    dear = certify.cost_utilities(R, cost, [0.0], ties="dearest", **kw)
    # utilities do not depend on the tie rule; the oracle's cost does
    assert first.oracle[0] == cheap.oracle[0] == dear.oracle[0]
    assert cheap.oracle_cost[0] == pytest.approx((0.1 + 0.1 + 0.8) / 3)
    assert dear.oracle_cost[0] == pytest.approx((0.9 + 0.3 + 0.8) / 3)
    assert cheap.oracle_cost[0] <= first.oracle_cost[0] <= dear.oracle_cost[0]
    # the cheapest rule is the limit lambda -> 0+
    tiny = certify.cost_utilities(R, cost, [1e-9], **kw)
    assert tiny.oracle_cost[0] == pytest.approx(cheap.oracle_cost[0])
    with pytest.raises(ValueError, match="ties"):
        certify.cost_utilities(R, cost, [0.0], ties="random", **kw)
