"""In-context regression tasks of ICDL sec. 5: random N-layer target networks, inputs from a mixture.

Each prompt draws its own target ``f`` -- an N-layer ReLU network ``R^d → R`` -- and ``k`` inputs
``x_i ~ ω₁ N(−c, I) + ω₂ N(c, I)`` with ``c = 2`` (ICDL's; ``centre = 0`` gives N(0, I), the inputs of REB's
network baselines); labels are ``y_i = f(x_i)``. Choices the paper leaves open, stated
here and in the chapter (all are parameters of :class:`TaskConfig`):

* **family**: ``relu`` (the default; ReLU hidden layers, ``K = 2d`` units) or ``tanh`` (tanh hidden layers) --
  the chapter's reference trains first on tanh targets of width 100 and then on the ReLU ones, because
  training on the ReLU targets alone stays on the context-mean plateau;
* **width** ``K = width_factor · d`` hidden units per layer, or ``width`` when given; no biases, a linear
  output layer;
* **parameters** ``~ N(μ, I)`` entrywise (``μ = 0`` for pretraining; ICDL objective 3 shifts μ), each
  layer's output divided by ``√fan_in`` -- without it a 6-layer network of N(0, 1) weights at x ≈ −2
  has outputs of size ~10⁴ and no sensible loss;
* **what the task asks** (:func:`variance_split`): the label variance split into the part across prompts, the
  part a linear fit within a prompt explains and the rest -- how much of a prompt needs a deep network;
* **output scale**: ``y`` divided by a constant per (N, d, K, μ) -- the standard deviation of ``f(x)``
  over pretraining draws, estimated once from a fixed seed -- so that ``y`` has unit variance.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass

import torch
from torch import Tensor

FAMILIES = ("relu", "tanh")
#: the test mixtures ω of ICDL Figs. 2–4, keyed by the names the result files and figures use
MIXTURES = {"(1, 0)": (1.0, 0.0), "(.9, .1)": (0.9, 0.1), "(.7, .3)": (0.7, 0.3), "(.5, .5)": (0.5, 0.5)}
#: the mixture of the training prompts (x from N(−2, I) alone)
PRETRAINING = "(1, 0)"


def layer_sizes(d: int, width: int, depth: int) -> list[int]:
    """Input, hidden and output sizes of an N-layer network ``R^d → R`` with ``width`` hidden units:
    ``[d, width, …, width, 1]`` (``depth + 1`` entries) -- the targets, the MLP baseline and its timings."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    return [d] + [width] * (depth - 1) + [1]


@dataclass(frozen=True)
class TaskConfig:
    d: int = 20
    depth: int = 3            # N, the number of layers of the target network
    width_factor: int = 2     # K = width_factor · d
    mu: float = 0.0           # parameter mean (objective 3)
    omega: tuple[float, float] = (1.0, 0.0)  # mixture weights of N(−2, I) and N(2, I)
    family: str = "relu"      # hidden activation of the target networks: relu or tanh
    width: int = 0            # hidden units per layer; 0 means width_factor · d
    centre: float = 2.0       # the mixture's components are N(−centre, I) and N(centre, I); 0: N(0, I)

    def __post_init__(self) -> None:
        if self.d < 1 or self.depth < 1 or self.width_factor < 1 or self.width < 0:
            raise ValueError(f"d, depth, width_factor must be >= 1 and width >= 0, got {self.d}, {self.depth}, "
                             f"{self.width_factor}, {self.width}")
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        if len(self.omega) != 2 or min(self.omega) < 0 or not math.isclose(sum(self.omega), 1.0):
            raise ValueError(f"omega must be two non-negative weights summing to 1, got {self.omega}")

    @property
    def K(self) -> int:
        return self.width or self.width_factor * self.d

    def to_dict(self) -> dict:
        """The settings as stored with a model; ``centre`` only where it is not ICDL's 2 (the models trained
        before it existed keep the settings they were saved with)."""
        out = asdict(self)
        if out["centre"] == 2.0:
            del out["centre"]
        return out


def sample_x(cfg: TaskConfig, B: int, k: int, generator: torch.Generator) -> Tensor:
    """``(B, k, d)`` inputs from ``ω₁ N(−c, I) + ω₂ N(c, I)``, ``c = cfg.centre`` (the component drawn per
    input)."""
    plus = torch.rand(B, k, 1, generator=generator) < cfg.omega[1]
    centre = torch.where(plus, cfg.centre, -cfg.centre)
    return centre + torch.randn(B, k, cfg.d, generator=generator)


def sample_networks(cfg: TaskConfig, B: int, generator: torch.Generator) -> list[Tensor]:
    """Weights of B target networks: ``[(B, K, d), (B, K, K), …, (B, 1, K)]``, entries ``~ N(μ, 1)``."""
    sizes = layer_sizes(cfg.d, cfg.K, cfg.depth)
    return [cfg.mu + torch.randn(B, sizes[j + 1], sizes[j], generator=generator) for j in range(cfg.depth)]


def apply_networks(Ws: list[Tensor], x: Tensor, family: str = "relu") -> Tensor:
    """``f_b(x_{b,i})`` for each network b: ReLU (or tanh) hidden layers, linear output, ``1/√fan_in`` per
    layer."""
    act = {"relu": torch.relu, "tanh": torch.tanh}[family]
    h = x
    for j, W in enumerate(Ws):
        h = h @ W.transpose(1, 2) / math.sqrt(W.shape[2])
        if j < len(Ws) - 1:
            h = act(h)
    return h[..., 0]


@functools.lru_cache(maxsize=64)
def output_scale(d: int, depth: int, width_factor: int, mu: float, family: str = "relu", width: int = 0,
                 centre: float = 2.0) -> float:
    """The standard deviation of ``f(x)`` under pretraining draws (x from N(−centre, I)), from 4096 networks
    × 16 inputs with a fixed seed: the constant ``y`` is divided by."""
    cfg = TaskConfig(d=d, depth=depth, width_factor=width_factor, mu=mu, family=family, width=width, centre=centre)
    g = torch.Generator().manual_seed(12345)
    Ws = sample_networks(cfg, 4096, g)
    return float(apply_networks(Ws, sample_x(cfg, 4096, 16, g), family).std())


def sample_prompts(cfg: TaskConfig, B: int, k: int, generator: torch.Generator,
                   scale_mu: float | None = None, dims: int | None = None) -> tuple[Tensor, Tensor]:
    """``xs (B, k, d)`` and ``ys (B, k)`` for B fresh target networks. ``ys`` is divided by the output scale
    of the pretraining distribution (``scale_mu``, default ``cfg.mu``), so that a shifted test distribution
    is measured on the scale the model was trained on. ``dims < d`` zeroes the inputs' last coordinates
    before the targets see them (the curriculum of Garg et al.)."""
    if B < 1 or k < 1:
        raise ValueError(f"B and k must be >= 1, got B={B}, k={k}")
    Ws = sample_networks(cfg, B, generator)
    xs = sample_x(cfg, B, k, generator)
    if dims is not None and dims < cfg.d:
        xs[..., dims:] = 0.0
    scale = output_scale(cfg.d, cfg.depth, cfg.width_factor, cfg.mu if scale_mu is None else scale_mu,
                         cfg.family, cfg.width, cfg.centre)
    return xs, apply_networks(Ws, xs, cfg.family) / scale


# ---- what the task asks: the label variance split ---------------------------------------------------------------

#: the parts of :func:`variance_split`, in the order they add up to the label variance
PARTS = ("offset", "linear", "nonlinear")


def prompt_moments(xs: Tensor, ys: Tensor) -> dict[str, Tensor]:
    """Per prompt (``xs (B, n, d)``, ``ys (B, n)``, float64): the label mean, the label variance within the
    prompt (``n − 1`` in the denominator) and the variance left by the least-squares fit of an affine function
    of x within the prompt (``n − d − 1`` in the denominator, so that it estimates the part no affine function
    explains, not the smaller in-sample residual)."""
    B, n, d = xs.shape
    if n <= d + 1:
        raise ValueError(f"a prompt needs more than d + 1 = {d + 1} inputs to split its variance, got {n}")
    xs, ys = xs.double(), ys.double()
    design = torch.cat([torch.ones(B, n, 1, dtype=xs.dtype), xs], dim=2)
    coef = torch.linalg.lstsq(design, ys.unsqueeze(2)).solution
    resid = ys - (design @ coef).squeeze(2)
    return {"mean": ys.mean(1), "within": ys.var(1, correction=1),
            "residual": (resid ** 2).sum(1) / (n - d - 1), "n": torch.tensor(float(n))}


def shares_of(m: dict[str, Tensor], idx: Tensor | None = None) -> dict[str, Tensor]:
    """The three shares from per-prompt moments (``idx``: a resample of the prompts, ``(R, B)``)."""
    pick = (lambda v: v) if idx is None else (lambda v: v[idx])
    mean, within, residual = pick(m["mean"]), pick(m["within"]), pick(m["residual"])
    # the spread of the prompt means, less the part of it that is within-prompt noise of a mean of n labels
    between = (mean.var(-1, correction=1) - within.mean(-1) / m["n"]).clamp(min=0.0)
    total = between + within.mean(-1)
    nonlinear = residual.mean(-1)
    return {"offset": between / total, "linear": (within.mean(-1) - nonlinear) / total,
            "nonlinear": nonlinear / total}


def variance_split(xs: Tensor, ys: Tensor, *, resamples: int = 1000, seed: int = 0, level: float = 0.90) -> dict:
    """The label variance of a set of prompts split into three shares that add up to 1: ``offset`` (the
    variance of the prompts' own mean labels, i.e. what a constant per prompt explains), ``linear`` (what an
    affine fit of x within each prompt adds) and ``nonlinear`` (what no such fit explains: the part that needs
    more than least squares). Each with its ``level`` interval from a bootstrap over prompts
    (``<part>_lo``, ``<part>_hi``)."""
    m = prompt_moments(xs, ys)
    point = shares_of(m)
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, xs.shape[0], (resamples, xs.shape[0]), generator=g)
    boot = shares_of(m, idx)
    out = {}
    for part in PARTS:
        lo, hi = torch.quantile(boot[part], torch.tensor([(1 - level) / 2, (1 + level) / 2], dtype=torch.float64))
        out |= {part: float(point[part]), f"{part}_lo": float(lo), f"{part}_hi": float(hi)}
    return out


def task_split(cfg: TaskConfig, prompts: int = 2000, inputs: int = 200, seed: int = 0) -> dict:
    """:func:`variance_split` of ``prompts`` prompts of ``inputs`` inputs each drawn from the family ``cfg``."""
    xs, ys = sample_prompts(cfg, prompts, inputs, torch.Generator().manual_seed(seed))
    return variance_split(xs, ys, seed=seed)
