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
:func:`target_offset`   a model's steps on the target family: its own less the warm phase, plus what it inherits
:func:`fit_trend`       the shortfall's change per doubling of the target steps (a line in log steps) with a band
                        that holds the prompts' and the training's noise, and the forecast of objective 1's number
                        extended to the paper's steps (:func:`forecast_steps`)
:func:`fit_from`        the first step of each model's fit: the main study's length
======================  ===========================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.evaluation import cheap_baselines, evaluate_param_shift, mlp_positions, predict, test_prompts
from icdl.gpt_icl.core.model import ATTENTIONS, InContextGPT
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.repro.profiles import ProfileError

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
    MLP's R² minus the model's on all prompts, :func:`icdl.gpt_icl.core.main_study.verdict_tables`), the largest
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


def trend(points: pd.DataFrame, boot: dict[str, dict[str, list]], q: float = 0.1) -> pd.DataFrame:
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


#: the paper's 500 k training steps (all on its target family), the horizon of the forecast
PAPER_STEPS = 500_000


def target_offset(cfg) -> dict[str, int]:
    """Per attention, what to subtract from a model's own step to count its steps on the target family: the
    softmax model's warm phase (``warm_steps`` on the ``warm_family``) is not training on the targets, while a
    ReLU-attention model that starts from the softmax model at the main study's length brings that model's
    ``steps − warm_steps`` target steps with it (a negative offset). ICDL's 500 k steps are all on its targets."""
    warm = cfg["warm_steps"] if cfg["warm_family"] != "none" else 0
    inherited = cfg["steps"] - warm if cfg["relu_init"] == "softmax" else 0
    return {"softmax": warm, "relu": -inherited}


def _lines(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least-squares lines ``y ≈ a + b x`` through each row of ``y`` (rows: resamples): ``(a, b, se)``, ``se``
    the slope's standard error from the scatter of the points about their line (0 for two points)."""
    y = np.atleast_2d(y)
    xc = x - x.mean()
    sxx = float(xc @ xc)
    b = (y - y.mean(1, keepdims=True)) @ xc / sxx
    a = y.mean(1) - b * x.mean()
    resid = y - a[:, None] - b[:, None] * x
    dof = len(x) - 2
    se = np.sqrt((resid ** 2).sum(1) / dof / sxx) if dof > 0 else np.zeros_like(b)
    return a, b, se


def forecast_steps(a, b, tolerance: float, first: float, horizon: float = PAPER_STEPS) -> np.ndarray:
    """The target steps from which the line ``a + b log2(steps)`` stays within ``tolerance`` up to ``horizon``
    (elementwise): where it falls, the step it crosses the tolerance (``first`` where it starts within);
    where it does not fall, ``first`` if it is within the tolerance at the horizon and ``inf`` otherwise. So
    the forecast is at most ``horizon`` exactly when the line, extended to ``horizon``, is within the
    tolerance there."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        cross = np.where(b < 0, 2.0 ** ((tolerance - a) / np.where(b < 0, b, -1.0)), np.inf)
    flat = np.where(a + b * np.log2(horizon) <= tolerance, float(first), np.inf)
    return np.where(b < 0, np.maximum(cross, float(first)), flat)


def band(draws, q: float = 0.1) -> tuple[float, float]:
    """The ``q/2`` and ``1 − q/2`` quantiles of ``draws``, each one of the draws (no interpolation: a forecast
    that never comes, ``inf``, stays ``inf`` at an end instead of turning into NaN)."""
    lo, hi = np.quantile(np.asarray(draws, dtype=float), [q / 2, 1 - q / 2], method="nearest")
    return float(lo), float(hi)


#: t draws per bootstrap resample of the prompts: the training noise drawn on each resample's line
T_DRAWS = 10


def fit_trend(points: pd.DataFrame, boot: dict[str, dict[str, list]], fit_from: dict[str, int], tolerance: float,
              q: float = 0.1, offset: dict[str, int] | None = None, horizon: float = PAPER_STEPS, seed: int = 0,
              draws: bool = False):
    """Per target depth and attention, lines against log2 of the **steps on the target family** (a model's own
    step minus ``offset[attention]``, :func:`target_offset`; none given: the model's own steps) over the
    snapshots from ``fit_from[attention]`` on:

    * the shortfall below the MLP at the training length: its change per doubling (``per_doubling``; on the
      model's own steps, ``per_doubling_own_clock``) with a ``q/2`` … ``1 − q/2`` band that holds both noises
      -- the prompts' (the line refitted on every paired bootstrap resample) and the run's snapshot scatter
      (on each resample, :data:`T_DRAWS` slopes drawn from the t distribution of a least-squares slope, ``n − 2``
      degrees of freedom, with the standard error of the snapshots' scatter about the line less the part of it
      the prompt resamples already carry);
    * objective 1's own number (``obj1``: the largest shortfall over the MLP's positions up to the training
      length) and its forecast: the target steps from which its line stays within ``tolerance`` up to
      ``horizon`` (:func:`forecast_steps`: an extrapolation of the line to ``horizon``), with the band of the
      line itself -- its level and slope drawn from their t distributions -- from the snapshots' scatter (the
      run stores no prompt resamples of objective 1's number: what of the prompts' noise moves it from snapshot
      to snapshot is in the scatter, what is shared by every snapshot is not).

    Steps in ``first`` and ``last`` are the model's own; ``first_target``, ``last_target`` and the forecast
    count target steps. With ``draws``, also returns per model the draws of the slope, of the forecast, of the
    line at the horizon and of objective 1's number at the last snapshot moved by the snapshots' scatter
    (``{(depth, attention): {"slope", "forecast", "at_horizon", "obj1_last": (R·T,)}}``; the same index pairs
    the models of one target depth on their prompt resample)."""
    offset = offset or {a: 0 for a in ATTENTIONS}
    rng = np.random.default_rng(seed)
    rows, out = [], {}
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
        target = steps - offset[attention]
        if target.min() < 1:
            raise ValueError(f"depth {depth} {attention}: snapshot at step {steps.min()} has no steps on the "
                             f"target family (offset {offset[attention]}); fit from a later step")
        x = np.log2(target.astype(float))
        short = mlp - mine["r2_mlp_prompts"].to_numpy()
        (a,), (slope,), (se,) = _lines(x, short)
        samples = np.stack([b["mlp@mlp"] - b[f"{attention}:{s}@mlp"] for s in steps], axis=1)  # (resamples, snaps)
        _, sb, _ = _lines(x, samples)
        # the snapshots' scatter about the line, less the part of it that the prompts' resamples already carry
        # (the scatter of each resample's deviations from the full-data values about their own line): what is
        # left is the run's own snapshot-to-snapshot noise, counted once
        _, _, prompt_se = _lines(x, samples - short)
        train_se = float(np.sqrt(max(se ** 2 - float(np.mean(prompt_se ** 2)), 0.0)))
        dof = max(len(x) - 2, 1)
        slopes = (sb[:, None] + train_se * rng.standard_t(dof, size=(len(sb), T_DRAWS))).ravel()
        obj = mine["obj1"].to_numpy(dtype=float)
        (oa,), (ob,), (ose,) = _lines(x, obj)
        scatter = ose * np.sqrt(((x - x.mean()) ** 2).sum())  # the residual standard deviation of the points
        # the line's level at the points' centre and its slope, each drawn from its own t distribution (the two
        # are independent for a least-squares line): the band of the line itself, extended to the horizon
        ob_draws = ob + ose * rng.standard_t(dof, size=slopes.size)
        level = obj.mean() + scatter / np.sqrt(len(x)) * rng.standard_t(dof, size=slopes.size)
        oa_draws = level - ob_draws * x.mean()
        fc = float(forecast_steps(oa, ob, tolerance, target[0], horizon))
        fcs = forecast_steps(oa_draws, ob_draws, tolerance, target[0], horizon)
        lo, hi = band(slopes, q)
        flo, fhi = band(fcs, q)
        at_horizon = oa_draws + ob_draws * np.log2(horizon)
        hlo, hhi = band(at_horizon, q)
        # one snapshot's objective-1 number, moved by the snapshots' scatter about their line (its residual
        # standard deviation, t with n − 2 degrees of freedom): how much a little more or less training moves it
        last_draws = obj[-1] + scatter * rng.standard_t(dof, size=slopes.size)
        out[(int(depth), attention)] = {"slope": slopes, "forecast": fcs, "at_horizon": at_horizon,
                                        "obj1_last": last_draws}
        own_clock = _lines(np.log2(steps.astype(float)), short)[1][0]
        rows.append({"depth": depth, "attention": attention, "snapshots": len(steps), "first": int(steps[0]),
                     "last": int(steps[-1]), "first_target": int(target[0]), "last_target": int(target[-1]),
                     "shortfall_first": float(short[0]), "shortfall_last": float(short[-1]),
                     "shortfall_line_a": float(a), "per_doubling": float(slope),
                     "per_doubling_own_clock": float(own_clock), "per_doubling_lo": float(lo),
                     "per_doubling_hi": float(hi), "prompt_only_lo": float(np.quantile(sb, q / 2)),
                     "prompt_only_hi": float(np.quantile(sb, 1 - q / 2)), "obj1_first": float(obj[0]),
                     "obj1_last": float(obj[-1]), "obj1_line_a": float(oa), "obj1_per_doubling": float(ob),
                     "obj1_at_horizon": float(oa + ob * np.log2(horizon)), "obj1_at_horizon_lo": hlo,
                     "obj1_at_horizon_hi": hhi, "forecast": fc, "forecast_lo": float(flo), "forecast_hi": float(fhi)})
    frame = pd.DataFrame(rows, columns=list(FIT_COLUMNS))
    return (frame, out) if draws else frame


def leave_first_out(points: pd.DataFrame, boot: dict[str, dict[str, list]], fit_from: dict[str, int],
                    tolerance: float, offset: dict[str, int] | None = None, q: float = 0.1) -> pd.DataFrame:
    """How much the first fitted snapshot carries each line: per model, the change per doubling of the
    shortfall and its band (:func:`fit_trend`) over every snapshot from ``fit_from`` on (``per_doubling``,
    ``lo``, ``hi``) and with the first of them left out (``without_first``, ``without_lo``, ``without_hi``;
    one degree of freedom fewer, so a wider band), and ``sign_kept``: whether both slopes fall (or both do not)."""
    later = {}
    for attention, start in fit_from.items():
        steps = sorted(points[(points["method"] == "transformer") & (points["attention"] == attention)
                              & (points["step"] >= start)]["step"].unique())
        if len(steps) < 4:
            raise ValueError(f"{attention}: leaving the first of {len(steps)} snapshots out leaves too few for a "
                             "line with a band (at least three)")
        later[attention] = int(steps[1])
    keys = ["depth", "attention"]
    cols = ["per_doubling", "per_doubling_lo", "per_doubling_hi"]
    full = fit_trend(points, boot, fit_from, tolerance, q, offset)[keys + ["snapshots"] + cols]
    part = fit_trend(points, boot, later, tolerance, q, offset)[keys + cols]
    out = full.merge(part, on=keys, suffixes=("", "_without"))
    out = out.rename(columns={"per_doubling_lo": "lo", "per_doubling_hi": "hi", "per_doubling_without": "without_first",
                              "per_doubling_lo_without": "without_lo", "per_doubling_hi_without": "without_hi"})
    return out.assign(sign_kept=(out["per_doubling"] < 0) == (out["without_first"] < 0))


#: the columns of :func:`fit_trend`'s frame
FIT_COLUMNS = ("depth", "attention", "snapshots", "first", "last", "first_target", "last_target", "shortfall_first",
               "shortfall_last", "shortfall_line_a", "per_doubling", "per_doubling_own_clock", "per_doubling_lo",
               "per_doubling_hi", "prompt_only_lo", "prompt_only_hi", "obj1_first", "obj1_last", "obj1_line_a",
               "obj1_per_doubling", "obj1_at_horizon", "obj1_at_horizon_lo", "obj1_at_horizon_hi", "forecast",
               "forecast_lo", "forecast_hi")


def fit_from(cfg) -> dict[str, int]:
    """The first step of each model's fit: the main study's length (after the softmax model's warm phase;
    the ReLU model from its first step at that length)."""
    return {a: (cfg["relu_steps"] if a == "relu" and cfg["relu_init"] == "softmax" else cfg["steps"])
            for a in ATTENTIONS}
