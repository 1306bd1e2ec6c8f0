"""The public functions refuse what they cannot compute by name, in one line: non-finite numbers, impossible
shapes and sizes, degenerate statistics -- where they used to return NaN, cut 5.7 to 5, run -1 steps as 0
or swap a band (each case below returned silently before)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icdl import layers
from icdl.gpt_icl.core import baselines as bl
from icdl.networks import Architecture, init_weights, projected_gd
from icdl.prompts import PromptError, build_prompt
from icdl.relu_sums import ReluSum, interpolate_1d, ridge

NAN = float("nan")


def _tokens(D=5, T=4, bad=None):
    H = torch.randn(2, D, T, dtype=torch.float64)
    if bad is not None:
        H[1, 2, 3] = bad
    return H


@pytest.mark.parametrize("layer", [
    layers.ReLUAttention(5, 2), layers.MLPLayer(5, 3), layers.EWMLayer(5, 1),
    layers.SoftmaxAttention(5, dtype=torch.float64), layers.FeedForward(5, 3, dtype=torch.float64),
    layers.SoftmaxBlock(5, 3, dtype=torch.float64),
], ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("bad", [NAN, math.inf, -math.inf])
def test_every_layer_refuses_non_finite_tokens(layer, bad):
    layer(_tokens())  # finite tokens pass
    with pytest.raises(ValueError, match="NaN or inf"):
        layer(_tokens(bad=bad))


def test_sums_of_relus_refuse_non_finite_coefficients_inputs_and_targets():
    with pytest.raises(ValueError, match="A of the sum of ReLUs contains NaN"):
        ReluSum(torch.tensor([[NAN, 0.0]], dtype=torch.float64), torch.ones(1, dtype=torch.float64))
    f = interpolate_1d(torch.sin, 1.0, 5)
    with pytest.raises(ValueError, match="the input z contains NaN"):
        f(torch.tensor([0.1, NAN]))
    with pytest.raises(ValueError, match="the ridge direction w contains NaN"):
        ridge(f, torch.tensor([1.0, NAN]))
    with pytest.raises(ValueError, match="non-empty vector"):
        ridge(f, torch.tensor([]))
    with pytest.raises(ValueError, match="target's values"):
        interpolate_1d(lambda t: torch.log(t), 1.0, 5)  # log of negative knots: NaN


def test_projected_gd_refuses_negative_steps_and_bad_step_sizes():
    arch = Architecture(2, 2, 2, 1)
    w0 = init_weights(arch)
    x, y = torch.randn(4, 2, dtype=torch.float64), torch.randn(4, 1, dtype=torch.float64)
    assert len(projected_gd(arch, w0, x, y, eta=0.1, steps=0, B_w=1.0)) == 1
    for kw, name in ((dict(steps=-1), "steps"), (dict(steps=2.5), "steps"), (dict(eta=NAN), "eta"),
                     (dict(eta=-0.1), "eta"), (dict(B_w=0.0), "B_w")):
        with pytest.raises(ValueError, match=name):
            projected_gd(arch, w0, x, y, **{"eta": 0.1, "steps": 1, "B_w": 1.0, **kw})


def test_build_prompt_refuses_a_fractional_token_size():
    x, y, q = torch.randn(3, 2), torch.randn(3), torch.randn(2)
    assert build_prompt(x, y, q, D=6).shape == (6, 4)
    with pytest.raises(PromptError, match="D must be an integer"):
        build_prompt(x, y, q, D=5.7)


def test_baselines_and_r2_refuse_what_they_cannot_score():
    xs, ys = torch.randn(8, 6, 3), torch.randn(8, 6)
    for fn in (bl.context_mean, bl.least_squares, bl.nearest_neighbours):
        bad = xs.clone()
        bad[2, 1, 0] = NAN
        with pytest.raises(ValueError, match="xs contains NaN"):
            fn(bad, ys)
        with pytest.raises(ValueError, match="xs must be"):
            fn(xs[0], ys)
    with pytest.raises(ValueError, match="xs contains NaN"):
        bl.trained_mlp(torch.full((4, 3, 2), NAN), torch.randn(4, 3), 2, depth=2, width=4, epochs=1)
    with pytest.raises(ValueError, match="the same in every prompt"):
        bl.r2_across_prompts(torch.randn(8, 6), torch.ones(8, 6))
    with pytest.raises(ValueError, match="at least 2 prompts"):
        bl.r2_across_prompts(torch.randn(1, 6), torch.randn(1, 6))
    with pytest.raises(ValueError, match="the predictions contains NaN"):
        bl.r2_across_prompts(torch.full((8, 6), NAN), ys)
    for q in (2.0, 0.0, -0.1, 1.0):
        with pytest.raises(ValueError, match="q must lie in"):
            bl.bootstrap_band(torch.randn(8, 6), ys, q=q)


@settings(max_examples=40, deadline=None)
@given(b=st.integers(0, 5), i=st.integers(0, 6), j=st.integers(0, 2), bad=st.sampled_from([NAN, math.inf, -math.inf]),
       where=st.sampled_from(["xs", "ys"]))
def test_no_baseline_turns_one_bad_number_into_a_silent_result(b, i, j, bad, where):
    """Whichever entry of the prompts is NaN or infinite, every baseline refuses (a masked-out position, or a
    label no neighbour would pick, must not let it through)."""
    xs, ys = torch.randn(6, 7, 3), torch.randn(6, 7)
    if where == "xs":
        xs[b, i, j] = bad
    else:
        ys[b, i] = bad
    for fn in (bl.context_mean, bl.least_squares, bl.nearest_neighbours):
        with pytest.raises(ValueError, match="NaN or inf"):
            fn(xs, ys)
