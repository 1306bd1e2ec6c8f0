"""The whole reference run of ICDL sec. 5 on several cores, timed stage by stage (``--workers``).

The reference of the chapters ``gpt_icl``, ``gpt_depth`` and ``gpt_plateau`` is a set of independent training
jobs (each main target depth, each model depth of the depth study, the plateau study) followed by the calls that
evaluate and write the result files. On a machine with a few cores the fastest way through it is one single-
threaded process per core, each taking the longest job that is ready (one process with two threads gains little
at these sizes: see :func:`icdl.gpt_icl.compute.speed.run_speed`). :func:`schedule` lists the jobs with their
dependencies, :func:`~icdl.gpt_icl.core.jobs.run_jobs` runs them, and the wall time of every job and of the whole
run is written to ``results/computation/timing.<profile>.json`` -- the "time per stage" of the computation
appendix, read back by :func:`stage_times` and :func:`timing_summary`.

Every job is a plain ``python -m icdl.gpt_icl`` command that resumes from its checkpoints, so a run that was
stopped is continued by running the same command again; a job that fails stops the run (its dependants never
start) and names its log file.
"""

from __future__ import annotations

import os
import sys

import pandas as pd

from icdl.gpt_icl.core.jobs import Job, run_jobs
from icdl.repro.typeset import percent


def schedule(profile: str) -> list[Job]:
    """The jobs of the whole reference run of ``profile`` (its main target depths, depth-study model depths
    and the plateau study), with dependencies; the estimates are from the reference run's recorded times,
    scaled by model depth."""
    from icdl.gpt_icl import depth
    from icdl.gpt_icl.core import main_study

    base = ("--profile", profile)
    main = main_study.PROFILES.resolve(profile)
    # seed 0 of the reference was trained before there were seeds: only its softmax twin is left (a fifth)
    jobs = [Job(f"train main, target depth {d}, seed {s}",
                base + ("--part", "main", "--depths", str(d), "--seeds", str(s)), minutes=3.0 if s == 0 else 14.0)
            for d in main["depths"] for s in range(main["seeds"])]
    deep = depth.study.PROFILES.resolve(profile)
    jobs += [Job(f"train depth study, {n} layers, seed {s}",
                 base + ("--part", "depth", "--layers", str(n), "--seeds", str(s)), minutes=4.6 * n)
             for n in deep["layers"] for s in range(deep["seeds"])]
    jobs.append(Job("plateau study (train and write)", base + ("--part", "plateau"), minutes=22.0))
    mains = tuple(j.name for j in jobs if j.name.startswith("train main"))
    layers = tuple(j.name for j in jobs if j.name.startswith("train depth"))
    jobs += [Job("main: evaluate, baselines, write", base + ("--part", "main"), after=mains, minutes=17.0),
             Job("shift: evaluate, write", base + ("--part", "shift"), after=mains, minutes=4.0),
             Job("depth study: evaluate, write", base + ("--part", "depth"), after=layers, minutes=3.5)]
    return jobs


def run_reference(profile: str, workers: int, seed: int) -> int:
    """``python -m icdl.gpt_icl --profile <profile> --workers N``: every job of :func:`schedule`, then the
    timing file ``results/computation/timing.<profile>.json`` -- only when every job finished: the timing of
    a failed run goes to its log folder (``runs/gpt_icl_<profile>/timing.json``), so it never replaces the
    timing of a complete run. Returns the exit status (1 when a job failed, 130 when interrupted by Ctrl-C:
    the running jobs stopped, one line said so, no timing written)."""
    from icdl.repro.files import project_root
    from icdl.repro.results import provenance, save_result
    from icdl.studies.computation import PROFILES as COMPUTATION

    logs = project_root() / "runs" / f"gpt_icl_{profile}"
    try:
        res = run_jobs(schedule(profile), workers=workers, logs=logs)
    except KeyboardInterrupt:  # Ctrl-C: run_jobs has stopped every running job; one line, no traceback
        print(f"python -m icdl.gpt_icl: interrupted; every running job was stopped (their logs are in {logs}); "
              "run the same command again to resume from the checkpoints", file=sys.stderr, flush=True)
        return 130
    res |= {"workers": workers, "cpus": os.cpu_count()}
    target = COMPUTATION.folder() / f"timing.{profile}.json" if res["complete"] else logs / "timing.json"
    path = save_result(target, res,
                       provenance=provenance(command=f"python -m icdl.gpt_icl --profile {profile} --workers {workers}",
                                             wall_time_s=res["wall_s"], profile=profile, seed=seed))
    print(f"wrote {path}: {res['wall_s'] / 60:.1f} min wall on {workers} worker(s), complete: {res['complete']}")
    return 0 if res["complete"] else 1


def stage_times(data: dict) -> pd.DataFrame:
    """The stages of a timed reference run (the data of ``timing.<profile>.json``, written by ``--workers``):
    one row per job with its start and length in minutes, its kind (``train`` or ``evaluate``), the worker
    lane it ran in (jobs packed into ``workers`` lanes by start time), and its command. A job that failed
    keeps its row; the caller reads ``complete``."""
    jobs = sorted(data["jobs"], key=lambda j: j["start_s"])
    free_at = [0.0] * data["workers"]
    rows = []
    for j in jobs:
        lane = min(range(len(free_at)), key=lambda i: (free_at[i] > j["start_s"] + 1e-6, i))
        if free_at[lane] > j["start_s"] + 1e-6:
            raise ValueError(f"job {j['name']!r} starts while all {data['workers']} workers are busy: "
                             "the timing file does not describe a run with that many workers")
        free_at[lane] = j["start_s"] + j["seconds"]
        rows.append({"stage": j["name"], "kind": "train" if j["name"].startswith(("train", "plateau")) else
                     "evaluate", "worker": lane + 1, "start_min": j["start_s"] / 60, "minutes": j["seconds"] / 60,
                     "exit": j["returncode"], "command": j["command"]})
    return pd.DataFrame(rows)


def timing_summary(data: dict, target_min: float = 90.0) -> dict:
    """Wall minutes of the timed run, the core-minutes its jobs used, how busy the workers were
    (core-minutes over workers × wall), and whether the run finished within ``target_min`` minutes."""
    stages = stage_times(data)
    wall = data["wall_s"] / 60
    core = float(stages["minutes"].sum())
    return {"wall_min": wall, "core_min": core, "workers": data["workers"],
            "busy": core / (data["workers"] * wall), "complete": bool(data["complete"]),
            "within_target": bool(data["complete"] and wall <= target_min), "target_min": target_min}


#: result files of the GPT reference (by part) written after the timed run, by a run of their own part at a
#: later commit, with what changed: the timing describes the run of the other files only. An entry whose file
#: the timed run did write is stale (``tests/test_pipeline.py``); a full timed rerun empties this.
RERUN_AFTER_TIMING = {
    "depth": "the depth study, three seeds of every model depth on the main study's schedule (6 500 / 5 000 / 2 500 "
             "steps; each unit trained by --part depth --layers L --seeds S), where the timed run trained one seed "
             "at 4 000 / 2 500 / 1 500",
    "icl": "the main study, rerun with three seeds of every model and the ReLU models' softmax twins (each model "
           "trained by --part main --depths D --seeds S, then --part main), where the timed run trained one seed",
    "shift": "objective 3, rerun on the three seeds and with the baselines on the shifted prompts",
}

#: the timed run's jobs that the schedule no longer has, with what replaced them (a full timed rerun empties it)
REPLACED_AFTER_TIMING = {f"train main, target depth {d}": f"train main, target depth {d}, seed S (S = 0, 1, 2; "
                         "seed 0 resumes the timed run's models and trains only the softmax twin)"
                         for d in (3, 4, 6)} | {
    f"train depth study, {n} layers": f"train depth study, {n} layers, seed S (S = 0, 1, 2)"
    for n in (4, 6, 8, 10)}


def timing_glue(data: dict, target_min: float = 90.0) -> dict[str, str]:
    """The numbers the appendix quotes from a timed run, formatted: wall minutes, core-minutes, how busy the
    workers were, the target, the lower bound of any schedule on these workers (core-minutes shared evenly),
    and whether the run finished within the target."""
    s = timing_summary(data, target_min)
    verdict = "within" if s["within_target"] else "over" if s["complete"] else "not finished, so not judged against"
    return {"timing_wall_min": f"{s['wall_min']:.0f}", "timing_core_min": f"{s['core_min']:.0f}",
            "timing_busy": percent(s['busy']), "timing_target_min": f"{s['target_min']:.0f}",
            "timing_bound": f"{s['core_min'] / s['workers']:.0f}", "timing_verdict": verdict,
            "timing_reruns": "; ".join(RERUN_AFTER_TIMING.values()) or "none"}


def seed_cost(timing: dict, main_seconds: pd.DataFrame, depth_training: pd.DataFrame, seeds: int = 3) -> dict:
    """What one more training seed of ICDL sec. 5's models costs, in core-minutes, and the whole reference with
    ``seeds`` seeds of every model on the timed run's workers. ``main_seconds``: the main study's recorded
    training seconds of one seed (``attention``, ``seconds``: softmax and ReLU of every target depth; the softmax
    twin trains as many steps as the ReLU model and is counted at its time); ``depth_training``: the depth
    study's (its result's ``training`` table; with several seeds, their mean per seed). The rest of the timed
    run (the plateau study, the evaluations) is counted once. ``lower_bound_min`` is the whole shared evenly
    over the workers: no schedule is shorter."""
    stages = stage_times(timing)
    trained_per_seed = stages["stage"].str.startswith(("train main", "train depth study"))
    once = float(stages.loc[~trained_per_seed, "minutes"].sum())
    relu = float(main_seconds.loc[main_seconds["attention"] == "relu", "seconds"].sum())
    main = (float(main_seconds["seconds"].sum()) + relu) / 60
    per = depth_training["seed"].nunique() if "seed" in depth_training else 1
    depth_min = float(depth_training["seconds"].sum()) / per / 60
    whole = once + seeds * (main + depth_min)
    return {"main_min": main, "depth_min": depth_min, "per_seed_min": main + depth_min, "once_min": once,
            "whole_core_min": whole, "lower_bound_min": whole / timing["workers"], "seeds": seeds}
