"""``python -m icdl.gpt_icl.recipes --profile n01|icdl [--shard I/N] [--steps-this-call K]``: the recipe scan
(:mod:`icdl.gpt_icl.recipes.scan`). With ``--shard`` only that shard's runs train (two processes: ``0/2`` and
``1/2``); the same command without it trains whatever is left and writes the result."""

from __future__ import annotations

import sys

from icdl.gpt_icl.recipes.run import run
from icdl.gpt_icl.recipes.scan import PROFILES
from icdl.repro.checkpoints import CheckpointError
from icdl.repro.cli import Parser, at_least_one, cuda_or_refuse
from icdl.repro.files import ResultFileError, one_writer
from icdl.repro.profiles import ProfileError, dry_run

PROG = "python -m icdl.gpt_icl.recipes"


def parser() -> Parser:
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    p = Parser(prog=PROG, description="Train every recipe of the scan per attention and seed, and record their "
                                      "validation curves (the recipe scan).")
    p.add_argument("--profile", default="quick", choices=PROFILES.names,
                   help="quick (CI), n01 (x ~ N(0, I)), icdl (ICDL's task, x ~ N(-2, I))")
    p.add_argument("--shard", default=None, metavar="I/N", help="train only shard I (0-based) of N of the runs")
    p.add_argument("--steps-this-call", type=int, help="stop every run after this many more steps (resume later)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"), help="where the runs train")
    return p


def _shard(p: Parser, text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        p.error(f"--shard must be I/N (e.g. 0/2), got {text!r}")
    return i, n


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    at_least_one(p, steps_this_call=args.steps_this_call)
    cuda_or_refuse(p, args.device)
    shard = _shard(p, args.shard)
    try:
        cfg = PROFILES.resolve(args.profile)
        from icdl.gpt_icl.recipes.run import shard_of

        shard_of(cfg, shard)  # a bad shard is refused before anything runs
        limit = f", {args.steps_this_call} steps per run this call" if args.steps_this_call else ""
        part = f", shard {args.shard}" if shard else ""
        if dry_run(f"the recipe scan, profile {args.profile}{part}{limit}, on {args.device}"):
            return 0
        folder = PROFILES.folder("checkpoints", f"recipes_{cfg['profile']}")
        path = None
        if shard is None:
            with one_writer(PROFILES.folder() / f"recipes.{cfg['profile']}.json", f"the {cfg['profile']} recipe scan"):
                path = run(cfg, folder=folder, steps_this_call=args.steps_this_call, device=args.device)
        else:
            run(cfg, folder=folder, shard=shard, steps_this_call=args.steps_this_call, device=args.device)
    except (ProfileError, ResultFileError, CheckpointError, ValueError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}" if path else "not every run has finished (or a shard ran): run the command without "
          "--shard once every shard is done to write the result")
    return 0


if __name__ == "__main__":
    sys.exit(main())
