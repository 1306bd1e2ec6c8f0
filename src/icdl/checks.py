"""Boundary checks shared by the package's public functions: a bad argument is refused by name, in one
line, before any arithmetic -- never turned into NaN, a silently cut integer or a swapped band."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def finite(name: str, value: Tensor) -> Tensor:
    """``value`` as a tensor, refused with ``ValueError`` naming ``name`` if any entry is NaN or infinite."""
    value = torch.as_tensor(value)
    if value.is_floating_point() and not torch.isfinite(value).all():
        raise ValueError(f"{name} contains NaN or inf")
    return value


def positive_int(name: str, value, *, minimum: int = 1) -> int:
    """``value`` if it is an integer (not a bool, not 5.7) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def finite_number(name: str, value, *, low: float = -math.inf, high: float = math.inf,
                  open_interval: bool = False) -> float:
    """``value`` if it is a finite real number in ``[low, high]`` (``(low, high)`` with ``open_interval``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    inside = low < value < high if open_interval else low <= value <= high
    if not inside:
        brackets = "()" if open_interval else "[]"
        raise ValueError(f"{name} must lie in {brackets[0]}{low}, {high}{brackets[1]}, got {value!r}")
    return float(value)
