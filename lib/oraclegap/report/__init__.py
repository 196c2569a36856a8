"""Presentation helpers: one plot style, number and interval formatting, tables, computed prose.

Nothing here computes statistics. Chapters use the package as ``import oraclegap.report as R``
and call every helper as ``R.<name>``; each lives in one module:

* :mod:`~oraclegap.report.style` -- ``use_style()`` sets one seaborn theme and ``PALETTE``
  (call it in a notebook; importing this package changes nothing); ``sequential_colors`` for an
  ordered variable.
* :mod:`~oraclegap.report.numbers` -- ``fmt``/``fmt_interval`` and the other ``fmt_*`` format
  numbers the same way everywhere (``0.113 [0.079, 0.113]``).
* :mod:`~oraclegap.report.names` -- ``DISPLAY_NAMES``/``display_name`` for code keys,
  ``member_name`` for pool members and ``test_name`` for the null tests.
* :mod:`~oraclegap.report.markdown` -- ``md`` turns a template with computed values into
  Markdown, so numbers in the book's prose always come from code; ``callout`` and ``solution``
  emit Quarto callouts (a collapsed one for exercise solutions) filled in at build time.
* :mod:`~oraclegap.report.prose` -- interpretive words come from code too: ``compare``,
  ``versus`` and ``position`` return the word ("above", "below", "inside", ...) that relates
  computed values and raise ``ProseError`` when a direction the text relies on (``expect=``) has
  flipped; ``check`` does the same for a statement typed in a Markdown cell;
  ``direction_problems`` and ``share_problems`` scan rendered Markdown, and ``PValues`` keeps one
  p-value per (test, pool) in a chapter.
* :mod:`~oraclegap.report.tables` -- ``table``: a DataFrame formatted for display;
  ``csv_download`` writes a long table's rows to the CSV file a chapter links.
* :mod:`~oraclegap.report.claims` -- ``Claims`` keeps a chapter's claims table and stops the
  chapter when one fails; ``published`` looks up a figure the papers print
  (``data/paper/published_figures.csv``) so a chapter can set it beside its own.
* :mod:`~oraclegap.report.drawing` -- ``draw_outcomes``, ``draw_counts``, ``draw_saturation``,
  ``panel_grid`` and ``placeholder_figure``.
"""

from .claims import PAPER_IDS, PUBLISHED_FILE, Claims, Published, claim_table, published, published_table
from .drawing import draw_counts, draw_outcomes, draw_saturation, panel_grid, placeholder_figure
from .markdown import callout, md, show_callout, show_lines, show_md, skipped_callout, solution
from .names import DISPLAY_NAMES, NULL_NAMES, STATISTIC_NAMES, display_name, member_name, test_name
from .numbers import (
    fmt,
    fmt_frac,
    fmt_interval,
    fmt_p,
    fmt_range,
    fmt_rate,
    fmt_share,
    fmt_signed,
    fmt_signed_interval,
    rounded,
)
from .prose import (
    ProseError,
    PValues,
    at_most,
    check,
    compare,
    direction_problems,
    path_words,
    position,
    share_problems,
    versus,
    wording_problems,
)
from .style import PALETTE, sequential_colors, use_style
from .tables import SHORT_WORD, TABLE_ATTRIBUTES, csv_download, table

__all__ = [
    "at_most",
    "wording_problems",
    "path_words",
    "versus",
    "PALETTE",
    "use_style",
    "sequential_colors",
    "fmt",
    "fmt_p",
    "fmt_interval",
    "fmt_signed",
    "table",
    "csv_download",
    "DISPLAY_NAMES",
    "display_name",
    "member_name",
    "md",
    "show_md",
    "claim_table",
    "placeholder_figure",
    "ProseError",
    "compare",
    "position",
    "check",
    "direction_problems",
    "share_problems",
    "PValues",
    "fmt_rate",
    "fmt_share",
    "fmt_range",
    "fmt_frac",
    "Claims",
    "Published",
    "published",
    "published_table",
    "callout",
    "show_callout",
    "solution",
    "skipped_callout",
    "draw_outcomes",
    "draw_counts",
    "draw_saturation",
    "panel_grid",
    "test_name",
    "fmt_signed_interval",
    "rounded",
    "show_lines",
    "TABLE_ATTRIBUTES",
    "SHORT_WORD",
    "STATISTIC_NAMES",
    "NULL_NAMES",
    "PAPER_IDS",
    "PUBLISHED_FILE",
]
