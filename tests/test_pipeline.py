"""The scheduler of the whole GPT reference run (``python -m icdl.gpt_icl --workers N``), on stand-in jobs
that sleep or fail, so that its order, concurrency and failure handling are checked in seconds."""

import sys
import time

import pytest

from icdl.gpt_icl.pipeline import Job, check_jobs, run_jobs, schedule
from icdl.gpt_icl.study import PROFILES

# a stand-in for ``python -m icdl.gpt_icl``: the job's first argument is how long it sleeps, a negative one fails
SLEEPER = (sys.executable, "-c",
           "import sys, time; s = float(sys.argv[1]); time.sleep(abs(s)); sys.exit(1 if s < 0 else 0)")


def _run(jobs, workers, tmp_path):
    return run_jobs(jobs, workers=workers, logs=tmp_path, python=SLEEPER, poll_s=0.02, echo=lambda *_: None)


def _by_name(res):
    return {r["name"]: r for r in res["jobs"]}


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
    cfg = PROFILES.resolve("reference")
    jobs = schedule(cfg, "reference")
    check_jobs(jobs)
    args = [" ".join(j.args) for j in jobs]
    for d in cfg["depths"]:
        assert f"--profile reference --part main --depths {d}" in args
    for n in cfg["depth_layers"]:
        assert f"--profile reference --part depth --layers {n}" in args
    for part in ("main", "shift", "depth", "plateau"):
        assert f"--profile reference --part {part}" in args
    by = {" ".join(j.args): j for j in jobs}
    assert len(by["--profile reference --part depth"].after) == len(cfg["depth_layers"])
    assert len(by["--profile reference --part main"].after) == len(cfg["depths"])
    assert len(by["--profile reference --part shift"].after) == len(cfg["depths"])
