"""ICDL Theorem 1: the (2N + 4)L-layer ReLU transformer that runs L steps of in-context GD
(chapter ``icgd_transformer``).

* :func:`build_gradient_step_layer` -- the attention layer that sums ``[I ⊗ p̂_i(j−1)] ŝ_i(j)`` over the
  examples and forms ``w − η ∇L_n(w)``;
* :func:`build_projection_mlp` -- ``Proj_W`` onto the box ``‖w‖_∞ ≤ B_w`` as an MLP
  (:func:`icdl.networks.project_box` is the same map in closed form);
* :class:`ICGDTransformer` -- L blocks ``TF^{N+2} ∘ EWML^N ∘ TF^2`` built from the layers of
  :mod:`icdl.constructions.lemmas`;
* :class:`Sums`, :func:`fit_sums` -- the sums of ReLUs (:mod:`icdl.relu_sums`) that stand for r, r' and u.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .. import relu_sums as rs
from ..layers import CompactReLUAttention, MLPLayer, ReLUAttention
from ..networks import Architecture
from .lemmas import (
    ICGDLayout,
    build_backward_layers,
    build_derivative_layer,
    build_forward_layers,
    build_loss_derivative_mlp,
)

SMOOTH = ("sigmoid", "tanh")  # activations whose r and r' have sums of ReLUs in icdl.relu_sums


@dataclass
class Sums:
    r: rs.ReluSum
    r_prime: rs.ReluSum
    u: rs.ReluSum
    eps_r: float
    eps_rp: float
    eps_l: float
    R: float


def fit_sums(activation: str, loss: str, R: float, H: int) -> Sums:
    """Sums of H ReLUs for r, r' (on [−R, R]) and u (on [−R, R]²) with their measured sup errors."""
    act_target = rs.TARGETS[activation]
    r, rp = rs.fit(activation, R, H), rs.fit(activation + "'", R, H)
    u_name = rs.U_TARGETS[loss]
    u = rs.fit(u_name, R, H)
    return Sums(r, rp, u, rs.sup_error(r, act_target, R), rs.sup_error(rp, rs.TARGETS[activation + "'"], R),
                rs.sup_error(u, rs.TARGETS[u_name], R), R)


def preactivation_range(arch: Architecture, B_x: float, B_w: float) -> float:
    """A bound on ``|v_{j,k}ᵀ p(j−1)|`` over the box ``‖w‖_∞ ≤ B_w``: ``B_w ‖p‖₁`` with ``‖x‖₁ ≤ √d B_x``
    and ``‖p(j)‖₁ ≤ K`` for an activation bounded by 1."""
    return B_w * max(math.sqrt(arch.d_x) * B_x, max(arch.widths[1:-1], default=0), 1.0)


def scratch_rows(layout: ICGDLayout) -> slice:
    """The rows a block writes and must leave empty again: p̂(1) … ŝ(N), between ``w`` and the constant 1."""
    return slice(layout.slot("w").stop, layout.one)


@torch.no_grad()
def build_gradient_step_layer(layout: ICGDLayout, eta: float, *, gate: float) -> ReLUAttention:
    """The block's layer 2N + 3 (ICDL proof of Theorem 1, eq. C.16): one ReLU-attention layer that adds
    ``−η ∇̂L_n(w)``, ``∇̂L_n = 1/(2n) Σ_{s ≤ n} [Â_s(1); …; Â_s(N)]``, ``Â_s(j) = [I ⊗ p̂_s(j−1)] ŝ_s(j)``, to
    the copy of ``w`` in every token.

    Two heads per (j, k): query ``±1``, key ``ŝ_s(j)[k]``, value ``∓(η/2) p̂_s(j−1)`` written into the rows of
    ``v_{j,k}``; since ``σ(e) − σ(−e) = e`` the pair adds ``−(η/2) ŝ_s(j)[k] p̂_s(j−1)``, and Def. 7's ``1/n``
    makes the average over examples. The query token must not contribute -- its ``ĝ`` is ``û(p̂(N), 0)``,
    not zero -- so each score also carries ``gate · (t_s − 1)``: 0 for an example, ``−gate`` for the query,
    which switches the query's two heads off whenever ``|ŝ_query(j)[k]| ≤ gate`` (the proof instead sums
    over all n + 1 tokens, including that term)."""
    if not eta > 0:
        raise ValueError(f"eta must be > 0, got {eta}")
    if not gate > 0:
        raise ValueError(f"gate must be > 0, got {gate}")
    arch = layout.arch
    units = sum(arch.widths[1:])
    layer = ReLUAttention(layout.D, heads=2 * units, dtype=torch.float64)
    head = 0
    for j in range(1, arch.N + 1):
        p_prev = layout.slot("p", j - 1)
        for k in range(arch.widths[j]):
            v_rows = layout.w_row(j, k)
            for sign in (1.0, -1.0):
                layer.Q[head, 0, layout.one] = sign
                layer.K[head, 0, layout.slot("s", j).start + k] = 1.0
                layer.Q[head, 1, layout.one] = gate
                layer.K[head, 1, layout.t] = 1.0
                layer.K[head, 1, layout.one] = -1.0
                for q in range(p_prev.stop - p_prev.start):
                    layer.V[head, v_rows.start + q, p_prev.start + q] = -sign * eta / 2
                head += 1
    return layer.requires_grad_(False)


@torch.no_grad()
def build_projection_mlp(layout: ICGDLayout, B_w: float) -> MLPLayer:
    """The block's last layer (2N + 4): an MLP that projects ``w`` onto the box ``W = {‖w‖_∞ ≤ B_w}`` and
    empties the scratch rows, leaving ``[x; y; Proj_W(w); 0; 1; t]`` (the form Theorem 1 states).

    Both are exact with ReLUs: ``clip(z) = z − σ(z − B_w) + σ(−z − B_w)`` and ``z − σ(z) + σ(−z) = 0``.
    The box is convex and closed and lies inside the set ``{‖v_{j,k}‖₂ ≤ B_w √K_{j−1}}`` that Theorem 1
    asks of ``W``; a Euclidean ball per row would need a division, which no ReLU MLP computes exactly."""
    if not B_w > 0:
        raise ValueError(f"B_w must be > 0, got {B_w}")
    w, scratch = layout.slot("w"), scratch_rows(layout)
    n_w, n_s = w.stop - w.start, scratch.stop - scratch.start
    mlp = MLPLayer(layout.D, 2 * (n_w + n_s), dtype=torch.float64)
    for i in range(n_w):
        row = w.start + i
        mlp.W1[2 * i, row], mlp.W1[2 * i, layout.one] = 1.0, -B_w      # σ(z − B_w)
        mlp.W1[2 * i + 1, row], mlp.W1[2 * i + 1, layout.one] = -1.0, -B_w  # σ(−z − B_w)
        mlp.W2[row, 2 * i], mlp.W2[row, 2 * i + 1] = -1.0, 1.0
    for i in range(n_s):
        row, h = scratch.start + i, 2 * (n_w + i)
        mlp.W1[h, row], mlp.W1[h + 1, row] = 1.0, -1.0
        mlp.W2[row, h], mlp.W2[row, h + 1] = -1.0, 1.0
    return mlp.requires_grad_(False)



class ICGDTransformer(nn.Module):
    """ICDL Theorem 1's ``NN_θ``: L blocks ``TF^{N+2} ∘ EWML^N ∘ TF^2``, (2N + 4) L layers, that run L steps
    of projected gradient descent on the in-context risk of an N-layer network inside the forward pass.

    One block, in the order it runs: N attention layers (Lemma 2, forward pass p̂), one attention layer
    (Lemma 3, r̂'), one MLP (Lemma 4, g ≈ u), N multiplication layers (Lemma 5, ŝ), one attention layer
    (the gradient step, :func:`build_gradient_step_layer`) and one MLP (Proj_W and clean-up,
    :func:`build_projection_mlp`). All L blocks have the same weights. ``compact=True`` evaluates the
    attention layers through :class:`CompactReLUAttention` (same numbers, a fraction of the work)."""

    def __init__(self, layout: ICGDLayout, r_sum, r_prime_sum, u_sum, *, eta: float, steps: int, B_w: float,
                 gate: float, compact: bool = True):
        super().__init__()
        if steps < 1:
            raise ValueError(f"steps (L) must be >= 1, got {steps}")
        self.layout, self.steps, self.eta, self.B_w = layout, steps, eta, B_w
        self.forward_layers = build_forward_layers(layout, r_sum)
        dense = [*self.forward_layers, build_derivative_layer(layout, r_prime_sum),
                 build_loss_derivative_mlp(layout, u_sum), *build_backward_layers(layout),
                 build_gradient_step_layer(layout, eta, gate=gate), build_projection_mlp(layout, B_w)]
        self.block = nn.ModuleList(dense)
        self._run = [CompactReLUAttention(m) if compact and isinstance(m, ReLUAttention) else m for m in dense]
        self._readout = [CompactReLUAttention(m) if compact else m for m in self.forward_layers]

    @property
    def layers(self) -> int:
        return len(self.block) * self.steps

    def check_prompt(self, H: Tensor) -> None:
        """Reject what is not a prompt of eq. 2.1 in this layout: shape, the constant row, ``t`` marking
        exactly the last token as the query, the query's ``y`` zero, equal ``w`` in all tokens, empty scratch."""
        lo = self.layout
        if H.dim() != 3 or H.shape[1] != lo.D or H.shape[2] < 2:
            raise ValueError(f"prompt must have shape (B, D={lo.D}, T >= 2) for this layout, got {tuple(H.shape)}")
        T = H.shape[2]
        t_expected = torch.ones(T, dtype=H.dtype)
        t_expected[-1] = 0
        if not torch.equal(H[:, lo.one, :], torch.ones_like(H[:, lo.one, :])):
            raise ValueError(f"row {lo.one} (the constant 1) must be 1 in every token")
        if not torch.equal(H[:, lo.t, :], t_expected.expand(H.shape[0], T)):
            raise ValueError(f"row {lo.t} (t) must be 1 for the n examples and 0 for the last token, the query")
        if H[:, lo.slot("y"), -1].abs().max() > 0:
            raise ValueError("the query's y must be 0 (eq. 2.1)")
        w = H[:, lo.slot("w"), :]
        if (w - w[:, :, :1]).abs().max() > 0:
            raise ValueError("every token must hold the same w")
        if H[:, scratch_rows(lo), :].abs().max() > 0:
            raise ValueError("the scratch rows (p̂, r̂', g, ŝ) must be 0 on input")

    def forward(self, H: Tensor, *, check: bool = True) -> list[Tensor]:
        """The outputs after each block: ``[H^(1), …, H^(L)]`` (the layer-(2N+4)l outputs of Theorem 1)."""
        if check:
            self.check_prompt(H)
        outs = []
        with torch.no_grad():
            for _ in range(self.steps):
                for layer in self._run:
                    H = layer(H)
                outs.append(H)
        return outs

    def weights(self, H: Tensor) -> Tensor:
        """``ŵ`` as held by the query token, ``(B, D_N)``."""
        return H[:, self.layout.slot("w"), -1]

    def predict(self, H: Tensor) -> Tensor:
        """The network's prediction for the query under the ``w`` in the tokens, read from one more pass of
        Lemma 2's forward layers: ``p̂_{n+1}(N)``, ``(B, d_y)``. (N layers beyond the (2N + 4) L of the theorem.)"""
        with torch.no_grad():
            for layer in self._readout:
                H = layer(H)
        return H[:, self.layout.slot("p", self.layout.arch.N), -1]

    def heads(self) -> list[int]:
        """Heads per layer of one block (0 for an MLP)."""
        return [getattr(m, "heads", 0) for m in self.block]
