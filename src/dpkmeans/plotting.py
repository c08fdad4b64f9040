"""One figure style for the whole book (DESIGN.md section 5)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

__all__ = ["use_book_style", "PALETTE", "new_figure"]

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
