"""One figure style for the whole book, and the plotting functions of the chapters.

Chapters call :func:`use_style` once, compute their numbers with a function of
the package, and pass them to a ``plot_*`` function here; the same functions are
what the pixel tests (pytest-mpl) draw. Captions and figure numbers are set in
the notebook cell's ``mystnb: figure:`` metadata, not here.
"""

from __future__ import annotations

import contextlib

import matplotlib as mpl
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

#: sizes in inches: a full-width figure and a single panel
WIDE = (8.0, 3.2)
SINGLE = (4.2, 3.2)

PALETTE = sns.color_palette("colorblind")

#: pinned rcParams (on top of seaborn's theme) so pixel baselines do not drift with defaults
RC = {
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "legend.fontsize": 8,
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


# ---- chapter 1: in-context gradient descent on linear regression -----------------------------


def plot_icgd_paths(df: pd.DataFrame) -> plt.Figure:
    """Left: risk along GD (lines) and along the stacked layers (circles) per step size.
    Right: the largest deviation between the two, on a log scale (round-off level)."""
    from matplotlib.lines import Line2D

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    handles = []
    for color, (eta, g) in zip(PALETTE, df.groupby("eta")):
        ax1.plot(g["step"], g["risk_gd"], color=color)
        every = max(1, len(g) // 12)
        ax1.plot(g["step"][::every], g["risk_tf"][::every], "o", ms=4, mfc="none", color=color)
        ax2.semilogy(g["step"], g["max_abs_dev"].clip(lower=1e-18), color=color)
        handles.append(Line2D([], [], color=color, label=f"η = {eta:g}"))
    ax1.axhline(df["risk_ls"].iloc[0], color="0.4", ls="--", lw=1)
    handles += [Line2D([], [], color="0.2", label="plain GD"),
                Line2D([], [], color="0.2", marker="o", mfc="none", ls="", label="transformer"),
                Line2D([], [], color="0.4", ls="--", lw=1, label="least squares")]
    ax1.set(xlabel="step l", ylabel="in-context risk $L_n(w^{(l)})$", yscale="log")
    ax1.legend(handles=handles, ncol=2, loc="upper right")
    ax2.axhline(2.2e-16, color="0.4", ls=":", lw=1)
    ax2.text(df["step"].max(), 3e-16, "float64 machine ε", color="0.4", fontsize=8, ha="right")
    ax2.set(xlabel="step l", ylabel=r"max $|\hat w^{(l)} - w^{(l)}_{GD}|$", ylim=(1e-18, 1e-10))
    return fig


def plot_layer_weights(layer, labels: list[str] | None = None) -> plt.Figure:
    """The hand-set Q, K, V of a ReLU-attention layer, one row per head (colour clipped to ±1).
    ``labels`` names the token rows (the matrices' columns, what each one reads)."""
    M = layer.heads
    fig, axes = plt.subplots(M, 3, figsize=(WIDE[0], 2.6 * M), squeeze=False)
    mats = {"Q": layer.Q, "K": layer.K, "V": layer.V}
    for m in range(M):
        for ax, (name, mat) in zip(axes[m], mats.items()):
            a = mat[m].detach().cpu().numpy()
            ax.imshow(a.clip(-1, 1), cmap="RdBu_r", vmin=-1, vmax=1)  # entries beyond ±1 saturate
            ax.set_title(f"head {m + 1}: {name}")
            ax.set_yticks([])
            if labels is not None and m == M - 1:
                ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
            else:
                ax.set_xticks([])
            ax.grid(False)
    return fig
