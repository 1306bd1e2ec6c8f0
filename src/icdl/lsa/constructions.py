"""Hagiwara's constructions, weights from the paper's formulas (chapter ``lsa_construction``):

* :func:`construction_tf422` -- TF(4, 2, 2) of section 3 (eqs. 18–56): the first LayerNorm centres x and y,
  the second divides by V, so the output is the least-squares estimate for large R and N;
* :func:`gd_two_steps_tf432` -- TF(4, 3, 2) without LayerNorm doing two GD steps on θ (Appendix B), with
  :func:`gd_two_steps_closed_form` and :func:`gd_two_steps_explicit` to check it against;
* :func:`appendix_a_pair` -- two inputs with the same LSA output (Appendix A);
* :func:`construction_errors`, :func:`gd_two_steps_errors` -- their errors against N and R, and
  :func:`flat_from`, the R from which on the error no longer depends on R;
* :func:`construction_precision` -- TF(4, 2, 2) in float32 against float64 (the error grows like RN).
"""

from __future__ import annotations

import math

import pandas as pd
import torch

from ..checks import finite_number
from ..repro.profiles import ProfileSet
from .model import TF, LSAData, _corr, lsa_head, sample_data

Tensor = torch.Tensor


PROFILES = ProfileSet(
    "lsa_construction",
    profiles={"quick": {"prompts": 2000, "seed": 0}, "reference": {"prompts": 20000, "seed": 0}},
    ranges={"prompts": (10, 1_000_000), "seed": (0, 2**31 - 1)},
)


def _check_N(N) -> None:
    if isinstance(N, bool) or not isinstance(N, int) or N < 2:
        raise ValueError(f"N (examples per prompt) must be an integer with N >= 2, got {N!r}")


def _e(i: int, j: int, D: int = 4) -> Tensor:
    """The D×D matrix unit with a one at (i, j), 1-based as in the paper."""
    M = torch.zeros(D, D, dtype=torch.float64)
    M[i - 1, j - 1] = 1.0
    return M


@torch.no_grad()
def construction_tf422(N: int, R: float) -> TF:
    """The explicit TF(4, 2, 2) of LSA section 3 (eqs. 18–56), float64, exact LayerNorm (ε = 0).

    Layer 1, head 1 writes a token-independent row whose LayerNorm centres x and y
    (eqs. 25–35); layer 2 puts ``±C Δx / (√2 R N)`` and ``±V`` in one row so that
    LayerNorm divides by ``V`` (eqs. 41–53); the output weight ``−RN`` on cell
    ``(3, N+1)`` reads the estimate (eqs. 54–56). Heads not used are zero (29).
    """
    _check_N(N)
    finite_number("R", R, low=0.0, open_interval=True)
    m = TF(4, 2, 2, N + 1, runs=1, ln_eps=0.0, dtype=torch.float64)
    m.W.zero_()
    m.W_out.zero_()
    s2 = math.sqrt(2.0)
    RN = R * N
    m.W_in[0] = torch.tensor([[1.0, 0, 0], [0, 1 / RN, 0], [0, 0, 1 / RN],
                              [s2 * N / (N + 1), -1 / RN, -1 / RN]], dtype=torch.float64)       # (18)
    # layer 1, head 1 (25)-(27): row [N, -x̄/(√2R), -ȳ/(√2R), -N + (x̄+ȳ)/(√2R)] in every token
    m.W[0, 0, 0, 0] = _e(1, 1)
    m.W[0, 0, 0, 1] = torch.diag(torch.tensor([N / (N + 1), -1 / s2, -1 / s2, -1 / s2], dtype=torch.float64))
    m.W[0, 0, 0, 2] = _e(1, 1)
    # layer 2, head 1 (41)-(43): [0, C Δx_n/(√2RN), -C Δx_n/(√2RN), 0]
    m.W[0, 1, 0, 0] = _e(1, 2)
    m.W[0, 1, 0, 1] = R**2 * N / s2 * (_e(3, 2) - _e(3, 3))
    m.W[0, 1, 0, 2] = _e(2, 1)
    # layer 2, head 2 (45)-(47): [V, 0, 0, -V]
    m.W[0, 1, 1, 0] = _e(1, 2)
    m.W[0, 1, 1, 1] = R**2 * N * (_e(2, 1) - _e(2, 4))
    m.W[0, 1, 1, 2] = _e(1, 1) / (1 + s2)
    m.W_out[0, 2, N] = -RN                                                                    # (55)
    return m


@torch.no_grad()
def gd_two_steps_tf432(N: int, eta: float, a: float) -> TF:
    """TF(4, 3, 2) without LayerNorm doing two GD steps from θ(0) = a (LSA Appendix B, eqs. 68–108),
    with ``(α₁, α₂, β₂, α₃, β₃) = (√(Nη), a, −1, −2a, 2)`` (108)."""
    _check_N(N)
    finite_number("eta", eta, low=0.0, open_interval=True)
    finite_number("a (the start θ(0))", a)
    a1, a2, b2, a3, b3 = math.sqrt(N * eta), a, -1.0, -2 * a, 2.0
    m = TF(4, 3, 2, N + 1, runs=1, layernorm=False, dtype=torch.float64)
    m.W.zero_()
    m.W_out.zero_()
    m.W_in[0] = torch.tensor([[1.0, 0, 0], [0, a1, 0], [0, a2, b2], [0, a3, b3]], dtype=torch.float64)  # (68)
    # layer 1: subtract the means, head 1 from embeddings 3-4 (72)-(75), head 2 from embedding 2 (77)-(80)
    m.W[0, 0, 0, 0] = -_e(1, 1) / N
    m.W[0, 0, 0, 1] = _e(3, 3) + _e(4, 4)
    m.W[0, 0, 0, 2] = _e(1, 1)
    m.W[0, 0, 1, 0] = -_e(1, 1) / N
    m.W[0, 0, 1, 1] = _e(2, 2)
    m.W[0, 0, 1, 2] = _e(1, 1)
    # layer 2, head 1 (85)-(88): adds ξ₂,₁ α₁ Δx_n to embedding 4
    m.W[0, 1, 0, 0] = _e(1, 2) / N
    m.W[0, 1, 0, 1] = _e(3, 4)
    m.W[0, 1, 0, 2] = _e(2, 1)
    # layer 3, head 1 (95)-(98): adds ξ₃,₁ α₁ Δx_n to embedding 3
    m.W[0, 2, 0, 0] = _e(1, 2) / N
    m.W[0, 2, 0, 1] = _e(4, 3)
    m.W[0, 2, 0, 2] = _e(2, 1)
    m.W_out[0, 2, N] = 1.0                                                                   # (104)
    return m


def _gd_args(d: LSAData, N: int, eta: float, a: float) -> None:
    """``N`` must be the number of examples of ``d``'s prompts (their rows but the query): a larger N would
    take the query row ``[1, u, 0]`` as an example, a smaller one mix a sum over some examples with the means
    (x̄, ȳ, V, C) over all of them."""
    _check_N(N)
    if N != d.P.shape[-2] - 1:
        raise ValueError(f"N={N} must equal the number of examples in the prompts of d ({d.P.shape[-2] - 1}; "
                         "their last row is the query)")
    finite_number("eta", eta, low=0.0, open_interval=True)
    finite_number("a (the start θ(0))", a)


def gd_two_steps_closed_form(d: LSAData, N: int, eta: float, a: float) -> Tensor:
    """Eqs. 66–67: ``ȳ + θ(2)(u − x̄)`` with θ(2) from two GD steps on S(θ) (61) from θ(0) = a."""
    _gd_args(d, N, eta, a)
    th2 = (a + 2 * N * eta * d.C - 2 * N * eta * a * d.V - N**2 * eta**2 * d.C * d.V
           + N**2 * eta**2 * a * d.V**2)
    return d.ybar + th2 * (d.u - d.xbar)


def gd_two_steps_explicit(d: LSAData, N: int, eta: float, a: float) -> Tensor:
    """Two explicit GD steps (63) on S(θ) = ½ Σ_n (y_n − ȳ − θ(x_n − x̄))², then eq. 60 at u."""
    _gd_args(d, N, eta, a)
    x, y = d.P[..., :N, 1], d.P[..., :N, 2]
    dx, dy = x - d.xbar[..., None], y - d.ybar[..., None]
    theta = torch.full_like(d.xbar, a)
    for _ in range(2):
        grad = -((dy - theta[..., None] * dx) * dx).sum(-1)
        theta = theta - eta * grad
    return d.ybar + theta * (d.u - d.xbar)


def appendix_a_pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """LSA Appendix A: two different inputs with the same LSA output.

    ``Q`` with rows ``[1, a_n, b_n]`` under (58) and ``Q'`` with rows ``[1, a_n, a_n + b_n]`` under (59)
    both give the row ``[0, Σa, Σb]`` for every token. Returns the two outputs.
    """
    one = torch.ones_like(a)
    Q1 = torch.stack([one, a, b], -1)
    Q2 = torch.stack([one, a, a + b], -1)
    E11 = torch.zeros(3, 3, dtype=a.dtype)
    E11[0, 0] = 1
    W2_first = torch.diag(torch.tensor([0.0, 1.0, 1.0], dtype=a.dtype))
    W2_second = torch.tensor([[0.0, 0, 0], [0, 1, -1], [0, 0, 1]], dtype=a.dtype)
    return lsa_head(Q1, E11, W2_first, E11), lsa_head(Q2, E11, W2_second, E11)


@torch.no_grad()
def construction_layernorm_check(N: int = 50, R: float = 100.0, prompts: int = 2000, seed: int = 0) -> dict:
    """In the construction, the standard deviation LayerNorm divides by in layer 2 at the query
    token, σ_{2,N+1}, should be about V/√2. Returns the median and largest relative gaps and
    corr(1/σ, 1/V) (LSA Table 1's diagnostic)."""
    d = sample_data((prompts,), N, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    _, _, Hs = construction_tf422(N, R)(d.P[None], keep=True)
    sigma = Hs[1][0, :, N, :].std(-1, unbiased=False)
    ideal = d.V / math.sqrt(2.0)
    gap = (sigma - ideal).abs() / ideal
    return {"median_rel_gap": float(gap.median()), "max_rel_gap": float(gap.max()), "corr": _corr(1 / sigma, 1 / d.V)}


def construction_errors(Ns=(10, 20, 50, 100, 200, 500, 1000), Rs=(1.0, 10.0, 100.0, 1e3, 1e4),
                        prompts: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Mean |TF(4,2,2) − ŷ_LS| over random prompts (data as LSA sec. 4.1) for each N and R, beside
    the terms section 3 neglects: mean |u − x̄|/N and |ȳ|/N (same units), and the mean *squared* error
    ``mse`` -- the quantity LSA Table 1 reports for its trained models."""
    rows = []
    for N in Ns:
        d = sample_data((prompts,), N, generator=torch.Generator().manual_seed(seed + N), dtype=torch.float64)
        for R in Rs:
            with torch.no_grad():
                out = construction_tf422(N, R)(d.P[None])[0]
            rows.append({"N": N, "R": R, "mean_abs_err": float((out - d.target).abs().mean()),
                         "mse": float(((out - d.target) ** 2).mean()),
                         "max_abs_err": float((out - d.target).abs().max()),
                         "u_minus_xbar_over_N": float(((d.u - d.xbar).abs() / N).mean()),
                         "ybar_over_N": float((d.ybar.abs() / N).mean())})
    return pd.DataFrame(rows)


#: how close (relative) the construction's error at R must be to the largest R's, at every N, for the error
#: to count as no longer depending on R: the one tolerance of the chapter's text ("within 2 %") and of its
#: figure, which draws those R as one curve
R_FLAT_RTOL = 0.02


def flat_Rs(errs: pd.DataFrame, rtol: float = R_FLAT_RTOL) -> list[float]:
    """The R (ascending) from which on :func:`construction_errors`' mean error is within ``rtol`` of the
    largest R's at every N: every R of the grid from :func:`flat_from` up (the largest alone at least)."""
    table = errs.pivot_table(index="N", columns="R", values="mean_abs_err")
    change = (table.div(table.iloc[:, -1], axis=0) - 1).abs()
    Rs = list(table.columns)
    start = min(i for i in range(len(Rs)) if (change.iloc[:, i:] < rtol).all().all())
    return [float(R) for R in Rs[start:]]


def flat_from(errs: pd.DataFrame, rtol: float = R_FLAT_RTOL) -> float:
    """The smallest R from which on the construction's error is within ``rtol`` of the largest R's at every N."""
    return flat_Rs(errs, rtol)[0]


def construction_precision(Ns=(10, 50, 200, 1000), Rs=(1.0, 10.0, 100.0, 1e3, 1e4, 1e5), prompts: int = 2000,
                           seed: int = 0) -> pd.DataFrame:
    """The construction in float32 against float64, on the same prompts, for each N and R: the input
    embedding scales x and y by 1/(RN) and the output weight multiplies by −RN, so float32's rounding
    (ε₃₂ ≈ 1.2e-7) is amplified about RN times. Per (N, R): the MSE to least squares in each precision
    and the largest gap between the two outputs, also divided by ``R N ε₃₂``."""
    eps32 = torch.finfo(torch.float32).eps
    rows = []
    for N in Ns:
        d = sample_data((prompts,), N, generator=torch.Generator().manual_seed(seed + N), dtype=torch.float64)
        for R in Rs:
            m = construction_tf422(N, R)
            with torch.no_grad():
                o64 = m(d.P[None])[0]
                o32 = m.to(torch.float32)(d.P[None].float())[0].double()
            gap = float((o32 - o64).abs().max())
            rows.append({"N": N, "R": R, "RN": R * N, "mse_float64": float(((o64 - d.target) ** 2).mean()),
                         "mse_float32": float(((o32 - d.target) ** 2).mean()), "max_gap": gap,
                         "gap_over_RN_eps32": gap / (R * N * eps32)})
    return pd.DataFrame(rows)


def gd_two_steps_errors(Ns=(10, 20, 50, 100, 200, 500, 1000), prompts: int = 2000, eta_N: float = 0.5,
                        a: float = 0.3, seed: int = 0) -> pd.DataFrame:
    """Appendix B checked: the TF(4,3,2) against eqs. 66–67 and against two explicit GD steps, and how
    far two GD steps are from the least-squares estimate; step size η = eta_N / N."""
    rows = []
    for N in Ns:
        d = sample_data((prompts,), N, generator=torch.Generator().manual_seed(seed + N), dtype=torch.float64)
        eta = eta_N / N
        with torch.no_grad():
            tf = gd_two_steps_tf432(N, eta, a)(d.P[None])[0]
        closed = gd_two_steps_closed_form(d, N, eta, a)
        explicit = gd_two_steps_explicit(d, N, eta, a)
        rows.append({"N": N, "tf_vs_closed_form": float((tf - closed).abs().mean()),
                     "closed_form_vs_explicit_gd": float((closed - explicit).abs().max()),
                     "tf_vs_explicit_gd": float((tf - explicit).abs().mean()),
                     "two_gd_steps_vs_ls": float((explicit - d.target).abs().mean())})
    return pd.DataFrame(rows)
