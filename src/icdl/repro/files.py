"""Where the project's files live, how they are written and who may write them: the project root, atomic writes
(a temporary file and a rename, so a run killed midway leaves the old file or the new one, never neither), the
sweep of the temporary files a killed writer left, and the one-writer lock every command holds for what it
writes.

========================  ============================================================================================
:func:`project_root`      the repository (``ICDL_ROOT`` where set, refused unless a clone), :func:`results_dir` a
                          folder of ``results/``
:func:`atomic_write_text` a file replaced at once, through a temporary file beside it
:func:`regular_or_new`    an output path refused unless it is a new or a regular file (never a link, folder, device)
:func:`check_outputs`     a command's output paths refused where they would write over what it reads, over
                          ``results/``, or over each other
:func:`sweep_stale_tmp`   the temporary files of writers that died
:func:`one_writer`        the lock of a result, a checkpoint or a chapter, refused at once to a second writer
========================  ============================================================================================
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import OneLineError


class ResultFileError(OneLineError):
    """A result file is missing, unreadable, or lacks its provenance."""


def project_root() -> Path:
    """The repository root: ``$ICDL_ROOT`` if set (refused unless a clone: :func:`clone_root`), else the first
    folder at or above the working directory that holds ``_toc.yml``, else the clone this package is in (the
    folder above ``src/``), else a one-line refusal.

    The bug (issue 70): the last fallback was ``src/`` itself. papermill run on ``<clone>/notebooks/<id>.ipynb`` from
    a folder outside the clone (its kernel's working folder) took the chapter's lock, and wrote its results and
    ledger, under ``<clone>/src/``: a second papermill run of the chapter from inside the clone, 3 s later, held
    another lock and both ran."""
    env = os.environ.get("ICDL_ROOT")
    if env:
        return clone_root(env)
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file():
            return folder
    package_clone = Path(__file__).resolve().parents[3]  # <clone>/src/icdl/repro/files.py
    if all(kind(package_clone / name) for name, kind in CLONE_MARKS):
        return package_clone
    raise ResultFileError(f"no clone of this repository at or above the working folder {here}, nor around the "
                          "package; run from inside a clone, or set ICDL_ROOT to one")


#: what makes a folder a clone of this repository: the book's table of contents, the package, and git's folder
#: or, in a tree unpacked from the book's source archive, the file naming its commit (icdl.repro.commits'
#: COMMIT_FILE, named here as this module may not import that one)
CLONE_MARKS = (("_toc.yml", Path.is_file), ("src/icdl", Path.is_dir))
REVISION_MARKS = (".git", "SOURCE_COMMIT")


def clone_root(env: str) -> Path:
    """The folder ``ICDL_ROOT`` names, refused in one line unless it is a clone of this repository (or an unpacked
    source archive of the book): a folder holding ``_toc.yml``, ``src/icdl`` and ``.git`` (or ``SOURCE_COMMIT``).
    Anything else (the bug: an empty folder) would be read as a project with no chapters and no results --
    ``report`` finding every claim "not yet covered", exit status 0, and making ``results/`` there."""
    root = Path(env).resolve()
    if not root.is_dir():
        raise ResultFileError(f"ICDL_ROOT={env} is not a folder; point it at a clone of the repository, or unset "
                              "it")
    missing = [name for name, kind in CLONE_MARKS if not kind(root / name)]
    if not any((root / name).exists() for name in REVISION_MARKS):
        missing.append(" or ".join(REVISION_MARKS))
    if missing:
        raise ResultFileError(f"ICDL_ROOT={env} is not a clone of this repository (it has no {', '.join(missing)}); "
                              "point it at a clone (or an unpacked source archive of the book), or unset it")
    return root


def results_dir(*parts: str) -> Path:
    """``<root>/results/<parts...>``, created if missing."""
    path = project_root().joinpath("results", *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename. A folder that
    cannot be written (read-only, full disk) is one :class:`ResultFileError` naming it; the previous file
    stays as it was."""
    path = Path(path)
    regular_or_new(path)
    try:
        _atomic_write(path, data)
    except OSError as err:
        raise ResultFileError(f"cannot write {path}: {err.strerror or err}; make its folder writable (or free "
                              "space on its disk), then run again -- the previous file is unchanged") from None


def regular_or_new(path: Path) -> None:
    """Refuse, before anything is written, an output path that exists and is not a regular file: a link (whose
    target a write would not be about), a folder, a device or a pipe (which a rename would replace)."""
    import stat

    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as err:
        raise ResultFileError(f"cannot write {path}: {err.strerror or err}") from None
    if not stat.S_ISREG(mode):
        kind = ("a link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode)
                else "a device or pipe" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)
                else "not a regular file")
        raise ResultFileError(f"{path} is {kind}, not a file this package writes; give the path of a new or "
                              "regular file (nothing was written)")


def check_outputs(outputs: list[Path], inputs: tuple[Path, ...] = ()) -> None:
    """Refuse, in one line and before anything is written, output paths that would destroy what the command
    reads or what the project keeps (the bug: ``report results/ledger/x.json S.md`` replaced the ledger it had
    just read by markdown, exit status 0): an output that is not a new or regular file (:func:`regular_or_new`),
    one that is an input or lies in an input folder (``inputs``), one under ``results/`` (the committed results
    and ledgers, which no page writer writes), and two outputs naming one file (the second would replace the
    first). Paths are compared resolved: ``a/../results/x``, or a path through a link to ``results/``, is caught."""
    for path in outputs:
        regular_or_new(path)
    seen: dict[Path, Path] = {}
    for path in outputs:
        real = Path(path).resolve()
        if real in seen:
            raise ResultFileError(f"{seen[real]} and {path} are the same file; give each output its own path "
                                  "(nothing was written)")
        seen[real] = Path(path)
        where = _read_or_kept(real, inputs)
        if where:
            raise ResultFileError(f"{path} is {where}; give an output path outside it (nothing was written)")


def _read_or_kept(real: Path, inputs: tuple[Path, ...]) -> str:
    """What an output's resolved path ``real`` would write over, in words ('' where nothing): one of ``inputs``
    (files, or folders whose files the command reads), or a path under the project's ``results/``."""
    for given in inputs:
        source = Path(given).resolve()
        if real == source:
            return "a file this command reads"
        if real.is_relative_to(source):
            return f"in {given}, which this command reads"
    if real.is_relative_to(project_root() / "results"):
        return "under results/, where the project keeps its results and ledgers (no page is written there)"
    return ""


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
    naming the process that holds it. The lock file's line (``pid N (command)``, which names this writer to a
    second one) is only ever written over a file that is the lock's own (:func:`_open_lock`): one that is a link,
    a hard link, not a regular file, or that holds anything but a lock's line, or that cannot be created or written
    (a read-only folder, a full disk), is refused in one line, before anything else. The lock files live in
    ``runs/locks/`` (ignored by git); the operating system releases a lock when its process ends, however it ends
    (``fcntl.flock``)."""
    import fcntl

    lock, name = lock_file(target)
    fd, created = _open_lock(lock)
    handle = os.fdopen(fd, "r+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _lock_holder(handle, lock)
        handle.close()
        raise ResultFileError(f"{what or name} is being written by {holder}; wait for it to finish (or stop it), "
                              "then run again") from None
    if not created:  # held now, so no writer is between truncating it and writing its line: what it holds is final
        _refuse_a_stranger(handle, lock)
    try:  # the line that names this writer to a second one
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} ({' '.join(['python', *sys.argv])[:300]})")
        handle.flush()
    except OSError as err:  # a full disk (ENOSPC), a quota: the lock let go, nothing else begun
        try:
            handle.close()  # closes the file even when flushing the rest fails again
        except OSError:
            pass
        raise ResultFileError(f"cannot write the lock file {lock}: {err.strerror or err}; free space on its disk (or "
                              f"make {lock.parent} writable), then run again -- nothing was written") from None
    try:
        yield
    finally:
        handle.close()


def _open_lock(lock: Path) -> tuple[int, bool]:
    """The lock file ``lock`` opened for reading and writing, and whether this call created it. Created new where
    it is missing (``O_EXCL``); an existing one is opened without ``O_CREAT``, never through a link (``O_NOFOLLOW``:
    a link planted at the lock's name would make the lock's line overwrite its target) and refused unless it is a
    regular file with one name (a hard link planted there -- ``ln README.md runs/locks/…`` -- shares README.md's
    content, which the lock's line would replace). ``runs/`` and ``runs/locks/`` may not be links either."""
    import errno
    import stat

    for folder in (lock.parent.parent, lock.parent):  # runs/ and runs/locks/: never a link to another folder
        if folder.is_symlink():
            raise ResultFileError(f"{folder} is a link; the lock files must live in this project's own folder: "
                                  f"remove the link (rm {folder}), then run again")
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        try:
            return os.open(lock, flags | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            fd = os.open(lock, flags)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise ResultFileError(f"the lock file {lock} is a link; remove it (rm {lock}), then run again") from None
        raise ResultFileError(f"cannot create the lock file {lock}: {err.strerror or err}; make "
                              f"{lock.parent} writable (or free space on its disk), then run again") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ResultFileError(f"the lock file {lock} is not a regular file; remove it (rm {lock}), then run again")
    if info.st_nlink != 1:
        os.close(fd)
        raise ResultFileError(f"the lock file {lock} is a hard link ({info.st_nlink} names share its content, which "
                              f"the lock's line would replace); remove this name (rm {lock}: the others keep the "
                              "content), then run again -- nothing was written")
    return fd, False


#: what a lock file holds: nothing (a holder's first moment) or the line of a writer, ``pid N (command)`` with at
#: most 300 characters of command (:func:`one_writer`)
_LOCK_LINE = r"(pid \d+ \(.{0,300}\))?"


def _refuse_a_stranger(handle, lock: Path) -> None:
    """Refuse, before it is emptied, an existing lock file that holds anything but a lock's line: a file put at the
    lock's name by hand (a copy, a file moved there) is not this package's to empty."""
    import re

    text = os.pread(handle.fileno(), 4096, 0).decode("utf-8", errors="replace")
    if not re.fullmatch(_LOCK_LINE, text, re.DOTALL):
        handle.close()
        raise ResultFileError(f"the lock file {lock} holds something other than a lock's line (pid N (command)): "
                              f"it was not written by this package; move it away (mv {lock} …), then run again "
                              "-- it was left unchanged")


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
