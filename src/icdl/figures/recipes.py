"""Validation curves of chapter ``gpt_n01``: the recipe scan's (:mod:`icdl.gpt_icl.recipes`) and the models trained
until flat (:mod:`icdl.gpt_icl.objectives.flat`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ..gpt_icl.core.baselines import CONTEXT_MEAN, LEAST_SQUARES
from ..repro.typeset import attention_name
from .style import ATTENTION, BASELINE, BASELINE_STYLE, SMALL, WIDE, legend_under_row, thousands

#: a recipe's line style (the colour is the attention's, as in every figure of the book)
RECIPE_STYLE = {"incumbent": "-", "cosine": "--"}


def plot_recipe_scan(history: pd.DataFrame, levels: pd.DataFrame, chosen: dict[str, dict]) -> plt.Figure:
    """One panel per attention (``history``: the scan's rows, ``candidate``, ``attention``, ``replicate``, ``step``,
    ``val_r2``): each run's validation R² against the step, in its attention's colour, solid for the incumbent recipe
    and dashed for the cosine one, one line per seed; the context mean (dotted) and least squares (dash-dot) on the
    same validation prompts, the mean over the seeds' prompt sets (``levels``); the panel's title names the recipe
    the rule chose (``chosen``: :func:`icdl.gpt_icl.recipes.scan.choose`)."""
    atts = list(dict.fromkeys(history["attention"]))
    fig, axes = plt.subplots(1, len(atts), figsize=(WIDE[0], 3.0), squeeze=False, sharey=True)
    for ax, att in zip(axes[0], atts):
        for (name, rep), g in history[history["attention"] == att].groupby(["candidate", "replicate"], sort=False):
            g = g.sort_values("step")
            ax.plot(g["step"], g["val_r2"], RECIPE_STYLE.get(name, ":"), color=ATTENTION[att], lw=1.3,
                    label=f"{name}, seed {rep}", alpha=1.0 if rep == 0 else 0.6)
        for method in (CONTEXT_MEAN, LEAST_SQUARES):
            ax.axhline(float(levels[method.replace(" ", "_")].mean()), ls=BASELINE_STYLE[method],
                       color=BASELINE[method], lw=1.1, label=method)
        ax.set(title=f"{attention_name(att)} attention: {chosen[att]['candidate']} chosen", xlabel="training step")
        thousands(ax)
    axes[0, 0].set_ylabel("validation R² (mean over positions)")
    legend_under_row(fig, axes[0, -1], ncol=3, fontsize=SMALL)
    return fig


def plot_flat_curves(history: pd.DataFrame) -> plt.Figure:
    """The models trained until flat (:mod:`icdl.gpt_icl.objectives.flat`), one panel per target depth
    (``history``: the run's logged rows, ``depth``, ``attention``, ``seed``, ``step``, ``val_r2`` and
    ``val_context_mean`` where a validation curve was scored): each seed's validation R² against the step in its
    attention's colour, and the context mean on the same prompts (dotted, the mean over seeds); the shaded span is
    the last quarter of the steps, over which a flat curve gains less than the scan's margin
    (:func:`icdl.gpt_icl.core.curves.flat`)."""
    h = history[history["val_r2"].notna()]
    depths = sorted(h["depth"].unique())
    fig, axes = plt.subplots(1, len(depths), figsize=(WIDE[0], 2.9), squeeze=False)
    for ax, depth in zip(axes[0], depths):
        own = h[h["depth"] == depth]
        for (att, seed), g in own.groupby(["attention", "seed"], sort=True):
            g = g.sort_values("step")
            ax.plot(g["step"], g["val_r2"], "-", color=ATTENTION[att], lw=1.3, alpha=1.0 if seed == 0 else 0.6,
                    label=f"{attention_name(att)}, seed {seed}")
        ax.axhline(float(own["val_context_mean"].mean()), ls=BASELINE_STYLE[CONTEXT_MEAN],
                   color=BASELINE[CONTEXT_MEAN], lw=1.1, label=CONTEXT_MEAN)
        last = float(own["step"].max())
        ax.axvspan(0.75 * last, last, color="0.9", zorder=0)
        ax.set(title=f"target depth {depth}", xlabel="training step")
        thousands(ax)
    axes[0, 0].set_ylabel("validation R²")
    legend_under_row(fig, axes[0, -1], ncol=4, fontsize=SMALL)
    return fig
