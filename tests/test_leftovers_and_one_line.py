"""Leftovers of interrupted runs are swept (only a dead writer's), a lock refusal names the holder's pid, and
refusals the commands promise as one line are one line: no traceback, exit status 2 (130 for Ctrl-C)."""

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from conftest import assert_process_ends, scratch_clone, started_job_pid
from icdl.repro.checkpoints import CheckpointError, load_checkpoint, save_checkpoint
from icdl.repro.files import ResultFileError, one_writer
from icdl.repro.results import provenance, save_result

DEAD = 999_999_999  # above any pid_max: never a live process


#: a benchmark of the shape the LSA command writes (icdl.lsa.shapes), so that the command gets to what is tested
_BENCHMARK = {"method": ["batched"], "seconds": [1.0], "speedup": [1.0], "threads": [1], "run_steps_per_s": [1.0],
              "protocol_hours": [1.0]}


def _prov():
    return provenance(command="python -m icdl.demo", wall_time_s=0.0, profile="quick", seed=0)


# ---- leftovers ---------------------------------------------------------------------------------------------


def test_the_next_save_sweeps_the_tmp_files_of_dead_writers_only(tmp_path):
    target = tmp_path / "r.json"
    dead = tmp_path / f".r.json.{DEAD}.abc123.tmp"
    live = tmp_path / f".r.json.{os.getpid()}.def456.tmp"
    old_unnamed, new_unnamed = tmp_path / ".r.json.k3j4h5.tmp", tmp_path / ".r.json.p9q8r7.tmp"
    other = tmp_path / f".r.json.x.json.{DEAD}.abc123.tmp"  # another file's, whose name starts with this one
    for p in (dead, live, old_unnamed, new_unnamed, other):
        p.write_text("half")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old_unnamed, (two_days_ago, two_days_ago))
    save_result(target, {"x": 1}, provenance=_prov())
    assert not dead.exists() and not old_unnamed.exists()
    assert live.exists() and new_unnamed.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.glob(".*.tmp")) == sorted(p.name for p in (live, new_unnamed, other))


def test_a_write_names_its_tmp_file_after_its_process(tmp_path, monkeypatch):
    from icdl.repro import files

    seen = []
    real = os.replace
    monkeypatch.setattr(files.os, "replace", lambda a, b: (seen.append(Path(a).name), real(a, b)))
    save_result(tmp_path / "r.json", {"x": 1}, provenance=_prov())
    assert seen and seen[0].startswith(f".r.json.{os.getpid()}.") and seen[0].endswith(".tmp")


def test_the_next_checkpoint_save_sweeps_a_dead_save_s_tmp(tmp_path):
    stale = tmp_path / f".m.pt.new.{DEAD}.zz11yy.tmp"
    stale.write_bytes(b"half")
    save_checkpoint(tmp_path / "m.pt", {"w": torch.zeros(2)})
    assert not stale.exists()


def test_a_lock_refusal_in_the_holder_s_first_moment_names_its_pid(tmp_path, monkeypatch):
    """The holder has the lock but has not written its line yet (the file is empty, or still names the
    previous, finished holder): the refusal names the pid the kernel lists, never 'another process'."""
    from icdl.repro.files import lock_file

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    target = tmp_path / "results" / "demo" / "x.json"
    lock, _ = lock_file(target)
    lock.parent.mkdir(parents=True)
    for leftover in ("", f"pid {DEAD} (python -m an earlier run)"):
        lock.write_text(leftover)
        with open(lock, "a+") as holder:
            fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with pytest.raises(ResultFileError, match=rf"being written by pid {os.getpid()}\b") as err:
                with one_writer(target):
                    pass
            assert "another process" not in str(err.value) and str(DEAD) not in str(err.value)


def test_a_lock_folder_that_cannot_be_made_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    (tmp_path / "runs").write_text("not a folder")
    with pytest.raises(ResultFileError, match="cannot create the lock file"):
        with one_writer(tmp_path / "results" / "x.json"):
            pass


@pytest.mark.parametrize("planted", ["runs", "runs/locks"])
def test_a_link_planted_at_the_lock_folder_is_refused_and_nothing_written_there(tmp_path, monkeypatch, planted):
    """``runs/`` or ``runs/locks/`` a link to another folder (``O_NOFOLLOW`` guards the lock file's own name only):
    the lock files would be created, and their lines written, wherever the link points. Refused in one line naming
    the link; the folder it points to is left empty."""
    from icdl.repro.files import lock_file

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    target = tmp_path / "results" / "demo" / "x.json"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    assert lock_file(target)[0].parent.parent.name == "runs"
    with pytest.raises(ResultFileError, match=rf"{planted} is a link; the lock files must live"):
        with one_writer(target):
            pass
    assert list(elsewhere.iterdir()) == []


def test_a_link_planted_at_a_lock_is_refused_and_its_target_untouched(tmp_path, monkeypatch):
    """The lock's line is never written through a link (the probe: a link at a chapter's lock made ``execute``
    overwrite README.md): refused in one line, the link's target byte for byte as it was."""
    from icdl.repro.files import lock_file

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    target = tmp_path / "results" / "demo" / "x.json"
    lock, _ = lock_file(target)
    lock.parent.mkdir(parents=True)
    victim = tmp_path / "README.md"
    victim.write_text("the reader's file\n")
    lock.symlink_to(victim)
    with pytest.raises(ResultFileError, match="is a link; remove it"):
        with one_writer(target):
            pass
    assert victim.read_text() == "the reader's file\n"
    lock.unlink()
    os.mkfifo(lock)  # not a regular file either
    with pytest.raises(ResultFileError, match="not a regular file"):
        with one_writer(target):
            pass


def test_a_hard_link_or_a_stranger_s_file_at_a_lock_is_refused_and_left_untouched(tmp_path, monkeypatch):
    """The lock's line is written only over a lock file (the probe: ``ln README.md runs/locks/<lock>`` -- no link
    for ``O_NOFOLLOW`` to see -- and ``execute`` replaced README.md by a pid line): a hard link at the lock's name is
    refused in one line, and so is a file moved or copied there that holds anything but a lock's line; both byte
    for byte as they were. A lock file a finished writer left (its line) is taken over as always."""
    from icdl.repro.files import lock_file

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    target = tmp_path / "notebooks" / "icgd_linear.py"
    lock, _ = lock_file(target)
    lock.parent.mkdir(parents=True)
    victim = tmp_path / "README.md"
    victim.write_text("the reader's file\n")
    os.link(victim, lock)
    with pytest.raises(ResultFileError, match=r"is a hard link \(2 names share its content") as err:
        with one_writer(target):
            pass
    assert "\n" not in str(err.value) and victim.read_text() == "the reader's file\n"
    lock.unlink()
    lock.write_text("the reader's file\n")  # a copy: one name, but not a lock's
    with pytest.raises(ResultFileError, match="holds something other than a lock's line"):
        with one_writer(target):
            pass
    assert lock.read_text() == "the reader's file\n"
    lock.write_text(f"pid {DEAD} (python -m icdl.repro.execute icgd_linear)")  # a finished writer's
    with one_writer(target):
        assert lock.read_text().startswith(f"pid {os.getpid()} (")


@pytest.mark.parametrize("step", ["write", "flush"])
def test_a_full_disk_while_a_lock_is_written_is_one_line_and_releases_it(tmp_path, monkeypatch, capsys, step):
    """ENOSPC while the lock's line (``pid N (command)``) is written -- the probe: a full disk gave an ``OSError``
    traceback out of ``one_writer``, past every command's one-line refusal -- is one
    :class:`~icdl.repro.files.ResultFileError` naming the lock file and the full disk; the lock is released (the
    next writer takes it), and ``execute`` says so in one line without starting the chapter."""
    import errno

    from icdl.repro import execute, files

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    target = tmp_path / "results" / "demo" / "x.json"
    real = os.fdopen

    class FullDisk:
        """The lock file's handle on a full disk: ``step`` fails with ENOSPC."""

        def __init__(self, handle):
            self._handle = handle

        def __getattr__(self, name):
            if name == step:
                def full(*args):
                    raise OSError(errno.ENOSPC, "No space left on device")
                return full
            return getattr(self._handle, name)

    with monkeypatch.context() as m:
        m.setattr(files.os, "fdopen", lambda *a, **k: FullDisk(real(*a, **k)))
        with pytest.raises(ResultFileError, match=r"x\.json\.[0-9a-f]+\.lock: No space left on device; free space"):
            with one_writer(target):
                pytest.fail("the lock was held without its line")
    with one_writer(target):  # released: the next writer takes it
        pass

    _book(tmp_path, "x = 1")
    monkeypatch.setattr(execute, "_run", lambda *a: pytest.fail("the chapter ran without its lock"))
    with monkeypatch.context() as m:
        m.setattr(files.os, "fdopen", lambda *a, **k: FullDisk(real(*a, **k)))
        with pytest.raises(SystemExit) as stop:
            execute.main(["computation"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "No space left on device" in err


@pytest.mark.parametrize("kind", ["link", "folder", "pipe"])
def test_an_output_path_that_is_not_a_regular_file_is_refused_before_anything_is_written(tmp_path, kind):
    """A result written to a link, a folder or a pipe (the probe: the report given /dev/full, as root, replaced
    the device node) is refused in one line, and nothing beside it is left half-written."""
    target = tmp_path / "out.json"
    other = tmp_path / "other.json"
    other.write_text("{}")
    {"link": lambda: target.symlink_to(other), "folder": target.mkdir, "pipe": lambda: os.mkfifo(target)}[kind]()
    with pytest.raises(ResultFileError, match=r"out\.json is a (link|folder|device or pipe)"):
        save_result(target, {"x": [1.0]}, provenance=_prov())
    assert other.read_text() == "{}" and sorted(p.name for p in tmp_path.iterdir()) == ["other.json", "out.json"]


# ---- chapter execution -------------------------------------------------------------------------------------


def _book(root: Path, cell: str) -> None:
    """A book of one chapter, ``computation`` (a real chapter id, so its profiles resolve), whose cell is
    ``cell``."""
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nparts:\n- caption: x\n  chapters:\n"
                                   "  - file: notebooks/computation\n")
    (root / "notebooks" / "computation.py").write_text(f"# %%\n{cell}\n")


@pytest.mark.parametrize("kind", ["folder", "link", "pipe"])
def test_an_executed_notebook_path_that_is_not_a_file_is_refused_before_the_kernel_starts(tmp_path, monkeypatch,
                                                                                          capsys, kind):
    """``notebooks/<chapter>.ipynb`` (where ``execute`` writes the executed chapter) a folder, a link or a pipe --
    the bug: the chapter ran in full and only then did the rename fail (a folder) or replace the thing in its
    place (a link, a pipe) -- is refused in one line, exit status 2, before a kernel starts; what is there is
    left alone."""
    from icdl.repro import execute

    _book(tmp_path, "x = 1")
    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    monkeypatch.setattr(execute, "_run", lambda *a: pytest.fail("the chapter ran before its output was checked"))
    out = tmp_path / "notebooks" / "computation.ipynb"
    victim = tmp_path / "README.md"
    victim.write_text("the reader's file\n")
    {"folder": out.mkdir, "link": lambda: out.symlink_to(victim), "pipe": lambda: os.mkfifo(out)}[kind]()
    with pytest.raises(SystemExit) as stop:
        execute.main(["computation"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "computation.ipynb is a" in err
    assert victim.read_text() == "the reader's file\n" and (out.is_symlink() or out.exists())


def test_the_next_execution_sweeps_dead_executions_notebooks(tmp_path):
    from icdl.repro.execute import sweep_stale_notebooks

    dead = tmp_path / f"computation.quick.{DEAD}.ipynb"
    live = tmp_path / f"computation.reference.{os.getpid()}.ipynb"
    dead.write_text("{}")
    live.write_text("{}")
    assert sweep_stale_notebooks(tmp_path) == [dead]
    assert live.exists() and not dead.exists()


def test_an_unwritable_runs_folder_is_one_line(tmp_path, monkeypatch, capsys):
    """``runs/`` that cannot be written (here a file in its place: the tests may run as root, which writes
    through any mode) ends the command with one line naming it, exit status 2."""
    from icdl.repro import execute

    _book(tmp_path, "x = 1")
    (tmp_path / "runs").write_text("")
    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    with pytest.raises(SystemExit) as stop:
        execute.main(["computation"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "cannot write" in err and "runs" in err


def as_in_a_terminal():
    """SIGINT at its default in a command the tests start, as in a terminal's foreground command. A suite started
    in the background by a non-interactive shell (``make test &``, a CI step) runs with SIGINT ignored (POSIX),
    its children inherit that, and Python then never turns SIGINT into KeyboardInterrupt: a test of Ctrl-C
    would wait for the command to finish on its own (the fresh-clone CI run: 60 s, then a timeout)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig, code, words", [(signal.SIGTERM, 143, "SIGTERM"),
                                              (signal.SIGINT, 130, "stopped (Ctrl-C)")])
def test_a_signal_to_an_execution_ends_it_in_one_line_and_writes_nothing(tmp_path, sig, code, words):
    """SIGTERM or Ctrl-C during a chapter's execution (the probe: Ctrl-C gave a traceback through papermill's
    select loop): the command ends (143, 130) with one line, and neither a work-in-progress notebook in
    ``runs/.tmp`` nor an executed notebook is left."""
    started = tmp_path / "cell-started"
    _book(tmp_path, f"open({str(started)!r}, 'w').close()\nimport time\ntime.sleep(60)")
    env = {**os.environ, "ICDL_ROOT": scratch_clone(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "icdl.repro.execute", "computation"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_in_a_terminal)
    wip = tmp_path / "runs" / ".tmp" / f"computation.quick.{proc.pid}.ipynb"
    deadline = time.time() + 90
    while not (wip.exists() and started.exists()):  # the kernel runs the cell (a loaded machine starts it slowly)
        assert time.time() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() else "too slow"
        time.sleep(0.1)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and words in err
    assert list((tmp_path / "runs" / ".tmp").iterdir()) == []
    assert not (tmp_path / "notebooks" / "computation.ipynb").exists()


def test_ctrl_c_while_the_chapters_are_checked_is_one_line(tmp_path, monkeypatch, capsys):
    """Ctrl-C while ``execute`` checks every chapter and its settings, before any kernel starts (importing the
    chapters' studies takes seconds: the probe's Ctrl-C landed there). The bug: a KeyboardInterrupt traceback
    through the imports, the promised one line given only during a chapter's execution. Now exit status 130,
    one line, nothing written."""
    from icdl.repro import execute

    _book(tmp_path, "x = 1")
    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))

    def interrupted(name):
        raise KeyboardInterrupt

    monkeypatch.setattr(execute, "chapter_profiles", interrupted)
    try:
        execute.main(["computation"])
    except KeyboardInterrupt:  # caught here, or pytest would stop the whole session
        pytest.fail("Ctrl-C while checking the chapters escaped as a KeyboardInterrupt traceback")
    except SystemExit as stop:
        assert stop.code == 130
    else:
        pytest.fail("execute went on after Ctrl-C")
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "stopped (Ctrl-C)" in err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "notebooks" / "computation.ipynb").exists()


def test_icdl_root_that_is_not_this_project_is_one_line(tmp_path, monkeypatch, capsys):
    """``ICDL_ROOT`` missing or a file (the probe: a traceback, or results written under another folder): refused
    by every command in one line naming it."""
    from icdl.repro import execute

    for root in (tmp_path / "missing", tmp_path / "a_file"):
        if root.name == "a_file":
            root.write_text("")
        monkeypatch.setenv("ICDL_ROOT", str(root))
        with pytest.raises(SystemExit) as stop:
            execute.main(["computation"])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and f"ICDL_ROOT={root}" in err


@pytest.mark.parametrize("module", ["icdl.studies.diffusion", "icdl.studies.softmax", "icdl.gpt_icl.mechanism.study"])
def test_icdl_root_that_is_not_a_folder_is_one_line_under_the_studies_commands(tmp_path, monkeypatch, capsys, module):
    """``ICDL_ROOT`` missing or a file under the diffusion, softmax and mechanism studies' commands -- the probe:
    a traceback ending in the package's own ResultFileError, raised where the result's folder was named, outside
    the command's one-line refusal -- is one line naming it, exit status 2, before any work."""
    import importlib

    command = importlib.import_module(module)
    for root in (tmp_path / "missing", tmp_path / "a_file"):
        if root.name == "a_file":
            root.write_text("")
        monkeypatch.setenv("ICDL_ROOT", str(root))
        try:
            code = command.main([])
        except SystemExit as stop:
            code = stop.code
        assert code == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and f"ICDL_ROOT={root}" in err


@pytest.mark.parametrize("marks", [(), ("_toc.yml",), ("_toc.yml", "src/icdl/"), ("_toc.yml", ".git/"),
                                   ("src/icdl/", ".git/")])
def test_icdl_root_at_a_folder_that_is_not_a_clone_is_one_line_and_nothing_is_made_there(tmp_path, monkeypatch,
                                                                                          capsys, marks):
    """``ICDL_ROOT`` an existing folder that is not a clone (the probe: an empty folder -- ``report`` said "80
    claims: 0 pass … not yet covered", exit status 0, and made ``results/ledger/`` there; ``execute`` ended in a
    FileNotFoundError traceback for ``_toc.yml``): refused by both in one line naming it and what it lacks, exit
    status 2, nothing made there. A clone has ``_toc.yml``, ``src/icdl`` and ``.git`` (or, unpacked from the book's
    source archive, ``SOURCE_COMMIT``)."""
    from icdl.repro import execute, report
    from icdl.repro.files import project_root

    root = tmp_path / "elsewhere"
    root.mkdir()
    for mark in marks:
        _mark(root, mark)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    monkeypatch.setenv("ICDL_ROOT", str(root))
    with pytest.raises(SystemExit) as stop:
        execute.main(["computation"])
    assert stop.value.code == 2
    assert report.main([str(tmp_path / "R.md"), str(tmp_path / "S.md")]) == 2
    for err in capsys.readouterr().err.strip().splitlines():
        assert f"ICDL_ROOT={root} is not a clone of this repository (it has no " in err and "Traceback" not in err
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before and not (tmp_path / "R.md").exists()
    for mark in ("_toc.yml", "src/icdl/", "SOURCE_COMMIT"):  # an unpacked source archive: no .git, its commit named
        _mark(root, mark)
    assert project_root() == root.resolve()


def _mark(root: Path, mark: str) -> None:
    """One mark of a clone in ``root``: a folder where ``mark`` ends in ``/``, else an empty file."""
    path = root / mark
    path.mkdir(parents=True, exist_ok=True) if mark.endswith("/") else path.touch()


def test_icdl_root_at_another_clone_writes_there_but_names_the_commit_of_the_code_that_ran(tmp_path, monkeypatch):
    """``ICDL_ROOT`` naming another clone sends the results there, but their provenance names the commit and the
    changes of the code that computed them -- this tree's, whose package ran -- not the other clone's (the bug: the
    other clone's commit, clean, recorded for numbers made by this tree's edited code)."""
    import subprocess

    from icdl.repro.commits import code_root, git_commit
    from icdl.repro.files import project_root
    from icdl.repro.results import provenance

    def git(*args):
        return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=tmp_path, check=True,
                              capture_output=True, text=True).stdout.strip()

    (tmp_path / "_toc.yml").write_text("root: x\n")
    (tmp_path / "src" / "icdl").mkdir(parents=True)
    (tmp_path / "src" / "icdl" / "__init__.py").write_text("")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "another clone")
    other = git("rev-parse", "HEAD")
    ours = git_commit(code_root())
    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    assert project_root() == tmp_path.resolve()  # the results go to the other clone
    assert code_root() == Path(__file__).resolve().parents[1]
    recorded = provenance(command="x", wall_time_s=1.0, profile="quick", seed=0)["git_commit"]
    assert recorded == ours and not recorded.startswith(other)


@pytest.mark.parametrize("env, words", [
    ({"WORLD_SIZE": "abc"}, "WORLD_SIZE='abc' must be a whole number"),
    ({"WORLD_SIZE": "0"}, "at least 1"),
    ({"WORLD_SIZE": "2"}, "RANK is not set"),
    ({"WORLD_SIZE": "2", "RANK": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"}, "RANK='2' is not one of 0..1"),
    ({"WORLD_SIZE": "2", "RANK": "0"}, "MASTER_ADDR, MASTER_PORT not set"),
])
def test_a_world_size_torchrun_did_not_set_is_one_line(monkeypatch, capsys, env, words):
    """``WORLD_SIZE`` outside torchrun, or not a number (the probe: a traceback from torch.distributed's
    rendezvous): refused before any work, one line, exit status 2; a world of one process runs as always."""
    from icdl.gpt_icl import __main__ as gpt_main

    for key in ("WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ICDL_DRY_RUN", "1")
    with pytest.raises(SystemExit) as stop:
        gpt_main.main(["--part", "plateau"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and words in err
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert gpt_main.main(["--part", "plateau"]) == 0


# ---- checkpoints of another study --------------------------------------------------------------------------


def _lsa_like(path):
    return save_checkpoint(path, {"cfg": {"runs": 1}, "model": {}, "epoch": 1})


def _gpt_like(path):
    return save_checkpoint(path, {"settings": {"model": {}}, "model": {}, "step": 1})


def test_an_lsa_checkpoint_is_refused_where_a_gpt_one_is_read(tmp_path):
    from icdl.gpt_icl.core.training import load_model

    path = _lsa_like(tmp_path / "model.pt")
    with pytest.raises(CheckpointError, match=r"model\.pt is not a GPT in-context checkpoint.*holds an LSA"):
        load_model(path)
    with pytest.raises(CheckpointError, match="not a GPT"):
        load_checkpoint(path, kind="gpt_icl")
    assert load_checkpoint(path, kind="lsa")["epoch"] == 1


def test_a_gpt_checkpoint_is_refused_where_an_lsa_one_is_read(tmp_path, monkeypatch, capsys):
    """``python -m icdl.lsa`` meeting a GPT checkpoint in place of its own: one line naming the file."""
    from icdl.lsa.__main__ import main
    from icdl.lsa.study import PROFILES

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    (tmp_path / "_toc.yml").write_text("")
    _gpt_like(PROFILES.folder() / "checkpoint.quick.pt")
    save_result(PROFILES.folder() / "benchmark.quick.json", _BENCHMARK, provenance=_prov())
    assert main(["--profile", "quick", "--epochs-this-call", "1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "checkpoint.quick.pt is not an LSA training checkpoint" in err and "GPT" in err


@pytest.mark.parametrize("edit, field", [(lambda d: {}, "data.W_in_abs is missing"),
                                         (lambda d: {**d, "epochs_done": "3"}, "data.epochs_done must be an integer"),
                                         (lambda d: {**d, "settings": {}}, "data.settings.runs is missing")])
def test_a_training_result_without_its_fields_is_one_line(tmp_path, monkeypatch, capsys, edit, field):
    """A training result damaged by hand (emptied, a field of another type, settings without their counts) is
    refused before any training, in one line naming the file, the field and the command that rebuilds it."""
    import json

    from icdl.lsa.__main__ import main
    from icdl.lsa.study import PROFILES

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    (tmp_path / "_toc.yml").write_text("")
    save_result(PROFILES.folder() / "benchmark.quick.json", _BENCHMARK, provenance=_prov())
    committed = Path(__file__).resolve().parents[1] / "results/lsa_training/training.reference.json"
    good = json.loads(committed.read_text())
    relabelled = {**good["provenance"], "profile": "quick"}  # a quick result, damaged in its data alone
    (PROFILES.folder() / "training.quick.json").write_text(json.dumps({**good, "provenance": relabelled,
                                                                       "data": edit(good["data"])}))
    assert main(["--profile", "quick", "--epochs-this-call", "1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "training.quick.json" in err and field in err
    assert "python -m icdl.lsa --profile quick" in err
    assert not (PROFILES.folder() / "checkpoint.quick.pt").exists()  # refused before any training


# ---- the mechanism study's memory check, the report, Ctrl-C ------------------------------------------------


def test_the_mechanism_study_s_memory_check_is_one_line(monkeypatch, capsys):
    from icdl.gpt_icl import mechanism
    from icdl.repro import profiles

    monkeypatch.setattr(profiles, "machine_memory", lambda: 2.0**30)
    with pytest.raises(SystemExit) as stop:
        mechanism.study.main(["--profile", "paper"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "GiB of memory" in err


@pytest.mark.parametrize("text, message", [
    ('{"provenance": {"command": "x", "git', "not valid JSON"),
    (None, "'records' must be a list of records"),
    (5, "'records' must be a list of records"),
])
def test_a_damaged_ledger_file_is_one_line_under_the_report(tmp_path, monkeypatch, capsys, text, message):
    from icdl.repro import report

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    (tmp_path / "_toc.yml").write_text("")
    path = tmp_path / "results" / "ledger" / "softmax.quick.json"
    if isinstance(text, str):
        path.parent.mkdir(parents=True)
        path.write_text(text)
    else:
        save_result(path, {"chapter": "softmax", "records": "x" if text is None else text}, provenance=_prov())
    assert report.main([str(tmp_path / "R.md"), str(tmp_path / "S.md")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert message in err and "softmax.quick.json" in err and "icdl.repro.execute softmax" in err
    assert not (tmp_path / "R.md").exists()


def test_the_report_refuses_a_device_or_folder_for_either_output_before_writing_both(tmp_path, monkeypatch, capsys):
    """``python -m icdl.repro.report R.md <a pipe>`` (the probe gave /dev/full): one line naming the path, exit 2,
    and the report itself not written either (both paths are checked before the first write)."""
    from icdl.repro import report

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    (tmp_path / "_toc.yml").write_text("")
    os.mkfifo(tmp_path / "S.md")
    assert report.main([str(tmp_path / "R.md"), str(tmp_path / "S.md")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "S.md is a device or pipe" in err
    assert not (tmp_path / "R.md").exists()


def _ledger_and_results(root: Path) -> dict[Path, bytes]:
    """A scratch clone with a ledger file and a result, as committed: their bytes, to check nothing wrote them."""
    scratch_clone(root)
    for rel in ("results/ledger/softmax.quick.json", "results/softmax/softmax.quick.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text('{"committed": true}\n')
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("outputs, words", [
    (["results/ledger/softmax.quick.json", "S.md"], "is in {root}/results/ledger, which this command reads"),
    (["R.md", "results/softmax/softmax.quick.json"], "is under results/, where the project keeps its results"),
    (["R.md", "results/new.md"], "is under results/"),  # not there yet: still no place for a page
    (["R.md", "notebooks/../results/softmax/softmax.quick.json"], "is under results/"),
    (["R.md", "R.md"], "R.md and R.md are the same file"),
    (["R.md", "./R.md"], "are the same file"),
])
def test_the_report_refuses_an_output_over_its_ledger_the_results_or_the_other_output(tmp_path, monkeypatch, capsys,
                                                                                       outputs, words):
    """``python -m icdl.repro.report results/ledger/<chapter>.quick.json S.md`` (the probe: exit status 0, the
    committed ledger it had just read replaced by markdown), an output under ``results/``, or the two outputs one
    file (the summary written over the report): refused in one line naming the path, exit status 2, before the
    ledger is read and before anything is written -- every file as it was."""
    from icdl.repro import report

    before = _ledger_and_results(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICDL_ROOT", str(tmp_path))
    monkeypatch.setattr(report, "render_report", lambda **k: pytest.fail("rendered before the outputs were checked"))
    assert report.main(outputs) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("python -m icdl.repro.report: error: ") and words.format(root=tmp_path) in err
    assert "nothing was written" in err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("outputs, words", [
    (["results/ledger/softmax.quick.json"], "which this command reads"),
    (["E.md", "results/softmax/softmax.quick.json"], "is under results/"),
    (["E.md", "E.md"], "E.md and E.md are the same file"),
])
def test_the_errata_refuse_an_output_over_the_ledger_the_results_or_the_other_output(tmp_path, monkeypatch, capsys,
                                                                                      outputs, words):
    """``python -m icdl.repro.errata`` under the same rule as the report (icdl.repro.files.check_outputs): an
    output over the ledger it reads, under ``results/`` or over its other output is one line, exit status 2, before
    any measurement runs; every file as it was."""
    from icdl.repro import errata

    before = _ledger_and_results(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICDL_ROOT", str(tmp_path))
    monkeypatch.setattr(errata, "render", lambda: pytest.fail("rendered before the outputs were checked"))
    assert errata.main(outputs) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("python -m icdl.repro.errata: error: ") and words in err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("kind", ["folder", "pipe", "link"])
def test_the_errata_refuse_an_output_that_is_not_a_file_in_one_line_before_any_work(tmp_path, monkeypatch, capsys,
                                                                                    kind):
    """``python -m icdl.repro.errata <a folder>`` (or a pipe, a link; either output) -- the probe: a traceback ending
    in the package's own ResultFileError, after every erratum's measurement had run -- is refused in one line,
    exit status 2, before anything is rendered or written."""
    from icdl.repro import errata

    monkeypatch.setattr(errata, "render", lambda: pytest.fail("rendered before the outputs were checked"))
    other = tmp_path / "other.md"
    other.write_text("the reader's file\n")
    bad = tmp_path / "bad.md"
    {"folder": bad.mkdir, "pipe": lambda: os.mkfifo(bad), "link": lambda: bad.symlink_to(other)}[kind]()
    for argv in ([str(bad)], [str(tmp_path / "E.md"), str(bad)]):
        assert errata.main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert err.startswith("python -m icdl.repro.errata: error: ") and "bad.md is a" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.md", "other.md"]
    assert other.read_text() == "the reader's file\n"


def test_the_errata_with_icdl_root_missing_is_one_line(tmp_path, monkeypatch, capsys):
    """``ICDL_ROOT`` missing or a file under ``python -m icdl.repro.errata`` (the probe: a traceback, the ledger's
    folder unreadable): one line naming it, exit status 2, nothing written."""
    from icdl.repro import errata

    out = tmp_path / "E.md"
    for root in (tmp_path / "missing", tmp_path / "a_file"):
        if root.name == "a_file":
            root.write_text("")
        monkeypatch.setenv("ICDL_ROOT", str(root))
        assert errata.main([str(out)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and f"ICDL_ROOT={root}" in err
        assert not out.exists()


def test_ctrl_c_to_the_workers_run_stops_its_jobs_in_one_line(tmp_path):
    """SIGINT to ``python -m icdl.gpt_icl --workers N`` (here its :func:`run_reference` on a stand-in job that
    would sleep a minute): the job is stopped, one line says so, exit status 130, no traceback."""
    pidfile = tmp_path / "job.pid"
    job = (sys.executable, "-c", f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); "
                                 "time.sleep(60)")
    script = ("import sys\nfrom icdl.gpt_icl import reference\n"
              "reference.schedule = lambda profile: [reference.Job('long', ())]\n"
              "real = reference.run_jobs\n"
              f"reference.run_jobs = lambda jobs, **kw: real(jobs, **{{**kw, 'python': {job!r}, 'poll_s': 0.05}})\n"
              "sys.exit(reference.run_reference('quick', 2, seed=0))\n")
    parent = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "ICDL_ROOT": scratch_clone(tmp_path)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_in_a_terminal)
    child = started_job_pid(pidfile, parent)
    parent.send_signal(signal.SIGINT)
    _, err = parent.communicate(timeout=30)
    assert parent.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "interrupted" in err
    assert_process_ends(child, "its interrupted scheduler")


# ---- in a notebook -----------------------------------------------------------------------------------------


def test_the_package_s_refusals_show_as_one_line_in_ipython(capsys):
    """What papermill records of a chapter that raises the package's own error: IPython asks the exception
    for its traceback (``_render_traceback_``) -- one line, not the frames of the package around it."""
    from IPython.core.interactiveshell import InteractiveShell

    from icdl.repro.profiles import ProfileError

    assert ResultFileError("file x is damaged")._render_traceback_() == ["ResultFileError: file x is damaged"]
    assert isinstance(CheckpointError("c"), ValueError) and isinstance(ProfileError("p"), ValueError)
    shell = InteractiveShell.instance()
    shell.run_cell("from icdl.repro.results import load_result\nload_result('/nonexistent/x.json')")
    out = capsys.readouterr().out
    assert out.strip().splitlines() == [next(line for line in out.splitlines() if line.strip())]
    assert out.strip().startswith("ResultFileError: result file /nonexistent/x.json does not exist")


def test_a_first_call_shorter_than_the_first_validation_trains_and_writes_nothing_else(tmp_path, monkeypatch, capsys):
    """``python -m icdl.lsa --profile quick --epochs-this-call 5`` from scratch: the epochs go into the checkpoint,
    no result is written (there is no validation to hold yet, the first at ``val_every``), the call exits 0 and
    says to run it again -- not a refusal that blames a result file that does not exist (issue 58); the next call
    goes on from the checkpoint."""
    from icdl.lsa.__main__ import main
    from icdl.lsa.study import PROFILES

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    (tmp_path / "_toc.yml").write_text("")
    save_result(PROFILES.folder() / "benchmark.quick.json", _BENCHMARK, provenance=_prov())
    assert main(["--profile", "quick", "--epochs-this-call", "5", "--threads", "1"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "epochs 5/" in err and "run the same command again" in err
    assert (PROFILES.folder() / "checkpoint.quick.pt").exists()
    assert not (PROFILES.folder() / "training.quick.json").exists()
    assert main(["--profile", "quick", "--epochs-this-call", "5", "--threads", "1"]) == 0
    assert "epochs 10/" in capsys.readouterr().err


def test_a_folder_where_a_checkpoint_goes_is_one_line_before_any_training(tmp_path, monkeypatch, capsys):
    """A folder at the LSA checkpoint's path: ``python -m icdl.lsa`` refuses in one line naming it, before any
    epoch (it used to train, then end in IsADirectoryError's traceback); the checkpoint writer itself refuses the
    same way, the folder left as it was."""
    from icdl.lsa.__main__ import main
    from icdl.lsa.study import PROFILES
    from icdl.repro.checkpoints import CheckpointError, save_checkpoint

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    (tmp_path / "_toc.yml").write_text("")
    folder = PROFILES.folder() / "checkpoint.quick.pt"
    folder.mkdir(parents=True)
    with pytest.raises(SystemExit) as stop:
        main(["--profile", "quick", "--epochs-this-call", "5"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "checkpoint.quick.pt is a folder" in err and "epoch" not in err.lower()
    with pytest.raises(CheckpointError, match="is a folder"):
        save_checkpoint(folder, {"cfg": {}, "model": {}})
    assert folder.is_dir()
