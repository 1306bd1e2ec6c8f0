"""Planted models (icdl.gpt_icl.mechanism.power): the mechanism's pipeline run on models that *are* an algorithm.
The quick profile's grid, target depth 3, in seconds."""

import pytest
import torch

from icdl.gpt_icl.core import algorithms as al
from icdl.gpt_icl.mechanism import power, study
from icdl.gpt_icl.mechanism.measures import SEEDS

CFG = study.PROFILES.resolve("quick")


def test_the_plants_settings_lie_between_the_grid_s_values():
    """Off the grid in every setting the pipeline chooses (a plant on the grid would be matched exactly, which no
    trained model is): the step size, start scale and λ strictly between grid values, the steps not a recorded
    power of two, another start draw."""
    s = power.plant_settings(study.PROFILES.resolve("quick") | {"etas": (0.0125, 0.025, 0.05),
                                                                "init_scales": (0.125, 0.25, 0.5, 1.0),
                                                                "gd_steps": 8192, "lambdas": (0.1, 1.0, 10.0)})
    def between_two(v, grid):
        return any(a < v < b for a, b in zip(grid, grid[1:]))

    assert between_two(s["eta"], (0.0125, 0.025, 0.05)) and between_two(s["init_scale"], (0.125, 0.25, 0.5, 1.0))
    assert between_two(s["lambda"], (0.1, 1.0, 10.0))
    assert s["steps"] == 6144 and s["steps"] not in al.recorded_steps(8192) and s["start_seed"] != SEEDS["start"]


def test_a_plant_predicts_at_the_profile_s_positions_with_its_algorithm_s_slope():
    """The ridge plant's sensitivity is ridge's slope at its λ, its prediction ridge's plus noise of about NOISE of
    the labels' variance (the bug: noise on the sensitivity, or none at all); forward fills only the positions the
    pipeline reads and the last."""
    xs = torch.randn(256, 12, CFG["d"])
    ys = xs[..., 0] + 0.1 * torch.randn(256, 12)
    plant = power.Planted("ridge", CFG, 3)
    pred, sens = plant.sensitivity(xs, ys, [5, 10])
    p, g = al.ridge(xs, ys, [5, 10], [plant.settings["lambda"]])
    assert torch.allclose(sens.double(), g[0].double(), atol=1e-5)
    share = ((pred.double() - p[0].double()) ** 2).mean(0) / ys[:, [5, 10]].double().var(0)
    assert torch.all((share > 0.5 * power.NOISE) & (share < 2 * power.NOISE))
    out = plant(xs, ys)
    filled = [j for j in range(12) if not torch.isnan(out[0, j])]
    assert filled == sorted({p for p in CFG["positions"] if p < 12} | {11})
    with pytest.raises(ValueError, match="kind"):
        power.Planted("adam", CFG, 3)


@pytest.mark.filterwarnings("ignore:divide by zero")  # without noise the ridge plant's ridge difference is 0
def test_the_pipeline_calls_planted_ridge_nearest_ridge_and_gd_on_the_grid_nearest_gd(monkeypatch):
    """The positive controls of the positive control. A ridge plant: GD's prediction difference over the nearest
    simple rule's lies above 1 on its whole interval (ridge nearer). A GD plant placed exactly on the grid, without
    noise: GD's difference is 0 and the ratio far below 1. Catches the plants swapped, the pipeline choosing GD's
    member for the wrong model, and a ratio taken the wrong way up."""
    numbers = power.power_numbers(power.power(CFG, 3), CFG["train_examples"])
    assert set(numbers) == {(3, "planted GD"), (3, "planted ridge")}
    assert numbers[(3, "planted ridge")]["pred"]["lo"] > 1
    on_grid = {"eta": CFG["etas"][0], "init_scale": CFG["init_scales"][0], "steps": CFG["gd_steps"],
               "lambda": CFG["lambdas"][0], "start_seed": SEEDS["start"]}
    monkeypatch.setattr(power, "plant_settings", lambda cfg: on_grid)
    monkeypatch.setattr(power, "NOISE", 0.0)
    exact = power.power_numbers(power.power(CFG, 3), CFG["train_examples"])
    assert exact[(3, "planted GD")]["pred"]["hi"] < 0.01 and exact[(3, "planted GD")]["cosine"]["lo"] > 0.999


@pytest.mark.filterwarnings("ignore:divide by zero")  # the ridge plant's sensitivities are ridge's own exactly
def test_the_power_judge_both_sides_and_waiting(monkeypatch):
    """On plants placed exactly on the grid with almost no noise, both tasks' claims pass (GD's ratio near 0,
    ridge's large); with the plants' labels swapped in the sums each fails, decided (the bug: the judge reading one
    plant's number for the other's claim); waiting for its run, each of the four names the command and decides
    nothing; the gate is met only where both claims of a task pass."""
    on_grid = {"eta": CFG["etas"][0], "init_scale": CFG["init_scales"][0], "steps": CFG["gd_steps"],
               "lambda": CFG["lambdas"][0], "start_seed": SEEDS["start"]}
    monkeypatch.setattr(power, "plant_settings", lambda cfg: on_grid)
    monkeypatch.setattr(power, "NOISE", 1e-3)  # a little: without any, ridge's own difference is 0 (a ratio of ∞)
    blocks = power.run({**CFG, "depths": (3,)}, progress=False)["blocks"]
    entries = {e["claim"]: e for e in power.judge(blocks, CFG["train_examples"], "cmd")}
    assert set(entries) == {"mech-power-gd", "mech-power-ridge", "mech-power-gd-n01", "mech-power-ridge-n01"}
    assert all(e["passed"] is True for e in entries.values()), entries
    assert power.met(list(entries.values()), "icdl") == 1.0 == power.met(list(entries.values()), "n01")
    swapped = blocks.assign(attention=blocks["attention"].map({power.PLANTS[0]: power.PLANTS[1],
                                                               power.PLANTS[1]: power.PLANTS[0]}))
    wrong = power.judge(swapped, CFG["train_examples"], "cmd")
    assert all(e["passed"] is False for e in wrong), wrong
    assert power.met(wrong, "icdl") == 0.0
    waiting = power.judge(None, CFG["train_examples"], "the command")
    assert len(waiting) == 4 and all(e["passed"] is None and "the command" in e["ours"] for e in waiting)
    assert power.met(waiting, "n01") == 0.0
