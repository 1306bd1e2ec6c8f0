"""Intervals over seeds and prompts for the claims of ICDL sec. 5 (the experiments' protocol): a number that
decides a claim is reported with the interval that carries both the training noise (several seeds of every
model) and the prompt noise (a finite test set), and a claim whose interval straddles its threshold is
``inconclusive`` (:meth:`icdl.repro.claims.Condition.verdict`).

How. R² across prompts (:func:`icdl.gpt_icl.core.baselines.r2_across_prompts`) is a ratio of sums over prompts,
so a resample of the prompts needs only sums over *blocks* of prompts: per block ``b`` the squared error
``sse_b`` of each predictor and the label sums ``n_b``, ``Σy``, ``Σy²``. With block weights ``w`` (how often
a resample draws each block)

.. math:: R^2(w) = 1 - \\frac{\\sum_b w_b\\, sse_b}{\\sum_b w_b\\, \\Sigma y^2_b - (\\sum_b w_b\\, \\Sigma y_b)^2
          / \\sum_b w_b\\, n_b},

which with ``w = 1`` is the R² of all prompts exactly. The prompts are independent draws, so contiguous
blocks are too, and resampling blocks is a bootstrap of the prompts. One resample draws the block weights
**once for every predictor** (the comparisons are paired: every model and baseline is scored on the same
resampled prompts) and the seeds of every model with replacement (a two-level bootstrap: seeds, then
prompts); a statistic is computed on every resample, and its interval is the central ``LEVEL`` of them.

==========================  ==========================================================================
:func:`block_sums`          ``sse`` per block and position of one predictor
:func:`label_sums`          ``n``, ``Σy``, ``Σy²`` per block and position
:class:`Draws`              the resamples (seed picks and block weights), shared by every statistic
:meth:`Draws.r2`            R² per resample of a predictor over its seeds (row 0: all data, every seed)
:meth:`Draws.mse`           its mean squared error per resample, likewise (and ``mean_square``: the labels')
:func:`summary`             a statistic's value (row 0) and interval (the resamples' quantiles)
==========================  ==========================================================================
"""

from __future__ import annotations

import numpy as np
import torch

from icdl.checks import positive_int

#: the test prompts of a set are split into this many contiguous blocks, the units of the prompt resampling
BLOCKS = 32

#: the central share of the resamples an interval covers (a 90 % interval: the 5 % and 95 % quantiles)
LEVEL = 0.90

#: resamples per interval, and the seed of their generator (fixed: a rerun gives the same interval)
RESAMPLES, DRAW_SEED = 2000, 2024


def prompt_blocks(count: int, blocks: int) -> list[slice]:
    if count < blocks:
        raise ValueError(f"{count} prompts cannot make {blocks} blocks of at least one prompt")
    edges = np.linspace(0, count, blocks + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def block_sums(pred: torch.Tensor, ys: torch.Tensor, positions: list[int], blocks: int = BLOCKS) -> np.ndarray:
    """``(len(positions), blocks)``: the squared error of ``pred`` against ``ys`` (both ``(B, k)``) summed over
    each block of prompts, at the 1-based query ``positions``."""
    if pred.shape != ys.shape or pred.dim() != 2:
        raise ValueError(f"pred and ys must both be (prompts, positions), got {tuple(pred.shape)} and "
                         f"{tuple(ys.shape)}")
    cols = [p - 1 for p in positions]
    err = ((pred[:, cols] - ys[:, cols]) ** 2).double()
    return np.stack([err[sl].sum(0).numpy() for sl in prompt_blocks(len(ys), blocks)], axis=1)


def label_sums(ys: torch.Tensor, positions: list[int], blocks: int = BLOCKS) -> dict[str, np.ndarray]:
    """``{"n": (blocks,), "sy": (P, blocks), "syy": (P, blocks)}``: the prompts per block and the sums of the
    labels and of their squares per block at the 1-based query ``positions``."""
    y = ys[:, [p - 1 for p in positions]].double()
    parts = prompt_blocks(len(ys), blocks)
    return {"n": np.array([sl.stop - sl.start for sl in parts], dtype=float),
            "sy": np.stack([y[sl].sum(0).numpy() for sl in parts], axis=1),
            "syy": np.stack([(y[sl] ** 2).sum(0).numpy() for sl in parts], axis=1)}


class Draws:
    """``resamples`` draws of (seeds, prompt blocks), row 0 being all the data: ``seeds[r]`` the seed picks of
    resample ``r`` (``(seeds,)`` indices, with replacement; row 0 every seed once) and ``weights[r]`` its block
    weights (multinomial counts summing to the number of blocks; row 0 all ones). One :class:`Draws` serves
    every predictor and statistic of a judge, which makes every comparison paired."""

    def __init__(self, n_seeds: int, blocks: int = BLOCKS, resamples: int = RESAMPLES, seed: int = DRAW_SEED):
        positive_int("n_seeds", n_seeds)
        positive_int("blocks", blocks)
        positive_int("resamples", resamples)
        rng = np.random.default_rng(seed)
        self.n_seeds, self.blocks = n_seeds, blocks
        self.seeds = np.vstack([np.arange(n_seeds), rng.integers(0, n_seeds, size=(resamples, n_seeds))])
        picks = rng.integers(0, blocks, size=(resamples, blocks))
        counts = np.stack([np.bincount(row, minlength=blocks) for row in picks])
        self.weights = np.vstack([np.ones(blocks), counts]).astype(float)

    def r2(self, sse: np.ndarray, labels: dict[str, np.ndarray]) -> np.ndarray:
        """``(resamples + 1, P)``: R² of one predictor on every resample, averaged over the resample's seeds.
        ``sse`` is ``(seeds, P, blocks)`` (the predictor's :func:`block_sums` per seed, in seed order) or
        ``(P, blocks)`` for a predictor without seeds (a baseline); ``labels`` the :func:`label_sums` of the
        same prompts and positions."""
        sse = np.asarray(sse, dtype=float)
        if sse.ndim == 2:
            sse = sse[None]
        if sse.shape[2] != self.blocks:
            raise ValueError(f"sse has {sse.shape[2]} blocks, the draws {self.blocks}")
        if sse.shape[0] not in (1, self.n_seeds):
            raise ValueError(f"sse has {sse.shape[0]} seeds, the draws {self.n_seeds} (or 1 for a baseline)")
        w = self.weights
        n = w @ labels["n"]                                            # (R,)
        sst = w @ labels["syy"].T - (w @ labels["sy"].T) ** 2 / n[:, None]  # (R, P)
        per_seed = 1 - np.einsum("spb,rb->rsp", sse, w) / sst[:, None, :]  # (R, S, P)
        if sse.shape[0] == 1:
            return per_seed[:, 0]
        picked = np.take_along_axis(per_seed, self.seeds[:, :, None], axis=1)
        return picked.mean(1)


    def mse(self, sse: np.ndarray, labels: dict[str, np.ndarray]) -> np.ndarray:
        """``(resamples + 1, P)``: the mean squared error of one predictor on every resample, averaged over the
        resample's seeds (shapes as :meth:`r2`)."""
        sse = np.asarray(sse, dtype=float)
        if sse.ndim == 2:
            sse = sse[None]
        n = self.weights @ labels["n"]                                     # (R,)
        per_seed = np.einsum("spb,rb->rsp", sse, self.weights) / n[:, None, None]
        if sse.shape[0] == 1:
            return per_seed[:, 0]
        return np.take_along_axis(per_seed, self.seeds[:, :, None], axis=1).mean(1)

    def mean_square(self, labels: dict[str, np.ndarray]) -> np.ndarray:
        """``(resamples + 1, P)``: the labels' mean square on every resample (the error of predicting 0)."""
        return (self.weights @ labels["syy"].T) / (self.weights @ labels["n"])[:, None]


def summary(stat: np.ndarray, level: float = LEVEL) -> dict[str, float]:
    """``{"value", "lo", "hi"}`` of a statistic computed on every resample (``(resamples + 1,)``, row 0 on
    all the data): the value on all the data and the central ``level`` of the resamples."""
    stat = np.asarray(stat, dtype=float)
    if stat.ndim != 1 or len(stat) < 2:
        raise ValueError(f"a statistic needs one value per resample (row 0: all data), got shape {stat.shape}")
    lo, hi = np.quantile(stat[1:], [(1 - level) / 2, (1 + level) / 2])
    return {"value": float(stat[0]), "lo": float(lo), "hi": float(hi)}
