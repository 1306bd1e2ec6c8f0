"""The numbers behind chapter ``icgd_transformer``: the transformer of ICDL Theorem 1
(:class:`icdl.constructions.theorem1.ICGDTransformer`) run for L steps beside projected GD.

* :func:`make_task` -- prompts for a teacher network, with the weights of the student at 0 (eq. 2.1);
* :func:`gd_path` -- the reference: projected GD on the same in-context risk, exact gradients
  (:func:`icdl.networks.projected_gd`);
* :func:`lipschitz_estimate` -- ``L_f``, the Lipschitz constant of ``∇L_n`` that Corollary 1.1 needs,
  estimated from below by the largest Hessian norm met;
* :func:`trajectory_study` -- ŵ^(l) and w_GD^(l) side by side for several numbers H of ReLUs, and the
  checks of Theorem 1, Corollary 1.1 and Lemma 14 on it.

The accounting (sizes, norms, FLOPs, layer counts) is in :mod:`icdl.studies.icgd_accounting`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import pandas as pd
import torch
from tqdm import tqdm

from ..constructions.bounds import corollary_bounds, gradient_error_bound, lemma6_bound
from ..constructions.lemmas import ICGDLayout
from ..constructions.theorem1 import SMOOTH, ICGDTransformer, Sums, fit_sums, preactivation_range
from ..networks import (
    Activation,
    Architecture,
    Loss,
    explicit_gradient,
    forward,
    gradient_terms,
    project_box,
    projected_gd,
    risk,
)
from ..repro.profiles import ProfileSet

Tensor = torch.Tensor


PROFILES = ProfileSet(
    "icgd_transformer",
    profiles={
        "quick": {"N": 3, "K": 4, "d": 2, "n": 32, "steps": 5, "H_list": (16, 64, 256), "prompts": 4,
                  "eta": 5.0, "B_w": 1.0, "activation": "sigmoid", "seed": 0},
        "reference": {"N": 3, "K": 4, "d": 2, "n": 32, "steps": 20, "H_list": (16, 32, 64, 128, 256, 512, 1024),
                      "prompts": 16, "eta": 5.0, "B_w": 1.0, "activation": "sigmoid", "seed": 0},
    },
    ranges={"N": (2, 6), "K": (1, 8), "d": (1, 4), "n": (2, 256), "steps": (1, 100), "prompts": (1, 512),
            "eta": (1e-4, 10.0), "B_w": (0.05, 10.0), "seed": (0, 2**31 - 1),
            "H_list": (4, 2048)},  # the dense layers grow like H
    meanings={"N": "network depth", "K": "hidden width", "d": "input dimension", "n": "examples per prompt",
              "steps": "GD steps L (transformer blocks)", "H_list": "ReLUs H per approximated function",
              "prompts": "prompts, each with its own data", "eta": "step size η",
              "B_w": "box bound $B_w$ on the weights", "activation": "the network's activation r",
              "seed": "random seed"},
)


@dataclass
class Task:
    arch: Architecture
    activation: str
    loss: str
    x: Tensor        # (B, n + 1, d): the last row is the query
    y: Tensor        # (B, n, d)
    y_query: Tensor  # (B, d): the teacher's noiseless value at the query
    w_star: Tensor   # (B, D_N)
    B_x: float
    B_y: float


def make_task(arch: Architecture, *, n: int, prompts: int, activation: str = "sigmoid", B_w: float = 1.0,
              B_x: float = 1.0, noise: float = 0.05, seed: int = 0) -> Task:
    """Prompts of a teacher network of the same architecture: ``w*`` uniform in the box ``‖w‖_∞ ≤ B_w``,
    ``x`` standard normal scaled into the ball ``‖x‖ ≤ B_x``, ``y = f(w*, x) + noise · N(0, I)``."""
    if activation not in SMOOTH:
        raise ValueError(f"activation must be one of {SMOOTH} (r and r' need sums of ReLUs), got {activation!r}")
    g = torch.Generator().manual_seed(seed)
    w_star = (2 * torch.rand(prompts, arch.size, generator=g, dtype=torch.float64) - 1) * B_w
    x = torch.randn(prompts, n + 1, arch.d_x, generator=g, dtype=torch.float64)
    x = x / (x.norm(dim=-1, keepdim=True) / B_x).clamp(min=1.0)
    f = torch.stack([forward(arch, w_star[b], x[b], activation)[-1] for b in range(prompts)])
    y = f[:, :n] + noise * torch.randn(prompts, n, arch.d_y, generator=g, dtype=torch.float64)
    return Task(arch, activation, "squared", x, y, f[:, n], w_star, B_x, float(y.abs().max()))


def prompt_tokens(layout: ICGDLayout, task: Task) -> Tensor:
    """The input of Theorem 1: the prompt of eq. 2.1 in the layout, ``ŵ^(0) = 0`` in every token."""
    return layout.prompt(task.x, task.y, torch.zeros(task.x.shape[0], task.arch.size, dtype=torch.float64))


def gd_path(task: Task, b: int, *, eta: float, steps: int, B_w: float) -> list[Tensor]:
    """``[w_GD^(0) = 0, …, w_GD^(L)]``: projected GD on the in-context risk of prompt ``b`` (exact gradient)."""
    arch = task.arch
    return projected_gd(arch, torch.zeros(arch.size, dtype=torch.float64), task.x[b, :-1], task.y[b], eta=eta,
                        steps=steps, B_w=B_w, activation=task.activation, loss=task.loss)


def surrogate_gd_path(task: Task, b: int, sums: Sums, *, eta: float, steps: int, B_w: float,
                      w0: Tensor | None = None) -> list[Tensor]:
    """Projected GD on prompt ``b`` with Lemma 1's gradient assembled from the *sums* -- r, r' and u replaced
    by the ReLU sums the transformer holds. Theorem 1's transformer should equal this path up to floating
    point (every other step of the construction is exact), so a change of any weight it uses shows.
    Starts at ``w0`` (default 0, Theorem 1's start)."""
    arch = task.arch
    act = Activation(f"{task.activation} (sum of ReLUs)", sums.r, sums.r_prime, math.nan)
    loss = Loss(f"{task.loss} (sum of ReLUs)", _no_ell, lambda t, y: sums.u(torch.stack([t, y], -1)))
    w0 = torch.zeros(arch.size, dtype=torch.float64) if w0 is None else w0
    return projected_gd(arch, w0, task.x[b, :-1], task.y[b], eta=eta, steps=steps, B_w=B_w, activation=act,
                        loss=loss)


def _no_ell(t: Tensor, y: Tensor) -> Tensor:
    raise NotImplementedError("the surrogate loss has only its derivative u (a sum of ReLUs)")


def backward_pass_errors(model: ICGDTransformer, task: Task, w: Tensor) -> list[float]:
    """Run the first 2N + 2 layers of a block on the task's prompts with weights ``w (B, D_N)`` in the tokens;
    return ``max_{i ≤ n, k} |ŝ_i(j)[k] − s_i(j)[k]|`` for j = 1..N (what Lemma 6 bounds)."""

    lo, arch, n = model.layout, task.arch, task.y.shape[1]
    H = lo.prompt(task.x, task.y, w)
    with torch.no_grad():
        for layer in model._run[:2 * arch.N + 2]:
            H = layer(H)
    errs = [0.0] * arch.N
    for b in range(H.shape[0]):
        exact = gradient_terms(arch, w[b], task.x[b, :n], task.y[b], task.activation, task.loss)
        for j in range(1, arch.N + 1):
            errs[j - 1] = max(errs[j - 1], float((H[b, lo.slot("s", j), :n].T - exact.s[j]).abs().max()))
    return errs


def lipschitz_estimate(task: Task, b: int, points: list[Tensor], *, B_w: float | None = None,
                       random_points: int = 4, seed: int = 0) -> float:
    """The largest spectral norm of the Hessian of ``L_n`` over ``points`` (and, given ``B_w``, over
    ``random_points`` uniform draws from the box) -- a lower estimate of ``L_f``, the Lipschitz constant of
    ``∇L_n`` on ``W`` that Corollary 1.1 uses (its sup over W is not computable). The random points matter:
    for tanh, ``w = 0`` is a stationary point where the Hessian vanishes, and GD started there never moves."""
    arch, x, y = task.arch, task.x[b, :-1], task.y[b]

    def f(w):
        return risk(arch, w, x, y, task.activation, task.loss)

    if B_w is not None:
        g = torch.Generator().manual_seed(seed + b)
        points = list(points) + [(2 * torch.rand(arch.size, generator=g, dtype=torch.float64) - 1) * B_w
                                 for _ in range(random_points)]
    return max(float(torch.linalg.matrix_norm(torch.autograd.functional.hessian(f, p, vectorize=True), ord=2))
               for p in points)


def gradient_mapping(task: Task, b: int, w: Tensor, *, eta: float, B_w: float) -> float:
    """``‖G(w)‖ = ‖w − Proj_W(w − η∇L_n(w))‖ / η``, the quantity Lemma 14's convergence statement bounds."""
    g = explicit_gradient(task.arch, w, task.x[b, :-1], task.y[b], task.activation, task.loss)
    return float((w - project_box(w - eta * g, B_w)).norm() / eta)


def build_model(task: Task, H: int, *, eta: float, steps: int, B_w: float, compact: bool = True
                ) -> tuple[ICGDTransformer, Sums, dict]:
    """The transformer for this task's setting with sums of ``H`` ReLUs, its sums, and its a-priori bounds."""
    arch = task.arch
    R = 1.25 * max(preactivation_range(arch, task.B_x, B_w), 1.0 + task.B_y)  # margin for p̂'s own error
    sums = fit_sums(task.activation, task.loss, R, H)
    b6 = lemma6_bound(arch, task.activation, task.loss, sums, B_w=B_w, B_x=task.B_x, B_y=task.B_y)
    eps = gradient_error_bound(arch, task.activation, task.loss, sums, B_w=B_w, B_x=task.B_x, B_y=task.B_y)
    gate = 2 * (max(b6["B_s"]) + max(b6["e_s"]))  # > any |ŝ| the bound allows
    model = ICGDTransformer(ICGDLayout(arch), sums.r, sums.r_prime, sums.u, eta=eta, steps=steps, B_w=B_w,
                            gate=gate, compact=compact)
    return model, sums, {"eps": eps, "gate": gate, "R": R, **{k: v for k, v in b6.items()}}


def trajectory_study(cfg, *, progress: bool = True) -> dict:
    """Run the transformer and projected GD side by side for every H of the profile.

    Returns ``"steps"`` (one row per H, prompt and step l: losses of ŵ^(l) and w_GD^(l), the distance
    between them, the one-step deviation from an exact projected GD step taken at ŵ^(l−1), the
    gradient mapping norm), ``"bounds"`` (per H: the sums' errors, the a-priori ε, L_f, the gate),
    ``"predictions"`` (query predictions of the transformer, of GD and of the teacher) and ``"seconds"``."""
    arch = Architecture(cfg["N"], cfg["K"], cfg["d"], cfg["d"])
    eta, steps, B_w = cfg["eta"], cfg["steps"], cfg["B_w"]
    task = make_task(arch, n=cfg["n"], prompts=cfg["prompts"], activation=cfg["activation"], B_w=B_w,
                     seed=cfg["seed"])
    paths = [gd_path(task, b, eta=eta, steps=steps, B_w=B_w) for b in range(cfg["prompts"])]
    L_f = max(lipschitz_estimate(task, b, paths[b], B_w=B_w) for b in range(cfg["prompts"]))
    rows, bounds, preds = [], [], []
    t0 = time.perf_counter()
    for H in tqdm(cfg["H_list"], desc="H", disable=not progress):
        model, sums, info = build_model(task, H, eta=eta, steps=steps, B_w=B_w)
        H0 = prompt_tokens(model.layout, task)
        outs = model(H0)
        w_hat = [torch.zeros(task.x.shape[0], arch.size, dtype=torch.float64)] + [model.weights(o) for o in outs]
        pred = model.predict(outs[-1])
        for b in range(cfg["prompts"]):
            x, y = task.x[b, :-1], task.y[b]
            for l in range(steps + 1):
                wh = w_hat[l][b]
                step_dev = 0.0
                if l > 0:
                    prev = w_hat[l - 1][b]
                    exact_step = project_box(prev - eta * explicit_gradient(arch, prev, x, y, task.activation,
                                                                                     task.loss), B_w)
                    step_dev = float((wh - exact_step).norm())
                rows.append({"H": H, "prompt": b, "step": l,
                             "loss_hat": float(risk(arch, wh, x, y, task.activation, task.loss)),
                             "loss_gd": float(risk(arch, paths[b][l], x, y, task.activation, task.loss)),
                             "deviation": float((wh - paths[b][l]).norm()), "step_deviation": step_dev,
                             "grad_map": gradient_mapping(task, b, wh, eta=eta, B_w=B_w)})
            f_gd = forward(arch, paths[b][-1], task.x[b, -1:], task.activation)[-1][0]
            for k in range(arch.d_y):
                preds.append({"H": H, "prompt": b, "coord": k, "transformer": float(pred[b, k]),
                              "gd": float(f_gd[k]), "teacher": float(task.y_query[b, k])})
        bounds.append({"H": H, "relus_r": sums.r.H, "eps_r": sums.eps_r, "eps_rp": sums.eps_rp, "eps_l": sums.eps_l,
                       "R": info["R"], "eps": info["eps"], "gate": info["gate"], "L_f": L_f,
                       "e_s_max": max(info["e_s"]), "B_s_max": max(info["B_s"])})
    return {"steps": pd.DataFrame(rows), "bounds": pd.DataFrame(bounds), "predictions": pd.DataFrame(preds),
            "seconds": time.perf_counter() - t0, "n": cfg["n"], "eta": eta}


def theorem1_check(study: dict) -> pd.DataFrame:
    """Per H: the largest one-step deviation ``‖ŵ^(l) − Proj(ŵ^(l−1) − η∇L_n(ŵ^(l−1)))‖`` against Theorem 1's
    ``η ε`` (ε from :func:`gradient_error_bound`)."""
    st = study["steps"]
    worst = st[st["step"] > 0].groupby("H")["step_deviation"].max()
    b = study["bounds"].set_index("H")
    out = pd.DataFrame({"step_deviation": worst, "eta_eps": study["eta"] * b["eps"]})
    out["within"] = out["step_deviation"] <= out["eta_eps"]
    out["ratio"] = out["step_deviation"] / out["eta_eps"]
    return out.reset_index()


def corollary_check(study: dict) -> pd.DataFrame:
    """Per H and step: the largest ``‖ŵ^(l) − w_GD^(l)‖`` over prompts, beside both forms of Corollary 1.1's
    bound (:func:`corollary_bounds`) with the a-priori ε and the estimated L_f."""
    st = study["steps"]
    frames = []
    for _, row in study["bounds"].iterrows():
        H = int(row["H"])
        dev = st[st["H"] == H].groupby("step")["deviation"].max()
        cb = corollary_bounds(row["eps"], row["L_f"], study["n"], study["eta"], int(st["step"].max()))
        cb["H"], cb["deviation"] = H, dev.values
        frames.append(cb)
    out = pd.concat(frames, ignore_index=True)
    out["within_paper"] = out["deviation"] <= out["paper"] * (1 + 1e-12) + 1e-15
    out["within_induction"] = out["deviation"] <= out["induction"] * (1 + 1e-12) + 1e-15
    return out


def lemma14_check(study: dict, steps: int) -> pd.DataFrame:
    """Per H and prompt: does the loss along ŵ^(l) decrease at every step (as along GD), and does
    ``min_l ‖G(ŵ^l)‖² ≤ 8 L_n(0)/(η L) + 10 ε²`` hold (Lemma 14 with ``inf L_n ≥ 0``)?"""
    st, out = study["steps"], []
    eps = study["bounds"].set_index("H")["eps"]
    for (H, b), g in st.groupby(["H", "prompt"]):
        g = g.sort_values("step")
        lh, lg = g["loss_hat"].to_numpy(), g["loss_gd"].to_numpy()
        rhs = 8 * lg[0] / (study["eta"] * steps) + 10 * eps[H] ** 2
        out.append({"H": H, "prompt": b, "hat_decreasing": bool((lh[1:] <= lh[:-1] + 1e-15).all()),
                    "gd_decreasing": bool((lg[1:] <= lg[:-1] + 1e-15).all()),
                    "min_grad_map_sq": float((g["grad_map"].to_numpy()[1:] ** 2).min()), "rhs": rhs})
    df = pd.DataFrame(out)
    df["within"] = df["min_grad_map_sq"] <= df["rhs"]
    return df


def lemma6_table(cfg) -> pd.DataFrame:
    """Per H and layer j: the measured ``max |ŝ(j)[k] − s(j)[k]|`` on the profile's prompts with random
    weights from the box, against :func:`lemma6_bound`."""
    arch = Architecture(cfg["N"], cfg["K"], cfg["d"], cfg["d"])
    task = make_task(arch, n=cfg["n"], prompts=cfg["prompts"], activation=cfg["activation"], B_w=cfg["B_w"],
                     seed=cfg["seed"])
    g = torch.Generator().manual_seed(cfg["seed"] + 1)
    w = (2 * torch.rand(cfg["prompts"], arch.size, generator=g, dtype=torch.float64) - 1) * cfg["B_w"]
    rows = []
    for H in cfg["H_list"]:
        model, _, info = build_model(task, H, eta=cfg["eta"], steps=1, B_w=cfg["B_w"])
        for j, (e, bound) in enumerate(zip(backward_pass_errors(model, task, w), info["e_s"]), start=1):
            rows.append({"H": H, "layer": j, "measured": e, "bound": bound})
    df = pd.DataFrame(rows)
    df["within"], df["ratio"] = df["measured"] <= df["bound"], df["measured"] / df["bound"]
    return df


def heads_against_eps(study: dict, arch: Architecture) -> dict:
    """The most heads in one layer (Lemma 3's, ``((N − 1)K + d) H``) against the a-priori ε, and the slope
    of log heads on log ε -- Theorem 1 states heads ``Õ(ε⁻²)``."""
    import numpy as np

    b = study["bounds"]
    heads = b["relus_r"] * sum(arch.widths[1:])
    slope = float(np.polyfit(np.log(b["eps"]), np.log(heads), 1)[0]) if len(b) > 1 else float("nan")
    return {"eps": b["eps"].tolist(), "heads": heads.tolist(), "slope": slope}
