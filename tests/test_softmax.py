"""ICDL sec. 4 / Appendix E: softmax attention (eq. E.1), the quantiser of Lemma 16's proof, the contextual
mapping of Lemma 17, and softmax layers fitted to one in-context GD step (Theorem 2)."""

import itertools
import math

import pytest
import torch

from icdl import layers
from icdl.constructions import softmax as quantise
from icdl.networks import Architecture
from icdl.repro.profiles import ProfileError
from icdl.studies import softmax as softmax_study
from icdl.studies import softmax_proof


def test_softmax_attention_matches_eq_E1():
    assert softmax_proof.check_attention_formula(seed=0) and softmax_proof.check_attention_formula(seed=1)


def test_softmax_attention_is_permutation_equivariant():
    g = torch.Generator().manual_seed(0)
    layer = layers.SoftmaxAttention(4, heads=2, dtype=torch.float64)
    with torch.no_grad():
        layer.W_O.copy_(torch.randn(layer.W_O.shape, generator=g, dtype=torch.float64))
    H = torch.randn(1, 4, 6, generator=g, dtype=torch.float64)
    perm = torch.randperm(6, generator=g)
    torch.testing.assert_close(layer(H[:, :, perm]), layer(H)[:, :, perm])


@pytest.mark.parametrize("D_grid,B", [(4, 1.0), (7, 2.5), (16, 1.0)])
def test_quantiser_is_exact_on_the_grid_and_monotone(D_grid, B):
    q = quantise.build_quantiser(D_grid, B, d=2)
    grid = quantise.grid_points(D_grid, B)
    G = grid[None, None, :].expand(1, 2, -1).clone()
    torch.testing.assert_close(q(G), G, rtol=0, atol=1e-12)           # exact on the grid
    z = torch.linspace(0, B, 5001, dtype=torch.float64)
    out = q(z[None, None, :].expand(1, 2, -1).clone())[0, 0]
    assert (out[1:] - out[:-1] >= -1e-12).all()                         # monotone
    h = B / D_grid
    frac = ((z / h) - 0.5) % 1.0                  # 0 at the midpoints; the ramps cover frac ∈ [0.9, 1)
    far = (frac > 0.01) & (frac < 0.89)
    nearest = grid[((z[:, None] - grid[None, :]).abs()).argmin(1)]
    torch.testing.assert_close(out[far], nearest[far], rtol=0, atol=1e-12)
    assert (out - z).abs().max() <= h + 1e-12
    with pytest.raises(ValueError, match="ramp"):
        quantise.build_quantiser(4, 1.0, 1, ramp=1.5)


def test_piecewise_constant_error_within_bound_and_falls_like_one_over_D():
    df = softmax_proof.piecewise_constant_error(D_grids=(4, 8, 16, 32), samples=1000)
    assert (df["max_error"] <= df["bound"]).all()
    ratios = df["max_error"].to_numpy()[:-1] / df["max_error"].to_numpy()[1:]
    assert ((ratios > 1.5) & (ratios < 2.6)).all()


def test_rank_one_attention_separates_small_grids():
    t = softmax_proof.separation_table(grid_max=8, max_pairs=5000)
    assert len(t) >= 8 and (t["min_separation"] > 0).all()
    assert (t["pairs"] == t["sequences"] * t["n"]).all()
    with pytest.raises(ValueError, match="max_pairs"):
        quantise.contextual_separation(16, 2, 3, max_pairs=1000)


def test_batched_gd_step_equals_lemma1_step():
    arch = Architecture(3, 2, 2, 2)
    x, y, w = softmax_study.sample_gd_problems(arch, 5, 6, B_w=1.0, generator=torch.Generator().manual_seed(0))
    a = softmax_study.batched_gd_step(arch, x, y, w, eta=0.7, B_w=1.0)
    b = softmax_study.gd_step(arch, x, y, w, eta=0.7, B_w=1.0)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-14)


def test_fitted_softmax_step_follows_gd_on_held_out_prompts():
    cfg = softmax_study.PROFILES.resolve("quick", steps=400)
    fit = softmax_study.fit_one_step(cfg, 16)
    assert fit["mean_error"] < 0.5 * fit["mean_step"]       # most of the step is represented
    path = softmax_study.compose_steps(fit["model"], cfg, prompts=32)
    assert path["risk_fitted"].iloc[-1] < path["risk_fitted"].iloc[0]
    assert path["distance"].iloc[-1] < 0.5 * cfg["L"] * fit["mean_step"]


def test_layer_input_checks():
    with pytest.raises(ValueError, match="SoftmaxAttention"):
        layers.SoftmaxAttention(4)(torch.zeros(1, 3, 2))
    with pytest.raises(ValueError, match="FeedForward"):
        layers.FeedForward(4, 8)(torch.zeros(1, 3, 2))
    with pytest.raises(ProfileError, match="widths"):
        softmax_study.PROFILES.resolve("quick", widths=(16, "x"))
    with pytest.raises(ProfileError, match="widths"):
        softmax_study.PROFILES.resolve("quick", widths=(0,))


def test_lr_schedule_warms_up_then_decays_to_zero():
    """A warm-up that overshoots (off-by-one: factor > 1) or a cosine that never reaches 0 would change every
    fit of the reference run."""
    f = [softmax_study.lr_factor(s, warmup=10, steps=100) for s in range(100)]
    assert f[0] == pytest.approx(0.1) and f[9] == pytest.approx(1.0)
    assert all(a < b for a, b in zip(f[:10], f[1:10]))               # rising during the warm-up
    assert all(a >= b for a, b in zip(f[10:], f[11:]))               # never rising afterwards
    assert max(f) == pytest.approx(1.0) and f[-1] < 1e-2             # peak lr once, ends near 0
    assert softmax_study.lr_factor(55, warmup=10, steps=100) == pytest.approx(0.5)  # cosine midpoint


def test_width_trend_criterion_both_sides():
    """The Theorem 2 criterion on constructed tables: a falling error that ends low passes; an error that
    stalls, rises, or falls but ends above the bound fails; the slope is the log-log least-squares slope."""
    import pandas as pd

    hidden = [16, 32, 64, 128]

    def trend(rel):
        return softmax_study.width_trend(pd.DataFrame({"hidden": hidden, "relative": rel}))

    falling = trend([0.10 * (h / 16) ** -0.5 for h in hidden])
    assert falling["slope"] == pytest.approx(-0.5) and falling["passed"]
    assert falling["widest"] == pytest.approx(0.10 / 8 ** 0.5) and falling["widest_hidden"] == 128
    stalled = trend([0.13, 0.13, 0.128, 0.131])                      # the old "stall": fails
    assert abs(stalled["slope"]) < 0.05 and not stalled["passed"]
    assert not trend([0.05, 0.06, 0.07, 0.075])["passed"]            # rising (a sign flip of the slope)
    high = trend([0.40, 0.28, 0.20, 0.14])                           # falls, but the widest is above 0.08
    assert high["slope"] < softmax_study.WIDTH_SLOPE_MAX and not high["passed"]
    edge = trend([0.08 * (h / 128) ** -0.2 for h in hidden])         # exactly at both bounds' safe sides
    assert edge["passed"] and edge["widest"] == pytest.approx(0.08)
    with pytest.raises(ValueError, match="two distinct widths"):
        softmax_study.width_trend(pd.DataFrame({"hidden": [16], "relative": [0.1]}))



def test_the_live_and_the_reference_one_step_tables_show_one_column_order():
    """A result file stores the table's columns sorted; the chapter shows the live and the reference table
    in one order, with the relative error recomputed (the bug: two tables of the same study whose columns
    came in different orders)."""
    import pandas as pd

    from icdl.studies import softmax as study

    live = pd.DataFrame({"hidden": [16], "params": [100], "mean_error": [0.2], "max_error": [0.5],
                         "mean_step": [0.4], "seconds": [1.0]})
    stored = live[sorted(live.columns)]
    a, b = study.one_step_shown(live), study.one_step_shown(stored)
    assert list(a.columns) == list(b.columns) == list(study.ONE_STEP_COLUMNS)
    assert a["relative"].iloc[0] == pytest.approx(0.5) and a.equals(b)


def test_gd_problems_project_each_input_onto_the_unit_ball():
    """``‖x‖ ≤ 1`` per input (token), by scaling the inputs outside the ball onto its surface: every input has norm
    at most 1 and those that were outside (about e^{−1/2} ≈ 61 % of 2-D Gaussians) have norm exactly 1 -- a norm
    taken over the examples instead of the coordinates leaves no input on the sphere."""
    arch = Architecture(2, 2, 2, 1)
    x, y, w = softmax_study.sample_gd_problems(arch, 400, 6, B_w=0.7, generator=torch.Generator().manual_seed(3))
    norms = x.norm(dim=-1)
    assert x.shape == (400, 7, 2) and y.shape == (400, 6, 1) and w.shape == (400, arch.size)
    assert float(norms.max()) <= 1 + 1e-12
    on_sphere = float(((norms - 1).abs() < 1e-12).double().mean())
    assert 0.55 < on_sphere < 0.67
    assert float(w.abs().max()) <= 0.7


def test_equivariant_map_written_out():
    """Token k (a column of Z) goes to ``tanh(z_k) + ½ mean_j sin(z_j)``, the mean over the tokens j: on a 2 × 3
    input (features ≠ tokens) each entry against the formula, one at a time (a mean over the features instead
    is still equivariant and passes every other check)."""
    Z = torch.tensor([[[0.1, -0.7, 1.3], [0.9, 0.2, -0.4]]], dtype=torch.float64)
    out = softmax_proof.equivariant_map(Z)
    for a in range(2):
        for k in range(3):
            expected = math.tanh(Z[0, a, k]) + 0.5 * sum(math.sin(Z[0, a, j]) for j in range(3)) / 3
            assert float(out[0, a, k]) == pytest.approx(expected, rel=1e-14)


def test_contextual_separation_is_the_attention_layers_separation():
    """The brute force's rank-1 head is :class:`SoftmaxAttention` (checked against eq. E.1 above) with
    ``Q = scale · u₀ᵀ``, ``K = u₁ᵀ``, ``V = u₂ᵀ``, ``W_O = u₂``: run the layer on every sequence and take the
    smallest distance between the outputs -- a softmax over the queries instead of the keys differs."""
    D_grid, d, n, scale = 3, 2, 3, 5.0
    res = quantise.contextual_separation(D_grid, d, n, scale=scale, seed=4)
    g = torch.Generator().manual_seed(4)
    u = [torch.randn(d, generator=g, dtype=torch.float64) for _ in range(3)]
    u = [v / v.norm() for v in u]
    layer = layers.SoftmaxAttention(d, heads=1, head_dim=1, dtype=torch.float64)
    with torch.no_grad():
        layer.Q.copy_(scale * u[0].reshape(1, 1, d))
        layer.K.copy_(u[1].reshape(1, 1, d))
        layer.V.copy_(u[2].reshape(1, 1, d))
        layer.W_O.copy_(u[2].reshape(1, d, 1))
    pts = list(itertools.product(quantise.grid_points(D_grid, 1.0).tolist(), repeat=d))
    seqs = torch.tensor([[pts[i] for i in c] for c in itertools.combinations(range(len(pts)), n)],
                        dtype=torch.float64).transpose(1, 2)          # (S, d, n)
    with torch.no_grad():
        outs = layer(seqs).transpose(1, 2).reshape(-1, d)
    dist = torch.cdist(outs, outs)
    dist.fill_diagonal_(math.inf)
    assert res["pairs"] == len(outs) == math.comb(D_grid**d, n) * n
    assert res["min_separation"] == pytest.approx(float(dist.min()), rel=1e-9, abs=1e-14)
    assert res["token_separation"] == pytest.approx(1 / D_grid)
