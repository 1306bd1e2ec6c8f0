"""Execute the book's chapters with papermill: the one execution path of the book.

``python -m icdl.repro.execute``                         every chapter, profile ``quick``
``python -m icdl.repro.execute icgd_linear --profile reference``
``python -m icdl.repro.execute icgd_linear --set n=64 --set steps=50``

Each chapter's source is ``notebooks/<chapter id>.py`` (py:percent); the ids and their reading
order come from ``_toc.yml``. It is converted
with jupytext and executed by papermill with kernel ``python3`` in ``notebooks/``.

* Profile ``quick`` with no overrides writes the executed notebook to the paired
  ``notebooks/<id>.ipynb`` (no parameters are injected, so the pair stays in
  sync); this is the notebook the book renders and nbval re-checks.
* Any other profile writes ``runs/<id>.<profile>.ipynb`` and leaves the paired
  notebook alone; what the chapter saves (``results/``) carries the profile in its
  name and its provenance.
* A run with overrides is its own run: ``runs/<id>.<profile>+<key>=<value>….ipynb``,
  and what it saves goes to ``runs/overrides/`` (never to a profile's files under
  ``results/``), with the overrides in its provenance's command.

A chapter that raises stops the run with the chapter's name and the failing cell. A notebook's path that
holds a folder, a link or a device is refused in one line before the chapter runs.
"""

from __future__ import annotations

import ast
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

from .files import ResultFileError, one_writer, pid_alive, project_root, regular_or_new
from .profiles import RUN_NAME

KERNEL = "python3"
#: what this command tells the kernel it starts: ``<chapter>:<pid>``, the chapter whose lock the process ``pid``
#: (the kernel's parent) holds for this run, so that the chapter's own :func:`icdl.repro.chapter.hold_lock`
#: does not take it again
LOCK_ENV = "ICDL_CHAPTER_LOCK"
#: the kernel process's own log (not the cells' output or errors, which come back through the notebook) kept to
#: critical lines: a successful run would otherwise end with ipykernel's notices about its TCP transport and the
#: interrupt that stops it
KERNEL_QUIET = ["--IPKernelApp.log_level=CRITICAL"]


#: the module whose ``PROFILES`` holds each chapter's profiles (a :class:`~icdl.repro.profiles.ProfileSet`
#: named after the chapter), so that a profile or ``--set`` value is checked before a kernel starts
PROFILE_MODULES = {
    "icgd_linear": "icdl.studies.linear_gd", "gradient_decomposition": "icdl.studies.gradient",
    "relu_sums": "icdl.studies.relu_sums", "attention_passes": "icdl.studies.attention_passes",
    "icgd_transformer": "icdl.studies.icgd_transformer", "softmax": "icdl.studies.softmax",
    "gpt_icl": "icdl.gpt_icl.core.main_study", "gpt_n01": "icdl.gpt_icl.objectives.n01",
    "gpt_depth": "icdl.gpt_icl.depth.study",
    "gpt_plateau": "icdl.gpt_icl.plateau.study", "gpt_scale": "icdl.gpt_icl.scale.models",
    "gpt_mechanism": "icdl.gpt_icl.mechanism.study",
    "diffusion_score": "icdl.studies.diffusion", "lsa_construction": "icdl.lsa.constructions",
    "lsa_training": "icdl.lsa.study", "computation": "icdl.studies.computation",
}


def chapter_profiles(name: str):
    """The :class:`~icdl.repro.profiles.ProfileSet` of chapter ``name`` (:data:`PROFILE_MODULES`)."""
    import importlib

    profiles = importlib.import_module(PROFILE_MODULES[name]).PROFILES
    if profiles.chapter != name:  # pragma: no cover - guards edits of the table above
        raise RuntimeError(f"{PROFILE_MODULES[name]}.PROFILES is chapter {profiles.chapter!r}, not {name!r}")
    return profiles


def chapters(root: Path) -> list[str]:
    """The chapter ids in reading order: the ``notebooks/<id>`` entries of ``_toc.yml`` (the one place
    that orders the book)."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [entry["file"] for part in toc.get("parts", []) for entry in part.get("chapters", [])]
    return [f.split("/", 1)[1] for f in files if f.startswith("notebooks/")]


def _strip_volatile(nb, name: str) -> None:
    """Drop run timings papermill adds and number the cells ``<chapter>-<index>`` (nbformat would give them
    new random ids on every run), so re-executing a chapter with the same outputs leaves no diff."""
    nb.metadata.pop("papermill", None)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{name}-{i}"
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)


def _parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def execute_chapter(name: str, profile: str = "quick", overrides: dict | None = None,
                    root: Path | None = None) -> tuple[Path, float]:
    import jupytext
    import papermill as pm

    root = root or project_root()
    known = chapters(root)
    if name not in known:  # an id of _toc.yml, never a path (``../src/icdl/__init__`` is not a chapter)
        raise SystemExit(f"unknown chapter {name!r}; chapters (from _toc.yml): {', '.join(known)}")
    src = root / "notebooks" / f"{name}.py"
    if not src.is_file():
        raise SystemExit(f"chapter {name!r} is in _toc.yml but notebooks/{name}.py is missing")
    overrides = overrides or {}
    nb = jupytext.read(src)
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3 (ipykernel)", "language": "python"}
    default_run = profile == "quick" and not overrides
    if default_run:
        out = root / "notebooks" / f"{name}.ipynb"
        params = {}
    else:
        run = "+".join((profile, *(f"{k}={','.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
                                   for k, v in sorted(overrides.items()))))
        if not re.fullmatch(RUN_NAME, run):  # a file name, never a path ("--set n=../x")
            raise SystemExit(f"profile {profile!r} and --set values must be names and numbers (letters, digits, "
                             f"'_', '.', ',', '-'), got {run!r}")
        out = root / "runs" / f"{name}.{run}.ipynb"
        params = {"profile": profile, "overrides": overrides}
    # the work-in-progress file lives under runs/.tmp (ignored by git, never collected by nbval) and is
    # removed whatever happens (SIGTERM included: :func:`main`); only a finished notebook replaces ``out``
    tmp = root / "runs" / ".tmp" / f"{name}.{profile}.{os.getpid()}.ipynb"
    try:
        out.parent.mkdir(exist_ok=True)
        tmp.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _unwritable(err) from None
    for path in (out, tmp):  # a folder, link or device where the notebook goes: refused before a kernel starts
        regular_or_new(path)
    sweep_stale_notebooks(tmp.parent)
    start = time.perf_counter()
    with chapter_lock(name, root):  # one execution of a chapter at a time, whatever its profile
        try:
            return _run(pm, nb, tmp, out, params, root, name, start)
        except OSError as err:  # the executed notebook cannot be written (a read-only runs/ or notebooks/)
            raise _unwritable(err) from None


def _unwritable(err: OSError) -> ResultFileError:
    where = err.filename or "its folder"
    return ResultFileError(f"cannot write {where}: {err.strerror or err}; make it (and runs/, notebooks/) "
                           "writable, then run again")


def sweep_stale_notebooks(folder: Path) -> list[Path]:
    """Delete the work-in-progress notebooks (``<chapter>.<profile>.<pid>.ipynb``) in ``folder`` whose process
    is gone -- an execution killed outright (SIGKILL, a crash) -- never a live one's; return them."""
    swept = []
    for path in folder.glob("*.*.*.ipynb"):
        pid = path.name[:-len(".ipynb")].rsplit(".", 1)[-1]
        if pid.isdigit() and not pid_alive(int(pid)):
            try:
                path.unlink()
                swept.append(path)
            except OSError:
                continue
    return swept


def chapter_lock(name: str, root: Path | None = None):
    """The one-writer lock of chapter ``name`` (on ``notebooks/<name>.py``), whatever its profile: held by this
    command around the chapter's run and by the chapter itself (:func:`icdl.repro.chapter.hold_lock`, so that
    papermill run directly on the notebook holds it too). A context manager; a second holder is refused with
    :class:`~icdl.repro.files.ResultFileError` naming the first one's process."""
    return one_writer((root or project_root()) / "notebooks" / f"{name}.py", f"chapter {name}")


def _run(pm, nb, tmp: Path, out: Path, params: dict, root: Path, name: str, start: float) -> tuple[Path, float]:
    before = os.environ.get(LOCK_ENV)
    os.environ[LOCK_ENV] = f"{name}:{os.getpid()}"  # the kernel (our child) runs under the lock this process holds
    ctrl_c = KernelInterrupt()
    try:
        with ctrl_c:
            try:
                executed = pm.execute_notebook(nb, str(tmp), parameters=params, kernel_name=KERNEL,
                                               cwd=str(root / "notebooks"), progress_bar=False,
                                               log_output=False, report_mode=False, extra_arguments=KERNEL_QUIET)
            except Exception as err:
                # Ctrl-C given to the kernel from here (whatever the cell or the kernel then did), or to the
                # kernel alone: a cell that stopped in KeyboardInterrupt
                if ctrl_c.stopping or getattr(err, "ename", None) == "KeyboardInterrupt":
                    raise KeyboardInterrupt from None
                raise
        if ctrl_c.stopping:  # interrupted, though the chapter came to its end: nothing is written
            raise KeyboardInterrupt
        elapsed = time.perf_counter() - start
        _strip_volatile(executed, name)
        import nbformat

        nbformat.write(executed, str(tmp))
        os.chmod(tmp, 0o644)
        tmp.replace(out)
    except pm.PapermillExecutionError as err:
        raise SystemExit(f"chapter {name} failed in cell {err.cell_index} (execution count "
                         f"{err.exec_count}): {err.ename}: {err.evalue}") from None
    finally:
        tmp.unlink(missing_ok=True)
        if before is None:
            os.environ.pop(LOCK_ENV, None)
        else:
            os.environ[LOCK_ENV] = before
    return out, elapsed


class KernelInterrupt:
    """Ctrl-C while a chapter executes, given to the kernel as Jupyter gives it (SIGINT to the kernel's process
    group, so the running cell raises ``KeyboardInterrupt`` and papermill stops at that cell), again every
    :attr:`EVERY` seconds until the run ends (a kernel between two cells ignores it). A second Ctrl-C, or one
    before any kernel runs, raises ``KeyboardInterrupt`` here at once.

    The bug (issue 70): Ctrl-C to the process group raised ``KeyboardInterrupt`` inside nbclient's event loop,
    whose cell task was left pending; papermill's clean-up shut the kernel down and ran the loop again, the
    task then found the kernel dead, and the command's one line came between nbclient's "Kernel died" and
    asyncio's ``DeadKernelError`` traceback ("Task exception was never retrieved"), eight lines in all."""

    EVERY = 0.5

    def __init__(self) -> None:
        self.stopping = False
        self._done = threading.Event()
        self._previous = None

    def __enter__(self):
        # a command started with SIGINT ignored (in the background of a non-interactive shell) keeps ignoring it
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _on_sigint(self, signum, frame) -> None:
        kernels = _children()
        if self.stopping or not kernels:
            raise KeyboardInterrupt
        self.stopping = True
        threading.Thread(target=self._interrupt, daemon=True, name="interrupt the kernel").start()

    def _interrupt(self) -> None:
        while not self._done.is_set():
            for pid in _children():
                try:  # the kernel leads a process group of its own (jupyter_client starts it in a new session)
                    os.killpg(pid, signal.SIGINT) if os.getpgid(pid) == pid else os.kill(pid, signal.SIGINT)
                except OSError:  # gone meanwhile
                    continue
            self._done.wait(self.EVERY)


def _children() -> list[int]:
    """The kernels this process started (``/proc``: its children that run ``ipykernel``)."""
    me, found = os.getpid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == me and \
                    b"ipykernel" in (stat.parent / "cmdline").read_bytes():
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    from .cli import Parser

    p = Parser(prog="python -m icdl.repro.execute", description=__doc__.split("\n")[0])
    p.add_argument("chapters", nargs="*", help="chapter ids (default: all, in the order of _toc.yml), e.g. icgd_linear")
    p.add_argument("-p", "--profile", default="quick", help="profile name (default: quick)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one setting of the profile (repeatable)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m icdl.repro.execute [CHAPTER ...] [--profile P] [--set KEY=VALUE ...]``: check every chapter
    and its settings, then execute them in turn. Ctrl-C ends it in one line, exit status 130, whenever it comes
    (while a chapter runs: :func:`_execute`; while the chapters are checked, before any kernel starts: here)."""
    p = parser()
    try:
        return _execute(p, p.parse_args(argv))
    except KeyboardInterrupt:  # no chapter was executing: none was left half-written
        p.exit(130, "python -m icdl.repro.execute: stopped (Ctrl-C) while no chapter was executing (before the "
                    "first, while the chapters were checked, or between two); none was left half-written -- run "
                    "the same command again\n")


def _execute(p, args) -> int:
    """The command's work, its arguments parsed: every chapter checked, then each executed (Ctrl-C during one
    ends the command here, naming it)."""
    overrides = {}
    for item in args.set:
        if "=" not in item:
            p.error(f"--set expects KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        if key.strip() in overrides:
            p.error(f"--set {key.strip()} is given twice; give each setting once")
        overrides[key.strip()] = _parse_value(value.strip())
    try:
        root = project_root()
    except ResultFileError as err:  # ICDL_ROOT pointing elsewhere
        p.error(str(err))
    names = args.chapters or chapters(root)
    from .cli import given_twice
    from .profiles import ProfileError, dry_run

    given_twice(p, "chapter", args.chapters)
    for name in names:  # every chapter id and its settings checked before any kernel starts
        if name not in chapters(root):
            p.error(f"unknown chapter {name!r}; chapters (from _toc.yml): {', '.join(chapters(root))}")
        if not (root / "notebooks" / f"{name}.py").is_file():
            p.error(f"chapter {name!r} is in _toc.yml but notebooks/{name}.py is missing; restore it (git checkout)")
        try:
            chapter_profiles(name).check_chapter_profile(args.profile)
            chapter_profiles(name).resolve(args.profile, **overrides)
        except ProfileError as err:
            p.error(str(err))
    if dry_run(f"execute {', '.join(names)} at profile {args.profile}"
               + "".join(f" --set {k}={v}" for k, v in overrides.items())):
        return 0
    total = 0.0
    main_thread = threading.current_thread() is threading.main_thread()
    # SIGTERM as SystemExit, so that the work-in-progress file is removed
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if main_thread else None
    try:
        for name in names:
            try:
                out, elapsed = execute_chapter(name, args.profile, overrides, root)
            except ResultFileError as err:
                p.exit(2, f"python -m icdl.repro.execute: error: {err}\n")
            except KeyboardInterrupt:  # Ctrl-C: the chapter's files were left as they were (execute_chapter's finally)
                p.exit(130, f"python -m icdl.repro.execute: stopped (Ctrl-C) while executing {name}; its notebook and "
                            "results were not written -- run the same command again\n")
            total += elapsed
            print(f"executed {name:<28} profile={args.profile:<10} {elapsed:7.1f} s -> {out.relative_to(root)}",
                  flush=True)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    print(f"all chapters: {total:.1f} s", flush=True)
    return 0


def _exit_on_sigterm(signum, frame):
    """SIGTERM as ``SystemExit`` (exit status 143): the ``finally`` blocks run, so nothing half-written stays."""
    print("python -m icdl.repro.execute: stopped by SIGTERM; the chapter being executed was not written",
          file=sys.stderr, flush=True)
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
