"""Figures of the chapters on trained transformers' in-context learning: ``gpt_icl`` (objectives 1–3),
``gpt_depth`` (objective 4), ``gpt_plateau`` (the context-mean plateau) and ``gpt_n01`` (the schedule scans)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ..gpt_icl.core.baselines import CONTEXT_MEAN, LEAST_SQUARES, NEAREST_NEIGHBOURS, is_mlp
from ..gpt_icl.core.model import ATTENTIONS
from ..gpt_icl.core.schedule import AT_SWITCH, SOFTMAX_ON
from ..gpt_icl.core.tasks import PRETRAINING
from ..repro.typeset import attention_name, named_attentions, rate
from .style import (
    ATTENTION,
    BAND,
    BASELINE,
    BASELINE_STYLE,
    MIXTURE_PALETTE,
    MU,
    SINGLE,
    SMALL,
    WIDE,
    legend_outside,
    legend_under_row,
    log_ticks_125,
    mark_training_length,
    ordered_colours,
    r2_limits,
    thousands,
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
    axes[0, 0].set_ylabel(f"R² ({attention_name(attention)} attention)")
    legend_outside(axes[0, -1], fontsize=SMALL, title="◇: trained MLP", title_fontsize=SMALL)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_icl_methods(curves: pd.DataFrame, baselines: pd.DataFrame, train_examples: int) -> plt.Figure:
    """Pretraining mixture only: softmax and ReLU transformers against least squares, 3-NN, the context mean
    and the trained MLP, one column per target depth. The top row shows every position on the R² scale; the
    bottom row the same lines from the MLP's first position to the training length on an axis fitted to the
    transformers and the MLP there, and to least squares and 3-NN at the training length (:func:`zoom_limits`;
    least squares' plunge near k = d + 1 and the context mean leave it): the gaps the objectives judge, a few
    hundredths of R², are flat on the full axis."""
    ds = sorted(curves["depth"].unique())
    fig, axes = _full_and_zoomed(len(ds), sharey="row")
    c = curves[curves["mixture"] == PRETRAINING]
    b = baselines[baselines["mixture"] == PRETRAINING] if len(baselines) else baselines
    first = int(b.loc[is_mlp(b["method"]), "position"].min()) if len(b) and is_mlp(b["method"]).any() else 1
    zoomed = []
    for col, depth in enumerate(ds):
        for row, ax in enumerate(axes[:, col]):
            upto = train_examples if row else float("inf")  # the zoomed row stops at the training length
            for att in ATTENTIONS:
                g = c[(c["depth"] == depth) & (c["attention"] == att) & (c["position"] <= upto)]
                ax.plot(g["position"], g["r2"], color=ATTENTION[att], label=f"transformer, {attention_name(att)}")
                zoomed.append(g.loc[g["position"].between(first, train_examples), "r2"])
            if len(b):
                for method in (LEAST_SQUARES, NEAREST_NEIGHBOURS, CONTEXT_MEAN):
                    g = b[(b["depth"] == depth) & (b["method"] == method) & (b["position"] <= upto)]
                    ax.plot(g["position"], g["r2"], BASELINE_STYLE[method], color=BASELINE[method], lw=1.1,
                            label=method)
                    if method != CONTEXT_MEAN:  # at the training length: least squares is wild near k = d + 1
                        zoomed.append(g.loc[g["position"] == train_examples, "r2"])
                g = b[(b["depth"] == depth) & is_mlp(b["method"])]
                ax.plot(g["position"], g["r2"], "D", ms=4, color=BASELINE["MLP"], label="trained MLP")
                zoomed.append(g["r2"])
    _frame_full_and_zoomed(axes, ds, first, train_examples, "R² (pretraining mixture)")
    r2_limits(axes[0], [c[(c["depth"] == depth) & c["attention"].isin(ATTENTIONS)]["r2"] for depth in ds])
    axes[1, 0].set_ylim(*zoom_limits(zoomed))
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig


def _full_and_zoomed(columns: int, sharey: str | bool = False):
    """A figure of two rows of panels, one column per target depth: every position on the top row, a zoom on
    the positions a claim judges below it (:func:`_frame_full_and_zoomed` labels them)."""
    return plt.subplots(2, columns, figsize=(WIDE[0], 5.6), sharey=sharey, squeeze=False,
                        gridspec_kw={"height_ratios": (1.0, 0.9)})


def _frame_full_and_zoomed(axes, depths, first: int, train_examples: int, ylabel: str) -> None:
    """The frame of a :func:`_full_and_zoomed` figure, drawn once its lines are in: each column's title and the
    positions past the training length shaded on the top row; the bottom row's positions ``first`` to the
    training length, its label saying so."""
    for col, depth in enumerate(depths):
        mark_training_length(axes[0, col], train_examples)
        axes[0, col].set(title=f"{depth}-layer targets")
        axes[1, col].set(xlim=(first - 1, train_examples + 1), xlabel="query position k")
    axes[0, 0].set_ylabel(ylabel)
    axes[1, 0].set_ylabel(f"R², zoomed (k = {first} to {train_examples})")


def zoom_limits(values, pad: float = 0.1) -> tuple[float, float]:
    """The y-limits of a zoomed R² panel: the range of ``values`` (arrays; NaNs ignored) widened by ``pad`` of
    itself on each side, the top at most a little above 1 (R²'s ceiling)."""
    import numpy as np

    v = np.concatenate([np.asarray(list(x), dtype=float) for x in values])
    v = v[np.isfinite(v)]
    lo, hi = float(v.min()), float(v.max())
    span = max(hi - lo, 0.01)
    return lo - pad * span, min(hi + pad * span, 1.0 + pad * span)


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
                        lw=1.1, capsize=2, color=ATTENTION[att], label=f"transformer, {attention_name(att)}")
        ax.axhline(tolerance, ls="--", lw=1.0, color="0.3", label=f"tolerance {tolerance:g}")
        ax.axhline(0.0, lw=0.6, color="0.6")
        ax.set(title=f"{depth}-layer targets", xlabel="query position k")
    axes[0, 0].set_ylabel("R² shortfall below the MLP")
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig


def plot_icl_switch(curves: pd.DataFrame, baselines: pd.DataFrame, train_examples: int) -> plt.Figure:
    """Pretraining mixture, one panel per target depth: the softmax model, the same weights run with ReLU
    attention before any ReLU training ("at switch", dashed) and the ReLU model after its own training, with
    least squares (dash-dot) and the context mean (dotted), as the normalised error 1 − R² on a log axis: the
    weights at the switch err tens of times the label variance and the trained models a few hundredths of it,
    and an R² axis cut at −1 would lose the first. The axis holds every transformer curve (:func:`error_limits`);
    least squares' plunge near k = d + 1 may leave it."""
    ds = sorted(curves["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 3.0), sharey=True, squeeze=False)
    c = curves[curves["mixture"] == PRETRAINING]
    styles = {"softmax": (ATTENTION["softmax"], "-"), AT_SWITCH: (ATTENTION["relu"], "--"),
              "relu": (ATTENTION["relu"], "-")}
    drawn = []
    for ax, depth in zip(axes[0], ds):
        for att, (color, style) in styles.items():
            g = c[(c["depth"] == depth) & (c["attention"] == att)]
            if len(g):
                ax.plot(g["position"], 1 - g["r2"], style, color=color, label=named_attentions(att))
                drawn.append(1 - g["r2"])
        if len(baselines):
            for method in (LEAST_SQUARES, CONTEXT_MEAN):
                g = baselines[(baselines["depth"] == depth) & (baselines["mixture"] == PRETRAINING)
                              & (baselines["method"] == method)]
                ax.plot(g["position"], 1 - g["r2"], BASELINE_STYLE[method], color=BASELINE[method], lw=1.1,
                        label=method)
        mark_training_length(ax, train_examples)
        ax.set(title=f"{depth}-layer targets", xlabel="query position k", yscale="log")
    axes[0, 0].set_ylim(*error_limits(drawn))
    axes[0, 0].set_ylabel("1 − R² (log; lower is better)")
    legend_outside(axes[0, -1], fontsize=SMALL)
    return fig


def error_limits(values) -> tuple[float, float]:
    """Log-axis limits that hold every positive value of ``values`` (arrays of 1 − R²; NaNs and values ≤ 0
    ignored), with a margin of a factor 1.6 on each side."""
    import numpy as np

    v = np.concatenate([np.asarray(list(x), dtype=float) for x in values])
    v = v[np.isfinite(v) & (v > 0)]
    return float(v.min()) / 1.6, float(v.max()) * 1.6


def plot_icl_length(curves: pd.DataFrame, train_examples: int, baselines: pd.DataFrame | None = None) -> plt.Figure:
    """Objective 2's length comparison, pretraining mixture, one panel per target depth: the ReLU model, its
    softmax twin (the same steps from the same weights: dotted) and the softmax model it started from (solid),
    each the mean over seeds with the seeds' spread as a band; least squares (dash-dot) from ``baselines``."""
    ds = sorted(curves["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 3.0), sharey=True, squeeze=False)
    c = curves[curves["mixture"] == PRETRAINING]
    styles = {"softmax": (ATTENTION["softmax"], "-", "softmax"),
              SOFTMAX_ON: (ATTENTION["softmax"], ":", "softmax twin (trained\non as long as ReLU)"),
              "relu": (ATTENTION["relu"], "-", "ReLU")}  # the attention's name as every legend writes it
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
    number of in-context examples (darker = more), each point with its interval as an error bar, the counts side by
    side (shaded bands of three counts covered one another); the part of an interval past R² = 1, R²'s ceiling, is
    not drawn. Least squares (dash-dot) and the context mean (dotted) at the same positions, in the same colours."""
    atts = [a for a in ATTENTIONS if a in set(table["attention"])]
    fig, axes = plt.subplots(1, len(atts), figsize=WIDE, sharey=True, squeeze=False)
    counts = sorted(table["examples"].unique())
    colours = ordered_colours(counts)
    for ax, att in zip(axes[0], atts):
        g = table[table["attention"] == att]
        for i, p in enumerate(counts):
            h = g[g["examples"] == p].sort_values("n_layer")
            x = h["n_layer"] + (i - (len(counts) - 1) / 2) * 0.22  # the counts beside each other at every depth
            top = h["hi"].clip(upper=1.0)
            ax.errorbar(x, h["r2"], yerr=[h["r2"] - h["lo"], (top - h["r2"]).clip(lower=0)], fmt="-o", ms=4,
                        lw=1.3, elinewidth=1.0, capsize=2, color=colours[p], label=f"{int(p)} examples")
            for method in (LEAST_SQUARES, CONTEXT_MEAN):
                b = baselines[(baselines["method"] == method) & (baselines["examples"] == p)]
                if len(b):
                    ax.axhline(float(b["r2"].iloc[0]), ls=BASELINE_STYLE[method], lw=1.0, color=colours[p])
        ax.set(title=f"{attention_name(att)} attention", xlabel="transformer layers",
               xticks=sorted(g["n_layer"].unique()))
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
        thousands(ax)
    axes[0, 0].set_ylabel("validation R² (mean over positions)")
    legend_under_row(fig, axes[0, -1], fontsize=SMALL)
    return fig


def plot_training_by_depth(history: pd.DataFrame, quarter: float = 0.25) -> plt.Figure:
    """One panel per target depth: each attention's training loss against the step, the mean over its seeds
    (thick, smoothed over five logs) and each seed (thin), on a log axis; shaded: the last ``quarter`` of the steps,
    over which :func:`icdl.gpt_icl.core.learning.late_fall` measures how much a model still learned."""
    ds = sorted(history["depth"].unique())
    fig, axes = plt.subplots(1, len(ds), figsize=(WIDE[0], 3.0), sharey=True, squeeze=False)
    last = float(history["step"].max())
    for ax, depth in zip(axes[0], ds):
        for att in ATTENTIONS:
            g = history[(history["depth"] == depth) & (history["attention"] == att)]
            for _, s in g.groupby("seed"):
                ax.plot(s["step"], s["loss"], color=ATTENTION[att], lw=0.5, alpha=0.35)
            mean = g.groupby("step")["loss"].mean().rolling(5, center=True, min_periods=1).mean()
            ax.plot(mean.index, mean.to_numpy(), color=ATTENTION[att], lw=1.8,
                    label=f"transformer, {attention_name(att)}")
        ax.axvspan(last * (1 - quarter), last, color=BAND, lw=0, zorder=0, label="last quarter of the steps")
        ax.set(title=f"{depth}-layer targets", xlabel="training step", yscale="log")
        thousands(ax)
        log_ticks_125(ax.yaxis)  # 0.2, 0.5, 1 as plain numbers; every minor tick labelled overprinted (0.9 0.8 0.7)
    axes[0, 0].set_ylabel("training MSE")
    legend_under_row(fig, axes[0, -1], fontsize=SMALL, title="thin: each seed", title_fontsize=SMALL)
    return fig


def plot_icl_training(history: pd.DataFrame) -> plt.Figure:
    """Training loss (MSE on fresh prompts) against steps, per depth and attention."""
    fig, ax = plt.subplots(figsize=SINGLE)
    styles = {"softmax": "-", "relu": "--"}
    colours = ordered_colours(sorted(history["depth"].unique()))
    for depth, g in history.groupby("depth"):
        for att, h in g.groupby("attention"):
            ax.plot(h["step"], h["loss"], styles[att], color=colours[depth], lw=1.2,
                    label=f"{depth} layers, {attention_name(att)}")
    ax.set(xlabel="step", ylabel="training MSE", yscale="log")
    thousands(ax)
    legend_outside(ax, fontsize=SMALL, title="targets (colour), attention\n(solid: softmax, dashed: ReLU)",
                   title_fontsize=SMALL)
    return fig


def plot_icl_param_shift(curves: pd.DataFrame, train_examples: int,
                         least_squares: pd.DataFrame | None = None) -> plt.Figure:
    """ICDL objective 3: R² per position for target parameters from N(μ, I), one column per target depth;
    colour: μ, solid: softmax, dashed: ReLU attention, dash-dot (thin): least squares on the same prompts
    (``least_squares``: :func:`icdl.gpt_icl.core.evaluation.least_squares_param_shift`). The top row shows every
    position on one axis; the bottom row the transformers from a quarter of the training length to the training
    length, each depth on an axis fitted to its own curves (:func:`zoom_limits`): the falls judged there, a few
    hundredths at the shallow targets, are flat on an axis that reaches down to the deep targets' collapse."""
    ds = sorted(curves["depth"].unique())
    fig, axes = _full_and_zoomed(len(ds))
    styles = {"softmax": "-", "relu": "--"}
    curves = curves[curves["attention"].isin(styles)]  # the two attentions (not the softmax twin)
    first = max(1, train_examples // 4)
    for col, depth in enumerate(ds):
        zoomed = []  # each depth's zoom on its own axis: the deep targets' fall would flatten the shallow ones
        for row, ax in enumerate(axes[:, col]):
            upto = train_examples if row else float("inf")
            for mu, g in curves[(curves["depth"] == depth) & (curves["position"] <= upto)].groupby("mu", sort=False):
                for att, h in g.groupby("attention"):
                    ax.plot(h["position"], h["r2"], styles[att], color=MU.get(float(mu), "0.5"), lw=1.3,
                            label=f"μ = {_signed(mu)}, {attention_name(att)}")
                    if row:
                        zoomed.append(h.loc[h["position"] >= first, "r2"])
                if least_squares is not None:
                    ls = least_squares[(least_squares["depth"] == depth) & (least_squares["mu"] == mu)
                                       & (least_squares["position"] <= upto)]
                    ax.plot(ls["position"], ls["r2"], BASELINE_STYLE[LEAST_SQUARES], color=MU.get(float(mu), "0.5"),
                            lw=0.9, label=f"μ = {_signed(mu)}, least squares")
        axes[1, col].set_ylim(*zoom_limits(zoomed))
    _frame_full_and_zoomed(axes, ds, first, train_examples, "R², target parameters ~ N(μ, I)")
    r2_limits(axes[0], [curves[curves["depth"] == depth]["r2"] for depth in ds])
    for ax in axes[0, 1:]:
        ax.tick_params(labelleft=False)  # the top row shares one axis (r2_limits): its labels once
    # nine lines and the shading: under the panels in three columns, so the panels keep the figure's width
    fig.legend(*axes[0, -1].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize=SMALL,
               frameon=False)
    return fig



# ---- the schedule scans (chapter gpt_n01) ------------------------------------------------------------------


def plot_schedule_scan(scans: dict[str, tuple[pd.DataFrame, dict, dict]]) -> plt.Figure:
    """One panel per task (``scans``: its name to the scan's ``history``, ``levels`` and chosen schedule, as
    :func:`icdl.gpt_icl.schedules.scan.choose` gives it): the validation R² of every run against the training step,
    colour the learning rate (darker: larger), solid batch 64 and dashed batch 32 (other batches dotted), the context
    mean (dotted) and least squares (dash-dot) on the same prompts, and the chosen run's chosen step (a dot). Each
    panel has its own R² axis: the tasks' curves lie in ranges far apart (0.4–0.8 against 0.85–0.94), and a shared
    axis flattened the one the choice was made on."""
    fig, axes = plt.subplots(1, len(scans), figsize=(WIDE[0], 3.0), squeeze=False)
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
        thousands(ax)
    axes[0, 0].set_ylabel("validation R² (mean over positions)")
    legend_under_row(fig, axes[0, -1], fontsize=SMALL)
    return fig
