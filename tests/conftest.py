import re
from pathlib import Path

import pytest
import torch

#: math written as plain text, outside ``$…$``: a one-letter name with an underscore subscript (``d_x``,
#: ``L_f``, ``x_t``, ``|W_out|``), a caret power (``H^-1.8``, ``H^(−1/2)``, ``(w/4)^(2``), a TeX subscript
#: or superscript in braces, or a TeX command -- what a reader would see as code where a formula was meant
PSEUDO_MATH = re.compile(r"(?<![\w/.\-])[A-Za-zα-ωΑ-Ω]_[A-Za-z0-9({]|[A-Za-zα-ωΑ-Ω0-9)\]}|]\^[-−+({0-9A-Za-z]"
                         r"|\\[A-Za-z]+")


def pseudo_math(text: str) -> list[str]:
    """The pieces of ``text`` outside its ``$…$`` formulas that :data:`PSEUDO_MATH` finds."""
    plain = re.sub(r"\$[^$]*\$", " ", text)
    return [plain[max(0, m.start() - 12):m.end() + 12] for m in PSEUDO_MATH.finditer(plain)]


def scratch_clone(root: Path) -> str:
    """``root`` as ``ICDL_ROOT`` takes it: a test's project of its own (its results, ledgers and locks no other
    run's), given the marks of a clone that :func:`icdl.repro.files.clone_root` asks for -- ``_toc.yml`` (one there
    is kept), ``src/icdl/`` and ``.git/``, left empty (git still finds no repository there)."""
    root = Path(root)
    (root / "src" / "icdl").mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / "_toc.yml").touch()
    return str(root)


@pytest.fixture(autouse=True)
def _deterministic_torch():
    torch.manual_seed(0)
    yield


#: every study judge (module, function): each verdict it gives in any test is checked against the registry
JUDGES = (("icdl.gpt_icl.objectives.judge", "judge"), ("icdl.gpt_icl.core.verdicts", "judge"),
          ("icdl.gpt_icl.depth.judge", "judge"), ("icdl.gpt_icl.objectives.task_content", "judge"),
          ("icdl.gpt_icl.compute.cost", "judge"),
          ("icdl.gpt_icl.scale.judge", "judge"), ("icdl.gpt_icl.scale.judge", "judge_wider"),
          ("icdl.gpt_icl.mechanism.judge", "judge_control"), ("icdl.gpt_icl.mechanism.seeds", "judge_seeds"),
          ("icdl.lsa.study", "judge"), ("icdl.lsa.study", "judge_scan"), ("icdl.studies.diffusion", "judge"))


def registry_disagreements(entries: list[dict]) -> list[str]:
    """The entries of a study's judge whose verdict differs from what the registered criterion
    (:data:`icdl.repro.claims.CRITERIA`) gives on the numbers the entry records."""
    from icdl.repro.claims import criterion_verdict

    out = []
    for e in entries:
        numbers = {**(e.get("values") or {}), "value": e.get("value")}
        numbers = {k: v for k, v in numbers.items() if v is not None}
        said = None if e["passed"] is None else bool(e["passed"])  # None: the judge's inconclusive
        if said != criterion_verdict(e["claim"], numbers):
            out.append(f"{e['claim']}: judge says {said}, the registry says "
                       f"{criterion_verdict(e['claim'], numbers)} on {numbers}")
    return out


@pytest.fixture(autouse=True)
def _judges_agree_with_the_registry(monkeypatch):
    """Every constructed case any test gives a judge is also checked against the registry: a criterion that
    lost one of its conditions, or a judge whose verdict and recorded numbers part ways, fails the test that
    exercises it (the ledger refuses such a disagreement too, but only when a chapter records it)."""
    import functools
    import importlib
    import sys

    for module_name, name in JUDGES:
        module = importlib.import_module(module_name)
        judge = getattr(module, name)

        @functools.wraps(judge)
        def checked(*args, _judge=judge, **kwargs):
            entries = _judge(*args, **kwargs)
            wrong = registry_disagreements(entries)
            assert not wrong, "judge and registry disagree: " + "; ".join(wrong)
            return entries

        # the module named and every module of the package that holds the same function: the one that defines
        # it and its neighbours that imported it by name (``icdl.gpt_icl.scale.show`` calls
        # ``scale.judge.judge`` as ``judge``)
        holders = [m for key, m in list(sys.modules.items())
                   if key.startswith("icdl.") and getattr(m, "__dict__", {}).get(name) is judge]
        for holder in holders or [module]:
            monkeypatch.setattr(holder, name, checked)
    yield


def assert_process_ends(pid: int, what: str, seconds: float = 10.0) -> None:
    """Wait up to ``seconds`` for process ``pid`` to end; else kill it and fail, saying it outlived ``what``."""
    import os
    import signal
    import time

    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"the job outlived {what}")


def started_job_pid(pidfile, parent, seconds: float = 30.0) -> int:
    """The pid a stand-in job writes to ``pidfile`` once it runs; fails if ``parent`` (the scheduler) ends first
    or the job does not start within ``seconds``."""
    import time

    deadline = time.time() + seconds
    while not pidfile.exists() or not pidfile.read_text():
        assert time.time() < deadline and parent.poll() is None, "the job never started"
        time.sleep(0.05)
    return int(pidfile.read_text())
