"""The committed result files a chapter read, pinned by their sha256 in its ledger.

A ledger's seal (:func:`icdl.repro.ledger.seal`) stops a quiet edit of the ledger; it cannot stop one of the
result a verdict was judged on (the bug: ``results/gpt_depth/depth.reference.json`` with its squared errors
scaled by 0.8, within its schema, turned objective 4 from inconclusive into a pass with every test green), nor an
edit of a result, its ledger's records and its seal together. So :func:`icdl.repro.results.load_result` notes
every file under ``results/`` it loads (the ledgers aside), with the sha256 of the very bytes it parsed;
:func:`icdl.repro.chapter.start` forgets what an earlier chapter of the same process read; and
:meth:`icdl.repro.ledger.Ledger.save` writes :func:`pinned` -- the files git would commit, each with its digest --
inside the ledger's sealed data. ``tests/test_registered.py`` then checks every committed ledger's digests against
the files: an edited result turns CI red unless its digest in the ledger, and so the ledger's seal, are changed
too (which the diff shows; the re-derivation tests, ``tests/test_ledger_rederived.py``, judge the numbers again).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from .files import ResultFileError, project_root

#: ``{path relative to the project root: sha256}`` of the result files loaded since :func:`forget`
_READ: dict[str, str] = {}


def note(path: Path, raw: bytes) -> None:
    """Note that the result file ``path`` was loaded, its content ``raw``; files outside ``results/`` (a run with
    overrides, under ``runs/``) and the ledgers themselves (whose digest would change with every save) are not
    results a verdict is judged on and are left out. The last read of a file counts."""
    try:
        rel = Path(path).resolve().relative_to(project_root())
    except (ValueError, ResultFileError):  # outside the project root, or the root itself refused
        return
    if len(rel.parts) < 2 or rel.parts[0] != "results" or rel.parts[1] == "ledger":
        return
    _READ[rel.as_posix()] = hashlib.sha256(raw).hexdigest()


def forget() -> None:
    """Forget every read so far (a chapter starts)."""
    _READ.clear()


def pinned() -> dict[str, str]:
    """The files read since :func:`forget` that the repository commits (those git ignores, e.g. the extra seeds'
    checkpoint records, stay local and are left out: a fresh clone has none of them), each with its sha256, in
    the order of their names. Where git cannot say (no git, a tree that is not a clone), every file read."""
    names = sorted(_READ)
    if not names:
        return {}
    try:
        out = subprocess.run(["git", "check-ignore", "--stdin"], cwd=project_root(), input="\n".join(names) + "\n",
                             capture_output=True, text=True, timeout=30)
        ignored = set(out.stdout.splitlines()) if out.returncode in (0, 1) else set()
    except (OSError, subprocess.SubprocessError):
        ignored = set()
    return {n: _READ[n] for n in names if n not in ignored}


def changed(pins: dict[str, str], root: Path) -> list[str]:
    """The pinned files (``pins``: a ledger's ``results``) that are missing under ``root`` or whose sha256 is not
    the pinned one, each as one line naming the file; empty where every file is as the chapter read it."""
    out = []
    for name, digest in sorted(pins.items()):
        path = Path(root) / name
        if not path.is_file():
            out.append(f"{name}: missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            out.append(f"{name}: sha256 {hashlib.sha256(path.read_bytes()).hexdigest()[:12]}… is not the "
                       f"{digest[:12]}… its ledger pinned")
    return out
