"""The ledger is complete and green: every registered claim has a record, none fails."""

import ast
from pathlib import Path

import pytest

from icdl.book.claims import CLAIMS, CLAIMS_BY_ID
from icdl.book.ledger import Ledger, load_records, render_report, report_frame

ROOT = Path(__file__).resolve().parents[1]


def _quick_records():
    """Records written by chapters run at the quick profile (some judged on committed results)."""
    return {rec.claim: rec for rec, prov in load_records(ROOT / "results" / "ledger") if prov["profile"] == "quick"}


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.chapter], ids=lambda c: c.id)
def test_every_registered_claim_has_a_passing_quick_record(claim):
    records = _quick_records()
    assert claim.id in records, (f"claim {claim.id} is registered for chapter {claim.chapter} but "
                                 f"results/ledger/{claim.chapter}.quick.json has no record of it")
    rec = records[claim.id]
    assert rec.status != "fail", f"{claim.id}: {rec.ours} does not meet '{rec.criterion}'"


def test_no_record_fails_and_every_record_names_a_known_claim():
    for rec, prov in load_records(ROOT / "results" / "ledger"):
        assert rec.claim in CLAIMS_BY_ID
        assert rec.status in ("pass", "mismatch"), f"{rec.claim} at {rec.profile}: {rec.status}"
        if rec.status == "mismatch":
            assert rec.note, f"{rec.claim}: a mismatch must say why"


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.chapter], ids=lambda c: c.id)
def test_guard_tests_exist(claim):
    assert claim.test, f"{claim.id} has a chapter but no guarding test"
    file, func = claim.test.split("::")
    tree = ast.parse((ROOT / file).read_text())
    names = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert func in names, f"{claim.test} does not exist"
    assert (ROOT / "notebooks" / f"{claim.chapter}.py").is_file()


def test_report_lists_every_claim_and_marks_uncovered(tmp_path, monkeypatch):
    monkeypatch.setenv("ICDL_ROOT", str(tmp_path))
    ledger = Ledger("icgd_linear", "quick")
    ledger.record("icdl-prompt", ours="ok", criterion="c", passed=True)
    ledger.record("icdl-icgd-one-step", ours="1e-3", criterion="< 1e-13", passed=False,
                  mismatch="explained here")
    ledger.save()
    df = report_frame(tmp_path / "results" / "ledger")
    assert set(df["id"]) == set(CLAIMS_BY_ID)
    status = dict(zip(df["id"], df["status"]))
    assert status["icdl-prompt"] == "pass"
    assert status["icdl-icgd-one-step"] == "mismatch"
    assert status["lsa-fig3"] == "not yet covered"
    text = render_report(tmp_path / "results" / "ledger")
    assert text.count("\n| ") == len(df) + 1  # header plus one line per row


def test_ledger_rejects_unknown_and_duplicate_claims(tmp_path, monkeypatch):
    monkeypatch.setenv("ICDL_ROOT", str(tmp_path))
    ledger = Ledger("icgd_linear", "quick")
    with pytest.raises(KeyError, match="unknown claim id 'nope'; known ids"):
        ledger.record("nope", ours="", criterion="", passed=True)
    ledger.record("icdl-prompt", ours="", criterion="", passed=True)
    with pytest.raises(ValueError, match="recorded twice"):
        ledger.record("icdl-prompt", ours="", criterion="", passed=True)
    failing = Ledger("icgd_linear", "quick")
    assert failing.record("icdl-prompt", ours="x", criterion="y", passed=False).status == "fail"
