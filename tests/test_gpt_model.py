"""The GPT-2-style in-context learner (icdl.gpt_icl.core.model): token layout, causality, ReLU attention."""

import math

import pytest
import torch

from icdl.gpt_icl.core.model import GPTConfig, InContextGPT

TINY = dict(d=3, n_layer=2, n_head=2, n_embd=16, max_examples=12)


def _model(attention):
    torch.manual_seed(0)
    return InContextGPT(GPTConfig(**TINY, attention=attention)).eval()


def test_interleaving_pads_y_and_alternates():
    xs = torch.arange(12.0).reshape(2, 2, 3)
    ys = torch.tensor([[10.0, 11.0], [12.0, 13.0]])
    z = InContextGPT.interleave(xs, ys)
    assert z.shape == (2, 4, 3)
    assert torch.equal(z[0, 0], xs[0, 0]) and torch.equal(z[0, 2], xs[0, 1])
    assert torch.equal(z[0, 1], torch.tensor([10.0, 0, 0])) and torch.equal(z[1, 3], torch.tensor([13.0, 0, 0]))


@pytest.mark.parametrize("attention", ["softmax", "relu"])
def test_predictions_are_causal(attention):
    """The prediction for y_i must not depend on y_i or on anything after x_i."""
    m = _model(attention)
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(2, 8, 3, generator=g), torch.randn(2, 8, generator=g)
    base = m(xs, ys)
    xs2, ys2 = xs.clone(), ys.clone()
    ys2[:, 4:] += 5.0          # y_5 … : the prediction for y_5 reads x_5 but not y_5
    xs2[:, 5:] += 5.0
    out = m(xs2, ys2)
    torch.testing.assert_close(out[:, :5], base[:, :5], rtol=0, atol=1e-6)
    assert (out[:, 5:] - base[:, 5:]).abs().max() > 1e-4


def test_relu_attention_is_def7_average_over_attended_positions():
    m = _model("relu")
    attn = m.blocks[0].attn
    h = torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(2))
    q, k, v = attn.qkv(h).split(16, dim=2)
    heads = []
    for hd in range(2):
        sl = slice(8 * hd, 8 * hd + 8)
        out = torch.zeros(5, 8)
        for i in range(5):  # token i attends to 0..i and divides by i + 1
            for s in range(i + 1):
                out[i] += torch.relu(q[0, i, sl] @ k[0, s, sl] / math.sqrt(8)) * v[0, s, sl]
            out[i] /= i + 1
        heads.append(out)
    torch.testing.assert_close(attn(h)[0], attn.proj(torch.cat(heads, -1)), rtol=1e-5, atol=1e-6)


def test_the_scores_scale_is_a_rescaled_value_map():
    """ICDL Def. 7 writes σ(qᵀk)/n without the 1/√d_h of our scores. ReLU is positively homogeneous, so
    σ(qᵀk/√d_h) = σ(qᵀk)/√d_h: our layer is Def. 7's with the value map divided by √d_h -- the same functions,
    the scale moved into one matrix (and the chapter lists it as a deviation of parametrisation only). A scale
    inside a non-homogeneous activation (softmax) would not move out; the check that it does for ReLU is here."""
    m = _model("relu")
    attn = m.blocks[0].attn
    h = torch.randn(2, 6, 16, generator=torch.Generator().manual_seed(3))
    q, k, v = (z.view(2, 6, 2, 8).transpose(1, 2) for z in attn.qkv(h).split(16, dim=2))
    mask = torch.ones(6, 6).tril()
    def7 = (torch.relu(q @ k.transpose(-2, -1)) * mask / torch.arange(1, 7.0)[:, None]) @ (v / math.sqrt(8))
    ours = attn(h)
    torch.testing.assert_close(ours, attn.proj(def7.transpose(1, 2).reshape(2, 6, 16)), rtol=1e-5, atol=1e-6)
    unscaled = (torch.relu(q @ k.transpose(-2, -1)) * mask / torch.arange(1, 7.0)[:, None]) @ v
    size = (ours - attn.proj.bias).abs().max()  # relative to the attention's own output (small at init)
    assert (attn.proj(unscaled.transpose(1, 2).reshape(2, 6, 16)) - ours).abs().max() > size  # √8 − 1 times it


def test_bad_model_settings_and_inputs_are_named():
    with pytest.raises(ValueError, match="attention"):
        GPTConfig(attention="linear")
    with pytest.raises(ValueError, match="n_head"):
        GPTConfig(n_embd=30, n_head=4)
    m = _model("softmax")
    with pytest.raises(ValueError, match="max_examples"):
        m(torch.randn(1, 13, 3), torch.randn(1, 13))
    with pytest.raises(ValueError, match="xs"):
        m(torch.randn(1, 4, 2), torch.randn(1, 4))


def test_the_gelu_operator_is_torchs_gelu_bit_for_bit_and_survives_compile():
    """``icdl::gelu`` (kept whole by ``torch.compile``) must be the exact GELU, forward and backward, bit for bit
    in eager mode -- so the committed checkpoints, trained with ``F.gelu``, are still what the model computes.
    A tanh-approximate GELU, or a backward that dropped the erf term, would differ here; so would a compiled
    graph that decomposed it and changed the rounding (the compiled step must call the same kernels)."""
    from torch.nn import functional as F

    from icdl.gpt_icl.core.model import gelu

    g = torch.Generator().manual_seed(3)
    x = (3 * torch.randn(4096, generator=g)).requires_grad_()
    x2 = x.detach().clone().requires_grad_()
    w = torch.randn(4096, generator=g)
    (gelu(x) * w).sum().backward()
    (F.gelu(x2) * w).sum().backward()
    assert torch.equal(gelu(x), F.gelu(x2)) and torch.equal(x.grad, x2.grad)
    assert not torch.equal(gelu(x), F.gelu(x2, approximate="tanh"))
    compiled = torch.compile(lambda z: gelu(z) * w, dynamic=False)
    x3 = x.detach().clone().requires_grad_()
    out = compiled(x3)
    out.sum().backward()
    assert torch.equal(out, gelu(x) * w) and torch.equal(x3.grad, x.grad)
