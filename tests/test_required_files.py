"""The committed files every chapter needs are declared (icdl.repro.required) and present: deleting a reference
ledger or a committed checkpoint (the probe: CI stayed green and those verdicts vanished from the book) fails here,
and so does a committed file under ``results/`` that no chapter declares."""

import json
import subprocess
from pathlib import Path

import pytest

from icdl.repro.execute import chapters
from icdl.repro.required import REQUIRED

ROOT = Path(__file__).resolve().parents[1]


def problems(root: Path, declared: dict[str, tuple[str, ...]]) -> list[str]:
    """What is wrong with the declared files under ``root``: each one missing, empty, or (JSON) not parseable."""
    out = []
    for chapter, paths in declared.items():
        for rel in paths:
            path = root / rel
            if not path.is_file():
                out.append(f"{rel} ({chapter}) is missing")
            elif path.stat().st_size == 0:
                out.append(f"{rel} ({chapter}) is empty")
            elif path.suffix == ".json":
                try:
                    json.loads(path.read_text(encoding="utf-8"))
                except ValueError:
                    out.append(f"{rel} ({chapter}) is not valid JSON")
    return out


def test_every_declared_file_is_there():
    assert problems(ROOT, REQUIRED) == []


def test_every_committed_result_is_declared_once_by_a_chapter():
    tracked = set(subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.split())
    declared = [p for paths in REQUIRED.values() for p in paths]
    assert len(declared) == len(set(declared)), "a file declared twice"
    assert sorted(tracked - set(declared)) == [], "committed under results/ but declared by no chapter"
    assert sorted(set(declared) - tracked) == [], "declared but not committed"
    assert set(REQUIRED) <= set(chapters(ROOT)) | {"mutation", "pins"}


@pytest.mark.parametrize("victim", ["results/ledger/icgd_linear.reference.json",
                                    "results/gpt_icl/checkpoints/reference/gpt_depth3_softmax.pt"])
def test_a_deleted_or_emptied_file_is_named(tmp_path, victim):
    """The positive control: a copy of the declared files with one deleted (the probe's two), or emptied, is
    named by the check."""
    for paths in REQUIRED.values():
        for rel in paths:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_bytes(b"{}" if rel.endswith(".json") else b"x")
    assert problems(tmp_path, REQUIRED) == []
    (tmp_path / victim).unlink()
    owner = "icgd_linear" if "ledger" in victim else "gpt_icl"
    assert problems(tmp_path, REQUIRED) == [f"{victim} ({owner}) is missing"]
    (tmp_path / victim).write_bytes(b"")
    assert "is empty" in problems(tmp_path, REQUIRED)[0]
