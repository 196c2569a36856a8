"""One test, one number: a chapter that reruns a test the audit also runs gets the audit's raw
p-value when it draws from the audit's section seed (chapter 02's Table 1 and MATH-500 table
against chapter 07's Holm-adjusted audit table), whatever thresholds or statistics it adds."""

import numpy as np

from oraclegap.audit import compute
from oraclegap.audit.settings import audit_settings, section_seeds
from oraclegap.stats import nulls, simulate


def test_chapter_gap_table_reproduces_the_audit_raw_p_and_holm_only_raises_it():
    pool = simulate.exchangeable(60, 3, 8, seed=3).pool
    taus = (0.05, 0.10, 0.20, 0.30)
    s = audit_settings(taus, 0.05, seed=4, small=True)
    cov = compute.coverage_section(pool, s)
    sec = compute.nulls_section(pool, s, cov)
    # the chapter's call: other thresholds beside the audit's, its own statistics, the audit's seed
    g = nulls.gap_table(pool, (0.10, 0.30, 0.50), n_draws=s.n_draws, n_splits=5,
                        seed=section_seeds(s.seed)["nulls"])
    per = sec.numbers["L"]
    checked = 0
    for key in per:
        tau = per[key]["tau"]
        if not any(abs(tau - t) < 1e-12 for t in (0.10, 0.30)):
            continue
        for null in nulls.NULLS:
            if "skipped" in per[key][null]:
                continue
            raw = g.tests.get("L", tau, null).p
            assert np.isclose(per[key][null]["p"], raw, rtol=0, atol=1e-12)
            assert per[key][null]["p_holm"] >= raw - 1e-12
            checked += 1
    assert checked >= 2
    # another seed gives other draws: the agreement is the seed's, not a coincidence
    other = nulls.gap_table(pool, (0.10, 0.30), n_draws=s.n_draws, n_splits=5,
                            seed=section_seeds(s.seed)["nulls"] + 100)
    assert any(other.tests.get("L", t, "redeal").draws.tolist()
               != g.tests.get("L", t, "redeal").draws.tolist() for t in (0.10, 0.30))
