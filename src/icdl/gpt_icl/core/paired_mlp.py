"""The MLP trained on the prompt, scored on the paired sets (objective 1's yardstick), block by block of prompts,
so that its work can be spread over processes and resumed.

One MLP is trained per prompt and MLP position (:func:`icdl.gpt_icl.core.baselines.trained_mlp`), and its epoch
is chosen on all the set's prompts (the paper's "best R² over epochs"). On profile ``n01-flat``'s 4 096 prompts, the
shifted targets and the curves that is about a core-hour (a tenth of a core-second per prompt and position at width
200, measured on two free cores), and a call that dies loses all of it. So the work is cut into **units** -- a
target depth, a paired set, an MLP position and one of the :data:`~icdl.gpt_icl.core.intervals.BLOCKS` blocks of
prompts the intervals resample -- and a unit keeps only what the result needs of it: its squared error summed over
the block's prompts after every epoch (``epochs`` numbers). The epoch is then chosen on the sum over blocks, and
each block's squared error at that epoch is the block sum the intervals read: the same numbers, bit for bit, whether
the units were computed in one call or many, in any order. A prompt's MLP is seeded by its index in the set, so a
block trains the MLPs the whole set would (to float rounding: a batch of another shape rounds differently, about
1e-7).

With a cache folder (the profile's checkpoints folder), every unit of a (depth, set, position) is kept in one file,
``mlp_depth<d>_<set>_q<position>.json``, written after each block (a kill loses at most the block under way) with
the settings it depends on, which a changed profile or baseline does not match. One process writes a file at a
time (:func:`icdl.repro.files.one_writer`), and :func:`fill` computes a shard of the files ahead of the run that
reads them.

=========================  ========================================================================================
:func:`block_errors`       one unit: the squared error of a block's MLPs after every epoch
:func:`rows`               the paired sets' MLP rows of a result (R² per position, squared error per block)
:func:`units`              the files of a profile, in a fixed order (the curves' MLP and each paired
                           (depth, set, position))
:func:`shard_units`        the files of one shard, dealt so that every shard has about the same work
:func:`fill`               compute the files of one shard; the command
                           ``python -m icdl.gpt_icl.core.paired_mlp --profile P --shard I/N`` calls it
=========================  ========================================================================================
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import torch

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.intervals import BLOCKS, prompt_blocks
from icdl.repro.files import ResultFileError, one_writer
from icdl.repro.results import load_result, provenance, save_result


def block_errors(cfg, depth: int, xs: torch.Tensor, ys: torch.Tensor, position: int, block: slice) -> np.ndarray:
    """``(epochs,)``: the squared error of the MLPs of the prompts ``block`` of ``xs``/``ys`` (a whole paired set)
    at the 0-based ``position``, summed over the block's prompts after every epoch (each squared error in float64,
    as :func:`~icdl.gpt_icl.core.intervals.block_sums` sums a model's)."""
    pred, _ = bl.mlp_predictions(xs[block], ys[block], position, depth=depth, width=cfg["mlp_width"],
                                 epochs=cfg["mlp_epochs"], seed=cfg["seed"], first=block.start)
    err = (pred - ys[block, position][None, :]) ** 2  # (epochs, prompts of the block)
    return err.double().sum(1).numpy()


def _slug(name: str) -> str:
    """A set's name as a file name's part: "paired μ=-0.5" -> "paired_mu-0.5"."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", name.replace("μ=", "mu"))


def _path(folder: Path, depth: int, name: str, position: int) -> Path:
    return Path(folder) / f"mlp_depth{depth}_{_slug(name)}_q{position + 1}.json"


def _settings(cfg, depth: int, name: str, position: int, count: int) -> dict:
    """What a file's numbers depend on (a file whose settings differ is not read: it is another run's)."""
    return {"d": cfg["d"], "depth": depth, "set": name, "prompts": count, "position": position + 1,
            "test_examples": cfg["test_examples"], "mlp_width": cfg["mlp_width"], "mlp_epochs": cfg["mlp_epochs"],
            "seed": cfg["seed"], "blocks": BLOCKS, "baseline_version": bl.VERSION,
            "target_family": cfg["target_family"], "target_width": cfg["target_width"], "centre": cfg["centre"]}


def _cached(path: Path, settings: dict, command: str) -> dict[int, list[float]]:
    """The blocks a file already holds (none if it is absent or another run's)."""
    if not path.is_file():
        return {}
    try:
        data = load_result(path)["data"]
    except ResultFileError as err:
        raise ResultFileError(f"{err}. A cache of the MLP's block errors is damaged: delete it and rerun {command} "
                              "(it recomputes that file's blocks)") from None
    if data.get("settings") != settings:
        return {}
    return {int(k): v for k, v in data["blocks"].items()}


def _errors(cfg, depth: int, name: str, xs, ys, position: int, folder: Path | None, command: str,
            progress: bool) -> np.ndarray:
    """``(BLOCKS, epochs)``: every block's errors of one (depth, set, position), from the cache where it holds them
    (computed and kept one block at a time where it does not)."""
    from tqdm import tqdm

    parts = prompt_blocks(len(ys), BLOCKS)
    if folder is None:
        return np.stack([block_errors(cfg, depth, xs, ys, position, sl) for sl in parts])
    path, settings = _path(folder, depth, name, position), _settings(cfg, depth, name, position, len(ys))
    done = _cached(path, settings, command)
    if len(done) < len(parts):
        with one_writer(path, f"MLP cache {path.name}"):
            done = _cached(path, settings, command)  # another process may have added blocks meanwhile
            t0 = time.perf_counter()
            for k in tqdm([k for k in range(len(parts)) if k not in done], desc=f"MLP {path.stem}",
                          disable=not progress):
                done[k] = block_errors(cfg, depth, xs, ys, position, parts[k]).tolist()
                save_result(path, {"settings": settings, "blocks": {str(j): done[j] for j in sorted(done)}},
                            provenance=provenance(command=command, wall_time_s=time.perf_counter() - t0,
                                                  profile=cfg["profile"], seed=cfg["seed"]))
    return np.array([done[k] for k in range(len(parts))], dtype=float)


def rows(cfg, depth: int, prompts: dict, *, folder: Path | None = None, command: str = "",
         progress: bool = False) -> tuple[list[dict], list[dict]]:
    """The MLP on every paired set of ``prompts`` (``{set name: (spec, xs, ys)}``; the sets named
    :data:`~icdl.gpt_icl.core.evaluation.PAIRED`…): its R² per position at its best epoch (rows with ``depth``,
    ``set``, ``method``, ``position``, ``r2``), the epoch chosen on all the set's prompts, and its squared error per
    block at that epoch (rows as :func:`~icdl.gpt_icl.core.evaluation.block_rows`'). ``folder``: the cache of the
    block errors (None: computed here, kept nowhere)."""
    from icdl.gpt_icl.core.evaluation import PAIRED, mlp_positions

    curves, blocks = [], []
    method = bl.mlp_method(depth)
    for name, (spec, xs, ys) in prompts.items():
        if not name.startswith(PAIRED):
            continue
        sse = {}
        for p in mlp_positions(cfg):
            errors = _errors(cfg, depth, name, xs, ys, p, folder, command, progress)  # (blocks, epochs)
            y = ys[:, p].double()
            spread = float(((y - y.mean()) ** 2).sum())
            if not spread > 0:
                raise ValueError(f"R² across prompts is undefined where the labels are the same in every prompt "
                                 f"({name}, position {p + 1})")
            r2 = 1 - errors.sum(0) / spread
            best = int(np.argmax(r2))
            curves.append({"depth": depth, "set": name, "method": method, "position": p + 1, "r2": float(r2[best])})
            sse[p + 1] = errors[:, best]
        blocks += [{"depth": depth, "model": method, "seed": -1, "set": name, "position": q, "sse": sse[q].tolist()}
                   for q in spec["positions"]]
    return curves, blocks


def units(cfg) -> list[tuple[str, int, str, int]]:
    """Every file of a profile's MLP, in a fixed order: per target depth, the curves' MLP (``("curves", depth, "",
    -1)``: :func:`~icdl.gpt_icl.core.evaluation.cached_baselines`, the figures' R² per position), then every
    (part, depth, paired set, 0-based MLP position) of the main part's paired set and of the shifted targets' (part
    ``shift``)."""
    from icdl.gpt_icl.core.evaluation import PAIRED, judged_sets, mlp_positions

    out = []
    for depth in cfg["depths"]:
        out.append(("curves", depth, "", -1))
        for part, shift in (("main", False), ("shift", True)):
            out += [(part, depth, name, p) for name in judged_sets(cfg, shift=shift) if name.startswith(PAIRED)
                    for p in mlp_positions(cfg)]
    return out


def _cost(cfg, unit: tuple[str, int, str, int]) -> float:
    """A file's work in prompt-positions times the target depth (the MLP's cost grows with both)."""
    from icdl.gpt_icl.core.evaluation import curve_prompts, judged_sets, mlp_positions

    part, depth, name, _ = unit
    prompts = (curve_prompts(cfg) * len(mlp_positions(cfg)) if part == "curves"
               else judged_sets(cfg, shift=part == "shift")[name]["count"])
    return float(prompts * depth)


def shard_units(cfg, shard: tuple[int, int]) -> list[tuple[str, int, str, int]]:
    """The files of shard ``(i, n)``: :func:`units` dealt largest first to the shard with the least work so far
    (every shard gets about the same hours; the deal depends on the profile alone)."""
    i, n = shard
    if not (n >= 1 and 0 <= i < n):
        raise ValueError(f"a shard is I/N with 0 <= I < N, got {i}/{n}")
    load, mine = [0.0] * n, []
    for unit in sorted(units(cfg), key=lambda u: -_cost(cfg, u)):  # a stable sort: ties keep units()'s order
        k = min(range(n), key=lambda j: (load[j], j))
        load[k] += _cost(cfg, unit)
        if k == i:
            mine.append(unit)
    return mine


def fill(cfg, folder: Path, shard: tuple[int, int], *, command: str, progress: bool = True) -> list[Path]:
    """Compute and keep every block of the files of shard ``(i, n)`` (:func:`shard_units`) that the cache in
    ``folder`` does not hold yet; returns their files."""
    from icdl.gpt_icl.core.evaluation import cached_baselines, judged_sets, set_prompts
    from icdl.gpt_icl.core.main_study import MAIN_COMMAND

    done = []
    for part, depth, name, p in shard_units(cfg, shard):
        if part == "curves":
            cached_baselines(cfg, depth, folder, progress, command=MAIN_COMMAND.format(profile=cfg["profile"]))
            done.append(Path(folder) / f"baselines_depth{depth}.json")
            continue
        spec = judged_sets(cfg, shift=part == "shift")[name]
        xs, ys = set_prompts(cfg, depth, spec)
        _errors(cfg, depth, name, xs, ys, p, folder, command, progress)
        done.append(_path(folder, depth, name, p))
    return done


# ---- the command: python -m icdl.gpt_icl.core.paired_mlp --profile P --shard I/N ----------------------------------

PROG = "python -m icdl.gpt_icl.core.paired_mlp"


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    from icdl.gpt_icl.core.main_study import PROFILES
    from icdl.repro.cli import Parser

    p = Parser(prog=PROG, description="Train the MLP on the prompt on the paired sets of a profile of the main study, "
                                      "one shard of its (depth, set, position) files, and keep every block's errors "
                                      "beside the profile's checkpoints, for python -m icdl.gpt_icl --part main and "
                                      "--part shift to read.")
    p.add_argument("--profile", required=True, choices=[n for n in PROFILES.names if n != "quick"],
                   help="the main study's profile whose checkpoints folder keeps the files")
    p.add_argument("--shard", default="0/1", metavar="I/N", help="compute every N-th file from the I-th (0-based)")
    return p


def main(argv: list[str] | None = None) -> int:
    import sys

    from icdl.gpt_icl.core.main_study import MAIN_COMMAND, PROFILES
    from icdl.repro.profiles import ProfileError, dry_run

    p = parser()
    args = p.parse_args(argv)
    try:
        i, n = (int(x) for x in args.shard.split("/"))
    except ValueError:
        p.error(f"--shard must be I/N (e.g. 0/2), got {args.shard!r}")
    if not (n >= 1 and 0 <= i < n):
        p.error(f"--shard must be I/N with 0 <= I < N, got {args.shard}")
    try:
        cfg = PROFILES.resolve(args.profile)
        files = shard_units(cfg, (i, n))
        if dry_run(f"{PROG}, profile {args.profile}: shard {i}/{n}, {len(files)} of {len(units(cfg))} files"):
            return 0
        command = f"{PROG} --profile {args.profile} --shard {i}/{n}"
        done = fill(cfg, PROFILES.folder("checkpoints", args.profile), (i, n), command=command)
    except (ProfileError, ResultFileError, ValueError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    print(f"kept {len(done)} files of the MLP's block errors; {MAIN_COMMAND.format(profile=args.profile)} (and "
          "--part shift) read them")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
