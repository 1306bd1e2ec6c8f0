"""The recipe scan (icdl.gpt_icl.recipes, issue 67) and the learning-rate schedule it adds to training
(icdl.gpt_icl.core.training.lr_at): the rule that lets a candidate replace the incumbent only by more than the
noise, flatness read on both sides of its line, and a cosine run that resumes exactly."""

import math

import pandas as pd
import pytest
import torch

from icdl.gpt_icl.core.training import TrainConfig, lr_at, train
from icdl.gpt_icl.recipes import run as recipe_run
from icdl.gpt_icl.recipes import scan


def test_the_cosine_schedule_warms_up_linearly_peaks_and_ends_at_its_floor():
    """The bugs: a warm-up that starts at the peak or at 0 (an off-by-one: the first update then does nothing), a
    cosine over the wrong span that never reaches its floor, a floor applied to the constant schedule."""
    c = TrainConfig(steps=1000, lr=1e-3, lr_schedule="cosine", warmup_steps=100, lr_floor=1e-4)
    assert lr_at(c, 0) == pytest.approx(1e-5) and lr_at(c, 49) == pytest.approx(5e-4)
    assert lr_at(c, 99) == pytest.approx(1e-3) and lr_at(c, 100) == pytest.approx(1e-3)
    assert lr_at(c, 999) == pytest.approx(1e-4)
    mid = 100 + (999 - 100) / 2
    assert lr_at(c, int(mid)) == pytest.approx(1e-4 + 0.9e-3 * 0.5 * (1 + math.cos(math.pi * (int(mid) - 100) / 899)))
    assert all(lr_at(c, s) >= lr_at(c, s + 1) for s in range(100, 999))  # decays, never rises, after the warm-up
    flat = TrainConfig(steps=1000, lr=3e-4)
    assert {lr_at(flat, s) for s in (0, 500, 999)} == {3e-4}


def test_a_schedule_s_settings_are_refused_in_one_line_where_they_make_no_sense():
    with pytest.raises(ValueError, match="lr_schedule must be"):
        TrainConfig(lr_schedule="linear")
    with pytest.raises(ValueError, match="belong to the cosine schedule"):
        TrainConfig(warmup_steps=10)
    with pytest.raises(ValueError, match="lr_floor must lie in"):
        TrainConfig(lr=1e-4, lr_schedule="cosine", lr_floor=1e-3)
    with pytest.raises(ValueError, match="warmup_steps must lie in"):
        TrainConfig(steps=100, lr_schedule="cosine", warmup_steps=100)


def test_the_constant_schedule_stores_no_schedule_so_committed_checkpoints_still_match():
    """A checkpoint written before the schedule existed holds no lr_schedule: the constant schedule must store
    none (the bug: every committed model refused as 'written with other settings')."""
    assert "lr_schedule" not in TrainConfig().to_dict()
    cos = TrainConfig(steps=100, lr_schedule="cosine", warmup_steps=5, lr_floor=1e-5).to_dict()
    assert cos["lr_schedule"] == "cosine" and cos["warmup_steps"] == 5


def test_a_cosine_run_stopped_and_resumed_ends_with_the_weights_of_one_run_through(tmp_path):
    """The schedule is a function of the step: a resumed run takes up the decay where it stopped (the bug: a
    scheduler's state lost on resume, restarting the warm-up)."""
    cfg = scan.PROFILES.resolve("quick")
    model, task, tr = scan.configs(cfg, "cosine", "softmax", 0)
    whole = train(model, task, tr, progress=False)["model"]
    ck = tmp_path / "run.pt"
    train(model, task, tr, checkpoint=ck, max_steps_this_call=25, progress=False)
    resumed = train(model, task, tr, checkpoint=ck, progress=False)["model"]
    for a, b in zip(whole.state_dict().values(), resumed.state_dict().values()):
        assert torch.equal(a, b)
    const = train(*scan.configs(cfg, "incumbent", "softmax", 0), progress=False)["model"]
    assert not torch.equal(next(iter(const.state_dict().values())), next(iter(whole.state_dict().values())))


def _history(finals: dict, steps=(100, 200, 300, 400), rise: float = 0.0) -> pd.DataFrame:
    """Planted curves: ``finals`` ``{(attention, candidate): [final R² per seed]}``, each curve rising by ``rise``
    over its last quarter."""
    rows = []
    for (att, name), values in finals.items():
        for rep, v in enumerate(values):
            for s in steps:
                rows.append({"attention": att, "candidate": name, "replicate": rep, "step": s,
                             "val_r2": v - (rise if s <= 0.75 * steps[-1] else 0.0), "loss": 1.0,
                             "val_context_mean": 0.4})
    return pd.DataFrame(rows)


def test_a_candidate_replaces_the_incumbent_only_by_more_than_the_noise():
    """Within the noise the incumbent stays (the bug: the highest score wins a tie, as the first scan's did); by
    more than the larger seed spread and MIN_NOISE the candidate wins; the rule is per attention."""
    h = _history({("softmax", "incumbent"): [0.870, 0.876], ("softmax", "cosine"): [0.878, 0.884],
                  ("relu", "incumbent"): [0.80, 0.82], ("relu", "cosine"): [0.86, 0.87]})
    c = scan.choose(h)
    assert c["softmax"]["candidate"] == "incumbent" and c["softmax"]["margin"] == 0.0
    assert c["relu"]["candidate"] == "cosine"
    assert c["relu"]["margin"] == pytest.approx(0.055) and c["relu"]["noise"] == pytest.approx(0.02)
    # the seed spread, not the floor, sets the noise where it is larger: 0.06 apart, a spread of 0.08
    wide = scan.choose(_history({("relu", "incumbent"): [0.76, 0.84], ("relu", "cosine"): [0.85, 0.87]}))
    assert wide["relu"]["candidate"] == "incumbent" and wide["relu"]["noise"] == pytest.approx(0.08)
    with pytest.raises(ValueError, match="no incumbent run"):
        scan.choose(_history({("relu", "cosine"): [0.8, 0.8]}))


def test_flat_reads_the_gain_over_the_last_quarter_on_both_sides_of_its_line():
    assert scan.flat(_history({("s", "i"): [0.8]}, rise=0.004)) is True
    assert scan.flat(_history({("s", "i"): [0.8]}, rise=0.006)) is False
    assert scan.scores(_history({("s", "i"): [0.8, 0.9]}, rise=0.006))["flat"].tolist() == [False]


def test_the_scan_s_runs_are_the_main_study_s_models_under_each_recipe():
    """The n01 profile trains the main study's depth-3 models at their own seeds (300, 10 300: so its runs are
    those models under each recipe), each candidate to the same horizon, the incumbent at N01_FITTED's rate and
    batch, and its shards split the runs without loss or overlap."""
    from icdl.gpt_icl.core.main_study import N01_FITTED

    cfg = scan.PROFILES.resolve("n01")
    runs = scan.runs(cfg)
    assert len(runs) == 8 and len(set(runs)) == 8
    _, task, tr = scan.configs(cfg, "incumbent", "relu", 1)
    assert (tr.seed, tr.lr, tr.batch, tr.lr_schedule, task.centre) == (10_300, N01_FITTED["lr"], N01_FITTED["batch"],
                                                                       "constant", 0.0)
    _, _, cos = scan.configs(cfg, "cosine", "softmax", 0)
    assert cos.seed == 300 and cos.steps == tr.steps == cfg["horizon"] and cos.lr_schedule == "cosine"
    halves = recipe_run.shard_of(cfg, (0, 2)) + recipe_run.shard_of(cfg, (1, 2))
    assert sorted(halves) == sorted(runs)
    with pytest.raises(ValueError, match="--shard must be I/N"):
        recipe_run.shard_of(cfg, (2, 2))


def test_the_reader_s_tables_say_each_recipe_and_mark_the_rule_s_choice():
    """design_shown writes each candidate's schedule in words; choice_shown marks the candidate choose() picks,
    per attention (the bug: the highest score marked, where the rule kept the incumbent)."""
    design = scan.design_shown("n01")
    assert design["recipe"].tolist() == ["incumbent", "cosine"]
    assert design["learning rate"].tolist()[0] == "constant 1e-4"
    assert "cosine decay to 6e-5" in design["learning rate"][1]
    h = _history({("softmax", "incumbent"): [0.870, 0.876], ("softmax", "cosine"): [0.878, 0.884],
                  ("relu", "incumbent"): [0.80, 0.82], ("relu", "cosine"): [0.86, 0.87]})
    shown = scan.choice_shown(h).set_index(["attention", "recipe"])
    assert shown.loc[("softmax", "incumbent"), "chosen"] == "yes" and shown.loc[("softmax", "cosine"), "chosen"] == ""
    assert shown.loc[("ReLU", "cosine"), "chosen"] == "yes"


def test_on_icdl_s_task_the_incumbent_is_the_reference_schedule_with_its_warm_phase():
    """The grid must hold the recipe it may replace (issue 67): the bugs a drifted incumbent (another rate or batch),
    a warm phase dropped or on the wrong inputs (centre 0 where ICDL's is 2), and a warm phase leaking into the
    cosine candidate."""
    from icdl.gpt_icl.core.main_study import PROFILES as MAIN
    from icdl.gpt_icl.core.schedule import configs as main_configs

    ref = MAIN.resolve("reference")
    _, ref_task, ref_tr = main_configs(ref, 3, "softmax", ref["n_layer"], 1)
    cfg = scan.PROFILES.resolve("icdl")
    _, task, tr = scan.configs(cfg, "incumbent", "softmax", 1)
    assert (tr.lr, tr.batch, tr.warm_steps, tr.lr_schedule) == (ref_tr.lr, ref_tr.batch, ref_tr.warm_steps, "constant")
    assert tr.warm_task == ref_tr.warm_task and tr.warm_task.centre == 2.0 and tr.warm_task.family == "tanh"
    assert task == ref_task and tr.seed == ref_tr.seed and tr.steps == cfg["horizon"]
    _, _, relu = scan.configs(cfg, "incumbent", "relu", 1)
    assert relu.warm_steps == 5000 and relu.init_from == ""  # from scratch, the warm phase its own (the deviation)
    _, _, cos = scan.configs(cfg, "cosine", "softmax", 1)
    assert cos.warm_steps == 0 and cos.warm_task is None and cos.lr_schedule == "cosine"
    assert "warm phase" in scan.design_shown("icdl")["learning rate"].iloc[0]
    assert "warm phase" not in scan.design_shown("icdl")["learning rate"].iloc[1]
