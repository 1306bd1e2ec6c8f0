"""Figures of chapter ``gpt_mechanism``: the measures per candidate, GD's scan and the sensitivities."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ..gpt_icl.core.model import ATTENTIONS
from ..gpt_icl.core.tasks import PRETRAINING
from ..repro.typeset import attention_name, count
from .style import (
    SMALL,
    WIDE,
    first_panel_legend,
    legend_outside,
    log_ticks_125,
    mark_training_length,
)


def _model_grid(frame: pd.DataFrame, height: float = 4.4):
    """Axes: one row per attention, one column per target depth, and the (depth, attention) of each."""
    ds = sorted(frame["depth"].unique())
    atts = [a for a in ATTENTIONS if a in set(frame["attention"])]
    fig, axes = plt.subplots(len(atts), len(ds), figsize=(WIDE[0], height), sharex=True, sharey=True, squeeze=False)
    return fig, axes, [(r, c, d, a) for r, a in enumerate(atts) for c, d in enumerate(ds)]


def plot_alignment(alignment: pd.DataFrame, mixture: str, measure: str, train_examples: int) -> plt.Figure:
    """One panel per trained model (rows: attention, columns: target depth): ``measure`` (``pred_diff``, log
    scale, or ``cosine``) of each candidate against the prompt position on ``mixture``, the training length
    marked. Candidates without a value (the cosine of 3-NN and the context mean) are left out."""
    from .style import CANDIDATE, CANDIDATE_STYLE

    a = alignment[(alignment["mixture"] == mixture) & (alignment["candidate"] != "model")]
    fig, axes, cells = _model_grid(a)
    for r, c, depth, att in cells:
        ax = axes[r, c]
        for name, colour in CANDIDATE.items():
            g = a[(a["depth"] == depth) & (a["attention"] == att) & (a["candidate"] == name)].dropna(subset=[measure])
            if len(g):
                ax.plot(g["position"], g[measure], marker="o", ms=3, ls=CANDIDATE_STYLE[name], color=colour,
                        label=name, lw=2.4 if name.startswith("GD") else 1.3)
        mark_training_length(ax, train_examples)
        ax.set_title(f"depth {depth}, {attention_name(att)}", fontsize=9)
        if r == len(axes) - 1:
            ax.set_xlabel("prompt position k")
    if measure == "pred_diff":
        axes[0, 0].set_yscale("log")
        log_ticks_125(axes[0, 0].yaxis)  # shared y: one call labels every panel
    label = {"pred_diff": "prediction difference\n(share of label spread)",
             "cosine": r"cosine of $\partial\hat y / \partial x_{\mathrm{query}}$"}
    for row in axes:
        row[0].set_ylabel(label[measure], fontsize=SMALL)
    legend_outside(fig, *first_panel_legend(axes), fontsize=SMALL)
    return fig




def plot_gd_scan(gd_scan: pd.DataFrame, chosen: pd.DataFrame) -> plt.Figure:
    """One panel per trained model: GD's prediction difference to the model on the scan prompts over step size
    η (rows) and steps L (columns), at the chosen initial scale (log colour, shared); the chosen cell
    ringed."""
    import numpy as np
    from matplotlib.colors import LogNorm

    fig, axes, cells = _model_grid(gd_scan, height=4.0)
    ch = chosen.set_index(["depth", "attention"])
    panels = []
    for r, c, depth, att in cells:
        best = ch.loc[(depth, att)]
        g = gd_scan[(gd_scan["depth"] == depth) & (gd_scan["attention"] == att)
                    & (gd_scan["init_scale"] == best["gd_init_scale"])]
        panels.append((axes[r, c], depth, att, best, g.pivot(index="eta", columns="steps", values="pred_diff")))
    vals = np.concatenate([p[-1].to_numpy().ravel() for p in panels])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    norm = LogNorm(vmin=float(vals.min()), vmax=float(min(vals.max(), 10.0)))
    for ax, depth, att, best, m in panels:
        im = ax.imshow(np.clip(m.to_numpy(), norm.vmin, norm.vmax), origin="lower", aspect="auto", norm=norm,
                       cmap="viridis_r")
        # counts as the prose writes them (8 192), every other column labelled from the last when they crowd
        n, every = len(m.columns), 2 if len(m.columns) > 8 else 1
        ax.set_xticks(range(n), [count(v) if (n - 1 - i) % every == 0 else "" for i, v in enumerate(m.columns)],
                      fontsize=SMALL, rotation=90)
        ax.set_yticks(range(len(m.index)), [f"{v:g}" for v in m.index], fontsize=SMALL)
        ax.plot(list(m.columns).index(best["gd_steps"]), list(m.index).index(best["gd_eta"]), "o", ms=9,
                mfc="none", mec="white", mew=1.8)
        ax.set_title(f"depth {depth}, {attention_name(att)}\nstart scale {best['gd_init_scale']:g}", fontsize=SMALL)
    for row in axes:
        row[0].set_ylabel("step size η", fontsize=SMALL)
    for ax in axes[-1]:
        ax.set_xlabel("GD steps L", fontsize=SMALL)
    fig.colorbar(im, ax=axes, label="prediction difference (scan prompts)", shrink=0.8)
    return fig


def plot_sensitivity_examples(examples: pd.DataFrame, depth: int, attention: str) -> plt.Figure:
    """One panel per example prompt: ``∂ŷ/∂x_query`` coordinate by coordinate for the model (black outline)
    and each candidate that has one, side by side (pretraining mixture, last position)."""
    import numpy as np

    from .style import CANDIDATE

    e = examples[(examples["depth"] == depth) & (examples["attention"] == attention)
                 & (examples["mixture"] == PRETRAINING)]
    prompts = sorted(e["prompt"].unique())
    names = ["model"] + [n for n in CANDIDATE if n in set(e["candidate"])]
    fig, axes = plt.subplots(1, len(prompts), figsize=(WIDE[0], 2.8), sharey=True, squeeze=False)
    width = 0.8 / len(names)
    for ax, b in zip(axes[0], prompts):
        for i, name in enumerate(names):
            g = e[(e["prompt"] == b) & (e["candidate"] == name)].sort_values("coordinate")
            x = np.asarray(g["coordinate"]) + (i - (len(names) - 1) / 2) * width
            if name == "model":
                ax.bar(x, g["sensitivity"], width, color="white", edgecolor="black", lw=1.2, label="trained model")
            else:
                ax.bar(x, g["sensitivity"], width, color=CANDIDATE[name], label=name)
        ax.axhline(0, color="0.3", lw=0.6)
        ax.set(title=f"test prompt {b + 1}", xlabel="input coordinate i", xticks=sorted(e["coordinate"].unique()))
    axes[0, 0].set_ylabel(r"$\partial\hat y / \partial x_{\mathrm{query},i}$")
    legend_outside(fig, *first_panel_legend(axes), fontsize=SMALL)
    return fig
