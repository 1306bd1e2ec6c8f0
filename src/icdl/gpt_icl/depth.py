"""ICDL objective 4 (Fig. 7): is a deeper transformer a better in-context learner? (chapter ``gpt_icl``)

For each model depth of the profile (``depth_layers``; the paper's 4, 6, 8, 10) a softmax and a ReLU
transformer are trained on targets of one depth (``depth_target``) with prompts long enough for the
paper's evaluation points (``depth_train_examples`` examples, so that 15, 30 and 45 examples lie inside
the training length), with the main models' kind of schedule (:func:`icdl.gpt_icl.study.configs`) at its own lengths
(``depth_steps``, ``depth_warm_steps``, ``depth_relu_steps``: the main models' schedule was lengthened after
the depth study ran, see :func:`depth_settings`).
Each is evaluated on the pretraining mixture at ``depth_positions`` with bootstrap bands, beside the
context mean and least squares on the same prompts.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from . import baselines as bl
from .study import ATTENTIONS, test_prompts, train_pair


@torch.no_grad()
def _at_positions(model, xs, ys, positions) -> list[dict]:
    pred = model(xs, ys)
    r2 = bl.r2_across_prompts(pred, ys).numpy()
    band = bl.bootstrap_band(pred, ys)
    return [{"position": p, "r2": float(r2[p]), "lo": float(band[0, p]), "hi": float(band[1, p])} for p in positions]


def depth_settings(cfg) -> dict:
    """The profile with the depth study's schedule in place of the main models' one."""
    return {**cfg, "steps": cfg["depth_steps"], "warm_steps": cfg["depth_warm_steps"],
            "relu_steps": cfg["depth_relu_steps"]}


def depth_study(cfg, *, folder: Path | None = None, layers: list[int] | None = None,
                steps_this_call: int | None = None, progress: bool = True, train_only: bool = False) -> dict | None:
    """Train (or resume) and evaluate the models of every depth in ``layers`` (default: the profile's).
    ``position`` counts the examples before the query (the query is number ``position + 1``).
    Returns ``{"table", "baselines", "history", "training", "complete", "seconds"}``; ``training`` has each
    model's steps and training seconds, read from its checkpoint (summed over the calls that trained it)."""
    t0 = time.perf_counter()
    target, positions = cfg["depth_target"], list(cfg["depth_positions"])
    if max(positions) >= cfg["test_examples"]:
        raise ValueError(f"depth_positions must be < test_examples={cfg['test_examples']}, got {positions}")
    cfg = depth_settings(cfg)
    xs, ys = test_prompts(cfg, target, "(1, 0)")
    rows, hists, training, complete = [], [], [], True
    for n_layer in layers or list(cfg["depth_layers"]):
        pair = train_pair(cfg, target, folder=folder, steps_this_call=steps_this_call, progress=progress,
                          n_layer=n_layer, examples=cfg["depth_train_examples"], tag=f"_L{n_layer}")
        complete &= pair["complete"]
        if train_only:
            continue
        for attention in ATTENTIONS:
            if attention in pair:
                res = pair[attention]
                training.append({"n_layer": n_layer, "attention": attention, "steps": res["steps_done"],
                                 "seconds": res["seconds"]})
                rows += [{"n_layer": n_layer, "attention": attention, **r}
                         for r in _at_positions(res["model"], xs, ys, positions)]
                hists.append(res["history"].assign(n_layer=n_layer, attention=attention))
    if train_only:
        return None
    base = []
    for name, pred in (("context mean", bl.context_mean(xs, ys)), ("least squares", bl.least_squares(xs, ys))):
        r2 = bl.r2_across_prompts(pred, ys).numpy()
        base += [{"method": name, "position": p, "r2": float(r2[p])} for p in positions]
    return {"table": pd.DataFrame(rows), "baselines": pd.DataFrame(base),
            "history": pd.concat(hists, ignore_index=True) if hists else pd.DataFrame(),
            "training": pd.DataFrame(training, columns=["n_layer", "attention", "steps", "seconds"]),
            "complete": complete, "seconds": time.perf_counter() - t0}


def judge_depth(table: pd.DataFrame) -> pd.DataFrame:
    """Per attention and position: R² of the shallowest and the deepest model and their difference;
    ``deeper_better`` is whether the deepest model's R² exceeds the shallowest's (the paper's claim)."""
    rows = []
    for (attention, position), g in table.groupby(["attention", "position"]):
        g = g.sort_values("n_layer")
        rows.append({"attention": attention, "position": int(position),
                     "shallowest": float(g["r2"].iloc[0]), "deepest": float(g["r2"].iloc[-1]),
                     "gain": float(g["r2"].iloc[-1] - g["r2"].iloc[0]),
                     "deeper_better": bool(g["r2"].iloc[-1] > g["r2"].iloc[0])})
    return pd.DataFrame(rows)
