"""Training an :class:`~icdl.gpt_icl.core.model.InContextGPT` on fresh prompts, with checkpoints that resume exactly.
Chapter ``gpt_icl`` trains every model through it.

Every step draws a batch of new target networks and inputs (:mod:`icdl.gpt_icl.core.tasks`) from one seeded
generator, so a run is a pure function of its settings. The checkpoint holds the model, the optimiser,
the generator state and the loss history; a run stopped after any step and resumed ends with the same
weights as an uninterrupted one (tested). Optional curriculum as in Garg et al. (2022): the prompt
starts short and low-dimensional (unused input coordinates are zero) and grows by ``curriculum_points``
examples and one dimension every ``curriculum_interval`` steps (0 switches it off).

Two schedules of the task, both found necessary at CPU scale (chapter ``gpt_icl``): a **warm phase** --
the first ``warm_steps`` steps draw targets from ``warm_task`` (e.g. tanh networks) instead of the
target family -- and a **warm start** -- the model starts from given weights (``init_state``, e.g. the
softmax model of the same size when training ReLU attention). With ``eval_every`` the history also
records, on a fixed set of validation prompts of the target task, the mean R² over positions
``eval_from`` … ``examples`` of the model and of the context mean: how far above the plateau it is; whether that
curve was flat at its end is :mod:`icdl.gpt_icl.core.curves`' rule.

**Snapshots** (``train(snapshots=…)``, the scale study of chapter ``gpt_scale``): the model's weights at given
steps, kept beside the checkpoint (:func:`snapshot_path`) or, without one, in the result. They do not change
the training: a run with snapshots ends with the weights of one without.

Data-parallel training: inside a ``torch.distributed`` process group (``torchrun``; gloo on CPUs, nccl on
GPUs) every rank draws the same global batch from the same generator and trains on its share; DDP averages
the gradients, so the steps are those of one process with the whole batch (up to the order of the sums).
Only rank 0 writes checkpoints, and a checkpoint does not depend on the number of processes: a run can
resume with another one.
"""

from __future__ import annotations

import math
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
import torch
from torch import Tensor
from tqdm import tqdm

from icdl.gpt_icl.core.baselines import context_mean, r2_across_prompts
from icdl.gpt_icl.core.model import GPTConfig, InContextGPT
from icdl.gpt_icl.core.tasks import TaskConfig, sample_prompts
from icdl.repro.checkpoints import CheckpointError, checkpoint_exists, load_checkpoint, save_checkpoint
from icdl.repro.files import one_writer

#: the seeds of a run, from ``TrainConfig.seed``: the model's initial weights use the seed itself, the
#: stream of training prompts ``seed + SEEDS["prompts"]``, the fixed validation prompts ``seed + SEEDS["validation"]``
SEEDS = {"prompts": 1, "validation": 777}


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 1000
    batch: int = 64
    lr: float = 1e-4
    examples: int = 50          # (x, y) pairs per training prompt, the query included
    curriculum_interval: int = 0
    curriculum_points: int = 2
    curriculum_start_points: int = 11
    curriculum_start_dims: int = 5
    seed: int = 0
    log_every: int = 50
    warm_steps: int = 0                 # the first warm_steps steps draw targets from warm_task
    warm_task: TaskConfig | None = None
    init_from: str = ""                 # a description of the initial weights given to train(init_state=…)
    eval_every: int = 0                 # R² on validation prompts every eval_every steps (0: never)
    eval_prompts: int = 512
    eval_from: int = 10
    fast: bool = False                  # the compiled step (see compiled_step); not stored when False
    lr_schedule: str = "constant"       # "constant", or "cosine": linear warm-up, then cosine decay (lr_at)
    warmup_steps: int = 0               # the cosine schedule's warm-up (steps from lr/warmup_steps to lr)
    lr_floor: float = 0.0               # the cosine schedule's learning rate at the last step

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "examples", "log_every", "eval_prompts", "eval_from"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if not 0 <= self.warm_steps <= self.steps:
            raise ValueError(f"warm_steps must lie in 0..steps={self.steps}, got {self.warm_steps}")
        if self.warm_steps and self.warm_task is None:
            raise ValueError("warm_steps > 0 needs a warm_task")
        if self.eval_every < 0 or (self.eval_every and self.eval_every % self.log_every):
            raise ValueError(f"eval_every must be 0 or a multiple of log_every={self.log_every}, "
                             f"got {self.eval_every}")
        if self.lr_schedule not in ("constant", "cosine"):
            raise ValueError(f"lr_schedule must be 'constant' or 'cosine', got {self.lr_schedule!r}")
        if self.lr_schedule == "constant" and (self.warmup_steps or self.lr_floor):
            raise ValueError("warmup_steps and lr_floor belong to the cosine schedule (lr_schedule='cosine')")
        if not 0 <= self.warmup_steps < self.steps:
            raise ValueError(f"warmup_steps must lie in 0..steps-1={self.steps - 1}, got {self.warmup_steps}")
        if not 0 <= self.lr_floor <= self.lr:
            raise ValueError(f"lr_floor must lie in 0..lr={self.lr:g}, got {self.lr_floor:g}")

    def to_dict(self) -> dict:
        """The settings as stored in checkpoints; ``fast`` only where set (so that checkpoints written before
        it existed, all with the plain step, still match their settings)."""
        out = asdict(self)
        if not out["fast"]:
            del out["fast"]
        if self.lr_schedule == "constant":  # likewise the schedule: checkpoints from before it keep matching
            for key in ("lr_schedule", "warmup_steps", "lr_floor"):
                del out[key]
        if self.warm_task is not None:  # the task's own form (its defaults left out as it leaves them)
            out["warm_task"] = self.warm_task.to_dict()
        return out


def lr_at(cfg: TrainConfig, step: int) -> float:
    """The learning rate of the update that ends step ``step + 1`` (``step`` counts the steps done): ``cfg.lr``
    throughout with the constant schedule; with ``cosine`` a linear warm-up, ``lr · (step + 1)/warmup_steps`` over
    the first ``warmup_steps``, then a half cosine from ``lr`` down to ``lr_floor`` at the last step -- the schedule
    of nanoGPT and most current training code. A function of the step alone, so a resumed run needs no scheduler
    state."""
    if cfg.lr_schedule == "constant":
        return cfg.lr
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    span = max(cfg.steps - 1 - cfg.warmup_steps, 1)
    progress = min((step - cfg.warmup_steps) / span, 1.0)
    return cfg.lr_floor + (cfg.lr - cfg.lr_floor) * 0.5 * (1 + math.cos(math.pi * progress))


def optimiser(model: InContextGPT, lr: float, fast: bool) -> torch.optim.Optimizer:
    """Adam over the model's parameters: torch's default (multi-tensor) update, or with ``fast`` the fused one
    (one kernel for every tensor; the same update up to rounding)."""
    if fast:
        return torch.optim.Adam(model.parameters(), lr=lr, fused=True)
    return torch.optim.Adam(model.parameters(), lr=lr)


def compiled_step(model: torch.nn.Module, fast: bool):
    """The forward pass of a training step: the model itself, or with ``fast`` the model through
    ``torch.compile`` (fixed shapes: one graph per prompt length). The same function up to rounding; falls
    back to the plain model, with a warning, where compiling fails (no C++ compiler)."""
    if not fast:
        return model
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.compile(model, dynamic=False)
    except Exception as err:  # pragma: no cover - a platform without a compiler
        warnings.warn(f"torch.compile failed ({err}); training with the plain step", stacklevel=2)
        return model


def curriculum(cfg: TrainConfig, d: int, step: int) -> tuple[int, int]:
    """(examples, dims) used at ``step``."""
    if cfg.curriculum_interval <= 0:
        return cfg.examples, d
    stage = step // cfg.curriculum_interval
    return (min(cfg.examples, cfg.curriculum_start_points + cfg.curriculum_points * stage),
            min(d, cfg.curriculum_start_dims + stage))


def _batch(task: TaskConfig, cfg: TrainConfig, step: int, g: torch.Generator, device):
    k, dims = curriculum(cfg, task.d, step)
    source = cfg.warm_task if step < cfg.warm_steps else task
    xs, ys = sample_prompts(source, cfg.batch, k, g, dims=dims)
    return xs.to(device), ys.to(device), k, dims


def validation_prompts(task: TaskConfig, cfg: TrainConfig) -> tuple[Tensor, Tensor]:
    """The fixed prompts on which :func:`train` tracks R² (target task, a seed of their own)."""
    g = torch.Generator().manual_seed(SEEDS["validation"] + cfg.seed)
    return sample_prompts(task, cfg.eval_prompts, cfg.examples, g)


@torch.no_grad()
def excess_r2(model: InContextGPT, xs: Tensor, ys: Tensor, first: int) -> tuple[float, float]:
    """Mean R² across prompts over positions ``first`` … k of the model, and of the context mean."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    pred = model(xs.to(device), ys.to(device)).cpu()
    model.train(was_training)
    sl = slice(first - 1, None)
    return (float(r2_across_prompts(pred, ys)[sl].mean()),
            float(r2_across_prompts(context_mean(xs, ys), ys)[sl].mean()))


def snapshot_path(checkpoint: Path, step: int) -> Path:
    """Where :func:`train` keeps the weights of the run of ``checkpoint`` after ``step`` steps."""
    checkpoint = Path(checkpoint)
    return checkpoint.with_name(f"{checkpoint.stem}.step{step}{checkpoint.suffix}")


def load_snapshot(checkpoint: Path, step: int, *, command: str = "") -> tuple[InContextGPT, dict]:
    """The model of the run of ``checkpoint`` after ``step`` steps (a snapshot written by :func:`train`) and
    its settings; refused with one line naming the file and ``command`` (which rebuilds it) if it is missing,
    damaged, or holds another step."""
    path = snapshot_path(checkpoint, step)
    if not checkpoint_exists(path):
        raise CheckpointError(f"no snapshot at {path} (step {step}); rebuild it with "
                              f"{command or 'its training command'}")
    state = load_checkpoint(path, command=command, kind="gpt_icl")
    if state.get("step") != step:
        raise CheckpointError(f"snapshot {path} holds step {state.get('step')}, not {step}; rebuild it with "
                              f"{command or 'its training command'}")
    model = InContextGPT(GPTConfig(**state["settings"]["model"]))
    model.load_state_dict(state["model"])
    return model.eval(), state


def train(model_cfg: GPTConfig, task: TaskConfig, cfg: TrainConfig, *, checkpoint: Path | None = None,
          checkpoint_every: int = 500, max_steps_this_call: int | None = None, device: str = "cpu",
          progress: bool = True, init_state: dict | None = None, command: str = "",
          snapshots: tuple[int, ...] = ()) -> dict:
    """Train; returns ``{"model", "history" (step, loss, …), "steps_done", "seconds"}``. With ``checkpoint``
    an existing file is resumed (its settings must match) and the state is saved atomically every
    ``checkpoint_every`` steps and at the end of the call. ``init_state`` (a state dict of a model of the
    same shape) replaces the initial weights; ``cfg.init_from`` must then say where they come from.
    ``command`` (the command that rebuilds the checkpoint) goes into the checkpoint's record. A checkpoint
    has one writer at a time (:func:`icdl.repro.files.one_writer`): a second run of the same model is
    refused at once, naming the first. ``snapshots``: steps after which the weights are kept
    (:func:`snapshot_path` beside the checkpoint; without a checkpoint in the result's ``"snapshots"``,
    ``{step: state dict}``)."""
    bad = [s for s in snapshots if not 1 <= s <= cfg.steps]
    if bad:
        raise ValueError(f"snapshots must lie in 1..steps={cfg.steps}, got {bad}")
    writes = checkpoint is not None and distributed_world()[1] == 0  # only rank 0 writes the checkpoint
    with one_writer(checkpoint, f"checkpoint {checkpoint}") if writes else nullcontext():
        return _train(model_cfg, task, cfg, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                      max_steps_this_call=max_steps_this_call, device=device, progress=progress,
                      init_state=init_state, command=command, snapshots=frozenset(snapshots))


def _train(model_cfg: GPTConfig, task: TaskConfig, cfg: TrainConfig, *, checkpoint: Path | None,
           checkpoint_every: int, max_steps_this_call: int | None, device: str, progress: bool,
           init_state: dict | None, command: str, snapshots: frozenset = frozenset()) -> dict:
    if (init_state is None) != (not cfg.init_from):
        raise ValueError("init_state and cfg.init_from go together: give both or neither")
    if model_cfg.d != task.d:
        raise ValueError(f"model d={model_cfg.d} and task d={task.d} differ")
    if cfg.examples > model_cfg.max_examples:
        raise ValueError(f"examples={cfg.examples} exceeds the model's max_examples={model_cfg.max_examples}")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    world, rank = distributed_world()
    if cfg.batch % world:
        raise ValueError(f"batch={cfg.batch} must be divisible by the number of processes ({world})")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = InContextGPT(model_cfg).to(device)
    if init_state is not None:
        model.load_state_dict(init_state)
    val = validation_prompts(task, cfg) if cfg.eval_every else None
    opt = optimiser(model, cfg.lr, cfg.fast)
    g = torch.Generator().manual_seed(cfg.seed + SEEDS["prompts"])
    settings = {"model": model_cfg.to_dict(), "task": task.to_dict(), "train": cfg.to_dict()}
    history: list[dict] = []
    kept: dict[int, dict] = {}
    step, seconds = 0, 0.0
    if checkpoint is not None and checkpoint_exists(checkpoint):
        state = load_checkpoint(checkpoint, map_location=device, command=command, kind="gpt_icl")
        if plain(state["settings"]) != plain(settings):
            differ = sorted(f"{part}.{k}" for part in settings for k in settings[part]
                            if plain(state["settings"].get(part, {}).get(k)) != plain(settings[part][k]))
            raise CheckpointError(f"checkpoint {checkpoint} was written with other settings ({', '.join(differ)} "
                                  f"differ); move it away to train anew, or resume it with the settings it was "
                                  "written with")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        g.set_state(state["rng"])
        history, step, seconds = state["history"], state["step"], state["seconds"]
    stop = cfg.steps if max_steps_this_call is None else min(cfg.steps, step + max_steps_this_call)
    bar = tqdm(total=cfg.steps, initial=step, disable=not progress, desc="ICL training", unit="step", mininterval=5)
    t0 = time.perf_counter() - seconds
    model.train()
    net = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    net = compiled_step(net, cfg.fast)
    while step < stop:
        xs, ys, k, dims = _batch(task, cfg, step, g, device)
        if world > 1:  # this rank's share of the global batch
            xs, ys = xs.chunk(world)[rank], ys.chunk(world)[rank]
        loss = ((net(xs, ys) - ys) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.lr_schedule != "constant":
            for group in opt.param_groups:
                group["lr"] = lr_at(cfg, step)
        opt.step()
        step += 1
        bar.update(1)
        if step % cfg.log_every == 0 or step == cfg.steps:
            logged = loss.detach()
            if world > 1:
                torch.distributed.all_reduce(logged)
                logged = logged / world
            row = {"step": step, "loss": float(logged), "examples": k, "dims": dims}
            if val is not None and (step % cfg.eval_every == 0 or step == cfg.steps):
                row["val_r2"], row["val_context_mean"] = excess_r2(model, *val, cfg.eval_from)
            history.append(row)
        if step in snapshots and rank == 0:
            if checkpoint is None:
                kept[step] = {k: v.detach().clone() for k, v in model.state_dict().items()}
            else:  # the snapshot, then the checkpoint of the same step: a resumed run never skips a snapshot
                save_checkpoint(snapshot_path(checkpoint, step), {"settings": settings, "model": model.state_dict(),
                                                                  "step": step}, command=command, seed=cfg.seed,
                                wall_time_s=time.perf_counter() - t0)
        if checkpoint is not None and rank == 0 and (step % checkpoint_every == 0 or step == stop
                                                      or step in snapshots):
            save_checkpoint(checkpoint, {"settings": settings, "model": model.state_dict(), "opt": opt.state_dict(),
                               "rng": g.get_state(), "history": history, "step": step,
                               "seconds": time.perf_counter() - t0}, command=command, seed=cfg.seed,
                            wall_time_s=time.perf_counter() - t0)
    bar.close()
    model.eval()
    columns = ["step", "loss", "examples", "dims"] + (["val_r2", "val_context_mean"] if cfg.eval_every else [])
    return {"model": model, "history": pd.DataFrame(history, columns=columns),
            "steps_done": step, "seconds": time.perf_counter() - t0, "snapshots": kept}


#: the settings a continued run may change (:func:`continue_checkpoint`): how long it runs and what it logs and
#: measures on its own validation prompts -- none of them touches an update, so a run continued from step s to S takes
#: the steps an uninterrupted run to S would have taken
CONTINUABLE = ("steps", "log_every", "eval_every", "eval_prompts", "eval_from")


def continue_checkpoint(source: Path, target: Path, model_cfg: GPTConfig, task: TaskConfig, cfg: TrainConfig, *,
                        command: str, source_command: str) -> int:
    """Start the run of ``target`` as the run of ``source`` continued under ``cfg``: the same weights, optimiser
    moments, prompt generator and history, the settings ``cfg``'s (which :func:`train` then resumes). Refused with
    one line -- nothing written -- where ``source`` is missing or unfinished under its own settings, where its
    settings differ from the new ones in anything but :data:`CONTINUABLE`, or where ``cfg`` would stop before the step
    it reached. ``command`` rebuilds ``target``, ``source_command`` ``source``. Returns the step it starts at."""
    if not checkpoint_exists(source):
        raise CheckpointError(f"no checkpoint at {source} to continue; train it first with {source_command}")
    state = load_checkpoint(source, command=source_command, kind="gpt_icl")
    new = {"model": model_cfg.to_dict(), "task": task.to_dict(), "train": cfg.to_dict()}
    old = state["settings"]
    differ = sorted(f"{part}.{k}" for part in new for k in set(new[part]) | set(old.get(part, {}))
                    if not (part == "train" and k in CONTINUABLE)
                    and plain(old.get(part, {}).get(k)) != plain(new[part].get(k)))
    if differ:
        raise CheckpointError(f"checkpoint {source} cannot be continued under the new settings: {', '.join(differ)} "
                              f"differ (only {', '.join(CONTINUABLE)} may change); train {target} from scratch")
    if state["step"] < old["train"]["steps"]:
        raise CheckpointError(f"checkpoint {source} is unfinished ({state['step']} of {old['train']['steps']} steps); "
                              f"finish it with {source_command} before continuing it")
    if cfg.steps < state["step"]:
        raise CheckpointError(f"checkpoint {source} is at step {state['step']}, past the {cfg.steps} steps of "
                              f"{target}: a continued run only adds steps")
    with one_writer(target, f"checkpoint {target}"):
        if checkpoint_exists(target):
            raise CheckpointError(f"checkpoint {target} exists already: resume it with {command}, or move it away to "
                                  "continue its source anew")
        save_checkpoint(target, {**state, "settings": new}, command=command, seed=cfg.seed,
                        wall_time_s=state["seconds"])
    return int(state["step"])


def distributed_world() -> tuple[int, int]:
    """``(number of processes, this process's rank)`` of the current ``torch.distributed`` group, or (1, 0)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def plain(obj):
    """Settings as saved and loaded compare equal (tuples come back as lists)."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


def load_model(checkpoint: Path, device: str = "cpu", command: str = "") -> tuple[InContextGPT, dict]:
    """The model of a checkpoint written by :func:`train`, and its settings (``command``: what rebuilds it)."""
    path = Path(checkpoint)
    if not checkpoint_exists(path):
        raise CheckpointError(f"no checkpoint at {path}; run the training command of the chapter first")
    state = load_checkpoint(path, map_location=device, command=command, kind="gpt_icl")
    model = InContextGPT(GPTConfig(**state["settings"]["model"])).to(device)
    model.load_state_dict(state["model"])
    return model.eval(), state
