"""Reference predictors for in-context regression, each predicting ``y_k`` from ``(x_1, y_1), …, (x_{k−1}, y_{k−1})``
and ``x_k``, for a batch of prompts at once. Chapter ``gpt_icl`` draws them beside the transformers.

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
import time

import numpy as np
import torch
from torch import Tensor

#: bumped whenever a change alters what the baselines compute (cached results carry it): 2 = each prompt's
#: MLP initialised from its own generator, fused Adam
VERSION = 2


def context_mean(xs: Tensor, ys: Tensor) -> Tensor:
    """``(B, k)``: at position i the mean of ``y_1 … y_{i−1}`` (0 at i = 1)."""
    csum = torch.cumsum(ys, 1) - ys
    count = torch.arange(ys.shape[1], dtype=ys.dtype)
    return torch.where(count > 0, csum / count.clamp(min=1), torch.zeros_like(ys))


def least_squares(xs: Tensor, ys: Tensor, positions: list[int] | None = None) -> Tensor:
    """``(B, len(positions))``: min-norm least squares with intercept on the examples before each position."""
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
    y_full = y.expand_as(pred)
    return 1 - ((pred - y_full) ** 2).sum(0) / ((y_full - y_full.mean(0)) ** 2).sum(0)


def _init_mlps(prompts: range, depth: int, d: int, width: int, seed: int) -> list[Tensor]:
    """Weights ``[W (B, in, out), b (B, out)]`` per layer with torch.nn.Linear's default initialisation
    (drawn as its ``(out, in)`` matrix, stored transposed so that the forward pass and the gradient need no
    transposed copies). Prompt ``i`` draws from its own generator (seeded by ``seed`` and ``i``), so a
    prompt's MLP does not depend on how the prompts are split into chunks."""
    sizes = [d] + [width] * (depth - 1) + [1]
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


def _mlp(params: list[Tensor], x: Tensor) -> Tensor:
    """``x (B, m, d)`` -> ``(B, m)`` through each prompt's own MLP (ReLU hidden layers)."""
    h = x
    for j in range(0, len(params), 2):
        h = torch.baddbmm(params[j + 1][:, None, :], h, params[j])
        if j + 2 < len(params):
            h = torch.relu(h)
    return h[..., 0]


def trained_mlp(xs: Tensor, ys: Tensor, position: int, *, depth: int, width: int = 200, epochs: int = 100,
                lr: float = 1e-3, seed: int = 0, chunk: int = 16) -> dict:
    """Train one MLP per prompt on its examples before ``position`` (0-based: ``position`` examples) and
    predict the label at ``position`` after every epoch. Returns ``{"pred": (epochs, B), "r2": (epochs,),
    "best_epoch", "best_r2"}``: the R² across prompts per epoch and the best of them (the paper's
    "best R² over epochs" -- an optimistic choice, made with the test labels).

    ``chunk`` prompts train together (the result does not depend on it). Small chunks are faster on a
    CPU: every prompt's weights, gradients and Adam moments (≈ 0.7 MB at width 200) are streamed at each
    step, and 16 prompts' worth stays in cache where 1024 prompts' worth does not."""
    if chunk < 1:
        raise ValueError(f"chunk must be a positive number of prompts, got {chunk}")
    if position < 1:
        raise ValueError(f"position must be >= 1 (the MLP needs at least one example), got {position}")
    B = xs.shape[0]
    preds = torch.empty(epochs, B)
    for start in range(0, B, chunk):
        sl = slice(start, min(B, start + chunk))
        x_tr, y_tr, x_q = xs[sl, :position], ys[sl, :position], xs[sl, position:position + 1]
        params = _init_mlps(range(sl.start, sl.stop), depth, xs.shape[2], width, seed)
        opt = torch.optim.Adam(params, lr=lr, fused=True)  # one fused pass over all tensors per step
        for e in range(epochs):
            loss = ((_mlp(params, x_tr) - y_tr) ** 2).mean(1).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                preds[e, sl] = _mlp(params, x_q)[:, 0]
    r2 = r2_across_prompts(preds.T, ys[:, position, None])  # (epochs,): R² across prompts after each epoch
    best = int(torch.argmax(r2))
    return {"pred": preds, "r2": r2, "best_epoch": best, "best_r2": float(r2[best])}


def trained_mlp_loop(xs: Tensor, ys: Tensor, position: int, *, depth: int, width: int = 200, epochs: int = 100,
                     lr: float = 1e-3, seed: int = 0) -> Tensor:
    """The same training as :func:`trained_mlp`, written the plain way: one ``nn.Sequential`` and one Adam per
    prompt, in a Python loop. Returns the predictions ``(epochs, B)`` (the benchmark's reference)."""
    torch.manual_seed(seed)
    B = xs.shape[0]
    preds = torch.empty(epochs, B)
    for b in range(B):
        sizes = [xs.shape[2]] + [width] * (depth - 1) + [1]
        layers: list[torch.nn.Module] = []
        for j in range(depth):
            layers.append(torch.nn.Linear(sizes[j], sizes[j + 1]))
            if j < depth - 1:
                layers.append(torch.nn.ReLU())
        net = torch.nn.Sequential(*layers)
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        for e in range(epochs):
            loss = ((net(xs[b, :position])[:, 0] - ys[b, :position]) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                preds[e, b] = net(xs[b, position:position + 1])[0, 0]
    return preds


def mlp_epoch_flops(d: int, position: int, *, depth: int, width: int = 200) -> int:
    """Matmul FLOPs of one prompt's epoch in :func:`trained_mlp` (forward and backward on ``position``
    examples, then the query's forward), counted by torch's FLOP counter; Adam's element-wise update
    is not counted."""
    from torch.utils.flop_counter import FlopCounterMode

    params = _init_mlps(range(1), depth, d, width, seed=0)
    x = torch.randn(1, position + 1, d)
    with FlopCounterMode(display=False) as counter:
        (_mlp(params, x[:, :position]) ** 2).sum().backward()
        with torch.no_grad():
            _mlp(params, x[:, position:])
    return int(counter.get_total_flops())


def mlp_params(d: int, *, depth: int, width: int = 200) -> int:
    """Weights and biases of one prompt's MLP."""
    sizes = [d] + [width] * (depth - 1) + [1]
    return sum((sizes[j] + 1) * sizes[j + 1] for j in range(depth))


#: float32 values moved per weight in one epoch of :func:`trained_mlp`: the forward pass, the backward pass
#: and the query's forward pass read it (3), the backward pass writes its gradient (1), Adam reads the
#: gradient, both moments and the weight (4) and writes the moments and the weight (3)
MLP_VALUES_PER_WEIGHT_EPOCH = 11


def memory_bandwidth(megabytes: int = 256, repeats: int = 5) -> float:
    """Bytes per second of a large float32 copy (each byte read once and written once), best of ``repeats``:
    the rate at which weights that do not stay in the caches can be streamed."""
    n = megabytes * 2**20 // 4
    a, b = torch.ones(n), torch.empty(n)
    b.copy_(a)
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        b.copy_(a)
        best = min(best, time.perf_counter() - t)
    return 2 * 4 * n / best


def mlp_products_seconds(d: int, position: int, *, depth: int, width: int = 200, chunk: int = 16,
                         repeats: int = 20) -> float:
    """Seconds per prompt and epoch of :func:`trained_mlp`'s matrix products alone, at their own shapes (a
    chunk of ``chunk`` prompts: per layer the forward product, the two products of its backward pass, and the
    query's forward product), with nothing else in between -- best of ``repeats``. At ``position`` ≈ 20
    examples the products have an inner size of 20, where a CPU's matmul runs far below its large-matrix
    rate: this, not the large matmul, is what the batched program can approach."""
    sizes = [d] + [width] * (depth - 1) + [1]
    mats = [(torch.randn(chunk, position, sizes[j]), torch.randn(chunk, sizes[j], sizes[j + 1]),
             torch.randn(chunk, position, sizes[j + 1]), torch.randn(chunk, 1, sizes[j])) for j in range(depth)]

    def products():
        for x, w, dy, q in mats:
            torch.bmm(x, w)                   # forward
            torch.bmm(dy, w.transpose(1, 2))  # gradient of the input
            torch.bmm(x.transpose(1, 2), dy)  # gradient of the weight
            torch.bmm(q, w)                   # the query's forward pass

    products()
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        products()
        best = min(best, time.perf_counter() - t)
    return best / chunk


def benchmark_batched_vs_loop(xs: Tensor, ys: Tensor, position: int, *, depth: int, width: int = 200,
                              epochs: int = 100, loop_prompts: int = 16, chunk: int = 16) -> dict:
    """Seconds for :func:`trained_mlp` on all ``B`` prompts at once against :func:`trained_mlp_loop` on the first
    ``loop_prompts`` prompts, scaled to ``B`` (the loop's time is linear in the number of prompts).

    Also the bounds any implementation meets on this machine: ``compute_floor_s`` is the matmul FLOPs of
    all prompts and epochs (:func:`mlp_epoch_flops`) at the FLOP/s of a large matmul (``max_speedup =
    loop_s / compute_floor_s`` the most a batched program could gain over the loop); ``memory_floor_s``
    streams every prompt's weights, gradient and Adam moments once per epoch
    (:data:`MLP_VALUES_PER_WEIGHT_EPOCH` float32 values per weight) at the bandwidth of a large copy; the
    roofline is the larger of the two, and ``over_roofline`` the measured time over it. ``products_s`` is
    the time of the program's own matrix products at their shapes (:func:`mlp_products_seconds`), the part
    no implementation of this training avoids, and ``over_products`` the measured time over it."""
    from .training import matmul_flops_per_second

    B = xs.shape[0]
    trained_mlp(xs[:2], ys[:2], position, depth=depth, width=width, epochs=2)  # warm-up: first calls are slow
    trained_mlp_loop(xs[:1], ys[:1], position, depth=depth, width=width, epochs=2)
    t = time.perf_counter()
    trained_mlp(xs, ys, position, depth=depth, width=width, epochs=epochs, chunk=chunk)
    batched = time.perf_counter() - t
    t = time.perf_counter()
    trained_mlp_loop(xs[:loop_prompts], ys[:loop_prompts], position, depth=depth, width=width, epochs=epochs)
    loop = (time.perf_counter() - t) * B / loop_prompts
    flops = mlp_epoch_flops(xs.shape[2], position, depth=depth, width=width)
    peak = matmul_flops_per_second()
    floor = B * epochs * flops / peak
    bytes_per_epoch = 4 * MLP_VALUES_PER_WEIGHT_EPOCH * mlp_params(xs.shape[2], depth=depth, width=width)
    bandwidth = memory_bandwidth()
    memory_floor = B * epochs * bytes_per_epoch / bandwidth
    roofline = max(floor, memory_floor)
    products = B * epochs * mlp_products_seconds(xs.shape[2], position, depth=depth, width=width, chunk=chunk)
    return {"prompts": B, "position": position, "width": width, "depth": depth, "epochs": epochs, "chunk": chunk,
            "batched_s": batched, "loop_s_extrapolated": loop, "loop_prompts_timed": loop_prompts,
            "speedup": loop / batched, "flops_per_prompt_epoch": flops, "matmul_flops": peak,
            "compute_floor_s": floor, "max_speedup": loop / floor, "bytes_per_prompt_epoch": bytes_per_epoch,
            "memory_bandwidth": bandwidth, "memory_floor_s": memory_floor, "roofline_s": roofline,
            "over_roofline": batched / roofline, "products_s": products, "over_products": batched / products}


def bootstrap_band(pred: Tensor, y: Tensor, *, resamples: int = 200, seed: int = 0, q: float = 0.05) -> np.ndarray:
    """``(2, k)``: the ``q/2`` and ``1 − q/2`` quantiles of the per-position R² over bootstrap resamples of the
    prompts."""
    g = torch.Generator().manual_seed(seed)
    B = pred.shape[0]
    stats = []
    for _ in range(resamples):
        idx = torch.randint(0, B, (B,), generator=g)
        stats.append(r2_across_prompts(pred[idx], y[idx]))
    return np.quantile(torch.stack(stats).numpy(), [q / 2, 1 - q / 2], axis=0)
