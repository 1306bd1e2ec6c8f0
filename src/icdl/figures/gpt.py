"""Figures of the chapters on trained transformers' in-context learning: ``gpt_icl`` (objectives 1–3),
``gpt_depth`` (objective 4), ``gpt_plateau`` (the context-mean plateau) and ``gpt_n01`` (the schedule scans)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ..gpt_icl.core.baselines import CONTEXT_MEAN, LEAST_SQUARES, NEAREST_NEIGHBOURS, is_mlp
from ..gpt_icl.core.model import ATTENTIONS
from ..gpt_icl.core.schedule import AT_SWITCH, SOFTMAX_ON
from ..gpt_icl.core.tasks import PRETRAINING
from ..repro.typeset import rate
from .style import (
    ATTENTION,
    BASELINE,
    BASELINE_STYLE,
    MIXTURE_PALETTE,
    MU,
    SINGLE,
    SMALL,
    WIDE,
    legend_outside,
    mark_training_length,
    ordered_colours,
    r2_limits,
)

# ---- gpt_icl: GPT-2-style in-context learning of deep networks -------------------------------


def _signed(x: float) -> str:
    """A number in a label with a minus sign, not a hyphen (μ = −0.5)."""
    return f"{x:g}".replace("-", "−")


def _reference_lines(ax, baselines: pd.DataFrame, depth: int, methods=(LEAST_SQUARES, CONTEXT_MEAN),
                     suffix: str = "") -> None:
    """The pretraining mixture's least squares (dash-dot) and context mean (dotted) in one panel: the yardsticks
    every sec.-5 figure of R² is read against (least squares' R² dips below the axis where a prompt has about
    as many examples as parameters, d + 1, and is clipped there by :func:`r2_limits`)."""
    if not len(baselines):
        return
    for method in methods:
        g = baselines[(baselines["depth"] == depth) & (baselines["mixture"] == PRETRAINING)
                      & (baselines["method"] == method)]
        ax.plot(g["position"], g["r2"], BASELINE_STYLE[method], color=BASELINE[method], lw=1.1,
                label=method + suffix)


def plot_icl_mixtures(curves: pd.DataFrame, baselines: pd.DataFrame, attention: str, train_examples: int,
                      title: str = "") -> plt.Figure:
    """One panel per target depth: the transformer's R² per prompt position for each test mixture (line and
    bootstrap band), the MLP baseline at its positions (markers, same colour), least squares (dash-dot) and
    the context mean (dotted) for the pretraining mixture, and the positions past the training length (shaded)."""
    ds = sorted(curves["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 3.0), sharey=True, squeeze=False)
    c = curves[curves["attention"] == attention]
    colours = ordered_colours(c["mixture"].unique(), MIXTURE_PALETTE)
    for ax, depth in zip(axes[0], ds):
        for mixture, color in colours.items():
            g = c[(c["depth"] == depth) & (c["mixture"] == mixture)]
            ax.plot(g["position"], g["r2"], color=color, label=f"ω = {mixture}")
            ax.fill_between(g["position"], g["lo"], g["hi"], color=color, alpha=0.2, lw=0)
            if len(baselines):
                b = baselines[(baselines["depth"] == depth) & (baselines["mixture"] == mixture)
                              & is_mlp(baselines["method"])]
                ax.plot(b["position"], b["r2"], "D", ms=4, mfc="none", color=color)
        _reference_lines(ax, baselines, depth, suffix=f", {PRETRAINING}")
        mark_training_length(ax, train_examples)
        ax.set(title=f"{depth}-layer targets", xlabel="query position k")
    r2_limits(axes[0], [c[c["depth"] == depth]["r2"] for depth in ds])
    axes[0, 0].set_ylabel(f"R² ({attention} attention)")
    legend_outside(axes[0, -1], fontsize=SMALL, title="◇: trained MLP", title_fontsize=SMALL)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_icl_methods(curves: pd.DataFrame, baselines: pd.DataFrame, train_examples: int) -> plt.Figure:
    """Pretraining mixture only: softmax and ReLU transformers against least squares, 3-NN, the context mean
    and the trained MLP, one panel per target depth."""
    ds = sorted(curves["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 3.0), sharey=True, squeeze=False)
    c = curves[curves["mixture"] == PRETRAINING]
    b = baselines[baselines["mixture"] == PRETRAINING] if len(baselines) else baselines
    for ax, depth in zip(axes[0], ds):
        for att in ATTENTIONS:
            g = c[(c["depth"] == depth) & (c["attention"] == att)]
            ax.plot(g["position"], g["r2"], color=ATTENTION[att], label=f"transformer, {att}")
        if len(b):
            for method in (LEAST_SQUARES, NEAREST_NEIGHBOURS, CONTEXT_MEAN):
                g = b[(b["depth"] == depth) & (b["method"] == method)]
                ax.plot(g["position"], g["r2"], BASELINE_STYLE[method], color=BASELINE[method], lw=1.1,
                        label=method)
            g = b[(b["depth"] == depth) & is_mlp(b["method"])]
            ax.plot(g["position"], g["r2"], "D", ms=4, color=BASELINE["MLP"], label="trained MLP")
        mark_training_length(ax, train_examples)
        ax.set(title=f"{depth}-layer targets", xlabel="query position k")
    r2_limits(axes[0], [c[(c["depth"] == depth) & c["attention"].isin(ATTENTIONS)]["r2"] for depth in ds])
    axes[0, 0].set_ylabel("R² (pretraining mixture)")
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig


def plot_shortfall(frame: pd.DataFrame, tolerance: float) -> plt.Figure:
    """Objective 1 as judged, one panel per target depth: each model's shortfall below the MLP at the MLP's
    positions (:func:`icdl.gpt_icl.core.verdicts.shortfall_frame`) with its 90 % interval, the two attentions
    side by side, on an axis fitted to the numbers; the tolerance line (dashed) and 0 (thin)."""
    ds = sorted(frame["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 2.8), sharey=True, squeeze=False)
    for ax, depth in zip(axes[0], ds):
        for k, att in enumerate(ATTENTIONS):
            g = frame[(frame["depth"] == depth) & (frame["attention"] == att)]
            x = g["position"] + (k - 0.5) * 0.8  # the two attentions beside each other at every position
            ax.errorbar(x, g["value"], yerr=[g["value"] - g["lo"], g["hi"] - g["value"]], fmt="o", ms=3.5,
                        lw=1.1, capsize=2, color=ATTENTION[att], label=f"transformer, {att}")
        ax.axhline(tolerance, ls="--", lw=1.0, color="0.3", label=f"tolerance {tolerance:g}")
        ax.axhline(0.0, lw=0.6, color="0.6")
        ax.set(title=f"{depth}-layer targets", xlabel="query position k")
    axes[0, 0].set_ylabel("R² shortfall below the MLP")
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig


def plot_icl_switch(curves: pd.DataFrame, baselines: pd.DataFrame, train_examples: int) -> plt.Figure:
    """Pretraining mixture, one panel per target depth: the softmax model, the same weights run with ReLU
    attention before any ReLU training ("at switch", dashed) and the ReLU model after its own training, with
    least squares (dash-dot) and the context mean (dotted)."""
    ds = sorted(curves["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 3.0), sharey=True, squeeze=False)
    c = curves[curves["mixture"] == PRETRAINING]
    styles = {"softmax": (ATTENTION["softmax"], "-"), AT_SWITCH: (ATTENTION["relu"], "--"),
              "relu": (ATTENTION["relu"], "-")}
    for ax, depth in zip(axes[0], ds):
        for att, (color, style) in styles.items():
            g = c[(c["depth"] == depth) & (c["attention"] == att)]
            if len(g):
                ax.plot(g["position"], g["r2"], style, color=color, label=att)
        _reference_lines(ax, baselines, depth)
        mark_training_length(ax, train_examples)
        ax.set(title=f"{depth}-layer targets", xlabel="query position k")
    r2_limits(axes[0], [c[c["depth"] == depth]["r2"] for depth in ds])
    axes[0, 0].set_ylabel("R² (pretraining mixture)")
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig


def plot_icl_length(curves: pd.DataFrame, train_examples: int, baselines: pd.DataFrame | None = None) -> plt.Figure:
    """Objective 2's length comparison, pretraining mixture, one panel per target depth: the ReLU model, its
    softmax twin (the same steps from the same weights: dotted) and the softmax model it started from (solid),
    each the mean over seeds with the seeds' spread as a band; least squares (dash-dot) from ``baselines``."""
    ds = sorted(curves["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 3.0), sharey=True, squeeze=False)
    c = curves[curves["mixture"] == PRETRAINING]
    styles = {"softmax": (ATTENTION["softmax"], "-", "softmax"),
              SOFTMAX_ON: (ATTENTION["softmax"], ":", "softmax, trained on\nas long as ReLU"),
              "relu": (ATTENTION["relu"], "-", "ReLU")}
    for ax, depth in zip(axes[0], ds):
        for att, (color, style, label) in styles.items():
            g = c[(c["depth"] == depth) & (c["attention"] == att)]
            if len(g):
                ax.plot(g["position"], g["r2"], style, color=color, lw=1.6, label=label)
                if "lo" in g:
                    ax.fill_between(g["position"], g["lo"], g["hi"], color=color, alpha=0.15, lw=0)
        _reference_lines(ax, pd.DataFrame() if baselines is None else baselines, depth, methods=(LEAST_SQUARES,))
        mark_training_length(ax, train_examples)
        ax.set(title=f"{depth}-layer targets", xlabel="query position k")
    r2_limits(axes[0], [c[c["depth"] == depth]["r2"] for depth in ds])
    axes[0, 0].set_ylabel("R² (pretraining mixture)")
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig


def plot_icl_depth(table: pd.DataFrame, baselines: pd.DataFrame) -> plt.Figure:
    """ICDL Fig. 7, ours: R² against the number of transformer layers, one panel per attention, one line per
    number of in-context examples (darker = more), bootstrap bands; least squares (dash-dot) and the context
    mean (dotted) at the same positions, in the same colours."""
    atts = [a for a in ATTENTIONS if a in set(table["attention"])]
    fig, axes = plt.subplots(1, len(atts), figsize=WIDE, sharey=True, squeeze=False)
    counts = sorted(table["examples"].unique())
    colours = ordered_colours(counts)
    for ax, att in zip(axes[0], atts):
        g = table[table["attention"] == att]
        for p in counts:
            h = g[g["examples"] == p].sort_values("n_layer")
            ax.plot(h["n_layer"], h["r2"], "-o", ms=4, color=colours[p], label=f"{int(p)} examples")
            ax.fill_between(h["n_layer"], h["lo"], h["hi"], color=colours[p], alpha=0.2, lw=0)
            for method in (LEAST_SQUARES, CONTEXT_MEAN):
                b = baselines[(baselines["method"] == method) & (baselines["examples"] == p)]
                if len(b):
                    ax.axhline(float(b["r2"].iloc[0]), ls=BASELINE_STYLE[method], lw=1.0, color=colours[p])
        ax.set(title=f"{att} attention", xlabel="transformer layers", xticks=sorted(g["n_layer"].unique()))
    axes[0, 0].set_ylabel("R² (pretraining mixture)")
    legend_outside(axes[0, -1], fontsize=SMALL, title="dash-dot: least squares\ndotted: context mean",
                   title_fontsize=SMALL)
    return fig


def plot_plateau(history: pd.DataFrame, levels: pd.DataFrame) -> plt.Figure:
    """One panel per target family: mean R² on validation prompts against the training step, with the
    context mean (dotted) and least squares (dash-dot) on the same prompts."""
    fams = list(dict.fromkeys(history["family"]))
    fig, axes = plt.subplots(1, len(fams), figsize=(WIDE[0], 2.8), sharey=True, squeeze=False)
    lv = levels.set_index("family")
    for ax, fam in zip(axes[0], fams):
        g = history[history["family"] == fam]
        ax.plot(g["step"], g["val_r2"], "-", color=ATTENTION["softmax"], label="softmax transformer")
        for method in (CONTEXT_MEAN, LEAST_SQUARES):
            ax.axhline(lv.loc[fam, method.replace(" ", "_")], ls=BASELINE_STYLE[method], color=BASELINE[method],
                       lw=1.1, label=method)
        ax.set(title=fam, xlabel="training step")
    axes[0, 0].set_ylabel("validation R² (mean over positions)")
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig


def plot_icl_training(history: pd.DataFrame) -> plt.Figure:
    """Training loss (MSE on fresh prompts) against steps, per depth and attention."""
    fig, ax = plt.subplots(figsize=SINGLE)
    styles = {"softmax": "-", "relu": "--"}
    colours = ordered_colours(sorted(history["depth"].unique()))
    for depth, g in history.groupby("depth"):
        for att, h in g.groupby("attention"):
            ax.plot(h["step"], h["loss"], styles[att], color=colours[depth], lw=1.2, label=f"{depth} layers, {att}")
    ax.set(xlabel="step", ylabel="training MSE", yscale="log")
    legend_outside(ax, fontsize=SMALL, title="targets (colour), attention\n(solid: softmax, dashed: ReLU)",
                   title_fontsize=SMALL)
    return fig


def plot_icl_param_shift(curves: pd.DataFrame, train_examples: int,
                         least_squares: pd.DataFrame | None = None) -> plt.Figure:
    """ICDL objective 3: R² per position for target parameters from N(μ, I), one panel per target depth;
    colour: μ, solid: softmax, dashed: ReLU attention, dash-dot (thin): least squares on the same prompts
    (``least_squares``: :func:`icdl.gpt_icl.core.evaluation.least_squares_param_shift`)."""
    ds = sorted(curves["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 3.0), sharey=True, squeeze=False)
    styles = {"softmax": "-", "relu": "--"}
    curves = curves[curves["attention"].isin(styles)]  # the two attentions (not the softmax twin)
    for ax, depth in zip(axes[0], ds):
        for mu, g in curves[curves["depth"] == depth].groupby("mu", sort=False):
            for att, h in g.groupby("attention"):
                ax.plot(h["position"], h["r2"], styles[att], color=MU.get(float(mu), "0.5"), lw=1.3,
                        label=f"μ = {_signed(mu)}, {att}")
            if least_squares is not None:
                ls = least_squares[(least_squares["depth"] == depth) & (least_squares["mu"] == mu)]
                ax.plot(ls["position"], ls["r2"], BASELINE_STYLE[LEAST_SQUARES], color=MU.get(float(mu), "0.5"),
                        lw=0.9, label=f"μ = {_signed(mu)}, least squares")
        mark_training_length(ax, train_examples)
        ax.set(title=f"{depth}-layer targets", xlabel="query position k")
    r2_limits(axes[0], [curves[curves["depth"] == depth]["r2"] for depth in ds])
    axes[0, 0].set_ylabel("R², target parameters ~ N(μ, I)")
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig


# ---- the diffusion score in context --------------------------------------------------------------


# ---- gpt_mechanism: which algorithm does a trained model run? -------------------------------------------


# ---- gpt_scale: the main study trained longer ---------------------------------------------------------




# ---- the schedule scans (chapter gpt_n01) ------------------------------------------------------------------


def plot_schedule_scan(scans: dict[str, tuple[pd.DataFrame, dict, dict]]) -> plt.Figure:
    """One panel per task (``scans``: its name to the scan's ``history``, ``levels`` and chosen schedule, as
    :func:`icdl.gpt_icl.schedules.scan.choose` gives it): the validation R² of every run against the training step,
    colour the learning rate (darker: larger), solid batch 64 and dashed batch 32 (other batches dotted), the context
    mean (dotted) and least squares (dash-dot) on the same prompts, and the chosen run's chosen step (a dot)."""
    fig, axes = plt.subplots(1, len(scans), figsize=(WIDE[0], 3.0), sharey=True, squeeze=False)
    lrs = sorted({float(lr) for h, _, _ in scans.values() for lr in h["lr"].unique()})
    colours = ordered_colours(lrs)
    dash = {64: "-", 32: "--"}
    for ax, (task, (history, levels, chosen)) in zip(axes[0], scans.items()):
        for (lr, batch), g in history.groupby(["lr", "batch"], sort=True):
            ax.plot(g["step"], g["val_r2"], dash.get(int(batch), ":"), color=colours[float(lr)], lw=1.3,
                    label=f"lr {rate(float(lr))}, batch {int(batch)}")
        for method in (CONTEXT_MEAN, LEAST_SQUARES):
            ax.axhline(levels[method.replace(" ", "_")], ls=BASELINE_STYLE[method], color=BASELINE[method], lw=1.1,
                       label=method)
        g = history[(history["lr"] == chosen["lr"]) & (history["batch"] == chosen["batch"])]
        at = g[g["step"] == chosen["steps"]]
        ax.plot(at["step"], at["val_r2"], "o", color="black", ms=5, zorder=5, label="chosen")
        ax.set(title=task, xlabel="training step")
    axes[0, 0].set_ylabel("validation R² (mean over positions)")
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig
