"""The scale study's scores and their trend (chapter ``gpt_scale``, :mod:`~icdl.gpt_icl.scale`): every snapshot
beside the baselines on the same prompts, the shortfall below the MLP and the leads over the baselines per
snapshot, and a line through the shortfall in log steps with its forecast.

The shortfall, the leads and the fit use *paired* prompts: the MLP trains on the first ``mlp_prompts`` test
prompts only, so the model is scored on the same ones there, and a bootstrap resamples prompts jointly for
every snapshot (the same resample across snapshots, so the fitted slope's band is that of one set of prompts).

======================  ===========================================================================================
:func:`score_depth`     every snapshot of one target depth against the baselines on the same prompts
:func:`trend`           per model and snapshot: the shortfall below the MLP, the lead over least squares and 3-NN at
                        the training length, with bootstrap bands
:func:`fit_trend`       the shortfall's change per doubling of the steps (a line in log steps), its band, and the
                        forecast of the steps at which it would reach the paper's tolerance (:func:`forecast_steps`)
:func:`fit_from`        the first step of each model's fit: the main study's length
======================  ===========================================================================================
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ..repro.profiles import ProfileError
from . import baselines as bl
from .evaluation import cheap_baselines, evaluate_param_shift, mlp_positions, predict, test_prompts
from .model import ATTENTIONS, InContextGPT
from .tasks import PRETRAINING

# ---- scoring --------------------------------------------------------------------------------------------


def _paired_r2(pred: torch.Tensor, y: torch.Tensor, idx: torch.Tensor) -> np.ndarray:
    """R² across prompts of one position's predictions for each bootstrap resample (rows of ``idx``)."""
    p, t = pred[idx], y[idx]
    resid = ((p - t) ** 2).mean(1)
    var = t.var(1, unbiased=False)
    return (1 - resid / var).numpy()


def score_depth(cfg, depth: int, models: dict[tuple[str, int], InContextGPT]) -> dict:
    """Every snapshot model of one target depth (``models[(attention, step)]``) beside the baselines on the
    pretraining mixture. At the training length (the query after ``train_examples − 1`` examples): R² on the
    first ``mlp_prompts`` test prompts (where the MLP is trained) and on all of them, with ``resamples`` paired
    bootstrap values of each. At every MLP position up to the training length, objective 1's shortfall (the
    MLP's R² minus the model's on all prompts, :func:`icdl.gpt_icl.objectives.verdict_tables`), the largest
    kept as ``obj1``. Returns ``{"points": frame, "boot": {name: (resamples,) list}}``."""
    xs, ys = test_prompts(cfg, depth, PRETRAINING)
    q = cfg["train_examples"] - 1  # 0-based query index: train_examples − 1 examples before it
    if q not in mlp_positions(cfg):
        raise ProfileError(f"gpt_scale: the MLP must be trained at the training length: mlp_positions must "
                           f"contain train_examples − 1 = {q}, got {tuple(cfg['mlp_positions'])}")
    m = min(cfg["mlp_prompts"], len(ys))
    g = torch.Generator().manual_seed(cfg["seed"] + depth)
    idx_m = torch.randint(0, m, (cfg["resamples"], m), generator=g)
    idx_all = torch.randint(0, len(ys), (cfg["resamples"], len(ys)), generator=g)
    every_m, every_all = torch.arange(m)[None], torch.arange(len(ys))[None]
    mlp_r2, mlp_pred = {}, None
    for p in (p for p in mlp_positions(cfg) if p <= q):
        res = bl.trained_mlp(xs[:m], ys[:m], p, depth=depth, width=cfg["mlp_width"], epochs=cfg["mlp_epochs"],
                             seed=cfg["seed"])
        mlp_r2[p] = res["best_r2"]
        if p == q:
            mlp_pred = res["pred"][res["best_epoch"]]
    y_m, y_all = ys[:m, q], ys[:, q]
    curves: list[dict] = []
    boot = {"mlp@mlp": _paired_r2(mlp_pred, y_m, idx_m)}
    rows = [{"depth": depth, "method": "mlp", "attention": "", "step": 0, "r2_mlp_prompts": mlp_r2[q],
             "r2_all": np.nan, "obj1": np.nan}]
    for name, pred in cheap_baselines(xs, ys).items():
        key = {bl.LEAST_SQUARES: "least_squares", bl.NEAREST_NEIGHBOURS: "knn", bl.CONTEXT_MEAN: "context_mean"}[name]
        boot[f"{key}@mlp"] = _paired_r2(pred[:m, q], y_m, idx_m)
        boot[f"{key}@all"] = _paired_r2(pred[:, q], y_all, idx_all)
        rows.append({"depth": depth, "method": key, "attention": "", "step": 0,
                     "r2_mlp_prompts": float(_paired_r2(pred[:m, q], y_m, every_m)[0]),
                     "r2_all": float(_paired_r2(pred[:, q], y_all, every_all)[0]), "obj1": np.nan})
    for (attention, step), model in sorted(models.items()):
        full = predict(model, xs, ys)
        pred = full[:, q]
        r2_all = bl.r2_across_prompts(full, ys).numpy()
        boot[f"{attention}:{step}@mlp"] = _paired_r2(pred[:m], y_m, idx_m)
        boot[f"{attention}:{step}@all"] = _paired_r2(pred, y_all, idx_all)
        rows.append({"depth": depth, "method": "transformer", "attention": attention, "step": step,
                     "r2_mlp_prompts": float(_paired_r2(pred[:m], y_m, every_m)[0]), "r2_all": float(r2_all[q]),
                     "obj1": max(mlp_r2[p] - float(r2_all[p]) for p in mlp_r2)})
        curves += [{"depth": depth, "attention": attention, "step": step, "position": i + 1, "r2": float(v)}
                   for i, v in enumerate(r2_all)]
    last = {a: max(st for at, st in models if at == a) for a in {a for a, _ in models}}
    shift = []
    for attention, step in sorted(last.items()):
        at_len = evaluate_param_shift(models[(attention, step)], cfg, depth)
        at_len = at_len[at_len["position"] == cfg["train_examples"]]
        shift += [{"depth": depth, "attention": attention, "step": step, "mu": r.mu, "r2": r.r2}
                  for r in at_len.itertuples()]
    return {"points": pd.DataFrame(rows), "curves": pd.DataFrame(curves), "shift": pd.DataFrame(shift),
            "boot": {k: v.tolist() for k, v in boot.items()}}


def trend(points: pd.DataFrame, boot: dict[str, dict[str, list]], q: float = 0.05) -> pd.DataFrame:
    """Per target depth, attention and snapshot step: the **shortfall** below the MLP (R²_MLP − R²_model on the
    MLP's prompts), the **lead** over least squares and over 3-NN (R²_model − R²_baseline on all prompts),
    each with its ``q/2`` … ``1 − q/2`` paired bootstrap band. ``boot`` is keyed by depth (as text)."""
    rows = []
    for r in points[points["method"] == "transformer"].itertuples():
        b = {k: np.asarray(v) for k, v in boot[str(r.depth)].items()}
        base = points[(points["depth"] == r.depth) & (points["method"] != "transformer")].set_index("method")
        me = f"{r.attention}:{r.step}"
        row = {"depth": r.depth, "attention": r.attention, "step": r.step, "r2": r.r2_all,
               "shortfall": base.loc["mlp", "r2_mlp_prompts"] - r.r2_mlp_prompts,
               "lead_ls": r.r2_all - base.loc["least_squares", "r2_all"],
               "lead_knn": r.r2_all - base.loc["knn", "r2_all"]}
        for name, samples in (("shortfall", b["mlp@mlp"] - b[f"{me}@mlp"]),
                              ("lead_ls", b[f"{me}@all"] - b["least_squares@all"]),
                              ("lead_knn", b[f"{me}@all"] - b["knn@all"])):
            row[f"{name}_lo"], row[f"{name}_hi"] = np.quantile(samples, [q / 2, 1 - q / 2])
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["depth", "attention", "step"], ignore_index=True)


def least_squares_shortfall(points: pd.DataFrame) -> dict[int, float]:
    """Per target depth, least squares' shortfall below the MLP on the MLP's prompts (R²_MLP − R²_LS): the
    yardstick beside every model's shortfall -- a model above it does worse than a linear fit."""
    base = points[points["method"].isin(["mlp", "least_squares"])]
    wide = base.pivot_table(index="depth", columns="method", values="r2_mlp_prompts")
    return {int(d): float(r["mlp"] - r["least_squares"]) for d, r in wide.iterrows()}


def _line(log_steps: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """Least-squares line ``values ≈ a + b · log2(steps)``: ``(a, b)``."""
    b, a = np.polyfit(log_steps, values, 1)
    return float(a), float(b)


def forecast_steps(a: float, b: float, tolerance: float, last_step: int, last_value: float) -> float:
    """The steps at which the line ``a + b log2(steps)`` reaches ``tolerance``: the last step itself where the
    shortfall is already within it, ``inf`` where the line does not fall."""
    if last_value <= tolerance:
        return float(last_step)
    if b >= 0:
        return math.inf
    return float(2 ** ((tolerance - a) / b))


def fit_trend(points: pd.DataFrame, boot: dict[str, dict[str, list]], fit_from: dict[str, int], tolerance: float,
              q: float = 0.1) -> pd.DataFrame:
    """Per target depth and attention, a line through the shortfall against log2(steps) over the snapshots
    from ``fit_from[attention]`` on (after the warm phase): its change per doubling (``per_doubling``) with the
    ``q/2`` … ``1 − q/2`` band over the paired bootstrap resamples, and the forecast steps at which the shortfall
    reaches ``tolerance`` (:func:`forecast_steps`) with the band of the same resamples."""
    rows = []
    models = points[points["method"] == "transformer"][["depth", "attention"]].drop_duplicates()
    for depth, attention in models.itertuples(index=False):
        b = {k: np.asarray(v) for k, v in boot[str(depth)].items()}
        mine = points[(points["depth"] == depth) & (points["attention"] == attention)
                      & (points["step"] >= fit_from[attention])].sort_values("step")
        if len(mine) < 2:
            raise ValueError(f"depth {depth} {attention}: the fit needs two snapshots from step "
                             f"{fit_from[attention]} on, got {len(mine)}")
        mlp = points[(points["depth"] == depth) & (points["method"] == "mlp")]["r2_mlp_prompts"].iloc[0]
        steps = mine["step"].to_numpy()
        x = np.log2(steps)
        short = mlp - mine["r2_mlp_prompts"].to_numpy()
        a, slope = _line(x, short)
        samples = np.stack([b["mlp@mlp"] - b[f"{attention}:{s}@mlp"] for s in steps], axis=1)  # (resamples, snaps)
        fits = [_line(x, s) for s in samples]
        fc = forecast_steps(a, slope, tolerance, int(steps[-1]), float(short[-1]))
        fcs = [forecast_steps(fa, fb, tolerance, int(steps[-1]), float(s[-1])) for (fa, fb), s in zip(fits, samples)]
        lo, hi = np.quantile([fb for _, fb in fits], [q / 2, 1 - q / 2])
        flo, fhi = np.quantile(fcs, [q / 2, 1 - q / 2])
        rows.append({"depth": depth, "attention": attention, "snapshots": len(steps), "first": int(steps[0]),
                     "last": int(steps[-1]), "shortfall_first": float(short[0]), "shortfall_last": float(short[-1]),
                     "per_doubling": slope, "per_doubling_lo": float(lo), "per_doubling_hi": float(hi),
                     "forecast": fc, "forecast_lo": float(flo), "forecast_hi": float(fhi)})
    return pd.DataFrame(rows, columns=list(FIT_COLUMNS))


#: the columns of :func:`fit_trend`'s frame
FIT_COLUMNS = ("depth", "attention", "snapshots", "first", "last", "shortfall_first", "shortfall_last", "per_doubling",
               "per_doubling_lo", "per_doubling_hi", "forecast", "forecast_lo", "forecast_hi")


def fit_from(cfg) -> dict[str, int]:
    """The first step of each model's fit: the main study's length (after the softmax model's warm phase;
    the ReLU model from its first step at that length)."""
    return {a: (cfg["relu_steps"] if a == "relu" and cfg["relu_init"] == "softmax" else cfg["steps"])
            for a in ATTENTIONS}
