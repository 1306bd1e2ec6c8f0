"""The in-context prompt matrix ``H`` of ICDL eq. 2.1.
Used by chapters ``icgd_linear`` (where it is introduced) and ``attention_passes``.

Column ``i`` of ``H ∈ R^{D×(n+1)}`` is the token ``[x_i; y_i; q_i]`` with
``q_i = [0_{D−(d+3)}; 1; t_i]``: ``n`` in-context examples (``t_i = 1``) followed by
the query (``t_{n+1} = 0``, ``y_{n+1} = 0``). The zero block is scratch space in
which a constructed transformer writes its working variables (the weights ``w``,
the forward-pass terms, ...).

Row layout used throughout the package::

    rows 0 .. d-1        x_i
    row  d               y_i
    rows d+1 .. D-3      scratch (zeros in the prompt)
    row  D-2             1
    row  D-1             t_i
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .errors import OneLineError


class PromptError(OneLineError):
    """A prompt that does not have the shape, dtype or content eq. 2.1 requires."""


@dataclass(frozen=True)
class PromptLayout:
    """Row indices of a prompt with input size ``d`` and token size ``D``."""

    d: int
    D: int

    def __post_init__(self) -> None:
        if self.d < 1:
            raise PromptError(f"d must be >= 1, got d={self.d}")
        if self.D < self.d + 3:
            raise PromptError(f"D must be >= d + 3 = {self.d + 3} (x, y, 1, t), got D={self.D}")

    @property
    def x(self) -> slice:
        return slice(0, self.d)

    @property
    def y(self) -> int:
        return self.d

    @property
    def scratch(self) -> slice:
        return slice(self.d + 1, self.D - 2)

    @property
    def one(self) -> int:
        return self.D - 2

    @property
    def t(self) -> int:
        return self.D - 1


def _as_float_tensor(name: str, value) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        try:
            value = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError) as err:
            raise PromptError(f"{name} must be a tensor or array of numbers: {err}") from None
    if not value.is_floating_point():
        raise PromptError(f"{name} must have a floating dtype (float32 or float64), got {value.dtype}")
    if not torch.isfinite(value).all():
        raise PromptError(f"{name} contains NaN or inf")
    return value


def build_prompt(x: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor, D: int | None = None) -> torch.Tensor:
    """Assemble ``H`` (eq. 2.1) from examples and a query.

    Shapes, with an optional leading batch dimension ``B``:
    ``x`` is ``(B, n, d)``, ``y`` is ``(B, n)``, ``x_query`` is ``(B, d)``.
    Returns ``H`` of shape ``(B, D, n + 1)`` (or ``(D, n + 1)`` without batch).
    ``D`` defaults to the smallest allowed size ``d + 3``.
    """
    x = _as_float_tensor("x", x)
    y = _as_float_tensor("y", y)
    x_query = _as_float_tensor("x_query", x_query)
    batched = x.dim() == 3
    if not batched:
        if x.dim() != 2:
            raise PromptError(f"x must have shape (n, d) or (B, n, d), got {tuple(x.shape)}")
        x, y, x_query = x[None], y[None], x_query[None]
    if y.dim() != 2 or y.shape != x.shape[:2]:
        raise PromptError(f"y must have shape {tuple(x.shape[:2])} to match x of shape {tuple(x.shape)}, "
                          f"got {tuple(y.shape)}")
    if x_query.dim() != 2 or x_query.shape != (x.shape[0], x.shape[2]):
        raise PromptError(f"x_query must have shape {(x.shape[0], x.shape[2])}, got {tuple(x_query.shape)}")
    if len({x.dtype, y.dtype, x_query.dtype}) != 1:
        raise PromptError(f"x, y and x_query must share one dtype, got {x.dtype}, {y.dtype}, {x_query.dtype}")
    B, n, d = x.shape
    if n < 1:
        raise PromptError("a prompt needs at least one in-context example (n >= 1)")
    if D is not None and (isinstance(D, bool) or not isinstance(D, int)):
        raise PromptError(f"D must be an integer token size, got {D!r}")
    layout = PromptLayout(d, d + 3 if D is None else D)
    H = torch.zeros(B, layout.D, n + 1, dtype=x.dtype)
    H[:, layout.x, :n] = x.transpose(1, 2)
    H[:, layout.x, n] = x_query
    H[:, layout.y, :n] = y
    H[:, layout.one, :] = 1.0
    H[:, layout.t, :n] = 1.0
    return H if batched else H[0]


def check_prompt(H: torch.Tensor, d: int) -> PromptLayout:
    """Validate a prompt built for input size ``d``; return its layout.

    Checks the shape, that the constant row is 1, that ``t`` marks exactly the last
    token as the query, and that the query's ``y`` is 0.
    """
    H = _as_float_tensor("H", H)
    if H.dim() not in (2, 3):
        raise PromptError(f"H must have shape (D, n+1) or (B, D, n+1), got {tuple(H.shape)}")
    Hb = H if H.dim() == 3 else H[None]
    layout = PromptLayout(d, Hb.shape[1])
    if Hb.shape[2] < 2:
        raise PromptError(f"H needs at least 2 tokens (one example and the query), got {Hb.shape[2]}")
    if not torch.all(Hb[:, layout.one, :] == 1):
        raise PromptError(f"row {layout.one} of H (the constant 1 of q_i) must be all ones")
    t = Hb[:, layout.t, :]
    expected = torch.ones_like(t)
    expected[:, -1] = 0
    if not torch.equal(t, expected):
        raise PromptError(f"row {layout.t} of H (t_i) must be 1 for every example and 0 for the last token "
                          "(the query) only")
    if not torch.all(Hb[:, layout.y, -1] == 0):
        raise PromptError(f"the query's y (row {layout.y}, last column) must be 0")
    return layout
