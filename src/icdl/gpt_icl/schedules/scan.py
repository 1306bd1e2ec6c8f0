"""Which optimiser settings let the model learn a task: a scan chosen on validation prompts, before any judged run
(chapter ``gpt_n01``).

A claim about how well a transformer learns in context, judged on a model that never left the context-mean
plateau, is a verdict on its schedule. So before a study is judged on a task, the reference model is trained on
that task at every setting of a small grid, its R² tracked on fixed validation prompts (a seed of their own,
never the test prompts), and the schedule the study then uses is the one the rule below picks from those curves.
The grid and the rule are data, committed before the scan's run:

=====================  ==========================================================================================
:data:`PROFILES`       ``quick`` (CI: a tiny model, seconds), ``n01`` (the reference model on x ~ N(0, I): the
                       task of chapter ``gpt_n01``), ``icdl`` (the same at ICDL's inputs x ~ N(−2, I): the main
                       study's task), ``paper`` (Appendix F's model, a GPU command). Each profile's grid is its
                       learning rates × batch sizes; every run trains from scratch on the target family (no warm
                       phase, no curriculum), the main study's depth-3 softmax model at its first seed
:func:`scan`           every run of the grid, resumable (one checkpoint per run)
:func:`choose`         the rule: the run with the highest validation R² at any evaluation; its steps, the first
                       evaluation within :data:`FLAT` of that run's best (where its curve is flat); ``rising``
                       when the run still gained more than :data:`FLAT` over its last quarter (the budget, not
                       the curve, ended it)
:func:`runs_table`     per run: its best validation R², where it was reached, its lead over the context mean
:func:`shown`          the scans of several tasks side by side, as the chapter shows them
=====================  ==========================================================================================

The validation score is train()'s: R² across the validation prompts at each position from ``eval_from`` to the
training length, averaged over those positions (:func:`icdl.gpt_icl.core.training.excess_r2`) -- the validation
loss normalised by the labels' spread, so runs of every batch size and step size compare on one scale. Beside
it the context mean and least squares on the same prompts (:func:`levels`): the plateau and the linear fit the
chosen run is read against.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.model import GPTConfig
from icdl.gpt_icl.core.schedule import MODEL_RANGES, SEED_PER_TARGET_DEPTH
from icdl.gpt_icl.core.tasks import TaskConfig
from icdl.gpt_icl.core.training import TrainConfig, train, validation_prompts
from icdl.repro.profiles import ProfileSet
from icdl.repro.results import save_profile_result
from icdl.repro.typeset import count, rate

#: the target depth and attention of every run: the main study's depth-3 softmax model
DEPTH, ATTENTION = 3, "softmax"
#: a run's curve is flat from its first evaluation within FLAT of its best validation R²
FLAT = 0.005

_REFERENCE = {"d": 5, "n_layer": 3, "n_head": 2, "n_embd": 64, "train_examples": 40, "max_examples": 60,
              "lrs": (1e-4, 3e-4, 1e-3), "batches": (32, 64), "steps": 10_000, "eval_every": 500,
              "eval_prompts": 512, "seed": 0}
PROFILES = ProfileSet(
    "gpt_n01",
    profiles={
        "quick": {"d": 5, "n_layer": 2, "n_head": 2, "n_embd": 32, "train_examples": 20, "max_examples": 30,
                  "lrs": (3e-4, 1e-3), "batches": (16, 32), "steps": 60, "eval_every": 20, "eval_prompts": 128,
                  "seed": 0, "centre": 0.0},
        "n01": {**_REFERENCE, "centre": 0.0},
        "icdl": {**_REFERENCE, "centre": 2.0},
        "paper": {"d": 20, "n_layer": 12, "n_head": 8, "n_embd": 256, "train_examples": 51, "max_examples": 76,
                  "lrs": (3e-5, 1e-4, 3e-4), "batches": (64,), "steps": 100_000, "eval_every": 2_000,
                  "eval_prompts": 2_048, "seed": 0, "centre": 0.0},
    },
    ranges={**{k: MODEL_RANGES[k] for k in ("d", "n_head", "n_embd", "seed")}, "n_layer": (1, 24),
            "train_examples": (2, 200), "max_examples": (2, 200), "lrs": MODEL_RANGES["lr"],
            "batches": MODEL_RANGES["batch"], "steps": (1, 10**6), "eval_every": (1, 10**5),
            "eval_prompts": (8, 10**5), "centre": (0.0, 10.0)},
    command="python -m icdl.gpt_icl.schedules --profile {profile}",
)
#: the result's fields
FIELDS = ("history", "levels", "runs", "complete")


def configs(cfg, lr: float, batch: int) -> tuple[GPTConfig, TaskConfig, TrainConfig]:
    """The model, task and training settings of the run at step size ``lr`` and batch ``batch``."""
    if cfg["max_examples"] < cfg["train_examples"]:
        raise ValueError(f"max_examples={cfg['max_examples']} is below train_examples={cfg['train_examples']}")
    if cfg["steps"] % cfg["eval_every"]:
        raise ValueError(f"steps={cfg['steps']} must be a multiple of eval_every={cfg['eval_every']}")
    model = GPTConfig(d=cfg["d"], n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"],
                      max_examples=cfg["max_examples"], attention=ATTENTION)
    task = TaskConfig(d=cfg["d"], depth=DEPTH, family="relu", width=0, centre=cfg["centre"])
    log_every = cfg["eval_every"] // 10 if cfg["eval_every"] % 10 == 0 else cfg["eval_every"]
    tr = TrainConfig(steps=cfg["steps"], batch=batch, lr=lr, examples=cfg["train_examples"],
                     seed=cfg["seed"] + SEED_PER_TARGET_DEPTH * DEPTH, log_every=log_every,
                     eval_every=cfg["eval_every"], eval_prompts=cfg["eval_prompts"],
                     eval_from=min(10, cfg["train_examples"]))
    return model, task, tr


def grid(cfg) -> list[tuple[float, int]]:
    """Every ``(lr, batch)`` of the profile, in the order the scan trains them."""
    return [(lr, batch) for batch in cfg["batches"] for lr in cfg["lrs"]]


def levels(cfg) -> dict[str, float]:
    """The context mean's and least squares' validation score on the runs' validation prompts (the same for
    every run: they depend on the seed alone)."""
    _, task, tr = configs(cfg, cfg["lrs"][0], cfg["batches"][0])
    xs, ys = validation_prompts(task, tr)
    sl = slice(tr.eval_from - 1, None)
    return {"context_mean": float(bl.r2_across_prompts(bl.context_mean(xs, ys), ys)[sl].mean()),
            "least_squares": float(bl.r2_across_prompts(bl.least_squares(xs, ys), ys)[sl].mean())}


def checkpoint(folder: Path, lr: float, batch: int) -> Path:
    return Path(folder) / f"scan_lr{lr:g}_batch{batch}.pt"


def scan(cfg, *, folder: Path | None = None, steps_this_call: int | None = None, progress: bool = True,
         device: str = "cpu") -> dict:
    """Train (or resume from ``folder``) every run of :func:`grid`. Returns the fields of :data:`FIELDS`:
    ``history`` (lr, batch, step, loss, val_r2, val_context_mean at every evaluation), ``levels``, ``runs`` (lr,
    batch, steps done, seconds) and ``complete``."""
    hists, runs, complete = [], [], True
    for lr, batch in grid(cfg):
        model, task, tr = configs(cfg, lr, batch)
        res = train(model, task, tr, checkpoint=None if folder is None else checkpoint(folder, lr, batch),
                    max_steps_this_call=steps_this_call, progress=progress, device=device,
                    command=PROFILES.command_for(cfg["profile"]))
        complete &= res["steps_done"] >= tr.steps
        hists.append(res["history"].dropna(subset=["val_r2"]).assign(lr=lr, batch=batch))
        runs.append({"lr": lr, "batch": batch, "steps": res["steps_done"], "seconds": res["seconds"]})
    history = pd.concat(hists, ignore_index=True)[["lr", "batch", "step", "loss", "val_r2", "val_context_mean"]]
    return {"history": history, "levels": levels(cfg), "runs": pd.DataFrame(runs), "complete": complete}


def runs_table(history: pd.DataFrame) -> pd.DataFrame:
    """One row per run: the best validation R² and the step it was reached at, the steps at which its curve is
    flat (:data:`FLAT`), the last evaluation's R² and its lead over the context mean, and ``rising``."""
    rows = []
    for (lr, batch), g in history.groupby(["lr", "batch"], sort=False):
        g = g.sort_values("step")
        best = g["val_r2"].max()
        last = g.iloc[-1]
        quarter = g[g["step"] <= last["step"] - 0.25 * last["step"]]
        rows.append({"lr": float(lr), "batch": int(batch), "best_r2": float(best),
                     "best_step": int(g.loc[g["val_r2"].idxmax(), "step"]),
                     "flat_step": int(g[g["val_r2"] >= best - FLAT]["step"].iloc[0]),
                     "last_r2": float(last["val_r2"]), "lead": float(last["val_r2"] - last["val_context_mean"]),
                     "rising": bool(len(quarter) and last["val_r2"] - quarter["val_r2"].iloc[-1] > FLAT)})
    return pd.DataFrame(rows)


def choose(history: pd.DataFrame) -> dict:
    """The rule (module docstring): ``{"lr", "batch", "steps", "best_r2", "rising"}`` of the run with the highest
    validation R² (the first in the grid's order on a tie), ``steps`` where its curve is flat."""
    table = runs_table(history)
    top = table.loc[table["best_r2"].idxmax()]
    return {"lr": float(top["lr"]), "batch": int(top["batch"]), "steps": int(top["flat_step"]),
            "best_r2": float(top["best_r2"]), "rising": bool(top["rising"])}


def write(res: dict, cfg, started: float) -> Path:
    """The result file ``results/gpt_n01/scan.<profile>.json`` (or the override run's own)."""
    missing = [f for f in FIELDS if f not in res]
    if missing:
        raise ValueError(f"a scan result needs the fields {FIELDS}; missing {missing}")
    return save_profile_result(PROFILES, "scan", {f: res[f] for f in FIELDS}, profile=cfg["profile"],
                               seed=cfg["seed"], started=started, overrides=cfg["overrides"])


def run(cfg, *, folder: Path | None, steps_this_call: int | None = None, device: str = "cpu",
        progress: bool = True) -> Path | None:
    """The whole scan of a profile and its result file (None, nothing written, when ``steps_this_call`` stopped
    it before the end: run the same command again to resume)."""
    started = time.perf_counter()
    res = scan(cfg, folder=folder, steps_this_call=steps_this_call, progress=progress, device=device)
    return write(res, cfg, started) if res["complete"] else None


def shown(scans: dict[str, dict]) -> pd.DataFrame:
    """For the reader, one row per task (``scans``: a task's name to its scan's fields): the chosen step size,
    batch and steps, the chosen run's best validation R² beside the context mean's and least squares' on the same
    prompts, and whether the run was still rising at the step budget."""
    rows = []
    for task, res in scans.items():
        c = choose(res["history"])
        rows.append({"task": task, "learning rate": rate(c["lr"]), "batch": c["batch"], "steps": count(c["steps"]),
                     "validation R²": f"{c['best_r2']:.3f}",
                     "context mean": f"{res['levels']['context_mean']:.3f}",
                     "least squares": f"{res['levels']['least_squares']:.3f}",
                     "still rising at the budget": "yes" if c["rising"] else "no"})
    return pd.DataFrame(rows)


def glue_words(scans: dict[str, dict], task: str, profile: str = "n01") -> dict[str, str]:
    """``scan_<profile>_words``: what the scan of ``task`` (a key of ``scans``) shows, in a clause -- the chosen
    schedule and its validation R² beside the context mean's and least squares' -- or, before its run, the
    command that makes it."""
    key = f"scan_{profile}_words"
    if task not in scans:
        return {key: f"its run has not been made yet ({PROFILES.command_for(profile)})"}
    res = scans[task]
    c, lv = choose(res["history"]), res["levels"]
    rising = ", still rising at the step budget" if c["rising"] else ""
    return {key: f"at learning rate {rate(c['lr'])} and batch {c['batch']} the model reaches a validation R² of "
                 f"{c['best_r2']:.3f} after {count(c['steps'])} steps{rising}, where the context mean reaches "
                 f"{lv['context_mean']:.3f} and least squares {lv['least_squares']:.3f} on the same prompts"}


def run_words(res: dict, lr: float, batch: int) -> str:
    """What one run of a scan (``res``: its fields, ``history`` a frame) reached, in a clause: "a best validation R²
    of 0.551 (step 10 000), where the context mean reaches 0.410" -- e.g. the main study's own optimiser on a task
    the scan fitted otherwise. Refused in one line for a run the scan does not hold."""
    table = runs_table(res["history"])
    row = table[(table["lr"] == lr) & (table["batch"] == batch)]
    if row.empty:
        raise ValueError(f"the scan has no run at learning rate {lr:g} and batch {batch}; its runs: "
                         f"{sorted(zip(table['lr'], table['batch']))}")
    r = row.iloc[0]
    return (f"a best validation R² of {r['best_r2']:.3f} (step {count(int(r['best_step']))}), where the context mean "
            f"reaches {res['levels']['context_mean']:.3f}")

