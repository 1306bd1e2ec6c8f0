"""In-context gradient descent on linear regression (chapter ``icgd_linear``).

The smallest instance of ICGD (ICDL Problem 1): the "network" is linear,
``f(w, x) = wᵀx``, the risk is ``L_n(w) = 1/(2n) Σ_i (wᵀx_i − y_i)²``, and one
ReLU-attention layer (:func:`icdl.constructions.linear.build_linear_gd_layer`) carries out
one exact gradient step. This module samples tasks, runs plain GD in closed form,
runs the stacked layers on the prompt, and summarises both for the chapter.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from ..constructions.linear import build_linear_gd_layer, linear_gd_layout
from ..prompts import build_prompt, check_prompt
from ..repro.profiles import ProfileSet

PROFILES = ProfileSet(
    "icgd_linear",
    profiles={
        "quick": {"prompts": 64, "n": 32, "d": 4, "steps": 30, "noise": 0.1, "seed": 0},
        "reference": {"prompts": 512, "n": 128, "d": 16, "steps": 200, "noise": 0.1, "seed": 0},
    },
    ranges={"prompts": (1, 100_000), "n": (1, 100_000), "d": (1, 1024), "steps": (1, 10_000),
            "noise": (0.0, 100.0), "seed": (0, 2**31 - 1)},
    meanings={"prompts": "prompts, each with its own data", "n": "examples per prompt", "d": "input dimension",
              "steps": "GD steps", "noise": "label noise standard deviation", "seed": "random seed"},
)

#: step sizes shown in the chapter (stable for x ~ N(0, I) when n ≥ d)
ETAS = (0.05, 0.2, 0.5)


@dataclass(frozen=True)
class LinearTasks:
    x: torch.Tensor        # (B, n, d)
    y: torch.Tensor        # (B, n)
    x_query: torch.Tensor  # (B, d)
    y_query: torch.Tensor  # (B,)
    w_star: torch.Tensor   # (B, d)


def sample_tasks(prompts: int, n: int, d: int, noise: float, seed: int,
                 dtype: torch.dtype = torch.float64) -> LinearTasks:
    """``w* ~ N(0, I_d / d)``, ``x ~ N(0, I_d)``, ``y = w*ᵀx + noise · N(0, 1)``."""
    g = torch.Generator().manual_seed(seed)
    w_star = torch.randn(prompts, d, generator=g, dtype=dtype) / d**0.5
    x = torch.randn(prompts, n + 1, d, generator=g, dtype=dtype)
    y = torch.einsum("bnd,bd->bn", x, w_star) + noise * torch.randn(prompts, n + 1, generator=g, dtype=dtype)
    return LinearTasks(x[:, :n], y[:, :n], x[:, n], y[:, n], w_star)


def risk(w: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``L_n(w) = 1/(2n) Σ_i (wᵀx_i − y_i)²`` per prompt; ``w`` is ``(B, d)``."""
    resid = torch.einsum("bnd,bd->bn", x, w) - y
    return 0.5 * (resid**2).mean(dim=1)


def gd_path(x: torch.Tensor, y: torch.Tensor, eta: float, steps: int) -> torch.Tensor:
    """Plain GD from ``w = 0``: ``w ← w − η (1/n) Σ_i (wᵀx_i − y_i) x_i``. Returns ``(steps+1, B, d)``."""
    w = torch.zeros(x.shape[0], x.shape[2], dtype=x.dtype)
    path = [w]
    for _ in range(steps):
        resid = torch.einsum("bnd,bd->bn", x, w) - y
        w = w - eta * torch.einsum("bn,bnd->bd", resid, x) / x.shape[1]
        path.append(w)
    return torch.stack(path)


def transformer_path(tasks: LinearTasks, eta: float, steps: int, *, bound: float = 1e4) -> torch.Tensor:
    """Run ``steps`` stacked GD layers on the prompt; return ŵ^(l) of every token, ``(steps+1, B, T, d)``."""
    d = tasks.x.shape[2]
    layout, w_rows = linear_gd_layout(d)
    H = build_prompt(tasks.x, tasks.y, tasks.x_query, D=layout.D)
    check_prompt(H, d)
    layer = build_linear_gd_layer(d, eta, bound=bound, dtype=H.dtype)
    path = [H[:, w_rows, :].transpose(1, 2)]
    with torch.no_grad():
        for _ in range(steps):
            H = layer(H)
            path.append(H[:, w_rows, :].transpose(1, 2))
    return torch.stack(path)


def first_prompts(tasks: LinearTasks, k: int) -> LinearTasks:
    """The first ``k`` prompts of ``tasks`` (the same draws: a check of a long run on a part of its prompts)."""
    return LinearTasks(*(getattr(tasks, f)[:k] for f in ("x", "y", "x_query", "y_query", "w_star")))


def one_step_error(prompts: int, n: int, d: int, noise: float, seed: int, eta: float = 0.2, bound: float = 1e4,
                   **_: object) -> tuple[float, bool]:
    """One GD layer (its bound ``bound``) against one closed-form step (the chapter's claim ``icdl-icgd-one-step``),
    from a random nonzero ``w`` written into every token: the largest ``|layer(H) − (w − η∇L_n(w))|`` over prompts,
    tokens and coordinates, and whether every row other than ``w``'s is left as it was."""
    tasks = sample_tasks(prompts, n, d, noise, seed)
    layout, w_rows = linear_gd_layout(d)
    H = build_prompt(tasks.x, tasks.y, tasks.x_query, D=layout.D)
    w0 = torch.randn(prompts, d, generator=torch.Generator().manual_seed(1), dtype=H.dtype)
    H[:, w_rows, :] = w0[:, :, None]
    H1 = build_linear_gd_layer(d, eta, bound=bound)(H)
    resid = torch.einsum("bnd,bd->bn", tasks.x, w0) - tasks.y
    w1_exact = w0 - eta * torch.einsum("bn,bnd->bd", resid, tasks.x) / n
    untouched = bool(torch.equal(torch.cat([H1[:, :w_rows.start], H1[:, w_rows.stop:]], 1),
                                 torch.cat([H[:, :w_rows.start], H[:, w_rows.stop:]], 1)))
    return float((H1[:, w_rows, :] - w1_exact[:, :, None]).abs().max()), untouched


def icgd_experiment(prompts: int, n: int, d: int, steps: int, noise: float, seed: int,
                    etas: tuple[float, ...] = ETAS, first: int | None = None, **_: object) -> pd.DataFrame:
    """Numbers behind the chapter's figure: per step size and step, the risk along GD and
    along the transformer, the largest |ŵ − w_GD| over prompts, tokens and coordinates,
    the spread of ŵ across the tokens of one prompt, and the query's squared error. ``first``: only the first
    that many of the ``prompts`` drawn (a cheap check of a long run: the same prompts, fewer of them)."""
    tasks = sample_tasks(prompts, n, d, noise, seed)
    if first is not None:
        tasks = first_prompts(tasks, first)
    ls = torch.linalg.lstsq(tasks.x, tasks.y[..., None]).solution[..., 0]
    rows = []
    for eta in etas:
        w_gd = gd_path(tasks.x, tasks.y, eta, steps)
        w_tf = transformer_path(tasks, eta, steps)
        for step in range(steps + 1):
            tf = w_tf[step]
            dev = (tf - w_gd[step][:, None, :]).abs().max()
            spread = (tf - tf[:, :1, :]).abs().max()
            w_q = tf[:, -1, :]  # what the query token holds
            rows.append({
                "eta": eta, "step": step,
                "risk_gd": float(risk(w_gd[step], tasks.x, tasks.y).mean()),
                "risk_tf": float(risk(w_q, tasks.x, tasks.y).mean()),
                "risk_ls": float(risk(ls, tasks.x, tasks.y).mean()),
                "max_abs_dev": float(dev),
                "token_spread": float(spread),
                "query_sq_err_tf": float(((w_q * tasks.x_query).sum(-1) - tasks.y_query).pow(2).mean()),
            })
    return pd.DataFrame(rows)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """One row per step size: final risks and the worst deviation along the whole path."""
    g = df.groupby("eta")
    last = g.tail(1).set_index("eta")
    return pd.DataFrame({
        "final risk (GD)": last["risk_gd"],
        "final risk (transformer)": last["risk_tf"],
        "least-squares risk": last["risk_ls"],
        "max |ŵ − w_GD| over path": g["max_abs_dev"].max(),
        "max token spread": g["token_spread"].max(),
    })
