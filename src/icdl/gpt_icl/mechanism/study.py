"""Which algorithm does a trained transformer run? The study itself (chapter ``gpt_mechanism``): every trained
model of the main study held against candidate in-context algorithms run on the same prompts
(:mod:`~icdl.gpt_icl.core.algorithms`): GD on an N-layer network of the target's architecture, the Adam-trained
MLP of ICDL's baseline, least squares, ridge, 3-NN and the context mean. Three measures per query position, over
the prompts ``b`` (:func:`~icdl.gpt_icl.mechanism.measures.alignment`):

* ``pred_diff`` -- ``Σ_b (ŷ_model − ŷ_alg)² / Σ_b (y − ȳ)²``: the squared prediction difference on the
  scale of R²'s denominator (0: the same predictions; 1: as far apart as the labels spread);
* ``sens_diff`` -- ``Σ_b ‖s_model − s_alg‖² / Σ_b ‖s_model‖²`` for the sensitivities ``s = ∂ŷ/∂x_query``;
* ``cosine`` -- the mean over prompts of the cosine between the two sensitivities (undefined, NaN, for
  3-NN and the context mean, whose prediction does not move with the query almost everywhere).

The free settings of a candidate family -- (η, L, initial scale) for GD, λ for ridge -- are chosen per
model on held-out *scan* prompts (their own seeds), as the member of the family nearest the model (the
smallest mean ``pred_diff`` over positions); every number the claims read is then measured on the test
prompts of :mod:`~icdl.gpt_icl.core.evaluation`.

==================  ===================================================================================
:data:`PROFILES`    ``seeds`` (the chapter's design: every seed's model of the main study on the flow grid,
                    ``python -m icdl.gpt_icl.mechanism --profile seeds --workers 2``, about 70 minutes on two
                    cores), ``control`` (the positive control: the same architecture and schedule trained on
                    linear, depth-1 targets, checkpoints local: ``--profile control``, about 20 minutes on one
                    core), ``paper`` (the seeds design on the paper profile's models, for a GPU), ``quick``
                    (tests: models trained in memory, a small grid)
:func:`study`       scan, choose and measure for every model (:func:`run`: on ``--workers`` processes)
:func:`write`,      the result file ``mechanism.<profile>.json`` and back (:func:`committed`: a command-only
:func:`load`        profile's, as the chapter reads it)
==================  ===================================================================================
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from icdl.gpt_icl.core import main_study
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.schedule import train_pair
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.mechanism.measures import (
    SHIFTED,
    choose,
    fixed_candidates,
    gd_grid,
    measure,
    measure_prompts,
    scan_prompts,
)
from icdl.gpt_icl.mechanism.seeds import (
    replay,
)
from icdl.repro.cli import Parser, at_least_one
from icdl.repro.files import ResultFileError, one_writer
from icdl.repro.profiles import ProfileSet, dry_run
from icdl.repro.results import save_profile_result

_BOTH = (PRETRAINING, SHIFTED)
#: the sizes at which the main study's models are measured: prompts to scan and to measure, the positions
_MAIN_SIZES = {"scan_prompts": 256, "measure_prompts": 512, "positions": (2, 5, 10, 20, 30, 39)}
#: GD's grid read in gradient-flow time T = ηL (with ridge's λ): every chosen member inside it in start scale and
#: flow time, a chosen η at an edge only where the neighbouring η at the same T leaves the scan flat
#: (:func:`~icdl.gpt_icl.mechanism.grid.flow_edges`)
_FLOW_GRID = {"etas": (0.0125, 0.025, 0.05), "gd_steps": 8192, "init_scales": (0.125, 0.25, 0.5, 1.0),
              "lambdas": (0.01, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0)}
_OWN = {
    # ``quick`` (tests and a look at the study's workings): models trained here in memory, a small grid
    "quick": {"models": "main", "scan_prompts": 64, "measure_prompts": 128, "positions": (2, 5, 10, 19),
              "etas": (0.1, 0.3, 1.0), "gd_steps": 64, "init_scales": (0.5,), "lambdas": (0.1, 1.0), "mixtures": _BOTH},
    # ``seeds`` (``mech-seeds-*``, the chapter's design): every seed's model of each depth and attention of the
    # main study (``models = "seeds"``), each with its own GD and ridge members chosen on the flow grid, measured
    # on the pretraining mixture; GD's grid and the fixed candidates are computed once per depth
    "seeds": {"models": "seeds", **_MAIN_SIZES, **_FLOW_GRID, "mixtures": (PRETRAINING,)},
    # ``seeds-n01`` (``mech-seeds-*-n01``): the same design on the models of main-study profile ``n01`` (inputs from
    # N(0, I), where a linear fit leaves much of the label variance, trained at the schedule its scan fitted)
    "seeds-n01": {"models": "seeds", **_MAIN_SIZES, **_FLOW_GRID, "mixtures": (PRETRAINING,)},
    # ``paper``: the same design on the paper profile's models (a command for a GPU)
    "paper": {"models": "seeds", "scan_prompts": 512, "measure_prompts": 1024,
              "positions": (2, 5, 10, 20, 30, 40, 50), **_FLOW_GRID, "mixtures": (PRETRAINING,)},
    # ``control``: the positive control -- the main study's architecture and schedule trained here on depth-1
    # (linear) targets, where the literature finds a trained transformer close to a least-squares fit; measured
    # on the grid it was registered with
    "control": {"models": "control", "depths": (1,), **_MAIN_SIZES, "etas": (0.1, 0.2, 0.5, 1.0, 2.0),
                "gd_steps": 1024, "init_scales": (0.25, 0.5, 1.0), "lambdas": (0.01, 0.1, 0.3, 1.0, 3.0, 10.0),
                "mixtures": _BOTH},
}
#: the main study's profile each profile's models and training settings come from
_BASE = {"quick": "quick", "seeds": "reference", "seeds-n01": "n01", "paper": "paper", "control": "reference"}
PROFILES = ProfileSet(
    "gpt_mechanism",
    profiles={name: {**main_study.PROFILES.profiles[_BASE[name]], **own} for name, own in _OWN.items()},
    ranges={**main_study.PROFILES.ranges, "models": {"main", "control", "seeds"},
            "mixtures": {_BOTH, (PRETRAINING,)}, "scan_prompts": (8, 10**5),
            "measure_prompts": (8, 10**5), "positions": (1, 199), "etas": (1e-4, 100.0), "gd_steps": (1, 10**5),
            "init_scales": (1e-3, 10.0), "lambdas": (1e-6, 1e6)},
    command="python -m icdl.gpt_icl.mechanism --profile {profile}",
    memory=main_study.memory_estimate,
    command_only=("control", "seeds", "seeds-n01"),  # the chapter reads their results; only the command makes them
)

#: where the control's models are checkpointed (local: the result file records what the judge reads)
CONTROL_FOLDER = ("checkpoints", "control")


def _check(cfg) -> None:
    if max(cfg["positions"]) >= cfg["test_examples"]:
        raise ValueError(f"positions must be < test_examples={cfg['test_examples']}, got {cfg['positions']}")
    if cfg["measure_prompts"] > cfg["test_prompts"]:
        raise ValueError(f"measure_prompts={cfg['measure_prompts']} exceeds test_prompts={cfg['test_prompts']}")


def _models(cfg, progress: bool) -> dict:
    """The trained models the profile asks: every seed's model of the main study, from its checkpoints
    (``models = "seeds"``: ``{(depth, attention, seed): model}``); the control's, trained on linear targets;
    or (``models = "main"``, profile quick) the main study's quick models, trained here in memory."""
    if cfg["models"] == "seeds":
        base = {**cfg, "profile": _BASE[cfg["profile"]]}
        return main_study.reference_models(base, seeds=tuple(range(cfg["seeds"])), names=ATTENTIONS)
    control = cfg["models"] == "control"  # trained (or resumed) from checkpoints of their own
    out = {}
    for depth in cfg["depths"]:
        pair = train_pair(cfg, depth, cfg["n_layer"], progress=progress,
                          **({"command": PROFILES.command.format(profile=cfg["profile"]),
                              "folder": PROFILES.folder(*CONTROL_FOLDER)} if control else
                             {"command": main_study.MAIN_COMMAND.format(profile="quick")}))
        if control and not pair["complete"]:
            raise ValueError(f"the control's models at depth {depth} did not finish training")
        out |= {(depth, att): pair[att]["model"] for att in ATTENTIONS}
    return out


def study(cfg, *, models: dict | None = None, progress: bool = True) -> dict:
    """Scan, choose and measure for every trained model (``models``: ``{(depth, attention): model}``, or
    ``{(depth, attention, seed): model}`` with a column ``seed`` in every frame; default the profile's), on the
    profile's ``mixtures``. Returns ``{"alignment", "chosen", "gd_scan", "examples", "blocks", "gd_fit", "complete",
    "seconds"}`` (``blocks``: the measures' sums per block of prompts,
    :func:`~icdl.gpt_icl.mechanism.measures.measure`; ``gd_fit``: GD's own loss and R² over its grid per depth,
    :func:`~icdl.gpt_icl.mechanism.measures.gd_grid`)."""
    from tqdm import tqdm

    _check(cfg)
    t0 = time.perf_counter()
    models = _models(cfg, progress) if models is None else models
    pos = list(cfg["positions"])
    rows, chosen_rows, scans, examples, sums, fits = [], [], [], [], [], []
    seeded = all(len(k) == 3 for k in models)
    order = sorted(models, key=lambda k: (k[0], ATTENTIONS.index(k[1]), k[2:]))  # by depth, attention, seed
    for depth in sorted({k[0] for k in models}):
        xs, ys = scan_prompts(cfg, depth)
        grid, fit = gd_grid(cfg, depth, xs, ys, fit=True)  # the same for every model of this depth, as are:
        fits.append(fit.assign(depth=depth))
        fixed = {m: fixed_candidates(cfg, depth, *measure_prompts(cfg, depth, m)) for m in cfg["mixtures"]}
        for key in tqdm([k for k in order if k[0] == depth], desc=f"mechanism depth {depth}", disable=not progress):
            model, tag = models[key], {"depth": depth, "attention": key[1]} | ({"seed": key[2]} if seeded else {})
            with torch.no_grad():
                pm_scan = model(xs, ys)[:, pos]
            ch = choose(cfg, depth, pm_scan, xs, ys, grid)
            chosen_rows.append({**tag, **{f"gd_{k}": v for k, v in ch["gd"].items()},
                                "ridge_lambda": ch["ridge"]["lambda"], "ridge_pred_diff": ch["ridge"]["pred_diff"]})
            scans.append(ch["gd_scan"].assign(**tag))
            for mixture in cfg["mixtures"]:
                table, ex, blocks = measure(model, cfg, depth, mixture, ch, fixed[mixture])
                rows.append(table.assign(**tag))
                examples.append(ex.assign(**tag))
                sums.append(blocks.assign(**tag))
    extra = {}
    if cfg["models"] == "seeds":  # the checkpoints are the models the main study judged (they stay local)
        from icdl.repro.results import load_result

        base = _BASE[cfg["profile"]]
        stored = load_result(main_study.PROFILES.folder() / f"icl.{base}.json", profile=base)["data"]["blocks"]
        extra["replay"] = replay(cfg, models, stored)
    return extra | {"alignment": pd.concat(rows, ignore_index=True), "chosen": pd.DataFrame(chosen_rows),
            "gd_scan": pd.concat(scans, ignore_index=True), "examples": pd.concat(examples, ignore_index=True),
            "blocks": pd.concat(sums, ignore_index=True), "gd_fit": pd.concat(fits, ignore_index=True),
            "complete": True, "seconds": time.perf_counter() - t0}


def _one_depth(cfg: dict, depth: int, threads: int) -> dict:
    """A worker of :func:`run`: the study of one target depth's models, on ``threads`` torch threads."""
    torch.set_num_threads(threads)
    return study({**cfg, "depths": (depth,)}, progress=False)


def run(cfg, *, workers: int = 1, threads: int = 1, progress: bool = True, keep: bool = False) -> dict:
    """:func:`study` of every model of the profile, on ``workers`` processes: each target depth's models in one
    process (the largest depth first: GD's network costs in proportion to its depth), the parts joined in depth
    order -- the same result as one process, since every prompt, start and candidate is seeded per depth. With
    ``keep`` (the command) each depth's part is kept in its own file as it finishes (:func:`unit_path`) and a later
    call reads it back instead of measuring again; ``seconds`` is then the parts' sum."""
    if not keep and (workers == 1 or len(cfg["depths"]) == 1):
        return study(cfg, progress=progress)
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    t0 = time.perf_counter()
    parts = {d: part for d in cfg["depths"] if (part := _kept(cfg, d) if keep else None) is not None}
    todo = sorted(set(cfg["depths"]) - set(parts), reverse=True)

    def finished(depth: int, part: dict) -> None:
        parts[depth] = part
        if keep:
            _keep(cfg, depth, part)
        if progress:
            print(f"mechanism: target depth {depth} done after {(time.perf_counter() - t0) / 60:.1f} min", flush=True)

    if workers == 1 or len(todo) <= 1:
        for d in todo:
            finished(d, _one_depth(dict(cfg), d, threads))
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            jobs = {pool.submit(_one_depth, dict(cfg), d, threads): d for d in todo}
            for job in as_completed(jobs):
                finished(jobs[job], job.result())
    seconds = sum(p["seconds"] for p in parts.values()) if keep else time.perf_counter() - t0
    return join(parts) | {"seconds": seconds}


def unit_path(cfg, depth: int) -> Path:
    """Where one target depth's part of a command's run is kept while the run goes on:
    ``results/gpt_mechanism/checkpoints/<profile>/mechanism_depth<d>.json`` (committed for the seeds profiles, so
    that a run longer than a session resumes on another machine)."""
    return PROFILES.folder("checkpoints", cfg["profile"]) / f"mechanism_depth{depth}.json"


def _kept(cfg, depth: int) -> dict | None:
    """A depth's kept part (frames, ``complete``, ``seconds``), or None: none kept, or an override run (which keeps
    nothing). A part made by other code is refused in one line: finish the run at its commit, or delete it."""
    from icdl.repro.results import load_kept_part

    d = None if cfg["overrides"] else load_kept_part(unit_path(cfg, depth), profile=cfg["profile"],
                                                     what="the depth files")
    return None if d is None else {k: (pd.DataFrame(v) if isinstance(v, dict) else v) for k, v in d.items()}


def _keep(cfg, depth: int, part: dict) -> None:
    """Write a finished depth's part to :func:`unit_path` (not for an override run)."""
    from icdl.repro.results import frame_to_lists, provenance, save_result

    if cfg["overrides"]:
        return
    body = {k: frame_to_lists(v) if isinstance(v, pd.DataFrame) else v for k, v in part.items()}
    save_result(unit_path(cfg, depth), body,
                provenance=provenance(command=PROFILES.command.format(profile=cfg["profile"]),
                                      wall_time_s=part["seconds"], profile=cfg["profile"], seed=cfg["seed"]))


def join(parts: dict[int, dict]) -> dict:
    """The studies of single target depths (``{depth: study result}``, in any order) as one: every frame
    joined in depth order, ``complete`` if every part is."""
    order = sorted(parts)
    frames = sorted({k for p in parts.values() for k, v in p.items() if isinstance(v, pd.DataFrame)})
    return ({k: pd.concat([parts[d][k] for d in order if k in parts[d]], ignore_index=True) for k in frames}
            | {"complete": all(p["complete"] for p in parts.values())})


# ---- result file ------------------------------------------------------------------------------------------

FIELDS = ("alignment", "chosen", "gd_scan", "examples", "complete", "seconds")
#: written by every run since the positive control (``blocks``), GD's own fit over its grid (``gd_fit``) and, by
#: profile seeds, the replay of the main study's errors (``replay``, :func:`~icdl.gpt_icl.mechanism.seeds.replay`)
OPTIONAL_FIELDS = ("blocks", "gd_fit", "replay")


def write(res: dict, cfg, started: float, command: str | None = None, overrides: tuple[str, ...] = ()) -> Path:
    """``results/gpt_mechanism/mechanism.<profile>.json`` from a :func:`study` result."""
    data = {k: res[k] for k in FIELDS + OPTIONAL_FIELDS if k in res}
    return save_profile_result(PROFILES, "mechanism", data, profile=cfg["profile"], seed=cfg["seed"],
                               started=started, command=command, overrides=overrides)


def load(raw: dict) -> dict:
    """A committed result (an object of :func:`icdl.repro.results.load_result`) as frames."""
    d = raw["data"]
    return ({k: pd.DataFrame(d[k]) for k in FIELDS[:4] + tuple(f for f in OPTIONAL_FIELDS if f in d)}
            | {"complete": bool(d["complete"]), "seconds": d["seconds"], "provenance": raw["provenance"]})


def committed(profile: str) -> dict | None:
    """A command-only profile's committed result as the chapter reads it: its provenance shown
    (:func:`~icdl.repro.results.show_reference`) and its frames (:func:`load`); None while its run waits."""
    from icdl.repro.results import show_reference

    raw = show_reference(PROFILES, "mechanism", profile)
    return load(raw) if raw is not None else None


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    p = Parser(prog="python -m icdl.gpt_icl.mechanism",
               description="Which algorithm do the trained transformers of ICDL sec. 5 run?")
    p.add_argument("--profile", default="seeds", choices=PROFILES.names)
    p.add_argument("--threads", type=int, default=1, help="torch threads per process (default 1: one core)")
    p.add_argument("--workers", type=int, default=1, help="processes, one target depth each at a time (default 1)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m icdl.gpt_icl.mechanism --profile seeds [--workers N]``: the study on the main study's
    checkpoints, written with provenance to ``results/gpt_mechanism/mechanism.<profile>.json``."""
    p = parser()
    args = p.parse_args(argv)
    at_least_one(p, threads=args.threads, workers=args.workers)
    try:  # the profile as a whole checked here, its memory included: one line, no traceback
        cfg = PROFILES.resolve(args.profile)
    except ValueError as err:
        p.error(str(err))
    if dry_run(f"the mechanism study, profile {args.profile}, on {args.workers} process(es) of {args.threads} "
               "thread(s)"):
        return 0
    torch.set_num_threads(args.threads)
    t = time.perf_counter()
    try:  # the folder too: ICDL_ROOT that is not a folder is refused here, in one line
        target = PROFILES.folder() / f"mechanism.{args.profile}.json"
        with one_writer(target, f"result {target.name}"):  # one run of the study at a time
            path = write(run(cfg, workers=args.workers, threads=args.threads, keep=True), cfg, started=t)
    except (ResultFileError, ValueError) as err:
        p.exit(2, f"python -m icdl.gpt_icl.mechanism: error: {err}\n")
    print(f"wrote {path}")
    return 0
