"""Figures of chapter ``diffusion_score``: the score-matching targets and the errors of the score."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from .style import (
    GD,
    SINGLE,
    SMALL,
    WIDE,
    legend_below,
    log_ticks_125,
    ordered_colours,
)


def plot_dsm_targets(binned: pd.DataFrame, curve: dict) -> plt.Figure:
    """Left: REB's DSM targets averaged in bins of x_t (±2 s.e.) on the true score. Right: one prompt's
    data, the score at its random start and after GD, against the true score."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(WIDE[0], WIDE[1] + 0.9))  # legends below: the panels keep the width
    ax1.plot(binned["x_t"], binned["score"], color="0.2", lw=1.4, label=r"$\nabla\log p_t$")
    ax1.errorbar(binned["x_t"], binned["mean_y"], yerr=2 * binned["se"], fmt="o", ms=3, color="0.55",
                 label="mean DSM target in bin")
    ax1.set(xlabel=r"$x_t$", ylabel="score")
    legend_below(ax1, fontsize=SMALL)
    ax2.plot(curve["data_x"], curve["data_y"], ".", ms=3, color="0.7", label="the prompt's DSM targets")
    ax2.plot(curve["x"], curve["score"], color="0.2", lw=1.4, label=r"$\nabla\log p_t$")
    ax2.plot(curve["x"], curve["start"], ":", color="0.5", label="network at the start")
    ax2.plot(curve["x"], curve["gd"], color=GD, label="network after GD")
    ax2.set(xlabel=r"$x_t$", ylabel="score", ylim=(-6, 6))
    legend_below(ax2, ncol=2, fontsize=SMALL)
    return fig


def plot_score_errors(errors: pd.DataFrame) -> plt.Figure:
    """Relative L² error of the learned score over GD steps (mean over prompts): GD from the random
    start, GD from w = 0, and the transformer for each H."""
    fig, ax = plt.subplots(figsize=(SINGLE[0] + 1.2, SINGLE[1] + 0.9))
    mean = errors.groupby(["method", "H", "step"], sort=False)["score_error"].mean().reset_index()
    styles = {"GD": ("-", GD), "GD from w = 0": (":", GD)}
    sizes = ordered_colours(sorted(mean.loc[mean["method"] == "transformer", "H"].unique()))  # darker = more H
    for (method, H), g in mean.groupby(["method", "H"], sort=False):
        ls, color = styles.get(method, ("--", sizes.get(H)))
        label = method if method != "transformer" else f"transformer, H = {H}"
        ax.plot(g["step"], g["score_error"], ls, color=color, label=label)
    ax.axhline(1.0, color="0.75", lw=0.8)
    ax.set(xlabel="step l", ylabel="relative score error (log scale)", yscale="log")
    log_ticks_125(ax.yaxis)  # 0.5, 1, 2 as plain numbers, not 3 × 10⁰
    legend_below(ax, ncol=2, fontsize=SMALL)
    return fig
