"""The models of ICDL sec. 5 and how they are trained, shared by the studies of objectives 1–3
(:mod:`~icdl.gpt_icl.core.main_study`) and 4 (:mod:`~icdl.gpt_icl.depth`).

========================  ============================================================================
:data:`MODEL_SETTINGS`    the settings every study's profile shares, per profile (the model's size, the
                          target family, the optimiser, the test prompts, the schedule's phases)
:func:`memory_estimate`   the peak memory of a study's largest step, checked against the machine
:func:`configs`           model, task and training settings of one model (target depth, attention, layers)
:func:`train_pair`        the softmax model of a target depth, then the ReLU-attention one (and the
                          softmax model's twin of it, :data:`SOFTMAX_ON`), for one seed
:func:`load_trained`      a finished model from its checkpoint, checked to be the one the profile describes
========================  ============================================================================

The schedule (both parts found necessary at CPU scale, chapter ``gpt_icl``): the softmax model trains
``steps`` steps, the first ``warm_steps`` of them on targets of the ``warm_family`` (a **warm phase**);
with ``relu_init = "softmax"`` the ReLU-attention model then trains ``relu_steps`` steps on the target
family, starting from the finished softmax weights (a **warm start**). The ``paper`` profile has neither.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from icdl.gpt_icl.core.model import ATTENTIONS, GPTConfig, InContextGPT
from icdl.gpt_icl.core.tasks import TaskConfig
from icdl.gpt_icl.core.training import TrainConfig, continue_checkpoint, load_model, plain, train
from icdl.repro.checkpoints import CheckpointError, checkpoint_exists

#: the settings shared by the profiles of every study of ICDL sec. 5 (each study adds its own)
MODEL_SETTINGS = {
    "quick": {"d": 5, "n_head": 2, "n_embd": 32, "batch": 32, "lr": 1e-3, "target_family": "relu",
              "target_width": 0, "curriculum_interval": 0, "warm_family": "tanh", "warm_width": 100,
              "relu_init": "softmax", "test_examples": 30, "test_prompts": 256, "seed": 0},
    "reference": {"d": 5, "n_head": 2, "n_embd": 64, "batch": 32, "lr": 1e-3, "target_family": "relu",
                  "target_width": 0, "curriculum_interval": 0, "warm_family": "tanh", "warm_width": 100,
                  "relu_init": "softmax", "test_examples": 60, "test_prompts": 4096, "seed": 0},
    "paper": {"d": 20, "n_head": 8, "n_embd": 256, "batch": 64, "lr": 1e-4, "target_family": "relu",
              "target_width": 0, "curriculum_interval": 2000, "warm_family": "none", "warm_width": 100,
              "relu_init": "scratch", "test_examples": 76, "test_prompts": 6400, "seed": 0},
}
MODEL_RANGES = {"d": (2, 64), "n_head": (1, 16), "n_embd": (8, 1024), "batch": (1, 1024), "lr": (1e-6, 1e-1),
                "target_family": {"relu", "tanh"}, "target_width": (0, 4096), "curriculum_interval": (0, 10**5),
                "warm_family": {"none", "relu", "tanh"}, "warm_width": (0, 4096),
                "relu_init": {"softmax", "scratch"}, "test_examples": (2, 200), "test_prompts": (8, 10**5),
                "seed": (0, 2**31 - 1), "steps": (1, 10**6), "warm_steps": (0, 10**6), "relu_steps": (1, 10**6),
                "train_examples": (2, 200)}

#: the recipes a profile may give one attention (its setting ``<attention>_recipe``; "" keeps the profile's own
#: constant ``lr`` and ``batch``): ``cosine``, a linear warm-up then cosine decay to the last step -- the candidate of
#: the recipe scan (:data:`icdl.gpt_icl.recipes.scan.CANDIDATES`, profile ``n01``; a test checks they agree)
RECIPES = {"cosine": {"lr": 6e-4, "batch": 64, "lr_schedule": "cosine", "warmup_steps": 500, "lr_floor": 6e-5}}

#: the name, in the ``attention`` column of the curves, of the ReLU model before its own training (the
#: softmax weights run with ReLU attention)
AT_SWITCH = "relu (at switch)"

#: a model's training seed is the profile's ``seed`` plus this many times the target depth, plus
#: :data:`SEED_PER_REPLICATE` times its replicate (0, 1, … below the profile's ``seeds``)
SEED_PER_TARGET_DEPTH = 100
SEED_PER_REPLICATE = 10_000

#: the name (``attention`` column) and checkpoint stem of the softmax model trained on from its finished
#: weights for the ReLU model's steps, on the ReLU model's prompts: the ReLU model's twin, so that a difference
#: between the two is the attention's and not the training's (objective 2's length comparison)
SOFTMAX_ON, SOFTMAX_ON_STEM = "softmax (same steps)", "softmax_on"


def memory_estimate(cfg, n_layer: int, mixtures: int = 1) -> float:
    """Peak bytes of a study's largest step, estimated from its settings (float32, about 12 values per token
    and width per layer plus the attention scores): evaluating a model of ``n_layer`` layers on all test
    prompts at once (no gradients: one layer's activations live at a time), a training step (every layer's
    activations kept for the backward pass), or the test prompts of ``mixtures`` mixtures themselves; the
    largest, with half again for slack."""
    T = 2 * max(cfg["test_examples"], cfg["train_examples"])
    per_token_layer = 12 * cfg["n_embd"] + cfg["n_head"] * T
    evaluate = 4 * cfg["test_prompts"] * T * per_token_layer * 2
    train = 4 * cfg["batch"] * T * per_token_layer * n_layer * 3  # activations, gradients, optimiser traffic
    prompts = 4 * cfg["test_prompts"] * cfg["test_examples"] * (cfg["d"] + 1) * mixtures
    return 1.5 * max(evaluate, train, prompts)


def target_task(cfg, depth: int, **kw) -> TaskConfig:
    """The target family of the profile at one depth, on the profile's inputs (``centre``: ICDL's 2 where the
    profile has none; ``kw`` overrides, e.g. ``omega`` or ``mu``)."""
    return TaskConfig(d=cfg["d"], depth=depth, family=cfg["target_family"], width=cfg["target_width"],
                      centre=cfg.get("centre", 2.0), **kw)


def configs(cfg, depth: int, attention: str, n_layer: int, replicate: int = 0, *,
            continued: bool = False) -> tuple[GPTConfig, TaskConfig, TrainConfig]:
    """Model, task and training settings of the model with ``n_layer`` layers and ``attention`` trained on
    targets of ``depth`` layers, on prompts of ``train_examples`` examples, by the schedule of the module
    docstring; the model has positions for the longer of the training and the test prompts. ``replicate``
    (0, 1, …) changes the training seed only (:data:`SEED_PER_REPLICATE`); ``continued`` gives the softmax
    model's twin of the warm-started ReLU model (:data:`SOFTMAX_ON`): softmax attention, the ReLU model's
    steps, prompts and start."""
    if continued:
        if cfg["relu_init"] != "softmax":
            raise ValueError("the continued softmax model exists only where the ReLU model starts from softmax "
                             f"weights (relu_init = 'softmax'), not with relu_init = {cfg['relu_init']!r}")
        model, task, tr = configs(cfg, depth, "relu", n_layer, replicate)
        return replace(model, attention="softmax"), task, tr
    if replicate < 0:
        raise ValueError(f"replicate must be >= 0, got {replicate}")
    examples = cfg["train_examples"]
    model = GPTConfig(d=cfg["d"], n_layer=n_layer, n_head=cfg["n_head"], n_embd=cfg["n_embd"],
                      max_examples=max(cfg["test_examples"], examples), attention=attention)
    warm = cfg["warm_family"] != "none" and cfg["warm_steps"] > 0
    warm_task = TaskConfig(d=cfg["d"], depth=depth, family=cfg["warm_family"], width=cfg["warm_width"],
                           centre=cfg.get("centre", 2.0)) if warm else None
    from_softmax = attention == "relu" and cfg["relu_init"] == "softmax"
    steps = cfg["relu_steps"] if from_softmax else cfg["steps"]
    evals = cfg.get("eval_every", 0)
    # a validation curve where the profile asks for one (its evaluations every eval_every steps, logged ten times in
    # between); else the settings every earlier checkpoint was written with
    watch = ({"eval_every": evals, "eval_prompts": cfg["eval_prompts"], "eval_from": min(10, examples),
              "log_every": evals // 10} if evals else {"log_every": max(1, steps // 100)})
    tr = TrainConfig(steps=steps, batch=cfg["batch"], lr=cfg["lr"], examples=examples,
                     curriculum_interval=cfg["curriculum_interval"],
                     seed=cfg["seed"] + SEED_PER_TARGET_DEPTH * depth + SEED_PER_REPLICATE * replicate,
                     warm_steps=0 if from_softmax or not warm else cfg["warm_steps"],
                     warm_task=None if from_softmax else warm_task,
                     init_from=f"softmax model, target depth {depth}, {n_layer} layers" if from_softmax else "",
                     fast=cfg.get("fast", False), **watch)
    recipe = RECIPES[cfg[f"{attention}_recipe"]] if cfg.get(f"{attention}_recipe") else {}
    return model, target_task(cfg, depth), replace(tr, **recipe)


def checkpoint_path(folder: Path, depth: int, attention: str, tag: str = "", replicate: int = 0) -> Path:
    """Where the checkpoint of one model lives (``tag`` tells the studies' models apart, ``replicate`` the
    seeds of one model: replicate 0 keeps the name it had before there were several)."""
    stem = SOFTMAX_ON_STEM if attention == SOFTMAX_ON else attention
    seed = f"_seed{replicate}" if replicate else ""
    return Path(folder) / f"gpt{tag}{seed}_depth{depth}_{stem}.pt"


def train_pair(cfg, depth: int, n_layer: int, *, command: str, folder: Path | None = None, tag: str = "",
               steps_this_call: int | None = None, progress: bool = True, device: str = "cpu",
               replicate: int = 0, continued: bool = False, continue_from: tuple[Path, str] | None = None) -> dict:
    """The softmax and the ReLU model of one target depth and model depth, trained or resumed from
    ``folder`` (in memory without it); with ``relu_init = "softmax"`` the ReLU model starts from the finished
    softmax model, and ``switch`` is that model before any ReLU training (how much of the softmax model
    survives the switch). With ``continued`` also the softmax model's twin of the ReLU model
    (:data:`SOFTMAX_ON`). ``replicate`` picks the training seed (:func:`configs`). ``command`` rebuilds the
    checkpoints. ``continue_from`` (a folder of another profile's checkpoints and the command that made them): a
    model whose attention keeps the profile's own recipe (``<attention>_recipe`` empty, :data:`RECIPES`) and has no
    checkpoint yet starts as that profile's model continued (:func:`~icdl.gpt_icl.core.training.continue_checkpoint`:
    refused unless only the length and the validation curve differ); one with a recipe of its own starts from
    scratch. Returns ``{attention: train result}`` plus ``"switch"`` (a model or None) and ``"complete"``."""
    out, complete = {}, True
    names = ATTENTIONS + ((SOFTMAX_ON,) if continued else ())
    for attention in names:
        twin = attention == SOFTMAX_ON
        mcfg, tcfg, trcfg = configs(cfg, depth, "softmax" if twin else attention, n_layer, replicate,
                                    continued=twin)
        ckpt = None if folder is None else checkpoint_path(folder, depth, attention, tag, replicate)
        init = None
        if trcfg.init_from:
            if not complete:  # the softmax model is not finished: the models that start from it wait
                break
            init = out["softmax"]["model"].state_dict()
            switch = InContextGPT(configs(cfg, depth, "relu", n_layer, replicate)[0])
            switch.load_state_dict(init)
            out.setdefault("switch", switch.eval())
        own = bool(cfg.get(f"{'softmax' if twin else attention}_recipe"))
        if continue_from is not None and ckpt is not None and not own and not checkpoint_exists(ckpt):
            source, source_command = continue_from
            continue_checkpoint(checkpoint_path(source, depth, attention, tag, replicate), ckpt, mcfg, tcfg, trcfg,
                                command=command, source_command=source_command)
        res = train(mcfg, tcfg, trcfg, checkpoint=ckpt, max_steps_this_call=steps_this_call, progress=progress,
                    device=device, init_state=init, command=command)
        complete &= res["steps_done"] >= trcfg.steps
        out[attention] = res
    out.setdefault("switch", None)
    out["complete"] = complete and all(a in out for a in names)
    return out


def load_trained(cfg, folder: Path, depth: int, attention: str, n_layer: int, *, command: str, tag: str = "",
                 replicate: int = 0):
    """The finished model of one target depth and attention (or :data:`SOFTMAX_ON`) of one replicate from its
    checkpoint, refused (naming the file and ``command``, which rebuilds it) if the checkpoint holds another
    model than the profile describes -- a file swapped with another model's, or written with other settings --
    or is unfinished."""
    path = checkpoint_path(folder, depth, attention, tag, replicate)
    model, state = load_model(path, command=command)
    twin = attention == SOFTMAX_ON
    made = configs(cfg, depth, "softmax" if twin else attention, n_layer, replicate, continued=twin)
    expected = dict(zip(("model", "task", "train"), (c.to_dict() for c in made)))
    if plain(state["settings"]) != plain(expected):
        raise CheckpointError(f"checkpoint {path} holds another model than target depth {depth}, {attention} "
                              f"attention, {n_layer} layers, seed {replicate} of profile {cfg['profile']!r}; "
                              f"rebuild it with {command}")
    if state["step"] < expected["train"]["steps"]:
        raise CheckpointError(f"checkpoint {path} is unfinished ({state['step']} of {expected['train']['steps']} "
                              f"steps); finish it with {command}")
    return model
