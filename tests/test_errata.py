"""The errata page: every entry's evidence recomputed, every reference it makes resolvable.

A measured entry *holds* when the printed form disagrees with what the paper states beside it and our
reading agrees; each measurement fails on the regression it guards (our layer reading the printed form: the
query and key of Def. 7 swapped, Lemma 2's value reading the constant 1, Lemma 3's layer without its output
units, a gradient at w = 0 that tanh does not have). An entry resting on a claim needs that claim to hold.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from icdl.repro import claims, errata

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("entry", [e for e in errata.entries() if e.measure], ids=lambda e: e.id)
def test_every_measured_erratum_holds(entry):
    found = entry.measure()
    assert found.holds, f"{entry.id}: {found.text}"
    assert re.search(r"\d", found.text), "the evidence names no number"


@pytest.mark.parametrize("entry", [e for e in errata.entries() if e.claim], ids=lambda e: e.id)
def test_an_erratum_resting_on_a_claim_has_that_claim_passing(entry):
    from icdl.repro.ledger import PASS_DEVIATION
    from icdl.repro.pages import claim_frame

    assert entry.claim in {c.id for c in claims.CLAIMS}, f"{entry.id}: unknown claim {entry.claim!r}"
    row = claim_frame().set_index("id").loc[entry.claim]
    assert row["status"] in ("pass", PASS_DEVIATION), (entry.id, row["status"])
    assert re.search(r"\d", errata.evidence(entry)), "the evidence names no number"


def test_every_entry_names_a_chapter_of_the_book_and_a_test_that_exists():
    toc = (ROOT / "_toc.yml").read_text()
    ids = [e.id for e in errata.entries()]
    assert len(set(ids)) == len(ids), "two entries share an anchor"
    for e in errata.entries():
        # one kind of evidence: a measurement, a claim's record, or (a slip of notation) the paper's definitions
        assert sum(map(bool, (e.measure, e.claim, e.basis))) == 1, e.id
        assert e.document in errata.DOCUMENTS, e.id
        assert f"notebooks/{e.chapter}" in toc, f"{e.id}: chapter {e.chapter!r} is not in _toc.yml"
        path, _, name = e.test.partition("::")
        source = ROOT / path
        assert source.exists(), f"{e.id}: {path} does not exist"
        defined = {n.name for n in ast.walk(ast.parse(source.read_text())) if isinstance(n, ast.FunctionDef)}
        assert name in defined, f"{e.id}: {path} defines no {name}"


def test_the_page_is_blocks_by_document_not_a_wide_table():
    """The entries read on a phone: a section per document, a heading and anchor per entry, its evidence
    inside it; no markdown table (a 4-column table of long cells scrolls sideways at 390 px)."""
    text = errata.render()
    assert "|---" not in text
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert [h[3:] for h in heads] == [t for k, t in errata.DOCUMENTS.items()
                                      if any(e.document == k for e in errata.entries())]
    for e in errata.entries():
        block = text.split(f"(erratum-{e.id})=", 1)[1].split("(erratum-", 1)[0]
        assert block.count("\nAs printed\n: ") == block.count("\nAs executed\n: ") == 1, e.id
        assert "\nEvidence\n: " in block and e.test in block.replace("<wbr>", ""), e.id
    assert (ROOT / "book" / "errata.md").read_text().count("generated/errata_entries.md") == 1


def test_the_summary_line_counts_the_entries_per_document():
    line = errata.render_summary()
    assert f">{len(errata.entries())} entries</a>" in line
    for doc in errata.DOCUMENTS:
        assert f"{sum(e.document == doc for e in errata.entries())} in {doc}" in line


def test_each_claim_an_erratum_is_about_links_to_its_entry():
    """The report's block of a claim that an erratum concerns links to that entry's anchor, as Sphinx writes
    it (``icdl-cor1.1`` -> ``#erratum-icdl-cor1-1``; the bug: every link went to the page's top), and only
    those claims get such a link."""
    from docutils.nodes import make_id

    from icdl.repro.pages import render_report

    report = render_report(errata=errata.report_links())
    about: dict = {}
    for e in errata.entries():  # the first entry about a claim is the one its block links to
        for claim in e.claims():
            about.setdefault(claim, e)
    assert {"icdl-lemma3", "icdl-lemma5"} <= set(about)  # the norms' erratum concerns two passing lemmas
    for claim, e in about.items():
        block = report.split(f'id="claim-{claim}"', 1)[1].split('<details class="claim"', 1)[0]
        assert f'href="errata.html#{make_id("erratum-" + e.id)}"' in block, claim
    assert report.count('href="errata.html#') == len(about)
    assert make_id("erratum-icdl-cor1.1") == "erratum-icdl-cor1-1"


def test_each_entry_links_back_to_the_claims_it_concerns():
    """The errata page names each concerned claim as a link to its block of the report (the bug: claims named
    as plain code, a dead end for the reader)."""
    page = errata.render()
    norms = page.split("(erratum-icdl-lemma3-norm)=", 1)[1].split("(erratum-", 1)[0]
    # by title, as the reader meets the claim in the report (an id is only the anchor)
    assert '<a href="report.html#claim-icdl-lemma3">ICDL Lemma 3' in norms
    assert '<a href="report.html#claim-icdl-lemma5">ICDL Lemma 5' in norms
    assert ">icdl-lemma3<" not in norms
    cor = page.split("(erratum-icdl-cor1.1)=", 1)[1].split("(erratum-", 1)[0]
    assert 'href="report.html#claim-icdl-cor1.1"' in cor


def test_an_entrys_evidence_names_the_run_its_numbers_come_from():
    """An entry resting on a claim quotes the record's numbers with the run they come from, as the first page does
    (the bug: the diffusion entry gave the chapter's 30-step run's errors unlabelled, beside a 200-step reference);
    a record without a run says none."""
    from icdl.repro.errata import entries, evidence

    entry = next(e for e in entries() if e.measure is None and not e.basis and e.claim)
    row = {"ours": "error 3.27 → 0.70 in 30 steps", "status": "pass"}
    quick = evidence(entry, {entry.claim: {**row, "shown_profile": "quick"}})
    assert quick.startswith("error 3.27 → 0.70 in 30 steps (the run the chapter executes) (claim ")
    ref = evidence(entry, {entry.claim: {**row, "shown_profile": "reference (200 steps)"}})
    assert "(the reference run) (claim " in ref
    assert "run" not in evidence(entry, {entry.claim: {**row, "shown_profile": ""}}).split("(claim")[0]
