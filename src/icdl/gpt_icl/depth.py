"""ICDL objective 4 (Fig. 7, chapter ``gpt_depth``): is a deeper transformer a better in-context learner?

For each model depth of the profile (``layers``; the paper's 4, 6, 8, 10) a softmax and a ReLU transformer
are trained on targets of one depth (``target_depth``) by the schedule of :mod:`~icdl.gpt_icl.schedule` at
the main study's lengths in the reference profile (``steps``, ``warm_steps``, ``relu_steps``), on prompts
long enough for the paper's evaluation points (``train_examples``: 15, 30 and 45 examples lie inside the
training length).
Each model is scored on the pretraining mixture with ``examples`` examples before the query (the
profile's ``examples``), with bootstrap bands, beside the context mean and least squares on the same prompts.

==================  ==================================================================================
:data:`PROFILES`    ``quick`` (CI), ``reference`` (CPU), ``paper`` (Appendix F's settings)
:func:`depth_study` train or resume and score every model depth
:func:`judge`       the ledger entry of objective 4 (:func:`gains` behind it)
:func:`write`,      the result file ``depth.<profile>.json`` and back
:func:`load`
==================  ==================================================================================
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from ..repro.profiles import ProfileSet
from ..repro.results import save_profile_result
from . import baselines as bl
from .evaluation import predict, test_prompts
from .model import ATTENTIONS
from .schedule import MODEL_RANGES, MODEL_SETTINGS, train_pair
from .schedule import memory_estimate as schedule_memory
from .tasks import PRETRAINING


def memory_estimate(cfg) -> float:
    """:func:`icdl.gpt_icl.schedule.memory_estimate` for the deepest model of the study."""
    return schedule_memory(cfg, max(cfg["layers"]))


_OWN = {
    "quick": {"layers": (1, 2), "target_depth": 3, "examples": (5, 10, 15), "train_examples": 16,
              "steps": 300, "warm_steps": 150, "relu_steps": 100, "seeds": 2},
    # the main study's lengths (``objectives.PROFILES``' reference): the depths are judged on its schedule
    "reference": {"layers": (4, 6, 8, 10), "target_depth": 4, "examples": (15, 30, 45), "train_examples": 46,
                  "steps": 6500, "warm_steps": 5000, "relu_steps": 2500, "seeds": 3},
    "paper": {"layers": (4, 6, 8, 10), "target_depth": 4, "examples": (15, 30, 45), "train_examples": 51,
              "steps": 500_000, "warm_steps": 0, "relu_steps": 500_000, "seeds": 3},
}
PROFILES = ProfileSet(
    "gpt_depth",
    profiles={name: {**MODEL_SETTINGS[name], **own} for name, own in _OWN.items()},
    ranges={**MODEL_RANGES, "layers": (1, 24), "target_depth": (1, 8), "examples": (1, 199), "seeds": (1, 20)},
    command="python -m icdl.gpt_icl --profile {profile} --part depth",
    memory=memory_estimate,
)

def tag(n_layer: int) -> str:
    """What tells this study's checkpoints apart from the main study's: ``gpt_L<layers>_depth<target>_…``."""
    return f"_L{n_layer}"


@torch.no_grad()
def _scores(model, xs, ys, examples) -> list[dict]:
    pred = predict(model, xs, ys)
    r2 = bl.r2_across_prompts(pred, ys).numpy()
    lo, hi = bl.bootstrap_band(pred, ys)
    return [{"examples": p, "r2": float(r2[p]), "lo": float(lo[p]), "hi": float(hi[p])} for p in examples]


def depth_study(cfg, *, folder: Path | None = None, layers: list[int] | None = None,
                seeds: tuple[int, ...] | None = None, steps_this_call: int | None = None,
                progress: bool = True, device: str = "cpu", train_only: bool = False) -> dict | None:
    """Train (or resume) and score the models of every model depth in ``layers`` (default: the profile's) and
    every seed in ``seeds`` (default: the profile's ``seeds``, 0, 1, …).
    Returns ``{"table", "baselines", "history", "training", "complete", "seconds"}``: ``table`` and
    ``baselines`` have one row per model (or baseline), seed and number of examples before the query
    (``examples``); ``training`` each model's steps and training seconds, read from its checkpoint (summed
    over the calls that trained it)."""
    t0 = time.perf_counter()
    target, examples = cfg["target_depth"], list(cfg["examples"])
    if max(examples) >= cfg["test_examples"]:
        raise ValueError(f"examples must be < test_examples={cfg['test_examples']}, got {examples}")
    xs, ys = test_prompts(cfg, target, PRETRAINING)
    rows, hists, training, complete = [], [], [], True
    for seed in range(cfg["seeds"]) if seeds is None else seeds:
        for n_layer in layers or list(cfg["layers"]):
            pair = train_pair(cfg, target, n_layer, command=PROFILES.command_for(cfg["profile"]), folder=folder,
                              tag=tag(n_layer), steps_this_call=steps_this_call, progress=progress, device=device,
                              replicate=seed)
            complete &= pair["complete"]
            if train_only:
                continue
            for attention in ATTENTIONS:
                if attention in pair:
                    res = pair[attention]
                    key = {"n_layer": n_layer, "attention": attention, "seed": seed}
                    training.append({**key, "steps": res["steps_done"], "seconds": res["seconds"]})
                    rows += [{**key, **r} for r in _scores(res["model"], xs, ys, examples)]
                    hists.append(res["history"].assign(**key))
    if train_only:
        return None
    base = []
    for name, pred in ((bl.CONTEXT_MEAN, bl.context_mean(xs, ys)), (bl.LEAST_SQUARES, bl.least_squares(xs, ys))):
        r2 = bl.r2_across_prompts(pred, ys).numpy()
        base += [{"method": name, "examples": p, "r2": float(r2[p])} for p in examples]
    return {"table": pd.DataFrame(rows), "baselines": pd.DataFrame(base),
            "history": pd.concat(hists, ignore_index=True) if hists else pd.DataFrame(),
            "training": pd.DataFrame(training, columns=["n_layer", "attention", "seed", "steps", "seconds"]),
            "complete": complete, "seconds": time.perf_counter() - t0}


def gains(table: pd.DataFrame) -> pd.DataFrame:
    """Per attention and number of examples: R² of the shallowest and the deepest model, the gain from one to
    the other, and ``deeper_better``, whether the deepest model's R² exceeds the shallowest's."""
    rows = []
    for (attention, examples), g in table.groupby(["attention", "examples"]):
        g = g.sort_values("n_layer")
        shallow, deep = float(g["r2"].iloc[0]), float(g["r2"].iloc[-1])
        rows.append({"attention": attention, "examples": int(examples), "shallowest": shallow, "deepest": deep,
                     "gain": deep - shallow, "deeper_better": deep > shallow})
    return pd.DataFrame(rows)


def gains_shown(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`gains` as the chapter shows it, narrow enough for a phone: the signed gain right after the
    evaluation point it is at, then the two R² it is the difference of, headed by their depths."""
    g = gains(table)
    lo, hi = int(table["n_layer"].min()), int(table["n_layer"].max())
    return pd.DataFrame({"attention": g["attention"], "examples": g["examples"],
                         "gain": g["gain"].map(lambda v: f"{v:+.3f}".replace("-", "−")),
                         f"R², {lo} layers": g["shallowest"].map("{:.3f}".format),
                         f"R², {hi} layers": g["deepest"].map("{:.3f}".format)})


def judge(table: pd.DataFrame) -> list[dict]:
    """The ledger entry of objective 4 for a study's ``table``: the deepest model beats the shallowest at
    every evaluation point, for both attentions."""
    g = gains(table)
    return [{"claim": "icdl-obj4", "passed": bool(g["deeper_better"].all()), "value": float(g["gain"].min()),
             "ours": "R² gain from the shallowest to the deepest model: " + "; ".join(
                 f"{r.attention} @{r.examples}: {r.gain:+.3f}" for r in g.itertuples()),
             "criterion": "for both attentions, the deepest model's R² exceeds the shallowest's at every "
                          "evaluation point"}]


def settings_glue(cfg) -> dict[str, str]:
    """A profile's settings as the chapter's prose quotes them (thousands spaced)."""
    def spaced(n: int) -> str:
        return f"{n:,}".replace(",", " ")

    return {"depth_target": str(cfg["target_depth"]), "depth_train": str(cfg["train_examples"]),
            "depth_steps": spaced(cfg["steps"]), "depth_warm": spaced(cfg["warm_steps"]),
            "depth_relu": spaced(cfg["relu_steps"]), "depth_prompts": spaced(cfg["test_prompts"])}


FIELDS = ("table", "baselines", "history", "training", "complete", "seconds")


def write(res: dict, cfg, command: str, started: float) -> Path:
    """``results/gpt_depth/depth.<profile>.json`` from a :func:`depth_study` result."""
    return save_profile_result(PROFILES, "depth", {k: res[k] for k in FIELDS}, profile=cfg["profile"],
                               seed=cfg["seed"], started=started, command=command)


def load(raw: dict) -> dict:
    """A committed depth result (an object of :func:`icdl.repro.results.load_result`) as frames. Files
    written before the column ``examples`` was named so call it ``position`` (the same number: examples
    before the query, not the query's index as in the other studies); it is renamed here."""
    d = raw["data"]
    out = {k: pd.DataFrame(d[k]).rename(columns={"position": "examples"}) for k in FIELDS[:4]}
    return out | {"complete": bool(d["complete"]), "seconds": d["seconds"], "provenance": raw["provenance"]}
