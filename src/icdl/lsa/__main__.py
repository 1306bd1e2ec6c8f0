"""``python -m icdl.lsa``: the training study of LSA sec. 4 as a resumable command."""

from __future__ import annotations

import time

import torch

from ..repro.checkpoints import checkpoint_exists
from ..repro.cli import Parser, at_least_one
from ..repro.files import ResultFileError, one_writer, regular_or_new
from ..repro.profiles import ProfileError, dry_run
from ..repro.results import frame_to_lists, load_result, provenance, save_result
from .study import PROFILES, load_training, result_data
from .training import (
    _shard_paths,
    benchmark_batched_vs_loop,
    merge_shard_checkpoints,
    shard_runs,
    split_checkpoint,
    train,
)


def main(argv: list[str] | None = None) -> int:
    """:func:`_main`; a refused file, a refused merge of shards or a second writer ends it with one line,
    exit status 2, no traceback."""
    import sys

    try:
        return _main(argv)
    except (ResultFileError, ValueError) as err:
        print(f"python -m icdl.lsa: error: {err}", file=sys.stderr)
        return 2


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    ap = Parser(prog="python -m icdl.lsa", description=_main.__doc__)
    ap.add_argument("--profile", default="reference", choices=PROFILES.names)
    ap.add_argument("--epochs-this-call", type=int, default=None,
                    help="train at most this many more epochs, then evaluate and save (resume later)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--shard", default=None, metavar="I/N", help="train only shard I (0-based) of N of the runs")
    return ap


def _main(argv: list[str] | None = None) -> int:
    """``python -m icdl.lsa --profile reference [--epochs-this-call K] [--shard I/N]``: train (resuming from
    ``results/lsa_training/checkpoint.<profile>.pt``), evaluate, and write
    ``results/lsa_training/training.<profile>.json``.

    With ``--shard I/N`` only shard I of N of the runs trains (its own checkpoint; started from the
    full checkpoint if there is one), so N processes can use N cores; a later call without ``--shard``
    merges the shards, once all are at the same epoch, and writes the result."""
    import sys

    ap = parser()
    args = ap.parse_args(argv)
    if args.epochs_this_call is not None and args.epochs_this_call < 1:
        ap.error(f"--epochs-this-call must be >= 1 (omit it to train to the end), got {args.epochs_this_call}")
    at_least_one(ap, threads=args.threads)
    try:
        cfg = PROFILES.resolve(args.profile)
    except ProfileError as err:
        ap.error(str(err))
    if args.shard is not None:
        try:
            i, n = (int(v) for v in args.shard.split("/"))
            runs = shard_runs(cfg["runs"], (i, n))
        except ValueError:
            ap.error(f"--shard must be I/N with 1 <= N <= runs={cfg['runs']} and 0 <= I < N (e.g. 0/2), "
                     f"got {args.shard!r}")
    ckpt = PROFILES.folder() / f"checkpoint.{args.profile}.pt"  # small: committed, so runs resume
    try:  # a folder or link where the checkpoint goes: refused before any training, not after it
        regular_or_new(ckpt)
    except ResultFileError as err:
        ap.error(f"checkpoint path: {err}")
    if args.shard is None and args.epochs_this_call is not None and _shards(ckpt):
        ap.error(f"--epochs-this-call: shard checkpoints of profile {args.profile} exist, and this call merges them "
                 "and trains nothing; run it without --epochs-this-call first (or finish the shards with --shard)")
    if dry_run(f"LSA training, profile {args.profile}" + (f", shard {args.shard}" if args.shard else "")
               + (f", {args.epochs_this_call} epochs this call" if args.epochs_this_call else "")
               + (f", {args.threads} thread(s)" if args.threads else "")):
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    out_path = PROFILES.folder() / f"training.{args.profile}.json"
    bench_path = PROFILES.folder() / f"benchmark.{args.profile}.json"
    if args.shard is not None:
        shard_ckpt = _shard_paths(ckpt, n)[i]
        with one_writer(shard_ckpt, f"shard checkpoint {shard_ckpt}"):  # split and train this shard alone
            if not checkpoint_exists(shard_ckpt) and checkpoint_exists(ckpt):
                split_checkpoint(ckpt, n, only=i)
            res = train(cfg, checkpoint=shard_ckpt, max_epochs_this_call=args.epochs_this_call, runs=runs,
                        lock=False)
        print(f"shard {i}/{n} (runs {runs}): epochs {res['epochs_done']}/{cfg['epochs']} -> {shard_ckpt}",
              file=sys.stderr)
        return 0
    with one_writer(out_path, f"result {out_path.name}"):  # merging, training and writing: one process at a time
        return _merge_train_write(args, cfg, ckpt, out_path, bench_path)


def _shards(ckpt) -> list:
    """The shard checkpoints (``checkpoint.<profile>.shardIofN.pt``) beside ``ckpt``, waiting to be merged."""
    return sorted(ckpt.parent.glob(f"{ckpt.stem}.shard*of*{ckpt.suffix}"))


def _merge_train_write(args, cfg, ckpt, out_path, bench_path) -> int:
    import sys

    shards = _shards(ckpt)
    if shards:
        n = int(shards[0].stem.rsplit("of", 1)[1])
        merge_shard_checkpoints(ckpt, n, cfg)
    if not bench_path.is_file():
        t0 = time.perf_counter()
        bench = benchmark_batched_vs_loop(cfg)
        save_result(bench_path, frame_to_lists(bench), provenance=provenance(
            command=f"python -m icdl.lsa --profile {args.profile} (first call)",
            wall_time_s=time.perf_counter() - t0, profile=args.profile, seed=0))
    bench = load_result(bench_path, profile=args.profile)["data"]
    rebuild = f"python -m icdl.lsa --profile {args.profile}"
    before = (load_training(out_path, rebuild, args.profile)["data"]  # refused now, not after
              if out_path.is_file() else None)
    res = train(cfg, checkpoint=ckpt, max_epochs_this_call=0 if shards else args.epochs_this_call)
    if not shards and before is not None and res["epochs_done"] == before["epochs_done"]:
        print(f"nothing trained (epochs {res['epochs_done']}/{cfg['epochs']}, as in {out_path}); result left as it is",
              file=sys.stderr)
        return 0
    if res["epochs_done"] < cfg["val_every"]:  # no validation yet: a result would have no history to hold
        print(f"epochs {res['epochs_done']}/{cfg['epochs']} trained into {ckpt}; the first validation comes at epoch "
              f"{cfg['val_every']}, so there is no result to write yet: run the same command again to go on",
              file=sys.stderr)
        return 0
    data = result_data(res, cfg, bench)
    command = "python -m icdl.lsa --profile " + args.profile + (
        f" --epochs-this-call {args.epochs_this_call} (repeated until complete)" if args.epochs_this_call else "")
    if any(len(seg["runs"]) < cfg["runs"] for seg in res["segments"]):
        command += " (parts of the training ran as --shard I/N processes: see the segments in the data)"
    save_result(out_path, data, provenance=provenance(command=command, wall_time_s=res["seconds"],
                                                      profile=args.profile, seed=cfg["seed"]))
    print(f"epochs {res['epochs_done']}/{cfg['epochs']}, training time so far {res['seconds']:.0f} s -> {out_path}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
