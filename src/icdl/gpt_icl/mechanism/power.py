"""Can the mechanism's pipeline tell the algorithms apart at all? Planted models (chapter ``gpt_mechanism``).

A verdict "the model is not nearest GD" means something only if the same pipeline -- the members chosen on scan
prompts, the three measures on the test prompts, the registered ratios -- calls a model that *is* GD on the
network nearest GD, and one that *is* ridge nearest ridge. Both are planted here, in minutes and without training,
each a little off what the pipeline can match exactly, as a trained model would be:

=====================  =========================================================================================
``planted GD``         GD on the target's architecture at a step size, a number of steps and a start scale
                       between the grid's (:func:`plant_settings`), from another start draw than the grid's
``planted ridge``      ridge at a λ between the grid's
both                   their predictions carry noise of :data:`NOISE` of the labels' variance (a model's
                       prediction error); their sensitivities are the algorithm's own
=====================  =========================================================================================

:func:`power` runs the pipeline of :mod:`~icdl.gpt_icl.mechanism.measures` on both at one target depth and returns
the sums per block of prompts that the mechanism's numbers (:func:`~icdl.gpt_icl.mechanism.numbers.paired_measures`)
read; :func:`power_numbers` gives, per plant, GD's prediction difference over the nearest simple rule's (below 1:
GD nearer) with its interval over the prompts. :func:`run` does it at every target depth of a profile on two tasks
-- ICDL's inputs and x ~ N(0, I) (:data:`TASKS`) -- and writes ``results/gpt_mechanism/power.<profile>.json``
(``python -m icdl.gpt_icl.mechanism.power --profile seeds``); :func:`judge` turns it into the registered claims
``mech-power-gd`` and ``mech-power-ridge`` (per task), which gate the mechanism's verdicts on that task;
:func:`glue` puts them, and hypothesis 2's cosine line against the plants, in the chapter's words.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import torch
from torch import Tensor

from icdl.gpt_icl.core import algorithms as al
from icdl.gpt_icl.core.intervals import Draws, summary
from icdl.gpt_icl.core.schedule import target_task
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.mechanism.measures import (
    SEEDS,
    choose,
    fixed_candidates,
    gd_grid,
    measure,
    measure_prompts,
    scan_prompts,
)
from icdl.gpt_icl.mechanism.numbers import paired_measures
from icdl.repro.typeset import relation

#: the plants' prediction noise, as a share of the labels' variance at each position
NOISE = 0.04
#: the plants' names (the ``attention`` column of their sums, where a trained model has its attention)
PLANTS = ("planted GD", "planted ridge")


def _between(values) -> float:
    """A value between a grid's two middle values (their geometric mean), or 1.25 times a grid of one."""
    v = sorted(float(x) for x in values)
    if len(v) == 1:
        return 1.25 * v[0]
    i = (len(v) - 1) // 2
    return math.sqrt(v[i] * v[i + 1])


def plant_settings(cfg) -> dict:
    """The plants' settings, each off the grid the pipeline chooses from: GD's step size, start scale and ridge's λ
    between the grid's middle values, GD's steps three quarters of the grid's largest (between the recorded powers
    of two), and a start draw of its own."""
    return {"eta": _between(cfg["etas"]), "init_scale": _between(cfg["init_scales"]),
            "steps": max(1, (3 * cfg["gd_steps"]) // 4), "lambda": _between(cfg["lambdas"]),
            "start_seed": SEEDS["start"] + 1}


class Planted(torch.nn.Module):
    """A model that runs one algorithm (``kind``: ``"gd"`` or ``"ridge"``) on each prompt, at the positions of
    ``cfg`` (NaN elsewhere), its predictions with :data:`NOISE` of the labels' variance added (drawn with ``seed``:
    a rerun is the same). ``forward(xs, ys)`` gives ``(B, k)`` predictions as a trained model does;
    :meth:`sensitivity` the predictions and ``∂ŷ/∂x_query`` that :func:`~icdl.gpt_icl.core.algorithms.model_sensitivity`
    reads."""

    def __init__(self, kind: str, cfg, depth: int, seed: int = 0):
        super().__init__()
        if kind not in ("gd", "ridge"):
            raise ValueError(f"kind must be 'gd' or 'ridge', got {kind!r}")
        self.kind, self.cfg, self.depth, self.seed = kind, cfg, depth, seed
        self.settings = plant_settings(cfg)

    def _run(self, xs: Tensor, ys: Tensor, positions: list[int]) -> tuple[Tensor, Tensor]:
        s = self.settings
        if self.kind == "gd":
            with torch.enable_grad():  # GD's own steps, also where the pipeline asks for predictions under no_grad
                    pred, sens = al.gd_network_sensitivity(xs, ys, positions, target_task(self.cfg, self.depth),
                                                       eta=s["eta"],
                                                       steps=s["steps"], init_scale=s["init_scale"],
                                                       seed=s["start_seed"])
        else:
            p, g = al.ridge(xs, ys, positions, [s["lambda"]])
            pred, sens = p[0], g[0]
        spread = ys[:, positions].double().var(0, keepdim=True)                       # (1, P)
        g = torch.Generator().manual_seed(self.seed)
        noise = torch.randn(pred.shape, generator=g, dtype=torch.float64) * (NOISE * spread).sqrt()
        return (pred.double() + noise).to(xs.dtype), sens.to(xs.dtype)

    def forward(self, xs: Tensor, ys: Tensor) -> Tensor:
        k = xs.shape[1]
        positions = sorted({p for p in self.cfg["positions"] if p < k} | {k - 1})
        out = torch.full(ys.shape, float("nan"), dtype=xs.dtype)
        out[:, positions] = self._run(xs, ys, positions)[0]
        return out

    def sensitivity(self, xs: Tensor, ys: Tensor, positions) -> tuple[Tensor, Tensor]:
        return self._run(xs, ys, list(positions))


def power(cfg, depth: int, progress: bool = False) -> pd.DataFrame:
    """The pipeline on both plants at target depth ``depth`` of ``cfg`` (a mechanism profile): each plant's GD and
    ridge members chosen on the scan prompts, then measured on the test prompts of the pretraining mixture. Returns
    the sums per block of prompts (:func:`~icdl.gpt_icl.mechanism.measures.measure`), ``attention`` the plant's
    name, ``depth`` the target depth."""
    xs, ys = scan_prompts(cfg, depth)
    grid = gd_grid(cfg, depth, xs, ys)
    fixed = fixed_candidates(cfg, depth, *measure_prompts(cfg, depth, PRETRAINING))
    pos = list(cfg["positions"])
    parts = []
    for name, kind in zip(PLANTS, ("gd", "ridge")):
        plant = Planted(kind, cfg, depth)
        with torch.no_grad():
            chosen = choose(cfg, depth, plant(xs, ys)[:, pos], xs, ys, grid)
        _, _, blocks = measure(plant, cfg, depth, PRETRAINING, chosen, fixed)
        parts.append(blocks.assign(depth=depth, attention=name))
    return pd.concat(parts, ignore_index=True)


def power_numbers(blocks: pd.DataFrame, train_examples: int) -> dict[tuple[int, str], dict]:
    """Per target depth and plant: GD's prediction difference over the nearest simple rule's (``pred``), its
    sensitivity difference over the smallest simple rule's (``sens``) and GD's cosine (``cosine``), each
    ``{"value", "lo", "hi"}`` over the test prompts (:func:`~icdl.gpt_icl.mechanism.numbers.paired_measures`, one
    seed: the prompt rows alone)."""
    m = paired_measures(blocks, train_examples, Draws(1, blocks=int(blocks["block"].nunique())))
    return {(int(depth), name): {k: summary(v[k]) for k in ("pred", "sens", "cosine")}
            for (depth, name), v in m["models"].items()}


def numbers_by_task(blocks: pd.DataFrame | None, train_examples: int) -> dict[str, dict[tuple[int, str], dict]]:
    """:func:`power_numbers` of every task of :data:`TASKS` (``blocks``: a run's sums per block, the ``task`` column
    telling the tasks apart; empty while the run waits): what the chapter tables per task and
    :func:`cosine_words` reads."""
    if blocks is None:
        return {}
    return {task: power_numbers(blocks[blocks["task"] == task], train_examples) for task in TASKS}


def shown(numbers: dict[tuple[int, str], dict]) -> pd.DataFrame:
    """For the reader: per target depth and plant the three numbers, each "value (lo to hi)"."""
    def cell(s):
        return f"{s['value']:.3f} ({s['lo']:.3f} to {s['hi']:.3f})"

    return pd.DataFrame([{"target depth": depth, "plant": name,
                          "GD's prediction difference over the nearest simple rule's": cell(v["pred"]),
                          "GD's sensitivity difference over the smallest simple rule's": cell(v["sens"]),
                          "GD's cosine": cell(v["cosine"])} for (depth, name), v in sorted(numbers.items())])


def cosine_words(numbers: dict[str, dict[tuple[int, str], dict]], line: float) -> str:
    """Hypothesis 2's cosine line set against what the plants reach (``numbers``: task -> :func:`power_numbers`):
    per task, the range over target depths of the planted GD's cosine with GD's chosen member and of the planted
    ridge's, and whether the line falls between them as the claim is decided, on the intervals (every depth's
    interval of the planted GD at or above the line, every one of the planted ridge's below it: it tells a model
    that is GD from one that is ridge only then), or that the run waits."""
    where = {"icdl": "ICDL's inputs", "n01": "inputs from N(0, I)"}
    parts = []
    for task, nums in numbers.items():
        cos = {plant: [v["cosine"] for (_, name), v in nums.items() if name == plant] for plant in PLANTS}
        (gd_lo, gd_hi), (ri_lo, ri_hi) = ((min(c["value"] for c in cos[p]), max(c["value"] for c in cos[p]))
                                          for p in PLANTS)
        between = min(c["lo"] for c in cos[PLANTS[0]]) >= line > max(c["hi"] for c in cos[PLANTS[1]])
        parts.append(f"on {where[task]} the planted GD reaches {gd_lo:.2f} to {gd_hi:.2f} and the planted ridge "
                     f"{ri_lo:.2f} to {ri_hi:.2f} over the target depths, so the line "
                     + ("falls between them" if between else "does not separate them"))
    return "; ".join(parts) if parts else "the planted models' run has not been made yet"


#: the tasks the power is measured on: the inputs' centre (ICDL's N(−2, I), and N(0, I) of chapter gpt_n01) and
#: the suffix of their claims
TASKS = {"icdl": (2.0, ""), "n01": (0.0, "-n01")}
#: the gate's name as the chapter says it (``POWER`` of icdl.repro.claims.base)
GATE = "power"
#: the result file's fields
FIELDS = ("blocks", "complete", "seconds")


def unit_path(cfg, task: str, depth: int) -> Path:
    """Where one (task, depth) unit of a profile's run keeps its sums while the run goes on:
    ``results/gpt_mechanism/checkpoints/<profile>/power_<task>_depth<d>.json`` (committed, so that a run longer than
    a session resumes on another machine)."""
    from icdl.gpt_icl.mechanism.study import PROFILES

    return PROFILES.folder("checkpoints", cfg["profile"]) / f"power_{task}_depth{depth}.json"


def _unit(cfg, task: str, depth: int, progress: bool, keep: bool) -> tuple[pd.DataFrame, float]:
    """One unit's sums and seconds; with ``keep`` read back from its file when a run of this code made it (a unit
    made by other code is refused: delete it, or finish the run at its commit), else computed and written (an
    override run keeps nothing)."""
    import time

    from icdl.repro.results import frame_to_lists, load_kept_part, provenance, save_result

    path = unit_path(cfg, task, depth) if keep and not cfg["overrides"] else None
    kept = None if path is None else load_kept_part(path, profile=cfg["profile"], what="the unit files")
    if kept is not None:
        return pd.DataFrame(kept["blocks"]), float(kept["seconds"])
    if progress:
        print(f"power: task {task}, target depth {depth}", flush=True)
    t0 = time.perf_counter()
    blocks = power({**cfg, "centre": TASKS[task][0]}, depth).assign(task=task)
    seconds = time.perf_counter() - t0
    if path is not None:
        save_result(path, {"blocks": frame_to_lists(blocks), "seconds": seconds},
                    provenance=provenance(command=COMMAND.format(profile=cfg["profile"]), wall_time_s=seconds,
                                          profile=cfg["profile"], seed=cfg["seed"]))
    return blocks, seconds


def run(cfg, progress: bool = True, keep: bool = False) -> dict:
    """:func:`power` at every target depth of ``cfg`` (a mechanism profile) on both :data:`TASKS`: one frame of sums
    per block with columns ``task`` and ``depth``. With ``keep`` (the command) each (task, depth) unit is kept in its
    own file as it finishes (:func:`unit_path`), so a killed run resumes from the units it finished; ``seconds`` is
    the units' sum."""
    units = [_unit(cfg, task, depth, progress, keep) for task in TASKS for depth in cfg["depths"]]
    return {"blocks": pd.concat([b for b, _ in units], ignore_index=True), "complete": True,
            "seconds": sum(s for _, s in units)}


def claims_of(task: str) -> dict[str, str]:
    """The two claims of one task: plant name -> claim id."""
    suffix = TASKS[task][1]
    return {PLANTS[0]: f"mech-power-gd{suffix}", PLANTS[1]: f"mech-power-ridge{suffix}"}


def judge(blocks: pd.DataFrame | None, train_examples: int, command: str) -> list[dict]:
    """The ledger entries of the power claims, per task (None while the run waits: nothing judged, ``command``
    named): for the planted GD the largest over the target depths of GD's prediction difference over the nearest
    simple rule's (below 1: the pipeline finds GD), for the planted ridge the smallest (above 1: it finds a simple
    rule, not GD), each read off every depth's own interval over the test prompts
    (:func:`~icdl.gpt_icl.core.intervals.extreme`)."""
    from icdl.gpt_icl.core.intervals import extreme
    from icdl.gpt_icl.core.verdicts import decide

    out = []
    for task in TASKS:
        names = claims_of(task)
        words = {PLANTS[0]: ("largest", "<", "nearer GD than any simple rule"),
                 PLANTS[1]: ("smallest", ">", "nearer a simple rule than GD")}
        if blocks is None:
            out += [{"claim": names[p], "value": None, "passed": None, "ours": f"not run yet: {command}",
                     "criterion": f"GD's prediction difference over the nearest simple rule's, {words[p][0]} over the "
                                  f"target depths, {words[p][1]} 1 on its whole 90 % interval"} for p in PLANTS]
            continue
        mine = blocks[blocks["task"] == task]
        m = paired_measures(mine, train_examples, Draws(1, blocks=int(mine["block"].nunique())))["models"]
        for plant in PLANTS:
            per_depth = {depth: v["pred"] for (depth, name), v in m.items() if name == plant}
            largest, op = words[plant][0] == "largest", words[plant][1]
            s = extreme(per_depth, largest=largest)
            each = "; ".join(f"depth {d}: {v[0]:.3f}" for d, v in sorted(per_depth.items()))
            out.append({"claim": names[plant], "value": s["value"],
                        "values": {"value_lo": s["lo"], "value_hi": s["hi"]},
                        "passed": decide(s["lo"], s["hi"], op, 1.0),
                        "ours": f"{plant}: GD's prediction difference over the nearest simple rule's, "
                                f"{words[plant][0]} over the depths {s['value']:.3f} (90 % interval {s['lo']:.3f} "
                                f"to {s['hi']:.3f} over the test prompts, each depth on its own); {each}",
                        "criterion": f"{words[plant][1]} ({relation(op)} 1 at every target depth, the whole interval)"})
    return out


def met(entries: list[dict], task: str) -> float:
    """The gate ``power`` of the mechanism's claims on ``task``: 1.0 where both of its power claims passed."""
    ids = set(claims_of(task).values())
    return float(all(e["passed"] is True for e in entries if e["claim"] in ids)
                 and sum(e["claim"] in ids for e in entries) == len(ids))


#: the command that writes ``results/gpt_mechanism/power.<profile>.json``
COMMAND = "python -m icdl.gpt_icl.mechanism.power --profile {profile}"


def write(res: dict, cfg, started: float) -> Path:
    """The result file ``results/gpt_mechanism/power.<profile>.json`` (an override run's own file elsewhere)."""
    from icdl.gpt_icl.mechanism.study import PROFILES
    from icdl.repro.results import save_profile_result

    return save_profile_result(PROFILES, "power", {k: res[k] for k in FIELDS}, profile=cfg["profile"],
                               seed=cfg["seed"], started=started, overrides=cfg["overrides"],
                               command=COMMAND.format(profile=cfg["profile"]))


def committed(profile: str) -> pd.DataFrame | None:
    """The sums per block of a committed power run (its provenance shown), or None while it waits."""
    from icdl.gpt_icl.mechanism.study import PROFILES
    from icdl.repro.results import show_reference

    raw = show_reference(PROFILES, "power", profile, command=COMMAND.format(profile=profile))
    return None if raw is None else pd.DataFrame(raw["data"]["blocks"])


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    from icdl.repro.cli import Parser

    p = Parser(prog="python -m icdl.gpt_icl.mechanism.power",
               description="Run the mechanism's pipeline on planted GD and ridge models at every target depth of a "
                           "profile, on ICDL's inputs and on N(0, I).")
    p.add_argument("--profile", default="seeds", choices=("quick", "seeds"),
                   help="seeds (the grid and sizes of the chapter's design), quick (tests)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m icdl.gpt_icl.mechanism.power --profile seeds``; one line on a bad argument or a refused write."""
    import sys
    import time

    from icdl.gpt_icl.mechanism.study import PROFILES
    from icdl.repro.files import ResultFileError, one_writer
    from icdl.repro.profiles import ProfileError, dry_run

    args = parser().parse_args(argv)
    prog = "python -m icdl.gpt_icl.mechanism.power"
    try:
        cfg = PROFILES.resolve(args.profile)
        if dry_run(f"the planted models, profile {args.profile}, target depths {list(cfg['depths'])}, both tasks"):
            return 0
        torch.set_num_threads(1)
        started = time.perf_counter()
        with one_writer(PROFILES.folder() / f"power.{cfg['profile']}.json", f"the {cfg['profile']} power run"):
            path = write(run(cfg, keep=True), cfg, started)
    except (ProfileError, ResultFileError, ValueError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0



def state_words(entries: list[dict]) -> str:
    """What the power claims say, per task, in a clause: whether the pipeline called both plants right there (the
    gate met), and where not, which plant it failed or left undecided, with that claim's number and interval; or
    that the run waits."""
    if all(e.get("value") is None for e in entries):
        return "the planted models' run has not been made yet"
    where = {"icdl": "ICDL's inputs", "n01": "inputs from N(0, I)"}
    by_claim = {e["claim"]: e for e in entries}
    parts = []
    for task in TASKS:
        if met(entries, task) == 1.0:
            parts.append(f"on {where[task]} the pipeline calls both plants right (the gate is met)")
            continue
        misses = []
        for plant, claim in claims_of(task).items():
            e = by_claim.get(claim)
            if e is None or e["passed"] is True:
                continue
            how = "calls the {} wrongly" if e["passed"] is False else "cannot decide the {}"
            v = e.get("values") or {}
            misses.append(how.format(plant) + f" (its ratio at the worst depth {e['value']:.3f}, 90 % interval "
                          f"{v.get('value_lo', float('nan')):.3f} to {v.get('value_hi', float('nan')):.3f}, "
                          "against 1)")
        parts.append(f"on {where[task]} the pipeline " + " and ".join(misses) + " (the gate is unmet)")
    return "; ".join(parts)


def glue(entries: list[dict], numbers: dict[str, dict[tuple[int, str], dict]]) -> dict[str, str]:
    """The prose's words of the planted models (``entries``: :func:`judge`'s; ``numbers``: :func:`numbers_by_task`):
    the gate's name (``power_gate_words``), what the claims say (``power_state``: :func:`state_words`), and
    hypothesis 2's registered cosine line (``power_cosine_line``) set against what the plants reach
    (``power_cosine_words``: :func:`cosine_words`)."""
    from icdl.repro.claims import CRITERIA

    line = next(c.threshold for c in CRITERIA["mech-seeds-cosine-gd"] if c.key == "value")
    return {"power_gate_words": GATE, "power_state": state_words(entries), "power_cosine_line": f"{line:g}",
            "power_cosine_words": cosine_words(numbers, line)}


if __name__ == "__main__":
    raise SystemExit(main())
