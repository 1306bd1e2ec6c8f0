"""Figures of chapter ``gpt_scale``: the trend of the shortfall, its forecast, and the two widths."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..gpt_icl.core.baselines import LEAST_SQUARES
from ..gpt_icl.core.model import ATTENTIONS
from ..repro.typeset import attention_name, count
from .style import (
    ATTENTION,
    BASELINE,
    BASELINE_STYLE,
    SMALL,
    WIDE,
    first_panel_legend,
    legend_outside,
    ordered_colours,
)

#: the rows of :func:`plot_scale_trend`: column of :func:`icdl.gpt_icl.scale.trend`, axis label, reference line
_SCALE_ROWS = (("shortfall", "shortfall below\nthe MLP"), ("lead_ls", "lead over\nleast squares"),
               ("lead_knn", "lead over 3-NN"))


def plot_scale_trend(trend: pd.DataFrame, fits: pd.DataFrame, fit_from: dict, offset: dict | None = None
                     ) -> plt.Figure:
    """Rows: the shortfall below the MLP, the lead over least squares, the lead over 3-NN (R² differences at
    the training length); columns: target depth. x: steps on the target family (a model's own step less
    ``offset[attention]``, :func:`icdl.gpt_icl.scale.trend.target_offset`), log 2 scale, over the snapshots
    from the main study's length on (those the fit uses; a thin line in the attention's colour marks that
    length); one line per attention with its band (the trend's, 90 % over the test prompts); on the shortfall
    row the fitted line (dashed); 0 dotted. No tolerance line: objective 1's number is another quantity (the
    largest shortfall over positions, the next figure's)."""
    offset = offset or {}
    ds = sorted(trend["depth"].unique())
    fig, axes = plt.subplots(len(_SCALE_ROWS), len(ds), figsize=(WIDE[0], 5.6), sharex=True, sharey="row",
                             squeeze=False)
    for c, depth in enumerate(ds):
        for att in [a for a in ATTENTIONS if a in set(trend["attention"])]:
            off = offset.get(att, 0)
            g = trend[(trend["depth"] == depth) & (trend["attention"] == att)
                      & (trend["step"] >= fit_from[att])].sort_values("step")
            x = g["step"] - off
            for r, (col, _) in enumerate(_SCALE_ROWS):
                ax = axes[r, c]
                ax.plot(x, g[col], "-o", ms=3, color=ATTENTION[att], label=f"{attention_name(att)} attention")
                ax.fill_between(x, g[f"{col}_lo"], g[f"{col}_hi"], color=ATTENTION[att], alpha=0.2, lw=0)
                ax.axvline(fit_from[att] - off, color=ATTENTION[att], lw=0.8, alpha=0.5)
            f = fits[(fits["depth"] == depth) & (fits["attention"] == att)]
            if len(f):
                f = f.iloc[0]
                xs = np.array([f["first_target"], f["last_target"]], dtype=float)
                axes[0, c].plot(xs, f["shortfall_line_a"] + f["per_doubling"] * np.log2(xs), ls="--", lw=1.0,
                                color=ATTENTION[att])
        for r in range(len(_SCALE_ROWS)):
            axes[r, c].axhline(0, color="0.6", lw=0.8, ls=":")
        axes[0, c].set_title(f"target depth {depth}", fontsize=9)
        axes[-1, c].set_xscale("log", base=2)
        axes[-1, c].xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: count(v)))
    for r, (_, label) in enumerate(_SCALE_ROWS):
        axes[r, 0].set_ylabel(label, fontsize=SMALL)
    fig.supxlabel("steps on the target family (thin lines: the main study's length)", fontsize=9)
    legend_outside(fig, *first_panel_legend(axes), fontsize=SMALL)
    return fig


def plot_scale_forecast(points: pd.DataFrame, fits: pd.DataFrame, tolerance: float, paper_steps: int,
                        offset: dict | None = None) -> plt.Figure:
    """One panel per attention: objective 1's number (the largest shortfall below the MLP over its positions up
    to the training length) against steps on the target family (log scale; a model's own step less
    ``offset[attention]``), one colour per target depth, over the fitted snapshots; each fitted line (dashed)
    extended to the paper's steps, with the 90 % band of its value there (the snapshots' scatter) as a bar
    beside that step (the bars cut at the axis below -0.06); objective 1's tolerance and the paper's training
    length (dotted)."""
    offset = offset or {}
    atts = [a for a in ATTENTIONS if a in set(fits["attention"])]
    fig, axes = plt.subplots(1, len(atts), figsize=(WIDE[0], WIDE[1] + 1.0), sharey=True, squeeze=False)
    colours = ordered_colours(sorted(fits["depth"].unique()))
    for ax, att in zip(axes[0], atts):
        for i, (depth, colour) in enumerate(colours.items()):
            f = fits[(fits["depth"] == depth) & (fits["attention"] == att)].iloc[0]
            g = points[(points["depth"] == depth) & (points["attention"] == att) & (points["step"] >= f["first"])]
            ax.plot(g["step"] - offset.get(att, 0), g["obj1"], "o", ms=4, color=colour, label=f"target depth {depth}")
            xs = np.geomspace(f["first_target"], paper_steps, 50)
            ax.plot(xs, f["obj1_line_a"] + f["obj1_per_doubling"] * np.log2(xs), "--", lw=1.0, color=colour)
            at = paper_steps * 1.25 ** (i - 1)  # the bars side by side about the paper's steps
            ax.plot([at, at], [f["obj1_at_horizon_lo"], f["obj1_at_horizon_hi"]], lw=4, alpha=0.6, color=colour,
                    solid_capstyle="butt", label="its line at the paper's steps: 90 % band" if i == 0 else None)
        ax.axhline(tolerance, color="0.45", lw=1.0, label=f"objective 1's tolerance ({tolerance})")
        top = max(fits["obj1_at_horizon_hi"].max(), points["obj1"].max()) + 0.01
        ax.set_ylim(max(fits["obj1_at_horizon_lo"].min(), -0.06) - 0.005, top)  # long bars cut at the axis
        ax.axhline(0, color="0.6", lw=0.8, ls=":")
        ax.axvline(paper_steps, color="0.3", lw=1.0, ls=":", label=f"the paper's {count(paper_steps)} steps")
        ax.set(xscale="log", title=f"{attention_name(att)} attention", xlabel="steps on the target family")
    axes[0, 0].set_ylabel("objective 1's number: largest\nshortfall below the MLP")
    # below the panels (and their x labels), so that they keep the width
    fig.legend(*first_panel_legend(axes), loc="outside lower center", ncol=2, fontsize=SMALL)
    return fig


#: the line of each width in :func:`plot_scale_width` (the colour stays the attention's)
_WIDTH_STYLE = ({"ls": "-", "marker": "o"}, {"ls": "--", "marker": "s"})


def plot_scale_width(curves: list[pd.DataFrame], tolerance: float, warm_ends: list[float] = (),
                     least_squares: dict[int, float] | None = None) -> plt.Figure:
    """One panel per target depth: the shortfall below the MLP against training FLOPs (log scale) for each width
    (``curves``: :func:`icdl.gpt_icl.scale.flops_curve` of each study, narrowest first; solid and dashed), one
    colour per attention, with the 90 % bootstrap bands and objective 1's tolerance. ``warm_ends``: per curve,
    the FLOPs of its softmax model at the end of the warm phase (a dark grey triangle on the panel's top edge,
    filled for the first width and open for the second: that model's snapshots left of it were trained on tanh
    targets). ``least_squares``: its shortfall per target depth (dash-dot). The legend sits below the panels."""
    ds = sorted(curves[0]["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 3.8), sharey=True, squeeze=False)
    for ax, depth in zip(axes[0], ds):
        for curve, style in zip(curves, _WIDTH_STYLE):
            width = int(curve["width"].iloc[0])
            for att in [a for a in ATTENTIONS if a in set(curve["attention"])]:
                g = curve[(curve["depth"] == depth) & (curve["attention"] == att)].sort_values("flops")
                ax.plot(g["flops"], g["shortfall"], color=ATTENTION[att], ms=3, lw=1.2,
                        label=f"{attention_name(att)}, width {width}", **style)
                ax.fill_between(g["flops"], g["shortfall_lo"], g["shortfall_hi"], color=ATTENTION[att], alpha=0.15,
                                lw=0)
        ax.axhline(tolerance, color="0.45", lw=1.0, label=f"objective 1's tolerance ({tolerance})")
        ax.axhline(0, color="0.6", lw=0.8, ls=":")
        if least_squares is not None and depth in least_squares:
            ax.axhline(least_squares[depth], color=BASELINE[LEAST_SQUARES], lw=1.0, ls=BASELINE_STYLE[LEAST_SQUARES],
                       label="least squares")
        for end, filled, curve in zip(warm_ends, (True, False), curves):
            # a mark on the top edge, not a vertical line: a thin line across the panel reads as a grid line
            ax.plot([end], [1.0], transform=ax.get_xaxis_transform(), clip_on=False, ls="none", marker="v", ms=7,
                    color="0.25", mfc="0.25" if filled else "white", mew=1.2,
                    label=f"end of the warm phase, width {int(curve['width'].iloc[0])}")
        ax.set(xscale="log")
        ax.set_title(f"target depth {depth}", fontsize=9, pad=10)  # clear of the triangles on the top edge
    axes[0, 0].set_ylabel("shortfall below the MLP\n(R² at the training length)")
    axes[0, len(ds) // 2].set_xlabel("training FLOPs (forward and backward, from the first step)")
    # below the panels, so that three of them keep the column's width
    fig.legend(*first_panel_legend(axes), loc="outside lower center", ncol=3, fontsize=SMALL)
    return fig
