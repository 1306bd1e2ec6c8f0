"""N-layer networks and their gradient, term by term (ICDL Defs. 1–3, 10, Lemma 1, Lemma 15).
Used by every ICDL chapter from ``gradient_decomposition`` on.

The network of ICDL Def. 1 (Def. 10 when input and output sizes differ) has no
biases and applies its activation ``r`` on every layer, the output layer too::

    p(0) = x ∈ R^{d_x},   p(j) = r(V_j p(j−1)),   j = 1..N,   f(w, x) = p(N) ∈ R^{d_y}

with ``V_1 ∈ R^{K×d_x}``, ``V_j ∈ R^{K×K}`` (1 < j < N), ``V_N ∈ R^{d_y×K}``. The flat
parameter vector ``w`` (eq. 3.2) stacks the rows ``v_{j,k}`` of ``V_1, …, V_N`` in
order, which is row-major flattening of each ``V_j``.

:func:`gradient_terms` computes every term of Lemma 1, batched over the ``n``
examples (no Python loop over examples):

* ``p[j]``        ``(n, K_j)``       forward pass, ``p[0] = x``
* ``r_prime[j]``  ``(n, K_{j+1})``   ``r'(V_{j+1} p(j))``, j = 0..N−1 (``R_i(j) = diag(r_prime[j][i])``)
* ``u``           ``(n, d_y)``       ``∂ℓ/∂t`` at ``t = p(N)``
* ``s[j]``        ``(n, K_j)``       ``s(N) = r'(N−1) ⊙ u``; ``s(j) = r'(j−1) ⊙ (V_{j+1}ᵀ s(j+1))``  (3.6)
* ``A(j)``        ``(n, K_j K_{j−1})`` ``[I ⊗ p(j−1)] s(j)`` (3.7): row-major ``s(j) p(j−1)ᵀ``
* ``grad``        ``(D_N,)``         ``1/(2n) Σ_i [A_i(1); …; A_i(N)]``                         (Lemma 1)

(lists are indexed by the paper's ``j``; unused slots are ``None``; ``A(j)`` is a method).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .checks import finite_number, positive_int

Tensor = torch.Tensor


# ---- activations and losses -----------------------------------------------------------------


@dataclass(frozen=True)
class Activation:
    name: str
    r: Callable[[Tensor], Tensor]
    r_prime: Callable[[Tensor], Tensor]
    lipschitz: float  # sup |r'|, the L_r of ICDL's bounds
    lipschitz_prime: float = math.nan  # sup |r''|, the L_r' of Lemma 3 (nan: r' is not Lipschitz)


def _softplus(z: Tensor) -> Tensor:
    """log(1 + e^z) without torch's linear cut-off above 20 (whose derivative is exactly 1)."""
    return torch.logaddexp(z, torch.zeros_like(z))


def _gelu_prime(z: Tensor) -> Tensor:
    cdf = 0.5 * (1.0 + torch.erf(z / math.sqrt(2.0)))
    pdf = torch.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return cdf + z * pdf


ACTIVATIONS: dict[str, Activation] = {
    "relu": Activation("relu", torch.relu, lambda z: (z > 0).to(z.dtype), 1.0),
    "sigmoid": Activation("sigmoid", torch.sigmoid,
                          lambda z: torch.sigmoid(z) * (1 - torch.sigmoid(z)), 0.25, 1 / (6 * math.sqrt(3))),
    "tanh": Activation("tanh", torch.tanh, lambda z: 1 - torch.tanh(z) ** 2, 1.0, 4 / (3 * math.sqrt(3))),
    "softplus": Activation("softplus", _softplus, torch.sigmoid, 1.0, 0.25),
    "gelu": Activation("gelu", torch.nn.functional.gelu, _gelu_prime, 1.129, 2 / math.sqrt(2 * math.pi)),
}


@dataclass(frozen=True)
class Loss:
    """A loss ``ℓ(t, y)`` summed over output coordinates, and ``u(t, y) = ∂ℓ/∂t``."""

    name: str
    ell: Callable[[Tensor, Tensor], Tensor]  # (n, d_y), (n, d_y) -> (n,)
    u: Callable[[Tensor, Tensor], Tensor]    # (n, d_y), (n, d_y) -> (n, d_y)
    lipschitz_t: float = math.nan            # sup |∂u/∂t|, the L_l of ICDL Lemma 4


LOSSES: dict[str, Loss] = {
    "squared": Loss("squared", lambda t, y: ((t - y) ** 2).sum(-1), lambda t, y: 2 * (t - y), 2.0),
    # log cosh(t − y): quadratic near 0, linear in the tails; written stably
    "logcosh": Loss("logcosh",
                    lambda t, y: (_softplus(2 * (t - y)) - (t - y) - math.log(2)).sum(-1),
                    lambda t, y: torch.tanh(t - y), 1.0),
    # logistic (cross-entropy with logits t and soft labels y)
    "logistic": Loss("logistic", lambda t, y: (_softplus(t) - y * t).sum(-1),
                     lambda t, y: torch.sigmoid(t) - y, 0.25),
}


def get_activation(name: str | Activation) -> Activation:
    """A named activation, or ``name`` itself when it already is an :class:`Activation` (e.g. one whose r and
    r' are sums of ReLUs, as in :func:`icdl.studies.icgd_transformer.surrogate_gd_path`)."""
    if isinstance(name, Activation):
        return name
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; known activations: {sorted(ACTIVATIONS)}")
    return ACTIVATIONS[name]


def get_loss(name: str | Loss) -> Loss:
    """A named loss, or ``name`` itself when it already is a :class:`Loss`."""
    if isinstance(name, Loss):
        return name
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; known losses: {sorted(LOSSES)}")
    return LOSSES[name]


# ---- architecture and the flat parameter vector ----------------------------------------------


@dataclass(frozen=True)
class Architecture:
    """Depth ``N ≥ 2``, width ``K``, input size ``d_x``, output size ``d_y`` (Def. 1; Def. 10)."""

    N: int
    K: int
    d_x: int
    d_y: int

    def __post_init__(self) -> None:
        for name, value, low in (("N", self.N, 2), ("K", self.K, 1), ("d_x", self.d_x, 1), ("d_y", self.d_y, 1)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")

    @property
    def widths(self) -> list[int]:
        """``K_0 = d_x, K_1 = … = K_{N−1} = K, K_N = d_y``."""
        return [self.d_x] + [self.K] * (self.N - 1) + [self.d_y]

    @property
    def shapes(self) -> list[tuple[int, int]]:
        """Shape of ``V_j`` for j = 1..N."""
        k = self.widths
        return [(k[j], k[j - 1]) for j in range(1, self.N + 1)]

    @property
    def counts(self) -> list[int]:
        """``D_0, D_1, …, D_N``: parameters in the first j layers (Def. 2, cumulative)."""
        out = [0]
        for rows, cols in self.shapes:
            out.append(out[-1] + rows * cols)
        return out

    @property
    def size(self) -> int:
        return self.counts[-1]

    def def2_counts(self) -> list[int]:
        """``D_j`` by the closed forms of ICDL Def. 2 (stated there for d_x = d_y = d)."""
        if self.d_x != self.d_y:
            raise ValueError("Def. 2's closed forms assume d_x = d_y")
        d, K, N = self.d_x, self.K, self.N
        return [0] + [d * K if j == 1 else (j - 1) * K * K + d * K if j < N else (N - 2) * K * K + 2 * d * K
                      for j in range(1, N + 1)]


def _check_w(arch: Architecture, w: Tensor) -> None:
    if not isinstance(w, torch.Tensor) or w.dim() != 1:
        raise ValueError(f"w must be a 1-D tensor of length D_N = {arch.size}, got "
                         f"{tuple(w.shape) if isinstance(w, torch.Tensor) else type(w).__name__}")
    if w.numel() != arch.size:
        raise ValueError(f"w has {w.numel()} entries, but {arch} has D_N = {arch.size} parameters")
    if not torch.isfinite(w).all():
        raise ValueError("w has non-finite entries (NaN or inf)")


def unflatten(arch: Architecture, w: Tensor) -> list[Tensor]:
    """``w`` (eq. 3.2) -> ``[V_1, …, V_N]`` (views, row ``k`` of ``V_j`` is ``v_{j,k}``)."""
    _check_w(arch, w)
    D = arch.counts
    return [w[D[j]:D[j + 1]].view(rows, cols) for j, (rows, cols) in enumerate(arch.shapes)]


def flatten(arch: Architecture, Vs: list[Tensor]) -> Tensor:
    """``[V_1, …, V_N]`` -> ``w``: the rows ``v_{j,k}`` stacked layer by layer (eq. 3.2)."""
    if len(Vs) != arch.N:
        raise ValueError(f"expected N = {arch.N} matrices, got {len(Vs)}")
    for j, (V, shape) in enumerate(zip(Vs, arch.shapes), start=1):
        if tuple(V.shape) != shape:
            raise ValueError(f"V_{j} must have shape {shape}, got {tuple(V.shape)}")
    return torch.cat([V.reshape(-1) for V in Vs])


def init_weights(arch: Architecture, *, scale: float = 1.0, seed: int = 0,
                 dtype: torch.dtype = torch.float64) -> Tensor:
    """``v_{j,k} ~ N(0, scale² / fan_in · I)``, as a flat ``w``."""
    g = torch.Generator().manual_seed(seed)
    return torch.cat([torch.randn(rows * cols, generator=g, dtype=dtype) * scale / math.sqrt(cols)
                      for rows, cols in arch.shapes])


def project(arch: Architecture, w: Tensor, B_v: float) -> Tensor:
    """``Proj_W``: each row ``v_{j,k}`` scaled into the Euclidean ball of radius ``B_v`` (Problem 2)."""
    if not B_v > 0:
        raise ValueError(f"B_v must be > 0, got {B_v}")
    out = []
    for V in unflatten(arch, w):
        norms = V.norm(dim=1, keepdim=True)
        out.append(V * torch.clamp(B_v / norms.clamp_min(torch.finfo(V.dtype).tiny), max=1.0))
    return flatten(arch, out)


def project_box(w: Tensor, B_w: float) -> Tensor:
    """``Proj_W`` for the box ``W = {‖w‖_∞ ≤ B_w}`` of ICDL Problem 1 -- what
    :func:`icdl.constructions.theorem1.build_projection_mlp` computes."""
    if not B_w > 0:
        raise ValueError(f"B_w must be > 0, got {B_w}")
    return w.clamp(-B_w, B_w)


# ---- forward pass, risk and the terms of Lemma 1 ------------------------------------------------


def _check_data(arch: Architecture, x: Tensor, y: Tensor | None) -> None:
    if x.dim() != 2 or x.shape[1] != arch.d_x:
        raise ValueError(f"x must have shape (n, d_x={arch.d_x}), got {tuple(x.shape)}")
    if y is not None and (y.dim() != 2 or y.shape != (x.shape[0], arch.d_y)):
        raise ValueError(f"y must have shape (n={x.shape[0]}, d_y={arch.d_y}), got {tuple(y.shape)}")
    if x.shape[0] < 1:
        raise ValueError("need at least one example (n >= 1)")
    for name, v in (("x", x), ("y", y)):
        if v is not None and not torch.isfinite(v).all():
            raise ValueError(f"{name} has non-finite entries (NaN or inf); the network's outputs would be NaN")


def forward(arch: Architecture, w: Tensor, x: Tensor, activation: str = "sigmoid") -> list[Tensor]:
    """``[p(0), …, p(N)]`` for a batch of inputs ``x`` of shape ``(n, d_x)``."""
    _check_data(arch, x, None)
    act = get_activation(activation)
    p = [x]
    for V in unflatten(arch, w):
        p.append(act.r(p[-1] @ V.T))
    return p


def risk(arch: Architecture, w: Tensor, x: Tensor, y: Tensor, activation: str = "sigmoid",
         loss: str = "squared") -> Tensor:
    """``L_n(w) = 1/(2n) Σ_i ℓ(f(w, x_i), y_i)`` (ICDL eq. 2.2)."""
    _check_data(arch, x, y)
    return get_loss(loss).ell(forward(arch, w, x, activation)[-1], y).sum() / (2 * x.shape[0])


@dataclass
class GradientTerms:
    p: list[Tensor]
    r_prime: list[Tensor]
    u: Tensor
    s: list[Tensor | None]
    grad: Tensor

    def A(self, j: int) -> Tensor:
        """Per-example ``A_i(j) = [I ⊗ p_i(j−1)] s_i(j)`` (3.7), shape ``(n, K_j K_{j−1})``:
        the row-major outer product ``s_i(j) p_i(j−1)ᵀ``."""
        if not 1 <= j < len(self.p):
            raise ValueError(f"j must be in 1..{len(self.p) - 1}, got {j}")
        s, p = self.s[j], self.p[j - 1]
        return (s[:, :, None] * p[:, None, :]).reshape(s.shape[0], -1)


def gradient_terms(arch: Architecture, w: Tensor, x: Tensor, y: Tensor, activation: str | Activation = "sigmoid",
                   loss: str | Loss = "squared") -> GradientTerms:
    """Every term of ICDL Lemma 1 and the gradient it assembles, batched over examples.

    The sum ``Σ_i A_i(j)`` is formed as one matrix product ``s(j)ᵀ p(j−1)`` over the batch
    (the same numbers as summing the per-example outer products of :meth:`GradientTerms.A`,
    without materialising them).
    """
    _check_data(arch, x, y)
    act, lo = get_activation(activation), get_loss(loss)
    Vs = unflatten(arch, w)
    N, n = arch.N, x.shape[0]
    p, r_prime = [x], []
    for V in Vs:                      # forward: pre-activation z(j+1) = V_{j+1} p(j)
        z = p[-1] @ V.T
        r_prime.append(act.r_prime(z))  # r'(j), j = 0..N−1
        p.append(act.r(z))
    u = lo.u(p[N], y)
    s: list[Tensor | None] = [None] * (N + 1)
    s[N] = r_prime[N - 1] * u                                   # s(N) = R(N−1) u
    for j in range(N - 1, 0, -1):
        s[j] = r_prime[j - 1] * (s[j + 1] @ Vs[j])              # (3.6): V_{j+1} is Vs[j]
    grad = torch.cat([(s[j].T @ p[j - 1]).reshape(-1) for j in range(1, N + 1)]) / (2 * n)
    return GradientTerms(p, r_prime, u, s, grad)


def explicit_gradient(arch: Architecture, w: Tensor, x: Tensor, y: Tensor, activation: str | Activation = "sigmoid",
                      loss: str | Loss = "squared") -> Tensor:
    """``∇L_n(w)`` by Lemma 1."""
    return gradient_terms(arch, w, x, y, activation, loss).grad


def autograd_gradient(arch: Architecture, w: Tensor, x: Tensor, y: Tensor, activation: str = "sigmoid",
                      loss: str = "squared") -> Tensor:
    """``∇L_n(w)`` by torch.autograd on :func:`risk` -- the independent reference."""
    w = w.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(risk(arch, w, x, y, activation, loss), w)
    return g


def projected_gd(arch: Architecture, w0: Tensor, x: Tensor, y: Tensor, *, eta: float, steps: int, B_w: float,
                 activation: str | Activation = "sigmoid", loss: str | Loss = "squared") -> list[Tensor]:
    """``[w^(0) = w0, …, w^(steps)]`` of projected GD on the in-context risk,
    ``w^(l) = Proj_W(w^(l−1) − η ∇L_n(w^(l−1)))`` (ICDL Problem 1 with ε = 0), with the exact gradient of
    Lemma 1 -- the reference every in-context GD route is compared with."""
    positive_int("steps", steps, minimum=0)
    finite_number("eta", eta, low=0.0, open_interval=True, high=math.inf)
    finite_number("B_w", B_w, low=0.0, open_interval=True, high=math.inf)
    path = [w0]
    for _ in range(steps):
        path.append(project_box(path[-1] - eta * explicit_gradient(arch, path[-1], x, y, activation, loss), B_w))
    return path
