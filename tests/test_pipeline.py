"""The scheduler of the whole GPT reference run (``python -m icdl.gpt_icl --workers N``), on stand-in jobs
that sleep or fail, so that its order, concurrency and failure handling are checked in seconds."""

import sys
import time

import pandas as pd
import pytest

from conftest import assert_process_ends, scratch_clone, started_job_pid
from icdl.gpt_icl import depth, plateau, reference
from icdl.gpt_icl.core import jobs, main_study
from icdl.gpt_icl.core.jobs import Job, check_jobs, run_jobs
from icdl.gpt_icl.reference import schedule

# a stand-in for ``python -m icdl.gpt_icl``: the job's first argument is how long it sleeps, a negative one fails
SLEEPER = (sys.executable, "-c",
           "import sys, time; s = float(sys.argv[1]); time.sleep(abs(s)); sys.exit(1 if s < 0 else 0)")


def _run(jobs, workers, tmp_path):
    return run_jobs(jobs, workers=workers, logs=tmp_path, python=SLEEPER, poll_s=0.02, echo=lambda *_: None)


def _by_name(res):
    return {r["name"]: r for r in res["jobs"]}


@pytest.mark.parametrize("kind", ["link", "folder"])
def test_a_job_log_that_is_not_a_file_is_refused_before_any_job_starts(tmp_path, kind):
    """A link (or a folder) where a job's log goes (``runs/gpt_icl_<profile>/<n>.log``) -- the bug: the log was
    opened following links, so a link planted there had its target (here the reader's README) emptied and
    overwritten by the job's output -- is refused in one line (ResultFileError, which the commands print alone)
    before any job starts; the link's target is untouched."""
    from icdl.repro.files import ResultFileError

    victim = tmp_path / "README.md"
    victim.write_text("the reader's file\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    bad = logs / "01.log"
    bad.symlink_to(victim) if kind == "link" else bad.mkdir()
    with pytest.raises(ResultFileError, match=rf"01\.log is a {kind}"):
        run_jobs([Job("a", ("0",)), Job("b", ("0",))], workers=1, logs=logs, python=SLEEPER, poll_s=0.02,
                 echo=lambda *_: None)
    assert victim.read_text() == "the reader's file\n" and not (logs / "00.log").exists()


def test_a_short_job_with_long_dependants_starts_before_a_long_job_alone(tmp_path):
    """The scale study's shape: a softmax model to the main length (short) that a long rest and the ReLU model
    wait for, beside long jobs nothing waits for. Longest-job-first would start the lone long jobs and leave
    the chain to the end; the critical path starts the chain at once."""
    jobs = [Job("lone 1", ("0.3",), minutes=5), Job("lone 2", ("0.3",), minutes=5),
            Job("base", ("0.1",), minutes=1), Job("rest", ("0.3",), after=("base",), minutes=6)]
    from icdl.gpt_icl.core.jobs import critical_path

    assert critical_path(jobs) == {"lone 1": 5, "lone 2": 5, "base": 7, "rest": 6}
    r = _by_name(_run(jobs, 2, tmp_path))
    assert r["base"]["start_s"] < min(r["lone 1"]["start_s"], r["lone 2"]["start_s"]) + 0.05
    assert r["rest"]["start_s"] < max(r["lone 1"]["start_s"], r["lone 2"]["start_s"])


def test_dependants_start_only_after_their_dependencies(tmp_path):
    # catches a scheduler that starts a job whose dependency is still running (the depth evaluation
    # reading checkpoints that are half trained)
    jobs = [Job("a", ("0.4",), minutes=1), Job("b", ("0.1",), minutes=5), Job("c", ("0.05",), after=("a", "b"),
                                                                             minutes=9)]
    res = _run(jobs, 2, tmp_path)
    r = _by_name(res)
    assert res["complete"]
    assert r["c"]["start_s"] >= r["a"]["start_s"] + r["a"]["seconds"] - 0.05
    assert r["c"]["start_s"] >= r["b"]["start_s"] + r["b"]["seconds"] - 0.05


def test_at_most_workers_run_at_once_and_the_longest_ready_job_starts_first(tmp_path):
    # catches an off-by-one in the worker count (three processes on two cores) and an ordering that
    # leaves the longest job to the end
    jobs = [Job(f"j{i}", ("0.3",), minutes=i) for i in range(5)]
    res = _run(jobs, 2, tmp_path)
    spans = [(r["start_s"], r["start_s"] + r["seconds"]) for r in res["jobs"]]
    for t, _ in spans:
        assert sum(s <= t + 1e-3 < e for s, e in spans) <= 2
    first_two = sorted(res["jobs"], key=lambda r: r["start_s"])[:2]
    assert {r["name"] for r in first_two} == {"j4", "j3"}
    # two at a time: at least three rounds of 0.3 s (five jobs, two slots; unlimited would take one round),
    # and well below the sum of the jobs' own times (serial would take all of it)
    assert res["wall_s"] >= 0.9
    assert res["wall_s"] < 0.8 * sum(r["seconds"] for r in res["jobs"])


def test_a_failed_job_stops_its_dependants_and_the_run_is_incomplete(tmp_path):
    # catches a run that reports complete after a failure, or writes the result of a stage whose training died
    jobs = [Job("train", ("-0.05",), minutes=2), Job("write", ("0.01",), after=("train",), minutes=1)]
    res = _run(jobs, 2, tmp_path)
    assert not res["complete"]
    assert [r["name"] for r in res["jobs"]] == ["train"]
    assert res["jobs"][0]["returncode"] == 1
    assert (tmp_path / "00.log").is_file()


def test_the_job_list_is_checked_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="unknown jobs"):
        check_jobs([Job("a", ("0",), after=("b",))])
    with pytest.raises(ValueError, match="cycle"):
        check_jobs([Job("a", ("0",), after=("b",)), Job("b", ("0",), after=("a",))])
    with pytest.raises(ValueError, match="unique"):
        check_jobs([Job("a", ("0",)), Job("a", ("0",))])
    with pytest.raises(ValueError, match="workers must be >= 1"):
        run_jobs([Job("a", ("0",))], workers=0, logs=tmp_path, python=SLEEPER)
    t = time.perf_counter()
    with pytest.raises(ValueError, match="cycle"):
        _run([Job("a", ("5",), after=("b",)), Job("b", ("5",), after=("a",))], 1, tmp_path)
    assert time.perf_counter() - t < 1  # refused, not run


def test_the_reference_schedule_covers_every_part_once():
    # catches a model depth or target depth of the profile left out of the timed run, and an evaluation
    # job that does not wait for all of its training jobs
    deep = depth.study.PROFILES.resolve("reference")
    cfg = {**main_study.PROFILES.resolve("reference"), "depth_layers": deep["layers"]}
    jobs = schedule("reference")
    check_jobs(jobs)
    args = [" ".join(j.args) for j in jobs]
    for d in cfg["depths"]:
        for seed in range(cfg["seeds"]):
            assert f"--profile reference --part main --depths {d} --seeds {seed}" in args
    for n in cfg["depth_layers"]:
        for seed in range(deep["seeds"]):
            assert f"--profile reference --part depth --layers {n} --seeds {seed}" in args
    for part in ("main", "shift", "depth", "plateau"):
        assert f"--profile reference --part {part}" in args
    by = {" ".join(j.args): j for j in jobs}
    assert len(by["--profile reference --part depth"].after) == len(cfg["depth_layers"]) * deep["seeds"]
    assert len(by["--profile reference --part main"].after) == len(cfg["depths"]) * cfg["seeds"]
    assert len(by["--profile reference --part shift"].after) == len(cfg["depths"]) * cfg["seeds"]


def _timing(spans, workers=2, complete=True):
    jobs = [{"name": n, "command": f"python -m icdl.gpt_icl {n}", "start_s": a, "seconds": b - a, "returncode": 0,
             "log": ""} for n, a, b in spans]
    return {"jobs": jobs, "workers": workers, "wall_s": max(b for _, _, b in spans), "complete": complete}


def test_stage_times_pack_jobs_into_worker_lanes_and_refuse_too_many_at_once():
    """Lanes: a job takes the first worker free at its start (catches two overlapping jobs drawn in one
    lane); a file whose jobs overlap more than its worker count is refused (a timing file from another
    run); the summary's core-minutes are the sum of the jobs and the target is judged on the wall time."""
    from icdl.gpt_icl.reference import stage_times, timing_summary

    data = _timing([("train a", 0, 600), ("train b", 0, 300), ("train c", 300, 900), ("evaluate", 600, 1200)])
    st = stage_times(data)
    assert st["worker"].tolist() == [1, 2, 2, 1]
    assert st["kind"].tolist() == ["train"] * 3 + ["evaluate"]
    assert st["minutes"].tolist() == pytest.approx([10, 5, 10, 10])
    summ = timing_summary(data, target_min=20)
    assert summ["wall_min"] == pytest.approx(20) and summ["core_min"] == pytest.approx(35)
    assert summ["busy"] == pytest.approx(35 / 40) and summ["within_target"]
    assert not timing_summary(data, target_min=19.9)["within_target"]
    assert not timing_summary({**data, "complete": False}, target_min=60)["within_target"]
    with pytest.raises(ValueError, match="all 2 workers are busy"):
        stage_times(_timing([("a", 0, 10), ("b", 1, 10), ("c", 2, 10)]))


def test_the_committed_reference_timing_covers_the_whole_run():
    """The committed timed run (``--workers``) ran every job of the schedule to exit 0, no worker ran two jobs
    at once, and the core-minutes fit in workers × wall (a file from a partial run, or an edited one, fails)."""
    from icdl.gpt_icl.reference import schedule, stage_times, timing_summary
    from icdl.repro.results import load_result
    from icdl.studies.computation import PROFILES as COMPUTATION

    obj = load_result(COMPUTATION.folder() / "timing.reference.json")
    data = obj["data"]
    st = stage_times(data)
    from icdl.gpt_icl.reference import REPLACED_AFTER_TIMING

    expected = {j.name for j in schedule("reference")}
    timed = set(st["stage"])
    assert timed - expected == set(REPLACED_AFTER_TIMING)  # a job the schedule lost is named with its replacement
    assert all(n.startswith(tuple(REPLACED_AFTER_TIMING)) for n in expected - timed)
    assert (st["exit"] == 0).all() and data["complete"]
    for _, lane in st.groupby("worker"):
        lane = lane.sort_values("start_min")
        assert (lane["start_min"].iloc[1:].to_numpy() >= (lane["start_min"] + lane["minutes"]).iloc[:-1].to_numpy()
                - 1e-6).all()
    summ = timing_summary(data)
    assert 0.5 < summ["busy"] <= 1.0
    assert obj["provenance"]["command"] == f"python -m icdl.gpt_icl --profile reference --workers {data['workers']}"
    # the chapter's result files are the ones this timed run wrote (a later partial rerun of one part would
    # leave the timing describing other numbers than the book shows)
    # -- except those registered in RERUN_AFTER_TIMING, written by a later run of their own part (and an entry
    # there whose file the timed run did write is stale)
    from icdl.gpt_icl.reference import RERUN_AFTER_TIMING

    for study, part in ((main_study, "icl"), (main_study, "shift"), (depth.study, "depth"), (plateau.study, "plateau")):
        prov = load_result(study.PROFILES.folder() / f"{part}.reference.json")["provenance"]
        same = prov["git_commit"] == obj["provenance"]["git_commit"]
        assert same != (part in RERUN_AFTER_TIMING), (part, "registered as rerun" if same else "not registered")


def test_timing_glue_formats_the_summary_and_judges_the_target():
    from icdl.gpt_icl.reference import timing_glue

    data = _timing([("train a", 0, 600), ("train b", 0, 300), ("train c", 300, 900), ("evaluate", 600, 1200)])
    g = timing_glue(data, target_min=20)
    got = (g["timing_wall_min"], g["timing_core_min"], g["timing_busy"], g["timing_bound"])
    assert got == ("20", "35", "88 %", "18")  # the book's "90 %", not "90%"
    assert g["timing_verdict"] == "within" and timing_glue(data, target_min=19)["timing_verdict"] == "over"
    assert timing_glue({**data, "complete": False}, 60)["timing_verdict"].startswith("not finished")


def test_jobs_stop_with_the_scheduler(tmp_path):
    """SIGTERM to a running scheduler stops its jobs too (a rerun would otherwise meet the old jobs still
    writing the same checkpoints): the job, which would sleep for a minute, is gone within seconds."""
    import signal
    import subprocess

    pidfile = tmp_path / "job.pid"
    job = (sys.executable, "-c", f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); "
                                 "time.sleep(60)")
    script = ("import sys; from pathlib import Path; from icdl.gpt_icl.reference import Job, run_jobs; "
              f"run_jobs([Job('long', ())], workers=1, logs=Path({str(tmp_path)!r}), python={job!r}, poll_s=0.05)")
    parent = subprocess.Popen([sys.executable, "-c", script])
    child = started_job_pid(pidfile, parent)
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(timeout=20) != 0
    assert_process_ends(child, "its scheduler")


def test_a_failed_run_never_replaces_the_committed_timing(tmp_path, monkeypatch):

    from icdl.repro.results import load_result

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    monkeypatch.setattr(reference, "schedule", lambda profile: [Job("fails", ("-1",))])
    real = jobs.run_jobs
    monkeypatch.setattr(reference, "run_jobs", lambda jobs, **kw: real(jobs, **{**kw, "python": SLEEPER,
                                                                                "poll_s": 0.02}))
    assert reference.run_reference("reference", 1, seed=0) == 1
    assert not (tmp_path / "results" / "computation" / "timing.reference.json").exists()
    assert load_result(tmp_path / "runs" / "gpt_icl_reference" / "timing.json")["data"]["complete"] is False


def test_seed_cost_counts_the_trained_models_per_seed_and_the_rest_once():
    """Two training jobs (main, depth study) and an evaluation in the timing; the main study's one seed 600 s of
    softmax and 120 s of ReLU (its twin counted as another 120 s), the depth study 300 s: 14 core-minutes a
    seed, the evaluation's 5 once. A twin left out, or the evaluation counted per seed, changes the sums."""
    from icdl.gpt_icl.reference import seed_cost

    data = _timing([("train main, target depth 3, seed 1", 0, 600), ("train depth study, 4 layers", 0, 300),
                    ("main: evaluate, baselines, write", 600, 900)])
    main = pd.DataFrame({"attention": ["softmax", "relu"], "seconds": [600.0, 120.0]})
    depth_training = pd.DataFrame({"seconds": [300.0]})
    c = seed_cost(data, main, depth_training, seeds=3)
    assert (c["main_min"], c["depth_min"], c["once_min"]) == (14.0, 5.0, 5.0)
    assert c["whole_core_min"] == 5.0 + 3 * 19.0 and c["lower_bound_min"] == c["whole_core_min"] / 2
    # a depth result with three seeds: one seed's share (the bug: every seed counted as one seed's cost)
    three = pd.DataFrame({"seed": [0, 1, 2], "seconds": [280.0, 300.0, 320.0]})
    assert seed_cost(data, main, three, seeds=3)["depth_min"] == 5.0
