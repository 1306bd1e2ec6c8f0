"""ICDL Lemmas 2–5: the first 2N + 2 layers of a block of the in-context GD transformer
(chapter ``attention_passes``).

* :class:`ICGDLayout` -- where each quantity lives in a token (the rows of ``H``);
* Lemma 2, :func:`build_forward_layers` -- N ReLU-attention layers write ``p̂_i(j)`` into every token;
* Lemma 3, :func:`build_derivative_layer` -- one attention layer writes ``r̂'_i(j)``;
* Lemma 4, :func:`build_loss_derivative_mlp` -- one MLP writes ``ĝ_i ≈ u(p_i(N), y_i)``;
* Lemma 5, :func:`build_backward_layers` -- N element-wise-multiplication layers write ``ŝ_i(j)``.

Their error bounds are in :mod:`icdl.constructions.bounds`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..layers import EWMLayer, MLPLayer, ReLUAttention


class ICGDLayout:
    """Named row slots of a token for ICGD on an N-layer network (ICDL eq. 3.11 and Lemmas 2–5).

    ``[x; y; w; p̂(1); …; p̂(N); r̂'(0); …; r̂'(N−1); g; ŝ(1); …; ŝ(N); 1; t]`` -- the prompt of
    eq. 2.1 with its zero block split into the slots the layers write. ``slot(name, j)`` returns
    the rows of a slot as a ``slice``; ``p(0)`` is the ``x`` slot.
    """

    def __init__(self, arch):
        self.arch = arch
        widths = arch.widths  # K_0 = d_x, K_1..K_{N-1} = K, K_N = d_y
        sizes: list[tuple[tuple[str, int], int]] = [(("x", 0), arch.d_x), (("y", 0), arch.d_y),
                                                     (("w", 0), arch.size)]
        sizes += [(("p", j), widths[j]) for j in range(1, arch.N + 1)]
        sizes += [(("r'", j), widths[j + 1]) for j in range(arch.N)]
        sizes += [(("g", 0), arch.d_y)]
        sizes += [(("s", j), widths[j]) for j in range(1, arch.N + 1)]
        self._slots: dict[tuple[str, int], slice] = {}
        row = 0
        for key, size in sizes:
            self._slots[key] = slice(row, row + size)
            row += size
        self.one, self.t = row, row + 1
        self.D = row + 2

    def slot(self, name: str, j: int = 0) -> slice:
        if name == "p" and j == 0:
            return self._slots[("x", 0)]
        try:
            return self._slots[(name, j)]
        except KeyError:
            raise KeyError(f"no slot {name}({j}); slots: {sorted(self._slots)}") from None

    def w_row(self, j: int, k: int) -> slice:
        """Rows of ``v_{j,k}`` inside the ``w`` slot (eq. 3.2 order)."""
        D = self.arch.counts
        cols = self.arch.shapes[j - 1][1]
        start = self.slot("w").start + D[j - 1] + k * cols
        return slice(start, start + cols)

    def prompt(self, x: Tensor, y: Tensor, w: Tensor) -> Tensor:
        """Tokens ``(B, D, n+1)`` from examples ``x (B, n+1, d_x)`` (the last one the query),
        ``y (B, n, d_y)`` and weights ``w (B, D_N)`` copied into every token."""
        B, T = x.shape[0], x.shape[1]
        H = torch.zeros(B, self.D, T, dtype=x.dtype)
        H[:, self.slot("x"), :] = x.transpose(1, 2)
        H[:, self.slot("y"), :T - 1] = y.transpose(1, 2)
        H[:, self.slot("w"), :] = w[:, :, None]
        H[:, self.one, :] = 1.0
        H[:, self.t, :T - 1] = 1.0
        return H


def _ridge_heads(layer: ReLUAttention, first_head: int, layout: ICGDLayout, j: int, k: int, src: slice,
                 dst_row: int, r_sum) -> int:
    """Fill heads ``first_head …`` of ``layer`` so that token i receives ``f̂(v_{j,k}ᵀ h_i[src])`` in row
    ``dst_row``, with ``f̂(z) = Σ_m c_m σ(a_m[1] z + a_m[2])`` (ICDL eq. C.7). Returns the next free head.

    Query: ``a_m[1] h_i[src]`` and ``a_m[2]`` (from the constant 1); key: ``v_{j,k}`` and 1 from the copy of
    ``w`` every token holds; value: ``c_m t_s`` into ``dst_row``. The proof's value reads the constant 1
    of token s; summed over all n + 1 tokens with the 1/n of Def. 7 that gives (n+1)/n times the intended
    term, so we read ``t_s`` and exactly the n examples contribute."""
    vk = layout.w_row(j, k)
    width = src.stop - src.start
    for m in range(r_sum.H):
        h = first_head + m
        for q in range(width):
            layer.Q[h, q, src.start + q] = r_sum.A[m, 0]
            layer.K[h, q, vk.start + q] = 1.0
        layer.Q[h, width, layout.one] = r_sum.A[m, 1]
        layer.K[h, width, layout.one] = 1.0
        layer.V[h, dst_row, layout.t] = r_sum.c[m]
    return first_head + r_sum.H


@torch.no_grad()
def build_forward_layers(layout: ICGDLayout, r_sum) -> list[ReLUAttention]:
    """ICDL Lemma 2: N ReLU-attention layers; layer j writes p̂(j)[k] = r̂(v_{j,k}ᵀ p̂(j−1)) into its slot,
    where ``r̂`` is a one-variable :class:`~icdl.relu_sums.ReluSum` for the activation (one head per
    unit k and term m, eq. C.7; see :func:`_ridge_heads`)."""
    arch = layout.arch
    if r_sum.k != 1:
        raise ValueError("Lemma 2 needs a one-variable sum of ReLUs for r")
    layers = []
    for j in range(1, arch.N + 1):
        layer = ReLUAttention(layout.D, heads=arch.widths[j] * r_sum.H, dtype=r_sum.A.dtype)
        head = 0
        for k in range(arch.widths[j]):
            head = _ridge_heads(layer, head, layout, j, k, layout.slot("p", j - 1), layout.slot("p", j).start + k,
                                r_sum)
        layers.append(layer.requires_grad_(False))
    return layers


@torch.no_grad()
def build_derivative_layer(layout: ICGDLayout, r_prime_sum) -> ReLUAttention:
    """ICDL Lemma 3: one ReLU-attention layer writing r̂'(j−1)[k] = r̂'(v_{j,k}ᵀ p̂(j−1)) for every layer j and
    unit k (all N slots r'(0) … r'(N−1) at once), from the p̂ written by Lemma 2's layers."""
    arch = layout.arch
    if r_prime_sum.k != 1:
        raise ValueError("Lemma 3 needs a one-variable sum of ReLUs for r'")
    layer = ReLUAttention(layout.D, heads=sum(arch.widths[1:]) * r_prime_sum.H, dtype=r_prime_sum.A.dtype)
    head = 0
    for j in range(1, arch.N + 1):
        for k in range(arch.widths[j]):
            head = _ridge_heads(layer, head, layout, j, k, layout.slot("p", j - 1),
                                layout.slot("r'", j - 1).start + k, r_prime_sum)
    return layer.requires_grad_(False)


@torch.no_grad()
def build_loss_derivative_mlp(layout: ICGDLayout, u_sum) -> MLPLayer:
    """ICDL Lemma 4: one MLP layer writing g[k] = û(p̂(N)[k], y[k]) for every output coordinate k,
    where ``û(t, y) = Σ_m c_m σ(a_m[1] t + a_m[2] y + a_m[3])`` is a two-variable sum of ReLUs.
    One hidden unit per (k, m): ``W₁`` reads ``p̂(N)[k]``, ``y[k]`` and the constant 1 with weights
    ``a_m``; ``W₂`` writes ``c_m`` into ``g[k]``. (For the query token, whose y is 0, g is not used.)"""
    arch = layout.arch
    if u_sum.k != 2:
        raise ValueError("Lemma 4 needs a two-variable sum of ReLUs for u(t, y)")
    mlp = MLPLayer(layout.D, arch.d_y * u_sum.H, dtype=u_sum.A.dtype)
    t_slot, y_slot, g_slot = layout.slot("p", arch.N), layout.slot("y"), layout.slot("g")
    for k in range(arch.d_y):
        for m in range(u_sum.H):
            h = k * u_sum.H + m
            mlp.W1[h, t_slot.start + k] = u_sum.A[m, 0]
            mlp.W1[h, y_slot.start + k] = u_sum.A[m, 1]
            mlp.W1[h, layout.one] = u_sum.A[m, 2]
            mlp.W2[g_slot.start + k, h] = u_sum.c[m]
    return mlp.requires_grad_(False)


@torch.no_grad()
def build_backward_layers(layout: ICGDLayout) -> list[EWMLayer]:
    """ICDL Lemma 5: N element-wise multiplication layers for the backward recursion, in the order
    they run: ŝ(N) = r̂'(N−1) ⊙ g, then ŝ(j) = r̂'(j−1) ⊙ (V_{j+1}ᵀ ŝ(j+1)) for j = N−1 … 1.

    For ŝ(j)[k] the layer has one head per q: ``⟨Q h, K h⟩ = r̂'(j−1)[k] · ŝ(j+1)[q]`` (Q and K each
    pick one entry) and ``V h = v_{j+1,q}[k]`` taken from the copy of w, written into ŝ(j)[k]; for
    ŝ(N) one head per k multiplies r̂'(N−1)[k] by g[k] and V reads the constant 1. Every matrix is a
    0/1 selector, so the layers add no error of their own."""
    arch = layout.arch
    dtype = torch.float64
    layers = []
    # j = N
    dN = arch.widths[arch.N]
    layer = EWMLayer(layout.D, heads=dN, dtype=dtype)
    for k in range(dN):
        layer.Q[k, 0, layout.slot("r'", arch.N - 1).start + k] = 1.0
        layer.K[k, 0, layout.slot("g").start + k] = 1.0
        layer.V[k, layout.slot("s", arch.N).start + k, layout.one] = 1.0
    layers.append(layer.requires_grad_(False))
    for j in range(arch.N - 1, 0, -1):
        width, nxt = arch.widths[j], arch.widths[j + 1]
        layer = EWMLayer(layout.D, heads=width * nxt, dtype=dtype)
        for k in range(width):
            for q in range(nxt):
                h = k * nxt + q
                layer.Q[h, 0, layout.slot("r'", j - 1).start + k] = 1.0
                layer.K[h, 0, layout.slot("s", j + 1).start + q] = 1.0
                layer.V[h, layout.slot("s", j).start + k, layout.w_row(j + 1, q).start + k] = 1.0
        layers.append(layer.requires_grad_(False))
    return layers
