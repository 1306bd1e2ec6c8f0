"""Reference predictors for in-context regression, each predicting ``y_k`` from ``(x_1, y_1), …, (x_{k−1}, y_{k−1})``
and ``x_k``, for a batch of prompts at once, and the R² the chapters score every predictor by. Chapter
``gpt_icl`` draws them beside the transformers; their timings are in :mod:`icdl.gpt_icl.core.measure`.

* :func:`context_mean` -- the mean of the labels seen so far (0 before any);
* :func:`least_squares` -- minimum-norm least squares with an intercept on the examples seen so far;
* :func:`nearest_neighbours` -- the mean label of the ``m`` nearest examples seen so far;
* :func:`trained_mlp` -- ICDL's baseline (sec. 5): an MLP of the target's depth, width 200, trained with
  MSE for 100 epochs on the ``k − 1`` examples, the best R² over epochs. Thousands of small MLPs are one
  tensor program: every weight carries a leading prompt dimension and each step is a batched matmul;
  summing the prompts' losses leaves each prompt's Adam update exactly what it would be alone.

Choices the paper leaves open (stated in the chapter, parameters here): Adam at lr 1e-3, full batch
(one epoch = one step on the ``k − 1`` examples), default PyTorch initialisation, biases in every layer.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from icdl.checks import finite, finite_number, positive_int
from icdl.gpt_icl.core.tasks import layer_sizes

#: bumped whenever a change alters what the baselines compute (cached results carry it): 2 = each prompt's
#: MLP initialised from its own generator, fused Adam
VERSION = 2

#: the names of the baselines in result files and figures
CONTEXT_MEAN, LEAST_SQUARES, NEAREST_NEIGHBOURS = "context mean", "least squares", "3-NN"


def mlp_method(depth: int) -> str:
    """The name of the MLP baseline of a target depth in result files (its rows carry the depth)."""
    return f"MLP ({depth} layers, best epoch)"


def is_mlp(method) -> bool:
    """Whether a method name (or each of a Series of them) is the MLP baseline's."""
    return method.str.startswith("MLP") if hasattr(method, "str") else str(method).startswith("MLP")


def _prompts(xs: Tensor, ys: Tensor) -> None:
    """Every baseline reads ``xs (B, k, d)`` and ``ys (B, k)`` of finite numbers."""
    if xs.dim() != 3 or ys.shape != xs.shape[:2]:
        raise ValueError(f"xs must be (B, k, d) and ys (B, k), got {tuple(xs.shape)} and {tuple(ys.shape)}")
    finite("xs", xs)
    finite("ys", ys)


def context_mean(xs: Tensor, ys: Tensor) -> Tensor:
    """``(B, k)``: at position i the mean of ``y_1 … y_{i−1}`` (0 at i = 1)."""
    _prompts(xs, ys)
    csum = torch.cumsum(ys, 1) - ys
    count = torch.arange(ys.shape[1], dtype=ys.dtype)
    return torch.where(count > 0, csum / count.clamp(min=1), torch.zeros_like(ys))


def least_squares(xs: Tensor, ys: Tensor, positions: list[int] | None = None) -> Tensor:
    """``(B, len(positions))``: min-norm least squares with intercept on the examples before each position."""
    _prompts(xs, ys)
    B, k, d = xs.shape
    positions = list(range(k)) if positions is None else positions
    X1 = torch.cat([xs, torch.ones(B, k, 1, dtype=xs.dtype)], -1).double()
    out = []
    for i in positions:
        if i == 0:
            out.append(torch.zeros(B, dtype=torch.float64))
            continue
        coef = torch.linalg.pinv(X1[:, :i]) @ ys[:, :i, None].double()
        out.append((X1[:, i:i + 1] @ coef)[:, 0, 0])
    return torch.stack(out, 1).to(ys.dtype)


def nearest_neighbours(xs: Tensor, ys: Tensor, m: int = 3) -> Tensor:
    """``(B, k)``: mean label of the ``min(m, i − 1)`` nearest earlier examples (0 at position 1)."""
    _prompts(xs, ys)
    B, k, _ = xs.shape
    dist = torch.cdist(xs, xs)
    future = torch.ones(k, k, dtype=torch.bool).triu()  # example j is usable at position i only if j < i
    dist = dist.masked_fill(future, float("inf"))
    out = torch.zeros(B, k, dtype=ys.dtype)
    for i in range(1, k):
        mm = min(m, i)
        idx = dist[:, i, :i].topk(mm, largest=False).indices
        out[:, i] = ys[:, :i].gather(1, idx).mean(1)
    return out


def r2_across_prompts(pred: Tensor, y: Tensor) -> Tensor:
    """R² across prompts (dimension 0): ``1 − Σ_b (ŷ_b − y_b)² / Σ_b (y_b − ȳ)²``, per remaining index --
    per prompt position for ``(B, k)`` inputs, the chapter's definition. ``y`` may broadcast against
    ``pred`` (e.g. ``(B, 1)`` labels against ``(B, epochs)`` predictions)."""
    finite("the predictions", pred)
    y_full = finite("the labels", y).expand_as(pred)
    if pred.shape[0] < 2:
        raise ValueError(f"R² across prompts needs at least 2 prompts, got {pred.shape[0]}")
    spread = ((y_full - y_full.mean(0)) ** 2).sum(0)
    if not (spread > 0).all():
        raise ValueError("R² across prompts is undefined where the labels are the same in every prompt "
                         f"(at {int((spread <= 0).sum())} of {spread.numel()} positions)")
    return 1 - ((pred - y_full) ** 2).sum(0) / spread


def init_mlps(prompts: range, depth: int, d: int, width: int, seed: int) -> list[Tensor]:
    """Weights ``[W (B, in, out), b (B, out)]`` per layer with torch.nn.Linear's default initialisation
    (drawn as its ``(out, in)`` matrix, stored transposed so that the forward pass and the gradient need no
    transposed copies). Prompt ``i`` draws from its own generator (seeded by ``seed`` and ``i``), so a
    prompt's MLP does not depend on how the prompts are split into chunks."""
    sizes = layer_sizes(d, width, depth)
    per_prompt = []
    for i in prompts:
        g = torch.Generator().manual_seed(1_000_003 * seed + i)
        one = []
        for j in range(depth):
            bound = 1 / math.sqrt(sizes[j])
            one.append(((torch.rand(sizes[j + 1], sizes[j], generator=g) * 2 - 1) * bound).T)
            one.append((torch.rand(sizes[j + 1], generator=g) * 2 - 1) * bound)
        per_prompt.append(one)
    return [torch.stack(ps).contiguous().requires_grad_(True) for ps in zip(*per_prompt)]


def mlp_forward(params: list[Tensor], x: Tensor) -> Tensor:
    """``x (B, m, d)`` -> ``(B, m)`` through each prompt's own MLP (ReLU hidden layers)."""
    h = x
    for j in range(0, len(params), 2):
        h = torch.baddbmm(params[j + 1][:, None, :], h, params[j])
        if j + 2 < len(params):
            h = torch.relu(h)
    return h[..., 0]


def trained_mlp(xs: Tensor, ys: Tensor, position: int, *, depth: int, width: int = 200, epochs: int = 100,
                lr: float = 1e-3, seed: int = 0, chunk: int = 16, sensitivity: bool = False) -> dict:
    """Train one MLP per prompt on its examples before ``position`` (0-based: ``position`` examples) and
    predict the label at ``position`` after every epoch. Returns ``{"pred": (epochs, B), "r2": (epochs,),
    "best_epoch", "best_r2"}``: the R² across prompts per epoch and the best of them (the paper's
    "best R² over epochs" -- an optimistic choice, made with the test labels). With ``sensitivity`` also
    ``"sensitivity" (B, d)``: ``∂ŷ/∂x_query`` of each prompt's MLP after the last epoch.

    ``chunk`` prompts train together (the result does not depend on it). Small chunks are faster on a
    CPU: every prompt's weights, gradients and Adam moments (≈ 0.7 MB at width 200) are streamed at each
    step, and 16 prompts' worth stays in cache where 1024 prompts' worth does not."""
    preds, sens = mlp_predictions(xs, ys, position, depth=depth, width=width, epochs=epochs, lr=lr, seed=seed,
                                  chunk=chunk, sensitivity=sensitivity)
    r2 = r2_across_prompts(preds.T, ys[:, position, None])  # (epochs,): R² across prompts after each epoch
    best = int(torch.argmax(r2))
    out = {"pred": preds, "r2": r2, "best_epoch": best, "best_r2": float(r2[best])}
    return out | {"sensitivity": sens} if sensitivity else out


def mlp_predictions(xs: Tensor, ys: Tensor, position: int, *, depth: int, width: int = 200, epochs: int = 100,
                    lr: float = 1e-3, seed: int = 0, chunk: int = 16, sensitivity: bool = False,
                    first: int = 0) -> tuple[Tensor, Tensor | None]:
    """The training of :func:`trained_mlp` without its score: ``(epochs, B)`` predictions after every epoch, and
    the sensitivities (``(B, d)``, or None without ``sensitivity``). ``first``: the index of ``xs``'s first prompt
    in its whole set -- each prompt's MLP is seeded by its index there, so that a slice of a set (one block of
    :mod:`~icdl.gpt_icl.core.paired_mlp`, even of one prompt) trains the MLPs the whole set does."""
    if chunk < 1:
        raise ValueError(f"chunk must be a positive number of prompts, got {chunk}")
    if position < 1:
        raise ValueError(f"position must be >= 1 (the MLP needs at least one example), got {position}")
    if first < 0:
        raise ValueError(f"first must be the index of the first prompt (>= 0), got {first}")
    _prompts(xs, ys)
    B = xs.shape[0]
    preds = torch.empty(epochs, B)
    sens = torch.empty(B, xs.shape[2])
    for start in range(0, B, chunk):
        sl = slice(start, min(B, start + chunk))
        x_tr, y_tr, x_q = xs[sl, :position], ys[sl, :position], xs[sl, position:position + 1]
        params = init_mlps(range(first + sl.start, first + sl.stop), depth, xs.shape[2], width, seed)
        opt = torch.optim.Adam(params, lr=lr, fused=True)  # one fused pass over all tensors per step
        for e in range(epochs):
            loss = ((mlp_forward(params, x_tr) - y_tr) ** 2).mean(1).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                preds[e, sl] = mlp_forward(params, x_q)[:, 0]
        if sensitivity:
            xq = x_q.clone().requires_grad_(True)
            (g,) = torch.autograd.grad(mlp_forward([p.detach() for p in params], xq).sum(), xq)
            sens[sl] = g[:, 0]
    return preds, (sens if sensitivity else None)


def bootstrap_band(pred: Tensor, y: Tensor, *, resamples: int = 200, seed: int = 0, q: float = 0.05) -> np.ndarray:
    """``(2, k)``: the ``q/2`` and ``1 − q/2`` quantiles of the per-position R² over bootstrap resamples of the
    prompts."""
    finite_number("q", q, low=0.0, high=1.0, open_interval=True)
    positive_int("resamples", resamples)
    g = torch.Generator().manual_seed(seed)
    B = pred.shape[0]
    stats = []
    for _ in range(resamples):
        idx = torch.randint(0, B, (B,), generator=g)
        stats.append(r2_across_prompts(pred[idx], y[idx]))
    return np.quantile(torch.stack(stats).numpy(), [q / 2, 1 - q / 2], axis=0)
