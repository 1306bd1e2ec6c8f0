"""Checkpoints of trained models, each with a record beside it: the checkpoint and its record change together
(the new state beside the old, the record, then the rename), so a run killed at any moment leaves a checkpoint
that loads; loading checks the record, the kind of state and reads with ``weights_only=True``.

=========================  ===========================================================================================
:func:`save_checkpoint`    write a state and its record (command, profile, seed, sha256)
:func:`load_checkpoint`    read one back, refusing a missing, damaged, swapped or foreign file in one line
:func:`checkpoint_exists`  a checkpoint whose record matches it
:func:`remove_checkpoint`  a checkpoint and its record, together
=========================  ===========================================================================================
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from .files import ResultFileError, atomic_write_bytes, regular_or_new
from .results import load_result, provenance, save_result


class CheckpointError(ResultFileError):
    """A checkpoint that is missing its record, damaged, or does not load."""


def checkpoint_record(path: str | Path) -> Path:
    """Where the record of a checkpoint lives: ``<name>.pt.json`` beside it."""
    path = Path(path)
    return path.with_name(path.name + ".json")


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def record_checkpoint(path: str | Path, *, command: str, profile: str = "", seed: int | None = None,
                      record: Path | None = None, wall_time_s: float = 0.0) -> Path:
    """Write the record of an existing checkpoint: its sha256 and size, with the provenance of ``command``
    (the command that rebuilds it; the profile it names, where ``profile`` is not given), the training seed and the
    training time so far (``wall_time_s``), to ``record`` (default: beside it, :func:`checkpoint_record`)."""
    import re

    path = Path(path)
    named = re.search(r"--profile (\S+)", command)
    profile = profile or (named.group(1) if named else "")
    return save_result(record or checkpoint_record(path), {"sha256": _sha256(path), "bytes": path.stat().st_size},
                       provenance=provenance(command=command, wall_time_s=wall_time_s, profile=profile, seed=seed))


def _pending(path: Path) -> Path:
    return path.with_name(path.name + ".new")


def _record_matches(rec_path: Path, path: Path) -> bool:
    try:
        rec = load_result(rec_path)["data"]
    except ResultFileError:
        return False
    return path.is_file() and path.stat().st_size == rec.get("bytes") and _sha256(path) == rec.get("sha256")


def checkpoint_exists(path: str | Path) -> bool:
    """Whether ``path`` holds a checkpoint :func:`load_checkpoint` can read: the file itself, or the new
    state of a save that was stopped after its record was written (``<name>.pt.new``)."""
    path = Path(path)
    return path.is_file() or (_pending(path).is_file() and _record_matches(checkpoint_record(path), _pending(path)))


def remove_checkpoint(path: str | Path) -> None:
    """Delete a checkpoint with its record and any half-written new state."""
    path = Path(path)
    for p in (path, checkpoint_record(path), _pending(path)):
        p.unlink(missing_ok=True)


def save_checkpoint(path: str | Path, state: dict[str, Any], *, command: str = "", profile: str = "",
                    seed: int | None = None, wall_time_s: float = 0.0) -> Path:
    """The one checkpoint writer. A checkpoint and its record (:func:`record_checkpoint`: sha256, size, the
    command that rebuilds it) change together: the new state is written beside the old one
    (``<name>.pt.new``), then the record is replaced by the new one's, then the new file replaces the old
    -- each step an atomic rename -- so a run killed at any moment leaves a consistent pair, the old one or
    the new one, which :func:`load_checkpoint` reads (and the next save finishes or discards the rest)."""
    import io

    import torch

    path = Path(path)
    rec_path, pending = checkpoint_record(path), _pending(path)
    for p in (path, rec_path, pending):  # a folder, link or device in the way: one line, nothing replaced
        try:
            regular_or_new(p)
        except ResultFileError as err:
            raise CheckpointError(f"checkpoint path: {err}") from None
    if pending.exists():  # a save that was stopped: finish it if its record was written, else drop it
        if _record_matches(rec_path, pending):
            os.replace(pending, path)
        else:
            pending.unlink()
    buf = io.BytesIO()
    torch.save(state, buf)
    atomic_write_bytes(pending, buf.getvalue())
    record_checkpoint(pending, command=command or "the training command of the chapter", profile=profile,
                      seed=seed, record=rec_path, wall_time_s=wall_time_s)
    os.replace(pending, path)
    return path


#: the kinds of checkpoint, by study: the keys every checkpoint of that kind holds and what writes it
CHECKPOINT_KINDS = {
    "lsa": (("cfg", "model"), "an LSA training checkpoint (python -m icdl.lsa)"),
    "gpt_icl": (("settings", "model"), "a GPT in-context checkpoint (python -m icdl.gpt_icl and its studies)"),
}


def _checkpoint_kind_of(state) -> str | None:
    """The kind (:data:`CHECKPOINT_KINDS`) of a loaded checkpoint, or ``None`` for none of them."""
    if isinstance(state, dict):
        for name, (keys, _) in CHECKPOINT_KINDS.items():
            if all(k in state for k in keys):
                return name
    return None


def load_checkpoint(path: str | Path, *, map_location: str = "cpu", command: str = "",
                    kind: str = "") -> dict[str, Any]:
    """The one checkpoint loader: checks the file against the sha256 of its record, then
    ``torch.load(..., weights_only=True)``. Every failure names the file and what to do; the command it
    suggests is the caller's ``command`` (from the code), never one read from the file being refused. With
    ``kind`` (a key of :data:`CHECKPOINT_KINDS`) a checkpoint of another study -- or of none -- is refused by
    name, before the caller reads a key it lacks."""
    if kind and kind not in CHECKPOINT_KINDS:
        raise ValueError(f"kind must be one of {sorted(CHECKPOINT_KINDS)}, got {kind!r}")
    state = _load_checkpoint(path, map_location=map_location, command=command)
    if kind and _checkpoint_kind_of(state) != kind:
        found = _checkpoint_kind_of(state)
        holds = CHECKPOINT_KINDS[found][1] if found else "no checkpoint this package writes"
        raise CheckpointError(f"checkpoint {path} is not {CHECKPOINT_KINDS[kind][1]}: it holds {holds}; pass "
                              f"a checkpoint of this study (rebuild one with: {command or 'its training command'})")
    return state


def _load_checkpoint(path: str | Path, *, map_location: str, command: str) -> dict[str, Any]:
    import torch

    rebuild = command or "the training command of its chapter"

    asked = Path(path)
    rec_path = checkpoint_record(asked)
    for attempt in range(3):  # a writer may be between two of its renames: look again before calling it damaged
        path = asked
        if _pending(asked).is_file() and _record_matches(rec_path, _pending(asked)):
            path = _pending(asked)  # a save stopped after its record was written: the new pair is the valid one
        if not path.is_file():
            if attempt < 2:
                time.sleep(0.2)
                continue
            raise CheckpointError(f"checkpoint {asked} does not exist")
        try:
            rec = load_result(rec_path)
        except ResultFileError as err:
            raise CheckpointError(f"checkpoint {asked} has no valid record ({err}); it cannot be trusted: delete "
                                  "it and rebuild it with the training command of its chapter") from None
        if path.stat().st_size == rec["data"]["bytes"] and _sha256(path) == rec["data"]["sha256"]:
            break
        if attempt == 2:
            raise CheckpointError(f"checkpoint {asked} is damaged (its sha256 or size differs from "
                                  f"{rec_path.name}); delete it and rebuild it with: {rebuild}")
        time.sleep(0.2)
    try:
        return torch.load(path, weights_only=True, map_location=map_location)
    except Exception as err:  # any unpickling error: one message with the file and the command
        raise CheckpointError(f"checkpoint {path} does not load ({type(err).__name__}: {str(err)[:200]}); "
                              f"rebuild it with: {rebuild}") from None
