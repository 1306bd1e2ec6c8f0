"""One writer of a chapter, however it runs (icdl.repro.chapter.hold_lock, icdl.repro.execute.chapter_lock),
and of a depth's scores in the scale study (``python -m icdl.gpt_icl.scale --score``).

The bug this catches: ``python -m icdl.repro.execute <chapter>`` held the chapter's lock, but papermill run
directly on the notebook did not take it, so both wrote the same result and ledger files; ``--score`` took
no lock at all. Each test holds a lock in one process and starts the second writer in another.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import scratch_clone

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "icgd_linear"
#: the chapter's own first code (what papermill, nbval and JupyterLab run): its set-up cell's call
START = ("from icdl.repro import chapter; from icdl.studies.linear_gd import PROFILES; "
         "chapter.start(PROFILES, 'quick'); print('started', flush=True)")


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """A project root of its own (``$ICDL_ROOT``): its ``runs/locks/`` and no other run's."""
    shutil.copy(ROOT / "_toc.yml", tmp_path / "_toc.yml")
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / f"{CHAPTER}.py", tmp_path / "notebooks" / f"{CHAPTER}.py")
    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.delenv("ICDL_CHAPTER_LOCK", raising=False)
    return tmp_path


def holder(code: str) -> tuple[subprocess.Popen, str]:
    """A process that runs ``code`` (which prints a line once it holds its lock), then waits for its stdin to
    close; returned, with that line, once it holds the lock."""
    proc = subprocess.Popen([sys.executable, "-c", f"{code}\nimport sys; sys.stdin.read()"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.strip(), proc.communicate()[1]
    return proc, line.strip()


def release(proc: subprocess.Popen) -> str:
    return proc.communicate(timeout=60)[0]


def python(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_a_chapter_running_outside_execute_holds_its_lock(root):
    """A chapter started as papermill starts it (its first code, no ``execute`` around it) holds the chapter's
    lock: ``execute`` of the same chapter is refused at once in one line naming its pid, and so is a second
    start of the chapter elsewhere."""
    first, _ = holder(START)
    try:
        run = python("-m", "icdl.repro.execute", CHAPTER)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
        assert f"chapter {CHAPTER} is being written by pid {first.pid} " in lines[0], lines
        second = python("-c", START)
        assert second.returncode != 0 and "started" not in second.stdout
        assert f"ResultFileError: chapter {CHAPTER} is being written by pid {first.pid} " in second.stderr
    finally:
        release(first)


def test_execute_passes_its_lock_to_the_chapter_it_runs_and_to_no_one_else(root):
    """``execute`` holds the lock and names itself in ``$ICDL_CHAPTER_LOCK`` for the kernel it starts: the
    chapter run by its child starts; a process that is not its descendant, the same variable set, is refused
    naming the holder's pid."""
    code = (f"import os, subprocess, sys; from icdl.repro.execute import LOCK_ENV, chapter_lock\n"
            f"lock = chapter_lock({CHAPTER!r}); lock.__enter__()\n"
            f"os.environ[LOCK_ENV] = '{CHAPTER}:' + str(os.getpid())\n"
            f"child = subprocess.run([sys.executable, '-c', {START!r}], capture_output=True, text=True)\n"
            f"print('child', child.returncode, child.stdout.strip(), flush=True)")
    first, line = holder(code)
    try:
        assert line == "child 0 started", line
        outsider = python("-c", START, env={"ICDL_CHAPTER_LOCK": f"{CHAPTER}:{first.pid}"})
        assert outsider.returncode != 0 and f"is being written by pid {first.pid} " in outsider.stderr
    finally:
        release(first)


def test_the_lock_variable_is_honoured_only_for_an_ancestor_that_holds_the_lock(root):
    """``ICDL_CHAPTER_LOCK=<chapter>:1`` set by hand (pid 1 is everyone's ancestor: the probe ran papermill beside
    ``execute`` so) is not honoured -- the chapter still takes the lock, and is refused while another process
    holds it; nor is the variable naming an ancestor that holds nothing."""
    first, _ = holder(f"from icdl.repro.execute import chapter_lock\n"
                      f"lock = chapter_lock({CHAPTER!r}); lock.__enter__(); print('held', flush=True)")
    try:
        forged = python("-c", START, env={"ICDL_CHAPTER_LOCK": f"{CHAPTER}:1"})
        assert forged.returncode != 0 and f"is being written by pid {first.pid} " in forged.stderr
    finally:
        release(first)
    # nobody holds it and the variable names this test's own process (an ancestor of the child): the chapter takes
    # the lock itself (and starts), rather than running unlocked on the variable's word
    code = (f"{START}\nfrom icdl.repro import chapter\nprint(sorted(chapter._HELD), flush=True)")
    alone = python("-c", code, env={"ICDL_CHAPTER_LOCK": f"{CHAPTER}:{os.getpid()}"})
    assert alone.returncode == 0 and f"['{CHAPTER}']" in alone.stdout, alone.stderr


def test_a_pid_written_into_the_lock_file_by_hand_is_not_honoured(root):
    """The forgery of issue 70: while another process holds the chapter's lock, its file's line is overwritten
    with this test's pid (an ancestor of the child) and the variable names that pid -- the chapter asks the
    kernel who holds the lock (``/proc/locks``), not the file's text, and is refused naming the real holder
    (the bug: the file's "pid N" honoured, the chapter run beside the legitimate writer)."""
    from icdl.repro.files import lock_file

    first, _ = holder(f"from icdl.repro.execute import chapter_lock\n"
                      f"lock = chapter_lock({CHAPTER!r}); lock.__enter__(); print('held', flush=True)")
    try:
        path, _ = lock_file(root / "notebooks" / f"{CHAPTER}.py")
        path.write_text(f"pid {os.getpid()} (a forged line)\n")
        forged = python("-c", START, env={"ICDL_CHAPTER_LOCK": f"{CHAPTER}:{os.getpid()}"})
        assert forged.returncode != 0 and "started" not in forged.stdout, forged.stdout
        assert "is being written by pid" in forged.stderr, forged.stderr
    finally:
        release(first)


def test_the_kernel_s_table_of_locks_is_read_by_file(tmp_path):
    """``lock_holders`` reads the holders of the file's own device and inode (the bugs: another file's lock
    read as this one's, a POSIX lock read as an flock, the device's hex misread)."""
    from icdl.repro.chapter import lock_holders

    path = tmp_path / "x.lock"
    path.write_text("")
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        mine = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
        other = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino + 1}"
        table = tmp_path / "locks"
        table.write_text(f"1: FLOCK  ADVISORY  WRITE 123 {mine} 0 EOF\n2: FLOCK  ADVISORY  WRITE 456 {other} 0 EOF\n"
                         f"3: POSIX  ADVISORY  WRITE 789 {mine} 0 EOF\n")
        assert lock_holders(fd, str(table)) == {123}
        assert lock_holders(fd, str(tmp_path / "absent")) == set()
    finally:
        os.close(fd)


def test_a_second_scoring_of_the_same_depth_is_refused(root, capsys):
    """``scale --score --depth D`` holds the lock of its score file: a second one is refused in one line (exit
    status 2) naming the first one's pid, before it reads any checkpoint."""
    from icdl.gpt_icl import scale

    cfg = scale.models.PROFILES.resolve("quick")
    path = scale.study._score_path(cfg, cfg["depths"][0])
    first, _ = holder(f"from icdl.repro.files import one_writer\n"
                   f"lock = one_writer({str(path)!r}); lock.__enter__(); print('held', flush=True)")
    try:
        assert scale.study.main(["--profile", "quick", "--score", "--depth", str(cfg["depths"][0])]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"is being written by pid {first.pid} " in err[0], err
    finally:
        release(first)


def test_a_kernel_started_outside_the_clone_takes_the_clone_s_lock(tmp_path, monkeypatch):
    """Two papermill runs of one chapter, 3 s apart, both ran (issue 70): the second, started from a folder outside
    the clone (``papermill <clone>/notebooks/<id>.ipynb out.ipynb``: its kernel works there), found no ``_toc.yml``
    above it and took ``src/`` for the project -- another lock, and its results and ledger under ``src/``. Now the
    project is the clone the package is in, and the second run is refused, naming the first."""
    from icdl.repro.execute import chapter_lock
    from icdl.repro.files import lock_file, project_root

    monkeypatch.delenv("ICDL_ROOT", raising=False)
    monkeypatch.delenv("ICDL_CHAPTER_LOCK", raising=False)
    monkeypatch.chdir(tmp_path)
    assert project_root() == ROOT
    name = f"two-kernels-{os.getpid()}"  # no chapter's: a real run of the book is never in its way
    env = {k: v for k, v in os.environ.items() if k != "ICDL_ROOT"}
    try:
        with chapter_lock(name, ROOT):
            second = subprocess.run([sys.executable, "-c", f"from icdl.repro.chapter import hold_lock; "
                                     f"hold_lock({name!r})"], cwd=tmp_path, env=env, capture_output=True,
                                    text=True, timeout=120)
    finally:
        lock_file(ROOT / "notebooks" / f"{name}.py")[0].unlink(missing_ok=True)
    assert second.returncode == 1 and f"chapter {name} is being written by pid {os.getpid()}" in second.stderr
    assert not (ROOT / "src" / "runs").exists()
