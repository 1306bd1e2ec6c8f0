"""The numbers behind chapter ``softmax`` (ICDL sec. 4, Theorem 2, Appendix E).

* the proof's mechanism checked: :mod:`icdl.studies.softmax_proof` (the layer against eq. E.1, Lemma 17's
  contextual mapping, the look-up approximation against the granularity D);
* Theorem 2 measured: :func:`fit_one_step` trains softmax blocks (:class:`icdl.layers.SoftmaxBlock`) on
  the one-step GD map of an N-layer network's in-context risk (exact targets from :mod:`icdl.networks`),
  :func:`compose_steps` applies them L times, :func:`fit_study` does both for several widths.

Reference run: ``python -m icdl.studies.softmax --profile reference``.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn
from tqdm import tqdm

from ..constructions.lemmas import ICGDLayout
from ..layers import FeedForward, SoftmaxBlock
from ..networks import Architecture, explicit_gradient, risk
from ..repro.cli import Parser
from ..repro.profiles import ProfileSet
from ..repro.results import frame_to_lists, study_command
from .icgd_transformer import Task, build_model, prompt_tokens

PROFILES = ProfileSet(
    "softmax",
    profiles={"quick": {"N": 2, "K": 2, "d": 2, "n": 8, "eta": 2.0, "B_w": 1.0, "widths": (16, 64), "steps": 800,
                        "batch": 256, "lr": 6e-3, "warmup": 80, "curve_points": 8, "L": 5, "test_prompts": 256,
                        "grid_max": 16, "seed": 0},
              "reference": {"N": 2, "K": 2, "d": 2, "n": 8, "eta": 2.0, "B_w": 1.0, "widths": (16, 32, 64, 128),
                            "steps": 12_000, "batch": 512, "lr": 6e-3, "warmup": 600, "curve_points": 24, "L": 10,
                            "test_prompts": 1024, "grid_max": 64, "seed": 0}},
    ranges={"N": (2, 4), "K": (1, 4), "d": (1, 3), "n": (2, 64), "eta": (1e-3, 5.0), "B_w": (0.1, 5.0),
            "steps": (10, 10**6), "batch": (8, 4096), "lr": (1e-5, 0.1), "warmup": (0, 10**5),
            "curve_points": (1, 1000), "L": (1, 50), "test_prompts": (8, 10**5), "grid_max": (2, 256),
            "seed": (0, 2**31 - 1), "widths": (1, 4096)},
    command="python -m icdl.studies.softmax --profile {profile}",
    meanings={"N": "network depth", "K": "hidden width", "d": "input dimension", "n": "examples per prompt",
              "eta": "step size η", "B_w": "box bound $B_w$ on the weights",
              "widths": "hidden widths of the fitted softmax blocks", "steps": "training steps of each fitted block",
              "batch": "prompts per training step", "lr": "learning rate",
              "warmup": "warm-up steps of the learning rate", "curve_points": "points on each training curve",
              "L": "GD steps (blocks) chained", "test_prompts": "test prompts",
              "grid_max": "largest grid size D of the separation check", "seed": "random seed"},
)

#: Theorem 2's "any accuracy with enough size", as a criterion on the fitted blocks, fixed before the reference
#: run that it judges: the held-out one-step error relative to the step falls with the width -- the slope of
#: log(relative error) against log(width), least squares over the profile's widths, is below WIDTH_SLOPE_MAX --
#: and the widest block's relative error is at most WIDEST_MAX (below the 0.13 of the earlier, unscheduled fits).
WIDTH_SLOPE_MAX = -0.15
WIDEST_MAX = 0.08


class GDStepLayout:
    """Tokens ``[x; y; w; 1; t]`` (D = d_x + d_y + D_N + 2): the prompt of eq. 2.1 with the weights in
    every token, which the fitted blocks read and rewrite."""

    def __init__(self, arch: Architecture):
        self.arch = arch
        self.x = slice(0, arch.d_x)
        self.y = slice(arch.d_x, arch.d_x + arch.d_y)
        self.w = slice(self.y.stop, self.y.stop + arch.size)
        self.one, self.t = self.w.stop, self.w.stop + 1
        self.D = self.w.stop + 2

    def tokens(self, x: Tensor, y: Tensor, w: Tensor) -> Tensor:
        B, T = x.shape[:2]
        H = torch.zeros(B, self.D, T, dtype=x.dtype)
        H[:, self.x], H[:, self.y, :T - 1] = x.transpose(1, 2), y.transpose(1, 2)
        H[:, self.w] = w[:, :, None]
        H[:, self.one], H[:, self.t, :T - 1] = 1.0, 1.0
        return H


def batched_forward(arch: Architecture, w: Tensor, x: Tensor) -> Tensor:
    """``f(w_b, x_{b,i})`` for a batch of weight vectors ``w (B, D_N)`` and inputs ``x (B, m, d_x)``: the
    sigmoid network of Def. 1 (activation on every layer), with ``w`` cut into ``V_j`` as in eq. 3.2."""
    h, D = x, arch.counts
    for j, (rows, cols) in enumerate(arch.shapes):
        h = torch.sigmoid(h @ w[:, D[j]:D[j + 1]].reshape(-1, rows, cols).transpose(1, 2))
    return h


def batched_gd_step(arch: Architecture, x: Tensor, y: Tensor, w: Tensor, *, eta: float, B_w: float) -> Tensor:
    """``Proj(w_b − η∇L_n(w_b))`` for every prompt b at once (squared loss, eq. 2.2). The gradient is autograd
    of the sum of the prompts' risks, which separates by prompt; it equals Lemma 1's (tested)."""
    n = y.shape[1]
    with torch.enable_grad():
        w = w.detach().clone().requires_grad_(True)
        total = ((batched_forward(arch, w, x[:, :n]) - y) ** 2).sum() / (2 * n)
        (grad,) = torch.autograd.grad(total, w)
    return (w - eta * grad).detach().clamp(-B_w, B_w)


def sample_gd_problems(arch: Architecture, B: int, n: int, *, B_w: float, generator) -> tuple:
    """Random prompts (a teacher network in the box, ``‖x‖ ≤ 1``, ``n`` examples and a query) and random
    current weights ``w`` in the box: ``x (B, n+1, d)``, ``y (B, n, d)``, ``w (B, D_N)``."""
    teach = (2 * torch.rand(B, arch.size, generator=generator, dtype=torch.float64) - 1) * B_w
    x = torch.randn(B, n + 1, arch.d_x, generator=generator, dtype=torch.float64)
    x = x / x.norm(dim=-1, keepdim=True).clamp(min=1.0)
    with torch.no_grad():
        y = batched_forward(arch, teach, x[:, :n])
    w = (2 * torch.rand(B, arch.size, generator=generator, dtype=torch.float64) - 1) * B_w
    return x, y, w


def gd_step(arch: Architecture, x: Tensor, y: Tensor, w: Tensor, *, eta: float, B_w: float) -> Tensor:
    """``Proj(w − η∇L_n(w))`` per prompt by Lemma 1 (:func:`icdl.networks.explicit_gradient`), one prompt at
    a time: the reference :func:`batched_gd_step` is tested against."""
    n = y.shape[1]
    return torch.stack([(w[b] - eta * explicit_gradient(arch, w[b], x[b, :n], y[b], "sigmoid")).clamp(-B_w, B_w)
                        for b in range(x.shape[0])])


class FittedGDStep(nn.Module):
    """The four layers Theorem 2 spends on one step -- a block ``FF ∘ Attn ∘ FF`` for the map
    ``w ↦ w − η∇L_n(w)`` (Lemma 16) and a feed-forward layer for ``Proj_W`` -- here fitted, not constructed,
    to map tokens holding ``w`` to tokens holding ``Proj(w − η∇L_n(w))``. Only the ``w`` rows of the output
    are kept; the other rows are restored from the input, so that steps compose."""

    def __init__(self, layout: GDStepLayout, hidden: int, heads: int = 2):
        super().__init__()
        self.layout = layout
        self.blocks = nn.Sequential(SoftmaxBlock(layout.D, hidden, heads), FeedForward(layout.D, hidden))

    def forward(self, H: Tensor) -> Tensor:
        out = self.blocks(H.float()).to(H.dtype)
        new = H.clone()
        new[:, self.layout.w] = out[:, self.layout.w]
        return new


def lr_factor(step: int, *, warmup: int, steps: int) -> float:
    """The learning-rate schedule of the fits, as a factor of ``lr``: linear warm-up over ``warmup`` steps,
    then a cosine from 1 down to 0 at ``steps``."""
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def fit_one_step(cfg, hidden: int, *, progress: bool = False) -> dict:
    """Train a :class:`FittedGDStep` of the given width on fresh random problems (Adam with :func:`lr_factor`'s
    warm-up and cosine, MSE on the new ``w`` rows of every token). Returns the model, its training curve
    (``curve_points`` evaluations of the held-out relative error, beside the relative error on the training
    batch of that step) and its held-out one-step error."""
    arch = Architecture(cfg["N"], cfg["K"], cfg["d"], cfg["d"])
    layout = GDStepLayout(arch)
    g = torch.Generator().manual_seed(cfg["seed"] + hidden)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg["seed"] + hidden)
        model = FittedGDStep(layout, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: lr_factor(s, warmup=cfg["warmup"], steps=cfg["steps"]))
    every = max(1, cfg["steps"] // cfg["curve_points"])
    curve = []
    t0 = time.perf_counter()
    for step in tqdm(range(cfg["steps"]), desc=f"fit width {hidden}", disable=not progress, mininterval=5):
        x, y, w = sample_gd_problems(arch, cfg["batch"], cfg["n"], B_w=cfg["B_w"], generator=g)
        target = batched_gd_step(arch, x, y, w, eta=cfg["eta"], B_w=cfg["B_w"])
        H = layout.tokens(x, y, w)
        out = model.blocks(H.float())[:, layout.w]
        loss = ((out - target.float()[:, :, None]) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if (step + 1) % every == 0 or step + 1 == cfg["steps"]:
            with torch.no_grad():
                train_rel = float((out[:, :, -1].double() - target).norm(dim=1).mean()
                                  / (target - w).norm(dim=1).mean())
            held = one_step_error(model, cfg)
            model.train()
            curve.append({"hidden": hidden, "step": step + 1, "loss": float(loss.detach()),
                          "train_relative": train_rel, "heldout_relative": held["mean_error"] / held["mean_step"]})
    return {"model": model.eval(), "curve": pd.DataFrame(curve), "seconds": time.perf_counter() - t0,
            "params": sum(p.numel() for p in model.parameters()), **one_step_error(model, cfg)}


def width_trend(one_step: pd.DataFrame) -> dict:
    """The trend of the held-out relative one-step error with the width (columns ``hidden``, ``relative``):
    the least-squares slope of log(relative) against log(hidden), the widest block's relative error, and
    whether both meet the criterion of :data:`WIDTH_SLOPE_MAX` and :data:`WIDEST_MAX`."""
    df = one_step.sort_values("hidden")
    if len(df) < 2 or (df["relative"] <= 0).any() or df["hidden"].nunique() < 2:
        raise ValueError("width_trend needs at least two distinct widths with positive relative errors, "
                         f"got hidden={df['hidden'].tolist()}, relative={df['relative'].tolist()}")
    lx, ly = np.log(df["hidden"].to_numpy(float)), np.log(df["relative"].to_numpy(float))
    slope = float(np.polyfit(lx, ly, 1)[0])
    widest = float(df["relative"].iloc[-1])
    return {"slope": slope, "widest": widest, "widest_hidden": int(df["hidden"].iloc[-1]),
            "narrowest": float(df["relative"].iloc[0]),
            "passed": bool(slope < WIDTH_SLOPE_MAX and widest <= WIDEST_MAX)}


@torch.no_grad()
def one_step_error(model: FittedGDStep, cfg) -> dict:
    """On held-out problems: ``max`` and ``mean`` of ``‖ŵ_query − Proj(w − η∇L_n(w))‖`` and the size of the
    step itself, ``mean ‖η∇L_n(w)‖`` (the error is only meaningful relative to it)."""
    arch = model.layout.arch
    g = torch.Generator().manual_seed(10_000 + cfg["seed"])
    x, y, w = sample_gd_problems(arch, cfg["test_prompts"], cfg["n"], B_w=cfg["B_w"], generator=g)
    target = batched_gd_step(arch, x, y, w, eta=cfg["eta"], B_w=cfg["B_w"])
    out = model(model.layout.tokens(x, y, w))[:, model.layout.w, -1]
    err = (out - target).norm(dim=1)
    return {"max_error": float(err.max()), "mean_error": float(err.mean()),
            "mean_step": float((target - w).norm(dim=1).mean())}


@torch.no_grad()
def compose_steps(model: FittedGDStep, cfg, *, prompts: int = 64) -> pd.DataFrame:
    """Apply the fitted step L times from ``w = 0`` on held-out prompts; per step l the mean distance to
    projected GD and the mean in-context risk along both paths."""
    arch, layout = model.layout.arch, model.layout
    g = torch.Generator().manual_seed(20_000 + cfg["seed"])
    x, y, _ = sample_gd_problems(arch, prompts, cfg["n"], B_w=cfg["B_w"], generator=g)
    w_gd = torch.zeros(prompts, arch.size, dtype=torch.float64)
    H = layout.tokens(x, y, w_gd)
    rows = []
    for l in range(cfg["L"] + 1):
        w_hat = H[:, layout.w, -1]
        rows.append({"step": l, "distance": float((w_hat - w_gd).norm(dim=1).mean()),
                     "risk_fitted": float(sum(risk(arch, w_hat[b], x[b, :-1], y[b]) for b in range(prompts)) / prompts),
                     "risk_gd": float(sum(risk(arch, w_gd[b], x[b, :-1], y[b]) for b in range(prompts)) / prompts)})
        H = model(H)
        w_gd = batched_gd_step(arch, x, y, w_gd, eta=cfg["eta"], B_w=cfg["B_w"])
    return pd.DataFrame(rows)


@torch.no_grad()
def relu_construction_path(cfg, *, prompts: int = 64, H: int = 256) -> pd.DataFrame:
    """The same held-out prompts as :func:`compose_steps`, through the ReLU construction of Theorem 1
    (:class:`~icdl.constructions.theorem1.ICGDTransformer`, sums of ``H`` ReLUs): per step the mean
    distance to projected GD and the mean risk."""
    arch = Architecture(cfg["N"], cfg["K"], cfg["d"], cfg["d"])
    g = torch.Generator().manual_seed(20_000 + cfg["seed"])
    x, y, _ = sample_gd_problems(arch, prompts, cfg["n"], B_w=cfg["B_w"], generator=g)
    task = Task(arch, "sigmoid", "squared", x, y, torch.zeros(prompts, arch.d_y, dtype=torch.float64),
                torch.zeros(prompts, arch.size, dtype=torch.float64), 1.0, float(y.abs().max()))
    model, _, _ = build_model(task, H, eta=cfg["eta"], steps=cfg["L"], B_w=cfg["B_w"])
    outs = model(prompt_tokens(model.layout, task))
    w_gd = torch.zeros(prompts, arch.size, dtype=torch.float64)
    w_hat = [w_gd] + [model.weights(o) for o in outs]
    rows = []
    for l in range(cfg["L"] + 1):
        rows.append({"step": l, "distance": float((w_hat[l] - w_gd).norm(dim=1).mean()),
                     "risk_fitted": float(sum(risk(arch, w_hat[l][b], x[b, :-1], y[b])
                                              for b in range(prompts)) / prompts),
                     "risk_gd": float(sum(risk(arch, w_gd[b], x[b, :-1], y[b]) for b in range(prompts)) / prompts)})
        w_gd = batched_gd_step(arch, x, y, w_gd, eta=cfg["eta"], B_w=cfg["B_w"])
    return pd.DataFrame(rows)


def widths(cfg) -> list[int]:
    return list(cfg["widths"])


def sizes_comparison(arch: Architecture, steps: int, hidden: int) -> pd.DataFrame:
    """Layers, width and heads of the two routes for L steps: the ReLU construction of Theorem 1 and
    the softmax blocks fitted here (4 layers per step, as Theorem 2 counts)."""
    N = arch.N
    return pd.DataFrame([
        {"route": "ReLU construction (Theorem 1)", "layers": (2 * N + 4) * steps, "width D": ICGDLayout(arch).D,
         "heads per layer": "up to ((N−1)K + d)·H (sums of H ReLUs)", "weights": "set by formulas"},
        {"route": "softmax blocks (Theorem 2, fitted)", "layers": 4 * steps, "width D": GDStepLayout(arch).D,
         "heads per layer": "2 (ours)", "weights": f"trained, FF hidden {hidden}"},
    ])


#: the one-step table's columns as the chapter shows them, for the live and the reference run alike (a result
#: file stores them sorted)
ONE_STEP_COLUMNS = ("hidden", "params", "mean_error", "max_error", "mean_step", "relative", "seconds")


def one_step_shown(one: pd.DataFrame) -> pd.DataFrame:
    """The one-step table of :func:`fit_study` (live, or read back from a result) in :data:`ONE_STEP_COLUMNS`
    order, with ``relative`` (the held-out error over the mean step) where the file lacks it."""
    one = one.assign(relative=one["mean_error"] / one["mean_step"])
    if "seconds" in one:  # a wall time to the tenth of a second: its fourth decimal is noise
        one = one.assign(seconds=one["seconds"].round(1))
    return one[list(ONE_STEP_COLUMNS)]


def fit_study(cfg, *, progress: bool = False) -> dict:
    """Every width of the profile: the one-step table and the composed paths (with the ReLU construction)."""
    fits = {h: fit_one_step(cfg, h, progress=progress) for h in widths(cfg)}
    one = pd.DataFrame([{"hidden": h, "params": f["params"], "mean_error": f["mean_error"],
                         "max_error": f["max_error"], "mean_step": f["mean_step"], "seconds": f["seconds"]}
                        for h, f in fits.items()])
    curves = pd.concat([f["curve"] for f in fits.values()], ignore_index=True)
    one["relative"] = one["mean_error"] / one["mean_step"]
    paths = pd.concat([compose_steps(f["model"], cfg).assign(route=f"softmax, fitted, hidden {h}")
                       for h, f in fits.items()]
                      + [relu_construction_path(cfg).assign(route="ReLU construction, H = 256")], ignore_index=True)
    return {"fits": fits, "one_step": one, "paths": paths, "curves": curves}


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    p = Parser(prog="python -m icdl.studies.softmax",
               description="Softmax layers fitted to one in-context GD step (ICDL Theorem 2)")
    p.add_argument("--profile", default="reference", choices=sorted(PROFILES.profiles))
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m icdl.studies.softmax --profile reference``: the fitted-step study, written with provenance to
    ``results/softmax/fits.<profile>.json``."""

    def compute(cfg) -> dict:
        res = fit_study(cfg, progress=True)
        return {"one_step": frame_to_lists(res["one_step"]), "paths": frame_to_lists(res["paths"]),
                "curves": frame_to_lists(res["curves"]), "settings": dict(cfg)}

    return study_command(parser(), argv, PROFILES, "fits", "the softmax fitting study", compute)


if __name__ == "__main__":
    raise SystemExit(main())
