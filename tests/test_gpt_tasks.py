"""Random target networks and their prompts (icdl.gpt_icl.tasks)."""

import math

import pytest
import torch

from icdl.gpt_icl.tasks import MIXTURES, TaskConfig, apply_networks, output_scale, sample_prompts, sample_x


def test_task_mixture_scale_and_curriculum_mask():
    g = torch.Generator().manual_seed(0)
    cfg = TaskConfig(d=4, depth=3, omega=(0.7, 0.3))
    x = sample_x(cfg, 200, 50, g)
    assert abs(float((x.mean(-1) > 0).float().mean()) - 0.3) < 0.03  # the N(2, I) share
    xs, ys = sample_prompts(TaskConfig(d=4, depth=3), 2000, 8, g)
    assert abs(float(ys.std()) - 1.0) < 0.1  # unit variance under pretraining draws
    assert output_scale(4, 3, 2, 0.0) == output_scale(4, 3, 2, 0.0)
    xs, _ = sample_prompts(TaskConfig(d=4, depth=2), 3, 5, g, dims=2)
    assert xs[..., 2:].abs().max() == 0
    with pytest.raises(ValueError, match="omega"):
        TaskConfig(omega=(0.5, 0.6))
    assert set(MIXTURES) == {"(1, 0)", "(.9, .1)", "(.7, .3)", "(.5, .5)"}


def test_target_families_differ_and_are_named():
    """tanh targets are a different function of the same weights (a family flag that is ignored would make
    the warm phase a no-op); the width overrides width_factor; a wrong family names the choices."""
    g = torch.Generator().manual_seed(0)
    relu, tanh = TaskConfig(d=3, depth=3), TaskConfig(d=3, depth=3, family="tanh", width=7)
    assert relu.K == 6 and tanh.K == 7
    Ws = [torch.randn(2, 6, 3, generator=g), torch.randn(2, 6, 6, generator=g), torch.randn(2, 1, 6, generator=g)]
    x = -2 + torch.randn(2, 5, 3, generator=g)
    a, b = apply_networks(Ws, x, "relu"), apply_networks(Ws, x, "tanh")
    assert a.shape == b.shape == (2, 5) and (a - b).abs().max() > 1e-2
    h = torch.tanh(x @ Ws[0].transpose(1, 2) / math.sqrt(3))
    h = torch.tanh(h @ Ws[1].transpose(1, 2) / math.sqrt(6))
    assert torch.allclose(b, (h @ Ws[2].transpose(1, 2) / math.sqrt(6))[..., 0])
    assert output_scale(3, 3, 2, 0.0, "tanh", 7) != output_scale(3, 3, 2, 0.0, "relu", 7)
    with pytest.raises(ValueError, match="family"):
        TaskConfig(d=3, family="sigmoid")
