"""The mechanism of ICDL Theorem 2's proof (Appendix E), checked piece by piece for chapter ``softmax``; the
theorem itself, measured on fitted blocks, is :mod:`icdl.studies.softmax`.

================================  =====================================================================
:func:`check_attention_formula`   the softmax attention layer against eq. E.1 written token by token
:func:`separation_table`          the contextual mapping of Lemma 17, by brute force over small grids
:func:`piecewise_constant_error`  the look-up approximation ``f ∘ Q`` of a permutation-equivariant map
                                  (:func:`equivariant_map`) against the granularity D, beside the bound
================================  =====================================================================
"""

from __future__ import annotations

import math

import pandas as pd
import torch
from torch import Tensor

from ..constructions.softmax import build_quantiser, contextual_separation
from ..layers import SoftmaxAttention


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
