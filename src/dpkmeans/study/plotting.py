"""One figure style for the whole book: legible at the column width, colour-blind safe.

The book's text column is about 680 px wide, and a figure is drawn at 100 pixels an inch, so a
figure :data:`COLUMN_INCHES` wide is shown at its natural size, with the style's fonts (11 to
12 points, 15 to 17 px) as large on the page as in the notebook. Wider figures are shrunk, and
their text with them: :func:`new_figure` lays out several panels in rows of at most
:data:`PANELS_PER_ROW` instead. Every series gets a colour of the Okabe-Ito palette, which
readers with any common colour-vision deficiency can tell apart, and its own marker and line
style (:func:`series_style`), so that overlapping series stay distinct in print and in grey.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from cycler import cycler

__all__ = ["COLUMN_INCHES", "DPI", "LINESTYLES", "MARKERS", "PALETTE", "PANELS_PER_ROW",
           "new_figure", "plot_curves", "series_style", "use_book_style"]

#: The width of the book's text column in inches at :data:`DPI`: a figure this wide is shown
#: at its natural size.
COLUMN_INCHES = 6.8
#: Pixels an inch of the figures the notebooks show.
DPI = 100
#: At most this many panels side by side in a column-wide figure.
PANELS_PER_ROW = 2

#: The Okabe-Ito palette (Okabe and Ito, *Color Universal Design*, 2008): blue, orange,
#: bluish green, vermillion, reddish purple, sky blue, yellow, black.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000"]
#: One marker a series, in the palette's order.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
#: One line style a series, in the palette's order.
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 3)),
              (0, (8, 3))]


def series_style(i: int) -> dict[str, Any]:
    """The colour, marker and line style of the ``i``-th series of a figure (they cycle after
    eight series)."""
    j = i % len(PALETTE)
    return {"color": PALETTE[j], "marker": MARKERS[j], "linestyle": LINESTYLES[j]}


def use_book_style() -> None:
    """Set the style every chapter uses (call once at the top of a notebook)."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE)
    plt.rcParams.update({
        "figure.figsize": (COLUMN_INCHES, 3.6), "figure.dpi": DPI, "savefig.dpi": DPI,
        "axes.titlesize": "medium",
        # lines drawn without a style of their own still differ in more than colour
        "axes.prop_cycle": cycler(color=PALETTE) + cycler(linestyle=LINESTYLES),
        "lines.markersize": 5, "errorbar.capsize": 2, "legend.fontsize": "small",
    })


def new_figure(ncols: int = 1, width: float = COLUMN_INCHES, height: float = 3.6, *,
               nrows: int | None = None, **subplots: Any):
    """A figure of ``ncols`` panels in the book style, at most :data:`PANELS_PER_ROW` a row
    unless ``nrows`` is given; ``height`` is the height of one row. Returns ``(fig, axes)``:
    one axes for one panel, else a flat array of the panels in reading order (panels of the
    last row that are not needed are removed)."""
    panels = ncols
    if nrows is None:
        nrows = math.ceil(panels / PANELS_PER_ROW)
    cols = math.ceil(panels / nrows)
    fig, axes = plt.subplots(nrows, cols, figsize=(width, height * nrows),
                             constrained_layout=True, squeeze=False, **subplots)
    flat = axes.ravel()
    for ax in flat[panels:]:
        fig.delaxes(ax)
    return fig, (flat[0] if panels == 1 else flat[:panels])


def plot_curves(ax, summaries: pd.DataFrame, x: str, metric: str = "nicv",
                reference: str | None = None, labels: dict[str, str] | None = None) -> None:
    """One line per ``algorithm`` of summary rows (``{metric}_mean``, ``_ci_low``,
    ``_ci_high``) against column ``x``, with 95% error bars, each in its own
    :func:`series_style`; the rows whose algorithm is ``reference`` are drawn as a dashed black
    line (a constant if there is one row). ``labels`` renames algorithms in the legend."""
    labels = labels or {}
    algorithms = [a for a in dict.fromkeys(summaries["algorithm"]) if a != reference]
    for i, algorithm in enumerate(algorithms):
        curve = summaries[summaries["algorithm"] == algorithm].sort_values(x)
        mean = curve[f"{metric}_mean"]
        ax.errorbar(curve[x], mean, yerr=[mean - curve[f"{metric}_ci_low"],
                                          curve[f"{metric}_ci_high"] - mean],
                    capsize=2, label=labels.get(algorithm, algorithm), **series_style(i))
    if reference is not None:
        ref = summaries[summaries["algorithm"] == reference].sort_values(x)
        label = labels.get(reference, reference)
        if len(ref) == 1:
            ax.axhline(ref[f"{metric}_mean"].iloc[0], color="black", linestyle="--",
                       label=label)
        elif len(ref):
            ax.plot(ref[x], ref[f"{metric}_mean"], color="black", linestyle="--", label=label)
