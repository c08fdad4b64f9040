"""One figure style for the whole book (DESIGN.md section 5)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

__all__ = ["use_book_style", "PALETTE", "new_figure", "plot_curves"]

#: Colour-blind safe palette used by every chapter.
PALETTE = sns.color_palette("colorblind")


def use_book_style() -> None:
    """Set the seaborn theme every chapter uses (call once at the top of a notebook)."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE)
    plt.rcParams.update({"figure.figsize": (6.4, 3.6), "figure.dpi": 100, "savefig.dpi": 150,
                         "axes.titlesize": "medium"})


def new_figure(ncols: int = 1, width: float = 6.4, height: float = 3.6):
    """A figure with ``ncols`` side-by-side axes in the book style; returns (fig, axes)."""
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), constrained_layout=True)
    return fig, axes


def plot_curves(ax, summaries: pd.DataFrame, x: str, metric: str = "nicv",
                reference: str | None = None) -> None:
    """One line per ``algorithm`` of summary rows (``{metric}_mean``, ``_ci_low``,
    ``_ci_high``) against column ``x``, with 95% error bars; the rows whose algorithm is
    ``reference`` are drawn as a dashed black line (a constant if there is one row)."""
    algorithms = [a for a in dict.fromkeys(summaries["algorithm"]) if a != reference]
    for colour, algorithm in zip(PALETTE, algorithms):
        curve = summaries[summaries["algorithm"] == algorithm].sort_values(x)
        mean = curve[f"{metric}_mean"]
        ax.errorbar(curve[x], mean, yerr=[mean - curve[f"{metric}_ci_low"],
                                          curve[f"{metric}_ci_high"] - mean],
                    marker="o", markersize=4, capsize=2, color=colour, label=algorithm)
    if reference is not None:
        ref = summaries[summaries["algorithm"] == reference].sort_values(x)
        if len(ref) == 1:
            ax.axhline(ref[f"{metric}_mean"].iloc[0], color="black", linestyle="--",
                       label=reference)
        elif len(ref):
            ax.plot(ref[x], ref[f"{metric}_mean"], color="black", linestyle="--",
                    label=reference)
