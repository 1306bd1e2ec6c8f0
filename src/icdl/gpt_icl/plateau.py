"""The context-mean plateau, measured (chapter ``gpt_icl``): a finding of ours, not a claim of ICDL.

Small transformers trained on ICDL's random ReLU targets first learn to predict the mean of the labels
seen so far, and on bias-free ReLU targets of width 2d they stayed there in every run we made; on tanh
targets the same code leaves the plateau. This module measures

* :func:`plateau_runs` -- the same model trained from scratch on several target families, with R² on
  fixed validation prompts every ``eval_every`` steps, beside the context mean and least squares on
  those prompts; :func:`leave_step` -- the first evaluation at which a run is more than halfway from
  the context mean to least squares;
* :func:`signal_shares` -- how much of the label variance of each family is within-prompt (what the
  context mean cannot explain), and how much of that a linear fit within the prompt explains;
* :func:`shortcut_analysis` -- the hypothesis that a plateaued model predicts more than the context mean:
  a bias-free ReLU network is positively homogeneous, so on inputs clustered along one direction
  (x ≈ −2·1) the label scales with the input's projection on that direction, and the context mean
  rescaled by ``1ᵀx_k / 1ᵀx̄`` is a cheap predictor. We compare the model's predictions with both.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch

from . import baselines as bl
from .model import GPTConfig
from .tasks import TaskConfig, sample_prompts
from .training import TrainConfig, train, validation_prompts

#: the target families of the study: (label, activation, width; 0 = 2d)
FAMILIES = (("ReLU, width 2d", "relu", 0), ("ReLU, width 100", "relu", 100), ("tanh, width 100", "tanh", 100))
DEPTH = 3  # target depth of the study


def _configs(cfg, family: str, width: int) -> tuple[GPTConfig, TaskConfig, TrainConfig]:
    steps = cfg["plateau_steps"]
    log_every = max(1, steps // 100)
    every = max(log_every, cfg["eval_every"] // log_every * log_every)
    model = GPTConfig(d=cfg["d"], n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"],
                      max_examples=max(cfg["test_examples"], cfg["train_examples"]))
    task = TaskConfig(d=cfg["d"], depth=DEPTH, family=family, width=width)
    tr = TrainConfig(steps=steps, batch=cfg["batch"], lr=cfg["lr"], examples=cfg["train_examples"],
                     seed=cfg["seed"] + 100 * DEPTH, log_every=log_every, eval_every=every)
    return model, task, tr


def levels(task: TaskConfig, tr: TrainConfig) -> dict:
    """Mean R² over positions ``eval_from`` … of the context mean and of least squares on the validation
    prompts of ``task``: the plateau and a level a run has clearly left it by."""
    xs, ys = validation_prompts(task, tr)
    sl = slice(tr.eval_from - 1, None)
    return {"context_mean": float(bl.r2_across_prompts(bl.context_mean(xs, ys), ys)[sl].mean()),
            "least_squares": float(bl.r2_across_prompts(bl.least_squares(xs, ys), ys)[sl].mean())}


def plateau_runs(cfg, *, folder: Path | None = None, steps_this_call: int | None = None,
                 progress: bool = True, device: str = "cpu") -> dict:
    """Train the softmax model of the profile from scratch on each family of :data:`FAMILIES` (no warm phase),
    tracking R² on validation prompts. Returns ``{"history", "levels", "models", "complete"}``."""
    hists, lev, models, complete = [], [], {}, True
    for label, family, width in FAMILIES:
        mcfg, task, tr = _configs(cfg, family, width)
        ckpt = None if folder is None else Path(folder) / f"plateau_{family}{width or 'x2d'}.pt"
        res = train(mcfg, task, tr, checkpoint=ckpt, max_steps_this_call=steps_this_call, progress=progress,
                    device=device,
                    command=f"python -m icdl.gpt_icl --profile {cfg.get('profile', 'reference')} --part plateau")
        complete &= res["steps_done"] >= tr.steps
        models[label] = res["model"]
        hists.append(res["history"].dropna(subset=["val_r2"]).assign(family=label))
        lev.append({"family": label, **levels(task, tr)})
    return {"history": pd.concat(hists, ignore_index=True), "levels": pd.DataFrame(lev), "models": models,
            "complete": complete}


def leave_step(history: pd.DataFrame, levels: pd.DataFrame) -> pd.DataFrame:
    """Per family: the first evaluated step at which the model's R² is above the midpoint between the context
    mean and least squares (NaN if never), and the final excess of the model over the context mean."""
    rows = []
    for label, g in history.groupby("family", sort=False):
        lv = levels.set_index("family").loc[label]
        mid = (lv["context_mean"] + lv["least_squares"]) / 2
        above = g[g["val_r2"] > mid]
        rows.append({"family": label, "context_mean": lv["context_mean"], "least_squares": lv["least_squares"],
                     "final_r2": float(g["val_r2"].iloc[-1]),
                     "final_excess": float(g["val_r2"].iloc[-1] - lv["context_mean"]),
                     "left_at_step": float(above["step"].iloc[0]) if len(above) else float("nan")})
    return pd.DataFrame(rows)


def signal_shares(cfg, *, prompts: int = 2048, seed: int = 5) -> pd.DataFrame:
    """Per family: the share of the label variance that lies within prompts (``1 − between/total``), and the
    share of that within-prompt variance a least-squares fit with intercept on the prompt's own examples
    explains (in-sample, ``train_examples`` examples)."""
    rows = []
    k = cfg["train_examples"]
    for label, family, width in FAMILIES:
        task = TaskConfig(d=cfg["d"], depth=DEPTH, family=family, width=width)
        xs, ys = sample_prompts(task, prompts, k, torch.Generator().manual_seed(seed))
        total = float(ys.var(unbiased=False))
        within = float(ys.var(dim=1, unbiased=False).mean())
        X = torch.cat([torch.ones(prompts, k, 1), xs], -1).double()
        coef = torch.linalg.lstsq(X, ys.double()[..., None]).solution
        resid = float(((X @ coef)[..., 0] - ys.double()).pow(2).mean())
        rows.append({"family": label, "within_share": within / total, "linear_share_of_within": 1 - resid / within})
    return pd.DataFrame(rows)


def shortcut_predictor(xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """``ŷ_k = ȳ_{<k} · 1ᵀx_k / 1ᵀx̄_{<k}``: the context mean rescaled by the query's projection on the
    all-ones direction relative to the examples' (0 at the first position, like the context mean)."""
    cm = bl.context_mean(xs, ys)
    s = xs.sum(-1)
    counts = torch.arange(xs.shape[1], dtype=xs.dtype)
    s_bar = torch.cat([torch.zeros_like(s[:, :1]), s.cumsum(1)[:, :-1]], 1) / counts.clamp(min=1)
    ratio = torch.where(counts > 0, s / torch.where(s_bar == 0, torch.ones_like(s_bar), s_bar), torch.zeros_like(s))
    return cm * ratio


@torch.no_grad()
def shortcut_analysis(model, cfg, family: str = "relu", width: int = 0, *, prompts: int = 4096,
                      seed: int = 11) -> pd.DataFrame:
    """On fresh prompts of one family: per position, R² against the labels of the model, the context mean and
    the shortcut, and how much of the model's predictions each explains (R² of the model's predictions
    regressed on the context mean alone, and on the context mean and the shortcut together)."""
    task = TaskConfig(d=cfg["d"], depth=DEPTH, family=family, width=width)
    xs, ys = sample_prompts(task, prompts, cfg["train_examples"], torch.Generator().manual_seed(seed))
    pred = model(xs, ys)
    cm, sc = bl.context_mean(xs, ys), shortcut_predictor(xs, ys)
    r2 = {name: bl.r2_across_prompts(p, ys).numpy() for name, p in (("model", pred), ("context mean", cm),
                                                                    ("shortcut", sc))}
    rows = []
    for i in range(2, xs.shape[1]):
        def explained(*features):
            X = torch.stack([torch.ones(prompts), *[f[:, i] for f in features]], -1).double()
            coef = torch.linalg.lstsq(X, pred[:, i].double()[:, None]).solution
            return 1 - float(((X @ coef)[:, 0] - pred[:, i]).pow(2).mean() / pred[:, i].double().var(unbiased=False))
        rows.append({"position": i + 1, **{f"r2 {k}": float(v[i]) for k, v in r2.items()},
                     "model explained by context mean": explained(cm),
                     "model explained by context mean + shortcut": explained(cm, sc)})
    return pd.DataFrame(rows)


def summary(history: pd.DataFrame, levels_df: pd.DataFrame, shares: pd.DataFrame) -> pd.DataFrame:
    """One row per family: signal shares, plateau and least-squares levels, final excess, the step it left."""
    return leave_step(history, levels_df).merge(shares, on="family")

