"""Figures of the ICDL theory chapters: ``icgd_linear``, ``gradient_decomposition``, ``relu_sums``,
``attention_passes``, ``icgd_transformer``, ``softmax``."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..repro.typeset import count, named_attentions
from .style import (
    CONSTRUCTION,
    SMALL,
    TERMS,
    WIDE,
    integer_steps,
    legend_below,
    legend_outside,
    log_ticks_125,
    ordered_colours,
    width_colour,
)

# ---- icgd_linear: in-context gradient descent on linear regression -----------------------------


def plot_icgd_paths(df: pd.DataFrame) -> plt.Figure:
    """Left: risk along GD (lines) and along the stacked layers (circles) per step size.
    Right: the largest deviation between the two, on a log scale (round-off level)."""
    from matplotlib.lines import Line2D

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    handles = []
    for color, (eta, g) in zip(ordered_colours(sorted(df["eta"].unique())).values(), df.groupby("eta")):
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
    legend_outside(ax1, handles=handles)
    ax2.axhline(2.2e-16, color="0.4", ls=":", lw=1)
    # above the line, clear of the curves (round-off: they stay within a few ε of 0)
    ax2.text(df["step"].max(), 1.5e-15, "float64 machine ε (dotted)", color="0.4", fontsize=SMALL, ha="right",
             va="bottom")
    ax2.set(xlabel="step l", ylabel=r"max $|\hat w^{(l)} - w^{(l)}_{\mathrm{GD}}|$", ylim=(1e-18, 1e-10))
    return fig


def plot_layer_weights(layer, labels: list[str] | None = None) -> plt.Figure:
    """The hand-set Q, K, V of a ReLU-attention layer, one row per head (colour clipped to ±1).
    ``labels`` names the token rows (the matrices' columns, what each one reads)."""
    M = layer.heads
    fig, axes = plt.subplots(M, 3, figsize=(WIDE[0], 2.6 * M), squeeze=False)
    mats = {"Q": layer.Q, "K": layer.K, "V": layer.V}
    im = None
    for m in range(M):
        for ax, (name, mat) in zip(axes[m], mats.items()):
            a = mat[m].detach().cpu().numpy()
            im = ax.imshow(a.clip(-1, 1), cmap="RdBu_r", vmin=-1, vmax=1)  # entries beyond ±1 saturate
            ax.set_title(f"head {m + 1}: {name}")
            if name == "Q":
                ax.set_ylabel("output row", fontsize=SMALL)
            ax.set_yticks([])
            if labels is not None and m == M - 1:
                ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=SMALL)
                ax.set_xlabel("token row read", fontsize=SMALL)
            else:
                ax.set_xticks([])
            ax.grid(False)
    fig.colorbar(im, ax=axes, shrink=0.6, label="weight (clipped to ±1)")
    return fig


# ---- gradient_decomposition: the gradient of an N-layer network, term by term -----------------------------


def plot_lemma1_recursion(N: int = 4) -> plt.Figure:
    """Which term of Lemma 1 feeds which: the forward pass p(j), the derivatives r'(j), the
    backward recursion s(j) (3.6) and the per-layer gradient blocks A(j) (3.7)."""
    fig, ax = plt.subplots(figsize=(WIDE[0], 3.4))
    # the terms in colours no meaning of the book's figures uses (blue and orange are the attentions)
    colors = {"p": TERMS[1], "r": TERMS[2], "s": TERMS[4], "A": TERMS[3], "u": TERMS[5]}
    pos = {}
    for j in range(N + 1):
        pos[f"p{j}"] = (j, 3)
    for j in range(N):
        pos[f"r{j}"] = (j + 0.5, 2)
    pos["u"] = (N + 0.55, 2)
    for j in range(1, N + 1):
        pos[f"s{j}"] = (j, 1)
        pos[f"A{j}"] = (j - 0.5, 0)
    labels = {**{f"p{j}": f"$p({j})$" for j in range(N + 1)}, **{f"r{j}": f"$r'({j})$" for j in range(N)},
              "u": "$u(p(N), y)$", **{f"s{j}": f"$s({j})$" for j in range(1, N + 1)},
              **{f"A{j}": f"$A({j})$" for j in range(1, N + 1)}}
    labels[f"p{N}"] = f"$p({N}) = f(w,x)$"

    def arrow(a, b, color, **kw):
        ax.annotate("", xy=pos[b], xytext=pos[a],
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=1.1, shrinkA=13, shrinkB=13, **kw))

    for j in range(N):
        arrow(f"p{j}", f"p{j + 1}", colors["p"])
        arrow(f"p{j}", f"r{j}", colors["r"])
    arrow(f"p{N}", "u", colors["u"])
    arrow("u", f"s{N}", colors["s"])
    arrow(f"r{N - 1}", f"s{N}", colors["s"])
    for j in range(N - 1, 0, -1):
        arrow(f"s{j + 1}", f"s{j}", colors["s"])
        arrow(f"r{j - 1}", f"s{j}", colors["s"])
    for j in range(1, N + 1):
        arrow(f"s{j}", f"A{j}", colors["A"])
        arrow(f"p{j - 1}", f"A{j}", colors["A"], connectionstyle="arc3,rad=0.25", alpha=0.5)
    for key, (x, y) in pos.items():
        c = colors[key[0]]
        ax.text(x, y, labels[key], ha="center", va="center", fontsize=9,
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec=c, lw=1.2))
    for y, text in ((3, "forward\n(Def. 1)"), (2, "derivatives\n(Def. 2)"), (1, "backward\n(3.6)"),
                    (0, "gradient blocks\n(3.7)")):
        ax.text(-0.75, y, text, ha="right", va="center", fontsize=SMALL, color="0.3")
    ax.set(xlim=(-1.9, N + 1.2), ylim=(-0.5, 3.5))
    ax.axis("off")
    return fig


def plot_layer_gradient_norms(df: pd.DataFrame) -> plt.Figure:
    """‖block j of ∇L_n‖ against the layer j, one panel per activation, one line per weight scale."""
    acts = list(dict.fromkeys(df["activation"]))
    fig, axes = plt.subplots(1, len(acts), figsize=WIDE, sharey=True)
    colours = ordered_colours(sorted(df["scale"].unique()))  # the book's ramp for an ordered quantity
    for ax, act in zip(axes, acts):
        sub = df[df["activation"] == act]
        for scale, g in sub.groupby("scale"):
            color = colours[scale]
            ax.semilogy(g["layer"], g["grad_norm"], "o-", ms=3, color=color, label=f"s = {scale:g}")
        ax.set(title=named_attentions(act), xlabel="layer j")  # ReLU, as the book writes the activation
    axes[0].set_ylabel(r"$\|\frac{1}{2n}\sum_i A_i(j)\|$")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", title="weight scale s:\nN(0, s²/fan-in)",
               title_fontsize=SMALL)
    return fig


def plot_train_comparison(df: pd.DataFrame) -> plt.Figure:
    """Risk along GD with Lemma 1's gradient (line) and autograd's (dashed), and their gap."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    # greys: no colour of the book's meanings (blue and orange are the attentions) for two routes to one gradient
    ax1.semilogy(df["step"], df["risk_explicit"], color="0.6", lw=3, label="explicit (Lemma 1)")
    ax1.semilogy(df["step"], df["risk_autograd"], color="0.1", ls="--", label="autograd")
    ax1.set(xlabel="GD step", ylabel="in-context risk $L_n(w)$")
    legend_outside(ax1)
    ax2.semilogy(df["step"], df["max_abs_gap"].clip(lower=1e-18), color="0.2")
    ax2.axhline(2.2e-16, color="0.4", ls=":", lw=1)
    ax2.set(xlabel="GD step", ylabel=r"max $|w_{\mathrm{explicit}} - w_{\mathrm{autograd}}|$", ylim=(1e-18, 1e-10))
    return fig


# ---- sums of ReLUs ---------------------------------------------------------------------------


def plot_relu_sum_errors(df: pd.DataFrame) -> plt.Figure:
    """Sup error against the number of ReLUs H (log-log) per target, beside the ``H^(−1/2)`` rate of
    ICDL Lemma 7 (anchored at the first point of each panel); right: the achieved C."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    targets = [t for t in dict.fromkeys(df["target"]) if df[df["target"] == t]["eps"].max() > 0]
    # tab10 without its blue and orange, the attentions' colours everywhere else in the book, and without its pale
    # olive (2:1 on white); black and a dark olive make nine
    cmap = [c for i, c in enumerate(sns.color_palette("tab10", 10)) if i not in (0, 1, 8)] + ["0.0", "#6b6b00"]
    markers = "osD^vPX*<>"
    for i, name in enumerate(targets):
        color = cmap[i % len(cmap)]
        # a marker of its own and a line style per kind (a function solid, a derivative dashed, a loss derivative u
        # dotted, the product dash-dot): curves of like error lie on one another, and colour alone hid sigmoid's
        style = "--" if name.endswith("'") else ":" if name.startswith("u ") else "-." if "product" in name else "-"
        kw = {"marker": markers[i % len(markers)], "ms": 4, "mfc": "none", "ls": style, "color": color, "lw": 1.2}
        g = df[df["target"] == name]
        ax1.loglog(g["H"], g["eps"], label=name, **kw)
        ax2.semilogx(g["H"], g["C"], **kw)
    shown = df[df["target"].isin(targets)]
    H0 = shown["H"].min()
    e0 = shown[shown["H"] == H0]["eps"].max()
    Hs = sorted(shown["H"].unique())
    ax1.loglog(Hs, [e0 * (h / H0) ** -0.5 for h in Hs], "k--", lw=1, label=r"Lemma 7 rate $\propto H^{-1/2}$")
    ax1.loglog(Hs, [e0 * (h / H0) ** -2.0 for h in Hs], "k:", lw=1, label=r"$\propto H^{-2}$")
    ax1.set(xlabel="number of ReLUs H", ylabel="sup error on $[-R, R]^k$")
    ax2.set(xlabel="number of ReLUs H", ylabel=r"achieved $C = \sum_h |c_h|$", yscale="log")
    fig.legend(*ax1.get_legend_handles_labels(), loc="outside right center", fontsize=SMALL)
    return fig


# ---- the forward pass inside attention (ICDL Lemma 2) ------------------------------------------


def plot_token_layout(layout) -> plt.Figure:
    """The rows of one token of the ICGD construction as coloured slots, top to bottom."""
    from matplotlib.patches import Rectangle

    arch = layout.arch
    slots = [("x", 0), ("y", 0), ("w", 0)] + [("p", j) for j in range(1, arch.N + 1)] + \
            [("r'", j) for j in range(arch.N)] + [("g", 0)] + [("s", j) for j in range(1, arch.N + 1)]
    groups = {"x": 0, "y": 0, "w": 1, "p": 2, "r'": 3, "g": 4, "s": 5}
    names = {"x": "x", "y": "y", "w": "w", "p": "p̂", "r'": "r̂'", "g": "g", "s": "ŝ"}
    fig, ax = plt.subplots(figsize=(WIDE[0], 1.9))
    for name, j in slots:
        s = layout.slot(name, j)
        ax.add_patch(Rectangle((s.start, 0), s.stop - s.start, 1, fc=TERMS[groups[name]], ec="white", lw=1))
        label = names[name] + (f"({j})" if name in ("p", "r'", "s") else "")
        ax.text((s.start + s.stop) / 2, 1.12 if name in ("p", "s") else -0.2, label, ha="center",
                va="bottom" if name in ("p", "s") else "top", fontsize=SMALL, rotation=0)
    for row, lab in ((layout.one, "1"), (layout.t, "t")):
        ax.add_patch(Rectangle((row, 0), 1, 1, fc="0.6", ec="white"))
        ax.text(row + 0.5, -0.2, lab, ha="center", va="top", fontsize=SMALL)
    ax.set(xlim=(0, layout.D), ylim=(-0.8, 1.6), yticks=[], xlabel=f"row of the token (D = {layout.D})")
    ax.spines["left"].set_visible(False)
    ax.grid(False)
    return fig


def plot_lemma2_errors(df: pd.DataFrame) -> plt.Figure:
    """Left: measured ‖p̂(j) − p(j)‖ (markers) and bound (3.8) (lines) per layer j for the deepest
    network, one colour per H. Right: both against H for the last layer of every depth."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    df = df[df["lemma"] == 2] if "lemma" in df else df
    N = df["N"].max()
    deep = df[df["N"] == N]
    colours = ordered_colours(sorted(deep["H"].unique()))  # the book's ramp for an ordered quantity
    for H, g in deep.groupby("H"):
        color = colours[H]
        ax1.semilogy(g["layer"], g["bound"], "-", color=color, label=f"H = {H}")
        ax1.semilogy(g["layer"], g["error"], "o", color=color, ms=4)
    ax1.set(xlabel="layer j", ylabel=r"$\|\hat p(j) - p(j)\|_2$  (lines: bound 3.8)", title=f"N = {N}")
    legend_outside(ax1, fontsize=SMALL)
    last = df[df["layer"] == df["N"]]
    coloursN = ordered_colours(sorted(last["N"].unique()))
    for n, g in last.groupby("N"):
        color = coloursN[n]
        ax2.loglog(g["H"], g["bound"], "-", color=color, label=f"N = {n}")
        ax2.loglog(g["H"], g["error"], "o", color=color, ms=4)
    ax2.loglog(last.groupby("H")["eps_r"].first(), "k:", lw=1, label=r"$\varepsilon_r$ of the sum")
    ax2.set(xlabel="ReLUs per head group H", ylabel=r"error of $\hat p(N)$  (lines: bound)", title="last layer")
    ax2.xaxis.set_minor_formatter(mpl.ticker.NullFormatter())
    legend_outside(ax2, fontsize=SMALL)
    return fig


# ---- icgd_transformer: the (2N + 4)L-layer transformer (ICDL Theorem 1) -------------------------------


def plot_icgd_transformer_paths(steps: pd.DataFrame, corollary: pd.DataFrame) -> plt.Figure:
    """Left: in-context risk along ŵ^(l) (markers, one colour per H) and along projected GD (line), mean over
    prompts. Right: the largest ‖ŵ^(l) − w_GD^(l)‖ per H (solid) against Corollary 1.1 as printed (dotted)
    and the induction bound with η (dashed), log scale."""
    from matplotlib.lines import Line2D

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    mean = steps.groupby(["H", "step"], as_index=False)[["loss_hat", "loss_gd"]].mean()
    gd = mean[mean["H"] == mean["H"].min()]
    ax1.plot(gd["step"], gd["loss_gd"], color="0.2", lw=1.2)
    handles = [Line2D([], [], color="0.2", label="projected GD")]
    for color, (H, g) in zip(ordered_colours(sorted(mean["H"].unique())).values(), mean.groupby("H")):
        ax1.plot(g["step"], g["loss_hat"], "o", ms=4, mfc="none", color=color)
        handles.append(Line2D([], [], color=color, marker="o", mfc="none", ls="", label=f"transformer, H = {H}"))
    ax1.set(xlabel="step l", ylabel="in-context risk (mean over prompts)")
    legend_below(ax1, handles=handles)
    later = corollary[corollary["step"] > 0]
    for color, (_, g) in zip(ordered_colours(sorted(later["H"].unique())).values(), later.groupby("H")):
        ax2.semilogy(g["step"], g["deviation"], "-o", ms=3, color=color)
        ax2.semilogy(g["step"], g["induction"], "--", lw=1, color=color)
        ax2.semilogy(g["step"], g["paper"], ":", lw=1, color=color)
    ax2.set(xlabel="step l", ylabel=r"$\|\hat w^{(l)} - w_{\mathrm{GD}}^{(l)}\|$")
    integer_steps(ax1, ax2)
    legend_below(ax2, handles=[Line2D([], [], color="0.3", marker="o", ms=3, label="measured"),
                        Line2D([], [], color="0.3", ls="--", lw=1, label=r"$L_f^{-1}((1+\eta L_f)^l - 1)\epsilon$"),
                        Line2D([], [], color="0.3", ls=":", lw=1, label=r"$L_f^{-1}(1+nL_f)^l\epsilon$ (as printed)")])
    return fig


def plot_icgd_predictions(preds: pd.DataFrame) -> plt.Figure:
    """The transformer's prediction for the query against that of the network trained by L steps of
    projected GD, per H (left), and the gap against H (right, log-log)."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    for color, (H, g) in zip(ordered_colours(sorted(preds["H"].unique())).values(), preds.groupby("H")):
        ax1.plot(g["gd"], g["transformer"], "o", ms=4, mfc="none", color=color, label=f"H = {H}")
    lo, hi = preds[["gd", "transformer"]].min().min(), preds[["gd", "transformer"]].max().max()
    ax1.plot([lo, hi], [lo, hi], color="0.5", lw=1, ls="--")
    ax1.set(xlabel="prediction of the GD-trained network", ylabel="prediction of the transformer")
    legend_outside(ax1)
    gap = preds.assign(gap=(preds["transformer"] - preds["gd"]).abs()).groupby("H")["gap"].max()
    ax2.loglog(gap.index, gap.values, "-o", color="0.2")
    ax2.set_xticks(list(gap.index), [str(h) for h in gap.index])
    ax2.minorticks_off()
    ax2.set(xlabel="ReLUs per sum H", ylabel="max |transformer − GD| at the query")
    return fig


# ---- softmax: softmax transformers (ICDL Theorem 2, Appendix E) ------------------------------


def plot_quantiser_and_error(quantiser, D_grid: int, B: float, errors: pd.DataFrame) -> plt.Figure:
    """Left: the hand-set feed-forward quantiser on one coordinate (staircase) and the grid points.
    Right: error of the piecewise-constant approximation f ∘ Q against the granularity D (max and mean over
    random inputs) beside the Lipschitz bound of the proof."""
    import torch

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(WIDE[0], WIDE[1] + 0.9))  # legends below: the panels keep the width
    z = torch.linspace(0, B, 2001, dtype=torch.float64)
    q = quantiser(z[None, None, :].expand(1, quantiser.D, -1).clone())[0, 0]
    ax1.plot(z, z, color="0.6", lw=1, ls="--", label="identity")
    ax1.plot(z, q, color="0.2", label=f"quantiser, D = {D_grid}")
    g = torch.arange(1, D_grid + 1, dtype=torch.float64) * B / D_grid
    ax1.plot(g, g, "o", ms=4, color="0.6", label="grid points")
    ax1.set(xlabel="input entry z", ylabel="output entry")
    legend_below(ax1, ncol=2, fontsize=SMALL)
    ax2.loglog(errors["D"], errors["max_error"], "-o", color="0.2", label="max over inputs")
    ax2.loglog(errors["D"], errors["mean_error"], "--s", color="0.6", label="mean over inputs")
    ax2.loglog(errors["D"], errors["bound"], "--", color="0.3", label=r"bound $L\sqrt{dn}\,B/D$")
    ax2.set_xticks(list(errors["D"]), [str(int(v)) for v in errors["D"]])
    ax2.minorticks_off()
    ax2.set(xlabel="granularity D", ylabel=r"$\|f(Q(Z)) - f(Z)\|$")
    legend_below(ax2, ncol=2, fontsize=SMALL)
    return fig


def plot_fitted_steps(paths: pd.DataFrame) -> plt.Figure:
    """Left: mean distance between ŵ^(l) and projected GD over steps, per route (fitted softmax blocks of
    several widths, the ReLU construction). Right: mean in-context risk along each route and along GD."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(WIDE[0], WIDE[1] + 0.9), layout="constrained")
    gd = paths[paths["route"] == paths["route"].iloc[0]]
    ax2.plot(gd["step"], gd["risk_gd"], color="0.2", lw=1.4, label="projected GD")
    for route, g in paths.groupby("route", sort=False):
        # a fitted width keeps its colour across profiles and figures (style.width_colour)
        color = width_colour(int(route.rsplit(" ", 1)[1])) if "hidden" in route else CONSTRUCTION
        ax1.semilogy(g["step"][1:], g["distance"][1:], "-o", ms=3, color=color, label=route)
        ax2.plot(g["step"], g["risk_fitted"], "o", ms=4, mfc="none", color=color, label=route)
    ax1.set(xlabel="step l", ylabel=r"mean $\|\hat w^{(l)} - w_{GD}^{(l)}\|$")
    ax2.set(xlabel="step l", ylabel="in-context risk (mean over prompts)")
    # one legend for both panels, under them: a legend per panel (beside or below it) squeezed each to a sliver;
    # a route is its colour in both panels (a line on the left, rings on the right), GD the dark line
    handles, labels = ax1.get_legend_handles_labels()
    gd_line = ax2.get_legend_handles_labels()[0][0]
    fig.legend([*handles, gd_line], [*labels, "projected GD (right)"], loc="outside lower center", ncol=3,
               fontsize=SMALL, frameon=False)
    return fig


def plot_fit_curves(curves: pd.DataFrame, one_step: pd.DataFrame, trend: dict | None = None) -> plt.Figure:
    """Left: held-out (solid) and training-batch (dotted) one-step error relative to the step, against the
    training step, one colour per width (darker = wider). Right: the final held-out relative error against
    the width on log-log axes, with the least-squares trend line when ``trend`` (``width_trend``) is given and
    there are at least three widths."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=WIDE)
    hs = sorted(one_step["hidden"].unique())
    colours = {h: width_colour(h) for h in hs}
    for h, g in curves.groupby("hidden"):
        ax1.loglog(g["step"], g["heldout_relative"], "-", color=colours[h], label=f"width {int(h)}")
        ax1.loglog(g["step"], g["train_relative"], ":", color=colours[h])
    ax1.set(xlabel="training step", ylabel="one-step error / step size")
    legend_below(ax1, fontsize=SMALL, title="held-out (dotted: batch)", title_fontsize=SMALL, ncol=2)
    one = one_step.sort_values("hidden")
    ax2.loglog(one["hidden"], one["relative"], "o", color="0.2", label="held-out, end of training")
    if trend is not None and len(one) >= 3:  # a trend through two points says nothing: not drawn
        h = np.asarray(one["hidden"], dtype=float)
        # the least-squares line: through the geometric means, with the fitted slope
        lh, lr = np.log(h), np.log(np.asarray(one["relative"], dtype=float))
        fit = np.exp(lr.mean() + trend["slope"] * (lh - lh.mean()))
        ax2.loglog(h, fit, "--", color="0.5", label=f"trend: slope {trend['slope']:.2f}".replace("-", "−"))
    ax2.set(xlabel="hidden width of the blocks", ylabel="one-step error / step size")
    ax2.set_xticks(one["hidden"], [count(v) for v in one["hidden"]])
    ax2.xaxis.set_minor_locator(mpl.ticker.NullLocator())
    ax2.set_ylim(ax1.get_ylim())  # one scale for both panels: the widths' gap is read against the curves
    log_ticks_125(ax1.xaxis, ax1.yaxis, ax2.yaxis)
    legend_below(ax2, fontsize=SMALL)
    return fig
