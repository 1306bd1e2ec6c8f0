"""Planted models (icdl.gpt_icl.mechanism.power): the mechanism's pipeline run on models that *are* an algorithm.
The quick profile's grid, target depth 3, in seconds."""

import pandas as pd
import pytest
import torch

from conftest import scratch_clone
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


def test_a_killed_power_run_resumes_from_the_units_it_finished(tmp_path, monkeypatch):
    """The command keeps each (task, depth) unit in its own file as it finishes: a second call computes nothing
    again and gives the same sums (the bug: a run of hours that a session's end throws away whole); a unit file made
    by other code is refused in one line naming it, not mixed into the result; without ``keep`` (the tests, an
    override run) nothing is written."""
    from icdl.repro.files import ResultFileError
    from icdl.repro.results import load_result, save_result

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    calls = []

    def fake(cfg, depth, progress=False):
        calls.append((cfg["centre"], depth))
        return pd.DataFrame({"attention": ["planted GD"], "candidate": ["GD"], "mixture": ["(1, 0)"], "block": [0],
                             "cos": [0.5], "depth": [depth], "n": [1.0], "own": [0.1], "position": [5],
                             "pred": [0.2 + depth], "sens": [0.3]})

    monkeypatch.setattr(power, "power", fake)
    cfg = {**CFG, "depths": (3, 4)}
    power.run(cfg, progress=False)
    assert not (tmp_path / "results").exists() and len(calls) == 4
    first = power.run(cfg, progress=False, keep=True)
    assert len(calls) == 8 and power.unit_path(cfg, "n01", 4).is_file()
    again = power.run(cfg, progress=False, keep=True)
    assert len(calls) == 8, "a finished unit was computed again"
    pd.testing.assert_frame_equal(again["blocks"], first["blocks"], check_dtype=False, check_like=True)
    assert sorted(set(zip(again["blocks"]["task"], again["blocks"]["depth"]))) == [
        ("icdl", 3), ("icdl", 4), ("n01", 3), ("n01", 4)]
    path = power.unit_path(cfg, "icdl", 4)
    saved = load_result(path)
    save_result(path, saved["data"], provenance={**saved["provenance"], "git_commit": "0123456789abcdef"})
    with pytest.raises(ResultFileError, match=r"power_icdl_depth4\.json was made by the code at 012345678"):
        power.run(cfg, progress=False, keep=True)
    save_result(path, saved["data"], provenance={**saved["provenance"], "profile": "seeds"})  # another profile's unit
    with pytest.raises(ResultFileError, match=r"power_icdl_depth4\.json is the .* made at profile 'seeds'"):
        power.run(cfg, progress=False, keep=True)


def test_the_cosine_line_is_set_against_what_the_plants_reach():
    """``cosine_words``: the line separates the plants only where the planted GD's smallest cosine reaches it and the
    planted ridge's largest stays below (the bug it guards: a line that a model which *is* ridge also passes, read as
    evidence for GD); the ranges are over the target depths, the right plant's numbers in each."""
    def nums(gd, ridge):
        return {(d, name): {"cosine": {"value": v, "lo": v, "hi": v}} for name, vals in
                (("planted GD", gd), ("planted ridge", ridge)) for d, v in zip((3, 4, 6), vals)}

    apart = power.cosine_words({"icdl": nums((0.95, 0.9, 0.85), (0.5, 0.6, 0.7))}, 0.8)
    assert "planted GD reaches 0.85 to 0.95 and the planted ridge 0.50 to 0.70" in apart
    assert apart.endswith("falls between them")
    for gd, ridge in (((0.95, 0.9, 0.85), (0.5, 0.82, 0.7)), ((0.95, 0.79, 0.85), (0.5, 0.6, 0.7))):
        assert power.cosine_words({"n01": nums(gd, ridge)}, 0.8).endswith("does not separate them")
    # decided on the intervals, as the claim is: a planted GD whose interval reaches below the line at one depth,
    # or a planted ridge whose interval reaches above it, leaves them unseparated though every value is apart
    wide = nums((0.95, 0.9, 0.85), (0.5, 0.6, 0.7))
    wide[(6, "planted GD")]["cosine"]["lo"] = 0.78
    assert power.cosine_words({"icdl": wide}, 0.8).endswith("does not separate them")
    wide = nums((0.95, 0.9, 0.85), (0.5, 0.6, 0.7))
    wide[(4, "planted ridge")]["cosine"]["hi"] = 0.81
    assert power.cosine_words({"icdl": wide}, 0.8).endswith("does not separate them")
    assert power.cosine_words({}, 0.8) == "the planted models' run has not been made yet"


def test_the_power_state_names_the_plant_that_was_not_called():
    """Where the gate is unmet on a task, the chapter's sentence says which plant the pipeline called wrongly or
    could not decide, with its number and interval (the bug: "does not call both plants right" for a planted GD
    whose interval straddled 1 -- undecided, not wrong); where it is met, it says so."""
    from icdl.gpt_icl.mechanism import power

    entries = [{"claim": "mech-power-gd", "value": 0.955, "values": {"value_lo": 0.888, "value_hi": 1.012},
                "passed": None},
               {"claim": "mech-power-ridge", "value": 0.9, "values": {"value_lo": 0.8, "value_hi": 0.95},
                "passed": False},
               {"claim": "mech-power-gd-n01", "value": 0.4, "passed": True},
               {"claim": "mech-power-ridge-n01", "value": 4.3, "passed": True}]
    words = power.state_words(entries)
    icdl, n01 = words.split("; ")
    assert "cannot decide the planted GD" in icdl and "0.888 to 1.012" in icdl
    assert "calls the planted ridge wrongly" in icdl and "gate is unmet" in icdl
    assert n01.endswith("calls both plants right (the gate is met)")
    assert power.state_words([{**e, "value": None} for e in entries]).endswith("not been made yet")
