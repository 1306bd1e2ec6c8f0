"""Can the mechanism's pipeline tell the algorithms apart at all, measure by measure? Planted models at the trained
models' noise (chapter ``gpt_mechanism``).

The plants (:mod:`~icdl.gpt_icl.mechanism.plants`) are a planted GD, a planted ridge and a planted kernel smoother (a
nonlinear learner that is not GD), each at every noise level of :data:`~icdl.gpt_icl.mechanism.plants.NOISES`. A
measure the hypotheses read -- GD's prediction ratio, sensitivity ratio, cosine, median-block ratio -- has power for
"runs GD" on a task only where the planted GD lies on GD's side of that measure's line and the other two plants on the
other side, at every target depth and level, each on its whole interval over the test prompts (the registered claims
``mech-power-<measure>``, per task); a hypothesis is decided only where its own measure has power (the gate
``power``: :func:`met`).

=====================  ==============================================================================================
:func:`plant_numbers`  per target depth, plant and level the four numbers on every resample of the test prompts
:func:`judge`          the entries of ``mech-power-pred``, ``-sens``, ``-cosine``, ``-median`` (and their ``-n01``)
:func:`met`            the gate ``power`` of one hypothesis: its own measure's power claim on its task passed
:func:`shown`          the numbers for the reader; :func:`glue` the prose's words
:func:`run`            every (task, depth) unit, each kept in its own file as it finishes: ``python -m
                       icdl.gpt_icl.mechanism.power --profile seeds``
=====================  ==============================================================================================
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch

from icdl.gpt_icl.core.intervals import Draws
from icdl.gpt_icl.mechanism.numbers import RATIOS, every_model, median_ratio, paired_measures, summarised
from icdl.gpt_icl.mechanism.plants import NOISES, power

#: the four numbers the hypotheses read, each with its line: GD's side of it and the other side
LINES = {"pred": ("<", ">", 1.0), "sens": ("<", ">", 1.0), "cosine": (">=", "<", 0.8), "median": ("<", ">", 1.0)}
#: the hypothesis (``mech-seeds-*``, and its ``-n01``) each measure decides
HYPOTHESES = {"pred": "mech-seeds-nearest-gd", "sens": "mech-seeds-sens-gd", "cosine": "mech-seeds-cosine-gd",
              "median": "mech-seeds-median-gd"}
#: the reader's names of the measures
NAMES = {"pred": "prediction ratio", "sens": "sensitivity ratio", "cosine": "cosine", "median": "median-block ratio"}
#: each plant's key in the criteria: the planted GD's number is the claim's value
KEYS = {"planted GD": "value", "planted ridge": "ridge", "planted kernel smoother": "nonlinear"}


def plant_numbers(blocks: pd.DataFrame, train_examples: int) -> dict[tuple[int, str, float], dict]:
    """Per target depth, plant and noise level (``blocks``: one task's sums per block, with columns ``depth``,
    ``attention`` -- the plant -- and ``noise``): GD's prediction ratio to the nearest simple rule (``pred``), its
    sensitivity ratio (``sens``), its cosine (``cosine``) and the median-block ratio (``median``), each on every row
    of a one-seed :class:`~icdl.gpt_icl.core.intervals.Draws` (the prompt rows resampled alike for every plant and
    candidate of a level: paired)."""
    out = {}
    for level, part in blocks.groupby("noise"):
        draws = Draws(1, blocks=int(part["block"].nunique()))
        m, med = paired_measures(part, train_examples, draws), median_ratio(part, train_examples, draws)
        for (depth, name), v in m["models"].items():
            out[(int(depth), name, float(level))] = {"pred": v["pred"], "sens": v["sens"], "cosine": v["cosine"],
                                                     "median": med["models"][(depth, name)]}
    return out


def worst(numbers: dict, plant: str, measure: str) -> dict[str, float]:
    """A plant's number at its worst over the depths and levels -- toward the side of the line it must not reach:
    the planted GD's largest ratio or smallest cosine, the other plants' smallest ratio or largest cosine -- its
    interval read off every (depth, level)'s own (:func:`~icdl.gpt_icl.mechanism.numbers.every_model`; a ratio's on
    the log scale, which for one seed's prompt rows moves its ends only by the quantiles' interpolation)."""
    per = {(d, lvl): v[measure] for (d, name, lvl), v in numbers.items() if name == plant}
    if not per:
        raise ValueError(f"the run holds no sums of the {plant}")
    return every_model(per, largest=(measure != "cosine") == (plant == "planted GD"),
                       ratio=None if measure not in RATIOS else f"the {plant}'s {RATIOS[measure]}")


def numbers_by_task(blocks: pd.DataFrame | None, train_examples: int) -> dict[str, dict]:
    """:func:`plant_numbers` of every task of :data:`TASKS` (``blocks``: a run's sums per block, the ``task`` column
    telling the tasks apart; empty while the run waits)."""
    if blocks is None:
        return {}
    return {task: plant_numbers(blocks[blocks["task"] == task], train_examples) for task in TASKS}


def shown(numbers: dict) -> pd.DataFrame:
    """For the reader: per target depth, plant and noise level the four numbers, each "value (lo to hi)"."""
    def cell(v, k):
        s = summarised(v, RATIOS.get(k))
        return f"{s['value']:.3f} ({s['lo']:.3f} to {s['hi']:.3f})"

    return pd.DataFrame([{"target depth": d, "plant": name, "noise": f"{lvl:g}",
                          **{NAMES[k]: cell(v[k], k) for k in LINES}}
                         for (d, name, lvl), v in sorted(numbers.items())])


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


def claim_of(measure: str, task: str) -> str:
    """The power claim of one measure on one task."""
    return f"mech-power-{measure}{TASKS[task][1]}"


def criterion_words(measure: str) -> str:
    gd_op, other, line = LINES[measure]
    return (f"by the {NAMES[measure]}: the planted GD {gd_op} {line:g} and the planted ridge and kernel smoother "
            f"{other} {line:g}, at every target depth and noise level ({', '.join(f'{x:g}' for x in NOISES)}), "
            "each on its whole 90 % interval")


def judge(blocks: pd.DataFrame | None, train_examples: int, command: str) -> list[dict]:
    """The ledger entries of the power claims, per task and measure (``blocks`` None while the run waits: nothing
    judged, ``command`` named): the planted GD's number at its worst (the claim's value), the planted ridge's
    (``ridge``) and the kernel smoother's (``nonlinear``), each with its interval (:func:`worst`), decided by the
    registry."""
    from icdl.repro.claims import criterion_verdict

    out = []
    for task in TASKS:
        nums = None if blocks is None else plant_numbers(blocks[blocks["task"] == task], train_examples)
        for measure in LINES:
            claim = claim_of(measure, task)
            if nums is None:
                out.append({"claim": claim, "value": None, "passed": None, "criterion": criterion_words(measure),
                            "ours": f"not run yet: {command}"})
                continue
            values, parts = {}, []
            for plant, key in KEYS.items():
                s = worst(nums, plant, measure)
                values |= {key: s["value"], f"{key}_lo": s["lo"], f"{key}_hi": s["hi"]}
                parts.append(f"{plant} {s['value']:.3f} ({s['lo']:.3f} to {s['hi']:.3f})")
            value = values.pop("value")
            out.append({"claim": claim, "value": value, "values": values,
                        "passed": criterion_verdict(claim, values | {"value": value}),
                        "ours": f"the {NAMES[measure]} at each plant's worst over the target depths and noise levels "
                                "(90 % interval over the test prompts, each depth and level on its own): "
                                + "; ".join(parts),
                        "criterion": criterion_words(measure)})
    return out


def met(entries: list[dict], task: str, measure: str) -> float:
    """The gate ``power`` of the hypothesis that ``measure`` decides on ``task``: 1.0 where that measure's power
    claim on that task passed."""
    claim = claim_of(measure, task)
    return float(any(e["claim"] == claim and e["passed"] is True for e in entries))


def gates(entries: list[dict], task: str) -> dict[str, float]:
    """:func:`met` of every measure on ``task``: what :func:`~icdl.gpt_icl.mechanism.seeds.judge_seeds` reads."""
    return {measure: met(entries, task, measure) for measure in LINES}


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
               description="Run the mechanism's pipeline on planted GD, ridge and kernel-smoother models at every "
                           "noise level and target depth of a profile, on ICDL's inputs and on N(0, I).")
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
    """What the power claims say, per task, in a clause: the measures that have power there (their claim passed) and
    those that have none, each with the plant that decided it (the planted GD short of its line, or a plant that is
    not GD called GD) or left undecided; or that the run waits."""
    if all(e.get("value") is None for e in entries):
        return "the planted models' run has not been made yet"
    where = {"icdl": "ICDL's inputs", "n01": "inputs from N(0, I)"}
    by_claim = {e["claim"]: e for e in entries}
    parts = []
    for task in TASKS:
        good, bad = [], []
        for measure, (gd_op, other, line) in LINES.items():
            e = by_claim.get(claim_of(measure, task))
            if e is None or e["value"] is None:
                bad.append(f"the {NAMES[measure]} (not judged)")
                continue
            if e["passed"] is True:
                good.append(f"the {NAMES[measure]}")
                continue
            v = e["values"] | {"value": e["value"]}
            why = []
            for plant, key in KEYS.items():
                op = gd_op if key == "value" else other
                lo, hi = v.get(f"{key}_lo"), v.get(f"{key}_hi")
                if lo is None or hi is None:
                    continue
                inside = {"<": hi < line, ">": lo > line, ">=": lo >= line}[op]
                if not inside:
                    why.append(f"the {plant.removeprefix('planted ')} at {v[key]:.2f} ({lo:.2f} to {hi:.2f})")
            bad.append(f"the {NAMES[measure]} ({', '.join(why) or 'undecided'} against {line:g})")
        parts.append(f"on {where[task]} "
                     + (f"{_listed(good)} {'has' if len(good) == 1 else 'have'} power" if good
                        else "no measure has power")
                     + (f"; none has {_listed(bad)}" if bad else ""))
    return "; ".join(parts)


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def glue(entries: list[dict]) -> dict[str, str]:
    """The prose's words of the planted models (``entries``: :func:`judge`'s): the gate's name
    (``power_gate_words``), what the claims say (``power_state``: :func:`state_words`) and the noise levels
    (``power_noises``)."""
    return {"power_gate_words": GATE, "power_state": state_words(entries),
            "power_noises": ", ".join(f"{100 * x:g}" for x in NOISES) + " %"}


if __name__ == "__main__":
    raise SystemExit(main())
