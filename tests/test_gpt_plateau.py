"""The context-mean plateau study (icdl.gpt_icl.plateau)."""

import math

import pandas as pd
import pytest
import torch

from icdl.gpt_icl import plateau
from icdl.gpt_icl.core import baselines as bl


def test_shortcut_is_exact_on_inputs_along_one_direction():
    """If every input lies on one ray, a positively homogeneous target is y = c·(1ᵀx): the shortcut
    (context mean × 1ᵀx_k / 1ᵀx̄) then predicts every label after the first exactly, the context mean does
    not -- the property the plateau hypothesis rests on."""
    g = torch.Generator().manual_seed(1)
    s = 1 + torch.rand(64, 10, 1, generator=g)
    xs = -2 * s * torch.ones(1, 1, 4)
    ys = torch.relu(torch.randn(64, 1, generator=g)) * xs.sum(-1)
    pred = plateau.study.shortcut_predictor(xs, ys)
    assert torch.allclose(pred[:, 1:], ys[:, 1:], atol=1e-5)
    assert (bl.context_mean(xs, ys)[:, 1:] - ys[:, 1:]).abs().max() > 0.1
    assert torch.equal(pred[:, 0], torch.zeros(64))


def test_leave_step_reads_the_midpoint():
    levels = pd.DataFrame({"family": ["a", "b"], "context_mean": [0.7, 0.8], "least_squares": [0.9, 1.0]})
    hist = pd.DataFrame({"family": ["a"] * 3 + ["b"] * 3, "step": [10, 20, 30] * 2,
                         "val_r2": [0.75, 0.81, 0.85, 0.80, 0.85, 0.89]})
    out = plateau.study.leave_step(hist, levels).set_index("family")
    assert out.loc["a", "left_at_step"] == 20 and out.loc["a", "final_excess"] == pytest.approx(0.15)
    assert math.isnan(out.loc["b", "left_at_step"])  # 0.89 < midpoint 0.9: never left
    # at the midpoint exactly (0.75 between 0.5 and 1.0, exact in floats) is not above it: left one step later
    lv = pd.DataFrame({"family": ["c"], "context_mean": [0.5], "least_squares": [1.0]})
    h = pd.DataFrame({"family": ["c"] * 2, "step": [10, 20], "val_r2": [0.75, 0.8]})
    assert plateau.study.leave_step(h, lv).set_index("family").loc["c", "left_at_step"] == 20


def test_the_table_shows_the_shares_as_the_prose_quotes_them():
    """``summary_shown``: the within-prompt share and its linear part in per cent, the number the prose glues
    (``glue_values``: relu_within); the bugs: the table's 0.03 beside the prose's 3 %, or a share multiplied twice."""
    summ = pd.DataFrame({"family": [plateau.study.RELU_2D.label, plateau.study.TANH_100.label],
                         "within_share": [0.031, 0.42], "linear_share_of_within": [0.5, 0.875],
                         "left_at_step": [float("nan"), 3000.0], "final_excess": [0.01, 0.2]})
    shown = plateau.study.summary_shown(summ)
    assert list(shown["within_share"]) == ["3 %", "42 %"] and list(shown["linear_share_of_within"]) == ["50 %", "88 %"]
    assert list(shown.columns)[:3] == ["family", "within_share", "linear_share_of_within"]
    shortcut = pd.DataFrame({"position": [20], "r2 model": [0.5], "r2 context mean": [0.4], "r2 shortcut": [0.45],
                             "model explained by context mean": [0.9], "model explained by context mean + shortcut":
                             [0.99]})
    assert f"{plateau.study.glue_values(summ, shortcut)['relu_within']} %" == shown["within_share"].iloc[0]
    assert summ["within_share"].iloc[0] == 0.031  # the result itself is left as it was
