"""ICDL sec. 5 with more training (chapter ``gpt_scale``): how far is the shortfall of the CPU models
below the trained MLP a matter of training, and how much training would close it?

The models are the main study's (:mod:`~icdl.gpt_icl.core.main_study`: one softmax and one ReLU-attention
transformer per target depth, the same prompts, baselines and evaluation), trained ``factor`` times longer
and scored at snapshots along the way, ``per_doubling`` of them per doubling of the steps, from
``before`` snapshots before the main study's length (its ``steps``) to the end. The softmax model trains
``factor × steps`` steps (the warm phase unchanged); the ReLU model starts, as in the main study, from the
softmax model at ``steps`` steps and trains ``factor × relu_steps``. So the snapshot at the main study's
length *is* the main study's model, bit for bit (tested), and the trend starts from it.

The study is this module and four beside it, one idea each; every name of theirs that a chapter, a test or
another study uses is re-exported here (``scale.judge`` is :func:`icdl.gpt_icl.scale.judge.judge`):

===================================  =================================================================================
:mod:`~icdl.gpt_icl.scale.models`    the profiles, the snapshot steps, training one model
:mod:`~icdl.gpt_icl.scale.trend`     the scores of every snapshot, the trend, its fit and forecast (paired prompts)
:mod:`~icdl.gpt_icl.scale.judge`     the ledger's judge; the wider models beside the reference's
:mod:`~icdl.gpt_icl.scale.show`      what the chapter shows: tables, the prose's numbers
this module                          the whole study (in memory, or as resumable jobs), its result file, the command
===================================  =================================================================================

=========================  ==================================================================================
:data:`PROFILES`           ``quick`` (CI), ``reference`` (CPU, two cores; the chapter gives its time:
                           ``python -m icdl.gpt_icl.scale --profile reference --workers 2``), ``long`` (the
                           reference's models 64 times longer, a GPU command), ``paper`` (Appendix F's models),
                           ``wide`` (the reference's models at twice the width, the main study's steps)
:func:`snapshot_steps`     the steps at which a model is scored
:func:`train_model`        train or resume one model of one target depth (resumable, one writer)
:func:`score_depth`        every snapshot of one target depth against the baselines on the same prompts
:func:`trend`              per model and snapshot: the shortfall below the MLP, the lead over least squares
                           and 3-NN at the training length, with bootstrap bands
:func:`fit_trend`          the shortfall's change per doubling of the target steps (a line in log steps), its
                           band (prompts and snapshots), and the forecast of objective 1's number at the paper's steps
:func:`refit`              those lines from a result's stored scores, with the draws the judge decides on
:func:`judge`              the ledger entries of the scale claims (:data:`icdl.repro.claims.CRITERIA`)
:func:`width_comparison`   the ``wide`` profile's models beside the reference's: at the same steps, and at the
                           reference's snapshot of the nearest training FLOPs (:func:`judge_wider`)
:func:`study`              the whole study in this process (the ``quick`` profile of the chapter)
:func:`run_all`            every job of the resumable run on N single-threaded processes (``--workers N``)
:func:`write`, :func:`load` the result file ``results/gpt_scale/scale.<profile>.json``
=========================  ==================================================================================
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from icdl.gpt_icl.core import main_study
from icdl.gpt_icl.core.model import ATTENTIONS, InContextGPT
from icdl.gpt_icl.core.schedule import checkpoint_path, configs
from icdl.gpt_icl.core.training import load_snapshot
from icdl.gpt_icl.scale.models import (
    COMMAND,
    PROFILES,
    TAG,
    folder,
    long_settings,
    model_snapshots,
    train_model,
)
from icdl.gpt_icl.scale.trend import (
    FIT_COLUMNS,
    fit_from,
    fit_trend,
    score_depth,
    target_offset,
    trend,
)
from icdl.repro.checkpoints import CheckpointError, checkpoint_exists, load_checkpoint
from icdl.repro.cli import Parser, at_least_one, cuda_or_refuse
from icdl.repro.files import ResultFileError, one_writer, project_root
from icdl.repro.profiles import ProfileError, dry_run
from icdl.repro.results import load_result, provenance, save_profile_result, save_result

# ---- the whole study: in memory (quick) or as resumable jobs (reference) ----------------------------------

#: result fields (``results/gpt_scale/scale.<profile>.json``)
FIELDS = ("points", "curves", "shift", "boot", "trend", "fits", "history", "jobs", "complete", "seconds")


def assemble(cfg, scores: list[dict], history: pd.DataFrame, *, jobs: list | None = None,
             seconds: float = 0.0) -> dict:
    """The study's result from the per-depth scores: their frames joined, the trend and its fits."""
    points = pd.concat([s["points"] for s in scores], ignore_index=True)
    boot = {str(int(s["points"]["depth"].iloc[0])): s["boot"] for s in scores}
    tr = trend(points, boot)
    # a line needs snapshots past the main study's length: a profile trained for that length alone has none
    fits, draws = refit({"points": points, "boot": boot}, cfg)
    return {"points": points, "curves": pd.concat([s["curves"] for s in scores], ignore_index=True),
            "shift": pd.concat([s["shift"] for s in scores], ignore_index=True), "boot": boot, "trend": tr,
            "fits": fits, "fit_draws": draws, "history": history, "jobs": jobs or [], "complete": True,
            "seconds": seconds}


def refit(res: dict, cfg) -> tuple[pd.DataFrame, dict]:
    """The trend's lines of a result (its ``points`` and ``boot``) on the target-step clock of ``cfg``
    (:func:`~icdl.gpt_icl.scale.trend.fit_trend`, :func:`~icdl.gpt_icl.scale.trend.target_offset`), with the
    draws the judge decides on: what the chapter and the ledger read, from the scores a run stored (a profile
    trained for the main study's length alone has no line: an empty frame)."""
    if cfg["factor"] <= 1:
        return pd.DataFrame(columns=list(FIT_COLUMNS)), {}
    return fit_trend(res["points"], res["boot"], fit_from(cfg), main_study.CRITERIA["obj1_tolerance"],
                     offset=target_offset(cfg), draws=True)


def study(cfg, *, progress: bool = False) -> dict:
    """The whole study in this process, in memory (the ``quick`` profile of the chapter)."""
    t0 = time.perf_counter()
    memory, scores, hists = {}, [], []
    for depth in cfg["depths"]:
        models = {}
        for attention in ATTENTIONS:
            res = train_model(cfg, depth, attention, progress=progress, memory=memory)
            memory[(depth, attention)] = res
            hists.append(res["history"].assign(depth=depth, attention=attention))
            for step, state in res["snapshots"].items():
                model = InContextGPT(res["model"].cfg)
                model.load_state_dict(state)
                models[(attention, step)] = model.eval()
        scores.append(score_depth(cfg, depth, models))
    return assemble(cfg, scores, pd.concat(hists, ignore_index=True), seconds=time.perf_counter() - t0)


def _score_path(cfg, depth: int) -> Path:
    return folder(cfg["profile"]) / f"score_depth{depth}.json"


def score_job(cfg, depth: int) -> Path:
    """``--score --depth D``: every snapshot of target depth D from its files, scored
    (``checkpoints/<profile>/score_depth<D>.json``, with the trained models' histories), under that file's
    one-writer lock: a second scoring of the same depth is refused in one line naming the first."""
    path = _score_path(cfg, depth)
    with one_writer(path, f"the scores of target depth {depth} ({path.name})"):
        return _score(cfg, depth)


def _score(cfg, depth: int) -> Path:
    t0 = time.perf_counter()
    command = COMMAND.format(profile=cfg["profile"])
    where = folder(cfg["profile"])
    models, hists = {}, []
    for attention in ATTENTIONS:
        ckpt = checkpoint_path(where, depth, attention, TAG)
        state = load_checkpoint(ckpt, command=command, kind="gpt_icl") if checkpoint_exists(ckpt) else None
        steps = configs(long_settings(cfg), depth, attention, cfg["n_layer"])[2].steps
        if state is None or state["step"] < steps:
            raise CheckpointError(f"checkpoint {ckpt} is missing or unfinished; finish it with {command}")
        hists.append(pd.DataFrame(state["history"]).assign(depth=depth, attention=attention))
        for step in model_snapshots(cfg, attention):
            models[(attention, step)] = load_snapshot(ckpt, step, command=command)[0]
    res = score_depth(cfg, depth, models)
    res["history"] = pd.concat(hists, ignore_index=True)
    body = {k: (v.to_dict("list") if isinstance(v, pd.DataFrame) else v) for k, v in res.items()}
    return save_result(_score_path(cfg, depth), body,
                       provenance=provenance(command=command, wall_time_s=time.perf_counter() - t0,
                                             profile=cfg["profile"], seed=cfg["seed"]))


def write_job(cfg, started: float, jobs: list | None = None) -> Path:
    """``--write``: the result file from the per-depth scores."""
    scores, hists = [], []
    for depth in cfg["depths"]:
        data = load_result(_score_path(cfg, depth))["data"]
        scores.append({k: (data[k] if k == "boot" else pd.DataFrame(data[k])) for k in data})
        hists.append(scores[-1]["history"])
    res = assemble(cfg, scores, pd.concat(hists, ignore_index=True), jobs=jobs)
    return write(cfg, res, started)


def write(cfg, res: dict, started: float) -> Path:
    return save_profile_result(PROFILES, "scale", {k: res[k] for k in FIELDS}, profile=cfg["profile"],
                               seed=cfg["seed"], started=started)


def load(profile: str = "reference") -> dict | None:
    """The result of a profile as frames (``None`` where it has not been produced)."""
    path = PROFILES.folder() / f"scale.{profile}.json"
    if not path.is_file():
        return None
    return from_result(load_result(path, profile=profile), f"result file {path}", profile)


def from_result(raw: dict, where: str = "the scale result", profile: str = "reference") -> dict:
    """A loaded result file (``{"provenance", "data"}``) as frames, its trend and lines recomputed from its scores
    (:func:`trend`, :func:`refit`); refused, naming it, if a field is missing."""
    data = raw["data"]
    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise ResultFileError(f"{where} lacks the fields {missing}; rebuild it with {COMMAND.format(profile=profile)}")
    out = {k: data[k] if k in ("boot", "jobs", "complete", "seconds") else pd.DataFrame(data[k]) for k in FIELDS}
    # the trend's bands and lines from the stored scores by today's definitions (90 % bands; lines on the
    # target-step clock with the snapshots' scatter), what the chapter and the ledger read; the file keeps
    # those its run computed
    out["trend"] = trend(out["points"], out["boot"])
    out["fits"], out["fit_draws"] = refit(out, PROFILES.resolve(profile))
    return out


def jobs(cfg, device: str = "cpu") -> list:
    """The jobs of the resumable run: per target depth the softmax model to the main study's length, then the
    rest of it and the ReLU model (which starts there), then the scoring; last the result file. Estimates in
    minutes from the reference's speed (about 12 steps per second at its size on one core)."""
    from icdl.gpt_icl.core.jobs import Job

    base = ("--profile", cfg["profile"]) + (("--device", device) if device != "cpu" else ())  # training jobs
    rate = 12 * 60 * (3 * 64 * 64) / (cfg["n_layer"] * cfg["n_embd"] ** 2)  # steps per minute, scaled by size
    out, scored = [], []
    for d in cfg["depths"]:
        first = f"softmax, target depth {d}, to step {cfg['steps']}"
        out.append(Job(first, base + ("--train", "softmax", "--depth", str(d), "--until", str(cfg["steps"])),
                       minutes=cfg["steps"] / rate))
        out.append(Job(f"softmax, target depth {d}, the rest", base + ("--train", "softmax", "--depth", str(d)),
                       after=(first,), minutes=(cfg["factor"] - 1) * cfg["steps"] / rate))
        out.append(Job(f"relu, target depth {d}", base + ("--train", "relu", "--depth", str(d)), after=(first,),
                       minutes=cfg["factor"] * cfg["relu_steps"] / rate))
        out.append(Job(f"score, target depth {d}", ("--profile", cfg["profile"], "--score", "--depth", str(d)),
                       after=(out[-2].name, out[-1].name), minutes=3.0))
        scored.append(out[-1].name)
    return out


def run_all(cfg, workers: int, device: str = "cpu") -> int:
    """``--workers N``: every job (:func:`jobs`) on N single-threaded processes, resuming whatever is done,
    then the result file with the jobs' times. Exit status 1 when a job failed (it names its log)."""
    from icdl.gpt_icl.core.jobs import run_jobs

    started = time.perf_counter()
    logs = project_root() / "runs" / f"gpt_scale_{cfg['profile']}"
    res = run_jobs(jobs(cfg, device), workers=workers, logs=logs, python=(sys.executable, "-m", "icdl.gpt_icl.scale"))
    if not res["complete"]:
        print(f"not every job finished (logs in {logs}); run the same command again to resume")
        return 1
    path = write_job(cfg, started, jobs=res["jobs"])
    print(f"wrote {path}: {res['wall_s'] / 60:.1f} min wall on {workers} worker(s)")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    p = Parser(prog="python -m icdl.gpt_icl.scale",
               description="ICDL sec. 5's main study trained longer, scored at snapshots.")
    p.add_argument("--profile", default="reference", help=f"one of {PROFILES.names}")
    p.add_argument("--workers", type=int, help="run every job on this many single-threaded processes")
    p.add_argument("--train", choices=ATTENTIONS, help="train one model (with --depth)")
    p.add_argument("--until", type=int, help="with --train: stop after this many of the model's steps")
    p.add_argument("--score", action="store_true", help="score the snapshots of one target depth (with --depth)")
    p.add_argument("--depth", type=int, help="the target depth of --train or --score")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"), help="where --train or --workers trains")
    return p


def _check(p: argparse.ArgumentParser, args, cfg) -> None:
    """One job per call -- the whole run (``--workers``), one model (``--train``) or one depth's scores
    (``--score``) -- and only the flags that job uses; anything else refused in one line."""
    at_least_one(p, workers=args.workers, until=args.until)
    jobs_given = [f for f, on in (("--workers", args.workers is not None), ("--train", args.train is not None),
                                  ("--score", args.score)) if on]
    if not jobs_given:
        p.error("give --workers N (the whole run), or --train / --score with --depth (one job)")
    if len(jobs_given) > 1:
        p.error(f"{' and '.join(jobs_given)} are separate jobs: give one of them (--workers N runs them all)")
    if args.until is not None and not args.train:
        p.error("--until stops the training of one model: it needs --train (--workers sets each job's own limit)")
    if args.depth is not None and args.workers is not None:
        p.error("--depth picks the model of --train or --score; --workers runs every depth of the profile")
    if (args.train or args.score) and args.depth not in cfg["depths"]:
        p.error(f"--depth must be one of the profile's target depths {tuple(cfg['depths'])}, got {args.depth}")
    if args.score and args.device != "cpu":
        p.error(f"--score scores the snapshots on the CPU: it does not take --device {args.device}")
    if args.train and args.until is not None:
        steps = configs(long_settings(cfg), args.depth, args.train, cfg["n_layer"])[2].steps
        if args.until > steps:
            p.error(f"--until {args.until} is past the end of the {args.train} model ({steps} steps): give at most "
                    f"{steps}, or leave --until out to train to the end")
    cuda_or_refuse(p, args.device)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    try:
        cfg = PROFILES.resolve(args.profile)
        _check(p, args, cfg)
        job = (f"train {args.train}, target depth {args.depth}" + (f", until step {args.until}" if args.until else "")
               if args.train else f"score target depth {args.depth}" if args.score
               else f"the whole run on {args.workers} worker(s)")
        if dry_run(f"the scale study, profile {args.profile}: {job}, on {args.device}"):
            return 0
        if args.train:
            train_model(cfg, args.depth, args.train, where=folder(cfg["profile"]), until=args.until,
                        device=args.device)  # train() holds the checkpoint's one-writer lock
            return 0
        if args.score:
            print(f"wrote {score_job(cfg, args.depth)}")
            return 0
        with one_writer(PROFILES.folder() / f"scale.{cfg['profile']}.json", f"the {cfg['profile']} scale run"):
            return run_all(cfg, args.workers, args.device)
    except (ProfileError, ResultFileError, ValueError) as err:
        print(f"python -m icdl.gpt_icl.scale: error: {err}", file=sys.stderr)
        return 2
