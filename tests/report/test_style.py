"""use_style() keeps tqdm's "no progress widget" warning off a rendered page (the
warning would print the environment's path into the chapter)."""

from __future__ import annotations

import warnings

from tqdm import TqdmWarning

from oraclegap import report as R


def test_use_style_silences_tqdm_warning_but_not_others():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        R.use_style()
        warnings.warn("IProgress not found", TqdmWarning, stacklevel=1)
        warnings.warn("something else", UserWarning, stacklevel=1)
    assert [type(w.message) for w in seen] == [UserWarning]
