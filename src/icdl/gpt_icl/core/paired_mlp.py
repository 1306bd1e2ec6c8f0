"""The MLP's block errors of a profile, dealt into shards and computed ahead of the run that reads them (``python
-m icdl.gpt_icl.core.paired_mlp --profile P --shard I/N``; the block errors themselves:
:mod:`icdl.gpt_icl.core.mlp_blocks`).

=========================  ========================================================================================
:func:`units`              the files of a profile, in a fixed order (the curves' MLP and each paired
                           (depth, set, position))
:func:`shard_units`        the files of one shard, dealt so that every shard has about the same work
:func:`fill`               compute the files of one shard (the command calls it)
=========================  ========================================================================================
"""

from __future__ import annotations

from pathlib import Path

from icdl.gpt_icl.core.mlp_blocks import errors, file_path
from icdl.repro.files import ResultFileError


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

    done = []
    for part, depth, name, p in shard_units(cfg, shard):
        if part == "curves":
            cached_baselines(cfg, depth, folder, progress, command=command)  # its provenance: the call that made it
            done.append(Path(folder) / f"baselines_depth{depth}.json")
            continue
        spec = judged_sets(cfg, shift=part == "shift")[name]
        xs, ys = set_prompts(cfg, depth, spec)
        errors(cfg, depth, name, xs, ys, p, folder, command, progress)
        done.append(file_path(folder, depth, name, p))
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
