"""The whole reference run of chapter ``gpt_icl`` on several cores, timed stage by stage (``--workers``).

The chapter's reference is a set of independent training jobs (each main target depth, each model depth of
the depth study, the plateau study) followed by the calls that evaluate and write the result files. On a
machine with a few cores the fastest way through it is one single-threaded process per core, each taking
the longest job that is ready (one process with two threads gains little at these sizes: see
:func:`icdl.gpt_icl.speed._speed`). :func:`schedule` lists the jobs with their dependencies,
:func:`run_jobs` runs them, and the wall time of every job and of the whole run is written to
``results/gpt_icl/timing.<profile>.json`` -- the "time per stage" of the computation appendix.

Every job is a plain ``python -m icdl.gpt_icl`` command that resumes from its checkpoints, so a run that
was stopped is continued by running the same command again; a job that fails stops the run (its
dependants never start) and names its log file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Job:
    """One command of the reference run: ``name`` (unique), the arguments after ``python -m icdl.gpt_icl``,
    the names of the jobs that must finish first, and an estimate of its length in minutes (the scheduler
    starts the longest ready job first; the estimate orders, it never limits)."""

    name: str
    args: tuple[str, ...]
    after: tuple[str, ...] = ()
    minutes: float = 1.0


@dataclass
class JobRecord:
    name: str
    command: str
    start_s: float
    seconds: float = 0.0
    returncode: int | None = None
    log: str = ""


def schedule(cfg, profile: str) -> list[Job]:
    """The jobs of the whole reference run of ``profile`` (its main target depths, depth-study model depths
    and the plateau study), with dependencies; the estimates are from the reference run's recorded times,
    scaled by model depth."""
    from .study import depths

    base = ("--profile", profile)
    jobs = [Job(f"train main, target depth {d}", base + ("--part", "main", "--depths", str(d)), minutes=12.0)
            for d in depths(cfg)]
    jobs += [Job(f"train depth study, {n} layers", base + ("--part", "depth", "--layers", str(n)),
                 minutes=2.2 * n) for n in cfg["depth_layers"]]
    jobs.append(Job("plateau study (train and write)", base + ("--part", "plateau"), minutes=22.0))
    mains = tuple(j.name for j in jobs if j.name.startswith("train main"))
    layers = tuple(j.name for j in jobs if j.name.startswith("train depth"))
    jobs += [Job("main: evaluate, baselines, write", base + ("--part", "main"), after=mains, minutes=17.0),
             Job("shift: evaluate, write", base + ("--part", "shift"), after=mains, minutes=4.0),
             Job("depth study: evaluate, write", base + ("--part", "depth"), after=layers, minutes=3.5)]
    return jobs


def check_jobs(jobs: list[Job]) -> None:
    """Refuse a job list with a repeated name, an unknown dependency or a cycle."""
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise ValueError(f"job names must be unique, got {names}")
    known = set(names)
    for j in jobs:
        unknown = [a for a in j.after if a not in known]
        if unknown:
            raise ValueError(f"job {j.name!r} waits for unknown jobs {unknown}")
    done: set[str] = set()
    pending = list(jobs)
    while pending:
        ready = [j for j in pending if set(j.after) <= done]
        if not ready:
            raise ValueError(f"the jobs {[j.name for j in pending]} wait for each other (a cycle)")
        done |= {j.name for j in ready}
        pending = [j for j in pending if j.name not in done]


def run_jobs(jobs: list[Job], *, workers: int, logs: Path, python: tuple[str, ...] | None = None,
             poll_s: float = 0.5, echo=print) -> dict:
    """Run ``jobs`` as subprocesses, at most ``workers`` at a time, each single-threaded
    (``OMP_NUM_THREADS=1``), the longest ready job first; each job's output goes to ``logs/<n>.log``.
    Returns ``{"jobs": [records], "wall_s", "complete"}``; after a failure no new job starts, the running ones
    finish, and ``complete`` is False. ``python`` is the command prefix (default: this interpreter with
    ``-m icdl.gpt_icl``)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    check_jobs(jobs)
    python = python or (sys.executable, "-m", "icdl.gpt_icl")
    logs.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    pending = sorted(jobs, key=lambda j: -j.minutes)
    running: dict[str, tuple[subprocess.Popen, JobRecord, object]] = {}
    records: list[JobRecord] = []
    done: set[str] = set()
    failed = False
    while (pending and not failed) or running:
        ready = [j for j in pending if set(j.after) <= done] if not failed else []
        while ready and len(running) < workers:
            job = ready.pop(0)
            pending.remove(job)
            log = logs / f"{len(records) + len(running):02d}.log"
            fh = open(log, "w")
            cmd = python + job.args
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
            rec = JobRecord(job.name, " ".join(("python", "-m", "icdl.gpt_icl") + job.args),
                            start_s=time.perf_counter() - t0, log=str(log))
            running[job.name] = (proc, rec, fh)
            echo(f"[{rec.start_s / 60:5.1f} min] start  {job.name}")
        time.sleep(poll_s)
        for name, (proc, rec, fh) in list(running.items()):
            if proc.poll() is None:
                continue
            fh.close()
            rec.returncode = proc.returncode
            rec.seconds = time.perf_counter() - t0 - rec.start_s
            records.append(rec)
            del running[name]
            if proc.returncode == 0:
                done.add(name)
                echo(f"[{(rec.start_s + rec.seconds) / 60:5.1f} min] done   {name} ({rec.seconds / 60:.1f} min)")
            else:
                failed = True
                echo(f"[{(rec.start_s + rec.seconds) / 60:5.1f} min] FAILED {name} (exit {proc.returncode}); "
                     f"see {rec.log}")
    return {"jobs": [vars(r) for r in records], "wall_s": time.perf_counter() - t0,
            "complete": not failed and not pending}


def run_reference(cfg, profile: str, workers: int) -> int:
    """``python -m icdl.gpt_icl --profile <profile> --workers N``: every job of :func:`schedule`, then the
    timing file. Returns the exit status (1 when a job failed)."""
    from ..book.results import project_root, provenance, save_result
    from .study import PROFILES

    logs = project_root() / "runs" / f"gpt_icl_{profile}"
    res = run_jobs(schedule(cfg, profile), workers=workers, logs=logs)
    res |= {"workers": workers, "cpus": os.cpu_count()}
    path = save_result(PROFILES.folder() / f"timing.{profile}.json", res,
                       provenance=provenance(command=f"python -m icdl.gpt_icl --profile {profile} --workers {workers}",
                                             wall_time_s=res["wall_s"], profile=profile, seed=cfg["seed"]))
    print(f"wrote {path}: {res['wall_s'] / 60:.1f} min wall on {workers} worker(s), complete: {res['complete']}")
    return 0 if res["complete"] else 1
