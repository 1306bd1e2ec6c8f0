"""Figures of the experiment chapters: ``gpt_icl``, ``gpt_depth``, ``gpt_plateau``, ``gpt_scale``, ``gpt_mechanism``,
``computation``, ``diffusion_score``."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..gpt_icl.baselines import CONTEXT_MEAN, LEAST_SQUARES, NEAREST_NEIGHBOURS, is_mlp
from ..gpt_icl.model import ATTENTIONS
from ..gpt_icl.schedule import AT_SWITCH, SOFTMAX_ON
from ..gpt_icl.tasks import PRETRAINING
from ..repro.ledger import count
from .style import (
    ATTENTION,
    BASELINE,
    BASELINE_STYLE,
    GD,
    MIXTURE_PALETTE,
    MU,
    PALETTE,
    SINGLE,
    SMALL,
    STAGE,
    WIDE,
    legend_outside,
    log_ticks_125,
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


def _stage_labels(stage: str) -> tuple[str, ...]:
    """A job's name (:func:`icdl.gpt_icl.pipeline.schedule`) for its bar, longest first: the first that fits
    the bar is drawn (:func:`plot_stage_timeline`)."""
    words = stage.replace(",", "").split()
    if stage.startswith("train main"):
        return f"main N={words[-1]}", f"N={words[-1]}"
    if stage.startswith("train depth"):
        return (f"L={words[-2]}",)
    if stage.startswith("plateau"):
        return "plateau", "pl."
    name = stage.split(":")[0].replace(" study", "")
    return f"{name} eval", name


def _label_bar(ax, x0: float, width: float, lane: float, labels: tuple[str, ...]) -> None:
    """The first of ``labels`` that fits inside the bar from ``x0`` to ``x0 + width`` on ``lane``, drawn
    across it; where none fits across, the shortest along it (turned upright), so that labels of
    neighbouring bars never overprint."""
    renderer = ax.figure.canvas.get_renderer()
    (left, _), (right, _) = ax.transData.transform([(x0, lane), (x0 + width, lane)])
    for text in labels:
        t = ax.text(x0 + width / 2, lane, text, ha="center", va="center", fontsize=SMALL)
        if t.get_window_extent(renderer).width <= 0.92 * (right - left):
            return
        t.remove()
    ax.text(x0 + width / 2, lane, labels[-1], ha="center", va="center", fontsize=SMALL, rotation=90)


def plot_stage_timeline(stages: pd.DataFrame, target_min: float | None = None) -> plt.Figure:
    """The timed reference run (:func:`icdl.gpt_icl.pipeline.stage_times`): one row per worker, one bar per job
    from its start to its end, coloured by kind and labelled with the job; a dashed line at ``target_min``."""
    lanes = int(stages["worker"].max())
    end = float((stages["start_min"] + stages["minutes"]).max())
    fig, ax = plt.subplots(figsize=(WIDE[0], 0.9 + 0.75 * lanes))
    for r in stages.itertuples():
        ax.barh(r.worker, r.minutes, left=r.start_min, height=0.7, color=STAGE[r.kind], edgecolor="white")
    if target_min is not None:
        ax.axvline(target_min, color="0.3", ls="--", lw=1.0)
        ax.text(target_min, lanes + 0.55, f" {target_min:g} min", fontsize=SMALL, va="center", color="0.3")
    ax.set(xlabel="minutes since the start", ylabel="worker (one core)", yticks=range(1, lanes + 1),
           ylim=(0.4, lanes + 0.8), xlim=(0, 1.04 * max(end, target_min or 0)))
    ax.invert_yaxis()
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in STAGE.values()]
    legend_outside(ax, handles=handles, labels=list(STAGE), fontsize=SMALL)
    fig.canvas.draw()  # the layout is final: each label is fitted to its bar as drawn
    for r in stages.itertuples():
        _label_bar(ax, r.start_min, r.minutes, r.worker, _stage_labels(r.stage))
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
    (``least_squares``: :func:`icdl.gpt_icl.evaluation.least_squares_param_shift`)."""
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


def plot_dsm_targets(binned: pd.DataFrame, curve: dict) -> plt.Figure:
    """Left: REB's DSM targets averaged in bins of x_t (±2 s.e.) on the true score. Right: one prompt's
    data, the score at its random start and after GD, against the true score."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    ax1.plot(binned["x_t"], binned["score"], color="0.2", lw=1.4, label=r"$\nabla\log p_t$")
    ax1.errorbar(binned["x_t"], binned["mean_y"], yerr=2 * binned["se"], fmt="o", ms=3, color=PALETTE[0],
                 label="mean DSM target in bin")
    ax1.set(xlabel=r"$x_t$", ylabel="score")
    legend_outside(ax1, fontsize=SMALL)
    ax2.plot(curve["data_x"], curve["data_y"], ".", ms=3, color="0.7", label="the prompt's DSM targets")
    ax2.plot(curve["x"], curve["score"], color="0.2", lw=1.4, label=r"$\nabla\log p_t$")
    ax2.plot(curve["x"], curve["start"], ":", color="0.5", label="network at the start")
    ax2.plot(curve["x"], curve["gd"], color=GD, label="network after GD")
    ax2.set(xlabel=r"$x_t$", ylabel="score", ylim=(-6, 6))
    legend_outside(ax2, fontsize=SMALL)
    return fig


def plot_score_errors(errors: pd.DataFrame) -> plt.Figure:
    """Relative L² error of the learned score over GD steps (mean over prompts): GD from the random
    start, GD from w = 0, and the transformer for each H."""
    fig, ax = plt.subplots(figsize=SINGLE)
    mean = errors.groupby(["method", "H", "step"], sort=False)["score_error"].mean().reset_index()
    styles = {"GD": ("-", GD), "GD from w = 0": (":", GD)}
    sizes = ordered_colours(sorted(mean.loc[mean["method"] == "transformer", "H"].unique()))  # darker = more H
    for (method, H), g in mean.groupby(["method", "H"], sort=False):
        ls, color = styles.get(method, ("--", sizes.get(H)))
        label = method if method != "transformer" else f"transformer, H = {H}"
        ax.plot(g["step"], g["score_error"], ls, color=color, label=label)
    ax.axhline(1.0, color="0.75", lw=0.8)
    ax.set(xlabel="step l", ylabel="relative score error", yscale="log")
    legend_outside(ax, fontsize=SMALL)
    return fig


# ---- gpt_mechanism: which algorithm does a trained model run? -------------------------------------------


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
        ax.set_title(f"depth {depth}, {att}", fontsize=9)
        if r == len(axes) - 1:
            ax.set_xlabel("prompt position k")
    if measure == "pred_diff":
        axes[0, 0].set_yscale("log")
        log_ticks_125(axes[0, 0].yaxis)  # shared y: one call labels every panel
    label = {"pred_diff": "prediction difference\n(share of label spread)",
             "cosine": r"cosine of $\partial\hat y / \partial x_{\mathrm{query}}$"}
    for row in axes:
        row[0].set_ylabel(label[measure], fontsize=SMALL)
    legend_outside(fig, *_first_panel_legend(axes), fontsize=SMALL)
    return fig


def _first_panel_legend(axes) -> tuple[list, list]:
    """The legend entries of all panels, each name once (panels draw the same candidates)."""
    seen = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    return list(seen.values()), list(seen)


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
        ax.set_xticks(range(len(m.columns)), [str(int(v)) for v in m.columns], fontsize=SMALL, rotation=90)
        ax.set_yticks(range(len(m.index)), [f"{v:g}" for v in m.index], fontsize=SMALL)
        ax.plot(list(m.columns).index(best["gd_steps"]), list(m.index).index(best["gd_eta"]), "o", ms=9,
                mfc="none", mec="white", mew=1.8)
        ax.set_title(f"depth {depth}, {att}\nstart scale {best['gd_init_scale']:g}", fontsize=SMALL)
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
    legend_outside(fig, *_first_panel_legend(axes), fontsize=SMALL)
    return fig


# ---- gpt_scale: the main study trained longer ---------------------------------------------------------

#: the rows of :func:`plot_scale_trend`: column of :func:`icdl.gpt_icl.scale.trend`, axis label, reference line
_SCALE_ROWS = (("shortfall", "shortfall below\nthe MLP"), ("lead_ls", "lead over\nleast squares"),
               ("lead_knn", "lead over 3-NN"))


def plot_scale_trend(trend: pd.DataFrame, fits: pd.DataFrame, fit_from: dict, offset: dict | None = None
                     ) -> plt.Figure:
    """Rows: the shortfall below the MLP, the lead over least squares, the lead over 3-NN (R² differences at
    the training length); columns: target depth. x: steps on the target family (a model's own step less
    ``offset[attention]``, :func:`icdl.gpt_icl.scale_trend.target_offset`), log 2 scale, over the snapshots
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
                ax.plot(x, g[col], "-o", ms=3, color=ATTENTION[att], label=f"{att} attention")
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
    legend_outside(fig, *_first_panel_legend(axes), fontsize=SMALL)
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
    fig, axes = plt.subplots(1, len(atts), figsize=WIDE, sharey=True, squeeze=False)
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
        ax.set(xscale="log", title=f"{att} attention")
    axes[0, 0].set_ylabel("objective 1's number: largest\nshortfall below the MLP")
    fig.supxlabel("steps on the target family", fontsize=10)  # one label for both panels: two abut
    legend_outside(fig, *_first_panel_legend(axes), fontsize=SMALL)  # right of the panels, clear of the label
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
                        label=f"{att}, width {width}", **style)
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
    fig.legend(*_first_panel_legend(axes), loc="outside lower center", ncol=3, fontsize=SMALL)
    return fig
