"""Sums of ReLUs in the exact sense of ICDL Def. 4 (Bai et al. 2023, Def. 12).
Introduced in chapter ``relu_sums``; the constructions of ``attention_passes`` and
``icgd_transformer`` evaluate r, r' and u through these sums.

A function ``g: R^k → R`` is (ε, R, H, C)-approximable if some

    f(z) = Σ_{h ≤ H} c_h σ(a_hᵀ [z; 1]),   ‖a_h‖₁ ≤ 1,   Σ_h |c_h| ≤ C

is within ε of ``g`` on ``[−R, R]^k``. :class:`ReluSum` stores ``(a_h, c_h)`` and checks
``‖a_h‖₁ ≤ 1`` at construction; ``C`` is reported as the exact ``Σ|c_h|`` of the sum.

How we build them (deterministic, no training):

* :func:`interpolate_1d` -- the piecewise-linear interpolant of ``g`` at ``H − 1`` equally
  spaced knots of ``[−R, R]``, written exactly as a sum of ReLUs. Each kink at ``t`` is
  ``(1 + |t|) σ((z − t)/(1 + |t|))``, which keeps ``‖a‖₁ = 1``. For ``g ∈ C²`` the sup error
  is at most ``h² max|g''| / 8`` with knot spacing ``h`` -- of order ``H⁻²`` in one variable,
  far better than the general ``H^{−1/2}`` of ICDL Lemma 7.
* :func:`ridge` -- lifts a one-variable sum ``f`` to ``z ↦ f(wᵀz)`` on ``[−R, R]^k``, rescaling
  each ``a_h`` (and ``c_h``) so that ``‖a_h‖₁ ≤ 1`` still holds.
* :func:`add` -- the sum of two sums (concatenated terms).

Two-variable targets of the book are ridge functions or sums of them: ``u(t, y)`` for the
squared loss is ``2(t − y)`` (exact with two ReLUs), for the log-cosh loss ``tanh(t − y)``,
for the logistic loss ``sigmoid(t) − y``, and the product ``xy = ((x + y)² − (x − y)²)/4``
(REB tzww Q1: the element-wise multiplication layer replaced by ReLUs).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .checks import finite

Tensor = torch.Tensor


@dataclass(frozen=True)
class ReluSum:
    """``f(z) = Σ_h c_h σ(a_hᵀ [z; 1])`` with ``A = [a_1; …; a_H]`` of shape ``(H, k+1)``."""

    A: Tensor  # (H, k + 1), float64
    c: Tensor  # (H,)

    def __post_init__(self) -> None:
        if self.A.dim() != 2 or self.c.shape != (self.A.shape[0],):
            raise ValueError(f"A must be (H, k+1) and c (H,), got {tuple(self.A.shape)} and {tuple(self.c.shape)}")
        finite("A of the sum of ReLUs", self.A)
        finite("c of the sum of ReLUs", self.c)
        l1 = self.A.abs().sum(1)
        if torch.any(l1 > 1 + 1e-12):
            raise ValueError(f"Def. 4 requires ‖a_h‖₁ ≤ 1; largest is {float(l1.max())}")

    @property
    def k(self) -> int:
        return self.A.shape[1] - 1

    @property
    def H(self) -> int:
        return self.A.shape[0]

    @property
    def C(self) -> float:
        """``Σ_h |c_h|``: the C of Def. 4 that this sum achieves."""
        return float(self.c.abs().sum())

    def __call__(self, z: Tensor) -> Tensor:
        """``z`` of shape ``(..., k)`` (or ``(...)`` when k = 1) -> ``(...)``."""
        z = finite("the input z", torch.as_tensor(z, dtype=self.A.dtype))
        if self.k == 1 and (z.dim() == 0 or z.shape[-1] != 1):
            z = z[..., None]
        if z.shape[-1] != self.k:
            raise ValueError(f"this sum takes k = {self.k} variables, got input of shape {tuple(z.shape)}")
        pre = z @ self.A[:, :-1].T + self.A[:, -1]
        return torch.relu(pre) @ self.c


def _check_R_H(R: float, H: int) -> None:
    """R a finite positive number, H an integer >= 3 (a float H or an infinite R used to end deep inside
    ``linspace`` or in a sum full of NaN)."""
    if isinstance(H, bool) or not isinstance(H, int):
        raise TypeError(f"H (the number of ReLUs) must be an int >= 3, got {H!r} of type {type(H).__name__}")
    if H < 3:
        raise ValueError(f"H must be >= 3 (constant, ramp and one kink), got {H}")
    if isinstance(R, bool) or not isinstance(R, (int, float)) or not math.isfinite(R) or not R > 0:
        raise ValueError(f"R (the half-width of the box) must be a finite number > 0, got {R!r}")


def interpolate_1d(g: Callable[[Tensor], Tensor], R: float, H: int) -> ReluSum:
    """The piecewise-linear interpolant of ``g`` at ``H`` equal knots of ``[−R, R]`` as a sum of
    exactly ``H`` ReLUs -- a constant, a ramp from ``−R`` and ``H − 2`` kinks -- exact on ``[−R, R]``."""
    _check_R_H(R, H)
    f64 = torch.float64
    t = torch.linspace(-R, R, H, dtype=f64)
    gt = finite(f"the target's values on [−{R:g}, {R:g}]", g(t))
    slopes = torch.diff(gt) / torch.diff(t)                     # H − 1 segment slopes
    kinks = t[1:-1]                                              # H − 2 interior knots
    scale = 1 + kinks.abs()
    A = torch.cat([torch.tensor([[0.0, 1.0], [1 / (1 + R), R / (1 + R)]], dtype=f64),
                   torch.stack([1 / scale, -kinks / scale], 1)])
    c = torch.cat([torch.stack([gt[0], slopes[0] * (1 + R)]),  # σ(1) = 1 times g(−R); σ((z+R)/(1+R))
                   torch.diff(slopes) * scale])                  # (1 + |t|) σ((z − t)/(1 + |t|))
    return ReluSum(A, c)


def ridge(f: ReluSum, w: Tensor) -> ReluSum:
    """``z ↦ f(wᵀz)`` as a sum of ReLUs in ``k = len(w)`` variables, keeping ``‖a_h‖₁ ≤ 1``.

    ``σ(α wᵀz + β) = s σ((α wᵀz + β)/s)`` with ``s = |α| ‖w‖₁ + |β|`` whenever that exceeds 1.
    """
    if f.k != 1:
        raise ValueError("ridge lifts a one-variable sum")
    w = finite("the ridge direction w", torch.as_tensor(w, dtype=torch.float64))
    if w.dim() != 1 or len(w) == 0:
        raise ValueError(f"the ridge direction w must be a non-empty vector, got shape {tuple(w.shape)}")
    alpha, beta = f.A[:, 0], f.A[:, 1]
    A = torch.cat([alpha[:, None] * w[None, :], beta[:, None]], 1)
    s = torch.clamp(A.abs().sum(1), min=1.0)
    return ReluSum(A / s[:, None], f.c * s)


def add(*sums: ReluSum, weights: tuple[float, ...] | None = None) -> ReluSum:
    """``Σ_i weights_i f_i`` as one sum (terms concatenated)."""
    weights = weights or (1.0,) * len(sums)
    if len({s.k for s in sums}) != 1:
        raise ValueError("all sums must take the same number of variables")
    return ReluSum(torch.cat([s.A for s in sums]), torch.cat([w * s.c for s, w in zip(sums, weights)]))


# ---- targets -----------------------------------------------------------------------------------


def _sig(z):
    return torch.sigmoid(z)


ONE_D: dict[str, Callable[[Tensor], Tensor]] = {
    "sigmoid": _sig,
    "sigmoid'": lambda z: _sig(z) * (1 - _sig(z)),
    "tanh": torch.tanh,
    "tanh'": lambda z: 1 - torch.tanh(z) ** 2,
    "softplus": lambda z: torch.logaddexp(z, torch.zeros_like(z)),
    "softplus'": _sig,
}

TWO_D: dict[str, Callable[[Tensor], Tensor]] = {
    "u squared: 2(t − y)": lambda z: 2 * (z[..., 0] - z[..., 1]),
    "u logcosh: tanh(t − y)": lambda z: torch.tanh(z[..., 0] - z[..., 1]),
    "u logistic: sigmoid(t) − y": lambda z: _sig(z[..., 0]) - z[..., 1],
    "product: t·y": lambda z: z[..., 0] * z[..., 1],
}

TARGETS = {**ONE_D, **TWO_D}

#: the two-variable target that stands for ``u(t, y)`` of each loss in :data:`icdl.networks.LOSSES`
U_TARGETS = {"squared": "u squared: 2(t − y)", "logcosh": "u logcosh: tanh(t − y)",
             "logistic": "u logistic: sigmoid(t) − y"}


def _exact_linear(w: tuple[float, ...]) -> ReluSum:
    """``wᵀz`` exactly: ``σ(wᵀz/‖w‖₁) − σ(−wᵀz/‖w‖₁)`` times ``‖w‖₁`` (two ReLUs)."""
    w = torch.tensor(w, dtype=torch.float64)
    n = float(w.abs().sum())
    A = torch.stack([torch.cat([w / n, torch.zeros(1, dtype=torch.float64)]),
                     torch.cat([-w / n, torch.zeros(1, dtype=torch.float64)])])
    return ReluSum(A, torch.tensor([n, -n], dtype=torch.float64))


@functools.lru_cache(maxsize=512, typed=True)
def fit(target: str, R: float, H: int) -> ReluSum:
    """A deterministic (ε, R, ·, C)-approximation of a named target with about ``H`` ReLUs
    (two-variable targets built from ridge pieces may use a few more; see :attr:`ReluSum.H`).
    Cached: the same arguments return the same object."""
    _check_R_H(R, H)
    if target in ONE_D:
        return interpolate_1d(ONE_D[target], R, H)
    if target == "u squared: 2(t − y)":
        return _exact_linear((2.0, -2.0))
    if target == "u logcosh: tanh(t − y)":   # ridge along (1, −1): t − y ∈ [−2R, 2R]
        return ridge(interpolate_1d(torch.tanh, 2 * R, H), (1.0, -1.0))
    if target == "u logistic: sigmoid(t) − y":
        return add(ridge(interpolate_1d(_sig, R, H), (1.0, 0.0)), _exact_linear((0.0, -1.0)))
    if target == "product: t·y":            # ((t + y)² − (t − y)²) / 4
        sq = interpolate_1d(lambda s: s * s, 2 * R, max(3, H // 2))
        return add(ridge(sq, (1.0, 1.0)), ridge(sq, (1.0, -1.0)), weights=(0.25, -0.25))
    raise ValueError(f"unknown target {target!r}; known targets: {list(TARGETS)}")


#: the fewest grid points per axis :func:`sup_error` takes: the two ends of ``[−R, R]`` (where an interpolant
#: of :func:`interpolate_1d` is exact, so a grid of the ends alone always reports 0) and one point between
SUP_MIN_POINTS = 3


def sup_error(f: ReluSum, g: Callable[[Tensor], Tensor], R: float, points: int | None = None) -> float:
    """``max |g − f|`` on a dense grid of ``[−R, R]^k`` (``points`` per axis: by default 20001 for k = 1, 301
    for k = 2; at least :data:`SUP_MIN_POINTS` -- a grid of one or two points is no sup)."""
    if isinstance(R, bool) or not isinstance(R, (int, float)) or not math.isfinite(R) or not R > 0:
        raise ValueError(f"R (the half-width of the box) must be a finite number > 0, got {R!r}")
    if points is not None and (isinstance(points, bool) or not isinstance(points, int) or points < SUP_MIN_POINTS):
        raise ValueError(f"points (grid points per axis of the sup) must be an integer >= {SUP_MIN_POINTS} "
                         f"(or None for the default grid), got {points!r}")
    if f.k == 1:
        z = torch.linspace(-R, R, points or 20001, dtype=torch.float64)
        return float((g(z) - f(z)).abs().max())
    if f.k == 2:
        m = points or 301
        grid = torch.linspace(-R, R, m, dtype=torch.float64)
        z = torch.stack(torch.meshgrid(grid, grid, indexing="ij"), -1).reshape(-1, 2)
        return float((g(z) - f(z)).abs().max())
    raise ValueError("sup_error supports k = 1 or 2")
