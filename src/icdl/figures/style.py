"""The book's one figure style: sizes, palette, pinned rcParams."""

from __future__ import annotations

import contextlib

import matplotlib as mpl
import seaborn as sns

#: sizes in inches: a full-width figure and a single panel
WIDE = (8.0, 3.2)
SINGLE = (4.2, 3.2)

PALETTE = sns.color_palette("colorblind")

#: pinned rcParams (on top of seaborn's theme) so pixel baselines do not drift with defaults
RC = {
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "lines.linewidth": 1.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.constrained_layout.use": True,
    "image.cmap": "viridis",
}


def use_style() -> None:
    """Apply the book's style globally (a chapter's first cell)."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, rc=RC)


@contextlib.contextmanager
def style():
    """The book's style inside a ``with`` block (used by the pixel tests)."""
    with mpl.rc_context():
        use_style()
        yield
