"""Every command the README and "How every number is produced" (book/reproduce.md) show a reader runs as
written on this checkout: each ``python -m icdl…`` line with ``$ICDL_DRY_RUN`` set (the command checks its
arguments and settings, says what it would run, and stops), each ``make`` target with ``make -n``, the GPU lines
refused in one line where there is no GPU, and the papermill recipe executed for real on a short override run.

The bugs this catches: a renamed flag or module left in the documents, a profile the documents name but the
code no longer has, a recipe that fails on a fresh clone (a missing output folder).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "book/reproduce.md")
#: placeholders the documents use for "a value of your choice", and the value the test gives them
PLACEHOLDERS = {"<chapter id>": "icgd_linear", "--workers N": "--workers 2"}


def documented_commands() -> list[tuple[str, str]]:
    """(document, command line) for every line of a ``bash`` block and every inline ``python -m icdl…``."""
    out = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
            for line in block.splitlines():
                line = re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
                if line and not line.startswith("#"):
                    out.append((doc, line))
        out += [(doc, m) for m in re.findall(r"`([^`\n]*python -m icdl[^`\n]*)`", text)]
    for placeholder, value in PLACEHOLDERS.items():
        out = [(doc, c.replace(placeholder, value)) for doc, c in out]
    return out


COMMANDS = documented_commands()
PYTHON = [(d, c) for d, c in COMMANDS if "-m icdl" in c]
MAKE = [(d, c) for d, c in COMMANDS if c.startswith("make ")]


def test_the_documents_show_the_commands_we_check():
    """Not vacuous: the extraction finds the two commands of the front page and the long runs' commands."""
    assert len(PYTHON) >= 15 and {"make book", "make test"} <= {c for _, c in MAKE}
    modules = {re.search(r"-m (icdl[\w.]*)", c).group(1) for _, c in PYTHON}
    assert {"icdl.repro.execute", "icdl.lsa", "icdl.gpt_icl", "icdl.gpt_icl.scale"} <= modules


def _argv(command: str) -> tuple[dict, list[str]]:
    """The environment assignments and the argv of a documented ``python -m`` or ``torchrun -m`` line, run
    by this interpreter (a ``wait;`` before it and an ``&`` after it are shell, not the command)."""
    command = command.removeprefix("wait;").strip().removesuffix("&").strip()
    words = shlex.split(command)
    env = {}
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    module_at = words.index("-m")
    return env, [sys.executable, *words[module_at:]]


@pytest.mark.parametrize("doc,command", PYTHON, ids=[c for _, c in PYTHON])
def test_every_documented_python_command_accepts_its_arguments(doc, command):
    import torch

    env, argv = _argv(command)
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, **env, "ICDL_DRY_RUN": "1", "OMP_NUM_THREADS": "1"})
    if "--device cuda" in command and not torch.cuda.is_available():
        assert run.returncode == 2 and "no CUDA device" in run.stderr and "Traceback" not in run.stderr, run.stderr
        return
    assert run.returncode == 0 and "dry run: " in run.stdout, f"{doc}: {command}\n{run.stdout}\n{run.stderr}"


@pytest.mark.parametrize("doc,command", MAKE, ids=[c for _, c in MAKE])
def test_every_documented_make_target_exists(doc, command):
    targets = shlex.split(command)[1:]
    run = subprocess.run(["make", "-n", *targets], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"{doc}: {command}\n{run.stderr}"


def test_the_papermill_recipe_runs_on_a_fresh_checkout(tmp_path):
    """The recipe of reproduce.md as written, on a short override run (its own files, never the profile's),
    from a checkout without ``runs/``: ``mkdir -p runs`` is part of it."""
    text = (ROOT / "book" / "reproduce.md").read_text(encoding="utf-8")
    recipe = next(m for m in re.findall(r"`([^`\n]*\| papermill [^`\n]*)`", text))
    assert recipe.startswith("mkdir -p runs && ")
    bin_dir = str(Path(sys.executable).parent)
    out = tmp_path / "out.ipynb"
    short = recipe.replace("runs/out.ipynb", str(out)).replace(
        "-p profile reference", "-p profile quick -p overrides '{\"steps\": 3, \"prompts\": 2}'")
    run = subprocess.run(short, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OMP_NUM_THREADS": "1"})
    assert run.returncode == 0 and out.is_file(), run.stderr[-2000:]
