"""The reproducibility ledger: one mechanism through which chapters record their checks.

A chapter opens a :class:`Ledger`, records each claim it checks, and saves::

    ledger = Ledger("icgd_linear", profile)
    ledger.record("icdl-icgd-one-step", ours=f"{err:.1e}", criterion="max |Δw| < 1e-13", value=err)
    ledger.save()

The claim's source, the paper's value and the guarding test come from the
registry in :mod:`icdl.repro.claims`, never from the chapter. :func:`icdl.repro.pages.render_report`
turns every saved record, plus the claims nobody has recorded yet, into the
markdown table of the book's reproducibility report.

Every claim's criterion is data, registered in :data:`icdl.repro.claims.CRITERIA` before the run
that judges it: the numbers the chapter records (``value`` and ``values``), the comparisons and the
thresholds. The ledger decides from those numbers; a chapter's own verdict, where it gives one, must agree.
``tests/test_ledger.py`` re-judges every stored record from its numbers, passes included.

A record that fails its criterion is a ``fail`` and turns ``tests/test_ledger.py``
red -- unless :data:`icdl.repro.claims.MISMATCHES` registered the mismatch in
advance (its reason and the band its ``value`` is expected in) and the recorded
``value`` lies in that band: then it is shown as ``mismatch`` with the registered
reason. A chapter cannot declare a mismatch on its own. A failure outside any registered band stays
``fail``; :data:`icdl.repro.claims.KNOWN_FAILURES` lists those already seen and shown, so that only an
unknown failure turns CI red.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import reads
from .claims import (
    CLAIMS_BY_ID,
    CRITERIA,
    DEVIATIONS,
    JUDGED_BY,
    KNOWN_FAILURES,
    MISMATCHES,
    TIMED,
    criterion_verdict,
    get_claim,
    unmet_gates,
)
from .files import ResultFileError, project_root, results_dir
from .glossary import linked_terms
from .pins import reads_results
from .results import keepable, load_result, provenance, save_result
from .typeset import math_html
from .words import NOT_TESTED, brief, clauses, paper_words, run_words, shared_clauses, status_class

#: a claim that meets its criterion under a changed setting of the paper (:data:`icdl.repro.claims.DEVIATIONS`)
PASS_DEVIATION = "pass (deviation)"
#: a claim whose recorded interval (over seeds and prompts) straddles its criterion: neither pass nor fail
INCONCLUSIVE = "inconclusive"
STATUSES = ("pass", PASS_DEVIATION, "fail", "mismatch", INCONCLUSIVE)
#: the status of a claim a chapter could not judge: the result it is judged on (a long reference run) has not
#: been produced, and a live judgement of the chapter's small run must not stand in for it
NOT_COVERED = "not yet covered"

#: every status in one plain sentence: the same words in the intro, the report and the chapters' boxes, true to
#: what CI does with it
STATUS_SENTENCES = {
    "pass": "the claim holds by its criterion.",
    PASS_DEVIATION: "it holds, but only under a setting we changed from the paper's; the report says which.",
    "fail": "it does not hold. A failure we show and explain (a known failure) leaves CI green; any other "
            "failure turns CI red.",
    "mismatch": "it does not hold, but misses by no more than a margin we fixed, with its reason, before the run "
                "that judged it.",
    INCONCLUSIVE: "its number was read, and its 90 % interval (over training seeds and test prompts) straddles the "
                  "line: the data cannot decide.",
    NOT_TESTED: "a condition its design had to meet (a gate registered with it, such as that its models learned the "
                "task) was not met, so its number is not read as a verdict; the report says which (the ledger "
                "records it as inconclusive).",
    NOT_COVERED: "registered, with its criterion, before the run that decides it, which has not been made yet.",
}


@dataclass(frozen=True)
class Record:
    claim: str
    ours: str
    criterion: str
    status: str
    profile: str
    note: str = ""
    value: float | None = None
    #: every number the claim's criterion (:data:`icdl.repro.claims.CRITERIA`) is about, ``value`` included
    values: dict = field(default_factory=dict)

    def rejudged(self) -> str:
        """The status this record's own numbers give under the registered criterion and mismatch bands."""
        if self.status == NOT_COVERED:
            return NOT_COVERED
        return judge_status(self.claim, criterion_verdict(self.claim, {**self.values, "value": self.value}),
                            self.value)


def _command(chapter: str, profile: str, overrides: tuple[str, ...] = ()) -> str:
    return f"python -m icdl.repro.execute {chapter} --profile {profile}" + "".join(f" --set {o}" for o in overrides)


def judge_status(claim: str, passed: bool | None, value: float | None = None) -> str:
    """The one judge of every chapter: ``pass`` if the criterion holds (``pass (deviation)`` if the claim is
    checked under a changed setting registered in :data:`icdl.repro.claims.DEVIATIONS`); ``inconclusive`` if
    its recorded interval straddles the criterion (``passed`` is None: :func:`icdl.repro.claims.criterion_verdict`);
    else ``mismatch`` if the claim's mismatch is registered in :data:`icdl.repro.claims.MISMATCHES` and
    ``value`` lies in its band; else ``fail``."""
    if passed is None:
        return INCONCLUSIVE
    if passed:
        return PASS_DEVIATION if claim in DEVIATIONS else "pass"
    m = MISMATCHES.get(claim)
    return "mismatch" if m is not None and m.contains(value) else "fail"


class Ledger:
    """Collects a chapter's records at one profile and writes them to ``results/ledger/``."""

    def __init__(self, chapter: str, profile: str, *, seed: int | None = None, overrides: tuple[str, ...] = ()):
        self.chapter = chapter
        self.profile = profile
        self.seed = seed
        #: a run with overrides (``KEY=VALUE`` items) is its own run: its records go to ``runs/overrides/``,
        #: never to the profile's ledger file, and its provenance names the overrides
        self.overrides = tuple(overrides)
        self.records: list[Record] = []
        self._start = time.perf_counter()

    def record(self, claim: str, *, ours: str, criterion: str, value: float | None = None,
               values: dict | None = None, passed: bool | None = None, note: str = "",
               judged_on: str | None = None, covered: bool = True) -> Record:
        """Record one checked claim from its numbers: ``value`` (the main one, also what a registered
        mismatch's band is about) and ``values`` (the others the claim's criterion in
        :data:`icdl.repro.claims.CRITERIA` compares). The registered criterion decides whether it holds, and
        :func:`judge_status` the status; a chapter's own verdict ``passed``, where given, must agree (a
        chapter and the registry that disagree are a bug, refused here). ``judged_on`` names the data when it
        is not this run (e.g. a committed reference result). ``covered=False`` (the result the claim is judged
        on has not been produced) records the claim as :data:`NOT_COVERED`, whatever the numbers say."""
        get_claim(claim)  # unknown ids fail here, with the list of known ones
        if any(r.claim == claim for r in self.records):
            raise ValueError(f"{self.chapter}: claim {claim!r} recorded twice")
        numbers = {k: float(v) for k, v in (values or {}).items()}
        if value is not None:
            numbers["value"] = float(value)
        holds = criterion_verdict(claim, numbers)
        if passed is not None and bool(passed) != holds:  # an inconclusive criterion (None) agrees with no verdict
            raise ValueError(f"{self.chapter}: claim {claim!r}: the chapter's verdict ({bool(passed)}) disagrees "
                             f"with the registered criterion {CRITERIA[claim]} on {numbers}")
        value = numbers.get("value")
        status = judge_status(claim, holds, value) if covered else NOT_COVERED
        if not covered:
            note = (f"not judged: the result it is judged on has not been produced (only the chapter's "
                    f"{self.profile} run exists){'; ' + note if note else ''}")
        if status == "mismatch":
            m = MISMATCHES[claim]
            # the commit and the run the band was registered for are data of the claim (claims.MISMATCHES,
            # checked by tests/test_registered.py); the reader's note says what the band is and that it came first
            note = (f"registered mismatch: {m.reason} [{m.quantity} = {value:.3g}, expected in {list(m.band)}, "
                    f"a band fixed before the run it judges]")
        elif status == "fail" and claim in KNOWN_FAILURES:
            note = f"known failure: {KNOWN_FAILURES[claim]}"
        elif status == INCONCLUSIVE:
            gates = unmet_gates(claim, numbers)
            why = (f"undecided by design: a condition registered with the claim is not met ({'; '.join(gates)})"
                   if gates else "undecided: its 90 % interval straddles the line")
            note = why + (f"; {note}" if note else "")
        if covered and claim in DEVIATIONS:  # every status of such a claim says under which change it was judged
            note = f"{note.rstrip('.')}. Deviation: {DEVIATIONS[claim]}" if note else f"deviation: {DEVIATIONS[claim]}"
        rec = Record(claim, str(ours), criterion, status, judged_on or self.profile, note, value,
                     {k: v for k, v in numbers.items() if k != "value"})
        self.records.append(rec)
        return rec

    def record_all(self, entries: list[dict], judged_on: str | None = None, covered: bool = True) -> list[Record]:
        """Record every entry of a study's ``judge()`` (dicts with ``claim``, ``ours``, ``criterion``,
        ``passed`` and optionally ``value``, ``values`` and ``note``)."""
        return [self.record(e["claim"], ours=e["ours"], criterion=e["criterion"], passed=e.get("passed"),
                            value=e.get("value"), values=e.get("values"), note=e.get("note", ""),
                            judged_on=judged_on, covered=covered) for e in entries]

    def judged(self):
        """The records so far as the chapter's closing table shows them: each claim by its title (a link to its
        entry in the report; the id stays in the anchor, not in the reader's text), the criterion it was judged
        by and its status (HTML)."""
        from IPython.display import HTML

        def row(r) -> str:
            return (f'<tr><td data-label="claim"><a href="../book/report.html#claim-{r.claim}">'
                    f"{math_html(get_claim(r.claim).source)}</a></td>"
                    f'<td data-label="criterion">{math_html(r.criterion)}</td>'
                    f'<td data-label="status" class="{status_class(r.status)}"><b>{r.status}</b></td></tr>')

        waiting = [r for r in self.records if r.status == NOT_COVERED]
        fold = len(waiting) > 1  # as in box(): the claims that wait for their run, one folded row
        rows = "".join(row(r) for r in self.records if not (fold and r.status == NOT_COVERED))
        if fold:
            rows += (f'<tr class="waiting"><td colspan="3"><details><summary>{len(waiting)} claims wait for their run: '
                     f'<b class="{status_class(NOT_COVERED)}">{NOT_COVERED}</b></summary><table><tbody>'
                     + "".join(row(r) for r in waiting) + "</tbody></table></details></td></tr>")
        return HTML('<table class="claims-box claims-judged"><thead><tr><th>claim</th><th>criterion</th><th>status</th>'
                    "</tr></thead><tbody>" + rows + "</tbody></table>")

    def box(self):
        """The chapter's claims as its first screen shows them: claim, paper, ours, status with the run the
        numbers come from in plain words, and a link to the claim's entry in the report (HTML; glued at the end
        of the chapter, shown at its top). The run is said once, on a row of its own above the claims judged on it
        (the bug: "on the reference run (20 000 of 20 000 epochs)" under every status of a chapter, five lines a
        row); a change of the paper's setting is written once under the table and marked (a, b, …) on each row it
        concerns. Conditions that every claim of a run states alike (the gates of one study, :func:`shared_clauses`)
        are said once, folded, on the run's row, not on each claim's."""
        import html

        from IPython.display import HTML

        rows, marks, run, shared = [], {}, None, set()
        waiting = [r for r in self.records if r.status == NOT_COVERED]
        # the claims that wait for their run are said once, folded, below the judged ones (a design registered
        # before its run)
        shown = [r for r in self.records if not (r.status == NOT_COVERED and len(waiting) > 1)]
        for i, r in enumerate(shown):
            c = get_claim(r.claim)
            mark = ""
            if r.claim in DEVIATIONS:
                mark = marks.setdefault(DEVIATIONS[r.claim], "abcdefghijklmnopqrstuvwxyz"[len(marks) % 26])
                mark = f"<sup>{mark}</sup>"
            if run_words(r.profile) != run:
                run = run_words(r.profile)
                group = [x.ours for x in shown[i:]]
                group = group[:next((k for k, x in enumerate(shown[i:]) if run_words(x.profile) != run),
                                    len(group))]
                common = shared_clauses(group)
                shared = set(common)
                said = (f'<details class="ours shared"><summary>the {len(group)} claims below share these conditions'
                        f"</summary>{math_html('; '.join(common))}</details>" if common else "")
                rows.append(f'<tr class="run"><th colspan="4" scope="rowgroup">Judged {html.escape(run)}{said}'
                            "</th></tr>")
            ours = "; ".join(x for k, x in enumerate(clauses(r.ours)) if k == 0 or x not in shared)
            rows.append(f'<tr><td data-label="claim"><a href="../book/report.html#claim-{r.claim}">'
                        f"{math_html(c.source)}</a></td>"
                        f'<td data-label="paper">{paper_words(c.paper)}</td>'
                        f'<td data-label="ours">{brief(ours)}</td>'
                        f'<td data-label="status" class="{status_class(r.status)}"><b>{r.status}</b>{mark}</td></tr>')
        if len(waiting) > 1:
            items = "".join(f"<li>{paper_words(get_claim(r.claim).paper)}</li>" for r in waiting)
            runs = ", ".join(dict.fromkeys(run_words(r.profile) for r in waiting))
            rows.append(f'<tr class="waiting"><td colspan="4"><details><summary>{len(waiting)} claims registered '
                        f"before their run, which has not been made yet ({html.escape(runs)}): "
                        f'<b class="{status_class(NOT_COVERED)}">{NOT_COVERED}</b></summary><ul>{items}</ul>'
                        "</details></td></tr>")
        notes = "".join(f'<tr class="deviation"><td colspan="4"><small><i><sup>{m}</sup> deviation: '
                        f"{math_html(text)}</i></small></td></tr>" for text, m in marks.items())
        table = ('<table class="claims-box"><thead><tr><th>claim</th><th>paper</th><th>ours</th>'
                 "<th>status</th></tr></thead><tbody>" + "".join(rows) + notes + "</tbody></table>")
        # the box opens the chapter: the first use of each glossary term on the page is in it, and links there
        return HTML(linked_terms(table, "../book/notation.html"))

    def path(self) -> Path:
        if self.overrides:
            folder = project_root() / "runs" / "overrides" / "ledger"
            return folder / f"{self.chapter}.{'+'.join((self.profile, *self.overrides))}.json"
        return results_dir("ledger") / f"{self.chapter}.{self.profile}.json"

    def save(self) -> Path:
        """Write the records, the sha256 of every committed result file the chapter read (``results``:
        :mod:`icdl.repro.reads`) and of its judge's files (``judges``), under one :func:`seal` that covers them
        and the provenance. A quick ledger whose records and pinned files are those of the file already there
        (same command, profile and seed, at a commit of this history) leaves that file as it is, its provenance
        and seal included: a rerun that changed nothing leaves no diff."""
        import json

        prov = provenance(command=_command(self.chapter, self.profile, self.overrides),
                          wall_time_s=time.perf_counter() - self._start,
                          profile=self.profile, seed=self.seed)
        data = {"chapter": self.chapter, "records": [asdict(r) for r in self.records], "results": reads.pinned()}
        if self.chapter in JUDGED_BY:
            data["judges"] = judge_digests(self.chapter)
        data = json.loads(json.dumps(data, allow_nan=True))  # as the file will hold it (tuples as lists)
        path = self.path()
        if self.profile == "quick" and not self.overrides and _same_ledger(path, data, prov):
            return path
        return save_result(path, {**data, "seal": file_seal(data, prov)}, provenance=prov)


def judge_digests(chapter: str, root: Path | None = None) -> dict[str, str]:
    """``{path: sha256}`` of the files that compute ``chapter``'s registered values (``claims.JUDGED_BY``, paths in the
    package), as they are under ``root`` (default: the package this code runs from, the code that judges) now;
    :meth:`Ledger.save` writes them beside the records."""
    import hashlib

    root = Path(__file__).resolve().parents[1] if root is None else root
    return {f: hashlib.sha256((root / f).read_bytes()).hexdigest() for f in JUDGED_BY.get(chapter, ())}


def stale_judges(chapter: str, data: dict, root: Path | None = None) -> list[str]:
    """The files of ``chapter``'s judge (``claims.JUDGED_BY``) that differ from those that judged the ledger
    ``data`` (a ledger file's ``data``): changed since, added, or not recorded at all. Empty where the records are
    today's code's verdicts."""
    now, then = judge_digests(chapter, root), data.get("judges") or {}
    return sorted(f for f in set(now) | set(then) if now.get(f) != then.get(f))


def seal(records: list[dict], sealed: dict | None = None) -> str:
    """The sha256 of a ledger file's records, every field of every record (the shown text -- ``ours``,
    ``criterion``, ``note`` -- as much as the numbers and the status), in their order; with ``sealed`` (files
    written since issue 58, :func:`file_seal`), of that instead: the whole data but the seal -- records, pinned
    result digests, judge digests -- and the provenance. :meth:`Ledger.save` writes it beside the records and
    :func:`load_records` refuses a file whose contents no longer give it: a record edited by hand, deleted or
    copied, a digest or the provenance changed, is caught at the next load. It does not stop a deliberate forger
    (the seal can be recomputed, and the diff then shows it); it stops a quiet edit that leaves the numbers and
    the status alone, which the re-judging of the numbers cannot see. What catches a forged result and ledger
    resealed together is the digest of the result pinned in the ledger (:mod:`icdl.repro.reads`, checked by
    ``tests/test_registered.py``) and the re-derivation of the judged numbers (``tests/test_ledger_rederived.py``)."""
    import hashlib
    import json

    text = json.dumps(records if sealed is None else sealed, sort_keys=True, ensure_ascii=True, allow_nan=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def file_seal(data: dict, prov: dict) -> str:
    """The seal a ledger file's ``data`` and ``provenance`` must carry: over both (everything but the seal) where
    the file pins its results (a ``results`` field, written since issue 58); over the records alone in a file
    written before, which pins nothing (``tests/test_registered.py`` lists those still committed)."""
    if "results" not in data:
        return seal(data["records"])
    return seal(data["records"], {"data": {k: v for k, v in data.items() if k != "seal"}, "provenance": prov})


def _same_ledger(path: Path, data: dict, prov: dict) -> bool:
    """Whether the ledger file at ``path`` holds ``data`` (compared as JSON text, every float to the last digit but
    a timed claim's, :func:`_untimed`), sealed over its own provenance, which may stand for ``prov``
    (:func:`icdl.repro.results.keepable`)."""
    import json

    try:
        old = load_result(path)
    except ResultFileError:
        return False
    if not keepable(old["provenance"], prov):
        return False
    dump = lambda d: json.dumps(_untimed(d), sort_keys=True, allow_nan=True)  # noqa: E731
    kept = {k: v for k, v in old["data"].items() if k != "seal"}
    # the same data (a timed claim's digits aside), and the old file still sealed over its own data and provenance
    return dump(kept) == dump(data) and old["data"].get("seal") == file_seal(kept, old["provenance"])


def _untimed(data: dict) -> dict:
    """A ledger's data with the digits of its timed claims' numbers left out (:data:`icdl.repro.claims.TIMED`): what
    a rerun on the same code and results must reproduce exactly is everything else -- each record's status,
    words, criterion and every other number."""
    records = [{k: v for k, v in r.items() if k not in ("value", "values")} if r.get("claim") in TIMED else r
               for r in data.get("records", [])]
    return {**data, "records": records}


class LedgerFileError(ResultFileError):
    """A ledger file whose records were edited after the run that wrote them, or that do not fit its chapter."""


def _ledger_records(path: Path) -> tuple[list[Record], dict]:
    """The records of one ledger file and its provenance, after checking that the file is what
    :meth:`Ledger.save` wrote: the chapter its name says, its profile, records of the registered form, each of
    its chapter's claims at most once and no other chapter's, and the :func:`seal` of its records."""
    chapter, _, profile = path.stem.partition(".")
    redo = f"rerun `{_command(chapter, profile)}` to rewrite it"
    try:
        obj = load_result(path)
    except ResultFileError as err:
        raise LedgerFileError(f"ledger {err}; {redo}") from None
    data, prov = obj["data"], obj["provenance"]
    if data.get("chapter") != chapter or prov["profile"] != profile:
        raise LedgerFileError(f"ledger file {path} holds chapter {data.get('chapter')!r} at profile "
                              f"{prov['profile']!r}, not what its name says; {redo}")
    raws = data.get("records")
    if not isinstance(raws, list) or not all(isinstance(r, dict) for r in raws):
        raise LedgerFileError(f"ledger file {path}: 'records' must be a list of records; {redo}")
    if not isinstance(data.get("results", {}), dict) or data.get("seal") != file_seal(data, prov):
        raise LedgerFileError(f"ledger file {path} was changed after the run that wrote it (its records no longer "
                              f"match their seal: a record, a pinned digest or the provenance edited, or a record "
                              f"deleted or added, by hand); {redo}")
    readable = [] if data.get("results") else reads_results(chapter, Path(path).resolve().parents[2])
    if readable:  # issue 70: ``results`` emptied (or dropped) and resealed, so no digest names the results read
        raise LedgerFileError(f"ledger file {path} pins no result file, but chapter {chapter} reads committed "
                              f"results ({', '.join(readable[:2])}{' ...' if len(readable) > 2 else ''}); {redo}")
    records = []
    for raw in raws:
        try:
            records.append(Record(**raw))
        except TypeError as err:
            raise LedgerFileError(f"ledger file {path} has a record that does not fit: {err}; {redo}") from None
    claims = [r.claim for r in records]
    if len(set(claims)) != len(claims):
        raise LedgerFileError(f"ledger file {path} records {sorted({c for c in claims if claims.count(c) > 1})} "
                              f"more than once; {redo}")
    foreign = [c for c in claims if c not in CLAIMS_BY_ID or CLAIMS_BY_ID[c].chapter != chapter]
    if foreign:
        raise LedgerFileError(f"ledger file {path} records claims that are not chapter {chapter}'s: {foreign}; "
                              f"{redo}")
    return records, prov


def load_records(folder: Path | None = None) -> list[tuple[Record, dict]]:
    """Every saved record with the provenance of its file, in file-name order (each file checked by
    :func:`_ledger_records`; a file that fails is refused with one line naming it)."""
    folder = folder or results_dir("ledger")
    out = []
    for path in sorted(folder.glob("*.json")):
        records, prov = _ledger_records(path)
        out += [(rec, prov) for rec in records]
    return out
