"""The in-context baselines and R² (icdl.gpt_icl.core.baselines)."""

import math

import pytest
import torch

from icdl.gpt_icl.core import baselines as bl


def test_baselines_never_see_the_query_label_on_noisy_data():
    """On noisy labels (where a leak matters: noise-free linear labels are predicted exactly either way) each
    baseline's prediction at position i equals the same method applied to the first i examples alone, and
    changing the query's label -- or any later label -- changes no prediction at or before it."""
    g = torch.Generator().manual_seed(7)
    xs = torch.randn(40, 10, 3, generator=g, dtype=torch.float64)
    ys = (xs @ torch.randn(3, generator=g, dtype=torch.float64)) + 0.8 * torch.randn(40, 10, generator=g,
                                                                                    dtype=torch.float64)
    i = 7
    X1 = torch.cat([xs, torch.ones(40, 10, 1, dtype=torch.float64)], -1)
    coef = torch.linalg.lstsq(X1[:, :i], ys[:, :i, None]).solution
    torch.testing.assert_close(bl.least_squares(xs, ys, positions=[i])[:, 0], (X1[:, i:i + 1] @ coef)[:, 0, 0],
                               rtol=1e-8, atol=1e-8)
    torch.testing.assert_close(bl.context_mean(xs, ys)[:, i], ys[:, :i].mean(1), rtol=1e-12, atol=1e-12)
    moved = ys.clone()
    moved[:, i:] += 5.0  # the query's label and everything after it
    for method in (bl.context_mean, bl.least_squares, bl.nearest_neighbours):
        torch.testing.assert_close(method(xs, moved)[:, :i + 1], method(xs, ys)[:, :i + 1], rtol=0, atol=1e-9)


def test_simple_baselines():
    g = torch.Generator().manual_seed(0)
    xs = torch.randn(50, 12, 3, generator=g)
    w = torch.randn(50, 3, generator=g)
    ys = (xs * w[:, None]).sum(-1) + 0.5
    cm = bl.context_mean(xs, ys)
    assert cm[0, 0] == 0 and torch.isclose(cm[0, 3], ys[0, :3].mean())
    ls = bl.least_squares(xs, ys, positions=[4, 8, 11])  # exact once d + 1 = 4 examples are seen
    torch.testing.assert_close(ls, ys[:, [4, 8, 11]], rtol=1e-4, atol=1e-4)
    nn1 = bl.nearest_neighbours(xs, ys, m=1)
    j = torch.cdist(xs[0, 5:6], xs[0, :5]).argmin()
    assert nn1[0, 5] == ys[0, j]
    assert torch.allclose(bl.r2_across_prompts(ys, ys), torch.ones(12))
    assert bl.r2_across_prompts(ys[:, 5].mean().expand(50), ys[:, 5]).abs() < 1e-6


def test_batched_mlps_are_independent_and_learn():
    g = torch.Generator().manual_seed(0)
    xs, ys = torch.randn(6, 10, 3, generator=g), torch.randn(6, 10, generator=g)
    a = bl.trained_mlp(xs, ys, 8, depth=3, width=16, epochs=20)
    ys2 = ys.clone()
    ys2[3:] += 10.0  # other prompts' data must not move prompts 0–2
    b = bl.trained_mlp(xs, ys2, 8, depth=3, width=16, epochs=20)
    torch.testing.assert_close(a["pred"][:, :3], b["pred"][:, :3], rtol=0, atol=1e-6)
    chunked = bl.trained_mlp(xs, ys, 8, depth=3, width=16, epochs=20, chunk=4)  # 4 + 2 prompts
    torch.testing.assert_close(chunked["pred"], a["pred"], rtol=0, atol=1e-6)
    lin = (xs @ torch.tensor([1.0, -2.0, 0.5]))
    c = bl.trained_mlp(xs.repeat(20, 1, 1), lin.repeat(20, 1), 9, depth=2, width=32, epochs=200, lr=1e-2)
    assert c["best_r2"] > 0.9
    with pytest.raises(ValueError, match="position"):
        bl.trained_mlp(xs, ys, 0, depth=2)


def test_batched_mlp_is_the_loop_with_the_same_start():
    """One prompt's batched MLP follows the plain nn.Sequential + Adam loop step by step when both start
    from the same weights (the batched weights are stored transposed)."""
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(2, 9, 3, generator=g), torch.randn(2, 9, generator=g)
    batched = bl.trained_mlp(xs, ys, 8, depth=3, width=12, epochs=15, seed=5)["pred"]
    params = bl.init_mlps(range(2), 3, 3, 12, seed=5)
    for b in range(2):
        layers = []
        for j in range(3):
            lin = torch.nn.Linear(*params[2 * j].shape[1:])
            with torch.no_grad():
                lin.weight.copy_(params[2 * j][b].T)
                lin.bias.copy_(params[2 * j + 1][b])
            layers += [lin, torch.nn.ReLU()]
        net = torch.nn.Sequential(*layers[:-1])
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        for e in range(15):
            loss = ((net(xs[b, :8])[:, 0] - ys[b, :8]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            assert abs(float(net(xs[b, 8:])[0, 0].detach()) - float(batched[e, b])) < 1e-5


def test_bootstrap_band_brackets_the_estimate():
    g = torch.Generator().manual_seed(0)
    y = torch.randn(300, 4, generator=g)
    pred = y + 0.5 * torch.randn(300, 4, generator=g)
    band = bl.bootstrap_band(pred, y)
    r2 = bl.r2_across_prompts(pred, y).numpy()
    assert ((band[0] < r2) & (r2 < band[1])).all()
    assert (band[1] - band[0] < 0.2).all()


def test_the_mlp_baseline_reports_its_best_epoch_not_its_last():
    """Pure-noise labels and a large step size: R² across prompts rises and falls over the epochs, so the
    best epoch is not the last; ``best_r2`` must be the maximum over epochs at ``best_epoch`` (returning the
    last epoch's R², which short runs on clean data cannot tell apart, fails here)."""
    g = torch.Generator().manual_seed(4)
    xs, ys = torch.randn(64, 9, 3, generator=g), torch.randn(64, 9, generator=g)
    res = bl.trained_mlp(xs, ys, 8, depth=2, width=16, epochs=40, lr=0.05, seed=1)
    r2 = res["r2"]
    assert res["best_epoch"] == int(torch.argmax(r2)) and res["best_r2"] == pytest.approx(float(r2.max()))
    assert res["best_epoch"] < len(r2) - 1 and res["best_r2"] > float(r2[-1]) + 1e-3


def test_nearest_neighbours_average_over_the_neighbours_there_are():
    """The 3-NN prediction is the mean of the ``min(3, i)`` nearest earlier labels: at positions 1 and 2 every
    earlier example is a neighbour (the mean of 1 and of 2 labels, not a sum over 3), later the mean of the 3
    nearest by an independent sort of the distances; noisy labels, so no two means coincide by accident."""
    g = torch.Generator().manual_seed(11)
    xs = torch.randn(30, 9, 2, generator=g, dtype=torch.float64)
    ys = xs.sum(-1) + torch.randn(30, 9, generator=g, dtype=torch.float64)
    out = bl.nearest_neighbours(xs, ys, m=3)
    assert torch.equal(out[:, 0], torch.zeros(30, dtype=torch.float64))
    torch.testing.assert_close(out[:, 1], ys[:, 0], rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(out[:, 2], (ys[:, 0] + ys[:, 1]) / 2, rtol=1e-14, atol=1e-14)
    for b in (0, 17):
        for i in (3, 8):
            d = ((xs[b, :i] - xs[b, i]) ** 2).sum(-1)
            nearest = sorted(range(i), key=lambda j: float(d[j]))[:3]
            assert float(out[b, i]) == pytest.approx(sum(float(ys[b, j]) for j in nearest) / 3, rel=1e-12)


def test_mlp_initialisation_is_torch_linears():
    """Each layer's weights and biases are ``U(−1/√fan_in, 1/√fan_in)``, torch.nn.Linear's default (fan-in: the
    layer's input size; for the first layer d = 3 against 40 outputs, for the last 40 against 1): none
    beyond the bound, and the largest of many draws close to it, per layer."""
    params = [p.detach() for p in bl.init_mlps(range(256), 3, 3, 40, seed=2)]
    for j, fan_in in enumerate((3, 40, 40)):
        W, b = params[2 * j], params[2 * j + 1]
        assert W.shape == (256, fan_in, 40 if j < 2 else 1)
        bound = 1 / math.sqrt(fan_in)
        for p in (W, b):
            assert float(p.abs().max()) <= bound
            assert float(p.abs().max()) > 0.95 * bound
        assert abs(float(W.var()) * 3 * fan_in - 1) < 0.1  # the variance of U(−a, a) is a²/3
