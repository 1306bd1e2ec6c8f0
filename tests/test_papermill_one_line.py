"""One line where papermill is in the way (issue 70, item 7).

* A chapter run by papermill directly that the package refuses (a bad parameter, ``ICDL_CHAPTER_LOCK=:1``, a YAML
  key given twice) ended in papermill's 37 lines of traceback around the package's line; now the line alone is
  the last thing printed (``icdl.repro.papermill_engine``, loaded by papermill as an engine's entry point).
* Ctrl-C to ``python -m icdl.repro.execute``'s process group ended, at times, in nbclient's "Kernel died" and a
  ``DeadKernelError`` traceback around the command's line; Ctrl-C is now given to the kernel as Jupyter gives it,
  and Ctrl-C that reaches the kernel alone ends the command the same way (exit status 130, one line).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from conftest import scratch_clone

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _engine_on_path(tmp_path: Path) -> dict:
    """An environment in which papermill finds the package's ``papermill.engine`` entry point as ``pyproject.toml``
    declares it (a ``.venv`` installed before the entry point was added has none until ``make setup`` reruns)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["papermill.engine"]
    site = tmp_path / "site" / "icdl_engine_under_test-0.dist-info"
    site.mkdir(parents=True)
    (site / "entry_points.txt").write_text("[papermill.engine]\n" + "".join(f"{k} = {v}\n" for k, v in
                                                                           declared.items()))
    (site / "METADATA").write_text("Metadata-Version: 2.1\nName: icdl-engine-under-test\nVersion: 0\n")
    path = os.pathsep.join([str(ROOT / "src"), str(site.parent), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def _notebook(path: Path, *cells: str) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, str(path))
    return path


def test_papermill_prints_the_package_s_refusal_as_its_last_and_only_error_line(tmp_path):
    """``papermill`` on a notebook whose cell the package refuses: exit status 1, the refusal's line last, no
    traceback (papermill's ``Input Notebook``/progress lines before it are papermill's own output)."""
    nb = _notebook(tmp_path / "refused.ipynb", "from icdl.repro.profiles import ProfileError\n"
                   "raise ProfileError(\"relu_sums: unknown profile 'nosuch'; allowed profiles: ['quick']\")")
    proc = subprocess.run([str(BIN / "papermill"), str(nb), str(tmp_path / "out.ipynb"), "--no-progress-bar"],
                          env=_engine_on_path(tmp_path), capture_output=True, text=True, timeout=240)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "PapermillExecutionError" not in proc.stderr, proc.stderr
    assert lines[-1] == "ProfileError: relu_sums: unknown profile 'nosuch'; allowed profiles: ['quick']"


def test_only_the_package_s_one_line_refusals_are_shortened():
    """Which errors lose papermill's traceback: a cell whose whole traceback is the package's line (a
    :class:`icdl.errors.OneLineError` in IPython); any other error -- an ordinary traceback, a coloured one, an
    error of two lines -- keeps papermill's."""
    from papermill.exceptions import PapermillExecutionError

    from icdl.repro.papermill_engine import one_line

    def err(ename, evalue, traceback):
        return PapermillExecutionError(0, 1, "x", ename, evalue, traceback)

    assert one_line(err("ResultFileError", "file x is damaged", ["ResultFileError: file x is damaged"])) == \
        "ResultFileError: file x is damaged"
    assert one_line(err("ValueError", "bad", ["\x1b[0;31m----\x1b[0m", "Traceback (most recent call last)",
                                              "ValueError: bad"])) is None
    assert one_line(err("ValueError", "a\nb", ["ValueError: a\nb"])) is None
    assert one_line(ValueError("not papermill's")) is None


def _book(root: Path, cell: str) -> None:
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nparts:\n- caption: x\n  chapters:\n"
                                   "  - file: notebooks/computation\n")
    (root / "notebooks" / "computation.py").write_text(f"# %%\n{cell}\n")


def _kernel_of(pid: int) -> int | None:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid and \
                    b"ipykernel" in (stat.parent / "cmdline").read_bytes():
                return int(stat.parent.name)
        except (OSError, ValueError, IndexError):
            continue
    return None


@pytest.mark.parametrize("to", ["the process group", "the kernel alone"])
def test_ctrl_c_during_execute_is_given_to_the_kernel_and_ends_in_one_line(tmp_path, to):
    """Ctrl-C to the command's process group (a terminal's Ctrl-C) while a cell runs: the kernel receives it as an
    interrupt -- the cell sees ``KeyboardInterrupt`` (the old way shut the kernel down under a pending cell, which
    the cell never saw) -- and the command ends with exit status 130 and one line, no ``DeadKernelError``. Ctrl-C
    that reaches the kernel alone ends the command the same way (it was "chapter computation failed in cell 0:
    KeyboardInterrupt", exit status 1)."""
    started, seen = tmp_path / "cell-started", tmp_path / "cell-interrupted"
    _book(tmp_path, f"import time\nopen({str(started)!r}, 'w').close()\ntry:\n    time.sleep(60)\n"
                    f"except KeyboardInterrupt:\n    open({str(seen)!r}, 'w').close()\n    raise")
    env = {**os.environ, "ICDL_ROOT": scratch_clone(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "icdl.repro.execute", "computation"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 120
    while not started.exists():
        assert time.time() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() else "too slow"
        time.sleep(0.1)
    if to == "the process group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(_kernel_of(proc.pid), signal.SIGINT)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err
    assert len(err.strip().splitlines()) == 1 and "stopped (Ctrl-C) while executing computation" in err, err
    assert seen.exists()
    assert not (tmp_path / "notebooks" / "computation.ipynb").exists()
    assert list((tmp_path / "runs" / ".tmp").iterdir()) == []
