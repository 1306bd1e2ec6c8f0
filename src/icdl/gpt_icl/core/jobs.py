"""Independent commands run as single-threaded jobs on N cores, each taking the longest ready job first, with
their wall times recorded (the reference run of :mod:`icdl.gpt_icl.reference` and the scale study's workers).

Every job is a plain ``python -m …`` command that resumes from its checkpoints, so a run that was stopped is
continued by running the same command again; a job that fails stops the run (its dependants never start) and
names its log file. A stopped scheduler stops its jobs and everything they started.

=========================  ==================================================================================
:class:`Job`               one command, the jobs it waits for, an estimate of its length
:func:`check_jobs`         unique names, known dependencies, no cycle
:func:`critical_path`      the longest chain of estimates ending at each job
:func:`run_jobs`           run them on ``workers`` processes; the record of every job
=========================  ==================================================================================
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from icdl.repro.files import regular_or_new


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


def critical_path(jobs: list[Job]) -> dict[str, float]:
    """Each job's estimated minutes from its start to the end of the longest chain of jobs that wait for it
    (its own minutes plus its longest chain of dependants): the scheduler's priority, so that a short job whose
    dependants are long starts before a long job that nothing waits for."""
    dependants: dict[str, list[str]] = {j.name: [] for j in jobs}
    for j in jobs:
        for a in j.after:
            dependants[a].append(j.name)
    minutes = {j.name: j.minutes for j in jobs}
    memo: dict[str, float] = {}

    def chain(name: str) -> float:
        if name not in memo:
            memo[name] = minutes[name] + max((chain(d) for d in dependants[name]), default=0.0)
        return memo[name]

    return {j.name: chain(j.name) for j in jobs}


def run_jobs(jobs: list[Job], *, workers: int, logs: Path, python: tuple[str, ...] | None = None,
             poll_s: float = 0.5, echo=print) -> dict:
    """Run ``jobs`` as subprocesses, at most ``workers`` at a time, each single-threaded
    (``OMP_NUM_THREADS=1``), the ready job with the longest chain ahead first; each job's output goes to
    ``logs/<n>.log`` (a log's path that holds a link, a folder or a device is refused before any job starts:
    :class:`~icdl.repro.files.ResultFileError`).
    Returns ``{"jobs": [records], "wall_s", "complete"}``; after a failure no new job starts, the running ones
    finish, and ``complete`` is False. ``python`` is the command prefix (default: this interpreter with
    ``-m icdl.gpt_icl``). The jobs stop with the scheduler: when it is interrupted (SIGINT, SIGTERM, an
    error) it terminates every running job before it returns or raises, and on Linux a job also receives
    SIGTERM if the scheduler is killed outright (so a rerun never meets the old jobs still writing). Ready
    jobs start in the order of :func:`critical_path` (the longest chain first)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    check_jobs(jobs)
    python = python or (sys.executable, "-m", "icdl.gpt_icl")
    logs.mkdir(parents=True, exist_ok=True)
    for n in range(len(jobs)):  # a link, folder or device where a log goes: refused before any job starts
        regular_or_new(logs / f"{n:02d}.log")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    rank = critical_path(jobs)
    pending = sorted(jobs, key=lambda j: (-rank[j.name], -j.minutes))
    running: dict[str, tuple[subprocess.Popen, JobRecord, object]] = {}
    records: list[JobRecord] = []
    done: set[str] = set()
    failed = False
    previous = _raise_on_sigterm()
    try:
        return _schedule_loop(pending, running, records, done, failed, workers, logs, python, env, t0, poll_s, echo)
    finally:
        # a second Ctrl-C while the jobs are being stopped must not leave one of them running
        calm = threading.current_thread() is threading.main_thread()
        before = signal.signal(signal.SIGINT, signal.SIG_IGN) if calm else None
        try:
            for proc, _, fh in running.values():
                _stop(proc)
                fh.close()
        finally:
            if calm:
                signal.signal(signal.SIGINT, before)
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def _raise_on_sigterm():
    """Turn SIGTERM into SystemExit in the main thread (so that ``finally`` blocks run); the old handler."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, handler)


def _hold_sigint(hold: bool, held: bool = True) -> bool:
    """Block SIGINT in the main thread (``hold``), or release it again if it was blocked here (``held``); a
    Ctrl-C that came in between is delivered on release. Returns whether it blocked."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        return False
    if hold:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        return True
    if held:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    return False


def _job_setup() -> None:  # pragma: no cover - runs in the child between fork and exec
    """A job's own start: SIGINT unblocked (the scheduler held it back while starting the job), and on Linux
    SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def _stop(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Terminate a job and everything it started (its own process group), then kill what is left."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _schedule_loop(pending, running, records, done, failed, workers, logs, python, env, t0, poll_s, echo) -> dict:
    while (pending and not failed) or running:
        ready = [j for j in pending if set(j.after) <= done] if not failed else []
        while ready and len(running) < workers:
            job = ready.pop(0)
            pending.remove(job)
            log = logs / f"{len(records) + len(running):02d}.log"
            fh = open(log, "w")
            cmd = python + job.args
            # Ctrl-C held back from the start of a job to its entry in ``running``: an interrupt in between
            # would leave a started job that the scheduler does not know to stop
            held = _hold_sigint(True)
            try:
                proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                        preexec_fn=_job_setup)
                rec = JobRecord(job.name, " ".join(("python",) + tuple(python[1:]) + job.args),
                                start_s=time.perf_counter() - t0, log=str(log))
                running[job.name] = (proc, rec, fh)
            finally:
                _hold_sigint(False, held)
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
