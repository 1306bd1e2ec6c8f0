"""Small result files with provenance, written atomically.

Every number the book shows that did not come from the live quick run comes from
a JSON file under ``results/``. Such a file always carries a ``provenance`` block
saying which command produced it, at which git commit, on what hardware, how long
it took, at which profile and seed. :func:`save_result` writes the file through a
temporary file and an atomic rename, so a run killed midway leaves the previous
result intact; :func:`load_result` refuses a file whose provenance is missing or
incomplete, and notes the sha256 of what it read for the chapter's ledger (:mod:`icdl.repro.reads`). The
commit a provenance names, and whether a reader can still check it out, are :mod:`icdl.repro.commits`'.
"""

from __future__ import annotations

import json
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import reads
from .commits import checkable, git_commit
from .files import ResultFileError, atomic_write_text, project_root

PROVENANCE_KEYS = ("command", "git_commit", "hardware", "wall_time_s", "profile", "seed", "created")


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


def keepable(old: Any, new: dict[str, Any]) -> bool:
    """Whether a file whose provenance is ``old`` may stand for a run whose provenance is ``new`` when their data
    agree: full provenance, the same command, profile and seed, made at a commit a reader can check out
    (:func:`~icdl.repro.commits.checkable`)."""
    return isinstance(old, dict) and all(k in old for k in PROVENANCE_KEYS) and \
        all(old[k] == new[k] for k in ("command", "profile", "seed")) and \
        checkable(old["git_commit"], new["git_commit"])


def _same_result(path: Path, text: str) -> bool:
    """Whether ``path`` holds a valid result with the data of ``text`` (compared as JSON text, so every float
    to the last digit) from the same command, profile and seed, made at a commit a reader can check out (one
    that made a file at a commit since dropped from the history, or with uncommitted edits, is written anew)."""
    if not path.is_file():
        return False
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    new = json.loads(text)
    if not isinstance(old, dict) or not keepable(old.get("provenance"), new["provenance"]):
        return False
    dump = lambda d: json.dumps(d, sort_keys=True, allow_nan=True)  # noqa: E731
    return dump(old.get("data")) == dump(new["data"])


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


def study_command(parser, argv: list[str] | None, profiles, stem: str, what: str, compute) -> int:
    """The ``main`` of a command that computes one result of a study at a profile (``python -m
    icdl.studies.diffusion``, ``python -m icdl.studies.softmax``): ``--profile`` resolved (a bad one refused in one
    line), ``$ICDL_DRY_RUN`` honoured (``what``, profile P), then ``compute(cfg)``'s data saved as
    ``results/<chapter>/<stem>.<profile>.json`` (:func:`save_profile_result`) under that file's one-writer lock; a
    result that cannot be written, or whose lock another run holds, is one line, exit status 2."""
    from .files import one_writer
    from .profiles import ProfileError, dry_run

    args = parser.parse_args(argv)
    try:
        cfg = profiles.resolve(args.profile)
    except ProfileError as err:
        parser.error(str(err))
    if dry_run(f"{what}, profile {args.profile}"):
        return 0
    started = time.perf_counter()
    try:  # the folder too: ICDL_ROOT that is not a folder is refused here, in one line
        target = profiles.folder() / f"{stem}.{args.profile}.json"
        with one_writer(target, f"result {target.name}"):  # one run of the study at a time
            path = save_profile_result(profiles, stem, compute(cfg), profile=args.profile, seed=cfg["seed"],
                                       started=started)
    except ResultFileError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    print(f"wrote {path}")
    return 0


def load_result(path: str | Path, *, profile: str | None = None) -> dict[str, Any]:
    """Read a result file written by :func:`save_result`; refuse one without full provenance, and -- where
    ``profile`` is given, the profile whose file this is (``<stem>.<profile>.json``) -- one whose provenance
    names another profile (the bug: ``icl.reference.json`` relabelled ``profile: quick``, or a quick file copied
    over a reference one, was shown as the reference result).

    Returns the whole object, ``{"provenance": {...}, "data": {...}}``.
    """
    path = Path(path)
    if not path.is_file():
        raise ResultFileError(
            f"result file {path} does not exist; produce it with the command in the chapter's "
            "'reference results' section (README: 'Running a chapter at another profile')"
        )
    raw = path.read_bytes()
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
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
    if profile is not None and prov["profile"] != profile:
        raise ResultFileError(f"result file {path} is the {profile!r} profile's file but its provenance says it was "
                              f"made at profile {prov['profile']!r} (relabelled or copied from another profile); "
                              "refusing to use it as that profile's result")
    if not isinstance(obj.get("data"), dict):
        raise ResultFileError(f"result file {path} has no 'data' block (an object of named fields)")
    if "complete" in obj["data"] and not isinstance(obj["data"]["complete"], bool):
        raise ResultFileError(f"result file {path}: data.complete must be true or false, got "
                              f"{obj['data']['complete']!r}")
    _check_shape(path, obj["data"])
    reads.note(path, raw)  # what the chapter's ledger pins (icdl.repro.reads)
    return obj


def load_kept_part(path: Path, *, profile: str, what: str) -> dict[str, Any] | None:
    """The data of one part a resumable run keeps as it finishes (``path``: a unit, a depth), or None where none is
    kept. The run goes on from its parts only at the commit that made them: a part made by other code, or at
    another profile, is refused in one line naming the file (finish the run at that commit, or delete ``what`` to
    start it again here) -- the bug it stops: one result stitched from the parts of two versions of the code."""
    if not path.is_file():
        return None
    try:
        saved = load_result(path, profile=profile)
    except ResultFileError as err:
        raise ResultFileError(f"{err}; delete {what} to start the run again here") from None
    made, now = saved["provenance"]["git_commit"], git_commit()
    if made != now:
        raise ResultFileError(f"{path} was made by the code at {made[:9]}, this run is at {now[:9]}: finish the run "
                              f"at {made[:9]}, or delete {what} to start it again here")
    return saved["data"]


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
    or lacks its provenance, or whose provenance names another profile than ``profile``, raises
    :class:`ResultFileError` naming the file and that command (``command``, where the result is not made by the
    chapter's own command)."""
    path = profiles.folder() / f"{stem}.{profile}.json"
    command = command or profiles.command_for(profile)
    if not path.is_file():
        print(f"no {profile} result yet ({path.relative_to(project_root())}); produce it with: {command}")
        return None
    try:
        obj = load_result(path, profile=profile)
    except ResultFileError as err:
        raise ResultFileError(f"{err}. Regenerate it with: {command}") from None
    print(provenance_block(path.relative_to(project_root()), obj["provenance"], trained_seconds(obj["data"]),
                           earlier_seconds(obj["data"], float(obj["provenance"]["wall_time_s"]))))
    return obj


def earlier_seconds(data: dict, wall: float) -> float | None:
    """The work a result assembles from units kept by earlier calls of its command (``data["seconds"]``, summed
    over the units), where that is more than ten times the assembling call's own ``wall`` time: the mechanism
    study's seeds-n01 result took 2.5 core-hours in three units and 0.4 s to assemble. None otherwise (a result
    measured in the call that wrote it, or one that records no seconds)."""
    seconds = data.get("seconds") if isinstance(data, dict) else None
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds > 10 * max(wall, 0.0):
        return float(seconds)
    return None


def trained_seconds(data: dict) -> tuple[float, int] | None:
    """The training a result assembles from models trained by earlier calls (``data["training"]``: a row per model
    with its ``seconds``, summed over the calls that trained it), as (core-seconds, models); None for a result that
    records none. Its provenance's wall time is then the assembling command's own, seconds where the training took
    hours: the reader is told both."""
    rows = data.get("training")
    if not isinstance(rows, dict) or not isinstance(rows.get("seconds"), list) or not rows["seconds"]:
        return None
    return float(sum(rows["seconds"])), len(rows["seconds"])


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


def took(seconds: float) -> str:
    """A length of time as the provenance blocks and the prose write it: ``45 s``, ``97 min``, ``6.2 h`` (minutes
    up to two hours)."""
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else \
        f"{seconds / 3600:.1f} h"


def provenance_block(name, prov: dict, trained: tuple[float, int] | None = None, earlier: float | None = None) -> str:
    """A result's provenance as a chapter prints it: the file, then the command, the commit, the profile and
    seed, the hardware, the wall time and the date, each on lines of at most :data:`PROVENANCE_WIDTH`
    characters (a long command broken before its options, with a ``\\`` so that it pastes as one; the
    hardware after its commas), so that a reader at the book's width sees every field without scrolling.
    ``trained`` (:func:`trained_seconds`): the training of the models the result assembles, on a line of its own
    beside the command's wall time (the bug: "wall time: 5 s" under a result whose models took six core-hours);
    ``earlier`` (:func:`earlier_seconds`): likewise the measuring done by earlier calls, kept per unit (the bug:
    "wall time: 0 s" under the mechanism's seeds-n01 result)."""
    import re

    hardware = re.sub(r"\b1 torch threads\b", "1 torch thread", prov["hardware"])  # files written before the fix
    wall = f"  wall time: {took(float(prov['wall_time_s']))}" + (" (this command's own)" if trained or earlier
                                                                  else "")
    training = [] if not trained else _wrapped("  training:  ", [f"{took(trained[0])} of one core,",
                                                               f"its {trained[1]} models", "(from their checkpoints)"],
                                               " ")
    if earlier and not trained:
        training = _wrapped("  measured:  ", [f"{took(earlier)} of one core,", "by earlier calls of the command,",
                                              "kept per unit"], " ")
    return "\n".join([f"{name}", *_wrapped("  command:   ", _options(prov["command"]), " ", " \\"),
                      f"  commit:    {prov['git_commit'][:12]}",
                      f"  profile:   {prov['profile']} (seed {prov['seed']})",
                      *_wrapped("  hardware:  ", hardware.split(", "), ", "), wall, *training,
                      f"  created:   {prov['created']}"])


