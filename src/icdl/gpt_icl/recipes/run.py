"""Running the recipe scan (:mod:`icdl.gpt_icl.recipes.scan`): every run trained or resumed from its checkpoint,
split over processes by shard, and the result written once every run has finished.

Each run keeps its checkpoint in ``results/gpt_n01/checkpoints/recipes_<profile>/`` (committed as each run finishes,
so that a scan stopped in one session resumes in the next at the same commit); the result file
``results/gpt_n01/recipes.<profile>.json`` holds every run's validation curve, the levels and the runs' steps."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from icdl.gpt_icl.core.training import train
from icdl.gpt_icl.recipes.scan import FIELDS, PROFILES, configs, levels, runs
from icdl.repro.results import save_profile_result


def checkpoint(folder: Path, candidate: str, attention: str, replicate: int) -> Path:
    return Path(folder) / f"recipe_{candidate}_{attention}_seed{replicate}.pt"


def shard_of(cfg, shard: tuple[int, int] | None) -> list[tuple[str, str, int]]:
    """The runs of shard ``(i, n)``: every n-th run from the i-th (all of them without a shard)."""
    every = runs(cfg)
    if shard is None:
        return every
    i, n = shard
    if not (1 <= n <= len(every) and 0 <= i < n):
        raise ValueError(f"--shard must be I/N with 1 <= N <= {len(every)} runs and 0 <= I < N, got {i}/{n}")
    return every[i::n]


def train_runs(cfg, *, folder: Path, shard: tuple[int, int] | None = None, steps_this_call: int | None = None,
               progress: bool = True, device: str = "cpu") -> dict:
    """Train (or resume) the runs of ``shard``. Returns ``{"history", "runs", "complete"}``: every run's logged
    rows with its candidate, attention and replicate, its steps and seconds, and whether every run of the shard
    reached the horizon."""
    hists, done, complete = [], [], True
    for name, att, rep in shard_of(cfg, shard):
        model, task, tr = configs(cfg, name, att, rep)
        res = train(model, task, tr, checkpoint=checkpoint(folder, name, att, rep), progress=progress,
                    max_steps_this_call=steps_this_call, device=device, command=PROFILES.command_for(cfg["profile"]))
        complete &= res["steps_done"] >= tr.steps
        hists.append(res["history"].dropna(subset=["val_r2"]).assign(candidate=name, attention=att, replicate=rep))
        done.append({"candidate": name, "attention": att, "replicate": rep, "steps": res["steps_done"],
                     "seconds": res["seconds"]})
    history = pd.concat(hists, ignore_index=True)[["candidate", "attention", "replicate", "step", "loss", "val_r2",
                                                   "val_context_mean"]]
    return {"history": history, "runs": pd.DataFrame(done), "complete": complete}


def run(cfg, *, folder: Path, shard: tuple[int, int] | None = None, steps_this_call: int | None = None,
        progress: bool = True, device: str = "cpu") -> Path | None:
    """Train the runs of ``shard`` and, without a shard and once every run has finished, write the result file
    (returned; None when something is left: run the same command again)."""
    started = time.perf_counter()
    res = train_runs(cfg, folder=folder, shard=shard, steps_this_call=steps_this_call, progress=progress,
                     device=device)
    if shard is not None or not res["complete"]:
        return None
    data = {"history": res["history"], "levels": levels(cfg), "runs": res["runs"], "complete": True}
    return save_profile_result(PROFILES, "recipes", {f: data[f] for f in FIELDS}, profile=cfg["profile"],
                               seed=cfg["seed"], started=started, overrides=cfg["overrides"])
