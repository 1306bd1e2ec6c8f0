"""The book's matplotlib theme: the colour-blind palette and pinned rcParams, applied by every chapter's first
cell (:func:`icdl.repro.chapter.start`) and by the pixel tests. The figures' sizes and one colour per meaning
are :mod:`icdl.figures.style`'s, built on this palette."""

from __future__ import annotations

import contextlib

import matplotlib as mpl
import seaborn as sns

#: the palette every colour of the book is taken from
PALETTE = sns.color_palette("colorblind")
#: the smallest font of any text in a figure (legends, annotations, tick labels of dense axes), in points:
#: 9 pt is 12 px at the book's width (11.3 px if a tight bounding box widens the figure to 7.5 in), against
#: 16 px body text
SMALL = 9.0


#: pinned rcParams (on top of seaborn's theme) so pixel baselines do not drift with defaults
RC = {
    "figure.dpi": 100,
    "savefig.dpi": 100,   # the pixel baselines; the book's figures are SVG (repro.chapter.start)
    "svg.hashsalt": "icdl",  # the SVG's element ids from a fixed salt: a rerun draws the same bytes
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "legend.fontsize": SMALL,
    "legend.title_fontsize": SMALL,
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
