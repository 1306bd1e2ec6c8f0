"""Least squares by LayerNorm: the TF(D, L, K) of Hagiwara (LSA, arXiv 2607.15819).
Used by chapters ``lsa_construction`` and ``lsa_training``.

The model (LSA sections 2.4–2.5), in the paper's row convention -- a prompt is an
``(N+1) × 3`` matrix with rows ``[1, x_n, y_n]`` and the query row ``[1, u, 0]``:

* input map (10), no bias:             ``Q_1 = P W_inᵀ``                          ``(N+1) × D``
* one LSA head (9):                    ``LSA(Q) = (Q W3)(W1 Qᵀ Q W2)``
* layer l (11)–(16):                   ``H_l = Σ_k LSA_{l,k}(Q_l)``, ``Q_{l+1} = Q_l + LN(H_l)``,
  LayerNorm over the model dimension without affine parameters (13)–(15)
* output (17), no bias:                ``Σ_{i,n} W_out[i, n] Q_{L+1}[n, i]``

Parameters carry a leading *run* dimension so that several independent runs train
as one batched program (``W_in: (R, D, 3)``, ``W: (R, L, K, 3, D, D)`` holding
``W1, W2, W3``, ``W_out: (R, D, N+1)`` -- cell ``(i, n)`` is embedding ``i`` of token
``n``, the paper's 4 × 51 view of its output weights).

The data of LSA sec. 4 (:func:`sample_data`) and the least-squares statistics (eqs. 4–8,
:func:`ls_stats`) are here too; the constructions are in :mod:`icdl.lsa.constructions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

Tensor = torch.Tensor


@dataclass
class LSAData:
    P: Tensor      # (..., N+1, 3) prompts, rows [1, x, y]; last row [1, u, 0]
    target: Tensor  # (...,) least-squares estimate at u (eq. 8)
    xbar: Tensor
    ybar: Tensor
    V: Tensor
    C: Tensor
    u: Tensor


def ls_stats(x: Tensor, y: Tensor, u: Tensor) -> dict[str, Tensor]:
    """x̄, ȳ, V, C of eqs. 4–7 (1/N normalisation) and the estimate ŷ(u) of eq. 8. Least squares needs at
    least two examples with different x (V > 0); anything else, or non-finite data, is refused."""
    if x.shape[-1] < 2 or x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape with N >= 2 examples on the last axis, "
                         f"got x {tuple(x.shape)}, y {tuple(y.shape)}")
    for name, v in (("x", x), ("y", y), ("u", u)):
        if not torch.isfinite(v).all():
            raise ValueError(f"{name} has non-finite entries (NaN or inf)")
    xbar, ybar = x.mean(-1), y.mean(-1)
    V = ((x - xbar[..., None]) ** 2).mean(-1)
    if not (V > 0).all():
        raise ValueError("some prompt has constant x (V = 0): its least-squares slope C/V is undefined")
    C = ((x - xbar[..., None]) * (y - ybar[..., None])).mean(-1)
    return {"xbar": xbar, "ybar": ybar, "V": V, "C": C, "target": ybar + C / V * (u - xbar)}


def make_prompts(x: Tensor, y: Tensor, u: Tensor) -> LSAData:
    """Prompts (eq. 1) from examples ``x, y: (..., N)`` and queries ``u: (...)``."""
    if x.shape != y.shape or x.shape[:-1] != u.shape:
        raise ValueError(f"x and y must have one shape (..., N) and u the shape (...); got {tuple(x.shape)}, "
                         f"{tuple(y.shape)}, {tuple(u.shape)}")
    ones = torch.ones(*x.shape[:-1], x.shape[-1] + 1, dtype=x.dtype)
    rows = torch.stack([ones,
                        torch.cat([x, u[..., None]], -1),
                        torch.cat([y, torch.zeros_like(u[..., None])], -1)], -1)
    return LSAData(P=rows, u=u, **ls_stats(x, y, u))


def float_dtype(name: str, dtype) -> torch.dtype:
    """``dtype`` if it is a floating torch dtype: data or weights cast to an integer (or bool) dtype would be cut
    to whole numbers, silently."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"{name} must be a floating torch dtype (torch.float32 or torch.float64), got {dtype!r}")
    return dtype


def sample_data(shape: tuple[int, ...], N: int, *, noise_var: float = 0.04, generator: torch.Generator,
                dtype: torch.dtype = torch.float32) -> LSAData:
    """LSA section 4.1: x, u ~ N(0, 1); θ₀, θ₁ ~ N(0, 1) per prompt; y = θ₀ + θ₁ x + ε, Var ε = noise_var."""
    if isinstance(N, bool) or not isinstance(N, int) or N < 2:
        raise ValueError(f"N (examples per prompt) must be an integer >= 2, got {N!r}")
    if isinstance(noise_var, bool) or not (isinstance(noise_var, (int, float)) and math.isfinite(noise_var)
                                           and noise_var >= 0):
        raise ValueError(f"noise_var must be a finite number >= 0, got {noise_var!r}")
    float_dtype("dtype", dtype)
    if not isinstance(shape, tuple) or any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in shape):
        raise ValueError(f"shape must be a tuple of integers >= 0 (prompts per axis), got {shape!r}")
    g = generator
    theta = torch.randn(*shape, 2, generator=g, dtype=torch.float64)
    x = torch.randn(*shape, N, generator=g, dtype=torch.float64)
    u = torch.randn(*shape, generator=g, dtype=torch.float64)
    y = theta[..., :1] + theta[..., 1:] * x + math.sqrt(noise_var) * torch.randn(*shape, N, generator=g,
                                                                                   dtype=torch.float64)
    d = make_prompts(x, y, u)
    return LSAData(**{k: v.to(dtype) for k, v in d.__dict__.items()})


def tf_forward(Pt: Tensor, W_in: Tensor, W: Tensor, W_out: Tensor, *, layernorm: bool = True,
               ln_eps: float = 1e-5, keep: bool = False):
    """Eqs. 9–17 for all runs and prompts at once, tokens along the last axis.

    ``Pt: (R, B, 3, T)`` is the prompt transposed, ``W_in: (R, D, 3)``, ``W: (R, L, K, 3, D, D)``,
    ``W_out: (R, D, T)``; activations are ``(R, B, D, T)``. The D×D products are written as
    broadcast multiply-and-sum rather than batched matmuls: with D = 4, thousands of 4×4 matmuls
    are slow in eager torch, while ``torch.compile`` turns the broadcasts into fused loops
    (see :func:`train`). The head sum is re-associated as in the class docstring,
    ``Σ_k (Q W3_k)(W1_k G W2_k) = Q Σ_k (W3_k W1_k) G W2_k`` with ``G = QᵀQ``.
    """
    Q = (W_in[:, None, :, :, None] * Pt[:, :, None]).sum(3)                       # (10): (R, B, D, T)
    Qs, Hs = [Q], []
    for l in range(W.shape[1]):
        W1, W2, W3 = W[:, l, :, 0], W[:, l, :, 1], W[:, l, :, 2]                  # (R, K, D, D)
        G = (Q[:, :, :, None, :] * Q[:, :, None, :, :]).sum(-1)                  # Qᵀ Q: (R, B, D, D)
        M = W3 @ W1                                                              # (R, K, D, D)
        GW2 = (G[:, :, None, :, :, None] * W2[:, None, :, None, :, :]).sum(4)     # G W2_k: (R, B, K, D, D)
        S = (M[:, None, :, :, :, None] * GW2[:, :, :, None, :, :]).sum((2, 4))   # Σ_k M_k G W2_k
        H = (Q[:, :, :, None, :] * S[..., None]).sum(2)                          # Q S: (R, B, D, T)
        Hs.append(H)
        if layernorm:  # eqs. 13-15 (biased variance over the D entries of each token)
            H = H - H.mean(2, keepdim=True)
            H = H * torch.rsqrt((H * H).mean(2, keepdim=True) + ln_eps)
        Q = Q + H
        Qs.append(Q)
    out = (Q * W_out[:, None]).sum((2, 3))                                       # (17)
    return (out, Qs, Hs) if keep else out


class TF(torch.nn.Module):
    """TF(D, L, K) of LSA sec. 2.5 for ``runs`` independent parameter sets, prompts of ``T = N+1`` rows.

    ``layernorm=False`` removes the LayerNorm (Appendix B); ``ln_eps`` is LayerNorm's ε
    (torch's default 1e-5 for training, as the paper used ``torch.nn.LayerNorm``; 0 for
    the exact eq. 15 in the constructions).
    """

    def __init__(self, D: int = 4, L: int = 2, K: int = 2, T: int = 51, *, runs: int = 1,
                 layernorm: bool = True, ln_eps: float = 1e-5, dtype: torch.dtype = torch.float32,
                 generator: torch.Generator | None = None):
        super().__init__()
        for name, v in (("D", D), ("L", L), ("K", K), ("T", T), ("runs", runs)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        float_dtype("dtype", dtype)
        if isinstance(ln_eps, bool) or not isinstance(ln_eps, (int, float)) or not math.isfinite(ln_eps) or ln_eps < 0:
            raise ValueError(f"ln_eps (LayerNorm's epsilon) must be a finite number >= 0, got {ln_eps!r}")
        self.D, self.L, self.K, self.T, self.runs = D, L, K, T, runs
        self.layernorm, self.ln_eps = layernorm, ln_eps
        g = generator or torch.Generator().manual_seed(0)

        def uniform(*shape, fan_in):  # torch.nn.Linear's default initialisation
            b = 1 / math.sqrt(fan_in)
            return (torch.rand(*shape, generator=g, dtype=dtype) * 2 - 1) * b

        self.W_in = torch.nn.Parameter(uniform(runs, D, 3, fan_in=3))
        self.W = torch.nn.Parameter(uniform(runs, L, K, 3, D, D, fan_in=D))
        self.W_out = torch.nn.Parameter(uniform(runs, D, T, fan_in=D * T))

    def forward(self, P: Tensor, *, keep: bool = False, W_out: Tensor | None = None):
        """``P: (R, B, T, 3)`` -> output ``(R, B)``; with ``keep=True`` also the lists of
        ``Q_1 … Q_{L+1}`` and of the head sums ``H_1 … H_L`` (before LayerNorm), each ``(R, B, T, D)``."""
        if P.dim() != 4 or P.shape[0] != self.runs or P.shape[2:] != (self.T, 3):
            raise ValueError(f"P must have shape (runs={self.runs}, B, T={self.T}, 3), got {tuple(P.shape)}")
        if not torch.isfinite(P).all():
            raise ValueError("P (the prompts) has non-finite entries (NaN or inf)")
        res = tf_forward(P.transpose(-1, -2), self.W_in, self.W, self.W_out if W_out is None else W_out,
                         layernorm=self.layernorm, ln_eps=self.ln_eps, keep=keep)
        if not keep:
            return res
        out, Qs, Hs = res
        return out, [q.transpose(-1, -2) for q in Qs], [h.transpose(-1, -2) for h in Hs]

    def l1(self) -> Tensor:
        """``‖W_in‖₁ + ‖W_out‖₁`` per run, shape ``(R,)``."""
        return self.W_in.abs().sum((1, 2)) + self.W_out.abs().sum((1, 2))

    @torch.no_grad()
    def select_runs(self, idx) -> TF:
        """A model holding only the runs ``idx``."""
        idx = torch.as_tensor(idx).reshape(-1)
        m = TF(self.D, self.L, self.K, self.T, runs=len(idx), layernorm=self.layernorm, ln_eps=self.ln_eps,
               dtype=self.W.dtype)
        for name in ("W_in", "W", "W_out"):
            getattr(m, name).copy_(getattr(self, name)[idx])
        return m


def lsa_head(Q: Tensor, W1: Tensor, W2: Tensor, W3: Tensor) -> Tensor:
    """One LSA head, eq. 9, for a single ``(T, D)`` input: ``(Q W3)(W1 Qᵀ Q W2)``."""
    return (Q @ W3) @ (W1 @ Q.T @ Q @ W2)


def _corr(a: Tensor, b: Tensor) -> float:
    a, b = a.double() - a.double().mean(), b.double() - b.double().mean()
    return float((a * b).sum() / torch.sqrt((a * a).sum() * (b * b).sum()))
