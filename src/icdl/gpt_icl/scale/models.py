"""The models of the scale study (chapter ``gpt_scale``, :mod:`~icdl.gpt_icl.scale`): its profiles, the steps
at which each model is scored, and the training of one model.

A profile is the main study's (:mod:`~icdl.gpt_icl.core.main_study`) with its lengths multiplied by ``factor``: the
softmax model trains ``factor × steps`` steps (the warm phase unchanged), the ReLU model starts from the softmax
model at ``steps`` steps and trains ``factor × relu_steps``; both keep snapshots along the way.

==============================  ================================================================================
:data:`PROFILES`                ``quick``, ``reference``, ``long``, ``paper``, ``wide`` (what each is for:
                                :mod:`~icdl.gpt_icl.scale`)
:data:`COMMAND`, :data:`TAG`    the command every training job records; the tag of this study's checkpoints
:func:`snapshot_steps`          the steps at which a model is scored
:func:`long_settings`           a profile's settings with the main study's lengths multiplied by ``factor``
:func:`train_model`             train or resume one model of one target depth (resumable, one writer)
:func:`longest_trained_models`  the finished models of a profile's run, from its checkpoints
==============================  ================================================================================
"""

from __future__ import annotations

import math
from pathlib import Path

from icdl.gpt_icl.core import main_study
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.schedule import checkpoint_path, configs
from icdl.gpt_icl.core.training import load_snapshot, train
from icdl.repro.checkpoints import checkpoint_exists, load_checkpoint
from icdl.repro.profiles import ProfileSet

_OWN = {
    "quick": {"factor": 2, "per_doubling": 2, "before": 2, "resamples": 50},
    "reference": {"factor": 4, "per_doubling": 2, "before": 4, "resamples": 200},
    "long": {"factor": 64, "per_doubling": 2, "before": 4, "resamples": 200},
    "paper": {"factor": 1, "per_doubling": 1, "before": 6, "resamples": 200},
    # the reference's models at twice the width (four heads of the same size): 3.9× the parameters, 3.7× the
    # FLOPs per step, trained for the main study's steps (:func:`judge_wider`)
    "wide": {"factor": 1, "per_doubling": 2, "before": 4, "resamples": 200, "n_embd": 128, "n_head": 4},
}
_BASE = {"quick": "quick", "reference": "reference", "long": "reference", "paper": "paper", "wide": "reference"}
PROFILES = ProfileSet(
    "gpt_scale",
    profiles={name: {**main_study.PROFILES.profiles[_BASE[name]], **own} for name, own in _OWN.items()},
    ranges={**main_study.PROFILES.ranges, "factor": frozenset({1, 2, 4, 8, 16, 32, 64, 128}),
            "per_doubling": (1, 8), "before": (0, 12), "resamples": (10, 10_000)},
    command="python -m icdl.gpt_icl.scale --profile {profile} --workers 2",
    memory=main_study.memory_estimate,
)
#: what every training job of a profile records as its command (the whole run, which resumes every job)
COMMAND = "python -m icdl.gpt_icl.scale --profile {profile} --workers 2"
#: checkpoints of this study are told apart from the main study's by this tag
TAG = "_scale"


def snapshot_steps(base: int, factor: int, per_doubling: int, before: int) -> tuple[int, ...]:
    """``base · 2^(j / per_doubling)`` rounded, for ``j = −before … per_doubling · log2(factor)``: the
    steps at which a model trained ``factor × base`` steps is scored (``base`` and the end among them)."""
    if factor < 1 or factor & (factor - 1):
        raise ValueError(f"factor must be a power of two, got {factor}")
    top = per_doubling * int(math.log2(factor))
    steps = sorted({max(1, round(base * 2 ** (j / per_doubling))) for j in range(-before, top + 1)})
    return tuple(steps)


def long_settings(cfg) -> dict:
    """The profile's settings with the main study's lengths multiplied by ``factor`` (the warm phase kept)."""
    return {**cfg, "steps": cfg["factor"] * cfg["steps"], "relu_steps": cfg["factor"] * cfg["relu_steps"]}


def model_snapshots(cfg, attention: str) -> tuple[int, ...]:
    """The snapshot steps of one attention's model (counted in that model's own steps)."""
    base = cfg["relu_steps"] if attention == "relu" and cfg["relu_init"] == "softmax" else cfg["steps"]
    return snapshot_steps(base, cfg["factor"], cfg["per_doubling"], cfg["before"])


def folder(profile: str) -> Path:
    """Where the checkpoints and snapshots of a profile live (``results/gpt_scale/checkpoints/<profile>``)."""
    return PROFILES.folder("checkpoints", profile)


def _start_of_relu(cfg, depth: int, where: Path | None, memory: dict) -> dict:
    """The weights the ReLU model starts from: the softmax model at the main study's length."""
    if where is None:
        return memory[(depth, "softmax")]["snapshots"][cfg["steps"]]
    ckpt = checkpoint_path(where, depth, "softmax", TAG)
    _, state = load_snapshot(ckpt, cfg["steps"], command=COMMAND.format(profile=cfg["profile"]))
    return state["model"]


def train_model(cfg, depth: int, attention: str, *, where: Path | None = None, until: int | None = None,
                progress: bool = True, device: str = "cpu", memory: dict | None = None) -> dict:
    """Train or resume one model of the study (``until``: stop after that many of its steps this call). The
    ReLU model needs the softmax model's snapshot at the main study's length. ``memory`` (without ``where``)
    holds the models trained in this process, by ``(depth, attention)``."""
    long = long_settings(cfg)
    mcfg, tcfg, trcfg = configs(long, depth, attention, long["n_layer"])
    init = _start_of_relu(cfg, depth, where, memory or {}) if trcfg.init_from else None
    ckpt = None if where is None else checkpoint_path(where, depth, attention, TAG)
    limit = None if until is None else max(0, until - _steps_done(ckpt))
    return train(mcfg, tcfg, trcfg, checkpoint=ckpt, max_steps_this_call=limit, progress=progress, device=device,
                 init_state=init, command=COMMAND.format(profile=cfg["profile"]),
                 snapshots=model_snapshots(cfg, attention))


def longest_trained_models(cfg) -> dict:
    """The finished models of a profile's run, from its checkpoints: ``{(depth, attention): model}`` after
    ``factor`` times the main study's training, each checked to be the model the profile describes
    (:func:`icdl.gpt_icl.core.schedule.load_trained`)."""
    from icdl.gpt_icl.core.schedule import load_trained

    long = long_settings(cfg)
    return {(depth, att): load_trained(long, folder(cfg["profile"]), depth, att, cfg["n_layer"],
                                       command=COMMAND.format(profile=cfg["profile"]), tag=TAG)
            for depth in cfg["depths"] for att in ATTENTIONS}


def _steps_done(ckpt: Path | None) -> int:
    if ckpt is None or not checkpoint_exists(ckpt):
        return 0
    return int(load_checkpoint(ckpt, kind="gpt_icl")["step"])
