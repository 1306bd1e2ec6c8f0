"""Figures of the LSA chapters: ``lsa_construction``, ``lsa_training``."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ..lsa.constructions import R_FLAT_RTOL, flat_Rs
from ..lsa.readout import strength
from ..repro.typeset import count, percent
from .style import SINGLE, SMALL, WIDE, legend_below, legend_outside, ordered_colours

# ---- LSA (Hagiwara): least squares by LayerNorm ------------------------------------------------


def plot_lsa_construction_errors(df: pd.DataFrame, rtol: float = R_FLAT_RTOL) -> plt.Figure:
    """Mean |TF(4,2,2) − ŷ_LS| against N for several R, beside the terms the construction neglects. The values
    of R from which on the error agrees with the largest R's within ``rtol`` at every N
    (:func:`~icdl.lsa.constructions.flat_Rs`, the chapter's text's tolerance) are drawn as one curve with one
    legend entry (five coinciding curves under five entries hide all but the last); the two neglected terms
    (nearly equal) are drawn in two greys, the dotted one wider and on top."""
    curves = {R: g.sort_values("N") for R, g in df.groupby("R")}
    top = max(curves)
    same = flat_Rs(df, rtol)
    groups = [[R] for R in curves if R not in same] + [same]
    fig, ax = plt.subplots(figsize=(SINGLE[0] + 1.2, SINGLE[1] + 1.0))  # the legend below: the panel keeps the width
    cmap = list(ordered_colours(range(len(groups))).values())  # the book's ramp for an ordered quantity
    for color, Rs in zip(cmap, groups):
        g = curves[Rs[-1]]
        name = [count(R) if float(R).is_integer() else f"{R:g}" for R in Rs]  # 10 000, as the table writes it
        label = f"R = {name[0]}" if len(Rs) == 1 else f"R = {', '.join(name)}\n(within {percent(rtol)})"
        ax.loglog(g["N"], g["mean_abs_err"], "o-", ms=3, color=color, label=label)
    g = curves[top]
    ax.loglog(g["N"], g["u_minus_xbar_over_N"], "--", color="0.3", lw=1.2, label="mean |u − x̄| / N")
    ax.loglog(g["N"], g["ybar_over_N"], ":", color="0.6", lw=2.4, label="mean |ȳ| / N", zorder=3)
    ax.set(xlabel="number of in-context examples N", ylabel="mean |output − least squares|")
    legend_below(ax, ncol=2, fontsize=SMALL)
    return fig


def plot_lsa_gd_two_steps(df: pd.DataFrame) -> plt.Figure:
    """Appendix B: the TF(4,3,2) against eqs. 66–67 and two explicit GD steps against least squares."""
    fig, ax = plt.subplots(figsize=(SINGLE[0] + 1.2, SINGLE[1] + 0.8))
    ax.loglog(df["N"], df["tf_vs_closed_form"], "o-", ms=3, color="0.15", label="TF(4,3,2) vs eq. 67")
    ax.loglog(df["N"], df["two_gd_steps_vs_ls"], "s--", ms=3, color="0.5", label="2 GD steps vs least squares")
    ax.loglog(df["N"], df["closed_form_vs_explicit_gd"].clip(lower=1e-17), "^:", ms=3, color="0.65",
              label="eq. 67 vs 2 explicit GD steps")
    ax.set(xlabel="number of in-context examples N", ylabel="mean absolute difference")
    legend_below(ax, ncol=2, fontsize=SMALL)
    return fig


def plot_lsa_weights(W_in_abs, W_out_abs, title: str = "") -> plt.Figure:
    """LSA Fig. 2: |W_in| (inputs 1, x, y × embeddings) and |W_out| (embeddings × tokens), log colour; (c) the
    query token's column of |W_out| on its own, each cell labelled with its value -- the column the paper's claim
    is about, a sliver one token wide in (b)."""
    import numpy as np
    from matplotlib.colors import LogNorm

    W_in_abs, W_out_abs = np.asarray(W_in_abs), np.asarray(W_out_abs)
    from matplotlib.ticker import NullFormatter

    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(WIDE[0], WIDE[1] + 0.3), width_ratios=[1, 4, 1.1],
                                     layout="constrained")
    norms = {}
    for ax, W, lab in ((a1, W_in_abs, "(a) input weights"), (a2, W_out_abs, "(b) output weights")):
        norms[lab] = LogNorm(vmin=max(W.min(), 1e-6), vmax=W.max())
        im = ax.imshow(np.clip(W, 1e-6, None), norm=norms[lab], cmap="magma", aspect="auto", origin="lower")
        ax.grid(False)
        ax.set_title(lab)
        bar = fig.colorbar(im, ax=ax, shrink=0.8)
        bar.ax.yaxis.set_minor_formatter(NullFormatter())  # powers of ten only: minor labels overlap the next panel
    a1.set(xticks=range(W_in_abs.shape[1]), xticklabels=range(1, W_in_abs.shape[1] + 1),
           yticks=range(3), yticklabels=["1", "x", "y"], xlabel="embedding", ylabel="input")
    a2.set(yticks=range(W_out_abs.shape[0]), yticklabels=range(1, W_out_abs.shape[0] + 1),
           xlabel="token (sequence position)", ylabel="embedding")
    xt = [0, 9, 19, 29, 39, W_out_abs.shape[1] - 1]
    a2.set_xticks(xt, [t + 1 for t in xt])
    query = W_out_abs[:, -1:]
    a3.imshow(np.clip(query, 1e-6, None), norm=norms["(b) output weights"], cmap="magma", aspect="auto",
              origin="lower")
    a3.grid(False)
    for row, v in enumerate(query[:, 0]):
        bright = np.log(max(v, 1e-6)) > np.log(norms["(b) output weights"].vmin * norms["(b) output weights"].vmax) / 2
        a3.text(0, row, f"{v:.2g}", ha="center", va="center", fontsize=SMALL, color="black" if bright else "white")
    a3.set(xticks=[0], xticklabels=[str(W_out_abs.shape[1])], yticks=range(W_out_abs.shape[0]),
           yticklabels=range(1, W_out_abs.shape[0] + 1), xlabel="query token", title="(c) query")
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def plot_lsa_fitted_curves(curves: dict, title: str = "") -> plt.Figure:
    """LSA Fig. 3: the trained model's output over query points, (a) full and (b) through the
    dominant query cell only, each against the least-squares line and the in-context examples."""
    fig, axes = plt.subplots(1, 2, figsize=WIDE, sharey=True)
    for ax, key, lab in ((axes[0], "full", "(a) transformer output"),
                         (axes[1], "through_cell", f"(b) through cell ({curves['cell']}, {len(curves['x']) + 1})")):
        ax.plot(curves["x"], curves["y"], "o", mfc="none", color="0.4", ms=4, label="in-context examples")
        ax.plot(curves["u"], curves["ls"], color="0.6", lw=3, label="least squares")
        ax.plot(curves["u"], curves[key], color="k", lw=1.3, label="transformer")
        ax.set(title=lab, xlabel="x")
    axes[0].set_ylabel("prediction")
    axes[0].legend(fontsize=SMALL)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def plot_lsa_validation(history: pd.DataFrame) -> plt.Figure:
    """Validation MSE of every run against the epoch."""
    fig, ax = plt.subplots(figsize=SINGLE)
    cmap = sns.color_palette("husl", n_colors=history["run"].nunique())
    for color, (run, g) in zip(cmap, history.groupby("run")):
        ax.semilogy(g["epoch"], g["val_mse"], color=color, lw=1, label=f"run {int(run) + 1}")
    ax.set(xlabel="epoch", ylabel="validation MSE")
    if history["run"].nunique() <= 10:
        legend_outside(ax, fontsize=SMALL)
    return fig


def plot_l1_runs(runs: pd.DataFrame, ratio_line: float = 10.0, corr_line: float = 0.95) -> plt.Figure:
    """Every run of every ℓ1 strength (:func:`icdl.lsa.readout.every_run`, one row per run), one column of dots per
    strength: left, the largest query-token output weight over the second (log scale), with the dominance the
    claims ask for; right, Table 2's smaller |correlation| of that cell, and the paper's 0.95. A filled dot is a
    run whose LayerNorm divides by the variance (Table 1 > 0.9: a run the paper would analyse), a hollow one a run
    that does not -- so the chain "divides, hence one cell carries least squares" reads as filled dots above both
    lines."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    strengths = sorted(runs["ℓ1"].unique())
    for ax, col in ((ax1, "weight ratio"), (ax2, "Table 2 corr")):
        for x, l1 in enumerate(strengths):
            g = runs[runs["ℓ1"] == l1].reset_index(drop=True)
            offsets = x + 0.28 * ((g.index + 0.5) / len(g) - 0.5)  # the runs side by side, not on top of each other
            divides = g["Table 1 corr"] > 0.9
            ax.scatter(offsets[~divides], g.loc[~divides, col], s=30, facecolors="none", edgecolors="0.2",
                       linewidths=1.2, label="LayerNorm does not divide" if x == 0 else None)
            ax.scatter(offsets[divides], g.loc[divides, col], s=34, color="0.2",
                       label="divides (Table 1 > 0.9)" if x == 0 else None)
        ax.set_xticks(range(len(strengths)), [strength(v) for v in strengths])
        ax.set_xlim(-0.5, len(strengths) - 0.5)
        ax.set_xlabel("ℓ1 coefficient")
    ax1.set_yscale("log")
    ax1.axhline(ratio_line, color="0.45", lw=1.0, ls="--", label=f"{ratio_line:g}× (the claims' line)")
    ax1.set_ylabel("largest / second query weight")
    ax2.axhline(corr_line, color="0.45", lw=1.0, ls="--", label=f"{corr_line:g} (the paper's Table 2)")
    ax2.set(ylabel="Table 2: smaller |correlation|", ylim=(0, 1.02))
    legend_below(ax1, fontsize=SMALL)  # the dots' two kinds once, beside the left panel's line
    h, labels = ax2.get_legend_handles_labels()
    legend_below(ax2, h[-1:], labels[-1:], fontsize=SMALL)
    fig.subplots_adjust(wspace=0.38)
    return fig
