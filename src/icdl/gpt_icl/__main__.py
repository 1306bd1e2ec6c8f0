"""``python -m icdl.gpt_icl``: the reference and paper runs of ICDL sec. 5, resumable from checkpoints.

Four parts, each writing its own result file (all four by default):

* ``main`` -- objectives 1–2 (chapter ``gpt_icl``): the models of every target depth, evaluation, baselines
  -> ``results/gpt_icl/icl.<profile>.json``;
* ``shift`` -- objective 3 (chapter ``gpt_icl``): the main models, from their checkpoints, on shifted target
  parameters -> ``results/gpt_icl/shift.<profile>.json``;
* ``depth`` -- objective 4 (chapter ``gpt_depth``): models of several depths
  -> ``results/gpt_depth/depth.<profile>.json``;
* ``plateau`` -- the context-mean plateau study (chapter ``gpt_plateau``)
  -> ``results/gpt_plateau/plateau.<profile>.json``.

``--depths`` and ``--seeds`` (main) and ``--layers`` (depth) train a subset, to spread the work over processes (one core
each); they write no result file, and a later plain call assembles it from the checkpoints.
``--workers N`` runs the whole reference as single-threaded jobs on N cores and records the wall time of
every stage (:mod:`icdl.gpt_icl.reference`, ``results/computation/timing.<profile>.json``).
``--benchmark`` and ``--speed`` measure the computation instead (``results/computation/``); ``--smoke``
times a few training steps on a device and writes nothing.

Under ``torchrun`` (several processes, e.g. one per GPU) the models train data-parallel
(:mod:`icdl.gpt_icl.core.training`): every rank trains, rank 0 alone evaluates and writes::

    torchrun --nproc_per_node 4 -m icdl.gpt_icl --profile paper --device cuda
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import nullcontext

from icdl.gpt_icl import depth, plateau
from icdl.gpt_icl.compute.speed import run_speed, save_measurement, smoke
from icdl.gpt_icl.core import main_study
from icdl.gpt_icl.core.measure import benchmark
from icdl.gpt_icl.objectives.flat import PROFILE as FLAT
from icdl.gpt_icl.objectives.n01 import COMMAND as N01_COMMAND
from icdl.gpt_icl.objectives.n01 import PROFILE as N01
from icdl.gpt_icl.reference import run_reference
from icdl.repro.cli import Parser, at_least_one, cuda_or_refuse, given_twice
from icdl.repro.files import ResultFileError, one_writer
from icdl.repro.profiles import ProfileError, dry_run

PARTS = ("main", "shift", "depth", "plateau")


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, e.g. 3,6; got {text!r}") from None


def torchrun_world(p: argparse.ArgumentParser) -> int:
    """The number of processes the environment asks for (``WORLD_SIZE``, set by ``torchrun``), checked before any
    work: a value that is not a whole number of at least 1, or a world of several processes without the rest of
    what ``torchrun`` sets (``RANK`` below it, ``MASTER_ADDR``, ``MASTER_PORT``), is refused in one line."""
    import os

    text = os.environ.get("WORLD_SIZE", "1")
    if not text.strip().isdigit() or int(text) < 1:
        p.error(f"WORLD_SIZE={text!r} must be a whole number of processes, at least 1 (torchrun sets it); unset it "
                "to train in one process")
    world = int(text)
    if world > 1:
        rank = os.environ.get("RANK", "")
        missing = [k for k in ("MASTER_ADDR", "MASTER_PORT") if not os.environ.get(k)]
        if not rank.strip().isdigit() or int(rank) >= world or missing:
            what = (f"RANK={rank!r} is not one of 0..{world - 1}" if rank and not missing else
                    "RANK is not set" if not rank else f"{', '.join(missing)} not set")
            p.error(f"WORLD_SIZE={world} asks for {world} processes, but {what}: start data-parallel training with "
                    f".venv/bin/torchrun --nproc_per_node {world} -m icdl.gpt_icl ..., or unset WORLD_SIZE")
    return world


def _init_distributed(device: str, world: int) -> tuple[int, int, str]:
    """Join the process group ``torchrun`` describes in the environment (nccl on GPUs, gloo on CPUs), ``world``
    processes (checked by :func:`torchrun_world`); ``(world size, rank, device)``, with ``(1, 0, device)`` outside
    torchrun."""
    import os

    import torch
    import torch.distributed as dist

    if world <= 1:
        return 1, 0, device
    if device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
    dist.init_process_group("nccl" if device == "cuda" else "gloo")
    return world, dist.get_rank(), device


#: the profiles that are the main study alone, asked again on another task or schedule (``--part main`` and
#: ``--part shift`` only), and what each is
MAIN_ONLY = {N01: "the main study with x ~ N(0, I)", "fitted": "the main study at the schedule fitted to ICDL's task",
             FLAT: "profile n01's models trained on until flat, the MLP on every test prompt"}


def main(argv: list[str] | None = None) -> int:
    """The command line; a refused file (a damaged, swapped or unfinished checkpoint, a result that does not
    load) ends it with one line naming the file and what to do, exit status 2, no traceback."""
    try:
        return _main(argv)
    except ResultFileError as err:
        print(f"python -m icdl.gpt_icl: error: {err}", file=sys.stderr)
        return 2


def parser() -> argparse.ArgumentParser:
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    p = Parser(prog="python -m icdl.gpt_icl", description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="reference", choices=["reference", "paper", *MAIN_ONLY],
                   help=f"{N01}: the main study with x ~ N(0, I); fitted: the main study at the schedule fitted to "
                        f"ICDL's task; {FLAT}: {N01}'s models trained on until flat (these three: --part main and "
                        "--part shift only)")
    p.add_argument("--part", action="append", choices=PARTS, help="which part(s) to run (default: all)")
    p.add_argument("--steps-this-call", type=int, default=None, help="train at most this many steps per model")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--depths", type=_ints, default=None, help="main part: only these target depths, e.g. 6")
    p.add_argument("--seeds", type=_ints, default=None, help="main or depth part: only these seeds (0, 1, …), e.g. 1,2")
    p.add_argument("--layers", type=_ints, default=None, help="depth part: only these model depths, e.g. 8,10")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="run every part as single-threaded jobs, N at a time, and record each stage's time")
    p.add_argument("--benchmark", action="store_true",
                   help="only time the batched MLP baseline against a per-prompt loop (BENCHMARK_CASES)")
    p.add_argument("--speed", action="store_true",
                   help="only time training steps of a fresh model of the profile against a same-run matmul")
    p.add_argument("--smoke", type=int, default=None, metavar="STEPS",
                   help="only time STEPS training steps of the profile's model on --device (the GPU smoke test)")
    return p


def _modes(args) -> list[str]:
    """The measuring commands given (``--smoke``, ``--workers``, ``--benchmark``, ``--speed``), as flags."""
    return [f for f, on in (("--smoke", args.smoke is not None), ("--workers", args.workers is not None),
                            ("--benchmark", args.benchmark), ("--speed", args.speed)) if on]


def _check_combinations(p: argparse.ArgumentParser, args) -> None:
    """Refuse, in one line, a flag that the chosen command would not use and a count below 1."""
    at_least_one(p, workers=args.workers, steps_this_call=args.steps_this_call)
    given_twice(p, "--part", args.part)
    modes = _modes(args)
    if len(modes) > 1:
        p.error(f"{' and '.join(modes)} are separate commands: give one of them")
    training = [f for f, on in (("--part", args.part), ("--depths", args.depths), ("--seeds", args.seeds),
                                ("--layers", args.layers),
                                ("--steps-this-call", args.steps_this_call is not None)) if on]
    if modes and modes[0] != "--workers" and training:
        p.error(f"{modes[0]} measures the computation and trains no study: it does not take {', '.join(training)}")
    if args.depths is not None and args.part != ["main"]:
        p.error("--depths trains a subset of the main models: it needs --part main alone")
    if args.seeds is not None and args.part not in (["main"], ["depth"]):
        p.error("--seeds trains a subset of the main or the depth study's models: it needs --part main or "
                "--part depth alone")
    if args.layers is not None and args.part != ["depth"]:
        p.error("--layers trains a subset of the depth study's models: it needs --part depth alone")
    if args.workers is not None and (args.part or args.depths or args.seeds or args.layers or args.steps_this_call
                                     or args.device != "cpu"):
        p.error("--workers runs the whole CPU reference: it does not combine with --part, --depths, --seeds, "
                "--layers, --steps-this-call or --device cuda")
    if args.workers is not None and args.profile == "paper":
        p.error("--workers runs the whole study on CPU cores; the paper profile is for a GPU: use --device cuda "
                "(or torchrun) without --workers")
    if args.profile in MAIN_ONLY and (not args.part or set(args.part) - {"main", "shift"} or _modes(args)):
        p.error(f"--profile {args.profile} is {MAIN_ONLY[args.profile]}: it runs --part main and --part shift "
                f"only, each given (e.g. {N01_COMMAND.replace(N01, args.profile)})")
    if (args.benchmark or args.speed) and args.device != "cpu":
        p.error(f"{modes[0]} times the CPU: it does not take --device {args.device} (--smoke times a device)")
    if args.part == ["shift"]:
        unused = [f for f, on in (("--steps-this-call", args.steps_this_call is not None),
                                  ("--device cuda", args.device != "cpu")) if on]
        if unused:
            p.error(f"--part shift evaluates the trained main models on the CPU and trains nothing: it does not "
                    f"take {', '.join(unused)}")


def _subset(p: argparse.ArgumentParser, flag: str, given, profile_values, profile: str) -> None:
    """Refuse ``--depths``/``--layers`` values outside the profile's: no result of the profile reads them."""
    extra = [v for v in given or () if v not in profile_values]
    if extra:
        p.error(f"{flag} {','.join(map(str, extra))}: not a model of profile {profile} (its {flag[2:]}: "
                f"{','.join(map(str, profile_values))}); no result reads it")


def _described(args, parts) -> str:
    """What the dry run says it would run: every flag that acts, with its value."""
    modes = _modes(args)
    value = {"--smoke": f" {args.smoke} steps", "--workers": f" {args.workers}"}.get(modes[0], "") if modes else ""
    what = f"{modes[0]}{value}" if modes else f"parts {', '.join(parts)}" + (
        f", depths {args.depths}" if args.depths else "") + (f", seeds {args.seeds}" if args.seeds else "") + (
        f", layers {args.layers}" if args.layers else "") + (
        f", {args.steps_this_call} steps this call" if args.steps_this_call else "")
    return f"python -m icdl.gpt_icl, profile {args.profile}: {what} on {args.device}"


def _main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    _check_combinations(p, args)
    cuda_or_refuse(p, args.device)
    try:
        # the smoke test only trains: the memory check of the whole profile's evaluation does not apply
        cfg = main_study.PROFILES.resolve(args.profile, test_prompts=64, mlp_prompts=64) if args.smoke is not None \
            else main_study.PROFILES.resolve(args.profile)
        parts = args.part or list(PARTS)
        measuring = args.smoke is not None or args.workers is not None or args.benchmark or args.speed
        if not measuring:  # each part's settings, checked (memory included) before any work
            _subset(p, "--depths", args.depths, main_study.PROFILES.profiles[args.profile]["depths"], args.profile)
            if "depth" in parts:
                _subset(p, "--layers", args.layers, depth.study.PROFILES.profiles[args.profile]["layers"], args.profile)
            study = depth.study if args.part == ["depth"] else main_study
            _subset(p, "--seeds", args.seeds, tuple(range(study.PROFILES.profiles[args.profile]["seeds"])),
                    args.profile)
            main_cfg = main_study.PROFILES.resolve(args.profile, **({"depths": args.depths} if args.depths else {}))
            depth_cfg = depth.study.PROFILES.resolve(args.profile, **({"layers": args.layers} if args.layers else {})) \
                if "depth" in parts else None
            plateau_cfg = plateau.study.PROFILES.resolve(args.profile) if "plateau" in parts else None
    except ProfileError as err:
        p.error(str(err))
    at_least_one(p, smoke=args.smoke)  # after the settings: the smoke test gets past the study's memory check
    world = torchrun_world(p)
    if dry_run(_described(args, parts)):
        return 0
    if args.smoke is not None:
        res = smoke(cfg, device=args.device, steps=args.smoke)
        print(f"{res['device']}: {res['steps_per_s']:.2f} steps/s, {res['achieved_flops'] / 1e12:.2f} TFLOP/s "
              f"achieved vs {res['matmul_flops'] / 1e12:.2f} TFLOP/s for a large matmul here "
              f"({100 * res['achieved_flops'] / res['matmul_flops']:.0f} %), peak memory "
              f"{res['peak_memory_bytes'] / 2**30:.2f} GiB")
        print(f"{args.profile} profile, {res['total_training_steps']:,} training steps: projected " + ", ".join(
            f"{h:.1f} h on {g}" for g, h in res["projected_hours"].items()) + " device(s) (ideal scaling)")
        return 0
    if args.workers is not None:
        return run_reference(args.profile, args.workers, cfg["seed"])
    if args.benchmark or args.speed:
        started = time.perf_counter()
        name = "benchmark" if args.benchmark else "speed"
        res = {"cases": benchmark(cfg)} if args.benchmark else run_speed(cfg)
        print(f"wrote {save_measurement(cfg, name, res, started)}")
        return 0
    world, rank, device_ = _init_distributed(args.device, world)
    worker = rank != 0
    suffix = f" --steps-this-call {args.steps_this_call} (repeated until complete)" if args.steps_this_call else ""
    base = f"python -m icdl.gpt_icl --profile {args.profile}"
    train = {"steps_this_call": args.steps_this_call, "train_only": worker}
    def writer(study, stem: str):  # the result file of a part has one writer at a time
        path = study.PROFILES.folder() / f"{stem}.{args.profile}.json"
        return one_writer(path, f"result {path.name}") if not worker else nullcontext()

    if "main" in parts:
        t = time.perf_counter()
        folder = main_study.PROFILES.folder("checkpoints", args.profile)
        if args.depths is not None or args.seeds is not None:
            main_study.run(main_cfg, folder=folder, device=device_, seeds=args.seeds, **{**train, "train_only": True})
            print(f"target depths {args.depths or 'all'}, seeds {args.seeds or 'all'} trained; run without --depths "
                  "and --seeds to write the result file")
        else:
            with writer(main_study, "icl"):
                res = main_study.run(cfg, folder=folder, device=device_, **train)
                if not worker:
                    data = {k: res[k] for k in main_study.RESULTS["icl"]}
                    _wrote(main_study.write("icl", data, cfg, f"{base} --part main{suffix}", t), data)
    if "shift" in parts and not worker:
        t = time.perf_counter()
        with writer(main_study, "shift"):
            data = main_study.param_shift(main_study.reference_models(cfg), cfg,
                                          folder=main_study.PROFILES.folder("checkpoints", args.profile))
            data |= {"complete": True}
            _wrote(main_study.write("shift", data, cfg, f"{base} --part shift", t), data)
    if "depth" in parts:
        t = time.perf_counter()
        subset = args.layers is not None or args.seeds is not None
        with writer(depth.study, "depth") if not subset else nullcontext():
            res = depth.study.depth_study(depth_cfg, folder=depth.study.PROFILES.folder("checkpoints", args.profile),
                                    layers=list(args.layers) if args.layers else None, seeds=args.seeds,
                                    device=device_, **({**train, "train_only": True} if subset else train))
            if subset and not worker:
                print(f"model depths {args.layers or 'all'}, seeds {args.seeds or 'all'} trained; run without "
                      "--layers and --seeds to write the result file")
            elif not worker:
                _wrote(depth.study.write(res, depth_cfg, f"{base} --part depth{suffix}", t), res)
    if "plateau" in parts:
        t = time.perf_counter()
        folder = plateau.study.PROFILES.folder("checkpoints", args.profile)
        if worker:
            plateau.study.plateau_runs(plateau_cfg, folder=folder, steps_this_call=args.steps_this_call, device=device_)
            return 0
        with writer(plateau.study, "plateau"):
            res = plateau.study.study(plateau_cfg, folder=folder, steps_this_call=args.steps_this_call, device=device_)
            _wrote(plateau.study.write(res, plateau_cfg, f"{base} --part plateau{suffix}", t), res)
    return 0


def _wrote(path, data: dict) -> None:
    print(f"wrote {path} (complete: {data['complete']})")


if __name__ == "__main__":
    sys.exit(main())
