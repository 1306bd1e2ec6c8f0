"""The main study of ICDL sec. 5 (chapter ``gpt_icl``, and the models every other question reads): for every
target depth (3, 4, 6 layers), attention (softmax, ReLU) and seed one model is trained
(:mod:`~icdl.gpt_icl.core.schedule`), then scored (:mod:`~icdl.gpt_icl.core.evaluation`) on prompts longer
than in training, with inputs from the four mixtures of ICDL Figs. 2–4 and with shifted target parameters,
beside the baselines on the same prompts. Objectives 1–3 are judged on it by :mod:`icdl.gpt_icl.core.main_study`;
the scale and mechanism questions read its models.

==========================  ==============================================================================
:data:`PROFILES`            ``quick`` (CI), ``reference`` (CPU: ``python -m icdl.gpt_icl --profile
                            reference``), ``paper`` (Appendix F's settings, a command for a GPU), ``n01``
                            (the reference with x ~ N(0, I): :mod:`~icdl.gpt_icl.objectives.n01`)
:data:`CRITERIA`            objectives 1–3's thresholds, fixed before the reference run that judges them
:func:`run`                 train or resume every model, evaluate it, compute the baselines
:func:`param_shift`         the models and baselines on shifted target parameters (objective 3)
:func:`reference_models`    the trained models of a profile, loaded from their checkpoints
:func:`write`, :func:`load` the result files ``icl.<profile>.json`` and ``shift.<profile>.json`` and back
==========================  ==============================================================================
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core import mlp_blocks
from icdl.gpt_icl.core.evaluation import (
    block_rows,
    cached_baselines,
    evaluate,
    evaluate_param_shift,
    judged_sets,
    label_rows,
    predict,
    set_prompts,
)
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.schedule import (
    AT_SWITCH,
    MODEL_RANGES,
    MODEL_SETTINGS,
    RECIPES,
    SOFTMAX_ON,
    checkpoint_path,
    load_trained,
    train_pair,
)
from icdl.gpt_icl.core.schedule import memory_estimate as schedule_memory
from icdl.gpt_icl.core.tasks import MIXTURES
from icdl.repro.checkpoints import load_checkpoint
from icdl.repro.profiles import ProfileSet
from icdl.repro.results import save_profile_result


def memory_estimate(cfg) -> float:
    """:func:`icdl.gpt_icl.core.schedule.memory_estimate` for the study's models and its four mixtures."""
    return schedule_memory(cfg, cfg["n_layer"], len(MIXTURES))


_OWN = {
    "quick": {"depths": (3, 6), "n_layer": 2, "steps": 300, "train_examples": 20, "warm_steps": 150,
              "relu_steps": 100, "mlp_prompts": 256, "mlp_width": 32, "mlp_epochs": 30,
              "mlp_positions": (2, 5, 10, 19), "seeds": 2, "fast": False},
    "reference": {"depths": (3, 4, 6), "n_layer": 3, "steps": 6500, "train_examples": 40, "warm_steps": 5000,
                  "relu_steps": 2500, "mlp_prompts": 512, "mlp_width": 200, "mlp_epochs": 100,
                  "mlp_positions": (5, 20, 39), "seeds": 3, "fast": False},
    "paper": {"depths": (3, 4, 6), "n_layer": 12, "steps": 500_000, "train_examples": 51, "warm_steps": 0,
              "relu_steps": 500_000, "mlp_prompts": 6400, "mlp_width": 200, "mlp_epochs": 100,
              "mlp_positions": tuple(range(1, 76)), "seeds": 3, "fast": False},
}
#: profile ``n01``'s schedule: the one the scan of :mod:`icdl.gpt_icl.schedules` (profile ``n01``, committed as
#: ``results/gpt_n01/scan.n01.json``) fits to the task x ~ N(0, I) on its validation prompts -- Adam at ``lr``,
#: batch ``batch``, ``steps`` steps on the target family from scratch (no warm phase) -- given to both attentions,
#: each trained from scratch (the scan fits the softmax model; ReLU attention gets the same schedule, not a warm
#: start); ``fast``: the compiled step, the same update up to rounding. ``tests/test_gpt_schedules.py`` checks that
#: these are the scan's choice.
N01_FITTED = {"lr": 1e-4, "batch": 64, "steps": 9500}
#: profile ``fitted``'s schedule: the same scan's choice on ICDL's own task (profile ``icdl`` of the scan, committed
#: as ``results/gpt_n01/scan.icdl.json``), under which the main study's questions are asked again (issue 57: a
#: verdict on models the reference's schedule left under-trained is the schedule's verdict). Like ``n01``: both
#: attentions from scratch at this schedule, no warm phase, no warm start, the compiled step
FITTED = {"lr": 1e-4, "batch": 64, "steps": 10000}
#: the inputs' centre c of every profile (x ~ N(−c, I) in training, ICDL's c = 2); profile ``n01`` is the
#: reference's models, test prompts and seeds with x ~ N(0, I) in training and test, where the targets are far from
#: linear (icdl.gpt_icl.objectives.n01), at the schedule fitted to that task (:data:`N01_FITTED`)
_CENTRE = {"quick": 2.0, "reference": 2.0, "paper": 2.0, "n01": 0.0, "fitted": 2.0, "n01-flat": 0.0}
_MODEL = dict(MODEL_SETTINGS)
for _name, _fit in (("n01", N01_FITTED), ("fitted", FITTED)):
    _OWN[_name] = {**_OWN["reference"], "steps": _fit["steps"], "warm_steps": 0, "relu_steps": _fit["steps"],
                   "fast": True}
    _MODEL[_name] = {**MODEL_SETTINGS["reference"], "batch": _fit["batch"], "lr": _fit["lr"], "warm_family": "none",
                     "relu_init": "scratch"}
#: what a profile measures while it trains and how it starts (every profile names them; these are the values of the
#: profiles that do neither): ``eval_every``/``eval_prompts`` a validation curve (0: none), ``continues`` the profile
#: whose models it trains on (schedule.train_pair), ``<attention>_recipe`` a recipe of its own for one attention
#: (schedule.RECIPES; "" the profile's lr and batch), ``shift_mlp_prompts``/``curve_mlp_prompts`` the MLP's prompts on
#: shifted targets and for the figures' curves where they differ from the judged ``mlp_prompts``
_PLAIN = {"eval_every": 0, "eval_prompts": 512, "continues": "", "softmax_recipe": "", "relu_recipe": ""}
for _name, _own in _OWN.items():
    _own.update(_PLAIN, shift_mlp_prompts=_own["mlp_prompts"], curve_mlp_prompts=_own["mlp_prompts"])
#: profile ``n01-flat`` (issue 67, registered with its claims before its run: icdl.gpt_icl.objectives.flat.DESIGN):
#: profile n01's models trained on to the recipe scan's horizon at the recipe that scan chooses per attention -- a
#: model whose attention keeps n01's recipe continues its committed checkpoint, exactly -- with a validation curve,
#: and the judged MLP on every test prompt of the pretraining mixture (512 on shifted targets and for the curves)
N01_FLAT = {"steps": 14_000, "eval_every": 500, "eval_prompts": 2048, "mlp_prompts": 4096, "shift_mlp_prompts": 512,
            "curve_mlp_prompts": 512, "continues": "n01", "softmax_recipe": "", "relu_recipe": ""}
_OWN["n01-flat"] = {**_OWN["n01"], **N01_FLAT, "relu_steps": N01_FLAT["steps"]}
_MODEL["n01-flat"] = _MODEL["n01"]
PROFILES = ProfileSet(
    "gpt_icl",
    profiles={name: {**_MODEL[name], **own, "centre": _CENTRE[name]} for name, own in _OWN.items()},
    ranges={**MODEL_RANGES, "depths": (1, 8), "n_layer": (1, 24), "mlp_prompts": (8, 10**5),
            "mlp_width": (4, 1024), "mlp_epochs": (1, 1000), "mlp_positions": (1, 199), "seeds": (1, 20),
            "centre": (0.0, 10.0), "fast": {False, True}, "eval_every": (0, 10**5), "eval_prompts": (8, 10**5),
            "continues": {"", "n01"}, "softmax_recipe": {"", *RECIPES}, "relu_recipe": {"", *RECIPES},
            "shift_mlp_prompts": (8, 10**5), "curve_mlp_prompts": (8, 10**5)},
    command="python -m icdl.gpt_icl --profile {profile} --part main --part shift",
    memory=memory_estimate,
    command_only=("n01", "fitted", "n01-flat"),
)
#: the command that trains the main models and fills the MLP cache (recorded beside both)
MAIN_COMMAND = "python -m icdl.gpt_icl --profile {profile} --part main"
#: the command that scores the models on shifted targets (and keeps the MLP's block errors there, where a profile
#: keeps its checkpoints)
SHIFT_COMMAND = "python -m icdl.gpt_icl --profile {profile} --part shift"

#: the thresholds of the chapter's claims, fixed before the reference run that judges them (the comparisons
#: are in :func:`icdl.gpt_icl.core.verdicts.judge`): objective 1 -- the transformer's R² is at least the MLP's
#: minus ``obj1_tolerance`` at every MLP position up to the training length, pretraining mixture, every target
#: depth and attention; objective 2 -- R² at the training length falls strictly over the mixtures in the
#: order of MIXTURES, and softmax's mean drop past the training length exceeds ReLU's at every depth;
#: objective 3 -- R² at the training length drops by at most ``obj3_max_drop`` when μ moves to ±0.5. Whether
#: the models learned the task at all is the learning gate's (its margin, fixed here before that run as the
#: off-plateau margin, now lives in the registry: :data:`icdl.repro.claims.base.LEARNED`)
CRITERIA = {"obj1_tolerance": 0.05, "obj3_max_drop": 0.1}

#: result files (``results/gpt_icl/<stem>.<profile>.json``) and the schema of their data
RESULTS = {"icl": ("curves", "history", "baselines", "blocks", "labels", "models", "complete", "seconds"),
           "shift": ("curves", "baselines", "blocks", "labels", "complete")}


#: the models of every target depth and seed: the two attentions and the softmax model's twin of the ReLU model
MODELS = ATTENTIONS + (SOFTMAX_ON,)


def run(cfg, *, folder: Path | None = None, steps_this_call: int | None = None, progress: bool = True,
        device: str = "cpu", train_only: bool = False, seeds: tuple[int, ...] | None = None) -> dict | None:
    """Train (or resume) every model of the profile -- each target depth, each of the profile's ``seeds``
    (or only ``seeds``, to spread the training over processes), the models of :data:`MODELS` -- evaluate it,
    and compute the baselines on the same prompts.

    With ``folder`` the checkpoints live there and training resumes; without it (the quick profile) the
    models are trained in memory. Returns ``{"curves", "baselines", "history", "blocks", "labels", "models",
    "complete", "seconds", "trained"}``: ``curves`` per seed (the attention :data:`AT_SWITCH` for the ReLU
    model before its own training), ``blocks`` and ``labels`` the sums per block of prompts of every judged
    set (:func:`~icdl.gpt_icl.core.evaluation.judged_sets`, the intervals' input), ``models`` what each trained
    model is (its seed and steps, and its checkpoint's sha256), ``trained`` the models themselves.
    ``train_only`` (a subset of seeds, or the other ranks of a data-parallel run) trains and returns None."""
    t0 = time.perf_counter()
    curves, hists, base, blocks, labels, records, trained = [], [], [], [], [], [], {}
    complete, continued = True, cfg["relu_init"] == "softmax"
    command = MAIN_COMMAND.format(profile=cfg["profile"])
    continue_from = None  # a profile that continues another's models (schedule.train_pair)
    if cfg.get("continues") and folder is not None:
        source = cfg["continues"]
        continue_from = (PROFILES.folder("checkpoints", source), MAIN_COMMAND.format(profile=source))
    for depth in cfg["depths"]:
        prompts = None if train_only else {name: (spec, *set_prompts(cfg, depth, spec))
                                           for name, spec in judged_sets(cfg).items()}
        depth_complete = True
        for seed in range(cfg["seeds"]) if seeds is None else seeds:
            pair = train_pair(cfg, depth, cfg["n_layer"], command=command, folder=folder, replicate=seed,
                              continued=continued, steps_this_call=steps_this_call, progress=progress, device=device,
                              continue_from=continue_from)
            depth_complete &= pair["complete"]
            if train_only:
                continue
            for attention in (a for a in MODELS if a in pair):
                res, keys = pair[attention], {"depth": depth, "attention": attention, "seed": seed}
                trained[(depth, attention, seed)] = model = res["model"]
                records.append(keys | {"steps": res["steps_done"], "sha256": _sha(folder, depth, attention, seed)})
                hists.append(res["history"].assign(**keys))
                curves.append(evaluate(model, cfg, depth).assign(**keys, steps=res["steps_done"]))
                blocks += block_rows(lambda xs, ys, m=model: predict(m, xs, ys), prompts,
                                     depth=depth, model=attention, seed=seed)
            if pair["switch"] is not None:
                curves.append(evaluate(pair["switch"], cfg, depth).assign(depth=depth, attention=AT_SWITCH,
                                                                           seed=seed, steps=0))
        complete &= depth_complete
        if depth_complete and not train_only:
            base.append(cached_baselines(cfg, depth, folder, progress, command=command).assign(depth=depth))
            labels += label_rows(depth, prompts)
            blocks += _baseline_blocks(cfg, depth, prompts, progress, folder, command)
    if train_only:
        return None
    return {"curves": _frame(curves), "history": _frame(hists), "baselines": _frame(base),
            "blocks": blocks, "labels": labels, "models": records, "complete": complete,
            "seconds": time.perf_counter() - t0, "trained": trained}


def _frame(parts: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _sha(folder: Path | None, depth: int, attention: str, seed: int) -> str:
    """The sha256 of a model's checkpoint (from its record), or "" for a model trained in memory."""
    if folder is None:
        return ""
    from icdl.repro.checkpoints import checkpoint_record
    from icdl.repro.results import load_result

    return load_result(checkpoint_record(checkpoint_path(folder, depth, attention, replicate=seed)))["data"]["sha256"]


def _baseline_blocks(cfg, depth: int, prompts: dict, progress: bool, folder: Path | None = None,
                     command: str = "") -> list[dict]:
    """The squared error per block of the baselines on the judged sets: context mean and least squares on
    every set, the MLP on the paired ones (:func:`icdl.gpt_icl.core.mlp_blocks.rows`, its block errors kept in
    ``folder`` where given; its R² per position rides along in the rows' ``r2``)."""
    rows = []
    for name, method in ((bl.CONTEXT_MEAN, bl.context_mean), (bl.LEAST_SQUARES, bl.least_squares)):
        rows += block_rows(method, prompts, depth=depth, model=name, seed=-1)
    mlp_curves, mlp_rows = mlp_blocks.rows(cfg, depth, prompts, folder=folder, command=command, progress=progress)
    r2 = {(c["set"], c["position"]): c["r2"] for c in mlp_curves}
    return rows + [b | {"r2": r2[(b["set"], b["position"])]} for b in mlp_rows]


def models_words(cfg) -> str:
    """A profile's models as the chapters name them (``cfg``, resolved): "18 models (target depths 3, 4, 6, both
    attentions, 3 seeds)"."""
    models = len(cfg["depths"]) * len(ATTENTIONS) * cfg["seeds"]
    return (f"{models} models (target depths {', '.join(map(str, cfg['depths']))}, both attentions, {cfg['seeds']} "
            "seeds)")


def reference_models(cfg, *, seeds: tuple[int, ...] | None = None, names: tuple[str, ...] | None = None) -> dict:
    """The trained models of a long run, from its checkpoints: ``{(depth, attention, seed): model}`` for every
    model of :data:`MODELS` (or ``names``) and seed (or ``seeds``), each checked to be the finished model the
    profile describes (:func:`icdl.gpt_icl.core.schedule.load_trained`)."""
    folder = PROFILES.folder("checkpoints", cfg["profile"])
    names = names or (MODELS if cfg["relu_init"] == "softmax" else ATTENTIONS)
    seeds = range(cfg["seeds"]) if seeds is None else seeds
    return {(depth, att, seed): load_trained(cfg, folder, depth, att, cfg["n_layer"], replicate=seed,
                                             command=MAIN_COMMAND.format(profile=cfg["profile"]))
            for depth in cfg["depths"] for att in names for seed in seeds}


def training_seconds(cfg, seed: int = 0) -> pd.DataFrame:
    """The recorded training time of one seed's softmax and ReLU models (from their checkpoints: the seconds
    each run trained), one row per target depth and attention -- what one more seed costs."""
    folder = PROFILES.folder("checkpoints", cfg["profile"])
    rows = []
    for depth in cfg["depths"]:
        for att in ATTENTIONS:
            state = load_checkpoint(checkpoint_path(folder, depth, att, replicate=seed),
                                    command=MAIN_COMMAND.format(profile=cfg["profile"]), kind="gpt_icl")
            rows.append({"depth": depth, "attention": att, "steps": state["step"], "seconds": state["seconds"]})
    return pd.DataFrame(rows)


def first_seed_models(cfg) -> dict:
    """``{(depth, attention): model}``: the two attentions' models of seed 0 (the studies that read one model
    per depth and attention: the mechanism study)."""
    return {(d, a): m for (d, a, _), m in reference_models(cfg, seeds=(0,), names=ATTENTIONS).items()}


def param_shift(models: dict, cfg, *, progress: bool = False, folder: Path | None = None) -> dict:
    """Objective 3 for every model ``{(depth, attention, seed): model}``: R² per position on the shifted
    targets (:func:`~icdl.gpt_icl.core.evaluation.evaluate_param_shift`, ``curves``), the sums per block of the
    judged shifted sets for the models and the baselines (``blocks``, ``labels``; the MLP on the paired sets, its
    block errors kept in ``folder`` where given), the baselines' R² there (``baselines``)."""
    curves, blocks, labels, base = [], [], [], []
    for depth in sorted({k[0] for k in models}):
        prompts = {name: (spec, *set_prompts(cfg, depth, spec)) for name, spec in judged_sets(cfg, shift=True).items()}
        for (d, attention, seed), model in models.items():  # in the order given (the run's: softmax first)
            if d != depth:
                continue
            keys = {"depth": depth, "attention": attention, "seed": seed}
            curves.append(evaluate_param_shift(model, cfg, depth).assign(**keys))
            blocks += block_rows(lambda xs, ys, m=model: predict(m, xs, ys), prompts, depth=depth, model=attention,
                                 seed=seed)
        labels += label_rows(depth, prompts)
        base_blocks = _baseline_blocks(cfg, depth, prompts, progress, folder,
                                       SHIFT_COMMAND.format(profile=cfg["profile"]))
        blocks += base_blocks
        base += [{"depth": depth, "set": b["set"], "method": b["model"], "position": b["position"],
                  "r2": b["r2"]} for b in base_blocks if "r2" in b]
    return {"curves": _frame(curves), "blocks": blocks, "labels": labels,
            "baselines": pd.DataFrame(base, columns=["depth", "set", "method", "position", "r2"])}


def mean_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """The curves of :func:`run` (one per seed) as one per model: ``r2`` the mean over seeds, ``lo`` and
    ``hi`` the lowest and highest seed (the seeds' spread, which the figures draw as a band)."""
    if "seed" not in curves:
        return curves
    keys = [c for c in ("depth", "attention", "mixture", "mu", "position") if c in curves]
    g = curves.groupby(keys, sort=False)
    out = g.agg(r2=("r2", "mean"), lo=("r2", "min"), hi=("r2", "max"), seeds=("seed", "nunique")).reset_index()
    return out.assign(steps=g["steps"].first().to_numpy()) if "steps" in curves else out


# ---- the result files --------------------------------------------------------------------------------


def write(stem: str, data: dict, cfg, command: str, started: float) -> Path:
    """Write ``results/gpt_icl/<stem>.<profile>.json`` (``stem`` a key of :data:`RESULTS`, ``data`` its
    fields, frames as columns) with the provenance of ``command``, which began at ``started``."""
    fields = RESULTS[stem]
    if set(data) != set(fields):
        raise ValueError(f"{stem} result needs exactly the fields {fields}, got {sorted(data)}")
    return save_profile_result(PROFILES, stem, data, profile=cfg["profile"], seed=cfg["seed"], started=started,
                               command=command)


def load(raw_icl: dict, raw_shift: dict) -> dict:
    """The committed results (the objects of :func:`icdl.repro.results.load_result` of ``icl`` and ``shift``)
    as one result: ``curves`` and ``shift`` the mean over seeds (:func:`mean_curves`), ``seed_curves`` and
    ``seed_shift`` per seed, ``baselines``, ``shift_baselines``, ``history``, ``models``, the sums per block
    (``sums``, ``shift_sums``: what the verdicts are computed from), ``complete`` (both files) and
    ``provenance``."""
    d, s = raw_icl["data"], raw_shift["data"]
    return from_run(d, s) | {"complete": bool(d["complete"] and s["complete"]), "seconds": d["seconds"],
                             "provenance": raw_icl["provenance"]}


def from_run(icl: dict, shift: dict) -> dict:
    """:func:`load`'s result from the fields of a run (:func:`run` and :func:`param_shift`, or their files)."""
    curves, shifted = pd.DataFrame(icl["curves"]), pd.DataFrame(shift["curves"])
    return {"curves": mean_curves(curves), "seed_curves": curves, "shift": mean_curves(shifted),
            "seed_shift": shifted, "baselines": pd.DataFrame(icl["baselines"]),
            "shift_baselines": pd.DataFrame(shift["baselines"]), "history": pd.DataFrame(icl["history"]),
            "models": pd.DataFrame(icl["models"]),
            "sums": {"blocks": icl["blocks"], "labels": icl["labels"]},
            "shift_sums": {"blocks": shift["blocks"], "labels": shift["labels"]}}


def learning_gate(profile: str = "reference", data: dict | None = None) -> dict:
    """The learning gate (:func:`icdl.gpt_icl.core.learning.gate`) of the committed models of ``profile``: every
    model's lead over the context mean at the training length, from the sums of ``data`` (default: the data of
    ``results/gpt_icl/icl.<profile>.json``) -- for the studies that measure the main study's models again, e.g.
    the mechanism's."""
    from icdl.gpt_icl.core.learning import gate
    from icdl.gpt_icl.core.verdicts import Sums, context_mean_leads
    from icdl.repro.results import load_result

    if data is None:
        data = load_result(PROFILES.folder() / f"icl.{profile}.json", profile=profile)["data"]
    return gate(context_mean_leads(Sums(data["blocks"], data["labels"]), PROFILES.resolve(profile)["train_examples"]))
