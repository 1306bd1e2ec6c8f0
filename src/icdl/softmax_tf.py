"""Softmax transformers for in-context gradient descent (ICDL sec. 4, Theorem 2, Appendix E).

ICDL proves that blocks ``FF ∘ Attn ∘ FF`` with softmax attention can do one step of in-context
gradient descent on any smooth risk -- an existence proof through a universal-approximation lemma
(Lemma 16) whose proof quantises the input, lets attention give every quantised prompt an id (a
contextual mapping, Lemma 17) and reads the answer off a table. This module holds

* the layers: :class:`SoftmaxAttention` (eq. E.1), :class:`FeedForward` (Def. 11) and
  :class:`SoftmaxBlock` ``FF ∘ Attn ∘ FF``;
* the proof's mechanism, executed: :func:`build_quantiser` (a feed-forward layer with hand-set ReLU
  weights that rounds every entry to the grid of granularity D), :func:`contextual_separation`
  (brute force over a small grid: the smallest distance between the outputs of a rank-1 softmax
  attention for distinct (context, token) pairs) and :func:`piecewise_constant_error` (the look-up
  approximation of a permutation-equivariant map against D, beside the Lipschitz bound);
* Theorem 2 measured: :func:`fit_one_step` trains a stack of softmax blocks on the one-step GD map of
  an N-layer network's in-context risk (exact targets from :mod:`icdl.networks`), and
  :func:`compose_steps` applies it L times.

Shapes follow the paper: a prompt is ``(B, D, T)``, tokens are columns.
"""

from __future__ import annotations

import itertools
import math
import time

import pandas as pd
import torch
from torch import Tensor, nn
from tqdm import tqdm

from .networks import Architecture, explicit_gradient, risk
from .profiles import ProfileSet

# ---- layers ---------------------------------------------------------------------------------------


class SoftmaxAttention(nn.Module):
    """ICDL eq. E.1 with ``heads`` heads summed: ``H + Σ_h W_O,h (V_h H) softmax((K_h H)ᵀ (Q_h H))``.

    The softmax runs down each column of the ``T × T`` score matrix, whose entry ``(s, i)`` is
    ``⟨K h_s, Q h_i⟩``: token ``i`` averages the values ``V h_s`` with weights over ``s``."""

    def __init__(self, D: int, heads: int = 1, head_dim: int | None = None, dtype=torch.float32):
        super().__init__()
        if D < 1 or heads < 1:
            raise ValueError(f"D and heads must be >= 1, got D={D}, heads={heads}")
        s = head_dim or D
        self.D, self.heads = D, heads
        self.Q = nn.Parameter(torch.randn(heads, s, D, dtype=dtype) / math.sqrt(D))
        self.K = nn.Parameter(torch.randn(heads, s, D, dtype=dtype) / math.sqrt(D))
        self.V = nn.Parameter(torch.randn(heads, s, D, dtype=dtype) / math.sqrt(D))
        self.W_O = nn.Parameter(torch.zeros(heads, D, s, dtype=dtype))

    def forward(self, H: Tensor) -> Tensor:
        if H.dim() != 3 or H.shape[1] != self.D:
            raise ValueError(f"SoftmaxAttention expects H of shape (B, D={self.D}, T), got {tuple(H.shape)}")
        q = torch.einsum("mab,zbt->zmat", self.Q, H)
        k = torch.einsum("mab,zbt->zmat", self.K, H)
        v = torch.einsum("mab,zbt->zmat", self.V, H)
        weights = torch.softmax(torch.einsum("zmas,zmai->zmsi", k, q), dim=2)  # over s, per column i
        return H + torch.einsum("mda,zmas,zmsi->zdi", self.W_O, v, weights)


class FeedForward(nn.Module):
    """ICDL Def. 11: ``FF(H) = H + W₂ ReLU(W₁ H + b₁ 1ᵀ) + b₂ 1ᵀ``, token by token."""

    def __init__(self, D: int, hidden: int, dtype=torch.float32):
        super().__init__()
        if D < 1 or hidden < 1:
            raise ValueError(f"D and hidden must be >= 1, got D={D}, hidden={hidden}")
        self.D, self.hidden = D, hidden
        self.W1 = nn.Parameter(torch.randn(hidden, D, dtype=dtype) / math.sqrt(D))
        self.b1 = nn.Parameter(torch.zeros(hidden, dtype=dtype))
        self.W2 = nn.Parameter(torch.zeros(D, hidden, dtype=dtype))
        self.b2 = nn.Parameter(torch.zeros(D, dtype=dtype))

    def forward(self, H: Tensor) -> Tensor:
        if H.dim() != 3 or H.shape[1] != self.D:
            raise ValueError(f"FeedForward expects H of shape (B, D={self.D}, T), got {tuple(H.shape)}")
        hid = torch.relu(torch.einsum("hd,zdt->zht", self.W1, H) + self.b1[:, None])
        return H + torch.einsum("dh,zht->zdt", self.W2, hid) + self.b2[:, None]


class SoftmaxBlock(nn.Module):
    """``FF ∘ Attn ∘ FF`` (Def. 11): the unit of ICDL's softmax construction."""

    def __init__(self, D: int, hidden: int, heads: int = 1, dtype=torch.float32):
        super().__init__()
        self.ff1, self.attn, self.ff2 = FeedForward(D, hidden, dtype), SoftmaxAttention(D, heads, dtype=dtype), \
            FeedForward(D, hidden, dtype)

    def forward(self, H: Tensor) -> Tensor:
        return self.ff2(self.attn(self.ff1(H)))


# ---- the proof's mechanism (Lemma 16, E.4) --------------------------------------------------------


@torch.no_grad()
def build_quantiser(D_grid: int, B: float, d: int, *, ramp: float = 0.1, dtype=torch.float64) -> FeedForward:
    """A feed-forward layer (Def. 11) with hand-set ReLU weights that maps every entry ``z ∈ [0, B]`` of a
    ``d``-row token to the nearest point of the grid ``{B/D, 2B/D, …, B}`` (granularity ``D = D_grid``).

    The output is ``h + Σ_{t=1}^{D−1} (h/r)[σ(z − m_t + r) − σ(z − m_t)] − z``, ``h = B/D``: a staircase
    with steps of height h whose ramps of width ``r = ramp · h`` end at the midpoints ``m_t = (t + ½) h``
    between grid points, plus ``z`` removed by ``σ(z) − σ(−z)``. Exact on every grid point and on every
    point farther than ``r`` from a midpoint; monotone everywhere (ICDL E.5–E.6 use the same ReLU steps;
    we centre the cells on the grid points, so the rounding error is at most h/2)."""
    if D_grid < 1 or not B > 0 or not 0 < ramp < 1:
        raise ValueError(f"need D_grid >= 1, B > 0 and 0 < ramp < 1, got {D_grid}, {B}, {ramp}")
    h = B / D_grid
    r = ramp * h
    steps = D_grid - 1
    ff = FeedForward(d, d * (2 * steps + 2), dtype=dtype)
    ff.W1.zero_()
    for row in range(d):
        base = row * (2 * steps + 2)
        for t in range(1, steps + 1):
            m = (t + 0.5) * h
            for j, shift in enumerate((r - m, -m)):
                u = base + 2 * (t - 1) + j
                ff.W1[u, row], ff.b1[u] = 1.0, shift
                ff.W2[row, u] = (h / r) * (1.0 if j == 0 else -1.0)
        u = base + 2 * steps
        ff.W1[u, row], ff.W1[u + 1, row] = 1.0, -1.0   # z = σ(z) − σ(−z), removed
        ff.W2[row, u], ff.W2[row, u + 1] = -1.0, 1.0
        ff.b2[row] = h
    return ff.requires_grad_(False)


def grid_points(D_grid: int, B: float) -> Tensor:
    return torch.arange(1, D_grid + 1, dtype=torch.float64) * (B / D_grid)


@torch.no_grad()
def contextual_separation(D_grid: int, d: int, n: int, *, B: float = 1.0, scale: float = 5.0, seed: int = 0,
                          chunk: int = 512, max_pairs: int = 200_000) -> dict:
    """Brute force over all sequences of ``n`` distinct tokens from the grid ``{B/D, …, B}^d`` (one per
    multiset: the map is permutation equivariant): apply one softmax attention head with rank-1 ``Q``,
    ``K``, ``V`` (random unit directions, scores scaled by ``scale``) and return the number of (context,
    token) pairs, the smallest distance between the outputs of two different pairs (the δ of Def. 13) and
    the smallest distance between two different grid tokens (the ε of Def. 12)."""
    g = torch.Generator().manual_seed(seed)
    pts = torch.tensor(list(itertools.product(grid_points(D_grid, B).tolist(), repeat=d)), dtype=torch.float64)
    combos = torch.tensor(list(itertools.combinations(range(len(pts)), n)), dtype=torch.long)
    if len(combos) * n > max_pairs:
        raise ValueError(f"{len(combos)} sequences × {n} tokens: too many to enumerate (max_pairs={max_pairs})")
    u = [torch.randn(d, generator=g, dtype=torch.float64) for _ in range(3)]
    u = [v / v.norm() for v in u]
    Z = pts[combos].transpose(1, 2)                               # (S, d, n)
    q = scale * torch.einsum("a,zat->zt", u[0], Z)                # rank 1: Q = scale · e u₀ᵀ
    k = torch.einsum("a,zat->zt", u[1], Z)
    v = torch.einsum("a,zat->zt", u[2], Z)
    w = torch.softmax(k[:, :, None] * q[:, None, :], dim=1)       # (S, s, i)
    out = Z + u[2][None, :, None] * torch.einsum("zs,zsi->zi", v, w)[:, None, :]  # W_O = u₂
    flat = out.transpose(1, 2).reshape(-1, d)
    sep = math.inf
    for start in range(0, len(flat), chunk):
        dist = torch.cdist(flat[start:start + chunk], flat)
        idx = torch.arange(start, min(start + chunk, len(flat)))
        dist[torch.arange(len(idx)), idx] = math.inf
        sep = min(sep, float(dist.min()))
    tok = torch.cdist(pts, pts)
    tok.fill_diagonal_(math.inf)
    return {"D": D_grid, "d": d, "n": n, "sequences": len(combos), "pairs": len(flat), "min_separation": sep,
            "token_separation": float(tok.min())}


def separation_table(grid_max: int = 16, max_pairs: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """:func:`contextual_separation` for d ∈ {1, 2}, n ∈ {2, 3} and D = 2, 4, … ≤ ``grid_max``, as far as the
    enumeration stays under ``max_pairs`` (context, token) pairs."""
    rows = []
    for d, n in ((1, 2), (1, 3), (2, 2), (2, 3)):
        D_grid = 2
        while D_grid <= grid_max:
            if math.comb(D_grid**d, n) * n > max_pairs:
                break
            if D_grid**d >= n:
                rows.append(contextual_separation(D_grid, d, n, seed=seed, max_pairs=max_pairs))
            D_grid *= 2
    return pd.DataFrame(rows)


def check_attention_formula(seed: int = 0) -> bool:
    """:class:`SoftmaxAttention` against eq. E.1 written out token by token (two heads, float64)."""
    g = torch.Generator().manual_seed(seed)
    layer = SoftmaxAttention(5, heads=2, head_dim=3, dtype=torch.float64)
    with torch.no_grad():
        for P in layer.parameters():
            P.copy_(torch.randn(P.shape, generator=g, dtype=torch.float64))
    H = torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    out = layer(H)
    ref = H.clone()
    for z in range(2):
        for i in range(4):
            for m in range(2):
                scores = torch.stack([(layer.K[m] @ H[z, :, s]) @ (layer.Q[m] @ H[z, :, i]) for s in range(4)])
                w = torch.exp(scores - scores.max())
                w = w / w.sum()
                ref[z, :, i] += layer.W_O[m] @ sum(w[s] * (layer.V[m] @ H[z, :, s]) for s in range(4))
    return bool(torch.allclose(out, ref, rtol=1e-12, atol=1e-12))


def equivariant_map(Z: Tensor) -> Tensor:
    """The continuous permutation-equivariant map the chapter approximates: token k goes to
    ``tanh(z_k) + ½ · mean_j sin(z_j)``. Lipschitz (Frobenius norm) with constant at most 1.5."""
    return torch.tanh(Z) + 0.5 * torch.sin(Z).mean(-1, keepdim=True)


EQUIVARIANT_LIPSCHITZ = 1.5


def piecewise_constant_error(D_grids=(2, 4, 8, 16, 32, 64), d: int = 2, n: int = 3, B: float = 1.0,
                             samples: int = 4000, seed: int = 0) -> pd.DataFrame:
    """The error of ``f̄ = f ∘ Q`` (Q: the quantiser, f: :func:`equivariant_map`) on random inputs from
    ``[0, B]^{d×n}``, per granularity D, beside the proof's bound ``L √(dn) B/D``. (Centring the cells halves
    the rounding error inside ``[h, B]``, but the grid has no point below ``h``, so entries near 0 still move
    by up to ``h``.) The quantiser used is the hand-set feed-forward layer itself."""
    g = torch.Generator().manual_seed(seed)
    Z = torch.rand(samples, d, n, generator=g, dtype=torch.float64) * B
    rows = []
    for D_grid in D_grids:
        Zq = build_quantiser(D_grid, B, d, ramp=1e-3)(Z)
        err = (equivariant_map(Zq) - equivariant_map(Z)).flatten(1).norm(dim=1)
        rows.append({"D": D_grid, "max_error": float(err.max()), "mean_error": float(err.mean()),
                     "bound": EQUIVARIANT_LIPSCHITZ * math.sqrt(d * n) * B / D_grid,
                     "cells": D_grid ** (d * n)})
    return pd.DataFrame(rows)


# ---- Theorem 2, measured: softmax blocks fitted to one GD step --------------------------------------

PROFILES = ProfileSet(
    "09_softmax",
    profiles={"quick": {"N": 2, "K": 2, "d": 2, "n": 8, "eta": 2.0, "B_w": 1.0, "widths": "16,64", "steps": 600,
                        "batch": 256, "lr": 3e-3, "L": 5, "test_prompts": 256, "grid_max": 16, "seed": 0},
              "reference": {"N": 2, "K": 2, "d": 2, "n": 8, "eta": 2.0, "B_w": 1.0, "widths": "16,32,64,128",
                            "steps": 4000, "batch": 512, "lr": 2e-3, "L": 10, "test_prompts": 1024, "grid_max": 64,
                            "seed": 0}},
    ranges={"N": (2, 4), "K": (1, 4), "d": (1, 3), "n": (2, 64), "eta": (1e-3, 5.0), "B_w": (0.1, 5.0),
            "steps": (10, 10**6), "batch": (8, 4096), "lr": (1e-5, 0.1), "L": (1, 50), "test_prompts": (8, 10**5),
            "grid_max": (2, 256), "seed": (0, 2**31 - 1)},
)


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


def fit_one_step(cfg, hidden: int, *, progress: bool = False) -> dict:
    """Train a :class:`FittedGDStep` of the given width on fresh random problems (Adam, MSE on the new
    ``w`` rows of every token). Returns the model, its loss history and its held-out one-step error."""
    arch = Architecture(cfg["N"], cfg["K"], cfg["d"], cfg["d"])
    layout = GDStepLayout(arch)
    g = torch.Generator().manual_seed(cfg["seed"] + hidden)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg["seed"] + hidden)
        model = FittedGDStep(layout, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg["steps"])
    hist = []
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
        if (step + 1) % max(1, cfg["steps"] // 50) == 0:
            hist.append({"step": step + 1, "loss": float(loss.detach())})
    return {"model": model.eval(), "history": pd.DataFrame(hist), "seconds": time.perf_counter() - t0,
            "params": sum(p.numel() for p in model.parameters()), **one_step_error(model, cfg)}


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
    (chapter 7's :class:`~icdl.constructions.ICGDTransformer`, sums of ``H`` ReLUs): per step the mean
    distance to projected GD and the mean risk."""
    from . import deep_icgd

    arch = Architecture(cfg["N"], cfg["K"], cfg["d"], cfg["d"])
    g = torch.Generator().manual_seed(20_000 + cfg["seed"])
    x, y, _ = sample_gd_problems(arch, prompts, cfg["n"], B_w=cfg["B_w"], generator=g)
    task = deep_icgd.Task(arch, "sigmoid", "squared", x, y, torch.zeros(prompts, arch.d_y, dtype=torch.float64),
                          torch.zeros(prompts, arch.size, dtype=torch.float64), 1.0, float(y.abs().max()))
    model, _, _ = deep_icgd.build_model(task, H, eta=cfg["eta"], steps=cfg["L"], B_w=cfg["B_w"])
    outs = model(deep_icgd.prompt_tokens(model.layout, task))
    w_gd = torch.zeros(prompts, arch.size, dtype=torch.float64)
    w_hat = [w_gd] + [model.weights(o) for o in outs]
    rows = []
    for l in range(cfg["L"] + 1):
        rows.append({"step": l, "distance": float((w_hat[l] - w_gd).norm(dim=1).mean()),
                     "risk_fitted": float(sum(risk(arch, w_hat[l][b], x[b, :-1], y[b]) for b in range(prompts)) / prompts),
                     "risk_gd": float(sum(risk(arch, w_gd[b], x[b, :-1], y[b]) for b in range(prompts)) / prompts)})
        w_gd = batched_gd_step(arch, x, y, w_gd, eta=cfg["eta"], B_w=cfg["B_w"])
    return pd.DataFrame(rows)


def widths(cfg) -> list[int]:
    try:
        ws = [int(v) for v in str(cfg["widths"]).split(",")]
    except ValueError:
        raise ValueError(f"widths must be comma-separated integers, got {cfg['widths']!r}") from None
    if min(ws) < 1:
        raise ValueError(f"widths must be >= 1, got {ws}")
    return ws


def sizes_comparison(arch: Architecture, steps: int, hidden: int) -> pd.DataFrame:
    """Layers, width and heads of the two routes for L steps: the ReLU construction of Theorem 1 and
    the softmax blocks fitted here (4 layers per step, as Theorem 2 counts)."""
    from .constructions import ICGDLayout

    N, K = arch.N, arch.K
    return pd.DataFrame([
        {"route": "ReLU construction (Theorem 1)", "layers": (2 * N + 4) * steps, "width D": ICGDLayout(arch).D,
         "heads per layer": "up to ((N−1)K + d)·H (sums of H ReLUs)", "weights": "set by formulas"},
        {"route": "softmax blocks (Theorem 2, fitted)", "layers": 4 * steps, "width D": GDStepLayout(arch).D,
         "heads per layer": "2 (ours)", "weights": f"trained, FF hidden {hidden}"},
    ])



def fit_study(cfg, *, progress: bool = False) -> dict:
    """Every width of the profile: the one-step table and the composed paths (with the ReLU construction)."""
    fits = {h: fit_one_step(cfg, h, progress=progress) for h in widths(cfg)}
    one = pd.DataFrame([{"hidden": h, "params": f["params"], "mean_error": f["mean_error"],
                         "max_error": f["max_error"], "mean_step": f["mean_step"], "seconds": f["seconds"]}
                        for h, f in fits.items()])
    one["relative"] = one["mean_error"] / one["mean_step"]
    paths = pd.concat([compose_steps(f["model"], cfg).assign(route=f"softmax, fitted, hidden {h}")
                       for h, f in fits.items()]
                      + [relu_construction_path(cfg).assign(route="ReLU construction, H = 256")], ignore_index=True)
    return {"fits": fits, "one_step": one, "paths": paths}


def main(argv: list[str] | None = None) -> int:
    """``python -m icdl.softmax_tf --profile reference``: the fitted-step study, written with provenance to
    ``results/09_softmax/fits.<profile>.json``."""
    import argparse

    from .results import save_profile_result

    p = argparse.ArgumentParser(description="Softmax layers fitted to one in-context GD step (ICDL Theorem 2)")
    p.add_argument("--profile", default="reference", choices=sorted(PROFILES.profiles))
    args = p.parse_args(argv)
    cfg = PROFILES.resolve(args.profile)
    t = time.perf_counter()
    res = fit_study(cfg, progress=True)
    data = {"one_step": res["one_step"].to_dict(orient="list"), "paths": res["paths"].to_dict(orient="list"),
            "settings": dict(cfg)}
    path = save_profile_result("09_softmax", "fits", data, module="icdl.softmax_tf", profile=args.profile,
                               seed=cfg["seed"], started=t)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
