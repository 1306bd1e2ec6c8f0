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
time (:func:`icdl.repro.files.one_writer`).

=========================  ========================================================================================
:func:`block_errors`       one unit: the squared error of a block's MLPs after every epoch
:func:`errors`             every block of one (depth, set, position), from its file where it holds them
:func:`rows`               the paired sets' MLP rows of a result (R² per position, squared error per block)
=========================  ========================================================================================

:mod:`icdl.gpt_icl.core.paired_mlp` deals the files into shards and is the command that computes one.
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


def file_path(folder: Path, depth: int, name: str, position: int) -> Path:
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


def errors(cfg, depth: int, name: str, xs, ys, position: int, folder: Path | None, command: str,
            progress: bool) -> np.ndarray:
    """``(BLOCKS, epochs)``: every block's errors of one (depth, set, position), from the cache where it holds them
    (computed and kept one block at a time where it does not)."""
    from tqdm import tqdm

    parts = prompt_blocks(len(ys), BLOCKS)
    if folder is None:
        return np.stack([block_errors(cfg, depth, xs, ys, position, sl) for sl in parts])
    path, settings = file_path(folder, depth, name, position), _settings(cfg, depth, name, position, len(ys))
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
            errs = errors(cfg, depth, name, xs, ys, p, folder, command, progress)  # (blocks, epochs)
            y = ys[:, p].double()
            spread = float(((y - y.mean()) ** 2).sum())
            if not spread > 0:
                raise ValueError(f"R² across prompts is undefined where the labels are the same in every prompt "
                                 f"({name}, position {p + 1})")
            r2 = 1 - errs.sum(0) / spread
            best = int(np.argmax(r2))
            curves.append({"depth": depth, "set": name, "method": method, "position": p + 1, "r2": float(r2[best])})
            sse[p + 1] = errs[:, best]
        blocks += [{"depth": depth, "model": method, "seed": -1, "set": name, "position": q, "sse": sse[q].tolist()}
                   for q in spec["positions"]]
    return curves, blocks


