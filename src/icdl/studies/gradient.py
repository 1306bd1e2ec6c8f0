"""The numbers behind chapter ``gradient_decomposition``: Lemma 1 against autograd, per-layer gradient norms,
training with the explicit gradient, and the speed of the explicit gradient."""

from __future__ import annotations

import itertools
import time

import pandas as pd
import torch

from ..networks import (
    ACTIVATIONS,
    LOSSES,
    Architecture,
    autograd_gradient,
    explicit_gradient,
    forward,
    init_weights,
    risk,
    unflatten,
)
from ..repro.profiles import ProfileSet

PROFILES = ProfileSet(
    "gradient_decomposition",
    profiles={
        "quick": {"grid_n": 16, "grid_K": 4, "norm_depth": 8, "norm_width": 16, "norm_n": 64,
                  "train_steps": 300, "bench_repeats": 5, "seed": 0},
        "reference": {"grid_n": 64, "grid_K": 8, "norm_depth": 12, "norm_width": 32, "norm_n": 256,
                      "train_steps": 3000, "bench_repeats": 30, "seed": 0},
    },
    ranges={"grid_n": (1, 10_000), "grid_K": (1, 256), "norm_depth": (2, 64), "norm_width": (1, 1024),
            "norm_n": (1, 100_000), "train_steps": (1, 1_000_000), "bench_repeats": (1, 1000),
            "seed": (0, 2**31 - 1)},
    meanings={"grid_n": "examples per deviation check", "grid_K": "hidden width of the deviation check",
              "norm_depth": "depth of the network whose layer gradients are compared",
              "norm_width": "its hidden width", "norm_n": "its examples",
              "train_steps": "GD steps of the training comparison", "bench_repeats": "timing repetitions",
              "seed": "random seed"},
)


def relative_deviation(a: torch.Tensor, b: torch.Tensor) -> float:
    """``‖a − b‖ / ‖b‖`` (0 when both vanish)."""
    denom = float(b.norm())
    diff = float((a - b).norm())
    return diff / denom if denom > 0 else diff


def deviation_grid(grid_n: int, grid_K: int, seed: int, Ns=range(2, 7), d_x: int = 5, d_y: int = 3,
                   **_: object) -> pd.DataFrame:
    """Relative deviation of Lemma 1's gradient from autograd's, for every registered activation
    and loss and N = 2..6, with d_x ≠ d_y, in float64."""
    rows = []
    for k, (act, loss, N) in enumerate(itertools.product(ACTIVATIONS, LOSSES, Ns)):
        arch = Architecture(N, grid_K, d_x, d_y)
        g = torch.Generator().manual_seed(seed + k)
        x = torch.randn(grid_n, d_x, generator=g, dtype=torch.float64)
        y = torch.rand(grid_n, d_y, generator=g, dtype=torch.float64)
        w = init_weights(arch, scale=1.5, seed=seed + k)
        rows.append({"activation": act, "loss": loss, "N": N,
                     "rel_dev": relative_deviation(explicit_gradient(arch, w, x, y, act, loss),
                                                   autograd_gradient(arch, w, x, y, act, loss))})
    return pd.DataFrame(rows)


def layer_gradient_norms(norm_depth: int, norm_width: int, norm_n: int, seed: int,
                         scales=(0.5, 1.0, 2.0, 4.0), activations=("sigmoid", "tanh", "relu"),
                         d: int = 4, **_: object) -> pd.DataFrame:
    """‖layer-j block of ∇L_n‖ (that is, ‖1/(2n) Σ_i A_i(j)‖) for a deep network, per activation
    and weight scale (weights N(0, scale²/fan_in)); squared loss, targets y ~ N(0, I)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(norm_n, d, generator=g, dtype=torch.float64)
    y = torch.randn(norm_n, d, generator=g, dtype=torch.float64)
    arch = Architecture(norm_depth, norm_width, d, d)
    rows = []
    for act in activations:
        for scale in scales:
            w = init_weights(arch, scale=scale, seed=seed + 1)
            blocks = unflatten(arch, explicit_gradient(arch, w, x, y, act, "squared"))
            for j, block in enumerate(blocks, start=1):
                rows.append({"activation": act, "scale": scale, "layer": j, "grad_norm": float(block.norm())})
    return pd.DataFrame(rows)


def train_comparison(train_steps: int, seed: int, eta: float = 0.5, n: int = 64,
                     student: Architecture = Architecture(3, 8, 2, 1),
                     teacher: Architecture = Architecture(3, 4, 2, 1),
                     activation: str = "tanh", **_: object) -> pd.DataFrame:
    """Train a small network by GD twice from the same start -- with Lemma 1's gradient and with
    autograd's -- on data from a random teacher network; the losses and the gap between iterates."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, student.d_x, generator=g, dtype=torch.float64)
    y = forward(teacher, init_weights(teacher, scale=2.0, seed=seed + 7), x, activation)[-1]
    w_exp = w_auto = init_weights(student, scale=1.0, seed=seed + 3)
    rows = []
    for step in range(train_steps + 1):
        rows.append({"step": step,
                     "risk_explicit": float(risk(student, w_exp, x, y, activation)),
                     "risk_autograd": float(risk(student, w_auto, x, y, activation)),
                     "max_abs_gap": float((w_exp - w_auto).abs().max())})
        if step < train_steps:
            w_exp = w_exp - eta * explicit_gradient(student, w_exp, x, y, activation)
            w_auto = w_auto - eta * autograd_gradient(student, w_auto, x, y, activation)
    return pd.DataFrame(rows)


def benchmark(bench_repeats: int, n: int = 1000, N: int = 6, K: int = 64, d: int = 20,
              dtype: torch.dtype = torch.float32, **_: object) -> pd.DataFrame:
    """Wall time of one gradient, explicit (Lemma 1) vs autograd, measured side by side:
    the two are interleaved and each takes the median over ``bench_repeats`` calls."""
    arch = Architecture(N, K, d, d)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, d, generator=g, dtype=dtype)
    y = torch.randn(n, d, generator=g, dtype=dtype)
    w = init_weights(arch, seed=0, dtype=dtype)
    fns = {"explicit (Lemma 1)": explicit_gradient, "autograd": autograd_gradient}
    times = {k: [] for k in fns}
    for fn in fns.values():  # warm-up
        fn(arch, w, x, y, "sigmoid")
    for _ in range(bench_repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn(arch, w, x, y, "sigmoid")
            times[name].append(time.perf_counter() - t0)
    med = {k: float(torch.tensor(v).median()) for k, v in times.items()}
    return pd.DataFrame({"method": list(med), "median_ms": [1e3 * v for v in med.values()],
                         "ratio_to_autograd": [v / med["autograd"] for v in med.values()]})
