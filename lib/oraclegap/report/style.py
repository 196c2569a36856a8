"""The book's plot style: one seaborn theme and the colour-blind-safe palette every figure uses.

``use_style()`` applies it (call it in a notebook; importing this module changes nothing), and
``sequential_colors`` gives the steps of an ordered variable. In a notebook ``use_style()`` also
records, with each figure's PNG, the smallest text the figure drew (:data:`FIGURE_TEXT_KEY` in the
output's ``image/png`` metadata: font size in points and the resolution in dots per inch), so the
book can check that figure text stays readable at the width a page shows it
(:mod:`oraclegap.book.readability`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

#: The book's palette (colour-blind safe, seaborn "colorblind").
PALETTE = ["#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#ece133", "#56b4e9"]

_STYLE_APPLIED = False

#: The key, in a figure output's ``image/png`` metadata, of its smallest drawn text:
#: ``{"pt": font size in points, "dpi": dots per inch of the image, "text": that text}``.
FIGURE_TEXT_KEY = "oraclegap_text"


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
    _record_figure_text()
    _STYLE_APPLIED = True


def sequential_colors(n: int) -> list[str]:
    """``n`` colours of one sequential, colour-blind-safe palette (viridis), dark to light, for an
    ordered variable such as a threshold: evenly spaced over the palette so that neighbouring
    steps stay distinguishable, with its pale yellow end left out so the lightest step still
    shows on white."""
    import matplotlib as mpl
    from matplotlib.colors import to_hex

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    cmap = mpl.colormaps["viridis"]
    return [to_hex(cmap(x)) for x in ([0.0] if n == 1 else
                                      [0.85 * i / (n - 1) for i in range(n)])]


def drawn_text(draw: Callable[[], object]) -> tuple[object, list[tuple[float, str]]]:
    """Call ``draw`` (something that draws matplotlib figures, e.g. saving one) and return its
    result with the (font size in points, text) of every visible, non-empty text it drew: tick
    labels, titles, legends, annotations; a text on an axis that is switched off is not drawn and
    not listed."""
    from matplotlib.text import Text

    if not callable(draw):
        raise TypeError(f"draw must be callable, got {type(draw).__name__}")
    seen: list[tuple[float, str]] = []
    original = Text.draw

    @functools.wraps(original)
    def record(self, renderer, *args, **kwargs):
        if self.get_visible() and self.get_text().strip():
            seen.append((float(self.get_fontsize()), self.get_text()))
        return original(self, renderer, *args, **kwargs)

    Text.draw = record
    try:
        out = draw()
    finally:
        Text.draw = original
    return out, seen


def with_text_record(png: Callable) -> Callable:
    """A figure-to-PNG formatter (IPython's) that also returns, as the output's metadata, the
    smallest text the figure drew under :data:`FIGURE_TEXT_KEY` (nothing extra for a figure
    without text). The image itself is ``png``'s, byte for byte."""
    if not callable(png):
        raise TypeError(f"png must be callable, got {type(png).__name__}")

    def formatter(fig):
        data, seen = drawn_text(lambda: png(fig))
        if data is None or not seen:
            return data
        pt, text = min(seen)
        dpi = float(getattr(png, "keywords", {}).get("dpi") or fig.dpi)
        return data, {FIGURE_TEXT_KEY: {"pt": pt, "dpi": dpi, "text": text[:80]}}

    formatter.records_text = True
    return formatter


def _record_figure_text() -> None:
    """In an IPython kernel with a PNG formatter for figures, wrap it in :func:`with_text_record`
    (once); anywhere else do nothing."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return
    shell = get_ipython()
    if shell is None:
        return
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    formatters = shell.display_formatter.formatters["image/png"]
    if Figure not in formatters.type_printers and not plt.get_fignums():
        # pyplot loads its backend at the first figure; the inline backend registers its figure
        # formatter then, so load it now (nothing is open that switching could close)
        plt.switch_backend(matplotlib.get_backend())
    try:
        png = formatters.lookup_by_type(Figure)
    except KeyError:
        return
    if not getattr(png, "records_text", False):
        formatters.for_type(Figure, with_text_record(png))
