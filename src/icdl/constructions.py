"""Transformer layers whose weights are set by formulas, not trained.

ICDL builds its in-context gradient-descent transformer from three layer types
(Appendix B.1, Defs. 5–8). This module holds them as torch modules, with explicit
weight tensors a builder fills in:

* :class:`ReLUAttention` -- Def. 7, ``h_i + (1/n) Σ_m Σ_s σ(⟨Q_m h_i, K_m h_s⟩) V_m h_s``;
* :class:`MLPLayer` -- Def. 8, ``h_i + W₂ σ(W₁ h_i)``;
* :class:`EWMLayer` -- Defs. 5–6, ``h_i + Σ_m ⟨Q_m h_i, K_m h_i⟩ V_m h_i``;

and the builders of the constructions the chapters check: one GD step of linear
regression (chapter 1, :func:`build_linear_gd_layer`), and the first 2N + 2 layers
of a block of ICDL's transformer (chapter 6): the token layout :class:`ICGDLayout`,
Lemma 2 (:func:`build_forward_layers`), Lemma 3 (:func:`build_derivative_layer`),
Lemma 4 (:func:`build_loss_derivative_mlp`) and Lemma 5 (:func:`build_backward_layers`).
Shapes: a prompt is ``(B, D, T)`` (tokens are columns, as in the paper).

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

from .profiles import ProfileSet
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


class MLPLayer(nn.Module):
    """The MLP layer of ICDL Def. 8, token by token: ``h + W₂ σ(W₁ h)``."""

    def __init__(self, D: int, hidden: int, *, dtype: torch.dtype = torch.float64):
        super().__init__()
        if D < 1 or hidden < 1:
            raise ValueError(f"D and hidden must be >= 1, got D={D}, hidden={hidden}")
        self.D, self.hidden = D, hidden
        self.W1 = nn.Parameter(torch.zeros(hidden, D, dtype=dtype))
        self.W2 = nn.Parameter(torch.zeros(D, hidden, dtype=dtype))

    def forward(self, H: Tensor) -> Tensor:
        if H.dim() != 3 or H.shape[1] != self.D:
            raise ValueError(f"MLPLayer expects H of shape (B, D={self.D}, T), got {tuple(H.shape)}")
        return H + torch.einsum("ah,zht->zat", self.W2, torch.relu(torch.einsum("hb,zbt->zht", self.W1, H)))


class EWMLayer(nn.Module):
    """The element-wise multiplication layer of ICDL Defs. 5–6, token by token:
    ``h + Σ_m ⟨Q_m h, K_m h⟩ V_m h`` -- a token multiplied with itself, which attention over tokens
    and MLPs cannot do exactly (Remark 3)."""

    def __init__(self, D: int, heads: int, *, dtype: torch.dtype = torch.float64):
        super().__init__()
        if D < 1 or heads < 1:
            raise ValueError(f"D and heads must be >= 1, got D={D}, heads={heads}")
        self.D, self.heads = D, heads
        self.Q = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))
        self.K = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))
        self.V = nn.Parameter(torch.zeros(heads, D, D, dtype=dtype))

    def forward(self, H: Tensor) -> Tensor:
        if H.dim() != 3 or H.shape[1] != self.D:
            raise ValueError(f"EWMLayer expects H of shape (B, D={self.D}, T), got {tuple(H.shape)}")
        q = torch.einsum("mab,zbt->zmat", self.Q, H)
        k = torch.einsum("mab,zbt->zmat", self.K, H)
        v = torch.einsum("mab,zbt->zmat", self.V, H)
        return H + torch.einsum("zmt,zmat->zat", (q * k).sum(2), v)


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


# ---- the token layout of ICDL's construction (Lemmas 2–6) ---------------------------------------


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


def lemma2_bound(arch, eps_r: float, L_r: float, B_v: float) -> list[float]:
    """Eq. 3.8: the bound on ‖p̂(j) − p(j)‖₂ for j = 1..N, given the sum's sup error ``eps_r``."""
    out = []
    for j in range(1, arch.N + 1):
        geo = sum(arch.K ** (l / 2) * L_r**l * B_v**l for l in range(j))
        out.append(geo * math.sqrt(arch.K if j < arch.N else arch.d_y) * eps_r)
    return out


FORWARD_PROFILES = ProfileSet(
    "06_attention_passes",
    profiles={"quick": {"K": 3, "N_max": 5, "H_max": 256, "seed": 0},
              "reference": {"K": 4, "N_max": 6, "H_max": 1024, "seed": 0}},
    ranges={"K": (1, 4), "N_max": (2, 8), "H_max": (16, 4096), "seed": (0, 2**31 - 1)},
)


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


def lemma4_bound(arch, eps_r: float, eps_l: float, L_r: float, L_l: float, B_v: float) -> float:
    """Eq. 3.14: |g_i[k] − u(p_i(N), y_i)[k]| ≤ ε_l + L_l E_r ε_r, with E_r of eq. 3.9."""
    E_r = max(b / eps_r for b in lemma2_bound(arch, eps_r, L_r, B_v)) if eps_r > 0 else 0.0
    return eps_l + L_l * E_r * eps_r


def lemma3_bound(arch, eps_r: float, eps_rp: float, L_r: float, L_rp: float, B_v: float) -> float:
    """Eq. 3.12: |r̂'_i(j)[k] − r'_i(j)[k]| ≤ ε_r' + L_r' B_v E_r ε_r, with E_r of eq. 3.9."""
    E_r = max(b / eps_r for b in lemma2_bound(arch, eps_r, L_r, B_v)) if eps_r > 0 else 0.0
    return eps_rp + L_rp * B_v * E_r * eps_r


def _random_prompts(arch, *, B_v: float, prompts: int, n: int, seed: int):
    """Random prompts for the lemmas' checks: ‖x‖ ≤ 1, rows of w projected to ‖v_{j,k}‖ ≤ B_v."""
    from .networks import init_weights, project

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(prompts, n + 1, arch.d_x, generator=g, dtype=torch.float64)
    x = x / x.norm(dim=-1, keepdim=True).clamp(min=1.0)
    y = torch.rand(prompts, n, arch.d_y, generator=g, dtype=torch.float64)
    w = torch.stack([project(arch, init_weights(arch, scale=2.0, seed=seed + b), B_v) for b in range(prompts)])
    return x, y, w


def forward_pass_errors(arch, r_sum, activation: str, r_prime_sum=None, u_sum=None, loss: str = "squared", *,
                        B_v: float = 1.0, prompts: int = 3, n: int = 6, seed: int = 0) -> dict[str, list[float]]:
    """Run Lemma 2's layers (then Lemma 3's layer given ``r_prime_sum``, and Lemma 4's MLP given ``u_sum``)
    on random prompts; return the largest ``‖p̂_i(j) − p_i(j)‖₂`` for j = 1..N (key ``"p"``),
    ``max_k |r̂'_i(j)[k] − r'_i(j)[k]|`` for j = 0..N−1 (``"r'"``) and ``max_k |g_i[k] − u_i[k]|`` over the
    examples (``"g"``), against :func:`icdl.networks.gradient_terms`."""
    from .networks import gradient_terms

    x, y, w = _random_prompts(arch, B_v=B_v, prompts=prompts, n=n, seed=seed)
    layout = ICGDLayout(arch)
    H = layout.prompt(x, y, w)
    with torch.no_grad():
        for layer in build_forward_layers(layout, r_sum):
            H = layer(H)
        if r_prime_sum is not None:
            H = build_derivative_layer(layout, r_prime_sum)(H)
        if u_sum is not None:
            H = build_loss_derivative_mlp(layout, u_sum)(H)
        if r_prime_sum is not None and u_sum is not None:
            for layer in build_backward_layers(layout):
                H = layer(H)
    y_full = torch.cat([y, torch.zeros(prompts, 1, arch.d_y, dtype=y.dtype)], 1)  # the query's y is 0
    exact = [gradient_terms(arch, w[b], x[b], y_full[b], activation, loss) for b in range(prompts)]
    out = {"p": [float(max((H[b, layout.slot("p", j), :].T - exact[b].p[j]).norm(dim=-1).max()
                           for b in range(prompts))) for j in range(1, arch.N + 1)]}
    if r_prime_sum is not None:
        out["r'"] = [float(max((H[b, layout.slot("r'", j), :].T - exact[b].r_prime[j]).abs().max()
                               for b in range(prompts))) for j in range(arch.N)]
    if u_sum is not None:  # examples only: g of the query is never used
        out["g"] = [float(max((H[b, layout.slot("g"), :n].T - exact[b].u[:n]).abs().max() for b in range(prompts)))]
    if r_prime_sum is not None and u_sum is not None:
        out["s"] = [float(max((H[b, layout.slot("s", j), :n].T - exact[b].s[j][:n]).abs().max()
                              for b in range(prompts))) for j in range(1, arch.N + 1)]
        # the recursion (3.6) applied to the written r̂' and g: what the EWML layers must produce exactly
        from .networks import unflatten
        rec_dev = 0.0
        for b in range(prompts):
            Vs = unflatten(arch, w[b])
            rp = [H[b, layout.slot("r'", j), :n].T for j in range(arch.N)]
            s_rec = rp[arch.N - 1] * H[b, layout.slot("g"), :n].T
            rec_dev = max(rec_dev, float((H[b, layout.slot("s", arch.N), :n].T - s_rec).abs().max()))
            for j in range(arch.N - 1, 0, -1):
                s_rec = rp[j - 1] * (s_rec @ Vs[j])
                rec_dev = max(rec_dev, float((H[b, layout.slot("s", j), :n].T - s_rec).abs().max()))
        out["s_recursion_dev"] = [rec_dev]
    return out


def lemma2_errors(arch, r_sum, activation: str, **kw) -> list[float]:
    """``max_i ‖p̂_i(j) − p_i(j)‖₂`` for j = 1..N (Lemma 2's layers on random prompts)."""
    return forward_pass_errors(arch, r_sum, activation, **kw)["p"]


def forward_pass_study(Ns=(2, 3, 4, 5), K: int = 3, d: int = 2, Hs=(16, 32, 64, 128, 256), R: float = 4.0,
                       seed: int = 0, loss: str = "logcosh") -> "pd.DataFrame":
    """Measured error and bound per layer j for sigmoid networks of depth N and sums of H ReLUs:
    Lemma 2 (p̂(j), bound 3.8; ``lemma == 2``), Lemma 3 (r̂'(j), bound 3.12; ``lemma == 3``) and
    Lemma 4 (g ≈ u for ``loss``, bound 3.14; ``lemma == 4``) and Lemma 5 (ŝ(j), ``lemma == 5``: the error
    against the true s(j), and in ``recursion_dev`` how far ŝ is from the recursion (3.6) applied to the
    r̂' and g the earlier layers wrote -- round-off, since the EWML layers only select and multiply)."""
    import pandas as pd

    from . import relu_sums as rs
    from .networks import Architecture, get_activation, get_loss

    rows = []
    act = get_activation("sigmoid")
    L_r = act.lipschitz
    for N in Ns:
        arch = Architecture(N, K, d, d)
        for H in Hs:
            r_sum = rs.fit("sigmoid", R, H)
            eps_r = rs.sup_error(r_sum, torch.sigmoid, R)
            rp_sum = rs.fit("sigmoid'", R, H)
            eps_rp = rs.sup_error(rp_sum, rs.TARGETS["sigmoid'"], R)
            u_sum = rs.fit(rs.U_TARGETS[loss], R, H)
            eps_l = rs.sup_error(u_sum, rs.TARGETS[rs.U_TARGETS[loss]], R)
            errs = forward_pass_errors(arch, r_sum, "sigmoid", rp_sum, u_sum, loss, seed=seed)
            b3 = lemma3_bound(arch, eps_r, eps_rp, L_r, act.lipschitz_prime, 1.0)
            b4 = lemma4_bound(arch, eps_r, eps_l, L_r, get_loss(loss).lipschitz_t, 1.0)
            rows.append({"lemma": 4, "N": N, "H": H, "layer": N, "eps_r": eps_l, "error": errs["g"][0], "bound": b4})
            for j, e in enumerate(errs["s"], start=1):  # Lemma 5: no closed-form bound computed (Lemma 6)
                rows.append({"lemma": 5, "N": N, "H": H, "layer": j, "eps_r": math.nan, "error": e,
                             "bound": math.nan, "recursion_dev": errs["s_recursion_dev"][0]})
            for j, (e, b) in enumerate(zip(errs["p"], lemma2_bound(arch, eps_r, L_r, 1.0)), start=1):
                rows.append({"lemma": 2, "N": N, "H": H, "layer": j, "eps_r": eps_r, "error": e, "bound": b})
            for j, e in enumerate(errs["r'"]):
                rows.append({"lemma": 3, "N": N, "H": H, "layer": j, "eps_r": eps_rp, "error": e, "bound": b3})
    return pd.DataFrame(rows)


def bound_check(study, lemma: int) -> dict:
    """For one lemma's rows of :func:`forward_pass_study`: the cases, whether every measured error is
    within its bound, and the range of error / bound (the chapter's summary and ledger entry)."""
    rows = study[study["lemma"] == lemma]
    ratio = rows["error"] / rows["bound"]
    return {"cases": len(rows), "within": bool((rows["error"] <= rows["bound"]).all()),
            "min_ratio": float(ratio.min()), "max_ratio": float(ratio.max())}


# ---- the last two layers of a block, and the whole transformer (ICDL Theorem 1) ----------------


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


def projection_box(arch, w: Tensor, B_w: float) -> Tensor:
    """``Proj_W`` for the box ``{‖w‖_∞ ≤ B_w}`` -- what :func:`build_projection_mlp` computes."""
    return w.clamp(-B_w, B_w)


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
        if H.dim() != 3 or H.shape[1] != self.D:
            raise ValueError(f"CompactReLUAttention expects H of shape (B, D={self.D}, T), got {tuple(H.shape)}")
        T = H.shape[2]
        n = T - 1 if self.normalization == "examples" else T
        q = torch.einsum("mab,zbt->zmat", self.Q, H)
        k = torch.einsum("mab,zbt->zmat", self.K, H)
        v = torch.einsum("mab,zbt->zmat", self.V, H)
        out = torch.einsum("zmis,zmas->zmai", torch.relu(torch.einsum("zmai,zmas->zmis", q, k)), v)
        full = torch.zeros_like(H).index_add_(1, self.rows.flatten(), out.reshape(H.shape[0], -1, T))
        return H + full / n


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
