"""The schedule scan (icdl.gpt_icl.schedules.scan): the rule that picks a schedule from validation curves, the
runs' settings, resuming, and the committed scans' agreement with what the rule reads off them."""

from __future__ import annotations

import pandas as pd
import pytest

from icdl.gpt_icl.core.schedule import SEED_PER_TARGET_DEPTH
from icdl.gpt_icl.core.training import SEEDS, validation_prompts
from icdl.gpt_icl.schedules import scan


def _curve(lr, batch, values, every=100, cm=0.4):
    return pd.DataFrame({"lr": lr, "batch": batch, "step": [every * (i + 1) for i in range(len(values))],
                         "loss": 0.0, "val_r2": values, "val_context_mean": cm})


def test_the_rule_picks_the_best_run_and_the_step_where_its_curve_turns_flat():
    """A run whose best is highest wins even if another ends higher at some other point in the grid order;
    its steps are the first evaluation within FLAT of its best (not the best's own step, an off-by-one
    that would train 2x longer; not the last). Catches max taken over the last value instead of the best, and
    the flat step taken from the wrong run."""
    slow = _curve(1e-4, 64, [0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75])
    fast = _curve(1e-3, 64, [0.50, 0.80, 0.85, 0.898, 0.90, 0.899, 0.901, 0.897])
    plateau = _curve(3e-4, 32, [0.41, 0.41, 0.41, 0.41, 0.41, 0.41, 0.41, 0.41])
    chosen = scan.choose(pd.concat([slow, fast, plateau], ignore_index=True))
    assert (chosen["lr"], chosen["batch"]) == (1e-3, 64)
    assert chosen["best_r2"] == pytest.approx(0.901)
    assert chosen["steps"] == 400  # 0.898 >= 0.901 - 0.005; 0.85 is not
    assert chosen["rising"] is False


def test_a_run_still_climbing_at_the_budget_is_flagged_rising_and_a_flat_one_is_not():
    """``rising``: more than FLAT gained over the last quarter of the steps (the budget ended the run, not the
    curve). Catches a sign error (a falling curve flagged) and a window that is not the last quarter."""
    climbing = scan.runs_table(_curve(1e-3, 64, [0.5, 0.6, 0.7, 0.75, 0.78, 0.80, 0.81, 0.82]))
    assert bool(climbing["rising"].iloc[0]) is True
    flat = scan.runs_table(_curve(1e-3, 64, [0.5, 0.8, 0.85, 0.86, 0.862, 0.863, 0.864, 0.865]))
    assert bool(flat["rising"].iloc[0]) is False  # +0.003 over the last quarter
    falling = scan.runs_table(_curve(1e-3, 64, [0.5, 0.8, 0.86, 0.86, 0.85, 0.84, 0.83, 0.82]))
    assert bool(falling["rising"].iloc[0]) is False
    assert float(climbing["lead"].iloc[0]) == pytest.approx(0.82 - 0.4)


def test_a_tie_goes_to_the_first_run_in_the_grid_order():
    a, b = _curve(3e-4, 32, [0.5, 0.7]), _curve(1e-3, 32, [0.6, 0.7])
    assert scan.choose(pd.concat([a, b], ignore_index=True))["lr"] == 3e-4
    assert scan.choose(pd.concat([b, a], ignore_index=True))["lr"] == 1e-3


@pytest.mark.parametrize("profile, centre", [("n01", 0.0), ("icdl", 2.0), ("quick", 0.0)])
def test_every_run_is_the_main_study_s_depth_3_softmax_model_from_scratch_on_its_task(profile, centre):
    """The runs differ only in step size and batch: the seed of the main study's depth-3 model, no warm phase, no
    warm start, no curriculum, the profile's inputs (a profile on the wrong task, or a run with the tanh warm phase
    the issue found to delay learning, would be caught)."""
    cfg = scan.PROFILES.resolve(profile)
    seen = set()
    for lr, batch in scan.grid(cfg):
        model, task, tr = scan.configs(cfg, lr, batch)
        assert (tr.lr, tr.batch) == (lr, batch) and (lr, batch) not in seen
        seen.add((lr, batch))
        assert tr.seed == cfg["seed"] + SEED_PER_TARGET_DEPTH * 3 and tr.warm_steps == 0 and not tr.init_from
        assert tr.curriculum_interval == 0 and task.centre == centre and task.depth == 3 and task.family == "relu"
        assert model.attention == "softmax" and tr.eval_every == cfg["eval_every"] and tr.steps == cfg["steps"]
    assert len(seen) == len(cfg["lrs"]) * len(cfg["batches"])


def test_the_validation_prompts_are_the_same_for_every_run_and_not_the_training_stream():
    """Runs are compared on one set of prompts (paired), drawn with a seed of their own."""
    cfg = scan.PROFILES.resolve("quick")
    (_, task, a), (_, _, b) = (scan.configs(cfg, lr, batch) for lr, batch in scan.grid(cfg)[:2])
    xa, _ = validation_prompts(task, a)
    xb, _ = validation_prompts(task, b)
    assert (xa == xb).all() and SEEDS["validation"] != SEEDS["prompts"]


def test_steps_that_are_not_a_multiple_of_the_evaluation_are_refused():
    cfg = scan.PROFILES.resolve("quick", steps=50)
    with pytest.raises(ValueError, match="multiple of eval_every"):
        scan.configs(cfg, 1e-3, 16)


def test_a_stopped_scan_resumes_to_the_same_curves(tmp_path):
    """Two calls of 40 and 20 steps per run give the curves of one uninterrupted scan (a resume that restarted
    the generator or the optimiser would change them)."""
    cfg = scan.PROFILES.resolve("quick")
    whole = scan.scan(cfg, progress=False)
    part = scan.scan(cfg, folder=tmp_path, steps_this_call=40, progress=False)
    assert not part["complete"]
    rest = scan.scan(cfg, folder=tmp_path, progress=False)
    assert rest["complete"]
    pd.testing.assert_frame_equal(rest["history"], whole["history"], atol=1e-5, rtol=0)
    assert set(whole["levels"]) == {"context_mean", "least_squares"}
    assert whole["levels"]["least_squares"] > whole["levels"]["context_mean"]


def test_the_quick_scan_moves_the_model_and_its_curves_are_all_there():
    cfg = scan.PROFILES.resolve("quick")
    res = scan.scan(cfg, progress=False)
    h = res["history"]
    assert len(h) == len(scan.grid(cfg)) * cfg["steps"] // cfg["eval_every"]
    for _, g in h.groupby(["lr", "batch"]):
        assert list(g["step"]) == list(range(cfg["eval_every"], cfg["steps"] + 1, cfg["eval_every"]))
        assert g["loss"].iloc[-1] < g["loss"].iloc[0] * 1.5  # finite, not diverged


def test_the_reader_s_table_and_words_name_the_chosen_run_beside_its_yardsticks():
    """shown() and glue_words(): the chosen schedule (not the first or the last run), its best validation R² beside
    the context mean and least squares of that task's own scan, and the command while the scan waits."""
    fast = _curve(1e-3, 64, [0.50, 0.80, 0.897, 0.898, 0.90])
    slow = _curve(1e-4, 32, [0.40, 0.45, 0.50, 0.55, 0.60])
    scans = {"a": {"history": pd.concat([slow, fast], ignore_index=True),
                   "levels": {"context_mean": 0.43, "least_squares": 0.75}},
             "b": {"history": slow, "levels": {"context_mean": 0.9, "least_squares": 0.97}}}
    table = scan.shown(scans).set_index("task")
    # a rate as the prose writes it (the bug: "0.0001" in the table beside "lr 1e-4")
    assert table.loc["a", "learning rate"] == "1e-3" and table.loc["a", "batch"] == 64
    assert table.loc["a", "steps"] == "300" and table.loc["a", "validation R²"] == "0.900"
    assert table.loc["b", "context mean"] == "0.900" and table.loc["b", "still rising at the budget"] == "yes"
    words = scan.glue_words(scans, "a")["scan_n01_words"]
    assert "learning rate 1e-3 and batch 64" in words and "0.900 after 300 steps" in words
    assert "context mean reaches 0.430 and least squares 0.750" in words and "rising" not in words
    assert "python -m icdl.gpt_icl.schedules --profile n01" in scan.glue_words({}, "a")["scan_n01_words"]


@pytest.mark.parametrize("profile, task, fitted, centre", [("n01", "n01", "N01_FITTED", 0.0),
                                                            ("fitted", "icdl", "FITTED", 2.0)])
def test_a_fitted_study_trains_at_the_schedule_the_committed_scan_chose(profile, task, fitted, centre):
    """Profiles ``n01`` and ``fitted`` of the main study are the scan's choice on their task (x ~ N(0, I), and
    ICDL's own), not a schedule typed beside it: step size, batch and steps are what :func:`scan.choose` reads off
    the committed ``scan.<task>.json``, with no warm phase and no warm start, and the depth-3 softmax model at seed 0
    is the scan's chosen run (the same model, task, optimiser and seed; the study trains it ``fast``, the same update
    up to rounding). ``fitted`` differs from the reference in its schedule alone. Catches a profile left at the old
    schedule (lr 1e-3, batch 32, tanh warm phase), a steps count read off the wrong scan, a ReLU model still
    warm-started from the softmax one, and the task's centre moved."""
    from icdl.gpt_icl.core import main_study
    from icdl.gpt_icl.core.schedule import configs
    from icdl.repro.files import results_dir
    from icdl.repro.results import load_result

    history = pd.DataFrame(load_result(results_dir("gpt_n01") / f"scan.{task}.json")["data"]["history"])
    chosen = scan.choose(history)
    assert getattr(main_study, fitted) == {k: chosen[k] for k in ("lr", "batch", "steps")}
    cfg, ref = main_study.PROFILES.resolve(profile), main_study.PROFILES.resolve("reference")
    for attention in ("softmax", "relu"):
        model, task_cfg, tr = configs(cfg, 3, attention, cfg["n_layer"])
        assert (tr.lr, tr.batch, tr.steps) == (chosen["lr"], chosen["batch"], chosen["steps"])
        assert tr.warm_steps == 0 and tr.warm_task is None and not tr.init_from and tr.fast
        assert task_cfg.centre == centre
    s_model, s_task, s_tr = scan.configs(scan.PROFILES.resolve(task), chosen["lr"], chosen["batch"])
    model, task_cfg, tr = configs(cfg, 3, "softmax", cfg["n_layer"])
    assert (model, task_cfg) == (s_model, s_task)
    assert (tr.seed, tr.examples, tr.curriculum_interval) == (s_tr.seed, s_tr.examples, s_tr.curriculum_interval)
    assert ref["fast"] is False
    if profile == "fitted":
        schedule = {"lr", "batch", "steps", "warm_steps", "relu_steps", "warm_family", "relu_init", "fast",
                    "profile", "run"}
        assert {k for k in cfg if cfg[k] != ref.get(k)} == schedule

