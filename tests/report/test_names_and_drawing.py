"""Names and pictures of the report: human names of the null tests and of pool members, and
the outcome and count pictures (drawn, and refusing bad input)."""

from __future__ import annotations

import numpy as np
import pytest

from oraclegap import report


def test_test_names_are_human():
    assert report.test_name("L", 0.1, "margin") == "oracle gap L at τ = 0.10, margin-preserving"
    assert report.test_name("rise_L_2_to_5", 0.05, "redeal") == "rise of L from 2 to 5 members at τ = 0.05, re-deal"
    assert report.test_name("mean_pairwise_corr", float("nan"), "redeal") == "mean pairwise correlation, re-deal"


def test_pictures_draw_and_validate():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2)
    report.draw_outcomes(a, np.array([[1, 0, 1], [0, 0, 0]]), row_labels=["x", "y"], row_notes=["2/3", "0/3"], group=1)
    report.draw_counts(b, np.array([[3, 1], [0, 2]]), row_labels=["i", "j"], col_labels=["a", "b"], changes=np.array([[-1, 1], [1, -1]]))
    assert len(a.patches) == 6 and len(b.patches) == 4
    with pytest.raises(ValueError):
        report.draw_outcomes(a, np.zeros(3))
    with pytest.raises(ValueError, match="labels"):
        report.draw_counts(b, np.ones((2, 2)), row_labels=["i"], col_labels=["a", "b"])
    plt.close(fig)


def test_member_name_reads_lab_seeds_base_and_hub_names():
    from oraclegap import report as R

    assert R.member_name("primary-light-s1") == "seed 1"
    assert R.member_name("secondary-light-s12") == "seed 12"
    assert R.member_name("base") == "base model"
    assert R.member_name("meta-llama/Meta-Llama-3-8B") == "Meta-Llama-3-8B"
    # a soup, another recipe or a plain model keeps its name
    for name in ("primary-light-soup", "primary-heavy-s1", "gpt-4o"):
        assert R.member_name(name) == name
    for bad in (None, float("nan")):
        with pytest.raises(ValueError, match="member's name"):
            R.member_name(bad)
