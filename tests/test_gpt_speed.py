"""Training speed against a same-run matmul (icdl.gpt_icl.compute.speed)."""

import pytest
import torch

from icdl.gpt_icl.compute import speed
from icdl.gpt_icl.core import main_study
from icdl.repro.profiles import ProfileError


def test_smoke_command_reports_and_fails_fast_without_a_gpu(capsys):
    """The GPU smoke test's logic, run for two steps on the CPU; ``--device cuda`` on a machine without a GPU
    is one line and exit code 2 before any work."""
    from icdl.gpt_icl.__main__ import main

    assert main(["--profile", "reference", "--smoke", "2", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "steps/s" in out and "for a large matmul here" in out and "on 8 device(s)" in out
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit) as exc:
            main(["--profile", "paper", "--smoke", "100", "--device", "cuda"])
        assert exc.value.code == 2 and "no CUDA device" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--profile", "reference", "--smoke", "0"])


def test_concurrent_smoke_trains_in_single_threaded_processes():
    """Two processes at once, each one thread, each the profile's model: catches workers that inherit the
    parent's thread count (four threads on two cores) or time another model than the one-process figure."""
    from icdl.gpt_icl.compute.speed import concurrent_smoke, smoke

    cfg = main_study.PROFILES.resolve("quick")
    both = concurrent_smoke(cfg, processes=2, steps=3)
    one = smoke(cfg, device="cpu", steps=1, warmup=0, matmul_n=64)
    assert [r["threads"] for r in both] == [1, 1]
    assert [r["flops_per_step"] for r in both] == [one["flops_per_step"]] * 2


def test_speed_table_keeps_two_threads_and_two_processes_apart_and_takes_medians():
    """Three rounds per setting: the table's share is the median (an outlier round does not move it, a mean
    would), the spread is min..max, and two processes × one thread is its own row beside one process × two
    threads (grouping by threads alone would average them)."""
    from icdl.gpt_icl.compute.speed import speed_table

    def run(p, t, share):
        return {"processes": p, "threads": t, "steps_per_s": 10 * share, "achieved_flops": share * 100.0,
                "matmul_flops": 100.0, "share_of_matmul": share}

    runs = [run(1, 1, s) for s in (0.50, 0.46, 0.90)] + [run(1, 2, s) for s in (0.35, 0.38, 0.36)] + \
        [run(2, 2, s) for s in (0.48, 0.52, 0.50)]
    st = speed_table({"runs": runs}).set_index(["processes", "threads"])
    assert st.loc[(1, 1), "share_of_matmul"] == pytest.approx(0.50)
    assert (st.loc[(1, 1), "share_lo"], st.loc[(1, 1), "share_hi"]) == pytest.approx((0.46, 0.90))
    assert st.loc[(1, 2), "share_of_matmul"] == pytest.approx(0.36)
    assert st.loc[(2, 2), "share_of_matmul"] == pytest.approx(0.50)
    assert st["rounds"].tolist() == [3, 3, 3]


def test_share_verdict_on_both_sides_of_the_target():
    """The lowest round at the target meets it; below it but the highest at it reaches it in some rounds;
    both below fall short (a mean or a ``>`` would move the boundary cases)."""
    t = speed.TARGET_SHARE
    assert speed.share_verdict(t, t + 0.1) == "meets the target in every round"
    assert speed.share_verdict(t - 0.01, t) == "reaches the target in some rounds, not in all"
    assert speed.share_verdict(t - 0.2, t - 0.01) == "falls short of the target in every round"


def test_speed_glue_keys_each_setting_and_skips_missing_ceilings():
    def run(p, t, share, ceiling=None):
        r = {"processes": p, "threads": t, "steps_per_s": 1.0, "achieved_flops": share * 100.0,
             "matmul_flops": 100.0, "share_of_matmul": share}
        return r | ({"ceiling_share_of_matmul": ceiling, "gemm_share_of_matmul": ceiling} if ceiling else {})

    runs = [run(1, 1, s, 0.8) for s in (0.48, 0.52, 0.50)] + [run(2, 2, s) for s in (0.40, 0.42, 0.41)]
    g = speed.speed_glue({"rounds": 3, "runs": runs})
    assert g["speed_share_1"] == "50 %" and g["speed_lo_1"] == "48 %" and g["speed_hi_1"] == "52 %"
    assert g["speed_ceiling_1"] == "80 %" and "speed_ceiling_2p" not in g
    assert g["speed_verdict_1"].startswith("reaches") and g["speed_verdict_2p"].startswith("falls short")
    shown = speed.speed_shown(speed.speed_table({"runs": runs})).set_index("setting")
    assert shown.loc["2 processes × 1 thread", "all products alone"] == "—"  # no ceiling of its own
    assert shown.loc["1 process × 1 thread", "share of the matmul (range)"] == "50 % (48 %–52 %)"


def test_the_command_dispatches_measurements_to_their_writer(monkeypatch, capsys):
    """``--benchmark`` and ``--speed`` each run their measurement once and write it under its own name;
    ``--workers`` runs the pipeline with the profile's seed; none of them trains a study."""
    from icdl.gpt_icl import __main__ as cli

    calls = []
    monkeypatch.setattr(cli, "benchmark", lambda cfg: calls.append(("benchmark", cfg["profile"])) or ["case"])
    monkeypatch.setattr(cli, "run_speed", lambda cfg: calls.append(("speed", cfg["profile"])) or {"runs": []})
    monkeypatch.setattr(cli, "save_measurement", lambda cfg, name, res, t: calls.append(("save", name, res)) or name)
    monkeypatch.setattr(cli, "run_reference",
                        lambda profile, workers, seed: calls.append(("workers", workers, seed)) or 0)
    monkeypatch.setattr(cli.main_study, "run", lambda *a, **k: pytest.fail("a measurement must not train"))
    assert cli.main(["--profile", "reference", "--benchmark"]) == 0
    assert cli.main(["--profile", "reference", "--speed"]) == 0
    assert cli.main(["--profile", "reference", "--workers", "2"]) == 0
    assert calls == [("benchmark", "reference"), ("save", "benchmark", {"cases": ["case"]}), ("speed", "reference"),
                     ("save", "speed", {"runs": []}), ("workers", 2, 0)]


def test_the_smoke_test_does_not_need_the_memory_of_a_whole_study(monkeypatch, capsys):
    """On a small machine the paper profile's evaluation does not fit, but the smoke test only trains: it must
    get past the settings (here it stops at its own argument check), not fail on the studies' memory."""
    from icdl.gpt_icl import __main__ as cli
    from icdl.repro import profiles

    monkeypatch.setattr(profiles, "machine_memory", lambda: 16.0 * 2**30)  # the smoke needs ~8.4, the study ~47
    with pytest.raises(ProfileError):
        main_study.PROFILES.resolve("paper")  # the study itself does not fit
    with pytest.raises(SystemExit) as exc:
        cli.main(["--profile", "paper", "--smoke", "0"])
    assert exc.value.code == 2 and "--smoke must be >= 1" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--smoke", "1", "--workers", "2"], "separate commands"),
    (["--benchmark", "--speed"], "separate commands"),
    (["--speed", "--part", "main"], "trains no study"),
    (["--part", "shift", "--depths", "3"], "--depths trains a subset of the main models"),
    (["--depths", "3"], "--depths trains a subset of the main models"),
    (["--part", "main", "--layers", "4"], "--layers trains a subset"),
    (["--epochs", "5"], "unrecognized arguments"),      # no abbreviations
    (["--dep", "3", "--part", "main"], "unrecognized arguments"),
])
def test_flags_a_command_would_ignore_are_refused_in_one_line(argv, message, capsys):
    """A flag the chosen command does not use is an error before any work (not silently ignored), and no
    prefix of a flag is taken for the flag."""
    from icdl.gpt_icl.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main(["--profile", "reference", *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and "Traceback" not in err


def test_the_huggingface_design_is_our_architecture_and_the_side_by_side_table_reads_rounds():
    """The benchmark compares like with like: the HuggingFace model has our parameters plus its one-row token
    embedding, maps prompts to one prediction per example, and the ratio is taken round by round."""
    from icdl.gpt_icl.core.model import GPTConfig, InContextGPT

    pytest.importorskip("transformers")
    mcfg = GPTConfig(d=5, n_layer=2, n_head=2, n_embd=32, max_examples=10)
    hf = speed.hf_gpt2(mcfg)
    ours = InContextGPT(mcfg)
    assert sum(p.numel() for p in hf.parameters()) == ours.num_params() + mcfg.n_embd
    assert hf(torch.randn(3, 7, 5), torch.randn(3, 7)).shape == (3, 7)
    rows = [{"round": r, "variant": v, "params": 1, "steps_per_s": s, "share_of_matmul": s / 100}
            for r, (a, b, c) in enumerate([(12, 13, 10), (6, 7, 5), (9, 16, 10)])
            for v, s in zip(speed.VARIANTS, (a, b, c))]
    t = speed.side_by_side_table({"rows": rows}).set_index("variant")
    # ours against HuggingFace round by round: 1.2, 1.2, 0.9 (median 1.2); the ratio of the medians would be 0.9
    assert t.loc["ours", "over_hf"] == pytest.approx(1.2) and t.loc["ours", "over_hf_lo"] == pytest.approx(0.9)
    assert t.loc["ours, compiled", "over_hf_lo"] == pytest.approx(1.3)
    assert t.loc["ours, compiled", "over_hf_hi"] == pytest.approx(1.6)
    glue = speed.side_by_side_glue({"rounds": 3, "rows": rows})
    assert glue["sbs_fast_hf_verdict"] == "reaches the target in some rounds, not in all"
    assert glue["sbs_plain_hf_verdict"] == "falls short of the target in every round"
