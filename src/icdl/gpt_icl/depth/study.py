"""ICDL objective 4 (Fig. 7, chapter ``gpt_depth``): is a deeper transformer a better in-context learner?

For each model depth of the profile (``layers``; the paper's 4, 6, 8, 10) and each of the profile's
``seeds`` a softmax and a ReLU transformer are trained on targets of one depth (``target_depth``) by the
schedule of :mod:`~icdl.gpt_icl.core.schedule` at the main study's lengths in the reference profile (``steps``,
``warm_steps``, ``relu_steps``), on prompts long enough for the paper's evaluation points
(``train_examples``: 15, 30 and 45 examples lie inside the training length).
Each model is scored on the pretraining mixture with ``examples`` examples before the query (the profile's
``examples``), beside the context mean and least squares on the same prompts, and its squared error per
block of prompts is kept for the intervals of :mod:`~icdl.gpt_icl.depth.judge`.

A *unit* is one model depth and seed (its two models). With a checkpoint folder each unit is scored as soon
as it is trained into a small score file beside its checkpoints (``score_L<layers>_seed<seed>.json``: its
scores, sums, histories and the checkpoints' sha256), which a later call reads instead of the models, so the
units may be trained by separate calls -- on separate cores, or in separate sessions -- and the checkpoints
need not be kept.

==================  ==================================================================================
:data:`PROFILES`    ``quick`` (CI), ``reference`` (CPU), ``paper`` (Appendix F's settings)
:func:`depth_study` train or resume and score every unit, then the baselines on the same prompts
:func:`write`,      the result file ``depth.<profile>.json`` and back
:func:`load`
==================  ==================================================================================
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.evaluation import predict, test_prompts
from icdl.gpt_icl.core.intervals import block_sums, label_sums
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.schedule import MODEL_RANGES, MODEL_SETTINGS, checkpoint_path, configs, train_pair
from icdl.gpt_icl.core.schedule import memory_estimate as schedule_memory
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.core.training import plain
from icdl.repro import schema
from icdl.repro.checkpoints import checkpoint_record
from icdl.repro.files import ResultFileError
from icdl.repro.profiles import ProfileSet
from icdl.repro.results import load_result, provenance, save_profile_result, save_result
from icdl.repro.typeset import count


def memory_estimate(cfg) -> float:
    """:func:`icdl.gpt_icl.core.schedule.memory_estimate` for the deepest model of the study."""
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


def _score_rows(pred: torch.Tensor, ys: torch.Tensor, examples) -> list[dict]:
    """R² across prompts of predictions ``pred`` at ``examples`` examples before the query (index ``p``),
    with its bootstrap band over prompts."""
    r2 = bl.r2_across_prompts(pred, ys).numpy()
    lo, hi = bl.bootstrap_band(pred, ys)
    return [{"examples": p, "r2": float(r2[p]), "lo": float(lo[p]), "hi": float(hi[p])} for p in examples]


@torch.no_grad()
def _scores(model, xs, ys, examples) -> list[dict]:
    return _score_rows(predict(model, xs, ys), ys, examples)


def _positions(examples) -> list[int]:
    """The 1-based query positions of :mod:`~icdl.gpt_icl.core.intervals` for ``examples`` examples before it."""
    return [p + 1 for p in examples]


def _blocks(pred: torch.Tensor, ys: torch.Tensor, examples, **key) -> list[dict]:
    sse = block_sums(pred, ys, _positions(examples))
    return [{**key, "examples": p, "sse": sse[i].tolist()} for i, p in enumerate(examples)]


def _settings(cfg, n_layer: int, seed: int) -> dict:
    """What a model's scores stand for: both models' settings (:func:`~icdl.gpt_icl.core.schedule.configs`) and the
    test prompts they were scored on. A score file whose settings differ from these is refused."""
    made = {att: dict(zip(("model", "task", "train"), (c.to_dict() for c in
                                                       configs(cfg, cfg["target_depth"], att, n_layer, seed))))
            for att in ATTENTIONS}
    test = {k: cfg[k] for k in ("test_prompts", "test_examples", "examples", "seed", "d", "target_depth")}
    return plain({"models": made, "test": test})


def _other_rank() -> bool:
    """Whether this process is a data-parallel rank other than 0 (which trains but neither scores nor writes)."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_rank() != 0


def _score_path(folder: Path, n_layer: int, seed: int) -> Path:
    return Path(folder) / f"score_L{n_layer}_seed{seed}.json"


def _trained_unit(cfg, n_layer: int, seed: int, *, folder: Path | None, prompts, steps_this_call, progress,
                  device, train_only: bool) -> dict | None:
    """Train (or resume) the two models of one model depth and seed, then score them on ``prompts``:
    ``{"table", "blocks", "history", "training", "models"}`` (lists of rows), None while unfinished."""
    t0 = time.perf_counter()
    pair = train_pair(cfg, cfg["target_depth"], n_layer, command=PROFILES.command_for(cfg["profile"]),
                      folder=folder, tag=tag(n_layer), steps_this_call=steps_this_call, progress=progress,
                      device=device, replicate=seed)
    if not pair["complete"]:
        return None
    if train_only and (folder is None or _other_rank()):
        return None
    xs, ys = prompts()
    out = {"table": [], "blocks": [], "history": [], "training": [], "models": []}
    for attention in ATTENTIONS:
        res, key = pair[attention], {"n_layer": n_layer, "attention": attention, "seed": seed}
        with torch.no_grad():
            pred = predict(res["model"], xs, ys)
        out["table"] += [{**key, **row} for row in _score_rows(pred, ys, cfg["examples"])]
        out["blocks"] += _blocks(pred, ys, cfg["examples"], n_layer=n_layer, model=attention, seed=seed)
        out["history"] += res["history"].assign(**key).to_dict("records")
        out["training"].append({**key, "steps": res["steps_done"], "seconds": res["seconds"]})
        sha = "" if folder is None else load_result(checkpoint_record(
            checkpoint_path(folder, cfg["target_depth"], attention, tag(n_layer), seed)))["data"]["sha256"]
        out["models"].append({**key, "steps": res["steps_done"], "sha256": sha})
    if folder is not None:  # the unit's scores, kept (small and committed: its checkpoints may stay local)
        out["settings"] = _settings(cfg, n_layer, seed)
        save_result(_score_path(folder, n_layer, seed), out,
                    provenance=provenance(command=_unit_command(cfg, n_layer, seed),
                                          wall_time_s=time.perf_counter() - t0, profile=cfg["profile"],
                                          seed=cfg["seed"]))
    return out


def _stored_unit(cfg, folder: Path, n_layer: int, seed: int) -> dict | None:
    """A unit's committed scores, or None where there are none; refused in one line where they were made under
    other settings (a file swapped with another unit's, or written with another profile) or do not hold what the
    design asks for (:func:`_check_unit_blocks`; each value finite, each squared error non-negative and summed
    over every block of prompts: the file's registered shape, :mod:`icdl.gpt_icl.core.shapes`)."""
    path = _score_path(folder, n_layer, seed)
    if not path.is_file():
        return None
    data = load_result(path)["data"]
    try:  # its registered shape, wherever its folder is (load_result finds it by the path under results/)
        schema.check(path, data, registered=("gpt_depth", "checkpoints/score"))
    except schema.SchemaError as err:
        raise ResultFileError(str(err)) from None
    if data.get("settings") != _settings(cfg, n_layer, seed):
        raise ResultFileError(f"score file {path} holds another model than {n_layer} layers, seed {seed} of "
                              f"profile {cfg['profile']!r}; delete it and rerun {_unit_command(cfg, n_layer, seed)}")
    _check_unit_blocks(path, data, cfg, n_layer, seed)
    return data


def _unit_command(cfg, n_layer: int, seed: int) -> str:
    """The command that trains and scores one unit again."""
    return f"{PROFILES.command_for(cfg['profile'])} --layers {n_layer} --seeds {seed}"


def _check_unit_blocks(path: Path, data: dict, cfg, n_layer: int, seed: int) -> None:
    """Refuse a score file whose squared errors per block are not the rows the design asks for: one per model
    (softmax, ReLU) and number of examples of the profile, of this unit's depth and seed -- a row lost or repeated
    would leave a model short of a point, or count it twice, in the intervals of :mod:`~icdl.gpt_icl.depth.judge`."""
    want = sorted((attention, p) for attention in ATTENTIONS for p in cfg["examples"])
    got = sorted((b["model"], b["examples"]) for b in data["blocks"] if (b["n_layer"], b["seed"]) == (n_layer, seed))
    if got != want or len(data["blocks"]) != len(want):
        raise ResultFileError(f"score file {path} holds squared errors for {len(data['blocks'])} (model, examples) "
                              f"row(s) {got}, not one per model and number of examples {want}; delete it and rerun "
                              f"{_unit_command(cfg, n_layer, seed)}")


def depth_study(cfg, *, folder: Path | None = None, layers: list[int] | None = None,
                seeds: tuple[int, ...] | None = None, steps_this_call: int | None = None,
                progress: bool = True, device: str = "cpu", train_only: bool = False) -> dict | None:
    """Train (or resume) and score the models of every model depth in ``layers`` (default: the profile's) and
    every seed in ``seeds`` (default: the profile's ``seeds``, 0, 1, …).

    With ``folder`` each unit (a model depth and seed: its softmax and ReLU model) is scored as soon as it is
    trained, into ``score_L<layers>_seed<seed>.json`` beside the checkpoints, and a later call reads those
    scores instead of the models: the units may be trained and scored by separate calls (``--layers``,
    ``--seeds``). Without ``folder`` (the quick profile) everything is trained in memory. ``train_only``
    (a subset) trains and scores its units and returns None.

    Returns ``{"table", "baselines", "blocks", "labels", "history", "training", "models", "complete",
    "seconds"}``: ``table`` one row per model, seed and number of examples before the query (``examples``),
    with a bootstrap band over prompts; ``blocks`` each model's and baseline's (seed −1) squared error per
    block of prompts and ``labels`` the labels' sums per block, the input of
    :mod:`~icdl.gpt_icl.depth.judge`'s intervals; ``training`` and ``models`` each model's steps, training
    seconds (summed over the calls that trained it) and checkpoint sha256."""
    t0 = time.perf_counter()
    examples = list(cfg["examples"])
    if max(examples) >= cfg["test_examples"]:
        raise ValueError(f"examples must be < test_examples={cfg['test_examples']}, got {examples}")
    cache: list = []

    def prompts():
        if not cache:
            cache.extend(test_prompts(cfg, cfg["target_depth"], PRETRAINING))
        return cache

    units, complete = [], True
    for seed in range(cfg["seeds"]) if seeds is None else seeds:
        for n_layer in layers or list(cfg["layers"]):
            unit = _stored_unit(cfg, folder, n_layer, seed) if folder is not None else None
            if unit is None:
                unit = _trained_unit(cfg, n_layer, seed, folder=folder, prompts=prompts,
                                     steps_this_call=steps_this_call, progress=progress, device=device,
                                     train_only=train_only)
            complete &= unit is not None
            units.append(unit or {})
    if train_only:
        return None
    xs, ys = prompts()
    base, blocks = [], [row for u in units for row in u.get("blocks", [])]
    for name, method in ((bl.CONTEXT_MEAN, bl.context_mean), (bl.LEAST_SQUARES, bl.least_squares)):
        pred = method(xs, ys)
        r2 = bl.r2_across_prompts(pred, ys).numpy()
        base += [{"method": name, "examples": p, "r2": float(r2[p])} for p in examples]
        blocks += _blocks(pred, ys, examples, n_layer=0, model=name, seed=-1)
    sums = label_sums(ys, _positions(examples))
    labels = [{"examples": p, "n": sums["n"].tolist(), "sy": sums["sy"][i].tolist(), "syy": sums["syy"][i].tolist()}
              for i, p in enumerate(examples)]

    def rows(field, columns=None):  # columns in one order, whether the units were scored now or read back
        frame = pd.DataFrame([r for u in units for r in u.get(field, [])], columns=columns)
        return frame if columns else frame[sorted(frame.columns)]

    return {"table": rows("table"), "baselines": pd.DataFrame(base), "blocks": blocks, "labels": labels,
            "history": rows("history"),
            "training": rows("training", ["n_layer", "attention", "seed", "steps", "seconds"]),
            "models": rows("models", ["n_layer", "attention", "seed", "steps", "sha256"]).to_dict("records"),
            "complete": complete, "seconds": time.perf_counter() - t0}


def settings_glue(cfg) -> dict[str, str]:
    """A profile's settings as the chapter's prose quotes them (thousands spaced)."""
    spaced = count
    return {"depth_target": str(cfg["target_depth"]), "depth_train": str(cfg["train_examples"]),
            "depth_steps": spaced(cfg["steps"]), "depth_warm": spaced(cfg["warm_steps"]),
            "depth_relu": spaced(cfg["relu_steps"]), "depth_prompts": spaced(cfg["test_prompts"])}


FIELDS = ("table", "baselines", "blocks", "labels", "history", "training", "models", "complete", "seconds")


def write(res: dict, cfg, command: str, started: float) -> Path:
    """``results/gpt_depth/depth.<profile>.json`` from a :func:`depth_study` result."""
    return save_profile_result(PROFILES, "depth", {k: res[k] for k in FIELDS}, profile=cfg["profile"],
                               seed=cfg["seed"], started=started, command=command)


def load(raw: dict) -> dict:
    """A committed depth result (an object of :func:`icdl.repro.results.load_result`) as frames (``blocks``,
    ``labels`` and ``models`` as rows). Files written before the column ``examples`` was named so call it
    ``position`` (the same number: examples before the query, not the query's index as in the other studies);
    it is renamed here. A one-seed file from before the seeds has no ``seed`` column (seed 0 is added) and no
    sums per block (``blocks`` empty: judged on its point value)."""
    d = raw["data"]
    out = {k: pd.DataFrame(d[k]).rename(columns={"position": "examples"})
           for k in ("table", "baselines", "history", "training")}
    for k in ("table", "history", "training"):
        if len(out[k]) and "seed" not in out[k]:
            out[k]["seed"] = 0
    return out | {k: d.get(k, []) for k in ("blocks", "labels", "models")} | {
        "complete": bool(d["complete"]), "seconds": d["seconds"], "provenance": raw["provenance"]}
