"""ICDL sec. 5 with more training (chapter ``gpt_scale``): how far is the shortfall of the CPU models
below the trained MLP a matter of training, and how much training would close it?

The models are the main study's (:mod:`~icdl.gpt_icl.objectives`: one softmax and one ReLU-attention
transformer per target depth, the same prompts, baselines and evaluation), trained ``factor`` times longer
and scored at snapshots along the way, ``per_doubling`` of them per doubling of the steps, from
``before`` snapshots before the main study's length (its ``steps``) to the end. The softmax model trains
``factor × steps`` steps (the warm phase unchanged); the ReLU model starts, as in the main study, from the
softmax model at ``steps`` steps and trains ``factor × relu_steps``. So the snapshot at the main study's
length *is* the main study's model, bit for bit (tested), and the trend starts from it.

=========================  ==================================================================================
:data:`PROFILES`           ``quick`` (CI), ``reference`` (CPU, two cores; the chapter gives its time:
                           ``python -m icdl.gpt_icl.scale --profile reference --workers 2``), ``long`` (the
                           reference's models 64 times longer, a GPU command), ``paper`` (Appendix F's models),
                           ``wide`` (the reference's models at twice the width, the main study's steps)
:func:`snapshot_steps`     the steps at which a model is scored
:func:`train_model`        train or resume one model of one target depth (resumable, one writer)
:func:`score_depth`        every snapshot of one target depth against the baselines on the same prompts
:func:`trend`              per model and snapshot: the shortfall below the MLP, the lead over least squares
                           and 3-NN at the training length, with bootstrap bands
:func:`fit_trend`          the shortfall's change per doubling of the steps (a line in log steps), its band,
                           and the forecast of the steps at which it would reach the paper's tolerance
:func:`judge`              the ledger entries of the scale claims (:data:`icdl.repro.claims.CRITERIA`)
:func:`width_comparison`   the ``wide`` profile's models beside the reference's: at the same steps, and at the
                           reference's snapshot of the nearest training FLOPs (:func:`judge_wider`)
:func:`write`, :func:`load` the result file ``results/gpt_scale/scale.<profile>.json``
=========================  ==================================================================================

The shortfall, the leads and the fit use *paired* prompts: the MLP trains on the first ``mlp_prompts`` test
prompts only, so the model is scored on the same ones there, and a bootstrap resamples prompts jointly for
every snapshot (the same resample across snapshots, so the fitted slope's band is that of one set of prompts).
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..repro.cli import Parser, at_least_one, cuda_or_refuse
from ..repro.profiles import ProfileError, ProfileSet, dry_run
from ..repro.results import (
    CheckpointError,
    ResultFileError,
    checkpoint_exists,
    load_checkpoint,
    load_result,
    one_writer,
    project_root,
    provenance,
    save_profile_result,
    save_result,
)
from . import baselines as bl
from . import objectives
from .evaluation import cheap_baselines, evaluate_param_shift, mlp_positions, predict, test_prompts
from .model import ATTENTIONS, InContextGPT
from .schedule import checkpoint_path, configs
from .tasks import PRETRAINING
from .training import load_snapshot, train

_OWN = {
    "quick": {"factor": 2, "per_doubling": 2, "before": 2, "resamples": 50},
    "reference": {"factor": 4, "per_doubling": 2, "before": 4, "resamples": 200},
    "long": {"factor": 64, "per_doubling": 2, "before": 4, "resamples": 200},
    "paper": {"factor": 1, "per_doubling": 1, "before": 6, "resamples": 200},
    # the reference's models at twice the width (four heads of the same size): 3.9× the parameters, 3.7× the
    # FLOPs per step, trained for the main study's steps (:func:`judge_wider`)
    "wide": {"factor": 1, "per_doubling": 2, "before": 4, "resamples": 200, "n_embd": 128, "n_head": 4},
}
_BASE = {"quick": "quick", "reference": "reference", "long": "reference", "paper": "paper", "wide": "reference"}
PROFILES = ProfileSet(
    "gpt_scale",
    profiles={name: {**objectives.PROFILES.profiles[_BASE[name]], **own} for name, own in _OWN.items()},
    ranges={**objectives.PROFILES.ranges, "factor": frozenset({1, 2, 4, 8, 16, 32, 64, 128}),
            "per_doubling": (1, 8), "before": (0, 12), "resamples": (10, 10_000)},
    command="python -m icdl.gpt_icl.scale --profile {profile} --workers 2",
    memory=objectives.memory_estimate,
)
#: what every training job of a profile records as its command (the whole run, which resumes every job)
COMMAND = "python -m icdl.gpt_icl.scale --profile {profile} --workers 2"
#: checkpoints of this study are told apart from the main study's by this tag
TAG = "_scale"


def snapshot_steps(base: int, factor: int, per_doubling: int, before: int) -> tuple[int, ...]:
    """``base · 2^(j / per_doubling)`` rounded, for ``j = −before … per_doubling · log2(factor)``: the
    steps at which a model trained ``factor × base`` steps is scored (``base`` and the end among them)."""
    if factor < 1 or factor & (factor - 1):
        raise ValueError(f"factor must be a power of two, got {factor}")
    top = per_doubling * int(math.log2(factor))
    steps = sorted({max(1, round(base * 2 ** (j / per_doubling))) for j in range(-before, top + 1)})
    return tuple(steps)


def long_settings(cfg) -> dict:
    """The profile's settings with the main study's lengths multiplied by ``factor`` (the warm phase kept)."""
    return {**cfg, "steps": cfg["factor"] * cfg["steps"], "relu_steps": cfg["factor"] * cfg["relu_steps"]}


def model_snapshots(cfg, attention: str) -> tuple[int, ...]:
    """The snapshot steps of one attention's model (counted in that model's own steps)."""
    base = cfg["relu_steps"] if attention == "relu" and cfg["relu_init"] == "softmax" else cfg["steps"]
    return snapshot_steps(base, cfg["factor"], cfg["per_doubling"], cfg["before"])


def folder(profile: str) -> Path:
    """Where the checkpoints and snapshots of a profile live (``results/gpt_scale/checkpoints/<profile>``)."""
    return PROFILES.folder("checkpoints", profile)


def _start_of_relu(cfg, depth: int, where: Path | None, memory: dict) -> dict:
    """The weights the ReLU model starts from: the softmax model at the main study's length."""
    if where is None:
        return memory[(depth, "softmax")]["snapshots"][cfg["steps"]]
    ckpt = checkpoint_path(where, depth, "softmax", TAG)
    _, state = load_snapshot(ckpt, cfg["steps"], command=COMMAND.format(profile=cfg["profile"]))
    return state["model"]


def train_model(cfg, depth: int, attention: str, *, where: Path | None = None, until: int | None = None,
                progress: bool = True, device: str = "cpu", memory: dict | None = None) -> dict:
    """Train or resume one model of the study (``until``: stop after that many of its steps this call). The
    ReLU model needs the softmax model's snapshot at the main study's length. ``memory`` (without ``where``)
    holds the models trained in this process, by ``(depth, attention)``."""
    long = long_settings(cfg)
    mcfg, tcfg, trcfg = configs(long, depth, attention, long["n_layer"])
    init = _start_of_relu(cfg, depth, where, memory or {}) if trcfg.init_from else None
    ckpt = None if where is None else checkpoint_path(where, depth, attention, TAG)
    limit = None if until is None else max(0, until - _steps_done(ckpt))
    return train(mcfg, tcfg, trcfg, checkpoint=ckpt, max_steps_this_call=limit, progress=progress, device=device,
                 init_state=init, command=COMMAND.format(profile=cfg["profile"]),
                 snapshots=model_snapshots(cfg, attention))


def longest_trained_models(cfg) -> dict:
    """The finished models of a profile's run, from its checkpoints: ``{(depth, attention): model}`` after
    ``factor`` times the main study's training, each checked to be the model the profile describes
    (:func:`icdl.gpt_icl.schedule.load_trained`)."""
    from .schedule import load_trained

    long = long_settings(cfg)
    return {(depth, att): load_trained(long, folder(cfg["profile"]), depth, att, cfg["n_layer"],
                                       command=COMMAND.format(profile=cfg["profile"]), tag=TAG)
            for depth in cfg["depths"] for att in ATTENTIONS}


def _steps_done(ckpt: Path | None) -> int:
    if ckpt is None or not checkpoint_exists(ckpt):
        return 0
    return int(load_checkpoint(ckpt, kind="gpt_icl")["step"])


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


# ---- the ledger ---------------------------------------------------------------------------------------

#: the paper's 500 k training steps, against which the forecast is judged
PAPER_STEPS = 500_000


def obj3_drop(shift: pd.DataFrame) -> pd.DataFrame:
    """Objective 3 on the longest-trained models: per target depth and attention, the largest fall of R² at
    the training length from μ = 0 to a shifted μ (as :func:`icdl.gpt_icl.objectives.verdict_tables`)."""
    rows = []
    for (depth, attention), g in shift.groupby(["depth", "attention"]):
        at0 = float(g.loc[g["mu"] == 0, "r2"].iloc[0])
        rows.append({"depth": depth, "attention": attention, "max_drop": at0 - float(g.loc[g["mu"] != 0, "r2"].min())})
    return pd.DataFrame(rows)


def judge(fits: pd.DataFrame, tr: pd.DataFrame, points: pd.DataFrame, shift: pd.DataFrame) -> list[dict]:
    """The ledger entries of the scale claims: the shortfall falls with training (the largest change per
    doubling and the largest upper end of its band, both below 0), objective 1 on the longest-trained models
    (``objective1``: :func:`icdl.gpt_icl.objectives` value, the largest shortfall over MLP positions), the lead
    over 3-NN at the last snapshot (smallest over models, above 0), and the forecast within the paper's steps
    (the largest forecast over models at most :data:`PAPER_STEPS`), objective 3 on the longest-trained
    models (the largest fall at most objective 3's bound)."""
    tolerance, max_drop = objectives.CRITERIA["obj1_tolerance"], objectives.CRITERIA["obj3_max_drop"]
    last = tr.loc[tr.groupby(["depth", "attention"])["step"].idxmax()]
    tf = points[points["method"] == "transformer"]
    final = tf.loc[tf.groupby(["depth", "attention"])["step"].idxmax()]
    objective1 = float(final["obj1"].max())
    drops = obj3_drop(shift)
    objective3 = float(drops["max_drop"].max())

    def listing(t, col, fmt):
        return "; ".join(f"depth {r.depth} {r.attention}: {fmt(getattr(r, col))}" for r in t.itertuples())

    slope, slope_hi = float(fits["per_doubling"].max()), float(fits["per_doubling_hi"].max())
    lead = float(last["lead_knn"].min())
    forecast = float(fits["forecast"].max())
    return [
        {"claim": "scale-shortfall-falls", "passed": slope < 0 and slope_hi < 0, "value": slope,
         "values": {"slope_hi": slope_hi},
         "ours": "change of the shortfall below the MLP per doubling of the steps (90 % band): "
                 + "; ".join(f"depth {r.depth} {r.attention}: {r.per_doubling:+.4f} ({r.per_doubling_lo:+.4f} to "
                             f"{r.per_doubling_hi:+.4f})" for r in fits.itertuples()),
         "criterion": "below 0 for every model, the upper end of the band too"},
        {"claim": "icdl-obj1-longer", "passed": objective1 <= tolerance, "value": objective1,
         "ours": f"largest shortfall below the MLP at its positions up to the training length, longest-trained "
                 f"models: {objective1:.3f}",
         "criterion": f"at most {tolerance} (objective 1's tolerance)"},
        {"claim": "scale-beats-knn", "passed": lead > 0, "value": lead,
         "ours": "R² over 3-NN's at the training length after the longest training: "
                 + listing(last, "lead_knn", lambda v: f"{v:+.4f}"),
         "criterion": "above 0 for every model"},
        {"claim": "scale-forecast", "passed": forecast <= PAPER_STEPS, "value": forecast,
         "ours": "steps at which the fitted line reaches objective 1's tolerance: " + "; ".join(
             f"depth {r.depth} {r.attention}: " + ("never (not falling)" if math.isinf(r.forecast) else
                                                   f"within it by the last snapshot ({r.last:,})"
                                                   if r.forecast <= r.last else f"{r.forecast:,.0f}")
             for r in fits.itertuples()),
         "criterion": f"at most the paper's {PAPER_STEPS:,} steps for every model"},
        {"claim": "icdl-obj3-longer", "passed": objective3 <= max_drop, "value": objective3,
         "ours": "largest fall of R² at the training length when μ moves to ±0.5, longest-trained models: "
                 + listing(drops, "max_drop", lambda v: f"{v:.3f}"),
         "criterion": f"at most {max_drop} (objective 3's bound)"},
    ]


# ---- the wider models (profile ``wide``) beside the reference's ------------------------------------------

#: the profile of the wider models, and the one they are compared with
WIDER, NARROWER = "wide", "reference"
#: a reference snapshot is compute-matched to a wider model when their training FLOPs differ by at most this
#: factor (half a doubling either way)
MATCH_WITHIN = 2 ** 0.5


def training_flops(cfg, attention: str, step: int) -> float:
    """FLOPs of training a model of the profile to ``step`` of its own steps (forward and backward,
    :func:`icdl.gpt_icl.measure.flops_per_step`); a ReLU model that starts from the softmax model at the main
    study's length counts that model's steps too."""
    model = configs(cfg, cfg["depths"][0], attention, cfg["n_layer"])[0]
    start = cfg["steps"] if attention == "relu" and cfg["relu_init"] == "softmax" else 0
    return float(_flops_per_step(model, cfg["batch"], cfg["train_examples"]) * (start + step))


@functools.lru_cache(maxsize=32)
def _flops_per_step(model, batch: int, examples: int) -> int:
    """:func:`icdl.gpt_icl.measure.flops_per_step`, counted once per model settings (a count runs a step)."""
    from .measure import flops_per_step

    return flops_per_step(model, batch, examples)


def _shortfall_samples(boot: dict, attention: str, step: int) -> np.ndarray:
    b = {k: np.asarray(v) for k, v in boot.items()}
    return b["mlp@mlp"] - b[f"{attention}:{step}@mlp"]


def _r2_at(points: pd.DataFrame, depth: int, attention: str, step: int) -> float:
    """A transformer's R² on the MLP's prompts at one snapshot."""
    at = points[(points["depth"] == depth) & (points["attention"] == attention) & (points["step"] == step)]
    return float(at["r2_mlp_prompts"].iloc[0])


def width_comparison(narrow: dict, wide: dict, ncfg, wcfg, q: float = 0.1) -> pd.DataFrame:
    """Per target depth and attention, the wider models (``wide``: the ``wide`` profile's result) beside the
    reference's (``narrow``): the shortfall below the MLP of each at the main study's length and the change
    from the narrow to the wide model (``delta``, below 0: the wider model is closer to the MLP), and the
    narrow model's snapshot whose training FLOPs are nearest the wide model's (within :data:`MATCH_WITHIN`;
    none for a model whose narrow run never reaches them) with the change from it (``delta_matched``). The
    bands (``q/2`` … ``1 − q/2``) are paired: both studies score the same test prompts with the same bootstrap
    resamples -- refused where their least-squares resamples differ."""
    rows = []
    for depth in sorted({int(d) for d in wide["points"]["depth"]}):
        bn, bw = narrow["boot"][str(depth)], wide["boot"][str(depth)]
        if not np.allclose(bn["least_squares@mlp"], bw["least_squares@mlp"]):
            raise ValueError(f"target depth {depth}: the two studies' bootstrap resamples differ, so their "
                             f"differences cannot be paired; score both with the same prompts and resamples")
        for attention in ATTENTIONS:
            step = fit_from(wcfg)[attention]
            if f"{attention}:{step}@mlp" not in bw:
                continue
            wide_s, narrow_s = _shortfall_samples(bw, attention, step), _shortfall_samples(bn, attention, step)
            mlp_n = narrow["points"][(narrow["points"]["depth"] == depth)
                                     & (narrow["points"]["method"] == "mlp")]["r2_mlp_prompts"].iloc[0]
            mlp_w = wide["points"][(wide["points"]["depth"] == depth)
                                   & (wide["points"]["method"] == "mlp")]["r2_mlp_prompts"].iloc[0]

            short_w = mlp_w - _r2_at(wide["points"], depth, attention, step)
            short_n = mlp_n - _r2_at(narrow["points"], depth, attention, step)
            lo, hi = np.quantile(wide_s - narrow_s, [q / 2, 1 - q / 2])
            flops = training_flops(wcfg, attention, step)
            mine = narrow["points"][(narrow["points"]["depth"] == depth) & (narrow["points"]["attention"] == attention)]
            steps = sorted(int(s) for s in mine["step"])
            ratio = {s: training_flops(ncfg, attention, s) / flops for s in steps}
            best = min(steps, key=lambda s: abs(math.log(ratio[s])))
            matched = best if 1 / MATCH_WITHIN <= ratio[best] <= MATCH_WITHIN else None
            row = {"depth": depth, "attention": attention, "step": step, "width_narrow": ncfg["n_embd"],
                   "width_wide": wcfg["n_embd"], "shortfall_narrow": short_n,
                   "shortfall_wide": short_w, "delta": short_w - short_n, "delta_lo": float(lo), "delta_hi": float(hi),
                   "flops_wide": flops, "matched_step": matched, "flops_ratio": ratio[best] if matched else np.nan,
                   "shortfall_matched": np.nan, "delta_matched": np.nan, "delta_matched_lo": np.nan,
                   "delta_matched_hi": np.nan}
            if matched is not None:
                short_m = mlp_n - _r2_at(narrow["points"], depth, attention, matched)
                mlo, mhi = np.quantile(wide_s - _shortfall_samples(bn, attention, matched), [q / 2, 1 - q / 2])
                row |= {"shortfall_matched": short_m, "delta_matched": short_w - short_m,
                        "delta_matched_lo": float(mlo), "delta_matched_hi": float(mhi)}
            rows.append(row)
    return pd.DataFrame(rows)


def judge_wider(cmp: pd.DataFrame | None, wide: dict | None) -> list[dict]:
    """The ledger entries of the wider models (:data:`icdl.repro.claims.CRITERIA`): twice the width brings every
    model closer to the MLP at the main study's length (the largest change and the largest upper end of its
    90 % band below 0); at equal training FLOPs the wider model is closer than the narrow one trained longer
    (the largest change over the compute-matched models below 0); objectives 1 and 3 on the wider models.
    Without a result (the run has not been made) the entries carry no number and hold nothing."""
    tolerance, max_drop = objectives.CRITERIA["obj1_tolerance"], objectives.CRITERIA["obj3_max_drop"]
    criteria = {"scale-wider-closer": "below 0 for every model, the upper end of the band too",
                "scale-width-over-steps": "below 0 for every model with a compute-matched reference snapshot",
                "icdl-obj1-wider": f"at most {tolerance} (objective 1's tolerance)",
                "icdl-obj3-wider": f"at most {max_drop} (objective 3's bound)"}
    if cmp is None or wide is None:
        return [{"claim": c, "passed": False, "value": float("nan"), "criterion": t,
                 "ours": f"not run: {COMMAND.format(profile=WIDER)}"} for c, t in criteria.items()]
    tf = wide["points"][wide["points"]["method"] == "transformer"]
    final = tf.loc[tf.groupby(["depth", "attention"])["step"].idxmax()]
    objective1 = float(final["obj1"].max())
    drops = obj3_drop(wide["shift"])
    objective3 = float(drops["max_drop"].max())
    matched = cmp.dropna(subset=["delta_matched"])
    worst_matched = float(matched["delta_matched"].max()) if len(matched) else float("nan")

    def each(t, fmt):
        return "; ".join(f"depth {r.depth} {r.attention}: {fmt(r)}" for r in t.itertuples())

    return [
        {"claim": "scale-wider-closer", "passed": bool(cmp["delta"].max() < 0 and cmp["delta_hi"].max() < 0),
         "value": float(cmp["delta"].max()), "values": {"delta_hi": float(cmp["delta_hi"].max())},
         "ours": f"change of the shortfall below the MLP from width {cmp['width_narrow'].iloc[0]} to width "
                 f"{cmp['width_wide'].iloc[0]} at the main study's length (90 % band): "
                 + each(cmp, lambda r: f"{r.delta:+.4f} ({r.delta_lo:+.4f} to {r.delta_hi:+.4f})"),
         "criterion": criteria["scale-wider-closer"]},
        {"claim": "scale-width-over-steps", "passed": bool(len(matched) and worst_matched < 0),
         "value": worst_matched,
         "ours": ("change of the shortfall from the narrow model at the snapshot of the nearest training FLOPs to "
                  "the wide model (90 % band): " + each(matched, lambda r: f"{r.delta_matched:+.4f} "
                  f"({r.delta_matched_lo:+.4f} to {r.delta_matched_hi:+.4f}) against the narrow model at "
                  f"{int(r.matched_step):,} steps") if len(matched) else "no model has a compute-matched snapshot"),
         "criterion": criteria["scale-width-over-steps"]},
        {"claim": "icdl-obj1-wider", "passed": objective1 <= tolerance, "value": objective1,
         "ours": f"largest shortfall below the MLP at its positions up to the training length, wider models: "
                 f"{objective1:.3f}",
         "criterion": criteria["icdl-obj1-wider"]},
        {"claim": "icdl-obj3-wider", "passed": objective3 <= max_drop, "value": objective3,
         "ours": "largest fall of R² at the training length when μ moves to ±0.5, wider models: "
                 + "; ".join(f"depth {r.depth} {r.attention}: {r.max_drop:.3f}" for r in drops.itertuples()),
         "criterion": criteria["icdl-obj3-wider"]},
    ]


# ---- the whole study: in memory (quick) or as resumable jobs (reference) ----------------------------------

#: result fields (``results/gpt_scale/scale.<profile>.json``)
FIELDS = ("points", "curves", "shift", "boot", "trend", "fits", "history", "jobs", "complete", "seconds")


def assemble(cfg, scores: list[dict], history: pd.DataFrame, *, jobs: list | None = None,
             seconds: float = 0.0) -> dict:
    """The study's result from the per-depth scores: their frames joined, the trend and its fits."""
    points = pd.concat([s["points"] for s in scores], ignore_index=True)
    boot = {str(int(s["points"]["depth"].iloc[0])): s["boot"] for s in scores}
    tr = trend(points, boot)
    # a line needs snapshots past the main study's length: a profile trained for that length alone has none
    fits = (fit_trend(points, boot, fit_from(cfg), objectives.CRITERIA["obj1_tolerance"]) if cfg["factor"] > 1
            else pd.DataFrame(columns=list(FIT_COLUMNS)))
    return {"points": points, "curves": pd.concat([s["curves"] for s in scores], ignore_index=True),
            "shift": pd.concat([s["shift"] for s in scores], ignore_index=True), "boot": boot, "trend": tr,
            "fits": fits, "history": history, "jobs": jobs or [], "complete": True, "seconds": seconds}


def study(cfg, *, progress: bool = False) -> dict:
    """The whole study in this process, in memory (the ``quick`` profile of the chapter)."""
    t0 = time.perf_counter()
    memory, scores, hists = {}, [], []
    for depth in cfg["depths"]:
        models = {}
        for attention in ATTENTIONS:
            res = train_model(cfg, depth, attention, progress=progress, memory=memory)
            memory[(depth, attention)] = res
            hists.append(res["history"].assign(depth=depth, attention=attention))
            for step, state in res["snapshots"].items():
                model = InContextGPT(res["model"].cfg)
                model.load_state_dict(state)
                models[(attention, step)] = model.eval()
        scores.append(score_depth(cfg, depth, models))
    return assemble(cfg, scores, pd.concat(hists, ignore_index=True), seconds=time.perf_counter() - t0)


def _score_path(cfg, depth: int) -> Path:
    return folder(cfg["profile"]) / f"score_depth{depth}.json"


def score_job(cfg, depth: int) -> Path:
    """``--score --depth D``: every snapshot of target depth D from its files, scored
    (``checkpoints/<profile>/score_depth<D>.json``, with the trained models' histories), under that file's
    one-writer lock: a second scoring of the same depth is refused in one line naming the first."""
    path = _score_path(cfg, depth)
    with one_writer(path, f"the scores of target depth {depth} ({path.name})"):
        return _score(cfg, depth)


def _score(cfg, depth: int) -> Path:
    t0 = time.perf_counter()
    command = COMMAND.format(profile=cfg["profile"])
    where = folder(cfg["profile"])
    models, hists = {}, []
    for attention in ATTENTIONS:
        ckpt = checkpoint_path(where, depth, attention, TAG)
        state = load_checkpoint(ckpt, command=command, kind="gpt_icl") if checkpoint_exists(ckpt) else None
        steps = configs(long_settings(cfg), depth, attention, cfg["n_layer"])[2].steps
        if state is None or state["step"] < steps:
            raise CheckpointError(f"checkpoint {ckpt} is missing or unfinished; finish it with {command}")
        hists.append(pd.DataFrame(state["history"]).assign(depth=depth, attention=attention))
        for step in model_snapshots(cfg, attention):
            models[(attention, step)] = load_snapshot(ckpt, step, command=command)[0]
    res = score_depth(cfg, depth, models)
    res["history"] = pd.concat(hists, ignore_index=True)
    body = {k: (v.to_dict("list") if isinstance(v, pd.DataFrame) else v) for k, v in res.items()}
    return save_result(_score_path(cfg, depth), body,
                       provenance=provenance(command=command, wall_time_s=time.perf_counter() - t0,
                                             profile=cfg["profile"], seed=cfg["seed"]))


def write_job(cfg, started: float, jobs: list | None = None) -> Path:
    """``--write``: the result file from the per-depth scores."""
    scores, hists = [], []
    for depth in cfg["depths"]:
        data = load_result(_score_path(cfg, depth))["data"]
        scores.append({k: (data[k] if k == "boot" else pd.DataFrame(data[k])) for k in data})
        hists.append(scores[-1]["history"])
    res = assemble(cfg, scores, pd.concat(hists, ignore_index=True), jobs=jobs)
    return write(cfg, res, started)


def write(cfg, res: dict, started: float) -> Path:
    return save_profile_result(PROFILES, "scale", {k: res[k] for k in FIELDS}, profile=cfg["profile"],
                               seed=cfg["seed"], started=started)


def load(profile: str = "reference") -> dict | None:
    """The result of a profile as frames (``None`` where it has not been produced)."""
    path = PROFILES.folder() / f"scale.{profile}.json"
    if not path.is_file():
        return None
    return from_result(load_result(path), f"result file {path}", profile)


def from_result(raw: dict, where: str = "the scale result", profile: str = "reference") -> dict:
    """A loaded result file (``{"provenance", "data"}``) as frames; refused, naming it, if a field is missing."""
    data = raw["data"]
    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise ResultFileError(f"{where} lacks the fields {missing}; rebuild it with {COMMAND.format(profile=profile)}")
    return {k: data[k] if k in ("boot", "jobs", "complete", "seconds") else pd.DataFrame(data[k]) for k in FIELDS}


def jobs(cfg, device: str = "cpu") -> list:
    """The jobs of the resumable run: per target depth the softmax model to the main study's length, then the
    rest of it and the ReLU model (which starts there), then the scoring; last the result file. Estimates in
    minutes from the reference's speed (about 12 steps per second at its size on one core)."""
    from .pipeline import Job

    base = ("--profile", cfg["profile"]) + (("--device", device) if device != "cpu" else ())  # training jobs
    rate = 12 * 60 * (3 * 64 * 64) / (cfg["n_layer"] * cfg["n_embd"] ** 2)  # steps per minute, scaled by size
    out, scored = [], []
    for d in cfg["depths"]:
        first = f"softmax, target depth {d}, to step {cfg['steps']}"
        out.append(Job(first, base + ("--train", "softmax", "--depth", str(d), "--until", str(cfg["steps"])),
                       minutes=cfg["steps"] / rate))
        out.append(Job(f"softmax, target depth {d}, the rest", base + ("--train", "softmax", "--depth", str(d)),
                       after=(first,), minutes=(cfg["factor"] - 1) * cfg["steps"] / rate))
        out.append(Job(f"relu, target depth {d}", base + ("--train", "relu", "--depth", str(d)), after=(first,),
                       minutes=cfg["factor"] * cfg["relu_steps"] / rate))
        out.append(Job(f"score, target depth {d}", ("--profile", cfg["profile"], "--score", "--depth", str(d)),
                       after=(out[-2].name, out[-1].name), minutes=3.0))
        scored.append(out[-1].name)
    return out


def run_all(cfg, workers: int, device: str = "cpu") -> int:
    """``--workers N``: every job (:func:`jobs`) on N single-threaded processes, resuming whatever is done,
    then the result file with the jobs' times. Exit status 1 when a job failed (it names its log)."""
    from .pipeline import run_jobs

    started = time.perf_counter()
    logs = project_root() / "runs" / f"gpt_scale_{cfg['profile']}"
    res = run_jobs(jobs(cfg, device), workers=workers, logs=logs, python=(sys.executable, "-m", "icdl.gpt_icl.scale"))
    if not res["complete"]:
        print(f"not every job finished (logs in {logs}); run the same command again to resume")
        return 1
    path = write_job(cfg, started, jobs=res["jobs"])
    print(f"wrote {path}: {res['wall_s'] / 60:.1f} min wall on {workers} worker(s)")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    p = Parser(prog="python -m icdl.gpt_icl.scale",
               description="ICDL sec. 5's main study trained longer, scored at snapshots.")
    p.add_argument("--profile", default="reference", help=f"one of {PROFILES.names}")
    p.add_argument("--workers", type=int, help="run every job on this many single-threaded processes")
    p.add_argument("--train", choices=ATTENTIONS, help="train one model (with --depth)")
    p.add_argument("--until", type=int, help="with --train: stop after this many of the model's steps")
    p.add_argument("--score", action="store_true", help="score the snapshots of one target depth (with --depth)")
    p.add_argument("--depth", type=int, help="the target depth of --train or --score")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"), help="where --train or --workers trains")
    return p


def _check(p: argparse.ArgumentParser, args, cfg) -> None:
    """One job per call -- the whole run (``--workers``), one model (``--train``) or one depth's scores
    (``--score``) -- and only the flags that job uses; anything else refused in one line."""
    at_least_one(p, workers=args.workers, until=args.until)
    jobs_given = [f for f, on in (("--workers", args.workers is not None), ("--train", args.train is not None),
                                  ("--score", args.score)) if on]
    if not jobs_given:
        p.error("give --workers N (the whole run), or --train / --score with --depth (one job)")
    if len(jobs_given) > 1:
        p.error(f"{' and '.join(jobs_given)} are separate jobs: give one of them (--workers N runs them all)")
    if args.until is not None and not args.train:
        p.error("--until stops the training of one model: it needs --train (--workers sets each job's own limit)")
    if args.depth is not None and args.workers is not None:
        p.error("--depth picks the model of --train or --score; --workers runs every depth of the profile")
    if (args.train or args.score) and args.depth not in cfg["depths"]:
        p.error(f"--depth must be one of the profile's target depths {tuple(cfg['depths'])}, got {args.depth}")
    if args.score and args.device != "cpu":
        p.error(f"--score scores the snapshots on the CPU: it does not take --device {args.device}")
    if args.train and args.until is not None:
        steps = configs(long_settings(cfg), args.depth, args.train, cfg["n_layer"])[2].steps
        if args.until > steps:
            p.error(f"--until {args.until} is past the end of the {args.train} model ({steps} steps): give at most "
                    f"{steps}, or leave --until out to train to the end")
    cuda_or_refuse(p, args.device)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    try:
        cfg = PROFILES.resolve(args.profile)
        _check(p, args, cfg)
        job = (f"train {args.train}, target depth {args.depth}" + (f", until step {args.until}" if args.until else "")
               if args.train else f"score target depth {args.depth}" if args.score
               else f"the whole run on {args.workers} worker(s)")
        if dry_run(f"the scale study, profile {args.profile}: {job}, on {args.device}"):
            return 0
        if args.train:
            train_model(cfg, args.depth, args.train, where=folder(cfg["profile"]), until=args.until,
                        device=args.device)  # train() holds the checkpoint's one-writer lock
            return 0
        if args.score:
            print(f"wrote {score_job(cfg, args.depth)}")
            return 0
        with one_writer(PROFILES.folder() / f"scale.{cfg['profile']}.json", f"the {cfg['profile']} scale run"):
            return run_all(cfg, args.workers, args.device)
    except (ProfileError, ResultFileError, ValueError) as err:
        print(f"python -m icdl.gpt_icl.scale: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())


# ---- what the chapter shows -----------------------------------------------------------------------------


def _rng(values, fmt: str) -> str:
    """The range of ``values``: ``0.031–0.052`` (an en dash where neither end is negative, so that "from A to
    B" reads as two ranges), ``−0.016 to −0.009`` otherwise, one value where both ends print alike."""
    lo, hi = min(values), max(values)
    a, b = _num(lo, fmt), _num(hi, fmt)
    if a == b:
        return a
    return f"{a}–{b}" if lo >= 0 and "+" not in fmt else f"{a} to {b}"


def _num(v: float, fmt: str) -> str:
    """``v`` in ``fmt``, without the sign of a value that rounds to zero (``-0.000`` reads as a fall)."""
    out = f"{v:{fmt}}"
    return f"{0.0:{fmt}}" if out.strip("+-0.,") == "" and out.lstrip("+").startswith("-") else out


def fits_table(fits: pd.DataFrame) -> pd.DataFrame:
    """The fitted trend per model as the chapter shows it: shortfall at the main study's length and at the end,
    the change per doubling with its 90 % band, and the forecast with its band (``never`` where the line does
    not fall, ``reached`` where the shortfall is already within the tolerance)."""
    def steps(v, last):
        if math.isinf(v):
            return "never"
        return f"reached by {last:,}" if v <= last else f"{v:,.0f}"

    def band(r):
        if r.forecast_hi <= r.last:  # every resample within the tolerance by the end: no band to give
            return "—"
        return f"{steps(r.forecast_lo, r.last)} to {steps(r.forecast_hi, r.last)}"

    return pd.DataFrame({
        "target depth": fits["depth"], "attention": fits["attention"],
        "shortfall at 1×": fits["shortfall_first"].map("{:.3f}".format),
        "shortfall at the end": fits["shortfall_last"].map("{:.3f}".format),
        "per doubling": [f"{r.per_doubling:+.4f} ({r.per_doubling_lo:+.4f} to {r.per_doubling_hi:+.4f})"
                         for r in fits.itertuples()],
        "forecast steps": [steps(r.forecast, r.last) for r in fits.itertuples()],
        "90 % band": [band(r) for r in fits.itertuples()],
    })


def end_table(points: pd.DataFrame, cfg) -> pd.DataFrame:
    """Per model: R² at the training length at the main study's length (1×) and after the longest training,
    beside the MLP (on its own prompts), least squares, 3-NN and the context mean on the same prompts."""
    tf = points[points["method"] == "transformer"]
    start = fit_from(cfg)
    rows = []
    for (depth, att), g in tf.groupby(["depth", "attention"]):
        base = points[(points["depth"] == depth) & (points["method"] != "transformer")].set_index("method")
        r = g.set_index("step")["r2_all"]
        rows.append({"target depth": depth, "attention": att, "R² at 1×": r[start[att]],
                     "R² at the end": r[r.index.max()],
                     "MLP": base.loc["mlp", "r2_mlp_prompts"], "least squares": base.loc["least_squares", "r2_all"],
                     "3-NN": base.loc["knn", "r2_all"], "context mean": base.loc["context_mean", "r2_all"]})
    return pd.DataFrame(rows)


def _forecast_words(models: int, reached: int, ahead: list[float], never: int) -> str:
    """The forecast over the models in words: how many had reached the tolerance, the range of the finite
    forecasts of the others, and how many never reach it on their fitted line."""
    parts = []
    if reached:
        parts.append(f"{'every model' if reached == models else reached} had reached it within the run")
    if ahead:
        parts.append(f"{_rng(ahead, ',.0f')} for {'the other' if reached else 'the'} {len(ahead)}")
    if never:
        parts.append(f"never for {never} (their lines do not fall)")
    return "; ".join(parts)


def glue_values(res: dict, cfg) -> dict[str, str]:
    """The numbers the chapter's prose quotes, formatted."""
    fits, tr = res["fits"], res["trend"]
    last = tr.loc[tr.groupby(["depth", "attention"])["step"].idxmax()]
    judged = judge(fits, tr, res["points"], res["shift"])
    verdicts = {e["claim"]: e["value"] for e in judged}
    holds = {e["claim"]: "holds" if e["passed"] else "fails" for e in judged}
    reached = fits["forecast"] <= fits["last"]
    ahead = [v for v, r in zip(fits["forecast"], reached) if not r and not math.isinf(v)]
    return {
        "scale_factor": f"{cfg['factor']}", "scale_steps": f"{cfg['factor'] * cfg['steps']:,}",
        "scale_relu_steps": f"{cfg['factor'] * cfg['relu_steps']:,}", "scale_main_steps": f"{cfg['steps']:,}",
        "scale_snapshots": f"{len(model_snapshots(cfg, 'softmax'))}",
        "scale_short_first": _rng(fits["shortfall_first"], ".3f"),
        "scale_short_last": _rng(fits["shortfall_last"], ".3f"),
        "scale_per_doubling": _rng(fits["per_doubling"], "+.4f"),
        "scale_lead_knn": _rng(last["lead_knn"], "+.3f"), "scale_lead_ls": _rng(last["lead_ls"], "+.3f"),
        "scale_forecast": _forecast_words(len(fits), int(reached.sum()), ahead,
                                          int(sum(math.isinf(v) for v in fits["forecast"]))),
        **{f"scale_{name}_{att}": _rng(frame.loc[frame["attention"] == att, col], fmt)
           for att in ATTENTIONS for name, frame, col, fmt in (
               ("per_doubling", fits, "per_doubling", "+.4f"), ("short_first", fits, "shortfall_first", ".3f"),
               ("short_last", fits, "shortfall_last", ".3f"), ("lead_ls", last, "lead_ls", "+.3f"),
               ("lead_knn", last, "lead_knn", "+.3f"))
           if (frame["attention"] == att).any()},
        "scale_obj1": f"{verdicts['icdl-obj1-longer']:.3f}", "scale_obj3": f"{verdicts['icdl-obj3-longer']:.2f}",
        "scale_obj1_tolerance": f"{objectives.CRITERIA['obj1_tolerance']:g}",
        "scale_obj3_max_drop": f"{objectives.CRITERIA['obj3_max_drop']:g}",
        # each claim's verdict as a word, from the same judge as the ledger (the prose cannot contradict it)
        **{f"scale_verdict_{claim.replace('-', '_')}": word for claim, word in holds.items()},
        "scale_minutes": f"{sum(j['seconds'] for j in res['jobs']) / 60:.0f}" if res["jobs"] else
                         f"{res['seconds'] / 60:.1f}",  # a run in one process: its own time
    }


# ---- what the chapter shows of the wider models -----------------------------------------------------------


def model_size(cfg) -> int:
    """Parameters of a profile's model (the softmax and the ReLU model have the same)."""
    return InContextGPT(configs(cfg, cfg["depths"][0], "softmax", cfg["n_layer"])[0]).num_params()


def flops_curve(res: dict, cfg) -> pd.DataFrame:
    """The trend of a study (:func:`trend`) with each snapshot's training FLOPs (:func:`training_flops`),
    for the figure of shortfall against compute."""
    tr = res["trend"].copy()
    per = {a: training_flops(cfg, a, 0) for a in ATTENTIONS}
    unit = {a: training_flops(cfg, a, 1) - per[a] for a in ATTENTIONS}
    tr["flops"] = [per[a] + unit[a] * s for a, s in zip(tr["attention"], tr["step"])]
    tr["width"] = cfg["n_embd"]
    return tr


def width_shown(cmp: pd.DataFrame) -> pd.DataFrame:
    """:func:`width_comparison` as the chapter shows it: per model the two widths' shortfalls at the main
    study's length and the change with its 90 % band, then the narrow model's compute-matched snapshot (``—``
    where there is none), its shortfall and the change from it."""
    narrow, wide = int(cmp["width_narrow"].iloc[0]), int(cmp["width_wide"].iloc[0])

    def band(v, lo, hi):
        return "—" if v != v else f"{_num(v, '+.3f')} ({_num(lo, '+.3f')} to {_num(hi, '+.3f')})"

    return pd.DataFrame({
        "target depth": cmp["depth"], "attention": cmp["attention"],
        f"shortfall, width {narrow}": cmp["shortfall_narrow"].map("{:.3f}".format),
        f"shortfall, width {wide}": cmp["shortfall_wide"].map("{:.3f}".format),
        "change (90 % band)": [band(r.delta, r.delta_lo, r.delta_hi) for r in cmp.itertuples()],
        f"width {narrow} at the same FLOPs": ["—" if r.matched_step != r.matched_step or r.matched_step is None
                                              else f"{int(r.matched_step):,} steps: {r.shortfall_matched:.3f}"
                                              for r in cmp.itertuples()],
        "change from it (90 % band)": [band(r.delta_matched, r.delta_matched_lo, r.delta_matched_hi)
                                       for r in cmp.itertuples()],
    })


def width_glue(cmp: pd.DataFrame | None, wide: dict | None, ncfg, wcfg) -> dict[str, str]:
    """The numbers the chapter's prose quotes about the wider models (the sizes even where the run has not been
    made; its results and verdict words from :func:`judge_wider`, the ledger's judge, where it has)."""
    def per_step(cfg):
        return training_flops(cfg, "softmax", 1)

    out = {"width_narrow": f"{ncfg['n_embd']}", "width_wide": f"{wcfg['n_embd']}",
           "width_heads_narrow": f"{ncfg['n_head']}", "width_heads_wide": f"{wcfg['n_head']}",
           "width_params_narrow": f"{model_size(ncfg):,}", "width_params_wide": f"{model_size(wcfg):,}",
           "width_params_ratio": f"{model_size(wcfg) / model_size(ncfg):.1f}",
           "width_flops_ratio": f"{per_step(wcfg) / per_step(ncfg):.2f}", "width_steps": f"{wcfg['steps']:,}",
           "width_command": COMMAND.format(profile=WIDER)}
    judged = judge_wider(cmp, wide)
    out |= {f"width_verdict_{e['claim'].replace('-', '_')}": "is not judged yet" if cmp is None or wide is None
            else "holds" if e["passed"] else "fails" for e in judged}
    if cmp is None or wide is None:
        return out | {k: "not run" for k in ("width_delta", "width_delta_softmax", "width_delta_relu",
                                              "width_matched", "width_obj1", "width_obj3", "width_minutes")}
    values = {e["claim"]: e["value"] for e in judged}
    matched = cmp.dropna(subset=["delta_matched"])
    out |= {"width_delta": _rng(cmp["delta"], "+.3f"),
            **{f"width_delta_{a}": _rng(cmp.loc[cmp["attention"] == a, "delta"], "+.3f") for a in ATTENTIONS},
            "width_matched": (f"{_rng(matched['delta_matched'], '+.3f')} for the {len(matched)} "
                              f"{'model' if len(matched) == 1 else 'models'} with one" if len(matched)
                              else "no model has one"),
            "width_obj1": f"{values['icdl-obj1-wider']:.3f}", "width_obj3": f"{values['icdl-obj3-wider']:.2f}",
            "width_minutes": f"{sum(j['seconds'] for j in wide['jobs']) / 60:.0f}" if wide.get("jobs") else
                             f"{wide.get('seconds', 0.0) / 60:.1f}"}  # a run in one process: its own time
    return out
