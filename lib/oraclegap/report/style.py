"""The book's plot style: one seaborn theme and the colour-blind-safe palette every figure uses.

``use_style()`` applies it (call it in a notebook; importing this module changes nothing).
"""

from __future__ import annotations

#: The book's palette (colour-blind safe, seaborn "colorblind").
PALETTE = ["#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#ece133", "#56b4e9"]

_STYLE_APPLIED = False


def use_style(context: str = "notebook") -> None:
    """Apply the book's plot style (seaborn whitegrid + PALETTE). Idempotent. Also silences
    tqdm's warning that no progress widget can be shown (a rendered page has none, and the
    warning would print the environment's path on it)."""
    global _STYLE_APPLIED
    import warnings

    import matplotlib as mpl
    import seaborn as sns
    from tqdm import TqdmWarning

    warnings.simplefilter("ignore", TqdmWarning)

    sns.set_theme(context=context, style="whitegrid", palette=PALETTE)
    mpl.rcParams.update(
        {
            "figure.figsize": (7.0, 4.0),
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "axes.titleweight": "bold",
            "axes.titlesize": "medium",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
        }
    )
    _STYLE_APPLIED = True
