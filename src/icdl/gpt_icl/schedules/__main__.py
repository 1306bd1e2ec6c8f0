"""``python -m icdl.gpt_icl.schedules``: the schedule scan of one task (:mod:`icdl.gpt_icl.schedules.scan`).

Each run of the grid keeps a checkpoint (``results/gpt_n01/checkpoints/scan_<profile>/``, not committed), so a
stopped scan resumes where it stopped; the result file is written once every run has finished."""

from __future__ import annotations

import sys

from icdl.gpt_icl.schedules.scan import PROFILES, run
from icdl.repro.checkpoints import CheckpointError
from icdl.repro.cli import Parser, at_least_one, cuda_or_refuse
from icdl.repro.files import ResultFileError, one_writer
from icdl.repro.profiles import ProfileError, dry_run

PROG = "python -m icdl.gpt_icl.schedules"


def parser() -> Parser:
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    p = Parser(prog=PROG, description="Train the reference model at every setting of a task's grid and record "
                                      "its validation curves (the schedule scan).")
    p.add_argument("--profile", default="quick", choices=PROFILES.names,
                   help="quick (CI), n01 and icdl (the reference model on each task), paper (a GPU)")
    p.add_argument("--steps-this-call", type=int, help="stop every run after this many more steps (resume later)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"), help="where the runs train")
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    at_least_one(p, steps_this_call=args.steps_this_call)
    cuda_or_refuse(p, args.device)
    try:
        cfg = PROFILES.resolve(args.profile)
        limit = f", {args.steps_this_call} steps per run this call" if args.steps_this_call else ""
        if dry_run(f"the schedule scan, profile {args.profile}{limit}, on {args.device}"):
            return 0
        folder = PROFILES.folder("checkpoints", f"scan_{cfg['profile']}")
        with one_writer(PROFILES.folder() / f"scan.{cfg['profile']}.json", f"the {cfg['profile']} schedule scan"):
            path = run(cfg, folder=folder, steps_this_call=args.steps_this_call, device=args.device)
    except (ProfileError, ResultFileError, CheckpointError, ValueError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}" if path else "not every run has finished: run the same command again to resume")
    return 0


if __name__ == "__main__":
    sys.exit(main())
