"""The errata page (``book/errata.md``): every slip we found in the three documents, with its evidence recomputed.

Each :class:`Erratum` says where in which document, what is printed, what we execute instead, and why we
believe it -- a number. The number comes either from a small computation beside the code it measures, which
sets the printed form beside ours (``measure``: it returns an :class:`Evidence` whose ``holds`` says that the
printed form disagrees with the paper's own statement and ours agrees), or from the ledger record of the claim
that executes our reading (``claim``: its measured value and status). :func:`render` writes the entries as
MyST markdown, grouped by document, one block per entry (read on a phone as on a wide screen); ``make
report`` includes it in the page. ``tests/test_errata.py`` recomputes every measurement.

This module is machinery: it imports no study. Each study keeps its entries (an ``ERRATA`` tuple) in a module of
its own and registers it as an entry point of the group :data:`GROUP` in ``pyproject.toml``
(``icdl.studies.errata``, ``icdl.gpt_icl.objectives.errata``, ``icdl.lsa.errata``); :func:`entries` collects them.

==================  ==============================================================================
:func:`entries`     the registered entries, in the order of their documents
:func:`evidence`    an entry's evidence, as a sentence with its numbers
:func:`render`      the page's entries as MyST markdown (``python -m icdl.repro.errata OUT.md``)
==================  ==============================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path

import torch

#: the entry-point group under which a study registers its ``ERRATA`` (``pyproject.toml``)
GROUP = "icdl.errata"

#: the documents, in the page's order, with the heading each gets
DOCUMENTS = {"ICDL": "ICDL (Wu et al., arXiv 2411.16549)",
             "REB": "REB (the authors' answers to the reviewers)",
             "LSA": "LSA (Hagiwara, arXiv 2607.15819)"}


@dataclass(frozen=True)
class Evidence:
    """What a measurement found: ``text`` (a sentence with its numbers) and whether it supports the entry
    (the printed form disagrees with what the paper states next to it, ours agrees)."""
    text: str
    holds: bool


@dataclass(frozen=True)
class Erratum:
    """One slip: ``id`` (the anchor ``erratum-<id>``), the ``document`` (a key of :data:`DOCUMENTS`), ``where``
    in it, what is ``printed``, what we ``executed`` instead (MyST, ``$…$`` math), the ``chapter`` that shows
    it and the ``test`` that fails if our reading is wrong, and the evidence: a ``measure``, a ``claim``, or, for
    a slip of notation, the ``basis`` in the paper's own definitions."""
    id: str
    document: str
    where: str
    printed: str
    executed: str
    chapter: str
    test: str
    measure: Callable[[], Evidence] | None = None
    claim: str = ""
    basis: str = ""  # for a slip of notation: the paper's own definitions that decide it (no number to compute)
    about: tuple[str, ...] = ()  # the claims the slip concerns, beyond ``claim`` (linked both ways)

    def claims(self) -> tuple[str, ...]:
        """Every claim the entry concerns: its evidence's ``claim`` and those it is ``about``."""
        return tuple(dict.fromkeys(((self.claim,) if self.claim else ()) + self.about))


@cache
def entries() -> tuple[Erratum, ...]:
    """Every registered entry (the ``ERRATA`` of each entry point of :data:`GROUP`, taken in the order of the
    points' names), grouped by document in the order of :data:`DOCUMENTS`. Refused in one line when nothing is
    registered (the package's metadata predates the entry points) or when two entries share an id."""
    points = sorted(entry_points(group=GROUP), key=lambda p: p.name)
    if not points:
        raise RuntimeError(f"no errata registered under the entry points {GROUP!r}: the installed metadata of "
                           "icdl is older than pyproject.toml; run `make setup` (or pip install --no-deps -e .)")
    found = [e for p in points for e in p.load()]
    ids = [e.id for e in found]
    if len(set(ids)) != len(ids) or any(e.document not in DOCUMENTS for e in found):
        raise RuntimeError(f"the registered errata repeat an id or name an unknown document: {ids}")
    return tuple(sorted(found, key=lambda e: list(DOCUMENTS).index(e.document)))


def _claim_rows() -> dict[str, dict]:
    from .pages import claim_frame

    return {r["id"]: r for r in claim_frame().to_dict("records")}


def _title(claim: str) -> str:
    """A claim as the reader meets it: its title in the report (its id is only the link's anchor)."""
    from .claims import get_claim
    from .typeset import math_html

    # in the page's markdown a backslash escapes the next character: doubled, MathJax still sees \( … \)
    return math_html(get_claim(claim).source).replace("\\", "\\\\")


def evidence(entry: Erratum, claims: dict[str, dict] | None = None) -> str:
    """The entry's evidence as one sentence: the measurement, or the ledger's value and status for its claim."""
    from .typeset import short_exponents, typeset_minus
    from .words import run_words

    if entry.measure is not None:
        return typeset_minus(short_exponents(entry.measure().text))
    if entry.basis:
        return entry.basis
    row = (claims if claims is not None else _claim_rows()).get(entry.claim)
    link = f'<a href="report.html#claim-{entry.claim}">{_title(entry.claim)}</a>'
    if row is None or row["status"] == "not yet covered":
        return f"claim {link} has no record yet"
    run = str(row.get("shown_profile") or "").split(" (")[0]
    words = run_words(run).removeprefix("on ").replace("this page", "the chapter")
    said = f" ({words})" if run not in ("", "—") else ""
    # which run the numbers come from, as the first page says it (the bug: the diffusion entry quoted the chapter's
    # 30-step run unlabelled, beside a 200-step reference)
    return f"{typeset_minus(short_exponents(row['ours']))}{said} (claim {link}: {row['status']})"


def _test_link(test: str) -> str:
    """A guarding test as a link to its source page, as the report writes it (the book's code_pages extension
    gives the anchor its address; the bug: sixteen test ids on this page were plain code)."""
    from html import escape

    from .pages import breakable

    return f'<a class="code-link" data-code="{escape(test)}"><code>{breakable(test)}</code></a>'


def render() -> str:
    """The entries as MyST markdown: a section per document, a block per entry with its anchor (the guarding
    test's id may wrap after its separators, so a phone does not scroll sideways)."""
    claims = _claim_rows()
    lines = []
    for doc, title in DOCUMENTS.items():
        listed = [e for e in entries() if e.document == doc]
        if not listed:
            continue
        lines += [f"## {title}", ""]
        for e in listed:
            chapter = f"{{doc}}`../notebooks/{e.chapter}`" if e.chapter else "—"
            about = "; ".join(f'<a href="report.html#claim-{c}">{_title(c)}</a>' for c in e.claims())
            lines += [f"(erratum-{e.id})=", f"### {e.where}", "",
                      "As printed", f": {e.printed}", "",
                      "As executed", f": {e.executed}", "",
                      "Evidence", f": {evidence(e, claims)}. Shown in {chapter}; guarded by "
                                  f"{_test_link(e.test)}.", ""]
            if about:
                lines += ["Claims it concerns", f": {about}", ""]
    return "\n".join(lines) + "\n"


def render_summary() -> str:
    """One line for the results at a glance (intro and report): how many entries, per document, linked."""
    found = entries()
    per = ", ".join(f"{sum(e.document == k for e in found)} in {k}" for k in DOCUMENTS
                    if any(e.document == k for e in found))
    return (f'**Errata:** <a href="errata.html">{len(found)} entries</a> on slips in the documents ({per}), '
            "each with what we execute instead and its evidence.\n")


def report_links() -> dict[str, tuple[str, str]]:
    """Per claim that an entry is about: the entry's anchor as Sphinx writes it (``icdl-cor1.1`` ->
    ``erratum-icdl-cor1-1``) and its title, for the report's link (:func:`icdl.repro.pages.render_report`)."""
    from docutils.nodes import make_id

    out: dict[str, tuple[str, str]] = {}
    for e in entries():  # a claim two entries concern links to the first (in the page's order)
        for c in e.claims():
            out.setdefault(c, (make_id(f"erratum-{e.id}"), e.where))
    return out


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table): one or two file names,
    never a flag."""
    from .cli import Parser

    p = Parser(prog="python -m icdl.repro.errata", description="The errata's entries and their summary line.")
    p.add_argument("out", metavar="OUT.md", help="where to write the errata's entries")
    p.add_argument("summary", metavar="SUMMARY.md", nargs="?", default=None,
                   help="where to write the line for the results at a glance (optional)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m icdl.repro.errata OUT.md [SUMMARY.md]``: write the errata's entries and, if named, the line
    for the results at a glance (``make report`` does both). The package's own refusals -- an output that is a
    folder, a link or a device, that would write over the ledger it reads, anything under ``results/`` or the other
    output (:func:`icdl.repro.files.check_outputs`), ``ICDL_ROOT`` that is not a clone (all checked before any
    measurement runs), a ledger file that does not load -- end it in one line, exit status 2."""
    import sys

    from .files import ResultFileError, atomic_write_text, check_outputs, project_root
    from .profiles import dry_run

    args = parser().parse_args(argv)
    if dry_run(f"write the errata's entries to {args.out}"
               + (f" and their summary line to {args.summary}" if args.summary else "")):
        return 0
    outputs = [Path(args.out)] + ([Path(args.summary)] if args.summary else [])
    try:  # every output checked before the measurements run and the ledger is read, and before either is written
        check_outputs(outputs, inputs=(project_root() / "results" / "ledger",))
        torch.set_num_threads(1)
        atomic_write_text(outputs[0], render())
        if args.summary:
            atomic_write_text(outputs[1], render_summary())
    except ResultFileError as err:  # LedgerFileError too: the file, the field and what to do
        print(f"python -m icdl.repro.errata: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
