"""Planted models (icdl.gpt_icl.mechanism.plants, .power): the mechanism's pipeline run on models that *are* an
algorithm -- GD on the network, ridge, a kernel smoother -- at the noise levels of the registered design. The quick
profile's grid, target depth 3, in seconds; the judge on numbers whose answer is known."""

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import scratch_clone
from icdl.gpt_icl.core import algorithms as al
from icdl.gpt_icl.core.intervals import point, prompt_only
from icdl.gpt_icl.mechanism import plants, power, study
from icdl.gpt_icl.mechanism.measures import SEEDS

CFG = study.PROFILES.resolve("quick")
ON_GRID = {"eta": CFG["etas"][0], "init_scale": CFG["init_scales"][0], "steps": CFG["gd_steps"],
           "lambda": CFG["lambdas"][0], "start_seed": SEEDS["start"]}


def test_the_plants_settings_lie_between_the_grid_s_values():
    """Off the grid in every setting the pipeline chooses (a plant on the grid would be matched exactly, which no
    trained model is): the step size, start scale and λ strictly between grid values, the steps not a recorded
    power of two, another start draw."""
    s = plants.plant_settings(CFG | {"etas": (0.0125, 0.025, 0.05), "init_scales": (0.125, 0.25, 0.5, 1.0),
                                     "gd_steps": 8192, "lambdas": (0.1, 1.0, 10.0)})

    def between_two(v, grid):
        return any(a < v < b for a, b in zip(grid, grid[1:]))

    assert between_two(s["eta"], (0.0125, 0.025, 0.05)) and between_two(s["init_scale"], (0.125, 0.25, 0.5, 1.0))
    assert between_two(s["lambda"], (0.1, 1.0, 10.0))
    assert s["steps"] == 6144 and s["steps"] not in al.recorded_steps(8192) and s["start_seed"] != SEEDS["start"]


def test_a_plant_predicts_with_its_algorithm_s_slope_and_the_noise_of_its_level():
    """The ridge plant's sensitivity is ridge's slope at its λ, its prediction ridge's plus noise of about its level
    of the labels' variance, at every level of the registered grid, one draw scaled (the bugs: noise on the
    sensitivity, none at all, or the 4 % of the first design at every level); forward fills only the positions the
    pipeline reads and the last."""
    assert plants.NOISES == (0.04, 0.15, 0.30, 0.45)  # registered with mech-power-* (9936b75)
    xs = torch.randn(512, 12, CFG["d"])
    ys = xs[..., 0] + 0.1 * torch.randn(512, 12)
    plant = plants.Planted("ridge", CFG, 3)
    p, g = al.ridge(xs, ys, [5, 10], [plant.settings["lambda"]])
    errors = []
    for level in plants.NOISES:
        pred, sens = plant.at(level).sensitivity(xs, ys, [5, 10])
        assert torch.allclose(sens.double(), g[0].double(), atol=1e-5)
        share = ((pred.double() - p[0].double()) ** 2).mean(0) / ys[:, [5, 10]].double().var(0)
        assert torch.all((share > 0.7 * level) & (share < 1.4 * level)), (level, share)
        errors.append((pred.double() - p[0].double()) / level ** 0.5)
    assert all(torch.allclose(e, errors[0], atol=1e-4) for e in errors)  # the same draw, scaled
    out = plant(xs, ys)
    filled = [j for j in range(12) if not torch.isnan(out[0, j])]
    assert filled == sorted({p for p in CFG["positions"] if p < 12} | {11})
    with pytest.raises(ValueError, match="kind"):
        plants.Planted("adam", CFG, 3)


def test_the_kernel_smoother_is_nonlinear_and_its_slope_is_its_gradient():
    """The nonlinear plant: its sensitivity is the gradient of its own prediction in the query (autograd through
    the same formula, the bug: a sign or a bandwidth factor off), it fits a nonlinear target that least squares
    cannot (so it is a learner of the kind the hypotheses must tell from GD, not a local average that fits
    nothing), and its prediction moves with the examples' labels (it is in-context)."""
    g = torch.Generator().manual_seed(0)
    xs = torch.randn(256, 40, 2, generator=g, dtype=torch.float64)
    ys = torch.sin(2 * xs[..., 0]) + xs[..., 1] ** 2
    pred, sens = plants.kernel_smoother(xs, ys, [39], 2.0 * 0.25, 0.01)
    q = xs.clone().requires_grad_(True)
    again, _ = plants.kernel_smoother(q, ys, [39], 2.0 * 0.25, 0.01)
    (grad,) = torch.autograd.grad(again.sum(), q)
    assert torch.allclose(sens[:, 0], grad[:, 39], atol=1e-8)
    ls, _ = al.least_squares_with_slope(xs, ys, [39])
    err = lambda p: float(((p - ys[:, 39:40]) ** 2).mean())  # noqa: E731
    assert err(pred) < 0.5 * err(ls)
    moved, _ = plants.kernel_smoother(xs, -ys, [39], 0.5, 0.01)
    assert torch.allclose(moved, -pred, atol=1e-8)


@pytest.mark.filterwarnings("ignore:divide by zero")  # without noise the ridge plant's ridge difference is 0
def test_the_pipeline_calls_planted_ridge_nearest_ridge_and_gd_on_the_grid_nearest_gd(monkeypatch):
    """The positive controls of the positive control, at one noise level. A ridge plant: GD's prediction ratio lies
    above 1 on its whole interval (ridge nearer). A GD plant placed exactly on the grid, without noise: GD's
    difference is 0 and the ratio far below 1, its cosine 1. Every plant is measured (the kernel smoother too).
    Catches the plants swapped, the pipeline choosing GD's member for the wrong model (or a member shared between
    plants by a wrong key), and a ratio taken the wrong way up."""
    monkeypatch.setattr(plants, "NOISES", (0.04,))
    numbers = power.plant_numbers(plants.power(CFG, 3), CFG["train_examples"])
    assert set(numbers) == {(3, name, 0.04) for name in plants.PLANTS}
    assert numbers[(3, "planted ridge", 0.04)]["pred"][0] > 1
    monkeypatch.setattr(plants, "plant_settings", lambda cfg: ON_GRID)
    monkeypatch.setattr(plants, "NOISES", (0.0,))
    exact = power.plant_numbers(plants.power(CFG, 3), CFG["train_examples"])
    gd = exact[(3, "planted GD", 0.0)]
    assert gd["pred"][0] < 0.01 and np.quantile(gd["pred"][21:], 0.95) < 0.01 and gd["cosine"][0] > 0.999


def _numbers(gd=0.5, ridge=3.0, kernel=2.0, cosines=(0.95, 0.3, 0.4), at=None):
    """A run's numbers whose answer is known: every depth and level of every plant the same, each exact (an interval
    of one point), but ``at``: {(depth, plant, level, measure): value or (value, lo, hi)}."""
    ratio = {"planted GD": gd, "planted ridge": ridge, "planted kernel smoother": kernel}
    cos = dict(zip(ratio, cosines))
    out = {}
    for d in (3, 4):
        for name in ratio:
            for lvl in plants.NOISES:
                out[(d, name, lvl)] = {k: point(cos[name] if k == "cosine" else ratio[name])
                                       for k in power.LINES}
    for (d, name, lvl, k), v in (at or {}).items():
        value, lo, hi = v if isinstance(v, tuple) else (v, v, v)
        out[(d, name, lvl)][k] = prompt_only(value, np.linspace(lo, hi, 201))
    return out


def _judged(monkeypatch, **kw):
    numbers = _numbers(**kw)
    monkeypatch.setattr(power, "plant_numbers", lambda blocks, train: numbers)
    blocks = pd.DataFrame({"task": ["icdl", "n01"]})
    entries = power.judge(blocks, 40, "cmd")
    return {e["claim"]: e for e in entries}, entries


def test_each_measure_is_judged_on_its_own_plants(monkeypatch):
    """One claim per measure and task, decided on that measure's own numbers at every depth and level: all plants on
    their sides pass every claim and meet every gate; a kernel smoother that the cosine calls GD fails the cosine's
    claim alone (the bug of the first design: one gate, the prediction ratio's, for every measure); a planted GD
    short of the cosine line at one depth and noise level fails it too (its worst is read, not the mean); a plant
    whose interval reaches the line leaves the claim open; waiting for the run, every claim names the command."""
    by, entries = _judged(monkeypatch)
    assert sorted(by) == sorted(f"mech-power-{m}{s}" for m in power.LINES for s in ("", "-n01"))
    assert all(e["passed"] is True for e in entries), entries
    assert power.gates(entries, "icdl") == {m: 1.0 for m in power.LINES} == power.gates(entries, "n01")
    by, entries = _judged(monkeypatch, cosines=(0.95, 0.3, 0.9))
    assert by["mech-power-cosine"]["passed"] is False and by["mech-power-cosine"]["values"]["nonlinear"] == 0.9
    assert power.gates(entries, "n01") == {"pred": 1.0, "sens": 1.0, "cosine": 0.0, "median": 1.0}
    by, entries = _judged(monkeypatch, at={(4, "planted GD", 0.45, "cosine"): 0.52})
    assert by["mech-power-cosine-n01"]["passed"] is False and by["mech-power-cosine-n01"]["value"] == 0.52
    assert all(e["passed"] is True for c, e in by.items() if "cosine" not in c)
    by, _ = _judged(monkeypatch, at={(3, "planted kernel smoother", 0.15, "pred"): 0.6})
    assert by["mech-power-pred"]["passed"] is False and by["mech-power-sens"]["passed"] is True
    by, _ = _judged(monkeypatch, at={(3, "planted GD", 0.3, "median"): (0.9, 0.8, 1.1)})
    assert by["mech-power-median"]["passed"] is None
    by, _ = _judged(monkeypatch, at={(3, "planted ridge", 0.04, "sens"): (1.3, 0.9, 1.6)})
    assert by["mech-power-sens"]["passed"] is None and by["mech-power-sens"]["values"]["ridge_lo"] < 1
    waiting = power.judge(None, 40, "the command")
    assert len(waiting) == 8 and all(e["passed"] is None and "the command" in e["ours"] for e in waiting)
    assert power.gates(waiting, "icdl") == {m: 0.0 for m in power.LINES}


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


def test_the_power_state_names_each_measure_and_the_plant_that_decided_it(monkeypatch):
    """The chapter's sentence: per task, the measures that have power and, for each that has none, the plant that
    decided it with its number and interval (the bug: "no power" said without the plant, or a measure with power
    listed among those without); while the run waits, that it waits."""
    _, entries = _judged(monkeypatch, cosines=(0.95, 0.3, 0.9))
    words = power.state_words(entries)
    icdl, n01 = words.split("; on ")
    assert icdl.startswith("on ICDL's inputs the prediction ratio, the sensitivity ratio and the median-block ratio "
                           "have power")
    assert "none has the cosine (the kernel smoother at 0.90 (0.90 to 0.90) against 0.8)" in icdl
    assert n01.startswith("inputs from N(0, I)")
    _, entries = _judged(monkeypatch, gd=1.2, cosines=(0.5, 0.3, 0.4))
    words = power.state_words(entries)
    assert "no measure has power" in words and "the GD at 1.20" in words and "the GD at 0.50" in words
    assert power.state_words(power.judge(None, 40, "cmd")).endswith("not been made yet")
    glue = power.glue(entries)
    assert glue["power_noises"] == "4, 15, 30, 45 %" and glue["power_gate_words"] == power.GATE
