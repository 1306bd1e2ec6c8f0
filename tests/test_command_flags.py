"""Every flag of every command of the package either acts or is refused in one line (icdl.repro.cli).

:data:`FLAGS` is the table: for every ``python -m`` command (found in ``src/`` by its ``__main__`` guard) and
every flag or argument of its parser (read from ``parser()._actions``, so a flag added later without a row
here fails :func:`test_the_table_has_a_row_for_every_flag_of_every_command`), the cases that show what it does:
``acts`` -- under ``$ICDL_DRY_RUN`` the command exits 0 and its ``dry run:`` line names the flag's effect --
or ``refused`` -- exit status 2 and a single line on stderr that names the problem, no traceback.

The bugs this catches: a flag parsed and then dropped in silence (``scale --workers 1 --until 100`` ran the
whole study without the limit, ``--train softmax --score`` never scored, ``--until -5`` did nothing and
exited 0), models trained that no result reads (``gpt_icl --part main --depths 5``), ``--device cuda``
accepted without CUDA, a usage block or a traceback instead of one line, a flag taken for a file name
(``report --profile quick`` wrote a file named ``--profile``).

Every case runs in one process (each command's ``main(argv)``, dry run), and one refused case per command
through the real ``python -m``, so the file runs in well under a minute.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
CUDA = torch.cuda.is_available()


def acts(argv: list[str], names: str) -> tuple[str, list[str], str]:
    """The command accepts ``argv``, and its dry-run line contains ``names`` (the flag's effect)."""
    return ("acts", argv, names)


def refused(argv: list[str], names: str) -> tuple[str, list[str], str]:
    """The command refuses ``argv`` in one line (exit status 2) that contains ``names``."""
    return ("refused", argv, names)


def cuda(argv: list[str], names: str) -> tuple[str, list[str], str]:
    """``--device cuda``: acts where there is a GPU, refused in one line where there is none."""
    return acts(argv, names) if CUDA else refused(argv, "--device cuda: no CUDA device")


#: command -> (module with ``parser()`` and ``main(argv)``, {flag or positional argument: its cases})
FLAGS: dict[str, tuple[str, dict[str, list]]] = {
    "icdl.gpt_icl": ("icdl.gpt_icl.__main__", {
        "--profile": [acts(["--profile", "reference", "--benchmark"], "profile reference: --benchmark"),
                      refused(["--profile", "paper", "--workers", "2"], "the paper profile is for a GPU"),
                      refused(["--profile", "small", "--speed"], "invalid choice: 'small'"),
                      acts(["--profile", "n01", "--part", "main"], "profile n01: parts main"),
                      refused(["--profile", "n01"], "--profile n01 is the main study with x ~ N(0, I)"),
                      refused(["--profile", "n01", "--part", "depth"], "runs --part main and --part shift only"),
                      acts(["--profile", "fitted", "--part", "main"], "profile fitted: parts main"),
                      refused(["--profile", "fitted", "--part", "plateau"],
                              "--profile fitted is the main study at the schedule fitted to ICDL's task")],
        "--part": [acts(["--part", "shift"], "parts shift on cpu"),
                   acts(["--part", "main", "--part", "plateau"], "parts main, plateau"),
                   refused(["--part", "main", "--part", "main"], "--part main is given twice")],
        "--steps-this-call": [acts(["--part", "plateau", "--steps-this-call", "7"], "7 steps this call"),
                              refused(["--steps-this-call", "0"], "--steps-this-call must be >= 1, got 0"),
                              refused(["--part", "shift", "--steps-this-call", "5"], "trains nothing")],
        "--device": [cuda(["--smoke", "3", "--device", "cuda"], "--smoke 3 steps on cuda"),
                     refused(["--speed", "--device", "cuda"], "--speed times the CPU"),
                     refused(["--part", "shift", "--device", "cuda"], "does not take --device cuda")],
        "--depths": [acts(["--part", "main", "--depths", "6"], "parts main, depths (6,)"),
                     refused(["--part", "main", "--depths", "5"], "--depths 5: not a model of profile reference"),
                     refused(["--depths", "3"], "it needs --part main alone")],
        "--seeds": [acts(["--part", "main", "--depths", "6", "--seeds", "1,2"],
                         "parts main, depths (6,), seeds (1, 2)"),
                    refused(["--part", "main", "--seeds", "3"], "--seeds 3: not a model of profile reference"),
                    acts(["--part", "depth", "--layers", "8", "--seeds", "1,2"],
                         "parts depth, seeds (1, 2), layers (8,)"),
                    refused(["--part", "depth", "--seeds", "3"], "--seeds 3: not a model of profile reference"),
                    refused(["--part", "shift", "--seeds", "1"], "--seeds trains a subset of the main or the depth")],
        "--layers": [acts(["--part", "depth", "--layers", "10,8"], "parts depth, layers (10, 8)"),
                     refused(["--part", "depth", "--layers", "3"], "--layers 3: not a model of profile reference"),
                     refused(["--part", "main", "--layers", "4"], "it needs --part depth alone")],
        "--workers": [acts(["--workers", "2"], "--workers 2 on cpu"),
                      refused(["--workers", "0"], "--workers must be >= 1, got 0"),
                      refused(["--workers", "2", "--part", "main"], "--workers runs the whole CPU reference")],
        "--benchmark": [acts(["--benchmark"], ": --benchmark on cpu"),
                        refused(["--benchmark", "--part", "main"], "trains no study: it does not take --part")],
        "--speed": [acts(["--speed"], ": --speed on cpu"),
                    refused(["--benchmark", "--speed"], "--benchmark and --speed are separate commands")],
        "--smoke": [acts(["--smoke", "3"], "--smoke 3 steps on cpu"),
                    refused(["--smoke", "0"], "--smoke must be >= 1, got 0"),
                    refused(["--smoke", "3", "--workers", "2"], "separate commands")],
    }),
    "icdl.gpt_icl.scale": ("icdl.gpt_icl.scale.study", {
        "--profile": [acts(["--profile", "wide", "--workers", "2"], "profile wide: the whole run"),
                      refused(["--profile", "nope", "--workers", "1"], "unknown profile 'nope'")],
        "--workers": [acts(["--workers", "2"], "the whole run on 2 worker(s), on cpu"),
                      refused(["--workers", "0"], "--workers must be >= 1, got 0"),
                      refused(["--workers", "2", "--train", "softmax", "--depth", "3"],
                              "--workers and --train are separate jobs")],
        "--train": [acts(["--train", "relu", "--depth", "4"], "train relu, target depth 4, on cpu"),
                    refused(["--train", "softmax", "--score", "--depth", "3"], "--train and --score are separate"),
                    refused(["--train", "softmax"], "--depth must be one of the profile's target depths")],
        "--until": [acts(["--train", "softmax", "--depth", "3", "--until", "100"], "until step 100"),
                    refused(["--workers", "1", "--until", "100"], "--until stops the training of one model"),
                    refused(["--train", "softmax", "--depth", "3", "--until", "-5"], "--until must be >= 1, got -5"),
                    refused(["--until", "-5"], "--until must be >= 1, got -5"),
                    refused(["--train", "relu", "--depth", "3", "--until", "1000000"], "past the end of the relu")],
        "--score": [acts(["--score", "--depth", "6"], "score target depth 6"),
                    refused(["--score", "--depth", "3", "--device", "cuda"], "scores the snapshots on the CPU")],
        "--depth": [acts(["--score", "--depth", "4"], "score target depth 4"),
                    refused(["--score", "--depth", "5"], "--depth must be one of the profile's target depths"),
                    refused(["--workers", "2", "--depth", "3"], "--workers runs every depth")],
        "--device": [cuda(["--train", "softmax", "--depth", "3", "--device", "cuda"], "depth 3, on cuda"),
                     cuda(["--workers", "1", "--device", "cuda"], "1 worker(s), on cuda")],
    }),
    "icdl.gpt_icl.schedules": ("icdl.gpt_icl.schedules.__main__", {
        "--profile": [acts(["--profile", "n01"], "the schedule scan, profile n01"),
                      refused(["--profile", "reference"], "invalid choice: 'reference'")],
        "--steps-this-call": [acts(["--profile", "icdl", "--steps-this-call", "500"], "500 steps per run this call"),
                              refused(["--steps-this-call", "0"], "--steps-this-call must be >= 1, got 0")],
        "--device": [cuda(["--profile", "paper", "--device", "cuda"], "profile paper, on cuda")],
    }),
    "icdl.repro.pdf": ("icdl.repro.pdf", {
        "--html": [acts(["--html", "_build/html"], "print the book in _build/html")],
        "--out": [acts(["--out", "book.pdf"], "to book.pdf"),
                  refused(["--out", "results/book.pdf"], "under results/")],
    }),
    "icdl.gpt_icl.core.paired_mlp": ("icdl.gpt_icl.core.paired_mlp", {
        "--profile": [acts(["--profile", "n01-flat"], "profile n01-flat: shard 0/1, 30 of 30 files"),
                      refused(["--profile", "quick"], "invalid choice: 'quick'"),
                      refused([], "the following arguments are required: --profile")],
        "--shard": [acts(["--profile", "n01-flat", "--shard", "1/2"], "shard 1/2, 15 of 30 files"),
                    refused(["--profile", "n01-flat", "--shard", "2/2"], "--shard must be I/N with 0 <= I < N"),
                    refused(["--profile", "n01-flat", "--shard", "one"], "--shard must be I/N (e.g. 0/2)")],
    }),
    "icdl.gpt_icl.recipes": ("icdl.gpt_icl.recipes.__main__", {
        "--profile": [acts(["--profile", "n01"], "the recipe scan, profile n01"),
                      refused(["--profile", "reference"], "invalid choice: 'reference'")],
        "--shard": [acts(["--profile", "n01", "--shard", "1/2"], "shard 1/2"),
                    refused(["--profile", "n01", "--shard", "2/2"], "--shard must be I/N"),
                    refused(["--shard", "one"], "--shard must be I/N (e.g. 0/2)")],
        "--steps-this-call": [acts(["--profile", "n01", "--steps-this-call", "500"], "500 steps per run this call"),
                              refused(["--steps-this-call", "0"], "--steps-this-call must be >= 1, got 0")],
        "--device": [cuda(["--profile", "n01", "--device", "cuda"], "profile n01, on cuda")],
    }),
    "icdl.gpt_icl.mechanism": ("icdl.gpt_icl.mechanism.study", {
        "--profile": [acts(["--profile", "control"], "profile control"),
                      refused(["--profile", "nope"], "invalid choice: 'nope'")],
        "--threads": [acts(["--threads", "2"], "of 2 thread(s)"),
                      refused(["--threads", "0"], "--threads must be >= 1, got 0")],
        "--workers": [acts(["--profile", "seeds", "--workers", "2"], "profile seeds, on 2 process(es)"),
                      refused(["--workers", "0"], "--workers must be >= 1, got 0")],
    }),
    "icdl.gpt_icl.mechanism.power": ("icdl.gpt_icl.mechanism.power", {
        "--profile": [acts(["--profile", "quick"], "the planted models, profile quick"),
                      refused(["--profile", "control"], "invalid choice: 'control'")],
    }),
    "icdl.lsa": ("icdl.lsa.__main__", {
        "--profile": [acts(["--profile", "quick"], "profile quick"),
                      refused(["--profile", "huge"], "invalid choice: 'huge'")],
        "--epochs-this-call": [acts(["--profile", "quick", "--epochs-this-call", "5"], "5 epochs this call"),
                               refused(["--epochs-this-call", "0"], "--epochs-this-call must be >= 1")],
        "--threads": [acts(["--profile", "quick", "--threads", "2"], "2 thread(s)"),
                      refused(["--threads", "0"], "--threads must be >= 1, got 0")],
        "--shard": [acts(["--profile", "quick", "--shard", "1/2"], "shard 1/2"),
                    refused(["--shard", "3/2"], "--shard must be I/N")],
    }),
    "icdl.studies.softmax": ("icdl.studies.softmax", {
        "--profile": [acts(["--profile", "quick"], "profile quick"),
                      refused(["--profile", "nope"], "invalid choice: 'nope'")],
    }),
    "icdl.studies.diffusion": ("icdl.studies.diffusion", {
        "--profile": [acts(["--profile", "quick"], "profile quick"),
                      refused(["--profile", "nope"], "invalid choice: 'nope'")],
    }),
    "icdl.repro.execute": ("icdl.repro.execute", {
        "chapters": [acts(["icgd_linear", "relu_sums"], "execute icgd_linear, relu_sums at"),
                     refused(["no_such_chapter"], "unknown chapter 'no_such_chapter'"),
                     refused(["icgd_linear", "icgd_linear"], "chapter icgd_linear is given twice")],
        "--profile": [acts(["icgd_linear", "--profile", "reference"], "at profile reference"),
                      acts(["icgd_linear", "-p", "reference"], "at profile reference"),
                      refused(["icgd_linear", "-p", "nope"], "unknown profile 'nope'")],
        "--set": [acts(["icgd_linear", "--set", "n=64"], "--set n=64"),
                  refused(["icgd_linear", "--set", "n=8", "--set", "n=16"], "--set n is given twice"),
                  refused(["icgd_linear", "--set", "n"], "--set expects KEY=VALUE")],
    }),
    "icdl.repro.report": ("icdl.repro.report", {
        "report": [acts(["r.md", "s.md"], "the report to r.md"),
                   refused(["--profile", "quick"], "unrecognized arguments: --profile")],
        "summary": [acts(["r.md", "s.md"], "the results at a glance to s.md"),
                    refused(["r.md"], "the following arguments are required: SUMMARY.md")],
    }),
    "icdl.repro.errata": ("icdl.repro.errata", {
        "out": [acts(["e.md"], "the errata's entries to e.md"),
                refused([], "the following arguments are required: OUT.md")],
        "summary": [acts(["e.md", "s.md"], "their summary line to s.md"),
                    refused(["e.md", "s.md", "x.md"], "unrecognized arguments: x.md")],
    }),
}


def commands_in_source() -> set[str]:
    """Every ``python -m`` command of the package: each module with a ``__main__`` guard (a package's
    ``__main__.py`` is the package's command)."""
    out = set()
    for path in (ROOT / "src").rglob("*.py"):
        if re.search(r'^if __name__ == "__main__":', path.read_text(encoding="utf-8"), flags=re.M):
            parts = path.relative_to(ROOT / "src").with_suffix("").parts
            out.add(".".join(parts[:-1] if parts[-1] == "__main__" else parts))
    return out


def flags_of(module: str) -> set[str]:
    """The flags (by their longest name) and positional arguments (by ``dest``) of a command's parser."""
    parser = importlib.import_module(module).parser()
    return {max(a.option_strings, key=len) if a.option_strings else a.dest
            for a in parser._actions if "--help" not in a.option_strings}


def test_every_command_of_the_package_is_in_the_table():
    assert commands_in_source() == set(FLAGS)


@pytest.mark.parametrize("command", sorted(FLAGS))
def test_the_table_has_a_row_for_every_flag_of_every_command(command):
    """A flag added to a command without a row here (what it does, or how it is refused) fails."""
    module, table = FLAGS[command]
    assert flags_of(module) == set(table), f"{command}: the table's rows differ from the parser's flags"
    assert all(table.values()), f"{command}: a flag without a case"


#: runs ``main(argv)`` of a module for every ``[module, argv]`` read from stdin, as ``python -m`` would (exit
#: status from the return value or SystemExit, a traceback for any other exception); prints the outcomes as JSON
RUNNER = r"""
import contextlib, importlib, io, json, sys, traceback

outcomes = []
for module, argv in json.loads(sys.stdin.read()):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = importlib.import_module(module).main(argv)
        except SystemExit as stop:
            rc = stop.code
            if rc is not None and not isinstance(rc, int):
                print(rc, file=sys.stderr)
                rc = 1
        except Exception:
            traceback.print_exc()
            rc = 1
    outcomes.append({"rc": rc or 0, "out": out.getvalue(), "err": err.getvalue()})
print(json.dumps(outcomes))
"""

ENV = {**os.environ, "ICDL_DRY_RUN": "1", "OMP_NUM_THREADS": "1"}


def cases_of(command: str) -> list[tuple[str, list[str], str]]:
    return [case for rows in FLAGS[command][1].values() for case in rows]


@pytest.fixture(scope="module")
def outcomes() -> dict[str, tuple[list[dict], dict]]:
    """Per command: the outcome of each case of the table (all in one process, dry run) and of its first refused
    case through the real ``python -m`` (one process per command, started together)."""
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, "cwd": ROOT, "env": ENV}
    real = {c: subprocess.Popen([sys.executable, "-m", c, *next(k for k in cases_of(c) if k[0] == "refused")[1]],
                                **pipes) for c in FLAGS}
    todo = [(c, FLAGS[c][0], argv) for c in FLAGS for _, argv, _ in cases_of(c)]
    run = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps([[m, argv] for _, m, argv in todo]),
                         timeout=300, **pipes)
    assert run.returncode == 0, run.stderr[-3000:]
    each = json.loads(run.stdout.splitlines()[-1])
    out = {c: ([o for (cc, _, _), o in zip(todo, each, strict=True) if cc == c], {}) for c in FLAGS}
    for c, proc in real.items():
        stdout, stderr = proc.communicate(timeout=300)
        out[c][1].update(rc=proc.returncode, out=stdout, err=stderr)
    return out


def check(command: str, kind: str, argv: list[str], names: str, rc: int, out: str, err: str) -> None:
    shown = f"python -m {command} {' '.join(argv)}: exit {rc}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in err, shown
    if kind == "acts":
        assert rc == 0 and out.startswith("dry run: ") and names in out, shown
        return
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith(f"python -m {command}: error: "), shown
    assert names in lines[0] and not out, shown


@pytest.mark.parametrize("command", sorted(FLAGS))
def test_every_flag_acts_or_is_refused_in_one_line(command, outcomes):
    """Each case of the table under ``$ICDL_DRY_RUN``; and the first refused one through ``python -m``."""
    each, real = outcomes[command]
    for case, outcome in zip(cases_of(command), each, strict=True):
        check(command, *case, **outcome)
    check(command, *next(k for k in cases_of(command) if k[0] == "refused"), **real)
