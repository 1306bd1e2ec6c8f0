"""The a-priori error bounds of ICDL's construction, as functions of the architecture and the
accuracies of the sums of ReLUs: Lemmas 2–4 (eqs. 3.8, 3.12, 3.14), Lemma 6, the gradient error of
Theorem 1's proof (C.7), and Corollary 1.1 beside the bound its induction (Lemma 14) gives.
Chapters ``attention_passes`` and ``icgd_transformer`` compare them with measured errors."""

from __future__ import annotations

import math

import pandas as pd

from ..networks import Architecture, get_activation, get_loss
from .theorem1 import Sums


def lemma2_bound(arch, eps_r: float, L_r: float, B_v: float) -> list[float]:
    """Eq. 3.8: the bound on ‖p̂(j) − p(j)‖₂ for j = 1..N, given the sum's sup error ``eps_r``."""
    out = []
    for j in range(1, arch.N + 1):
        geo = sum(arch.K ** (l / 2) * L_r**l * B_v**l for l in range(j))
        out.append(geo * math.sqrt(arch.K if j < arch.N else arch.d_y) * eps_r)
    return out


def lemma3_bound(arch, eps_r: float, eps_rp: float, L_r: float, L_rp: float, B_v: float) -> float:
    """Eq. 3.12: |r̂'_i(j)[k] − r'_i(j)[k]| ≤ ε_r' + L_r' B_v E_r ε_r, with E_r of eq. 3.9."""
    E_r = max(b / eps_r for b in lemma2_bound(arch, eps_r, L_r, B_v)) if eps_r > 0 else 0.0
    return eps_rp + L_rp * B_v * E_r * eps_r


def lemma4_bound(arch, eps_r: float, eps_l: float, L_r: float, L_l: float, B_v: float) -> float:
    """Eq. 3.14: |g_i[k] − u(p_i(N), y_i)[k]| ≤ ε_l + L_l E_r ε_r, with E_r of eq. 3.9."""
    E_r = max(b / eps_r for b in lemma2_bound(arch, eps_r, L_r, B_v)) if eps_r > 0 else 0.0
    return eps_l + L_l * E_r * eps_r


def lemma6_bound(arch: Architecture, activation: str, loss: str, sums: Sums, *, B_w: float, B_x: float,
                 B_y: float) -> dict[str, list[float]]:
    """Bounds on ``|ŝ_i(j)[k] − s_i(j)[k]|`` (``"e_s"``) and on ``|s_i(j)[k]|`` (``"B_s"``), j = 1..N.

    The induction of ICDL's proof of Lemma 6 (C.6), evaluated with numbers. With ``e_r'`` the bound of
    Lemma 3, ``e_g`` that of Lemma 4, ``B_r' = max|r'|``, ``B_u ≥ |u|`` and ``c_j = K_{j+1} B_w`` (a bound on
    ``Σ_q |v_{j+1,q}[k]|`` in the box):

    * ``e_s(N) = e_r' (B_u + e_g) + B_r' e_g``,  ``B_s(N) = B_r' B_u``;
    * ``e_s(j) = e_r' c_j (B_s(j+1) + e_s(j+1)) + B_r' c_j e_s(j+1)``,  ``B_s(j) = B_r' c_j B_s(j+1)``.

    Each step is ``|âb̂ − ab| ≤ |â − a||b̂| + |a||b̂ − b|`` -- the step of the paper's proof; the result is
    linear in ``ε_r, ε_r', ε_l`` up to products of two of them, as Lemma 6 states."""
    act, lo = get_activation(activation), get_loss(loss)
    B_v = B_w * math.sqrt(max(c for _, c in arch.shapes))  # row norms in the box
    e_rp = lemma3_bound(arch, sums.eps_r, sums.eps_rp, act.lipschitz, act.lipschitz_prime, B_v)
    e_g = lemma4_bound(arch, sums.eps_r, sums.eps_l, act.lipschitz, lo.lipschitz_t, B_v)
    B_u = _u_bound(loss, B_y)
    B_rp = act.lipschitz  # max |r'| (sigmoid 1/4, tanh 1)
    e_s, B_s = [0.0] * (arch.N + 1), [0.0] * (arch.N + 1)
    e_s[arch.N] = e_rp * (B_u + e_g) + B_rp * e_g
    B_s[arch.N] = B_rp * B_u
    for j in range(arch.N - 1, 0, -1):
        c = arch.widths[j + 1] * B_w
        e_s[j] = e_rp * c * (B_s[j + 1] + e_s[j + 1]) + B_rp * c * e_s[j + 1]
        B_s[j] = B_rp * c * B_s[j + 1]
    return {"e_s": e_s[1:], "B_s": B_s[1:], "e_rp": [e_rp], "e_g": [e_g], "B_v": [B_v]}


def _u_bound(loss: str, B_y: float) -> float:
    """``max |u(t, y)|`` for ``|t| ≤ 1`` (a sigmoid or tanh output) and ``|y| ≤ B_y``."""
    if loss == "squared":
        return 2 * (1 + B_y)
    if loss in ("logcosh", "logistic"):
        return 1 + B_y
    raise ValueError(f"unknown loss {loss!r}")


def gradient_error_bound(arch: Architecture, activation: str, loss: str, sums: Sums, *, B_w: float, B_x: float,
                         B_y: float) -> float:
    """A bound ε on ``‖∇̂L_n(w) − ∇L_n(w)‖₂`` for the gradient the block forms (ICDL C.7, eq. after C.16).

    ``‖Â(j) − A(j)‖ = ‖ŝ p̂ᵀ − s pᵀ‖_F ≤ ‖ŝ − s‖ ‖p̂‖ + ‖s‖ ‖p̂ − p‖`` with ``‖ŝ − s‖ ≤ √K_j e_s(j)`` (Lemma 6),
    ``‖p̂(j−1) − p(j−1)‖`` from Lemma 2 (eq. 3.8), ``‖p(0)‖ ≤ B_x``, ``‖p(j)‖ ≤ √K_j``; and
    ``‖∇̂ − ∇‖ ≤ ½ max_i ‖[ΔA_i(1); …; ΔA_i(N)]‖``. Theorem 1's error term is then ``‖ε^(l)‖ ≤ η ε``."""
    act = get_activation(activation)
    b6 = lemma6_bound(arch, activation, loss, sums, B_w=B_w, B_x=B_x, B_y=B_y)
    e_p = [0.0] + lemma2_bound(arch, sums.eps_r, act.lipschitz, b6["B_v"][0])
    B_p = [B_x] + [math.sqrt(k) for k in arch.widths[1:]]
    total = 0.0
    for j in range(1, arch.N + 1):
        Kj = arch.widths[j]
        dA = math.sqrt(Kj) * (b6["e_s"][j - 1] * (B_p[j - 1] + e_p[j - 1]) + b6["B_s"][j - 1] * e_p[j - 1])
        total += dA**2
    return 0.5 * math.sqrt(total)


def corollary_bounds(eps: float, L_f: float, n: int, eta: float, steps: int) -> pd.DataFrame:
    """Per step l: Corollary 1.1 as printed, ``L_f⁻¹ (1 + n L_f)^l ε``, and the bound that the one-step
    error ``η ε`` and a ``(1 + η L_f)``-Lipschitz projected GD step give by induction,
    ``Σ_{i<l} (1 + η L_f)^i η ε = L_f⁻¹ ((1 + η L_f)^l − 1) ε`` (Lemma G.1 of Bai et al. 2023 has ``η``)."""
    ls = list(range(steps + 1))
    return pd.DataFrame({"step": ls,
                         "paper": [(1 + n * L_f) ** l * eps / L_f for l in ls],
                         "induction": [((1 + eta * L_f) ** l - 1) * eps / L_f for l in ls]})
