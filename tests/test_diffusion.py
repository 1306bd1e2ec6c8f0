import math

import pytest
import torch

from icdl.studies import diffusion as df


def test_ou_coefficients_and_bad_time():
    a, h = df.ou(2.0)
    assert a == pytest.approx(math.exp(-1)) and h == pytest.approx(1 - math.exp(-2))
    assert a * a + h == pytest.approx(1.0)  # the OU process keeps N(0, 1) stationary
    with pytest.raises(ValueError, match="t must be > 0"):
        df.ou(0.0)


def test_mixture_score_is_the_gradient_of_the_log_density():
    mix = df.Mixture(torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64),
                     torch.tensor([[-1.0, 0.5], [2.0, 0.0], [0.0, -2.0]], dtype=torch.float64), 0.4)
    x = torch.randn(50, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0)).requires_grad_(True)
    grad, = torch.autograd.grad(mix.log_density(x, 0.7).sum(), x)
    torch.testing.assert_close(mix.score(x.detach(), 0.7), grad, rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="probability vector"):
        df.Mixture(torch.tensor([0.5, 0.6], dtype=torch.float64), torch.zeros(2, 1, dtype=torch.float64), 1.0)


def test_dsm_targets_have_the_score_as_mean():
    """REB's targets: the DSM and score-matching risks differ by one constant for every f (so the
    targets' conditional mean is the score); the same check fails for the targets without α_t."""
    mix = df.two_bumps(2.0, 0.3)
    ident = df.dsm_identity(mix, 1.0, 200_000)
    se = ident["se"].max()
    assert ident["difference"].max() - ident["difference"].min() < 6 * se
    assert (ident["difference"] - ident["constant"]).abs().max() < 6 * se
    # a wrong target -(x_t - x_0)/h_t (α_t dropped) has another mean: the differences then depend on f
    g = torch.Generator().manual_seed(0)
    x0, xt, _ = df.dsm_pairs(mix, 1.0, 200_000, g)
    wrong = -(xt - x0) / df.ou(1.0)[1]
    s = mix.score(xt, 1.0)
    diffs = [float((0.5 * (f - wrong) ** 2 - 0.5 * (f - s) ** 2).mean()) for f in (0 * s, s, -xt)]
    assert max(diffs) - min(diffs) > 100 * se
    binned = df.binned_targets(mix, 1.0, 200_000)
    assert ((binned["mean_y"] - binned["score"]).abs() < 5 * binned["se"] + 0.02).mean() > 0.9


def test_unit_map_round_trip():
    y = torch.linspace(-3, 3, 7, dtype=torch.float64)
    torch.testing.assert_close(df.from_unit(df.to_unit(y, 0.5), 0.5), y)
    assert float(df.to_unit(torch.tensor(0.0), 1.0)) == 0.5


def test_transformer_learns_the_score_in_context():
    cfg = df.PROFILES.resolve("quick", steps=30, H_list=(64,), prompts=2, test_points=500, mc=20_000)
    res = df.study(cfg, progress=False)
    thm = res["theorem1"]
    assert bool(thm["within"].all()) and float(thm["step_deviation"].max()) < 0.1
    err = res["errors"]
    mean = err.groupby(["method", "step"])["score_error"].mean()
    assert mean[("transformer", 30)] < 0.8 < 1.5 < mean[("transformer", 0)]
    assert abs(mean[("transformer", 30)] - mean[("GD", 30)]) < 0.1
    assert mean[("GD from w = 0", 30)] > 0.95  # the symmetric start does not learn
    entries = {e["claim"]: e for e in df.judge(df.dsm_identity(df.two_bumps(), 1.0, 20_000), res)}
    assert entries["icdl-lemma19"]["passed"] and entries["reb-dsm"]["passed"]


def test_bad_profile_values_are_rejected():
    with pytest.raises(ValueError, match=r"t=0.0 \(override\) is out of range; allowed: 0.01 <= t <= 10.0"):
        df.PROFILES.resolve("quick", t=0.0)
    with pytest.raises(ValueError, match="needs one-dimensional"):
        df.binned_targets(df.Mixture(torch.tensor([1.0], dtype=torch.float64),
                                     torch.zeros(1, 2, dtype=torch.float64), 1.0), 1.0, 1000)


def test_mixture_density_integrates_to_one():
    """``log_density`` is a normalised density of p_t (the score test above cannot see its constant, which the
    gradient drops): on a fine 2-D grid its integral is 1 (a 1/(πv) for 1/(2πv), or d for d/2, gives 2 or ½), and
    in 1-D too."""
    mix = df.Mixture(torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64),
                     torch.tensor([[-1.0, 0.5], [2.0, 0.0], [0.0, -2.0]], dtype=torch.float64), 0.4)
    g = torch.linspace(-9, 9, 361, dtype=torch.float64)
    xy = torch.stack(torch.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    dens = mix.log_density(xy, 0.7).exp().reshape(361, 361)
    assert float(torch.trapezoid(torch.trapezoid(dens, g), g)) == pytest.approx(1.0, abs=1e-6)
    z = torch.linspace(-12, 12, 4801, dtype=torch.float64)
    one = df.two_bumps(2.0, 0.3, 0.3).log_density(z[:, None], 0.2).exp()
    assert float(torch.trapezoid(one, z)) == pytest.approx(1.0, abs=1e-6)


def test_gd_starts_uniformly_in_the_whole_box():
    """The starting weights are uniform in the box ``‖w‖_∞ ≤ B_w`` -- all of it, negative entries too: their
    mean is near 0, their variance B_w²/3 (a start drawn from [0, B_w] has mean B_w/2 and variance B_w²/12)."""
    cfg = df.PROFILES.resolve("quick", prompts=64, test_points=100)
    w0 = df.make_task(cfg).w0
    B = cfg["B_w"]
    assert w0.shape == (64, 2 * cfg["K"]) and float(w0.abs().max()) <= B
    assert abs(float(w0.mean())) < 0.1 * B            # s.e. B/√(3·1024) ≈ 0.018 B
    assert abs(float(w0.var()) / (B * B / 3) - 1) < 0.1


def test_the_final_errors_name_each_method_once_and_give_gd_no_width():
    """The table after the last step: GD and GD from w = 0 without a width (the bug: GD rows printed as
    ``H = 0``), one row per transformer width, the mean over prompts of the last step only (not of step 0)."""
    import pandas as pd

    errors = pd.DataFrame({"method": ["GD", "GD", "GD", "transformer", "transformer", "GD from w = 0"],
                           "H": [0, 0, 0, 64, 64, 0], "prompt": [0, 1, 0, 0, 1, 0], "step": [3, 3, 0, 3, 3, 3],
                           "score_error": [0.2, 0.4, 9.0, 0.5, 0.7, 1.0]})
    table = df.final_errors(errors, 3)
    assert list(table["method"]) == ["GD", "transformer, H = 64", "GD from w = 0"]
    assert table.iloc[:, 1].tolist() == pytest.approx([0.3, 0.6, 1.0])


def test_theorem1_is_shown_alike_for_the_live_run_and_the_reference():
    """``theorem1_shown``: one line says whether every step is within η ε -- "no" as soon as one width is not (the
    bug: the first row's verdict, or "yes" read off a column of strings) -- and the table keeps every width and
    distance, as powers of ten, without the column the line replaces; a result file's booleans read back as JSON
    give the same."""
    import pandas as pd

    from icdl.studies import diffusion_shown as diffusion

    thm = pd.DataFrame({"H": [64, 256], "step_deviation": [1e-3, 3e-5], "eta_eps": [2e-3, 1e-5],
                        "final_distance_to_gd": [0.012, 4e-4]})
    thm["within"] = thm["step_deviation"] <= thm["eta_eps"]
    line, shown = diffusion.theorem1_shown(thm)
    assert line.endswith(": no") and list(shown["H"]) == [64, 256]
    assert list(shown.columns) == ["H", "largest one-step deviation", "eta_eps", "final_distance_to_gd"]
    stored = thm[["final_distance_to_gd", "within", "eta_eps", "H", "step_deviation"]]  # a file's own order
    assert list(diffusion.theorem1_shown(stored)[1].columns) == list(shown.columns)
    assert list(shown["largest one-step deviation"]) == ["1.0e-03", "3.0e-05"]
    assert list(shown["final_distance_to_gd"]) == ["1.2e-02", "4.0e-04"]
    ok = thm.assign(eta_eps=[2e-3, 1e-4], within=[True, True])
    assert diffusion.theorem1_shown(ok)[0].endswith(": yes")
    assert diffusion.theorem1_shown(ok.astype({"within": object}))[0].endswith(": yes")
