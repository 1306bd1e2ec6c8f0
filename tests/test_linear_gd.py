import pytest
import torch

from icdl.constructions.linear import build_linear_gd_layer, linear_gd_layout
from icdl.layers import MLPLayer, ReLUAttention
from icdl.prompts import build_prompt
from icdl.studies.linear_gd import gd_path, risk, sample_tasks, transformer_path


def _naive_attention(layer, H):
    """Def. 7 in its vector form, one token and one head at a time."""
    B, D, T = H.shape
    n = T - 1 if layer.normalization == "examples" else T
    out = H.clone()
    for b in range(B):
        for i in range(T):
            for m in range(layer.heads):
                for s in range(T):
                    score = torch.dot(layer.Q[m] @ H[b, :, i], layer.K[m] @ H[b, :, s])
                    out[b, :, i] += torch.relu(score) * (layer.V[m] @ H[b, :, s]) / n
    return out


@pytest.mark.parametrize("normalization", ["examples", "tokens"])
def test_relu_attention_is_def7_vector_form(normalization):
    g = torch.Generator().manual_seed(3)
    layer = ReLUAttention(5, heads=3, normalization=normalization)
    with torch.no_grad():
        for p in (layer.Q, layer.K, layer.V):
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype))
    H = torch.randn(2, 5, 4, generator=g, dtype=torch.float64)
    torch.testing.assert_close(layer(H), _naive_attention(layer, H), rtol=1e-12, atol=1e-12)


def test_relu_attention_rejects_wrong_shapes():
    with pytest.raises(ValueError, match="expects H of shape"):
        ReLUAttention(5, 1)(torch.zeros(2, 4, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="normalization"):
        ReLUAttention(5, 1, normalization="mean")


@pytest.mark.parametrize("d, n, eta", [(1, 3, 0.3), (4, 32, 0.2), (7, 10, 1.5)])
def test_one_layer_is_one_gd_step(d, n, eta):
    tasks = sample_tasks(8, n, d, noise=0.5, seed=d)
    layout, w = linear_gd_layout(d)
    H = build_prompt(tasks.x, tasks.y, tasks.x_query, D=layout.D)
    w0 = torch.randn(8, d, dtype=H.dtype)
    H[:, w, :] = w0[:, :, None]
    out = build_linear_gd_layer(d, eta)(H)
    # the GD step by autograd on the in-context risk, an independent computation
    w_req = w0.clone().requires_grad_(True)
    risk(w_req, tasks.x, tasks.y).sum().backward()
    expected = w0 - eta * w_req.grad
    assert (out[:, w, :] - expected[:, :, None]).abs().max() < 1e-13
    untouched = [r for r in range(layout.D) if not w.start <= r < w.stop]
    assert torch.equal(out[:, untouched, :], H[:, untouched, :])


def test_query_leaks_when_bound_is_too_small():
    tasks = sample_tasks(16, 8, 3, noise=0.1, seed=0)
    good = transformer_path(tasks, 0.3, 3)
    bad = transformer_path(tasks, 0.3, 3, bound=1e-3)
    expected = gd_path(tasks.x, tasks.y, 0.3, 3)
    assert (good[-1] - expected[-1][:, None, :]).abs().max() < 1e-13
    assert (bad[-1] - expected[-1][:, None, :]).abs().max() > 1e-3


def test_stacked_layers_follow_gd():
    tasks = sample_tasks(32, 20, 5, noise=0.1, seed=1)
    tf = transformer_path(tasks, 0.4, 25)
    gd = gd_path(tasks.x, tasks.y, 0.4, 25)
    assert tf.shape == (26, 32, 21, 5)
    assert (tf - gd[:, :, None, :]).abs().max() < 1e-13
    # and GD itself is doing its job: the risk decreased by a lot
    assert risk(gd[-1], tasks.x, tasks.y).mean() < 0.2 * risk(gd[0], tasks.x, tasks.y).mean()


@pytest.mark.parametrize("kwargs, match", [({"d": 0, "eta": 0.1}, "d must be"),
                                           ({"d": 2, "eta": 0.0}, "eta must be"),
                                           ({"d": 2, "eta": 0.1, "bound": -1}, "bound must be")])
def test_builder_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        build_linear_gd_layer(**kwargs)


@pytest.mark.parametrize("make", [lambda: ReLUAttention(6.7, heads=2), lambda: ReLUAttention(6, heads=0),
                                  lambda: ReLUAttention(6, heads=True), lambda: MLPLayer(4, 2.5),
                                  lambda: MLPLayer(0, 3)])
def test_layer_sizes_must_be_positive_integers(make):
    """D=6.7 is refused by name (it used to reach torch's zeros() as a raw TypeError); 6 itself is fine."""
    with pytest.raises(ValueError, match="must be a positive integer"):
        make()
    assert ReLUAttention(6, heads=2).D == 6 and MLPLayer(4, 3).hidden == 3


def test_sampled_tasks_have_the_stated_scales():
    """``w* ~ N(0, I_d/d)`` (so that ``E‖w*‖² = 1`` and the noise-free label has unit variance whatever d) and the
    label noise has standard deviation ``noise``: a dropped 1/√d multiplies both signal checks by d = 16."""
    t = sample_tasks(4000, 8, 16, noise=0.3, seed=2)
    assert abs(float((t.w_star**2).sum(1).mean()) - 1) < 0.05
    assert abs(float((t.w_star**2).mean()) * 16 - 1) < 0.05
    clean = torch.einsum("bnd,bd->bn", t.x, t.w_star)
    assert abs(float(clean.var()) - 1) < 0.1
    assert abs(float((t.y - clean).std()) - 0.3) < 0.01
    assert abs(float((t.y_query - (t.x_query * t.w_star).sum(1)).std()) - 0.3) < 0.02
