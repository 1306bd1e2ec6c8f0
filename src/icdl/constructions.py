"""Transformer layers whose weights are set by formulas, not trained.

ICDL builds its in-context gradient-descent transformer from three layer types
(Appendix B.1). This module holds them as torch modules, with explicit weight
tensors a builder fills in:

* :class:`ReLUAttention` -- Def. 7, ``h_i + (1/n) Σ_m Σ_s σ(⟨Q_m h_i, K_m h_s⟩) V_m h_s``.

and the builders of the constructions the chapters check. Shapes: a prompt is
``(B, D, T)`` (tokens are columns, as in the paper).

A note on Def. 7: its matrix form ``(V H) σ((Q H)ᵀ(K H))`` would let token ``i``
sum ``σ(⟨Q h_s, K h_i⟩)`` over ``s`` -- query and key swapped -- while its vector
form (the one every proof uses) has token ``i`` query all keys ``s``. We implement
the vector form.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from .prompts import PromptLayout

Normalization = Literal["examples", "tokens"]


class ReLUAttention(nn.Module):
    """M-head ReLU attention with the 1/n normalisation of ICDL Def. 7.

    ``normalization="examples"`` divides by ``T − 1``: for a prompt of ``n``
    examples and one query (``T = n + 1`` tokens) that is the ``n`` of the
    in-context risk, which the gradient step needs. ``"tokens"`` divides by ``T``.
    """

    def __init__(self, D: int, heads: int, *, normalization: Normalization = "examples",
                 dtype: torch.dtype = torch.float64):
        super().__init__()
        if normalization not in ("examples", "tokens"):
            raise ValueError(f"normalization must be 'examples' or 'tokens', got {normalization!r}")
        if D < 1 or heads < 1:
            raise ValueError(f"D and heads must be >= 1, got D={D}, heads={heads}")
        self.D, self.heads, self.normalization = D, heads, normalization
        self.Q = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))
        self.K = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))
        self.V = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))

    def forward(self, H: torch.Tensor) -> torch.Tensor:
        if H.dim() != 3 or H.shape[1] != self.D:
            raise ValueError(f"ReLUAttention expects H of shape (B, D={self.D}, T), got {tuple(H.shape)}")
        T = H.shape[2]
        n = T - 1 if self.normalization == "examples" else T
        if n < 1:
            raise ValueError("normalization='examples' needs at least two tokens")
        q = torch.einsum("mab,zbt->zmat", self.Q, H)  # (B, M, D, T)
        k = torch.einsum("mab,zbt->zmat", self.K, H)
        v = torch.einsum("mab,zbt->zmat", self.V, H)
        scores = torch.einsum("zmai,zmas->zmis", q, k)  # [i, s] = <Q h_i, K h_s>
        out = torch.einsum("zmis,zmas->zai", torch.relu(scores), v)
        return H + out / n


def linear_gd_layout(d: int) -> tuple[PromptLayout, slice]:
    """Token layout for in-context linear regression: ``D = 2d + 3``, ``w`` in the scratch rows."""
    layout = PromptLayout(d, 2 * d + 3)
    return layout, layout.scratch


@torch.no_grad()
def build_linear_gd_layer(d: int, eta: float, *, bound: float = 1e4,
                          dtype: torch.dtype = torch.float64) -> ReLUAttention:
    """One ReLU-attention layer (2 heads) doing one GD step of in-context linear regression.

    On a prompt with ``w`` in the scratch rows of every token, the layer writes
    ``w − η ∇L_n(w)``, ``L_n(w) = 1/(2n) Σ_{i≤n} (wᵀx_i − y_i)²``, into every token.

    Head ± scores ``±(wᵀx_s − y_s) + bound · (t_s − 1)`` and adds ``∓η x_s``; since
    ``σ(e) − σ(−e) = e`` the pair contributes ``−η e_s x_s`` for an example and
    nothing for the query provided ``|wᵀx_query| ≤ bound``. The term ``t_s − 1`` is
    formed in the key (it is exactly 0 for examples), so examples are exact to
    round-off whatever the bound.
    """
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    if not eta > 0:
        raise ValueError(f"eta must be > 0, got {eta}")
    if not bound > 0:
        raise ValueError(f"bound must be > 0, got {bound}")
    layout, w = linear_gd_layout(d)
    layer = ReLUAttention(layout.D, heads=2, dtype=dtype)
    Q, K, V = layer.Q, layer.K, layer.V
    for m, sign in enumerate((1.0, -1.0)):
        for k in range(d):
            Q[m, k, w.start + k] = sign          # query: ±w
            K[m, k, layout.x.start + k] = 1.0    # key: x_s
            V[m, w.start + k, layout.x.start + k] = -sign * eta  # value: ∓η x_s into w
        Q[m, d, layout.one] = -sign              # query: ∓1 ...
        K[m, d, layout.y] = 1.0                  # ... times y_s
        Q[m, d + 1, layout.one] = bound          # query: bound ...
        K[m, d + 1, layout.t] = 1.0              # ... times (t_s − 1)
        K[m, d + 1, layout.one] = -1.0
    return layer.requires_grad_(False)
