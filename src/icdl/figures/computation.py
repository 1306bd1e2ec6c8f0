"""Figures of the computation appendix: the reference run's stages on a timeline."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from .style import (
    SMALL,
    STAGE,
    WIDE,
    legend_outside,
)


def _stage_labels(stage: str) -> tuple[str, ...]:
    """A job's name (:func:`icdl.gpt_icl.reference.schedule`) for its bar, longest first: the first that fits
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
    """The timed reference run (:func:`icdl.gpt_icl.reference.stage_times`): one row per worker, one bar per job
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
