"""Objective 4 (icdl.gpt_icl.depth)."""

import pandas as pd
import pytest
import torch

from icdl.gpt_icl import baselines as bl
from icdl.gpt_icl import depth, evaluation
from icdl.gpt_icl.tasks import PRETRAINING, TaskConfig, sample_prompts


def _table(r2s, examples=(15, 30)):
    """One row per model depth, attention and evaluation point, in the order given (not sorted by depth)."""
    return pd.DataFrame([{"n_layer": L, "attention": a, "examples": p, "r2": r}
                         for a, rs in r2s.items() for L, r in rs.items() for p in examples])


def test_judge_depth_both_sides():
    """The deepest and the shallowest model are found by their number of layers, not by row order (the rows
    come 10, 4, 6 here); the claim needs the deepest strictly above the shallowest for every attention and
    point: equal fails (a ``>=`` would pass), a loss at one attention fails the claim with that loss as value."""
    up = {10: 0.90, 4: 0.80, 6: 0.85}
    g = depth.gains(_table({"softmax": up, "relu": {10: 0.79, 4: 0.80, 6: 0.85}})).set_index(["attention", "examples"])
    assert g.loc[("softmax", 15), "deeper_better"] and g.loc[("softmax", 15), "gain"] == pytest.approx(0.10)
    assert not g.loc[("relu", 30), "deeper_better"] and g.loc[("relu", 30), "shallowest"] == pytest.approx(0.80)
    ok = depth.judge(_table({"softmax": up, "relu": up}))[0]
    assert ok["claim"] == "icdl-obj4" and ok["passed"] and ok["value"] == pytest.approx(0.10)
    tie = depth.judge(_table({"softmax": up, "relu": {10: 0.80, 4: 0.80}}))[0]
    assert not tie["passed"] and tie["value"] == pytest.approx(0.0)
    loss = depth.judge(_table({"softmax": up, "relu": {10: 0.75, 4: 0.80}}))[0]
    assert not loss["passed"] and loss["value"] == pytest.approx(-0.05)
    assert "relu @15: -0.050" in loss["ours"]


def test_the_gains_table_shows_signed_gains_beside_the_depths_they_compare():
    """The chapter's table: the gain with its sign (a minus sign, not a hyphen), the R² of the shallowest and
    the deepest model headed by their layer counts (found from the data: rows come 10, 4, 6)."""
    shown = depth.gains_shown(_table({"softmax": {10: 0.79, 4: 0.80, 6: 0.85}, "relu": {10: 0.90, 4: 0.80}}))
    assert list(shown.columns) == ["attention", "examples", "gain", "R², 4 layers", "R², 10 layers"]
    row = shown.set_index(["attention", "examples"])
    assert row.loc[("softmax", 15), "gain"] == "−0.010" and row.loc[("relu", 30), "gain"] == "+0.100"
    assert row.loc[("softmax", 15), "R², 10 layers"] == "0.790" and row.loc[("relu", 15), "R², 4 layers"] == "0.800"


def test_depth_results_load_under_one_column_name():
    """A result written when the column was still called ``position`` reads as ``examples`` (the same number:
    examples before the query); a current one is left as it is."""
    old = {"data": {"table": {"n_layer": [4], "attention": ["relu"], "position": [15], "r2": [0.5], "lo": [0.4],
                              "hi": [0.6]}, "baselines": {"method": ["least squares"], "position": [15], "r2": [0.9]},
                    "history": {}, "training": {}, "complete": True, "seconds": 1.0}, "provenance": {}}
    got = depth.load(old)
    assert list(got["table"]["examples"]) == [15] and "position" not in got["table"]
    assert list(got["baselines"]["examples"]) == [15] and got["complete"] is True


def test_the_study_scores_the_query_after_the_stated_number_of_examples():
    """``examples`` = p means the query is the (p + 1)-th point of the prompt: the study's R² at p equals the
    R² across prompts of the model's predictions at index p (an off-by-one would read index p − 1)."""
    cfg = depth.PROFILES.resolve("quick", layers=(1,), steps=4, warm_steps=2, relu_steps=2, examples=(3, 5),
                                 test_prompts=64)
    res = depth.depth_study(cfg, progress=False)
    assert res["complete"] and sorted(res["table"]["examples"].unique()) == [3, 5]
    xs, ys = evaluation.test_prompts(cfg, cfg["target_depth"], PRETRAINING)
    ls = bl.r2_across_prompts(bl.least_squares(xs, ys), ys)
    b = res["baselines"].set_index(["method", "examples"])["r2"]
    assert b[(bl.LEAST_SQUARES, 3)] == pytest.approx(float(ls[3]))
    assert b[(bl.LEAST_SQUARES, 5)] == pytest.approx(float(ls[5]))
    assert b[(bl.LEAST_SQUARES, 3)] != pytest.approx(float(ls[2]))
    with pytest.raises(ValueError, match="test_examples"):
        depth.depth_study(depth.PROFILES.resolve("quick", examples=(30,)), progress=False)


class _ExactAt(torch.nn.Module):
    """A stand-in model that predicts the label exactly at one index and 0 everywhere else."""

    def __init__(self, index):
        super().__init__()
        self.w, self.index = torch.nn.Parameter(torch.zeros(1)), index

    def forward(self, xs, ys):
        out = torch.zeros_like(ys)
        out[:, self.index] = ys[:, self.index]
        return out


def test_models_are_scored_at_the_index_of_the_stated_number_of_examples():
    """``examples`` = p scores the prediction at index p (the query after p examples): a model exact only at
    index 3 has R² 1 at p = 3 and not at p = 4 (reading index p − 1 or p + 1 would swap them)."""
    xs, ys = sample_prompts(TaskConfig(d=3, depth=2), 256, 8, torch.Generator().manual_seed(3))
    rows = {r["examples"]: r for r in depth._scores(_ExactAt(3), xs, ys, [3, 4])}
    assert rows[3]["r2"] == pytest.approx(1.0) and rows[3]["lo"] <= 1.0 <= rows[3]["hi"] + 1e-12
    assert rows[4]["r2"] < 0.5


def test_a_current_depth_result_loads_unchanged():
    raw = {"data": {"table": {"n_layer": [4], "attention": ["relu"], "examples": [15], "r2": [0.5]},
                    "baselines": {"method": ["least squares"], "examples": [15], "r2": [0.9]},
                    "history": {}, "training": {}, "complete": False, "seconds": 2.0}, "provenance": {"x": 1}}
    got = depth.load(raw)
    assert got["table"].to_dict("list") == raw["data"]["table"] and got["complete"] is False
    assert got["provenance"] == {"x": 1} and got["seconds"] == 2.0


def test_settings_glue_quotes_the_given_profile():
    g = depth.settings_glue(depth.PROFILES.resolve("reference"))
    assert g["depth_steps"] == "6 500" and g["depth_prompts"] == "4 096" and g["depth_target"] == "4"
    assert depth.settings_glue(depth.PROFILES.resolve("quick"))["depth_prompts"] == "256"


def test_the_reference_depth_study_trains_on_the_main_studys_schedule():
    """Objective 4 compares depths at the main models' budget: a depth study on a shorter (or longer) schedule
    than ``gpt_icl``'s reference would judge the deeper models on another training than the claims it sits
    beside (the bug: the depth profile's lengths edited, or left behind when the main study's change)."""
    from icdl.gpt_icl import objectives

    main, study = objectives.PROFILES.resolve("reference"), depth.PROFILES.resolve("reference")
    for key in ("steps", "warm_steps", "relu_steps", "relu_init", "warm_family", "warm_width", "lr"):
        assert study[key] == main[key], key
