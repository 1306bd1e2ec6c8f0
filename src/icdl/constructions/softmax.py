"""ICDL Lemmas 16–17 (Appendix E.4) executed: the pieces of the universal-approximation proof that
can be built (chapter ``softmax``).

* :func:`build_quantiser` -- a feed-forward layer with hand-set ReLU weights that rounds every entry of
  ``[0, B]`` to the grid of granularity D (eqs. E.5–E.6);
* :func:`contextual_separation` -- brute force over a small grid: the smallest distance between the outputs
  of a rank-1 softmax attention head for distinct (context, token) pairs (Lemma 17).
"""

from __future__ import annotations

import itertools
import math

import torch
from torch import Tensor

from ..layers import FeedForward


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
