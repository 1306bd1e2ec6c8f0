"""Small result files with provenance, written atomically.

Every number the book shows that did not come from the live quick run comes from
a JSON file under ``results/``. Such a file always carries a ``provenance`` block
saying which command produced it, at which git commit, on what hardware, how long
it took, at which profile and seed. :func:`save_result` writes the file through a
temporary file and an atomic rename, so a run killed midway leaves the previous
result intact; :func:`load_result` refuses a file whose provenance is missing or
incomplete.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import OneLineError

PROVENANCE_KEYS = ("command", "git_commit", "hardware", "wall_time_s", "profile", "seed", "created")


class ResultFileError(OneLineError):
    """A result file is missing, unreadable, or lacks its provenance."""


def project_root() -> Path:
    """The repository root: ``$ICDL_ROOT`` if set, else the first folder at or above
    the working directory that holds ``_toc.yml``, else the folder above ``src/``."""
    env = os.environ.get("ICDL_ROOT")
    if env:
        return Path(env).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file():
            return folder
    return Path(__file__).resolve().parents[2]


def results_dir(*parts: str) -> Path:
    """``<root>/results/<parts...>``, created if missing."""
    path = project_root().joinpath("results", *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


#: what the book's own runs write: changes there do not make a result's code differ from its commit
GENERATED = ("results", "runs", "notebooks/*.ipynb", "book/generated", "_build")


#: in a tree unpacked from the book's source archive (:mod:`icdl.repro.source`): the file naming its commit
COMMIT_FILE = "SOURCE_COMMIT"


def archived_commit(root: Path) -> str | None:
    """The commit named by an unpacked archive's :data:`COMMIT_FILE`, or ``None`` (no such file, or not a hash)."""
    try:
        text = (Path(root) / COMMIT_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text if len(text) == 40 and all(c in "0123456789abcdef" for c in text) else None


def is_git_root(root: Path) -> bool:
    """Whether ``root`` is the top folder of a git work tree: a clone, not an archive unpacked inside some other
    repository (whose ``git rev-parse HEAD`` would name that repository's commit)."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True,
                             timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return bool(top) and Path(top).resolve() == Path(root).resolve()


def git_commit() -> str:
    """The current commit, with ``+dirty`` when tracked files other than generated outputs
    (:data:`GENERATED`: results, executed notebooks) differ from it; in a tree unpacked from the book's source
    archive (no git), the archive's commit with ``+archive`` (its files may have been edited since:
    :mod:`icdl.repro.source`); else ``unknown``."""
    root = project_root()
    # git first where this is a clone (a stray COMMIT_FILE copied into it changes nothing); an unpacked archive,
    # even inside another repository, names its own commit
    archived = None if is_git_root(root) else archived_commit(root)
    if archived:
        return archived + "+archive"
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
             *(f":(exclude,glob){g}" + ("" if "*" in g else "/**") for g in GENERATED)],
            cwd=root, capture_output=True, text=True, timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not sha:
        return "unknown"
    return sha + ("+dirty" if dirty else "")


def hardware() -> str:
    """A one-line description of the machine and the torch build."""
    import torch

    cpu = platform.processor() or platform.machine()
    threads = torch.get_num_threads()
    text = f"{platform.system()} {cpu}, {os.cpu_count()} CPUs, {threads} torch thread{'s' * (threads != 1)}"
    if torch.cuda.is_available():
        text += f", {torch.cuda.get_device_name(0)}"
    return text + f", python {platform.python_version()}, torch {torch.__version__}"


def provenance(*, command: str, wall_time_s: float, profile: str, seed: int | None) -> dict[str, Any]:
    """The provenance block for a result produced now by ``command``."""
    return {
        "command": command,
        "git_commit": git_commit(),
        "hardware": hardware(),
        "wall_time_s": round(float(wall_time_s), 3),
        "profile": profile,
        "seed": seed,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename. A folder that
    cannot be written (read-only, full disk) is one :class:`ResultFileError` naming it; the previous file
    stays as it was."""
    path = Path(path)
    try:
        _atomic_write(path, data)
    except OSError as err:
        raise ResultFileError(f"cannot write {path}: {err.strerror or err}; make its folder writable (or free "
                              "space on its disk), then run again -- the previous file is unchanged") from None


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts: it may be a live writer)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: a half-written file of an interrupted atomic write older than this, whose name carries no writer's pid
#: (written before the pid went into the name), is swept too: no write takes a day
_STALE_UNNAMED_S = 24 * 3600


def sweep_stale_tmp(path: Path) -> list[Path]:
    """Delete the half-written files an interrupted atomic write of ``path`` left beside it
    (``.<name>.<pid>.<random>.tmp``) whose writer's process is gone -- never a live writer's -- and return
    them. ``.gitignore`` promises this: the next save of the same file sweeps them."""
    import glob

    path = Path(path)
    swept = []
    try:
        leftovers = list(path.parent.glob(f".{glob.escape(path.name)}.*.tmp"))
    except OSError:
        return swept
    for tmp in leftovers:
        middle = tmp.name[len(path.name) + 2:-len(".tmp")].split(".")
        try:
            if len(middle) == 2 and middle[0].isdigit():
                stale = not pid_alive(int(middle[0]))
            elif len(middle) == 1:  # the name of a write from before the pid was in it
                stale = time.time() - tmp.stat().st_mtime > _STALE_UNNAMED_S
            else:  # another file's (a longer name that starts with this one)
                continue
            if stale:
                tmp.unlink()
                swept.append(tmp)
        except OSError:  # gone already, or not ours to delete: the write itself goes on
            continue
    return swept


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale_tmp(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a result file is as readable as any other
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def save_result(path: str | Path, data: dict[str, Any], *, provenance: dict[str, Any],
                keep_if_same: bool = False) -> Path:
    """Write ``{"provenance": ..., "data": ...}`` to ``path`` atomically and return the path. With
    ``keep_if_same`` an existing file whose data are exactly these (and whose command, profile and seed are
    these) is left as it is, its provenance included: it already names a run that produced these numbers,
    and a rerun that changed no number then leaves no diff (the quick profile's files, rewritten by every
    execution of the book)."""
    missing = [k for k in PROVENANCE_KEYS if k not in provenance]
    if missing:
        raise ResultFileError(f"provenance is missing {missing}; it needs all of {list(PROVENANCE_KEYS)}")
    path = Path(path)
    if path.suffix != ".json":
        raise ResultFileError(f"result files are JSON: path must end in .json, got {path.name!r}")
    text = json.dumps({"provenance": provenance, "data": data}, indent=1, sort_keys=True, allow_nan=True)
    _check_shape(path, json.loads(text)["data"])  # a writer's bug is refused before it reaches the file
    if keep_if_same and _same_result(path, text):
        return path
    atomic_write_text(path, text + "\n")
    return path


def _same_result(path: Path, text: str) -> bool:
    """Whether ``path`` holds a valid result with the data of ``text`` (compared as JSON text, so every float
    to the last digit) from the same command, profile and seed."""
    if not path.is_file():
        return False
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    new = json.loads(text)
    keys = ("command", "profile", "seed")
    if not isinstance(old, dict) or not isinstance(old.get("provenance"), dict) or \
            any(old["provenance"].get(k) != new["provenance"][k] for k in keys) or \
            any(k not in old["provenance"] for k in PROVENANCE_KEYS):
        return False
    dump = lambda d: json.dumps(d, sort_keys=True, allow_nan=True)  # noqa: E731
    return dump(old.get("data")) == dump(new["data"])


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
                      record: Path | None = None) -> Path:
    """Write the record of an existing checkpoint: its sha256 and size, with the provenance of ``command``
    (the command that rebuilds it), to ``record`` (default: beside it, :func:`checkpoint_record`)."""
    path = Path(path)
    return save_result(record or checkpoint_record(path), {"sha256": _sha256(path), "bytes": path.stat().st_size},
                       provenance=provenance(command=command, wall_time_s=0.0, profile=profile, seed=seed))


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
                    seed: int | None = None) -> Path:
    """The one checkpoint writer. A checkpoint and its record (:func:`record_checkpoint`: sha256, size, the
    command that rebuilds it) change together: the new state is written beside the old one
    (``<name>.pt.new``), then the record is replaced by the new one's, then the new file replaces the old
    -- each step an atomic rename -- so a run killed at any moment leaves a consistent pair, the old one or
    the new one, which :func:`load_checkpoint` reads (and the next save finishes or discards the rest)."""
    import io

    import torch

    path = Path(path)
    rec_path, pending = checkpoint_record(path), _pending(path)
    if pending.exists():  # a save that was stopped: finish it if its record was written, else drop it
        if _record_matches(rec_path, pending):
            os.replace(pending, path)
        else:
            pending.unlink()
    buf = io.BytesIO()
    torch.save(state, buf)
    atomic_write_bytes(pending, buf.getvalue())
    record_checkpoint(pending, command=command or "the training command of the chapter", profile=profile,
                      seed=seed, record=rec_path)
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


def frame_to_lists(df) -> dict[str, list]:
    """The one serialiser of a DataFrame into a result file: ``{column: [values]}``, numbers as floats
    (NaN kept), integers as integers, booleans as booleans, everything else as strings.
    ``pandas.DataFrame(obj)`` reads it back."""
    import numpy as np
    import pandas as pd

    def column(values) -> list:
        if pd.api.types.is_bool_dtype(values):
            return [bool(v) for v in values]
        if pd.api.types.is_integer_dtype(values):
            return [int(v) for v in values]
        if pd.api.types.is_numeric_dtype(values):
            return np.asarray(values, dtype=float).tolist()
        return [str(v) for v in values]

    return {str(c): column(df[c]) for c in df.columns}


def save_profile_result(profiles, stem: str, data: dict[str, Any], *, profile: str, seed: int | None,
                        started: float, command: str | None = None, overrides: tuple[str, ...] = ()) -> Path:
    """The one writer of a study's result: ``results/<chapter>/<stem>.<profile>.json`` with DataFrames in
    ``data`` stored as columns (:func:`frame_to_lists`), written by ``command`` (default: the command of
    ``profiles``, :attr:`icdl.repro.profiles.ProfileSet.command`), which began at
    ``time.perf_counter() == started``. A run with ``overrides`` (the ``overrides`` of resolved settings)
    is its own run: it writes ``runs/overrides/<chapter>/<stem>.<profile>+<overrides>.json``, never the
    profile's file, and its provenance's command carries the overrides."""

    import pandas as pd

    body = {k: frame_to_lists(v) if isinstance(v, pd.DataFrame) else v for k, v in data.items()}
    if overrides:
        run = "+".join((profile, *overrides))
        path = project_root() / "runs" / "overrides" / profiles.chapter / f"{stem}.{run}.json"
        command = profiles.command_for(profile, tuple(overrides))
    else:
        path = profiles.folder() / f"{stem}.{profile}.json"
    return save_result(path, body,
                       provenance=provenance(command=command or profiles.command_for(profile),
                                             wall_time_s=time.perf_counter() - started, profile=profile, seed=seed),
                       keep_if_same=profile == "quick" and not overrides)


def load_result(path: str | Path) -> dict[str, Any]:
    """Read a result file written by :func:`save_result`; refuse one without full provenance.

    Returns the whole object, ``{"provenance": {...}, "data": {...}}``.
    """
    path = Path(path)
    if not path.is_file():
        raise ResultFileError(
            f"result file {path} does not exist; produce it with the command in the chapter's "
            "'reference results' section (README: 'Running a chapter at another profile')"
        )
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ResultFileError(f"result file {path} is not valid JSON: {err}") from None
    prov = obj.get("provenance") if isinstance(obj, dict) else None
    if not isinstance(prov, dict):
        raise ResultFileError(f"result file {path} has no provenance block; refusing to use it")
    missing = [k for k in PROVENANCE_KEYS if k not in prov]
    if missing:
        raise ResultFileError(f"result file {path} lacks provenance fields {missing}; refusing to use it")
    wrong = [k for k, ok in _PROVENANCE_TYPES.items() if not ok(prov[k])]
    if wrong:
        raise ResultFileError(f"result file {path} has provenance fields of the wrong type: "
                              + ", ".join(f"{k}={prov[k]!r}" for k in wrong) + "; refusing to use it")
    if not isinstance(obj.get("data"), dict):
        raise ResultFileError(f"result file {path} has no 'data' block (an object of named fields)")
    if "complete" in obj["data"] and not isinstance(obj["data"]["complete"], bool):
        raise ResultFileError(f"result file {path}: data.complete must be true or false, got "
                              f"{obj['data']['complete']!r}")
    _check_shape(path, obj["data"])
    return obj


def _check_shape(path: Path, data: dict) -> None:
    """The data's registered shape (:mod:`icdl.repro.schema`), as a :class:`ResultFileError` naming the file."""
    from .schema import SchemaError, check

    try:
        check(path, data)
    except SchemaError as err:
        raise ResultFileError(str(err)) from None


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_PROVENANCE_TYPES = {"command": lambda v: isinstance(v, str) and bool(v), "git_commit": lambda v: isinstance(v, str),
                     "hardware": lambda v: isinstance(v, str), "wall_time_s": lambda v: _is_number(v) and v >= 0,
                     "profile": lambda v: isinstance(v, str),
                     "seed": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
                     "created": lambda v: isinstance(v, str)}


def show_reference(profiles, stem: str, profile: str = "reference", *, command: str | None = None
                   ) -> dict[str, Any] | None:
    """The one way a chapter shows a committed result: ``results/<chapter>/<stem>.<profile>.json``.

    Prints one line of provenance (command, commit, hardware, wall time) and returns the whole object
    (``{"provenance", "data"}``). A result that has not been produced yet is not an error: the chapter
    says so, with the command that produces it, and gets ``None``. A file that exists but does not load
    or lacks its provenance raises :class:`ResultFileError` naming the file and that command (``command``,
    where the result is not made by the chapter's own command)."""
    path = profiles.folder() / f"{stem}.{profile}.json"
    command = command or profiles.command_for(profile)
    if not path.is_file():
        print(f"no {profile} result yet ({path.relative_to(project_root())}); produce it with: {command}")
        return None
    try:
        obj = load_result(path)
    except ResultFileError as err:
        raise ResultFileError(f"{err}. Regenerate it with: {command}") from None
    print(provenance_block(path.relative_to(project_root()), obj["provenance"]))
    return obj


#: the widest line of a provenance block: what the book's column shows of a code block without scrolling
PROVENANCE_WIDTH = 72


def _wrapped(label: str, parts: list[str], joint: str, cont: str = "") -> list[str]:
    """``label`` and ``parts`` joined by ``joint``, on lines of at most :data:`PROVENANCE_WIDTH` characters,
    broken between parts (each broken line ending in ``joint.rstrip()`` and ``cont``; the next indented
    under the first)."""
    pad, lines, line = " " * len(label), [], label + parts[0]
    for part in parts[1:]:
        if len(line) + len(joint) + len(part) + len(cont) > PROVENANCE_WIDTH:
            lines.append(line + joint.rstrip() + cont)
            line = pad + part
        else:
            line += joint + part
    return lines + [line]


def _options(command: str) -> list[str]:
    """A command cut before each of its options (``--x value`` stays together)."""
    import re

    return [p.strip() for p in re.split(r" (?=--?[A-Za-z])", command)]


def provenance_block(name, prov: dict) -> str:
    """A result's provenance as a chapter prints it: the file, then the command, the commit, the profile and
    seed, the hardware, the wall time and the date, each on lines of at most :data:`PROVENANCE_WIDTH`
    characters (a long command broken before its options, with a ``\\`` so that it pastes as one; the
    hardware after its commas), so that a reader at the book's width sees every field without scrolling."""
    import re

    wall = float(prov["wall_time_s"])
    took = f"{wall:.0f} s" if wall < 120 else f"{wall / 60:.0f} min" if wall < 7200 else f"{wall / 3600:.1f} h"
    hardware = re.sub(r"\b1 torch threads\b", "1 torch thread", prov["hardware"])  # files written before the fix
    return "\n".join([f"{name}", *_wrapped("  command:   ", _options(prov["command"]), " ", " \\"),
                      f"  commit:    {prov['git_commit'][:12]}",
                      f"  profile:   {prov['profile']} (seed {prov['seed']})",
                      *_wrapped("  hardware:  ", hardware.split(", "), ", "), f"  wall time: {took}",
                      f"  created:   {prov['created']}"])


def lock_file(target: str | Path) -> tuple[Path, str]:
    """The lock file of ``target`` (``runs/locks/<name>.<digest>.lock``) and the name it goes by."""
    import hashlib

    root = project_root()
    target = Path(target).resolve()
    try:
        name = str(target.relative_to(root))
    except ValueError:  # outside the project (e.g. a test's temporary folder): the absolute path
        name = str(target)
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]  # distinct paths, distinct locks
    return root / "runs" / "locks" / f"{Path(name).name}.{digest}.lock", name


@contextmanager
def one_writer(target: str | Path, what: str = "") -> Iterator[None]:
    """Hold the one-writer lock of ``target`` (a result file, a checkpoint, a chapter) while it is being
    produced: a second process asking for the same lock is refused at once with :class:`ResultFileError`
    naming the process that holds it. The lock files live in ``runs/locks/`` (ignored by git); the
    operating system releases a lock when its process ends, however it ends (``fcntl.flock``)."""
    import fcntl

    lock, name = lock_file(target)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock, "a+")
    except OSError as err:
        raise ResultFileError(f"cannot create the lock file {lock}: {err.strerror or err}; make "
                              f"{lock.parent} writable, then run again") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _lock_holder(handle, lock)
        handle.close()
        raise ResultFileError(f"{what or name} is being written by {holder}; wait for it to finish (or stop it), "
                              "then run again") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} ({' '.join(['python', *sys.argv])[:300]})")
    handle.flush()
    try:
        yield
    finally:
        handle.close()


def _lock_holder(handle, lock: Path) -> str:
    """Who holds the lock of ``handle``: the line its holder wrote (``pid N (command)``) -- read again for a
    moment while the holder is between taking the lock and writing that line (the file is then empty, or still
    names the previous, finished holder) -- else the pid the kernel lists for the lock (``/proc/locks``)."""
    import re

    for _ in range(10):
        handle.seek(0)
        text = handle.read().strip()
        found = re.match(r"pid (\d+)", text)
        if found and int(found[1]) != os.getpid() and pid_alive(int(found[1])):
            return text
        time.sleep(0.05)
    try:
        inode = os.fstat(handle.fileno()).st_ino
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "FLOCK" in fields and fields[-3].rsplit(":", 1)[-1] == str(inode):
                return f"pid {fields[-4]}"
    except (OSError, IndexError):
        pass
    return f"another process (the lock {lock} names none)"
