"""One ReLU-attention layer that is one gradient step of linear regression (ICDL Problem 1 with a
linear "network"; chapter ``icgd_linear``)."""

from __future__ import annotations

import torch

from ..layers import ReLUAttention
from ..prompts import PromptLayout


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
