"""The book's one figure style: sizes, palette, pinned rcParams."""

from __future__ import annotations

import seaborn as sns

from ..repro import theme

#: sizes in inches: a full-width figure and a single panel. The book's text column is about 671 px wide at a
#: 1280 px window (:data:`COLUMN_PX`); an SVG figure is drawn at 96 px per inch and shrunk to the column if
#: wider, so a full-width figure of 7 in is shown at its own size and a point of font is 4/3 px.
WIDE = (7.0, 3.0)
SINGLE = (4.2, 3.0)
COLUMN_PX = 671
#: the book's palette and its smallest font (points), from the theme every chapter applies (icdl.repro.theme)
PALETTE, SMALL = theme.PALETTE, theme.SMALL


# ---- one colour per meaning, the same in every figure of the book --------------------------------

#: attention activation of a trained transformer
ATTENTION = {"softmax": PALETTE[0], "relu": PALETTE[1]}
#: reference methods beside a trained model (line styles fixed too: see BASELINE_STYLE)
#: (3-NN in olive: the palette's tan had the ReLU orange's hue, 8° apart, and read as the same colour)
NEAREST = "#999933"
BASELINE = {"least squares": "0.1", "context mean": "0.45", "3-NN": NEAREST, "MLP": PALETTE[2]}
BASELINE_STYLE = {"least squares": "-.", "context mean": ":", "3-NN": "--"}
#: candidate in-context algorithms held against a trained model (chapter gpt_mechanism): the baselines keep
#: their colours and line styles; GD on the N-layer network (the hypothesis) and ridge have their own
#: gradient descent on an N-layer network, wherever it is drawn (gpt_mechanism's candidate, the diffusion chapter's
#: fitted score): a wine red that no attention, baseline or other candidate comes near (the palette's vermillion
#: reads as the ReLU transformer's orange); ridge in a plain red, 55° of hue from it (a purple 36° away was
#: read as the same line)
GD = "#AA3377"
CANDIDATE = {"GD, N-layer network": GD, "MLP (Adam, last epoch)": PALETTE[2], "least squares": "0.1",
             "ridge": "#CC3311", "3-NN": NEAREST, "context mean": "0.45"}
CANDIDATE_STYLE = {"GD, N-layer network": "-", "MLP (Adam, last epoch)": "-", "ridge": "-", **BASELINE_STYLE}
#: ordered quantities -- depths of targets or models, layer widths, the hidden size H, learning rates, test mixtures
#: of inputs from the pretraining mixture (1, 0) to (.5, .5), prompt lengths: one purple ramp, darker = larger (or
#: further from the training distribution). Its hue (−52° in CIE L*a*b*) lies over 40° from the softmax blue and from
#: GD's wine and far from the ReLU orange: the blue-green and orange-red ramps it replaces ended in the attention
#: colours, and a reader took a depth or a mixture for an attention (tests/test_figures.py holds it apart). Its
#: light end (L* 64) keeps a contrast of 2.8 on white and 2.2 on the grey band beyond the training length (the
#: first ramp's L* 80 gave 1.7, a line a reader could hardly see); four anchors, L* 64 to 6 with the chroma highest
#: at L* 25, keep four steps 29 ΔE apart where lightness alone would give 19
ORDERED_RAMP = ("#a693c3", "#7559ab", "#3e2395", "#180c2f")
DEPTH_PALETTE = MIXTURE_PALETTE = "ordered"
#: the mean μ of shifted target parameters: near-black for the training distribution, a light and a dark step of the
#: ordered ramp for the shifts below and above it (a dark colour beside the near-black reads as the same line: dark
#: colours differ by lightness alone)
MU = {0.0: "0.2", -0.5: ORDERED_RAMP[0], 0.5: "#6a4ea7"}  # 0.5: the ramp at 0.4, 36 ΔE from its light end
#: kinds of job in a timed run (computation appendix): two greys that read on white (the palette's yellow was 1.4:1,
#: its light blue the softmax transformer's hue)
STAGE = {"train": "0.3", "evaluate": "0.62"}
#: the terms of a construction drawn as slots or nodes (the theory chapters' diagrams): hues no meaning of the book
#: takes (the palette's blue and orange, which these diagrams used, are the attentions)
TERMS = ("0.75", "#cc78bc", "0.5", "0.3", "0.1", "0.62")


#: the ReLU construction of Theorem 1 where it is drawn beside fitted blocks (softmax chapter)
CONSTRUCTION = "#8c510a"


def colour_map(palette: str = DEPTH_PALETTE):
    """The colour map of ``palette``: :data:`ORDERED_RAMP` for ``"ordered"``, else seaborn's map of that name."""
    from matplotlib.colors import LinearSegmentedColormap

    if palette == "ordered":
        return LinearSegmentedColormap.from_list("ordered", ORDERED_RAMP)
    return sns.color_palette(palette, as_cmap=True)


def width_colour(width: float):
    """The colour of a layer width on one fixed scale (the ordered ramp, 8 to 1024 units, log-spaced): the same
    width has the same colour in every figure and profile, whichever other widths are drawn beside it."""
    import math

    pos = (math.log2(max(width, 1)) - 3) / (10 - 3)
    return colour_map()(min(1.0, max(0.15, pos)))


def ordered_colours(values, palette: str = DEPTH_PALETTE) -> dict:
    """A colour per value of an ordered quantity (depth, width, mixture), light to dark, spread over the whole
    colour map: seaborn's own sampling keeps to the middle, where four mixtures came out as two near-identical
    pairs."""
    import numpy as np

    values = list(values)
    cmap = colour_map(palette)
    where = np.linspace(0.0, 1.0, len(values)) if len(values) > 1 else [0.6]
    return {v: tuple(cmap(float(x))[:3]) for v, x in zip(values, where)}


def thousands(ax, axis: str = "x") -> None:
    """Tick labels of a count axis (training steps) as the prose writes counts: ``10 000``, not ``10000``."""
    from matplotlib.ticker import FuncFormatter

    from ..repro.typeset import count

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(FuncFormatter(lambda v, _: count(v) if float(v).is_integer() else f"{v:g}"))


def legend_outside(where, *handles_labels, **kw):
    """The legend to the right of the axes (or figure), never on the data (``handles, labels`` optional)."""
    import matplotlib.figure

    if isinstance(where, matplotlib.figure.Figure):
        return where.legend(*handles_labels, loc="outside right upper", **kw)
    return where.legend(*handles_labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kw)


def legend_under_row(fig, ax, ncol: int = 3, **kw):
    """The legend of ``ax`` (a row's last panel) under the whole row, centred, in ``ncol`` columns: a row of
    training curves keeps the figure's width for its panels (a legend to the right took a third of it, and
    "10 000" at one panel's right end touched the next panel's "0")."""
    handles, labels = ax.get_legend_handles_labels()
    fig.subplots_adjust(bottom=0.6 / fig.get_figheight())  # the tick labels and the x label above the figure's edge
    return fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol, **kw)


def legend_below(ax, *handles_labels, ncol: int = 1, **kw):
    """The legend under an axes' x label, centred, in ``ncol`` columns: for panels side by side, where a legend
    to the right of each would take the width the data need."""
    return ax.legend(*handles_labels, loc="upper center", bbox_to_anchor=(0.5, -0.3), borderaxespad=0.0,
                     ncol=ncol, **kw)


#: the label of the shaded region past the training length, in every figure over prompt positions, and its grey
#: (also the band of a training curve's last quarter)
BEYOND_TRAINING = "beyond the training length"
BAND = "0.9"


def mark_training_length(ax, train_examples: int) -> None:
    """Shade the prompt positions past ``train_examples`` (call after plotting): a band behind the data that no
    one reads as a grid line, labelled :data:`BEYOND_TRAINING` for the legend."""
    left, right = ax.get_xlim()
    if train_examples >= right:  # no position past the training length is drawn: no band, no legend entry
        return
    ax.axvspan(train_examples, right, color=BAND, lw=0, zorder=0, label=BEYOND_TRAINING)
    ax.set_xlim(left, right)


def integer_steps(*axes) -> None:
    """Ticks at whole numbers only, for axes that count steps (no tick at 2.5 of an integer count)."""
    from matplotlib.ticker import MaxNLocator

    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _plain_tick(v: float, _=None) -> str:
    """A tick's number as the prose writes it: a count with its thousands space from 1 000 on (``10 000``, the bug:
    softmax's "10000" beside "12 000 steps" in the caption), else as short as it reads (``0.5``, ``2``)."""
    from ..repro.typeset import count

    return count(v) if abs(v) >= 1000 and float(v).is_integer() else f"{v:g}"


def log_ticks_125(*axes) -> None:
    """Label a log axis (``ax.xaxis`` or ``ax.yaxis``) at 1, 2 and 5 × 10^k only, as plain numbers: on a range of
    a decade or two matplotlib labels the minor ticks too, and their labels (2×10⁻², 3×10⁻², …) overprint one
    another at the book's width. An axis that spans under a decade gets 3 and 7 too, under half a decade every
    digit (the bug: diffusion_score's score errors between 0.6 and 2 labelled at 1 and 2 alone, a curve ending at 0.7
    read as 0.5). Call it after the data are drawn: the span is the axis' view."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis in axes:
        lo, hi = sorted(axis.get_view_interval())
        decades = math.log10(hi / lo) if lo > 0 else 2.0
        subs = (1.0, 2.0, 5.0) if decades > 1.2 else (1.0, 2.0, 3.0, 5.0, 7.0) if decades > 0.5 else range(1, 10)
        axis.set_major_locator(LogLocator(base=10, subs=tuple(float(x) for x in subs)))
        axis.set_major_formatter(FuncFormatter(_plain_tick))
        axis.set_minor_formatter(NullFormatter())


def r2_limits(axes, values, floor: float = -1.0) -> None:
    """Shared y-limits for panels of R² curves (``axes`` a list, ``values`` one array per panel) that show
    every curve down to ``floor``; below it the axis is cut, and each panel whose curves go lower says so in
    its title (nothing vanishes without a word)."""
    import numpy as np

    lows = []
    for v in values:
        v = np.asarray(list(v), dtype=float)
        v = v[np.isfinite(v)]
        lows.append(float(v.min()) if len(v) else 0.0)
    bottom = max(floor, min(-0.05, min(lows) - 0.05))
    for ax, low in zip(axes, lows):
        ax.set_ylim(bottom, 1.02)
        if low < floor:
            low_text = f"{low:.1f}".replace("-", "−")  # the number's sign, not the title's hyphens (3-layer)
            ax.set_title(f"{ax.get_title()}\n(down to {low_text})", fontsize=9)


def rendered_px(fontsize_pt: float, figure_width_in: float) -> float:
    """How tall a font of ``fontsize_pt`` points is on screen, in CSS px, in a figure ``figure_width_in`` wide
    shown in the book's column (shrunk to :data:`COLUMN_PX` if wider, never enlarged)."""
    natural = figure_width_in * 96
    return fontsize_pt * 4 / 3 * min(1.0, COLUMN_PX / natural)


def first_panel_legend(axes) -> tuple[list, list]:
    """The legend entries of all panels, each name once (panels draw the same candidates)."""
    seen = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    return list(seen.values()), list(seen)
