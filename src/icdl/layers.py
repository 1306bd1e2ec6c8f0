"""Every layer type the papers define, as torch modules with explicit weight tensors.
Used by chapters ``icgd_linear``, ``attention_passes``, ``icgd_transformer`` and ``softmax``.

A builder (in :mod:`icdl.constructions`) fills the weights in from a paper's formulas; the trained
models of :mod:`icdl.gpt_icl` and :mod:`icdl.lsa` have their own layers beside their training code.

ICDL, Appendix B.1 (the ReLU transformer of Theorem 1):

* :class:`ReLUAttention` -- Def. 7, ``h_i + (1/n) Σ_m Σ_s σ(⟨Q_m h_i, K_m h_s⟩) V_m h_s``;
* :class:`CompactReLUAttention` -- the same layer with only the nonzero rows of each head stored
  (the large heads of Theorem 1 are sparse);
* :class:`MLPLayer` -- Def. 8, ``h_i + W₂ σ(W₁ h_i)``;
* :class:`EWMLayer` -- Defs. 5–6, ``h_i + Σ_m ⟨Q_m h_i, K_m h_i⟩ V_m h_i`` (a token times itself).

ICDL, Appendix E (softmax transformers, Theorem 2):

* :class:`SoftmaxAttention` -- eq. E.1, ``H + W_O (V H) softmax((K H)ᵀ(Q H))``;
* :class:`FeedForward` -- Def. 11, ``H + W₂ ReLU(W₁ H + b₁) + b₂``;
* :class:`SoftmaxBlock` -- ``FF ∘ Attn ∘ FF``.

Hagiwara's linear self-attention with LayerNorm, batched over training runs, is
:func:`icdl.lsa.model.tf_forward`.

Shapes: a prompt is ``(B, D, T)`` (tokens are columns, as in the papers).

A note on Def. 7: its matrix form ``(V H) σ((Q H)ᵀ(K H))`` would let token ``i``
sum ``σ(⟨Q h_s, K h_i⟩)`` over ``s`` -- query and key swapped -- while its vector
form (the one every proof uses) has token ``i`` query all keys ``s``. We implement
the vector form.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor, nn

from .checks import finite

Normalization = Literal["examples", "tokens"]


def _check_sizes(**sizes) -> None:
    """Layer sizes must be positive integers (``D=6.7`` is refused, not cut to 6 or passed on to torch)."""
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _check_tokens(layer: nn.Module, H: Tensor) -> None:
    """Every layer reads a batch of prompts ``H (B, D, T)`` with its own token width ``D``."""
    if H.dim() != 3 or H.shape[1] != layer.D:
        raise ValueError(f"{type(layer).__name__} expects H of shape (B, D={layer.D}, T), got {tuple(H.shape)}")
    finite(f"the tokens H given to {type(layer).__name__}", H)


def _heads(layer: nn.Module, H: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Queries, keys and values of every head and token, ``(B, heads, ·, T)`` each."""
    return tuple(torch.einsum("mab,zbt->zmat", W, H) for W in (layer.Q, layer.K, layer.V))


class ReLUAttention(nn.Module):
    """M-head ReLU attention with the 1/n normalisation of ICDL Def. 7.

    ``normalization="examples"`` divides by ``T − 1``: for a prompt of ``n``
    examples and one query (``T = n + 1`` tokens) that is the ``n`` of the
    in-context risk, which the gradient step needs. ``"tokens"`` divides by ``T``.
    """

    def __init__(self, D: int, heads: int, *, normalization: Normalization = "examples",
                 dtype: torch.dtype = torch.float64):
        super().__init__()
        _check_sizes(D=D, heads=heads)
        if normalization not in ("examples", "tokens"):
            raise ValueError(f"normalization must be 'examples' or 'tokens', got {normalization!r}")
        _check_sizes(D=D, heads=heads)
        self.D, self.heads, self.normalization = D, heads, normalization
        self.Q = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))
        self.K = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))
        self.V = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))

    def forward(self, H: torch.Tensor) -> torch.Tensor:
        _check_tokens(self, H)
        T = H.shape[2]
        n = T - 1 if self.normalization == "examples" else T
        if n < 1:
            raise ValueError("normalization='examples' needs at least two tokens")
        q, k, v = _heads(self, H)  # (B, heads, ·, T) each
        scores = torch.einsum("zmai,zmas->zmis", q, k)  # [i, s] = <Q h_i, K h_s>
        out = torch.einsum("zmis,zmas->zai", torch.relu(scores), v)
        return H + out / n


class CompactReLUAttention(nn.Module):
    """The same map as a :class:`ReLUAttention` whose heads are sparse, computed on the nonzero parts only.

    Each head of the constructions reads two or three rows for its score and writes one row or a few: the
    dense ``(M, D, D)`` matrices are mostly zero. Per head we keep the score rows where both ``Q_m`` and
    ``K_m`` are nonzero and the output rows where ``V_m`` is nonzero (padded to the largest head), and
    scatter the heads' outputs back into their rows. Exact: every dropped term is a product with a zero."""

    def __init__(self, layer: ReLUAttention):
        super().__init__()
        Q, K, V = layer.Q.detach(), layer.K.detach(), layer.V.detach()
        M, D = layer.heads, layer.D
        score_rows = [torch.nonzero((Q[m].abs().sum(1) > 0) & (K[m].abs().sum(1) > 0)).flatten() for m in range(M)]
        out_rows = [torch.nonzero(V[m].abs().sum(1) > 0).flatten() for m in range(M)]
        rq, rv = max(1, max(len(r) for r in score_rows)), max(1, max(len(r) for r in out_rows))
        self.Q = torch.zeros(M, rq, D, dtype=Q.dtype)
        self.K = torch.zeros(M, rq, D, dtype=Q.dtype)
        self.V = torch.zeros(M, rv, D, dtype=Q.dtype)
        self.rows = torch.zeros(M, rv, dtype=torch.long)  # padded entries write zeros into row 0
        for m in range(M):
            self.Q[m, :len(score_rows[m])] = Q[m, score_rows[m]]
            self.K[m, :len(score_rows[m])] = K[m, score_rows[m]]
            self.V[m, :len(out_rows[m])] = V[m, out_rows[m]]
            self.rows[m, :len(out_rows[m])] = out_rows[m]
        self.D, self.heads, self.normalization = D, M, layer.normalization

    def forward(self, H: Tensor) -> Tensor:
        _check_tokens(self, H)
        T = H.shape[2]
        n = T - 1 if self.normalization == "examples" else T
        q, k, v = _heads(self, H)  # (B, heads, ·, T) each
        out = torch.einsum("zmis,zmas->zmai", torch.relu(torch.einsum("zmai,zmas->zmis", q, k)), v)
        full = torch.zeros_like(H).index_add_(1, self.rows.flatten(), out.reshape(H.shape[0], -1, T))
        return H + full / n


class MLPLayer(nn.Module):
    """The MLP layer of ICDL Def. 8, token by token: ``h + W₂ σ(W₁ h)``."""

    def __init__(self, D: int, hidden: int, *, dtype: torch.dtype = torch.float64):
        super().__init__()
        _check_sizes(D=D, hidden=hidden)
        self.D, self.hidden = D, hidden
        self.W1 = nn.Parameter(torch.zeros(hidden, D, dtype=dtype))
        self.W2 = nn.Parameter(torch.zeros(D, hidden, dtype=dtype))

    def forward(self, H: Tensor) -> Tensor:
        _check_tokens(self, H)
        return H + torch.einsum("ah,zht->zat", self.W2, torch.relu(torch.einsum("hb,zbt->zht", self.W1, H)))


class EWMLayer(nn.Module):
    """The element-wise multiplication layer of ICDL Defs. 5–6, token by token:
    ``h + Σ_m ⟨Q_m h, K_m h⟩ V_m h`` -- a token multiplied with itself, which attention over tokens
    and MLPs cannot do exactly (Remark 3)."""

    def __init__(self, D: int, heads: int, *, dtype: torch.dtype = torch.float64):
        super().__init__()
        _check_sizes(D=D, heads=heads)
        self.D, self.heads = D, heads
        self.Q = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))
        self.K = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))
        self.V = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))

    def forward(self, H: Tensor) -> Tensor:
        _check_tokens(self, H)
        q, k, v = _heads(self, H)  # (B, heads, ·, T) each
        return H + torch.einsum("zmt,zmat->zat", (q * k).sum(2), v)


# ---- softmax transformers (ICDL Appendix E) -------------------------------------------------


class SoftmaxAttention(nn.Module):
    """ICDL eq. E.1 with ``heads`` heads summed: ``H + Σ_h W_O,h (V_h H) softmax((K_h H)ᵀ (Q_h H))``.

    The softmax runs down each column of the ``T × T`` score matrix, whose entry ``(s, i)`` is
    ``⟨K h_s, Q h_i⟩``: token ``i`` averages the values ``V h_s`` with weights over ``s``."""

    def __init__(self, D: int, heads: int = 1, head_dim: int | None = None, dtype=torch.float32):
        super().__init__()
        _check_sizes(D=D, heads=heads)
        s = head_dim or D
        self.D, self.heads = D, heads
        self.Q = nn.Parameter(torch.randn(heads, s, D, dtype=dtype) / math.sqrt(D))
        self.K = nn.Parameter(torch.randn(heads, s, D, dtype=dtype) / math.sqrt(D))
        self.V = nn.Parameter(torch.randn(heads, s, D, dtype=dtype) / math.sqrt(D))
        self.W_O = nn.Parameter(torch.zeros(heads, D, s, dtype=dtype))

    def forward(self, H: Tensor) -> Tensor:
        _check_tokens(self, H)
        q, k, v = _heads(self, H)  # (B, heads, ·, T) each
        weights = torch.softmax(torch.einsum("zmas,zmai->zmsi", k, q), dim=2)  # over s, per column i
        return H + torch.einsum("mda,zmas,zmsi->zdi", self.W_O, v, weights)


class FeedForward(nn.Module):
    """ICDL Def. 11: ``FF(H) = H + W₂ ReLU(W₁ H + b₁ 1ᵀ) + b₂ 1ᵀ``, token by token."""

    def __init__(self, D: int, hidden: int, dtype=torch.float32):
        super().__init__()
        _check_sizes(D=D, hidden=hidden)
        self.D, self.hidden = D, hidden
        self.W1 = nn.Parameter(torch.randn(hidden, D, dtype=dtype) / math.sqrt(D))
        self.b1 = nn.Parameter(torch.zeros(hidden, dtype=dtype))
        self.W2 = nn.Parameter(torch.zeros(D, hidden, dtype=dtype))
        self.b2 = nn.Parameter(torch.zeros(D, dtype=dtype))

    def forward(self, H: Tensor) -> Tensor:
        _check_tokens(self, H)
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
