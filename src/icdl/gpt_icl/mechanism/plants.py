"""Planted models: models whose algorithm is known, run through the mechanism's pipeline (chapter
``gpt_mechanism``, :mod:`~icdl.gpt_icl.mechanism.power`).

A verdict "the model is (not) nearest GD" means something only if the same pipeline -- the members chosen on scan
prompts, the measures on the test prompts, the registered ratios -- calls a model that *is* GD on the network
nearest GD, and calls models that are *not* GD something else. Three plants, each a little off what the pipeline can
match exactly, as a trained model would be:

==========================  =====================================================================================
``planted GD``              GD on the target's architecture at a step size, a number of steps and a start scale
                            between the grid's (:func:`plant_settings`), from another start draw than the grid's
``planted ridge``           ridge at a λ between the grid's
``planted kernel smoother`` kernel ridge regression on the prompt's examples (:func:`kernel_smoother`): a
                            nonlinear learner that is not GD on the network -- an accurate nonlinear predictor
                            that "nearer GD than any linear or local rule" must not mistake for GD
every plant                 at every noise level of :data:`NOISES` (its predictions carry noise of that share of
                            the labels' variance: a trained model's own error, 13-40 % for the models of
                            N(0, I)); its sensitivities are the algorithm's own
==========================  =====================================================================================

:func:`power` runs the pipeline on every plant at every level at one target depth and returns the sums per block of
prompts that the mechanism's numbers read (:mod:`~icdl.gpt_icl.mechanism.numbers`); the expensive parts -- GD's
grid on the scan prompts, the fixed candidates, each plant's algorithm and each chosen GD member on the test
prompts -- are computed once per depth and shared by the levels.
"""

from __future__ import annotations

import math

import pandas as pd
import torch
from torch import Tensor

from icdl.gpt_icl.core import algorithms as al
from icdl.gpt_icl.core.schedule import target_task
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.mechanism.measures import (
    SEEDS,
    choose,
    fixed_candidates,
    gd_grid,
    measure,
    measure_prompts,
    scan_prompts,
)

#: the plants' prediction noise levels, each a share of the labels' variance at each position (registered with
#: ``mech-power-*``): from the 4 % of the first design to past the largest error of a trained model of N(0, I)
NOISES = (0.04, 0.15, 0.30, 0.45)
#: the plants' names (the ``attention`` column of their sums, where a trained model has its attention) and kinds
PLANTS = {"planted GD": "gd", "planted ridge": "ridge", "planted kernel smoother": "kernel"}
#: the kernel smoother's settings (registered): the Gaussian kernel's squared bandwidth per input dimension (h² = d:
#: the inputs' own spread) and the ridge term
KERNEL = {"bandwidth2_per_dim": 1.0, "lambda": 0.1}


def _between(values) -> float:
    """A value between a grid's two middle values (their geometric mean), or 1.25 times a grid of one."""
    v = sorted(float(x) for x in values)
    if len(v) == 1:
        return 1.25 * v[0]
    i = (len(v) - 1) // 2
    return math.sqrt(v[i] * v[i + 1])


def plant_settings(cfg) -> dict:
    """The plants' settings, each off the grid the pipeline chooses from: GD's step size, start scale and ridge's λ
    between the grid's middle values, GD's steps three quarters of the grid's largest (between the recorded powers
    of two), and a start draw of its own."""
    return {"eta": _between(cfg["etas"]), "init_scale": _between(cfg["init_scales"]),
            "steps": max(1, (3 * cfg["gd_steps"]) // 4), "lambda": _between(cfg["lambdas"]),
            "start_seed": SEEDS["start"] + 1}


def kernel_smoother(xs: Tensor, ys: Tensor, positions, bandwidth2: float, lam: float) -> tuple[Tensor, Tensor]:
    """Kernel ridge regression with the Gaussian kernel ``exp(−|x − x'|² / (2 h²))`` (``bandwidth2``: h²) fitted
    to each prompt's examples before the query at every position of ``positions`` (0-based), the mean label taken
    out and added back: ``ŷ = ȳ + k(x_q)ᵀ (K + λ I)⁻¹ (y − ȳ)``. Returns the predictions ``(B, P)`` and their exact
    gradient in the query ``(B, P, d)``."""
    preds, sens = [], []
    for p in positions:
        if p < 1:
            raise ValueError(f"the kernel smoother needs an example before the query, got position {p}")
        x, y, q = xs[:, :p].double(), ys[:, :p].double(), xs[:, p].double()
        mean = y.mean(1, keepdim=True)
        gram = torch.exp(-torch.cdist(x, x) ** 2 / (2 * bandwidth2))
        alpha = torch.linalg.solve(gram + lam * torch.eye(p, dtype=gram.dtype), (y - mean).unsqueeze(-1))[..., 0]
        diff = q[:, None, :] - x                                                    # (B, p, d)
        weight = torch.exp(-(diff ** 2).sum(-1) / (2 * bandwidth2)) * alpha         # (B, p)
        preds.append(mean[:, 0] + weight.sum(1))
        sens.append(-(weight[..., None] * diff).sum(1) / bandwidth2)
    return torch.stack(preds, 1), torch.stack(sens, 1)


class Planted(torch.nn.Module):
    """A model that runs one algorithm (``kind``: ``"gd"``, ``"ridge"`` or ``"kernel"``) on each prompt, at the
    positions of ``cfg`` (NaN elsewhere), its predictions with ``noise`` of the labels' variance added (one standard
    normal draw from ``seed``, scaled: every level of one plant carries the same draw). ``forward(xs, ys)`` gives
    ``(B, k)`` predictions as a trained model does; :meth:`sensitivity` the predictions and ``∂ŷ/∂x_query`` that
    :func:`~icdl.gpt_icl.core.algorithms.model_sensitivity` reads. :meth:`at` gives the same plant at another
    level, sharing the algorithm's outputs already computed."""

    def __init__(self, kind: str, cfg, depth: int, noise: float = NOISES[0], seed: int = 0,
                 shared: dict | None = None):
        super().__init__()
        if kind not in PLANTS.values():
            raise ValueError(f"kind must be one of {sorted(PLANTS.values())}, got {kind!r}")
        if not 0 <= noise < 1:
            raise ValueError(f"noise must be a share of the labels' variance in [0, 1), got {noise}")
        self.kind, self.cfg, self.depth, self.noise, self.seed = kind, cfg, depth, noise, seed
        self.settings = plant_settings(cfg)
        self.shared = {} if shared is None else shared

    def at(self, noise: float) -> Planted:
        return Planted(self.kind, self.cfg, self.depth, noise, self.seed, self.shared)

    def _algorithm(self, xs: Tensor, ys: Tensor, positions: list[int]) -> tuple[Tensor, Tensor]:
        key = (tuple(xs.shape), float(xs.double().sum()), float(ys.double().sum()), tuple(positions))
        if key not in self.shared:
            s = self.settings
            if self.kind == "gd":
                with torch.enable_grad():  # GD's own steps, also where the pipeline asks under no_grad
                    out = al.gd_network_sensitivity(xs, ys, positions, target_task(self.cfg, self.depth),
                                                    eta=s["eta"], steps=s["steps"], init_scale=s["init_scale"],
                                                    seed=s["start_seed"])
            elif self.kind == "ridge":
                p, g = al.ridge(xs, ys, positions, [s["lambda"]])
                out = (p[0], g[0])
            else:
                out = kernel_smoother(xs, ys, positions, KERNEL["bandwidth2_per_dim"] * xs.shape[2],
                                      KERNEL["lambda"])
            self.shared[key] = out
        return self.shared[key]

    def _run(self, xs: Tensor, ys: Tensor, positions: list[int]) -> tuple[Tensor, Tensor]:
        pred, sens = self._algorithm(xs, ys, positions)
        spread = ys[:, positions].double().var(0, keepdim=True)                       # (1, P)
        g = torch.Generator().manual_seed(self.seed)
        noise = torch.randn(pred.shape, generator=g, dtype=torch.float64) * (self.noise * spread).sqrt()
        return (pred.double() + noise).to(xs.dtype), sens.to(xs.dtype)

    def forward(self, xs: Tensor, ys: Tensor) -> Tensor:
        k = xs.shape[1]
        positions = sorted({p for p in self.cfg["positions"] if p < k} | {k - 1})
        out = torch.full(ys.shape, float("nan"), dtype=xs.dtype)
        out[:, positions] = self._run(xs, ys, positions)[0]
        return out

    def sensitivity(self, xs: Tensor, ys: Tensor, positions) -> tuple[Tensor, Tensor]:
        return self._run(xs, ys, list(positions))


def power(cfg, depth: int, progress: bool = False) -> pd.DataFrame:
    """The pipeline on every plant of :data:`PLANTS` at every level of :data:`NOISES`, at target depth ``depth`` of
    ``cfg`` (a mechanism profile): each plant's GD and ridge members chosen on the scan prompts, then measured on the
    test prompts of the pretraining mixture. Returns the sums per block of prompts
    (:func:`~icdl.gpt_icl.mechanism.measures.measure`), ``attention`` the plant's name, ``noise`` its level,
    ``depth`` the target depth."""
    xs, ys = scan_prompts(cfg, depth)
    grid = gd_grid(cfg, depth, xs, ys)
    fixed = fixed_candidates(cfg, depth, *measure_prompts(cfg, depth, PRETRAINING))
    pos, members, parts = list(cfg["positions"]), {}, []
    for name, kind in PLANTS.items():
        plant = Planted(kind, cfg, depth)
        for level in NOISES:
            if progress:
                print(f"  {name} at noise {level:g}", flush=True)
            here = plant.at(level)
            with torch.no_grad():
                chosen = choose(cfg, depth, here(xs, ys)[:, pos], xs, ys, grid)
            _, _, blocks = measure(here, cfg, depth, PRETRAINING, chosen, fixed, members=members)
            parts.append(blocks.assign(depth=depth, attention=name, noise=level))
    return pd.concat(parts, ignore_index=True)
