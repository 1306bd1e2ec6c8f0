"""Candidate in-context algorithms for chapter ``gpt_mechanism``: what a trained transformer might be running
on a prompt, each predicting the query from the examples before it, with its sensitivity ``∂ŷ/∂x_query``.

=============================  =====================================================================
:func:`gd_network`             ICDL Problem 1's learner on the target's architecture: L steps of GD at
                               step size η on the prompt's squared loss, from one fixed start ``w⁽⁰⁾``
                               shared by every prompt, for a grid of η and every L at once (batched)
:func:`gd_network_sensitivity` ``∂ŷ/∂x_query`` of the network GD leaves after L steps at one η
:func:`ridge`                  ridge regression with an unpenalised intercept, for a grid of λ
:func:`least_squares_slope`    the sensitivity of min-norm least squares (its slope), per position
:func:`model_sensitivity`      ``∂ŷ/∂x_query`` of a trained transformer, per position
=============================  =====================================================================

Shapes: prompts are ``xs (B, k, d)``, ``ys (B, k)``; ``positions`` are query indices ``p`` (0-based: the
query at index ``p`` sees the ``p`` examples before it); a prediction array is ``(B, len(positions))`` and a
sensitivity array ``(B, len(positions), d)``.

The GD learner's network is the target family's (:mod:`icdl.gpt_icl.core.tasks`): ReLU hidden layers of ``K``
units, no biases, a linear output, each layer divided by ``√fan_in``, the output divided by the label scale
-- so that at ``w⁽⁰⁾`` equal to a target's weights it predicts that target's labels. Its loss is ICDL eq. 2.2,
``L_n(w) = 1/(2n) Σ_i (f(w, x_i) − y_i)²``, over the ``n = p`` examples before the query, and GD is
``w⁽ˡ⁾ = w⁽ˡ⁻¹⁾ − η ∇L_n(w⁽ˡ⁻¹⁾)`` (Problem 1 without the projection: the box of Theorem 1 is there to bound
the construction's error, and at the step sizes chosen here the iterates stay far inside any box a
construction of this size would use). Every (prompt, position, η) is its own network; summing their losses
leaves each gradient what it would be alone, so the whole grid is one batched program.
"""

from __future__ import annotations

import math
import operator

import torch
from torch import Tensor

from icdl.checks import finite, finite_number, positive_int
from icdl.gpt_icl.core.tasks import TaskConfig, output_scale, sample_networks


def _prompts(xs: Tensor, ys: Tensor, positions) -> list[int]:
    if xs.dim() != 3 or ys.shape != xs.shape[:2]:
        raise ValueError(f"xs must be (B, k, d) and ys (B, k), got {tuple(xs.shape)} and {tuple(ys.shape)}")
    finite("xs", xs)
    finite("ys", ys)
    positions = [_position(p) for p in positions]
    if not positions or min(positions) < 1 or max(positions) >= xs.shape[1]:
        raise ValueError(f"positions must be query indices in 1..k−1={xs.shape[1] - 1} (the query needs at least "
                         f"one example before it), got {positions}")
    return positions


def _position(p) -> int:
    """A query index as an int: an integer (a Python, NumPy or 0-d torch integer), never a bool or a float --
    ``int(2.7)`` would silently ask for position 2."""
    if isinstance(p, bool) or (isinstance(p, Tensor) and (p.dim() != 0 or p.dtype == torch.bool
                                                          or p.is_floating_point() or p.is_complex())):
        raise ValueError(f"positions must be integers, got {p!r}")
    try:
        return operator.index(p)
    except TypeError:
        raise ValueError(f"positions must be integers (query indices), got {p!r} of type "
                         f"{type(p).__name__}") from None


def _number(name: str, v) -> float:
    """One entry of a grid (``etas``, ``lambdas``) as a float: a real number (a 0-d tensor or NumPy scalar too),
    never a bool or a string."""
    if isinstance(v, (bool, str, bytes)) or (isinstance(v, Tensor) and v.dtype == torch.bool):
        raise ValueError(f"{name} must be a finite number, got {v!r}")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {v!r}") from None


def start_weights(task: TaskConfig, init_scale: float, seed: int) -> list[Tensor]:
    """``w⁽⁰⁾``: one draw of the target family's weights (entries ``N(0, 1)``), times ``init_scale`` -- the
    same start for every prompt, as the construction of Theorem 1 carries one ``w⁽⁰⁾`` in its tokens."""
    finite_number("init_scale", init_scale, low=0.0, open_interval=True)
    positive_int("seed", seed, minimum=0)
    g = torch.Generator().manual_seed(seed)
    return [init_scale * W[0] for W in sample_networks(TaskConfig(d=task.d, depth=task.depth, width=task.K), 1, g)]


def network(Ws: list[Tensor], x: Tensor, scale: float) -> Tensor:
    """``f(w, x)`` of the target family for a batch of networks: ``Ws[j] (M, out, in)``, ``x (M, m, d)`` ->
    ``(M, m)``."""
    h = x
    for j, W in enumerate(Ws):
        h = h @ W.transpose(1, 2) / math.sqrt(W.shape[2])
        if j < len(Ws) - 1:
            h = torch.relu(h)
    return h[..., 0] / scale


def _label_scale(task: TaskConfig) -> float:
    return output_scale(task.d, task.depth, task.width_factor, 0.0, "relu", task.width)


def recorded_steps(steps: int) -> list[int]:
    """The L at which GD's prediction is recorded: 0, 1, 2, 4, …, up to and including ``steps``."""
    positive_int("steps", steps)
    out = [0] + [2 ** i for i in range(int(math.log2(steps)) + 1)]
    return out if out[-1] == steps else out + [steps]


def gd_network(xs: Tensor, ys: Tensor, positions, task: TaskConfig, *, etas, steps: int, init_scale: float,
               seed: int, fit: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """Predictions of GD on the target's architecture: ``(len(etas), len(recorded_steps(steps)), B,
    len(positions))`` -- for every step size, every recorded L, every prompt and position. With ``fit``, also
    GD's own objective at each recorded L -- each network's half mean squared error on the examples before its
    query, the loss it descends -- averaged over the prompts: ``(len(etas), len(recorded_steps(steps)),
    len(positions))``, to show whether its fit has converged."""
    positions = _prompts(xs, ys, positions)
    etas = [finite_number("eta", _number("eta", e), low=0.0, open_interval=True) for e in etas]
    record = recorded_steps(steps)
    B, k, d = xs.shape
    if d != task.d:
        raise ValueError(f"xs has inputs of size {d}, the task {task.d}")
    E, P = len(etas), len(positions)
    scale = _label_scale(task)
    # one network per (eta, prompt, position): M = E·B·P, all trained on the first k' = max(positions) examples,
    # each counting only the examples before its own query
    kk = max(positions)
    dt = xs.dtype  # float32 in the study, float64 in the tests
    x_tr, y_tr = xs[:, :kk], ys[:, :kk]
    used = (torch.arange(kk)[None, :] < torch.tensor(positions)[:, None]).to(dt)  # (P, kk)
    n = used.sum(1)                                                                           # (P,)
    M = E * B * P
    X = x_tr[None, :, None].expand(E, B, P, kk, d).reshape(M, kk, d)
    Y = y_tr[None, :, None].expand(E, B, P, kk).reshape(M, kk)
    mask = (used / (2 * n[:, None]))[None, None].expand(E, B, P, kk).reshape(M, kk)
    Xq = xs[torch.arange(B)[:, None], torch.tensor(positions)[None, :]]                       # (B, P, d)
    Xq = Xq[None].expand(E, B, P, d).reshape(M, 1, d)
    eta = torch.tensor(etas, dtype=dt)[:, None].expand(E, B * P).reshape(M)
    Ws = [W.to(dt)[None].repeat(M, 1, 1).requires_grad_(True) for W in start_weights(task, init_scale, seed)]
    out = torch.empty(E, len(record), B, P, dtype=dt)
    losses = torch.empty(E, len(record), P, dtype=dt)
    for step in range(steps + 1):
        if step in record:
            with torch.no_grad():
                out[:, record.index(step)] = network(Ws, Xq, scale).view(E, B, P)
                if fit:  # each network's own loss (M,), then the mean over prompts
                    per = (((network(Ws, X, scale) - Y) ** 2) * mask).sum(1)
                    losses[:, record.index(step)] = per.view(E, B, P).mean(1)
        if step == steps:
            break
        loss = (((network(Ws, X, scale) - Y) ** 2) * mask).sum()
        grads = torch.autograd.grad(loss, Ws)
        with torch.no_grad():
            for W, G in zip(Ws, grads):
                W -= eta[:, None, None] * G
    return (out, losses) if fit else out


def gd_network_sensitivity(xs: Tensor, ys: Tensor, positions, task: TaskConfig, *, eta: float, steps: int,
                           init_scale: float, seed: int) -> tuple[Tensor, Tensor]:
    """The prediction ``(B, P)`` and the sensitivity ``∂ŷ/∂x_query`` ``(B, P, d)`` of the network L = ``steps``
    steps of GD at step size ``eta`` leave, per prompt and position."""
    positions = _prompts(xs, ys, positions)
    finite_number("eta", eta, low=0.0, open_interval=True)
    positive_int("steps", steps, minimum=0)
    B, k, d = xs.shape
    P, kk = len(positions), max(positions)
    scale = _label_scale(task)
    dt = xs.dtype
    used = (torch.arange(kk)[None, :] < torch.tensor(positions)[:, None]).to(dt)
    mask = (used / (2 * used.sum(1, keepdim=True)))[None].expand(B, P, kk).reshape(B * P, kk)
    X = xs[:, None, :kk].expand(B, P, kk, d).reshape(B * P, kk, d)
    Y = ys[:, None, :kk].expand(B, P, kk).reshape(B * P, kk)
    Ws = [W.to(dt)[None].repeat(B * P, 1, 1).requires_grad_(True) for W in start_weights(task, init_scale, seed)]
    for _ in range(steps):
        grads = torch.autograd.grad((((network(Ws, X, scale) - Y) ** 2) * mask).sum(), Ws)
        with torch.no_grad():
            for W, G in zip(Ws, grads):
                W -= eta * G
    Xq = xs[torch.arange(B)[:, None], torch.tensor(positions)[None, :]].reshape(B * P, 1, d).clone()
    Xq.requires_grad_(True)
    pred = network([W.detach() for W in Ws], Xq, scale)
    (sens,) = torch.autograd.grad(pred.sum(), Xq)
    return pred.detach().view(B, P), sens.view(B, P, d)


def ridge(xs: Tensor, ys: Tensor, positions, lambdas) -> tuple[Tensor, Tensor]:
    """Ridge regression on the examples before each query, the intercept unpenalised (the data centred on
    those examples' means): predictions ``(len(lambdas), B, P)`` and slopes -- the sensitivities --
    ``(len(lambdas), B, P, d)``. λ = 0 is least squares with an intercept (min-norm where under-determined)."""
    positions = _prompts(xs, ys, positions)
    lambdas = [finite_number("lambda", _number("lambda", v), low=0.0) for v in lambdas]
    B, k, d = xs.shape
    preds = torch.empty(len(lambdas), B, len(positions), dtype=torch.float64)
    slopes = torch.empty(len(lambdas), B, len(positions), d, dtype=torch.float64)
    X, Y = xs.to(torch.float64), ys.to(torch.float64)
    eye = torch.eye(d, dtype=torch.float64)
    for j, p in enumerate(positions):
        xm, ym = X[:, :p].mean(1, keepdim=True), Y[:, :p].mean(1, keepdim=True)
        Xc, Yc = X[:, :p] - xm, Y[:, :p] - ym
        for i, lam in enumerate(lambdas):
            if lam == 0:
                beta = (torch.linalg.pinv(Xc) @ Yc[..., None])[..., 0]
            else:
                gram, rhs = Xc.transpose(1, 2) @ Xc, Xc.transpose(1, 2) @ Yc[..., None]
                beta = torch.linalg.solve(gram + lam * eye, rhs)[..., 0]
            slopes[i, :, j] = beta
            preds[i, :, j] = ym[:, 0] + ((X[:, p] - xm[:, 0]) * beta).sum(1)
    return preds.to(xs.dtype), slopes.to(xs.dtype)


def least_squares_with_slope(xs: Tensor, ys: Tensor, positions) -> tuple[Tensor, Tensor]:
    """The book's least squares (:func:`icdl.gpt_icl.core.baselines.least_squares`: min-norm with an intercept in the
    norm) at each query, ``(B, P)``, and its slope ``(B, P, d)`` -- the sensitivity."""
    positions = _prompts(xs, ys, positions)
    B, k, d = xs.shape
    X1 = torch.cat([xs, torch.ones(B, k, 1, dtype=xs.dtype)], -1).double()
    preds, slopes = [], []
    for p in positions:
        coef = (torch.linalg.pinv(X1[:, :p]) @ ys[:, :p, None].double())[..., 0]
        preds.append((X1[:, p] * coef).sum(1))
        slopes.append(coef[:, :d])
    return torch.stack(preds, 1).to(xs.dtype), torch.stack(slopes, 1).to(xs.dtype)


def model_sensitivity(model, xs: Tensor, ys: Tensor, positions) -> tuple[Tensor, Tensor]:
    """A trained transformer's prediction ``(B, P)`` and ``∂ŷ/∂x_query`` ``(B, P, d)`` at each position: the
    gradient of its output at the query token with respect to that token's input (one backward pass per
    position, since a query is also context for the later ones). A model with a ``sensitivity(xs, ys, positions)``
    method of its own (a planted algorithm, :class:`icdl.gpt_icl.mechanism.plants.Planted`) gives both itself."""
    if hasattr(model, "sensitivity"):
        return model.sensitivity(xs, ys, list(positions))
    positions = _prompts(xs, ys, positions)
    preds, sens = [], []
    for p in positions:
        x = xs[:, :p + 1].clone().requires_grad_(True)
        out = model(x, ys[:, :p + 1])[:, p]
        (g,) = torch.autograd.grad(out.sum(), x)
        preds.append(out.detach())
        sens.append(g[:, p])
    return torch.stack(preds, 1), torch.stack(sens, 1)
