"""The recipe scan (issue 67): a training recipe fitted per attention and per task on validation prompts, the
incumbent in the grid, registered before its run.

The first scan (:mod:`icdl.gpt_icl.schedules.scan`) fitted the softmax model alone, at one seed, and its winner
won a tie inside the noise of 512 validation prompts; its grid did not hold the recipe it replaced. This one asks
each attention separately, on two seeds, with few candidates (fewer candidates at more seeds, not a wide grid at
one), and lets a candidate replace the incumbent only by more than the noise. Every number below is data,
committed before the first run of a profile:

=====================  ==========================================================================================
:data:`CANDIDATES`     per profile, the recipes: the **incumbent** (the recipe the committed models were trained
                       with) and a **cosine** recipe, linear warm-up then cosine decay (nanoGPT's, and most current
                       training code's: :func:`icdl.gpt_icl.core.training.lr_at`)
:data:`PROFILES`       ``quick`` (CI, seconds), ``n01`` (the main study's depth-3 models at x ~ N(0, I); seeds 0
                       and 1 of the main study, so its runs are the main study's models under each recipe),
                       ``icdl`` (the same models on ICDL's own task, x ~ N(−2, I): the incumbent is the reference
                       schedule with its warm phase, the recipe the book's best-learned models were trained with)
:func:`choose`         the rule, per attention: each candidate's score is its validation R² at the horizon, the
                       mean over seeds; a candidate replaces the incumbent only where its score exceeds the
                       incumbent's by more than :func:`noise` -- the larger spread over seeds of the two, and at
                       least :data:`MIN_NOISE`; the best such candidate wins, else the incumbent stays
:func:`flat`           whether a run's validation curve was flat at its end: it gained less than 0.005 over the
                       last quarter of its steps (else the horizon, not the recipe, ended it); the rule and its
                       margin live in :mod:`icdl.gpt_icl.core.curves`, which the flat design reads too
=====================  ==========================================================================================

The horizon is the cap the chosen recipe then trains the study's models to, so that a decaying schedule is scanned
at the length it will be used at (a cosine fitted to 12 000 steps is another schedule at 24 000).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.curves import flat
from icdl.gpt_icl.core.model import ATTENTIONS, GPTConfig
from icdl.gpt_icl.core.schedule import SEED_PER_REPLICATE, SEED_PER_TARGET_DEPTH
from icdl.gpt_icl.core.tasks import TaskConfig
from icdl.gpt_icl.core.training import TrainConfig, validation_prompts
from icdl.repro.profiles import ProfileSet

#: two scores differ only by more than MIN_NOISE (the least noise the rule admits); a run's curve is flat by
#: icdl.gpt_icl.core.training's rule (FLAT, flat: the first scan's flatness margin), which the scan uses
MIN_NOISE = 0.01

#: the recipes of each profile: the optimiser's settings (Adam) of :class:`TrainConfig`. ``incumbent``: the
#: recipe of the committed models of the task (n01: icdl.gpt_icl.core.main_study.N01_FITTED's learning rate and
#: batch, constant); ``cosine``: nanoGPT's peak and floor (6e-4 down to 6e-5), warmed up over 500 steps, the same
#: batch
CANDIDATES = {
    "quick": {"incumbent": {"lr": 1e-3, "batch": 16},
              "cosine": {"lr": 3e-3, "batch": 16, "lr_schedule": "cosine", "warmup_steps": 10, "lr_floor": 3e-4}},
    "n01": {"incumbent": {"lr": 1e-4, "batch": 64},
            "cosine": {"lr": 6e-4, "batch": 64, "lr_schedule": "cosine", "warmup_steps": 500, "lr_floor": 6e-5}},
    "icdl": {"incumbent": {"lr": 1e-3, "batch": 32, "warm_steps": 5000, "warm_family": "tanh", "warm_width": 100},
             "cosine": {"lr": 6e-4, "batch": 64, "lr_schedule": "cosine", "warmup_steps": 500, "lr_floor": 6e-5}},
}
#: a candidate's settings that are not the optimiser's: its warm phase's target family and width (TaskConfig)
_WARM = ("warm_family", "warm_width")

PROFILES = ProfileSet(
    "gpt_n01",
    profiles={
        "quick": {"d": 5, "n_layer": 2, "n_head": 2, "n_embd": 32, "train_examples": 20, "max_examples": 30,
                  "depth": 3, "seeds": 2, "horizon": 60, "eval_every": 20, "eval_prompts": 128, "centre": 0.0,
                  "seed": 0, "fast": False},
        "n01": {"d": 5, "n_layer": 3, "n_head": 2, "n_embd": 64, "train_examples": 40, "max_examples": 60,
                "depth": 3, "seeds": 2, "horizon": 14_000, "eval_every": 500, "eval_prompts": 2048, "centre": 0.0,
                "seed": 0, "fast": True},
        "icdl": {"d": 5, "n_layer": 3, "n_head": 2, "n_embd": 64, "train_examples": 40, "max_examples": 60,
                 "depth": 3, "seeds": 2, "horizon": 14_000, "eval_every": 500, "eval_prompts": 2048, "centre": 2.0,
                 "seed": 0, "fast": True},
    },
    ranges={"d": (2, 64), "n_layer": (1, 24), "n_head": (1, 16), "n_embd": (8, 1024), "train_examples": (2, 200),
            "max_examples": (2, 200), "depth": (1, 8), "seeds": (1, 20), "horizon": (1, 10**6),
            "eval_every": (1, 10**5), "eval_prompts": (8, 10**5), "centre": (0.0, 10.0), "seed": (0, 2**31 - 1),
            "fast": {False, True}},
    command="python -m icdl.gpt_icl.recipes --profile {profile}",
)

#: the result's fields
FIELDS = ("history", "levels", "runs", "complete")


def runs(cfg) -> list[tuple[str, str, int]]:
    """Every run of a profile, ``(candidate, attention, replicate)``, in the order the scan trains them: seed by
    seed, so that a scan stopped early has every candidate at the first seed."""
    return [(name, att, rep) for rep in range(cfg["seeds"]) for att in ATTENTIONS
            for name in CANDIDATES[cfg["profile"]]]


def configs(cfg, candidate: str, attention: str, replicate: int) -> tuple[GPTConfig, TaskConfig, TrainConfig]:
    """The model, task and training settings of one run: the main study's model and training seed (target depth
    ``depth``, replicate ``replicate``), from scratch, the candidate's recipe (its warm phase, where it has one, on
    the profile's inputs) to the horizon."""
    if cfg["max_examples"] < cfg["train_examples"]:
        raise ValueError(f"max_examples={cfg['max_examples']} is below train_examples={cfg['train_examples']}")
    if cfg["horizon"] % cfg["eval_every"]:
        raise ValueError(f"horizon={cfg['horizon']} must be a multiple of eval_every={cfg['eval_every']}")
    recipe = {k: v for k, v in CANDIDATES[cfg["profile"]][candidate].items() if k not in _WARM}
    spec = CANDIDATES[cfg["profile"]][candidate]
    warm_task = (TaskConfig(d=cfg["d"], depth=cfg["depth"], family=spec["warm_family"], width=spec["warm_width"],
                            centre=cfg["centre"]) if spec.get("warm_steps") else None)
    model = GPTConfig(d=cfg["d"], n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"],
                      max_examples=cfg["max_examples"], attention=attention)
    task = TaskConfig(d=cfg["d"], depth=cfg["depth"], family="relu", width=0, centre=cfg["centre"])
    log_every = cfg["eval_every"] // 10 if cfg["eval_every"] % 10 == 0 else cfg["eval_every"]
    tr = TrainConfig(steps=cfg["horizon"], examples=cfg["train_examples"], log_every=log_every,
                     seed=cfg["seed"] + SEED_PER_TARGET_DEPTH * cfg["depth"] + SEED_PER_REPLICATE * replicate,
                     eval_every=cfg["eval_every"], eval_prompts=cfg["eval_prompts"],
                     eval_from=min(10, cfg["train_examples"]), fast=cfg["fast"])
    return model, task, replace(tr, **recipe, warm_task=warm_task)


def levels(cfg) -> pd.DataFrame:
    """Per replicate, the context mean's and least squares' validation score on that replicate's validation
    prompts (they depend on its training seed alone): the plateau and the linear fit each run is read against."""
    rows = []
    for rep in range(cfg["seeds"]):
        _, task, tr = configs(cfg, next(iter(CANDIDATES[cfg["profile"]])), ATTENTIONS[0], rep)
        xs, ys = validation_prompts(task, tr)
        sl = slice(tr.eval_from - 1, None)
        rows.append({"replicate": rep,
                     "context_mean": float(bl.r2_across_prompts(bl.context_mean(xs, ys), ys)[sl].mean()),
                     "least_squares": float(bl.r2_across_prompts(bl.least_squares(xs, ys), ys)[sl].mean())})
    return pd.DataFrame(rows)


def scores(history: pd.DataFrame) -> pd.DataFrame:
    """One row per attention and candidate: ``score`` (validation R² at each run's last evaluation, the mean over
    its seeds), ``spread`` (highest minus lowest seed), ``seeds`` and ``flat`` (every seed's curve flat)."""
    rows = []
    for (att, name), g in history.groupby(["attention", "candidate"], sort=False):
        finals = [r.sort_values("step")["val_r2"].iloc[-1] for _, r in g.groupby("replicate")]
        rows.append({"attention": att, "candidate": name, "score": float(sum(finals) / len(finals)),
                     "spread": float(max(finals) - min(finals)), "seeds": len(finals),
                     "flat": all(flat(r) for _, r in g.groupby("replicate"))})
    return pd.DataFrame(rows)


def noise(a: dict, b: dict) -> float:
    """The margin a score must clear to count as better than another (rows of :func:`scores`): the larger seed
    spread of the two, and at least :data:`MIN_NOISE`."""
    return max(MIN_NOISE, a["spread"], b["spread"])


def choose(history: pd.DataFrame) -> dict[str, dict]:
    """The rule (module docstring), per attention: ``{attention: {"candidate", "score", "incumbent_score",
    "margin", "noise"}}`` -- the winner, its score, the incumbent's, the winner's lead over the incumbent and the
    noise it had to clear (the incumbent's own row: margin 0)."""
    table = scores(history)
    out = {}
    for att, g in table.groupby("attention", sort=False):
        rows = {r["candidate"]: r for _, r in g.iterrows()}
        if "incumbent" not in rows:
            raise ValueError(f"the scan of {att} attention has no incumbent run: nothing to replace")
        inc = rows["incumbent"]
        better = {n: r for n, r in rows.items() if n != "incumbent" and r["score"] - inc["score"] > noise(r, inc)}
        name = max(better, key=lambda n: better[n]["score"]) if better else "incumbent"
        win = rows[name]
        out[att] = {"candidate": name, "score": float(win["score"]), "incumbent_score": float(inc["score"]),
                    "margin": float(win["score"] - inc["score"]), "noise": float(noise(win, inc))}
    return out


def design_shown(profile: str) -> pd.DataFrame:
    """The candidates of a profile for the reader: one row each, its schedule in words."""
    from icdl.repro.typeset import rate

    rows = []
    for name, r in CANDIDATES[profile].items():
        if r.get("lr_schedule", "constant") == "cosine":
            how = (f"warm-up over {r['warmup_steps']} steps to {rate(r['lr'])}, cosine decay to "
                   f"{rate(r['lr_floor'])} at the horizon")
        else:
            how = f"constant {rate(r['lr'])}"
        if r.get("warm_steps"):
            steps = f"{r['warm_steps']:,}".replace(",", "\u2009")
            how += f", the first {steps} steps on {r['warm_family']} targets (a warm phase)"
        rows.append({"recipe": name, "learning rate": how, "batch": r["batch"]})
    return pd.DataFrame(rows)


def choice_shown(history: pd.DataFrame) -> pd.DataFrame:
    """The scan's outcome for the reader: per attention and candidate its score (validation R² at the horizon, mean
    over seeds), the spread over seeds, whether every seed's curve was flat at the end, and the recipe chosen."""
    from icdl.repro.typeset import attention_name

    table, chosen = scores(history), choose(history)
    return pd.DataFrame({"attention": table["attention"].map(attention_name), "recipe": table["candidate"],
                         "validation R² at the horizon": table["score"].map(lambda v: f"{v:.3f}"),
                         "spread over seeds": table["spread"].map(lambda v: f"{v:.3f}"),
                         "flat at the end": table["flat"].map({True: "yes", False: "no"}),
                         "chosen": [("yes" if chosen[a]["candidate"] == c else "")
                                    for a, c in zip(table["attention"], table["candidate"])]})
