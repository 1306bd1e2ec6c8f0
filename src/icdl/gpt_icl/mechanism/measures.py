"""The candidates and the three measures of the mechanism study (chapter ``gpt_mechanism``,
:mod:`~icdl.gpt_icl.mechanism`): how near a trained model's predictions and sensitivities are to each candidate
algorithm's on the same prompts, and the member of each candidate family nearest the model.

The free settings of a family -- (η, L, initial scale) for GD, λ for ridge -- are chosen on held-out *scan*
prompts (:func:`scan_prompts`, seeds of their own); the measures are then taken on the test prompts
(:func:`measure_prompts`).

=========================  ==========================================================================================
:data:`CANDIDATES`         GD on an N-layer network, the Adam-trained MLP, least squares, ridge, 3-NN, the context mean
:func:`alignment`          ``pred_diff``, ``sens_diff`` and ``cosine`` per position (:mod:`~icdl.gpt_icl.mechanism`)
:func:`choose`             the GD setting and the ridge λ nearest the model on the scan prompts
:func:`fixed_candidates`,  every candidate's predictions and sensitivities on a set of prompts
:func:`chosen_candidates`
:func:`measure`            the three measures of every candidate, and the sensitivities the chapter draws
=========================  ==========================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from icdl.gpt_icl.core import algorithms as al
from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.evaluation import test_prompts
from icdl.gpt_icl.core.intervals import BLOCKS, prompt_blocks
from icdl.gpt_icl.core.schedule import target_task
from icdl.gpt_icl.core.tasks import MIXTURES, PRETRAINING, sample_prompts

#: the candidates' names in result files and figures (the baselines' names are those of
#: :mod:`~icdl.gpt_icl.core.baselines`)
GD_NETWORK, ADAM_MLP, RIDGE = "GD, N-layer network", "MLP (Adam, last epoch)", "ridge"
#: the two network candidates' names at target depth 1 (the positive control), where the network is linear
AT_DEPTH_ONE = {GD_NETWORK: "GD, one-layer (linear) network", ADAM_MLP: "Adam, one-layer (linear) network"}
CANDIDATES = (GD_NETWORK, ADAM_MLP, bl.LEAST_SQUARES, RIDGE, bl.NEAREST_NEIGHBOURS, bl.CONTEXT_MEAN)
#: the candidates the hypotheses call "linear and local rules"
SIMPLE_RULES = (bl.LEAST_SQUARES, RIDGE, bl.NEAREST_NEIGHBOURS, bl.CONTEXT_MEAN)
#: the shifted inputs the measures are repeated on: the mixture farthest from pretraining
SHIFTED = "(.5, .5)"
#: seeds of the scan prompts (``base + per_depth · depth``) and of GD's fixed start ``w⁽⁰⁾``
SEEDS = {"scan": 50_000, "per_depth": 97, "start": 4242}


# ---- the measures ------------------------------------------------------------------------------------------


def alignment(pred_model: Tensor, sens_model: Tensor, pred_alg: Tensor, sens_alg: Tensor | None,
              ys: Tensor) -> dict[str, np.ndarray]:
    """The three measures of the module docstring per position: predictions ``(B, P)``, sensitivities
    ``(B, P, d)`` (``sens_alg`` None for a candidate whose prediction does not move with the query), labels
    ``ys (B, P)`` at the queries."""
    spread = ((ys - ys.mean(0)) ** 2).sum(0)
    if not (spread > 0).all():
        raise ValueError("the labels at some position are the same in every prompt: pred_diff is undefined")
    out = {"pred_diff": (((pred_model - pred_alg) ** 2).sum(0) / spread).numpy()}
    own = (sens_model ** 2).sum((0, 2))
    if sens_alg is None:
        out["sens_diff"], out["cosine"] = np.ones(len(spread)), np.full(len(spread), np.nan)
    else:
        out["sens_diff"] = (((sens_model - sens_alg) ** 2).sum((0, 2)) / own).numpy()
        cos = torch.nn.functional.cosine_similarity(sens_model, sens_alg, dim=2, eps=1e-12)
        out["cosine"] = cos.mean(0).numpy()
    return out


def scan_prompts(cfg, depth: int) -> tuple[Tensor, Tensor]:
    """Held-out prompts of the pretraining mixture on which the candidates' settings are chosen (seeds of their
    own: never the test prompts)."""
    g = torch.Generator().manual_seed(SEEDS["scan"] + SEEDS["per_depth"] * depth)
    task = target_task(cfg, depth, omega=MIXTURES[PRETRAINING])
    return sample_prompts(task, cfg["scan_prompts"], cfg["test_examples"], g, scale_mu=0.0)


# ---- choosing each family's member nearest the model ------------------------------------------------------


def gd_grid(cfg, depth: int, xs: Tensor, ys: Tensor, fit: bool = False) -> Tensor | tuple[Tensor, pd.DataFrame]:
    """GD's predictions on prompts for the whole grid: ``(scales, etas, recorded L, B, P)``. With ``fit``, also
    one row per member of the grid with GD's own objective on the examples (``fit_loss``, the mean over prompts
    and positions of :func:`~icdl.gpt_icl.core.algorithms.gd_network`'s) and GD's own R² across the prompts
    (``r2``, the mean over positions): whether each member's fit has converged, and how accurate it is."""
    task = target_task(cfg, depth)
    runs = [al.gd_network(xs, ys, cfg["positions"], task, etas=cfg["etas"], steps=cfg["gd_steps"], init_scale=s,
                          seed=SEEDS["start"], fit=True) for s in cfg["init_scales"]]
    grid = torch.stack([pred for pred, _ in runs])
    if not fit:
        return grid
    y = ys[:, list(cfg["positions"])]
    spread = ((y - y.mean(0)) ** 2).sum(0)
    r2 = 1 - torch.nan_to_num(((grid - y) ** 2).sum(-2), nan=np.inf) / spread      # (scales, etas, L, P): a
    rows = [{"init_scale": s, "eta": e, "steps": L, "fit_loss": float(loss[j, k].mean()),  # diverged GD: −inf
             "r2": float(r2[i, j, k].mean())}
            for i, (s, (_, loss)) in enumerate(zip(cfg["init_scales"], runs)) for j, e in enumerate(cfg["etas"])
            for k, L in enumerate(al.recorded_steps(cfg["gd_steps"]))]
    return grid, pd.DataFrame(rows)


def choose(cfg, depth: int, pred_model_scan: Tensor, xs: Tensor, ys: Tensor, grid: Tensor | None = None) -> dict:
    """The GD setting and the ridge λ nearest the model on the scan prompts (smallest mean ``pred_diff`` over
    the positions). Returns ``{"gd": {...}, "ridge": {...}, "gd_scan": frame over the grid}``."""
    pos = list(cfg["positions"])
    y = ys[:, pos]
    spread = ((y - y.mean(0)) ** 2).sum(0)
    grid = gd_grid(cfg, depth, xs, ys) if grid is None else grid
    gd_dist = (((grid - pred_model_scan) ** 2).sum(-2) / spread).mean(-1)       # (scales, etas, L)
    gd_dist = torch.nan_to_num(gd_dist, nan=np.inf)
    steps = al.recorded_steps(cfg["gd_steps"])
    rows = [{"init_scale": s, "eta": e, "steps": L, "pred_diff": float(gd_dist[i, j, k])}
            for i, s in enumerate(cfg["init_scales"]) for j, e in enumerate(cfg["etas"]) for k, L in enumerate(steps)]
    i, j, k = np.unravel_index(int(torch.argmin(gd_dist)), tuple(gd_dist.shape))
    rp, _ = al.ridge(xs, ys, pos, cfg["lambdas"])
    r_dist = (((rp - pred_model_scan) ** 2).sum(1) / spread).mean(1)
    r = int(torch.argmin(r_dist))
    return {"gd": {"init_scale": float(cfg["init_scales"][i]), "eta": float(cfg["etas"][j]), "steps": int(steps[k]),
                   "pred_diff": float(gd_dist[i, j, k])},
            "ridge": {"lambda": float(cfg["lambdas"][r]), "pred_diff": float(r_dist[r])},
            "gd_scan": pd.DataFrame(rows)}


# ---- the measures of every candidate on the test prompts ----------------------------------------------------


def fixed_candidates(cfg, depth: int, xs: Tensor, ys: Tensor) -> dict[str, tuple[Tensor, Tensor | None]]:
    """``{name: (predictions (B, P), sensitivities (B, P, d) or None)}`` of the candidates without settings to
    choose -- the same for every model of a depth: the MLP (only at the positions the main study trains it at,
    ``mlp_positions``; NaN elsewhere), least squares, 3-NN, the context mean."""
    pos = list(cfg["positions"])
    B, _, d = xs.shape
    mp, ms = torch.full((B, len(pos)), float("nan")), torch.full((B, len(pos), d), float("nan"))
    for j, p in enumerate(pos):
        if p in cfg["mlp_positions"]:
            res = bl.trained_mlp(xs, ys, p, depth=depth, width=cfg["mlp_width"], epochs=cfg["mlp_epochs"],
                                 seed=cfg["seed"], sensitivity=True)
            mp[:, j], ms[:, j] = res["pred"][-1], res["sensitivity"]
    return {ADAM_MLP: (mp, ms), bl.LEAST_SQUARES: al.least_squares_with_slope(xs, ys, pos),
            bl.NEAREST_NEIGHBOURS: (bl.nearest_neighbours(xs, ys)[:, pos], None),
            bl.CONTEXT_MEAN: (bl.context_mean(xs, ys)[:, pos], None)}


def chosen_candidates(cfg, depth: int, xs: Tensor, ys: Tensor, chosen: dict, members: dict | None = None
                      ) -> dict[str, tuple[Tensor, Tensor]]:
    """GD and ridge at the settings :func:`choose` picked for one model, as :func:`fixed_candidates`. ``members``:
    GD's outputs on these prompts already computed, by setting (filled as computed; models measured on the same
    prompts share them)."""
    pos, gd = list(cfg["positions"]), chosen["gd"]
    rp, rs = al.ridge(xs, ys, pos, [chosen["ridge"]["lambda"]])
    key = (gd["eta"], gd["steps"], gd["init_scale"])
    members = {} if members is None else members
    if key not in members:
        members[key] = al.gd_network_sensitivity(xs, ys, pos, target_task(cfg, depth), eta=gd["eta"],
                                                 steps=gd["steps"], init_scale=gd["init_scale"], seed=SEEDS["start"])
    return {GD_NETWORK: members[key], RIDGE: (rp[0], rs[0])}


#: the test prompts whose sensitivities the chapter draws (at the last position, pretraining mixture)
EXAMPLE_PROMPTS = 3


def measure_prompts(cfg, depth: int, mixture: str) -> tuple[Tensor, Tensor]:
    """The prompts the measures use: the first ``measure_prompts`` test prompts of
    :func:`~icdl.gpt_icl.core.evaluation.test_prompts`."""
    return test_prompts(cfg, depth, mixture, count=cfg["measure_prompts"])


def block_measures(pred_model: Tensor, sens_model: Tensor, pred_alg: Tensor, sens_alg: Tensor | None,
                   blocks: int = BLOCKS) -> dict[str, np.ndarray]:
    """The sums behind :func:`alignment`'s measures per block of prompts, ``(P, blocks)`` each: ``pred`` (the
    squared prediction difference), ``sens`` (the squared sensitivity difference; for a candidate without
    sensitivities the model's own, so that ``sens / own`` is 1), ``cos`` (the cosines; NaN without
    sensitivities) and ``own`` (the model's squared sensitivity) -- what a resample of the prompts
    (:class:`icdl.gpt_icl.core.intervals.Draws`) needs to recompute every measure and every ratio of two, paired."""
    parts = prompt_blocks(len(pred_model), blocks)

    def per_block(x):  # (B, P) -> (P, blocks)
        return np.stack([x[sl].double().sum(0).numpy() for sl in parts], axis=1)

    own = (sens_model ** 2).sum(2)
    out = {"pred": per_block((pred_model - pred_alg) ** 2), "own": per_block(own)}
    if sens_alg is None:
        out["sens"], out["cos"] = out["own"].copy(), np.full_like(out["own"], np.nan)
    else:
        out["sens"] = per_block(((sens_model - sens_alg) ** 2).sum(2))
        out["cos"] = per_block(torch.nn.functional.cosine_similarity(sens_model, sens_alg, dim=2, eps=1e-12))
    return out


def measure(model, cfg, depth: int, mixture: str, chosen: dict, fixed: dict | None = None,
            members: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One row per candidate and position with the three measures, on the measure prompts of ``mixture``
    (plus the model's own R² and each candidate's, for reference); the sensitivities of the model and
    every candidate on the first :data:`EXAMPLE_PROMPTS` prompts at the last position, one row per prompt,
    candidate and input coordinate; and the sums of :func:`block_measures` per candidate, position and block
    of prompts (with the block's prompt count ``n``), for intervals. ``fixed``: :func:`fixed_candidates` on
    these prompts, if already known; ``members``: GD's members on them, by setting (:func:`chosen_candidates`)."""
    pos = list(cfg["positions"])
    xs, ys = measure_prompts(cfg, depth, mixture)
    fixed = fixed_candidates(cfg, depth, xs, ys) if fixed is None else fixed
    every = fixed | chosen_candidates(cfg, depth, xs, ys, chosen, members)
    pm, sm = al.model_sensitivity(model, xs, ys, pos)
    y = ys[:, pos]
    rows, examples, sums = [], [], []
    blocks = min(BLOCKS, len(ys))  # a small test set (quick) makes blocks of one prompt
    sizes = [sl.stop - sl.start for sl in prompt_blocks(len(ys), blocks)]

    def example(name, sens):
        examples.extend({"mixture": mixture, "candidate": name, "prompt": b, "coordinate": i + 1,
                         "sensitivity": float(sens[b, -1, i])}
                        for b in range(min(EXAMPLE_PROMPTS, len(ys))) for i in range(xs.shape[2]))

    example("model", sm)
    for name in CANDIDATES:
        pa, sa = every[name]
        if sa is not None and not torch.isnan(sa[0, -1]).any():
            example(name, sa)
        ok = ~torch.isnan(pa[0])
        keep = [j for j in range(len(pos)) if ok[j]]
        if not keep:
            continue
        m = alignment(pm[:, keep], sm[:, keep], pa[:, keep], None if sa is None else sa[:, keep], y[:, keep])
        r2_alg = bl.r2_across_prompts(pa[:, keep], y[:, keep]).numpy()
        parts = block_measures(pm[:, keep], sm[:, keep], pa[:, keep], None if sa is None else sa[:, keep], blocks)
        sums += [{"mixture": mixture, "candidate": name, "position": pos[j] + 1, "block": b, "n": sizes[b],
                  **{k: float(v[i, b]) for k, v in parts.items()}} for i, j in enumerate(keep) for b in range(blocks)]
        for i, j in enumerate(keep):
            rows.append({"mixture": mixture, "candidate": name, "position": pos[j] + 1,
                         **{k: float(v[i]) for k, v in m.items()}, "r2_candidate": float(r2_alg[i])})
    r2_model = bl.r2_across_prompts(pm, y).numpy()
    rows += [{"mixture": mixture, "candidate": "model", "position": p + 1, "pred_diff": 0.0, "sens_diff": 0.0,
              "cosine": 1.0, "r2_candidate": float(r2_model[j])} for j, p in enumerate(pos)]
    return pd.DataFrame(rows), pd.DataFrame(examples), pd.DataFrame(sums)
