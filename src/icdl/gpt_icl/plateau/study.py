"""The context-mean plateau, measured (chapter ``gpt_plateau``): a finding of ours, not a claim of ICDL.

Small transformers trained on ICDL's random ReLU targets first learn to predict the mean of the labels
seen so far, and on bias-free ReLU targets of width 2d they stayed there in every run we made; on tanh
targets the same code leaves the plateau. This module measures

* :func:`plateau_runs` -- the same model trained from scratch on several target families, with R² on
  fixed validation prompts every ``eval_every`` steps, beside the context mean and least squares on
  those prompts; :func:`leave_step` -- the first evaluation at which a run is more than halfway from
  the context mean to least squares;
* :func:`signal_shares` -- how much of the label variance of each family is within-prompt (what the
  context mean cannot explain), and how much of that a linear fit within the prompt explains;
* :func:`shortcut_analysis` -- the hypothesis that a plateaued model predicts more than the context mean:
  a bias-free ReLU network is positively homogeneous, so on inputs clustered along one direction
  (x ≈ −2·1) the label scales with the input's projection on that direction, and the context mean
  rescaled by ``1ᵀx_k / 1ᵀx̄`` is a cheap predictor. We compare the model's predictions with both.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pandas as pd
import torch

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.model import GPTConfig
from icdl.gpt_icl.core.schedule import MODEL_RANGES, MODEL_SETTINGS, SEED_PER_TARGET_DEPTH
from icdl.gpt_icl.core.tasks import TaskConfig, sample_prompts
from icdl.gpt_icl.core.training import TrainConfig, train, validation_prompts
from icdl.repro.profiles import ProfileSet
from icdl.repro.results import save_profile_result
from icdl.repro.typeset import count, percent

_MODEL = ("d", "n_head", "n_embd", "batch", "lr", "seed")
_OWN = {"quick": {"n_layer": 2, "steps": 200, "eval_every": 50, "train_examples": 20, "max_examples": 30},
        "reference": {"n_layer": 3, "steps": 4000, "eval_every": 200, "train_examples": 40, "max_examples": 60},
        "paper": {"n_layer": 12, "steps": 20_000, "eval_every": 1000, "train_examples": 51, "max_examples": 76}}


def _profiles() -> dict:
    return {name: {**{k: MODEL_SETTINGS[name][k] for k in _MODEL}, **own} for name, own in _OWN.items()}


#: the model is the main study's softmax model (``max_examples``: its positions, the longer of its training
#: and test prompts, so that the two are the same network); no warm phase
PROFILES = ProfileSet(
    "gpt_plateau",
    profiles=_profiles(),
    ranges={**{k: MODEL_RANGES[k] for k in _MODEL + ("steps", "train_examples")}, "n_layer": (1, 24),
            "eval_every": (1, 10**5), "max_examples": (2, 200)},
    command="python -m icdl.gpt_icl --profile {profile} --part plateau",
)


class Family(NamedTuple):
    """A target family of the study: its name in tables and figures, hidden activation, width (0: 2d)."""
    label: str
    activation: str
    width: int


RELU_2D, RELU_100, TANH_100 = Family("ReLU, width 2d", "relu", 0), Family("ReLU, width 100", "relu", 100), \
    Family("tanh, width 100", "tanh", 100)
FAMILIES = (RELU_2D, RELU_100, TANH_100)
DEPTH = 3  # target depth of the study
#: the seeds of the prompts of :func:`signal_shares` and :func:`shortcut_analysis`
SEEDS = {"signal_shares": 5, "shortcut": 11}


def _configs(cfg, family: str, width: int) -> tuple[GPTConfig, TaskConfig, TrainConfig]:
    steps = cfg["steps"]
    log_every = max(1, steps // 100)
    every = max(log_every, cfg["eval_every"] // log_every * log_every)
    model = GPTConfig(d=cfg["d"], n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"],
                      max_examples=cfg["max_examples"])
    task = TaskConfig(d=cfg["d"], depth=DEPTH, family=family, width=width)
    tr = TrainConfig(steps=steps, batch=cfg["batch"], lr=cfg["lr"], examples=cfg["train_examples"],
                     seed=cfg["seed"] + SEED_PER_TARGET_DEPTH * DEPTH, log_every=log_every, eval_every=every)
    return model, task, tr


def levels(task: TaskConfig, tr: TrainConfig) -> dict:
    """Mean R² over positions ``eval_from`` … of the context mean and of least squares on the validation
    prompts of ``task``: the plateau and a level a run has clearly left it by."""
    xs, ys = validation_prompts(task, tr)
    sl = slice(tr.eval_from - 1, None)
    return {"context_mean": float(bl.r2_across_prompts(bl.context_mean(xs, ys), ys)[sl].mean()),
            "least_squares": float(bl.r2_across_prompts(bl.least_squares(xs, ys), ys)[sl].mean())}


def plateau_runs(cfg, *, folder: Path | None = None, steps_this_call: int | None = None,
                 progress: bool = True, device: str = "cpu") -> dict:
    """Train the softmax model of the profile from scratch on each family of :data:`FAMILIES` (no warm phase),
    tracking R² on validation prompts. Returns ``{"history", "levels", "models", "complete"}``."""
    hists, lev, models, complete = [], [], {}, True
    for label, family, width in FAMILIES:
        mcfg, task, tr = _configs(cfg, family, width)
        ckpt = None if folder is None else Path(folder) / f"plateau_{family}{width or 'x2d'}.pt"
        res = train(mcfg, task, tr, checkpoint=ckpt, max_steps_this_call=steps_this_call, progress=progress,
                    device=device,
                    command=PROFILES.command_for(cfg["profile"]))
        complete &= res["steps_done"] >= tr.steps
        models[label] = res["model"]
        hists.append(res["history"].dropna(subset=["val_r2"]).assign(family=label))
        lev.append({"family": label, **levels(task, tr)})
    return {"history": pd.concat(hists, ignore_index=True), "levels": pd.DataFrame(lev), "models": models,
            "complete": complete}


def leave_step(history: pd.DataFrame, levels: pd.DataFrame) -> pd.DataFrame:
    """Per family: the first evaluated step at which the model's R² is above the midpoint between the context
    mean and least squares (NaN if never), and the final excess of the model over the context mean."""
    rows = []
    for label, g in history.groupby("family", sort=False):
        lv = levels.set_index("family").loc[label]
        mid = (lv["context_mean"] + lv["least_squares"]) / 2
        above = g[g["val_r2"] > mid]
        rows.append({"family": label, "context_mean": lv["context_mean"], "least_squares": lv["least_squares"],
                     "final_r2": float(g["val_r2"].iloc[-1]),
                     "final_excess": float(g["val_r2"].iloc[-1] - lv["context_mean"]),
                     "left_at_step": float(above["step"].iloc[0]) if len(above) else float("nan")})
    return pd.DataFrame(rows)


def signal_shares(cfg, *, prompts: int = 2048, seed: int = SEEDS["signal_shares"]) -> pd.DataFrame:
    """Per family: the share of the label variance that lies within prompts (``1 − between/total``), and the
    share of that within-prompt variance a least-squares fit with intercept on the prompt's own examples
    explains (in-sample, ``train_examples`` examples)."""
    rows = []
    k = cfg["train_examples"]
    for label, family, width in FAMILIES:
        task = TaskConfig(d=cfg["d"], depth=DEPTH, family=family, width=width)
        xs, ys = sample_prompts(task, prompts, k, torch.Generator().manual_seed(seed))
        total = float(ys.var(unbiased=False))
        within = float(ys.var(dim=1, unbiased=False).mean())
        X = torch.cat([torch.ones(prompts, k, 1), xs], -1).double()
        coef = torch.linalg.lstsq(X, ys.double()[..., None]).solution
        resid = float(((X @ coef)[..., 0] - ys.double()).pow(2).mean())
        rows.append({"family": label, "within_share": within / total, "linear_share_of_within": 1 - resid / within})
    return pd.DataFrame(rows)


def shortcut_predictor(xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """``ŷ_k = ȳ_{<k} · 1ᵀx_k / 1ᵀx̄_{<k}``: the context mean rescaled by the query's projection on the
    all-ones direction relative to the examples' (0 at the first position, like the context mean)."""
    cm = bl.context_mean(xs, ys)
    s = xs.sum(-1)
    counts = torch.arange(xs.shape[1], dtype=xs.dtype)
    s_bar = torch.cat([torch.zeros_like(s[:, :1]), s.cumsum(1)[:, :-1]], 1) / counts.clamp(min=1)
    ratio = torch.where(counts > 0, s / torch.where(s_bar == 0, torch.ones_like(s_bar), s_bar), torch.zeros_like(s))
    return cm * ratio


@torch.no_grad()
def shortcut_analysis(model, cfg, family: Family = RELU_2D, *, prompts: int = 4096,
                      seed: int = SEEDS["shortcut"]) -> pd.DataFrame:
    """On fresh prompts of one family: per position, R² against the labels of the model, the context mean and
    the shortcut, and how much of the model's predictions each explains (R² of the model's predictions
    regressed on the context mean alone, and on the context mean and the shortcut together)."""
    task = TaskConfig(d=cfg["d"], depth=DEPTH, family=family.activation, width=family.width)
    xs, ys = sample_prompts(task, prompts, cfg["train_examples"], torch.Generator().manual_seed(seed))
    pred = model(xs, ys)
    cm, sc = bl.context_mean(xs, ys), shortcut_predictor(xs, ys)
    r2 = {name: bl.r2_across_prompts(p, ys).numpy() for name, p in (("model", pred), ("context mean", cm),
                                                                    ("shortcut", sc))}
    def explained(i: int, *features) -> float:
        """R² of the model's predictions at index ``i`` regressed on ``features`` there (with an intercept)."""
        X = torch.stack([torch.ones(prompts), *[f[:, i] for f in features]], -1).double()
        coef = torch.linalg.lstsq(X, pred[:, i].double()[:, None]).solution
        return 1 - float(((X @ coef)[:, 0] - pred[:, i]).pow(2).mean() / pred[:, i].double().var(unbiased=False))

    rows = []
    for i in range(2, xs.shape[1]):
        rows.append({"position": i + 1, **{f"r2 {k}": float(v[i]) for k, v in r2.items()},
                     "model explained by context mean": explained(i, cm),
                     "model explained by context mean + shortcut": explained(i, cm, sc)})
    return pd.DataFrame(rows)


#: the shortcut table's columns in the order the chapter reads them (a result file stores them sorted)
SHORTCUT_COLUMNS = ("position", "r2 model", "r2 context mean", "r2 shortcut", "model explained by context mean",
                    "model explained by context mean + shortcut")


def shortcut_shown(shortcut: pd.DataFrame, rows: list[int]) -> pd.DataFrame:
    """The rows ``rows`` (by place) of :func:`shortcut_analysis`'s table, its columns in :data:`SHORTCUT_COLUMNS`
    order, numbered afresh (no index column)."""
    return shortcut.iloc[rows][list(SHORTCUT_COLUMNS)].reset_index(drop=True)


def summary(history: pd.DataFrame, levels_df: pd.DataFrame, shares: pd.DataFrame) -> pd.DataFrame:
    """One row per family: signal shares, plateau and least-squares levels, final excess, the step it left."""
    return leave_step(history, levels_df).merge(shares, on="family")


def summary_shown(summary_df: pd.DataFrame) -> pd.DataFrame:
    """:func:`summary` as the chapter shows it: the family first, then what the task holds (the two shares, as per
    cents -- ``3 %`` -- as the prose quotes them, :func:`glue_values`) and what the run did; not the merge's
    alphabetical order with the label second."""
    first = ["family", "within_share", "linear_share_of_within", "left_at_step", "final_excess"]
    shown = summary_df.assign(**{c: summary_df[c].map(percent) for c in ("within_share", "linear_share_of_within")})
    return shown[[c for c in first if c in shown] + [c for c in shown if c not in first]]


def study(cfg, *, folder: Path | None = None, steps_this_call: int | None = None, progress: bool = True,
          device: str = "cpu", shortcut_prompts: int = 4096) -> dict:
    """The whole study: :func:`plateau_runs`, the :func:`summary` with :func:`signal_shares`, and the
    :func:`shortcut_analysis` of the ReLU-2d model. Returns the frames of :data:`FIELDS` and ``complete``."""
    res = plateau_runs(cfg, folder=folder, steps_this_call=steps_this_call, progress=progress, device=device)
    shares = signal_shares(cfg)
    return {"history": res["history"], "levels": res["levels"],
            "summary": summary(res["history"], res["levels"], shares),
            "shortcut": shortcut_analysis(res["models"][RELU_2D.label], cfg, prompts=shortcut_prompts),
            "complete": res["complete"]}


FIELDS = ("history", "levels", "summary", "shortcut", "complete")


def write(res: dict, cfg, command: str, started: float) -> Path:
    """``results/gpt_plateau/plateau.<profile>.json`` from a :func:`study` result."""
    return save_profile_result(PROFILES, "plateau", {k: res[k] for k in FIELDS}, profile=cfg["profile"],
                               seed=cfg["seed"], started=started, command=command)


def load(raw: dict) -> dict:
    """A committed plateau result (an object of :func:`icdl.repro.results.load_result`) as frames."""
    d = raw["data"]
    return {k: pd.DataFrame(d[k]) for k in FIELDS[:4]} | {"complete": bool(d["complete"]),
                                                           "provenance": raw["provenance"]}



def glue_values(summary_df: pd.DataFrame, shortcut: pd.DataFrame) -> dict[str, str]:
    """The numbers the chapter's prose quotes, formatted: within-prompt shares (per cent) and final excess of
    the ReLU-2d and tanh families, the step each family left the plateau at ("never" if it did not), and
    at the last position of the shortcut analysis the R² of the model, the context mean and the shortcut
    and the shares (per cent) of the model's predictions the context mean explains alone and with the
    shortcut."""
    summ, last = summary_df.set_index("family"), shortcut.iloc[-1]
    left = "; ".join(f"{fam}: {'never' if pd.isna(v) else f'step {count(v)}'}"
                     for fam, v in summ["left_at_step"].items())
    return {"relu_within": f"{100 * summ.loc[RELU_2D.label, 'within_share']:.0f}",
            "tanh_within": f"{100 * summ.loc[TANH_100.label, 'within_share']:.0f}",
            "relu_excess": f"{summ.loc[RELU_2D.label, 'final_excess']:.3f}",
            "tanh_excess": f"{summ.loc[TANH_100.label, 'final_excess']:.3f}",
            "sc_model": f"{last['r2 model']:.3f}", "sc_cm": f"{last['r2 context mean']:.3f}",
            "sc_short": f"{last['r2 shortcut']:.3f}",
            "sc_expl_cm": f"{100 * last['model explained by context mean']:.1f}",
            "sc_expl_both": f"{100 * last['model explained by context mean + shortcut']:.1f}",
            "sc_position": str(int(last["position"])), "left_steps": left}
