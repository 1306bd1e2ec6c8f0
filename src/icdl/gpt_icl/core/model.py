"""A GPT-2-style transformer for in-context regression, in plain torch (ICDL sec. 5, Appendix F).
Trained in chapter ``gpt_icl``.

The layout follows Garg et al. (2022), the backbone ICDL uses: a prompt ``x_1, y_1, …, x_k, y_k`` becomes
``2k`` tokens -- each ``x_i`` a token, each scalar ``y_i`` a token ``[y_i, 0, …, 0]`` padded to the input
size -- mapped into the model width by one linear read-in, with learned absolute position embeddings.
Pre-LayerNorm blocks with a causal mask; the prediction for ``y_i`` is read from the output at the
token of ``x_i`` (which has seen ``x_1, y_1, …, x_i`` only), and the loss covers every position.

The attention activation is a constructor argument:

* ``"softmax"`` -- the usual ``softmax(q·k/√d_h)`` over the positions a token may attend to;
* ``"relu"`` -- ICDL Def. 7's normalised ReLU attention: ``σ(q·k/√d_h) / n`` with ``n`` the number of
  positions the token attends to (``i + 1`` for the token at position ``i``, counting from 0), so that
  the output is an average as with softmax, only not convex.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

ATTENTIONS = ("softmax", "relu")


@dataclass(frozen=True)
class GPTConfig:
    d: int = 20            # input size of the regression task
    n_layer: int = 12
    n_head: int = 8
    n_embd: int = 256
    max_examples: int = 101  # positions for up to this many (x, y) pairs
    attention: str = "softmax"

    def __post_init__(self) -> None:
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {self.attention!r}")
        for name in ("d", "n_layer", "n_head", "n_embd", "max_examples"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} must be divisible by n_head={self.n_head}")

    def to_dict(self) -> dict:
        return asdict(self)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head, self.attention = cfg.n_head, cfg.attention
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)

    def forward(self, h: Tensor) -> Tensor:
        B, T, C = h.shape
        q, k, v = self.qkv(h).split(C, dim=2)
        q, k, v = (z.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for z in (q, k, v))
        if self.attention == "softmax":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # ICDL Def. 7: σ(scores)/n over the attended positions
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
            mask = torch.ones(T, T, dtype=torch.bool, device=h.device).tril()
            attended = torch.arange(1, T + 1, device=h.device, dtype=h.dtype)[:, None]
            y = (torch.relu(scores) * mask / attended) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


# GELU (the exact, erf form) as one opaque operator: ATen's own vectorised kernels forward and backward, the
# very calls autograd makes for ``F.gelu`` (so the same numbers, bit for bit), but kept whole by
# ``torch.compile``, whose generated erf kernels were slower than ATen's on the CPUs of this book's runs.
@torch.library.custom_op("icdl::gelu", mutates_args=())
def gelu(x: Tensor) -> Tensor:
    """``F.gelu(x)`` (exact form), as an operator that ``torch.compile`` does not decompose."""
    return torch.ops.aten.gelu(x)


@torch.library.custom_op("icdl::gelu_backward", mutates_args=())
def _gelu_backward(grad: Tensor, x: Tensor) -> Tensor:
    return torch.ops.aten.gelu_backward(grad, x)


@gelu.register_fake
def _(x):
    return torch.empty_like(x)


@_gelu_backward.register_fake
def _(grad, x):
    return torch.empty_like(x)


def _gelu_setup(ctx, inputs, output) -> None:
    ctx.save_for_backward(inputs[0])


def _gelu_grad(ctx, grad):
    return _gelu_backward(grad, ctx.saved_tensors[0])


gelu.register_autograd(_gelu_grad, setup_context=_gelu_setup)


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc, self.proj = nn.Linear(cfg.n_embd, 4 * cfg.n_embd), nn.Linear(4 * cfg.n_embd, cfg.n_embd)

    def forward(self, h: Tensor) -> Tensor:
        return self.proj(gelu(self.fc(h)))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(cfg.n_embd), CausalSelfAttention(cfg)
        self.ln2, self.mlp = nn.LayerNorm(cfg.n_embd), MLP(cfg)

    def forward(self, h: Tensor) -> Tensor:
        h = h + self.attn(self.ln1(h))
        return h + self.mlp(self.ln2(h))


class InContextGPT(nn.Module):
    """``forward(xs (B, k, d), ys (B, k)) -> predictions (B, k)``: the prediction for ``y_i`` from the
    prompt ``x_1, y_1, …, x_i``."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.read_in = nn.Linear(cfg.d, cfg.n_embd)
        self.wpe = nn.Embedding(2 * cfg.max_examples, cfg.n_embd)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.read_out = nn.Linear(cfg.n_embd, 1)
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:  # GPT-2's N(0, 0.02) initialisation
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    @staticmethod
    def interleave(xs: Tensor, ys: Tensor) -> Tensor:
        """Tokens ``x_1, [y_1, 0…], x_2, …``: shape ``(B, 2k, d)``."""
        B, k, d = xs.shape
        y_tok = torch.cat([ys[..., None], torch.zeros(B, k, d - 1, dtype=xs.dtype, device=xs.device)], -1)
        return torch.stack([xs, y_tok], dim=2).reshape(B, 2 * k, d)

    def forward(self, xs: Tensor, ys: Tensor) -> Tensor:
        if xs.dim() != 3 or xs.shape[-1] != self.cfg.d:
            raise ValueError(f"xs must have shape (B, k, d={self.cfg.d}), got {tuple(xs.shape)}")
        if ys.shape != xs.shape[:2]:
            raise ValueError(f"ys must have shape {tuple(xs.shape[:2])}, got {tuple(ys.shape)}")
        if xs.shape[1] > self.cfg.max_examples:
            raise ValueError(f"prompt has {xs.shape[1]} examples; the model has positions for "
                             f"max_examples={self.cfg.max_examples}")
        z = self.interleave(xs, ys)
        h = self.read_in(z) + self.wpe(torch.arange(z.shape[1], device=z.device))
        for block in self.blocks:
            h = block(h)
        return self.read_out(self.ln_f(h))[:, ::2, 0]

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
