"""``python -m icdl.gpt_icl``: the reference and paper runs of ICDL sec. 5, resumable from checkpoints.
The reference results it writes are shown in chapter ``gpt_icl``.

Four parts, each writing its own result file under ``results/gpt_icl/`` (all three by default):

* ``main`` -- objectives 1–2: the models of every target depth, evaluation, baselines -> ``icl.<profile>.json``;
* ``shift`` -- objective 3: the main models (from their checkpoints) on shifted target parameters
  -> ``shift.<profile>.json``;
* ``depth`` -- objective 4: models of several depths -> ``depth.<profile>.json``;
* ``plateau`` -- the context-mean plateau study -> ``plateau.<profile>.json``.

``--depths`` (main) and ``--layers`` (depth) train a subset, to spread the work over processes (one core
each); they write no result file, and a later plain call assembles it from the checkpoints.
``--workers N`` runs the whole reference as single-threaded jobs on N cores and records the wall time of
every stage (:mod:`icdl.gpt_icl.pipeline`, ``timing.<profile>.json``).
``--benchmark`` and ``--speed`` measure the computation instead.

Under ``torchrun`` (several processes, e.g. one per GPU) the models train data-parallel
(:mod:`icdl.gpt_icl.training`): every rank trains, rank 0 alone evaluates and writes::

    torchrun --nproc_per_node 4 -m icdl.gpt_icl --profile paper --device cuda
"""

from __future__ import annotations

import argparse
import sys
import time

from ..book.profiles import ProfileError
from ..book.results import frame_to_lists, provenance, save_result
from .depth import depth_study
from .pipeline import run_reference
from .plateau import plateau_runs, shortcut_analysis, signal_shares, summary
from .speed import _benchmark, _speed, smoke
from .study import PROFILES, _result_data, param_shift_curves, reference_models, run

PARTS = ("main", "shift", "depth", "plateau")


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, e.g. 3,6; got {text!r}") from None


def _save(name: str, data: dict, profile: str, cfg, command: str, started: float) -> None:
    path = save_result(PROFILES.folder() / f"{name}.{profile}.json", data,
                       provenance=provenance(command=command, wall_time_s=time.perf_counter() - started,
                                             profile=profile, seed=cfg["seed"]))
    print(f"wrote {path} (complete: {data['complete']})")


def _init_distributed(device: str) -> tuple[int, int, str]:
    """Join the process group ``torchrun`` describes in the environment (nccl on GPUs, gloo on CPUs);
    ``(world size, rank, device)``, with ``(1, 0, device)`` outside torchrun."""
    import os

    import torch
    import torch.distributed as dist

    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 1, 0, device
    if device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
    dist.init_process_group("nccl" if device == "cuda" else "gloo")
    return world, dist.get_rank(), device


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m icdl.gpt_icl", description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="reference", choices=["reference", "paper"])
    p.add_argument("--part", action="append", choices=PARTS, help="which part(s) to run (default: all)")
    p.add_argument("--steps-this-call", type=int, default=None, help="train at most this many steps per model")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--depths", type=_ints, default=None, help="main part: only these target depths, e.g. 6")
    p.add_argument("--layers", type=_ints, default=None, help="depth part: only these model depths, e.g. 8,10")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="run every part as single-threaded jobs, N at a time, and record each stage's time")
    p.add_argument("--benchmark", action="store_true",
                   help="only time the batched MLP baseline against a per-prompt loop (BENCHMARK_CASES)")
    p.add_argument("--speed", action="store_true",
                   help="only report the trained models' FLOP/s (from their checkpoints) against a large matmul")
    p.add_argument("--smoke", type=int, default=None, metavar="STEPS",
                   help="only time STEPS training steps of the profile's model on --device (the GPU smoke test)")
    args = p.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        p.error(f"--workers must be >= 1, got {args.workers}")
    if args.workers is not None and (args.part or args.depths or args.layers or args.steps_this_call
                                     or args.device != "cpu"):
        p.error("--workers runs the whole CPU reference: it does not combine with --part, --depths, --layers, "
                "--steps-this-call or --device cuda")
    if args.steps_this_call is not None and args.steps_this_call < 1:
        p.error(f"--steps-this-call must be >= 1, got {args.steps_this_call}")
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            p.error("--device cuda: no CUDA device is available on this machine; use --device cpu")
    try:
        # the smoke test only trains: the memory check of the whole profile's evaluation does not apply
        cfg = PROFILES.resolve(args.profile, test_prompts=64, mlp_prompts=64) if args.smoke is not None \
            else PROFILES.resolve(args.profile)
        if args.depths is not None:
            PROFILES.resolve(args.profile, depths=args.depths)
        if args.layers is not None:
            PROFILES.resolve(args.profile, depth_layers=args.layers)
    except ProfileError as err:
        p.error(str(err))
    if args.smoke is not None:
        if args.smoke < 1:
            p.error(f"--smoke must be >= 1 steps, got {args.smoke}")
        res = smoke(cfg, device=args.device, steps=args.smoke)
        print(f"{res['device']}: {res['steps_per_s']:.2f} steps/s, {res['achieved_flops'] / 1e12:.2f} TFLOP/s "
              f"achieved vs {res['matmul_flops'] / 1e12:.2f} TFLOP/s for a large matmul here "
              f"({100 * res['achieved_flops'] / res['matmul_flops']:.0f} %), peak memory "
              f"{res['peak_memory_bytes'] / 2**30:.2f} GiB")
        print(f"{args.profile} profile, {res['total_training_steps']:,} training steps: projected " + ", ".join(
            f"{h:.1f} h on {g}" for g, h in res["projected_hours"].items()) + " device(s) (ideal scaling)")
        return 0
    if args.workers is not None:
        return run_reference(cfg, args.profile, args.workers)
    if args.benchmark:
        return _benchmark(cfg, args.profile)
    if args.speed:
        return _speed(cfg, args.profile)
    world, rank, device = _init_distributed(args.device)
    if world > 1:
        args.device = device
    worker = rank != 0
    parts = args.part or list(PARTS)
    folder = PROFILES.folder("checkpoints", args.profile)
    suffix = f" --steps-this-call {args.steps_this_call} (repeated until complete)" if args.steps_this_call else ""
    base = f"python -m icdl.gpt_icl --profile {args.profile}"
    if "main" in parts:
        t = time.perf_counter()
        if args.depths is not None:
            run(PROFILES.resolve(args.profile, depths=args.depths), folder=folder,
                steps_this_call=args.steps_this_call, device=args.device, train_only=True)
            print(f"target depths {args.depths} trained; run without --depths to write the result file")
        else:
            res = run(cfg, folder=folder, steps_this_call=args.steps_this_call, device=args.device, train_only=worker)
            if not worker:
                _save("icl", _result_data(res), args.profile, cfg, f"{base} --part main{suffix}", t)
    if "shift" in parts and not worker:
        t = time.perf_counter()
        curves = param_shift_curves(reference_models(cfg, args.profile), cfg)
        _save("shift", {"curves": frame_to_lists(curves), "complete": True}, args.profile, cfg,
              f"{base} --part shift", t)
    if "depth" in parts:
        t = time.perf_counter()
        res = depth_study(cfg, folder=folder, layers=list(args.layers) if args.layers else None,
                          steps_this_call=args.steps_this_call, train_only=worker)
        if worker:
            res = None
        elif args.layers is not None:
            print(f"model depths {args.layers} trained; run without --layers to write the result file")
        else:
            data = {k: frame_to_lists(res[k]) for k in ("table", "baselines", "history", "training")}
            _save("depth", data | {"complete": res["complete"], "seconds": res["seconds"]}, args.profile, cfg,
                  f"{base} --part depth{suffix}", t)
    if "plateau" in parts:
        t = time.perf_counter()
        res = plateau_runs(cfg, folder=folder, steps_this_call=args.steps_this_call, device=args.device)
        if worker:
            return 0
        shares = signal_shares(cfg)
        shortcut = shortcut_analysis(res["models"]["ReLU, width 2d"], cfg)
        data = {"history": frame_to_lists(res["history"]), "levels": frame_to_lists(res["levels"]),
                "summary": frame_to_lists(summary(res["history"], res["levels"], shares)),
                "shortcut": frame_to_lists(shortcut), "complete": res["complete"]}
        _save("plateau", data, args.profile, cfg, f"{base} --part plateau{suffix}", t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
