"""Pictures in the book's style: 0/1 outcomes as squares, a count table with its margins,
small multiples of saturation curves, a grid of panels no wider than the page, and a placeholder
for a figure skipped on a run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .style import PALETTE


def panel_grid(n: int, *, ncols: int = 2, panel: tuple[float, float] = (4.0, 3.2), **subplots):
    """A figure of ``n`` panels, ``panel`` = (width, height) inches each, in rows of at most
    ``ncols``: the figure stays about as wide as the page's text column, so its text is not shrunk
    with it as a long row of small panels is. Returns ``(fig, axes)``, ``axes`` the ``n`` panels in
    reading order (slots left over are removed); ``subplots`` go to ``plt.subplots`` (``sharey``
    ...)."""
    import matplotlib.pyplot as plt

    for name, v in (("n", n), ("ncols", ncols)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    w, h = (float(x) for x in panel)
    if not (w > 0 and h > 0):
        raise ValueError(f"panel must be a positive (width, height) in inches, got {panel!r}")
    cols = min(int(ncols), int(n))
    rows = -(-int(n) // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(w * cols, h * rows), squeeze=False, **subplots)
    flat = list(grid.ravel())
    for ax in flat[n:]:
        ax.remove()
    return fig, flat[:n]


def placeholder_figure(text: str) -> None:
    """Show a small captioned blank figure saying why a figure was skipped (e.g. data absent),
    so a labelled figure cell still has an image and its caption stays meaningful."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 1.5))
    ax.text(0.5, 0.5, text, ha="center", va="center")
    ax.set_axis_off()
    plt.show()


# ---------------------------------------------------------------------------- pictures
def draw_outcomes(ax, grid, *, row_labels: Sequence[str] | None = None, group: int | None = None,
                  title: str | None = None, colors: tuple[str, str] = (PALETTE[0], "#ffffff"),
                  row_notes: Sequence[str] | None = None) -> None:
    """Draw 0/1 outcomes as squares: one row per cell of a pool (or member), one square per response.

    ``grid`` is bool [rows, responses] (filled square: a correct response). ``group`` draws a
    separator every ``group`` rows (e.g. between prompts when rows are prompt x member cells);
    ``row_notes`` are printed at the right of each row (e.g. "3/4 covered").
    """
    from matplotlib.patches import Rectangle

    g = np.asarray(grid, dtype=bool)
    if g.ndim != 2 or 0 in g.shape:
        raise ValueError(f"grid must be a non-empty 2-d array of 0/1 outcomes, got shape {g.shape}")
    R, C = g.shape
    for r in range(R):
        for c in range(C):
            ax.add_patch(Rectangle((c + 0.08, R - 1 - r + 0.08), 0.84, 0.84, facecolor=colors[0] if g[r, c] else colors[1],
                                   edgecolor="0.35", lw=0.8))
        if row_notes is not None:
            ax.text(C + 0.3, R - 1 - r + 0.5, row_notes[r], va="center", fontsize=8)
    if group:
        for r in range(group, R, group):
            ax.axhline(R - r, color="0.2", lw=1.2, xmax=1.0)
    ax.set_xlim(0, C + (4 if row_notes is not None else 0.1))
    ax.set_ylim(-0.1, R + 0.1)
    ax.set_yticks([R - 1 - r + 0.5 for r in range(R)], list(row_labels) if row_labels is not None else [""] * R, fontsize=8)
    ax.set_xticks([])
    ax.tick_params(length=0)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.grid(False)
    if title:
        ax.set_title(title, fontsize=9)


def draw_counts(ax, counts, *, row_labels: Sequence[str], col_labels: Sequence[str], title: str | None = None,
                changes=None, margins: bool = True) -> None:
    """Draw a small count table as a grid of numbers with its row and column totals.

    ``changes`` (same shape, optional) is printed as ``+1``/``-1`` beside the changed cells, e.g.
    to show one 2 x 2 move of the margin-preserving chain.
    """
    from matplotlib.patches import Rectangle

    c = np.asarray(counts)
    if c.ndim != 2 or 0 in c.shape:
        raise ValueError(f"counts must be a non-empty 2-d array, got shape {c.shape}")
    R, C = c.shape
    if len(row_labels) != R or len(col_labels) != C:
        raise ValueError(f"need {R} row labels and {C} column labels")
    ch = None if changes is None else np.asarray(changes)
    for r in range(R):
        for j in range(C):
            y = R - 1 - r
            ax.add_patch(Rectangle((j, y), 1, 1, facecolor="#eef4fa" if ch is None or ch[r, j] == 0 else "#fde7c8",
                                   edgecolor="0.4"))
            ax.text(j + 0.5, y + 0.5, str(int(c[r, j])), ha="center", va="center", fontsize=11)
            if ch is not None and ch[r, j] != 0:
                ax.text(j + 0.92, y + 0.12, f"{int(ch[r, j]):+d}", ha="right", va="bottom", fontsize=7, color=PALETTE[3])
        if margins:
            ax.text(C + 0.35, R - 1 - r + 0.5, str(int(c[r].sum())), ha="center", va="center", fontsize=9, color="0.35")
    if margins:
        for j in range(C):
            ax.text(j + 0.5, -0.35, str(int(c[:, j].sum())), ha="center", va="center", fontsize=9, color="0.35")
    ax.set_xlim(-0.05, C + (0.8 if margins else 0.05))
    ax.set_ylim(-0.7 if margins else -0.05, R + 0.05)
    ax.set_xticks([j + 0.5 for j in range(C)], list(col_labels), fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks([R - 1 - r + 0.5 for r in range(R)], list(row_labels), fontsize=8)
    ax.tick_params(length=0)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.grid(False)
    if title:
        ax.set_title(title, fontsize=9, pad=18)


def draw_saturation(curves: pd.DataFrame, *, panel: str = "pool", frac: float | None = 0.9, ncols: int = 3,
                    colors: tuple[str, str] = (PALETTE[0], PALETTE[1])):
    """Small multiples of held-out saturation curves: one panel per value of ``curves[panel]``.

    ``curves`` holds rows of ``PoolSweep.saturation()`` (dataset, K, share, greedy, random) with a
    ``panel`` column naming the group (e.g. the pool family). In each panel every dataset is a thin
    line (greedy solid, random-pool mean dashed), and when all its datasets have the same M the
    median over them at each share is a thick line with markers; ``frac`` draws the reference line
    at that share of the whole pool's coverage (None: none). Colours and line styles are both in the
    legend, which takes the panel after the last group. Returns the figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    need = {panel, "dataset", "K", "share", "greedy", "random"}
    if not isinstance(curves, pd.DataFrame) or not need <= set(curves.columns):
        raise ValueError(f"curves must be a DataFrame with columns {sorted(need)} (PoolSweep.saturation() "
                         f"plus {panel!r}), got {type(curves).__name__}"
                         + (f" without {sorted(need - set(curves.columns))}" if isinstance(curves, pd.DataFrame) else ""))
    if curves.empty:
        raise ValueError("curves must have at least one row")
    if not isinstance(ncols, (int, np.integer)) or isinstance(ncols, bool) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    if frac is not None and not (isinstance(frac, (int, float)) and 0 < frac <= 1):
        raise ValueError(f"frac must lie in (0, 1] or be None, got {frac!r}")
    groups = list(dict.fromkeys(curves[panel]))
    slots = len(groups) + 1  # one panel per group and one for the legend
    ncols = min(ncols, slots)
    nrows = -(-slots // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.9 * ncols, 2.5 * nrows + 0.3), sharex=True, sharey=True,
                             squeeze=False)
    flat = axes.ravel()
    styles = {"greedy": "-", "random": "--"}
    for ax, name in zip(flat, groups, strict=False):
        d = curves[curves[panel] == name]
        for _, c in d.groupby("dataset", sort=False):
            for col, ls in styles.items():
                ax.plot(c["share"], c[col], color=colors[col == "random"], ls=ls, lw=0.8, alpha=0.45)
        Ks = sorted(set(d["K"].astype(int)))
        if len(Ks) == 1:
            med = d.groupby("share")[["greedy", "random"]].median()
            for col, ls in styles.items():
                ax.plot(med.index, med[col], color=colors[col == "random"], ls=ls, lw=2.2, marker="o", ms=3)
        if frac is not None:
            ax.axhline(frac, color="0.35", ls=":", lw=1)
        n = d["dataset"].nunique()
        m = f"{Ks[0]}" if len(Ks) == 1 else f"{Ks[0]}-{Ks[-1]}"
        ax.set_title(f"{name}\n{n} dataset{'s' if n != 1 else ''}, M = {m}", fontsize=9)
    for ax in flat[len(groups):]:
        ax.axis("off")
    for ax in flat[max(0, len(groups) - ncols):len(groups)]:  # no panel below: label the axis
        ax.set_xlabel("share of alternatives kept")
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("coverage / whole pool")
    handles = [Line2D([], [], color=colors[0], lw=0.8, alpha=0.6, label="greedy, one dataset"),
               Line2D([], [], color=colors[1], ls="--", lw=0.8, alpha=0.6, label="random pools (mean), one dataset"),
               Line2D([], [], color=colors[0], lw=2.2, marker="o", ms=3, label="greedy, median over datasets"),
               Line2D([], [], color=colors[1], ls="--", lw=2.2, marker="o", ms=3,
                      label="random pools, median over datasets")]
    if frac is not None:
        handles.append(Line2D([], [], color="0.35", ls=":", lw=1, label=f"{frac:.0%} of the whole pool"))
    flat[len(groups)].legend(handles=handles, loc="center", fontsize=8)
    fig.tight_layout()
    return fig
