"""The book carries its own source: an archive of the commit it was built from, linked from its first page and
from every chapter's download menu, so that a reader who holds only the HTML can rebuild it (``make book``) or
rerun every check (``make test``).

The archive (:data:`ARCHIVE`, a ``.tar.gz`` whose files sit under ``icdl-<commit>/``) holds every tracked file of
the commit, the committed results and checkpoints included, and two files of its own:

* :data:`COMMIT_FILE`: the commit's full hash. In a build from the unpacked archive
  :func:`icdl.repro.commits.git_commit` reads it, so that a record still names the commit it came from.
* :data:`FILES_FILE`: the tracked files, one per line. A build from the unpacked archive packs these again
  (with the reader's edits, if any).

A working tree with changes to tracked files is archived as its commit (what a reader can name and fetch again),
and the first page says that the HTML was built from a changed tree; changes to the book's own outputs
(:data:`icdl.repro.commits.GENERATED`: results, executed chapters, which ``make book`` rewrites) do not count.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from .commits import COMMIT_FILE, GENERATED, archived_commit, is_git_root
from .files import ResultFileError, regular_or_new

ARCHIVE = "icdl-source.tar.gz"
FILES_FILE = "SOURCE_FILES"
__all__ = ["ARCHIVE", "COMMIT_FILE", "FILES_FILE", "Source", "archived_commit", "render", "write_archive"]


@dataclass(frozen=True)
class Source:
    """What :func:`write_archive` packed: the commit (40 hex digits), whether the tree it was built from had
    changes to tracked files, whether it came from git or from an unpacked archive, and the archive's size."""

    commit: str
    changed: bool
    from_git: bool
    n_files: int
    n_bytes: int

    @property
    def prefix(self) -> str:
        return f"icdl-{self.commit[:12]}/"


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def write_archive(root: Path, dest: Path) -> Source:
    """Write the source archive of ``root`` to ``dest`` (atomically) and say what it holds.

    From a git checkout: ``git archive`` of ``HEAD`` plus :data:`COMMIT_FILE` and :data:`FILES_FILE`
    (deterministic for one commit: every time stamp is the commit's). From an unpacked archive (it has a
    :data:`COMMIT_FILE`, even inside another git repository): the files its :data:`FILES_FILE` lists, packed again
    under the same commit. Neither: :class:`RuntimeError`, in one line; so too a link, a folder or a device
    where the archive or its work in progress goes (before anything is written).
    """
    root, dest = Path(root), Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    try:  # a link, folder or device at either name (the work in progress has a fixed one): never written through
        for path in (tmp, dest):
            regular_or_new(path)
    except ResultFileError as err:
        raise RuntimeError(str(err)) from None
    sha = (_git(root, "rev-parse", "HEAD") or "").strip() if is_git_root(root) or not archived_commit(root) else ""
    if len(sha) == 40:
        files = (_git(root, "ls-tree", "-r", "-z", "--name-only", "HEAD") or "").split("\0")  # what the archive holds
        files = [f for f in files if f]
        outputs = [f":(exclude,glob){g}" + ("" if "*" in g else "/**") for g in GENERATED]
        changed = bool((_git(root, "status", "--porcelain", "--untracked-files=no", "--", ".", *outputs) or "").strip())
        prefix = f"icdl-{sha[:12]}/"
        listing = "".join(f + "\n" for f in files)
        out = _git(root, "archive", "--format=tar.gz", f"--prefix={prefix}", "-o", str(tmp),
                   f"--add-virtual-file={prefix}{COMMIT_FILE}:{sha}\n",
                   f"--add-virtual-file={prefix}{FILES_FILE}:{listing}", "HEAD")
        if out is None:
            raise RuntimeError(f"git archive failed in {root}: run `git status` there and build again")
        os.replace(tmp, dest)  # a kill leaves the old archive or the new one
        return Source(sha, changed, True, len(files) + 2, dest.stat().st_size)
    sha = archived_commit(root)
    try:
        files = (root / FILES_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        files = []
    if sha is None or not files:
        raise RuntimeError(f"{root} is neither a git checkout nor an unpacked source archive (no {COMMIT_FILE} and "
                           f"{FILES_FILE}): build the book from a clone of the repository or from its archive")
    prefix = f"icdl-{sha[:12]}/"
    present = [f for f in files if (root / f).is_file()]
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for name in [*present, COMMIT_FILE, FILES_FILE]:
            info = tar.gettarinfo(str(root / name), arcname=prefix + name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(root / name, "rb") as fh:
                tar.addfile(info, fh)
    tmp.write_bytes(buffer.getvalue())
    os.replace(tmp, dest)
    return Source(sha, len(present) != len(files), False, len(present) + 2, dest.stat().st_size)


def render(source: Source, link: str) -> str:
    """The first page's paragraph about the source: the commit, the archive (``link``, a path relative to the
    including page) and how to use it."""
    mb = source.n_bytes / 1e6
    state = ""
    if source.changed:
        state = (" The working tree it was built from had changes to tracked files that this commit does not hold,"
                 " so the archive may differ from what produced these pages.")
    origin = "" if source.from_git else " (rebuilt from an unpacked source archive)"
    return (f"This book was built from commit `{source.commit[:12]}`{origin}.{state} "
            f"{{download}}`Its source <{link}>` ({mb:.0f} MB, {source.n_files} files: the code, the chapters, the "
            f"tests and every committed result and checkpoint) is all a reader needs to rebuild it: unpack it and "
            f"run `make book` (every chapter executed, the HTML built) or `make test` (every check CI runs).\n")
