"""Which commit of the code made a result: the commit a provenance block names, and whether a reader can still
check it out.

===========================  =============================================================================
:func:`git_commit`           the commit of the code that runs (``+dirty`` with uncommitted edits; in a tree
                             unpacked from the book's source archive, the archive's commit with ``+archive``)
:func:`code_root`            the tree whose package this process imported, the one :func:`git_commit` reads
:func:`archived_commit`      the commit an unpacked archive names in its :data:`COMMIT_FILE`
:func:`is_git_root`          whether a folder is the top of a git work tree (a clone, not an archive inside one)
:func:`checkable`            whether a file made at one commit names a run a reader can reproduce from another
:data:`GENERATED`            what the book's own runs write: changes there leave the code clean
===========================  =============================================================================

The provenance block itself, and the result files that carry it, are :mod:`icdl.repro.results`'.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .files import project_root

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


def code_root() -> Path | None:
    """The tree whose ``src/icdl`` this process imported (a clone, or an unpacked source archive); ``None`` for
    an installed copy outside any tree."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "src" / "icdl" / "repro" / "commits.py").is_file() else None


def git_commit(root: Path | None = None) -> str:
    """The commit of the code that runs, with ``+dirty`` when tracked files other than generated outputs
    (:data:`GENERATED`: results, executed notebooks) differ from it; in a tree unpacked from the book's source
    archive (no git), the archive's commit with ``+archive`` (its files may have been edited since:
    :mod:`icdl.repro.source`); else ``unknown``.

    The tree read is ``root``, by default the one whose package this process imported (:func:`code_root`), not
    :func:`~icdl.repro.files.project_root`: with ``ICDL_ROOT`` naming another clone the results go there, but the
    provenance names the commit and the changes of the code that computed them (the bug: the other clone's
    commit, clean, for numbers made by this one's edited code). An installed copy outside any tree reads the
    project root."""
    root = Path(root) if root is not None else (code_root() or project_root())
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


def checkable(made: str, now: str) -> bool:
    """Whether a file made at commit ``made`` still names a run a reader can reproduce from commit ``now``: the
    same commit, or a clean commit (no ``+dirty``) of ``now``'s history."""
    if made == now:
        return True
    if "+" in made or made == "unknown" or now in ("unknown", ""):
        return False
    head = now.split("+")[0]
    try:
        return subprocess.run(["git", "merge-base", "--is-ancestor", made, head], cwd=project_root(),
                              capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
