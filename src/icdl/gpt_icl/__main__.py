"""``python -m icdl.gpt_icl``: the reference and paper runs of ICDL sec. 5 (train, evaluate, baselines),
resumable from checkpoints; ``--benchmark`` and ``--speed`` measure the computation."""

from __future__ import annotations

import argparse
import sys
import time

from ..book.results import provenance, save_result
from .speed import _benchmark, _speed
from .study import PROFILES, _result_data, depths, run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="reference", choices=["reference", "paper"])
    p.add_argument("--steps-this-call", type=int, default=None, help="train at most this many steps per model")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--benchmark", action="store_true",
                   help="only time the batched MLP baseline against a per-prompt loop (BENCHMARK_CASES)")
    p.add_argument("--speed", action="store_true",
                   help="only report the trained models' FLOP/s (from their checkpoints) against a large matmul")
    p.add_argument("--depths", default=None,
                   help="train and evaluate only these target depths (e.g. 6), to run depths in parallel "
                        "processes; a final call without it assembles the result file from the checkpoints")
    args = p.parse_args(argv)
    cfg = PROFILES.resolve(args.profile)
    if args.depths is not None:
        part = PROFILES.resolve(args.profile, depths=args.depths)
        depths(part)
        run(part, folder=PROFILES.folder("checkpoints", args.profile), steps_this_call=args.steps_this_call,
            device=args.device)
        print(f"depths {args.depths} done; run without --depths to write the result file")
        return 0
    if args.benchmark:
        return _benchmark(cfg, args.profile)
    if args.speed:
        return _speed(cfg, args.profile)
    folder = PROFILES.folder("checkpoints", args.profile)
    t = time.perf_counter()
    res = run(cfg, folder=folder, steps_this_call=args.steps_this_call, device=args.device)
    cmd = f"python -m icdl.gpt_icl --profile {args.profile}" + \
        (f" --steps-this-call {args.steps_this_call} (repeated until complete)" if args.steps_this_call else "")
    path = save_result(PROFILES.folder() / f"icl.{args.profile}.json", _result_data(res),
                       provenance=provenance(command=cmd, wall_time_s=time.perf_counter() - t,
                                             profile=args.profile, seed=cfg["seed"]))
    print(f"wrote {path} (complete: {res['complete']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
